// Broadcasting binary operators (MXNet src/operator/tensor/elemwise_binary_broadcast_op_*.cc)
// and broadcast_to. Shapes follow MXNet's BinaryBroadcastShape: the shorter shape is padded with
// leading 1s, then each dimension pair must be equal or contain a 1. Both operands have one
// numeric dtype, which the output keeps (comparisons and logical ops return 1 or 0 in it); the
// element math is elemwise/math_functors-inl.h's, shared with the elemwise and scalar ops.
// Their gradients sum over the broadcast axes with the internal _hn_reduce_sum_like.
#include <algorithm>

#include "hybridnet/op.h"
#include "onnx/onnx_convert.h"
#include "ops/dtype_switch-inl.h"
#include "ops/elemwise/math_functors-inl.h"
#include "ops/gradient_util.h"
#include "ops/register_ops.h"

namespace hybridnet {

namespace {

using internal::NumericType;
using internal::SwitchNumericDType;
namespace m = op_math;

constexpr size_t kMaxBroadcastDims = 16;

struct BroadcastToParam {
  std::vector<int64_t> shape;
  static void Declare(ParamDeclarer<BroadcastToParam>* d) {
    d->Field("shape", &BroadcastToParam::shape)
        .Default(std::vector<int64_t>{})
        .Describe(
            "The shape of the desired array. A 0 keeps the input's dimension, e.g. "
            "broadcasting (2, 1) to (0, 3) gives (2, 3).");
  }
};

void AssignOutput(const NodeAttrs& attrs, std::vector<Shape>* out, const Shape& value) {
  Shape merged = (*out)[0];
  HN_CHECK(MergeShape(value, &merged), kShapeError)
      << DescribeNode(attrs) << ": output shape " << (*out)[0] << " does not match the inferred "
      << value;
  (*out)[0] = merged;
}

bool BroadcastBinaryShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& lhs = (*in)[0];
  const Shape& rhs = (*in)[1];
  if (lhs.ndim() == 0 || rhs.ndim() == 0) return false;
  const size_t ndim = std::max(lhs.ndim(), rhs.ndim());
  HN_CHECK(ndim <= kMaxBroadcastDims, kShapeError)
      << DescribeNode(attrs) << ": broadcasting supports at most " << kMaxBroadcastDims
      << " dimensions, got " << lhs << " and " << rhs;
  Shape result(std::vector<int64_t>(ndim, 0));
  const size_t pad_l = ndim - lhs.ndim(), pad_r = ndim - rhs.ndim();
  for (size_t i = 0; i < ndim; ++i) {
    int64_t l = i >= pad_l ? lhs[i - pad_l] : 1;
    int64_t r = i >= pad_r ? rhs[i - pad_r] : 1;
    if (l == 0 || r == 0) continue;  // unknown dimension
    HN_CHECK(l == r || l == 1 || r == 1, kShapeError)
        << DescribeNode(attrs) << ": operands could not be broadcast together with shapes " << lhs
        << " " << rhs;
    result[i] = l == 1 ? r : l;
  }
  AssignOutput(attrs, out, result);
  return lhs.IsKnown() && rhs.IsKnown() && (*out)[0].IsKnown();
}

bool BroadcastToShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& ishape = (*in)[0];
  if (ishape.ndim() == 0) return false;
  const auto& target = attrs.Param<BroadcastToParam>().shape;
  HN_CHECK(ishape.ndim() == target.size(), kShapeError)
      << DescribeNode(attrs) << ": operand of shape " << ishape << " cannot be broadcast to "
      << Shape(target);
  HN_CHECK(ishape.ndim() <= kMaxBroadcastDims, kShapeError)
      << DescribeNode(attrs) << ": broadcasting supports at most " << kMaxBroadcastDims
      << " dimensions, got " << ishape;
  Shape result = ishape;
  for (size_t i = 0; i < target.size(); ++i) {
    HN_CHECK(target[i] >= 0, kShapeError)
        << DescribeNode(attrs) << ": negative dimension in shape " << Shape(target);
    if (target[i] == 0) continue;
    HN_CHECK(ishape[i] == 0 || ishape[i] == target[i] || ishape[i] == 1, kShapeError)
        << DescribeNode(attrs) << ": array cannot be broadcast from " << ishape << " to "
        << Shape(target);
    result[i] = target[i];
  }
  AssignOutput(attrs, out, result);
  return ishape.IsKnown() && (*out)[0].IsKnown();
}

