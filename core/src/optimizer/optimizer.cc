// MXNet 1.9.1's optimizers (python/mxnet/optimizer/optimizer.py): the same update op per case,
// or, where MXNet computes with NDArray arithmetic (AdaGrad on dense gradients, AdaDelta, Adamax,
// Nadam, DCASGD, SGLD), the same float32 operations in the same order. Learning rates, weight
// decays and bias corrections are computed in double, as Python does, and reach the ops as
// float32 attributes.
#include "hybridnet/optimizer.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "hybridnet/imperative.h"
#include "hybridnet/param.h"
#include "kernels/workspace.h"
#include "optimizer/keywords.h"

namespace hybridnet {
namespace optimizer {

namespace {

// A float attribute: the float32 value of `v`, written so that it parses back exactly.
std::string F32(double v) { return internal::ValueText(static_cast<float>(v)); }

// A tuple-of-floats attribute ("(0.1, 0.2)", "(0.1,)") of the float32 values.
std::string FloatTuple(const std::vector<double>& values) {
  return internal::ValueText(std::vector<float>(values.begin(), values.end()));
}

std::string PyBool(bool b) { return b ? "True" : "False"; }
std::string PyOptional(const std::optional<double>& v) { return v ? PyFloat(*v) : "None"; }

// Runs an update op with its outputs written into `outputs` (the weights): MXNet's out=weight,
// which some kernels read back (nag_mom_update's weight decay of the momentum).
void RunInPlace(const std::string& op_name, const std::vector<NDArray>& inputs,
                const AttrDict& attrs, const std::vector<NDArray*>& outputs) {
  // Parsed once per attribute text: parsing was a quarter of Trainer::Step for a 2 x 2 dense layer.
  const NodeAttrs& node = internal::CachedNodeAttrs(op_name, attrs);
  std::vector<Shape> in_shapes, out_shapes;
  std::vector<DType> in_types, out_types;
  for (const NDArray& x : inputs) {
    in_shapes.push_back(x.shape());
    in_types.push_back(x.dtype());
  }
  InferOutputs(node, &in_shapes, &in_types, &out_shapes, &out_types);
  std::vector<TBlob> in_blobs, out_blobs;
  for (const NDArray& x : inputs) {
    in_blobs.push_back(TBlob{const_cast<void*>(x.raw_data()), x.shape(), x.dtype()});
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    HN_CHECK(outputs[i]->shape() == out_shapes[i] && outputs[i]->dtype() == out_types[i], kInternal)
        << op_name << ": output " << i << " does not fit the weight";
    out_blobs.push_back(TBlob{outputs[i]->raw_data(), out_shapes[i], out_types[i]});
  }
  thread_local internal::Workspace workspace;
  OpContext ctx;
  ctx.workspace = &workspace;
  node.op->compute(ctx, node, in_blobs, out_blobs);
}

void RunUpdate(const std::string& op, const std::vector<NDArray>& inputs, const AttrDict& attrs,
               NDArray* weight) {
  RunInPlace(op, inputs, attrs, {weight});
}

// MXNet's environment knob for the aggregated optimizers' group size.
int AggregationSize(int fallback) {
  const char* env = std::getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE");
  return env != nullptr ? std::atoi(env) : fallback;
}

// The weight's float32 values, for the optimizers MXNet runs with NDArray arithmetic.
float* Values(NDArray* a, const char* optimizer) {
  HN_CHECK(a->dtype() == DType::kFloat32, kTypeError)
      << optimizer << ": weights and states must be float32 (float16 weights need "
      << "multi_precision=True), got " << DTypeName(a->dtype());
  return a->data<float>();
}

// MXNet's clip operator, and the truthiness test its fused-op optimizers apply to clip_gradient.
float ClipValue(float x, float bound) { return x < -bound ? -bound : (x > bound ? bound : x); }

NDArray ZerosLike(const NDArray& w, bool keep_dtype) {
  return NDArray::Zeros(w.shape(), keep_dtype ? w.dtype() : DType::kFloat32);
}

// "None", "0", "(0, 1)", "(0,)" for `count` arrays numbered from `first`, as MXNet nests them.
std::string Tuple(int first, int count, bool bare_single) {
  if (count == 0) return "None";
  if (count == 1 && bare_single) return std::to_string(first);
  std::string text = "(";
  for (int i = 0; i < count; ++i) text += (i ? ", " : "") + std::to_string(first + i);
  return text + (count == 1 ? ",)" : ")");
}

int CountArrays(const std::string& structure) {
  int count = 0;
  bool in_number = false;
  for (char c : structure) {
    const bool digit = c >= '0' && c <= '9';
    if (digit && !in_number) ++count;
    in_number = digit;
  }
  return count;
}

// ---- the optimizers ------------------------------------------------------------------------

// Common attributes of the fused-op calls: rescale_grad and, when MXNet passes it (a truthy
// clip_gradient), the clipping bound under `clip_key`.
AttrDict StepAttrs(double rescale_grad, const std::optional<double>& clip,
                   const char* clip_key = "clip_gradient") {
  AttrDict attrs{{"rescale_grad", F32(rescale_grad)}};
  if (clip && *clip != 0) attrs[clip_key] = F32(*clip);
  return attrs;
}

class SGD : public Optimizer {
 public:
  explicit SGD(Keywords* k)
      : momentum_(k->Number("momentum")), lazy_update_(k->Bool("lazy_update")) {
    aggregate_num_ = AggregationSize(4);
  }

 protected:
  std::vector<NDArray> CreateBaseState(const NDArray& w) const override {
    if (momentum_ == 0.0) return {};
    return {ZerosLike(w, true)};
  }
  std::string BaseStateStructure(int first) const override {
    return Tuple(first, momentum_ == 0.0 ? 0 : 1, true);
  }
  bool MasterCopyLast() const override { return true; }
  bool FusedMultiPrecision() const override { return true; }
  KeywordArgs OwnParams() const override {
    return {{"momentum", PyFloat(momentum_)}, {"lazy_update", PyBool(lazy_update_)}};
  }

  // MXNet's SGD runs every dense update through the multi-weight ops, one group per call.
  void Apply(std::vector<Step>* steps) override {
    std::vector<double> lrs, wds;
    for (const Step& s : *steps) {
      lrs.push_back(s.lr);
      wds.push_back(s.wd);
    }
    ApplyMulti(steps, lrs, wds, momentum_);
  }

  void ApplyMulti(std::vector<Step>* steps, const std::vector<double>& lrs,
                  const std::vector<double>& wds, double momentum) const {
    const bool mp = (*steps)[0].weight32 != nullptr;
    const bool with_momentum = momentum_ > 0;
    AttrDict attrs = StepAttrs(rescale_grad_, clip_gradient_);
    attrs["num_weights"] = std::to_string(steps->size());
    attrs["lrs"] = FloatTuple(lrs);
    attrs["wds"] = FloatTuple(wds);
    if (with_momentum) attrs["momentum"] = F32(momentum);
    std::vector<NDArray> inputs;
    for (const Step& s : *steps) {
      inputs.push_back(*s.weight);
      inputs.push_back(s.grad);
      if (with_momentum) inputs.push_back(*s.states.at(0));
      if (mp) inputs.push_back(*s.weight32);
    }
    const std::string op = std::string(mp ? "multi_mp_sgd" : "multi_sgd") +
                           (with_momentum ? "_mom_update" : "_update");
    std::vector<NDArray*> weights;
    for (Step& s : *steps) weights.push_back(s.weight);
    RunInPlace(op, inputs, attrs, weights);
  }

