// Evaluation data: every folder layout on real files, the ONNX test layout against a case
// shipped with libonnx, reference folders, each refusal, --input-spec parsing, generated
// distributions and the content hashes.
#include "tune/eval_data.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <tuple>

#include "io/npy.h"
#include "io/sha256.h"
#include "onnx/tensor_proto.h"
#include "test_util.h"

namespace switchyard {
namespace {

namespace fs = std::filesystem;
using testing::ExpectError;
using testing::TempFolder;
using testing::WriteFile;

Tensor Values(std::vector<float> v, std::vector<int64_t> shape) {
  return Tensor::FromFloat(v, std::move(shape));
}

void Npy(const std::string& path, const Tensor& t) {
  fs::create_directories(fs::path(path).parent_path());
  ASSERT_TRUE(WriteNpy(path, t).ok()) << path;
}

// A serialized ONNX TensorProto; `name` is its stored name (may be empty).
void Pb(const std::string& path, const Tensor& t, const std::string& name = "") {
  fs::create_directories(fs::path(path).parent_path());
  onnx::TensorProto p;
  TensorToProto(t, name, &p);
  WriteFile(path, p.SerializeAsString());
}

const std::vector<std::string> kXY = {"x", "y"};
const std::vector<std::string> kOut = {"z"};

// --- layouts --------------------------------------------------------------------------

TEST(EvalDataLayout, FlatFolderIsOneSetNamedData) {
  TempFolder dir;
  const Tensor x = Values({1, 2, 3}, {3}), y = Values({4, 5}, {1, 2});
  Npy(dir / "x.npy", x);
  Pb(dir / "y.pb", y, "some_other_name");  // flat layout: the file name decides
  auto sets = LoadEvalData(dir.path(), kXY, kOut);
  ASSERT_TRUE(sets.ok()) << sets.status().ToString();
  ASSERT_EQ(sets->size(), 1u);
  const EvalSet& s = (*sets)[0];
  EXPECT_EQ(s.name, "data");
  EXPECT_EQ(s.inputs.at("x"), x);
  EXPECT_EQ(s.inputs.at("y"), y);
  EXPECT_TRUE(s.reference.empty());
  EXPECT_EQ(s.reference_source, "");
  EXPECT_EQ(s.files, (std::vector<std::string>{dir / "x.npy", dir / "y.pb"}));
}

TEST(EvalDataLayout, SubfoldersAreSetsInNaturalOrder) {
  TempFolder dir;
  const std::vector<std::string> names = {"set10", "set2", "set1", "set02b", "b", "a"};
  for (size_t i = 0; i < names.size(); ++i) {
    Npy(dir / (names[i] + "/x.npy"), Values({static_cast<float>(i)}, {1}));
    Npy(dir / (names[i] + "/y.npy"), Values({-static_cast<float>(i)}, {1}));
  }
  WriteFile(dir / "model.onnx", "not read");  // an ONNX test case keeps its model beside the sets
  WriteFile(dir / ".DS_Store", "ignored");
  auto sets = LoadEvalData(dir.path(), kXY, kOut);
  ASSERT_TRUE(sets.ok()) << sets.status().ToString();
  std::vector<std::string> order;
  for (const EvalSet& s : *sets) order.push_back(s.name);
  EXPECT_EQ(order, (std::vector<std::string>{"a", "b", "set1", "set2", "set02b", "set10"}));
  for (const EvalSet& s : *sets) {
    const size_t i =
        static_cast<size_t>(std::find(names.begin(), names.end(), s.name) - names.begin());
    EXPECT_EQ(s.inputs.at("x").data<float>()[0], static_cast<float>(i)) << s.name;
    EXPECT_EQ(s.inputs.at("y").data<float>()[0], -static_cast<float>(i)) << s.name;
    EXPECT_EQ(s.files,
              (std::vector<std::string>{dir / (s.name + "/x.npy"), dir / (s.name + "/y.npy")}));
  }
}

TEST(EvalDataLayout, OnnxLayoutByIndexByStoredNameAndWithReference) {
  TempFolder dir;
  const Tensor a = Values({1, 2}, {2}), b = Values({3, 4}, {2}), z = Values({9}, {1});
  // set 0: by index; set 1: stored names swap the order; both carry output_0.pb.
  Pb(dir / "test_data_set_0/input_0.pb", a);
  Pb(dir / "test_data_set_0/input_1.pb", b);
  Pb(dir / "test_data_set_0/output_0.pb", z);
  Pb(dir / "test_data_set_1/input_0.pb", a, "y");
  Pb(dir / "test_data_set_1/input_1.pb", b, "x");
  Pb(dir / "test_data_set_1/output_0.pb", z, "unknown_name");
  auto sets = LoadEvalData(dir.path(), kXY, kOut);
  ASSERT_TRUE(sets.ok()) << sets.status().ToString();
  ASSERT_EQ(sets->size(), 2u);
  EXPECT_EQ((*sets)[0].inputs.at("x"), a);
  EXPECT_EQ((*sets)[0].inputs.at("y"), b);
  EXPECT_EQ((*sets)[1].inputs.at("x"), b);
  EXPECT_EQ((*sets)[1].inputs.at("y"), a);
  for (const EvalSet& s : *sets) {
    EXPECT_EQ(s.reference_source, "onnx-test-data");
    ASSERT_EQ(s.reference.size(), 1u);
    EXPECT_EQ(s.reference.at("z"), z);
  }
  EXPECT_EQ((*sets)[1].files, (std::vector<std::string>{dir / "test_data_set_1/input_1.pb",
                                                        dir / "test_data_set_1/input_0.pb",
                                                        dir / "test_data_set_1/output_0.pb"}));
  // One set folder given directly is the flat case.
  auto one = LoadEvalData(dir / "test_data_set_0", kXY, kOut);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ((*one)[0].name, "data");
  EXPECT_EQ((*one)[0].reference.at("z"), z);
}

TEST(EvalDataLayout, RealOnnxTestCaseTestAdd) {
  const std::string root = "/usr/share/libonnx-testdata/data/node/test_add";
  if (!fs::exists(root + "/test_data_set_0/input_0.pb")) {
    GTEST_SKIP() << root << " is not installed (Debian package libonnx-testdata)";
  }
  auto sets = LoadEvalData(root, kXY, {"sum"});  // model.onnx beside the set is skipped
  ASSERT_TRUE(sets.ok()) << sets.status().ToString();
  ASSERT_EQ(sets->size(), 1u);
  const EvalSet& s = (*sets)[0];
  EXPECT_EQ(s.name, "test_data_set_0");
  EXPECT_EQ(s.reference_source, "onnx-test-data");
  const std::string d = root + "/test_data_set_0/";
  for (auto [name, file] : {std::pair{"x", "input_0.pb"}, {"y", "input_1.pb"}}) {
    auto want = ReadTensorFile(d + file);
    ASSERT_TRUE(want.ok());
    EXPECT_EQ(s.inputs.at(name), *want) << name;
    EXPECT_EQ(s.inputs.at(name).shape(), (std::vector<int64_t>{3, 4, 5}));
  }
  auto sum = ReadTensorFile(d + "output_0.pb");
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(s.reference.at("sum"), *sum);
  // And the data is what the name says: sum = x + y.
  for (int64_t i = 0; i < sum->numel(); ++i) {
    EXPECT_FLOAT_EQ(s.inputs.at("x").data<float>()[i] + s.inputs.at("y").data<float>()[i],
                    sum->data<float>()[i]);
  }
  EXPECT_EQ(s.files,
            (std::vector<std::string>{d + "input_0.pb", d + "input_1.pb", d + "output_0.pb"}));
}

TEST(EvalDataLayout, SymlinkInsideFollowedOutsideRefused) {
  TempFolder dir, outside;
  Npy(dir / "store/real_x.npy", Values({5}, {1}));
  Npy(dir / "sets/s1/x.npy", Values({7}, {1}));
  Npy(dir / "sets/s1/y.npy", Values({8}, {1}));
  // Inside the data folder: s2 links to s1's files (absolute and relative links).
  fs::create_directories(dir / "sets/s2");
  ASSERT_EQ(::symlink((dir / "sets/s1/x.npy").c_str(), (dir / "sets/s2/x.npy").c_str()), 0);
  ASSERT_EQ(::symlink("../s1/y.npy", (dir / "sets/s2/y.npy").c_str()), 0);
  auto sets = LoadEvalData(dir / "sets", kXY, kOut);
  ASSERT_TRUE(sets.ok()) << sets.status().ToString();
  ASSERT_EQ(sets->size(), 2u);
  EXPECT_EQ((*sets)[1].inputs.at("x"), Values({7}, {1}));
  EXPECT_EQ((*sets)[1].inputs.at("y"), Values({8}, {1}));
  // Outside it (even in its parent folder): refused.
  fs::remove(dir / "sets/s2/x.npy");
  ASSERT_EQ(::symlink((dir / "store/real_x.npy").c_str(), (dir / "sets/s2/x.npy").c_str()), 0);
  ExpectError(LoadEvalData(dir / "sets", kXY, kOut).status(), StatusCode::kInvalidArgument,
              {"s2/x.npy", "symlink", "outside"});
  fs::remove(dir / "sets/s2/x.npy");
  ASSERT_EQ(::symlink((dir / "sets/nothing.npy").c_str(), (dir / "sets/s2/x.npy").c_str()), 0);
  ExpectError(LoadEvalData(dir / "sets", kXY, kOut).status(), StatusCode::kNotFound,
              {"s2/x.npy", "symlink to nothing"});
  fs::remove(dir / "sets/s2/x.npy");
  ASSERT_EQ(::symlink("../s1/x.npy", (dir / "sets/s2/x.npy").c_str()), 0);
  ASSERT_TRUE(LoadEvalData(dir / "sets", kXY, kOut).ok());
  // A whole set folder linked from outside is refused too.
  Npy(outside / "x.npy", Values({1}, {1}));
  Npy(outside / "y.npy", Values({1}, {1}));
  ASSERT_EQ(::symlink(outside.path().c_str(), (dir / "sets/s3").c_str()), 0);
  ExpectError(LoadEvalData(dir / "sets", kXY, kOut).status(), StatusCode::kInvalidArgument,
              {"s3", "outside"});
}

// --- errors ---------------------------------------------------------------------------

TEST(EvalDataErrors, FolderItself) {
  TempFolder dir;
  ExpectError(LoadEvalData(dir / "nope", kXY, kOut).status(), StatusCode::kNotFound,
              {"nope", "does not exist"});
  WriteFile(dir / "file.npy", "x");
  ExpectError(LoadEvalData(dir / "file.npy", kXY, kOut).status(), StatusCode::kInvalidArgument,
              {"file.npy", "not a folder"});
  fs::create_directories(dir / "empty");
  ExpectError(LoadEvalData(dir / "empty", kXY, kOut).status(), StatusCode::kInvalidArgument,
              {"empty", "is empty"});
  fs::create_directories(dir / "sets/s1");
  ExpectError(LoadEvalData(dir / "sets", kXY, kOut).status(), StatusCode::kInvalidArgument,
              {"s1", "is empty"});
}

TEST(EvalDataErrors, FilesThatAreNotTensors) {
  TempFolder dir;
  Npy(dir / "x.npy", Values({1}, {1}));
  Npy(dir / "y.npy", Values({1}, {1}));
  WriteFile(dir / "notes.txt", "hello");
  ExpectError(LoadEvalData(dir.path(), kXY, kOut).status(), StatusCode::kInvalidArgument,
              {"notes.txt", "not a tensor file"});
  fs::remove(dir / "notes.txt");
  WriteFile(dir / "y.npy", "garbage, not numpy");
  auto r = LoadEvalData(dir.path(), kXY, kOut);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("y.npy"), std::string::npos) << r.status().ToString();
  fs::remove(dir / "y.npy");
  WriteFile(dir / "y.pb", std::string("\xff\xff\xff\xff garbage", 12));
  r = LoadEvalData(dir.path(), kXY, kOut);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("y.pb"), std::string::npos) << r.status().ToString();
}

