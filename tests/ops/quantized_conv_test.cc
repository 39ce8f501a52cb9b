// _sg_mkldnn_conv's nested graph checks, and which oneDNN int8 kernel the convolutions of an
// image network get on this CPU (oneDNN's JIT ones for VNNI where the CPU has it, never its
// reference or GEMM fallbacks).
#include <gtest/gtest.h>

#include <string>

#include "hybridnet/imperative.h"
#include "hybridnet/op.h"
#include "hybridnet/symbol.h"
#include "kernels/onednn.h"
#include "kernels/onednn_convolution_int8.h"

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

TEST(Int8Convolution, ImageNetworkShapesGetJitKernels) {
  // ResNet-50's 7x7 stem (int8 data), a 3x3, a 1x1 and MobileNet v2's 3x3 depthwise, at batch 1.
  struct Shape4 {
    int64_t C, F, G, k, stride, hw;
    hybridnet::DType data;
  };
  const Shape4 shapes[] = {{3, 64, 1, 7, 2, 224, DType::kInt8},
                           {64, 64, 1, 3, 1, 56, DType::kUint8},
                           {256, 64, 1, 1, 1, 56, DType::kUint8},
                           {144, 144, 144, 3, 2, 56, DType::kUint8}};
  const std::string isa = internal::OneDnnDescription();
  for (const Shape4& s : shapes) {
    internal::Int8ConvCall c;
    internal::ConvSpec& g = c.geometry;
    g.N = 1;
    g.C = s.C;
    g.F = s.F;
    g.G = s.G;
    g.kernel[0] = g.kernel[1] = s.k;
    g.stride[0] = g.stride[1] = s.stride;
    g.pad_l[0] = g.pad_l[1] = g.pad_r[0] = g.pad_r[1] = s.k / 2;
    g.in[0] = g.in[1] = s.hw;
    g.out[0] = g.out[1] = (s.hw + 2 * (s.k / 2) - s.k) / s.stride + 1;
    g.channel_last = 1;
    c.data = s.data;
    c.out = DType::kUint8;
    c.output_scales = std::vector<float>(static_cast<size_t>(s.F), 0.01f);
    c.act.alg = internal::Int8Eltwise::kRelu;
    const std::string impl = internal::Int8ConvolutionImplementation(c);
    SCOPED_TRACE(impl + " on " + isa);
    EXPECT_EQ(impl.find("ref"), std::string::npos);
    EXPECT_EQ(impl.find("gemm"), std::string::npos);
    if (isa.find("avx512_core_vnni") != std::string::npos ||
        isa.find("avx512_core_bf16") != std::string::npos || isa.find("amx") != std::string::npos) {
      // oneDNN's JIT (jit_*, brgconv*, brdgmm*) kernels for VNNI or AMX.
      EXPECT_TRUE(impl.find("vnni") != std::string::npos || impl.find("amx") != std::string::npos);
    }
  }
}

}  // namespace
}  // namespace hybridnet
