// The append-only audit log (audit.h).
#include "release/audit.h"

#include <pwd.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>

#include "release/files.h"
#include "switchyard/version.h"

namespace switchyard::release {
namespace {

std::string UserName() {
  const uid_t uid = ::geteuid();
  struct passwd pw {};
  struct passwd* found = nullptr;
  char buf[4096];
  if (::getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found != nullptr &&
      found->pw_name != nullptr) {
    return found->pw_name;
  }
  return "uid " + std::to_string(uid);  // a uid without a passwd entry (containers)
}

std::string HostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

}  // namespace

std::string UtcNowIso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm tm {};
  ::gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string ProcessCommandLine() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!raw.empty() && raw.back() == '\0') raw.pop_back();
  for (char& ch : raw) {
    if (ch == '\0') ch = ' ';
  }
  return raw;
}

nlohmann::json AuditBase(const std::string& action, const std::string& command_line) {
  return {{"when", UtcNowIso8601()},
          {"who", UserName()},
          {"uid", static_cast<int64_t>(::geteuid())},
          {"host", HostName()},
          {"tool", {{"name", "switchyard"}, {"version", SWITCHYARD_VERSION},
                    {"commit", SWITCHYARD_GIT_COMMIT}}},
          {"action", action},
          {"command", command_line.empty() ? ProcessCommandLine() : command_line}};
}

Status AppendAudit(const std::string& log_path, const nlohmann::json& entry) {
  if (!entry.is_object()) return Status::Invalid("audit entry must be a JSON object");
  nlohmann::json full = entry;
  const nlohmann::json base =
      AuditBase(entry.value("action", std::string()), entry.value("command", std::string()));
  for (const auto& [k, v] : base.items()) {
    if (!full.contains(k)) full[k] = v;
  }
  // replace: invalid UTF-8 in a command line must not make the entry unwritable.
  const std::string line =
      full.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  SY_RETURN_IF_ERROR(MakeDirs(std::filesystem::path(log_path).parent_path().string()));
  // One write() per line: with O_APPEND the kernel places it at the end as a unit, so lines
  // of concurrent writers never interleave inside each other.
  return AppendLineDurable(log_path, line).WithContext("audit log");
}

Result<AuditLog> ReadAudit(const std::string& log_path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(log_path, ec)) {
    return Status::NotFound("audit log '" + log_path + "' does not exist");
  }
  std::ifstream in(log_path, std::ios::binary);
  if (!in) return Status::IoError("cannot read audit log '" + log_path + "'");
  AuditLog log;
  std::string text;
  int line_no = 0;
  while (std::getline(in, text)) {
    ++line_no;
    if (text.empty()) continue;
    const std::string where = log_path + ":" + std::to_string(line_no) + ": ";
    auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
      log.errors.push_back(where + "not valid JSON");
    } else if (!j.is_object()) {
      log.errors.push_back(where + "not a JSON object");
    } else if (!j.contains("when") || !j["when"].is_string() || !j.contains("action") ||
               !j["action"].is_string()) {
      log.errors.push_back(where + "missing string field 'when' or 'action'");
    } else {
      log.entries.push_back({line_no, std::move(j)});
    }
  }
  return log;
}

}  // namespace switchyard::release
