// CTCLoss (MXNet src/operator/nn/ctc_loss-inl.h, with warp-ctc's CPU algorithm): the negative
// log-likelihood of each label sequence under the connectionist temporal classification of
// data (T, N, C), a softmax over the C classes at every step. The forward loss (N,) is the
// inference output; MXNet's hidden gradient output is not produced.
//
// Labels (N, L): with blank_label=first the blank is class 0 and a label row ends at its first 0;
// with last the blank is class C - 1 and a row ends at its first -1. With use_label_lengths
// (label_lengths input) row n holds label_lengths[n] labels instead; with use_data_lengths
// (data_lengths input) sequence n uses its first data_lengths[n] steps. As warp-ctc, a label
// sequence that cannot fit (L + repeated neighbours > T) gives loss 0. Lengths and labels
// outside their ranges are clamped (MXNet reads outside the arrays).
//
// The gradient (_backward_CTCLoss) is MXNet's: out_grad[n] times the derivative of loss n with
// respect to the pre-softmax activations (warp-ctc's softmax - alpha * beta / p), which MXNet
// computes in the forward and keeps as a hidden output; here the backward op recomputes it, in
// double. Steps past a sequence's length and sequences whose labels cannot fit get zeros; the
// labels and lengths get zeros.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "ops/dtype_switch-inl.h"
#include "ops/gradient_util.h"
#include "ops/register_ops.h"
#include "ops/shape/shape_util-inl.h"

namespace hybridnet {

namespace {

enum class BlankLabel { kFirst, kLast };

struct CTCLossParam {
  bool use_data_lengths = false;
  bool use_label_lengths = false;
  BlankLabel blank_label = BlankLabel::kFirst;
  static void Declare(ParamDeclarer<CTCLossParam>* d) {
    d->Field("use_data_lengths", &CTCLossParam::use_data_lengths)
        .Default(false)
        .Describe("If true, the data_lengths input (N,) gives each sequence's length.");
    d->Field("use_label_lengths", &CTCLossParam::use_label_lengths)
        .Default(false)
        .Describe(
            "If true, the label_lengths input (N,) gives each label row's length; "
            "otherwise a row ends at the padding value (0 or -1, see blank_label).");
    d->Field("blank_label", &CTCLossParam::blank_label,
             {{"first", BlankLabel::kFirst}, {"last", BlankLabel::kLast}})
        .Default(BlankLabel::kFirst)
        .Describe(
            "The blank class: first (0, labels padded with 0) or last (C - 1, labels "
            "padded with -1).");
  }
};

std::vector<std::string> CTCInputNames(const NodeAttrs& attrs) {
  const CTCLossParam& p = attrs.Param<CTCLossParam>();
  std::vector<std::string> names{"data", "label"};
  if (p.use_data_lengths) names.push_back("data_lengths");
  if (p.use_label_lengths) names.push_back("label_lengths");
  return names;
}

bool CTCShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& data = (*in)[0];
  if (data.ndim() == 0) return false;
  HN_CHECK(data.ndim() == 3, kShapeError)
      << DescribeNode(attrs) << ": data must be (seq_len, batch, classes), got " << data;
  const Shape& label = (*in)[1];
  if (label.ndim() != 0) {
    HN_CHECK(label.ndim() == 2 && (label[0] == data[1] || label[0] == 0 || data[1] == 0),
             kShapeError)
        << DescribeNode(attrs) << ": label must be (batch, max_label_len) with batch " << data[1]
        << ", got " << label;
  }
  for (size_t i = 2; i < in->size(); ++i)
    internal::AssignShape(attrs, in, i, Shape{data[1]},
                          i == 2 && attrs.Param<CTCLossParam>().use_data_lengths
                              ? "input 'data_lengths'"
                              : "input 'label_lengths'");
  internal::AssignShape(attrs, out, 0, Shape{data[1]}, "output");
  bool known = data.IsKnown() && label.IsKnown();
  for (const Shape& s : *in) known = known && s.IsKnown();
  return known;
}

bool CTCType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  DType& data = (*in)[0];
  HN_CHECK(data == DType::kUnknown || data == DType::kFloat32, kTypeError)
      << DescribeNode(attrs) << ": data has dtype " << DTypeName(data) << "; expected float32";
  for (size_t i = 1; i < in->size(); ++i)
    HN_CHECK((*in)[i] == DType::kUnknown || internal::IsNumericDType((*in)[i]), kTypeError)
        << DescribeNode(attrs) << ": input " << i << " has dtype " << DTypeName((*in)[i])
        << "; expected a numeric dtype";
  HN_CHECK((*out)[0] == DType::kUnknown || (*out)[0] == DType::kFloat32, kTypeError)
      << DescribeNode(attrs) << ": output dtype " << DTypeName((*out)[0]) << " is not float32";
  if (data == DType::kUnknown && (*out)[0] == DType::kFloat32) data = DType::kFloat32;
  (*out)[0] = DType::kFloat32;
  bool known = true;
  for (DType d : *in) known = known && d != DType::kUnknown;
  return known;
}

