#include "onnx/importer.h"

#include <google/protobuf/io/coded_stream.h>
#include <onnx/onnx_pb.h>

#include <climits>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <unordered_map>

#include "ir/shape_inference.h"
#include "io/memory_budget.h"
#include "ir/verifier.h"
#include "onnx/tensor_proto.h"
#include "reference/op_registry.h"

namespace switchyard {
namespace fs = std::filesystem;
namespace {

std::string NormDomain(const std::string& d) { return d == "ai.onnx" ? "" : d; }

Result<TensorType> ConvertType(const onnx::TypeProto& tp, const std::string& what) {
  // No type at all: unknown (inference fills it; inputs are refused for lacking a dtype).
  if (tp.value_case() == onnx::TypeProto::VALUE_NOT_SET) return TensorType{};
  if (tp.value_case() != onnx::TypeProto::kTensorType) {
    return Status::Unsupported(what + ": only tensor types are supported (sequence, map, "
                               "optional and sparse types are not)");
  }
  const auto& tt = tp.tensor_type();
  TensorType out;
  if (tt.elem_type() != 0) {
    if (!IsKnownDataType(tt.elem_type())) {
      return Status::Unsupported(what + ": element type " + std::to_string(tt.elem_type()) +
                                 " is not supported");
    }
    out.dtype = static_cast<DataType>(tt.elem_type());
  }
  if (!tt.has_shape()) return out;
  out.has_shape = true;
  for (int i = 0; i < tt.shape().dim_size(); ++i) {
    const auto& d = tt.shape().dim(i);
    if (d.has_dim_value()) {
      if (d.dim_value() < 0) {
        return Status::Invalid(what + ": dimension " + std::to_string(i) + " is negative (" +
                               std::to_string(d.dim_value()) + ")");
      }
      if (d.dim_value() > (int64_t{1} << 40)) {
        return Status::OutOfRange(what + ": dimension " + std::to_string(i) + " (" +
                                  std::to_string(d.dim_value()) + ") is too large");
      }
      out.dims.emplace_back(d.dim_value());
    } else if (d.has_dim_param()) {
      out.dims.push_back(Dim::Symbol(d.dim_param()));
    } else {
      out.dims.emplace_back();
    }
  }
  // Each static dim is bounded above, but their product may still overflow int64 in
  // later size arithmetic; no real tensor has more elements than this anyway. Zero dims are
  // left out of the product: [0, 2^40, 2^40] is empty, yet Flatten or Reshape multiply its
  // other dims.
  std::vector<int64_t> static_dims;
  for (const Dim& d : out.dims) {
    if (d.is_static() && d.value != 0) static_dims.push_back(d.value);
  }
  auto numel = CheckedNumElements(static_dims);
  if (!numel.ok()) return numel.status().WithContext(what);
  return out;
}

Result<Attribute> ConvertAttribute(const onnx::AttributeProto& a, const TensorProtoOptions& topt,
                                   const std::string& what) {
  Attribute out;
  using A = onnx::AttributeProto;
  switch (a.type()) {
    case A::FLOAT: out.kind = Attribute::Kind::kFloat; out.f = a.f(); break;
    case A::INT: out.kind = Attribute::Kind::kInt; out.i = a.i(); break;
    case A::STRING: out.kind = Attribute::Kind::kString; out.s = a.s(); break;
    case A::FLOATS:
      out.kind = Attribute::Kind::kFloats;
      out.floats.assign(a.floats().begin(), a.floats().end());
      break;
    case A::INTS:
      out.kind = Attribute::Kind::kInts;
      out.ints.assign(a.ints().begin(), a.ints().end());
      break;
    case A::STRINGS:
      out.kind = Attribute::Kind::kStrings;
      out.strings.assign(a.strings().begin(), a.strings().end());
      break;
    case A::TENSOR: {
      out.kind = Attribute::Kind::kTensor;
      SY_ASSIGN_OR_RETURN(out.t, TensorFromProto(a.t(), topt, what + " attribute '" + a.name() + "'"));
      break;
    }
    case A::TENSORS:
      out.kind = Attribute::Kind::kTensors;
      for (const auto& t : a.tensors()) {
        SY_ASSIGN_OR_RETURN(Tensor v, TensorFromProto(t, topt, what + " attribute '" + a.name() + "'"));
        out.tensors.push_back(std::move(v));
      }
      break;
    case A::GRAPH:
      out.kind = Attribute::Kind::kGraph;  // subgraphs: ops that take them are unsupported
      break;
    case A::GRAPHS:
      out.kind = Attribute::Kind::kGraphs;
      break;
    default:
      return Status::Unsupported(what + ": attribute '" + a.name() + "' has unsupported type " +
                                 std::to_string(static_cast<int>(a.type())));
  }
  return out;
}

// Bytes a tensor proto declares (shape x element size; string tensors: their strings), or
// -1 when the shape is invalid (TensorFromProto then reports it).
int64_t DeclaredBytes(const onnx::TensorProto& p) {
  if (!IsKnownDataType(p.data_type())) return -1;
  const DataType dt = static_cast<DataType>(p.data_type());
  if (dt == DataType::kString) {
    int64_t n = 0;
    for (const auto& s : p.string_data()) n += static_cast<int64_t>(s.size() + sizeof(std::string));
    return n;
  }
  std::vector<int64_t> shape(p.dims().begin(), p.dims().end());
  const int64_t esize = static_cast<int64_t>(DataTypeSize(dt));
  auto n = CheckedNumElements(shape, INT64_MAX / esize);
  return n.ok() ? *n * esize : -1;
}

// The --max-memory check of one tensor before it is allocated: alone, and with what the
// import already holds (the model bytes and the tensors converted so far).
Status CheckTensorBudget(const onnx::TensorProto& p, const std::string& what, int64_t* held) {
  if (memory_budget::Limit() <= 0) return Status::Ok();
  const int64_t bytes = DeclaredBytes(p);
  if (bytes < 0) return Status::Ok();
  const DataType dt = static_cast<DataType>(p.data_type());
  const std::string label = what + " (" + DataTypeName(dt) + " " +
                            ShapeToString(std::vector<int64_t>(p.dims().begin(), p.dims().end())) + ")";
  SY_RETURN_IF_ERROR(memory_budget::Check(label, bytes));
  SY_RETURN_IF_ERROR(memory_budget::Check(
      label + " with the " + memory_budget::FormatBytes(*held) + " the import already holds", *held + bytes));
  *held += bytes;
  return Status::Ok();
}

// Kahn's algorithm over node indices; on a cycle, names the nodes that could not run.
Result<std::vector<size_t>> TopoOrder(const std::vector<Node>& nodes, size_t nvalues,
                                      const std::vector<char>& available) {
  std::vector<int> producer(nvalues, -1);
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (ValueId o : nodes[n].outputs) {
      if (o != kNoValue) producer[static_cast<size_t>(o)] = static_cast<int>(n);
    }
  }
  std::vector<int> pending(nodes.size(), 0);
  std::vector<std::vector<size_t>> readers(nodes.size());
  for (size_t n = 0; n < nodes.size(); ++n) {
    std::set<int> deps;
    for (ValueId in : nodes[n].inputs) {
      if (in == kNoValue || available[static_cast<size_t>(in)]) continue;
      const int p = producer[static_cast<size_t>(in)];
      if (p >= 0) deps.insert(p);
    }
    pending[n] = static_cast<int>(deps.size());
    for (int p : deps) readers[static_cast<size_t>(p)].push_back(n);
  }
  std::vector<size_t> order, ready;
  for (size_t n = nodes.size(); n-- > 0;) {
    if (pending[n] == 0) ready.push_back(n);
  }
  // Keep the file's order where it is already valid: take the lowest ready index first.
  std::set<size_t> queue(ready.begin(), ready.end());
  while (!queue.empty()) {
    const size_t n = *queue.begin();
    queue.erase(queue.begin());
    order.push_back(n);
    for (size_t r : readers[n]) {
      if (--pending[r] == 0) queue.insert(r);
    }
  }
  if (order.size() != nodes.size()) {
    std::string names;
    int shown = 0;
    for (size_t n = 0; n < nodes.size(); ++n) {
      if (pending[n] > 0 && shown++ < 10) names += (names.empty() ? "" : ", ") + NodeLabel(nodes[n]);
    }
    return Status::Invalid("the graph has a cycle; these nodes depend on each other: " + names);
  }
  return order;
}

}  // namespace