// The iteration space of a broadcast: output dims (size-1 dims dropped, runs of dims with the
// same broadcast pattern merged) with each operand's element stride per dim (0 = broadcast).
struct BroadcastPlan {
  size_t ndim = 0;
  int64_t dim[kMaxBroadcastDims];
  int64_t lstride[kMaxBroadcastDims];
  int64_t rstride[kMaxBroadcastDims];
};

BroadcastPlan MakePlan(const Shape& lhs, const Shape& rhs, const Shape& out) {
  const size_t n = out.ndim();
  int64_t lfull[kMaxBroadcastDims], rfull[kMaxBroadcastDims];
  int64_t lacc = 1, racc = 1;
  for (size_t k = n; k-- > 0;) {
    const size_t pl = n - lhs.ndim(), pr = n - rhs.ndim();
    int64_t l = k >= pl ? lhs[k - pl] : 1;
    int64_t r = k >= pr ? rhs[k - pr] : 1;
    lfull[k] = (l == out[k]) ? lacc : 0;
    rfull[k] = (r == out[k]) ? racc : 0;
    lacc *= l;
    racc *= r;
  }
  BroadcastPlan plan;
  for (size_t k = 0; k < n; ++k) {
    if (out[k] == 1) continue;
    if (plan.ndim > 0) {
      size_t last = plan.ndim - 1;
      bool same_l = (plan.lstride[last] == 0) == (lfull[k] == 0);
      bool same_r = (plan.rstride[last] == 0) == (rfull[k] == 0);
      if (same_l && same_r) {
        plan.dim[last] *= out[k];
        plan.lstride[last] = lfull[k];
        plan.rstride[last] = rfull[k];
        continue;
      }
    }
    plan.dim[plan.ndim] = out[k];
    plan.lstride[plan.ndim] = lfull[k];
    plan.rstride[plan.ndim] = rfull[k];
    ++plan.ndim;
  }
  return plan;
}

template <typename T, typename F>
void BroadcastLoop(const T* a, const T* b, T* y, const BroadcastPlan& plan, F f) {
  if (plan.ndim == 0) {
    y[0] = f(a[0], b[0]);
    return;
  }
  const size_t inner_k = plan.ndim - 1;
  const int64_t inner = plan.dim[inner_k];
  const bool la = plan.lstride[inner_k] != 0, rb = plan.rstride[inner_k] != 0;
  int64_t outer = 1;
  for (size_t k = 0; k < inner_k; ++k) outer *= plan.dim[k];
  int64_t idx[kMaxBroadcastDims] = {};
  int64_t loff = 0, roff = 0;
  for (int64_t o = 0; o < outer; ++o) {
    const T* pa = a + loff;
    const T* pb = b + roff;
    T* py = y + o * inner;
    if (la && rb) {
#pragma omp simd
      for (int64_t i = 0; i < inner; ++i) py[i] = f(pa[i], pb[i]);
    } else if (la) {
      const T vb = pb[0];
#pragma omp simd
      for (int64_t i = 0; i < inner; ++i) py[i] = f(pa[i], vb);
    } else if (rb) {
      const T va = pa[0];
#pragma omp simd
      for (int64_t i = 0; i < inner; ++i) py[i] = f(va, pb[i]);
    } else {
      const T v = f(pa[0], pb[0]);
      for (int64_t i = 0; i < inner; ++i) py[i] = v;
    }
    for (size_t k = inner_k; k-- > 0;) {
      ++idx[k];
      loff += plan.lstride[k];
      roff += plan.rstride[k];
      if (idx[k] < plan.dim[k]) break;
      loff -= plan.lstride[k] * plan.dim[k];
      roff -= plan.rstride[k] * plan.dim[k];
      idx[k] = 0;
    }
  }
}

template <typename F>
void BroadcastCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                      const std::vector<TBlob>& out) {
  BroadcastPlan plan = MakePlan(in[0].shape, in[1].shape, out[0].shape);
  SwitchNumericDType(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    BroadcastLoop(in[0].ptr<const T>(), in[1].ptr<const T>(), out[0].ptr<T>(), plan,
                  [](T a, T b) { return F::Map(a, b); });
  });
}

void BroadcastToCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                        const std::vector<TBlob>& out) {
  BroadcastPlan plan = MakePlan(in[0].shape, in[0].shape, out[0].shape);
  SwitchNumericDType(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in[0].ptr<const T>();
    BroadcastLoop(x, x, out[0].ptr<T>(), plan, [](T a, T) { return a; });
  });
}

void BroadcastToOnnx(OnnxNodeContext* ctx) { ctx->ExpandToOutput(ctx->in(0), 0); }

// ---- _hn_reduce_sum_like: the gradient of broadcasting -----------------------------------------

