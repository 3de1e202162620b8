// Dense products: Gemm, MatMul, MatMulInteger, and the blocked fp64 GEMM core.
#include <cstring>
#include <thread>

#include "reference/ops/conv_common.h"

namespace switchyard::ops {

namespace {

constexpr int64_t kRows = 4, kCols = 16, kDepth = 256;  // register tile, k block

// Eight doubles (GCC's vector extension: one zmm on AVX-512, two ymm on AVX2, four xmm
// otherwise).
using V8 = double __attribute__((vector_size(64)));
[[gnu::always_inline]] inline void Load8(V8& v, const double* p) { std::memcpy(&v, p, sizeof v); }

// C[kRows x kCols] += A[kRows x kn] * B[kn x kCols]: the tile's sums stay in registers over
// the k block (8 zmm on AVX-512); each B row is loaded once per four rows of A.
[[gnu::always_inline]] inline void Tile(const double* a, int64_t lda, const double* b, int64_t ldb, double* c,
                                        int64_t ldc, int64_t kn) {
  V8 acc[kRows][2];
  for (int64_t r = 0; r < kRows; ++r) {
    Load8(acc[r][0], c + r * ldc);
    Load8(acc[r][1], c + r * ldc + 8);
  }
  for (int64_t kk = 0; kk < kn; ++kk) {
    V8 b0, b1;
    Load8(b0, b + kk * ldb);
    Load8(b1, b + kk * ldb + 8);
    for (int64_t r = 0; r < kRows; ++r) {
      const double av = a[r * lda + kk];
      acc[r][0] += av * b0;
      acc[r][1] += av * b1;
    }
  }
  for (int64_t r = 0; r < kRows; ++r) {
    std::memcpy(c + r * ldc, &acc[r][0], sizeof(V8));
    std::memcpy(c + r * ldc + 8, &acc[r][1], sizeof(V8));
  }
}

// The same sums for a ragged edge (rows < kRows or cols < kCols), in the same k order.
[[gnu::always_inline]] inline void Edge(const double* a, int64_t lda, const double* b, int64_t ldb, double* c,
                                        int64_t ldc, int64_t rows, int64_t cols, int64_t kn) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < cols; ++j) {
      double v = c[r * ldc + j];
      for (int64_t kk = 0; kk < kn; ++kk) v += a[r * lda + kk] * b[kk * ldb + j];
      c[r * ldc + j] = v;
    }
  }
}

// Rows [r0, r1) of C, r0 a multiple of kRows: every element's sum runs over k in order,
// the same way whatever the row range, so the result does not depend on how many threads
// share the rows. The AVX2 and AVX-512 builds contract each term into an FMA (the generic
// one does not): a reference's last bits can differ between CPUs, never between runs.
// (As SY_NATIVE_CLONES in native/elementwise_ops.h: g++ on x86-64 only, and not under TSan,
// whose instrumentation of the ifunc resolvers crashed every binary at load.)
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
void GemmRows(const double* a, int64_t lda, const double* b, int64_t ldb, double* c, int64_t ldc,
              int64_t r0, int64_t r1, int64_t n, int64_t k) {
  // Only when some full panel exists (tiny products, e.g. the conformance cases', have none).
  std::vector<double> panel(n >= kCols ? static_cast<size_t>(std::min(k, kDepth) * kCols) : 0);
  for (int64_t k0 = 0; k0 < k; k0 += kDepth) {
    const int64_t kn = std::min(kDepth, k - k0);
    const double* bk = b + k0 * ldb;
    int64_t j = 0;
    for (; j + kCols <= n; j += kCols) {
      // The B panel kn x kCols copied contiguous (32 KB, stays in L1 for every row tile):
      // read in place, each of its rows was a page apart in ViT's linear layers.
      for (int64_t kk = 0; kk < kn; ++kk) std::memcpy(&panel[kk * kCols], bk + kk * ldb + j, kCols * sizeof(double));
      int64_t i = r0;
      for (; i + kRows <= r1; i += kRows) Tile(a + i * lda + k0, lda, panel.data(), kCols, c + i * ldc + j, ldc, kn);
      if (i < r1) Edge(a + i * lda + k0, lda, panel.data(), kCols, c + i * ldc + j, ldc, r1 - i, kCols, kn);
    }
    if (j < n) Edge(a + r0 * lda + k0, lda, bk + j, ldb, c + r0 * ldc + j, ldc, r1 - r0, n - j, kn);
  }
}

}  // namespace

