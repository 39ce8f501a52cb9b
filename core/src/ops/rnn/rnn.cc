// RNN (MXNet src/operator/rnn-inl.h, CPU kernels rnn_impl.h): multi-layer, optionally
// bidirectional LSTM, GRU and Elman (relu/tanh) networks over data (T, N, I), and
// _rnn_param_concat, the Concat gluon's rnn layers use to pack their parameters.
//
// The packed parameter vector, as MXNet's CPU kernel reads it: first the weights of every layer
// and direction in the order (layer 0 forward, layer 0 backward, layer 1 forward, ...), each as
// Wx (G * H, I_l) then Wh (G * H, H); then the biases in the same order, each bx (G * H) then
// bh (G * H). G = 4 for LSTM (gate order i, f, g, o), 3 for GRU (r, z, n), 1 otherwise;
// I_l = I for layer 0, D * H after. States are (L * D, N, H), row l * D + d.
//
// GRU follows cuDNN/MXNet: n = tanh(Wn x + bxn + r * (Wn_h h + bhn)), h' = (1 - z) * n + z * h.
// The input projection of all time steps is one gemm per layer and direction; the recurrence
// is one gemm per step. Dropout between layers (p) applies in training only: the outputs of
// every layer but the last are kept with probability 1 - p and scaled by 1 / (1 - p) before the
// next layer reads them (the final states are not dropped), masks drawn from a Sampler seeded by
// one draw of the global generator per call, as Dropout draws them.
//
// A forward whose gradient may follow keeps what its backward reads (MXNet keeps it in the
// reserve space of the node's operator state): every step's gates and states, the layer outputs
// and the dropout masks, in one flat hidden output after the visible ones (a kept output,
// ops/kept_outputs.h: not in MXNet's node_row_ptr). Only a call that computes that output keeps
// anything: an eager call while recording (the tape holds the output until the backward) and a
// graph whose _backward_RNN reads it (the memory planner places it). Inference computes and keeps
// nothing.
//
// use_sequence_length (cuDNN-only in MXNet; its CPU build rejects it) follows cuDNN: sequence n
// runs for its first len[n] steps (the backward direction starts at step len[n] - 1), outputs
// beyond are 0, and the final states are those after len[n] steps.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "kernels/avx2-inl.h"
#include "kernels/avx512-inl.h"
#include "kernels/blas.h"
#include "kernels/vector_isa.h"
#include "kernels/vector_math-inl.h"
#include "kernels/workspace.h"
#include "ops/dtype_switch-inl.h"
#include "ops/gradient_util.h"
#include "ops/kept_outputs.h"
#include "ops/random/sampler-inl.h"
#include "ops/register_ops.h"
#include "ops/shape/shape_util-inl.h"

