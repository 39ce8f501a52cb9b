// What one-op conformance cases cannot show: errors that depend on the values of the inputs
// (out-of-range indices, matrices that cannot be factorised), and the random ops' seeding
// (draws repeat after Seed, differ between calls and between nodes, agree eager and in a graph).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "hybridnet/executor.h"
#include "hybridnet/imperative.h"
#include "hybridnet/ndarray.h"
#include "hybridnet/symbol.h"

namespace hybridnet {
namespace {

NDArray Values(const Shape& s, const std::vector<float>& v) { return NDArray::FromVector(s, v); }

// Invoking op must raise kInvalidArgument with every needle in the message.
void ExpectRejected(const std::string& op, const std::vector<NDArray>& inputs,
                    const AttrDict& attrs, const std::vector<std::string>& needles) {
  try {
    Invoke(op, inputs, attrs, "node");
    ADD_FAILURE() << op << ": no error raised";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kInvalidArgument) << e.what();
    for (const auto& n : needles)
      EXPECT_NE(std::string(e.what()).find(n), std::string::npos)
          << "'" << e.what() << "' does not mention '" << n << "'";
  }
}

bool Same(const NDArray& a, const NDArray& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

TEST(IndexValues, TakeRaiseRejectsIndicesOutsideTheAxis) {
  const NDArray a = NDArray::Ones({3, 2});
  ExpectRejected("take", {a, Values({2}, {0, 3})}, {{"mode", "raise"}},
                 {"take(node)", "index 3", "length 3", "raise"});
  ExpectRejected("take", {a, Values({1}, {-1})}, {{"mode", "raise"}}, {"index -1"});
  // MXNet compares the float index with the last position: 2.5 > 2 is out of range.
  ExpectRejected("take", {a, Values({1}, {2.5f})}, {{"mode", "raise"}}, {"index 2.5"});
  EXPECT_NO_THROW(Invoke("take", {a, Values({2}, {2.f, 0.f})}, {{"mode", "raise"}}));
}

TEST(IndexValues, GatherNDRejectsIndicesOutOfBounds) {
  const NDArray data = NDArray::Ones({3, 2});
  ExpectRejected("gather_nd", {data, Values({1, 2}, {0, 3})}, {},
                 {"gather_nd(node)", "index 3", "axis 0"});
  ExpectRejected("gather_nd", {data, Values({1, 1}, {-4})}, {}, {"index -4"});
  EXPECT_NO_THROW(Invoke("gather_nd", {data, Values({1, 2}, {-3, 2})}));
}

TEST(IndexValues, ScatterWritesNothingOutsideTheOutput) {
  const NDArray data = Values({2}, {1, 2});
  ExpectRejected("scatter_nd", {data, Values({1, 2}, {0, 4})}, {{"shape", "(4,)"}},
                 {"scatter_nd(node)", "index 4", "outside"});
  ExpectRejected("scatter_nd", {data, Values({1, 2}, {-1, 0})}, {{"shape", "(4,)"}}, {"index -1"});
  ExpectRejected("_contrib_index_copy",
                 {NDArray::Zeros({3, 2}), Values({1}, {3}), NDArray::Ones({1, 2})}, {},
                 {"_contrib_index_copy(node)", "index 3", "3 rows"});
}

TEST(IndexValues, ScatterRepeatedIndicesKeepTheLastWrite) {
  const NDArray out = Invoke("scatter_nd", {Values({3}, {1, 2, 3}), Values({1, 3}, {1, 1, 0})},
                             {{"shape", "(2,)"}})[0];
  EXPECT_EQ(out.ToFloatVector(), (std::vector<float>{3, 2}));
}

TEST(LinalgValues, FactorisationsNameTheFailingMatrix) {
  // The second matrix of the batch is not positive definite.
  const NDArray batch = Values({2, 2, 2}, {2, 1, 1, 2, 1, 2, 2, 1});
  ExpectRejected("_linalg_potrf", {batch}, {},
                 {"_linalg_potrf(node)", "matrix 1", "not positive definite"});
  ExpectRejected("_linalg_inverse", {Values({2, 2}, {1, 2, 2, 4})}, {},
                 {"_linalg_inverse(node)", "matrix 0", "singular"});
}

NDArray Draw(const std::string& op, const AttrDict& attrs) { return Invoke(op, {}, attrs)[0]; }

TEST(RandomSeeding, DrawsRepeatAfterSeedAndDifferBetweenCalls) {
  const AttrDict attrs{{"shape", "(64,)"}};
  Seed(7);
  const NDArray first = Draw("_random_normal", attrs);
  const NDArray second = Draw("_random_normal", attrs);
  EXPECT_FALSE(Same(first, second));
  Seed(7);
  EXPECT_TRUE(Same(first, Draw("_random_normal", attrs)));
  EXPECT_TRUE(Same(second, Draw("_random_normal", attrs)));
  Seed(8);
  EXPECT_FALSE(Same(first, Draw("_random_normal", attrs)));
}

TEST(RandomSeeding, GraphRunsRepeatTheEagerDrawsAndNodesDrawApart) {
  // Two sampling nodes of one graph: their draws differ; a run after Seed(s) repeats the eager
  // draws made after Seed(s) in the same order.
  const AttrDict attrs{{"low", "0"}, {"high", "1"}, {"shape", "(2, 5)"}};
  Symbol a = Symbol::Create("_random_uniform", {}, attrs, "a");
  Symbol b = Symbol::Create("_random_uniform", {}, attrs, "b");
  Symbol both = Symbol::Group({a, b});
  GraphExecutor exec(both, {}, {});
  Seed(11);
  const std::vector<NDArray> graph = exec.Forward({});
  ASSERT_EQ(graph.size(), 2u);
  EXPECT_FALSE(Same(graph[0], graph[1]));
  Seed(11);
  const NDArray eager_a = Draw("_random_uniform", attrs);
  const NDArray eager_b = Draw("_random_uniform", attrs);
  EXPECT_TRUE((Same(graph[0], eager_a) && Same(graph[1], eager_b)) ||
              (Same(graph[0], eager_b) && Same(graph[1], eager_a)));
  // The next run draws anew.
  const std::vector<NDArray> again = exec.Forward({});
  EXPECT_FALSE(Same(graph[0], again[0]));
}

TEST(RandomSeeding, InvalidParameterArraysGiveNaNNotAHang) {
  const NDArray alpha = Values({2}, {-1, 0});
  const NDArray beta = Values({2}, {1, 1});
  const NDArray out = Invoke("_sample_gamma", {alpha, beta}, {{"shape", "(3,)"}})[0];
  for (float v : out.ToFloatVector()) EXPECT_TRUE(std::isnan(v)) << v;
  const NDArray poisson = Invoke("_sample_poisson", {Values({2}, {-2, NAN})}, {})[0];
  EXPECT_EQ(poisson.ToFloatVector(), (std::vector<float>{0, 0}));  // MXNet's result too
}

}  // namespace
}  // namespace hybridnet
