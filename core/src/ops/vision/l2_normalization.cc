// L2Normalization of MXNet 1.9.1 (src/operator/l2_normalization-inl.h), float32 and float64:
// y = x / sqrt(sum(x^2) + eps), the sum taken
//  * instance: over everything but axis 0 (one norm per sample);
//  * channel: over axis 1 (one norm per sample and position, data at least 3-D);
//  * spatial: over axes 2.. (one norm per sample and channel, data at least 3-D).
// Sums are accumulated in double. MXNet's second output (the norms) is hidden.
#include <cmath>
#include <cstdint>
#include <vector>

#include "hybridnet/op.h"
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

void L2NormalizationCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                            const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<L2NormalizationParam>();
  const Shape& s = in[0].shape;
  const int64_t batch = s[0];
  const int64_t rest = s.Size() / batch;
  internal::SwitchRealDType(in[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in[0].ptr<const T>();
    T* y = out[0].ptr<T>();
    const T eps = static_cast<T>(p.eps);
    switch (p.mode) {
      case L2Mode::kInstance:
        NormalizeGroups(x, y, batch, rest, int64_t{1}, eps);
        break;
      case L2Mode::kChannel:
        NormalizeGroups(x, y, batch, s[1], rest / s[1], eps);
        break;
      case L2Mode::kSpatial:
        NormalizeGroups(x, y, batch * s[1], rest / s[1], int64_t{1}, eps);
        break;
    }
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
      .SetCompute(L2NormalizationCompute);
}

}  // namespace hybridnet
