#include "hybridnet/npy.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "common/test_util.h"
#include "hybridnet/limits.h"

namespace hybridnet {
namespace {

using namespace ::hybridnet::testing_util;  // NOLINT: the shared test helpers

using namespace std::string_literals;

void ExpectError(StatusCode code, const std::string& bytes, const std::string& needle) {
  Error e = ErrorOf([&] { ParseNpy(bytes, "probe.npy"); });
  EXPECT_EQ(e.code(), code) << e.what();
  std::string message = e.what();
  EXPECT_NE(message.find("probe.npy"), std::string::npos) << message;
  EXPECT_NE(message.find(needle), std::string::npos) << message;
}

// What numpy 1.x writes for a header dict that fits one 128-byte block: the magic, version 1.0,
// header length 118, the dict, space padding and '\n'.
std::string NumpyFile128(const std::string& dict, const std::string& data) {
  return std::string("\x93NUMPY\x01\x00v\x00", 10) + dict + std::string(117 - dict.size(), ' ') +
         "\n" + data;
}

// A file with the given version and header, the header padded like numpy's.
std::string MakeFile(int major, const std::string& dict, const std::string& data) {
  size_t length_size = major == 1 ? 2 : 4;
  size_t unpadded = 8 + length_size + dict.size() + 1;
  std::string header = dict + std::string(64 - unpadded % 64, ' ') + "\n";
  std::string out = std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0';
  for (size_t i = 0; i < length_size; ++i) {
    out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  }
  return out + header + data;
}

std::string Bytes(const void* data, size_t size) {
  return std::string(static_cast<const char*>(data), size);
}

TEST(NpyTest, ReadsAndWritesExactlyWhatNumpyWrites) {
  // np.save(f, np.arange(6, dtype=np.float32).reshape(2, 3))
  const float f32[6] = {0, 1, 2, 3, 4, 5};
  std::string numpy_f32 = NumpyFile128(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", Bytes(f32, sizeof(f32)));
  ASSERT_EQ(numpy_f32.size(), 152u);
  NDArray a = ParseNpy(numpy_f32, "a.npy");
  EXPECT_EQ(a.shape(), Shape({2, 3}));
  EXPECT_EQ(a.dtype(), DType::kFloat32);
  EXPECT_EQ(a.ToFloatVector(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(SerializeNpy(a), numpy_f32);

  // np.save(f, np.array([True, False, True]))
  std::string numpy_bool = NumpyFile128("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
                                        std::string("\x01\x00\x01", 3));
  NDArray b = ParseNpy(numpy_bool, "b.npy");
  EXPECT_EQ(b.dtype(), DType::kBool);
  EXPECT_EQ(b.ToFloatVector(), (std::vector<float>{1, 0, 1}));
  EXPECT_EQ(SerializeNpy(b), numpy_bool);

  // np.save(f, np.array(3.5)): a 0-d array
  const double scalar = 3.5;
  std::string numpy_scalar = NumpyFile128("{'descr': '<f8', 'fortran_order': False, 'shape': (), }",
                                          Bytes(&scalar, sizeof(scalar)));
  NDArray s = ParseNpy(numpy_scalar, "s.npy");
  EXPECT_EQ(s.shape().ndim(), 0u);
  EXPECT_EQ(s.data<double>()[0], 3.5);
  EXPECT_EQ(SerializeNpy(s), numpy_scalar);

  // np.save(f, np.array([0.5, -2], dtype=np.float16))
  std::string numpy_f16 = NumpyFile128("{'descr': '<f2', 'fortran_order': False, 'shape': (2,), }",
                                       "\x00\x38\x00\xc0"s);
  NDArray h = ParseNpy(numpy_f16, "h.npy");
  EXPECT_EQ(h.dtype(), DType::kFloat16);
  EXPECT_EQ(h.ToFloatVector(), (std::vector<float>{0.5f, -2.f}));
  EXPECT_EQ(SerializeNpy(h), numpy_f16);

  // np.save(f, np.zeros((0, 5), np.uint8))
  std::string numpy_empty =
      NumpyFile128("{'descr': '|u1', 'fortran_order': False, 'shape': (0, 5), }", "");
  NDArray e = ParseNpy(numpy_empty, "e.npy");
  EXPECT_EQ(e.shape(), Shape({0, 5}));
  EXPECT_EQ(SerializeNpy(e), numpy_empty);
}

TEST(NpyTest, PadsWithAFullBlockWhenTheHeaderEndsOnABoundary) {
  // np.save(f, np.zeros((10,) + (1,) * 20, np.uint8)): the dict is 117 bytes, so numpy adds 64
  // spaces rather than none and the data starts at byte 192.
  std::vector<int64_t> dims(21, 1);
  dims[0] = 10;
  std::string bytes = SerializeNpy(NDArray::Zeros(Shape(dims), DType::kUint8));
  ASSERT_EQ(bytes.size(), 202u);
  EXPECT_EQ(bytes.substr(6, 4), std::string("\x01\x00\xb6\x00", 4));
  EXPECT_EQ(bytes.substr(10, 117),
            "{'descr': '|u1', 'fortran_order': False, 'shape': (10, 1, 1, 1, 1, 1, 1, 1, 1, 1, "
            "1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), }");
  EXPECT_EQ(bytes.substr(127, 65), std::string(64, ' ') + "\n");
}

TEST(NpyTest, RoundTripsEveryNumpyDType) {
  const std::pair<DType, const char*> types[] = {
      {DType::kFloat32, "<f4"}, {DType::kFloat64, "<f8"}, {DType::kFloat16, "<f2"},
      {DType::kUint8, "|u1"},   {DType::kInt8, "|i1"},    {DType::kInt16, "<i2"},
      {DType::kUint16, "<u2"},  {DType::kInt32, "<i4"},   {DType::kUint32, "<u4"},
      {DType::kInt64, "<i8"},   {DType::kUint64, "<u8"},  {DType::kBool, "|b1"},
  };
  std::vector<double> values{0, 1, 2, 3, 4, 5};
  NDArray f64 = NDArray::FromBuffer({3, 2}, DType::kFloat64, values.data());
  for (const auto& [dtype, descr] : types) {
    SCOPED_TRACE(descr);
    NDArray a = f64.AsType(dtype);
    std::string bytes = SerializeNpy(a);
    EXPECT_EQ(bytes.size() % 64, a.nbytes() % 64);
    EXPECT_NE(bytes.find(std::string("'descr': '") + descr + "'"), std::string::npos);
    NDArray back = ParseNpy(bytes, "x.npy");
    EXPECT_EQ(back.dtype(), dtype);
    EXPECT_EQ(back.shape(), Shape({3, 2}));
    EXPECT_EQ(std::memcmp(back.raw_data(), a.raw_data(), a.nbytes()), 0);
  }
  Error e = ErrorOf([] { SerializeNpy(NDArray::Zeros({2}, DType::kBFloat16)); });
  EXPECT_EQ(e.code(), StatusCode::kUnsupported);
  EXPECT_NE(std::string(e.what()).find("bfloat16"), std::string::npos);
  EXPECT_EQ(ErrorOf([] { SerializeNpy(NDArray()); }).code(), StatusCode::kInvalidArgument);
}

TEST(NpyTest, WritesVersion2WhenTheHeaderDoesNotFitVersion1) {
  // Only a rank far above the default limit needs a header over 64 KiB.
  const int64_t default_rank = GetLimit(Limit::kMaxRank);
  SetLimit(Limit::kMaxRank, 22000);
  Shape shape(std::vector<int64_t>(22000, 1));
  NDArray a = NDArray::Full(shape, 7, DType::kInt32);
  std::string bytes = SerializeNpy(a);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x02\x00", 8));
  uint32_t header_size = 0;
  std::memcpy(&header_size, bytes.data() + 8, 4);
  EXPECT_GT(header_size, 65535u);
  EXPECT_EQ((12 + header_size) % 64, 0u);
  EXPECT_EQ(bytes[12 + header_size - 1], '\n');
  EXPECT_EQ(bytes.size(), 12 + header_size + 4);
  NDArray back = ParseNpy(bytes, "big.npy");
  EXPECT_EQ(back.shape(), shape);
  EXPECT_EQ(back.data<int32_t>()[0], 7);
  SetLimit(Limit::kMaxRank, default_rank);
}

TEST(NpyTest, ReadsVersions2And3AndOtherWritersSpelling) {
  const int32_t data[2] = {-4, 9};
  for (int major : {1, 2, 3}) {
    for (const char* dict : {"{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }",
                             "{\"shape\": (2L,), \"fortran_order\": False, \"descr\": \"<i4\"}",
                             "{ 'fortran_order' : False , 'descr' : '<i4' , 'shape' : ( 2 , ) }"}) {
      SCOPED_TRACE(std::to_string(major) + " " + dict);
      NDArray a = ParseNpy(MakeFile(major, dict, Bytes(data, sizeof(data))), "v.npy");
      EXPECT_EQ(a.shape(), Shape({2}));
      EXPECT_EQ(a.data<int32_t>()[1], 9);
    }
  }
}

TEST(NpyTest, NormalisesBoolBytes) {
  NDArray a = ParseNpy(MakeFile(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }",
                                std::string("\x02\x00", 2)),
                       "b.npy");
  EXPECT_EQ(static_cast<const uint8_t*>(a.raw_data())[0], 1);
}

TEST(NpyTest, RejectsUnsupportedLayouts) {
  const std::string f4 = std::string(8, '\0');
  ExpectError(StatusCode::kUnsupported,
              MakeFile(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", f4),
              "big-endian");
  ExpectError(StatusCode::kUnsupported,
              MakeFile(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", f4),
              "Fortran");
  ExpectError(StatusCode::kUnsupported,
              MakeFile(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", f4),
              "'<c8'");
  ExpectError(StatusCode::kUnsupported,
              MakeFile(1, "{'descr': '<U2', 'fortran_order': False, 'shape': (1,), }", f4),
              "'<U2'");
  ExpectError(StatusCode::kUnsupported,
              MakeFile(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", f4),
              "structured");
  // A single byte has no byte order: '>u1' reads fine.
  NDArray u8 =
      ParseNpy(MakeFile(1, "{'descr': '>u1', 'fortran_order': False, 'shape': (2,), }", "\x05\x06"),
               "u.npy");
  EXPECT_EQ(u8.data<uint8_t>()[1], 6);
}

TEST(NpyTest, RejectsMalformedFiles) {
  const std::string good_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  const std::string data(8, '\0');
  ExpectError(StatusCode::kFormatError, "PK\x03\x04 not npy", "magic");
  ExpectError(StatusCode::kFormatError, "", "magic");
  ExpectError(StatusCode::kFormatError, "\x93NUMPY\x04\x00\x10\x00"s, "version 4.0");
  ExpectError(StatusCode::kFormatError, "\x93NUMPY\x01\x00\x00\x01{'descr'"s, "header");
  ExpectError(StatusCode::kFormatError, MakeFile(1, good_dict, data.substr(0, 7)), "needs 8 bytes");
  ExpectError(StatusCode::kFormatError,
              MakeFile(1, "{'descr': '<f4', 'fortran_order': False, }", data), "'shape'");
  ExpectError(StatusCode::kFormatError,
              MakeFile(1, "{'fortran_order': False, 'shape': (2,), }", data), "'descr'");
  ExpectError(StatusCode::kFormatError, MakeFile(1, "{'descr': '<f4', 'shape': (2,), }", data),
              "'fortran_order'");
  ExpectError(StatusCode::kFormatError,
              MakeFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", data),
              "");
  ExpectError(StatusCode::kFormatError,
              MakeFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", data),
              "non-negative");
  ExpectError(StatusCode::kFormatError,
              MakeFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,) ", data), "'}'");
  ExpectError(StatusCode::kFormatError,
              MakeFile(1, "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }", data), "");
  // A shape whose product overflows must fail before anything is allocated.
  ExpectError(StatusCode::kFormatError,
              MakeFile(1,
                       "{'descr': '<f8', 'fortran_order': False, 'shape': (999999999999999999, "
                       "999999999999999999, 0), }",
                       data),
              "too many elements");
  ExpectError(StatusCode::kFormatError,
              MakeFile(1,
                       "{'descr': '<f8', 'fortran_order': False, 'shape': (999999999, "
                       "999999999), }",
                       data),
              "truncated");
  ExpectError(StatusCode::kFormatError,
              MakeFile(1,
                       "{'descr': '<f8', 'fortran_order': False, "
                       "'shape': (0, 99999999999999999999), }",
                       data),
              "dimension");
}

TEST(NpyTest, EveryTruncationIsAFormatError) {
  const float values[3] = {1, 2, 3};
  std::string bytes = SerializeNpy(NDArray::FromBuffer({3}, DType::kFloat32, values));
  for (size_t n = 0; n < bytes.size(); ++n) {
    Error e = ErrorOf([&] { ParseNpy(bytes.substr(0, n), "cut.npy"); });
    ASSERT_EQ(e.code(), StatusCode::kFormatError) << "cut at " << n << ": " << e.what();
  }
}

TEST(NpyTest, SavesAndLoadsFiles) {
  std::string path = std::string(HN_TEST_TMPDIR) + "/npy_test_roundtrip.npy";
  NDArray a = NDArray::Arange(0, 12, 1, DType::kInt16).Reshape({3, 4});
  SaveNpy(path, a);
  NDArray b = LoadNpy(path);
  EXPECT_EQ(b.shape(), Shape({3, 4}));
  EXPECT_EQ(b.data<int16_t>()[11], 11);
  std::remove(path.c_str());

  Error missing = ErrorOf([] { LoadNpy("/nonexistent/dir/x.npy"); });
  EXPECT_EQ(missing.code(), StatusCode::kIOError);
  EXPECT_NE(std::string(missing.what()).find("/nonexistent/dir/x.npy"), std::string::npos);
  EXPECT_EQ(ErrorOf([&] { SaveNpy("/nonexistent/dir/x.npy", a); }).code(), StatusCode::kIOError);
}

}  // namespace
}  // namespace hybridnet
