// MXNet 1.9.1's simple int8 ops (src/operator/quantization/quantized_{pooling,flatten,
// activation,elemwise_add,elemwise_mul,concat,batch_norm,indexing_op}.cc and the mkldnn/ forms
// its CPU wheel runs). Each
// takes its float op's attributes and, after the integer inputs, each one's float range [min, max]
// as (1,) inputs; it outputs the integers and their range. The arithmetic is that of MXNet's oneDNN
// primitives, checked against MXNet itself:
//  * pooling, flatten and relu keep the range; max pooling, flatten and relu are exact, avg
//    pooling divides the window's integer sum by the kernel size (count_include_pad, even where
//    the window passes the padded image) or by the values inside, rounded half to even;
//  * elemwise_add and concat rescale each input by (output levels / output range) over
//    (input levels / input range), levels 127.5 (int8), 255.5 (uint8) or 2^31 (int32), and
//    round half to even with saturation;
//  * elemwise_mul (plain C++ in MXNet too) gives the exact int32 products, or with a calibrated
//    range int8 products truncated toward zero;
//  * batch_norm folds the statistics into a scale and shift onto the calibrated output range;
//    embedding copies int8 rows and passes the weight's range.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "hybridnet/op.h"
#include "kernels/layout.h"
#include "kernels/parallel-inl.h"
#include "kernels/pooling.h"
#include "kernels/workspace.h"
#include "ops/nn/activation_param.h"
#include "ops/nn/batch_norm_param.h"
#include "ops/nn/embedding_param.h"
#include "ops/nn/pooling_param.h"
#include "ops/quantization/quantization.h"
#include "ops/quantization/range_inference.h"
#include "ops/register_ops.h"
#include "ops/shape/concat_param.h"

namespace hybridnet {
namespace {

using internal::AssignQuantizedDType;
using internal::MaxAbs;
using internal::QuantizedLevels;
using internal::RangedShape;
using internal::RangeOutputNames;
using internal::SaturateRoundEven;

bool IsInt8Or(DType t) { return t == DType::kInt8 || t == DType::kUint8; }

// Inputs 0..n-1 int8 or uint8, the rest and outputs 1 and 2 float32; output 0 `y` once known.
bool RangedType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out, size_t n,
                DType y) {
  for (size_t i = 0; i < n; ++i) {
    const DType x = (*in)[i];
    HN_CHECK(x == DType::kUnknown || IsInt8Or(x), kTypeError)
        << DescribeNode(attrs) << ": input " << i << " has dtype " << DTypeName(x)
        << "; expected int8 or uint8 (quantize float data first, requantize int32)";
  }
  for (size_t i = n; i < in->size(); ++i)
    AssignQuantizedDType(attrs, in, i, DType::kFloat32, "input");
  AssignQuantizedDType(attrs, out, 1, DType::kFloat32, "output");
  AssignQuantizedDType(attrs, out, 2, DType::kFloat32, "output");
  if (y == DType::kUnknown) return false;
  AssignQuantizedDType(attrs, out, 0, y, "output");
  return true;
}

// Output 0 has input 0's int8 or uint8 type (pooling, flatten, act).
bool SameQuantizedType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  return RangedType(attrs, in, out, 1, (*in)[0]);
}

void CopyRange(const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  out[1].ptr<float>()[0] = in[1].ptr<const float>()[0];
  out[2].ptr<float>()[0] = in[2].ptr<const float>()[0];
}

// ---- _contrib_quantized_pooling ---------------------------------------------------------------

bool QuantizedPoolingShape(const NodeAttrs& attrs, std::vector<Shape>* in,
                           std::vector<Shape>* out) {
  const auto& p = attrs.Param<internal::PoolingParam>();
  HN_CHECK(p.pool_type == internal::PoolType::kMax || p.pool_type == internal::PoolType::kAvg,
           kUnsupported)
      << DescribeNode(attrs) << ": quantized pooling supports pool_type max and avg only";
  const Shape& x = (*in)[0];
  HN_CHECK(x.ndim() == 0 || x.ndim() == 4 || x.ndim() == 5, kShapeError)
      << DescribeNode(attrs) << ": quantized pooling takes 4-D or 5-D data (2-D or 3-D "
      << "windows), got " << x;
  return RangedShape(attrs, in, out, 1, internal::PoolingInferShape);
}

// Global average pooling of channel-last data (a network's last pooling, after int8
// convolutions): each channel's integer sum in one pass over the image, divided by the image size
// as the general path below divides its exact float sum.
template <typename T>
void GlobalAveragePoolChannelLast(const OpContext& ctx, const T* x, int64_t N, int64_t S, int64_t C,
                                  T* y) {
  int32_t* sums = ctx.workspace->Get<int32_t>(internal::kOpSlot0, static_cast<size_t>(C));
  const float count = static_cast<float>(S);
  for (int64_t n = 0; n < N; ++n) {
    std::fill(sums, sums + C, 0);
    for (int64_t s = 0; s < S; ++s) {
      const T* row = x + (n * S + s) * C;
      for (int64_t c = 0; c < C; ++c) sums[c] += row[c];
    }
    for (int64_t c = 0; c < C; ++c) {
      y[n * C + c] = SaturateRoundEven<T>(static_cast<float>(sums[c]) / count);
    }
  }
}

