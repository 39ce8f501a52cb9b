// Region-of-interest pooling of MXNet 1.9.1 (CPU kernels), float32 and float64:
//  * ROIPooling (roi_pooling.cc): max over integer bins of the rounded, scaled ROI; empty bins
//    give 0.
//  * _contrib_ROIAlign (contrib/roi_align.cc): average of bilinear samples, sampling_ratio
//    (sample_ratio) per bin side or ceil(bin size); aligned shifts by half a pixel and does not
//    force ROIs to be at least 1 x 1; position_sensitive reads channel (c * ph * pw + bin).
//  * _contrib_RROIAlign (contrib/rroi_align.cc): the same over ROIs (batch, cx, cy, w, h,
//    angle in degrees) rotated about their center.
//  * _contrib_PSROIPooling (contrib/psroi_pooling.cc): position-sensitive average pooling.
//  * _contrib_DeformablePSROIPooling (contrib/deformable_psroi_pooling.cc): the same with bins
//    moved by learned offsets (trans), bilinear samples per part.
// ROIs are rows [batch_index, ...]; the index is truncated toward zero as MXNet converts it. An
// ROI whose index names no image of the batch gives zeros (ROIPooling's rule in MXNet; its other
// kernels read outside the batch, or, for ROIAlign with a negative index, write only one
// element). Samples outside the feature map contribute zero without being visited, so a huge
// ROI costs no more than the feature map it covers. An ROIAlign/RROIAlign ROI with a non-finite
// coordinate gives NaN, as does an aligned ROIAlign ROI of non-positive size (MXNet aborts).
// ROIPooling and ROIAlign have MXNet's gradients: to data only (each bin's gradient at its
// argmax, or spread over its bilinear samples), zeros for rois.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
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
using internal::RoiBatchIndex;
using internal::SwitchRealDType;

// floor/ceil/round results as indices, clamped far outside any feature map so that hostile
// coordinates cannot overflow the integer conversion (MXNet converts to int directly).
inline int64_t ToIndex(double v) {
  if (std::isnan(v)) return 0;
  return static_cast<int64_t>(std::max(-1e12, std::min(1e12, v)));
}

void CheckSpatialScale(float scale) {
  HN_CHECK(scale >= 0.f && scale <= 1.f, kInvalidArgument)
      << "spatial_scale must lie in [0, 1] (1 / the feature stride), got " << scale;
}

void CheckPooledSize(const std::vector<int64_t>& pooled) {
  HN_CHECK(pooled.size() == 2 && pooled[0] > 0 && pooled[1] > 0, kInvalidArgument)
      << "pooled_size must be two positive sizes (height, width), got "
      << internal::ValueText(pooled);
}

// data (N, C, H, W) and rois (R, cols): the common checks; returns false while unknown.
bool RoiInputs(const NodeAttrs& attrs, std::vector<Shape>* in, int64_t roi_cols,
               const char* roi_form) {
  const std::string node = DescribeNode(attrs);
  const Shape& d = (*in)[0];
  const Shape& r = (*in)[1];
  HN_CHECK(d.ndim() == 0 || d.ndim() == 4, kShapeError)
      << node << ": data should be a feature map (batch, channel, height, width), got " << d;
  HN_CHECK(r.ndim() == 0 || (r.ndim() == 2 && (r[1] == roi_cols || r[1] == 0)), kShapeError)
      << node << ": rois should be (num_rois, " << roi_cols << ") rows " << roi_form << ", got "
      << r;
  if (r.ndim() == 2) AssignShape(attrs, in, 1, Shape{0, roi_cols}, "input 'rois'");
  return d.ndim() == 4 && r.ndim() == 2;
}

bool RoiType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  return RealType(attrs, in, out);
}

// An explicit samples-per-bin-side `ratio` (attribute `key`) must keep the samples of `out`
// within the limits.
void CheckSamplingRatio(const NodeAttrs& attrs, const Shape& out, int ratio, const char* key) {
  if (ratio <= 0) return;
  internal::CheckWorkLimit(attrs, static_cast<double>(out.Size()) * ratio * ratio,
                           std::string(key) + " " + std::to_string(ratio));
}

// pooled_size (height, width) and spatial_scale, as ROIPooling, ROIAlign and RROIAlign declare
// them.
template <typename P>
void DeclarePooledSizeAndScale(ParamDeclarer<P>* d) {
  d->Field("pooled_size", &P::pooled_size)
      .Required()
      .Describe("Output bins (height, width) per ROI.");
  d->Field("spatial_scale", &P::spatial_scale)
      .Required()
      .Describe("Feature map size over input image size (1 / total stride), in [0, 1].");
}

template <typename P>
void PooledSizeAndScaleInit(P* p) {
  CheckPooledSize(p->pooled_size);
  CheckSpatialScale(p->spatial_scale);
}

// Calls body(roi, image, output block) for every ROI (a row of rois) whose batch index names an
// image of `batch`; the output block of any other ROI is zeros.
template <typename T, typename Body>
void ForEachRoi(int64_t batch, const TBlob& rois, const TBlob& out, Body body) {
  const int64_t num_rois = rois.shape[0], cols = rois.shape[1];
  const int64_t block = out.Size() / num_rois;
  for (int64_t n = 0; n < num_rois; ++n) {
    const T* roi = rois.ptr<const T>() + n * cols;
    T* o = out.ptr<T>() + n * block;
    const int64_t b = RoiBatchIndex(static_cast<double>(roi[0]), batch);
    if (b < 0) {
      std::fill(o, o + block, T(0));
    } else {
      body(n, roi, b, o);
    }
  }
}

// The kernels are structs Kernel::Run<T>(param, inputs, output), run in the dtype of data.
template <typename P, typename Kernel>
void RoiCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                const std::vector<TBlob>& out) {
  SwitchRealDType(in[0].dtype, [&](auto tag) {
    Kernel::template Run<typename decltype(tag)::type>(attrs.Param<P>(), in, out[0]);
  });
}

// ---- ROIPooling -------------------------------------------------------------------------------

struct ROIPoolingParam {
  std::vector<int64_t> pooled_size;
  float spatial_scale = 0.f;
  static void Declare(ParamDeclarer<ROIPoolingParam>* d) { DeclarePooledSizeAndScale(d); }
};

