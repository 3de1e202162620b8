// The page's fixed parts: stylesheet and the script that turns the embedded chart data into
// four Vega-Lite charts (report_page.cc). Internal to src/report/.
#pragma once

namespace switchyard::report {

extern const char kReportCss[];
// Reads <script id="sy-data" type="application/json">, renders every [data-sy-chart] element
// with vegaEmbed (SVG), then marks it data-sy-rendered/data-sy-marks (or data-sy-error), and
// sets <body data-sy-done data-sy-errors> once all have settled: the test reads these.
extern const char kReportJs[];

}  // namespace switchyard::report
