// _contrib_BilinearResize2D of MXNet 1.9.1 (src/operator/contrib/bilinear_resize-inl.h, .cc),
// float32 and float64, NCHW.
//
// Output size by mode (MXNet's rules, including its quirks):
//  * size: (height, width), or (int(scale_height * h), int(scale_width * w)) when scale_height
//    is given (scale_width alone is ignored; scale_height without scale_width is an error);
//  * odd_scale: even sides scale to int(side * s), odd ones to int((side - 1) * s) + 1 (both
//    scales required);
//  * like: the height and width of the second input;
//  * to_even_down / to_even_up / to_odd_down / to_odd_up: the nearest even / odd side below or
//    above an odd / even one.
// MXNet keeps the new size in a 16-bit integer; sizes outside [1, 32767] are rejected here
// instead of wrapping. Sampling: align_corners maps corner pixel centers onto each other
// (scale (in - 1) / (out - 1), source = scale * dst); otherwise source = scale * (dst + 0.5) -
// 0.5 clamped at 0; the source position is computed in float, as in MXNet; equal sizes copy.
//
// The gradient (_backward_contrib_BilinearResize2D, MXNet's name) adds each output gradient
// into the four source pixels with the forward's weights, outputs in row-major order (MXNet
// adds them in its threads' order); the input of mode like gets zeros.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "onnx/onnx_convert.h"
#include "ops/gradient_util.h"
#include "ops/vision/vision_common-inl.h"
#include "ops/vision/vision_ops.h"

