#include "tune/gate.h"

#include <cmath>
#include <limits>
#include <sstream>

namespace switchyard {

double DefaultThreshold(Metric m) {
  switch (m) {
    case Metric::kL2: return 1e-3;
    case Metric::kL1: return 1e-3;
    case Metric::kLinf: return 1e-2;
    case Metric::kCos: return 1e-4;
    case Metric::kL0: return 0.01;
    case Metric::kTopk: return 0;
  }
  return 1e-3;
}

const OutputPolicy& AccuracyPolicy::For(const std::string& output) const {
  auto it = per_output.find(output);
  return it == per_output.end() ? all : it->second;
}

namespace {

nlohmann::ordered_json PolicyJson(const OutputPolicy& p) {
  nlohmann::ordered_json j = {{"metric", MetricName(p.spec.metric)}, {"threshold", p.threshold}};
  if (p.spec.metric == Metric::kL0) {
    j["atol"] = p.spec.atol;
    j["rtol"] = p.spec.rtol;
  }
  if (p.spec.metric == Metric::kTopk) j["k"] = p.spec.topk;
  return j;
}

Result<OutputPolicy> PolicyFromJson(const nlohmann::json& j, OutputPolicy p) {
  try {
    if (j.contains("metric")) {
      SY_ASSIGN_OR_RETURN(p.spec.metric, ParseMetric(j.at("metric").get<std::string>()));
    }
    if (j.contains("threshold")) p.threshold = j.at("threshold").get<double>();
    if (j.contains("atol")) p.spec.atol = j.at("atol").get<double>();
    if (j.contains("rtol")) p.spec.rtol = j.at("rtol").get<double>();
    if (j.contains("k")) p.spec.topk = j.at("k").get<int>();
  } catch (const nlohmann::json::exception& e) {
    return Status::Invalid(std::string("accuracy policy: ") + e.what());
  }
  return p;
}

std::string Num(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

}  // namespace

nlohmann::ordered_json AccuracyPolicy::ToJson() const {
  nlohmann::ordered_json j = PolicyJson(all);
  j["non_finite"] = "NaN or Inf where the reference is finite always fails";
  nlohmann::ordered_json po = nlohmann::ordered_json::object();
  for (const auto& [name, p] : per_output) po[name] = PolicyJson(p);
  j["per_output"] = po;
  return j;
}

Result<AccuracyPolicy> AccuracyPolicy::FromJson(const nlohmann::json& j) {
  AccuracyPolicy p;
  SY_ASSIGN_OR_RETURN(p.all, PolicyFromJson(j, p.all));
  if (j.contains("per_output")) {
    for (const auto& [name, v] : j.at("per_output").items()) {
      SY_ASSIGN_OR_RETURN(p.per_output[name], PolicyFromJson(v, p.all));
    }
  }
  return p;
}

Status AccuracyPolicy::AddOverride(const std::string& text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    return Status::Invalid("--per-output '" + text + "': expected NAME:metric=l2,threshold=1e-3");
  }
  const std::string name = text.substr(0, colon);
  OutputPolicy p = all;
  bool threshold_given = false, metric_given = false;
  std::stringstream fields(text.substr(colon + 1));
  std::string field;
  while (std::getline(fields, field, ',')) {
    const size_t eq = field.find('=');
    if (eq == std::string::npos) {
      return Status::Invalid("--per-output '" + text + "': field '" + field + "' is not key=value");
    }
    const std::string key = field.substr(0, eq), value = field.substr(eq + 1);
    if (key == "metric") {
      auto m = ParseMetric(value);
      if (!m.ok()) return m.status().WithContext("--per-output '" + text + "'");
      p.spec.metric = *m;
      metric_given = true;
      continue;
    }
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || !std::isfinite(v) || v < 0) {
      return Status::Invalid("--per-output '" + text + "': " + key + "='" + value +
                             "' is not a non-negative number");
    }
    if (key == "threshold") {
      p.threshold = v;
      threshold_given = true;
    } else if (key == "atol") {
      p.spec.atol = v;
    } else if (key == "rtol") {
      p.spec.rtol = v;
    } else if (key == "k" && v >= 1 && v == std::floor(v)) {
      p.spec.topk = static_cast<int>(v);
    } else {
      return Status::Invalid("--per-output '" + text + "': unknown field '" + key +
                             "' (allowed: metric, threshold, atol, rtol, k >= 1)");
    }
  }
  if (metric_given && !threshold_given) p.threshold = DefaultThreshold(p.spec.metric);
  per_output[name] = p;
  return Status::Ok();
}

