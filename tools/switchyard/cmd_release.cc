// `switchyard promote|rollback|status|audit`: the release store (docs/release-store.md).
// Exit codes: 0 done, 3 refused by policy (the reason on stderr), 1 errors.
#include <iomanip>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "release/audit.h"
#include "release/promote.h"

namespace switchyard::cli {
namespace {

using json = nlohmann::json;
constexpr int kRefused = 3;

struct ReleaseArgs {
  std::string tune_dir, store, compare, model, log;
  int to = 0;
  bool require_compare = false;
  bool json = false;
};

int Report(const Result<release::ReleaseOutcome>& r, const ReleaseArgs& a, const char* verb) {
  if (!r.ok()) return ReportError(r.status());
  const release::ReleaseOutcome& o = *r;
  if (a.json) std::cout << o.ToJson().dump() << "\n";
  if (!o.done) {
    std::cerr << "refused: " << o.reason << "\n";
    return kRefused;
  }
  if (!a.json) std::cout << verb << ": " << o.reason << " (model " << o.model_sha256 << ")\n";
  if (!o.audit_error.empty()) {
    std::cerr << "error: " << verb << " done, but its audit line was not written: " << o.audit_error
              << "\n";
    return 1;
  }
  return 0;
}

std::string Num(const json& j, int precision = 3) {
  if (!j.is_number()) return "-";
  std::ostringstream s;
  s << std::setprecision(precision) << j.get<double>();
  return s.str();
}

std::string Text(const json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); }

std::string Join(const json& arr, const std::string& sep = ", ") {
  std::string out;
  if (!arr.is_array()) return Text(arr);
  for (const json& v : arr) out += (out.empty() ? "" : sep) + Text(v);
  return out;
}

void PrintModel(const json& m) {
  std::cout << "model " << m["model_sha256"].get<std::string>() << "\n";
  const json& in = m["in_service"];
  if (in.is_null()) {
    std::cout << "  nothing in service\n";
  } else {
    const json& s = in["summary"];
    std::cout << "  in service: version " << in["version"] << " since " << Text(in["since"]) << " (by "
              << Text(in["by"]) << "), route '" << Text(s["route"]) << "'\n";
    std::cout << "  speedup " << Num(s["speedup"]) << "x";
    if (s["speedup_ci95"].is_array() && s["speedup_ci95"].size() == 2) {
      std::cout << " [" << Num(s["speedup_ci95"][0]) << ", " << Num(s["speedup_ci95"][1]) << "]";
    }
    std::cout << " over the baseline, p50 " << Num(s["p50_ms"]) << " ms (baseline "
              << Num(s["baseline_p50_ms"]) << " ms); accuracy "
              << (s["accuracy"]["passed"] == true ? "passed" : "NOT passed");
    for (const auto& [name, o] : s["accuracy"]["outputs"].items()) {
      std::cout << "; " << name << " " << Text(o["metric"]) << " " << Num(o["worst"]) << " <= "
                << Num(o["threshold"]);
    }
    std::cout << "\n  engine " << Text(in["engine"]) << "\n  record " << Text(in["record"]) << "\n";
    const json& c = in["compare"];
    if (c.is_object()) std::cout << "  compare verdict " << Text(c["verdict"]) << " (" << Text(c["file"]) << ")\n";
    const json& sc = in["scope"];
    std::cout << "  scope (" << (sc.value("derived", true) ? "derived from the record" : "from the record")
              << "), covered:";
    const json& cov = sc.contains("covered") ? sc["covered"] : json::object();
    for (const auto& [k, v] : cov.items()) {
      std::cout << "\n    " << k << ": ";
      if (k == "input_sets" && v.is_array()) {
        std::string sets;
        for (const json& s : v) sets += (sets.empty() ? "" : ", ") + Text(s["name"]) + " " + s["shapes"].dump();
        std::cout << sets;
      } else {
        std::cout << (v.is_array() ? Join(v) : Text(v));
      }
    }
    std::cout << "\n  not covered: " << Join(sc.value("not_covered", json::array()), "; ") << "\n";
  }
  const json& rep = m["replaced"];
  if (rep.is_object()) {
    std::cout << "  replaced: version " << rep["version"] << " (route '" << Text(rep["route"])
              << "', speedup " << Num(rep["speedup"]) << "x)\n";
  } else {
    std::cout << "  replaced: none\n";
  }
  std::cout << "  versions:";
  for (const json& v : m["versions"]) std::cout << " " << v["version"] << " (" << Text(v["state"]) << ")";
  std::cout << "\n  history events: " << m["history_events"] << "\n";
}

int Status_(const ReleaseArgs& a) {
  auto st = release::StoreStatus(a.store);
  if (!st.ok()) return ReportError(st.status());
  if (a.json) {
    std::cout << st->dump() << "\n";
    return 0;
  }
  std::cout << "store " << Text((*st)["store"]) << "\n";
  if ((*st)["models"].empty()) std::cout << "no models\n";
  for (const json& m : (*st)["models"]) PrintModel(m);
  return 0;
}

int Audit(const ReleaseArgs& a) {
  if (a.store.empty() == a.log.empty()) {
    return ReportError(Status::Invalid("audit: give exactly one of --store DIR and --log FILE"));
  }
  const std::string path = a.log.empty() ? a.store + "/audit.jsonl" : a.log;
  auto log = release::ReadAudit(path);
  if (!log.ok()) return ReportError(log.status());
  for (const auto& e : log->entries) {
    if (a.json) {
      std::cout << e.value.dump() << "\n";
      continue;
    }
    const json& v = e.value;
    const std::string model = v.value("model_sha256", std::string("-"));
    std::cout << std::left << std::setw(21) << v.value("when", "") << " " << std::setw(20)
              << (v.value("who", std::string("?")) + "@" + v.value("host", std::string("?"))) << " "
              << std::setw(9) << v.value("action", "") << " " << std::setw(12)
              << v.value("outcome", std::string("-")) << " " << std::setw(12) << model.substr(0, 12)
              << " " << v.value("reason", std::string()) << "\n";
  }
  if (!a.json) std::cout << log->entries.size() << " entries in " << path << "\n";
  for (const std::string& err : log->errors) std::cerr << "error: malformed audit line: " << err << "\n";
  return log->errors.empty() ? 0 : 1;
}

}  // namespace

