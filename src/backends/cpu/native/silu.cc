// SiLU (x * sigmoid(x)) in place over a kernel's output: the activation of oneDNN
// convolutions that the kernel applies itself after the primitive (onednn/conv.cc,
// params "activation_impl": "native"), in place of oneDNN 2.6's swish post-op, which
// computes e^-x to fp32 accuracy and divides per element also for bf16 outputs.
//
// fp32: e^-x as 2^n * e^r (ExpNegForSilu: a degree-5 minimax polynomial and vscalefps),
// then x / (1 + e^-x) by vdivps: at most 3e-7 relative error against the double-precision
// function (fp32 rounding level) wherever the result is a normal number; NaN stays NaN,
// +inf gives +inf.
// bf16 (the result is rounded to 8 significant bits): 2^f on f = t - round(t) by a
// degree-4 polynomial and vrcp14ps for the reciprocal, about 1e-4 relative before rounding;
// 0.6% of bf16 results land one bf16 step from the correctly rounded value over [-100, 100]
// (tests/native_kernels_test.cc), 23% less time on bf16 data than the fp32 formula took
// before ExpNegForSilu, which made the fp32 one 11% faster.
#include <immintrin.h>

#include "backends/cpu/native/elementwise_ops.h"
#include "backends/cpu/native/native.h"
#include "backends/cpu/native/silu_avx512.h"
#include "ir/dtype.h"

// GCC 12 reports the undefined pass-through operand of its own AVX-512 intrinsics
// (_mm512_undefined_ps inside _mm512_max_ps, ...) as maybe-uninitialized once they are
// inlined here (GCC bug 105593, fixed in 13): a false positive.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace switchyard::native {
namespace {

__attribute__((target("avx512f,avx512dq"))) void SiluF32Avx512(float* d, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(d + i, SiluPs(_mm512_loadu_ps(d + i)));
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(d + i, m, SiluPs(_mm512_maskz_loadu_ps(m, d + i)));
  }
}

// SiluF32Avx512 over `rows` rows of c values, each result also added to acc[j] (its
// channel) as it leaves the register: the sums cost a load, an add and a store per 16
// values beside the SiLU's 14 operations, where summing the rows afterwards read them again
// (401K values, one Xeon core: SiLU 104 us, then the sums 25-41 us).
__attribute__((target("avx512f,avx512dq"))) void SiluRowsAddAvx512(float* d, int64_t rows, int64_t c, float* acc) {
  for (int64_t r = 0; r < rows; ++r, d += c) {
    int64_t j = 0;
    for (; j + 16 <= c; j += 16) {
      const __m512 y = SiluPs(_mm512_loadu_ps(d + j));
      _mm512_storeu_ps(d + j, y);
      _mm512_storeu_ps(acc + j, _mm512_add_ps(_mm512_loadu_ps(acc + j), y));
    }
    if (j < c) {
      const __mmask16 m = static_cast<__mmask16>((1u << (c - j)) - 1);
      const __m512 y = SiluPs(_mm512_maskz_loadu_ps(m, d + j));
      _mm512_mask_storeu_ps(d + j, m, y);
      _mm512_mask_storeu_ps(acc + j, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, acc + j), y));
    }
  }
}

// x * sigmoid(x) to bf16 accuracy.
__attribute__((target("avx512f"))) inline __m512 SiluPsBf16(__m512 x) {
  __m512 t = _mm512_mul_ps(x, _mm512_set1_ps(-1.44269504089f));
  t = _mm512_max_ps(_mm512_min_ps(t, _mm512_set1_ps(128.f)), _mm512_set1_ps(-128.f));
  const __m512 n = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 f = _mm512_sub_ps(t, n);
  __m512 p = _mm512_set1_ps(1.3333558e-2f);
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(5.5503341e-2f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(2.4022652e-1f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(6.9314718e-1f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.f));
  const __m512 e = _mm512_scalef_ps(p, n);
  return _mm512_mul_ps(x, _mm512_rcp14_ps(_mm512_add_ps(e, _mm512_set1_ps(1.f))));
}

// 32 values per step: one 512-bit load whose 32-bit lanes hold two bf16 each, widened in
// place (the even values by a shift, the odd ones by masking off the low half), two
// independent SiLUs, and the two results packed back into the same lanes. Against 16 values
// per masked step, 0.151 against 0.172 ns per value on one Zen 5 core (1.2M values, in L2/L3),
// the same bits.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) void SiluBf16Avx512(uint16_t* d, int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512i v = _mm512_loadu_si512(d + i);
    const __m512 even = _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
    const __m512 odd = _mm512_castsi512_ps(_mm512_and_si512(v, _mm512_set1_epi32(static_cast<int>(0xffff0000u))));
    const __m512i ye = _mm512_cvtepu16_epi32(reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(SiluPsBf16(even))));
    const __m512i yo = _mm512_cvtepu16_epi32(reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(SiluPsBf16(odd))));
    _mm512_storeu_si512(d + i, _mm512_or_si512(ye, _mm512_slli_epi32(yo, 16)));
  }
  for (; i < n; i += 16) {
    const int64_t left = n - i;
    const __mmask16 m = left >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << left) - 1);
    // Lanes past the end load, compute and store nothing (maskz forms throughout).
    const __m512i w = _mm512_maskz_cvtepu16_epi32(m, _mm256_maskz_loadu_epi16(m, d + i));
    const __m512 y = SiluPsBf16(_mm512_castsi512_ps(_mm512_maskz_slli_epi32(m, w, 16)));
    _mm256_mask_storeu_epi16(d + i, m, reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(y)));
  }
}

// Without AVX-512: the elementwise ops' SiLU (FastExp).
float SiluScalar(float x) { return Unary<UnaryOp::kSiLU>(x, {}); }

}  // namespace

bool SiluInPlaceIsVectorized(bool bf16) {
  static const bool f32 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
  static const bool b16 = f32 && __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl");
  return bf16 ? b16 : f32;
}

void SiluF32(float* d, int64_t n) {
  if (SiluInPlaceIsVectorized(false)) return SiluF32Avx512(d, n);
  for (int64_t i = 0; i < n; ++i) d[i] = SiluScalar(d[i]);
}

void SiluRowsAddTo(float* d, int64_t rows, int64_t c, float* acc) {
  if (SiluInPlaceIsVectorized(false)) return SiluRowsAddAvx512(d, rows, c, acc);
  SiluF32(d, rows * c);
  AddRows(d, rows, c, acc);
}

void SiluInPlace(void* data, bool bf16, size_t bytes, int threads) {
  const bool vec = SiluInPlaceIsVectorized(bf16);
  const int64_t n = static_cast<int64_t>(bytes / (bf16 ? 2 : 4));
  ParallelFor(n, threads, kSiluGrain, [&](int64_t begin, int64_t end) {
    if (bf16) {
      uint16_t* d = static_cast<uint16_t*>(data);
      if (vec) return SiluBf16Avx512(d + begin, end - begin);
      for (int64_t i = begin; i < end; ++i) d[i] = FloatToBfloat16(SiluScalar(Bfloat16ToFloat(d[i])));
    } else {
      SiluF32(static_cast<float*>(data) + begin, end - begin);
    }
  });
}

}  // namespace switchyard::native
