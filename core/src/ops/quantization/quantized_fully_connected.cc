// The quantized dense layers of MXNet 1.9.1's int8 models, on the int8 inner product of
// kernels/onednn_inner_product_int8.h:
//   - _contrib_quantized_fully_connected (src/operator/quantization/quantized_fully_connected.cc
//     and its oneDNN form): int8 weights and bias with their ranges, an int32 output and its range;
//   - _sg_mkldnn_fully_connected (alias _sg_onednn_fully_connected;
//     src/operator/subgraph/mkldnn/mkldnn_fc.cc): the oneDNN subgraph backend's FullyConnected,
//     with an optional elementwise op after it, both in its one subgraph. Float (quantized=False)
//     or quantized, then with tensor-wise int8 weights and ranges or channel-wise float weights
//     quantized here, and an int32 output (with its range), an int8/uint8 output requantized to
//     the calibrated range, or a float output.
// The scales, the rounding of the int32 bias and the output ranges follow MXNet's arithmetic
// (ops/quantization/quantization.h); the sums run in oneDNN as they do in MXNet.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hybridnet/ndarray.h"
#include "hybridnet/op.h"
#include "hybridnet/symbol.h"
#include "kernels/activation-inl.h"
#include "kernels/dense.h"
#include "kernels/onednn_inner_product_int8.h"
#include "kernels/workspace.h"
#include "ndarray/storage.h"
#include "ops/nn/fully_connected_param.h"
#include "ops/quantization/quantization.h"
#include "ops/quantization/range_inference.h"
#include "ops/quantization/subgraph_plan.h"
#include "ops/register_ops.h"

