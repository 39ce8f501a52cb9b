// Correlation of MXNet 1.9.1 (src/operator/correlation.cc, CPU; FlowNet's correlation layer),
// float32 and float64. Both inputs are zero-padded by pad_size; output channel
// (dy_i * grid + dx_i) at (i, j) compares the kernel_size x kernel_size patch of data1 at
// (i * stride1 + max_displacement, j * stride1 + max_displacement) with the patch of data2
// displaced by ((dy_i - r) * stride2, (dx_i - r) * stride2), r = max_displacement / stride2,
// grid = 2r + 1: the sum over the patch and channels of x1 * x2 (is_multiply) or |x1 - x2|,
// divided by kernel_size^2 * channels. The output is
// (batch, grid^2, ceil((H + 2 pad - 2 border) / stride1), same for W), border =
// max_displacement + (kernel_size - 1) / 2. MXNet's padded copies (outputs 1, 2) are hidden.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "ops/vision/vision_common-inl.h"
#include "ops/vision/vision_ops.h"

namespace hybridnet {
namespace {

using internal::AssignShape;

struct CorrelationParam {
  uint32_t kernel_size = 1;
  uint32_t max_displacement = 1;
  uint32_t stride1 = 1;
  uint32_t stride2 = 1;
  uint32_t pad_size = 0;
  bool is_multiply = true;
  static void Declare(ParamDeclarer<CorrelationParam>* d) {
    d->Field("kernel_size", &CorrelationParam::kernel_size)
        .Default(1u)
        .Describe("Side of the compared patches (odd).");
    d->Field("max_displacement", &CorrelationParam::max_displacement)
        .Default(1u)
        .Describe("Largest displacement compared.");
    d->Field("stride1", &CorrelationParam::stride1)
        .Default(1u)
        .Describe("Stride of the patch centers in data1.");
    d->Field("stride2", &CorrelationParam::stride2)
        .Default(1u)
        .Describe("Stride of the displacements in data2.");
    d->Field("pad_size", &CorrelationParam::pad_size)
        .Default(0u)
        .Describe("Zero padding of both inputs.");
    d->Field("is_multiply", &CorrelationParam::is_multiply)
        .Default(true)
        .Describe("Correlate by products; false uses absolute differences.");
  }
};

void CorrelationInit(CorrelationParam* p) {
  HN_CHECK(p->kernel_size % 2 == 1, kInvalidArgument)
      << "kernel_size must be odd, got " << p->kernel_size;
  HN_CHECK(p->stride1 >= 1 && p->stride2 >= 1, kInvalidArgument)
      << "stride1 and stride2 must be positive, got " << p->stride1 << ", " << p->stride2;
}

struct CorrGeom {
  int64_t radius, grid, border, top_h, top_w, padded_h, padded_w;
};

CorrGeom Geometry(const CorrelationParam& p, int64_t h, int64_t w) {
  CorrGeom g;
  g.padded_h = h + 2 * static_cast<int64_t>(p.pad_size);
  g.padded_w = w + 2 * static_cast<int64_t>(p.pad_size);
  g.border =
      static_cast<int64_t>(p.max_displacement) + (static_cast<int64_t>(p.kernel_size) - 1) / 2;
  const double s1 = p.stride1;
  g.top_h = static_cast<int64_t>(std::ceil(static_cast<double>(g.padded_h - 2 * g.border) / s1));
  g.top_w = static_cast<int64_t>(std::ceil(static_cast<double>(g.padded_w - 2 * g.border) / s1));
  g.radius = static_cast<int64_t>(p.max_displacement / p.stride2);
  g.grid = 2 * g.radius + 1;
  return g;
}

bool CorrelationShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const auto& p = attrs.Param<CorrelationParam>();
  const std::string node = DescribeNode(attrs);
  for (size_t i = 0; i < 2; ++i) {
    HN_CHECK((*in)[i].ndim() == 0 || (*in)[i].ndim() == 4, kShapeError)
        << node << ": data" << i + 1 << " should be (batch, channel, height, width), got "
        << (*in)[i];
  }
  AssignShape(attrs, in, 1, (*in)[0], "input 'data2' (data1's shape)");
  AssignShape(attrs, in, 0, (*in)[1], "input 'data1' (data2's shape)");
  const Shape& d = (*in)[0];
  if (d.ndim() == 0 || d[2] == 0 || d[3] == 0) return false;
  const CorrGeom g = Geometry(p, d[2], d[3]);
  HN_CHECK(g.top_h >= 1 && g.top_w >= 1, kShapeError)
      << node << ": data " << d << " padded by " << p.pad_size << " is too small for "
      << "max_displacement " << p.max_displacement << " and kernel_size " << p.kernel_size;
  AssignShape(attrs, out, 0, Shape{d[0], g.grid * g.grid, g.top_h, g.top_w}, "output");
  return internal::AllKnown(*in, *out);
}

template <typename T>
void CorrelationKernel(const CorrelationParam& p, const Shape& ds, const T* a, const T* b, T* out) {
  const int64_t batch = ds[0], channels = ds[1], h = ds[2], w = ds[3];
  const CorrGeom g = Geometry(p, h, w);
  const int64_t pad = p.pad_size, k = p.kernel_size, md = p.max_displacement;
  const int64_t s1 = p.stride1, s2 = p.stride2;
  const T sumelems = static_cast<T>(k * k * channels);
  const int64_t top_c = g.grid * g.grid;
  // Value of input x (n, c) at padded position (py, px).
  auto at = [&](const T* x, int64_t n, int64_t c, int64_t py, int64_t px) {
    const int64_t y = py - pad, xx = px - pad;
    return (y < 0 || y >= h || xx < 0 || xx >= w) ? T(0) : x[((n * channels + c) * h + y) * w + xx];
  };
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t tc = 0; tc < top_c; ++tc) {
      const int64_t s2o = (tc % g.grid - g.radius) * s2, s2p = (tc / g.grid - g.radius) * s2;
      for (int64_t i = 0; i < g.top_h; ++i) {
        for (int64_t j = 0; j < g.top_w; ++j) {
          const int64_t x1 = j * s1 + md, y1 = i * s1 + md;
          const int64_t x2 = x1 + s2o, y2 = y1 + s2p;
          T acc = 0;
          for (int64_t dy = 0; dy < k; ++dy)
            for (int64_t dx = 0; dx < k; ++dx)
              for (int64_t c = 0; c < channels; ++c) {
                const T v1 = at(a, n, c, y1 + dy, x1 + dx), v2 = at(b, n, c, y2 + dy, x2 + dx);
                acc += p.is_multiply ? v1 * v2 : std::abs(v1 - v2);
              }
          out[((n * top_c + tc) * g.top_h + i) * g.top_w + j] = acc / sumelems;
        }
      }
    }
  }
}

void CorrelationCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                        const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<CorrelationParam>();
  internal::SwitchRealDType(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    CorrelationKernel<T>(p, in[0].shape, in[0].ptr<const T>(), in[1].ptr<const T>(),
                         out[0].ptr<T>());
  });
}

}  // namespace

void RegisterCorrelationOps(OpRegistry* r) {
  r->Register("Correlation")
      .Describe(
          "FlowNet correlation of two feature maps: for every displacement within "
          "max_displacement, the mean product (or absolute difference) of patches.")
      .SetParam<CorrelationParam>(CorrelationInit)
      .SetInputNames({"data1", "data2"})
      .SetNumTotalOutputs(3)  // + MXNet's hidden padded copies of the inputs
      .SetInferShape(CorrelationShape)
      .SetInferType(internal::RealType)
      .SetCompute(CorrelationCompute);
}

}  // namespace hybridnet
