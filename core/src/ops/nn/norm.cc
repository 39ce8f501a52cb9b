// LayerNorm, InstanceNorm and GroupNorm (MXNet 1.9.1 src/operator/nn/layer_norm-inl.h,
// instance_norm-inl.h, group_norm-inl.h), inference semantics. Each normalizes groups of
// elements by their own mean and biased variance:
//   y = (x - mean) / sqrt(var + eps) * gamma + beta
//  * LayerNorm: over `axis`; gamma, beta (C,) with C = data.shape[axis]; outputs output, mean,
//    std (mean/std have the data's shape with axis set to 1; visible with output_mean_var).
//  * InstanceNorm: per (sample, channel) over the spatial axes; gamma, beta (C,); outputs
//    output (+ hidden mean and var, (N, C)).
//  * GroupNorm: per (sample, group) over C/num_groups channels and the spatial axes; gamma and
//    beta are per group, (num_groups,), as in MXNet 1.x; outputs output, mean, std (N, G).
// Statistics are accumulated in double.
//
// Their gradients (_backward_LayerNorm, _backward_InstanceNorm, _backward_GroupNorm) recompute
// the statistics as the forward does and differentiate through them, reading only the output
// gradient (those of mean and std count for nothing, as in MXNet). Per group of n elements with
// xh = (x - mean) * invstd and g = dy * gamma:
//   dx = invstd * (g - mean(g) - xh * mean(g * xh)),  dgamma = sum dy * xh,  dbeta = sum dy,
// gamma's and beta's sums taken over every group an affine parameter applies to.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "onnx/onnx_convert.h"
#include "ops/gradient_util.h"
#include "ops/register_ops.h"

namespace hybridnet {

namespace {

struct LayerNormParam {
  int axis = -1;
  float eps = 1e-5f;
  bool output_mean_var = false;
  static void Declare(ParamDeclarer<LayerNormParam>* d) {
    d->Field("axis", &LayerNormParam::axis)
        .Default(-1)
        .Describe(
            "The axis to perform layer normalization. Usually, this should be be axis "
            "of the channel dimension. Negative values means indexing from right to "
            "left.");
    d->Field("eps", &LayerNormParam::eps)
        .Default(1e-5f)
        .Describe("An `epsilon` parameter to prevent division by 0.");
    d->Field("output_mean_var", &LayerNormParam::output_mean_var)
        .Default(false)
        .Describe("Output the mean and std calculated along the given axis.");
  }
};

struct InstanceNormParam {
  float eps = 1e-3f;
  static void Declare(ParamDeclarer<InstanceNormParam>* d) {
    d->Field("eps", &InstanceNormParam::eps)
        .Default(1e-3f)
        .Describe("An `epsilon` parameter to prevent division by 0.");
  }
};

struct GroupNormParam {
  int num_groups = 1;
  float eps = 1e-5f;
  bool output_mean_var = false;
  static void Declare(ParamDeclarer<GroupNormParam>* d) {
    d->Field("num_groups", &GroupNormParam::num_groups)
        .Default(1)
        .Min(1)
        .Describe("Total number of groups.");
    d->Field("eps", &GroupNormParam::eps)
        .Default(1e-5f)
        .Describe("An `epsilon` parameter to prevent division by 0.");
    d->Field("output_mean_var", &GroupNormParam::output_mean_var)
        .Default(false)
        .Describe("Output the mean and std calculated along the given axis.");
  }
};

const std::vector<std::string> kNormInputs = {"data", "gamma", "beta"};

void Assign(const NodeAttrs& attrs, std::vector<Shape>* v, size_t i, const Shape& value,
            const char* what) {
  Shape merged = (*v)[i];
  HN_CHECK(MergeShape(value, &merged), kShapeError)
      << DescribeNode(attrs) << ": " << what << " has shape " << (*v)[i] << " but " << value
      << " is required";
  (*v)[i] = merged;
}

bool AllKnown(const std::vector<Shape>& a, const std::vector<Shape>& b) {
  for (const auto& s : a)
    if (!s.IsKnown()) return false;
  for (const auto& s : b)
    if (!s.IsKnown()) return false;
  return true;
}

struct Stats {
  float mean, invstd, std;
};

// Two-pass mean and biased variance of n floats x[0], x[stride], ...
inline Stats StridedMoments(const float* x, int64_t n, int64_t stride, float eps) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += x[i * stride];
  const double mean = sum / static_cast<double>(n);
  double sq = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = x[i * stride] - mean;
    sq += d * d;
  }
  const double var = sq / static_cast<double>(n);
  const float std = static_cast<float>(std::sqrt(var + static_cast<double>(eps)));
  return Stats{static_cast<float>(mean), 1.f / std, std};
}

