// The fused optimizer update ops MXNet 1.9.1 registers (src/operator/optimizer_op-inl.h,
// contrib/adamw-inl.h): each computes the new weight as its output (MXNet's Python optimizers call
// them with out=weight) and updates its state inputs (momentum, moments, master copy) in place,
// which is why those inputs are declared mutable (MXNet's FMutateInputs; a graph lists them as
// auxiliary states). The arithmetic is MXNet's, in float32 and in the same order, so that 100
// steps of an optimizer stay on MXNet's numbers: the mp_ variants take a float16 (or float32)
// weight and gradient with float32 states and a float32 master copy of the weight.
//
// Not here: sparse (row_sparse) storage, so lazy_update only parses; _sparse_adagrad_update,
// which MXNet runs on row_sparse gradients only.
#include "ops/optimizer/update_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "hybridnet/dtype.h"
#include "hybridnet/op.h"
#include "kernels/avx2-inl.h"
#include "kernels/avx512-inl.h"
#include "kernels/vector_isa.h"
#include "ops/dtype_switch-inl.h"

namespace hybridnet {

namespace {

using internal::TypeTag;

// ---- parameters (MXNet's keys and defaults) --------------------------------------------------

const char kLrText[] = "Learning rate.";
const char kWdText[] = "Weight decay: adds wd * weight to the rescaled gradient.";
const char kRescaleText[] = "Factor the gradient is multiplied by first.";
const char kClipText[] =
    "Clips the rescaled gradient to [-clip_gradient, clip_gradient]; negative: no clipping.";
const char kLazyText[] = "Row-sparse gradients only (not supported here); ignored for dense ones.";

// The SGD family's parameters; each op declares MXNet's keys for it.
enum class SGDForm { kPlain, kMomentum, kNesterov, kSign, kSignum };

template <SGDForm kForm>
struct SGDFamilyParam {
  float lr = 0.f;
  float momentum = 0.f;
  float wd = 0.f;
  float rescale_grad = 1.f;
  float clip_gradient = -1.f;
  bool lazy_update = true;
  float wd_lh = 0.f;
  static void Declare(ParamDeclarer<SGDFamilyParam>* d) {
    d->Field("lr", &SGDFamilyParam::lr).Required().Describe(kLrText);
    if (kForm != SGDForm::kPlain && kForm != SGDForm::kSign) {
      d->Field("momentum", &SGDFamilyParam::momentum)
          .Default(0.f)
          .Describe("Decay of the momentum per step.");
    }
    d->Field("wd", &SGDFamilyParam::wd).Default(0.f).Describe(kWdText);
    d->Field("rescale_grad", &SGDFamilyParam::rescale_grad).Default(1.f).Describe(kRescaleText);
    d->Field("clip_gradient", &SGDFamilyParam::clip_gradient).Default(-1.f).Describe(kClipText);
    if (kForm == SGDForm::kPlain || kForm == SGDForm::kMomentum) {
      d->Field("lazy_update", &SGDFamilyParam::lazy_update).Default(true).Describe(kLazyText);
    }
    if (kForm == SGDForm::kSignum) {
      d->Field("wd_lh", &SGDFamilyParam::wd_lh)
          .Default(0.f)
          .Describe("Decoupled weight decay (Loshchilov and Hutter) applied to the weight.");
    }
  }
};
using SGDParam = SGDFamilyParam<SGDForm::kPlain>;
using SGDMomParam = SGDFamilyParam<SGDForm::kMomentum>;
using NAGMomParam = SGDFamilyParam<SGDForm::kNesterov>;
using SignSGDParam = SGDFamilyParam<SGDForm::kSign>;
using SignumParam = SGDFamilyParam<SGDForm::kSignum>;

// The multi-weight SGD ops; the preloaded_ ones take lrs and wds as their last two inputs.
template <bool kMomentum, bool kPreloaded = false>
struct MultiSGDFamilyParam {
  std::vector<float> lrs;
  std::vector<float> wds;
  float momentum = 0.f;
  float rescale_grad = 1.f;
  float clip_gradient = -1.f;
  int num_weights = 1;
  static void Declare(ParamDeclarer<MultiSGDFamilyParam>* d) {
    if (!kPreloaded) {
      d->Field("lrs", &MultiSGDFamilyParam::lrs)
          .Required()
          .Describe("Learning rate of each weight.");
      d->Field("wds", &MultiSGDFamilyParam::wds)
          .Required()
          .Describe("Weight decay of each weight.");
    }
    if (kMomentum) {
      d->Field("momentum", &MultiSGDFamilyParam::momentum)
          .Default(0.f)
          .Describe("Decay of the momentum per step.");
    }
    d->Field("rescale_grad", &MultiSGDFamilyParam::rescale_grad)
        .Default(1.f)
        .Describe(kRescaleText);
    d->Field("clip_gradient", &MultiSGDFamilyParam::clip_gradient)
        .Default(-1.f)
        .Describe(kClipText);
    d->Field("num_weights", &MultiSGDFamilyParam::num_weights)
        .Default(1)
        .Min(1)
        .Describe("How many weights the call updates.");
  }
};
using MultiSGDParam = MultiSGDFamilyParam<false>;
using MultiSGDMomParam = MultiSGDFamilyParam<true>;
using PreloadedMultiSGDParam = MultiSGDFamilyParam<false, true>;
using PreloadedMultiSGDMomParam = MultiSGDFamilyParam<true, true>;

struct AdamParam {
  float lr = 0.f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-8f;
  float wd = 0.f;
  float rescale_grad = 1.f;
  float clip_gradient = -1.f;
  bool lazy_update = true;
  static void Declare(ParamDeclarer<AdamParam>* d) {
    d->Field("lr", &AdamParam::lr).Required().Describe(kLrText);
    d->Field("beta1", &AdamParam::beta1).Default(0.9f).Describe("Decay of the first moment.");
    d->Field("beta2", &AdamParam::beta2).Default(0.999f).Describe("Decay of the second moment.");
    d->Field("epsilon", &AdamParam::epsilon).Default(1e-8f).Describe("Added to the divisor.");
    d->Field("wd", &AdamParam::wd).Default(0.f).Describe(kWdText);
    d->Field("rescale_grad", &AdamParam::rescale_grad).Default(1.f).Describe(kRescaleText);
    d->Field("clip_gradient", &AdamParam::clip_gradient).Default(-1.f).Describe(kClipText);
    d->Field("lazy_update", &AdamParam::lazy_update).Default(true).Describe(kLazyText);
  }
};

struct AdamWParam {
  float lr = 0.f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-8f;
  float wd = 0.f;
  float eta = 0.f;
  float clip_gradient = -1.f;
  static void Declare(ParamDeclarer<AdamWParam>* d) {
    d->Field("lr", &AdamWParam::lr).Required().Describe(kLrText);
    d->Field("beta1", &AdamWParam::beta1).Default(0.9f).Describe("Decay of the first moment.");
    d->Field("beta2", &AdamWParam::beta2).Default(0.999f).Describe("Decay of the second moment.");
    d->Field("epsilon", &AdamWParam::epsilon).Default(1e-8f).Describe("Added to the divisor.");
    d->Field("wd", &AdamWParam::wd)
        .Default(0.f)
        .Describe("Decoupled weight decay: wd * weight joins the step, not the gradient.");
    d->Field("eta", &AdamWParam::eta).Required().Describe("Multiplier of the whole step.");
    d->Field("clip_gradient", &AdamWParam::clip_gradient).Default(-1.f).Describe(kClipText);
  }
};

template <bool kCentered>
struct RMSPropFamilyParam {
  float lr = 0.f;
  float gamma1 = 0.95f;
  float gamma2 = 0.9f;
  float epsilon = 1e-8f;
  float wd = 0.f;
  float rescale_grad = 1.f;
  float clip_gradient = -1.f;
  float clip_weights = -1.f;
  static void Declare(ParamDeclarer<RMSPropFamilyParam>* d) {
    d->Field("lr", &RMSPropFamilyParam::lr).Required().Describe(kLrText);
    d->Field("gamma1", &RMSPropFamilyParam::gamma1)
        .Default(0.95f)
        .Describe("Decay of the gradient's moments.");
    if (kCentered) {
      d->Field("gamma2", &RMSPropFamilyParam::gamma2).Default(0.9f).Describe("Decay of the step.");
    }
    d->Field("epsilon", &RMSPropFamilyParam::epsilon)
        .Default(1e-8f)
        .Describe("Added to the divisor.");
    d->Field("wd", &RMSPropFamilyParam::wd).Default(0.f).Describe(kWdText);
    d->Field("rescale_grad", &RMSPropFamilyParam::rescale_grad).Default(1.f).Describe(kRescaleText);
    d->Field("clip_gradient", &RMSPropFamilyParam::clip_gradient).Default(-1.f).Describe(kClipText);
    d->Field("clip_weights", &RMSPropFamilyParam::clip_weights)
        .Default(-1.f)
        .Describe("Clips the new weight to [-clip_weights, clip_weights]; negative: no clipping.");
  }
};
using RMSPropParam = RMSPropFamilyParam<false>;
using RMSPropAlexParam = RMSPropFamilyParam<true>;

struct FTMLParam {
  float lr = 0.f;
  float beta1 = 0.6f;
  float beta2 = 0.999f;
  double epsilon = 1e-8;
  int t = 0;
  float wd = 0.f;
  float rescale_grad = 1.f;
  float clip_grad = -1.f;
  static void Declare(ParamDeclarer<FTMLParam>* d) {
    d->Field("lr", &FTMLParam::lr).Required().Describe(kLrText);
    d->Field("beta1", &FTMLParam::beta1).Default(0.6f).Describe("Decay of d and z.");
    d->Field("beta2", &FTMLParam::beta2).Default(0.999f).Describe("Decay of v.");
    d->Field("epsilon", &FTMLParam::epsilon).Default(1e-8).Describe("Added to the divisor.");
    d->Field("t", &FTMLParam::t).Required().Describe("The update count (from 1).");
    d->Field("wd", &FTMLParam::wd).Default(0.f).Describe(kWdText);
    d->Field("rescale_grad", &FTMLParam::rescale_grad).Default(1.f).Describe(kRescaleText);
    d->Field("clip_grad", &FTMLParam::clip_grad)
        .Default(-1.f)
        .Describe("Clips the rescaled gradient plus wd * weight; negative: no clipping.");
  }
};

struct FtrlParam {
  float lr = 0.f;
  float lamda1 = 0.01f;
  float beta = 1.f;
  float wd = 0.f;
  float rescale_grad = 1.f;
  float clip_gradient = -1.f;
  static void Declare(ParamDeclarer<FtrlParam>* d) {
    d->Field("lr", &FtrlParam::lr).Required().Describe(kLrText);
    d->Field("lamda1", &FtrlParam::lamda1).Default(0.01f).Describe("L1 regularization.");
    d->Field("beta", &FtrlParam::beta).Default(1.f).Describe("Added to sqrt(n) in the divisor.");
    d->Field("wd", &FtrlParam::wd).Default(0.f).Describe(kWdText);
    d->Field("rescale_grad", &FtrlParam::rescale_grad).Default(1.f).Describe(kRescaleText);
    d->Field("clip_gradient", &FtrlParam::clip_gradient).Default(-1.f).Describe(kClipText);
  }
};

struct LambPhase1Param {
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-6f;
  int t = 0;
  bool bias_correction = true;
  float wd = 0.f;
  float rescale_grad = 1.f;
  float clip_gradient = -1.f;
  static void Declare(ParamDeclarer<LambPhase1Param>* d) {
    d->Field("beta1", &LambPhase1Param::beta1).Default(0.9f).Describe("Decay of the mean.");
    d->Field("beta2", &LambPhase1Param::beta2).Default(0.999f).Describe("Decay of the variance.");
    d->Field("epsilon", &LambPhase1Param::epsilon).Default(1e-6f).Describe("Added to the divisor.");
    d->Field("t", &LambPhase1Param::t).Required().Describe("The update count (from 1).");
    d->Field("bias_correction", &LambPhase1Param::bias_correction)
        .Default(true)
        .Describe("Divides the moments by 1 - beta^t.");
    d->Field("wd", &LambPhase1Param::wd).Required().Describe(kWdText);
    d->Field("rescale_grad", &LambPhase1Param::rescale_grad).Default(1.f).Describe(kRescaleText);
    d->Field("clip_gradient", &LambPhase1Param::clip_gradient).Default(-1.f).Describe(kClipText);
  }
};

struct LambPhase2Param {
  float lr = 0.f;
  float lower_bound = -1.f;
  float upper_bound = -1.f;
  static void Declare(ParamDeclarer<LambPhase2Param>* d) {
    d->Field("lr", &LambPhase2Param::lr).Required().Describe(kLrText);
    d->Field("lower_bound", &LambPhase2Param::lower_bound)
        .Default(-1.f)
        .Describe("Lower bound of the weight norm r1; negative: none.");
    d->Field("upper_bound", &LambPhase2Param::upper_bound)
        .Default(-1.f)
        .Describe("Upper bound of the weight norm r1; negative: none.");
  }
};

// ---- element access ---------------------------------------------------------------------------

// Weights and gradients of the mp_ ops are float16 (stored as its bits) or float32; states float32.
inline float ToFloat(float x) { return x; }
inline float ToFloat(uint16_t bits) { return HalfToFloat(bits); }
template <typename W>
W FromFloat(float v);
template <>
float FromFloat<float>(float v) {
  return v;
}
template <>
uint16_t FromFloat<uint16_t>(float v) {
  return FloatToHalf(v);
}

template <typename Fn>
void SwitchWeightType(DType dtype, Fn&& fn) {
  if (dtype == DType::kFloat16) {
    fn(TypeTag<uint16_t>{});
  } else {
    fn(TypeTag<float>{});
  }
}

// MXNet's mshadow_op::clip: x limited to [-bound, bound] (NaN stays NaN).
inline float Clip(float x, float bound) {
  if (x > bound) return bound;
  if (x < -bound) return -bound;
  return x;
}

inline float Sign(float x) { return static_cast<float>((x > 0) - (x < 0)); }

// ---- shape and dtype inference ------------------------------------------------------------------

// Every input has the weight's shape except those at `scalars`, which have shape (1,); the output
// has the weight's shape.
FInferShape UpdateShape(std::vector<uint32_t> scalars) {
  return [scalars](const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
    auto is_scalar = [&scalars](size_t i) {
      for (uint32_t s : scalars)
        if (s == i) return true;
      return false;
    };
    Shape weight = (*out)[0];
    for (size_t i = 0; i < in->size(); ++i) {
      if (is_scalar(i) || (*in)[i].ndim() == 0) continue;
      if (weight.ndim() == 0) {
        weight = (*in)[i];
        continue;
      }
      HN_CHECK(weight == (*in)[i], kShapeError)
          << DescribeNode(attrs) << ": input " << i << " ('" << attrs.op->InputNames(attrs)[i]
          << "') has shape " << (*in)[i] << " but the weight has " << weight;
    }
    for (size_t i = 0; i < in->size(); ++i) {
      if (is_scalar(i)) {
        const Shape one{1};
        HN_CHECK((*in)[i].ndim() == 0 || (*in)[i].Size() == 1, kShapeError)
            << DescribeNode(attrs) << ": input " << i << " ('" << attrs.op->InputNames(attrs)[i]
            << "') must hold one value, got shape " << (*in)[i];
        if ((*in)[i].ndim() == 0) (*in)[i] = one;
      } else if (weight.ndim() != 0) {
        (*in)[i] = weight;
      }
    }
    if (weight.ndim() != 0) (*out)[0] = weight;
    for (const Shape& s : *in)
      if (s.ndim() == 0) return false;
    return weight.ndim() != 0;
  };
}

// Inputs at positions < `num_low` and the output share the weight's dtype (float32, or float16
// when `low_precision`); the others are float32.
FInferType UpdateType(uint32_t num_low, bool low_precision) {
  return [num_low, low_precision](const NodeAttrs& attrs, std::vector<DType>* in,
                                  std::vector<DType>* out) {
    DType weight = (*out)[0];
    for (size_t i = 0; i < num_low && i < in->size(); ++i) {
      if ((*in)[i] == DType::kUnknown) continue;
      if (weight == DType::kUnknown) weight = (*in)[i];
      HN_CHECK((*in)[i] == weight, kTypeError)
          << DescribeNode(attrs) << ": input " << i << " ('" << attrs.op->InputNames(attrs)[i]
          << "') has dtype " << DTypeName((*in)[i]) << " but the weight has " << DTypeName(weight);
    }
    if (weight != DType::kUnknown) {
      const bool accepted =
          weight == DType::kFloat32 || (low_precision && weight == DType::kFloat16);
      HN_CHECK(accepted, kTypeError)
          << DescribeNode(attrs) << ": the weight's dtype is " << DTypeName(weight)
          << "; the op takes " << (low_precision ? "float16 or float32" : "float32");
      for (size_t i = 0; i < num_low && i < in->size(); ++i) (*in)[i] = weight;
      (*out)[0] = weight;
    }
    for (size_t i = num_low; i < in->size(); ++i) {
      HN_CHECK((*in)[i] == DType::kUnknown || (*in)[i] == DType::kFloat32, kTypeError)
          << DescribeNode(attrs) << ": input " << i << " ('" << attrs.op->InputNames(attrs)[i]
          << "') is a float32 state, got " << DTypeName((*in)[i]);
      (*in)[i] = DType::kFloat32;
    }
    return weight != DType::kUnknown;
  };
}

// ---- single-weight kernels ----------------------------------------------------------------
//
// The loops read the element count once (Shape::Size is out of line: a call per element made
// them 10x slower) and take the parameters by value, which the stores to the float arrays
// cannot alias.

const float* F(const TBlob& b) { return b.ptr<const float>(); }
float* M(const TBlob& b) { return b.ptr<float>(); }

// A kernel's element loop compiled for the widest ISA this CPU runs (kernels/vector_isa.h): the
// baseline build vectorizes it on SSE's 4 lanes, and the update took 6 % of a digits MLP's
// training step. Element by element the arithmetic is the same and never contracted
// (-ffp-contract=off), so every ISA gives the same bits. The loop comes by value, so that its
// captures are the wrapper's own and the stores cannot alias them.
template <typename Loop>
HN_AVX512 void RunLoopAvx512(Loop loop) {
  loop();
}
template <typename Loop>
HN_AVX2 void RunLoopAvx2(Loop loop) {
  loop();
}
template <typename Loop>
void RunLoop(Loop loop) {
  switch (internal::ChooseVectorIsa()) {
    case internal::VectorIsa::kAvx512:
      return RunLoopAvx512(loop);
    case internal::VectorIsa::kAvx2:
      return RunLoopAvx2(loop);
    case internal::VectorIsa::kBaseline:
      break;
  }
  loop();
}

// (1 - lr wd) w - lr clip(rescale g), or without clipping (lr rescale) g, as MXNet's SGDKernel.
template <typename P>
inline float SGDStep(const P& p, float w, float g) {
  if (p.clip_gradient >= 0.f) {
    return (1.f - p.lr * p.wd) * w - p.lr * Clip(p.rescale_grad * g, p.clip_gradient);
  }
  return (1.f - p.lr * p.wd) * w - (p.lr * p.rescale_grad) * g;
}

// The new momentum, as MXNet's SGDMomKernel.
template <typename P>
inline float SGDMomentum(const P& p, float mom, float w, float g) {
  if (p.clip_gradient >= 0.f) {
    return p.momentum * mom - p.lr * p.wd * w - p.lr * Clip(p.rescale_grad * g, p.clip_gradient);
  }
  return p.momentum * mom - p.lr * p.wd * w - p.lr * p.rescale_grad * g;
}

void SGDCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                const std::vector<TBlob>& out) {
  const SGDParam p = attrs.Param<SGDParam>();
  const float *w = F(in[0]), *g = F(in[1]);
  float* y = M(out[0]);
  const int64_t count = in[0].Size();
  RunLoop([=] {
    for (int64_t i = 0; i < count; ++i) y[i] = SGDStep(p, w[i], g[i]);
  });
}

void SGDMomCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                   const std::vector<TBlob>& out) {
  const SGDMomParam p = attrs.Param<SGDMomParam>();
  const float *w = F(in[0]), *g = F(in[1]);
  float* mom = M(in[2]);
  float* y = M(out[0]);
  const int64_t count = in[0].Size();
  RunLoop([=] {
    for (int64_t i = 0; i < count; ++i) {
      mom[i] = SGDMomentum(p, mom[i], w[i], g[i]);
      y[i] = w[i] + mom[i];
    }
  });
}

void MPSGDCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                  const std::vector<TBlob>& out) {
  const SGDParam p = attrs.Param<SGDParam>();
  SwitchWeightType(in[0].dtype, [&](auto tag) {
    using W = typename decltype(tag)::type;
    const W* g = in[1].ptr<const W>();
    float* w32 = M(in[2]);
    W* y = out[0].ptr<W>();
    const int64_t count = in[0].Size();
    RunLoop([=] {
      for (int64_t i = 0; i < count; ++i) {
        w32[i] = SGDStep(p, w32[i], ToFloat(g[i]));
        y[i] = FromFloat<W>(w32[i]);
      }
    });
  });
}

void MPSGDMomCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                     const std::vector<TBlob>& out) {
  const SGDMomParam p = attrs.Param<SGDMomParam>();
  SwitchWeightType(in[0].dtype, [&](auto tag) {
    using W = typename decltype(tag)::type;
    const W* g = in[1].ptr<const W>();
    float* mom = M(in[2]);
    float* w32 = M(in[3]);
    W* y = out[0].ptr<W>();
    const int64_t count = in[0].Size();
    RunLoop([=] {
      for (int64_t i = 0; i < count; ++i) {
        mom[i] = SGDMomentum(p, mom[i], w32[i], ToFloat(g[i]));
        w32[i] = w32[i] + mom[i];
        y[i] = FromFloat<W>(w32[i]);
      }
    });
  });
}

