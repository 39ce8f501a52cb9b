// Sorting ops (MXNet src/operator/tensor/ordering_op-inl.h, broadcast_reduce_op_index.cc):
// topk (ret_typ value/indices/mask/both), sort, argsort and argmax_channel.
//
// Ties come out in MXNet's order because the rows are sorted the way MXNet's CPU kernel sorts
// them: the positions 0..n-1 of each row, ordered by std::sort with a strict comparison of the
// values (std::partial_sort of the first k when 8 * k <= n). Neither is stable, but both are
// deterministic functions of the comparisons, so equal values end up where MXNet puts them.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "hybridnet/op.h"
#include "kernels/workspace.h"
#include "ops/dtype_switch-inl.h"
#include "ops/register_ops.h"
#include "ops/shape/shape_util-inl.h"

namespace hybridnet {

namespace {

using internal::AssignShape;
using internal::NormalizeAxis;

enum class RetTyp { kValue, kIndices, kMask, kBoth };

// MXNet's index dtypes for topk/argsort: uint8, int32, int64, float16, float32, float64.
bool IsSortIndexDType(DType d) {
  return d == DType::kUint8 || d == DType::kInt32 || d == DType::kInt64 || d == DType::kFloat16 ||
         d == DType::kFloat32 || d == DType::kFloat64;
}

void CheckIndexDType(DType d) {
  HN_CHECK(IsSortIndexDType(d), kInvalidArgument)
      << "dtype=" << DTypeName(d)
      << " is not an index dtype (uint8, int32, int64, float16, float32 or float64)";
}

// The parameters every sorting op reduces to (MXNet's TopKParam).
struct SortSpec {
  std::optional<int> axis;
  int k = 0;
  RetTyp ret = RetTyp::kIndices;
  bool is_ascend = false;
  DType dtype = DType::kFloat32;
};

struct TopKParam {
  std::optional<int> axis = -1;
  int k = 1;
  RetTyp ret_typ = RetTyp::kIndices;
  bool is_ascend = false;
  DType dtype = DType::kFloat32;
  SortSpec spec;  // the fields above, set by TopKInit
  static void Declare(ParamDeclarer<TopKParam>* d) {
    d->Field("axis", &TopKParam::axis)
        .Default(std::optional<int>(-1))
        .Describe(
            "Axis to select along (negative counts from the end); None selects over the "
            "flattened input.");
    d->Field("k", &TopKParam::k)
        .Default(1)
        .Describe("How many elements to select; k < 1 sorts the whole axis.");
    d->Field("ret_typ", &TopKParam::ret_typ,
             {{"both", RetTyp::kBoth},
              {"indices", RetTyp::kIndices},
              {"mask", RetTyp::kMask},
              {"value", RetTyp::kValue}})
        .Default(RetTyp::kIndices)
        .Describe(
            "What to return: the values, their indices, both, or a 0/1 mask of the "
            "input's shape marking them.");
    d->Field("is_ascend", &TopKParam::is_ascend)
        .Default(false)
        .Describe("Select the k smallest instead of the k largest elements.");
    d->Field("dtype", &TopKParam::dtype)
        .Default(DType::kFloat32)
        .Describe(
            "Dtype of returned indices (uint8, int32, int64, float16, float32 or "
            "float64).");
  }
};

void TopKInit(TopKParam* p) {
  CheckIndexDType(p->dtype);
  p->spec = SortSpec{p->axis, p->k, p->ret_typ, p->is_ascend, p->dtype};
}

struct SortParam {
  std::optional<int> axis = -1;
  bool is_ascend = true;
  SortSpec spec;  // set by SortInit
  static void Declare(ParamDeclarer<SortParam>* d) {
    d->Field("axis", &SortParam::axis)
        .Default(std::optional<int>(-1))
        .Describe(
            "Axis to sort along (negative counts from the end); None sorts the "
            "flattened input.");
    d->Field("is_ascend", &SortParam::is_ascend)
        .Default(true)
        .Describe("Sort in ascending (true) or descending order.");
  }
};

void SortInit(SortParam* p) {
  p->spec = SortSpec{p->axis, 0, RetTyp::kValue, p->is_ascend, DType::kFloat32};
}

struct ArgSortParam {
  std::optional<int> axis = -1;
  bool is_ascend = true;
  DType dtype = DType::kFloat32;
  SortSpec spec;  // set by ArgSortInit
  static void Declare(ParamDeclarer<ArgSortParam>* d) {
    d->Field("axis", &ArgSortParam::axis)
        .Default(std::optional<int>(-1))
        .Describe(
            "Axis to sort along (negative counts from the end); None sorts the "
            "flattened input.");
    d->Field("is_ascend", &ArgSortParam::is_ascend)
        .Default(true)
        .Describe("Sort in ascending (true) or descending order.");
    d->Field("dtype", &ArgSortParam::dtype)
        .Default(DType::kFloat32)
        .Describe(
            "Dtype of the returned indices (uint8, int32, int64, float16, float32 or "
            "float64).");
  }
};

void ArgSortInit(ArgSortParam* p) {
  CheckIndexDType(p->dtype);
  p->spec = SortSpec{p->axis, 0, RetTyp::kIndices, p->is_ascend, p->dtype};
}

template <typename P>
const SortSpec& Spec(const NodeAttrs& attrs) {
  return attrs.Param<P>().spec;
}

// The rows to sort: `rows` of `n` elements, element j of row (l, t) at
// (l * n + j) * trail + t of the input; k selected per row.
struct SortLayout {
  int64_t lead = 1, n = 1, trail = 1, k = 1;
  size_t axis = 0;
  bool flat = false;
};

SortLayout MakeLayout(const NodeAttrs& attrs, const SortSpec& s, const Shape& is) {
  SortLayout l;
  if (!s.axis) {
    l.flat = true;
    l.n = is.Size();
  } else {
    l.axis = NormalizeAxis(attrs, *s.axis, is.ndim(), "axis");
    l.n = is[l.axis];
    for (size_t d = 0; d < l.axis; ++d) l.lead *= is[d];
    for (size_t d = l.axis + 1; d < is.ndim(); ++d) l.trail *= is[d];
  }
  l.k = s.k <= 0 ? l.n : s.k;
  HN_CHECK(l.k <= l.n, kShapeError)
      << DescribeNode(attrs) << ": k=" << s.k << " is larger than the " << l.n
      << " elements to select from (input " << is << ")";
  return l;
}

bool SortShapeOf(const NodeAttrs& attrs, const SortSpec& s, std::vector<Shape>* in,
                 std::vector<Shape>* out) {
  const Shape& is = (*in)[0];
  if (!is.IsKnown()) return false;
  const SortLayout l = MakeLayout(attrs, s, is);
  Shape os = is;
  if (s.ret != RetTyp::kMask) {
    if (l.flat) {
      os = Shape{l.k};
    } else {
      os[l.axis] = l.k;
    }
  }
  for (size_t i = 0; i < out->size(); ++i) AssignShape(attrs, out, i, os, "output");
  return true;
}

template <typename P>
bool SortShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  return SortShapeOf(attrs, Spec<P>(attrs), in, out);
}

template <typename P>
bool SortType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const SortSpec& s = Spec<P>(attrs);
  const DType data = (*in)[0];
  HN_CHECK(data == DType::kUnknown || internal::IsNumericDType(data), kTypeError)
      << DescribeNode(attrs) << ": data has dtype " << DTypeName(data)
      << "; sorting takes float32, float64, uint8, int8, int32 or int64";
  auto assign = [&](size_t i, DType want) {
    if (want == DType::kUnknown) return;
    HN_CHECK((*out)[i] == DType::kUnknown || (*out)[i] == want, kTypeError)
        << DescribeNode(attrs) << ": output " << i << " has dtype " << DTypeName((*out)[i])
        << " but " << DTypeName(want) << " is required";
    (*out)[i] = want;
  };
  if (s.ret == RetTyp::kIndices) {
    assign(0, s.dtype);
  } else {
    if ((*in)[0] == DType::kUnknown && (*out)[0] != DType::kUnknown) (*in)[0] = (*out)[0];
    assign(0, (*in)[0]);
    if (s.ret == RetTyp::kBoth) assign(1, s.dtype);
  }
  return (*in)[0] != DType::kUnknown;
}

