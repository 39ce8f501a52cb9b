// Conformance cases: take (clip/wrap/raise, axes, index dtypes), batch_take, pick, gather_nd,
// scatter_nd, _scatter_set_nd, one_hot, _ravel_multi_index, _unravel_index,
// _contrib_index_array, _contrib_index_copy. Indices include negative, fractional and
// out-of-range values where the op defines them; the references apply MXNet's rules
// (truncation toward zero, then clip or wrap) directly.
#include <cmath>
#include <cstdint>
#include <string>

#include "conformance.h"

namespace hybridnet {
namespace conformance {
namespace {

using Index = std::vector<int64_t>;

int64_t Flat(const Index& idx, const Shape& s) {
  int64_t f = 0;
  for (size_t k = 0; k < idx.size(); ++k) f = f * s[k] + idx[k];
  return f;
}

// A generator per input.
InputGen PerInput(std::vector<InputGen> gens) {
  return [gens](std::mt19937& rng, size_t input, int64_t j) { return gens[input](rng, input, j); };
}

// Deterministic values by element position (distinct indices for scatter-like ops).
InputGen ByPosition(std::function<double(int64_t)> f) {
  return [f](std::mt19937&, size_t, int64_t j) { return f(j); };
}

int64_t Clip(double v, int64_t n) {
  const int64_t j = static_cast<int64_t>(std::trunc(v));
  return j < 0 ? 0 : (j >= n ? n - 1 : j);
}

int64_t Wrap(double v, int64_t n) {
  const int64_t j = static_cast<int64_t>(std::trunc(v));
  return ((j % n) + n) % n;
}

RefFn TakeRef(size_t axis, bool clip) {
  return [axis, clip](const std::vector<RefTensor>& in) {
    const Shape& as = in[0].shape;
    Index od(as.begin(), as.begin() + axis);
    od.insert(od.end(), in[1].shape.begin(), in[1].shape.end());
    od.insert(od.end(), as.begin() + axis + 1, as.end());
    RefTensor out{Shape(od)};
    const size_t ni = in[1].shape.ndim();
    for (int64_t i = 0; i < out.size(); ++i) {
      Index o = Unravel(i, out.shape);
      Index idx_pos(o.begin() + axis, o.begin() + axis + ni);
      const double v = in[1][Flat(idx_pos, in[1].shape)];
      Index src(o.begin(), o.begin() + axis);
      src.push_back(clip ? Clip(v, as[axis]) : Wrap(v, as[axis]));
      src.insert(src.end(), o.begin() + axis + ni, o.end());
      out[i] = in[0][Flat(src, as)];
    }
    return std::vector<RefTensor>{out};
  };
}

RefFn PickRef(size_t axis, bool keepdims, bool clip) {
  return [axis, keepdims, clip](const std::vector<RefTensor>& in) {
    const Shape& ds = in[0].shape;
    Index od = ds.dims();
    if (keepdims) {
      od[axis] = 1;
    } else {
      od.erase(od.begin() + static_cast<std::ptrdiff_t>(axis));
    }
    if (od.empty()) od.push_back(1);
    RefTensor out{Shape(od)};
    for (int64_t i = 0; i < out.size(); ++i) {
      const double v = in[1][i];  // the index has the output's elements in order
      Index o = Unravel(i, out.shape);
      if (ds.ndim() == 1) {
        o = {0};
      } else if (!keepdims) {
        o.insert(o.begin() + static_cast<std::ptrdiff_t>(axis), 0);
      }
      o[axis] = clip ? Clip(v, ds[axis]) : Wrap(v, ds[axis]);
      out[i] = in[0][Flat(o, ds)];
    }
    return std::vector<RefTensor>{out};
  };
}

RefFn GatherNDRef() {
  return [](const std::vector<RefTensor>& in) {
    const Shape& ds = in[0].shape;
    const Shape& is = in[1].shape;
    const int64_t m = is[0], count = is.Size() / m;
    Index od(is.begin() + 1, is.end());
    od.insert(od.end(), ds.begin() + m, ds.end());
    RefTensor out{Shape(od)};
    const int64_t block = out.size() / count;
    for (int64_t i = 0; i < count; ++i) {
      Index src;
      for (int64_t k = 0; k < m; ++k) {
        const double v = in[1][k * count + i];
        src.push_back(static_cast<int64_t>(v + static_cast<double>(ds[k])) % ds[k]);
      }
      for (size_t k = static_cast<size_t>(m); k < ds.ndim(); ++k) src.push_back(0);
      const int64_t base = Flat(src, ds);
      for (int64_t b = 0; b < block; ++b) out[i * block + b] = in[0][base + b];
    }
    return std::vector<RefTensor>{out};
  };
}

// Scatter rows of data (input data_at) to the positions of indices (input data_at + 1) into
// base (zeros, or input 0).
RefFn ScatterRef(Shape os, size_t data_at) {
  return [os, data_at](const std::vector<RefTensor>& in) {
    RefTensor out(os);
    if (data_at == 1) out.v = in[0].v;
    const RefTensor& data = in[data_at];
    const RefTensor& idx = in[data_at + 1];
    const int64_t m = idx.shape[0], count = idx.shape.Size() / m;
    const int64_t block = data.size() / count;
    for (int64_t i = 0; i < count; ++i) {
      Index dst;
      for (int64_t k = 0; k < m; ++k) dst.push_back(static_cast<int64_t>(idx[k * count + i]));
      for (size_t k = static_cast<size_t>(m); k < os.ndim(); ++k) dst.push_back(0);
      const int64_t base = Flat(dst, os);
      for (int64_t b = 0; b < block; ++b) out[base + b] = data[i * block + b];
    }
    return std::vector<RefTensor>{out};
  };
}

RefFn OneHotRef(int64_t depth, double on, double off) {
  return [depth, on, off](const std::vector<RefTensor>& in) {
    Index od = in[0].shape.dims();
    od.push_back(depth);
    RefTensor out{Shape(od)};
    for (int64_t i = 0; i < in[0].size(); ++i) {
      const int64_t j = static_cast<int64_t>(std::trunc(in[0][i]));
      for (int64_t d = 0; d < depth; ++d) out[i * depth + d] = d == j ? on : off;
    }
    return std::vector<RefTensor>{out};
  };
}

RefFn RavelRef(Index shape) {
  return [shape](const std::vector<RefTensor>& in) {
    const int64_t n = in[0].shape[1];
    RefTensor out(Shape{n});
    for (int64_t i = 0; i < n; ++i) {
      int64_t flat = 0;
      for (size_t j = 0; j < shape.size(); ++j)
        flat = flat * shape[j] + static_cast<int64_t>(in[0][static_cast<int64_t>(j) * n + i]);
      out[i] = static_cast<double>(flat);
    }
    return std::vector<RefTensor>{out};
  };
}

RefFn UnravelRef(Index shape) {
  return [shape](const std::vector<RefTensor>& in) {
    const int64_t n = in[0].size();
    const int64_t k = static_cast<int64_t>(shape.size());
    RefTensor out(Shape{k, n});
    for (int64_t i = 0; i < n; ++i) {
      int64_t rest = static_cast<int64_t>(in[0][i]);
      for (int64_t j = k; j-- > 0;) {
        out[j * n + i] = static_cast<double>(rest % shape[static_cast<size_t>(j)]);
        rest /= shape[static_cast<size_t>(j)];
      }
    }
    return std::vector<RefTensor>{out};
  };
}

RefFn IndexArrayRef(std::vector<size_t> axes) {
  return [axes](const std::vector<RefTensor>& in) {
    const Shape& s = in[0].shape;
    Index od = s.dims();
    od.push_back(static_cast<int64_t>(axes.size()));
    RefTensor out{Shape(od)};
    for (int64_t i = 0; i < in[0].size(); ++i) {
      Index c = Unravel(i, s);
      for (size_t j = 0; j < axes.size(); ++j)
        out[i * static_cast<int64_t>(axes.size()) + static_cast<int64_t>(j)] =
            static_cast<double>(c[axes[j]]);
    }
    return std::vector<RefTensor>{out};
  };
}

RefFn IndexCopyRef() {
  return [](const std::vector<RefTensor>& in) {
    RefTensor out = in[0];
    const int64_t row = in[2].size() / in[1].size();
    for (int64_t i = 0; i < in[1].size(); ++i) {
      const int64_t j = static_cast<int64_t>(in[1][i]);
      for (int64_t b = 0; b < row; ++b) out[j * row + b] = in[2][i * row + b];
    }
    return std::vector<RefTensor>{out};
  };
}

OpCase WithDTypes(OpCase c, std::vector<DType> dtypes) {
  c.dtypes = std::move(dtypes);
  return c;
}

const InputGen kData = Uniform(-2, 2);

}  // namespace

HN_CONFORMANCE_CASES(Take) {
  // Indices in [-3, 7) with fractions: clipped or wrapped into an axis of length 4 or 5.
  const InputGen idx = PerInput({kData, Uniform(-3, 7)});
  cases->push_back(WithGen(Case("take", {}, {{5, 3}, {2, 4}}, TakeRef(0, true)), idx));
  cases->push_back(
      WithGen(Case("take", {{"mode", "wrap"}}, {{5, 3}, {6}}, TakeRef(0, false), "wrap"), idx));
  cases->push_back(
      WithGen(Case("take", {{"axis", "1"}}, {{2, 4, 3}, {3, 2}}, TakeRef(1, true), "axis1"), idx));
  cases->push_back(WithGen(Case("take", {{"axis", "-1"}, {"mode", "wrap"}}, {{2, 3, 4}, {5}},
                                TakeRef(2, false), "last_axis_wrap"),
                           idx));
  cases->push_back(
      WithGen(Case("take", {{"mode", "raise"}}, {{4, 2}, {3}}, TakeRef(0, true), "raise_in_range"),
              PerInput({kData, Uniform(0, 3)})));
  cases->push_back(WithGen(
      WithDTypes(Case("take", {{"axis", "1"}}, {{3, 5}, {4}}, TakeRef(1, true), "int_indices"),
                 {DType::kFloat32, DType::kInt32}),
      PerInput({kData, Integers(-2, 7)})));
  cases->push_back(WithGen(
      WithDTypes(Case("take", {}, {{6, 2}, {2, 2}}, TakeRef(0, true), "int64_data_int64_indices"),
                 {DType::kInt64, DType::kInt64}),
      PerInput({Integers(-99, 99), Integers(0, 5)})));
  cases->push_back(WithGen(WithDTypes(Case("take", {{"mode", "wrap"}}, {{3, 2}, {4}},
                                           TakeRef(0, false), "uint8_indices"),
                                      {DType::kFloat64, DType::kUint8}),
                           PerInput({kData, Integers(0, 200)})));

  OpCase batch = Case("batch_take", {}, {{4, 3}, {4}}, [](const std::vector<RefTensor>& in) {
    RefTensor out(Shape{4});
    for (int64_t i = 0; i < 4; ++i) out[i] = in[0][i * 3 + Clip(in[1][i], 3)];
    return std::vector<RefTensor>{out};
  });
  cases->push_back(WithGen(WithDTypes(batch, {DType::kFloat32, DType::kInt32}),
                           PerInput({kData, Integers(-2, 5)})));

  const InputGen pick_idx = PerInput({kData, Uniform(-2, 6)});
  cases->push_back(WithGen(Case("pick", {}, {{3, 4}, {3}}, PickRef(1, false, true)), pick_idx));
  cases->push_back(WithGen(Case("pick", {{"axis", "0"}, {"mode", "wrap"}}, {{4, 3}, {3}},
                                PickRef(0, false, false), "axis0_wrap"),
                           pick_idx));
  cases->push_back(WithGen(Case("pick", {{"axis", "1"}, {"keepdims", "True"}},
                                {{2, 4, 3}, {2, 1, 3}}, PickRef(1, true, true), "keepdims"),
                           pick_idx));
  cases->push_back(WithGen(NonDefaultInputs(Case("pick", {{"axis", "1"}}, {{2, 5, 3}, {2, 1, 3}},
                                                 PickRef(1, false, true), "keepdims_index")),
                           pick_idx));
  cases->push_back(
      WithGen(Case("choose_element_0index", {}, {{4}, {1}}, PickRef(0, false, true), "alias_1d"),
              pick_idx));
  cases->push_back(
      WithGen(WithDTypes(Case("pick", {}, {{3, 4}, {3}}, PickRef(1, false, true), "int_data"),
                         {DType::kInt32, DType::kInt64}),
              PerInput({Integers(-50, 50), Integers(0, 3)})));
}

HN_CONFORMANCE_CASES(GatherScatter) {
  // Indices in [-n, n) for every addressed axis (negative ones count from the end).
  auto in_range = [](std::vector<int64_t> dims) {
    return [dims](std::mt19937& rng, size_t input, int64_t j) {
      if (input == 0) return std::uniform_real_distribution<double>(-2, 2)(rng);
      const int64_t n = dims[static_cast<size_t>(j) % dims.size()];
      return static_cast<double>(std::uniform_int_distribution<int64_t>(-n, n - 1)(rng));
    };
  };
  // indices (1, 4): axis 0 of (5, 3); (2, 3): axes 0 and 1 of (3, 4, 2).
  // Float indices at the ends of an axis leave it under a finite-difference step (an error), so
  // the gradient is checked with int32 indices ("int_indices").
  const std::string ends =
      "float indices at the ends of the axis: a finite-difference step "
      "moves them out of range, which gather_nd rejects";
  OpCase one = WithGen(Case("gather_nd", {}, {{5, 3}, {1, 4}}, GatherNDRef()), in_range({5}));
  one.gradient_skip = ends;
  cases->push_back(one);
  OpCase two = Case("gather_nd", {}, {{3, 4, 2}, {2, 3}}, GatherNDRef(), "two_axes");
  two.gen = [](std::mt19937& rng, size_t input, int64_t j) {
    if (input == 0) return std::uniform_real_distribution<double>(-2, 2)(rng);
    const int64_t n = j < 3 ? 3 : 4;  // row 0 addresses axis 0, row 1 axis 1
    return static_cast<double>(std::uniform_int_distribution<int64_t>(-n, n - 1)(rng));
  };
  two.gradient_skip = ends;
  cases->push_back(two);
  OpCase ints = two;
  ints.note = "int_indices";
  ints.dtypes = {DType::kFloat32, DType::kInt32};
  ints.gradient_skip.clear();
  ints.mxnet_gradient_skip = "MXNet 1.9.1's backward of gather_nd with int32 indices hangs";
  cases->push_back(ints);
  OpCase full = Case("gather_nd", {}, {{2, 3}, {2, 2, 2}}, GatherNDRef(), "all_axes_int");
  full.dtypes = {DType::kInt32, DType::kInt32};
  full.gen = [](std::mt19937& rng, size_t input, int64_t j) {
    if (input == 0) return static_cast<double>(std::uniform_int_distribution<int>(-9, 9)(rng));
    return static_cast<double>(j < 4 ? j % 2 : -(j % 3) - 1);
  };
  cases->push_back(full);

  // Distinct positions: row k of the indices holds coordinate k of element j.
  cases->push_back(WithGen(
      Case("scatter_nd", {{"shape", "(6, 2)"}}, {{4, 2}, {1, 4}}, ScatterRef({6, 2}, 0)),
      PerInput(
          {kData, ByPosition([](int64_t j) { return static_cast<double>((j * 5 + 1) % 6); })})));
  cases->push_back(WithGen(
      Case("scatter_nd", {{"shape", "(3, 4)"}}, {{5}, {2, 5}}, ScatterRef({3, 4}, 0), "two_axes"),
      PerInput({kData, ByPosition([](int64_t j) {
                  const int64_t i = j % 5;
                  return static_cast<double>(j < 5 ? (i * 2) % 3 : (i * 3) % 4);
                })})));
  OpCase scatter_int =
      Case("scatter_nd", {{"shape", "(4,)"}}, {{3}, {1, 3}}, ScatterRef({4}, 0), "int64");
  scatter_int.dtypes = {DType::kInt64, DType::kInt32};
  scatter_int.gen =
      PerInput({Integers(-9, 9), ByPosition([](int64_t j) { return static_cast<double>(3 - j); })});
  cases->push_back(scatter_int);

  cases->push_back(WithGen(Case("_scatter_set_nd", {{"shape", "(5, 2)"}}, {{5, 2}, {3, 2}, {1, 3}},
                                ScatterRef({5, 2}, 1)),
                           PerInput({kData, kData, ByPosition([](int64_t j) {
                                       return static_cast<double>(4 - 2 * j);
                                     })})));
}

HN_CONFORMANCE_CASES(OneHot) {
  const InputGen idx = Uniform(-2, 7);
  cases->push_back(WithGen(Case("one_hot", {{"depth", "5"}}, {{2, 3}}, OneHotRef(5, 1, 0)), idx));
  cases->push_back(
      WithGen(Case("one_hot", {{"depth", "4"}, {"on_value", "2.5"}, {"off_value", "-1"}}, {{6}},
                   OneHotRef(4, 2.5, -1), "values"),
              idx));
  OpCase ints = Case("one_hot", {{"depth", "3"}, {"dtype", "int32"}, {"on_value", "7"}}, {{4}},
                     OneHotRef(3, 7, 0), "int32_out");
  ints.dtypes = {DType::kInt64};
  ints.gen = Integers(-1, 4);
  cases->push_back(ints);
  OpCase f64 = Case("one_hot", {{"depth", "3"}, {"dtype", "float64"}}, {{2, 2}}, OneHotRef(3, 1, 0),
                    "float64_out");
  f64.dtypes = {DType::kInt32};
  f64.gen = Integers(0, 2);
  cases->push_back(f64);
}

HN_CONFORMANCE_CASES(Ravel) {
  // data (2, 5) addressing a (3, 4) array; (3, 4) addressing (2, 3, 5).
  cases->push_back(WithGen(
      Case("_ravel_multi_index", {{"shape", "(3, 4)"}}, {{2, 5}}, RavelRef({3, 4})),
      [](std::mt19937& rng, size_t, int64_t j) {
        return static_cast<double>(std::uniform_int_distribution<int>(0, j < 5 ? 2 : 3)(rng));
      }));
  OpCase ravel3 = Case("ravel_multi_index", {{"shape", "(2, 3, 5)"}}, {{3, 4}}, RavelRef({2, 3, 5}),
                       "alias_int32");
  ravel3.dtypes = {DType::kInt32};
  ravel3.gen = [](std::mt19937& rng, size_t, int64_t j) {
    const int hi = j < 4 ? 1 : (j < 8 ? 2 : 4);
    return static_cast<double>(std::uniform_int_distribution<int>(0, hi)(rng));
  };
  cases->push_back(ravel3);
  cases->push_back(WithGen(Case("_unravel_index", {{"shape", "(3, 4)"}}, {{6}}, UnravelRef({3, 4})),
                           Integers(0, 11)));
  OpCase unravel3 =
      Case("unravel_index", {{"shape", "(2, 3, 5)"}}, {{7}}, UnravelRef({2, 3, 5}), "alias_int64");
  unravel3.dtypes = {DType::kInt64};
  unravel3.gen = Integers(0, 29);
  cases->push_back(unravel3);
}

HN_CONFORMANCE_CASES(IndexArrayCopy) {
  cases->push_back(Case("_contrib_index_array", {}, {{3, 2}}, IndexArrayRef({0, 1})));
  cases->push_back(Case("_contrib_index_array", {{"axes", "(1, 0)"}}, {{2, 3, 2}},
                        IndexArrayRef({1, 0}), "axes"));
  cases->push_back(Case("_contrib_index_array", {{"axes", "(-1, 3)"}}, {{2, 2, 3}},
                        IndexArrayRef({2, 0}), "wrapped_axes"));
  OpCase ints = Case("_contrib_index_array", {}, {{4}}, IndexArrayRef({0}), "int_data");
  ints.dtypes = {DType::kInt32};
  ints.gen = Integers(0, 9);
  cases->push_back(ints);

  // Rows 3, 1, 4 of a (5, 2) tensor replaced.
  cases->push_back(WithGen(
      Case("_contrib_index_copy", {}, {{5, 2}, {3}, {3, 2}}, IndexCopyRef()),
      PerInput({kData, ByPosition([](int64_t j) { return static_cast<double>((j * 3 + 3) % 5); }),
                kData})));
  OpCase copy_int =
      Case("_contrib_index_copy", {}, {{4, 2, 2}, {2}, {2, 2, 2}}, IndexCopyRef(), "int_indices");
  copy_int.dtypes = {DType::kFloat32, DType::kInt64, DType::kFloat32};
  copy_int.gen =
      PerInput({kData, ByPosition([](int64_t j) { return static_cast<double>(2 - j); }), kData});
  cases->push_back(copy_int);
}

// Counts per bin and the edges (rounded to float32 when `f32`): bin i holds lo_i <= v < lo_i+1,
// the last one also its upper edge; values outside [lo, hi] are not counted.
RefFn HistogramRef(std::function<std::vector<double>(const std::vector<RefTensor>&)> edges_of,
                   double lo, double hi, bool f32) {
  return [edges_of, lo, hi, f32](const std::vector<RefTensor>& in) {
    std::vector<double> e = edges_of(in);
    for (double& x : e) x = f32 ? F32(x) : std::trunc(x);
    const int64_t bins = static_cast<int64_t>(e.size()) - 1;
    const bool given = in.size() > 1;  // edges given: the range is theirs
    const double low = given ? e.front() : lo, high = given ? e.back() : hi;
    RefTensor counts(Shape{bins}), edges(Shape{bins + 1});
    for (int64_t i = 0; i <= bins; ++i) edges[i] = e[static_cast<size_t>(i)];
    for (double v : in[0].v) {
      if (!(v >= low && v <= high)) continue;
      int64_t b = 0;
      while (b + 1 < bins && v >= e[static_cast<size_t>(b + 1)]) ++b;
      counts[b] += 1;
    }
    return std::vector<RefTensor>{counts, edges};
  };
}

std::function<std::vector<double>(const std::vector<RefTensor>&)> EqualBins(int64_t n, double lo,
                                                                            double hi) {
  return [n, lo, hi](const std::vector<RefTensor>&) {
    std::vector<double> e;
    for (int64_t i = 0; i <= n; ++i) {
      const double di = static_cast<double>(i), dn = static_cast<double>(n);
      e.push_back((hi * di + (dn - di) * lo) / dn);
    }
    return e;
  };
}

std::vector<double> GivenBins(const std::vector<RefTensor>& in) { return in[1].v; }

HN_CONFORMANCE_CASES(Histogram) {
  cases->push_back(WithGen(Case("_histogram", {{"bin_cnt", "5"}, {"range", "(0, 5)"}}, {{3, 4}},
                                HistogramRef(EqualBins(5, 0, 5), 0, 5, true)),
                           Uniform(-1, 6)));
  cases->push_back(
      WithGen(Case("_histogram", {{"bin_cnt", "7"}, {"range", "(-1.3, 0.9)"}}, {{40}},
                   HistogramRef(EqualBins(7, -1.3, 0.9), -1.3, 0.9, true), "odd_range"),
              Uniform(-1.5, 1)));
  cases->push_back(
      WithGen(Case("_histogram", {{"bin_cnt", "3"}, {"range", "(2, 2)"}}, {{6}},
                   HistogramRef(EqualBins(3, 1.5, 2.5), 1.5, 2.5, true), "empty_range_widened"),
              Uniform(1.4, 2.6)));
  cases->push_back(WithGen(
      Case("_histogram", {}, {{10}, {4}}, HistogramRef(GivenBins, 0, 0, true), "bins_input"),
      PerInput({Uniform(-2, 3), ByPosition([](int64_t j) {
                  const double e[] = {-1.5, 0, 0.5, 2};
                  return e[j];
                })})));
  OpCase ints =
      Case("_histogram", {}, {{12}, {3}}, HistogramRef(GivenBins, 0, 0, false), "int32_bins");
  ints.dtypes = {DType::kInt32, DType::kInt32};
  ints.gen =
      PerInput({Integers(-1, 6), ByPosition([](int64_t j) { return static_cast<double>(j * 2); })});
  cases->push_back(ints);
}

HN_ERROR_CASES(Indexing) {
  cases->push_back(Rejected("take", {{"axis", "2"}}, {{2, 3}, {2}}, StatusCode::kShapeError,
                            {"take(node)", "axis=2"}));
  cases->push_back(Rejected("take", {{"mode", "nearest"}}, {{2, 3}, {2}},
                            StatusCode::kInvalidArgument, {"take(node)", "mode"}));
  cases->push_back(Rejected("take", {}, {{2, 3}, {2}}, StatusCode::kTypeError,
                            {"take(node)", "float16"}, {DType::kFloat32, DType::kFloat16}));
  cases->push_back(Rejected("batch_take", {}, {{2, 3}, {2}}, StatusCode::kTypeError,
                            {"batch_take(node)", "int32"}));
  cases->push_back(Rejected("batch_take", {}, {{2, 3, 2}, {2}}, StatusCode::kShapeError,
                            {"batch_take(node)", "2-D"}, {DType::kFloat32, DType::kInt32}));
  cases->push_back(Rejected("pick", {{"axis", "None"}}, {{2, 3}, {2}}, StatusCode::kInvalidArgument,
                            {"pick(node)", "None"}));
  cases->push_back(
      Rejected("pick", {}, {{2, 3}, {3}}, StatusCode::kShapeError, {"pick(node)", "input 1"}));
  cases->push_back(Rejected("gather_nd", {}, {{2, 3}, {3, 1}}, StatusCode::kShapeError,
                            {"gather_nd(node)", "address 3 axes"}));
  cases->push_back(Rejected("gather_nd", {}, {{2, 3}, {2}}, StatusCode::kShapeError,
                            {"gather_nd(node)", "at least 2"}));
  cases->push_back(Rejected("scatter_nd", {{"shape", "(4, 3)"}}, {{2, 2}, {1, 2}},
                            StatusCode::kShapeError, {"scatter_nd(node)", "does not fit"}));
  cases->push_back(Rejected("scatter_nd", {{"shape", "(4, 0)"}}, {{2}, {1, 2}},
                            StatusCode::kInvalidArgument, {"scatter_nd(node)", "shape"}));
  cases->push_back(Rejected("one_hot", {{"depth", "0"}}, {{3}}, StatusCode::kInvalidArgument,
                            {"one_hot(node)", "depth"}));
  cases->push_back(Rejected("one_hot", {{"depth", "2"}, {"dtype", "bool"}}, {{3}},
                            StatusCode::kInvalidArgument, {"one_hot(node)", "bool"}));
  cases->push_back(Rejected("_ravel_multi_index", {{"shape", "(2, 3)"}}, {{3, 4}},
                            StatusCode::kShapeError, {"_ravel_multi_index(node)", "(2, N)"}));
  cases->push_back(Rejected("_ravel_multi_index", {}, {{2, 4}}, StatusCode::kInvalidArgument,
                            {"_ravel_multi_index(node)", "shape"}));
  cases->push_back(Rejected("_unravel_index", {{"shape", "(2, 3)"}}, {{2, 2}},
                            StatusCode::kShapeError, {"_unravel_index(node)", "1-D"}));
  cases->push_back(Rejected("_histogram", {{"bin_cnt", "3"}}, {{4}}, StatusCode::kInvalidArgument,
                            {"_histogram(node)", "together"}));
  cases->push_back(Rejected("_histogram", {{"bin_cnt", "3"}, {"range", "(2, 1)"}}, {{4}},
                            StatusCode::kInvalidArgument, {"_histogram(node)", "exceeds"}));
  cases->push_back(Rejected("_histogram", {{"bin_cnt", "3"}, {"range", "(a, 1)"}}, {{4}},
                            StatusCode::kInvalidArgument, {"_histogram(node)", "range"}));
  cases->push_back(Rejected("_histogram", {}, {{4}, {1}}, StatusCode::kShapeError,
                            {"_histogram(node)", "2 edges"}));
  cases->push_back(Rejected("_contrib_index_array", {{"axes", "()"}}, {{2, 2}},
                            StatusCode::kInvalidArgument, {"_contrib_index_array(node)", "axes"}));
  cases->push_back(Rejected("_contrib_index_copy", {}, {{2, 3}, {3}, {3, 3}},
                            StatusCode::kShapeError, {"_contrib_index_copy(node)", "new_tensor"}));
}

}  // namespace conformance
}  // namespace hybridnet