// ---------------------------------------------------------------------------------------------
// LayerNorm

size_t LayerNormAxis(const NodeAttrs& attrs, const Shape& data) {
  const int nd = static_cast<int>(data.ndim());
  const int axis = attrs.Param<LayerNormParam>().axis;
  HN_CHECK(axis >= -nd && axis < nd, kShapeError)
      << DescribeNode(attrs) << ": axis " << axis << " is out of range for data " << data;
  return static_cast<size_t>(axis < 0 ? axis + nd : axis);
}

bool LayerNormShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  Shape data = (*in)[0];
  HN_CHECK(MergeShape((*out)[0], &data), kShapeError)
      << DescribeNode(attrs) << ": output shape " << (*out)[0] << " does not match data "
      << (*in)[0];
  if (data.ndim() == 0) return false;
  const size_t axis = LayerNormAxis(attrs, data);
  Shape channel({data[axis]});
  for (size_t i = 1; i < 3; ++i) {
    HN_CHECK(MergeShape((*in)[i], &channel), kShapeError)
        << DescribeNode(attrs) << ": " << kNormInputs[i] << " shape " << (*in)[i]
        << " does not match axis " << axis << " of data " << data;
  }
  data[axis] = channel[0];
  (*in)[0] = data;
  (*in)[1] = (*in)[2] = channel;
  (*out)[0] = data;
  Shape reduced = data;
  reduced[axis] = 1;
  for (size_t i = 1; i < out->size(); ++i) Assign(attrs, out, i, reduced, "mean/std output");
  return AllKnown(*in, *out);
}

void LayerNormCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                      const std::vector<TBlob>& out) {
  const LayerNormParam& p = attrs.Param<LayerNormParam>();
  const Shape& s = in[0].shape;
  const size_t axis = LayerNormAxis(attrs, s);
  int64_t outer = 1, inner = 1;
  for (size_t k = 0; k < axis; ++k) outer *= s[k];
  for (size_t k = axis + 1; k < s.ndim(); ++k) inner *= s[k];
  const int64_t C = s[axis];
  const float* x = in[0].ptr<const float>();
  const float* gamma = in[1].ptr<const float>();
  const float* beta = in[2].ptr<const float>();
  float* y = out[0].ptr<float>();
  float* mean_out = out.size() > 1 ? out[1].ptr<float>() : nullptr;
  float* std_out = out.size() > 2 ? out[2].ptr<float>() : nullptr;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const float* px = x + o * C * inner + i;
      float* py = y + o * C * inner + i;
      const Stats st = StridedMoments(px, C, inner, p.eps);
      for (int64_t c = 0; c < C; ++c)
        py[c * inner] = (px[c * inner] - st.mean) * st.invstd * gamma[c] + beta[c];
      if (mean_out) mean_out[o * inner + i] = st.mean;
      if (std_out) std_out[o * inner + i] = st.std;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// InstanceNorm and GroupNorm: statistics per (sample, group of channels) over the spatial axes.

bool GroupedShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out,
                  int64_t groups, bool per_channel_affine) {
  Shape data = (*in)[0];
  HN_CHECK(MergeShape((*out)[0], &data), kShapeError)
      << DescribeNode(attrs) << ": output shape " << (*out)[0] << " does not match data "
      << (*in)[0];
  if (data.ndim() == 0) return false;
  HN_CHECK(data.ndim() >= 3, kShapeError)
      << DescribeNode(attrs) << ": data must have at least 3 dimensions (batch, channel, "
      << "spatial...), got " << data;
  const int64_t C = data[1];
  if (groups > 0 && C != 0) {
    HN_CHECK(C % groups == 0, kShapeError)
        << DescribeNode(attrs) << ": " << C << " channels of data " << data
        << " are not divisible by num_groups=" << groups;
  }
  Shape affine({per_channel_affine ? C : groups});
  for (size_t i = 1; i < 3; ++i) {
    HN_CHECK(MergeShape((*in)[i], &affine), kShapeError)
        << DescribeNode(attrs) << ": " << kNormInputs[i] << " shape " << (*in)[i]
        << " does not match " << (per_channel_affine ? "the channels of data " : "num_groups for ")
        << data;
  }
  if (per_channel_affine) data[1] = affine[0];
  (*in)[0] = data;
  (*in)[1] = (*in)[2] = affine;
  (*out)[0] = data;
  Shape stats({data[0], per_channel_affine ? data[1] : groups});
  for (size_t i = 1; i < out->size(); ++i) Assign(attrs, out, i, stats, "mean/std output");
  return AllKnown(*in, *out);
}