namespace hybridnet {

namespace {

enum class RNNMode { kGru, kLstm, kRnnRelu, kRnnTanh };

struct RNNParam {
  uint32_t state_size = 0;
  uint32_t num_layers = 0;
  bool bidirectional = false;
  RNNMode mode = RNNMode::kLstm;
  float p = 0.f;
  bool state_outputs = false;
  std::optional<int> projection_size;
  std::optional<double> lstm_state_clip_min;
  std::optional<double> lstm_state_clip_max;
  bool lstm_state_clip_nan = false;
  bool use_sequence_length = false;
  static void Declare(ParamDeclarer<RNNParam>* d) {
    d->Field("state_size", &RNNParam::state_size)
        .Required()
        .Min(1)
        .Describe("Size of the hidden state H.");
    d->Field("num_layers", &RNNParam::num_layers)
        .Required()
        .Min(1)
        .Describe("Number of stacked layers L.");
    d->Field("bidirectional", &RNNParam::bidirectional)
        .Default(false)
        .Describe("If true, each layer also runs backward in time (D = 2) and concatenates.");
    d->Field("mode", &RNNParam::mode,
             {{"gru", RNNMode::kGru},
              {"lstm", RNNMode::kLstm},
              {"rnn_relu", RNNMode::kRnnRelu},
              {"rnn_tanh", RNNMode::kRnnTanh}})
        .Required()
        .Describe("The recurrent cell.");
    d->Field("p", &RNNParam::p)
        .Default(0.f)
        .Describe("Dropout probability between layers (training only).");
    d->Field("state_outputs", &RNNParam::state_outputs)
        .Default(false)
        .Describe("If true, the final hidden (and LSTM cell) states are outputs too.");
    d->Field("projection_size", &RNNParam::projection_size)
        .Default(std::nullopt)
        .Describe("LSTM projection size (cuDNN only in MXNet; not supported).");
    d->Field("lstm_state_clip_min", &RNNParam::lstm_state_clip_min)
        .Default(std::nullopt)
        .Describe("Minimum LSTM cell state (cuDNN only in MXNet; not supported).");
    d->Field("lstm_state_clip_max", &RNNParam::lstm_state_clip_max)
        .Default(std::nullopt)
        .Describe("Maximum LSTM cell state (cuDNN only in MXNet; not supported).");
    d->Field("lstm_state_clip_nan", &RNNParam::lstm_state_clip_nan)
        .Default(false)
        .Describe("Whether clipping maps NaN to the bounds (with clipping only).");
    d->Field("use_sequence_length", &RNNParam::use_sequence_length)
        .Default(false)
        .Describe("If true, the sequence_length input (N,) gives each sequence's length.");
  }
};

void InitRNNParam(RNNParam* p) {
  HN_CHECK(p->p >= 0.f && p->p < 1.f, kInvalidArgument)
      << "p (dropout) must be in [0, 1), got " << p->p;
  HN_CHECK(!p->projection_size, kInvalidArgument)
      << "projection_size is not supported (MXNet implements LSTM projection with cuDNN only)";
  HN_CHECK(!p->lstm_state_clip_min && !p->lstm_state_clip_max, kInvalidArgument)
      << "lstm_state_clip_min/max are not supported (MXNet implements LSTM state clipping "
         "with cuDNN only)";
}

int64_t Gates(RNNMode mode) { return mode == RNNMode::kLstm ? 4 : mode == RNNMode::kGru ? 3 : 1; }

// The element count of the packed parameter vector.
int64_t ParamCount(const RNNParam& p, int64_t input_size) {
  const int64_t g = Gates(p.mode), h = p.state_size, d = p.bidirectional ? 2 : 1;
  int64_t n = 0;
  for (int64_t l = 0; l < static_cast<int64_t>(p.num_layers); ++l) {
    const int64_t in = l == 0 ? input_size : d * h;
    n += d * (g * h * (in + h) + 2 * g * h);
  }
  return n;
}

std::vector<std::string> RNNInputNames(const NodeAttrs& attrs) {
  const RNNParam& p = attrs.Param<RNNParam>();
  std::vector<std::string> names{"data", "parameters", "state"};
  if (p.mode == RNNMode::kLstm) names.push_back("state_cell");
  if (p.use_sequence_length) names.push_back("sequence_length");
  return names;
}

struct RNNDims {
  int64_t t = 0, n = 0, h = 0, g = 1, d = 1;
};

RNNDims DimsOf(const RNNParam& p, const Shape& data) {
  RNNDims dm;
  dm.t = data[0];
  dm.n = data[1];
  dm.h = p.state_size;
  dm.g = Gates(p.mode);
  dm.d = p.bidirectional ? 2 : 1;
  return dm;
}

// Whether a training forward drops between layers.
bool Drops(const RNNParam& p) { return p.p > 0.f && p.num_layers > 1; }

int64_t ForwardTraceSize(const RNNParam& p, const RNNDims& dm, bool dropout);

// The visible outputs; the kept forward (one hidden output) follows them.
uint32_t RNNNumOutputs(const NodeAttrs& attrs) {
  const RNNParam& p = attrs.Param<RNNParam>();
  if (!p.state_outputs) return 1;
  return p.mode == RNNMode::kLstm ? 3 : 2;
}

bool RNNShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const RNNParam& p = attrs.Param<RNNParam>();
  const Shape& data = (*in)[0];
  if (data.ndim() == 0) return false;
  HN_CHECK(data.ndim() == 3, kShapeError)
      << DescribeNode(attrs) << ": data must be (seq_len, batch, input_size), got " << data;
  const int64_t t = data[0], n = data[1], i = data[2];
  const int64_t d = p.bidirectional ? 2 : 1, h = p.state_size;
  const int64_t ld = static_cast<int64_t>(p.num_layers) * d;
  if (i != 0) internal::AssignShape(attrs, in, 1, Shape{ParamCount(p, i)}, "input 'parameters'");
  internal::AssignShape(attrs, in, 2, Shape{ld, n, h}, "input 'state'");
  size_t next = 3;
  if (p.mode == RNNMode::kLstm)
    internal::AssignShape(attrs, in, next++, Shape{ld, n, h}, "input 'state_cell'");
  if (p.use_sequence_length)
    internal::AssignShape(attrs, in, next, Shape{n}, "input 'sequence_length'");
  internal::AssignShape(attrs, out, 0, Shape{t, n, d * h}, "output");
  const size_t visible = RNNNumOutputs(attrs);
  for (size_t k = 1; k < visible && k < out->size(); ++k)
    internal::AssignShape(attrs, out, k, Shape{ld, n, h}, "state output");
  if (out->size() > visible) {
    const int64_t kept = ForwardTraceSize(p, DimsOf(p, data), Drops(p));
    internal::AssignShape(attrs, out, visible, Shape{kept}, "kept forward output");
  }
  bool known = true;
  for (const Shape& s : *in) known = known && s.IsKnown();
  for (const Shape& s : *out) known = known && s.IsKnown();
  return known;
}

// data, parameters, states and outputs share float32 or float64; sequence_length is numeric.
bool RNNType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const bool has_len = attrs.Param<RNNParam>().use_sequence_length;
  const size_t n_float = in->size() - (has_len ? 1 : 0);
  std::vector<DType> floats(in->begin(), in->begin() + static_cast<std::ptrdiff_t>(n_float));
  const bool known = ElemwiseType(attrs, &floats, out);
  std::copy(floats.begin(), floats.end(), in->begin());
  HN_CHECK(
      floats[0] == DType::kUnknown || floats[0] == DType::kFloat32 || floats[0] == DType::kFloat64,
      kTypeError)
      << DescribeNode(attrs) << ": data has dtype " << DTypeName(floats[0])
      << "; expected float32 or float64";
  if (!has_len) return known;
  DType& len = in->back();
  HN_CHECK(len == DType::kUnknown || internal::IsNumericDType(len), kTypeError)
      << DescribeNode(attrs) << ": sequence_length has dtype " << DTypeName(len)
      << "; expected an integer or float dtype";
  return known && len != DType::kUnknown;
}

// The gates' activations: float ones vectorize (kernels/vector_math-inl.h).
inline float GateSigmoid(float x) { return internal::VectorSigmoid(x); }
inline double GateSigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
inline float GateTanh(float x) { return internal::VectorTanh(x); }
inline double GateTanh(double x) { return std::tanh(x); }

// What back-propagation through time needs of one direction's forward steps, each (T, N, .):
// the activated gates (LSTM i f g o, GRU r z n, Elman h), the hidden state every step started
// from (0 for steps beyond a sequence's length), and LSTM's cell state before and after each
// step or GRU's recurrent part of the n gate (Wh_n h + bh_n).
template <typename T>
struct StepTrace {
  T* gates = nullptr;
  T* h_prev = nullptr;
  T* c_prev = nullptr;  // LSTM
  T* c = nullptr;       // LSTM
  T* hn = nullptr;      // GRU
};

// The elements a StepTrace of one direction holds per (t, n) row.
int64_t TraceRowSize(RNNMode mode, int64_t h) {
  const int64_t g = Gates(mode);
  return g * h + h + (mode == RNNMode::kLstm ? 2 * h : 0) + (mode == RNNMode::kGru ? h : 0);
}

