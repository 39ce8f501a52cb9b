#include "hybridnet/autograd.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "common/test_util.h"
#include "hybridnet/gluon/block.h"
#include "hybridnet/gluon/nn.h"
#include "hybridnet/imperative.h"
#include "hybridnet/operators.h"

namespace hybridnet {
namespace {

using testing_util::BitDifference;
using testing_util::ErrorOf;

NDArray Vec(const Shape& shape, const std::vector<float>& values) {
  return NDArray::FromVector(shape, values);
}

std::vector<float> Values(const NDArray& a) { return a.ToFloatVector(); }

// Each test leaves the thread's modes as MXNet starts: not recording, not training.
class Autograd : public ::testing::Test {
 protected:
  void TearDown() override {
    EXPECT_FALSE(autograd::IsRecording());
    EXPECT_FALSE(autograd::IsTraining());
  }
};

TEST_F(Autograd, ExpGradientIsExp) {
  NDArray x = Vec({3}, {1.f, 2.f, -0.5f});
  autograd::AttachGrad(&x);
  NDArray y;
  {
    auto recording = autograd::Record();
    y = op::Call("exp", {x});
  }
  autograd::Backward({y});
  // dy/dx = exp(x) = y, computed as 1 * y: the same bits.
  EXPECT_EQ(BitDifference(autograd::GetGrad(x), y), "");
}

// MXNet scripts often call backward inside record(): the gradient ops are not recorded.
TEST_F(Autograd, BackwardInsideRecord) {
  NDArray x = Vec({2}, {1.f, 2.f});
  autograd::AttachGrad(&x);
  auto recording = autograd::Record();
  NDArray y = x * x;
  autograd::Backward({y});
  EXPECT_TRUE(autograd::IsRecording());
  EXPECT_EQ(Values(autograd::GetGrad(x)), (std::vector<float>{2.f, 4.f}));
  NDArray z = autograd::GetGrad(x) * x;  // the gradient buffer is not on the tape
  EXPECT_EQ(ErrorOf([&] { autograd::Backward({z}); }).code(), StatusCode::kOk);
}

TEST_F(Autograd, SumOfProducts) {
  // z = x + x * y: dz/dx = 1 + y, dz/dy = x.
  NDArray x = Vec({4}, {1.f, 2.f, 3.f, 4.f});
  NDArray y = Vec({4}, {-1.f, 0.5f, 2.f, 10.f});
  autograd::AttachGrad(&x);
  autograd::AttachGrad(&y);
  NDArray z;
  {
    auto recording = autograd::Record();
    z = x + x * y;
  }
  autograd::Backward({z});
  EXPECT_EQ(Values(autograd::GetGrad(x)), (std::vector<float>{0.f, 1.5f, 3.f, 11.f}));
  EXPECT_EQ(Values(autograd::GetGrad(y)), Values(x));
}

TEST_F(Autograd, HeadGradientsScaleTheGradient) {
  NDArray x = Vec({3}, {1.f, 2.f, 3.f});
  autograd::AttachGrad(&x);
  NDArray y;
  {
    auto recording = autograd::Record();
    y = x * x;
  }
  autograd::Backward({y}, {Vec({3}, {1.f, 0.5f, -2.f})});
  EXPECT_EQ(Values(autograd::GetGrad(x)), (std::vector<float>{2.f, 2.f, -12.f}));
}

TEST_F(Autograd, GradReqWriteOverwritesAndAddAccumulates) {
  NDArray w = Vec({2}, {3.f, 4.f});
  NDArray a = Vec({2}, {3.f, 4.f});
  autograd::AttachGrad(&w, autograd::GradReq::kWrite);
  autograd::AttachGrad(&a, autograd::GradReq::kAdd);
  NDArray y;
  {
    auto recording = autograd::Record();
    y = w * 2.f + a * 2.f;
  }
  autograd::Backward({y}, {}, /*retain_graph=*/true);
  autograd::Backward({y}, {}, /*retain_graph=*/true);
  EXPECT_EQ(Values(autograd::GetGrad(w)), (std::vector<float>{2.f, 2.f}));
  // add with retain_graph: twice the gradient.
  EXPECT_EQ(Values(autograd::GetGrad(a)), (std::vector<float>{4.f, 4.f}));
}

// Backward writes gradients straight into the gradient buffers, but never into one the gradient
// graph still reads: a buffer given as the head gradient, or read as a recorded constant.
TEST_F(Autograd, GradientBufferReadByTheBackwardKeepsItsValuesUntilRead) {
  NDArray x = Vec({2}, {1.f, 2.f});
  autograd::AttachGrad(&x);
  NDArray buffer = autograd::GetGrad(x);
  buffer.CopyFrom(Vec({2}, {3.f, 4.f}));
  NDArray y;
  {
    auto recording = autograd::Record();
    y = x * x;
  }
  autograd::Backward({y}, {buffer});  // d(x * x) * head = 2 x * (3, 4)
  EXPECT_EQ(Values(autograd::GetGrad(x)), (std::vector<float>{6.f, 16.f}));
  EXPECT_TRUE(autograd::GetGrad(x).SharesStorageWith(buffer));

  NDArray z;
  {
    auto recording = autograd::Record();
    z = x * x * autograd::GetGrad(x);  // the buffer (6, 16) as a constant
  }
  autograd::Backward({z});  // 2 x * (6, 16)
  EXPECT_EQ(Values(autograd::GetGrad(x)), (std::vector<float>{12.f, 64.f}));
}

TEST_F(Autograd, GradReqNullIsSkipped) {
  NDArray x = Vec({2}, {1.f, 2.f});
  NDArray y = Vec({2}, {3.f, 4.f});
  autograd::AttachGrad(&x, autograd::GradReq::kNull);
  autograd::AttachGrad(&y);
  NDArray z;
  {
    auto recording = autograd::Record();
    z = x * y;
  }
  autograd::Backward({z}, {}, /*retain_graph=*/true);
  EXPECT_EQ(Values(autograd::GetGrad(x)), (std::vector<float>{0.f, 0.f}));
  EXPECT_EQ(Values(autograd::GetGrad(y)), (std::vector<float>{1.f, 2.f}));

  // Nothing wants a gradient: MXNet's "no inputs require gradients".
  NDArray u = Vec({2}, {1.f, 2.f});
  autograd::AttachGrad(&u, autograd::GradReq::kNull);
  NDArray v;
  {
    auto recording = autograd::Record();
    v = u * 2.f;
  }
  Error e = ErrorOf([&] { autograd::Backward({v}); });
  EXPECT_EQ(e.code(), StatusCode::kInvalidArgument) << e.what();
  EXPECT_NE(std::string(e.what()).find("grad_req null"), std::string::npos) << e.what();
}

TEST_F(Autograd, SecondBackwardNeedsRetainGraph) {
  NDArray x = Vec({2}, {1.f, 2.f});
  autograd::AttachGrad(&x);
  NDArray y;
  {
    auto recording = autograd::Record();
    y = op::Call("exp", {x}) * 3.f;
  }
  autograd::Backward({y});
  Error e = ErrorOf([&] { autograd::Backward({y}); });
  EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("retain_graph"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("released"), std::string::npos) << e.what();
}

// As in MXNet, a result of a graph a backward released is a constant when recorded again (an
// RNN state carried into the next batch).
TEST_F(Autograd, ReleasedResultsAreConstantsLater) {
  NDArray x = Vec({2}, {1.f, 2.f});
  autograd::AttachGrad(&x);
  NDArray h;
  {
    auto recording = autograd::Record();
    h = x * 2.f;
  }
  autograd::Backward({h});
  NDArray z;
  {
    auto recording = autograd::Record();
    z = h * x;
  }
  autograd::Backward({z});
  EXPECT_EQ(Values(autograd::GetGrad(x)), Values(h));
}

// A long recorded loop: backward and freeing the tape walk it without recursion.
TEST_F(Autograd, LongTapesNeedNoDeepStack) {
  NDArray x = Vec({1}, {1.f});
  autograd::AttachGrad(&x);
  constexpr int kSteps = 200000;
  {
    NDArray y = x;
    {
      auto recording = autograd::Record();
      for (int i = 0; i < kSteps; ++i) y = y + 1.f;
    }
    autograd::Backward({y}, {}, /*retain_graph=*/true);
    EXPECT_EQ(Values(autograd::GetGrad(x)), (std::vector<float>{1.f}));
  }  // the last array on the tape goes: the whole chain is freed
}

TEST_F(Autograd, HeadsMustBeRecorded) {
  NDArray x = Vec({2}, {1.f, 2.f});
  NDArray not_marked = Vec({2}, {1.f, 2.f});
  autograd::AttachGrad(&x);
  NDArray outside = x * 2.f;  // not recording
  NDArray from_constants;
  {
    auto recording = autograd::Record();
    from_constants = not_marked * 2.f;  // no input on the tape
  }
  for (const NDArray* head : {&outside, &from_constants}) {
    Error e = ErrorOf([&] { autograd::Backward({*head}); });
    EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("not on a recorded graph"), std::string::npos) << e.what();
  }
  Error none = ErrorOf([] { autograd::Backward({NDArray()}); });
  EXPECT_EQ(none.code(), StatusCode::kInvalidArgument);
}

TEST_F(Autograd, HeadGradientMustMatchItsHead) {
  NDArray x = Vec({2}, {1.f, 2.f});
  autograd::AttachGrad(&x);
  NDArray y;
  {
    auto recording = autograd::Record();
    y = x * 2.f;
  }
  EXPECT_EQ(ErrorOf([&] { autograd::Backward({y}, {NDArray::Ones({3})}, true); }).code(),
            StatusCode::kShapeError);
  EXPECT_EQ(
      ErrorOf([&] { autograd::Backward({y}, {NDArray::Ones({2}, DType::kFloat64)}, true); }).code(),
      StatusCode::kTypeError);
  EXPECT_EQ(ErrorOf([&] {
              autograd::Backward({y}, {y, y}, true);
            }).code(),
            StatusCode::kInvalidArgument);
}

TEST_F(Autograd, OpWithoutGradientIsNamed) {
  NDArray x = Vec({2}, {1.f, 2.f});
  autograd::AttachGrad(&x);
  NDArray y;
  {
    auto recording = autograd::Record();
    y = op::Call("all_finite", {x});
  }
  Error e = ErrorOf([&] { autograd::Backward({y}); });
  EXPECT_EQ(e.code(), StatusCode::kUnsupported);
  EXPECT_NE(std::string(e.what()).find("backward reached op all_finite (node node_"),
            std::string::npos)
      << e.what();
  EXPECT_NE(std::string(e.what()).find("which has no gradient"), std::string::npos) << e.what();
}

TEST_F(Autograd, ScopesNestAndRestore) {
  EXPECT_FALSE(autograd::IsRecording());
  {
    auto recording = autograd::Record();
    EXPECT_TRUE(autograd::IsRecording());
    EXPECT_TRUE(autograd::IsTraining());
    {
      auto paused = autograd::Pause();
      EXPECT_FALSE(autograd::IsRecording());
      EXPECT_FALSE(autograd::IsTraining());
      {
        auto train = autograd::TrainMode();
        EXPECT_FALSE(autograd::IsRecording());
        EXPECT_TRUE(autograd::IsTraining());
      }
      EXPECT_FALSE(autograd::IsTraining());
    }
    EXPECT_TRUE(autograd::IsRecording());
    {
      auto predict = autograd::PredictMode();
      EXPECT_TRUE(autograd::IsRecording());
      EXPECT_FALSE(autograd::IsTraining());
    }
    EXPECT_TRUE(autograd::IsTraining());
    // Another thread has its own modes.
    bool other_recording = true, other_training = true;
    std::thread([&] {
      other_recording = autograd::IsRecording();
      other_training = autograd::IsTraining();
    }).join();
    EXPECT_FALSE(other_recording);
    EXPECT_FALSE(other_training);
  }
  {
    auto recording = autograd::Record(/*train_mode=*/false);
    EXPECT_TRUE(autograd::IsRecording());
    EXPECT_FALSE(autograd::IsTraining());
  }
  EXPECT_FALSE(autograd::SetRecording(true));
  EXPECT_TRUE(autograd::SetRecording(false));
  EXPECT_FALSE(autograd::SetTraining(true));
  EXPECT_TRUE(autograd::SetTraining(false));
}

// The number of zeros Dropout(p=0.5) leaves in 4096 ones; the others must be 2 (scaled by
// 1 / (1 - p)) when it dropped, else 1 (the identity at inference).
int64_t DroppedByDropout(const NDArray& ones) {
  const std::vector<float> y = Values(op::Call("Dropout", {ones}, {{"p", "0.5"}}));
  int64_t zeros = 0;
  for (float v : y) zeros += v == 0.f;
  const float kept = zeros > 0 ? 2.f : 1.f;
  for (float v : y) EXPECT_TRUE(v == 0.f || v == kept) << v;
  return zeros;
}

TEST_F(Autograd, TrainModeReachesDropout) {
  NDArray ones = NDArray::Ones({4096});
  EXPECT_EQ(DroppedByDropout(ones), 0);
  {
    auto recording = autograd::Record();
    EXPECT_GT(DroppedByDropout(ones), 1500);
    auto predict = autograd::PredictMode();
    EXPECT_EQ(DroppedByDropout(ones), 0);
  }
  {
    auto recording = autograd::Record(/*train_mode=*/false);
    EXPECT_EQ(DroppedByDropout(ones), 0);
    auto paused = autograd::Pause(/*train_mode=*/true);
    EXPECT_GT(DroppedByDropout(ones), 1500);
  }
  {
    auto train = autograd::TrainMode();
    EXPECT_GT(DroppedByDropout(ones), 1500);
  }
}

TEST_F(Autograd, DetachStopsGradients) {
  NDArray x = Vec({3}, {1.f, 2.f, 3.f});
  autograd::AttachGrad(&x);
  NDArray z;
  {
    auto recording = autograd::Record();
    NDArray y = x * 2.f;
    z = autograd::Detach(y) * x;  // d/dx of (const 2x) * x = 2x, not 4x
  }
  autograd::Backward({z});
  EXPECT_EQ(Values(autograd::GetGrad(x)), (std::vector<float>{2.f, 4.f, 6.f}));
}

TEST_F(Autograd, BlockGradStopsGradients) {
  NDArray x = Vec({2}, {1.f, 2.f});
  autograd::AttachGrad(&x);
  NDArray z;
  {
    auto recording = autograd::Record();
    z = op::Call("BlockGrad", {x * 5.f}) + x;
  }
  autograd::Backward({z});
  EXPECT_EQ(Values(autograd::GetGrad(x)), (std::vector<float>{1.f, 1.f}));
}

// MXNet's test_out_grads: split into three heads, the first without a head gradient (ones).
TEST_F(Autograd, SplitHeadsWithHeadGradients) {
  NDArray x = NDArray::Ones({3, 5});
  NDArray dx = NDArray::Zeros({3, 5});
  autograd::MarkVariables({&x}, {dx}, {autograd::GradReq::kWrite});
  std::vector<NDArray> parts;
  {
    auto recording = autograd::Record();
    parts = Invoke("split", {x}, {{"axis", "0"}, {"num_outputs", "3"}, {"squeeze_axis", "True"}});
  }
  ASSERT_EQ(parts.size(), 3u);
  autograd::Backward(parts, {NDArray(), Vec({5}, {1, 2, 3, 4, 5}), Vec({5}, {5, 4, 3, 2, 1})});
  EXPECT_EQ(Values(dx), (std::vector<float>{1, 1, 1, 1, 1, 1, 2, 3, 4, 5, 5, 4, 3, 2, 1}));
  EXPECT_TRUE(autograd::GetGrad(x).SharesStorageWith(dx));
}

TEST_F(Autograd, UnusedOutputGetsZeroGradient) {
  NDArray x = Vec({4}, {1.f, 2.f, 3.f, 4.f});
  autograd::AttachGrad(&x);
  std::vector<NDArray> parts;
  {
    auto recording = autograd::Record();
    parts = Invoke("split", {x}, {{"axis", "0"}, {"num_outputs", "2"}});
  }
  autograd::Backward({parts[1]});
  EXPECT_EQ(Values(autograd::GetGrad(x)), (std::vector<float>{0.f, 0.f, 1.f, 1.f}));
}

// The type conversions send each output's gradient back converted to its input's dtype (MXNet's
// _backward_cast and _backward_amp_*): a float16 input gets a float16 gradient, rounded to its 11
// significant bits, and a float32 input of a float16 output a float32 one.
TEST_F(Autograd, ConversionsGiveEachInputAGradientOfItsDtype) {
  NDArray x = Vec({2}, {1.f, 2.f});
  NDArray h = Vec({2}, {3.f, 4.f}).AsType(DType::kFloat16);
  NDArray z = Vec({2}, {5.f, 6.f});
  autograd::AttachGrad(&x);
  autograd::AttachGrad(&h);
  autograd::AttachGrad(&z);
  std::vector<NDArray> y;
  {
    auto recording = autograd::Record();
    y = Invoke("amp_multicast", {x, h}, {{"num_outputs", "2"}});  // float32, the widest
    y.push_back(op::Call("amp_cast", {z}, {{"dtype", "float16"}}));
  }
  ASSERT_EQ(y[1].dtype(), DType::kFloat32);
  ASSERT_EQ(y[2].dtype(), DType::kFloat16);
  const float not_a_half = 1.f + 1.f / 4096;  // rounds to 1 in float16
  autograd::Backward(y, {Vec({2}, {0.5f, 1.f}), Vec({2}, {not_a_half, 0.25f}),
                         Vec({2}, {2.f, -1.f}).AsType(DType::kFloat16)});
  EXPECT_EQ(autograd::GetGrad(x).dtype(), DType::kFloat32);
  EXPECT_EQ(Values(autograd::GetGrad(x)), (std::vector<float>{0.5f, 1.f}));
  EXPECT_EQ(autograd::GetGrad(h).dtype(), DType::kFloat16);
  EXPECT_EQ(Values(autograd::GetGrad(h)), (std::vector<float>{1.f, 0.25f}));
  EXPECT_EQ(autograd::GetGrad(z).dtype(), DType::kFloat32);
  EXPECT_EQ(Values(autograd::GetGrad(z)), (std::vector<float>{2.f, -1.f}));
}

TEST_F(Autograd, GradReturnsGradientsAndLeavesBuffers) {
  NDArray x = Vec({2}, {1.f, 2.f});
  NDArray y = Vec({2}, {3.f, 4.f});
  autograd::AttachGrad(&x);
  autograd::AttachGrad(&y);
  NDArray z;
  {
    auto recording = autograd::Record();
    z = x * y;
  }
  std::vector<NDArray> grads = autograd::Grad({z}, {y}, {}, /*retain_graph=*/true);
  ASSERT_EQ(grads.size(), 1u);
  EXPECT_EQ(Values(grads[0]), Values(x));
  EXPECT_EQ(Values(autograd::GetGrad(y)), (std::vector<float>{0.f, 0.f}));

  NDArray unmarked = Vec({2}, {1.f, 1.f});
  Error e = ErrorOf([&] { autograd::Grad({z}, {unmarked}, {}, true); });
  EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("not marked"), std::string::npos) << e.what();
  NDArray elsewhere = Vec({2}, {1.f, 1.f});
  autograd::AttachGrad(&elsewhere);
  e = ErrorOf([&] { autograd::Grad({z}, {elsewhere}); });
  EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("not reachable"), std::string::npos) << e.what();
}

