// MXNet 1.9.1's int8 convolutions (src/operator/quantization/quantized_conv.cc and its oneDNN
// forward, src/operator/subgraph/mkldnn/mkldnn_conv.cc):
//
// _contrib_quantized_conv: uint8 or int8 data by int8 weights into int32 sums, plus the int8
// bias as it is (MXNet's oneDNN forward hands it to the primitive unscaled); the output's range
// is QuantizationRangeForMultiplication of the data's and the weights' (int8 by int8, as MXNet's).
//
// _sg_mkldnn_conv (also spelt _sg_onednn_conv): MXNet's fused convolution, a Convolution with an
// optional BatchNorm, activation (Activation, LeakyReLU or clip), elemwise_add of a sum input and
// activation after the sum, described by a nested graph ("subgraphs") and the flags with_bn,
// with_act, with_sum, with_postsum_act. In float it runs on our fused float kernels. Quantized,
// it takes float weights (and bias, BatchNorm parameters) and quantizes them once as MXNet does:
// BatchNorm folded into the weights and bias, weights scaled to int8 per output channel when the
// output is calibrated (min_calib_range, max_calib_range; int8 or uint8 output) and per tensor
// otherwise (int32 output), the bias to int32 at the data's scale times the weights'; the
// requantization, activations and sum are oneDNN's output scales and post-ops, so the integers
// are MXNet's. With int8_weights (a hybridnet extension: hybridnet quantize --int8-weights) it
// reads instead the int8 weights, per-channel scales and folded float bias that
// QuantizeSgConvWeights makes offline with this same code, so the integers are the same.
#include "ops/quantization/quantized_conv.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "hybridnet/symbol.h"
#include "kernels/activation-inl.h"
#include "kernels/batch_norm.h"
#include "kernels/convolution.h"
#include "kernels/layout.h"
#include "kernels/onednn_convolution_int8.h"
#include "kernels/threads.h"
#include "kernels/workspace.h"
#include "ndarray/storage.h"
#include "ops/nn/convolution_fusions.h"
#include "ops/nn/convolution_param.h"
#include "ops/quantization/quantization.h"
#include "ops/quantization/subgraph_plan.h"
#include "ops/register_ops.h"
#include "pass/passes.h"

namespace hybridnet {
namespace {

using internal::AttrOrDefault;
using internal::ChannelFirstShape;
using internal::ChannelLastShape;
using internal::Int8ConvArgs;
using internal::Int8ConvCall;
using internal::Int8ConvWeights;
using internal::Int8Eltwise;
using internal::ParseValue;

const Op& ConvolutionOp() {
  static const Op& op = OpRegistry::Global().Get("Convolution");
  return op;
}

// Sets `*t` to `expected` unless it is known and differs: kTypeError naming the input.
void AssignType(const NodeAttrs& attrs, const std::string& what, DType expected, DType* t) {
  HN_CHECK(*t == DType::kUnknown || *t == expected, kTypeError)
      << DescribeNode(attrs) << ": " << what << " must be " << DTypeName(expected) << ", got "
      << DTypeName(*t);
  *t = expected;
}

bool IsInt8Data(DType t) { return t == DType::kInt8 || t == DType::kUint8; }

void CheckInt8Data(const NodeAttrs& attrs, const std::string& what, DType t) {
  HN_CHECK(t == DType::kUnknown || IsInt8Data(t), kTypeError)
      << DescribeNode(attrs) << ": " << what << " must be int8 or uint8, got " << DTypeName(t);
}

// The Convolution inference on the first `n` inputs, the shapes written back.
bool InferConvolutionPart(const NodeAttrs& conv_attrs, size_t n, std::vector<Shape>* in,
                          Shape* out) {
  std::vector<Shape> conv_in(in->begin(), in->begin() + static_cast<std::ptrdiff_t>(n));
  std::vector<Shape> conv_out = {*out};
  const bool known = ConvolutionOp().infer_shape(conv_attrs, &conv_in, &conv_out);
  std::copy(conv_in.begin(), conv_in.end(), in->begin());
  *out = conv_out[0];
  return known;
}

void AssignScalarShapes(const NodeAttrs& attrs, std::vector<Shape>* shapes, size_t from,
                        size_t to) {
  for (size_t i = from; i < to; ++i) {
    Shape s = (*shapes)[i];
    HN_CHECK(MergeShape(Shape({1}), &s), kShapeError)
        << DescribeNode(attrs) << ": the range input " << i << " must be of shape (1,), got "
        << (*shapes)[i];
    (*shapes)[i] = s;
  }
}

float Scalar(const TBlob& b) { return *b.ptr<const float>(); }

// The int8 call of a convolution with parameters `p` on channel-first data x into y.
Int8ConvCall Int8Call(const ConvolutionParam& p, const TBlob& x, const TBlob& y,
                      bool channel_last = false) {
  Int8ConvCall c;
  c.geometry = ConvolutionSpec(p, x.shape, y.shape, channel_last);
  c.geometry.bias = 0;
  c.data = x.dtype;
  c.out = y.dtype;
  return c;
}

// ---------------------------------------------------------------------------------------------
// _contrib_quantized_conv

size_t ConvInputCount(const ConvolutionParam& p) { return p.no_bias ? 2 : 3; }

bool QuantizedConvInferShape(const NodeAttrs& attrs, std::vector<Shape>* in,
                             std::vector<Shape>* out) {
  const auto& p = attrs.Param<ConvolutionParam>();
  const size_t n = ConvInputCount(p);
  HN_CHECK(in->size() == 3 * n && out->size() == 3, kInternal)
      << DescribeNode(attrs) << ": expected " << 3 * n << " inputs and 3 outputs, got "
      << in->size() << " and " << out->size();
  HN_CHECK(!p.layout || !internal::IsChannelLast(*p.layout), kUnsupported)
      << DescribeNode(attrs) << ": layout " << internal::LayoutName(*p.layout)
      << " is not supported (MXNet's quantized convolution takes NCHW or NCDHW)";
  AssignScalarShapes(attrs, in, n, 3 * n);
  AssignScalarShapes(attrs, out, 1, 3);
  return InferConvolutionPart(attrs, n, in, &(*out)[0]);
}

bool QuantizedConvInferType(const NodeAttrs& attrs, std::vector<DType>* in,
                            std::vector<DType>* out) {
  const auto& p = attrs.Param<ConvolutionParam>();
  const size_t n = ConvInputCount(p);
  CheckInt8Data(attrs, "data", (*in)[0]);
  AssignType(attrs, "weight", DType::kInt8, &(*in)[1]);
  if (!p.no_bias) AssignType(attrs, "bias", DType::kInt8, &(*in)[2]);
  for (size_t i = n; i < 3 * n; ++i) AssignType(attrs, "a range input", DType::kFloat32, &(*in)[i]);
  AssignType(attrs, "output", DType::kInt32, &(*out)[0]);
  AssignType(attrs, "min_output", DType::kFloat32, &(*out)[1]);
  AssignType(attrs, "max_output", DType::kFloat32, &(*out)[2]);
  return (*in)[0] != DType::kUnknown;
}

void QuantizedConvCompute(const OpContext& ctx, const NodeAttrs& attrs,
                          const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<ConvolutionParam>();
  const size_t n = ConvInputCount(p);
  const Int8ConvCall c = Int8Call(p, in[0], out[0]);
  Int8ConvWeights w;
  w.weight_s8 = in[1].ptr<const int8_t>();
  w.keep_with = ctx.InputArray(1);
  std::vector<float> bias;
  if (!p.no_bias) {
    const int8_t* b = in[2].ptr<const int8_t>();
    bias.assign(b, b + p.num_filter);
    w.bias = bias.data();
    // The packed bias is kept with the weights: it must be the same version.
    const NDArray* bias_array = ctx.InputArray(2);
    const uint64_t stamp = bias_array ? internal::WriteStamp(*bias_array) : 0;
    if (stamp == 0) w.keep_with = nullptr;
    w.key = "bias" + std::to_string(stamp);
  }
  Int8ConvArgs a;
  a.data = in[0].data;
  a.out = out[0].data;
  a.workspace = ctx.workspace;
  internal::RunInt8Convolution(c, w, a);
  internal::QuantizationRangeForMultiplication<int8_t, int8_t, int32_t>(
      Scalar(in[n]), Scalar(in[n + 1]), Scalar(in[n + 2]), Scalar(in[n + 3]), true,
      out[1].ptr<float>(), out[2].ptr<float>());
}

std::vector<std::string> QuantizedConvInputNames(const NodeAttrs& attrs) {
  if (attrs.Param<ConvolutionParam>().no_bias) {
    return {"data", "weight", "min_data", "max_data", "min_weight", "max_weight"};
  }
  return {"data",       "weight",     "bias",     "min_data", "max_data",
          "min_weight", "max_weight", "min_bias", "max_bias"};
}

// ---------------------------------------------------------------------------------------------
// _sg_mkldnn_conv

struct SgConvScales;

// What a quantized call's scales are derived from: the weights' data, size and write stamp, the
// other parameters' write stamps, the input ranges' bits and the data and sum types.
struct SgConvScalesKey {
  std::array<uint64_t, 16> words{};
  size_t size = 0;
  void Put(uint64_t w) { words[size++] = w; }
  bool operator==(const SgConvScalesKey& o) const {
    return size == o.size && std::equal(words.begin(), words.begin() + size, o.words.begin());
  }
};

struct SgConvLastCall;
std::shared_ptr<SgConvLastCall> NewSgConvLastCall();

struct SgConvParam {
  bool with_bn = false;
  bool with_act = false;
  bool with_sum = false;
  bool with_postsum_act = false;
  bool quantized = false;
  bool enable_float_output = false;
  bool int8_weights = false;
  std::optional<float> min_calib_range;
  std::optional<float> max_calib_range;
  std::optional<internal::Layout> layout;  ///< set by the graph optimizer (pass/layout.cc)
  /// Not an attribute: the node's last quantized call (each node parses its own parameters).
  std::shared_ptr<SgConvLastCall> last_call = NewSgConvLastCall();

