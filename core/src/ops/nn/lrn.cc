// LRN, local response normalization across channels (MXNet src/operator/nn/lrn-inl.h):
//   norm[n, c, ...] = knorm + alpha / nsize * sum over c' in [c - nsize/2, c + nsize/2] of x^2
//   out = x * norm^(-beta)
// Outputs: output and the hidden tmp_norm (MXNet keeps it for backward).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "onnx/onnx_convert.h"
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

void LRNCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                const std::vector<TBlob>& out) {
  const LRNParam& p = attrs.Param<LRNParam>();
  const Shape& s = in[0].shape;
  const int64_t N = s[0], C = s[1], plane = s[2] * s[3];
  const int64_t half = static_cast<int64_t>(p.nsize / 2);
  const float salpha = p.alpha / static_cast<float>(p.nsize);
  const float* x = in[0].ptr<const float>();
  float* y = out[0].ptr<float>();
  float* norm = out.size() > 1 ? out[1].ptr<float>() : nullptr;
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
      const float* xc = x + (n * C + c) * plane;
      float* yc = y + (n * C + c) * plane;
      float* nc = norm ? norm + (n * C + c) * plane : nullptr;
      for (int64_t i = 0; i < plane; ++i) {
        const float v = acc[static_cast<size_t>(i)] * salpha + p.knorm;
        if (nc) nc[i] = v;
        yc[i] = xc[i] * std::pow(v, -p.beta);
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
      .SetOnnx({"LRN"}, LRNOnnx);
}

}  // namespace hybridnet