// Element i of a numeric blob as a double.
double ValueAt(const TBlob& b, int64_t i) {
  double v = 0;
  internal::SwitchNumericDType(b.dtype, [&](auto tag) {
    using I = typename decltype(tag)::type;
    v = static_cast<double>(b.ptr<const I>()[i]);
  });
  return v;
}

int64_t Clamp(double v, int64_t hi) {
  return v >= static_cast<double>(hi) ? hi : v > 0 ? static_cast<int64_t>(v) : 0;
}

double LogAdd(double a, double b) {
  if (a == -std::numeric_limits<double>::infinity()) return b;
  if (b == -std::numeric_limits<double>::infinity()) return a;
  const double m = std::max(a, b);
  return m + std::log(std::exp(a - m) + std::exp(b - m));
}

// One batch element's problem: its steps and label sequence, read as MXNet reads them.
struct CTCSequence {
  int64_t steps = 0;
  std::vector<int64_t> labels;
};

CTCSequence ReadSequence(const CTCLossParam& p, const std::vector<TBlob>& in, int64_t b) {
  const int64_t steps = in[0].shape[0], classes = in[0].shape[2];
  const int64_t max_label = in[1].shape[1];
  const double padding = p.blank_label == BlankLabel::kFirst ? 0.0 : -1.0;
  CTCSequence seq;
  seq.steps = p.use_data_lengths ? Clamp(ValueAt(in[2], b), steps) : steps;
  if (p.use_label_lengths) {
    const int64_t n = Clamp(ValueAt(in[p.use_data_lengths ? 3 : 2], b), max_label);
    for (int64_t l = 0; l < n; ++l)
      seq.labels.push_back(Clamp(ValueAt(in[1], b * max_label + l), classes - 1));
  } else {
    for (int64_t l = 0; l < max_label; ++l) {
      const double v = std::trunc(ValueAt(in[1], b * max_label + l));
      if (v == padding) break;
      seq.labels.push_back(Clamp(v, classes - 1));
    }
  }
  return seq;
}

// Whether the labels fit in the steps (warp-ctc gives loss 0 and gradient 0 otherwise).
bool Fits(const CTCSequence& seq) {
  const int64_t n = static_cast<int64_t>(seq.labels.size());
  int64_t repeats = 0;
  for (int64_t l = 1; l < n; ++l)
    repeats += seq.labels[static_cast<size_t>(l)] == seq.labels[static_cast<size_t>(l - 1)];
  return n + repeats <= seq.steps;
}

// The CTC lattice of one sequence over its extended labels (blank, l1, blank, ..., blank):
// log-softmax rows logp (steps x classes) and the forward variables alpha (steps x ext).
struct CTCLattice {
  int64_t ext = 0, classes = 0, blank = 0;
  std::vector<int64_t> labels;
  std::vector<double> logp, alpha;
  int64_t ExtendedLabel(int64_t s) const {
    return s % 2 == 0 ? blank : labels[static_cast<size_t>(s / 2)];
  }
  double LogP(int64_t t, int64_t s) const {
    return logp[static_cast<size_t>(t * classes + ExtendedLabel(s))];
  }
  // Whether a path may move from extended position s - 2 to s (skipping a blank).
  bool MaySkipTo(int64_t s) const {
    return s >= 2 && ExtendedLabel(s) != blank && ExtendedLabel(s) != ExtendedLabel(s - 2);
  }
  // log p(labels | data).
  double LogLikelihood(int64_t steps) const {
    const double* last = alpha.data() + (steps - 1) * ext;
    return ext > 1 ? LogAdd(last[ext - 1], last[ext - 2]) : last[ext - 1];
  }
};

