// UpSampling of MXNet 1.9.1 (src/operator/nn/upsampling-inl.h), float32 and float64:
//  * nearest: num_args NCHW inputs arg0..; the output is (scale * h0, scale * w0) and input i is
//    repeated by (scale * h0) / h_i; multi_input_mode concat stacks the channels, sum adds the
//    inputs (equal channels) in input order.
//  * bilinear: MXNet runs a depthwise Deconvolution of data (N, C, h, w) with the weight input
//    (C, 1, k, k), k = 2 * scale - scale % 2, stride scale, pad ceil((scale - 1) / 2), no bias;
//    num_filter must be C. The weight is the model's (MXNet initializes it to a bilinear
//    kernel). The transposed convolution is written here directly.
// The internal "_backward_UpSampling" (inputs out_grad and the forward's) is the gradient: nearest
// sums each input pixel's block of output gradients (row by row, as MXNet's sum pooling of the
// gradient does; the input's channels of it with concat), bilinear correlates the output
// gradient with the weights (data) and with the data (weights).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "onnx/onnx_convert.h"
#include "ops/gradient_util.h"
#include "ops/vision/vision_common-inl.h"
#include "ops/vision/vision_ops.h"

namespace hybridnet {
namespace {

using internal::AssignShape;
using internal::SwitchRealDType;

enum class SampleType { kNearest, kBilinear };
enum class MultiInputMode { kConcat, kSum };

struct UpSamplingParam {
  int scale = 1;
  int num_filter = 0;
  SampleType sample_type = SampleType::kNearest;
  MultiInputMode multi_input_mode = MultiInputMode::kConcat;
  int num_args = 1;
  int64_t workspace = 512;
  static void Declare(ParamDeclarer<UpSamplingParam>* d) {
    d->Field("scale", &UpSamplingParam::scale)
        .Required()
        .Min(1)
        .Describe("Upsampling factor of the first input.");
    d->Field("num_filter", &UpSamplingParam::num_filter)
        .Default(0)
        .Describe("Channels of the input (bilinear only, where it must equal them).");
    d->Field("sample_type", &UpSamplingParam::sample_type,
             {{"bilinear", SampleType::kBilinear}, {"nearest", SampleType::kNearest}})
        .Required()
        .Describe(
            "nearest repeats pixels; bilinear is a depthwise deconvolution with the "
            "weight input.");
    d->Field("multi_input_mode", &UpSamplingParam::multi_input_mode,
             {{"concat", MultiInputMode::kConcat}, {"sum", MultiInputMode::kSum}})
        .Default(MultiInputMode::kConcat)
        .Describe("With several nearest inputs: concatenate their channels or add them.");
    d->Field("num_args", &UpSamplingParam::num_args)
        .Required()
        .Min(1)
        .Describe("Number of inputs (nearest); bilinear takes data and weight.");
    d->Field("workspace", &UpSamplingParam::workspace)
        .Default(512)
        .Min(0)
        .Describe("Accepted for compatibility (MXNet's deconvolution scratch limit in MB).");
  }
};

int64_t BilinearKernel(int64_t scale) { return 2 * scale - scale % 2; }

bool UpSamplingShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const auto& p = attrs.Param<UpSamplingParam>();
  const std::string node = DescribeNode(attrs);
  for (size_t i = 0; i < in->size(); ++i) {
    if (p.sample_type == SampleType::kBilinear && i == 1) continue;
    HN_CHECK((*in)[i].ndim() == 0 || (*in)[i].ndim() == 4, kShapeError)
        << node << ": input " << i << " should be NCHW (batch, channel, height, width), got "
        << (*in)[i];
  }
  const Shape d = (*in)[0];
  if (p.sample_type == SampleType::kBilinear) {
    if (d.ndim() == 0) return false;
    const int64_t k = BilinearKernel(p.scale);
    AssignShape(attrs, in, 1, Shape{d[1], 1, k, k}, "input 'weight'");
    if (d[1] != 0) {
      HN_CHECK(p.num_filter == d[1], kInvalidArgument)
          << node << ": bilinear upsampling needs num_filter equal to the data channels (" << d[1]
          << "), got num_filter=" << p.num_filter;
    }
    AssignShape(attrs, out, 0, Shape{d[0], d[1], d[2] * p.scale, d[3] * p.scale}, "output");
    return internal::AllKnown(*in, *out);
  }
  for (const Shape& s : *in)
    if (!s.IsKnown()) return false;
  const int64_t oh = d[2] * p.scale, ow = d[3] * p.scale;
  int64_t channels = 0;
  for (size_t i = 0; i < in->size(); ++i) {
    const Shape& s = (*in)[i];
    HN_CHECK(oh % s[2] == 0 && ow % s[3] == 0 && oh / s[2] == ow / s[3], kShapeError)
        << node << ": input " << i << " " << s << " does not upsample by one integer factor to "
        << "the output size " << oh << " x " << ow << " (input 0 " << d << " times scale "
        << p.scale << ")";
    HN_CHECK(s[0] == d[0], kShapeError)
        << node << ": input " << i << " " << s << " and input 0 " << d << " differ in batch";
    if (p.multi_input_mode == MultiInputMode::kSum) {
      HN_CHECK(channels == 0 || channels == s[1], kShapeError)
          << node << ": multi_input_mode=sum needs equal channels, input " << i << " " << s
          << " has " << s[1] << " instead of " << channels;
      channels = s[1];
    } else {
      channels += s[1];
    }
  }
  AssignShape(attrs, out, 0, Shape{d[0], channels, oh, ow}, "output");
  return true;
}

template <typename T>
void NearestKernel(const UpSamplingParam& p, const std::vector<TBlob>& in, const TBlob& out) {
  const Shape& os = out.shape;
  const int64_t batch = os[0], oc = os[1], oh = os[2], ow = os[3];
  T* y = out.ptr<T>();
  const bool sum = p.multi_input_mode == MultiInputMode::kSum && in.size() > 1;
  int64_t channel_offset = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const Shape& s = in[i].shape;
    const int64_t c_in = s[1], ih = s[2], iw = s[3];
    const int64_t f = oh / ih;
    const T* x = in[i].ptr<const T>();
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t c = 0; c < c_in; ++c) {
        const T* plane = x + (n * c_in + c) * ih * iw;
        T* dst = y + (n * oc + (sum ? c : channel_offset + c)) * oh * ow;
        for (int64_t r = 0; r < oh; ++r) {
          const T* row = plane + (r / f) * iw;
          T* drow = dst + r * ow;
          if (sum && i > 0) {
            for (int64_t q = 0; q < ow; ++q) drow[q] += row[q / f];
          } else if (r % f != 0) {
            std::copy(drow - ow, drow, drow);  // the same source row as the row above
          } else {
            for (int64_t q = 0; q < iw; ++q) std::fill(drow + q * f, drow + (q + 1) * f, row[q]);
          }
        }
      }
    }
    if (!sum) channel_offset += c_in;
  }
}

