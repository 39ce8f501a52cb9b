// Reductions (MXNet src/operator/tensor/broadcast_reduce_op_value.cc, _index.cc): sum, mean,
// prod, max, min over a set of axes, and argmax/argmin along one axis, with the legacy shape
// semantics of reduce-inl.h. Sums are accumulated in double and rounded once, which is at least
// as accurate as MXNet's Kahan-compensated float sum; max/min propagate NaN as MXNet's reducers
// do. argmax/argmin return float32 indices (MXNet's output dtype), the first index on ties.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "ops/reduce/reduce-inl.h"
#include "ops/register_ops.h"

namespace hybridnet {

namespace {

using internal::AssignReducedShape;
using internal::ForEachOutput;
using internal::ForEachReduced;
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

template <ReduceKind kKind>
void ReduceCompute(const OpContext&,
                   const NodeAttrs& attrs,
                   const std::vector<TBlob>& in,
                   const std::vector<TBlob>& out) {
  const Shape& s = in[0].shape;
  const ReducePlan plan = MakeReducePlan(s, ReducedAxes(attrs, s.ndim()));
  const float* x = in[0].ptr<const float>();
  float* y = out[0].ptr<float>();
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
void ArgReduceCompute(const OpContext&,
                      const NodeAttrs& attrs,
                      const std::vector<TBlob>& in,
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

Op& RegisterReduce(OpRegistry* r, const char* name, const char* description, FCompute f) {
  return r->Register(name)
      .Describe(description)
      .SetParam<ReduceAxesParam>()
      .SetInputNames({"data"})
      .SetInferShape(ReduceAxesShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(std::move(f));
}

}  // namespace

void RegisterReduceOps(OpRegistry* r) {
  RegisterReduce(r, "sum", "Computes the sum of array elements over given axes.",
                 ReduceCompute<ReduceKind::kSum>)
      .AddAlias("sum_axis");
  RegisterReduce(r, "mean", "Computes the mean of array elements over given axes.",
                 ReduceCompute<ReduceKind::kMean>);
  RegisterReduce(r, "prod", "Computes the product of array elements over given axes.",
                 ReduceCompute<ReduceKind::kProd>);
  RegisterReduce(r, "max", "Computes the max of array elements over given axes (NaN wins).",
                 ReduceCompute<ReduceKind::kMax>)
      .AddAlias("max_axis");
  RegisterReduce(r, "min", "Computes the min of array elements over given axes (NaN wins).",
                 ReduceCompute<ReduceKind::kMin>)
      .AddAlias("min_axis");
  for (bool is_max : {true, false}) {
    r->Register(is_max ? "argmax" : "argmin")
        .Describe(is_max ? "Returns indices of the maximum values along an axis (as float32)."
                         : "Returns indices of the minimum values along an axis (as float32).")
        .SetParam<ReduceAxisParam>()
        .SetInputNames({"data"})
        .SetInferShape(ArgReduceShape)
        .SetInferType(ElemwiseFloatType)
        .SetCompute(is_max ? FCompute(ArgReduceCompute<true>) : FCompute(ArgReduceCompute<false>));
  }
}

}  // namespace hybridnet
