// `promote`: policy checks on a tune output folder, then the crash-safe promotion sequence
// (stage -> rename version folder -> flip pointer -> history), with an audit line.
#include "release/promote.h"

#include <unistd.h>

#include <filesystem>
#include <optional>

#include "io/npy.h"
#include "io/sha256.h"
#include "release/audit.h"
#include "release/files.h"
#include "release/internal.h"
#include "release/store.h"
#include "switchyard/version.h"

namespace switchyard::release {
namespace fs = std::filesystem;
using json = nlohmann::json;

json ReleaseOutcome::ToJson() const {
  json j = {{"done", done},       {"no_change", no_change}, {"reason", reason},
            {"model_sha256", model_sha256}, {"version", version}, {"replaced", replaced}};
  if (!audit_error.empty()) j["audit_error"] = audit_error;
  return j;
}

namespace {

// A policy refusal: the request was understood and said no (exit 3).
ReleaseOutcome Refuse(std::string reason, std::string model = "") {
  ReleaseOutcome o;
  o.reason = std::move(reason);
  o.model_sha256 = std::move(model);
  return o;
}

// `switchyard compare --json` prints its object on the last stdout line; accept the file as
// one JSON object or as that output with the object on its last non-empty line.
Result<json> ReadCompare(const std::string& path) {
  SY_ASSIGN_OR_RETURN(std::string text, ReadFileBytes(path, 64 << 20));
  json j = json::parse(text, nullptr, false);
  if (!j.is_object()) {
    size_t end = text.find_last_not_of("\r\n \t");
    if (end != std::string::npos) {
      const size_t start = text.find_last_of('\n', end);
      j = json::parse(text.substr(start == std::string::npos ? 0 : start + 1, end + 1 - (start == std::string::npos ? 0 : start + 1)),
                      nullptr, false);
    }
  }
  if (!j.is_object()) {
    return Status::Invalid("'" + path + "' is not a compare result (expected the JSON object " +
                           "`switchyard compare OLD NEW --json` prints)");
  }
  return j;
}

// Hashes a compare result names for one side ("new" or "old"), in any of the spellings
// {"new": {"sha256"|"file_sha256"|"engine_sha256": ...}} or {"new_sha256": ...}.
std::vector<std::string> SideHashes(const json& compare, const std::string& side) {
  std::vector<std::string> out;
  const json& obj = Field(compare, side.c_str());
  for (const char* k : {"sha256", "file_sha256", "engine_sha256"}) {
    const std::string v = Str(obj, k);
    if (!v.empty()) out.push_back(v);
  }
  const std::string flat = Str(compare, (side + "_sha256").c_str());
  if (!flat.empty()) out.push_back(flat);
  return out;
}

bool NamesEither(const std::vector<std::string>& hashes, const std::string& a, const std::string& b) {
  for (const std::string& h : hashes) {
    if (h == a || (!b.empty() && h == b)) return true;
  }
  return false;
}

json DataHashes(const json& record) {
  const json& data = Field(record, "data");
  json sets = json::object();
  if (Field(data, "sets").is_array()) {
    for (const json& s : data["sets"]) sets[Str(s, "name")] = Str(s, "inputs_sha256");
  }
  return {{"input_profile", Str(data, "input_profile")}, {"sets", sets}};
}

struct Prepared {
  json record;
  std::string record_bytes, engine_bytes, compare_bytes;
  json compare;  // null when none
  std::string model_sha, engine_file_sha;
  std::vector<std::string> checks;  // what was verified, for the promotion metadata
};

// Reads the tune folder and applies the policy. A refusal comes back as a ReleaseOutcome in
// `refusal`; unreadable or malformed input as an error Status.
Status Prepare(const PromoteRequest& req, Prepared* p, std::optional<ReleaseOutcome>* refusal,
               json* audit) {
  const std::string dir = req.tune_dir;
  SY_ASSIGN_OR_RETURN(p->record_bytes, ReadFileBytes(dir + "/record.json", 256 << 20));
  p->record = json::parse(p->record_bytes, nullptr, false);
  if (!p->record.is_object() || Str(p->record, "format") != "switchyard.record") {
    return Status::Invalid("'" + dir + "/record.json' is not a switchyard release record");
  }
  p->model_sha = Str(Field(p->record, "model"), "sha256");
  if (!IsSha256Hex(p->model_sha)) {
    return Status::Invalid("'" + dir + "/record.json': model.sha256 is not a sha256 hex digest");
  }
  const json& sel = Field(p->record, "selected");
  (*audit)["model_sha256"] = p->model_sha;
  (*audit)["data_sha256"] = DataHashes(p->record);
  (*audit)["proposed"] = {{"tune_dir", dir},
                          {"route", sel.is_object() ? Field(sel, "route") : json()},
                          {"engine_sha256", sel.is_object() ? Field(sel, "engine_sha256") : json()},
                          {"record_sha256", Sha256Hex(p->record_bytes)},
                          {"compare", req.compare_path.empty() ? json() : json(req.compare_path)},
                          {"require_compare", req.require_compare}};
  auto refuse = [&](const std::string& why) {
    *refusal = Refuse(why, p->model_sha);
    return Status::Ok();
  };
  if (!sel.is_object()) {
    return refuse("the record has no selected engine: no route passed the accuracy gate (" +
                  Str(Field(p->record, "decision"), "reason") + ")");
  }
  if (!Field(Field(sel, "accuracy"), "passed").is_boolean() || !sel["accuracy"]["passed"].get<bool>()) {
    return refuse("the selected engine did not pass the accuracy gate (selected.accuracy.passed)");
  }
  p->checks.push_back("selected.accuracy.passed");
  const json& val = Field(p->record, "validation");
  if (!Field(val, "passed").is_boolean() || !val["passed"].get<bool>()) {
    return refuse("the selected engine did not pass long-tail validation (validation.passed)");
  }
  p->checks.push_back("validation.passed");
  const std::string engine_path = dir + "/selected.engine";
  std::error_code ec;
  if (!fs::is_regular_file(engine_path, ec)) {
    return refuse("'" + engine_path + "' is missing although the record selected an engine");
  }
  SY_ASSIGN_OR_RETURN(p->engine_bytes, ReadFileBytes(engine_path));
  p->engine_file_sha = Sha256Hex(p->engine_bytes);
  const std::string expected = Str(Field(p->record, "files"), "selected.engine");
  if (expected != p->engine_file_sha) {
    return refuse("engine hash mismatch: '" + engine_path + "' has sha256 " + p->engine_file_sha +
                  ", the record says " + (expected.empty() ? "nothing" : expected) +
                  " (files[\"selected.engine\"]): the file is not the one that was tuned");
  }
  p->checks.push_back("selected.engine sha256 = record.files[\"selected.engine\"]");
  if (req.compare_path.empty()) {
    if (req.require_compare) {
      return refuse("--require-compare: no compare result was given (pass --compare FILE, the "
                    "output of `switchyard compare IN_SERVICE.engine NEW.engine --json`)");
    }
    return Status::Ok();
  }
  SY_ASSIGN_OR_RETURN(p->compare_bytes, ReadFileBytes(req.compare_path, 64 << 20));
  SY_ASSIGN_OR_RETURN(p->compare, ReadCompare(req.compare_path));
  const std::string verdict = Str(p->compare, "verdict");
  if (verdict != "promote") {
    std::string reasons;
    if (Field(p->compare, "reasons").is_array()) {
      for (const json& r : p->compare["reasons"]) {
        reasons += (reasons.empty() ? "" : "; ") + (r.is_string() ? r.get<std::string>() : r.dump());
      }
    }
    return refuse("compare said " + (verdict.empty() ? std::string("nothing (no \"verdict\")") : "'" + verdict + "'") +
                  (reasons.empty() ? "" : ": " + reasons) + " (" + req.compare_path + ")");
  }
  const std::string compare_model = Str(p->compare, "model_sha256");
  if (!compare_model.empty() && compare_model != p->model_sha) {
    return refuse("the compare result is about another model (model_sha256 " + compare_model +
                  ", this record's model is " + p->model_sha + ")");
  }
  const std::vector<std::string> new_hashes = SideHashes(p->compare, "new");
  if (!new_hashes.empty() && !NamesEither(new_hashes, p->engine_file_sha, Str(sel, "engine_sha256"))) {
    return refuse("the compare result is about another engine: its \"new\" side is " +
                  new_hashes.front() + ", not this selected.engine (" + p->engine_file_sha + ")");
  }
  p->checks.push_back("compare verdict = promote");
  return Status::Ok();
}

Status RemoveStaleStaging(const std::string& versions_dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(versions_dir, ec)) {
    if (e.path().filename().string().rfind(".staging-", 0) == 0) fs::remove_all(e.path(), ec);
  }
  return Status::Ok();  // leftovers are ignored by readers; failing to remove them is harmless
}

Status Step(const PromoteRequest& req, const char* step, bool* crashed) {
  if (!req.step_hook) return Status::Ok();
  Status s = req.step_hook(step);
  if (!s.ok()) *crashed = true;
  return s;
}

Result<ReleaseOutcome> PromoteLocked(const ReleaseStore& store, const PromoteRequest& req,
                                     json* audit, bool* crashed) {
  Prepared p;
  std::optional<ReleaseOutcome> refusal;
  SY_RETURN_IF_ERROR(Prepare(req, &p, &refusal, audit));
  if (refusal) return *refusal;
  const std::string& model = p.model_sha;
  const std::string versions_dir = store.VersionsDir(model);
  SY_RETURN_IF_ERROR(MakeDirs(versions_dir));
  SY_ASSIGN_OR_RETURN(FileLock lock, FileLock::Acquire(store.LockPath()));
  SY_RETURN_IF_ERROR(store.ReconcileHistory(model));
  SY_RETURN_IF_ERROR(RemoveStaleStaging(versions_dir));
  SY_ASSIGN_OR_RETURN(const InService cur, store.Current(model));
  SY_ASSIGN_OR_RETURN(const std::vector<VersionEntry> versions, store.Versions(model));
  json in_service_promo;
  for (const VersionEntry& v : versions) {
    if (v.version == cur.version) in_service_promo = v.promotion;
  }
  if (cur.version > 0 && Str(in_service_promo, "engine_file_sha256") == p.engine_file_sha) {
    ReleaseOutcome o;
    o.done = true;
    o.no_change = true;
    o.model_sha256 = model;
    o.version = o.replaced = cur.version;
    o.reason = "this engine is already in service as version " + std::to_string(cur.version);
    return o;
  }
  if (!p.compare.is_null() && cur.version > 0) {
    const std::vector<std::string> old_hashes = SideHashes(p.compare, "old");
    if (!old_hashes.empty() &&
        !NamesEither(old_hashes, Str(in_service_promo, "engine_file_sha256"),
                     Str(in_service_promo, "engine_sha256"))) {
      return Refuse("the compare result's \"old\" side (" + old_hashes.front() +
                        ") is not the engine in service (version " + std::to_string(cur.version) + ")",
                    model);
    }
  }
  const int n = versions.empty() ? 1 : versions.back().version + 1;
  SY_ASSIGN_OR_RETURN(const std::vector<json> history, store.History(model));
  const json& sel = p.record["selected"];
  const json base = AuditBase("promote", req.command_line);
  json promo = {
      {"format", "switchyard.promotion"},
      {"format_version", 1},
      {"version", n},
      {"model_sha256", model},
      {"promoted_at", base["when"]},
      {"who", base["who"]},
      {"host", base["host"]},
      {"command", req.command_line},
      {"tool", base["tool"]},
      {"source", {{"tune_dir", req.tune_dir}, {"record_sha256", Sha256Hex(p.record_bytes)}}},
      {"engine_file_sha256", p.engine_file_sha},
      {"engine_sha256", Field(sel, "engine_sha256")},
      {"route", Field(sel, "route")},
      {"replaced", cur.version},
      {"require_compare", req.require_compare},
      {"compare", p.compare.is_null()
                      ? json()
                      : json{{"file", req.compare_path},
                             {"sha256", Sha256Hex(p.compare_bytes)},
                             {"verdict", Field(p.compare, "verdict")},
                             {"reasons", Field(p.compare, "reasons")}}},
      {"checks", p.checks},
      {"summary", SummarizeRecord(p.record)},
      {"scope", DescribeScope(p.record)}};
  // 1. Everything for the new version, in a staging folder readers never look at.
  const std::string staging =
      versions_dir + "/.staging-" + std::to_string(n) + "-" + std::to_string(::getpid());
  SY_RETURN_IF_ERROR(MakeDirs(staging));
  SY_RETURN_IF_ERROR(WriteFileDurable(staging + "/engine", p.engine_bytes));
  SY_RETURN_IF_ERROR(WriteFileDurable(staging + "/record.json", p.record_bytes));
  if (!p.compare.is_null()) {
    SY_RETURN_IF_ERROR(WriteFileDurable(staging + "/compare.json", p.compare_bytes));
  }
  SY_RETURN_IF_ERROR(WriteFileDurable(staging + "/promotion.json", promo.dump(2) + "\n"));
  SY_RETURN_IF_ERROR(Step(req, kStepStaged, crashed));
  // 2. The complete version appears under its number in one rename.
  const std::string final_dir = store.VersionDir(model, n);
  if (::rename(staging.c_str(), final_dir.c_str()) != 0) {
    return Status::IoError("cannot rename '" + staging + "' to '" + final_dir + "'");
  }
  SY_RETURN_IF_ERROR(SyncDir(versions_dir));
  SY_RETURN_IF_ERROR(Step(req, kStepVersionWritten, crashed));
  // 3. The commit point: the pointer names the new version (temporary file + rename).
  InService next;
  next.version = n;
  next.since = base["when"].get<std::string>();
  next.action = "promote";
  next.replaced = cur.version;
  next.event = static_cast<int64_t>(history.size()) + 1;
  SY_RETURN_IF_ERROR(store.WriteCurrent(model, next));
  SY_RETURN_IF_ERROR(Step(req, kStepPointerFlipped, crashed));
  // 4. History (ReconcileHistory restores this line if a crash skips it).
  json event = next.ToJson();
  event["when"] = next.since;
  event["who"] = base["who"];
  event["host"] = base["host"];
  event["engine_file_sha256"] = p.engine_file_sha;
  event["route"] = Field(sel, "route");
  SY_RETURN_IF_ERROR(store.AppendHistory(model, event));
  SY_RETURN_IF_ERROR(Step(req, kStepHistoryWritten, crashed));
  ReleaseOutcome o;
  o.done = true;
  o.model_sha256 = model;
  o.version = n;
  o.replaced = cur.version;
  o.reason = "version " + std::to_string(n) + " (route '" + Str(sel, "route") + "') is in service" +
             (cur.version > 0 ? ", replacing version " + std::to_string(cur.version) : "");
  return o;
}

}  // namespace

