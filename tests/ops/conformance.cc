// The op conformance harness (see conformance.h), the gradient checks, the registry lint tests
// and the bad-input tests of eager invocation.
#include "conformance.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "common/test_util.h"
#include "hybridnet/autograd.h"
#include "hybridnet/executor.h"
#include "hybridnet/imperative.h"
#include "hybridnet/ndarray.h"
#include "hybridnet/op.h"
#include "hybridnet/symbol.h"
#include "kernels/onednn.h"
#include "pass/gradient.h"

namespace hybridnet {
namespace conformance {

::testing::AssertionResult Near(const RefTensor& want, const NDArray& got_array, double rtol,
                                double atol) {
  if (want.shape != got_array.shape()) {
    return ::testing::AssertionFailure()
           << "shape " << got_array.shape() << ", reference " << want.shape;
  }
  RefTensor got = ToRef(got_array);
  int bad = 0;
  std::ostringstream os;
  for (int64_t i = 0; i < want.size(); ++i) {
    const double w = want[i], g = got[i];
    bool ok = (std::isnan(w) && std::isnan(g)) || w == g ||
              (std::isfinite(w) && std::fabs(g - w) <= atol + rtol * std::fabs(w));
    if (!ok && bad++ < 5) os << "\n  [" << i << "] got " << g << ", reference " << w;
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << bad << " of " << want.size() << " elements differ" << os.str();
}

std::vector<NDArray> Copies(const std::vector<NDArray>& arrays) {
  std::vector<NDArray> copies;
  for (const NDArray& a : arrays) copies.push_back(a.Copy());
  return copies;
}

namespace {

using testing_util::BitDifference;

std::string Describe(const OpCase& c) {
  std::ostringstream os;
  os << c.op << " {";
  bool first = true;
  for (const auto& kv : c.attrs) {
    os << (first ? "" : ", ") << kv.first << ": " << kv.second;
    first = false;
  }
  os << "} inputs";
  for (const Shape& s : c.inputs) os << " " << s;
  return os.str();
}

// Whether the case's op updates inputs in place (an optimizer update's states): its reference
// says so by returning, after the outputs, the value of every input after the call.
bool UpdatesInputs(const OpCase& c, const std::vector<NDArray>& inputs) {
  if (!c.reference || c.statistics) return false;
  std::vector<RefTensor> ref_in;
  for (const auto& a : inputs) ref_in.push_back(ToRef(a));
  const size_t num_outputs = OpRegistry::Global().Get(c.op).NumOutputs(CaseAttrs(c));
  return c.reference(ref_in).size() == num_outputs + inputs.size();
}

// `fresh_inputs`: each run gets its own copy of the inputs (ops that update them in place).
std::vector<NDArray> RunGraph(const CaseGraph& g, const std::vector<NDArray>& inputs, bool fuse,
                              bool plan_memory = true, bool fresh_inputs = false) {
  ExecutorOptions options;
  options.fuse = fuse;
  options.plan_memory = plan_memory;
  GraphExecutor exec(g.symbol, g.data_names, {}, options);
  Seed(kCaseSeed);
  std::vector<NDArray> first = exec.Forward(fresh_inputs ? Copies(inputs) : inputs);
  // A second run reuses the planned memory: results must not depend on what it held.
  Seed(kCaseSeed);
  std::vector<NDArray> second = exec.Forward(fresh_inputs ? Copies(inputs) : inputs);
  EXPECT_EQ(first.size(), second.size());
  for (size_t i = 0; i < first.size() && i < second.size(); ++i) {
    EXPECT_EQ(BitDifference(first[i], second[i]), "") << "second Forward differs, output " << i;
  }
  return first;
}

// ---- the parameterized tests -------------------------------------------------------------------

class OpConformance : public ::testing::TestWithParam<size_t> {
 protected:
  const OpCase& TheCase() const { return AllCases()[GetParam()]; }
  const std::string& Name() const { return CaseNames()[GetParam()]; }
  std::vector<NDArray> Inputs() const { return MakeInputs(TheCase(), Name()); }
  std::vector<NDArray> Eager(const std::vector<NDArray>& inputs) const {
    Seed(kCaseSeed);
    return RunEager(TheCase(), inputs);
  }
  // What the graph executor (inference only) must reproduce bit for bit.
  std::vector<NDArray> EagerInference(const std::vector<NDArray>& inputs) const {
    Seed(kCaseSeed);
    return Invoke(CaseAttrs(TheCase()), inputs);
  }
};

// A case whose op multiplies int8 data by int8 weights: oneDNN sums those products exactly only
// with VNNI or AMX (OneDnnSumsInt8Exactly); elsewhere in saturating 16-bit pairs, as MXNet does.
bool SumsInt8Products(const OpCase& c, const std::vector<NDArray>& inputs) {
  static const std::set<std::string> kOps{
      "_contrib_quantized_conv",    "_contrib_quantized_fully_connected", "_sg_mkldnn_conv",
      "_sg_onednn_conv",            "_sg_mkldnn_fully_connected",         "_sg_onednn_fully_connected"};
  return kOps.count(c.op) != 0 && !inputs.empty() &&
         (inputs[0].dtype() == DType::kInt8 || inputs[0].dtype() == DType::kUint8);
}

TEST_P(OpConformance, EagerMatchesReference) {
  const OpCase& c = TheCase();
  SCOPED_TRACE(Describe(c));
  std::vector<NDArray> inputs = Inputs();
  if (SumsInt8Products(c, inputs) && !internal::OneDnnSumsInt8Exactly()) {
    GTEST_SKIP() << "this CPU has no VNNI or AMX: oneDNN sums int8 products in saturating 16-bit "
                    "pairs, not the reference's exact sums (README, int8)";
  }
  std::vector<RefTensor> ref_in;
  for (const auto& a : inputs) ref_in.push_back(ToRef(a));
  std::vector<NDArray> got = Eager(inputs);
  if (c.statistics) {
    std::vector<RefTensor> got_ref;
    for (const auto& a : got) got_ref.push_back(ToRef(a));
    const std::string failure = c.statistics(ref_in, got_ref);
    EXPECT_TRUE(failure.empty()) << failure;
    return;
  }
  std::vector<RefTensor> want = c.reference(ref_in);
  const bool updates_inputs = want.size() == got.size() + inputs.size();
  ASSERT_TRUE(updates_inputs || want.size() == got.size()) << "number of outputs";
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(Near(want[i], got[i], c.rtol, c.atol)) << "output " << i;
  }
  for (size_t i = 0; updates_inputs && i < inputs.size(); ++i) {
    EXPECT_TRUE(Near(want[got.size() + i], inputs[i], c.rtol, c.atol))
        << "input " << i << " after the call";
  }
}

TEST_P(OpConformance, GraphMatchesEagerBitExact) {
  const OpCase& c = TheCase();
  SCOPED_TRACE(Describe(c));
  std::vector<NDArray> inputs = Inputs();
  const bool updates_inputs = UpdatesInputs(c, inputs);
  std::vector<NDArray> eager = EagerInference(updates_inputs ? Copies(inputs) : inputs);
  CaseGraph g = BuildGraph(c);
  for (bool fuse : {true, false}) {
    for (bool plan_memory : {true, false}) {
      SCOPED_TRACE(std::string("fuse=") + (fuse ? "true" : "false") +
                   " plan_memory=" + (plan_memory ? "true" : "false"));
      std::vector<NDArray> graph = RunGraph(g, inputs, fuse, plan_memory, updates_inputs);
      ASSERT_EQ(graph.size(), eager.size());
      for (size_t i = 0; i < eager.size(); ++i) EXPECT_EQ(BitDifference(eager[i], graph[i]), "");
    }
  }
  // The inputs must be left untouched by both paths.
  std::vector<NDArray> fresh = Inputs();
  for (size_t i = 0; i < inputs.size(); ++i) EXPECT_EQ(BitDifference(fresh[i], inputs[i]), "");
}

// `partial` must agree with `truth` wherever it is known.
::testing::AssertionResult Compatible(const Shape& truth, const Shape& partial) {
  if (partial.ndim() == 0) return ::testing::AssertionSuccess();
  Shape merged = partial;
  if (MergeShape(truth, &merged) && merged == truth) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "inferred " << partial << ", actual " << truth;
}

TEST_P(OpConformance, InferenceMatchesOutputs) {
  const OpCase& c = TheCase();
  SCOPED_TRACE(Describe(c));
  std::vector<NDArray> inputs = Inputs();
  std::vector<NDArray> eager = Eager(inputs);
  const Op& op = OpRegistry::Global().Get(c.op);
  NodeAttrs attrs = CaseAttrs(c);

  std::vector<Shape> in_shapes = c.inputs;
  std::vector<DType> in_types;
  for (size_t i = 0; i < c.inputs.size(); ++i) in_types.push_back(InputDType(c, i));
  std::vector<Shape> out_shapes;
  std::vector<DType> out_types;
  InferOutputs(attrs, &in_shapes, &in_types, &out_shapes, &out_types);
  ASSERT_EQ(out_shapes.size(), eager.size());
  for (size_t i = 0; i < eager.size(); ++i) {
    EXPECT_EQ(out_shapes[i], eager[i].shape()) << "output " << i;
    EXPECT_EQ(out_types[i], eager[i].dtype()) << "output " << i;
  }
  std::vector<Shape> true_out;
  std::vector<DType> true_out_types;
  for (const auto& e : eager) {
    true_out.push_back(e.shape());
    true_out_types.push_back(e.dtype());
  }

  // Partial shape inference: one (or every) input unknown, outputs unknown or known.
  const size_t n = c.inputs.size();
  for (size_t hide = 0; hide <= n; ++hide) {
    for (bool outputs_known : {false, true}) {
      SCOPED_TRACE("unknown input " + (hide == n ? std::string("all") : std::to_string(hide)) +
                   (outputs_known ? ", outputs known" : ", outputs unknown"));
      std::vector<Shape> ins = c.inputs;
      for (size_t i = 0; i < n; ++i)
        if (i == hide || hide == n) ins[i] = Shape();
      std::vector<Shape> outs = outputs_known ? true_out : std::vector<Shape>(eager.size());
      EXPECT_NO_THROW(op.infer_shape(attrs, &ins, &outs));
      for (size_t i = 0; i < n; ++i) {
        if (!c.inputs_inferable && (i == hide || hide == n)) continue;
        EXPECT_TRUE(Compatible(c.inputs[i], ins[i])) << "input " << i;
      }
      for (size_t i = 0; i < outs.size(); ++i) EXPECT_TRUE(Compatible(true_out[i], outs[i]));

      std::vector<DType> tins = in_types;
      for (size_t i = 0; i < n; ++i)
        if (i == hide || hide == n) tins[i] = DType::kUnknown;
      std::vector<DType> touts =
          outputs_known ? true_out_types : std::vector<DType>(eager.size(), DType::kUnknown);
      EXPECT_NO_THROW(op.infer_type(attrs, &tins, &touts));
      for (size_t i = 0; i < n; ++i) {
        EXPECT_TRUE(tins[i] == DType::kUnknown || tins[i] == in_types[i]) << "input " << i;
      }
      for (size_t i = 0; i < touts.size(); ++i) {
        EXPECT_TRUE(touts[i] == DType::kUnknown || touts[i] == true_out_types[i]);
      }
    }
  }
}

// Internal ops are never written to JSON: only the other cases get this suite.
class OpJsonRoundTrip : public OpConformance {};

std::vector<size_t> JsonCaseIndices() {
  std::vector<size_t> indices;
  for (size_t i = 0; i < AllCases().size(); ++i)
    if (AllCases()[i].check_json) indices.push_back(i);
  return indices;
}

TEST_P(OpJsonRoundTrip, JsonRoundTrip) {
  const OpCase& c = TheCase();
  SCOPED_TRACE(Describe(c));
  CaseGraph g = BuildGraph(c);
  const std::string json = g.symbol.ToJSON();
  CaseGraph reloaded{Symbol::FromJSON(json), g.data_names};
  EXPECT_EQ(reloaded.symbol.ToJSON(), json);
  EXPECT_EQ(reloaded.symbol.ListArguments(), g.symbol.ListArguments());
  std::vector<NDArray> inputs = Inputs();
  const bool fresh = UpdatesInputs(c, inputs);
  std::vector<NDArray> eager = EagerInference(fresh ? Copies(inputs) : inputs);
  std::vector<NDArray> graph = RunGraph(reloaded, inputs, /*fuse=*/true, true, fresh);
  ASSERT_EQ(graph.size(), eager.size());
  for (size_t i = 0; i < eager.size(); ++i) EXPECT_EQ(BitDifference(eager[i], graph[i]), "");
}

std::string CaseName(const ::testing::TestParamInfo<size_t>& param_info) {
  return CaseNames()[param_info.param];
}

INSTANTIATE_TEST_SUITE_P(Ops, OpConformance, ::testing::Range<size_t>(0, AllCases().size()),
                         CaseName);
INSTANTIATE_TEST_SUITE_P(Ops, OpJsonRoundTrip, ::testing::ValuesIn(JsonCaseIndices()), CaseName);

// ---- gradients
// -----------------------------------------------------------------------------------

// The seed of the head gradients of case `index`'s gradient check.
uint32_t HeadGradientSeed(size_t index) { return static_cast<uint32_t>(index) * 2654435761u + 17u; }

std::vector<size_t> GradientCaseIndices() {
  std::vector<size_t> indices;
  for (size_t i = 0; i < AllCases().size(); ++i)
    if (GradientChecked(AllCases()[i], MakeInputs(AllCases()[i], CaseNames()[i]))) {
      indices.push_back(i);
    }
  return indices;
}

class OpGradient : public OpConformance {
 protected:
  // The case's inputs, float ones in float64 when the op takes that (the check is then exact to
  // float64's precision), else as the case has them.
  void SetUp() override {
    const OpCase& c = TheCase();
    attrs_ = CaseAttrs(c);
    inputs_ = Inputs();
    std::vector<NDArray> wide;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      const bool differentiable = Differentiable(attrs_, i, inputs_[i]);
      differentiable_.push_back(differentiable);
      wide.push_back(differentiable ? inputs_[i].AsType(DType::kFloat64) : inputs_[i]);
    }
    autograd::ModeScope mode(std::nullopt, c.is_train);
    try {
      Invoke(attrs_, wide);
      inputs_ = wide;
      float64_ = true;
    } catch (const Error&) {
      float64_ = false;  // a float32-only op: finite differences of the reference instead
    }
    out_grads_ = HeadGradients(Invoke(attrs_, inputs_), HeadGradientSeed(GetParam()));
  }

  std::vector<NDArray> Backward() const {
    return EagerGradients(attrs_, inputs_, differentiable_, out_grads_, TheCase().is_train);
  }

  // sum_k <out_grads_k, f_k(x)>, f the op in float64 or the case's reference.
  double Objective(const std::vector<RefTensor>& x) const {
    autograd::ModeScope mode(std::nullopt, TheCase().is_train);
    std::vector<RefTensor> y;
    if (float64_) {
      std::vector<NDArray> arrays;
      for (size_t i = 0; i < x.size(); ++i) {
        arrays.push_back(NDArray::FromBuffer(x[i].shape, DType::kFloat64, x[i].v.data())
                             .AsType(inputs_[i].dtype()));
      }
      for (const NDArray& a : Invoke(attrs_, arrays)) y.push_back(ToRef(a));
    } else {
      y = TheCase().reference(x);
    }
    double sum = 0.0;
    for (size_t k = 0; k < y.size(); ++k) {
      if (out_grads_[k].is_none()) continue;
      const RefTensor w = ToRef(out_grads_[k]);
      for (int64_t j = 0; j < w.size(); ++j) sum += w[j] * y[k][j];
    }
    return sum;
  }

  NodeAttrs attrs_;
  std::vector<NDArray> inputs_;
  std::vector<bool> differentiable_;
  std::vector<NDArray> out_grads_;  // none for outputs that are not float
  bool float64_ = false;
};

TEST_P(OpGradient, MatchesFiniteDifferences) {
  const OpCase& c = TheCase();
  SCOPED_TRACE(Describe(c) + (float64_ ? " (float64)" : " (reference)"));
  const std::vector<NDArray> grads = Backward();
  std::vector<RefTensor> x;
  for (const NDArray& a : inputs_) x.push_back(ToRef(a));
  std::vector<RefTensor> declared;
  if (c.gradient_reference) {
    std::vector<RefTensor> w;
    for (const NDArray& a : out_grads_) w.push_back(a.is_none() ? RefTensor() : ToRef(a));
    declared = c.gradient_reference(x, w);
  }
  // Central differences at up to kProbes positions per input, spread over it. The reference
  // path rounds like the float32 kernels it describes, hence its larger step and tolerances. A
  // probe where the function is not differentiable (one-sided differences disagree: a kink or a
  // jump, as at the ties of comparison and rounding cases) or not finite is skipped.
  constexpr int64_t kProbes = 24;
  const double step = float64_ ? 1e-6 : 1e-3;
  const double tol = float64_ ? 1e-5 : 2e-3;
  const double kink = float64_ ? 1e-3 : 5e-2;
  const double at_x = c.gradient_reference ? 0.0 : Objective(x);
  int64_t checked = 0;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (!differentiable_[i]) continue;
    SCOPED_TRACE("input " + std::to_string(i));
    ASSERT_FALSE(grads[i].is_none());
    const RefTensor got = ToRef(grads[i]);
    ASSERT_EQ(got.shape, x[i].shape);
    const int64_t n = x[i].size();
    const int64_t probes = std::min(n, kProbes);
    std::vector<std::pair<int64_t, double>> want;
    double scale = 1.0;
    for (int64_t p = 0; p < probes; ++p) {
      const int64_t j = p * n / probes;
      double d;
      if (c.gradient_reference) {
        d = declared[i][j];
      } else {
        std::vector<RefTensor> moved = x;
        const double h = step * std::max(1.0, std::fabs(x[i][j]));
        moved[i][j] = x[i][j] + h;
        const double up = Objective(moved);
        moved[i][j] = x[i][j] - h;
        const double down = Objective(moved);
        d = (up - down) / (2 * h);
        const double right = (up - at_x) / h, left = (at_x - down) / h;
        if (!std::isfinite(d) || std::fabs(right - left) > kink * std::max(1.0, std::fabs(d))) {
          continue;
        }
      }
      want.emplace_back(j, d);
      scale = std::max(scale, std::fabs(d));
    }
    checked += static_cast<int64_t>(want.size());
    int bad = 0;
    for (const auto& [j, d] : want) {
      const bool ok = std::fabs(got[j] - d) <= tol * scale + tol * std::fabs(d);
      if (!ok && bad++ < 5) {
        ADD_FAILURE() << "element " << j << ": backward " << got[j] << ", expected " << d;
      }
    }
  }
  EXPECT_GT(checked, 0) << "every probe is at a kink, a jump or a singularity: mark the case "
                           "NoGradientCheck, saying why";
}

// The gradient pass over the case's one-op graph, run by GraphExecutor, gives eager backward's
// bits (the same gradient declaration, the same kernels), in the case's mode.
TEST_P(OpGradient, GraphMatchesEagerBitExact) {
  const OpCase& c = TheCase();
  SCOPED_TRACE(Describe(c));
  const std::vector<NDArray> eager = Backward();
  CaseGraph g = BuildGraph(c);
  const std::shared_ptr<Node>& op_node = g.symbol.outputs[0].node;
  std::vector<NodeEntry> heads, head_grads, xs;
  std::map<std::string, NDArray> feed;
  for (size_t k = 0; k < g.symbol.outputs.size(); ++k) {
    if (out_grads_[k].is_none()) continue;
    heads.push_back(g.symbol.outputs[k]);
    Symbol var = Symbol::Var("head_grad_" + std::to_string(k));
    head_grads.push_back(var.outputs[0]);
    feed[var.outputs[0].node->name()] = out_grads_[k];
  }
  std::vector<size_t> wrt;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    feed[op_node->inputs[i].node->name()] = inputs_[i];
    if (!differentiable_[i]) continue;
    xs.push_back(op_node->inputs[i]);
    wrt.push_back(i);
  }
  Symbol gradients;
  gradients.outputs = internal::Gradient(heads, head_grads, xs);
  std::vector<std::string> data_names = gradients.ListInputs();
  for (bool fuse : {true, false}) {
    SCOPED_TRACE(fuse ? "fused" : "unfused");
    // Copies: a backward in training mode updates BatchNorm's moving statistics.
    std::vector<NDArray> data;
    for (const auto& name : data_names) data.push_back(feed.at(name).Copy());
    ExecutorOptions options;
    options.fuse = fuse;
    options.is_train = c.is_train;
    GraphExecutor exec(gradients, data_names, {}, options);
    std::vector<NDArray> graph = exec.Forward(data);
    ASSERT_EQ(graph.size(), wrt.size());
    for (size_t j = 0; j < wrt.size(); ++j) {
      EXPECT_EQ(BitDifference(eager[wrt[j]], graph[j]), "") << "input " << wrt[j];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, OpGradient, ::testing::ValuesIn(GradientCaseIndices()), CaseName);

// ---- registry lint -----------------------------------------------------------------------------

TEST(OpRegistryLint, EveryOpIsComplete) {
  for (const Op* op : OpRegistry::Global().List()) {
    SCOPED_TRACE(op->name);
    if (!op->internal) {
      EXPECT_FALSE(op->description.empty()) << "no description";
    }
    EXPECT_TRUE(static_cast<bool>(op->infer_shape)) << "no infer_shape";
    EXPECT_TRUE(static_cast<bool>(op->infer_type)) << "no infer_type";
    EXPECT_TRUE(static_cast<bool>(op->compute)) << "no compute";
    for (const auto& alias : op->aliases) {
      EXPECT_EQ(OpRegistry::Global().Find(alias), op) << "alias " << alias;
    }
  }
}

TEST(OpRegistryLint, EveryOpHasAConformanceCase) {
  std::set<std::string> covered;
  for (const OpCase& c : AllCases()) {
    const Op* op = OpRegistry::Global().Find(c.op);
    ASSERT_NE(op, nullptr) << "conformance case for unknown op " << c.op;
    covered.insert(op->name);
  }
  for (const Op* op : OpRegistry::Global().List()) {
    EXPECT_TRUE(covered.count(op->name))
        << "op '" << op->name << "' has no conformance case (add one to tests/ops/*_cases.cc)";
  }
}

TEST(OpRegistryLint, EveryGradientHasAGradientCase) {
  std::set<std::string> checked;
  for (size_t i : GradientCaseIndices())
    checked.insert(OpRegistry::Global().Get(AllCases()[i].op).name);
  for (const Op* op : OpRegistry::Global().List()) {
    if (!op->gradient) continue;
    EXPECT_TRUE(checked.count(op->name))
        << "op '" << op->name << "' declares a gradient but no case checks it (add a float "
        << "case to tests/ops/*_cases.cc, or give its declared gradient with WithGradient)";
  }
}

TEST(OpRegistryLint, CaseNamesAreUnique) {
  std::set<std::string> names(CaseNames().begin(), CaseNames().end());
  EXPECT_EQ(names.size(), CaseNames().size());
}

// ---- bad input through Invoke ------------------------------------------------------------------

class OpRejects : public ::testing::TestWithParam<size_t> {};

TEST_P(OpRejects, WithTheStatusAndAMessageNamingTheProblem) {
  const ErrorCase& c = AllErrorCases()[GetParam()];
  std::vector<NDArray> inputs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    inputs.push_back(
        NDArray::Zeros(c.inputs[i], i < c.dtypes.size() ? c.dtypes[i] : DType::kFloat32));
  }
  try {
    if (c.outputs.empty()) {
      Invoke(c.op, inputs, c.attrs, "node");
    } else {
      NodeAttrs attrs = MakeNodeAttrs(c.op, "node", c.attrs);
      std::vector<Shape> in = c.inputs, out = c.outputs;
      attrs.op->infer_shape(attrs, &in, &out);
    }
    ADD_FAILURE() << c.op << ": no error raised";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), c.code) << e.what();
    for (const auto& needle : c.needles) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
          << "message '" << e.what() << "' does not mention '" << needle << "'";
    }
  }
}

