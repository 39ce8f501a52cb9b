// Conformance cases of the vision family: UpSampling, _contrib_BilinearResize2D,
// L2Normalization, the ROI poolings, GridGenerator / BilinearSampler / SpatialTransformer, the
// deformable convolutions, Correlation and the _image_* transforms. References follow MXNet's
// documented definitions with plain loops in double; where a float32 kernel's rounding decides
// an integer (ROI bin edges) the reference rounds the same quantities to float.
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "conformance.h"
#include "reference_helpers.h"
#include "vision_inputs.h"

namespace hybridnet {
namespace conformance {
namespace {

const double kPi = 3.14159265358979323846;

// Element (n, c, y, x) of an NCHW tensor.
double At4(const RefTensor& t, int64_t n, int64_t c, int64_t y, int64_t x) {
  const Shape& s = t.shape;
  return t[((n * s[1] + c) * s[2] + y) * s[3] + x];
}

// Bilinear value of plane (n, c) at (y, x) with every neighbour outside the plane read as 0.
double BilinearZero(const RefTensor& t, int64_t n, int64_t c, double y, double x) {
  const int64_t h = t.shape[2], w = t.shape[3];
  const double y0 = std::floor(y), x0 = std::floor(x);
  double v = 0;
  for (int dy = 0; dy < 2; ++dy)
    for (int dx = 0; dx < 2; ++dx) {
      const int64_t yy = static_cast<int64_t>(y0) + dy, xx = static_cast<int64_t>(x0) + dx;
      if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
      const double wy = dy ? y - y0 : 1 - (y - y0), wx = dx ? x - x0 : 1 - (x - x0);
      v += wy * wx * At4(t, n, c, yy, xx);
    }
  return v;
}

// Bilinear value at (y, x) clamped into the plane (the sample is taken at the nearest point of
// [0, h - 1] x [0, w - 1]).
double BilinearClamped(const RefTensor& t, int64_t n, int64_t c, double y, double x) {
  const int64_t h = t.shape[2], w = t.shape[3];
  y = std::min(std::max(y, 0.0), static_cast<double>(h - 1));
  x = std::min(std::max(x, 0.0), static_cast<double>(w - 1));
  return BilinearZero(t, n, c, y, x);
}

// ---- UpSampling ------------------------------------------------------------------------------

RefFn NearestUpRef(int64_t scale, bool sum) {
  return [=](const std::vector<RefTensor>& in) {
    const Shape& s0 = in[0].shape;
    const int64_t oh = s0[2] * scale, ow = s0[3] * scale;
    int64_t channels = 0;
    for (const auto& t : in) channels = sum ? t.shape[1] : channels + t.shape[1];
    RefTensor y(Shape{s0[0], channels, oh, ow});
    int64_t offset = 0;
    for (const auto& t : in) {
      const int64_t f = oh / t.shape[2];
      for (int64_t n = 0; n < s0[0]; ++n)
        for (int64_t c = 0; c < t.shape[1]; ++c)
          for (int64_t r = 0; r < oh; ++r)
            for (int64_t q = 0; q < ow; ++q)
              y[((n * channels + offset + c) * oh + r) * ow + q] += At4(t, n, c, r / f, q / f);
      if (!sum) offset += t.shape[1];
    }
    return std::vector<RefTensor>{y};
  };
}

// Depthwise transposed convolution, gathered: output (oy, ox) takes input (iy, ix) through tap
// (ky, kx) when iy * s - pad + ky = oy.
RefFn BilinearUpRef(int64_t scale) {
  return [scale](const std::vector<RefTensor>& in) {
    const RefTensor &x = in[0], &w = in[1];
    const int64_t k = 2 * scale - scale % 2, pad = scale / 2;  // pad = ceil((scale - 1) / 2)
    const Shape& s = x.shape;
    RefTensor y(Shape{s[0], s[1], s[2] * scale, s[3] * scale});
    for (int64_t n = 0; n < s[0]; ++n)
      for (int64_t c = 0; c < s[1]; ++c)
        for (int64_t oy = 0; oy < s[2] * scale; ++oy)
          for (int64_t ox = 0; ox < s[3] * scale; ++ox) {
            double acc = 0;
            for (int64_t ky = 0; ky < k; ++ky)
              for (int64_t kx = 0; kx < k; ++kx) {
                const int64_t ty = oy + pad - ky, tx = ox + pad - kx;
                if (ty % scale || tx % scale) continue;
                const int64_t iy = ty / scale, ix = tx / scale;
                if (ty < 0 || tx < 0 || iy >= s[2] || ix >= s[3]) continue;
                acc += At4(x, n, c, iy, ix) * w[(c * k + ky) * k + kx];
              }
            y[((n * s[1] + c) * s[2] * scale + oy) * s[3] * scale + ox] = acc;
          }
    return std::vector<RefTensor>{y};
  };
}

// ---- _contrib_BilinearResize2D ----------------------------------------------------------------

RefFn ResizeRef(std::function<std::pair<int64_t, int64_t>(const std::vector<RefTensor>&)> size,
                bool align) {
  return [size, align](const std::vector<RefTensor>& in) {
    const RefTensor& x = in[0];
    const int64_t ih = x.shape[2], iw = x.shape[3];
    const auto [oh, ow] = size(in);
    RefTensor y(Shape{x.shape[0], x.shape[1], oh, ow});
    auto src = [align](int64_t dst, int64_t in_n, int64_t out_n) {
      if (out_n <= 1) return 0.0;
      if (align)
        return static_cast<double>(dst) * static_cast<double>(in_n - 1) /
               static_cast<double>(out_n - 1);
      return std::max(0.0, (static_cast<double>(dst) + 0.5) * static_cast<double>(in_n) /
                                   static_cast<double>(out_n) -
                               0.5);
    };
    for (int64_t n = 0; n < x.shape[0]; ++n)
      for (int64_t c = 0; c < x.shape[1]; ++c)
        for (int64_t r = 0; r < oh; ++r)
          for (int64_t q = 0; q < ow; ++q)
            y[((n * x.shape[1] + c) * oh + r) * ow + q] =
                BilinearClamped(x, n, c, src(r, ih, oh), src(q, iw, ow));
    return std::vector<RefTensor>{y};
  };
}

std::function<std::pair<int64_t, int64_t>(const std::vector<RefTensor>&)> FixedSize(int64_t h,
                                                                                    int64_t w) {
  return [h, w](const std::vector<RefTensor>&) { return std::make_pair(h, w); };
}

// ---- L2Normalization --------------------------------------------------------------------------

RefFn L2NormRef(const std::string& mode, double eps) {
  return [mode, eps](const std::vector<RefTensor>& in) {
    const RefTensor& x = in[0];
    const Shape& s = x.shape;
    RefTensor y(s);
    const int64_t n = s[0], rest = x.size() / n;
    const int64_t c = s.ndim() > 1 ? s[1] : 1, sp = rest / c;
    // Every element's group: (sample) / (sample, position) / (sample, channel).
    auto group = [&](int64_t i) {
      const int64_t b = i / rest, ch = (i % rest) / sp, p = i % sp;
      if (mode == "instance") return b;
      if (mode == "channel") return b * sp + p;
      return b * c + ch;
    };
    std::vector<double> sums(static_cast<size_t>(x.size()), 0.0);
    for (int64_t i = 0; i < x.size(); ++i) sums[static_cast<size_t>(group(i))] += x[i] * x[i];
    for (int64_t i = 0; i < x.size(); ++i)
      y[i] = x[i] / std::sqrt(sums[static_cast<size_t>(group(i))] + eps);
    return std::vector<RefTensor>{y};
  };
}

// ---- ROIPooling -------------------------------------------------------------------------------

int64_t BatchOf(double v, int64_t batch) {
  const double t = std::trunc(v);
  return (v > -1 && t < static_cast<double>(batch)) ? static_cast<int64_t>(t) : -1;
}

// Calls bin(r, c, i, j, b, h0, h1, w0, w1) for every bin [h0, h1) x [w0, w1) of every ROI r
// naming an image b of x.
void ForEachROIPoolingBin(int64_t ph_n, int64_t pw_n, double scale, const RefTensor& x,
                          const RefTensor& rois,
                          const std::function<void(int64_t, int64_t, int64_t, int64_t, int64_t,
                                                   int64_t, int64_t, int64_t, int64_t)>& bin) {
  const int64_t c_n = x.shape[1], h = x.shape[2], w = x.shape[3], r_n = rois.shape[0];
  for (int64_t r = 0; r < r_n; ++r) {
    const double* roi = &rois.v[static_cast<size_t>(r * 5)];
    const int64_t b = BatchOf(roi[0], x.shape[0]);
    if (b < 0) continue;  // zeros
    const int64_t x1 = std::llround(roi[1] * scale), y1 = std::llround(roi[2] * scale);
    const int64_t x2 = std::llround(roi[3] * scale), y2 = std::llround(roi[4] * scale);
    const double bin_h =
        F32(static_cast<double>(std::max<int64_t>(y2 - y1 + 1, 1)) / static_cast<double>(ph_n));
    const double bin_w =
        F32(static_cast<double>(std::max<int64_t>(x2 - x1 + 1, 1)) / static_cast<double>(pw_n));
    for (int64_t c = 0; c < c_n; ++c)
      for (int64_t i = 0; i < ph_n; ++i)
        for (int64_t j = 0; j < pw_n; ++j) {
          const int64_t h0 = std::clamp<int64_t>(
              static_cast<int64_t>(std::floor(F32(static_cast<double>(i) * bin_h))) + y1, 0, h);
          const int64_t h1 = std::clamp<int64_t>(
              static_cast<int64_t>(std::ceil(F32(static_cast<double>(i + 1) * bin_h))) + y1, 0, h);
          const int64_t w0 = std::clamp<int64_t>(
              static_cast<int64_t>(std::floor(F32(static_cast<double>(j) * bin_w))) + x1, 0, w);
          const int64_t w1 = std::clamp<int64_t>(
              static_cast<int64_t>(std::ceil(F32(static_cast<double>(j + 1) * bin_w))) + x1, 0, w);
          bin(r, c, i, j, b, h0, h1, w0, w1);
        }
  }
}

RefFn ROIPoolingRef(int64_t ph_n, int64_t pw_n, double scale) {
  return [=](const std::vector<RefTensor>& in) {
    const RefTensor &x = in[0], &rois = in[1];
    const int64_t c_n = x.shape[1];
    RefTensor y(Shape{rois.shape[0], c_n, ph_n, pw_n});
    ForEachROIPoolingBin(ph_n, pw_n, scale, x, rois,
                         [&](int64_t r, int64_t c, int64_t i, int64_t j, int64_t b, int64_t h0,
                             int64_t h1, int64_t w0, int64_t w1) {
                           double m = 0;
                           if (h1 > h0 && w1 > w0) {
                             m = -1e300;
                             for (int64_t yy = h0; yy < h1; ++yy)
                               for (int64_t xx = w0; xx < w1; ++xx)
                                 m = std::max(m, At4(x, b, c, yy, xx));
                           }
                           y[((r * c_n + c) * ph_n + i) * pw_n + j] = m;
                         });
    return std::vector<RefTensor>{y};
  };
}

// _backward_ROIPooling: (out_grad, data, rois) -> each bin's gradient added at the first
// largest pixel of its bin (row-major), zeros for rois.
RefFn ROIPoolingBackwardRef(int64_t ph_n, int64_t pw_n, double scale) {
  return [=](const std::vector<RefTensor>& in) {
    const RefTensor &dy = in[0], &x = in[1], &rois = in[2];
    const int64_t c_n = x.shape[1];
    RefTensor dx(x.shape), drois(rois.shape);
    ForEachROIPoolingBin(ph_n, pw_n, scale, x, rois,
                         [&](int64_t r, int64_t c, int64_t i, int64_t j, int64_t b, int64_t h0,
                             int64_t h1, int64_t w0, int64_t w1) {
                           int64_t at = -1;
                           double m = -1e300;
                           for (int64_t yy = h0; yy < h1; ++yy)
                             for (int64_t xx = w0; xx < w1; ++xx)
                               if (At4(x, b, c, yy, xx) > m) {
                                 m = At4(x, b, c, yy, xx);
                                 at = ((b * c_n + c) * x.shape[2] + yy) * x.shape[3] + xx;
                               }
                           if (at >= 0) dx[at] += dy[((r * c_n + c) * ph_n + i) * pw_n + j];
                         });
    return std::vector<RefTensor>{dx, drois};
  };
}

// ---- gradients of ops linear in their data ----------------------------------------------------

// The gradient of <dy, f(in)> for f affine in in[0]: d in[0]_j = <dy, f(e_j, in[1:]) -
// f(0, in[1:])>; the other inputs get zeros (the ops declare no gradient for a resize's like
// input or for ROIs).
std::vector<RefTensor> LinearAdjoint(const RefFn& f, const RefTensor& dy,
                                     const std::vector<RefTensor>& in) {
  std::vector<RefTensor> grads;
  for (const RefTensor& t : in) grads.emplace_back(t.shape);
  std::vector<RefTensor> unit = in;
  std::fill(unit[0].v.begin(), unit[0].v.end(), 0.0);
  const RefTensor at_zero = f(unit)[0];
  for (int64_t j = 0; j < in[0].size(); ++j) {
    unit[0][j] = 1;
    const RefTensor y = f(unit)[0];
    double acc = 0;
    for (int64_t k = 0; k < y.size(); ++k) acc += dy[k] * (y[k] - at_zero[k]);
    grads[0][j] = acc;
    unit[0][j] = 0;
  }
  return grads;
}

// The declared gradient of a forward case of such an op.
RefGradFn AdjointGradient(RefFn f) {
  return [f](const std::vector<RefTensor>& in, const std::vector<RefTensor>& out_grads) {
    return LinearAdjoint(f, out_grads[0], in);
  };
}

// The reference of its backward op: (out_grad, forward inputs) -> their gradients.
RefFn AdjointBackwardRef(RefFn f) {
  return [f](const std::vector<RefTensor>& in) {
    return LinearAdjoint(f, in[0], std::vector<RefTensor>(in.begin() + 1, in.end()));
  };
}

// An internal op's case (never in a model file, so no JSON round trip).
// ---- ROIAlign / RROIAlign ---------------------------------------------------------------------

// MXNet's sample: zero outside [-1, H] x [-1, W], otherwise the bilinear value of the point
// clamped into the map.
double AlignSample(const RefTensor& x, int64_t n, int64_t c, double y, double xx) {
  const int64_t h = x.shape[2], w = x.shape[3];
  if (y < -1 || y > static_cast<double>(h) || xx < -1 || xx > static_cast<double>(w)) return 0.0;
  return BilinearClamped(x, n, c, y, xx);
}

RefFn ROIAlignRef(int64_t ph_n, int64_t pw_n, double scale, int ratio, bool ps, bool aligned) {
  return [=](const std::vector<RefTensor>& in) {
    const RefTensor &x = in[0], &rois = in[1];
    const int64_t out_c = ps ? x.shape[1] / (ph_n * pw_n) : x.shape[1], r_n = rois.shape[0];
    RefTensor y(Shape{r_n, out_c, ph_n, pw_n});
    for (int64_t r = 0; r < r_n; ++r) {
      const double* roi = &rois.v[static_cast<size_t>(r * 5)];
      const int64_t b = BatchOf(roi[0], x.shape[0]);
      if (b < 0) continue;
      const double off = aligned ? 0.5 : 0.0;
      const double x1 = roi[1] * scale - off, y1 = roi[2] * scale - off;
      double rw = roi[3] * scale - off - x1, rh = roi[4] * scale - off - y1;
      if (!aligned) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
      const double bh = rh / static_cast<double>(ph_n), bw = rw / static_cast<double>(pw_n);
      const int64_t gh =
          ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rh / static_cast<double>(ph_n)));
      const int64_t gw =
          ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rw / static_cast<double>(pw_n)));
      for (int64_t c = 0; c < out_c; ++c)
        for (int64_t i = 0; i < ph_n; ++i)
          for (int64_t j = 0; j < pw_n; ++j) {
            const int64_t ic = ps ? (c * ph_n + i) * pw_n + j : c;
            double acc = 0;
            for (int64_t iy = 0; iy < gh; ++iy)
              for (int64_t ix = 0; ix < gw; ++ix)
                acc += AlignSample(x, b, ic,
                                   y1 + (static_cast<double>(i) + (static_cast<double>(iy) + 0.5) /
                                                                      static_cast<double>(gh)) *
                                            bh,
                                   x1 + (static_cast<double>(j) + (static_cast<double>(ix) + 0.5) /
                                                                      static_cast<double>(gw)) *
                                            bw);
            y[((r * out_c + c) * ph_n + i) * pw_n + j] = acc / static_cast<double>(gh * gw);
          }
    }
    return std::vector<RefTensor>{y};
  };
}