// groups == C: InstanceNorm (affine per channel); else GroupNorm (affine per group).
void GroupedNormalize(const std::vector<TBlob>& in, const std::vector<TBlob>& out, int64_t groups,
                      float eps, bool affine_per_channel, bool std_output) {
  const Shape& s = in[0].shape;
  const int64_t N = s[0], C = s[1];
  const int64_t spatial = s.Size() / (N * C);
  const int64_t cg = C / groups;
  const int64_t len = cg * spatial;
  const float* x = in[0].ptr<const float>();
  const float* gamma = in[1].ptr<const float>();
  const float* beta = in[2].ptr<const float>();
  float* y = out[0].ptr<float>();
  float* mean_out = out.size() > 1 ? out[1].ptr<float>() : nullptr;
  float* second_out = out.size() > 2 ? out[2].ptr<float>() : nullptr;
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t base = (n * C + g * cg) * spatial;
      const Stats st = StridedMoments(x + base, len, 1, eps);
      for (int64_t c = 0; c < cg; ++c) {
        const int64_t ch = g * cg + c;
        const float gm = affine_per_channel ? gamma[ch] : gamma[g];
        const float bt = affine_per_channel ? beta[ch] : beta[g];
        const float* px = x + base + c * spatial;
        float* py = y + base + c * spatial;
        for (int64_t i = 0; i < spatial; ++i) py[i] = (px[i] - st.mean) * st.invstd * gm + bt;
      }
      if (mean_out) mean_out[n * groups + g] = st.mean;
      if (second_out) {
        const float var = st.std * st.std - eps;
        second_out[n * groups + g] = std_output ? st.std : var;
      }
    }
  }
}

bool InstanceNormShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  return GroupedShape(attrs, in, out, 0, true);
}

void InstanceNormCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                         const std::vector<TBlob>& out) {
  GroupedNormalize(in, out, in[0].shape[1], attrs.Param<InstanceNormParam>().eps, true, false);
}

bool GroupNormShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  return GroupedShape(attrs, in, out, attrs.Param<GroupNormParam>().num_groups, false);
}

void GroupNormCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                      const std::vector<TBlob>& out) {
  const GroupNormParam& p = attrs.Param<GroupNormParam>();
  GroupedNormalize(in, out, p.num_groups, p.eps, false, true);
}

// ---------------------------------------------------------------------------------------------
// Gradients: inputs (out_grad, data, gamma), the forward's attributes; outputs the gradients of
// data, gamma and beta.

// One group's gradient: its element j is at offset at(j) and uses the affine parameter
// affine(j); gamma's and beta's gradients are added to dgamma and dbeta.
template <typename At, typename Affine>
void NormalizedGroupBackward(const float* dy, const float* x, const float* gamma, int64_t n,
                             const Stats& st, At at, Affine affine, float* dx, double* dgamma,
                             double* dbeta) {
  double sum_g = 0, sum_gxh = 0;
  for (int64_t j = 0; j < n; ++j) {
    const int64_t k = at(j);
    const int64_t a = affine(j);
    const double xh = (static_cast<double>(x[k]) - st.mean) * st.invstd;
    const double g = static_cast<double>(dy[k]) * gamma[a];
    sum_g += g;
    sum_gxh += g * xh;
    dgamma[a] += dy[k] * xh;
    dbeta[a] += dy[k];
  }
  const double mean_g = sum_g / static_cast<double>(n);
  const double mean_gxh = sum_gxh / static_cast<double>(n);
  for (int64_t j = 0; j < n; ++j) {
    const int64_t k = at(j);
    const double xh = (static_cast<double>(x[k]) - st.mean) * st.invstd;
    const double g = static_cast<double>(dy[k]) * gamma[affine(j)];
    dx[k] = static_cast<float>(st.invstd * (g - mean_g - xh * mean_gxh));
  }
}