// True when every window of `g` has a tap inside the image along each axis (none is all padding).
bool EveryWindowTouchesTheImage(const internal::SpatialGeom& g) {
  for (int a = 0; a < 3; ++a) {
    if (g.pad[a] >= g.kernel[a] || (g.grid[a] - 1) * g.stride[a] - g.pad[a] >= g.image[a]) {
      return false;
    }
  }
  return true;
}

// Max pooling of channel-last data in its own integers (a maximum is exact in any type): each
// output position's lanes are the maxima over the window's taps inside the image. Output rows are
// split between the kernel threads (the result does not depend on the split).
template <typename T>
void MaxPoolChannelLast(const internal::PoolingCall& call, const T* x, T* y) {
  const int64_t rows = call.planes * call.g.grid[0] * call.g.grid[1];
  const int64_t row_size = call.g.grid[2] * call.lane;
  internal::ParallelFor(rows, rows * row_size >= internal::kElementwiseRange, [&](int64_t row) {
    // Local copies: a store through T* (a char type) may alias anything reached by reference,
    // which would keep the lane loop from vectorizing.
    const internal::SpatialGeom g = call.g;
    const int64_t C = call.lane;
    const int64_t oh = row % g.grid[1];
    const int64_t od = row / g.grid[1] % g.grid[0];
    const int64_t n = row / (g.grid[1] * g.grid[0]);
    for (int64_t ow = 0; ow < g.grid[2]; ++ow) {
      T* out = y + (row * g.grid[2] + ow) * C;
      bool first = true;
      for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
        const int64_t id = od * g.stride[0] - g.pad[0] + kd;
        if (id < 0 || id >= g.image[0]) continue;
        for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
          const int64_t ih = oh * g.stride[1] - g.pad[1] + kh;
          if (ih < 0 || ih >= g.image[1]) continue;
          for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
            const int64_t iw = ow * g.stride[2] - g.pad[2] + kw;
            if (iw < 0 || iw >= g.image[2]) continue;
            const T* in = x + (((n * g.image[0] + id) * g.image[1] + ih) * g.image[2] + iw) * C;
            if (first) {
              std::memcpy(out, in, static_cast<size_t>(C) * sizeof(T));
              first = false;
            } else {
              for (int64_t c = 0; c < C; ++c) out[c] = std::max(out[c], in[c]);
            }
          }
        }
      }
    }
  });
}

template <typename T>
void QuantizedPoolingOf(const OpContext& ctx, const internal::PoolingParam& p, const TBlob& x,
                        const TBlob& y) {
  const internal::PoolingCall call = internal::MakePoolingCall(p, x.shape, y.shape);
  const int64_t n = x.Size(), m = y.Size();
  // Sums below 2^24 are exact in floats and int32 alike.
  if (p.pool_type == internal::PoolType::kAvg && p.global_pool && call.lane > 1 &&
      call.g.ImageSize() <= (int64_t{1} << 16)) {
    GlobalAveragePoolChannelLast(ctx, x.ptr<const T>(), call.planes, call.g.ImageSize(), call.lane,
                                 y.ptr<T>());
    return;
  }
  if (p.pool_type == internal::PoolType::kMax && call.lane > 1 &&
      EveryWindowTouchesTheImage(call.g)) {
    MaxPoolChannelLast(call, x.ptr<const T>(), y.ptr<T>());
    return;
  }
  // Integers up to 255 * 27 * (window) stay exact in float sums; the kernels run on floats.
  float* xf = ctx.workspace->Get<float>(internal::kOpSlot0, static_cast<size_t>(n));
  float* yf = ctx.workspace->Get<float>(internal::kOpSlot1, static_cast<size_t>(m));
  const T* xq = x.ptr<const T>();
  for (int64_t i = 0; i < n; ++i) xf[i] = static_cast<float>(xq[i]);
  T* yq = y.ptr<T>();
  if (p.pool_type == internal::PoolType::kMax) {
    internal::PoolPlanes(internal::PoolType::kMax, 1, true, false, xf, yf, call.g, call.lane,
                         call.planes, ctx.workspace);
    for (int64_t i = 0; i < m; ++i) yq[i] = static_cast<T>(yf[i]);
    return;
  }
  internal::PoolPlanes(internal::PoolType::kSum, 1, true, false, xf, yf, call.g, call.lane,
                       call.planes, ctx.workspace);
  // oneDNN's divisor: the whole kernel with count_include_pad, else the values inside, which
  // sum pooling of a plane of ones counts (the same for every plane and lane).
  const int64_t positions = call.g.GridSize();
  float* count = ctx.workspace->Get<float>(internal::kOpSlot2, static_cast<size_t>(positions));
  if (call.include_pad) {
    std::fill(count, count + positions,
              static_cast<float>(call.g.kernel[0] * call.g.kernel[1] * call.g.kernel[2]));
  } else {
    float* ones =
        ctx.workspace->Get<float>(internal::kOpSlot3, static_cast<size_t>(call.g.ImageSize()));
    std::fill(ones, ones + call.g.ImageSize(), 1.0f);
    internal::PoolPlanes(internal::PoolType::kSum, 1, true, false, ones, count, call.g, 1, 1,
                         ctx.workspace);
  }
  const int64_t lane = call.lane;
  for (int64_t i = 0; i < m; ++i) {
    yq[i] = SaturateRoundEven<T>(yf[i] / count[(i / lane) % positions]);
  }
}