bool ROIPoolingShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const auto& p = attrs.Param<ROIPoolingParam>();
  if (!RoiInputs(attrs, in, 5, "[batch_index, x1, y1, x2, y2]")) return false;
  AssignShape(attrs, out, 0, Shape{(*in)[1][0], (*in)[0][1], p.pooled_size[0], p.pooled_size[1]},
              "output");
  return internal::AllKnown(*in, *out);
}

// Calls bin(c, ph, pw, plane, argmax, empty) for every bin of every channel of an ROI of image b:
// plane is the (b, c) plane of data, argmax the offset in it of the bin's first largest value
// (-1 when no value exceeds -FLT_MAX), empty whether the bin covers no pixel.
template <typename T, typename Bin>
void ForEachRoiPoolingBin(const ROIPoolingParam& p, const Shape& ds, const T* data, const T* roi,
                          int64_t b, Bin bin) {
  const int64_t channels = ds[1], height = ds[2], width = ds[3];
  const int64_t ph_n = p.pooled_size[0], pw_n = p.pooled_size[1];
  const float scale = p.spatial_scale;
  auto rounded = [&](T v) { return ToIndex(static_cast<double>(std::round(v * scale))); };
  const int64_t start_w = rounded(roi[1]), start_h = rounded(roi[2]);
  const int64_t end_w = rounded(roi[3]), end_h = rounded(roi[4]);
  const int64_t roi_h = std::max<int64_t>(end_h - start_h + 1, 1);
  const int64_t roi_w = std::max<int64_t>(end_w - start_w + 1, 1);
  const T bin_h = static_cast<T>(roi_h) / static_cast<T>(ph_n);
  const T bin_w = static_cast<T>(roi_w) / static_cast<T>(pw_n);
  for (int64_t c = 0; c < channels; ++c) {
    const T* plane = data + (b * channels + c) * height * width;
    for (int64_t ph = 0; ph < ph_n; ++ph) {
      int64_t h0 = ToIndex(std::floor(static_cast<double>(static_cast<T>(ph) * bin_h)));
      int64_t h1 = ToIndex(std::ceil(static_cast<double>(static_cast<T>(ph + 1) * bin_h)));
      h0 = std::min(std::max(h0 + start_h, int64_t{0}), height);
      h1 = std::min(std::max(h1 + start_h, int64_t{0}), height);
      for (int64_t pw = 0; pw < pw_n; ++pw) {
        int64_t w0 = ToIndex(std::floor(static_cast<double>(static_cast<T>(pw) * bin_w)));
        int64_t w1 = ToIndex(std::ceil(static_cast<double>(static_cast<T>(pw + 1) * bin_w)));
        w0 = std::min(std::max(w0 + start_w, int64_t{0}), width);
        w1 = std::min(std::max(w1 + start_w, int64_t{0}), width);
        const bool empty = h1 <= h0 || w1 <= w0;
        int64_t argmax = -1;
        T m = -FLT_MAX;
        for (int64_t h = h0; h < h1; ++h) {
          for (int64_t w = w0; w < w1; ++w) {
            if (plane[h * width + w] > m) {
              m = plane[h * width + w];
              argmax = h * width + w;
            }
          }
        }
        bin(c, ph, pw, plane, argmax, empty);
      }
    }
  }
}

struct ROIPoolingKernel {
  template <typename T>
  static void Run(const ROIPoolingParam& p, const std::vector<TBlob>& in, const TBlob& out) {
    const Shape& ds = in[0].shape;
    const T* data = in[0].ptr<const T>();
    const int64_t ph_n = p.pooled_size[0], pw_n = p.pooled_size[1];
    ForEachRoi<T>(ds[0], in[1], out, [&](int64_t, const T* roi, int64_t b, T* o) {
      ForEachRoiPoolingBin<T>(
          p, ds, data, roi, b,
          [&](int64_t c, int64_t ph, int64_t pw, const T* plane, int64_t argmax, bool empty) {
            o[(c * ph_n + ph) * pw_n + pw] = empty        ? T(0)
                                             : argmax < 0 ? T(-FLT_MAX)
                                                          : plane[argmax];
          });
    });
  }
};

// _backward_ROIPooling: (out_grad, data, rois) -> (d data, d rois = 0). Each bin's gradient goes
// to its argmax, ROIs in order (MXNet adds them in this order too).
void ROIPoolingBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                               const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<ROIPoolingParam>();
  SwitchRealDType(in[1].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const Shape& ds = in[1].shape;
    const T* data = in[1].ptr<const T>();
    const TBlob& rois = in[2];
    T* dx = out[0].ptr<T>();
    std::fill(dx, dx + out[0].Size(), T(0));
    std::fill(out[1].ptr<T>(), out[1].ptr<T>() + out[1].Size(), T(0));
    const int64_t ph_n = p.pooled_size[0], pw_n = p.pooled_size[1];
    const int64_t block = ds[1] * ph_n * pw_n;
    for (int64_t n = 0; n < rois.shape[0]; ++n) {
      const T* roi = rois.ptr<const T>() + n * rois.shape[1];
      const int64_t b = RoiBatchIndex(static_cast<double>(roi[0]), ds[0]);
      if (b < 0) continue;
      const T* dy = in[0].ptr<const T>() + n * block;
      ForEachRoiPoolingBin<T>(
          p, ds, data, roi, b,
          [&](int64_t c, int64_t ph, int64_t pw, const T* plane, int64_t argmax, bool empty) {
            if (empty || argmax < 0) return;
            dx[(plane - data) + argmax] += dy[(c * ph_n + ph) * pw_n + pw];
          });
    }
  });
}

// ---- bilinear samples of ROIAlign / RROIAlign -------------------------------------------------

template <typename T>
struct Sample {
  int64_t pos[4];
  T w[4];
};

