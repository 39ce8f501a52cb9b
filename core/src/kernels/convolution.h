// The CPU backend of Convolution and Deconvolution (eager and graph alike): oneDNN primitives on
// channel-last data (NWC, NHWC, NDHWC), weights re-laid-out once into the primitive's blocked
// format and kept with the weight array (ndarray/storage.h), and a fused epilogue:
//
//   y = act(((conv(x, w) + bias) * bn_scale + bn_shift) + residual)     act: relu or clip
//
// where every step is optional and rounds exactly as the separate ops do (BatchNorm's kernel
// computes x * scale + shift with the same scale and shift; the residual add, relu and clip are
// single float operations), so a graph that fuses them gives the bits of the ops run one by one.
// Callers with channel-first data (eager Convolution) get it re-laid-out around the same kernel.
// 3x3 depthwise convolutions run our own kernel where it is faster (convolution_depthwise.h), and
// so do 1x1 stride-1 convolutions (convolution_pointwise.h) and, among them, those of a single
// 1x1 image, matrix-vector products (gemv.h), and 2-D convolutions of at most 4 input channels
// (convolution_few_channels.h).
//
// fast_math (ExecutorOptions::fast_math, off by default) trades those bits for speed: BatchNorm
// is folded into the weights and bias, and 3x3 stride-1 convolutions may use Winograd's
// algorithm, oneDNN's on AVX-512, ours on AVX2 (see docs/performance.md for the error bound).
// Training's 3x3 stride-1 convolutions (forward and backward data) run ours by default where it
// pays (convolution_winograd.h): eager and hybridized alike, so they keep each other's bits.
//
// Thread count (threads.h): the results do not depend on it: the kernels used split no reduction
// between threads, except oneDNN's GEMM one (other single output positions), which therefore
// runs on one thread. oneDNN fixes a primitive's thread count when it makes it: primitives are
// made and kept per thread count.
#pragma once

#include <cstdint>
#include <string>

#include "hybridnet/ndarray.h"
#include "hybridnet/op.h"
#include "kernels/convolution_spec.h"
#include "kernels/epilogue.h"
#include "kernels/kernel_choice.h"
#include "kernels/pooling.h"
#include "kernels/workspace.h"

