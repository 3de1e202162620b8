// Regression tests for inputs the fuzz targets (fuzz/) or probing around them found to crash,
// kept as small files in tests/fuzz_regressions/; and a check that the committed seed corpora
// (fuzz/corpus/<target>/) are still valid inputs, since a fuzzer seeded with files the
// readers refuse at the first byte explores little. docs/reliability.md lists the findings.
#include <gtest/gtest.h>

#include <cstdio>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "engine/engine.h"
#include "io/npy.h"
#include "io/sha256.h"
#include "onnx/importer.h"
#include "runtime/session.h"
#include "tune/database.h"

namespace switchyard {
namespace {

namespace fs = std::filesystem;

const fs::path kRegressions = fs::path(SY_SOURCE_DIR) / "tests" / "fuzz_regressions";
const fs::path kCorpus = fs::path(SY_SOURCE_DIR) / "fuzz" / "corpus";

std::string Slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// A scratch folder like the fuzz targets': it holds the 64-byte weights.bin that the seeds
// with external data point at.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (fs::temp_directory_path() / "sy_fuzz_regression_XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
    path_ = tmpl;
    std::string weights(64, '\0');
    for (int i = 0; i < 8; ++i) weights[static_cast<size_t>(i)] = static_cast<char>(i + 1);
    std::ofstream(path_ / "weights.bin", std::ios::binary) << weights;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Found by probing shape inference's data propagation: ConstantOfShape([2^20, 2^20]) feeding
// an Add made the importer fold the node, i.e. allocate 4 TiB (std::bad_alloc: the process
// died). Nodes whose outputs are larger than the fold limit are no longer evaluated.
TEST(FuzzRegression, ConstantOfShapeWithHugeShapeImportsWithoutAllocating) {
  auto g = ImportModel((kRegressions / "constant_of_shape_4tb.onnx").string());
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->value(g->outputs[0]).type.ToString(), "float32[1048576,1048576]");
}

// Found by libFuzzer (onnx_import, 6.5 M executions on the H200 host, session 6): a
// ReduceSumSquare over int64 constants, folded at import, overflowed (UBSan: signed integer
// overflow in reduce.cc). Integer reductions now wrap; the import goes through.
TEST(FuzzRegression, ConstantFoldedIntReductionThatOverflowsImports) {
  auto g = ImportModel((kRegressions / "reduce_sum_square_overflow.onnx").string());
  ASSERT_TRUE(g.ok()) << g.status().ToString();
}

// Found by probing: an input declared [0, 2^40, 2^40] (empty, so its element count of 0
// passed the check) reached Flatten, whose shape function multiplied 2^40 * 2^40 (signed
// overflow, UBSan). Zero dims no longer hide the other dims' product from the check.
TEST(FuzzRegression, EmptyInputWithHugeOtherDimsIsRefused) {
  auto g = ImportModel((kRegressions / "flatten_empty_2p80.onnx").string());
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kOutOfRange) << g.status().ToString();
  EXPECT_NE(g.status().message().find("input 'x'"), std::string::npos) << g.status().ToString();
}

// Found by fuzz_replay_engine_load (random mutation, seed 7, after 70 s): a mutated engine
// whose FusedMatMul step declares the input shape [0,3,4] made oneDNN divide by zero while
// creating the matmul primitive (SIGFPE). The oneDNN matmul now refuses dims below 1 before
// calling it; loading the engine is an error naming the node. The file is an engine
// without its trailing SHA-256, as the fuzz target takes it.
// A regression engine (stored without its trailing SHA-256, as the fuzz target takes it)
// parsed with the checks the fuzz target turns off.
Result<Engine> DeserializeRegressionEngine(const std::string& name) {
  std::string bytes = Slurp(kRegressions / name);
  bytes += Sha256Raw(bytes.data(), bytes.size());
  EngineLoadOptions options;
  options.check_tool_version = false;
  options.check_target = false;
  return DeserializeEngine(bytes, name, options);
}

TEST(FuzzRegression, EngineWithAnEmptyMatMulBatchIsRefusedNotACrash) {
  auto e = DeserializeRegressionEngine("engine_matmul_empty_batch.bin");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  auto loaded = LoadedEngine::Create(std::move(e).value());
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("needs every dimension >= 1"), std::string::npos)
      << loaded.status().ToString();
}

// Found by libFuzzer (engine_load, H200 host run, 2026-11-30): a step whose params held
// "flat": "..." (a string where the oneDNN matmul reads a boolean) threw a JSON type_error
// out of kernel creation and aborted. Loading now names the step and the bad value.
TEST(FuzzRegression, EngineStepParamOfTheWrongTypeIsRefusedNotACrash) {
  auto e = DeserializeRegressionEngine("engine_params_wrong_json_type.bin");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  auto loaded = LoadedEngine::Create(std::move(e).value());
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("malformed step parameters"), std::string::npos)
      << loaded.status().ToString();
  EXPECT_NE(loaded.status().message().find("type must be boolean"), std::string::npos)
      << loaded.status().ToString();
}

