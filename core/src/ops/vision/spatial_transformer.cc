// Sampling grids and bilinear sampling of MXNet 1.9.1 (grid_generator-inl.h,
// bilinear_sampler.cc, spatial_transformer.cc, CPU), float32 and float64:
//  * GridGenerator affine: theta (batch, 6) times the normalized target grid -> (batch, 2, h, w)
//    of (x, y) in [-1, 1]; warp: flow (batch, 2, h, w) plus pixel coordinates, normalized by
//    ((w - 1) / 2, (h - 1) / 2) minus 1.
//  * BilinearSampler: samples data (batch, c, H, W) at grid (batch, 2, h, w) = normalized (x, y);
//    the four neighbours outside the image count as zero, so a grid outside [-1, 1] fades to 0.
//  * SpatialTransformer: an affine GridGenerator to target_shape followed by the sampler.
// MXNet's extra outputs (the grids it keeps for backward) are hidden.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "ops/vision/vision_common-inl.h"
#include "ops/vision/vision_ops.h"

namespace hybridnet {
namespace {

using internal::AssignShape;
using internal::RealType;
using internal::SwitchRealDType;

// MXNet's bilinear sample of one (H, W) plane at normalized (gx, gy); the weight arithmetic
// mixes double as MXNet's does.
template <typename T>
T SamplePlane(const T* plane, int64_t in_h, int64_t in_w, T gx, T gy) {
  const T y_real = (gy + 1) * static_cast<T>(in_h - 1) / 2;
  const T x_real = (gx + 1) * static_cast<T>(in_w - 1) / 2;
  // Far outside the image every neighbour is zero; clamping keeps the index conversion defined
  // (MXNet converts to int directly).
  auto corner = [](T v) {
    const double f = std::floor(static_cast<double>(v));
    if (std::isnan(f)) return int64_t{-2};
    return static_cast<int64_t>(std::max(-1e12, std::min(1e12, f)));
  };
  const int64_t top = corner(y_real), left = corner(x_real);
  const T wy = static_cast<T>(1.0 - (y_real - static_cast<T>(top)));
  const T wx = static_cast<T>(1.0 - (x_real - static_cast<T>(left)));
  auto at = [&](int64_t y, int64_t x) {
    return (y >= 0 && y <= in_h - 1 && x >= 0 && x <= in_w - 1) ? plane[y * in_w + x] : T(0);
  };
  return static_cast<T>(at(top, left) * wy * wx + at(top, left + 1) * wy * (1.0 - wx) +
                        at(top + 1, left) * (1.0 - wy) * wx +
                        at(top + 1, left + 1) * (1.0 - wy) * (1.0 - wx));
}

// out (n, c, h, w) from data (n, c, H, W) and grid x at gx[p], y at gy[p] per sample n.
template <typename T>
void SampleImages(const T* data, const Shape& ds, const T* grid, int64_t grid_sample_stride,
                  int64_t h, int64_t w, T* out) {
  const int64_t batch = ds[0], channels = ds[1], in_h = ds[2], in_w = ds[3];
  const int64_t positions = h * w;
  for (int64_t n = 0; n < batch; ++n) {
    const T* gx = grid + n * grid_sample_stride;
    const T* gy = gx + positions;
    for (int64_t c = 0; c < channels; ++c) {
      const T* plane = data + (n * channels + c) * in_h * in_w;
      T* o = out + (n * channels + c) * positions;
      for (int64_t p = 0; p < positions; ++p) o[p] = SamplePlane(plane, in_h, in_w, gx[p], gy[p]);
    }
  }
}

// ---- GridGenerator ----------------------------------------------------------------------------

enum class TransformType { kAffine, kWarp };

struct GridGeneratorParam {
  TransformType transform_type = TransformType::kAffine;
  std::vector<int64_t> target_shape{0, 0};
  static void Declare(ParamDeclarer<GridGeneratorParam>* d) {
    d->Field("transform_type", &GridGeneratorParam::transform_type,
             {{"affine", TransformType::kAffine}, {"warp", TransformType::kWarp}})
        .Required()
        .Describe("affine: data is theta (batch, 6); warp: data is a flow (batch, 2, h, w).");
    d->Field("target_shape", &GridGeneratorParam::target_shape)
        .Default({0, 0})
        .Describe("Output grid (height, width) for affine; ignored for warp.");
  }
};

void GridGeneratorInit(GridGeneratorParam* p) {
  if (p->transform_type == TransformType::kAffine) {
    HN_CHECK(p->target_shape.size() == 2 && p->target_shape[0] > 0 && p->target_shape[1] > 0,
             kInvalidArgument)
        << "affine needs a positive target_shape (height, width), got "
        << internal::ValueText(p->target_shape);
  }
}

bool GridGeneratorShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const auto& p = attrs.Param<GridGeneratorParam>();
  const std::string node = DescribeNode(attrs);
  const Shape& d = (*in)[0];
  if (p.transform_type == TransformType::kAffine) {
    HN_CHECK(d.ndim() == 0 || (d.ndim() == 2 && (d[1] == 6 || d[1] == 0)), kShapeError)
        << node << ": affine data should be theta (batch, 6), got " << d;
    const int64_t batch = d.ndim() == 2 ? d[0] : ((*out)[0].ndim() == 4 ? (*out)[0][0] : 0);
    AssignShape(attrs, in, 0, Shape{batch, 6}, "input 'data'");
    AssignShape(attrs, out, 0, Shape{batch, 2, p.target_shape[0], p.target_shape[1]}, "output");
  } else {
    AssignShape(attrs, in, 0, (*out)[0], "input 'data'");
    HN_CHECK(d.ndim() == 0 || (d.ndim() == 4 && (d[1] == 2 || d[1] == 0)), kShapeError)
        << node << ": warp data should be a flow (batch, 2, height, width), got " << d;
    if (d.ndim() == 4) {
      AssignShape(attrs, in, 0, Shape{0, 2, 0, 0}, "input 'data'");
      AssignShape(attrs, out, 0, (*in)[0], "output");
    }
  }
  return internal::AllKnown(*in, *out);
}

template <typename T>
void AffineGrid(const T* theta, int64_t batch, int64_t h, int64_t w, T* out) {
  const T step_x = static_cast<T>(2.0 / static_cast<double>(w - 1));
  const T step_y = static_cast<T>(2.0 / static_cast<double>(h - 1));
  for (int64_t n = 0; n < batch; ++n) {
    const T* t = theta + n * 6;
    T* ox = out + n * 2 * h * w;
    T* oy = ox + h * w;
    for (int64_t i = 0; i < h; ++i) {
      const T y = T(-1) + static_cast<T>(i) * step_y;
      for (int64_t j = 0; j < w; ++j) {
        const T x = T(-1) + static_cast<T>(j) * step_x;
        ox[i * w + j] = t[0] * x + t[1] * y + t[2];
        oy[i * w + j] = t[3] * x + t[4] * y + t[5];
      }
    }
  }
}

void GridGeneratorCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                          const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<GridGeneratorParam>();
  const Shape& os = out[0].shape;
  SwitchRealDType(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (p.transform_type == TransformType::kAffine) {
      AffineGrid<T>(in[0].ptr<const T>(), os[0], os[2], os[3], out[0].ptr<T>());
      return;
    }
    const int64_t h = os[2], w = os[3];
    const T half_w = static_cast<T>((static_cast<T>(w) - 1.0) / 2.0);
    const T half_h = static_cast<T>((static_cast<T>(h) - 1.0) / 2.0);
    const T* flow = in[0].ptr<const T>();
    T* y = out[0].ptr<T>();
    for (int64_t n = 0; n < os[0]; ++n) {
      for (int64_t i = 0; i < h; ++i) {
        for (int64_t j = 0; j < w; ++j) {
          const int64_t px = ((n * 2) * h + i) * w + j, py = px + h * w;
          y[px] = (flow[px] + static_cast<T>(j)) / half_w - T(1);
          y[py] = (flow[py] + static_cast<T>(i)) / half_h - T(1);
        }
      }
    }
  });
}

