// LoadReport: reads record.json and the tuning database and derives what the charts draw.
// Everything here is arithmetic on stored numbers; nothing is re-measured.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "io/npy.h"
#include "report/report.h"
#include "tune/database.h"

namespace switchyard::report {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

double Num(const json& j, const char* key, double fallback = std::nan("")) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}
std::string Str(const json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}
json NumOrNull(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

// Canonical route "a=x b=y" -> {a: x, b: y} (scoped overrides keep their '@' key).
std::map<std::string, std::string> ParseRoute(const std::string& route) {
  std::map<std::string, std::string> out;
  std::istringstream in(route);
  std::string token;
  while (in >> token) {
    const size_t eq = token.find('=');
    if (eq != std::string::npos) out[token.substr(0, eq)] = token.substr(eq + 1);
  }
  return out;
}

// The worst accuracy error of one accuracy object over its outputs: the metric value, or
// value/threshold when `ratio`. nonfinite: some output's error was null (NaN/Inf).
struct Error {
  bool present = false, nonfinite = false;
  double value = 0;
};
Error WorstError(const json& accuracy, bool ratio) {
  Error e;
  if (!accuracy.is_object() || !accuracy.contains("outputs") || !accuracy["outputs"].is_object())
    return e;
  for (const auto& [name, out] : accuracy["outputs"].items()) {
    if (!out.is_object() || !out.contains("worst")) continue;
    e.present = true;
    if (!out["worst"].is_number()) {
      e.nonfinite = true;
      continue;
    }
    double v = out["worst"].get<double>();
    if (ratio) {
      const double t = Num(out, "threshold", 0);
      v = t > 0 ? v / t : (v > 0 ? std::numeric_limits<double>::infinity() : 0);
      if (!std::isfinite(v)) {
        e.nonfinite = true;
        continue;
      }
    }
    e.value = std::max(e.value, v);
  }
  return e;
}

// One (metric, threshold) for every output of every candidate -> the chart's x axis is the
// metric itself with the threshold line; otherwise error/threshold with the line at 1.
json GateAxis(const json& record) {
  std::set<std::pair<std::string, double>> seen;
  auto visit = [&](const json& acc) {
    if (!acc.is_object() || !acc.contains("outputs") || !acc["outputs"].is_object()) return;
    for (const auto& [name, out] : acc["outputs"].items())
      if (out.is_object()) seen.insert({Str(out, "metric"), Num(out, "threshold", 0)});
  };
  if (record.contains("baseline")) visit(record["baseline"].value("accuracy", json()));
  if (record.contains("candidates") && record["candidates"].is_array())
    for (const auto& c : record["candidates"]) visit(c.value("accuracy", json()));
  if (seen.size() == 1 && seen.begin()->second > 0)
    return {{"mode", "value"}, {"metric", seen.begin()->first},
            {"threshold", seen.begin()->second},
            {"title", "worst accuracy error (" + seen.begin()->first + ", log scale)"}};
  return {{"mode", "ratio"}, {"metric", "error / threshold"}, {"threshold", 1.0},
          {"title", "worst accuracy error / its threshold (log scale)"}};
}

// Database rows of this tuning run, by route (the record's key parts; the record's run first).
std::map<std::string, CandidateResult> DatabaseRows(TuningDatabase& db, const json& record,
                                                    json* notes) {
  std::map<std::string, CandidateResult> rows;
  CandidateFilter filter;
  filter.model_sha256 = Str(record.value("model", json()), "sha256");
  auto list = db.ListCandidates(filter);
  if (!list.ok()) {
    notes->push_back("database rows could not be read: " + list.status().ToString());
    return rows;
  }
  const std::string profile = Str(record.value("data", json()), "input_profile");
  const std::string target = Str(record.value("target", json()), "fingerprint");
  const double run_id = Num(record.value("search", json()), "run_id", 0);
  for (const CandidateResult& c : *list) {
    if (!profile.empty() && c.key.input_profile != profile) continue;
    if (!target.empty() && c.key.target_fingerprint != target) continue;
    auto it = rows.find(c.route);
    // Prefer the record's own run, then the newest row.
    if (it == rows.end() || c.run_id == run_id ||
        (it->second.run_id != run_id && c.id > it->second.id))
      rows[c.route] = c;
  }
  return rows;
}

}  // namespace

