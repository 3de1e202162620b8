// CUDA data-movement kernels on raw element bytes: Transpose (tiled batched last-two swap
// and a general strided path that moves whole contiguous inner runs as 16-byte units when
// it can), Concat/Split, Slice, Gather, Expand and Pad.
#include <cstdint>
#include <cstring>

#include "backends/cuda/kernels/ew_common.cuh"
#include "backends/cuda/kernels/movement.h"

namespace switchyard::cuda::kernels {
namespace {

using namespace ew_detail;  // NOLINT: the family's own helpers

// The widest copy unit (16, 8, 4, 2 or 1 bytes) that divides `bytes` and the alignment
// of every pointer in `ptrs`.
int UnitFor(int64_t bytes, std::initializer_list<const void*> ptrs) {
  for (int u = 16; u > 1; u /= 2) {
    bool ok = bytes % u == 0;
    for (const void* p : ptrs) ok = ok && Aligned(p, static_cast<size_t>(u));
    if (ok) return u;
  }
  return 1;
}

template <int U> struct UnitType;
template <> struct UnitType<1> { using type = uint8_t; };
template <> struct UnitType<2> { using type = uint16_t; };
template <> struct UnitType<4> { using type = uint32_t; };
template <> struct UnitType<8> { using type = uint64_t; };
template <> struct UnitType<16> { using type = uint4; };

// Calls f.template operator()<U>() for the runtime unit size u.
template <typename F>
cudaError_t WithUnit(int u, F&& f) {
  switch (u) {
    case 1: return f(UnitType<1>{});
    case 2: return f(UnitType<2>{});
    case 4: return f(UnitType<4>{});
    case 8: return f(UnitType<8>{});
    case 16: return f(UnitType<16>{});
  }
  return cudaErrorInvalidValue;
}

// ---------------------------------------------------------------------------------------
// Transpose
struct PermDesc {
  int rank = 0;
  int64_t out_dims[kMaxDims] = {};
  int64_t in_strides[kMaxDims] = {};  // input stride of the output dim d
};

template <typename E, typename I>
__global__ void TransposeGeneralKernel(const E* __restrict__ x, E* __restrict__ y, I n, PermDesc p) {
  const I stride = static_cast<I>(gridDim.x) * blockDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    I r = i, off = 0;
#pragma unroll
    for (int d = kMaxDims - 1; d >= 0; --d) {
      if (d < p.rank) {
        const I dim = static_cast<I>(p.out_dims[d]);
        off += (r % dim) * static_cast<I>(p.in_strides[d]);
        r /= dim;
      }
    }
    y[i] = x[off];
  }
}

// x [batch, rows, cols] -> y [batch, cols, rows] through a 32x32 shared tile.
constexpr int kTile = 32, kTileRows = 8;
template <typename E>
__global__ void TransposeTiledKernel(const E* __restrict__ x, E* __restrict__ y, int64_t rows,
                                     int64_t cols, int64_t tiles_r, int64_t tiles_c) {
  __shared__ E tile[kTile][kTile + 1];
  const int64_t tiles_per_batch = tiles_r * tiles_c;
  for (int64_t t = blockIdx.x; t < tiles_per_batch; t += gridDim.x) {
    const int64_t tr = t / tiles_c, tc = t % tiles_c;
    const int64_t b = blockIdx.y;
    const E* xb = x + b * rows * cols;
    E* yb = y + b * rows * cols;
    const int64_t c = tc * kTile + threadIdx.x;
    for (int j = threadIdx.y; j < kTile; j += kTileRows) {
      const int64_t r = tr * kTile + j;
      if (r < rows && c < cols) tile[j][threadIdx.x] = xb[r * cols + c];
    }
    __syncthreads();
    const int64_t r2 = tr * kTile + threadIdx.x;
    for (int j = threadIdx.y; j < kTile; j += kTileRows) {
      const int64_t c2 = tc * kTile + j;
      if (r2 < rows && c2 < cols) yb[c2 * rows + r2] = tile[threadIdx.x][j];
    }
    __syncthreads();
  }
}

// x [batch, rows, cols] -> y [batch, cols, rows] when one side is thin (<= kThin): each
// thread moves one whole line of the thin side, so that the reads (thin rows) or the
// writes (thin cols) of a warp stay coalesced, where a 32x32 tile would be mostly idle
// (NCHW -> NHWC of an RGB batch: rows = C = 3; H200, [32,3,224,224] fp16: 0.129 ms tiled).
constexpr int kThin = 8;
template <typename E, typename I>
__global__ void TransposeThinKernel(const E* __restrict__ x, E* __restrict__ y, I lines, I rows, I cols,
                                    bool thin_rows) {
  const I stride = static_cast<I>(gridDim.x) * blockDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < lines; i += stride) {
    if (thin_rows) {  // one input column: rows strided reads, rows adjacent writes
      const I b = i / cols, c = i % cols, base = b * rows * cols;
      for (I r = 0; r < rows; ++r) y[base + c * rows + r] = x[base + r * cols + c];
    } else {  // one input row: cols adjacent reads, cols strided writes
      const I b = i / rows, r = i % rows, base = b * rows * cols;
      for (I c = 0; c < cols; ++c) y[base + c * rows + r] = x[base + r * cols + c];
    }
  }
}

