// Layout attributes of switchyard.Attention (q_perm, k_perm, v_perm, out_perm; set by
// fuse_attention, whose absorbed Transposes they replace): the operand is
// Transpose(input, q_perm), the stored output is Transpose(O, out_perm). One definition
// for the reference op and the kernels (CPU native, CUDA), which read the operands as
// strided views. Pure functions, thread-safe.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "switchyard/status.h"

namespace switchyard::ops {

// The attribute `name` as a permutation of `rank` axes that keeps the last axis last
// (the head dim stays contiguous); empty when absent; an error naming the node otherwise.
Result<std::vector<int64_t>> AttentionLayoutPerm(const Node& node, const char* name, size_t rank);

// dims[perm[0]], dims[perm[1]], ... (dims itself for an empty perm).
template <typename T>
std::vector<T> Permuted(const std::vector<T>& dims, const std::vector<int64_t>& perm) {
  if (perm.empty()) return dims;
  std::vector<T> out;
  for (int64_t a : perm) out.push_back(dims[static_cast<size_t>(a)]);
  return out;
}

// An operand as attention reads it: its logical dims (after the layout perm) and their
// element strides in the stored, contiguous tensor.
struct AttentionOperand {
  std::vector<int64_t> dims, strides;
};
Result<AttentionOperand> AttentionOperandView(const Node& node, const char* perm_attr,
                                              const std::vector<int64_t>& stored);
// Element strides of the logical output O (dims `logical` = [batch..., S, Dv]) in the
// stored tensor Transpose(O, out_perm).
Result<std::vector<int64_t>> AttentionOutputStrides(const Node& node, const std::vector<int64_t>& logical);
// Per dim of the broadcast batch shape `batch`, the operand's stride (right-aligned; 0
// where the operand lacks the dim or has size 1). False when a dim neither equals nor
// broadcasts.
bool AttentionBatchStrides(const AttentionOperand& x, const std::vector<int64_t>& batch, int64_t* out);

}  // namespace switchyard::ops
