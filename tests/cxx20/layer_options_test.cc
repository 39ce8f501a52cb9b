// The layer options as C++20 users write them: designated initializers (this file is compiled as
// C++20; the library and the other tests as C++17, with the set_* setters).
#include <gtest/gtest.h>

#include "hybridnet/gluon/conv_layers.h"
#include "hybridnet/gluon/loss.h"

namespace hybridnet {
namespace gluon {
namespace {

std::string Json(HybridBlock& block) { return block(Symbol::Var("data")).ToJSON(); }

TEST(LayerOptionsCxx20, DesignatedInitializersEqualTheSetters) {
  Conv2D designated({.channels = 64, .kernel_size = {3, 3}, .padding = {1, 1}, .use_bias = false},
                    "conv_");
  Conv2D chained(
      ConvOptions().set_channels(64).set_kernel_size(3).set_padding(1).set_use_bias(false),
      "conv_");
  EXPECT_EQ(Json(designated), Json(chained));
  EXPECT_EQ(designated.weight()->shape(), Shape({64, 0, 3, 3}));
  EXPECT_EQ(designated.bias(), nullptr);

  MaxPool2D pool({.pool_size = 3, .strides = 2, .ceil_mode = true}, "pool_");
  EXPECT_EQ(Json(pool),
            Json(*std::make_shared<MaxPool2D>(
                PoolOptions().set_pool_size(3).set_strides(2).set_ceil_mode(true), "pool_")));

  Dense dense({.units = 4, .activation = "relu", .in_units = 3}, "dense_");
  EXPECT_EQ(dense.weight()->shape(), Shape({4, 3}));
  BatchNorm bn({.epsilon = 1e-3, .scale = false}, "bn_");
  EXPECT_FALSE(bn.gamma()->differentiable());
}

TEST(LayerOptionsCxx20, LossOptionsTooAndWeightNone) {
  auto json = [](Loss& loss) {
    return loss.CallSymbolic({Symbol::Var("pred"), Symbol::Var("label")})[0].ToJSON();
  };
  SoftmaxCrossEntropyLoss designated({.sparse_label = false, .weight = 0.5f}, "loss_");
  SoftmaxCrossEntropyLoss chained(SoftmaxCELossOptions().set_sparse_label(false).set_weight(0.5f),
                                  "loss_");
  EXPECT_EQ(json(designated), json(chained));
  EXPECT_EQ(designated.weight(), 0.5f);
  EXPECT_EQ(L1Loss({.batch_axis = 1}).weight(), std::nullopt);
}

}  // namespace
}  // namespace gluon
}  // namespace hybridnet
