// Convolution and Deconvolution (MXNet src/operator/nn/convolution*.{h,cc},
// deconvolution*.{h,cc}): 1-D, 2-D and 3-D, channel-first layouts (NCW, NCHW, NCDHW), groups,
// stride, dilation, symmetric padding, optional bias. NHWC/NDHWC are GPU-only in MXNet and
// raise kUnsupported here.
//
// Kernels: per sample and group, im2col (in row chunks bounded by kConvScratchBudget) and one
// cblas_sgemm; pointwise convolutions (1x1, stride 1, no pad) multiply the input directly.
// Depthwise convolutions (num_group == C > 1) use a direct loop, which beats a chain of tiny
// GEMMs. Deconvolution is the adjoint: sgemm(W^T, x) into columns, then col2im.
// "_hn_convolution_act" (internal, made by the fusion pass) is Convolution + Activation.
#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "ops/nn/activation-inl.h"
#include "ops/nn/im2col-inl.h"
#include "ops/register_ops.h"

namespace hybridnet {
namespace {

using internal::Layout;
using internal::SpatialGeom;
using internal::TupleText;

// ---------------------------------------------------------------------------------------------
// Parameters

enum class CudnnTune { kOff, kLimitedWorkspace, kFastest };

const EnumNames<CudnnTune>& CudnnTuneNames() {
  static const EnumNames<CudnnTune> names = {{"off", CudnnTune::kOff},
                                             {"limited_workspace", CudnnTune::kLimitedWorkspace},
                                             {"fastest", CudnnTune::kFastest}};
  return names;
}

struct ConvolutionParam {
  std::vector<int64_t> kernel;
  std::vector<int64_t> stride;
  std::vector<int64_t> dilate;
  std::vector<int64_t> pad;
  uint32_t num_filter = 0;
  uint32_t num_group = 1;
  int64_t workspace = 1024;
  bool no_bias = false;
  std::optional<CudnnTune> cudnn_tune;
  bool cudnn_off = false;
  std::optional<Layout> layout;