Result<ReleaseOutcome> Promote(const std::string& store_dir, const PromoteRequest& request) {
  PromoteRequest req = request;
  std::error_code ec;
  req.tune_dir = fs::absolute(request.tune_dir, ec).lexically_normal().string();
  if (!req.compare_path.empty()) {
    req.compare_path = fs::absolute(request.compare_path, ec).lexically_normal().string();
  }
  const ReleaseStore store(fs::absolute(store_dir, ec).lexically_normal().string());
  SY_RETURN_IF_ERROR(MakeDirs(store.dir()));
  json audit = AuditBase("promote", req.command_line);
  audit["store"] = store.dir();
  bool crashed = false;
  Result<ReleaseOutcome> r = PromoteLocked(store, req, &audit, &crashed);
  if (crashed) return r.status();  // a simulated crash writes nothing more
  ReleaseOutcome o = FinishAudit(store.AuditPath(), std::move(audit), r);
  if (!r.ok()) return r.status();
  return o;
}

ReleaseOutcome FinishAudit(const std::string& log, json audit, const Result<ReleaseOutcome>& r) {
  if (!r.ok()) {
    audit["outcome"] = "error";
    audit["reason"] = r.status().ToString();
    audit["executed"] = nullptr;
    (void)AppendAudit(log, audit);  // best effort: the error itself is what the caller reports
    return {};
  }
  ReleaseOutcome o = *r;
  const std::string action = audit.value("action", "");
  audit["outcome"] = !o.done ? "refused" : o.no_change ? "no_change" : action == "rollback" ? "rolled_back" : "promoted";
  audit["reason"] = o.reason;
  if (!o.model_sha256.empty()) audit["model_sha256"] = o.model_sha256;
  audit["executed"] = o.done && !o.no_change
                          ? json{{"version", o.version}, {"replaced", o.replaced}}
                          : json();
  Status s = AppendAudit(log, audit);
  if (!s.ok()) o.audit_error = s.ToString();
  return o;
}

}  // namespace switchyard::release