namespace hybridnet {
namespace internal {

/// The arrays of one call. Weights are in MXNet's layout: (F, C/G, k...) for convolution,
/// (C, F/G, k...) for deconvolution. `*_array` are the NDArrays behind the pointers when the
/// caller has them (OpContext::input_arrays), so derived layouts are kept; else null.
struct ConvArgs {
  const float* data = nullptr;
  const float* weight = nullptr;
  const NDArray* weight_array = nullptr;
  const NDArray* bias_array = nullptr;
  const NDArray* const* bn_arrays = nullptr;  ///< gamma, beta, moving_mean, moving_var (4)
  /// The bias, BatchNorm and clip as the spec's flags (bias, bn) enable them; relu is the
  /// spec's.
  Epilogue epilogue;
  const float* residual = nullptr;
  float* out = nullptr;
  /// Scratch for the call (OpContext::workspace); never null.
  Workspace* workspace = nullptr;
  /// The products in bfloat16 (onednn_convolution_bf16.h): data and weights rounded to bfloat16,
  /// float32 sums, BatchNorm folded into the weights; convolutions only (no deconvolution).
  bool bf16 = false;
};

void RunConvolution(const ConvSpec& spec, const ConvArgs& args);

/// A 1x1 convolution (`expand`: stride 1, no padding, one group, no residual) whose output only
/// feeds a 3x3 depthwise one (`depthwise`): MobileNet v2's inverted bottleneck. Where our own
/// kernels run both on channel-last data, the expanded image of a sample is not small (256 KiB
/// and up) and each thread gets 8 output rows or more, each thread computes the expanded rows
/// as its depthwise rows need them and keeps the last three, so the expanded tensor never goes
/// out to memory; otherwise the two calls run one after the other through scratch. Either way
/// the results are the bits of RunConvolution(expand) then RunConvolution(depthwise): every
/// value is computed by the same float operations (a row both threads need is computed by
/// each). `expand_args.out` and `depthwise_args.data` are unused.
void RunExpandThenDepthwise(const ConvSpec& expand, const ConvArgs& expand_args,
                            const ConvSpec& depthwise, const ConvArgs& depthwise_args);

/// A 2-D convolution `conv` (no residual) followed by a max pooling (`window`, output
/// pooled_h x pooled_w): an image network's stem. Where our few-channel kernel runs on
/// channel-last output, each thread computes the convolution rows its pooled rows need and keeps
/// the last window's worth, so the convolution's output never goes out to memory; otherwise the
/// convolution runs whole into scratch first. Either way the results are the bits of
/// RunConvolution then Pooling (max): the same float operations for every value, a row both
/// threads need computed by each. `conv_args.out` is the pooled output.
void RunConvolutionThenMaxPool(const ConvSpec& conv, const ConvArgs& conv_args,
                               const MaxPoolWindow& window, int64_t pooled_h, int64_t pooled_w);

/// The arrays of one convolution's gradient call (s.deconv 0, no epilogue), in the caller's
/// layout (channel-first, or channel-last with s.channel_last); weights in MXNet's (F, C/G, k...).
struct ConvGradArgs {
  const float* data = nullptr;            ///< x, read by the weights' gradient
  const float* weight = nullptr;          ///< w, read by the data's gradient
  const NDArray* weight_array = nullptr;  ///< the array behind `weight`, when the caller has it
  const float* out_grad = nullptr;        ///< dy, of the output's shape
  float* data_grad = nullptr;             ///< dx, or null: not wanted
  float* weight_grad = nullptr;           ///< dw, or null: not wanted
  Workspace* workspace = nullptr;
};

/// The gradients of call `spec` whose arrays `args` gives (either may be null): dx, the
/// transposed convolution of dy by w (positions no window reads get 0), and dw[f, c, t], the sum
/// over samples and output positions of dy[f] times the data at tap t. oneDNN's backward-data
/// and backward-weights primitives, or the kernels onednn_convolution.h chooses instead, kept per
/// call; backward-data's weights re-laid-out once per weight version and kept with the array; dy re-laid-out once for both where they take the same
/// layout. The primitives take channel-last data where oneDNN has direct kernels for it, whatever
/// the caller's layout, so channel-first and channel-last callers get the same bits.
/// Deterministic for a given thread count (the threads' partial sums of dw are reduced in a
/// fixed order).
void RunConvolutionGradients(const ConvSpec& spec, const ConvGradArgs& args);

/// db[f] = the sum of dy[n, f, positions] over samples and positions (channel-first dy of
/// `positions` values per plane), in double, in that order.
void ConvolutionBiasGradient(const float* out_grad, int64_t N, int64_t F, int64_t positions,
                             float* bias_grad);

/// The kernels that run convolutions, in the order of preference: ours, each taking the calls
/// its own file's `...Takes` states (Winograd's: those its `WinogradPays` states), then oneDNN's,
/// which takes every call, on channel-last data or, where that is faster (OneDnnBlockedPays,
/// onednn_convolution.h), on its blocked layouts.
enum class ConvKernel {
  kDepthwise,
  kGemv,
  kPointwise,
  kFewChannels,
  kWinograd,
  kOneDnn,
  kOneDnnBlocked
};

/// The choice among them (kernel_choice.h), indexed by ConvKernel.
KernelChoice& ConvolutionKernels();

/// Whether `kernel` takes call `s` on this CPU.
bool ConvKernelTakes(ConvKernel kernel, const ConvSpec& s);

// The questions graph passes ask before they rewrite a graph, answered from what the kernels
// take, so a kernel that takes more changes what the passes do with no edit of theirs.

/// Whether call `s` (channel_last set) reads its channel-first data as it comes
/// (data_channel_first), an image network's first layer, rather than after a re-layout.
bool ConvReadsChannelFirstData(ConvSpec s);

/// Whether a 1x1 convolution whose output only feeds depthwise convolution `depthwise` is worth
/// fusing into it (RunExpandThenDepthwise): our depthwise kernel takes its window. `depthwise`'s
/// channel and image sizes may be 0, not known yet (fusion runs before shapes are known).
bool ConvFusesExpansion(const ConvSpec& depthwise);

}  // namespace internal
}  // namespace hybridnet
