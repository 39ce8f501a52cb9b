// BatchNorm (MXNet src/operator/nn/batch_norm-inl.h, batch_norm.cc) and its ReLU-fused variant
// _contrib_BatchNormWithReLU (src/operator/contrib/batch_norm_relu.cc), sharing one kernel.
//
// Inputs data, gamma, beta, moving_mean, moving_var (the last two are auxiliary states).
// Outputs: output, mean, var (+ workspace for the ReLU variant); only `output` is visible unless
// output_mean_var. Like MXNet's CPU kernel (reference and MKLDNN), `var` holds the inverse
// standard deviation 1/sqrt(var + eps), not the variance.
//
// Inference (is_train false, or use_global_stats): per channel c,
//   invstd = 1 / sqrt(moving_var[c] + float(eps)), scale = gamma[c] * invstd (gamma = 1 when
//   fix_gamma), shift = beta[c] - moving_mean[c] * scale,   y = x * scale + shift
// (kernels/batch_norm.h; a convolution that absorbs the BatchNorm applies the same scale and
// shift). Training forward (is_train and not use_global_stats) uses the batch mean and biased batch
// variance instead. Moving statistics are never written here: as in MXNet, the gradient
// (_backward_BatchNorm) updates them when it runs in training mode, once per backward.
#include "kernels/batch_norm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "kernels/activation-inl.h"
#include "kernels/parallel-inl.h"
#include "kernels/workspace.h"
#include "onnx/onnx_convert.h"
#include "ops/gradient_util.h"
#include "ops/nn/batch_norm_param.h"
#include "ops/real_type.h"
#include "ops/register_ops.h"

namespace hybridnet {
namespace {

using internal::BatchNormParam;

const char* const kParamInputNames[] = {"data", "gamma", "beta", "moving_mean", "moving_var"};

}  // namespace

namespace internal {

bool BatchNormInferShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const auto& p = attrs.Param<BatchNormParam>();
  HN_CHECK(in->size() == 5 && !out->empty(), kInternal)
      << DescribeNode(attrs) << ": expected inputs [data, gamma, beta, moving_mean, moving_var]";
  // The output mirrors the data.
  Shape data = (*in)[0];
  HN_CHECK(MergeShape((*out)[0], &data), kShapeError)
      << DescribeNode(attrs) << ": output shape " << (*out)[0] << " does not match data "
      << (*in)[0];
  if (data.ndim() == 0) return false;
  const int nd = static_cast<int>(data.ndim());
  const int axis = p.axis < 0 ? nd + p.axis : p.axis;
  HN_CHECK(axis >= 0 && axis < nd, kShapeError)
      << DescribeNode(attrs) << ": channel axis " << p.axis << " is out of range for data " << data;
  // The channel count may come from the data or from any per-channel input.
  Shape channel({data[static_cast<size_t>(axis)]});
  for (size_t i = 1; i < 5; ++i) {
    HN_CHECK(MergeShape((*in)[i], &channel), kShapeError)
        << DescribeNode(attrs) << ": " << kParamInputNames[i] << " shape " << (*in)[i]
        << " does not match the " << data[static_cast<size_t>(axis)] << " channels of data " << data
        << " (axis " << p.axis << ")";
  }
  data[static_cast<size_t>(axis)] = channel[0];
  (*in)[0] = data;
  for (size_t i = 1; i < 5; ++i) (*in)[i] = channel;
  (*out)[0] = data;
  if (out->size() > 1) (*out)[1] = channel;
  if (out->size() > 2) (*out)[2] = channel;
  if (out->size() > 3) (*out)[3] = data;  // _contrib_BatchNormWithReLU's workspace
  for (const auto& s : *in)
    if (!s.IsKnown()) return false;
  for (const auto& s : *out)
    if (!s.IsKnown()) return false;
  return true;
}

}  // namespace internal

