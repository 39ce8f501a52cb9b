// where (MXNet src/operator/tensor/control_flow_op.h): picks x where the condition is nonzero,
// else y. The condition has x's shape, or is 1-D with one value per row of x (x.shape[0]
// values). x, y and the output share one numeric dtype; the condition has any numeric dtype or
// bool.
#include "hybridnet/op.h"
#include "onnx/onnx_convert.h"
#include "ops/dtype_switch-inl.h"
#include "ops/gradient_util.h"
#include "ops/register_ops.h"

namespace hybridnet {

namespace {

using internal::IsNumericDType;
using internal::SwitchDType;
using internal::SwitchNumericDType;

bool WhereShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  std::vector<Shape> xy{(*in)[1], (*in)[2]};
  const bool xy_known = ElemwiseShape(attrs, &xy, out);
  (*in)[1] = xy[0];
  (*in)[2] = xy[1];
  const Shape& x = (*out)[0];
  Shape& cond = (*in)[0];
  if (x.ndim() == 0) return false;
  if (cond.ndim() == 0) {
    cond = x;  // the same-shape form is the one a missing condition shape is given
    return xy_known;
  }
  if (cond.ndim() == x.ndim()) {
    Shape merged = cond;
    HN_CHECK(MergeShape(x, &merged), kShapeError)
        << DescribeNode(attrs) << ": condition shape " << cond << " differs from x's " << x
        << " (the condition has x's shape or is 1-D with x.shape[0] values)";
    cond = merged;
    return xy_known && cond.IsKnown();
  }
  HN_CHECK(cond.ndim() == 1, kShapeError)
      << DescribeNode(attrs) << ": condition shape " << cond << " fits neither x's shape " << x
      << " nor (x.shape[0],)";
  HN_CHECK(cond[0] == 0 || x[0] == 0 || cond[0] == x[0], kShapeError)
      << DescribeNode(attrs) << ": a 1-D condition needs x.shape[0] = " << x[0] << " values, got "
      << cond[0];
  if (cond[0] == 0) cond[0] = x[0];
  return xy_known && cond.IsKnown();
}

bool WhereType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const DType cond = (*in)[0];
  HN_CHECK(cond == DType::kUnknown || cond == DType::kBool || IsNumericDType(cond), kTypeError)
      << DescribeNode(attrs) << ": condition has dtype " << DTypeName(cond)
      << "; expected bool, float32, float64, uint8, int8, int32 or int64";
  std::vector<DType> xy{(*in)[1], (*in)[2]};
  const bool complete = internal::NumericType(attrs, &xy, out);
  (*in)[1] = xy[0];
  (*in)[2] = xy[1];
  return complete && cond != DType::kUnknown;
}

void WhereCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                  const std::vector<TBlob>& out) {
  const int64_t n = out[0].Size();
  // Elements per condition value: 1 (same shape) or a row of x (1-D condition).
  const int64_t per = in[0].Size() == n ? 1 : (in[0].Size() == 0 ? 1 : n / in[0].Size());
  SwitchDType(
      in[0].dtype,
      [&](auto ctag) {
        using C = typename decltype(ctag)::type;
        const C* cond = in[0].ptr<const C>();
        SwitchNumericDType(out[0].dtype, [&](auto tag) {
          using T = typename decltype(tag)::type;
          const T* x = in[1].ptr<const T>();
          const T* y = in[2].ptr<const T>();
          T* o = out[0].ptr<T>();
          if (per == 1) {
#pragma omp simd
            for (int64_t i = 0; i < n; ++i) o[i] = cond[i] != C(0) ? x[i] : y[i];
          } else {
            for (int64_t i = 0; i < n; ++i) o[i] = cond[i / per] != C(0) ? x[i] : y[i];
          }
        });
      },
      /*with_bool=*/true);
}

// ONNX Where on the condition's truth (Cast to bool: nonzero, NaN included, is true); a 1-D
// condition gets trailing axes so that it broadcasts over x's rows.
void WhereOnnx(OnnxNodeContext* ctx) {
  const OnnxValue& cond = ctx->in(0);
  std::string truth = ctx->Cast(cond.name, DType::kBool);
  const size_t rank = ctx->in(1).shape.ndim();
  if (cond.shape.ndim() < rank) {
    std::vector<int64_t> axes;
    for (size_t a = cond.shape.ndim(); a < rank; ++a) axes.push_back(static_cast<int64_t>(a));
    truth = ctx->Unsqueeze(truth, axes);
  }
  ctx->Add("Where", {truth, ctx->in(1).name, ctx->in(2).name}, {}, ctx->out(0).name);
}

// x gets the output gradient where the condition holds, y elsewhere; the condition none.
std::vector<NodeEntry> WhereGradient(const std::shared_ptr<Node>& n,
                                     const std::vector<NodeEntry>& dy) {
  internal::GradientBuilder g(n, dy);
  const NodeEntry zeros = g.ZerosLike(g.out_grad(0));
  return {g.ZerosLike(g.in(0)), g.Op("where", {g.in(0), g.out_grad(0), zeros}),
          g.Op("where", {g.in(0), zeros, g.out_grad(0)})};
}

}  // namespace

void RegisterWhereOps(OpRegistry* r) {
  r->Register("where")
      .Describe(
          "Elements of x where the condition is nonzero, else of y. The condition has "
          "x's shape, or is 1-D and selects whole rows (x.shape[0] values).")
      .AddAlias("_sparse_where")
      .SetInputNames({"condition", "x", "y"})
      .SetInferShape(WhereShape)
      .SetInferType(WhereType)
      .SetCompute(WhereCompute)
      .SetInplace({{1, 0}, {2, 0}})
      .SetOnnx({"Cast", "Unsqueeze", "Where"}, WhereOnnx)
      .SetGradient(WhereGradient);
}

}  // namespace hybridnet
