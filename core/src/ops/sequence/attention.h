// The interleaved self-attention products of ops/sequence/attention.cc, for the ops that stand
// for them with their own attributes (the oneDNN subgraph forms of
// ops/quantization/quantized_attention.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "hybridnet/op.h"

namespace hybridnet {
namespace internal {

/// _contrib_interleaved_matmul_selfatt_qk's shape inference with `heads` heads: input 0 is the
/// (T, N, 3 * H * D) projection, output 0 the (N * H, T, T) scores.
bool SelfAttQKShape(const NodeAttrs& attrs, int64_t heads, std::vector<Shape>* in,
                    std::vector<Shape>* out);

/// _contrib_interleaved_matmul_selfatt_valatt's shape inference with `heads` heads: inputs the
/// (T, N, 3 * H * D) projection and the (N * H, T, T) attention, output 0 (T, N, H * D).
bool SelfAttValAttShape(const NodeAttrs& attrs, int64_t heads, std::vector<Shape>* in,
                        std::vector<Shape>* out);

/// The float32 scores q . k^T / sqrt(D) of a float32 projection `qkv` into `out`.
void SelfAttQKFloat(const TBlob& qkv, int64_t heads, const TBlob& out);

/// The float32 attention `att` applied to the values of a float32 projection `qkv`, into `out`.
void SelfAttValAttFloat(const TBlob& qkv, const TBlob& att, int64_t heads, const TBlob& out);

}  // namespace internal
}  // namespace hybridnet
