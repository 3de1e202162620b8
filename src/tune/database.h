// The tuning database: every candidate the tuner has built, gated and measured, in one
// SQLite file, so that an interrupted tuning run (kill -9 included) resumes without redoing
// work. Schema, key/reuse rule, durability and the JSON-lines format: docs/tuning-db.md.
// A TuningDatabase owns one SQLite connection; it is not safe to use from several threads at
// once (open one per thread), but several processes may share the file (WAL, busy timeout).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "switchyard/status.h"

struct sqlite3;

namespace switchyard {

// The schema version this build writes; files with a newer version are refused.
inline constexpr int kTuningDbSchemaVersion = 1;

// What a stored result is valid for. A result is reused only when all four parts (and the
// route) match exactly: a different model, evaluation data, machine or tool may change both
// the verdict and the timings.
struct CandidateKey {
  std::string model_sha256;        // sha256 of the ONNX model file, hex
  std::string input_profile;       // hash of the evaluation data + input shapes
  std::string target_fingerprint;  // Target::Fingerprint() of the machine measured on
  std::string tool_version;        // switchyard version (+ commit) that built and measured

  bool operator==(const CandidateKey&) const = default;
};

// The verdicts a candidate can have (candidates.status).
inline constexpr const char* kCandidateStatuses[] = {"passed",  "rejected_accuracy", "build_failed",
                                                     "crashed", "timeout",           "duplicate"};
bool IsCandidateStatus(const std::string& status);

struct CandidateResult {
  int64_t id = 0;      // assigned by the database (local to one file)
  int64_t run_id = 0;  // the run that stored it; 0 = none (e.g. imported)
  CandidateKey key;
  std::string route;          // canonical route string ("" = the default route)
  std::string engine_sha256;  // "" when no engine was built
  std::string status;         // one of kCandidateStatuses
  std::string error;          // why it failed; "" when it passed
  // Per-output accuracy metrics, e.g. {"logits": {"l2": 1e-6, "threshold": 1e-3}}.
  nlohmann::json accuracy = nlohmann::json::object();
  // Latency summary: p50_ms, p95_ms, p99_ms, mean_ms, throughput_per_s, peak_memory_bytes, n.
  nlohmann::json measurement = nlohmann::json::object();
  double build_s = 0, accuracy_s = 0, measure_s = 0;  // time spent on this candidate
  int64_t created_at = 0;                             // unix seconds; 0 in Put = now

  // The unique key string: the four key parts and the route joined by '|', each part with
  // '%' and '|' percent-encoded so that the joined string is unambiguous.
  std::string Key() const;
};

// A stored result for the same model and route whose other key parts differ from the ones
// asked about: the tuner reports it ("measured on another target; not reused").
struct KeyMismatch {
  CandidateResult stored;
  std::vector<std::string> differing;  // "input_profile", "target_fingerprint", "tool_version"
  std::string Describe() const;        // one line for people
};

struct RunInfo {
  CandidateKey key;
  std::string command;  // the command line that started the run
};

struct RunRecord {
  int64_t id = 0;
  int64_t started_at = 0, finished_at = 0;  // unix seconds; finished_at 0 = not finished
  RunInfo info;
  std::string status;  // "running" until FinishRun
};

// Empty fields match anything.
struct CandidateFilter {
  std::string model_sha256;
  std::string route;
  std::string status;
  int64_t run_id = 0;
};

struct OpenOptions {
  // Create the file (mode 0600, missing parent folders 0700) when it does not exist.
  // Default true; false makes a missing file a NotFound error (for read-only verbs).
  bool create_if_missing = true;
};

// What TuningDatabase::Purge removed.
struct PurgeStats {
  int64_t candidates = 0;           // candidate rows deleted
  int64_t runs = 0;                 // run rows deleted (those left without candidates)
  std::vector<std::string> models;  // model sha256s that had candidates deleted, sorted
};

struct ImportStats {
  int64_t inserted = 0;
  int64_t replaced = 0;
};

class TuningDatabase {
 public:
  // Opens (or creates) the database at `path`: WAL journal, synchronous=FULL, schema created
  // if absent. Refuses, naming the file: a file that is not SQLite, one failing
  // PRAGMA quick_check, a SQLite file that is not a tuning database, a newer schema version.
  static Result<std::unique_ptr<TuningDatabase>> Open(const std::string& path,
                                                      const OpenOptions& options = {});
  ~TuningDatabase();
  TuningDatabase(const TuningDatabase&) = delete;
  TuningDatabase& operator=(const TuningDatabase&) = delete;

  const std::string& path() const { return path_; }

  Result<int64_t> BeginRun(const RunInfo& info);
  Status FinishRun(int64_t run_id, const std::string& status);
  Result<std::vector<RunRecord>> ListRuns();

  // Stores one result in one transaction and returns its id. A row with the same Key()
  // is an error (kFailedPrecondition, "already stored") unless `replace`, which updates it
  // in place (the id is kept).
  Result<int64_t> Put(const CandidateResult& result, bool replace = false);
  // The stored result for exactly this key and route, if any.
  Result<std::optional<CandidateResult>> Find(const CandidateKey& key, const std::string& route);
  // Stored results for key.model_sha256 and `route` whose other key parts differ from `key`.
  Result<std::vector<KeyMismatch>> FindMismatches(const CandidateKey& key,
                                                  const std::string& route);
  // Matching candidates in insertion (id) order.
  Result<std::vector<CandidateResult>> ListCandidates(const CandidateFilter& filter = {});

  // Deletes, in one transaction, the candidates stored before `older_than_unix` (unix
  // seconds; 0 = any age) of model `model_sha256` ("" = any model), then the runs matching
  // the same filter (started_at, model) that have no candidates left. At least one filter
  // must be given. secure_delete overwrites the freed pages and a WAL checkpoint
  // (TRUNCATE) moves them into the main file, so the deleted results do not linger on disk
  // (a checkpoint blocked by a concurrent reader is retried by SQLite later).
  Result<PurgeStats> Purge(int64_t older_than_unix, const std::string& model_sha256);

  // PRAGMA integrity_check: "ok", or the problems it found, one per line.
  Result<std::string> IntegrityCheck();

  // One JSON object per candidate and line, keys = column names (docs/tuning-db.md).
  Status ExportJsonLines(std::ostream& out);
  // Validates every line; all or nothing (one transaction). Errors name `source` and the
  // line number. Rows whose key is already stored (or repeated in the input) are refused
  // unless `replace`.
  Result<ImportStats> ImportJsonLines(std::istream& in, const std::string& source = "<input>",
                                      bool replace = false);

 private:
  TuningDatabase(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  Status Init();
  Status Exec(const char* sql);
  Status Error(const std::string& what) const;  // what + sqlite's message, naming the file
  Result<int64_t> PutLocked(const CandidateResult& result, bool replace, bool* replaced);

  sqlite3* const db_;
  const std::string path_;
};

// The JSON-lines object for one candidate (export, `db list --json`).
nlohmann::ordered_json CandidateToJson(const CandidateResult& c);
// Parses and validates one such object (unknown fields, wrong types, bad status and a `key`
// that disagrees with the key parts are errors). `id`/`run_id` are read but local.
Result<CandidateResult> CandidateFromJson(const nlohmann::json& j);

}  // namespace switchyard
