// Pooling (MXNet src/operator/nn/pooling-inl.h, pooling.cc, CPU kernels pool.h): max, avg, sum
// and lp pooling over 1-D, 2-D and 3-D windows, in channel-first (NCW, NCHW, NCDHW) or
// channel-last (NWC, NHWC, NDHWC) layout; global pooling; the valid/full/same conventions.
//
// The arithmetic follows MXNet's reference CPU kernel so results match:
//  * max starts from -FLT_MAX and takes v when v > max (padding never wins, NaN is skipped);
//  * avg adds v / pool_size element by element, where pool_size is the window clipped to the
//    padded image (count_include_pad, the default) or to the image itself; for 3-D windows an
//    empty window gives NaN (the 1-D/2-D kernels give 0);
//  * lp adds v^p (p = 1, 2 or 3) and returns the p-th root; sum adds v.
#include "kernels/pooling.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "kernels/layout.h"
#include "kernels/window-inl.h"
#include "onnx/onnx_convert.h"
#include "ops/gradient_util.h"
#include "ops/nn/pooling_param.h"
#include "ops/real_type.h"
#include "ops/register_ops.h"

namespace hybridnet {
namespace internal {

void PoolingParamInit(PoolingParam* p) {
  const size_t nk = p->kernel.size();
  if (!p->global_pool) {
    HN_CHECK(nk >= 1 && nk <= 3, kInvalidArgument)
        << (nk == 0 ? "kernel is required unless global_pool is True"
                    : std::to_string(nk) + "-D pooling is not supported (kernel " +
                          Shape(p->kernel).ToString() + ")");
  }
  for (int64_t k : p->kernel)
    HN_CHECK(k > 0, kInvalidArgument) << "incorrect kernel size: " << Shape(p->kernel).ToString();
  for (int64_t s : p->stride)
    HN_CHECK(s > 0, kInvalidArgument) << "incorrect stride size: " << Shape(p->stride).ToString();
  for (int64_t v : p->pad)
    HN_CHECK(v >= 0, kInvalidArgument) << "incorrect pad size: " << Shape(p->pad).ToString();
  const size_t rank = (nk == 1 || nk == 2) ? nk : 3;
  if (p->stride.empty()) p->stride.assign(rank, 1);
  if (p->pad.empty()) p->pad.assign(rank, 0);
  if (p->global_pool) return;  // kernel, stride and pad are ignored
  HN_CHECK(p->stride.size() == nk, kInvalidArgument)
      << "stride " << Shape(p->stride).ToString() << " and kernel " << Shape(p->kernel).ToString()
      << " should have the same length";
  HN_CHECK(p->pad.size() == nk, kInvalidArgument)
      << "pad " << Shape(p->pad).ToString() << " and kernel " << Shape(p->kernel).ToString()
      << " should have the same length";
  if (p->layout) {
    HN_CHECK(internal::LayoutRank(*p->layout) == nk, kInvalidArgument)
        << "layout " << internal::LayoutName(*p->layout) << " does not match the " << nk
        << "-D kernel " << Shape(p->kernel).ToString();
  }
}

bool PoolingInferShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const auto& p = attrs.Param<PoolingParam>();
  HN_CHECK(in->size() == 1 && !out->empty(), kInternal)
      << DescribeNode(attrs) << ": expected 1 input and 1 output";
  const Shape data = (*in)[0];
  if (data.ndim() == 0) return false;
  if (p.pool_type == PoolType::kLp) {
    HN_CHECK(p.p_value.has_value(), kInvalidArgument)
        << DescribeNode(attrs) << ": p_value is required for lp pooling";
    HN_CHECK(*p.p_value >= 1 && *p.p_value <= 3, kUnsupported)
        << DescribeNode(attrs) << ": p_value " << *p.p_value
        << " is not supported (lp pooling supports p = 1, 2 or 3)";
  }
  if (p.pooling_convention == PoolingConvention::kSame) {
    HN_CHECK(data.ndim() == 3, kShapeError)
        << DescribeNode(attrs) << ": pooling_convention 'same' supports 1-D pooling only: data "
        << "should be 3-D (batch, channel, x), got " << data;
    for (int64_t v : p.pad)
      HN_CHECK(v == 0, kInvalidArgument)
          << DescribeNode(attrs) << ": pooling_convention 'same' disables the pad parameter "
          << "(pad " << Shape(p.pad).ToString() << ")";
  }
  HN_CHECK(data.ndim() >= 3 && data.ndim() <= 5, kShapeError)
      << DescribeNode(attrs) << ": data should be 3-D (batch, channel, x), 4-D (batch, channel, "
      << "y, x) or 5-D (batch, channel, d, y, x), got " << data;
  const size_t ns = data.ndim() - 2;
  const bool cl = p.layout && internal::IsChannelLast(*p.layout);
  const size_t sp0 = cl ? 1 : 2;  // index of the first spatial dim
  std::vector<int64_t> odims = data.dims();
  if (p.global_pool) {
    for (size_t i = 0; i < ns; ++i) odims[sp0 + i] = 1;
  } else {
    HN_CHECK(p.kernel.size() == ns, kShapeError)
        << DescribeNode(attrs) << ": a " << p.kernel.size() << "-D kernel "
        << Shape(p.kernel).ToString() << " needs " << p.kernel.size() + 2 << "-D data, got "
        << data;
    for (size_t i = 0; i < ns; ++i) {
      const int64_t x = data[sp0 + i], k = p.kernel[i], s = p.stride[i], pd = p.pad[i];
      if (x == 0) {
        odims[sp0 + i] = 0;
        continue;
      }
      HN_CHECK(k <= x + 2 * pd, kShapeError)
          << DescribeNode(attrs) << ": kernel size (" << k << ") exceeds input (" << x
          << " padded to " << x + 2 * pd << ") along spatial axis " << i << " (data " << data
          << ")";
      if (p.pooling_convention == PoolingConvention::kSame && ns == 1) {
        odims[sp0 + i] =
            static_cast<int64_t>(std::ceil(static_cast<float>(x + 2 * pd) / static_cast<float>(s)));
      } else {  // 'same' beyond 1-D rounds up, as MXNet does
        odims[sp0 + i] =
            internal::PooledSize(x, k, s, pd, p.pooling_convention != PoolingConvention::kValid);
      }
    }
  }
  Shape expected(odims);
  Shape merged = (*out)[0];
  HN_CHECK(MergeShape(expected, &merged), kShapeError)
      << DescribeNode(attrs) << ": output shape " << (*out)[0] << " does not match the expected "
      << expected << " (data " << data << ")";
  (*out)[0] = merged;
  return (*in)[0].IsKnown() && (*out)[0].IsKnown();
}

PoolingCall MakePoolingCall(const PoolingParam& p, const Shape& x, const Shape& y) {
  const size_t ndim = x.ndim(), ns = ndim - 2;
  const bool cl = p.layout && internal::IsChannelLast(*p.layout);
  const size_t sp0 = cl ? 1 : 2;
  const int64_t N = x[0], C = x[cl ? ndim - 1 : 1];
  std::vector<int64_t> kernel = p.kernel, stride = p.stride, pad = p.pad;
  if (p.global_pool) {
    kernel.assign(x.begin() + sp0, x.begin() + sp0 + ns);
    stride.assign(ns, 1);
    pad.assign(ns, 0);
  }
  PoolingCall call;
  call.g = internal::MakeGeom(kernel, stride, pad, {}, x.begin() + sp0, y.begin() + sp0);
  call.lane = cl ? C : 1;
  call.planes = cl ? N : N * C;
  call.pv = p.pool_type == PoolType::kLp ? p.p_value.value_or(1) : 1;
  call.include_pad = p.count_include_pad.value_or(true);
  return call;
}

}  // namespace internal

