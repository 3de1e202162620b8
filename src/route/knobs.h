// The knob table: every build decision Switchyard knows, as data. Each row says what the
// knob is called, which values it takes on a target, its default, what it does (help),
// and which nodes of a graph it can affect (none → the knob is absent for that graph).
// The incompatibility table lists value pairs that cannot be built together. Both
// tables are immutable after static initialisation; safe to read from any thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "build/target.h"
#include "route/patterns.h"

namespace switchyard::route {

struct KnobDef {
  const char* option;
  std::vector<std::string> (*allowed)(const Target& target);
  std::string (*default_value)(const Target& target);
  const char* help;
  // Names of the nodes the knob can affect; nullopt when it cannot affect this graph.
  // An empty list means "the whole graph" (memory.plan, threads).
  std::optional<std::vector<std::string>> (*applies)(const GraphIndex& graph);
  // Comma-separated targets the knob exists on ("cpu", "cpu,cuda", "cuda").
  const char* targets = "cpu";
};
// Whether `def` exists on `target` (its `targets` list names target.name).
bool KnobOnTarget(const KnobDef& def, const Target& target);

// Every knob, in no particular order (RouteSpace sorts them by option).
const std::vector<KnobDef>& KnobTable();

// Knobs that exist only in test builds (the tuner's fault-injection knob, see
// tests/support/fault_injection.cc): registered by a static initialiser of a test-only
// translation unit before main(); production binaries register none. Not thread-safe
// against RouteSpace::For, hence static initialisation only.
void RegisterTestKnob(const KnobDef& def);
const std::vector<KnobDef>& TestKnobs();

// `a` set to one of `a_values` cannot be combined with `b` set to one of `b_values`.
// Checked on effective values (a knob left at its default counts with its default).
struct Incompatibility {
  const char* a;
  std::vector<std::string> a_values;
  const char* b;
  std::vector<std::string> b_values;
  const char* reason;
};

const std::vector<Incompatibility>& IncompatibilityTable();

// The only knob that takes scoped overrides "<knob>@<node-glob>=<value>", and the only
// value such an override may have.
inline constexpr const char* kScopedKnob = "precision";
inline constexpr const char* kScopedValue = "fp32";

}  // namespace switchyard::route