namespace {

using internal::BatchNormInferShape;

// The channel-last view of data normalized along its last axis, (N, spatial..., C): the dims of
// the channel-first data (N, C, spatial...) it stands for (the channel-last pass moves
// BatchNorm's axis last), so that its sums take the channel-first kernel's order. None for other
// axes and for data without spatial axes.
std::optional<internal::BatchNormDims> ChannelLastDims(const Shape& shape, size_t axis) {
  if (shape.ndim() < 3 || axis + 1 != shape.ndim()) return std::nullopt;
  internal::BatchNormDims dims{shape[0], shape[axis], 1};
  for (size_t i = 1; i < axis; ++i) dims.inner *= shape[i];
  return dims;
}

template <bool kRelu>
void BatchNormKernel(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                     const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<BatchNormParam>();
  const Shape& shape = in[0].shape;
  const int nd = static_cast<int>(shape.ndim());
  const size_t axis = static_cast<size_t>(p.axis < 0 ? nd + p.axis : p.axis);
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < axis; ++i) outer *= shape[i];
  for (size_t i = axis + 1; i < shape.ndim(); ++i) inner *= shape[i];
  const int64_t C = shape[axis];
  if (in[0].dtype == DType::kFloat64) {
    internal::BatchNormFloat64Args a;
    a.x = in[0].ptr<const double>();
    a.gamma = in[1].ptr<const double>();
    a.beta = in[2].ptr<const double>();
    a.moving_mean = in[3].ptr<const double>();
    a.moving_var = in[4].ptr<const double>();
    a.y = out[0].ptr<double>();
    a.mean_out = out.size() > 1 ? out[1].ptr<double>() : nullptr;
    a.invstd_out = out.size() > 2 ? out[2].ptr<double>() : nullptr;
    a.eps = p.eps;
    a.fix_gamma = p.fix_gamma;
    a.batch_stats = ctx.is_train && !p.use_global_stats;
    a.relu = kRelu;
    internal::BatchNormForward(a, internal::BatchNormDims{outer, C, inner});
    return;
  }
  const float* x = in[0].ptr<const float>();
  const float* gamma = in[1].ptr<const float>();
  const float* beta = in[2].ptr<const float>();
  const float* moving_mean = in[3].ptr<const float>();
  const float* moving_var = in[4].ptr<const float>();
  float* y = out[0].ptr<float>();
  float* mean_out = out.size() > 1 ? out[1].ptr<float>() : nullptr;
  float* var_out = out.size() > 2 ? out[2].ptr<float>() : nullptr;
  const bool batch_stats = ctx.is_train && !p.use_global_stats;

  // Per-channel scale and shift.
  float* scale =
      ctx.workspace->Get<float>(internal::kBatchNormAffineSlot, static_cast<size_t>(4 * C));
  float* shift = scale + C;
  const std::optional<internal::BatchNormDims> channel_last = ChannelLastDims(shape, axis);
  if (batch_stats) {
    float* mean = shift + C;
    float* invstd = mean + C;
    if (channel_last) {
      internal::BatchNormBatchStatsChannelLast(x, *channel_last, p.eps, mean, invstd,
                                               ctx.workspace);
    } else {
      // Per channel, independent of the thread count.
      const internal::BatchNormDims dims{outer, C, inner};
      internal::ParallelFor(C, dims.count() >= 4096, [&](int64_t c) {
        internal::BatchNormBatchStats(x, dims, c, p.eps, &mean[c], &invstd[c]);
      });
    }
    // One loop for both layouts: the same bits, NaNs included.
    for (int64_t c = 0; c < C; ++c) {
      if (mean_out) mean_out[c] = mean[c];
      if (var_out) var_out[c] = invstd[c];
      scale[c] = (p.fix_gamma ? 1.f : gamma[c]) * invstd[c];
      shift[c] = beta[c] - mean[c] * scale[c];
    }
  } else {
    internal::BatchNormScaleShift(gamma, beta, moving_mean, moving_var, p.eps, p.fix_gamma, C,
                                  scale, shift);
    for (int64_t c = 0; c < C; ++c) {
      if (mean_out) mean_out[c] = moving_mean[c];
      if (var_out) var_out[c] = internal::BatchNormInvStd(moving_var[c], p.eps);
    }
  }
  if (inner == 1) {  // channel-last data: vectorized across the channels of each position
    constexpr int64_t kPositionsPerTask = 256;
    const int64_t tasks = (outer + kPositionsPerTask - 1) / kPositionsPerTask;
    internal::ParallelFor(tasks, outer * C >= internal::kElementwiseRange, [&](int64_t t) {
      const int64_t begin = t * kPositionsPerTask;
      const int64_t end = std::min(outer, begin + kPositionsPerTask);
      internal::BatchNormApplyChannelLast(x + begin * C, scale, shift, end - begin, C, kRelu,
                                          y + begin * C);
    });
    return;
  }
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < C; ++c) {
      const float a = scale[c], b = shift[c];
      const float* xc = x + (o * C + c) * inner;
      float* yc = y + (o * C + c) * inner;
#pragma omp simd
      for (int64_t i = 0; i < inner; ++i) {
        const float v = xc[i] * a + b;
        yc[i] = kRelu ? internal::ReluOf(v) : v;
      }
    }
  }
}

