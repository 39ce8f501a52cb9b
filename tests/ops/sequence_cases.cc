// Conformance cases for the sequence and NLP ops: SequenceMask/Last/Reverse, batch_dot, the
// interleaved attention matmuls, div_sqrt_dim, softmax with lengths, softmax/log_softmax/softmin
// output dtypes, and Embedding for every weight dtype, each against a plain-loop reference in
// doubles (RNN's cases are in rnn_cases.cc).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "conformance.h"
#include "reference_helpers.h"

namespace hybridnet {
namespace conformance {
namespace {

// Input i drawn by gens[i].
InputGen PerInputGen(std::vector<InputGen> gens) {
  return [gens](std::mt19937& rng, size_t input, int64_t index) {
    return gens[input](rng, input, index);
  };
}

// ---- SequenceMask / SequenceLast / SequenceReverse ------------------------------------------

// Offset of element (t, b, 0) of a (T, B, row...) or (B, T, row...) array.
int64_t SeqAt(const Shape& s, int axis, int64_t t, int64_t b, int64_t row) {
  return axis == 0 ? (t * s[1] + b) * row : (b * s[1] + t) * row;
}

int64_t RowSize(const Shape& s) {
  int64_t r = 1;
  for (size_t i = 2; i < s.ndim(); ++i) r *= s[i];
  return r;
}

int64_t LengthOf(const std::vector<RefTensor>& in, int64_t b, int64_t time) {
  return in.size() > 1 ? static_cast<int64_t>(std::trunc(in[1][b])) : time;
}

RefFn MaskRef(int axis, double value) {
  return [=](const std::vector<RefTensor>& in) {
    const Shape& s = in[0].shape;
    RefTensor out = in[0];
    const int64_t time = s[static_cast<size_t>(axis)], batch = s[static_cast<size_t>(1 - axis)];
    const int64_t row = RowSize(s);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t t = LengthOf(in, b, time); t < time; ++t)
        for (int64_t j = 0; j < row; ++j) out[SeqAt(s, axis, t, b, row) + j] = F32(value);
    return std::vector<RefTensor>{out};
  };
}

RefFn LastRef(int axis) {
  return [=](const std::vector<RefTensor>& in) {
    const Shape& s = in[0].shape;
    const int64_t time = s[static_cast<size_t>(axis)], batch = s[static_cast<size_t>(1 - axis)];
    const int64_t row = RowSize(s);
    std::vector<int64_t> dims{batch};
    for (size_t i = 2; i < s.ndim(); ++i) dims.push_back(s[i]);
    RefTensor out{Shape(dims)};
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t t = LengthOf(in, b, time) - 1;
      for (int64_t j = 0; j < row; ++j) out[b * row + j] = in[0][SeqAt(s, axis, t, b, row) + j];
    }
    return std::vector<RefTensor>{out};
  };
}

RefFn ReverseRef() {
  return [](const std::vector<RefTensor>& in) {
    const Shape& s = in[0].shape;
    RefTensor out{s};
    const int64_t row = RowSize(s);
    for (int64_t b = 0; b < s[1]; ++b) {
      const int64_t n = LengthOf(in, b, s[0]);
      for (int64_t t = 0; t < s[0]; ++t) {
        const int64_t src = t < n ? n - 1 - t : t;
        for (int64_t j = 0; j < row; ++j)
          out[SeqAt(s, 0, t, b, row) + j] = in[0][SeqAt(s, 0, src, b, row) + j];
      }
    }
    return std::vector<RefTensor>{out};
  };
}

HN_CONFORMANCE_CASES(Sequence) {
  const InputGen len4 = PerInputGen({Uniform(-2, 2), Integers(0, 4)});
  const InputGen len4_pos = PerInputGen({Uniform(-2, 2), Integers(1, 4)});
  // Fractional float lengths truncate, as MXNet's static_cast<int>.
  const InputGen frac = PerInputGen({Uniform(-2, 2), Uniform(1, 4.99)});
  cases->push_back(Case("SequenceMask", {}, {{4, 3, 2}}, MaskRef(0, 0), "identity"));
  cases->push_back(
      WithGen(Case("SequenceMask", {{"use_sequence_length", "True"}, {"value", "-2.5"}},
                   {{4, 3, 2}, {3}}, MaskRef(0, -2.5), "axis0"),
              len4));
  cases->push_back(WithGen(Case("SequenceMask", {{"use_sequence_length", "True"}}, {{4, 5}, {5}},
                                MaskRef(0, 0), "frac_len"),
                           frac));
  cases->push_back(WithDTypes(
      WithGen(
          Case("SequenceMask", {{"use_sequence_length", "True"}, {"axis", "1"}, {"value", "1e4"}},
               {{3, 4, 2, 2}, {3}}, MaskRef(1, 1e4), "axis1_int32"),
          len4),
      {DType::kFloat32, DType::kInt32}));
  cases->push_back(WithDTypes(WithGen(Case("SequenceMask", {{"use_sequence_length", "True"}},
                                           {{4, 2, 3}, {2}}, MaskRef(0, 0), "float64"),
                                      len4),
                              {DType::kFloat64, DType::kInt64}));

  cases->push_back(NoMxnetGradient(Case("SequenceLast", {}, {{4, 3, 2}}, LastRef(0), "no_length"),
                                   "MXNet 1.9.1's SequenceLast backward aborts its process"));
  cases->push_back(WithGen(Case("SequenceLast", {{"use_sequence_length", "True"}}, {{4, 3, 2}, {3}},
                                LastRef(0), "axis0"),
                           len4_pos));
  cases->push_back(
      WithDTypes(WithGen(Case("SequenceLast", {{"use_sequence_length", "True"}, {"axis", "1"}},
                              {{3, 4, 5}, {3}}, LastRef(1), "axis1_int32"),
                         len4_pos),
                 {DType::kFloat32, DType::kInt32}));
  cases->push_back(
      NoMxnetGradient(Case("SequenceLast", {{"axis", "1"}}, {{2, 3}}, LastRef(1), "axis1_2d"),
                      "MXNet 1.9.1's SequenceLast backward aborts its process"));

  cases->push_back(Case("SequenceReverse", {}, {{4, 3, 2}}, ReverseRef(), "no_length"));
  cases->push_back(WithGen(Case("SequenceReverse", {{"use_sequence_length", "True"}},
                                {{4, 3, 2}, {3}}, ReverseRef(), "length"),
                           len4));
  cases->push_back(WithDTypes(WithGen(Case("SequenceReverse", {{"use_sequence_length", "True"}},
                                           {{5, 2}, {2}}, ReverseRef(), "int32_len"),
                                      PerInputGen({Uniform(-2, 2), Integers(0, 5)})),
                              {DType::kFloat64, DType::kInt32}));
}

HN_ERROR_CASES(Sequence) {
  cases->push_back(Rejected("SequenceMask", {{"axis", "2"}}, {{2, 3, 4}}, StatusCode::kUnsupported,
                            {"SequenceMask(node)", "axis=2"}));
  cases->push_back(Rejected("SequenceReverse", {{"axis", "1"}}, {{2, 3, 4}},
                            StatusCode::kUnsupported, {"SequenceReverse(node)", "axis=1"}));
  cases->push_back(Rejected("SequenceLast", {}, {{5}}, StatusCode::kShapeError,
                            {"SequenceLast(node)", "at least 2 dimensions"}));
  cases->push_back(Rejected("SequenceMask", {{"use_sequence_length", "True"}}, {{4, 3}, {4}},
                            StatusCode::kShapeError, {"SequenceMask(node)", "sequence_length"}));
}

// ---- batch_dot ------------------------------------------------------------------------------

RefFn BatchDotRef(bool ta, bool tb) {
  return [=](const std::vector<RefTensor>& in) {
    const Shape& a = in[0].shape;
    const Shape& b = in[1].shape;
    const size_t n = a.ndim();
    const int64_t m = ta ? a[n - 1] : a[n - 2], k = ta ? a[n - 2] : a[n - 1];
    const int64_t c = tb ? b[n - 2] : b[n - 1];
    std::vector<int64_t> dims(a.begin(), a.end() - 2);
    int64_t batch = 1;
    for (int64_t d : dims) batch *= d;
    dims.push_back(m);
    dims.push_back(c);
    RefTensor out{Shape(dims)};
    for (int64_t p = 0; p < batch; ++p)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < c; ++j) {
          double acc = 0;
          for (int64_t q = 0; q < k; ++q) {
            const double x = ta ? in[0][p * m * k + q * m + i] : in[0][p * m * k + i * k + q];
            const double y = tb ? in[1][p * k * c + j * k + q] : in[1][p * k * c + q * c + j];
            acc += x * y;
          }
          out[(p * m + i) * c + j] = acc;
        }
    return std::vector<RefTensor>{out};
  };
}

