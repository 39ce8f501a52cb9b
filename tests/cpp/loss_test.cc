// gluon losses: values and input gradients against references written with plain loops in
// double (gradients by central differences of the reference), eager against hybridized bit for
// bit, and the errors of bad input. tests/golden/loss_golden.py compares with MXNet 1.9.1.
#include "hybridnet/gluon/loss.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/test_util.h"
#include "hybridnet/autograd.h"
#include "hybridnet/operators.h"

namespace hybridnet {
namespace gluon {
namespace {

using testing_util::BitDifference;
using testing_util::ErrorOf;
using Values = std::vector<double>;
// The reference: every input's values (row-major) to the loss's values.
using Reference = std::function<Values(const std::vector<Values>&)>;

struct Input {
  Shape shape;
  Values values;
  bool differentiable;
};

Input Uniform(const Shape& shape, double low, double high, bool differentiable, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(static_cast<float>(low), static_cast<float>(high));
  Values v(shape.Size());
  for (double& x : v) x = dist(rng);
  return {shape, v, differentiable};
}

// Integers in [0, count) as floats (class indices), or -1/1 with `signs`.
Input Labels(const Shape& shape, int count, uint32_t seed, bool signs = false) {
  std::mt19937 rng(seed);
  Values v(shape.Size());
  for (double& x : v) {
    int k = static_cast<int>(rng() % count);
    x = signs ? (k == 0 ? -1.0 : 1.0) : k;
  }
  return {shape, v, false};
}

NDArray ToArray(const Input& in) {
  std::vector<float> f(in.values.begin(), in.values.end());
  return NDArray::FromVector(in.shape, f);
}

struct Run {
  NDArray loss;
  std::vector<NDArray> grads;  // per differentiable input, else none
};

// The loss under recording and the gradients of its sum.
Run Record(Loss& block, const std::vector<Input>& inputs) {
  std::vector<NDArray> arrays;
  for (const auto& in : inputs) arrays.push_back(ToArray(in));
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].differentiable) autograd::AttachGrad(&arrays[i]);
  Run run;
  {
    auto recording = autograd::Record();
    run.loss = block(arrays)[0];
  }
  autograd::Backward({run.loss});
  for (size_t i = 0; i < inputs.size(); ++i)
    run.grads.push_back(inputs[i].differentiable ? autograd::GetGrad(arrays[i]) : NDArray());
  return run;
}

double Sum(const Values& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

void ExpectClose(const std::vector<float>& got, const Values& want, double rtol, double atol,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], atol + rtol * std::fabs(want[i])) << what << " [" << i << "]";
  }
}

// Checks values and gradients against the reference, and hybridized against eager.
void CheckLoss(const std::function<std::shared_ptr<Loss>()>& make, const std::vector<Input>& inputs,
               const Shape& out_shape, const Reference& reference) {
  std::vector<Values> values;
  for (const auto& in : inputs) values.push_back(in.values);
  auto eager = make();
  Run run = Record(*eager, inputs);
  EXPECT_EQ(run.loss.shape(), out_shape);
  ExpectClose(run.loss.ToFloatVector(), reference(values), 1e-5, 1e-6, "loss");
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!inputs[k].differentiable) continue;
    Values grad(values[k].size());
    for (size_t j = 0; j < grad.size(); ++j) {
      constexpr double kStep = 1e-6;
      std::vector<Values> plus = values, minus = values;
      plus[k][j] += kStep;
      minus[k][j] -= kStep;
      grad[j] = (Sum(reference(plus)) - Sum(reference(minus))) / (2 * kStep);
    }
    ExpectClose(run.grads[k].ToFloatVector(), grad, 1e-4, 1e-5,
                "gradient of input " + std::to_string(k));
  }
  auto hybrid = make();
  hybrid->Hybridize();
  Run graph = Record(*hybrid, inputs);
  EXPECT_EQ(BitDifference(graph.loss, run.loss), "") << "hybridized loss";
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!inputs[k].differentiable) continue;
    EXPECT_EQ(BitDifference(graph.grads[k], run.grads[k]), "") << "hybridized gradient " << k;
  }
}

