// Axis bookkeeping shared by the reductions (reduce.cc, statistics.cc), legacy (non-NumPy)
// shape semantics:
//  * axis None or () reduces every axis; without keepdims the result is then (1,);
//  * exclude=True reduces every axis *not* listed;
//  * keepdims keeps reduced axes as 1.
//
//   const ReducePlan plan = MakeReducePlan(shape, ReducedAxes(attrs, shape.ndim()));
//   ForEachOutput(plan, [&](int64_t o, int64_t base) {
//     ForEachReduced(plan, x, base, [&](T v) { acc += v; });
//   });
#pragma once

#include <algorithm>
#include <optional>
#include <vector>

#include "hybridnet/op.h"

namespace hybridnet {
namespace internal {

constexpr size_t kMaxReduceDims = 16;

struct ReduceAxesParam {
  std::optional<std::vector<int64_t>> axis;
  bool keepdims = false;
  bool exclude = false;
  static void Declare(ParamDeclarer<ReduceAxesParam>* d) {
    d->Field("axis", &ReduceAxesParam::axis)
        .Default(std::nullopt)
        .Describe(
            "The axis or axes along which to perform the reduction. The default, "
            "axis=() or None, reduces over all axes. Negative values count from the "
            "end.");
    d->Field("keepdims", &ReduceAxesParam::keepdims)
        .Default(false)
        .Describe(
            "If this is set to True, the reduced axes are left in the result as "
            "dimension with size one.");
    d->Field("exclude", &ReduceAxesParam::exclude)
        .Default(false)
        .Describe("Whether to perform reduction on axis that are NOT in axis instead.");
  }
};

/// Which axes of an `ndim`-D input are reduced: `axis` (None or () = all; negative counts
/// from the end; each at most once), or every other axis with `exclude`.
inline std::vector<bool> ReducedAxesOf(const NodeAttrs& attrs,
                                       const std::optional<std::vector<int64_t>>& axis,
                                       bool exclude, size_t ndim) {
  std::vector<bool> reduced(ndim, false);
  if (!axis || axis->empty()) {
    std::fill(reduced.begin(), reduced.end(), true);
    return reduced;
  }
  const int64_t n = static_cast<int64_t>(ndim);
  for (int64_t a : *axis) {
    HN_CHECK(a >= -n && a < n, kShapeError)
        << DescribeNode(attrs) << ": axis " << a << " is out of range for a " << ndim
        << "-D input (valid: [" << -n << ", " << n - 1 << "])";
    const size_t k = static_cast<size_t>(a < 0 ? a + n : a);
    HN_CHECK(!reduced[k], kShapeError)
        << DescribeNode(attrs) << ": axis " << k << " is listed twice in axis=" << Shape(*axis);
    reduced[k] = true;
  }
  if (exclude) reduced.flip();
  return reduced;
}

/// ReducedAxesOf for an op declared with ReduceAxesParam.
inline std::vector<bool> ReducedAxes(const NodeAttrs& attrs, size_t ndim) {
  const ReduceAxesParam& p = attrs.Param<ReduceAxesParam>();
  return ReducedAxesOf(attrs, p.axis, p.exclude, ndim);
}

inline Shape ReducedShape(const Shape& in, const std::vector<bool>& reduced, bool keepdims) {
  std::vector<int64_t> dims;
  for (size_t i = 0; i < in.ndim(); ++i) {
    if (!reduced[i]) {
      dims.push_back(in[i]);
    } else if (keepdims) {
      dims.push_back(1);
    }
  }
  if (dims.empty()) dims.push_back(1);
  return Shape(std::move(dims));
}

inline void AssignReducedShape(const NodeAttrs& attrs, std::vector<Shape>* out,
                               const Shape& value) {
  Shape merged = (*out)[0];
  HN_CHECK(MergeShape(value, &merged), kShapeError)
      << DescribeNode(attrs) << ": output shape " << (*out)[0] << " does not match the reduced "
      << "shape " << value;
  (*out)[0] = merged;
}

inline bool ReduceAxesShape(const NodeAttrs& attrs, std::vector<Shape>* in,
                            std::vector<Shape>* out) {
  const Shape& ishape = (*in)[0];
  if (ishape.ndim() == 0) return false;
  HN_CHECK(ishape.ndim() <= kMaxReduceDims, kShapeError)
      << DescribeNode(attrs) << ": reductions support at most " << kMaxReduceDims
      << " dimensions, got " << ishape;
  const auto& p = attrs.Param<ReduceAxesParam>();
  AssignReducedShape(attrs, out,
                     ReducedShape(ishape, ReducedAxes(attrs, ishape.ndim()), p.keepdims));
  return ishape.IsKnown() && (*out)[0].IsKnown();
}

// The input viewed as (outer, reduced..., inner) blocks: iterates the reduced positions of one
// output element. Axes are grouped into runs so the common cases (one axis, trailing axes,
// everything) are simple strided loops.
struct ReducePlan {
  int64_t out_size = 1;
  // Per output element: its base offset is computed from the kept axes.
  std::vector<int64_t> kept_extent, kept_stride;
  std::vector<int64_t> red_extent, red_stride;
  int64_t red_count = 1;
};

inline ReducePlan MakeReducePlan(const Shape& s, const std::vector<bool>& reduced) {
  ReducePlan plan;
  std::vector<int64_t> stride(s.ndim(), 1);
  for (size_t k = s.ndim(); k-- > 1;) stride[k - 1] = stride[k] * s[k];
  for (size_t k = 0; k < s.ndim(); ++k) {
    if (s[k] == 1) continue;  // contributes nothing either way
    if (reduced[k]) {
      plan.red_extent.push_back(s[k]);
      plan.red_stride.push_back(stride[k]);
      plan.red_count *= s[k];
    } else {
      plan.kept_extent.push_back(s[k]);
      plan.kept_stride.push_back(stride[k]);
      plan.out_size *= s[k];
    }
  }
  return plan;
}

// Calls f(base) for each output element in order, where base is its first input offset.
template <typename F>
inline void ForEachOutput(const ReducePlan& plan, F f) {
  const size_t nk = plan.kept_extent.size();
  int64_t idx[kMaxReduceDims] = {};
  int64_t base = 0;
  for (int64_t o = 0; o < plan.out_size; ++o) {
    f(o, base);
    for (size_t k = nk; k-- > 0;) {
      base += plan.kept_stride[k];
      if (++idx[k] < plan.kept_extent[k]) break;
      base -= plan.kept_stride[k] * plan.kept_extent[k];
      idx[k] = 0;
    }
  }
}

// Calls g(value) for each reduced element of the output element at `base`, in input order.
template <typename T, typename G>
inline void ForEachReduced(const ReducePlan& plan, const T* x, int64_t base, G g) {
  const size_t nr = plan.red_extent.size();
  if (nr == 0) {
    g(x[base]);
    return;
  }
  if (nr == 1) {
    const int64_t st = plan.red_stride[0];
    for (int64_t i = 0; i < plan.red_extent[0]; ++i) g(x[base + i * st]);
    return;
  }
  int64_t idx[kMaxReduceDims] = {};
  int64_t off = base;
  for (int64_t r = 0; r < plan.red_count; ++r) {
    g(x[off]);
    for (size_t k = nr; k-- > 0;) {
      off += plan.red_stride[k];
      if (++idx[k] < plan.red_extent[k]) break;
      off -= plan.red_stride[k] * plan.red_extent[k];
      idx[k] = 0;
    }
  }
}

}  // namespace internal
}  // namespace hybridnet
