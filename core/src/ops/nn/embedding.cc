// Embedding (MXNet src/operator/tensor/indexing_op.{h,cc}): looks up rows of weight
// (input_dim, output_dim) by the indices in data; out = data.shape + (output_dim,).
// Indices are truncated toward zero and clipped into [0, input_dim - 1], as MXNet's CPU kernel
// does (-1 reads row 0, 3.7 reads row 3). data may have any dtype; weight and output have
// `dtype`. _contrib_SparseEmbedding is the same lookup (its weight is dense here).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "hybridnet/op.h"
#include "onnx/onnx_convert.h"
#include "ops/gradient_util.h"
#include "ops/nn/embedding_param.h"
#include "ops/register_ops.h"

namespace hybridnet {

namespace internal {

bool EmbeddingShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const EmbeddingParam& p = attrs.Param<EmbeddingParam>();
  Shape w = (*in)[1];
  HN_CHECK(MergeShape(Shape{p.input_dim, p.output_dim}, &w), kShapeError)
      << DescribeNode(attrs) << ": weight has shape " << (*in)[1]
      << " but input_dim=" << p.input_dim << ", output_dim=" << p.output_dim << " need ("
      << p.input_dim << ", " << p.output_dim << ")";
  (*in)[1] = w;
  const Shape& data = (*in)[0];
  if (data.ndim() == 0) return false;
  std::vector<int64_t> dims(data.begin(), data.end());
  dims.push_back(p.output_dim);
  Shape merged = (*out)[0];
  HN_CHECK(MergeShape(Shape(dims), &merged), kShapeError)
      << DescribeNode(attrs) << ": output shape " << (*out)[0] << " does not match " << Shape(dims);
  (*out)[0] = merged;
  return data.IsKnown() && (*out)[0].IsKnown();
}

namespace {

template <typename T>
int64_t RowOf(const void* data, int64_t i, int64_t rows) {
  const double v = static_cast<double>(static_cast<const T*>(data)[i]);
  if (!(v > 0)) return 0;  // negative and NaN read row 0
  const double t = std::trunc(v);
  return t >= static_cast<double>(rows - 1) ? rows - 1 : static_cast<int64_t>(t);
}

// The row index i of idx reads (RowOf for its dtype).
int64_t RowAt(const TBlob& idx, int64_t i, int64_t rows) {
  switch (idx.dtype) {
    case DType::kFloat32:
      return RowOf<float>(idx.data, i, rows);
    case DType::kFloat64:
      return RowOf<double>(idx.data, i, rows);
    case DType::kInt32:
      return RowOf<int32_t>(idx.data, i, rows);
    case DType::kInt64:
      return RowOf<int64_t>(idx.data, i, rows);
    case DType::kUint8:
      return RowOf<uint8_t>(idx.data, i, rows);
    case DType::kInt8:
      return RowOf<int8_t>(idx.data, i, rows);
    default: {
      // Other dtypes: convert one element to double.
      double v = 0;
      ConvertElements(static_cast<const uint8_t*>(idx.data) + i * DTypeSize(idx.dtype), idx.dtype,
                      &v, DType::kFloat64, 1);
      return RowOf<double>(&v, 0, rows);
    }
  }
}

}  // namespace

void EmbeddingCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                      const std::vector<TBlob>& out) {
  const EmbeddingParam& p = attrs.Param<EmbeddingParam>();
  const TBlob& idx = in[0];
  const auto* w = static_cast<const uint8_t*>(in[1].data);
  auto* y = static_cast<uint8_t*>(out[0].data);
  const size_t row_bytes = static_cast<size_t>(p.output_dim) * DTypeSize(out[0].dtype);
  const int64_t n = idx.Size(), rows = p.input_dim;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t row = RowAt(idx, i, rows);
    std::memcpy(y + static_cast<size_t>(i) * row_bytes, w + static_cast<size_t>(row) * row_bytes,
                row_bytes);
  }
}

}  // namespace internal

namespace {

using internal::EmbeddingCompute;
using internal::EmbeddingParam;
using internal::EmbeddingShape;
using internal::RowAt;

// weight and output have the dtype the attribute names (lookups copy bytes, so every dtype
// MXNet lists works); indices may have any dtype.
bool EmbeddingType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const DType dtype = attrs.Param<EmbeddingParam>().dtype;
  HN_CHECK(dtype != DType::kBool && dtype != DType::kUnknown, kUnsupported)
      << DescribeNode(attrs) << ": dtype " << DTypeName(dtype) << " is not supported";
  HN_CHECK((*in)[1] == DType::kUnknown || (*in)[1] == dtype, kTypeError)
      << DescribeNode(attrs) << ": weight has dtype " << DTypeName((*in)[1])
      << " but dtype=" << DTypeName(dtype);
  (*in)[1] = dtype;
  HN_CHECK((*out)[0] == DType::kUnknown || (*out)[0] == dtype, kTypeError)
      << DescribeNode(attrs) << ": output dtype " << DTypeName((*out)[0])
      << " is not dtype=" << DTypeName(dtype);
  (*out)[0] = dtype;
  HN_CHECK((*in)[0] != DType::kBool, kTypeError)
      << DescribeNode(attrs) << ": data (indices) has dtype bool";
  return (*in)[0] != DType::kUnknown;
}


// ---------------------------------------------------------------------------------------------
// Gradient: the weight's is the output gradient's rows added into the rows they were read from
// (MXNet's dense AddTakeGrad, clipping likewise); the indices get zeros.