  static void Declare(ParamDeclarer<SgConvParam>* d) {
    d->Field("with_bn", &SgConvParam::with_bn)
        .Default(false)
        .Describe("The nested graph has a BatchNorm after the convolution.");
    d->Field("with_act", &SgConvParam::with_act)
        .Default(false)
        .Describe("The nested graph has an activation after the convolution (and BatchNorm).");
    d->Field("with_sum", &SgConvParam::with_sum)
        .Default(false)
        .Describe("The nested graph adds the input `sum` (elemwise_add).");
    d->Field("with_postsum_act", &SgConvParam::with_postsum_act)
        .Default(false)
        .Describe("The nested graph has an activation after the sum.");
    d->Field("quantized", &SgConvParam::quantized)
        .Default(false)
        .Describe("int8 or uint8 data with its range; the weights are quantized at the first run.");
    d->Field("enable_float_output", &SgConvParam::enable_float_output)
        .Default(false)
        .Describe("Quantized: a float32 output (no range outputs) instead of int8/uint8/int32.");
    d->Field("int8_weights", &SgConvParam::int8_weights)
        .Default(false)
        .Describe(
            "Quantized, a hybridnet extension MXNet does not load: the weight input is already "
            "int8 (BatchNorm folded in), input weight_scale holds its scales and input bias the "
            "folded float bias (written by hybridnet quantize --int8-weights).");
    d->Field("min_calib_range", &SgConvParam::min_calib_range)
        .Default(std::nullopt)
        .Describe(
            "Calibrated minimum of the float output: with max_calib_range, int8 or uint8 "
            "output at that range.");
    d->Field("max_calib_range", &SgConvParam::max_calib_range)
        .Default(std::nullopt)
        .Describe("Calibrated maximum of the float output.");
    d->Field("layout", &SgConvParam::layout, internal::PoolingLayoutNames())
        .Default(std::nullopt)
        .Describe(
            "Quantized: data, sum and output layout, channel-first (default) or channel-last "
            "(NWC, NHWC, NDHWC), which the graph optimizer sets between int8 convolutions.");
  }
};

// The nested graph of a _sg_mkldnn_conv, read once per call from its nodes.
struct SgConvPlan {
  const NodeAttrs* conv = nullptr;
  std::optional<internal::BatchNormFold> bn;
  Int8Eltwise act, postsum_act;
};

// What an Activation, LeakyReLU or clip node of the nested graph computes, as oneDNN's eltwise
// post-op (MXNet's GetMKLDNNActAlgo; clip is bounded relu at a_max).
Int8Eltwise EltwiseOf(const NodeAttrs& owner, const Node& n) {
  const std::string& op = n.attrs.op->name;
  Int8Eltwise e;
  if (op == "Activation") {
    const std::string type = AttrOrDefault(n, "act_type");
    if (type == "relu") e.kind = Int8Eltwise::Kind::kRelu;
    if (type == "sigmoid") e.kind = Int8Eltwise::Kind::kLogistic;
    if (type == "tanh") e.kind = Int8Eltwise::Kind::kTanh;
    if (type == "softrelu") e.kind = Int8Eltwise::Kind::kSoftRelu;
    HN_CHECK(e.kind != Int8Eltwise::Kind::kNone, kUnsupported)
        << DescribeNode(owner) << ": Activation act_type " << type
        << " cannot be fused (relu, sigmoid, tanh or softrelu)";
  } else if (op == "LeakyReLU") {
    const std::string type = AttrOrDefault(n, "act_type");
    HN_CHECK(type == "leaky", kUnsupported)
        << DescribeNode(owner) << ": LeakyReLU act_type " << type << " cannot be fused (leaky)";
    e.kind = Int8Eltwise::Kind::kRelu;
    ParseValue(AttrOrDefault(n, "slope"), &e.alpha);
  } else {
    e.kind = Int8Eltwise::Kind::kBoundedRelu;
    ParseValue(AttrOrDefault(n, "a_max"), &e.alpha);
  }
  return e;
}

// The nodes of `g` after their inputs (MXNet's DFSVisit order).
void PostOrder(const std::shared_ptr<Node>& n, std::vector<const Node*>* seen,
               std::vector<const Node*>* order) {
  if (std::find(seen->begin(), seen->end(), n.get()) != seen->end()) return;
  seen->push_back(n.get());
  for (const NodeEntry& e : n->inputs) PostOrder(e.node, seen, order);
  order->push_back(n.get());
}

SgConvPlan ParseSgConv(const NodeAttrs& attrs) {
  const auto& p = attrs.Param<SgConvParam>();
  std::vector<const Node*> seen, order;
  for (const NodeEntry& e : attrs.subgraphs[0]->outputs) PostOrder(e.node, &seen, &order);
  SgConvPlan plan;
  int convs = 0, bns = 0, sums = 0, acts = 0;
  for (const Node* n : order) {
    if (n->IsVariable()) continue;
    const std::string& op = n->attrs.op->name;
    if (op == "Convolution") {
      ++convs;
      plan.conv = &n->attrs;
    } else if (op == "BatchNorm") {
      ++bns;
      internal::BatchNormFold fold;
      ParseValue(AttrOrDefault(*n, "eps"), &fold.eps);
      ParseValue(AttrOrDefault(*n, "fix_gamma"), &fold.fix_gamma);
      plan.bn = fold;
    } else if (op == "elemwise_add") {
      ++sums;
    } else if (op == "Activation" || op == "LeakyReLU" || op == "clip") {
      // The first activation is with_act's when there is one, any other the post-sum one.
      (p.with_act && acts == 0 ? plan.act : plan.postsum_act) = EltwiseOf(attrs, *n);
      ++acts;
    } else {
      HN_THROW(kUnsupported) << DescribeNode(attrs) << ": its fused graph holds " << op << " ("
                             << n->name()
                             << "); expected Convolution, BatchNorm, Activation, LeakyReLU, "
                                "clip and elemwise_add";
    }
  }
  const int expected_acts = (p.with_act ? 1 : 0) + (p.with_postsum_act ? 1 : 0);
  HN_CHECK(convs == 1 && bns == (p.with_bn ? 1 : 0) && sums == (p.with_sum ? 1 : 0) &&
               acts == expected_acts && (!p.with_postsum_act || p.with_sum),
           kInvalidArgument)
      << DescribeNode(attrs) << ": its fused graph (" << convs << " Convolution, " << bns
      << " BatchNorm, " << sums << " elemwise_add, " << acts
      << " activations) does not match its flags with_bn=" << p.with_bn
      << ", with_act=" << p.with_act << ", with_sum=" << p.with_sum
      << ", with_postsum_act=" << p.with_postsum_act;
  return plan;
}

std::shared_ptr<const SgConvPlan> ReadSgConv(const NodeAttrs& attrs) {
  HN_CHECK(attrs.subgraphs.size() == 1, kInvalidArgument)
      << DescribeNode(attrs) << ": expected its fused graph in \"subgraphs\" (one graph), found "
      << attrs.subgraphs.size();
  return internal::CachedSubgraphPlan<SgConvPlan>(attrs, ParseSgConv);
}

// Input positions, as MXNet lists them.
struct SgConvInputs {
  SgConvInputs(const SgConvParam& p, const ConvolutionParam& conv) {
    size_t next = 2;
    if (p.int8_weights) {
      // BatchNorm is folded into the weights and the bias.
      bias = conv.no_bias && !p.with_bn ? kAbsent : next++;
      weight_scale = next++;
      bn = kAbsent;
    } else {
      bias = conv.no_bias ? kAbsent : next++;
      bn = p.with_bn ? next : kAbsent;
      if (p.with_bn) next += 4;
    }
    sum = p.with_sum ? next++ : kAbsent;
    base = next;
    data_min = p.quantized ? next : kAbsent;
    if (p.quantized) next += 2;
    sum_min = p.quantized && p.with_sum ? next : kAbsent;
    if (sum_min != kAbsent) next += 2;
    count = next;
  }
  static constexpr size_t kAbsent = SIZE_MAX;
  size_t bias, weight_scale = kAbsent, bn, sum, base, data_min, sum_min, count;
};

// A node's last quantized call and what it was made from: a call with the same nested graph,
// shapes, thread count and scales key (a predictor's next forward) runs the prepared convolution
// without reading the nested graph, keying the scales and choosing the primitive again, which
// together cost as much as one of MobileNet's smaller convolutions. Weak: the scales and the
// prepared call live as long as the weights keep them.
struct SgConvLastCall {
  std::mutex mutex;
  const Symbol* graph = nullptr;  // the node's nested graph, while graph_alive has not expired
  std::weak_ptr<const Symbol> graph_alive;
  std::optional<SgConvInputs> at;  // none until a call is kept
  SgConvScalesKey key;
  Shape data, out;
  DType out_type = DType::kUnknown;
  int threads = 0;
  std::weak_ptr<const SgConvScales> scales;
  std::weak_ptr<const internal::Int8ConvPrepared> call;
};

std::shared_ptr<SgConvLastCall> NewSgConvLastCall() { return std::make_shared<SgConvLastCall>(); }

const ConvolutionParam& ConvParamOf(const SgConvPlan& plan) {
  return plan.conv->Param<ConvolutionParam>();
}

// MXNet's IsOutputUInt8: the last activation gives non-negative values.
bool OutputIsUint8(const SgConvParam& p, const SgConvPlan& plan) {
  auto non_negative = [](const Int8Eltwise& e) {
    return (e.kind == Int8Eltwise::Kind::kRelu && e.alpha == 0.f) ||
           e.kind == Int8Eltwise::Kind::kLogistic || e.kind == Int8Eltwise::Kind::kSoftRelu ||
           e.kind == Int8Eltwise::Kind::kBoundedRelu;
  };
  if (!p.with_sum && p.with_act) return non_negative(plan.act);
  if (p.with_postsum_act) return non_negative(plan.postsum_act);
  return false;
}

bool Calibrated(const SgConvParam& p) { return p.min_calib_range && p.max_calib_range; }

void InitSgConv(SgConvParam* p) {
  internal::CheckCalibratedRange(p->min_calib_range, p->max_calib_range);
}

// MXNet's weight_channelwise_scale: one weight scale per output channel where the output is
// requantized (a calibrated range) or given in float, one for the tensor otherwise.
bool ChannelwiseWeights(const SgConvParam& p) { return Calibrated(p) || p.enable_float_output; }

bool ChannelLast(const SgConvParam& p) { return p.layout && internal::IsChannelLast(*p.layout); }

uint32_t SgConvNumOutputs(const NodeAttrs& attrs) {
  const auto& p = attrs.Param<SgConvParam>();
  return p.quantized && !p.enable_float_output ? 3 : 1;
}

std::vector<std::string> SgConvInputNames(const NodeAttrs& attrs) {
  const auto& p = attrs.Param<SgConvParam>();
  const std::shared_ptr<const SgConvPlan> plan_of = ReadSgConv(attrs);
  const SgConvPlan& plan = *plan_of;
  std::vector<std::string> names = {"data", "weight"};
  if (p.int8_weights) {
    if (!ConvParamOf(plan).no_bias || p.with_bn) names.push_back("bias");
    names.push_back("weight_scale");
  } else {
    if (!ConvParamOf(plan).no_bias) names.push_back("bias");
    if (p.with_bn) names.insert(names.end(), {"gamma", "beta", "mean", "var"});
  }
  if (p.with_sum) names.push_back("sum");
  if (p.quantized) names.insert(names.end(), {"data_min", "data_max"});
  if (p.quantized && p.with_sum) names.insert(names.end(), {"sum_min", "sum_max"});
  return names;
}

bool SgConvInferShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const auto& p = attrs.Param<SgConvParam>();
  const std::shared_ptr<const SgConvPlan> plan_of = ReadSgConv(attrs);
  const SgConvPlan& plan = *plan_of;
  const ConvolutionParam& conv = ConvParamOf(plan);
  const SgConvInputs at(p, conv);
  HN_CHECK(in->size() == at.count && out->size() == SgConvNumOutputs(attrs), kInternal)
      << DescribeNode(attrs) << ": expected " << at.count << " inputs and "
      << SgConvNumOutputs(attrs) << " outputs, got " << in->size() << " and " << out->size();
  HN_CHECK(!conv.layout || !internal::IsChannelLast(*conv.layout), kUnsupported)
      << DescribeNode(attrs) << ": layout " << internal::LayoutName(*conv.layout)
      << " is not supported on CPU";
  const bool cl = ChannelLast(p);
  HN_CHECK(!cl || p.quantized, kInvalidArgument)
      << DescribeNode(attrs) << ": a channel-last layout needs the quantized form";
  HN_CHECK(!p.int8_weights || (p.quantized && ChannelwiseWeights(p)), kInvalidArgument)
      << DescribeNode(attrs)
      << ": int8_weights needs the quantized form with a calibrated output (min_calib_range and "
         "max_calib_range) or enable_float_output";
  // The Convolution's inference on channel-first shapes.
  auto first = [cl](const Shape& s) { return cl && s.ndim() > 0 ? ChannelFirstShape(s) : s; };
  auto last = [cl](const Shape& s) { return cl && s.ndim() > 0 ? ChannelLastShape(s) : s; };
  Shape y = first((*out)[0]);
  if (p.with_sum) {
    HN_CHECK(MergeShape(first((*in)[at.sum]), &y), kShapeError)
        << DescribeNode(attrs) << ": sum " << (*in)[at.sum] << " does not match the output "
        << (*out)[0];
  }
  (*in)[0] = first((*in)[0]);
  bool known = InferConvolutionPart(*plan.conv, conv.no_bias ? 2 : 3, in, &y);
  (*in)[0] = last((*in)[0]);
  if (p.int8_weights) {
    const int64_t F = conv.num_filter;
    auto check = [&](size_t i, const char* name, int64_t n) {
      Shape s = (*in)[i];
      HN_CHECK(MergeShape(Shape({n}), &s), kShapeError)
          << DescribeNode(attrs) << ": int8 weights' " << name << " must be of shape (" << n
          << ",), got " << (*in)[i];
      (*in)[i] = s;
    };
    check(at.weight_scale, "weight_scale", F);
    if (at.bias != SgConvInputs::kAbsent) check(at.bias, "bias", F);
  }
  y = last(y);
  (*out)[0] = y;
  for (size_t i = 0; at.bn != SgConvInputs::kAbsent && i < 4; ++i) {
    Shape s = (*in)[at.bn + i];
    HN_CHECK(MergeShape(Shape({static_cast<int64_t>(conv.num_filter)}), &s), kShapeError)
        << DescribeNode(attrs) << ": BatchNorm input " << (*in)[at.bn + i]
        << " must be (num_filter,) = (" << conv.num_filter << ",)";
    (*in)[at.bn + i] = s;
  }
  if (p.with_sum) (*in)[at.sum] = y;
  AssignScalarShapes(attrs, in, at.base, at.count);
  AssignScalarShapes(attrs, out, 1, out->size());
  for (const Shape& s : *in) known = known && s.IsKnown();
  return known && y.IsKnown();
}

DType SgConvOutputType(const SgConvParam& p, const SgConvPlan& plan) {
  if (!p.quantized || p.enable_float_output) return DType::kFloat32;
  if (!Calibrated(p)) return DType::kInt32;
  return OutputIsUint8(p, plan) ? DType::kUint8 : DType::kInt8;
}

bool SgConvInferType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const auto& p = attrs.Param<SgConvParam>();
  const std::shared_ptr<const SgConvPlan> plan_of = ReadSgConv(attrs);
  const SgConvPlan& plan = *plan_of;
  const SgConvInputs at(p, ConvParamOf(plan));
  const DType y = SgConvOutputType(p, plan);
  const std::vector<std::string> names = SgConvInputNames(attrs);
  for (size_t i = 0; i < in->size(); ++i) {
    if (i == 0 && p.quantized) {
      CheckInt8Data(attrs, "data", (*in)[0]);
    } else if (i == 1 && p.int8_weights) {
      AssignType(attrs, "weight (int8_weights)", DType::kInt8, &(*in)[1]);
    } else if (i == 1 && (*in)[1] == DType::kInt8) {
      HN_THROW(kTypeError) << DescribeNode(attrs)
                           << ": weight is int8 but the node lacks int8_weights=true (int8 "
                              "weights come from hybridnet quantize --int8-weights)";
    } else if (i == at.sum && p.quantized) {
      HN_CHECK((*in)[i] == DType::kUnknown || (*in)[i] == y || IsInt8Data((*in)[i]), kTypeError)
          << DescribeNode(attrs) << ": sum must be int8, uint8 or the output's type "
          << DTypeName(y) << ", got " << DTypeName((*in)[i]);
    } else {
      AssignType(attrs, i < names.size() ? names[i] : "input " + std::to_string(i), DType::kFloat32,
                 &(*in)[i]);
    }
  }
  AssignType(attrs, "output", y, &(*out)[0]);
  for (size_t i = 1; i < out->size(); ++i) {
    AssignType(attrs, "a range output", DType::kFloat32, &(*out)[i]);
  }
  return (*in)[0] != DType::kUnknown &&
         (at.sum == SgConvInputs::kAbsent || (*in)[at.sum] != DType::kUnknown);
}