// Nesterov momentum as MXNet's kernels: the momentum's weight decay reads the weight after the
// new weight is stored. MXNet's optimizer calls nag_mom_update with out=weight, so that is the
// new weight there (and in mp_nag_mom_update, which steps a local copy, always); a separate
// output leaves the old one.
template <typename P>
inline float NesterovRescaled(const P& p, float g) {
  return p.clip_gradient >= 0.f ? Clip(p.rescale_grad * g, p.clip_gradient) : p.rescale_grad * g;
}

void NAGMomCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                   const std::vector<TBlob>& out) {
  const NAGMomParam p = attrs.Param<NAGMomParam>();
  const float *w = F(in[0]), *g = F(in[1]);
  float* mom = M(in[2]);
  float* y = M(out[0]);
  const int64_t count = in[0].Size();
  RunLoop([=] {
    for (int64_t i = 0; i < count; ++i) {
      const float rescaled = NesterovRescaled(p, g[i]);
      mom[i] = p.momentum * mom[i];
      y[i] = w[i] - mom[i] + (p.momentum + 1) * (mom[i] - p.lr * (rescaled + p.wd * w[i]));
      mom[i] = mom[i] - p.lr * (rescaled + p.wd * w[i]);  // w[i] is y[i] when they alias
    }
  });
}

void MPNAGMomCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                     const std::vector<TBlob>& out) {
  const NAGMomParam p = attrs.Param<NAGMomParam>();
  SwitchWeightType(in[0].dtype, [&](auto tag) {
    using W = typename decltype(tag)::type;
    const W* g = in[1].ptr<const W>();
    float* mom = M(in[2]);
    float* w32 = M(in[3]);
    W* y = out[0].ptr<W>();
    const int64_t count = in[0].Size();
    RunLoop([=] {
      for (int64_t i = 0; i < count; ++i) {
        const float rescaled = NesterovRescaled(p, ToFloat(g[i]));
        float w = w32[i];
        mom[i] = p.momentum * mom[i];
        w = w - mom[i] + (p.momentum + 1) * (mom[i] - p.lr * (rescaled + p.wd * w));
        mom[i] = mom[i] - p.lr * (rescaled + p.wd * w);
        w32[i] = w;
        y[i] = FromFloat<W>(w);
      }
    });
  });
}

void AdamCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                 const std::vector<TBlob>& out) {
  const AdamParam p = attrs.Param<AdamParam>();
  const float *w = F(in[0]), *g = F(in[1]);
  float *mean = M(in[2]), *var = M(in[3]);
  float* y = M(out[0]);
  const int64_t count = in[0].Size();
  RunLoop([=] {
    for (int64_t i = 0; i < count; ++i) {
      float rescaled = g[i] * p.rescale_grad + w[i] * p.wd;
      if (p.clip_gradient >= 0.f) rescaled = Clip(rescaled, p.clip_gradient);
      mean[i] = p.beta1 * mean[i] + (1.f - p.beta1) * rescaled;
      var[i] = p.beta2 * var[i] + (1.f - p.beta2) * rescaled * rescaled;
      y[i] = w[i] - p.lr * mean[i] / (std::sqrt(var[i]) + p.epsilon);
    }
  });
}

// _adamw_update and _mp_adamw_update: the last input holds rescale_grad; when it is not finite or
// zero (a dynamic loss scaler's overflow) MXNet skips the update, and the weight stays.
void AdamWCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                  const std::vector<TBlob>& out) {
  const AdamWParam p = attrs.Param<AdamWParam>();
  const bool mp = in.size() == 6;
  const float rescale = F(in.back())[0];
  SwitchWeightType(in[0].dtype, [&](auto tag) {
    using W = typename decltype(tag)::type;
    const W* w = in[0].ptr<const W>();
    const W* g = in[1].ptr<const W>();
    W* y = out[0].ptr<W>();
    const int64_t n = in[0].Size();
    if (!std::isfinite(rescale) || rescale == 0.f) {
      for (int64_t i = 0; i < n; ++i) y[i] = w[i];
      return;
    }
    float *mean = M(in[2]), *var = M(in[3]);
    float* w32 = mp ? M(in[4]) : nullptr;
    RunLoop([=] {
      for (int64_t i = 0; i < n; ++i) {
        float scaled = rescale * ToFloat(g[i]);
        if (p.clip_gradient >= 0.f) scaled = Clip(scaled, p.clip_gradient);
        mean[i] = p.beta1 * mean[i] + (1.f - p.beta1) * scaled;
        var[i] = p.beta2 * var[i] + (1.f - p.beta2) * (scaled * scaled);
        const float weight = mp ? w32[i] : ToFloat(w[i]);
        const float next =
            weight - p.eta * (p.lr * mean[i] / (std::sqrt(var[i]) + p.epsilon) + p.wd * weight);
        if (mp) w32[i] = next;
        y[i] = FromFloat<W>(next);
      }
    });
  });
}

void RMSPropCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                    const std::vector<TBlob>& out) {
  const RMSPropParam p = attrs.Param<RMSPropParam>();
  const float *w = F(in[0]), *g = F(in[1]);
  float* n = M(in[2]);
  float* y = M(out[0]);
  const int64_t count = in[0].Size();
  RunLoop([=] {
    for (int64_t i = 0; i < count; ++i) {
      float rescaled = p.rescale_grad * g[i] + p.wd * w[i];
      if (p.clip_gradient >= 0.f) rescaled = Clip(rescaled, p.clip_gradient);
      n[i] = (1.f - p.gamma1) * (rescaled * rescaled) + p.gamma1 * n[i];
      float next = w[i] - p.lr * (rescaled / std::sqrt(n[i] + p.epsilon));
      if (p.clip_weights >= 0.f) next = Clip(next, p.clip_weights);
      y[i] = next;
    }
  });
}

void RMSPropAlexCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                        const std::vector<TBlob>& out) {
  const RMSPropAlexParam p = attrs.Param<RMSPropAlexParam>();
  const float *w = F(in[0]), *g = F(in[1]);
  float *n = M(in[2]), *mg = M(in[3]), *delta = M(in[4]);
  float* y = M(out[0]);
  const int64_t count = in[0].Size();
  RunLoop([=] {
    for (int64_t i = 0; i < count; ++i) {
      float rescaled = p.rescale_grad * g[i] + p.wd * w[i];
      if (p.clip_gradient >= 0.f) rescaled = Clip(rescaled, p.clip_gradient);
      n[i] = (1.f - p.gamma1) * rescaled * rescaled + p.gamma1 * n[i];
      mg[i] = (1.f - p.gamma1) * rescaled + p.gamma1 * mg[i];
      delta[i] =
          p.gamma2 * delta[i] - (p.lr * rescaled / std::sqrt(n[i] - mg[i] * mg[i] + p.epsilon));
      y[i] = p.clip_weights >= 0.f ? Clip(w[i] + delta[i], p.clip_weights) : w[i] + delta[i];
    }
  });
}

void FTMLCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                 const std::vector<TBlob>& out) {
  const FTMLParam p = attrs.Param<FTMLParam>();
  const float *w = F(in[0]), *g = F(in[1]);
  float *d = M(in[2]), *v = M(in[3]), *z = M(in[4]);
  float* y = M(out[0]);
  const float t = static_cast<float>(p.t);
  const float epsilon = static_cast<float>(p.epsilon);
  const int64_t count = in[0].Size();
  RunLoop([=] {
    for (int64_t i = 0; i < count; ++i) {
      const float grad = p.clip_grad >= 0.f ? Clip(p.rescale_grad * g[i] + p.wd * w[i], p.clip_grad)
                                            : p.rescale_grad * g[i] + p.wd * w[i];
      v[i] = p.beta2 * v[i] + (1 - p.beta2) * (grad * grad);
      const float d_t = (1 - std::pow(p.beta1, t)) / p.lr *
                        (std::sqrt(v[i] / (1 - std::pow(p.beta2, t))) + epsilon);
      z[i] = p.beta1 * z[i] + (1 - p.beta1) * grad - (d_t - p.beta1 * d[i]) * w[i];
      d[i] = d_t;
      y[i] = -z[i] / d_t;
    }
  });
}

void FtrlCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                 const std::vector<TBlob>& out) {
  const FtrlParam p = attrs.Param<FtrlParam>();
  const float *w = F(in[0]), *g = F(in[1]);
  float *z = M(in[2]), *n = M(in[3]);
  float* y = M(out[0]);
  const int64_t count = in[0].Size();
  RunLoop([=] {
    for (int64_t i = 0; i < count; ++i) {
      float rescaled = g[i] * p.rescale_grad;
      if (p.clip_gradient >= 0.f) rescaled = Clip(rescaled, p.clip_gradient);
      z[i] += rescaled - (std::sqrt(n[i] + rescaled * rescaled) - std::sqrt(n[i])) * w[i] / p.lr;
      n[i] += rescaled * rescaled;
      const float active = std::fabs(z[i]) > p.lamda1 ? 1.f : 0.f;
      y[i] = (Sign(z[i]) * p.lamda1 - z[i]) / ((p.beta + std::sqrt(n[i])) / p.lr + p.wd) * active;
    }
  });
}

void SignSGDCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                    const std::vector<TBlob>& out) {
  const SignSGDParam p = attrs.Param<SignSGDParam>();
  const float *w = F(in[0]), *g = F(in[1]);
  float* y = M(out[0]);
  const int64_t count = in[0].Size();
  RunLoop([=] {
    for (int64_t i = 0; i < count; ++i) {
      y[i] = (1.f - p.lr * p.wd) * w[i] - p.lr * Sign(g[i]);
    }
  });
}

void SignumCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                   const std::vector<TBlob>& out) {
  const SignumParam p = attrs.Param<SignumParam>();
  const float *w = F(in[0]), *g = F(in[1]);
  float* mom = M(in[2]);
  float* y = M(out[0]);
  const int64_t count = in[0].Size();
  RunLoop([=] {
    for (int64_t i = 0; i < count; ++i) {
      const float rescaled = p.clip_gradient >= 0.f ? Clip(p.rescale_grad * g[i], p.clip_gradient)
                                                    : p.rescale_grad * g[i];
      mom[i] = p.momentum * mom[i] - (1 - p.momentum) * p.wd * w[i] - (1 - p.momentum) * rescaled;
      y[i] = (1.f - p.lr * p.wd_lh) * w[i] + p.lr * Sign(mom[i]);
    }
  });
}

// lamb_update_phase1 and mp_lamb_update_phase1: the float32 direction g (the output); the
// moments are updated in place. beta^t is computed in double, as MXNet's std::pow(float, int).
void LambPhase1Compute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                       const std::vector<TBlob>& out) {
  const LambPhase1Param p = attrs.Param<LambPhase1Param>();
  const bool mp = in.size() == 5;
  const float beta1_t = static_cast<float>(std::pow(p.beta1, p.t));
  const float beta2_t = static_cast<float>(std::pow(p.beta2, p.t));
  SwitchWeightType(in[0].dtype, [&](auto tag) {
    using W = typename decltype(tag)::type;
    const W* w = in[0].ptr<const W>();
    const W* g = in[1].ptr<const W>();
    float *mean = M(in[2]), *var = M(in[3]);
    const float* w32 = mp ? F(in[4]) : nullptr;
    float* y = M(out[0]);
    const int64_t count = in[0].Size();
    RunLoop([=] {
      for (int64_t i = 0; i < count; ++i) {
        const float weight = mp ? w32[i] : ToFloat(w[i]);
        float rescaled = ToFloat(g[i]) * p.rescale_grad;
        if (p.clip_gradient >= 0.f) rescaled = Clip(rescaled, p.clip_gradient);
        mean[i] = p.beta1 * mean[i] + (1.f - p.beta1) * rescaled;
        var[i] = p.beta2 * var[i] + (1.f - p.beta2) * rescaled * rescaled;
        if (p.bias_correction) {
          const float mean_hat = static_cast<float>(mean[i] / (1. - beta1_t));
          const float var_hat = var[i] / (1 - beta2_t);
          y[i] = mean_hat / (std::sqrt(var_hat) + p.epsilon) + p.wd * weight;
        } else {
          y[i] = mean[i] / (std::sqrt(var[i]) + p.epsilon) + p.wd * weight;
        }
      }
    });
  });
}

