// Deformable convolutions of MXNet 1.9.1 (src/operator/contrib/deformable_convolution-inl.h,
// modulated_deformable_convolution-inl.h and their CPU im2col in contrib/nn/), 2-D NCHW,
// float32 and float64:
//  * _contrib_DeformableConvolution (DCN v1): tap (i, j) of output (y, x) reads the input at
//    (y * stride - pad + i * dilate + dy, x * stride - pad + j * dilate + dx), the offsets
//    (dy, dx) taken from channels 2 * (i * kw + j) and + 1 of the offset input (per deformable
//    group of input channels). MXNet's CPU kernel samples only positions inside [0, H) x [0, W)
//    (others read 0) and clamps the bilinear neighbours at the last row and column.
//  * _contrib_ModulatedDeformableConvolution (DCN v2): positions inside (-1, H) x (-1, W) are
//    sampled with out-of-image neighbours as 0, and every tap is multiplied by its mask value.
// The sampled columns feed one GEMM per group (Gemm, blas.h), then the bias is added.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "kernels/blas.h"
#include "ops/vision/vision_common-inl.h"
#include "ops/vision/vision_ops.h"

namespace hybridnet {
namespace {

using internal::AssignShape;

enum class DeformLayout { kNCW, kNCHW, kNCDHW };

const EnumNames<DeformLayout>& DeformLayoutNames() {
  static const EnumNames<DeformLayout> names = {
      {"NCDHW", DeformLayout::kNCDHW}, {"NCHW", DeformLayout::kNCHW}, {"NCW", DeformLayout::kNCW}};
  return names;
}

// The fields both ops share; Count is MXNet's type of the filter and group counts.
template <typename P, typename Count>
void DeclareDeformFields(ParamDeclarer<P>* d, Count default_groups) {
  d->Field("kernel", &P::kernel).Required().Describe("Kernel size (h, w).");
  d->Field("stride", &P::stride).Default({}).Describe("Stride (h, w); default (1, 1).");
  d->Field("dilate", &P::dilate).Default({}).Describe("Dilation (h, w); default (1, 1).");
  d->Field("pad", &P::pad).Default({}).Describe("Zero padding (h, w); default (0, 0).");
  d->Field("num_filter", &P::num_filter).Required().Describe("Output channels.");
  d->Field("num_group", &P::num_group)
      .Default(default_groups)
      .Describe("Groups of input and output channels convolved separately.");
  d->Field("num_deformable_group", &P::num_deformable_group)
      .Default(default_groups)
      .Describe("Groups of input channels sharing one set of offsets.");
  d->Field("workspace", &P::workspace)
      .Default(1024)
      .Min(0)
      .Describe("Accepted for compatibility (MXNet's scratch limit in MB).");
  d->Field("no_bias", &P::no_bias).Default(false).Describe("No bias input.");
  d->Field("layout", &P::layout, DeformLayoutNames())
      .Default(std::nullopt)
      .Describe("Data layout; only NCHW (the default) is supported, as in MXNet.");
}

struct DeformableConvolutionParam {
  std::vector<int64_t> kernel, stride, dilate, pad;
  int num_filter = 0;
  int num_group = 1;
  int num_deformable_group = 1;
  int64_t workspace = 1024;
  bool no_bias = false;
  std::optional<DeformLayout> layout;
  static constexpr bool kModulated = false;
  static void Declare(ParamDeclarer<DeformableConvolutionParam>* d) { DeclareDeformFields(d, 1); }
};

struct ModulatedDeformableConvolutionParam {
  std::vector<int64_t> kernel, stride, dilate, pad;
  uint32_t num_filter = 0;
  uint32_t num_group = 1;
  uint32_t num_deformable_group = 1;
  int64_t workspace = 1024;
  bool no_bias = false;
  uint32_t im2col_step = 64;
  std::optional<DeformLayout> layout;
  static constexpr bool kModulated = true;
  static void Declare(ParamDeclarer<ModulatedDeformableConvolutionParam>* d) {
    DeclareDeformFields(d, 1u);
    d->Field("im2col_step", &ModulatedDeformableConvolutionParam::im2col_step)
        .Default(64u)
        .Describe(
            "Images per column batch in MXNet; the batch must be at most this or a "
            "multiple of it.");
  }
};

template <typename P>
void DeformInit(P* p) {
  if (p->kernel.size() != 2) return;  // refused by shape inference (kUnsupported)
  HN_CHECK(!p->layout || *p->layout == DeformLayout::kNCHW, kInvalidArgument)
      << "layout must be NCHW for a 2-D kernel";
  if (p->stride.empty()) p->stride = {1, 1};
  if (p->dilate.empty()) p->dilate = {1, 1};
  if (p->pad.empty()) p->pad = {0, 0};
  for (const auto* v : {&p->stride, &p->dilate, &p->pad})
    HN_CHECK(v->size() == 2, kInvalidArgument)
        << "stride, dilate and pad must have 2 values like kernel, got " << internal::ValueText(*v);
  for (int i = 0; i < 2; ++i) {
    HN_CHECK(p->kernel[i] > 0 && p->stride[i] > 0 && p->dilate[i] > 0 && p->pad[i] >= 0,
             kInvalidArgument)
        << "kernel, stride and dilate must be positive and pad non-negative, got kernel "
        << internal::ValueText(p->kernel) << ", stride " << internal::ValueText(p->stride)
        << ", dilate " << internal::ValueText(p->dilate) << ", pad " << internal::ValueText(p->pad);
  }
  HN_CHECK(p->num_filter >= 1 && p->num_group >= 1 && p->num_deformable_group >= 1,
           kInvalidArgument)
      << "num_filter, num_group and num_deformable_group must be positive";
  if constexpr (P::kModulated) {
    HN_CHECK(p->im2col_step >= 1, kInvalidArgument) << "im2col_step must be positive";
  }
}

template <typename P>
std::vector<std::string> DeformInputNames(const NodeAttrs& attrs) {
  std::vector<std::string> names = {"data", "offset"};
  if (P::kModulated) names.push_back("mask");
  names.push_back("weight");
  if (!attrs.Param<P>().no_bias) names.push_back("bias");
  return names;
}

template <typename P>
bool DeformShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const auto& p = attrs.Param<P>();
  const std::string node = DescribeNode(attrs);
  HN_CHECK(p.kernel.size() == 2, kUnsupported)
      << node << ": only 2-D deformable convolution exists (kernel (h, w)), got kernel "
      << internal::ValueText(p.kernel);
  const std::vector<std::string> names = DeformInputNames<P>(attrs);
  const size_t offset_i = 1, mask_i = 2, weight_i = P::kModulated ? 3 : 2;
  for (size_t i = 0; i < names.size() && names[i] != "bias"; ++i) {
    HN_CHECK((*in)[i].ndim() == 0 || (*in)[i].ndim() == 4, kShapeError)
        << node << ": " << names[i] << " should be 4-D, got " << (*in)[i];
  }
  const int64_t kh = p.kernel[0], kw = p.kernel[1], dg = p.num_deformable_group;
  const int64_t filters = p.num_filter, groups = p.num_group;
  const Shape d = (*in)[0];
  if (d.ndim() == 0) return false;
  const int64_t batch = d[0], channels = d[1];
  if (channels != 0) {
    HN_CHECK(channels % groups == 0 && channels % dg == 0, kShapeError)
        << node << ": data channels " << channels << " must divide by num_group " << groups
        << " and num_deformable_group " << dg;
  }
  HN_CHECK(filters % groups == 0, kInvalidArgument)
      << node << ": num_filter " << filters << " must divide by num_group " << groups;
  if (P::kModulated) {
    HN_CHECK(filters % dg == 0, kInvalidArgument)
        << node << ": num_filter " << filters << " must divide by num_deformable_group " << dg;
  }
  AssignShape(attrs, in, weight_i, Shape{filters, channels / groups, kh, kw}, "input 'weight'");
  if (!p.no_bias) AssignShape(attrs, in, weight_i + 1, Shape{filters}, "input 'bias'");
  if (d[2] == 0 || d[3] == 0) return false;
  int64_t osize[2];
  for (int a = 0; a < 2; ++a) {
    const int64_t extent = p.dilate[a] * (p.kernel[a] - 1) + 1;
    HN_CHECK(p.kernel[a] <= d[2 + a] + 2 * p.pad[a] && extent <= d[2 + a] + 2 * p.pad[a],
             kShapeError)
        << node << ": kernel " << internal::ValueText(p.kernel) << " (dilate "
        << internal::ValueText(p.dilate) << ") exceeds data " << d << " padded by "
        << internal::ValueText(p.pad);
    osize[a] = (d[2 + a] + 2 * p.pad[a] - extent) / p.stride[a] + 1;
  }
  AssignShape(attrs, in, offset_i, Shape{batch, 2 * dg * kh * kw, osize[0], osize[1]},
              "input 'offset' (2 * num_deformable_group * kh * kw offsets per output position)");
  if constexpr (P::kModulated) {
    AssignShape(attrs, in, mask_i, Shape{batch, dg * kh * kw, osize[0], osize[1]},
                "input 'mask' (num_deformable_group * kh * kw per output position)");
    const int64_t step = p.im2col_step;
    HN_CHECK(batch == 0 || batch <= step || batch % step == 0, kShapeError)
        << node << ": the batch " << batch << " must be at most im2col_step " << step
        << " or a multiple of it";
  }
  AssignShape(attrs, out, 0, Shape{batch, filters, osize[0], osize[1]}, "output");
  internal::CheckWorkLimit(attrs,
                           static_cast<double>(channels) * static_cast<double>(kh * kw) *
                               static_cast<double>(osize[0]) * static_cast<double>(osize[1]),
                           "the sampled columns (channels * kernel taps * output positions)");
  return internal::AllKnown(*in, *out);
}

struct DeformGeom {
  int64_t channels, height, width, kh, kw, ph, pw, sh, sw, dh, dw, dg, oh, ow;
};

// DCN v1 (CPU): only positions inside the image, neighbours clamped at the far edge.
template <typename T>
T SampleV1(const T* im, int64_t height, int64_t width, T h, T w) {
  int64_t h_low = static_cast<int64_t>(std::floor(h)), w_low = static_cast<int64_t>(std::floor(w));
  int64_t h_high, w_high;
  if (h_low >= height - 1) {
    h_high = height - 1;
    h = static_cast<T>(h_low);
  } else {
    h_high = h_low + 1;
  }
  if (w_low >= width - 1) {
    w_high = width - 1;
    w = static_cast<T>(w_low);
  } else {
    w_high = w_low + 1;
  }
  const T lh = h - static_cast<T>(h_low), lw = w - static_cast<T>(w_low);
  const T hh = 1 - lh, hw = 1 - lw;
  const T v1 = im[h_low * width + w_low], v2 = im[h_low * width + w_high];
  const T v3 = im[h_high * width + w_low], v4 = im[h_high * width + w_high];
  return hh * hw * v1 + hh * lw * v2 + lh * hw * v3 + lh * lw * v4;
}

// DCN v2 (CPU): neighbours outside the image read 0.
template <typename T>
T SampleV2(const T* im, int64_t height, int64_t width, T h, T w) {
  const int64_t h_low = static_cast<int64_t>(std::floor(h)),
                w_low = static_cast<int64_t>(std::floor(w));
  const int64_t h_high = h_low + 1, w_high = w_low + 1;
  const T lh = h - static_cast<T>(h_low), lw = w - static_cast<T>(w_low);
  const T hh = 1 - lh, hw = 1 - lw;
  const T v1 = (h_low >= 0 && w_low >= 0) ? im[h_low * width + w_low] : T(0);
  const T v2 = (h_low >= 0 && w_high <= width - 1) ? im[h_low * width + w_high] : T(0);
  const T v3 = (h_high <= height - 1 && w_low >= 0) ? im[h_high * width + w_low] : T(0);
  const T v4 = (h_high <= height - 1 && w_high <= width - 1) ? im[h_high * width + w_high] : T(0);
  return hh * hw * v1 + hh * lw * v2 + lh * hw * v3 + lh * lw * v4;
}

// Columns (channels * kh * kw) x (oh * ow) of one image.
template <typename T>
void DeformIm2Col(const DeformGeom& g, const T* im, const T* offset, const T* mask, T* col) {
  const int64_t positions = g.oh * g.ow, taps = g.kh * g.kw;
  const int64_t per_group = g.channels / g.dg;
  for (int64_t c = 0; c < g.channels; ++c) {
    const int64_t group = c / per_group;
    const T* off = offset + group * 2 * taps * positions;
    const T* msk = mask != nullptr ? mask + group * taps * positions : nullptr;
    const T* plane = im + c * g.height * g.width;
    for (int64_t i = 0; i < g.kh; ++i) {
      for (int64_t j = 0; j < g.kw; ++j) {
        const int64_t tap = i * g.kw + j;
        const T* off_h = off + 2 * tap * positions;
        const T* off_w = off_h + positions;
        T* dst = col + (c * taps + tap) * positions;
        for (int64_t y = 0; y < g.oh; ++y) {
          const int64_t row = y * g.sh - g.ph + i * g.dh;
          for (int64_t x = 0; x < g.ow; ++x) {
            const int64_t q = y * g.ow + x;
            const int64_t column = x * g.sw - g.pw + j * g.dw;
            const T h = static_cast<T>(row) + off_h[q];
            const T w = static_cast<T>(column) + off_w[q];
            T v = 0;
            if (msk == nullptr) {
              if (h >= 0 && w >= 0 && h < static_cast<T>(g.height) && w < static_cast<T>(g.width))
                v = SampleV1(plane, g.height, g.width, h, w);
            } else {
              if (h > -1 && w > -1 && h < static_cast<T>(g.height) && w < static_cast<T>(g.width))
                v = SampleV2(plane, g.height, g.width, h, w);
              v *= msk[tap * positions + q];
            }
            dst[q] = v;
          }
        }
      }
    }
  }
}

template <typename P>
void DeformCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                   const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<P>();
  const Shape& ds = in[0].shape;
  const Shape& os = out[0].shape;
  DeformGeom g{ds[1],       ds[2],       ds[3],       p.kernel[0],
               p.kernel[1], p.pad[0],    p.pad[1],    p.stride[0],
               p.stride[1], p.dilate[0], p.dilate[1], static_cast<int64_t>(p.num_deformable_group),
               os[2],       os[3]};
  const size_t weight_i = P::kModulated ? 3 : 2;
  const int64_t batch = ds[0], filters = os[1], groups = p.num_group;
  const int64_t positions = g.oh * g.ow, taps = g.kh * g.kw;
  const int64_t k = g.channels / groups * taps, m = filters / groups;
  internal::SwitchRealDType(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<T> col(static_cast<size_t>(g.channels * taps * positions));
    const T* data = in[0].ptr<const T>();
    const T* offset = in[1].ptr<const T>();
    const T* mask = P::kModulated ? in[2].ptr<const T>() : nullptr;
    const T* weight = in[weight_i].ptr<const T>();
    const T* bias = p.no_bias ? nullptr : in[weight_i + 1].ptr<const T>();
    T* y = out[0].ptr<T>();
    const int64_t offset_size = 2 * g.dg * taps * positions;
    for (int64_t n = 0; n < batch; ++n) {
      DeformIm2Col(g, data + n * g.channels * g.height * g.width, offset + n * offset_size,
                   mask != nullptr ? mask + n * g.dg * taps * positions : nullptr, col.data());
      T* yn = y + n * filters * positions;
      for (int64_t gi = 0; gi < groups; ++gi)
        internal::Gemm(false, false, m, positions, k, T{1}, weight + gi * m * k, k,
                       col.data() + gi * k * positions, positions, T{0}, yn + gi * m * positions,
                       positions);
      if (bias != nullptr)
        for (int64_t f = 0; f < filters; ++f)
          for (int64_t q = 0; q < positions; ++q) yn[f * positions + q] += bias[f];
    }
  });
}

}  // namespace