TEST(EvalDataErrors, UnknownNameMissingInputDuplicateMixed) {
  TempFolder dir;
  Npy(dir / "s1/x.npy", Values({1}, {1}));
  Npy(dir / "s1/y.npy", Values({1}, {1}));
  Npy(dir / "s2/x.npy", Values({1}, {1}));
  ExpectError(LoadEvalData(dir.path(), kXY, kOut).status(), StatusCode::kNotFound,
              {"set 's2'", "input 'y'"});
  Npy(dir / "s2/w.npy", Values({1}, {1}));
  ExpectError(LoadEvalData(dir.path(), kXY, kOut).status(), StatusCode::kNotFound,
              {"w.npy", "no model input", "x, y"});
  fs::remove(dir / "s2/w.npy");
  Npy(dir / "s2/z.npy", Values({1}, {1}));
  ExpectError(LoadEvalData(dir.path(), kXY, kOut).status(), StatusCode::kNotFound,
              {"z.npy", "is an output"});
  fs::remove(dir / "s2/z.npy");
  Npy(dir / "s2/y.npy", Values({1}, {1}));
  Pb(dir / "s2/y.pb", Values({1}, {1}));
  ExpectError(LoadEvalData(dir.path(), kXY, kOut).status(), StatusCode::kInvalidArgument,
              {"y.npy", "y.pb", "input 'y'"});
  fs::remove(dir / "s2/y.pb");
  Pb(dir / "s2/input_0.pb", Values({1}, {1}));  // index 0 is x, already given by x.npy
  ExpectError(LoadEvalData(dir.path(), kXY, kOut).status(), StatusCode::kInvalidArgument,
              {"x.npy", "input_0.pb", "input 'x'"});
  fs::remove(dir / "s2/input_0.pb");
  Pb(dir / "s2/input_7.pb", Values({1}, {1}));
  ExpectError(LoadEvalData(dir.path(), kXY, kOut).status(), StatusCode::kNotFound,
              {"input_7.pb", "only 2 input"});
  fs::remove(dir / "s2/input_7.pb");
  ASSERT_TRUE(LoadEvalData(dir.path(), kXY, kOut).ok());
  Npy(dir / "x.npy", Values({1}, {1}));
  ExpectError(LoadEvalData(dir.path(), kXY, kOut).status(), StatusCode::kInvalidArgument,
              {"mixes subfolders", "x.npy"});
  fs::remove(dir / "x.npy");
  Npy(dir / "s2/deeper/x.npy", Values({1}, {1}));
  ExpectError(LoadEvalData(dir.path(), kXY, kOut).status(), StatusCode::kInvalidArgument,
              {"deeper", "is a folder"});
}

