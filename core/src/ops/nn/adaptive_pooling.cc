// _contrib_AdaptiveAvgPooling2D (MXNet src/operator/contrib/adaptive_avg_pooling-inl.h):
// average pooling of a 4-D (N, C, H, W) input to a fixed output size (OH, OW); output cell
// (oh, ow) averages rows [floor(oh*H/OH), ceil((oh+1)*H/OH)) and the same for columns.
// output_size: () -> (1, 1), (k,) -> (k, k), (OH, OW). Its gradient, the internal
// "_backward_contrib_AdaptiveAvgPooling2D", spreads each output gradient over its cell as MXNet
// does: g / cell height / cell width added to every input of the cell, cells in output order.
#include <algorithm>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "kernels/window-inl.h"
#include "onnx/onnx_convert.h"
#include "ops/gradient_util.h"
#include "ops/register_ops.h"

namespace hybridnet {

namespace {

struct AdaptivePoolParam {
  std::vector<int64_t> output_size;
  static void Declare(ParamDeclarer<AdaptivePoolParam>* d) {
    d->Field("output_size", &AdaptivePoolParam::output_size)
        .Default(std::vector<int64_t>{})
        .Describe("int (output size) or a tuple of int for output (height, width).");
  }
};

void AdaptivePoolParamInit(AdaptivePoolParam* p) {
  HN_CHECK(p->output_size.size() <= 2, kInvalidArgument)
      << "output_size " << Shape(p->output_size).ToString()
      << " must be an int or a (height, width) tuple";
  if (p->output_size.empty()) p->output_size = {1, 1};
  if (p->output_size.size() == 1) p->output_size.push_back(p->output_size[0]);
  for (int64_t v : p->output_size)
    HN_CHECK(v > 0, kInvalidArgument)
        << "output_size " << Shape(p->output_size).ToString() << " must be positive";
}

bool AdaptivePoolShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const auto& p = attrs.Param<AdaptivePoolParam>();
  const Shape& data = (*in)[0];
  if (data.ndim() == 0) return false;
  HN_CHECK(data.ndim() == 4, kShapeError)
      << DescribeNode(attrs) << ": data must be 4-D (batch, channel, y, x), got " << data;
  Shape o{data[0], data[1], p.output_size[0], p.output_size[1]};
  Shape merged = (*out)[0];
  HN_CHECK(MergeShape(o, &merged), kShapeError)
      << DescribeNode(attrs) << ": output shape " << (*out)[0] << " does not match " << o;
  (*out)[0] = merged;
  return data.IsKnown() && (*out)[0].IsKnown();
}

void AdaptivePoolCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                         const std::vector<TBlob>& out) {
  const Shape& s = in[0].shape;
  const Shape& os = out[0].shape;
  const int64_t planes = s[0] * s[1], H = s[2], W = s[3], OH = os[2], OW = os[3];
  const float* x = in[0].ptr<const float>();
  float* y = out[0].ptr<float>();
  for (int64_t pl = 0; pl < planes; ++pl) {
    const float* xp = x + pl * H * W;
    for (int64_t oh = 0; oh < OH; ++oh) {
      const int64_t h0 = oh * H / OH, h1 = ((oh + 1) * H + OH - 1) / OH;
      for (int64_t ow = 0; ow < OW; ++ow) {
        const int64_t w0 = ow * W / OW, w1 = ((ow + 1) * W + OW - 1) / OW;
        float sum = 0.f;
        for (int64_t h = h0; h < h1; ++h)
          for (int64_t w = w0; w < w1; ++w) sum += xp[h * W + w];
        *y++ = sum / static_cast<float>((h1 - h0) * (w1 - w0));
      }
    }
  }
}

// ---- _backward_contrib_AdaptiveAvgPooling2D: inputs (out_grad, data), output d data; the data
// is read for its shape only.

bool AdaptivePoolBackwardShape(const NodeAttrs& attrs, std::vector<Shape>* in,
                               std::vector<Shape>* out) {
  HN_CHECK(in->size() == 2 && out->size() == 1, kInternal)
      << DescribeNode(attrs) << ": expected inputs (out_grad, data) and one output";
  HN_CHECK(MergeShape((*out)[0], &(*in)[1]), kShapeError)
      << DescribeNode(attrs) << ": the gradient has shape " << (*out)[0] << ", the data "
      << (*in)[1];
  std::vector<Shape> forward_in{(*in)[1]}, forward_out{(*in)[0]};
  const bool known = AdaptivePoolShape(attrs, &forward_in, &forward_out);
  (*in)[0] = forward_out[0];
  (*in)[1] = (*out)[0] = forward_in[0];
  return known;
}

void AdaptivePoolBackwardCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                                 const std::vector<TBlob>& out) {
  const Shape& s = out[0].shape;
  const Shape& os = in[0].shape;
  const int64_t planes = s[0] * s[1], H = s[2], W = s[3], OH = os[2], OW = os[3];
  const float* dy = in[0].ptr<const float>();
  float* dx = out[0].ptr<float>();
  std::fill(dx, dx + out[0].Size(), 0.f);
  for (int64_t pl = 0; pl < planes; ++pl) {
    float* dxp = dx + pl * H * W;
    for (int64_t oh = 0; oh < OH; ++oh) {
      const int64_t h0 = oh * H / OH, h1 = ((oh + 1) * H + OH - 1) / OH;
      for (int64_t ow = 0; ow < OW; ++ow) {
        const int64_t w0 = ow * W / OW, w1 = ((ow + 1) * W + OW - 1) / OW;
        const float delta = *dy++ / static_cast<float>(h1 - h0) / static_cast<float>(w1 - w0);
        for (int64_t h = h0; h < h1; ++h)
          for (int64_t w = w0; w < w1; ++w) dxp[h * W + w] += delta;
      }
    }
  }
}

std::vector<NodeEntry> AdaptivePoolGradient(const std::shared_ptr<Node>& n,
                                            const std::vector<NodeEntry>& dy) {
  internal::GradientBuilder g(n, dy);
  return {g.Op("_backward_contrib_AdaptiveAvgPooling2D", {g.out_grad(0), g.in(0)}, g.attrs().dict)};
}

// Equal cells are (Global)AveragePool; otherwise the cell averages are two matrix products,
// A_h . x . A_w^T, with A[o, i] = 1 / cell size for the i of cell o.
std::string AveragingMatrix(OnnxNodeContext* ctx, int64_t in, int64_t out, bool transposed) {
  std::vector<float> m(static_cast<size_t>(in * out), 0.f);
  for (int64_t o = 0; o < out; ++o) {
    const int64_t lo = o * in / out, hi = ((o + 1) * in + out - 1) / out;
    for (int64_t i = lo; i < hi; ++i) {
      m[static_cast<size_t>(transposed ? i * out + o : o * in + i)] =
          1.f / static_cast<float>(hi - lo);
    }
  }
  return ctx->Floats(m, transposed ? std::vector<int64_t>{in, out} : std::vector<int64_t>{out, in});
}

void AdaptivePoolOnnx(OnnxNodeContext* ctx) {
  const Shape& s = ctx->in(0).shape;
  const Shape& os = ctx->out(0).shape;
  const int64_t H = s[2], W = s[3], OH = os[2], OW = os[3];
  const std::string& x = ctx->in(0).name;
  const std::string& y = ctx->out(0).name;
  if (OH == 1 && OW == 1) {
    ctx->Add("GlobalAveragePool", {x}, {}, y);
  } else if (H % OH == 0 && W % OW == 0) {
    const std::vector<int64_t> window{H / OH, W / OW};
    ctx->Add("AveragePool", {x}, {{"kernel_shape", window}, {"strides", window}}, y);
  } else {
    std::string rows = ctx->Add("MatMul", {x, AveragingMatrix(ctx, W, OW, true)});
    ctx->Add("MatMul", {AveragingMatrix(ctx, H, OH, false), rows}, {}, y);
  }
}

}  // namespace

void RegisterAdaptivePoolingOps(OpRegistry* r) {
  r->Register("_contrib_AdaptiveAvgPooling2D")
      .Describe(
          "Adaptive average pooling of a 4-D input to output_size (height, "
          "width): cell (i, j) averages rows floor(i*H/OH) .. ceil((i+1)*H/OH)-1 "
          "and the corresponding columns.")
      .SetParam<AdaptivePoolParam>(AdaptivePoolParamInit)
      .SetInputNames({"data"})
      .SetInferShape(AdaptivePoolShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(AdaptivePoolCompute)
      .SetOnnx({"GlobalAveragePool", "AveragePool", "MatMul"}, AdaptivePoolOnnx)
      .SetGradient(AdaptivePoolGradient);

  r->Register("_backward_contrib_AdaptiveAvgPooling2D")
      .Describe(
          "The gradient of _contrib_AdaptiveAvgPooling2D: each output gradient divided by its "
          "cell's height and width, added to every input of the cell.")
      .SetParam<AdaptivePoolParam>(AdaptivePoolParamInit)
      .SetInputNames({"out_grad", "data"})
      .SetInferShape(AdaptivePoolBackwardShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(AdaptivePoolBackwardCompute)
      .SetInternal();
}

}  // namespace hybridnet
