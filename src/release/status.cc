// What a record covered (scope), a record at a glance, and the store's status (promote.h).
#include <filesystem>
#include <set>

#include "io/npy.h"
#include "release/internal.h"
#include "release/promote.h"
#include "release/store.h"

namespace switchyard::release {
using json = nlohmann::json;

namespace {

// The value the route gives `knob`, or "" when the route leaves it at its default.
std::string RouteValue(const std::string& route, const std::string& knob) {
  size_t pos = 0;
  while (pos < route.size()) {
    size_t end = route.find(' ', pos);
    if (end == std::string::npos) end = route.size();
    const std::string kv = route.substr(pos, end - pos);
    if (kv.rfind(knob + "=", 0) == 0) return kv.substr(knob.size() + 1);
    pos = end + 1;
  }
  return "";
}

}  // namespace

json DescribeScope(const json& record) {
  if (Field(record, "scope").is_object()) {
    json s = record["scope"];
    s["derived"] = false;
    return s;
  }
  // The same shape as the tuner's own "scope" section: {"covered": {...}, "not_covered": [...]}.
  const json& data = Field(record, "data");
  json input_sets = json::array();
  if (Field(data, "sets").is_array()) {
    for (const json& s : data["sets"]) {
      json shapes = json::object();
      if (Field(s, "inputs").is_array()) {
        for (const json& in : s["inputs"]) shapes[Str(in, "name")] = Field(in, "shape");
      }
      input_sets.push_back({{"name", Field(s, "name")}, {"shapes", shapes},
                            {"inputs_sha256", Field(s, "inputs_sha256")},
                            {"reference", Str(Field(s, "reference"), "source")}});
    }
  }
  const json& mp = Field(record, "measurement_policy");
  json sessions;
  std::string edge_detail;
  bool edge_skipped = false;
  const json& checks = Field(Field(record, "validation"), "checks");
  if (checks.is_array()) {
    for (const json& c : checks) {
      if (Str(c, "name") == "concurrent sessions") sessions = Field(c, "sessions");
      if (Str(c, "name") == "edge shapes") {
        edge_skipped = Field(c, "skipped").is_boolean() && c["skipped"].get<bool>();
        edge_detail = Str(c, "detail");
      }
    }
  }
  const json& searched = Field(Field(Field(record, "search"), "knobs"), "precision");
  const std::string route = Str(Field(record, "selected"), "route");
  const std::string precision = RouteValue(route, "precision");
  const std::string quant = RouteValue(route, "quant.weights");
  const json& target = Field(record, "target");
  json covered = {
      {"declared_shapes", Field(record, "shapes")},
      {"input_sets", input_sets},
      {"data_source", Field(data, "source")},
      {"edge_shapes", edge_skipped ? "skipped: " + edge_detail : std::string("validated at the declared ranges")},
      {"measured_concurrency", Field(mp, "concurrency").is_null() ? json(1) : mp["concurrency"]},
      {"validated_concurrent_sessions", sessions},
      {"precisions_searched", searched.is_array() ? searched : json::array({"fp32 (precision not searched)"})},
      {"selected_precision", precision.empty() ? "fp32 (default)" : precision},
      {"selected_quant_weights", quant.empty() ? "none" : quant},
      {"target", Field(target, "fingerprint")}};
  json not_covered = {
      "input shapes other than the sets' (and the declared range edges)",
      "data other than the " + std::to_string(input_sets.size()) + " evaluation set(s) listed (by hash)",
      "latency under concurrency above " + covered["measured_concurrency"].dump() +
          "; more than " + (sessions.is_number() ? sessions.dump() : std::string("the validated")) +
          " concurrent sessions",
      "other machines, CPU models or library versions than the target above"};
  return {{"derived", true}, {"covered", covered}, {"not_covered", not_covered}};
}

json SummarizeRecord(const json& record) {
  const json& sel = Field(record, "selected");
  json outputs = json::object();
  const json& acc_outputs = Field(Field(sel, "accuracy"), "outputs");
  if (acc_outputs.is_object()) {
    for (const auto& [name, o] : acc_outputs.items()) {
      outputs[name] = {{"metric", Field(o, "metric")}, {"worst", Field(o, "worst")},
                       {"threshold", Field(o, "threshold")}, {"passed", Field(o, "passed")}};
    }
  }
  return {{"route", Field(sel, "route")},
          {"speedup", Field(sel, "speedup")},
          {"speedup_ci95", Field(sel, "speedup_ci95")},
          {"p50_ms", Field(sel, "p50_ms")},
          {"baseline_p50_ms", Field(Field(record, "baseline"), "p50_ms")},
          {"is_baseline", Field(sel, "is_baseline")},
          {"accuracy", {{"passed", Field(Field(sel, "accuracy"), "passed")}, {"outputs", outputs}}},
          {"created_at", Field(record, "created_at")},
          {"tool", Field(record, "tool")},
          {"decision", Str(Field(record, "decision"), "reason")}};
}

Result<json> StoreStatus(const std::string& store_dir) {
  std::error_code ec;
  const ReleaseStore store(std::filesystem::absolute(store_dir, ec).lexically_normal().string());
  SY_ASSIGN_OR_RETURN(const std::vector<std::string> models, store.Models());
  json out = {{"store", store.dir()}, {"models", json::array()}};
  for (const std::string& model : models) {
    SY_ASSIGN_OR_RETURN(const InService cur, store.Current(model));
    SY_ASSIGN_OR_RETURN(const std::vector<VersionEntry> versions, store.Versions(model));
    SY_ASSIGN_OR_RETURN(const std::vector<json> history, store.History(model));
    std::set<int> served;
    for (const json& e : history) served.insert(e.value("version", 0));
    served.insert(cur.version);
    json m = {{"model_sha256", model}, {"history_events", history.size()}};
    json list = json::array();
    for (const VersionEntry& v : versions) {
      const char* state = v.version == cur.version ? "in_service"
                          : !v.complete            ? "incomplete"
                          : served.count(v.version) ? "served"
                                                    : "never_in_service";
      list.push_back({{"version", v.version}, {"state", state},
                      {"promoted_at", Field(v.promotion, "promoted_at")},
                      {"route", Field(v.promotion, "route")},
                      {"engine_file_sha256", Field(v.promotion, "engine_file_sha256")}});
      if (v.version == cur.version) {
        json record;
        auto bytes = ReadFileBytes(v.dir + "/record.json", 256 << 20);
        if (bytes.ok()) record = json::parse(*bytes, nullptr, false);
        if (record.is_discarded()) record = nullptr;
        m["in_service"] = {{"version", cur.version},
                           {"since", cur.since},
                           {"by", cur.action},
                           {"engine", v.dir + "/engine"},
                           {"engine_file_sha256", Field(v.promotion, "engine_file_sha256")},
                           {"record", v.dir + "/record.json"},
                           {"summary", SummarizeRecord(record)},
                           {"scope", DescribeScope(record)},
                           {"compare", Field(v.promotion, "compare")}};
      }
    }
    if (cur.version == 0) m["in_service"] = nullptr;
    json replaced;
    for (const VersionEntry& v : versions) {
      if (cur.replaced != 0 && v.version == cur.replaced) {
        replaced = {{"version", v.version}, {"route", Field(v.promotion, "route")},
                    {"speedup", Field(Field(v.promotion, "summary"), "speedup")},
                    {"engine_file_sha256", Field(v.promotion, "engine_file_sha256")}};
      }
    }
    m["replaced"] = replaced;
    m["versions"] = list;
    out["models"].push_back(std::move(m));
  }
  return out;
}

}  // namespace switchyard::release
