// FullyConnected (MXNet src/operator/nn/fully_connected-inl.h): y = x . W^T + b, plus the
// internal "_hn_fully_connected_act" (FullyConnected followed by an Activation, created by the
// fusion pass) which runs the very same kernel and then the shared activation code in place (relu
// inside the kernel, with the same bits), so fused and unfused graphs give bit-identical results,
// and "_backward_FullyConnected", its gradient (two matrix products and the bias's column sums),
// itself differentiable (second order).

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "hybridnet/op.h"
#include "kernels/activation-inl.h"
#include "kernels/avx2-inl.h"
#include "kernels/avx512-inl.h"
#include "kernels/blas.h"
#include "kernels/dense.h"
#include "kernels/onednn_inner_product_bf16.h"
#include "kernels/parallel-inl.h"
#include "kernels/vector_isa.h"
#include "onnx/onnx_convert.h"
#include "ops/gradient_util.h"
#include "ops/nn/fully_connected_fusions.h"
#include "ops/nn/fully_connected_param.h"
#include "ops/real_type.h"
#include "ops/register_ops.h"
#include "pass/gradient.h"

namespace hybridnet {

namespace {

struct FullyConnectedActParam {
  int num_hidden = 0;
  bool no_bias = false;
  bool flatten = true;
  std::optional<internal::ActType> act_type;
  /// The product in bfloat16 (BFloat16FullyConnectedAttrs sets it; no attribute).
  bool bf16 = false;
  static void Declare(ParamDeclarer<FullyConnectedActParam>* d) {
    DeclareFullyConnectedFields(d);
    d->Field("act_type", &FullyConnectedActParam::act_type, internal::ActTypeNames())
        .Default(std::nullopt)
        .Describe(
            "Activation function applied to the FullyConnected output (none: the product "
            "alone).");
  }
};

}  // namespace

bool InferFullyConnectedShape(const NodeAttrs& attrs, const FullyConnectedParam& p,
                              std::vector<Shape>* in, std::vector<Shape>* out) {
  const int64_t hidden = p.num_hidden;
  auto assign = [&](std::vector<Shape>* list, size_t i, const Shape& value, const char* what) {
    Shape merged = (*list)[i];
    HN_CHECK(MergeShape(value, &merged), kShapeError)
        << DescribeNode(attrs) << ": " << what << " has shape " << (*list)[i] << " but " << value
        << " is required"
        << ((*in)[0].ndim() ? " by data shape " + (*in)[0].ToString() : std::string())
        << " with num_hidden=" << hidden << (p.flatten ? "" : ", flatten=False");
    (*list)[i] = merged;
  };
  // The batch dims of data can come from a known output.
  Shape& dshape = (*in)[0];
  const Shape& oshape = (*out)[0];
  if (dshape.ndim() != 0 && oshape.ndim() != 0) {
    Shape d = dshape;
    if (p.flatten) {
      d[0] = oshape[0];
    } else if (oshape.ndim() == d.ndim()) {
      for (size_t i = 0; i + 1 < d.ndim(); ++i) d[i] = oshape[i];
    }
    assign(in, 0, d, "input 'data'");
  }
  // An unknown last dim of data (flatten=False, or 2-D data) can come from a known weight.
  const Shape& wshape = (*in)[1];
  if (dshape.ndim() != 0 && dshape[dshape.ndim() - 1] == 0 && wshape.ndim() == 2 &&
      (!p.flatten || dshape.ndim() == 2)) {
    Shape d = dshape;
    d[d.ndim() - 1] = wshape[1];
    assign(in, 0, d, "input 'data'");
  }
  if (dshape.ndim() == 0) {
    // Without data only num_hidden is known: the bias, and the weight's first dim.
    if (!p.no_bias && (*in)[2].ndim() == 0) assign(in, 2, Shape{hidden}, "input 'bias'");
    if ((*in)[1].ndim() == 0) assign(in, 1, Shape{hidden, 0}, "input 'weight'");
    return false;
  }
  int64_t k = 1;
  if (p.flatten) {
    for (size_t i = 1; i < dshape.ndim(); ++i) k *= dshape[i];
  } else {
    k = dshape[dshape.ndim() - 1];
  }
  assign(in, 1, Shape{hidden, k}, "input 'weight'");
  if (!p.no_bias) {
    // MXNet accepts a (num_hidden, 1) bias too.
    const Shape& b = (*in)[2];
    if (!(b.ndim() == 2 && (b[0] == hidden || b[0] == 0) && b[1] == 1)) {
      assign(in, 2, Shape{hidden}, "input 'bias'");
    } else {
      (*in)[2] = Shape{hidden, 1};
    }
  }
  Shape o;
  if (p.flatten) {
    o = Shape{dshape[0], hidden};
  } else {
    o = dshape;
    o[o.ndim() - 1] = hidden;
  }
  assign(out, 0, o, "output");
  bool known = (*out)[0].IsKnown();
  for (const Shape& s : *in) known = known && s.IsKnown();
  return known;
}

namespace {

template <typename P>
bool FullyConnectedShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const P& p = attrs.template Param<P>();
  return InferFullyConnectedShape(attrs, FullyConnectedParam{p.num_hidden, p.no_bias, p.flatten},
                                  in, out);
}

// The dense product (kernels/dense.h), with relu or not; the plain and the fused op both call
// this, so their results are identical.
void FullyConnectedForward(const OpContext& ctx, int64_t hidden, bool no_bias, bool relu, bool bf16,
                           const std::vector<TBlob>& in, const TBlob& out) {
  const TBlob& weight = in[1];
  const int64_t k = weight.shape[1];
  const int64_t batch = k == 0 ? 0 : in[0].Size() / k;
  if (bf16 && batch > 0) {
    internal::RunOneDnnBf16InnerProduct(in[0].ptr<const float>(), weight.ptr<const float>(),
                                        no_bias ? nullptr : in[2].ptr<const float>(),
                                        out.ptr<float>(), batch, hidden, k, relu, ctx.InputArray(1),
                                        ctx.workspace);
    return;
  }
  if (in[0].dtype == DType::kFloat64) {  // plain BLAS (no fused relu: the fusion is float32's)
    double* y = out.ptr<double>();
    internal::Gemm(false, true, batch, hidden, k, 1.0, in[0].ptr<const double>(), k,
                   weight.ptr<const double>(), k, 0.0, y, hidden);
    if (no_bias) return;
    const double* bias = in[2].ptr<const double>();
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t h = 0; h < hidden; ++h) y[n * hidden + h] += bias[h];
    return;
  }
  internal::RunDense(in[0].ptr<const float>(), weight.ptr<const float>(),
                     no_bias ? nullptr : in[2].ptr<const float>(), out.ptr<float>(), batch, hidden,
                     k, relu, ctx.InputArray(1), ctx.workspace);
}

