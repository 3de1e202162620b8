// Route strings, the route space of a graph, route parsing, sweeps and compatibility.
#include "route/route.h"

#include <algorithm>
#include <cctype>
#include <iomanip>
#include <sstream>

#include "route/knobs.h"
#include "route/patterns.h"

namespace switchyard {
namespace {

std::vector<std::string> SplitWhitespace(const std::string& text) {
  std::vector<std::string> tokens;
  std::string cur;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!cur.empty()) tokens.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) tokens.push_back(std::move(cur));
  return tokens;
}

std::string Join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

// Splits "key=value"; errors name the token.
Status SplitSetting(const std::string& token, std::string* key, std::string* value) {
  const size_t eq = token.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Status::Invalid("route token '" + token + "' is not key=value");
  }
  *key = token.substr(0, eq);
  *value = token.substr(eq + 1);
  return Status::Ok();
}

bool IsScoped(const std::string& key) { return key.find('@') != std::string::npos; }

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

std::string Route::Canonical() const {
  std::string out;
  for (const auto& [k, v] : values_) out += (out.empty() ? "" : " ") + k + "=" + v;
  return out;
}

RouteSpace RouteSpace::For(const Graph& graph, const Target& target) {
  RouteSpace space;
  route::GraphIndex index(graph);
  std::vector<route::KnobDef> defs = route::KnobTable();
  defs.insert(defs.end(), route::TestKnobs().begin(), route::TestKnobs().end());
  for (const route::KnobDef& def : defs) {
    if (!route::KnobOnTarget(def, target)) continue;
    std::optional<std::vector<std::string>> nodes = def.applies(index);
    if (!nodes) continue;
    space.knobs_.push_back(
        Knob{def.option, def.allowed(target), def.default_value(target), def.help, *nodes});
  }
  std::sort(space.knobs_.begin(), space.knobs_.end(),
            [](const Knob& a, const Knob& b) { return a.option < b.option; });
  for (const Node& n : graph.nodes) space.node_names_.push_back(n.name);
  return space;
}

const Knob* RouteSpace::Find(const std::string& option) const {
  for (const Knob& k : knobs_) {
    if (k.option == option) return &k;
  }
  return nullptr;
}

std::string RouteSpace::Value(const Route& route, const std::string& option) const {
  auto it = route.values().find(option);
  if (it != route.values().end()) return it->second;
  const Knob* k = Find(option);
  return k ? k->default_value : "";
}

std::string RouteSpace::PrecisionFor(const Route& route, const std::string& node_name) const {
  const std::string prefix = std::string(route::kScopedKnob) + "@";
  for (const auto& [key, value] : route.values()) {
    if (key.rfind(prefix, 0) == 0 && GlobMatch(key.substr(prefix.size()), node_name)) {
      return value;
    }
  }
  const std::string p = Value(route, route::kScopedKnob);
  return p.empty() ? "fp32" : p;
}

std::string RouteSpace::OptionList() const {
  std::vector<std::string> names;
  for (const Knob& k : knobs_) names.push_back(k.option);
  return names.empty() ? "(none)" : Join(names, ", ");
}

Status RouteSpace::ValidateSetting(const std::string& key, const std::string& value) const {
  if (IsScoped(key)) {
    const size_t at = key.find('@');
    const std::string base = key.substr(0, at), glob = key.substr(at + 1);
    if (base != route::kScopedKnob) {
      return Status::Invalid("knob '" + base + "' cannot be scoped with '@'; only " +
                             route::kScopedKnob + "@<node-glob>=" + route::kScopedValue +
                             " can");
    }
    if (!Find(base)) {
      return Status::Invalid("unknown knob '" + key + "': this model has no '" + base +
                             "' knob; knobs for this model: " + OptionList());
    }
    if (glob.empty()) {
      return Status::Invalid("knob '" + key + "' has an empty node glob; write " + base +
                             "@<node-glob>=" + route::kScopedValue);
    }
    if (value != route::kScopedValue) {
      return Status::Invalid("knob '" + key + "' has no value '" + value +
                             "'; allowed: " + route::kScopedValue);
    }
    const bool matches = std::any_of(node_names_.begin(), node_names_.end(),
                                     [&](const std::string& n) { return GlobMatch(glob, n); });
    if (!matches) {
      return Status::Invalid("knob '" + key + "': the glob '" + glob +
                             "' matches no node of this model");
    }
    return Status::Ok();
  }
  const Knob* k = Find(key);
  if (!k) {
    return Status::Invalid("unknown knob '" + key + "'; knobs for this model: " + OptionList());
  }
  if (!Contains(k->allowed_values, value)) {
    std::string why;
    if (key == route::kScopedKnob && value == "bf16") {
      why = " (bf16 needs AVX512_BF16 or AMX, which this target lacks)";
    }
    return Status::Invalid("knob '" + key + "' has no value '" + value +
                           "'; allowed: " + Join(k->allowed_values, "|") + why);
  }
  return Status::Ok();
}

Result<Route> RouteSpace::Parse(const std::string& text) const {
  Route route;
  std::map<std::string, std::string> seen;
  for (const std::string& token : SplitWhitespace(text)) {
    std::string key, value;
    SY_RETURN_IF_ERROR(SplitSetting(token, &key, &value));
    auto [it, inserted] = seen.emplace(key, value);
    if (!inserted) {
      return Status::Invalid("knob '" + key + "' is given twice ('" + it->second + "' and '" +
                             value + "')");
    }
    SY_RETURN_IF_ERROR(ValidateSetting(key, value));
    if (IsScoped(key) || value != Find(key)->default_value) route.Set(key, value);
  }
  SY_RETURN_IF_ERROR(CheckCompatible(route));
  return route;
}

