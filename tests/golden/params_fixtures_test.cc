// Loads the MXNet-written NDArray list fixtures and checks the facts of
// shared/spec/mxnet-formats.md section 6.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "hybridnet/io/params.h"

namespace hybridnet {
namespace {

std::string Fixture(const std::string& name) { return std::string(HN_FIXTURES_DIR) + "/" + name; }

#define HN_REQUIRE_FIXTURES()                                 \
  ASSERT_TRUE(std::filesystem::is_directory(HN_FIXTURES_DIR)) \
      << "MXNet fixtures folder " << HN_FIXTURES_DIR << " is missing"

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

int CountPrefix(const std::vector<std::string>& names, const std::string& prefix) {
  int n = 0;
  for (const std::string& name : names) n += name.rfind(prefix, 0) == 0 ? 1 : 0;
  return n;
}

TEST(ParamsFixturesTest, LegacyV0ListOfSixAranges) {
  HN_REQUIRE_FIXTURES();
  EXPECT_EQ(ReadBytes(Fixture("legacy_ndarray.v0")).size(), 3224u);
  NDArrayList list = LoadNDArrayList(Fixture("legacy_ndarray.v0"));
  EXPECT_TRUE(list.names.empty());
  ASSERT_EQ(list.arrays.size(), 6u);
  EXPECT_EQ(list.record_versions, std::vector<int>(6, 0));
  std::vector<float> expected = NDArray::Arange(0, 128).ToFloatVector();
  for (const NDArray& a : list.arrays) {
    EXPECT_EQ(a.shape(), Shape({128}));
    EXPECT_EQ(a.dtype(), DType::kFloat32);
    EXPECT_EQ(a.ToFloatVector(), expected);
  }
}

TEST(ParamsFixturesTest, MeanImage) {
  HN_REQUIRE_FIXTURES();
  NDArrayList list = LoadNDArrayList(Fixture("mean_224.nd"));
  ASSERT_EQ(list.arrays.size(), 1u);
  EXPECT_EQ(list.names, std::vector<std::string>{"mean_img"});
  EXPECT_EQ(list.record_versions, std::vector<int>{0});
  const NDArray& mean = list.arrays[0];
  EXPECT_EQ(mean.shape(), Shape({3, 224, 224}));
  const float* v = mean.data<float>();
  EXPECT_NEAR(v[0], 125.838905, 1e-5);
  EXPECT_NEAR(v[1], 125.896332, 1e-5);
  EXPECT_NEAR(v[2], 125.960709, 1e-5);
  EXPECT_NEAR(v[mean.size() - 1], 101.763, 1e-3);
}

TEST(ParamsFixturesTest, MnistLeNetParameters) {
  HN_REQUIRE_FIXTURES();
  NDArrayList list = LoadNDArrayList(Fixture("mnist-lenet-0-0010.params"));
  const std::vector<std::pair<std::string, Shape>> expected = {
      {"arg:fullyconnected1_bias", {10}},
      {"arg:fullyconnected1_weight", {10, 500}},
      {"arg:convolution1_weight", {50, 20, 5, 5}},
      {"arg:fullyconnected0_bias", {500}},
      {"arg:convolution1_bias", {50}},
      {"arg:convolution0_weight", {20, 1, 5, 5}},
      {"arg:fullyconnected0_weight", {500, 800}},
      {"arg:convolution0_bias", {20}},
  };
  ASSERT_EQ(list.arrays.size(), expected.size());
  ASSERT_EQ(list.names.size(), expected.size());
  int64_t elements = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(list.names[i], expected[i].first);
    EXPECT_EQ(list.arrays[i].shape(), expected[i].second) << list.names[i];
    EXPECT_EQ(list.arrays[i].dtype(), DType::kFloat32);
    EXPECT_EQ(list.record_versions[i], 0);
    elements += list.arrays[i].size();
  }
  EXPECT_EQ(elements, 431080);
  EXPECT_FLOAT_EQ(list.arrays[0].data<float>()[0], -0.0448580198f);
}

TEST(ParamsFixturesTest, CifarResNet20V1AndExactRewrite) {
  HN_REQUIRE_FIXTURES();
  std::string bytes = ReadBytes(Fixture("cifar_resnet20_v1-0000.params"));
  ASSERT_EQ(bytes.size(), 1105597u);
  NDArrayList list = ParseNDArrayList(bytes, "cifar_resnet20_v1-0000.params");
  ASSERT_EQ(list.arrays.size(), 107u);
  ASSERT_EQ(list.names.size(), 107u);
  EXPECT_EQ(CountPrefix(list.names, "arg:"), 65);
  EXPECT_EQ(CountPrefix(list.names, "aux:"), 42);
  EXPECT_EQ(list.record_versions, std::vector<int>(107, 2));
  EXPECT_EQ(list.names.front(), "arg:cifarresnetv10_conv0_weight");
  EXPECT_EQ(list.arrays.front().shape(), Shape({16, 3, 3, 3}));
  EXPECT_FLOAT_EQ(list.arrays.front().data<float>()[0], 0.0444889888f);
  EXPECT_EQ(list.names.back(), "arg:cifarresnetv10_dense0_bias");
  EXPECT_EQ(list.arrays.back().shape(), Shape({10}));
  for (const NDArray& a : list.arrays) EXPECT_EQ(a.dtype(), DType::kFloat32);
  // Spec 3.6: writing the decoded contents back gives MXNet's file byte for byte.
  EXPECT_TRUE(SerializeNDArrayList(list) == bytes);
}

TEST(ParamsFixturesTest, CifarResNet20V2) {
  HN_REQUIRE_FIXTURES();
  std::string bytes = ReadBytes(Fixture("cifar_resnet20_v2-0000.params"));
  NDArrayList list = ParseNDArrayList(bytes, "cifar_resnet20_v2-0000.params");
  ASSERT_EQ(list.arrays.size(), 103u);
  EXPECT_EQ(CountPrefix(list.names, "arg:"), 63);
  EXPECT_EQ(CountPrefix(list.names, "aux:"), 40);
  EXPECT_EQ(list.names.front(), "arg:cifarresnetv20_batchnorm0_gamma");
  EXPECT_EQ(list.arrays.front().ToFloatVector(), (std::vector<float>{1, 1, 1}));
  EXPECT_TRUE(SerializeNDArrayList(list) == bytes);
}

}  // namespace
}  // namespace hybridnet