// In float: our fused kernels, each step with the separate op's float operations.
void ApplyEltwise(const Int8Eltwise& e, float* y, int64_t n) {
  switch (e.kind) {
    case Int8Eltwise::Kind::kNone:
      return;
    case Int8Eltwise::Kind::kRelu:
      if (e.alpha == 0.f) {
        internal::ApplyActivation(internal::ActType::kRelu, y, y, n);
      } else {
        for (int64_t i = 0; i < n; ++i) y[i] = y[i] > 0.f ? y[i] : y[i] * e.alpha;
      }
      return;
    case Int8Eltwise::Kind::kBoundedRelu:
      for (int64_t i = 0; i < n; ++i) y[i] = std::min(std::max(y[i], 0.f), e.alpha);
      return;
    case Int8Eltwise::Kind::kLogistic:
      internal::ApplyActivation(internal::ActType::kSigmoid, y, y, n);
      return;
    case Int8Eltwise::Kind::kTanh:
      internal::ApplyActivation(internal::ActType::kTanh, y, y, n);
      return;
    case Int8Eltwise::Kind::kSoftRelu:
      internal::ApplyActivation(internal::ActType::kSoftrelu, y, y, n);
      return;
    default:  // EltwiseOf gives a convolution no other kind
      HN_THROW(kInternal) << "int8 convolution: no float form of eltwise kind "
                          << static_cast<int>(e.kind);
  }
}

