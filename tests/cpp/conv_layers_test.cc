// Gluon layers of conv nets (hybridnet/gluon/conv_layers.h): MXNet's names, attribute strings,
// parameter shapes with deferred dims, auxiliary states, hybridize and export.
#include "hybridnet/gluon/conv_layers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "common/test_util.h"
#include "hybridnet/gluon/symbol_block.h"
#include "hybridnet/io/params.h"

namespace hybridnet {
namespace gluon {
namespace {

using namespace ::hybridnet::testing_util;  // NOLINT: the shared test helpers

// The attributes of the (only) node with op `op` in the symbol's JSON.
AttrDict NodeAttrsOf(const Symbol& s, const std::string& op) {
  IndexedGraph g(s.outputs);
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) {
    const Node* n = g[nid].node;
    if (!n->IsVariable() && n->attrs.op->name == op) return n->attrs.dict;
  }
  ADD_FAILURE() << "no " << op << " node";
  return {};
}

std::vector<std::string> OpNames(const Symbol& s) {
  std::vector<std::string> names;
  IndexedGraph g(s.outputs);
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid)
    if (!g[nid].node->IsVariable()) names.push_back(g[nid].node->name());
  return names;
}

// An options struct as the layer headers write them, with a field away from its neighbours.
struct ExampleOptions {
  HN_LAYER_OPTIONS_BEGIN;
  HN_REQUIRED_LAYER_OPTION(ExampleOptions, int64_t, units) = 0;
  /// documented
  HN_LAYER_OPTION(ExampleOptions, std::string, name) = "x";

  HN_LAYER_OPTION(ExampleOptions, IntTuple, kernel) = {3, 3};
  HN_LAYER_OPTIONS_END;
};

// The field list the C API reads attributes through is the declaration itself: every field
// once, in declaration order, with its required flag, for const and mutable options.
TEST(ConvLayers, ForEachFieldWalksTheDeclaredFields) {
  std::vector<std::string> names, required;
  ExampleOptions example = ExampleOptions().set_units(4);
  ForEachField(example, [&](const char* name, auto& value, bool is_required) {
    names.push_back(name);
    if (is_required) required.push_back(name);
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::string>) value = "y";
  });
  EXPECT_EQ(names, (std::vector<std::string>{"units", "name", "kernel"}));
  EXPECT_EQ(required, (std::vector<std::string>{"units"}));
  EXPECT_EQ(example.name, "y");  // the visitor gets the field itself
  EXPECT_EQ(example.units, 4);
  names.clear();
  const ExampleOptions& constant = example;
  ForEachField(constant, [&](const char* name, const auto&, bool) { names.push_back(name); });
  EXPECT_EQ(names.size(), 3u);

  // The layers' own: what the C API requires, and each field once.
  auto required_of = [](auto options) {
    std::vector<std::string> found;
    std::set<std::string> seen;
    ForEachField(options, [&](const char* name, auto&, bool is_required) {
      EXPECT_TRUE(seen.insert(name).second) << name;
      if (is_required) found.push_back(name);
    });
    return found;
  };
  using Names = std::vector<std::string>;
  EXPECT_EQ(required_of(ConvOptions()), (Names{"channels", "kernel_size"}));
  EXPECT_EQ(required_of(PoolOptions()), Names{});
  EXPECT_EQ(required_of(BatchNormOptions()), Names{});
  EXPECT_EQ(required_of(DenseOptions()), Names{"units"});
  EXPECT_EQ(required_of(LeakyReLUOptions()), Names{"alpha"});
  EXPECT_EQ(required_of(PReLUOptions()), Names{});
}

TEST(ConvLayers, OptionsConstructorsEqualThePositionalOnes) {
  auto json = [](HybridBlock&& block) { return block(Symbol::Var("data")).ToJSON(); };
  EXPECT_EQ(json(LeakyReLU(LeakyReLUOptions().set_alpha(0.2), "l_")), json(LeakyReLU(0.2, "l_")));
  EXPECT_EQ(json(ELU(ELUOptions().set_alpha(0.5), "e_")), json(ELU(0.5, "e_")));
  EXPECT_EQ(json(Activation(ActivationOptions().set_activation("tanh"), "a_")),
            json(Activation("tanh", "a_")));
  EXPECT_EQ(json(Dropout(DropoutOptions().set_rate(0.3f), "d_")), json(Dropout(0.3f, "d_")));
  PReLU prelu(PReLUOptions().set_in_channels(3), "p_");
  EXPECT_EQ(prelu.alpha()->shape(), Shape({3}));
  EXPECT_THROW(LeakyReLU(LeakyReLUOptions().set_alpha(-1)), Error);
}

