// Scalar definitions of the fp32 elementwise ops shared by the plain elementwise
// kernels, FusedElementwise, Gelu and the GEMM/attention epilogues. Ops are dispatched
// once per contiguous span (ApplyUnary/ApplyBinary), so the inner loops are plain
// inlined code the compiler can vectorise.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace switchyard::native {

// The project builds for baseline x86-64; cloning hot span loops for x86-64-v3 lets the
// vectoriser use AVX2/FMA on machines that have them (resolved once at load time). Not
// under TSan: the ifunc resolvers run during relocation, before the sanitizer runtime is
// up, and its instrumentation of them crashed every g++ -fsanitize=thread binary at load.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define SY_NATIVE_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define SY_NATIVE_CLONES
#endif

enum class UnaryOp {
  kNone, kRelu, kSigmoid, kTanh, kErf, kExp, kLog, kSqrt, kNeg, kAbs, kReciprocal,
  kHardSwish, kHardSigmoid, kLeakyRelu, kSoftplus, kFloor, kCeil, kRound, kSign, kClip,
  kSiLU, kGelu, kGeluTanh, kElu, kSelu, kSoftsign, kSin, kCos, kIdentity,
};
enum class BinaryOp { kAdd, kSub, kMul, kDiv, kPow, kMax, kMin, kPRelu };

// Parameters of a unary op: LeakyRelu/Elu alpha in a; HardSigmoid alpha,beta in a,b;
// Clip min,max in a,b; Selu alpha,gamma in a,b.
struct UnaryParams {
  float a = 0, b = 0;
};

// Parses an ONNX op name (plus "SiLU", "Gelu"); false when unknown.
bool ParseUnary(const std::string& name, UnaryOp* op);
bool ParseBinary(const std::string& name, BinaryOp* op);
// Default parameters of an op (LeakyRelu 0.01, HardSigmoid 0.2/0.5, Clip ±inf, ...).
UnaryParams DefaultUnaryParams(UnaryOp op);
// The `activation` / `activation_params` attributes of the fused switchyard ops: ""
// gives kNone; LeakyRelu takes alpha, Clip min,max, HardSigmoid alpha,beta. False when
// the name is unknown or the params do not fit.
bool ParseActivation(const std::string& name, const std::vector<float>& params, UnaryOp* op,
                     UnaryParams* p);

inline float RoundHalfEven(float x) { return std::nearbyint(x); }

// e^x without calls or branches, so that span loops over it vectorise (glibc's expf and
// tanhf do not: the tanh GELU of GPT-2-small took 3.3 ms per layer at 2 threads, a
// quarter of the model): x = k ln2 + r with |r| <= ln2 / 2 (Cody-Waite split of ln2), e^r
// by its degree-6 Taylor polynomial (relative error below 1e-7), 2^k through the exponent
// bits (k rounded with the 1.5 * 2^23 shift). x is clamped to [-87, 88]; below
// ln(FLT_MIN) = -87.34 the result is 0 (never a denormal: on Intel cores every
// instruction with a denormal operand or result takes a microcode assist), so e^-inf is 0;
// results lie in {0} and [1.2e-38, 1.7e38]; NaN stays NaN.
inline float FastExp(float x) {
  const bool underflow = x < -87.33654f;
  x = x < -87.f ? -87.f : (x > 88.f ? 88.f : x);
  const float shifted = x * 1.44269504f + 12582912.f;
  const float k = shifted - 12582912.f;
  const float r = (x - k * 0.693359375f) - k * -2.12194440e-4f;
  float e = 1.f / 720.f;
  e = e * r + 1.f / 120.f;
  e = e * r + 1.f / 24.f;
  e = e * r + 1.f / 6.f;
  e = e * r + 0.5f;
  e = e * r + 1.f;
  e = e * r + 1.f;
  const uint32_t k_bits = std::bit_cast<uint32_t>(shifted) - 0x4B400000u;  // k, two's complement
  const float y = e * std::bit_cast<float>((k_bits + 127u) << 23);
  return underflow ? 0.f : y;
}

// e^d for a softmax term d = x - max <= 0, 0 below d = -80 (e^-80 = 1.8e-35): beside the
// max's 1 such a term cannot change an fp32 sum, and so the normalised probabilities stay
// normal numbers for rows of up to ~1,500 terms. Denormal probabilities made every FMA of
// GPT-2-small's causal P*V take a microcode assist on Intel cores: its 12 Attention steps
// took 254 of 372 ms at 2 threads (FastExp's old clamp gave e^-inf = 1.6e-38, and
// 1.6e-38 / sum is denormal).
inline float SoftmaxExp(float d) { return d < -80.f ? 0.f : FastExp(d); }

