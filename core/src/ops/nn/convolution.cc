// Convolution and Deconvolution (MXNet src/operator/nn/convolution*.{h,cc},
// deconvolution*.{h,cc}): 1-D, 2-D and 3-D, channel-first layouts (NCW, NCHW, NCDHW), groups,
// stride, dilation, symmetric padding, optional bias. NHWC/NDHWC are GPU-only in MXNet and
// raise kUnsupported here.
//
// Kernels: kernels/convolution.h picks ours or oneDNN's for each call; deconvolution is oneDNN's
// transposed convolution.
//
// "_hn_convolution" (internal, made by the graph optimizer) is a Convolution with an epilogue:
// BatchNorm (inference), a residual add and an activation or clip, in that order, each
// bit-identical to the op it replaces, on channel-first or channel-last (NWC, NHWC, NDHWC) data.
#include "kernels/convolution.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "kernels/activation-inl.h"
#include "kernels/batch_norm.h"
#include "kernels/layout.h"
#include "kernels/pooling.h"
#include "kernels/workspace.h"
#include "onnx/onnx_convert.h"
#include "ops/gradient_util.h"
#include "ops/nn/convolution_param.h"
#include "ops/register_ops.h"

namespace hybridnet {
namespace {

using internal::ChannelFirstShape;
using internal::ChannelLastShape;
using internal::Layout;

// ---------------------------------------------------------------------------------------------
// Parameters

// The internal "_hn_convolution": Convolution plus the epilogue the graph optimizer folds into
// it (pass/fuse.cc), and optionally the 1x1 convolution that computes its data (MobileNet v2's
// expansion before a depthwise convolution) with that one's own epilogue, or the max pooling
// that reads its output (an image network's stem). Inputs: data, weight,
// [bias], [gamma, beta, moving_mean, moving_var], [expand_weight, [expand_bias], [expand_gamma,
// expand_beta, expand_moving_mean, expand_moving_var]], [residual] (FusedInputs); the weights
// keep MXNet's layout whatever the data layout.
struct FusedConvolutionParam : ConvolutionParam {
  bool bn = false;
  double bn_eps = 0;
  bool bn_fix_gamma = true;
  bool residual = false;
  std::optional<internal::ActType> act_type;
  bool clip = false;
  float clip_a_min = 0.f, clip_a_max = 0.f;
  bool channel_first_data = false;
  bool expand = false;
  uint32_t expand_num_filter = 0;
  bool expand_no_bias = true;
  bool expand_bn = false;
  double expand_bn_eps = 0;
  bool expand_bn_fix_gamma = true;
  bool expand_relu = false;
  bool expand_clip = false;
  float expand_clip_a_min = 0.f, expand_clip_a_max = 0.f;
  bool pool = false;
  std::vector<int64_t> pool_kernel, pool_stride, pool_pad;
  bool pool_full = false;

  static void Declare(ParamDeclarer<FusedConvolutionParam>* d) {
    DeclareFields(d);
    d->template Field<Layout>("layout", &FusedConvolutionParam::layout,
                              internal::PoolingLayoutNames())
        .Default(std::nullopt)
        .Describe(
            "Data and output layout: channel-first (default) or channel-last (NWC, NHWC, "
            "NDHWC).");
    d->Field("bn", &FusedConvolutionParam::bn)
        .Default(false)
        .Describe("A BatchNorm (inference) follows: inputs gamma, beta, moving_mean, moving_var.");
    d->Field("bn_eps", &FusedConvolutionParam::bn_eps)
        .Default(0.0)
        .Describe("The BatchNorm's eps.");
    d->Field("bn_fix_gamma", &FusedConvolutionParam::bn_fix_gamma)
        .Default(true)
        .Describe("The BatchNorm's fix_gamma.");
    d->Field("residual", &FusedConvolutionParam::residual)
        .Default(false)
        .Describe("Adds the last input (of the output's shape) after the BatchNorm.");
    d->Field("act_type", &FusedConvolutionParam::act_type, internal::ActTypeNames())
        .Default(std::nullopt)
        .Describe("Activation applied last.");
    d->Field("clip", &FusedConvolutionParam::clip)
        .Default(false)
        .Describe("Applies clip(clip_a_min, clip_a_max) last (ReLU6), instead of act_type.");
    d->Field("clip_a_min", &FusedConvolutionParam::clip_a_min)
        .Default(0.f)
        .Describe("The clip's a_min.");
    d->Field("clip_a_max", &FusedConvolutionParam::clip_a_max)
        .Default(0.f)
        .Describe("The clip's a_max.");
    d->Field("channel_first_data", &FusedConvolutionParam::channel_first_data)
        .Default(false)
        .Describe(
            "With a channel-last layout, the data alone stays channel-first: a first layer "
            "reading the network's input as it comes.");
    d->Field("expand", &FusedConvolutionParam::expand)
        .Default(false)
        .Describe(
            "The data first goes through a 1x1 convolution (stride 1, no padding, one "
            "group) with inputs expand_weight and the expand_ epilogue's.");
    d->Field("expand_num_filter", &FusedConvolutionParam::expand_num_filter)
        .Default(0u)
        .Describe("The 1x1 convolution's num_filter: the channels the main convolution reads.");
    d->Field("expand_no_bias", &FusedConvolutionParam::expand_no_bias)
        .Default(true)
        .Describe("The 1x1 convolution has no bias input.");
    d->Field("expand_bn", &FusedConvolutionParam::expand_bn)
        .Default(false)
        .Describe(
            "A BatchNorm (inference) follows the 1x1 convolution: inputs expand_gamma, "
            "expand_beta, expand_moving_mean, expand_moving_var.");
    d->Field("expand_bn_eps", &FusedConvolutionParam::expand_bn_eps)
        .Default(0.0)
        .Describe("That BatchNorm's eps.");
    d->Field("expand_bn_fix_gamma", &FusedConvolutionParam::expand_bn_fix_gamma)
        .Default(true)
        .Describe("That BatchNorm's fix_gamma.");
    d->Field("expand_relu", &FusedConvolutionParam::expand_relu)
        .Default(false)
        .Describe("Applies relu last to the 1x1 convolution's result.");
    d->Field("expand_clip", &FusedConvolutionParam::expand_clip)
        .Default(false)
        .Describe(
            "Applies clip(expand_clip_a_min, expand_clip_a_max) last to the 1x1 "
            "convolution's result, instead of relu.");
    d->Field("expand_clip_a_min", &FusedConvolutionParam::expand_clip_a_min)
        .Default(0.f)
        .Describe("That clip's a_min.");
    d->Field("expand_clip_a_max", &FusedConvolutionParam::expand_clip_a_max)
        .Default(0.f)
        .Describe("That clip's a_max.");
    d->Field("pool", &FusedConvolutionParam::pool)
        .Default(false)
        .Describe("A 2-D max pooling (Pooling, pool_type max) of the result is the output.");
    d->Field("pool_kernel", &FusedConvolutionParam::pool_kernel)
        .Default({})
        .Describe("That pooling's kernel (y, x).");
    d->Field("pool_stride", &FusedConvolutionParam::pool_stride)
        .Default({})
        .Describe("Its stride (y, x).");
    d->Field("pool_pad", &FusedConvolutionParam::pool_pad).Default({}).Describe("Its pad (y, x).");
    d->Field("pool_full", &FusedConvolutionParam::pool_full)
        .Default(false)
        .Describe("Its pooling_convention is full (output sizes rounded up), else valid.");
  }
};

// The input positions of a _hn_convolution (kAbsent where the input is not there).
struct FusedInputs {
  static constexpr size_t kAbsent = SIZE_MAX;
  explicit FusedInputs(const FusedConvolutionParam& p) {
    size_t next = 2;
    auto take = [&next](bool present, size_t n) {
      const size_t at = present ? next : kAbsent;
      if (present) next += n;
      return at;
    };
    bias = take(!p.no_bias, 1);
    bn = take(p.bn, 4);
    expand_weight = take(p.expand, 1);
    expand_bias = take(p.expand && !p.expand_no_bias, 1);
    expand_bn = take(p.expand && p.expand_bn, 4);
    residual = take(p.residual, 1);
    count = next;
  }
  size_t bias, bn, expand_weight, expand_bias, expand_bn, residual, count;
};

struct DeconvolutionParam {
  std::vector<int64_t> kernel;
  std::vector<int64_t> stride;
  std::vector<int64_t> dilate;
  std::vector<int64_t> pad;
  std::vector<int64_t> adj;
  std::vector<int64_t> target_shape;
  uint32_t num_filter = 0;
  uint32_t num_group = 1;
  int64_t workspace = 512;
  bool no_bias = true;
  std::optional<CudnnTune> cudnn_tune;
  bool cudnn_off = false;
  std::optional<Layout> layout;

