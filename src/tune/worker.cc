#include "tune/worker.h"

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <thread>

#include "build/builder.h"
#include "io/npy.h"
#include "io/sha256.h"
#include "onnx/importer.h"
#include "reference/executor.h"
#include "runtime/session.h"
#include "tune/gate.h"
#include "tune/input_gen.h"
#include "tune/measure.h"

namespace switchyard {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

WorkerFaultHook g_fault_hook = nullptr;

double Since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct LoadedSet {
  std::string name;
  TensorMap inputs, reference;
};

Result<TensorMap> ReadMap(const json& m) {
  TensorMap out;
  for (const auto& [name, path] : m.items()) {
    auto t = ReadTensorFile(path.get<std::string>());
    if (!t.ok()) return t.status().WithContext("'" + name + "'");
    out[name] = std::move(*t);
  }
  return out;
}

Result<std::vector<LoadedSet>> ReadSets(const json& job) {
  std::vector<LoadedSet> sets;
  for (const json& s : job.at("sets")) {
    LoadedSet ls;
    ls.name = s.at("name").get<std::string>();
    SY_ASSIGN_OR_RETURN(ls.inputs, ReadMap(s.at("inputs")));
    SY_ASSIGN_OR_RETURN(ls.reference, ReadMap(s.at("reference")));
    sets.push_back(std::move(ls));
  }
  return sets;
}

// What every phase that builds needs: the model, its route space and the route.
struct Built {
  Graph graph;
  Engine engine;
  std::string sha256;        // content hash: of the engine with its route label cleared
  size_t content_bytes = 0;  // size of that serialization (the file differs by the label only)
  std::string FileBytes() const { return SerializeEngine(engine); }
};

Result<Graph> Import(const json& job) { return ImportModel(job.at("model").get<std::string>()); }

Result<Built> Build(const json& job, bool run_fault_hook) {
  Built b;
  SY_ASSIGN_OR_RETURN(b.graph, Import(job));
  // The tuner's target (jobs without one are cpu jobs).
  SY_ASSIGN_OR_RETURN(const Target target, Target::ForName(job.value("target", "cpu")));
  const RouteSpace space = RouteSpace::For(b.graph, target);
  SY_ASSIGN_OR_RETURN(Route route, space.Parse(job.at("route").get<std::string>()));
  if (run_fault_hook && g_fault_hook) g_fault_hook(space, route);
  BuildOptions opt;
  opt.model_sha256 = job.value("model_sha256", "");
  for (const auto& s : job.value("shapes", json::array())) {
    SY_RETURN_IF_ERROR(ParseShapeArg(s.get<std::string>(), &opt.shapes));
  }
  SY_ASSIGN_OR_RETURN(b.engine, BuildEngine(b.graph, space, route, target, opt, nullptr));
  // The identity used for de-duplication: the engine with its route label cleared, so
  // that routes building the same engine (kernel.conv=onednn and auto, say) hash equal.
  // Most candidates are never written (they are rebuilt if they win), so the file bytes
  // are serialized only by the callers that write them (FileBytes).
  const std::string label = b.engine.header.route;
  b.engine.header.route.clear();
  const std::string content = SerializeEngine(b.engine);
  b.engine.header.route = label;
  b.sha256 = Sha256Hex(content);
  b.content_bytes = content.size();
  return b;
}

// Runs every set once in one session; the outputs per set (for the gate and as the
// single-session truth of the concurrency check).
Result<std::vector<TensorMap>> RunSets(const std::shared_ptr<const LoadedEngine>& engine,
                                       const std::vector<LoadedSet>& sets) {
  Session s(engine);
  std::vector<TensorMap> outs;
  for (const LoadedSet& set : sets) {
    auto r = s.Run(set.inputs);
    if (!r.ok()) return r.status().WithContext("set '" + set.name + "'");
    outs.push_back(std::move(*r));
  }
  return outs;
}

GateResult Gate(const std::vector<TensorMap>& outs, const std::vector<LoadedSet>& sets,
                const AccuracyPolicy& policy) {
  GateResult g;
  for (size_t i = 0; i < sets.size(); ++i) CheckOutputs(outs[i], sets[i].reference, sets[i].name, policy, &g);
  return g;
}

InterleaveOptions InterleaveFrom(const json& m) {
  InterleaveOptions o;
  o.warmup = m.value("warmup", o.warmup);
  o.block = m.value("block", o.block);
  o.min_rounds = m.value("min_rounds", o.min_rounds);
  o.max_rounds = m.value("max_rounds", o.max_rounds);
  o.target_rel_ci = m.value("target_rel_ci", o.target_rel_ci);
  o.max_seconds = m.value("max_seconds", o.max_seconds);
  o.slower_rounds = m.value("slower_rounds", o.slower_rounds);
  o.slower_than = m.value("slower_than", o.slower_than);
  return o;
}

json InterleavedJson(const InterleavedMeasurement& m) {
  return {{"speedup", m.speedup.speedup},
          {"ci_low", m.speedup.ci_low},
          {"ci_high", m.speedup.ci_high},
          {"p50_ms", m.candidate_p50_ms},
          {"p95_ms", m.candidate_p95_ms},
          {"baseline_p50_ms", m.baseline_p50_ms},
          {"baseline_p95_ms", m.baseline_p95_ms},
          {"rounds", m.rounds},
          {"stopped_by", m.stopped_by},
          {"wall_s", m.wall_s}};
}

// Measures against the baseline engine named in the job (interleaved), into result.
Status MeasureAgainstBaseline(const json& job, const std::shared_ptr<const LoadedEngine>& engine,
                              const TensorMap& inputs, json* result) {
  const json& m = job.at("measure");
  const std::string baseline_path = m.value("baseline_engine", "");
  if (baseline_path.empty()) return Status::Ok();
  SY_ASSIGN_OR_RETURN(Engine be, ReadEngine(baseline_path));
  SY_ASSIGN_OR_RETURN(auto baseline, LoadedEngine::Create(std::move(be)));
  const auto t0 = Clock::now();
  SY_ASSIGN_OR_RETURN(InterleavedMeasurement im, MeasureInterleaved(baseline, engine, inputs, InterleaveFrom(m)));
  (*result)["measurement"] = InterleavedJson(im);
  (*result)["measure_s"] = Since(t0);
  return Status::Ok();
}

json Failure(const std::string& status, const Status& s) { return {{"status", status}, {"error", s.ToString()}}; }

json CandidatePhase(const json& job) {
  json r = json::object();
  const auto t0 = Clock::now();
  auto built = Build(job, /*run_fault_hook=*/true);
  r["build_s"] = Since(t0);
  if (!built.ok()) {
    json f = Failure("build_failed", built.status());
    f["build_s"] = r["build_s"];
    return f;
  }
  r["engine_sha256"] = built->sha256;
  r["engine_bytes"] = built->content_bytes;
  r["arena_bytes"] = built->engine.arena_bytes;
  const json known = job.value("known_engines", json::object());
  if (known.contains(built->sha256)) {
    r["status"] = "duplicate";
    r["duplicate_of"] = known.at(built->sha256);
    return r;
  }
  const std::string out = job.value("engine_out", "");
  if (!out.empty()) {
    Status w = WriteFileAtomic(out, built->FileBytes());
    if (!w.ok()) return Failure("build_failed", w);
  }
  auto engine = LoadedEngine::Create(std::move(built->engine));
  if (!engine.ok()) return Failure("build_failed", engine.status());
  auto sets = ReadSets(job);
  if (!sets.ok()) return Failure("crashed", sets.status().WithContext("reading evaluation data"));
  auto policy = AccuracyPolicy::FromJson(job.at("accuracy"));
  if (!policy.ok()) return Failure("crashed", policy.status());

  const auto t1 = Clock::now();
  auto outs = RunSets(*engine, *sets);
  r["accuracy_s"] = Since(t1);
  if (!outs.ok()) {
    json f = Failure("crashed", outs.status().WithContext("run failed"));
    f.update(r);
    return f;
  }
  const GateResult gate = Gate(*outs, *sets, *policy);
  r["accuracy"] = gate.ToJson(*policy);
  if (!gate.passed) {
    r["status"] = "rejected_accuracy";
    r["error"] = gate.first_failure;
    // The mixed-precision repair wants to know the speed a failing route would have had.
    if (job.value("measure_rejected", false)) (void)MeasureAgainstBaseline(job, *engine, sets->front().inputs, &r);
    return r;
  }
  Status ms = MeasureAgainstBaseline(job, *engine, sets->front().inputs, &r);
  if (!ms.ok()) {
    json f = Failure("crashed", ms.WithContext("measurement"));
    f.update(r);
    f["status"] = "crashed";
    return f;
  }
  r["status"] = "passed";
  return r;
}

json ProfilePhase(const json& job) {
  auto e = ReadEngine(job.at("engine_in").get<std::string>());
  if (!e.ok()) return Failure("crashed", e.status());
  auto engine = LoadedEngine::Create(std::move(*e));
  if (!engine.ok()) return Failure("crashed", engine.status());
  auto sets = ReadSets(job);
  if (!sets.ok()) return Failure("crashed", sets.status());
  const json& p = job.at("profile");
  MeasureOptions opt;
  opt.warmup = p.value("warmup", 3);
  opt.iterations = p.value("iterations", 20);
  opt.duration_s = p.value("duration_s", 0.0);
  const auto t0 = Clock::now();
  auto m = Measure(*engine, sets->front().inputs, opt);
  if (!m.ok()) return Failure("crashed", m.status());
  if (m->failed > 0) return Failure("crashed", Status::Internal(m->first_error));
  return {{"status", "passed"},
          {"measure_s", Since(t0)},
          {"profile",
           {{"p50_ms", m->p50_ms},
            {"p95_ms", m->p95_ms},
            {"p99_ms", m->p99_ms},
            {"mean_ms", m->mean_ms},
            {"throughput_per_s", m->throughput_per_s},
            {"peak_memory_bytes", m->peak_memory_bytes},
            {"runs", m->runs}}}};
}

// Edge shapes: every bounded dynamic dimension at its min, then at its max, on seeded
// inputs, against the reference executor.
json EdgeShapeCheck(const Graph& graph, const std::shared_ptr<const LoadedEngine>& engine,
                    const AccuracyPolicy& policy, uint64_t seed) {
  const Engine& e = engine->engine();
  bool dynamic = false, unbounded = false;
  for (const auto& ranges : e.input_ranges) {
    for (const DimRange& r : ranges) {
      if (r.max < 0) unbounded = true;
      else if (r.min != r.max) dynamic = true;
    }
  }
  json c = {{"name", "edge shapes"}};
  if (unbounded) {
    c["passed"] = true;
    c["skipped"] = true;
    c["detail"] = "dynamic dimensions without a declared range (--shapes NAME=1x[1..64]): validated only "
                  "at the evaluation data's shapes";
    return c;
  }
  if (!dynamic) {
    c["passed"] = true;
    c["skipped"] = true;
    c["detail"] = "every input shape is fixed";
    return c;
  }
  auto ref = ReferenceExecutor::Create(graph);
  if (!ref.ok()) {
    c["passed"] = false;
    c["detail"] = ref.status().ToString();
    return c;
  }
  json shapes = json::array();
  for (const bool at_max : {false, true}) {
    std::vector<InputDecl> decls;
    std::string label;
    for (size_t i = 0; i < e.inputs.size(); ++i) {
      const EngineTensor& t = e.tensors[static_cast<size_t>(e.inputs[i])];
      InputDecl d;
      d.name = t.name;
      d.dtype = t.dtype;
      for (const DimRange& r : e.input_ranges[i]) d.shape.push_back(at_max ? r.max : r.min);
      if (!IsFloatType(t.dtype)) d.high = 2;
      label += (label.empty() ? "" : " ") + t.name + "=" + ShapeToString(d.shape);
      decls.push_back(std::move(d));
    }
    auto inputs = GenerateInputs(decls, seed);
    if (!inputs.ok()) {
      c["passed"] = false;
      c["detail"] = inputs.status().ToString();
      return c;
    }
    auto want = ref->Run(*inputs);
    if (!want.ok()) {
      shapes.push_back({{"shapes", label}, {"skipped", "the reference executor cannot run it: " + want.status().ToString()}});
      continue;
    }
    Session s(engine);
    auto got = s.Run(*inputs);
    if (!got.ok()) {
      c["passed"] = false;
      c["detail"] = "at " + label + ": " + got.status().ToString();
      return c;
    }
    GateResult g;
    CheckOutputs(*got, *want, at_max ? "max shapes" : "min shapes", policy, &g);
    shapes.push_back({{"shapes", label}, {"accuracy", g.ToJson(policy)}});
    if (!g.passed) {
      c["passed"] = false;
      c["detail"] = g.first_failure + " at " + label;
      c["shapes"] = shapes;
      return c;
    }
  }
  c["passed"] = true;
  c["shapes"] = shapes;
  return c;
}

// Many sessions at once, each running every set several times, must reproduce the
// single-session outputs bit for bit.
json ConcurrencyCheck(const std::shared_ptr<const LoadedEngine>& engine, const std::vector<LoadedSet>& sets,
                      const std::vector<TensorMap>& truth, int sessions, int rounds) {
  std::mutex mu;
  std::string first;
  std::atomic<int64_t> runs{0}, mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < sessions; ++t) {
    threads.emplace_back([&, t] {
      Session s(engine);
      for (int r = 0; r < rounds; ++r) {
        for (size_t i = 0; i < sets.size(); ++i) {
          const size_t k = (i + static_cast<size_t>(t)) % sets.size();  // sessions start on different sets
          auto out = s.Run(sets[k].inputs);
          ++runs;
          std::string problem;
          if (!out.ok()) problem = out.status().ToString();
          else if (*out != truth[k]) problem = "outputs differ from a single session's on set '" + sets[k].name + "'";
          if (!problem.empty()) {
            ++mismatches;
            std::lock_guard<std::mutex> lock(mu);
            if (first.empty()) first = problem;
          }
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  json c = {{"name", "concurrent sessions"},
            {"passed", mismatches == 0},
            {"sessions", sessions},
            {"runs", runs.load()},
            {"mismatches", mismatches.load()}};
  if (!first.empty()) c["detail"] = first;
  return c;
}

json ValidatePhase(const json& job) {
  json r = {{"status", "failed"}};
  json checks = json::array();
  auto built = Build(job, /*run_fault_hook=*/false);
  if (!built.ok()) {
    checks.push_back({{"name", "rebuild"}, {"passed", false}, {"detail", built.status().ToString()}});
    r["checks"] = checks;
    r["error"] = "rebuild failed: " + built.status().ToString();
    return r;
  }
  const std::string expect = job.value("expect_sha256", "");
  const bool same = expect.empty() || expect == built->sha256;
  checks.push_back({{"name", "rebuild identical"},
                    {"passed", same},
                    {"detail", "engine sha256 " + built->sha256 + (same ? "" : ", the search measured " + expect)}});
  r["engine_sha256"] = built->sha256;
  const std::string out = job.value("engine_out", "");
  if (!out.empty()) {
    Status w = WriteFileAtomic(out, built->FileBytes());
    if (!w.ok()) {
      r["error"] = w.ToString();
      return r;
    }
  }
  auto engine = LoadedEngine::Create(std::move(built->engine));
  auto sets = ReadSets(job);
  auto policy = AccuracyPolicy::FromJson(job.at("accuracy"));
  if (!engine.ok() || !sets.ok() || !policy.ok()) {
    r["error"] = !engine.ok() ? engine.status().ToString() : !sets.ok() ? sets.status().ToString() : policy.status().ToString();
    r["checks"] = checks;
    return r;
  }
  const auto t0 = Clock::now();
  auto outs = RunSets(*engine, *sets);
  if (!outs.ok()) {
    checks.push_back({{"name", "every input set"}, {"passed", false}, {"detail", outs.status().ToString()}});
  } else {
    const GateResult g = Gate(*outs, *sets, *policy);
    r["accuracy"] = g.ToJson(*policy);
    json c = {{"name", "every input set"}, {"passed", g.passed}, {"sets", sets->size()}};
    if (!g.passed) c["detail"] = g.first_failure;
    checks.push_back(c);
  }
  const json& v = job.value("validate", json::object());
  checks.push_back(EdgeShapeCheck(built->graph, *engine, *policy, v.value("seed", uint64_t{7})));
  if (outs.ok()) {
    checks.push_back(ConcurrencyCheck(*engine, *sets, *outs, v.value("sessions", 8), v.value("rounds", 2)));
  }
  r["accuracy_s"] = Since(t0);
  bool ok = true;
  for (const json& c : checks) ok = ok && c.at("passed").get<bool>();
  r["checks"] = checks;
  if (!ok) {
    for (const json& c : checks) {
      if (!c.at("passed").get<bool>()) {
        r["error"] = c.at("name").get<std::string>() + ": " + c.value("detail", "failed");
        break;
      }
    }
    return r;
  }
  Status ms = MeasureAgainstBaseline(job, *engine, sets->front().inputs, &r);
  if (!ms.ok()) {
    r["error"] = "measurement: " + ms.ToString();
    return r;
  }
  r["status"] = "passed";
  return r;
}

}  // namespace

void SetWorkerFaultHook(WorkerFaultHook hook) { g_fault_hook = hook; }

json RunWorker(const json& job) {
  try {
    const std::string phase = job.at("phase").get<std::string>();
    if (phase == "candidate") return CandidatePhase(job);
    if (phase == "profile") return ProfilePhase(job);
    if (phase == "validate") return ValidatePhase(job);
    return Failure("crashed", Status::Invalid("unknown worker phase '" + phase + "'"));
  } catch (const json::exception& e) {
    return Failure("crashed", Status::Invalid(std::string("malformed worker job: ") + e.what()));
  }
}

Status RunWorkerJob(const std::string& job_path, const std::string& result_path) {
  SY_ASSIGN_OR_RETURN(std::string text, ReadFileBytes(job_path, int64_t{1} << 26));
  json job = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (job.is_discarded() || !job.is_object()) return Status::ParseError("worker job '" + job_path + "' is not a JSON object");
  const json result = RunWorker(job);
  return WriteFileAtomic(result_path, result.dump());
}

}  // namespace switchyard