// ---- interleaved attention ----------------------------------------------------------------

// The position of element d of part `part` (of `parts`) of head h at (t, n) in a
// (T, N, parts * H * D) array.
int64_t PartIndex(const Shape& s, int64_t heads, int64_t parts, int64_t part, int64_t t, int64_t n,
                  int64_t h, int64_t d) {
  const int64_t dim = s[2] / (parts * heads);
  return ((t * s[1] + n) * heads + h) * parts * dim + part * dim + d;
}

double Part(const RefTensor& x, int64_t heads, int64_t parts, int64_t part, int64_t t, int64_t n,
            int64_t h, int64_t d) {
  return x[PartIndex(x.shape, heads, parts, part, t, n, h, d)];
}

// scores (N * H, Tq, Tk) from queries (parts_q, part_q) and keys (parts_k, part_k).
RefFn ScoresRef(int64_t heads, bool self) {
  return [=](const std::vector<RefTensor>& in) {
    const RefTensor& q = in[0];
    const RefTensor& kv = self ? in[0] : in[1];
    const int64_t pq = self ? 3 : 1, pk = self ? 3 : 2;
    const int64_t dim = q.shape[2] / (pq * heads), batch = q.shape[1];
    const int64_t tq = q.shape[0], tk = kv.shape[0];
    RefTensor out{Shape{batch * heads, tq, tk}};
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < tq; ++i)
          for (int64_t j = 0; j < tk; ++j) {
            double acc = 0;
            for (int64_t d = 0; d < dim; ++d)
              acc +=
                  Part(q, heads, pq, 0, i, n, h, d) * Part(kv, heads, pk, self ? 1 : 0, j, n, h, d);
            out[((n * heads + h) * tq + i) * tk + j] = acc / std::sqrt(static_cast<double>(dim));
          }
    return std::vector<RefTensor>{out};
  };
}

