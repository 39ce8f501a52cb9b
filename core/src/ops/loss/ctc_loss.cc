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
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "ops/dtype_switch-inl.h"
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

void CTCCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                const std::vector<TBlob>& out) {
  const CTCLossParam& p = attrs.Param<CTCLossParam>();
  const int64_t steps = in[0].shape[0], batch = in[0].shape[1], classes = in[0].shape[2];
  const int64_t max_label = in[1].shape[1];
  const int64_t blank = p.blank_label == BlankLabel::kFirst ? 0 : classes - 1;
  const double padding = p.blank_label == BlankLabel::kFirst ? 0.0 : -1.0;
  const float* x = in[0].ptr<const float>();
  float* loss = out[0].ptr<float>();
  const double neg_inf = -std::numeric_limits<double>::infinity();
  std::vector<double> logp(static_cast<size_t>(classes));
  std::vector<int64_t> labels;
  std::vector<double> alpha, next;
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t t_len = p.use_data_lengths ? Clamp(ValueAt(in[2], b), steps) : steps;
    labels.clear();
    if (p.use_label_lengths) {
      const int64_t n = Clamp(ValueAt(in[p.use_data_lengths ? 3 : 2], b), max_label);
      for (int64_t l = 0; l < n; ++l)
        labels.push_back(Clamp(ValueAt(in[1], b * max_label + l), classes - 1));
    } else {
      for (int64_t l = 0; l < max_label; ++l) {
        const double v = std::trunc(ValueAt(in[1], b * max_label + l));
        if (v == padding) break;
        labels.push_back(Clamp(v, classes - 1));
      }
    }
    const int64_t n_labels = static_cast<int64_t>(labels.size());
    int64_t repeats = 0;
    for (int64_t l = 1; l < n_labels; ++l)
      repeats += labels[static_cast<size_t>(l)] == labels[static_cast<size_t>(l - 1)];
    if (n_labels + repeats > t_len) {
      loss[b] = 0.f;
      continue;
    }
    // The extended sequence: blank, l1, blank, l2, ..., blank.
    const int64_t ext = 2 * n_labels + 1;
    auto sym = [&](int64_t s) { return s % 2 == 0 ? blank : labels[static_cast<size_t>(s / 2)]; };
    alpha.assign(static_cast<size_t>(ext), neg_inf);
    next.assign(static_cast<size_t>(ext), neg_inf);
    for (int64_t t = 0; t < t_len; ++t) {
      const float* row = x + (t * batch + b) * classes;
      float mx = row[0];
      for (int64_t c = 1; c < classes; ++c) mx = std::max(mx, row[c]);
      double sum = 0;
      for (int64_t c = 0; c < classes; ++c) sum += std::exp(static_cast<double>(row[c] - mx));
      const double log_sum = std::log(sum);
      for (int64_t c = 0; c < classes; ++c)
        logp[static_cast<size_t>(c)] = static_cast<double>(row[c] - mx) - log_sum;
      if (t == 0) {
        alpha[0] = logp[static_cast<size_t>(blank)];
        if (ext > 1) alpha[1] = logp[static_cast<size_t>(sym(1))];
        continue;
      }
      for (int64_t s = 0; s < ext; ++s) {
        double a = alpha[static_cast<size_t>(s)];
        if (s >= 1) a = LogAdd(a, alpha[static_cast<size_t>(s - 1)]);
        if (s >= 2 && sym(s) != blank && sym(s) != sym(s - 2))
          a = LogAdd(a, alpha[static_cast<size_t>(s - 2)]);
        next[static_cast<size_t>(s)] = a + logp[static_cast<size_t>(sym(s))];
      }
      std::swap(alpha, next);
    }
    double ll = alpha[static_cast<size_t>(ext - 1)];
    if (ext > 1) ll = LogAdd(ll, alpha[static_cast<size_t>(ext - 2)]);
    loss[b] = t_len == 0 ? 0.f : static_cast<float>(-ll);
  }
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
      .SetCompute(CTCCompute);
}

}  // namespace hybridnet
