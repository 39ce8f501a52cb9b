// Reductions (MXNet src/operator/tensor/broadcast_reduce_op_value.cc, _index.cc): sum, mean,
// prod, max, min over a set of axes, and argmax/argmin along one axis, with the legacy shape
// semantics of reduce-inl.h. Sums are accumulated in double (a contiguous innermost run in 16
// lanes, LineSum) and rounded once, which is at least as accurate as MXNet's Kahan-compensated
// float sum; max/min propagate NaN as MXNet's reducers do. argmax/argmin return float32 indices
// (MXNet's output dtype), the first index on ties.
// Gradients broadcast the output gradient back with _backward_sum / _backward_mean.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "kernels/avx2-inl.h"
#include "kernels/avx512-inl.h"
#include "kernels/parallel-inl.h"
#include "onnx/onnx_convert.h"
#include "ops/dtype_switch-inl.h"
#include "ops/gradient_util.h"
#include "ops/reduce/line_sum-inl.h"
#include "ops/reduce/reduce-inl.h"
#include "ops/register_ops.h"

namespace hybridnet {

namespace internal {

namespace {
HN_AVX512 double LineSumAvx512(const float* x, int64_t n) { return LineSum(x, n); }
HN_AVX2 double LineSumAvx2(const float* x, int64_t n) { return LineSum(x, n); }
}  // namespace

double LineSumOn(VectorIsa isa, const float* x, int64_t n) {
  switch (isa) {
    case VectorIsa::kAvx512:
      return LineSumAvx512(x, n);
    case VectorIsa::kAvx2:
      return LineSumAvx2(x, n);
    case VectorIsa::kBaseline:
      break;
  }
  return LineSum(x, n);
}

}  // namespace internal

namespace {

using internal::AssignReducedShape;
using internal::ForEachOutput;
using internal::ForEachReduced;
using internal::kMaxReduceDims;
using internal::MakeReducePlan;
using internal::ReduceAxesParam;
using internal::ReduceAxesShape;
using internal::ReducedAxes;
using internal::ReducedShape;
using internal::ReducePlan;

struct ReduceAxisParam {
  std::optional<int> axis;
  bool keepdims = false;
  static void Declare(ParamDeclarer<ReduceAxisParam>* d) {
    d->Field("axis", &ReduceAxisParam::axis)
        .Default(std::nullopt)
        .Describe(
            "The axis along which to perform the reduction. Negative values means "
            "indexing from right to left. The default, axis=None, searches the "
            "flattened input.");
    d->Field("keepdims", &ReduceAxisParam::keepdims)
        .Default(false)
        .Describe(
            "If this is set to True, the reduced axis is left in the result as "
            "dimension with size one.");
  }
};

enum class ReduceKind { kSum, kMean, kProd, kMax, kMin };

// Lines shorter than this sum on the calling thread.
constexpr int64_t kSplitElements = int64_t{1} << 15;

template <ReduceKind kKind>
void ReduceCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                   const std::vector<TBlob>& out) {
  const Shape& s = in[0].shape;
  const ReducePlan plan = MakeReducePlan(s, ReducedAxes(attrs, s.ndim()));
  const float* x = in[0].ptr<const float>();
  float* y = out[0].ptr<float>();
  if constexpr (kKind == ReduceKind::kSum || kKind == ReduceKind::kMean) {
    // One contiguous reduced run is the innermost axis: output o sums the line at o * n. Lines
    // are independent, so they split between the kernel threads.
    if (plan.red_stride.size() == 1 && plan.red_stride[0] == 1) {
      const int64_t n = plan.red_count;
      const internal::VectorIsa isa = internal::ChooseVectorIsa();
      internal::ParallelFor(plan.out_size, plan.out_size * n >= kSplitElements, [&](int64_t o) {
        double acc = internal::LineSumOn(isa, x + o * n, n);
        if constexpr (kKind == ReduceKind::kMean) acc /= static_cast<double>(n);
        y[o] = static_cast<float>(acc);
      });
      return;
    }
  }
  ForEachOutput(plan, [&](int64_t o, int64_t base) {
    if constexpr (kKind == ReduceKind::kSum || kKind == ReduceKind::kMean) {
      double acc = 0.0;
      ForEachReduced(plan, x, base, [&](float v) { acc += static_cast<double>(v); });
      if constexpr (kKind == ReduceKind::kMean) acc /= static_cast<double>(plan.red_count);
      y[o] = static_cast<float>(acc);
    } else if constexpr (kKind == ReduceKind::kProd) {
      double acc = 1.0;
      ForEachReduced(plan, x, base, [&](float v) { acc *= static_cast<double>(v); });
      y[o] = static_cast<float>(acc);
    } else {
      const bool is_max = kKind == ReduceKind::kMax;
      float acc =
          is_max ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
      bool nan = false;
      ForEachReduced(plan, x, base, [&](float v) {
        if (v != v) nan = true;
        if (is_max ? v > acc : v < acc) acc = v;
      });
      y[o] = nan ? std::numeric_limits<float>::quiet_NaN() : acc;
    }
  });
}

// ---------------------------------------------------------------------------------------------
// argmax / argmin

bool ArgReduceShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& ishape = (*in)[0];
  if (ishape.ndim() == 0) return false;
  const auto& p = attrs.Param<ReduceAxisParam>();
  Shape result;
  if (!p.axis) {
    result = p.keepdims ? Shape(std::vector<int64_t>(ishape.ndim(), 1)) : Shape{1};
  } else {
    const int64_t n = static_cast<int64_t>(ishape.ndim());
    HN_CHECK(*p.axis >= -n && *p.axis < n, kShapeError)
        << DescribeNode(attrs) << ": axis " << *p.axis << " is out of range for a " << ishape.ndim()
        << "-D input";
    std::vector<bool> reduced(ishape.ndim(), false);
    reduced[static_cast<size_t>(*p.axis < 0 ? *p.axis + n : *p.axis)] = true;
    result = ReducedShape(ishape, reduced, p.keepdims);
  }
  AssignReducedShape(attrs, out, result);
  return ishape.IsKnown() && (*out)[0].IsKnown();
}