// ---- _backward_BatchNorm: inputs (out_grad, data, gamma, moving_mean, moving_var, mean, var),
// the last two the forward's outputs (hidden unless output_mean_var), BatchNorm's attributes;
// outputs the gradients of data, gamma and beta. In training mode (and not use_global_stats) it
// normalizes with the statistics the forward saved in mean and var, as MXNet's backward does
// (the batch's when the forward ran in training mode, the moving ones otherwise), and updates the
// moving ones with them (mutable inputs 3 and 4). _backward_BatchNormWithReLU,
// _contrib_BatchNormWithReLU's, also takes the forward's beta (last) and counts the output
// gradient only where the forward's output is positive, recomputing the forward's float
// operations (the bits of _backward_relu on that output, without its pass).

constexpr size_t kBackwardBetaInput = 7;  // _backward_BatchNormWithReLU's beta

bool BatchNormBackwardShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out,
                            bool relu) {
  std::vector<Shape> forward_in{(*in)[1], (*in)[2], (*out)[2], (*in)[3], (*in)[4]};
  if (relu) {
    HN_CHECK(MergeShape((*in)[kBackwardBetaInput], &forward_in[2]), kShapeError)
        << DescribeNode(attrs) << ": beta " << (*in)[kBackwardBetaInput]
        << " does not match its gradient " << (*out)[2];
  }
  std::vector<Shape> forward_out{(*in)[0], (*in)[5], (*in)[6]};
  HN_CHECK(MergeShape((*out)[0], &forward_in[0]), kShapeError)
      << DescribeNode(attrs) << ": data gradient " << (*out)[0] << " does not match data "
      << forward_in[0];
  HN_CHECK(MergeShape((*out)[1], &forward_in[1]), kShapeError)
      << DescribeNode(attrs) << ": gamma gradient " << (*out)[1] << " does not match gamma "
      << forward_in[1];
  const bool known = BatchNormInferShape(attrs, &forward_in, &forward_out);
  (*in)[0] = forward_out[0];
  (*in)[1] = forward_in[0];
  (*in)[2] = forward_in[1];
  (*in)[3] = forward_in[3];
  (*in)[4] = forward_in[4];
  (*in)[5] = forward_out[1];
  (*in)[6] = forward_out[2];
  if (relu) (*in)[kBackwardBetaInput] = forward_in[2];
  (*out)[0] = forward_in[0];
  (*out)[1] = forward_in[1];
  (*out)[2] = forward_in[2];
  return known;
}

// The kernel's arguments from the op's inputs (dy, x, gamma, moving mean and var, the forward's
// mean and var, [beta]) and outputs.
template <typename T>
internal::BatchNormGradArgsOf<T> BatchNormGradArgsFor(const OpContext& ctx, const BatchNormParam& p,
                                                      const std::vector<TBlob>& in,
                                                      const std::vector<TBlob>& out, bool relu) {
  internal::BatchNormGradArgsOf<T> args;
  args.dy = in[0].ptr<const T>();
  args.x = in[1].ptr<const T>();
  args.gamma = in[2].ptr<const T>();
  args.moving_mean = in[3].ptr<T>();
  args.moving_var = in[4].ptr<T>();
  args.mean = in[5].ptr<const T>();
  args.invstd = in[6].ptr<const T>();
  args.relu_beta = relu ? in[kBackwardBetaInput].ptr<const T>() : nullptr;
  args.dx = out[0].ptr<T>();
  args.dgamma = out[1].ptr<T>();
  args.dbeta = out[2].ptr<T>();
  args.eps = p.eps;
  args.momentum = p.momentum;
  args.fix_gamma = p.fix_gamma;
  args.batch_stats = ctx.is_train && !p.use_global_stats;
  return args;
}