CTCLattice BuildLattice(const float* x, int64_t b, int64_t batch, int64_t classes, int64_t blank,
                        const CTCSequence& seq) {
  const double neg_inf = -std::numeric_limits<double>::infinity();
  CTCLattice g;
  g.classes = classes;
  g.blank = blank;
  g.labels = seq.labels;
  g.ext = 2 * static_cast<int64_t>(seq.labels.size()) + 1;
  g.logp.resize(static_cast<size_t>(seq.steps * classes));
  g.alpha.assign(static_cast<size_t>(seq.steps * g.ext), neg_inf);
  for (int64_t t = 0; t < seq.steps; ++t) {
    const float* row = x + (t * batch + b) * classes;
    double* logp = g.logp.data() + t * classes;
    float mx = row[0];
    for (int64_t c = 1; c < classes; ++c) mx = std::max(mx, row[c]);
    double sum = 0;
    for (int64_t c = 0; c < classes; ++c) sum += std::exp(static_cast<double>(row[c] - mx));
    const double log_sum = std::log(sum);
    for (int64_t c = 0; c < classes; ++c) logp[c] = static_cast<double>(row[c] - mx) - log_sum;
    double* alpha = g.alpha.data() + t * g.ext;
    if (t == 0) {
      alpha[0] = g.LogP(0, 0);
      if (g.ext > 1) alpha[1] = g.LogP(0, 1);
      continue;
    }
    const double* prev = alpha - g.ext;
    for (int64_t s = 0; s < g.ext; ++s) {
      double a = prev[s];
      if (s >= 1) a = LogAdd(a, prev[s - 1]);
      if (g.MaySkipTo(s)) a = LogAdd(a, prev[s - 2]);
      alpha[s] = a + g.LogP(t, s);
    }
  }
  return g;
}

void CTCCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                const std::vector<TBlob>& out) {
  const CTCLossParam& p = attrs.Param<CTCLossParam>();
  const int64_t batch = in[0].shape[1], classes = in[0].shape[2];
  const int64_t blank = p.blank_label == BlankLabel::kFirst ? 0 : classes - 1;
  float* loss = out[0].ptr<float>();
  for (int64_t b = 0; b < batch; ++b) {
    const CTCSequence seq = ReadSequence(p, in, b);
    if (!Fits(seq) || seq.steps == 0) {
      loss[b] = 0.f;
      continue;
    }
    const CTCLattice g = BuildLattice(in[0].ptr<const float>(), b, batch, classes, blank, seq);
    loss[b] = static_cast<float>(-g.LogLikelihood(seq.steps));
  }
}