TEST(EvalDataErrors, ReferenceInSomeSetsOnlyOrPartial) {
  TempFolder dir;
  for (const char* s : {"s1", "s2"}) {
    Pb(dir / (std::string(s) + "/input_0.pb"), Values({1}, {1}));
    Pb(dir / (std::string(s) + "/input_1.pb"), Values({1}, {1}));
  }
  Pb(dir / "s2/output_0.pb", Values({1}, {1}));
  ExpectError(LoadEvalData(dir.path(), kXY, kOut).status(), StatusCode::kInvalidArgument,
              {"'s2' has reference", "'s1' has none"});
  ExpectError(LoadEvalData(dir.path(), kXY, {"z", "w"}).status(), StatusCode::kNotFound,
              {"s2", "output 'w'", "output_1.pb"});
}

TEST(EvalDataErrors, MoreThanTenThousandSets) {
  // 10001 folders: on tmpfs when there is one (creating them on the disk-backed temp dir
  // takes over 30 s on a busy machine).
  std::string tmpl = "/dev/shm/sy_eval_XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) {
    tmpl = ::testing::TempDir() + "sy_eval_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  }
  struct Remove {
    std::string path;
    ~Remove() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  } remove{tmpl};
  for (size_t i = 0; i <= kMaxEvalSets; ++i) fs::create_directory(tmpl + "/s" + std::to_string(i));
  ExpectError(LoadEvalData(tmpl, kXY, kOut).status(), StatusCode::kOutOfRange,
              {tmpl, "10001 sets", "10000"});
}

