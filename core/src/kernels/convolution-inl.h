// What the convolution kernels' adapters share (convolution.cc, onednn_convolution.cc): a call's
// description for messages, its output positions, and data derived from its weights kept with
// the weight array.
#pragma once

#include <memory>
#include <sstream>
#include <string>

#include "kernels/convolution.h"
#include "kernels/epilogue.h"
#include "ndarray/storage.h"

namespace hybridnet {
namespace internal {

inline std::string SpecText(const ConvSpec& s) {
  std::ostringstream os;
  os << (s.deconv ? "Deconvolution" : "Convolution") << " of data (" << s.N << ", " << s.C;
  for (int64_t i = 0; i < s.nd; ++i) os << ", " << s.in[i];
  os << ") into " << s.F << " channels, groups " << s.G;
  return os.str();
}

// Output positions of a call: N times the output's spatial size.
inline int64_t OutputPositions(const ConvSpec& s) {
  int64_t positions = s.N;
  for (int64_t i = 0; i < s.nd; ++i) positions *= s.out[i];
  return positions;
}

inline int64_t Taps(const ConvSpec& s) {
  int64_t taps = 1;
  for (int64_t i = 0; i < s.nd; ++i) taps *= s.kernel[i];
  return taps;
}

// What `make` (returning std::shared_ptr<T>) derives from call `a`'s weights: kept with the
// weight array when the caller has it (DerivedData under `key`), else made for this call.
template <typename T, typename Make>
std::shared_ptr<const T> KeptWithWeights(const ConvArgs& a, const std::string& key,
                                         const Make& make) {
  auto made = [&] { return std::static_pointer_cast<const void>(make()); };
  return std::static_pointer_cast<const T>(a.weight_array ? DerivedData(*a.weight_array, key, made)
                                                          : made());
}

// The epilogue of call (s, a) as its kernel applies it: what the spec enables.
inline Epilogue EpilogueFor(const ConvSpec& s, const ConvArgs& a) {
  Epilogue e = a.epilogue;
  if (!s.bias) e.bias = nullptr;
  if (!s.bn) e.bn_scale = e.bn_shift = nullptr;
  e.relu = s.relu;
  return e;
}

// RunEpilogue's arguments for call (s, a) over `positions` rows of s.F channels of `conv` into
// `out`: the whole epilogue but the bias, which the convolution added (BatchNorm, `residual`,
// relu, clip), or the clip alone.
inline EpilogueArgs EpilogueOf(const ConvSpec& s, const ConvArgs& a, bool whole, int64_t positions,
                               const float* conv, const float* residual, float* out) {
  EpilogueArgs e;
  e.positions = positions;
  e.C = s.F;
  e.conv = conv;
  if (whole) {
    e.epilogue = EpilogueFor(s, a);
    e.residual = s.residual ? residual : nullptr;
  } else {
    e.epilogue.clip = a.epilogue.clip;
    e.epilogue.clip_min = a.epilogue.clip_min;
    e.epilogue.clip_max = a.epilogue.clip_max;
  }
  e.epilogue.bias = nullptr;
  e.out = out;
  return e;
}

}  // namespace internal
}  // namespace hybridnet