RefFn ValAttRef(int64_t heads, bool self) {
  return [=](const std::vector<RefTensor>& in) {
    const RefTensor& kv = in[0];
    const RefTensor& att = in[1];
    const int64_t parts = self ? 3 : 2, part = self ? 2 : 1;
    const int64_t dim = kv.shape[2] / (parts * heads), batch = kv.shape[1];
    const int64_t tq = att.shape[1], tk = att.shape[2];
    RefTensor out{Shape{tq, batch, heads * dim}};
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < tq; ++i)
          for (int64_t d = 0; d < dim; ++d) {
            double acc = 0;
            for (int64_t j = 0; j < tk; ++j)
              acc += att[((n * heads + h) * tq + i) * tk + j] *
                     Part(kv, heads, parts, part, j, n, h, d);
            out[(i * batch + n) * heads * dim + h * dim + d] = acc;
          }
    return std::vector<RefTensor>{out};
  };
}

// The scores' backward op: inputs (d_scores, queries[, keys_values]); outputs the gradients of
// the queries and keys (zero for the values), d q = d_scores . k / sqrt(D),
// d k = d_scores^T . q / sqrt(D).
RefFn ScoresBackwardRef(int64_t heads, bool self) {
  return [=](const std::vector<RefTensor>& in) {
    const RefTensor& ds = in[0];
    const RefTensor& q = in[1];
    const RefTensor& kv = self ? in[1] : in[2];
    const int64_t pq = self ? 3 : 1, pk = self ? 3 : 2;
    const int64_t dim = q.shape[2] / (pq * heads), batch = q.shape[1];
    const int64_t tq = q.shape[0], tk = kv.shape[0];
    std::vector<RefTensor> grads{RefTensor(q.shape)};
    if (!self) grads.emplace_back(kv.shape);
    RefTensor& dq = grads[0];
    RefTensor& dk = grads.back();
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < tq; ++i)
          for (int64_t j = 0; j < tk; ++j) {
            const double g =
                ds[((n * heads + h) * tq + i) * tk + j] / std::sqrt(static_cast<double>(dim));
            for (int64_t d = 0; d < dim; ++d) {
              dq[PartIndex(q.shape, heads, pq, 0, i, n, h, d)] +=
                  g * Part(kv, heads, pk, self ? 1 : 0, j, n, h, d);
              dk[PartIndex(kv.shape, heads, pk, self ? 1 : 0, j, n, h, d)] +=
                  g * Part(q, heads, pq, 0, i, n, h, d);
            }
          }
    return grads;
  };
}

