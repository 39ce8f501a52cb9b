// Dropout (MXNet src/operator/nn/dropout-inl.h). At inference (mode=training, is_train false)
// it is the identity. With mode=always, or while training, elements are kept with probability
// 1 - p and scaled by 1 / (1 - p); dims listed in axes share one mask value.
//
// The mask comes from a Sampler (ops/random/sampler-inl.h) seeded with one draw of the global
// generator per call (hybridnet::Seed, mx.random.seed), so a seeded program repeats its masks,
// eager or in a graph.
// The hidden "mask" output MXNet has is counted in node_row_ptr but never materialized: the
// gradient (_backward_Dropout) reads the mask back from the input and the output. A kept element
// is x / (1 - p), a dropped one x * 0; where x is 0 the two would be equal, so a dropped zero is
// written as the zero of the other sign (-x), which compares equal to MXNet's x * 0 and tells the
// gradient it was dropped.
//
// Dropout is deliberately not an identity view: the executor skips identity-view kernels, which
// would silently turn mode=always into the identity. It declares in-place instead, so the
// inference identity costs no copy in a planned graph.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "onnx/onnx_convert.h"
#include "ops/gradient_util.h"
#include "ops/random/sampler-inl.h"
#include "ops/register_ops.h"

namespace hybridnet {

namespace {

constexpr size_t kMaxDropoutDims = 16;

enum class DropoutMode { kAlways, kTraining };

struct DropoutParam {
  float p = 0.5f;
  DropoutMode mode = DropoutMode::kTraining;
  std::vector<int64_t> axes;
  std::optional<bool> cudnn_off = false;
  static void Declare(ParamDeclarer<DropoutParam>* d) {
    d->Field("p", &DropoutParam::p)
        .Default(0.5f)
        .Min(0.0)
        .Describe("Fraction of the input that gets dropped out during training time.");
    d->Field("mode", &DropoutParam::mode,
             {{"always", DropoutMode::kAlways}, {"training", DropoutMode::kTraining}})
        .Default(DropoutMode::kTraining)
        .Describe(
            "Whether to only turn on dropout during training or to also turn on for "
            "inference.");
    d->Field("axes", &DropoutParam::axes)
        .Default(std::vector<int64_t>{})
        .Describe("Axes for variational dropout kernel (the mask is shared along them).");
    d->Field("cudnn_off", &DropoutParam::cudnn_off)
        .Default(std::optional<bool>(false))
        .Describe("Whether to turn off cudnn in dropout operator (ignored).");
  }
};

bool DropoutShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const DropoutParam& p = attrs.Param<DropoutParam>();
  HN_CHECK(p.p <= 1.f, kInvalidArgument)
      << DescribeNode(attrs) << ": p=" << p.p << " must be in [0, 1]";
  std::vector<Shape> data_out{(*out)[0]};
  bool known = ElemwiseShape(attrs, in, &data_out);
  (*out)[0] = data_out[0];
  const Shape& dshape = (*in)[0];
  if (dshape.ndim() != 0) {
    HN_CHECK(dshape.ndim() <= kMaxDropoutDims, kShapeError)
        << DescribeNode(attrs) << ": at most " << kMaxDropoutDims << " dimensions";
    Shape mask = dshape;
    for (int64_t a : p.axes) {
      const int64_t n = static_cast<int64_t>(dshape.ndim());
      HN_CHECK(a >= -n && a < n, kShapeError)
          << DescribeNode(attrs) << ": axes entry " << a << " is out of range for " << dshape;
      mask[static_cast<size_t>(a < 0 ? a + n : a)] = 1;
    }
    if (out->size() > 1) (*out)[1] = mask;
  }
  return known;
}

// Whether the call drops elements (else it is the identity, and so is its gradient).
bool DropoutApplies(const DropoutParam& p, bool is_train) {
  return (p.mode == DropoutMode::kAlways || is_train) && p.p > 0.f;
}

// x scaled by a mask value, telling a dropped zero from a kept one by its sign (see above).
inline float Masked(float x, float factor) { return x == 0.f && factor == 0.f ? -x : x * factor; }

void DropoutCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                    const std::vector<TBlob>& out) {
  const DropoutParam& p = attrs.Param<DropoutParam>();
  const float* x = in[0].ptr<const float>();
  float* y = out[0].ptr<float>();
  const int64_t n = in[0].Size();
  if (!DropoutApplies(p, ctx.is_train)) {
    if (x != y) std::memcpy(y, x, static_cast<size_t>(n) * sizeof(float));
    return;
  }
  const float keep = 1.f - p.p;
  const float scale = keep > 0.f ? 1.f / keep : 0.f;
  internal::Sampler sampler(internal::DrawRandomSeed());
  auto draw = [&sampler, keep, scale]() { return sampler.Uniform() < keep ? scale : 0.f; };
  const Shape& s = in[0].shape;
  bool shared[kMaxDropoutDims] = {};
  bool any_shared = false;
  for (int64_t a : p.axes) {
    const int64_t nd = static_cast<int64_t>(s.ndim());
    shared[static_cast<size_t>(a < 0 ? a + nd : a)] = true;
    any_shared = true;
  }
  if (!any_shared) {
    for (int64_t i = 0; i < n; ++i) y[i] = Masked(x[i], draw());
    return;
  }
  // Mask values are drawn in the order of the mask's own (broadcast) elements: walk the mask
  // index space, and for each mask element scale every data element that maps onto it.
  const size_t nd = s.ndim();
  int64_t stride[kMaxDropoutDims];
  int64_t acc = 1;
  for (size_t k = nd; k-- > 0;) {
    stride[k] = acc;
    acc *= s[k];
  }
  int64_t mask_total = 1;
  for (size_t k = 0; k < nd; ++k) mask_total *= shared[k] ? 1 : s[k];
  int64_t midx[kMaxDropoutDims] = {};
  for (int64_t m = 0; m < mask_total; ++m) {
    const float factor = draw();
    // Base offset of this mask element, then every combination of the shared dims.
    int64_t base = 0;
    for (size_t k = 0; k < nd; ++k) base += midx[k] * stride[k];
    int64_t sidx[kMaxDropoutDims] = {};
    int64_t count = 1;
    for (size_t k = 0; k < nd; ++k) count *= shared[k] ? s[k] : 1;
    int64_t off = base;
    for (int64_t c = 0; c < count; ++c) {
      y[off] = Masked(x[off], factor);
      for (size_t k = nd; k-- > 0;) {
        if (!shared[k]) continue;
        ++sidx[k];
        off += stride[k];
        if (sidx[k] < s[k]) break;
        off -= stride[k] * s[k];
        sidx[k] = 0;
      }
    }
    for (size_t k = nd; k-- > 0;) {
      if (shared[k]) continue;
      if (++midx[k] < s[k]) break;
      midx[k] = 0;
    }
  }
}