void GemmAccumulate(const double* a, int64_t lda, const double* b, int64_t ldb, double* c,
                    int64_t ldc, int64_t m, int64_t n, int64_t k) {
  // The tuner computes every reference output here before its first candidate: a plain
  // fp64 loop took 31 s of ViT-B/16 b8's on 2 Xeon cores. Large products share their rows
  // among the CPU's threads (at most 16), in whole tiles.
  const int64_t tiles = (m + kRows - 1) / kRows;
  const int64_t work = m * n * k;
  const int64_t threads = std::min<int64_t>({tiles, 16, std::max<int64_t>(1, std::thread::hardware_concurrency()),
                                             std::max<int64_t>(1, work >> 22)});
  if (threads <= 1) return GemmRows(a, lda, b, ldb, c, ldc, 0, m, n, k);
  std::vector<std::thread> pool;
  for (int64_t t = 0; t < threads; ++t) {
    const int64_t r0 = tiles * t / threads * kRows, r1 = std::min(m, tiles * (t + 1) / threads * kRows);
    if (r0 < r1) pool.emplace_back([=] { GemmRows(a, lda, b, ldb, c, ldc, r0, r1, n, k); });
  }
  for (std::thread& th : pool) th.join();
}

Result<std::vector<int64_t>> MatMulShape(const Node& node, const std::vector<int64_t>& a,
                                         const std::vector<int64_t>& b) {
  if (a.empty() || b.empty()) return NodeError(node, "MatMul inputs must not be scalars");
  const int64_t ka = a.back();
  const int64_t kb = b.size() == 1 ? b[0] : b[b.size() - 2];
  if (ka != kb) {
    return NodeError(node, "inner dimensions differ: " + ShapeToString(a) + " x " +
                               ShapeToString(b));
  }
  std::vector<int64_t> ab, bb;
  if (a.size() > 2) ab.assign(a.begin(), a.end() - 2);
  if (b.size() > 2) bb.assign(b.begin(), b.end() - 2);
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> out, BroadcastShapes(node, {ab, bb}));
  if (a.size() >= 2) out.push_back(a[a.size() - 2]);
  if (b.size() >= 2) out.push_back(b.back());
  return out;
}

Result<TensorType> InferMatMulType(const Node& node, const TensorType* a, const TensorType* b,
                                   DataType out) {
  if (!a || !b) return NodeError(node, "both inputs are required");
  if (!a->has_shape || !b->has_shape) return TensorType::Unranked(out);
  if (a->rank() == 0 || b->rank() == 0) return NodeError(node, "inputs must not be scalars");
  const Dim& ka = a->dims.back();
  const Dim& kb = b->rank() == 1 ? b->dims[0] : b->dims[b->dims.size() - 2];
  if (ka.is_static() && kb.is_static() && ka.value != kb.value) {
    return NodeError(node, "inner dimensions differ: " + a->ToString() + " x " + b->ToString());
  }
  std::vector<Dim> ab, bb;
  if (a->rank() > 2) ab.assign(a->dims.begin(), a->dims.end() - 2);
  if (b->rank() > 2) bb.assign(b->dims.begin(), b->dims.end() - 2);
  SY_ASSIGN_OR_RETURN(std::vector<Dim> dims, BroadcastDims(node, {ab, bb}));
  if (a->rank() >= 2) dims.push_back(a->dims[a->dims.size() - 2]);
  if (b->rank() >= 2) dims.push_back(b->dims.back());
  return TensorType(out, dims);
}

std::vector<double> MatMulCore(const double* a, const std::vector<int64_t>& as,
                               const double* b, const std::vector<int64_t>& bs) {
  const int64_t m = as.size() >= 2 ? as[as.size() - 2] : 1;
  const int64_t k = as.back();
  const int64_t n = bs.size() >= 2 ? bs.back() : 1;
  std::vector<int64_t> ab, bb;
  if (as.size() > 2) ab.assign(as.begin(), as.end() - 2);
  if (bs.size() > 2) bb.assign(bs.begin(), bs.end() - 2);
  const size_t rank = std::max(ab.size(), bb.size());
  std::vector<int64_t> ob(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i + ab.size() >= rank ? ab[i + ab.size() - rank] : 1;
    const int64_t db = i + bb.size() >= rank ? bb[i + bb.size() - rank] : 1;
    ob[i] = da == 1 ? db : da;
  }
  const std::vector<int64_t> ai = BroadcastIndex(ab, ob), bi = BroadcastIndex(bb, ob);
  std::vector<double> out(ai.size() * static_cast<size_t>(m * n), 0.0);
  for (size_t t = 0; t < ai.size(); ++t) {
    GemmAccumulate(a + ai[t] * m * k, k, b + bi[t] * k * n, n,
                   out.data() + static_cast<int64_t>(t) * m * n, n, m, n, k);
  }
  return out;
}

