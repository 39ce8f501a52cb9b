// _sg_mkldnn_conv's nested graph checks, and which oneDNN int8 kernel the convolutions of an
// image network get on this CPU (oneDNN's JIT ones for VNNI where the CPU has it, never its
// reference or GEMM fallbacks).
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>

#include "common/square_conv_spec.h"
#include "common/test_util.h"
#include "hybridnet/executor.h"
#include "hybridnet/imperative.h"
#include "hybridnet/op.h"
#include "hybridnet/symbol.h"
#include "kernels/onednn.h"
#include "kernels/onednn_convolution_int8.h"
#include "kernels/threads.h"

namespace hybridnet {
namespace {

AttrDict Conv3x3() {
  return {{"kernel", "(3, 3)"}, {"pad", "(1, 1)"}, {"num_filter", "4"}, {"no_bias", "True"}};
}

// A _sg_mkldnn_conv with flags `flags` around the nested graph `graph`.
NodeAttrs SgConv(const AttrDict& flags, const Symbol& graph) {
  NodeAttrs attrs = MakeNodeAttrs("_sg_mkldnn_conv", "sg", flags);
  attrs.subgraphs.push_back(std::make_shared<const Symbol>(graph));
  return attrs;
}

Symbol ConvGraph() {
  return Symbol::Create("Convolution", {Symbol::Var("data"), Symbol::Var("weight")}, Conv3x3(),
                        "conv");
}

void ExpectRejected(const NodeAttrs& attrs, StatusCode code, const std::string& needle) {
  try {
    attrs.op->InputNames(attrs);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("sg"), std::string::npos) << e.what();
  }
}

// A quantized _sg_mkldnn_conv: 3x3 convolution of 16 filters and relu, output range [0, 4].
NodeAttrs Int8ConvRelu(const std::string& name) {
  const Symbol conv_relu = Symbol::Create(
      "Activation",
      {Symbol::Create(
          "Convolution", {Symbol::Var("data"), Symbol::Var("weight")},
          {{"kernel", "(3, 3)"}, {"pad", "(1, 1)"}, {"num_filter", "16"}, {"no_bias", "True"}},
          "conv")},
      {{"act_type", "relu"}}, "relu");
  NodeAttrs attrs = MakeNodeAttrs("_sg_mkldnn_conv", name,
                                  {{"quantized", "true"},
                                   {"with_act", "true"},
                                   {"min_calib_range", "0"},
                                   {"max_calib_range", "4"}});
  attrs.subgraphs.push_back(std::make_shared<const Symbol>(conv_relu));
  return attrs;
}

// Runs `net` node by node and on the graph executor from input "data" = x: the same uint8 bytes,
// with `relayouts` re-layouts in the graph.
void ExpectGraphEqualsEagerUint8(const Symbol& net, const std::map<std::string, NDArray>& params,
                                 const NDArray& x, size_t relayouts) {
  std::map<std::string, NDArray> values = params;
  values["data"] = x;
  const NDArray eager = testing_util::RunNodeByNode(net, values)[0];
  GraphExecutor exec(net, {"data"}, params, ExecutorOptions());
  const NDArray graph = exec.Forward({x})[0];
  ASSERT_EQ(graph.dtype(), DType::kUint8);
  ASSERT_EQ(graph.shape(), eager.shape());
  EXPECT_EQ(std::memcmp(graph.raw_data(), eager.raw_data(), static_cast<size_t>(graph.size())), 0);
  EXPECT_EQ(exec.stats().num_relayouts, relayouts);
}

TEST(SgMkldnnConv, FlagsMustMatchTheNestedGraph) {
  ExpectRejected(SgConv({{"with_bn", "true"}}, ConvGraph()), StatusCode::kInvalidArgument,
                 "with_bn=1");
  Symbol relu = Symbol::Create("Activation", {ConvGraph()}, {{"act_type", "relu"}}, "relu");
  ExpectRejected(SgConv({}, relu), StatusCode::kInvalidArgument, "with_act=0");
  NodeAttrs none = MakeNodeAttrs("_sg_mkldnn_conv", "sg", {});
  ExpectRejected(none, StatusCode::kInvalidArgument, "subgraphs");
}

TEST(SgMkldnnConv, RejectsOpsItCannotFuse) {
  Symbol pool = Symbol::Create("Pooling", {ConvGraph()}, {{"kernel", "(2, 2)"}}, "pool");
  ExpectRejected(SgConv({}, pool), StatusCode::kUnsupported, "Pooling");
  Symbol softsign = Symbol::Create("Activation", {ConvGraph()}, {{"act_type", "softsign"}}, "act");
  ExpectRejected(SgConv({{"with_act", "true"}}, softsign), StatusCode::kUnsupported, "softsign");
}

TEST(SgMkldnnConv, ReadsTheOlderFlagNames) {
  Symbol relu = Symbol::Create("Activation", {ConvGraph()}, {{"act_type", "relu"}}, "relu");
  NodeAttrs attrs = SgConv({{"with_relu", "true"}, {"quantized", "true"}}, relu);
  EXPECT_EQ(attrs.op->InputNames(attrs),
            (std::vector<std::string>{"data", "weight", "data_min", "data_max"}));
}

// Two calibrated int8 convolutions (uint8 data and output, relu) and a residual one whose sum is
// the first's output, as quantize_net writes them: the graph executor keeps the int8 data
// channel-last between them (one re-layout in, one out) and gives the integers of the ops run
// one by one.
TEST(Int8Convolution, StaysChannelLastBetweenInt8ConvolutionsBitExact) {
  auto conv_relu = [](bool sum) {
    Symbol y = Symbol::Create(
        "Convolution", {Symbol::Var("data"), Symbol::Var("weight")},
        {{"kernel", "(3, 3)"}, {"pad", "(1, 1)"}, {"num_filter", "16"}, {"no_bias", "True"}},
        "conv");
    if (sum) y = Symbol::Create("elemwise_add", {y, Symbol::Var("sum")}, {}, "add");
    return Symbol::Create("Activation", {y}, {{"act_type", "relu"}}, "relu");
  };
  auto sg = [&](const std::string& name, const std::vector<Symbol>& inputs, bool sum) {
    AttrDict flags = {{"quantized", "true"}, {"min_calib_range", "0"}, {"max_calib_range", "4"}};
    flags[sum ? "with_postsum_act" : "with_act"] = "true";
    if (sum) flags["with_sum"] = "true";
    NodeAttrs attrs = MakeNodeAttrs("_sg_mkldnn_conv", name, flags);
    attrs.subgraphs.push_back(std::make_shared<const Symbol>(conv_relu(sum)));
    return Symbol::Create(attrs, inputs);
  };
  Symbol data = Symbol::Var("data");
  Symbol lo = Symbol::Var("data_min"), hi = Symbol::Var("data_max");
  Symbol c1 = sg("c1", {data, Symbol::Var("w1"), lo, hi}, false);
  Symbol c2 = sg("c2", {c1[0], Symbol::Var("w2"), c1[1], c1[2]}, false);
  Symbol c3 = sg("c3", {c2[0], Symbol::Var("w3"), c1[0], c2[1], c2[2], c1[1], c1[2]}, true);
  std::map<std::string, NDArray> params = {
      {"w1", NDArray::RandomUniform({16, 16, 3, 3}, -1.f, 1.f)},
      {"w2", NDArray::RandomUniform({16, 16, 3, 3}, -1.f, 1.f)},
      {"w3", NDArray::RandomUniform({16, 16, 3, 3}, -1.f, 1.f)},
      {"data_min", NDArray::Full({1}, 0.f)},
      {"data_max", NDArray::Full({1}, 2.f)}};
  NDArray x = NDArray::RandomUniform({1, 16, 9, 7}, 0.f, 255.f).AsType(DType::kUint8);
  ExpectGraphEqualsEagerUint8(c3, params, x, 2);
}

// A network's int8 ends as quantize_net writes them: float data quantized (calibrated uint8) for
// two int8 convolutions, then global average pooling. The quantization writes channel-last and
// the pooling reads it so: no re-layout at all (the pooled (1, C, 1, 1) is a view), and the
// integers of the ops run one by one.
TEST(Int8Convolution, QuantizesAndPoolsChannelLastWithoutRelayoutsBitExact) {
  auto sg = [&](const std::string& name, const std::vector<Symbol>& inputs) {
    return Symbol::Create(Int8ConvRelu(name), inputs);
  };
  Symbol q = Symbol::Create(
      "_contrib_quantize_v2", {Symbol::Var("data")},
      {{"out_type", "uint8"}, {"min_calib_range", "0"}, {"max_calib_range", "2"}}, "quantize");
  Symbol c1 = sg("c1", {q[0], Symbol::Var("w1"), q[1], q[2]});
  Symbol c2 = sg("c2", {c1[0], Symbol::Var("w2"), c1[1], c1[2]});
  Symbol pool =
      Symbol::Create("_contrib_quantized_pooling", {c2[0], c2[1], c2[2]},
                     {{"kernel", "(1, 1)"}, {"global_pool", "True"}, {"pool_type", "avg"}}, "pool");
  std::map<std::string, NDArray> params = {
      {"w1", NDArray::RandomUniform({16, 3, 3, 3}, -1.f, 1.f)},
      {"w2", NDArray::RandomUniform({16, 16, 3, 3}, -1.f, 1.f)}};
  NDArray x = NDArray::RandomUniform({1, 3, 11, 13}, -0.5f, 2.5f);
  ExpectGraphEqualsEagerUint8(pool, params, x, 0);
}

// A quantized _sg_mkldnn_conv called again with the same weight array: another batch, another
// thread count, another data range or rewritten weights give what a first call with them gives
// (a call reuses the node's last call, primitive and packed weights only for the same geometry,
// thread count, ranges and weight values).
TEST(Int8Convolution, RepeatedCallsFollowBatchThreadsRangesAndWeights) {
  const NodeAttrs attrs = Int8ConvRelu("c");
  const Symbol y = Symbol::Create(attrs, {Symbol::Var("data"), Symbol::Var("w"),
                                          Symbol::Var("data_min"), Symbol::Var("data_max")});
  auto run = [&](const NDArray& w, const NDArray& x, float data_max = 2.f) {
    std::map<std::string, NDArray> values = {{"data_min", NDArray::Full({1}, 0.f)},
                                             {"data_max", NDArray::Full({1}, data_max)}};
    values["w"] = w;
    values["data"] = x;
    return testing_util::RunNodeByNode(y, values)[0];
  };
  auto bytes_equal = [](const NDArray& a, const NDArray& b) {
    return a.shape() == b.shape() &&
           std::memcmp(a.raw_data(), b.raw_data(), static_cast<size_t>(a.size())) == 0;
  };
  NDArray w = NDArray::RandomUniform({16, 16, 3, 3}, -1.f, 1.f);
  const NDArray x1 = NDArray::RandomUniform({1, 16, 9, 7}, 0.f, 255.f).AsType(DType::kUint8);
  NDArray x2 = NDArray::RandomUniform({2, 16, 9, 7}, 0.f, 255.f).AsType(DType::kUint8);
  std::memcpy(x2.raw_data(), x1.raw_data(), static_cast<size_t>(x1.size()));

  // Each change comes right after the same call without it, which the node keeps as its last.
  const NDArray y1 = run(w, x1);
  ASSERT_EQ(y1.dtype(), DType::kUint8);
  EXPECT_TRUE(bytes_equal(run(w, x1), y1));
  const NDArray y2 = run(w, x2);
  EXPECT_EQ(std::memcmp(y2.raw_data(), y1.raw_data(), static_cast<size_t>(y1.size())), 0);
  EXPECT_TRUE(bytes_equal(y2, run(w.Copy(), x2)));  // a copy shares nothing kept with `w`

  EXPECT_TRUE(bytes_equal(run(w, x1), y1));
  const int threads = internal::KernelThreads();
  internal::SetKernelThreads(threads == 1 ? 2 : 1);
  EXPECT_TRUE(bytes_equal(run(w, x1), y1));
  internal::SetKernelThreads(threads);

  EXPECT_TRUE(bytes_equal(run(w, x1), y1));
  const NDArray wider = run(w, x1, 3.f);
  EXPECT_FALSE(bytes_equal(wider, y1));
  EXPECT_TRUE(bytes_equal(wider, run(w.Copy(), x1, 3.f)));

  EXPECT_TRUE(bytes_equal(run(w, x1), y1));
  float* values = static_cast<float*>(w.raw_data());
  for (int64_t i = 0; i < w.size(); ++i) values[i] = -values[i];
  const NDArray rewritten = run(w, x1);
  EXPECT_FALSE(bytes_equal(rewritten, y1));
  EXPECT_TRUE(bytes_equal(rewritten, run(w.Copy(), x1)));
}

TEST(Int8Convolution, ImageNetworkShapesGetJitKernels) {
  // ResNet-50's 7x7 stem (int8 data), a 3x3, 1x1s (one strided) and MobileNet v2's 3x3 depthwise
  // and int8-data 1x1, at batch 1. On AVX-512 VNNI the stem, the 1x1s and the depthwise run on
  // oneDNN's x8s8s32x kernels (jit_int8*), faster there than its brgemm ones.
  struct Shape4 {
    int64_t C, F, G, k, stride, hw;
    hybridnet::DType data;
    bool x8s8s32x;
  };
  const Shape4 shapes[] = {
      {3, 64, 1, 7, 2, 224, DType::kInt8, true},      {64, 64, 1, 3, 1, 56, DType::kUint8, false},
      {256, 64, 1, 1, 1, 56, DType::kUint8, true},    {256, 512, 1, 1, 2, 56, DType::kUint8, true},
      {144, 144, 144, 3, 2, 56, DType::kUint8, true}, {96, 24, 1, 1, 1, 56, DType::kInt8, true}};
  const std::string isa = internal::OneDnnDescription();
  for (const Shape4& s : shapes) {
    internal::Int8ConvCall c;
    c.geometry = testing_util::SquareConvSpec(1, s.C, s.F, s.G, s.k, s.stride, s.hw);
    c.data = s.data;
    c.out = DType::kUint8;
    c.output_scales = std::vector<float>(static_cast<size_t>(s.F), 0.01f);
    c.act.kind = internal::Int8Eltwise::Kind::kRelu;
    const std::string impl = internal::Int8ConvolutionImplementation(c);
    SCOPED_TRACE(impl + " on " + isa);
    EXPECT_EQ(impl.find("ref"), std::string::npos);
    EXPECT_EQ(impl.find("gemm"), std::string::npos);
    if (isa.find("avx512_core_vnni") != std::string::npos ||
        isa.find("avx512_core_bf16") != std::string::npos || isa.find("amx") != std::string::npos) {
      // oneDNN's JIT (jit_*, brgconv*, brdgmm*) kernels for VNNI or AMX.
      EXPECT_TRUE(impl.find("vnni") != std::string::npos || impl.find("amx") != std::string::npos);
    }
    const std::string vnni = ":avx512_core_vnni";
    if (s.x8s8s32x && impl.size() > vnni.size() &&
        impl.compare(impl.size() - vnni.size(), vnni.size(), vnni) == 0) {
      EXPECT_EQ(impl.rfind("jit_int8", 0), 0u);
    }
  }
}

}  // namespace
}  // namespace hybridnet
