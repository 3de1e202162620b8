// Tensor files: .npy round trips and numpy compatibility, refusal of corrupt or
// unsupported .npy files, and ONNX TensorProto (.pb) files.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <filesystem>

#include "io/npy.h"
#include "onnx/tensor_proto.h"
#include "test_util.h"

namespace switchyard {
namespace {

namespace fs = std::filesystem;
using testing::ExpectError;
using testing::ReadWholeFile;
using testing::TempFolder;
using testing::WriteFile;

// A tensor of `dtype` and `shape` with distinct, exactly representable values.
Tensor Sample(DataType dtype, std::vector<int64_t> shape) {
  Tensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (dtype == DataType::kBool) t.SetInt64(i, i % 3 == 0);
    else if (IsFloatType(dtype)) t.SetDouble(i, 0.5 * static_cast<double>(i) - 3.0);
    else t.SetInt64(i, (i * 37) % 120 - (IsSignedType(dtype) ? 60 : 0));
  }
  return t;
}

std::string NpyHeader(const std::string& dict) {
  std::string header = dict;
  const size_t total = 10 + header.size() + 1;
  header += std::string((64 - total % 64) % 64, ' ') + "\n";
  std::string out = "\x93NUMPY\x01";
  out += '\0';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header;
}

TEST(Npy, RoundTripEveryDtypeAndRank) {
  TempFolder dir;
  const DataType dtypes[] = {DataType::kFloat,  DataType::kDouble, DataType::kFloat16,
                             DataType::kInt8,   DataType::kInt16,  DataType::kInt32,
                             DataType::kInt64,  DataType::kUint8,  DataType::kUint16,
                             DataType::kUint32, DataType::kUint64, DataType::kBool};
  const std::vector<std::vector<int64_t>> shapes = {{}, {1}, {5}, {2, 3}, {2, 1, 3, 2}, {0, 3}};
  for (DataType dt : dtypes) {
    for (const auto& shape : shapes) {
      const Tensor t = Sample(dt, shape);
      const std::string path = dir / "t.npy";
      ASSERT_TRUE(WriteNpy(path, t).ok());
      auto back = ReadNpy(path);
      ASSERT_TRUE(back.ok()) << DataTypeName(dt) << ShapeToString(shape) << ": "
                             << back.status().ToString();
      EXPECT_EQ(*back, t) << DataTypeName(dt) << ShapeToString(shape);
      EXPECT_EQ(back->shape(), shape);
      auto via_ext = ReadTensorFile(path);
      ASSERT_TRUE(via_ext.ok());
      EXPECT_EQ(*via_ext, t);
    }
  }
  // No temporary files are left behind by the atomic writes.
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    ++files;
    EXPECT_EQ(e.path().filename(), "t.npy");
  }
  EXPECT_EQ(files, 1);
}

TEST(Npy, HeaderMatchesNumpyByteForByte) {
  // Exactly what numpy 1.x np.save writes (format 1.0, 64-byte aligned, tuple syntax).
  const std::string f32 = SerializeNpy(Sample(DataType::kFloat, {2, 3}));
  const std::string want_f32 =
      std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" + std::string(58, ' ') + "\n";
  ASSERT_EQ(want_f32.size(), 128u);
  EXPECT_EQ(f32.substr(0, 128), want_f32);
  EXPECT_EQ(f32.size(), 128u + 24u);

  const std::string scalar = SerializeNpy(Tensor::FromInt64({5}, {}));
  const std::string dict = "{'descr': '<i8', 'fortran_order': False, 'shape': (), }";
  EXPECT_EQ(scalar.substr(0, 128), std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict +
                                       std::string(117 - dict.size(), ' ') + "\n");
  EXPECT_NE(scalar.find("'shape': (), }"), std::string::npos);
  EXPECT_NE(SerializeNpy(Sample(DataType::kUint8, {3})).find("'descr': '|u1', 'fortran_order': "
                                                             "False, 'shape': (3,), }"),
            std::string::npos);
  EXPECT_NE(SerializeNpy(Sample(DataType::kBool, {2})).find("'|b1'"), std::string::npos);
  for (const std::string& s : {f32, scalar}) EXPECT_EQ((s.find('\n') + 1) % 64, 0u);
}

// Runs a Python snippet with Debian's python3 (which has numpy); false if unavailable.
bool RunPython(const std::string& code, std::string* out) {
  if (!fs::exists("/usr/bin/python3")) return false;
  const std::string cmd = "/usr/bin/python3 -c \"" + code + "\" 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return false;
  char buf[512];
  while (size_t n = std::fread(buf, 1, sizeof(buf), p)) out->append(buf, n);
  return ::pclose(p) == 0;
}

