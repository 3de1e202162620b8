// RenderReportHtml: the page. Tables are rendered here (readable without script); charts are
// drawn in the browser by the inlined Vega libraries from the JSON block. Every string taken
// from the record goes through HtmlEscape or JsonForScript.
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <string>

#include "io/npy.h"
#include "report/report.h"
#include "report/report_assets.h"
#include "report/report_page.h"

namespace switchyard::report {
namespace {

using json = nlohmann::json;

std::string E(const std::string& s) { return HtmlEscape(s); }

std::string Fmt(double v, const char* fmt = "%.4g") {
  if (!std::isfinite(v)) return "&ndash;";
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// A JSON value as table-cell text: strings as is, numbers compactly, null as a dash.
std::string Cell(const json& v) {
  if (v.is_null()) return "&ndash;";
  if (v.is_string()) return E(v.get<std::string>());
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_number_float()) return Fmt(v.get<double>(), "%.6g");
  if (v.is_number()) return E(v.dump());
  if (v.is_array()) {
    bool scalars = true;
    for (const json& x : v) scalars = scalars && !x.is_structured();
    if (scalars) {
      std::string s;
      for (const json& x : v) s += (s.empty() ? "" : ", ") + Cell(x);
      return s.empty() ? "&ndash;" : s;
    }
  }
  return "<pre>" + E(v.dump(2, ' ', false, json::error_handler_t::replace)) + "</pre>";
}

const json& Get(const json& j, const char* key) {
  static const json kNull;
  return j.is_object() && j.contains(key) ? j[key] : kNull;
}

// Key/value table of an object; nested objects become nested tables.
std::string KeyValueTable(const json& obj) {
  if (!obj.is_object() || obj.empty()) return "<p class=\"sub\">(not in the record)</p>";
  std::string h = "<table>";
  for (const auto& [k, v] : obj.items()) {
    h += "<tr><th>" + E(k) + "</th><td>";
    h += v.is_object() ? KeyValueTable(v) : Cell(v);
    h += "</td></tr>";
  }
  return h + "</table>";
}

std::string AccuracyCell(const json& acc) {
  if (!acc.is_object() || !acc.contains("outputs")) return "&ndash;";
  std::string h;
  for (const auto& [name, out] : Get(acc, "outputs").items()) {
    const bool ok = out.value("passed", false);
    h += "<div><code>" + E(name) + "</code> " + E(out.value("metric", std::string())) + " " +
         Cell(Get(out, "worst")) + " / " + Cell(Get(out, "threshold")) + " <span class=\"" +
         (ok ? "ok\">pass" : "bad\">fail") + "</span></div>";
  }
  return h;
}

std::string BaselineVsSelected(const json& rec) {
  const json& b = Get(rec, "baseline");
  const json& s = Get(rec, "selected");
  auto row = [&](const char* label, const char* key, const char* fmt) {
    auto v = [&](const json& j) {
      const json& x = Get(j, key);
      return x.is_number() ? Fmt(x.get<double>(), fmt) : Cell(x);
    };
    return "<tr><th>" + std::string(label) + "</th><td class=\"num\">" + v(b) +
           "</td><td class=\"num\">" + (s.is_object() ? v(s) : "&ndash;") + "</td></tr>";
  };
  std::string h = "<table><tr><th></th><th>baseline</th><th>selected</th></tr>";
  auto route = [](const json& j) {
    const std::string r = j.value("route", std::string());
    return r.empty() ? std::string("(default)") : E(r);
  };
  h += "<tr><th>route</th><td><code>" + route(b) + "</code></td><td><code>" +
       (s.is_object() ? route(s) : "(none)") + "</code></td></tr>";
  h += "<tr><th>engine sha256</th><td class=\"mono\">" + Cell(Get(b, "engine_sha256")) +
       "</td><td class=\"mono\">" + Cell(Get(s, "engine_sha256")) + "</td></tr>";
  h += row("p50 (ms)", "p50_ms", "%.4f") + row("p95 (ms)", "p95_ms", "%.4f") +
       row("p99 (ms)", "p99_ms", "%.4f") + row("throughput (/s)", "throughput_per_s", "%.1f") +
       row("peak memory (bytes)", "peak_memory_bytes", "%.0f");
  if (s.is_object()) {
    const json& ci = Get(s, "speedup_ci95");
    const json& sci = Get(s, "search_speedup_ci95");
    h += "<tr><th>speedup [95% CI]</th><td class=\"num\">1</td><td class=\"num\">" +
         Cell(Get(s, "speedup")) + " [" + Cell(ci) + "] confirmed over " +
         Cell(Get(s, "confirming_rounds")) + " rounds; search measured " +
         Cell(Get(s, "search_speedup")) + " [" + Cell(sci) + "]</td></tr>";
  }
  h += "<tr><th>accuracy</th><td>" + AccuracyCell(Get(b, "accuracy")) + "</td><td>" +
       AccuracyCell(Get(s, "accuracy")) + "</td></tr>";
  return h + "</table>";
}

std::string CandidatesTable(const json& rec) {
  std::string h =
      "<table><tr><th>#</th><th>route</th><th>verdict</th><th>speedup [95% CI]</th>"
      "<th>p50 ms (interleaved)</th><th>rounds</th><th>accuracy (worst / threshold)</th>"
      "<th>build / gate / measure s</th><th>engine</th><th>error</th></tr>";
  int i = 0;
  for (const json& c : Get(rec, "candidates")) {
    ++i;
    const std::string status = c.value("status", std::string());
    std::string route = c.value("route", std::string());
    route = route.empty() ? "(default)" : route;
    std::string flags;
    if (c.value("baseline", false)) flags += " baseline";
    if (c.value("reused", false)) flags += " reused";
    if (c.contains("duplicate_of")) flags += " duplicate of " + Cell(c["duplicate_of"]);
    h += "<tr><td class=\"num\">" + std::to_string(i) + "</td><td><code>" + E(route) +
         "</code>" + (flags.empty() ? "" : "<div class=\"sub\">" + flags + "</div>") +
         "</td><td class=\"s-" + E(status) + "\">" + E(status) + "</td><td class=\"num\">" +
         (c.contains("speedup") ? Cell(c["speedup"]) + " [" + Cell(Get(c, "speedup_ci95")) + "]"
                                : "&ndash;") +
         "</td><td class=\"num\">" + Cell(Get(c, "p50_ms")) + "</td><td class=\"num\">" +
         Cell(Get(c, "rounds")) + "</td><td>" + AccuracyCell(Get(c, "accuracy")) +
         "</td><td class=\"num\">" + Fmt(c.value("build_s", NAN), "%.2f") + " / " +
         Fmt(c.value("accuracy_s", NAN), "%.2f") + " / " + Fmt(c.value("measure_s", NAN), "%.2f") +
         "</td><td class=\"mono\">" + E(c.value("engine_sha256", std::string()).substr(0, 12)) +
         "</td><td>" + Cell(Get(c, "error")) + "</td></tr>";
  }
  return h + "</table>";
}

std::string ValidationTable(const json& v) {
  if (!v.is_object()) return "<p class=\"sub\">(no validation in the record)</p>";
  std::string h = "<p>Validated engine: <b>" + Cell(Get(v, "engine")) + "</b>, " +
                  (v.value("passed", false) ? "<span class=\"ok\">passed</span>"
                                            : "<span class=\"bad\">failed</span>") +
                  (v.contains("error") ? " &mdash; " + Cell(v["error"]) : "") + "</p>";
  h += "<table><tr><th>check</th><th>result</th><th>details</th></tr>";
  for (const json& c : Get(v, "checks")) {
    json rest = c;
    for (const char* k : {"name", "passed"}) rest.erase(k);
    h += "<tr><td>" + Cell(Get(c, "name")) + "</td><td class=\"" +
         (c.value("passed", false) ? "ok\">passed" : "bad\">failed") + "</td><td>" +
         KeyValueTable(rest) + "</td></tr>";
  }
  return h + "</table>";
}

std::string Chart(const char* name, const char* title, const std::string& caption,
                  bool wide = false) {
  return std::string(wide ? "<div class=\"card wide\"><h3>" : "<div class=\"card\"><h3>") + title + "</h3><div data-sy-chart=\"" + name +
         "\"></div><p class=\"cap\">" + caption + "</p></div>";
}

// A library inlined into a <script> element: it must not contain "</script" (which would end
// the element) and carries no source-map reference (no external file is ever named).
std::string InlineScript(std::string text) {
  for (size_t p = 0; (p = text.find("</", p)) != std::string::npos; p += 3) {
    std::string next = text.substr(p + 2, 6);
    for (char& ch : next) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (next == "script") text.replace(p, 2, "<\\/");
  }
  for (size_t p; (p = text.find("//# sourceMappingURL=")) != std::string::npos;) {
    const size_t end = text.find('\n', p);
    text.erase(p, end == std::string::npos ? std::string::npos : end - p);
  }
  return text;
}

}  // namespace

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string JsonForScript(const nlohmann::json& value) {
  const std::string dumped = value.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(dumped.size());
  for (size_t i = 0; i < dumped.size(); ++i) {
    const char c = dumped[i];
    // '<', '>' and '&' occur only inside JSON strings, where \u escapes mean the same.
    if (c == '<') out += "\\u003c";
    else if (c == '>') out += "\\u003e";
    else if (c == '&') out += "\\u0026";
    else if (c == '\xe2' && i + 2 < dumped.size() && dumped[i + 1] == '\x80' &&
             (dumped[i + 2] == '\xa8' || dumped[i + 2] == '\xa9')) {
      out += dumped[i + 2] == '\xa8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else out += c;
  }
  return out;
}

Result<std::string> RenderReportHtml(const ReportInputs& in) {
  if (kReportAssetCount == 0)
    return Status::FailedPrecondition(
        "this switchyard was built without the chart libraries (vega, vega-lite, vega-embed in "
        "third_party/node); run scripts/setup.sh, then configure and build again");
  const json& rec = in.record;
  const json& model = Get(rec, "model");
  const json& decision = Get(rec, "decision");
  const json& selected = Get(rec, "selected");
  std::string title = "Switchyard tuning report: " + model.value("path", std::string("model"));

  std::string verdict_class = !selected.is_object()       ? "none"
                              : decision.value("kept_baseline", false) ? "kept"
                                                                       : "";
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                  "<title>" + E(title) + "</title><style>" + kReportCss + "</style>";
  for (int i = 0; i < kReportAssetCount; ++i)
    h += std::string("<script>/* ") + kReportAssets[i].name + " " + kReportAssets[i].version +
         " (" + kReportAssets[i].license + ") */\n" + InlineScript(kReportAssets[i].text) +
         "\n</script>";
  h += "</head><body><main>";
  h += "<h1>" + E(title) + "</h1><p class=\"sub\">record created " + Cell(Get(rec, "created_at")) +
       " by " + Cell(Get(Get(rec, "tool"), "name")) + " " + Cell(Get(Get(rec, "tool"), "version")) +
       " (" + Cell(Get(Get(rec, "tool"), "commit")) + ")</p>";
  h += "<div class=\"verdict " + verdict_class + "\"><b>" +
       (!selected.is_object() ? std::string("No engine selected")
        : decision.value("kept_baseline", false)
            ? "Baseline kept"
            : "Selected <code>" + E(selected.value("route", std::string())) + "</code>: " +
                  Cell(Get(selected, "speedup")) + "&times; [" +
                  Cell(Get(selected, "speedup_ci95")) + "]") +
       "</b><br>" + Cell(Get(decision, "reason")) + "</div>";
  if (Get(decision, "demoted").is_array() && !decision["demoted"].empty()) {
    h += "<p>Demoted after validation:</p><table><tr><th>route</th><th>reason</th></tr>";
    for (const json& d : decision["demoted"])
      h += "<tr><td><code>" + Cell(Get(d, "route")) + "</code></td><td>" + Cell(Get(d, "reason")) +
           "</td></tr>";
    h += "</table>";
  }

  const json& gate = in.data["gate"];
  h += "<h2>Charts</h2><div class=\"grid\">";
  h += Chart("pareto", "Speed against accuracy",
             "Every measured candidate's speedup over the baseline (interleaved measurement, bar = "
             "95% interval) against its worst accuracy error over all outputs and input sets; "
             "dashed red line: the gate (" + E(gate["metric"].get<std::string>()) + " " +
             Fmt(gate["threshold"].get<double>(), "%.3g") + "); diamonds joined in blue: the Pareto "
             "front; black outline: the selected engine. Candidates the gate rejected are not "
             "measured and appear in the strip below at their error; failed ones have no outputs.");
  h += Chart("knobs", "Effect of each knob",
             "Left: the speedup of every measured candidate having that knob value (bar: median). "
             "Right: how many candidates with that value got each verdict. A candidate without the "
             "knob in its route has the knob's base value (search.knobs lists it first).",
             /*wide=*/true);
  h += Chart("latency", "Latency: baseline vs selected",
             "Left: p50/p95/p99 of a solo run of each engine in its own process (record; 20 timed "
             "runs). Right, when present: p50/p95 of the selected route and the baseline measured "
             "interleaved during the search (database). The record stores these percentiles, not "
             "the individual run times, so no histogram is drawn.");
  h += Chart("progress", "Best so far against search time",
             "Best passing speedup after each candidate (the baseline counts as 1). Time axis: "
             "cumulative build + gate + measurement seconds of the candidates (record), and, when "
             "the database is present, seconds since the run began by each result's created_at "
             "(1 s resolution). Grey points: each measured candidate.");
  h += "</div>";

  h += "<h2>Baseline vs selected</h2>" + BaselineVsSelected(rec);
  h += "<h2>Candidates</h2>" + CandidatesTable(rec);
  h += "<h2>Validation</h2>" + ValidationTable(Get(rec, "validation"));
  h += "<h2>Search</h2><div class=\"grid\"><div><h3>Search</h3>" + KeyValueTable(Get(rec, "search")) +
       "</div><div><h3>Counts</h3>" + KeyValueTable(Get(rec, "counts")) + "<h3>Cost (s)</h3>" +
       KeyValueTable(Get(rec, "cost")) + "</div></div>";
  h += "<h2>Model</h2>" + KeyValueTable(model);
  h += "<h2>Evaluation data</h2>" + KeyValueTable(Get(rec, "data"));
  h += "<h2>Target</h2>" + KeyValueTable(Get(rec, "target"));
  h += "<h2>Policies</h2><h3>Accuracy</h3>" + KeyValueTable(Get(rec, "accuracy_policy")) +
       "<h3>Measurement</h3>" + KeyValueTable(Get(rec, "measurement_policy"));
  h += "<h2>Provenance</h2><table><tr><th>command</th><td><code>" + Cell(Get(rec, "command")) +
       "</code></td></tr><tr><th>files</th><td>" + KeyValueTable(Get(rec, "files")) +
       "</td></tr><tr><th>notes (record)</th><td>" + Cell(Get(rec, "notes")) +
       "</td></tr><tr><th>tuning database</th><td><code>" + Cell(in.data["database"]) +
       "</code></td></tr><tr><th>report notes</th><td>" + Cell(in.data["notes"]) +
       "</td></tr><tr><th>chart libraries</th><td>";
  for (int i = 0; i < kReportAssetCount; ++i)
    h += std::string(i ? ", " : "") + kReportAssets[i].name + " " + kReportAssets[i].version;
  h += " (inlined)</td></tr></table>";
  h += "</main><script type=\"application/json\" id=\"sy-data\">" + JsonForScript(in.data) +
       "</script><script>" + kReportJs + "</script></body></html>\n";
  return h;
}

Status WriteReport(const ReportOptions& options, const std::string& out_path) {
  SY_ASSIGN_OR_RETURN(ReportInputs in, LoadReport(options));
  SY_ASSIGN_OR_RETURN(std::string html, RenderReportHtml(in));
  return WriteFileAtomic(out_path, html);
}

}  // namespace switchyard::report
