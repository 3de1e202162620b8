// bf16 per-channel operands over nhwc tensors (squeeze-excite scales in precision=bf16
// engines): native::ApplyBinaryRowsBf16 against the rounded float result, and oneDNN's Mul,
// Add and Sub kernels in nhwc (which take that native loop) against the same kernels in the
// plain layout (oneDNN's own bf16 binary primitive), bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "backends/cpu/native/elementwise_ops.h"
#include "backends/cpu/op_impl.h"
#include "build/target.h"
#include "ir/dtype.h"

namespace switchyard {
namespace {

std::vector<uint16_t> RandomBf16(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-4.f, 4.f);
  std::vector<uint16_t> v(n);
  for (auto& x : v) x = FloatToBfloat16(u(rng));
  return v;
}

// The value the kernels must produce: the float result of the widened operands, rounded
// to nearest even, a denormal float result flushed to a signed zero (vcvtneps2bf16).
uint16_t Expected(native::BinaryOp op, uint16_t a, uint16_t b) {
  const float x = Bfloat16ToFloat(a), y = Bfloat16ToFloat(b);
  const float r = op == native::BinaryOp::kAdd ? x + y : op == native::BinaryOp::kSub ? x - y : x * y;
  if (r != 0 && std::fpclassify(r) == FP_SUBNORMAL) return std::signbit(r) ? 0x8000 : 0;
  return FloatToBfloat16(r);
}

bool SameBits(uint16_t got, uint16_t want) {
  const bool nan_got = std::isnan(Bfloat16ToFloat(got)), nan_want = std::isnan(Bfloat16ToFloat(want));
  return nan_got || nan_want ? nan_got == nan_want : got == want;
}

TEST(Bf16ChannelRows, RowsGiveTheRoundedFloatResult) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (const auto op : {native::BinaryOp::kMul, native::BinaryOp::kAdd, native::BinaryOp::kSub}) {
    // 4100 channels: more than the vector path widens at once, so the scalar path (the one
    // of CPUs without AVX512_BF16) runs, with the same expected bits.
    for (const int64_t c : {1, 7, 16, 20, 32, 37, 64, 4100}) {
      SCOPED_TRACE("c " + std::to_string(c) + " op " + std::to_string(static_cast<int>(op)));
      const int64_t rows = c > 64 ? 2 : 5;
      std::vector<uint16_t> a = RandomBf16(static_cast<size_t>(rows * c), 3), row = RandomBf16(static_cast<size_t>(c), 4);
      // Specials: NaN, infinities, a product below the normal range, values that round.
      a[0] = FloatToBfloat16(nan);
      if (c > 1) a[1] = FloatToBfloat16(inf);
      if (c > 2) row[2] = FloatToBfloat16(-inf);
      if (c > 3) a[3] = FloatToBfloat16(1e-20f), row[3] = FloatToBfloat16(1e-20f);
      if (c > 4) a[4] = FloatToBfloat16(1.00390625f), row[4] = FloatToBfloat16(1.0078125f);
      std::vector<uint16_t> y(a.size(), 0x7fff);
      ASSERT_TRUE(native::ApplyBinaryRowsBf16(op, a.data(), row.data(), y.data(), rows, c));
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t j = 0; j < c; ++j) {
          const size_t i = static_cast<size_t>(r * c + j);
          ASSERT_TRUE(SameBits(y[i], Expected(op, a[i], row[static_cast<size_t>(j)])))
              << "row " << r << " channel " << j << ": got " << y[i] << ", want "
              << Expected(op, a[i], row[static_cast<size_t>(j)]);
        }
      }
      // In place (the memory plan may give the output the input's bytes).
      std::vector<uint16_t> in_place = a;
      ASSERT_TRUE(native::ApplyBinaryRowsBf16(op, in_place.data(), row.data(), in_place.data(), rows, c));
      for (size_t i = 0; i < y.size(); ++i) ASSERT_TRUE(SameBits(in_place[i], y[i])) << i;
    }
  }
  uint16_t one = FloatToBfloat16(1.f), out = 0;
  EXPECT_FALSE(native::ApplyBinaryRowsBf16(native::BinaryOp::kDiv, &one, &one, &out, 1, 1));
  EXPECT_EQ(out, 0);
}

