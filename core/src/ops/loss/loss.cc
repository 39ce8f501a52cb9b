// The ops MXNet defines for training (src/operator/regression_output-inl.h, svm_output-inl.h,
// make_loss-inl.h, tensor/elemwise_unary_op_basic.cc's make_loss, loss_binary_op-inl.h), with
// MXNet's inference forward: the regression outputs and SVMOutput pass data through
// (LogisticRegressionOutput applies the sigmoid), MakeLoss/make_loss are the identity and
// softmax_cross_entropy sums -log(softmax(data)[label]) over the batch. Their labels only feed
// the gradient, except softmax_cross_entropy's. MakeLoss's gradient ignores the output gradient,
// as MXNet's: grad_scale, normalized (_backward_MakeLoss); make_loss's is ones. So do the
// regression outputs' (_backward_linear_reg_out, ...): MXNet's (y - label), or its sign for MAE,
// times grad_scale / (outputs per example). softmax_cross_entropy's is
// (softmax(data) - onehot(label)) times the (1,) output gradient; SVMOutput's MXNet's hinge
// gradients (_backward_SVMOutput). Labels get no gradient.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "ops/gradient_util.h"
#include "ops/register_ops.h"
#include "ops/shape/shape_util-inl.h"

namespace hybridnet {

namespace {

struct RegressionParam {
  float grad_scale = 1.f;
  static void Declare(ParamDeclarer<RegressionParam>* d) {
    d->Field("grad_scale", &RegressionParam::grad_scale)
        .Default(1.f)
        .Describe("Scales the gradient (training only).");
  }
};

struct SVMOutputParam {
  float margin = 1.f;
  float regularization_coefficient = 1.f;
  bool use_linear = false;
  static void Declare(ParamDeclarer<SVMOutputParam>* d) {
    d->Field("margin", &SVMOutputParam::margin)
        .Default(1.f)
        .Describe("The loss margin (training only).");
    d->Field("regularization_coefficient", &SVMOutputParam::regularization_coefficient)
        .Default(1.f)
        .Describe("Regularization coefficient of the loss (training only).");
    d->Field("use_linear", &SVMOutputParam::use_linear)
        .Default(false)
        .Describe("If true, L1-SVM's gradient, else L2-SVM's (training only).");
  }
};

enum class LossNormalization { kBatch, kNull, kValid };

struct MakeLossParam {
  float grad_scale = 1.f;
  float valid_thresh = 0.f;
  LossNormalization normalization = LossNormalization::kNull;
  static void Declare(ParamDeclarer<MakeLossParam>* d) {
    d->Field("grad_scale", &MakeLossParam::grad_scale)
        .Default(1.f)
        .Describe("Scales the gradient (training only).");
    d->Field("valid_thresh", &MakeLossParam::valid_thresh)
        .Default(0.f)
        .Describe("Elements above it count as valid for normalization=valid (training only).");
    d->Field("normalization", &MakeLossParam::normalization,
             {{"batch", LossNormalization::kBatch},
              {"null", LossNormalization::kNull},
              {"valid", LossNormalization::kValid}})
        .Default(LossNormalization::kNull)
        .Describe("How the gradient is normalized (training only).");
  }
};

bool RealDType(DType d) { return d == DType::kFloat32 || d == DType::kFloat64; }

// Every input and the output share float32 or float64.
bool RealType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const bool known = ElemwiseType(attrs, in, out);
  HN_CHECK((*in)[0] == DType::kUnknown || RealDType((*in)[0]), kTypeError)
      << DescribeNode(attrs) << ": data has dtype " << DTypeName((*in)[0])
      << "; expected float32 or float64";
  return known;
}

// The label is data's shape ((N,) for data (N, 1)), or any shape with data's first dimension
// and size.
bool RegressionShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  std::vector<Shape> data_only{(*in)[0]};
  const bool known = ElemwiseShape(attrs, &data_only, out);
  (*in)[0] = data_only[0];
  const Shape& data = (*in)[0];
  Shape& label = (*in)[1];
  if (!data.IsKnown()) return false;
  if (label.ndim() == 0) {
    label = data.ndim() == 2 && data[1] == 1 ? Shape{data[0]} : data;
  } else if (label.IsKnown()) {
    HN_CHECK(label[0] == data[0] && label.Size() == data.Size(), kShapeError)
        << DescribeNode(attrs) << ": label shape " << label << " does not fit data " << data
        << " (same first dimension and size expected)";
  } else {
    internal::AssignShape(attrs, in, 1, data, "input 'label'");
  }
  return known && label.IsKnown();
}

