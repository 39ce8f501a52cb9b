// LRN, local response normalization across channels (MXNet src/operator/nn/lrn-inl.h):
//   norm[n, c, ...] = knorm + alpha / nsize * sum over c' in [c - nsize/2, c + nsize/2] of x^2
//   out = x * norm^(-beta)
// Outputs: output and the hidden tmp_norm (MXNet keeps it for backward; _backward_LRN recomputes
// it): dx[k] = dy[k] norm[k]^(-beta)
//   - 2 beta alpha / nsize * x[k] * sum over the windows c holding k of dy[c] x[c]
//   norm[c]^(-beta-1).
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "kernels/workspace.h"
#include "onnx/onnx_convert.h"
#include "ops/gradient_util.h"
#include "ops/register_ops.h"

namespace hybridnet {

namespace {

struct LRNParam {
  float alpha = 1e-4f;
  float beta = 0.75f;
  float knorm = 2.f;
  uint32_t nsize = 0;
  static void Declare(ParamDeclarer<LRNParam>* d) {
    d->Field("alpha", &LRNParam::alpha)
        .Default(1e-4f)
        .Describe("The variance scaling parameter alpha in the LRN expression.");
    d->Field("beta", &LRNParam::beta)
        .Default(0.75f)
        .Describe("The power parameter beta in the LRN expression.");
    d->Field("knorm", &LRNParam::knorm)
        .Default(2.f)
        .Describe("The parameter k in the LRN expression.");
    d->Field("nsize", &LRNParam::nsize)
        .Required()
        .Min(1)
        .Describe("normalization window width in elements.");
  }
};

bool LRNShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& data = (*in)[0];
  if (data.ndim() != 0) {
    HN_CHECK(data.ndim() == 4, kShapeError)
        << DescribeNode(attrs) << ": LRN takes 4-D input (batch, channel, y, x), got " << data;
  }
  return ElemwiseShape(attrs, in, out);
}

// norm (knorm + alpha / nsize * the window's sum of squares) of every element of x.
void LRNNorm(const LRNParam& p, const Shape& s, const float* x, float* norm) {
  const int64_t N = s[0], C = s[1], plane = s[2] * s[3];
  const int64_t half = static_cast<int64_t>(p.nsize / 2);
  const float salpha = p.alpha / static_cast<float>(p.nsize);
  std::vector<float> acc(static_cast<size_t>(plane));
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t c = 0; c < C; ++c) {
      std::fill(acc.begin(), acc.end(), 0.f);
      const int64_t c0 = std::max<int64_t>(0, c - half);
      const int64_t c1 = std::min<int64_t>(C - 1, c + half);
      for (int64_t k = c0; k <= c1; ++k) {
        const float* xk = x + (n * C + k) * plane;
        for (int64_t i = 0; i < plane; ++i) acc[static_cast<size_t>(i)] += xk[i] * xk[i];
      }
      float* nc = norm + (n * C + c) * plane;
      for (int64_t i = 0; i < plane; ++i) nc[i] = acc[static_cast<size_t>(i)] * salpha + p.knorm;
    }
  }
}

// The norm goes to the hidden output where the caller has it, else to y itself first.
void LRNCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                const std::vector<TBlob>& out) {
  const LRNParam& p = attrs.Param<LRNParam>();
  const float* x = in[0].ptr<const float>();
  float* y = out[0].ptr<float>();
  const int64_t total = in[0].Size();
  float* norm = out.size() > 1 ? out[1].ptr<float>() : y;
  LRNNorm(p, in[0].shape, x, norm);
  for (int64_t i = 0; i < total; ++i) y[i] = x[i] * std::pow(norm[i], -p.beta);
}