  template <typename P>
  static void DeclareFields(ParamDeclarer<P>* d) {
    d->template Field<std::vector<int64_t>>("kernel", &P::kernel).Required()
        .Describe("Convolution kernel size: (w,), (h, w) or (d, h, w)");
    d->template Field<std::vector<int64_t>>("stride", &P::stride).Default({})
        .Describe("Convolution stride: (w,), (h, w) or (d, h, w). Defaults to 1 for each "
                  "dimension.");
    d->template Field<std::vector<int64_t>>("dilate", &P::dilate).Default({})
        .Describe("Convolution dilate: (w,), (h, w) or (d, h, w). Defaults to 1 for each "
                  "dimension.");
    d->template Field<std::vector<int64_t>>("pad", &P::pad).Default({})
        .Describe("Zero pad for convolution: (w,), (h, w) or (d, h, w). Defaults to no padding.");
    d->template Field<uint32_t>("num_filter", &P::num_filter).Required().Min(1)
        .Describe("Convolution filter(channel) number");
    d->template Field<uint32_t>("num_group", &P::num_group).Default(1u).Min(1)
        .Describe("Number of group partitions.");
    d->template Field<int64_t>("workspace", &P::workspace).Default(int64_t{1024}).Min(0)
        .Describe("Maximum temporary workspace allowed (MB) in convolution. Accepted for "
                  "compatibility; hybridnet bounds its im2col buffer itself.");
    d->template Field<bool>("no_bias", &P::no_bias).Default(false)
        .Describe("Whether to disable bias parameter.");
    d->template Field<CudnnTune>("cudnn_tune", &P::cudnn_tune, CudnnTuneNames())
        .Default(std::nullopt)
        .Describe("Whether to pick convolution algo by running performance test. Ignored on "
                  "CPU.");
    d->template Field<bool>("cudnn_off", &P::cudnn_off).Default(false)
        .Describe("Turn off cudnn for this layer. Ignored on CPU.");
    d->template Field<Layout>("layout", &P::layout, internal::ConvLayoutNames())
        .Default(std::nullopt)
        .Describe("Set layout for input, output and weight. Empty for default layout: NCW for "
                  "1d, NCHW for 2d and NCDHW for 3d. NHWC and NDHWC are only supported on GPU.");
  }
  static void Declare(ParamDeclarer<ConvolutionParam>* d) { DeclareFields(d); }
};

// The internal "_hn_convolution_act": Convolution followed by an Activation, created by the
// fusion pass; the same kernel, then the shared activation code in place (bit-identical).
struct ConvolutionActParam : ConvolutionParam {
  internal::ActType act_type = internal::ActType::kRelu;
  static void Declare(ParamDeclarer<ConvolutionActParam>* d) {
    DeclareFields(d);
    d->Field("act_type", &ConvolutionActParam::act_type, internal::ActTypeNames())
        .Required()
        .Describe("Activation function applied to the Convolution output.");
  }
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
    d->Field("kernel", &DeconvolutionParam::kernel).Required()
        .Describe("Deconvolution kernel size: (w,), (h, w) or (d, h, w). This is same as the "
                  "kernel size used for the corresponding convolution");
    d->Field("stride", &DeconvolutionParam::stride).Default({})
        .Describe("The stride used for the corresponding convolution: (w,), (h, w) or "
                  "(d, h, w). Defaults to 1 for each dimension.");
    d->Field("dilate", &DeconvolutionParam::dilate).Default({})
        .Describe("Dilation factor for each dimension of the input: (w,), (h, w) or (d, h, w). "
                  "Defaults to 1 for each dimension.");
    d->Field("pad", &DeconvolutionParam::pad).Default({})
        .Describe("The amount of implicit zero padding added during convolution for each "
                  "dimension of the input: (w,), (h, w) or (d, h, w). If `target_shape` is "
                  "set, `pad` is ignored and a padding that generates the target shape is used. "
                  "Defaults to no padding.");
    d->Field("adj", &DeconvolutionParam::adj).Default({})
        .Describe("Adjustment for output shape: (w,), (h, w) or (d, h, w). If `target_shape` "
                  "is set, `adj` is ignored and computed accordingly.");
    d->Field("target_shape", &DeconvolutionParam::target_shape).Default({})
        .Describe("Shape of the output tensor: (w,), (h, w) or (d, h, w).");
    d->Field("num_filter", &DeconvolutionParam::num_filter).Required().Min(1)
        .Describe("Number of output filters.");
    d->Field("num_group", &DeconvolutionParam::num_group).Default(1u).Min(1)
        .Describe("Number of groups partition.");
    d->Field("workspace", &DeconvolutionParam::workspace).Default(int64_t{512}).Min(0)
        .Describe("Maximum temporary workspace allowed (MB) in deconvolution. Accepted for "
                  "compatibility.");
    d->Field("no_bias", &DeconvolutionParam::no_bias).Default(true)
        .Describe("Whether to disable bias parameter.");
    d->Field("cudnn_tune", &DeconvolutionParam::cudnn_tune, CudnnTuneNames())
        .Default(std::nullopt)
        .Describe("Whether to pick convolution algorithm by running performance test. Ignored "
                  "on CPU.");
    d->Field("cudnn_off", &DeconvolutionParam::cudnn_off).Default(false)
        .Describe("Turn off cudnn for this layer. Ignored on CPU.");
    d->Field("layout", &DeconvolutionParam::layout, internal::ConvLayoutNames())
        .Default(std::nullopt)
        .Describe("Set layout for input, output and weight. Empty for default layout, NCW for "
                  "1d, NCHW for 2d and NCDHW for 3d. NHWC and NDHWC are only supported on GPU.");
  }
};

// MXNet's ConvolutionParamParser / DeconvolutionParamParser: rank-dependent defaults, then
// every window tuple must have the kernel's length.
template <typename P>
void InitWindowParam(P* p, const char* what, std::vector<int64_t>* adj) {
  const size_t nk = p->kernel.size();
  HN_CHECK(nk >= 1 && nk <= 3, kInvalidArgument)
      << nk << "-D " << what << " is not supported (kernel=" << TupleText(p->kernel)
      << "; expected (w,), (h, w) or (d, h, w))";
  if (p->stride.empty()) p->stride.assign(nk, 1);
  if (p->dilate.empty()) p->dilate.assign(nk, 1);
  if (p->pad.empty()) p->pad.assign(nk, 0);
  if (adj != nullptr && adj->empty()) adj->assign(nk, 0);
  auto same_rank = [&](const std::vector<int64_t>& v, const char* name) {
    HN_CHECK(v.size() == nk, kInvalidArgument)
        << name << " must have the same number of dimensions as kernel, but kernel is "
        << TupleText(p->kernel) << " while " << name << " is " << TupleText(v);
  };
  same_rank(p->stride, "stride");
  same_rank(p->dilate, "dilate");
  same_rank(p->pad, "pad");
  if (adj != nullptr) same_rank(*adj, "adj");
  for (size_t i = 0; i < nk; ++i) {
    HN_CHECK(p->kernel[i] > 0, kInvalidArgument) << "incorrect kernel size: "
                                                 << TupleText(p->kernel);
    HN_CHECK(p->stride[i] > 0, kInvalidArgument) << "incorrect stride size: "
                                                 << TupleText(p->stride);
    HN_CHECK(p->dilate[i] > 0, kInvalidArgument) << "incorrect dilate size: "
                                                 << TupleText(p->dilate);
    HN_CHECK(p->pad[i] >= 0, kInvalidArgument) << "incorrect pad size: " << TupleText(p->pad);
  }
  if (p->layout) {
    HN_CHECK(internal::LayoutRank(*p->layout) == nk, kInvalidArgument)
        << "layout " << internal::LayoutName(*p->layout) << " does not match the " << nk
        << "-D kernel " << TupleText(p->kernel) << " (use "
        << internal::LayoutName(internal::ChannelFirstLayout(nk)) << ")";
  }
}

void ConvolutionParamInit(ConvolutionParam* p) {
  InitWindowParam(p, "convolution", nullptr);
}

void ConvolutionActParamInit(ConvolutionActParam* p) { ConvolutionParamInit(p); }

void DeconvolutionParamInit(DeconvolutionParam* p) {
  InitWindowParam(p, "deconvolution", &p->adj);
  for (int64_t a : p->adj)
    HN_CHECK(a >= 0, kInvalidArgument) << "incorrect adj: " << TupleText(p->adj);
  if (!p->target_shape.empty()) {
    HN_CHECK(p->target_shape.size() == p->kernel.size(), kInvalidArgument)
        << "target_shape " << TupleText(p->target_shape) << " must have one entry per kernel "
        << "dimension (kernel " << TupleText(p->kernel) << ")";
    for (int64_t t : p->target_shape)
      HN_CHECK(t >= 0, kInvalidArgument) << "incorrect target_shape: "
                                         << TupleText(p->target_shape);
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

void CheckArity(const NodeAttrs& attrs, size_t n_in, bool no_bias, size_t n_out) {
  HN_CHECK(n_in == (no_bias ? 2u : 3u), kInternal)
      << DescribeNode(attrs) << ": expected "
      << (no_bias ? "[data, weight]" : "[data, weight, bias]") << " inputs, got " << n_in;
  HN_CHECK(n_out >= 1, kInternal) << DescribeNode(attrs) << ": expected one output";
}

std::string WindowText(const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
                       const std::vector<int64_t>& dilate, const std::vector<int64_t>& pad) {
  return "kernel=" + TupleText(kernel) + ", stride=" + TupleText(stride) +
         ", dilate=" + TupleText(dilate) + ", pad=" + TupleText(pad);
}

// The input checks Convolution and Deconvolution share: arity, layout, the bias shape,
// num_filter and input channels divisible by num_group, the data rank. Returns false while the
// data shape is still unknown.
template <typename P>
bool CheckConvInputs(const NodeAttrs& attrs, const P& p, std::vector<Shape>* in, size_t num_out) {
  CheckArity(attrs, in->size(), p.no_bias, num_out);
  CheckLayoutSupported(attrs, p);
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
      << (nk == 1 ? "x" : nk == 2 ? "y, x" : "d, y, x") << ") for kernel "
      << TupleText(p.kernel) << ", got " << data;
  HN_CHECK(data[1] == 0 || data[1] % G == 0, kShapeError)
      << DescribeNode(attrs) << ": input channels " << data[1] << " (data " << data
      << ") are not divisible by num_group " << G;
  return true;
}

template <typename P>
bool ConvolutionInferShape(const NodeAttrs& attrs, std::vector<Shape>* in,
                           std::vector<Shape>* out) {
  const ConvolutionParam& p = attrs.Param<P>();
  if (!CheckConvInputs(attrs, p, in, out->size())) return false;
  const int64_t F = p.num_filter, G = p.num_group;
  const size_t nk = p.kernel.size();
  const Shape data = (*in)[0];
  const int64_t C = data[1];

  std::vector<int64_t> wdims = {F, C == 0 ? 0 : C / G};
  wdims.insert(wdims.end(), p.kernel.begin(), p.kernel.end());
  AssignShape(attrs, "weight", Shape(wdims), &(*in)[1],
              "num_filter=" + std::to_string(F) + ", num_group=" + std::to_string(G) +
                  ", kernel=" + TupleText(p.kernel) + ", data " + data.ToString());

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
    odims.push_back((in_dim + 2 * p.pad[i] - dk) / p.stride[i] + 1);
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
                  ", kernel=" + TupleText(p.kernel) + ", data " + data.ToString());

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
          << DescribeNode(attrs) << ": target_shape " << TupleText(p.target_shape)
          << " is too big: at most " << full << " along spatial axis " << i << " for data "
          << data;
    }
    HN_CHECK(adj[i] <= p.stride[i] - 1, kShapeError)
        << DescribeNode(attrs) << ": adj " << adj[i] << " must be smaller than stride "
        << p.stride[i] << " along spatial axis " << i;
    const int64_t o = full - 2 * pad[i] + adj[i];
    HN_CHECK(o > 0, kShapeError)
        << DescribeNode(attrs) << ": output size " << o << " along spatial axis " << i
        << " is not positive (data " << data << ", "
        << WindowText(p.kernel, p.stride, p.dilate, p.pad) << ", adj=" << TupleText(p.adj)
        << ")";
    if (!p.target_shape.empty() && p.target_shape[i] > 0) {
      HN_CHECK(o == p.target_shape[i], kShapeError)
          << DescribeNode(attrs) << ": target_shape " << TupleText(p.target_shape)
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

inline int BlasInt(int64_t v) { return static_cast<int>(v); }

void AddBias(const float* bias, int64_t filters, int64_t plane, float* y) {
  for (int64_t f = 0; f < filters; ++f) {
    const float b = bias[f];
    float* row = y + f * plane;
#pragma omp simd
    for (int64_t i = 0; i < plane; ++i) row[i] += b;
  }
}

// y[f] (one output plane) = sum over taps of w * x[c], for one input channel c (Cg == 1).
void DepthwisePlane(const float* x, const float* w, const SpatialGeom& g, float* y) {
  const int64_t OW = g.grid[2];
  const int64_t sw = g.stride[2];
  // Output columns each kernel column reaches inside the image; the same for every row.
  constexpr int64_t kMaxHoisted = 16;
  int64_t lo_of[kMaxHoisted], hi_of[kMaxHoisted];
  const bool hoisted = g.kernel[2] <= kMaxHoisted;
  if (hoisted) {
    for (int64_t e = 0; e < g.kernel[2]; ++e)
      internal::ValidRange(g.image[2], OW, sw, e * g.dilate[2] - g.pad[2], &lo_of[e], &hi_of[e]);
  }
  for (int64_t od = 0; od < g.grid[0]; ++od) {
    for (int64_t oh = 0; oh < g.grid[1]; ++oh) {
      float* yrow = y + (od * g.grid[1] + oh) * OW;
      for (int64_t a = 0; a < g.kernel[0]; ++a) {
        const int64_t id = od * g.stride[0] - g.pad[0] + a * g.dilate[0];
        if (id < 0 || id >= g.image[0]) continue;
        for (int64_t b = 0; b < g.kernel[1]; ++b) {
          const int64_t ih = oh * g.stride[1] - g.pad[1] + b * g.dilate[1];
          if (ih < 0 || ih >= g.image[1]) continue;
          const float* xrow = x + (id * g.image[1] + ih) * g.image[2];
          const float* wk = w + (a * g.kernel[1] + b) * g.kernel[2];
          for (int64_t e = 0; e < g.kernel[2]; ++e) {
            const int64_t off = e * g.dilate[2] - g.pad[2];
            int64_t lo, hi;
            if (hoisted) {
              lo = lo_of[e];
              hi = hi_of[e];
            } else {
              internal::ValidRange(g.image[2], OW, sw, off, &lo, &hi);
            }
            const float wv = wk[e];
            if (sw == 1) {
              const float* xs = xrow + off;
#pragma omp simd
              for (int64_t ow = lo; ow < hi; ++ow) yrow[ow] += wv * xs[ow];
            } else {
              for (int64_t ow = lo; ow < hi; ++ow) yrow[ow] += wv * xrow[ow * sw + off];
            }
          }
        }
      }
    }
  }
}

template <typename P>
void ConvolutionCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                        const std::vector<TBlob>& out) {
  const ConvolutionParam& p = attrs.Param<P>();
  const TBlob& x = in[0];
  const TBlob& wb = in[1];
  const TBlob& yb = out[0];
  const float* bias = p.no_bias ? nullptr : in[2].ptr<const float>();
  const SpatialGeom g = internal::MakeGeom(p.kernel, p.stride, p.pad, p.dilate,
                                           x.shape.begin() + 2, yb.shape.begin() + 2);
  const int64_t N = x.shape[0], C = x.shape[1], F = p.num_filter, G = p.num_group;
  const int64_t Cg = C / G, Fg = F / G;
  const int64_t IN = g.ImageSize(), OUT = g.GridSize();
  const int64_t K = g.ColRows(Cg);
  const float* xd = x.ptr<const float>();
  const float* wd = wb.ptr<const float>();
  float* yd = yb.ptr<float>();

  if (Cg == 1 && G > 1) {
    // Depthwise (channel multiplier Fg): direct accumulation.
    const int64_t taps = g.KernelSize();
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t f = 0; f < F; ++f) {
        float* y = yd + (n * F + f) * OUT;
        std::fill(y, y + OUT, bias ? bias[f] : 0.f);
        DepthwisePlane(xd + (n * C + f / Fg) * IN, wd + f * taps, g, y);
      }
    }
    return;
  }

