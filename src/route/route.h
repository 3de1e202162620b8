// Routes and the route space. A Knob is one named build decision (data, not code): its
// option name, allowed values, default and help, and the nodes it can affect. The
// RouteSpace holds the knobs that matter for one graph on one target. A Route is one
// value per knob; only non-default values are stored, so the canonical string of the
// default route is "". Scoped overrides `precision@<node-name-glob>=fp32` keep matching
// nodes in fp32. All types are immutable values after construction; thread-safe to share.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "build/target.h"
#include "ir/graph.h"
#include "switchyard/status.h"

namespace switchyard {

struct Knob {
  std::string option;                       // "fuse.conv_act"
  std::vector<std::string> allowed_values;  // "on", "off"
  std::string default_value;
  std::string help;                 // what it changes, its default and its cost
  std::vector<std::string> nodes;   // names of the nodes it can affect (empty: whole graph)
};

class Route {
 public:
  Route() = default;
  // Explicit (non-default) settings, including scoped keys "precision@<glob>".
  const std::map<std::string, std::string>& values() const { return values_; }
  void Set(const std::string& option, const std::string& value) { values_[option] = value; }
  void Erase(const std::string& option) { values_.erase(option); }
  // "key=value key=value", keys sorted; "" for the default route.
  std::string Canonical() const;
  bool operator==(const Route& o) const { return values_ == o.values_; }
  bool operator<(const Route& o) const { return values_ < o.values_; }

 private:
  std::map<std::string, std::string> values_;
};

class RouteSpace {
 public:
  // The knobs that can affect `graph` on `target` (a knob that cannot is absent).
  static RouteSpace For(const Graph& graph, const Target& target);

  const std::vector<Knob>& knobs() const { return knobs_; }
  const Knob* Find(const std::string& option) const;
  // The route's value for `option`, or the knob's default. For "precision" on a node,
  // use PrecisionFor.
  std::string Value(const Route& route, const std::string& option) const;
  bool On(const Route& route, const std::string& option) const { return Value(route, option) == "on"; }
  // Effective precision of a node: "fp32" when a scoped override matches its name,
  // else the route's precision.
  std::string PrecisionFor(const Route& route, const std::string& node_name) const;

  // Parses "key=value ..." (any order, repeated spaces allowed). Unknown knob or value →
  // an error listing what is allowed; default values are dropped; impossible
  // combinations are reported (CheckCompatible).
  Result<Route> Parse(const std::string& text) const;
  // Expands a sweep "key=[a|b|c] other=x" into concrete routes (Cartesian product,
  // deterministic order), each validated; incompatible combinations are skipped and
  // counted in *skipped when given.
  Result<std::vector<Route>> Sweep(const std::string& expr, int* skipped = nullptr) const;
  // Errors for combinations that cannot be built together (named in the message).
  Status CheckCompatible(const Route& route) const;

  // Largest number of routes Sweep expands to; more is an error naming the count.
  static constexpr int64_t kMaxSweepRoutes = 100000;

 private:
  // Whether `key=value` names a knob of this space with an allowed value; scoped keys
  // "precision@<glob>" must have value fp32 and a glob matching some node.
  Status ValidateSetting(const std::string& key, const std::string& value) const;
  std::string OptionList() const;  // "a, b, c"

  std::vector<Knob> knobs_;               // sorted by option
  std::vector<std::string> node_names_;   // every node of the graph, for scoped globs
};

// Shell-style glob: '*' any run, '?' one character, no other specials.
bool GlobMatch(const std::string& pattern, const std::string& text);

}  // namespace switchyard