// Output: like's shape, which must broadcast to data's (right-aligned, each dim equal or 1).
bool ReduceSumLikeShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  if ((*in)[1].ndim() != 0) AssignOutput(attrs, out, (*in)[1]);
  if ((*out)[0].ndim() != 0) {
    Shape merged = (*in)[1];
    HN_CHECK(MergeShape((*out)[0], &merged), kShapeError)
        << DescribeNode(attrs) << ": like has shape " << (*in)[1] << ", the output " << (*out)[0];
    (*in)[1] = merged;
  }
  const Shape& data = (*in)[0];
  const Shape& like = (*in)[1];
  if (data.ndim() != 0 && like.ndim() != 0) {
    bool fits = like.ndim() <= data.ndim() && data.ndim() <= kMaxBroadcastDims;
    const size_t pad = data.ndim() - std::min(like.ndim(), data.ndim());
    for (size_t k = 0; fits && k < like.ndim(); ++k) {
      const int64_t l = like[k], d = data[k + pad];
      fits = l == 0 || d == 0 || l == d || l == 1;
    }
    HN_CHECK(fits, kShapeError) << DescribeNode(attrs) << ": data of shape " << data
                                << " is not a broadcast of shape " << like;
  }
  return data.IsKnown() && like.IsKnown() && (*out)[0].IsKnown();
}

// Adds each data element into the output element it was broadcast from, in data's order.
void ReduceSumLikeCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                          const std::vector<TBlob>& out) {
  const Shape& data = in[0].shape;
  const Shape& like = out[0].shape;
  const size_t n = data.ndim(), pad = n - like.ndim();
  int64_t stride[kMaxBroadcastDims] = {};
  int64_t acc = 1;
  for (size_t k = n; k-- > pad;) {
    const int64_t l = like[k - pad];
    stride[k] = l == 1 ? 0 : acc;
    acc *= l;
  }
  SwitchNumericDType(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in[0].ptr<const T>();
    T* y = out[0].ptr<T>();
    if (n == 0) {
      y[0] = x[0];
      return;
    }
    std::fill(y, y + out[0].Size(), T(0));
    const int64_t total = in[0].Size();
    const int64_t inner = data[n - 1];
    const int64_t inner_stride = stride[n - 1];
    int64_t idx[kMaxBroadcastDims] = {};
    int64_t base = 0;
    for (int64_t i = 0; i < total; i += inner) {
      for (int64_t j = 0; j < inner; ++j) y[base + j * inner_stride] += x[i + j];
      for (size_t k = n - 1; k-- > 0;) {
        base += stride[k];
        if (++idx[k] < data[k]) break;
        base -= stride[k] * data[k];
        idx[k] = 0;
      }
    }
  });
}

// ---- gradients (MXNet's _backward_broadcast_* formulas, written as ops)
// --------------------------

using internal::GradientBuilder;

// An FGradient from {d lhs, d rhs} at the output's shape, each summed to its operand's shape.
template <typename F>
FGradient BroadcastGradient(F f) {
  return [f](const std::shared_ptr<Node>& n, const std::vector<NodeEntry>& dy) {
    GradientBuilder g(n, dy);
    std::vector<NodeEntry> grads = f(g, g.out_grad(0));
    return std::vector<NodeEntry>{g.SumLike(grads[0], g.in(0)), g.SumLike(grads[1], g.in(1))};
  };
}

std::vector<NodeEntry> AddGradient(const GradientBuilder&, const NodeEntry& dy) { return {dy, dy}; }

std::vector<NodeEntry> SubGradient(const GradientBuilder& g, const NodeEntry& dy) {
  return {dy, g.Negative(dy)};
}

std::vector<NodeEntry> MulGradient(const GradientBuilder& g, const NodeEntry& dy) {
  return {g.Op("broadcast_mul", {dy, g.in(1)}), g.Op("broadcast_mul", {dy, g.in(0)})};
}

// d lhs = dy / rhs, d rhs = -dy lhs / rhs^2.
std::vector<NodeEntry> DivGradient(const GradientBuilder& g, const NodeEntry& dy) {
  const NodeEntry dy_lhs = g.Op("broadcast_mul", {dy, g.in(0)});
  return {g.Op("broadcast_div", {dy, g.in(1)}),
          g.Negative(g.Op("broadcast_div", {dy_lhs, g.Op("square", {g.in(1)})}))};
}

