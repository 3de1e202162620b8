// The tuner's evaluation data: loading or generating the sets, references, hashes.
#include <chrono>
#include <filesystem>
#include <set>

#include "io/npy.h"
#include "io/sha256.h"
#include "reference/executor.h"
#include "tune/tuner_internal.h"

namespace switchyard::tuner {
namespace fs = std::filesystem;
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

namespace {

ojson TensorsJson(const TensorMap& m) {
  ojson a = ojson::array();
  for (const auto& [name, t] : m) {
    a.push_back({{"name", name}, {"dtype", DataTypeName(t.dtype())}, {"shape", t.shape()}, {"sha256", HashTensor(t)}});
  }
  return a;
}

Result<std::vector<EvalSet>> GeneratedSet(const TuneOptions& o, const std::vector<std::string>& names) {
  std::vector<InputDecl> decls;
  std::set<std::string> given;
  for (const std::string& spec : o.input_specs) {
    SY_ASSIGN_OR_RETURN(InputDecl d, ParseInputSpec(spec));
    if (std::find(names.begin(), names.end(), d.name) == names.end()) {
      std::string all;
      for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
      return Status::NotFound("--input-spec '" + spec + "': the model has no input '" + d.name +
                              "'; its inputs are: " + all);
    }
    if (!given.insert(d.name).second) return Status::Invalid("--input-spec: '" + d.name + "' is given twice");
    decls.push_back(std::move(d));
  }
  std::string missing;
  for (const auto& n : names) {
    if (!given.count(n)) missing += (missing.empty() ? "" : ", ") + n;
  }
  if (!missing.empty()) {
    return Status::Invalid("--input-spec covers no distribution for input(s) " + missing +
                           "; give one --input-spec per model input (or --data DIR)");
  }
  EvalSet s;
  s.name = "generated";
  SY_ASSIGN_OR_RETURN(s.inputs, GenerateInputs(decls, o.seed));
  return std::vector<EvalSet>{std::move(s)};
}

}  // namespace

Result<PreparedData> PrepareData(const TuneOptions& o, const Graph& graph, const std::string& work_dir) {
  std::vector<std::string> in_names, out_names;
  for (ValueId v : graph.inputs) in_names.push_back(graph.value(v).name);
  for (ValueId v : graph.outputs) out_names.push_back(graph.value(v).name);

  PreparedData p;
  ojson rec;
  if (!o.data_dir.empty()) {
    if (!o.input_specs.empty()) return Status::Invalid("give either --data or --input-spec, not both");
    auto sets = LoadEvalData(o.data_dir, in_names, out_names);
    if (!sets.ok()) return sets.status().WithContext("--data");
    p.sets = std::move(*sets);
    rec["source"] = "data folder";
    rec["dir"] = fs::absolute(o.data_dir).string();
  } else if (!o.input_specs.empty()) {
    SY_ASSIGN_OR_RETURN(p.sets, GeneratedSet(o, in_names));
    rec["source"] = "generated";
    rec["input_specs"] = o.input_specs;
    rec["seed"] = o.seed;
  } else {
    return Status::Invalid("no evaluation data: give --data DIR (input tensors) or --input-spec "
                           "\"NAME:float32[1,3,224,224]~uniform(0,1)\" for every model input");
  }
  if (!o.reference_dir.empty()) {
    Status s = LoadReferenceData(o.reference_dir, out_names, &p.sets);
    if (!s.ok()) return s.WithContext("--reference");
  }

  // References not given are computed once, here, by the reference executor (the oracle).
  const auto t0 = std::chrono::steady_clock::now();
  std::optional<ReferenceExecutor> exec;
  for (EvalSet& s : p.sets) {
    Status v = ValidateInputs(graph, s.inputs);
    if (!v.ok()) return v.WithContext("evaluation set '" + s.name + "'");
    if (!s.reference.empty()) continue;
    if (!exec) {
      auto e = ReferenceExecutor::Create(graph);
      if (!e.ok()) {
        return e.status().WithContext("no reference obtainable (give --reference DIR with the expected outputs)");
      }
      exec.emplace(std::move(*e));
    }
    auto r = exec->Run(s.inputs);
    if (!r.ok()) {
      return r.status().WithContext("no reference obtainable for set '" + s.name +
                                    "' (the reference executor failed; give --reference DIR)");
    }
    s.reference = std::move(*r);
    s.reference_source = "reference executor";
  }
  p.reference_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // Files for the workers, and hashes for the record and the database key.
  std::error_code ec;
  fs::create_directories(work_dir + "/sets", ec);
  ojson sets_rec = ojson::array();
  json profile = json::object();
  profile["shapes"] = o.shapes;
  profile["accuracy"] = o.accuracy.ToJson();
  json profile_sets = json::array();
  for (size_t i = 0; i < p.sets.size(); ++i) {
    const EvalSet& s = p.sets[i];
    json w = {{"name", s.name}, {"inputs", json::object()}, {"reference", json::object()}};
    int k = 0;
    for (const auto& [kind, map] : {std::pair<const char*, const TensorMap*>{"inputs", &s.inputs},
                                    std::pair<const char*, const TensorMap*>{"reference", &s.reference}}) {
      for (const auto& [name, t] : *map) {
        const std::string file = work_dir + "/sets/" + std::to_string(i) + "_" + std::to_string(k++) + ".npy";
        SY_RETURN_IF_ERROR(WriteNpy(file, t));
        w[kind][name] = file;
      }
    }
    p.worker_sets.push_back(std::move(w));
    const std::string in_hash = HashTensorMap(s.inputs), ref_hash = HashTensorMap(s.reference);
    profile_sets.push_back({s.name, in_hash, ref_hash});
    sets_rec.push_back({{"name", s.name},
                        {"inputs_sha256", in_hash},
                        {"inputs", TensorsJson(s.inputs)},
                        {"reference",
                         {{"source", s.reference_source.empty() ? "reference executor" : s.reference_source},
                          {"outputs_sha256", ref_hash},
                          {"outputs", TensorsJson(s.reference)}}}});
  }
  profile["sets"] = profile_sets;
  p.input_profile = Sha256Hex(profile.dump());
  rec["sets"] = sets_rec;
  rec["input_profile"] = p.input_profile;
  rec["retention"] = "hashes, shapes and dtypes only; the tensors are not kept in the output folder";
  p.record = std::move(rec);
  return p;
}

}  // namespace switchyard::tuner
