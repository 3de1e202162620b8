// SearchSpace: built from a RouteSpace, whole or restricted by a sweep expression.
#include <algorithm>
#include <memory>
#include <sstream>

#include "tune/search/common.h"

namespace switchyard {

uint64_t SearchSpace::ProductSize() const {
  uint64_t n = 1;
  for (const auto& dim : dims) n = search::SatMul(n, dim.second.size());
  return n;
}

Result<SearchSpace> SearchSpaceFrom(const RouteSpace& route_space, const std::string& sweep_expr) {
  SearchSpace out;
  for (const Knob& k : route_space.knobs()) out.defaults[k.option] = k.default_value;
  auto shared = std::make_shared<const RouteSpace>(route_space);
  out.compatible = [shared](const Route& r) { return shared->CheckCompatible(r).ok(); };

  std::istringstream tokens(sweep_expr);
  std::string token;
  bool any = false;
  while (tokens >> token) {
    any = true;
    // RouteSpace::Sweep is the one parser of sweep syntax and values: a single token
    // expands to its own values, each validated (errors name the token and knob).
    int skipped = 0;
    Result<std::vector<Route>> expanded = route_space.Sweep(token, &skipped);
    if (!expanded.ok()) return expanded.status().WithContext("sweep '" + sweep_expr + "'");
    const size_t eq = token.find('=');
    const std::string key = token.substr(0, eq);
    std::string body = token.substr(eq + 1);
    if (!body.empty() && body.front() == '[') body = body.substr(1, body.size() - 2);
    std::vector<std::string> values;
    for (size_t start = 0;;) {
      const size_t bar = body.find('|', start);
      values.push_back(body.substr(start, bar == std::string::npos ? bar : bar - start));
      if (bar == std::string::npos) break;
      start = bar + 1;
    }
    if (out.base.values().count(key)) {
      return Status::Invalid("sweep '" + sweep_expr + "' gives knob '" + key + "' twice");
    }
    for (const auto& dim : out.dims) {
      if (dim.first == key) {
        return Status::Invalid("sweep '" + sweep_expr + "' gives knob '" + key + "' twice");
      }
    }
    const Knob* knob = route_space.Find(key);
    if (values.size() == 1) {  // pinned: part of the base, not searched
      if (!knob || values[0] != knob->default_value) out.base.Set(key, values[0]);
      continue;
    }
    // Scoped keys take one value only, so `knob` is set here. The base's value goes
    // first: the default when listed, else the first listed value.
    auto def = std::find(values.begin(), values.end(), knob->default_value);
    if (def != values.end()) {
      std::rotate(values.begin(), def, def + 1);
    } else {
      out.base.Set(key, values[0]);
    }
    out.dims.emplace_back(key, std::move(values));
  }
  if (!any) {
    for (const Knob& k : route_space.knobs()) {
      if (k.allowed_values.size() < 2) continue;
      std::vector<std::string> values = {k.default_value};
      for (const std::string& v : k.allowed_values) {
        if (v != k.default_value) values.push_back(v);
      }
      std::stable_sort(values.begin() + 1, values.end(), [&](const std::string& a, const std::string& b) {
        return ValuePriority(k.option, a) < ValuePriority(k.option, b);
      });
      out.dims.emplace_back(k.option, std::move(values));
    }
    // Knobs that usually move latency most come first, so that a search stopped by its
    // budget has tried them (a 60 s tune of ResNet-50 b32 on an H200 ran out of budget in
    // the alphabetical order before reaching precision, the knob worth 2x there).
    std::stable_sort(out.dims.begin(), out.dims.end(), [](const auto& a, const auto& b) {
      return KnobPriority(a.first) < KnobPriority(b.first);
    });
  }
  // An impossible base is skipped by every strategy, and fine while other routes of the
  // space remain (e.g. "precision=[fp32|bf16] precision@head*=fp32" only works with
  // bf16); with nothing to search it would leave nothing at all.
  if (Status s = route_space.CheckCompatible(out.base); !s.ok() && out.dims.empty()) {
    return s.WithContext("sweep '" + sweep_expr + "' leaves only one route, and it is impossible");
  }
  return out;
}

int ValuePriority(const std::string& knob, const std::string& value) {
  // CPU convolutions: Winograd first (ResNet-50 1.13-1.15x and DBNet 1.3x its default on
  // the 2-core Zen 5; a 60 s tune of DBNet evaluated 4-6 routes and, in the listed order,
  // never reached it); onednn is auto's own choice under another name, so last.
  if (knob == "kernel.conv") {
    static const char* const kConv[] = {"winograd", "direct", "native", "im2col_gemm"};
    for (size_t i = 0; i < std::size(kConv); ++i) {
      if (value == kConv[i]) return static_cast<int>(i);
    }
    return value == "onednn" ? 100 : 50;
  }
  return 0;  // the allowed order
}

int KnobPriority(const std::string& knob) {
  static const char* const kOrder[] = {"precision", "layout.activations", "kernel.conv",
                                       "kernel.gemm", "cuda.graphs", "threads", "quant.weights"};
  for (size_t i = 0; i < std::size(kOrder); ++i) {
    if (knob == kOrder[i]) return static_cast<int>(i);
  }
  if (knob.rfind("fuse.", 0) == 0) return 100;
  return 200;  // memory.plan, test knobs
}

}  // namespace switchyard