double Softrelu(double x) { return std::log1p(std::exp(x)); }
double LogitCE(double x, double z) { return std::max(x, 0.0) - x * z + Softrelu(-std::fabs(x)); }

// Per-sample mean over rows of `cols` elements (batch_axis 0 of a (rows, cols) loss).
Values RowMeans(const Values& e, size_t cols) {
  Values out(e.size() / cols, 0.0);
  for (size_t i = 0; i < e.size(); ++i) out[i / cols] += e[i] / static_cast<double>(cols);
  return out;
}

TEST(Loss, L1WithWeightAndSampleWeight) {
  CheckLoss([] { return std::make_shared<L1Loss>(LossOptions().set_weight(0.5f)); },
            {Uniform({3, 4}, -1, 1, true, 1), Uniform({3, 4}, -1, 1, true, 2),
             Uniform({3, 1}, 0, 2, false, 3)},
            Shape({3}),
            [](const std::vector<Values>& v) {
              Values e(12);
              for (size_t i = 0; i < 12; ++i)
                e[i] = std::fabs(v[1][i] - v[0][i]) * v[2][i / 4] * 0.5;
              return RowMeans(e, 4);
            });
}

TEST(Loss, L2HalvesTheWeightAndKeepsBatchAxis1) {
  // batch_axis 1: the mean runs over axis 0, one value per column.
  CheckLoss([] { return std::make_shared<L2Loss>(L2LossOptions().set_batch_axis(1)); },
            {Uniform({4, 3}, -1, 1, true, 4), Uniform({12}, -1, 1, true, 5)}, Shape({3}),
            [](const std::vector<Values>& v) {
              Values out(3, 0.0);
              for (size_t i = 0; i < 12; ++i)
                out[i % 3] += 0.5 * std::pow(v[1][i] - v[0][i], 2) / 4;
              return out;
            });
}

TEST(Loss, SigmoidBCEFromLogits) {
  CheckLoss([] { return std::make_shared<SigmoidBCELoss>(); },
            {Uniform({2, 5}, -4, 4, true, 6), Uniform({2, 5}, 0, 1, true, 7)}, Shape({2}),
            [](const std::vector<Values>& v) {
              Values e(10);
              for (size_t i = 0; i < 10; ++i) e[i] = LogitCE(v[0][i], v[1][i]);
              return RowMeans(e, 5);
            });
}

TEST(Loss, SigmoidBCEPosWeightFromLogitsAndFromSigmoid) {
  auto reference = [](bool from_sigmoid) {
    return [from_sigmoid](const std::vector<Values>& v) {
      Values e(6);
      for (size_t i = 0; i < 6; ++i) {
        double x = v[0][i], z = v[1][i], sw = v[2][i / 3], pw = v[3][i % 3];
        if (from_sigmoid) {
          e[i] = -(std::log(x + 1e-12) * z * pw + std::log(1 - x + 1e-12) * (1 - z));
        } else {
          e[i] = x - x * z + (1 + (pw - 1) * z) * (Softrelu(-std::fabs(x)) + std::max(-x, 0.0));
        }
        e[i] *= sw * 2.0;
      }
      return RowMeans(e, 3);
    };
  };
  for (bool from_sigmoid : {false, true}) {
    SCOPED_TRACE(from_sigmoid ? "from_sigmoid" : "logits");
    CheckLoss(
        [=] {
          return std::make_shared<SigmoidBCELoss>(
              SigmoidBCELossOptions().set_from_sigmoid(from_sigmoid).set_weight(2.f));
        },
        {from_sigmoid ? Uniform({2, 3}, 0.05, 0.95, true, 8) : Uniform({2, 3}, -3, 3, true, 8),
         Uniform({2, 3}, 0, 1, true, 9), Uniform({2, 1}, 0.5, 1.5, false, 10),
         Uniform({3}, 0.5, 3, true, 11)},
        Shape({2}), reference(from_sigmoid));
  }
}