// ---------------------------------------------------------------------------------------
bool Fits32(int64_t n) { return n < (int64_t{1} << 31); }

// Concat / Split over [outer, total_cols] (columns in units). Parts are handled in groups.
constexpr int kMaxParts = 32;
struct PartGroup {
  int count = 0;
  void* ptr[kMaxParts] = {};
  int64_t col_begin[kMaxParts + 1] = {};  // relative to the group's first column
};

// I: the index type (32-bit when every index fits: 64-bit division per element would
// dominate these memory-bound copies).
template <typename E, typename I, bool kConcat>
__global__ void ConcatSplitKernel(E* __restrict__ whole, I total_cols, I group_col0, PartGroup g, I outer) {
  const I gcols = static_cast<I>(g.col_begin[g.count]);
  const I n = outer * gcols;
  const I stride = static_cast<I>(gridDim.x) * blockDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const I row = i / gcols, col = i % gcols;
    int k = 0;
    while (k + 1 < g.count && col >= g.col_begin[k + 1]) ++k;
    const I c0 = static_cast<I>(g.col_begin[k]);
    const I w = static_cast<I>(g.col_begin[k + 1]) - c0;
    E* part = static_cast<E*>(g.ptr[k]) + row * w + (col - c0);
    E* full = whole + row * total_cols + group_col0 + col;
    if constexpr (kConcat) {
      *full = *part;
    } else {
      *part = *full;
    }
  }
}

template <bool kConcat>
cudaError_t ConcatSplit(int elem_bytes, void* whole, void* const* parts, const int64_t* sizes,
                        int num_parts, int64_t outer, int64_t inner, cudaStream_t s) {
  int64_t total = 0;
  int u = UnitFor(inner * elem_bytes, {whole});
  for (int k = 0; k < num_parts; ++k) {
    total += sizes[k];
    const int64_t bytes = sizes[k] * inner * elem_bytes;
    if (bytes > 0) u = std::min(u, UnitFor(bytes, {parts[k]}));
  }
  const int64_t total_cols = total * inner * elem_bytes / u;
  if (outer == 0 || total_cols == 0) return cudaSuccess;
  int64_t col0 = 0;
  for (int k0 = 0; k0 < num_parts; k0 += kMaxParts) {
    PartGroup g;
    g.count = std::min(kMaxParts, num_parts - k0);
    for (int k = 0; k < g.count; ++k) {
      g.ptr[k] = parts[k0 + k];
      g.col_begin[k + 1] = g.col_begin[k] + sizes[k0 + k] * inner * elem_bytes / u;
    }
    const int64_t gcols = g.col_begin[g.count];
    if (gcols > 0) {
      const cudaError_t e = WithUnit(u, [&](auto tag) {
        using E = typename decltype(tag)::type;
        if (Fits32(outer * total_cols)) {
          ConcatSplitKernel<E, int32_t, kConcat><<<GridFor(outer * gcols), kThreads, 0, s>>>(
              static_cast<E*>(whole), static_cast<int32_t>(total_cols), static_cast<int32_t>(col0), g,
              static_cast<int32_t>(outer));
        } else {
          ConcatSplitKernel<E, int64_t, kConcat><<<GridFor(outer * gcols), kThreads, 0, s>>>(
              static_cast<E*>(whole), total_cols, col0, g, outer);
        }
        return cudaGetLastError();
      });
      if (e != cudaSuccess) return e;
    }
    col0 += gcols;
  }
  return cudaSuccess;
}

