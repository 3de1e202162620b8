// Fuzz target: ONNX model bytes -> ImportModelFromBytes (protobuf parse, initializers,
// external data, topological sort, opset resolution, shape inference, verifier) and, for a
// graph that imports, RouteSpace::For (pattern matching over the graph). External data may
// only come from the scratch folder, which holds one small data file to find.
// Inputs with an odd size import with allow_unsupported (the `inspect` path).
#include <cstddef>
#include <cstdint>
#include <string>

#include "build/target.h"
#include "fuzz/fuzz_util.h"
#include "onnx/importer.h"
#include "route/route.h"

namespace {

const switchyard::Target& HostTarget() {
  static const switchyard::Target t = switchyard::Target::HostCpu();
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace switchyard;
  static const std::string base_dir = [] {
    const uint8_t weights[64] = {1, 2, 3, 4, 5, 6, 7, 8};
    fuzz::WriteScratch("weights.bin", weights, sizeof(weights));
    return fuzz::ScratchDir();
  }();
  ImportOptions options;
  options.allow_unsupported = (size % 2) == 1;
  options.max_tensor_bytes = int64_t{64} << 20;  // keeps a declared 16 GiB tensor an error
  Result<Graph> g = ImportModelFromBytes(std::string(reinterpret_cast<const char*>(data), size),
                                         "fuzz.onnx", base_dir, options);
  if (g.ok() && !options.allow_unsupported) {
    RouteSpace space = RouteSpace::For(*g, HostTarget());
    (void)space.knobs().size();
  }
  return 0;
}