namespace hybridnet {
namespace {

using internal::AssignShape;
using internal::SwitchRealDType;

enum class ResizeMode { kSize, kOddScale, kLike, kToEvenDown, kToEvenUp, kToOddDown, kToOddUp };

struct BilinearResizeParam {
  int height = 1;
  int width = 1;
  std::optional<float> scale_height;
  std::optional<float> scale_width;
  ResizeMode mode = ResizeMode::kSize;
  bool align_corners = true;
  static void Declare(ParamDeclarer<BilinearResizeParam>* d) {
    d->Field("height", &BilinearResizeParam::height)
        .Default(1)
        .Min(1)
        .Describe("Output height (mode size without scale_height).");
    d->Field("width", &BilinearResizeParam::width)
        .Default(1)
        .Min(1)
        .Describe("Output width (mode size without scale_height).");
    d->Field("scale_height", &BilinearResizeParam::scale_height)
        .Default(std::nullopt)
        .Describe("Height factor (modes size and odd_scale).");
    d->Field("scale_width", &BilinearResizeParam::scale_width)
        .Default(std::nullopt)
        .Describe("Width factor (modes size, with scale_height, and odd_scale).");
    d->Field("mode", &BilinearResizeParam::mode,
             {{"like", ResizeMode::kLike},
              {"odd_scale", ResizeMode::kOddScale},
              {"size", ResizeMode::kSize},
              {"to_even_down", ResizeMode::kToEvenDown},
              {"to_even_up", ResizeMode::kToEvenUp},
              {"to_odd_down", ResizeMode::kToOddDown},
              {"to_odd_up", ResizeMode::kToOddUp}})
        .Default(ResizeMode::kSize)
        .Describe("How the output size is chosen (see the op description).");
    d->Field("align_corners", &BilinearResizeParam::align_corners)
        .Default(true)
        .Describe("Map the corner pixel centers of input and output onto each other.");
  }
};

void BilinearResizeInit(BilinearResizeParam* p) {
  if (p->mode == ResizeMode::kOddScale) {
    HN_CHECK(p->scale_height && p->scale_width, kInvalidArgument)
        << "mode odd_scale needs scale_height and scale_width";
  }
  if (p->mode == ResizeMode::kSize && p->scale_height) {
    HN_CHECK(p->scale_width.has_value(), kInvalidArgument)
        << "scale_height needs scale_width too (mode size)";
  }
}

// MXNet's output side for one axis of input side n.
int64_t ResizedSide(const BilinearResizeParam& p, int64_t n, int64_t fixed,
                    const std::optional<float>& scale, int64_t like) {
  switch (p.mode) {
    case ResizeMode::kSize:
      return p.scale_height ? static_cast<int64_t>(*scale * static_cast<float>(n)) : fixed;
    case ResizeMode::kOddScale:
      return n % 2 == 0 ? static_cast<int64_t>(static_cast<float>(n) * *scale)
                        : static_cast<int64_t>(static_cast<float>(n - 1) * *scale) + 1;
    case ResizeMode::kLike:
      return like;
    case ResizeMode::kToEvenDown:
      return n % 2 == 0 ? n : n - 1;
    case ResizeMode::kToEvenUp:
      return n % 2 == 0 ? n : n + 1;
    case ResizeMode::kToOddDown:
      return n % 2 == 1 ? n : n - 1;
    case ResizeMode::kToOddUp:
      return n % 2 == 1 ? n : n + 1;
  }
  return n;
}

bool BilinearResizeShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const auto& p = attrs.Param<BilinearResizeParam>();
  const std::string node = DescribeNode(attrs);
  const Shape& d = (*in)[0];
  HN_CHECK(d.ndim() == 0 || d.ndim() == 4, kShapeError)
      << node << ": data should be NCHW (batch, channel, height, width), got " << d;
  const bool like = p.mode == ResizeMode::kLike;
  if (like) {
    HN_CHECK((*in)[1].ndim() == 0 || (*in)[1].ndim() == 4, kShapeError)
        << node << ": like should be NCHW, got " << (*in)[1];
  }
  if (d.ndim() == 0 || !d.IsKnown() || (like && !(*in)[1].IsKnown())) return false;
  const int64_t like_h = like ? (*in)[1][2] : 0, like_w = like ? (*in)[1][3] : 0;
  const int64_t oh = ResizedSide(p, d[2], p.height, p.scale_height, like_h);
  const int64_t ow = ResizedSide(p, d[3], p.width, p.scale_width, like_w);
  HN_CHECK(oh >= 1 && oh <= 32767 && ow >= 1 && ow <= 32767, kShapeError)
      << node << ": the output size " << oh << " x " << ow << " for data " << d
      << " is outside [1, 32767] (MXNet holds it in 16 bits)";
  AssignShape(attrs, out, 0, Shape{d[0], d[1], oh, ow}, "output");
  return true;
}

// Source index of output index `dst` along one axis, computed in float as MXNet does.
float SourceIndex(float scale, int64_t dst, bool align_corners) {
  if (align_corners) return scale * static_cast<float>(dst);
  const float src = static_cast<float>(scale * (static_cast<double>(dst) + 0.5) - 0.5);
  return src < 0 ? 0.f : src;
}

float AxisScale(int64_t in, int64_t out, bool align_corners) {
  if (out <= 1) return 0.f;
  return align_corners ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                       : static_cast<float>(in) / static_cast<float>(out);
}

template <typename T>
void BilinearResizeKernel(bool align_corners, const Shape& is, const Shape& os, const T* x, T* y) {
  const int64_t planes = is[0] * is[1], ih = is[2], iw = is[3], oh = os[2], ow = os[3];
  if (ih == oh && iw == ow) {
    std::copy(x, x + planes * ih * iw, y);
    return;
  }
  const float rh = AxisScale(ih, oh, align_corners), rw = AxisScale(iw, ow, align_corners);
  std::vector<int64_t> w1(static_cast<size_t>(ow)), w1p(static_cast<size_t>(ow));
  std::vector<T> l0(static_cast<size_t>(ow)), l1(static_cast<size_t>(ow));
  for (int64_t q = 0; q < ow; ++q) {
    const float src = SourceIndex(rw, q, align_corners);
    const int64_t i = static_cast<int64_t>(src);
    w1[static_cast<size_t>(q)] = i;
    w1p[static_cast<size_t>(q)] = i < iw - 1 ? 1 : 0;
    l1[static_cast<size_t>(q)] = static_cast<T>(src - static_cast<float>(i));
    l0[static_cast<size_t>(q)] = T(1) - l1[static_cast<size_t>(q)];
  }
  for (int64_t r = 0; r < oh; ++r) {
    const float src = SourceIndex(rh, r, align_corners);
    const int64_t h1 = static_cast<int64_t>(src);
    const int64_t h1p = h1 < ih - 1 ? 1 : 0;
    const T h1l = static_cast<T>(src - static_cast<float>(h1)), h0l = T(1) - h1l;
    for (int64_t c = 0; c < planes; ++c) {
      const T* row0 = x + (c * ih + h1) * iw;
      const T* row1 = row0 + h1p * iw;
      T* dst = y + (c * oh + r) * ow;
      for (int64_t q = 0; q < ow; ++q) {
        const size_t k = static_cast<size_t>(q);
        const int64_t i = w1[k], ip = w1p[k];
        dst[q] = h0l * (l0[k] * row0[i] + l1[k] * row0[i + ip]) +
                 h1l * (l0[k] * row1[i] + l1[k] * row1[i + ip]);
      }
    }
  }
}

// The adjoint of BilinearResizeKernel: dx (is) from dy (os).
template <typename T>
void BilinearResizeBackwardKernel(bool align_corners, const Shape& is, const Shape& os, const T* dy,
                                  T* dx) {
  const int64_t planes = is[0] * is[1], ih = is[2], iw = is[3], oh = os[2], ow = os[3];
  if (ih == oh && iw == ow) {
    std::copy(dy, dy + planes * ih * iw, dx);
    return;
  }
  std::fill(dx, dx + planes * ih * iw, T(0));
  const float rh = AxisScale(ih, oh, align_corners), rw = AxisScale(iw, ow, align_corners);
  for (int64_t r = 0; r < oh; ++r) {
    const float src_h = SourceIndex(rh, r, align_corners);
    const int64_t h1 = static_cast<int64_t>(src_h);
    const int64_t h1p = h1 < ih - 1 ? 1 : 0;
    const T h1l = static_cast<T>(src_h - static_cast<float>(h1)), h0l = T(1) - h1l;
    for (int64_t q = 0; q < ow; ++q) {
      const float src_w = SourceIndex(rw, q, align_corners);
      const int64_t w1 = static_cast<int64_t>(src_w);
      const int64_t w1p = w1 < iw - 1 ? 1 : 0;
      const T w1l = static_cast<T>(src_w - static_cast<float>(w1)), w0l = T(1) - w1l;
      for (int64_t c = 0; c < planes; ++c) {
        T* pos = dx + (c * ih + h1) * iw + w1;
        const T g = dy[(c * oh + r) * ow + q];
        pos[0] += h0l * w0l * g;
        pos[w1p] += h0l * w1l * g;
        pos[h1p * iw] += h1l * w0l * g;
        pos[h1p * iw + w1p] += h1l * w1l * g;
      }
    }
  }
}

void BilinearResizeCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                           const std::vector<TBlob>& out) {
  const bool align = attrs.Param<BilinearResizeParam>().align_corners;
  SwitchRealDType(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    BilinearResizeKernel<T>(align, in[0].shape, out[0].shape, in[0].ptr<const T>(),
                            out[0].ptr<T>());
  });
}

