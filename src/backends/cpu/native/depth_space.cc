// Native DepthToSpace (DCR and CRD) and SpaceToDepth on plain NCHW data of any fixed-size
// dtype. Both are one strided copy: the output viewed as a 6-D tensor reads the input
// with permuted strides, so rows of contiguous elements move together.
#include <algorithm>

#include "backends/cpu/native/native.h"
#include "reference/ops/common.h"

namespace switchyard::native {
namespace {

Result<Shape> OutShape(const Node& node, bool to_depth, const Shape& x) {
  const int64_t b = node.GetInt("blocksize", 0);
  if (b < 1) return ops::NodeError(node, "blocksize must be a positive integer");
  if (x.size() != 4) return ops::NodeError(node, "input must be 4-D (NCHW)");
  if (to_depth) {
    if (x[2] % b != 0 || x[3] % b != 0) {
      return ops::NodeError(node, "spatial dims " + ShapeToString(x) + " not divisible by blocksize");
    }
    return Shape{x[0], x[1] * b * b, x[2] / b, x[3] / b};
  }
  if (x[1] % (b * b) != 0) {
    return ops::NodeError(node, "channels " + std::to_string(x[1]) + " not divisible by blocksize^2");
  }
  return Shape{x[0], x[1] / (b * b), x[2] * b, x[3] * b};
}

// y (6-D view `ys`) [o] = x[sum o_d * st[d]].
template <typename T>
void Copy6(const T* x, T* y, const int64_t* ys, const int64_t* st, int threads) {
  int64_t rows = 1;
  for (int d = 0; d < 5; ++d) rows *= ys[d];
  const int64_t inner = ys[5], ist = st[5];
  ParallelFor(rows, threads, std::max<int64_t>(1, 16384 / std::max<int64_t>(inner, 1)), [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {
      int64_t r = row, off = 0;
      for (int d = 4; d >= 0; --d) {
        off += (r % ys[d]) * st[d];
        r /= ys[d];
      }
      T* dst = y + row * inner;
      const T* src = x + off;
      for (int64_t i = 0; i < inner; ++i) dst[i] = src[i * ist];
    }
  });
}

Status Run(const Node& node, bool to_depth, bool crd, const KernelIO& io) {
  const TensorRef& x = *io.inputs[0];
  TensorRef& y = *io.outputs[0];
  if (y.numel() == 0) return Status::Ok();
  const int64_t b = node.GetInt("blocksize", 1);
  int64_t ys[6], st[6];
  if (to_depth) {
    // y[n][(by*b+bx)*C + c][h][w] = x[n][c][h*b+by][w*b+bx]: view y as [N, b, b, C, H/b, W/b].
    const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
    const int64_t v[6] = {n, b, b, c, h / b, w / b};
    const int64_t s[6] = {c * h * w, w, 1, h * w, b * w, b};
    std::copy(v, v + 6, ys);
    std::copy(s, s + 6, st);
  } else {
    // y[n][c][h*b+by][w*b+bx] = x[n][dc][h][w]; view y as [N, C, H, b, W, b].
    const int64_t n = y.shape[0], c = y.shape[1], h = x.shape[2], w = x.shape[3];
    const int64_t hw = h * w;
    // DCR: dc = (by*b+bx)*C + c; CRD: dc = (c*b+by)*b + bx.
    const int64_t sc = crd ? b * b * hw : hw, sby = crd ? b * hw : b * c * hw, sbx = crd ? hw : c * hw;
    const int64_t v[6] = {n, c, h, b, w, b};
    const int64_t s[6] = {c * b * b * hw, sc, w, sby, 1, sbx};
    std::copy(v, v + 6, ys);
    std::copy(s, s + 6, st);
  }
  switch (DataTypeSize(x.dtype)) {
    case 1: Copy6(x.as<uint8_t>(), y.as<uint8_t>(), ys, st, io.threads); break;
    case 2: Copy6(x.as<uint16_t>(), y.as<uint16_t>(), ys, st, io.threads); break;
    case 4: Copy6(x.as<uint32_t>(), y.as<uint32_t>(), ys, st, io.threads); break;
    default: Copy6(x.as<uint64_t>(), y.as<uint64_t>(), ys, st, io.threads);
  }
  return Status::Ok();
}

void Register(CpuImplRegistry& reg, const std::string& op, bool to_depth) {
  RegisterNative(
      reg, "", op,
      [to_depth](const Node& n, const KernelBuildContext& c) {
        if (c.input_dtypes.empty() || c.input_dtypes[0] == DataType::kString) return false;
        const std::string mode = n.GetString("mode", "DCR");
        return to_depth || mode == "DCR" || mode == "CRD";
      },
      [to_depth](const StepView& v) {
        const Node node = v.node;
        const bool crd = !to_depth && node.GetString("mode", "DCR") == "CRD";
        return MakeKernel(
            [node, to_depth](const std::vector<const TensorRef*>& in) -> Result<Shapes> {
              SY_ASSIGN_OR_RETURN(Shape s, OutShape(node, to_depth, in[0]->shape));
              return Shapes{s};
            },
            [node, to_depth, crd](const KernelIO& io) { return Run(node, to_depth, crd, io); });
      });
}

}  // namespace

SY_REGISTER_CPU_IMPLS(NativeDepthSpace) {
  Register(reg, "DepthToSpace", false);
  Register(reg, "SpaceToDepth", true);
}

}  // namespace switchyard::native
