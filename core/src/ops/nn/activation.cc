// Activation (MXNet src/operator/nn/activation-inl.h) and LeakyReLU
// (src/operator/leaky_relu-inl.h), with LeakyReLU's gradient _backward_LeakyReLU. rrelu in
// training draws each element's slope uniformly from [lower_bound, upper_bound) (a Sampler
// seeded from the global generator, ops/random/sampler-inl.h); at inference it uses their mean.
#include <cmath>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "kernels/activation-inl.h"
#include "kernels/parallel-inl.h"
#include "onnx/onnx_convert.h"
#include "ops/gradient_util.h"
#include "ops/nn/activation_param.h"
#include "ops/random/sampler-inl.h"
#include "ops/real_type.h"
#include "ops/register_ops.h"

namespace hybridnet {

namespace {

using internal::ActivationParam;
using internal::ActType;

enum class LeakyType { kElu, kGelu, kLeaky, kPrelu, kRrelu, kSelu };

struct LeakyReLUParam {
  LeakyType act_type = LeakyType::kLeaky;
  float slope = 0.25f;
  float lower_bound = 0.125f;
  float upper_bound = 0.334f;
  static void Declare(ParamDeclarer<LeakyReLUParam>* d) {
    d->Field("act_type", &LeakyReLUParam::act_type,
             {{"elu", LeakyType::kElu},
              {"gelu", LeakyType::kGelu},
              {"leaky", LeakyType::kLeaky},
              {"prelu", LeakyType::kPrelu},
              {"rrelu", LeakyType::kRrelu},
              {"selu", LeakyType::kSelu}})
        .Default(LeakyType::kLeaky)
        .Describe("Activation function to be applied.");
    d->Field("slope", &LeakyReLUParam::slope)
        .Default(0.25f)
        .Describe("Init slope for the activation. (For leaky and elu only)");
    d->Field("lower_bound", &LeakyReLUParam::lower_bound)
        .Default(0.125f)
        .Describe("Lower bound of random slope. (For rrelu only)");
    d->Field("upper_bound", &LeakyReLUParam::upper_bound)
        .Default(0.334f)
        .Describe("Upper bound of random slope. (For rrelu only)");
  }
};

void ActivationCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                       const std::vector<TBlob>& out) {
  const internal::ActType act = attrs.Param<ActivationParam>().act_type;
  if (in[0].dtype == DType::kFloat64) {
    internal::ApplyActivation(act, in[0].ptr<const double>(), out[0].ptr<double>(), in[0].Size());
    return;
  }
  const float* x = in[0].ptr<const float>();
  float* y = out[0].ptr<float>();
  internal::ParallelRanges(in[0].Size(), [&](int64_t begin, int64_t end) {
    internal::ApplyActivation(act, x + begin, y + begin, end - begin);
  });
}

bool IsPReLU(const NodeAttrs& attrs) {
  return attrs.Param<LeakyReLUParam>().act_type == LeakyType::kPrelu;
}

// prelu: gamma is (C,) with C = data.shape[1] (broadcast over axis 1), or (1,).
bool LeakyReLUShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  std::vector<Shape> data_in{(*in)[0]};
  bool known = ElemwiseShape(attrs, &data_in, out);
  (*in)[0] = data_in[0];
  if (!IsPReLU(attrs)) return known;
  const Shape& dshape = (*in)[0];
  Shape& gshape = (*in)[1];
  if (gshape.ndim() == 0 && dshape.ndim() != 0) {
    gshape = dshape.ndim() >= 2 ? Shape{dshape[1]} : Shape{1};
  }
  if (gshape.ndim() != 0 && dshape.ndim() != 0) {
    const int64_t channels = dshape.ndim() >= 2 ? dshape[1] : 1;
    bool ok = gshape.ndim() == 1 &&
              (gshape[0] == 0 || gshape[0] == 1 || channels == 0 || gshape[0] == channels);
    HN_CHECK(ok, kShapeError) << DescribeNode(attrs) << ": gamma has shape " << gshape
                              << " but must be (" << channels << ",) or (1,) for data shape "
                              << dshape;
  }
  return known && gshape.IsKnown();
}

constexpr float kSeluAlpha = 1.6732632423543772848170429916717f;
constexpr float kSeluLambda = 1.0507009873554804934193349852946f;

// leaky's slope; rrelu at inference uses the mean of its slope range.
float LeakySlope(const LeakyReLUParam& p) {
  return p.act_type == LeakyType::kLeaky ? p.slope : (p.lower_bound + p.upper_bound) / 2.f;
}

void LeakyReLUCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                      const std::vector<TBlob>& out) {
  const LeakyReLUParam& p = attrs.Param<LeakyReLUParam>();
  const float* x = in[0].ptr<const float>();
  float* y = out[0].ptr<float>();
  const int64_t n = in[0].Size();
  const LeakyType act = p.act_type;
  if (act == LeakyType::kRrelu && ctx.is_train) {
    internal::Sampler sampler(internal::DrawRandomSeed());
    const float width = p.upper_bound - p.lower_bound;
    for (int64_t i = 0; i < n; ++i) {
      const float slope = p.lower_bound + width * static_cast<float>(sampler.Uniform());
      y[i] = x[i] > 0.f ? x[i] : x[i] * slope;
    }
  } else if (act == LeakyType::kLeaky || act == LeakyType::kRrelu) {
    const float slope = LeakySlope(p);
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.f ? x[i] : x[i] * slope;
  } else if (act == LeakyType::kElu) {
    const float slope = p.slope;
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.f ? x[i] : slope * std::expm1(x[i]);
  } else if (act == LeakyType::kSelu) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      y[i] = kSeluLambda * (x[i] > 0.f ? x[i] : kSeluAlpha * std::expm1(x[i]));
    }
  } else if (act == LeakyType::kGelu) {
    const float inv_sqrt2 = 0.70710678118654752440f;
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] * (1.f + std::erf(x[i] * inv_sqrt2));
  } else {  // prelu
    const TBlob& gamma = in[1];
    const float* g = gamma.ptr<const float>();
    const Shape& s = in[0].shape;
    const int64_t channels = gamma.Size();
    int64_t inner = 1;
    for (size_t i = 2; i < s.ndim(); ++i) inner *= s[i];
    if (channels == 1) inner = n;  // one slope for every element
    const int64_t outer = n / (channels * inner);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t c = 0; c < channels; ++c) {
        const float slope = g[c];
        const float* px = x + (o * channels + c) * inner;
        float* py = y + (o * channels + c) * inner;
#pragma omp simd
        for (int64_t i = 0; i < inner; ++i) py[i] = px[i] > 0.f ? px[i] : px[i] * slope;
      }
    }
  }
}

// ---- _backward_LeakyReLU: inputs (out_grad, data, output[, gamma]), LeakyReLU's attributes;
// outputs the data gradient [and gamma's]. The derivatives are MXNet's (mshadow_op.h): leaky,
// rrelu, elu and selu read the output y, gelu and prelu the input x:
//   leaky/rrelu: y > 0 ? 1 : slope        elu: y > 0 ? 1 : y + slope
//   (rrelu in training: each element's drawn slope, read back as y / x, as MXNet reads its mask)
//   selu: lambda * (y > 0 ? 1 : alpha + y) (MXNet's formula; the derivative is y + lambda alpha)
//   gelu: (1 + erf(x / sqrt2) + x * erf'(x / sqrt2) / sqrt2) / 2
//   prelu: x > 0 ? 1 : gamma, and d gamma = the sum over the non-channel axes of
//          dy * (x > 0 ? 0 : x).

std::vector<std::string> LeakyReLUBackwardInputNames(const NodeAttrs& attrs) {
  if (IsPReLU(attrs)) return {"out_grad", "data", "output", "gamma"};
  return {"out_grad", "data", "output"};
}

bool LeakyReLUBackwardShape(const NodeAttrs& attrs, std::vector<Shape>* in,
                            std::vector<Shape>* out) {
  std::vector<Shape> data{(*in)[0], (*in)[1], (*in)[2]};
  std::vector<Shape> dx{(*out)[0]};
  bool known = ElemwiseShape(attrs, &data, &dx);
  for (size_t i = 0; i < 3; ++i) (*in)[i] = data[i];
  (*out)[0] = dx[0];
  if (!IsPReLU(attrs)) return known;
  std::vector<Shape> forward_in{(*in)[1], (*in)[3]};
  std::vector<Shape> forward_out{(*in)[2]};
  HN_CHECK(MergeShape((*out)[1], &forward_in[1]), kShapeError)
      << DescribeNode(attrs) << ": gamma gradient " << (*out)[1] << " does not match gamma "
      << forward_in[1];
  known = LeakyReLUShape(attrs, &forward_in, &forward_out) && known;
  (*in)[3] = (*out)[1] = forward_in[1];
  return known;
}

