// The product of quantized dense layers on oneDNN's int8 inner product: u8 or s8 rows (rows x k)
// by s8 weights (hidden x k, MXNet's layout) plus an s32 bias, accumulated in s32, then scaled
// (one scale or one per output channel), passed through an elementwise post-op and written as
// s32, s8, u8 or f32, all inside the primitive. Primitives are kept per call, and weights
// re-laid-out once into the primitive's blocked format and kept with the weight array.
#pragma once

#include <cstdint>
#include <vector>

#include "hybridnet/dtype.h"
#include "kernels/int8_eltwise.h"

namespace hybridnet {
class NDArray;
namespace internal {
class Workspace;

struct Int8DenseSpec {
  int64_t rows = 0, hidden = 0, k = 0;
  DType src = DType::kInt8;   ///< kInt8 or kUint8
  DType dst = DType::kInt32;  ///< kInt32, kInt8, kUint8 or kFloat32
  bool has_bias = false;      ///< an s32 bias of `hidden` values
  /// Multiply each sum (bias included): none when empty, else one for all or one per output.
  std::vector<float> output_scales;
  Int8Eltwise eltwise;
};

/// y = eltwise(output_scales * (x . w^T + b)) as spec.dst, rounded to nearest even and saturated
/// for integer outputs. `weight_array` is the int8 array behind w, or null: the packed weights
/// are kept with it. `workspace` is the caller's scratch.
void RunInt8Dense(const Int8DenseSpec& spec, const void* x, const int8_t* w, const int32_t* b,
                  void* y, const NDArray* weight_array, Workspace* workspace);

}  // namespace internal
}  // namespace hybridnet