// ---------------------------------------------------------------------------------------
// Slice / Expand / Pad: per output element, an input offset from the output coordinates.
struct StridedDesc {
  int rank = 0;
  int64_t out_dims[kMaxDims] = {};
  int64_t in_dims[kMaxDims] = {};
  int64_t in_strides[kMaxDims] = {};  // 0 for broadcast dims (Expand)
  int64_t start[kMaxDims] = {};       // Slice start / Pad begin
  int64_t step[kMaxDims] = {};        // Slice step
};

template <typename E, typename I>
__global__ void SliceKernel(const E* __restrict__ x, E* __restrict__ y, I n, StridedDesc p) {
  const I stride = static_cast<I>(gridDim.x) * blockDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    I r = i;
    int64_t off = 0;
#pragma unroll
    for (int d = kMaxDims - 1; d >= 0; --d) {
      if (d < p.rank) {
        const I dim = static_cast<I>(p.out_dims[d]);
        const int64_t c = static_cast<int64_t>(r % dim);
        r /= dim;
        off += (p.start[d] + c * p.step[d]) * p.in_strides[d];
      }
    }
    y[i] = x[off];
  }
}

template <typename E, typename I>
__global__ void PadKernel(const E* __restrict__ x, E* __restrict__ y, I n, StridedDesc p, int mode,
                          E fill, const E* fill_dev) {
  if (fill_dev) fill = *fill_dev;
  const I stride = static_cast<I>(gridDim.x) * blockDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    I r = i;
    int64_t off = 0;
    bool outside = false;
#pragma unroll
    for (int d = kMaxDims - 1; d >= 0; --d) {
      if (d < p.rank) {
        const I dim = static_cast<I>(p.out_dims[d]);
        int64_t c = static_cast<int64_t>(r % dim) - p.start[d];
        r /= dim;
        const int64_t len = p.in_dims[d];
        if (c < 0 || c >= len) {
          if (mode == 0) {
            outside = true;
          } else if (mode == 1) {
            c = c < 0 ? 0 : len - 1;
          } else if (mode == 3) {
            c = ((c % len) + len) % len;
          } else if (len == 1) {
            c = 0;
          } else {
            const int64_t period = 2 * (len - 1);
            c = ((c % period) + period) % period;
            if (c >= len) c = period - c;
          }
        }
        off += c * p.in_strides[d];
      }
    }
    y[i] = outside ? fill : x[off];
  }
}

template <typename E>
__global__ void GatherRowsKernel(const E* __restrict__ x, E* __restrict__ y, int64_t outer,
                                 int64_t axis_dim, int64_t row_units, const void* indices, bool idx64,
                                 int64_t num_indices) {
  const int64_t n = outer * num_indices * row_units;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t u = i % row_units;
    const int64_t t = i / row_units;
    const int64_t j = t % num_indices, o = t / num_indices;
    int64_t idx = idx64 ? static_cast<const int64_t*>(indices)[j]
                        : static_cast<int64_t>(static_cast<const int32_t*>(indices)[j]);
    if (idx < 0) idx += axis_dim;
    idx = idx < 0 ? 0 : (idx >= axis_dim ? axis_dim - 1 : idx);
    y[i] = x[(o * axis_dim + idx) * row_units + u];
  }
}

template <typename E, typename I>
__global__ void ExpandKernel(const E* __restrict__ x, E* __restrict__ y, I n, Bcast<1> bc) {
  const I stride = static_cast<I>(gridDim.x) * blockDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    I off[1];
    Offsets<1, I>(bc, i, off);
    y[i] = x[off[0]];
  }
}


}  // namespace