// (out_grad, data) -> d weight (input_dim, output_dim).
bool EmbeddingBackwardShape(const NodeAttrs& attrs, std::vector<Shape>* in,
                            std::vector<Shape>* out) {
  const EmbeddingParam& p = attrs.Param<EmbeddingParam>();
  std::vector<Shape> forward_in{(*in)[1], (*out)[0]};
  std::vector<Shape> forward_out{(*in)[0]};
  const bool known = EmbeddingShape(attrs, &forward_in, &forward_out);
  (*in)[1] = forward_in[0];
  (*out)[0] = Shape{p.input_dim, p.output_dim};
  (*in)[0] = forward_out[0];
  return known;
}

bool EmbeddingBackwardType(const NodeAttrs& attrs, std::vector<DType>* in,
                           std::vector<DType>* out) {
  const DType dtype = attrs.Param<EmbeddingParam>().dtype;
  HN_CHECK(dtype == DType::kFloat32 || dtype == DType::kFloat64, kUnsupported)
      << DescribeNode(attrs) << ": the gradient of a " << DTypeName(dtype)
      << " embedding is not supported (float32 and float64 are)";
  std::vector<DType> forward_in{(*in)[1], (*out)[0]};
  std::vector<DType> forward_out{(*in)[0]};
  const bool known = EmbeddingType(attrs, &forward_in, &forward_out);
  (*in)[1] = forward_in[0];
  (*out)[0] = forward_in[1];
  (*in)[0] = forward_out[0];
  return known;
}

template <typename T>
void AddRows(const TBlob& dy, const TBlob& idx, const EmbeddingParam& p, T* dw) {
  const T* g = dy.ptr<const T>();
  const int64_t cols = p.output_dim;
  std::fill(dw, dw + p.input_dim * cols, T(0));
  for (int64_t i = 0; i < idx.Size(); ++i) {
    T* row = dw + RowAt(idx, i, p.input_dim) * cols;
    const T* src = g + i * cols;
    for (int64_t c = 0; c < cols; ++c) row[c] += src[c];
  }
}

void EmbeddingBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                              const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const EmbeddingParam& p = attrs.Param<EmbeddingParam>();
  if (out[0].dtype == DType::kFloat64) {
    AddRows(in[0], in[1], p, out[0].ptr<double>());
  } else {
    AddRows(in[0], in[1], p, out[0].ptr<float>());
  }
}

std::vector<NodeEntry> EmbeddingGradient(const std::shared_ptr<Node>& n,
                                         const std::vector<NodeEntry>& dy) {
  internal::GradientBuilder g(n, dy);
  return {g.ZerosLike(g.in(0)),
          g.Op("_backward_Embedding", {g.out_grad(0), g.in(0)}, g.attrs().dict)};
}

// Gather of the rows RowOf picks: clipped into [0, input_dim - 1], truncated toward zero (a
// float index is clipped first, as truncation and clipping commute there).
void EmbeddingOnnx(OnnxNodeContext* ctx) {
  const EmbeddingParam& p = ctx->param<EmbeddingParam>();
  const OnnxValue& data = ctx->in(0);
  const bool floating = data.dtype == DType::kFloat32 || data.dtype == DType::kFloat64 ||
                        data.dtype == DType::kFloat16 || data.dtype == DType::kBFloat16;
  const double last = static_cast<double>(p.input_dim - 1);
  std::string rows;
  if (floating) {
    std::string clipped =
        ctx->Add("Clip", {data.name, ctx->Scalar(0.0, data.dtype), ctx->Scalar(last, data.dtype)});
    rows = ctx->Cast(clipped, DType::kInt64);
  } else {
    rows = ctx->Add("Clip", {ctx->Cast(data.name, DType::kInt64), ctx->Scalar(0.0, DType::kInt64),
                             ctx->Scalar(last, DType::kInt64)});
  }
  ctx->Add("Gather", {ctx->in(1).name, rows}, {{"axis", int64_t{0}}}, ctx->out(0).name);
}

}  // namespace

void RegisterEmbeddingOps(OpRegistry* r) {
  r->Register("Embedding")
      .Describe(
          "Maps integer indices to vector representations: out[..., :] = "
          "weight[clip(int(data[...]), 0, input_dim - 1), :]. Output shape is "
          "data.shape + (output_dim,).")
      .SetParam<EmbeddingParam>()
      .SetInputNames({"data", "weight"})
      .SetInferShape(EmbeddingShape)
      .SetInferType(EmbeddingType)
      .SetCompute(EmbeddingCompute)
      .SetOnnx({"Clip", "Cast", "Gather"}, EmbeddingOnnx)
      .SetGradient(EmbeddingGradient);

  r->Register("_backward_Embedding")
      .Describe(
          "The gradient of Embedding's weight: out_grad's rows added into the rows data "
          "read.")
      .SetParam<EmbeddingParam>()
      .SetInputNames({"out_grad", "data"})
      .SetInferShape(EmbeddingBackwardShape)
      .SetInferType(EmbeddingBackwardType)
      .SetCompute(EmbeddingBackwardCompute)
      .SetInternal();

  r->Register("_contrib_SparseEmbedding")
      .Describe(
          "Embedding whose gradient MXNet keeps row_sparse; the forward is Embedding's: "
          "out[..., :] = weight[clip(int(data[...]), 0, input_dim - 1), :].")
      .SetParam<EmbeddingParam>()
      .SetInputNames({"data", "weight"})
      .SetInferShape(EmbeddingShape)
      .SetInferType(EmbeddingType)
      .SetCompute(EmbeddingCompute)
      .SetOnnx({"Clip", "Cast", "Gather"}, EmbeddingOnnx)
      .SetGradient(EmbeddingGradient);
}

}  // namespace hybridnet
