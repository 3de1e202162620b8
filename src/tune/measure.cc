#include "tune/measure.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>

namespace switchyard {

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double rank = p / 100.0 * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (rank - static_cast<double>(lo));
}

int64_t PeakRssBytes() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atoll(line.c_str() + 6) * 1024;
  }
  return 0;
}

namespace {
// Stages the inputs for a device placement; kHost runs on the caller's tensors directly
// (no per-session copy: 64 sessions would otherwise hold 64 copies of the inputs and
// inflate the measured peak memory).
Status Prepare(Session& s, const TensorMap& inputs, IoPlacement io) {
  return io == IoPlacement::kHost ? Status::Ok() : s.Stage(inputs);
}
Status RunOnce(Session& s, const TensorMap& inputs, IoPlacement io) {
  return io == IoPlacement::kHost ? s.Run(inputs).status() : s.RunStaged(io);
}
}  // namespace

// The warm-up, and any build before a measurement, left the calling thread's OpenMP
// workers idle; while they exist libgomp makes the timed sessions' workers (another
// thread's team) sleep between steps whatever its wait policy says (runtime/session.h).
// Where the user chose a policy (GOMP_SPINCOUNT or OMP_WAIT_POLICY in the environment, as
// the CLI sets for its engine verbs and the tuner's workers), release them so that the
// timed session runs under that policy, as one calling thread would; otherwise keep
// libgomp's sleeping workers, since its default 300,000 spins made engines 50-100x slower
// while other processes held the CPUs.
static void ReleaseIdleWorkersUnderAPolicy() {
  if (std::getenv("GOMP_SPINCOUNT") || std::getenv("OMP_WAIT_POLICY")) ReleaseCallingThreadWorkers();
}

