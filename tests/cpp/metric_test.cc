#include "hybridnet/metric.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/test_util.h"

namespace hybridnet {
namespace {

using testing_util::ErrorOf;

NDArray Vec(const Shape& shape, const std::vector<float>& values) {
  return NDArray::FromVector(shape, values);
}

double Read(const metric::EvalMetric& m) { return m.Get().at(0).value; }

TEST(Metric, AccuracyArgmaxesPredictionsAndKeepsLocalAndGlobalSums) {
  auto acc = metric::Create("Accuracy");
  EXPECT_STREQ(acc->kind(), "Accuracy");
  EXPECT_TRUE(std::isnan(Read(*acc)));
  NDArray pred =
      Vec({4, 3}, {0.1f, 0.8f, 0.1f, 0.6f, 0.3f, 0.1f, 0.2f, 0.2f, 0.6f, 0.5f, 0.4f, 0.1f});
  acc->Update({Vec({4}, {1, 0, 1, 2})}, {pred});  // rows predict 1, 0, 2, 0
  EXPECT_DOUBLE_EQ(Read(*acc), 0.5);
  EXPECT_EQ(acc->Get()[0].name, "accuracy");
  // A label column (N, 1) reads like (N,); predictions of the label's shape are classes.
  acc->Update({Vec({2, 1}, {1, 0})}, {Vec({2, 1}, {1.7f, 0.2f})});
  EXPECT_DOUBLE_EQ(acc->local().num_inst, 6);
  EXPECT_DOUBLE_EQ(acc->local().sum_metric, 4);
  acc->ResetLocal();
  EXPECT_TRUE(std::isnan(Read(*acc)));
  EXPECT_DOUBLE_EQ(acc->GetGlobal()[0].value, 4.0 / 6.0);
  acc->Reset();
  EXPECT_TRUE(std::isnan(acc->GetGlobal()[0].value));
  // axis 0: the class axis comes first.
  auto by_column = metric::Create("acc", {{"axis", "0"}});
  by_column->Update({Vec({3}, {0, 1, 1})}, {Vec({2, 3}, {1, 0, 5, 0, 1, 0})});
  EXPECT_DOUBLE_EQ(Read(*by_column), 2.0 / 3.0);
}

TEST(Metric, TopKAccuracyCountsLabelsAmongTheLargest) {
  auto top2 = metric::Create("top_k_acc", {{"top_k", "2"}});
  EXPECT_EQ(top2->name(), "top_k_accuracy_2");
  NDArray pred = Vec({3, 3}, {0.5f, 0.3f, 0.2f, 0.1f, 0.2f, 0.7f, 0.3f, 0.4f, 0.2f});
  top2->Update({Vec({3}, {1, 0, 2})}, {pred});
  EXPECT_DOUBLE_EQ(Read(*top2), 1.0 / 3.0);
  EXPECT_EQ(ErrorOf([] { metric::Create("top_k_accuracy"); }).code(), StatusCode::kInvalidArgument);
}

TEST(Metric, F1AndMccMacroAverageBatchesMicroPoolsThem) {
  // Batch 1: tp 2, fp 1, fn 1, tn 0. Batch 2: tp 0, fp 0, fn 1, tn 1.
  NDArray pred1 = Vec({4, 2}, {0, 1, 0, 1, 0, 1, 1, 0});
  NDArray label1 = Vec({4}, {1, 1, 0, 1});
  NDArray pred2 = Vec({2, 2}, {1, 0, 1, 0});
  NDArray label2 = Vec({2}, {1, 0});
  auto macro = metric::Create("f1");
  auto micro = metric::Create("f1", {{"average", "micro"}});
  for (auto* m : {macro.get(), micro.get()}) {
    m->Update({label1}, {pred1});
    m->Update({label2}, {pred2});
  }
  EXPECT_NEAR(Read(*macro), (2.0 / 3.0 + 0.0) / 2, 1e-12);
  // Pooled: tp 2, fp 1, fn 2 -> precision 2/3, recall 1/2.
  EXPECT_NEAR(Read(*micro), 2 * (2.0 / 3) * 0.5 / (2.0 / 3 + 0.5), 1e-12);
  auto mcc = metric::Create("mcc");
  mcc->Update({label1}, {pred1});
  // tp 2, fp 1, fn 1, tn 0: (2 * 0 - 1 * 1) / sqrt(3 * 3 * 1 * 1).
  EXPECT_NEAR(Read(*mcc), (0.0 - 1.0) / std::sqrt(3.0 * 3.0 * 1.0 * 1.0), 1e-12);
  // No positive anywhere: F1 is 0, not NaN.
  auto none = metric::Create("f1");
  none->Update({Vec({2}, {0, 0})}, {Vec({2, 2}, {1, 0, 1, 0})});
  EXPECT_DOUBLE_EQ(Read(*none), 0.0);
  Error three = ErrorOf([&] { none->Update({Vec({3}, {0, 1, 2})}, {NDArray::Zeros({3, 2})}); });
  EXPECT_EQ(three.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(three.what()).find("binary classification only"), std::string::npos);
}

TEST(Metric, RegressionMetricsBroadcastColumnsAndAverageUpdates) {
  auto mae = metric::Create("mae");
  auto mse = metric::Create("mse");
  auto rmse = metric::Create("rmse");
  for (auto* m : {mae.get(), mse.get(), rmse.get()}) {
    m->Update({Vec({3}, {1, 2, 3})}, {Vec({3, 1}, {2, 2, 5})});  // differences 1, 0, 2
    m->Update({Vec({1}, {0})}, {Vec({1}, {3})});                 // difference 3
  }
  EXPECT_DOUBLE_EQ(Read(*mae), (1.0 + 3.0) / 2);
  EXPECT_DOUBLE_EQ(Read(*mse), (5.0 / 3 + 9.0) / 2);
  EXPECT_DOUBLE_EQ(Read(*rmse), (std::sqrt(5.0 / 3) + 3.0) / 2);
  Error e = ErrorOf([&] { mae->Update({NDArray::Zeros({2, 3})}, {NDArray::Zeros({2, 2})}); });
  EXPECT_EQ(e.code(), StatusCode::kShapeError);
}

TEST(Metric, CrossEntropyPerplexityAndLoss) {
  NDArray prob = Vec({2, 3}, {0.2f, 0.5f, 0.3f, 0.6f, 0.3f, 0.1f});
  NDArray label = Vec({2}, {1, 0});
  const double nll = -(std::log(0.5f + 1e-12) + std::log(0.6f + 1e-12)) / 2;
  for (const char* name : {"ce", "nll_loss"}) {
    auto m = metric::Create(name);
    m->Update({label}, {prob});
    EXPECT_NEAR(Read(*m), nll, 1e-7) << name;
  }
  auto ppl = metric::Create("perplexity", {{"ignore_label", "0"}});
  ppl->Update({label}, {prob});
  EXPECT_NEAR(Read(*ppl), 1 / 0.5, 1e-6);  // the label-0 row is ignored
  auto loss = metric::Create("loss");
  loss->Update({}, {Vec({2, 2}, {1, 2, 3, 6})});
  EXPECT_DOUBLE_EQ(Read(*loss), 3.0);
  auto ce = metric::Create("ce");
  Error out_of_range = ErrorOf([&] { ce->Update({Vec({2}, {3, 0})}, {prob}); });
  EXPECT_EQ(out_of_range.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(out_of_range.what()).find("label 3"), std::string::npos);
}

TEST(Metric, PearsonMacroAndMicroAgreeOnOneBatch) {
  NDArray label = Vec({5}, {1, 2, 3, 4, 6});
  NDArray pred = Vec({5}, {1.5f, 1.9f, 3.2f, 3.8f, 5.1f});
  auto macro = metric::Create("pearsonr");
  auto micro = metric::Create("pearsonr", {{"average", "micro"}});
  macro->Update({label}, {pred});
  micro->Update({label}, {pred});
  EXPECT_NEAR(Read(*macro), Read(*micro), 1e-12);
  EXPECT_GT(Read(*macro), 0.98);
  // Micro pools the values of both batches: the same as one batch of all of them.
  auto pooled = metric::Create("pearsonr", {{"average", "micro"}});
  pooled->Update({Vec({2}, {1, 2})}, {Vec({2}, {1.5f, 1.9f})});
  pooled->Update({Vec({3}, {3, 4, 6})}, {Vec({3}, {3.2f, 3.8f, 5.1f})});
  EXPECT_NEAR(Read(*pooled), Read(*micro), 1e-12);
}

TEST(Metric, CompositeListsChildrenAndBadInputIsRejected) {
  auto composite = metric::Create("composite", {{"metrics", "acc, mae"}});
  composite->Update({Vec({2}, {1, 0})}, {Vec({2, 2}, {0, 1, 0, 1})});
  auto readings = composite->Get();
  ASSERT_EQ(readings.size(), 2u);
  EXPECT_EQ(readings[0].name, "accuracy");
  EXPECT_DOUBLE_EQ(readings[0].value, 0.5);
  EXPECT_EQ(readings[1].name, "mae");

  Error unknown = ErrorOf([] { metric::Create("acuracy"); });
  EXPECT_EQ(unknown.code(), StatusCode::kNotFound);
  EXPECT_NE(std::string(unknown.what()).find("unknown metric 'acuracy'"), std::string::npos);
  Error bad_arg = ErrorOf([] { metric::Create("acc", {{"axis", "x"}}); });
  EXPECT_EQ(bad_arg.code(), StatusCode::kInvalidArgument);
  auto acc = metric::Create("acc");
  Error counts = ErrorOf([&] { acc->Update({Vec({2}, {1, 0})}, {}); });
  EXPECT_EQ(counts.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(counts.what()).find("1 label arrays but 0 prediction arrays"),
            std::string::npos);
  Error sizes = ErrorOf([&] { acc->Update({Vec({3}, {1, 0, 1})}, {NDArray::Zeros({2, 2})}); });
  EXPECT_EQ(sizes.code(), StatusCode::kShapeError);
  EXPECT_TRUE(std::isnan(Read(*acc)));  // failed updates add nothing
}

}  // namespace
}  // namespace hybridnet
