// The JavaScript libraries `switchyard report` inlines into every page (Vega, Vega-Lite,
// Vega-Embed), compiled into the binary from third_party/node by
// src/report/generate_assets.cmake. Read-only data; safe from any thread.
#pragma once

#include <cstddef>

namespace switchyard::report {

struct ReportAsset {
  const char* name;     // npm package, e.g. "vega-lite"
  const char* version;  // from its package.json
  const char* license;  // SPDX id from its package.json
  const char* text;     // the minified UMD build
  size_t size;
};

// In load order (vega, vega-lite, vega-embed). kReportAssetCount is 0 when the libraries
// were not installed (scripts/setup.sh) when this binary was built.
extern const ReportAsset kReportAssets[];
extern const int kReportAssetCount;

}  // namespace switchyard::report