// _backward_Dropout (out_grad, data, output): dx = dy * mask, the mask (1 / (1 - p) where kept,
// 0 where dropped) read back from x and y: where x is 0, by the sign of y; a NaN x counts as
// kept. The identity when the call does not drop (inference, p = 0), as the forward.
void DropoutBackwardCompute(const OpContext& ctx, const NodeAttrs& attrs,
                            const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const DropoutParam& p = attrs.Param<DropoutParam>();
  const float* dy = in[0].ptr<const float>();
  const float* x = in[1].ptr<const float>();
  const float* y = in[2].ptr<const float>();
  float* dx = out[0].ptr<float>();
  const int64_t n = in[0].Size();
  if (!DropoutApplies(p, ctx.is_train)) {
    std::memcpy(dx, dy, static_cast<size_t>(n) * sizeof(float));
    return;
  }
  const float keep = 1.f - p.p;
  const float scale = keep > 0.f ? 1.f / keep : 0.f;
  for (int64_t i = 0; i < n; ++i) {
    const bool kept = x[i] == 0.f ? std::signbit(y[i]) == std::signbit(x[i])
                                  : std::isnan(x[i]) || (y[i] != 0.f && !std::isnan(y[i]));
    dx[i] = dy[i] * (kept ? scale : 0.f);
  }
}

std::vector<NodeEntry> DropoutGradient(const std::shared_ptr<Node>& n,
                                       const std::vector<NodeEntry>& dy) {
  internal::GradientBuilder g(n, dy);
  return {g.Op("_backward_Dropout", {g.out_grad(0), g.in(0), g.out(0)}, g.attrs().dict)};
}

// The identity at inference. mode=always keeps dropping with hybridnet's own fixed-seed mask,
// which no ONNX runtime reproduces.
void DropoutOnnx(OnnxNodeContext* ctx) {
  const DropoutParam& p = ctx->param<DropoutParam>();
  if (p.mode == DropoutMode::kAlways && p.p > 0.f) {
    ctx->NotExportable("mode='always' drops elements at inference (random; ONNX has no equal)");
  }
  ctx->Add("Identity", {ctx->in(0).name}, {}, ctx->out(0).name);
}

}  // namespace

void RegisterDropoutOps(OpRegistry* r) {
  r->Register("Dropout")
      .Describe(
          "Applies dropout: during training (or always, with mode=always) each element "
          "is zeroed with probability p and the rest are scaled by 1 / (1 - p); identity "
          "at inference otherwise.")
      .SetParam<DropoutParam>()
      .SetInputNames({"data"})
      .SetNumOutputs(1)
      .SetNumTotalOutputs(2)
      .SetInferShape(DropoutShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(DropoutCompute)
      .SetInplace({{0, 0}})
      .SetOnnx({"Identity"}, DropoutOnnx, "mode='always' with p > 0")
      .SetGradient(DropoutGradient);
  r->Register("_backward_Dropout")
      .Describe(
          "The gradient of Dropout: the output gradient times the mask the forward applied "
          "(1 / (1 - p) where kept, 0 where dropped), or unchanged when it did not drop.")
      .SetParam<DropoutParam>()
      .SetInputNames({"out_grad", "data", "output"})
      .SetInferShape(ElemwiseShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(DropoutBackwardCompute)
      .SetInternal();
}

}  // namespace hybridnet