template <bool kRelu>
void BatchNormBackwardCompute(const OpContext& ctx, const NodeAttrs& attrs,
                              const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<BatchNormParam>();
  const Shape& shape = in[1].shape;
  const int nd = static_cast<int>(shape.ndim());
  const size_t axis = static_cast<size_t>(p.axis < 0 ? nd + p.axis : p.axis);
  internal::BatchNormDims dims;
  for (size_t i = 0; i < axis; ++i) dims.outer *= shape[i];
  for (size_t i = axis + 1; i < shape.ndim(); ++i) dims.inner *= shape[i];
  dims.channels = shape[axis];
  if (in[1].dtype == DType::kFloat64) {
    internal::BatchNormBackward(BatchNormGradArgsFor<double>(ctx, p, in, out, kRelu), dims);
  } else if (const auto channel_last = ChannelLastDims(shape, axis)) {
    internal::BatchNormBackwardChannelLast(BatchNormGradArgsFor<float>(ctx, p, in, out, kRelu),
                                           *channel_last, ctx.workspace);
  } else {
    internal::BatchNormBackward(BatchNormGradArgsFor<float>(ctx, p, in, out, kRelu), dims);
  }
}

// Only the gradient of `output` counts (MXNet ignores those of mean and var); the ReLU variant's
// backward masks it where the output is not positive. The moving statistics get no gradient. The
// backward reads the statistics the forward saved in its outputs mean and var, hidden or not:
// eager calls keep them on the tape and graphs keep their entries (IndexedGraph), so eager and
// hybridized backwards read the same values.
FGradient BatchNormGradient(bool relu) {
  return [relu](const std::shared_ptr<Node>& n, const std::vector<NodeEntry>& dy) {
    internal::GradientBuilder g(n, dy);
    std::vector<NodeEntry> inputs{g.out_grad(0), g.in(0),  g.in(1), g.in(3),
                                  g.in(4),       g.out(1), g.out(2)};
    if (relu) inputs.push_back(g.in(2));
    std::shared_ptr<Node> backward = g.MakeNode(
        relu ? "_backward_BatchNormWithReLU" : "_backward_BatchNorm", inputs, g.attrs().dict);
    return std::vector<NodeEntry>{NodeEntry{backward, 0, 0}, NodeEntry{backward, 1, 0},
                                  NodeEntry{backward, 2, 0}, g.ZerosLike(g.in(3)),
                                  g.ZerosLike(g.in(4))};
  };
}

uint32_t BatchNormNumVisibleOutputs(const NodeAttrs& attrs) {
  return attrs.Param<BatchNormParam>().output_mean_var ? 3u : 1u;
}

// Inference: BatchNormalization on the moving statistics for the channel axis 1, the same
// arithmetic spelled out for other axes. fix_gamma uses ones, not the stored gamma. The optional
// outputs are the moving mean and 1 / sqrt(moving_var + eps), as the kernel writes them.
FOnnxConvert BatchNormOnnx(bool relu) {
  return [relu](OnnxNodeContext* ctx) {
    const auto& p = ctx->param<BatchNormParam>();
    const OnnxValue& x = ctx->in(0);
    const size_t nd = x.shape.ndim();
    const size_t axis = static_cast<size_t>(p.axis < 0 ? static_cast<int>(nd) + p.axis : p.axis);
    const int64_t channels = x.shape[axis];
    const std::string gamma =
        p.fix_gamma
            ? ctx->Floats(std::vector<float>(static_cast<size_t>(channels), 1.f), {channels})
            : ctx->in(1).name;
    const std::string &beta = ctx->in(2).name, &mean = ctx->in(3).name, &var = ctx->in(4).name;
    const std::string eps = ctx->Scalar(static_cast<float>(p.eps));
    auto invstd = [&](const std::string& to) {
      return ctx->Add("Reciprocal", {ctx->Add("Sqrt", {ctx->Add("Add", {var, eps})})}, {}, to);
    };
    if (ctx->num_outputs() > 1 && ctx->used(1)) ctx->Add("Identity", {mean}, {}, ctx->out(1).name);
    if (ctx->num_outputs() > 2 && ctx->used(2)) invstd(ctx->out(2).name);
    const std::string y = relu ? "" : ctx->out(0).name;
    std::string normalized;
    if (axis == 1 && nd >= 2) {
      normalized = ctx->Add("BatchNormalization", {x.name, gamma, beta, mean, var},
                            {{"epsilon", static_cast<float>(p.eps)}}, y);
    } else {
      // (C,) -> (C, 1, ..., 1) to broadcast along `axis`.
      std::vector<int64_t> trailing;
      for (size_t i = 1; i < nd - axis; ++i) trailing.push_back(static_cast<int64_t>(i));
      auto along = [&](const std::string& v) {
        return trailing.empty() ? v : ctx->Unsqueeze(v, trailing);
      };
      std::string centered = ctx->Add("Sub", {x.name, along(mean)});
      std::string scaled =
          ctx->Add("Mul", {ctx->Add("Mul", {centered, along(invstd(""))}), along(gamma)});
      normalized = ctx->Add("Add", {scaled, along(beta)}, {}, y);
    }
    if (relu) ctx->Add("Relu", {normalized}, {}, ctx->out(0).name);
  };
}