RefFn RROIAlignRef(int64_t ph_n, int64_t pw_n, double scale, int ratio) {
  return [=](const std::vector<RefTensor>& in) {
    const RefTensor &x = in[0], &rois = in[1];
    const int64_t c_n = x.shape[1], r_n = rois.shape[0];
    RefTensor y(Shape{r_n, c_n, ph_n, pw_n});
    for (int64_t r = 0; r < r_n; ++r) {
      const double* roi = &rois.v[static_cast<size_t>(r * 6)];
      const int64_t b = BatchOf(roi[0], x.shape[0]);
      if (b < 0) continue;
      const double cx = roi[1] * scale, cy = roi[2] * scale;
      const double rw = std::max(roi[3] * scale, 1.0), rh = std::max(roi[4] * scale, 1.0);
      const double theta = roi[5] * kPi / 180.0, ct = std::cos(theta), st = std::sin(theta);
      const double bh = rh / static_cast<double>(ph_n), bw = rw / static_cast<double>(pw_n);
      const int64_t gh =
          ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rh / static_cast<double>(ph_n)));
      const int64_t gw =
          ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rw / static_cast<double>(pw_n)));
      for (int64_t c = 0; c < c_n; ++c)
        for (int64_t i = 0; i < ph_n; ++i)
          for (int64_t j = 0; j < pw_n; ++j) {
            double acc = 0;
            for (int64_t iy = 0; iy < gh; ++iy)
              for (int64_t ix = 0; ix < gw; ++ix) {
                const double yy =
                    -rh / 2 + (static_cast<double>(i) +
                               (static_cast<double>(iy) + 0.5) / static_cast<double>(gh)) *
                                  bh;
                const double xx =
                    -rw / 2 + (static_cast<double>(j) +
                               (static_cast<double>(ix) + 0.5) / static_cast<double>(gw)) *
                                  bw;
                acc += AlignSample(x, b, c, yy * ct - xx * st + cy, xx * ct + yy * st + cx);
              }
            y[((r * c_n + c) * ph_n + i) * pw_n + j] = acc / static_cast<double>(gh * gw);
          }
    }
    return std::vector<RefTensor>{y};
  };
}

// Rotated ROIs [batch, cx, cy, w, h, degrees] over an image of (width, height) pixels.
std::vector<double> RotatedRois(int64_t count, int64_t batch, double width, double height,
                                uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> v;
  for (int64_t i = 0; i < count; ++i)
    v.insert(v.end(), {static_cast<double>(i % batch), -0.1 * width + 1.2 * width * u(rng),
                       -0.1 * height + 1.2 * height * u(rng), 0.1 * width + 0.7 * width * u(rng),
                       0.1 * height + 0.7 * height * u(rng), -180 + 360 * u(rng)});
  return v;
}

// ---- PSROIPooling / DeformablePSROIPooling ----------------------------------------------------

RefFn PSROIPoolingRef(double scale, int64_t dim, int64_t pooled, int64_t group) {
  return [=](const std::vector<RefTensor>& in) {
    const RefTensor &x = in[0], &rois = in[1];
    const int64_t h = x.shape[2], w = x.shape[3], r_n = rois.shape[0];
    RefTensor y(Shape{r_n, dim, pooled, pooled});
    const double s = F32(scale);
    for (int64_t r = 0; r < r_n; ++r) {
      const double* roi = &rois.v[static_cast<size_t>(r * 5)];
      const int64_t b = BatchOf(roi[0], x.shape[0]);
      if (b < 0) continue;
      const double x1 = F32(std::round(roi[1]) * s), y1 = F32(std::round(roi[2]) * s);
      const double x2 = F32((std::round(roi[3]) + 1) * s), y2 = F32((std::round(roi[4]) + 1) * s);
      const double rw = std::max(F32(x2 - x1), F32(0.1)), rh = std::max(F32(y2 - y1), F32(0.1));
      const double bh = F32(rh / static_cast<double>(pooled)),
                   bw = F32(rw / static_cast<double>(pooled));
      for (int64_t k = 0; k < dim; ++k)
        for (int64_t i = 0; i < pooled; ++i)
          for (int64_t j = 0; j < pooled; ++j) {
            const int64_t h0 = std::clamp<int64_t>(
                static_cast<int64_t>(std::floor(F32(F32(static_cast<double>(i) * bh) + y1))), 0, h);
            const int64_t h1 = std::clamp<int64_t>(
                static_cast<int64_t>(std::ceil(F32(F32(static_cast<double>(i + 1) * bh) + y1))), 0,
                h);
            const int64_t w0 = std::clamp<int64_t>(
                static_cast<int64_t>(std::floor(F32(F32(static_cast<double>(j) * bw) + x1))), 0, w);
            const int64_t w1 = std::clamp<int64_t>(
                static_cast<int64_t>(std::ceil(F32(F32(static_cast<double>(j + 1) * bw) + x1))), 0,
                w);
            const int64_t gi = std::min(i * group / pooled, group - 1),
                          gj = std::min(j * group / pooled, group - 1);
            const int64_t c = (k * group + gi) * group + gj;
            double sum = 0;
            for (int64_t yy = h0; yy < h1; ++yy)
              for (int64_t xx = w0; xx < w1; ++xx) sum += At4(x, b, c, yy, xx);
            const bool empty = h1 <= h0 || w1 <= w0;
            y[((r * dim + k) * pooled + i) * pooled + j] =
                empty ? 0.0 : sum / static_cast<double>((h1 - h0) * (w1 - w0));
          }
    }
    return std::vector<RefTensor>{y};
  };
}