// ---- BilinearSampler --------------------------------------------------------------------------

struct BilinearSamplerParam {
  std::optional<bool> cudnn_off;
  static void Declare(ParamDeclarer<BilinearSamplerParam>* d) {
    d->Field("cudnn_off", &BilinearSamplerParam::cudnn_off)
        .Default(std::nullopt)
        .Describe("Accepted for compatibility (a GPU option).");
  }
};

bool BilinearSamplerShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const std::string node = DescribeNode(attrs);
  const Shape& d = (*in)[0];
  const Shape& g = (*in)[1];
  HN_CHECK(d.ndim() == 0 || d.ndim() == 4, kShapeError)
      << node << ": data should be (batch, channel, height, width), got " << d;
  HN_CHECK(g.ndim() == 0 || (g.ndim() == 4 && (g[1] == 2 || g[1] == 0)), kShapeError)
      << node << ": grid should be (batch, 2, height, width) of normalized (x, y), got " << g;
  if (d.ndim() == 4) AssignShape(attrs, in, 1, Shape{d[0], 2, 0, 0}, "input 'grid'");
  if (g.ndim() == 4) AssignShape(attrs, in, 0, Shape{g[0], 0, 0, 0}, "input 'data'");
  const Shape& dd = (*in)[0];
  const Shape& gg = (*in)[1];
  if (dd.ndim() == 4 && gg.ndim() == 4)
    AssignShape(attrs, out, 0, Shape{dd[0], dd[1], gg[2], gg[3]}, "output");
  return internal::AllKnown(*in, *out);
}

void BilinearSamplerCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                            const std::vector<TBlob>& out) {
  const Shape& os = out[0].shape;
  SwitchRealDType(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    SampleImages<T>(in[0].ptr<const T>(), in[0].shape, in[1].ptr<const T>(), 2 * os[2] * os[3],
                    os[2], os[3], out[0].ptr<T>());
  });
}

// ---- SpatialTransformer -----------------------------------------------------------------------

enum class StTransform { kAffine };
enum class StSampler { kBilinear };

struct SpatialTransformerParam {
  std::vector<int64_t> target_shape{0, 0};
  StTransform transform_type = StTransform::kAffine;
  StSampler sampler_type = StSampler::kBilinear;
  std::optional<bool> cudnn_off;
  static void Declare(ParamDeclarer<SpatialTransformerParam>* d) {
    d->Field("target_shape", &SpatialTransformerParam::target_shape)
        .Default({0, 0})
        .Describe("Output (height, width).");
    d->Field("transform_type", &SpatialTransformerParam::transform_type,
             {{"affine", StTransform::kAffine}})
        .Required()
        .Describe("Transformation of the target grid (affine only).");
    d->Field("sampler_type", &SpatialTransformerParam::sampler_type,
             {{"bilinear", StSampler::kBilinear}})
        .Required()
        .Describe("Sampler (bilinear only).");
    d->Field("cudnn_off", &SpatialTransformerParam::cudnn_off)
        .Default(std::nullopt)
        .Describe("Accepted for compatibility (a GPU option).");
  }
};

void SpatialTransformerInit(SpatialTransformerParam* p) {
  HN_CHECK(p->target_shape.size() == 2 && p->target_shape[0] > 0 && p->target_shape[1] > 0,
           kInvalidArgument)
      << "target_shape must be a positive (height, width), got "
      << internal::ValueText(p->target_shape);
}

bool SpatialTransformerShape(const NodeAttrs& attrs, std::vector<Shape>* in,
                             std::vector<Shape>* out) {
  const auto& p = attrs.Param<SpatialTransformerParam>();
  const std::string node = DescribeNode(attrs);
  const Shape& d = (*in)[0];
  const Shape& l = (*in)[1];
  HN_CHECK(d.ndim() == 0 || d.ndim() == 4, kShapeError)
      << node << ": data should be (batch, channel, height, width), got " << d;
  HN_CHECK(l.ndim() == 0 || (l.ndim() == 2 && (l[1] == 6 || l[1] == 0)), kShapeError)
      << node << ": loc should be affine parameters (batch, 6), got " << l;
  if (d.ndim() == 4) AssignShape(attrs, in, 1, Shape{d[0], 6}, "input 'loc'");
  if (l.ndim() == 2) AssignShape(attrs, in, 0, Shape{l[0], 0, 0, 0}, "input 'data'");
  if ((*in)[0].ndim() == 4) {
    const Shape& dd = (*in)[0];
    AssignShape(attrs, out, 0, Shape{dd[0], dd[1], p.target_shape[0], p.target_shape[1]}, "output");
  }
  return internal::AllKnown(*in, *out);
}