  static void Declare(ParamDeclarer<DeconvolutionParam>* d) {
    d->Field("kernel", &DeconvolutionParam::kernel)
        .Required()
        .Describe(
            "Deconvolution kernel size: (w,), (h, w) or (d, h, w). This is same as the "
            "kernel size used for the corresponding convolution");
    d->Field("stride", &DeconvolutionParam::stride)
        .Default({})
        .Describe(
            "The stride used for the corresponding convolution: (w,), (h, w) or "
            "(d, h, w). Defaults to 1 for each dimension.");
    d->Field("dilate", &DeconvolutionParam::dilate)
        .Default({})
        .Describe(
            "Dilation factor for each dimension of the input: (w,), (h, w) or (d, h, w). "
            "Defaults to 1 for each dimension.");
    d->Field("pad", &DeconvolutionParam::pad)
        .Default({})
        .Describe(
            "The amount of implicit zero padding added during convolution for each "
            "dimension of the input: (w,), (h, w) or (d, h, w). If `target_shape` is "
            "set, `pad` is ignored and a padding that generates the target shape is used. "
            "Defaults to no padding.");
    d->Field("adj", &DeconvolutionParam::adj)
        .Default({})
        .Describe(
            "Adjustment for output shape: (w,), (h, w) or (d, h, w). If `target_shape` "
            "is set, `adj` is ignored and computed accordingly.");
    d->Field("target_shape", &DeconvolutionParam::target_shape)
        .Default({})
        .Describe("Shape of the output tensor: (w,), (h, w) or (d, h, w).");
    d->Field("num_filter", &DeconvolutionParam::num_filter)
        .Required()
        .Min(1)
        .Describe("Number of output filters.");
    d->Field("num_group", &DeconvolutionParam::num_group)
        .Default(1u)
        .Min(1)
        .Describe("Number of groups partition.");
    d->Field("workspace", &DeconvolutionParam::workspace)
        .Default(int64_t{512})
        .Min(0)
        .Describe(
            "Maximum temporary workspace allowed (MB) in deconvolution. Accepted for "
            "compatibility.");
    d->Field("no_bias", &DeconvolutionParam::no_bias)
        .Default(true)
        .Describe("Whether to disable bias parameter.");
    d->Field("cudnn_tune", &DeconvolutionParam::cudnn_tune, CudnnTuneNames())
        .Default(std::nullopt)
        .Describe(
            "Whether to pick convolution algorithm by running performance test. Ignored "
            "on CPU.");
    d->Field("cudnn_off", &DeconvolutionParam::cudnn_off)
        .Default(false)
        .Describe("Turn off cudnn for this layer. Ignored on CPU.");
    d->Field("layout", &DeconvolutionParam::layout, internal::ConvLayoutNames())
        .Default(std::nullopt)
        .Describe(
            "Set layout for input, output and weight. Empty for default layout, NCW for "
            "1d, NCHW for 2d and NCDHW for 3d. NHWC and NDHWC are only supported on GPU.");
  }
};

// MXNet's ConvolutionParamParser / DeconvolutionParamParser: rank-dependent defaults, then
// every window tuple must have the kernel's length.
template <typename P>
void InitWindowParam(P* p, const char* what, std::vector<int64_t>* adj) {
  const size_t nk = p->kernel.size();
  HN_CHECK(nk >= 1 && nk <= 3, kInvalidArgument)
      << nk << "-D " << what << " is not supported (kernel=" << Shape(p->kernel).ToString()
      << "; expected (w,), (h, w) or (d, h, w))";
  if (p->stride.empty()) p->stride.assign(nk, 1);
  if (p->dilate.empty()) p->dilate.assign(nk, 1);
  if (p->pad.empty()) p->pad.assign(nk, 0);
  if (adj != nullptr && adj->empty()) adj->assign(nk, 0);
  auto same_rank = [&](const std::vector<int64_t>& v, const char* name) {
    HN_CHECK(v.size() == nk, kInvalidArgument)
        << name << " must have the same number of dimensions as kernel, but kernel is "
        << Shape(p->kernel).ToString() << " while " << name << " is " << Shape(v).ToString();
  };
  same_rank(p->stride, "stride");
  same_rank(p->dilate, "dilate");
  same_rank(p->pad, "pad");
  if (adj != nullptr) same_rank(*adj, "adj");
  for (size_t i = 0; i < nk; ++i) {
    HN_CHECK(p->kernel[i] > 0, kInvalidArgument)
        << "incorrect kernel size: " << Shape(p->kernel).ToString();
    HN_CHECK(p->stride[i] > 0, kInvalidArgument)
        << "incorrect stride size: " << Shape(p->stride).ToString();
    HN_CHECK(p->dilate[i] > 0, kInvalidArgument)
        << "incorrect dilate size: " << Shape(p->dilate).ToString();
    HN_CHECK(p->pad[i] >= 0, kInvalidArgument)
        << "incorrect pad size: " << Shape(p->pad).ToString();
  }
  if (p->layout) {
    HN_CHECK(internal::LayoutRank(*p->layout) == nk, kInvalidArgument)
        << "layout " << internal::LayoutName(*p->layout) << " does not match the " << nk
        << "-D kernel " << Shape(p->kernel).ToString() << " (use "
        << internal::LayoutName(internal::ChannelFirstLayout(nk)) << ")";
  }
}

void ConvolutionParamInit(ConvolutionParam* p) { InitWindowParam(p, "convolution", nullptr); }

void FusedConvolutionParamInit(FusedConvolutionParam* p) {
  InitWindowParam(p, "convolution", nullptr);
  HN_CHECK(!p->expand || p->expand_num_filter >= 1, kInvalidArgument)
      << "expand_num_filter must be at least 1 with expand=True";
  HN_CHECK(!(p->expand_relu && p->expand_clip), kInvalidArgument)
      << "expand_relu and expand_clip exclude each other";
  HN_CHECK(
      !p->channel_first_data || (p->layout && internal::IsChannelLast(*p->layout) && !p->expand),
      kInvalidArgument)
      << "channel_first_data needs a channel-last layout and no expand";
  if (!p->pool) return;
  HN_CHECK(p->kernel.size() == 2 && p->pool_kernel.size() == 2 && p->pool_stride.size() == 2 &&
               p->pool_pad.size() == 2,
           kInvalidArgument)
      << "pool needs a 2-D convolution and a 2-D pool_kernel, pool_stride and pool_pad";
  for (size_t i = 0; i < 2; ++i) {
    HN_CHECK(p->pool_kernel[i] > 0 && p->pool_stride[i] > 0 && p->pool_pad[i] >= 0,
             kInvalidArgument)
        << "incorrect pooling window: kernel " << Shape(p->pool_kernel).ToString() << ", stride "
        << Shape(p->pool_stride).ToString() << ", pad " << Shape(p->pool_pad).ToString();
  }
  HN_CHECK(!p->expand && !p->residual && (!p->act_type || *p->act_type == internal::ActType::kRelu),
           kInvalidArgument)
      << "pool excludes expand, residual and activations other than relu";
}

void DeconvolutionParamInit(DeconvolutionParam* p) {
  InitWindowParam(p, "deconvolution", &p->adj);
  for (int64_t a : p->adj)
    HN_CHECK(a >= 0, kInvalidArgument) << "incorrect adj: " << Shape(p->adj).ToString();
  if (!p->target_shape.empty()) {
    HN_CHECK(p->target_shape.size() == p->kernel.size(), kInvalidArgument)
        << "target_shape " << Shape(p->target_shape).ToString()
        << " must have one entry per kernel "
        << "dimension (kernel " << Shape(p->kernel).ToString() << ")";
    for (int64_t t : p->target_shape)
      HN_CHECK(t >= 0, kInvalidArgument)
          << "incorrect target_shape: " << Shape(p->target_shape).ToString();
  }
}

template <typename P>
void CheckLayoutSupported(const NodeAttrs& attrs, const P& p) {
  if (!p.layout) return;
  HN_CHECK(!internal::IsChannelLast(*p.layout), kUnsupported)
      << DescribeNode(attrs) << ": layout " << internal::LayoutName(*p.layout)
      << " is not supported on CPU (MXNet runs it on GPU only); use "
      << internal::LayoutName(internal::ChannelFirstLayout(p.kernel.size()));
}

// ---------------------------------------------------------------------------------------------
// Shape inference

void AssignShape(const NodeAttrs& attrs, const char* what, const Shape& expected, Shape* target,
                 const std::string& why) {
  Shape merged = *target;
  HN_CHECK(MergeShape(expected, &merged), kShapeError)
      << DescribeNode(attrs) << ": " << what << " shape " << *target << " does not match the "
      << "expected " << expected << " (" << why << ")";
  *target = merged;
}

bool AllKnown(const std::vector<Shape>& in, const std::vector<Shape>& out) {
  for (const auto& s : in)
    if (!s.IsKnown()) return false;
  for (const auto& s : out)
    if (!s.IsKnown()) return false;
  return true;
}

int64_t DilatedKernel(int64_t k, int64_t d) { return 1 + (k - 1) * d; }

// Convolution's output size along spatial axis i for an input of in_dim.
int64_t ConvolvedSize(const ConvolutionParam& p, size_t i, int64_t in_dim) {
  return (in_dim + 2 * p.pad[i] - DilatedKernel(p.kernel[i], p.dilate[i])) / p.stride[i] + 1;
}

void CheckArity(const NodeAttrs& attrs, size_t n_in, bool no_bias, size_t n_out) {
  HN_CHECK(n_in == (no_bias ? 2u : 3u), kInternal)
      << DescribeNode(attrs) << ": expected "
      << (no_bias ? "[data, weight]" : "[data, weight, bias]") << " inputs, got " << n_in;
  HN_CHECK(n_out >= 1, kInternal) << DescribeNode(attrs) << ": expected one output";
}

std::string WindowText(const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
                       const std::vector<int64_t>& dilate, const std::vector<int64_t>& pad) {
  return "kernel=" + Shape(kernel).ToString() + ", stride=" + Shape(stride).ToString() +
         ", dilate=" + Shape(dilate).ToString() + ", pad=" + Shape(pad).ToString();
}

// The input checks Convolution and Deconvolution share: the bias shape, num_filter and input
// channels divisible by num_group, the data rank (channel-first shapes). Returns false while the
// data shape is still unknown.
template <typename P>
bool CheckConvShapes(const NodeAttrs& attrs, const P& p, std::vector<Shape>* in) {
  const int64_t F = p.num_filter, G = p.num_group;
  const size_t nk = p.kernel.size();
  if (!p.no_bias) {
    AssignShape(attrs, "bias", Shape({F}), &(*in)[2], "num_filter=" + std::to_string(F));
  }
  HN_CHECK(F % G == 0, kInvalidArgument)
      << DescribeNode(attrs) << ": num_filter " << F << " is not divisible by num_group " << G;
  const Shape& data = (*in)[0];
  if (data.ndim() == 0) return false;
  HN_CHECK(data.ndim() == nk + 2, kShapeError)
      << DescribeNode(attrs) << ": data must be " << nk + 2 << "-D (batch, channel, "
      << (nk == 1   ? "x"
          : nk == 2 ? "y, x"
                    : "d, y, x")
      << ") for kernel " << Shape(p.kernel).ToString() << ", got " << data;
  HN_CHECK(data[1] == 0 || data[1] % G == 0, kShapeError)
      << DescribeNode(attrs) << ": input channels " << data[1] << " (data " << data
      << ") are not divisible by num_group " << G;
  return true;
}

// Arity and layout of the public ops, then the shared checks.
template <typename P>
bool CheckConvInputs(const NodeAttrs& attrs, const P& p, std::vector<Shape>* in, size_t num_out) {
  CheckArity(attrs, in->size(), p.no_bias, num_out);
  CheckLayoutSupported(attrs, p);
  return CheckConvShapes(attrs, p, in);
}

// Convolution's inference on channel-first shapes: in = [data, weight, (bias)], out = [output].
bool InferConvolution(const NodeAttrs& attrs, const ConvolutionParam& p, std::vector<Shape>* in,
                      std::vector<Shape>* out) {
  if (!CheckConvShapes(attrs, p, in)) return false;
  const int64_t F = p.num_filter, G = p.num_group;
  const size_t nk = p.kernel.size();
  const Shape data = (*in)[0];
  const int64_t C = data[1];

  std::vector<int64_t> wdims = {F, C == 0 ? 0 : C / G};
  wdims.insert(wdims.end(), p.kernel.begin(), p.kernel.end());
  AssignShape(attrs, "weight", Shape(wdims), &(*in)[1],
              "num_filter=" + std::to_string(F) + ", num_group=" + std::to_string(G) +
                  ", kernel=" + Shape(p.kernel).ToString() + ", data " + data.ToString());

  std::vector<int64_t> odims = {data[0], F};
  for (size_t i = 0; i < nk; ++i) {
    const int64_t in_dim = data[2 + i];
    const int64_t dk = DilatedKernel(p.kernel[i], p.dilate[i]);
    if (in_dim == 0) {
      odims.push_back(0);
      continue;
    }
    HN_CHECK(dk <= in_dim + 2 * p.pad[i], kShapeError)
        << DescribeNode(attrs) << ": kernel size exceeds input: dilated kernel " << dk
        << " > input " << in_dim << " padded to " << in_dim + 2 * p.pad[i] << " along spatial "
        << "axis " << i << " (data " << data << ", "
        << WindowText(p.kernel, p.stride, p.dilate, p.pad) << ")";
    odims.push_back(ConvolvedSize(p, i, in_dim));
  }
  AssignShape(attrs, "output", Shape(odims), &(*out)[0],
              "data " + data.ToString() + ", " + WindowText(p.kernel, p.stride, p.dilate, p.pad));

  // Incomplete inference backwards (as MXNet): the batch, and spatial dims where stride is 1.
  const Shape& o = (*out)[0];
  std::vector<int64_t> back = data.dims();
  if (back[0] == 0) back[0] = o[0];
  for (size_t i = 0; i < nk; ++i) {
    if (back[2 + i] == 0 && o[2 + i] != 0 && p.stride[i] == 1)
      back[2 + i] = o[2 + i] + DilatedKernel(p.kernel[i], p.dilate[i]) - 1 - 2 * p.pad[i];
  }
  AssignShape(attrs, "data", Shape(back), &(*in)[0], "inferred from the output");
  return AllKnown(*in, *out);
}

bool ConvolutionInferShape(const NodeAttrs& attrs, std::vector<Shape>* in,
                           std::vector<Shape>* out) {
  const auto& p = attrs.Param<ConvolutionParam>();
  CheckArity(attrs, in->size(), p.no_bias, out->size());
  CheckLayoutSupported(attrs, p);
  return InferConvolution(attrs, p, in, out);
}

bool IsChannelLast(const std::optional<Layout>& layout) {
  return layout && internal::IsChannelLast(*layout);
}

// The data's shape (channel-first) where the 1x1 convolution of `p` has produced it from `data`;
// checks and fills in that convolution's parameters' shapes.
Shape ExpandedShape(const NodeAttrs& attrs, const FusedConvolutionParam& p, const FusedInputs& at,
                    const Shape& data, std::vector<Shape>* in) {
  const int64_t F = p.expand_num_filter;
  if (at.expand_bias != FusedInputs::kAbsent) {
    AssignShape(attrs, "expand_bias", Shape({F}), &(*in)[at.expand_bias],
                "expand_num_filter=" + std::to_string(F));
  }
  for (size_t i = 0; at.expand_bn != FusedInputs::kAbsent && i < 4; ++i) {
    AssignShape(attrs, "expand BatchNorm parameter", Shape({F}), &(*in)[at.expand_bn + i],
                "expand_num_filter=" + std::to_string(F));
  }
  if (data.ndim() == 0) return data;
  HN_CHECK(data.ndim() == p.kernel.size() + 2, kShapeError)
      << DescribeNode(attrs) << ": data must be " << p.kernel.size() + 2 << "-D for kernel "
      << Shape(p.kernel).ToString() << ", got " << data;
  std::vector<int64_t> w = {F, data[1]};
  w.insert(w.end(), p.kernel.size(), 1);
  AssignShape(attrs, "expand_weight", Shape(w), &(*in)[at.expand_weight],
              "expand_num_filter=" + std::to_string(F) + ", data " + data.ToString());
  Shape expanded = data;
  expanded[1] = F;
  return expanded;
}

bool FusedConvolutionInferShape(const NodeAttrs& attrs, std::vector<Shape>* in,
                                std::vector<Shape>* out) {
  const auto& p = attrs.Param<FusedConvolutionParam>();
  const FusedInputs at(p);
  HN_CHECK(in->size() == at.count && out->size() == 1, kInternal)
      << DescribeNode(attrs) << ": expected " << at.count << " inputs and 1 output, got "
      << in->size() << " and " << out->size();
  const bool cl = IsChannelLast(p.layout);
  auto first = [&](const Shape& s) { return cl ? ChannelFirstShape(s) : s; };
  auto last = [&](const Shape& s) { return cl ? ChannelLastShape(s) : s; };
  const size_t n_conv = p.no_bias ? 2 : 3;
  std::vector<Shape> conv_in(in->begin(), in->begin() + static_cast<std::ptrdiff_t>(n_conv));
  if (p.expand) {
    conv_in[0] = ExpandedShape(attrs, p, at, first((*in)[0]), in);
  } else if (!p.channel_first_data) {
    conv_in[0] = first(conv_in[0]);
  }
  std::vector<Shape> conv_out = {p.pool ? Shape() : first((*out)[0])};
  if (p.residual) {
    AssignShape(attrs, "residual", first((*in)[at.residual]), &conv_out[0], "the output's shape");
  }
  InferConvolution(attrs, p, &conv_in, &conv_out);
  if (!p.expand) (*in)[0] = p.channel_first_data ? conv_in[0] : last(conv_in[0]);
  for (size_t i = 1; i < n_conv; ++i) (*in)[i] = conv_in[i];
  if (p.pool && conv_out[0].ndim() == 4) {
    std::vector<int64_t> pooled = conv_out[0].dims();
    for (size_t i = 0; i < 2; ++i) {
      const int64_t x = pooled[2 + i];
      HN_CHECK(p.pool_kernel[i] <= x + 2 * p.pool_pad[i], kShapeError)
          << DescribeNode(attrs) << ": pooling kernel size (" << p.pool_kernel[i]
          << ") exceeds the convolution's output (" << x << " padded to " << x + 2 * p.pool_pad[i]
          << ") along spatial axis " << i;
      pooled[2 + i] =
          internal::PooledSize(x, p.pool_kernel[i], p.pool_stride[i], p.pool_pad[i], p.pool_full);
    }
    AssignShape(attrs, "output", last(Shape(pooled)), &(*out)[0], "the pooled shape");
  } else if (!p.pool) {
    (*out)[0] = last(conv_out[0]);
  }
  for (size_t i = 0; at.bn != FusedInputs::kAbsent && i < 4; ++i) {
    AssignShape(attrs, "BatchNorm parameter", Shape({static_cast<int64_t>(p.num_filter)}),
                &(*in)[at.bn + i], "num_filter=" + std::to_string(p.num_filter));
  }
  if (p.residual) (*in)[at.residual] = (*out)[0];
  return AllKnown(*in, *out);
}

// Deconvolution's effective pad and adj for a given input (MXNet's InferPad): a non-zero
// target_shape overrides both.
void DeconvPadAdj(const DeconvolutionParam& p, const int64_t* in_spatial, int64_t* pad,
                  int64_t* adj) {
  bool use_target = false;
  for (int64_t t : p.target_shape) use_target = use_target || t != 0;
  for (size_t i = 0; i < p.kernel.size(); ++i) {
    if (!use_target) {
      pad[i] = p.pad[i];
      adj[i] = p.adj[i];
    } else if (in_spatial[i] != 0) {
      int64_t full = p.stride[i] * (in_spatial[i] - 1) + DilatedKernel(p.kernel[i], p.dilate[i]);
      int64_t excess = full - p.target_shape[i];
      adj[i] = excess % 2;
      pad[i] = (excess + 1) / 2;
    } else {
      pad[i] = 0;
      adj[i] = 0;
    }
  }
}

bool DeconvolutionInferShape(const NodeAttrs& attrs, std::vector<Shape>* in,
                             std::vector<Shape>* out) {
  const auto& p = attrs.Param<DeconvolutionParam>();
  if (!CheckConvInputs(attrs, p, in, out->size())) return false;
  const int64_t F = p.num_filter, G = p.num_group;
  const size_t nk = p.kernel.size();
  const Shape data = (*in)[0];
  const int64_t C = data[1];

  std::vector<int64_t> wdims = {C, F / G};
  wdims.insert(wdims.end(), p.kernel.begin(), p.kernel.end());
  AssignShape(attrs, "weight", Shape(wdims), &(*in)[1],
              "num_filter=" + std::to_string(F) + ", num_group=" + std::to_string(G) +
                  ", kernel=" + Shape(p.kernel).ToString() + ", data " + data.ToString());

  int64_t pad[3], adj[3];
  DeconvPadAdj(p, data.begin() + 2, pad, adj);
  std::vector<int64_t> odims = {data[0], F};
  for (size_t i = 0; i < nk; ++i) {
    const int64_t in_dim = data[2 + i];
    if (in_dim == 0) {
      odims.push_back(0);
      continue;
    }
    const int64_t full = p.stride[i] * (in_dim - 1) + DilatedKernel(p.kernel[i], p.dilate[i]);
    if (!p.target_shape.empty() && p.target_shape[i] != 0) {
      HN_CHECK(full >= p.target_shape[i], kShapeError)
          << DescribeNode(attrs) << ": target_shape " << Shape(p.target_shape).ToString()
          << " is too big: at most " << full << " along spatial axis " << i << " for data " << data;
    }
    HN_CHECK(adj[i] <= p.stride[i] - 1, kShapeError)
        << DescribeNode(attrs) << ": adj " << adj[i] << " must be smaller than stride "
        << p.stride[i] << " along spatial axis " << i;
    const int64_t o = full - 2 * pad[i] + adj[i];
    HN_CHECK(o > 0, kShapeError) << DescribeNode(attrs) << ": output size " << o
                                 << " along spatial axis " << i << " is not positive (data " << data
                                 << ", " << WindowText(p.kernel, p.stride, p.dilate, p.pad)
                                 << ", adj=" << Shape(p.adj).ToString() << ")";
    if (!p.target_shape.empty() && p.target_shape[i] > 0) {
      HN_CHECK(o == p.target_shape[i], kShapeError)
          << DescribeNode(attrs) << ": target_shape " << Shape(p.target_shape).ToString()
          << " cannot be reached along spatial axis " << i << " (got " << o << ")";
    }
    odims.push_back(o);
  }
  AssignShape(attrs, "output", Shape(odims), &(*out)[0],
              "data " + data.ToString() + ", " + WindowText(p.kernel, p.stride, p.dilate, p.pad));
  // The batch flows back; spatial dims do not (several inputs give one output).
  if ((*in)[0][0] == 0 && (*out)[0][0] != 0) {
    Shape back = (*in)[0];
    back[0] = (*out)[0][0];
    (*in)[0] = back;
  }
  return AllKnown(*in, *out);
}

// ---------------------------------------------------------------------------------------------
// Kernels

// The backend call for data x into output y (channel-first or channel-last shapes; with
// data_channel_first, x alone is channel-first).
internal::ConvSpec ConvolutionSpec(const ConvolutionParam& p, const Shape& x, const Shape& y,
                                   bool channel_last, bool data_channel_first = false) {
  internal::ConvSpec s;
  const size_t nd = p.kernel.size();
  const bool x_last = channel_last && !data_channel_first;
  s.nd = static_cast<int64_t>(nd);
  s.channel_last = channel_last;
  s.data_channel_first = channel_last && data_channel_first;
  s.N = x[0];
  s.C = x_last ? x[nd + 1] : x[1];
  s.F = p.num_filter;
  s.G = p.num_group;
  for (size_t i = 0; i < nd; ++i) {
    s.in[i] = x[(x_last ? 1 : 2) + i];
    s.out[i] = y[(channel_last ? 1 : 2) + i];
    s.kernel[i] = p.kernel[i];
    s.stride[i] = p.stride[i];
    s.dilate[i] = p.dilate[i];
    s.pad_l[i] = s.pad_r[i] = p.pad[i];
  }
  s.bias = !p.no_bias;
  return s;
}

// A call's data in[0] and weight in[weight], and its bias in[bias] unless that is
// FusedInputs::kAbsent; the arrays behind them too, so derived layouts are kept.
internal::ConvArgs ConvInputs(const OpContext& ctx, const std::vector<TBlob>& in, size_t weight,
                              size_t bias) {
  internal::ConvArgs a;
  a.workspace = ctx.workspace;
  a.data = in[0].ptr<const float>();
  a.weight = in[weight].ptr<const float>();
  a.weight_array = ctx.InputArray(weight);
  if (bias != FusedInputs::kAbsent) {
    a.epilogue.bias = in[bias].ptr<const float>();
    a.bias_array = ctx.InputArray(bias);
  }
  return a;
}

// The arguments of a Convolution or Deconvolution without an epilogue: data, weight, bias.
internal::ConvArgs PlainConvArgs(const OpContext& ctx, const std::vector<TBlob>& in,
                                 const std::vector<TBlob>& out, bool no_bias) {
  internal::ConvArgs a = ConvInputs(ctx, in, 1, no_bias ? FusedInputs::kAbsent : 2);
  a.out = out[0].ptr<float>();
  return a;
}

void ConvolutionCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                        const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<ConvolutionParam>();
  internal::ConvArgs a = PlainConvArgs(ctx, in, out, p.no_bias);
  internal::RunConvolution(ConvolutionSpec(p, in[0].shape, out[0].shape, false), a);
}

// Sets the BatchNorm of call (s, a) from its four inputs from in[first]: the BatchNorm kernel's
// own scale and shift, computed into workspace slot `slot`.
void SetBatchNorm(const OpContext& ctx, const std::vector<TBlob>& in, size_t first, double eps,
                  bool fix_gamma, internal::WorkspaceSlot slot, const NDArray** arrays,
                  internal::ConvSpec* s, internal::ConvArgs* a) {
  const size_t F = static_cast<size_t>(s->F);
  float* affine = ctx.workspace->Get<float>(slot, 2 * F);
  internal::BatchNormScaleShift(in[first].ptr<const float>(), in[first + 1].ptr<const float>(),
                                in[first + 2].ptr<const float>(), in[first + 3].ptr<const float>(),
                                eps, fix_gamma, s->F, affine, affine + F);
  for (size_t i = 0; i < 4; ++i) arrays[i] = ctx.InputArray(first + i);
  s->bn = 1;
  a->epilogue.bn_scale = affine;
  a->epilogue.bn_shift = affine + F;
  a->bn_arrays = arrays;
}

void FusedConvolutionCompute(const OpContext& ctx, const NodeAttrs& attrs,
                             const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<FusedConvolutionParam>();
  const FusedInputs at(p);
  const bool cl = IsChannelLast(p.layout);
  // The main convolution's data: the input, or what the 1x1 convolution makes of it.
  Shape conv_data = in[0].shape;
  if (p.expand) conv_data[cl ? conv_data.ndim() - 1 : 1] = p.expand_num_filter;
  // The main convolution's output: the output, or what the pooling reads.
  Shape conv_out = out[0].shape;
  if (p.pool) {
    for (size_t i = 0; i < 2; ++i) {
      conv_out[(cl ? 1 : 2) + i] =
          ConvolvedSize(p, i, conv_data[(cl && !p.channel_first_data ? 1 : 2) + i]);
    }
  }
  internal::ConvSpec s = ConvolutionSpec(p, conv_data, conv_out, cl, p.channel_first_data);
  internal::ConvArgs a = ConvInputs(ctx, in, 1, at.bias);
  const NDArray* bn_arrays[4] = {nullptr, nullptr, nullptr, nullptr};
  if (p.bn) {
    SetBatchNorm(ctx, in, at.bn, p.bn_eps, p.bn_fix_gamma, internal::kBatchNormAffineSlot,
                 bn_arrays, &s, &a);
  }
  if (p.residual) {
    s.residual = 1;
    a.residual = in[at.residual].ptr<const float>();
  }
  const bool relu = p.act_type == internal::ActType::kRelu;
  s.relu = relu;
  s.fast_math = ctx.fast_math;
  a.epilogue.clip = p.clip;
  a.epilogue.clip_min = p.clip_a_min;
  a.epilogue.clip_max = p.clip_a_max;
  a.out = out[0].ptr<float>();
  if (p.expand) {
    ConvolutionParam ep;
    const size_t nk = p.kernel.size();
    ep.kernel = ep.stride = ep.dilate = std::vector<int64_t>(nk, 1);
    ep.pad = std::vector<int64_t>(nk, 0);
    ep.num_filter = p.expand_num_filter;
    ep.no_bias = p.expand_no_bias;
    internal::ConvSpec es = ConvolutionSpec(ep, in[0].shape, conv_data, cl);
    es.relu = p.expand_relu;
    es.fast_math = ctx.fast_math;
    internal::ConvArgs ea = ConvInputs(ctx, in, at.expand_weight, at.expand_bias);
    const NDArray* expand_bn_arrays[4] = {nullptr, nullptr, nullptr, nullptr};
    if (p.expand_bn) {
      SetBatchNorm(ctx, in, at.expand_bn, p.expand_bn_eps, p.expand_bn_fix_gamma,
                   internal::kExpandAffineSlot, expand_bn_arrays, &es, &ea);
    }
    ea.epilogue.clip = p.expand_clip;
    ea.epilogue.clip_min = p.expand_clip_a_min;
    ea.epilogue.clip_max = p.expand_clip_a_max;
    internal::RunExpandThenDepthwise(es, ea, s, a);
  } else if (p.pool) {
    internal::MaxPoolWindow window;
    for (size_t i = 0; i < 2; ++i) {
      window.kernel[i] = p.pool_kernel[i];
      window.stride[i] = p.pool_stride[i];
      window.pad[i] = p.pool_pad[i];
    }
    internal::RunConvolutionThenMaxPool(s, a, window, out[0].shape[cl ? 1 : 2],
                                        out[0].shape[cl ? 2 : 3]);
  } else {
    internal::RunConvolution(s, a);
  }
  if (p.act_type && !relu) {
    float* y = out[0].ptr<float>();
    internal::ApplyActivation(*p.act_type, y, y, out[0].Size());
  }
}

void DeconvolutionCompute(const OpContext& ctx, const NodeAttrs& attrs,
                          const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<DeconvolutionParam>();
  const Shape& x = in[0].shape;
  const Shape& y = out[0].shape;
  int64_t pad[3], adj[3];
  DeconvPadAdj(p, x.begin() + 2, pad, adj);
  internal::ConvSpec s;
  const size_t nd = p.kernel.size();
  s.deconv = 1;
  s.nd = static_cast<int64_t>(nd);
  s.N = x[0];
  s.C = x[1];
  s.F = p.num_filter;
  s.G = p.num_group;
  for (size_t i = 0; i < nd; ++i) {
    s.in[i] = x[2 + i];
    s.out[i] = y[2 + i];
    s.kernel[i] = p.kernel[i];
    s.stride[i] = p.stride[i];
    s.dilate[i] = p.dilate[i];
    // out = (in - 1) * stride + dilated kernel - pad_l - pad_r, with pad_r = pad - adj.
    s.pad_l[i] = pad[i];
    s.pad_r[i] = pad[i] - adj[i];
  }
  s.bias = !p.no_bias;
  internal::ConvArgs a = PlainConvArgs(ctx, in, out, p.no_bias);
  internal::RunConvolution(s, a);
}

// ---------------------------------------------------------------------------------------------
// ONNX: Conv and ConvTranspose take the same window attributes; pads list every begin, then
// every end.

std::vector<OnnxAttr> WindowAttrs(const std::vector<int64_t>& kernel,
                                  const std::vector<int64_t>& stride,
                                  const std::vector<int64_t>& dilate, std::vector<int64_t> pads,
                                  uint32_t groups) {
  pads.insert(pads.end(), pads.begin(), pads.end());
  return {{"kernel_shape", kernel},
          {"strides", stride},
          {"dilations", dilate},
          {"pads", pads},
          {"group", static_cast<int64_t>(groups)}};
}

void ConvolutionOnnx(OnnxNodeContext* ctx) {
  const auto& p = ctx->param<ConvolutionParam>();
  ctx->Add("Conv", ctx->input_names(),
           WindowAttrs(p.kernel, p.stride, p.dilate, p.pad, p.num_group), ctx->out(0).name);
}

// The pad and adj MXNet derives (from target_shape when given) become pads and output_padding:
// both crop `pad` at the start and add `adj` computed rows at the end.
void DeconvolutionOnnx(OnnxNodeContext* ctx) {
  const auto& p = ctx->param<DeconvolutionParam>();
  int64_t pad[3], adj[3];
  DeconvPadAdj(p, ctx->in(0).shape.begin() + 2, pad, adj);
  const size_t nk = p.kernel.size();
  std::vector<OnnxAttr> attrs =
      WindowAttrs(p.kernel, p.stride, p.dilate, std::vector<int64_t>(pad, pad + nk), p.num_group);
  attrs.emplace_back("output_padding", std::vector<int64_t>(adj, adj + nk));
  ctx->Add("ConvTranspose", ctx->input_names(), attrs, ctx->out(0).name);
}

template <typename P>
std::vector<std::string> ConvInputNames(const NodeAttrs& attrs) {
  if (attrs.Param<P>().no_bias) return {"data", "weight"};
  return {"data", "weight", "bias"};
}

// The output may take the residual's memory: every kernel reads a position's residual before it
// writes that position, and nothing else reads the residual. Saves the residual's copy into
// oneDNN's output (its sum post-op) and a tensor's worth of cache lines per residual block.
std::vector<std::pair<uint32_t, uint32_t>> FusedConvolutionInplace(const NodeAttrs& attrs) {
  const FusedInputs at(attrs.Param<FusedConvolutionParam>());
  if (at.residual == FusedInputs::kAbsent) return {};
  return {{static_cast<uint32_t>(at.residual), 0}};
}

std::vector<std::string> FusedConvolutionInputNames(const NodeAttrs& attrs) {
  const auto& p = attrs.Param<FusedConvolutionParam>();
  std::vector<std::string> names = {"data", "weight"};
  if (!p.no_bias) names.push_back("bias");
  const char* const bn[] = {"gamma", "beta", "moving_mean", "moving_var"};
  if (p.bn) names.insert(names.end(), std::begin(bn), std::end(bn));
  if (p.expand) {
    names.push_back("expand_weight");
    if (!p.expand_no_bias) names.push_back("expand_bias");
    for (size_t i = 0; p.expand_bn && i < 4; ++i) names.push_back(std::string("expand_") + bn[i]);
  }
  if (p.residual) names.push_back("residual");
  return names;
}

// ---------------------------------------------------------------------------------------------
// Gradients: "_backward_Convolution" and "_backward_Deconvolution", inputs (out_grad, data,
// weight[, bias]) and the forward's attributes, outputs the gradients of data, weight[, bias].
// A deconvolution is the transpose of the convolution of its output into its input, so its
// gradients run that convolution's kernels: d data is the convolution (forward) of out_grad,
// d weight that convolution's weight gradient with the roles of data and out_grad swapped.

template <typename P>
std::vector<std::string> ConvBackwardInputNames(const NodeAttrs& attrs) {
  std::vector<std::string> names = ConvInputNames<P>(attrs);
  names.insert(names.begin(), "out_grad");
  return names;
}

template <typename P>
uint32_t ConvBackwardNumOutputs(const NodeAttrs& attrs) {
  return attrs.Param<P>().no_bias ? 2u : 3u;
}

// The forward's inference over (data, weight[, bias]) -> out_grad; each gradient has its input's
// shape.
template <bool (*kForwardShape)(const NodeAttrs&, std::vector<Shape>*, std::vector<Shape>*)>
bool ConvBackwardShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  HN_CHECK(!in->empty() && in->size() == out->size() + 1, kInternal)
      << DescribeNode(attrs) << ": expected out_grad and the forward's inputs, one gradient each";
  std::vector<Shape> forward_in(in->begin() + 1, in->end());
  std::vector<Shape> forward_out{(*in)[0]};
  for (size_t i = 0; i < out->size(); ++i) {
    HN_CHECK(MergeShape((*out)[i], &forward_in[i]), kShapeError)
        << DescribeNode(attrs) << ": gradient " << i << " has shape " << (*out)[i] << ", its input "
        << forward_in[i];
  }
  const bool known = kForwardShape(attrs, &forward_in, &forward_out);
  (*in)[0] = forward_out[0];
  for (size_t i = 0; i < forward_in.size(); ++i) (*in)[i + 1] = (*out)[i] = forward_in[i];
  return known;
}