namespace {

bool IsMatMulDtype(DataType t) {
  return IsFloatingDtype(t) || t == DataType::kInt32 || t == DataType::kInt64 ||
         t == DataType::kUint32 || t == DataType::kUint64;
}

Result<std::vector<TensorType>> InferMatMul(const InferContext& ctx) {
  SY_ASSIGN_OR_RETURN(DataType t, SameDtype(ctx, {0, 1}));
  if (t != DataType::kUndefined && !IsMatMulDtype(t)) {
    return NodeError(ctx.node, std::string("unsupported dtype ") + DataTypeName(t));
  }
  SY_ASSIGN_OR_RETURN(TensorType out, InferMatMulType(ctx.node, ctx.input(0), ctx.input(1), t));
  return std::vector<TensorType>{out};
}

Result<std::vector<Tensor>> RunMatMul(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* a, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* b, RequireInput(ctx, 1));
  if (a->dtype() != b->dtype() || !IsMatMulDtype(a->dtype())) {
    return NodeError(ctx.node, "inputs must share a numeric dtype");
  }
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> shape, MatMulShape(ctx.node, a->shape(), b->shape()));
  const std::vector<double> ad = ToDoubles(*a), bd = ToDoubles(*b);
  const std::vector<double> out = MatMulCore(ad.data(), a->shape(), bd.data(), b->shape());
  Tensor y(a->dtype(), shape);
  StoreDoubles(y, out.data());
  return std::vector<Tensor>{std::move(y)};
}

// Per-tensor, per-row (A) or per-column (B) zero point subtracted from an integer tensor.
Result<std::vector<double>> Centered(const Node& node, const Tensor& x, const Tensor* zp,
                                     bool is_a) {
  std::vector<double> v = ToDoubles(x);
  if (!zp || zp->numel() == 0) return v;
  if (zp->dtype() != x.dtype()) return NodeError(node, "zero point dtype differs from its input");
  if (zp->numel() == 1) {
    const double z = zp->GetDouble(0);
    for (double& e : v) e -= z;
    return v;
  }
  const int64_t r = x.rank();
  const int64_t rows = r >= 2 ? x.dim(r - 2) : 1, cols = x.dim(r - 1);
  if (zp->numel() != (is_a ? rows : cols)) {
    return NodeError(node, "zero point has " + std::to_string(zp->numel()) +
                               " elements, expected 1 or " + std::to_string(is_a ? rows : cols));
  }
  const std::vector<double> z = ToDoubles(*zp);
  for (size_t i = 0; i < v.size(); ++i) {
    const int64_t ii = static_cast<int64_t>(i);
    v[i] -= z[static_cast<size_t>(is_a ? (ii / cols) % rows : ii % cols)];
  }
  return v;
}

bool IsInt8Dtype(DataType t) { return t == DataType::kInt8 || t == DataType::kUint8; }

Result<std::vector<TensorType>> InferMatMulInteger(const InferContext& ctx) {
  for (size_t i : {0, 1}) {
    const TensorType* t = ctx.input(i);
    if (t && t->dtype != DataType::kUndefined && !IsInt8Dtype(t->dtype)) {
      return NodeError(ctx.node, "inputs must be int8 or uint8");
    }
  }
  SY_ASSIGN_OR_RETURN(TensorType out, InferMatMulType(ctx.node, ctx.input(0), ctx.input(1),
                                                      DataType::kInt32));
  return std::vector<TensorType>{out};
}

Result<std::vector<Tensor>> RunMatMulInteger(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* a, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* b, RequireInput(ctx, 1));
  if (!IsInt8Dtype(a->dtype()) || !IsInt8Dtype(b->dtype())) {
    return NodeError(ctx.node, "inputs must be int8 or uint8");
  }
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> shape, MatMulShape(ctx.node, a->shape(), b->shape()));
  SY_ASSIGN_OR_RETURN(std::vector<double> ad, Centered(ctx.node, *a, ctx.input(2), true));
  SY_ASSIGN_OR_RETURN(std::vector<double> bd, Centered(ctx.node, *b, ctx.input(3), false));
  const std::vector<double> out = MatMulCore(ad.data(), a->shape(), bd.data(), b->shape());
  Tensor y(DataType::kInt32, shape);
  StoreDoubles(y, out.data());
  return std::vector<Tensor>{std::move(y)};
}