// The weighted values' backward op: inputs (d_out, keys_values, attention); outputs the
// gradients of the values (zero for the queries and keys), d v = att^T . d_out, and of the
// attention, d att = d_out . v^T.
RefFn ValAttBackwardRef(int64_t heads, bool self) {
  return [=](const std::vector<RefTensor>& in) {
    const RefTensor& dy = in[0];
    const RefTensor& kv = in[1];
    const RefTensor& att = in[2];
    const int64_t parts = self ? 3 : 2, part = self ? 2 : 1;
    const int64_t dim = kv.shape[2] / (parts * heads), batch = kv.shape[1];
    const int64_t tq = att.shape[1], tk = att.shape[2];
    std::vector<RefTensor> grads{RefTensor(kv.shape), RefTensor(att.shape)};
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < tq; ++i)
          for (int64_t j = 0; j < tk; ++j)
            for (int64_t d = 0; d < dim; ++d) {
              const int64_t a = ((n * heads + h) * tq + i) * tk + j;
              const double g = dy[(i * batch + n) * heads * dim + h * dim + d];
              grads[0][PartIndex(kv.shape, heads, parts, part, j, n, h, d)] += att[a] * g;
              grads[1][a] += g * Part(kv, heads, parts, part, j, n, h, d);
            }
    return grads;
  };
}

HN_CONFORMANCE_CASES(Attention) {
  cases->push_back(Case("batch_dot", {}, {{2, 3, 4}, {2, 4, 5}}, BatchDotRef(false, false)));
  cases->push_back(Case("batch_dot", {{"transpose_a", "True"}}, {{2, 4, 3}, {2, 4, 5}},
                        BatchDotRef(true, false), "ta"));
  cases->push_back(Case("batch_dot", {{"transpose_b", "True"}, {"forward_stype", "default"}},
                        {{3, 2, 4}, {3, 5, 4}}, BatchDotRef(false, true), "tb"));
  cases->push_back(Case("batch_dot", {{"transpose_a", "True"}, {"transpose_b", "True"}},
                        {{2, 4, 3}, {2, 5, 4}}, BatchDotRef(true, true), "ta_tb"));
  cases->push_back(
      Case("batch_dot", {}, {{2, 2, 3, 4}, {2, 2, 4, 2}}, BatchDotRef(false, false), "4d"));
  cases->push_back(WithDTypes(
      Case("batch_dot", {}, {{2, 3, 4}, {2, 4, 1}}, BatchDotRef(false, false), "float64"),
      {DType::kFloat64, DType::kFloat64}));

  cases->push_back(Case("_contrib_interleaved_matmul_selfatt_qk", {{"heads", "2"}}, {{3, 2, 24}},
                        ScoresRef(2, true)));
  cases->push_back(Case("_contrib_interleaved_matmul_selfatt_qk", {{"heads", "1"}}, {{4, 1, 9}},
                        ScoresRef(1, true), "one_head"));
  cases->push_back(Case("_contrib_interleaved_matmul_selfatt_valatt", {{"heads", "2"}},
                        {{3, 2, 24}, {4, 3, 3}}, ValAttRef(2, true)));
  cases->push_back(Case("_contrib_interleaved_matmul_encdec_qk", {{"heads", "2"}},
                        {{3, 2, 8}, {5, 2, 16}}, ScoresRef(2, false)));
  cases->push_back(Case("_contrib_interleaved_matmul_encdec_valatt", {{"heads", "2"}},
                        {{5, 2, 16}, {4, 3, 5}}, ValAttRef(2, false)));
  cases->push_back(InternalCase(Case("_backward_interleaved_matmul_selfatt_qk", {{"heads", "2"}},
                                     {{4, 3, 3}, {3, 2, 24}}, ScoresBackwardRef(2, true))));
  cases->push_back(
      InternalCase(Case("_backward_interleaved_matmul_selfatt_valatt", {{"heads", "2"}},
                        {{3, 2, 8}, {3, 2, 24}, {4, 3, 3}}, ValAttBackwardRef(2, true))));
  cases->push_back(
      InternalCase(Case("_backward_interleaved_matmul_encdec_qk", {{"heads", "2"}},
                        {{4, 3, 5}, {3, 2, 8}, {5, 2, 16}}, ScoresBackwardRef(2, false))));
  cases->push_back(
      InternalCase(Case("_backward_interleaved_matmul_encdec_valatt", {{"heads", "2"}},
                        {{3, 2, 8}, {5, 2, 16}, {4, 3, 5}}, ValAttBackwardRef(2, false))));

  cases->push_back(
      Case("_contrib_div_sqrt_dim", {}, {{2, 3, 8}}, [](const std::vector<RefTensor>& in) {
        RefTensor out = in[0];
        for (int64_t i = 0; i < out.size(); ++i) out[i] = in[0][i] / std::sqrt(8.0);
        return std::vector<RefTensor>{out};
      }));
  cases->push_back(WithDTypes(Case(
                                  "_contrib_div_sqrt_dim", {}, {{5}},
                                  [](const std::vector<RefTensor>& in) {
                                    RefTensor out = in[0];
                                    for (int64_t i = 0; i < out.size(); ++i)
                                      out[i] = in[0][i] / std::sqrt(5.0);
                                    return std::vector<RefTensor>{out};
                                  },
                                  "float64"),
                              {DType::kFloat64}));
}

