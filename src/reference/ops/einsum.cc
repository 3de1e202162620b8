// Einsum (opset 12): explicit and implicit outputs, ellipsis broadcasting, repeated
// indices (diagonals) and summation over every label missing from the output.
#include <algorithm>
#include <cctype>

#include "reference/ops/common.h"

namespace switchyard::ops {
namespace {

// Labels: letters are 0..51; the k-th (left-aligned) ellipsis dimension is 52 + k.
constexpr int kEllipsisBase = 52;

struct Plan {
  std::vector<std::vector<int>> in_labels;  // per input, one label per dimension
  std::vector<int> out_labels;
  int num_labels = kEllipsisBase;  // labels are < num_labels
};

int LetterLabel(char c) {
  return std::islower(static_cast<unsigned char>(c)) ? 26 + (c - 'a') : c - 'A';
}

// Splits one term ("ab...c") into letters before and after the ellipsis.
Status ParseTerm(const Node& node, const std::string& term, std::vector<int>* before,
                 std::vector<int>* after, bool* has_ellipsis) {
  *has_ellipsis = false;
  for (size_t i = 0; i < term.size();) {
    const char c = term[i];
    if (c == '.') {
      if (term.compare(i, 3, "...") != 0 || *has_ellipsis) {
        return NodeError(node, "malformed ellipsis in equation term '" + term + "'");
      }
      *has_ellipsis = true;
      i += 3;
      continue;
    }
    if (!std::isalpha(static_cast<unsigned char>(c))) {
      return NodeError(node, std::string("invalid character '") + c + "' in equation");
    }
    (*has_ellipsis ? after : before)->push_back(LetterLabel(c));
    ++i;
  }
  return Status::Ok();
}

Result<Plan> ParseEquation(const Node& node, const std::vector<int64_t>& ranks) {
  if (!node.Has("equation")) return NodeError(node, "attribute 'equation' is required");
  std::string eq;
  for (char c : node.GetString("equation", "")) {
    if (!std::isspace(static_cast<unsigned char>(c))) eq += c;
  }
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != ranks.size()) {
    return NodeError(node, "equation has " + std::to_string(terms.size()) + " operands but " +
                               std::to_string(ranks.size()) + " inputs are given");
  }
  Plan plan;
  int64_t ell_rank = 0;
  std::vector<int> count(kEllipsisBase, 0);
  struct Parsed { std::vector<int> before, after; bool ell; int64_t ell_rank; };
  std::vector<Parsed> parsed(terms.size());
  for (size_t i = 0; i < terms.size(); ++i) {
    Parsed& p = parsed[i];
    SY_RETURN_IF_ERROR(ParseTerm(node, terms[i], &p.before, &p.after, &p.ell));
    const int64_t letters = static_cast<int64_t>(p.before.size() + p.after.size());
    p.ell_rank = ranks[i] - letters;
    if (p.ell_rank < 0 || (!p.ell && p.ell_rank != 0)) {
      return NodeError(node, "operand " + std::to_string(i) + " has rank " +
                                 std::to_string(ranks[i]) + " but its term '" + terms[i] +
                                 "' names " + std::to_string(letters) + " dimensions");
    }
    ell_rank = std::max(ell_rank, p.ell_rank);
    for (int l : p.before) ++count[static_cast<size_t>(l)];
    for (int l : p.after) ++count[static_cast<size_t>(l)];
  }
  plan.num_labels = kEllipsisBase + static_cast<int>(ell_rank);
  bool any_ellipsis = false;
  for (const Parsed& p : parsed) {
    std::vector<int> labels = p.before;
    // Ellipsis dims align to the right of the broadcast ellipsis.
    for (int64_t j = 0; j < p.ell_rank; ++j) {
      labels.push_back(kEllipsisBase + static_cast<int>(ell_rank - p.ell_rank + j));
    }
    labels.insert(labels.end(), p.after.begin(), p.after.end());
    plan.in_labels.push_back(std::move(labels));
    any_ellipsis = any_ellipsis || p.ell;
  }
  if (arrow != std::string::npos) {
    std::vector<int> before, after;
    bool ell = false;
    SY_RETURN_IF_ERROR(ParseTerm(node, eq.substr(arrow + 2), &before, &after, &ell));
    std::vector<bool> seen(kEllipsisBase, false);
    for (const auto* part : {&before, &after}) {
      for (int l : *part) {
        if (count[static_cast<size_t>(l)] == 0 || seen[static_cast<size_t>(l)]) {
          return NodeError(node, "output label is repeated or absent from the inputs");
        }
        seen[static_cast<size_t>(l)] = true;
      }
    }
    plan.out_labels = before;
    // Without "..." in the output the ellipsis dims are summed over.
    if (ell) {
      for (int64_t j = 0; j < ell_rank; ++j) plan.out_labels.push_back(kEllipsisBase + static_cast<int>(j));
    }
    plan.out_labels.insert(plan.out_labels.end(), after.begin(), after.end());
  } else {
    // Implicit output: ellipsis dims, then labels used exactly once, alphabetically
    // (upper case before lower case, as numpy orders them).
    if (any_ellipsis) {
      for (int64_t j = 0; j < ell_rank; ++j) plan.out_labels.push_back(kEllipsisBase + static_cast<int>(j));
    }
    for (int l = 0; l < kEllipsisBase; ++l) {
      if (count[static_cast<size_t>(l)] == 1) plan.out_labels.push_back(l);
    }
  }
  return plan;
}

Result<std::vector<TensorType>> InferEinsum(const InferContext& ctx) {
  std::vector<size_t> idx;
  std::vector<int64_t> ranks;
  bool ranked = true;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.input(i)) return NodeError(ctx.node, "input " + std::to_string(i) + " is missing");
    idx.push_back(i);
    ranked = ranked && ctx.input(i)->has_shape;
    ranks.push_back(ctx.input(i)->rank());
  }
  SY_ASSIGN_OR_RETURN(DataType dt, SameDtype(ctx, idx));
  if (!ranked) return std::vector<TensorType>{TensorType::Unranked(dt)};
  SY_ASSIGN_OR_RETURN(Plan plan, ParseEquation(ctx.node, ranks));
  // Per label: a static size other than 1 wins over 1 and symbols; else a symbol; else 1.
  std::vector<Dim> dims(static_cast<size_t>(plan.num_labels), Dim(1));
  std::vector<bool> known(static_cast<size_t>(plan.num_labels), false);
  for (size_t i = 0; i < ranks.size(); ++i) {
    for (size_t d = 0; d < plan.in_labels[i].size(); ++d) {
      const Dim& in = ctx.input(i)->dims[d];
      const size_t l = static_cast<size_t>(plan.in_labels[i][d]);
      Dim& cur = dims[l];
      if (!known[l]) {
        cur = in;
        known[l] = true;
      } else if (in.is_static() && cur.is_static()) {
        if (in.value != cur.value && in.value != 1 && cur.value != 1) {
          return NodeError(ctx.node, "label dimension mismatch: " + std::to_string(cur.value) +
                                         " vs " + std::to_string(in.value));
        }
        if (cur.value == 1) cur = in;
      } else if (in.is_static() ? in.value != 1 : (cur.is_static() && cur.value == 1)) {
        cur = in;
      }
    }
  }
  std::vector<Dim> out;
  for (int l : plan.out_labels) out.push_back(dims[static_cast<size_t>(l)]);
  return std::vector<TensorType>{TensorType(dt, out)};
}