// --- reference folders ----------------------------------------------------------------

TEST(EvalDataReference, FlatAndPerSetAndReplacingOnnxReference) {
  TempFolder data, ref;
  Npy(data / "x.npy", Values({1}, {1}));
  Npy(data / "y.npy", Values({2}, {1}));
  auto sets = LoadEvalData(data.path(), kXY, {"z", "w"});
  ASSERT_TRUE(sets.ok());
  Npy(ref / "z.npy", Values({3}, {1}));
  Pb(ref / "output_1.pb", Values({4}, {1}));  // the ONNX name for output 1, "w"
  ASSERT_TRUE(LoadReferenceData(ref.path(), {"z", "w"}, &*sets).ok());
  EXPECT_EQ((*sets)[0].reference_source, "reference-dir");
  EXPECT_EQ((*sets)[0].reference.at("z"), Values({3}, {1}));
  EXPECT_EQ((*sets)[0].reference.at("w"), Values({4}, {1}));
  EXPECT_EQ((*sets)[0].files, (std::vector<std::string>{data / "x.npy", data / "y.npy",
                                                        ref / "z.npy", ref / "output_1.pb"}));

  // Several sets; a reference folder replaces output_K.pb references read with the data.
  TempFolder data2, ref2;
  for (const char* s : {"set2", "set10"}) {
    Pb(data2 / (std::string(s) + "/input_0.pb"), Values({1}, {1}));
    Pb(data2 / (std::string(s) + "/input_1.pb"), Values({1}, {1}));
    Pb(data2 / (std::string(s) + "/output_0.pb"), Values({0}, {1}));
  }
  auto sets2 = LoadEvalData(data2.path(), kXY, kOut);
  ASSERT_TRUE(sets2.ok());
  Npy(ref2 / "set10/z.npy", Values({10}, {1}));
  Npy(ref2 / "set2/z.npy", Values({2}, {1}));
  Status st = LoadReferenceData(ref2.path(), kOut, &*sets2);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ((*sets2)[0].name, "set2");
  EXPECT_EQ((*sets2)[0].reference.at("z"), Values({2}, {1}));
  EXPECT_EQ((*sets2)[1].reference.at("z"), Values({10}, {1}));
  EXPECT_EQ((*sets2)[1].reference_source, "reference-dir");
  EXPECT_EQ((*sets2)[1].files,
            (std::vector<std::string>{data2 / "set10/input_0.pb", data2 / "set10/input_1.pb",
                                      ref2 / "set10/z.npy"}));
}

