// Layout attributes of switchyard.Attention (q_perm, k_perm, v_perm, out_perm; set by
// fuse_attention on targets whose kernels read strided operands): the operand is
// Transpose(input, q_perm), the stored output is Transpose(O, out_perm). One definition
// for the reference op and the kernels that honour them. Pure functions, thread-safe.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "switchyard/status.h"

namespace switchyard::ops {

inline constexpr const char* kAttentionLayoutAttrs[] = {"q_perm", "k_perm", "v_perm", "out_perm"};

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

}  // namespace switchyard::ops
