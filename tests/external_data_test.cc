// External data of ONNX initializers: confined to the model's folder (absolute paths,
// '..' and escaping symlinks refused before any read) and checked against its file.
#include <gtest/gtest.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <random>

#include "onnx/importer.h"
#include "onnx/tensor_proto.h"
#include "reference/executor.h"
#include "reference/op_registry.h"
#include "test_util.h"

namespace switchyard {
namespace {

namespace fs = std::filesystem;
using testing::AddFloatInitializer;
using testing::AddInput;
using testing::AddNode;
using testing::AddOutput;
using testing::ExpectError;
using testing::IdentityModel;
using testing::MakeModel;
using testing::SaveModel;
using testing::TempFolder;
using testing::WriteFile;

constexpr int kFloat = onnx::TensorProto::FLOAT;
constexpr int kInt64 = onnx::TensorProto::INT64;


// ---------------------------------------------------------------------------------
// External data.

// A model whose initializer 'w' (float[4]) lives in external data at `location`.
onnx::ModelProto ExternalModel(const std::string& location, int64_t offset = -1,
                               int64_t length = -1) {
  onnx::ModelProto m = MakeModel();
  AddInput(m, "x", kFloat, {4});
  AddNode(m, "Identity", {"w"}, {"y"}, "id");
  AddOutput(m, "y", kFloat, {4});
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(kFloat);
  t->add_dims(4);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const std::string& k, const std::string& v) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", location);
  if (offset >= 0) add("offset", std::to_string(offset));
  if (length >= 0) add("length", std::to_string(length));
  return m;
}

std::string FloatBytes(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

// Watches a file with inotify and reports whether anything opened or read it.
class OpenWatch {
 public:
  explicit OpenWatch(const std::string& path) {
    fd_ = inotify_init1(IN_NONBLOCK);
    EXPECT_GE(fd_, 0);
    wd_ = inotify_add_watch(fd_, path.c_str(), IN_OPEN | IN_ACCESS);
    EXPECT_GE(wd_, 0) << path;
  }
  ~OpenWatch() { ::close(fd_); }
  bool Touched() {
    alignas(inotify_event) char buf[4096];
    const ssize_t n = ::read(fd_, buf, sizeof(buf));
    return n > 0;
  }

 private:
  int fd_ = -1, wd_ = -1;
};

class ExternalData : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(root_ / "model");
    fs::create_directories(root_ / "outside");
    // A perfectly good weights file outside the model folder: if confinement were
    // missing, importing would succeed, so a refusal proves the check ran.
    testing::WriteFile(outside(), FloatBytes({1, 2, 3, 4}));
  }
  std::string model_dir() const { return root_ / "model"; }
  std::string outside() const { return root_ / "outside" / "w.bin"; }

  // Saves `m` into the model folder and expects the confinement refusal without the
  // outside file ever being opened.
  void ExpectConfined(const onnx::ModelProto& m, const std::string& reason) {
    const std::string path = SaveModel(m, model_dir() + "/m.onnx");
    OpenWatch watch(outside());
    auto g = ImportModel(path);
    ExpectError(g.status(), StatusCode::kInvalidArgument, {path, "initializer 'w'", reason});
    EXPECT_FALSE(watch.Touched()) << "the file outside the model folder was opened";
  }

  TempFolder tmp_;
  fs::path root_ = tmp_.path();
};

TEST_F(ExternalData, OpenWatchSeesReads) {
  // Control for the "never opened" checks below: the watch does notice a read.
  OpenWatch watch(outside());
  EXPECT_FALSE(watch.Touched());
  EXPECT_EQ(testing::ReadWholeFile(outside()).size(), 16u);
  EXPECT_TRUE(watch.Touched());
}

TEST_F(ExternalData, InsideFolderLoads) {
  testing::WriteFile(model_dir() + "/w.bin", "pad!" + FloatBytes({5, 6, 7, 8}));
  const std::string path = SaveModel(ExternalModel("w.bin", 4, 16), model_dir() + "/m.onnx");
  auto g = ImportModel(path);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const Tensor* w = g->Constant(g->FindValue("w"));
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(*w, Tensor::FromFloat({5, 6, 7, 8}, {4}));
}

TEST_F(ExternalData, AbsolutePathRefusedBeforeRead) {
  ExpectConfined(ExternalModel(outside()), "absolute path");
}

TEST_F(ExternalData, DotDotRefusedBeforeRead) {
  ExpectConfined(ExternalModel("../outside/w.bin"), "contains '..'");
  ExpectConfined(ExternalModel("sub/../../outside/w.bin"), "contains '..'");
}

TEST_F(ExternalData, SymlinkEscapeRefusedBeforeRead) {
  fs::create_symlink(outside(), model_dir() + "/link.bin");
  ExpectConfined(ExternalModel("link.bin"), "outside the model's folder");
  fs::create_directory_symlink(root_ / "outside", model_dir() + "/linkdir");
  ExpectConfined(ExternalModel("linkdir/w.bin"), "outside the model's folder");
}

