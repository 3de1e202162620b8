// The native blocked fp32 GEMM (see gemm.h).
#include "backends/cpu/native/gemm.h"

#include <algorithm>
#include <cstring>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "backends/cpu/native/native.h"

namespace switchyard::native {
namespace {

constexpr int64_t kMR = 6;
constexpr int64_t kNR = kGemmNR;
constexpr int64_t kKC = 256;  // K block: a 6x256 A panel + 256x16 B panel fit in L1
constexpr int64_t kMC = 132;  // M block: 132x256 packed A (132 KiB) stays in L2

using MicroFn = void (*)(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                         bool accumulate);

// c[6][16] (+)= sum_k a[k][0..6) x b[k][0..16).
void MicroPortable(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                   bool accumulate) {
  float acc[kMR][kNR] = {};
  for (int64_t k = 0; k < kc; ++k) {
    for (int64_t r = 0; r < kMR; ++r) {
      const float av = a[k * kMR + r];
      for (int64_t j = 0; j < kNR; ++j) acc[r][j] += av * b[k * kNR + j];
    }
  }
  for (int64_t r = 0; r < kMR; ++r) {
    for (int64_t j = 0; j < kNR; ++j) c[r * ldc + j] = (accumulate ? c[r * ldc + j] : 0.f) + acc[r][j];
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
// c[6][16] (+)= sum_k a(r, k) x b[k][0..16) with A's element (r, k) at a[r*rsa + k*kStep]:
// packed panels (rsa 1, kStep 6) or rows read in place (rsa the row stride, kStep 1; for
// GEMMs with few B panels, where packing A would cost as much as the products: a
// convolution's row GEMM with 24 output channels has 2 panels).
template <int64_t kStep>
__attribute__((target("avx2,fma"))) inline void MicroAvx2Tile(int64_t kc, const float* a, int64_t rsa,
                                                              const float* b, float* c, int64_t ldc,
                                                              bool accumulate) {
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00,
         c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  const float *a0 = a, *a1 = a + rsa, *a2 = a + 2 * rsa, *a3 = a + 3 * rsa, *a4 = a + 4 * rsa,
              *a5 = a + 5 * rsa;
  // The C tile's rows lie ldc apart, out of the hardware prefetcher's reach: asked for now,
  // they arrive while the k loop runs.
  for (int64_t r = 0; r < kMR; ++r) {
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + kNR - 1), _MM_HINT_T0);
  }
  for (int64_t k = 0; k < kc; ++k) {
    const __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
    const int64_t o = k * kStep;
    __m256 av = _mm256_broadcast_ss(a0 + o);
    c00 = _mm256_fmadd_ps(av, b0, c00);
    c01 = _mm256_fmadd_ps(av, b1, c01);
    av = _mm256_broadcast_ss(a1 + o);
    c10 = _mm256_fmadd_ps(av, b0, c10);
    c11 = _mm256_fmadd_ps(av, b1, c11);
    av = _mm256_broadcast_ss(a2 + o);
    c20 = _mm256_fmadd_ps(av, b0, c20);
    c21 = _mm256_fmadd_ps(av, b1, c21);
    av = _mm256_broadcast_ss(a3 + o);
    c30 = _mm256_fmadd_ps(av, b0, c30);
    c31 = _mm256_fmadd_ps(av, b1, c31);
    av = _mm256_broadcast_ss(a4 + o);
    c40 = _mm256_fmadd_ps(av, b0, c40);
    c41 = _mm256_fmadd_ps(av, b1, c41);
    av = _mm256_broadcast_ss(a5 + o);
    c50 = _mm256_fmadd_ps(av, b0, c50);
    c51 = _mm256_fmadd_ps(av, b1, c51);
    b += kNR;
  }
  const __m256 rows[kMR][2] = {{c00, c01}, {c10, c11}, {c20, c21},
                               {c30, c31}, {c40, c41}, {c50, c51}};
  for (int64_t r = 0; r < kMR; ++r) {
    float* cr = c + r * ldc;
    __m256 v0 = rows[r][0], v1 = rows[r][1];
    if (accumulate) {
      v0 = _mm256_add_ps(v0, _mm256_loadu_ps(cr));
      v1 = _mm256_add_ps(v1, _mm256_loadu_ps(cr + 8));
    }
    _mm256_storeu_ps(cr, v0);
    _mm256_storeu_ps(cr + 8, v1);
  }
}

__attribute__((target("avx2,fma"))) void MicroAvx2(int64_t kc, const float* a, const float* b,
                                                   float* c, int64_t ldc, bool accumulate) {
  MicroAvx2Tile<kMR>(kc, a, 1, b, c, ldc, accumulate);
}
__attribute__((target("avx2,fma"))) void MicroAvx2Rows(int64_t kc, const float* a, int64_t rsa,
                                                       const float* b, float* c, int64_t ldc,
                                                       bool accumulate) {
  MicroAvx2Tile<1>(kc, a, rsa, b, c, ldc, accumulate);
}

// AVX-512: c[6][16*NP] (+)= A x NP adjacent 16-column B panels (panel j at b + j*bstride),
// one zmm per row and panel: 6*NP accumulators, NP B loads and 6 broadcasts per k (the
// 6x64 tile: 10 loads per 24 FMAs, the 6x32 one 8 per 12). A as in MicroAvx2Tile: packed
// (kStep 6) or rows read in place, rsa apart (kStep 1).
template <int NP, int64_t kStep>
__attribute__((target("avx512f"))) inline void MicroAvx512Tile(int64_t kc, const float* a, int64_t rsa,
                                                               const float* b, int64_t bstride,
                                                               float* c, int64_t ldc, bool accumulate) {
  __m512 acc[kMR][NP];
#pragma GCC unroll 8
  for (int r = 0; r < kMR; ++r) {
#pragma GCC unroll 8
    for (int j = 0; j < NP; ++j) acc[r][j] = _mm512_setzero_ps();
  }
  for (int64_t r = 0; r < kMR; ++r) {
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + NP * kNR - 1), _MM_HINT_T0);
  }
  for (int64_t k = 0; k < kc; ++k) {
    __m512 v[NP];
#pragma GCC unroll 8
    for (int j = 0; j < NP; ++j) v[j] = _mm512_loadu_ps(b + j * bstride + k * kNR);
    const int64_t o = k * kStep;
#pragma GCC unroll 8
    for (int r = 0; r < kMR; ++r) {
      const __m512 av = _mm512_set1_ps(a[(kStep == 1 ? r * rsa : r) + o]);
#pragma GCC unroll 8
      for (int j = 0; j < NP; ++j) acc[r][j] = _mm512_fmadd_ps(av, v[j], acc[r][j]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < kMR; ++r) {
    float* cr = c + r * ldc;
#pragma GCC unroll 8
    for (int j = 0; j < NP; ++j) {
      __m512 w = acc[r][j];
      if (accumulate) w = _mm512_add_ps(w, _mm512_loadu_ps(cr + j * kNR));
      _mm512_storeu_ps(cr + j * kNR, w);
    }
  }
}

template <int NP, int64_t kStep>
__attribute__((target("avx512f"))) void MicroAvx512(int64_t kc, const float* a, int64_t rsa, const float* b,
                                                    int64_t bstride, float* c, int64_t ldc, bool accumulate) {
  MicroAvx512Tile<NP, kStep>(kc, a, rsa, b, bstride, c, ldc, accumulate);
}
#endif

// NP panels at once (AVX-512; NP 2 or 4), or null: A packed ([kc][6]; rsa unused), or
// A's rows read in place, rsa apart.
using MicroWideFn = void (*)(int64_t kc, const float* a, int64_t rsa, const float* b, int64_t bstride,
                             float* c, int64_t ldc, bool accumulate);
template <int NP>
MicroWideFn PickMicroWide(bool rows) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx512f")) return rows ? MicroAvx512<NP, 1> : MicroAvx512<NP, kMR>;
#endif
  (void)rows;
  return nullptr;
}
const MicroWideFn kMicroPair = PickMicroWide<2>(false), kMicroPairRows = PickMicroWide<2>(true);
const MicroWideFn kMicroQuad = PickMicroWide<4>(false);

using MicroRowsFn = void (*)(int64_t kc, const float* a, int64_t rsa, const float* b, float* c,
                             int64_t ldc, bool accumulate);
MicroRowsFn PickMicroRows() {
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return MicroAvx2Rows;
#endif
  return nullptr;  // the portable path packs A
}
const MicroRowsFn kMicroRows = PickMicroRows();

MicroFn PickMicro() {
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return MicroAvx2;
#endif
  return MicroPortable;
}

const MicroFn kMicro = PickMicro();

// Packs rows [0, mc) x cols [0, kc) of A (already offset) into 6-row panels [kc][6].
void PackA(const float* a, int64_t rsa, int64_t csa, int64_t mc, int64_t kc, float* out) {
  for (int64_t p = 0; p < mc; p += kMR) {
    const int64_t rows = std::min(kMR, mc - p);
    float* o = out + p * kc;
    if (csa == 1) {
      for (int64_t r = 0; r < kMR; ++r) {
        const float* src = a + (p + r) * rsa;
        if (r < rows) {
          for (int64_t k = 0; k < kc; ++k) o[k * kMR + r] = src[k];
        } else {
          for (int64_t k = 0; k < kc; ++k) o[k * kMR + r] = 0.f;
        }
      }
    } else {
      for (int64_t k = 0; k < kc; ++k) {
        for (int64_t r = 0; r < kMR; ++r) {
          o[k * kMR + r] = r < rows ? a[(p + r) * rsa + k * csa] : 0.f;
        }
      }
    }
  }
}

void Epilogue(const GemmEpilogue& ep, int64_t m0, int64_t m1, int64_t n0, int64_t n1, float* c,
              int64_t ldc) {
  const bool plain = ep.alpha == 1.f && !ep.add[0] && !ep.add[1] && ep.act == UnaryOp::kNone;
  if (plain) return;
  for (int64_t m = m0; m < m1; ++m) {
    float* row = c + m * ldc + n0;
    const int64_t n = n1 - n0;
    if (ep.alpha != 1.f) {
      for (int64_t j = 0; j < n; ++j) row[j] *= ep.alpha;
    }
    for (int i = 0; i < 2; ++i) {
      if (!ep.add[i]) continue;
      const float* p = ep.add[i] + m * ep.add_rs[i] + n0 * ep.add_cs[i];
      const float s = ep.add_scale[i];
      if (ep.add_cs[i] == 1) {
        for (int64_t j = 0; j < n; ++j) row[j] += s * p[j];
      } else {
        for (int64_t j = 0; j < n; ++j) row[j] += s * p[j * ep.add_cs[i]];
      }
    }
    if (ep.act != UnaryOp::kNone) ApplyUnary(ep.act, ep.act_params, row, row, n);
  }
}

}  // namespace