HN_ERROR_CASES(Attention) {
  cases->push_back(Rejected("batch_dot", {}, {{2, 3, 4}, {2, 5, 4}}, StatusCode::kShapeError,
                            {"batch_dot(node)", "reduction"}));
  cases->push_back(Rejected("batch_dot", {}, {{3, 4}, {4, 5}}, StatusCode::kShapeError,
                            {"batch_dot(node)", "at least 3"}));
  cases->push_back(Rejected("batch_dot", {}, {{2, 3, 4}, {2, 4, 5}}, StatusCode::kTypeError,
                            {"batch_dot(node)", "int32"}, {DType::kInt32, DType::kInt32}));
  cases->push_back(Rejected("_contrib_interleaved_matmul_selfatt_qk", {{"heads", "2"}},
                            {{3, 2, 10}}, StatusCode::kShapeError,
                            {"_contrib_interleaved_matmul_selfatt_qk(node)", "multiple of 3"}));
  cases->push_back(Rejected("_contrib_interleaved_matmul_selfatt_valatt", {{"heads", "2"}},
                            {{3, 2, 24}, {4, 3, 2}}, StatusCode::kShapeError,
                            {"_contrib_interleaved_matmul_selfatt_valatt(node)", "attention"}));
  cases->push_back(Rejected("_contrib_interleaved_matmul_encdec_qk", {{"heads", "2"}},
                            {{3, 2, 8}, {5, 3, 16}}, StatusCode::kShapeError,
                            {"_contrib_interleaved_matmul_encdec_qk(node)", "batch"}));
  cases->push_back(Rejected("_contrib_interleaved_matmul_encdec_valatt", {{"heads", "2"}},
                            {{5, 2, 16}, {4, 3, 4}}, StatusCode::kShapeError,
                            {"_contrib_interleaved_matmul_encdec_valatt(node)", "attention"}));
  // MXNet's CPU kernels of the interleaved ops are float32 only.
  cases->push_back(Rejected("_contrib_interleaved_matmul_encdec_valatt", {{"heads", "2"}},
                            {{5, 2, 16}, {4, 3, 5}}, StatusCode::kTypeError,
                            {"_contrib_interleaved_matmul_encdec_valatt(node)", "float64"},
                            {DType::kFloat64, DType::kFloat64}));
  cases->push_back(Rejected("_contrib_div_sqrt_dim", {}, {{2, 3}}, StatusCode::kTypeError,
                            {"_contrib_div_sqrt_dim(node)", "int32"}, {DType::kInt32}));
}