namespace hybridnet {

namespace {

using internal::Int8DenseSpec;
using internal::Int8Eltwise;

size_t BaseInputs(const FullyConnectedParam& fc) { return fc.no_bias ? 2 : 3; }

float ScalarOf(const TBlob& b) { return *b.ptr<const float>(); }

void RequireQuantizedData(const NodeAttrs& attrs, DType data) {
  HN_CHECK(data == DType::kUnknown || data == DType::kInt8 || data == DType::kUint8, kTypeError)
      << DescribeNode(attrs) << ": input 'data' must be int8 or uint8 (quantized), got "
      << DTypeName(data);
}

// FullyConnected's inference over the first `fc` inputs and output 0; every other input and
// output is a range end.
bool QuantizedFcShape(const NodeAttrs& attrs, const FullyConnectedParam& fc, std::vector<Shape>* in,
                      std::vector<Shape>* out) {
  return internal::RangedShape(
      attrs, in, out, BaseInputs(fc),
      [&fc](const NodeAttrs& a, std::vector<Shape>* data, std::vector<Shape>* result) {
        return InferFullyConnectedShape(a, fc, data, result);
      });
}

// The (rows, k) view of the data: flatten=True keeps axis 0, else the last axis is k.
int64_t RowsOf(const TBlob& data, int64_t k) { return k == 0 ? 0 : data.Size() / k; }

// The range of the int32 product of int8 weights and int8 or uint8 data (MXNet's
// QuantizationRangeForS8S8/S8U8Multiplication).
void ProductRange(DType data, float min_data, float max_data, float min_weight, float max_weight,
                  float* min_out, float* max_out) {
  if (data == DType::kInt8) {
    internal::QuantizationRangeForMultiplication<int8_t, int8_t, int32_t>(
        min_data, max_data, min_weight, max_weight, true, min_out, max_out);
  } else {
    internal::QuantizationRangeForMultiplication<int8_t, uint8_t, int32_t>(
        min_data, max_data, min_weight, max_weight, false, min_out, max_out);
  }
}

// ---- _contrib_quantized_fully_connected -------------------------------------------------------

std::vector<std::string> QuantizedFcInputNames(const NodeAttrs& attrs) {
  if (attrs.Param<FullyConnectedParam>().no_bias) {
    return {"data", "weight", "min_data", "max_data", "min_weight", "max_weight"};
  }
  return {"data",       "weight",     "bias",     "min_data", "max_data",
          "min_weight", "max_weight", "min_bias", "max_bias"};
}

bool ContribQuantizedFcShape(const NodeAttrs& attrs, std::vector<Shape>* in,
                             std::vector<Shape>* out) {
  return QuantizedFcShape(attrs, attrs.Param<FullyConnectedParam>(), in, out);
}

bool ContribQuantizedFcType(const NodeAttrs& attrs, std::vector<DType>* in,
                            std::vector<DType>* out) {
  const size_t base = BaseInputs(attrs.Param<FullyConnectedParam>());
  RequireQuantizedData(attrs, (*in)[0]);
  for (size_t i = 1; i < in->size(); ++i) {
    internal::AssignQuantizedDType(attrs, in, i, i < base ? DType::kInt8 : DType::kFloat32,
                                   "input");
  }
  internal::AssignQuantizedDType(attrs, out, 0, DType::kInt32, "output");
  internal::AssignQuantizedDType(attrs, out, 1, DType::kFloat32, "output");
  internal::AssignQuantizedDType(attrs, out, 2, DType::kFloat32, "output");
  return (*in)[0] != DType::kUnknown;
}

// The oneDNN form of MXNet's op: the int8 bias becomes int32 in the product's scale (truncated,
// as MXNet converts it), the sums are not scaled, and the output range is that of the product.
void ContribQuantizedFcCompute(const OpContext& ctx, const NodeAttrs& attrs,
                               const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const auto& fc = attrs.Param<FullyConnectedParam>();
  const size_t base = BaseInputs(fc);
  const float min_data = ScalarOf(in[base]), max_data = ScalarOf(in[base + 1]);
  const float min_weight = ScalarOf(in[base + 2]), max_weight = ScalarOf(in[base + 3]);
  Int8DenseSpec spec;
  spec.k = in[1].shape[1];
  spec.hidden = fc.num_hidden;
  spec.rows = RowsOf(in[0], spec.k);
  spec.src = in[0].dtype;
  spec.dst = DType::kInt32;
  spec.has_bias = !fc.no_bias;
  int32_t* bias = nullptr;
  if (spec.has_bias) {
    const float data_scale = internal::QuantizeScale(spec.src, min_data, max_data);
    const float weight_scale = internal::QuantizeScale(DType::kInt8, min_weight, max_weight);
    const float rescale = data_scale * weight_scale *
                          internal::MaxAbs(ScalarOf(in[base + 4]), ScalarOf(in[base + 5])) /
                          internal::kInt8ScaleRange;
    bias = ctx.workspace->Get<int32_t>(internal::kOpSlot0, static_cast<size_t>(spec.hidden));
    const int8_t* b = in[2].ptr<const int8_t>();
    for (int64_t h = 0; h < spec.hidden; ++h) bias[h] = static_cast<int32_t>(b[h] * rescale);
  }
  internal::RunInt8Dense(spec, in[0].data, in[1].ptr<const int8_t>(), bias, out[0].data,
                         ctx.InputArray(1), ctx.workspace);
  ProductRange(spec.src, min_data, max_data, min_weight, max_weight, out[1].ptr<float>(),
               out[2].ptr<float>());
}

// ---- _sg_mkldnn_fully_connected ---------------------------------------------------------------

struct SgFullyConnectedParam {
  bool quantized = false;
  bool enable_float_output = false;
  bool with_eltwise = false;
  bool with_relu = false;  // MXNet's name for with_eltwise before 1.6
  std::optional<float> min_calib_range;
  std::optional<float> max_calib_range;
  std::optional<bool> channel_wise_quantize;
  static void Declare(ParamDeclarer<SgFullyConnectedParam>* d) {
    using P = SgFullyConnectedParam;
    d->Field("quantized", &P::quantized)
        .Default(false)
        .Describe("Whether the layer runs on int8 data.");
    d->Field("enable_float_output", &P::enable_float_output)
        .Default(false)
        .Describe("Quantized: whether the output is float32 (dequantized inside the layer).");
    d->Field("with_eltwise", &P::with_eltwise)
        .Default(false)
        .Describe("Whether the subgraph applies an elementwise op after FullyConnected.");
    d->Field("with_relu", &P::with_relu)
        .Default(false)
        .Describe("The name of with_eltwise in models written before MXNet 1.6.");
    d->Field("min_calib_range", &P::min_calib_range)
        .Default(std::nullopt)
        .Describe(
            "Quantized: the calibrated minimum of the output; with max_calib_range the "
            "output is int8 or uint8 in that range.");
    d->Field("max_calib_range", &P::max_calib_range)
        .Default(std::nullopt)
        .Describe("Quantized: the calibrated maximum of the output.");
    d->Field("channel_wise_quantize", &P::channel_wise_quantize)
        .Default(std::nullopt)
        .Describe("Quantized: float weights quantized here, one scale per output channel.");
  }
  bool channel_wise() const { return channel_wise_quantize.value_or(false); }
  bool requantized() const { return min_calib_range && max_calib_range; }
};

void InitSgFullyConnected(SgFullyConnectedParam* p) {
  internal::CheckCalibratedRange(p->min_calib_range, p->max_calib_range);
}

// What the subgraph holds: FullyConnected's parameters and the elementwise op after it (the float
// form applies it with `act` or `apply`, the quantized form as a oneDNN post-op).
struct SgFullyConnectedGraph {
  FullyConnectedParam fc;
  Int8Eltwise eltwise;
  std::vector<std::string> input_names;  // the subgraph's inputs: data, weight[, bias]
};

std::string AttrOf(const NodeAttrs& node, const std::string& key, const std::string& fallback) {
  auto it = node.dict.find(key);
  return it == node.dict.end() ? fallback : it->second;
}

float FloatAttr(const NodeAttrs& owner, const NodeAttrs& node, const std::string& key,
                const std::string& fallback) {
  float value = 0.f;
  try {
    internal::ParseValue(AttrOf(node, key, fallback), &value);
  } catch (const std::exception& e) {
    HN_THROW(kInvalidArgument) << DescribeNode(owner) << ": the subgraph's " << DescribeNode(node)
                               << ": " << key << ": " << e.what();
  }
  return value;
}

// MXNet's mapping of the fusable ops onto oneDNN's elementwise kinds (mkldnn_fc.cc's parser).
Int8Eltwise EltwiseOf(const NodeAttrs& owner, const NodeAttrs& node) {
  using K = Int8Eltwise::Kind;
  Int8Eltwise e;
  const std::string& op = node.op->name;
  auto unsupported = [&](const std::string& what) {
    HN_THROW(kInvalidArgument) << DescribeNode(owner) << ": the subgraph's " << DescribeNode(node)
                               << " has " << what
                               << ", which MXNet's oneDNN FullyConnected does not fuse";
  };
  if (op == "Activation") {
    const std::string act = AttrOf(node, "act_type", "");
    if (act == "relu") {
      e.kind = K::kRelu;
    } else if (act == "sigmoid") {
      e.kind = K::kLogistic;
    } else if (act == "tanh") {
      e.kind = K::kTanh;
    } else if (act == "softrelu") {
      e.kind = K::kSoftRelu;
    } else {
      unsupported("act_type '" + act + "'");
    }
  } else if (op == "LeakyReLU") {
    const std::string act = AttrOf(node, "act_type", "leaky");
    if (act == "leaky") {
      e.kind = K::kRelu;
      e.alpha = FloatAttr(owner, node, "slope", "0.25");
    } else if (act == "elu") {
      e.kind = K::kElu;
      e.alpha = FloatAttr(owner, node, "slope", "0.25");
    } else if (act == "gelu") {
      e.kind = K::kGelu;
    } else {
      unsupported("act_type '" + act + "'");
    }
  } else if (op == "clip") {
    // oneDNN's bounded relu, min(max(x, 0), a_max): MXNet fuses clip only with a_min = 0.
    HN_CHECK(FloatAttr(owner, node, "a_min", "0") == 0.f, kInvalidArgument)
        << DescribeNode(owner) << ": the subgraph's " << DescribeNode(node)
        << " has a_min != 0, which MXNet's oneDNN FullyConnected does not fuse";
    e.kind = K::kBoundedRelu;
    e.alpha = FloatAttr(owner, node, "a_max", "0");
  } else if (op == "square") {
    e.kind = K::kSquare;
  } else if (op == "sqrt") {
    e.kind = K::kSqrt;
  } else if (op == "exp") {
    e.kind = K::kExp;
  } else if (op == "abs") {
    e.kind = K::kAbs;
  } else {
    unsupported("op " + op);
  }
  return e;
}

// Reads the one subgraph: FullyConnected on the subgraph's inputs, then at most one elementwise
// op, whose output is the subgraph's one output.
SgFullyConnectedGraph ReadSubgraph(const NodeAttrs& attrs) {
  HN_CHECK(attrs.subgraphs.size() == 1, kInvalidArgument)
      << DescribeNode(attrs) << ": expected 1 subgraph (FullyConnected and its elementwise op), "
      << "found " << attrs.subgraphs.size();
  const Symbol& g = *attrs.subgraphs[0];
  HN_CHECK(g.outputs.size() == 1, kInvalidArgument)
      << DescribeNode(attrs) << ": the subgraph must have 1 output, found " << g.outputs.size();
  SgFullyConnectedGraph r;
  const IndexedGraph idx(g.outputs);
  const Node* fc = nullptr;
  const Node* eltwise = nullptr;
  for (size_t i = 0; i < idx.num_nodes(); ++i) {
    const Node* n = idx[i].node;
    if (n->attrs.op == nullptr) continue;
    if (n->attrs.op->name == "FullyConnected" && fc == nullptr) {
      fc = n;
    } else if (fc != nullptr && eltwise == nullptr && idx[i].inputs.size() == 1 &&
               idx[idx[i].inputs[0].node_id].node == fc) {
      eltwise = n;
    } else {
      HN_THROW(kInvalidArgument) << DescribeNode(attrs) << ": the subgraph holds "
                                 << DescribeNode(n->attrs)
                                 << "; expected FullyConnected and at most one elementwise op "
                                 << "on its output";
    }
  }
  HN_CHECK(fc != nullptr, kInvalidArgument)
      << DescribeNode(attrs) << ": the subgraph holds no FullyConnected";
  r.fc = fc->attrs.Param<FullyConnectedParam>();
  if (eltwise != nullptr) r.eltwise = EltwiseOf(attrs, eltwise->attrs);
  r.input_names = g.ListInputs();
  HN_CHECK(r.input_names.size() == BaseInputs(r.fc), kInvalidArgument)
      << DescribeNode(attrs) << ": the subgraph has " << r.input_names.size()
      << " inputs; its FullyConnected takes " << BaseInputs(r.fc);
  return r;
}

std::shared_ptr<const SgFullyConnectedGraph> SubgraphOf(const NodeAttrs& attrs) {
  return internal::CachedSubgraphPlan<SgFullyConnectedGraph>(attrs, ReadSubgraph);
}

// The attributes' consistency with the subgraph: an elementwise op iff with_eltwise, and a
// channel-wise quantized layer only with its output requantized or float (MXNet's rule: its
// int32 sums would have one scale per channel).
void CheckSgForm(const NodeAttrs& attrs, const SgFullyConnectedGraph& g) {
  const auto& p = attrs.Param<SgFullyConnectedParam>();
  const bool with_eltwise = p.with_eltwise || p.with_relu;
  HN_CHECK(with_eltwise == (g.eltwise.kind != Int8Eltwise::Kind::kNone), kInvalidArgument)
      << DescribeNode(attrs) << ": with_eltwise=" << (with_eltwise ? "True" : "False")
      << " but the subgraph has " << (with_eltwise ? "no" : "an") << " elementwise op";
  HN_CHECK(!(p.quantized && p.channel_wise() && !p.requantized() && !p.enable_float_output),
           kInvalidArgument)
      << DescribeNode(attrs) << ": channel_wise_quantize needs min_calib_range and "
      << "max_calib_range, or enable_float_output";
}

std::vector<std::string> SgFcInputNames(const NodeAttrs& attrs) {
  const auto& p = attrs.Param<SgFullyConnectedParam>();
  const std::shared_ptr<const SgFullyConnectedGraph> graph = SubgraphOf(attrs);
  const SgFullyConnectedGraph& g = *graph;
  std::vector<std::string> names = g.input_names;
  if (!p.quantized) return names;
  names.insert(names.end(), {"min_data", "max_data"});
  if (p.channel_wise()) return names;
  names.insert(names.end(), {"min_weight", "max_weight"});
  if (!g.fc.no_bias) names.insert(names.end(), {"min_bias", "max_bias"});
  return names;
}

uint32_t SgFcNumOutputs(const NodeAttrs& attrs) {
  const auto& p = attrs.Param<SgFullyConnectedParam>();
  return p.quantized && !p.enable_float_output ? 3u : 1u;
}

std::vector<std::string> SgFcOutputNames(const NodeAttrs& attrs) {
  if (SgFcNumOutputs(attrs) == 1) return {"output"};
  return internal::RangeOutputNames(attrs);
}

bool SgFcShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const std::shared_ptr<const SgFullyConnectedGraph> graph = SubgraphOf(attrs);
  const SgFullyConnectedGraph& g = *graph;
  CheckSgForm(attrs, g);
  return QuantizedFcShape(attrs, g.fc, in, out);
}

// The output of the quantized form: int8, or uint8 after the activations whose outputs MXNet
// takes as non-negative (IsOutputUint8), when requantized; float32 with enable_float_output;
// else the int32 sums.
DType SgFcOutputType(const SgFullyConnectedParam& p, const Int8Eltwise& eltwise) {
  if (p.enable_float_output) return DType::kFloat32;
  if (!p.requantized()) return DType::kInt32;
  using K = Int8Eltwise::Kind;
  switch (eltwise.kind) {
    case K::kRelu:
    case K::kLogistic:
    case K::kSoftRelu:
    case K::kBoundedRelu:
    case K::kSquare:
    case K::kSqrt:
    case K::kExp:
    case K::kAbs:
      return (p.with_eltwise || p.with_relu) ? DType::kUint8 : DType::kInt8;
    default:
      return DType::kInt8;
  }
}

bool SgFcType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const auto& p = attrs.Param<SgFullyConnectedParam>();
  const std::shared_ptr<const SgFullyConnectedGraph> graph = SubgraphOf(attrs);
  const SgFullyConnectedGraph& g = *graph;
  if (!p.quantized) {
    for (size_t i = 0; i < in->size(); ++i)
      internal::AssignQuantizedDType(attrs, in, i, DType::kFloat32, "input");
    internal::AssignQuantizedDType(attrs, out, 0, DType::kFloat32, "output");
    return true;
  }
  RequireQuantizedData(attrs, (*in)[0]);
  const size_t base = BaseInputs(g.fc);
  for (size_t i = 1; i < in->size(); ++i) {
    const bool int8_parameter = !p.channel_wise() && i < base;
    internal::AssignQuantizedDType(attrs, in, i, int8_parameter ? DType::kInt8 : DType::kFloat32,
                                   "input");
  }
  internal::AssignQuantizedDType(attrs, out, 0, SgFcOutputType(p, g.eltwise), "output");
  for (size_t i = 1; i < out->size(); ++i)
    internal::AssignQuantizedDType(attrs, out, i, DType::kFloat32, "output");
  return (*in)[0] != DType::kUnknown;
}

