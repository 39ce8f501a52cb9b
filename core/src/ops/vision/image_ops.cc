// The deterministic image transforms of MXNet 1.9.1 (src/operator/image/: image_random-inl.h,
// resize-inl.h, crop-inl.h), on HWC images (or NHWC batches where MXNet accepts them):
//  * _image_to_tensor: HWC (NHWC) of any numeric dtype -> CHW (NCHW) float32 divided by 255;
//  * _image_normalize: CHW (NCHW) with 1 or 3 channels, (x - mean[c]) / std[c]; mean and std
//    have 1 or C values (MXNet's default of 4 values fits neither);
//  * _image_resize: OpenCV's cv::resize as MXNet's wheel (OpenCV 3.4.2) runs it: size (w, h) or
//    one size (square, or the short side with keep_ratio); interp 0 (nearest: source
//    floor(dst * in / out)) and 1 (bilinear: source (dst + 0.5) * in / out - 0.5 in float, taps
//    clamped at the borders; uint8 in OpenCV's fixed point). Other interpolations are refused;
//  * _image_crop: the (width, height) window at (x, y);
//  * _image_flip_left_right / _image_flip_top_bottom (HWC, 1 or 3 channels). MXNet's kernel only
//    swaps pixel pairs and so leaves the middle column (row) of an odd-sized image unwritten;
//    here it is copied;
//  * _image_adjust_lighting: AlexNet's PCA lighting, x + eigvec * (alpha * eigval) per RGB
//    channel in float, saturated for uint8. MXNet leaves a 1-channel output unwritten; here it
//    is the input.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "hybridnet/op.h"
#include "ops/dtype_switch-inl.h"
#include "ops/vision/vision_common-inl.h"
#include "ops/vision/vision_ops.h"

namespace hybridnet {
namespace {

using internal::AssignShape;
using internal::SwitchDType;

bool OneOrThreeChannels(int64_t c) { return c == 0 || c == 1 || c == 3; }

// ---- _image_to_tensor -------------------------------------------------------------------------

bool ToTensorShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& s = (*in)[0];
  if (s.ndim() == 0) return false;
  HN_CHECK(s.ndim() == 3 || s.ndim() == 4, kShapeError)
      << DescribeNode(attrs) << ": image should be (height, width, channels) or (batch, height, "
      << "width, channels), got " << s;
  if (s.ndim() == 3) {
    AssignShape(attrs, out, 0, Shape{s[2], s[0], s[1]}, "output");
  } else {
    AssignShape(attrs, out, 0, Shape{s[0], s[3], s[1], s[2]}, "output");
  }
  return s.IsKnown();
}

bool ToTensorType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  HN_CHECK((*in)[0] == DType::kUnknown || internal::IsNumericDType((*in)[0]), kTypeError)
      << DescribeNode(attrs) << ": input dtype " << DTypeName((*in)[0]) << " is not numeric";
  HN_CHECK((*out)[0] == DType::kUnknown || (*out)[0] == DType::kFloat32, kTypeError)
      << DescribeNode(attrs) << ": the output is float32, not " << DTypeName((*out)[0]);
  (*out)[0] = DType::kFloat32;
  return (*in)[0] != DType::kUnknown;
}

// x / 255 as MXNet divides: in double for double input, otherwise in float.
template <typename T>
float Scaled(T x) {
  if constexpr (std::is_same_v<T, double>) {
    return static_cast<float>(x / 255.0f);
  } else {
    return static_cast<float>(x) / 255.0f;
  }
}

void ToTensorCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                     const std::vector<TBlob>& out) {
  const Shape& s = in[0].shape;
  const bool batched = s.ndim() == 4;
  const int64_t batch = batched ? s[0] : 1;
  const int64_t length = s[batched ? 1 : 0] * s[batched ? 2 : 1];
  const int64_t channels = s[s.ndim() - 1];
  float* y = out[0].ptr<float>();
  SwitchDType(in[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in[0].ptr<const T>();
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t c = 0; c < channels; ++c)
        for (int64_t i = 0; i < length; ++i)
          y[(n * channels + c) * length + i] = Scaled(x[(n * length + i) * channels + c]);
  });
}