namespace {

using internal::Layout;
using internal::MakePoolingCall;
using internal::PoolingCall;
using internal::PoolingConvention;
using internal::PoolingInferShape;
using internal::PoolingParam;
using internal::PoolingParamInit;
using internal::PoolType;
using internal::SpatialGeom;

void PoolingCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                    const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<PoolingParam>();
  const PoolingCall call = MakePoolingCall(p, in[0].shape, out[0].shape);
  const bool nan_on_empty = in[0].shape.ndim() == 5;
  if (in[0].dtype == DType::kFloat64) {
    internal::PoolPlanes(p.pool_type, call.pv, call.include_pad, nan_on_empty,
                         in[0].ptr<const double>(), out[0].ptr<double>(), call.g, call.lane,
                         call.planes);
    return;
  }
  internal::PoolPlanes(p.pool_type, call.pv, call.include_pad, nan_on_empty,
                       in[0].ptr<const float>(), out[0].ptr<float>(), call.g, call.lane,
                       call.planes, ctx.workspace);
}

// ---- _backward_Pooling: inputs (out_grad, data, output), Pooling's attributes; output the
// gradient of data.

bool PoolingBackwardShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  HN_CHECK(in->size() == 3 && out->size() == 1, kInternal)
      << DescribeNode(attrs) << ": expected inputs (out_grad, data, output) and one output";
  HN_CHECK(MergeShape((*out)[0], &(*in)[1]), kShapeError)
      << DescribeNode(attrs) << ": the gradient has shape " << (*out)[0] << ", the data "
      << (*in)[1];
  std::vector<Shape> forward_in{(*in)[1]}, forward_out{(*in)[2]};
  for (size_t i : {0, 2}) {
    HN_CHECK(MergeShape((*in)[i], &forward_out[0]), kShapeError)
        << DescribeNode(attrs) << ": out_grad " << (*in)[0] << " and output " << (*in)[2]
        << " must have the pooled shape";
  }
  const bool known = PoolingInferShape(attrs, &forward_in, &forward_out);
  (*in)[0] = (*in)[2] = forward_out[0];
  (*in)[1] = (*out)[0] = forward_in[0];
  return known;
}

void PoolingBackwardCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                            const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<PoolingParam>();
  const PoolingCall call = MakePoolingCall(p, in[1].shape, in[0].shape);
  if (in[0].dtype == DType::kFloat64) {
    internal::PoolPlanesBackward(p.pool_type, call.pv, call.include_pad, in[1].ptr<const double>(),
                                 in[2].ptr<const double>(), in[0].ptr<const double>(),
                                 out[0].ptr<double>(), call.g, call.lane, call.planes);
    return;
  }
  internal::PoolPlanesBackward(p.pool_type, call.pv, call.include_pad, in[1].ptr<const float>(),
                               in[2].ptr<const float>(), in[0].ptr<const float>(),
                               out[0].ptr<float>(), call.g, call.lane, call.planes);
}

std::vector<NodeEntry> PoolingGradient(const std::shared_ptr<Node>& n,
                                       const std::vector<NodeEntry>& dy) {
  internal::GradientBuilder g(n, dy);
  return {g.Op("_backward_Pooling", {g.out_grad(0), g.in(0), g.out(0)}, g.attrs().dict)};
}

// ---------------------------------------------------------------------------------------------
// ONNX. ONNX pooling has no "full" rounding of its own that matches MXNet's windows (ceil_mode
// drops a last window starting in the padding, and counts padding differently), so every
// convention is written with floor rounding: the end padding grows by the overhang of the last
// window. What each kind counts then matches the kernels above:
//  * max: padding never wins (ONNX pads are ignored; an explicit Pad uses -FLT_MAX as the kernel
//    starts from);
//  * avg, count_include_pad: the declared pad is real zeros (an explicit Pad), the overhang is
//    not counted (AveragePool pads with count_include_pad=0);
//  * avg without count_include_pad: no padding is counted;
//  * sum and lp p=1 (a plain sum, as the kernel takes no absolute value): the mean of a
//    zero-padded input times the window size; lp p=2: LpPool; lp p=3: the signed cube root of
//    the sum of cubes.

struct OnnxPoolWindow {
  std::vector<int64_t> kernel, strides, begin, end;
  bool PadsFit() const {  // ONNX Runtime refuses pads as large as the kernel
    for (size_t i = 0; i < kernel.size(); ++i)
      if (begin[i] >= kernel[i] || end[i] >= kernel[i]) return false;
    return true;
  }
  bool Padded() const {
    for (size_t i = 0; i < kernel.size(); ++i)
      if (begin[i] != 0 || end[i] != 0) return true;
    return false;
  }
  std::vector<int64_t> Pads(bool with_begin, bool with_end) const {
    std::vector<int64_t> pads;
    for (int64_t v : begin) pads.push_back(with_begin ? v : 0);
    for (int64_t v : end) pads.push_back(with_end ? v : 0);
    return pads;
  }
};