  const bool pointwise = g.IsPointwise();
  const int64_t rows = g.GridRows(), OW = g.grid[2];
  const int64_t chunk = pointwise ? rows : internal::RowsPerChunk(K, OW, rows);
  float* col = pointwise ? nullptr : internal::ConvScratch(static_cast<size_t>(K * chunk * OW));
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t grp = 0; grp < G; ++grp) {
      const float* xg = xd + (n * C + grp * Cg) * IN;
      const float* wg = wd + grp * Fg * K;
      float* yg = yd + (n * F + grp * Fg) * OUT;
      if (pointwise) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, BlasInt(Fg), BlasInt(OUT),
                    BlasInt(K), 1.f, wg, BlasInt(K), xg, BlasInt(OUT), 0.f, yg, BlasInt(OUT));
        continue;
      }
      for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
        const int64_t r1 = std::min(rows, r0 + chunk);
        const int64_t ncols = (r1 - r0) * OW;
        internal::Im2Col(xg, g, Cg, r0, r1, col);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, BlasInt(Fg), BlasInt(ncols),
                    BlasInt(K), 1.f, wg, BlasInt(K), col, BlasInt(ncols), 0.f, yg + r0 * OW,
                    BlasInt(OUT));
      }
    }
    if (bias) AddBias(bias, F, OUT, yd + n * F * OUT);
  }
}