std::string ErrorCaseName(const ::testing::TestParamInfo<size_t>& param_info) {
  std::string name = AllErrorCases()[param_info.param].op + "_" + std::to_string(param_info.param);
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Ops, OpRejects, ::testing::Range<size_t>(0, AllErrorCases().size()),
                         ErrorCaseName);

// ---- shape inference from partial shapes -------------------------------------------------------

class OpInfers : public ::testing::TestWithParam<size_t> {};

TEST_P(OpInfers, WhatThePartialShapesDetermine) {
  const InferenceCase& c = AllInferenceCases()[GetParam()];
  const Op& op = OpRegistry::Global().Get(c.op);
  NodeAttrs attrs = MakeNodeAttrs(op, "node", c.attrs);
  std::vector<Shape> in = c.inputs, out = c.outputs;
  EXPECT_EQ(op.infer_shape(attrs, &in, &out), c.complete);
  EXPECT_EQ(in, c.want_inputs);
  EXPECT_EQ(out, c.want_outputs);
}

std::string InferenceCaseName(const ::testing::TestParamInfo<size_t>& param_info) {
  const InferenceCase& c = AllInferenceCases()[param_info.param];
  std::string name = c.op + "_" + c.note;
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Ops, OpInfers, ::testing::Range<size_t>(0, AllInferenceCases().size()),
                         InferenceCaseName);