// ---- _image_normalize -------------------------------------------------------------------------

struct NormalizeParam {
  std::vector<float> mean{0.f, 0.f, 0.f, 0.f};
  std::vector<float> std{1.f, 1.f, 1.f, 1.f};
  static void Declare(ParamDeclarer<NormalizeParam>* d) {
    d->Field("mean", &NormalizeParam::mean)
        .Default({0.f, 0.f, 0.f, 0.f})
        .Describe("Mean per channel (1 or C values).");
    d->Field("std", &NormalizeParam::std)
        .Default({1.f, 1.f, 1.f, 1.f})
        .Describe("Standard deviation per channel (1 or C values).");
  }
};

bool NormalizeShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const auto& p = attrs.Param<NormalizeParam>();
  const std::string node = DescribeNode(attrs);
  AssignShape(attrs, in, 0, (*out)[0], "input 'data'");
  const Shape& s = (*in)[0];
  if (s.ndim() == 0) return false;
  HN_CHECK(s.ndim() == 3 || s.ndim() == 4, kShapeError)
      << node << ": data should be (channels, height, width) or (batch, channels, height, "
      << "width), got " << s;
  const int64_t c = s[s.ndim() == 3 ? 0 : 1];
  HN_CHECK(OneOrThreeChannels(c), kShapeError)
      << node << ": data " << s << " should have 1 or 3 channels";
  if (c != 0) {
    for (const auto* v : {&p.mean, &p.std}) {
      HN_CHECK(v->size() == 1 || static_cast<int64_t>(v->size()) == c, kInvalidArgument)
          << node << ": " << (v == &p.mean ? "mean " : "std ") << internal::ValueText(*v)
          << " must have 1 or " << c << " values for data " << s;
    }
  }
  AssignShape(attrs, out, 0, s, "output");
  return s.IsKnown();
}

void NormalizeCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                      const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<NormalizeParam>();
  const Shape& s = in[0].shape;
  const bool batched = s.ndim() == 4;
  const int64_t batch = batched ? s[0] : 1, channels = s[batched ? 1 : 0];
  const int64_t length = s.Size() / (batch * channels);
  internal::SwitchRealDType(in[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in[0].ptr<const T>();
    T* y = out[0].ptr<T>();
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t c = 0; c < channels; ++c) {
        const float m = p.mean.size() == 1 ? p.mean[0] : p.mean[static_cast<size_t>(c)];
        const float sd = p.std.size() == 1 ? p.std[0] : p.std[static_cast<size_t>(c)];
        const int64_t base = (n * channels + c) * length;
        for (int64_t i = 0; i < length; ++i) y[base + i] = (x[base + i] - m) / sd;
      }
    }
  });
}

// ---- _image_resize ----------------------------------------------------------------------------

struct ResizeParam {
  std::vector<int64_t> size;
  bool keep_ratio = false;
  int interp = 1;
  static void Declare(ParamDeclarer<ResizeParam>* d) {
    d->Field("size", &ResizeParam::size)
        .Default({})
        .Describe(
            "New size (width, height), or one size for both (or for the short side with "
            "keep_ratio).");
    d->Field("keep_ratio", &ResizeParam::keep_ratio)
        .Default(false)
        .Describe("With one size: resize the short side to it and keep the aspect ratio.");
    d->Field("interp", &ResizeParam::interp)
        .Default(1)
        .Describe("OpenCV interpolation: 0 nearest, 1 bilinear (the others are not supported).");
  }
};

void ResizeInit(ResizeParam* p) {
  HN_CHECK(p->size.size() == 1 || p->size.size() == 2, kInvalidArgument)
      << "size must be (width, height) or one size, got " << internal::ValueText(p->size);
  for (int64_t v : p->size)
    HN_CHECK(v > 0, kInvalidArgument)
        << "size must be positive, got " << internal::ValueText(p->size);
}