TEST(ConvLayers, Conv2DWritesMXNetsAttributesAndDefersInputChannels) {
  auto conv = std::make_shared<Conv2D>(ConvOptions()
                                           .set_channels(8)
                                           .set_kernel_size(3)
                                           .set_strides(2)
                                           .set_padding(1)
                                           .set_activation("relu")
                                           .set_use_bias(false));
  EXPECT_EQ(conv->weight()->shape(), Shape({8, 0, 3, 3}));
  EXPECT_EQ(conv->bias(), nullptr);
  conv->Initialize();
  NDArray y = (*conv)(NDArray::RandomNormal({2, 5, 9, 9}));
  EXPECT_EQ(y.shape(), Shape({2, 8, 5, 5}));
  EXPECT_EQ(conv->weight()->shape(), Shape({8, 5, 3, 3}));
  Symbol s = (*conv)(Symbol::Var("data"));
  AttrDict want{{"dilate", "(1, 1)"}, {"kernel", "(3, 3)"}, {"layout", "NCHW"},
                {"no_bias", "True"},  {"num_filter", "8"},  {"num_group", "1"},
                {"pad", "(1, 1)"},    {"stride", "(2, 2)"}};
  EXPECT_EQ(NodeAttrsOf(s, "Convolution"), want);
  const std::string p = conv->prefix();
  EXPECT_EQ(OpNames(s), (std::vector<std::string>{p + "fwd", p + "relu_fwd"}));
  EXPECT_EQ(conv->ToString(),
            "Conv2D(5 -> 8, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), bias=False, "
            "Activation(relu))");
}

TEST(ConvLayers, KnownInChannelsAndGroupsShapeTheWeight) {
  Conv2D conv(ConvOptions()
                  .set_channels(8)
                  .set_kernel_size({3, 1})
                  .set_padding({1, 0})
                  .set_groups(4)
                  .set_in_channels(16));
  EXPECT_EQ(conv.weight()->shape(), Shape({8, 4, 3, 1}));
  EXPECT_EQ(conv.bias()->shape(), Shape({8}));
  auto conv8 = [] { return ConvOptions().set_channels(8).set_kernel_size(3); };
  // a 3-tuple for a 2-D kernel
  EXPECT_EQ(ErrorOf([&] {
              Conv2D(conv8().set_kernel_size({3, 3, 3}));
            }).code(),
            StatusCode::kInvalidArgument);
  // layout of the wrong rank, channels or kernel missing, output_padding without transpose
  EXPECT_NE(std::string(ErrorOf([&] { Conv2D(conv8().set_layout("NCW")); }).what())
                .find("Conv2D: layout 'NCW' does not describe 2-D data"),
            std::string::npos);
  EXPECT_NE(std::string(ErrorOf([] { Conv2D(ConvOptions().set_kernel_size(3)); }).what())
                .find("Conv2D: channels must be >= 1, got 0"),
            std::string::npos);
  EXPECT_NE(std::string(ErrorOf([] { Conv1D(ConvOptions().set_channels(2)); }).what())
                .find("Conv1D: kernel_size is required"),
            std::string::npos);
  EXPECT_NE(std::string(ErrorOf([&] { Conv2D(conv8().set_output_padding(1)); }).what())
                .find("Conv2D takes no output_padding"),
            std::string::npos);
}