// The float form: the dense product (relu fused in the kernel), then the elementwise op.
void SgFcFloatForward(const OpContext& ctx, const SgFullyConnectedGraph& g,
                      const std::vector<TBlob>& in, const TBlob& out) {
  using K = Int8Eltwise::Kind;
  const int64_t k = in[1].shape[1];
  const int64_t rows = RowsOf(in[0], k);
  const bool relu = g.eltwise.kind == K::kRelu && g.eltwise.alpha == 0.f;
  internal::RunDense(in[0].ptr<const float>(), in[1].ptr<const float>(),
                     g.fc.no_bias ? nullptr : in[2].ptr<const float>(), out.ptr<float>(), rows,
                     g.fc.num_hidden, k, relu, ctx.InputArray(1), ctx.workspace);
  float* y = out.ptr<float>();
  const int64_t n = out.Size();
  const float alpha = g.eltwise.alpha;
  auto apply = [&](auto f) {
    for (int64_t i = 0; i < n; ++i) y[i] = f(y[i]);
  };
  switch (g.eltwise.kind) {
    case K::kNone:
      break;
    case K::kRelu:
      if (!relu) apply([&](float x) { return x > 0.f ? x : alpha * x; });
      break;
    case K::kLogistic:
      internal::ApplyActivation(internal::ActType::kSigmoid, y, y, n);
      break;
    case K::kTanh:
      internal::ApplyActivation(internal::ActType::kTanh, y, y, n);
      break;
    case K::kSoftRelu:
      internal::ApplyActivation(internal::ActType::kSoftrelu, y, y, n);
      break;
    case K::kBoundedRelu:
      apply([&](float x) { return std::min(std::max(x, 0.f), alpha); });
      break;
    case K::kSquare:
      apply([](float x) { return x * x; });
      break;
    case K::kSqrt:
      apply([](float x) { return std::sqrt(x); });
      break;
    case K::kExp:
      apply([](float x) { return std::exp(x); });
      break;
    case K::kAbs:
      apply([](float x) { return std::fabs(x); });
      break;
    case K::kElu:
      apply([&](float x) { return x > 0.f ? x : alpha * std::expm1(x); });
      break;
    case K::kGelu:
      apply([](float x) { return 0.5f * x * (1.f + std::erf(x / std::sqrt(2.f))); });
      break;
  }
}