template <typename T>
void SpatialTransformerKernel(const SpatialTransformerParam& p, const TBlob& data, const TBlob& loc,
                              const TBlob& out) {
  const int64_t h = p.target_shape[0], w = p.target_shape[1], batch = data.shape[0];
  // The target grid as MXNet builds it here (in double, then T).
  std::vector<T> gx(static_cast<size_t>(h * w)), gy(static_cast<size_t>(h * w));
  for (int64_t i = 0; i < h * w; ++i) {
    gx[static_cast<size_t>(i)] =
        static_cast<T>(-1.0 + static_cast<double>(i % w) * 2.0 / static_cast<double>(w - 1));
    gy[static_cast<size_t>(i)] =
        static_cast<T>(-1.0 + static_cast<double>(i / w) * 2.0 / static_cast<double>(h - 1));
  }
  std::vector<T> grid(static_cast<size_t>(batch * 2 * h * w));
  const T* theta = loc.ptr<const T>();
  for (int64_t n = 0; n < batch; ++n) {
    const T* t = theta + n * 6;
    T* ox = grid.data() + n * 2 * h * w;
    T* oy = ox + h * w;
    for (int64_t i = 0; i < h * w; ++i) {
      const T x = gx[static_cast<size_t>(i)], y = gy[static_cast<size_t>(i)];
      ox[i] = t[0] * x + t[1] * y + t[2];
      oy[i] = t[3] * x + t[4] * y + t[5];
    }
  }
  SampleImages<T>(data.ptr<const T>(), data.shape, grid.data(), 2 * h * w, h, w, out.ptr<T>());
}

void SpatialTransformerCompute(const OpContext&, const NodeAttrs& attrs,
                               const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<SpatialTransformerParam>();
  SwitchRealDType(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    SpatialTransformerKernel<T>(p, in[0], in[1], out[0]);
  });
}

}  // namespace

void RegisterSpatialTransformerOps(OpRegistry* r) {
  r->Register("GridGenerator")
      .Describe(
          "Sampling grid (batch, 2, h, w) of normalized (x, y) for BilinearSampler, from "
          "an affine theta (batch, 6) and target_shape, or from an optical flow.")
      .SetParam<GridGeneratorParam>(GridGeneratorInit)
      .SetInputNames({"data"})
      .SetNumTotalOutputs(2)  // + MXNet's hidden target grid
      .SetInferShape(GridGeneratorShape)
      .SetInferType(RealType)
      .SetCompute(GridGeneratorCompute);

  r->Register("BilinearSampler")
      .Describe(
          "Bilinear sampling of data (batch, c, H, W) at grid (batch, 2, h, w) of "
          "normalized (x, y) in [-1, 1]; outside the image counts as zero.")
      .SetParam<BilinearSamplerParam>()
      .SetInputNames({"data", "grid"})
      .SetNumTotalOutputs(2)  // + MXNet's hidden copy of the grid
      .SetInferShape(BilinearSamplerShape)
      .SetInferType(RealType)
      .SetCompute(BilinearSamplerCompute);

  r->Register("SpatialTransformer")
      .Describe(
          "Spatial transformer: samples data bilinearly on the affine transform loc "
          "(batch, 6) of a target_shape grid.")
      .SetParam<SpatialTransformerParam>(SpatialTransformerInit)
      .SetInputNames({"data", "loc"})
      .SetNumTotalOutputs(3)  // + MXNet's hidden grids
      .SetInferShape(SpatialTransformerShape)
      .SetInferType(RealType)
      .SetCompute(SpatialTransformerCompute);
}

}  // namespace hybridnet