// log softmax of row r of a (rows, classes) array.
Values LogSoftmaxRow(const Values& x, size_t r, size_t classes) {
  double m = -1e300, s = 0;
  for (size_t c = 0; c < classes; ++c) m = std::max(m, x[r * classes + c]);
  for (size_t c = 0; c < classes; ++c) s += std::exp(x[r * classes + c] - m);
  Values out(classes);
  for (size_t c = 0; c < classes; ++c) out[c] = x[r * classes + c] - m - std::log(s);
  return out;
}

TEST(Loss, SoftmaxCESparseWithWeights) {
  CheckLoss(
      [] { return std::make_shared<SoftmaxCELoss>(SoftmaxCELossOptions().set_weight(0.25f)); },
      {Uniform({4, 5}, -2, 2, true, 12), Labels({4}, 5, 13), Uniform({4, 1}, 0, 1, true, 14)},
      Shape({4}),
      [](const std::vector<Values>& v) {
        Values out(4);
        for (size_t r = 0; r < 4; ++r) {
          out[r] = -LogSoftmaxRow(v[0], r, 5)[static_cast<size_t>(v[1][r])] * v[2][r] * 0.25;
        }
        return out;
      });
}

TEST(Loss, SoftmaxCEDenseLabelsAndFromLogits) {
  for (bool from_logits : {false, true}) {
    SCOPED_TRACE(from_logits ? "from_logits" : "softmax");
    CheckLoss(
        [=] {
          return std::make_shared<SoftmaxCELoss>(
              SoftmaxCELossOptions().set_sparse_label(false).set_from_logits(from_logits));
        },
        {Uniform({3, 4}, -2, 2, true, 15), Uniform({3, 4}, 0, 1, true, 16)}, Shape({3}),
        [=](const std::vector<Values>& v) {
          Values out(3, 0.0);
          for (size_t r = 0; r < 3; ++r) {
            Values lp = from_logits ? Values(v[0].begin() + r * 4, v[0].begin() + r * 4 + 4)
                                    : LogSoftmaxRow(v[0], r, 4);
            for (size_t c = 0; c < 4; ++c) out[r] -= lp[c] * v[1][r * 4 + c];
          }
          return out;
        });
  }
}

TEST(Loss, SoftmaxCEOnAxis1OfThreeAxes) {
  // (N, C, T) scores, (N, T) labels: one value per sample, the mean over T.
  CheckLoss([] { return std::make_shared<SoftmaxCELoss>(SoftmaxCELossOptions().set_axis(1)); },
            {Uniform({2, 3, 2}, -2, 2, true, 17), Labels({2, 2}, 3, 18)}, Shape({2}),
            [](const std::vector<Values>& v) {
              Values out(2, 0.0);
              for (size_t n = 0; n < 2; ++n) {
                for (size_t t = 0; t < 2; ++t) {
                  Values row(3);
                  for (size_t c = 0; c < 3; ++c) row[c] = v[0][n * 6 + c * 2 + t];
                  Values lp = LogSoftmaxRow(row, 0, 3);
                  out[n] -= lp[static_cast<size_t>(v[1][n * 2 + t])] / 2;
                }
              }
              return out;
            });
}

TEST(Loss, KLDivFromScores) {
  CheckLoss([] { return std::make_shared<KLDivLoss>(KLDivLossOptions().set_from_logits(false)); },
            {Uniform({2, 4}, -2, 2, true, 19), Uniform({2, 4}, 0.05, 1, true, 20)}, Shape({2}),
            [](const std::vector<Values>& v) {
              Values out(2, 0.0);
              for (size_t r = 0; r < 2; ++r) {
                Values lp = LogSoftmaxRow(v[0], r, 4);
                for (size_t c = 0; c < 4; ++c) {
                  double z = v[1][r * 4 + c];
                  out[r] += z * (std::log(z + 1e-12) - lp[c]);
                }
              }
              return out;
            });
}

TEST(Loss, HuberBothSidesOfRho) {
  CheckLoss([] { return std::make_shared<HuberLoss>(HuberLossOptions().set_rho(0.5f)); },
            {Uniform({3, 4}, -1.5, 1.5, true, 21), Uniform({3, 4}, -1, 1, true, 22)}, Shape({3}),
            [](const std::vector<Values>& v) {
              Values e(12);
              for (size_t i = 0; i < 12; ++i) {
                double d = std::fabs(v[1][i] - v[0][i]);
                e[i] = d > 0.5 ? d - 0.25 : d * d;  // 0.5 / rho = 1
              }
              return RowMeans(e, 4);
            });
}

