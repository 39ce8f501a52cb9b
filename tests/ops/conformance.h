// The op conformance harness (modelled on ggml's test-backend-ops): one table of cases, each an
// op name, attributes, input shapes, an optional input generator and a naive reference written
// with plain loops, independently of the kernels. For every case conformance.cc checks
//   - eager Invoke == reference (within rtol/atol), or a statistical check for random ops,
//   - eager == GraphExecutor over Symbol::Create(op, vars), bit-exact, fused and unfused,
//   - FInferShape/FInferType == the actual outputs, and partial inference does not throw,
//   - JSON round trip: FromJSON(ToJSON(s)).ToJSON() == ToJSON(s), same numbers when reloaded,
//   - for an op with a gradient (FGradient): autograd's input gradients, for random output
//     gradients, == float64 central finite differences of the op (run in float64 where it takes
//     float64, else of the reference), and the gradient graph run by GraphExecutor == eager
//     backward, bit-exact,
// and lint tests require at least one case for every registered op, and a gradient-checked case
// for every op with a gradient. The same cases are
// exported (tests/golden/ops) and run in real MXNet 1.9.1, which must give our outputs: every op
// needs at least one case MXNet checks.
//
// Error cases (HN_ERROR_CASES) are bad attributes or input shapes/dtypes that must raise a given
// status code with a message naming the op, the node and the problem.
//
// Inference cases (HN_INFERENCE_CASES) pin down shape inference from partial information: what
// gluon's deferred initialization reads (weight and bias shapes from the data) and what MXNet
// fills backwards from a known output.
//
// Adding cases: in any tests/ops/*_cases.cc,
//
//   HN_CONFORMANCE_CASES(MyFamily) {
//     cases->push_back(Case("relu", {}, {{2, 3}}, Unary([](double x) { return x > 0 ? x : 0; })));
//   }
//   HN_ERROR_CASES(MyFamily) {
//     cases->push_back(Rejected("Pooling", {{"kernel", "(0, 2)"}}, {{1, 1, 4, 4}},
//                               StatusCode::kInvalidArgument, {"Pooling", "kernel", "(0, 2)"}));
//   }
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "hybridnet/base.h"
#include "hybridnet/dtype.h"
#include "hybridnet/ndarray.h"
#include "hybridnet/param.h"
#include "hybridnet/shape.h"
#include "hybridnet/symbol.h"

namespace hybridnet {
namespace conformance {

/// A dense row-major tensor of doubles for reference computations.
struct RefTensor {
  Shape shape;
  std::vector<double> v;