TEST(ConvLayers, Conv1DAnd3DAndTransposes) {
  Seed(3);
  auto net = std::make_shared<HybridSequential>();
  net->Add(
      std::make_shared<Conv1D>(ConvOptions().set_channels(4).set_kernel_size(3).set_padding(1)));
  net->Initialize();
  EXPECT_EQ((*net)(NDArray::RandomNormal({2, 3, 10})).shape(), Shape({2, 4, 10}));

  Conv3D c3(ConvOptions().set_channels(2).set_kernel_size({2, 3, 3}).set_padding({0, 1, 1}));
  c3.Initialize();
  EXPECT_EQ(c3(NDArray::RandomNormal({1, 3, 4, 5, 5})).shape(), Shape({1, 2, 3, 5, 5}));

  Conv2DTranspose t(ConvOptions()
                        .set_channels(6)
                        .set_kernel_size(3)
                        .set_strides(2)
                        .set_padding(1)
                        .set_output_padding(1)
                        .set_groups(2));
  EXPECT_EQ(t.weight()->shape(), Shape({0, 3, 3, 3}));  // (in, channels / groups, kh, kw)
  t.Initialize();
  EXPECT_EQ(t(NDArray::RandomNormal({1, 4, 5, 5})).shape(), Shape({1, 6, 10, 10}));
  EXPECT_EQ(t.weight()->shape(), Shape({4, 3, 3, 3}));
  AttrDict attrs = NodeAttrsOf(t(Symbol::Var("data")), "Deconvolution");
  EXPECT_EQ(attrs.at("adj"), "(1, 1)");
  EXPECT_EQ(attrs.at("num_group"), "2");

  Conv1DTranspose t1(ConvOptions().set_channels(2).set_kernel_size(4).set_strides(2));
  t1.Initialize();
  EXPECT_EQ(t1(NDArray::RandomNormal({1, 3, 5})).shape(), Shape({1, 2, 12}));
  Conv3DTranspose t3(ConvOptions().set_channels(2).set_kernel_size(2).set_strides(2));
  t3.Initialize();
  EXPECT_EQ(t3(NDArray::RandomNormal({1, 3, 2, 2, 2})).shape(), Shape({1, 2, 4, 4, 4}));
}

TEST(ConvLayers, PoolingAttributesAsMXNetWrites) {
  auto attrs = [](HybridBlock& b) { return NodeAttrsOf(b(Symbol::Var("data")), "Pooling"); };
  MaxPool2D max_default;
  EXPECT_EQ(attrs(max_default), (AttrDict{{"global_pool", "False"},
                                          {"kernel", "(2, 2)"},
                                          {"layout", "NCHW"},
                                          {"pad", "(0, 0)"},
                                          {"pool_type", "max"},
                                          {"pooling_convention", "valid"},
                                          {"stride", "(2, 2)"}}));
  MaxPool2D max_ceil(PoolOptions().set_pool_size(3).set_strides(2).set_ceil_mode(true));
  EXPECT_EQ(attrs(max_ceil).at("pooling_convention"), "full");
  AvgPool2D avg(
      PoolOptions().set_pool_size(3).set_strides(1).set_padding(1).set_count_include_pad(false));
  EXPECT_EQ(attrs(avg).at("count_include_pad"), "False");
  EXPECT_EQ(attrs(avg).at("stride"), "(1, 1)");
  GlobalAvgPool2D gap;
  EXPECT_EQ(attrs(gap), (AttrDict{{"global_pool", "True"},
                                  {"kernel", "(1, 1)"},
                                  {"layout", "NCHW"},
                                  {"pad", "(0, 0)"},
                                  {"pool_type", "avg"},
                                  {"pooling_convention", "full"},
                                  {"stride", "(1, 1)"}}));
  EXPECT_EQ(gap.prefix().substr(0, 4), "pool");

  NDArray x = NDArray::RandomNormal({1, 2, 7, 7});
  EXPECT_EQ(max_ceil(x).shape(), Shape({1, 2, 3, 3}));
  EXPECT_EQ(GlobalMaxPool2D()(x).shape(), Shape({1, 2, 1, 1}));
  EXPECT_EQ(MaxPool1D()(NDArray::RandomNormal({1, 2, 8})).shape(), Shape({1, 2, 4}));
  EXPECT_EQ(AvgPool3D()(NDArray::RandomNormal({1, 2, 4, 4, 4})).shape(), Shape({1, 2, 2, 2, 2}));
  EXPECT_EQ(GlobalAvgPool1D()(NDArray::RandomNormal({1, 2, 8})).shape(), Shape({1, 2, 1}));
  // Global average = plain mean of each plane.
  NDArray g = gap(x);
  std::vector<float> xv = x.ToFloatVector();
  double sum = 0;
  for (int i = 0; i < 49; ++i) sum += xv[static_cast<size_t>(i)];
  EXPECT_NEAR(g.ToFloatVector()[0], sum / 49, 1e-5);
}