void QuantizedPoolingCompute(const OpContext& ctx, const NodeAttrs& attrs,
                             const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<internal::PoolingParam>();
  if (in[0].dtype == DType::kUint8) {
    QuantizedPoolingOf<uint8_t>(ctx, p, in[0], out[0]);
  } else {
    QuantizedPoolingOf<int8_t>(ctx, p, in[0], out[0]);
  }
  CopyRange(in, out);
}

// ---- _contrib_quantized_flatten -----------------------------------------------------------------

bool FlattenDataShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& x = (*in)[0];
  if (x.ndim() == 0 || !x.IsKnown()) return false;
  HN_CHECK(x.ndim() >= 1, kShapeError) << DescribeNode(attrs) << ": data must not be a scalar";
  int64_t rest = 1;
  for (size_t k = 1; k < x.ndim(); ++k) rest *= x[k];
  Shape merged = (*out)[0];
  const Shape want{x[0], rest};
  HN_CHECK(MergeShape(want, &merged), kShapeError)
      << DescribeNode(attrs) << ": output shape " << (*out)[0] << " differs from " << want;
  (*out)[0] = merged;
  return true;
}

bool QuantizedFlattenShape(const NodeAttrs& attrs, std::vector<Shape>* in,
                           std::vector<Shape>* out) {
  return RangedShape(attrs, in, out, 1, FlattenDataShape);
}

void CopyDataAndRange(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                      const std::vector<TBlob>& out) {
  if (in[0].data != out[0].data) {
    std::memcpy(out[0].data, in[0].data, static_cast<size_t>(in[0].Size()));
  }
  CopyRange(in, out);
}

// ---- _contrib_quantized_act
// -----------------------------------------------------------------------

void InitQuantizedAct(internal::ActivationParam* p) {
  HN_CHECK(p->act_type == internal::ActType::kRelu, kInvalidArgument)
      << "quantized activation supports act_type relu only";
}

bool QuantizedSameShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  return RangedShape(attrs, in, out, 1, ElemwiseShape);
}

// MXNet's output is int8 whatever the input: uint8 above 127 would not fit.
bool QuantizedActType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  HN_CHECK((*in)[0] != DType::kUint8, kTypeError)
      << DescribeNode(attrs) << ": data is uint8, but the output is int8 (as MXNet's), which "
      << "cannot hold uint8 values above 127; relu of uint8 data is the data itself";
  return RangedType(attrs, in, out, 1,
                    (*in)[0] == DType::kUnknown ? DType::kUnknown : DType::kInt8);
}

void QuantizedReluCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                          const std::vector<TBlob>& out) {
  const int64_t n = in[0].Size();
  const int8_t* x = in[0].ptr<const int8_t>();
  int8_t* y = out[0].ptr<int8_t>();
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? x[i] : int8_t{0};
  CopyRange(in, out);
}

// ---- _contrib_quantized_elemwise_add ------------------------------------------------------------

struct QuantizedElemwiseAddParam {
  std::optional<float> min_calib_range;
  std::optional<float> max_calib_range;
  static void Declare(ParamDeclarer<QuantizedElemwiseAddParam>* d) {
    d->Field("min_calib_range", &QuantizedElemwiseAddParam::min_calib_range)
        .Default(std::nullopt)
        .Describe("The calibrated minimum of the sum; with it the output is int8 or uint8.");
    d->Field("max_calib_range", &QuantizedElemwiseAddParam::max_calib_range)
        .Default(std::nullopt)
        .Describe("The calibrated maximum of the sum; without it the output is int32.");
  }
};

void InitQuantizedElemwiseAdd(QuantizedElemwiseAddParam* p) {
  internal::CheckCalibratedRange(p->min_calib_range, p->max_calib_range);
}

bool QuantizedElemwiseAddShape(const NodeAttrs& attrs, std::vector<Shape>* in,
                               std::vector<Shape>* out) {
  return RangedShape(attrs, in, out, 2, ElemwiseShape);
}