int64_t SpatialSize(const Shape& s) {
  int64_t size = 1;
  for (size_t i = 2; i < s.ndim(); ++i) size *= s[i];
  return size;
}

// Zero gradients where there is nothing to convolve (an empty batch or channel axis).
bool FillEmptyGradients(const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  if (in[0].Size() != 0 && in[1].Size() != 0) return false;
  for (const TBlob& g : out) std::fill(g.ptr<float>(), g.ptr<float>() + g.Size(), 0.f);
  return true;
}

void ConvolutionBackwardCompute(const OpContext& ctx, const NodeAttrs& attrs,
                                const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  if (FillEmptyGradients(in, out)) return;
  const auto& p = attrs.Param<ConvolutionParam>();
  const Shape& y = in[0].shape;
  internal::ConvSpec s = ConvolutionSpec(p, in[1].shape, y, false);
  s.bias = 0;
  internal::ConvGradArgs a;
  a.data = in[1].ptr<const float>();
  a.weight = in[2].ptr<const float>();
  a.weight_array = ctx.InputArray(2);
  a.out_grad = in[0].ptr<const float>();
  a.data_grad = out[0].ptr<float>();
  a.weight_grad = out[1].ptr<float>();
  a.workspace = ctx.workspace;
  internal::RunConvolutionGradients(s, a);
  if (!p.no_bias) {
    internal::ConvolutionBiasGradient(a.out_grad, y[0], y[1], SpatialSize(y), out[2].ptr<float>());
  }
}