// The ReLU variant has a fourth, hidden output (its workspace).
void RegisterOne(OpRegistry* r, const char* name, const char* description, bool relu) {
  r->Register(name)
      .Describe(description)
      .SetParam<BatchNormParam>()
      .SetInputNames(
          std::vector<std::string>(std::begin(kParamInputNames), std::end(kParamInputNames)))
      .SetMutableInputs({3, 4})
      .SetNumOutputs(BatchNormNumVisibleOutputs)
      .SetOutputNames([](const NodeAttrs&) -> std::vector<std::string> {
        return {"output", "mean", "var"};
      })
      .SetNumTotalOutputs(relu ? 4 : 3)
      .SetInferShape(BatchNormInferShape)
      .SetInferType(internal::RealType)
      .SetCompute(relu ? FCompute(BatchNormKernel<true>) : FCompute(BatchNormKernel<false>))
      .SetInplace({{0, 0}})
      .SetOnnx({"BatchNormalization", "Identity", "Add", "Sqrt", "Reciprocal", "Sub", "Mul",
                "Unsqueeze", "Relu"},
               BatchNormOnnx(relu))
      .SetGradient(BatchNormGradient(relu));
}

void RegisterBackward(OpRegistry* r, const char* name, const char* description, bool relu) {
  r->Register(name)
      .Describe(description)
      .SetParam<BatchNormParam>()
      .SetInputNames(relu ? std::vector<std::string>{"out_grad", "data", "gamma", "moving_mean",
                                                     "moving_var", "mean", "var", "beta"}
                          : std::vector<std::string>{"out_grad", "data", "gamma", "moving_mean",
                                                     "moving_var", "mean", "var"})
      .SetMutableInputs({3, 4})
      .SetNumOutputs(3)
      .SetInferShape(
          [relu](const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
            return BatchNormBackwardShape(attrs, in, out, relu);
          })
      .SetInferType(internal::RealType)
      .SetCompute(relu ? FCompute(BatchNormBackwardCompute<true>)
                       : FCompute(BatchNormBackwardCompute<false>))
      .SetInternal();
}

}  // namespace

void RegisterBatchNormOps(OpRegistry* r) {
  RegisterOne(r, "BatchNorm",
              "Batch normalization: y = (x - mean) / sqrt(var + eps) * gamma + beta per channel "
              "(gamma = 1 when fix_gamma). In inference (or with use_global_stats) mean and var "
              "are moving_mean and moving_var; in training the batch statistics are used. The "
              "optional outputs mean and var (output_mean_var) hold the mean and the inverse "
              "standard deviation.",
              false);
  RegisterOne(r, "_contrib_BatchNormWithReLU",
              "BatchNorm followed by ReLU, fused. Same inputs, attributes and outputs as "
              "BatchNorm, plus a hidden workspace output.",
              true);
  RegisterBackward(r, "_backward_BatchNorm",
                   "The gradient of BatchNorm: the gradients of data, gamma and beta from the "
                   "output's. In training mode it normalizes with the statistics the forward saved "
                   "in its outputs mean and var (var holding the inverse standard deviation) and "
                   "updates moving_mean and moving_var with them and the momentum, as MXNet's "
                   "backward does.",
                   false);
  RegisterBackward(r, "_backward_BatchNormWithReLU",
                   "The gradient of _contrib_BatchNormWithReLU: _backward_BatchNorm's, the output "
                   "gradient counting only where the forward's output is positive (told from "
                   "data and the forward's statistics, gamma and beta, its last input).",
                   true);
}

}  // namespace hybridnet