void ConvolutionActCompute(const OpContext& ctx, const NodeAttrs& attrs,
                           const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  ConvolutionCompute<ConvolutionActParam>(ctx, attrs, in, out);
  float* y = out[0].ptr<float>();
  internal::ApplyActivation(attrs.Param<ConvolutionActParam>().act_type, y, y, out[0].Size());
}

void DeconvolutionCompute(const OpContext&, const NodeAttrs& attrs,
                          const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<DeconvolutionParam>();
  const TBlob& x = in[0];
  const TBlob& wb = in[1];
  const TBlob& yb = out[0];
  const float* bias = p.no_bias ? nullptr : in[2].ptr<const float>();
  int64_t pad[3], adj[3];
  DeconvPadAdj(p, x.shape.begin() + 2, pad, adj);
  std::vector<int64_t> pads(pad, pad + p.kernel.size());
  // The image side is the output; the grid side is the input.
  const SpatialGeom g = internal::MakeGeom(p.kernel, p.stride, pads, p.dilate,
                                           yb.shape.begin() + 2, x.shape.begin() + 2);
  const int64_t N = x.shape[0], C = x.shape[1], F = p.num_filter, G = p.num_group;
  const int64_t Cg = C / G, Fg = F / G;
  const int64_t IN = g.GridSize(), OUT = g.ImageSize();
  const int64_t K = g.ColRows(Fg);  // rows of the column matrix: (Fg, kd, kh, kw)
  const float* xd = x.ptr<const float>();
  const float* wd = wb.ptr<const float>();
  float* yd = yb.ptr<float>();

  const bool pointwise = g.IsPointwise();
  const int64_t rows = g.GridRows(), IW = g.grid[2];
  const int64_t chunk = pointwise ? rows : internal::RowsPerChunk(K, IW, rows);
  float* col = pointwise ? nullptr : internal::ConvScratch(static_cast<size_t>(K * chunk * IW));
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t grp = 0; grp < G; ++grp) {
      const float* xg = xd + (n * C + grp * Cg) * IN;
      const float* wg = wd + grp * Cg * K;  // (Cg, Fg*kd*kh*kw)
      float* yg = yd + (n * F + grp * Fg) * OUT;
      if (pointwise) {
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, BlasInt(K), BlasInt(IN),
                    BlasInt(Cg), 1.f, wg, BlasInt(K), xg, BlasInt(IN), 0.f, yg, BlasInt(OUT));
        continue;
      }
      std::memset(yg, 0, sizeof(float) * static_cast<size_t>(Fg * OUT));
      for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
        const int64_t r1 = std::min(rows, r0 + chunk);
        const int64_t ncols = (r1 - r0) * IW;
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, BlasInt(K), BlasInt(ncols),
                    BlasInt(Cg), 1.f, wg, BlasInt(K), xg + r0 * IW, BlasInt(IN), 0.f, col,
                    BlasInt(ncols));
        internal::Col2Im(col, g, Fg, r0, r1, yg);
      }
    }
    if (bias) AddBias(bias, F, OUT, yd + n * F * OUT);
  }
}

