// switchyard_conformance: runs the ONNX backend node tests (libonnx-testdata, data/node)
// through the importer and the reference executor, compares with the suite's expected
// outputs (rtol 1e-3, atol 1e-7, as onnx's backend test runner) and classifies each case:
// passed, refused (an "unsupported" error) or failed (anything else). Writes a Markdown
// summary with --markdown. Exit 0 only when no case failed.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstring>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "onnx/importer.h"
#include "onnx/tensor_proto.h"
#include "reference/executor.h"
#include "reference/op_registry.h"

namespace fs = std::filesystem;
using namespace switchyard;

namespace {

struct CaseResult {
  std::string name;
  // kBadData: the case's own input files contradict its model's declared input types.
  enum Kind { kPassed, kRefused, kFailed, kBadData } kind = kFailed;
  std::string reason;
};

// ONNX 1.12's test data stores bfloat16 tensors as uint16 bit patterns (numpy has no
// bfloat16): reinterpret them when the model says bfloat16.
Tensor AsBfloat16IfBits(const Tensor& t, DataType declared) {
  if (declared != DataType::kBfloat16 || t.dtype() != DataType::kUint16) return t;
  Tensor b(DataType::kBfloat16, t.shape());
  std::memcpy(b.raw(), t.raw(), t.nbytes());
  return b;
}

std::string Compare(const Tensor& got, const Tensor& want_in, double rtol, double atol) {
  const Tensor want = AsBfloat16IfBits(want_in, got.dtype());
  // bfloat16 results are compared at bfloat16's own precision (one unit in the last place,
  // 2^-7 relative): the suite's expected values were made by truncation, while Cast rounds
  // to nearest even as the ONNX specification says.
  if (got.dtype() == DataType::kBfloat16) rtol = std::max(rtol, 1.0 / 128);
  if (got.dtype() != want.dtype()) {
    return std::string("dtype ") + DataTypeName(got.dtype()) + " != expected " +
           DataTypeName(want.dtype());
  }
  if (got.shape() != want.shape()) {
    return "shape " + ShapeToString(got.shape()) + " != expected " + ShapeToString(want.shape());
  }
  if (got.dtype() == DataType::kString) return got.strings() == want.strings() ? "" : "strings differ";
  const bool is_float = IsFloatType(got.dtype());
  for (int64_t i = 0; i < got.numel(); ++i) {
    if (is_float) {
      const double a = got.GetDouble(i), b = want.GetDouble(i);
      if (std::isnan(a) && std::isnan(b)) continue;
      if (std::isinf(a) && std::isinf(b) && (a > 0) == (b > 0)) continue;
      if (!(std::fabs(a - b) <= atol + rtol * std::fabs(b))) {
        return "element " + std::to_string(i) + ": " + std::to_string(a) + " vs expected " +
               std::to_string(b);
      }
    } else if (got.GetInt64(i) != want.GetInt64(i)) {
      return "element " + std::to_string(i) + ": " + std::to_string(got.GetInt64(i)) +
             " vs expected " + std::to_string(want.GetInt64(i));
    }
  }
  return "";
}

std::vector<fs::path> SortedPb(const fs::path& dir, const std::string& prefix) {
  std::vector<std::pair<int, fs::path>> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.rfind(prefix, 0) == 0 && e.path().extension() == ".pb") {
      files.push_back({std::atoi(n.c_str() + prefix.size()), e.path()});
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<fs::path> out;
  for (auto& f : files) out.push_back(f.second);
  return out;
}

CaseResult RunCase(const fs::path& dir) {
  CaseResult r;
  r.name = dir.filename().string();
  auto graph = ImportModel((dir / "model.onnx").string());
  auto fail = [&](const Status& s) {
    r.kind = s.code() == StatusCode::kUnsupported ? CaseResult::kRefused : CaseResult::kFailed;
    r.reason = s.ToString();
    return r;
  };
  if (!graph.ok()) return fail(graph.status());
  auto exec = ReferenceExecutor::Create(*graph);
  if (!exec.ok()) return fail(exec.status());
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) {
      sets.push_back(e.path());
    }
  }
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) {
    r.reason = "no test data";
    return r;
  }
  for (const fs::path& set : sets) {
    TensorMap inputs;
    const auto in_files = SortedPb(set, "input_");
    for (size_t i = 0; i < in_files.size(); ++i) {
      std::string name;
      auto t = ReadTensorProtoFile(in_files[i].string(), &name);
      if (!t.ok()) return fail(t.status());
      if (name.empty() || graph->FindValue(name) == kNoValue) {
        if (i >= graph->inputs.size()) {
          r.reason = "more input files than graph inputs";
          return r;
        }
        name = graph->value(graph->inputs[i]).name;
      }
      inputs[name] = AsBfloat16IfBits(*t, graph->value(graph->FindValue(name)).type.dtype);
    }
    if (Status v = ValidateInputs(*graph, inputs); !v.ok()) {
      r.kind = CaseResult::kBadData;
      r.reason = set.filename().string() + ": " + v.ToString();
      return r;
    }
    auto outs = exec->Run(inputs);
    if (!outs.ok()) return fail(outs.status());
    const auto out_files = SortedPb(set, "output_");
    for (size_t i = 0; i < out_files.size() && i < graph->outputs.size(); ++i) {
      auto want = ReadTensorProtoFile(out_files[i].string());
      if (!want.ok()) return fail(want.status());
      const std::string& oname = graph->value(graph->outputs[i]).name;
      const std::string diff = Compare(outs->at(oname), *want, 1e-3, 1e-7);
      if (!diff.empty()) {
        r.reason = set.filename().string() + " output '" + oname + "': " + diff;
        return r;
      }
    }
  }
  r.kind = CaseResult::kPassed;
  return r;
}