void FullyConnectedCompute(const OpContext& ctx, const NodeAttrs& attrs,
                           const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<FullyConnectedParam>();
  FullyConnectedForward(ctx, p.num_hidden, p.no_bias, false, false, in, out[0]);
}

// relu runs inside the float32 dense kernel (a oneDNN post-op where that keeps its sums), the
// other activations, and float64's relu, after the product (training graphs fuse float64 ones
// too).
void FullyConnectedActCompute(const OpContext& ctx, const NodeAttrs& attrs,
                              const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<FullyConnectedActParam>();
  const bool relu = p.act_type == internal::ActType::kRelu;
  FullyConnectedForward(ctx, p.num_hidden, p.no_bias, relu, p.bf16, in, out[0]);
  if (!p.act_type) return;
  if (out[0].dtype == DType::kFloat64) {
    double* y = out[0].ptr<double>();
    internal::ApplyActivation(*p.act_type, y, y, out[0].Size());
    return;
  }
  if (relu) return;
  float* y = out[0].ptr<float>();
  internal::ApplyActivation(*p.act_type, y, y, out[0].Size());
}

template <typename P>
std::vector<std::string> InputNames(const NodeAttrs& attrs) {
  if (attrs.template Param<P>().no_bias) return {"data", "weight"};
  return {"data", "weight", "bias"};
}

// ---- _backward_FullyConnected: inputs (out_grad, data, weight[, bias]), FullyConnected's
// attributes; outputs the gradients of data, weight and bias, of their shapes.

std::vector<std::string> BackwardInputNames(const NodeAttrs& attrs) {
  std::vector<std::string> names = InputNames<FullyConnectedParam>(attrs);
  names.insert(names.begin(), "out_grad");
  return names;
}

// The forward's shape inference over (data, weight[, bias]) -> out_grad: each gradient has its
// input's shape.
bool FullyConnectedBackwardShape(const NodeAttrs& attrs, std::vector<Shape>* in,
                                 std::vector<Shape>* out) {
  return internal::BackwardShape(FullyConnectedShape<FullyConnectedParam>, attrs, in, out);
}

