// `switchyard report`: one self-contained HTML page from a tune output folder (record.json,
// and tuning.db when present) — charts drawn in the browser by the inlined Vega-Lite, tables
// rendered here. What it shows and where each number comes from: docs/report.md.
// Functions are pure apart from the file reads/writes they name; safe from any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "switchyard/status.h"

namespace switchyard::report {

struct ReportOptions {
  std::string dir;  // tune output folder; DIR/record.json is required
  // Tuning database. "" = DIR/tuning.db, else the record's search.database, when one exists
  // (without one the charts use the record alone and the page says so). A path given here
  // must exist.
  std::string db_path;
};

// What the page's charts draw, derived from the record and the database (the schema is the
// page script's contract; docs/report.md lists the fields). `record` must be an object.
struct ReportInputs {
  nlohmann::json record;
  nlohmann::json data;  // chart data: candidates, gate, latency, progress, knob rows, notes
};

// Reads DIR/record.json (+ the database) and derives the chart data. Errors name the file.
Result<ReportInputs> LoadReport(const ReportOptions& options);

// The whole page. Fails only when the chart libraries were not embedded at build time.
Result<std::string> RenderReportHtml(const ReportInputs& inputs);

// LoadReport + RenderReportHtml + atomic write of `out_path`; nothing is written on error.
Status WriteReport(const ReportOptions& options, const std::string& out_path);

// Escaping used for every string taken from the record (exposed for tests).
std::string HtmlEscape(std::string_view text);
// JSON for a <script type="application/json"> block: '<', '>', '&', U+2028/2029 as \u
// escapes, so no string inside can end the script element; invalid UTF-8 is replaced.
std::string JsonForScript(const nlohmann::json& value);

}  // namespace switchyard::report