// What a quantized layer derives from its weights once: int8 weights (MXNet's, or float ones
// quantized per channel, or int8 ones rescaled to keep the bias in range), the int32 bias in the
// scale of the sums and the weights' scale(s).
struct SgFcWeights {
  NDArray weight;  // int8 (hidden, k); none: the input's own int8 weights
  std::vector<int32_t> bias;
  std::vector<float> weight_scales;  // one, or one per output channel
};

// Channel-wise (mkldnn_common.h's GetWeightScales and the scaled reorders): each output channel's
// scale maps its largest weight onto 127.5 levels, lowered where the bias would pass INT32_MAX / 2;
// weights and bias are rounded to nearest even, as oneDNN's reorder does.
SgFcWeights ChannelWiseWeights(const TBlob& weight, const float* bias, float data_scale) {
  const int64_t hidden = weight.shape[0], k = weight.shape[1];
  const float* w = weight.ptr<const float>();
  SgFcWeights r;
  r.weight = NDArray(Shape{hidden, k}, DType::kInt8);
  int8_t* q = r.weight.data<int8_t>();
  r.weight_scales.resize(static_cast<size_t>(hidden));
  if (bias != nullptr) r.bias.resize(static_cast<size_t>(hidden));
  for (int64_t c = 0; c < hidden; ++c) {
    float lo = std::numeric_limits<float>::max(), hi = std::numeric_limits<float>::lowest();
    for (int64_t j = 0; j < k; ++j) {
      lo = std::min(lo, w[c * k + j]);
      hi = std::max(hi, w[c * k + j]);
    }
    float scale = internal::QuantizeScale(DType::kInt8, lo, hi);
    if (bias != nullptr && bias[c] != 0.f) {
      const float limit = static_cast<float>(bias[c] > 0.f ? std::numeric_limits<int32_t>::max()
                                                           : std::numeric_limits<int32_t>::min());
      scale = std::min(scale, limit / 2 / bias[c] / data_scale);
    }
    r.weight_scales[static_cast<size_t>(c)] = scale;
    for (int64_t j = 0; j < k; ++j) {
      q[c * k + j] = internal::SaturateRoundEven<int8_t>(w[c * k + j] * scale);
    }
    if (bias != nullptr) {
      r.bias[static_cast<size_t>(c)] =
          internal::SaturateRoundEven<int32_t>(bias[c] * (scale * data_scale));
    }
  }
  return r;
}