TEST(Loss, HingeAndSquaredHinge) {
  for (bool squared : {false, true}) {
    SCOPED_TRACE(squared ? "squared" : "hinge");
    CheckLoss(
        [=]() -> std::shared_ptr<Loss> {
          auto o = HingeLossOptions().set_margin(0.7f);
          if (squared) return std::make_shared<SquaredHingeLoss>(o);
          return std::make_shared<HingeLoss>(o);
        },
        {Uniform({2, 5}, -1.5, 1.5, true, 23), Labels({2, 5}, 2, 24, true)}, Shape({2}),
        [=](const std::vector<Values>& v) {
          Values e(10);
          for (size_t i = 0; i < 10; ++i) {
            double h = std::max(0.7 - v[0][i] * v[1][i], 0.0);
            e[i] = squared ? h * h : h;
          }
          return RowMeans(e, 5);
        });
  }
}

TEST(Loss, LogisticSignedAndBinary) {
  for (bool binary : {false, true}) {
    SCOPED_TRACE(binary ? "binary" : "signed");
    CheckLoss(
        [=] {
          return std::make_shared<LogisticLoss>(
              LogisticLossOptions().set_label_format(binary ? "binary" : "signed"));
        },
        {Uniform({2, 4}, -3, 3, true, 25), binary ? Labels({8}, 2, 26) : Labels({8}, 2, 26, true)},
        Shape({2}),
        [=](const std::vector<Values>& v) {
          Values e(8);
          for (size_t i = 0; i < 8; ++i)
            e[i] = LogitCE(v[0][i], binary ? v[1][i] : (v[1][i] + 1) / 2);
          return RowMeans(e, 4);
        });
  }
}

TEST(Loss, TripletWithMargin) {
  CheckLoss([] { return std::make_shared<TripletLoss>(TripletLossOptions().set_margin(0.5f)); },
            {Uniform({4, 3}, -1, 1, true, 27), Uniform({4, 3}, -1, 1, true, 28),
             Uniform({4, 3}, -1, 1, true, 29)},
            Shape({4}),
            [](const std::vector<Values>& v) {
              Values out(4, 0.0);
              for (size_t i = 0; i < 12; ++i)
                out[i / 3] += std::pow(v[1][i] - v[0][i], 2) - std::pow(v[2][i] - v[0][i], 2);
              for (double& x : out) x = std::max(x + 0.5, 0.0);
              return out;
            });
}

TEST(Loss, PoissonNLLFromLogitsAndFull) {
  for (bool from_logits : {true, false}) {
    SCOPED_TRACE(from_logits ? "from_logits" : "rates, compute_full");
    CheckLoss(
        [=] {
          return std::make_shared<PoissonNLLLoss>(PoissonNLLLossOptions()
                                                      .set_from_logits(from_logits)
                                                      .set_compute_full(!from_logits)
                                                      .set_weight(1.5f));
        },
        {Uniform({3, 4}, 0.2, 2, true, 30), Uniform({3, 4}, 0.1, 4, true, 31),
         Uniform({3, 1}, 0, 1, false, 32)},
        Shape({1}),
        [=](const std::vector<Values>& v) {
          double total = 0;
          for (size_t i = 0; i < 12; ++i) {
            double x = v[0][i], t = v[1][i];
            double l = from_logits ? std::exp(x) - t * x : x - t * std::log(x + 1e-8);
            if (!from_logits && t > 1) l += t * std::log(t) - t + 0.5 * std::log(2 * t * M_PI);
            total += l * v[2][i / 4] * 1.5;
          }
          return Values{total / 12};
        });
  }
}