// ---- softmax with lengths and output dtypes -------------------------------------------------

// softmax (or log_softmax; softmin negates) of every line along `axis`, lines beyond their
// length 0.
RefFn MaskedSoftmaxRef(int axis, bool log, bool negate, double temperature, bool use_length) {
  return [=](const std::vector<RefTensor>& in) {
    const Shape& s = in[0].shape;
    const size_t ax = static_cast<size_t>(axis < 0 ? axis + static_cast<int>(s.ndim()) : axis);
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < ax; ++i) outer *= s[i];
    for (size_t i = ax + 1; i < s.ndim(); ++i) inner *= s[i];
    const int64_t size = s[ax];
    RefTensor out{s};
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t len =
            use_length ? std::min<int64_t>(static_cast<int64_t>(in[1][o * inner + i]), size) : size;
        auto x = [&](int64_t j) {
          const double v = in[0][(o * size + j) * inner + i];
          return (negate ? -v : v) / temperature;
        };
        double mx = -INFINITY;
        for (int64_t j = 0; j < len; ++j) mx = std::max(mx, x(j));
        double sum = 0;
        for (int64_t j = 0; j < len; ++j) sum += std::exp(x(j) - mx);
        for (int64_t j = 0; j < size; ++j)
          out[(o * size + j) * inner + i] = j >= len ? 0.0
                                            : log    ? x(j) - mx - std::log(sum)
                                                     : std::exp(x(j) - mx) / sum;
      }
    return std::vector<RefTensor>{out};
  };
}

HN_CONFORMANCE_CASES(SoftmaxLength) {
  const AttrDict len{{"use_length", "True"}};
  cases->push_back(WithDTypes(WithGen(Case("softmax", len, {{3, 5}, {3}},
                                           MaskedSoftmaxRef(-1, false, false, 1, true), "length"),
                                      PerInputGen({Uniform(-2, 2), Integers(0, 5)})),
                              {DType::kFloat32, DType::kInt32}));
  // BERT's attention: (N, T, T) scores with valid lengths broadcast to (N, T), int32.
  cases->push_back(WithDTypes(
      WithGen(
          Case("softmax", {{"use_length", "True"}, {"axis", "1"}, {"temperature", "0.5"}},
               {{2, 4, 3}, {2, 3}}, MaskedSoftmaxRef(1, false, false, 0.5, true), "length_axis1"),
          PerInputGen({Uniform(-2, 2), Integers(1, 4)})),
      {DType::kFloat32, DType::kInt64}));
  cases->push_back(Case("softmax", {{"dtype", "float64"}}, {{3, 5}},
                        MaskedSoftmaxRef(-1, false, false, 1, false), "out_float64"));
  cases->push_back(WithDTypes(
      Case("softmax", {}, {{3, 5}}, MaskedSoftmaxRef(-1, false, false, 1, false), "float64"),
      {DType::kFloat64}));
  cases->push_back(NoGradientCheck(
      WithDTypes(Case("log_softmax", {{"dtype", "float32"}, {"axis", "0"}}, {{3, 5}},
                      MaskedSoftmaxRef(0, true, false, 1, false), "float64_to_32"),
                 {DType::kFloat64}),
      "a float32 output: float64 finite differences would measure its rounding (the float64 "
      "outputs of softmax and softmin check the gradient of dtype)"));
  cases->push_back(Case("softmin", {{"dtype", "float64"}, {"axis", "0"}}, {{3, 4}},
                        MaskedSoftmaxRef(0, false, true, 1, false), "out_float64"));
}

