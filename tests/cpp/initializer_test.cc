// Initializers: MXNet 1.9.1's exact values for a seed (the expected numbers below were printed
// by MXNet 1.9.1: mx.random.seed(s), then init._init_weight on arrays of the same shapes; the
// golden test python.golden_initializers compares every initializer against MXNet itself),
// statistics, Orthogonal's orthogonality, Bilinear's kernel, dumps() text, name rules, Mixed,
// Load, Parameter::Cast and errors.
#include "hybridnet/gluon/initializer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "common/test_util.h"
#include "hybridnet/gluon/nn.h"
#include "hybridnet/io/params.h"

namespace hybridnet {
namespace gluon {
namespace {

std::vector<float> Draw(const InitializerPtr& init, const Shape& shape,
                        DType dtype = DType::kFloat32) {
  NDArray a = NDArray::Zeros(shape, dtype);
  init->InitWeight("w", &a);
  return a.ToFloatVector();
}

TEST(InitializerTest, RandomInitializersRepeatMXNetsStreams) {
  Seed(3);
  std::vector<float> uniform = Draw(Uniform(1.f), Shape({4}));
  EXPECT_EQ(uniform, (std::vector<float>{0.17060446739196777f, -0.15668493509292603f,
                                         -0.11721783876419067f, -0.3449457287788391f}));
  // 100 values: two chunks, the first continuing the state the uniform draw advanced.
  std::vector<float> normal = Draw(Normal(1.f), Shape({100}));
  EXPECT_EQ(normal[0], -0.891849160194397f);
  EXPECT_EQ(normal[1], -1.8773914575576782f);
  EXPECT_EQ(normal[50], 0.18120557069778442f);
  EXPECT_EQ(normal[99], -0.5842004418373108f);
  std::vector<float> xavier = Draw(Xavier("gaussian", "in", 2.f), Shape({3, 2, 2, 2}));
  EXPECT_EQ(xavier[0], -0.4213985800743103f);
  EXPECT_EQ(xavier[23], -0.5830652713775635f);
  // float64 parameters draw in double, as MXNet does.
  Seed(7);
  NDArray f64 = NDArray::Zeros(Shape({2, 3}), DType::kFloat64);
  Uniform(1.f)->InitWeight("w", &f64);
  const std::vector<double> expected = {0.8350324609449875,  0.9954143454357878,
                                        -0.4132251549746859, -0.7416971514908239,
                                        0.21712866764270444, 0.8680342293345564};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(f64.data<double>()[i], expected[i]);
}

TEST(InitializerTest, StatisticsMatchTheDistributions) {
  Seed(11);
  // Xavier uniform avg on (256, 128, 3, 3): bound sqrt(3 / ((128 + 256) * 9 / 2)).
  std::vector<float> w = Draw(Xavier(), Shape({256, 128, 3, 3}));
  const double bound = std::sqrt(3.0 / ((128 + 256) * 9 / 2.0));
  double sum = 0, sq = 0;
  for (float v : w) {
    ASSERT_LE(std::abs(v), bound);
    sum += v;
    sq += static_cast<double>(v) * v;
  }
  const double n = static_cast<double>(w.size());
  EXPECT_NEAR(sum / n, 0, 0.01 * bound);
  EXPECT_NEAR(std::sqrt(sq / n), bound / std::sqrt(3.0), 0.01 * bound);
  // MSRAPrelu: gaussian with std sqrt(2 / (1 + slope^2) / fan_in) for factor_type "in".
  std::vector<float> m = Draw(MSRAPrelu("in", 0.f), Shape({512, 400}));
  sq = 0;
  for (float v : m) sq += static_cast<double>(v) * v;
  EXPECT_NEAR(std::sqrt(sq / static_cast<double>(m.size())), std::sqrt(2.0 / 400),
              0.01 * std::sqrt(2.0 / 400));
}

TEST(InitializerTest, OrthogonalIsOrthogonal) {
  for (const auto& shape : {Shape({6, 4}), Shape({4, 2, 3}), Shape({5, 5})}) {
    for (const char* rand_type : {"uniform", "normal"}) {
      Seed(1);
      std::vector<float> w = Draw(Orthogonal(2.f, rand_type), shape);
      const int64_t rows = shape[0], cols = shape.Size() / rows;
      // The shorter side's vectors are orthogonal with norm `scale`.
      const bool by_rows = rows < cols;
      const int64_t count = by_rows ? rows : cols, length = by_rows ? cols : rows;
      auto at = [&](int64_t v, int64_t k) { return by_rows ? w[v * cols + k] : w[k * cols + v]; };
      for (int64_t u = 0; u < count; ++u) {
        for (int64_t v = 0; v < count; ++v) {
          double dot = 0;
          for (int64_t k = 0; k < length; ++k) dot += at(u, k) * at(v, k);
          EXPECT_NEAR(dot, u == v ? 4.0 : 0.0, 1e-5) << shape << " " << rand_type;
        }
      }
    }
  }
}

TEST(InitializerTest, BilinearIsTheUpsamplingKernel) {
  // MXNet's kernel for a 4x4 filter: the outer product of (1, 3, 3, 1) / 4 with itself.
  std::vector<float> k = Draw(Bilinear(), Shape({2, 1, 4, 4}));
  const float edge[4] = {0.25f, 0.75f, 0.75f, 0.25f};
  for (int c = 0; c < 2; ++c) {
    for (int y = 0; y < 4; ++y) {
      for (int x = 0; x < 4; ++x) EXPECT_EQ(k[c * 16 + y * 4 + x], edge[y] * edge[x]);
    }
  }
  EXPECT_THROW(Draw(Bilinear(), Shape({4, 4})), Error);
}

TEST(InitializerTest, LSTMBiasSetsTheForgetGate) {
  std::vector<float> b = Draw(LSTMBias(2.5f), Shape({12}));
  for (int i = 0; i < 12; ++i) EXPECT_EQ(b[i], i >= 3 && i < 6 ? 2.5f : 0.f) << i;
}

TEST(InitializerTest, DumpsIsMXNetsText) {
  // C++ numbers are floats, written as Python writes floats.
  EXPECT_EQ(Xavier("uniform", "in", 2.f)->Dumps(),
            R"(["xavier", {"rnd_type": "uniform", "factor_type": "in", "magnitude": 2.0}])");
  EXPECT_EQ(InitializerByName(R"(["xavier", {"magnitude": 2}])")->Dumps(),
            R"(["xavier", {"rnd_type": "uniform", "factor_type": "avg", "magnitude": 2}])");
  EXPECT_EQ(InitializerByName(R"(["xavier", {"magnitude": 2.24}])")->Dumps(),
            R"(["xavier", {"rnd_type": "uniform", "factor_type": "avg", "magnitude": 2.24}])");
  EXPECT_EQ(MSRAPrelu()->Dumps(), R"(["msraprelu", {"factor_type": "avg", "slope": 0.25}])");
  EXPECT_EQ(InitializerByName("orthogonal")->Dumps(), "orthogonal");
  EXPECT_EQ(InitializerByName(R"(["orthogonal", {}])")->Dumps(),
            R"(["orthogonal", {"scale": 1.414, "rand_type": "uniform"}])");
  EXPECT_EQ(InitializerByName(R"(["lstmbias", {}])")->Dumps(),
            R"(["lstmbias", {"forget_bias": 1.0}])");
  EXPECT_EQ(Uniform()->Dumps(), R"(["uniform", {"scale": 0.07}])");
  EXPECT_EQ(Constant(2.f)->Dumps(), R"(["constant", {"value": 2.0}])");
  EXPECT_EQ(Bilinear()->Dumps(), R"(["bilinear", {}])");
  EXPECT_EQ(Zero()->Dumps(), "zeros");
  EXPECT_EQ(One()->Dumps(), "ones");
  // The text makes the same initializer again.
  for (const auto& init : {Xavier("gaussian", "out", 1.5f), MSRAPrelu("in", 0.1f),
                           Orthogonal(0.5f, "normal"), LSTMBias(3.f), Normal(0.2f)}) {
    EXPECT_EQ(InitializerByName(init->Dumps())->Dumps(), init->Dumps());
  }
}

TEST(InitializerTest, FillDispatchesOnTheNameAsMXNet) {
  NDArray a = NDArray::Zeros(Shape({2, 2}));
  One()->Fill("dense0_bias", &a);  // MXNet's _init_bias: zeros whatever the initializer
  EXPECT_EQ(a.ToFloatVector(), std::vector<float>(4, 0.f));
  Zero()->Fill("bn_gamma", &a);
  EXPECT_EQ(a.ToFloatVector(), std::vector<float>(4, 1.f));
  Constant(3.f)->Fill("dense0_weight", &a);
  EXPECT_EQ(a.ToFloatVector(), std::vector<float>(4, 3.f));
  EXPECT_THROW(Uniform()->Fill("strange_name", &a), Error);
  // Gluon applies the weight rule whatever the name (MXNet's "__init__" attribute).
  Constant(3.f)->InitWeight("dense0_bias", &a);
  EXPECT_EQ(a.ToFloatVector(), std::vector<float>(4, 3.f));
}

TEST(InitializerTest, MixedPicksTheFirstMatchingPattern) {
  InitializerPtr mixed = Mixed({"bias", ".*"}, {Constant(5.f), One()});
  NDArray a = NDArray::Zeros(Shape({3}));
  mixed->InitWeight("bias_of_x", &a);
  EXPECT_EQ(a.ToFloatVector(), std::vector<float>(3, 5.f));
  mixed->InitWeight("dense0_bias", &a);  // re.match: anchored at the start
  EXPECT_EQ(a.ToFloatVector(), std::vector<float>(3, 1.f));
  InitializerPtr again = InitializerByName(mixed->Dumps());
  again->InitWeight("bias2", &a);
  EXPECT_EQ(a.ToFloatVector(), std::vector<float>(3, 5.f));
  EXPECT_THROW(Mixed({"a"}, {One()})->InitWeight("b", &a), Error);
  EXPECT_THROW(Mixed({"a", "b"}, {One()}), Error);
  EXPECT_THROW(Mixed({"("}, {One()}), Error);
}

TEST(InitializerTest, LoadCopiesByNameAndFallsBack) {
  NDArray saved = NDArray::Full(Shape({2}), 7.0);
  InitializerPtr load = Load({{"arg:fc_weight", saved}}, Zero());
  NDArray a = NDArray::Full(Shape({2}), 1.0);
  load->InitWeight("fc_weight", &a);
  EXPECT_EQ(a.ToFloatVector(), std::vector<float>(2, 7.f));
  load->InitWeight("other", &a);
  EXPECT_EQ(a.ToFloatVector(), std::vector<float>(2, 0.f));
  NDArray wrong = NDArray::Zeros(Shape({3}));
  EXPECT_THROW(load->InitWeight("fc_weight", &wrong), Error);
  EXPECT_THROW(Load({{"x", saved}})->InitWeight("y", &a), Error);

  const std::string path = testing_util::TmpPath("init_load.params");
  NDArrayList list;
  list.arrays = {saved};
  list.names = {"aux:bn_running_mean"};
  SaveNDArrayList(path, list);
  InitializerPtr from_file =
      InitializerByName(R"(["load", {"param": ")" + path + R"(", "default_init": "ones"}])");
  from_file->InitWeight("bn_running_mean", &a);
  EXPECT_EQ(a.ToFloatVector(), std::vector<float>(2, 7.f));
  from_file->InitWeight("bn_running_var", &a);
  EXPECT_EQ(a.ToFloatVector(), std::vector<float>(2, 1.f));
  std::remove(path.c_str());
}

TEST(InitializerTest, BadArgumentsAreClearErrors) {
  EXPECT_THROW(InitializerByName("nosuch"), Error);
  EXPECT_THROW(InitializerByName(R"(["xavier", {"magnitud": 2}])"), Error);
  EXPECT_THROW(InitializerByName(R"(["xavier", {"magnitude": "big"}])"), Error);
  EXPECT_THROW(InitializerByName(R"(["constant", {}])"), Error);
  EXPECT_THROW(InitializerByName(R"(["orthogonal", {"rand_type": "cauchy"}])"), Error);
  EXPECT_THROW(InitializerByName("[\"xavier\""), Error);
  EXPECT_THROW(InitializerByName("mixed"), Error);  // needs patterns and initializers
  EXPECT_THROW(Draw(Xavier(), Shape({5})), Error);
  EXPECT_THROW(Draw(Uniform(), Shape({2}), DType::kInt32), Error);
}

TEST(InitializerTest, ParameterCastKeepsValuesAndGradient) {
  auto dense = std::make_shared<Dense>(
      DenseOptions().set_units(2).set_in_units(3).set_weight_initializer(Constant(0.5f)));
  dense->Initialize();
  dense->weight()->AttachGrad();
  dense->Cast(DType::kFloat64);
  EXPECT_EQ(dense->weight()->dtype(), DType::kFloat64);
  EXPECT_EQ(dense->weight()->data().dtype(), DType::kFloat64);
  EXPECT_EQ(dense->weight()->data().ToFloatVector(), std::vector<float>(6, 0.5f));
  EXPECT_EQ(dense->weight()->Grad().dtype(), DType::kFloat64);
  // The float64 layer runs (FullyConnected has a float64 kernel), and a cast back runs again.
  NDArray y64 = (*dense)(NDArray::Full(Shape({1, 3}), 1.0, DType::kFloat64));
  EXPECT_EQ(y64.dtype(), DType::kFloat64);
  EXPECT_EQ(y64.ToFloatVector(), std::vector<float>(2, 1.5f));
  dense->Cast(DType::kFloat32);
  EXPECT_EQ(dense->weight()->Grad().dtype(), DType::kFloat32);
  NDArray y = (*dense)(NDArray::Full(Shape({1, 3}), 1.0));
  EXPECT_EQ(y.ToFloatVector(), std::vector<float>(2, 1.5f));
  // Before initialization, the dtype the value is drawn in.
  auto later = std::make_shared<Dense>(DenseOptions().set_units(2).set_in_units(2));
  later->Cast(DType::kFloat64);
  later->Initialize();
  EXPECT_EQ(later->weight()->data().dtype(), DType::kFloat64);
}

}  // namespace
}  // namespace gluon
}  // namespace hybridnet