// lamb_update_phase2 and mp_lamb_update_phase2: weight - lr * r1 / r2 * g, the trust ratio r1/r2
// taken as 1 when either norm is 0. The mp_ form steps from the master copy but, as MXNet 1.9.1,
// does not write it back.
void LambPhase2Compute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                       const std::vector<TBlob>& out) {
  const LambPhase2Param p = attrs.Param<LambPhase2Param>();
  const bool mp = in.size() == 5;
  float r1 = F(in[2])[0];
  const float r2 = F(in[3])[0];
  if (p.lower_bound >= 0) r1 = std::max(r1, p.lower_bound);
  if (p.upper_bound >= 0) r1 = std::min(r1, p.upper_bound);
  const float lr = (r1 == 0.f || r2 == 0.f) ? p.lr * 1.f : p.lr * r1 / r2;
  SwitchWeightType(in[0].dtype, [&](auto tag) {
    using W = typename decltype(tag)::type;
    const W* w = in[0].ptr<const W>();
    const float* g = F(in[1]);
    const float* w32 = mp ? F(in[4]) : nullptr;
    W* y = out[0].ptr<W>();
    const int64_t count = in[0].Size();
    RunLoop([=] {
      for (int64_t i = 0; i < count; ++i) {
        y[i] = FromFloat<W>((mp ? w32[i] : ToFloat(w[i])) - lr * g[i]);
      }
    });
  });
}

// lamb_update_phase1's output is float32 whatever the weight's dtype.
FInferType LambPhase1Type(bool mp) {
  FInferType base = UpdateType(2, mp);
  return [base](const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
    std::vector<DType> weight_out{DType::kUnknown};
    const bool known = base(attrs, in, &weight_out);
    (*out)[0] = DType::kFloat32;
    return known;
  };
}

// ---- multi-weight SGD -------------------------------------------------------------------------

// Inputs per weight: weight, grad, [mom], [weight32]; then lrs and wds when preloaded.
struct MultiLayout {
  uint32_t stride;
  bool momentum;
  bool mp;
  bool preloaded = false;
};

template <typename P>
std::vector<std::string> MultiInputNames(const NodeAttrs& attrs, MultiLayout layout) {
  std::vector<std::string> names;
  for (int i = 0; i < attrs.Param<P>().num_weights; ++i) {
    const std::string k = std::to_string(i);
    names.push_back("weight_" + k);
    names.push_back("grad_" + k);
    if (layout.momentum) names.push_back("mom_" + k);
    if (layout.mp) names.push_back("weight32_" + k);
  }
  if (layout.preloaded) {
    names.push_back("lrs");
    names.push_back("wds");
  }
  return names;
}

template <typename P>
FInferShape MultiShape(MultiLayout layout) {
  return [layout](const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
    const P p = attrs.Param<P>();
    const size_t n = static_cast<size_t>(p.num_weights);
    if (layout.preloaded) {
      for (size_t j = in->size() - 2; j < in->size(); ++j) {
        HN_CHECK((*in)[j].ndim() == 0 || (*in)[j] == Shape{p.num_weights}, kShapeError)
            << DescribeNode(attrs) << ": input '" << attrs.op->InputNames(attrs)[j]
            << "' must have shape (num_weights,) = (" << n << ",), got " << (*in)[j];
        (*in)[j] = Shape{p.num_weights};
      }
    } else {
      HN_CHECK(p.lrs.size() == n && p.wds.size() == n, kInvalidArgument)
          << DescribeNode(attrs) << ": num_weights is " << n << " but lrs has " << p.lrs.size()
          << " values and wds " << p.wds.size();
    }
    bool known = true;
    for (size_t k = 0; k < n; ++k) {
      Shape weight = (*out)[k];
      for (uint32_t j = 0; j < layout.stride; ++j) {
        const Shape& s = (*in)[k * layout.stride + j];
        if (s.ndim() == 0) continue;
        if (weight.ndim() == 0) weight = s;
        HN_CHECK(weight == s, kShapeError)
            << DescribeNode(attrs) << ": input " << k * layout.stride + j << " ('"
            << attrs.op->InputNames(attrs)[k * layout.stride + j] << "') has shape " << s
            << " but weight_" << k << " has " << weight;
      }
      if (weight.ndim() == 0) {
        known = false;
        continue;
      }
      for (uint32_t j = 0; j < layout.stride; ++j) (*in)[k * layout.stride + j] = weight;
      (*out)[k] = weight;
    }
    return known;
  };
}

template <typename P>
FInferType MultiType(MultiLayout layout) {
  return [layout](const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
    const size_t n = static_cast<size_t>(attrs.Param<P>().num_weights);
    const uint32_t num_low = layout.mp ? 2 : layout.stride;
    FInferType one = UpdateType(num_low, layout.mp);
    bool known = true;
    for (size_t k = 0; k < n; ++k) {
      std::vector<DType> ins(in->begin() + static_cast<int64_t>(k * layout.stride),
                             in->begin() + static_cast<int64_t>((k + 1) * layout.stride));
      std::vector<DType> outs{(*out)[k]};
      known = one(attrs, &ins, &outs) && known;
      std::copy(ins.begin(), ins.end(), in->begin() + static_cast<int64_t>(k * layout.stride));
      (*out)[k] = outs[0];
    }
    for (size_t j = n * layout.stride; j < in->size(); ++j) {
      HN_CHECK((*in)[j] == DType::kUnknown || (*in)[j] == DType::kFloat32, kTypeError)
          << DescribeNode(attrs) << ": input '" << attrs.op->InputNames(attrs)[j]
          << "' must be float32, got " << DTypeName((*in)[j]);
      (*in)[j] = DType::kFloat32;
    }
    return known;
  };
}

