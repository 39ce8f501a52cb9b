// Naive references (plain loops in double, no hybridnet kernels) shared by the op case tables:
// activations, Convolution/Deconvolution and BatchNorm, each written once from MXNet's
// definition. Fused internal ops (fusion_cases.cc) compose them.
#pragma once

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "conformance.h"

namespace hybridnet {
namespace conformance {

using Dims = std::vector<int64_t>;

/// MXNet's activation functions.
inline std::function<double(double)> Act(const std::string& act) {
  if (act == "relu") return [](double x) { return x > 0 ? x : 0.0; };
  if (act == "sigmoid") return [](double x) { return 1 / (1 + std::exp(-x)); };
  if (act == "tanh") return [](double x) { return std::tanh(x); };
  if (act == "softrelu") return [](double x) { return std::log(1 + std::exp(x)); };
  return [](double x) { return x / (1 + std::fabs(x)); };  // softsign
}

// A window geometry right-aligned into 3 dims: image (dense side) and grid (window positions).
struct Win3 {
  int64_t k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, p[3] = {0, 0, 0}, d[3] = {1, 1, 1};
  int64_t image[3] = {1, 1, 1}, grid[3] = {1, 1, 1};
  int64_t ImageSize() const { return image[0] * image[1] * image[2]; }
  int64_t GridSize() const { return grid[0] * grid[1] * grid[2]; }
  /// The flat image position that tap `t` of window position `o` (flat, grid side) covers, or
  /// -1 when it falls in the padding.
  int64_t ImageAt(int64_t o, int64_t t) const {
    const int64_t at[3] = {o / (grid[1] * grid[2]), (o / grid[2]) % grid[1], o % grid[2]};
    const int64_t tap[3] = {t / (k[1] * k[2]), (t / k[2]) % k[1], t % k[2]};
    int64_t flat = 0;
    for (int i = 0; i < 3; ++i) {
      const int64_t x = at[i] * s[i] - p[i] + tap[i] * d[i];
      if (x < 0 || x >= image[i]) return -1;
      flat = flat * image[i] + x;
    }
    return flat;
  }
};

inline Win3 MakeWin3(const Dims& k, const Dims& s, const Dims& p, const Dims& d, const Dims& image,
              const Dims& grid) {
  Win3 w;
  const size_t off = 3 - k.size();
  for (size_t i = 0; i < k.size(); ++i) {
    w.k[off + i] = k[i];
    w.s[off + i] = s[i];
    w.p[off + i] = p[i];
    w.d[off + i] = d.empty() ? 1 : d[i];
    w.image[off + i] = image[i];
    w.grid[off + i] = grid[i];
  }
  return w;
}

inline Dims Spatial(const Shape& s) { return Dims(s.begin() + 2, s.end()); }

struct ConvGeom {
  Dims kernel, stride, pad, dilate;
  int64_t num_filter = 1, num_group = 1;
  bool bias = true;
  Dims adj;     // deconvolution only
  Dims target;  // deconvolution only: target_shape (overrides pad and adj)
};

// out[n, f, o] = bias[f] + sum over the group's channels c and taps t of
//                x[n, c, o * stride - pad + t * dilate] * w[f, c', t]   (taps in the padding add 0)
inline RefFn ConvRef(ConvGeom g) {
  return [g](const std::vector<RefTensor>& in) {
    const Shape& xs = in[0].shape;
    const int64_t N = xs[0], C = xs[1], F = g.num_filter, G = g.num_group;
    const Dims image = Spatial(xs);
    Dims grid;
    for (size_t i = 0; i < g.kernel.size(); ++i) {
      grid.push_back((image[i] + 2 * g.pad[i] - (g.dilate[i] * (g.kernel[i] - 1) + 1)) /
                         g.stride[i] + 1);
    }
    Dims od{N, F};
    od.insert(od.end(), grid.begin(), grid.end());
    RefTensor out{Shape(od)};
    const Win3 w = MakeWin3(g.kernel, g.stride, g.pad, g.dilate, image, grid);
    const int64_t Cg = C / G, Fg = F / G, taps = w.k[0] * w.k[1] * w.k[2];
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t f = 0; f < F; ++f) {
        const int64_t grp = f / Fg;
        for (int64_t o = 0; o < w.GridSize(); ++o) {
          double acc = g.bias ? in[2][f] : 0.0;
          for (int64_t cc = 0; cc < Cg; ++cc) {
            const int64_t c = grp * Cg + cc;
            for (int64_t t = 0; t < taps; ++t) {
              const int64_t at = w.ImageAt(o, t);
              if (at < 0) continue;
              acc += in[0][(n * C + c) * w.ImageSize() + at] * in[1][(f * Cg + cc) * taps + t];
            }
          }
          out[(n * F + f) * w.GridSize() + o] = acc;
        }
      }
    }
    return std::vector<RefTensor>{out};
  };
}