RefFn DeformablePSRef(double scale, int64_t dim, int64_t group, int64_t pooled, int64_t part,
                      int64_t spp, double trans_std, bool no_trans) {
  return [=](const std::vector<RefTensor>& in) {
    const RefTensor &x = in[0], &rois = in[1];
    const int64_t h = x.shape[2], w = x.shape[3], r_n = rois.shape[0];
    const int64_t classes = no_trans ? 1 : in[2].shape[1] / 2, per_class = dim / classes;
    RefTensor y(Shape{r_n, dim, pooled, pooled});
    for (int64_t r = 0; r < r_n; ++r) {
      const double* roi = &rois.v[static_cast<size_t>(r * 5)];
      const int64_t b = BatchOf(roi[0], x.shape[0]);
      if (b < 0) continue;
      const double x1 = std::round(roi[1]) * scale - 0.5, y1 = std::round(roi[2]) * scale - 0.5;
      const double x2 = (std::round(roi[3]) + 1) * scale - 0.5,
                   y2 = (std::round(roi[4]) + 1) * scale - 0.5;
      const double rw = std::max(x2 - x1, 0.1), rh = std::max(y2 - y1, 0.1);
      const double bh = rh / static_cast<double>(pooled), bw = rw / static_cast<double>(pooled);
      for (int64_t k = 0; k < dim; ++k)
        for (int64_t i = 0; i < pooled; ++i)
          for (int64_t j = 0; j < pooled; ++j) {
            const int64_t pi = i * part / pooled, pj = j * part / pooled;
            double tx = 0, ty = 0;
            if (!no_trans) {
              const int64_t cls = k / per_class;
              tx = At4(in[2], r, cls * 2, pi, pj) * trans_std;
              ty = At4(in[2], r, cls * 2 + 1, pi, pj) * trans_std;
            }
            const double ws = static_cast<double>(j) * bw + x1 + tx * rw;
            const double hs = static_cast<double>(i) * bh + y1 + ty * rh;
            const int64_t gi = std::min(i * group / pooled, group - 1),
                          gj = std::min(j * group / pooled, group - 1);
            const int64_t c = (k * group + gi) * group + gj;
            double sum = 0;
            int64_t count = 0;
            for (int64_t a = 0; a < spp; ++a)
              for (int64_t e = 0; e < spp; ++e) {
                double px = ws + static_cast<double>(e) * bw / static_cast<double>(spp);
                double py = hs + static_cast<double>(a) * bh / static_cast<double>(spp);
                if (px < -0.5 || px > static_cast<double>(w) - 0.5 || py < -0.5 ||
                    py > static_cast<double>(h) - 0.5)
                  continue;
                sum += BilinearClamped(x, b, c, py, px);
                ++count;
              }
            y[((r * dim + k) * pooled + i) * pooled + j] =
                count ? sum / static_cast<double>(count) : 0.0;
          }
    }
    return std::vector<RefTensor>{y};
  };
}

// ---- GridGenerator / BilinearSampler / SpatialTransformer -------------------------------------

// out (n, c, h, w) sampled at normalized grid (gx, gy)(n, p).
RefTensor SampleRef(const RefTensor& x, int64_t h, int64_t w,
                    const std::function<std::pair<double, double>(int64_t, int64_t)>& grid) {
  const int64_t n_n = x.shape[0], c_n = x.shape[1], ih = x.shape[2], iw = x.shape[3];
  RefTensor y(Shape{n_n, c_n, h, w});
  for (int64_t n = 0; n < n_n; ++n)
    for (int64_t p = 0; p < h * w; ++p) {
      const auto [gx, gy] = grid(n, p);
      const double xr = (gx + 1) * static_cast<double>(iw - 1) / 2,
                   yr = (gy + 1) * static_cast<double>(ih - 1) / 2;
      for (int64_t c = 0; c < c_n; ++c)
        y[(n * c_n + c) * h * w + p] = BilinearZero(x, n, c, yr, xr);
    }
  return y;
}

// The slopes (d/dy, d/dx) of BilinearZero at (y, x).
std::pair<double, double> BilinearZeroSlopes(const RefTensor& t, int64_t n, int64_t c, double y,
                                             double x) {
  const int64_t h = t.shape[2], w = t.shape[3];
  const double y0 = std::floor(y), x0 = std::floor(x);
  double gy = 0, gx = 0;
  for (int dy = 0; dy < 2; ++dy)
    for (int dx = 0; dx < 2; ++dx) {
      const int64_t yy = static_cast<int64_t>(y0) + dy, xx = static_cast<int64_t>(x0) + dx;
      if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
      const double wy = dy ? y - y0 : 1 - (y - y0), wx = dx ? x - x0 : 1 - (x - x0);
      const double v = At4(t, n, c, yy, xx);
      gy += (dy ? 1.0 : -1.0) * wx * v;
      gx += wy * (dx ? 1.0 : -1.0) * v;
    }
  return {gy, gx};
}

// The gradient of <dy, SampleRef(x, h, w, grid)> with respect to the normalized grid points:
// (d gx, d gy) per sample n and position p, at index n * h * w + p.
std::vector<std::pair<double, double>> SampleGridGradRef(
    const RefTensor& dy, const RefTensor& x, int64_t h, int64_t w,
    const std::function<std::pair<double, double>(int64_t, int64_t)>& grid) {
  const int64_t n_n = x.shape[0], c_n = x.shape[1], ih = x.shape[2], iw = x.shape[3];
  std::vector<std::pair<double, double>> grads(static_cast<size_t>(n_n * h * w));
  for (int64_t n = 0; n < n_n; ++n)
    for (int64_t p = 0; p < h * w; ++p) {
      const auto [gx, gy] = grid(n, p);
      const double xr = (gx + 1) * static_cast<double>(iw - 1) / 2,
                   yr = (gy + 1) * static_cast<double>(ih - 1) / 2;
      double sx = 0, sy = 0;
      for (int64_t c = 0; c < c_n; ++c) {
        const auto [slope_y, slope_x] = BilinearZeroSlopes(x, n, c, yr, xr);
        sx += dy[(n * c_n + c) * h * w + p] * slope_x;
        sy += dy[(n * c_n + c) * h * w + p] * slope_y;
      }
      grads[static_cast<size_t>(n * h * w + p)] = {sx * static_cast<double>(iw - 1) / 2,
                                                   sy * static_cast<double>(ih - 1) / 2};
    }
  return grads;
}

std::pair<double, double> AffinePoint(const double* t, int64_t p, int64_t h, int64_t w) {
  const double xs = -1 + 2.0 * static_cast<double>(p % w) / static_cast<double>(w - 1);
  const double ys = -1 + 2.0 * static_cast<double>(p / w) / static_cast<double>(h - 1);
  return {t[0] * xs + t[1] * ys + t[2], t[3] * xs + t[4] * ys + t[5]};
}

// ---- deformable convolutions ------------------------------------------------------------------

struct DeformOpts {
  int64_t filters = 4, groups = 1, dgroups = 1, kh = 3, kw = 3, stride = 1, pad = 1, dilate = 1;
  bool bias = true, modulated = false;
};

AttrDict DeformAttrs(const DeformOpts& o) {
  auto pair = [](int64_t v) { return "(" + std::to_string(v) + ", " + std::to_string(v) + ")"; };
  return {{"kernel", "(" + std::to_string(o.kh) + ", " + std::to_string(o.kw) + ")"},
          {"stride", pair(o.stride)},
          {"pad", pair(o.pad)},
          {"dilate", pair(o.dilate)},
          {"num_filter", std::to_string(o.filters)},
          {"num_group", std::to_string(o.groups)},
          {"num_deformable_group", std::to_string(o.dgroups)},
          {"no_bias", o.bias ? "False" : "True"}};
}

// MXNet's CPU samples: DCN v1 reads only points inside [0, H) x [0, W) (neighbours clamped);
// v2 reads points inside (-1, H) x (-1, W) with neighbours outside the image as 0.
RefFn DeformRef(DeformOpts o) {
  return [o](const std::vector<RefTensor>& in) {
    const RefTensor &x = in[0], &off = in[1];
    const RefTensor* mask = o.modulated ? &in[2] : nullptr;
    const RefTensor& wt = in[o.modulated ? 3 : 2];
    const int64_t n_n = x.shape[0], c_n = x.shape[1], h = x.shape[2], w = x.shape[3];
    const int64_t oh = off.shape[2], ow = off.shape[3];
    const int64_t cpg = c_n / o.groups, fpg = o.filters / o.groups, cpd = c_n / o.dgroups;
    RefTensor y(Shape{n_n, o.filters, oh, ow});
    for (int64_t n = 0; n < n_n; ++n)
      for (int64_t f = 0; f < o.filters; ++f)
        for (int64_t oy = 0; oy < oh; ++oy)
          for (int64_t ox = 0; ox < ow; ++ox) {
            double acc = o.bias ? in[o.modulated ? 4 : 3][f] : 0.0;
            for (int64_t cc = 0; cc < cpg; ++cc) {
              const int64_t c = (f / fpg) * cpg + cc, dg = c / cpd;
              for (int64_t i = 0; i < o.kh; ++i)
                for (int64_t j = 0; j < o.kw; ++j) {
                  const int64_t tap = i * o.kw + j;
                  const double py = static_cast<double>(oy * o.stride - o.pad + i * o.dilate) +
                                    At4(off, n, (dg * o.kh * o.kw + tap) * 2, oy, ox);
                  const double px = static_cast<double>(ox * o.stride - o.pad + j * o.dilate) +
                                    At4(off, n, (dg * o.kh * o.kw + tap) * 2 + 1, oy, ox);
                  double v = 0;
                  if (mask == nullptr) {
                    if (py >= 0 && px >= 0 && py < static_cast<double>(h) &&
                        px < static_cast<double>(w))
                      v = BilinearClamped(x, n, c, py, px);
                  } else {
                    if (py > -1 && px > -1 && py < static_cast<double>(h) &&
                        px < static_cast<double>(w))
                      v = BilinearZero(x, n, c, py, px);
                    v *= At4(*mask, n, dg * o.kh * o.kw + tap, oy, ox);
                  }
                  acc += v * wt[((f * cpg + cc) * o.kh + i) * o.kw + j];
                }
            }
            y[((n * o.filters + f) * oh + oy) * ow + ox] = acc;
          }
    return std::vector<RefTensor>{y};
  };
}

