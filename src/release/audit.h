// The audit trail: one JSON object per line in an append-only file (a store's
// DIR/audit.jsonl, or a tune folder's), saying who did what, where, when, with which tool,
// on which model and data, what the system proposed, what was executed, and the outcome.
// Format: docs/release-store.md. Writers only ever append (O_APPEND, one write() per line,
// fsync), so concurrent writers interleave whole lines. Free functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "switchyard/status.h"

namespace switchyard::release {

// The fields every entry carries: "when" (UTC ISO 8601), "who" (OS user of the effective
// uid), "uid", "host", "tool" {name, version, commit}, "action" and "command" (the exact
// command line; "" = this process's own argv from /proc/self/cmdline). Callers add
// "model_sha256", "data_sha256", "proposed", "executed", "outcome" (e.g. "promoted",
// "refused", "error") and "reason" as they apply.
nlohmann::json AuditBase(const std::string& action, const std::string& command_line);

// Appends `entry` as one line to `log_path` (created 0600, its folder 0700 when missing).
// Fields of AuditBase missing from `entry` are filled in; `entry` must be an object.
Status AppendAudit(const std::string& log_path, const nlohmann::json& entry);

struct AuditLog {
  struct Entry {
    int line = 0;  // 1-based line number in the file
    nlohmann::json value;
  };
  std::vector<Entry> entries;       // the valid lines, in file order
  std::vector<std::string> errors;  // "FILE:LINE: why" for every malformed line
};

// Reads every line of the log. A malformed line (not JSON, not an object, no "when" or
// "action") is reported in `errors` and skipped; the valid ones are still returned. A
// missing or unreadable file is an error.
Result<AuditLog> ReadAudit(const std::string& log_path);

// This process's argv joined by spaces (/proc/self/cmdline); "" where unavailable.
std::string ProcessCommandLine();

// Current UTC time, ISO 8601 with seconds ("2026-11-29T19:31:09Z").
std::string UtcNowIso8601();

}  // namespace switchyard::release
