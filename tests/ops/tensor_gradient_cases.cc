// Conformance cases for the internal ops the gradients of the tensor, indexing and linear-algebra
// ops are built from (never in a model file): _hn_index_like and _hn_scatter_add_like (the
// gradient of every op that copies elements), _backward_Embedding, _backward_Concat and
// _backward_dot. The gradients themselves are checked by the harness's OpGradient tests on the
// forward ops' cases.
#include <algorithm>
#include <cmath>
#include <vector>

#include "conformance.h"
#include "reference_helpers.h"

namespace hybridnet {
namespace conformance {
namespace {

std::vector<RefTensor> IndexLikeRef(const std::vector<RefTensor>& in) {
  RefTensor out(in[0].shape);
  for (int64_t i = 0; i < out.size(); ++i) out[i] = static_cast<double>(i + 1);
  return {out};
}

// (grad, source, like): grad[i] added at element source[i] - 1 of like's shape (0: nowhere).
std::vector<RefTensor> ScatterAddLikeRef(const std::vector<RefTensor>& in) {
  RefTensor out(in[2].shape);
  for (int64_t i = 0; i < in[0].size(); ++i) {
    const int64_t j = static_cast<int64_t>(in[1][i]);
    if (j > 0) out[j - 1] += in[0][i];
  }
  return {out};
}

// (out_grad (..., D), data) -> d weight (rows, D): rows clipped as Embedding reads them.
RefFn EmbeddingBackwardRef(int64_t rows) {
  return [rows](const std::vector<RefTensor>& in) {
    const int64_t cols = in[0].shape[in[0].shape.ndim() - 1];
    RefTensor dw(Shape{rows, cols});
    for (int64_t i = 0; i < in[1].size(); ++i) {
      const double t = std::trunc(in[1][i]);
      const int64_t row = t <= 0 ? 0 : std::min(static_cast<int64_t>(t), rows - 1);
      for (int64_t c = 0; c < cols; ++c) dw[row * cols + c] += in[0][i * cols + c];
    }
    return std::vector<RefTensor>{dw};
  };
}

// (out_grad, x_0, ..., x_n-1) -> the parts of out_grad along `axis`, shaped as the x_i.
RefFn ConcatBackwardRef(size_t axis) {
  return [axis](const std::vector<RefTensor>& in) {
    std::vector<RefTensor> parts;
    int64_t offset = 0;
    for (size_t p = 1; p < in.size(); ++p) {
      RefTensor part(in[p].shape);
      for (int64_t i = 0; i < part.size(); ++i) {
        std::vector<int64_t> idx = Unravel(i, part.shape);
        idx[axis] += offset;
        part[i] = At(in[0], idx);
      }
      offset += in[p].shape[axis];
      parts.push_back(part);
    }
    return parts;
  };
}

// dot's operands as matrices (dot.cc): op(A) is m x k, op(B) k x n; element (r, c) of op(X) is
// stored at Stored(r, c).
struct DotMatrix {
  int64_t rows, cols;  // as stored
  bool transposed;
  int64_t Stored(int64_t r, int64_t c) const { return transposed ? c * cols + r : r * cols + c; }
};

DotMatrix MatrixOf(const Shape& s, bool leading_free, bool transposed) {
  int64_t lead = 1;
  for (size_t i = 0; i + 1 < s.ndim(); ++i) lead *= s[i];
  int64_t rest = 1;
  for (size_t i = 1; i < s.ndim(); ++i) rest *= s[i];
  return leading_free ? DotMatrix{lead, s[s.ndim() - 1], transposed}
                      : DotMatrix{s[0], rest, transposed};
}

// (out_grad, lhs, rhs) -> d lhs = dC op(B)^T, d rhs = op(A)^T dC, in the stored layouts.
RefFn DotBackwardRef(bool ta, bool tb) {
  return [ta, tb](const std::vector<RefTensor>& in) {
    const RefTensor &dc = in[0], &a = in[1], &b = in[2];
    RefTensor da(a.shape), db(b.shape);
    if (a.shape.ndim() == 1 && b.shape.ndim() == 1) {
      for (int64_t i = 0; i < a.size(); ++i) {
        da[i] = dc[0] * b[i];
        db[i] = dc[0] * a[i];
      }
      return std::vector<RefTensor>{da, db};
    }
    const DotMatrix ma = MatrixOf(a.shape, !ta, ta), mb = MatrixOf(b.shape, tb, tb);
    const int64_t m = ta ? ma.cols : ma.rows, k = ta ? ma.rows : ma.cols;
    const int64_t n = tb ? mb.rows : mb.cols;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t p = 0; p < k; ++p) {
        double acc = 0;
        for (int64_t j = 0; j < n; ++j) acc += dc[i * n + j] * b[mb.Stored(p, j)];
        da[ma.Stored(i, p)] = acc;
      }
    }
    for (int64_t p = 0; p < k; ++p) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t i = 0; i < m; ++i) acc += a[ma.Stored(i, p)] * dc[i * n + j];
        db[mb.Stored(p, j)] = acc;
      }
    }
    return std::vector<RefTensor>{da, db};
  };
}

}  // namespace