// dgamma and dbeta, accumulated in double, written out.
struct AffineGradients {
  std::vector<double> gamma, beta;
  explicit AffineGradients(int64_t n)
      : gamma(static_cast<size_t>(n), 0.0), beta(static_cast<size_t>(n), 0.0) {}
  void Write(const std::vector<TBlob>& out) const {
    float* dg = out[1].ptr<float>();
    float* db = out[2].ptr<float>();
    for (size_t i = 0; i < gamma.size(); ++i) {
      dg[i] = static_cast<float>(gamma[i]);
      db[i] = static_cast<float>(beta[i]);
    }
  }
};

void LayerNormBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                              const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const LayerNormParam& p = attrs.Param<LayerNormParam>();
  const Shape& s = in[1].shape;
  const size_t axis = LayerNormAxis(attrs, s);
  int64_t outer = 1, inner = 1;
  for (size_t k = 0; k < axis; ++k) outer *= s[k];
  for (size_t k = axis + 1; k < s.ndim(); ++k) inner *= s[k];
  const int64_t C = s[axis];
  const float* dy = in[0].ptr<const float>();
  const float* x = in[1].ptr<const float>();
  const float* gamma = in[2].ptr<const float>();
  AffineGradients sums(C);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * C * inner + i;
      const Stats st = StridedMoments(x + base, C, inner, p.eps);
      NormalizedGroupBackward(
          dy, x, gamma, C, st, [&](int64_t j) { return base + j * inner; },
          [](int64_t j) { return j; }, out[0].ptr<float>(), sums.gamma.data(), sums.beta.data());
    }
  }
  sums.Write(out);
}

void GroupedBackward(const std::vector<TBlob>& in, const std::vector<TBlob>& out, int64_t groups,
                     float eps, bool affine_per_channel) {
  const Shape& s = in[1].shape;
  const int64_t N = s[0], C = s[1];
  const int64_t spatial = s.Size() / (N * C);
  const int64_t cg = C / groups;
  const int64_t len = cg * spatial;
  const float* dy = in[0].ptr<const float>();
  const float* x = in[1].ptr<const float>();
  const float* gamma = in[2].ptr<const float>();
  AffineGradients sums(in[2].Size());
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t base = (n * C + g * cg) * spatial;
      const Stats st = StridedMoments(x + base, len, 1, eps);
      NormalizedGroupBackward(
          dy, x, gamma, len, st, [&](int64_t j) { return base + j; },
          [&](int64_t j) { return affine_per_channel ? g * cg + j / spatial : g; },
          out[0].ptr<float>(), sums.gamma.data(), sums.beta.data());
    }
  }
  sums.Write(out);
}

void InstanceNormBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                                 const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  GroupedBackward(in, out, in[1].shape[1], attrs.Param<InstanceNormParam>().eps, true);
}

void GroupNormBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                              const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const GroupNormParam& p = attrs.Param<GroupNormParam>();
  GroupedBackward(in, out, p.num_groups, p.eps, false);
}

// The forward's shape inference over (data, gamma, beta): each gradient has its input's shape.
FInferShape NormBackwardShape(FInferShape forward) {
  return [forward](const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
    std::vector<Shape> forward_in{(*in)[1], (*in)[2], (*out)[2]};
    std::vector<Shape> forward_out{(*in)[0]};
    for (size_t i = 0; i < 2; ++i) {
      HN_CHECK(MergeShape((*out)[i], &forward_in[i]), kShapeError)
          << DescribeNode(attrs) << ": gradient " << i << " has shape " << (*out)[i]
          << ", its input " << forward_in[i];
    }
    const bool known = forward(attrs, &forward_in, &forward_out);
    (*in)[0] = forward_out[0];
    (*in)[1] = forward_in[0];
    (*in)[2] = forward_in[1];
    for (size_t i = 0; i < 3; ++i) (*out)[i] = forward_in[i];
    return known;
  };
}