TEST(Loss, CosineEmbeddingBothLabels) {
  CheckLoss(
      [] {
        return std::make_shared<CosineEmbeddingLoss>(CosineEmbeddingLossOptions().set_margin(0.1f));
      },
      {Uniform({4, 3}, -1, 1, true, 33), Uniform({4, 3}, -1, 1, true, 34), Labels({4}, 2, 35, true),
       Uniform({4, 1}, 0.5, 1, false, 36)},
      Shape({4, 1}),
      [](const std::vector<Values>& v) {
        Values out(4);
        for (size_t r = 0; r < 4; ++r) {
          double dot = 0, n1 = 0, n2 = 0;
          for (size_t c = 0; c < 3; ++c) {
            double a = v[0][r * 3 + c], b = v[1][r * 3 + c];
            dot += a * b, n1 += a * a, n2 += b * b;
          }
          double cosine = dot / std::max(std::sqrt(n1) * std::sqrt(n2), 1e-12);
          double l = v[2][r] == 1 ? 1 - cosine : std::max(cosine - 0.1, 0.0);
          out[r] = l * v[3][r];
        }
        return out;
      });
}

TEST(Loss, SDMLSmoothedIdentity) {
  CheckLoss(
      [] { return std::make_shared<SDMLLoss>(SDMLLossOptions().set_smoothing_parameter(0.2f)); },
      {Uniform({4, 3}, -1, 1, true, 37), Uniform({4, 3}, -1, 1, true, 38)}, Shape({4}),
      [](const std::vector<Values>& v) {
        Values out(4, 0.0);
        for (size_t i = 0; i < 4; ++i) {
          Values neg_distance(4);
          for (size_t j = 0; j < 4; ++j) {
            double d = 0;
            for (size_t c = 0; c < 3; ++c) d += std::pow(v[0][i * 3 + c] - v[1][j * 3 + c], 2);
            neg_distance[j] = -d;
          }
          Values lp = LogSoftmaxRow(neg_distance, 0, 4);
          for (size_t j = 0; j < 4; ++j) {
            double z = i == j ? 0.8 : 0.2 / 3;
            out[i] += z * (std::log(z + 1e-12) - lp[j]);
          }
        }
        return out;
      });
}

// The loss equals the CTCLoss op on (T, N, C) data, whatever the layouts.
TEST(Loss, CTCLayoutsAndLengths) {
  NDArray tnc = ToArray(Uniform({5, 2, 4}, -1, 1, false, 39));
  NDArray label_nt = NDArray::FromVector({2, 3}, {0, 1, -1, 2, 2, 1});
  NDArray lengths = NDArray::FromVector({2}, {5, 4});
  NDArray direct = op::Call("CTCLoss", {tnc, label_nt, lengths},
                            {{"use_data_lengths", "True"}, {"blank_label", "last"}});
  auto swap = [](const NDArray& x) {
    return op::Call("SwapAxis", {x}, {{"dim1", "0"}, {"dim2", "1"}});
  };
  CTCLoss ntc_nt;
  EXPECT_EQ(BitDifference(ntc_nt({swap(tnc), label_nt, lengths})[0], direct), "");
  CTCLoss tnc_tn(CTCLossOptions().set_layout("TNC").set_label_layout("TN"));
  EXPECT_EQ(BitDifference(tnc_tn({tnc, swap(label_nt), lengths})[0], direct), "");
  // label_lengths without pred_lengths: a none array stands for MXNet's None.
  NDArray label_lengths = NDArray::FromVector({2}, {2, 3});
  NDArray by_label_lengths = op::Call("CTCLoss", {tnc, label_nt, label_lengths},
                                      {{"use_label_lengths", "True"}, {"blank_label", "last"}});
  NDArray weights = NDArray::FromVector({2}, {0.5f, 2.f});
  NDArray weighted = ntc_nt({swap(tnc), label_nt, NDArray(), label_lengths, weights})[0];
  std::vector<float> want = by_label_lengths.ToFloatVector(), got = weighted.ToFloatVector();
  EXPECT_FLOAT_EQ(got[0], want[0] * 0.5f);
  EXPECT_FLOAT_EQ(got[1], want[1] * 2.f);
  // Hybridized with a none input: run eagerly, the same numbers.
  ntc_nt.Hybridize();
  EXPECT_EQ(
      BitDifference(ntc_nt({swap(tnc), label_nt, NDArray(), label_lengths, weights})[0], weighted),
      "");
  // The gradient reaches pred.
  NDArray pred = swap(tnc);
  autograd::AttachGrad(&pred);
  NDArray loss;
  {
    auto recording = autograd::Record();
    loss = ntc_nt({pred, label_nt})[0];
  }
  autograd::Backward({loss});
  double total = 0;
  for (float g : autograd::GetGrad(pred).ToFloatVector()) total += std::fabs(g);
  EXPECT_GT(total, 0.0);
}