// (out_grad, data[, like]) -> d data[, d like = 0].
void BilinearResizeBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                                   const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const bool align = attrs.Param<BilinearResizeParam>().align_corners;
  SwitchRealDType(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    BilinearResizeBackwardKernel<T>(align, out[0].shape, in[0].shape, in[0].ptr<const T>(),
                                    out[0].ptr<T>());
    if (out.size() > 1) std::fill(out[1].ptr<T>(), out[1].ptr<T>() + out[1].Size(), T(0));
  });
}

std::vector<std::string> BilinearResizeInputNames(const NodeAttrs& attrs) {
  return attrs.Param<BilinearResizeParam>().mode == ResizeMode::kLike
             ? std::vector<std::string>{"data", "like"}
             : std::vector<std::string>{"data"};
}

// ONNX Resize (linear) to the inferred output size: align_corners is its "align_corners"
// transform; otherwise "half_pixel", whose negative source positions ONNX Runtime clamps at 0
// as MXNet does.
void BilinearResizeOnnx(OnnxNodeContext* ctx) {
  const bool align = ctx->param<BilinearResizeParam>().align_corners;
  const OnnxValue& x = ctx->in(0);
  const Shape& out = ctx->out(0).shape;
  const std::string sizes = ctx->LeadingDimsThen(x, 2, {out[2], out[3]});
  ctx->Add("Resize", {x.name, "", "", sizes},
           {{"mode", "linear"},
            {"coordinate_transformation_mode", align ? "align_corners" : "half_pixel"}},
           ctx->out(0).name);
}

}  // namespace

void RegisterBilinearResizeOps(OpRegistry* r) {
  r->Register("_contrib_BilinearResize2D")
      .Describe(
          "Bilinear resize of NCHW data to a size given by mode: fixed, scaled, like a "
          "second input, or rounded to an even/odd side.")
      .SetParam<BilinearResizeParam>(BilinearResizeInit)
      .SetInputNames(BilinearResizeInputNames)
      .SetInferShape(BilinearResizeShape)
      .SetInferType(internal::RealType)
      .SetCompute(BilinearResizeCompute)
      .SetOnnx({"Resize", "Shape", "Slice", "Concat"}, BilinearResizeOnnx)
      .SetGradient(internal::BackwardOpGradient("_backward_contrib_BilinearResize2D"));

  r->Register("_backward_contrib_BilinearResize2D")
      .Describe(
          "The gradient of _contrib_BilinearResize2D: each output gradient added into its "
          "four source pixels with the bilinear weights; zeros for the like input.")
      .SetParam<BilinearResizeParam>(BilinearResizeInit)
      .SetInputNames([](const NodeAttrs& attrs) {
        return internal::BackwardInputNames(BilinearResizeInputNames(attrs));
      })
      .SetNumOutputs([](const NodeAttrs& attrs) {
        return static_cast<uint32_t>(BilinearResizeInputNames(attrs).size());
      })
      .SetInferShape([](const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
        return internal::BackwardShape(BilinearResizeShape, attrs, in, out);
      })
      .SetInferType(internal::RealType)
      .SetCompute(BilinearResizeBackwardCompute)
      .SetInternal();
}

}  // namespace hybridnet
