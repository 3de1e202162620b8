// SpaceToDepth and DepthToSpace (DCR and CRD modes): pure rearrangements of NCHW data.
#include <cstring>

#include "reference/ops/conv_common.h"

namespace switchyard::ops {
namespace {

// Largest accepted blocksize: b*b then fits int64 with room for the channel product.
constexpr int64_t kMaxBlocksize = int64_t{1} << 31;

// Shape of the result, or an error; input dims < 0 are unknown (stay unknown).
Result<std::vector<Dim>> RearrangedDims(const Node& node, const std::vector<Dim>& in,
                                        bool to_depth) {
  const int64_t b = node.GetInt("blocksize", 0);
  if (b < 1) return NodeError(node, "blocksize must be a positive integer");
  // Bounding b keeps b*b (and every index product of the kernel) inside int64.
  if (b > kMaxBlocksize) {
    return NodeError(node, "blocksize " + std::to_string(b) + " is larger than " +
                               std::to_string(kMaxBlocksize));
  }
  if (in.size() != 4) return NodeError(node, "input must be 4-D (NCHW)");
  std::vector<Dim> out = in;
  const Dim& c = in[1];
  if (to_depth) {
    if (c.is_static()) {
      int64_t cd = 0;
      if (__builtin_mul_overflow(c.value, b * b, &cd)) {
        return NodeError(node, "channels " + std::to_string(c.value) + " times blocksize^2 " +
                                   std::to_string(b * b) + " overflows int64");
      }
      out[1] = Dim(cd);
    }
    for (size_t i = 2; i < 4; ++i) {
      if (!in[i].is_static()) {
        out[i] = Dim();
        continue;
      }
      if (in[i].value % b != 0) {
        return NodeError(node, "spatial size " + std::to_string(in[i].value) +
                                   " is not divisible by blocksize " + std::to_string(b));
      }
      out[i] = Dim(in[i].value / b);
    }
  } else {
    if (c.is_static()) {
      if (c.value % (b * b) != 0) {
        return NodeError(node, "channels " + std::to_string(c.value) +
                                   " not divisible by blocksize^2 " + std::to_string(b * b));
      }
      out[1] = Dim(c.value / (b * b));
    } else {
      out[1] = Dim();
    }
    for (size_t i = 2; i < 4; ++i) {
      if (!in[i].is_static()) {
        out[i] = Dim();
        continue;
      }
      int64_t v = 0;
      if (__builtin_mul_overflow(in[i].value, b, &v)) {
        return NodeError(node, "spatial size " + std::to_string(in[i].value) +
                                   " times blocksize " + std::to_string(b) + " overflows int64");
      }
      out[i] = Dim(v);
    }
  }
  return out;
}

Result<std::vector<TensorType>> Infer(const InferContext& ctx, bool to_depth) {
  const TensorType* x = ctx.input(0);
  if (!x) return NodeError(ctx.node, "input is required");
  if (!x->has_shape) return std::vector<TensorType>{TensorType::Unranked(x->dtype)};
  SY_ASSIGN_OR_RETURN(std::vector<Dim> dims, RearrangedDims(ctx.node, x->dims, to_depth));
  return std::vector<TensorType>{TensorType(x->dtype, dims)};
}

Result<std::vector<Tensor>> Run(const KernelContext& ctx, bool to_depth) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  const Node& node = ctx.node;
  std::vector<Dim> in_dims(x->shape().begin(), x->shape().end());
  SY_ASSIGN_OR_RETURN(std::vector<Dim> od, RearrangedDims(node, in_dims, to_depth));
  std::vector<int64_t> out_shape;
  for (const Dim& d : od) out_shape.push_back(d.value);
  const std::string mode = node.GetString("mode", "DCR");
  if (!to_depth && mode != "DCR" && mode != "CRD") {
    return NodeError(node, "mode must be DCR or CRD, got '" + mode + "'");
  }
  const bool crd = !to_depth && mode == "CRD";
  const int64_t b = node.GetInt("blocksize", 1);
  Tensor y(x->dtype(), out_shape);
  const bool is_string = x->dtype() == DataType::kString;
  if (is_string) y.strings().resize(static_cast<size_t>(y.numel()));
  const size_t es = DataTypeSize(x->dtype());
  const auto* src = static_cast<const uint8_t*>(x->raw());
  auto* dst = static_cast<uint8_t*>(y.raw());
  // Iterate over the "space" side [N, Cs, Hs, Ws] and the block offsets (by, bx);
  // the "depth" side is [N, Cs*b*b, Hs/b, Ws/b].
  const std::vector<int64_t>& space = to_depth ? x->shape() : out_shape;
  const int64_t n = space[0], cs = space[1], hs = space[2], ws = space[3];
  const int64_t hd = hs / b, wd = ws / b, cd = cs * b * b;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t c = 0; c < cs; ++c) {
      for (int64_t by = 0; by < b; ++by) {
        for (int64_t bx = 0; bx < b; ++bx) {
          const int64_t dc = crd ? (c * b + by) * b + bx : (by * b + bx) * cs + c;
          for (int64_t h = 0; h < hd; ++h) {
            for (int64_t w = 0; w < wd; ++w) {
              const int64_t si = ((i * cs + c) * hs + h * b + by) * ws + w * b + bx;
              const int64_t di = ((i * cd + dc) * hd + h) * wd + w;
              const int64_t from = to_depth ? si : di, to = to_depth ? di : si;
              if (is_string) {
                y.strings()[static_cast<size_t>(to)] = x->strings()[static_cast<size_t>(from)];
              } else {
                std::memcpy(dst + to * es, src + from * es, es);
              }
            }
          }
        }
      }
    }
  }
  return std::vector<Tensor>{std::move(y)};
}

}  // namespace

SY_REGISTER_OPS(DepthSpace) {
  for (int v : {1, 13}) {
    reg.Register({"", "SpaceToDepth", v, 1, 1, 1, 1,
                  [](const InferContext& c) { return Infer(c, true); },
                  [](const KernelContext& c) { return Run(c, true); }});
  }
  for (int v : {1, 11, 13}) {
    reg.Register({"", "DepthToSpace", v, 1, 1, 1, 1,
                  [](const InferContext& c) { return Infer(c, false); },
                  [](const KernelContext& c) { return Run(c, false); }});
  }
}

}  // namespace switchyard::ops