HN_ERROR_CASES(SoftmaxLength) {
  cases->push_back(Rejected("softmax", {{"use_length", "True"}}, {{2, 3}, {3}},
                            StatusCode::kShapeError, {"softmax(node)", "length"}));
  // MXNet 1.9.1 runs lengths for softmax only (log_softmax/softmin fail its type inference).
  cases->push_back(Rejected("log_softmax", {{"use_length", "True"}}, {{2, 3}, {2}},
                            StatusCode::kInvalidArgument, {"log_softmax(node)", "use_length"},
                            {DType::kFloat32, DType::kInt32}));
  // MXNet refuses uint8 lengths ("only support integer types, not uint8").
  cases->push_back(Rejected("softmax", {{"use_length", "True"}}, {{2, 3}, {2}},
                            StatusCode::kTypeError, {"softmax(node)", "length", "uint8"},
                            {DType::kFloat32, DType::kUint8}));
  cases->push_back(Rejected("softmax", {{"use_length", "True"}}, {{2, 3}, {2}},
                            StatusCode::kTypeError, {"softmax(node)", "length", "float32"}));
  cases->push_back(Rejected("log_softmax", {{"dtype", "float16"}}, {{2, 3}},
                            StatusCode::kUnsupported, {"log_softmax(node)", "float16"}));
  cases->push_back(Rejected("softmin", {}, {{2, 3}}, StatusCode::kTypeError,
                            {"softmin(node)", "int32"}, {DType::kInt32}));
}

// ---- Embedding dtypes ---------------------------------------------------------------------

RefFn EmbeddingRef() {
  return [](const std::vector<RefTensor>& in) {
    const int64_t rows = in[1].shape[0], cols = in[1].shape[1];
    std::vector<int64_t> od(in[0].shape.begin(), in[0].shape.end());
    od.push_back(cols);
    RefTensor out{Shape(od)};
    for (int64_t i = 0; i < in[0].size(); ++i) {
      const int64_t r =
          std::min(std::max<int64_t>(static_cast<int64_t>(std::trunc(in[0][i])), 0), rows - 1);
      for (int64_t c = 0; c < cols; ++c) out[i * cols + c] = in[1][r * cols + c];
    }
    return std::vector<RefTensor>{out};
  };
}

HN_CONFORMANCE_CASES(EmbeddingDTypes) {
  const InputGen ids = PerInputGen({Integers(-1, 7), Uniform(-1, 1)});
  cases->push_back(WithDTypes(
      WithGen(Case("Embedding", {{"input_dim", "6"}, {"output_dim", "3"}, {"dtype", "float64"}},
                   {{2, 4}, {6, 3}}, EmbeddingRef(), "float64_weight"),
              ids),
      {DType::kInt32, DType::kFloat64}));
  cases->push_back(WithDTypes(
      WithGen(Case("Embedding", {{"input_dim", "6"}, {"output_dim", "2"}, {"dtype", "float64"}},
                   {{5}, {6, 2}}, EmbeddingRef(), "float64_both"),
              ids),
      {DType::kFloat64, DType::kFloat64}));
  cases->push_back(WithDTypes(
      WithGen(Case("Embedding", {{"input_dim", "6"}, {"output_dim", "2"}, {"dtype", "int32"}},
                   {{5}, {6, 2}}, EmbeddingRef(), "int32_weight"),
              PerInputGen({Integers(0, 5), Integers(-100, 100)})),
      {DType::kInt64, DType::kInt32}));
  cases->push_back(NoMxnetGradient(
      WithGen(Case("_contrib_SparseEmbedding", {{"input_dim", "6"}, {"output_dim", "4"}},
                   {{2, 3}, {6, 4}}, EmbeddingRef()),
              ids),
      "MXNet's SparseEmbedding gradient is row_sparse, which its dense autograd cannot give"));
}

HN_ERROR_CASES(EmbeddingDTypes) {
  cases->push_back(
      Rejected("Embedding", {{"input_dim", "6"}, {"output_dim", "3"}, {"dtype", "float64"}},
               {{2}, {6, 3}}, StatusCode::kTypeError, {"Embedding(node)", "weight", "float64"}));
  cases->push_back(Rejected("_contrib_SparseEmbedding", {{"input_dim", "6"}, {"output_dim", "3"}},
                            {{2}, {5, 3}}, StatusCode::kShapeError,
                            {"_contrib_SparseEmbedding(node)", "weight"}));
}

}  // namespace
}  // namespace conformance
}  // namespace hybridnet