// Depthwise transposed convolution: out[c] += in[c][iy][ix] * w[c][ky][kx] at
// (iy * s - pad + ky, ix * s - pad + kx).
template <typename T>
void BilinearKernelCompute(int64_t scale, const TBlob& data, const TBlob& weight,
                           const TBlob& out) {
  const Shape& s = data.shape;
  const int64_t batch = s[0], channels = s[1], ih = s[2], iw = s[3];
  const int64_t oh = ih * scale, ow = iw * scale;
  const int64_t k = BilinearKernel(scale);
  const int64_t pad = scale / 2;  // = ceil((scale - 1) / 2)
  const T* x = data.ptr<const T>();
  const T* w = weight.ptr<const T>();
  T* y = out.ptr<T>();
  std::fill(y, y + out.Size(), T(0));
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      const T* plane = x + (n * channels + c) * ih * iw;
      const T* kern = w + c * k * k;
      T* dst = y + (n * channels + c) * oh * ow;
      for (int64_t r = 0; r < ih; ++r) {
        for (int64_t q = 0; q < iw; ++q) {
          const T v = plane[r * iw + q];
          for (int64_t ky = 0; ky < k; ++ky) {
            const int64_t oy = r * scale - pad + ky;
            if (oy < 0 || oy >= oh) continue;
            T* drow = dst + oy * ow;
            const T* krow = kern + ky * k;
            const int64_t ox0 = q * scale - pad;
            const int64_t kx0 = std::max<int64_t>(0, -ox0);
            const int64_t kx1 = std::min<int64_t>(k, ow - ox0);
            for (int64_t kx = kx0; kx < kx1; ++kx) drow[ox0 + kx] += v * krow[kx];
          }
        }
      }
    }
  }
}

void UpSamplingCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                       const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<UpSamplingParam>();
  SwitchRealDType(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (p.sample_type == SampleType::kNearest) {
      NearestKernel<T>(p, in, out[0]);
    } else {
      BilinearKernelCompute<T>(p.scale, in[0], in[1], out[0]);
    }
  });
}

// ---- _backward_UpSampling: inputs (out_grad, the forward's inputs), outputs their gradients.