// _backward_LRN: inputs (out_grad, data), output the data gradient.
void LRNBackwardCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                        const std::vector<TBlob>& out) {
  const LRNParam& p = attrs.Param<LRNParam>();
  const Shape& s = in[1].shape;
  const int64_t N = s[0], C = s[1], plane = s[2] * s[3];
  const int64_t half = static_cast<int64_t>(p.nsize / 2);
  const double salpha = p.alpha / static_cast<float>(p.nsize);
  const float* dy = in[0].ptr<const float>();
  const float* x = in[1].ptr<const float>();
  float* dx = out[0].ptr<float>();
  const size_t total = static_cast<size_t>(in[1].Size());
  float* norm = ctx.workspace->Get<float>(internal::kOpSlot0, total);
  LRNNorm(p, s, x, norm);
  // t[c] = dy[c] x[c] norm[c]^(-beta-1)
  double* t = ctx.workspace->Get<double>(internal::kOpSlot1, total);
  for (size_t i = 0; i < total; ++i) {
    t[i] =
        static_cast<double>(dy[i]) * x[i] * std::pow(static_cast<double>(norm[i]), -p.beta - 1.0);
  }
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t k = 0; k < C; ++k) {
      const int64_t c0 = std::max<int64_t>(0, k - half);
      const int64_t c1 = std::min<int64_t>(C - 1, k + half);
      for (int64_t i = 0; i < plane; ++i) {
        const int64_t at = (n * C + k) * plane + i;
        double pooled = 0;
        for (int64_t c = c0; c <= c1; ++c)
          pooled += t[static_cast<size_t>((n * C + c) * plane + i)];
        dx[at] = static_cast<float>(
            dy[at] * std::pow(static_cast<double>(norm[static_cast<size_t>(at)]), -p.beta) -
            2.0 * p.beta * salpha * x[at] * pooled);
      }
    }
  }
}

// ONNX LRN sums over c - floor((size-1)/2) .. c + ceil((size-1)/2) and scales by alpha / size;
// the kernel above sums c - nsize/2 .. c + nsize/2, so an even nsize is an ONNX size of
// nsize + 1 with alpha rescaled.
void LRNOnnx(OnnxNodeContext* ctx) {
  const LRNParam& p = ctx->param<LRNParam>();
  const int64_t size = 2 * static_cast<int64_t>(p.nsize / 2) + 1;
  const float alpha = p.alpha * static_cast<float>(size) / static_cast<float>(p.nsize);
  ctx->Add("LRN", {ctx->in(0).name},
           {{"size", size}, {"alpha", alpha}, {"beta", p.beta}, {"bias", p.knorm}},
           ctx->out(0).name);
}

}  // namespace

void RegisterLRNOps(OpRegistry* r) {
  r->Register("LRN")
      .Describe(
          "Local response normalization across channels: out = x * (knorm + alpha / "
          "nsize * sum of x^2 over the nsize neighbouring channels)^(-beta). Input is "
          "4-D (batch, channel, y, x).")
      .SetParam<LRNParam>()
      .SetInputNames({"data"})
      .SetNumOutputs(1)
      .SetNumTotalOutputs(2)
      .SetInferShape(LRNShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(LRNCompute)
      .SetOnnx({"LRN"}, LRNOnnx)
      .SetGradient([](const std::shared_ptr<Node>& n, const std::vector<NodeEntry>& dy) {
        internal::GradientBuilder g(n, dy);
        return std::vector<NodeEntry>{
            g.Op("_backward_LRN", {g.out_grad(0), g.in(0)}, g.attrs().dict)};
      });
  r->Register("_backward_LRN")
      .Describe("The gradient of LRN, from the output gradient and the data.")
      .SetParam<LRNParam>()
      .SetInputNames({"out_grad", "data"})
      .SetInferShape([](const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
        std::vector<Shape> data{(*in)[1]};
        if (!MergeShape((*out)[0], &data[0]) || !MergeShape((*in)[0], &data[0])) {
          HN_THROW(kShapeError) << DescribeNode(attrs) << ": out_grad " << (*in)[0] << ", data "
                                << (*in)[1] << " and the gradient " << (*out)[0] << " differ";
        }
        std::vector<Shape> grad{(*out)[0]};
        const bool known = LRNShape(attrs, &data, &grad);
        (*in)[0] = (*in)[1] = (*out)[0] = data[0];
        return known;
      })
      .SetInferType(ElemwiseFloatType)
      .SetCompute(LRNBackwardCompute)
      .SetInternal();
}

}  // namespace hybridnet