// MXNet's bilinear sample at (y, x) of an H x W map; false when outside [-1, H] x [-1, W].
template <typename T>
bool MakeSample(T y, T x, int64_t height, int64_t width, Sample<T>* s) {
  if (y < -1.0 || y > static_cast<T>(height) || x < -1.0 || x > static_cast<T>(width)) return false;
  if (y <= 0) y = 0;
  if (x <= 0) x = 0;
  int64_t y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x);
  int64_t y_high, x_high;
  if (y_low >= height - 1) {
    y_high = y_low = height - 1;
    y = static_cast<T>(y_low);
  } else {
    y_high = y_low + 1;
  }
  if (x_low >= width - 1) {
    x_high = x_low = width - 1;
    x = static_cast<T>(x_low);
  } else {
    x_high = x_low + 1;
  }
  const T ly = y - static_cast<T>(y_low), lx = x - static_cast<T>(x_low);
  const T hy = static_cast<T>(1. - ly), hx = static_cast<T>(1. - lx);
  s->pos[0] = y_low * width + x_low;
  s->pos[1] = y_low * width + x_high;
  s->pos[2] = y_high * width + x_low;
  s->pos[3] = y_high * width + x_high;
  s->w[0] = hy * hx;
  s->w[1] = hy * lx;
  s->w[2] = ly * hx;
  s->w[3] = ly * lx;
  return true;
}

// The sample indices i in [0, n) whose coordinate start + (i + 0.5) * step can fall in
// [lo, hi], widened by two samples for rounding; empty when nothing can.
inline void SampleWindow(double start, double step, int64_t n, double lo, double hi, int64_t* first,
                         int64_t* last) {
  *first = 0;
  *last = n;
  if (!(step > 0) || !std::isfinite(start) || !std::isfinite(step)) return;
  const double a = (lo - start) / step - 0.5, b = (hi - start) / step - 0.5;
  *first = std::max<int64_t>(0, ToIndex(std::floor(a)) - 2);
  *last = std::min<int64_t>(n, ToIndex(std::ceil(b)) + 3);
  if (*last < *first) *last = *first;
}

struct AlignGeometry {
  double start_h, start_w, bin_h, bin_w;  // in the ROI frame (rotated ROIs: about the center)
  int64_t grid_h, grid_w;
  double center_h = 0, center_w = 0, cos_t = 1, sin_t = 0;
  bool rotated = false;
};

// The bilinear samples of every bin of one ROI (bins in row-major order; bin_begin has
// num_bins + 1 offsets into samples). Samples in the same order MXNet adds them.
template <typename T>
void AlignSamples(const AlignGeometry& g, const T (&geom)[4], int64_t ph_n, int64_t pw_n,
                  int64_t height, int64_t width, std::vector<Sample<T>>* samples,
                  std::vector<int64_t>* bin_begin) {
  // geom: start_h, start_w, bin_h, bin_w in T, as MXNet holds them.
  const T start_h = geom[0], start_w = geom[1], bin_h = geom[2], bin_w = geom[3];
  const T cos_t = static_cast<T>(g.cos_t), sin_t = static_cast<T>(g.sin_t);
  const T center_h = static_cast<T>(g.center_h), center_w = static_cast<T>(g.center_w);
  const T gh = static_cast<T>(g.grid_h), gw = static_cast<T>(g.grid_w);
  const double step_h = static_cast<double>(bin_h) / static_cast<double>(g.grid_h);
  const double step_w = static_cast<double>(bin_w) / static_cast<double>(g.grid_w);
  // The extent of the map [-1, H] x [-1, W] in the ROI frame bounds the useful samples.
  double yy_lo = -1, yy_hi = static_cast<double>(height);
  double xx_lo = -1, xx_hi = static_cast<double>(width);
  if (g.rotated) {
    yy_lo = xx_lo = std::numeric_limits<double>::infinity();
    yy_hi = xx_hi = -yy_lo;
    for (double y : {-1.0, static_cast<double>(height)}) {
      for (double x : {-1.0, static_cast<double>(width)}) {
        const double dx = x - g.center_w, dy = y - g.center_h;
        const double xx = dx * g.cos_t - dy * g.sin_t, yy = dx * g.sin_t + dy * g.cos_t;
        yy_lo = std::min(yy_lo, yy);
        yy_hi = std::max(yy_hi, yy);
        xx_lo = std::min(xx_lo, xx);
        xx_hi = std::max(xx_hi, xx);
      }
    }
  }
  samples->clear();
  bin_begin->assign(1, 0);
  for (int64_t ph = 0; ph < ph_n; ++ph) {
    const T row0 = start_h + static_cast<T>(ph) * bin_h;
    int64_t iy0, iy1;
    SampleWindow(static_cast<double>(row0), step_h, g.grid_h, yy_lo, yy_hi, &iy0, &iy1);
    for (int64_t pw = 0; pw < pw_n; ++pw) {
      const T col0 = start_w + static_cast<T>(pw) * bin_w;
      int64_t ix0, ix1;
      SampleWindow(static_cast<double>(col0), step_w, g.grid_w, xx_lo, xx_hi, &ix0, &ix1);
      for (int64_t iy = iy0; iy < iy1; ++iy) {
        const T yy = row0 + static_cast<T>(static_cast<float>(iy) + .5f) * bin_h / gh;
        for (int64_t ix = ix0; ix < ix1; ++ix) {
          const T xx = col0 + static_cast<T>(static_cast<float>(ix) + .5f) * bin_w / gw;
          T x = xx, y = yy;
          if (g.rotated) {
            x = xx * cos_t + yy * sin_t + center_w;
            y = yy * cos_t - xx * sin_t + center_h;
          }
          Sample<T> s;
          if (MakeSample(y, x, height, width, &s)) samples->push_back(s);
        }
      }
      bin_begin->push_back(static_cast<int64_t>(samples->size()));
    }
  }
}

inline int64_t GridCount(int sampling_ratio, double roi_size, int64_t pooled) {
  if (sampling_ratio > 0) return sampling_ratio;
  const double g = std::ceil(roi_size / static_cast<double>(pooled));
  // MXNet converts to int; a ROI this large only adds samples outside the map.
  return std::max<int64_t>(0, ToIndex(std::min(g, 2147483647.0)));
}

// Averages one ROI's samples for each output channel; out_plane(c) and in_plane(c, bin) give
// the output block and the input plane a channel's bin reads.
template <typename T, typename InPlane>
void PoolSamples(const std::vector<Sample<T>>& samples, const std::vector<int64_t>& bin_begin,
                 int64_t channels, int64_t num_bins, T count, InPlane in_plane, T* out) {
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t bin = 0; bin < num_bins; ++bin) {
      const T* plane = in_plane(c, bin);
      T acc = 0;
      for (int64_t k = bin_begin[static_cast<size_t>(bin)];
           k < bin_begin[static_cast<size_t>(bin + 1)]; ++k) {
        const Sample<T>& s = samples[static_cast<size_t>(k)];
        acc += s.w[0] * plane[s.pos[0]] + s.w[1] * plane[s.pos[1]] + s.w[2] * plane[s.pos[2]] +
               s.w[3] * plane[s.pos[3]];
      }
      out[c * num_bins + bin] = acc / count;
    }
  }
}

