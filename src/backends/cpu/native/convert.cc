// f32 <-> bf16 conversion of activations for bf16 kernels (onednn::SrcConversion) and the
// Casts at the boundaries of bf16 activations (precision=bf16).
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "backends/cpu/native/elementwise_ops.h"
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

template <BinaryOp kOp>
__attribute__((target("avx512f"))) inline __m512 RowArithPs(__m512 a, __m512 b) {
  if constexpr (kOp == BinaryOp::kAdd) return _mm512_add_ps(a, b);
  if constexpr (kOp == BinaryOp::kSub) return _mm512_sub_ps(a, b);
  return _mm512_mul_ps(a, b);
}

template <BinaryOp kOp>
void RowsBf16Scalar(const uint16_t* a, const uint16_t* row, uint16_t* y, int64_t rows, int64_t c) {
  for (int64_t r = 0; r < rows; ++r, a += c, y += c) {
    for (int64_t j = 0; j < c; ++j) y[j] = ToBf16(Binary<kOp, float>(Bfloat16ToFloat(a[j]), Bfloat16ToFloat(row[j])));
  }
}

// The first popcount(m) bf16 values at p as floats (the other lanes zero).
__attribute__((target("avx512f,avx512bw,avx512vl"))) inline __m512 WidenMasked(__mmask16 m, const uint16_t* p) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_maskz_cvtepu16_epi32(m, _mm256_maskz_loadu_epi16(m, p)), 16));
}

// The row widened to floats once per call (up to kRowsBf16MaxC channels, in L1), then per
// pixel 32 channels a step: two 16-value halves widened, combined, and packed back into one
// 32-value store by vcvtne2ps2bf16; a masked 16-value step for the tail. Against one
// masked 16-value step with the row widened per pixel, 2x fewer instructions per value.
constexpr int64_t kRowsBf16MaxC = 4096;

template <BinaryOp kOp>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) void RowsBf16Avx512(const uint16_t* a,
                                                                                    const uint16_t* row, uint16_t* y,
                                                                                    int64_t rows, int64_t c) {
  alignas(64) float wide[kRowsBf16MaxC];
  for (int64_t j = 0; j < c; ++j) wide[j] = Bfloat16ToFloat(row[j]);
  const int64_t full = c / 32 * 32;
  for (int64_t r = 0; r < rows; ++r, a += c, y += c) {
    int64_t j = 0;
    for (; j < full; j += 32) {
      const __m512 lo = _mm512_castsi512_ps(_mm512_slli_epi32(
          _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + j))), 16));
      const __m512 hi = _mm512_castsi512_ps(_mm512_slli_epi32(
          _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + j + 16))), 16));
      const __m512bh v = _mm512_cvtne2ps_pbh(RowArithPs<kOp>(hi, _mm512_load_ps(wide + j + 16)),
                                             RowArithPs<kOp>(lo, _mm512_load_ps(wide + j)));
      _mm512_storeu_si512(y + j, reinterpret_cast<__m512i>(v));
    }
    for (; j < c; j += 16) {
      const int64_t left = c - j;
      const __mmask16 m = left >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << left) - 1);
      const __m512 v = RowArithPs<kOp>(WidenMasked(m, a + j), _mm512_maskz_loadu_ps(m, wide + j));
      _mm256_mask_storeu_epi16(y + j, m, reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(v)));
    }
  }
}

template <BinaryOp kOp>
void RowsBf16(const uint16_t* a, const uint16_t* row, uint16_t* y, int64_t rows, int64_t c) {
  HasAvx512Bf16() && c <= kRowsBf16MaxC ? RowsBf16Avx512<kOp>(a, row, y, rows, c)
                                        : RowsBf16Scalar<kOp>(a, row, y, rows, c);
}

}  // namespace

bool ApplyBinaryRowsBf16(BinaryOp op, const uint16_t* a, const uint16_t* row, uint16_t* y, int64_t rows, int64_t c) {
  switch (op) {
    case BinaryOp::kAdd: RowsBf16<BinaryOp::kAdd>(a, row, y, rows, c); return true;
    case BinaryOp::kSub: RowsBf16<BinaryOp::kSub>(a, row, y, rows, c); return true;
    case BinaryOp::kMul: RowsBf16<BinaryOp::kMul>(a, row, y, rows, c); return true;
    default: return false;
  }
}

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
