// schedule.batch_split=auto: chooses the engine's batch-split segment (engine/batch_split.h)
// from its assembled steps, before the memory plan.
#pragma once

#include <string>

#include "engine/engine.h"

namespace switchyard {

struct BatchSplitChoice {
  int first = 0, steps = 0;  // steps == 0: none
  int64_t batch = 0, chunk = 1;
  int64_t weight_bytes = 0, image_bytes = 0;  // the segment's constants; its tensors' bytes per image
  int workers = 1;                             // chunks at once (engine/batch_split.h)
};

// A run of steps from the first one whose every step treats each image on its own (an op
// of a known per-image kind whose non-constant inputs and outputs all have the same static
// batch N >= 2 as dim 0, batch-outer layouts, no graph output), ending where the sum over
// its steps of bytes per image, less a per-call cost of kMinBytesPerThread per engine thread
// and less the weights' extra reads (N - 1 of N, weights over kSmallWeights), peaks; taken
// where some tensor of the run holds at least kMinTensorBytes for the whole batch
// (otherwise the batch already fits in the caches) and the engine has at most kMaxThreads.
// Engines of 8 threads or more instead take every per-image step from the first (if the
// steps after them hold at most a tenth of the tensor bytes per image) and run the images
// on workers of 2 threads each, one image per chunk. Marks it in the first step's params
// and shrinks its internal tensors to one chunk.
BatchSplitChoice PlanBatchSplit(Engine& e);

// "batch split: steps 'a' .. 'b' (K steps, N images in chunks of C)" or "batch split: none
// (why)" for the build report.
std::string DescribeBatchSplit(const Engine& e, const BatchSplitChoice& c);

}  // namespace switchyard
