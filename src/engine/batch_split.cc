#include "engine/batch_split.h"

#include <algorithm>
#include <string>
#include <utility>

namespace switchyard {
namespace {

// BatchSegment::scratch: the segment's internal arena tensors' intervals, merged where they
// overlap and packed end to end (64-byte aligned).
void PackWorkerScratch(const Engine& e, BatchSegment& seg) {
  struct Interval {
    int64_t lo, hi;
    int t;
  };
  std::vector<Interval> iv;
  for (int s = seg.first; s < seg.end; ++s) {
    for (int t : e.steps[static_cast<size_t>(s)].outputs) {
      if (t < 0 || static_cast<size_t>(t) >= e.tensors.size() || seg.boundary[static_cast<size_t>(t)]) continue;
      const EngineTensor& et = e.tensors[static_cast<size_t>(t)];
      if (et.offset >= 0 && et.bytes > 0) iv.push_back({et.offset, et.offset + et.bytes, t});
    }
  }
  std::sort(iv.begin(), iv.end(), [](const Interval& a, const Interval& b) { return a.lo < b.lo; });
  seg.scratch.assign(e.tensors.size(), -1);
  int64_t block_lo = 0, block_hi = 0, block_at = 0;  // the current block: arena [lo, hi) at block_at
  for (const Interval& x : iv) {
    if (x.lo >= block_hi) {  // a new block, after the one before
      block_at = (block_at + (block_hi - block_lo) + 63) / 64 * 64;
      block_lo = block_hi = x.lo;
    }
    block_hi = std::max(block_hi, x.hi);
    seg.scratch[static_cast<size_t>(x.t)] = block_at + (x.lo - block_lo);
  }
  seg.scratch_bytes = iv.empty() ? 0 : block_at + (block_hi - block_lo);
}

}  // namespace

Result<std::vector<BatchSegment>> ReadBatchSegments(const Engine& e) {
  std::vector<BatchSegment> segments;
  const int n = static_cast<int>(e.steps.size());
  for (int s = 0; s < n; ++s) {
    const nlohmann::json& params = e.steps[static_cast<size_t>(s)].params;
    if (!params.is_object() || !params.contains("batch_split")) continue;
    const std::string where = "step '" + e.steps[static_cast<size_t>(s)].name + "': params.batch_split";
    const nlohmann::json& b = params["batch_split"];
    if (!b.is_object() || !b.contains("steps") || !b.contains("chunk") || !b["steps"].is_number_integer() ||
        !b["chunk"].is_number_integer()) {
      return Status::Invalid(where + " must be an object with integer 'steps' and 'chunk'");
    }
    const int64_t steps = b["steps"].get<int64_t>(), chunk = b["chunk"].get<int64_t>();
    if (steps < 1 || steps > n - s || chunk < 1) {
      return Status::Invalid(where + " has steps " + std::to_string(steps) + " and chunk " + std::to_string(chunk) +
                             "; needs 1 <= steps <= " + std::to_string(n - s) + " and chunk >= 1");
    }
    if (!segments.empty() && s < segments.back().end) {
      return Status::Invalid(where + " starts inside the segment of step '" +
                             e.steps[static_cast<size_t>(segments.back().first)].name + "'");
    }
    int64_t workers = 1;
    if (b.contains("workers")) {
      if (!b["workers"].is_number_integer() || b["workers"].get<int64_t>() < 1 ||
          b["workers"].get<int64_t>() > std::max(1, e.header.threads)) {
        return Status::Invalid(where + ".workers must be an integer from 1 to the engine's " +
                               std::to_string(e.header.threads) + " threads");
      }
      workers = b["workers"].get<int64_t>();
    }
    BatchSegment seg;
    seg.first = s;
    seg.end = s + static_cast<int>(steps);
    seg.chunk = chunk;
    seg.workers = static_cast<int>(workers);
    segments.push_back(std::move(seg));
  }
  for (const BatchSegment& seg : segments) {
    if (seg.workers > 1 && segments.size() > 1) {
      return Status::Invalid("step '" + e.steps[static_cast<size_t>(seg.first)].name +
                             "': params.batch_split runs on workers, which an engine allows in its only segment");
    }
  }
  // Boundary tensors: read inside from outside, or written inside and used after.
  std::vector<int> producer(e.tensors.size(), -1);
  for (int s = 0; s < n; ++s) {
    for (int t : e.steps[static_cast<size_t>(s)].outputs) {
      if (t >= 0 && static_cast<size_t>(t) < producer.size()) producer[static_cast<size_t>(t)] = s;
    }
  }
  for (BatchSegment& seg : segments) {
    seg.boundary.assign(e.tensors.size(), 0);
    auto inside = [&](int s) { return s >= seg.first && s < seg.end; };
    for (int s = 0; s < n; ++s) {
      for (int t : e.steps[static_cast<size_t>(s)].inputs) {
        if (t < 0 || static_cast<size_t>(t) >= e.tensors.size()) continue;
        const size_t ut = static_cast<size_t>(t);
        if (e.tensors[ut].kind == EngineTensor::Kind::kConstant) continue;
        if (inside(s) && !inside(producer[ut])) seg.boundary[ut] = 1;   // comes in
        if (!inside(s) && inside(producer[ut])) seg.boundary[ut] = 1;   // goes out
      }
    }
    for (int t : e.outputs) {
      if (t >= 0 && static_cast<size_t>(t) < e.tensors.size() && inside(producer[static_cast<size_t>(t)])) {
        seg.boundary[static_cast<size_t>(t)] = 1;
      }
    }
    if (seg.workers > 1) PackWorkerScratch(e, seg);
  }
  return segments;
}

Status CheckBatchSegmentsPlan(const Engine& e, const std::vector<BatchSegment>& segments) {
  auto planned = [&](int t) {
    const EngineTensor& et = e.tensors[static_cast<size_t>(t)];
    return et.offset >= 0 && et.bytes > 0;
  };
  auto overlap = [&](int a, int b) {
    const EngineTensor& x = e.tensors[static_cast<size_t>(a)];
    const EngineTensor& y = e.tensors[static_cast<size_t>(b)];
    return x.offset < y.offset + y.bytes && y.offset < x.offset + x.bytes;
  };
  for (const BatchSegment& seg : segments) {
    std::vector<int> boundary, touched;
    for (size_t t = 0; t < e.tensors.size(); ++t) {
      if (seg.boundary[t] && planned(static_cast<int>(t))) boundary.push_back(static_cast<int>(t));
    }
    for (int s = seg.first; s < seg.end; ++s) {
      for (int t : e.steps[static_cast<size_t>(s)].outputs) {
        if (t >= 0 && !seg.boundary[static_cast<size_t>(t)] && planned(t)) touched.push_back(t);
      }
    }
    touched.insert(touched.end(), boundary.begin(), boundary.end());
    for (int b : boundary) {
      for (int t : touched) {
        if (t != b && overlap(b, t)) {
          return Status::Invalid("step '" + e.steps[static_cast<size_t>(seg.first)].name +
                                 "': params.batch_split's segment has '" + e.tensors[static_cast<size_t>(b)].name +
                                 "', which its chunks share, in the arena bytes of '" +
                                 e.tensors[static_cast<size_t>(t)].name + "' (a memory plan made without the segment)");
        }
      }
    }
  }
  return Status::Ok();
}

int WorkerThreads(const Engine& e, const std::vector<BatchSegment>& segments) {
  const int threads = std::max(1, e.header.threads);
  for (const BatchSegment& seg : segments) {
    if (seg.workers > 1) return std::max(1, threads / seg.workers);
  }
  return threads;
}

const BatchSegment* SegmentAt(const std::vector<BatchSegment>& segments, int s) {
  for (const BatchSegment& seg : segments) {
    if (s >= seg.first && s < seg.end) return &seg;
  }
  return nullptr;
}

}  // namespace switchyard