// lhs gets the gradient where `lhs_wins` holds, rhs where `rhs_wins` does (MXNet's ge / lt for
// maximum, le / gt for minimum).
FGradient PickGradient(const char* lhs_wins, const char* rhs_wins) {
  return BroadcastGradient([lhs_wins, rhs_wins](const GradientBuilder& g, const NodeEntry& dy) {
    return std::vector<NodeEntry>{g.Op("broadcast_mul", {dy, g.Op(lhs_wins, {g.in(0), g.in(1)})}),
                                  g.Op("broadcast_mul", {dy, g.Op(rhs_wins, {g.in(0), g.in(1)})})};
  });
}

// d lhs = dy rhs lhs^(rhs - 1), d rhs = dy y log(lhs).
std::vector<NodeEntry> PowerGradient(const GradientBuilder& g, const NodeEntry& dy) {
  const NodeEntry power =
      g.Op("broadcast_power", {g.in(0), g.Scalar("_minus_scalar", g.in(1), 1.0)});
  return {g.Op("broadcast_mul", {dy, g.Op("broadcast_mul", {g.in(1), power})}),
          g.Op("broadcast_mul", {g.Mul(dy, g.out(0)), g.Op("log", {g.in(0)})})};
}

// d lhs = dy lhs / y, d rhs = dy rhs / y.
std::vector<NodeEntry> HypotGradient(const GradientBuilder& g, const NodeEntry& dy) {
  return {g.Op("broadcast_mul", {dy, g.Op("broadcast_div", {g.in(0), g.out(0)})}),
          g.Op("broadcast_mul", {dy, g.Op("broadcast_div", {g.in(1), g.out(0)})})};
}

std::vector<NodeEntry> BroadcastToGradient(const std::shared_ptr<Node>& n,
                                           const std::vector<NodeEntry>& dy) {
  GradientBuilder g(n, dy);
  return {g.SumLike(g.out_grad(0), g.in(0))};
}

Op& RegisterBroadcast(OpRegistry* r, const char* name, const char* description, FCompute f,
                      std::initializer_list<const char*> aliases = {}) {
  Op& op = r->Register(name)
               .Describe(description)
               .SetInputNames({"lhs", "rhs"})
               .SetInferShape(BroadcastBinaryShape)
               .SetInferType(NumericType)
               .SetCompute(std::move(f));
  for (const char* alias : aliases) op.AddAlias(alias);
  return op;
}

}  // namespace

