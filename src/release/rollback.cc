// `rollback`: an earlier version back in service by one pointer flip; nothing is deleted.
#include <filesystem>
#include <set>

#include "io/sha256.h"
#include "release/audit.h"
#include "release/files.h"
#include "release/internal.h"
#include "release/promote.h"
#include "release/store.h"

namespace switchyard::release {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

ReleaseOutcome Refused(std::string reason, const std::string& model) {
  ReleaseOutcome o;
  o.reason = std::move(reason);
  o.model_sha256 = model;
  return o;
}

Result<std::string> ResolveModel(const ReleaseStore& store, const std::string& wanted) {
  SY_ASSIGN_OR_RETURN(const std::vector<std::string> models, store.Models());
  if (!wanted.empty()) {
    for (const std::string& m : models) {
      if (m == wanted) return m;
    }
    return Status::NotFound("model " + wanted + " has no entry in the release store '" +
                            store.dir() + "'");
  }
  if (models.size() == 1) return models.front();
  if (models.empty()) return Status::NotFound("the release store '" + store.dir() + "' is empty");
  std::string names;
  for (const std::string& m : models) names += (names.empty() ? "" : ", ") + m;
  return Status::Invalid("the release store holds several models; name one with --model: " + names);
}

Result<ReleaseOutcome> RollbackLocked(const ReleaseStore& store, const RollbackRequest& req,
                                      json* audit) {
  SY_ASSIGN_OR_RETURN(const std::string model, ResolveModel(store, req.model_sha256));
  (*audit)["model_sha256"] = model;
  (*audit)["proposed"] = {{"to", req.to_version > 0 ? json(req.to_version) : json("previous")}};
  SY_ASSIGN_OR_RETURN(FileLock lock, FileLock::Acquire(store.LockPath()));
  SY_RETURN_IF_ERROR(store.ReconcileHistory(model));
  SY_ASSIGN_OR_RETURN(const InService cur, store.Current(model));
  if (cur.version == 0) return Refused("nothing of model " + model + " is in service", model);
  SY_ASSIGN_OR_RETURN(const std::vector<VersionEntry> versions, store.Versions(model));
  SY_ASSIGN_OR_RETURN(const std::vector<json> history, store.History(model));
  const VersionEntry* target = nullptr;
  if (req.to_version > 0) {
    for (const VersionEntry& v : versions) {
      if (v.version == req.to_version) target = &v;
    }
    if (target == nullptr) {
      return Status::NotFound("model " + model + " has no version " + std::to_string(req.to_version));
    }
    if (target->version == cur.version) {
      return Refused("version " + std::to_string(cur.version) + " is already in service", model);
    }
  } else {
    // The newest earlier version that has been in service: a version folder whose promotion
    // was interrupted before its pointer flip never served and is not a rollback target.
    std::set<int> served;
    for (const json& e : history) served.insert(e.value("version", 0));
    for (const VersionEntry& v : versions) {
      if (v.version < cur.version && v.complete && served.count(v.version)) target = &v;
    }
    if (target == nullptr) {
      return Refused("no version earlier than " + std::to_string(cur.version) +
                         " has been in service (name one with --to)", model);
    }
  }
  if (!target->complete) {
    return Refused("version " + std::to_string(target->version) +
                       " is incomplete (engine, record.json or promotion.json missing)", model);
  }
  SY_ASSIGN_OR_RETURN(const std::string sha, Sha256File(target->dir + "/engine"));
  const std::string expected = Str(target->promotion, "engine_file_sha256");
  if (sha != expected) {
    return Refused("version " + std::to_string(target->version) + "'s engine file has sha256 " + sha +
                       " but was promoted as " + expected + ": it changed since, not putting it in service",
                   model);
  }
  const json base = AuditBase("rollback", req.command_line);
  InService next;
  next.version = target->version;
  next.since = base["when"].get<std::string>();
  next.action = "rollback";
  next.replaced = cur.version;
  next.event = static_cast<int64_t>(history.size()) + 1;
  SY_RETURN_IF_ERROR(store.WriteCurrent(model, next));  // the one step
  json event = next.ToJson();
  event["when"] = next.since;
  event["who"] = base["who"];
  event["host"] = base["host"];
  event["engine_file_sha256"] = sha;
  event["route"] = Field(target->promotion, "route");
  SY_RETURN_IF_ERROR(store.AppendHistory(model, event));
  ReleaseOutcome o;
  o.done = true;
  o.model_sha256 = model;
  o.version = target->version;
  o.replaced = cur.version;
  o.reason = "version " + std::to_string(target->version) + " is back in service, replacing version " +
             std::to_string(cur.version) + " (kept in the store)";
  return o;
}

}  // namespace

Result<ReleaseOutcome> Rollback(const std::string& store_dir, const RollbackRequest& req) {
  std::error_code ec;
  const ReleaseStore store(fs::absolute(store_dir, ec).lexically_normal().string());
  if (!fs::is_directory(store.dir(), ec)) {
    return Status::NotFound("release store '" + store.dir() + "' does not exist");
  }
  json audit = AuditBase("rollback", req.command_line);
  audit["store"] = store.dir();
  const Result<ReleaseOutcome> r = RollbackLocked(store, req, &audit);
  ReleaseOutcome o = FinishAudit(store.AuditPath(), std::move(audit), r);
  if (!r.ok()) return r.status();
  return o;
}

}  // namespace switchyard::release
