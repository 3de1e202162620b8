// Fuzz target: tensor file bytes -> ParseNpy (in memory) and ReadTensorFile on a .pb file
// (ONNX TensorProto, including external data confined to the file's folder; the scratch
// folder holds one small data file to find).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/fuzz_util.h"
#include "io/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace switchyard;
  static const bool init = [] {
    const uint8_t weights[64] = {1, 2, 3, 4, 5, 6, 7, 8};
    fuzz::WriteScratch("weights.bin", weights, sizeof(weights));
    return true;
  }();
  (void)init;
  auto npy = ParseNpy(std::string(reinterpret_cast<const char*>(data), size), "fuzz.npy");
  (void)npy.ok();
  auto pb = ReadTensorFile(fuzz::WriteScratch("tensor.pb", data, size));
  (void)pb.ok();
  return 0;
}