TEST(EvalDataReference, Errors) {
  TempFolder data, ref;
  for (const char* s : {"a", "b"}) {
    Npy(data / (std::string(s) + "/x.npy"), Values({1}, {1}));
    Npy(data / (std::string(s) + "/y.npy"), Values({1}, {1}));
  }
  auto loaded = LoadEvalData(data.path(), kXY, kOut);
  ASSERT_TRUE(loaded.ok());
  std::vector<EvalSet> sets = *loaded;
  ExpectError(LoadReferenceData(ref / "nope", kOut, &sets), StatusCode::kNotFound, {"nope"});
  Npy(ref / "flat/z.npy", Values({1}, {1}));
  ExpectError(LoadReferenceData(ref / "flat", kOut, &sets), StatusCode::kInvalidArgument,
              {"flat", "2 sets", "a, b"});
  Npy(ref / "r/a/z.npy", Values({1}, {1}));
  Npy(ref / "r/c/z.npy", Values({1}, {1}));
  ExpectError(LoadReferenceData(ref / "r", kOut, &sets), StatusCode::kInvalidArgument,
              {"missing b", "not in the data c"});
  fs::rename(ref / "r/c", ref / "r/b");
  Npy(ref / "r/b/q.npy", Values({1}, {1}));
  ExpectError(LoadReferenceData(ref / "r", kOut, &sets), StatusCode::kNotFound,
              {"q.npy", "no model output", "z"});
  fs::remove(ref / "r/b/q.npy");
  ExpectError(LoadReferenceData(ref / "r", {"z", "w"}, &sets), StatusCode::kNotFound,
              {"set 'a'", "output 'w'"});
  // Failures leave the sets as they were.
  for (const EvalSet& s : sets) {
    EXPECT_TRUE(s.reference.empty());
    EXPECT_EQ(s.files.size(), 2u);
  }
  ASSERT_TRUE(LoadReferenceData(ref / "r", kOut, &sets).ok());
}