  double momentum_;
  bool lazy_update_;
};

// LARS: SGD with each weight's rate scaled by eta |w| / (|g| + wd |w| + eps) (multi_lars), the
// momentum corrected by the rate's change.
class LARS : public SGD {
 public:
  explicit LARS(Keywords* k)
      : SGD(k),
        eta_(k->Number("eta")),
        eps_(k->Number("eps")),
        momentum_correction_(k->Bool("momentum_correction")) {}

 protected:
  double BaseLearningRate() override {
    if (cur_lr_) last_lr_ = cur_lr_;
    const double lr = Optimizer::BaseLearningRate();
    if (!cur_lr_) last_lr_ = lr;
    cur_lr_ = lr;
    return lr;
  }
  KeywordArgs OwnParams() const override {
    KeywordArgs p = SGD::OwnParams();
    p.insert(p.end(), {{"momentum_correction", PyBool(momentum_correction_)},
                       {"eta", PyFloat(eta_)},
                       {"eps", PyFloat(eps_)},
                       {"skip", "0"},
                       {"last_lr", PyOptional(last_lr_)},
                       {"cur_lr", PyOptional(cur_lr_)}});
    return p;
  }
  bool SetOwnAttribute(const std::string& name, const std::string& value) override {
    if (name != "last_lr" && name != "cur_lr") return false;
    std::optional<double> v;
    if (value != "None") v = ParsePyNumber(value, name);
    (name == "last_lr" ? last_lr_ : cur_lr_) = v;
    return true;
  }
  std::vector<std::string> OwnAttributes() const override { return {"last_lr", "cur_lr"}; }
  void Apply(std::vector<Step>* steps) override {
    // multi_sum_sq and multi_lars in float32, on the weights as given (float16 under mp).
    std::vector<double> lrs, wds;
    for (const Step& s : *steps) {
      const float lr = static_cast<float>(s.lr);
      const float wd = static_cast<float>(s.wd);
      const float w_norm = std::sqrt(SumOfSquares(*s.weight));
      const float g_sq = SumOfSquares(s.grad);
      const bool valid = w_norm > 0.f && g_sq > 0.f;
      lrs.push_back(valid ? lr * static_cast<float>(eta_) * w_norm /
                                (std::sqrt(g_sq) * static_cast<float>(rescale_grad_) + wd * w_norm +
                                 static_cast<float>(eps_))
                          : lr);
      wds.push_back(wd);
    }
    double momentum = momentum_;
    if (momentum_ > 0 && momentum_correction_ && *last_lr_ != 0) {
      momentum = momentum_ * (*cur_lr_ / *last_lr_);
    }
    ApplyMulti(steps, lrs, wds, momentum);
  }

 private:
  static float SumOfSquares(const NDArray& a) {
    const NDArray f = a.AsType(DType::kFloat32);
    const float* x = f.data<float>();
    float sum = 0.f;
    for (int64_t i = 0, count = f.size(); i < count; ++i) sum += x[i] * x[i];
    return sum;
  }

  double eta_;
  double eps_;
  bool momentum_correction_;
  std::optional<double> last_lr_;
  std::optional<double> cur_lr_;
};

class NAG : public Optimizer {
 public:
  explicit NAG(Keywords* k) : momentum_(k->Number("momentum")) {}

 protected:
  std::vector<NDArray> CreateBaseState(const NDArray& w) const override {
    if (momentum_ == 0.0) return {};
    return {ZerosLike(w, true)};
  }
  std::string BaseStateStructure(int first) const override {
    return Tuple(first, momentum_ == 0.0 ? 0 : 1, true);
  }
  bool MasterCopyLast() const override { return true; }
  bool FusedMultiPrecision() const override { return true; }
  KeywordArgs OwnParams() const override { return {{"momentum", PyFloat(momentum_)}}; }
  void Apply(std::vector<Step>* steps) override {
    for (Step& s : *steps) {
      AttrDict attrs = StepAttrs(rescale_grad_, clip_gradient_);
      attrs["lr"] = F32(s.lr);
      attrs["wd"] = F32(s.wd);
      if (momentum_ > 0) attrs["momentum"] = F32(momentum_);
      const bool mp = s.weight32 != nullptr;
      std::vector<NDArray> inputs{*s.weight, s.grad};
      if (!s.states.empty()) inputs.push_back(*s.states[0]);
      if (mp) inputs.push_back(*s.weight32);
      const bool with_state = !s.states.empty();
      if (!with_state) attrs.erase("momentum");
      const std::string op = mp ? (with_state ? "mp_nag_mom_update" : "mp_sgd_update")
                                : (with_state ? "nag_mom_update" : "sgd_update");
      RunUpdate(op, inputs, attrs, s.weight);
    }
  }

 private:
  double momentum_;
};

// Optimizers whose states are zeros of the weight's shape: `count` of them, in the weight's dtype
// or float32, nested as MXNet's tuple (a bare array when `bare_single`).
class ZeroStates : public Optimizer {
 protected:
  ZeroStates(int count, bool keep_dtype, bool bare_single)
      : count_(count), keep_dtype_(keep_dtype), bare_single_(bare_single) {}
  std::vector<NDArray> CreateBaseState(const NDArray& w) const override {
    std::vector<NDArray> states;
    for (int i = 0; i < count_; ++i) states.push_back(ZerosLike(w, keep_dtype_));
    return states;
  }
  std::string BaseStateStructure(int first) const override {
    return Tuple(first, count_, bare_single_);
  }
  int count_;
  bool keep_dtype_;
  bool bare_single_;
};

class Adam : public ZeroStates {
 public:
  explicit Adam(Keywords* k)
      : ZeroStates(2, true, false),
        beta1_(k->Number("beta1")),
        beta2_(k->Number("beta2")),
        epsilon_(k->Number("epsilon")),
        lazy_update_(k->Bool("lazy_update")) {}

 protected:
  KeywordArgs OwnParams() const override {
    return {{"beta1", PyFloat(beta1_)},
            {"beta2", PyFloat(beta2_)},
            {"epsilon", PyFloat(epsilon_)},
            {"lazy_update", PyBool(lazy_update_)}};
  }
  void Apply(std::vector<Step>* steps) override {
    for (Step& s : *steps) {
      // Bias correction folded into the rate, as MXNet's Adam does before adam_update.
      const double coef1 = 1. - std::pow(beta1_, s.t);
      const double coef2 = 1. - std::pow(beta2_, s.t);
      const double lr = s.lr * (std::sqrt(coef2) / coef1);
      AttrDict attrs = StepAttrs(rescale_grad_, clip_gradient_);
      attrs.insert({{"lr", F32(lr)},
                    {"wd", F32(s.wd)},
                    {"beta1", F32(beta1_)},
                    {"beta2", F32(beta2_)},
                    {"epsilon", F32(epsilon_)},
                    {"lazy_update", PyBool(lazy_update_)}});
      RunUpdate("adam_update", {*s.weight, s.grad, *s.states[0], *s.states[1]}, attrs, s.weight);
    }
  }