// Selects the first k of each row into `order` (positions within the row), as MXNet's TopKSort.
template <typename T>
void SortRow(const T* vals, int64_t n, int64_t k, bool ascend, int64_t* order) {
  for (int64_t j = 0; j < n; ++j) order[j] = j;
  const bool full = k * 8 > n;
  if (ascend) {
    auto less = [vals](int64_t a, int64_t b) { return vals[a] < vals[b]; };
    if (full) {
      std::sort(order, order + n, less);
    } else {
      std::partial_sort(order, order + k, order + n, less);
    }
  } else {
    auto greater = [vals](int64_t a, int64_t b) { return vals[a] > vals[b]; };
    if (full) {
      std::sort(order, order + n, greater);
    } else {
      std::partial_sort(order, order + k, order + n, greater);
    }
  }
}

void SortCompute(const OpContext& ctx, const NodeAttrs& attrs, const SortSpec& s,
                 const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const SortLayout l = MakeLayout(attrs, s, in[0].shape);
  const TBlob* values = s.ret == RetTyp::kValue || s.ret == RetTyp::kBoth ? &out[0] : nullptr;
  const TBlob* indices = s.ret == RetTyp::kIndices ? &out[0]
                         : s.ret == RetTyp::kBoth  ? &out[1]
                                                   : nullptr;
  const TBlob* mask = s.ret == RetTyp::kMask ? &out[0] : nullptr;
  int64_t* order = ctx.workspace->Get<int64_t>(internal::kOpSlot0, static_cast<size_t>(l.n));
  double* picked = ctx.workspace->Get<double>(internal::kOpSlot1, static_cast<size_t>(l.k));
  internal::SwitchDType(in[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in[0].ptr<const T>();
    T* row = ctx.workspace->Get<T>(internal::kOpSlot2, static_cast<size_t>(l.n));
    if (mask) std::fill(mask->ptr<T>(), mask->ptr<T>() + mask->Size(), T(0));
    for (int64_t a = 0; a < l.lead; ++a) {
      for (int64_t t = 0; t < l.trail; ++t) {
        const int64_t base = a * l.n * l.trail + t;
        for (int64_t j = 0; j < l.n; ++j) row[j] = x[base + j * l.trail];
        SortRow(row, l.n, l.k, s.is_ascend, order);
        // Output element j of this row sits at (a * k + j) * trail + t.
        const int64_t obase = a * l.k * l.trail + t;
        for (int64_t j = 0; j < l.k; ++j) {
          const int64_t src = order[j];
          if (values) values->ptr<T>()[obase + j * l.trail] = row[src];
          if (indices) picked[j] = static_cast<double>(src);
          if (mask) mask->ptr<T>()[base + src * l.trail] = T(1);
        }
        if (indices) {
          // Indices in the requested dtype (float16 included), one strided row at a time.
          const size_t esize = DTypeSize(indices->dtype);
          uint8_t* y = indices->ptr<uint8_t>();
          for (int64_t j = 0; j < l.k; ++j) {
            ConvertElements(&picked[j], DType::kFloat64,
                            y + static_cast<size_t>(obase + j * l.trail) * esize, indices->dtype,
                            1);
          }
        }
      }
    }
  });
}

