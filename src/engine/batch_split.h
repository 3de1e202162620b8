// Batch splitting (knob schedule.batch_split, docs/routes.md): a run of consecutive steps
// that treat every image of the batch on its own is executed one chunk of images at a
// time, all its steps for the first chunk, then all of them for the next. Its
// intermediates then hold one chunk and stay in the caches between the steps, where the
// whole batch's would go to memory and back (ResNet-50 batch 8: 25.7 MB per tensor in
// layer1 against 3.2 MB per image).
//
// In the engine the segment is a param of its first step: "batch_split": {"steps": K,
// "chunk": C} runs that step and the K - 1 after it C images at a time. With "workers": W
// (W >= 2) the chunks run on W threads at once, worker w taking chunks w, w + W, ...; every
// step of such an engine runs on threads / W threads, so that the workers' OpenMP teams
// together hold the engine's threads (runtime/session.cc). A segment's
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
  int workers = 1;         // chunks run at once
  // Per engine tensor: 1 where the tensor is a boundary tensor of this segment.
  std::vector<char> boundary;
  // workers >= 2: each worker but the first holds the segment's internal tensors (written
  // in it, not boundary) in a private buffer of scratch_bytes, tensor t at scratch[t] (-1:
  // not an arena tensor of the segment). The arena's intervals of those tensors, merged
  // where they overlap and packed end to end: tensors that share bytes in the arena share
  // the same bytes there, and no others do.
  int64_t scratch_bytes = 0;
  std::vector<int64_t> scratch;
};

// The segments the engine's steps declare, checked (an object of positive integers, within
// the steps, not overlapping; workers at most the engine's threads, and only with one
// segment); errors name the step.
Result<std::vector<BatchSegment>> ReadBatchSegments(const Engine& e);

// Whether the memory plan keeps the segments' chunks apart: a boundary tensor shares no
// arena bytes with another boundary tensor or with a tensor written inside the segment
// (build/builder.cc plans them so; an engine whose plan was made without the segment
// would let one chunk overwrite another's rows). Errors name the two tensors.
Status CheckBatchSegmentsPlan(const Engine& e, const std::vector<BatchSegment>& segments);

// The threads each step runs on: the engine's, or threads / workers in an engine whose
// segment runs on workers.
int WorkerThreads(const Engine& e, const std::vector<BatchSegment>& segments);

// The segment containing step s, or null.
const BatchSegment* SegmentAt(const std::vector<BatchSegment>& segments, int s);

}  // namespace switchyard