template <bool kMax>
void ArgReduceCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                      const std::vector<TBlob>& out) {
  const Shape& s = in[0].shape;
  const auto& p = attrs.Param<ReduceAxisParam>();
  int64_t outer = 1, len = s.Size(), inner = 1;
  if (p.axis) {
    const int64_t n = static_cast<int64_t>(s.ndim());
    const size_t axis = static_cast<size_t>(*p.axis < 0 ? *p.axis + n : *p.axis);
    outer = 1;
    for (size_t k = 0; k < axis; ++k) outer *= s[k];
    len = s[axis];
    for (size_t k = axis + 1; k < s.ndim(); ++k) inner *= s[k];
  }
  const float* x = in[0].ptr<const float>();
  float* y = out[0].ptr<float>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const float* px = x + o * len * inner + i;
      int64_t best = 0;
      float best_v = px[0];
      for (int64_t k = 1; k < len; ++k) {
        const float v = px[k * inner];
        if (best_v != best_v) break;  // NaN wins (first occurrence)
        if (v != v || (kMax ? v > best_v : v < best_v)) {
          best = k;
          best_v = v;
        }
      }
      y[o * inner + i] = static_cast<float>(best);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// _backward_sum / _backward_mean: inputs (the reduction's output gradient, its data), the
// reduction's attributes; output: the gradient of data.

bool ReduceBackwardShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  Shape data = (*in)[1];
  HN_CHECK(MergeShape((*out)[0], &data), kShapeError)
      << DescribeNode(attrs) << ": data has shape " << (*in)[1] << ", the output " << (*out)[0];
  (*in)[1] = data;
  (*out)[0] = data;
  if (data.ndim() == 0) return false;
  HN_CHECK(data.ndim() <= kMaxReduceDims, kShapeError)
      << DescribeNode(attrs) << ": reductions support at most " << kMaxReduceDims
      << " dimensions, got " << data;
  const Shape reduced =
      ReducedShape(data, ReducedAxes(attrs, data.ndim()), attrs.Param<ReduceAxesParam>().keepdims);
  Shape grad = (*in)[0];
  HN_CHECK(MergeShape(reduced, &grad), kShapeError)
      << DescribeNode(attrs) << ": the output gradient has shape " << (*in)[0]
      << ", the reduction of " << data << " gives " << reduced;
  (*in)[0] = grad;
  return data.IsKnown() && grad.IsKnown();
}