// ---- _contrib_ROIAlign ------------------------------------------------------------------------

struct ROIAlignParam {
  std::vector<int64_t> pooled_size;
  float spatial_scale = 0.f;
  int sample_ratio = -1;
  bool position_sensitive = false;
  bool aligned = false;
  static void Declare(ParamDeclarer<ROIAlignParam>* d) {
    DeclarePooledSizeAndScale(d);
    d->Field("sample_ratio", &ROIAlignParam::sample_ratio)
        .Default(-1)
        .Describe("Bilinear samples per bin side; <= 0 uses ceil(bin size).");
    d->Field("position_sensitive", &ROIAlignParam::position_sensitive)
        .Default(false)
        .Describe(
            "Each bin reads its own group of channels (R-FCN); the output has "
            "channels / (ph * pw) channels.");
    d->Field("aligned", &ROIAlignParam::aligned)
        .Default(false)
        .Describe(
            "Shift the ROI by half a pixel (pixel centers at +0.5) and keep its real "
            "size; false forces ROIs to at least 1 x 1.");
  }
};

bool ROIAlignShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const auto& p = attrs.Param<ROIAlignParam>();
  if (!RoiInputs(attrs, in, 5, "[batch_index, x1, y1, x2, y2]")) return false;
  const Shape& d = (*in)[0];
  int64_t channels = d[1];
  if (p.position_sensitive && channels != 0) {
    const int64_t bins = p.pooled_size[0] * p.pooled_size[1];
    HN_CHECK(channels % bins == 0, kShapeError)
        << DescribeNode(attrs) << ": position_sensitive needs channels divisible by "
        << p.pooled_size[0] << " x " << p.pooled_size[1] << " bins, data " << d;
    channels /= bins;
  }
  AssignShape(attrs, out, 0, Shape{(*in)[1][0], channels, p.pooled_size[0], p.pooled_size[1]},
              "output");
  CheckSamplingRatio(attrs, (*out)[0], p.sample_ratio, "sample_ratio");
  return internal::AllKnown(*in, *out);
}

// The bilinear samples of one ROI's bins and their count per bin; false when the ROI has a
// non-finite coordinate or (aligned) a non-positive size.
template <typename T>
bool ROIAlignSamples(const ROIAlignParam& p, const Shape& ds, const T* roi,
                     std::vector<Sample<T>>* samples, std::vector<int64_t>* bin_begin, T* count) {
  const int64_t height = ds[2], width = ds[3];
  const int64_t ph_n = p.pooled_size[0], pw_n = p.pooled_size[1];
  const T scale = p.spatial_scale;
  const T offset = p.aligned ? T(0.5) : T(0);
  const T start_w = roi[1] * scale - offset, start_h = roi[2] * scale - offset;
  const T end_w = roi[3] * scale - offset, end_h = roi[4] * scale - offset;
  T roi_w = end_w - start_w, roi_h = end_h - start_h;
  if (!p.aligned) {
    roi_w = std::max(roi_w, T(1));
    roi_h = std::max(roi_h, T(1));
  }
  const bool finite = std::isfinite(start_w) && std::isfinite(start_h) && std::isfinite(end_w) &&
                      std::isfinite(end_h);
  if (!finite || !(roi_w > 0) || !(roi_h > 0)) return false;
  const T bin_h = roi_h / static_cast<T>(ph_n), bin_w = roi_w / static_cast<T>(pw_n);
  AlignGeometry g;
  g.grid_h = GridCount(p.sample_ratio, static_cast<double>(roi_h), ph_n);
  g.grid_w = GridCount(p.sample_ratio, static_cast<double>(roi_w), pw_n);
  const T geom[4] = {start_h, start_w, bin_h, bin_w};
  AlignSamples(g, geom, ph_n, pw_n, height, width, samples, bin_begin);
  *count = static_cast<T>(static_cast<double>(g.grid_h) * static_cast<double>(g.grid_w));
  return true;
}

// The input plane offset of output channel c's bin: position-sensitive bins read channel
// c * bins + bin.
inline int64_t ROIAlignInputChannel(bool position_sensitive, int64_t c, int64_t bin,
                                    int64_t num_bins) {
  return position_sensitive ? c * num_bins + bin : c;
}

struct ROIAlignKernel {
  template <typename T>
  static void Run(const ROIAlignParam& p, const std::vector<TBlob>& in, const TBlob& out) {
    const Shape& ds = in[0].shape;
    const T* data = in[0].ptr<const T>();
    const int64_t in_channels = ds[1], plane = ds[2] * ds[3], out_channels = out.shape[1];
    const int64_t num_bins = p.pooled_size[0] * p.pooled_size[1];
    std::vector<Sample<T>> samples;
    std::vector<int64_t> bin_begin;
    ForEachRoi<T>(ds[0], in[1], out, [&](int64_t, const T* roi, int64_t b, T* o) {
      T count = 0;
      if (!ROIAlignSamples(p, ds, roi, &samples, &bin_begin, &count)) {
        std::fill(o, o + out_channels * num_bins, std::numeric_limits<T>::quiet_NaN());
        return;
      }
      const T* image = data + b * in_channels * plane;
      PoolSamples<T>(
          samples, bin_begin, out_channels, num_bins, count,
          [&](int64_t c, int64_t bin) {
            return image + ROIAlignInputChannel(p.position_sensitive, c, bin, num_bins) * plane;
          },
          o);
    });
  }
};

