// Sampling grids and bilinear sampling of MXNet 1.9.1 (grid_generator-inl.h,
// bilinear_sampler.cc, spatial_transformer.cc, CPU), float32 and float64:
//  * GridGenerator affine: theta (batch, 6) times the normalized target grid -> (batch, 2, h, w)
//    of (x, y) in [-1, 1]; warp: flow (batch, 2, h, w) plus pixel coordinates, normalized by
//    ((w - 1) / 2, (h - 1) / 2) minus 1.
//  * BilinearSampler: samples data (batch, c, H, W) at grid (batch, 2, h, w) = normalized (x, y);
//    the four neighbours outside the image count as zero, so a grid outside [-1, 1] fades to 0.
//  * SpatialTransformer: an affine GridGenerator to target_shape followed by the sampler.
// MXNet's extra outputs (the grids it keeps for backward) are hidden.
// The gradients are MXNet's, one backward op each: the sampler's to data (the bilinear weights)
// and to the grid (the derivative of the weights, scaled to normalized coordinates), the affine
// grid's to theta (the grid gradient times the target grid's (x, y, 1)), the warp grid's to the
// flow (divided by the half sizes).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "ops/gradient_util.h"
#include "ops/vision/vision_common-inl.h"
#include "ops/vision/vision_ops.h"