TEST(Npy, NumpyReadsOursAndWeReadNumpys) {
  std::string probe;
  if (!RunPython("import numpy", &probe)) GTEST_SKIP() << "no numpy in /usr/bin/python3";
  TempFolder dir;
  ASSERT_TRUE(WriteNpy(dir / "ours_f32.npy", Sample(DataType::kFloat, {2, 3})).ok());
  ASSERT_TRUE(WriteNpy(dir / "ours_i64.npy", Tensor::FromInt64({-7}, {})).ok());
  ASSERT_TRUE(WriteNpy(dir / "ours_b.npy", Sample(DataType::kBool, {4})).ok());
  std::string out;
  const std::string d = dir.path();
  ASSERT_TRUE(RunPython(
      "import numpy as np\n"
      "a = np.load('" + d + "/ours_f32.npy'); assert a.dtype == np.float32 and a.shape == (2, 3)\n"
      "assert (a.ravel() == 0.5 * np.arange(6) - 3).all()\n"
      "b = np.load('" + d + "/ours_i64.npy'); assert b.dtype == np.int64 and b.shape == () and b == -7\n"
      "c = np.load('" + d + "/ours_b.npy'); assert c.tolist() == [True, False, False, True]\n"
      "np.save('" + d + "/np_f64.npy', np.arange(6, dtype=np.float64).reshape(3, 2) / 4)\n"
      "np.save('" + d + "/np_u16.npy', np.array([1, 65535], dtype=np.uint16))\n"
      "np.save('" + d + "/np_f16.npy', np.array(1.5, dtype=np.float16))\n"
      "np.save('" + d + "/np_fortran.npy', np.asfortranarray(np.ones((2, 3), np.float32)))\n"
      "np.save('" + d + "/np_be.npy', np.ones(3, dtype='>f4'))\n"
      "np.save('" + d + "/np_str.npy', np.array(['a', 'b']))\n"
      "np.save('" + d + "/np_big.npy', np.zeros(5, np.float32).reshape(5, 1))\n"
      "import io; s = io.BytesIO(); np.lib.format.write_array(s, np.ones(2, np.int32), version=(2, 0));"
      " open('" + d + "/np_v2.npy', 'wb').write(s.getvalue())\n",
      &out))
      << out;
  auto f64 = ReadNpy(dir / "np_f64.npy");
  ASSERT_TRUE(f64.ok()) << f64.status().ToString();
  EXPECT_EQ(f64->dtype(), DataType::kDouble);
  EXPECT_EQ(f64->shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_DOUBLE_EQ(f64->GetDouble(5), 1.25);
  auto u16 = ReadNpy(dir / "np_u16.npy");
  ASSERT_TRUE(u16.ok()) << u16.status().ToString();
  EXPECT_EQ(u16->GetInt64(1), 65535);
  auto f16 = ReadNpy(dir / "np_f16.npy");
  ASSERT_TRUE(f16.ok()) << f16.status().ToString();
  EXPECT_EQ(f16->rank(), 0);
  EXPECT_DOUBLE_EQ(f16->GetDouble(0), 1.5);
  auto v2 = ReadNpy(dir / "np_v2.npy");
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  EXPECT_EQ(v2->dtype(), DataType::kInt32);
  EXPECT_EQ(v2->GetInt64(1), 1);
  ExpectError(ReadNpy(dir / "np_fortran.npy").status(), StatusCode::kUnsupported,
              {"np_fortran.npy", "Fortran"});
  ExpectError(ReadNpy(dir / "np_be.npy").status(), StatusCode::kUnsupported,
              {"np_be.npy", "'>f4'"});
  ExpectError(ReadNpy(dir / "np_str.npy").status(), StatusCode::kUnsupported,
              {"np_str.npy", "'<U1'"});
}

TEST(Npy, CorruptFilesAreRefused) {
  const std::string good = SerializeNpy(Sample(DataType::kFloat, {2, 3}));
  auto expect_bad = [](const std::string& bytes, std::initializer_list<std::string> needles) {
    auto r = ParseNpy(bytes, "in.npy");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("in.npy"), std::string::npos) << r.status().ToString();
    for (const auto& n : needles) {
      EXPECT_NE(r.status().message().find(n), std::string::npos)
          << "lacks '" << n << "': " << r.status().ToString();
    }
  };
  expect_bad("", {"missing magic"});
  expect_bad("hello, world\n1 2 3\n", {"missing magic"});
  expect_bad(good.substr(0, 9), {"missing magic"});
  expect_bad(good.substr(0, 40), {"truncated header"});
  expect_bad(good.substr(0, good.size() - 1), {"needs 24 data bytes", "has 23"});
  expect_bad(good + "x", {"needs 24 data bytes", "has 25"});
  std::string v9 = good;
  v9[6] = 9;
  expect_bad(v9, {"unknown format version 9"});
  std::string v2 = good;
  v2[6] = 2;  // header length now read as 4 bytes: 0x00007600 + ... is past the end
  expect_bad(v2, {});
  expect_bad(NpyHeader("{'descr': '<f4', 'shape': (2,), }"), {"lacks"});
  expect_bad(NpyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }"),
             {"negative"});
  expect_bad(NpyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (two,), }"),
             {"bad shape"});
  expect_bad(NpyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3"), {"lacks"});
  expect_bad(NpyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': "
                       "(99999999999999999999,), }"),
             {"bad shape"});
  // Overflowing element count: refused before any allocation.
  expect_bad(NpyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': "
                       "(1099511627776, 1099511627776), }"),
             {});
  // A huge but representable shape with no data: refused on size, not allocated.
  expect_bad(NpyHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (68719476736,), }"),
             {"data bytes"});
  auto fortran = ParseNpy(NpyHeader("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }") +
                              std::string(8, '\0'),
                          "f.npy");
  ExpectError(fortran.status(), StatusCode::kUnsupported, {"f.npy", "Fortran"});
  auto object = ParseNpy(NpyHeader("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }"),
                         "o.npy");
  ExpectError(object.status(), StatusCode::kUnsupported, {"o.npy", "'|O'"});
}