  RefTensor() = default;
  explicit RefTensor(const Shape& s) : shape(s), v(static_cast<size_t>(s.Size()), 0.0) {}
  int64_t size() const { return static_cast<int64_t>(v.size()); }
  double& operator[](int64_t i) { return v[static_cast<size_t>(i)]; }
  double operator[](int64_t i) const { return v[static_cast<size_t>(i)]; }
};

using RefFn = std::function<std::vector<RefTensor>(const std::vector<RefTensor>& in)>;
/// The input gradients an op declares from its inputs and output gradients, where they are not
/// the derivative of its forward (BlockGrad's zeros, MakeLoss's grad_scale, a straight-through
/// estimator's output gradient).
using RefGradFn = std::function<std::vector<RefTensor>(const std::vector<RefTensor>& in,
                                                       const std::vector<RefTensor>& out_grads)>;
/// For random ops, whose draws no reference can repeat: checks the eager outputs statistically
/// (ranges, means, variances of large draws). Returns "" when they pass, else what failed.
using StatCheck =
    std::function<std::string(const std::vector<RefTensor>& in, const std::vector<RefTensor>& out)>;

/// The global generator is seeded with this before every run of a case (eager and graph), so
/// random ops draw the same numbers in both.
constexpr uint64_t kCaseSeed = 20240611;
/// Value of element `index` of input `input`.
using InputGen = std::function<double(std::mt19937& rng, size_t input, int64_t index)>;

struct OpCase {
  std::string op;  ///< name or alias, as a model file would spell it
  AttrDict attrs;
  std::vector<Shape> inputs;
  RefFn reference;
  InputGen gen;               ///< empty: uniform in [-2, 2)
  std::vector<DType> dtypes;  ///< per input; empty: all float32
  double rtol = 1e-5;
  double atol = 1e-6;
  std::string note;        ///< distinguishes cases of one op in test names
  bool check_json = true;  ///< false for internal ops (never written to JSON)
  /// False when an input has one of several accepted shapes (bias (H, 1), prelu gamma (1,),
  /// probability labels): inference of that input, when hidden, gives the default instead.
  bool inputs_inferable = true;
  /// Why live MXNet cannot check this case (empty: it does, within mxnet_rtol of the largest
  /// output magnitude; integer outputs exactly).
  std::string mxnet_skip;
  double mxnet_rtol = 1e-4;
  /// Runs the kernel in training mode (batch statistics); the graph executor, which only does
  /// inference, is then compared with the eager inference result.
  bool is_train = false;
  /// A control-flow op's graphs, built when the case runs (cases are registered during static
  /// initialization, before the op registry may be used).
  std::function<std::vector<Symbol>()> subgraphs;
  /// Set for an internal op whose passes give it typed parameters besides `attrs` (the fusions
  /// of _hn_convolution): makes the node's attributes from `attrs`, as the pass would.
  std::function<NodeAttrs(const AttrDict& attrs)> typed_attrs;
  StatCheck statistics;  ///< set: replaces the comparison with `reference`
  /// Set: the gradient check compares with it instead of finite differences.
  RefGradFn gradient_reference;
  /// Why finite differences cannot check this case's gradient (inputs at a kink or a jump of
  /// the function); empty: they do, when the op has a gradient.
  std::string gradient_skip;
  /// Why live MXNet cannot check this case's gradient (empty: it does, within
  /// mxnet_gradient_rtol of the largest gradient magnitude, whenever finite differences do).
  std::string mxnet_gradient_skip;
  double mxnet_gradient_rtol = 1e-5;
};

/// A bad attribute, shape or dtype: invoking `op` on zero-filled inputs of these shapes and
/// dtypes must raise `code` with every string of `needles` in the message.
struct ErrorCase {
  std::string op;
  AttrDict attrs;
  std::vector<Shape> inputs;
  std::vector<DType> dtypes;  ///< per input; empty: all float32
  StatusCode code = StatusCode::kInvalidArgument;
  std::vector<std::string> needles;
  /// When not empty: output shapes given to shape inference (which must reject them) instead of
  /// invoking the op.
  std::vector<Shape> outputs;
};

/// Shape inference from partial shapes (ndim 0 or a 0 dim = unknown): FInferShape given
/// `inputs` and `outputs` must return `complete` and leave exactly `want_inputs` and
/// `want_outputs`.
struct InferenceCase {
  std::string op;
  AttrDict attrs;
  std::vector<Shape> inputs, outputs;
  std::vector<Shape> want_inputs, want_outputs;
  bool complete = true;
  std::string note;
};

/// Every registered case, in registration order.
std::vector<OpCase>& AllCases();
std::vector<ErrorCase>& AllErrorCases();
std::vector<InferenceCase>& AllInferenceCases();

/// Unique test names of AllCases(), in the same order.
const std::vector<std::string>& CaseNames();
/// The dtype of input i of a case.
DType InputDType(const OpCase& c, size_t i);
/// A case's inputs, drawn from a generator seeded by the case name.
std::vector<NDArray> MakeInputs(const OpCase& c, const std::string& name);
/// The case's op run eagerly on `inputs` (in training mode when the case says so).
std::vector<NDArray> RunEager(const OpCase& c, const std::vector<NDArray>& inputs);
/// Deep copies, for ops that update their inputs in place (each run from the same values).
std::vector<NDArray> Copies(const std::vector<NDArray>& arrays);

/// An array's values as a float64 reference tensor.
RefTensor ToRef(const NDArray& a);
/// `got` equals `want` elementwise within atol + rtol * |want| (NaN equal to NaN).
::testing::AssertionResult Near(const RefTensor& want, const NDArray& got, double rtol,
                                double atol);

/// A case's parsed attributes (and subgraphs), for the node "node".
NodeAttrs CaseAttrs(const OpCase& c);

/// Whether the case's gradient is checked, on these inputs: an op with a gradient, a
/// deterministic case with a float input to differentiate and a float output, all finite
/// (finite differences through a NaN or an infinity are not). A training case is differentiated
/// in training mode.
bool GradientChecked(const OpCase& c, const std::vector<NDArray>& inputs);
/// The gradients given to `outputs` in a gradient check: uniform in [-1, 1) from `seed`, in
/// each output's dtype; none for outputs that are not float.
std::vector<NDArray> HeadGradients(const std::vector<NDArray>& outputs, uint32_t seed);
/// Autograd's gradients of sum_k <head_grads_k, y_k>, y = `attrs` applied to `inputs`, for each
/// input marked in `differentiable` (none elsewhere); recorded and run backward in training
/// mode when `train`, else in inference mode.
std::vector<NDArray> EagerGradients(const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                                    const std::vector<bool>& differentiable,
                                    const std::vector<NDArray>& head_grads, bool train);
/// Whether input `i`, `x`, of a node with `attrs` is differentiated in a gradient check: a
/// non-empty float array that is not an auxiliary state (BatchNorm's moving statistics are
/// state, which MXNet never differentiates).
bool Differentiable(const NodeAttrs& attrs, size_t i, const NDArray& x);

/// The one-op graph of a case: its inputs as variables named as the op names them.
struct CaseGraph {
  Symbol symbol;
  std::vector<std::string> data_names;
};
CaseGraph BuildGraph(const OpCase& c);

template <typename T>
struct CaseRegistrar {
  explicit CaseRegistrar(void (*add)(std::vector<T>* cases), std::vector<T>& all) { add(&all); }
};

#define HN_CONFORMANCE_CASES(family)                                                       \
  static void HnConformanceCases_##family(std::vector<::hybridnet::conformance::OpCase>*); \
  static const ::hybridnet::conformance::CaseRegistrar<::hybridnet::conformance::OpCase>   \
      hn_conformance_registrar_##family(HnConformanceCases_##family,                       \
                                        ::hybridnet::conformance::AllCases());             \
  static void HnConformanceCases_##family(std::vector<::hybridnet::conformance::OpCase>* cases)

#define HN_ERROR_CASES(family)                                                              \
  static void HnErrorCases_##family(std::vector<::hybridnet::conformance::ErrorCase>*);     \
  static const ::hybridnet::conformance::CaseRegistrar<::hybridnet::conformance::ErrorCase> \
      hn_error_registrar_##family(HnErrorCases_##family,                                    \
                                  ::hybridnet::conformance::AllErrorCases());               \
  static void HnErrorCases_##family(std::vector<::hybridnet::conformance::ErrorCase>* cases)