void DeconvolutionBackwardCompute(const OpContext& ctx, const NodeAttrs& attrs,
                                  const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  if (FillEmptyGradients(in, out)) return;
  const auto& p = attrs.Param<DeconvolutionParam>();
  const Shape& x = in[1].shape;
  const Shape& y = in[0].shape;
  int64_t pad[3], adj[3];
  DeconvPadAdj(p, x.begin() + 2, pad, adj);
  // The convolution of y's shape into x's (adj < stride: the symmetric pad gives x's size).
  internal::ConvSpec s;
  const size_t nd = p.kernel.size();
  s.nd = static_cast<int64_t>(nd);
  s.N = x[0];
  s.C = p.num_filter;
  s.F = x[1];
  s.G = p.num_group;
  for (size_t i = 0; i < nd; ++i) {
    s.in[i] = y[2 + i];
    s.out[i] = x[2 + i];
    s.kernel[i] = p.kernel[i];
    s.stride[i] = p.stride[i];
    s.dilate[i] = p.dilate[i];
    s.pad_l[i] = s.pad_r[i] = pad[i];
  }
  internal::ConvArgs forward;
  forward.workspace = ctx.workspace;
  forward.data = in[0].ptr<const float>();
  forward.weight = in[2].ptr<const float>();
  forward.weight_array = ctx.InputArray(2);
  forward.out = out[0].ptr<float>();
  internal::RunConvolution(s, forward);
  internal::ConvGradArgs a;
  a.data = in[0].ptr<const float>();
  a.out_grad = in[1].ptr<const float>();
  a.weight_grad = out[1].ptr<float>();
  a.workspace = ctx.workspace;
  internal::RunConvolutionGradients(s, a);
  if (!p.no_bias) {
    internal::ConvolutionBiasGradient(in[0].ptr<const float>(), y[0], y[1], SpatialSize(y),
                                      out[2].ptr<float>());
  }
}

