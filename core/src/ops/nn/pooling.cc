// Pooling (MXNet src/operator/nn/pooling-inl.h, pooling.cc, CPU kernels pool.h): max, avg, sum
// and lp pooling over 1-D, 2-D and 3-D windows, in channel-first (NCW, NCHW, NCDHW) or
// channel-last (NWC, NHWC, NDHWC) layout; global pooling; the valid/full/same conventions.
//
// The arithmetic follows MXNet's reference CPU kernel so results match bit for bit:
//  * max starts from -FLT_MAX and takes v when v > max (padding never wins, NaN is skipped);
//  * avg adds v / pool_size element by element, where pool_size is the window clipped to the
//    padded image (count_include_pad, the default) or to the image itself; for 3-D windows an
//    empty window gives NaN (the 1-D/2-D kernels give 0);
//  * lp adds v^p (p = 1, 2 or 3) and returns the p-th root; sum adds v.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "ops/nn/im2col-inl.h"
#include "ops/register_ops.h"

namespace hybridnet {
namespace {

using internal::Layout;
using internal::SpatialGeom;
using internal::TupleText;

enum class PoolType { kMax, kAvg, kSum, kLp };
enum class PoolingConvention { kFull, kValid, kSame };

struct PoolingParam {
  std::vector<int64_t> kernel;
  PoolType pool_type = PoolType::kMax;
  bool global_pool = false;
  bool cudnn_off = false;
  PoolingConvention pooling_convention = PoolingConvention::kValid;
  std::vector<int64_t> stride;
  std::vector<int64_t> pad;
  std::optional<int> p_value;
  std::optional<bool> count_include_pad;
  std::optional<Layout> layout;

