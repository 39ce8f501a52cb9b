// Elementwise unary operators (MXNet src/operator/tensor/elemwise_unary_op_*.cc): one input
// "data", one output of the same shape, float32.
#include <cmath>
#include <cstring>

#include "hybridnet/op.h"
#include "onnx/onnx_convert.h"
#include "ops/nn/activation-inl.h"
#include "ops/register_ops.h"

namespace hybridnet {

namespace {

using internal::MapFloat;

struct ClipParam {
  float a_min = 0.f;
  float a_max = 0.f;
  static void Declare(ParamDeclarer<ClipParam>* d) {
    d->Field("a_min", &ClipParam::a_min).Required().Describe("Minimum value");
    d->Field("a_max", &ClipParam::a_max).Required().Describe("Maximum value");
  }
};

template <float (*F)(float)>
void UnaryCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                  const std::vector<TBlob>& out) {
  MapFloat(F, in[0].ptr<const float>(), out[0].ptr<float>(), in[0].Size());
}

// The identity ops: the graph executor aliases output to input (identity view); eager
// invocation copies.
void CopyCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                 const std::vector<TBlob>& out) {
  if (in[0].data != out[0].data) {
    std::memcpy(out[0].data, in[0].data, static_cast<size_t>(in[0].Size()) * sizeof(float));
  }
}

// MXNet's clip kernel tests the upper bound first: x > a_max ? a_max : (x < a_min ? a_min : x).
void ClipCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                 const std::vector<TBlob>& out) {
  const ClipParam& p = attrs.Param<ClipParam>();
  const float lo = p.a_min, hi = p.a_max;
  const float* x = in[0].ptr<const float>();
  float* y = out[0].ptr<float>();
  const int64_t n = in[0].Size();
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > hi ? hi : (x[i] < lo ? lo : x[i]);
}

float ExpOf(float x) { return std::exp(x); }
float Expm1Of(float x) { return std::expm1(x); }
float LogOf(float x) { return std::log(x); }
float Log1pOf(float x) { return std::log1p(x); }
float SqrtOf(float x) { return std::sqrt(x); }
float RsqrtOf(float x) { return 1.f / std::sqrt(x); }
float SquareOf(float x) { return x * x; }
float AbsOf(float x) { return std::fabs(x); }
float SignOf(float x) { return x < 0.f ? -1.f : (x > 0.f ? 1.f : 0.f); }
float NegativeOf(float x) { return -x; }
float ReciprocalOf(float x) { return 1.f / x; }
float FloorOf(float x) { return std::floor(x); }
float CeilOf(float x) { return std::ceil(x); }

// ONNX forms of the ops without a same-named ONNX op.
void ExpOnnx(OnnxNodeContext* ctx, const char* second, bool exp_first) {
  // expm1 = Exp(x) - 1, log1p = Log(x + 1)
  const std::string& x = ctx->in(0).name;
  const std::string one = ctx->Scalar(1.0);
  if (exp_first) {
    ctx->Add(second, {ctx->Add("Exp", {x}), one}, {}, ctx->out(0).name);
  } else {
    ctx->Add("Log", {ctx->Add(second, {x, one})}, {}, ctx->out(0).name);
  }
}

void Expm1Onnx(OnnxNodeContext* ctx) { ExpOnnx(ctx, "Sub", true); }
void Log1pOnnx(OnnxNodeContext* ctx) { ExpOnnx(ctx, "Add", false); }

void RsqrtOnnx(OnnxNodeContext* ctx) {
  ctx->Add("Reciprocal", {ctx->Add("Sqrt", {ctx->in(0).name})}, {}, ctx->out(0).name);
}

void SquareOnnx(OnnxNodeContext* ctx) {
  ctx->Add("Mul", {ctx->in(0).name, ctx->in(0).name}, {}, ctx->out(0).name);
}

// MXNet tests the upper bound first: with a_min > a_max it gives a_max above a_max and a_min
// elsewhere, which ONNX Clip (lower bound first) does not.
void ClipOnnx(OnnxNodeContext* ctx) {
  const ClipParam& p = ctx->param<ClipParam>();
  const std::string& x = ctx->in(0).name;
  const std::string lo = ctx->Scalar(p.a_min), hi = ctx->Scalar(p.a_max);
  if (p.a_min <= p.a_max) {
    ctx->Add("Clip", {x, lo, hi}, {}, ctx->out(0).name);
  } else {
    ctx->Add("Where", {ctx->Add("Greater", {x, hi}), hi, lo}, {}, ctx->out(0).name);
  }
}

