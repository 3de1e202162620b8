// Internal to the tuner (tuner.cc, tuner_data.cc, record.cc): the prepared evaluation
// data and the pieces of the release record. Not a public interface.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "tune/eval_data.h"
#include "tune/tuner.h"

namespace switchyard::tuner {

struct PreparedData {
  std::vector<EvalSet> sets;       // every set with its reference
  nlohmann::json worker_sets;      // [{name, inputs: {NAME: file}, reference: {NAME: file}}]
  nlohmann::ordered_json record;   // "data" of record.json (sources, hashes, shapes)
  std::string input_profile;       // the database key part (hash of data, shapes, policies)
  double reference_s = 0;          // time spent computing references
};

// Loads or generates the evaluation sets, computes missing references with the reference
// executor, writes every tensor under work_dir (for the workers) and hashes it all.
Result<PreparedData> PrepareData(const TuneOptions& options, const Graph& graph,
                                 const std::string& work_dir);

// The target section of the record: CPU model, cores, features, library versions.
nlohmann::ordered_json TargetJson();

// record.md from record.json (the same facts, for people).
std::string RenderRecordMarkdown(const nlohmann::ordered_json& record);

}  // namespace switchyard::tuner