TEST_F(ExternalData, SymlinkInsideFolderIsFine) {
  testing::WriteFile(model_dir() + "/real.bin", FloatBytes({1, 1, 2, 3}));
  fs::create_symlink("real.bin", model_dir() + "/alias.bin");
  auto g = ImportModel(SaveModel(ExternalModel("alias.bin"), model_dir() + "/m.onnx"));
  ASSERT_TRUE(g.ok()) << g.status().ToString();
}

TEST_F(ExternalData, ShorterThanDeclared) {
  testing::WriteFile(model_dir() + "/short.bin", FloatBytes({1, 2}));
  const std::string path = SaveModel(ExternalModel("short.bin"), model_dir() + "/m.onnx");
  ExpectError(ImportModel(path).status(), StatusCode::kInvalidArgument,
              {path, "initializer 'w'", "short.bin", "has 8 bytes", "16 are needed"});
  // Offset pushing the data past the end of the file.
  testing::WriteFile(model_dir() + "/exact.bin", FloatBytes({1, 2, 3, 4}));
  const std::string path2 = SaveModel(ExternalModel("exact.bin", 4), model_dir() + "/m2.onnx");
  ExpectError(ImportModel(path2).status(), StatusCode::kInvalidArgument,
              {path2, "exact.bin", "at offset 4"});
}

TEST_F(ExternalData, DeclaredLengthMismatch) {
  testing::WriteFile(model_dir() + "/w.bin", FloatBytes({1, 2, 3, 4, 5}));
  const std::string path = SaveModel(ExternalModel("w.bin", 0, 20), model_dir() + "/m.onnx");
  ExpectError(ImportModel(path).status(), StatusCode::kInvalidArgument,
              {path, "initializer 'w'", "length 20", "16 bytes"});
}

TEST_F(ExternalData, BadOffsetText) {
  testing::WriteFile(model_dir() + "/w.bin", FloatBytes({1, 2, 3, 4}));
  onnx::ModelProto m = ExternalModel("w.bin");
  auto* e = m.mutable_graph()->mutable_initializer(0)->add_external_data();
  e->set_key("offset");
  e->set_value("-8");
  const std::string path = SaveModel(m, model_dir() + "/m.onnx");
  ExpectError(ImportModel(path).status(), StatusCode::kInvalidArgument,
              {path, "initializer 'w'", "offset '-8'"});
}

TEST_F(ExternalData, MissingFile) {
  const std::string path = SaveModel(ExternalModel("absent.bin"), model_dir() + "/m.onnx");
  ExpectError(ImportModel(path).status(), StatusCode::kNotFound,
              {path, "initializer 'w'", "absent.bin"});
}

TEST_F(ExternalData, HugeDeclaredShapeWithSmallFileFailsBeforeAllocating) {
  testing::WriteFile(model_dir() + "/w.bin", FloatBytes({1, 2, 3, 4}));
  onnx::ModelProto m = ExternalModel("w.bin");
  m.mutable_graph()->mutable_initializer(0)->set_dims(0, int64_t{1} << 40);
  m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()
      ->mutable_shape()->mutable_dim(0)->set_dim_value(int64_t{1} << 40);
  m.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()
      ->mutable_shape()->mutable_dim(0)->set_dim_value(int64_t{1} << 40);
  const std::string path = SaveModel(m, model_dir() + "/m.onnx");
  ImportOptions opt;
  opt.max_tensor_bytes = int64_t{1} << 50;
  ExpectError(ImportModel(path, opt).status(), StatusCode::kInvalidArgument,
              {path, "initializer 'w'", "has 16 bytes"});
}

TEST_F(ExternalData, RefusedForModelsFromBytes) {
  std::string bytes;
  ASSERT_TRUE(ExternalModel("w.bin").SerializeToString(&bytes));
  ExpectError(ImportModelFromBytes(bytes, "mem.onnx", "").status(), StatusCode::kInvalidArgument,
              {"mem.onnx", "initializer 'w'", "only allowed in a model read from a file"});
}

TEST(ConfinedPath, Rules) {
  TempFolder dir;
  fs::create_directories(fs::path(dir.path()) / "sub");
  EXPECT_TRUE(ConfinedPath(dir.path(), "a.bin").ok());
  EXPECT_TRUE(ConfinedPath(dir.path(), "sub/a.bin").ok());
  EXPECT_TRUE(ConfinedPath(dir.path(), "./sub/./a.bin").ok());
  EXPECT_FALSE(ConfinedPath(dir.path(), "").ok());
  EXPECT_FALSE(ConfinedPath(dir.path(), ".").ok());
  EXPECT_FALSE(ConfinedPath(dir.path(), "/etc/passwd").ok());
  EXPECT_FALSE(ConfinedPath(dir.path(), "\\server\\share").ok());
  EXPECT_FALSE(ConfinedPath(dir.path(), "C:\\weights.bin").ok());
  EXPECT_FALSE(ConfinedPath(dir.path(), "..").ok());
  EXPECT_FALSE(ConfinedPath(dir.path(), "sub/../../x").ok());
}

}  // namespace
}  // namespace switchyard
