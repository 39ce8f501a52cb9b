// What the graph optimizer folds into a Convolution, making the internal op _hn_convolution:
// typed fields the passes set (pass/fuse.cc, pass/layout.cc) and the op reads
// (FusedConvolutionCompute), never attribute strings. A new fusion is a field here, the rule
// that sets it and the kernel call that reads it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "kernels/activation_type.h"

namespace hybridnet {
namespace internal {

/// A BatchNorm in inference mode: its four parameters are inputs of the fused node.
struct BatchNormFold {
  double eps = 1e-3;
  bool fix_gamma = true;
};

/// clip(a_min, a_max) (ReLU6 in MobileNets).
struct ClipBounds {
  float a_min = 0.f;
  float a_max = 0.f;
};

/// The 1x1 convolution (stride 1, no padding, one group) that computes the data of a depthwise
/// convolution, with its own epilogue (MobileNet v2's expansion).
struct Expansion {
  uint32_t num_filter = 0;
  bool bias = false;
  std::optional<BatchNormFold> bn;
  bool relu = false;
  std::optional<ClipBounds> clip;  ///< instead of relu
};

/// A 2-D max pooling of the convolution's result (an image network's stem).
struct MaxPoolAfter {
  std::vector<int64_t> kernel, stride, pad;  ///< (y, x) each
  bool full = false;                         ///< pooling_convention full, else valid
};

/// Everything a _hn_convolution adds to its Convolution, applied in this order: the expansion
/// computing the data, the convolution, BatchNorm, the residual add, the activation or clip,
/// the max pooling. Inputs: data, weight, [bias], [gamma, beta, moving_mean, moving_var],
/// [expand_weight, [expand_bias], [its four BatchNorm inputs]], [residual].
struct ConvolutionFusions {
  std::optional<BatchNormFold> bn;
  bool residual = false;  ///< adds the last input, of the output's shape
  std::optional<ActType> act;
  std::optional<ClipBounds> clip;  ///< instead of act
  /// With a channel-last layout, the data alone stays channel-first: a first layer reading the
  /// network's input as it comes.
  bool channel_first_data = false;
  std::optional<Expansion> expand;
  std::optional<MaxPoolAfter> pool;
  /// The products (the expansion's too) in bfloat16, MXNet AMP's bfloat16 convolution
  /// (pass/bfloat16.cc): data and weights rounded to bfloat16, BatchNorm folded into the weights.
  bool bf16 = false;
};

/// The attributes of a _hn_convolution named `name`: the Convolution attributes `convolution`
/// (MXNet's, with a channel-first or channel-last layout) and `fusions`, checked together.
/// Throws kInvalidArgument naming the node for a combination the kernels do not run.
NodeAttrs FusedConvolutionAttrs(const std::string& name, const AttrDict& convolution,
                                const ConvolutionFusions& fusions);

/// The fusions of a _hn_convolution node; none for any other node.
const ConvolutionFusions& FusionsOf(const NodeAttrs& attrs);

}  // namespace internal
}  // namespace hybridnet