// _backward_ROIAlign: (out_grad, data, rois) -> (d data, d rois = 0), MXNet's: each sample adds
// out_grad * weight / count to its four pixels, ROIs, channels, bins and samples in order. ROIs
// naming no image, or with a non-finite coordinate, add nothing.
void ROIAlignBackwardCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                             const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<ROIAlignParam>();
  SwitchRealDType(in[1].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const Shape& ds = in[1].shape;
    const TBlob& rois = in[2];
    const int64_t plane = ds[2] * ds[3], out_channels = in[0].shape[1];
    const int64_t num_bins = p.pooled_size[0] * p.pooled_size[1];
    T* dx = out[0].ptr<T>();
    std::fill(dx, dx + out[0].Size(), T(0));
    std::fill(out[1].ptr<T>(), out[1].ptr<T>() + out[1].Size(), T(0));
    std::vector<Sample<T>> samples;
    std::vector<int64_t> bin_begin;
    for (int64_t n = 0; n < rois.shape[0]; ++n) {
      const T* roi = rois.ptr<const T>() + n * rois.shape[1];
      const int64_t b = RoiBatchIndex(static_cast<double>(roi[0]), ds[0]);
      T count = 0;
      if (b < 0 || !ROIAlignSamples(p, ds, roi, &samples, &bin_begin, &count)) continue;
      const T* dy = in[0].ptr<const T>() + n * out_channels * num_bins;
      T* image = dx + b * ds[1] * plane;
      for (int64_t c = 0; c < out_channels; ++c) {
        for (int64_t bin = 0; bin < num_bins; ++bin) {
          T* d = image + ROIAlignInputChannel(p.position_sensitive, c, bin, num_bins) * plane;
          const T g = dy[c * num_bins + bin];
          for (int64_t k = bin_begin[static_cast<size_t>(bin)];
               k < bin_begin[static_cast<size_t>(bin + 1)]; ++k) {
            const Sample<T>& s = samples[static_cast<size_t>(k)];
            for (int corner = 0; corner < 4; ++corner) d[s.pos[corner]] += g * s.w[corner] / count;
          }
        }
      }
    }
  });
}

// ---- _contrib_RROIAlign -----------------------------------------------------------------------

struct RROIAlignParam {
  std::vector<int64_t> pooled_size;
  float spatial_scale = 0.f;
  int sampling_ratio = -1;
  static void Declare(ParamDeclarer<RROIAlignParam>* d) {
    DeclarePooledSizeAndScale(d);
    d->Field("sampling_ratio", &RROIAlignParam::sampling_ratio)
        .Default(-1)
        .Describe("Bilinear samples per bin side; <= 0 uses ceil(bin size).");
  }
};

bool RROIAlignShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const auto& p = attrs.Param<RROIAlignParam>();
  if (!RoiInputs(attrs, in, 6, "[batch_index, center_x, center_y, width, height, degrees]"))
    return false;
  AssignShape(attrs, out, 0, Shape{(*in)[1][0], (*in)[0][1], p.pooled_size[0], p.pooled_size[1]},
              "output");
  CheckSamplingRatio(attrs, (*out)[0], p.sampling_ratio, "sampling_ratio");
  return internal::AllKnown(*in, *out);
}

struct RROIAlignKernel {
  template <typename T>
  static void Run(const RROIAlignParam& p, const std::vector<TBlob>& in, const TBlob& out) {
    const Shape& ds = in[0].shape;
    const T* data = in[0].ptr<const T>();
    const int64_t channels = ds[1], height = ds[2], width = ds[3];
    const int64_t ph_n = p.pooled_size[0], pw_n = p.pooled_size[1], num_bins = ph_n * pw_n;
    const float scale = p.spatial_scale;
    std::vector<Sample<T>> samples;
    std::vector<int64_t> bin_begin;
    ForEachRoi<T>(ds[0], in[1], out, [&](int64_t, const T* roi, int64_t b, T* o) {
      const T center_w = roi[1] * scale, center_h = roi[2] * scale;
      const T roi_w = std::max(static_cast<T>(roi[3] * scale), T(1));
      const T roi_h = std::max(static_cast<T>(roi[4] * scale), T(1));
      const T theta = static_cast<T>(roi[5] * M_PI / 180.0);
      if (!(std::isfinite(center_w) && std::isfinite(center_h) && std::isfinite(roi_w) &&
            std::isfinite(roi_h) && std::isfinite(theta))) {
        std::fill(o, o + channels * num_bins, std::numeric_limits<T>::quiet_NaN());
        return;
      }
      const T start_h = static_cast<T>(-roi_h / 2.0), start_w = static_cast<T>(-roi_w / 2.0);
      const T bin_h = roi_h / static_cast<T>(ph_n), bin_w = roi_w / static_cast<T>(pw_n);
      AlignGeometry g;
      g.rotated = true;
      g.center_h = static_cast<double>(center_h);
      g.center_w = static_cast<double>(center_w);
      g.cos_t = static_cast<double>(static_cast<T>(std::cos(theta)));
      g.sin_t = static_cast<double>(static_cast<T>(std::sin(theta)));
      g.grid_h = GridCount(p.sampling_ratio, static_cast<double>(roi_h), ph_n);
      g.grid_w = GridCount(p.sampling_ratio, static_cast<double>(roi_w), pw_n);
      const T geom[4] = {start_h, start_w, bin_h, bin_w};
      AlignSamples(g, geom, ph_n, pw_n, height, width, &samples, &bin_begin);
      const T count = static_cast<T>(static_cast<double>(g.grid_h) * static_cast<double>(g.grid_w));
      const T* image = data + b * channels * height * width;
      PoolSamples<T>(
          samples, bin_begin, channels, num_bins, count,
          [&](int64_t c, int64_t) { return image + c * height * width; }, o);
    });
  }
};

// ---- _contrib_PSROIPooling --------------------------------------------------------------------

struct PSROIPoolingParam {
  float spatial_scale = 0.f;
  int output_dim = 0;
  int pooled_size = 0;
  int group_size = 0;
  static void Declare(ParamDeclarer<PSROIPoolingParam>* d) {
    d->Field("spatial_scale", &PSROIPoolingParam::spatial_scale)
        .Required()
        .Describe("Feature map size over input image size (1 / total stride), in [0, 1].");
    d->Field("output_dim", &PSROIPoolingParam::output_dim).Required().Describe("Output channels.");
    d->Field("pooled_size", &PSROIPoolingParam::pooled_size)
        .Required()
        .Describe("Output bins per side.");
    d->Field("group_size", &PSROIPoolingParam::group_size)
        .Default(0)
        .Describe("Position-sensitive groups per side; 0 means pooled_size.");
  }
};

