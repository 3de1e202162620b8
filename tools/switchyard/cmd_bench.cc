// `switchyard bench ENGINE|MODEL [--route STR] [--target cpu|cuda] [--input NAME=FILE ...] [--warmup N]
// [--iterations N | --duration SECONDS] [--concurrency N] [--json]`: end-to-end latency,
// throughput and memory of one engine. Missing inputs are generated (seeded). --io
// host|pinned|device (device engines) chooses where inputs and outputs live while timed
// (runtime/session.h, IoPlacement). --profile then runs one more session with per-step
// timing and prints where the time goes.
// --check-outputs (a load test) compares every run's outputs bitwise with one first
// single-session run, counts mismatches and failures, samples the resident set while the
// sessions run, and exits 1 on any mismatch or failure.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <new>
#include <thread>

#include "commands.h"
#include "engine_loader.h"
#include "io/memory_budget.h"
#include "runtime/session.h"
#include "tune/measure.h"

namespace switchyard::cli {
namespace {

struct BenchArgs {
  std::string path, route, target;  // target "": cpu, or an engine's own
  std::string io = "host";          // --io: IoPlacement name
  std::vector<std::string> inputs, shapes;
  int warmup = 3, iterations = 20, concurrency = 1, profile_steps = 15;
  double duration = 0;
  uint64_t seed = 1;
  bool json = false, profile = false, check_outputs = false;
};

// ---- --check-outputs: the load test ----

int64_t ResidentBytes() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atoll(line.c_str() + 6) * 1024;
  }
  return 0;
}

// "" when `got` equals `want` bit for bit (names, dtypes, shapes, bytes); else what differs.
std::string CompareOutputs(const TensorMap& want, const TensorMap& got) {
  if (got.size() != want.size()) {
    return std::to_string(got.size()) + " outputs instead of " + std::to_string(want.size());
  }
  for (const auto& [name, w] : want) {
    auto it = got.find(name);
    if (it == got.end()) return "output '" + name + "' is missing";
    const Tensor& g = it->second;
    if (g.dtype() != w.dtype() || g.shape() != w.shape()) {
      return "output '" + name + "' is " + DataTypeName(g.dtype()) + " " + ShapeToString(g.shape()) +
             " instead of " + DataTypeName(w.dtype()) + " " + ShapeToString(w.shape());
    }
    if (w.dtype() == DataType::kString ? g.strings() != w.strings()
                                       : (g.nbytes() != w.nbytes() ||
                                          (w.nbytes() && std::memcmp(g.raw(), w.raw(), w.nbytes()) != 0))) {
      return "output '" + name + "' differs from the single-session run";
    }
  }
  return "";
}

struct LoadResult {
  Measurement m;
  int64_t checked = 0, mismatches = 0;
  std::string first_mismatch;
  int64_t rss_after_warmup = 0, rss_max = 0, rss_end = 0;
};

// One run of a session on `inputs` (already staged unless io is kHost), outputs copied out.
Result<TensorMap> RunOnce(Session& s, const TensorMap& inputs, IoPlacement io) {
  if (io == IoPlacement::kHost) return s.Run(inputs);
  SY_RETURN_IF_ERROR(s.RunStaged(io));
  return s.StagedOutputs(io);
}