cudaError_t LaunchTranspose(int elem_bytes, const void* x, const Dims& xs, const int* perm, void* y,
                            cudaStream_t s) {
  const int64_t n = NumElements(xs);
  if (n == 0) return cudaSuccess;
  // Drop size-1 dims, then merge input dims that stay adjacent (and in order) in the output.
  int map[kMaxDims];  // old input dim -> kept index or -1
  int64_t kd[kMaxDims];
  int kr = 0;
  for (int d = 0; d < xs.rank; ++d) {
    if (xs.d[d] == 1) {
      map[d] = -1;
    } else {
      map[d] = kr;
      kd[kr++] = xs.d[d];
    }
  }
  int kp[kMaxDims], kpr = 0;
  for (int d = 0; d < xs.rank; ++d) {
    if (map[perm[d]] >= 0) kp[kpr++] = map[perm[d]];
  }
  // Group runs of consecutive input dims in the output order.
  int64_t gdim[kMaxDims];
  int gfirst[kMaxDims];  // first input dim of each group (groups in output order)
  int ng = 0;
  for (int d = 0; d < kpr; ++d) {
    if (d > 0 && kp[d] == kp[d - 1] + 1) {
      gdim[ng - 1] *= kd[kp[d]];
    } else {
      gfirst[ng] = kp[d];
      gdim[ng] = kd[kp[d]];
      ++ng;
    }
  }
  // Groups in input order: sort by first input dim to get the merged input shape.
  int in_order[kMaxDims];
  for (int g = 0; g < ng; ++g) in_order[g] = g;
  std::sort(in_order, in_order + ng, [&](int a, int b) { return gfirst[a] < gfirst[b]; });
  int64_t in_dims[kMaxDims], in_stride_of_group[kMaxDims];
  for (int j = 0; j < ng; ++j) in_dims[j] = gdim[in_order[j]];
  {
    int64_t st = 1;
    for (int j = ng - 1; j >= 0; --j) {
      in_stride_of_group[in_order[j]] = st;
      st *= in_dims[j];
    }
  }
  if (ng <= 1) {
    return cudaMemcpyAsync(y, x, static_cast<size_t>(n) * elem_bytes, cudaMemcpyDeviceToDevice, s);
  }
  // The last output group is also the last input group: whole rows move together.
  int64_t row = 1;
  int out_rank = ng;
  if (gfirst[ng - 1] == gfirst[in_order[ng - 1]]) {
    row = gdim[ng - 1];
    out_rank = ng - 1;
  }
  // Elements are aligned to their size; whole rows may move in wider units.
  const int u = row > 1 ? UnitFor(row * elem_bytes, {x, y}) : elem_bytes;
  const int64_t row_units = row * elem_bytes / u;
  // Tiled path: [batch..., r, c] -> [batch..., c, r] (row == 1, last two groups swapped,
  // the leading groups in place).
  if (row == 1 && ng >= 2 && ng <= 3) {
    bool tiled = in_order[ng - 1] == ng - 2 && in_order[ng - 2] == ng - 1;
    if (ng == 3) tiled = tiled && in_order[0] == 0;
    const int64_t rows = gdim[ng - 1], cols = gdim[ng - 2];  // input [rows, cols]
    const int64_t batch = ng == 3 ? gdim[0] : 1;
    if (tiled && (rows <= kThin || cols <= kThin)) {
      const bool thin_rows = rows <= kThin;
      const int64_t lines = batch * (thin_rows ? cols : rows);
      return WithUnit(elem_bytes, [&](auto tag) {
        using E = typename decltype(tag)::type;
        if (Fits32(n)) {
          TransposeThinKernel<E, uint32_t><<<GridFor(lines), kThreads, 0, s>>>(
              static_cast<const E*>(x), static_cast<E*>(y), static_cast<uint32_t>(lines), static_cast<uint32_t>(rows),
              static_cast<uint32_t>(cols), thin_rows);
        } else {
          TransposeThinKernel<E, int64_t><<<GridFor(lines), kThreads, 0, s>>>(
              static_cast<const E*>(x), static_cast<E*>(y), lines, rows, cols, thin_rows);
        }
        return cudaGetLastError();
      });
    }
    if (tiled) {
      const int64_t tr = (rows + kTile - 1) / kTile, tc = (cols + kTile - 1) / kTile;
      if (batch <= 65535) {
        dim3 grid(static_cast<unsigned>(std::min<int64_t>(tr * tc, 65535)), static_cast<unsigned>(batch));
        dim3 block(kTile, kTileRows);
        return WithUnit(elem_bytes, [&](auto tag) {
          using E = typename decltype(tag)::type;
          TransposeTiledKernel<E><<<grid, block, 0, s>>>(static_cast<const E*>(x), static_cast<E*>(y),
                                                         rows, cols, tr, tc);
          return cudaGetLastError();
        });
      }
    }
  }
  PermDesc p;
  p.rank = row > 1 ? out_rank + 1 : out_rank;  // <= ng <= kMaxDims
  for (int d = 0; d < out_rank; ++d) {
    // Input strides in elements are multiples of the row (the innermost input group when
    // row > 1): convert them to units.
    p.out_dims[d] = gdim[d];
    p.in_strides[d] = in_stride_of_group[d] / row * row_units;
  }
  if (row > 1) {
    p.out_dims[out_rank] = row_units;
    p.in_strides[out_rank] = 1;
  }
  const int64_t units = n * elem_bytes / u;
  return WithUnit(u, [&](auto tag) {
    using E = typename decltype(tag)::type;
    if (Fits32(units)) {
      TransposeGeneralKernel<E, uint32_t><<<GridFor(units), kThreads, 0, s>>>(
          static_cast<const E*>(x), static_cast<E*>(y), static_cast<uint32_t>(units), p);
    } else {
      TransposeGeneralKernel<E, int64_t><<<GridFor(units), kThreads, 0, s>>>(
          static_cast<const E*>(x), static_cast<E*>(y), units, p);
    }
    return cudaGetLastError();
  });
}

