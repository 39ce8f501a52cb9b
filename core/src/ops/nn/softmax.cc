// softmax / log_softmax / softmin (MXNet src/operator/nn/softmax-inl.h), SoftmaxOutput
// (src/operator/softmax_output-inl.h, inference: the label is ignored) and SoftmaxActivation
// (src/operator/nn/softmax_activation-inl.h).
//
// softmax/log_softmax accumulate the exponential sum in double (MXNet's AType for float32);
// SoftmaxOutput and SoftmaxActivation use mshadow's float Softmax.
#include <cmath>
#include <optional>
#include <string>

#include "hybridnet/op.h"
#include "ops/register_ops.h"

namespace hybridnet {

namespace {

struct SoftmaxParam {
  int axis = -1;
  std::optional<double> temperature;
  std::optional<DType> dtype;
  std::optional<bool> use_length = false;
  static void Declare(ParamDeclarer<SoftmaxParam>* d) {
    d->Field("axis", &SoftmaxParam::axis).Default(-1).Describe("The axis along which to compute.");
    d->Field("temperature", &SoftmaxParam::temperature)
        .Default(std::nullopt)
        .Describe("Temperature parameter in softmax (None means 1).");
    d->Field("dtype", &SoftmaxParam::dtype,
             {{"float16", DType::kFloat16}, {"float32", DType::kFloat32},
              {"float64", DType::kFloat64}})
        .Default(std::nullopt)
        .Describe("DType of the output (this build computes float32 only).");
    d->Field("use_length", &SoftmaxParam::use_length)
        .Default(std::optional<bool>(false))
        .Describe("Whether to use the length input as a mask over the data input (not "
                  "supported).");
  }
};

// Only the gradient depends on it; accepted for compatibility.
enum class SoftmaxNormalization { kBatch, kNull, kValid };

struct SoftmaxOutputParam {
  float grad_scale = 1.f;
  float ignore_label = -1.f;
  bool multi_output = false;
  bool use_ignore = false;
  bool preserve_shape = false;
  SoftmaxNormalization normalization = SoftmaxNormalization::kNull;
  bool out_grad = false;
  float smooth_alpha = 0.f;
  static void Declare(ParamDeclarer<SoftmaxOutputParam>* d) {
    d->Field("grad_scale", &SoftmaxOutputParam::grad_scale)
        .Default(1.f)
        .Describe("Scales the gradient by a float factor.");
    d->Field("ignore_label", &SoftmaxOutputParam::ignore_label)
        .Default(-1.f)
        .Describe("The instances whose labels == ignore_label will be ignored during backward.");
    d->Field("multi_output", &SoftmaxOutputParam::multi_output)
        .Default(false)
        .Describe("If true, softmax is applied along axis 1 of an (n, k, x1, ..., xn) input.");
    d->Field("use_ignore", &SoftmaxOutputParam::use_ignore)
        .Default(false)
        .Describe("If true, the ignore_label value will not contribute to the backward gradient.");
    d->Field("preserve_shape", &SoftmaxOutputParam::preserve_shape)
        .Default(false)
        .Describe("If true, softmax is applied along the last axis.");
    d->Field("normalization", &SoftmaxOutputParam::normalization,
             {{"batch", SoftmaxNormalization::kBatch}, {"null", SoftmaxNormalization::kNull},
              {"valid", SoftmaxNormalization::kValid}})
        .Default(SoftmaxNormalization::kNull)
        .Describe("Normalizes the gradient.");
    d->Field("out_grad", &SoftmaxOutputParam::out_grad)
        .Default(false)
        .Describe("Multiplies gradient with output gradient element-wise.");
    d->Field("smooth_alpha", &SoftmaxOutputParam::smooth_alpha)
        .Default(0.f)
        .Describe("Constant for computing a label smoothed version of cross-entropy.");
  }
};

enum class SoftmaxActivationMode { kChannel, kInstance };

struct SoftmaxActivationParam {
  SoftmaxActivationMode mode = SoftmaxActivationMode::kInstance;
  static void Declare(ParamDeclarer<SoftmaxActivationParam>* d) {
    d->Field("mode", &SoftmaxActivationParam::mode,
             {{"channel", SoftmaxActivationMode::kChannel},
              {"instance", SoftmaxActivationMode::kInstance}})
        .Default(SoftmaxActivationMode::kInstance)
        .Describe("instance: softmax over the last axis (MXNet's kernel flattens the leading "
                  "axes into instances); channel: over axis 1.");
  }
};

// The (outer, size, inner) view of an array around one axis.
struct AxisView {
  int64_t outer = 1, size = 1, inner = 1;
};

AxisView ViewAround(const Shape& s, size_t axis) {
  AxisView v;
  for (size_t i = 0; i < axis; ++i) v.outer *= s[i];
  v.size = s[axis];
  for (size_t i = axis + 1; i < s.ndim(); ++i) v.inner *= s[i];
  return v;
}

size_t SoftmaxAxis(const NodeAttrs& attrs, size_t ndim) {
  const int axis = attrs.Param<SoftmaxParam>().axis;
  const int n = static_cast<int>(ndim);
  HN_CHECK(axis >= -n && axis < n, kShapeError)
      << DescribeNode(attrs) << ": axis=" << axis << " is out of range for " << ndim
      << " dimensions";
  return static_cast<size_t>(axis < 0 ? axis + n : axis);
}

void CheckSoftmaxSupported(const NodeAttrs& attrs) {
  const SoftmaxParam& p = attrs.Param<SoftmaxParam>();
  HN_CHECK(!p.use_length.value_or(false), kUnsupported)
      << DescribeNode(attrs) << ": use_length=True is not supported";
}

bool SoftmaxShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  CheckSoftmaxSupported(attrs);
  bool known = ElemwiseShape(attrs, in, out);
  if ((*in)[0].ndim() != 0) SoftmaxAxis(attrs, (*in)[0].ndim());
  return known;
}

bool SoftmaxType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  CheckSoftmaxSupported(attrs);
  const auto& dtype = attrs.Param<SoftmaxParam>().dtype;
  HN_CHECK(!dtype || *dtype == DType::kFloat32, kUnsupported)
      << DescribeNode(attrs) << ": dtype=" << DTypeName(*dtype)
      << " is not supported (this build computes float32)";
  return ElemwiseFloatType(attrs, in, out);
}

