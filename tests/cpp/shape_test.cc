#include "hybridnet/shape.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "hybridnet/base.h"
#include "hybridnet/param.h"

namespace hybridnet {
namespace {

TEST(ShapeTest, PrintsLikePythonTuples) {
  EXPECT_EQ(Shape({1, 512}).ToString(), "(1, 512)");
  EXPECT_EQ(Shape({10}).ToString(), "(10,)");
  EXPECT_EQ(Shape().ToString(), "()");
  EXPECT_EQ(Shape({1, 2}).ToShortString(), "1x2");
}

TEST(ShapeTest, KnownAndSize) {
  EXPECT_TRUE(Shape({2, 3}).IsKnown());
  EXPECT_FALSE(Shape({256, 0}).IsKnown());
  EXPECT_FALSE(Shape().IsKnown());
  EXPECT_EQ(Shape({2, 3, 4}).Size(), 24);
}

// Up to Shape::kInlineDims dimensions live in the object, more on the heap; copies, moves and
// assignments between the two keep the dimensions.
TEST(ShapeTest, KeepsDimensionsInlineAndOnTheHeap) {
  const Shape small({2, 3, 4});
  const Shape big({1, 2, 3, 4, 5, 6, 7, 8});
  ASSERT_GT(big.ndim(), Shape::kInlineDims);
  EXPECT_EQ(big.Size(), 40320);
  EXPECT_EQ(big.ToString(), "(1, 2, 3, 4, 5, 6, 7, 8)");
  EXPECT_EQ(big.dims(), (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8}));
  Shape s = big;
  EXPECT_EQ(s, big);
  EXPECT_NE(s.begin(), big.begin());  // a copy, not shared
  s[7] = 9;
  EXPECT_EQ(big[7], 8);
  s = small;
  EXPECT_EQ(s, small);
  EXPECT_NE(s, big);
  s = big;
  EXPECT_EQ(s, big);
  Shape moved = std::move(s);
  EXPECT_EQ(moved, big);
  Shape moved_small = Shape({5, 6});
  EXPECT_EQ(moved_small, Shape({5, 6}));
  moved_small = std::move(moved);
  EXPECT_EQ(moved_small, big);
  const std::vector<int> from_ints{4, 3, 2, 1, 0, 1, 2};
  EXPECT_EQ(Shape(from_ints.begin(), from_ints.end()).ToString(), "(4, 3, 2, 1, 0, 1, 2)");
  EXPECT_EQ(Shape(std::vector<int64_t>{}), Shape());
  EXPECT_NE(Shape({1}), Shape({1, 1}));
}

// Attribute texts of numbers: the shortest %g text that reads back to the same value.
TEST(ShapeTest, WritesNumbersAsTheShortestTextThatReadsBack) {
  EXPECT_EQ(internal::ValueText(0.1), "0.1");
  EXPECT_EQ(internal::ValueText(0.1f), "0.1");
  EXPECT_EQ(internal::ValueText(static_cast<double>(0.1f)), "0.10000000149011612");
  EXPECT_EQ(internal::ValueText(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(internal::ValueText(1.0f / 3), "0.33333334");
  EXPECT_EQ(internal::ValueText(1e-5), "1e-05");
  EXPECT_EQ(internal::ValueText(0.0001), "0.0001");
  EXPECT_EQ(internal::ValueText(256.0), "256.0");
  EXPECT_EQ(internal::ValueText(123456.0), "123456.0");
  EXPECT_EQ(internal::ValueText(1e5), "1e+05");
  EXPECT_EQ(internal::ValueText(-0.0), "-0.0");
  EXPECT_EQ(internal::ValueText(5e-324), "5e-324");
  EXPECT_EQ(internal::ValueText(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(internal::ValueText(-std::numeric_limits<float>::infinity()), "-inf");
  EXPECT_EQ(internal::ValueText(std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(internal::ValueText(-std::numeric_limits<double>::quiet_NaN()), "nan");
}

// Texts are remembered by value (optimizers write the same ones at every step): a thousand values,
// many more than are remembered, written again in the other order give the same texts, each
// reading back to its value.
TEST(ShapeTest, WritesEachNumberTheSameTextAgain) {
  std::vector<float> floats;
  std::vector<double> doubles;
  for (int i = 1; i <= 1000; ++i) {
    floats.push_back(static_cast<float>(i) * 0.001f);
    doubles.push_back(1.0 / i);
  }
  std::vector<std::string> float_texts, double_texts;
  for (size_t i = 0; i < floats.size(); ++i) {
    float_texts.push_back(internal::ValueText(floats[i]));
    double_texts.push_back(internal::ValueText(doubles[i]));
  }
  for (size_t k = floats.size(); k-- > 0;) {
    EXPECT_EQ(internal::ValueText(floats[k]), float_texts[k]);
    EXPECT_EQ(internal::ValueText(doubles[k]), double_texts[k]);
    EXPECT_EQ(std::strtof(float_texts[k].c_str(), nullptr), floats[k]) << float_texts[k];
    EXPECT_EQ(std::strtod(double_texts[k].c_str(), nullptr), doubles[k]) << double_texts[k];
  }
}

TEST(ShapeTest, ParsesEveryMXNetTupleSpelling) {
  EXPECT_EQ(ParseIntTuple("(3, 3)"), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(ParseIntTuple("(7,7)"), (std::vector<int64_t>{7, 7}));
  EXPECT_EQ(ParseIntTuple("[3, 3]"), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(ParseIntTuple("(3,)"), (std::vector<int64_t>{3}));
  EXPECT_EQ(ParseIntTuple("()"), (std::vector<int64_t>{}));
  EXPECT_EQ(ParseIntTuple("3"), (std::vector<int64_t>{3}));
  EXPECT_EQ(ParseIntTuple("(2L, 3L)"), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(ParseIntTuple("(-1, 0, -4)"), (std::vector<int64_t>{-1, 0, -4}));
  EXPECT_EQ(ParseShape("None").ndim(), 0u);
}

TEST(ShapeTest, RejectsMalformedTuples) {
  for (const char* bad : {"", "(", "(3, 3", "(3 3)", "(a)", "3.5", "(3,,)", "(3) x"}) {
    try {
      ParseIntTuple(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("tuple of integers"), std::string::npos);
    }
  }
}

// MXNet's "tuple of <float>" attributes (MultiBoxPrior sizes, box variances, image mean/std).
TEST(ShapeTest, ParsesFloatTuples) {
  auto parse = [](const std::string& text) {
    std::vector<float> v;
    internal::ParseValue(text, &v);
    return v;
  };
  EXPECT_EQ(parse("(0.1, 0.1, 0.2, 0.2)"), (std::vector<float>{0.1f, 0.1f, 0.2f, 0.2f}));
  EXPECT_EQ(parse("[0.5,1,2]"), (std::vector<float>{0.5f, 1.f, 2.f}));
  EXPECT_EQ(parse("(1e-2,)"), (std::vector<float>{0.01f}));
  EXPECT_EQ(parse(" ( -1 , -1 ) "), (std::vector<float>{-1.f, -1.f}));
  EXPECT_EQ(parse("()"), (std::vector<float>{}));
  EXPECT_EQ(parse("0.75"), (std::vector<float>{0.75f}));
  EXPECT_EQ(internal::ValueText(std::vector<float>{0.1f, 0.2f}), "(0.1, 0.2)");
  EXPECT_EQ(internal::ValueText(std::vector<float>{1.f}), "(1.0,)");
  for (const char* bad : {"", "(", "(1, 2", "(1 2)", "(a)", "(1,,)", "(1) x", "[1, 2)", "x"}) {
    std::vector<float> v;
    EXPECT_THROW(internal::ParseValue(bad, &v), std::invalid_argument)
        << "accepted '" << bad << "'";
  }
}

TEST(ShapeTest, MergeFillsUnknownDims) {
  Shape target({256, 0});
  EXPECT_TRUE(MergeShape(Shape({256, 512}), &target));
  EXPECT_EQ(target, Shape({256, 512}));
  EXPECT_FALSE(MergeShape(Shape({128, 512}), &target));
  Shape unknown;
  EXPECT_TRUE(MergeShape(Shape({4}), &unknown));
  EXPECT_EQ(unknown, Shape({4}));
  EXPECT_FALSE(MergeShape(Shape({4, 1}), &unknown));
}

}  // namespace
}  // namespace hybridnet