// The transposed convolution as a scatter: every x[n, c, i] adds x * w[c, f', t] to
// out[n, group * Fg + f', i * stride - pad + t * dilate]. With target_shape, pad and adj are
// the ones that give that output size: pad = ceil(excess / 2), adj = 2 * pad - excess.
inline RefFn DeconvRef(ConvGeom g) {
  return [g](const std::vector<RefTensor>& in) {
    const Shape& xs = in[0].shape;
    const int64_t N = xs[0], C = xs[1], F = g.num_filter, G = g.num_group;
    const Dims image = Spatial(xs);
    Dims pad = g.pad, adj = g.adj, grid;
    for (size_t i = 0; i < g.kernel.size(); ++i) {
      const int64_t full = g.stride[i] * (image[i] - 1) + g.dilate[i] * (g.kernel[i] - 1) + 1;
      if (!g.target.empty()) {
        const int64_t excess = full - g.target[i];
        pad[i] = (excess + 1) / 2;
        adj[i] = 2 * pad[i] - excess;
      }
      grid.push_back(full - 2 * pad[i] + adj[i]);
    }
    Dims od{N, F};
    od.insert(od.end(), grid.begin(), grid.end());
    RefTensor out{Shape(od)};
    // Here the input is the window side: "grid" positions are the output's.
    const Win3 w = MakeWin3(g.kernel, g.stride, pad, g.dilate, grid, image);
    const int64_t Cg = C / G, Fg = F / G, taps = w.k[0] * w.k[1] * w.k[2];
    const int64_t in_plane = w.GridSize(), out_plane = w.ImageSize();
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t c = 0; c < C; ++c) {
        const int64_t grp = c / Cg;
        for (int64_t i = 0; i < in_plane; ++i) {
          const double xv = in[0][(n * C + c) * in_plane + i];
          for (int64_t fl = 0; fl < Fg; ++fl) {
            const int64_t f = grp * Fg + fl;
            for (int64_t t = 0; t < taps; ++t) {
              const int64_t at = w.ImageAt(i, t);
              if (at < 0) continue;
              out[(n * F + f) * out_plane + at] += xv * in[1][(c * Fg + fl) * taps + t];
            }
          }
        }
      }
    }
    if (g.bias) {
      for (int64_t i = 0; i < out.size(); ++i) out[i] += in[2][(i / out_plane) % F];
    }
    return std::vector<RefTensor>{out};
  };
}

struct BnSpec {
  double eps = static_cast<double>(1e-3f);
  bool fix_gamma = true;
  int axis = 1;
  bool relu = false;
  bool mean_var = false;
  bool batch_stats = false;  // training forward (is_train and not use_global_stats)
};

// y = (x - mean) / sqrt(var + eps) * gamma + beta per channel (gamma = 1 with fix_gamma), eps
// rounded to float first as MXNet does; mean/var are the moving statistics, or the batch mean and
// biased batch variance in training. With output_mean_var the outputs also hold the mean and
// 1 / sqrt(var + eps).
inline RefFn BatchNormRef(BnSpec b) {
  return [b](const std::vector<RefTensor>& in) {
    const Shape& xs = in[0].shape;
    const size_t a = static_cast<size_t>(b.axis < 0 ? b.axis + static_cast<int>(xs.ndim()) : b.axis);
    int64_t inner = 1;
    for (size_t i = a + 1; i < xs.ndim(); ++i) inner *= xs[i];
    const int64_t C = xs[a];
    auto channel = [&](int64_t i) { return (i / inner) % C; };
    RefTensor mean(Shape{C}), var(Shape{C}), invstd(Shape{C});
    for (int64_t c = 0; c < C; ++c) {
      mean[c] = in[3][c];
      var[c] = in[4][c];
    }
    if (b.batch_stats) {
      RefTensor count(Shape{C});
      for (int64_t c = 0; c < C; ++c) mean[c] = var[c] = 0.0;
      for (int64_t i = 0; i < in[0].size(); ++i) {
        mean[channel(i)] += in[0][i];
        count[channel(i)] += 1;
      }
      for (int64_t c = 0; c < C; ++c) mean[c] /= count[c];
      for (int64_t i = 0; i < in[0].size(); ++i) {
        const double d = in[0][i] - mean[channel(i)];
        var[channel(i)] += d * d;
      }
      for (int64_t c = 0; c < C; ++c) var[c] /= count[c];
    }
    for (int64_t c = 0; c < C; ++c) invstd[c] = 1.0 / std::sqrt(var[c] + F32(b.eps));
    RefTensor out(xs);
    for (int64_t i = 0; i < out.size(); ++i) {
      const int64_t c = channel(i);
      const double gamma = b.fix_gamma ? 1.0 : in[1][c];
      const double y = (in[0][i] - mean[c]) * invstd[c] * gamma + in[2][c];
      out[i] = b.relu && y < 0 ? 0.0 : y;
    }
    if (b.mean_var) return std::vector<RefTensor>{out, mean, invstd};
    return std::vector<RefTensor>{out};
  };
}

/// (N, C, spatial...) <-> (N, spatial..., C) copies of a reference tensor.
inline RefTensor ToChannelLast(const RefTensor& t) {
  const Shape& s = t.shape;
  Dims d = {s[0]};
  d.insert(d.end(), s.begin() + 2, s.end());
  d.push_back(s[1]);
  RefTensor out{Shape(d)};
  const int64_t N = s[0], C = s[1], S = t.size() / (N * C);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < S; ++i) out[(n * S + i) * C + c] = t[(n * C + c) * S + i];
  return out;
}

inline RefTensor ToChannelFirst(const RefTensor& t) {
  const Shape& s = t.shape;
  Dims d = {s[0], s[s.ndim() - 1]};
  d.insert(d.end(), s.begin() + 1, s.end() - 1);
  RefTensor out{Shape(d)};
  const int64_t N = s[0], C = s[s.ndim() - 1], S = t.size() / (N * C);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < S; ++i) out[(n * C + c) * S + i] = t[(n * S + i) * C + c];
  return out;
}

}  // namespace conformance
}  // namespace hybridnet