// int32 without a calibrated range; with one, the inputs' type when they share it, else int8.
bool QuantizedElemwiseAddType(const NodeAttrs& attrs, std::vector<DType>* in,
                              std::vector<DType>* out) {
  const auto& p = attrs.Param<QuantizedElemwiseAddParam>();
  const DType a = (*in)[0], b = (*in)[1];
  DType y = DType::kInt32;
  if (p.min_calib_range) {
    y = a == DType::kUnknown || b == DType::kUnknown ? DType::kUnknown : a == b ? a : DType::kInt8;
  }
  return RangedType(attrs, in, out, 2, y) && a != DType::kUnknown && b != DType::kUnknown;
}

template <typename A, typename B, typename Y>
void AddScaled(const A* a, const B* b, int64_t n, float scale_a, float scale_b, Y* y) {
  auto sum = [=](int64_t i) {
    return static_cast<float>(b[i]) * scale_b + static_cast<float>(a[i]) * scale_a;
  };
  if constexpr (sizeof(Y) == 1) {
    internal::StoreRoundedEven(n, y, sum);
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = SaturateRoundEven<Y>(sum(i));
  }
}

template <typename A, typename B>
void AddInto(const A* a, const B* b, int64_t n, float scale_a, float scale_b, const TBlob& y) {
  switch (y.dtype) {
    case DType::kInt8:
      AddScaled(a, b, n, scale_a, scale_b, y.ptr<int8_t>());
      break;
    case DType::kUint8:
      AddScaled(a, b, n, scale_a, scale_b, y.ptr<uint8_t>());
      break;
    default:
      AddScaled(a, b, n, scale_a, scale_b, y.ptr<int32_t>());
  }
}

void QuantizedElemwiseAddCompute(const OpContext& ctx, const NodeAttrs& attrs,
                                 const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<QuantizedElemwiseAddParam>();
  const float range_a = MaxAbs(in[2].ptr<const float>()[0], in[3].ptr<const float>()[0]);
  const float range_b = MaxAbs(in[4].ptr<const float>()[0], in[5].ptr<const float>()[0]);
  const DType ta = in[0].dtype, tb = in[1].dtype, ty = out[0].dtype;
  const float levels_y = ty == DType::kInt32 ? internal::kInt32ScaleRange : QuantizedLevels(ty);
  float out_min = 0.0f, out_max = 0.0f;
  // Each input's factor onto the output's levels; without a calibrated range the output range is
  // the sum of the inputs'.
  float scale_a = 0.0f, scale_b = 0.0f;
  if (p.min_calib_range) {
    out_min = *p.min_calib_range;
    out_max = *p.max_calib_range;
    const float out_scale = levels_y / MaxAbs(out_min, out_max);
    scale_a = out_scale / (QuantizedLevels(ta) / range_a);
    scale_b = out_scale / (QuantizedLevels(tb) / range_b);
  } else {
    out_max = range_a + range_b;
    out_min = -out_max;
    scale_a = range_a * levels_y / ((range_a + range_b) * QuantizedLevels(ta));
    scale_b = range_b * levels_y / ((range_a + range_b) * QuantizedLevels(tb));
  }
  const int64_t n = in[0].Size();
  if (ta == tb) {
    if (ta == DType::kInt8) {
      AddInto(in[0].ptr<const int8_t>(), in[1].ptr<const int8_t>(), n, scale_a, scale_b, out[0]);
    } else {
      AddInto(in[0].ptr<const uint8_t>(), in[1].ptr<const uint8_t>(), n, scale_a, scale_b, out[0]);
    }
  } else {
    // MXNet first rescales the uint8 input into int8 (saturating), then adds it with factor 1.
    const bool a_signed = ta == DType::kInt8;
    const uint8_t* u = in[a_signed ? 1 : 0].ptr<const uint8_t>();
    const int8_t* s = in[a_signed ? 0 : 1].ptr<const int8_t>();
    const float u_scale = a_signed ? scale_b : scale_a;
    const float s_scale = a_signed ? scale_a : scale_b;
    int8_t* rescaled = ctx.workspace->Get<int8_t>(internal::kOpSlot0, static_cast<size_t>(n));
    internal::StoreRoundedEven(n, rescaled,
                               [=](int64_t i) { return static_cast<float>(u[i]) * u_scale; });
    if (a_signed) {
      AddInto(s, rescaled, n, s_scale, 1.0f, out[0]);
    } else {
      AddInto(rescaled, s, n, 1.0f, s_scale, out[0]);
    }
  }
  out[1].ptr<float>()[0] = out_min;
  out[2].ptr<float>()[0] = out_max;
}

// ---- _contrib_quantized_elemwise_mul ------------------------------------------------------------

struct QuantizedElemwiseMulParam {
  std::optional<float> min_calib_range;
  std::optional<float> max_calib_range;
  bool enable_float_output = false;
  static void Declare(ParamDeclarer<QuantizedElemwiseMulParam>* d) {
    d->Field("min_calib_range", &QuantizedElemwiseMulParam::min_calib_range)
        .Default(std::nullopt)
        .Describe("The calibrated minimum of the product; with it the output is int8.");
    d->Field("max_calib_range", &QuantizedElemwiseMulParam::max_calib_range)
        .Default(std::nullopt)
        .Describe("The calibrated maximum of the product; without it the output is int32.");
    d->Field("enable_float_output", &QuantizedElemwiseMulParam::enable_float_output)
        .Default(false)
        .Describe("Output the float32 product alone (no range outputs).");
  }
};