Result<AccuracyPolicy> PolicyFromFlags(const std::string& metric, double atol, double rtol, int topk,
                                       double threshold, const std::vector<std::string>& per_output) {
  AccuracyPolicy p;
  auto m = ParseMetric(metric);
  if (!m.ok()) return m.status().WithContext("--metric");
  if (topk < 1) return Status::Invalid("--topk must be at least 1");
  p.all.spec.metric = *m;
  p.all.spec.atol = atol;
  p.all.spec.rtol = rtol;
  p.all.spec.topk = topk;
  p.all.threshold = threshold >= 0 ? threshold : DefaultThreshold(*m);
  for (const std::string& o : per_output) SY_RETURN_IF_ERROR(p.AddOverride(o));
  return p;
}

void CheckOutputs(const TensorMap& outputs, const TensorMap& reference, const std::string& set,
                  const AccuracyPolicy& policy, GateResult* result) {
  for (const auto& [name, ref] : reference) {
    const OutputPolicy& p = policy.For(name);
    OutputCheck c;
    c.output = name;
    c.set = set;
    c.threshold = p.threshold;
    auto it = outputs.find(name);
    if (it == outputs.end()) {
      c.value = std::numeric_limits<double>::infinity();
      c.detail = "output missing";
    } else {
      const MetricResult m = ComputeMetric(it->second, ref, p.spec);
      c.value = m.error;
      if (m.non_finite) c.detail = "NaN or Inf where the reference is finite";
      else c.detail = m.detail;
      c.passed = !m.non_finite && std::isfinite(m.error) && m.error <= p.threshold;
    }
    if (!c.passed) {
      if (result->passed) {
        result->first_failure = "output '" + name + "' on set '" + set + "': " +
                                MetricName(p.spec.metric) + " " + Num(c.value) + " > threshold " +
                                Num(c.threshold) + (c.detail.empty() ? "" : " (" + c.detail + ")");
      }
      result->passed = false;
    }
    result->checks.push_back(std::move(c));
  }
}

nlohmann::ordered_json GateResult::ToJson(const AccuracyPolicy& policy) const {
  nlohmann::ordered_json outs = nlohmann::ordered_json::object();
  for (const OutputCheck& c : checks) {
    auto& o = outs[c.output];
    if (o.is_null()) {
      const OutputPolicy& p = policy.For(c.output);
      o = {{"metric", MetricName(p.spec.metric)}, {"threshold", c.threshold}, {"worst", 0.0},
           {"per_set", nlohmann::ordered_json::object()}, {"passed", true}};
    }
    // JSON has no Inf/NaN: a non-finite error is written as null (and the check failed).
    const bool finite = std::isfinite(c.value);
    o["per_set"][c.set] = finite ? nlohmann::ordered_json(c.value) : nlohmann::ordered_json(nullptr);
    if (!finite) o["worst"] = nullptr;
    else if (!o["worst"].is_null() && c.value > o["worst"].get<double>()) o["worst"] = c.value;
    if (!c.passed) {
      o["passed"] = false;
      if (!c.detail.empty()) o["detail"] = c.detail;
    }
  }
  nlohmann::ordered_json j = {{"passed", passed}, {"outputs", outs}};
  if (!first_failure.empty()) j["first_failure"] = first_failure;
  return j;
}

}  // namespace switchyard
