// Storage-precision lowering for GPU targets (route precision=fp16|bf16 on cuda): every
// float32 activation and weight of a node that runs in reduced precision is stored in that
// type, so kernels read and write half the bytes; kernels accumulate in fp32. Graph inputs
// and outputs keep float32: a Cast is inserted after each input (at its first reduced
// consumer) and before each output. Nodes kept in fp32 (precision@glob=fp32, or ops whose
// output type comes from an attribute) get Casts on the boundary. Deterministic: nodes are
// visited in order, new values are named after the value they convert. The cpu target
// lowers only the nodes whose kernels read and write bf16 (precision_of says which).
#include "passes/lower_precision.h"

#include <map>
#include <set>

#include "ir/shape_inference.h"
#include "ir/verifier.h"

namespace switchyard {
namespace {

// Ops whose output type is fixed by an attribute, or that read only their input's shape:
// they stay as they are and their float outputs stay float32.
const std::set<std::string> kKeepOps = {"ConstantOfShape", "EyeLike", "RandomNormal",
                                        "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                                        "Shape", "Size", "Multinomial", "Bernoulli"};

// (op, input index) pairs that are parameters, not data: left in their declared type.
bool KeepInput(const Node& n, size_t i) {
  if (n.domain.empty() && n.op_type == "Resize") return i == 1 || i == 2;  // roi, scales
  return false;
}

Tensor ConvertConstant(const Tensor& src, DataType to) {
  Tensor t(to, src.shape());
  const float* in = src.data<float>();
  uint16_t* out = static_cast<uint16_t*>(t.raw());
  for (int64_t k = 0; k < src.numel(); ++k) {
    out[k] = to == DataType::kFloat16 ? FloatToHalf(in[k]) : FloatToBfloat16(in[k]);
  }
  return t;
}

Tensor ConvertToFloat(const Tensor& src) {
  Tensor t(DataType::kFloat, src.shape());
  const uint16_t* in = static_cast<const uint16_t*>(src.raw());
  float* out = t.data<float>();
  for (int64_t k = 0; k < src.numel(); ++k) {
    out[k] = src.dtype() == DataType::kFloat16 ? HalfToFloat(in[k]) : Bfloat16ToFloat(in[k]);
  }
  return t;
}

const char* Suffix(DataType t) {
  return t == DataType::kFloat16 ? "fp16" : t == DataType::kBfloat16 ? "bf16" : "fp32";
}

}  // namespace

Status LowerPrecision(Graph& g, const std::function<std::string(const Node&)>& precision_of,
                      BuildReport& report) {
  std::vector<Node> nodes;
  nodes.reserve(g.nodes.size());
  std::map<std::pair<ValueId, DataType>, ValueId> converted;  // (value, type) -> value
  std::set<ValueId> lowered_values;  // values whose float32 type this pass replaced
  int casts = 0, lowered = 0;

  auto make_cast = [&](ValueId id, DataType to) -> ValueId {
    auto key = std::make_pair(id, to);
    if (auto it = converted.find(key); it != converted.end()) return it->second;
    const Value v = g.value(id);
    TensorType tt = v.type;
    tt.dtype = to;
    const ValueId out = g.AddValue(v.name + "/" + Suffix(to), tt);
    if (const Tensor* c = g.Constant(id)) {
      g.constants[out] = to == DataType::kFloat ? ConvertToFloat(*c) : ConvertConstant(*c, to);
    } else {
      Node cast;
      cast.name = v.name + "/cast_" + Suffix(to);
      cast.op_type = "Cast";
      cast.since_version = 13;
      cast.inputs = {id};
      cast.outputs = {out};
      cast.attrs["to"].kind = Attribute::Kind::kInt;
      cast.attrs["to"].i = static_cast<int64_t>(to);
      nodes.push_back(std::move(cast));
      ++casts;
    }
    converted[key] = out;
    if (to != DataType::kFloat) lowered_values.insert(out);
    return out;
  };

  for (Node& node : g.nodes) {
    const std::string p = kKeepOps.count(node.op_type) ? "fp32" : precision_of(node);
    const DataType low = p == "fp16" ? DataType::kFloat16 : p == "bf16" ? DataType::kBfloat16
                                                                          : DataType::kFloat;
    const bool reads_shape_only = node.op_type == "Shape" || node.op_type == "Size";
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId id = node.inputs[i];
      if (id == kNoValue || reads_shape_only || KeepInput(node, i)) continue;
      const DataType have = g.value(id).type.dtype;
      // float32 values, and values this pass lowered; a model's own float16 tensors keep
      // their type.
      const bool ours = have == DataType::kFloat || lowered_values.count(id);
      if (!ours || have == low) continue;
      node.inputs[i] = make_cast(id, low);
    }
    if (low != DataType::kFloat) {
      ++lowered;
      for (ValueId o : node.outputs) {
        if (o != kNoValue && g.value(o).type.dtype == DataType::kFloat) {
          g.value(o).type.dtype = low;
          lowered_values.insert(o);
        }
      }
      if (node.op_type == "Cast" && node.GetInt("to", 0) == static_cast<int64_t>(DataType::kFloat)) {
        node.attrs["to"].i = static_cast<int64_t>(low);
      }
    }
    nodes.push_back(std::move(node));
  }
  g.nodes = std::move(nodes);

  // Graph outputs keep their name and float32: the lowered value is renamed and cast back.
  for (ValueId& out : g.outputs) {
    if (!lowered_values.count(out)) continue;
    const DataType have = g.value(out).type.dtype;
    const std::string name = g.value(out).name;
    g.value(out).name = name + "/" + Suffix(have);
    TensorType tt = g.value(out).type;
    tt.dtype = DataType::kFloat;
    const ValueId fp32 = g.AddValue(name, tt);
    Node cast;
    cast.name = name + "/cast_fp32";
    cast.op_type = "Cast";
    cast.since_version = 13;
    cast.inputs = {out};
    cast.outputs = {fp32};
    cast.attrs["to"].kind = Attribute::Kind::kInt;
    cast.attrs["to"].i = static_cast<int64_t>(DataType::kFloat);
    g.nodes.push_back(std::move(cast));
    ++casts;
    out = fp32;
  }
  g.RebuildProducers();
  if (lowered) {
    report.fired["precision.lowered_nodes"] = lowered;
    report.fired["precision.casts"] = casts;
  }
  SY_RETURN_IF_ERROR(InferShapes(g));
  Status v = VerifyGraph(g);
  if (!v.ok()) return v.WithContext("after lowering precision");
  return Status::Ok();
}

}  // namespace switchyard