cudaError_t LaunchConcat(int elem_bytes, const void* const* parts, const int64_t* sizes, int num_parts,
                         int64_t outer, int64_t inner, void* y, cudaStream_t stream) {
  return ConcatSplit<true>(elem_bytes, y, const_cast<void* const*>(parts), sizes, num_parts, outer,
                           inner, stream);
}

cudaError_t LaunchSplit(int elem_bytes, const void* x, const int64_t* sizes, int num_parts,
                        int64_t outer, int64_t inner, void* const* parts, cudaStream_t stream) {
  return ConcatSplit<false>(elem_bytes, const_cast<void*>(x), parts, sizes, num_parts, outer, inner,
                            stream);
}

cudaError_t LaunchSlice(int elem_bytes, const void* x, const Dims& xs, const int64_t* start,
                        const int64_t* step, void* y, const Dims& ys, cudaStream_t s) {
  const int64_t n = NumElements(ys);
  if (n == 0) return cudaSuccess;
  if (xs.rank != ys.rank || xs.rank > kMaxDims) return cudaErrorInvalidValue;
  StridedDesc p;
  p.rank = xs.rank;
  int64_t st = 1;
  for (int d = xs.rank - 1; d >= 0; --d) {
    p.out_dims[d] = ys.d[d];
    p.in_dims[d] = xs.d[d];
    p.in_strides[d] = st;
    p.start[d] = start[d];
    p.step[d] = step[d];
    st *= xs.d[d];
  }
  return WithUnit(elem_bytes, [&](auto tag) {
    using E = typename decltype(tag)::type;
    if (Fits32(n)) {
      SliceKernel<E, uint32_t><<<GridFor(n), kThreads, 0, s>>>(static_cast<const E*>(x), static_cast<E*>(y),
                                                              static_cast<uint32_t>(n), p);
    } else {
      SliceKernel<E, int64_t><<<GridFor(n), kThreads, 0, s>>>(static_cast<const E*>(x), static_cast<E*>(y), n, p);
    }
    return cudaGetLastError();
  });
}

