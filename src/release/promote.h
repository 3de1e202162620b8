// Putting engines in service and taking them back: `switchyard promote` and `rollback` as a
// library. Promote checks a tune output folder against the release policy (docs/
// release-store.md: the record's gate and validation passed, the engine file is the one the
// record names, and a `compare` said "promote" when one is required or given), then writes
// the new version completely before it flips the store's `current` pointer by one rename, so
// a crash at any point leaves the old or the new version in service, never a mix. Every call
// appends one line to the store's audit log. Functions take the store lock; safe to call
// from several processes at once.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "switchyard/status.h"

namespace switchyard::release {

// The steps of a promotion, in order, as passed to PromoteRequest::step_hook.
inline constexpr const char* kStepStaged = "staged";             // files in versions/.staging-*
inline constexpr const char* kStepVersionWritten = "version_written";  // renamed to versions/N
inline constexpr const char* kStepPointerFlipped = "pointer_flipped";  // `current` names N
inline constexpr const char* kStepHistoryWritten = "history_written";  // history.jsonl appended

struct PromoteRequest {
  std::string tune_dir;       // holds selected.engine and record.json
  std::string compare_path;   // output of `switchyard compare OLD NEW --json`; "" = none
  bool require_compare = false;
  std::string command_line;   // recorded in the audit log and the promotion metadata
  // Test hook: called after each step. A non-OK status stops the promotion right there, as a
  // crash would: nothing is cleaned up and no audit line is written; the status is returned.
  std::function<Status(const std::string& step)> step_hook;
};

// The result of a promote or rollback that ran to a decision. `done` false = refused by
// policy (exit 3), with the reason; errors (unreadable files, bad arguments) are Status.
struct ReleaseOutcome {
  bool done = false;
  bool no_change = false;     // the engine was already in service; nothing written
  std::string reason;         // why refused, or what was done
  std::string model_sha256;
  int version = 0;            // now in service (0 when refused)
  int replaced = 0;           // in service before; 0 = none
  std::string audit_error;    // set when the action happened but its audit line could not be written
  nlohmann::json ToJson() const;
};

Result<ReleaseOutcome> Promote(const std::string& store_dir, const PromoteRequest& request);

struct RollbackRequest {
  std::string model_sha256;  // "" = the store's only model
  int to_version = 0;        // 0 = the newest earlier version that has been in service
  std::string command_line;
};

// Puts an earlier version back in service by flipping the pointer; deletes nothing.
Result<ReleaseOutcome> Rollback(const std::string& store_dir, const RollbackRequest& request);

// What a record's tuning covered and did not (shapes, data sets, concurrency, precisions,
// target): the record's own "scope" object when it has one, otherwise derived from its
// data, shapes, search, measurement_policy and validation fields ("derived": true).
nlohmann::json DescribeScope(const nlohmann::json& record);

// The facts of a record people need at a glance: route, speedup and its interval,
// accuracy per output, created_at, tool.
nlohmann::json SummarizeRecord(const nlohmann::json& record);

// `switchyard status` as data: per model the version in service, since when, its record
// summary and scope, what it replaced, every version and the history length.
Result<nlohmann::json> StoreStatus(const std::string& store_dir);

}  // namespace switchyard::release