template <typename T>
StepTrace<T> TraceAt(RNNMode mode, int64_t rows, int64_t h, T* storage) {
  StepTrace<T> tr;
  tr.gates = storage;
  tr.h_prev = tr.gates + rows * Gates(mode) * h;
  T* next = tr.h_prev + rows * h;
  if (mode == RNNMode::kLstm) {
    tr.c_prev = next;
    tr.c = next + rows * h;
  } else if (mode == RNNMode::kGru) {
    tr.hn = next;
  }
  return tr;
}

// One direction of one layer. x (T, N, in), output columns [dir * H, dir * H + H) of y
// (T, N, D * H); hx/cx the initial states (N, H), hy/cy the final ones (may be null). Always
// inlined, so that it compiles for the ISA of its caller (OnCpu).
template <typename T>
__attribute__((always_inline)) inline void RunDirection(RNNMode mode, const RNNDims& dm,
                                                        bool backward, const T* x, int64_t in,
                                                        const T* wx, const T* wh, const T* bx,
                                                        const T* bh, const T* hx, const T* cx,
                                                        const std::vector<int64_t>& lengths, T* y,
                                                        int64_t dir, T* hy, T* cy, T* scratch,
                                                        const StepTrace<T>* trace) {
  const int64_t n = dm.n, h = dm.h, g = dm.g, gh = g * h, yw = dm.d * h;
  T* xw = scratch;                 // (T * N, G * H)
  T* hw = xw + dm.t * n * gh;      // (N, G * H)
  T* hcur = hw + n * gh;           // (N, H)
  T* ccur = hcur + n * h;          // (N, H)
  T* unkept_gates = ccur + n * h;  // (G * H): a step's gates where no trace keeps them
  internal::Gemm(false, true, dm.t * n, gh, in, T{1}, x, in, wx, in, T{0}, xw, gh);
  // bx (and, except for GRU's n gate, bh) fold into the input projection.
  for (int64_t r = 0; r < dm.t * n; ++r) {
    T* row = xw + r * gh;
    for (int64_t j = 0; j < gh; ++j) row[j] += bx[j];
    if (mode != RNNMode::kGru)
      for (int64_t j = 0; j < gh; ++j) row[j] += bh[j];
  }
  std::memcpy(hcur, hx, static_cast<size_t>(n * h) * sizeof(T));
  if (mode == RNNMode::kLstm) std::memcpy(ccur, cx, static_cast<size_t>(n * h) * sizeof(T));
  for (int64_t step = 0; step < dm.t; ++step) {
    const int64_t t = backward ? dm.t - 1 - step : step;
    if (mode == RNNMode::kGru) {
      for (int64_t b = 0; b < n; ++b)
        std::memcpy(hw + b * gh, bh, static_cast<size_t>(gh) * sizeof(T));
      internal::Gemm(false, true, n, gh, h, T{1}, hcur, h, wh, h, T{1}, hw, gh);
    } else {
      internal::Gemm(false, true, n, gh, h, T{1}, hcur, h, wh, h, T{0}, hw, gh);
    }
    for (int64_t b = 0; b < n; ++b) {
      T* yrow = y + (t * n + b) * yw + dir * h;
      const int64_t row = t * n + b;
      if (t >= lengths[static_cast<size_t>(b)]) {
        std::fill_n(yrow, h, T{0});
        if (trace != nullptr) std::fill_n(trace->h_prev + row * h, h, T{0});
        continue;
      }
      const T* xg = xw + row * gh;
      const T* hg = hw + b * gh;
      T* gt = trace != nullptr ? trace->gates + row * gh : unkept_gates;
      T* hb = hcur + b * h;
      T* cb = ccur + b * h;
      if (trace != nullptr) {
        std::memcpy(trace->h_prev + row * h, hb, static_cast<size_t>(h) * sizeof(T));
        if (mode == RNNMode::kLstm)
          std::memcpy(trace->c_prev + row * h, cb, static_cast<size_t>(h) * sizeof(T));
      }
      switch (mode) {
        case RNNMode::kLstm:
#pragma omp simd
          for (int64_t j = 0; j < h; ++j) {
            const T ig = GateSigmoid(xg[j] + hg[j]);
            const T fg = GateSigmoid(xg[h + j] + hg[h + j]);
            const T cg = GateTanh(xg[2 * h + j] + hg[2 * h + j]);
            const T og = GateSigmoid(xg[3 * h + j] + hg[3 * h + j]);
            cb[j] = fg * cb[j] + ig * cg;
            hb[j] = og * GateTanh(cb[j]);
            gt[j] = ig;
            gt[h + j] = fg;
            gt[2 * h + j] = cg;
            gt[3 * h + j] = og;
          }
          if (trace != nullptr)
            std::memcpy(trace->c + row * h, cb, static_cast<size_t>(h) * sizeof(T));
          break;
        case RNNMode::kGru:
#pragma omp simd
          for (int64_t j = 0; j < h; ++j) {
            const T rg = GateSigmoid(xg[j] + hg[j]);
            const T zg = GateSigmoid(xg[h + j] + hg[h + j]);
            const T ng = GateTanh(xg[2 * h + j] + rg * hg[2 * h + j]);
            hb[j] = (T{1} - zg) * ng + zg * hb[j];
            gt[j] = rg;
            gt[h + j] = zg;
            gt[2 * h + j] = ng;
          }
          if (trace != nullptr)
            std::memcpy(trace->hn + row * h, hg + 2 * h, static_cast<size_t>(h) * sizeof(T));
          break;
        case RNNMode::kRnnRelu:
          for (int64_t j = 0; j < h; ++j) {
            const T v = xg[j] + hg[j];
            hb[j] = v > T{0} ? v : T{0};
          }
          break;
        case RNNMode::kRnnTanh:
#pragma omp simd
          for (int64_t j = 0; j < h; ++j) hb[j] = GateTanh(xg[j] + hg[j]);
          break;
      }
      if (trace != nullptr && mode != RNNMode::kLstm && mode != RNNMode::kGru)
        std::memcpy(trace->gates + row * gh, hb, static_cast<size_t>(h) * sizeof(T));
      std::memcpy(yrow, hb, static_cast<size_t>(h) * sizeof(T));
    }
  }
  if (hy != nullptr) std::memcpy(hy, hcur, static_cast<size_t>(n * h) * sizeof(T));
  if (cy != nullptr) std::memcpy(cy, ccur, static_cast<size_t>(n * h) * sizeof(T));
}