template <const char* kBackwardOp>
std::vector<NodeEntry> ConvGradient(const std::shared_ptr<Node>& n,
                                    const std::vector<NodeEntry>& dy) {
  internal::GradientBuilder g(n, dy);
  std::vector<NodeEntry> inputs{g.out_grad(0)};
  inputs.insert(inputs.end(), n->inputs.begin(), n->inputs.end());
  std::shared_ptr<Node> backward = g.MakeNode(kBackwardOp, std::move(inputs), g.attrs().dict);
  std::vector<NodeEntry> grads;
  for (uint32_t i = 0; i < n->inputs.size(); ++i) grads.push_back(NodeEntry{backward, i, 0});
  return grads;
}

constexpr char kBackwardConvolution[] = "_backward_Convolution";
constexpr char kBackwardDeconvolution[] = "_backward_Deconvolution";

// ---------------------------------------------------------------------------------------------
// _hn_relayout: channel-first <-> channel-last, placed by the graph optimizer (pass/layout.cc).

struct RelayoutParam {
  bool channel_last = true;
  static void Declare(ParamDeclarer<RelayoutParam>* d) {
    d->Field("channel_last", &RelayoutParam::channel_last)
        .Default(true)
        .Describe("True: (N, C, spatial...) to (N, spatial..., C); False: back.");
  }
};