// Runs `fn`, expecting an Error with `code` whose message contains every string of `needles`.
template <typename F>
void ExpectError(F fn, StatusCode code, const std::vector<std::string>& needles) {
  try {
    fn();
    ADD_FAILURE() << "no error thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    for (const auto& n : needles) {
      EXPECT_NE(std::string(e.what()).find(n), std::string::npos)
          << "message '" << e.what() << "' does not mention '" << n << "'";
    }
  }
}

NDArray Filled(const Shape& s, float v = 1.f) { return NDArray::Full(s, v); }

TEST(OpErrors, UnknownOpIsNotFound) {
  ExpectError([] { Invoke("NoSuchOperator", {Filled({2})}); }, StatusCode::kNotFound,
              {"NoSuchOperator"});
}

TEST(OpErrors, MissingRequiredAttribute) {
  ExpectError(
      [] {
        Invoke("FullyConnected", {Filled({2, 3}), Filled({4, 3}), Filled({4})});
      },
      StatusCode::kInvalidArgument, {"FullyConnected", "num_hidden"});
  ExpectError([] { Invoke("Activation", {Filled({2})}); }, StatusCode::kInvalidArgument,
              {"Activation", "act_type"});
  ExpectError(
      [] {
        Invoke("clip", {Filled({2})}, {{"a_min", "0"}});
      },
      StatusCode::kInvalidArgument, {"clip", "a_max"});
}