  static void Declare(ParamDeclarer<PoolingParam>* d) {
    d->Field("kernel", &PoolingParam::kernel).Default({})
        .Describe("Pooling kernel size: (y, x) or (d, y, x)");
    d->Field("pool_type", &PoolingParam::pool_type,
             {{"max", PoolType::kMax}, {"avg", PoolType::kAvg}, {"sum", PoolType::kSum},
              {"lp", PoolType::kLp}})
        .Default(PoolType::kMax)
        .Describe("Pooling type to be applied.");
    d->Field("global_pool", &PoolingParam::global_pool).Default(false)
        .Describe("Ignore kernel size, do global pooling based on current input feature map.");
    d->Field("cudnn_off", &PoolingParam::cudnn_off).Default(false)
        .Describe("Turn off cudnn pooling and use MXNet pooling operator. Ignored on CPU.");
    d->Field("pooling_convention", &PoolingParam::pooling_convention,
             {{"full", PoolingConvention::kFull}, {"valid", PoolingConvention::kValid},
              {"same", PoolingConvention::kSame}})
        .Default(PoolingConvention::kValid)
        .Describe("Pooling convention to be applied: valid floors the output size, full "
                  "rounds it up, same (1-D only) gives ceil(x / stride).");
    d->Field("stride", &PoolingParam::stride).Default({})
        .Describe("Stride: for pooling (y, x) or (d, y, x). Defaults to 1 for each dimension.");
    d->Field("pad", &PoolingParam::pad).Default({})
        .Describe("Pad for pooling: (y, x) or (d, y, x). Defaults to no padding.");
    d->Field("p_value", &PoolingParam::p_value).Default(std::nullopt)
        .Describe("Value of p for Lp pooling, can be 1, 2 or 3, required for Lp Pooling.");
    d->Field("count_include_pad", &PoolingParam::count_include_pad).Default(std::nullopt)
        .Describe("Only used for AvgPool, specify whether to count padding elements for "
                  "average calculation. For example, with a 5*5 kernel on a 3*3 corner of a "
                  "image, the sum of the 9 valid elements will be divided by 25 if this is set "
                  "to true, or it will be divided by 9 if this is set to false. Defaults to "
                  "true.");
    d->Field("layout", &PoolingParam::layout, internal::PoolingLayoutNames())
        .Default(std::nullopt)
        .Describe("Set layout for input and output. Empty for default layout: NCW for 1d, NCHW "
                  "for 2d and NCDHW for 3d.");
  }
};

// MXNet's PoolingParamParser: rank-dependent stride/pad defaults and non-zero windows.
void PoolingParamInit(PoolingParam* p) {
  const size_t nk = p->kernel.size();
  if (!p->global_pool) {
    HN_CHECK(nk >= 1 && nk <= 3, kInvalidArgument)
        << (nk == 0 ? "kernel is required unless global_pool is True"
                    : std::to_string(nk) + "-D pooling is not supported (kernel " +
                          TupleText(p->kernel) + ")");
  }
  for (int64_t k : p->kernel)
    HN_CHECK(k > 0, kInvalidArgument) << "incorrect kernel size: " << TupleText(p->kernel);
  for (int64_t s : p->stride)
    HN_CHECK(s > 0, kInvalidArgument) << "incorrect stride size: " << TupleText(p->stride);
  for (int64_t v : p->pad)
    HN_CHECK(v >= 0, kInvalidArgument) << "incorrect pad size: " << TupleText(p->pad);
  const size_t rank = (nk == 1 || nk == 2) ? nk : 3;
  if (p->stride.empty()) p->stride.assign(rank, 1);
  if (p->pad.empty()) p->pad.assign(rank, 0);
  if (p->global_pool) return;  // kernel, stride and pad are ignored
  HN_CHECK(p->stride.size() == nk, kInvalidArgument)
      << "stride " << TupleText(p->stride) << " and kernel " << TupleText(p->kernel)
      << " should have the same length";
  HN_CHECK(p->pad.size() == nk, kInvalidArgument)
      << "pad " << TupleText(p->pad) << " and kernel " << TupleText(p->kernel)
      << " should have the same length";
  if (p->layout) {
    HN_CHECK(internal::LayoutRank(*p->layout) == nk, kInvalidArgument)
        << "layout " << internal::LayoutName(*p->layout) << " does not match the " << nk
        << "-D kernel " << TupleText(p->kernel);
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
          << "(pad " << TupleText(p.pad) << ")";
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
        << TupleText(p.kernel) << " needs " << p.kernel.size() + 2 << "-D data, got " << data;
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
      int64_t o;
      if (p.pooling_convention == PoolingConvention::kValid) {
        o = 1 + (x + 2 * pd - k) / s;
      } else if (p.pooling_convention == PoolingConvention::kFull || ns > 1) {
        o = 1 + static_cast<int64_t>(
                    std::ceil(static_cast<float>(x + 2 * pd - k) / static_cast<float>(s)));
      } else {  // same, 1-D
        o = static_cast<int64_t>(std::ceil(static_cast<float>(x + 2 * pd) / static_cast<float>(s)));
      }
      odims[sp0 + i] = o;
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

// ---------------------------------------------------------------------------------------------
// Kernels. One plane (one sample and channel); element i of the plane is at x[i * xs].

enum PoolKind { kMax, kAvg, kSum };

template <int P>
inline float PowP(float v) {
  if constexpr (P == 1) return v;
  if constexpr (P == 2) return v * v;
  return v * v * v;
}

template <int P>
inline float RootP(float v) {
  if constexpr (P == 1) return v;
  if constexpr (P == 2) return std::sqrt(v);
  return std::cbrt(v);
}

void MaxPlane(const float* x, int64_t xs, float* y, int64_t ys, const SpatialGeom& g) {
  const int64_t ID = g.image[0], IH = g.image[1], IW = g.image[2];
  int64_t o = 0;
  for (int64_t pd = 0; pd < g.grid[0]; ++pd) {
    int64_t d0 = pd * g.stride[0] - g.pad[0];
    const int64_t d1 = std::min(d0 + g.kernel[0], ID);
    d0 = std::max<int64_t>(d0, 0);
    for (int64_t ph = 0; ph < g.grid[1]; ++ph) {
      int64_t h0 = ph * g.stride[1] - g.pad[1];
      const int64_t h1 = std::min(h0 + g.kernel[1], IH);
      h0 = std::max<int64_t>(h0, 0);
      for (int64_t pw = 0; pw < g.grid[2]; ++pw, ++o) {
        int64_t w0 = pw * g.stride[2] - g.pad[2];
        const int64_t w1 = std::min(w0 + g.kernel[2], IW);
        w0 = std::max<int64_t>(w0, 0);
        float m = -FLT_MAX;
        for (int64_t d = d0; d < d1; ++d)
          for (int64_t h = h0; h < h1; ++h) {
            const float* row = x + ((d * IH + h) * IW) * xs;
            for (int64_t w = w0; w < w1; ++w) {
              const float v = row[w * xs];
              if (v > m) m = v;
            }
          }
        y[o * ys] = m;
      }
    }
  }
}

// Max pooling of a contiguous plane (channel-first), separably: for each output row, the
// elementwise max of the window's image rows (vectorised), then the max over each window's
// columns of that. Gives MaxPlane's values (both keep the largest non-NaN value or -FLT_MAX),
// only the sign of a zero may differ when +0 and -0 tie.
void MaxPlaneContiguous(const float* x, float* y, const SpatialGeom& g, float* colmax) {
  const int64_t ID = g.image[0], IH = g.image[1], IW = g.image[2];
  float* yrow = y;
  for (int64_t pd = 0; pd < g.grid[0]; ++pd) {
    int64_t d0 = pd * g.stride[0] - g.pad[0];
    const int64_t d1 = std::min(d0 + g.kernel[0], ID);
    d0 = std::max<int64_t>(d0, 0);
    for (int64_t ph = 0; ph < g.grid[1]; ++ph, yrow += g.grid[2]) {
      int64_t h0 = ph * g.stride[1] - g.pad[1];
      const int64_t h1 = std::min(h0 + g.kernel[1], IH);
      h0 = std::max<int64_t>(h0, 0);
      std::fill(colmax, colmax + IW, -FLT_MAX);
      for (int64_t d = d0; d < d1; ++d)
        for (int64_t h = h0; h < h1; ++h) {
          const float* row = x + (d * IH + h) * IW;
#pragma omp simd
          for (int64_t w = 0; w < IW; ++w) colmax[w] = row[w] > colmax[w] ? row[w] : colmax[w];
        }
      for (int64_t pw = 0; pw < g.grid[2]; ++pw) {
        int64_t w0 = pw * g.stride[2] - g.pad[2];
        const int64_t w1 = std::min(w0 + g.kernel[2], IW);
        w0 = std::max<int64_t>(w0, 0);
        float m = -FLT_MAX;
        for (int64_t w = w0; w < w1; ++w)
          if (colmax[w] > m) m = colmax[w];
        yrow[pw] = m;
      }
    }
  }
}

// avg (kAvg), sum (kSum, P = 1) and lp (kSum, P = p_value).
template <PoolKind kKind, int P>
void SumPlane(const float* x, int64_t xs, float* y, int64_t ys, const SpatialGeom& g,
              bool count_include_pad, bool nan_on_empty) {
  const int64_t ID = g.image[0], IH = g.image[1], IW = g.image[2];
  int64_t o = 0;
  for (int64_t pd = 0; pd < g.grid[0]; ++pd) {
    int64_t d0 = pd * g.stride[0] - g.pad[0];
    int64_t d1 = std::min(d0 + g.kernel[0], ID + g.pad[0]);
    const int64_t dn = d1 - d0;
    d0 = std::max<int64_t>(d0, 0);
    d1 = std::min(d1, ID);
    for (int64_t ph = 0; ph < g.grid[1]; ++ph) {
      int64_t h0 = ph * g.stride[1] - g.pad[1];
      int64_t h1 = std::min(h0 + g.kernel[1], IH + g.pad[1]);
      const int64_t hn = h1 - h0;
      h0 = std::max<int64_t>(h0, 0);
      h1 = std::min(h1, IH);
      for (int64_t pw = 0; pw < g.grid[2]; ++pw, ++o) {
        int64_t w0 = pw * g.stride[2] - g.pad[2];
        int64_t w1 = std::min(w0 + g.kernel[2], IW + g.pad[2]);
        const int64_t wn = w1 - w0;
        w0 = std::max<int64_t>(w0, 0);
        w1 = std::min(w1, IW);
        int64_t pool_size = 1;
        if constexpr (kKind == kAvg) {
          pool_size = count_include_pad ? dn * hn * wn : (d1 - d0) * (h1 - h0) * (w1 - w0);
        }
        const float divisor = static_cast<float>(pool_size);
        float acc = 0.f;
        for (int64_t d = d0; d < d1; ++d)
          for (int64_t h = h0; h < h1; ++h) {
            const float* row = x + ((d * IH + h) * IW) * xs;
            for (int64_t w = w0; w < w1; ++w) {
              if constexpr (kKind == kAvg) {
                acc += row[w * xs] / divisor;
              } else {
                acc += PowP<P>(row[w * xs]);
              }
            }
          }
        y[o * ys] = (nan_on_empty && pool_size == 0) ? std::numeric_limits<float>::quiet_NaN()
                                                     : RootP<P>(acc);
      }
    }
  }
}

void PoolingCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                    const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<PoolingParam>();
  const TBlob& xb = in[0];
  const TBlob& yb = out[0];
  const size_t ndim = xb.shape.ndim(), ns = ndim - 2;
  const bool cl = p.layout && internal::IsChannelLast(*p.layout);
  const size_t sp0 = cl ? 1 : 2;
  const int64_t N = xb.shape[0], C = xb.shape[cl ? ndim - 1 : 1];
  std::vector<int64_t> kernel = p.kernel, stride = p.stride, pad = p.pad;
  if (p.global_pool) {
    kernel.assign(xb.shape.begin() + sp0, xb.shape.begin() + sp0 + ns);
    stride.assign(ns, 1);
    pad.assign(ns, 0);
  }
  const SpatialGeom g = internal::MakeGeom(kernel, stride, pad, {}, xb.shape.begin() + sp0,
                                           yb.shape.begin() + sp0);
  const int64_t IS = g.ImageSize(), OS = g.GridSize();
  const bool include_pad = p.count_include_pad.value_or(true);
  const bool nan_on_empty = ns == 3;
  const int pv = p.pool_type == PoolType::kLp ? p.p_value.value_or(1) : 1;
  const float* xd = xb.ptr<const float>();
  float* yd = yb.ptr<float>();
  const bool is_max = p.pool_type == PoolType::kMax, is_avg = p.pool_type == PoolType::kAvg;
  // One image row of column maxima (thread-local scratch, see ConvScratch).
  float* colmax = is_max && !cl ? internal::ConvScratch(static_cast<size_t>(g.image[2])) : nullptr;
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t c = 0; c < C; ++c) {
      const float* x = cl ? xd + n * IS * C + c : xd + (n * C + c) * IS;
      float* y = cl ? yd + n * OS * C + c : yd + (n * C + c) * OS;
      const int64_t xs = cl ? C : 1;
      if (is_max && !cl) {
        MaxPlaneContiguous(x, y, g, colmax);
      } else if (is_max) {
        MaxPlane(x, xs, y, xs, g);
      } else if (is_avg) {
        SumPlane<kAvg, 1>(x, xs, y, xs, g, include_pad, nan_on_empty);
      } else if (pv == 2) {
        SumPlane<kSum, 2>(x, xs, y, xs, g, include_pad, nan_on_empty);
      } else if (pv == 3) {
        SumPlane<kSum, 3>(x, xs, y, xs, g, include_pad, nan_on_empty);
      } else {
        SumPlane<kSum, 1>(x, xs, y, xs, g, include_pad, nan_on_empty);
      }
    }
  }
}

}  // namespace

void RegisterPoolingOps(OpRegistry* r) {
  r->Register("Pooling")
               .Describe("Performs max, average, sum or lp pooling over 1-D, 2-D or 3-D windows "
                         "(or over the whole feature map with global_pool). Output size along "
                         "each axis: valid floor((x + 2*pad - kernel) / stride) + 1, full "
                         "ceil(...) + 1, same ceil((x + 2*pad) / stride). Stride defaults to "
                         "1.")
               .SetParam<PoolingParam>(PoolingParamInit)
               .SetInputNames(std::vector<std::string>{"data"})
               .SetNumOutputs(1)
               .SetInferShape(PoolingInferShape)
               .SetInferType(ElemwiseFloatType)
               .SetCompute(PoolingCompute);
}

}  // namespace hybridnet
