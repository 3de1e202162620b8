// f32 <-> bf16 conversion of activations for bf16 kernels (onednn::SrcConversion) and the
// Casts at the boundaries of bf16 activations (precision=bf16).
#include <immintrin.h>

#include <cstring>

#include "backends/cpu/native/native.h"
#include "ir/dtype.h"

namespace switchyard::native {
namespace {

// As vcvtneps2bf16: the IR's round-to-nearest-even conversion (NaN stays NaN), except that
// denormal inputs count as zero (the instruction assumes DAZ), so both paths give the same bits.
uint16_t ToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7f800000) == 0) return static_cast<uint16_t>((u >> 16) & 0x8000);
  return FloatToBfloat16(f);
}

void ConvertScalar(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = ToBf16(src[i]);
}

__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) void ConvertAvx512Bf16(const float* src, uint16_t* dst,
                                                                                       int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512i two = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(_mm512_loadu_ps(src + i + 16),
                                                                        _mm512_loadu_ps(src + i)));
    _mm512_storeu_si512(dst + i, two);
  }
  for (; i < n; i += 16) {
    const int64_t left = n - i;
    const __mmask16 m = left >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << left) - 1);
    const __m256i h = reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(m, src + i)));
    _mm256_mask_storeu_epi16(dst + i, m, h);
  }
}

__attribute__((target("avx512f"))) void WidenAvx512(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)));
    _mm512_storeu_ps(dst + i, _mm512_castsi512_ps(_mm512_slli_epi32(w, 16)));
  }
  for (; i < n; ++i) dst[i] = Bfloat16ToFloat(src[i]);
}

}  // namespace

void ConvertFromBf16(const uint16_t* src, float* dst, int64_t n, int threads) {
  static const bool has_avx512 = __builtin_cpu_supports("avx512f");
  ParallelFor(n, threads, int64_t{1} << 14, [&](int64_t begin, int64_t end) {
    if (has_avx512) {
      WidenAvx512(src + begin, dst + begin, end - begin);
    } else {
      for (int64_t i = begin; i < end; ++i) dst[i] = Bfloat16ToFloat(src[i]);
    }
  });
}

void ConvertToBf16(const float* src, uint16_t* dst, int64_t n, int threads) {
  static const bool has_bf16 = __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512bw") &&
                               __builtin_cpu_supports("avx512vl");
  // 16K elements (64 KiB read) per thread at least: below that a wake-up costs more.
  ParallelFor(n, threads, int64_t{1} << 14, [&](int64_t begin, int64_t end) {
    if (has_bf16) {
      ConvertAvx512Bf16(src + begin, dst + begin, end - begin);
    } else {
      ConvertScalar(src + begin, dst + begin, end - begin);
    }
  });
}

}  // namespace switchyard::native
