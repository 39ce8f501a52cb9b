#include "hybridnet/io/params.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "common/test_util.h"
#include "hybridnet/limits.h"
#include "hybridnet/npy.h"
#include "hybridnet/symbol.h"

namespace hybridnet {
namespace {

using namespace ::hybridnet::testing_util;  // NOLINT: the shared test helpers

using namespace std::string_literals;

constexpr DType kAllDTypes[] = {
    DType::kFloat32, DType::kFloat64, DType::kFloat16,  DType::kUint8, DType::kInt32,
    DType::kInt8,    DType::kInt64,   DType::kBool,     DType::kInt16, DType::kUint16,
    DType::kUint32,  DType::kUint64,  DType::kBFloat16,
};

constexpr uint32_t kV1 = 0xF993FAC8;
constexpr uint32_t kV2 = 0xF993FAC9;
constexpr uint32_t kV3 = 0xF993FACA;

// Little-endian byte builder for hand-made files.
class Bytes {
 public:
  Bytes& U32(uint32_t v) { return Int(v, 4); }
  Bytes& I32(int32_t v) { return Int(static_cast<uint32_t>(v), 4); }
  Bytes& U64(uint64_t v) { return Int(v, 8); }
  Bytes& I64(int64_t v) { return Int(static_cast<uint64_t>(v), 8); }
  Bytes& F32(float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    return U32(bits);
  }
  Bytes& Raw(const std::string& s) {
    str += s;
    return *this;
  }
  Bytes& Str(const std::string& s) { return U64(s.size()).Raw(s); }
  // The list header: magic 0x112, reserved 0, array count.
  Bytes& Header(uint64_t count) { return U64(0x112).U64(0).U64(count); }
  // A dense V2 record's fields up to the data: magic, stype 0, shape, cpu(0), type flag.
  Bytes& V2(const std::vector<int64_t>& dims, int32_t type_flag) {
    U32(kV2).I32(0).I32(static_cast<int32_t>(dims.size()));
    for (int64_t d : dims) I64(d);
    return I32(1).I32(0).I32(type_flag);
  }

  std::string str;

 private:
  Bytes& Int(uint64_t v, int size) {
    for (int i = 0; i < size; ++i) str += static_cast<char>((v >> (8 * i)) & 0xff);
    return *this;
  }
};

// Decodes hex digits, ignoring spaces and '|'.
std::string Hex(const std::string& text) {
  std::string out;
  int high = -1;
  for (char c : text) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) continue;
    int v = std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : std::tolower(c) - 'a' + 10;
    if (high < 0) {
      high = v;
    } else {
      out += static_cast<char>(high * 16 + v);
      high = -1;
    }
  }
  return out;
}

// Parses `bytes` as "probe.params" and checks the error's code and that its message names the
// file and contains every needle.
void ExpectError(const std::string& bytes, StatusCode code,
                 const std::vector<std::string>& needles) {
  Error e = ErrorOf([&] { ParseNDArrayList(bytes, "probe.params"); });
  EXPECT_EQ(e.code(), code) << e.what();
  std::string message = e.what();
  EXPECT_NE(message.find("probe.params"), std::string::npos) << message;
  for (const std::string& needle : needles) {
    EXPECT_NE(message.find(needle), std::string::npos) << "'" << needle << "' not in: " << message;
  }
}