// Output (height, width) for an input of (h, w), as MXNet's GetHeightAndWidth.
void ResizedSize(const ResizeParam& p, int64_t h, int64_t w, int64_t* oh, int64_t* ow) {
  if (p.size.size() == 2) {
    *ow = p.size[0];
    *oh = p.size[1];
  } else if (!p.keep_ratio) {
    *oh = *ow = p.size[0];
  } else if (h > w) {
    *ow = p.size[0];
    *oh = h * *ow / w;
  } else {
    *oh = p.size[0];
    *ow = w * *oh / h;
  }
}

bool ResizeShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const auto& p = attrs.Param<ResizeParam>();
  HN_CHECK(p.interp == 0 || p.interp == 1, kUnsupported)
      << DescribeNode(attrs) << ": interp " << p.interp << " (OpenCV's "
      << (p.interp == 2   ? "bicubic"
          : p.interp == 3 ? "area"
          : p.interp == 4 ? "Lanczos"
                          : "unknown")
      << " interpolation) is not supported; interp 0 (nearest) and 1 (bilinear) are";
  const Shape& s = (*in)[0];
  if (s.ndim() == 0) return false;
  HN_CHECK(s.ndim() == 3 || s.ndim() == 4, kShapeError)
      << DescribeNode(attrs) << ": image should be (height, width, channels) or (batch, height, "
      << "width, channels), got " << s;
  const size_t h_axis = s.ndim() - 3;
  if (s[h_axis] == 0 || s[h_axis + 1] == 0) return false;
  int64_t oh = 0, ow = 0;
  ResizedSize(p, s[h_axis], s[h_axis + 1], &oh, &ow);
  HN_CHECK(oh >= 1 && ow >= 1, kShapeError)
      << DescribeNode(attrs) << ": keep_ratio makes the output " << oh << " x " << ow
      << " for image " << s;
  Shape o = s;
  o[h_axis] = oh;
  o[h_axis + 1] = ow;
  AssignShape(attrs, out, 0, o, "output");
  return s.IsKnown();
}

bool ResizeType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const bool complete = ElemwiseType(attrs, in, out);
  const DType d = (*in)[0];
  if (d == DType::kUnknown) return complete;
  const bool nearest = attrs.Param<ResizeParam>().interp == 0;
  const bool ok = internal::IsRealDType(d) || d == DType::kUint8 || (nearest && d == DType::kInt32);
  HN_CHECK(ok, kTypeError) << DescribeNode(attrs) << ": input dtype " << DTypeName(d)
                           << " is not supported ("
                           << (nearest ? "float32, float64, uint8 or int32"
                                       : "bilinear: float32, float64 or uint8")
                           << ")";
  return complete;
}

// One axis of OpenCV's bilinear resize: source index and the weight of the next tap.
struct LinearTap {
  int64_t index;
  float frac;
};

std::vector<LinearTap> LinearTaps(int64_t in, int64_t out, bool clamp_frac) {
  const double scale = 1.0 / (static_cast<double>(out) / static_cast<double>(in));
  std::vector<LinearTap> taps(static_cast<size_t>(out));
  for (int64_t d = 0; d < out; ++d) {
    float f = static_cast<float>((static_cast<double>(d) + 0.5) * scale - 0.5);
    int64_t s = static_cast<int64_t>(std::floor(f));
    f -= static_cast<float>(s);
    if (clamp_frac) {
      if (s < 0) f = 0, s = 0;
      if (s >= in - 1) f = 0, s = in - 1;
    }
    taps[static_cast<size_t>(d)] = {s, f};
  }
  return taps;
}