OpCase DeformCase(const DeformOpts& o, Shape data, std::string note) {
  const int64_t ext_h = o.dilate * (o.kh - 1) + 1, ext_w = o.dilate * (o.kw - 1) + 1;
  const int64_t oh = (data[2] + 2 * o.pad - ext_h) / o.stride + 1;
  const int64_t ow = (data[3] + 2 * o.pad - ext_w) / o.stride + 1;
  const int64_t taps = o.dgroups * o.kh * o.kw;
  std::vector<Shape> shapes = {data, {data[0], 2 * taps, oh, ow}};
  std::vector<InputGen> gens = {Uniform(-1, 1), Uniform(-2.5, 2.5)};
  if (o.modulated) shapes.push_back({data[0], taps, oh, ow}), gens.push_back(Uniform(0, 1));
  shapes.push_back({o.filters, data[1] / o.groups, o.kh, o.kw});
  gens.push_back(Uniform(-0.5, 0.5));
  if (o.bias) shapes.push_back({o.filters}), gens.push_back(Uniform(-1, 1));
  const std::string op =
      o.modulated ? "_contrib_ModulatedDeformableConvolution" : "_contrib_DeformableConvolution";
  return WithTol(
      WithGen(Case(op, DeformAttrs(o), shapes, DeformRef(o), std::move(note)), PerInput(gens)),
      1e-4, 1e-5);
}

// ---- Correlation ------------------------------------------------------------------------------

RefFn CorrelationRef(int64_t k, int64_t md, int64_t s1, int64_t s2, int64_t pad, bool mul) {
  return [=](const std::vector<RefTensor>& in) {
    const RefTensor &a = in[0], &b = in[1];
    const int64_t n_n = a.shape[0], c_n = a.shape[1], h = a.shape[2], w = a.shape[3];
    const int64_t border = md + (k - 1) / 2, r = md / s2, grid = 2 * r + 1;
    const int64_t th = static_cast<int64_t>(
        std::ceil(static_cast<double>(h + 2 * pad - 2 * border) / static_cast<double>(s1)));
    const int64_t tw = static_cast<int64_t>(
        std::ceil(static_cast<double>(w + 2 * pad - 2 * border) / static_cast<double>(s1)));
    RefTensor y(Shape{n_n, grid * grid, th, tw});
    auto padded = [&](const RefTensor& t, int64_t n, int64_t c, int64_t yy, int64_t xx) {
      yy -= pad, xx -= pad;
      return (yy < 0 || yy >= h || xx < 0 || xx >= w) ? 0.0 : At4(t, n, c, yy, xx);
    };
    for (int64_t n = 0; n < n_n; ++n)
      for (int64_t dy = -r; dy <= r; ++dy)
        for (int64_t dx = -r; dx <= r; ++dx)
          for (int64_t i = 0; i < th; ++i)
            for (int64_t j = 0; j < tw; ++j) {
              // Patch centers: (i * s1 + border, j * s1 + border) and displaced by (dy, dx) * s2.
              const int64_t cy = i * s1 + border, cx = j * s1 + border;
              double acc = 0;
              for (int64_t u = -(k - 1) / 2; u <= (k - 1) / 2; ++u)
                for (int64_t v = -(k - 1) / 2; v <= (k - 1) / 2; ++v)
                  for (int64_t c = 0; c < c_n; ++c) {
                    const double p = padded(a, n, c, cy + u, cx + v);
                    const double q = padded(b, n, c, cy + dy * s2 + u, cx + dx * s2 + v);
                    acc += mul ? p * q : std::fabs(p - q);
                  }
              y[((n * grid * grid + (dy + r) * grid + (dx + r)) * th + i) * tw + j] =
                  acc / static_cast<double>(k * k * c_n);
            }
    return std::vector<RefTensor>{y};
  };
}

// ---- image transforms (HWC) -------------------------------------------------------------------

RefFn ToTensorRef() {
  return [](const std::vector<RefTensor>& in) {
    const Shape& s = in[0].shape;
    const bool batched = s.ndim() == 4;
    const int64_t n_n = batched ? s[0] : 1, h = s[batched ? 1 : 0], w = s[batched ? 2 : 1];
    const int64_t c_n = s[s.ndim() - 1];
    RefTensor y(batched ? Shape{n_n, c_n, h, w} : Shape{c_n, h, w});
    for (int64_t n = 0; n < n_n; ++n)
      for (int64_t c = 0; c < c_n; ++c)
        for (int64_t p = 0; p < h * w; ++p)
          y[(n * c_n + c) * h * w + p] = in[0][(n * h * w + p) * c_n + c] / 255.0;
    return std::vector<RefTensor>{y};
  };
}

RefFn ImageNormalizeRef(std::vector<double> mean, std::vector<double> std) {
  return [=](const std::vector<RefTensor>& in) {
    const Shape& s = in[0].shape;
    const int64_t c_n = s[s.ndim() == 3 ? 0 : 1], plane = s[s.ndim() - 1] * s[s.ndim() - 2];
    RefTensor y(s);
    for (int64_t i = 0; i < y.size(); ++i) {
      const size_t c = static_cast<size_t>((i / plane) % c_n);
      y[i] = (in[0][i] - mean[mean.size() == 1 ? 0 : c]) / std[std.size() == 1 ? 0 : c];
    }
    return std::vector<RefTensor>{y};
  };
}

// OpenCV's resize of HWC images: nearest takes floor(dst * in / out); bilinear samples
// (dst + 0.5) * in / out - 0.5 clamped into the image.
RefFn ImageResizeRef(int64_t oh, int64_t ow, bool nearest) {
  return [=](const std::vector<RefTensor>& in) {
    const Shape& s = in[0].shape;
    const bool batched = s.ndim() == 4;
    const int64_t n_n = batched ? s[0] : 1, ih = s[batched ? 1 : 0], iw = s[batched ? 2 : 1];
    const int64_t c_n = s[s.ndim() - 1];
    RefTensor y(batched ? Shape{n_n, oh, ow, c_n} : Shape{oh, ow, c_n});
    auto at = [&](int64_t n, int64_t r, int64_t q, int64_t c) {
      return in[0][((n * ih + r) * iw + q) * c_n + c];
    };
    for (int64_t n = 0; n < n_n; ++n)
      for (int64_t r = 0; r < oh; ++r)
        for (int64_t q = 0; q < ow; ++q)
          for (int64_t c = 0; c < c_n; ++c) {
            double v;
            if (nearest) {
              const int64_t sr = std::min(r * ih / oh, ih - 1), sq = std::min(q * iw / ow, iw - 1);
              v = at(n, sr, sq, c);
            } else {
              const double sy =
                  std::clamp((static_cast<double>(r) + 0.5) * static_cast<double>(ih) /
                                     static_cast<double>(oh) -
                                 0.5,
                             0.0, static_cast<double>(ih - 1));
              const double sx =
                  std::clamp((static_cast<double>(q) + 0.5) * static_cast<double>(iw) /
                                     static_cast<double>(ow) -
                                 0.5,
                             0.0, static_cast<double>(iw - 1));
              const int64_t y0 = static_cast<int64_t>(sy), x0 = static_cast<int64_t>(sx);
              const int64_t y1 = std::min(y0 + 1, ih - 1), x1 = std::min(x0 + 1, iw - 1);
              const double fy = sy - static_cast<double>(y0), fx = sx - static_cast<double>(x0);
              v = (1 - fy) * ((1 - fx) * at(n, y0, x0, c) + fx * at(n, y0, x1, c)) +
                  fy * ((1 - fx) * at(n, y1, x0, c) + fx * at(n, y1, x1, c));
            }
            y[((n * oh + r) * ow + q) * c_n + c] = v;
          }
    return std::vector<RefTensor>{y};
  };
}

RefFn ImageCropRef(int64_t x0, int64_t y0, int64_t w, int64_t h) {
  return [=](const std::vector<RefTensor>& in) {
    const Shape& s = in[0].shape;
    const bool batched = s.ndim() == 4;
    const int64_t n_n = batched ? s[0] : 1, ih = s[batched ? 1 : 0], iw = s[batched ? 2 : 1];
    const int64_t c_n = s[s.ndim() - 1];
    RefTensor y(batched ? Shape{n_n, h, w, c_n} : Shape{h, w, c_n});
    for (int64_t n = 0; n < n_n; ++n)
      for (int64_t r = 0; r < h; ++r)
        for (int64_t q = 0; q < w; ++q)
          for (int64_t c = 0; c < c_n; ++c)
            y[((n * h + r) * w + q) * c_n + c] = in[0][((n * ih + y0 + r) * iw + x0 + q) * c_n + c];
    return std::vector<RefTensor>{y};
  };
}

RefFn FlipRef(bool left_right) {
  return [=](const std::vector<RefTensor>& in) {
    const Shape& s = in[0].shape;
    RefTensor y(s);
    for (int64_t r = 0; r < s[0]; ++r)
      for (int64_t q = 0; q < s[1]; ++q)
        for (int64_t c = 0; c < s[2]; ++c) {
          const int64_t sr = left_right ? r : s[0] - 1 - r, sq = left_right ? s[1] - 1 - q : q;
          y[(r * s[1] + q) * s[2] + c] = in[0][(sr * s[1] + sq) * s[2] + c];
        }
    return std::vector<RefTensor>{y};
  };
}

// AlexNet PCA lighting: eigenvectors (rows R, G, B) times eigenvalues times alpha.
RefFn LightingRef(std::vector<double> alpha, bool uint8) {
  return [=](const std::vector<RefTensor>& in) {
    const double eigval[3] = {55.46, 4.794, 1.148};
    const double eigvec[3][3] = {
        {-0.5675, 0.7192, 0.4009}, {-0.5808, -0.0045, -0.8140}, {-0.5836, -0.6948, 0.4203}};
    double shift[3];
    for (int k = 0; k < 3; ++k) {
      shift[k] = 0;
      for (int j = 0; j < 3; ++j)
        shift[k] += eigvec[k][j] * eigval[j] * alpha[static_cast<size_t>(j)];
    }
    RefTensor y(in[0].shape);
    for (int64_t i = 0; i < y.size(); ++i) {
      const double v = in[0][i] + shift[i % 3];
      y[i] = uint8 ? std::trunc(std::clamp(v, 0.0, 255.0)) : v;
    }
    return std::vector<RefTensor>{y};
  };
}

OpCase Typed(OpCase c, std::vector<DType> dtypes) {
  c.dtypes = std::move(dtypes);
  return c;
}

}  // namespace