bool SameBytes(const NDArray& a, const NDArray& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

TEST(ParamsTest, WritesTheExactV2Layout) {
  NDArrayList list;
  list.arrays = {NDArray::FromVector({2}, {1.f, 2.f}), NDArray::Full({1, 1}, -3, DType::kInt8)};
  list.names = {"a", "b"};
  const std::string expected =
      Hex("12010000 00000000 | 00000000 00000000 | 02000000 00000000"  // header, reserved, N = 2
                                                                       // a: V2 magic, dense, ndim
                                                                       // 1, dim 2, cpu, dev 0,
                                                                       // float32, 1.0f, 2.0f
          "c9fa93f9 | 00000000 | 01000000 | 02000000 00000000 | 01000000 | 00000000 | 00000000"
          "0000803f 00000040"
          // b: V2 magic, dense, ndim 2, dims 1 1, cpu, dev 0, int8, -3
          "c9fa93f9 | 00000000 | 02000000 | 01000000 00000000 | 01000000 00000000 | 01000000"
          "00000000 | 05000000 | fd"
          // two names: "a", "b"
          "02000000 00000000 | 01000000 00000000 61 | 01000000 00000000 62");
  EXPECT_EQ(SerializeNDArrayList(list), expected);
  NDArrayList back = ParseNDArrayList(expected, "layout.params");
  EXPECT_EQ(back.names, list.names);
  EXPECT_EQ(back.record_versions, (std::vector<int>{2, 2}));
  EXPECT_TRUE(SameBytes(back.arrays[0], list.arrays[0]));
  EXPECT_TRUE(SameBytes(back.arrays[1], list.arrays[1]));

  list.names.clear();
  std::string unnamed = SerializeNDArrayList(list);
  EXPECT_EQ(unnamed, expected.substr(0, expected.size() - 26) + Hex("00000000 00000000"));
}

TEST(ParamsTest, RoundTripsEveryDTypeNamedAndUnnamed) {
  NDArrayList list;
  std::vector<double> values{0, 1, 2, 3, 100, 7};
  NDArray f64 = NDArray::FromBuffer({2, 3}, DType::kFloat64, values.data());
  for (DType dtype : kAllDTypes) {
    list.arrays.push_back(f64.AsType(dtype));
    list.names.push_back(std::string("arg:") + DTypeName(dtype));
  }
  list.arrays.push_back(NDArray());  // a "none" entry
  list.names.push_back("aux:none");
  for (bool named : {true, false}) {
    SCOPED_TRACE(named ? "named" : "unnamed");
    NDArrayList in = list;
    if (!named) in.names.clear();
    NDArrayList out = ParseNDArrayList(SerializeNDArrayList(in), "roundtrip.params");
    EXPECT_EQ(out.names, in.names);
    ASSERT_EQ(out.arrays.size(), in.arrays.size());
    EXPECT_EQ(out.record_versions, std::vector<int>(in.arrays.size(), 2));
    for (size_t i = 0; i + 1 < in.arrays.size(); ++i) {
      EXPECT_TRUE(SameBytes(out.arrays[i], in.arrays[i])) << DTypeName(in.arrays[i].dtype());
    }
    EXPECT_TRUE(out.arrays.back().is_none());
  }
}

TEST(ParamsTest, WriterRejectsWhatV2CannotHold) {
  NDArrayList scalar;
  scalar.arrays = {NDArray::Full(Shape{}, 1)};
  scalar.names = {"arg:s"};
  Error e = ErrorOf([&] { SerializeNDArrayList(scalar); });
  EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("arg:s"), std::string::npos) << e.what();

  NDArrayList mismatch;
  mismatch.arrays = {NDArray::Zeros({1}), NDArray::Zeros({1})};
  mismatch.names = {"only_one"};
  EXPECT_EQ(ErrorOf([&] { SerializeNDArrayList(mismatch); }).code(), StatusCode::kInvalidArgument);

  auto node = std::make_shared<Node>();
  node->attrs.name = "x";
  NDArrayList symbolic;
  symbolic.arrays = {NDArray::FromEntry(NodeEntry{node, 0, 0})};
  EXPECT_EQ(ErrorOf([&] { SerializeNDArrayList(symbolic); }).code(), StatusCode::kInvalidArgument);
}