template <typename Acc>
void Contract(const Plan& plan, const std::vector<std::vector<Acc>>& vals,
              const std::vector<std::vector<int64_t>>& label_strides,
              const std::vector<int64_t>& sizes, std::vector<Acc>& out) {
  // Loop order: output labels (row-major), then every remaining label.
  std::vector<int> order = plan.out_labels;
  for (int l = 0; l < plan.num_labels; ++l) {
    if (sizes[static_cast<size_t>(l)] >= 0 &&
        std::find(order.begin(), order.end(), l) == order.end()) {
      order.push_back(l);
    }
  }
  const size_t n_out = plan.out_labels.size(), n_in = vals.size();
  int64_t inner = 1;
  for (size_t k = n_out; k < order.size(); ++k) inner *= sizes[static_cast<size_t>(order[k])];
  std::vector<int64_t> idx(order.size(), 0), off(n_in, 0);
  for (size_t o = 0; o < out.size(); ++o) {
    for (int64_t r = 0; r < inner; ++r) {
      Acc prod = 1;
      for (size_t i = 0; i < n_in; ++i) prod *= vals[i][static_cast<size_t>(off[i])];
      out[o] += prod;
      // Advance the odometer over all labels, keeping input offsets in step.
      for (size_t k = order.size(); k-- > 0;) {
        const size_t l = static_cast<size_t>(order[k]);
        ++idx[k];
        for (size_t i = 0; i < n_in; ++i) off[i] += label_strides[i][l];
        if (idx[k] < sizes[l]) break;
        for (size_t i = 0; i < n_in; ++i) off[i] -= label_strides[i][l] * idx[k];
        idx[k] = 0;
      }
    }
  }
}