HN_CONFORMANCE_CASES(Vision) {
  // ---- UpSampling
  cases->push_back(Case("UpSampling",
                        {{"scale", "2"}, {"sample_type", "nearest"}, {"num_args", "1"}},
                        {{2, 3, 3, 4}}, NearestUpRef(2, false), "nearest"));
  cases->push_back(
      Case("UpSampling", {{"scale", "2"}, {"sample_type", "nearest"}, {"num_args", "3"}},
           {{1, 2, 4, 4}, {1, 1, 2, 2}, {1, 3, 8, 8}}, NearestUpRef(2, false), "nearest_concat"));
  cases->push_back(Case(
      "UpSampling",
      {{"scale", "3"}, {"sample_type", "nearest"}, {"num_args", "2"}, {"multi_input_mode", "sum"}},
      {{2, 2, 2, 2}, {2, 2, 6, 6}}, NearestUpRef(3, true), "nearest_sum"));
  for (int64_t s : {2, 3}) {
    const int64_t k = 2 * s - s % 2;
    cases->push_back(WithTol(
        Case("UpSampling",
             {{"scale", std::to_string(s)},
              {"sample_type", "bilinear"},
              {"num_args", "2"},
              {"num_filter", "3"}},
             {{2, 3, 4, 5}, {3, 1, k, k}}, BilinearUpRef(s), "bilinear_scale" + std::to_string(s)),
        1e-5, 1e-5));
  }
  cases->push_back(
      Typed(Case("UpSampling", {{"scale", "2"}, {"sample_type", "nearest"}, {"num_args", "1"}},
                 {{1, 2, 3, 3}}, NearestUpRef(2, false), "float64"),
            {DType::kFloat64}));

  // ---- BilinearResize2D: every mode, both alignments
  {
    auto add = [&](AttrDict attrs, Shape in, std::pair<int64_t, int64_t> out, bool align,
                   std::string note) {
      cases->push_back(WithTol(Case("_contrib_BilinearResize2D", attrs, {in},
                                    ResizeRef(FixedSize(out.first, out.second), align), note),
                               1e-5, 1e-5));
    };
    add({{"height", "7"}, {"width", "9"}}, {2, 2, 4, 5}, {7, 9}, true, "size_align");
    add({{"height", "3"}, {"width", "2"}, {"align_corners", "False"}}, {1, 3, 6, 5}, {3, 2}, false,
        "size_down");
    add({{"height", "9"}, {"width", "11"}, {"align_corners", "False"}}, {1, 2, 4, 5}, {9, 11},
        false, "size_up");
    add({{"scale_height", "1.5"}, {"scale_width", "0.6"}}, {1, 2, 4, 5}, {6, 3}, true, "scales");
    add({{"scale_width", "2"}, {"height", "3"}, {"width", "4"}}, {1, 1, 5, 5}, {3, 4}, true,
        "scale_width_alone_ignored");
    add({{"mode", "odd_scale"}, {"scale_height", "2"}, {"scale_width", "0.5"}}, {1, 2, 5, 6},
        {9, 3}, true, "odd_scale");
    add({{"mode", "to_even_down"}}, {1, 1, 5, 6}, {4, 6}, true, "to_even_down");
    add({{"mode", "to_even_up"}, {"align_corners", "False"}}, {1, 1, 5, 6}, {6, 6}, false,
        "to_even_up");
    add({{"mode", "to_odd_down"}}, {1, 1, 5, 6}, {5, 5}, true, "to_odd_down");
    add({{"mode", "to_odd_up"}}, {1, 1, 4, 7}, {5, 7}, true, "to_odd_up");
    add({{"height", "4"}, {"width", "5"}}, {1, 2, 4, 5}, {4, 5}, true, "same_size_copies");
    cases->push_back(NonDefaultInputs(
        WithTol(Case("_contrib_BilinearResize2D", {{"mode", "like"}, {"align_corners", "False"}},
                     {{2, 2, 3, 4}, {2, 5, 7, 6}},
                     ResizeRef(
                         [](const std::vector<RefTensor>& in) {
                           return std::make_pair(in[1].shape[2], in[1].shape[3]);
                         },
                         false),
                     "like"),
                1e-5, 1e-5)));
    cases->push_back(
        Typed(WithTol(Case("_contrib_BilinearResize2D", {{"height", "5"}, {"width", "3"}},
                           {{1, 2, 3, 4}}, ResizeRef(FixedSize(5, 3), true), "float64"),
                      1e-12, 1e-12),
              {DType::kFloat64}));
    // The backward op: (out_grad, data[, like]) -> the adjoint of the resize.
    auto backward = [&](AttrDict attrs, std::vector<Shape> in, bool align, std::string note) {
      const int64_t oh = in[0][2], ow = in[0][3];
      OpCase c = InternalCase(
          WithTol(Case("_backward_contrib_BilinearResize2D", attrs, in,
                       AdjointBackwardRef(ResizeRef(FixedSize(oh, ow), align)), std::move(note)),
                  1e-5, 1e-5));
      cases->push_back(in.size() > 2 ? NonDefaultInputs(c) : c);
    };
    backward({{"height", "7"}, {"width", "9"}}, {{2, 2, 7, 9}, {2, 2, 4, 5}}, true, "size_align");
    backward({{"height", "3"}, {"width", "2"}, {"align_corners", "False"}},
             {{1, 3, 3, 2}, {1, 3, 6, 5}}, false, "size_down");
    backward({{"mode", "to_odd_up"}}, {{1, 1, 5, 7}, {1, 1, 4, 7}}, true, "to_odd_up");
    backward({{"height", "4"}, {"width", "5"}}, {{1, 2, 4, 5}, {1, 2, 4, 5}}, true, "same_size");
    backward({{"mode", "like"}, {"align_corners", "False"}},
             {{2, 2, 7, 6}, {2, 2, 3, 4}, {2, 5, 7, 6}}, false, "like");
  }

  // ---- L2Normalization
  for (const char* mode : {"instance", "channel", "spatial"}) {
    cases->push_back(WithTol(
        Case("L2Normalization", {{"mode", mode}}, {{2, 3, 4, 5}}, L2NormRef(mode, 1e-10), mode),
        1e-5, 1e-6));
  }
  cases->push_back(WithTol(
      Case("L2Normalization", {{"eps", "0.5"}}, {{3, 4}}, L2NormRef("instance", 0.5), "2d_eps"),
      1e-5, 1e-6));
  cases->push_back(Typed(Case("L2Normalization", {{"mode", "channel"}}, {{2, 3, 6}},
                              L2NormRef("channel", 1e-10), "float64"),
                         {DType::kFloat64}));
  // Its gradient (out_grad, data) -> d data, in each mode and in float64.
  for (const char* mode : {"instance", "channel", "spatial"}) {
    OpCase c =
        WithTol(Case("_backward_L2Normalization", {{"mode", mode}}, {{2, 3, 2, 2}, {2, 3, 2, 2}},
                     VjpRef(L2NormRef(mode, 1e-10), AfterOutGrad, {0}), mode),
                1e-5, 1e-6);
    c.check_json = false;
    cases->push_back(c);
  }
  OpCase l2_float64 = Typed(
      Case("_backward_L2Normalization", {{"mode", "channel"}, {"eps", "0.5"}},
           {{2, 3, 4}, {2, 3, 4}}, VjpRef(L2NormRef("channel", 0.5), AfterOutGrad, {0}), "float64"),
      {DType::kFloat64, DType::kFloat64});
  l2_float64.check_json = false;
  cases->push_back(l2_float64);

  // ---- ROIPooling: ROIs partly outside, tiny, and pointing at no image (zeros)
  cases->push_back(
      WithGen(Case("ROIPooling", {{"pooled_size", "(3, 2)"}, {"spatial_scale", "0.25"}},
                   {{2, 3, 8, 10}, {10, 5}}, ROIPoolingRef(3, 2, 0.25), "scale_quarter"),
              PerInput({Uniform(-2, 2), Values(Rois(10, 2, 40, 32, 50))})));
  cases->push_back(
      WithGen(Case("_npx_roi_pooling", {{"pooled_size", "(2, 2)"}, {"spatial_scale", "1"}},
                   {{1, 2, 7, 6}, {6, 5}}, ROIPoolingRef(2, 2, 1), "alias_scale_one"),
              PerInput({Uniform(-2, 2), Values(Rois(6, 1, 6, 7, 51))})));

  cases->push_back(InternalCase(
      WithGen(Case("_backward_ROIPooling", {{"pooled_size", "(3, 2)"}, {"spatial_scale", "0.25"}},
                   {{10, 3, 3, 2}, {2, 3, 8, 10}, {10, 5}}, ROIPoolingBackwardRef(3, 2, 0.25)),
              PerInput({Uniform(-1, 1), Uniform(-2, 2), Values(Rois(10, 2, 40, 32, 50))}))));
  cases->push_back(InternalCase(Typed(
      WithGen(Case("_backward_ROIPooling", {{"pooled_size", "(2, 2)"}, {"spatial_scale", "1"}},
                   {{6, 2, 2, 2}, {1, 2, 7, 6}, {6, 5}}, ROIPoolingBackwardRef(2, 2, 1), "float64"),
              PerInput({Uniform(-1, 1), Uniform(-2, 2), Values(Rois(6, 1, 6, 7, 51))})),
      {DType::kFloat64, DType::kFloat64, DType::kFloat64})));

  // ---- ROIAlign: sampling ratios, aligned, position-sensitive, float64
  {
    auto align = [&](AttrDict attrs, Shape data, int64_t ph, int64_t pw, double scale, int ratio,
                     bool ps, bool aligned, uint32_t seed, std::string note, bool invalid = false) {
      const double img_w = static_cast<double>(data[3]) / scale,
                   img_h = static_cast<double>(data[2]) / scale;
      // The ROIs get MXNet's zero gradient, not their derivative: the gradient is declared.
      const RefFn ref = ROIAlignRef(ph, pw, scale, ratio, ps, aligned);
      OpCase c = WithGradient(Case("_contrib_ROIAlign", attrs, {data, {8, 5}}, ref, note),
                              AdjointGradient(ref));
      c = WithTol(WithGen(c, PerInput({Uniform(-2, 2),
                                       Values(Rois(8, data[0], img_w, img_h, seed, invalid))})),
                  1e-4, 1e-5);
      if (invalid) {
        c = NotInMXNet(c,
                       "MXNet's CPU kernel writes only element n of the output for an ROI with a "
                       "negative batch index and leaves the rest of its block unwritten; here "
                       "the block is zeros");
      }
      cases->push_back(c);
      // Its backward op, on the same ROIs.
      const Shape dy{8, ps ? data[1] / (ph * pw) : data[1], ph, pw};
      cases->push_back(InternalCase(WithTol(
          WithGen(
              Case("_backward_ROIAlign", attrs, {dy, data, {8, 5}}, AdjointBackwardRef(ref), note),
              PerInput({Uniform(-1, 1), Uniform(-2, 2),
                        Values(Rois(8, data[0], img_w, img_h, seed, invalid))})),
          1e-4, 1e-5)));
    };
    align({{"pooled_size", "(2, 3)"}, {"spatial_scale", "0.5"}, {"sample_ratio", "2"}},
          {2, 3, 7, 9}, 2, 3, 0.5, 2, false, false, 52, "ratio2");
    align({{"pooled_size", "(3, 3)"}, {"spatial_scale", "0.25"}}, {2, 2, 8, 8}, 3, 3, 0.25, -1,
          false, false, 53, "adaptive_ratio");
    align({{"pooled_size", "(2, 2)"},
           {"spatial_scale", "0.5"},
           {"sample_ratio", "2"},
           {"aligned", "True"}},
          {1, 2, 6, 7}, 2, 2, 0.5, 2, false, true, 54, "aligned");
    align({{"pooled_size", "(2, 2)"}, {"spatial_scale", "0.5"}, {"position_sensitive", "True"}},
          {2, 8, 6, 6}, 2, 2, 0.5, -1, true, false, 55, "position_sensitive");
    align({{"pooled_size", "(2, 2)"}, {"spatial_scale", "0.5"}, {"sample_ratio", "1"}},
          {2, 2, 5, 5}, 2, 2, 0.5, 1, false, false, 56, "negative_batch_index", true);
    const RefFn ref = ROIAlignRef(2, 2, 0.5, -1, false, false);
    OpCase c = WithGradient(
        Case("_contrib_ROIAlign", {{"pooled_size", "(2, 2)"}, {"spatial_scale", "0.5"}},
             {{1, 2, 6, 6}, {5, 5}}, ref, "float64"),
        AdjointGradient(ref));
    c = WithGen(c, PerInput({Uniform(-2, 2), Values(Rois(5, 1, 12, 12, 57, false))}));
    cases->push_back(WithTol(Typed(c, {DType::kFloat64, DType::kFloat64}), 1e-10, 1e-10));
  }

  // ---- RROIAlign
  cases->push_back(WithTol(
      WithGen(Case("_contrib_RROIAlign", {{"pooled_size", "(2, 3)"}, {"spatial_scale", "0.5"}},
                   {{2, 2, 6, 7}, {6, 6}}, RROIAlignRef(2, 3, 0.5, -1), "adaptive"),
              PerInput({Uniform(-2, 2), Values(RotatedRois(6, 2, 14, 12, 58))})),
      1e-4, 1e-5));
  cases->push_back(WithTol(
      WithGen(Case("_contrib_RROIAlign",
                   {{"pooled_size", "(2, 2)"}, {"spatial_scale", "1"}, {"sampling_ratio", "2"}},
                   {{1, 3, 5, 5}, {4, 6}}, RROIAlignRef(2, 2, 1, 2), "ratio2"),
              PerInput({Uniform(-2, 2), Values(RotatedRois(4, 1, 5, 5, 59))})),
      1e-4, 1e-5));

  // ---- PSROIPooling
  cases->push_back(
      WithTol(WithGen(Case("_contrib_PSROIPooling",
                           {{"spatial_scale", "0.5"}, {"output_dim", "2"}, {"pooled_size", "3"}},
                           {{2, 18, 6, 7}, {7, 5}}, PSROIPoolingRef(0.5, 2, 3, 3), "group_default"),
                      PerInput({Uniform(-2, 2), Values(Rois(7, 2, 14, 12, 60, false))})),
              1e-5, 1e-6));
  cases->push_back(
      WithTol(WithGen(Case("_contrib_PSROIPooling",
                           {{"spatial_scale", "0.25"},
                            {"output_dim", "3"},
                            {"pooled_size", "4"},
                            {"group_size", "2"}},
                           {{1, 12, 6, 6}, {5, 5}}, PSROIPoolingRef(0.25, 3, 4, 2), "group2"),
                      PerInput({Uniform(-2, 2), Values(Rois(5, 1, 24, 24, 61, false))})),
              1e-5, 1e-6));
  cases->push_back(NotInMXNet(
      WithTol(WithGen(Case("_contrib_PSROIPooling",
                           {{"spatial_scale", "0.5"}, {"output_dim", "1"}, {"pooled_size", "2"}},
                           {{1, 4, 5, 5}, {5, 5}}, PSROIPoolingRef(0.5, 1, 2, 2),
                           "negative_batch_index"),
                      PerInput({Uniform(-2, 2), Values(Rois(5, 1, 10, 10, 62))})),
              1e-5, 1e-6),
      "MXNet's CPU kernel reads outside the batch for an ROI with a negative batch index; here "
      "its output is zeros"));

  // ---- DeformablePSROIPooling
  {
    auto add = [&](AttrDict attrs, bool no_trans, int64_t classes, int64_t part, int64_t spp,
                   double trans_std, uint32_t seed, std::string note) {
      std::vector<Shape> shapes = {{2, 18, 6, 7}, {6, 5}};
      std::vector<InputGen> gens = {Uniform(-2, 2), Values(Rois(6, 2, 14, 12, seed, false))};
      if (!no_trans) shapes.push_back({6, 2 * classes, part, part}), gens.push_back(Uniform(-2, 2));
      cases->push_back(WithTol(
          WithGen(
              Case("_contrib_DeformablePSROIPooling", attrs, shapes,
                   DeformablePSRef(0.5, 2, 3, 3, part, spp, trans_std, no_trans), std::move(note)),
              PerInput(gens)),
          1e-4, 1e-5));
    };
    add({{"spatial_scale", "0.5"},
         {"output_dim", "2"},
         {"group_size", "3"},
         {"pooled_size", "3"},
         {"no_trans", "True"}},
        true, 1, 3, 1, 0, 63, "no_trans");
    add({{"spatial_scale", "0.5"},
         {"output_dim", "2"},
         {"group_size", "3"},
         {"pooled_size", "3"},
         {"trans_std", "0.1"},
         {"sample_per_part", "2"}},
        false, 1, 3, 2, 0.1, 64, "trans");
    add({{"spatial_scale", "0.5"},
         {"output_dim", "2"},
         {"group_size", "3"},
         {"pooled_size", "3"},
         {"trans_std", "0.2"},
         {"sample_per_part", "3"},
         {"part_size", "2"}},
        false, 2, 2, 3, 0.2, 65, "per_class_parts");
  }

  // ---- GridGenerator, BilinearSampler, SpatialTransformer (grids reaching outside the image)
  {
    auto affine_grid = [](int64_t h, int64_t w) {
      return [h, w](const std::vector<RefTensor>& in) {
        const int64_t n_n = in[0].shape[0];
        RefTensor y(Shape{n_n, 2, h, w});
        for (int64_t n = 0; n < n_n; ++n)
          for (int64_t p = 0; p < h * w; ++p) {
            const auto [gx, gy] = AffinePoint(&in[0].v[static_cast<size_t>(n * 6)], p, h, w);
            y[(n * 2) * h * w + p] = gx, y[(n * 2 + 1) * h * w + p] = gy;
          }
        return std::vector<RefTensor>{y};
      };
    };
    cases->push_back(
        WithTol(Case("GridGenerator", {{"transform_type", "affine"}, {"target_shape", "(4, 5)"}},
                     {{2, 6}}, affine_grid(4, 5), "affine"),
                1e-5, 1e-6));
    const RefFn warp_grid = [](const std::vector<RefTensor>& in) {
      const Shape& s = in[0].shape;
      RefTensor y(s);
      for (int64_t n = 0; n < s[0]; ++n)
        for (int64_t i = 0; i < s[2]; ++i)
          for (int64_t j = 0; j < s[3]; ++j) {
            const int64_t px = ((n * 2) * s[2] + i) * s[3] + j, py = px + s[2] * s[3];
            y[px] =
                (in[0][px] + static_cast<double>(j)) / ((static_cast<double>(s[3]) - 1) / 2) - 1;
            y[py] =
                (in[0][py] + static_cast<double>(i)) / ((static_cast<double>(s[2]) - 1) / 2) - 1;
          }
      return std::vector<RefTensor>{y};
    };
    cases->push_back(WithTol(
        Case("GridGenerator", {{"transform_type", "warp"}}, {{2, 2, 3, 4}}, warp_grid, "warp"),
        1e-5, 1e-6));
    cases->push_back(InternalCase(WithTol(
        Case("_backward_GridGenerator", {{"transform_type", "affine"}, {"target_shape", "(4, 5)"}},
             {{2, 2, 4, 5}, {2, 6}}, AdjointBackwardRef(affine_grid(4, 5)), "affine"),
        1e-5, 1e-6)));
    cases->push_back(InternalCase(
        WithTol(Case("_backward_GridGenerator", {{"transform_type", "warp"}},
                     {{2, 2, 3, 4}, {2, 2, 3, 4}}, AdjointBackwardRef(warp_grid), "warp"),
                1e-5, 1e-6)));
    // (data, grid) -> the samples; grid_point reads point (n, p) of a grid.
    auto grid_point = [](const RefTensor& g) {
      const int64_t hw = g.shape[2] * g.shape[3];
      return [&g, hw](int64_t n, int64_t p) {
        return std::make_pair(g[(n * 2) * hw + p], g[(n * 2 + 1) * hw + p]);
      };
    };
    const RefFn sampler = [grid_point](const std::vector<RefTensor>& in) {
      return std::vector<RefTensor>{
          SampleRef(in[0], in[1].shape[2], in[1].shape[3], grid_point(in[1]))};
    };
    cases->push_back(WithTol(
        WithGen(Case("BilinearSampler", {}, {{2, 3, 5, 6}, {2, 2, 4, 7}}, sampler, "grid_outside"),
                PerInput({Uniform(-2, 2), Uniform(-1.4, 1.4)})),
        1e-5, 1e-6));
    // Its backward op: (out_grad, data, grid) -> the adjoint for data, the slopes for the grid.
    cases->push_back(InternalCase(WithTol(
        WithGen(Case("_backward_BilinearSampler", {}, {{2, 3, 4, 7}, {2, 3, 5, 6}, {2, 2, 4, 7}},
                     [sampler, grid_point](const std::vector<RefTensor>& in) {
                       std::vector<RefTensor> grads = AdjointBackwardRef(sampler)(in);
                       const RefTensor& g = in[2];
                       const int64_t hw = g.shape[2] * g.shape[3];
                       const auto slopes =
                           SampleGridGradRef(in[0], in[1], g.shape[2], g.shape[3], grid_point(g));
                       for (int64_t n = 0; n < g.shape[0]; ++n)
                         for (int64_t p = 0; p < hw; ++p) {
                           const auto [dgx, dgy] = slopes[static_cast<size_t>(n * hw + p)];
                           grads[1][(n * 2) * hw + p] = dgx;
                           grads[1][(n * 2 + 1) * hw + p] = dgy;
                         }
                       return grads;
                     }),
                PerInput({Uniform(-1, 1), Uniform(-2, 2), Uniform(-1.4, 1.4)})),
        1e-5, 1e-6)));
    cases->push_back(WithTol(
        WithGen(
            Case(
                "SpatialTransformer",
                {{"target_shape", "(4, 6)"},
                 {"transform_type", "affine"},
                 {"sampler_type", "bilinear"}},
                {{2, 2, 5, 5}, {2, 6}},
                [](const std::vector<RefTensor>& in) {
                  return std::vector<RefTensor>{SampleRef(in[0], 4, 6, [&](int64_t n, int64_t p) {
                    return AffinePoint(&in[1].v[static_cast<size_t>(n * 6)], p, 4, 6);
                  })};
                },
                "affine"),
            PerInput({Uniform(-2, 2),
                      Values({1.1, 0.2, 0.1, -0.3, 0.9, -0.2, 0.6, -0.5, 0.4, 0.5, 0.7, 0.3})})),
        1e-5, 1e-6));
    // Its backward op: the sampler's gradients, the grid's carried to loc (x, y, 1).
    const RefFn transformer = [](const std::vector<RefTensor>& in) {
      return std::vector<RefTensor>{SampleRef(in[0], 4, 6, [&](int64_t n, int64_t p) {
        return AffinePoint(&in[1].v[static_cast<size_t>(n * 6)], p, 4, 6);
      })};
    };
    cases->push_back(InternalCase(WithTol(
        WithGen(Case("_backward_SpatialTransformer",
                     {{"target_shape", "(4, 6)"},
                      {"transform_type", "affine"},
                      {"sampler_type", "bilinear"}},
                     {{2, 2, 4, 6}, {2, 2, 5, 5}, {2, 6}},
                     [transformer](const std::vector<RefTensor>& in) {
                       std::vector<RefTensor> grads = AdjointBackwardRef(transformer)(in);
                       const RefTensor& loc = in[2];
                       const auto slopes =
                           SampleGridGradRef(in[0], in[1], 4, 6, [&](int64_t n, int64_t p) {
                             return AffinePoint(&loc.v[static_cast<size_t>(n * 6)], p, 4, 6);
                           });
                       const double unit[6] = {1, 0, 0, 0, 1, 0};  // the identity: target points
                       for (int64_t n = 0; n < loc.shape[0]; ++n)
                         for (int64_t p = 0; p < 24; ++p) {
                           const auto [xs, ys] = AffinePoint(unit, p, 4, 6);
                           const auto [dgx, dgy] = slopes[static_cast<size_t>(n * 24 + p)];
                           const double point[3] = {xs, ys, 1};
                           for (int k = 0; k < 3; ++k) {
                             grads[1][n * 6 + k] += dgx * point[k];
                             grads[1][n * 6 + 3 + k] += dgy * point[k];
                           }
                         }
                       return grads;
                     }),
                // Transforms that put no target point on a pixel row or column (a kink).
                PerInput({Uniform(-1, 1), Uniform(-2, 2),
                          Values({1.07, 0.21, 0.13, -0.29, 0.93, -0.17, 0.61, -0.47, 0.43, 0.52,
                                  0.71, 0.33})})),
        1e-5, 1e-6)));
  }

  // ---- deformable convolutions (offsets move taps outside the image)
  {
    DeformOpts o;
    cases->push_back(DeformCase(o, {2, 3, 5, 6}, "default"));
    o.groups = 2, o.dgroups = 2, o.filters = 4, o.bias = false;
    cases->push_back(DeformCase(o, {1, 4, 5, 5}, "groups"));
    o = DeformOpts{};
    o.stride = 2, o.dilate = 2, o.pad = 2, o.kh = 3, o.kw = 2;
    cases->push_back(DeformCase(o, {1, 2, 7, 8}, "stride_dilate"));
    DeformOpts m;
    m.modulated = true;
    cases->push_back(DeformCase(m, {2, 3, 5, 6}, "default"));
    m.groups = 2, m.dgroups = 2, m.bias = false, m.stride = 2;
    cases->push_back(DeformCase(m, {1, 4, 6, 6}, "groups_stride"));
  }

  // ---- Correlation
  cases->push_back(
      WithTol(Case("Correlation", {{"max_displacement", "2"}, {"pad_size", "2"}},
                   {{2, 3, 5, 6}, {2, 3, 5, 6}}, CorrelationRef(1, 2, 1, 1, 2, true), "multiply"),
              1e-5, 1e-6));
  cases->push_back(WithTol(
      Case("Correlation",
           {{"kernel_size", "3"},
            {"max_displacement", "2"},
            {"stride1", "2"},
            {"stride2", "2"},
            {"pad_size", "3"},
            {"is_multiply", "False"}},
           {{1, 2, 7, 8}, {1, 2, 7, 8}}, CorrelationRef(3, 2, 2, 2, 3, false), "absdiff_strides"),
      1e-5, 1e-6));

  // ---- image transforms
  cases->push_back(WithGen(
      Typed(Case("_image_to_tensor", {}, {{4, 5, 3}}, ToTensorRef(), "uint8"), {DType::kUint8}),
      Integers(0, 255)));
  cases->push_back(WithTol(
      Case("_npx__image_to_tensor", {}, {{2, 3, 4, 1}}, ToTensorRef(), "batch_float"), 1e-6, 1e-7));
  cases->push_back(WithTol(
      Case("_image_normalize",
           {{"mean", "(0.485, 0.456, 0.406)"}, {"std", "(0.229, 0.224, 0.225)"}}, {{3, 4, 5}},
           ImageNormalizeRef({0.485, 0.456, 0.406}, {0.229, 0.224, 0.225}), "per_channel"),
      1e-5, 1e-6));
  cases->push_back(
      WithTol(Case("_image_normalize", {{"mean", "0.5"}, {"std", "(0.25,)"}}, {{2, 1, 3, 3}},
                   ImageNormalizeRef({0.5}, {0.25}), "batch_one_channel"),
              1e-6, 1e-7));
  cases->push_back(WithTol(Case("_image_resize", {{"size", "(8, 7)"}}, {{5, 6, 3}},
                                ImageResizeRef(7, 8, false), "bilinear_up"),
                           1e-5, 1e-6));
  cases->push_back(WithTol(Case("_image_resize", {{"size", "(4, 3)"}}, {{2, 7, 9, 3}},
                                ImageResizeRef(3, 4, false), "bilinear_down_batch"),
                           1e-5, 1e-6));
  cases->push_back(WithTol(Case("_image_resize", {{"size", "4"}, {"keep_ratio", "True"}},
                                {{5, 6, 1}}, ImageResizeRef(4, 4, false), "keep_ratio"),
                           1e-5, 1e-6));
  cases->push_back(WithGen(Typed(Case("_image_resize", {{"size", "(5, 7)"}, {"interp", "0"}},
                                      {{3, 4, 3}}, ImageResizeRef(7, 5, true), "nearest_uint8"),
                                 {DType::kUint8}),
                           Integers(0, 255)));
  // OpenCV's uint8 bilinear rounds in fixed point: within 1 of the exact value (MXNet's check is
  // exact).
  for (const auto& io :
       std::vector<std::pair<Shape, Shape>>{{{5, 6, 3}, {8, 13}}, {{9, 23, 1}, {4, 17}}}) {
    const Shape& shape = io.first;
    const int64_t oh = io.second[0], ow = io.second[1];
    cases->push_back(WithTol(
        WithGen(Typed(Case("_image_resize",
                           {{"size", "(" + std::to_string(ow) + ", " + std::to_string(oh) + ")"}},
                           {shape}, ImageResizeRef(oh, ow, false),
                           "bilinear_uint8_" + std::to_string(ow) + "x" + std::to_string(oh)),
                      {DType::kUint8}),
                Integers(0, 255)),
        0, 1));
  }
  cases->push_back(Case("_npx__image_resize", {{"size", "(3, 2)"}, {"interp", "0"}}, {{5, 7, 1}},
                        ImageResizeRef(2, 3, true), "nearest_down"));
  cases->push_back(Case("_image_crop", {{"x", "1"}, {"y", "2"}, {"width", "4"}, {"height", "3"}},
                        {{6, 7, 3}}, ImageCropRef(1, 2, 4, 3), "hwc"));
  cases->push_back(
      WithGen(Typed(Case("_image_crop", {{"x", "0"}, {"y", "1"}, {"width", "6"}, {"height", "2"}},
                         {{2, 5, 6, 1}}, ImageCropRef(0, 1, 6, 2), "batch_uint8"),
                    {DType::kUint8}),
              Integers(0, 255)));
  cases->push_back(Case("_image_flip_left_right", {}, {{4, 6, 3}}, FlipRef(true), "even"));
  cases->push_back(Case("_image_flip_top_bottom", {}, {{4, 6, 3}}, FlipRef(false), "even"));
  cases->push_back(
      WithGen(Typed(Case("_npx__image_flip_top_bottom", {}, {{6, 3, 1}}, FlipRef(false), "int32"),
                    {DType::kInt32}),
              Integers(-50, 50)));
  cases->push_back(
      NotInMXNet(Case("_image_flip_left_right", {}, {{3, 5, 3}}, FlipRef(true), "odd_width"),
                 "MXNet swaps pixel pairs only and leaves the middle column of an "
                 "odd-width image unwritten; here it is copied"));
  cases->push_back(
      NotInMXNet(Case("_image_flip_top_bottom", {}, {{5, 2, 1}}, FlipRef(false), "odd_height"),
                 "MXNet leaves the middle row of an odd-height image unwritten; here "
                 "it is copied"));
  cases->push_back(WithTol(Case("_image_adjust_lighting", {{"alpha", "(0.1, -0.2, 0.05)"}},
                                {{4, 5, 3}}, LightingRef({0.1, -0.2, 0.05}, false), "float"),
                           1e-5, 1e-5));
  cases->push_back(
      WithGen(Typed(Case("_npx__image_adjust_lighting", {{"alpha", "(1, -1, 0.5)"}}, {{3, 4, 3}},
                         LightingRef({1, -1, 0.5}, true), "uint8_saturates"),
                    {DType::kUint8}),
              Integers(0, 255)));
}

