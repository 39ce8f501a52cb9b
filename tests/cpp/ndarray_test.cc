#include "hybridnet/ndarray.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <sstream>

#include "hybridnet/symbol.h"

namespace hybridnet {
namespace {

constexpr DType kAllDTypes[] = {
    DType::kFloat32, DType::kFloat64, DType::kFloat16,  DType::kUint8, DType::kInt32,
    DType::kInt8,    DType::kInt64,   DType::kBool,     DType::kInt16, DType::kUint16,
    DType::kUint32,  DType::kUint64,  DType::kBFloat16,
};

template <typename F>
StatusCode CodeOf(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  return StatusCode::kOk;
}

// An array of `dtype` holding `values`, converted from float64.
NDArray Make(const Shape& shape, const std::vector<double>& values, DType dtype) {
  return NDArray::FromBuffer(shape, DType::kFloat64, values.data()).AsType(dtype);
}

float Bits32ToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

TEST(NDArrayTest, ZerosOnesFullInEveryDType) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    NDArray z = NDArray::Zeros({2, 3}, dtype);
    EXPECT_EQ(z.shape(), Shape({2, 3}));
    EXPECT_EQ(z.dtype(), dtype);
    EXPECT_EQ(z.nbytes(), 6 * DTypeSize(dtype));
    EXPECT_EQ(z.ToFloatVector(), std::vector<float>(6, 0.f));
    EXPECT_EQ(NDArray::Ones({4}, dtype).ToFloatVector(), std::vector<float>(4, 1.f));
    float seven = dtype == DType::kBool ? 1.f : 7.f;
    EXPECT_EQ(NDArray::Full({1, 2}, 7, dtype).ToFloatVector(), std::vector<float>(2, seven));
  }
}

TEST(NDArrayTest, ArangeLikeNumpy) {
  EXPECT_EQ(NDArray::Arange(0, 5).ToFloatVector(), (std::vector<float>{0, 1, 2, 3, 4}));
  EXPECT_EQ(NDArray::Arange(1, 2, 0.25).ToFloatVector(), (std::vector<float>{1, 1.25, 1.5, 1.75}));
  EXPECT_EQ(NDArray::Arange(3, 0, -1).ToFloatVector(), (std::vector<float>{3, 2, 1}));
  EXPECT_EQ(NDArray::Arange(5, 0).size(), 0);
  NDArray ints = NDArray::Arange(0, 3, 1, DType::kInt64);
  EXPECT_EQ(ints.dtype(), DType::kInt64);
  EXPECT_EQ(ints.data<int64_t>()[2], 2);
  EXPECT_EQ(CodeOf([] { NDArray::Arange(0, 1, 0); }), StatusCode::kInvalidArgument);
}

TEST(NDArrayTest, FromVectorAndFromBufferCopy) {
  std::vector<float> values{1, 2, 3, 4, 5, 6};
  NDArray a = NDArray::FromVector({2, 3}, values);
  values[0] = 100;
  EXPECT_EQ(a.data<float>()[0], 1.f);
  EXPECT_EQ(CodeOf([&] { NDArray::FromVector({4}, values); }), StatusCode::kShapeError);

  int16_t raw[3] = {-1, 0, 300};
  NDArray b = NDArray::FromBuffer({3}, DType::kInt16, raw);
  raw[0] = 5;
  EXPECT_EQ(b.data<int16_t>()[0], -1);
  EXPECT_EQ(b.data<int16_t>()[2], 300);
}

TEST(NDArrayTest, WrapSharesCallerMemoryAndRunsTheDeleterOnce) {
  alignas(8) static float buffer[4] = {1, 2, 3, 4};
  int deleted = 0;
  {
    NDArray a = NDArray::Wrap({2, 2}, DType::kFloat32, buffer, [&](void* p) {
      EXPECT_EQ(p, buffer);
      ++deleted;
    });
    EXPECT_EQ(a.raw_data(), buffer);
    NDArray copy = a;
    NDArray view = a.Reshape({4});
    view.data<float>()[3] = 40;
    EXPECT_EQ(buffer[3], 40.f);
    a = NDArray();
    EXPECT_EQ(deleted, 0);
  }
  EXPECT_EQ(deleted, 1);
  // No deleter: the memory stays the caller's.
  { NDArray b = NDArray::Wrap({4}, DType::kFloat32, buffer, nullptr); }
  EXPECT_EQ(buffer[0], 1.f);
}

