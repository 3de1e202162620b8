// Fuzz target: route strings -> RouteSpace::Parse and RouteSpace::Sweep on the route spaces
// of two small fixed test models (a CNN: conv/layout/kernel knobs; a transformer:
// attention/layernorm/gelu/gemm knobs). The first byte picks the model, the rest is the
// text. Besides "no crash", it checks the contract that a parsed or swept route's canonical
// string parses back to the same route (a failure traps, so libFuzzer reports it).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "build/target.h"
#include "onnx/importer.h"
#include "route/route.h"

namespace {

using switchyard::RouteSpace;

std::vector<RouteSpace> LoadSpaces() {
  const switchyard::Target target = switchyard::Target::HostCpu();
  std::vector<RouteSpace> spaces;
  for (const char* model : {"resnet_tiny.onnx", "bert_tiny_op17.onnx"}) {
    auto g = switchyard::ImportModel(std::string(SY_SOURCE_DIR) + "/tests/models/" + model);
    if (!g.ok()) std::abort();  // the fixture itself is broken: not a finding
    spaces.push_back(RouteSpace::For(*g, target));
  }
  return spaces;
}

void CheckRoundTrip(const RouteSpace& space, const switchyard::Route& route) {
  auto again = space.Parse(route.Canonical());
  if (!again.ok() || !(*again == route)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<RouteSpace> spaces = LoadSpaces();
  if (size == 0) return 0;
  const RouteSpace& space = spaces[data[0] % spaces.size()];
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (auto route = space.Parse(text); route.ok()) CheckRoundTrip(space, *route);
  int skipped = 0;
  if (auto routes = space.Sweep(text, &skipped); routes.ok()) {
    // Checking every route of a 100000-route sweep would slow the fuzzer to a crawl.
    for (size_t i = 0; i < routes->size() && i < 16; ++i) CheckRoundTrip(space, (*routes)[i]);
  }
  return 0;
}