// Tensor-wise (mkldnn_fc.cc): the int8 bias in the sums' scale, rounded half away from zero; where
// that scale would take the bias past INT32_MAX / 2, the weights are rescaled instead.
SgFcWeights TensorWiseWeights(const TBlob& weight, const TBlob* bias, float data_scale,
                              float min_weight, float max_weight, float min_bias, float max_bias) {
  SgFcWeights r;
  float weight_scale = internal::QuantizeScale(DType::kInt8, min_weight, max_weight);
  if (bias != nullptr) {
    const float bias_scale = internal::QuantizeScale(DType::kInt8, min_bias, max_bias);
    float rescale = data_scale * weight_scale / bias_scale;
    const float max_rescale = static_cast<float>(std::numeric_limits<int32_t>::max() / 2) /
                              internal::MaxAbs(min_bias, max_bias) / bias_scale;
    if (rescale > max_rescale) {
      rescale = max_rescale;
      const float weight_rescale = rescale * bias_scale / data_scale / weight_scale;
      r.weight = NDArray(weight.shape, DType::kInt8);
      const int8_t* w = weight.ptr<const int8_t>();
      int8_t* q = r.weight.data<int8_t>();
      for (int64_t i = 0; i < weight.Size(); ++i)
        q[i] = static_cast<int8_t>(std::round(w[i] * weight_rescale));
      weight_scale *= weight_rescale;
    }
    const int8_t* b = bias->ptr<const int8_t>();
    r.bias.resize(static_cast<size_t>(bias->Size()));
    for (size_t i = 0; i < r.bias.size(); ++i)
      r.bias[i] = static_cast<int32_t>(std::round(b[i] * rescale));
  }
  r.weight_scales = {weight_scale};
  return r;
}