Result<std::vector<Tensor>> RunEinsum(const KernelContext& ctx) {
  std::vector<int64_t> ranks;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    SY_ASSIGN_OR_RETURN(const Tensor* t, RequireInput(ctx, i));
    if (t->dtype() != ctx.input(0)->dtype()) return NodeError(ctx.node, "inputs differ in type");
    if (t->dtype() == DataType::kString || t->dtype() == DataType::kBool) {
      return NodeError(ctx.node, "inputs must be numeric");
    }
    ranks.push_back(t->rank());
  }
  if (ranks.empty()) return NodeError(ctx.node, "at least one input is required");
  SY_ASSIGN_OR_RETURN(Plan plan, ParseEquation(ctx.node, ranks));
  const size_t n_labels = static_cast<size_t>(plan.num_labels);
  std::vector<int64_t> sizes(n_labels, -1);  // -1: label unused
  for (size_t i = 0; i < ranks.size(); ++i) {
    const Tensor& t = *ctx.input(i);
    for (size_t d = 0; d < plan.in_labels[i].size(); ++d) {
      const size_t l = static_cast<size_t>(plan.in_labels[i][d]);
      const int64_t s = t.dim(static_cast<int64_t>(d));
      if (sizes[l] < 0 || sizes[l] == 1) {
        sizes[l] = s;
      } else if (s != sizes[l] && s != 1) {
        return NodeError(ctx.node, "label dimension mismatch: " + std::to_string(sizes[l]) +
                                       " vs " + std::to_string(s) + " in input " + std::to_string(i));
      }
    }
  }
  // A label repeated within one input (a diagonal) must have equal sizes there.
  std::vector<std::vector<int64_t>> strides(ranks.size(), std::vector<int64_t>(n_labels, 0));
  for (size_t i = 0; i < ranks.size(); ++i) {
    const Tensor& t = *ctx.input(i);
    const std::vector<int64_t> st = Strides(t.shape());
    for (size_t d = 0; d < plan.in_labels[i].size(); ++d) {
      const size_t l = static_cast<size_t>(plan.in_labels[i][d]);
      const int64_t s = t.dim(static_cast<int64_t>(d));
      if (s == 1 && sizes[l] != 1) {
        if (std::count(plan.in_labels[i].begin(), plan.in_labels[i].end(), plan.in_labels[i][d]) > 1) {
          return NodeError(ctx.node, "repeated label has different sizes in input " + std::to_string(i));
        }
        continue;  // broadcast: stride 0
      }
      strides[i][l] += st[d];
    }
  }
  std::vector<int64_t> out_shape;
  for (int l : plan.out_labels) out_shape.push_back(sizes[static_cast<size_t>(l)]);
  const DataType dt = ctx.input(0)->dtype();
  Tensor out(dt, out_shape);
  int64_t total = 1;
  for (int64_t s : sizes) if (s >= 0) total *= s;
  if (total == 0) return std::vector<Tensor>{std::move(out)};
  if (IsFloatType(dt)) {
    std::vector<std::vector<double>> vals;
    for (size_t i = 0; i < ranks.size(); ++i) vals.push_back(ctx.input(i)->ToDoubleVector());
    std::vector<double> acc(static_cast<size_t>(out.numel()), 0.0);
    Contract(plan, vals, strides, sizes, acc);
    for (int64_t i = 0; i < out.numel(); ++i) out.SetDouble(i, acc[static_cast<size_t>(i)]);
  } else {
    // Integers are exact in int64 (wrapping like the fixed-width type would on store).
    std::vector<std::vector<int64_t>> vals;
    for (size_t i = 0; i < ranks.size(); ++i) vals.push_back(ctx.input(i)->ToInt64Vector());
    std::vector<int64_t> acc(static_cast<size_t>(out.numel()), 0);
    Contract(plan, vals, strides, sizes, acc);
    for (int64_t i = 0; i < out.numel(); ++i) out.SetInt64(i, acc[static_cast<size_t>(i)]);
  }
  return std::vector<Tensor>{std::move(out)};
}

}  // namespace

SY_REGISTER_OPS(Einsum) {
  reg.Register({"", "Einsum", 12, 1, -1, 1, 1, InferEinsum, RunEinsum});
}

}  // namespace switchyard::ops