// SVMOutput's label is data's shape without the last axis.
bool SVMOutputShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  std::vector<Shape> data_only{(*in)[0]};
  const bool known = ElemwiseShape(attrs, &data_only, out);
  (*in)[0] = data_only[0];
  const Shape& data = (*in)[0];
  if (data.ndim() == 0) return false;
  HN_CHECK(data.ndim() >= 2, kShapeError)
      << DescribeNode(attrs) << ": data must have at least 2 dimensions, got " << data;
  internal::AssignShape(attrs, in, 1, Shape(std::vector<int64_t>(data.begin(), data.end() - 1)),
                        "input 'label'");
  return known && (*in)[1].IsKnown();
}

void CopyData(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
              const std::vector<TBlob>& out) {
  if (in[0].data != out[0].data)
    std::memcpy(out[0].data, in[0].data,
                static_cast<size_t>(in[0].Size()) * DTypeSize(in[0].dtype));
}

void LogisticCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                     const std::vector<TBlob>& out) {
  const int64_t n = in[0].Size();
  if (in[0].dtype == DType::kFloat64) {
    const double* x = in[0].ptr<const double>();
    double* y = out[0].ptr<double>();
    for (int64_t i = 0; i < n; ++i) y[i] = 1.0 / (1.0 + std::exp(-x[i]));
  } else {
    const float* x = in[0].ptr<const float>();
    float* y = out[0].ptr<float>();
    for (int64_t i = 0; i < n; ++i) y[i] = 1.f / (1.f + std::exp(-x[i]));
  }
}

// ---- MakeLoss's gradient ---------------------------------------------------------------------

// Every element grad_scale, divided by data's first dimension (normalization=batch) or by the
// number of elements above valid_thresh, at least 1 (normalization=valid).
template <typename T>
void FillMakeLossGradient(const MakeLossParam& p, const TBlob& data, const TBlob& grad) {
  T value = static_cast<T>(p.grad_scale);
  if (p.normalization == LossNormalization::kBatch) {
    const int64_t batch = data.shape.ndim() == 0 ? 1 : data.shape[0];
    value = static_cast<T>(p.grad_scale / static_cast<float>(batch));
  } else if (p.normalization == LossNormalization::kValid) {
    const T* x = data.ptr<const T>();
    const T thresh = static_cast<T>(p.valid_thresh);
    int64_t valid = 0;
    for (int64_t i = 0; i < data.Size(); ++i) valid += thresh < x[i] ? 1 : 0;
    value = static_cast<T>(p.grad_scale) / static_cast<T>(valid > 1 ? valid : 1);
  }
  T* y = grad.ptr<T>();
  std::fill(y, y + grad.Size(), value);
}

void MakeLossBackwardCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                             const std::vector<TBlob>& out) {
  const MakeLossParam& p = attrs.Param<MakeLossParam>();
  if (out[0].dtype == DType::kFloat64) {
    FillMakeLossGradient<double>(p, in[0], out[0]);
  } else {
    FillMakeLossGradient<float>(p, in[0], out[0]);
  }
}

std::vector<NodeEntry> MakeLossGradient(const std::shared_ptr<Node>& n,
                                        const std::vector<NodeEntry>& dy) {
  internal::GradientBuilder g(n, dy);
  return {g.Op("_backward_MakeLoss", {g.in(0)}, g.attrs().dict)};
}

std::vector<NodeEntry> OnesGradient(const std::shared_ptr<Node>& n,
                                    const std::vector<NodeEntry>& dy) {
  internal::GradientBuilder g(n, dy);
  return {g.Op("ones_like", {g.in(0)})};
}

// ---- softmax_cross_entropy ------------------------------------------------------------------

bool CrossEntropyShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& data = (*in)[0];
  Shape o = (*out)[0];
  HN_CHECK(MergeShape(Shape{1}, &o), kShapeError)
      << DescribeNode(attrs) << ": output shape " << (*out)[0] << " is not (1,)";
  (*out)[0] = o;
  if (data.ndim() == 0) return false;
  HN_CHECK(data.ndim() == 2, kShapeError)
      << DescribeNode(attrs) << ": data must be (batch, classes), got " << data;
  internal::AssignShape(attrs, in, 1, Shape{data[0]}, "input 'label'");
  return data.IsKnown();
}