// MXNet's MultiSGDKernel: mom = momentum mom - lr wd w - lr rescaled g; w += mom, with the
// momentum 0 and no state when there is none.
template <typename P>
FCompute MultiSGDCompute(MultiLayout layout) {
  return [layout](const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                  const std::vector<TBlob>& out) {
    const P p = attrs.Param<P>();
    const float momentum = layout.momentum ? p.momentum : 0.f;
    // The loop copies what it reads (not p, whose lrs and wds are vectors).
    const float rescale_grad = p.rescale_grad, clip_gradient = p.clip_gradient;
    const bool has_momentum = layout.momentum, mp = layout.mp;
    for (int k = 0; k < p.num_weights; ++k) {
      const size_t base = static_cast<size_t>(k) * layout.stride;
      const float lr = layout.preloaded ? F(in[in.size() - 2])[k] : p.lrs[static_cast<size_t>(k)];
      const float wd = layout.preloaded ? F(in[in.size() - 1])[k] : p.wds[static_cast<size_t>(k)];
      SwitchWeightType(in[base].dtype, [&](auto tag) {
        using W = typename decltype(tag)::type;
        const W* w = in[base].ptr<const W>();
        const W* g = in[base + 1].ptr<const W>();
        float* mom = layout.momentum ? M(in[base + 2]) : nullptr;
        float* w32 = layout.mp ? M(in[base + layout.stride - 1]) : nullptr;
        W* y = out[static_cast<size_t>(k)].ptr<W>();
        const int64_t count = in[base].Size();
        RunLoop([=] {
          for (int64_t i = 0; i < count; ++i) {
            float weight = mp ? w32[i] : ToFloat(w[i]);
            float m = has_momentum ? mom[i] : 0.f;
            const float grad = ToFloat(g[i]);
            if (clip_gradient >= 0.f) {
              m = momentum * m - lr * wd * weight - lr * Clip(rescale_grad * grad, clip_gradient);
            } else {
              m = momentum * m - lr * wd * weight - lr * rescale_grad * grad;
            }
            if (has_momentum) mom[i] = m;
            weight = weight + m;
            if (mp) w32[i] = weight;
            y[i] = FromFloat<W>(weight);
          }
        });
      });
    }
  };
}

template <typename P>
void RegisterMultiSGD(OpRegistry* r, const char* name, const char* text, MultiLayout layout) {
  r->Register(name)
      .Describe(text)
      .SetParam<P>()
      .SetInputNames([layout](const NodeAttrs& attrs) { return MultiInputNames<P>(attrs, layout); })
      .SetNumOutputs([](const NodeAttrs& attrs) {
        return static_cast<uint32_t>(attrs.Param<P>().num_weights);
      })
      .SetInferShape(MultiShape<P>(layout))
      .SetInferType(MultiType<P>(layout))
      .SetCompute(MultiSGDCompute<P>(layout));
}

}  // namespace

