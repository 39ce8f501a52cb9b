// dot (MXNet src/operator/tensor/dot-inl.h): contracts the last axis of lhs with the first axis
// of rhs (after the optional transposes), through Gemm (blas.h).
//
// An N-D lhs is viewed as a matrix (prod(shape[:-1]), shape[-1]), or with transpose_a as
// (shape[0], prod(shape[1:])) transposed; rhs likewise as (shape[0], prod(shape[1:])) or, with
// transpose_b, (prod(shape[:-1]), shape[-1]) transposed. The output keeps lhs's free dims
// followed by rhs's free dims; 1-D . 1-D gives shape (1,).
#include <cblas.h>

#include <optional>
#include <string>

#include "hybridnet/op.h"
#include "kernels/blas.h"
#include "onnx/onnx_convert.h"
#include "ops/gradient_util.h"
#include "ops/register_ops.h"

namespace hybridnet {

namespace {

enum class StorageType { kCsr, kDefault, kRowSparse };

struct DotParam {
  bool transpose_a = false;
  bool transpose_b = false;
  std::optional<StorageType> forward_stype;
  static void Declare(ParamDeclarer<DotParam>* d) {
    d->Field("transpose_a", &DotParam::transpose_a)
        .Default(false)
        .Describe("If true then transpose the first input before dot.");
    d->Field("transpose_b", &DotParam::transpose_b)
        .Default(false)
        .Describe("If true then transpose the second input before dot.");
    d->Field("forward_stype", &DotParam::forward_stype,
             {{"csr", StorageType::kCsr},
              {"default", StorageType::kDefault},
              {"row_sparse", StorageType::kRowSparse}})
        .Default(std::nullopt)
        .Describe("The desired storage type of the forward output (ignored: dense only).");
  }
};

// The matrix views of lhs/rhs: (rows, cols) of the stored layout, and which dims are free.
struct MatrixView {
  int64_t rows = 0, cols = 0;
  std::vector<int64_t> free_dims;  // dims that appear in the output
};

int64_t Product(const Shape& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= s[i];
  return p;
}

// `leading_free`: the free dims are the leading ones (lhs without transpose, rhs with).
MatrixView ViewOf(const Shape& s, bool leading_free) {
  MatrixView v;
  const size_t n = s.ndim();
  if (leading_free) {
    v.rows = Product(s, 0, n - 1);
    v.cols = s[n - 1];
    if (n > 1) v.free_dims.assign(s.begin(), s.end() - 1);
  } else {
    v.rows = s[0];
    v.cols = Product(s, 1, n);
    if (n > 1) v.free_dims.assign(s.begin() + 1, s.end());
  }
  return v;
}

bool DotShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const DotParam& p = attrs.Param<DotParam>();
  const Shape& lhs = (*in)[0];
  const Shape& rhs = (*in)[1];
  if (lhs.ndim() == 0 || rhs.ndim() == 0) return false;
  Shape oshape;
  if (lhs.ndim() == 1 && rhs.ndim() == 1) {
    HN_CHECK(!p.transpose_a && !p.transpose_b, kShapeError)
        << DescribeNode(attrs) << ": cannot transpose 1-D vectors";
    HN_CHECK(lhs[0] == 0 || rhs[0] == 0 || lhs[0] == rhs[0], kShapeError)
        << DescribeNode(attrs) << ": dot shape error: " << lhs << " X " << rhs;
    oshape = Shape{1};
  } else {
    // lhs: free dims lead unless transposed; the contracted size is the other side.
    MatrixView l = ViewOf(lhs, !p.transpose_a);
    MatrixView r = ViewOf(rhs, p.transpose_b);
    const int64_t lk = p.transpose_a ? l.rows : l.cols;
    const int64_t rk = p.transpose_b ? r.cols : r.rows;
    HN_CHECK(lk == 0 || rk == 0 || lk == rk, kShapeError)
        << DescribeNode(attrs) << ": dot shape error: " << lhs << " X " << rhs
        << (p.transpose_a ? " (transpose_a)" : "") << (p.transpose_b ? " (transpose_b)" : "")
        << ": contracted sizes " << lk << " and " << rk << " differ";
    std::vector<int64_t> dims = l.free_dims;
    dims.insert(dims.end(), r.free_dims.begin(), r.free_dims.end());
    oshape = Shape(dims);
  }
  Shape merged = (*out)[0];
  HN_CHECK(MergeShape(oshape, &merged), kShapeError)
      << DescribeNode(attrs) << ": output shape " << (*out)[0] << " does not match " << oshape;
  (*out)[0] = merged;
  return lhs.IsKnown() && rhs.IsKnown() && merged.IsKnown();
}

void DotCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                const std::vector<TBlob>& out) {
  const DotParam& p = attrs.Param<DotParam>();
  const float* a = in[0].ptr<const float>();
  const float* b = in[1].ptr<const float>();
  float* c = out[0].ptr<float>();
  if (in[0].shape.ndim() == 1 && in[1].shape.ndim() == 1) {
    c[0] = cblas_sdot(static_cast<blasint>(in[0].Size()), a, 1, b, 1);
    return;
  }
  MatrixView l = ViewOf(in[0].shape, !p.transpose_a);
  MatrixView r = ViewOf(in[1].shape, p.transpose_b);
  const int64_t m = p.transpose_a ? l.cols : l.rows;
  const int64_t k = p.transpose_a ? l.rows : l.cols;
  const int64_t n = p.transpose_b ? r.rows : r.cols;
  internal::Gemm(p.transpose_a, p.transpose_b, m, n, k, 1.f, a, l.cols, b, r.cols, 0.f, c, n);
}