TEST(Npy, FilesOnDisk) {
  TempFolder dir;
  ExpectError(ReadNpy(dir / "absent.npy").status(), StatusCode::kNotFound, {"absent.npy"});
  ExpectError(ReadNpy(dir.path()).status(), StatusCode::kInvalidArgument, {dir.path()});
  WriteFile(dir / "text.npy", "1.0 2.0 3.0\n");
  ExpectError(ReadNpy(dir / "text.npy").status(), StatusCode::kParseError,
              {"text.npy", "missing magic"});
  WriteFile(dir / "empty.npy", "");
  ExpectError(ReadNpy(dir / "empty.npy").status(), StatusCode::kParseError, {"empty.npy"});
  const std::string good = SerializeNpy(Sample(DataType::kInt32, {4, 4}));
  WriteFile(dir / "trunc.npy", good.substr(0, good.size() - 10));
  ExpectError(ReadNpy(dir / "trunc.npy").status(), StatusCode::kParseError,
              {"trunc.npy", "needs 64 data bytes", "has 54"});
}

TEST(Npy, WriteRefusals) {
  TempFolder dir;
  ExpectError(WriteNpy(dir / "s.npy", Tensor(DataType::kString, {1})), StatusCode::kUnsupported,
              {"s.npy", "string"});
  ExpectError(WriteNpy(dir / "b.npy", Tensor(DataType::kBfloat16, {1})),
              StatusCode::kUnsupported, {"b.npy"});
  ExpectError(WriteNpy(dir / "no/such/folder/x.npy", Sample(DataType::kFloat, {1})),
              StatusCode::kIoError, {"no/such/folder/x.npy"});
}

TEST(TensorFile, UnknownExtension) {
  TempFolder dir;
  WriteFile(dir / "x.txt", "1 2 3\n");
  ExpectError(ReadTensorFile(dir / "x.txt").status(), StatusCode::kInvalidArgument,
              {"x.txt", "'.txt'", ".npy"});
  WriteFile(dir / "noext", "1 2 3\n");
  ExpectError(ReadTensorFile(dir / "noext").status(), StatusCode::kInvalidArgument, {"noext"});
}

