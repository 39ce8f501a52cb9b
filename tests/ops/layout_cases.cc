// Conformance cases: the data-layout ops (tile, repeat, stack, squeeze, SwapAxis, reverse,
// depth_to_space, space_to_depth, _split_v2, diag) and the "like" ops (slice_like,
// broadcast_axis, broadcast_like, reshape_like). References gather every output element from
// its source position, written directly from each op's definition.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>

#include "conformance.h"

namespace hybridnet {
namespace conformance {
namespace {

using Index = std::vector<int64_t>;
// Source element (flat index into input `which`) of output element `o`.
using SourceOf = std::function<int64_t(const Index& o, const std::vector<RefTensor>& in)>;

int64_t Flat(const Index& idx, const Shape& s) {
  int64_t f = 0;
  for (size_t k = 0; k < idx.size(); ++k) f = f * s[k] + idx[k];
  return f;
}

// One output of shape `out`, element o = in[0][source(o)].
RefFn Gather(std::function<Shape(const std::vector<RefTensor>&)> out_shape, SourceOf source) {
  return [out_shape, source](const std::vector<RefTensor>& in) {
    RefTensor out(out_shape(in));
    for (int64_t i = 0; i < out.size(); ++i) out[i] = in[0][source(Unravel(i, out.shape), in)];
    return std::vector<RefTensor>{out};
  };
}

std::function<Shape(const std::vector<RefTensor>&)> Fixed(Shape s) {
  return [s](const std::vector<RefTensor>&) { return s; };
}

OpCase Typed(OpCase c, DType dtype) {
  c.dtypes = std::vector<DType>(c.inputs.size(), dtype);
  c.gen = Integers(-50, 50);
  if (dtype == DType::kUint8) c.gen = Integers(0, 255);
  return c;
}

// ---- references ---------------------------------------------------------------------------

RefFn TileRef(Shape in, std::vector<int64_t> reps) {
  const size_t nd = std::max(in.ndim(), reps.size());
  std::vector<int64_t> pin(nd, 1), prep(nd, 1);
  for (size_t k = 0; k < in.ndim(); ++k) pin[nd - in.ndim() + k] = in[k];
  for (size_t k = 0; k < reps.size(); ++k) prep[nd - reps.size() + k] = reps[k];
  Index od(nd);
  for (size_t k = 0; k < nd; ++k) od[k] = pin[k] * prep[k];
  return Gather(Fixed(Shape(od)), [pin, in](const Index& o, const std::vector<RefTensor>&) {
    Index src;
    for (size_t k = pin.size() - in.ndim(); k < pin.size(); ++k) src.push_back(o[k] % pin[k]);
    return Flat(src, in);
  });
}

RefFn RepeatRef(Shape in, int64_t r, int axis) {
  if (axis < 0 && axis != -100) axis += static_cast<int>(in.ndim());
  if (axis == -100) {  // flattened
    return Gather(Fixed(Shape{in.Size() * r}),
                  [r](const Index& o, const std::vector<RefTensor>&) { return o[0] / r; });
  }
  Index od = in.dims();
  od[static_cast<size_t>(axis)] *= r;
  return Gather(Fixed(Shape(od)), [in, r, axis](const Index& o, const std::vector<RefTensor>&) {
    Index src = o;
    src[static_cast<size_t>(axis)] /= r;
    return Flat(src, in);
  });
}

RefFn StackRef(size_t axis) {
  return [axis](const std::vector<RefTensor>& in) {
    Index od = in[0].shape.dims();
    od.insert(od.begin() + static_cast<std::ptrdiff_t>(axis), static_cast<int64_t>(in.size()));
    RefTensor out{Shape(od)};
    for (int64_t i = 0; i < out.size(); ++i) {
      Index o = Unravel(i, out.shape);
      const size_t which = static_cast<size_t>(o[axis]);
      o.erase(o.begin() + static_cast<std::ptrdiff_t>(axis));
      out[i] = in[which][Flat(o, in[which].shape)];
    }
    return std::vector<RefTensor>{out};
  };
}

RefFn SameData(Shape s) {
  return [s](const std::vector<RefTensor>& in) {
    RefTensor out(s);
    out.v = in[0].v;
    return std::vector<RefTensor>{out};
  };
}

RefFn SwapRef(Shape in, size_t a, size_t b) {
  Shape os = in;
  std::swap(os[a], os[b]);
  return Gather(Fixed(os), [in, a, b](const Index& o, const std::vector<RefTensor>&) {
    Index src = o;
    std::swap(src[a], src[b]);
    return Flat(src, in);
  });
}

RefFn ReverseRef(Shape in, std::vector<size_t> axes) {
  return Gather(Fixed(in), [in, axes](const Index& o, const std::vector<RefTensor>&) {
    Index src = o;
    for (size_t a : axes) src[a] = in[a] - 1 - src[a];
    return Flat(src, in);
  });
}

// out[n, c, h*b + y, w*b + x] = in[n, (y*b + x)*C + c, h, w]
RefFn DepthToSpaceRef(Shape in, int64_t b) {
  const int64_t c_out = in[1] / (b * b);
  return Gather(Fixed(Shape{in[0], c_out, in[2] * b, in[3] * b}),
                [in, b, c_out](const Index& o, const std::vector<RefTensor>&) {
                  const int64_t y = o[2] % b, x = o[3] % b;
                  return Flat({o[0], (y * b + x) * c_out + o[1], o[2] / b, o[3] / b}, in);
                });
}

RefFn SpaceToDepthRef(Shape in, int64_t b) {
  return Gather(Fixed(Shape{in[0], in[1] * b * b, in[2] / b, in[3] / b}),
                [in, b](const Index& o, const std::vector<RefTensor>&) {
                  const int64_t c = o[1] % in[1], blk = o[1] / in[1];
                  return Flat({o[0], c, o[2] * b + blk / b, o[3] * b + blk % b}, in);
                });
}

// Parts [bounds[i], bounds[i+1]) along axis.
RefFn SplitRef(Shape in, size_t axis, std::vector<int64_t> bounds, bool squeeze) {
  return [in, axis, bounds, squeeze](const std::vector<RefTensor>& x) {
    std::vector<RefTensor> outs;
    for (size_t p = 0; p + 1 < bounds.size(); ++p) {
      Index pd = in.dims();
      pd[axis] = bounds[p + 1] - bounds[p];
      Index od = pd;
      if (squeeze) od.erase(od.begin() + static_cast<std::ptrdiff_t>(axis));
      RefTensor out{Shape(od)};
      for (int64_t i = 0; i < out.size(); ++i) {
        Index src = Unravel(i, Shape(pd));
        src[axis] += bounds[p];
        out[i] = x[0][Flat(src, in)];
      }
      outs.push_back(out);
    }
    return outs;
  };
}

RefFn DiagOfVector(int64_t n, int64_t k) {
  return [n, k](const std::vector<RefTensor>& in) {
    const int64_t m = n + std::abs(k);
    RefTensor out(Shape{m, m});
    for (int64_t i = 0; i < n; ++i) {
      const int64_t r = k >= 0 ? i : i - k, c = k >= 0 ? i + k : i;
      out[r * m + c] = in[0][i];
    }
    return std::vector<RefTensor>{out};
  };
}

RefFn DiagOfPlanes(Shape in, size_t x1, size_t x2, int64_t k) {
  Index od;
  for (size_t a = 0; a < in.ndim(); ++a)
    if (a != x1 && a != x2) od.push_back(in[a]);
  od.push_back(std::min(in[x1] + std::min<int64_t>(k, 0), in[x2] - std::max<int64_t>(k, 0)));
  return Gather(Fixed(Shape(od)), [in, x1, x2, k](const Index& o, const std::vector<RefTensor>&) {
    Index src(in.ndim());
    size_t j = 0;
    for (size_t a = 0; a < in.ndim(); ++a)
      if (a != x1 && a != x2) src[a] = o[j++];
    src[x1] = o.back() - std::min<int64_t>(k, 0);
    src[x2] = o.back() + std::max<int64_t>(k, 0);
    return Flat(src, in);
  });
}

// The leading out-shaped box of in[0].
RefFn LeadingBox(Shape in, Shape out) {
  return Gather(Fixed(out),
                [in](const Index& o, const std::vector<RefTensor>&) { return Flat(o, in); });
}

// in[0] (shape `in`) broadcast to `out`.
RefFn Broadcast(Shape in, Shape out) {
  return Gather(Fixed(out), [in](const Index& o, const std::vector<RefTensor>&) {
    Index src = o;
    for (size_t k = 0; k < src.size(); ++k)
      if (in[k] == 1) src[k] = 0;
    return Flat(src, in);
  });
}

// Crop of the (H, W) axes to (h, w) at (y, x).
RefFn CropRef(Shape in, int64_t h, int64_t w, int64_t y, int64_t x) {
  return Gather(Fixed(Shape{in[0], in[1], h, w}),
                [in, y, x](const Index& o, const std::vector<RefTensor>&) {
                  return Flat({o[0], o[1], o[2] + y, o[3] + x}, in);
                });
}

// Positions of a slice along each axis: begin + i * step for i < count.
struct Span {
  int64_t begin, step, count;
};

// lhs with its slice replaced by rhs (rhs_scalar unset) or by a value.
RefFn SliceAssignRef(std::vector<Span> spans, std::optional<double> value) {
  return [spans, value](const std::vector<RefTensor>& in) {
    RefTensor out = in[0];
    Index box;
    for (const Span& sp : spans) box.push_back(sp.count);
    const Shape box_shape(box);
    for (int64_t i = 0; i < box_shape.Size(); ++i) {
      Index b = Unravel(i, box_shape);
      Index dst;
      for (size_t k = 0; k < spans.size(); ++k)
        dst.push_back(spans[k].begin + b[k] * spans[k].step);
      out[Flat(dst, in[0].shape)] = value ? *value : in[1][i];
    }
    return std::vector<RefTensor>{out};
  };
}

// The column matrix of sliding blocks, any number of spatial axes (kernel k, stride s,
// dilate d, pad p per axis).
struct Window {
  Index k, s, d, p;
};

Index GridOf(const Shape& image, const Window& w) {
  Index g;
  for (size_t i = 0; i < w.k.size(); ++i)
    g.push_back((image[i + 2] + 2 * w.p[i] - 1 - (w.k[i] - 1) * w.d[i]) / w.s[i] + 1);
  return g;
}

// For column matrix element (c * K + tap, pos): the image position, or -1 in the padding.
int64_t ImagePos(const Shape& image, const Window& w, int64_t c, int64_t tap, int64_t pos) {
  const Index taps = Unravel(tap, Shape(w.k));
  const Index at = Unravel(pos, Shape(GridOf(image, w)));
  Index src{0, c};
  for (size_t i = 0; i < w.k.size(); ++i) {
    const int64_t v = at[i] * w.s[i] - w.p[i] + taps[i] * w.d[i];
    if (v < 0 || v >= image[i + 2]) return -1;
    src.push_back(v);
  }
  return Flat(src, image);
}

RefFn Im2colRef(Shape image, Window w) {
  return [image, w](const std::vector<RefTensor>& in) {
    const int64_t taps = Shape(w.k).Size(), blocks = Shape(GridOf(image, w)).Size();
    const int64_t plane = image.Size() / image[0];
    RefTensor out(Shape{image[0], image[1] * taps, blocks});
    for (int64_t n = 0; n < image[0]; ++n)
      for (int64_t r = 0; r < image[1] * taps; ++r)
        for (int64_t l = 0; l < blocks; ++l) {
          const int64_t at = ImagePos(image, w, r / taps, r % taps, l);
          out[(n * image[1] * taps + r) * blocks + l] = at < 0 ? 0 : in[0][n * plane + at];
        }
    return std::vector<RefTensor>{out};
  };
}

RefFn Col2imRef(Shape image, Window w) {
  return [image, w](const std::vector<RefTensor>& in) {
    const int64_t taps = Shape(w.k).Size(), blocks = Shape(GridOf(image, w)).Size();
    const int64_t plane = image.Size() / image[0];
    RefTensor out(image);
    for (int64_t n = 0; n < image[0]; ++n)
      for (int64_t r = 0; r < image[1] * taps; ++r)
        for (int64_t l = 0; l < blocks; ++l) {
          const int64_t at = ImagePos(image, w, r / taps, r % taps, l);
          if (at >= 0) out[n * plane + at] += in[0][(n * image[1] * taps + r) * blocks + l];
        }
    return std::vector<RefTensor>{out};
  };
}

}  // namespace

HN_CONFORMANCE_CASES(Layout) {
  cases->push_back(Case("tile", {{"reps", "(2, 3)"}}, {{2, 3}}, TileRef({2, 3}, {2, 3})));
  cases->push_back(
      Case("tile", {{"reps", "(2, 1, 2)"}}, {{3, 4}}, TileRef({3, 4}, {2, 1, 2}), "longer_reps"));
  cases->push_back(
      Case("tile", {{"reps", "(2,)"}}, {{2, 3, 2}}, TileRef({2, 3, 2}, {2}), "shorter_reps"));
  cases->push_back(
      Typed(Case("tile", {{"reps", "(3, 1)"}}, {{2, 2}}, TileRef({2, 2}, {3, 1}), "int32"),
            DType::kInt32));
  cases->push_back(Case("tile", {{"reps", "()"}}, {{2, 2}}, TileRef({2, 2}, {}), "empty_reps"));

  cases->push_back(
      Case("repeat", {{"repeats", "2"}}, {{2, 3}}, RepeatRef({2, 3}, 2, -100), "flat"));
  cases->push_back(Case("repeat", {{"repeats", "3"}, {"axis", "1"}}, {{2, 3, 2}},
                        RepeatRef({2, 3, 2}, 3, 1), "axis1"));
  cases->push_back(Case("repeat", {{"repeats", "2"}, {"axis", "-1"}}, {{2, 3}},
                        RepeatRef({2, 3}, 2, -1), "neg_axis"));
  cases->push_back(Typed(
      Case("repeat", {{"repeats", "2"}, {"axis", "0"}}, {{3, 2}}, RepeatRef({3, 2}, 2, 0), "int64"),
      DType::kInt64));

  cases->push_back(Case("stack", {{"num_args", "3"}}, {{2, 3}, {2, 3}, {2, 3}}, StackRef(0)));
  cases->push_back(Case("stack", {{"num_args", "2"}, {"axis", "-1"}}, {{2, 3}, {2, 3}}, StackRef(2),
                        "last_axis"));
  cases->push_back(Case("stack", {{"num_args", "2"}, {"axis", "1"}}, {{4, 2, 3}, {4, 2, 3}},
                        StackRef(1), "middle"));
  cases->push_back(
      Typed(Case("stack", {{"num_args", "2"}, {"axis", "1"}}, {{3}, {3}}, StackRef(1), "uint8"),
            DType::kUint8));

  cases->push_back(Case("squeeze", {}, {{1, 3, 1, 2}}, SameData({3, 2})));
  cases->push_back(
      Case("squeeze", {{"axis", "(0,)"}}, {{1, 3, 1, 2}}, SameData({3, 1, 2}), "axis"));
  cases->push_back(
      Case("squeeze", {{"axis", "(-2, 0)"}}, {{1, 3, 1, 2}}, SameData({3, 2}), "neg_axes"));
  cases->push_back(Case("squeeze", {}, {{1, 1}}, SameData({1}), "all_ones"));
  cases->push_back(Typed(Case("squeeze", {}, {{2, 1}}, SameData({2}), "int32"), DType::kInt32));

  cases->push_back(
      Case("SwapAxis", {{"dim1", "0"}, {"dim2", "2"}}, {{2, 3, 4}}, SwapRef({2, 3, 4}, 0, 2)));
  cases->push_back(Case("swapaxes", {{"dim1", "-1"}, {"dim2", "1"}}, {{2, 3, 4, 2}},
                        SwapRef({2, 3, 4, 2}, 3, 1), "alias_neg"));
  cases->push_back(Case("SwapAxis", {}, {{3, 2}}, SwapRef({3, 2}, 0, 0), "default_same"));
  cases->push_back(Typed(
      Case("SwapAxis", {{"dim1", "1"}, {"dim2", "0"}}, {{3, 2}}, SwapRef({3, 2}, 1, 0), "int8"),
      DType::kInt8));

  cases->push_back(Case("reverse", {{"axis", "(0,)"}}, {{3, 4}}, ReverseRef({3, 4}, {0})));
  cases->push_back(Case("reverse", {{"axis", "(0, 2)"}}, {{2, 3, 4}}, ReverseRef({2, 3, 4}, {0, 2}),
                        "two_axes"));
  cases->push_back(
      Case("flip", {{"axis", "(1,)"}}, {{2, 5, 3}}, ReverseRef({2, 5, 3}, {1}), "alias"));
  cases->push_back(
      Case("reverse", {{"axis", "(1, 1)"}}, {{2, 3}}, ReverseRef({2, 3}, {}), "twice"));
  cases->push_back(
      Typed(Case("reverse", {{"axis", "(1,)"}}, {{2, 3}}, ReverseRef({2, 3}, {1}), "float64"),
            DType::kFloat64));

  cases->push_back(Case("depth_to_space", {{"block_size", "2"}}, {{1, 8, 2, 3}},
                        DepthToSpaceRef({1, 8, 2, 3}, 2)));
  cases->push_back(Case("depth_to_space", {{"block_size", "3"}}, {{2, 9, 1, 2}},
                        DepthToSpaceRef({2, 9, 1, 2}, 3), "block3"));
  cases->push_back(Case("space_to_depth", {{"block_size", "2"}}, {{2, 3, 4, 6}},
                        SpaceToDepthRef({2, 3, 4, 6}, 2)));
  cases->push_back(Typed(Case("space_to_depth", {{"block_size", "2"}}, {{1, 2, 2, 2}},
                              SpaceToDepthRef({1, 2, 2, 2}, 2), "int32"),
                         DType::kInt32));

  cases->push_back(Case("_split_v2", {{"indices", "(0, 2)"}}, {{2, 5, 2}},
                        SplitRef({2, 5, 2}, 1, {0, 2, 5}, false)));
  cases->push_back(Case("_split_v2", {{"indices", "(0,)"}, {"sections", "3"}, {"axis", "0"}},
                        {{7, 2}}, SplitRef({7, 2}, 0, {0, 3, 5, 7}, false), "sections"));
  cases->push_back(Case("_split_v2", {{"indices", "(0, 1, 3)"}, {"axis", "-1"}}, {{2, 4}},
                        SplitRef({2, 4}, 1, {0, 1, 3, 4}, false), "neg_axis"));
  cases->push_back(Case("_split_v2",
                        {{"indices", "(0,)"}, {"sections", "2"}, {"squeeze_axis", "True"}},
                        {{3, 2, 4}}, SplitRef({3, 2, 4}, 1, {0, 1, 2}, true), "squeeze"));

  cases->push_back(Case("diag", {}, {{4}}, DiagOfVector(4, 0), "vector"));
  cases->push_back(Case("diag", {{"k", "2"}}, {{3}}, DiagOfVector(3, 2), "vector_k2"));
  cases->push_back(Case("diag", {{"k", "-1"}}, {{3}}, DiagOfVector(3, -1), "vector_kneg"));
  cases->push_back(Case("diag", {}, {{3, 4}}, DiagOfPlanes({3, 4}, 0, 1, 0), "matrix"));
  cases->push_back(
      Case("diag", {{"k", "1"}}, {{3, 4}}, DiagOfPlanes({3, 4}, 0, 1, 1), "matrix_k1"));
  cases->push_back(
      Case("diag", {{"k", "-2"}}, {{4, 3}}, DiagOfPlanes({4, 3}, 0, 1, -2), "matrix_kneg"));
  cases->push_back(Case("diag", {{"axis1", "1"}, {"axis2", "2"}}, {{2, 3, 4}},
                        DiagOfPlanes({2, 3, 4}, 1, 2, 0), "planes"));
  cases->push_back(Case("diag", {{"axis1", "-1"}, {"axis2", "0"}, {"k", "1"}}, {{3, 2, 4}},
                        DiagOfPlanes({3, 2, 4}, 2, 0, 1), "planes_swapped"));
  cases->push_back(Typed(Case("diag", {}, {{3}}, DiagOfVector(3, 0), "int32"), DType::kInt32));
}

HN_CONFORMANCE_CASES(LikeOps) {
  cases->push_back(Case("slice_like", {}, {{4, 5}, {2, 3}}, LeadingBox({4, 5}, {2, 3})));
  cases->push_back(Case("slice_like", {{"axes", "(1,)"}}, {{3, 5, 2}, {1, 2, 7}},
                        LeadingBox({3, 5, 2}, {3, 2, 2}), "axes"));
  cases->push_back(Case("slice_like", {{"axes", "(-1, 0)"}}, {{3, 5, 4}, {2, 9, 1}},
                        LeadingBox({3, 5, 4}, {2, 5, 1}), "neg_axes"));
  OpCase like_int = Case("slice_like", {}, {{3, 3}, {2, 2}}, LeadingBox({3, 3}, {2, 2}), "int");
  like_int.dtypes = {DType::kInt32, DType::kFloat32};
  like_int.gen = Integers(-9, 9);
  cases->push_back(like_int);

  cases->push_back(Case("broadcast_axis", {{"axis", "(1,)"}, {"size", "(3,)"}}, {{2, 1}},
                        Broadcast({2, 1}, {2, 3})));
  cases->push_back(Case("broadcast_axes", {{"axis", "(0, 2)"}, {"size", "(2, 4)"}}, {{1, 3, 1}},
                        Broadcast({1, 3, 1}, {2, 3, 4}), "alias_two"));
  cases->push_back(Typed(Case("broadcast_axis", {{"axis", "(0,)"}, {"size", "(3,)"}}, {{1, 2}},
                              Broadcast({1, 2}, {3, 2}), "int64"),
                         DType::kInt64));

  cases->push_back(
      Case("broadcast_like", {}, {{2, 1, 3}, {2, 4, 3}}, Broadcast({2, 1, 3}, {2, 4, 3})));
  cases->push_back(Case("broadcast_like", {{"lhs_axes", "(0, 2)"}, {"rhs_axes", "(1, 0)"}},
                        {{1, 2, 1}, {5, 3}}, Broadcast({1, 2, 1}, {3, 2, 5}), "axes"));
  cases->push_back(Case("broadcast_like", {{"lhs_axes", "(-1,)"}, {"rhs_axes", "(-1,)"}},
                        {{2, 1}, {4, 3}}, Broadcast({2, 1}, {2, 3}), "neg_axes"));

  cases->push_back(Case("reshape_like", {}, {{2, 6}, {3, 4}}, SameData({3, 4})));
  cases->push_back(Case(
      "reshape_like", {{"lhs_begin", "1"}, {"lhs_end", "2"}, {"rhs_begin", "0"}, {"rhs_end", "2"}},
      {{2, 6, 5}, {2, 3, 7}}, SameData({2, 2, 3, 5}), "ranges"));
  cases->push_back(Case("reshape_like", {{"lhs_begin", "-2"}, {"rhs_begin", "1"}},
                        {{4, 2, 3}, {9, 6}}, SameData({4, 6}), "negative"));
  OpCase reshape_int = Case("reshape_like", {}, {{4}, {2, 2}}, SameData({2, 2}), "int_lhs");
  reshape_int.dtypes = {DType::kInt64, DType::kFloat32};
  reshape_int.gen = Integers(-9, 9);
  cases->push_back(reshape_int);
}

HN_CONFORMANCE_CASES(CropAssign) {
  cases->push_back(Case("Crop", {{"num_args", "1"}, {"h_w", "(2, 3)"}, {"offset", "(1, 0)"}},
                        {{2, 3, 4, 5}}, CropRef({2, 3, 4, 5}, 2, 3, 1, 0)));
  cases->push_back(Case("Crop", {{"num_args", "1"}, {"h_w", "(2, 2)"}, {"center_crop", "True"}},
                        {{1, 2, 5, 4}}, CropRef({1, 2, 5, 4}, 2, 2, 1, 1), "center"));
  cases->push_back(Case("Crop", {{"num_args", "2"}, {"offset", "(1, 2)"}},
                        {{2, 2, 4, 4}, {1, 1, 3, 2}}, CropRef({2, 2, 4, 4}, 3, 2, 1, 2), "like"));
  cases->push_back(Case("Crop", {{"num_args", "2"}, {"center_crop", "1"}},
                        {{1, 3, 6, 5}, {1, 3, 3, 2}}, CropRef({1, 3, 6, 5}, 3, 2, 1, 1),
                        "like_center"));

  cases->push_back(Case("_slice_assign",
                        {{"begin", "(1, 0)"}, {"end", "(3, None)"}, {"step", "(1, 2)"}},
                        {{4, 5}, {2, 3}}, SliceAssignRef({{1, 1, 2}, {0, 2, 3}}, std::nullopt)));
  cases->push_back(Case(
      "_crop_assign", {{"begin", "(None,)"}, {"end", "(None,)"}, {"step", "(-1,)"}},
      {{3, 2}, {3, 2}}, SliceAssignRef({{2, -1, 3}, {0, 1, 2}}, std::nullopt), "alias_reversed"));
  cases->push_back(
      Typed(Case("_slice_assign", {{"begin", "(0, -2)"}, {"end", "(2, None)"}}, {{3, 4}, {2, 2}},
                 SliceAssignRef({{0, 1, 2}, {2, 1, 2}}, std::nullopt), "int32"),
            DType::kInt32));
  cases->push_back(Case("_slice_assign_scalar",
                        {{"begin", "(0, 1)"}, {"end", "(2, 3)"}, {"scalar", "7.5"}}, {{3, 4}},
                        SliceAssignRef({{0, 1, 2}, {1, 1, 2}}, 7.5)));
  cases->push_back(Case("_crop_assign_scalar", {{"begin", "(1,)"}, {"end", "(None,)"}}, {{3, 2}},
                        SliceAssignRef({{1, 1, 2}, {0, 1, 2}}, 0.0), "alias_default"));
  cases->push_back(Typed(Case("_slice_assign_scalar",
                              {{"begin", "(None, None)"},
                               {"end", "(None, None)"},
                               {"step", "(2, -1)"},
                               {"scalar", "3"}},
                              {{3, 2}}, SliceAssignRef({{0, 2, 2}, {1, -1, 2}}, 3.0), "int64"),
                         DType::kInt64));

  const Window w3{{3, 3}, {1, 1}, {1, 1}, {1, 1}};
  cases->push_back(Case("im2col", {{"kernel", "(3, 3)"}, {"pad", "(1, 1)"}}, {{2, 3, 5, 5}},
                        Im2colRef({2, 3, 5, 5}, w3)));
  const Window dilated{{3, 2}, {2, 1}, {2, 1}, {0, 1}};
  cases->push_back(
      Case("im2col",
           {{"kernel", "(3, 2)"}, {"stride", "(2, 1)"}, {"dilate", "(2, 1)"}, {"pad", "(0, 1)"}},
           {{1, 2, 7, 4}}, Im2colRef({1, 2, 7, 4}, dilated), "strided_dilated"));
  const Window w1{{3}, {2}, {1}, {1}};
  cases->push_back(
      NotInMXNet(Case("im2col", {{"kernel", "(3,)"}, {"stride", "(2,)"}, {"pad", "(1,)"}},
                      {{2, 2, 7}}, Im2colRef({2, 2, 7}, w1), "1d"),
                 "MXNet 1.9.1's im2col kernel views its input as 4-D and fails for "
                 "1-D windows"));
  cases->push_back(Case("col2im",
                        {{"output_size", "(5, 5)"}, {"kernel", "(3, 3)"}, {"pad", "(1, 1)"}},
                        {{2, 27, 25}}, Col2imRef({2, 3, 5, 5}, w3)));
  cases->push_back(Case("col2im",
                        {{"output_size", "(7, 4)"},
                         {"kernel", "(3, 2)"},
                         {"stride", "(2, 1)"},
                         {"dilate", "(2, 1)"},
                         {"pad", "(0, 1)"}},
                        {{1, 12, 10}}, Col2imRef({1, 2, 7, 4}, dilated), "strided_dilated"));
}

HN_ERROR_CASES(Layout) {
  cases->push_back(Rejected("tile", {{"reps", "(2, 0)"}}, {{2, 2}}, StatusCode::kInvalidArgument,
                            {"tile(node)", "reps", "empty"}));
  cases->push_back(Rejected("repeat", {{"repeats", "0"}}, {{2, 2}}, StatusCode::kInvalidArgument,
                            {"repeat(node)", "repeats"}));
  cases->push_back(Rejected("repeat", {{"repeats", "2"}, {"axis", "2"}}, {{2, 2}},
                            StatusCode::kShapeError, {"repeat(node)", "axis=2"}));
  cases->push_back(Rejected("stack", {{"num_args", "2"}}, {{2, 3}, {3, 2}}, StatusCode::kShapeError,
                            {"stack(node)", "input 1"}));
  cases->push_back(Rejected("squeeze", {{"axis", "(1,)"}}, {{1, 3}}, StatusCode::kShapeError,
                            {"squeeze(node)", "size 3"}));
  cases->push_back(Rejected("SwapAxis", {{"dim1", "0"}, {"dim2", "3"}}, {{2, 3}},
                            StatusCode::kShapeError, {"SwapAxis(node)", "dim2=3"}));
  cases->push_back(Rejected("reverse", {{"axis", "(-1,)"}}, {{2, 3}}, StatusCode::kShapeError,
                            {"reverse(node)", "negative"}));
  cases->push_back(Rejected("reverse", {{"axis", "(2,)"}}, {{2, 3}}, StatusCode::kShapeError,
                            {"reverse(node)", "axis=2"}));
  cases->push_back(Rejected("depth_to_space", {{"block_size", "2"}}, {{1, 6, 2, 2}},
                            StatusCode::kShapeError, {"depth_to_space(node)", "block_size^2"}));
  cases->push_back(Rejected("space_to_depth", {{"block_size", "2"}}, {{1, 1, 3, 2}},
                            StatusCode::kShapeError, {"space_to_depth(node)", "multiples"}));
  cases->push_back(Rejected("depth_to_space", {{"block_size", "2"}}, {{4, 4}},
                            StatusCode::kShapeError, {"depth_to_space(node)", "4-D"}));
  cases->push_back(Rejected("_split_v2", {{"indices", "(0, 3)"}}, {{2, 3}}, StatusCode::kShapeError,
                            {"_split_v2(node)", "part 1"}));
  cases->push_back(Rejected("_split_v2", {{"indices", "(0, 1)"}, {"squeeze_axis", "1"}}, {{2, 3}},
                            StatusCode::kShapeError, {"_split_v2(node)", "length 1"}));
  cases->push_back(Rejected("_split_v2", {{"indices", "(1, 3)"}, {"axis", "0"}}, {{4, 3}},
                            StatusCode::kShapeError, {"_split_v2(node)", "start at 0"}));
  cases->push_back(Rejected("broadcast_axis", {{"axis", "(-1,)"}, {"size", "(2,)"}}, {{3, 1}},
                            StatusCode::kShapeError, {"broadcast_axis(node)", "negative"}));
  cases->push_back(
      Rejected("diag", {{"k", "4"}}, {{3, 4}}, StatusCode::kShapeError, {"diag(node)", "k=4"}));
  cases->push_back(Rejected("diag", {{"axis1", "1"}, {"axis2", "-1"}}, {{3, 4}},
                            StatusCode::kShapeError, {"diag(node)", "axis1 and axis2"}));
  cases->push_back(Rejected("slice_like", {}, {{2, 3}, {3, 3}}, StatusCode::kShapeError,
                            {"slice_like(node)", "longer"}));
  cases->push_back(Rejected("slice_like", {}, {{2, 3}, {2}}, StatusCode::kShapeError,
                            {"slice_like(node)", "rank"}));
  cases->push_back(Rejected("broadcast_axis", {{"axis", "(0,)"}, {"size", "(3,)"}}, {{2, 1}},
                            StatusCode::kShapeError, {"broadcast_axis(node)", "size-1"}));
  cases->push_back(Rejected("broadcast_axis", {{"axis", "(0, 1)"}, {"size", "(3,)"}}, {{1, 1}},
                            StatusCode::kInvalidArgument, {"broadcast_axis(node)", "length"}));
  cases->push_back(Rejected("broadcast_like", {}, {{2, 3}, {2, 4}}, StatusCode::kShapeError,
                            {"broadcast_like(node)", "axis 1"}));
  cases->push_back(Rejected("Crop", {{"num_args", "1"}, {"h_w", "(5, 2)"}}, {{1, 1, 4, 4}},
                            StatusCode::kShapeError, {"Crop(node)", "h_w=(5, 2)"}));
  cases->push_back(Rejected("Crop", {{"num_args", "1"}, {"h_w", "(2, 2)"}, {"offset", "(3, 0)"}},
                            {{1, 1, 4, 4}}, StatusCode::kShapeError, {"Crop(node)", "offset"}));
  cases->push_back(Rejected("Crop", {{"num_args", "3"}}, {{1, 1, 4, 4}, {1, 1, 2, 2}, {1}},
                            StatusCode::kInvalidArgument, {"Crop(node)", "num_args=3"}));
  cases->push_back(Rejected("Crop", {{"num_args", "2"}}, {{1, 1, 4, 4}, {1, 1, 5, 2}},
                            StatusCode::kShapeError, {"Crop(node)", "larger"}));
  cases->push_back(Rejected("_slice_assign", {{"begin", "(0,)"}, {"end", "(2,)"}}, {{3, 2}, {3, 2}},
                            StatusCode::kShapeError, {"_slice_assign(node)", "input 1"}));
  cases->push_back(Rejected("_slice_assign_scalar", {{"begin", "(2,)"}, {"end", "(1,)"}}, {{3, 2}},
                            StatusCode::kShapeError, {"_slice_assign_scalar(node)", "empty"}));
  cases->push_back(Rejected("im2col", {{"kernel", "(3, 3)"}}, {{1, 1, 2, 5}},
                            StatusCode::kShapeError, {"im2col(node)", "larger"}));
  cases->push_back(Rejected("im2col", {{"kernel", "(3, 3)"}, {"stride", "(1,)"}}, {{1, 1, 5, 5}},
                            StatusCode::kInvalidArgument, {"im2col(node)", "stride"}));
  cases->push_back(Rejected("im2col", {{"kernel", "(3, 3)"}}, {{1, 5, 5}}, StatusCode::kShapeError,
                            {"im2col(node)", "spatial"}));
  cases->push_back(Rejected("col2im", {{"output_size", "(5, 5)"}, {"kernel", "(3, 3)"}},
                            {{1, 9, 25}}, StatusCode::kShapeError,
                            {"col2im(node)", "(N, C * 9, 9)"}));
  cases->push_back(Rejected("im2col", {{"kernel", "(3, 3)"}}, {{1, 1, 5, 5}},
                            StatusCode::kTypeError, {"im2col(node)", "float64"},
                            {DType::kFloat64}));
  cases->push_back(Rejected("reshape_like", {}, {{2, 3}, {2, 2}}, StatusCode::kShapeError,
                            {"reshape_like(node)", "sizes differ"}));
  cases->push_back(Rejected("reshape_like", {{"lhs_begin", "1"}, {"lhs_end", "1"}},
                            {{2, 3}, {2, 3}}, StatusCode::kShapeError,
                            {"reshape_like(node)", "lhs_begin=1"}));
}

}  // namespace conformance
}  // namespace hybridnet