TEST(ParamsTest, ReadsV0Records) {
  Bytes b;
  b.Header(3);
  b.U32(2).U32(1).U32(2).I32(1).I32(0).I32(0).F32(1.5f).F32(-2.f);  // (1, 2) float32
  b.U32(0);                                                         // ndim 0: none
  b.U32(1).U32(3).I32(1).I32(0).I32(4).I32(7).I32(8).I32(-9);       // (3,) int32
  b.U64(3).Str("x").Str("none").Str("y");
  NDArrayList list = ParseNDArrayList(b.str, "v0.params");
  EXPECT_EQ(list.record_versions, (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(list.names, (std::vector<std::string>{"x", "none", "y"}));
  EXPECT_EQ(list.arrays[0].shape(), Shape({1, 2}));
  EXPECT_EQ(list.arrays[0].ToFloatVector(), (std::vector<float>{1.5f, -2.f}));
  EXPECT_TRUE(list.arrays[1].is_none());
  EXPECT_EQ(list.arrays[2].dtype(), DType::kInt32);
  EXPECT_EQ(list.arrays[2].data<int32_t>()[2], -9);
}

TEST(ParamsTest, ReadsV1Records) {
  Bytes b;
  b.Header(2);
  b.U32(kV1).I32(2).I64(2).I64(1).I32(1).I32(0).I32(1);              // (2, 1) float64
  b.Raw(std::string("\0\0\0\0\0\0\xf0\x3f\0\0\0\0\0\0\0\xc0", 16));  // 1.0, -2.0
  b.U32(kV1).I32(0);                                                 // none
  b.U64(0);
  NDArrayList list = ParseNDArrayList(b.str, "v1.params");
  EXPECT_EQ(list.record_versions, (std::vector<int>{1, 1}));
  EXPECT_TRUE(list.names.empty());
  EXPECT_EQ(list.arrays[0].shape(), Shape({2, 1}));
  EXPECT_EQ(list.arrays[0].data<double>()[1], -2.0);
  EXPECT_TRUE(list.arrays[1].is_none());
}

TEST(ParamsTest, ReadsV3ScalarsAndNoneArrays) {
  Bytes b;
  b.Header(4);
  b.U32(kV3).I32(0).I32(0).I32(1).I32(0).I32(0).F32(4.5f);               // ndim 0: a scalar
  b.U32(kV3).I32(0).I32(-1);                                             // ndim -1: none
  b.U32(kV3).I32(0).I32(2).I64(3).I64(-1);                               // a dim -1: none
  b.U32(kV3).I32(0).I32(1).I64(2).I32(1).I32(0).I32(3).Raw("\x07\x08");  // (2,) uint8
  b.U64(0);
  NDArrayList list = ParseNDArrayList(b.str, "v3.params");
  EXPECT_EQ(list.record_versions, (std::vector<int>{3, 3, 3, 3}));
  EXPECT_EQ(list.arrays[0].shape().ndim(), 0u);
  EXPECT_EQ(list.arrays[0].data<float>()[0], 4.5f);
  EXPECT_TRUE(list.arrays[1].is_none());
  EXPECT_TRUE(list.arrays[2].is_none());
  EXPECT_EQ(list.arrays[3].data<uint8_t>()[1], 8);
}

TEST(ParamsTest, ReadsV2NoneAndNormalisesBools) {
  Bytes b;
  b.Header(2);
  b.U32(kV2).I32(0).I32(0);  // ndim 0: none
  b.V2({2}, 7).Raw("\x00\x05"s);
  b.U64(0);
  NDArrayList list = ParseNDArrayList(b.str, "v2.params");
  EXPECT_TRUE(list.arrays[0].is_none());
  EXPECT_EQ(static_cast<const uint8_t*>(list.arrays[1].raw_data())[1], 1);
}

TEST(ParamsTest, SparseRecordsAreUnsupported) {
  for (int32_t stype : {1, 2}) {
    Bytes b;
    b.Header(2).V2({1}, 0).F32(1.f);
    b.U32(kV2).I32(stype).I32(1).I64(4).I32(1).I64(3).I32(1).I32(0).I32(0);
    ExpectError(b.str, StatusCode::kUnsupported,
                {"array 1 of 2", stype == 1 ? "row_sparse" : "csr", "dense"});
  }
  Bytes b;
  b.Header(1).U32(kV2).I32(9).I32(1).I64(1).I32(1).I32(0).I32(0).F32(0);
  ExpectError(b.str, StatusCode::kFormatError, {"array 0 of 1", "storage type 9"});
}

TEST(ParamsTest, RejectsCorruptHeaders) {
  ExpectError(Hex("13010000 00000000 00000000 00000000 00000000 00000000"),
              StatusCode::kFormatError, {"0x113", "expected 0x112"});
  ExpectError("", StatusCode::kFormatError, {"truncated"});
  // N = 2^60 arrays in a file of a few bytes: rejected before anything is reserved.
  Bytes huge;
  huge.Header(uint64_t{1} << 60).U64(0);
  ExpectError(huge.str, StatusCode::kFormatError, {"1152921504606846976", "cannot fit"});
  Bytes names;
  names.Header(2).V2({1}, 0).F32(1).V2({1}, 0).F32(2).U64(1).Str("a");
  ExpectError(names.str, StatusCode::kFormatError, {"name count 1", "expected 0 or 2"});
  Bytes long_name;
  long_name.Header(1).V2({1}, 0).F32(1).U64(1).U64(uint64_t{1} << 62).Raw("abc");
  ExpectError(long_name.str, StatusCode::kFormatError, {"name of array 0", "truncated"});
}

TEST(ParamsTest, RejectsCorruptRecords) {
  Bytes ndim;
  ndim.Header(1).U32(kV2).I32(0).I32(0x7fffffff).I64(1);
  ExpectError(ndim.str, StatusCode::kFormatError, {"array 0 of 1", "ndim 2147483647"});
  Bytes v0_ndim;
  v0_ndim.Header(1).U32(0xF0000000).U32(1).U64(0);
  ExpectError(v0_ndim.str, StatusCode::kFormatError, {"array 0 of 1", "ndim 4026531840"});
  Bytes overflow;
  overflow.Header(1).V2({int64_t{1} << 62, int64_t{1} << 62}, 0).F32(0).U64(0);
  ExpectError(overflow.str, StatusCode::kFormatError, {"array 0 of 1", "needs more than"});
  Bytes too_big;
  too_big.Header(1).V2({1000}, 1).F32(0).U64(0);
  ExpectError(too_big.str, StatusCode::kFormatError, {"array 0 of 1", "float64"});
  Bytes negative;
  negative.Header(1).V2({2, -3}, 0).U64(0);
  ExpectError(negative.str, StatusCode::kFormatError, {"array 0 of 1", "negative"});
  Bytes v2_minus_one;
  v2_minus_one.Header(1).U32(kV2).I32(0).I32(-1).U64(0);
  ExpectError(v2_minus_one.str, StatusCode::kFormatError, {"ndim -1", "expected >= 0"});
  Bytes v3_minus_two;
  v3_minus_two.Header(1).U32(kV3).I32(0).I32(-2).U64(0);
  ExpectError(v3_minus_two.str, StatusCode::kFormatError, {"ndim -2", "or -1"});
  Bytes dtype;
  dtype.Header(2).V2({1}, 0).F32(0).V2({1}, 13).F32(0).U64(0);
  ExpectError(dtype.str, StatusCode::kFormatError, {"array 1 of 2", "type_flag 13", "0..12"});
}

TEST(ParamsTest, EveryTruncationIsAFormatError) {
  Bytes b;
  b.Header(5);
  b.U32(1).U32(2).I32(1).I32(0).I32(0).F32(1).F32(2);         // V0
  b.U32(kV1).I32(1).I64(1).I32(1).I32(0).I32(5).Raw("\x01");  // V1 int8
  b.V2({2, 1}, 2).Raw("\x00\x3c\x00\x40"s);                   // V2 float16
  b.U32(kV3).I32(0).I32(0).I32(1).I32(0).I32(6).I64(-5);      // V3 int64 scalar
  b.U32(kV2).I32(0).I32(0);                                   // V2 none
  b.U64(5).Str("v0").Str("v1").Str("v2").Str("v3").Str("none");
  NDArrayList full = ParseNDArrayList(b.str, "full.params");
  EXPECT_EQ(full.record_versions, (std::vector<int>{0, 1, 2, 3, 2}));
  for (size_t n = 0; n < b.str.size(); ++n) {
    Error e = ErrorOf([&] { ParseNDArrayList(b.str.substr(0, n), "cut.params"); });
    ASSERT_EQ(e.code(), StatusCode::kFormatError) << "cut at " << n << ": " << e.what();
    ASSERT_NE(std::string(e.what()).find("cut.params"), std::string::npos) << e.what();
  }
}

TEST(ParamsTest, SavesAndLoadsFiles) {
  std::string path = std::string(HN_TEST_TMPDIR) + "/params_test_roundtrip.params";
  NDArrayList list;
  list.arrays = {NDArray::Arange(0, 6).Reshape({2, 3})};
  list.names = {"arg:w"};
  SaveNDArrayList(path, list);
  NDArrayList back = LoadNDArrayList(path);
  EXPECT_EQ(back.names, list.names);
  EXPECT_TRUE(SameBytes(back.arrays[0], list.arrays[0]));
  std::remove(path.c_str());

  Error missing = ErrorOf([] { LoadNDArrayList("/nonexistent/dir/model.params"); });
  EXPECT_EQ(missing.code(), StatusCode::kIOError);
  EXPECT_NE(std::string(missing.what()).find("/nonexistent/dir/model.params"), std::string::npos);
  EXPECT_EQ(ErrorOf([&] { SaveNDArrayList("/nonexistent/dir/model.params", list); }).code(),
            StatusCode::kIOError);
}

// A pipe has no size: the loader reads it on in blocks (several here: the file is 3 MB).
TEST(ParamsTest, LoadsFromAPipe) {
  const std::string path = std::string(HN_TEST_TMPDIR) + "/params_test_pipe.params";
  std::remove(path.c_str());
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0) << std::strerror(errno);
  NDArrayList list;
  list.arrays = {NDArray::Arange(0, 750000).Reshape({1000, 750})};
  list.names = {"arg:w"};
  const std::string bytes = SerializeNDArrayList(list);
  std::thread writer([&] {
    FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) return;
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  });
  NDArrayList back = LoadNDArrayList(path);
  writer.join();
  std::remove(path.c_str());
  EXPECT_EQ(back.names, list.names);
  EXPECT_TRUE(SameBytes(back.arrays[0], list.arrays[0]));
}

