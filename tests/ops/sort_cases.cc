// Conformance cases: topk (every ret_typ, is_ascend, axis incl. None, k < 1, index dtypes),
// sort, argsort and argmax_channel, with and without ties. The reference orders each row's
// positions by a strict comparison of the values with std::sort (std::partial_sort of the first
// k when 8 * k <= n), the rule MXNet's CPU kernel follows, so tied values come out in MXNet's
// order; the live-MXNet check confirms that order on rows long enough for introsort (n > 16).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "conformance.h"

namespace hybridnet {
namespace conformance {
namespace {

enum class Ret { kValue, kIndices, kMask, kBoth };

// axis < -90: over the flattened input; k < 1: every element.
RefFn SortRef(int axis, int k, Ret ret, bool ascend) {
  return [axis, k, ret, ascend](const std::vector<RefTensor>& in) {
    const Shape& s = in[0].shape;
    const bool flat = axis < -90;
    const size_t a =
        flat ? 0 : static_cast<size_t>(axis < 0 ? axis + static_cast<int>(s.ndim()) : axis);
    int64_t lead = 1, n = flat ? s.Size() : s[a], trail = 1;
    if (!flat) {
      for (size_t d = 0; d < a; ++d) lead *= s[d];
      for (size_t d = a + 1; d < s.ndim(); ++d) trail *= s[d];
    }
    const int64_t kk = k < 1 ? n : k;
    Shape os = s;
    if (flat) os = Shape{kk};
    if (!flat) os[a] = kk;
    RefTensor values(os), indices(os), mask(s);
    for (int64_t l = 0; l < lead; ++l) {
      for (int64_t t = 0; t < trail; ++t) {
        std::vector<double> row;
        for (int64_t j = 0; j < n; ++j) row.push_back(in[0][(l * n + j) * trail + t]);
        std::vector<int64_t> pos;
        for (int64_t j = 0; j < n; ++j) pos.push_back(j);
        auto cmp = [&](int64_t x, int64_t y) {
          const auto ux = static_cast<size_t>(x), uy = static_cast<size_t>(y);
          return ascend ? row[ux] < row[uy] : row[ux] > row[uy];
        };
        if (kk * 8 > n) {
          std::sort(pos.begin(), pos.end(), cmp);
        } else {
          std::partial_sort(pos.begin(), pos.begin() + kk, pos.end(), cmp);
        }
        for (int64_t j = 0; j < kk; ++j) {
          const int64_t p = pos[static_cast<size_t>(j)];
          values[(l * kk + j) * trail + t] = row[static_cast<size_t>(p)];
          indices[(l * kk + j) * trail + t] = static_cast<double>(p);
          mask[(l * n + p) * trail + t] = 1;
        }
      }
    }
    switch (ret) {
      case Ret::kValue:
        return std::vector<RefTensor>{values};
      case Ret::kIndices:
        return std::vector<RefTensor>{indices};
      case Ret::kMask:
        return std::vector<RefTensor>{mask};
      case Ret::kBoth:
        break;
    }
    return std::vector<RefTensor>{values, indices};
  };
}

constexpr int kFlat = -100;

RefFn ArgmaxChannelRef() {
  return [](const std::vector<RefTensor>& in) {
    const Shape& s = in[0].shape;
    const int64_t lead = s[0], n = s[1], trail = s.Size() / (s[0] * s[1]);
    std::vector<int64_t> od = s.dims();
    od.erase(od.begin() + 1);
    RefTensor out{Shape(od)};
    for (int64_t a = 0; a < lead; ++a) {
      for (int64_t t = 0; t < trail; ++t) {
        int64_t arg = 0;
        double best = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < n; ++j) {
          const double v = in[0][(a * n + j) * trail + t];
          if (std::isnan(v)) {  // the first NaN wins
            arg = j;
            break;
          }
          if (v > best) {
            best = v;
            arg = j;
          }
        }
        out[a * trail + t] = static_cast<double>(arg);
      }
    }
    return std::vector<RefTensor>{out};
  };
}

OpCase Ties(OpCase c, int64_t hi) {
  c.gen = Integers(0, hi);
  return c;
}

OpCase Typed(OpCase c, DType dtype, int64_t lo, int64_t hi) {
  c.dtypes = {dtype};
  c.gen = Integers(lo, hi);
  return c;
}

}  // namespace

HN_CONFORMANCE_CASES(TopK) {
  cases->push_back(Case("topk", {}, {{3, 5}}, SortRef(-1, 1, Ret::kIndices, false)));
  cases->push_back(Case("topk", {{"k", "2"}, {"ret_typ", "value"}, {"axis", "0"}}, {{4, 3}},
                        SortRef(0, 2, Ret::kValue, false), "value_axis0"));
  cases->push_back(Case("topk", {{"k", "3"}, {"ret_typ", "both"}, {"axis", "1"}}, {{2, 6, 3}},
                        SortRef(1, 3, Ret::kBoth, false), "both_middle"));
  cases->push_back(Case("topk", {{"k", "2"}, {"ret_typ", "mask"}}, {{3, 4}},
                        SortRef(-1, 2, Ret::kMask, false), "mask"));
  cases->push_back(Case("topk",
                        {{"k", "2"}, {"ret_typ", "mask"}, {"axis", "0"}, {"is_ascend", "True"}},
                        {{5, 2, 2}}, SortRef(0, 2, Ret::kMask, true), "mask_axis0_ascend"));
  cases->push_back(Case("topk", {{"k", "3"}, {"is_ascend", "True"}, {"ret_typ", "both"}}, {{2, 7}},
                        SortRef(-1, 3, Ret::kBoth, true), "ascend"));
  cases->push_back(Case("topk", {{"k", "4"}, {"axis", "None"}, {"ret_typ", "both"}}, {{3, 4}},
                        SortRef(kFlat, 4, Ret::kBoth, false), "axis_none"));
  cases->push_back(Case("topk", {{"k", "3"}, {"axis", "None"}, {"ret_typ", "mask"}}, {{2, 3}},
                        SortRef(kFlat, 3, Ret::kMask, false), "axis_none_mask"));
  cases->push_back(Case("topk", {{"k", "0"}, {"ret_typ", "value"}}, {{2, 5}},
                        SortRef(-1, 0, Ret::kValue, false), "k0_sorts_all"));
  cases->push_back(Case("topk", {{"k", "2"}, {"dtype", "int32"}}, {{3, 6}},
                        SortRef(-1, 2, Ret::kIndices, false), "int32_indices"));
  cases->push_back(Case("topk", {{"k", "2"}, {"dtype", "int64"}, {"ret_typ", "both"}}, {{2, 6}},
                        SortRef(-1, 2, Ret::kBoth, false), "int64_indices"));
  cases->push_back(Case("topk", {{"k", "1"}, {"dtype", "uint8"}}, {{2, 9}},
                        SortRef(-1, 1, Ret::kIndices, false), "uint8_indices"));
  cases->push_back(Case("topk", {{"k", "2"}, {"dtype", "float16"}}, {{2, 9}},
                        SortRef(-1, 2, Ret::kIndices, false), "float16_indices"));
  // Ties, sorted by introsort (n = 40 > 16) and by the heap of partial_sort (8 * k <= n).
  cases->push_back(Ties(Case("topk", {{"k", "10"}, {"ret_typ", "both"}}, {{3, 40}},
                             SortRef(-1, 10, Ret::kBoth, false), "ties_sort"),
                        3));
  cases->push_back(Ties(Case("topk", {{"k", "3"}, {"ret_typ", "both"}}, {{3, 40}},
                             SortRef(-1, 3, Ret::kBoth, false), "ties_partial"),
                        3));
  cases->push_back(Ties(Case("topk", {{"k", "2"}, {"ret_typ", "mask"}, {"is_ascend", "True"}},
                             {{2, 24}}, SortRef(-1, 2, Ret::kMask, true), "ties_mask"),
                        2));
  cases->push_back(Typed(Case("topk", {{"k", "5"}, {"ret_typ", "both"}, {"dtype", "int32"}},
                              {{4, 20}}, SortRef(-1, 5, Ret::kBoth, false), "int_data_ties"),
                         DType::kInt32, -3, 3));
  OpCase f64 = Case("topk", {{"k", "2"}, {"ret_typ", "both"}, {"axis", "0"}}, {{5, 3}},
                    SortRef(0, 2, Ret::kBoth, false), "float64");
  f64.dtypes = {DType::kFloat64};
  cases->push_back(f64);

  cases->push_back(Case("sort", {}, {{3, 5}}, SortRef(-1, 0, Ret::kValue, true)));
  cases->push_back(Case("sort", {{"is_ascend", "False"}, {"axis", "0"}}, {{4, 3}},
                        SortRef(0, 0, Ret::kValue, false), "descending_axis0"));
  cases->push_back(Case("sort", {{"axis", "None"}}, {{2, 3, 2}},
                        SortRef(kFlat, 0, Ret::kValue, true), "axis_none"));
  cases->push_back(
      Typed(Case("sort", {}, {{2, 30}}, SortRef(-1, 0, Ret::kValue, true), "int64_ties"),
            DType::kInt64, -5, 5));

  cases->push_back(Case("argsort", {}, {{3, 5}}, SortRef(-1, 0, Ret::kIndices, true)));
  cases->push_back(Case("argsort", {{"is_ascend", "False"}, {"axis", "1"}}, {{2, 4, 3}},
                        SortRef(1, 0, Ret::kIndices, false), "descending_middle"));
  cases->push_back(Case("argsort", {{"axis", "None"}, {"dtype", "int64"}}, {{3, 3}},
                        SortRef(kFlat, 0, Ret::kIndices, true), "axis_none_int64"));
  cases->push_back(Ties(
      Case("argsort", {{"dtype", "int32"}}, {{3, 40}}, SortRef(-1, 0, Ret::kIndices, true), "ties"),
      4));
  cases->push_back(Ties(Case("argsort", {{"is_ascend", "False"}}, {{2, 12}},
                             SortRef(-1, 0, Ret::kIndices, false), "ties_short"),
                        2));
  cases->push_back(
      Typed(Case("argsort", {}, {{2, 20}}, SortRef(-1, 0, Ret::kIndices, true), "uint8_data"),
            DType::kUint8, 0, 6));

  cases->push_back(Case("argmax_channel", {}, {{3, 4}}, ArgmaxChannelRef()));
  cases->push_back(Case("argmax_channel", {}, {{2, 3, 4}}, ArgmaxChannelRef(), "3d"));
  cases->push_back(Ties(Case("argmax_channel", {}, {{4, 6}}, ArgmaxChannelRef(), "ties"), 2));
  cases->push_back(Typed(Case("argmax_channel", {}, {{3, 5}}, ArgmaxChannelRef(), "int32"),
                         DType::kInt32, -4, 4));
  cases->push_back(WithGen(Case("argmax_channel", {}, {{4, 5}}, ArgmaxChannelRef(), "nan"),
                           [](std::mt19937& rng, size_t, int64_t j) {
                             const double v = std::uniform_real_distribution<double>(-2, 2)(rng);
                             return j % 7 == 3 ? std::nan("") : v;
                           }));
}

HN_ERROR_CASES(Sort) {
  cases->push_back(
      Rejected("topk", {{"k", "6"}}, {{2, 5}}, StatusCode::kShapeError, {"topk(node)", "k=6"}));
  cases->push_back(Rejected("topk", {{"axis", "2"}}, {{2, 5}}, StatusCode::kShapeError,
                            {"topk(node)", "axis=2"}));
  cases->push_back(Rejected("topk", {{"ret_typ", "values"}}, {{2, 5}}, StatusCode::kInvalidArgument,
                            {"topk(node)", "ret_typ"}));
  cases->push_back(Rejected("topk", {{"dtype", "int8"}}, {{2, 5}}, StatusCode::kInvalidArgument,
                            {"topk(node)", "int8"}));
  cases->push_back(Rejected("argsort", {{"dtype", "bool"}}, {{2, 5}}, StatusCode::kInvalidArgument,
                            {"argsort(node)", "bool"}));
  cases->push_back(Rejected("sort", {}, {{2, 5}}, StatusCode::kTypeError, {"sort(node)", "bool"},
                            {DType::kBool}));
  cases->push_back(Rejected("argmax_channel", {}, {{5}}, StatusCode::kShapeError,
                            {"argmax_channel(node)", "2 dimensions"}));
}

}  // namespace conformance
}  // namespace hybridnet