void InitQuantizedElemwiseMul(QuantizedElemwiseMulParam* p) {
  internal::CheckCalibratedRange(p->min_calib_range, p->max_calib_range);
}

uint32_t QuantizedElemwiseMulOutputs(const NodeAttrs& attrs) {
  return attrs.Param<QuantizedElemwiseMulParam>().enable_float_output ? 1 : 3;
}

bool QuantizedElemwiseMulShape(const NodeAttrs& attrs, std::vector<Shape>* in,
                               std::vector<Shape>* out) {
  return RangedShape(attrs, in, out, 2, ElemwiseShape);
}

// int8 inputs only (MXNet's kernel reads both as int8).
bool QuantizedElemwiseMulType(const NodeAttrs& attrs, std::vector<DType>* in,
                              std::vector<DType>* out) {
  const auto& p = attrs.Param<QuantizedElemwiseMulParam>();
  AssignQuantizedDType(attrs, in, 0, DType::kInt8, "input");
  AssignQuantizedDType(attrs, in, 1, DType::kInt8, "input");
  for (size_t i = 2; i < 6; ++i) AssignQuantizedDType(attrs, in, i, DType::kFloat32, "input");
  if (p.enable_float_output) {
    AssignQuantizedDType(attrs, out, 0, DType::kFloat32, "output");
    return true;
  }
  AssignQuantizedDType(attrs, out, 0, p.min_calib_range ? DType::kInt8 : DType::kInt32, "output");
  AssignQuantizedDType(attrs, out, 1, DType::kFloat32, "output");
  AssignQuantizedDType(attrs, out, 2, DType::kFloat32, "output");
  return true;
}

// MXNet's products truncate toward zero (a C cast, not oneDNN): float(a * b) * scale.
template <typename Y>
void MultiplyInto(const int8_t* a, const int8_t* b, int64_t n, float scale, Y* y) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = static_cast<float>(a[i] * b[i]) * scale;
    if constexpr (std::is_same_v<Y, float>) {
      y[i] = v;
    } else {
      // Past the calibrated range MXNet's cast wraps around; here it saturates.
      y[i] = static_cast<Y>(
          std::max(static_cast<float>(std::numeric_limits<Y>::lowest()),
                   std::min(std::trunc(v), static_cast<float>(std::numeric_limits<Y>::max()))));
    }
  }
}

void QuantizedElemwiseMulCompute(const OpContext&, const NodeAttrs& attrs,
                                 const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<QuantizedElemwiseMulParam>();
  const float lhs_min = in[2].ptr<const float>()[0], lhs_max = in[3].ptr<const float>()[0];
  const float rhs_min = in[4].ptr<const float>()[0], rhs_max = in[5].ptr<const float>()[0];
  const float lhs_scale = internal::kInt8ScaleRange / MaxAbs(lhs_min, lhs_max);
  const float rhs_scale = internal::kInt8ScaleRange / MaxAbs(rhs_min, rhs_max);
  const int8_t* a = in[0].ptr<const int8_t>();
  const int8_t* b = in[1].ptr<const int8_t>();
  const int64_t n = in[0].Size();
  if (p.enable_float_output) {
    // MXNet divides in double before storing the factor as float.
    const float scale = static_cast<float>(1.0 / lhs_scale / rhs_scale);
    MultiplyInto(a, b, n, scale, out[0].ptr<float>());
    return;
  }
  float out_min = 0.0f, out_max = 0.0f;
  if (p.min_calib_range) {
    out_min = *p.min_calib_range;
    out_max = *p.max_calib_range;
    const float out_scale = internal::kInt8ScaleRange / MaxAbs(out_min, out_max);
    MultiplyInto(a, b, n, out_scale / lhs_scale / rhs_scale, out[0].ptr<int8_t>());
  } else {
    internal::QuantizationRangeForMultiplication<int8_t, int8_t, int32_t>(
        lhs_min, lhs_max, rhs_min, rhs_max, true, &out_min, &out_max);
    MultiplyInto(a, b, n, 1.0f, out[0].ptr<int32_t>());
  }
  out[1].ptr<float>()[0] = out_min;
  out[2].ptr<float>()[0] = out_max;
}

// ---- _contrib_quantized_batch_norm --------------------------------------------------------------

// Inputs (data, gamma, beta, moving_mean, moving_var, min_data, max_data): the float op's five,
// then the data's range.
bool QuantizedBatchNormShape(const NodeAttrs& attrs, std::vector<Shape>* in,
                             std::vector<Shape>* out) {
  return RangedShape(attrs, in, out, 5, internal::BatchNormInferShape);
}