FGradient NormGradient(const char* backward_op) {
  return [backward_op](const std::shared_ptr<Node>& n, const std::vector<NodeEntry>& dy) {
    internal::GradientBuilder g(n, dy);
    std::shared_ptr<Node> backward =
        g.MakeNode(backward_op, {g.out_grad(0), g.in(0), g.in(1)}, g.attrs().dict);
    return std::vector<NodeEntry>{NodeEntry{backward, 0, 0}, NodeEntry{backward, 1, 0},
                                  NodeEntry{backward, 2, 0}};
  };
}

template <typename P>
void RegisterNormBackward(OpRegistry* r, const char* name, const char* forward_name,
                          FInferShape forward_shape, FCompute compute) {
  r->Register(name)
      .Describe(std::string("The gradient of ") + forward_name +
                ": the gradients of data, gamma and beta from the output's.")
      .SetParam<P>()
      .SetInputNames({"out_grad", "data", "gamma"})
      .SetNumOutputs(3)
      .SetInferShape(NormBackwardShape(std::move(forward_shape)))
      .SetInferType(ElemwiseFloatType)
      .SetCompute(std::move(compute))
      .SetInternal();
}

// ---------------------------------------------------------------------------------------------
// ONNX

struct OnnxMoments {
  std::string mean, std, normalized;
};

// (x - mean) / sqrt(var + eps) with mean and biased var over `axes` (kept as size 1).
OnnxMoments NormalizeOnnx(OnnxNodeContext* ctx, const std::string& x,
                          const std::vector<int64_t>& axes, float eps) {
  OnnxMoments m;
  m.mean = ctx->Reduce("ReduceMean", x, axes, true);
  std::string centered = ctx->Add("Sub", {x, m.mean});
  std::string var = ctx->Reduce("ReduceMean", ctx->Add("Mul", {centered, centered}), axes, true);
  m.std = ctx->Add("Sqrt", {ctx->Add("Add", {var, ctx->Scalar(eps)})});
  m.normalized = ctx->Add("Div", {centered, m.std});
  return m;
}

// y = normalized * gamma + beta, with (C,) parameters unsqueezed to broadcast along the axis
// followed by `trailing` dims.
std::string AffineOnnx(OnnxNodeContext* ctx, const std::string& normalized, size_t trailing,
                       const std::string& to) {
  std::vector<int64_t> axes;
  for (size_t i = 1; i <= trailing; ++i) axes.push_back(static_cast<int64_t>(i));
  auto along = [&](const std::string& v) { return axes.empty() ? v : ctx->Unsqueeze(v, axes); };
  std::string scaled = ctx->Add("Mul", {normalized, along(ctx->in(1).name)});
  return ctx->Add("Add", {scaled, along(ctx->in(2).name)}, {}, to);
}

// LayerNormalization (opset 17) normalizes over every axis from `axis` on, so it serves the
// last axis; other axes, lower opsets and the mean/std outputs use the spelled-out form.
void LayerNormOnnx(OnnxNodeContext* ctx) {
  const LayerNormParam& p = ctx->param<LayerNormParam>();
  const OnnxValue& x = ctx->in(0);
  const size_t axis = LayerNormAxis(ctx->attrs(), x.shape);
  const bool stats = ctx->num_outputs() > 1 && (ctx->used(1) || ctx->used(2));
  if (axis + 1 == x.shape.ndim() && ctx->opset() >= 17 && !stats) {
    ctx->Add("LayerNormalization", ctx->input_names(), {{"axis", int64_t{-1}}, {"epsilon", p.eps}},
             ctx->out(0).name);
    return;
  }
  OnnxMoments m = NormalizeOnnx(ctx, x.name, {static_cast<int64_t>(axis)}, p.eps);
  AffineOnnx(ctx, m.normalized, x.shape.ndim() - 1 - axis, ctx->out(0).name);
  if (stats && ctx->used(1)) ctx->Add("Identity", {m.mean}, {}, ctx->out(1).name);
  if (stats && ctx->used(2)) ctx->Add("Identity", {m.std}, {}, ctx->out(2).name);
}