void SgFcQuantizedForward(const OpContext& ctx, const NodeAttrs& attrs,
                          const SgFullyConnectedGraph& g, const std::vector<TBlob>& in,
                          const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<SgFullyConnectedParam>();
  const size_t base = BaseInputs(g.fc);
  const bool has_bias = !g.fc.no_bias;
  const float min_data = ScalarOf(in[base]), max_data = ScalarOf(in[base + 1]);
  const float data_scale = internal::QuantizeScale(in[0].dtype, min_data, max_data);
  // Tensor-wise layers have the ranges of their int8 weight and bias as inputs.
  float min_weight = 0.f, max_weight = 0.f, min_bias = 0.f, max_bias = 0.f;
  if (!p.channel_wise()) {
    min_weight = ScalarOf(in[base + 2]);
    max_weight = ScalarOf(in[base + 3]);
    if (has_bias) {
      min_bias = ScalarOf(in[base + 4]);
      max_bias = ScalarOf(in[base + 5]);
    }
  }
  // The derived weights depend on the data's range and on the bias too: both are in the key.
  auto derive = [&] {
    if (p.channel_wise()) {
      return ChannelWiseWeights(in[1], has_bias ? in[2].ptr<const float>() : nullptr, data_scale);
    }
    return TensorWiseWeights(in[1], has_bias ? &in[2] : nullptr, data_scale, min_weight, max_weight,
                             min_bias, max_bias);
  };
  std::shared_ptr<const SgFcWeights> weights;
  const NDArray* weight_array = ctx.InputArray(1);
  const NDArray* bias_array = has_bias ? ctx.InputArray(2) : nullptr;
  if (weight_array != nullptr && (!has_bias || bias_array != nullptr)) {
    std::string key = "sg-fc-int8:" + internal::ValueText(data_scale) + ":" +
                      internal::ValueText(min_weight) + ":" + internal::ValueText(max_weight);
    if (has_bias) {
      key += ":" + std::to_string(internal::WriteStamp(*bias_array)) + ":" +
             internal::ValueText(min_bias) + ":" + internal::ValueText(max_bias);
    }
    weights = std::static_pointer_cast<const SgFcWeights>(internal::DerivedData(
        *weight_array, key, [&] { return std::make_shared<const SgFcWeights>(derive()); }));
  } else {
    weights = std::make_shared<const SgFcWeights>(derive());
  }

  Int8DenseSpec spec;
  spec.k = in[1].shape[1];
  spec.hidden = g.fc.num_hidden;
  spec.rows = RowsOf(in[0], spec.k);
  spec.src = in[0].dtype;
  spec.dst = out[0].dtype;
  spec.has_bias = has_bias;
  spec.eltwise = g.eltwise;
  float out_scale = 0.f;  // requantized: the output's int8/uint8 scale
  if (p.requantized() || p.enable_float_output) {
    float scale = 1.f / data_scale;
    if (p.requantized()) {
      out_scale = internal::QuantizeScale(spec.dst, *p.min_calib_range, *p.max_calib_range);
      if (spec.eltwise.kind != Int8Eltwise::Kind::kNone) {
        spec.eltwise.scale = out_scale;
      } else {
        scale = out_scale / data_scale;
      }
    }
    for (float ws : weights->weight_scales) spec.output_scales.push_back(scale / ws);
  }
  const bool own_weight = !weights->weight.is_none();
  const int8_t* w = own_weight ? weights->weight.data<int8_t>() : in[1].ptr<const int8_t>();
  internal::RunInt8Dense(spec, in[0].data, w, has_bias ? weights->bias.data() : nullptr,
                         out[0].data, own_weight ? &weights->weight : weight_array, ctx.workspace);
  if (out.size() == 3) {
    float* min_out = out[1].ptr<float>();
    float* max_out = out[2].ptr<float>();
    if (p.requantized()) {
      *min_out = *p.min_calib_range;
      *max_out = *p.max_calib_range;
    } else {
      ProductRange(spec.src, min_data, max_data, min_weight, max_weight, min_out, max_out);
    }
  }
}

void SgFcCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                 const std::vector<TBlob>& out) {
  const std::shared_ptr<const SgFullyConnectedGraph> graph = SubgraphOf(attrs);
  const SgFullyConnectedGraph& g = *graph;
  if (attrs.Param<SgFullyConnectedParam>().quantized) {
    SgFcQuantizedForward(ctx, attrs, g, in, out);
  } else {
    SgFcFloatForward(ctx, g, in, out[0]);
  }
}

}  // namespace

void RegisterQuantizedFullyConnectedOps(OpRegistry* r) {
  r->Register("_contrib_quantized_fully_connected")
      .Describe(
          "FullyConnected on int8 or uint8 data and int8 weight and bias, each with its float "
          "range (min, max): int32 sums, and the float range they stand for.")
      .SetParam<FullyConnectedParam>()
      .SetInputNames(QuantizedFcInputNames)
      .SetNumOutputs(3)
      .SetOutputNames(internal::RangeOutputNames)
      .SetInferShape(ContribQuantizedFcShape)
      .SetInferType(ContribQuantizedFcType)
      .SetCompute(ContribQuantizedFcCompute);

  r->Register("_sg_mkldnn_fully_connected")
      .AddAlias("_sg_onednn_fully_connected")
      .Describe(
          "MXNet's oneDNN FullyConnected: the subgraph's FullyConnected and optional elementwise "
          "op in one layer, on float data, or quantized (int8/uint8 data with its range) with an "
          "int32, requantized int8/uint8 or float output.")
      .SetParam<SgFullyConnectedParam>(InitSgFullyConnected)
      .SetInputNames(SgFcInputNames)
      .SetNumOutputs(SgFcNumOutputs)
      .SetOutputNames(SgFcOutputNames)
      .SetInferShape(SgFcShape)
      .SetInferType(SgFcType)
      .SetCompute(SgFcCompute);
}

}  // namespace hybridnet
