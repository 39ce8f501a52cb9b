// Int8 convolutions on oneDNN primitives: uint8 or int8 data by int8 weights, accumulated in
// int32, then oneDNN's output scales (one, or one per output channel), an eltwise post-op, a sum
// of the output's previous values (a residual) and a second eltwise post-op, rounded to int8,
// uint8, int32 or float. The int8 convolutions of MXNet 1.9.1 (_contrib_quantized_conv and the
// quantized _sg_mkldnn_conv) run on these primitives too, so asking for the same scales gives
// MXNet's integers.
//
// The primitive's data and output are channel-last; a channel-first caller (ConvSpec.channel_last
// 0) gets them re-laid-out around it. Primitives are kept per call (geometry, types, scales,
// post-ops) and thread count; the weights, quantized (float weights, by their scales) and
// re-laid-out once into the primitive's blocked layout, and the int32 bias are kept with the
// weight array under the caller's key.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hybridnet/dtype.h"
#include "hybridnet/ndarray.h"
#include "kernels/convolution_spec.h"
#include "kernels/int8_eltwise.h"
#include "kernels/workspace.h"

namespace hybridnet {
namespace internal {

/// One int8 convolution call. `geometry` gives the shapes and the caller's layout (its bias,
/// residual and relu fields are unused: `bias`, `sum` and the eltwise ops below say them).
struct Int8ConvCall {
  ConvSpec geometry;
  DType data = DType::kUint8;  ///< kUint8 or kInt8
  DType out = DType::kInt32;   ///< kInt8, kUint8, kInt32 or kFloat32
  /// Output scales (oneDNN's: applied to the int32 sums plus bias): empty (none), one, or one per
  /// output channel.
  std::vector<float> output_scales;
  Int8Eltwise act;
  /// Adds sum_scale times the residual (of type sum_type: the output's, or int8 or uint8) after
  /// `act`.
  bool sum = false;
  DType sum_type = DType::kInt8;
  float sum_scale = 1.f;
  Int8Eltwise postsum_act;
};

/// What the primitive's weights and bias are made from, once per `key`.
struct Int8ConvWeights {
  /// Float weights (MXNet's layout (F, C/G, k...)) quantized to int8 by `weight_scales` (one, or
  /// one per output channel) with oneDNN's rounding, as MXNet quantizes them, made only when the
  /// weights are packed (BatchNorm folded in, say); or int8 weights as they are.
  std::function<const float*()> weight;
  std::vector<float> weight_scales;
  const int8_t* weight_s8 = nullptr;
  /// A float bias (F), quantized to int32 by `bias_scales` (one, or one per output channel), or
  /// null.
  const float* bias = nullptr;
  std::vector<float> bias_scales;
  /// The array the packed weights are kept with (null: packed for this call alone), and what
  /// they depend on besides the layout (scales, BatchNorm versions), as text.
  const NDArray* keep_with = nullptr;
  std::string key;
};

struct Int8ConvArgs {
  const void* data = nullptr;
  const void* residual = nullptr;  ///< with `sum`: the values to add, in the output's layout
  void* out = nullptr;
  Workspace* workspace = nullptr;
};

/// Runs call `c`. Throws kUnsupported naming the call when oneDNN has no int8 kernel for it.
void RunInt8Convolution(const Int8ConvCall& c, const Int8ConvWeights& w, const Int8ConvArgs& a);

/// Call `c`'s primitive (for the thread count in use) and packed weights, looked up or made once:
/// a caller that keeps it runs the call again without building its keys and looking them up.
struct Int8ConvPrepared;
std::shared_ptr<const Int8ConvPrepared> PrepareInt8Convolution(const Int8ConvCall& c,
                                                               const Int8ConvWeights& w,
                                                               Workspace* workspace);
/// Runs a prepared call on the thread count it was prepared for.
void RunInt8Convolution(const Int8ConvPrepared& p, const Int8ConvArgs& a);

/// Float weights (MXNet's layout (F, C/G, k...)) quantized to int8 in that layout by `scales`
/// (one, or one per output channel), as Int8ConvWeights.weight is quantized when packed: the
/// same integers, kept in a file that stores the weights quantized.
void QuantizeInt8ConvWeights(const ConvSpec& geometry, const float* weight,
                             const std::vector<float>& scales, int8_t* out, Workspace* workspace);

/// The oneDNN implementation an int8 call runs on ("jit_int8:avx512_core_vnni"), for benches
/// and tests.
std::string Int8ConvolutionImplementation(const Int8ConvCall& c);

}  // namespace internal
}  // namespace hybridnet
