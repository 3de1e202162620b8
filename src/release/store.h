// The release store: per model (keyed by the model's sha256), every engine ever promoted with
// its record and the evidence of its promotion, a `current` pointer naming the version in
// service, and a history of promotions and rollbacks. Layout and guarantees:
// docs/release-store.md. A ReleaseStore is a cheap view of a folder (it owns no handles);
// readers need no lock because every file is replaced by rename; writers (promote.h) hold
// the store lock. Not thread-safe per object, but several processes may share one store.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "switchyard/status.h"

namespace switchyard::release {

// The content of a `current` pointer file.
struct InService {
  int version = 0;     // 0 = nothing in service
  std::string since;   // UTC ISO 8601: when it was put in service
  std::string action;  // "promote" or "rollback"
  int replaced = 0;    // the version in service before; 0 = none
  int64_t event = 0;   // the history event that put it there (1-based)
  nlohmann::json ToJson() const;
};

struct VersionEntry {
  int version = 0;
  std::string dir;
  bool complete = false;        // engine, record.json and promotion.json all present
  nlohmann::json promotion;     // promotion.json (null when missing)
};

class ReleaseStore {
 public:
  explicit ReleaseStore(std::string dir) : dir_(std::move(dir)) {}

  const std::string& dir() const { return dir_; }
  std::string AuditPath() const { return dir_ + "/audit.jsonl"; }
  std::string LockPath() const { return dir_ + "/.lock"; }
  std::string ModelDir(const std::string& model_sha) const { return dir_ + "/models/" + model_sha; }
  std::string VersionsDir(const std::string& model_sha) const { return ModelDir(model_sha) + "/versions"; }
  std::string VersionDir(const std::string& model_sha, int v) const {
    return VersionsDir(model_sha) + "/" + std::to_string(v);
  }
  std::string CurrentPath(const std::string& model_sha) const { return ModelDir(model_sha) + "/current"; }
  std::string HistoryPath(const std::string& model_sha) const {
    return ModelDir(model_sha) + "/history.jsonl";
  }

  // The model sha256s with a folder in the store, sorted. A missing store is NotFound.
  Result<std::vector<std::string>> Models() const;
  // The pointer; version 0 when nothing was ever put in service.
  Result<InService> Current(const std::string& model_sha) const;
  // Every numbered version folder, ascending (staging folders are not versions).
  Result<std::vector<VersionEntry>> Versions(const std::string& model_sha) const;
  // history.jsonl, in order. A malformed line is an error naming the file and line.
  Result<std::vector<nlohmann::json>> History(const std::string& model_sha) const;

  // Writer side (caller holds the lock): replaces the pointer durably (temporary + rename).
  Status WriteCurrent(const std::string& model_sha, const InService& in_service) const;
  // Appends one line to history.jsonl (one write(), fsync).
  Status AppendHistory(const std::string& model_sha, const nlohmann::json& event) const;
  // Appends the history line a crash between the pointer flip and the history append left
  // out, so that the history always ends with the event that put `current` in service.
  Status ReconcileHistory(const std::string& model_sha) const;

 private:
  const std::string dir_;
};

// True for 64 lower-case hex digits: the only model keys the store accepts (they become
// folder names, so nothing else may reach the file system).
bool IsSha256Hex(const std::string& s);

}  // namespace switchyard::release
