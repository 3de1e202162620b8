// f32 <-> bf16 conversion of activations for bf16 kernels (onednn::SrcConversion) and the
// Casts at the boundaries of bf16 activations (precision=bf16).
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "backends/cpu/native/native.h"
#include "ir/dtype.h"

// GCC 12's false maybe-uninitialized report on its own AVX-512 intrinsics (bug 105593; silu.cc).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

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

// 16 pixels of up to 4 planes (`stride` floats apart) into 16*c interleaved bf16 values:
// the planes converted pairwise into two vectors (planes 0|1 and 2|3, 16 values each), then
// each output vector of 32 takes its values from those 64 by one vpermt2w. idx[k][j] is the
// source of output value 32k + j: pixel (32k + j) / c of plane (32k + j) % c.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) void NhwcBlockAvx512(const float* src, int64_t stride,
                                                                                    int64_t c, uint16_t* dst,
                                                                                    const __m512i* idx) {
  const __m512 zero = _mm512_setzero_ps();
  const __m512 p0 = _mm512_loadu_ps(src);
  const __m512 p1 = c > 1 ? _mm512_loadu_ps(src + stride) : zero;
  const __m512 p2 = c > 2 ? _mm512_loadu_ps(src + 2 * stride) : zero;
  const __m512 p3 = c > 3 ? _mm512_loadu_ps(src + 3 * stride) : zero;
  const __m512i a = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(p1, p0));
  const __m512i b = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(p3, p2));
  for (int64_t k = 0; k * 32 < 16 * c; ++k) {
    const int64_t left = 16 * c - 32 * k;
    const __mmask32 m = left >= 32 ? ~__mmask32{0} : static_cast<__mmask32>((1u << left) - 1);
    _mm512_mask_storeu_epi16(dst + 32 * k, m, _mm512_permutex2var_epi16(a, idx[k], b));
  }
}

bool HasAvx512Bf16() {
  static const bool has = __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl");
  return has;
}

// Pixels [p0, p1) of one plain [c, pixels] image into nhwc, one value at a time.
void NhwcScalar(const float* src, uint16_t* dst, int64_t c, int64_t pixels, int64_t p0, int64_t p1) {
  for (int64_t p = p0; p < p1; ++p) {
    for (int64_t ch = 0; ch < c; ++ch) dst[p * c + ch] = ToBf16(src[ch * pixels + p]);
  }
}

__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) void NhwcAvx512(const float* src, uint16_t* dst,
                                                                               int64_t c, int64_t pixels,
                                                                               int64_t p0, int64_t p1) {
  alignas(64) int16_t table[2][32] = {};
  for (int64_t j = 0; j < 16 * c; ++j) table[j / 32][j % 32] = static_cast<int16_t>((j % c) * 16 + j / c);
  const __m512i idx[2] = {_mm512_load_si512(table[0]), _mm512_load_si512(table[1])};
  int64_t p = p0;
  for (; p + 16 <= p1; p += 16) NhwcBlockAvx512(src + p, pixels, c, dst + p * c, idx);
  NhwcScalar(src, dst, c, pixels, p, p1);
}

}  // namespace

void ConvertToBf16Nhwc(const float* src, uint16_t* dst, int64_t images, int64_t c, int64_t pixels, int threads) {
  const bool vec = HasAvx512Bf16() && c <= kMaxNhwcCastChannels;
  // Ranges of 1024 pixels over all images, split between the threads (12 KiB read at c = 3).
  constexpr int64_t kRange = 1024;
  const int64_t ranges = (pixels + kRange - 1) / kRange;
  ParallelFor(images * ranges, threads, 4, [&](int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end; ++u) {
      const int64_t img = u / ranges, p0 = u % ranges * kRange, p1 = std::min(pixels, p0 + kRange);
      const float* s = src + img * c * pixels;
      uint16_t* d = dst + img * c * pixels;
      vec ? NhwcAvx512(s, d, c, pixels, p0, p1) : NhwcScalar(s, d, c, pixels, p0, p1);
    }
  });
}

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
  const bool has_bf16 = HasAvx512Bf16();
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
