// Embedding's attributes, shapes and lookup, shared by Embedding and _contrib_quantized_embedding
// (which takes MXNet's Embedding attributes and looks up int8 rows the same way).
#pragma once

#include <cstdint>
#include <vector>

#include "hybridnet/op.h"

namespace hybridnet {
namespace internal {

struct EmbeddingParam {
  int64_t input_dim = 0;
  int64_t output_dim = 0;
  DType dtype = DType::kFloat32;
  bool sparse_grad = false;
  static void Declare(ParamDeclarer<EmbeddingParam>* d) {
    d->Field("input_dim", &EmbeddingParam::input_dim)
        .Required()
        .Min(1)
        .Describe("Vocabulary size of the input indices.");
    d->Field("output_dim", &EmbeddingParam::output_dim)
        .Required()
        .Min(1)
        .Describe("Dimension of the embedding vectors.");
    d->Field("dtype", &EmbeddingParam::dtype)
        .Default(DType::kFloat32)
        .Describe("Data type of weight and output.");
    d->Field("sparse_grad", &EmbeddingParam::sparse_grad)
        .Default(false)
        .Describe(
            "Compute row_sparse gradient in the backward calculation. Accepted and "
            "ignored: the gradient is dense.");
  }
};

/// Embedding's shapes: weight (input_dim, output_dim), output data.shape + (output_dim,).
bool EmbeddingShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out);

/// The rows of weight (input 1) the indices of data (input 0) name, truncated toward zero and
/// clipped into [0, input_dim - 1], copied into output 0 as bytes of its dtype.
void EmbeddingCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                      const std::vector<TBlob>& out);

}  // namespace internal
}  // namespace hybridnet
