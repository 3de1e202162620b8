// Reading and writing the release store's pointer, versions and history (store.h).
#include "release/store.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "io/npy.h"
#include "release/files.h"

namespace switchyard::release {
namespace fs = std::filesystem;

bool IsSha256Hex(const std::string& s) {
  if (s.size() != 64) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

nlohmann::json InService::ToJson() const {
  return {{"version", version}, {"since", since}, {"action", action}, {"replaced", replaced},
          {"event", event}};
}

Result<std::vector<std::string>> ReleaseStore::Models() const {
  std::error_code ec;
  if (!fs::is_directory(dir_, ec)) {
    return Status::NotFound("release store '" + dir_ + "' does not exist");
  }
  std::vector<std::string> models;
  const fs::path root = fs::path(dir_) / "models";
  if (!fs::is_directory(root, ec)) return models;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    const std::string name = e.path().filename().string();
    if (e.is_directory() && IsSha256Hex(name)) models.push_back(name);
  }
  if (ec) return Status::IoError("cannot list '" + root.string() + "': " + ec.message());
  std::sort(models.begin(), models.end());
  return models;
}

Result<InService> ReleaseStore::Current(const std::string& model_sha) const {
  const std::string path = CurrentPath(model_sha);
  std::error_code ec;
  if (!fs::exists(path, ec)) return InService{};
  SY_ASSIGN_OR_RETURN(std::string text, ReadFileBytes(path, 1 << 20));
  const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("version") || !j["version"].is_number_integer()) {
    return Status::ParseError("'" + path + "' is not a release pointer ({\"version\": N, ...})");
  }
  // The optional fields, where present, must have their types (a hand-edited pointer with
  // "replaced": null must be an error naming it, not an exception).
  for (const char* key : {"since", "action"}) {
    if (j.contains(key) && !j[key].is_string()) {
      return Status::ParseError("'" + path + "': field '" + key + "' must be a string");
    }
  }
  for (const char* key : {"replaced", "event"}) {
    if (j.contains(key) && !j[key].is_number_integer()) {
      return Status::ParseError("'" + path + "': field '" + key + "' must be an integer");
    }
  }
  InService s;
  s.version = j["version"].get<int>();
  s.since = j.value("since", std::string());
  s.action = j.value("action", std::string());
  s.replaced = j.value("replaced", 0);
  s.event = j.value("event", int64_t{0});
  return s;
}

Result<std::vector<VersionEntry>> ReleaseStore::Versions(const std::string& model_sha) const {
  std::vector<VersionEntry> out;
  const std::string root = VersionsDir(model_sha);
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return out;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    const std::string name = e.path().filename().string();
    if (!e.is_directory() || name.empty() || name.size() > 9 ||
        !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      continue;  // staging folders (.staging-*) and anything foreign
    }
    VersionEntry v;
    v.version = std::stoi(name);
    v.dir = e.path().string();
    const std::string promo = v.dir + "/promotion.json";
    v.complete = fs::is_regular_file(v.dir + "/engine", ec) &&
                 fs::is_regular_file(v.dir + "/record.json", ec) && fs::is_regular_file(promo, ec);
    if (fs::is_regular_file(promo, ec)) {
      auto bytes = ReadFileBytes(promo, 16 << 20);
      if (bytes.ok()) v.promotion = nlohmann::json::parse(*bytes, nullptr, false);
      if (v.promotion.is_discarded()) {
        v.promotion = nullptr;
        v.complete = false;
      }
    }
    out.push_back(std::move(v));
  }
  if (ec) return Status::IoError("cannot list '" + root + "': " + ec.message());
  std::sort(out.begin(), out.end(),
            [](const VersionEntry& a, const VersionEntry& b) { return a.version < b.version; });
  return out;
}

Result<std::vector<nlohmann::json>> ReleaseStore::History(const std::string& model_sha) const {
  std::vector<nlohmann::json> out;
  const std::string path = HistoryPath(model_sha);
  std::error_code ec;
  if (!fs::exists(path, ec)) return out;
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError("cannot read '" + path + "'");
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || !j.contains("version")) {
      return Status::ParseError(path + ":" + std::to_string(n) + ": not a history event");
    }
    for (const char* key : {"version", "event"}) {
      if (j.contains(key) && !j[key].is_number_integer()) {
        return Status::ParseError(path + ":" + std::to_string(n) + ": field '" + key + "' must be an integer");
      }
    }
    out.push_back(std::move(j));
  }
  return out;
}

Status ReleaseStore::WriteCurrent(const std::string& model_sha, const InService& s) const {
  return WriteFileDurable(CurrentPath(model_sha), s.ToJson().dump() + "\n");
}

Status ReleaseStore::AppendHistory(const std::string& model_sha, const nlohmann::json& e) const {
  return AppendLineDurable(HistoryPath(model_sha), e.dump() + "\n");
}

Status ReleaseStore::ReconcileHistory(const std::string& model_sha) const {
  SY_ASSIGN_OR_RETURN(const InService cur, Current(model_sha));
  if (cur.version == 0) return Status::Ok();
  SY_ASSIGN_OR_RETURN(const std::vector<nlohmann::json> history, History(model_sha));
  if (!history.empty() && history.back().value("event", int64_t{0}) == cur.event) {
    return Status::Ok();
  }
  nlohmann::json e = cur.ToJson();
  e["when"] = cur.since;
  e["recovered"] = true;  // written after the fact: the process that flipped it stopped first
  return AppendHistory(model_sha, e);
}

}  // namespace switchyard::release