// softmax along the middle axis of (outer, size, inner), sum in double as MXNet's float32 path;
// softmin (kNegate) is the softmax of -x.
template <bool kLog, bool kNegate = false>
void SoftmaxAlong(const float* in_data, float* out, const AxisView& v, float temperature) {
  const int64_t m = v.size, st = v.inner;
  auto in = [in_data](int64_t k) { return kNegate ? -in_data[k] : in_data[k]; };
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t i = 0; i < v.inner; ++i) {
      const int64_t base = o * m * st + i;
      float mmax = in(base);
      for (int64_t j = 1; j < m; ++j) mmax = mmax < in(base + j * st) ? in(base + j * st) : mmax;
      double sum = 0.0;
      if (temperature == 1.f) {
        for (int64_t j = 0; j < m; ++j) sum += std::exp(in(base + j * st) - mmax);
        for (int64_t j = 0; j < m; ++j) {
          const float a = in(base + j * st) - mmax;
          out[base + j * st] = kLog ? static_cast<float>(a - std::log(sum))
                                    : static_cast<float>(std::exp(a) / sum);
        }
      } else {
        for (int64_t j = 0; j < m; ++j) sum += std::exp((in(base + j * st) - mmax) / temperature);
        for (int64_t j = 0; j < m; ++j) {
          const float a = (in(base + j * st) - mmax) / temperature;
          out[base + j * st] = kLog ? static_cast<float>(a - std::log(sum))
                                    : static_cast<float>(std::exp(a) / sum);
        }
      }
    }
  }
}

