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
// is one gemm per step. Dropout between layers (p) applies in training only.
//
// use_sequence_length (cuDNN-only in MXNet; its CPU build rejects it) follows cuDNN: sequence n
// runs for its first len[n] steps (the backward direction starts at step len[n] - 1), outputs
// beyond are 0, and the final states are those after len[n] steps.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "kernels/blas.h"
#include "kernels/workspace.h"
#include "ops/dtype_switch-inl.h"
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
  for (size_t k = 1; k < out->size(); ++k)
    internal::AssignShape(attrs, out, k, Shape{ld, n, h}, "state output");
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

template <typename T>
T Sigmoid(T x) {
  return T{1} / (T{1} + std::exp(-x));
}

struct RNNDims {
  int64_t t = 0, n = 0, h = 0, g = 1, d = 1;
};

// One direction of one layer. x (T, N, in), output columns [dir * H, dir * H + H) of y
// (T, N, D * H); hx/cx the initial states (N, H), hy/cy the final ones (may be null).
template <typename T>
void RunDirection(RNNMode mode, const RNNDims& dm, bool backward, const T* x, int64_t in,
                  const T* wx, const T* wh, const T* bx, const T* bh, const T* hx, const T* cx,
                  const std::vector<int64_t>& lengths, T* y, int64_t dir, T* hy, T* cy,
                  T* scratch) {
  const int64_t n = dm.n, h = dm.h, g = dm.g, gh = g * h, yw = dm.d * h;
  T* xw = scratch;             // (T * N, G * H)
  T* hw = xw + dm.t * n * gh;  // (N, G * H)
  T* hcur = hw + n * gh;       // (N, H)
  T* ccur = hcur + n * h;      // (N, H)
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
      if (t >= lengths[static_cast<size_t>(b)]) {
        std::fill_n(yrow, h, T{0});
        continue;
      }
      const T* xg = xw + (t * n + b) * gh;
      const T* hg = hw + b * gh;
      T* hb = hcur + b * h;
      T* cb = ccur + b * h;
      switch (mode) {
        case RNNMode::kLstm:
          for (int64_t j = 0; j < h; ++j) {
            const T ig = Sigmoid(xg[j] + hg[j]);
            const T fg = Sigmoid(xg[h + j] + hg[h + j]);
            const T cg = std::tanh(xg[2 * h + j] + hg[2 * h + j]);
            const T og = Sigmoid(xg[3 * h + j] + hg[3 * h + j]);
            cb[j] = fg * cb[j] + ig * cg;
            hb[j] = og * std::tanh(cb[j]);
          }
          break;
        case RNNMode::kGru:
          for (int64_t j = 0; j < h; ++j) {
            const T rg = Sigmoid(xg[j] + hg[j]);
            const T zg = Sigmoid(xg[h + j] + hg[h + j]);
            const T ng = std::tanh(xg[2 * h + j] + rg * hg[2 * h + j]);
            hb[j] = (T{1} - zg) * ng + zg * hb[j];
          }
          break;
        case RNNMode::kRnnRelu:
          for (int64_t j = 0; j < h; ++j) {
            const T v = xg[j] + hg[j];
            hb[j] = v > T{0} ? v : T{0};
          }
          break;
        case RNNMode::kRnnTanh:
          for (int64_t j = 0; j < h; ++j) hb[j] = std::tanh(xg[j] + hg[j]);
          break;
      }
      std::memcpy(yrow, hb, static_cast<size_t>(h) * sizeof(T));
    }
  }
  if (hy != nullptr) std::memcpy(hy, hcur, static_cast<size_t>(n * h) * sizeof(T));
  if (cy != nullptr) std::memcpy(cy, ccur, static_cast<size_t>(n * h) * sizeof(T));
}

template <typename T>
void RNNForward(const OpContext& ctx, const RNNParam& p, const std::vector<TBlob>& in,
                const std::vector<TBlob>& out) {
  RNNDims dm;
  dm.t = in[0].shape[0];
  dm.n = in[0].shape[1];
  dm.h = p.state_size;
  dm.g = Gates(p.mode);
  dm.d = p.bidirectional ? 2 : 1;
  const int64_t input_size = in[0].shape[2];
  const bool lstm = p.mode == RNNMode::kLstm;
  std::vector<int64_t> lengths(static_cast<size_t>(dm.n), dm.t);
  if (p.use_sequence_length) {
    const TBlob& len = in[lstm ? 4 : 3];
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
  const T* w = in[1].ptr<const T>();
  const T* bias = w;  // biases follow every weight
  for (int64_t l = 0; l < static_cast<int64_t>(p.num_layers); ++l) {
    const int64_t lin = l == 0 ? input_size : dm.d * dm.h;
    bias += dm.d * dm.g * dm.h * (lin + dm.h);
  }
  const int64_t layer_out = dm.t * dm.n * dm.d * dm.h;
  const int64_t per_dir = dm.t * dm.n * dm.g * dm.h + dm.n * dm.g * dm.h + 2 * dm.n * dm.h;
  const int64_t layers = p.num_layers;
  T* scratch = ctx.workspace->Get<T>(
      internal::kOpSlot0, static_cast<size_t>(per_dir + (layers > 1 ? 2 * layer_out : 0)));
  T* ping = scratch + per_dir;
  T* pong = ping + layer_out;
  const T* hx = in[2].ptr<const T>();
  const T* cx = lstm ? in[3].ptr<const T>() : nullptr;
  T* hy = out.size() > 1 ? out[1].ptr<T>() : nullptr;
  T* cy = out.size() > 2 ? out[2].ptr<T>() : nullptr;
  const int64_t state = dm.n * dm.h;
  const T* x = in[0].ptr<const T>();
  const T* wl = w;
  const T* bl = bias;
  for (int64_t l = 0; l < layers; ++l) {
    const int64_t lin = l == 0 ? input_size : dm.d * dm.h;
    T* y = l == layers - 1 ? out[0].ptr<T>() : (l % 2 == 0 ? ping : pong);
    for (int64_t dir = 0; dir < dm.d; ++dir) {
      const int64_t row = l * dm.d + dir;
      const T* wx = wl;
      const T* wh = wx + dm.g * dm.h * lin;
      wl = wh + dm.g * dm.h * dm.h;
      const T* bx = bl;
      const T* bh = bx + dm.g * dm.h;
      bl = bh + dm.g * dm.h;
      RunDirection<T>(p.mode, dm, dir == 1, x, lin, wx, wh, bx, bh, hx + row * state,
                      lstm ? cx + row * state : nullptr, lengths, y, dir,
                      hy ? hy + row * state : nullptr, cy ? cy + row * state : nullptr, scratch);
    }
    x = y;
  }
}

void RNNCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                const std::vector<TBlob>& out) {
  const RNNParam& p = attrs.Param<RNNParam>();
  if (in[0].dtype == DType::kFloat64) {
    RNNForward<double>(ctx, p, in, out);
  } else {
    RNNForward<float>(ctx, p, in, out);
  }
}

}  // namespace

void RegisterRNNOps(OpRegistry* r) {
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
      .SetCompute(RNNCompute);

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
}

}  // namespace hybridnet
