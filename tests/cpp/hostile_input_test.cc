// Inputs the fuzzers and a review of the loaders turned up: each used to crash, hang, allocate
// without bound or hit undefined behaviour, and now gets a clear error (or the right answer).
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "hybridnet/io/json.h"
#include "hybridnet/limits.h"
#include "hybridnet/ndarray.h"
#include "hybridnet/shape.h"
#include "hybridnet/symbol.h"

namespace hybridnet {
namespace {

// Expects `fn` to throw an Error with `code` whose message contains `text`.
template <typename Fn>
void ExpectError(Fn fn, StatusCode code, const std::string& text) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected one containing: " << text;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

// An MXNet 0.8 file (no mxnet_version) of `op` with `param` applied to one variable.
std::string OldFormatJSON(const std::string& op, const std::string& param) {
  return "{\"nodes\": [{\"op\": \"null\", \"param\": {}, \"name\": \"data\", \"inputs\": []}, "
         "{\"op\": \"" +
         op + "\", \"param\": {" + param +
         "}, \"name\": \"n\", \"inputs\": [[0, 0]]}], \"arg_nodes\": [0], \"heads\": [[1, 0]]}";
}

TEST(HostileInputTest, EmptyArraysReadBackWithoutTouchingNullStorage) {
  // Under UBSan a memcpy to the empty vector's NULL data used to abort (fuzz: params, npy).
  EXPECT_TRUE(NDArray::Zeros({0, 4}).ToFloatVector().empty());
  EXPECT_EQ(NDArray::Zeros({3, 0}, DType::kFloat16).AsType(DType::kFloat32).size(), 0);
}

TEST(HostileInputTest, TupleIntegersBeyond64BitsAreAClearError) {
  // std::stoll's std::out_of_range used to escape as a non-hybridnet exception.
  ExpectError([] { ParseIntTuple("(2, 99999999999999999999)"); }, StatusCode::kInvalidArgument,
              "integer 99999999999999999999 does not fit in 64 bits");
  ExpectError([] { ParseShape("(-99999999999999999999,)"); }, StatusCode::kInvalidArgument,
              "does not fit in 64 bits");
}

TEST(HostileInputTest, DeeplyNestedVersionValueIsReportedWithoutRecursion) {
  // The message used to dump() the value: one stack frame per nesting level.
  const size_t depth = 1000000;
  std::string json =
      "{\"nodes\": [], \"arg_nodes\": [], \"heads\": [], "
      "\"attrs\": {\"mxnet_version\": [\"int\", " +
      std::string(depth, '[') + std::string(depth, ']') + "]}}";
  ExpectError([&] { LoadJSON(json, "nested.json"); }, StatusCode::kFormatError,
              "nested.json: attrs.mxnet_version: expected [\"int\", <version>], found [\"int\", "
              "array]");
}

TEST(HostileInputTest, OldFormatInputSynthesisStaysWithinTheNodeLimit) {
  // Upgrading a 0.8 file adds a variable per missing input: num_args used to make billions.
  ExpectError([] { LoadJSON(OldFormatJSON("Concat", "\"num_args\": \"2000000000\""), "c.json"); },
              StatusCode::kFormatError,
              "c.json: node 1 ('n') has 2000000000 inputs, more than a graph may have nodes "
              "(HN_LIMIT_MAX_NODES = 4194304");
  EXPECT_EQ(LoadJSON(OldFormatJSON("BatchNorm", "")).ListInputs().size(), 5u);
  SetLimit(Limit::kMaxNodes, 5);
  ExpectError([] { LoadJSON(OldFormatJSON("BatchNorm", ""), "bn.json"); }, StatusCode::kFormatError,
              "bn.json: adding the missing inputs of old-format nodes makes more than 5 nodes "
              "(HN_LIMIT_MAX_NODES = 5");
  SetLimit(Limit::kMaxNodes, DescribeLimit(Limit::kMaxNodes).default_value);
}

TEST(HostileInputTest, ArangeAndFullCheckTheLimitsBeforeStaging) {
  // A NaN or huge length used to reach an undefined double -> int64 conversion and a staging
  // vector of that size before the tensor limit was checked.
  ExpectError([] { NDArray::Arange(0, 1e30); }, StatusCode::kInvalidArgument,
              "arange(0, 1e+30, 1) has too many elements (HN_LIMIT_MAX_TENSOR_ELEMENTS");
  ExpectError([] { NDArray::Arange(0, 1, std::numeric_limits<double>::quiet_NaN()); },
              StatusCode::kInvalidArgument, "too many elements");
  EXPECT_EQ(NDArray::Arange(0, 3).ToFloatVector(), (std::vector<float>{0, 1, 2}));
  SetLimit(Limit::kMaxTensorElements, 100);
  ExpectError([] { NDArray::Full({101}, 1.0); }, StatusCode::kOutOfMemory,
              "(HN_LIMIT_MAX_TENSOR_ELEMENTS = 100");
  SetLimit(Limit::kMaxTensorElements, DescribeLimit(Limit::kMaxTensorElements).default_value);
}

}  // namespace
}  // namespace hybridnet
