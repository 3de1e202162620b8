// The native blocked fp32 GEMM: B is packed into 16-column panels (once at build time
// when B is a constant), A is packed per (at most) 132x256 block into 6-row panels (read in
// place instead when B has at most two panels; packed whole, once, by all threads together
// when there are fewer M blocks than threads), and a register-blocked micro-kernel
// accumulates into C: 6x64 over four panels (packed A) or 6x32 over two with AVX-512, 6x16
// with AVX2/FMA, portable C++ otherwise. Tiles of C are
// spread over OpenMP threads; the epilogue (alpha, bias/C, residual, activation) runs on
// each 6x16 micro-tile after its last K block, while it is still in L1.
#pragma once

#include <cstdint>

#include "backends/cpu/native/elementwise_ops.h"

namespace switchyard::native {

constexpr int64_t kGemmNR = 16;  // columns per packed B panel

// Floats needed to pack a K x N matrix B.
int64_t PackedBSize(int64_t K, int64_t N);
// Packs B (element (k, n) at b[k*rs + n*cs]) into panels [N/16][K][16], zero padded.
void PackB(const float* b, int64_t K, int64_t N, int64_t rs, int64_t cs, float* out);

struct GemmEpilogue {
  float alpha = 1.f;  // scales A·B
  // Up to two addends, element (m, n) at p[m*rs + n*cs] (0 strides broadcast), each
  // multiplied by its scale: Gemm's beta·C or FusedMatMul's bias and residual.
  const float* add[2] = {nullptr, nullptr};
  int64_t add_rs[2] = {0, 0}, add_cs[2] = {0, 0};
  float add_scale[2] = {1.f, 1.f};
  UnaryOp act = UnaryOp::kNone;
  UnaryParams act_params;
};

// C (M x N, row stride ldc) = epilogue(A · B) with A's element (m, k) at a[m*rsa + k*csa]
// and B packed by PackB. Uses up to `threads` OpenMP threads. `accumulate`: C's values
// are kept and A · B added to them before the epilogue (a sum of GEMMs, e.g. the kernel
// rows of a convolution). `a_in_place`: A's rows (unit column stride) are read where they
// are rather than packed, as they are anyway when B has at most two panels: for an A the
// caller just wrote (attention's probabilities), whose packing cost as much as its
// products.
void GemmPacked(int64_t M, int64_t N, int64_t K, const float* a, int64_t rsa, int64_t csa,
                const float* packed_b, float* c, int64_t ldc, const GemmEpilogue& ep,
                int threads, bool accumulate = false, bool a_in_place = false);

// Convenience: packs B into a thread-local buffer, then GemmPacked.
void Gemm(int64_t M, int64_t N, int64_t K, const float* a, int64_t rsa, int64_t csa,
          const float* b, int64_t rsb, int64_t csb, float* c, int64_t ldc,
          const GemmEpilogue& ep, int threads, bool a_in_place = false);

}  // namespace switchyard::native