// Bilinear: each source row interpolated horizontally, then two rows blended (float taps).
template <typename T>
void ResizeBilinear(const T* x, int64_t ih, int64_t iw, int64_t c, T* y, int64_t oh, int64_t ow) {
  const std::vector<LinearTap> xt = LinearTaps(iw, ow, true);
  const std::vector<LinearTap> yt = LinearTaps(ih, oh, false);
  std::vector<T> row0(static_cast<size_t>(ow * c)), row1(static_cast<size_t>(ow * c));
  auto hresize = [&](int64_t r, std::vector<T>* dst) {
    const T* src = x + std::min(std::max<int64_t>(r, 0), ih - 1) * iw * c;
    for (int64_t q = 0; q < ow; ++q) {
      const LinearTap& t = xt[static_cast<size_t>(q)];
      const T a0 = static_cast<T>(1.f - t.frac), a1 = static_cast<T>(t.frac);
      for (int64_t k = 0; k < c; ++k) {
        const T v0 = src[t.index * c + k];
        (*dst)[static_cast<size_t>(q * c + k)] =
            t.index + 1 < iw ? v0 * a0 + src[(t.index + 1) * c + k] * a1 : v0 * a0;
      }
    }
  };
  for (int64_t r = 0; r < oh; ++r) {
    const LinearTap& t = yt[static_cast<size_t>(r)];
    hresize(t.index, &row0);
    hresize(t.index + 1, &row1);
    const T b0 = static_cast<T>(1.f - t.frac), b1 = static_cast<T>(t.frac);
    T* dst = y + r * ow * c;
    for (int64_t k = 0; k < ow * c; ++k)
      dst[k] = row0[static_cast<size_t>(k)] * b0 + row1[static_cast<size_t>(k)] * b1;
  }
}

// uint8 bilinear in OpenCV's fixed point: taps scaled by 2048 and rounded to nearest (even),
// integer row sums, then the two rows blended as its SSE2 kernel does (each row sum shifted right
// by 4, multiplied by its weight keeping the high 16 bits, the sum rounded by (v + 2) >> 2 and
// saturated). MXNet's wheel gives these values for every column (checked against it).
void ResizeBilinearU8(const uint8_t* x, int64_t ih, int64_t iw, int64_t c, uint8_t* y, int64_t oh,
                      int64_t ow) {
  constexpr float kOne = 2048.f;
  auto fixed = [](float v) { return static_cast<int32_t>(std::lrint(v)); };
  const std::vector<LinearTap> xt = LinearTaps(iw, ow, true);
  const std::vector<LinearTap> yt = LinearTaps(ih, oh, false);
  std::vector<int32_t> row0(static_cast<size_t>(ow * c)), row1(static_cast<size_t>(ow * c));
  auto hresize = [&](int64_t r, std::vector<int32_t>* dst) {
    const uint8_t* src = x + std::min(std::max<int64_t>(r, 0), ih - 1) * iw * c;
    for (int64_t q = 0; q < ow; ++q) {
      const LinearTap& t = xt[static_cast<size_t>(q)];
      const int32_t a0 = fixed((1.f - t.frac) * kOne), a1 = fixed(t.frac * kOne);
      for (int64_t k = 0; k < c; ++k) {
        const int32_t v0 = src[t.index * c + k];
        (*dst)[static_cast<size_t>(q * c + k)] =
            t.index + 1 < iw ? v0 * a0 + src[(t.index + 1) * c + k] * a1 : v0 * 2048;
      }
    }
  };
  for (int64_t r = 0; r < oh; ++r) {
    const LinearTap& t = yt[static_cast<size_t>(r)];
    hresize(t.index, &row0);
    hresize(t.index + 1, &row1);
    const int32_t b0 = fixed((1.f - t.frac) * kOne), b1 = fixed(t.frac * kOne);
    uint8_t* dst = y + r * ow * c;
    for (int64_t k = 0; k < ow * c; ++k) {
      const int32_t v = (((row0[static_cast<size_t>(k)] >> 4) * b0) >> 16) +
                        (((row1[static_cast<size_t>(k)] >> 4) * b1) >> 16);
      dst[k] = static_cast<uint8_t>(std::min(std::max((v + 2) >> 2, 0), 255));
    }
  }
}