bool IsPlainRelu(const Int8Eltwise& e) {
  return e.kind == Int8Eltwise::Kind::kRelu && e.alpha == 0.f;
}

void SgConvFloatCompute(const OpContext& ctx, const SgConvParam& p, const SgConvPlan& plan,
                        const SgConvInputs& at, const std::vector<TBlob>& in,
                        const std::vector<TBlob>& out) {
  const ConvolutionParam& conv = ConvParamOf(plan);
  internal::ConvSpec s = ConvolutionSpec(conv, in[0].shape, out[0].shape, false);
  internal::ConvArgs a;
  a.workspace = ctx.workspace;
  a.data = in[0].ptr<const float>();
  a.weight = in[1].ptr<const float>();
  a.weight_array = ctx.InputArray(1);
  if (at.bias != SgConvInputs::kAbsent) {
    a.epilogue.bias = in[at.bias].ptr<const float>();
    a.bias_array = ctx.InputArray(at.bias);
  }
  const NDArray* bn_arrays[4] = {nullptr, nullptr, nullptr, nullptr};
  if (plan.bn) {
    const size_t F = conv.num_filter;
    float* affine = ctx.workspace->Get<float>(internal::kBatchNormAffineSlot, 2 * F);
    internal::BatchNormScaleShift(in[at.bn].ptr<const float>(), in[at.bn + 1].ptr<const float>(),
                                  in[at.bn + 2].ptr<const float>(),
                                  in[at.bn + 3].ptr<const float>(), plan.bn->eps,
                                  plan.bn->fix_gamma, s.F, affine, affine + F);
    for (size_t i = 0; i < 4; ++i) bn_arrays[i] = ctx.InputArray(at.bn + i);
    s.bn = 1;
    a.epilogue.bn_scale = affine;
    a.epilogue.bn_shift = affine + F;
    a.bn_arrays = bn_arrays;
  }
  // The kernels fuse a residual then relu; an activation before the sum, or another activation,
  // runs after them.
  const bool fuse_sum = p.with_sum && !p.with_act;
  const Int8Eltwise& last = p.with_sum ? plan.postsum_act : plan.act;
  const bool fuse_relu = (!p.with_sum || fuse_sum) && IsPlainRelu(last);
  if (fuse_sum) {
    s.residual = 1;
    a.residual = in[at.sum].ptr<const float>();
  }
  s.relu = fuse_relu;
  s.fast_math = ctx.fast_math;
  float* y = out[0].ptr<float>();
  a.out = y;
  internal::RunConvolution(s, a);
  const int64_t n = out[0].Size();
  if (p.with_sum && !fuse_sum) {
    ApplyEltwise(plan.act, y, n);
    const float* sum = in[at.sum].ptr<const float>();
    for (int64_t i = 0; i < n; ++i) y[i] = y[i] + sum[i];
  }
  if (!fuse_relu) ApplyEltwise(last, y, n);
}