// RunDirection and BackwardDirection compiled for AVX-512 and AVX2: the gates' loops take 16 or
// 8 float lanes where the baseline build's SSE takes 4. Every value is computed elementwise or
// summed in the same order either way (no contraction into FMA), so the bits are the same.
template <typename T>
HN_AVX512 void RunDirectionAvx512(RNNMode mode, const RNNDims& dm, bool backward, const T* x,
                                  int64_t in, const T* wx, const T* wh, const T* bx, const T* bh,
                                  const T* hx, const T* cx, const std::vector<int64_t>& lengths,
                                  T* y, int64_t dir, T* hy, T* cy, T* scratch,
                                  const StepTrace<T>* trace) {
  RunDirection(mode, dm, backward, x, in, wx, wh, bx, bh, hx, cx, lengths, y, dir, hy, cy, scratch,
               trace);
}
template <typename T>
HN_AVX2 void RunDirectionAvx2(RNNMode mode, const RNNDims& dm, bool backward, const T* x,
                              int64_t in, const T* wx, const T* wh, const T* bx, const T* bh,
                              const T* hx, const T* cx, const std::vector<int64_t>& lengths, T* y,
                              int64_t dir, T* hy, T* cy, T* scratch, const StepTrace<T>* trace) {
  RunDirection(mode, dm, backward, x, in, wx, wh, bx, bh, hx, cx, lengths, y, dir, hy, cy, scratch,
               trace);
}

// Every sequence's length (T without use_sequence_length); `in` are the forward's inputs.
std::vector<int64_t> SequenceLengths(const RNNParam& p, const RNNDims& dm,
                                     const std::vector<TBlob>& in) {
  std::vector<int64_t> lengths(static_cast<size_t>(dm.n), dm.t);
  if (p.use_sequence_length) {
    const TBlob& len = in[p.mode == RNNMode::kLstm ? 4 : 3];
    internal::SwitchNumericDType(len.dtype, [&](auto tag) {
      using I = typename decltype(tag)::type;
      for (int64_t b = 0; b < dm.n; ++b) {
        const double v = static_cast<double>(len.ptr<const I>()[b]);
        lengths[static_cast<size_t>(b)] = v >= static_cast<double>(dm.t) ? dm.t
                                          : v > 0                        ? static_cast<int64_t>(v)
                                                                         : 0;
      }
    });
  }
  return lengths;
}

// What the forward of every layer keeps for the backward, in (T, N, .) arrays: the StepTrace of
// every layer and direction (row l * D + d), the output of every layer but the last, as the next
// layer read it (after dropout), and with dropout the mask each of those was multiplied by (0 or
// 1 / (1 - p)).
template <typename T>
struct ForwardTrace {
  std::vector<StepTrace<T>> steps;
  std::vector<T*> outputs;  // num_layers - 1
  std::vector<T*> masks;    // num_layers - 1 with dropout, else empty
};

// The elements a ForwardTrace holds.
int64_t ForwardTraceSize(const RNNParam& p, const RNNDims& dm, bool dropout) {
  const int64_t rows = dm.t * dm.n, layers = p.num_layers;
  return (layers - 1) * rows * dm.d * dm.h * (dropout ? 2 : 1) +
         layers * dm.d * TraceRowSize(p.mode, dm.h) * rows;
}

template <typename T>
ForwardTrace<T> ForwardTraceAt(const RNNParam& p, const RNNDims& dm, bool dropout, T* storage) {
  const int64_t rows = dm.t * dm.n, layer_out = rows * dm.d * dm.h;
  ForwardTrace<T> tr;
  for (int64_t l = 0; l + 1 < static_cast<int64_t>(p.num_layers); ++l) {
    tr.outputs.push_back(storage);
    storage += layer_out;
    if (dropout) {
      tr.masks.push_back(storage);
      storage += layer_out;
    }
  }
  for (int64_t k = 0; k < static_cast<int64_t>(p.num_layers) * dm.d; ++k) {
    tr.steps.push_back(TraceAt<T>(p.mode, rows, dm.h, storage));
    storage += TraceRowSize(p.mode, dm.h) * rows;
  }
  return tr;
}