// _backward_dot: (out_grad, lhs, rhs) -> (d lhs, d rhs) on the matrix views above (MXNet's
// DotBackward_): with C = op(A) op(B), d op(A) = dC op(B)^T and d op(B) = op(A)^T dC, each
// written to the stored layout, transposed where op transposes.
bool DotBackwardShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  std::vector<Shape> forward_in{(*in)[1], (*in)[2]};
  std::vector<Shape> forward_out{(*in)[0]};
  for (size_t i = 0; i < 2; ++i) {
    Shape merged = forward_in[i];
    HN_CHECK(MergeShape((*out)[i], &merged), kShapeError)
        << DescribeNode(attrs) << ": gradient " << i << " has shape " << (*out)[i]
        << " but the input has " << forward_in[i];
    forward_in[i] = merged;
  }
  const bool known = DotShape(attrs, &forward_in, &forward_out);
  (*in)[0] = forward_out[0];
  for (size_t i = 0; i < 2; ++i) (*in)[i + 1] = (*out)[i] = forward_in[i];
  return known;
}

void DotBackwardCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                        const std::vector<TBlob>& out) {
  const DotParam& p = attrs.Param<DotParam>();
  const float* dc = in[0].ptr<const float>();
  const float* a = in[1].ptr<const float>();
  const float* b = in[2].ptr<const float>();
  float* da = out[0].ptr<float>();
  float* db = out[1].ptr<float>();
  if (in[1].shape.ndim() == 1 && in[2].shape.ndim() == 1) {
    for (int64_t i = 0; i < in[1].Size(); ++i) {
      da[i] = dc[0] * b[i];
      db[i] = dc[0] * a[i];
    }
    return;
  }
  const bool ta = p.transpose_a, tb = p.transpose_b;
  MatrixView l = ViewOf(in[1].shape, !ta);
  MatrixView r = ViewOf(in[2].shape, tb);
  const int64_t m = ta ? l.cols : l.rows;
  const int64_t k = ta ? l.rows : l.cols;
  const int64_t n = tb ? r.rows : r.cols;
  if (ta) {  // d A (k x m) = op(B) dC^T
    internal::Gemm(tb, true, k, m, n, 1.f, b, r.cols, dc, n, 0.f, da, l.cols);
  } else {  // d A (m x k) = dC op(B)^T
    internal::Gemm(false, !tb, m, k, n, 1.f, dc, n, b, r.cols, 0.f, da, l.cols);
  }
  if (tb) {  // d B (n x k) = dC^T op(A)
    internal::Gemm(true, ta, n, k, m, 1.f, dc, n, a, l.cols, 0.f, db, r.cols);
  } else {  // d B (k x n) = op(A)^T dC
    internal::Gemm(!ta, false, k, n, m, 1.f, a, l.cols, dc, n, 0.f, db, r.cols);
  }
}