// Pads the spatial axes of a channel-first `x` with `value` (Pad's pads cover every axis).
std::string PadSpatial(OnnxNodeContext* ctx, const std::string& x,
                       const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
                       double value) {
  std::vector<int64_t> pads{0, 0};
  pads.insert(pads.end(), begin.begin(), begin.end());
  pads.push_back(0);
  pads.push_back(0);
  pads.insert(pads.end(), end.begin(), end.end());
  return ctx->Add("Pad", {x, ctx->Int64s(pads), ctx->Scalar(value)}, {{"mode", "constant"}});
}

// Sum over each window of a channel-first `x`: explicit zero padding, AveragePool, times the
// window size.
std::string SumPool(OnnxNodeContext* ctx, const std::string& x, const OnnxPoolWindow& w,
                    const std::string& to) {
  std::string padded = w.Padded() ? PadSpatial(ctx, x, w.begin, w.end, 0.0) : x;
  std::string mean =
      ctx->Add("AveragePool", {padded}, {{"kernel_shape", w.kernel}, {"strides", w.strides}});
  int64_t area = 1;
  for (int64_t k : w.kernel) area *= k;
  return ctx->Add("Mul", {mean, ctx->Scalar(static_cast<double>(area))}, {}, to);
}

// sign(s) * |s|^(1/3): Pow of a negative base is NaN in ONNX.
std::string SignedCbrt(OnnxNodeContext* ctx, const std::string& s, const std::string& to) {
  std::string root = ctx->Add("Pow", {ctx->Add("Abs", {s}), ctx->Scalar(1.0 / 3.0)});
  return ctx->Add("Mul", {ctx->Add("Sign", {s}), root}, {}, to);
}

std::string Cube(OnnxNodeContext* ctx, const std::string& x) {
  return ctx->Add("Mul", {ctx->Add("Mul", {x, x}), x});
}

std::string GlobalPoolOnnx(OnnxNodeContext* ctx, const PoolingParam& p, const std::string& x,
                           size_t ndim, int pv, const std::string& to) {
  std::vector<int64_t> spatial;
  for (size_t i = 2; i < ndim; ++i) spatial.push_back(static_cast<int64_t>(i));
  if (p.pool_type == PoolType::kMax) return ctx->Add("GlobalMaxPool", {x}, {}, to);
  if (p.pool_type == PoolType::kAvg) return ctx->Add("GlobalAveragePool", {x}, {}, to);
  if (pv == 2) return ctx->Add("GlobalLpPool", {x}, {{"p", int64_t{2}}}, to);
  if (pv == 3) return SignedCbrt(ctx, ctx->Reduce("ReduceSum", Cube(ctx, x), spatial, true), to);
  return ctx->Reduce("ReduceSum", x, spatial, true, to);
}