// What the quantized form derives from its float parameters and input ranges: MXNet's scales
// and output range.
struct SgConvScales {
  std::vector<float> weight_scales;  // one (per tensor) or one per output channel
  std::vector<float> bias;           // the float bias after BatchNorm, empty: none
  std::vector<float> bias_scales;
  std::vector<float> output_scales;  // empty: none (int32 output)
  float sum_scale = 1.f;
  Int8Eltwise act;
  float out_min = 0.f, out_max = 0.f;
  // The convolution last prepared with these scales and what for: a repeated call with the same
  // geometry, types, post-sum activation and thread count runs it without looking it up.
  struct Prepared {
    std::mutex mutex;
    internal::ConvSpec geometry;
    DType data = DType::kUnknown, out = DType::kUnknown, sum = DType::kUnknown;
    Int8Eltwise postsum_act;
    int threads = 0;
    std::shared_ptr<const internal::Int8ConvPrepared> call;
  };
  std::shared_ptr<Prepared> prepared = std::make_shared<Prepared>();
};

// MXNet's UpdateConvWeightBias: the BatchNorm of channel c folded into weights and bias as
// w * alpha, beta + alpha * (b - mean), alpha = gamma / sqrt(var + eps) in double.
void FoldBatchNorm(const SgConvPlan& plan, const SgConvInputs& at, const std::vector<TBlob>& in,
                   int64_t F, int64_t per_channel, float* weight, std::vector<float>* bias) {
  const float* gamma = in[at.bn].ptr<const float>();
  const float* beta = in[at.bn + 1].ptr<const float>();
  const float* mean = in[at.bn + 2].ptr<const float>();
  const float* var = in[at.bn + 3].ptr<const float>();
  const float* b = at.bias != SgConvInputs::kAbsent ? in[at.bias].ptr<const float>() : nullptr;
  const float* w = in[1].ptr<const float>();
  bias->resize(static_cast<size_t>(F));
  for (int64_t c = 0; c < F; ++c) {
    const float alpha = static_cast<float>((plan.bn->fix_gamma ? 1.0f : gamma[c]) /
                                           std::sqrt(static_cast<double>(var[c]) + plan.bn->eps));
    (*bias)[c] = b ? beta[c] + alpha * (b[c] - mean[c]) : beta[c] - alpha * mean[c];
    for (int64_t k = 0; k < per_channel; ++k) {
      weight[c * per_channel + k] = w[c * per_channel + k] * alpha;
    }
  }
}

// The weights the quantized form quantizes: BatchNorm folded in (into the workspace), or the
// input as it is.
const float* FloatWeights(internal::Workspace* workspace, const SgConvPlan& plan,
                          const SgConvInputs& at, const std::vector<TBlob>& in,
                          std::vector<float>* bias) {
  const int64_t F = in[1].shape[0], per_channel = in[1].Size() / F;
  if (!plan.bn) {
    if (at.bias != SgConvInputs::kAbsent) {
      const float* b = in[at.bias].ptr<const float>();
      bias->assign(b, b + F);
    }
    return in[1].ptr<const float>();
  }
  float* folded = workspace->Get<float>(internal::kConvFoldSlot, static_cast<size_t>(in[1].Size()));
  FoldBatchNorm(plan, at, in, F, per_channel, folded, bias);
  return folded;
}