TEST(TensorProtoFile, RoundTrip) {
  TempFolder dir;
  for (DataType dt : {DataType::kFloat, DataType::kInt64, DataType::kBool, DataType::kFloat16,
                      DataType::kUint8, DataType::kDouble}) {
    for (const std::vector<int64_t>& shape : {std::vector<int64_t>{}, {3}, {2, 2}}) {
      const Tensor t = Sample(dt, shape);
      onnx::TensorProto p;
      TensorToProto(t, "input_0", &p);
      std::string bytes;
      ASSERT_TRUE(p.SerializeToString(&bytes));
      WriteFile(dir / "t.pb", bytes);
      std::string name;
      auto back = ReadTensorProtoFile(dir / "t.pb", &name);
      ASSERT_TRUE(back.ok()) << back.status().ToString();
      EXPECT_EQ(*back, t) << DataTypeName(dt) << ShapeToString(shape);
      EXPECT_EQ(name, "input_0");
      auto via_ext = ReadTensorFile(dir / "t.pb");
      ASSERT_TRUE(via_ext.ok());
      EXPECT_EQ(*via_ext, t);
    }
  }
  // Typed fields (float_data, int64_data) as the ONNX test data often uses.
  onnx::TensorProto p;
  p.set_data_type(onnx::TensorProto::FLOAT);
  p.add_dims(2);
  p.add_float_data(1.5f);
  p.add_float_data(-2.0f);
  std::string bytes;
  ASSERT_TRUE(p.SerializeToString(&bytes));
  WriteFile(dir / "typed.pb", bytes);
  auto typed = ReadTensorFile(dir / "typed.pb");
  ASSERT_TRUE(typed.ok()) << typed.status().ToString();
  EXPECT_EQ(*typed, Tensor::FromFloat({1.5f, -2.0f}, {2}));
  // String tensors.
  Tensor s(DataType::kString, {2});
  s.strings() = {"a", "bc"};
  TensorToProto(s, "s", &p);
  ASSERT_TRUE(p.SerializeToString(&bytes));
  WriteFile(dir / "s.pb", bytes);
  auto strs = ReadTensorFile(dir / "s.pb");
  ASSERT_TRUE(strs.ok()) << strs.status().ToString();
  EXPECT_EQ(strs->strings(), s.strings());
}

TEST(TensorProtoFile, Refusals) {
  TempFolder dir;
  ExpectError(ReadTensorFile(dir / "absent.pb").status(), StatusCode::kNotFound, {"absent.pb"});
  WriteFile(dir / "empty.pb", "");
  ExpectError(ReadTensorFile(dir / "empty.pb").status(), StatusCode::kParseError, {"empty.pb"});
  WriteFile(dir / "text.pb", "this is not a protobuf at all, just some words\n");
  ExpectError(ReadTensorFile(dir / "text.pb").status(), StatusCode::kParseError, {"text.pb"});

  onnx::TensorProto p;
  TensorToProto(Sample(DataType::kFloat, {4}), "t", &p);
  std::string bytes;
  ASSERT_TRUE(p.SerializeToString(&bytes));
  WriteFile(dir / "trunc.pb", bytes.substr(0, bytes.size() - 3));
  ExpectError(ReadTensorFile(dir / "trunc.pb").status(), StatusCode::kParseError, {"trunc.pb"});

  p.add_dims(2);  // [4, 2] needs 32 bytes, 16 present
  ASSERT_TRUE(p.SerializeToString(&bytes));
  WriteFile(dir / "short.pb", bytes);
  ExpectError(ReadTensorFile(dir / "short.pb").status(), StatusCode::kInvalidArgument,
              {"short.pb", "raw_data has 16 bytes", "needs 32"});

  // Not regular files: a FIFO must not block, a folder is not a tensor.
  ASSERT_EQ(::mkfifo((dir / "fifo.pb").c_str(), 0600), 0);
  ExpectError(ReadTensorFile(dir / "fifo.pb").status(), StatusCode::kInvalidArgument,
              {"fifo.pb", "not a regular file"});
  ASSERT_EQ(::mkfifo((dir / "fifo.npy").c_str(), 0600), 0);
  ExpectError(ReadTensorFile(dir / "fifo.npy").status(), StatusCode::kInvalidArgument,
              {"fifo.npy", "not a regular file"});
  fs::create_directory(dir / "folder.pb");
  ExpectError(ReadTensorFile(dir / "folder.pb").status(), StatusCode::kInvalidArgument,
              {"folder.pb"});

  // External data in a tensor file is confined to the file's folder like a model's.
  onnx::TensorProto e;
  e.set_data_type(onnx::TensorProto::FLOAT);
  e.add_dims(1);
  e.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = e.add_external_data();
  kv->set_key("location");
  kv->set_value("../escape.bin");
  ASSERT_TRUE(e.SerializeToString(&bytes));
  WriteFile(dir / "ext.pb", bytes);
  ExpectError(ReadTensorFile(dir / "ext.pb").status(), StatusCode::kInvalidArgument,
              {"ext.pb", "'..'"});
}

}  // namespace
}  // namespace switchyard