// mshadow's Softmax in the data type, then -log of the labelled probability, summed.
template <typename T>
void CrossEntropy(const TBlob& data, const TBlob& label, T* out) {
  const int64_t n = data.shape[0], c = data.shape[1];
  const T* x = data.ptr<const T>();
  const T* lab = label.ptr<const T>();
  T total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const T* row = x + i * c;
    T mx = row[0];
    for (int64_t j = 1; j < c; ++j) mx = mx < row[j] ? row[j] : mx;
    T sum = 0;
    for (int64_t j = 0; j < c; ++j) sum += std::exp(row[j] - mx);
    // Labels outside [0, C) are clamped (MXNet reads outside the row).
    const double lv = static_cast<double>(lab[i]);
    const int64_t k = lv >= static_cast<double>(c - 1) ? c - 1
                      : lv > 0                         ? static_cast<int64_t>(lv)
                                                       : 0;
    total += -std::log(std::exp(row[k] - mx) / sum);
  }
  out[0] = total;
}

void CrossEntropyCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                         const std::vector<TBlob>& out) {
  if (in[0].dtype == DType::kFloat64) {
    CrossEntropy<double>(in[0], in[1], out[0].ptr<double>());
  } else {
    CrossEntropy<float>(in[0], in[1], out[0].ptr<float>());
  }
}

// ---- the regression outputs' gradients: inputs (label, output), RegressionParam ----------------

enum class RegressionKind { kLinear, kMAE, kLogistic };

template <RegressionKind kKind, typename T>
void RegressionGradient(const RegressionParam& p, const TBlob& label, const TBlob& output,
                        const TBlob& grad) {
  const T* l = label.ptr<const T>();
  const T* y = output.ptr<const T>();
  T* g = grad.ptr<T>();
  // MXNet's num_output: the label's elements per example, an integer quotient.
  const int64_t first = label.shape.ndim() == 0 ? 1 : label.shape[0];
  const float per_example = static_cast<float>(first == 0 ? 0 : label.Size() / first);
  const T scale = static_cast<T>(p.grad_scale / per_example);
  for (int64_t i = 0; i < grad.Size(); ++i) {
    const T d = kKind == RegressionKind::kMAE ? (y[i] - l[i] > T(0) ? T(1) : T(-1)) : y[i] - l[i];
    g[i] = d * scale;
  }
}

template <RegressionKind kKind>
void RegressionBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                               const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const RegressionParam& p = attrs.Param<RegressionParam>();
  if (out[0].dtype == DType::kFloat64) {
    RegressionGradient<kKind, double>(p, in[0], in[1], out[0]);
  } else {
    RegressionGradient<kKind, float>(p, in[0], in[1], out[0]);
  }
}

// The gradient of an output op whose backward reads (label, output) only; the label gets none.
FGradient LabelOutputGradient(const char* backward_op) {
  return [backward_op](const std::shared_ptr<Node>& n, const std::vector<NodeEntry>& dy) {
    internal::GradientBuilder g(n, dy);
    return std::vector<NodeEntry>{g.Op(backward_op, {g.in(1), g.out(0)}, g.attrs().dict),
                                  g.ZerosLike(g.in(1))};
  };
}

// ---- SVMOutput's gradient: inputs (label, output), SVMOutputParam ---------------------------

// MXNet's L1_SVM / L2_SVM over rows of the last axis, with k the row's label (truncated):
//   L1: -reg * (margin > y[k]) at k, reg * (margin > -y[x]) elsewhere;
//   L2: -reg * 2 (margin - y[k]) at k where margin > y[k], -reg * -2 (margin + y[x])
//       elsewhere where margin > -y[x], else 0. The output gradient is not read.
template <typename T>
void SVMGradient(const SVMOutputParam& p, const TBlob& label, const TBlob& output,
                 const TBlob& grad) {
  const int64_t classes = output.shape[output.shape.ndim() - 1];
  const int64_t rows = classes == 0 ? 0 : output.Size() / classes;
  const T* l = label.ptr<const T>();
  const T* y = output.ptr<const T>();
  T* g = grad.ptr<T>();
  const T margin = static_cast<T>(p.margin), reg = static_cast<T>(p.regularization_coefficient);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t k = static_cast<int>(l[r]);
    for (int64_t x = 0; x < classes; ++x) {
      const T v = y[r * classes + x];
      T d;
      if (p.use_linear) {
        d = x == k ? -static_cast<T>(margin > v) * reg : static_cast<T>(margin > -v) * reg;
      } else if (x == k) {
        d = (margin > v ? 2 * (margin - v) : T(0)) * -reg;
      } else {
        d = (margin > -v ? T(-2) * (margin + v) : T(0)) * -reg;
      }
      g[r * classes + x] = d;
    }
  }
}

void SVMBackwardCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                        const std::vector<TBlob>& out) {
  const SVMOutputParam& p = attrs.Param<SVMOutputParam>();
  if (out[0].dtype == DType::kFloat64) {
    SVMGradient<double>(p, in[0], in[1], out[0]);
  } else {
    SVMGradient<float>(p, in[0], in[1], out[0]);
  }
}

// ---- softmax_cross_entropy's gradient: inputs (out_grad (1,), data, label) -------------------

// mshadow's Softmax of each row in the data type, minus 1 at the label (truncated to an integer;
// none outside [0, C)), times the output gradient.
template <typename T>
void CrossEntropyGradient(const TBlob& out_grad, const TBlob& data, const TBlob& label,
                          const TBlob& grad) {
  const int64_t n = data.shape[0], c = data.shape[1];
  const T* x = data.ptr<const T>();
  const T* lab = label.ptr<const T>();
  const T scale = out_grad.ptr<const T>()[0];
  T* g = grad.ptr<T>();
  for (int64_t i = 0; i < n; ++i) {
    const T* row = x + i * c;
    T* grow = g + i * c;
    T mx = row[0];
    for (int64_t j = 1; j < c; ++j) mx = mx < row[j] ? row[j] : mx;
    T sum = 0;
    for (int64_t j = 0; j < c; ++j) {
      grow[j] = std::exp(row[j] - mx);
      sum += grow[j];
    }
    const int64_t k = static_cast<int64_t>(static_cast<int>(lab[i]));
    for (int64_t j = 0; j < c; ++j) {
      const T p = grow[j] / sum;
      grow[j] = scale * (j == k ? p - T(1) : p);
    }
  }
}

void CrossEntropyBackwardCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                                 const std::vector<TBlob>& out) {
  if (out[0].dtype == DType::kFloat64) {
    CrossEntropyGradient<double>(in[0], in[1], in[2], out[0]);
  } else {
    CrossEntropyGradient<float>(in[0], in[1], in[2], out[0]);
  }
}

std::vector<NodeEntry> SoftmaxCrossEntropyGradient(const std::shared_ptr<Node>& n,
                                                   const std::vector<NodeEntry>& dy) {
  internal::GradientBuilder g(n, dy);
  return {g.Op("_backward_softmax_cross_entropy", {g.out_grad(0), g.in(0), g.in(1)}),
          g.ZerosLike(g.in(1))};
}

Op& RegisterRegression(OpRegistry* r, const char* name, const char* description, FCompute f) {
  return r->Register(name)
      .Describe(description)
      .SetParam<RegressionParam>()
      .SetInputNames({"data", "label"})
      .SetInferShape(RegressionShape)
      .SetInferType(RealType)
      .SetCompute(std::move(f))
      .SetInplace({{0, 0}});
}

}  // namespace