void LeakyReLUBackwardCompute(const OpContext& ctx, const NodeAttrs& attrs,
                              const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const LeakyReLUParam& p = attrs.Param<LeakyReLUParam>();
  const float* dy = in[0].ptr<const float>();
  const float* x = in[1].ptr<const float>();
  const float* y = in[2].ptr<const float>();
  float* dx = out[0].ptr<float>();
  const int64_t n = in[0].Size();
  switch (p.act_type) {
    case LeakyType::kLeaky:
    case LeakyType::kRrelu: {
      const float slope = LeakySlope(p);
      if (p.act_type == LeakyType::kRrelu && ctx.is_train) {
        // Each element's random slope is read back as y / x (the mean where x is 0).
        for (int64_t i = 0; i < n; ++i) {
          const float drawn = x[i] != 0.f ? y[i] / x[i] : slope;
          dx[i] = dy[i] * (y[i] > 0.f ? 1.f : drawn);
        }
        return;
      }
      for (int64_t i = 0; i < n; ++i) dx[i] = dy[i] * (y[i] > 0.f ? 1.f : slope);
      return;
    }
    case LeakyType::kElu:
      for (int64_t i = 0; i < n; ++i) dx[i] = dy[i] * (y[i] > 0.f ? 1.f : y[i] + p.slope);
      return;
    case LeakyType::kSelu:
      for (int64_t i = 0; i < n; ++i) {
        dx[i] = dy[i] * (kSeluLambda * (y[i] > 0.f ? 1.f : kSeluAlpha + y[i]));
      }
      return;
    case LeakyType::kGelu: {
      const float inv_sqrt2 = 0.70710678118654752440f;
      const double two_over_sqrt_pi = 1.12837916709551257390;
      for (int64_t i = 0; i < n; ++i) {
        const float z = x[i] * inv_sqrt2;
        const float erf_grad =
            static_cast<float>(two_over_sqrt_pi * std::exp(-static_cast<double>(z * z)));
        dx[i] = dy[i] * (0.5f * (1.f + std::erf(z) + x[i] * erf_grad * inv_sqrt2));
      }
      return;
    }
    case LeakyType::kPrelu: {
      const float* g = in[3].ptr<const float>();
      float* dg = out[1].ptr<float>();
      const Shape& s = in[1].shape;
      const int64_t channels = in[3].Size();
      int64_t inner = 1;
      for (size_t i = 2; i < s.ndim(); ++i) inner *= s[i];
      if (channels == 1) inner = n;
      const int64_t outer = channels * inner == 0 ? 0 : n / (channels * inner);
      std::vector<double> sums(static_cast<size_t>(channels), 0.0);
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t c = 0; c < channels; ++c) {
          const int64_t base = (o * channels + c) * inner;
          for (int64_t i = 0; i < inner; ++i) {
            const float v = x[base + i];
            dx[base + i] = dy[base + i] * (v > 0.f ? 1.f : g[c]);
            sums[static_cast<size_t>(c)] += static_cast<double>(dy[base + i]) * (v > 0.f ? 0.f : v);
          }
        }
      }
      for (int64_t c = 0; c < channels; ++c)
        dg[c] = static_cast<float>(sums[static_cast<size_t>(c)]);
      return;
    }
  }
}

std::vector<NodeEntry> LeakyReLUGradient(const std::shared_ptr<Node>& n,
                                         const std::vector<NodeEntry>& dy) {
  internal::GradientBuilder g(n, dy);
  std::vector<NodeEntry> inputs{g.out_grad(0), g.in(0), g.out(0)};
  const bool prelu = IsPReLU(g.attrs());
  if (prelu) inputs.push_back(g.in(1));
  std::shared_ptr<Node> backward =
      g.MakeNode("_backward_LeakyReLU", std::move(inputs), g.attrs().dict);
  if (!prelu) return {NodeEntry{backward, 0, 0}};
  return {NodeEntry{backward, 0, 0}, NodeEntry{backward, 1, 0}};
}

void ActivationOnnx(OnnxNodeContext* ctx) {
  using internal::ActType;
  const char* op = "Softsign";
  switch (ctx->param<ActivationParam>().act_type) {
    case ActType::kRelu:
      op = "Relu";
      break;
    case ActType::kSigmoid:
      op = "Sigmoid";
      break;
    case ActType::kTanh:
      op = "Tanh";
      break;
    case ActType::kSoftrelu:
      op = "Softplus";
      break;
    case ActType::kSoftsign:
      break;
  }
  ctx->Add(op, {ctx->in(0).name}, {}, ctx->out(0).name);
}