// --- --input-spec -----------------------------------------------------------------------

TEST(EvalDataInputSpec, ParsesAndDefaults) {
  auto d = ParseInputSpec("images:float32[1,3,224,224]~uniform(0,1)");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->name, "images");
  EXPECT_EQ(d->dtype, DataType::kFloat);
  EXPECT_EQ(d->shape, (std::vector<int64_t>{1, 3, 224, 224}));
  EXPECT_EQ(d->distribution, Distribution::kUniform);
  d = ParseInputSpec("input:0:float[2, 3]~normal(0.5, 2e-1)");  // TF-style name with ':'
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->name, "input:0");
  EXPECT_EQ(d->distribution, Distribution::kNormal);
  EXPECT_EQ(d->mean, 0.5);
  EXPECT_EQ(d->stddev, 0.2);
  d = ParseInputSpec("ids:int64[8]");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->distribution, Distribution::kUniform);
  EXPECT_EQ(d->low, 0);
  EXPECT_EQ(d->high, 2);
  d = ParseInputSpec("s:float16[]");
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->shape.empty());
  EXPECT_EQ(d->high, 1);
  d = ParseInputSpec("m:bool[0,4]~constant(1)");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->distribution, Distribution::kConstant);
  EXPECT_EQ(d->value, 1);
}

TEST(EvalDataInputSpec, RoundTrips) {
  for (const char* spec :
       {"x:float32[1,3,224,224]~uniform(0,1)", "a:b:int8[2,0]~normal(-3.25,0.1)",
        "m:bool[]~constant(1)", "h:float16[5]~uniform(-1e-07,3.3333333333333335)", "i:int32[7]",
        "d:float64[1]~normal(1e+300,0)", "u:uint8[3]~constant(-0)"}) {
    auto d = ParseInputSpec(spec);
    ASSERT_TRUE(d.ok()) << spec << ": " << d.status().ToString();
    const std::string text = FormatInputSpec(*d);
    auto back = ParseInputSpec(text);
    ASSERT_TRUE(back.ok()) << text;
    EXPECT_EQ(back->name, d->name) << text;
    EXPECT_EQ(back->dtype, d->dtype) << text;
    EXPECT_EQ(back->shape, d->shape) << text;
    EXPECT_EQ(back->distribution, d->distribution) << text;
    EXPECT_EQ(std::tie(back->low, back->high, back->mean, back->stddev, back->value),
              std::tie(d->low, d->high, d->mean, d->stddev, d->value))
        << text;
    EXPECT_EQ(FormatInputSpec(*back), text);
  }
  EXPECT_EQ(FormatInputSpec(*ParseInputSpec("i:int32[7]")), "i:int32[7]~uniform(0,2)");
  EXPECT_EQ(FormatInputSpec(*ParseInputSpec("f:float[2,2]~normal(0, 1)")),
            "f:float32[2,2]~normal(0,1)");
}