// _backward_CTCLoss: (out_grad (N,), the forward inputs) -> d data = out_grad[n] * (softmax -
// gamma), gamma_t(c) = the posterior of class c at step t (sum of alpha_t(s) beta_t(s) / p over
// the extended positions s of class c, beta_t excluding step t itself); zeros for the rest.
void CTCBackwardCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                        const std::vector<TBlob>& out) {
  const CTCLossParam& p = attrs.Param<CTCLossParam>();
  const std::vector<TBlob> forward_in(in.begin() + 1, in.end());
  const int64_t batch = forward_in[0].shape[1], classes = forward_in[0].shape[2];
  const int64_t blank = p.blank_label == BlankLabel::kFirst ? 0 : classes - 1;
  const double neg_inf = -std::numeric_limits<double>::infinity();
  for (const TBlob& o : out) {
    internal::SwitchNumericDType(o.dtype, [&](auto tag) {
      using I = typename decltype(tag)::type;
      std::fill(o.ptr<I>(), o.ptr<I>() + o.Size(), I(0));
    });
  }
  float* dx = out[0].ptr<float>();
  std::vector<double> beta, next, gamma;
  for (int64_t b = 0; b < batch; ++b) {
    const CTCSequence seq = ReadSequence(p, forward_in, b);
    if (!Fits(seq) || seq.steps == 0) continue;
    const CTCLattice g =
        BuildLattice(forward_in[0].ptr<const float>(), b, batch, classes, blank, seq);
    const double ll = g.LogLikelihood(seq.steps);
    const double dy = ValueAt(in[0], b);
    const int64_t ext = g.ext;
    beta.assign(static_cast<size_t>(ext), neg_inf);
    beta[static_cast<size_t>(ext - 1)] = 0;
    if (ext > 1) beta[static_cast<size_t>(ext - 2)] = 0;
    for (int64_t t = seq.steps - 1; t >= 0; --t) {
      if (t < seq.steps - 1) {
        // beta_t(s): the log-probability of the rest of a path at s after step t.
        next.assign(static_cast<size_t>(ext), neg_inf);
        for (int64_t s = 0; s < ext; ++s) {
          double v = beta[static_cast<size_t>(s)] + g.LogP(t + 1, s);
          if (s + 1 < ext) v = LogAdd(v, beta[static_cast<size_t>(s + 1)] + g.LogP(t + 1, s + 1));
          if (s + 2 < ext && g.MaySkipTo(s + 2))
            v = LogAdd(v, beta[static_cast<size_t>(s + 2)] + g.LogP(t + 1, s + 2));
          next[static_cast<size_t>(s)] = v;
        }
        std::swap(beta, next);
      }
      gamma.assign(static_cast<size_t>(classes), 0.0);
      const double* alpha = g.alpha.data() + t * ext;
      for (int64_t s = 0; s < ext; ++s) {
        gamma[static_cast<size_t>(g.ExtendedLabel(s))] +=
            std::exp(alpha[s] + beta[static_cast<size_t>(s)] - ll);
      }
      const double* logp = g.logp.data() + t * classes;
      float* row = dx + (t * batch + b) * classes;
      for (int64_t c = 0; c < classes; ++c) {
        row[c] = static_cast<float>(dy * (std::exp(logp[c]) - gamma[static_cast<size_t>(c)]));
      }
    }
  }
}

// out_grad and data float32, the gradients of the other inputs in their dtypes.
bool CTCBackwardType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  std::vector<DType> forward_in(in->begin() + 1, in->end());
  for (size_t i = 0; i < out->size(); ++i)
    if (forward_in[i] == DType::kUnknown) forward_in[i] = (*out)[i];
  std::vector<DType> forward_out{(*in)[0]};
  const bool known = CTCType(attrs, &forward_in, &forward_out);
  (*in)[0] = forward_out[0];
  for (size_t i = 0; i < forward_in.size(); ++i) (*in)[i + 1] = (*out)[i] = forward_in[i];
  return known;
}

}  // namespace

void RegisterCTCLossOps(OpRegistry* r) {
  r->Register("CTCLoss")
      .Describe(
          "Connectionist temporal classification loss of label sequences (N, L) under "
          "data (T, N, C) (softmax over C per step): -log p(label | data) per batch "
          "element, shape (N,).")
      .AddAlias("ctc_loss")
      .AddAlias("_contrib_CTCLoss")
      .AddAlias("_contrib_ctc_loss")
      .SetParam<CTCLossParam>()
      .SetInputNames(CTCInputNames)
      .SetNumOutputs(1)
      .SetNumTotalOutputs(2)  // + MXNet's hidden gradient
      .SetInferShape(CTCShape)
      .SetInferType(CTCType)
      .SetCompute(CTCCompute)
      .SetGradient(internal::BackwardOpGradient("_backward_CTCLoss"));

  r->Register("_backward_CTCLoss")
      .Describe(
          "The gradient of CTCLoss: out_grad times the derivative of each loss with respect "
          "to the activations (softmax minus the CTC posteriors); zeros for the labels and "
          "lengths.")
      .SetParam<CTCLossParam>()
      .SetInputNames(
          [](const NodeAttrs& attrs) { return internal::BackwardInputNames(CTCInputNames(attrs)); })
      .SetNumOutputs(
          [](const NodeAttrs& attrs) { return static_cast<uint32_t>(CTCInputNames(attrs).size()); })
      .SetInferShape([](const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
        return internal::BackwardShape(CTCShape, attrs, in, out);
      })
      .SetInferType(CTCBackwardType)
      .SetCompute(CTCBackwardCompute)
      .SetInternal();
}

}  // namespace hybridnet