void PoolingOnnx(OnnxNodeContext* ctx) {
  const auto& p = ctx->param<PoolingParam>();
  const OnnxValue& in = ctx->in(0);
  const size_t nd = in.shape.ndim(), ns = nd - 2;
  const bool cl = p.layout && internal::IsChannelLast(*p.layout);
  // Channel-last layouts pool a channel-first transpose.
  std::vector<int64_t> to_cf{0, static_cast<int64_t>(nd) - 1}, to_cl{0};
  for (size_t i = 1; i + 1 < nd; ++i) to_cf.push_back(static_cast<int64_t>(i));
  for (size_t i = 2; i < nd; ++i) to_cl.push_back(static_cast<int64_t>(i));
  to_cl.push_back(1);
  std::string x = cl ? ctx->Add("Transpose", {in.name}, {{"perm", to_cf}}) : in.name;
  const size_t sp0 = cl ? 1 : 2;
  const int pv = p.pool_type == PoolType::kLp ? p.p_value.value_or(1) : 1;
  const std::string to = cl ? "" : ctx->out(0).name;
  std::string y;
  if (p.global_pool) {
    y = GlobalPoolOnnx(ctx, p, x, nd, pv, to);
  } else {
    OnnxPoolWindow w;
    for (size_t i = 0; i < ns; ++i) {
      const int64_t xi = in.shape[sp0 + i], k = p.kernel[i], s = p.stride[i], pad = p.pad[i];
      const int64_t o = ctx->out(0).shape[sp0 + i];
      w.kernel.push_back(k);
      w.strides.push_back(s);
      w.begin.push_back(pad);
      w.end.push_back(pad + std::max<int64_t>(0, (o - 1) * s + k - (xi + 2 * pad)));
    }
    const std::vector<OnnxAttr> window{{"kernel_shape", w.kernel}, {"strides", w.strides}};
    auto with = [&window](std::vector<OnnxAttr> extra) {
      extra.insert(extra.begin(), window.begin(), window.end());
      return extra;
    };
    if (p.pool_type == PoolType::kMax) {
      if (w.PadsFit()) {
        y = ctx->Add("MaxPool", {x}, with({{"pads", w.Pads(true, true)}}), to);
      } else {
        y = ctx->Add("MaxPool", {PadSpatial(ctx, x, w.begin, w.end, -FLT_MAX)}, window, to);
      }
    } else if (p.pool_type == PoolType::kAvg) {
      const bool include_pad = p.count_include_pad.value_or(true);
      OnnxPoolWindow overhang = w;  // the end padding beyond the declared pad
      for (size_t i = 0; i < ns; ++i) {
        overhang.begin[i] = 0;
        overhang.end[i] = w.end[i] - w.begin[i];
      }
      const bool explicit_pad = include_pad && overhang.Padded();
      if (!(explicit_pad ? overhang : w).PadsFit()) {
        ctx->NotExportable("its padding is as large as the window (ONNX Runtime refuses that)");
      }
      if (explicit_pad) {
        std::vector<int64_t> pad(w.begin);
        y = ctx->Add("AveragePool", {PadSpatial(ctx, x, pad, pad, 0.0)},
                     with({{"pads", overhang.Pads(false, true)}, {"count_include_pad", 0}}), to);
      } else {
        y = ctx->Add(
            "AveragePool", {x},
            with({{"pads", w.Pads(true, true)}, {"count_include_pad", include_pad ? 1 : 0}}), to);
      }
    } else if (pv == 2) {
      std::string padded = w.PadsFit() ? x : PadSpatial(ctx, x, w.begin, w.end, 0.0);
      std::vector<OnnxAttr> attrs = with({{"p", int64_t{2}}});
      if (w.PadsFit()) attrs.emplace_back("pads", w.Pads(true, true));
      y = ctx->Add("LpPool", {padded}, attrs, to);
    } else if (pv == 3) {
      y = SignedCbrt(ctx, SumPool(ctx, Cube(ctx, x), w, ""), to);
    } else {
      y = SumPool(ctx, x, w, to);
    }
  }
  if (cl) ctx->Add("Transpose", {y}, {{"perm", to_cl}}, ctx->out(0).name);
}

}  // namespace

void RegisterPoolingOps(OpRegistry* r) {
  r->Register("Pooling")
      .Describe(
          "Performs max, average, sum or lp pooling over 1-D, 2-D or 3-D windows "
          "(or over the whole feature map with global_pool). Output size along "
          "each axis: valid floor((x + 2*pad - kernel) / stride) + 1, full "
          "ceil(...) + 1, same ceil((x + 2*pad) / stride). Stride defaults to "
          "1.")
      .SetParam<PoolingParam>(PoolingParamInit)
      .SetInputNames(std::vector<std::string>{"data"})
      .SetNumOutputs(1)
      .SetInferShape(PoolingInferShape)
      .SetInferType(internal::RealType)
      .SetCompute(PoolingCompute)
      .SetOnnx({"MaxPool", "AveragePool", "LpPool", "GlobalMaxPool", "GlobalAveragePool",
                "GlobalLpPool", "ReduceSum", "Pad", "Mul", "Pow", "Abs", "Sign", "Transpose"},
               PoolingOnnx, "avg pooling whose padding is as large as the window")
      .SetGradient(PoolingGradient);

  r->Register("_backward_Pooling")
      .Describe(
          "The gradient of Pooling (MXNet's unpooling): max routes each output's gradient to "
          "the first position of its window that holds the maximum, avg spreads it divided "
          "by the window size, sum copies it, lp scales it by (x / y)^(p-1).")
      .SetParam<PoolingParam>(PoolingParamInit)
      .SetInputNames(std::vector<std::string>{"out_grad", "data", "output"})
      .SetNumOutputs(1)
      .SetInferShape(PoolingBackwardShape)
      .SetInferType(internal::RealType)
      .SetCompute(PoolingBackwardCompute)
      .SetInternal();
}

}  // namespace hybridnet
