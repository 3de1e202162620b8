// Batch splitting (knob schedule.batch_split, docs/routes.md): a run of consecutive steps
// that treat every image of the batch on its own is executed one chunk of images at a
// time, all its steps for the first chunk, then all of them for the next. Its
// intermediates then hold one chunk and stay in the caches between the steps, where the
// whole batch's would go to memory and back (ResNet-50 batch 8: 25.7 MB per tensor in
// layer1 against 3.2 MB per image).
//
// In the engine the segment is a param of its first step: "batch_split": {"steps": K,
// "chunk": C} runs that step and the K - 1 after it C images at a time. A segment's
// boundary tensors (read in it but written before it, or written in it and read after it
// or returned) keep the whole batch; each chunk sees the rows of its images through a view.
// The rest, its internal tensors, hold one chunk. The memory plan keeps the boundary
// tensors alive over the whole segment (build/builder.cc, PlanArena).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/engine.h"
#include "switchyard/status.h"

namespace switchyard {

struct BatchSegment {
  int first = 0, end = 0;  // steps [first, end)
  int64_t chunk = 1;       // images per chunk
  // Per engine tensor: 1 where the tensor is a boundary tensor of this segment.
  std::vector<char> boundary;
};

// The segments the engine's steps declare, checked (an object of positive integers, within
// the steps, not overlapping); errors name the step.
Result<std::vector<BatchSegment>> ReadBatchSegments(const Engine& e);

// Whether the memory plan keeps the segments' chunks apart: a boundary tensor shares no
// arena bytes with another boundary tensor or with a tensor written inside the segment
// (build/builder.cc plans them so; an engine whose plan was made without the segment
// would let one chunk overwrite another's rows). Errors name the two tensors.
Status CheckBatchSegmentsPlan(const Engine& e, const std::vector<BatchSegment>& segments);

// The segment containing step s, or null.
const BatchSegment* SegmentAt(const std::vector<BatchSegment>& segments, int s);

}  // namespace switchyard