TEST(NDArrayTest, WrapRejectsBadArguments) {
  EXPECT_EQ(CodeOf([] { NDArray::Wrap({2}, DType::kFloat32, nullptr, nullptr); }),
            StatusCode::kInvalidArgument);
  alignas(8) static uint8_t bytes[16] = {};
  EXPECT_EQ(CodeOf([] { NDArray::Wrap({2}, DType::kFloat32, bytes + 1, nullptr); }),
            StatusCode::kInvalidArgument);
}

TEST(NDArrayTest, RandomIsReproducibleForASeed) {
  Seed(42);
  std::vector<float> normal = NDArray::RandomNormal({100}).ToFloatVector();
  std::vector<float> uniform = NDArray::RandomUniform({100}, -2.f, 3.f).ToFloatVector();
  Seed(42);
  EXPECT_EQ(NDArray::RandomNormal({100}).ToFloatVector(), normal);
  EXPECT_EQ(NDArray::RandomUniform({100}, -2.f, 3.f).ToFloatVector(), uniform);
  Seed(43);
  EXPECT_NE(NDArray::RandomNormal({100}).ToFloatVector(), normal);
  for (float v : uniform) {
    EXPECT_GE(v, -2.f);
    EXPECT_LT(v, 3.f);
  }
}

TEST(NDArrayTest, RandomNormalHasTheRequestedMoments) {
  Seed(7);
  std::vector<float> v = NDArray::RandomNormal({20000}, 5.f, 2.f).ToFloatVector();
  double sum = 0;
  double sum_sq = 0;
  for (float x : v) {
    sum += x;
    sum_sq += static_cast<double>(x) * x;
  }
  double mean = sum / static_cast<double>(v.size());
  double stddev = std::sqrt(sum_sq / static_cast<double>(v.size()) - mean * mean);
  EXPECT_NEAR(mean, 5.0, 0.05);
  EXPECT_NEAR(stddev, 2.0, 0.05);
  EXPECT_EQ(NDArray::RandomUniform({3}, 0.f, 1.f, DType::kFloat16).dtype(), DType::kFloat16);
}

TEST(NDArrayTest, ReshapeIsAViewOfTheSameStorage) {
  NDArray a = NDArray::Arange(0, 6);
  NDArray b = a.Reshape({2, 3});
  EXPECT_EQ(b.shape(), Shape({2, 3}));
  EXPECT_TRUE(b.SharesStorageWith(a));
  b.data<float>()[5] = 50;
  EXPECT_EQ(a.data<float>()[5], 50.f);
  EXPECT_FALSE(a.Copy().SharesStorageWith(a));
  EXPECT_EQ(CodeOf([&] { a.Reshape({4}); }), StatusCode::kShapeError);
  EXPECT_EQ(CodeOf([&] { a.Reshape({-2, -3}); }), StatusCode::kShapeError);
}

TEST(NDArrayTest, DataWithTheWrongTypeThrows) {
  NDArray a = NDArray::Zeros({2}, DType::kInt32);
  EXPECT_NE(a.data<int32_t>(), nullptr);
  EXPECT_EQ(CodeOf([&] { a.data<float>(); }), StatusCode::kTypeError);
  EXPECT_EQ(CodeOf([&] { a.data<uint32_t>(); }), StatusCode::kTypeError);
  const NDArray& c = a;
  EXPECT_EQ(CodeOf([&] { c.data<int64_t>(); }), StatusCode::kTypeError);
  EXPECT_EQ(CodeOf([] { NDArray().raw_data(); }), StatusCode::kInvalidArgument);
}

TEST(NDArrayTest, AsTypeAndCopyFromConvertBetweenEveryPair) {
  const std::vector<double> values{0, 1, 2, 5, 100};
  for (DType from : kAllDTypes) {
    for (DType to : kAllDTypes) {
      SCOPED_TRACE(std::string(DTypeName(from)) + " -> " + DTypeName(to));
      NDArray src = Make({5}, values, from);
      std::vector<float> expected{0, 1, 2, 5, 100};
      if (from == DType::kBool || to == DType::kBool) expected = {0, 1, 1, 1, 1};
      NDArray converted = src.AsType(to);
      EXPECT_EQ(converted.dtype(), to);
      EXPECT_FALSE(converted.SharesStorageWith(src));
      EXPECT_EQ(converted.ToFloatVector(), expected);
      NDArray dst = NDArray::Zeros({5}, to);
      dst.CopyFrom(src);
      EXPECT_EQ(dst.ToFloatVector(), expected);
    }
  }
  NDArray dst = NDArray::Zeros({4});
  EXPECT_EQ(CodeOf([&] { dst.CopyFrom(NDArray::Zeros({2, 2})); }), StatusCode::kShapeError);
}