TEST(ConvLayers, BatchNormHasAuxStatesExportedAsAux) {
  Seed(4);
  auto net = std::make_shared<HybridSequential>();
  auto conv = std::make_shared<Conv2D>(ConvOptions().set_channels(4).set_kernel_size(3));
  auto bn = std::make_shared<BatchNorm>();
  net->Add(conv, bn);
  EXPECT_EQ(bn->gamma()->shape(), Shape({0}));
  EXPECT_TRUE(bn->gamma()->differentiable());
  EXPECT_FALSE(bn->running_mean()->differentiable());
  EXPECT_FALSE(bn->running_var()->differentiable());
  net->Initialize();
  net->Hybridize();
  NDArray x = NDArray::RandomNormal({1, 3, 6, 6});
  NDArray y = (*net)(x);
  EXPECT_EQ(bn->running_var()->shape(), Shape({4}));
  bn->running_mean()->SetData(NDArray::RandomNormal({4}));
  bn->running_var()->SetData(NDArray::RandomUniform({4}, 0.5f, 2.f));
  y = (*net)(x);

  const Symbol& graph = net->CachedGraph();
  EXPECT_EQ(NodeAttrsOf(graph, "BatchNorm"), (AttrDict{{"axis", "1"},
                                                       {"eps", "1e-05"},
                                                       {"fix_gamma", "False"},
                                                       {"momentum", "0.9"},
                                                       {"use_global_stats", "False"}}));
  const std::string p = bn->prefix();
  EXPECT_EQ(graph.ListAuxiliaryStates(),
            (std::vector<std::string>{p + "running_mean", p + "running_var"}));
  net->Export(TmpPath("conv_bn"));
  NDArrayList list = LoadNDArrayList(TmpPath("conv_bn-0000.params"));
  std::vector<std::string> want{"arg:" + conv->prefix() + "weight",
                                "arg:" + conv->prefix() + "bias",
                                "arg:" + p + "gamma",
                                "arg:" + p + "beta",
                                "aux:" + p + "running_mean",
                                "aux:" + p + "running_var"};
  EXPECT_EQ(list.names, want);
  // The JSON marks the aux inputs with version 1, as MXNet does.
  std::string json = graph.ToJSON();
  EXPECT_NE(json.find(", 0, 1]"), std::string::npos);
  auto imported = SymbolBlock::Imports(TmpPath("conv_bn-symbol.json"), {"data"},
                                       TmpPath("conv_bn-0000.params"));
  EXPECT_TRUE(BitEqual((*imported)(x), y));

  BatchNorm fixed(BatchNormOptions().set_epsilon(1e-3).set_center(false).set_scale(false));
  EXPECT_FALSE(fixed.gamma()->differentiable());
  EXPECT_EQ(NodeAttrsOf(fixed(Symbol::Var("data")), "BatchNorm").at("fix_gamma"), "True");
  EXPECT_EQ(NodeAttrsOf(fixed(Symbol::Var("data")), "BatchNorm").at("eps"), "0.001");
}

