// Internal to src/release/: helpers shared by promote.cc, rollback.cc and status.cc.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "release/promote.h"

namespace switchyard::release {

// The member `key` of an object, or null (also when `j` is not an object).
inline const nlohmann::json& Field(const nlohmann::json& j, const char* key) {
  static const nlohmann::json kNull;
  if (!j.is_object()) return kNull;
  const auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

inline std::string Str(const nlohmann::json& j, const char* key) {
  const nlohmann::json& v = Field(j, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

// Completes `audit` with the outcome of `r` (outcome, reason, executed) and appends it to
// `log`. For an error the line is best effort; for a decision a failed append is reported in
// the returned outcome's audit_error.
ReleaseOutcome FinishAudit(const std::string& log, nlohmann::json audit,
                           const Result<ReleaseOutcome>& r);

}  // namespace switchyard::release
