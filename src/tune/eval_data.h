// Evaluation data for the tuner: input sets and reference outputs read from folders of
// tensor files (.npy, ONNX TensorProto .pb), --input-spec declarations, and the content
// hashes the release record keeps. The layouts and hash encoding are written down in
// docs/evaluation-data.md. Results own their tensors; pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "reference/executor.h"
#include "switchyard/status.h"
#include "tune/input_gen.h"

namespace switchyard {

struct EvalSet {
  std::string name;                // "data" for a flat folder; the subfolder name for several
                                   // sets; "generated" for --input-spec
  TensorMap inputs;                // by model input name
  TensorMap reference;             // by model output name; empty when none was given
  std::string reference_source;    // "" (none), "reference-dir", "onnx-test-data"
  std::vector<std::string> files;  // the files read (inputs then reference), for the record
};

// Most sets one folder may hold; more is refused rather than read for minutes.
inline constexpr size_t kMaxEvalSets = 10000;

// Reads `dir` in one of three layouts:
//  (a) flat: DIR/NAME.npy or DIR/NAME.pb, NAME a model input: one set named "data";
//  (b) several sets: one subfolder per set, each laid out as (a) or (c), in natural name
//      order (set2 < set10);
//  (c) ONNX test layout: input_K.pb is the model's K-th input (or the input its stored
//      TensorProto name matches), output_K.pb the K-th output's reference
//      (reference_source "onnx-test-data"); usually DIR/test_data_set_N/.
// input_names/output_names: the model's graph inputs (non-initializer) and outputs, in
// order. Names starting with '.' and *.onnx files are skipped. Symlinks are followed only
// when they resolve inside `dir`. Shapes and dtypes are not checked against the model.
Result<std::vector<EvalSet>> LoadEvalData(const std::string& dir,
                                          const std::vector<std::string>& input_names,
                                          const std::vector<std::string>& output_names);

// Reads reference outputs from `dir`, laid out like the data (flat: one set; subfolders
// named like `sets`; files NAME.npy / NAME.pb for output NAME, or output_K.pb), into
// sets[i].reference, replacing any reference read before (reference_source
// "reference-dir"). On error `sets` is unchanged.
Status LoadReferenceData(const std::string& dir, const std::vector<std::string>& output_names,
                         std::vector<EvalSet>* sets);

// --input-spec "NAME:float32[1,3,224,224]~uniform(0,1)". "~DIST" is optional: the default
// is uniform(0,1) for floats and uniform(0,2), i.e. {0,1}, for integers and bool.
Result<InputDecl> ParseInputSpec(const std::string& spec);
// Always spells the distribution out; ParseInputSpec(FormatInputSpec(d)) gives back d's
// name, dtype, shape, distribution and that distribution's parameters exactly.
std::string FormatInputSpec(const InputDecl& d);

// sha256 (lower-case hex) of a tensor's dtype name, shape and bytes, length-prefixed.
std::string HashTensor(const Tensor& t);
// sha256 of a whole map: entry count, then per entry in name order its name and the same
// fields as HashTensor.
std::string HashTensorMap(const TensorMap& m);

}  // namespace switchyard