void PSROIPoolingInit(PSROIPoolingParam* p) {
  CheckSpatialScale(p->spatial_scale);
  HN_CHECK(p->output_dim >= 1 && p->pooled_size >= 1 && p->group_size >= 0, kInvalidArgument)
      << "output_dim and pooled_size must be positive and group_size non-negative, got "
      << p->output_dim << ", " << p->pooled_size << ", " << p->group_size;
  if (p->group_size == 0) p->group_size = p->pooled_size;
}

// data must hold output_dim * group_size^2 position-sensitive channels.
void CheckPsChannels(const NodeAttrs& attrs, const Shape& data, int64_t output_dim,
                     int64_t group_size) {
  const int64_t needed = output_dim * group_size * group_size;
  HN_CHECK(data[1] == 0 || data[1] >= needed, kShapeError)
      << DescribeNode(attrs) << ": data " << data << " has fewer than output_dim * group_size^2"
      << " = " << needed << " channels";
}

bool PSROIPoolingShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const auto& p = attrs.Param<PSROIPoolingParam>();
  if (!RoiInputs(attrs, in, 5, "[batch_index, x1, y1, x2, y2]")) return false;
  CheckPsChannels(attrs, (*in)[0], p.output_dim, p.group_size);
  AssignShape(attrs, out, 0, Shape{(*in)[1][0], p.output_dim, p.pooled_size, p.pooled_size},
              "output");
  return internal::AllKnown(*in, *out);
}

// The group bin of pooled bin `i` of `pooled`: floor(i * group / pooled), clamped.
template <typename T>
int64_t GroupBin(int64_t i, int64_t group, int64_t pooled) {
  const T v = static_cast<T>(i) * static_cast<T>(group) / static_cast<T>(pooled);
  return std::min(std::max<int64_t>(ToIndex(std::floor(static_cast<double>(v))), 0), group - 1);
}

struct PSROIPoolingKernel {
  template <typename T>
  static void Run(const PSROIPoolingParam& p, const std::vector<TBlob>& in, const TBlob& out) {
    const Shape& ds = in[0].shape;
    const T* data = in[0].ptr<const T>();
    const int64_t channels = ds[1], height = ds[2], width = ds[3];
    const int64_t pooled = p.pooled_size, group = p.group_size, dim = p.output_dim;
    const T scale = p.spatial_scale;
    ForEachRoi<T>(ds[0], in[1], out, [&](int64_t, const T* roi, int64_t b, T* o) {
      const T start_w = static_cast<T>(std::round(roi[1])) * scale;
      const T start_h = static_cast<T>(std::round(roi[2])) * scale;
      const T end_w = static_cast<T>(std::round(roi[3]) + 1.) * scale;
      const T end_h = static_cast<T>(std::round(roi[4]) + 1.) * scale;
      const T roi_w = std::max(end_w - start_w, static_cast<T>(0.1));
      const T roi_h = std::max(end_h - start_h, static_cast<T>(0.1));
      const T bin_h = roi_h / static_cast<T>(pooled), bin_w = roi_w / static_cast<T>(pooled);
      for (int64_t ctop = 0; ctop < dim; ++ctop) {
        for (int64_t ph = 0; ph < pooled; ++ph) {
          int64_t h0 =
              ToIndex(std::floor(static_cast<double>(static_cast<T>(ph) * bin_h + start_h)));
          int64_t h1 =
              ToIndex(std::ceil(static_cast<double>(static_cast<T>(ph + 1) * bin_h + start_h)));
          h0 = std::min(std::max<int64_t>(h0, 0), height);
          h1 = std::min(std::max<int64_t>(h1, 0), height);
          const int64_t gh = GroupBin<T>(ph, group, pooled);
          for (int64_t pw = 0; pw < pooled; ++pw) {
            int64_t w0 =
                ToIndex(std::floor(static_cast<double>(static_cast<T>(pw) * bin_w + start_w)));
            int64_t w1 =
                ToIndex(std::ceil(static_cast<double>(static_cast<T>(pw + 1) * bin_w + start_w)));
            w0 = std::min(std::max<int64_t>(w0, 0), width);
            w1 = std::min(std::max<int64_t>(w1, 0), width);
            const int64_t gw = GroupBin<T>(pw, group, pooled);
            const int64_t c = (ctop * group + gh) * group + gw;
            const T* plane = data + (b * channels + c) * height * width;
            T sum = 0;
            for (int64_t h = h0; h < h1; ++h)
              for (int64_t w = w0; w < w1; ++w) sum += plane[h * width + w];
            const bool empty = h1 <= h0 || w1 <= w0;
            const T area = static_cast<T>((h1 - h0) * (w1 - w0));
            o[(ctop * pooled + ph) * pooled + pw] = empty ? T(0) : sum / area;
          }
        }
      }
    });
  }
};

// ---- _contrib_DeformablePSROIPooling ----------------------------------------------------------

struct DeformablePSROIPoolingParam {
  float spatial_scale = 0.f;
  int output_dim = 0;
  int group_size = 0;
  int pooled_size = 0;
  int part_size = 0;
  int sample_per_part = 1;
  float trans_std = 0.f;
  bool no_trans = false;
  static void Declare(ParamDeclarer<DeformablePSROIPoolingParam>* d) {
    d->Field("spatial_scale", &DeformablePSROIPoolingParam::spatial_scale)
        .Required()
        .Describe("Feature map size over input image size (1 / total stride), in [0, 1].");
    d->Field("output_dim", &DeformablePSROIPoolingParam::output_dim)
        .Required()
        .Describe("Output channels.");
    d->Field("group_size", &DeformablePSROIPoolingParam::group_size)
        .Required()
        .Describe("Position-sensitive groups per side.");
    d->Field("pooled_size", &DeformablePSROIPoolingParam::pooled_size)
        .Required()
        .Describe("Output bins per side.");
    d->Field("part_size", &DeformablePSROIPoolingParam::part_size)
        .Default(0)
        .Describe("Offset parts per side in trans; 0 means pooled_size.");
    d->Field("sample_per_part", &DeformablePSROIPoolingParam::sample_per_part)
        .Default(1)
        .Describe("Bilinear samples per bin side.");
    d->Field("trans_std", &DeformablePSROIPoolingParam::trans_std)
        .Default(0.f)
        .Describe("Scale of the offsets, in [0, 1].");
    d->Field("no_trans", &DeformablePSROIPoolingParam::no_trans)
        .Default(false)
        .Describe("No offsets (no trans input): plain position-sensitive bilinear pooling.");
  }
};

