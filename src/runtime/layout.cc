#include "runtime/layout.h"

#include <cctype>

#include "ir/tensor.h"

namespace switchyard {
namespace {

char Lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }
bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

}  // namespace

Result<int64_t> LayoutBytes(const std::string& layout, const std::vector<int64_t>& shape, DataType dtype) {
  // The outer letters name every dim once in storage order; logically the batch dim
  // (n) comes first, then channels (c), then the spatial dims in the order written.
  const std::string outer = layout.substr(0, layout.find_first_of("0123456789"));
  std::string logical;
  for (char c : outer) if (Lower(c) == 'n') logical += 'n';
  for (char c : outer) if (Lower(c) == 'c') logical += 'c';
  for (char c : outer) if (Lower(c) != 'n' && Lower(c) != 'c') logical += Lower(c);
  if (!outer.empty() && logical.size() != shape.size()) {
    return Status::Invalid("layout '" + layout + "' does not fit a tensor of rank " + std::to_string(shape.size()));
  }
  std::vector<int64_t> padded = shape;
  // Inner blocks: digits then the letter of the blocked dim; that dim pads to the block.
  for (size_t i = outer.size(); i < layout.size();) {
    int64_t block = 0;
    size_t j = i;
    while (j < layout.size() && IsDigit(layout[j])) block = block * 10 + (layout[j++] - '0');
    if (j >= layout.size() || block <= 0) return Status::Invalid("layout '" + layout + "' has a malformed block");
    const size_t dim = logical.find(Lower(layout[j]));
    if (dim == std::string::npos) return Status::Invalid("layout '" + layout + "' blocks an unknown dim");
    padded[dim] = (padded[dim] + block - 1) / block * block;
    i = j + 1;
  }
  SY_ASSIGN_OR_RETURN(int64_t n, CheckedNumElements(padded));
  return n * static_cast<int64_t>(DataTypeSize(dtype));
}

}  // namespace switchyard