Result<std::vector<TensorType>> InferGemm(const InferContext& ctx) {
  SY_ASSIGN_OR_RETURN(DataType t, SameDtype(ctx, {0, 1, 2}));
  if (t != DataType::kUndefined && !IsMatMulDtype(t)) {
    return NodeError(ctx.node, std::string("unsupported dtype ") + DataTypeName(t));
  }
  const TensorType* a = ctx.input(0);
  const TensorType* b = ctx.input(1);
  if (!a || !b) return NodeError(ctx.node, "A and B are required");
  if ((a->has_shape && a->rank() != 2) || (b->has_shape && b->rank() != 2)) {
    return NodeError(ctx.node, "A and B must be 2-D");
  }
  const bool ta = ctx.node.GetInt("transA", 0) != 0, tb = ctx.node.GetInt("transB", 0) != 0;
  Dim m, n;
  if (a->has_shape) m = a->dims[ta ? 1 : 0];
  if (b->has_shape) n = b->dims[tb ? 0 : 1];
  if (a->has_shape && b->has_shape) {
    const Dim& ka = a->dims[ta ? 0 : 1];
    const Dim& kb = b->dims[tb ? 1 : 0];
    if (ka.is_static() && kb.is_static() && ka.value != kb.value) {
      return NodeError(ctx.node, "inner dimensions differ: " + a->ToString() + " x " +
                                     b->ToString());
    }
  }
  return std::vector<TensorType>{TensorType(t, {m, n})};
}

// Row-major [rows x cols] copy of a 2-D tensor, transposed when `trans`.
std::vector<double> Matrix(const Tensor& t, bool trans) {
  std::vector<double> v = ToDoubles(t);
  if (!trans) return v;
  const int64_t r = t.dim(0), c = t.dim(1);
  std::vector<double> out(v.size());
  for (int64_t i = 0; i < r; ++i) {
    for (int64_t j = 0; j < c; ++j) out[static_cast<size_t>(j * r + i)] = v[static_cast<size_t>(i * c + j)];
  }
  return out;
}

Result<std::vector<Tensor>> RunGemm(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* a, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* b, RequireInput(ctx, 1));
  const Tensor* c = ctx.input(2);
  if (a->rank() != 2 || b->rank() != 2) return NodeError(ctx.node, "A and B must be 2-D");
  if (a->dtype() != b->dtype() || (c && c->dtype() != a->dtype()) || !IsMatMulDtype(a->dtype())) {
    return NodeError(ctx.node, "inputs must share a numeric dtype");
  }
  const bool ta = ctx.node.GetInt("transA", 0) != 0, tb = ctx.node.GetInt("transB", 0) != 0;
  const double alpha = ctx.node.GetFloat("alpha", 1.0f), beta = ctx.node.GetFloat("beta", 1.0f);
  const int64_t m = a->dim(ta ? 1 : 0), k = a->dim(ta ? 0 : 1);
  const int64_t n = b->dim(tb ? 0 : 1);
  if (b->dim(tb ? 1 : 0) != k) {
    return NodeError(ctx.node, "inner dimensions differ: A " + ShapeToString(a->shape()) +
                                   ", B " + ShapeToString(b->shape()));
  }
  const std::vector<double> ad = Matrix(*a, ta), bd = Matrix(*b, tb);
  std::vector<double> out(static_cast<size_t>(m * n), 0.0);
  GemmAccumulate(ad.data(), k, bd.data(), n, out.data(), n, m, n, k);
  for (double& v : out) v *= alpha;
  if (c && beta != 0.0) {
    // C broadcasts unidirectionally to [M, N].
    if (c->rank() > 2) return NodeError(ctx.node, "C must have rank <= 2");
    SY_ASSIGN_OR_RETURN(std::vector<int64_t> bs, BroadcastShapes(ctx.node, {c->shape(), {m, n}}));
    if (bs != std::vector<int64_t>{m, n}) {
      return NodeError(ctx.node, "C of shape " + ShapeToString(c->shape()) +
                                     " does not broadcast to " + ShapeToString({m, n}));
    }
    const std::vector<int64_t> idx = BroadcastIndex(c->shape(), {m, n});
    const std::vector<double> cd = ToDoubles(*c);
    for (size_t i = 0; i < out.size(); ++i) out[i] += beta * cd[static_cast<size_t>(idx[i])];
  }
  Tensor y(a->dtype(), {m, n});
  StoreDoubles(y, out.data());
  return std::vector<Tensor>{std::move(y)};
}

}  // namespace

SY_REGISTER_OPS(Gemm) {
  for (int v : {7, 9, 11, 13}) {
    reg.Register({"", "Gemm", v, v >= 11 ? 2 : 3, 3, 1, 1, InferGemm, RunGemm});
  }
  for (int v : {1, 9, 13}) reg.Register({"", "MatMul", v, 2, 2, 1, 1, InferMatMul, RunMatMul});
  reg.Register({"", "MatMulInteger", 10, 2, 4, 1, 1, InferMatMulInteger, RunMatMulInteger});
}

}  // namespace switchyard::ops
