// Conformance cases for RNN (LSTM, GRU, rnn_relu, rnn_tanh; layers, directions, state outputs,
// sequence lengths) and _rnn_param_concat, against a plain-loop reference in doubles that reads
// the packed parameter vector in MXNet's order.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "conformance.h"
#include "reference_helpers.h"

namespace hybridnet {
namespace conformance {
namespace {

struct RNNSpec {
  std::string mode;
  int64_t layers = 1, hidden = 2;
  bool bidirectional = false, state_outputs = false, lengths = false;
};

int64_t GatesOf(const std::string& mode) { return mode == "lstm" ? 4 : mode == "gru" ? 3 : 1; }

int64_t ParamSize(const RNNSpec& s, int64_t input) {
  const int64_t g = GatesOf(s.mode), h = s.hidden, d = s.bidirectional ? 2 : 1;
  int64_t n = 0;
  for (int64_t l = 0; l < s.layers; ++l)
    n += d * (g * h * ((l == 0 ? input : d * h) + h) + 2 * g * h);
  return n;
}

double Sig(double x) { return 1.0 / (1.0 + std::exp(-x)); }

RefFn RNNRef(RNNSpec s) {
  return [s](const std::vector<RefTensor>& in) {
    const int64_t T = in[0].shape[0], N = in[0].shape[1], I = in[0].shape[2];
    const int64_t H = s.hidden, G = GatesOf(s.mode), D = s.bidirectional ? 2 : 1;
    const bool lstm = s.mode == "lstm";
    const RefTensor& w = in[1];
    const RefTensor& hx = in[2];
    // Offsets of each (layer, direction)'s Wx, Wh, bx, bh in the packed vector.
    std::vector<int64_t> wx_at, wh_at, bx_at, bh_at;
    int64_t off = 0;
    for (int64_t l = 0; l < s.layers; ++l)
      for (int64_t d = 0; d < D; ++d) {
        const int64_t lin = l == 0 ? I : D * H;
        wx_at.push_back(off);
        off += G * H * lin;
        wh_at.push_back(off);
        off += G * H * H;
      }
    for (int64_t l = 0; l < s.layers; ++l)
      for (int64_t d = 0; d < D; ++d) {
        bx_at.push_back(off);
        off += G * H;
        bh_at.push_back(off);
        off += G * H;
      }
    RefTensor x = in[0];
    RefTensor hy{Shape{s.layers * D, N, H}}, cy{Shape{s.layers * D, N, H}};
    for (int64_t l = 0; l < s.layers; ++l) {
      const int64_t lin = l == 0 ? I : D * H;
      RefTensor y{Shape{T, N, D * H}};
      for (int64_t d = 0; d < D; ++d) {
        const int64_t k = l * D + d;
        for (int64_t b = 0; b < N; ++b) {
          const int64_t len = s.lengths ? static_cast<int64_t>(in[lstm ? 4 : 3][b]) : T;
          std::vector<double> h(static_cast<size_t>(H)), c(static_cast<size_t>(H));
          for (int64_t j = 0; j < H; ++j) {
            h[static_cast<size_t>(j)] = hx[(k * N + b) * H + j];
            if (lstm) c[static_cast<size_t>(j)] = in[3][(k * N + b) * H + j];
          }
          for (int64_t step = 0; step < len; ++step) {
            const int64_t t = d == 1 ? len - 1 - step : step;
            // Pre-activations of each gate row r: input part and hidden part.
            std::vector<double> xi(static_cast<size_t>(G * H)), hh(static_cast<size_t>(G * H));
            for (int64_t r = 0; r < G * H; ++r) {
              double a = w[bx_at[static_cast<size_t>(k)] + r];
              for (int64_t q = 0; q < lin; ++q)
                a += w[wx_at[static_cast<size_t>(k)] + r * lin + q] * x[(t * N + b) * lin + q];
              double e = w[bh_at[static_cast<size_t>(k)] + r];
              for (int64_t q = 0; q < H; ++q)
                e += w[wh_at[static_cast<size_t>(k)] + r * H + q] * h[static_cast<size_t>(q)];
              xi[static_cast<size_t>(r)] = a;
              hh[static_cast<size_t>(r)] = e;
            }
            std::vector<double> nh(static_cast<size_t>(H));
            for (int64_t j = 0; j < H; ++j) {
              auto gate = [&](int64_t gi) {
                return xi[static_cast<size_t>(gi * H + j)] + hh[static_cast<size_t>(gi * H + j)];
              };
              const size_t u = static_cast<size_t>(j);
              if (lstm) {
                c[u] = Sig(gate(1)) * c[u] + Sig(gate(0)) * std::tanh(gate(2));
                nh[u] = Sig(gate(3)) * std::tanh(c[u]);
              } else if (s.mode == "gru") {
                const double rg = Sig(gate(0)), zg = Sig(gate(1));
                const double ng = std::tanh(xi[static_cast<size_t>(2 * H + j)] +
                                            rg * hh[static_cast<size_t>(2 * H + j)]);
                nh[u] = (1 - zg) * ng + zg * h[u];
              } else if (s.mode == "rnn_relu") {
                nh[u] = std::max(0.0, gate(0));
              } else {
                nh[u] = std::tanh(gate(0));
              }
            }
            h = nh;
            for (int64_t j = 0; j < H; ++j)
              y[(t * N + b) * D * H + d * H + j] = h[static_cast<size_t>(j)];
          }
          for (int64_t j = 0; j < H; ++j) {
            hy[(k * N + b) * H + j] = h[static_cast<size_t>(j)];
            cy[(k * N + b) * H + j] = c[static_cast<size_t>(j)];
          }
        }
      }
      x = y;
    }
    std::vector<RefTensor> outs{x};
    if (s.state_outputs) {
      outs.push_back(hy);
      if (lstm) outs.push_back(cy);
    }
    return outs;
  };
}

OpCase RNNCase(RNNSpec s, int64_t T, int64_t N, int64_t I, std::string note) {
  AttrDict attrs{{"mode", s.mode},
                 {"state_size", std::to_string(s.hidden)},
                 {"num_layers", std::to_string(s.layers)}};
  if (s.bidirectional) attrs["bidirectional"] = "True";
  if (s.state_outputs) attrs["state_outputs"] = "True";
  if (s.lengths) attrs["use_sequence_length"] = "True";
  const int64_t D = s.bidirectional ? 2 : 1;
  std::vector<Shape> shapes{{T, N, I}, {ParamSize(s, I)}, {s.layers * D, N, s.hidden}};
  if (s.mode == "lstm") shapes.push_back({s.layers * D, N, s.hidden});
  if (s.lengths) shapes.push_back({N});
  OpCase c = Case("RNN", attrs, shapes, RNNRef(s), note);
  const size_t len_input = shapes.size() - 1;
  c.gen = [s, T, len_input](std::mt19937& rng, size_t input, int64_t) {
    if (s.lengths && input == len_input)
      return static_cast<double>(std::uniform_int_distribution<int64_t>(1, T)(rng));
    return std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
  };
  if (s.lengths) {
    c.dtypes = std::vector<DType>(shapes.size(), DType::kFloat32);
    c.dtypes.back() = DType::kInt32;
    c = NotInMXNet(c,
                   "MXNet's CPU RNN rejects use_sequence_length (cuDNN only); cuDNN's "
                   "semantics, checked against the reference");
  }
  return c;
}

// _backward_RNN read as a function of its inputs: a 1-layer rnn_relu with state outputs, so the
// kept forward is each step's gates (the new hidden states, rows t * N + b) then the hidden
// states the steps started from. Back through the steps the gradient reaching h_t is
// dy_t + dA_{t+1} Wh (dhy at the last step) and dA_t is it where the gate is positive, else 0;
// then dWx = sum dA^T x, dWh = sum dA^T h_prev, dbx = dbh = sum dA, dx = dA Wx, dhx = dA_0 Wh.
OpCase RNNBackwardReluCase(int64_t T, int64_t N, int64_t I, int64_t H) {
  const int64_t rows = T * N;
  std::vector<Shape> shapes{{T, N, H}, {1, N, H},     {T, N, I}, {H * (I + H) + 2 * H},
                            {1, N, H}, {2 * rows * H}};
  OpCase c = InternalCase(Case(
      "_backward_RNN",
      {{"mode", "rnn_relu"},
       {"state_size", std::to_string(H)},
       {"num_layers", "1"},
       {"state_outputs", "True"}},
      shapes,
      [T, N, I, H, rows](const std::vector<RefTensor>& in) {
        const RefTensor &dy = in[0], &dhy = in[1], &x = in[2], &w = in[3], &kept = in[5];
        auto wx = [&](int64_t j, int64_t i) { return w[j * I + i]; };
        auto wh = [&](int64_t j, int64_t k) { return w[H * I + j * H + k]; };
        auto gate = [&](int64_t row, int64_t j) { return kept[row * H + j]; };
        auto h_prev = [&](int64_t row, int64_t k) { return kept[rows * H + row * H + k]; };
        RefTensor dx(in[2].shape), dw(in[3].shape), dhx(in[4].shape), da(Shape{rows, H});
        std::vector<double> dh(dhy.v);
        for (int64_t t = T - 1; t >= 0; --t) {
          for (int64_t b = 0; b < N; ++b) {
            const int64_t row = t * N + b;
            for (int64_t j = 0; j < H; ++j)
              da[row * H + j] = gate(row, j) > 0 ? dy[row * H + j] + dh[b * H + j] : 0.0;
            for (int64_t k = 0; k < H; ++k) {
              double sum = 0;
              for (int64_t j = 0; j < H; ++j) sum += da[row * H + j] * wh(j, k);
              dh[b * H + k] = sum;
            }
          }
        }
        for (int64_t i = 0; i < dhx.size(); ++i) dhx[i] = dh[i];
        for (int64_t row = 0; row < rows; ++row) {
          for (int64_t j = 0; j < H; ++j) {
            const double a = da[row * H + j];
            for (int64_t i = 0; i < I; ++i) {
              dw[j * I + i] += a * x[row * I + i];
              dx[row * I + i] += a * wx(j, i);
            }
            for (int64_t k = 0; k < H; ++k) dw[H * I + j * H + k] += a * h_prev(row, k);
            dw[H * (I + H) + j] += a;
            dw[H * (I + H) + H + j] += a;
          }
        }
        return std::vector<RefTensor>{dx, dw, dhx};
      },
      "relu_kept_forward"));
  c.dtypes = std::vector<DType>(shapes.size(), DType::kFloat64);
  c.gen = [](std::mt19937& rng, size_t, int64_t) {
    return std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
  };
  return c;
}

// RNN(p) in training, as a 2-layer rnn_relu whose second layer passes its input through (Wx the
// identity, Wh and the biases 0) and whose first layer's outputs are positive (positive data and
// weights): the output is then the first layer's output times the dropout mask. Every element
// must be 0 or the inference output (the reference) times 1 / (1 - p), about 1 - p of them kept.
OpCase RNNDropoutTraining(double p) {
  constexpr int64_t kT = 20, kN = 20, kH = 8;
  const RNNSpec s{"rnn_relu", 2, kH, false, false, false};
  OpCase c = RNNCase(s, kT, kN, kH, "dropout_training");
  c.attrs["p"] = std::to_string(p);
  // Layer 0's Wx and Wh, then layer 1's Wx (identity) and Wh, then the 4 bias vectors (0).
  c.gen = [](std::mt19937& rng, size_t input, int64_t index) {
    std::uniform_real_distribution<double> u(0.0, 1.0);
    if (input != 1) return 0.1 + 0.9 * u(rng);
    const int64_t layer0 = 2 * kH * kH, identity = layer0 + kH * kH;
    if (index < layer0) return 0.05 + 0.1 * u(rng);
    if (index < identity) return (index - layer0) % (kH + 1) == 0 ? 1.0 : 0.0;
    return 0.0;
  };
  const RefFn inference = RNNRef(s);
  return Statistical(
      Training(c),
      [p, inference](const std::vector<RefTensor>& in,
                     const std::vector<RefTensor>& out) -> std::string {
        const RefTensor want = inference(in)[0];
        const double scale = 1.0 / (1.0 - p);
        int64_t kept = 0;
        for (int64_t i = 0; i < want.size(); ++i) {
          if (out[0][i] == 0) continue;
          if (std::fabs(out[0][i] - want[i] * scale) > 1e-5 * want[i] * scale)
            return "element " + std::to_string(i) + " is " + std::to_string(out[0][i]) +
                   ", neither 0 nor the inference output " + std::to_string(want[i]) +
                   " times 1/(1-p)";
          ++kept;
        }
        const double fraction = static_cast<double>(kept) / static_cast<double>(want.size());
        if (std::fabs(fraction - (1 - p)) > 0.03)
          return "kept fraction " + std::to_string(fraction);
        return std::string();
      });
}

HN_CONFORMANCE_CASES(RNN) {
  cases->push_back(RNNCase({"lstm", 1, 3, false, false, false}, 4, 2, 3, "lstm"));
  cases->push_back(RNNCase({"lstm", 2, 3, true, true, false}, 5, 2, 4, "lstm_2layer_bi_states"));
  cases->push_back(RNNCase({"gru", 1, 4, false, true, false}, 4, 3, 2, "gru_states"));
  cases->push_back(RNNCase({"gru", 2, 2, true, false, false}, 3, 2, 3, "gru_2layer_bi"));
  cases->push_back(RNNCase({"rnn_relu", 2, 3, false, true, false}, 4, 2, 3, "relu_2layer"));
  cases->push_back(RNNCase({"rnn_tanh", 1, 3, true, true, false}, 4, 2, 2, "tanh_bi"));
  cases->push_back(RNNCase({"lstm", 1, 2, true, true, true}, 5, 3, 2, "lstm_lengths"));
  cases->push_back(RNNCase({"gru", 2, 2, false, true, true}, 4, 3, 2, "gru_lengths"));
  cases->push_back(RNNDropoutTraining(0.3));
  // p only acts in training: inference is unchanged.
  OpCase dropout = RNNCase({"lstm", 2, 2, false, false, false}, 3, 2, 2, "dropout");
  dropout.attrs["p"] = "0.3";
  cases->push_back(dropout);
  OpCase f64 = RNNCase({"rnn_tanh", 1, 2, false, true, false}, 3, 2, 2, "float64");
  f64.dtypes = std::vector<DType>(3, DType::kFloat64);
  cases->push_back(f64);

  cases->push_back(RNNBackwardReluCase(3, 2, 2, 3));

  cases->push_back(Case("_rnn_param_concat", {{"num_args", "3"}, {"dim", "0"}}, {{6}, {4}, {3}},
                        [](const std::vector<RefTensor>& in) {
                          RefTensor out{Shape{13}};
                          int64_t k = 0;
                          for (const RefTensor& t : in)
                            for (int64_t i = 0; i < t.size(); ++i) out[k++] = t[i];
                          return std::vector<RefTensor>{out};
                        }));
}

HN_ERROR_CASES(RNN) {
  cases->push_back(Rejected(
      "RNN", {{"mode", "lstm"}, {"state_size", "2"}, {"num_layers", "1"}, {"projection_size", "2"}},
      {{3, 2, 2}, {48}, {1, 2, 2}, {1, 2, 2}}, StatusCode::kInvalidArgument,
      {"RNN(node)", "projection_size", "cuDNN"}));
  cases->push_back(Rejected("RNN",
                            {{"mode", "lstm"},
                             {"state_size", "2"},
                             {"num_layers", "1"},
                             {"lstm_state_clip_min", "-1"},
                             {"lstm_state_clip_max", "1"}},
                            {{3, 2, 2}, {48}, {1, 2, 2}, {1, 2, 2}}, StatusCode::kInvalidArgument,
                            {"RNN(node)", "clip"}));
  cases->push_back(Rejected(
      "RNN", {{"mode", "gru"}, {"state_size", "2"}, {"num_layers", "1"}, {"p", "1"}},
      {{3, 2, 2}, {36}, {1, 2, 2}}, StatusCode::kInvalidArgument, {"RNN(node)", "dropout"}));
  cases->push_back(Rejected("RNN", {{"mode", "gru"}, {"state_size", "2"}, {"num_layers", "1"}},
                            {{3, 2, 2}, {35}, {1, 2, 2}}, StatusCode::kShapeError,
                            {"RNN(node)", "parameters"}));
  cases->push_back(Rejected("RNN", {{"mode", "rnn_tanh"}, {"state_size", "2"}, {"num_layers", "1"}},
                            {{3, 2}, {12}, {1, 2, 2}}, StatusCode::kShapeError,
                            {"RNN(node)", "seq_len, batch, input_size"}));
  cases->push_back(Rejected("RNN", {{"mode", "rnn_tanh"}, {"state_size", "2"}, {"num_layers", "1"}},
                            {{3, 2, 2}, {12}, {1, 3, 2}}, StatusCode::kShapeError,
                            {"RNN(node)", "state"}));
  // 1-layer rnn_tanh over (3, 2, 2): the kept forward holds 2 * 3 * 2 * 2 = 24 values.
  cases->push_back(Rejected("_backward_RNN",
                            {{"mode", "rnn_tanh"}, {"state_size", "2"}, {"num_layers", "1"}},
                            {{3, 2, 2}, {3, 2, 2}, {12}, {1, 2, 2}, {23}}, StatusCode::kShapeError,
                            {"_backward_RNN(node)", "kept forward", "(24"}));
  cases->push_back(Rejected("RNN", {{"mode", "cell"}, {"state_size", "2"}, {"num_layers", "1"}},
                            {{3, 2, 2}, {12}, {1, 2, 2}}, StatusCode::kInvalidArgument,
                            {"RNN(node)", "mode"}));
}

}  // namespace
}  // namespace conformance
}  // namespace hybridnet