// int8 data only (MXNet's inference assigns int8 whatever it is told); the output range is the
// calibrated one, which MXNet requires.
bool QuantizedBatchNormType(const NodeAttrs& attrs, std::vector<DType>* in,
                            std::vector<DType>* out) {
  const auto& p = attrs.Param<internal::BatchNormParam>();
  HN_CHECK(p.min_calib_range && p.max_calib_range, kInvalidArgument)
      << DescribeNode(attrs) << ": min_calib_range and max_calib_range are required (MXNet's "
      << "quantized BatchNorm has no uncalibrated form)";
  HN_CHECK(*p.min_calib_range <= *p.max_calib_range, kInvalidArgument)
      << DescribeNode(attrs) << ": min_calib_range " << *p.min_calib_range
      << " is larger than max_calib_range " << *p.max_calib_range;
  AssignQuantizedDType(attrs, in, 0, DType::kInt8, "input");
  for (size_t i = 1; i < 7; ++i) AssignQuantizedDType(attrs, in, i, DType::kFloat32, "input");
  AssignQuantizedDType(attrs, out, 0, DType::kInt8, "output");
  AssignQuantizedDType(attrs, out, 1, DType::kFloat32, "output");
  AssignQuantizedDType(attrs, out, 2, DType::kFloat32, "output");
  return true;
}

// MXNet folds the statistics into a per-channel scale and shift onto the output's int8 levels and
// runs oneDNN's inference BatchNorm with mean 0 and variance 1, which still divides the scale by
// sqrt(1 + eps).
void QuantizedBatchNormCompute(const OpContext& ctx, const NodeAttrs& attrs,
                               const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<internal::BatchNormParam>();
  const Shape& shape = in[0].shape;
  const size_t axis =
      static_cast<size_t>(p.axis < 0 ? p.axis + static_cast<int>(shape.ndim()) : p.axis);
  const int64_t channels = shape[axis];
  int64_t outer = 1, inner = 1;
  for (size_t k = 0; k < axis; ++k) outer *= shape[k];
  for (size_t k = axis + 1; k < shape.ndim(); ++k) inner *= shape[k];
  const float max_abs_data = MaxAbs(in[5].ptr<const float>()[0], in[6].ptr<const float>()[0]);
  const float max_abs_out = MaxAbs(*p.min_calib_range, *p.max_calib_range);
  const float* gamma = in[1].ptr<const float>();
  const float* beta = in[2].ptr<const float>();
  const float* mean = in[3].ptr<const float>();
  const float* var = in[4].ptr<const float>();
  float* scale = ctx.workspace->Get<float>(internal::kOpSlot0, static_cast<size_t>(2 * channels));
  float* shift = scale + channels;
  const float unit_std = std::sqrt(1.0f + static_cast<float>(p.eps));
  for (int64_t c = 0; c < channels; ++c) {
    const float invstd = static_cast<float>(1.0 / std::sqrt(static_cast<double>(var[c]) + p.eps));
    scale[c] = gamma[c] * invstd * max_abs_data / max_abs_out / unit_std;
    shift[c] = (beta[c] - mean[c] * gamma[c] * invstd) * internal::kInt8ScaleRange / max_abs_out;
  }
  const int8_t* x = in[0].ptr<const int8_t>();
  int8_t* y = out[0].ptr<int8_t>();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t base = (o * channels + c) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        y[base + i] =
            SaturateRoundEven<int8_t>(scale[c] * static_cast<float>(x[base + i]) + shift[c]);
      }
    }
  out[1].ptr<float>()[0] = *p.min_calib_range;
  out[2].ptr<float>()[0] = *p.max_calib_range;
}

// ---- _contrib_quantized_embedding ---------------------------------------------------------------

bool QuantizedEmbeddingShape(const NodeAttrs& attrs, std::vector<Shape>* in,
                             std::vector<Shape>* out) {
  return RangedShape(attrs, in, out, 2, internal::EmbeddingShape);
}

// Indices of any dtype but bool; the weight int8.
bool QuantizedEmbeddingType(const NodeAttrs& attrs, std::vector<DType>* in,
                            std::vector<DType>* out) {
  HN_CHECK((*in)[0] != DType::kBool, kTypeError)
      << DescribeNode(attrs) << ": data (indices) has dtype bool";
  AssignQuantizedDType(attrs, in, 1, DType::kInt8, "input");
  AssignQuantizedDType(attrs, in, 2, DType::kFloat32, "input");
  AssignQuantizedDType(attrs, in, 3, DType::kFloat32, "input");
  AssignQuantizedDType(attrs, out, 0, DType::kInt8, "output");
  AssignQuantizedDType(attrs, out, 1, DType::kFloat32, "output");
  AssignQuantizedDType(attrs, out, 2, DType::kFloat32, "output");
  return (*in)[0] != DType::kUnknown;
}

void QuantizedEmbeddingCompute(const OpContext& ctx, const NodeAttrs& attrs,
                               const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  internal::EmbeddingCompute(ctx, attrs, in, out);
  out[1].ptr<float>()[0] = in[2].ptr<const float>()[0];
  out[2].ptr<float>()[0] = in[3].ptr<const float>()[0];
}