bool UpSamplingBackwardShape(const NodeAttrs& attrs, std::vector<Shape>* in,
                             std::vector<Shape>* out) {
  HN_CHECK(in->size() == out->size() + 1, kInternal)
      << DescribeNode(attrs) << ": expected out_grad and the forward's inputs, one gradient each";
  std::vector<Shape> forward_in(in->begin() + 1, in->end()), forward_out{(*in)[0]};
  for (size_t i = 0; i < out->size(); ++i) {
    AssignShape(attrs, &forward_in, i, (*out)[i], "gradient " + std::to_string(i));
  }
  const bool known = UpSamplingShape(attrs, &forward_in, &forward_out);
  (*in)[0] = forward_out[0];
  for (size_t i = 0; i < forward_in.size(); ++i) (*in)[i + 1] = (*out)[i] = forward_in[i];
  return known;
}

template <typename T>
void NearestBackward(const UpSamplingParam& p, const TBlob& dy_blob,
                     const std::vector<TBlob>& grads) {
  const Shape& os = dy_blob.shape;
  const int64_t oc = os[1], oh = os[2], ow = os[3];
  const T* dy = dy_blob.ptr<const T>();
  const bool sum = p.multi_input_mode == MultiInputMode::kSum && grads.size() > 1;
  int64_t channel_offset = 0;
  for (const TBlob& g : grads) {
    const Shape& s = g.shape;
    const int64_t c_in = s[1], ih = s[2], iw = s[3], f = oh / ih;
    T* dx = g.ptr<T>();
    for (int64_t n = 0; n < s[0]; ++n) {
      for (int64_t c = 0; c < c_in; ++c) {
        const T* plane = dy + (n * oc + (sum ? c : channel_offset + c)) * oh * ow;
        for (int64_t r = 0; r < ih; ++r) {
          for (int64_t q = 0; q < iw; ++q) {
            T acc = T(0);
            for (int64_t a = 0; a < f; ++a)
              for (int64_t b = 0; b < f; ++b) acc += plane[(r * f + a) * ow + q * f + b];
            *dx++ = acc;
          }
        }
      }
    }
    if (!sum) channel_offset += c_in;
  }
}

// The adjoint of BilinearKernelCompute: each (input pixel, tap) pair that adds x * w into an
// output pixel gives dy * w to x's gradient and dy * x to w's.
template <typename T>
void BilinearBackward(int64_t scale, const TBlob& dy_blob, const TBlob& data, const TBlob& weight,
                      const TBlob& data_grad, const TBlob& weight_grad) {
  const Shape& s = data.shape;
  const int64_t batch = s[0], channels = s[1], ih = s[2], iw = s[3];
  const int64_t oh = ih * scale, ow = iw * scale;
  const int64_t k = BilinearKernel(scale);
  const int64_t pad = scale / 2;
  const T* x = data.ptr<const T>();
  const T* w = weight.ptr<const T>();
  const T* dy = dy_blob.ptr<const T>();
  T* dx = data_grad.ptr<T>();
  T* dw = weight_grad.ptr<T>();
  std::fill(dw, dw + weight_grad.Size(), T(0));
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t at = (n * channels + c) * ih * iw;
      const T* kern = w + c * k * k;
      T* kern_grad = dw + c * k * k;
      const T* grad = dy + (n * channels + c) * oh * ow;
      for (int64_t r = 0; r < ih; ++r) {
        for (int64_t q = 0; q < iw; ++q) {
          const T v = x[at + r * iw + q];
          T acc = T(0);
          for (int64_t ky = 0; ky < k; ++ky) {
            const int64_t oy = r * scale - pad + ky;
            if (oy < 0 || oy >= oh) continue;
            const int64_t ox0 = q * scale - pad;
            const int64_t kx0 = std::max<int64_t>(0, -ox0);
            const int64_t kx1 = std::min<int64_t>(k, ow - ox0);
            for (int64_t kx = kx0; kx < kx1; ++kx) {
              const T g = grad[oy * ow + ox0 + kx];
              acc += g * kern[ky * k + kx];
              kern_grad[ky * k + kx] += g * v;
            }
          }
          dx[at + r * iw + q] = acc;
        }
      }
    }
  }
}

void UpSamplingBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                               const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<UpSamplingParam>();
  SwitchRealDType(in[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (p.sample_type == SampleType::kNearest) {
      NearestBackward<T>(p, in[0], out);
    } else {
      BilinearBackward<T>(p.scale, in[0], in[1], in[2], out[0], out[1]);
    }
  });
}