Result<std::vector<Route>> RouteSpace::Sweep(const std::string& expr, int* skipped) const {
  if (skipped) *skipped = 0;
  // Sorted by key: the first key varies slowest, each key's values in the order given.
  std::map<std::string, std::vector<std::string>> axes;
  for (const std::string& token : SplitWhitespace(expr)) {
    std::string key, value;
    SY_RETURN_IF_ERROR(SplitSetting(token, &key, &value));
    if (axes.count(key)) return Status::Invalid("sweep gives knob '" + key + "' twice");
    std::vector<std::string> values;
    const bool open = !value.empty() && value.front() == '[';
    const bool close = !value.empty() && value.back() == ']';
    if (open != close || (open && value.size() < 2)) {
      return Status::Invalid("sweep token '" + token + "' has unbalanced brackets; write " +
                             key + "=[a|b|c]");
    }
    const std::string body = open ? value.substr(1, value.size() - 2) : value;
    if (body.find_first_of("[]") != std::string::npos) {
      return Status::Invalid("sweep token '" + token + "' has nested or stray brackets");
    }
    if (!open && body.find('|') != std::string::npos) {
      return Status::Invalid("sweep token '" + token + "' lists values without brackets; write " +
                             key + "=[" + body + "]");
    }
    if (open && body.empty()) {
      return Status::Invalid("sweep list for knob '" + key + "' is empty");
    }
    size_t start = 0;
    while (true) {
      const size_t bar = body.find('|', start);
      const std::string v = body.substr(start, bar == std::string::npos ? bar : bar - start);
      if (v.empty()) return Status::Invalid("sweep list for knob '" + key + "' has an empty value");
      if (Contains(values, v)) {
        return Status::Invalid("sweep list for knob '" + key + "' repeats '" + v + "'");
      }
      SY_RETURN_IF_ERROR(ValidateSetting(key, v));
      values.push_back(v);
      if (bar == std::string::npos) break;
      start = bar + 1;
    }
    axes.emplace(key, std::move(values));
  }
  int64_t total = 1;
  for (const auto& [key, values] : axes) {
    total *= static_cast<int64_t>(values.size());
    if (total > kMaxSweepRoutes) {
      // Multiply in floating point only to tell the user the real size.
      long double full = 1;
      for (const auto& [k2, v2] : axes) full *= static_cast<long double>(v2.size());
      std::ostringstream count;
      if (full < 1e18L) count << static_cast<int64_t>(full);
      else count << std::scientific << std::setprecision(2) << static_cast<double>(full);
      return Status::OutOfRange("sweep expands to " + count.str() +
                                " routes, more than the limit of " +
                                std::to_string(kMaxSweepRoutes) + "; narrow some lists");
    }
  }
  std::vector<std::pair<std::string, const std::vector<std::string>*>> dims;
  for (const auto& [key, values] : axes) dims.emplace_back(key, &values);
  std::vector<size_t> pos(dims.size(), 0);
  std::vector<Route> routes;
  for (int64_t n = 0; n < total; ++n) {
    Route r;
    for (size_t d = 0; d < dims.size(); ++d) {
      const std::string& key = dims[d].first;
      const std::string& v = (*dims[d].second)[pos[d]];
      if (IsScoped(key) || v != Find(key)->default_value) r.Set(key, v);
    }
    if (CheckCompatible(r).ok()) {
      routes.push_back(std::move(r));
    } else if (skipped) {
      ++*skipped;
    }
    // Odometer: the last key turns fastest.
    for (size_t d = dims.size(); d-- > 0;) {
      if (++pos[d] < dims[d].second->size()) break;
      pos[d] = 0;
    }
  }
  return routes;
}

Status RouteSpace::CheckCompatible(const Route& route) const {
  for (const auto& [key, value] : route.values()) SY_RETURN_IF_ERROR(ValidateSetting(key, value));
  std::vector<std::string> conflicts;
  for (const route::Incompatibility& inc : route::IncompatibilityTable()) {
    if (!Find(inc.a) || !Find(inc.b)) continue;
    const std::string va = Value(route, inc.a), vb = Value(route, inc.b);
    if (!Contains(inc.a_values, va) || !Contains(inc.b_values, vb)) continue;
    const bool b_default = !route.values().count(inc.b);
    conflicts.push_back(std::string(inc.a) + "=" + va + " with " + inc.b + "=" + vb +
                        (b_default ? " (its default)" : "") + ": " + inc.reason);
  }
  const std::string prefix = std::string(route::kScopedKnob) + "@";
  const std::string precision = Value(route, route::kScopedKnob);
  for (const auto& [key, value] : route.values()) {
    if (key.rfind(prefix, 0) == 0 && precision == "fp32") {
      conflicts.push_back(key + "=" + value + " has no effect: precision is fp32 (an override " +
                          "only keeps nodes in fp32 when precision=bf16)");
    }
  }
  if (conflicts.empty()) return Status::Ok();
  return Status::Invalid("impossible route '" + route.Canonical() + "': " + Join(conflicts, "; "));
}

bool GlobMatch(const std::string& pattern, const std::string& text) {
  // Iterative matcher with one backtrack point (the last '*'): linear in practice.
  size_t p = 0, t = 0, star = std::string::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace switchyard