 private:
  double beta1_, beta2_, epsilon_;
  bool lazy_update_;
};

class RMSProp : public ZeroStates {
 public:
  explicit RMSProp(Keywords* k)
      : ZeroStates(k->Bool("centered") ? 3 : 1, false, false),
        gamma1_(k->Number("gamma1")),
        gamma2_(k->Number("gamma2")),
        epsilon_(k->Number("epsilon")),
        centered_(count_ == 3),
        clip_weights_(k->OptionalNumber("clip_weights")) {}

 protected:
  KeywordArgs OwnParams() const override {
    return {{"gamma1", PyFloat(gamma1_)},
            {"gamma2", PyFloat(gamma2_)},
            {"centered", PyBool(centered_)},
            {"epsilon", PyFloat(epsilon_)},
            {"clip_weights", PyOptional(clip_weights_)}};
  }
  void Apply(std::vector<Step>* steps) override {
    for (Step& s : *steps) {
      AttrDict attrs = StepAttrs(rescale_grad_, clip_gradient_);
      attrs.insert({{"lr", F32(s.lr)},
                    {"wd", F32(s.wd)},
                    {"gamma1", F32(gamma1_)},
                    {"epsilon", F32(epsilon_)}});
      if (centered_) attrs["gamma2"] = F32(gamma2_);
      if (clip_weights_ && *clip_weights_ != 0) attrs["clip_weights"] = F32(*clip_weights_);
      std::vector<NDArray> inputs{*s.weight, s.grad};
      for (NDArray* state : s.states) inputs.push_back(*state);
      RunUpdate(centered_ ? "rmspropalex_update" : "rmsprop_update", inputs, attrs, s.weight);
    }
  }

 private:
  double gamma1_, gamma2_, epsilon_;
  bool centered_;
  std::optional<double> clip_weights_;
};

class Ftrl : public ZeroStates {
 public:
  explicit Ftrl(Keywords* k)
      : ZeroStates(2, false, false), lamda1_(k->Number("lamda1")), beta_(k->Number("beta")) {}

 protected:
  KeywordArgs OwnParams() const override {
    return {{"lamda1", PyFloat(lamda1_)}, {"beta", PyFloat(beta_)}};
  }
  void Apply(std::vector<Step>* steps) override {
    for (Step& s : *steps) {
      AttrDict attrs = StepAttrs(rescale_grad_, clip_gradient_);
      attrs.insert(
          {{"lr", F32(s.lr)}, {"wd", F32(s.wd)}, {"lamda1", F32(lamda1_)}, {"beta", F32(beta_)}});
      RunUpdate("ftrl_update", {*s.weight, s.grad, *s.states[0], *s.states[1]}, attrs, s.weight);
    }
  }

 private:
  double lamda1_, beta_;
};

class FTML : public ZeroStates {
 public:
  explicit FTML(Keywords* k)
      : ZeroStates(3, true, false),
        beta1_(k->Number("beta1")),
        beta2_(k->Number("beta2")),
        epsilon_(k->Number("epsilon")) {}

 protected:
  KeywordArgs OwnParams() const override {
    return {{"beta1", PyFloat(beta1_)}, {"beta2", PyFloat(beta2_)}, {"epsilon", PyFloat(epsilon_)}};
  }
  void Apply(std::vector<Step>* steps) override {
    for (Step& s : *steps) {
      AttrDict attrs = StepAttrs(rescale_grad_, clip_gradient_, "clip_grad");
      attrs.insert({{"lr", F32(s.lr)},
                    {"wd", F32(s.wd)},
                    {"beta1", F32(beta1_)},
                    {"beta2", F32(beta2_)},
                    {"epsilon", PyFloat(epsilon_)},
                    {"t", std::to_string(s.t)}});
      RunUpdate("ftml_update", {*s.weight, s.grad, *s.states[0], *s.states[1], *s.states[2]}, attrs,
                s.weight);
    }
  }

 private:
  double beta1_, beta2_, epsilon_;
};

class Signum : public Optimizer {
 public:
  explicit Signum(Keywords* k) : momentum_(k->Number("momentum")), wd_lh_(k->Number("wd_lh")) {}

 protected:
  std::vector<NDArray> CreateBaseState(const NDArray& w) const override {
    if (momentum_ == 0.0) return {};
    return {ZerosLike(w, true)};
  }
  std::string BaseStateStructure(int first) const override {
    return Tuple(first, momentum_ == 0.0 ? 0 : 1, true);
  }
  KeywordArgs OwnParams() const override {
    return {{"momentum", PyFloat(momentum_)}, {"wd_lh", PyFloat(wd_lh_)}};
  }
  void Apply(std::vector<Step>* steps) override {
    for (Step& s : *steps) {
      AttrDict attrs = StepAttrs(rescale_grad_, clip_gradient_);
      attrs.insert({{"lr", F32(s.lr)}, {"wd", F32(s.wd)}});
      if (momentum_ > 0) attrs["momentum"] = F32(momentum_);
      if (wd_lh_ != 0) attrs["wd_lh"] = F32(wd_lh_);
      if (s.states.empty()) {
        attrs.erase("momentum");
        RunUpdate("signsgd_update", {*s.weight, s.grad}, attrs, s.weight);
      } else {
        RunUpdate("signum_update", {*s.weight, s.grad, *s.states[0]}, attrs, s.weight);
      }
    }
  }

 private:
  double momentum_, wd_lh_;
};

class LAMB : public ZeroStates {
 public:
  explicit LAMB(Keywords* k)
      : ZeroStates(2, true, false),
        beta1_(k->Number("beta1")),
        beta2_(k->Number("beta2")),
        epsilon_(k->Number("epsilon")),
        lower_bound_(k->OptionalNumber("lower_bound")),
        upper_bound_(k->OptionalNumber("upper_bound")),
        bias_correction_(k->Bool("bias_correction")) {
    aggregate_num_ = std::max(1, std::min(45, AggregationSize(45)));
  }