template <typename T>
void ResizeImage(int interp, const T* x, int64_t ih, int64_t iw, int64_t c, T* y, int64_t oh,
                 int64_t ow) {
  if (ih == oh && iw == ow) {
    std::copy(x, x + ih * iw * c, y);
    return;
  }
  if (interp == 0) {
    const double fy = 1.0 / (static_cast<double>(oh) / static_cast<double>(ih));
    const double fx = 1.0 / (static_cast<double>(ow) / static_cast<double>(iw));
    for (int64_t r = 0; r < oh; ++r) {
      const int64_t sr =
          std::min(static_cast<int64_t>(std::floor(static_cast<double>(r) * fy)), ih - 1);
      for (int64_t q = 0; q < ow; ++q) {
        const int64_t sq =
            std::min(static_cast<int64_t>(std::floor(static_cast<double>(q) * fx)), iw - 1);
        std::copy(x + (sr * iw + sq) * c, x + (sr * iw + sq + 1) * c, y + (r * ow + q) * c);
      }
    }
    return;
  }
  if constexpr (std::is_floating_point_v<T>) {
    ResizeBilinear(x, ih, iw, c, y, oh, ow);
  } else if constexpr (std::is_same_v<T, uint8_t>) {
    ResizeBilinearU8(x, ih, iw, c, y, oh, ow);
  }
}

void ResizeCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                   const std::vector<TBlob>& out) {
  const int interp = attrs.Param<ResizeParam>().interp;
  const Shape& s = in[0].shape;
  const Shape& o = out[0].shape;
  const size_t h_axis = s.ndim() - 3;
  const int64_t batch = s.ndim() == 4 ? s[0] : 1;
  const int64_t ih = s[h_axis], iw = s[h_axis + 1], c = s[h_axis + 2];
  const int64_t oh = o[h_axis], ow = o[h_axis + 1];
  SwitchDType(in[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in[0].ptr<const T>();
    T* y = out[0].ptr<T>();
    for (int64_t n = 0; n < batch; ++n)
      ResizeImage<T>(interp, x + n * ih * iw * c, ih, iw, c, y + n * oh * ow * c, oh, ow);
  });
}

// ---- _image_crop ------------------------------------------------------------------------------

struct CropParam {
  int x = 0, y = 0, width = 0, height = 0;
  static void Declare(ParamDeclarer<CropParam>* d) {
    d->Field("x", &CropParam::x).Required().Describe("Left column of the window.");
    d->Field("y", &CropParam::y).Required().Describe("Top row of the window.");
    d->Field("width", &CropParam::width).Required().Describe("Width of the window.");
    d->Field("height", &CropParam::height).Required().Describe("Height of the window.");
  }
};

void CropInit(CropParam* p) {
  HN_CHECK(p->width > 0 && p->height > 0, kInvalidArgument)
      << "width and height must be positive, got " << p->width << " x " << p->height;
  HN_CHECK(p->x >= 0 && p->y >= 0, kInvalidArgument)
      << "x and y must not be negative, got (" << p->x << ", " << p->y << ")";
}

bool CropShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const auto& p = attrs.Param<CropParam>();
  const std::string node = DescribeNode(attrs);
  const Shape& s = (*in)[0];
  if (s.ndim() == 0) return false;
  HN_CHECK((s.ndim() == 3 || s.ndim() == 4) && OneOrThreeChannels(s[s.ndim() - 1]), kShapeError)
      << node << ": image should be (height, width, 1 or 3) or (batch, height, width, 1 or 3), "
      << "got " << s;
  const size_t h_axis = s.ndim() - 3;
  HN_CHECK(s[h_axis + 1] == 0 || p.x + p.width <= s[h_axis + 1], kShapeError)
      << node << ": x + width = " << p.x + p.width << " exceeds the image width of " << s;
  HN_CHECK(s[h_axis] == 0 || p.y + p.height <= s[h_axis], kShapeError)
      << node << ": y + height = " << p.y + p.height << " exceeds the image height of " << s;
  Shape o = s;
  o[h_axis] = p.height;
  o[h_axis + 1] = p.width;
  AssignShape(attrs, out, 0, o, "output");
  return s.IsKnown();
}

void CropCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                 const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<CropParam>();
  const Shape& s = in[0].shape;
  const size_t h_axis = s.ndim() - 3;
  const int64_t batch = s.ndim() == 4 ? s[0] : 1;
  const int64_t ih = s[h_axis], iw = s[h_axis + 1], c = s[h_axis + 2];
  SwitchDType(in[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in[0].ptr<const T>();
    T* y = out[0].ptr<T>();
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t r = 0; r < p.height; ++r) {
        const T* src = x + ((n * ih + p.y + r) * iw + p.x) * c;
        std::copy(src, src + p.width * c, y + ((n * p.height + r) * p.width) * c);
      }
  });
}

// ---- flips and lighting on HWC images with 1 or 3 channels ------------------------------------

bool HwcImageShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  AssignShape(attrs, in, 0, (*out)[0], "input 'data'");
  const Shape& s = (*in)[0];
  if (s.ndim() == 0) return false;
  HN_CHECK(s.ndim() == 3 && OneOrThreeChannels(s[2]), kShapeError)
      << DescribeNode(attrs) << ": image should be (height, width, channels) with 1 or 3 "
      << "channels, got " << s;
  AssignShape(attrs, out, 0, s, "output");
  return s.IsKnown();
}

// Reverses axis 0 (rows) or 1 (columns) of an HWC image; safe in place (pairs are swapped).
template <int kAxis>
void FlipCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                 const std::vector<TBlob>& out) {
  const Shape& s = in[0].shape;
  const int64_t head = kAxis == 0 ? 1 : s[0], mid = s[kAxis];
  const int64_t tail = kAxis == 0 ? s[1] * s[2] : s[2];
  SwitchDType(in[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in[0].ptr<const T>();
    T* y = out[0].ptr<T>();
    for (int64_t i = 0; i < head; ++i) {
      for (int64_t j = 0; j < (mid + 1) / 2; ++j) {
        const int64_t a = (i * mid + j) * tail, b = (i * mid + mid - 1 - j) * tail;
        for (int64_t k = 0; k < tail; ++k) {
          const T t = x[a + k];
          y[a + k] = x[b + k];
          y[b + k] = t;
        }
      }
    }
  });
}

struct AdjustLightingParam {
  std::vector<float> alpha;
  static void Declare(ParamDeclarer<AdjustLightingParam>* d) {
    d->Field("alpha", &AdjustLightingParam::alpha)
        .Required()
        .Describe("Lighting coefficients of the three RGB principal components.");
  }
};

void AdjustLightingInit(AdjustLightingParam* p) {
  HN_CHECK(p->alpha.size() >= 3, kInvalidArgument)
      << "alpha must have 3 values (R, G, B), got " << internal::ValueText(p->alpha);
}

template <typename T>
T SaturateFromFloat(float v) {
  if constexpr (std::is_same_v<T, uint8_t>) {
    return static_cast<uint8_t>(std::min(std::max(v, 0.f), 255.f));
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    // MXNet's conversion is undefined out of range; clamp to the type.
    const float lo = static_cast<float>(std::numeric_limits<T>::lowest());
    const float hi = static_cast<float>(std::numeric_limits<T>::max());
    if (!(v >= lo)) return std::numeric_limits<T>::lowest();
    if (v >= hi) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  }
}

void AdjustLightingCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                           const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<AdjustLightingParam>();
  // AlexNet's eigenvectors times eigenvalues of the ImageNet RGB covariance.
  static const float kEig[3][3] = {
      {static_cast<float>(55.46 * -0.5675), static_cast<float>(4.794 * 0.7192),
       static_cast<float>(1.148 * 0.4009)},
      {static_cast<float>(55.46 * -0.5808), static_cast<float>(4.794 * -0.0045),
       static_cast<float>(1.148 * -0.8140)},
      {static_cast<float>(55.46 * -0.5836), static_cast<float>(4.794 * -0.6948),
       static_cast<float>(1.148 * 0.4203)}};
  const Shape& s = in[0].shape;
  const int64_t length = s[0] * s[1], channels = s[2];
  float pca[3];
  for (int k = 0; k < 3; ++k)
    pca[k] = kEig[k][0] * p.alpha[0] + kEig[k][1] * p.alpha[1] + kEig[k][2] * p.alpha[2];
  SwitchDType(in[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in[0].ptr<const T>();
    T* y = out[0].ptr<T>();
    if (channels == 1) {
      std::copy(x, x + length, y);
      return;
    }
    for (int64_t i = 0; i < length * 3; ++i)
      y[i] = SaturateFromFloat<T>(static_cast<float>(x[i]) + pca[i % 3]);
  });
}

}  // namespace

void RegisterImageOps(OpRegistry* r) {
  r->Register("_image_to_tensor")
      .Describe(
          "Converts an HWC (or NHWC) image of any numeric dtype to a CHW (NCHW) float32 "
          "tensor divided by 255.")
      .AddAlias("_npx__image_to_tensor")
      .SetInputNames({"data"})
      .SetInferShape(ToTensorShape)
      .SetInferType(ToTensorType)
      .SetCompute(ToTensorCompute);

  r->Register("_image_normalize")
      .Describe("Normalizes a CHW (or NCHW) tensor with 1 or 3 channels: (x - mean[c]) / std[c].")
      .AddAlias("_npx__image_normalize")
      .SetParam<NormalizeParam>()
      .SetInputNames({"data"})
      .SetInferShape(NormalizeShape)
      .SetInferType(internal::RealType)
      .SetCompute(NormalizeCompute)
      .SetInplace({{0, 0}});

  r->Register("_image_resize")
      .Describe(
          "Resizes an HWC (or NHWC) image as OpenCV's cv::resize (nearest or bilinear) to "
          "size (width, height), or one size, optionally keeping the aspect ratio.")
      .AddAlias("_npx__image_resize")
      .SetParam<ResizeParam>(ResizeInit)
      .SetInputNames({"data"})
      .SetInferShape(ResizeShape)
      .SetInferType(ResizeType)
      .SetCompute(ResizeCompute);

  r->Register("_image_crop")
      .Describe("Crops the (width, height) window at column x, row y of an HWC (or NHWC) image.")
      .AddAlias("_npx__image_crop")
      .SetParam<CropParam>(CropInit)
      .SetInputNames({"data"})
      .SetInferShape(CropShape)
      .SetInferType(internal::NumericType)
      .SetCompute(CropCompute);

  r->Register("_image_flip_left_right")
      .Describe("Mirrors an HWC image horizontally.")
      .AddAlias("_npx__image_flip_left_right")
      .SetInputNames({"data"})
      .SetInferShape(HwcImageShape)
      .SetInferType(internal::NumericType)
      .SetCompute(FlipCompute<1>)
      .SetInplace({{0, 0}});

  r->Register("_image_flip_top_bottom")
      .Describe("Mirrors an HWC image vertically.")
      .AddAlias("_npx__image_flip_top_bottom")
      .SetInputNames({"data"})
      .SetInferShape(HwcImageShape)
      .SetInferType(internal::NumericType)
      .SetCompute(FlipCompute<0>)
      .SetInplace({{0, 0}});

  r->Register("_image_adjust_lighting")
      .Describe(
          "AlexNet-style PCA lighting of an HWC RGB image: adds eigvec * (alpha * eigval) "
          "to each pixel (saturated for uint8).")
      .AddAlias("_npx__image_adjust_lighting")
      .SetParam<AdjustLightingParam>(AdjustLightingInit)
      .SetInputNames({"data"})
      .SetInferShape(HwcImageShape)
      .SetInferType(internal::NumericType)
      .SetCompute(AdjustLightingCompute)
      .SetInplace({{0, 0}});
}

}  // namespace hybridnet