cudaError_t LaunchGather(int elem_bytes, const void* x, int64_t outer, int64_t axis_dim, int64_t inner,
                         const void* indices, bool indices_int64, int64_t num_indices, void* y,
                         cudaStream_t s) {
  const int64_t n = outer * num_indices * inner;
  if (n == 0) return cudaSuccess;
  if (axis_dim <= 0) return cudaErrorInvalidValue;
  const int u = UnitFor(inner * elem_bytes, {x, y});
  const int64_t row_units = inner * elem_bytes / u;
  return WithUnit(u, [&](auto tag) {
    using E = typename decltype(tag)::type;
    GatherRowsKernel<E><<<GridFor(outer * num_indices * row_units), kThreads, 0, s>>>(
        static_cast<const E*>(x), static_cast<E*>(y), outer, axis_dim, row_units, indices,
        indices_int64, num_indices);
    return cudaGetLastError();
  });
}

cudaError_t LaunchExpand(int elem_bytes, const void* x, const Dims& xs, void* y, const Dims& ys,
                         cudaStream_t s) {
  const int64_t n = NumElements(ys);
  if (n == 0) return cudaSuccess;
  Bcast<1> bc;
  if (!MakeBcast<1>(ys, &xs, 1, &bc)) return cudaErrorInvalidValue;
  if (bc.rank > 0 && bc.strides[0][bc.rank - 1] == 1 && bc.rank >= 1) {
    // Contiguous innermost run: move it in wider units.
    const int64_t run = bc.dims[bc.rank - 1];
    const int u = UnitFor(run * elem_bytes, {x, y});
    if (u > elem_bytes) {
      const int64_t f = u / elem_bytes;
      bc.dims[bc.rank - 1] /= f;
      for (int d = 0; d + 1 < bc.rank; ++d) bc.strides[0][d] /= f;
      const int64_t units = n / f;
      return WithUnit(u, [&](auto tag) {
        using E = typename decltype(tag)::type;
        ExpandKernel<E, int64_t><<<GridFor(units), kThreads, 0, s>>>(static_cast<const E*>(x),
                                                                     static_cast<E*>(y), units, bc);
        return cudaGetLastError();
      });
    }
  }
  return WithUnit(elem_bytes, [&](auto tag) {
    using E = typename decltype(tag)::type;
    if (Fits32(n)) {
      ExpandKernel<E, uint32_t><<<GridFor(n), kThreads, 0, s>>>(static_cast<const E*>(x), static_cast<E*>(y),
                                                               static_cast<uint32_t>(n), bc);
    } else {
      ExpandKernel<E, int64_t><<<GridFor(n), kThreads, 0, s>>>(static_cast<const E*>(x), static_cast<E*>(y), n, bc);
    }
    return cudaGetLastError();
  });
}

cudaError_t LaunchPad(int elem_bytes, PadMode mode, const void* x, const Dims& xs, const int64_t* pads_begin,
                      uint64_t fill_bits, const void* fill_dev, void* y, const Dims& ys, cudaStream_t s) {
  const int64_t n = NumElements(ys);
  if (n == 0) return cudaSuccess;
  if (xs.rank != ys.rank) return cudaErrorInvalidValue;
  if (NumElements(xs) == 0 && mode != PadMode::kConstant) return cudaErrorInvalidValue;
  StridedDesc p;
  p.rank = xs.rank;
  int64_t st = 1;
  for (int d = xs.rank - 1; d >= 0; --d) {
    p.out_dims[d] = ys.d[d];
    p.in_dims[d] = xs.d[d];
    p.in_strides[d] = st;
    p.start[d] = pads_begin[d];
    st *= xs.d[d];
  }
  return WithUnit(elem_bytes, [&](auto tag) {
    using E = typename decltype(tag)::type;
    E fill;
    std::memcpy(&fill, &fill_bits, sizeof(E));
    if (Fits32(n)) {
      PadKernel<E, uint32_t><<<GridFor(n), kThreads, 0, s>>>(static_cast<const E*>(x), static_cast<E*>(y),
                                                            static_cast<uint32_t>(n), p, static_cast<int>(mode),
                                                            fill, static_cast<const E*>(fill_dev));
    } else {
      PadKernel<E, int64_t><<<GridFor(n), kThreads, 0, s>>>(static_cast<const E*>(x), static_cast<E*>(y), n, p,
                                                           static_cast<int>(mode), fill,
                                                           static_cast<const E*>(fill_dev));
    }
    return cudaGetLastError();
  });
}

}  // namespace switchyard::cuda::kernels