std::vector<UnsupportedOp> UnsupportedOps(const Graph& g) {
  std::map<std::pair<std::string, std::string>, UnsupportedOp> m;
  const OpRegistry& reg = OpRegistry::Global();
  for (const Node& n : g.nodes) {
    const int64_t opset = g.Opset(n.domain);
    if (reg.Find(n.domain, n.op_type, opset)) continue;
    UnsupportedOp& u = m[{n.domain, n.op_type}];
    u.domain = n.domain;
    u.op_type = n.op_type;
    u.opset = opset;
    ++u.count;
  }
  std::vector<UnsupportedOp> out;
  for (auto& [k, v] : m) out.push_back(v);
  return out;
}

Result<Graph> ImportModelFromBytes(const std::string& bytes, const std::string& where,
                                   const std::string& base_dir, const ImportOptions& options) {
  if (bytes.empty()) return Status::ParseError(where + ": the file is empty, not an ONNX model");
  onnx::ModelProto model;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  in.SetTotalBytesLimit(INT_MAX);
  if (!model.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage()) {
    return Status::ParseError(where + ": not a valid ONNX model (the protobuf is truncated "
                              "or corrupt)");
  }
  if (!model.has_graph() || model.ir_version() <= 0 || model.opset_import_size() == 0) {
    return Status::ParseError(where + ": not an ONNX model (missing " +
                              std::string(!model.has_graph() ? "graph"
                                          : model.ir_version() <= 0 ? "ir_version"
                                                                    : "opset_import") +
                              ")");
  }
  const onnx::GraphProto& gp = model.graph();
  Graph g;
  g.name = gp.name();
  g.ir_version = model.ir_version();
  g.producer_name = model.producer_name();
  g.producer_version = model.producer_version();
  for (const auto& op : model.opset_import()) {
    g.opsets[NormDomain(op.domain())] = op.version();
  }
  if (!g.opsets.count("")) {
    // A model with only custom domains still needs none of ours; treat as unset.
    g.opsets[""] = 0;
  }
  const int64_t opset = g.opsets[""];
  bool uses_default = false;
  for (const auto& n : gp.node()) uses_default |= NormDomain(n.domain()).empty();
  if (uses_default && (opset < kMinOpset || opset > kMaxOpset)) {
    return Status::Unsupported(where + ": default-domain opset " + std::to_string(opset) +
                               " is outside the supported range " + std::to_string(kMinOpset) +
                               "-" + std::to_string(kMaxOpset));
  }
  if (gp.sparse_initializer_size() > 0) {
    return Status::Unsupported(where + ": sparse initializers are not supported");
  }

  TensorProtoOptions topt;
  topt.base_dir = base_dir;
  topt.max_bytes = options.max_tensor_bytes;
  const std::string ctx = where;
  // --max-memory: the model's bytes, then every initializer and tensor attribute before it
  // is allocated.
  int64_t held = static_cast<int64_t>(bytes.size());
  SY_RETURN_IF_ERROR(memory_budget::Check(where + ": the model", held));

  // Initializers.
  for (const auto& init : gp.initializer()) {
    const std::string what = ctx + ": initializer '" + init.name() + "'";
    if (init.name().empty()) return Status::Invalid(ctx + ": an initializer has no name");
    if (g.FindValue(init.name()) != kNoValue) {
      return Status::Invalid(what + " is defined twice");
    }
    SY_RETURN_IF_ERROR(CheckTensorBudget(init, what, &held));
    SY_ASSIGN_OR_RETURN(Tensor t, TensorFromProto(init, topt, what));
    const ValueId id = g.AddValue(init.name(), TensorType::FromShape(t.dtype(), t.shape()));
    g.constants.emplace(id, std::move(t));
  }
  // Graph inputs (those that are also initializers are constants with a default).
  for (const auto& vi : gp.input()) {
    const std::string what = ctx + ": input '" + vi.name() + "'";
    SY_ASSIGN_OR_RETURN(TensorType type, ConvertType(vi.type(), what));
    const ValueId existing = g.FindValue(vi.name());
    if (existing != kNoValue) {
      if (g.IsConstant(existing)) continue;
      return Status::Invalid(what + " is declared twice");
    }
    if (type.dtype == DataType::kUndefined) {
      return Status::Invalid(what + " has no element type");
    }
    g.inputs.push_back(g.AddValue(vi.name(), std::move(type)));
  }
  std::vector<char> available(g.values.size(), 1);

  // Node outputs first (nodes may be listed out of order), then inputs.
  std::set<std::string> node_names;
  for (int i = 0; i < gp.node_size(); ++i) {
    const auto& np = gp.node(i);
    Node n;
    n.op_type = np.op_type();
    n.domain = NormDomain(np.domain());
    n.name = np.name().empty() ? np.op_type() + "_" + std::to_string(i) : np.name();
    if (!node_names.insert(n.name).second) n.name += "_" + std::to_string(i);
    for (const auto& out : np.output()) {
      if (out.empty()) {
        n.outputs.push_back(kNoValue);
        continue;
      }
      if (g.FindValue(out) != kNoValue) {
        return Status::Invalid(ctx + ": " + NodeLabel(n) + " produces '" + out +
                               "', which is already defined (by an initializer, an input or "
                               "another node)");
      }
      n.outputs.push_back(g.AddValue(out));
    }
    g.nodes.push_back(std::move(n));
  }
  available.resize(g.values.size(), 0);
  for (int i = 0; i < gp.node_size(); ++i) {
    const auto& np = gp.node(i);
    Node& n = g.nodes[static_cast<size_t>(i)];
    if (n.domain.empty() || g.opsets.count(n.domain) == 0) {
      if (!n.domain.empty()) {
        return Status::Invalid(ctx + ": " + NodeLabel(n) + " uses domain '" + n.domain +
                               "', which the model does not import");
      }
    }
    for (const auto& in : np.input()) {
      if (in.empty()) {
        n.inputs.push_back(kNoValue);
        continue;
      }
      const ValueId id = g.FindValue(in);
      if (id == kNoValue) {
        return Status::Invalid(ctx + ": " + NodeLabel(n) + " reads '" + in +
                               "', which no node, input or initializer produces");
      }
      n.inputs.push_back(id);
    }
    for (const auto& a : np.attribute()) {
      const std::string awhat = ctx + ": " + NodeLabel(n) + " attribute '" + a.name() + "'";
      if (a.type() == onnx::AttributeProto::TENSOR) SY_RETURN_IF_ERROR(CheckTensorBudget(a.t(), awhat, &held));
      for (const auto& t : a.tensors()) SY_RETURN_IF_ERROR(CheckTensorBudget(t, awhat, &held));
      SY_ASSIGN_OR_RETURN(Attribute attr, ConvertAttribute(a, topt, ctx + ": " + NodeLabel(n)));
      n.attrs[a.name()] = std::move(attr);
    }
  }
  auto order = TopoOrder(g.nodes, g.values.size(), available);
  if (!order.ok()) return order.status().WithContext(ctx);
  std::vector<Node> sorted;
  sorted.reserve(order->size());
  for (size_t idx : *order) sorted.push_back(std::move(g.nodes[idx]));
  g.nodes = std::move(sorted);
  g.RebuildProducers();

  // Declared types of intermediates and outputs.
  for (const auto& vi : gp.value_info()) {
    const ValueId id = g.FindValue(vi.name());
    if (id == kNoValue || g.IsConstant(id)) continue;
    auto t = ConvertType(vi.type(), ctx + ": value_info '" + vi.name() + "'");
    if (t.ok()) g.value(id).type = *t;
  }
  for (const auto& vi : gp.output()) {
    const ValueId id = g.FindValue(vi.name());
    if (id == kNoValue) {
      return Status::Invalid(ctx + ": graph output '" + vi.name() +
                             "' is not produced by any node, input or initializer");
    }
    SY_ASSIGN_OR_RETURN(TensorType t, ConvertType(vi.type(), ctx + ": output '" + vi.name() + "'"));
    if (!g.IsConstant(id) && g.value(id).producer >= 0) g.value(id).type = t;
    g.outputs.push_back(id);
  }

  std::vector<UnsupportedOp> unsupported = UnsupportedOps(g);
  if (!unsupported.empty() && !options.allow_unsupported) {
    std::string list;
    for (const auto& u : unsupported) {
      list += (list.empty() ? "" : ", ") + (u.domain.empty() ? "" : u.domain + ".") + u.op_type +
              " (" + std::to_string(u.count) + (u.count == 1 ? " node)" : " nodes)");
    }
    return Status::Unsupported(ctx + ": unsupported ops at opset " + std::to_string(opset) +
                               ": " + list);
  }
  ShapeInferenceOptions sopt;
  sopt.allow_unsupported = options.allow_unsupported;
  Status s = InferShapes(g, sopt);
  if (!s.ok()) return s.WithContext(ctx);
  s = VerifyGraph(g);
  if (!s.ok()) return s.WithContext(ctx + ": IR verifier");
  return g;
}

Result<Graph> ImportModel(const std::string& path, const ImportOptions& options) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Status::NotFound("model file '" + path + "' does not exist");
  if (fs::is_directory(path, ec)) return Status::Invalid("'" + path + "' is a folder, not a model file");
  const auto size = fs::file_size(path, ec);
  if (ec) return Status::IoError("cannot read model file '" + path + "'");
  SY_RETURN_IF_ERROR(memory_budget::Check("model file '" + path + "'", static_cast<int64_t>(size)));
  if (size >= (uint64_t{2} << 30)) {
    return Status::OutOfRange("'" + path + "' is larger than 2 GiB; protobuf models cannot be; "
                              "use external data");
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::IoError("cannot open model file '" + path + "'");
  std::string bytes(size, '\0');
  f.read(bytes.data(), static_cast<std::streamsize>(size));
  if (!f) return Status::IoError("reading model file '" + path + "' failed");
  std::string dir = fs::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  auto g = ImportModelFromBytes(bytes, path, dir, options);
  if (g.ok()) g->model_path = path;
  return g;
}

}  // namespace switchyard