void InstanceNormOnnx(OnnxNodeContext* ctx) {
  ctx->Add("InstanceNormalization", ctx->input_names(),
           {{"epsilon", ctx->param<InstanceNormParam>().eps}}, ctx->out(0).name);
}

// Over (N, G, -1) views; gamma and beta are per group (MXNet 1.x), as in the kernel.
void GroupNormOnnx(OnnxNodeContext* ctx) {
  const GroupNormParam& p = ctx->param<GroupNormParam>();
  const OnnxValue& x = ctx->in(0);
  const int64_t groups = p.num_groups;
  Shape grouped{x.shape[0], groups, x.shape.Size() / (x.shape[0] * groups)};
  std::string view = ctx->Reshape(x.name, grouped, {x.batch_dims[0], false, false});
  OnnxMoments m = NormalizeOnnx(ctx, view, {2}, p.eps);
  ctx->ReshapeToOutput(AffineOnnx(ctx, m.normalized, 1, ""), 0);
  if (ctx->num_outputs() > 1 && ctx->used(1)) ctx->ReshapeToOutput(m.mean, 1);
  if (ctx->num_outputs() > 2 && ctx->used(2)) ctx->ReshapeToOutput(m.std, 2);
}

}  // namespace

void RegisterNormOps(OpRegistry* r) {
  r->Register("LayerNorm")
      .Describe(
          "Layer normalization over one axis: y = (x - mean) / sqrt(var + eps) * gamma + "
          "beta, with mean and (biased) var taken along axis and gamma, beta of shape "
          "(data.shape[axis],). Optional outputs mean and std (output_mean_var).")
      .SetParam<LayerNormParam>()
      .SetInputNames(kNormInputs)
      .SetNumOutputs([](const NodeAttrs& attrs) {
        return attrs.Param<LayerNormParam>().output_mean_var ? 3u : 1u;
      })
      .SetNumTotalOutputs(3)
      .SetInferShape(LayerNormShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(LayerNormCompute)
      .SetOnnx({"LayerNormalization", "ReduceMean", "Sub", "Mul", "Add", "Sqrt", "Div", "Unsqueeze",
                "Identity"},
               LayerNormOnnx)
      .SetGradient(NormGradient("_backward_LayerNorm"));

  r->Register("InstanceNorm")
      .Describe(
          "Instance normalization: each (sample, channel) is normalized over its spatial "
          "axes, y = (x - mean) / sqrt(var + eps) * gamma[c] + beta[c].")
      .SetParam<InstanceNormParam>()
      .SetInputNames(kNormInputs)
      .SetNumOutputs(1)
      .SetNumTotalOutputs(3)
      .SetInferShape(InstanceNormShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(InstanceNormCompute)
      .SetOnnx({"InstanceNormalization"}, InstanceNormOnnx)
      .SetGradient(NormGradient("_backward_InstanceNorm"));

  r->Register("GroupNorm")
      .Describe(
          "Group normalization: the channels are split into num_groups groups and each "
          "(sample, group) is normalized over its channels and spatial axes; gamma and "
          "beta have shape (num_groups,) as in MXNet 1.x. Optional outputs mean and std "
          "(output_mean_var).")
      .SetParam<GroupNormParam>()
      .SetInputNames(kNormInputs)
      .SetNumOutputs([](const NodeAttrs& attrs) {
        return attrs.Param<GroupNormParam>().output_mean_var ? 3u : 1u;
      })
      .SetNumTotalOutputs(3)
      .SetInferShape(GroupNormShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(GroupNormCompute)
      .SetOnnx({"Reshape", "ReduceMean", "Sub", "Mul", "Add", "Sqrt", "Div", "Unsqueeze"},
               GroupNormOnnx)
      .SetGradient(NormGradient("_backward_GroupNorm"));

  RegisterNormBackward<LayerNormParam>(r, "_backward_LayerNorm", "LayerNorm", LayerNormShape,
                                       LayerNormBackwardCompute);
  RegisterNormBackward<InstanceNormParam>(r, "_backward_InstanceNorm", "InstanceNorm",
                                          InstanceNormShape, InstanceNormBackwardCompute);
  RegisterNormBackward<GroupNormParam>(r, "_backward_GroupNorm", "GroupNorm", GroupNormShape,
                                       GroupNormBackwardCompute);
}

}  // namespace hybridnet