void DeformablePSROIPoolingInit(DeformablePSROIPoolingParam* p) {
  CheckSpatialScale(p->spatial_scale);
  HN_CHECK(p->trans_std >= 0.f && p->trans_std <= 1.f, kInvalidArgument)
      << "trans_std must lie in [0, 1], got " << p->trans_std;
  HN_CHECK(p->output_dim >= 1 && p->group_size >= 1 && p->pooled_size >= 1 && p->part_size >= 0,
           kInvalidArgument)
      << "output_dim, group_size and pooled_size must be positive and part_size non-negative, "
      << "got " << p->output_dim << ", " << p->group_size << ", " << p->pooled_size << ", "
      << p->part_size;
  if (p->part_size == 0) p->part_size = p->pooled_size;
}

bool DeformablePSROIPoolingShape(const NodeAttrs& attrs, std::vector<Shape>* in,
                                 std::vector<Shape>* out) {
  const auto& p = attrs.Param<DeformablePSROIPoolingParam>();
  RoiInputs(attrs, in, 5, "[batch_index, x1, y1, x2, y2]");
  if (!p.no_trans) {
    const Shape& t = (*in)[2];
    const std::string node = DescribeNode(attrs);
    HN_CHECK(t.ndim() == 0 || t.ndim() == 4, kShapeError)
        << node << ": trans should be offsets (num_rois, 2 * num_classes, part_size, part_size)"
        << ", got " << t;
    if (t.ndim() == 4 && t[1] != 0) {
      HN_CHECK(t[1] % 2 == 0 && p.output_dim % (t[1] / 2) == 0, kShapeError)
          << node << ": trans " << t << " should have 2 * num_classes channels with num_classes "
          << "dividing output_dim " << p.output_dim;
    }
    const int64_t rois = (*in)[1].ndim() == 2 ? (*in)[1][0] : 0;
    AssignShape(attrs, in, 2, Shape{rois, t.ndim() == 4 ? t[1] : 0, p.part_size, p.part_size},
                "input 'trans'");
    AssignShape(attrs, in, 1, Shape{(*in)[2][0], 5}, "input 'rois'");
  }
  if ((*in)[0].ndim() == 0 || (*in)[1].ndim() == 0) return false;
  CheckPsChannels(attrs, (*in)[0], p.output_dim, p.group_size);
  AssignShape(attrs, out, 0, Shape{(*in)[1][0], p.output_dim, p.pooled_size, p.pooled_size},
              "output");
  internal::CheckWorkLimit(
      attrs, static_cast<double>((*out)[0].Size()) * p.sample_per_part * p.sample_per_part,
      "sample_per_part " + std::to_string(p.sample_per_part));
  return internal::AllKnown(*in, *out);
}

template <typename T>
T PsBilinear(const T* data, T x, T y, int64_t width) {
  const int64_t x1 = static_cast<int64_t>(std::floor(x)), x2 = static_cast<int64_t>(std::ceil(x));
  const int64_t y1 = static_cast<int64_t>(std::floor(y)), y2 = static_cast<int64_t>(std::ceil(y));
  const T dx = x - static_cast<T>(x1), dy = y - static_cast<T>(y1);
  const T v11 = data[y1 * width + x1], v12 = data[y2 * width + x1];
  const T v21 = data[y1 * width + x2], v22 = data[y2 * width + x2];
  return (1 - dx) * (1 - dy) * v11 + (1 - dx) * dy * v12 + dx * (1 - dy) * v21 + dx * dy * v22;
}

struct DeformablePSROIPoolingKernel {
  template <typename T>
  static void Run(const DeformablePSROIPoolingParam& p, const std::vector<TBlob>& in,
                  const TBlob& out) {
    const Shape& ds = in[0].shape;
    const T* data = in[0].ptr<const T>();
    const T* trans = p.no_trans ? nullptr : in[2].ptr<const T>();
    const int64_t num_classes = p.no_trans ? 1 : in[2].shape[1] / 2;
    const int64_t channels = ds[1], height = ds[2], width = ds[3];
    const int64_t pooled = p.pooled_size, group = p.group_size, dim = p.output_dim;
    const int64_t part = p.part_size, spp = p.sample_per_part;
    const int64_t per_class = dim / num_classes;
    const T scale = p.spatial_scale;
    ForEachRoi<T>(ds[0], in[1], out, [&](int64_t n, const T* roi, int64_t b, T* o) {
      const T start_w = static_cast<T>(static_cast<T>(std::round(roi[1])) * scale - 0.5);
      const T start_h = static_cast<T>(static_cast<T>(std::round(roi[2])) * scale - 0.5);
      const T end_w = static_cast<T>(static_cast<T>(std::round(roi[3]) + 1.) * scale - 0.5);
      const T end_h = static_cast<T>(static_cast<T>(std::round(roi[4]) + 1.) * scale - 0.5);
      const T roi_w = std::max(end_w - start_w, static_cast<T>(0.1));
      const T roi_h = std::max(end_h - start_h, static_cast<T>(0.1));
      const T bin_h = roi_h / static_cast<T>(pooled), bin_w = roi_w / static_cast<T>(pooled);
      const T sub_h = bin_h / static_cast<T>(spp), sub_w = bin_w / static_cast<T>(spp);
      const T* image = data + b * channels * height * width;
      for (int64_t ctop = 0; ctop < dim; ++ctop) {
        const int64_t class_id = ctop / per_class;
        for (int64_t ph = 0; ph < pooled; ++ph) {
          const int64_t part_h = ToIndex(std::floor(static_cast<double>(
              static_cast<T>(ph) / static_cast<T>(pooled) * static_cast<T>(part))));
          const int64_t gh = GroupBin<T>(ph, group, pooled);
          for (int64_t pw = 0; pw < pooled; ++pw) {
            const int64_t part_w = ToIndex(std::floor(static_cast<double>(
                static_cast<T>(pw) / static_cast<T>(pooled) * static_cast<T>(part))));
            T trans_x = 0, trans_y = 0;
            if (trans != nullptr) {
              const int64_t base = (n * num_classes + class_id) * 2;
              trans_x = trans[(base * part + part_h) * part + part_w] * p.trans_std;
              trans_y = trans[((base + 1) * part + part_h) * part + part_w] * p.trans_std;
            }
            T wstart = static_cast<T>(pw) * bin_w + start_w;
            wstart += trans_x * roi_w;
            T hstart = static_cast<T>(ph) * bin_h + start_h;
            hstart += trans_y * roi_h;
            const int64_t gw = GroupBin<T>(pw, group, pooled);
            const T* plane = image + ((ctop * group + gh) * group + gw) * height * width;
            T sum = 0;
            int64_t count = 0;
            for (int64_t ih = 0; ih < spp; ++ih) {
              for (int64_t iw = 0; iw < spp; ++iw) {
                T w = wstart + static_cast<T>(iw) * sub_w;
                T h = hstart + static_cast<T>(ih) * sub_h;
                if (w < -0.5 || w > static_cast<double>(width) - 0.5 || h < -0.5 ||
                    h > static_cast<double>(height) - 0.5) {
                  continue;
                }
                w = std::min(std::max(w, T(0)), static_cast<T>(width - 1));
                h = std::min(std::max(h, T(0)), static_cast<T>(height - 1));
                sum += PsBilinear(plane, w, h, width);
                ++count;
              }
            }
            o[(ctop * pooled + ph) * pooled + pw] = count == 0 ? T(0) : sum / static_cast<T>(count);
          }
        }
      }
    });
  }
};

}  // namespace