TEST(EvalDataInputSpec, ErrorsNameTheSpecAndThePart) {
  struct Case {
    std::string spec, part;
    StatusCode code = StatusCode::kInvalidArgument;
  };
  const std::vector<Case> cases = {
      {"x", "no shape"},
      {"x[1]", "no ':'"},
      {":float32[1]", "name is empty"},
      {"x:float33[1]", "'float33'"},
      {"x:string[1]", "'string'"},
      {"x:float32[1,-2]", "'-2'"},
      {"x:float32[1,N]", "'N'"},
      {"x:float32[1,,2]", "dimension ''"},
      {"x:float32[99999999999,99999999999]", "99999999999", StatusCode::kOutOfRange},
      {"x:float32[1]~", "nothing after '~'"},
      {"x:float32[1]~gauss(0,1)", "'gauss'"},
      {"x:float32[1]~uniform(1)", "2 argument"},
      {"x:float32[1]~uniform(1,1)", "lo < hi"},
      {"x:float32[1]~normal(0,-1)", "std >= 0"},
      {"x:float32[1]~normal(0,abc)", "'abc'"},
      {"x:float32[1]~constant(nan)", "'nan'"},
      {"x:float32[1]~uniform(0,1", "must look like"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.spec);
    ExpectError(ParseInputSpec(c.spec).status(), c.code, {"'" + c.spec + "'", c.part});
  }
}

// --- generation -------------------------------------------------------------------------

TEST(EvalDataGenerate, UniformIsBitIdenticalToTheFirstVersion) {
  // The algorithm as first written: `bench` numbers and other tests depend on these bits.
  std::vector<InputDecl> decls(3);
  decls[0] = {"f", DataType::kFloat, {4, 5}};
  decls[1] = {"i", DataType::kInt64, {7}};
  decls[1].high = 5;
  decls[2] = {"b", DataType::kBool, {9}};
  auto got = GenerateInputs(decls, 42);
  ASSERT_TRUE(got.ok());
  std::mt19937_64 rng(42);
  for (const InputDecl& d : decls) {
    std::uniform_real_distribution<double> u(d.low, d.high);
    const Tensor& t = got->at(d.name);
    for (int64_t i = 0; i < t.numel(); ++i) {
      const double v = u(rng);
      if (d.dtype == DataType::kFloat)
        EXPECT_EQ(t.data<float>()[i], static_cast<float>(v));
      else if (d.dtype == DataType::kBool)
        EXPECT_EQ(t.GetInt64(i), v >= 0.5 ? 1 : 0);
      else
        EXPECT_EQ(t.GetInt64(i), static_cast<int64_t>(std::floor(v)));
    }
  }
}

TEST(EvalDataGenerate, NormalMomentsConstantExactAndDeterminism) {
  auto d = ParseInputSpec("n:float64[100000]~normal(3,0.5)");
  ASSERT_TRUE(d.ok());
  auto g = GenerateInputs({*d}, 7);
  ASSERT_TRUE(g.ok());
  const Tensor& t = g->at("n");
  double sum = 0, sq = 0;
  for (int64_t i = 0; i < t.numel(); ++i) sum += t.data<double>()[i];
  const double mean = sum / static_cast<double>(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) sq += std::pow(t.data<double>()[i] - mean, 2);
  const double sd = std::sqrt(sq / static_cast<double>(t.numel() - 1));
  EXPECT_NEAR(mean, 3.0, 0.01);  // standard error 0.5/sqrt(1e5) = 0.0016
  EXPECT_NEAR(sd, 0.5, 0.01);

  // Integers from normal round to nearest and saturate.
  auto di = ParseInputSpec("k:int8[100000]~normal(10,100)");
  auto gi = GenerateInputs({*di}, 7);
  ASSERT_TRUE(gi.ok());
  bool saw_min = false, saw_max = false;
  double isum = 0;
  for (int64_t i = 0; i < gi->at("k").numel(); ++i) {
    const int64_t v = gi->at("k").GetInt64(i);
    saw_min |= v == -128;
    saw_max |= v == 127;
    isum += static_cast<double>(v);
  }
  EXPECT_TRUE(saw_min && saw_max);
  // Same draws as the float64 tensor, rounded: element 0 agrees with a float64 twin.
  auto twin = GenerateInputs({*ParseInputSpec("k:float64[1]~normal(10,100)")}, 7);
  EXPECT_EQ(gi->at("k").GetInt64(0),
            std::clamp<int64_t>(std::llround(twin->at("k").data<double>()[0]), -128, 127));

  auto c = GenerateInputs(
      {*ParseInputSpec("c:float32[2,3]~constant(-1.25)"),
       *ParseInputSpec("ci:int32[4]~constant(2.5)"), *ParseInputSpec("cb:bool[2]~constant(0.2)")},
      1);
  ASSERT_TRUE(c.ok());
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(c->at("c").data<float>()[i], -1.25f);
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_EQ(c->at("ci").data<int32_t>()[i], 3);  // half away from zero
  for (int64_t i = 0; i < 2; ++i) EXPECT_EQ(c->at("cb").GetInt64(i), 0);

  auto again = GenerateInputs({*d}, 7);
  EXPECT_EQ(again->at("n"), t);
  auto other = GenerateInputs({*d}, 8);
  EXPECT_FALSE(other->at("n") == t);
}