namespace hybridnet {
namespace {

using internal::AssignShape;
using internal::RealType;
using internal::SwitchRealDType;

// floor(v) as the index of a sample's top or left neighbour. Far outside the image every
// neighbour is zero; clamping keeps the index conversion defined (MXNet converts to int
// directly).
template <typename T>
int64_t Corner(T v) {
  const double f = std::floor(static_cast<double>(v));
  if (std::isnan(f)) return int64_t{-2};
  return static_cast<int64_t>(std::max(-1e12, std::min(1e12, f)));
}

// MXNet's bilinear sample of one (H, W) plane at normalized (gx, gy); the weight arithmetic
// mixes double as MXNet's does.
template <typename T>
T SamplePlane(const T* plane, int64_t in_h, int64_t in_w, T gx, T gy) {
  const T y_real = (gy + 1) * static_cast<T>(in_h - 1) / 2;
  const T x_real = (gx + 1) * static_cast<T>(in_w - 1) / 2;
  const int64_t top = Corner(y_real), left = Corner(x_real);
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

// The gradient of SampleImages (MXNet's BilinearSamplerBackward): dx (zeroed) gets each output
// gradient times the weights of the neighbours inside the image; dgrid (n, 2, h, w) the
// derivative of the sample along x and y, in normalized units. Positions, then channels, in order.
template <typename T>
void SampleImagesBackward(const T* data, const Shape& ds, const T* grid, int64_t grid_sample_stride,
                          int64_t h, int64_t w, const T* dy, T* dx, T* dgrid) {
  const int64_t batch = ds[0], channels = ds[1], in_h = ds[2], in_w = ds[3];
  const int64_t positions = h * w, plane = in_h * in_w;
  std::fill(dx, dx + ds.Size(), T(0));
  for (int64_t n = 0; n < batch; ++n) {
    const T* gx = grid + n * grid_sample_stride;
    const T* gy = gx + positions;
    T* dgx = dgrid + n * 2 * positions;
    T* dgy = dgx + positions;
    for (int64_t p = 0; p < positions; ++p) {
      const T y_real = (gy[p] + 1) * static_cast<T>(in_h - 1) / 2;
      const T x_real = (gx[p] + 1) * static_cast<T>(in_w - 1) / 2;
      const int64_t top = Corner(y_real), left = Corner(x_real);
      const T wy = static_cast<T>(1.0 - (y_real - static_cast<T>(top)));
      const T wx = static_cast<T>(1.0 - (x_real - static_cast<T>(left)));
      auto inside = [&](int64_t y, int64_t x) {
        return y >= 0 && y <= in_h - 1 && x >= 0 && x <= in_w - 1;
      };
      T gw_y = 0, gw_x = 0;
      for (int64_t c = 0; c < channels; ++c) {
        const T g = dy[(n * channels + c) * positions + p];
        const T* image = data + (n * channels + c) * plane;
        T* d = dx + (n * channels + c) * plane;
        T tl = 0, tr = 0, bl = 0, br = 0;
        if (inside(top, left)) {
          d[top * in_w + left] += g * wy * wx;
          tl = image[top * in_w + left];
        }
        if (inside(top, left + 1)) {
          d[top * in_w + left + 1] = static_cast<T>(d[top * in_w + left + 1] + g * wy * (1.0 - wx));
          tr = image[top * in_w + left + 1];
        }
        if (inside(top + 1, left)) {
          d[(top + 1) * in_w + left] =
              static_cast<T>(d[(top + 1) * in_w + left] + g * (1.0 - wy) * wx);
          bl = image[(top + 1) * in_w + left];
        }
        if (inside(top + 1, left + 1)) {
          d[(top + 1) * in_w + left + 1] =
              static_cast<T>(d[(top + 1) * in_w + left + 1] + g * (1.0 - wy) * (1.0 - wx));
          br = image[(top + 1) * in_w + left + 1];
        }
        gw_y -= g * (tr - br + (tl - tr - bl + br) * wx);
        gw_x -= g * (bl - br + (tl - tr - bl + br) * wy);
      }
      dgy[p] = gw_y * static_cast<T>(in_h - 1) / 2;
      dgx[p] = gw_x * static_cast<T>(in_w - 1) / 2;
    }
  }
}

// The gradient of theta (batch, 6) of the affine grid (batch, 2, positions) over the target
// points (tx, ty): sums of dgrid times (x, y, 1), in double.
template <typename T>
void AffineGridBackward(const T* dgrid, const std::vector<T>& tx, const std::vector<T>& ty,
                        int64_t batch, T* dtheta) {
  const int64_t positions = static_cast<int64_t>(tx.size());
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t k = 0; k < 2; ++k) {
      const T* g = dgrid + (n * 2 + k) * positions;
      double sx = 0, sy = 0, s1 = 0;
      for (int64_t p = 0; p < positions; ++p) {
        sx += static_cast<double>(g[p]) * static_cast<double>(tx[static_cast<size_t>(p)]);
        sy += static_cast<double>(g[p]) * static_cast<double>(ty[static_cast<size_t>(p)]);
        s1 += static_cast<double>(g[p]);
      }
      T* d = dtheta + n * 6 + k * 3;
      d[0] = static_cast<T>(sx);
      d[1] = static_cast<T>(sy);
      d[2] = static_cast<T>(s1);
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

// GridGenerator's target points (x, y) in [-1, 1], row-major, as MXNet computes them.
template <typename T>
void AffineTargetPoints(int64_t h, int64_t w, std::vector<T>* tx, std::vector<T>* ty) {
  const T step_x = static_cast<T>(2.0 / static_cast<double>(w - 1));
  const T step_y = static_cast<T>(2.0 / static_cast<double>(h - 1));
  tx->resize(static_cast<size_t>(h * w));
  ty->resize(static_cast<size_t>(h * w));
  for (int64_t i = 0; i < h; ++i) {
    for (int64_t j = 0; j < w; ++j) {
      (*tx)[static_cast<size_t>(i * w + j)] = T(-1) + static_cast<T>(j) * step_x;
      (*ty)[static_cast<size_t>(i * w + j)] = T(-1) + static_cast<T>(i) * step_y;
    }
  }
}

// grid (batch, 2, positions) = theta (batch, 2, 3) times the target points (x, y, 1).
template <typename T>
void AffineGrid(const T* theta, int64_t batch, const std::vector<T>& tx, const std::vector<T>& ty,
                T* out) {
  const int64_t positions = static_cast<int64_t>(tx.size());
  for (int64_t n = 0; n < batch; ++n) {
    const T* t = theta + n * 6;
    T* ox = out + n * 2 * positions;
    T* oy = ox + positions;
    for (int64_t p = 0; p < positions; ++p) {
      const T x = tx[static_cast<size_t>(p)], y = ty[static_cast<size_t>(p)];
      ox[p] = t[0] * x + t[1] * y + t[2];
      oy[p] = t[3] * x + t[4] * y + t[5];
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
      std::vector<T> tx, ty;
      AffineTargetPoints<T>(os[2], os[3], &tx, &ty);
      AffineGrid<T>(in[0].ptr<const T>(), os[0], tx, ty, out[0].ptr<T>());
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

// _backward_GridGenerator: (out_grad, data) -> d data.
void GridGeneratorBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                                  const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<GridGeneratorParam>();
  const Shape& gs = in[0].shape;
  SwitchRealDType(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* dgrid = in[0].ptr<const T>();
    T* dx = out[0].ptr<T>();
    if (p.transform_type == TransformType::kAffine) {
      std::vector<T> tx, ty;
      AffineTargetPoints<T>(gs[2], gs[3], &tx, &ty);
      AffineGridBackward<T>(dgrid, tx, ty, gs[0], dx);
      return;
    }
    const int64_t positions = gs[2] * gs[3];
    const T half_w = static_cast<T>((static_cast<T>(gs[3]) - 1.0) / 2.0);
    const T half_h = static_cast<T>((static_cast<T>(gs[2]) - 1.0) / 2.0);
    for (int64_t n = 0; n < gs[0]; ++n) {
      for (int64_t q = 0; q < positions; ++q) {
        const int64_t px = n * 2 * positions + q, py = px + positions;
        dx[px] = dgrid[px] / half_w;
        dx[py] = dgrid[py] / half_h;
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

// _backward_BilinearSampler: (out_grad, data, grid) -> d data, d grid.
void BilinearSamplerBackwardCompute(const OpContext&, const NodeAttrs&,
                                    const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const Shape& os = in[0].shape;
  SwitchRealDType(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    SampleImagesBackward<T>(in[1].ptr<const T>(), in[1].shape, in[2].ptr<const T>(),
                            2 * os[2] * os[3], os[2], os[3], in[0].ptr<const T>(), out[0].ptr<T>(),
                            out[1].ptr<T>());
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

// SpatialTransformer's target points, as MXNet builds them here (in double, then T).
template <typename T>
void TransformerTargetPoints(int64_t h, int64_t w, std::vector<T>* tx, std::vector<T>* ty) {
  tx->resize(static_cast<size_t>(h * w));
  ty->resize(static_cast<size_t>(h * w));
  for (int64_t i = 0; i < h * w; ++i) {
    (*tx)[static_cast<size_t>(i)] =
        static_cast<T>(-1.0 + static_cast<double>(i % w) * 2.0 / static_cast<double>(w - 1));
    (*ty)[static_cast<size_t>(i)] =
        static_cast<T>(-1.0 + static_cast<double>(i / w) * 2.0 / static_cast<double>(h - 1));
  }
}

template <typename T>
void SpatialTransformerKernel(const SpatialTransformerParam& p, const TBlob& data, const TBlob& loc,
                              const TBlob& out) {
  const int64_t h = p.target_shape[0], w = p.target_shape[1], batch = data.shape[0];
  std::vector<T> tx, ty;
  TransformerTargetPoints<T>(h, w, &tx, &ty);
  std::vector<T> grid(static_cast<size_t>(batch * 2 * h * w));
  AffineGrid<T>(loc.ptr<const T>(), batch, tx, ty, grid.data());
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

// _backward_SpatialTransformer: (out_grad, data, loc) -> d data, d loc (the sampler's grid
// gradient through the affine grid).
void SpatialTransformerBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                                       const std::vector<TBlob>& in,
                                       const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<SpatialTransformerParam>();
  SwitchRealDType(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t h = p.target_shape[0], w = p.target_shape[1], batch = in[1].shape[0];
    std::vector<T> tx, ty;
    TransformerTargetPoints<T>(h, w, &tx, &ty);
    std::vector<T> grid(static_cast<size_t>(batch * 2 * h * w)), dgrid(grid.size());
    AffineGrid<T>(in[2].ptr<const T>(), batch, tx, ty, grid.data());
    SampleImagesBackward<T>(in[1].ptr<const T>(), in[1].shape, grid.data(), 2 * h * w, h, w,
                            in[0].ptr<const T>(), out[0].ptr<T>(), dgrid.data());
    AffineGridBackward<T>(dgrid.data(), tx, ty, batch, out[1].ptr<T>());
  });
}

bool GridGeneratorBackwardShape(const NodeAttrs& attrs, std::vector<Shape>* in,
                                std::vector<Shape>* out) {
  return internal::BackwardShape(GridGeneratorShape, attrs, in, out);
}

bool BilinearSamplerBackwardShape(const NodeAttrs& attrs, std::vector<Shape>* in,
                                  std::vector<Shape>* out) {
  return internal::BackwardShape(BilinearSamplerShape, attrs, in, out);
}

bool SpatialTransformerBackwardShape(const NodeAttrs& attrs, std::vector<Shape>* in,
                                     std::vector<Shape>* out) {
  return internal::BackwardShape(SpatialTransformerShape, attrs, in, out);
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
      .SetCompute(GridGeneratorCompute)
      .SetGradient(internal::BackwardOpGradient("_backward_GridGenerator"));

  r->Register("_backward_GridGenerator")
      .Describe(
          "The gradient of GridGenerator: affine, the grid gradient times the target points "
          "(x, y, 1); warp, the grid gradient over the half sizes.")
      .SetParam<GridGeneratorParam>(GridGeneratorInit)
      .SetInputNames(internal::BackwardInputNames({"data"}))
      .SetInferShape(GridGeneratorBackwardShape)
      .SetInferType(RealType)
      .SetCompute(GridGeneratorBackwardCompute)
      .SetInternal();

  r->Register("BilinearSampler")
      .Describe(
          "Bilinear sampling of data (batch, c, H, W) at grid (batch, 2, h, w) of "
          "normalized (x, y) in [-1, 1]; outside the image counts as zero.")
      .SetParam<BilinearSamplerParam>()
      .SetInputNames({"data", "grid"})
      .SetNumTotalOutputs(2)  // + MXNet's hidden copy of the grid
      .SetInferShape(BilinearSamplerShape)
      .SetInferType(RealType)
      .SetCompute(BilinearSamplerCompute)
      .SetGradient(internal::BackwardOpGradient("_backward_BilinearSampler"));

  r->Register("_backward_BilinearSampler")
      .Describe(
          "The gradient of BilinearSampler: to data, the bilinear weights; to the grid, the "
          "derivative of each sample along x and y in normalized units.")
      .SetParam<BilinearSamplerParam>()
      .SetInputNames(internal::BackwardInputNames({"data", "grid"}))
      .SetNumOutputs(2)
      .SetInferShape(BilinearSamplerBackwardShape)
      .SetInferType(RealType)
      .SetCompute(BilinearSamplerBackwardCompute)
      .SetInternal();

  r->Register("SpatialTransformer")
      .Describe(
          "Spatial transformer: samples data bilinearly on the affine transform loc "
          "(batch, 6) of a target_shape grid.")
      .SetParam<SpatialTransformerParam>(SpatialTransformerInit)
      .SetInputNames({"data", "loc"})
      .SetNumTotalOutputs(3)  // + MXNet's hidden grids
      .SetInferShape(SpatialTransformerShape)
      .SetInferType(RealType)
      .SetCompute(SpatialTransformerCompute)
      .SetGradient(internal::BackwardOpGradient("_backward_SpatialTransformer"));

  r->Register("_backward_SpatialTransformer")
      .Describe(
          "The gradient of SpatialTransformer: the sampler's gradients, the grid's carried "
          "to loc through the affine transform.")
      .SetParam<SpatialTransformerParam>(SpatialTransformerInit)
      .SetInputNames(internal::BackwardInputNames({"data", "loc"}))
      .SetNumOutputs(2)
      .SetInferShape(SpatialTransformerBackwardShape)
      .SetInferType(RealType)
      .SetCompute(SpatialTransformerBackwardCompute)
      .SetInternal();
}

}  // namespace hybridnet