 protected:
  bool FusedMultiPrecision() const override { return true; }
  KeywordArgs OwnParams() const override {
    return {{"beta1", PyFloat(beta1_)},
            {"beta2", PyFloat(beta2_)},
            {"epsilon", PyFloat(epsilon_)},
            {"lower_bound", PyOptional(lower_bound_)},
            {"upper_bound", PyOptional(upper_bound_)},
            {"bias_correction", PyBool(bias_correction_)}};
  }
  void Apply(std::vector<Step>* steps) override {
    if (list_call_ && aggregate_num_ > 1) {
      for (Step& s : *steps) ApplyAsMultiLamb(s);
      return;
    }
    for (Step& s : *steps) {
      const bool mp = s.weight32 != nullptr;
      AttrDict phase1 = StepAttrs(rescale_grad_, clip_gradient_);
      phase1.insert({{"beta1", F32(beta1_)},
                     {"beta2", F32(beta2_)},
                     {"epsilon", F32(epsilon_)},
                     {"bias_correction", PyBool(bias_correction_)},
                     {"t", std::to_string(s.t)},
                     {"wd", F32(s.wd)}});
      std::vector<NDArray> in1{*s.weight, s.grad, *s.states[0], *s.states[1]};
      if (mp) in1.push_back(*s.weight32);
      const NDArray g = Invoke(mp ? "mp_lamb_update_phase1" : "lamb_update_phase1", in1, phase1)[0];
      AttrDict phase2{{"lr", F32(s.lr)}};
      if (lower_bound_ && *lower_bound_ != 0) phase2["lower_bound"] = F32(*lower_bound_);
      if (upper_bound_ && *upper_bound_ != 0) phase2["upper_bound"] = F32(*upper_bound_);
      std::vector<NDArray> in2{*s.weight, g, Norm(mp ? *s.weight32 : *s.weight), Norm(g)};
      if (mp) in2.push_back(*s.weight32);
      RunUpdate(mp ? "mp_lamb_update_phase2" : "lamb_update_phase2", in2, phase2, s.weight);
    }
  }

  // What MXNet's Updater runs for lists, _multi_lamb_update / _multi_mp_lamb_update, in float32
  // as its kernels: the direction with beta^t in float, the trust ratio from the norms of the
  // weights as given and of the direction, and, under multi_precision, the master copy updated
  // (which the phase ops leave as it was).
  void ApplyAsMultiLamb(Step& s) const {
    const bool mp = s.weight32 != nullptr;
    const NDArray weight = s.weight->AsType(DType::kFloat32);
    const NDArray grad = s.grad.AsType(DType::kFloat32);
    const float* w_in = weight.data<float>();
    const float* g_in = grad.data<float>();
    float* w32 = mp ? s.weight32->data<float>() : nullptr;
    float* mean = s.states[0]->data<float>();
    float* var = s.states[1]->data<float>();
    const float beta1 = static_cast<float>(beta1_), beta2 = static_cast<float>(beta2_);
    const float eps = static_cast<float>(epsilon_), wd = static_cast<float>(s.wd);
    const float rescale = static_cast<float>(rescale_grad_);
    const float t = static_cast<float>(s.t);
    const int64_t n = weight.size();
    std::vector<float> direction(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const float w = mp ? w32[i] : w_in[i];
      float scaled = g_in[i] * rescale;
      if (clip_gradient_ && *clip_gradient_ != 0)
        scaled = ClipValue(scaled, static_cast<float>(*clip_gradient_));
      mean[i] = beta1 * mean[i] + (1.0f - beta1) * scaled;
      var[i] = beta2 * var[i] + (1.0f - beta2) * scaled * scaled;
      float g;
      if (bias_correction_) {
        const float mean_hat = mean[i] / (1.0f - std::pow(beta1, t));
        const float var_hat = var[i] / (1.0f - std::pow(beta2, t));
        g = mean_hat / (std::sqrt(var_hat) + eps) + wd * w;
      } else {
        g = mean[i] / (std::sqrt(var[i]) + eps) + wd * w;
      }
      direction[static_cast<size_t>(i)] = g;
    }
    double w_sq = 0, g_sq = 0;
    for (int64_t i = 0; i < n; ++i) {
      w_sq += static_cast<double>(w_in[i]) * w_in[i];
      g_sq += static_cast<double>(direction[static_cast<size_t>(i)]) *
              direction[static_cast<size_t>(i)];
    }
    float r1 = std::sqrt(static_cast<float>(w_sq));
    const float r2 = std::sqrt(static_cast<float>(g_sq));
    if (lower_bound_ && *lower_bound_ != 0) r1 = std::max(r1, static_cast<float>(*lower_bound_));
    if (upper_bound_ && *upper_bound_ != 0) r1 = std::min(r1, static_cast<float>(*upper_bound_));
    const float ratio = (r1 == 0.0f || r2 == 0.0f) ? 1.0f : r1 / r2;
    const float lr_adjusted = static_cast<float>(s.lr) * ratio;
    NDArray result = NDArray(weight.shape(), DType::kFloat32);
    float* out = result.data<float>();
    for (int64_t i = 0; i < n; ++i) {
      float w = mp ? w32[i] : w_in[i];
      w -= lr_adjusted * direction[static_cast<size_t>(i)];
      if (mp) w32[i] = w;
      out[i] = w;
    }
    s.weight->CopyFrom(result);
  }

 private:
  // MXNet's NDArray.norm(): the L2 norm as a one-element float32 array.
  static NDArray Norm(const NDArray& a) {
    const NDArray f = a.AsType(DType::kFloat32);
    const float* x = f.data<float>();
    double sum = 0;
    for (int64_t i = 0, count = f.size(); i < count; ++i) sum += static_cast<double>(x[i]) * x[i];
    return NDArray::Full(Shape{1}, std::sqrt(sum), DType::kFloat32);
  }

  double beta1_, beta2_, epsilon_;
  std::optional<double> lower_bound_, upper_bound_;
  bool bias_correction_;
};

// Reads the rescaled, clipped gradient as MXNet's `grad * rescale_grad` then `clip(...)` (clip
// applies whenever clip_gradient is not None), plus `wd_times_weight` * weight before clipping
// where MXNet adds it there.
class Plain : public ZeroStates {
 protected:
  using ZeroStates::ZeroStates;
  float Rescaled(float g, float w, float wd, bool add_wd) const {
    float r = add_wd ? g * static_cast<float>(rescale_grad_) + wd * w
                     : g * static_cast<float>(rescale_grad_);
    if (clip_gradient_) r = ClipValue(r, static_cast<float>(*clip_gradient_));
    return r;
  }
};

class AdaGrad : public Plain {
 public:
  explicit AdaGrad(Keywords* k) : Plain(1, false, true), eps_(k->Number("eps")) {}

 protected:
  KeywordArgs OwnParams() const override { return {{"float_stable_eps", PyFloat(eps_)}}; }
  void Apply(std::vector<Step>* steps) override {
    for (Step& s : *steps) {
      float* w = Values(s.weight, "AdaGrad");
      float* history = Values(s.states[0], "AdaGrad");
      const float* g = s.grad.data<float>();
      const float eps = static_cast<float>(eps_), wd = static_cast<float>(s.wd);
      const float neg_lr = static_cast<float>(-s.lr);
      for (int64_t i = 0, count = s.weight->size(); i < count; ++i) {
        const float r = Rescaled(g[i], w[i], 0.f, false);
        history[i] += r * r;
        const float div = r / std::sqrt(history[i] + eps);
        w[i] += (div + w[i] * wd) * neg_lr;
      }
    }
  }

