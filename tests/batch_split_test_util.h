// Helpers of the batch-split tests (batch_split_test.cc, batch_split_workers_test.cc): a
// small convolution network with a batch, its inputs, and output comparisons.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "engine_test_util.h"
#include "passes_test_util.h"

namespace switchyard::batch_split_test {
using testing::Filled;

// Both routes on 2 threads: auto's per-step floor scales with the engine's threads.
inline constexpr const char* kOff = "threads=2 schedule.batch_split=off";
inline constexpr const char* kSplit = "threads=2 schedule.batch_split=auto";

// x [n,16,hw,hw] -> Conv3x3(16->32)+Relu = r1 (8 MiB at n = 4, hw = 128) -> Conv1x1+Relu ->
// Conv3x3 + r1 (residual) + Relu = r3 -> GlobalAveragePool -> Flatten -> Gemm(32->10).
// `side`: Sigmoid(r3) is a second graph output, so that a whole-batch tensor produced late
// in the segment (the Sigmoid's) leaves it for a step after it.
inline Graph ConvNet(int64_t n, bool side = false, int64_t hw = 128) {
  testing::GraphBuilder gb;
  const ValueId x = gb.Input("x", {n, 16, hw, hw});
  auto conv = [&](ValueId in, int64_t cin, int64_t cout, int64_t k, uint32_t seed) {
    const ValueId w = gb.Const("w" + std::to_string(seed), Filled(DataType::kFloat, {cout, cin, k, k}, seed, -0.2, 0.2));
    const ValueId b = gb.Const("b" + std::to_string(seed), Filled(DataType::kFloat, {cout}, seed + 100, -0.1, 0.1));
    const int64_t p = k / 2;
    return gb.Op("Conv", {in, w, b}, [p](Node& node) { node.attrs["pads"] = testing::IntsAttr({p, p, p, p}); });
  };
  const ValueId r1 = gb.Op("Relu", {conv(x, 16, 32, 3, 1)});
  const ValueId r2 = gb.Op("Relu", {conv(r1, 32, 32, 1, 2)});
  const ValueId r3 = gb.Op("Relu", {gb.Op("Add", {conv(r2, 32, 32, 3, 3), r1})});
  if (side) gb.Output(gb.Op("Sigmoid", {r3}));
  const ValueId flat = gb.Op("Flatten", {gb.Op("GlobalAveragePool", {r3})});
  const ValueId wg = gb.Const("wg", Filled(DataType::kFloat, {10, 32}, 4, -0.5, 0.5));
  const ValueId bg = gb.Const("bg", Filled(DataType::kFloat, {10}, 5));
  gb.Output(gb.Op("Gemm", {flat, wg, bg}, [](Node& node) { node.attrs["transB"] = testing::IntAttr(1); }));
  return gb.Finish();
}

inline TensorMap Inputs(int64_t n, uint32_t seed, int64_t hw = 128) {
  return {{"x", Filled(DataType::kFloat, {n, 16, hw, hw}, seed)}};
}

inline bool HasNote(const BuildReport& r, const std::string& prefix) {
  return std::any_of(r.notes.begin(), r.notes.end(), [&](const std::string& s) { return s.rfind(prefix, 0) == 0; });
}

// Max |a - b| over max |b|, and whether every byte is equal.
struct Diff {
  double rel = 0;
  bool bitwise = true;
};
inline Diff Compare(const Tensor& a, const Tensor& b) {
  Diff d;
  EXPECT_EQ(a.shape(), b.shape());
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return {1e30, false};
  double err = 0, scale = 0;
  for (int64_t i = 0; i < b.numel(); ++i) {
    const double x = a.GetDouble(i), y = b.GetDouble(i);
    err = std::max(err, std::fabs(x - y));
    scale = std::max(scale, std::fabs(y));
  }
  d.rel = scale > 0 ? err / scale : err;
  d.bitwise = std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
  return d;
}

// Every output of `got` within 1e-5 of `want`'s (max abs diff over max |value|); prints
// whether they are bitwise equal.
inline void ExpectSameOutputs(const TensorMap& got, const TensorMap& want, const std::string& what) {
  ASSERT_FALSE(want.empty()) << what;
  ASSERT_EQ(got.size(), want.size()) << what;
  for (const auto& [name, t] : want) {
    ASSERT_TRUE(got.count(name)) << what << ": missing " << name;
    const Diff d = Compare(got.at(name), t);
    std::printf("[%s] output %s: max abs diff / max |value| %.3g, bitwise %s\n", what.c_str(), name.c_str(), d.rel,
                d.bitwise ? "equal" : "different");
    EXPECT_LE(d.rel, 1e-5) << what << ": " << name;
  }
}

}  // namespace switchyard::batch_split_test
