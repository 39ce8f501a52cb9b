// Pad (MXNet src/operator/pad-inl.h): constant, edge or reflect padding of a 4-D or 5-D input
// along its spatial axes. pad_width holds (before, after) for every axis; MXNet requires the
// first four entries (batch and channel) to be 0, and reflect padding smaller than the axis.
#include <algorithm>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "onnx/onnx_convert.h"
#include "ops/dtype_switch-inl.h"
#include "ops/gradient_util.h"
#include "ops/register_ops.h"

namespace hybridnet {

namespace {

enum class PadMode { kConstant, kEdge, kReflect };

struct PadParam {
  PadMode mode = PadMode::kConstant;
  std::vector<int64_t> pad_width;
  double constant_value = 0.0;
  static void Declare(ParamDeclarer<PadParam>* d) {
    d->Field("mode", &PadParam::mode,
             {{"constant", PadMode::kConstant},
              {"edge", PadMode::kEdge},
              {"reflect", PadMode::kReflect}})
        .Required()
        .Describe(
            "Padding type to use. \"constant\" pads with `constant_value`, \"edge\" pads "
            "using the edge values of the input array, \"reflect\" pads by reflecting "
            "values with respect to the edges.");
    d->Field("pad_width", &PadParam::pad_width)
        .Required()
        .Describe(
            "Widths of the padding regions applied to the edges of each axis: "
            "(before_1, after_1, ..., before_N, after_N), two per input axis. The first "
            "four (batch and channel axes) must be 0.");
    d->Field("constant_value", &PadParam::constant_value)
        .Default(0.0)
        .Describe("The value used for padding when `mode` is \"constant\".");
  }
};

bool PadShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const PadParam& p = attrs.Param<PadParam>();
  const Shape& data = (*in)[0];
  if (data.ndim() == 0) return false;
  HN_CHECK(data.ndim() == 4 || data.ndim() == 5, kShapeError)
      << DescribeNode(attrs) << ": Pad supports 4-D and 5-D inputs only (as MXNet), got " << data;
  HN_CHECK(p.pad_width.size() == 2 * data.ndim(), kShapeError)
      << DescribeNode(attrs) << ": pad_width " << Shape(p.pad_width) << " must hold 2 values "
      << "per input axis (" << 2 * data.ndim() << " for " << data << ")";
  for (size_t i = 0; i < 4; ++i)
    HN_CHECK(p.pad_width[i] == 0, kShapeError)
        << DescribeNode(attrs) << ": pad_width " << Shape(p.pad_width)
        << " pads the batch or channel axis; only spatial axes can be padded";
  std::vector<int64_t> dims(data.begin(), data.end());
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t before = p.pad_width[2 * i], after = p.pad_width[2 * i + 1];
    HN_CHECK(before >= 0 && after >= 0, kShapeError)
        << DescribeNode(attrs) << ": pad_width " << Shape(p.pad_width) << " is negative";
    if (dims[i] == 0) continue;
    if (p.mode == PadMode::kReflect) {
      HN_CHECK(before < dims[i] && after < dims[i], kShapeError)
          << DescribeNode(attrs) << ": reflect padding " << Shape(p.pad_width)
          << " must be smaller than each padded axis of " << data;
    }
    dims[i] += before + after;
  }
  Shape merged = (*out)[0];
  HN_CHECK(MergeShape(Shape(dims), &merged), kShapeError)
      << DescribeNode(attrs) << ": output shape " << (*out)[0] << " does not match " << Shape(dims);
  (*out)[0] = merged;
  return data.IsKnown() && (*out)[0].IsKnown();
}

// Source index along one axis for output position o (-1 = constant).
inline int64_t SourceIndex(int64_t o, int64_t before, int64_t len, PadMode mode) {
  int64_t i = o - before;
  if (i >= 0 && i < len) return i;
  if (mode == PadMode::kConstant) return -1;
  if (mode == PadMode::kEdge) return i < 0 ? 0 : len - 1;
  // reflect (without repeating the edge): -1 -> 1, len -> len - 2
  if (len == 1) return 0;
  const int64_t period = 2 * (len - 1);
  i = ((i % period) + period) % period;
  return i < len ? i : period - i;
}