HN_CONFORMANCE_CASES(TensorGradientOps) {
  const DType f32 = DType::kFloat32, f64 = DType::kFloat64;
  cases->push_back(InternalCase(Case("_hn_index_like", {}, {{2, 3}}, IndexLikeRef)));
  cases->push_back(InternalCase(
      WithDTypes(Case("_hn_index_like", {}, {{4}}, IndexLikeRef, "int32"), {DType::kInt32})));

  // Element numbers 0..4 of a (2, 2) array: 0 adds nowhere, repeats add up.
  const InputGen sources = [](std::mt19937& rng, size_t input, int64_t) {
    if (input == 1) return static_cast<double>(std::uniform_int_distribution<int>(0, 4)(rng));
    return std::uniform_real_distribution<double>(-2, 2)(rng);
  };
  cases->push_back(InternalCase(WithGen(
      WithDTypes(Case("_hn_scatter_add_like", {}, {{3, 3}, {3, 3}, {2, 2}}, ScatterAddLikeRef),
                 {f32, f64, f32}),
      sources)));
  cases->push_back(InternalCase(WithGen(
      WithDTypes(Case("_hn_scatter_add_like", {}, {{7}, {7}, {4}}, ScatterAddLikeRef, "float64"),
                 {f64, f64, DType::kInt64}),
      sources)));

  // Indices -2 .. 7 of 5 rows: clipped at both ends, repeated rows add up.
  const InputGen rows = [](std::mt19937& rng, size_t input, int64_t) {
    if (input == 1) return std::uniform_real_distribution<double>(-2, 7)(rng);
    return std::uniform_real_distribution<double>(-2, 2)(rng);
  };
  cases->push_back(
      InternalCase(WithGen(Case("_backward_Embedding", {{"input_dim", "5"}, {"output_dim", "3"}},
                                {{2, 4, 3}, {2, 4}}, EmbeddingBackwardRef(5)),
                           rows)));
  cases->push_back(InternalCase(
      WithGen(WithDTypes(Case("_backward_Embedding",
                              {{"input_dim", "4"}, {"output_dim", "2"}, {"dtype", "float64"}},
                              {{6, 2}, {6}}, EmbeddingBackwardRef(4), "float64"),
                         {f64, DType::kInt32}),
              [](std::mt19937& rng, size_t input, int64_t) {
                if (input == 1)
                  return static_cast<double>(std::uniform_int_distribution<int>(-1, 5)(rng));
                return std::uniform_real_distribution<double>(-2, 2)(rng);
              })));

  cases->push_back(
      InternalCase(Case("_backward_Concat", {{"num_args", "3"}, {"dim", "1"}},
                        {{2, 10, 3}, {2, 5, 3}, {2, 2, 3}, {2, 3, 3}}, ConcatBackwardRef(1))));
  cases->push_back(InternalCase(Case("_backward_Concat", {{"num_args", "2"}, {"dim", "-1"}},
                                     {{3, 5}, {3, 1}, {3, 4}}, ConcatBackwardRef(1), "last_axis")));
  cases->push_back(
      InternalCase(WithDTypes(Case("_backward_Concat", {{"num_args", "1"}, {"dim", "0"}},
                                   {{4, 2}, {4, 2}}, ConcatBackwardRef(0), "one_input"),
                              {f64, f64})));

  cases->push_back(InternalCase(
      Case("_backward_dot", {}, {{3, 5}, {3, 4}, {4, 5}}, DotBackwardRef(false, false))));
  cases->push_back(InternalCase(Case("_backward_dot", {{"transpose_a", "True"}},
                                     {{3, 5}, {4, 3}, {4, 5}}, DotBackwardRef(true, false), "ta")));
  cases->push_back(InternalCase(Case("_backward_dot", {{"transpose_b", "True"}},
                                     {{3, 5}, {3, 4}, {5, 4}}, DotBackwardRef(false, true), "tb")));
  cases->push_back(
      InternalCase(Case("_backward_dot", {{"transpose_a", "True"}, {"transpose_b", "True"}},
                        {{3, 5}, {4, 3}, {5, 4}}, DotBackwardRef(true, true), "ta_tb")));
  cases->push_back(InternalCase(
      Case("_backward_dot", {}, {{1}, {6}, {6}}, DotBackwardRef(false, false), "vectors")));
  cases->push_back(InternalCase(Case("_backward_dot", {}, {{2, 3, 5, 2}, {2, 3, 4}, {4, 5, 2}},
                                     DotBackwardRef(false, false), "nd")));
  cases->push_back(
      InternalCase(Case("_backward_dot", {{"transpose_a", "True"}, {"transpose_b", "True"}},
                        {{3, 2, 5}, {4, 3, 2}, {5, 4}}, DotBackwardRef(true, true), "nd_ta_tb")));
}

HN_ERROR_CASES(TensorGradientOps) {
  cases->push_back(Rejected("_hn_scatter_add_like", {}, {{2, 3}, {3, 2}, {6}},
                            StatusCode::kShapeError, {"_hn_scatter_add_like(node)", "(2, 3)"},
                            {DType::kFloat32, DType::kFloat64, DType::kFloat32}));
  cases->push_back(
      Rejected("_backward_Embedding", {{"input_dim", "4"}, {"output_dim", "2"}, {"dtype", "int32"}},
               {{3, 2}, {3}}, StatusCode::kUnsupported, {"_backward_Embedding(node)", "int32"},
               {DType::kInt32, DType::kFloat32}));
  cases->push_back(Rejected("_backward_dot", {}, {{3, 5}, {3, 4}, {3, 5}}, StatusCode::kShapeError,
                            {"_backward_dot(node)", "(3, 4)", "(3, 5)"}));
}

}  // namespace conformance
}  // namespace hybridnet