HN_ERROR_CASES(Vision) {
  const auto kInv = StatusCode::kInvalidArgument;
  const auto kShape = StatusCode::kShapeError;
  // A backward op's out_grad must have the forward output's shape.
  cases->push_back(Rejected("_backward_ROIAlign",
                            {{"pooled_size", "(2, 2)"}, {"spatial_scale", "1"}},
                            {{3, 2, 2, 2}, {1, 2, 6, 6}, {4, 5}}, kShape,
                            {"_backward_ROIAlign(node)", "out_grad", "(4, 2, 2, 2)"}));
  cases->push_back(Rejected("_backward_contrib_BilinearResize2D", {{"height", "3"}, {"width", "4"}},
                            {{1, 2, 3, 5}, {1, 2, 6, 6}}, kShape,
                            {"_backward_contrib_BilinearResize2D(node)", "out_grad"}));
  cases->push_back(
      Rejected("UpSampling", {{"scale", "2"}, {"sample_type", "bilinear"}, {"num_args", "2"}},
               {{1, 3, 4, 4}, {3, 1, 4, 4}}, kInv, {"UpSampling(node)", "num_filter"}));
  cases->push_back(Rejected("UpSampling",
                            {{"scale", "2"}, {"sample_type", "nearest"}, {"num_args", "2"}},
                            {{1, 3, 4, 4}, {1, 3, 3, 3}}, kShape, {"UpSampling(node)", "input 1"}));
  cases->push_back(Rejected("UpSampling",
                            {{"scale", "0"}, {"sample_type", "nearest"}, {"num_args", "1"}},
                            {{1, 3, 4, 4}}, kInv, {"UpSampling(node)", "scale"}));
  cases->push_back(Rejected("_contrib_BilinearResize2D", {{"mode", "odd_scale"}}, {{1, 3, 4, 4}},
                            kInv, {"_contrib_BilinearResize2D(node)", "odd_scale"}));
  cases->push_back(Rejected("_contrib_BilinearResize2D", {{"scale_height", "2"}}, {{1, 3, 4, 4}},
                            kInv, {"_contrib_BilinearResize2D(node)", "scale_width"}));
  cases->push_back(Rejected("_contrib_BilinearResize2D", {{"mode", "to_even_down"}}, {{1, 3, 1, 4}},
                            kShape, {"_contrib_BilinearResize2D(node)", "outside [1, 32767]"}));
  cases->push_back(Rejected("_contrib_BilinearResize2D", {{"height", "40000"}}, {{1, 3, 4, 4}},
                            kShape, {"_contrib_BilinearResize2D(node)", "32767"}));
  cases->push_back(Rejected("L2Normalization", {{"mode", "spatial"}}, {{2, 3}}, kShape,
                            {"L2Normalization(node)", "(2, 3)"}));
  cases->push_back(Rejected("ROIPooling", {{"pooled_size", "(2, 2)"}, {"spatial_scale", "1.5"}},
                            {{1, 3, 4, 4}, {2, 5}}, kInv, {"ROIPooling(node)", "spatial_scale"}));
  cases->push_back(Rejected("ROIPooling", {{"pooled_size", "(2, 0)"}, {"spatial_scale", "0.5"}},
                            {{1, 3, 4, 4}, {2, 5}}, kInv, {"ROIPooling(node)", "pooled_size"}));
  cases->push_back(Rejected("_contrib_ROIAlign",
                            {{"pooled_size", "(2, 2)"}, {"spatial_scale", "0.5"}},
                            {{1, 3, 4, 4}, {2, 4}}, kShape, {"_contrib_ROIAlign(node)", "rois"}));
  cases->push_back(Rejected(
      "_contrib_ROIAlign",
      {{"pooled_size", "(2, 2)"}, {"spatial_scale", "0.5"}, {"position_sensitive", "True"}},
      {{1, 6, 4, 4}, {2, 5}}, kShape, {"_contrib_ROIAlign(node)", "divisible"}));
  cases->push_back(
      Rejected("_contrib_ROIAlign", {{"pooled_size", "(2, 2)"}, {"spatial_scale", "0.5"}},
               {{1, 3, 4, 4}, {2, 5}}, StatusCode::kTypeError,
               {"_contrib_ROIAlign(node)", "float16"}, {DType::kFloat32, DType::kFloat16}));
  cases->push_back(
      Rejected("_contrib_ROIAlign",
               {{"pooled_size", "(2, 2)"}, {"spatial_scale", "0.5"}, {"sample_ratio", "100000"}},
               {{1, 3, 4, 4}, {2, 5}}, kInv,
               {"_contrib_ROIAlign(node)", "sample_ratio 100000", "HN_LIMIT_MAX_TENSOR_ELEMENTS"}));
  cases->push_back(Rejected(
      "_contrib_RROIAlign",
      {{"pooled_size", "(2, 2)"}, {"spatial_scale", "0.5"}, {"sampling_ratio", "100000"}},
      {{1, 3, 4, 4}, {2, 6}}, kInv,
      {"_contrib_RROIAlign(node)", "sampling_ratio 100000", "HN_LIMIT_MAX_TENSOR_ELEMENTS"}));
  cases->push_back(Rejected("_contrib_DeformablePSROIPooling",
                            {{"spatial_scale", "0.5"},
                             {"output_dim", "2"},
                             {"group_size", "3"},
                             {"pooled_size", "3"},
                             {"no_trans", "True"},
                             {"sample_per_part", "100000"}},
                            {{1, 18, 4, 4}, {2, 5}}, kInv,
                            {"_contrib_DeformablePSROIPooling(node)", "sample_per_part 100000"}));
  cases->push_back(Rejected("_contrib_RROIAlign",
                            {{"pooled_size", "(2, 2)"}, {"spatial_scale", "0.5"}},
                            {{1, 3, 4, 4}, {2, 5}}, kShape, {"_contrib_RROIAlign(node)", "6"}));
  cases->push_back(Rejected("_contrib_PSROIPooling",
                            {{"spatial_scale", "0.5"}, {"output_dim", "2"}, {"pooled_size", "3"}},
                            {{1, 9, 4, 4}, {2, 5}}, kShape, {"_contrib_PSROIPooling(node)", "18"}));
  cases->push_back(Rejected(
      "_contrib_DeformablePSROIPooling",
      {{"spatial_scale", "0.5"}, {"output_dim", "2"}, {"group_size", "3"}, {"pooled_size", "3"}},
      {{1, 18, 4, 4}, {2, 5}, {2, 3, 3, 3}}, kShape,
      {"_contrib_DeformablePSROIPooling(node)", "trans"}));
  cases->push_back(Rejected("GridGenerator", {{"transform_type", "affine"}}, {{2, 6}}, kInv,
                            {"GridGenerator(node)", "target_shape"}));
  cases->push_back(Rejected("GridGenerator", {{"transform_type", "warp"}}, {{2, 3, 4, 4}}, kShape,
                            {"GridGenerator(node)", "flow"}));
  cases->push_back(Rejected("BilinearSampler", {}, {{2, 3, 4, 4}, {2, 3, 4, 4}}, kShape,
                            {"BilinearSampler(node)", "grid"}));
  cases->push_back(Rejected(
      "SpatialTransformer",
      {{"target_shape", "(4, 4)"}, {"transform_type", "affine"}, {"sampler_type", "bilinear"}},
      {{2, 3, 4, 4}, {2, 4}}, kShape, {"SpatialTransformer(node)", "loc"}));
  cases->push_back(
      Rejected("_contrib_DeformableConvolution", {{"kernel", "(3, 3, 3)"}, {"num_filter", "2"}},
               {{1, 2, 4, 4, 4}, {1, 54, 2, 2, 2}, {2, 2, 3, 3, 3}, {2}}, StatusCode::kUnsupported,
               {"_contrib_DeformableConvolution(node)", "2-D"}));
  cases->push_back(Rejected("_contrib_DeformableConvolution",
                            {{"kernel", "(3, 3)"}, {"num_filter", "2"}},
                            {{1, 2, 5, 5}, {1, 9, 3, 3}, {2, 2, 3, 3}, {2}}, kShape,
                            {"_contrib_DeformableConvolution(node)", "offset"}));
  cases->push_back(Rejected("_contrib_ModulatedDeformableConvolution",
                            {{"kernel", "(3, 3)"}, {"num_filter", "2"}, {"im2col_step", "2"}},
                            {{3, 2, 5, 5}, {3, 18, 3, 3}, {3, 9, 3, 3}, {2, 2, 3, 3}, {2}}, kShape,
                            {"_contrib_ModulatedDeformableConvolution(node)", "im2col_step"}));
  cases->push_back(Rejected("_contrib_ModulatedDeformableConvolution",
                            {{"kernel", "(3, 3)"}, {"num_filter", "2"}, {"layout", "NCW"}},
                            {{1, 2, 5, 5}, {1, 18, 3, 3}, {1, 9, 3, 3}, {2, 2, 3, 3}, {2}}, kInv,
                            {"_contrib_ModulatedDeformableConvolution(node)", "layout"}));
  cases->push_back(Rejected("Correlation", {{"kernel_size", "2"}}, {{1, 2, 5, 5}, {1, 2, 5, 5}},
                            kInv, {"Correlation(node)", "odd"}));
  cases->push_back(Rejected("Correlation", {{"max_displacement", "4"}},
                            {{1, 2, 5, 5}, {1, 2, 5, 5}}, kShape,
                            {"Correlation(node)", "too small"}));
  cases->push_back(Rejected("Correlation", {}, {{1, 2, 5, 5}, {1, 2, 5, 6}}, kShape,
                            {"Correlation(node)", "data"}));
  cases->push_back(
      Rejected("_image_normalize", {}, {{3, 4, 4}}, kInv, {"_image_normalize(node)", "mean"}));
  cases->push_back(Rejected("_image_normalize", {{"mean", "0"}, {"std", "1"}}, {{2, 4, 4}}, kShape,
                            {"_image_normalize(node)", "1 or 3 channels"}));
  cases->push_back(Rejected("_image_resize", {{"size", "(4, 4)"}, {"interp", "2"}}, {{5, 5, 3}},
                            StatusCode::kUnsupported, {"_image_resize(node)", "bicubic"}));
  cases->push_back(Rejected("_image_resize", {{"size", "(4, 4)"}}, {{5, 5, 3}},
                            StatusCode::kTypeError, {"_image_resize(node)", "int32"},
                            {DType::kInt32}));
  cases->push_back(Rejected("_image_crop",
                            {{"x", "3"}, {"y", "0"}, {"width", "4"}, {"height", "2"}}, {{5, 6, 3}},
                            kShape, {"_image_crop(node)", "x + width"}));
  cases->push_back(Rejected("_image_crop",
                            {{"x", "-1"}, {"y", "0"}, {"width", "4"}, {"height", "2"}}, {{5, 6, 3}},
                            kInv, {"_image_crop(node)", "negative"}));
  cases->push_back(Rejected("_image_flip_left_right", {}, {{4, 4, 2}}, kShape,
                            {"_image_flip_left_right(node)", "1 or 3"}));
  cases->push_back(
      Rejected("_image_to_tensor", {}, {{4, 4}}, kShape, {"_image_to_tensor(node)", "(4, 4)"}));
  cases->push_back(Rejected("_image_adjust_lighting", {{"alpha", "(0.1, 0.2)"}}, {{4, 4, 3}}, kInv,
                            {"_image_adjust_lighting(node)", "alpha"}));
}

}  // namespace conformance
}  // namespace hybridnet