TEST(OpErrors, BadAttributeValue) {
  ExpectError(
      [] {
        Invoke("FullyConnected", {Filled({2, 3}), Filled({4, 3}), Filled({4})},
               {{"num_hidden", "abc"}}, "fc1");
      },
      StatusCode::kInvalidArgument, {"FullyConnected", "fc1", "num_hidden", "abc"});
  ExpectError(
      [] {
        Invoke("Activation", {Filled({2})}, {{"act_type", "swish"}});
      },
      StatusCode::kInvalidArgument, {"Activation", "act_type", "swish"});
  ExpectError(
      [] {
        Invoke("FullyConnected", {Filled({2, 3}), Filled({4, 3})},
               {{"num_hidden", "4"}, {"no_bias", "maybe"}});
      },
      StatusCode::kInvalidArgument, {"no_bias", "maybe"});
  ExpectError(
      [] {
        Invoke("FullyConnected", {Filled({2, 3}), Filled({4, 3}), Filled({4})},
               {{"num_hidden", "0"}});
      },
      StatusCode::kInvalidArgument, {"num_hidden", "0"});
  ExpectError(
      [] {
        Invoke("Reshape", {Filled({2, 3})}, {{"shape", "(2, x)"}});
      },
      StatusCode::kInvalidArgument, {"Reshape", "shape"});
  ExpectError(
      [] {
        Invoke("Cast", {Filled({2, 3})}, {{"dtype", "float128"}});
      },
      StatusCode::kInvalidArgument, {"Cast", "dtype", "float128"});
}

