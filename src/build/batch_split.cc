#include "build/batch_split.h"

#include <algorithm>
#include <set>

#include "engine/batch_split.h"

namespace switchyard {
namespace {

// Ops whose output image i depends on input image i only (given the shape checks below),
// and whose kernels take the batch from the shapes of each call.
const std::set<std::string> kPerImageOps = {
    "Conv", "FusedConv", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool",
    "Relu", "LeakyRelu", "Clip", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Add", "Mul", "Sub",
    "FusedElementwise", "Reorder", "BatchNormalization", "Cast"};
const std::set<std::string> kWeightOps = {"Conv", "FusedConv", "BatchNormalization"};

// Which steps pay. A step run image by image keeps its tensors' bytes per image in the
// caches (the gain), but calls its kernel once per image, each call giving every thread a
// smaller share (a cost, counted as kMinBytesPerThread per image and engine thread), and
// reads its weights once per image (N - 1 more reads; weights up to kSmallWeights stay in
// the caches and cost nothing). The run ends where the sum of gain minus cost over its
// steps peaks.
//
// On 2 Zen 5 cores ResNet-50 (per-image engines against batch 8, summed per stage): the stem,
// layer1 and layer2 ran faster image by image (layer1 28.4-29.0 ms against 33.1-33.7,
// layer2 43.5-44.2 against 45.1-46.2), layer3 slower (64.2-66.7 against 61.7-62.8); its first
// 3x3 (2.4 MB of weights, 1.0 MB per image) sinks the sum. With a run that stopped at the
// first step under 512 KiB per image: ResNet-50 b8 181.7-206.4 ms against 189.3-213.2
// unsplit (3 alternations), MobileNetV2 b8 20.1-21.2 against 21.4-25.3; with no such
// floor MobileNetV2's later, smaller steps made it 3% and EfficientNet-B0's 80 steps 12%
// slower. On the 16-core Xeon at 16 threads the 2-core runs lost (MobileNetV2 b8 8.1-9.3
// ms against 6.3-8.1, 5 alternations).
constexpr int64_t kSmallWeights = 256 << 10;
constexpr int64_t kMinBytesPerThread = 256 << 10;
// The engines of more threads take no run: on the 16-core Xeon at 4 threads ResNet-50 b8's
// 18-step run (stem to layer2.1) lost, 187.7-230.3 ms against 171.9-227.6 (4 alternations),
// where 2 threads gained there too (MobileNetV2 b8 33.1-40.4 against 35.0-40.5).
constexpr int kMaxThreads = 2;
// Below this the whole batch's tensors already fit in the caches of the machines measured.
constexpr int64_t kMinTensorBytes = 8 << 20;
// Engines of this many threads or more run the images on workers of kWorkerThreads threads
// each, at once (engine/batch_split.h): a small CNN's steps at batch 8 give 16 threads too
// little work each. The 16-core Xeon host (session 28), as a proxy 8 sessions of a threads=2
// batch-1 engine running at once against the threads=16 batch-8 engine, ms for 8 images:
// EfficientNet-B0 fp32 8.3-9.5 against 13.4-17.7, bf16 7.1-7.5 against 9.4-11.0;
// MobileNetV2 5.5 against 7.4-8.1, bf16 4.0 against 4.6-5.1; ResNet-50 55-59 against
// 66-75, bf16 22.3-22.6 against 23.4-32.3. Workers of 4 threads (4 sessions, each 2 images)
// and of 1 thread (each image on one core) were slower than of 2. On 2 cores the same proxy
// lost (every image reads all weights again), hence the floor.
constexpr int kMinWorkerThreads = 8;
constexpr int kWorkerThreads = 2;
// The run on workers is taken only where the steps after it hold at most this share of
// the tensor bytes per image (those run on one worker's threads).
constexpr double kMaxRestShare = 0.1;

bool BatchOuter(const std::string& layout) { return layout.empty() || layout[0] == 'n' || layout[0] == 'N'; }

struct StepCost {
  bool ok = false;
  int64_t weights = 0, per_image = 0, largest = 0;
};

StepCost Cost(const Engine& e, const EngineStep& st, int64_t n) {
  StepCost c;
  if (!kPerImageOps.count(st.op_type)) return c;
  const bool weights = kWeightOps.count(st.op_type) != 0;
  const size_t out_rank = st.output_shapes.empty() ? 0 : st.output_shapes[0].size();
  for (int p : st.packed) c.weights += static_cast<int64_t>(e.constants[static_cast<size_t>(p)].nbytes());
  auto batched = [&](const EngineTensor& t, const std::vector<int64_t>& shape) {
    if (shape.empty() || shape[0] != n || t.bytes < 0 || t.bytes % n != 0 || !BatchOuter(t.layout)) return false;
    return std::all_of(shape.begin(), shape.end(), [](int64_t d) { return d >= 0; });
  };
  for (size_t i = 0; i < st.inputs.size(); ++i) {
    if (st.inputs[i] < 0) continue;
    const EngineTensor& t = e.tensors[static_cast<size_t>(st.inputs[i])];
    if (t.kind == EngineTensor::Kind::kConstant) {
      const Tensor& k = e.constants[static_cast<size_t>(t.constant)];
      // A constant broadcast over the batch; an elementwise constant with a batch dim of
      // its own would need slicing.
      if (!weights && k.rank() == static_cast<int64_t>(out_rank) && k.rank() > 0 && k.shape()[0] != 1) return c;
      c.weights += static_cast<int64_t>(k.nbytes());
      continue;
    }
    // Dim 0 is the batch only at the output's rank (a [4,1,1] operand broadcast over a
    // [4,4,H,W] output is per channel, whatever the batch).
    if (i >= st.input_shapes.size() || st.input_shapes[i].size() != out_rank || !batched(t, st.input_shapes[i])) {
      return c;
    }
    c.per_image += t.bytes / n;
    c.largest = std::max(c.largest, t.bytes);
  }
  for (size_t i = 0; i < st.outputs.size(); ++i) {
    if (st.outputs[i] < 0) continue;
    const EngineTensor& t = e.tensors[static_cast<size_t>(st.outputs[i])];
    if (t.is_output || t.kind != EngineTensor::Kind::kIntermediate || i >= st.output_shapes.size() ||
        !batched(t, st.output_shapes[i])) {
      return c;
    }
    c.per_image += t.bytes / n;
    c.largest = std::max(c.largest, t.bytes);
  }
  c.ok = true;
  return c;
}

// The run on workers: every per-image step from the first, if the steps after it are small.
BatchSplitChoice WorkersRun(const Engine& e, int64_t n) {
  BatchSplitChoice run;
  int64_t weights = 0, per_image = 0;
  size_t s = 0;
  for (; s < e.steps.size(); ++s) {
    const StepCost c = Cost(e, e.steps[s], n);
    if (!c.ok) break;
    weights += c.weights;
    per_image += c.per_image;
  }
  int64_t rest = 0;
  for (size_t q = s; q < e.steps.size(); ++q) {
    for (int t : e.steps[q].outputs) {
      if (t >= 0 && e.tensors[static_cast<size_t>(t)].bytes > 0) rest += e.tensors[static_cast<size_t>(t)].bytes / n;
    }
  }
  if (s < 2 || static_cast<double>(rest) > kMaxRestShare * static_cast<double>(per_image + rest)) return run;
  run = {0, static_cast<int>(s), n, 1, weights, per_image};
  run.workers = static_cast<int>(std::min<int64_t>(n, e.header.threads / kWorkerThreads));
  return run;
}

// Declares `run` in the engine (params.batch_split of its first step) and shrinks the
// segment's internal tensors to one chunk; returns it, or an empty choice where the engine
// refuses it.
BatchSplitChoice MarkBatchSplit(Engine& e, const BatchSplitChoice& run) {
  if (run.steps < 2) return BatchSplitChoice{};
  nlohmann::json param = {{"steps", run.steps}, {"chunk", run.chunk}};
  if (run.workers > 1) param["workers"] = run.workers;
  e.steps[static_cast<size_t>(run.first)].params["batch_split"] = param;
  // The segment's internal tensors hold one chunk.
  auto segments = ReadBatchSegments(e);
  if (!segments.ok() || segments->size() != 1) {
    e.steps[static_cast<size_t>(run.first)].params.erase("batch_split");
    return BatchSplitChoice{};
  }
  const BatchSegment& seg = segments->front();
  for (int s = seg.first; s < seg.end; ++s) {
    for (int t : e.steps[static_cast<size_t>(s)].outputs) {
      EngineTensor& et = e.tensors[static_cast<size_t>(t)];
      if (!seg.boundary[static_cast<size_t>(t)]) et.bytes = et.bytes / run.batch * run.chunk;
    }
  }
  return run;
}

}  // namespace

BatchSplitChoice PlanBatchSplit(Engine& e) {
  BatchSplitChoice best;
  for (const auto& ranges : e.input_ranges) {
    for (const DimRange& r : ranges) {
      if (r.min != r.max) return best;  // a batch known only per run
    }
  }
  if (e.header.threads > kMaxThreads && e.header.threads < kMinWorkerThreads) return best;
  if (e.steps.empty() || e.steps[0].input_shapes.empty() || e.steps[0].input_shapes[0].empty()) return best;
  const int64_t n = e.steps[0].input_shapes[0][0];
  if (n < 2) return best;
  if (e.header.threads >= kMinWorkerThreads) return MarkBatchSplit(e, WorkersRun(e, n));
  const int64_t call_cost = kMinBytesPerThread * std::max(1, e.header.threads);
  int64_t weights = 0, per_image = 0, largest = 0;
  double score = 0, best_score = 0;
  for (size_t s = 0; s < e.steps.size(); ++s) {
    const StepCost c = Cost(e, e.steps[s], n);
    if (!c.ok) break;
    const double reread = c.weights > kSmallWeights ? static_cast<double>(c.weights) * static_cast<double>(n - 1) /
                                                          static_cast<double>(n)
                                                    : 0.0;
    score += static_cast<double>(c.per_image - call_cost) - reread;
    weights += c.weights;
    per_image += c.per_image;
    largest = std::max(largest, c.largest);
    if (largest >= kMinTensorBytes && score > best_score) {
      best_score = score;
      best = {0, static_cast<int>(s) + 1, n, 1, weights, per_image};
    }
  }
  return MarkBatchSplit(e, best);
}

std::string DescribeBatchSplit(const Engine& e, const BatchSplitChoice& c) {
  if (c.steps == 0) {
    if (e.header.threads > kMaxThreads && e.header.threads < kMinWorkerThreads) {
      return "batch split: none (engines of " + std::to_string(kMaxThreads + 1) + " to " +
             std::to_string(kMinWorkerThreads - 1) + " threads take none)";
    }
    if (e.header.threads >= kMinWorkerThreads) {
      return "batch split: none (no run of per-image steps from the first one that leaves under " +
             std::to_string(static_cast<int>(kMaxRestShare * 100)) + "% of the tensor bytes after it)";
    }
    return "batch split: none (no run of per-image steps with large tensors and few weights)";
  }
  std::string workers;
  if (c.workers > 1) {
    workers = ", on " + std::to_string(c.workers) + " workers of " + std::to_string(e.header.threads / c.workers) +
              " threads at once";
  }
  return "batch split: steps '" + e.steps[static_cast<size_t>(c.first)].name + "' .. '" +
         e.steps[static_cast<size_t>(c.first + c.steps - 1)].name + "' (" + std::to_string(c.steps) + " steps, " +
         std::to_string(c.batch) + " images in chunks of " + std::to_string(c.chunk) + workers + "; weights " +
         std::to_string(c.weight_bytes) + " bytes, tensors " + std::to_string(c.image_bytes) + " bytes per image)";
}

}  // namespace switchyard