TEST(NDArrayTest, ConversionsTruncateAndWrapLikeC) {
  EXPECT_EQ(Make({3}, {-1.75, 2.5, 3.99}, DType::kInt32).ToFloatVector(),
            (std::vector<float>{-1, 2, 3}));
  EXPECT_EQ(Make({2}, {0.25, -0.5}, DType::kBool).ToFloatVector(), (std::vector<float>{1, 1}));
  NDArray big = NDArray::Full({1}, 300, DType::kInt32).AsType(DType::kUint8);
  EXPECT_EQ(big.data<uint8_t>()[0], 44);
}

TEST(NDArrayTest, HalfRoundTripsEveryValue) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    auto h = static_cast<uint16_t>(bits);
    float f = HalfToFloat(h);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(f))));
    } else {
      ASSERT_EQ(FloatToHalf(f), h) << "half bits " << bits;
    }
  }
}

TEST(NDArrayTest, HalfRoundsToNearestEven) {
  EXPECT_EQ(FloatToHalf(1.f), 0x3c00);
  EXPECT_EQ(FloatToHalf(1.f + std::ldexp(1.f, -11)), 0x3c00);      // tie, even stays
  EXPECT_EQ(FloatToHalf(1.f + 3 * std::ldexp(1.f, -11)), 0x3c02);  // tie, odd goes up
  EXPECT_EQ(FloatToHalf(65504.f), 0x7bff);
  EXPECT_EQ(FloatToHalf(65519.f), 0x7bff);
  EXPECT_EQ(FloatToHalf(65520.f), 0x7c00);  // overflows to infinity
  EXPECT_EQ(FloatToHalf(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_EQ(FloatToHalf(std::ldexp(1.f, -14)), 0x0400);     // smallest normal
  EXPECT_EQ(FloatToHalf(std::ldexp(1.f, -24)), 0x0001);     // smallest subnormal
  EXPECT_EQ(FloatToHalf(std::ldexp(1.f, -25)), 0x0000);     // tie to even zero
  EXPECT_EQ(FloatToHalf(std::ldexp(3.f, -26)), 0x0001);     // above the tie
  EXPECT_EQ(FloatToHalf(std::ldexp(3.f, -25)), 0x0002);     // tie, odd goes up
  EXPECT_EQ(FloatToHalf(std::ldexp(1023.f, -24)), 0x03ff);  // largest subnormal
  EXPECT_EQ(FloatToHalf(std::ldexp(2047.f, -25)), 0x0400);  // rounds up to a normal
  EXPECT_EQ(FloatToHalf(-std::ldexp(5.f, -24)), 0x8005);
  EXPECT_EQ(FloatToHalf(std::ldexp(1.f, -26)), 0x0000);
  EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(std::nanf("")))));
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.f, -24));
  EXPECT_EQ(HalfToFloat(0xc000), -2.f);
}

TEST(NDArrayTest, BFloat16RoundTripsAndRoundsToNearestEven) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    auto b = static_cast<uint16_t>(bits);
    float f = BFloat16ToFloat(b);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(BFloat16ToFloat(FloatToBFloat16(f))));
    } else {
      ASSERT_EQ(FloatToBFloat16(f), b) << "bfloat16 bits " << bits;
    }
  }
  EXPECT_EQ(FloatToBFloat16(1.f + std::ldexp(1.f, -8)), 0x3f80);      // tie, even stays
  EXPECT_EQ(FloatToBFloat16(1.f + 3 * std::ldexp(1.f, -8)), 0x3f82);  // tie, odd goes up
  EXPECT_EQ(FloatToBFloat16(Bits32ToFloat(0x3f80c000)), 0x3f81);      // above the tie
  EXPECT_EQ(FloatToBFloat16(Bits32ToFloat(0x7f7fffff)), 0x7f80);      // overflows to infinity
}

TEST(NDArrayTest, Float16AndBFloat16ArraysRoundTripThroughFloat32) {
  std::vector<float> values{0.1f, -2.5f, 1000.f, 6.1e-5f, 3.0e38f, 0.f};
  NDArray f32 = NDArray::FromVector({6}, values);
  NDArray half = f32.AsType(DType::kFloat16);
  NDArray bf16 = f32.AsType(DType::kBFloat16);
  // Both are stored as raw 16-bit patterns, which data<T>() does not expose.
  const auto* half_bits = static_cast<const uint16_t*>(half.raw_data());
  const auto* bf16_bits = static_cast<const uint16_t*>(bf16.raw_data());
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(half_bits[i], FloatToHalf(values[i]));
    EXPECT_EQ(bf16_bits[i], FloatToBFloat16(values[i]));
  }
  // A second conversion through float32 changes nothing.
  EXPECT_EQ(std::memcmp(half.AsType(DType::kFloat32).AsType(DType::kFloat16).raw_data(),
                        half.raw_data(), half.nbytes()),
            0);
  EXPECT_EQ(std::memcmp(bf16.AsType(DType::kFloat64).AsType(DType::kBFloat16).raw_data(),
                        bf16.raw_data(), bf16.nbytes()),
            0);
  EXPECT_EQ(half.AsType(DType::kBFloat16).ToFloatVector()[1], -2.5f);
}