// erf(x) without calls or branches, for the erf GELU (glibc's erff does not vectorise: the
// native GELU epilogue of BERT-base's 12 [128,3072] feed-forward outputs was a call per
// element): Abramowitz & Stegun 7.1.26, 1 - t(a1 + t(a2 + ... a5)) e^(-x^2) with
// t = 1 / (1 + p|x|), absolute error below 1.5e-7 plus fp32 rounding, odd in x. Its
// relative error near 0 is large (the two terms cancel), so the Erf op keeps erff.
inline float FastErfForGelu(float x) {
  const float ax = x < 0.f ? -x : x;
  const float t = 1.f / (1.f + 0.3275911f * ax);
  float poly = 1.061405429f;
  poly = poly * t - 1.453152027f;
  poly = poly * t + 1.421413741f;
  poly = poly * t - 0.284496736f;
  poly = poly * t + 0.254829592f;
  const float e = 1.f - poly * t * FastExp(-ax * ax);
  return x < 0.f ? -e : e;
}

// Max and sum of a span through 16 partial lanes, so that the loops vectorise (a single
// running max or sum is a reduction GCC keeps scalar without -ffast-math). NaN does not
// propagate into the max (as with a running `x > m ? x : m`); the sum's order is by lane.
inline float SpanMax(const float* x, int64_t n) {
  constexpr int kL = 16;
  float lane[kL];
  for (int j = 0; j < kL; ++j) lane[j] = -INFINITY;
  int64_t i = 0;
  for (; i + kL <= n; i += kL) {
    for (int j = 0; j < kL; ++j) lane[j] = x[i + j] > lane[j] ? x[i + j] : lane[j];
  }
  float m = -INFINITY;
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  for (int j = 0; j < kL; ++j) m = lane[j] > m ? lane[j] : m;
  return m;
}
// The sum of f(x[i]) (LayerNorm's squared deviations: f(v) = (v - mean)^2).
template <typename F>
inline float SpanSumOf(const float* x, int64_t n, F f) {
  constexpr int kL = 16;
  float lane[kL] = {};
  int64_t i = 0;
  for (; i + kL <= n; i += kL) {
    for (int j = 0; j < kL; ++j) lane[j] += f(x[i + j]);
  }
  float s = 0.f;
  for (; i < n; ++i) s += f(x[i]);
  for (int j = 0; j < kL; ++j) s += lane[j];
  return s;
}
inline float SpanSum(const float* x, int64_t n) {
  return SpanSumOf(x, n, [](float v) { return v; });
}

template <UnaryOp kOp>
inline float Unary(float x, UnaryParams p) {
  if constexpr (kOp == UnaryOp::kRelu) return x > 0.f ? x : 0.f;
  else if constexpr (kOp == UnaryOp::kSigmoid) return 1.f / (1.f + FastExp(-x));
  else if constexpr (kOp == UnaryOp::kTanh) return std::tanh(x);
  else if constexpr (kOp == UnaryOp::kErf) return std::erf(x);
  else if constexpr (kOp == UnaryOp::kExp) return std::exp(x);
  else if constexpr (kOp == UnaryOp::kLog) return std::log(x);
  else if constexpr (kOp == UnaryOp::kSqrt) return std::sqrt(x);
  else if constexpr (kOp == UnaryOp::kNeg) return -x;
  else if constexpr (kOp == UnaryOp::kAbs) return std::fabs(x);
  else if constexpr (kOp == UnaryOp::kReciprocal) return 1.f / x;
  else if constexpr (kOp == UnaryOp::kHardSwish) {
    const float t = x * (1.f / 6.f) + 0.5f;
    return x * (t < 0.f ? 0.f : (t > 1.f ? 1.f : t));
  } else if constexpr (kOp == UnaryOp::kHardSigmoid) {
    const float t = p.a * x + p.b;
    return t < 0.f ? 0.f : (t > 1.f ? 1.f : t);
  } else if constexpr (kOp == UnaryOp::kLeakyRelu) return x >= 0.f ? x : p.a * x;
  else if constexpr (kOp == UnaryOp::kSoftplus) {
    return x > 20.f ? x : std::log1p(std::exp(x));
  } else if constexpr (kOp == UnaryOp::kFloor) return std::floor(x);
  else if constexpr (kOp == UnaryOp::kCeil) return std::ceil(x);
  else if constexpr (kOp == UnaryOp::kRound) return RoundHalfEven(x);
  else if constexpr (kOp == UnaryOp::kSign) return x > 0.f ? 1.f : (x < 0.f ? -1.f : 0.f);
  else if constexpr (kOp == UnaryOp::kClip) return x < p.a ? p.a : (x > p.b ? p.b : x);
  else if constexpr (kOp == UnaryOp::kSiLU) return x / (1.f + FastExp(-x));
  else if constexpr (kOp == UnaryOp::kGelu) return 0.5f * x * (1.f + FastErfForGelu(x * 0.70710678f));
  else if constexpr (kOp == UnaryOp::kGeluTanh) {
    // 0.5 x (1 + tanh(u)) = x sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3).
    return x / (1.f + FastExp(-1.5957691216f * (x + 0.044715f * x * x * x)));
  } else if constexpr (kOp == UnaryOp::kElu) return x >= 0.f ? x : p.a * (std::exp(x) - 1.f);
  else if constexpr (kOp == UnaryOp::kSelu) {
    return x > 0.f ? p.b * x : p.b * p.a * (std::exp(x) - 1.f);
  } else if constexpr (kOp == UnaryOp::kSoftsign) return x / (1.f + std::fabs(x));
  else if constexpr (kOp == UnaryOp::kSin) return std::sin(x);
  else if constexpr (kOp == UnaryOp::kCos) return std::cos(x);
  else return x;
}