// Found by libFuzzer (engine_load, 8.25 M executions over 20 workers, H200 host,
// 2026-11-30; 11 inputs, one cause): a number such as 6.1e70 where the plan holds an integer
// (a tensor offset, a dtype, a shape) made nlohmann convert it to int64/int: undefined
// behaviour (UBSan float-cast-overflow). Floats are now refused outside float attributes
// before any field is read.
TEST(FuzzRegression, EngineWithAFloatWhereAnIntegerBelongsIsRefused) {
  for (const char* name : {"engine_float_where_int_offset.bin", "engine_float_where_int_dtype.bin"}) {
    auto e = DeserializeRegressionEngine(name);
    ASSERT_FALSE(e.ok()) << name;
    EXPECT_NE(e.status().message().find("a floating-point number where an integer belongs"), std::string::npos)
        << e.status().ToString();
  }
}

// A hostile engine whose plan nests arrays a million deep (a valid checksum, so parsing
// reaches the plan) is an error, not a stack overflow in the checks that walk the plan.
TEST(FuzzRegression, DeeplyNestedEnginePlanIsAnErrorNotAStackOverflow) {
  const size_t depth = 1000000;
  const std::string text = "{\"header\": " + std::string(depth, '[') + std::string(depth, ']') + "}";
  std::string b(kEngineMagic, 8);
  for (int i = 0; i < 4; ++i) b += static_cast<char>((kEngineFormatVersion >> (8 * i)) & 0xff);
  for (int i = 0; i < 8; ++i) b += static_cast<char>((static_cast<uint64_t>(text.size()) >> (8 * i)) & 0xff);
  b += text;
  b += Sha256Raw(b.data(), b.size());
  auto e = DeserializeEngine(b, "nested.engine");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("nested.engine"), std::string::npos) << e.status().ToString();
}

TEST(FuzzCorpus, ModelSeedsImport) {
  ScratchDir dir;
  int n = 0;
  for (const auto& e : fs::directory_iterator(kCorpus / "onnx_import")) {
    auto g = ImportModelFromBytes(Slurp(e.path()), e.path().string(), dir.path().string());
    EXPECT_TRUE(g.ok()) << g.status().ToString();
    ++n;
  }
  EXPECT_GE(n, 10);
}

// Engine seeds are stored without their trailing SHA-256 (the fuzz target appends it).
TEST(FuzzCorpus, EngineSeedsLoadOnceTheChecksumIsAppended) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(kCorpus / "engine_load")) {
    std::string bytes = Slurp(e.path());
    bytes += Sha256Raw(bytes.data(), bytes.size());
    EngineLoadOptions options;
    options.check_tool_version = false;
    options.check_target = false;
    auto engine = DeserializeEngine(bytes, e.path().string(), options);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    auto loaded = LoadedEngine::Create(std::move(engine).value());
    ++n;
    // Seeds hold oneDNN weights packed on the AVX-512 machine that built them; another CPU
    // refuses them by design (engine-format.md). Everything else must load.
    if (!loaded.ok() && loaded.status().message().find("engine was built for a different CPU") != std::string::npos) {
      std::printf("[fuzz corpus] %s: packed for another CPU: refused as designed\n", e.path().filename().c_str());
      continue;
    }
    EXPECT_TRUE(loaded.ok()) << e.path() << ": " << loaded.status().ToString();
  }
  EXPECT_GE(n, 5);
}

TEST(FuzzCorpus, TensorSeedsParse) {
  ScratchDir dir;
  int n = 0;
  for (const auto& e : fs::directory_iterator(kCorpus / "tensor_read")) {
    const fs::path copy = dir.path() / e.path().filename();
    fs::copy_file(e.path(), copy);
    auto t = ReadTensorFile(copy.string());
    EXPECT_TRUE(t.ok() || t.status().code() == StatusCode::kUnsupported)
        << t.status().ToString();
    ++n;
  }
  EXPECT_GE(n, 10);
}

TEST(FuzzCorpus, DatabaseSeedsOpen) {
  ScratchDir dir;
  for (const char* name : {"empty.sqlite", "full.sqlite"}) {
    const fs::path copy = dir.path() / name;
    fs::copy_file(kCorpus / "db_open" / name, copy);
    OpenOptions options;
    options.create_if_missing = false;
    auto db = TuningDatabase::Open(copy.string(), options);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto list = (*db)->ListCandidates();
    ASSERT_TRUE(list.ok()) << list.status().ToString();
    EXPECT_EQ(list->size(), std::string(name) == "full.sqlite" ? 2u : 0u);
    auto check = (*db)->IntegrityCheck();
    ASSERT_TRUE(check.ok());
    EXPECT_EQ(*check, "ok");
  }
}

}  // namespace
}  // namespace switchyard