Result<Measurement> Measure(const std::shared_ptr<const LoadedEngine>& engine, const TensorMap& inputs,
                            const MeasureOptions& opt) {
  using Clock = std::chrono::steady_clock;
  const int n = std::max(1, opt.concurrency);
  Measurement m;
  std::mutex mu;
  std::atomic<bool> stop{false};
  // Warm-up (also validates the inputs once, so a bad input is an error, not N failures).
  {
    Session s(engine);
    SY_RETURN_IF_ERROR(Prepare(s, inputs, opt.io));
    for (int i = 0; i < std::max(1, opt.warmup); ++i) SY_RETURN_IF_ERROR(RunOnce(s, inputs, opt.io));
  }
  ReleaseIdleWorkersUnderAPolicy();
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration<double>(opt.duration_s);
  auto worker = [&]() {
    Session s(engine);
    std::vector<double> local;
    int64_t failed = 0;
    std::string err;
    Status staged = Prepare(s, inputs, opt.io);
    if (!staged.ok()) {
      ++failed;
      err = staged.ToString();
    }
    for (int w = 0; w < opt.warmup && staged.ok(); ++w) (void)RunOnce(s, inputs, opt.io);
    for (int i = 0; staged.ok(); ++i) {
      if (opt.duration_s > 0 ? Clock::now() >= deadline : i >= opt.iterations) break;
      if (stop.load()) break;
      const auto t0 = Clock::now();
      Status r = RunOnce(s, inputs, opt.io);
      const auto t1 = Clock::now();
      if (!r.ok()) {
        ++failed;
        if (err.empty()) err = r.ToString();
        continue;
      }
      local.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    std::lock_guard<std::mutex> lock(mu);
    m.latencies_ms.insert(m.latencies_ms.end(), local.begin(), local.end());
    m.failed += failed;
    if (m.first_error.empty()) m.first_error = err;
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  m.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  m.runs = static_cast<int64_t>(m.latencies_ms.size());
  if (m.runs > 0) {
    m.p50_ms = Percentile(m.latencies_ms, 50);
    m.p95_ms = Percentile(m.latencies_ms, 95);
    m.p99_ms = Percentile(m.latencies_ms, 99);
    m.mean_ms = std::accumulate(m.latencies_ms.begin(), m.latencies_ms.end(), 0.0) / static_cast<double>(m.runs);
    m.min_ms = *std::min_element(m.latencies_ms.begin(), m.latencies_ms.end());
    m.max_ms = *std::max_element(m.latencies_ms.begin(), m.latencies_ms.end());
    m.throughput_per_s = static_cast<double>(m.runs) / m.wall_s;
  }
  m.peak_memory_bytes = PeakRssBytes();
  return m;
}

namespace {

Result<InterleavedMeasurement> InterleaveOnThisThread(const std::shared_ptr<const LoadedEngine>& baseline,
                                                      const std::shared_ptr<const LoadedEngine>& candidate,
                                                      const TensorMap& inputs, const InterleaveOptions& opt) {
  using Clock = std::chrono::steady_clock;
  Session sb(baseline), sc(candidate);
  for (int i = 0; i < std::max(1, opt.warmup); ++i) {
    auto rb = sb.Run(inputs);
    if (!rb.ok()) return rb.status().WithContext("baseline");
    auto rc = sc.Run(inputs);
    if (!rc.ok()) return rc.status().WithContext("candidate");
  }
  InterleavedMeasurement m;
  const auto start = Clock::now();
  const int block = std::max(1, opt.block);
  // One untimed run, then `block` timed ones; the block's median goes to *round_ms.
  auto run_block = [&](Session& s, std::vector<double>* round_ms, std::vector<double>* runs_ms) -> Status {
    auto first = s.Run(inputs);
    if (!first.ok()) return first.status();
    std::vector<double> t;
    for (int i = 0; i < block; ++i) {
      const auto t0 = Clock::now();
      auto r = s.Run(inputs);
      const auto t1 = Clock::now();
      if (!r.ok()) return r.status();
      t.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    runs_ms->insert(runs_ms->end(), t.begin(), t.end());
    round_ms->push_back(Percentile(t, 50));
    return Status::Ok();
  };
  const int min_rounds = std::max(2, opt.min_rounds);
  const int max_rounds = std::max(min_rounds, opt.max_rounds);
  m.stopped_by = "max_rounds";
  for (int round = 0; round < max_rounds; ++round) {
    if (round % 2 == 0) {
      SY_RETURN_IF_ERROR(run_block(sb, &m.baseline_ms, &m.baseline_runs_ms).WithContext("baseline"));
      SY_RETURN_IF_ERROR(run_block(sc, &m.candidate_ms, &m.candidate_runs_ms).WithContext("candidate"));
    } else {
      SY_RETURN_IF_ERROR(run_block(sc, &m.candidate_ms, &m.candidate_runs_ms).WithContext("candidate"));
      SY_RETURN_IF_ERROR(run_block(sb, &m.baseline_ms, &m.baseline_runs_ms).WithContext("baseline"));
    }
    m.rounds = round + 1;
    if (opt.slower_rounds > 0 && m.rounds >= opt.slower_rounds && m.rounds < min_rounds &&
        PairedSpeedup(m.baseline_ms, m.candidate_ms, 500).ci_high < opt.slower_than) {
      m.stopped_by = "slower";
      break;
    }
    if (m.rounds >= min_rounds && (m.rounds - min_rounds) % 4 == 0) {
      const SpeedupEstimate e = PairedSpeedup(m.baseline_ms, m.candidate_ms, 500);
      if (e.RelativeHalfWidth() <= opt.target_rel_ci) {
        m.stopped_by = "ci";
        break;
      }
    }
    if (std::chrono::duration<double>(Clock::now() - start).count() > opt.max_seconds) {
      m.stopped_by = "max_seconds";
      break;
    }
  }
  m.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  m.speedup = PairedSpeedup(m.baseline_ms, m.candidate_ms);
  m.baseline_p50_ms = Percentile(m.baseline_runs_ms, 50);
  m.baseline_p95_ms = Percentile(m.baseline_runs_ms, 95);
  m.candidate_p50_ms = Percentile(m.candidate_runs_ms, 50);
  m.candidate_p95_ms = Percentile(m.candidate_runs_ms, 95);
  return m;
}

}  // namespace

Result<InterleavedMeasurement> MeasureInterleaved(const std::shared_ptr<const LoadedEngine>& baseline,
                                                  const std::shared_ptr<const LoadedEngine>& candidate,
                                                  const TensorMap& inputs, const InterleaveOptions& opt) {
  // Timed on a thread of its own, as Measure() and servers run inference: on a loaded
  // 2-core machine, runs on a process's initial thread were measured 10-15x slower
  // (OpenMP team of the initial thread; docs/tuner.md), which skewed ratios both ways.
  // The tuner's worker builds the candidate on this thread first: with its OpenMP workers
  // idle, both engines ran 30-45% slower on the 2-core Zen 5 and the ranking flipped
  // (MobileNetV2 fp32 2.76 -> 3.5-3.7 ms, bf16 2.52 -> 3.97-4.1; bf16 1.09x -> 0.88-0.91x).
  ReleaseIdleWorkersUnderAPolicy();
  Result<InterleavedMeasurement> result = Status::Internal("measurement thread did not run");
  std::thread t([&] { result = InterleaveOnThisThread(baseline, candidate, inputs, opt); });
  t.join();
  return result;
}

}  // namespace switchyard