#define HN_INFERENCE_CASES(family)                                                              \
  static void HnInferenceCases_##family(std::vector<::hybridnet::conformance::InferenceCase>*); \
  static const ::hybridnet::conformance::CaseRegistrar<::hybridnet::conformance::InferenceCase> \
      hn_inference_registrar_##family(HnInferenceCases_##family,                                \
                                      ::hybridnet::conformance::AllInferenceCases());           \
  static void HnInferenceCases_##family(std::vector<::hybridnet::conformance::InferenceCase>* cases)

// ---- building cases ---------------------------------------------------------------------------

inline OpCase Case(std::string op, AttrDict attrs, std::vector<Shape> inputs, RefFn reference,
                   std::string note = "") {
  OpCase c;
  c.op = std::move(op);
  c.attrs = std::move(attrs);
  c.inputs = std::move(inputs);
  c.reference = std::move(reference);
  c.note = std::move(note);
  return c;
}

inline OpCase WithGen(OpCase c, InputGen gen) {
  c.gen = std::move(gen);
  return c;
}

/// Marks an input shape that is accepted but not the one inference proposes.
inline OpCase NonDefaultInputs(OpCase c) {
  c.inputs_inferable = false;
  return c;
}

/// A case live MXNet cannot check, and why (random outputs, an option MXNet lacks on CPU, ...).
inline OpCase NotInMXNet(OpCase c, std::string why) {
  c.mxnet_skip = std::move(why);
  return c;
}

/// A case of a random op: `check` judges the eager outputs (see StatCheck); live MXNet cannot
/// compare its draws.
inline OpCase Statistical(OpCase c, StatCheck check) {
  c.statistics = std::move(check);
  c.mxnet_skip = "random draws: checked statistically, MXNet's generator differs";
  return c;
}

inline ErrorCase Rejected(std::string op, AttrDict attrs, std::vector<Shape> inputs,
                          StatusCode code, std::vector<std::string> needles,
                          std::vector<DType> dtypes = {}) {
  ErrorCase e;
  e.op = std::move(op);
  e.attrs = std::move(attrs);
  e.inputs = std::move(inputs);
  e.dtypes = std::move(dtypes);
  e.code = code;
  e.needles = std::move(needles);
  return e;
}

/// Rejected by shape inference when the output shapes are already known (and conflict).
inline ErrorCase WithOutputs(ErrorCase e, std::vector<Shape> outputs) {
  e.outputs = std::move(outputs);
  return e;
}