void AddReleaseCommands(CLI::App& app, int* exit_code, const std::string& command_line) {
  auto args = std::make_shared<ReleaseArgs>();

  auto* promote = app.add_subcommand(
      "promote", "Put a tune folder's selected engine in service in a release store, if its "
                 "record passed the gate and validation (exit 3 when refused)");
  promote->add_option("TUNE_DIR", args->tune_dir, "output folder of `switchyard tune`")->required();
  promote->add_option("--store", args->store, "release store folder (created when missing)")->required();
  promote->add_option("--compare", args->compare,
                      "output of `switchyard compare IN_SERVICE NEW --json`; must say promote");
  promote->add_flag("--require-compare", args->require_compare,
                    "refuse unless --compare is given and says promote");
  promote->add_flag("--json", args->json, "print the outcome as one JSON object");
  promote->callback([=] {
    release::PromoteRequest req;
    req.tune_dir = args->tune_dir;
    req.compare_path = args->compare;
    req.require_compare = args->require_compare;
    req.command_line = command_line;
    *exit_code = Report(release::Promote(args->store, req), *args, "promoted");
  });

  auto* rollback = app.add_subcommand(
      "rollback", "Put the previous (or a named) version back in service; nothing is deleted");
  rollback->add_option("--store", args->store, "release store folder")->required();
  rollback->add_option("--model", args->model, "model sha256 (default: the store's only model)");
  rollback->add_option("--to", args->to, "version to put in service (default: the previous one)")
      ->check(CLI::PositiveNumber);
  rollback->add_flag("--json", args->json, "print the outcome as one JSON object");
  rollback->callback([=] {
    release::RollbackRequest req;
    req.model_sha256 = args->model;
    req.to_version = args->to;
    req.command_line = command_line;
    *exit_code = Report(release::Rollback(args->store, req), *args, "rolled back");
  });

  auto* status = app.add_subcommand(
      "status", "Per model: the version in service, since when, its record, scope and what it replaced");
  status->add_option("--store", args->store, "release store folder")->required();
  status->add_flag("--json", args->json, "one JSON object");
  status->callback([=] { *exit_code = Status_(*args); });

  auto* audit = app.add_subcommand("audit", "Print an audit log (a store's or any audit.jsonl)");
  audit->add_option("--store", args->store, "release store folder (reads DIR/audit.jsonl)");
  audit->add_option("--log", args->log, "an audit log file, e.g. a tune folder's audit.jsonl");
  audit->add_flag("--json", args->json, "the entries as JSON lines");
  audit->callback([=] { *exit_code = Audit(*args); });
}

}  // namespace switchyard::cli