// Expected strings are what MXNet 1.9.1 (numpy 1.23) prints for the same arrays.
TEST(NDArrayPrintTest, SmallFloatArrays) {
  EXPECT_EQ(NDArray::FromVector({2, 3}, {1, 2, 3, 4, 5, 6}).ToString(),
            "\n[[1. 2. 3.]\n [4. 5. 6.]]\n<NDArray 2x3 @cpu(0)>");
  EXPECT_EQ(NDArray::FromVector({1, 3}, {0.03664961f, 0.f, 0.01281041f}).ToString(),
            "\n[[0.03664961 0.         0.01281041]]\n<NDArray 1x3 @cpu(0)>");
  EXPECT_EQ(NDArray::FromVector({3}, {-1.5f, 0.25f, 100.f}).ToString(),
            "\n[ -1.5    0.25 100.  ]\n<NDArray 3 @cpu(0)>");
  EXPECT_EQ(NDArray::FromVector({2}, {-0.f, 0.f}).ToString(), "\n[-0.  0.]\n<NDArray 2 @cpu(0)>");
  EXPECT_EQ(Make({2}, {0.1, 2}, DType::kFloat64).ToString(), "\n[0.1 2. ]\n<NDArray 2 @cpu(0)>");
  std::ostringstream os;
  os << NDArray::Zeros({2});
  EXPECT_EQ(os.str(), "\n[0. 0.]\n<NDArray 2 @cpu(0)>");
}

TEST(NDArrayPrintTest, ScientificNotationWhenNumpyUsesIt) {
  EXPECT_EQ(NDArray::FromVector({2}, {1e-5f, 1.23456e-5f}).ToString(),
            "\n[1.00000e-05 1.23456e-05]\n<NDArray 2 @cpu(0)>");
  // A ratio above 1000 between the largest and smallest magnitudes also switches.
  EXPECT_EQ(NDArray::FromVector({2}, {1.f, 1001.f}).ToString(),
            "\n[1.000e+00 1.001e+03]\n<NDArray 2 @cpu(0)>");
  EXPECT_EQ(NDArray::FromVector({2}, {1e8f, -1.f}).ToString(),
            "\n[ 1.e+08 -1.e+00]\n<NDArray 2 @cpu(0)>");
}

TEST(NDArrayPrintTest, NonFiniteValues) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(NDArray::FromVector({4}, {std::nanf(""), inf, -inf, 1.5f}).ToString(),
            "\n[ nan  inf -inf  1.5]\n<NDArray 4 @cpu(0)>");
}

TEST(NDArrayPrintTest, NestedBracketsAndBlankLinesBetweenBlocks) {
  EXPECT_EQ(NDArray::Arange(0, 30).Reshape({2, 3, 5}).ToString(),
            "\n[[[ 0.  1.  2.  3.  4.]\n  [ 5.  6.  7.  8.  9.]\n  [10. 11. 12. 13. 14.]]\n\n"
            " [[15. 16. 17. 18. 19.]\n  [20. 21. 22. 23. 24.]\n  [25. 26. 27. 28. 29.]]]\n"
            "<NDArray 2x3x5 @cpu(0)>");
  EXPECT_EQ(NDArray::Arange(0, 30, 1, DType::kInt32).Reshape({2, 3, 5}).ToString(),
            "\n[[[ 0  1  2  3  4]\n  [ 5  6  7  8  9]\n  [10 11 12 13 14]]\n\n"
            " [[15 16 17 18 19]\n  [20 21 22 23 24]\n  [25 26 27 28 29]]]\n"
            "<NDArray 2x3x5 @cpu(0)>");
}

TEST(NDArrayPrintTest, LongRowsWrapAt75Columns) {
  NDArray a = NDArray::Arange(1, 21, 1, DType::kFloat64);
  for (int i = 0; i < 20; ++i) a.data<double>()[i] /= 7;
  EXPECT_EQ(a.ToString(),
            "\n[0.14285714 0.28571429 0.42857143 0.57142857 0.71428571 0.85714286\n"
            " 1.         1.14285714 1.28571429 1.42857143 1.57142857 1.71428571\n"
            " 1.85714286 2.         2.14285714 2.28571429 2.42857143 2.57142857\n"
            " 2.71428571 2.85714286]\n<NDArray 20 @cpu(0)>");
}

