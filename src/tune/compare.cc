#include "tune/compare.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <sstream>

#include "io/npy.h"
#include "reference/executor.h"
#include "tune/measure.h"
#include "tune/process.h"

namespace switchyard {
namespace {

using ojson = nlohmann::ordered_json;
namespace fs = std::filesystem;

double Median(std::vector<double> v) { return Percentile(std::move(v), 50); }

// Adds one Measure() block to a side. A block that cannot start (its warm-up run fails)
// counts as one failed run.
void RunBlock(const std::shared_ptr<const LoadedEngine>& engine, const TensorMap& inputs, int concurrency,
              double seconds, const CompareOptions& o, SideStats* side, std::vector<double>* latencies,
              double* wall_s) {
  MeasureOptions mo;
  mo.warmup = o.warmup;
  mo.duration_s = seconds;
  mo.concurrency = concurrency;
  auto m = Measure(engine, inputs, mo);
  if (!m.ok()) {
    side->failed += 1;
    if (side->first_error.empty()) side->first_error = m.status().ToString();
    side->block_p95_ms.push_back(0);
    side->block_throughput.push_back(0);
    return;
  }
  side->failed += m->failed;
  if (side->first_error.empty()) side->first_error = m->first_error;
  side->runs += m->runs;
  latencies->insert(latencies->end(), m->latencies_ms.begin(), m->latencies_ms.end());
  *wall_s += m->wall_s;
  side->block_p95_ms.push_back(m->p95_ms);
  side->block_throughput.push_back(m->throughput_per_s);
}

void Finish(const std::vector<double>& latencies, double wall_s, SideStats* s) {
  if (latencies.empty()) return;
  s->p50_ms = Percentile(latencies, 50);
  s->p95_ms = Percentile(latencies, 95);
  s->p99_ms = Percentile(latencies, 99);
  s->throughput_per_s = wall_s > 0 ? static_cast<double>(s->runs) / wall_s : 0;
}

std::string Pct(double fraction) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(1);
  os << (fraction >= 0 ? "+" : "") << fraction * 100 << "%";
  return os.str();
}

// v to 4 significant digits.
std::string Num4(double v) {
  std::ostringstream os;
  os.precision(4);
  os << v;
  return os.str();
}

ojson SideJson(const SideStats& s) {
  return {{"p50_ms", s.p50_ms},   {"p95_ms", s.p95_ms}, {"p99_ms", s.p99_ms},
          {"throughput_per_s", s.throughput_per_s}, {"runs", s.runs}, {"failed", s.failed}};
}

}  // namespace

LevelComparison CompareAtLevel(const std::shared_ptr<const LoadedEngine>& old_engine,
                               const std::shared_ptr<const LoadedEngine>& new_engine, const TensorMap& inputs,
                               int concurrency, const CompareOptions& o) {
  LevelComparison lc;
  lc.concurrency = concurrency;
  const int blocks = std::max(1, o.blocks);
  const double seconds = std::max(0.01, o.duration_s / blocks);
  std::vector<double> old_lat, new_lat;
  double old_wall = 0, new_wall = 0;
  for (int b = 0; b < blocks; ++b) {
    // ABBA: old first in even pairs, new first in odd ones.
    if (b % 2 == 0) {
      RunBlock(old_engine, inputs, concurrency, seconds, o, &lc.old_side, &old_lat, &old_wall);
      RunBlock(new_engine, inputs, concurrency, seconds, o, &lc.new_side, &new_lat, &new_wall);
    } else {
      RunBlock(new_engine, inputs, concurrency, seconds, o, &lc.new_side, &new_lat, &new_wall);
      RunBlock(old_engine, inputs, concurrency, seconds, o, &lc.old_side, &old_lat, &old_wall);
    }
  }
  Finish(old_lat, old_wall, &lc.old_side);
  Finish(new_lat, new_wall, &lc.new_side);
  std::vector<double> tp;
  for (int b = 0; b < blocks; ++b) {
    const size_t i = static_cast<size_t>(b);
    if (lc.old_side.block_throughput[i] > 0 && lc.new_side.block_throughput[i] > 0) {
      tp.push_back(lc.new_side.block_throughput[i] / lc.old_side.block_throughput[i]);
    }
  }
  // p95 from the pooled runs: a block holds too few runs for a stable p95 of its own (on
  // 0.1 s blocks one slow run is the block's p95), and ABBA order already spreads drift
  // over both pools. Throughput per block averages every run, so its pairs are stable.
  lc.p95_ratio = lc.old_side.p95_ms > 0 && lc.new_side.p95_ms > 0 ? lc.new_side.p95_ms / lc.old_side.p95_ms : 0;
  lc.throughput_ratio = tp.empty() ? 0 : Median(tp);
  return lc;
}