void RegisterRoiOps(OpRegistry* r) {
  r->Register("ROIPooling")
      .Describe(
          "Max pooling of each ROI [batch_index, x1, y1, x2, y2] (image coordinates times "
          "spatial_scale, rounded) into pooled_size bins: (num_rois, channels, ph, pw).")
      .AddAlias("_npx_roi_pooling")
      .SetParam<ROIPoolingParam>(PooledSizeAndScaleInit<ROIPoolingParam>)
      .SetInputNames({"data", "rois"})
      .SetNumTotalOutputs(2)  // + MXNet's hidden argmax indices
      .SetInferShape(ROIPoolingShape)
      .SetInferType(RoiType)
      .SetCompute(RoiCompute<ROIPoolingParam, ROIPoolingKernel>)
      .SetGradient(internal::BackwardOpGradient("_backward_ROIPooling"));

  r->Register("_backward_ROIPooling")
      .Describe(
          "The gradient of ROIPooling: each bin's gradient added at its maximum (the first "
          "one); zeros for rois.")
      .SetParam<ROIPoolingParam>(PooledSizeAndScaleInit<ROIPoolingParam>)
      .SetInputNames(internal::BackwardInputNames({"data", "rois"}))
      .SetNumOutputs(2)
      .SetInferShape([](const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
        return internal::BackwardShape(ROIPoolingShape, attrs, in, out);
      })
      .SetInferType(RoiType)
      .SetCompute(ROIPoolingBackwardCompute)
      .SetInternal();

  r->Register("_contrib_ROIAlign")
      .Describe(
          "ROI Align: each bin of each ROI [batch_index, x1, y1, x2, y2] is the average of "
          "bilinear samples of the feature map; (num_rois, channels, ph, pw).")
      .SetParam<ROIAlignParam>(PooledSizeAndScaleInit<ROIAlignParam>)
      .SetInputNames({"data", "rois"})
      .SetInferShape(ROIAlignShape)
      .SetInferType(RoiType)
      .SetCompute(RoiCompute<ROIAlignParam, ROIAlignKernel>)
      .SetGradient(internal::BackwardOpGradient("_backward_ROIAlign"));

  r->Register("_backward_ROIAlign")
      .Describe(
          "The gradient of _contrib_ROIAlign: each bilinear sample's share of its bin's "
          "gradient added to its four pixels; zeros for rois.")
      .SetParam<ROIAlignParam>(PooledSizeAndScaleInit<ROIAlignParam>)
      .SetInputNames(internal::BackwardInputNames({"data", "rois"}))
      .SetNumOutputs(2)
      .SetInferShape([](const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
        return internal::BackwardShape(ROIAlignShape, attrs, in, out);
      })
      .SetInferType(RoiType)
      .SetCompute(ROIAlignBackwardCompute)
      .SetInternal();

  r->Register("_contrib_RROIAlign")
      .Describe(
          "Rotated ROI Align over ROIs [batch_index, center_x, center_y, width, height, "
          "angle in degrees]; (num_rois, channels, ph, pw).")
      .SetParam<RROIAlignParam>(PooledSizeAndScaleInit<RROIAlignParam>)
      .SetInputNames({"data", "rois"})
      .SetInferShape(RROIAlignShape)
      .SetInferType(RoiType)
      .SetCompute(RoiCompute<RROIAlignParam, RROIAlignKernel>);

  r->Register("_contrib_PSROIPooling")
      .Describe(
          "Position-sensitive ROI average pooling (R-FCN): bin (i, j) of output channel k "
          "averages input channel (k * group + gi) * group + gj; (num_rois, output_dim, "
          "pooled_size, pooled_size).")
      .SetParam<PSROIPoolingParam>(PSROIPoolingInit)
      .SetInputNames({"data", "rois"})
      .SetInferShape(PSROIPoolingShape)
      .SetInferType(RoiType)
      .SetCompute(RoiCompute<PSROIPoolingParam, PSROIPoolingKernel>);

  r->Register("_contrib_DeformablePSROIPooling")
      .Describe(
          "Deformable position-sensitive ROI pooling: bins shifted by trans offsets "
          "(num_rois, 2 * num_classes, part, part) times trans_std and the ROI size, "
          "averaged over sample_per_part^2 bilinear samples.")
      .SetParam<DeformablePSROIPoolingParam>(DeformablePSROIPoolingInit)
      .SetInputNames([](const NodeAttrs& attrs) {
        return attrs.Param<DeformablePSROIPoolingParam>().no_trans
                   ? std::vector<std::string>{"data", "rois"}
                   : std::vector<std::string>{"data", "rois", "trans"};
      })
      .SetNumTotalOutputs(2)  // + MXNet's hidden sample counts
      .SetInferShape(DeformablePSROIPoolingShape)
      .SetInferType(RoiType)
      .SetCompute(RoiCompute<DeformablePSROIPoolingParam, DeformablePSROIPoolingKernel>);
}

}  // namespace hybridnet