TEST_F(Autograd, HeadThatIsAVariable) {
  NDArray x = Vec({2}, {1.f, 2.f});
  autograd::AttachGrad(&x);
  NDArray head = Vec({2}, {0.5f, 7.f});
  autograd::Backward({x}, {head});
  EXPECT_EQ(Values(autograd::GetGrad(x)), Values(head));
  std::vector<NDArray> grads = autograd::Grad({x}, {x}, {head});
  EXPECT_FALSE(grads[0].SharesStorageWith(head));  // a new array, as documented
  EXPECT_EQ(Values(grads[0]), Values(head));
}

TEST_F(Autograd, ViewsAndCopiesAreRecorded) {
  NDArray x = Vec({2, 3}, {1, 2, 3, 4, 5, 6});
  autograd::AttachGrad(&x);
  NDArray z;
  {
    auto recording = autograd::Record();
    NDArray flat = x.Reshape({6});
    z = flat.Copy() * flat;
  }
  autograd::Backward({z});
  EXPECT_EQ(autograd::GetGrad(x).shape(), Shape({2, 3}));
  EXPECT_EQ(Values(autograd::GetGrad(x)), (std::vector<float>{2, 4, 6, 8, 10, 12}));
}

TEST_F(Autograd, InPlaceUpdateOfARecordedArrayFails) {
  NDArray x = Vec({2}, {1.f, 2.f});
  autograd::AttachGrad(&x);
  auto recording = autograd::Record();
  NDArray y = x * 2.f;
  Error e = ErrorOf([&] { y += x; });
  EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("in-place"), std::string::npos) << e.what();
  // An array off the tape takes the result's place on it.
  NDArray c = Vec({2}, {10.f, 20.f});
  c += x;
  NDArray z = c * 3.f;
  autograd::Backward({z});
  EXPECT_EQ(Values(autograd::GetGrad(x)), (std::vector<float>{3.f, 3.f}));
}