template <typename P>
std::vector<std::string> ConvInputNames(const NodeAttrs& attrs) {
  if (attrs.Param<P>().no_bias) return {"data", "weight"};
  return {"data", "weight", "bias"};
}

}  // namespace

void RegisterConvolutionOps(OpRegistry* r) {
  r->Register("Convolution")
          .Describe("Computes 1-D, 2-D or 3-D convolution: out[n, f] = bias[f] + sum over c of "
                    "weight[f, c] correlated with data[n, c]. Inputs data (batch, channel, "
                    "spatial...), weight (num_filter, channel/num_group, *kernel) and bias "
                    "(num_filter,) unless no_bias. Output spatial size is "
                    "floor((x + 2*pad - (dilate*(kernel-1)+1)) / stride) + 1.")
          .SetParam<ConvolutionParam>(ConvolutionParamInit)
          .SetInputNames(ConvInputNames<ConvolutionParam>)
          .SetInferShape(ConvolutionInferShape<ConvolutionParam>)
          .SetInferType(ElemwiseFloatType)
          .SetCompute(ConvolutionCompute<ConvolutionParam>);

  r->Register("_hn_convolution_act")
          .Describe("Convolution followed by Activation(act_type), fused by the graph optimizer; "
                    "bit-identical to the two ops run one after the other.")
          .SetParam<ConvolutionActParam>(ConvolutionActParamInit)
          .SetInputNames(ConvInputNames<ConvolutionActParam>)
          .SetInferShape(ConvolutionInferShape<ConvolutionActParam>)
          .SetInferType(ElemwiseFloatType)
          .SetCompute(ConvolutionActCompute)
          .SetInternal();

  r->Register("Deconvolution")
          .Describe("Computes the transposed convolution (the gradient of Convolution with "
                    "respect to its data). Inputs data (batch, channel, spatial...), weight "
                    "(channel, num_filter/num_group, *kernel) and bias (num_filter,) unless "
                    "no_bias (the default). Output spatial size is stride*(x-1) + "
                    "dilate*(kernel-1)+1 - 2*pad + adj, or target_shape when given.")
          .SetParam<DeconvolutionParam>(DeconvolutionParamInit)
          .SetInputNames(ConvInputNames<DeconvolutionParam>)
          .SetInferShape(DeconvolutionInferShape)
          .SetInferType(ElemwiseFloatType)
          .SetCompute(DeconvolutionCompute);
}

}  // namespace hybridnet
