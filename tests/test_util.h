// Helpers shared by the importer, tensor I/O and CLI tests: temporary folders, files,
// and small ONNX models built with the protobuf API.
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "switchyard/status.h"

namespace switchyard::testing {

// A fresh folder under gtest's temp dir, removed when the object dies.
class TempFolder {
 public:
  TempFolder() {
    std::string tmpl = ::testing::TempDir() + "sy_test_XXXXXX";
    char* p = ::mkdtemp(tmpl.data());
    EXPECT_NE(p, nullptr) << "mkdtemp failed";
    path_ = tmpl;
  }
  ~TempFolder() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  ASSERT_TRUE(f) << "cannot write " << path;
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// One run of a CLI binary: exit code, stdout, stderr, and stdout's last line parsed as JSON
// (a discarded value when it is not JSON).
struct CliRun {
  int code = -1;
  std::string out, err;
  nlohmann::json last;
};

// Runs SY_BINARY_DIR/bin/<binary> with `args` through the shell (so quoting works as on a
// command line), stdout and stderr captured separately.
inline CliRun RunBinary(const std::string& binary, const std::string& args) {
  TempFolder tmp;
  const std::string err_file = tmp / "stderr.txt";
  const std::string cmd = std::string(SY_BINARY_DIR "/bin/") + binary + " " + args + " 2>" + err_file;
  CliRun r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  if (WIFEXITED(status)) r.code = WEXITSTATUS(status);
  r.err = ReadWholeFile(err_file);
  const size_t last = r.out.find_last_of('\n', r.out.size() >= 2 ? r.out.size() - 2 : 0);
  r.last = nlohmann::json::parse(r.out.substr(last == std::string::npos ? 0 : last + 1), nullptr, false);
  return r;
}

// A model with the default-domain opset `opset` and an empty graph named "g".
inline onnx::ModelProto MakeModel(int64_t opset = 17) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("switchyard-tests");
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  m.mutable_graph()->set_name("g");
  return m;
}

// Declares a tensor value; a dim < -1 is written as a dim_value (to test negative
// dims), -1 as an unknown dim, and names in `symbols` (by position) as dim_params.
inline void SetType(onnx::ValueInfoProto* vi, const std::string& name, int elem_type,
                    const std::vector<int64_t>& dims, const std::vector<std::string>& symbols = {}) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  auto* shape = tt->mutable_shape();
  for (size_t i = 0; i < dims.size(); ++i) {
    auto* d = shape->add_dim();
    if (i < symbols.size() && !symbols[i].empty()) d->set_dim_param(symbols[i]);
    else if (dims[i] != -1) d->set_dim_value(dims[i]);
  }
}

inline void AddInput(onnx::ModelProto& m, const std::string& name, int elem_type,
                     const std::vector<int64_t>& dims,
                     const std::vector<std::string>& symbols = {}) {
  SetType(m.mutable_graph()->add_input(), name, elem_type, dims, symbols);
}

inline void AddOutput(onnx::ModelProto& m, const std::string& name, int elem_type,
                      const std::vector<int64_t>& dims,
                      const std::vector<std::string>& symbols = {}) {
  SetType(m.mutable_graph()->add_output(), name, elem_type, dims, symbols);
}

// An output declared with no type information at all.
inline void AddUntypedOutput(onnx::ModelProto& m, const std::string& name) {
  m.mutable_graph()->add_output()->set_name(name);
}

inline onnx::NodeProto* AddNode(onnx::ModelProto& m, const std::string& op_type,
                                std::initializer_list<std::string> inputs,
                                std::initializer_list<std::string> outputs,
                                const std::string& name) {
  auto* n = m.mutable_graph()->add_node();
  n->set_op_type(op_type);
  n->set_name(name);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return n;
}

inline onnx::TensorProto* AddFloatInitializer(onnx::ModelProto& m, const std::string& name,
                                              const std::vector<int64_t>& dims,
                                              const std::vector<float>& values) {
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()),
                              values.size() * sizeof(float)));
  return t;
}

// x: float[2,3] -> Identity 'id' -> y. The smallest model that imports and runs.
inline onnx::ModelProto IdentityModel(int64_t opset = 17) {
  onnx::ModelProto m = MakeModel(opset);
  AddInput(m, "x", onnx::TensorProto::FLOAT, {2, 3});
  AddNode(m, "Identity", {"x"}, {"y"}, "id");
  AddOutput(m, "y", onnx::TensorProto::FLOAT, {2, 3});
  return m;
}

inline std::string SaveModel(const onnx::ModelProto& m, const std::string& path) {
  std::string bytes;
  EXPECT_TRUE(m.SerializeToString(&bytes));
  WriteFile(path, bytes);
  return path;
}

// Asserts `s` failed with `code` and that its message names every one of `needles`.
inline void ExpectError(const Status& s, StatusCode code,
                        std::initializer_list<std::string> needles) {
  ASSERT_FALSE(s.ok()) << "expected an error, got ok";
  EXPECT_EQ(s.code(), code) << s.ToString();
  for (const auto& n : needles) {
    EXPECT_NE(s.message().find(n), std::string::npos)
        << "message lacks '" << n << "': " << s.ToString();
  }
}

}  // namespace switchyard::testing