template <bool kLog, bool kNegate = false>
void SoftmaxCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                    const std::vector<TBlob>& out) {
  const SoftmaxParam& p = attrs.Param<SoftmaxParam>();
  const AxisView v = ViewAround(in[0].shape, SoftmaxAxis(attrs, in[0].shape.ndim()));
  const float t = static_cast<float>(p.temperature.value_or(1.0));
  SoftmaxAlong<kLog, kNegate>(in[0].ptr<const float>(), out[0].ptr<float>(), v, t);
}

// mshadow's Softmax: float max, float sum of exp(x - max), then division.
void FloatSoftmaxAlong(const float* in, float* out, const AxisView& v) {
  const int64_t m = v.size, st = v.inner;
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t i = 0; i < v.inner; ++i) {
      const int64_t base = o * m * st + i;
      float mmax = in[base];
      for (int64_t j = 1; j < m; ++j) mmax = mmax < in[base + j * st] ? in[base + j * st] : mmax;
      float sum = 0.f;
      for (int64_t j = 0; j < m; ++j) {
        const float e = std::exp(in[base + j * st] - mmax);
        out[base + j * st] = e;
        sum += e;
      }
      for (int64_t j = 0; j < m; ++j) out[base + j * st] /= sum;
    }
  }
}

// SoftmaxOutput: label is (N,) for (N, C) data; generally data.shape[:-1], or with multi_output
// (N, prod(shape[2:])), shape without axis 1, or shape with axis 1 = 1; or data's own shape
// (probability labels).
bool SoftmaxOutputShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const SoftmaxOutputParam& p = attrs.Param<SoftmaxOutputParam>();
  std::vector<Shape> data_in{(*in)[0]};
  bool known = ElemwiseShape(attrs, &data_in, out);
  (*in)[0] = data_in[0];
  const Shape& dshape = (*in)[0];
  Shape& lshape = (*in)[1];
  if (dshape.ndim() == 0) return false;
  HN_CHECK(dshape.ndim() >= 2, kShapeError)
      << DescribeNode(attrs) << ": data must have at least 2 dimensions, got " << dshape;
  if (lshape == dshape) return known;
  if (p.multi_output) {
    const int64_t n = dshape[0];
    int64_t rest = 1;
    for (size_t i = 2; i < dshape.ndim(); ++i) rest *= dshape[i];
    Shape l1{n, rest};
    std::vector<int64_t> d2{n};
    for (size_t i = 2; i < dshape.ndim(); ++i) d2.push_back(dshape[i]);
    Shape l2(d2);
    Shape l3 = dshape;
    l3[1] = 1;
    if (lshape.ndim() == 0) {
      lshape = l1;
    } else {
      HN_CHECK(lshape == l1 || lshape == l2 || lshape == l3, kShapeError)
          << DescribeNode(attrs) << ": label shape " << lshape << " does not fit data "
          << dshape << " (expecting " << l1 << " or " << l2 << ")";
    }
  } else {
    Shape expect(std::vector<int64_t>(dshape.begin(), dshape.end() - 1));
    Shape merged = lshape;
    HN_CHECK(MergeShape(expect, &merged), kShapeError)
        << DescribeNode(attrs) << ": label shape " << lshape << " does not fit data " << dshape
        << " (expecting " << expect << " or " << dshape << ")";
    lshape = merged;
  }
  return known && lshape.IsKnown();
}

void SoftmaxOutputCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                          const std::vector<TBlob>& out) {
  const SoftmaxOutputParam& p = attrs.Param<SoftmaxOutputParam>();
  const Shape& s = in[0].shape;
  AxisView v;
  if (p.multi_output) {
    v = ViewAround(s, 1);
  } else if (p.preserve_shape) {
    v = ViewAround(s, s.ndim() - 1);
  } else {
    v.outer = s[0];
    v.size = in[0].Size() / s[0];
    v.inner = 1;
  }
  FloatSoftmaxAlong(in[0].ptr<const float>(), out[0].ptr<float>(), v);
}