TEST_F(Autograd, FullyConnectedGradients) {
  // y = x W^T + b with x (2, 3), W (2, 3): dx = dy W, dW = dy^T x, db = sum_rows(dy).
  NDArray x = Vec({2, 3}, {1, 2, 3, 4, 5, 6});
  NDArray w = Vec({2, 3}, {1, 0, -1, 2, 1, 0});
  NDArray b = Vec({2}, {0.5f, -0.5f});
  for (NDArray* v : {&x, &w, &b}) autograd::AttachGrad(v);
  NDArray y;
  {
    auto recording = autograd::Record();
    y = op::FullyConnected(x, w, b, 2);
  }
  autograd::Backward({y}, {Vec({2, 2}, {1, 2, 3, 4})});
  EXPECT_EQ(Values(autograd::GetGrad(x)), (std::vector<float>{5, 2, -1, 11, 4, -3}));
  EXPECT_EQ(Values(autograd::GetGrad(w)), (std::vector<float>{13, 17, 21, 18, 24, 30}));
  EXPECT_EQ(Values(autograd::GetGrad(b)), (std::vector<float>{4, 6}));
}

TEST_F(Autograd, MarkVariablesChecksItsArguments) {
  NDArray x = Vec({2}, {1.f, 2.f});
  EXPECT_EQ(ErrorOf([&] {
              autograd::MarkVariables({&x}, {NDArray::Zeros({3})}, {autograd::GradReq::kWrite});
            }).code(),
            StatusCode::kShapeError);
  NDArray ints = NDArray::Zeros({2}, DType::kInt32);
  EXPECT_EQ(ErrorOf([&] { autograd::AttachGrad(&ints); }).code(), StatusCode::kTypeError);
  EXPECT_EQ(ErrorOf([&] { autograd::MarkVariables({&x}, {}, {}); }).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ErrorOf([&] { autograd::AttachGrad(nullptr); }).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(autograd::GetGrad(x).is_none());
}

// In training mode a hybridized block runs its forward eagerly, so Dropout drops, as MXNet's
// hybridized blocks do under train_mode.
TEST_F(Autograd, HybridizedBlockTrains) {
  gluon::Dropout dropout(0.5f);
  dropout.Initialize();
  dropout.Hybridize();
  NDArray ones = NDArray::Ones({4096});
  EXPECT_EQ(Values(dropout(ones)), Values(ones));
  auto train = autograd::TrainMode();
  int64_t zeros = 0;
  for (float v : Values(dropout(ones))) zeros += v == 0.f;
  EXPECT_GT(zeros, 1500);
}

// Under recording a hybridized block runs its forward eagerly, so its ops are on the tape.
TEST_F(Autograd, HybridizedBlockIsRecorded) {
  gluon::Dense dense(3, "tanh");
  dense.Initialize();
  NDArray x = Vec({1, 2}, {0.5f, -1.f});
  autograd::AttachGrad(&x);
  NDArray eager_grad;
  for (bool hybridized : {false, true}) {
    dense.Hybridize(hybridized);
    NDArray y;
    {
      auto recording = autograd::Record();
      y = dense(x);
    }
    autograd::Backward({y});
    if (!hybridized) {
      eager_grad = autograd::GetGrad(x).Copy();
    } else {
      EXPECT_EQ(BitDifference(autograd::GetGrad(x), eager_grad), "");
    }
  }
}

}  // namespace
}  // namespace hybridnet
