// `switchyard bench ENGINE|MODEL [--route STR] [--target cpu|cuda] [--input NAME=FILE ...] [--warmup N]
// [--iterations N | --duration SECONDS] [--concurrency N] [--json]`: end-to-end latency,
// throughput and memory of one engine. Missing inputs are generated (seeded).
#include <iostream>

#include "commands.h"
#include "engine_loader.h"
#include "tune/measure.h"

namespace switchyard::cli {
namespace {

struct BenchArgs {
  std::string path, route, target;  // target "": cpu, or an engine's own
  std::vector<std::string> inputs, shapes;
  int warmup = 3, iterations = 20, concurrency = 1;
  double duration = 0;
  uint64_t seed = 1;
  bool json = false;
};

int Bench(const BenchArgs& a) {
  auto src = LoadOrBuild(a.path, a.route, a.shapes, a.target);
  if (!src.ok()) return ReportError(src.status());
  auto inputs = EngineInputs(src->engine->engine(), a.inputs, a.seed);
  if (!inputs.ok()) return ReportError(inputs.status());
  MeasureOptions opt;
  opt.warmup = a.warmup;
  opt.iterations = a.iterations;
  opt.duration_s = a.duration;
  opt.concurrency = a.concurrency;
  auto m = Measure(src->engine, *inputs, opt);
  if (!m.ok()) return ReportError(m.status());
  const Engine& e = src->engine->engine();
  nlohmann::json j = {{"route", e.header.route},
                      {"threads", e.header.threads},
                      {"concurrency", a.concurrency},
                      {"p50_ms", m->p50_ms},
                      {"p95_ms", m->p95_ms},
                      {"p99_ms", m->p99_ms},
                      {"mean_ms", m->mean_ms},
                      {"min_ms", m->min_ms},
                      {"throughput_per_s", m->throughput_per_s},
                      {"peak_memory_bytes", m->peak_memory_bytes},
                      {"runs", m->runs},
                      {"failed", m->failed}};
  if (src->built) j["build_seconds"] = src->build_seconds;
  const bool cuda = src->target.IsCuda();
  if (cuda) j["target"] = src->target.Fingerprint();
  if (a.json) {
    std::cout << j.dump() << "\n";
  } else {
    std::cout << "route: " << (e.header.route.empty() ? "(default)" : e.header.route) << "\n"
              << (cuda ? "target: " + src->target.Fingerprint() + " (" + src->target.gpu.name + ")"
                       : "threads: " + std::to_string(e.header.threads))
              << ", concurrency " << a.concurrency << "\nruns: " << m->runs
              << " (" << m->failed << " failed)\np50 " << m->p50_ms << " ms, p95 " << m->p95_ms
              << " ms, p99 " << m->p99_ms << " ms, mean " << m->mean_ms << " ms\nthroughput: "
              << m->throughput_per_s << " /s\npeak memory: " << m->peak_memory_bytes << " bytes\n";
  }
  if (m->failed > 0) {
    std::cerr << "error: " << m->failed << " runs failed; first: " << m->first_error << "\n";
    return 1;
  }
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
  cmd->add_flag("--json", a->json, "one JSON object on the last line");
  cmd->callback([=] { *exit_code = Bench(*a); });
}

}  // namespace switchyard::cli