 private:
  double eps_;
};

class AdaDelta : public Plain {
 public:
  explicit AdaDelta(Keywords* k)
      : Plain(2, false, false), rho_(k->Number("rho")), epsilon_(k->Number("epsilon")) {}

 protected:
  KeywordArgs OwnParams() const override {
    return {{"rho", PyFloat(rho_)}, {"epsilon", PyFloat(epsilon_)}};
  }
  void Apply(std::vector<Step>* steps) override {
    const float rho = static_cast<float>(rho_), one_minus_rho = static_cast<float>(1. - rho_);
    const float eps = static_cast<float>(epsilon_);
    for (Step& s : *steps) {
      float* w = Values(s.weight, "AdaDelta");
      float* acc_g = Values(s.states[0], "AdaDelta");
      float* acc_delta = Values(s.states[1], "AdaDelta");
      const float* g = s.grad.data<float>();
      const float wd = static_cast<float>(s.wd);
      for (int64_t i = 0, count = s.weight->size(); i < count; ++i) {
        const float r = Rescaled(g[i], w[i], 0.f, false);
        acc_g[i] *= rho;
        acc_g[i] += one_minus_rho * r * r;
        const float delta = std::sqrt(acc_delta[i] + eps) / std::sqrt(acc_g[i] + eps) * r;
        acc_delta[i] *= rho;
        acc_delta[i] += one_minus_rho * delta * delta;
        w[i] -= delta + wd * w[i];
      }
    }
  }

 private:
  double rho_, epsilon_;
};

class Adamax : public Plain {
 public:
  explicit Adamax(Keywords* k)
      : Plain(2, true, false), beta1_(k->Number("beta1")), beta2_(k->Number("beta2")) {}

 protected:
  KeywordArgs OwnParams() const override {
    return {{"beta1", PyFloat(beta1_)}, {"beta2", PyFloat(beta2_)}};
  }
  void Apply(std::vector<Step>* steps) override {
    const float beta1 = static_cast<float>(beta1_), beta2 = static_cast<float>(beta2_);
    const float one_minus_beta1 = static_cast<float>(1. - beta1_);
    for (Step& s : *steps) {
      const float lr = static_cast<float>(s.lr / (1. - std::pow(beta1_, s.t)));
      float* w = Values(s.weight, "Adamax");
      float* m = Values(s.states[0], "Adamax");
      float* u = Values(s.states[1], "Adamax");
      const float* g = s.grad.data<float>();
      const float wd = static_cast<float>(s.wd);
      for (int64_t i = 0, count = s.weight->size(); i < count; ++i) {
        const float r = Rescaled(g[i], w[i], wd, true);
        m[i] *= beta1;
        m[i] += one_minus_beta1 * r;
        u[i] = std::max(beta2 * u[i], std::fabs(r));
        w[i] -= lr * m[i] / u[i];
      }
    }
  }

 private:
  double beta1_, beta2_;
};

class Nadam : public Plain {
 public:
  explicit Nadam(Keywords* k)
      : Plain(2, true, false),
        beta1_(k->Number("beta1")),
        beta2_(k->Number("beta2")),
        epsilon_(k->Number("epsilon")),
        schedule_decay_(k->Number("schedule_decay")) {}

 protected:
  KeywordArgs OwnParams() const override {
    return {{"beta1", PyFloat(beta1_)},
            {"beta2", PyFloat(beta2_)},
            {"epsilon", PyFloat(epsilon_)},
            {"schedule_decay", PyFloat(schedule_decay_)},
            {"m_schedule", PyFloat(m_schedule_)}};
  }
  bool SetOwnAttribute(const std::string& name, const std::string& value) override {
    if (name != "m_schedule") return false;
    m_schedule_ = ParsePyNumber(value, name);
    return true;
  }
  std::vector<std::string> OwnAttributes() const override { return {"m_schedule"}; }
  void Apply(std::vector<Step>* steps) override {
    for (Step& s : *steps) {
      const double t = s.t;
      const double momentum_t = beta1_ * (1. - 0.5 * std::pow(0.96, t * schedule_decay_));
      const double momentum_t_1 = beta1_ * (1. - 0.5 * std::pow(0.96, (t + 1) * schedule_decay_));
      m_schedule_ = m_schedule_ * momentum_t;
      const double m_schedule_next = m_schedule_ * momentum_t_1;
      const float beta1 = static_cast<float>(beta1_), beta2 = static_cast<float>(beta2_);
      const float one_minus_beta1 = static_cast<float>(1. - beta1_);
      const float one_minus_beta2 = static_cast<float>(1. - beta2_);
      const float grad_div = static_cast<float>(1. - m_schedule_);
      const float m_div = static_cast<float>(1. - m_schedule_next);
      const float v_div = static_cast<float>(1. - std::pow(beta2_, t));
      const float mt = static_cast<float>(1. - momentum_t);
      const float mt1 = static_cast<float>(momentum_t_1);
      const float lr = static_cast<float>(s.lr), eps = static_cast<float>(epsilon_);
      float* w = Values(s.weight, "Nadam");
      float* m = Values(s.states[0], "Nadam");
      float* v = Values(s.states[1], "Nadam");
      const float* g = s.grad.data<float>();
      const float wd = static_cast<float>(s.wd);
      for (int64_t i = 0, count = s.weight->size(); i < count; ++i) {
        const float r = Rescaled(g[i], w[i], wd, true);
        m[i] *= beta1;
        m[i] += one_minus_beta1 * r;
        v[i] *= beta2;
        v[i] += one_minus_beta2 * r * r;
        const float grad_prime = r / grad_div;
        const float m_prime = m[i] / m_div;
        const float v_prime = v[i] / v_div;
        const float m_bar = mt * grad_prime + mt1 * m_prime;
        w[i] -= lr * m_bar / (std::sqrt(v_prime) + eps);
      }
    }
  }

 private:
  double beta1_, beta2_, epsilon_, schedule_decay_;
  double m_schedule_ = 1.;
};

// DCASGD (delay-compensated SGD): states (momentum or None, the previous weight).
class DCASGD : public Optimizer {
 public:
  explicit DCASGD(Keywords* k) : momentum_(k->Number("momentum")), lamda_(k->Number("lamda")) {}