bool SoftmaxActivationShape(const NodeAttrs& attrs, std::vector<Shape>* in,
                            std::vector<Shape>* out) {
  bool known = ElemwiseShape(attrs, in, out);
  if (attrs.Param<SoftmaxActivationParam>().mode == SoftmaxActivationMode::kChannel &&
      (*in)[0].ndim() != 0) {
    HN_CHECK((*in)[0].ndim() >= 2, kShapeError)
        << DescribeNode(attrs) << ": mode=channel needs at least 2 dimensions, got "
        << (*in)[0];
  }
  return known;
}

void SoftmaxActivationCompute(const OpContext&, const NodeAttrs& attrs,
                              const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const Shape& s = in[0].shape;
  AxisView v;
  v = ViewAround(s, attrs.Param<SoftmaxActivationParam>().mode == SoftmaxActivationMode::kChannel
                       ? 1
                       : s.ndim() - 1);
  FloatSoftmaxAlong(in[0].ptr<const float>(), out[0].ptr<float>(), v);
}

uint32_t SoftmaxNumInputs(const NodeAttrs& attrs) {
  return attrs.Param<SoftmaxParam>().use_length.value_or(false) ? 2u : 1u;
}

std::vector<std::string> SoftmaxInputNames(const NodeAttrs& attrs) {
  if (SoftmaxNumInputs(attrs) == 2) return {"data", "length"};
  return {"data"};
}

}  // namespace

void RegisterSoftmaxOps(OpRegistry* r) {
  r->Register("softmax")
      .Describe("Softmax along axis: exp(x / t) / sum(exp(x / t)), t = temperature.")
      .SetParam<SoftmaxParam>()
      .SetInputNames(SoftmaxInputNames)
      .SetInferShape(SoftmaxShape)
      .SetInferType(SoftmaxType)
      .SetCompute(SoftmaxCompute<false>)
      .SetInplace({{0, 0}});

  r->Register("log_softmax")
      .Describe("Log of softmax along axis: x / t - log(sum(exp(x / t))) (shifted by the max).")
      .SetParam<SoftmaxParam>()
      .SetInputNames(SoftmaxInputNames)
      .SetInferShape(SoftmaxShape)
      .SetInferType(SoftmaxType)
      .SetCompute(SoftmaxCompute<true>)
      .SetInplace({{0, 0}});

  r->Register("softmin")
      .Describe("Softmin along axis: the softmax of -x / t, t = temperature.")
      .SetParam<SoftmaxParam>()
      .SetInputNames(SoftmaxInputNames)
      .SetInferShape(SoftmaxShape)
      .SetInferType(SoftmaxType)
      .SetCompute(SoftmaxCompute<false, true>)
      .SetInplace({{0, 0}});

  r->Register("SoftmaxOutput")
      .Describe("Softmax with a cross-entropy loss for training; at inference the softmax of "
                "data over axis 1 of (N, -1) (multi_output: axis 1 keeping trailing dims; "
                "preserve_shape: last axis). The label is not used.")
      .AddAlias("Softmax")
      .SetParam<SoftmaxOutputParam>()
      .SetInputNames({"data", "label"})
      .SetInferShape(SoftmaxOutputShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(SoftmaxOutputCompute);

  r->Register("SoftmaxActivation")
      .Describe("Softmax over the last axis (mode=instance) or over axis 1 (mode=channel).")
      .SetParam<SoftmaxActivationParam>()
      .SetInputNames({"data"})
      .SetInferShape(SoftmaxActivationShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(SoftmaxActivationCompute)
      .SetInplace({{0, 0}});
}

}  // namespace hybridnet