void RegisterBroadcastOps(OpRegistry* r) {
  RegisterBroadcast(r, "broadcast_add", "Elementwise sum with broadcasting.",
                    BroadcastCompute<m::Add>,
                    {"broadcast_plus", "_sparse_broadcast_add", "_sparse_broadcast_plus"})
      .SetOnnx(OnnxBinaryOp(OnnxArithmetic("Add", false)))
      .SetGradient(BroadcastGradient(AddGradient));
  RegisterBroadcast(r, "broadcast_sub", "Elementwise difference with broadcasting.",
                    BroadcastCompute<m::Sub>,
                    {"broadcast_minus", "_sparse_broadcast_sub", "_sparse_broadcast_minus"})
      .SetOnnx(OnnxBinaryOp(OnnxArithmetic("Sub", false)))
      .SetGradient(BroadcastGradient(SubGradient));
  RegisterBroadcast(r, "broadcast_mul", "Elementwise product with broadcasting.",
                    BroadcastCompute<m::Mul>, {"_sparse_broadcast_mul"})
      .SetOnnx(OnnxBinaryOp(OnnxArithmetic("Mul", false)))
      .SetGradient(BroadcastGradient(MulGradient));
  RegisterBroadcast(r, "broadcast_div",
                    "Elementwise division with broadcasting (integers: truncated, x / 0 = 0).",
                    BroadcastCompute<m::Div>, {"_sparse_broadcast_div"})
      .SetOnnx(OnnxBinaryOp(OnnxArithmetic("Div", true)))
      .SetGradient(BroadcastGradient(DivGradient));
  RegisterBroadcast(r, "broadcast_mod",
                    "Remainder with the sign of the divisor, with broadcasting; x % 0 = 0.",
                    BroadcastCompute<m::Mod>);
  RegisterBroadcast(r, "broadcast_power", "lhs ** rhs with broadcasting.",
                    BroadcastCompute<m::Power>)
      .SetOnnx(OnnxBinaryOp(OnnxArithmetic("Pow", true)))
      .SetGradient(BroadcastGradient(PowerGradient));
  RegisterBroadcast(r, "broadcast_maximum",
                    "Elementwise maximum with broadcasting (NaN in lhs propagates).",
                    BroadcastCompute<m::Maximum>, {"_npi_maximum"})
      .SetOnnx(OnnxBinaryOp(OnnxArithmetic("Max", false)))
      .SetGradient(PickGradient("broadcast_greater_equal", "broadcast_lesser"));
  RegisterBroadcast(r, "broadcast_minimum",
                    "Elementwise minimum with broadcasting (NaN in lhs propagates).",
                    BroadcastCompute<m::Minimum>, {"_npi_minimum"})
      .SetOnnx(OnnxBinaryOp(OnnxArithmetic("Min", false)))
      .SetGradient(PickGradient("broadcast_lesser_equal", "broadcast_greater"));
  RegisterBroadcast(r, "broadcast_hypot", "sqrt(lhs^2 + rhs^2) with broadcasting.",
                    BroadcastCompute<m::Hypot>)
      .SetGradient(BroadcastGradient(HypotGradient));
  RegisterBroadcast(r, "broadcast_equal", "1 where lhs == rhs, else 0, with broadcasting.",
                    BroadcastCompute<m::Equal>)
      .SetOnnx(OnnxBinaryOp(OnnxComparison("Equal")))
      .SetGradient(internal::ZeroGradient);
  RegisterBroadcast(r, "broadcast_not_equal", "1 where lhs != rhs, else 0, with broadcasting.",
                    BroadcastCompute<m::NotEqual>)
      .SetOnnx(OnnxBinaryOp(OnnxComparison("Equal", true)))
      .SetGradient(internal::ZeroGradient);
  RegisterBroadcast(r, "broadcast_greater", "1 where lhs > rhs, else 0, with broadcasting.",
                    BroadcastCompute<m::Greater>)
      .SetOnnx(OnnxBinaryOp(OnnxComparison("Greater")))
      .SetGradient(internal::ZeroGradient);
  RegisterBroadcast(r, "broadcast_greater_equal", "1 where lhs >= rhs, else 0, with broadcasting.",
                    BroadcastCompute<m::GreaterEqual>)
      .SetOnnx(OnnxBinaryOp(OnnxComparison("GreaterOrEqual")))
      .SetGradient(internal::ZeroGradient);
  RegisterBroadcast(r, "broadcast_lesser", "1 where lhs < rhs, else 0, with broadcasting.",
                    BroadcastCompute<m::Lesser>)
      .SetOnnx(OnnxBinaryOp(OnnxComparison("Less")))
      .SetGradient(internal::ZeroGradient);
  RegisterBroadcast(r, "broadcast_lesser_equal", "1 where lhs <= rhs, else 0, with broadcasting.",
                    BroadcastCompute<m::LesserEqual>)
      .SetOnnx(OnnxBinaryOp(OnnxComparison("LessOrEqual")))
      .SetGradient(internal::ZeroGradient);
  RegisterBroadcast(r, "broadcast_logical_and",
                    "1 where lhs and rhs are both nonzero, else 0, with broadcasting.",
                    BroadcastCompute<m::LogicalAnd>)
      .SetOnnx(OnnxBinaryOp(OnnxLogical("And")))
      .SetGradient(internal::ZeroGradient);
  RegisterBroadcast(r, "broadcast_logical_or",
                    "1 where lhs or rhs is nonzero, else 0, with broadcasting.",
                    BroadcastCompute<m::LogicalOr>)
      .SetOnnx(OnnxBinaryOp(OnnxLogical("Or")))
      .SetGradient(internal::ZeroGradient);
  RegisterBroadcast(r, "broadcast_logical_xor",
                    "1 where exactly one of lhs and rhs is nonzero, with broadcasting.",
                    BroadcastCompute<m::LogicalXor>)
      .SetOnnx(OnnxBinaryOp(OnnxLogical("Xor")))
      .SetGradient(internal::ZeroGradient);
  r->Register("broadcast_to")
      .Describe("Broadcasts the input array to a new shape (size-1 dimensions are repeated).")
      .SetParam<BroadcastToParam>()
      .SetInputNames({"data"})
      .SetInferShape(BroadcastToShape)
      .SetInferType(NumericType)
      .SetCompute(BroadcastToCompute)
      .SetOnnx({"Expand"}, BroadcastToOnnx)
      .SetGradient(BroadcastToGradient);
  r->Register("_hn_reduce_sum_like")
      .Describe(
          "Sums data over the axes `like` is broadcast along to data's shape, giving "
          "like's shape (the gradient of broadcasting).")
      .SetInputNames({"data", "like"})
      .SetInferShape(ReduceSumLikeShape)
      .SetInferType(NumericType)
      .SetCompute(ReduceSumLikeCompute)
      .SetInternal();
}

}  // namespace hybridnet