int64_t PackedBSize(int64_t K, int64_t N) { return (N + kNR - 1) / kNR * kNR * K; }

void PackB(const float* b, int64_t K, int64_t N, int64_t rs, int64_t cs, float* out) {
  const int64_t panels = (N + kNR - 1) / kNR;
  for (int64_t p = 0; p < panels; ++p) {
    float* o = out + p * K * kNR;
    const int64_t n0 = p * kNR, cols = std::min(kNR, N - n0);
    for (int64_t k = 0; k < K; ++k) {
      const float* src = b + k * rs + n0 * cs;
      float* dst = o + k * kNR;
      if (cs == 1) {
        std::memcpy(dst, src, cols * sizeof(float));
      } else {
        for (int64_t j = 0; j < cols; ++j) dst[j] = src[j * cs];
      }
      for (int64_t j = cols; j < kNR; ++j) dst[j] = 0.f;
    }
  }
}

void GemmPacked(int64_t M, int64_t N, int64_t K, const float* a, int64_t rsa, int64_t csa,
                const float* packed_b, float* c, int64_t ldc, const GemmEpilogue& ep,
                int threads, bool accumulate, bool a_in_place) {
  if (M <= 0 || N <= 0) return;
  const int64_t m_blocks = (M + kMC - 1) / kMC;
  // Equal M blocks (a multiple of 6 rows each): ViT's 197 rows as 102 + 95, not 132 + 65,
  // so that the threads' tiles are the same size (with 96-row blocks a transformer's
  // M = 128 ran 3:1 between two threads).
  const int64_t mc_even = std::min(kMC, ((M + m_blocks - 1) / m_blocks + kMR - 1) / kMR * kMR);
  const int64_t panels = (N + kNR - 1) / kNR;
  // Rough work per tile decides whether waking threads pays (2*M*N*K flops).
  const double flops = 2.0 * M * N * std::max<int64_t>(K, 1);
  const int use_threads = flops < 2e5 ? 1 : threads;
  // Few panels: read full 6-row groups of A in place (unit column stride); the partial
  // group at the end and every other case go through the packed path.
  const bool in_place = kMicroRows && csa == 1 && (panels <= 2 || a_in_place);
  // Fewer M blocks than threads (a transformer's M = 128 on 2 threads): the threads split
  // N, so each would pack the same rows of A. Then A is packed once, whole, by all threads
  // together (6-row groups, each [K][6]), and the threads take N tiles of it dynamically,
  // about four per thread (a descheduled vCPU no longer holds the others up). The
  // [128,768]x[768,3072] + [128,3072]x[3072,768] pair at 2 threads: 11.9-12.0 ms -> 11.0
  // (ORT 10.4). Otherwise one tile per thread, each packing its own rows of A per K block
  // (with two per thread that pair took 12.9 ms: every tile packed its rows again).
  const bool shared_a = use_threads > 1 && !in_place && m_blocks < use_threads;
  const int64_t want = std::max<int64_t>(1, ((shared_a ? 4 : 1) * use_threads + m_blocks - 1) / m_blocks);
  const int64_t n_groups = std::min(panels, use_threads > 1 ? want : 1);
  const int64_t tiles = m_blocks * n_groups;
  thread_local std::vector<float> whole_a;  // the calling thread's; read by the team
  float* const whole = shared_a ? ScratchOf(whole_a, static_cast<size_t>((M + kMR - 1) / kMR * kMR * K)) : nullptr;
  const float* const packed_a = whole;

  // Tile t: M block t / n_groups, N panels of group t % n_groups, every K block.
  auto run_tile = [&](int64_t t, float* apack) {
    float edge[kMR * kNR];
    const int64_t mb = t / n_groups, g = t % n_groups;
    const int64_t m0 = mb * mc_even, mc = std::min(mc_even, M - m0);
    if (mc <= 0) return;
    const int64_t p0 = panels * g / n_groups, p1 = panels * (g + 1) / n_groups;
    if (K == 0 && !accumulate) {
      for (int64_t m = m0; m < m0 + mc; ++m) {
        std::fill(c + m * ldc + p0 * kNR, c + m * ldc + std::min(N, p1 * kNR), 0.f);
      }
    }
    for (int64_t k0 = 0; k0 < K; k0 += kKC) {
      const int64_t kc = std::min(kKC, K - k0);
      const bool acc = k0 > 0 || accumulate;
      // The epilogue runs on each micro-tile right after its last K block, while the tile
      // is still in L1 (a pass over the whole tile afterwards read it back from L3).
      const bool last = k0 + kc >= K;
      const int64_t full = mc / kMR * kMR;  // rows in whole 6-row groups
      // A packed whole (shared_a) needs no packing here: the group of row m0 + r starts at
      // packed_a + (m0 + r) * K, its K block at k0 * 6 within it.
      if (!packed_a && in_place) {
        if (full < mc) PackA(a + (m0 + full) * rsa + k0, rsa, 1, mc - full, kc, apack + full * kc);
      } else if (!packed_a) {
        PackA(a + m0 * rsa + k0 * csa, rsa, csa, mc, kc, apack);
      }
      auto a_panel = [&](int64_t r) {
        return packed_a ? packed_a + (m0 + r) * K + k0 * kMR : apack + r * kc;
      };
      // One micro-tile: rows [r, r + rows) of the block x panel p.
      auto one_panel = [&](int64_t p, int64_t r, int64_t rows) {
        const float* bp = packed_b + p * K * kNR + k0 * kNR;
        const int64_t n0 = p * kNR, cols = std::min(kNR, N - n0);
        float* cp = c + (m0 + r) * ldc + n0;
        if (in_place && rows == kMR && cols == kNR) {
          kMicroRows(kc, a + (m0 + r) * rsa + k0, rsa, bp, cp, ldc, acc);
        } else if (rows == kMR && cols == kNR) {
          kMicro(kc, a_panel(r), bp, cp, ldc, acc);
        } else {
          // Edge tile: compute into a full 6x16 scratch, then copy the valid part.
          if (acc) {
            for (int64_t i = 0; i < rows; ++i) {
              std::memcpy(edge + i * kNR, cp + i * ldc, cols * sizeof(float));
            }
          }
          if (in_place && rows == kMR) {
            kMicroRows(kc, a + (m0 + r) * rsa + k0, rsa, bp, edge, kNR, acc);
          } else {
            kMicro(kc, a_panel(r), bp, edge, kNR, acc);
          }
          for (int64_t i = 0; i < rows; ++i) {
            std::memcpy(cp + i * ldc, edge + i * kNR, cols * sizeof(float));
          }
        }
        if (last) Epilogue(ep, m0 + r, m0 + r + rows, n0, n0 + cols, c, ldc);
      };
      for (int64_t p = p0; p < p1;) {
        // Where the CPU has AVX-512: four full panels at once where A is packed (a 6x64
        // tile), else two (6x32).
        int64_t np = 1;
        if (kMicroPair && !in_place && p + 3 < p1 && (p + 4) * kNR <= N) {
          np = 4;
        } else if (kMicroPair && p + 1 < p1 && (p + 2) * kNR <= N) {
          np = 2;
        }
        for (int64_t r = 0; r < mc; r += kMR) {
          const int64_t rows = std::min(kMR, mc - r);
          if (np > 1 && rows == kMR) {
            const float* bp = packed_b + p * K * kNR + k0 * kNR;
            const int64_t n0 = p * kNR;
            float* cp = c + (m0 + r) * ldc + n0;
            const MicroWideFn fn = in_place ? kMicroPairRows : np == 4 ? kMicroQuad : kMicroPair;
            if (in_place) {
              fn(kc, a + (m0 + r) * rsa + k0, rsa, bp, K * kNR, cp, ldc, acc);
            } else {
              fn(kc, a_panel(r), 0, bp, K * kNR, cp, ldc, acc);
            }
            if (last) Epilogue(ep, m0 + r, m0 + r + rows, n0, n0 + np * kNR, c, ldc);
            continue;
          }
          for (int64_t j = 0; j < np; ++j) one_panel(p + j, r, rows);
        }
        p += np;
      }
    }
    if (K == 0) Epilogue(ep, m0, m0 + mc, p0 * kNR, std::min(N, p1 * kNR), c, ldc);
  };

  if (!shared_a) {
    ParallelFor(tiles, use_threads, 1, [&](int64_t t0, int64_t t1) {
      thread_local std::vector<float> apack;
      float* const ap = ScratchOf(apack, static_cast<size_t>(kMC * kKC));
      for (int64_t t = t0; t < t1; ++t) run_tile(t, ap);
    });
    return;
  }
  const int64_t groups = (M + kMR - 1) / kMR;
  auto pack_groups = [&](int64_t g0, int64_t g1) {
    if (g1 > g0) PackA(a + g0 * kMR * rsa, rsa, csa, std::min(M, g1 * kMR) - g0 * kMR, K, whole + g0 * kMR * K);
  };
#ifdef _OPENMP
  // The same team size as every other step (native.h: ParallelFor).
#pragma omp parallel num_threads(use_threads)
  {
    const int64_t nt = omp_get_num_threads(), tid = omp_get_thread_num();
    pack_groups(groups * tid / nt, groups * (tid + 1) / nt);
#pragma omp barrier
#pragma omp for schedule(dynamic, 1)
    for (int64_t t = 0; t < tiles; ++t) run_tile(t, nullptr);
  }
#else
  pack_groups(0, groups);
  for (int64_t t = 0; t < tiles; ++t) run_tile(t, nullptr);
#endif
}

void Gemm(int64_t M, int64_t N, int64_t K, const float* a, int64_t rsa, int64_t csa,
          const float* b, int64_t rsb, int64_t csb, float* c, int64_t ldc,
          const GemmEpilogue& ep, int threads, bool a_in_place) {
  thread_local std::vector<float> bpack;
  ScratchOf(bpack, static_cast<size_t>(PackedBSize(K, N)));
  PackB(b, K, N, rsb, csb, bpack.data());
  GemmPacked(M, N, K, a, rsa, csa, bpack.data(), c, ldc, ep, threads, /*accumulate=*/false, a_in_place);
}

}  // namespace switchyard::native
