// Our own kernel for 3x3 convolutions of stride 1 and padding 1 on channel-last data, on CPUs
// with AVX2: Winograd's F(4x4, 3x3). Each 4x4 block of outputs (a tile) reads a 6x6 block of
// the input; the input block and the 3x3 window are each carried into a 6x6 space (B' d B and
// G g G'), where the convolution is 36 elementwise products summed over the input channels,
// i.e. 36 matrix products (tiles x C by C x F, on blas.h's Gemm), and the result is carried back
// (A' m A). That is 2.25x fewer multiplications than the direct convolution's: oneDNN 2.6.3 has
// Winograd kernels only for AVX-512, and on AVX2 its direct ones run at about 78 % of the FMA
// peak, so this is the only way below their time there.
//
// The price is accuracy: the transforms' constants (up to 8 and 1/24) make the rounding errors
// grow: against float64, up to 6.6e-6 of the largest output on ResNet-like layers, 1.4e-5 of
// the largest data gradient, 4.1e-6 of the largest weight gradient (the tests hold them to 3e-5,
// testing_util::kWinogradRelativeBound, the direct kernels to 1e-5). Inference, whose results
// match op-by-op runs and MXNet's closely by default, therefore runs it only with fast_math;
// training, whose steps carry far more noise than that (the batches' sampling, dropout), runs
// it by default where it pays (ConvSpec::winograd). The backward data of such a convolution is
// the same computation on dy with the windows turned 180 degrees and their channels swapped; its
// backward weights are Winograd's algorithm with the roles of window and output exchanged
// (RunWinogradWeightGradient): all three passes run here.
//
// Tiles are taken in chunks of a size fixed by the channel counts, never by the thread count,
// and each chunk's products are the same Gemm calls whatever thread runs them: results do not
// depend on the thread count.
#pragma once

#include <cstdint>

#include "kernels/convolution.h"

namespace hybridnet {
namespace internal {

/// Whether call `s` has the shape of Winograd's F(4x4, 3x3): a 2-D convolution of one group,
/// 3x3 window, stride 1, no dilation, padding 1 on every side.
bool WinogradShape(const ConvSpec& s);

/// Whether our Winograd kernel can run call `s`: a 2-D convolution of one group, 3x3 window,
/// stride 1, no dilation, padding 1 on every side, channels in and out multiples of 8, on a
/// CPU with AVX2 and FMA.
bool WinogradTakes(const ConvSpec& s);

/// Whether it runs call `s` unforced, in all three passes: s.winograd allows it, and it is
/// faster there than the other kernels on this CPU (measured on Zen 3 for AVX2; on Zen 5 for
/// AVX-512, where it pays from 32 to 256 channels in and out).
bool WinogradPays(const ConvSpec& s);

/// Whether call `s` runs oneDNN's Winograd kernels in its three passes (RunOneDnnConvolution
/// unblocked, the blocked gradient kernels): s.winograd allows it, on AVX-512 CPUs (oneDNN has
/// none for AVX2), 64 channels in and out or more, where ours do not pay (past 256).
bool OneDnnWinogradPays(const ConvSpec& s);

/// RunConvolution of call `s` (WinogradTakes) with its epilogue, on channel-last or
/// channel-first arrays.
void RunWinogradConvolution(const ConvSpec& s, const ConvArgs& args);

/// The backward-data pass of convolution `s` (WinogradTakes): args.data_grad from
/// args.out_grad and args.weight, in the caller's layout.
void RunWinogradDataGradient(const ConvSpec& s, const ConvGradArgs& args);

/// The backward-weights pass of convolution `s` (WinogradTakes): args.weight_grad from
/// args.data and args.out_grad, in the caller's layout. dw = G' [(A dy A') * (B' x B)] G summed
/// over the tiles, the sums in Winograd's space: 36 products of C x tiles by tiles x F, each
/// point's summed over the chunks of tiles in order, so the results do not depend on the thread
/// count either.
void RunWinogradWeightGradient(const ConvSpec& s, const ConvGradArgs& args);

}  // namespace internal
}  // namespace hybridnet