TEST(NDArrayPrintTest, ArraysOver1000ElementsAreSummarized) {
  EXPECT_EQ(NDArray::Arange(0, 1000).ToString().find("..."), std::string::npos);
  EXPECT_EQ(NDArray::Arange(0, 1001).ToString(),
            "\n[   0.    1.    2. ...  998.  999. 1000.]\n<NDArray 1001 @cpu(0)>");
  EXPECT_EQ(NDArray::Arange(0, 2000, 1, DType::kInt64).Reshape({40, 50}).ToString(),
            "\n[[   0    1    2 ...   47   48   49]\n [  50   51   52 ...   97   98   99]\n"
            " [ 100  101  102 ...  147  148  149]\n ...\n [1850 1851 1852 ... 1897 1898 1899]\n"
            " [1900 1901 1902 ... 1947 1948 1949]\n [1950 1951 1952 ... 1997 1998 1999]]\n"
            "<NDArray 40x50 @cpu(0)>");
  std::string cube = NDArray::Arange(0, 3000, 1, DType::kInt16).Reshape({10, 10, 30}).ToString();
  const std::string head =
      "\n[[[   0    1    2 ...   27   28   29]\n  [  30   31   32 ...   57   58   59]\n"
      "  [  60   61   62 ...   87   88   89]\n  ...\n  [ 210  211  212 ...  237  238  239]\n";
  const std::string middle =
      "  [ 870  871  872 ...  897  898  899]]\n\n ...\n\n [[2100 2101 2102 ... 2127 2128 2129]\n";
  const std::string tail = "  [2970 2971 2972 ... 2997 2998 2999]]]\n<NDArray 10x10x30 @cpu(0)>";
  EXPECT_EQ(cube.substr(0, head.size()), head);
  EXPECT_NE(cube.find(middle), std::string::npos);
  EXPECT_EQ(cube.substr(cube.size() - tail.size()), tail);
}

TEST(NDArrayPrintTest, IntegerAndBoolDTypes) {
  EXPECT_EQ(Make({2}, {1, -2}, DType::kInt64).ToString(), "\n[ 1 -2]\n<NDArray 2 @cpu(0)>");
  EXPECT_EQ(Make({3}, {1, 2, 255}, DType::kUint8).ToString(),
            "\n[  1   2 255]\n<NDArray 3 @cpu(0)>");
  EXPECT_EQ(Make({2}, {1, 0}, DType::kBool).ToString(), "\n[ True False]\n<NDArray 2 @cpu(0)>");
  uint64_t big[2] = {std::numeric_limits<uint64_t>::max(), 0};
  EXPECT_EQ(NDArray::FromBuffer({2}, DType::kUint64, big).ToString(),
            "\n[18446744073709551615                    0]\n<NDArray 2 @cpu(0)>");
}

TEST(NDArrayPrintTest, HalfPrecisionUsesItsOwnShortestDigits) {
  EXPECT_EQ(Make({3}, {0.1, 0.2, 1.0 / 3}, DType::kFloat16).ToString(),
            "\n[0.1    0.2    0.3333]\n<NDArray 3 @cpu(0)>");
  // MXNet shows bfloat16 as raw structs; we print the values like the other float types.
  EXPECT_EQ(Make({3}, {1, 2.5, 0.1}, DType::kBFloat16).ToString(),
            "\n[1.  2.5 0.1]\n<NDArray 3 @cpu(0)>");
}

TEST(NDArrayPrintTest, ScalarsEmptyNoneAndSymbolic) {
  EXPECT_EQ(NDArray::Full(Shape{}, 3.5).ToString(), "\n3.5\n<NDArray  @cpu(0)>");
  EXPECT_EQ(NDArray::Full(Shape{}, 1e20, DType::kFloat64).ToString(),
            "\n1e+20\n<NDArray  @cpu(0)>");
  EXPECT_EQ(NDArray::Zeros({0}).ToString(), "\n[]\n<NDArray 0 @cpu(0)>");
  EXPECT_EQ(NDArray::Zeros({2, 0}).ToString(), "\n[]\n<NDArray 2x0 @cpu(0)>");
  EXPECT_EQ(NDArray().ToString(), "<NDArray none @cpu(0)>");
  auto node = std::make_shared<Node>();
  node->attrs.name = "fc1_weight";
  EXPECT_EQ(NDArray::FromEntry(NodeEntry{node, 0, 0}).ToString(), "<Symbol fc1_weight>");
}

}  // namespace
}  // namespace hybridnet