void RegisterOptimizerOps(OpRegistry* r) {
  r->Register("sgd_update")
      .Describe(
          "SGD step: weight = (1 - lr * wd) * weight - lr * clip(rescale_grad * grad) (returns "
          "the new weight).")
      .SetParam<SGDParam>()
      .SetInputNames({"weight", "grad"})
      .SetInferShape(UpdateShape({}))
      .SetInferType(UpdateType(2, false))
      .SetCompute(SGDCompute);
  r->Register("sgd_mom_update")
      .Describe(
          "SGD step with momentum: mom = momentum * mom - lr * (wd * weight + clip(rescale_grad "
          "* grad)); weight + mom is the new weight (mom is updated in place).")
      .SetParam<SGDMomParam>()
      .SetInputNames({"weight", "grad", "mom"})
      .SetMutableInputs({2})
      .SetInferShape(UpdateShape({}))
      .SetInferType(UpdateType(3, false))
      .SetCompute(SGDMomCompute);
  r->Register("mp_sgd_update")
      .Describe(
          "sgd_update on the float32 master copy weight32 of a float16 weight (weight32 is "
          "updated in place; the output is it cast to the weight's dtype).")
      .SetParam<SGDParam>()
      .SetInputNames({"weight", "grad", "weight32"})
      .SetMutableInputs({2})
      .SetInferShape(UpdateShape({}))
      .SetInferType(UpdateType(2, true))
      .SetCompute(MPSGDCompute);
  r->Register("mp_sgd_mom_update")
      .Describe(
          "sgd_mom_update on the float32 master copy weight32 of a float16 weight, with a "
          "float32 momentum (both updated in place).")
      .SetParam<SGDMomParam>()
      .SetInputNames({"weight", "grad", "mom", "weight32"})
      .SetMutableInputs({2, 3})
      .SetInferShape(UpdateShape({}))
      .SetInferType(UpdateType(2, true))
      .SetCompute(MPSGDMomCompute);
  RegisterMultiSGD<MultiSGDParam>(
      r, "multi_sgd_update",
      "sgd_update of num_weights weights at once, inputs weight_i, grad_i, with learning rates "
      "lrs and weight decays wds.",
      MultiLayout{2, false, false});
  RegisterMultiSGD<MultiSGDMomParam>(
      r, "multi_sgd_mom_update",
      "sgd_mom_update of num_weights weights at once, inputs weight_i, grad_i, mom_i (updated "
      "in place).",
      MultiLayout{3, true, false});
  RegisterMultiSGD<MultiSGDParam>(
      r, "multi_mp_sgd_update",
      "mp_sgd_update of num_weights weights at once, inputs weight_i, grad_i, weight32_i "
      "(updated in place).",
      MultiLayout{3, false, true});
  RegisterMultiSGD<MultiSGDMomParam>(
      r, "multi_mp_sgd_mom_update",
      "mp_sgd_mom_update of num_weights weights at once, inputs weight_i, grad_i, mom_i, "
      "weight32_i (the last two updated in place).",
      MultiLayout{4, true, true});
  RegisterMultiSGD<PreloadedMultiSGDParam>(
      r, "preloaded_multi_sgd_update",
      "multi_sgd_update with the learning rates and weight decays as the inputs lrs and wds "
      "(float32, one value per weight).",
      MultiLayout{2, false, false, true});
  RegisterMultiSGD<PreloadedMultiSGDMomParam>(
      r, "preloaded_multi_sgd_mom_update",
      "multi_sgd_mom_update with the learning rates and weight decays as the inputs lrs and wds.",
      MultiLayout{3, true, false, true});
  RegisterMultiSGD<PreloadedMultiSGDParam>(
      r, "preloaded_multi_mp_sgd_update",
      "multi_mp_sgd_update with the learning rates and weight decays as the inputs lrs and wds.",
      MultiLayout{3, false, true, true});
  RegisterMultiSGD<PreloadedMultiSGDMomParam>(
      r, "preloaded_multi_mp_sgd_mom_update",
      "multi_mp_sgd_mom_update with the learning rates and weight decays as the inputs lrs and "
      "wds.",
      MultiLayout{4, true, true, true});
  r->Register("nag_mom_update")
      .Describe(
          "Nesterov accelerated SGD step: mom = momentum * mom; the new weight is weight - mom "
          "+ (momentum + 1) * (mom - lr * step); then mom -= lr * step, step = clip(rescale_grad "
          "* grad) + wd * weight.")
      .SetParam<NAGMomParam>()
      .SetInputNames({"weight", "grad", "mom"})
      .SetMutableInputs({2})
      .SetInferShape(UpdateShape({}))
      .SetInferType(UpdateType(3, false))
      .SetCompute(NAGMomCompute);
  r->Register("mp_nag_mom_update")
      .Describe(
          "nag_mom_update on the float32 master copy weight32 of a float16 weight, with a "
          "float32 momentum (both updated in place).")
      .SetParam<NAGMomParam>()
      .SetInputNames({"weight", "grad", "mom", "weight32"})
      .SetMutableInputs({2, 3})
      .SetInferShape(UpdateShape({}))
      .SetInferType(UpdateType(2, true))
      .SetCompute(MPNAGMomCompute);
  r->Register("adam_update")
      .Describe(
          "Adam step without bias correction (the optimizer folds it into lr): g = "
          "clip(rescale_grad * grad + wd * weight); mean and var decay towards g and g^2; the "
          "new weight is weight - lr * mean / (sqrt(var) + epsilon).")
      .SetParam<AdamParam>()
      .SetInputNames({"weight", "grad", "mean", "var"})
      .SetMutableInputs({2, 3})
      .SetInferShape(UpdateShape({}))
      .SetInferType(UpdateType(4, false))
      .SetCompute(AdamCompute);
  r->Register("_adamw_update")
      .Describe(
          "AdamW step with decoupled weight decay: weight - eta * (lr * mean / (sqrt(var) + "
          "epsilon) + wd * weight); rescale_grad is an input, and a non-finite or zero one "
          "skips the step.")
      .SetParam<AdamWParam>()
      .SetInputNames({"weight", "grad", "mean", "var", "rescale_grad"})
      .SetMutableInputs({2, 3})
      .SetInferShape(UpdateShape({4}))
      .SetInferType(UpdateType(4, false))
      .SetCompute(AdamWCompute);
  r->Register("_mp_adamw_update")
      .Describe(
          "_adamw_update on the float32 master copy weight32 of a float16 weight, with float32 "
          "moments (all updated in place).")
      .SetParam<AdamWParam>()
      .SetInputNames({"weight", "grad", "mean", "var", "weight32", "rescale_grad"})
      .SetMutableInputs({2, 3, 4})
      .SetInferShape(UpdateShape({5}))
      .SetInferType(UpdateType(2, true))
      .SetCompute(AdamWCompute);
  r->Register("rmsprop_update")
      .Describe(
          "RMSProp step (Tieleman and Hinton): n decays towards g^2, g = clip(rescale_grad * "
          "grad + wd * weight); the new weight is weight - lr * g / sqrt(n + epsilon), clipped "
          "by clip_weights.")
      .SetParam<RMSPropParam>()
      .SetInputNames({"weight", "grad", "n"})
      .SetMutableInputs({2})
      .SetInferShape(UpdateShape({}))
      .SetInferType(UpdateType(3, false))
      .SetCompute(RMSPropCompute);
  r->Register("rmspropalex_update")
      .Describe(
          "Centered RMSProp step (Graves): n and g decay towards grad^2 and grad, delta = "
          "gamma2 * delta - lr * grad / sqrt(n - g^2 + epsilon); the new weight is weight + "
          "delta.")
      .SetParam<RMSPropAlexParam>()
      .SetInputNames({"weight", "grad", "n", "g", "delta"})
      .SetMutableInputs({2, 3, 4})
      .SetInferShape(UpdateShape({}))
      .SetInferType(UpdateType(5, false))
      .SetCompute(RMSPropAlexCompute);
  r->Register("ftml_update")
      .Describe(
          "FTML step (Follow the Moving Leader) at update count t, states d, v, z updated in "
          "place; the new weight is -z / d_t.")
      .SetParam<FTMLParam>()
      .SetInputNames({"weight", "grad", "d", "v", "z"})
      .SetMutableInputs({2, 3, 4})
      .SetInferShape(UpdateShape({}))
      .SetInferType(UpdateType(5, false))
      .SetCompute(FTMLCompute);
  r->Register("ftrl_update")
      .Describe(
          "FTRL-proximal step with L1 lamda1: z and n (the sum of squared gradients) updated in "
          "place; the new weight is 0 where |z| <= lamda1.")
      .SetParam<FtrlParam>()
      .SetInputNames({"weight", "grad", "z", "n"})
      .SetMutableInputs({2, 3})
      .SetInferShape(UpdateShape({}))
      .SetInferType(UpdateType(4, false))
      .SetCompute(FtrlCompute);
  r->Register("signsgd_update")
      .Describe("signSGD step: weight = (1 - lr * wd) * weight - lr * sign(grad).")
      .SetParam<SignSGDParam>()
      .SetInputNames({"weight", "grad"})
      .SetInferShape(UpdateShape({}))
      .SetInferType(UpdateType(2, false))
      .SetCompute(SignSGDCompute);
  r->Register("signum_update")
      .Describe(
          "Signum step: mom = momentum * mom - (1 - momentum) * (wd * weight + "
          "clip(rescale_grad * grad)); weight = (1 - lr * wd_lh) * weight + lr * sign(mom).")
      .SetParam<SignumParam>()
      .SetInputNames({"weight", "grad", "mom"})
      .SetMutableInputs({2})
      .SetInferShape(UpdateShape({}))
      .SetInferType(UpdateType(3, false))
      .SetCompute(SignumCompute);
  r->Register("lamb_update_phase1")
      .Describe(
          "LAMB's first phase: updates mean and var in place and returns the direction g = "
          "mean_hat / (sqrt(var_hat) + epsilon) + wd * weight (bias-corrected by 1 - beta^t "
          "when bias_correction).")
      .SetParam<LambPhase1Param>()
      .SetInputNames({"weight", "grad", "mean", "var"})
      .SetMutableInputs({2, 3})
      .SetInferShape(UpdateShape({}))
      .SetInferType(LambPhase1Type(false))
      .SetCompute(LambPhase1Compute);
  r->Register("lamb_update_phase2")
      .Describe(
          "LAMB's second phase: weight - lr * r1 / r2 * g, with r1 the weight's norm (bounded "
          "by lower_bound and upper_bound) and r2 g's norm; a zero norm makes the ratio 1.")
      .SetParam<LambPhase2Param>()
      .SetInputNames({"weight", "g", "r1", "r2"})
      .SetInferShape(UpdateShape({2, 3}))
      .SetInferType(UpdateType(1, false))
      .SetCompute(LambPhase2Compute);
  r->Register("mp_lamb_update_phase1")
      .Describe(
          "lamb_update_phase1 for a float16 weight: float32 moments, and wd applied to the "
          "float32 master copy weight32.")
      .SetParam<LambPhase1Param>()
      .SetInputNames({"weight", "grad", "mean", "var", "weight32"})
      .SetMutableInputs({2, 3})
      .SetInferShape(UpdateShape({}))
      .SetInferType(LambPhase1Type(true))
      .SetCompute(LambPhase1Compute);
  r->Register("mp_lamb_update_phase2")
      .Describe(
          "lamb_update_phase2 stepping from the float32 master copy weight32 of a float16 "
          "weight (MXNet 1.9.1 leaves weight32 itself unchanged).")
      .SetParam<LambPhase2Param>()
      .SetInputNames({"weight", "g", "r1", "r2", "weight32"})
      .SetMutableInputs({4})
      .SetInferShape(UpdateShape({2, 3}))
      .SetInferType(UpdateType(1, true))
      .SetCompute(LambPhase2Compute);
}

}  // namespace hybridnet