// MXNet's int8 weight scales of float weights `w` (F, per_channel) with float bias `bias` (empty:
// none) for data at `data_scale`: per output channel (ChannelwiseWeights), each small enough that
// the bias at data_scale times it stays within INT32_MAX / 2, or one for the tensor, whose range
// goes to `*w_min`, `*w_max`.
std::vector<float> WeightScales(const SgConvParam& p, const float* w, int64_t F,
                                int64_t per_channel, const std::vector<float>& bias,
                                float data_scale, float* w_min, float* w_max) {
  using internal::QuantizeScale;
  std::vector<float> c_min(static_cast<size_t>(F)), c_max(static_cast<size_t>(F));
  for (int64_t c = 0; c < F; ++c) {
    const float* row = w + c * per_channel;
    c_min[c] = *std::min_element(row, row + per_channel);
    c_max[c] = *std::max_element(row, row + per_channel);
  }
  if (!ChannelwiseWeights(p)) {
    *w_min = *std::min_element(c_min.begin(), c_min.end());
    *w_max = *std::max_element(c_max.begin(), c_max.end());
    return {QuantizeScale(DType::kInt8, *w_min, *w_max)};
  }
  std::vector<float> scales(static_cast<size_t>(F));
  for (int64_t c = 0; c < F; ++c) {
    float scale = QuantizeScale(DType::kInt8, c_min[c], c_max[c]);
    if (!bias.empty() && bias[c] != 0.f) {
      const float limit = bias[c] > 0 ? static_cast<float>(std::numeric_limits<int32_t>::max())
                                      : static_cast<float>(std::numeric_limits<int32_t>::min());
      scale = std::min(scale, limit / 2 / bias[c] / data_scale);
    }
    scales[c] = scale;
  }
  return scales;
}

// The scales the weights are quantized by: MXNet 1.9.1 quantizes grouped weights with its
// per-channel scales masked on the group dimension, every channel of group g by the scale of
// channel g (the requantization and the bias still take each channel's own).
std::vector<float> WeightQuantizeScales(const ConvolutionParam& conv,
                                        const std::vector<float>& weight_scales) {
  std::vector<float> scales = weight_scales;
  const size_t groups = conv.num_group;
  if (groups > 1 && scales.size() > 1) {
    const size_t per_group = scales.size() / groups;
    for (size_t f = 0; f < scales.size(); ++f) scales[f] = weight_scales[f / per_group];
  }
  return scales;
}

SgConvScales MakeScales(internal::Workspace* workspace, const SgConvParam& p,
                        const SgConvPlan& plan, const SgConvInputs& at,
                        const std::vector<TBlob>& in, DType out_type) {
  using internal::QuantizeScale;
  SgConvScales r;
  const DType data_type = in[0].dtype;
  const float data_min = Scalar(in[at.data_min]), data_max = Scalar(in[at.data_min + 1]);
  const float data_scale = QuantizeScale(data_type, data_min, data_max);
  const int64_t F = in[1].shape[0];
  float w_min = 0.f, w_max = 0.f;
  if (p.int8_weights) {
    // Quantized offline by QuantizeSgConvWeights, per channel (inference checks the form).
    const float* scales = in[at.weight_scale].ptr<const float>();
    r.weight_scales.assign(scales, scales + F);
    if (at.bias != SgConvInputs::kAbsent) {
      const float* b = in[at.bias].ptr<const float>();
      r.bias.assign(b, b + F);
    }
  } else {
    const float* w = FloatWeights(workspace, plan, at, in, &r.bias);
    r.weight_scales = WeightScales(p, w, F, in[1].Size() / F, r.bias, data_scale, &w_min, &w_max);
  }
  const bool calibrated = Calibrated(p) && !p.enable_float_output;
  float output_scale;
  if (ChannelwiseWeights(p)) {
    output_scale = p.enable_float_output
                       ? 1.f
                       : QuantizeScale(out_type, *p.min_calib_range, *p.max_calib_range);
    r.output_scales.resize(static_cast<size_t>(F));
    for (int64_t c = 0; c < F; ++c) {
      r.output_scales[c] = output_scale / data_scale / r.weight_scales[c];
    }
    if (calibrated) {
      r.out_min = *p.min_calib_range;
      r.out_max = *p.max_calib_range;
    }
  } else {
    if (data_type == DType::kInt8) {
      internal::QuantizationRangeForMultiplication<int8_t, int8_t, int32_t>(
          w_min, w_max, data_min, data_max, true, &r.out_min, &r.out_max);
    } else {
      internal::QuantizationRangeForMultiplication<int8_t, uint8_t, int32_t>(
          w_min, w_max, data_min, data_max, false, &r.out_min, &r.out_max);
    }
    output_scale = data_scale * r.weight_scales[0];
  }
  for (float s : r.weight_scales) r.bias_scales.push_back(s * data_scale);
  if (p.with_sum) {
    const float sum_scale =
        QuantizeScale(in[at.sum].dtype, Scalar(in[at.sum_min]), Scalar(in[at.sum_min + 1]));
    r.sum_scale = output_scale / sum_scale;
  }
  r.act = plan.act;
  if (p.with_act && plan.act.kind == Int8Eltwise::Kind::kBoundedRelu) {
    // MXNet: with a sum, the bound at the output's scale; without, the requantization's
    // saturation stands for it.
    if (p.with_sum) {
      r.act.alpha *= output_scale;
    } else {
      r.act = Int8Eltwise();
    }
  }
  return r;
}

uint32_t FloatWord(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return bits;
}

std::string FloatBits(float f) { return std::to_string(FloatWord(f)); }

// The key of a quantized call's scales, given write stamps for the weights and every other
// parameter (none: nothing is reused).
std::optional<SgConvScalesKey> ScalesKey(const OpContext& ctx, const SgConvParam& p,
                                         const SgConvInputs& at, const std::vector<TBlob>& in) {
  const NDArray* weight_array = ctx.InputArray(1);
  const uint64_t weight_stamp = weight_array ? internal::WriteStamp(*weight_array) : 0;
  if (weight_stamp == 0) return std::nullopt;
  SgConvScalesKey key;
  key.Put(reinterpret_cast<uintptr_t>(in[1].data));
  key.Put(static_cast<uint64_t>(in[1].Size()));
  key.Put(weight_stamp);
  for (size_t i = 2; i < at.base; ++i) {
    if (i == at.sum) continue;
    const NDArray* array = ctx.InputArray(i);
    const uint64_t stamp = array ? internal::WriteStamp(*array) : 0;
    if (stamp == 0) return std::nullopt;
    key.Put(stamp);
  }
  for (size_t i = at.base; i < at.count; ++i) key.Put(FloatWord(Scalar(in[i])));
  key.Put(static_cast<uint64_t>(in[0].dtype));
  if (p.with_sum) key.Put(static_cast<uint64_t>(in[at.sum].dtype));
  return key;
}