// ---- _contrib_quantized_concat ------------------------------------------------------------------

int NumConcatArgs(const NodeAttrs& attrs) { return attrs.Param<internal::ConcatParam>().num_args; }

bool QuantizedConcatShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  return RangedShape(attrs, in, out, static_cast<size_t>(NumConcatArgs(attrs)),
                     internal::ConcatShape);
}

// int8 when any input is int8, else uint8.
bool QuantizedConcatType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const size_t n = static_cast<size_t>(NumConcatArgs(attrs));
  bool known = true, any_int8 = false;
  for (size_t i = 0; i < n; ++i) {
    known = known && (*in)[i] != DType::kUnknown;
    any_int8 = any_int8 || (*in)[i] == DType::kInt8;
  }
  const DType y = any_int8 ? DType::kInt8 : known ? DType::kUint8 : DType::kUnknown;
  return RangedType(attrs, in, out, n, y) && known;
}

template <typename X, typename Y>
void RescaleBlock(const X* x, int64_t count, float scale, bool copy, Y* y) {
  if (copy) {
    for (int64_t i = 0; i < count; ++i) y[i] = static_cast<Y>(x[i]);
    return;
  }
  internal::StoreRoundedEven(count, y, [=](int64_t i) { return static_cast<float>(x[i]) * scale; });
}

template <typename Y>
void ConcatRescaled(const NodeAttrs& attrs, const std::vector<TBlob>& in, const TBlob& y,
                    float out_scale) {
  const auto& p = attrs.Param<internal::ConcatParam>();
  const Shape& shape = y.shape;
  const size_t axis =
      static_cast<size_t>(p.dim < 0 ? p.dim + static_cast<int>(shape.ndim()) : p.dim);
  int64_t outer = 1, inner = 1;
  for (size_t k = 0; k < axis; ++k) outer *= shape[k];
  for (size_t k = axis + 1; k < shape.ndim(); ++k) inner *= shape[k];
  const int64_t row = shape[axis] * inner;
  int64_t offset = 0;
  for (int i = 0; i < p.num_args; ++i) {
    const TBlob& x = in[static_cast<size_t>(i)];
    const size_t r = static_cast<size_t>(p.num_args + 2 * i);
    const float in_scale = QuantizedLevels(x.dtype) /
                           MaxAbs(in[r].ptr<const float>()[0], in[r + 1].ptr<const float>()[0]);
    // An input already on the output's scale is copied (MXNet skips its reorder).
    const bool copy = in_scale == out_scale && x.dtype == y.dtype;
    const float scale = out_scale / in_scale;
    const int64_t block = x.shape[axis] * inner;
    for (int64_t o = 0; o < outer; ++o) {
      Y* dst = y.ptr<Y>() + o * row + offset;
      if (x.dtype == DType::kInt8) {
        RescaleBlock(x.ptr<const int8_t>() + o * block, block, scale, copy, dst);
      } else {
        RescaleBlock(x.ptr<const uint8_t>() + o * block, block, scale, copy, dst);
      }
    }
    offset += block;
  }
}

void QuantizedConcatCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                            const std::vector<TBlob>& out) {
  const int n = NumConcatArgs(attrs);
  // The output range covers every input's and zero.
  float out_min = 0.0f, out_max = 0.0f;
  for (int i = 0; i < n; ++i) {
    out_min = std::min(out_min, in[static_cast<size_t>(n + 2 * i)].ptr<const float>()[0]);
    out_max = std::max(out_max, in[static_cast<size_t>(n + 2 * i + 1)].ptr<const float>()[0]);
  }
  const float out_scale = QuantizedLevels(out[0].dtype) / MaxAbs(out_min, out_max);
  if (out[0].dtype == DType::kInt8) {
    ConcatRescaled<int8_t>(attrs, in, out[0], out_scale);
  } else {
    ConcatRescaled<uint8_t>(attrs, in, out[0], out_scale);
  }
  out[1].ptr<float>()[0] = out_min;
  out[2].ptr<float>()[0] = out_max;
}

}  // namespace