TEST(OpErrors, UnknownAttributeKey) {
  ExpectError(
      [] {
        Invoke("relu", {Filled({2})}, {{"slope", "0.1"}});
      },
      StatusCode::kInvalidArgument, {"relu", "slope"});
  ExpectError(
      [] {
        Invoke("FullyConnected", {Filled({2, 3}), Filled({4, 3}), Filled({4})},
               {{"num_hidden", "4"}, {"num_hiden", "4"}});
      },
      StatusCode::kInvalidArgument, {"FullyConnected", "num_hiden"});
  // Hidden keys (__x__) are accepted everywhere.
  EXPECT_NO_THROW(Invoke("relu", {Filled({2})}, {{"__lr_mult__", "0.1"}}));
}

TEST(OpErrors, WrongInputCount) {
  ExpectError([] { Invoke("elemwise_add", {Filled({2})}); }, StatusCode::kInvalidArgument,
              {"elemwise_add"});
}

TEST(OpErrors, NonFloatInputToFloatOnlyOp) {
  NDArray ints = NDArray::Zeros({2, 3}, DType::kInt32);
  ExpectError(
      [&] {
        Invoke("Activation", {ints}, {{"act_type", "relu"}});
      },
      StatusCode::kTypeError, {"Activation", "int32"});
  ExpectError(
      [&] {
        Invoke("elemwise_add", {Filled({2, 3}), ints});
      },
      StatusCode::kTypeError, {"elemwise_add"});
  ExpectError(
      [&] {
        Invoke("FullyConnected", {ints, Filled({4, 3}), Filled({4})}, {{"num_hidden", "4"}});
      },
      StatusCode::kTypeError, {"FullyConnected"});
  // Cast is the one op that takes every dtype.
  EXPECT_EQ(Invoke("Cast", {ints}, {{"dtype", "float32"}})[0].dtype(), DType::kFloat32);
}