// Runs `call` with the residual at input `sum` (kAbsent: none).
void RunPreparedSgConv(const OpContext& ctx, const internal::Int8ConvPrepared& call,
                       const SgConvScales& scales, size_t sum, const std::vector<TBlob>& in,
                       const std::vector<TBlob>& out) {
  Int8ConvArgs a;
  a.data = in[0].data;
  a.residual = sum != SgConvInputs::kAbsent ? in[sum].data : nullptr;
  a.out = out[0].data;
  a.workspace = ctx.workspace;
  internal::RunInt8Convolution(call, a);
  if (out.size() == 3) {
    *out[1].ptr<float>() = scales.out_min;
    *out[2].ptr<float>() = scales.out_max;
  }
}

// Runs the node's last quantized call again when this call is the same one; false otherwise.
bool RunLastSgConv(const OpContext& ctx, const NodeAttrs& attrs, const SgConvParam& p,
                   const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  SgConvLastCall& last = *p.last_call;
  std::shared_ptr<const SgConvScales> scales;
  std::shared_ptr<const internal::Int8ConvPrepared> call;
  size_t sum = SgConvInputs::kAbsent;
  {
    std::lock_guard<std::mutex> lock(last.mutex);
    if (!last.at || attrs.subgraphs.size() != 1 || attrs.subgraphs[0].get() != last.graph ||
        last.graph_alive.expired() || in.size() != last.at->count || in[0].shape != last.data ||
        out[0].shape != last.out || out[0].dtype != last.out_type ||
        internal::KernelThreads() != last.threads) {
      return false;
    }
    const std::optional<SgConvScalesKey> key = ScalesKey(ctx, p, *last.at, in);
    if (!key || !(*key == last.key)) return false;
    scales = last.scales.lock();
    call = last.call.lock();
    if (!scales || !call) return false;
    sum = last.at->sum;
  }
  RunPreparedSgConv(ctx, *call, *scales, sum, in, out);
  return true;
}

void SgConvQuantizedCompute(const OpContext& ctx, const NodeAttrs& attrs, const SgConvParam& p,
                            const SgConvPlan& plan, const SgConvInputs& at,
                            const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const float data_min = Scalar(in[at.data_min]);
  HN_CHECK(in[0].dtype == DType::kInt8 || data_min >= 0.f, kInvalidArgument)
      << DescribeNode(attrs) << ": uint8 data with a negative minimum " << data_min
      << " (data below 0 must be quantized to int8)";
  const NDArray* weight_array = ctx.InputArray(1);
  const std::optional<SgConvScalesKey> fast_key = ScalesKey(ctx, p, at, in);
  // What the scales and packed weights depend on besides the weights, as the text they are kept
  // with the weights under: the other parameters' versions and the input ranges. Without
  // versions they are made for this call alone.
  auto text_key = [&] {
    std::string key = "sg-conv-int8";
    for (size_t i = 2; i < at.base; ++i) {
      if (i == at.sum) continue;
      const NDArray* array = ctx.InputArray(i);
      const uint64_t stamp = array ? internal::WriteStamp(*array) : 0;
      if (stamp == 0) weight_array = nullptr;
      key += ":" + std::to_string(stamp);
    }
    for (size_t i = at.base; i < at.count; ++i) key += ":" + FloatBits(Scalar(in[i]));
    key += ":" + std::to_string(static_cast<int>(in[0].dtype));
    if (p.with_sum) key += ":" + std::to_string(static_cast<int>(in[at.sum].dtype));
    return key;
  };
  const std::string key = text_key();
  auto make = [&] {
    return std::static_pointer_cast<const void>(
        std::make_shared<SgConvScales>(MakeScales(ctx.workspace, p, plan, at, in, out[0].dtype)));
  };
  const std::shared_ptr<const SgConvScales> scales = std::static_pointer_cast<const SgConvScales>(
      weight_array ? internal::DerivedData(*weight_array, key, make) : make());

  const ConvolutionParam& conv = ConvParamOf(plan);
  Int8ConvCall c = Int8Call(conv, in[0], out[0], ChannelLast(p));
  c.sum = p.with_sum;
  if (p.with_sum) c.sum_type = in[at.sum].dtype;
  c.postsum_act = plan.postsum_act;
  if (p.with_sum && c.sum_type == DType::kInt8 && c.out == DType::kUint8) {
    // MXNet 1.9.1 writes the output through the int8 sum's memory: saturated at 127 (the
    // post-sum activation leaves no negative value, so the bytes are the uint8 ones).
    c.out = DType::kInt8;
  }
  SgConvScales::Prepared& last = *scales->prepared;
  const int threads = internal::KernelThreads();
  std::shared_ptr<const internal::Int8ConvPrepared> prepared;
  {
    std::lock_guard<std::mutex> lock(last.mutex);
    if (last.call && last.threads == threads && last.data == c.data && last.out == c.out &&
        last.sum == (c.sum ? c.sum_type : DType::kUnknown) &&
        last.postsum_act.kind == c.postsum_act.kind &&
        last.postsum_act.alpha == c.postsum_act.alpha &&
        std::memcmp(&last.geometry, &c.geometry, sizeof(c.geometry)) == 0) {
      prepared = last.call;
    }
  }
  if (!prepared) {
    c.output_scales = scales->output_scales;
    c.act = scales->act;
    if (p.with_sum) c.sum_scale = scales->sum_scale;
    Int8ConvWeights w;
    std::vector<float> unused_bias;
    if (p.int8_weights) {
      w.weight_s8 = in[1].ptr<const int8_t>();
    } else {
      w.weight = [&] { return FloatWeights(ctx.workspace, plan, at, in, &unused_bias); };
      w.weight_scales = WeightQuantizeScales(conv, scales->weight_scales);
    }
    if (!scales->bias.empty()) {
      w.bias = scales->bias.data();
      w.bias_scales = scales->bias_scales;
    }
    w.key = key;
    w.keep_with = weight_array;
    prepared = internal::PrepareInt8Convolution(c, w, ctx.workspace);
    std::lock_guard<std::mutex> lock(last.mutex);
    last.geometry = c.geometry;
    last.data = c.data;
    last.out = c.out;
    last.sum = c.sum ? c.sum_type : DType::kUnknown;
    last.postsum_act = c.postsum_act;
    last.threads = threads;
    last.call = prepared;
  }
  RunPreparedSgConv(ctx, *prepared, *scales, at.sum, in, out);
  if (fast_key && weight_array != nullptr) {
    SgConvLastCall& node = *p.last_call;
    std::lock_guard<std::mutex> lock(node.mutex);
    node.graph = attrs.subgraphs[0].get();
    node.graph_alive = attrs.subgraphs[0];
    node.at = at;
    node.key = *fast_key;
    node.data = in[0].shape;
    node.out = out[0].shape;
    node.out_type = out[0].dtype;
    node.threads = threads;
    node.scales = scales;
    node.call = prepared;
  }
}

void SgConvCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                   const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<SgConvParam>();
  if (p.quantized && RunLastSgConv(ctx, attrs, p, in, out)) return;
  const std::shared_ptr<const SgConvPlan> plan_of = ReadSgConv(attrs);
  const SgConvPlan& plan = *plan_of;
  const SgConvInputs at(p, ConvParamOf(plan));
  if (p.quantized) {
    SgConvQuantizedCompute(ctx, attrs, p, plan, at, in, out);
  } else {
    SgConvFloatCompute(ctx, p, plan, at, in, out);
  }
}

std::vector<std::pair<uint32_t, uint32_t>> SgConvInplace(const NodeAttrs& attrs) {
  const auto& p = attrs.Param<SgConvParam>();
  if (!p.with_sum) return {};
  const SgConvInputs at(p, ConvParamOf(*ReadSgConv(attrs)));
  return {{static_cast<uint32_t>(at.sum), 0u}};
}

// MXNet's parser renames the older with_relu and with_postsum_relu.
void RenameOlderFlags(Op* op) {
  auto parse = op->parse_param;
  op->parse_param = [parse](const AttrDict& dict) {
    AttrDict renamed = dict;
    for (const auto& [older, newer] :
         {std::pair<std::string, std::string>{"with_relu", "with_act"},
          std::pair<std::string, std::string>{"with_postsum_relu", "with_postsum_act"}}) {
      auto it = renamed.find(older);
      if (it == renamed.end()) continue;
      renamed[newer] = it->second;
      renamed.erase(older);
    }
    return parse(renamed);
  };
}

}  // namespace

namespace internal {

bool IsQuantizedSgConv(const NodeAttrs& attrs) {
  static const Op* const sg_conv = &OpRegistry::Global().Get("_sg_mkldnn_conv");
  return attrs.op == sg_conv && attrs.Param<SgConvParam>().quantized;
}

std::optional<size_t> SgConvSumInput(const NodeAttrs& attrs) {
  const auto& p = attrs.Param<SgConvParam>();
  if (!p.with_sum) return std::nullopt;
  return SgConvInputs(p, ConvParamOf(*ReadSgConv(attrs))).sum;
}

SgConvInt8Weights QuantizeSgConvWeights(const NodeAttrs& attrs,
                                        const std::vector<NDArray>& inputs) {
  const auto& p = attrs.Param<SgConvParam>();
  HN_CHECK(IsQuantizedSgConv(attrs) && !p.int8_weights && ChannelwiseWeights(p), kInvalidArgument)
      << DescribeNode(attrs)
      << ": only a quantized node with float weights and a calibrated or float output can have "
         "its weights stored as int8";
  const std::shared_ptr<const SgConvPlan> plan = ReadSgConv(attrs);
  const ConvolutionParam& conv = ConvParamOf(*plan);
  const SgConvInputs at(p, conv);
  HN_CHECK(inputs.size() == at.count, kInternal)
      << DescribeNode(attrs) << ": expected " << at.count << " input values, got " << inputs.size();
  std::vector<TBlob> in;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const NDArray& a = inputs[i];
    HN_CHECK(i == 0 || i == at.sum || a.dtype() == DType::kFloat32, kTypeError)
        << DescribeNode(attrs) << ": input " << i << " must be float32, got "
        << DTypeName(a.dtype());
    in.push_back(TBlob{const_cast<void*>(a.raw_data()), a.shape(), a.dtype()});
  }
  internal::Workspace workspace;
  std::vector<float> bias;
  const float* w = FloatWeights(&workspace, *plan, at, in, &bias);
  const Shape& shape = in[1].shape;
  const int64_t F = shape[0];
  const float data_scale =
      internal::QuantizeScale(in[0].dtype, Scalar(in[at.data_min]), Scalar(in[at.data_min + 1]));
  float unused_min = 0.f, unused_max = 0.f;
  const std::vector<float> scales =
      WeightScales(p, w, F, in[1].Size() / F, bias, data_scale, &unused_min, &unused_max);
  internal::ConvSpec geometry;
  geometry.nd = static_cast<int64_t>(shape.ndim()) - 2;
  geometry.G = conv.num_group;
  geometry.F = F;
  geometry.C = shape[1] * geometry.G;
  for (int64_t i = 0; i < geometry.nd; ++i) geometry.kernel[i] = shape[2 + i];
  SgConvInt8Weights r;
  r.weight = NDArray(shape, DType::kInt8);
  internal::QuantizeInt8ConvWeights(geometry, w, WeightQuantizeScales(conv, scales),
                                    r.weight.data<int8_t>(), &workspace);
  r.weight_scale = NDArray::FromVector(Shape{F}, scales);
  if (!bias.empty()) r.bias = NDArray::FromVector(Shape{F}, bias);
  return r;
}

}  // namespace internal

void RegisterQuantizedConvolutionOps(OpRegistry* r) {
  const Op& convolution = r->Get("Convolution");
  Op& quantized = r->Register("_contrib_quantized_conv");
  quantized
      .Describe(
          "Convolution of uint8 or int8 data by int8 weights, summed in int32, plus the int8 "
          "bias as integers. Inputs data, weight, [bias], then min and max of each; outputs the "
          "int32 result and its float range, QuantizationRangeForMultiplication of the data's "
          "and the weights' ranges.")
      .SetParam<ConvolutionParam>()
      .SetInputNames(QuantizedConvInputNames)
      .SetNumOutputs(3)
      .SetOutputNames([](const NodeAttrs&) {
        return std::vector<std::string>{"output", "min_output", "max_output"};
      })
      .SetInferShape(QuantizedConvInferShape)
      .SetInferType(QuantizedConvInferType)
      .SetCompute(QuantizedConvCompute);
  quantized.parse_param = convolution.parse_param;  // Convolution's attributes and checks

  Op& fused = r->Register("_sg_mkldnn_conv");
  fused
      .Describe(
          "MXNet's oneDNN-fused convolution: the Convolution [+ BatchNorm] [+ activation] [+ "
          "elemwise_add of `sum`] [+ activation] of its nested graph. Quantized, uint8 or int8 "
          "data with its range; the float weights are quantized at the first run (per output "
          "channel with a calibrated output, int8 or uint8; per tensor otherwise, int32) and "
          "the output range is an output. With int8_weights (hybridnet's extension) the "
          "weights come quantized, with their scales (weight_scale) and the folded bias.")
      .AddAlias("_sg_onednn_conv")
      .SetParam<SgConvParam>(InitSgConv)
      .SetInputNames(SgConvInputNames)
      .SetNumOutputs(SgConvNumOutputs)
      .SetOutputNames([](const NodeAttrs& attrs) {
        return SgConvNumOutputs(attrs) == 3
                   ? std::vector<std::string>{"output", "output_min", "output_max"}
                   : std::vector<std::string>{"output"};
      })
      .SetInferShape(SgConvInferShape)
      .SetInferType(SgConvInferType)
      .SetCompute(SgConvCompute)
      .SetInplace(SgConvInplace);
  RenameOlderFlags(&fused);
}

}  // namespace hybridnet