TEST(ConvLayers, LeakyReLUFamily) {
  NDArray x = NDArray::FromVector({1, 2, 2}, {-2.f, -0.5f, 0.5f, 2.f});
  LeakyReLU leaky(0.1);
  EXPECT_EQ(leaky(x).ToFloatVector(), (std::vector<float>{-0.2f, -0.05f, 0.5f, 2.f}));
  EXPECT_EQ(NodeAttrsOf(leaky(Symbol::Var("data")), "LeakyReLU"),
            (AttrDict{{"act_type", "leaky"}, {"slope", "0.1"}}));
  PReLU prelu(Constant(0.25f), 2);
  prelu.Initialize();
  EXPECT_EQ(prelu.alpha()->shape(), Shape({2}));
  EXPECT_EQ(prelu(x).ToFloatVector(), (std::vector<float>{-0.5f, -0.125f, 0.5f, 2.f}));
  Symbol ps = prelu(Symbol::Var("data"));
  EXPECT_EQ(NodeAttrsOf(ps, "LeakyReLU"), (AttrDict{{"act_type", "prelu"}}));
  EXPECT_EQ(ps.ListArguments().back(), prelu.prefix() + "alpha");
  ELU elu(1.0);
  EXPECT_NEAR(elu(x).ToFloatVector()[0], std::expm1(-2.0), 1e-6);
  EXPECT_EQ(NodeAttrsOf(elu(Symbol::Var("data")), "LeakyReLU").at("slope"), "1.0");
  EXPECT_NEAR(SELU()(x).ToFloatVector()[3], 1.0507009873554805 * 2, 1e-5);
  EXPECT_NEAR(GELU()(x).ToFloatVector()[3], 2 * 0.5 * (1 + std::erf(2 / std::sqrt(2.0))), 1e-5);
}

TEST(ConvLayers, HybridConcurrentConcatenatesItsChildren) {
  Seed(5);
  auto cat = std::make_shared<HybridConcurrent>(1);
  cat->Add(
      std::make_shared<Conv2D>(ConvOptions().set_channels(2).set_kernel_size(1)),
      std::make_shared<Identity>(),
      std::make_shared<Conv2D>(ConvOptions().set_channels(3).set_kernel_size(3).set_padding(1)));
  cat->Initialize();
  NDArray x = NDArray::RandomNormal({1, 4, 5, 5});
  NDArray eager = (*cat)(x);
  EXPECT_EQ(eager.shape(), Shape({1, 9, 5, 5}));
  cat->Hybridize();
  EXPECT_TRUE(BitEqual((*cat)(x), eager));
  const Symbol& graph = cat->CachedGraph();
  EXPECT_EQ(NodeAttrsOf(graph, "Concat"), (AttrDict{{"dim", "1"}, {"num_args", "3"}}));
  EXPECT_EQ(OpNames(graph).back(), cat->prefix() + "concat0");

  auto plain = std::make_shared<Concurrent>(-1);
  plain->Add(std::make_shared<Identity>(), std::make_shared<Identity>());
  EXPECT_EQ((*plain)(NDArray::Ones({2, 3})).shape(), Shape({2, 6}));
}

TEST(ConvLayers, SmallConvNetHybridizesAndExportsBitIdentically) {
  Seed(6);
  auto net = std::make_shared<HybridSequential>();
  const ConvOptions conv3x3 = ConvOptions().set_channels(8).set_kernel_size(3).set_padding(1);
  net->Add(std::make_shared<Conv2D>(conv3x3), std::make_shared<BatchNorm>(),
           std::make_shared<Activation>("relu"), std::make_shared<MaxPool2D>(),
           std::make_shared<Conv2D>(ConvOptions(conv3x3).set_groups(8).set_activation("relu")),
           std::make_shared<PReLU>(),
           std::make_shared<AvgPool2D>(PoolOptions().set_strides(1).set_ceil_mode(true)),
           std::make_shared<GlobalMaxPool2D>(), std::make_shared<Flatten>(),
           std::make_shared<Dense>(5));
  net->Initialize();
  NDArray x = NDArray::RandomNormal({2, 3, 12, 12});
  NDArray eager = (*net)(x);
  EXPECT_EQ(eager.shape(), Shape({2, 5}));
  net->Hybridize();
  NDArray hybrid = (*net)(x);
  EXPECT_TRUE(BitEqual(eager, hybrid));
  EXPECT_GT(net->CachedStats().num_fused, 0u);  // BatchNorm + relu, conv + relu
  net->Export(TmpPath("small_cnn"));
  auto imported = SymbolBlock::Imports(TmpPath("small_cnn-symbol.json"), {"data"},
                                       TmpPath("small_cnn-0000.params"));
  EXPECT_TRUE(BitEqual((*imported)(x), eager));
  imported->Hybridize();
  EXPECT_TRUE(BitEqual((*imported)(x), eager));
}

}  // namespace
}  // namespace gluon
}  // namespace hybridnet
