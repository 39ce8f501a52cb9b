// What the convolution kernels' adapters share (convolution.cc, onednn_convolution.cc,
// convolution_winograd.cc): a call's description for messages, its output positions, data
// derived from its weights kept with the weight array, and channel-last arrays for kernels
// that take only those.
#pragma once

#include <memory>
#include <sstream>
#include <string>

#include "kernels/convolution.h"
#include "kernels/epilogue.h"
#include "kernels/layout.h"
#include "kernels/workspace.h"
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

// Runs `kernel(data, residual, out)` on channel-last arrays: the caller's own, or copies
// re-laid-out around it for channel-first callers (and for channel-first data alone).
template <typename Kernel>
void OnChannelLast(const ConvSpec& s, const ConvArgs& a, Kernel kernel) {
  if (s.channel_last && !s.data_channel_first) {
    kernel(a.data, s.residual ? a.residual : nullptr, a.out);
    return;
  }
  int64_t in_spatial = 1, out_spatial = 1;
  for (int64_t i = 0; i < s.nd; ++i) {
    in_spatial *= s.in[i];
    out_spatial *= s.out[i];
  }
  float* data = a.workspace->Get<float>(kConvSrcSlot, static_cast<size_t>(s.N * s.C * in_spatial));
  Relayout(a.data, data, s.N, s.C, in_spatial, true, a.workspace);
  if (s.channel_last) {
    kernel(data, s.residual ? a.residual : nullptr, a.out);
    return;
  }
  float* out = a.workspace->Get<float>(kConvDstSlot, static_cast<size_t>(s.N * s.F * out_spatial));
  float* residual = nullptr;
  if (s.residual) {
    residual =
        a.workspace->Get<float>(kConvResidualSlot, static_cast<size_t>(s.N * s.F * out_spatial));
    Relayout(a.residual, residual, s.N, s.F, out_spatial, true, a.workspace);
  }
  kernel(data, residual, out);
  Relayout(out, a.out, s.N, s.F, out_spatial, false, a.workspace);
}

}  // namespace internal
}  // namespace hybridnet