TEST(OpErrors, UnsupportedSoftmaxOptions) {
  ExpectError(
      [] {
        Invoke("softmax", {Filled({2, 3}), Filled({2})}, {{"use_length", "True"}});
      },
      StatusCode::kTypeError, {"softmax", "length", "integer"});
  ExpectError(
      [] {
        Invoke("softmax", {Filled({2, 3})}, {{"dtype", "float16"}});
      },
      StatusCode::kUnsupported, {"softmax", "float16"});
}

// ---- behaviour beyond one-op cases -------------------------------------------------------------

// FullyConnected + Activation fused by the executor is bit-identical to the two eager ops, on
// every dense kernel's usual shapes (32 rows of 20 outputs: oneDNN's inner product, whose relu is
// a post-op), NaN and -0 in the data included.
TEST(FusedFullyConnected, BitIdenticalToFullyConnectedThenActivation) {
  for (const char* act : {"relu", "sigmoid", "tanh", "softrelu", "softsign"}) {
    for (int64_t batch : {1, 3, 32}) {
      for (bool no_bias : {false, true}) {
        SCOPED_TRACE(std::string(act) + " batch " + std::to_string(batch) +
                     (no_bias ? " no_bias" : ""));
        Seed(static_cast<uint64_t>(batch) * 7 + (no_bias ? 1 : 0));
        const int64_t hidden = batch == 32 ? 20 : 6;
        NDArray x = NDArray::RandomNormal({batch, 2, 5});
        if (batch == 32) {
          x.data<float>()[0] = std::numeric_limits<float>::quiet_NaN();
          for (int64_t i = 10; i < 20; ++i) x.data<float>()[i] = -0.f;
        }
        NDArray w = NDArray::RandomNormal({hidden, 10});
        NDArray b = NDArray::RandomNormal({hidden});
        AttrDict fc_attrs{{"num_hidden", std::to_string(hidden)},
                          {"no_bias", no_bias ? "True" : "False"}};
        std::vector<NDArray> fc_in{x, w};
        if (!no_bias) fc_in.push_back(b);
        NDArray fc_out = Invoke("FullyConnected", fc_in, fc_attrs)[0];
        NDArray chain = Invoke("Activation", {fc_out}, {{"act_type", act}})[0];
        AttrDict fused_attrs = fc_attrs;
        fused_attrs["act_type"] = act;
        NDArray fused = Invoke("_hn_fully_connected_act", fc_in, fused_attrs)[0];
        EXPECT_EQ(BitDifference(chain, fused), "");

        Symbol data = Symbol::Var("data");
        Symbol fc = Symbol::Create("FullyConnected", {data}, fc_attrs, "fc");
        Symbol out = Symbol::Create("Activation", {fc}, {{"act_type", act}}, "act");
        std::map<std::string, NDArray> params{{"fc_weight", w}};
        if (!no_bias) params["fc_bias"] = b;
        for (bool fuse : {true, false}) {
          ExecutorOptions options;
          options.fuse = fuse;
          GraphExecutor exec(out, {"data"}, params, options);
          std::vector<NDArray> y = exec.Forward({x});
          ASSERT_EQ(y.size(), 1u);
          EXPECT_EQ(BitDifference(chain, y[0]), "") << "fuse=" << fuse;
          EXPECT_EQ(exec.stats().num_fused, fuse ? 1u : 0u);
        }
      }
    }
  }
}