Result<ReportInputs> LoadReport(const ReportOptions& options) {
  const fs::path dir(options.dir);
  const fs::path record_path = dir / "record.json";
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return Status::NotFound("tune output folder " + options.dir + " does not exist");
  if (!fs::is_regular_file(record_path, ec))
    return Status::NotFound(record_path.string() +
                            " not found: DIR must be a folder written by `switchyard tune`");
  SY_ASSIGN_OR_RETURN(std::string text, ReadFileBytes(record_path.string(), int64_t{1} << 30));
  ReportInputs in;
  in.record = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (in.record.is_discarded() || !in.record.is_object())
    return Status::Invalid(record_path.string() + " is not a JSON object");
  if (Str(in.record, "format") != "switchyard.record")
    return Status::Invalid(record_path.string() +
                           " is not a switchyard release record (format != switchyard.record)");
  const json& record = in.record;
  json notes = json::array();

  // The database: explicit, DIR/tuning.db, or where the tuner wrote it.
  std::string db_path = options.db_path;
  if (db_path.empty()) {
    const std::string recorded = Str(record.value("search", json()), "database");
    if (fs::is_regular_file(dir / "tuning.db", ec)) db_path = (dir / "tuning.db").string();
    else if (!recorded.empty() && fs::is_regular_file(recorded, ec)) db_path = recorded;
  } else if (!fs::is_regular_file(db_path, ec)) {
    return Status::NotFound("tuning database " + db_path + " does not exist");
  }
  std::map<std::string, CandidateResult> db_rows;
  int64_t run_started = 0;
  if (!db_path.empty()) {
    OpenOptions open;
    open.create_if_missing = false;
    auto db = TuningDatabase::Open(db_path, open);
    if (!db.ok()) {
      if (!options.db_path.empty()) return db.status().WithContext("report");
      notes.push_back("tuning database not used: " + db.status().ToString());
      db_path.clear();
    } else {
      db_rows = DatabaseRows(**db, record, &notes);
      auto runs = (*db)->ListRuns();
      const double run_id = Num(record.value("search", json()), "run_id", 0);
      if (runs.ok())
        for (const RunRecord& r : *runs)
          if (r.id == run_id) run_started = r.started_at;
    }
  } else {
    notes.push_back("no tuning database found: the time axis uses the record's per-candidate cost "
                    "only and the interleaved p95 values are not shown");
  }

  const json gate = GateAxis(record);
  const bool ratio = gate["mode"] == "ratio";
  const json knobs = record.contains("search") && record["search"].contains("knobs") &&
                             record["search"]["knobs"].is_object()
                         ? record["search"]["knobs"]
                         : json::object();
  const json* selected = record.contains("selected") && record["selected"].is_object()
                             ? &record["selected"]
                             : nullptr;
  const std::string selected_route = selected ? Str(*selected, "route") : "";

  // One row per candidate, plus the baseline when the strategy never proposed its route.
  json cands = json::array();
  const json empty_list = json::array();
  const json& rec_cands = record.contains("candidates") && record["candidates"].is_array()
                              ? record["candidates"]
                              : empty_list;
  bool baseline_seen = false;
  double cost_t = 0, best = 1.0;
  json progress = json::array();
  progress.push_back({{"t", 0.0}, {"best", 1.0}, {"clock", "candidate cost (record)"},
                      {"route", "(baseline)"}});
  for (size_t i = 0; i < rec_cands.size(); ++i) {
    const json& c = rec_cands[i];
    const std::string route = Str(c, "route");
    const bool is_base = c.value("baseline", false);
    baseline_seen = baseline_seen || is_base;
    json row;
    row["index"] = i + 1;
    row["route"] = route;
    row["label"] = route.empty() ? "(default)" : route;
    row["status"] = Str(c, "status");
    row["baseline"] = is_base;
    row["selected"] = selected != nullptr && route == selected_route;
    row["reused"] = c.value("reused", false);
    row["message"] = Str(c, "error");
    const double speedup = Num(c, "speedup");
    row["speedup"] = NumOrNull(speedup);
    const json ci = c.value("speedup_ci95", json());
    row["ci_low"] = ci.is_array() && ci.size() == 2 && ci[0].is_number() ? ci[0] : json(nullptr);
    row["ci_high"] = ci.is_array() && ci.size() == 2 && ci[1].is_number() ? ci[1] : json(nullptr);
    row["p50_ms"] = NumOrNull(Num(c, "p50_ms"));
    const Error err = WorstError(c.value("accuracy", json()), ratio);
    row["has_error"] = err.present;
    row["nonfinite"] = err.nonfinite;
    row["error"] = err.present && !err.nonfinite ? json(err.value) : json(nullptr);
    json kv = json::object();
    const auto parsed = ParseRoute(route);
    for (const auto& [knob, values] : knobs.items()) {
      auto it = parsed.find(knob);
      kv[knob] = it != parsed.end() ? it->second
                 : values.is_array() && !values.empty() && values[0].is_string()
                     ? values[0].get<std::string>()
                     : std::string("(default)");
    }
    row["knobs"] = kv;
    // Time axes: cumulative candidate cost (record) and wall clock since the run began (db).
    cost_t += Num(c, "build_s", 0) + Num(c, "accuracy_s", 0) + Num(c, "measure_s", 0);
    row["t_cost_s"] = cost_t;
    auto db = db_rows.find(route);
    row["t_wall_s"] = nullptr;
    if (db != db_rows.end()) {
      const json& m = db->second.measurement;
      row["p95_ms"] = NumOrNull(Num(m, "p95_ms"));
      row["baseline_p50_ms"] = NumOrNull(Num(m, "baseline_p50_ms"));
      row["baseline_p95_ms"] = NumOrNull(Num(m, "baseline_p95_ms"));
      if (run_started > 0 && db->second.created_at >= run_started)
        row["t_wall_s"] = static_cast<double>(db->second.created_at - run_started);
    }
    if (row["status"] == "passed" && std::isfinite(speedup) && speedup > best) best = speedup;
    progress.push_back({{"t", cost_t}, {"best", best}, {"clock", "candidate cost (record)"},
                        {"route", row["label"]}});
    cands.push_back(std::move(row));
  }
  if (!baseline_seen && record.contains("baseline") && record["baseline"].is_object()) {
    const json& b = record["baseline"];
    const Error err = WorstError(b.value("accuracy", json()), ratio);
    json row = {{"index", 0}, {"route", Str(b, "route")}, {"label", "(baseline)"},
                {"status", b.value("passed_gate", true) ? "passed" : "rejected_accuracy"},
                {"baseline", true}, {"selected", selected && selected->value("is_baseline", false)},
                {"reused", false}, {"message", Str(b, "gate_failure")}, {"speedup", 1.0},
                {"ci_low", 1.0}, {"ci_high", 1.0}, {"p50_ms", NumOrNull(Num(b, "p50_ms"))},
                {"has_error", err.present}, {"nonfinite", err.nonfinite},
                {"error", err.present && !err.nonfinite ? json(err.value) : json(nullptr)},
                {"knobs", json::object()}, {"t_cost_s", 0.0}, {"t_wall_s", nullptr}};
    for (const auto& [knob, values] : knobs.items())
      row["knobs"][knob] = values.is_array() && !values.empty() ? values[0] : json("(default)");
    cands.insert(cands.begin(), std::move(row));
  }

  // Log-scale placement: an error of exactly 0 is drawn at a floor below the smallest
  // positive one, a non-finite one beyond the largest; the tooltip says which.
  double lo = std::numeric_limits<double>::infinity(), hi = gate["threshold"].get<double>();
  for (const json& r : cands)
    if (r["error"].is_number() && r["error"].get<double>() > 0) {
      lo = std::min(lo, r["error"].get<double>());
      hi = std::max(hi, r["error"].get<double>());
    }
  if (!std::isfinite(lo)) lo = gate["threshold"].get<double>() * 1e-3;
  const double floor_x = lo / 10, ceil_x = hi * 10;
  for (json& r : cands) {
    if (r["error"].is_number())
      r["x"] = r["error"].get<double>() > 0 ? r["error"].get<double>() : floor_x;
    else if (r["nonfinite"].get<bool>()) r["x"] = ceil_x;
    else r["x"] = nullptr;  // no outputs (build failed, crashed, timeout, duplicate)
    r["x_note"] = r["error"].is_number() && r["error"].get<double>() == 0 ? "0 (drawn at floor)"
                  : r["nonfinite"].get<bool>() ? "NaN/Inf (drawn at right edge)" : "";
  }
  // Pareto front over the measured candidates with a finite error: no other point is at least
  // as fast and at least as accurate while strictly better in one of the two.
  for (json& p : cands) {
    p["pareto"] = false;
    if (!p["speedup"].is_number() || !p["error"].is_number()) continue;
    const double ps = p["speedup"], pe = p["error"];
    bool dominated = false;
    for (const json& q : cands) {
      if (&q == &p || !q["speedup"].is_number() || !q["error"].is_number()) continue;
      const double qs = q["speedup"], qe = q["error"];
      if (qs >= ps && qe <= pe && (qs > ps || qe < pe)) dominated = true;
    }
    p["pareto"] = !dominated;
  }

  // The same best-so-far on the database's wall clock (1 s resolution).
  best = 1.0;
  bool any_wall = false;
  for (const json& r : cands) any_wall = any_wall || r["t_wall_s"].is_number();
  if (any_wall) {
    progress.push_back({{"t", 0.0}, {"best", 1.0}, {"clock", "wall clock (database created_at)"},
                        {"route", "(baseline)"}});
    for (const json& r : cands) {
      if (!r["t_wall_s"].is_number()) continue;
      if (r["status"] == "passed" && r["speedup"].is_number() && r["speedup"].get<double>() > best)
        best = r["speedup"];
      progress.push_back({{"t", r["t_wall_s"]}, {"best", best},
                          {"clock", "wall clock (database created_at)"}, {"route", r["label"]}});
    }
  }

  // Latency percentiles: the solo runs in the record, and the interleaved search measurement
  // of the selected route from the database.
  json latency = json::array();
  auto add_solo = [&](const char* engine, const json& j) {
    for (const char* p : {"p50", "p95", "p99"}) {
      const double v = Num(j, (std::string(p) + "_ms").c_str());
      if (std::isfinite(v))
        latency.push_back({{"engine", engine}, {"percentile", p}, {"ms", v},
                           {"source", "solo run (record)"}});
    }
  };
  if (record.contains("baseline")) add_solo("baseline", record["baseline"]);
  if (selected) add_solo("selected", *selected);
  for (const json& r : cands)
    if (r["selected"].get<bool>() && !r["baseline"].get<bool>() && r.contains("p95_ms")) {
      const std::pair<const char*, const char*> fields[] = {{"baseline_p50_ms", "baseline"},
                                                            {"p50_ms", "selected"}};
      for (const auto& [key, engine] : fields)
        if (r[key].is_number())
          latency.push_back({{"engine", engine}, {"percentile", "p50"}, {"ms", r[key]},
                             {"source", "interleaved in the search (database)"}});
      const std::pair<const char*, const char*> fields95[] = {{"baseline_p95_ms", "baseline"},
                                                              {"p95_ms", "selected"}};
      for (const auto& [key, engine] : fields95)
        if (r[key].is_number())
          latency.push_back({{"engine", engine}, {"percentile", "p95"}, {"ms", r[key]},
                             {"source", "interleaved in the search (database)"}});
    }

  // Knob effect rows: one per (knob with more than one searched value, candidate).
  json knob_rows = json::array();
  for (const auto& [knob, values] : knobs.items()) {
    if (!values.is_array() || values.size() < 2) continue;
    for (const json& r : cands)
      knob_rows.push_back({{"knob", knob}, {"value", r["knobs"].value(knob, json("?"))},
                           {"status", r["status"]}, {"speedup", r["speedup"]},
                           {"route", r["label"]}});
  }

  in.data = {{"gate", gate},          {"candidates", cands}, {"progress", progress},
             {"latency", latency},    {"knob_rows", knob_rows},
             {"database", db_path},   {"notes", notes}};
  return in;
}

}  // namespace switchyard::report