void RegisterQuantizedOps(OpRegistry* r) {
  r->Register("_contrib_quantized_pooling")
      .Describe(
          "Pooling of int8 or uint8 data (pool_type max or avg, Pooling's attributes); the "
          "range passes through. avg rounds the window sum over the divisor half to even.")
      .SetParam<internal::PoolingParam>(internal::PoolingParamInit)
      .SetInputNames({"data", "min_data", "max_data"})
      .SetNumOutputs(3)
      .SetOutputNames(RangeOutputNames)
      .SetInferShape(QuantizedPoolingShape)
      .SetInferType(SameQuantizedType)
      .SetCompute(QuantizedPoolingCompute);
  r->Register("_contrib_quantized_flatten")
      .Describe("Flattens int8 or uint8 data to (batch, rest); the range passes through.")
      .SetInputNames({"data", "min_data", "max_data"})
      .SetNumOutputs(3)
      .SetOutputNames(RangeOutputNames)
      .SetInferShape(QuantizedFlattenShape)
      .SetInferType(SameQuantizedType)
      .SetCompute(CopyDataAndRange)
      .SetInplace({{0, 0}});
  r->Register("_contrib_quantized_act")
      .Describe("relu of int8 or uint8 data (act_type relu only); the range passes through.")
      .SetParam<internal::ActivationParam>(InitQuantizedAct)
      .SetInputNames({"data", "min_data", "max_data"})
      .SetNumOutputs(3)
      .SetOutputNames(RangeOutputNames)
      .SetInferShape(QuantizedSameShape)
      .SetInferType(QuantizedActType)
      .SetCompute(QuantizedReluCompute)
      .SetInplace({{0, 0}});
  r->Register("_contrib_quantized_elemwise_add")
      .Describe(
          "Adds two int8/uint8 arrays of equal shape over their ranges: into int32 over the sum "
          "of the ranges, or with a calibrated range into int8 (uint8 when both are uint8).")
      .SetParam<QuantizedElemwiseAddParam>(InitQuantizedElemwiseAdd)
      .SetInputNames({"lhs", "rhs", "lhs_min", "lhs_max", "rhs_min", "rhs_max"})
      .SetNumOutputs(3)
      .SetOutputNames(RangeOutputNames)
      .SetInferShape(QuantizedElemwiseAddShape)
      .SetInferType(QuantizedElemwiseAddType)
      .SetCompute(QuantizedElemwiseAddCompute);
  r->Register("_contrib_quantized_elemwise_mul")
      .Describe(
          "Multiplies two int8 arrays of equal shape over their ranges: into int32 (the exact "
          "products), with a calibrated range into int8 (truncated toward zero), or with "
          "enable_float_output into float32 alone.")
      .SetParam<QuantizedElemwiseMulParam>(InitQuantizedElemwiseMul)
      .SetInputNames({"lhs", "rhs", "lhs_min", "lhs_max", "rhs_min", "rhs_max"})
      .SetNumOutputs(QuantizedElemwiseMulOutputs)
      .SetOutputNames([](const NodeAttrs& attrs) {
        return attrs.Param<QuantizedElemwiseMulParam>().enable_float_output
                   ? std::vector<std::string>{"output"}
                   : RangeOutputNames(attrs);
      })
      .SetInferShape(QuantizedElemwiseMulShape)
      .SetInferType(QuantizedElemwiseMulType)
      .SetCompute(QuantizedElemwiseMulCompute);
  r->Register("_contrib_quantized_batch_norm")
      .Describe(
          "Inference BatchNorm of int8 data over [min_data, max_data] into int8 over the "
          "calibrated [min_calib_range, max_calib_range] (required; BatchNorm's attributes).")
      .SetParam<internal::BatchNormParam>()
      .SetInputNames({"data", "gamma", "beta", "moving_mean", "moving_var", "min_data", "max_data"})
      .SetMutableInputs({3, 4})
      .SetNumOutputs(3)
      .SetOutputNames(RangeOutputNames)
      .SetInferShape(QuantizedBatchNormShape)
      .SetInferType(QuantizedBatchNormType)
      .SetCompute(QuantizedBatchNormCompute);
  r->Register("_contrib_quantized_embedding")
      .Describe(
          "Looks up int8 rows of weight by the indices in data (Embedding's attributes and "
          "clipping); the weight's range passes through.")
      .SetParam<internal::EmbeddingParam>()
      .SetInputNames({"data", "weight", "min_weight", "max_weight"})
      .SetNumOutputs(3)
      .SetOutputNames(RangeOutputNames)
      .SetInferShape(QuantizedEmbeddingShape)
      .SetInferType(QuantizedEmbeddingType)
      .SetCompute(QuantizedEmbeddingCompute);
  r->Register("_contrib_quantized_concat")
      .Describe(
          "Joins int8/uint8 arrays along dim (Concat's attributes), each rescaled onto the "
          "range covering all of theirs and zero; int8 when any input is int8, else uint8.")
      .SetParam<internal::ConcatParam>()
      .SetInputNames([](const NodeAttrs& attrs) {
        std::vector<std::string> names;
        const int n = NumConcatArgs(attrs);
        for (int i = 0; i < n; ++i) names.push_back("arg" + std::to_string(i));
        for (int i = 0; i < n; ++i) {
          names.push_back("arg" + std::to_string(i) + "_min");
          names.push_back("arg" + std::to_string(i) + "_max");
        }
        return names;
      })
      .SetNumInputs(
          [](const NodeAttrs& attrs) { return static_cast<uint32_t>(3 * NumConcatArgs(attrs)); })
      .SetKeyVarNumArgs("num_args")
      .SetNumOutputs(3)
      .SetOutputNames(RangeOutputNames)
      .SetInferShape(QuantizedConcatShape)
      .SetInferType(QuantizedConcatType)
      .SetCompute(QuantizedConcatCompute);
}

}  // namespace hybridnet