std::vector<NodeEntry> UpSamplingGradient(const std::shared_ptr<Node>& n,
                                          const std::vector<NodeEntry>& dy) {
  internal::GradientBuilder g(n, dy);
  std::vector<NodeEntry> inputs{g.out_grad(0)};
  inputs.insert(inputs.end(), n->inputs.begin(), n->inputs.end());
  std::shared_ptr<Node> backward =
      g.MakeNode("_backward_UpSampling", std::move(inputs), g.attrs().dict);
  std::vector<NodeEntry> grads;
  for (uint32_t i = 0; i < n->inputs.size(); ++i) grads.push_back(NodeEntry{backward, i, 0});
  return grads;
}

// Nearest: each input resized to the output's height and width by ONNX Resize (nearest,
// "asymmetric" with "floor": source = dst / scale, exact for the integer scales), then
// concatenated or summed.
void UpSamplingOnnx(OnnxNodeContext* ctx) {
  const auto& p = ctx->param<UpSamplingParam>();
  if (p.sample_type == SampleType::kBilinear) {
    ctx->NotExportable("sample_type='bilinear' (a depthwise deconvolution with learned weights)");
  }
  const Shape& out = ctx->out(0).shape;
  const bool one = ctx->num_inputs() == 1;
  std::vector<std::string> resized;
  for (size_t i = 0; i < ctx->num_inputs(); ++i) {
    const OnnxValue& x = ctx->in(i);
    const std::string sizes = ctx->LeadingDimsThen(x, 2, {out[2], out[3]});
    resized.push_back(ctx->Add("Resize", {x.name, "", "", sizes},
                               {{"mode", "nearest"},
                                {"coordinate_transformation_mode", "asymmetric"},
                                {"nearest_mode", "floor"}},
                               one ? ctx->out(0).name : ""));
  }
  if (one) return;
  if (p.multi_input_mode == MultiInputMode::kSum) {
    ctx->Add("Sum", resized, {}, ctx->out(0).name);
  } else {
    ctx->Add("Concat", resized, {{"axis", int64_t{1}}}, ctx->out(0).name);
  }
}

}  // namespace

void RegisterUpSamplingOps(OpRegistry* r) {
  r->Register("UpSampling")
      .Describe(
          "Upsamples NCHW inputs by an integer scale: nearest-neighbour (several inputs, "
          "concatenated or summed) or bilinear (a depthwise transposed convolution with "
          "the weight input).")
      .SetParam<UpSamplingParam>()
      .SetKeyVarNumArgs("num_args")
      .SetInputNames([](const NodeAttrs& attrs) {
        const auto& p = attrs.Param<UpSamplingParam>();
        if (p.sample_type == SampleType::kBilinear)
          return std::vector<std::string>{"data", "weight"};
        std::vector<std::string> names;
        for (int i = 0; i < p.num_args; ++i) names.push_back("arg" + std::to_string(i));
        return names;
      })
      // Counted without building the names: a hostile file may say billions.
      .SetNumInputs([](const NodeAttrs& attrs) {
        const auto& p = attrs.Param<UpSamplingParam>();
        return p.sample_type == SampleType::kBilinear ? 2u : static_cast<uint32_t>(p.num_args);
      })
      .SetInferShape(UpSamplingShape)
      .SetInferType(internal::RealType)
      .SetCompute(UpSamplingCompute)
      .SetOnnx({"Resize", "Shape", "Slice", "Concat", "Sum"}, UpSamplingOnnx,
               "sample_type='bilinear'")
      .SetGradient(UpSamplingGradient);

  r->Register("_backward_UpSampling")
      .Describe(
          "The gradient of UpSampling: nearest sums each input pixel's block of the output "
          "gradient; bilinear correlates the output gradient with the weights and the data.")
      .SetParam<UpSamplingParam>()
      .SetInputNames([](const NodeAttrs& attrs) {
        const auto& p = attrs.Param<UpSamplingParam>();
        std::vector<std::string> names{"out_grad"};
        if (p.sample_type == SampleType::kBilinear) {
          names.insert(names.end(), {"data", "weight"});
          return names;
        }
        for (int i = 0; i < p.num_args; ++i) names.push_back("arg" + std::to_string(i));
        return names;
      })
      .SetNumInputs([](const NodeAttrs& attrs) {
        const auto& p = attrs.Param<UpSamplingParam>();
        return p.sample_type == SampleType::kBilinear ? 3u : static_cast<uint32_t>(p.num_args) + 1;
      })
      .SetNumOutputs([](const NodeAttrs& attrs) {
        const auto& p = attrs.Param<UpSamplingParam>();
        return p.sample_type == SampleType::kBilinear ? 2u : static_cast<uint32_t>(p.num_args);
      })
      .SetInferShape(UpSamplingBackwardShape)
      .SetInferType(internal::RealType)
      .SetCompute(UpSamplingBackwardCompute)
      .SetInternal();
}

}  // namespace hybridnet