 protected:
  std::vector<NDArray> CreateBaseState(const NDArray& w) const override {
    if (momentum_ == 0.0) return {w.Copy()};
    return {ZerosLike(w, true), w.Copy()};
  }
  std::string BaseStateStructure(int first) const override {
    return momentum_ == 0.0 ? "(None, " + std::to_string(first) + ")" : Tuple(first, 2, false);
  }
  KeywordArgs OwnParams() const override {
    return {{"momentum", PyFloat(momentum_)}, {"lamda", PyFloat(lamda_)}};
  }
  void Apply(std::vector<Step>* steps) override {
    for (Step& s : *steps) {
      float* w = Values(s.weight, "DCASGD");
      float* mom = momentum_ == 0.0 ? nullptr : Values(s.states[0], "DCASGD");
      float* previous = Values(s.states.back(), "DCASGD");
      const float* g = s.grad.data<float>();
      const float wd = static_cast<float>(s.wd), lamda = static_cast<float>(lamda_);
      const float neg_lr = static_cast<float>(-s.lr), momentum = static_cast<float>(momentum_);
      for (int64_t i = 0, count = s.weight->size(); i < count; ++i) {
        float r = g[i] * static_cast<float>(rescale_grad_);
        if (clip_gradient_) r = ClipValue(r, static_cast<float>(*clip_gradient_));
        const float step = neg_lr * (r + wd * w[i] + lamda * r * r * (w[i] - previous[i]));
        float delta = step;
        if (mom != nullptr) {
          mom[i] *= momentum;
          mom[i] += step;
          delta = mom[i];
        }
        previous[i] = w[i];
        w[i] += delta;
      }
    }
  }

 private:
  double momentum_, lamda_;
};

// SGLD: SGD's half step plus Gaussian noise of variance lr (from hybridnet's generator; MXNet's
// draws differ).
class SGLD : public Optimizer {
 public:
  explicit SGLD(Keywords*) {}

 protected:
  std::vector<NDArray> CreateBaseState(const NDArray&) const override { return {}; }
  std::string BaseStateStructure(int) const override { return "None"; }
  KeywordArgs OwnParams() const override { return {}; }
  void Apply(std::vector<Step>* steps) override {
    for (Step& s : *steps) {
      float* w = Values(s.weight, "SGLD");
      const float* g = s.grad.data<float>();
      const float half_lr = static_cast<float>(-s.lr / 2), wd = static_cast<float>(s.wd);
      const NDArray noise =
          NDArray::RandomNormal(s.weight->shape(), 0.f, static_cast<float>(std::sqrt(s.lr)));
      const float* n = noise.data<float>();
      for (int64_t i = 0, count = s.weight->size(); i < count; ++i) {
        float r = g[i] * static_cast<float>(rescale_grad_);
        if (clip_gradient_) r = ClipValue(r, static_cast<float>(*clip_gradient_));
        w[i] += half_lr * (r + wd * w[i]);
        w[i] += n[i];
      }
    }
  }
};

// MXNet's "Test" optimizer: weight += rescaled gradient, the state a copy of the weight.
class TestOptimizer : public ZeroStates {
 public:
  explicit TestOptimizer(Keywords*) : ZeroStates(1, false, true) { counts_updates_ = false; }

 protected:
  KeywordArgs OwnParams() const override { return {}; }
  void Apply(std::vector<Step>* steps) override {
    for (Step& s : *steps) {
      float* w = Values(s.weight, "Test");
      float* state = Values(s.states[0], "Test");
      const float* g = s.grad.data<float>();
      for (int64_t i = 0, count = s.weight->size(); i < count; ++i) {
        w[i] += g[i] * static_cast<float>(rescale_grad_);
        state[i] = w[i];
      }
    }
  }
};

}  // namespace

// ---- the registry ------------------------------------------------------------------------------

/// Builds registered optimizers and sets the fields of MXNet's base constructor.
class OptimizerFactory {
 public:
  struct Entry {
    const char* name;        // the registry name (lower case)
    const char* class_name;  // MXNet's class
    KeywordTable keywords;   // the class's own keywords; learning_rate when the class sets it
    std::function<std::unique_ptr<Optimizer>(Keywords*)> make;
    bool count_group_first = false;  // SGD and LARS count a whole group before taking the rate
    bool lr_to_base = true;          // false: learning_rate is the class's, not the base's (Ftrl)
  };

  template <typename T>
  static std::function<std::unique_ptr<Optimizer>(Keywords*)> Make() {
    return [](Keywords* k) -> std::unique_ptr<Optimizer> { return std::make_unique<T>(k); };
  }

  // The one table of optimizers, MXNet's keywords with their defaults.
  static const std::vector<Entry>& Table() {
    static const std::vector<Entry> table{
        {"sgd", "SGD", {{"momentum", "0.0"}, {"lazy_update", "True"}}, Make<SGD>(), true},
        {"ccsgd", "ccSGD", {{"momentum", "0.0"}, {"lazy_update", "True"}}, Make<SGD>(), true},
        {"lars",
         "LARS",
         {{"momentum", "0.0"},
          {"lazy_update", "True"},
          {"eta", "0.001"},
          {"eps", "0"},
          {"momentum_correction", "True"}},
         Make<LARS>(),
         true},
        {"nag", "NAG", {{"momentum", "0.0"}}, Make<NAG>()},
        {"adam",
         "Adam",
         {{"learning_rate", "0.001"},
          {"beta1", "0.9"},
          {"beta2", "0.999"},
          {"epsilon", "1e-08"},
          {"lazy_update", "True"}},
         Make<Adam>()},
        {"adagrad", "AdaGrad", {{"eps", "1e-07"}}, Make<AdaGrad>()},
        {"rmsprop",
         "RMSProp",
         {{"learning_rate", "0.001"},
          {"gamma1", "0.9"},
          {"gamma2", "0.9"},
          {"epsilon", "1e-08"},
          {"centered", "False"},
          {"clip_weights", "None"}},
         Make<RMSProp>()},
        {"adadelta", "AdaDelta", {{"rho", "0.9"}, {"epsilon", "1e-05"}}, Make<AdaDelta>()},
        {"ftrl",
         "Ftrl",
         {{"lamda1", "0.01"}, {"learning_rate", "0.1"}, {"beta", "1"}},
         Make<Ftrl>(),
         false,
         false},
        {"adamax",
         "Adamax",
         {{"learning_rate", "0.002"}, {"beta1", "0.9"}, {"beta2", "0.999"}},
         Make<Adamax>()},
        {"nadam",
         "Nadam",
         {{"learning_rate", "0.001"},
          {"beta1", "0.9"},
          {"beta2", "0.999"},
          {"epsilon", "1e-08"},
          {"schedule_decay", "0.004"}},
         Make<Nadam>()},
        {"signum",
         "Signum",
         {{"learning_rate", "0.01"}, {"momentum", "0.9"}, {"wd_lh", "0.0"}},
         Make<Signum>()},
        {"ftml",
         "FTML",
         {{"beta1", "0.6"}, {"beta2", "0.999"}, {"epsilon", "1e-08"}},
         Make<FTML>()},
        {"lamb",
         "LAMB",
         {{"learning_rate", "0.001"},
          {"beta1", "0.9"},
          {"beta2", "0.999"},
          {"epsilon", "1e-06"},
          {"lower_bound", "None"},
          {"upper_bound", "None"},
          {"bias_correction", "True"}},
         Make<LAMB>()},
        {"dcasgd", "DCASGD", {{"momentum", "0.0"}, {"lamda", "0.04"}}, Make<DCASGD>()},
        {"sgld", "SGLD", {}, Make<SGLD>()},
        {"test", "Test", {}, Make<TestOptimizer>()},
    };
    return table;
  }