// Groups refusals by their reason with node names and values removed.
std::string ReasonKey(const std::string& reason) {
  const size_t p = reason.find("unsupported ops at opset");
  if (p != std::string::npos) {
    std::string tail = reason.substr(reason.find(": ", p) + 2);
    std::string key;
    size_t i = 0;
    while (i < tail.size()) {  // keep op names, drop "(N nodes)"
      const size_t paren = tail.find(" (", i);
      key += (key.empty() ? "" : ", ") + tail.substr(i, paren - i);
      const size_t next = tail.find(", ", paren);
      if (paren == std::string::npos || next == std::string::npos) break;
      i = next + 2;
    }
    return "unsupported op: " + key;
  }
  // "unsupported: <file>: Conv node 'x' (Conv-11): <reason>" -> keep the last part
  std::string s = reason;
  const size_t colon = s.rfind("): ");
  if (colon != std::string::npos) s = "unsupported: " + s.substr(colon + 3);
  const size_t file = s.find("model.onnx: ");
  if (file != std::string::npos) s = "unsupported: " + s.substr(file + 12);
  return s;
}

// docs/ops.md: every registered (domain, op) with the since-versions implemented.
int WriteOpsMarkdown(const std::string& path) {
  std::map<std::string, std::vector<int>> ops;
  for (const OpSchema* s : OpRegistry::Global().All()) {
    ops[(s->domain.empty() ? "" : s->domain + ".") + s->op_type].push_back(s->since_version);
  }
  std::ofstream md(path);
  md << "# Operators of the reference executor\n\n"
     << "Generated by `build/bin/switchyard_conformance --ops-markdown docs/ops.md`. Each op is\n"
     << "registered per since-version; a model at opset N uses the newest version <= N.\n"
     << "Default-domain opsets 1-21 are accepted (an op without an implementation at the model's opset is refused as unsupported). " << ops.size() << " ops.\n\n"
     << "| op | since-versions |\n| --- | --- |\n";
  for (const auto& [name, versions] : ops) {
    md << "| " << name << " | ";
    for (size_t i = 0; i < versions.size(); ++i) md << (i ? ", " : "") << versions[i];
    md << " |\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Runs the ONNX backend node tests through Switchyard's reference executor"};
  std::string data = "/usr/share/libonnx-testdata/data/node", markdown, filter;
  bool verbose = false;
  int min_passed = 0;
  std::string ops_markdown;
  app.add_option("--data", data, "folder of node test cases")->capture_default_str();
  app.add_option("--filter", filter, "only cases whose name contains this");
  app.add_option("--markdown", markdown, "write a Markdown summary here");
  app.add_flag("-v,--verbose", verbose, "print every case");
  app.add_option("--min-passed", min_passed, "fail unless at least this many cases pass");
  app.add_option("--ops-markdown", ops_markdown, "write the table of implemented ops here and exit");
  CLI11_PARSE(app, argc, argv);

  if (!ops_markdown.empty()) return WriteOpsMarkdown(ops_markdown);
  std::vector<fs::path> cases;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(data, ec)) {
    if (e.is_directory() && fs::exists(e.path() / "model.onnx") &&
        e.path().filename().string().find(filter) != std::string::npos) {
      cases.push_back(e.path());
    }
  }
  if (ec || cases.empty()) {
    std::cerr << "error: no node test cases under '" << data << "'\n";
    return 2;
  }
  std::sort(cases.begin(), cases.end());
  std::vector<CaseResult> results;
  int passed = 0, refused = 0, failed = 0, bad_data = 0;
  for (const auto& c : cases) {
    CaseResult r = RunCase(c);
    if (r.kind == CaseResult::kPassed) ++passed;
    if (r.kind == CaseResult::kRefused) ++refused;
    if (r.kind == CaseResult::kBadData) {
      ++bad_data;
      std::cout << "BAD DATA " << r.name << ": " << r.reason << "\n";
    }
    if (r.kind == CaseResult::kFailed) {
      ++failed;
      std::cout << "FAIL " << r.name << ": " << r.reason << "\n";
    } else if (verbose) {
      std::cout << (r.kind == CaseResult::kPassed ? "pass " : "refused ") << r.name
                << (r.reason.empty() ? "" : ": " + r.reason) << "\n";
    }
    results.push_back(std::move(r));
  }
  std::cout << "conformance: " << cases.size() << " cases, " << passed << " passed, " << refused
            << " refused (unsupported), " << bad_data << " with inconsistent test data, " << failed
            << " failed\n";
  if (!markdown.empty()) {
    std::map<std::string, std::vector<std::string>> groups;
    for (const auto& r : results) {
      if (r.kind == CaseResult::kRefused) groups[ReasonKey(r.reason)].push_back(r.name);
    }
    std::ofstream md(markdown);
    md << "# ONNX node-test conformance\n\n"
       << "Generated by `build/bin/switchyard_conformance --markdown docs/conformance.md` over the\n"
       << "ONNX backend node tests of Debian's `libonnx-testdata` (`" << data << "`).\n"
       << "Each case is imported, run by the reference executor on every `test_data_set_*`, and\n"
       << "compared with the expected outputs at rtol 1e-3, atol 1e-7 (NaN matches NaN; bfloat16\n"
       << "outputs at bfloat16's own precision, rtol 2^-7, because the suite's expected bfloat16\n"
       << "values were made by truncation while Cast rounds to nearest even as the spec says).\n\n"
       << "| cases | passed | refused (unsupported) | inconsistent test data | failed |\n"
       << "| --- | --- | --- | --- | --- |\n"
       << "| " << cases.size() << " | " << passed << " | " << refused << " | " << bad_data << " | "
       << failed << " |\n\n";
    if (bad_data) {
      md << "## Cases whose test data contradicts the model\n\n"
         << "Their input files do not match the input types the model declares, so any runtime\n"
         << "that checks inputs (ONNX Runtime does too) must refuse them:\n\n";
      for (const auto& r : results) {
        if (r.kind == CaseResult::kBadData) md << "- `" << r.name << "`: " << r.reason << "\n";
      }
      md << "\n";
    }
    md << "## Refused cases by reason\n\n";
    std::vector<std::pair<std::string, std::vector<std::string>>> sorted(groups.begin(), groups.end());
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
      return a.second.size() != b.second.size() ? a.second.size() > b.second.size() : a.first < b.first;
    });
    for (const auto& [reason, names] : sorted) {
      md << "- **" << reason << "** (" << names.size() << "): ";
      for (size_t i = 0; i < names.size(); ++i) md << (i ? ", " : "") << "`" << names[i] << "`";
      md << "\n";
    }
    if (failed) {
      md << "\n## Failed cases\n\n";
      for (const auto& r : results) {
        if (r.kind == CaseResult::kFailed) md << "- `" << r.name << "`: " << r.reason << "\n";
      }
    }
  }
  if (passed < min_passed) {
    std::cout << "error: only " << passed << " cases passed; at least " << min_passed
              << " are required\n";
    return 1;
  }
  return failed ? 1 : 0;
}