// The forward of every layer into y (T, N, D * H) and, where not null, the final states hy and
// cy. With `trace` it also keeps what backward needs there. With `dropout_seed` (training) it
// drops between layers; a trace with masks but no seed (an inference forward recorded) gets masks
// of ones.
template <typename T>
void RNNForward(const OpContext& ctx, const RNNParam& p, const std::vector<TBlob>& in, T* y, T* hy,
                T* cy, const ForwardTrace<T>* trace,
                std::optional<uint64_t> dropout_seed = std::nullopt) {
  const RNNDims dm = DimsOf(p, in[0].shape);
  const int64_t input_size = in[0].shape[2];
  const bool lstm = p.mode == RNNMode::kLstm;
  const std::vector<int64_t> lengths = SequenceLengths(p, dm, in);
  const T* w = in[1].ptr<const T>();
  const T* bias = w;  // biases follow every weight
  for (int64_t l = 0; l < static_cast<int64_t>(p.num_layers); ++l) {
    const int64_t lin = l == 0 ? input_size : dm.d * dm.h;
    bias += dm.d * dm.g * dm.h * (lin + dm.h);
  }
  const int64_t layer_out = dm.t * dm.n * dm.d * dm.h;
  const int64_t per_dir =
      dm.t * dm.n * dm.g * dm.h + dm.n * dm.g * dm.h + 2 * dm.n * dm.h + dm.g * dm.h;
  const int64_t layers = p.num_layers;
  const bool ping_pong = layers > 1 && trace == nullptr;
  T* scratch = ctx.workspace->Get<T>(
      internal::kOpSlot0, static_cast<size_t>(per_dir + (ping_pong ? 2 * layer_out : 0)));
  T* ping = scratch + per_dir;
  T* pong = ping + layer_out;
  std::optional<internal::Sampler> sampler;
  if (dropout_seed) sampler.emplace(*dropout_seed);
  const internal::VectorIsa isa = internal::ChooseVectorIsa();
  const auto direction = isa == internal::VectorIsa::kAvx512 ? RunDirectionAvx512<T>
                         : isa == internal::VectorIsa::kAvx2 ? RunDirectionAvx2<T>
                                                             : RunDirection<T>;
  const T scale = T{1} / (T{1} - static_cast<T>(p.p));
  const T* hx = in[2].ptr<const T>();
  const T* cx = lstm ? in[3].ptr<const T>() : nullptr;
  const int64_t state = dm.n * dm.h;
  const T* x = in[0].ptr<const T>();
  const T* wl = w;
  const T* bl = bias;
  for (int64_t l = 0; l < layers; ++l) {
    const int64_t lin = l == 0 ? input_size : dm.d * dm.h;
    const size_t lu = static_cast<size_t>(l);
    T* yl = l == layers - 1 ? y : trace != nullptr ? trace->outputs[lu] : l % 2 == 0 ? ping : pong;
    for (int64_t dir = 0; dir < dm.d; ++dir) {
      const int64_t row = l * dm.d + dir;
      const T* wx = wl;
      const T* wh = wx + dm.g * dm.h * lin;
      wl = wh + dm.g * dm.h * dm.h;
      const T* bx = bl;
      const T* bh = bx + dm.g * dm.h;
      bl = bh + dm.g * dm.h;
      direction(p.mode, dm, dir == 1, x, lin, wx, wh, bx, bh, hx + row * state,
                lstm ? cx + row * state : nullptr, lengths, yl, dir,
                hy ? hy + row * state : nullptr, cy ? cy + row * state : nullptr, scratch,
                trace != nullptr ? &trace->steps[static_cast<size_t>(row)] : nullptr);
    }
    T* mask =
        trace != nullptr && !trace->masks.empty() && l + 1 < layers ? trace->masks[lu] : nullptr;
    if (sampler && l + 1 < layers) {
      for (int64_t i = 0; i < layer_out; ++i) {
        const T m = sampler->Uniform() < 1.0 - p.p ? scale : T{0};
        if (mask != nullptr) mask[i] = m;
        yl[i] *= m;
      }
    } else if (mask != nullptr) {
      std::fill_n(mask, layer_out, T{1});
    }
    x = yl;
  }
}

template <typename T>
void RNNTypedCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                     const std::vector<TBlob>& out) {
  const RNNParam& p = attrs.Param<RNNParam>();
  const size_t visible = RNNNumOutputs(attrs);
  T* y = out[0].ptr<T>();
  T* hy = visible > 1 ? out[1].ptr<T>() : nullptr;
  T* cy = visible > 2 ? out[2].ptr<T>() : nullptr;
  const std::optional<uint64_t> dropout_seed =
      ctx.is_train && Drops(p) ? std::optional<uint64_t>(internal::DrawRandomSeed()) : std::nullopt;
  if (out.size() == visible) {  // no gradient follows: nothing kept
    RNNForward<T>(ctx, p, in, y, hy, cy, nullptr, dropout_seed);
    return;
  }
  const ForwardTrace<T> trace =
      ForwardTraceAt<T>(p, DimsOf(p, in[0].shape), Drops(p), out[visible].ptr<T>());
  RNNForward<T>(ctx, p, in, y, hy, cy, &trace, dropout_seed);
}

void RNNCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                const std::vector<TBlob>& out) {
  if (in[0].dtype == DType::kFloat64) {
    RNNTypedCompute<double>(ctx, attrs, in, out);
  } else {
    RNNTypedCompute<float>(ctx, attrs, in, out);
  }
}

// ---------------------------------------------------------------------------------------------
// Gradient: back-propagation through time (MXNet's _backward_RNN). _backward_RNN reads each
// step's gates and states (StepTrace) from its forward's kept output, then goes back through the
// steps of every layer and direction, top layer first. Per step it forms the gradient of the
// gates' pre-activations (dA) and passes dA Wh back to the previous hidden state (one gemm per
// step, as the forward's recurrence); the weight, bias and input gradients are then one gemm or sum
// over all steps each: dWx = dA^T x, dWh = dA_h^T h_prev, dx = dA Wx.