AccuracyComparison CompareOutputs(const std::shared_ptr<const LoadedEngine>& old_engine,
                                  const std::shared_ptr<const LoadedEngine>& new_engine,
                                  const std::vector<EvalSet>& sets, const Graph* reference_model,
                                  const AccuracyPolicy& policy) {
  AccuracyComparison a;
  Session so(old_engine), sn(new_engine);
  std::optional<ReferenceExecutor> ref;
  std::string ref_error;
  if (reference_model) {
    auto r = ReferenceExecutor::Create(*reference_model);
    if (r.ok()) ref.emplace(std::move(*r));
    else ref_error = r.status().ToString();
  }
  bool all_have_reference = !sets.empty();
  for (const EvalSet& set : sets) {
    auto old_out = so.Run(set.inputs);
    if (!old_out.ok()) {
      ++a.failed_old;
      if (a.first_error_old.empty()) a.first_error_old = "set '" + set.name + "': " + old_out.status().ToString();
    }
    auto new_out = sn.Run(set.inputs);
    if (!new_out.ok()) {
      ++a.failed_new;
      if (a.first_error_new.empty()) a.first_error_new = "set '" + set.name + "': " + new_out.status().ToString();
    }
    // A failed run gates as missing outputs: the gate fails, naming them.
    const TensorMap empty;
    const TensorMap& o = old_out.ok() ? *old_out : empty;
    const TensorMap& n = new_out.ok() ? *new_out : empty;
    if (old_out.ok()) {
      CheckOutputs(n, o, set.name, policy, &a.new_vs_old);
    } else {
      if (a.new_vs_old.passed) a.new_vs_old.first_failure = "OLD failed on set '" + set.name + "'";
      a.new_vs_old.passed = false;
    }
    TensorMap reference;
    if (!set.reference.empty()) {
      reference = set.reference;
      a.reference_source = "data";
    } else if (ref) {
      auto r = ref->Run(set.inputs);
      if (!r.ok()) {
        ref_error = "reference executor on set '" + set.name + "': " + r.status().ToString();
        all_have_reference = false;
        continue;
      }
      reference = std::move(*r);
      if (a.reference_source.empty()) a.reference_source = "reference executor";
    } else {
      all_have_reference = false;
      continue;
    }
    CheckOutputs(n, reference, set.name, policy, &a.new_vs_reference);
    CheckOutputs(o, reference, set.name, policy, &a.old_vs_reference);
  }
  a.has_reference = all_have_reference;
  if (!a.has_reference) {
    a.reference_source = !ref_error.empty() ? "no reference (" + ref_error + ")"
                                            : "no reference (no model given: pass a model as NEW or --model)";
  }
  return a;
}

Status RunMemoryChild(const std::string& engine_path, const std::string& input_dir, int concurrency,
                      const std::string& result_path) {
  const int64_t before = PeakRssBytes();
  SY_ASSIGN_OR_RETURN(Engine e, ReadEngine(engine_path));
  TensorMap inputs;
  for (int t : e.inputs) {
    const std::string& name = e.tensors[static_cast<size_t>(t)].name;
    // Input files are named by index: tensor names may hold any character.
    const std::string path = input_dir + "/" + std::to_string(inputs.size()) + ".npy";
    SY_ASSIGN_OR_RETURN(inputs[name], ReadNpy(path));
  }
  SY_ASSIGN_OR_RETURN(auto engine, LoadedEngine::Create(std::move(e)));
  MeasureOptions mo;
  mo.warmup = 1;
  mo.iterations = 3;
  mo.concurrency = std::max(1, concurrency);
  SY_ASSIGN_OR_RETURN(Measurement m, Measure(engine, inputs, mo));
  if (m.failed > 0) return Status::Internal("memory run failed: " + m.first_error);
  const nlohmann::json j = {{"peak_rss_bytes", m.peak_memory_bytes}, {"before_load_bytes", before}};
  return WriteFileAtomic(result_path, j.dump());
}

