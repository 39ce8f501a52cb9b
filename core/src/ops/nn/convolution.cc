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
#include "kernels/convolution_float64.h"
#include "kernels/layout.h"
#include "kernels/onednn.h"
#include "kernels/pooling.h"
#include "kernels/workspace.h"
#include "onnx/onnx_convert.h"
#include "ops/gradient_util.h"
#include "ops/nn/convolution_fusions.h"
#include "ops/nn/convolution_param.h"
#include "ops/real_type.h"
#include "ops/register_ops.h"
#include "pass/gradient.h"

namespace hybridnet {
namespace {

using internal::ChannelFirstShape;
using internal::ChannelLastShape;
using internal::Layout;

// ---------------------------------------------------------------------------------------------
// Parameters

// The internal "_hn_convolution": a Convolution's own attributes, parsed from its strings, and
// the fusions the passes set as typed fields (convolution_fusions.h).
struct FusedConvolutionParam : ConvolutionParam {
  internal::ConvolutionFusions fusions;

  static void Declare(ParamDeclarer<FusedConvolutionParam>* d) {
    DeclareFields(d);
    d->template Field<Layout>("layout", &FusedConvolutionParam::layout,
                              internal::PoolingLayoutNames())
        .Default(std::nullopt)
        .Describe(
            "Data and output layout: channel-first (default) or channel-last (NWC, NHWC, "
            "NDHWC).");
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
    const internal::ConvolutionFusions& f = p.fusions;
    bias = take(!p.no_bias, 1);
    bn = take(f.bn.has_value(), 4);
    expand_weight = take(f.expand.has_value(), 1);
    expand_bias = take(f.expand && f.expand->bias, 1);
    expand_bn = take(f.expand && f.expand->bn, 4);
    residual = take(f.residual, 1);
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
}

// The combinations the kernels run (FusedConvolutionCompute).
void CheckFusions(const FusedConvolutionParam& p) {
  const internal::ConvolutionFusions& f = p.fusions;
  HN_CHECK(!(f.act && f.clip), kInvalidArgument) << "an activation and a clip exclude each other";
  HN_CHECK(!f.expand || f.expand->num_filter >= 1, kInvalidArgument)
      << "the expansion's num_filter must be at least 1";
  HN_CHECK(!f.expand || !(f.expand->relu && f.expand->clip), kInvalidArgument)
      << "the expansion's relu and clip exclude each other";
  HN_CHECK(!f.channel_first_data || (p.layout && internal::IsChannelLast(*p.layout) && !f.expand),
           kInvalidArgument)
      << "channel_first_data needs a channel-last layout and no expansion";
  if (!f.pool) return;
  const internal::MaxPoolAfter& pool = *f.pool;
  HN_CHECK(p.kernel.size() == 2 && pool.kernel.size() == 2 && pool.stride.size() == 2 &&
               pool.pad.size() == 2,
           kInvalidArgument)
      << "a fused pooling needs a 2-D convolution and a 2-D kernel, stride and pad";
  for (size_t i = 0; i < 2; ++i) {
    HN_CHECK(pool.kernel[i] > 0 && pool.stride[i] > 0 && pool.pad[i] >= 0, kInvalidArgument)
        << "incorrect pooling window: kernel " << Shape(pool.kernel).ToString() << ", stride "
        << Shape(pool.stride).ToString() << ", pad " << Shape(pool.pad).ToString();
  }
  HN_CHECK(!f.expand && !f.residual && (!f.act || *f.act == internal::ActType::kRelu),
           kInvalidArgument)
      << "a fused pooling excludes the expansion, the residual and activations other than relu";
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
  const int64_t F = p.fusions.expand->num_filter;
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
  const internal::ConvolutionFusions& f = p.fusions;
  if (f.expand) {
    conv_in[0] = ExpandedShape(attrs, p, at, first((*in)[0]), in);
  } else if (!f.channel_first_data) {
    conv_in[0] = first(conv_in[0]);
  }
  std::vector<Shape> conv_out = {f.pool ? Shape() : first((*out)[0])};
  if (f.residual) {
    AssignShape(attrs, "residual", first((*in)[at.residual]), &conv_out[0], "the output's shape");
  }
  InferConvolution(attrs, p, &conv_in, &conv_out);
  if (!f.expand) (*in)[0] = f.channel_first_data ? conv_in[0] : last(conv_in[0]);
  for (size_t i = 1; i < n_conv; ++i) (*in)[i] = conv_in[i];
  if (f.pool && conv_out[0].ndim() == 4) {
    const internal::MaxPoolAfter& pool = *f.pool;
    std::vector<int64_t> pooled = conv_out[0].dims();
    for (size_t i = 0; i < 2; ++i) {
      const int64_t x = pooled[2 + i];
      HN_CHECK(pool.kernel[i] <= x + 2 * pool.pad[i], kShapeError)
          << DescribeNode(attrs) << ": pooling kernel size (" << pool.kernel[i]
          << ") exceeds the convolution's output (" << x << " padded to " << x + 2 * pool.pad[i]
          << ") along spatial axis " << i;
      pooled[2 + i] =
          internal::PooledSize(x, pool.kernel[i], pool.stride[i], pool.pad[i], pool.full);
    }
    AssignShape(attrs, "output", last(Shape(pooled)), &(*out)[0], "the pooled shape");
  } else if (!f.pool) {
    (*out)[0] = last(conv_out[0]);
  }
  for (size_t i = 0; at.bn != FusedInputs::kAbsent && i < 4; ++i) {
    AssignShape(attrs, "BatchNorm parameter", Shape({static_cast<int64_t>(p.num_filter)}),
                &(*in)[at.bn + i], "num_filter=" + std::to_string(p.num_filter));
  }
  if (f.residual) (*in)[at.residual] = (*out)[0];
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

}  // namespace

internal::ConvSpec ConvolutionSpec(const ConvolutionParam& p, const Shape& x, const Shape& y,
                                   bool channel_last, bool data_channel_first) {
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

namespace {

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
  if (in[0].dtype == DType::kFloat64) {
    internal::ConvolutionFloat64(ConvolutionSpec(p, in[0].shape, out[0].shape, false),
                                 in[0].ptr<const double>(), in[1].ptr<const double>(),
                                 p.no_bias ? nullptr : in[2].ptr<const double>(),
                                 out[0].ptr<double>());
    return;
  }
  internal::ConvArgs a = PlainConvArgs(ctx, in, out, p.no_bias);
  internal::ConvSpec s = ConvolutionSpec(p, in[0].shape, out[0].shape, false);
  s.winograd = ctx.fast_math || ctx.is_train;
  internal::RunConvolution(s, a);
}

// Sets the BatchNorm of call (s, a) from its four inputs from in[first]: the BatchNorm kernel's
// own scale and shift, computed into workspace slot `slot`.
void SetBatchNorm(const OpContext& ctx, const std::vector<TBlob>& in, size_t first,
                  const internal::BatchNormFold& bn, internal::WorkspaceSlot slot,
                  const NDArray** arrays, internal::ConvSpec* s, internal::ConvArgs* a) {
  const size_t F = static_cast<size_t>(s->F);
  float* affine = ctx.workspace->Get<float>(slot, 2 * F);
  internal::BatchNormScaleShift(in[first].ptr<const float>(), in[first + 1].ptr<const float>(),
                                in[first + 2].ptr<const float>(), in[first + 3].ptr<const float>(),
                                bn.eps, bn.fix_gamma, s->F, affine, affine + F);
  for (size_t i = 0; i < 4; ++i) arrays[i] = ctx.InputArray(first + i);
  s->bn = 1;
  a->epilogue.bn_scale = affine;
  a->epilogue.bn_shift = affine + F;
  a->bn_arrays = arrays;
}

// Sets the clip of call `a`, if any.
void SetClip(const std::optional<internal::ClipBounds>& clip, internal::ConvArgs* a) {
  if (!clip) return;
  a->epilogue.clip = true;
  a->epilogue.clip_min = clip->a_min;
  a->epilogue.clip_max = clip->a_max;
}

void FusedConvolutionCompute(const OpContext& ctx, const NodeAttrs& attrs,
                             const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<FusedConvolutionParam>();
  const internal::ConvolutionFusions& f = p.fusions;
  const FusedInputs at(p);
  const bool cl = IsChannelLast(p.layout);
  // The main convolution's data: the input, or what the 1x1 convolution makes of it.
  Shape conv_data = in[0].shape;
  if (f.expand) conv_data[cl ? conv_data.ndim() - 1 : 1] = f.expand->num_filter;
  // The main convolution's output: the output, or what the pooling reads.
  Shape conv_out = out[0].shape;
  if (f.pool) {
    for (size_t i = 0; i < 2; ++i) {
      conv_out[(cl ? 1 : 2) + i] =
          ConvolvedSize(p, i, conv_data[(cl && !f.channel_first_data ? 1 : 2) + i]);
    }
  }
  internal::ConvSpec s = ConvolutionSpec(p, conv_data, conv_out, cl, f.channel_first_data);
  internal::ConvArgs a = ConvInputs(ctx, in, 1, at.bias);
  const NDArray* bn_arrays[4] = {nullptr, nullptr, nullptr, nullptr};
  if (f.bn) {
    SetBatchNorm(ctx, in, at.bn, *f.bn, internal::kBatchNormAffineSlot, bn_arrays, &s, &a);
  }
  if (f.residual) {
    s.residual = 1;
    a.residual = in[at.residual].ptr<const float>();
  }
  const bool relu = f.act == internal::ActType::kRelu;
  s.relu = relu;
  s.fast_math = ctx.fast_math;
  s.winograd = ctx.fast_math || ctx.is_train;
  SetClip(f.clip, &a);
  a.out = out[0].ptr<float>();
  a.bf16 = f.bf16;
  if (f.expand) {
    const internal::Expansion& e = *f.expand;
    ConvolutionParam ep;
    const size_t nk = p.kernel.size();
    ep.kernel = ep.stride = ep.dilate = std::vector<int64_t>(nk, 1);
    ep.pad = std::vector<int64_t>(nk, 0);
    ep.num_filter = e.num_filter;
    ep.no_bias = !e.bias;
    internal::ConvSpec es = ConvolutionSpec(ep, in[0].shape, conv_data, cl);
    es.relu = e.relu;
    es.fast_math = ctx.fast_math;
    es.winograd = s.winograd;
    internal::ConvArgs ea = ConvInputs(ctx, in, at.expand_weight, at.expand_bias);
    const NDArray* expand_bn_arrays[4] = {nullptr, nullptr, nullptr, nullptr};
    if (e.bn) {
      SetBatchNorm(ctx, in, at.expand_bn, *e.bn, internal::kExpandAffineSlot, expand_bn_arrays, &es,
                   &ea);
    }
    SetClip(e.clip, &ea);
    ea.bf16 = f.bf16;
    internal::RunExpandThenDepthwise(es, ea, s, a);
  } else if (f.pool) {
    internal::MaxPoolWindow window;
    for (size_t i = 0; i < 2; ++i) {
      window.kernel[i] = f.pool->kernel[i];
      window.stride[i] = f.pool->stride[i];
      window.pad[i] = f.pool->pad[i];
    }
    internal::RunConvolutionThenMaxPool(s, a, window, out[0].shape[cl ? 1 : 2],
                                        out[0].shape[cl ? 2 : 3]);
  } else {
    internal::RunConvolution(s, a);
  }
  if (f.act && !relu) {
    float* y = out[0].ptr<float>();
    internal::ApplyActivation(*f.act, y, y, out[0].Size());
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
  const internal::ConvolutionFusions& f = p.fusions;
  std::vector<std::string> names = {"data", "weight"};
  if (!p.no_bias) names.push_back("bias");
  const char* const bn[] = {"gamma", "beta", "moving_mean", "moving_var"};
  if (f.bn) names.insert(names.end(), std::begin(bn), std::end(bn));
  if (f.expand) {
    names.push_back("expand_weight");
    if (f.expand->bias) names.push_back("expand_bias");
    for (size_t i = 0; f.expand->bn && i < 4; ++i) names.push_back(std::string("expand_") + bn[i]);
  }
  if (f.residual) names.push_back("residual");
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

// The backward ops' shapes: out_grad is the forward's output, each gradient its input
// (internal::BackwardShape over the forward's inference).
template <bool (*kForwardShape)(const NodeAttrs&, std::vector<Shape>*, std::vector<Shape>*)>
bool ConvBackwardShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  return internal::BackwardShape(kForwardShape, attrs, in, out);
}

int64_t SpatialSize(const Shape& s) {
  int64_t size = 1;
  for (size_t i = 2; i < s.ndim(); ++i) size *= s[i];
  return size;
}

// Zero gradients where there is nothing to convolve (an empty batch or channel axis).
bool FillEmptyGradients(const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  if (in[0].Size() != 0 && in[1].Size() != 0) return false;
  for (const TBlob& g : out) {
    if (g.dtype == DType::kFloat64) {
      std::fill(g.ptr<double>(), g.ptr<double>() + g.Size(), 0.0);
    } else {
      std::fill(g.ptr<float>(), g.ptr<float>() + g.Size(), 0.f);
    }
  }
  return true;
}

// db[f], the sum of channel-last dy[n, positions, f] over samples and positions, in double, in
// ConvolutionBiasGradient's order per filter.
void ChannelLastBiasGradient(const float* dy, int64_t N, int64_t F, int64_t positions, float* db) {
  for (int64_t f = 0; f < F; ++f) {
    double sum = 0.0;
    for (int64_t at = 0; at < N * positions; ++at) sum += dy[at * F + f];
    db[f] = static_cast<float>(sum);
  }
}

// The gradients of a convolution of parameters p, on channel-first data or (channel_last)
// channel-last data: the same oneDNN primitives either way (kernels/convolution.h).
void RunConvolutionBackward(const OpContext& ctx, const NodeAttrs& attrs, const ConvolutionParam& p,
                            bool channel_last, const std::vector<TBlob>& in,
                            const std::vector<TBlob>& out) {
  if (FillEmptyGradients(in, out)) return;
  const Shape& y = in[0].shape;
  internal::ConvSpec s = ConvolutionSpec(p, in[1].shape, y, channel_last, false);
  s.bias = 0;
  s.winograd = 1;  // gradients are training's
  if (in[0].dtype == DType::kFloat64) {
    HN_CHECK(!channel_last, kUnsupported)
        << DescribeNode(attrs) << ": float64 gradients need channel-first data";
    const double* dy = in[0].ptr<const double>();
    internal::ConvolutionGradientsFloat64(s, in[1].ptr<const double>(), in[2].ptr<const double>(),
                                          dy, out[0].ptr<double>(), out[1].ptr<double>());
    if (p.no_bias) return;
    const int64_t positions = SpatialSize(y);
    double* db = out[2].ptr<double>();
    std::fill(db, db + y[1], 0.0);
    for (int64_t n = 0; n < y[0]; ++n)
      for (int64_t f = 0; f < y[1]; ++f)
        for (int64_t i = 0; i < positions; ++i) db[f] += dy[(n * y[1] + f) * positions + i];
    return;
  }
  internal::ConvGradArgs a;
  a.data = in[1].ptr<const float>();
  a.weight = in[2].ptr<const float>();
  a.weight_array = ctx.InputArray(2);
  a.out_grad = in[0].ptr<const float>();
  // Gradients nobody reads are not computed (the data's, for a network's first layer).
  a.data_grad = internal::GradientOutputUnread(attrs, 0) ? nullptr : out[0].ptr<float>();
  a.weight_grad = internal::GradientOutputUnread(attrs, 1) ? nullptr : out[1].ptr<float>();
  a.workspace = ctx.workspace;
  internal::RunConvolutionGradients(s, a);
  if (!p.no_bias && !internal::GradientOutputUnread(attrs, 2)) {
    const int64_t positions = y.Size() / (s.N * s.F);
    if (channel_last) {
      ChannelLastBiasGradient(a.out_grad, s.N, s.F, positions, out[2].ptr<float>());
    } else {
      internal::ConvolutionBiasGradient(a.out_grad, s.N, s.F, positions, out[2].ptr<float>());
    }
  }
}

void ConvolutionBackwardCompute(const OpContext& ctx, const NodeAttrs& attrs,
                                const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  RunConvolutionBackward(ctx, attrs, attrs.Param<ConvolutionParam>(), false, in, out);
}

// _hn_convolution without fusions (the channel-last training graph's convolutions).
void FusedConvolutionBackwardCompute(const OpContext& ctx, const NodeAttrs& attrs,
                                     const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<FusedConvolutionParam>();
  RunConvolutionBackward(ctx, attrs, p, IsChannelLast(p.layout), in, out);
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
constexpr char kBackwardFusedConvolution[] = "_backward_hn_convolution";

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
  if (in[0].dtype == DType::kFloat32) {
    internal::Relayout(in[0].ptr<const float>(), out[0].ptr<float>(), N, C, x.Size() / (N * C),
                       to_last, ctx.workspace);
  } else {  // int32, int8 or uint8 (RelayoutType): their bits
    const auto type =
        in[0].dtype == DType::kInt32 ? dnnl::memory::data_type::s32 : dnnl::memory::data_type::u8;
    internal::Relayout(in[0].data, out[0].data, type, N, C, x.Size() / (N * C), to_last,
                       ctx.workspace);
  }
}

// Float data between float convolutions, int8, uint8 or int32 around int8 ones; the output's type
// is the data's.
bool RelayoutType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  DType& x = (*in)[0];
  DType& y = (*out)[0];
  if (x == DType::kUnknown) x = y;
  HN_CHECK(x == DType::kUnknown || x == DType::kFloat32 || x == DType::kInt8 ||
               x == DType::kUint8 || x == DType::kInt32,
           kTypeError)
      << DescribeNode(attrs) << ": data must be float32, int8, uint8 or int32, got "
      << DTypeName(x);
  HN_CHECK(y == DType::kUnknown || y == x, kTypeError)
      << DescribeNode(attrs) << ": output " << DTypeName(y) << " differs from data "
      << DTypeName(x);
  y = x;
  return x != DType::kUnknown;
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
      .SetInferType(internal::RealType)
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
      .SetInferType(internal::RealType)
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

  r->Register(kBackwardFusedConvolution)
      .Describe(
          "_backward_Convolution in a layout of _hn_convolution's (channel-last: placed by the "
          "channel-last pass of training graphs): d data, d weight and d bias, in that layout.")
      .SetParam<FusedConvolutionParam>(FusedConvolutionParamInit)
      .SetInputNames(ConvBackwardInputNames<FusedConvolutionParam>)
      .SetNumOutputs(ConvBackwardNumOutputs<FusedConvolutionParam>)
      .SetInferShape(ConvBackwardShape<FusedConvolutionInferShape>)
      .SetInferType(internal::RealType)
      .SetCompute(FusedConvolutionBackwardCompute)
      .SetInternal();

  r->Register("_hn_relayout")
      .Describe(
          "Copies data between the channel-first and channel-last layouts; placed by "
          "the graph optimizer where channel-last convolutions meet other ops.")
      .SetParam<RelayoutParam>()
      .SetInputNames(std::vector<std::string>{"data"})
      .SetInferShape(RelayoutInferShape)
      .SetInferType(RelayoutType)
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

namespace internal {

NodeAttrs FusedConvolutionAttrs(const std::string& name, const AttrDict& convolution,
                                const ConvolutionFusions& fusions) {
  static const Op& fused = OpRegistry::Global().Get("_hn_convolution");
  NodeAttrs attrs = MakeNodeAttrs(fused, name, convolution);
  auto p = std::make_shared<FusedConvolutionParam>(attrs.Param<FusedConvolutionParam>());
  p->fusions = fusions;
  try {
    CheckFusions(*p);
  } catch (const Error& e) {
    throw Error(e.code(), DescribeNode(attrs) + ": " + e.what());
  }
  attrs.parsed = std::move(p);
  return attrs;
}

const ConvolutionFusions& FusionsOf(const NodeAttrs& attrs) {
  static const ConvolutionFusions none;
  static const Op* const fused = OpRegistry::Global().Find("_hn_convolution");
  if (attrs.op == nullptr || attrs.op != fused) return none;
  return attrs.Param<FusedConvolutionParam>().fusions;
}

}  // namespace internal

}  // namespace hybridnet