// The gradient of one direction of one layer. dy is the layer output's gradient (T, N, D * H);
// dhy/dcy the final states' (null: zero); dx (T, N, in) is set (accumulate false) or added to.
// scratch holds 2 * T * N * G * H + 4 * N * H elements. Always inlined, as RunDirection.
template <typename T>
__attribute__((always_inline)) inline void BackwardDirection(
    RNNMode mode, const RNNDims& dm, bool backward, const T* x, int64_t in, const T* wx,
    const T* wh, const StepTrace<T>& tr, const std::vector<int64_t>& lengths, const T* dy,
    int64_t dir, const T* dhy, const T* dcy, T* dx, bool accumulate, T* dwx, T* dwh, T* dbx, T* dbh,
    T* dhx, T* dcx, T* scratch) {
  const int64_t n = dm.n, h = dm.h, gh = dm.g * h, yw = dm.d * h, rows = dm.t * n;
  const bool gru = mode == RNNMode::kGru;
  T* dax = scratch;                      // dA of the input projection (T * N, G * H)
  T* dah = gru ? dax + rows * gh : dax;  // dA of the recurrent product (GRU: n gate times r)
  T* dh = dax + 2 * rows * gh;           // the gradient reaching the current hidden state (N, H)
  T* dc = dh + n * h;                    // LSTM: the cell state's
  T* direct = dc + n * h;                // GRU: the part of dh_prev not through Wh
  T* through = direct + n * h;           // dA_h Wh
  if (dhy != nullptr) {
    std::memcpy(dh, dhy, static_cast<size_t>(n * h) * sizeof(T));
  } else {
    std::fill_n(dh, n * h, T{0});
  }
  if (dcy != nullptr) {
    std::memcpy(dc, dcy, static_cast<size_t>(n * h) * sizeof(T));
  } else {
    std::fill_n(dc, n * h, T{0});
  }
  for (int64_t step = dm.t - 1; step >= 0; --step) {
    const int64_t t = backward ? dm.t - 1 - step : step;
    for (int64_t b = 0; b < n; ++b) {
      const int64_t row = t * n + b;
      T* ax = dax + row * gh;
      T* ah = dah + row * gh;
      if (t >= lengths[static_cast<size_t>(b)]) {
        std::fill_n(ax, gh, T{0});
        if (gru) std::fill_n(ah, gh, T{0});
        continue;
      }
      const T* gt = tr.gates + row * gh;
      const T* dyrow = dy + row * yw + dir * h;
      const T* dhb = dh + b * h;
      T* dcb = dc + b * h;
      switch (mode) {
        case RNNMode::kLstm: {
          const T* c = tr.c + row * h;
          const T* c_prev = tr.c_prev + row * h;
#pragma omp simd
          for (int64_t j = 0; j < h; ++j) {
            const T dht = dyrow[j] + dhb[j];
            const T ig = gt[j], fg = gt[h + j], cg = gt[2 * h + j], og = gt[3 * h + j];
            const T tc = GateTanh(c[j]);
            const T dct = dcb[j] + dht * og * (T{1} - tc * tc);
            ax[j] = dct * cg * ig * (T{1} - ig);
            ax[h + j] = dct * c_prev[j] * fg * (T{1} - fg);
            ax[2 * h + j] = dct * ig * (T{1} - cg * cg);
            ax[3 * h + j] = dht * tc * og * (T{1} - og);
            dcb[j] = dct * fg;
          }
          break;
        }
        case RNNMode::kGru: {
          const T* hn = tr.hn + row * h;
          const T* h_prev = tr.h_prev + row * h;
          T* direct_b = direct + b * h;
#pragma omp simd
          for (int64_t j = 0; j < h; ++j) {
            const T dht = dyrow[j] + dhb[j];
            const T rg = gt[j], zg = gt[h + j], ng = gt[2 * h + j];
            const T dan = dht * (T{1} - zg) * (T{1} - ng * ng);
            ax[j] = ah[j] = dan * hn[j] * rg * (T{1} - rg);
            ax[h + j] = ah[h + j] = dht * (h_prev[j] - ng) * zg * (T{1} - zg);
            ax[2 * h + j] = dan;
            ah[2 * h + j] = dan * rg;
            direct_b[j] = dht * zg;
          }
          break;
        }
        case RNNMode::kRnnRelu:
          for (int64_t j = 0; j < h; ++j) ax[j] = gt[j] > T{0} ? dyrow[j] + dhb[j] : T{0};
          break;
        case RNNMode::kRnnTanh:
#pragma omp simd
          for (int64_t j = 0; j < h; ++j) ax[j] = (dyrow[j] + dhb[j]) * (T{1} - gt[j] * gt[j]);
          break;
      }
    }
    internal::Gemm(false, false, n, h, gh, T{1}, dah + t * n * gh, gh, wh, h, T{0}, through, h);
    for (int64_t b = 0; b < n; ++b) {
      if (t >= lengths[static_cast<size_t>(b)]) continue;  // the state passed this step unchanged
      for (int64_t j = 0; j < h; ++j)
        dh[b * h + j] = through[b * h + j] + (gru ? direct[b * h + j] : T{0});
    }
  }
  std::memcpy(dhx, dh, static_cast<size_t>(n * h) * sizeof(T));
  if (dcx != nullptr) std::memcpy(dcx, dc, static_cast<size_t>(n * h) * sizeof(T));
  internal::Gemm(true, false, gh, in, rows, T{1}, dax, gh, x, in, T{0}, dwx, in);
  internal::Gemm(true, false, gh, h, rows, T{1}, dah, gh, tr.h_prev, h, T{0}, dwh, h);
  // Row by row, each column summed in step order.
  std::fill_n(dbx, gh, T{0});
  std::fill_n(dbh, gh, T{0});
  for (int64_t r = 0; r < rows; ++r) {
#pragma omp simd
    for (int64_t j = 0; j < gh; ++j) {
      dbx[j] += dax[r * gh + j];
      dbh[j] += dah[r * gh + j];
    }
  }
  internal::Gemm(false, false, rows, in, gh, T{1}, dax, gh, wx, in, accumulate ? T{1} : T{0}, dx,
                 in);
}

// BackwardDirection compiled for AVX-512 and AVX2, as RunDirectionAvx512.
template <typename T>
HN_AVX512 void BackwardDirectionAvx512(RNNMode mode, const RNNDims& dm, bool backward, const T* x,
                                       int64_t in, const T* wx, const T* wh, const StepTrace<T>& tr,
                                       const std::vector<int64_t>& lengths, const T* dy,
                                       int64_t dir, const T* dhy, const T* dcy, T* dx,
                                       bool accumulate, T* dwx, T* dwh, T* dbx, T* dbh, T* dhx,
                                       T* dcx, T* scratch) {
  BackwardDirection(mode, dm, backward, x, in, wx, wh, tr, lengths, dy, dir, dhy, dcy, dx,
                    accumulate, dwx, dwh, dbx, dbh, dhx, dcx, scratch);
}
template <typename T>
HN_AVX2 void BackwardDirectionAvx2(RNNMode mode, const RNNDims& dm, bool backward, const T* x,
                                   int64_t in, const T* wx, const T* wh, const StepTrace<T>& tr,
                                   const std::vector<int64_t>& lengths, const T* dy, int64_t dir,
                                   const T* dhy, const T* dcy, T* dx, bool accumulate, T* dwx,
                                   T* dwh, T* dbx, T* dbh, T* dhx, T* dcx, T* scratch) {
  BackwardDirection(mode, dm, backward, x, in, wx, wh, tr, lengths, dy, dir, dhy, dcy, dx,
                    accumulate, dwx, dwh, dbx, dbh, dhx, dcx, scratch);
}