  // The constructor keywords of `e` with their defaults: its own, then the base class's.
  static KeywordTable KeywordsOf(const Entry& e) {
    KeywordTable keywords = e.keywords;
    const KeywordTable base{{"learning_rate", "None"}, {"wd", "0.0"},
                            {"rescale_grad", "1.0"},   {"clip_gradient", "None"},
                            {"begin_num_update", "0"}, {"multi_precision", "False"}};
    for (const auto& b : base) {
      bool listed = false;
      for (const auto& own : keywords) listed = listed || own.first == b.first;
      if (!listed) keywords.push_back(b);
    }
    return keywords;
  }

  static const Entry& Find(const std::string& name) {
    const std::string key = Lower(name);
    std::string known;
    for (const Entry& e : Table()) {
      if (key == e.name) return e;
      known += std::string(known.empty() ? "" : ", ") + e.name;
    }
    HN_THROW(kNotFound) << "unknown optimizer '" << name << "'; known: " << known;
  }

  static std::unique_ptr<Optimizer> Create(const std::string& name, const KeywordArgs& params) {
    {
      const Entry& e = Find(name);
      Keywords k(std::string("optimizer ") + e.class_name, KeywordsOf(e), params);
      std::unique_ptr<Optimizer> opt = e.make(&k);
      opt->name_ = e.name;
      opt->class_name_ = e.class_name;
      opt->rescale_grad_ = k.Number("rescale_grad");
      opt->wd_ = k.Number("wd");
      opt->clip_gradient_ = k.OptionalNumber("clip_gradient");
      opt->begin_num_update_ = k.Int("begin_num_update");
      opt->num_update_ = opt->begin_num_update_;
      opt->multi_precision_ = k.Bool("multi_precision");
      const std::optional<double> lr = k.OptionalNumber("learning_rate");
      if (e.lr_to_base) opt->constructor_lr_ = lr;
      opt->lr_ = lr.value_or(0.01);
      opt->count_group_first_ = e.count_group_first;
      k.CheckAllUsed();
      return opt;
    }
  }
};

// The attribute MXNet 1.9.1 keeps a constructor keyword in, where it is not the keyword's name.
std::string AttributeOfKeyword(const std::string& class_name, const std::string& keyword) {
  if (keyword == "learning_rate") return "lr";
  if (class_name == "AdaGrad" && keyword == "eps") return "float_stable_eps";
  return keyword;
}

std::unique_ptr<Optimizer> Optimizer::Restore(const std::string& class_name,
                                              const KeywordArgs& attributes) {
  const std::map<std::string, std::string> attrs(attributes.begin(), attributes.end());
  for (const auto& e : OptimizerFactory::Table()) {
    if (Lower(class_name) != Lower(e.class_name)) continue;
    KeywordArgs kwargs;
    for (const auto& keyword : OptimizerFactory::KeywordsOf(e)) {
      const std::string attribute = AttributeOfKeyword(e.class_name, keyword.first);
      auto it = attrs.find(attribute);
      HN_CHECK(it != attrs.end(), kInvalidArgument)
          << "optimizer " << e.class_name << ": the saved optimizer has no attribute '" << attribute
          << "'";
      kwargs.emplace_back(keyword.first, it->second);
    }
    std::unique_ptr<Optimizer> opt = Create(e.name, kwargs);
    for (const std::string& own : opt->OwnAttributes()) {
      auto it = attrs.find(own);
      HN_CHECK(it != attrs.end(), kInvalidArgument)
          << "optimizer " << e.class_name << ": the saved optimizer has no attribute '" << own
          << "'";
      opt->SetAttribute(own, it->second);
    }
    return opt;
  }
  HN_THROW(kInvalidArgument) << "'" << class_name
                             << "' is not an optimizer class MXNet 1.9.1 defines";
}

std::unique_ptr<Optimizer> Optimizer::Create(const std::string& name, const KeywordArgs& params) {
  return OptimizerFactory::Create(name, params);
}

std::vector<std::string> Optimizer::Names() {
  std::vector<std::string> names;
  for (const auto& e : OptimizerFactory::Table()) names.push_back(e.name);
  std::sort(names.begin(), names.end());
  return names;
}

Optimizer::~Optimizer() = default;

std::vector<NDArray> Optimizer::CreateState(int, const NDArray& weight) {
  HN_CHECK(!weight.is_none() && !weight.is_symbolic(), kInvalidArgument)
      << "optimizer " << class_name_ << ": CreateState needs a weight with values";
  if (multi_precision_ && weight.dtype() == DType::kFloat16) {
    NDArray weight32 = weight.AsType(DType::kFloat32);
    std::vector<NDArray> states = CreateBaseState(weight32);
    if (MasterCopyLast()) {
      states.push_back(weight32);
    } else {
      states.insert(states.begin(), weight32);
    }
    return states;
  }
  return CreateBaseState(weight);
}

std::string Optimizer::StateStructure(const NDArray& weight) const {
  if (multi_precision_ && weight.dtype() == DType::kFloat16) {
    if (MasterCopyLast()) {
      const std::string base = BaseStateStructure(0);
      return "(" + base + ", " + std::to_string(CountArrays(base)) + ")";
    }
    return "(0, " + BaseStateStructure(1) + ")";
  }
  return BaseStateStructure(0);
}

double Optimizer::BaseLearningRate() { return lr_scheduler_ ? (*lr_scheduler_)(num_update_) : lr_; }

float Optimizer::learning_rate() const {
  return static_cast<float>(lr_scheduler_ ? (*lr_scheduler_)(num_update_) : lr_);
}

void Optimizer::set_learning_rate(float lr) {
  HN_CHECK(!lr_scheduler_, kInvalidArgument)
      << "optimizer " << class_name_
      << ": an lr_scheduler is set; set_learning_rate applies only without one";
  lr_ = lr;
}

void Optimizer::set_lr_scheduler(std::shared_ptr<LRScheduler> scheduler) {
  lr_scheduler_ = std::move(scheduler);
  if (lr_scheduler_ && constructor_lr_ && lr_scheduler_->base_lr() != *constructor_lr_) {
    lr_scheduler_->set_base_lr(*constructor_lr_);
  }
}

void Optimizer::SetUpdateCounts(int num_update, std::map<int, int> index_update_count) {
  num_update_ = num_update;
  index_update_count_ = std::move(index_update_count);
}

bool Optimizer::SetOwnAttribute(const std::string&, const std::string&) { return false; }

void Optimizer::SetAttribute(const std::string& name, const std::string& value) {
  if (name == "lr") {
    lr_ = ParsePyNumber(value, name);
  } else if (name == "num_update") {
    num_update_ = static_cast<int>(ParsePyNumber(value, name));
  } else if (!SetOwnAttribute(name, value)) {
    std::string accepted = "lr, num_update";
    for (const std::string& own : OwnAttributes()) accepted += ", " + own;
    HN_THROW(kInvalidArgument) << "optimizer " << class_name_ << ": attribute '" << name
                               << "' cannot be set; settable: " << accepted;
  }
}

KeywordArgs Optimizer::Params() const {
  const bool lr_none = lr_scheduler_ && !constructor_lr_ && class_name_ != "Ftrl";
  KeywordArgs p{{"rescale_grad", PyFloat(rescale_grad_)},
                {"lr", lr_none ? "None" : PyFloat(lr_)},
                {"wd", PyFloat(wd_)},
                {"clip_gradient", PyOptional(clip_gradient_)},
                {"multi_precision", PyBool(multi_precision_)},
                {"begin_num_update", std::to_string(begin_num_update_)},
                {"num_update", std::to_string(num_update_)},
                {"aggregate_num", std::to_string(aggregate_num_)}};
  KeywordArgs own = OwnParams();
  p.insert(p.end(), own.begin(), own.end());
  return p;
}

void Optimizer::Update(int index, NDArray* weight, const NDArray& grad,
                       std::vector<NDArray>* state) {
  list_call_ = false;
  RunGroup({index}, {weight}, {grad}, {state});
}

void Optimizer::UpdateMany(const std::vector<int>& indices, const std::vector<NDArray*>& weights,
                           const std::vector<NDArray>& grads,
                           const std::vector<std::vector<NDArray>*>& states) {
  HN_CHECK(weights.size() == indices.size() && grads.size() == indices.size() &&
               states.size() == indices.size(),
           kInvalidArgument)
      << "optimizer " << class_name_ << ": " << indices.size() << " indices but " << weights.size()
      << " weights, " << grads.size() << " gradients and " << states.size() << " states";
  list_call_ = true;
  if (aggregate_num_ <= 0) {
    for (size_t i = 0; i < indices.size(); ++i)
      RunGroup({indices[i]}, {weights[i]}, {grads[i]}, {states[i]});
    return;
  }
  // MXNet's Updater: the weights grouped by dtype (in order of first appearance), each group in
  // calls of aggregate_num.
  std::vector<DType> order;
  for (NDArray* w : weights) {
    HN_CHECK(w != nullptr, kInvalidArgument) << "optimizer " << class_name_ << ": null weight";
    if (std::find(order.begin(), order.end(), w->dtype()) == order.end())
      order.push_back(w->dtype());
  }
  for (DType dtype : order) {
    std::vector<size_t> members;
    for (size_t i = 0; i < weights.size(); ++i)
      if (weights[i]->dtype() == dtype) members.push_back(i);
    for (size_t start = 0; start < members.size(); start += static_cast<size_t>(aggregate_num_)) {
      std::vector<int> group_indices;
      std::vector<NDArray*> group_weights;
      std::vector<NDArray> group_grads;
      std::vector<std::vector<NDArray>*> group_states;
      for (size_t j = start; j < members.size() && j < start + static_cast<size_t>(aggregate_num_);
           ++j) {
        group_indices.push_back(indices[members[j]]);
        group_weights.push_back(weights[members[j]]);
        group_grads.push_back(grads[members[j]]);
        group_states.push_back(states[members[j]]);
      }
      RunGroup(group_indices, group_weights, group_grads, group_states);
    }
  }
}

void Optimizer::RunGroup(const std::vector<int>& indices, const std::vector<NDArray*>& weights,
                         const std::vector<NDArray>& grads,
                         const std::vector<std::vector<NDArray>*>& states) {
  const bool mp = multi_precision_ && weights[0]->dtype() == DType::kFloat16;
  for (size_t i = 0; i < indices.size(); ++i) {
    const NDArray* w = weights[i];
    HN_CHECK(w != nullptr && !w->is_none() && states[i] != nullptr, kInvalidArgument)
        << "optimizer " << class_name_ << ": weight " << indices[i] << " has no value or no state";
    HN_CHECK(!grads[i].is_none() && grads[i].shape() == w->shape(), kShapeError)
        << "optimizer " << class_name_ << ": the gradient of weight " << indices[i] << " has shape "
        << (grads[i].is_none() ? Shape() : grads[i].shape()) << " but the weight has "
        << w->shape();
    HN_CHECK(grads[i].dtype() == w->dtype(), kTypeError)
        << "optimizer " << class_name_ << ": the gradient of weight " << indices[i] << " is "
        << DTypeName(grads[i].dtype()) << " but the weight is " << DTypeName(w->dtype());
    const int expected = CountArrays(StateStructure(*w));
    HN_CHECK(static_cast<int>(states[i]->size()) == expected, kInvalidArgument)
        << "optimizer " << class_name_ << ": weight " << indices[i] << " has " << states[i]->size()
        << " state arrays, " << class_name_ << " keeps " << expected << " (" << StateStructure(*w)
        << "); make them with CreateState";
    for (const NDArray& s : *states[i]) {
      HN_CHECK(s.shape() == w->shape(), kShapeError)
          << "optimizer " << class_name_ << ": a state of weight " << indices[i] << " has shape "
          << s.shape() << " but the weight has " << w->shape();
    }
  }
  auto count = [this](int index) {
    if (!counts_updates_) return;
    auto it = index_update_count_.find(index);
    if (it == index_update_count_.end())
      it = index_update_count_.emplace(index, begin_num_update_).first;
    ++it->second;
    num_update_ = std::max(num_update_, it->second);
  };
  double base_lr = 0;
  if (count_group_first_) {
    for (int index : indices) count(index);
    base_lr = BaseLearningRate();
  }
  std::vector<Step> steps;
  std::vector<NDArray> grads32;
  grads32.reserve(indices.size());
  for (size_t i = 0; i < indices.size(); ++i) {
    const int index = indices[i];
    if (!count_group_first_) {
      count(index);
      base_lr = BaseLearningRate();
    }
    auto lr_mult = lr_mult_.find(index);
    auto wd_mult = wd_mult_.find(index);
    Step s;
    s.index = index;
    s.lr = base_lr * (lr_mult == lr_mult_.end() ? 1.0 : static_cast<double>(lr_mult->second));
    s.wd = wd_ * (wd_mult == wd_mult_.end() ? 1.0 : static_cast<double>(wd_mult->second));
    auto count_of = index_update_count_.find(index);
    s.t = count_of == index_update_count_.end() ? 0 : count_of->second;
    s.weight32 = nullptr;
    std::vector<NDArray>& st = *states[i];
    if (mp) {
      NDArray* master = MasterCopyLast() ? &st.back() : &st.front();
      for (NDArray& a : st)
        if (&a != master) s.states.push_back(&a);
      if (FusedMultiPrecision()) {
        s.weight = weights[i];
        s.grad = grads[i];
        s.weight32 = master;
      } else {
        s.weight = master;
        s.grad = grads[i].AsType(DType::kFloat32);
      }
    } else {
      s.weight = weights[i];
      s.grad = grads[i];
      for (NDArray& a : st) s.states.push_back(&a);
    }
    steps.push_back(std::move(s));
  }
  Apply(&steps);
  if (mp && !FusedMultiPrecision()) {
    for (size_t i = 0; i < steps.size(); ++i) weights[i]->CopyFrom(*steps[i].weight);
  }
}

}  // namespace optimizer
}  // namespace hybridnet