bool RelayoutInferShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const bool to_last = attrs.Param<RelayoutParam>().channel_last;
  HN_CHECK(in->size() == 1 && out->size() == 1, kInternal) << DescribeNode(attrs) << ": arity";
  if ((*in)[0].ndim() != 0) {
    HN_CHECK((*in)[0].ndim() >= 3, kShapeError)
        << DescribeNode(attrs) << ": data must have a batch, a channel and spatial axes, got "
        << (*in)[0];
    AssignShape(attrs, "output", to_last ? ChannelLastShape((*in)[0]) : ChannelFirstShape((*in)[0]),
                &(*out)[0], "the data re-laid-out");
  }
  if ((*out)[0].ndim() != 0) {
    AssignShape(attrs, "data", to_last ? ChannelFirstShape((*out)[0]) : ChannelLastShape((*out)[0]),
                &(*in)[0], "the output laid back");
  }
  return (*in)[0].IsKnown() && (*out)[0].IsKnown();
}

void RelayoutCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                     const std::vector<TBlob>& out) {
  const bool to_last = attrs.Param<RelayoutParam>().channel_last;
  const Shape& x = in[0].shape;
  const int64_t N = x[0], C = to_last ? x[1] : x[x.ndim() - 1];
  if (x.Size() == 0) return;
  internal::Relayout(in[0].ptr<const float>(), out[0].ptr<float>(), N, C, x.Size() / (N * C),
                     to_last, ctx.workspace);
}

}  // namespace