void RegisterDeformableConvolutionOps(OpRegistry* r) {
  r->Register("_contrib_DeformableConvolution")
      .Describe(
          "Deformable convolution (DCN v1): a 2-D convolution whose taps are moved by "
          "learned per-position offsets and sampled bilinearly.")
      .SetParam<DeformableConvolutionParam>(DeformInit<DeformableConvolutionParam>)
      .SetInputNames(DeformInputNames<DeformableConvolutionParam>)
      .SetInferShape(DeformShape<DeformableConvolutionParam>)
      .SetInferType(internal::RealType)
      .SetCompute(DeformCompute<DeformableConvolutionParam>);

  r->Register("_contrib_ModulatedDeformableConvolution")
      .Describe(
          "Modulated deformable convolution (DCN v2): deformable taps, each multiplied by "
          "a learned mask value.")
      .SetParam<ModulatedDeformableConvolutionParam>(
          DeformInit<ModulatedDeformableConvolutionParam>)
      .SetInputNames(DeformInputNames<ModulatedDeformableConvolutionParam>)
      .SetInferShape(DeformShape<ModulatedDeformableConvolutionParam>)
      .SetInferType(internal::RealType)
      .SetCompute(DeformCompute<ModulatedDeformableConvolutionParam>);
}

}  // namespace hybridnet
