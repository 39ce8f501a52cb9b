// Naive references (plain loops in double, no hybridnet kernels) shared by the op case tables:
// activations, Convolution/Deconvolution, Pooling and BatchNorm, each written once from MXNet's
// definition. Fused internal ops (fusion_cases.cc) compose them.
#pragma once

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <utility>
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
      grid.push_back(
          (image[i] + 2 * g.pad[i] - (g.dilate[i] * (g.kernel[i] - 1) + 1)) / g.stride[i] + 1);
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

enum class Convention { kValid, kFull, kSame };

struct PoolSpec {
  std::string type = "max";  // max, avg, sum, lp
  Dims kernel, stride, pad;  // stride and pad may be empty (their defaults)
  Convention convention = Convention::kValid;
  int include_pad = -1;  // count_include_pad: -1 not given (true), 0 or 1
  bool global = false;
  int p_value = 0;     // 0: not given
  std::string layout;  // empty: channel-first
};

inline PoolSpec Pool(std::string type, Dims kernel, Dims stride, Dims pad, Convention convention,
                     int include_pad = -1, bool global = false, int p_value = 0,
                     std::string layout = "") {
  PoolSpec s;
  s.type = std::move(type);
  s.kernel = std::move(kernel);
  s.stride = std::move(stride);
  s.pad = std::move(pad);
  s.convention = convention;
  s.include_pad = include_pad;
  s.global = global;
  s.p_value = p_value;
  s.layout = std::move(layout);
  return s;
}

// MXNet's pooling (pool.h): windows start at o * stride - pad; max windows stop at the image
// and start from -FLT_MAX (NaN never wins); avg/sum/lp windows stop at the padded image and avg
// divides by that window's size (count_include_pad) or by the part inside the image, where an
// empty window gives 0 in 1-D/2-D and NaN in 3-D; lp takes the p-th root of the sum of x^p.
inline RefFn PoolRef(PoolSpec spec) {
  return [spec](const std::vector<RefTensor>& in) {
    const Shape& xs = in[0].shape;
    const size_t ns = xs.ndim() - 2;
    const bool cl = !spec.layout.empty() && spec.layout.back() == 'C';
    const size_t sp0 = cl ? 1 : 2, cax = cl ? xs.ndim() - 1 : 1;
    Dims image, k = spec.kernel, s = spec.stride, p = spec.pad;
    for (size_t i = 0; i < ns; ++i) image.push_back(xs[sp0 + i]);
    if (spec.global) {
      k = image;
      s.assign(ns, 1);
      p.assign(ns, 0);
    }
    if (s.empty()) s.assign(ns, 1);
    if (p.empty()) p.assign(ns, 0);
    Dims grid;
    for (size_t i = 0; i < ns; ++i) {
      const int64_t span = image[i] + 2 * p[i] - k[i];
      if (spec.global) {
        grid.push_back(1);
      } else if (spec.convention == Convention::kValid) {
        grid.push_back(span / s[i] + 1);
      } else if (spec.convention == Convention::kFull) {
        grid.push_back((span + s[i] - 1) / s[i] + 1);
      } else {
        grid.push_back((image[i] + 2 * p[i] + s[i] - 1) / s[i]);
      }
    }
    Dims od = xs.dims();
    for (size_t i = 0; i < ns; ++i) od[sp0 + i] = grid[i];
    RefTensor out{Shape(od)};
    const Win3 w = MakeWin3(k, s, p, {}, image, grid);
    const int64_t N = xs[0], C = xs[cax];
    const bool include = spec.include_pad != 0, is_max = spec.type == "max";
    const int pv = spec.type == "lp" ? spec.p_value : 1;
    // Flat index of (n, c, spatial offset) in either layout.
    auto at = [&](int64_t n, int64_t c, int64_t sp, int64_t plane) {
      return cl ? (n * plane + sp) * C + c : (n * C + c) * plane + sp;
    };
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t c = 0; c < C; ++c) {
        for (int64_t o = 0; o < w.GridSize(); ++o) {
          const int64_t oi[3] = {o / (w.grid[1] * w.grid[2]), (o / w.grid[2]) % w.grid[1],
                                 o % w.grid[2]};
          int64_t lo[3], hi[3], padded = 1, inside = 1;
          for (int i = 0; i < 3; ++i) {
            const int64_t start = oi[i] * w.s[i] - w.p[i];
            const int64_t end = is_max ? std::min(start + w.k[i], w.image[i])
                                       : std::min(start + w.k[i], w.image[i] + w.p[i]);
            padded *= end - start;
            lo[i] = std::max<int64_t>(start, 0);
            hi[i] = std::min(end, w.image[i]);
            inside *= std::max<int64_t>(0, hi[i] - lo[i]);
          }
          double acc = is_max ? -static_cast<double>(FLT_MAX) : 0.0;
          for (int64_t a = lo[0]; a < hi[0]; ++a)
            for (int64_t b = lo[1]; b < hi[1]; ++b)
              for (int64_t e = lo[2]; e < hi[2]; ++e) {
                const double v =
                    in[0][at(n, c, (a * w.image[1] + b) * w.image[2] + e, w.ImageSize())];
                if (is_max) {
                  acc = std::max(acc, v);
                } else {
                  acc += std::pow(v, pv);
                }
              }
          if (spec.type == "avg") {
            const int64_t count = include ? padded : inside;
            acc = count > 0 ? acc / static_cast<double>(count)
                            : (ns == 3 ? std::numeric_limits<double>::quiet_NaN() : 0.0);
          }
          if (spec.type == "lp") acc = pv == 2 ? std::sqrt(acc) : pv == 3 ? std::cbrt(acc) : acc;
          out[at(n, c, o, w.GridSize())] = acc;
        }
      }
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
    const size_t a =
        static_cast<size_t>(b.axis < 0 ? b.axis + static_cast<int>(xs.ndim()) : b.axis);
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
