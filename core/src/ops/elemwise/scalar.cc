// Tensor-scalar arithmetic (MXNet src/operator/tensor/elemwise_binary_scalar_op_*.cc). The
// scalar is converted to float32 before use, as MXNet's float32 kernels do.
#include <cmath>

#include "hybridnet/op.h"
#include "onnx/onnx_convert.h"
#include "ops/elemwise/binary_functors-inl.h"
#include "ops/register_ops.h"

namespace hybridnet {

namespace {

using namespace op_functors;  // Add, Sub, Mul, Div, Maximum, Minimum

struct ScalarParam {
  double scalar = 1.0;
  bool is_int = true;
  static void Declare(ParamDeclarer<ScalarParam>* d) {
    d->Field("scalar", &ScalarParam::scalar).Default(1.0).Describe("Scalar input value");
    d->Field("is_int", &ScalarParam::is_int)
        .Default(true)
        .Describe("Indicate whether scalar input is int type (affects integer inputs only)");
  }
};

template <typename F>
void ScalarCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                   const std::vector<TBlob>& out) {
  const float s = static_cast<float>(attrs.Param<ScalarParam>().scalar);
  const float* x = in[0].ptr<const float>();
  float* y = out[0].ptr<float>();
  const int64_t n = in[0].Size();
  F f;
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = f(x[i], s);
}

struct RMinus {
  float operator()(float x, float s) const { return s - x; }
};
struct RDiv {
  float operator()(float x, float s) const { return s / x; }
};
struct Power {
  float operator()(float x, float s) const { return std::pow(x, s); }
};
struct RPower {
  float operator()(float x, float s) const { return std::pow(s, x); }
};

// The ONNX form: the binary op with the scalar as a 0-D constant of the input's dtype, on the
// left for the reversed ops (_rminus_scalar: scalar - x).
FOnnxConvert ScalarOnnx(std::string op_type, bool scalar_first) {
  return [op_type, scalar_first](OnnxNodeContext* ctx) {
    const std::string c = ctx->Scalar(ctx->param<ScalarParam>().scalar, ctx->in(0).dtype);
    const std::string& x = ctx->in(0).name;
    ctx->Add(op_type, scalar_first ? std::vector<std::string>{c, x} : std::vector<std::string>{x, c},
             {}, ctx->out(0).name);
  };
}

Op& RegisterScalar(OpRegistry* r, const char* name, const char* alias, const char* description,
                   FCompute f, const char* onnx_op, bool scalar_first = false) {
  return r->Register(name)
      .Describe(description)
      .AddAlias(alias)
      .SetParam<ScalarParam>()
      .SetInputNames({"data"})
      .SetInferShape(ElemwiseShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(std::move(f))
      .SetInplace({{0, 0}})
      .SetPattern(OpPattern::kElemwise)
      .SetOnnx({onnx_op}, ScalarOnnx(onnx_op, scalar_first));
}

}  // namespace

void RegisterScalarOps(OpRegistry* r) {
  RegisterScalar(r, "_plus_scalar", "_PlusScalar", "y = x + scalar", ScalarCompute<Add>, "Add");
  RegisterScalar(r, "_minus_scalar", "_MinusScalar", "y = x - scalar", ScalarCompute<Sub>, "Sub");
  RegisterScalar(r, "_rminus_scalar", "_RMinusScalar", "y = scalar - x", ScalarCompute<RMinus>, "Sub", true);
  RegisterScalar(r, "_mul_scalar", "_MulScalar", "y = x * scalar", ScalarCompute<Mul>, "Mul");
  RegisterScalar(r, "_div_scalar", "_DivScalar", "y = x / scalar", ScalarCompute<Div>, "Div");
  RegisterScalar(r, "_rdiv_scalar", "_RDivScalar", "y = scalar / x", ScalarCompute<RDiv>, "Div", true);
  RegisterScalar(r, "_power_scalar", "_PowerScalar", "y = x ** scalar", ScalarCompute<Power>, "Pow");
  RegisterScalar(r, "_rpower_scalar", "_RPowerScalar", "y = scalar ** x",
                 ScalarCompute<RPower>, "Pow", true);
  RegisterScalar(r, "_maximum_scalar", "_MaximumScalar", "y = max(x, scalar)",
                 ScalarCompute<Maximum>, "Max");
  RegisterScalar(r, "_minimum_scalar", "_MinimumScalar", "y = min(x, scalar)",
                 ScalarCompute<Minimum>, "Min");
}

}  // namespace hybridnet