Result<MemoryMeasurement> MeasureMemoryInChild(const std::vector<std::string>& argv_prefix,
                                               const std::string& engine_path, const Engine& engine,
                                               const TensorMap& inputs, const std::string& work_dir,
                                               int concurrency) {
  const std::string input_dir = work_dir + "/memory_inputs";
  std::error_code ec;
  fs::remove_all(input_dir, ec);
  fs::create_directories(input_dir, ec);
  if (ec) return Status::IoError("cannot create '" + input_dir + "': " + ec.message());
  for (size_t i = 0; i < engine.inputs.size(); ++i) {
    const std::string& name = engine.tensors[static_cast<size_t>(engine.inputs[i])].name;
    auto it = inputs.find(name);
    if (it == inputs.end()) return Status::Invalid("memory measurement: no value for input '" + name + "'");
    SY_RETURN_IF_ERROR(WriteNpy(input_dir + "/" + std::to_string(i) + ".npy", it->second));
  }
  const std::string result = work_dir + "/memory_result.json";
  fs::remove(result, ec);
  ChildOptions co;
  co.argv = argv_prefix;
  co.argv.insert(co.argv.end(), {engine_path, input_dir, std::to_string(concurrency), result});
  co.timeout_s = 300;
  co.log_path = work_dir + "/memory_child.log";
  SY_ASSIGN_OR_RETURN(ChildResult r, RunChild(co));
  if (r.exit_code != 0 || !fs::exists(result)) {
    return Status::Internal("memory measurement of '" + engine_path + "' in a child process: " + r.Describe() +
                            (r.log_tail.empty() ? "" : ": " + r.log_tail));
  }
  SY_ASSIGN_OR_RETURN(std::string text, ReadFileBytes(result, 1 << 20));
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return Status::Internal("memory child wrote no JSON object to " + result);
  MemoryMeasurement m;
  m.peak_rss_bytes = j.value("peak_rss_bytes", int64_t{0});
  m.before_load_bytes = j.value("before_load_bytes", int64_t{0});
  return m;
}

Verdict Decide(const std::vector<LevelComparison>& levels, const MemoryMeasurement& old_memory,
               const MemoryMeasurement& new_memory, const AccuracyComparison& acc, const CompareOptions& o) {
  Verdict v;
  auto hold = [&](std::string reason) {
    v.promote = false;
    v.reasons.push_back(std::move(reason));
  };
  for (const LevelComparison& l : levels) {
    const std::string at = " at concurrency " + std::to_string(l.concurrency);
    if (l.p95_ratio > 0 && l.p95_ratio - 1 > o.max_p95_regression) {
      hold("p95 latency regression" + at + ": " + Pct(l.p95_ratio - 1) + " (p95 " + Num4(l.old_side.p95_ms) + " ms -> " +
           Num4(l.new_side.p95_ms) + " ms) beyond the tolerance " +
           Pct(o.max_p95_regression));
    }
    if (l.throughput_ratio > 0 && 1 - l.throughput_ratio > o.max_throughput_regression) {
      hold("throughput regression" + at + ": " + Pct(l.throughput_ratio - 1) + " (median over paired blocks; " +
           Num4(l.old_side.throughput_per_s) + " /s -> " + Num4(l.new_side.throughput_per_s) + " /s) beyond the tolerance -" +
           Pct(o.max_throughput_regression).substr(1));
    }
    if (l.new_side.failed > 0) {
      hold("NEW failed " + std::to_string(l.new_side.failed) + " runs" + at + ": " + l.new_side.first_error);
    }
    if (l.old_side.failed > 0) {
      hold("OLD failed " + std::to_string(l.old_side.failed) + " runs" + at + ": " + l.old_side.first_error);
    }
    if (l.new_side.runs == 0 || l.old_side.runs == 0) hold("no timed run completed" + at);
  }
  if (old_memory.peak_rss_bytes > 0 && new_memory.peak_rss_bytes > 0) {
    const double r = static_cast<double>(new_memory.peak_rss_bytes) / static_cast<double>(old_memory.peak_rss_bytes) - 1;
    if (r > o.max_memory_regression) {
      hold("peak memory regression: " + Pct(r) + " (" + std::to_string(old_memory.peak_rss_bytes) + " -> " +
           std::to_string(new_memory.peak_rss_bytes) + " bytes) beyond the tolerance " + Pct(o.max_memory_regression));
    }
  }
  if (!acc.new_vs_old.passed) hold("accuracy: NEW disagrees with OLD: " + acc.new_vs_old.first_failure);
  if (acc.has_reference && !acc.new_vs_reference.passed) {
    hold("accuracy: NEW fails against the reference: " + acc.new_vs_reference.first_failure);
  }
  if (acc.failed_new > 0) hold("NEW failed " + std::to_string(acc.failed_new) + " evaluation runs: " + acc.first_error_new);
  if (acc.failed_old > 0) hold("OLD failed " + std::to_string(acc.failed_old) + " evaluation runs: " + acc.first_error_old);
  return v;
}

