// The registered conformance and error cases, their names and inputs, shared by the conformance
// tests (conformance.cc) and the case export the live-MXNet check reads (tests/golden/ops).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <set>

#include "conformance.h"
#include "hybridnet/autograd.h"
#include "hybridnet/imperative.h"
#include "hybridnet/op.h"

namespace hybridnet {
namespace conformance {

std::vector<OpCase>& AllCases() {
  static std::vector<OpCase> cases;
  return cases;
}

std::vector<ErrorCase>& AllErrorCases() {
  static std::vector<ErrorCase> cases;
  return cases;
}

std::vector<InferenceCase>& AllInferenceCases() {
  static std::vector<InferenceCase> cases;
  return cases;
}

namespace {

std::string Sanitize(const std::string& s) {
  std::string out;
  for (char ch : s) {
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
    out += ok ? ch : '_';
  }
  return out;
}

uint32_t Fnv1a(const std::string& s) {
  uint32_t h = 2166136261u;
  for (unsigned char ch : s) {
    h ^= ch;
    h *= 16777619u;
  }
  return h;
}

}  // namespace

const std::vector<std::string>& CaseNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> result;
    std::map<std::string, int> per_op;
    std::set<std::string> used;
    for (const OpCase& c : AllCases()) {
      int k = per_op[c.op]++;
      std::string name =
          Sanitize(c.op) + "_" + (c.note.empty() ? std::to_string(k) : Sanitize(c.note));
      while (used.count(name)) name += "_" + std::to_string(k);
      used.insert(name);
      result.push_back(name);
    }
    return result;
  }();
  return names;
}

DType InputDType(const OpCase& c, size_t i) {
  return i < c.dtypes.size() ? c.dtypes[i] : DType::kFloat32;
}

std::vector<NDArray> MakeInputs(const OpCase& c, const std::string& name) {
  std::mt19937 rng(Fnv1a(name));
  InputGen gen = c.gen ? c.gen : Uniform(-2.0, 2.0);
  std::vector<NDArray> arrays;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    std::vector<double> values(static_cast<size_t>(c.inputs[i].Size()));
    for (size_t j = 0; j < values.size(); ++j) values[j] = gen(rng, i, static_cast<int64_t>(j));
    NDArray f64 = NDArray::FromBuffer(c.inputs[i], DType::kFloat64, values.data());
    arrays.push_back(f64.AsType(InputDType(c, i)));
  }
  return arrays;
}

NodeAttrs CaseAttrs(const OpCase& c) {
  NodeAttrs attrs = c.typed_attrs ? c.typed_attrs(c.attrs) : MakeNodeAttrs(c.op, "node", c.attrs);
  if (c.subgraphs) {
    for (const Symbol& g : c.subgraphs())
      attrs.subgraphs.push_back(std::make_shared<const Symbol>(g));
  }
  return attrs;
}

RefTensor ToRef(const NDArray& a) {
  RefTensor t(a.shape());
  NDArray f64 = a.AsType(DType::kFloat64);
  std::memcpy(t.v.data(), f64.raw_data(), t.v.size() * sizeof(double));
  return t;
}

namespace {

bool AllFinite(const NDArray& a) {
  const RefTensor t = ToRef(a);
  return std::all_of(t.v.begin(), t.v.end(), [](double v) { return std::isfinite(v); });
}

bool IsFloat(DType d) { return d == DType::kFloat32 || d == DType::kFloat64; }

}  // namespace

bool Differentiable(const NodeAttrs& attrs, size_t i, const NDArray& x) {
  const std::vector<uint32_t>& state = attrs.op->mutable_inputs;
  return IsFloat(x.dtype()) && x.size() > 0 &&
         std::find(state.begin(), state.end(), i) == state.end();
}

bool GradientChecked(const OpCase& c, const std::vector<NDArray>& inputs) {
  const Op* op = OpRegistry::Global().Find(c.op);
  if (op == nullptr || !op->gradient || c.statistics || c.subgraphs || !c.gradient_skip.empty()) {
    return false;
  }
  bool float_input = false;
  for (const NDArray& x : inputs) {
    if (!IsFloat(x.dtype())) continue;
    if (!AllFinite(x)) return false;
    float_input = float_input || x.size() > 0;
  }
  bool float_output = false;
  for (const NDArray& y : Invoke(CaseAttrs(c), inputs)) {
    if (!IsFloat(y.dtype())) continue;
    if (!AllFinite(y)) return false;
    float_output = true;
  }
  return float_input && float_output;
}

std::vector<NDArray> HeadGradients(const std::vector<NDArray>& outputs, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<NDArray> head_grads;
  for (const NDArray& y : outputs) {
    if (!IsFloat(y.dtype())) {
      head_grads.emplace_back();
      continue;
    }
    std::vector<double> w(static_cast<size_t>(y.size()));
    for (double& v : w) v = std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
    head_grads.push_back(
        NDArray::FromBuffer(y.shape(), DType::kFloat64, w.data()).AsType(y.dtype()));
  }
  return head_grads;
}

std::vector<NDArray> EagerGradients(const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                                    const std::vector<bool>& differentiable,
                                    const std::vector<NDArray>& head_grads, bool train) {
  std::vector<NDArray> vars;
  for (size_t i = 0; i < inputs.size(); ++i) {
    vars.push_back(inputs[i].Copy());
    if (differentiable[i]) autograd::AttachGrad(&vars[i]);
  }
  std::vector<NDArray> outputs;
  {
    auto recording = autograd::Record(train);
    outputs = Invoke(attrs, vars);
  }
  std::vector<NDArray> heads, given;
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (head_grads[k].is_none()) continue;
    heads.push_back(outputs[k]);
    given.push_back(head_grads[k]);
  }
  autograd::Backward(heads, given, /*retain_graph=*/false, train);
  std::vector<NDArray> grads;
  for (size_t i = 0; i < vars.size(); ++i) grads.push_back(autograd::GetGrad(vars[i]));
  return grads;
}

std::vector<NDArray> RunEager(const OpCase& c, const std::vector<NDArray>& inputs) {
  autograd::ModeScope mode(std::nullopt, c.is_train);
  return Invoke(CaseAttrs(c), inputs);
}

CaseGraph BuildGraph(const OpCase& c) {
  NodeAttrs attrs = CaseAttrs(c);
  CaseGraph g;
  g.data_names = attrs.op->InputNames(attrs);
  std::vector<Symbol> vars;
  for (const auto& n : g.data_names) vars.push_back(Symbol::Var(n));
  g.symbol = Symbol::Create(attrs, vars);
  return g;
}

}  // namespace conformance
}  // namespace hybridnet
