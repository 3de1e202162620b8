// e^x on AVX-512 lanes, for the native kernels that need it vectorized (softmax.cc's rows):
// x clamped to [-104, 88.8], n = round(x log2 e), r = x - n ln2
// with ln2 split in two, a degree-6 Taylor polynomial of e^r, and vscalefps for 2^n (inf
// and 0 come out without exponent arithmetic; NaN stays NaN). About 2e-7 relative error
// where the result is a normal number. Callers compile it for AVX-512 (target attribute)
// and choose it at run time.
#pragma once

#include <immintrin.h>

// GCC 12 reports the undefined pass-through operand of its own AVX-512 intrinsics
// (_mm512_undefined_ps inside _mm512_max_ps, ...) as maybe-uninitialized once inlined
// (GCC bug 105593, fixed in 13): a false positive, silenced for this function alone.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace switchyard::native {

__attribute__((target("avx512f"))) inline __m512 ExpAvx512(__m512 x) {
  // x (not n alone) clamped, NaN passing through (vminps/vmaxps return their second
  // operand when one is NaN): clamping only n left r = x - n ln2 unbounded, so e^-1e6 came
  // out 4e-6 and e^-1e9 inf.
  x = _mm512_max_ps(_mm512_set1_ps(-104.f), _mm512_min_ps(_mm512_set1_ps(88.8f), x));
  const __m512 t = _mm512_mul_ps(x, _mm512_set1_ps(1.44269504089f));
  const __m512 n = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145751953125f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.428606765330187e-06f), r);
  __m512 p = _mm512_set1_ps(1.f / 720);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f / 120));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f / 24));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f / 6));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f));
  return _mm512_scalef_ps(p, n);
}

}  // namespace switchyard::native

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