std::vector<NodeEntry> DotGradient(const std::shared_ptr<Node>& node,
                                   const std::vector<NodeEntry>& dy) {
  internal::GradientBuilder g(node, dy);
  const std::shared_ptr<Node> grads =
      g.MakeNode("_backward_dot", {g.out_grad(0), g.in(0), g.in(1)}, g.attrs().dict);
  return {NodeEntry{grads, 0, 0}, NodeEntry{grads, 1, 0}};
}

// ONNX MatMul batches N-D operands instead of contracting them, so N-D operands are flattened to
// the matrix views above (Flatten keeps a leading batch axis symbolic) and the product is
// reshaped to the free dims.
void DotOnnx(OnnxNodeContext* ctx) {
  const DotParam& p = ctx->param<DotParam>();
  const OnnxValue& lhs = ctx->in(0);
  const OnnxValue& rhs = ctx->in(1);
  const int64_t ta = p.transpose_a ? 1 : 0, tb = p.transpose_b ? 1 : 0;
  if (lhs.shape.ndim() == 2 && rhs.shape.ndim() == 2) {
    ctx->Add("Gemm", {lhs.name, rhs.name}, {{"transA", ta}, {"transB", tb}}, ctx->out(0).name);
    return;
  }
  if (lhs.shape.ndim() == 1 && rhs.shape.ndim() == 1) {
    ctx->ReshapeToOutput(ctx->Add("MatMul", {lhs.name, rhs.name}), 0);
    return;
  }
  auto matrix = [ctx](const OnnxValue& v, bool leading_free, bool transpose) {
    const int64_t axis = leading_free ? static_cast<int64_t>(v.shape.ndim()) - 1 : 1;
    std::string m = ctx->Add("Flatten", {v.name}, {{"axis", axis}});
    return transpose ? ctx->Add("Transpose", {m}, {{"perm", std::vector<int64_t>{1, 0}}}) : m;
  };
  std::string a = matrix(lhs, !p.transpose_a, p.transpose_a);
  std::string b = matrix(rhs, p.transpose_b, p.transpose_b);
  ctx->ReshapeToOutput(ctx->Add("MatMul", {a, b}), 0);
}

}  // namespace

void RegisterDotOps(OpRegistry* r) {
  r->Register("dot")
      .Describe(
          "Dot product of two arrays: contracts the last axis of lhs with the first axis "
          "of rhs (after the optional transposes); 1-D . 1-D gives a (1,) array.")
      .SetParam<DotParam>()
      .SetInputNames({"lhs", "rhs"})
      .SetInferShape(DotShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(DotCompute)
      .SetOnnx({"Gemm", "MatMul", "Flatten", "Transpose", "Reshape"}, DotOnnx)
      .SetGradient(DotGradient);

  r->Register("_backward_dot")
      .Describe("The gradient of dot: out_grad's products with rhs and lhs.")
      .SetParam<DotParam>()
      .SetInputNames({"out_grad", "lhs", "rhs"})
      .SetNumOutputs(2)
      .SetInferShape(DotBackwardShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(DotBackwardCompute)
      .SetInternal();
}

}  // namespace hybridnet