template <BinaryOp kOp, typename T>
inline T Binary(T a, T b) {
  if constexpr (kOp == BinaryOp::kAdd) return a + b;
  else if constexpr (kOp == BinaryOp::kSub) return a - b;
  else if constexpr (kOp == BinaryOp::kMul) return a * b;
  else if constexpr (kOp == BinaryOp::kDiv) return a / b;
  else if constexpr (kOp == BinaryOp::kPow) return static_cast<T>(std::pow(a, b));
  else if constexpr (kOp == BinaryOp::kMax) return a > b ? a : b;
  else if constexpr (kOp == BinaryOp::kMin) return a < b ? a : b;
  else return a < T(0) ? a * b : a;  // PRelu: b is the slope
}

// y[i] = op(x[i]) for n contiguous floats (x may equal y).
void ApplyUnary(UnaryOp op, UnaryParams p, const float* x, float* y, int64_t n);
// Softmax (log: log-softmax) of one contiguous row of n > 0 values; y may be x
// (softmax.cc; shared by the Softmax kernel and the attention kernel).
void SoftmaxRow(const float* x, float* y, int64_t n, bool log);
// Unnormalised softmax of a row (softmax.cc): row[j] = e^(scale·x[j] + mask[j*mask_cs] -
// max) for j < limit (the max over those; mask may be null), 0 for j in [limit, n)
// (causal attention: keys after the query); returns the sum. Terms below e^-80 are 0 (as
// SoftmaxExp: no denormal probabilities). x may be row. AVX-512 where the CPU has it.
float SoftmaxExpRow(const float* x, float* row, int64_t n, int64_t limit, float scale, const float* mask,
                    int64_t mask_cs);
// y[i] = op(a[i*sa], b[i*sb]) with sa, sb in {0, 1}; y may alias a or b.
void ApplyBinary(BinaryOp op, const float* a, int64_t sa, const float* b, int64_t sb, float* y,
                 int64_t n);
// y[r*c + j] = op(a[r*c + j], row[j]) for `rows` rows of c floats (y may alias a): a
// per-channel operand over channels-last rows, one dispatch for all rows.
void ApplyBinaryRows(BinaryOp op, const float* a, const float* row, float* y, int64_t rows, int64_t c);
// The same over bf16 (bit patterns) for Add, Sub and Mul: each value computed in float from
// the widened operands and rounded to nearest even as vcvtneps2bf16 does (NaN stays NaN, a
// denormal result becomes a signed zero), as oneDNN's bf16 binary primitive computes it.
// False, with nothing written, for the other ops. AVX512_BF16 where the CPU has it. convert.cc.
bool ApplyBinaryRowsBf16(BinaryOp op, const uint16_t* a, const uint16_t* row, uint16_t* y, int64_t rows, int64_t c);
// acc[j] += sum over r < rows of x[r * c + j], j < c (channel sums of nhwc pixels).
void AddRows(const float* x, int64_t rows, int64_t c, float* acc);
// The same for rows of bf16 (bit patterns), summed in float.
void AddRows(const uint16_t* x, int64_t rows, int64_t c, float* acc);
// y[i] = x[i] * s[idx[i]], i < n (weights scaled by a per-channel table).
void ScaleByIndex(const float* x, const int32_t* idx, const float* s, float* y, int64_t n);

}  // namespace switchyard::native