// Runs oneDNN's binary kernel for `op` with the given layout on bf16 operands.
std::vector<uint16_t> RunOnednn(const std::string& op, const std::string& layout, const std::vector<int64_t>& xs,
                                const std::vector<uint16_t>& x, const std::vector<int64_t>& cs,
                                const std::vector<uint16_t>& c, int threads) {
  const CpuOpImpl* impl = CpuImplRegistry::Global().Find("onednn", "", op);
  EXPECT_NE(impl, nullptr);
  Node node;
  node.name = "se";
  node.op_type = op;
  const nlohmann::json params = {{"layout", layout}};
  StepView view{node, params, {}, {xs, cs}, {xs}, {DataType::kBfloat16, DataType::kBfloat16}, {DataType::kBfloat16},
                {layout, ""}, {layout}};
  auto kernel = impl->create(view);
  EXPECT_TRUE(kernel.ok()) << kernel.status().ToString();
  std::vector<uint16_t> y(x.size(), 0x7fff);
  TensorRef xr{DataType::kBfloat16, xs, const_cast<uint16_t*>(x.data()), layout};
  TensorRef cr{DataType::kBfloat16, cs, const_cast<uint16_t*>(c.data()), ""};
  TensorRef yr{DataType::kBfloat16, xs, y.data(), layout};
  KernelIO io;
  io.inputs = {&xr, &cr};
  io.outputs = {&yr};
  io.threads = threads;
  const Status st = (*kernel)->Run(io);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return y;
}

TEST(Bf16ChannelRows, OnednnsNhwcKernelMatchesItsPlainPrimitiveBitForBit) {
  // oneDNN 2.6 has no bf16 binary primitive without AVX-512 (an AVX2 Zen 3 EPYC: "could not
  // create a primitive descriptor iterator"); precision=bf16 is not offered there either.
  if (!Target::HostCpu().features.HasBf16()) GTEST_SKIP() << "no AVX512_BF16/AMX: the CPU offers no precision=bf16";
  const int64_t n = 2, ch = 40, h = 5, w = 3;
  const std::vector<int64_t> xs = {n, ch, h, w};
  const std::vector<uint16_t> plain = RandomBf16(static_cast<size_t>(n * ch * h * w), 7);
  std::vector<uint16_t> nhwc(plain.size());
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t k = 0; k < ch; ++k) {
      for (int64_t p = 0; p < h * w; ++p) nhwc[static_cast<size_t>((b * h * w + p) * ch + k)] = plain[static_cast<size_t>((b * ch + k) * h * w + p)];
    }
  }
  for (const int64_t cb : {n, int64_t{1}}) {
    const std::vector<int64_t> cs = {cb, ch, 1, 1};
    const std::vector<uint16_t> c = RandomBf16(static_cast<size_t>(cb * ch), 8);
    for (const std::string op : {"Mul", "Add", "Sub"}) {
      for (const int threads : {1, 2}) {
        SCOPED_TRACE(op + " operand batch " + std::to_string(cb) + " threads " + std::to_string(threads));
        const std::vector<uint16_t> want = RunOnednn(op, "", xs, plain, cs, c, threads);
        const std::vector<uint16_t> got = RunOnednn(op, "nhwc", xs, nhwc, cs, c, threads);
        for (int64_t b = 0; b < n; ++b) {
          for (int64_t k = 0; k < ch; ++k) {
            for (int64_t p = 0; p < h * w; ++p) {
              const uint16_t g = got[static_cast<size_t>((b * h * w + p) * ch + k)];
              const uint16_t e = want[static_cast<size_t>((b * ch + k) * h * w + p)];
              ASSERT_TRUE(SameBits(g, e)) << "image " << b << " channel " << k << " pixel " << p << ": " << g
                                          << " against " << e;
              ASSERT_TRUE(SameBits(g, Expected(op == "Mul" ? native::BinaryOp::kMul
                                               : op == "Add" ? native::BinaryOp::kAdd
                                                             : native::BinaryOp::kSub,
                                               nhwc[static_cast<size_t>((b * h * w + p) * ch + k)],
                                               c[static_cast<size_t>((cb == 1 ? 0 : b) * ch + k)])));
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace switchyard