// Like Measure(): `concurrency` sessions, one thread each, warm-up, then timed runs until
// the deadline (or `iterations` each); besides, every run's outputs (warm-up included) are
// compared with `expected`, exceptions count as failures, and a sampler records the resident
// set once every session has warmed up, its maximum and its value at the end.
LoadResult RunLoad(const std::shared_ptr<const LoadedEngine>& engine, const TensorMap& inputs,
                   const TensorMap& expected, const BenchArgs& a, IoPlacement io) {
  using Clock = std::chrono::steady_clock;
  const int n = std::max(1, a.concurrency);
  LoadResult res;
  std::mutex mu;
  std::condition_variable cv;
  int warmed = 0;
  bool started = false;
  Clock::time_point start, deadline;
  auto note_failure = [&](const std::string& err) {
    std::lock_guard<std::mutex> lock(mu);
    ++res.m.failed;
    if (res.m.first_error.empty()) res.m.first_error = err;
  };
  auto check = [&](const Result<TensorMap>& r) {
    if (!r.ok()) return note_failure(r.status().ToString());
    const std::string diff = CompareOutputs(expected, *r);
    std::lock_guard<std::mutex> lock(mu);
    ++res.checked;
    if (!diff.empty()) {
      ++res.mismatches;
      if (res.first_mismatch.empty()) res.first_mismatch = diff;
    }
  };
  auto worker = [&]() {
    std::vector<double> local;
    try {
      Session s(engine);
      if (io != IoPlacement::kHost) {
        Status st = s.Stage(inputs);
        if (!st.ok()) note_failure(st.ToString());
      }
      for (int w = 0; w < a.warmup; ++w) check(RunOnce(s, inputs, io));
      {
        // Time starts when every session has warmed up.
        std::unique_lock<std::mutex> lock(mu);
        if (++warmed == n) {
          start = Clock::now();
          deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(a.duration));
          started = true;
          cv.notify_all();
        }
        cv.wait(lock, [&] { return started; });
      }
      for (int i = 0;; ++i) {
        if (a.duration > 0 ? Clock::now() >= deadline : i >= a.iterations) break;
        const auto t0 = Clock::now();
        auto r = RunOnce(s, inputs, io);
        const auto t1 = Clock::now();
        if (r.ok()) local.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        check(r);
      }
    } catch (const std::bad_alloc&) {
      note_failure(memory_budget::OutOfMemoryMessage("a session"));
    } catch (const std::exception& e) {
      note_failure(std::string("exception: ") + e.what());
    }
    std::lock_guard<std::mutex> lock(mu);
    if (!started) {  // this session failed before warming up: do not keep the others waiting
      if (++warmed == n) {
        start = Clock::now();
        deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(a.duration));
        started = true;
        cv.notify_all();
      }
    }
    res.m.latencies_ms.insert(res.m.latencies_ms.end(), local.begin(), local.end());
  };
  std::atomic<bool> done{false};
  std::thread sampler([&] {
    bool first = true;
    while (!done.load()) {
      bool go;
      {
        std::lock_guard<std::mutex> lock(mu);
        go = started;
      }
      if (go) {
        const int64_t rss = ResidentBytes();
        std::lock_guard<std::mutex> lock(mu);
        if (first) res.rss_after_warmup = rss;
        first = false;
        res.rss_max = std::max(res.rss_max, rss);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  const auto end = Clock::now();
  done = true;
  sampler.join();
  res.rss_end = ResidentBytes();
  res.rss_max = std::max(res.rss_max, res.rss_end);
  Measurement& m = res.m;
  m.wall_s = started ? std::chrono::duration<double>(end - start).count() : 0;
  m.runs = static_cast<int64_t>(m.latencies_ms.size());
  if (m.runs > 0) {
    m.p50_ms = Percentile(m.latencies_ms, 50);
    m.p95_ms = Percentile(m.latencies_ms, 95);
    m.p99_ms = Percentile(m.latencies_ms, 99);
    double sum = 0;
    for (double v : m.latencies_ms) sum += v;
    m.mean_ms = sum / static_cast<double>(m.runs);
    m.min_ms = *std::min_element(m.latencies_ms.begin(), m.latencies_ms.end());
    m.max_ms = *std::max_element(m.latencies_ms.begin(), m.latencies_ms.end());
    m.throughput_per_s = m.wall_s > 0 ? static_cast<double>(m.runs) / m.wall_s : 0;
  }
  m.peak_memory_bytes = PeakRssBytes();
  return res;
}

// Per-step wall times of `iterations` runs after `warmup`, printed as a table per kernel
// (op type, provider, variant) and the slowest steps. Times include each kernel's own
// threading; the sum is close to, not equal to, the end-to-end latency.
int Profile(const std::shared_ptr<const LoadedEngine>& engine, const TensorMap& inputs, int warmup,
            int iterations, int top) {
  const Engine& e = engine->engine();
  Session session(engine);
  // On a thread of its own, as Measure() runs (the initial thread's OpenMP team runs
  // much slower on a loaded machine; tune/measure.cc). Each step's figure is its median
  // over the timed runs (robust to other load on a shared machine).
  const int runs = std::max(1, iterations);
  std::vector<std::vector<double>> per_step(e.steps.size());
  // Each timed run's wall time and the sum of its steps: the difference is the time spent
  // between the steps (shapes, buffers, threads' hand-over, the outputs).
  std::vector<double> run_wall, run_steps;
  Status status = Status::Ok();
  std::thread t([&] {
    std::vector<double> prev;
    for (int i = 0; i < warmup + runs && status.ok(); ++i) {
      session.set_step_timing(i >= warmup);
      const auto t0 = std::chrono::steady_clock::now();
      auto r = session.Run(inputs);
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (!r.ok()) status = r.status();
      if (i < warmup || !status.ok()) continue;
      const std::vector<double>& now = session.step_seconds();
      prev.resize(now.size(), 0.0);
      double sum = 0;
      for (size_t s = 0; s < now.size(); ++s) {
        per_step[s].push_back(now[s] - prev[s]);
        sum += now[s] - prev[s];
      }
      run_wall.push_back(wall);
      run_steps.push_back(sum);
      prev = now;
    }
  });
  t.join();
  if (!status.ok()) return ReportError(status);
  struct Row {
    double ms = 0;
    int count = 0;
  };
  std::map<std::string, Row> by_kernel;
  double total = 0;
  std::vector<std::pair<double, size_t>> steps;
  for (size_t s = 0; s < e.steps.size(); ++s) {
    const EngineStep& st = e.steps[s];
    const double ms = Percentile(per_step[s], 50) * 1e3;
    std::string key = st.op_type + " [" + st.provider + (st.variant.empty() ? "" : "/" + st.variant) + "]";
    by_kernel[key].ms += ms;
    by_kernel[key].count += 1;
    total += ms;
    steps.push_back({ms, s});
  }
  std::vector<std::pair<std::string, Row>> rows(by_kernel.begin(), by_kernel.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.ms > b.second.ms; });
  std::printf("profile: %d runs, sum of the steps' medians %.3f ms\n", runs, total);
  const double run_ms = Percentile(run_wall, 50) * 1e3, in_steps_ms = Percentile(run_steps, 50) * 1e3;
  std::printf("median run %.3f ms, of which in steps %.3f ms (between steps: %.3f ms)\n", run_ms, in_steps_ms,
              run_ms - in_steps_ms);
  std::printf("%10s %6s %5s  %s\n", "ms/run", "%", "steps", "kernel");
  for (const auto& [key, r] : rows) {
    std::printf("%10.3f %6.1f %5d  %s\n", r.ms, 100.0 * r.ms / total, r.count, key.c_str());
  }
  std::sort(steps.begin(), steps.end(), std::greater<>());
  std::printf("slowest steps:\n");
  for (size_t i = 0; i < std::min<size_t>(steps.size(), static_cast<size_t>(std::max(0, top))); ++i) {
    const EngineStep& st = e.steps[steps[i].second];
    std::string in_shape = st.input_shapes.empty() ? "" : ShapeToString(st.input_shapes[0]);
    std::string out_shape = st.output_shapes.empty() ? "" : ShapeToString(st.output_shapes[0]);
    std::printf("%10.3f  %s (%s) %s -> %s\n", steps[i].first, st.name.c_str(), st.op_type.c_str(),
                in_shape.c_str(), out_shape.c_str());
  }
  return 0;
}

int Bench(const BenchArgs& a) {
  auto src = LoadOrBuild(a.path, a.route, a.shapes, a.target);
  if (!src.ok()) return ReportError(src.status());
  auto inputs = EngineInputs(src->engine->engine(), a.inputs, a.seed);
  if (!inputs.ok()) return ReportError(inputs.status());
  const Engine& e = src->engine->engine();
  auto io = ParseIoPlacement(a.io);
  if (!io.ok()) return ReportError(io.status().WithContext("--io"));
  if (*io != IoPlacement::kHost && e.header.target == "cpu") {
    return ReportError(Status::Invalid("--io " + a.io + " needs a device engine (--target cuda); cpu engines "
                                       "read the caller's tensors in place (--io host)"));
  }
  if (memory_budget::Limit() > 0 && e.header.target == "cpu" && a.concurrency > 1) {
    // --max-memory: every session holds its own arena.
    int64_t constant_bytes = 0;
    for (const Tensor& c : e.constants) constant_bytes += static_cast<int64_t>(c.nbytes());
    Status st = memory_budget::Check(
        std::to_string(a.concurrency) + " sessions of the engine (" + memory_budget::FormatBytes(constant_bytes) +
            " of constants and " + std::to_string(a.concurrency) + " arenas of " +
            memory_budget::FormatBytes(e.arena_bytes) + ")",
        constant_bytes + static_cast<int64_t>(a.concurrency) * e.arena_bytes);
    if (!st.ok()) return ReportError(st.WithContext("--concurrency"));
  }
  LoadResult load;
  Result<Measurement> m = Status::Internal("not measured");
  if (a.check_outputs) {
    // The reference: one session, one run, before any concurrency.
    Session first(src->engine);
    auto expected = first.Run(*inputs);
    if (!expected.ok()) return ReportError(expected.status());
    load = RunLoad(src->engine, *inputs, *expected, a, *io);
    m = load.m;
  } else {
    MeasureOptions opt;
    opt.warmup = a.warmup;
    opt.iterations = a.iterations;
    opt.duration_s = a.duration;
    opt.concurrency = a.concurrency;
    opt.io = *io;
    m = Measure(src->engine, *inputs, opt);
  }
  if (!m.ok()) return ReportError(m.status());
  nlohmann::json j = {{"route", e.header.route},
                      {"threads", e.header.threads},
                      {"concurrency", a.concurrency},
                      {"io", a.io},
                      {"p50_ms", m->p50_ms},
                      {"p95_ms", m->p95_ms},
                      {"p99_ms", m->p99_ms},
                      {"mean_ms", m->mean_ms},
                      {"min_ms", m->min_ms},
                      {"throughput_per_s", m->throughput_per_s},
                      {"peak_memory_bytes", m->peak_memory_bytes},
                      {"runs", m->runs},
                      {"failed", m->failed},
                      // Every timed run's latency: each session's runs in order, sessions one
                      // after another (as bench/ort_bench.js prints ORT's).
                      {"latencies_ms", m->latencies_ms}};
  if (src->built) j["build_seconds"] = src->build_seconds;
  if (a.check_outputs) {
    j["wall_s"] = m->wall_s;
    j["max_ms"] = m->max_ms;
    j["checked_runs"] = load.checked;
    j["mismatches"] = load.mismatches;
    j["rss_after_warmup_bytes"] = load.rss_after_warmup;
    j["rss_max_bytes"] = load.rss_max;
    j["rss_end_bytes"] = load.rss_end;
    if (!m->first_error.empty()) j["first_error"] = m->first_error;
    if (!load.first_mismatch.empty()) j["first_mismatch"] = load.first_mismatch;
  }
  const bool cuda = src->target.IsCuda();
  if (cuda) j["target"] = src->target.Fingerprint();
  if (a.json) {
    std::cout << j.dump() << "\n";
  } else {
    std::cout << "route: " << (e.header.route.empty() ? "(default)" : e.header.route) << "\n"
              << (cuda ? "target: " + src->target.Fingerprint() + " (" + src->target.gpu.name + ")"
                       : "threads: " + std::to_string(e.header.threads))
              << ", concurrency " << a.concurrency << ", io " << a.io << "\nruns: " << m->runs
              << " (" << m->failed << " failed)\np50 " << m->p50_ms << " ms, p95 " << m->p95_ms
              << " ms, p99 " << m->p99_ms << " ms, mean " << m->mean_ms << " ms\nthroughput: "
              << m->throughput_per_s << " /s\npeak memory: " << m->peak_memory_bytes << " bytes\n";
    if (a.check_outputs) {
      std::cout << "outputs checked: " << load.checked << " runs (warm-up included), " << load.mismatches
                << " differ from the single-session run\nresident set: " << load.rss_after_warmup
                << " bytes after warm-up, " << load.rss_max << " at most, " << load.rss_end << " at the end\n";
    }
  }
  if (m->failed > 0) {
    std::cerr << "error: " << m->failed << " runs failed; first: " << m->first_error << "\n";
    return 1;
  }
  if (load.mismatches > 0) {
    std::cerr << "error: " << load.mismatches << " of " << load.checked
              << " runs gave outputs that differ from the single-session run; first: " << load.first_mismatch << "\n";
    return 1;
  }
  if (a.profile) return Profile(src->engine, *inputs, a.warmup, a.iterations, a.profile_steps);
  return 0;
}

}  // namespace

void AddBenchCommand(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("bench", "Measure an engine (or a model built for a route)");
  auto a = std::make_shared<BenchArgs>();
  cmd->add_option("PATH", a->path, "engine file or ONNX model")->required();
  cmd->add_option("--route", a->route, "route to build a model with");
  cmd->add_option("--shapes", a->shapes, "input shapes for building a model");
  cmd->add_option("--target", a->target, "target to build a model for: cpu (default) or cuda; an engine "
                                         "runs on its own target");
  cmd->add_option("--input,-i", a->inputs, "NAME=FILE; missing inputs are generated");
  cmd->add_option("--warmup", a->warmup, "untimed runs per session")->capture_default_str();
  auto* it = cmd->add_option("--iterations", a->iterations, "timed runs per session")->capture_default_str();
  cmd->add_option("--duration", a->duration, "seconds to run instead of --iterations")->excludes(it);
  cmd->add_option("--concurrency", a->concurrency, "sessions running at once")->capture_default_str();
  cmd->add_option("--seed", a->seed, "seed for generated inputs")->capture_default_str();
  auto* js = cmd->add_flag("--json", a->json, "one JSON object on the last line");
  cmd->add_option("--io", a->io, "device engines: host (Run on the caller's tensors: host copies included), "
                                 "pinned (inputs staged in pinned host memory, outputs to it), device (inputs "
                                 "staged on the device, outputs left there)")
      ->capture_default_str();
  cmd->add_flag("--profile", a->profile, "then time each step (one more session) and print the time per kernel "
                                         "and the slowest steps (cpu: wall time; cuda: device time between "
                                         "events, steps enqueued one by one)")
      ->excludes(js);
  cmd->add_option("--profile-steps", a->profile_steps, "--profile: how many of the slowest steps to list")
      ->capture_default_str();
  cmd->add_flag("--check-outputs", a->check_outputs,
                "load test: compare every run's outputs bitwise with a first single-session run, sample the "
                "resident set; exit 1 on any mismatch or failed run");
  cmd->callback([=] { *exit_code = Bench(*a); });
}

}  // namespace switchyard::cli
