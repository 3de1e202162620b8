// Symbolic data propagation for shape tensors. PyTorch exports compute shapes at run
// time (Shape -> Gather -> Unsqueeze -> Concat -> Reshape); with dynamic dimensions those
// tensors are not constants, but their elements are still known as Dims (static sizes or
// symbols). This tracks them through the usual shape arithmetic and refines the output
// types of Reshape, Expand and ConstantOfShape, so symbolic dims survive. Used only by
// shape inference; not thread-safe (one instance per inference run).
#pragma once

#include <functional>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"

namespace switchyard {

class ShapeValues {
 public:
  using KnownFn = std::function<const Tensor*(ValueId)>;
  // Records the elements of `node`'s output when it is a shape expression over values
  // whose elements are known (constants, Shape outputs, earlier expressions).
  void Propagate(const Node& node, const Graph& g, const KnownFn& known);
  // Improves `types` (the op's inferred outputs) from the inputs' shape values.
  void Refine(const Node& node, const Graph& g, const KnownFn& known, std::vector<TensorType>& types) const;

 private:
  // Elements of a 0-D or 1-D integer value, if known.
  bool Elements(ValueId id, const KnownFn& known, std::vector<Dim>* out) const;
  std::unordered_map<ValueId, std::vector<Dim>> values_;
};

}  // namespace switchyard