// in: the forward's output gradients (RNNNumOutputs of them), its inputs, then its kept output;
// out: the gradients of data, parameters, state and (LSTM) state_cell.
template <typename T>
void RNNBackward(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                 const std::vector<TBlob>& out, size_t num_outputs) {
  const RNNParam& p = attrs.Param<RNNParam>();
  const std::vector<TBlob> fin(in.begin() + static_cast<std::ptrdiff_t>(num_outputs), in.end() - 1);
  const RNNDims dm = DimsOf(p, fin[0].shape);
  const bool lstm = p.mode == RNNMode::kLstm;
  const int64_t layers = p.num_layers, input_size = fin[0].shape[2];
  const int64_t rows = dm.t * dm.n, layer_out = rows * dm.d * dm.h, state = dm.n * dm.h;
  const ForwardTrace<T> trace = ForwardTraceAt<T>(p, dm, Drops(p), in.back().ptr<T>());

  const int64_t per_dir = 2 * rows * dm.g * dm.h + 4 * state;
  T* scratch = ctx.workspace->Get<T>(
      internal::kOpSlot2, static_cast<size_t>(per_dir + (layers > 1 ? 2 * layer_out : 0)));
  T* grad_ping = scratch + per_dir;
  T* grad_pong = grad_ping + layer_out;
  const std::vector<int64_t> lengths = SequenceLengths(p, dm, fin);
  const T* dhy = num_outputs > 1 ? in[1].ptr<const T>() : nullptr;
  const T* dcy = num_outputs > 2 ? in[2].ptr<const T>() : nullptr;
  const T* w = fin[1].ptr<const T>();
  T* dw = out[1].ptr<T>();
  // Offsets of each layer's weights and biases in the packed vector.
  std::vector<int64_t> weight_at, bias_at;
  int64_t offset = 0;
  for (int64_t l = 0; l < layers; ++l) {
    weight_at.push_back(offset);
    offset += dm.d * dm.g * dm.h * ((l == 0 ? input_size : dm.d * dm.h) + dm.h);
  }
  for (int64_t l = 0; l < layers; ++l) {
    bias_at.push_back(offset);
    offset += dm.d * 2 * dm.g * dm.h;
  }
  const internal::VectorIsa isa = internal::ChooseVectorIsa();
  const auto direction = isa == internal::VectorIsa::kAvx512 ? BackwardDirectionAvx512<T>
                         : isa == internal::VectorIsa::kAvx2 ? BackwardDirectionAvx2<T>
                                                             : BackwardDirection<T>;
  const T* dy = in[0].ptr<const T>();
  for (int64_t l = layers - 1; l >= 0; --l) {
    const int64_t lin = l == 0 ? input_size : dm.d * dm.h;
    const T* x = l == 0 ? fin[0].ptr<const T>() : trace.outputs[static_cast<size_t>(l - 1)];
    T* dx = l == 0 ? out[0].ptr<T>() : ((layers - 1 - l) % 2 == 0 ? grad_ping : grad_pong);
    for (int64_t dir = 0; dir < dm.d; ++dir) {
      const int64_t row = l * dm.d + dir;
      const int64_t wx_at = weight_at[static_cast<size_t>(l)] + dir * dm.g * dm.h * (lin + dm.h);
      const int64_t wh_at = wx_at + dm.g * dm.h * lin;
      const int64_t bx_at = bias_at[static_cast<size_t>(l)] + dir * 2 * dm.g * dm.h;
      const int64_t bh_at = bx_at + dm.g * dm.h;
      direction(p.mode, dm, dir == 1, x, lin, w + wx_at, w + wh_at,
                trace.steps[static_cast<size_t>(row)], lengths, dy, dir,
                dhy ? dhy + row * state : nullptr, dcy ? dcy + row * state : nullptr, dx, dir == 1,
                dw + wx_at, dw + wh_at, dw + bx_at, dw + bh_at, out[2].ptr<T>() + row * state,
                lstm ? out[3].ptr<T>() + row * state : nullptr, scratch);
    }
    // The gradient reaching the layer below's output passes its dropout mask.
    if (l > 0 && !trace.masks.empty()) {
      const T* mask = trace.masks[static_cast<size_t>(l - 1)];
      for (int64_t i = 0; i < layer_out; ++i) dx[i] *= mask[i];
    }
    dy = dx;
  }
}

void RNNBackwardCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                        const std::vector<TBlob>& out) {
  const size_t num_outputs = RNNNumOutputs(attrs);
  if (out[0].dtype == DType::kFloat64) {
    RNNBackward<double>(ctx, attrs, in, out, num_outputs);
  } else {
    RNNBackward<float>(ctx, attrs, in, out, num_outputs);
  }
}

// _backward_RNN's inputs as the forward's: its outputs (the gradients' shapes and dtypes, then
// the kept output, _backward_RNN's last input) and its inputs (those between).
template <typename V>
void SplitBackwardInputs(const std::vector<V>& in, size_t num_outputs, std::vector<V>* forward_in,
                         std::vector<V>* forward_out) {
  const auto first_input = in.begin() + static_cast<std::ptrdiff_t>(num_outputs);
  forward_in->assign(first_input, in.end() - 1);
  forward_out->assign(in.begin(), first_input);
  forward_out->push_back(in.back());
}