// The products of the gradient, each skipped when its output is null: float32 on the dense
// layer's kernels (kernels/dense.h), float64 on plain BLAS.
void ProductGradients(const float* dy, const float* x, const float* w, float* dx, float* dw,
                      int64_t batch, int64_t hidden, int64_t k) {
  internal::RunDenseBackward(dy, x, w, dx, dw, batch, hidden, k);
}
void ProductGradients(const double* dy, const double* x, const double* w, double* dx, double* dw,
                      int64_t batch, int64_t hidden, int64_t k) {
  if (dx != nullptr)
    internal::Gemm(false, false, batch, k, hidden, 1.0, dy, hidden, w, k, 0.0, dx, k);
  if (dw != nullptr)
    internal::Gemm(true, false, hidden, k, batch, 1.0, dy, hidden, x, k, 0.0, dw, k);
}

// sums[h] += the column h of dy (rows of `width` columns, `stride` apart), row after row. Always
// inlined, so that it compiles for the ISA of its caller: each column's sum keeps its order, and
// so its bits, in ColumnSumsAvx512 and ColumnSumsAvx2, which add 8 and 4 columns at once where
// the baseline build adds 2.
template <typename T>
__attribute__((always_inline)) inline void ColumnSums(const T* dy, int64_t rows, int64_t stride,
                                                      int64_t width, double* sums) {
  for (int64_t n = 0; n < rows; ++n) {
    for (int64_t h = 0; h < width; ++h) sums[h] += dy[n * stride + h];
  }
}
template <typename T>
HN_AVX512 void ColumnSumsAvx512(const T* dy, int64_t rows, int64_t stride, int64_t width,
                                double* sums) {
  ColumnSums(dy, rows, stride, width, sums);
}
template <typename T>
HN_AVX2 void ColumnSumsAvx2(const T* dy, int64_t rows, int64_t stride, int64_t width,
                            double* sums) {
  ColumnSums(dy, rows, stride, width, sums);
}

// Columns a task of the bias gradient sums; blocks of columns split between the kernel threads
// (each column summed by one, in its order) where dy has at least kSplitColumnSums elements.
constexpr int64_t kColumnBlock = 512;
constexpr int64_t kSplitColumnSums = int64_t{1} << 16;

// data (N, K), weight (H, K), out_grad (N, H): d data = out_grad . weight, d weight =
// out_grad^T . data, d bias = the column sums of out_grad (in double, row by row). A gradient
// nobody reads (the data's, when the data is an input without one) is not computed, as MXNet
// skips the outputs its kNullOp requests.
template <typename T>
void FullyConnectedBackward(const NodeAttrs& attrs, const std::vector<TBlob>& in,
                            const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<FullyConnectedParam>();
  const int64_t hidden = p.num_hidden;
  const int64_t k = in[2].shape[1];
  const int64_t batch = k == 0 ? 0 : in[1].Size() / k;
  const T* dy = in[0].ptr<const T>();
  T* dw = internal::GradientOutputUnread(attrs, 1) ? nullptr : out[1].ptr<T>();
  if (batch == 0 || k == 0) {
    if (dw != nullptr) std::fill(dw, dw + out[1].Size(), T(0));
  } else {
    T* dx = internal::GradientOutputUnread(attrs, 0) ? nullptr : out[0].ptr<T>();
    ProductGradients(dy, in[1].ptr<const T>(), in[2].ptr<const T>(), dx, dw, batch, hidden, k);
  }
  if (p.no_bias || internal::GradientOutputUnread(attrs, 2)) return;
  std::vector<double> sums(static_cast<size_t>(hidden), 0.0);
  const internal::VectorIsa isa = std::is_same<T, float>::value ? internal::ChooseVectorIsa()
                                                                 : internal::VectorIsa::kBaseline;
  // On one thread, one block: whole rows stream from memory in order.
  const bool split = batch * hidden >= kSplitColumnSums && internal::KernelThreads() > 1;
  const int64_t block_width = split ? kColumnBlock : std::max<int64_t>(hidden, 1);
  const int64_t blocks = (hidden + block_width - 1) / block_width;
  internal::ParallelFor(blocks, split, [&](int64_t block) {
    const int64_t first = block * block_width;
    const int64_t width = std::min(block_width, hidden - first);
    if (isa == internal::VectorIsa::kAvx512) {
      ColumnSumsAvx512(dy + first, batch, hidden, width, sums.data() + first);
    } else if (isa == internal::VectorIsa::kAvx2) {
      ColumnSumsAvx2(dy + first, batch, hidden, width, sums.data() + first);
    } else {
      ColumnSums(dy + first, batch, hidden, width, sums.data() + first);
    }
  });
  T* db = out[2].ptr<T>();
  for (int64_t h = 0; h < hidden; ++h) db[h] = static_cast<T>(sums[static_cast<size_t>(h)]);
}

void FullyConnectedBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                                   const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  if (in[0].dtype == DType::kFloat64) {
    FullyConnectedBackward<double>(attrs, in, out);
  } else {
    FullyConnectedBackward<float>(attrs, in, out);
  }
}

// The gradients of node n's inputs (data, weight[, bias]) from the gradient of its product,
// d_product: one _backward_FullyConnected of FullyConnected's attributes `dict`.
std::vector<NodeEntry> ProductGradientNodes(const internal::GradientBuilder& g,
                                            const std::shared_ptr<Node>& n,
                                            const NodeEntry& d_product, const AttrDict& dict) {
  std::vector<NodeEntry> inputs{d_product};
  inputs.insert(inputs.end(), n->inputs.begin(), n->inputs.end());
  std::shared_ptr<Node> backward = g.MakeNode("_backward_FullyConnected", std::move(inputs), dict);
  std::vector<NodeEntry> grads;
  for (uint32_t i = 0; i < n->inputs.size(); ++i) grads.push_back(NodeEntry{backward, i, 0});
  return grads;
}

std::vector<NodeEntry> FullyConnectedGradient(const std::shared_ptr<Node>& n,
                                              const std::vector<NodeEntry>& dy) {
  internal::GradientBuilder g(n, dy);
  return ProductGradientNodes(g, n, g.out_grad(0), g.attrs().dict);
}

// The gradient of FullyConnected + Activation, as the two ops' gradients make it (so a fused
// training graph gives the unfused one's bits): the activation's from the fused output, then the
// product's. softsign's derivative reads the product, which the fused op does not show (training
// graphs do not fuse it), and a bfloat16 product has no gradient here.
std::vector<NodeEntry> FullyConnectedActGradient(const std::shared_ptr<Node>& n,
                                                 const std::vector<NodeEntry>& dy) {
  internal::GradientBuilder g(n, dy);
  const auto& p = g.attrs().Param<FullyConnectedActParam>();
  HN_CHECK(!p.bf16, kUnsupported)
      << g.attrs().name << ": _hn_fully_connected_act with a bfloat16 product has no gradient";
  HN_CHECK(!p.act_type || !internal::ActivationGradientReadsInput(*p.act_type), kUnsupported)
      << g.attrs().name
      << ": _hn_fully_connected_act with softsign has no gradient (softsign's derivative reads "
         "the product, which the fused op does not keep); run FullyConnected and Activation";
  const NodeEntry d_product =
      p.act_type ? internal::ActivationInputGradient(g, *p.act_type, g.out_grad(0))
                 : g.out_grad(0);
  AttrDict dict = g.attrs().dict;
  dict.erase("act_type");
  return ProductGradientNodes(g, n, d_product, dict);
}

// The gradient of _backward_FullyConnected (second order), with FullyConnected and itself. Its
// outputs are dx = dy . W, dw = dy^T . x and db = the column sums of dy; from their gradients
// gdx, gdw, gdb:
//   d dy = gdx . W^T + x . gdw^T + gdb   (two FullyConnected, the second with gdb as bias)
//   d x  = dy . gdw                      (the data gradient of backward(dy, x, gdw))
//   d W  = dy^T . gdx                    (the weight gradient of backward(dy, gdx, W))
//   d b  = 0                             (the bias is read for its shape only)
std::vector<NodeEntry> FullyConnectedBackwardGradient(const std::shared_ptr<Node>& n,
                                                      const std::vector<NodeEntry>& grads) {
  internal::GradientBuilder g(n, grads);
  const bool no_bias = g.attrs().Param<FullyConnectedParam>().no_bias;
  // The new nodes read every output they make: not this node's list of unread ones.
  AttrDict attrs = g.attrs().dict;
  attrs.erase(internal::kUnreadOutputsAttr);
  AttrDict without_bias = attrs;
  without_bias["no_bias"] = "True";
  const NodeEntry &dy = g.in(0), &x = g.in(1), &w = g.in(2);
  const NodeEntry through_data = g.Op("FullyConnected", {g.out_grad(0), w}, without_bias);
  const NodeEntry through_weight =
      no_bias ? g.Op("FullyConnected", {x, g.out_grad(1)}, without_bias)
              : g.Op("FullyConnected", {x, g.out_grad(1), g.out_grad(2)}, attrs);
  auto backward = [&](const NodeEntry& data, const NodeEntry& weight) {
    std::vector<NodeEntry> inputs{dy, data, weight};
    if (!no_bias) inputs.push_back(g.in(3));
    return g.MakeNode("_backward_FullyConnected", std::move(inputs), attrs);
  };
  std::vector<NodeEntry> result{g.Add(through_data, through_weight),
                                NodeEntry{backward(x, g.out_grad(1)), 0, 0},
                                NodeEntry{backward(g.out_grad(0), w), 1, 0}};
  if (!no_bias) result.push_back(g.ZerosLike(g.in(3)));
  return result;
}

