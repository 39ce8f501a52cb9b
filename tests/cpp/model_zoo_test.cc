// The C++ model zoo (hybridnet/gluon/model_zoo.h): every name builds, parameter counts and names
// match MXNet 1.9.1's model zoo, models hybridize bit-identically and export/import round-trip.
// tests/golden/zoo/zoo_golden.py compares exports and outputs with a live MXNet.
#include "hybridnet/gluon/model_zoo.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "common/test_util.h"
#include "hybridnet/gluon/symbol_block.h"
#include "hybridnet/io/params.h"

namespace hybridnet {
namespace gluon {
namespace {

using namespace ::hybridnet::testing_util;  // NOLINT: the shared test helpers

size_t CountParameters(Block* net) {
  size_t n = 0;
  ParameterDict all = net->CollectParams();
  for (const auto& p : all.list()) n += static_cast<size_t>(p->shape().Size());
  return n;
}

TEST(ModelZoo, EveryNameBuildsAndUnknownNamesAreListed) {
  std::vector<std::string> names = model_zoo::ModelNames();
  EXPECT_EQ(names.size(), 34u);
  for (const auto& n : names) EXPECT_NO_THROW(model_zoo::GetModel(n)) << n;
  EXPECT_NO_THROW(model_zoo::GetModel("ResNet18_V1"));  // case-insensitive, as MXNet
  try {
    model_zoo::GetModel("resnet19_v1");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kNotFound);
    EXPECT_NE(std::string(e.what()).find("mobilenetv2_0.25"), std::string::npos) << e.what();
  }
  EXPECT_THROW(model_zoo::GetModel("vgg11", 10, /*thumbnail=*/true), Error);
}

// Parameter counts (including BatchNorm running statistics) of MXNet 1.9.1's model zoo (the
// bottleneck resnets, densenet, inception, vgg and alexnet are compared with MXNet's own exports
// in tests/golden/zoo).
TEST(ModelZoo, ParameterCountsMatchMXNet) {
  struct Expect {
    const char* name;
    int64_t size;
    size_t count;
    size_t params;
  };
  for (const Expect& e :
       {Expect{"resnet18_v1", 32, 11699112, 102}, Expect{"mobilenet0.25", 32, 475544, 137},
        Expect{"mobilenetv2_1.0", 32, 3539136, 266}, Expect{"squeezenet1.1", 224, 1235496, 52}}) {
    SCOPED_TRACE(e.name);
    auto net = model_zoo::GetModel(e.name);
    net->Initialize(Xavier());
    NDArray y = (*net)(NDArray::RandomUniform({1, 3, e.size, e.size}));
    EXPECT_EQ(y.shape(), Shape({1, 1000}));
    EXPECT_EQ(CountParameters(net.get()), e.count);
    EXPECT_EQ(net->CollectParams().size(), e.params);
  }
}

TEST(ModelZoo, NamesFollowMXNet) {
  auto net = model_zoo::GetModel("resnet18_v1");
  const std::string top = net->prefix();
  ASSERT_EQ(top.substr(0, 8), "resnetv1");
  std::vector<std::string> keys = net->CollectParams().Keys();
  EXPECT_EQ(keys.front(), top + "conv0_weight");
  EXPECT_NE(std::find(keys.begin(), keys.end(), top + "stage1_conv3_weight"), keys.end());
  EXPECT_NE(std::find(keys.begin(), keys.end(), top + "stage2_batchnorm2_running_var"),
            keys.end());  // stage2 block 0: body 0, 1, downsample 2
  EXPECT_EQ(keys.back(), top + "dense0_bias");

  auto v2 = model_zoo::GetModel("mobilenetv2_0.25");
  std::vector<std::string> v2keys = v2->CollectParams().Keys();
  const std::string p2 = v2->prefix();
  EXPECT_EQ(v2keys.front(), p2 + "features_conv0_weight");
  EXPECT_EQ(v2keys.back(), p2 + "output_pred_weight");
  EXPECT_NE(
      std::find(v2keys.begin(), v2keys.end(), p2 + "features_linearbottleneck16_conv2_weight"),
      v2keys.end());
}

TEST(ModelZoo, StructuralNamesMatchMXNetsSaveParameters) {
  Seed(1);
  auto net = model_zoo::GetModel("resnet18_v1", 10);
  net->Initialize();
  (*net)(NDArray::RandomUniform({1, 3, 32, 32}));
  net->SaveParameters(TmpPath("resnet18_structural.params"));
  NDArrayList list = LoadNDArrayList(TmpPath("resnet18_structural.params"));
  std::map<std::string, Shape> shapes;
  for (size_t i = 0; i < list.names.size(); ++i) shapes[list.names[i]] = list.arrays[i].shape();
  // Keys as MXNet's net.save_parameters writes them for resnet18_v1.
  EXPECT_EQ(shapes.at("features.0.weight"), Shape({64, 3, 7, 7}));
  EXPECT_EQ(shapes.at("features.4.0.body.0.weight"), Shape({64, 64, 3, 3}));
  EXPECT_EQ(shapes.at("features.5.0.downsample.1.running_mean"), Shape({128}));
  EXPECT_EQ(shapes.at("output.weight"), Shape({10, 512}));
  // Loading them back into a fresh model gives the same outputs.
  auto again = model_zoo::GetModel("resnet18_v1", 10);
  again->LoadParameters(TmpPath("resnet18_structural.params"));
  NDArray x = NDArray::RandomUniform({1, 3, 32, 32});
  EXPECT_TRUE(BitEqual((*again)(x), (*net)(x)));
}

TEST(ModelZoo, HybridizeIsBitIdenticalAndExportRoundTrips) {
  for (const char* name : {"resnet18_v2", "mobilenet0.5", "mobilenetv2_0.25"}) {
    SCOPED_TRACE(name);
    Seed(2);
    auto net = model_zoo::GetModel(name, 10);
    net->Initialize(Xavier());
    NDArray x = NDArray::RandomUniform({2, 3, 32, 32});
    NDArray eager = (*net)(x);
    EXPECT_EQ(eager.shape(), Shape({2, 10}));
    net->Hybridize();
    EXPECT_TRUE(BitEqual((*net)(x), eager));
    net->Export(TmpPath(std::string("zoo_") + name));
    auto imported =
        SymbolBlock::Imports(TmpPath(std::string("zoo_") + name + "-symbol.json"), {"data"},
                             TmpPath(std::string("zoo_") + name + "-0000.params"));
    imported->Hybridize();
    EXPECT_TRUE(BitEqual((*imported)(x), eager));
  }
}

TEST(ModelZoo, ThumbnailResNetForSmallImages) {
  auto net = model_zoo::GetModel("resnet18_v2", 10, /*thumbnail=*/true);
  net->Initialize();
  EXPECT_EQ((*net)(NDArray::RandomUniform({1, 3, 32, 32})).shape(), Shape({1, 10}));
  EXPECT_EQ(net->CollectParams().Keys()[4], net->prefix() + "conv0_weight");
}

}  // namespace
}  // namespace gluon
}  // namespace hybridnet