nlohmann::ordered_json CompareToJson(const std::vector<LevelComparison>& levels, const MemoryMeasurement& old_memory,
                                     const MemoryMeasurement& new_memory, const AccuracyComparison& acc,
                                     const Verdict& verdict, const CompareOptions& o) {
  ojson j;
  ojson lv = ojson::array();
  int64_t failed_old = acc.failed_old, failed_new = acc.failed_new;
  for (const LevelComparison& l : levels) {
    lv.push_back({{"concurrency", l.concurrency},
                  {"old", SideJson(l.old_side)},
                  {"new", SideJson(l.new_side)},
                  {"p95_ratio", l.p95_ratio},
                  {"throughput_ratio", l.throughput_ratio}});
    failed_old += l.old_side.failed;
    failed_new += l.new_side.failed;
  }
  j["levels"] = lv;
  const double mem_ratio = old_memory.peak_rss_bytes > 0
                               ? static_cast<double>(new_memory.peak_rss_bytes) / static_cast<double>(old_memory.peak_rss_bytes)
                               : 0;
  const int max_level = levels.empty() ? 1 : std::max_element(levels.begin(), levels.end(), [](auto& a, auto& b) {
                                               return a.concurrency < b.concurrency;
                                             })->concurrency;
  j["memory"] = {{"old_bytes", old_memory.peak_rss_bytes},
                 {"new_bytes", new_memory.peak_rss_bytes},
                 {"ratio", mem_ratio},
                 {"old_engine_bytes", old_memory.engine_bytes()},
                 {"new_engine_bytes", new_memory.engine_bytes()},
                 {"concurrency", max_level},
                 {"method", "peak resident set (VmHWM) of a child process running only that engine"}};
  ojson accj = {{"policy", o.policy.ToJson()}, {"new_vs_old", acc.new_vs_old.ToJson(o.policy)}};
  if (acc.has_reference) {
    accj["reference"] = acc.reference_source;
    accj["new_vs_reference"] = acc.new_vs_reference.ToJson(o.policy);
    accj["old_vs_reference"] = acc.old_vs_reference.ToJson(o.policy);
  } else {
    accj["reference"] = acc.reference_source;
    accj["new_vs_reference"] = nullptr;
    accj["old_vs_reference"] = nullptr;
  }
  j["accuracy"] = accj;
  j["failed"] = {{"old", failed_old}, {"new", failed_new}};
  j["tolerances"] = {{"max_p95_regression_pct", o.max_p95_regression * 100},
                     {"max_throughput_regression_pct", o.max_throughput_regression * 100},
                     {"max_memory_regression_pct", o.max_memory_regression * 100}};
  j["verdict"] = verdict.promote ? "promote" : "hold";
  j["reasons"] = verdict.reasons;
  return j;
}

}  // namespace switchyard