Op& RegisterUnary(OpRegistry* r, const char* name, const char* description, FCompute compute) {
  return r->Register(name)
      .Describe(description)
      .SetInputNames({"data"})
      .SetInferShape(ElemwiseShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(std::move(compute))
      .SetInplace({{0, 0}})
      .SetPattern(OpPattern::kElemwise);
}

}  // namespace

void RegisterElemwiseUnaryOps(OpRegistry* r) {
  RegisterUnary(r, "relu", "Rectified linear unit: y = max(x, 0).",
                UnaryCompute<internal::ReluOf>)
      .SetOnnx({"Relu"}, OnnxSameOp("Relu"));
  RegisterUnary(r, "sigmoid", "Logistic sigmoid: y = 1 / (1 + exp(-x)).",
                UnaryCompute<internal::SigmoidOf>)
      .SetOnnx({"Sigmoid"}, OnnxSameOp("Sigmoid"));
  RegisterUnary(r, "tanh", "Hyperbolic tangent, elementwise.", UnaryCompute<internal::TanhOf>)
      .SetOnnx({"Tanh"}, OnnxSameOp("Tanh"));
  RegisterUnary(r, "softsign", "Softsign: y = x / (1 + |x|).",
                UnaryCompute<internal::SoftsignOf>)
      .SetOnnx({"Softsign"}, OnnxSameOp("Softsign"));
  RegisterUnary(r, "exp", "Natural exponential, elementwise.", UnaryCompute<ExpOf>)
      .SetOnnx({"Exp"}, OnnxSameOp("Exp"));
  RegisterUnary(r, "expm1", "exp(x) - 1, accurate near 0.", UnaryCompute<Expm1Of>)
      .SetOnnx({"Exp", "Sub"}, Expm1Onnx);
  RegisterUnary(r, "log", "Natural logarithm, elementwise.", UnaryCompute<LogOf>)
      .SetOnnx({"Log"}, OnnxSameOp("Log"));
  RegisterUnary(r, "log1p", "log(1 + x), accurate near 0.", UnaryCompute<Log1pOf>)
      .SetOnnx({"Add", "Log"}, Log1pOnnx);
  RegisterUnary(r, "sqrt", "Square root, elementwise.", UnaryCompute<SqrtOf>)
      .SetOnnx({"Sqrt"}, OnnxSameOp("Sqrt"));
  RegisterUnary(r, "rsqrt", "Reciprocal square root: y = 1 / sqrt(x).", UnaryCompute<RsqrtOf>)
      .SetOnnx({"Sqrt", "Reciprocal"}, RsqrtOnnx);
  RegisterUnary(r, "square", "Square: y = x * x.", UnaryCompute<SquareOf>)
      .SetOnnx({"Mul"}, SquareOnnx);
  RegisterUnary(r, "abs", "Absolute value, elementwise.", UnaryCompute<AbsOf>)
      .SetOnnx({"Abs"}, OnnxSameOp("Abs"));
  RegisterUnary(r, "sign", "Sign: -1, 0 or 1.", UnaryCompute<SignOf>)
      .SetOnnx({"Sign"}, OnnxSameOp("Sign"));
  RegisterUnary(r, "negative", "Numerical negative: y = -x.", UnaryCompute<NegativeOf>)
      .SetOnnx({"Neg"}, OnnxSameOp("Neg"));
  RegisterUnary(r, "reciprocal", "Reciprocal: y = 1 / x.", UnaryCompute<ReciprocalOf>)
      .SetOnnx({"Reciprocal"}, OnnxSameOp("Reciprocal"));
  RegisterUnary(r, "floor", "Largest integer <= x, elementwise.", UnaryCompute<FloorOf>)
      .SetOnnx({"Floor"}, OnnxSameOp("Floor"));
  RegisterUnary(r, "ceil", "Smallest integer >= x, elementwise.", UnaryCompute<CeilOf>)
      .SetOnnx({"Ceil"}, OnnxSameOp("Ceil"));
  RegisterUnary(r, "_copy", "Returns a copy of the input.", CopyCompute)
      .AddAlias("identity")
      .SetIdentityView()
      .SetOnnx({"Identity"}, OnnxSameOp("Identity"));
  RegisterUnary(r, "BlockGrad",
                "Returns the input unchanged and stops gradients from flowing through it.",
                CopyCompute)
      .AddAlias("stop_gradient")
      .SetIdentityView()
      .SetOnnx({"Identity"}, OnnxSameOp("Identity"));
  RegisterUnary(r, "clip",
                "Clips values to [a_min, a_max]: y = x > a_max ? a_max : max(x, a_min).",
                ClipCompute)
      .SetParam<ClipParam>()
      .SetOnnx({"Clip", "Greater", "Where"}, ClipOnnx);
}

}  // namespace hybridnet