// dx[i] = dy[o] (sum) or dy[o] / n (mean, n elements reduced per output), o the output element
// input element i was reduced into. The trailing axes that are all reduced, or all kept, make
// runs of dx: one dy element repeated, or consecutive dy elements; an odometer over the leading
// axes finds each run's first dy element.
template <bool kMean>
void ReduceBackwardCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                           const std::vector<TBlob>& out) {
  const Shape& s = out[0].shape;
  const size_t n = s.ndim();
  const std::vector<bool> reduced = ReducedAxes(attrs, n);
  int64_t stride[kMaxReduceDims] = {};
  int64_t acc = 1, count = 1;
  for (size_t k = n; k-- > 0;) {
    if (reduced[k]) {
      count *= s[k];
    } else {
      stride[k] = acc;
      acc *= s[k];
    }
  }
  size_t lead = n;  // the axes before the trailing run
  int64_t run = 1;
  while (lead > 0 && reduced[lead - 1] == reduced[n - 1]) run *= s[--lead];
  const bool run_reduced = n > 0 && reduced[n - 1];
  internal::SwitchNumericDType(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* dy = in[0].ptr<const T>();
    T* dx = out[0].ptr<T>();
    const T scale = static_cast<T>(count);
    auto gradient = [&](int64_t o) { return kMean ? static_cast<T>(dy[o] / scale) : dy[o]; };
    int64_t idx[kMaxReduceDims] = {};
    int64_t o = 0;
    const int64_t total = out[0].Size();
    for (int64_t i = 0; i < total; i += run) {
      if (run_reduced) {
        std::fill(dx + i, dx + i + run, gradient(o));
      } else {
        for (int64_t j = 0; j < run; ++j) dx[i + j] = gradient(o + j);
      }
      for (size_t k = lead; k-- > 0;) {
        o += stride[k];
        if (++idx[k] < s[k]) break;
        o -= stride[k] * s[k];
        idx[k] = 0;
      }
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Gradients

using internal::GradientBuilder;

// `a` (a reduction's output shape) broadcast back to the reduction's input shape.
NodeEntry BroadcastBack(const GradientBuilder& g, const NodeEntry& a) {
  return g.Op("_backward_sum", {a, g.in(0)}, g.attrs().dict);
}

std::vector<NodeEntry> SumGradient(const std::shared_ptr<Node>& n,
                                   const std::vector<NodeEntry>& dy) {
  GradientBuilder g(n, dy);
  return {BroadcastBack(g, g.out_grad(0))};
}

std::vector<NodeEntry> MeanGradient(const std::shared_ptr<Node>& n,
                                    const std::vector<NodeEntry>& dy) {
  GradientBuilder g(n, dy);
  return {g.Op("_backward_mean", {g.out_grad(0), g.in(0)}, g.attrs().dict)};
}

// max, min: every element equal to the result gets the gradient (MXNet's, ties included).
std::vector<NodeEntry> PickGradient(const std::shared_ptr<Node>& n,
                                    const std::vector<NodeEntry>& dy) {
  GradientBuilder g(n, dy);
  const NodeEntry picked = g.Op("_equal", {g.in(0), BroadcastBack(g, g.out(0))});
  return {g.Mul(BroadcastBack(g, g.out_grad(0)), picked)};
}

// prod: dy y / x.
std::vector<NodeEntry> ProdGradient(const std::shared_ptr<Node>& n,
                                    const std::vector<NodeEntry>& dy) {
  GradientBuilder g(n, dy);
  return {g.Mul(BroadcastBack(g, g.out_grad(0)), g.Div(BroadcastBack(g, g.out(0)), g.in(0)))};
}

// ---------------------------------------------------------------------------------------------
// ONNX

// The reduced axes as ReducedAxes resolves them; reducing every axis without keepdims gives
// (1,) here and a 0-D tensor in ONNX, hence the reshape.
FOnnxConvert ReduceOnnx(std::string op_type) {
  return [op_type](OnnxNodeContext* ctx) {
    const OnnxValue& x = ctx->in(0);
    const std::vector<bool> reduced = ReducedAxes(ctx->attrs(), x.shape.ndim());
    std::vector<int64_t> axes;
    for (size_t i = 0; i < reduced.size(); ++i)
      if (reduced[i]) axes.push_back(static_cast<int64_t>(i));
    const bool keepdims = ctx->param<ReduceAxesParam>().keepdims;
    if (axes.empty()) {  // exclude=True listing every axis
      ctx->Add("Identity", {x.name}, {}, ctx->out(0).name);
    } else if (!keepdims && axes.size() == x.shape.ndim()) {
      ctx->ReshapeToOutput(ctx->Reduce(op_type, x.name, axes, true), 0);
    } else {
      ctx->Reduce(op_type, x.name, axes, keepdims, ctx->out(0).name);
    }
  };
}

// float32 indices, the first on ties; without an axis, of the flattened input.
FOnnxConvert ArgReduceOnnx(std::string op_type) {
  return [op_type](OnnxNodeContext* ctx) {
    const auto& p = ctx->param<ReduceAxisParam>();
    const OnnxValue& x = ctx->in(0);
    const int64_t n = static_cast<int64_t>(x.shape.ndim());
    std::string data = x.name;
    int64_t axis = 1;
    size_t rank = 2;  // of the ONNX result
    if (p.axis) {
      axis = *p.axis < 0 ? *p.axis + n : *p.axis;
      rank = static_cast<size_t>(p.keepdims ? n : n - 1);
    } else {
      data = ctx->Add("Flatten", {data}, {{"axis", int64_t{0}}});
    }
    const bool keep = p.keepdims || !p.axis;
    std::string index = ctx->Add(op_type, {data}, {{"axis", axis}, {"keepdims", keep ? 1 : 0}});
    if (rank == ctx->out(0).shape.ndim() && p.axis) {
      ctx->Cast(index, DType::kFloat32, ctx->out(0).name);
    } else {
      ctx->ReshapeToOutput(ctx->Cast(index, DType::kFloat32), 0);
    }
  };
}

Op& RegisterReduce(OpRegistry* r, const char* name, const char* description, FCompute f,
                   const char* onnx_op) {
  return r->Register(name)
      .Describe(description)
      .SetParam<ReduceAxesParam>()
      .SetInputNames({"data"})
      .SetInferShape(ReduceAxesShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(std::move(f))
      .SetOnnx({onnx_op, "Identity", "Reshape"}, ReduceOnnx(onnx_op));
}

}  // namespace

void RegisterReduceOps(OpRegistry* r) {
  RegisterReduce(r, "sum", "Computes the sum of array elements over given axes.",
                 ReduceCompute<ReduceKind::kSum>, "ReduceSum")
      .AddAlias("sum_axis")
      .SetGradient(SumGradient);
  RegisterReduce(r, "mean", "Computes the mean of array elements over given axes.",
                 ReduceCompute<ReduceKind::kMean>, "ReduceMean")
      .SetGradient(MeanGradient);
  RegisterReduce(r, "prod", "Computes the product of array elements over given axes.",
                 ReduceCompute<ReduceKind::kProd>, "ReduceProd")
      .SetGradient(ProdGradient);
  RegisterReduce(r, "max", "Computes the max of array elements over given axes (NaN wins).",
                 ReduceCompute<ReduceKind::kMax>, "ReduceMax")
      .AddAlias("max_axis")
      .SetGradient(PickGradient);
  RegisterReduce(r, "min", "Computes the min of array elements over given axes (NaN wins).",
                 ReduceCompute<ReduceKind::kMin>, "ReduceMin")
      .AddAlias("min_axis")
      .SetGradient(PickGradient);
  for (bool mean : {false, true}) {
    r->Register(mean ? "_backward_mean" : "_backward_sum")
        .Describe(mean ? "The gradient of mean: the output gradient broadcast back over the "
                         "reduced axes and divided by their element count."
                       : "The gradient of sum: the output gradient broadcast back over the "
                         "reduced axes.")
        .SetParam<ReduceAxesParam>()
        .SetInputNames({"out_grad", "data"})
        .SetInferShape(ReduceBackwardShape)
        .SetInferType(internal::NumericType)
        .SetCompute(mean ? FCompute(ReduceBackwardCompute<true>)
                         : FCompute(ReduceBackwardCompute<false>))
        .SetInternal();
  }
  for (bool is_max : {true, false}) {
    r->Register(is_max ? "argmax" : "argmin")
        .Describe(is_max ? "Returns indices of the maximum values along an axis (as float32)."
                         : "Returns indices of the minimum values along an axis (as float32).")
        .SetParam<ReduceAxisParam>()
        .SetInputNames({"data"})
        .SetInferShape(ArgReduceShape)
        .SetInferType(ElemwiseFloatType)
        .SetCompute(is_max ? FCompute(ArgReduceCompute<true>) : FCompute(ArgReduceCompute<false>))
        .SetOnnx({is_max ? "ArgMax" : "ArgMin", "Flatten", "Cast", "Reshape"},
                 ArgReduceOnnx(is_max ? "ArgMax" : "ArgMin"))
        .SetGradient(internal::ZeroGradient);
  }
}

}  // namespace hybridnet