TEST(Loss, DescribesItselfAsMXNet) {
  EXPECT_EQ(L2Loss().ToString(), "L2Loss(batch_axis=0, w=1.0)");
  EXPECT_EQ(L1Loss(LossOptions().set_batch_axis(1)).ToString(), "L1Loss(batch_axis=1, w=None)");
}

TEST(Loss, MismatchedShapesAreClearErrors) {
  NDArray pred = NDArray::Zeros({2, 3}), label = NDArray::Zeros({2, 4});
  for (bool hybridized : {false, true}) {
    L2Loss loss;
    loss.Hybridize(hybridized);
    Error e = ErrorOf([&] { loss({pred, label}); });
    EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("L2Loss: label has shape (2, 4) (8 elements) but pred "
                                         "has shape (2, 3) (6)"),
              std::string::npos)
        << e.what();
  }
  TripletLoss triplet;
  Error e = ErrorOf([&] { triplet({pred, pred, label}); });
  EXPECT_NE(std::string(e.what()).find("negative has shape (2, 4)"), std::string::npos) << e.what();
  SDMLLoss sdml;
  e = ErrorOf([&] { sdml({NDArray::Zeros({1, 3}), NDArray::Zeros({1, 3})}); });
  EXPECT_NE(std::string(e.what()).find("SDMLLoss: x1 and x2 must both be (batch, dim) with batch "
                                       ">= 2, got (1, 3) and (1, 3)"),
            std::string::npos)
      << e.what();
  // A sample_weight that does not broadcast fails in the op, naming it.
  L1Loss l1;
  e = ErrorOf([&] { l1({pred, pred, NDArray::Zeros({3, 3})}); });
  EXPECT_NE(e.code(), StatusCode::kOk);
  EXPECT_NE(std::string(e.what()).find("L1Loss: broadcast_mul"), std::string::npos) << e.what();
  L1Loss batch_axis_5(LossOptions().set_batch_axis(5));
  e = ErrorOf([&] { batch_axis_5({pred, pred}); });
  EXPECT_NE(std::string(e.what()).find("L1Loss: mean: axis 5 is out of range"), std::string::npos)
      << e.what();
}

TEST(Loss, WrongInputCountsAndOptionsAreClearErrors) {
  NDArray x = NDArray::Zeros({2, 3});
  L1Loss l1;
  Error e = ErrorOf([&] { l1({x}); });
  EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("L1Loss takes 2 to 3 inputs (pred, label, sample_weight), "
                                       "got 1"),
            std::string::npos)
      << e.what();
  e = ErrorOf([&] { l1({x, NDArray()}); });
  EXPECT_NE(std::string(e.what()).find("input 1 (label) is required"), std::string::npos);
  e = ErrorOf([] { CTCLoss(CTCLossOptions().set_layout("NCT")); });
  EXPECT_NE(std::string(e.what()).find("layout must be NTC or TNC, got 'NCT'"), std::string::npos);
  e = ErrorOf([] { LogisticLoss(LogisticLossOptions().set_label_format("bool")); });
  EXPECT_NE(std::string(e.what()).find("label_format must be signed or binary"), std::string::npos);
  e = ErrorOf([] { HuberLoss(HuberLossOptions().set_rho(0.f)); });
  EXPECT_NE(std::string(e.what()).find("rho must be > 0"), std::string::npos);
  e = ErrorOf([] { L2Loss(L2LossOptions().set_weight(std::nullopt)); });
  EXPECT_NE(std::string(e.what()).find("weight must be a number"), std::string::npos);
}

}  // namespace
}  // namespace gluon
}  // namespace hybridnet
