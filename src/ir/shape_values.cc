#include "ir/shape_values.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace switchyard {
namespace {

// -1 of a Reshape: the input's dims divided by the output's other dims, with symbols
// cancelling (e.g. [batch, seq, 768] -> [batch, seq, 12, -1] gives 64).
Dim SolveMinusOne(const std::vector<Dim>& in, const std::vector<Dim>& out, size_t minus) {
  int64_t in_static = 1, out_static = 1;
  std::multiset<std::string> in_syms, out_syms;
  for (const Dim& d : in) {
    if (d.is_static()) in_static *= d.value;
    else if (d.symbol.empty()) return Dim();
    else in_syms.insert(d.symbol);
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (i == minus) continue;
    const Dim& d = out[i];
    if (d.is_static()) out_static *= d.value;
    else if (d.symbol.empty()) return Dim();
    else out_syms.insert(d.symbol);
  }
  for (const std::string& s : out_syms) {
    auto it = in_syms.find(s);
    if (it == in_syms.end()) return Dim();
    in_syms.erase(it);
  }
  if (out_static == 0 || in_static % out_static != 0) return Dim();
  const int64_t q = in_static / out_static;
  if (in_syms.empty()) return Dim(q);
  if (in_syms.size() == 1 && q == 1) return Dim::Symbol(*in_syms.begin());
  return Dim();
}

}  // namespace

bool ShapeValues::Elements(ValueId id, const KnownFn& known, std::vector<Dim>* out) const {
  if (id == kNoValue) return false;
  auto it = values_.find(id);
  if (it != values_.end()) {
    *out = it->second;
    return true;
  }
  const Tensor* t = known(id);
  if (!t || t->rank() > 1 || !IsIntegerType(t->dtype())) return false;
  out->clear();
  for (int64_t i = 0; i < t->numel(); ++i) out->emplace_back(t->GetInt64(i));
  return true;
}