// A directory, and a stream longer than the allocation limit (a device or pipe has no size),
// are errors naming the path, not an internal error or an unbounded read.
TEST(ParamsTest, DirectoriesAndEndlessStreamsAreErrors) {
  const std::string dir = std::string(HN_TEST_TMPDIR) + "/params_test_dir.params";
  std::filesystem::create_directories(dir);
  Error is_dir = ErrorOf([&] { LoadNDArrayList(dir); });
  EXPECT_EQ(is_dir.code(), StatusCode::kIOError);
  EXPECT_NE(std::string(is_dir.what()).find("is a directory"), std::string::npos) << is_dir.what();
  std::filesystem::remove(dir);

  const int64_t before = GetLimit(Limit::kMaxAllocationBytes);
  SetLimit(Limit::kMaxAllocationBytes, 4 << 20);
  Error endless = ErrorOf([] { LoadNDArrayList("/dev/zero"); });
  SetLimit(Limit::kMaxAllocationBytes, before);
  EXPECT_EQ(endless.code(), StatusCode::kOutOfMemory);
  EXPECT_NE(std::string(endless.what()).find("/dev/zero"), std::string::npos) << endless.what();
}

// Symbol files and .npy files are read the same bounded way.
TEST(ParamsTest, SymbolAndNpyFilesAreReadWithTheSameLimits) {
  const std::string dir = std::string(HN_TEST_TMPDIR) + "/params_test_dir-symbol.json";
  std::filesystem::create_directories(dir);
  for (auto load : {+[](const std::string& p) { Symbol::Load(p); },
                    +[](const std::string& p) { LoadNpy(p); }}) {
    Error is_dir = ErrorOf([&] { load(dir); });
    EXPECT_EQ(is_dir.code(), StatusCode::kIOError);
    EXPECT_NE(std::string(is_dir.what()).find("is a directory"), std::string::npos)
        << is_dir.what();
    const int64_t before = GetLimit(Limit::kMaxAllocationBytes);
    SetLimit(Limit::kMaxAllocationBytes, 4 << 20);
    Error endless = ErrorOf([&] { load("/dev/zero"); });
    SetLimit(Limit::kMaxAllocationBytes, before);
    EXPECT_EQ(endless.code(), StatusCode::kOutOfMemory) << endless.what();
  }
  std::filesystem::remove(dir);
}

}  // namespace
}  // namespace hybridnet