template <typename V>
void JoinBackwardInputs(const std::vector<V>& forward_in, const std::vector<V>& forward_out,
                        std::vector<V>* in) {
  std::copy(forward_out.begin(), forward_out.end() - 1, in->begin());
  std::copy(forward_in.begin(), forward_in.end(),
            in->begin() + static_cast<std::ptrdiff_t>(forward_out.size() - 1));
  in->back() = forward_out.back();
}

// (the forward's output gradients, its inputs, its kept output) -> gradients of data,
// parameters, state[, state_cell]: the forward's inference on its inputs, outputs matched
// against the gradients and the kept output.
bool RNNBackwardShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  std::vector<Shape> forward_in, forward_out;
  SplitBackwardInputs(*in, RNNNumOutputs(attrs), &forward_in, &forward_out);
  for (size_t i = 0; i < out->size(); ++i) {
    if ((*out)[i].ndim() != 0) internal::AssignShape(attrs, &forward_in, i, (*out)[i], "input");
  }
  const bool known = RNNShape(attrs, &forward_in, &forward_out);
  JoinBackwardInputs(forward_in, forward_out, in);
  for (size_t i = 0; i < out->size(); ++i) (*out)[i] = forward_in[i];
  return known;
}

bool RNNBackwardType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  std::vector<DType> forward_in, forward_out;
  SplitBackwardInputs(*in, RNNNumOutputs(attrs), &forward_in, &forward_out);
  for (size_t i = 0; i < out->size(); ++i) {
    if ((*out)[i] != DType::kUnknown && forward_in[i] == DType::kUnknown) forward_in[i] = (*out)[i];
  }
  const bool known = RNNType(attrs, &forward_in, &forward_out);
  JoinBackwardInputs(forward_in, forward_out, in);
  for (size_t i = 0; i < out->size(); ++i) (*out)[i] = forward_in[i];
  return known;
}

std::vector<std::string> RNNBackwardInputNames(const NodeAttrs& attrs) {
  std::vector<std::string> names{"out_grad", "state_output_grad", "statecell_output_grad"};
  names.resize(RNNNumOutputs(attrs));
  for (const std::string& name : RNNInputNames(attrs)) names.push_back(name);
  names.push_back("kept_forward");
  return names;
}

uint32_t RNNNumFloatInputs(const NodeAttrs& attrs) {
  const RNNParam& p = attrs.Param<RNNParam>();
  return p.mode == RNNMode::kLstm ? 4 : 3;
}

std::vector<NodeEntry> RNNGradient(const std::shared_ptr<Node>& n,
                                   const std::vector<NodeEntry>& dy) {
  internal::GradientBuilder g(n, dy);
  const uint32_t visible = RNNNumOutputs(g.attrs());
  std::vector<NodeEntry> inputs;
  for (uint32_t k = 0; k < visible; ++k) inputs.push_back(g.out_grad(k));
  const std::vector<std::string> names = RNNInputNames(g.attrs());
  for (size_t i = 0; i < names.size(); ++i) inputs.push_back(g.in(i));
  inputs.push_back(g.out(visible));  // the kept forward
  const std::shared_ptr<Node> backward = g.MakeNode("_backward_RNN", inputs, g.attrs().dict);
  std::vector<NodeEntry> grads;
  for (uint32_t i = 0; i < RNNNumFloatInputs(g.attrs()); ++i) grads.push_back({backward, i, 0});
  if (g.attrs().Param<RNNParam>().use_sequence_length)
    grads.push_back(g.ZerosLike(g.in(names.size() - 1)));
  return grads;
}

}  // namespace

void RegisterRNNOps(OpRegistry* r) {
  const Op& rnn =
      r->Register("RNN")
          .Describe(
              "Multi-layer (bidirectional) LSTM, GRU or Elman RNN over data (T, N, I) with "
              "the packed parameter vector, initial states (L * D, N, H) and optional "
              "per-sequence lengths; outputs (T, N, D * H) and, with state_outputs, the final "
              "states.")
          .SetParam<RNNParam>(InitRNNParam)
          .SetInputNames(RNNInputNames)
          .SetNumOutputs(RNNNumOutputs)
          .SetOutputNames([](const NodeAttrs&) -> std::vector<std::string> {
            return {"output", "state_output", "statecell_output"};  // as many as RNNNumOutputs
          })
          .SetInferShape(RNNShape)
          .SetInferType(RNNType)
          .SetCompute(RNNCompute)
          .SetGradient(RNNGradient);
  internal::SetNumKeptOutputs(rnn, [](const NodeAttrs&) { return 1u; });

  r->Register("_backward_RNN")
      .Describe(
          "The gradient of RNN (back-propagation through time): from the output gradients, "
          "RNN's inputs and the steps its forward kept, the gradients of data, parameters, "
          "state and state_cell.")
      .SetParam<RNNParam>(InitRNNParam)
      .SetInputNames(RNNBackwardInputNames)
      .SetNumInputs([](const NodeAttrs& attrs) {
        return static_cast<uint32_t>(RNNBackwardInputNames(attrs).size());
      })
      .SetNumOutputs(RNNNumFloatInputs)
      .SetInferShape(RNNBackwardShape)
      .SetInferType(RNNBackwardType)
      .SetCompute(RNNBackwardCompute)
      .SetInternal();

  // The same parameters, inference and kernel as Concat (gluon packs RNN weights with it).
  const Op& concat = r->Get("Concat");
  Op& param_concat = r->Register("_rnn_param_concat");
  param_concat.Describe(
      "Concat as gluon's rnn layers emit it to pack their parameters: joins "
      "the inputs along dimension dim.");
  param_concat.fields = concat.fields;
  param_concat.parse_param = concat.parse_param;
  param_concat.list_input_names = concat.list_input_names;
  param_concat.get_num_inputs = concat.get_num_inputs;
  param_concat.key_var_num_args = concat.key_var_num_args;
  param_concat.infer_shape = concat.infer_shape;
  param_concat.infer_type = concat.infer_type;
  param_concat.compute = concat.compute;
  param_concat.gradient = concat.gradient;
}

}  // namespace hybridnet