/// A case whose declared gradient is `want` rather than the forward's derivative.
/// A case of an internal op (made by the graph passes or the gradient pass, never written to
/// JSON).
inline OpCase InternalCase(OpCase c) {
  c.check_json = false;
  return c;
}

/// A case whose gradient live MXNet cannot check, saying why.
inline OpCase NoMxnetGradient(OpCase c, std::string why) {
  c.mxnet_gradient_skip = std::move(why);
  return c;
}

inline OpCase WithGradient(OpCase c, RefGradFn want) {
  c.gradient_reference = std::move(want);
  return c;
}

/// RefGradFn: input 0 gets output 0's gradient times `scale`, any other input zero (BlockGrad's
/// gradient is ScaledOutGrad(0), a straight-through estimator's ScaledOutGrad(1)).
inline RefGradFn ScaledOutGrad(double scale) {
  return [scale](const std::vector<RefTensor>& in, const std::vector<RefTensor>& out_grads) {
    std::vector<RefTensor> grads;
    for (const RefTensor& x : in) grads.emplace_back(x.shape);
    for (int64_t j = 0; j < grads[0].size(); ++j) grads[0][j] = scale * out_grads[0][j];
    return grads;
  };
}

/// A case finite differences cannot check the gradient of, and why.
inline OpCase NoGradientCheck(OpCase c, std::string why) {
  c.gradient_skip = std::move(why);
  return c;
}

/// Runs the case in training mode (see OpCase::is_train).
inline OpCase Training(OpCase c) {
  c.is_train = true;
  return c;
}

inline InferenceCase Infers(std::string op, AttrDict attrs, std::vector<Shape> inputs,
                            std::vector<Shape> outputs, std::vector<Shape> want_inputs,
                            std::vector<Shape> want_outputs, bool complete, std::string note) {
  return InferenceCase{std::move(op),      std::move(attrs),       std::move(inputs),
                       std::move(outputs), std::move(want_inputs), std::move(want_outputs),
                       complete,           std::move(note)};
}

inline OpCase WithTol(OpCase c, double rtol, double atol) {
  c.rtol = rtol;
  c.atol = atol;
  return c;
}

/// Uniform in [lo, hi).
inline InputGen Uniform(double lo, double hi) {
  return [lo, hi](std::mt19937& rng, size_t, int64_t) {
    return lo + (hi - lo) * std::uniform_real_distribution<double>(0.0, 1.0)(rng);
  };
}

/// Integers in [lo, hi].
inline InputGen Integers(int64_t lo, int64_t hi) {
  return [lo, hi](std::mt19937& rng, size_t, int64_t) {
    return static_cast<double>(std::uniform_int_distribution<int64_t>(lo, hi)(rng));
  };
}

// ---- reference helpers (plain loops, no hybridnet kernels) ------------------------------------

/// A reference for a one-input elementwise op.
inline RefFn Unary(std::function<double(double)> f) {
  return [f](const std::vector<RefTensor>& in) {
    RefTensor out(in[0].shape);
    for (int64_t i = 0; i < out.size(); ++i) out[i] = f(in[0][i]);
    return std::vector<RefTensor>{out};
  };
}

/// A reference for a two-input elementwise op on equal shapes.
inline RefFn Binary(std::function<double(double, double)> f) {
  return [f](const std::vector<RefTensor>& in) {
    RefTensor out(in[0].shape);
    for (int64_t i = 0; i < out.size(); ++i) out[i] = f(in[0][i], in[1][i]);
    return std::vector<RefTensor>{out};
  };
}

/// Row-major strides of a shape.
inline std::vector<int64_t> Strides(const Shape& s) {
  std::vector<int64_t> st(s.ndim(), 1);
  for (size_t k = s.ndim(); k-- > 1;) st[k - 1] = st[k] * s[k];
  return st;
}

/// The multi-index of flat position `flat` in shape `s`.
inline std::vector<int64_t> Unravel(int64_t flat, const Shape& s) {
  std::vector<int64_t> idx(s.ndim(), 0);
  for (size_t k = s.ndim(); k-- > 0;) {
    idx[k] = flat % s[k];
    flat /= s[k];
  }
  return idx;
}

/// Rounds to float32, as a kernel's inputs and outputs are.
inline double F32(double x) { return static_cast<double>(static_cast<float>(x)); }

}  // namespace conformance
}  // namespace hybridnet