TEST(Dropout, IdentityAtInference) {
  NDArray x = NDArray::RandomNormal({4, 5});
  NDArray y = Invoke("Dropout", {x}, {{"p", "0.5"}})[0];
  EXPECT_EQ(BitDifference(x, y), "");
}

TEST(Dropout, ModeAlwaysDropsAndScales) {
  NDArray x = NDArray::Full({64, 64}, 1.0);
  NDArray y = Invoke("Dropout", {x}, {{"p", "0.25"}, {"mode", "always"}})[0];
  const float* v = y.data<float>();
  int64_t kept = 0;
  for (int64_t i = 0; i < y.size(); ++i) {
    ASSERT_TRUE(v[i] == 0.f || v[i] == 1.f / 0.75f) << v[i];
    kept += v[i] != 0.f;
  }
  double fraction = static_cast<double>(kept) / static_cast<double>(y.size());
  EXPECT_NEAR(fraction, 0.75, 0.03);
  // Seeded by the global generator: the same seed gives the same mask.
  Seed(11);
  NDArray first = Invoke("Dropout", {x}, {{"p", "0.25"}, {"mode", "always"}})[0];
  Seed(11);
  EXPECT_EQ(BitDifference(first, Invoke("Dropout", {x}, {{"p", "0.25"}, {"mode", "always"}})[0]),
            "");
}

TEST(Dropout, AxesShareTheMask) {
  NDArray x = NDArray::Full({8, 6, 5}, 1.0);
  NDArray y = Invoke("Dropout", {x}, {{"p", "0.5"}, {"mode", "always"}, {"axes", "(1,)"}})[0];
  const float* v = y.data<float>();
  int64_t zeros = 0;
  for (int64_t a = 0; a < 8; ++a) {
    for (int64_t c = 0; c < 5; ++c) {
      const float first = v[(a * 6) * 5 + c];
      zeros += first == 0.f;
      for (int64_t b = 1; b < 6; ++b) EXPECT_EQ(v[(a * 6 + b) * 5 + c], first);
    }
  }
  EXPECT_GT(zeros, 0);
  EXPECT_LT(zeros, 40);
}

}  // namespace
}  // namespace conformance
}  // namespace hybridnet