template <typename T>
void PadKernel(const PadParam& p, const TBlob& in, const TBlob& out) {
  const Shape& is = in.shape;
  const Shape& os = out.shape;
  const PadMode mode = p.mode;
  const T value = static_cast<T>(p.constant_value);
  const size_t nd = is.ndim();
  // Planes: (N*C) of spatial volumes; spatial rank 2 or 3 viewed as (D, H, W).
  const int64_t planes = is[0] * is[1];
  int64_t id[3] = {1, 1, 1}, od[3] = {1, 1, 1}, before[3] = {0, 0, 0};
  const size_t off = 5 - nd;  // 4-D: D = 1
  for (size_t k = 2; k < nd; ++k) {
    id[k - 2 + off] = is[k];
    od[k - 2 + off] = os[k];
    before[k - 2 + off] = p.pad_width[2 * k];
  }
  const T* x = in.ptr<const T>();
  T* y = out.ptr<T>();
  std::vector<int64_t> wsrc(static_cast<size_t>(od[2]));
  for (int64_t w = 0; w < od[2]; ++w)
    wsrc[static_cast<size_t>(w)] = SourceIndex(w, before[2], id[2], mode);
  for (int64_t pl = 0; pl < planes; ++pl) {
    const T* xp = x + pl * id[0] * id[1] * id[2];
    T* yp = y + pl * od[0] * od[1] * od[2];
    for (int64_t d = 0; d < od[0]; ++d) {
      const int64_t sd = SourceIndex(d, before[0], id[0], mode);
      for (int64_t h = 0; h < od[1]; ++h, yp += od[2]) {
        const int64_t sh = SourceIndex(h, before[1], id[1], mode);
        if (sd < 0 || sh < 0) {
          std::fill(yp, yp + od[2], value);
          continue;
        }
        const T* row = xp + (sd * id[1] + sh) * id[2];
        for (int64_t w = 0; w < od[2]; ++w) {
          const int64_t sw = wsrc[static_cast<size_t>(w)];
          yp[w] = sw < 0 ? value : row[sw];
        }
      }
    }
  }
}

void PadCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                const std::vector<TBlob>& out) {
  internal::SwitchNumericDType(out[0].dtype, [&](auto tag) {
    PadKernel<typename decltype(tag)::type>(attrs.Param<PadParam>(), in[0], out[0]);
  });
}

// The gradient adds the output gradient back where each element was read from (MXNet's
// backward of every mode); constant padding reads nothing.
std::vector<NodeEntry> PadGradient(const std::shared_ptr<Node>& n,
                                   const std::vector<NodeEntry>& dy) {
  internal::GradientBuilder g(n, dy);
  return {internal::CopiedElementsGradient(g, 0, {{"constant_value", "0"}})};
}

// ONNX Pad lists every axis's before-width, then every after-width; its reflect is MXNet's.
void PadOnnx(OnnxNodeContext* ctx) {
  const PadParam& p = ctx->param<PadParam>();
  std::vector<int64_t> pads(p.pad_width.size());
  const size_t n = p.pad_width.size() / 2;
  for (size_t i = 0; i < n; ++i) {
    pads[i] = p.pad_width[2 * i];
    pads[n + i] = p.pad_width[2 * i + 1];
  }
  std::vector<std::string> inputs{ctx->in(0).name, ctx->Int64s(pads)};
  const char* mode = "constant";
  switch (p.mode) {
    case PadMode::kConstant:
      inputs.push_back(ctx->Scalar(p.constant_value, ctx->in(0).dtype));
      break;
    case PadMode::kEdge:
      mode = "edge";
      break;
    case PadMode::kReflect:
      mode = "reflect";
      break;
  }
  ctx->Add("Pad", inputs, {{"mode", mode}}, ctx->out(0).name);
}

}  // namespace

void RegisterPadOps(OpRegistry* r) {
  r->Register("Pad")
      .Describe(
          "Pads a 4-D or 5-D input along its spatial axes: constant (constant_value), "
          "edge (repeat the border value) or reflect (mirror without repeating the "
          "border). pad_width lists (before, after) for every axis.")
      .AddAlias("pad")
      .SetParam<PadParam>()
      .SetInputNames({"data"})
      .SetInferShape(PadShape)
      .SetInferType(internal::NumericType)
      .SetCompute(PadCompute)
      .SetOnnx({"Pad"}, PadOnnx)
      .SetGradient(PadGradient);
}

}  // namespace hybridnet