template <typename P>
void SortOpCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                   const std::vector<TBlob>& out) {
  SortCompute(ctx, attrs, Spec<P>(attrs), in, out);
}

// ---------------------------------------------------------------------------------------------
// argmax_channel: argmax along axis 1, first occurrence; a NaN wins over every number (MXNet's
// maximum reducer keeps the first NaN it meets).

bool ArgmaxChannelShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& is = (*in)[0];
  if (is.ndim() == 0) return false;
  HN_CHECK(is.ndim() >= 2, kShapeError)
      << DescribeNode(attrs) << ": needs an input of at least 2 dimensions (axis 1 is reduced), "
      << "got " << is;
  std::vector<int64_t> od = is.dims();
  od.erase(od.begin() + 1);
  AssignShape(attrs, out, 0, Shape(od), "output");
  return is.IsKnown();
}

template <typename T>
bool IsNan(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

void ArgmaxChannelCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                          const std::vector<TBlob>& out) {
  const Shape& is = in[0].shape;
  const int64_t lead = is[0], n = is[1], trail = in[0].Size() / (is[0] * is[1]);
  internal::SwitchDType(in[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in[0].ptr<const T>();
    T* y = out[0].ptr<T>();
    for (int64_t a = 0; a < lead; ++a) {
      for (int64_t t = 0; t < trail; ++t) {
        T best = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                      : std::numeric_limits<T>::lowest();
        int64_t arg = 0;
        for (int64_t j = 0; j < n; ++j) {
          const T v = x[(a * n + j) * trail + t];
          if (IsNan(best)) break;
          if (!(best >= v)) {
            best = v;
            arg = j;
          }
        }
        y[a * trail + t] = static_cast<T>(arg);
      }
    }
  });
}

}  // namespace

void RegisterSortOps(OpRegistry* r) {
  r->Register("topk")
      .Describe(
          "The k largest (or smallest, is_ascend) elements along axis, as values, "
          "indices, both, or a 0/1 mask; ties in MXNet's order.")
      .SetParam<TopKParam>(TopKInit)
      .SetInputNames({"data"})
      .SetNumOutputs([](const NodeAttrs& attrs) -> uint32_t {
        return Spec<TopKParam>(attrs).ret == RetTyp::kBoth ? 2 : 1;
      })
      .SetInferShape(SortShape<TopKParam>)
      .SetInferType(SortType<TopKParam>)
      .SetCompute(SortOpCompute<TopKParam>);

  r->Register("sort")
      .Describe("Sorts along axis (ascending by default); None sorts the flattened input.")
      .SetParam<SortParam>(SortInit)
      .SetInputNames({"data"})
      .SetNumTotalOutputs(2)  // MXNet's hidden indices output
      .SetInferShape(SortShape<SortParam>)
      .SetInferType(SortType<SortParam>)
      .SetCompute(SortOpCompute<SortParam>);

  r->Register("argsort")
      .Describe("The indices that sort the input along axis (ascending by default).")
      .SetParam<ArgSortParam>(ArgSortInit)
      .SetInputNames({"data"})
      .SetInferShape(SortShape<ArgSortParam>)
      .SetInferType(SortType<ArgSortParam>)
      .SetCompute(SortOpCompute<ArgSortParam>);

  r->Register("argmax_channel")
      .Describe(
          "Index of the maximum along axis 1 (the first one when tied), in the input's "
          "dtype.")
      .SetInputNames({"data"})
      .SetInferShape(ArgmaxChannelShape)
      .SetInferType(internal::NumericType)
      .SetCompute(ArgmaxChannelCompute);
}

}  // namespace hybridnet
