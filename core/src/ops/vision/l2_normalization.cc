// L2Normalization of MXNet 1.9.1 (src/operator/l2_normalization-inl.h), float32 and float64:
// y = x / sqrt(sum(x^2) + eps), the sum taken
//  * instance: over everything but axis 0 (one norm per sample);
//  * channel: over axis 1 (one norm per sample and position, data at least 3-D);
//  * spatial: over axes 2.. (one norm per sample and channel, data at least 3-D).
// Sums are accumulated in double. MXNet's second output (the norms) is hidden.
// The gradient (_backward_L2Normalization) recomputes each norm: per group,
// dx = (dy - y * sum(dy * y)) / norm, as MXNet's.
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "hybridnet/op.h"
#include "ops/gradient_util.h"
#include "ops/vision/vision_common-inl.h"
#include "ops/vision/vision_ops.h"

namespace hybridnet {
namespace {

enum class L2Mode { kInstance, kChannel, kSpatial };

struct L2NormalizationParam {
  float eps = 1e-10f;
  L2Mode mode = L2Mode::kInstance;
  static void Declare(ParamDeclarer<L2NormalizationParam>* d) {
    d->Field("eps", &L2NormalizationParam::eps)
        .Default(1e-10f)
        .Describe("Added to the sum of squares before the square root.");
    d->Field("mode", &L2NormalizationParam::mode,
             {{"channel", L2Mode::kChannel},
              {"instance", L2Mode::kInstance},
              {"spatial", L2Mode::kSpatial}})
        .Default(L2Mode::kInstance)
        .Describe(
            "instance: per sample; channel: across channels per position; spatial: "
            "across positions per channel.");
  }
};

bool L2NormalizationShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const auto& p = attrs.Param<L2NormalizationParam>();
  internal::AssignShape(attrs, in, 0, (*out)[0], "input 'data'");
  const Shape& d = (*in)[0];
  if (d.ndim() == 0) return false;
  HN_CHECK(p.mode == L2Mode::kInstance || d.ndim() >= 3, kShapeError)
      << DescribeNode(attrs) << ": channel and spatial modes need data of at least 3 "
      << "dimensions (batch, channel, ...), got " << d;
  internal::AssignShape(attrs, out, 0, d, "output");
  return d.IsKnown();
}

// Normalizes `outer` groups of `n` elements strided by `stride`, `inner` groups per outer block.
template <typename T>
void NormalizeGroups(const T* x, T* y, int64_t outer, int64_t n, int64_t inner, T eps) {
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const T* xs = x + o * n * inner + i;
      T* ys = y + o * n * inner + i;
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) sum += static_cast<double>(xs[k * inner]) * xs[k * inner];
      const T norm = std::sqrt(static_cast<T>(sum) + eps);
      for (int64_t k = 0; k < n; ++k) ys[k * inner] = xs[k * inner] / norm;
    }
  }
}

// The gradient of NormalizeGroups, group by group.
template <typename T>
void NormalizeGroupsBackward(const T* dy, const T* x, T* dx, int64_t outer, int64_t n,
                             int64_t inner, T eps) {
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * n * inner + i;
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) {
        sum += static_cast<double>(x[base + k * inner]) * x[base + k * inner];
      }
      const T norm = std::sqrt(static_cast<T>(sum) + eps);
      double dot = 0;
      for (int64_t k = 0; k < n; ++k) {
        dot += static_cast<double>(dy[base + k * inner]) * (x[base + k * inner] / norm);
      }
      for (int64_t k = 0; k < n; ++k) {
        const T y = x[base + k * inner] / norm;
        dx[base + k * inner] = static_cast<T>((dy[base + k * inner] - y * dot) / norm);
      }
    }
  }
}

// The (outer, n, inner) groups of `mode` for data of shape s.
struct L2Groups {
  int64_t outer, n, inner;
};

L2Groups GroupsOf(L2Mode mode, const Shape& s) {
  const int64_t batch = s[0];
  const int64_t rest = s.Size() / batch;
  switch (mode) {
    case L2Mode::kChannel:
      return {batch, s[1], rest / s[1]};
    case L2Mode::kSpatial:
      return {batch * s[1], rest / s[1], 1};
    case L2Mode::kInstance:
      break;
  }
  return {batch, rest, 1};
}

void L2NormalizationCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                            const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<L2NormalizationParam>();
  const L2Groups g = GroupsOf(p.mode, in[0].shape);
  internal::SwitchRealDType(in[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    NormalizeGroups(in[0].ptr<const T>(), out[0].ptr<T>(), g.outer, g.n, g.inner,
                    static_cast<T>(p.eps));
  });
}

// _backward_L2Normalization: inputs (out_grad, data), output the data gradient.
void L2NormalizationBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                                    const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<L2NormalizationParam>();
  const L2Groups g = GroupsOf(p.mode, in[1].shape);
  internal::SwitchRealDType(in[1].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    NormalizeGroupsBackward(in[0].ptr<const T>(), in[1].ptr<const T>(), out[0].ptr<T>(), g.outer,
                            g.n, g.inner, static_cast<T>(p.eps));
  });
}

}  // namespace

void RegisterL2NormalizationOps(OpRegistry* r) {
  r->Register("L2Normalization")
      .Describe(
          "Divides the input by its L2 norm (plus eps) per sample (instance), per "
          "position across channels (channel) or per channel across positions (spatial).")
      .SetParam<L2NormalizationParam>()
      .SetInputNames({"data"})
      .SetNumTotalOutputs(2)  // + MXNet's hidden norms
      .SetInferShape(L2NormalizationShape)
      .SetInferType(internal::RealType)
      .SetCompute(L2NormalizationCompute)
      .SetGradient([](const std::shared_ptr<Node>& n, const std::vector<NodeEntry>& dy) {
        internal::GradientBuilder g(n, dy);
        return std::vector<NodeEntry>{
            g.Op("_backward_L2Normalization", {g.out_grad(0), g.in(0)}, g.attrs().dict)};
      });
  r->Register("_backward_L2Normalization")
      .Describe("The gradient of L2Normalization: (dy - y * sum(dy * y)) / norm per group.")
      .SetParam<L2NormalizationParam>()
      .SetInputNames({"out_grad", "data"})
      .SetInferShape([](const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
        std::vector<Shape> data{(*in)[1]};
        std::vector<Shape> forward_out{(*in)[0]};
        internal::AssignShape(attrs, &data, 0, (*out)[0], "input 'data'");
        const bool known = L2NormalizationShape(attrs, &data, &forward_out);
        (*in)[0] = forward_out[0];
        (*in)[1] = (*out)[0] = data[0];
        return known;
      })
      .SetInferType(internal::RealType)
      .SetCompute(L2NormalizationBackwardCompute)
      .SetInternal();
}

}  // namespace hybridnet
