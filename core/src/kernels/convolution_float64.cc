#include "kernels/convolution_float64.h"

#include <algorithm>
#include <cstdint>

namespace hybridnet {
namespace internal {

namespace {

// The spatial window of a spec right-aligned into 3 axes (ConvSpec's left-aligned ones leave the
// unused axes last), so that the last axis is the image's rows.
struct Window3 {
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, dilate[3] = {1, 1, 1}, pad[3] = {0, 0, 0};
};

Window3 RightAligned(const ConvSpec& s) {
  Window3 g;
  const int64_t off = 3 - s.nd;
  for (int64_t i = 0; i < s.nd; ++i) {
    g.in[off + i] = s.in[i];
    g.out[off + i] = s.out[i];
    g.kernel[off + i] = s.kernel[i];
    g.stride[off + i] = s.stride[i];
    g.dilate[off + i] = s.dilate[i];
    g.pad[off + i] = s.pad_l[i];
  }
  return g;
}

// Calls row(x offset within a channel plane, w offset within a kernel, y offset within an output
// plane, count) for every tap and every output row along the last axis, over the `count`
// consecutive outputs whose input for that tap lies inside the image (x offsets then step by the
// last stride).
template <typename Row>
void ForEachTapRow(const Window3& s, Row row) {
  for (int64_t k0 = 0; k0 < s.kernel[0]; ++k0)
    for (int64_t k1 = 0; k1 < s.kernel[1]; ++k1)
      for (int64_t k2 = 0; k2 < s.kernel[2]; ++k2) {
        const int64_t w_at = (k0 * s.kernel[1] + k1) * s.kernel[2] + k2;
        // Input column o2 * stride + offset must lie in [0, in[2]).
        const int64_t offset = k2 * s.dilate[2] - s.pad[2];
        const int64_t lo = offset >= 0 ? 0 : (-offset + s.stride[2] - 1) / s.stride[2];
        const int64_t last = s.in[2] - 1 - offset;
        const int64_t hi = last < 0 ? 0 : std::min(s.out[2], last / s.stride[2] + 1);
        if (lo >= hi) continue;
        for (int64_t o0 = 0; o0 < s.out[0]; ++o0) {
          const int64_t i0 = o0 * s.stride[0] - s.pad[0] + k0 * s.dilate[0];
          if (i0 < 0 || i0 >= s.in[0]) continue;
          for (int64_t o1 = 0; o1 < s.out[1]; ++o1) {
            const int64_t i1 = o1 * s.stride[1] - s.pad[1] + k1 * s.dilate[1];
            if (i1 < 0 || i1 >= s.in[1]) continue;
            row((i0 * s.in[1] + i1) * s.in[2] + lo * s.stride[2] + offset, w_at,
                (o0 * s.out[1] + o1) * s.out[2] + lo, hi - lo);
          }
        }
      }
}

int64_t Plane(const int64_t* dims) { return dims[0] * dims[1] * dims[2]; }

}  // namespace

void ConvolutionFloat64(const ConvSpec& s, const double* x, const double* w, const double* bias,
                        double* y) {
  const Window3 g = RightAligned(s);
  const int64_t cg = s.C / s.G, fg = s.F / s.G, step = g.stride[2];
  const int64_t in_plane = Plane(s.in), out_plane = Plane(s.out), taps = Plane(s.kernel);
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t f = 0; f < s.F; ++f) {
      double* yf = y + (n * s.F + f) * out_plane;
      std::fill(yf, yf + out_plane, bias ? bias[f] : 0.0);
      const int64_t first_channel = f / fg * cg;
      for (int64_t c = 0; c < cg; ++c) {
        const double* xc = x + (n * s.C + first_channel + c) * in_plane;
        const double* wc = w + (f * cg + c) * taps;
        ForEachTapRow(g, [&](int64_t xi, int64_t wi, int64_t yi, int64_t count) {
          const double weight = wc[wi];
          for (int64_t j = 0; j < count; ++j) yf[yi + j] += xc[xi + j * step] * weight;
        });
      }
    }
}

void ConvolutionGradientsFloat64(const ConvSpec& s, const double* x, const double* w,
                                 const double* dy, double* dx, double* dw) {
  const Window3 g = RightAligned(s);
  const int64_t cg = s.C / s.G, fg = s.F / s.G, step = g.stride[2];
  const int64_t in_plane = Plane(s.in), out_plane = Plane(s.out), taps = Plane(s.kernel);
  std::fill(dx, dx + s.N * s.C * in_plane, 0.0);
  std::fill(dw, dw + s.F * cg * taps, 0.0);
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t f = 0; f < s.F; ++f) {
      const double* dyf = dy + (n * s.F + f) * out_plane;
      const int64_t first_channel = f / fg * cg;
      for (int64_t c = 0; c < cg; ++c) {
        const int64_t x_at = (n * s.C + first_channel + c) * in_plane;
        const double* xc = x + x_at;
        double* dxc = dx + x_at;
        const double* wc = w + (f * cg + c) * taps;
        double* dwc = dw + (f * cg + c) * taps;
        ForEachTapRow(g, [&](int64_t xi, int64_t wi, int64_t yi, int64_t count) {
          const double weight = wc[wi];
          double sum = 0.0;
          for (int64_t j = 0; j < count; ++j) {
            dxc[xi + j * step] += dyf[yi + j] * weight;
            sum += dyf[yi + j] * xc[xi + j * step];
          }
          dwc[wi] += sum;
        });
      }
    }
}

}  // namespace internal
}  // namespace hybridnet