// flatten=True: Gemm over the input flattened to (N, -1); flatten=False: MatMul over the last
// axis. A (num_hidden, 1) bias is flattened to broadcast along the rows.
void FullyConnectedOnnx(OnnxNodeContext* ctx) {
  const FullyConnectedParam& p = ctx->param<FullyConnectedParam>();
  const OnnxValue& x = ctx->in(0);
  std::string bias;
  if (!p.no_bias) {
    bias = ctx->in(2).name;
    if (ctx->in(2).shape.ndim() == 2) bias = ctx->Add("Flatten", {bias}, {{"axis", 0}});
  }
  if (p.flatten || x.shape.ndim() == 2) {
    std::string rows = x.shape.ndim() == 2 ? x.name : ctx->Add("Flatten", {x.name}, {{"axis", 1}});
    std::vector<std::string> inputs{rows, ctx->in(1).name};
    if (!p.no_bias) inputs.push_back(bias);
    ctx->Add("Gemm", inputs, {{"transB", 1}}, ctx->out(0).name);
    return;
  }
  std::string wt = ctx->Add("Transpose", {ctx->in(1).name}, {{"perm", std::vector<int64_t>{1, 0}}});
  if (p.no_bias) {
    ctx->Add("MatMul", {x.name, wt}, {}, ctx->out(0).name);
  } else {
    ctx->Add("Add", {ctx->Add("MatMul", {x.name, wt}), bias}, {}, ctx->out(0).name);
  }
}

}  // namespace

void RegisterFullyConnectedOps(OpRegistry* r) {
  r->Register("FullyConnected")
      .Describe(
          "Applies a linear transformation: y = x . W^T + b. With flatten=True the input "
          "(N, ...) is viewed as (N, prod(...)); otherwise the last axis is transformed.")
      .SetParam<FullyConnectedParam>()
      .SetInputNames(InputNames<FullyConnectedParam>)
      .SetInferShape(FullyConnectedShape<FullyConnectedParam>)
      .SetInferType(internal::RealType)
      .SetCompute(FullyConnectedCompute)
      .SetOnnx({"Gemm", "Flatten", "MatMul", "Transpose", "Add"}, FullyConnectedOnnx)
      .SetGradient(FullyConnectedGradient);

  r->Register("_backward_FullyConnected")
      .Describe(
          "The gradient of FullyConnected: d data = out_grad . W, d weight = out_grad^T . "
          "data, d bias = the sum of out_grad over the rows.")
      .SetParam<FullyConnectedParam>()
      .SetInputNames(BackwardInputNames)
      .SetNumOutputs([](const NodeAttrs& attrs) {
        return attrs.Param<FullyConnectedParam>().no_bias ? 2u : 3u;
      })
      .SetInferShape(FullyConnectedBackwardShape)
      .SetInferType(internal::RealType)
      .SetCompute(FullyConnectedBackwardCompute)
      .SetGradient(FullyConnectedBackwardGradient)
      .SetInternal();

  r->Register("_hn_fully_connected_act")
      .Describe(
          "FullyConnected followed by Activation(act_type), fused by the graph optimizer; "
          "bit-identical to the two ops run one after the other (unless its product is in "
          "bfloat16, as MXNet AMP's bfloat16 FullyConnected).")
      .SetParam<FullyConnectedActParam>()
      .SetInputNames(InputNames<FullyConnectedActParam>)
      .SetInferShape(FullyConnectedShape<FullyConnectedActParam>)
      .SetInferType(internal::RealType)
      .SetCompute(FullyConnectedActCompute)
      .SetGradient(FullyConnectedActGradient)
      .SetInternal();
}

namespace internal {

NodeAttrs BFloat16FullyConnectedAttrs(const NodeAttrs& dense) {
  static const Op& fused = OpRegistry::Global().Get("_hn_fully_connected_act");
  NodeAttrs attrs = MakeNodeAttrs(fused, dense.name, dense.dict);
  auto p = std::make_shared<FullyConnectedActParam>(attrs.Param<FullyConnectedActParam>());
  p->bf16 = true;
  attrs.parsed = std::move(p);
  return attrs;
}

}  // namespace internal

}  // namespace hybridnet