void ShapeValues::Propagate(const Node& n, const Graph& g, const KnownFn& known) {
  if (!n.domain.empty() || n.outputs.empty() || n.outputs[0] == kNoValue) return;
  const ValueId out = n.outputs[0];
  std::vector<Dim> a, b, r;
  const std::string& op = n.op_type;
  if (op == "Shape") {
    const TensorType& t = g.value(n.inputs[0]).type;
    if (!t.has_shape) return;
    const int64_t rank = t.rank();
    int64_t start = n.GetInt("start", 0), end = n.GetInt("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, start, rank);
    values_[out] = std::vector<Dim>(t.dims.begin() + start, t.dims.begin() + end);
  } else if ((op == "Identity" || op == "Cast" || op == "Squeeze" || op == "Unsqueeze") &&
             Elements(n.inputs[0], known, &a)) {
    if (op == "Cast" && !IsIntegerType(static_cast<DataType>(n.GetInt("to", 0)))) return;
    values_[out] = a;
  } else if (op == "Gather" && Elements(n.inputs[0], known, &a) && n.GetInt("axis", 0) == 0) {
    const Tensor* idx = known(n.inputs[1]);
    if (!idx || idx->rank() > 1) return;
    for (int64_t i = 0; i < idx->numel(); ++i) {
      int64_t k = idx->GetInt64(i);
      if (k < 0) k += static_cast<int64_t>(a.size());
      if (k < 0 || k >= static_cast<int64_t>(a.size())) return;
      r.push_back(a[static_cast<size_t>(k)]);
    }
    values_[out] = r;
  } else if (op == "Concat") {
    for (ValueId in : n.inputs) {
      if (!Elements(in, known, &a)) return;
      r.insert(r.end(), a.begin(), a.end());
    }
    values_[out] = r;
  } else if (op == "Slice" && Elements(n.inputs[0], known, &a)) {
    const bool attrs = n.Has("starts");
    std::vector<Dim> s, e, st;
    int64_t start, end, step = 1;
    if (attrs) {
      auto ss = n.GetInts("starts"), ee = n.GetInts("ends");
      if (ss.size() != 1 || ee.size() != 1) return;
      start = ss[0];
      end = ee[0];
    } else {
      if (!Elements(n.inputs[1], known, &s) || !Elements(n.inputs[2], known, &e) || s.size() != 1 ||
          e.size() != 1 || !s[0].is_static() || !e[0].is_static()) {
        return;
      }
      start = s[0].value;
      end = e[0].value;
      if (n.HasInput(4)) {
        if (!Elements(n.inputs[4], known, &st) || st.size() != 1 || !st[0].is_static()) return;
        step = st[0].value;
      }
    }
    const int64_t len = static_cast<int64_t>(a.size());
    if (step != 1) return;
    if (start < 0) start += len;
    if (end < 0) end += len;
    start = std::clamp<int64_t>(start, 0, len);
    end = std::clamp<int64_t>(end, start, len);
    values_[out] = std::vector<Dim>(a.begin() + start, a.begin() + end);
  } else if ((op == "Mul" || op == "Add" || op == "Sub" || op == "Div") &&
             Elements(n.inputs[0], known, &a) && Elements(n.inputs[1], known, &b)) {
    if (a.size() != b.size() && a.size() != 1 && b.size() != 1) return;
    const size_t len = std::max(a.size(), b.size());
    for (size_t i = 0; i < len; ++i) {
      const Dim& x = a[a.size() == 1 ? 0 : i];
      const Dim& y = b[b.size() == 1 ? 0 : i];
      if (!x.is_static() || !y.is_static()) {
        // x*1, x+0, x-0, x/1 keep the symbol.
        const bool keep = !x.is_static() && y.is_static() &&
                          ((op == "Mul" || op == "Div") ? y.value == 1 : y.value == 0);
        r.push_back(keep ? x : Dim());
        continue;
      }
      int64_t v = op == "Mul" ? x.value * y.value : op == "Add" ? x.value + y.value
                : op == "Sub" ? x.value - y.value : (y.value ? x.value / y.value : -1);
      r.emplace_back(v);
    }
    values_[out] = r;
  }
}

void ShapeValues::Refine(const Node& n, const Graph& g, const KnownFn& known,
                         std::vector<TensorType>& types) const {
  if (!n.domain.empty() || types.empty()) return;
  std::vector<Dim> shape;
  TensorType& t = types[0];
  auto improves = [&](const std::vector<Dim>& dims) {
    if (!t.has_shape) return true;
    if (t.dims.size() != dims.size()) return false;
    for (size_t i = 0; i < dims.size(); ++i) {
      if (!t.dims[i].is_static() && t.dims[i].symbol.empty() &&
          (dims[i].is_static() || !dims[i].symbol.empty())) {
        return true;
      }
    }
    return false;
  };
  auto apply = [&](std::vector<Dim> dims) {
    if (!improves(dims)) return;
    if (t.has_shape) {  // keep what inference already knew
      for (size_t i = 0; i < dims.size(); ++i) {
        if (t.dims[i].is_static() || !t.dims[i].symbol.empty()) dims[i] = t.dims[i];
      }
    }
    t.has_shape = true;
    t.dims = std::move(dims);
  };
  if (n.op_type == "Reshape" && n.inputs.size() > 1 && Elements(n.inputs[1], known, &shape)) {
    const TensorType& in = g.value(n.inputs[0]).type;
    const bool allowzero = n.GetInt("allowzero", 0) != 0;
    std::vector<Dim> dims = shape;
    size_t minus = dims.size();
    for (size_t i = 0; i < dims.size(); ++i) {
      if (!dims[i].is_static()) continue;
      if (dims[i].value == 0 && !allowzero) {
        if (!in.has_shape || i >= in.dims.size()) return;
        dims[i] = in.dims[i];
      } else if (dims[i].value == -1) {
        minus = i;
      }
    }
    if (minus < dims.size()) dims[minus] = in.has_shape ? SolveMinusOne(in.dims, dims, minus) : Dim();
    apply(dims);
  } else if (n.op_type == "Expand" && n.inputs.size() > 1 && Elements(n.inputs[1], known, &shape)) {
    const TensorType& in = g.value(n.inputs[0]).type;
    if (!in.has_shape) return;
    const size_t rank = std::max(in.dims.size(), shape.size());
    std::vector<Dim> dims(rank);
    for (size_t i = 0; i < rank; ++i) {
      const bool has_in = i + in.dims.size() >= rank, has_s = i + shape.size() >= rank;
      const Dim x = has_in ? in.dims[i + in.dims.size() - rank] : Dim(1);
      const Dim y = has_s ? shape[i + shape.size() - rank] : Dim(1);
      if (y.is_static() && y.value == 1) dims[i] = x;
      else if (x.is_static() && x.value == 1) dims[i] = y;
      else if (x == y) dims[i] = x;
      else dims[i] = x.is_static() ? x : y.is_static() ? y : Dim();
    }
    apply(dims);
  } else if (n.op_type == "ConstantOfShape" && Elements(n.inputs[0], known, &shape)) {
    apply(shape);
  }
}

}  // namespace switchyard