void RegisterConvolutionOps(OpRegistry* r) {
  r->Register("Convolution")
      .Describe(
          "Computes 1-D, 2-D or 3-D convolution: out[n, f] = bias[f] + sum over c of "
          "weight[f, c] correlated with data[n, c]. Inputs data (batch, channel, "
          "spatial...), weight (num_filter, channel/num_group, *kernel) and bias "
          "(num_filter,) unless no_bias. Output spatial size is "
          "floor((x + 2*pad - (dilate*(kernel-1)+1)) / stride) + 1.")
      .SetParam<ConvolutionParam>(ConvolutionParamInit)
      .SetInputNames(ConvInputNames<ConvolutionParam>)
      .SetInferShape(ConvolutionInferShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(ConvolutionCompute)
      .SetOnnx({"Conv"}, ConvolutionOnnx)
      .SetGradient(ConvGradient<kBackwardConvolution>);

  r->Register(kBackwardConvolution)
      .Describe(
          "The gradient of Convolution: d data is the transposed convolution of out_grad by "
          "the weights, d weight the correlation of out_grad with the data, d bias the sum "
          "of out_grad over the batch and positions.")
      .SetParam<ConvolutionParam>(ConvolutionParamInit)
      .SetInputNames(ConvBackwardInputNames<ConvolutionParam>)
      .SetNumOutputs(ConvBackwardNumOutputs<ConvolutionParam>)
      .SetInferShape(ConvBackwardShape<ConvolutionInferShape>)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(ConvolutionBackwardCompute)
      .SetInternal();

  r->Register("_hn_convolution")
      .Describe(
          "Convolution followed by BatchNorm (inference), a residual add, an "
          "activation and a max pooling, each optional, fused by the graph optimizer "
          "on channel-first or channel-last data; bit-identical to the ops run one "
          "after the other unless the executor runs with fast_math.")
      .SetParam<FusedConvolutionParam>(FusedConvolutionParamInit)
      .SetInputNames(FusedConvolutionInputNames)
      .SetInferShape(FusedConvolutionInferShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(FusedConvolutionCompute)
      .SetInplace(FusedConvolutionInplace)
      .SetInternal();

  r->Register("_hn_relayout")
      .Describe(
          "Copies data between the channel-first and channel-last layouts; placed by "
          "the graph optimizer where channel-last convolutions meet other ops.")
      .SetParam<RelayoutParam>()
      .SetInputNames(std::vector<std::string>{"data"})
      .SetInferShape(RelayoutInferShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(RelayoutCompute)
      .SetInternal();

  r->Register("Deconvolution")
      .Describe(
          "Computes the transposed convolution (the gradient of Convolution with "
          "respect to its data). Inputs data (batch, channel, spatial...), weight "
          "(channel, num_filter/num_group, *kernel) and bias (num_filter,) unless "
          "no_bias (the default). Output spatial size is stride*(x-1) + "
          "dilate*(kernel-1)+1 - 2*pad + adj, or target_shape when given.")
      .SetParam<DeconvolutionParam>(DeconvolutionParamInit)
      .SetInputNames(ConvInputNames<DeconvolutionParam>)
      .SetInferShape(DeconvolutionInferShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(DeconvolutionCompute)
      .SetOnnx({"ConvTranspose"}, DeconvolutionOnnx)
      .SetGradient(ConvGradient<kBackwardDeconvolution>);

  r->Register(kBackwardDeconvolution)
      .Describe(
          "The gradient of Deconvolution: d data is the convolution of out_grad by the "
          "weights, d weight the correlation of the data with out_grad, d bias the sum of "
          "out_grad over the batch and positions.")
      .SetParam<DeconvolutionParam>(DeconvolutionParamInit)
      .SetInputNames(ConvBackwardInputNames<DeconvolutionParam>)
      .SetNumOutputs(ConvBackwardNumOutputs<DeconvolutionParam>)
      .SetInferShape(ConvBackwardShape<DeconvolutionInferShape>)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(DeconvolutionBackwardCompute)
      .SetInternal();
}

}  // namespace hybridnet