void RegisterLossOps(OpRegistry* r) {
  RegisterRegression(r, "LinearRegressionOutput",
                     "Least-squares regression loss for training; at inference the identity "
                     "on data (the label is not used).",
                     CopyData)
      .SetGradient(LabelOutputGradient("_backward_linear_reg_out"));
  RegisterRegression(r, "MAERegressionOutput",
                     "Mean-absolute-error regression loss for training; at inference the "
                     "identity on data (the label is not used).",
                     CopyData)
      .SetGradient(LabelOutputGradient("_backward_mae_reg_out"));
  RegisterRegression(r, "LogisticRegressionOutput",
                     "Logistic regression loss for training; at inference sigmoid(data) (the "
                     "label is not used).",
                     LogisticCompute)
      .SetGradient(LabelOutputGradient("_backward_logistic_reg_out"));
  struct RegressionBackward {
    const char* name;
    const char* description;
    FCompute compute;
  };
  for (const RegressionBackward& b :
       {RegressionBackward{"_backward_linear_reg_out",
                           "The gradient of LinearRegressionOutput: (output - label) * "
                           "grad_scale / (label elements per example).",
                           RegressionBackwardCompute<RegressionKind::kLinear>},
        RegressionBackward{"_backward_mae_reg_out",
                           "The gradient of MAERegressionOutput: sign(output - label) (-1 at 0) "
                           "* grad_scale / (label elements per example).",
                           RegressionBackwardCompute<RegressionKind::kMAE>},
        RegressionBackward{"_backward_logistic_reg_out",
                           "The gradient of LogisticRegressionOutput: (output - label) * "
                           "grad_scale / (label elements per example).",
                           RegressionBackwardCompute<RegressionKind::kLogistic>}}) {
    r->Register(b.name)
        .Describe(b.description)
        .SetParam<RegressionParam>()
        .SetInputNames({"label", "output"})
        .SetInferShape([](const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
          std::vector<Shape> forward_in{(*in)[1], (*in)[0]};
          std::vector<Shape> forward_out{(*in)[1]};
          const bool known = RegressionShape(attrs, &forward_in, &forward_out);
          (*in)[0] = forward_in[1];
          (*in)[1] = forward_out[0];
          std::vector<Shape> grad{forward_in[0]};
          HN_CHECK(MergeShape((*out)[0], &grad[0]), kShapeError)
              << DescribeNode(attrs) << ": data gradient " << (*out)[0] << " does not match "
              << forward_in[0];
          (*out)[0] = grad[0];
          return known;
        })
        .SetInferType(RealType)
        .SetCompute(b.compute)
        .SetInternal();
  }

  r->Register("SVMOutput")
      .Describe(
          "Hinge-loss SVM output for training; at inference the identity on data (the "
          "label, data's shape without the last axis, is not used).")
      .SetParam<SVMOutputParam>()
      .SetInputNames({"data", "label"})
      .SetInferShape(SVMOutputShape)
      .SetInferType(RealType)
      .SetCompute(CopyData)
      .SetInplace({{0, 0}})
      .SetGradient(LabelOutputGradient("_backward_SVMOutput"));

  r->Register("_backward_SVMOutput")
      .Describe(
          "The gradient of SVMOutput: MXNet's L1- or L2-SVM hinge gradient of the output for "
          "the label (the output gradient is not read).")
      .SetParam<SVMOutputParam>()
      .SetInputNames({"label", "output"})
      .SetInferShape([](const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
        std::vector<Shape> forward_in{(*in)[1], (*in)[0]};
        std::vector<Shape> forward_out{(*out)[0]};
        const bool known = SVMOutputShape(attrs, &forward_in, &forward_out);
        (*in)[0] = forward_in[1];
        (*in)[1] = (*out)[0] = forward_in[0];
        return known;
      })
      .SetInferType(RealType)
      .SetCompute(SVMBackwardCompute)
      .SetInternal();

  r->Register("MakeLoss")
      .Describe("Marks data as a loss for training; at inference the identity.")
      .SetParam<MakeLossParam>()
      .SetInputNames({"data"})
      .SetInferShape(ElemwiseShape)
      .SetInferType(RealType)
      .SetCompute(CopyData)
      .SetIdentityView()
      .SetGradient(MakeLossGradient);

  r->Register("_backward_MakeLoss")
      .Describe("The gradient of MakeLoss: grad_scale everywhere, normalized as MakeLoss says.")
      .SetParam<MakeLossParam>()
      .SetInputNames({"data"})
      .SetInferShape(ElemwiseShape)
      .SetInferType(RealType)
      .SetCompute(MakeLossBackwardCompute)
      .SetInternal();

  r->Register("make_loss")
      .Describe("Marks data as a loss for training (no options); at inference the identity.")
      .SetInputNames({"data"})
      .SetInferShape(ElemwiseShape)
      .SetInferType(RealType)
      .SetCompute(CopyData)
      .SetIdentityView()
      .SetGradient(OnesGradient);

  r->Register("softmax_cross_entropy")
      .Describe(
          "Cross-entropy of the softmax of data (batch, classes) with integer labels "
          "(batch,): sum over the batch of -log(softmax(data)[n, label[n]]), shape (1,).")
      .SetInputNames({"data", "label"})
      .SetInferShape(CrossEntropyShape)
      .SetInferType(RealType)
      .SetCompute(CrossEntropyCompute)
      .SetGradient(SoftmaxCrossEntropyGradient);

  r->Register("_backward_softmax_cross_entropy")
      .Describe(
          "The gradient of softmax_cross_entropy: (softmax(data) - onehot(label)) times the "
          "output gradient.")
      .SetInputNames({"out_grad", "data", "label"})
      .SetInferShape([](const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
        std::vector<Shape> forward_in{(*in)[1], (*in)[2]};
        std::vector<Shape> forward_out{(*in)[0]};
        HN_CHECK(MergeShape((*out)[0], &forward_in[0]), kShapeError)
            << DescribeNode(attrs) << ": data gradient " << (*out)[0] << " does not match data "
            << forward_in[0];
        const bool known = CrossEntropyShape(attrs, &forward_in, &forward_out);
        (*in)[0] = forward_out[0];
        (*in)[1] = (*out)[0] = forward_in[0];
        (*in)[2] = forward_in[1];
        return known;
      })
      .SetInferType(RealType)
      .SetCompute(CrossEntropyBackwardCompute)
      .SetInternal();
}

}  // namespace hybridnet