TEST(EvalDataGenerate, RefusesBadParameters) {
  InputDecl d{"x", DataType::kFloat, {2}};
  d.distribution = Distribution::kNormal;
  d.stddev = -1;
  ExpectError(GenerateInputs({d}, 1).status(), StatusCode::kInvalidArgument, {"'x'", "std"});
  d.distribution = Distribution::kUniform;
  d.low = 2;
  d.high = 1;
  ExpectError(GenerateInputs({d}, 1).status(), StatusCode::kInvalidArgument,
              {"'x'", "low <= high"});
  d.dtype = DataType::kString;
  ExpectError(GenerateInputs({d}, 1).status(), StatusCode::kUnsupported, {"'x'", "string"});
}

// --- hashes -----------------------------------------------------------------------------

std::string U64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[static_cast<size_t>(i)] = static_cast<char>(v >> (8 * i));
  return s;
}

TEST(EvalDataHash, EncodingAsDocumented) {
  const Tensor t = Values({1.5f, -2}, {2, 1});
  const std::string fields = U64(7) + "float32" + U64(2) + U64(2) + U64(1) + U64(8) +
                             std::string(static_cast<const char*>(t.raw()), 8);
  EXPECT_EQ(HashTensor(t), Sha256Hex(fields));
  EXPECT_EQ(HashTensorMap({{"in", t}}), Sha256Hex(U64(1) + U64(2) + "in" + fields));
  EXPECT_EQ(HashTensorMap({}), Sha256Hex(U64(0)));
}

TEST(EvalDataHash, ChangesWithOneByteShapeDtypeOrName) {
  const Tensor a = Values({1, 2, 3, 4}, {2, 2});
  const TensorMap base = {{"a", a}, {"b", Values({5}, {1})}};
  const std::string h = HashTensorMap(base);
  EXPECT_EQ(h.size(), 64u);
  EXPECT_EQ(HashTensorMap(TensorMap(base)), h);

  TensorMap byte = base;
  static_cast<uint8_t*>(byte.at("a").raw())[3] ^= 1;
  EXPECT_NE(HashTensorMap(byte), h);
  EXPECT_NE(HashTensor(byte.at("a")), HashTensor(a));

  TensorMap shape = base;
  shape.at("a") = a.Reshaped({4});
  EXPECT_NE(HashTensorMap(shape), h);
  EXPECT_NE(HashTensor(a.Reshaped({1, 4})), HashTensor(a.Reshaped({4, 1})));

  Tensor as_int(DataType::kInt32, {2, 2});
  std::memcpy(as_int.raw(), a.raw(), a.nbytes());
  EXPECT_NE(HashTensor(as_int), HashTensor(a));

  TensorMap renamed = {{"A", a}, {"b", Values({5}, {1})}};
  EXPECT_NE(HashTensorMap(renamed), h);
  // Moving bytes between entries or names is not a collision: lengths are prefixed.
  EXPECT_NE(HashTensorMap({{"ab", Values({5}, {1})}}), HashTensorMap({{"a", Values({5}, {1})}}));
}

}  // namespace
}  // namespace switchyard
