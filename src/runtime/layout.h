// Buffer sizes of tensors stored in oneDNN-style layout tags ("nchw", "nhwc", "nChw16c",
// "nCdhw8c"): one letter per logical dim in storage order, upper case for a dim that is
// also blocked, followed by "<block><letter>" inner blocks. Blocked dims are padded to a
// multiple of their block. Plain ("") and permuted tags need exactly numel elements.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "switchyard/status.h"

namespace switchyard {

// Bytes a tensor of logical `shape` (NCHW order) needs in `layout`.
Result<int64_t> LayoutBytes(const std::string& layout, const std::vector<int64_t>& shape, DataType dtype);

}  // namespace switchyard