void LeakyReLUOnnx(OnnxNodeContext* ctx) {
  const LeakyReLUParam& p = ctx->param<LeakyReLUParam>();
  const OnnxValue& x = ctx->in(0);
  const std::string& y = ctx->out(0).name;
  const LeakyType act = p.act_type;
  if (act == LeakyType::kLeaky || act == LeakyType::kRrelu) {
    ctx->Add("LeakyRelu", {x.name}, {{"alpha", LeakySlope(p)}}, y);
  } else if (act == LeakyType::kElu) {
    ctx->Add("Elu", {x.name}, {{"alpha", p.slope}}, y);
  } else if (act == LeakyType::kSelu) {
    ctx->Add("Selu", {x.name}, {{"alpha", kSeluAlpha}, {"gamma", kSeluLambda}}, y);
  } else if (act == LeakyType::kGelu) {
    if (ctx->opset() >= 20) {
      ctx->Add("Gelu", {x.name}, {}, y);
      return;
    }
    // (0.5 * x) * (1 + erf(x / sqrt(2))), in the kernel's order.
    std::string erf =
        ctx->Add("Erf", {ctx->Add("Mul", {x.name, ctx->Scalar(0.70710678118654752440)})});
    ctx->Add(
        "Mul",
        {ctx->Add("Mul", {x.name, ctx->Scalar(0.5)}), ctx->Add("Add", {erf, ctx->Scalar(1.0)})}, {},
        y);
  } else {
    // prelu: gamma (C,) applies along axis 1; ONNX PRelu broadcasts the slope from the right,
    // so it becomes (C, 1, ..., 1).
    std::string gamma = ctx->in(1).name;
    const size_t nd = x.shape.ndim();
    if (nd > 2 && ctx->in(1).shape[0] != 1) {
      std::vector<int64_t> axes;
      for (size_t i = 1; i + 1 < nd; ++i) axes.push_back(static_cast<int64_t>(i));
      gamma = ctx->Unsqueeze(gamma, axes);
    }
    ctx->Add("PRelu", {x.name, gamma}, {}, y);
  }
}

}  // namespace

void RegisterActivationOps(OpRegistry* r) {
  r->Register("Activation")
      .Describe(
          "Applies an activation function elementwise: relu, sigmoid, tanh, softrelu "
          "(log(1 + exp(x))) or softsign (x / (1 + |x|)).")
      .SetParam<ActivationParam>()
      .SetInputNames({"data"})
      .SetInferShape(ElemwiseShape)
      .SetInferType(internal::RealType)
      .SetCompute(ActivationCompute)
      .SetInplace({{0, 0}})
      .SetPattern(OpPattern::kElemwise)
      .SetOnnx({"Relu", "Sigmoid", "Tanh", "Softplus", "Softsign"}, ActivationOnnx)
      .SetGradient([](const std::shared_ptr<Node>& n, const std::vector<NodeEntry>& dy) {
        internal::GradientBuilder g(n, dy);
        return std::vector<NodeEntry>{internal::ActivationInputGradient(
            g, g.attrs().Param<ActivationParam>().act_type, g.out_grad(0))};
      });

  r->Register("LeakyReLU")
      .Describe(
          "Leaky ReLU family: leaky (x > 0 ? x : slope * x), prelu (learned slope gamma "
          "per channel), elu, selu, gelu (erf form) and rrelu (a random slope per element in "
          "[lower_bound, upper_bound) in training, their mean at inference).")
      .SetParam<LeakyReLUParam>()
      .SetInputNames([](const NodeAttrs& attrs) {
        return IsPReLU(attrs) ? std::vector<std::string>{"data", "gamma"}
                              : std::vector<std::string>{"data"};
      })
      .SetInferShape(LeakyReLUShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(LeakyReLUCompute)
      .SetInplace({{0, 0}})
      .SetOnnx({"LeakyRelu", "Elu", "Selu", "Gelu", "Erf", "Mul", "Add", "PRelu", "Unsqueeze"},
               LeakyReLUOnnx)
      .SetGradient(LeakyReLUGradient);

  r->Register("_backward_LeakyReLU")
      .Describe(
          "The gradient of LeakyReLU: the data gradient, and with prelu gamma's (summed over "
          "all but the channel axis).")
      .SetParam<LeakyReLUParam>()
      .SetInputNames(LeakyReLUBackwardInputNames)
      .SetNumOutputs([](const NodeAttrs& attrs) { return IsPReLU(attrs) ? 2u : 1u; })
      .SetInferShape(LeakyReLUBackwardShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(LeakyReLUBackwardCompute)
      .SetInternal();
}

}  // namespace hybridnet
