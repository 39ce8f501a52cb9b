// Convolutions and deconvolutions on oneDNN primitives, for the shapes our own kernels do not take
// (kernels/convolution.h says which): channel-last data, weights re-laid-out once into the
// primitive's blocked format and kept with the weight array, primitives kept per call shape.
// Where oneDNN's kernels for blocked data (nChw8c on AVX2, whose channel-last kernels are slow)
// are faster, the re-layouts included, data, residual and output are re-laid-out around them.
// The gradients of convolutions (RunConvolutionGradients, convolution.h) run on
// oneDNN's backward primitives here too, kept the same way, or where that is faster on its
// forward primitive with rotated weights (backward data) and on sgemm products of the data's
// patches (backward weights), or on our Winograd kernel (convolution_winograd.h).
//
// oneDNN 2.x: this is the one file written against its operation descriptors
// (convolution_forward::desc, memory::desc::data). A port to 3.x makes the primitive descriptors
// from the memory descriptors directly (convolution_forward::primitive_desc(engine, prop, alg,
// src, weights, bias, dst, strides, dilates, pads, attr)), hashes memory descriptors through
// memory::desc::get_size/dims/strides instead of `data`, and queries implementations with
// primitive_desc::next_impl as now. Neither version has a query that identifies an
// implementation (no kind or ISA, only its name as text), so the file chooses oneDNN's GEMM-based
// one for a single output position by the weights layout it reports (GemmWeightDesc), which in
// 2.6 no other implementation reports; 3.x's brgemm convolution takes that layout too when given
// weights in it (jcp.wei_plain, v3.5), so a port checks again, with next_impl on `any` weights,
// that only the GEMM-based one reports it. Whether post-ops change the implementation is still
// told by its name (SameImplementation), the one place the file reads it.
// Dense layers' inner products (kernels/dense.cc) make their primitive descriptors here too
// (InnerProductPrimitive); a 3.x port makes them as inner_product_forward::primitive_desc(engine,
// prop, src, weights, bias, dst, attr), and MemoryDescKey hashes what 3.x's memory::desc reports.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>
#include <string>

#include "kernels/convolution.h"

namespace hybridnet {
namespace internal {

/// The kernels that run a convolution's backward data (RunConvolutionGradients): oneDNN's
/// backward-data primitive on channel-last data (where it has a direct kernel for it, else on
/// the layouts it chooses), which takes every call; for stride-1 calls of one group, its forward
/// convolution of dy by the weights turned 180 degrees, channels swapped; its backward-data
/// primitive on the blocked layouts it chooses, data and gradients re-laid-out around it; our
/// Winograd kernel (convolution_winograd.h) on dy and the rotated weights.
enum class ConvDataGradKernel { kOneDnn, kRotatedForward, kOneDnnBlocked, kWinograd };

/// The choice among them (kernel_choice.h), indexed by ConvDataGradKernel.
KernelChoice& ConvolutionDataGradientKernels();

/// The kernels that run a convolution's backward weights (RunConvolutionGradients): oneDNN's
/// backward-weights primitive on channel-last data (as kOneDnn's backward data), which takes
/// every call; for 2-D calls of one group, products (Gemm) of the output gradient and the data's
/// patches; its backward-weights primitive on the blocked layouts it chooses; our Winograd
/// kernel.
enum class ConvWeightGradKernel { kOneDnn, kPatchGemm, kOneDnnBlocked, kWinograd };

/// The choice among them (kernel_choice.h), indexed by ConvWeightGradKernel.
KernelChoice& ConvolutionWeightGradientKernels();

/// RunConvolution on a oneDNN primitive, whatever the shape: on channel-last data, or with
/// `blocked` (OneDnnBlockedTakes) on the blocked layouts oneDNN chooses, data, residual and output
/// re-laid-out around it.
void RunOneDnnConvolution(const ConvSpec& spec, const ConvArgs& args, bool blocked);

/// Whether the blocked layouts can run call `spec` (RunOneDnnConvolution): a convolution of one
/// group whose filters fill whole channel blocks (8 on AVX2, 16 on AVX-512), so the epilogue
/// finds each channel's values in place.
bool OneDnnBlockedTakes(const ConvSpec& spec);

/// Whether they are faster than channel-last for it, their re-layouts included (on this CPU).
bool OneDnnBlockedPays(const ConvSpec& spec);

/// The forward-inference inner product of `src` (rows, k) by `weights` (hidden, k; format_tag::any
/// lets the primitive choose its layout) plus `bias` (an empty desc: none) into `dst`, its
/// scratchpad given by the caller (user scratchpad mode); throws dnnl::error. With `*relu`, max(y,
/// 0) as a post-op when it leaves the implementation as without; `*relu` says whether it did (the
/// sums are then those of the product alone).
dnnl::inner_product_forward::primitive_desc InnerProductPrimitive(const dnnl::memory::desc& src,
                                                                  const dnnl::memory::desc& weights,
                                                                  const dnnl::memory::desc& bias,
                                                                  const dnnl::memory::desc& dst,
                                                                  bool* relu);

/// (n, c, spatial...) of a call's data or output, for memory descriptors.
dnnl::memory::dims DataDims(int64_t n, int64_t c, const int64_t* spatial, int64_t nd);

/// The weights as MXNet stores them, of element type `type`: convolution (F, C/G, k...),
/// deconvolution (C, F/G, k...); oneDNN's logical order is ([G,] out-channels/G,
/// in-channels/G, k...) for both.
dnnl::memory::desc UserWeightDesc(const ConvSpec& s, dnnl::memory::data_type type);

/// A key that tells memory layouts apart ("<hash>:<bytes>"), for data kept per layout.
std::string MemoryDescKey(const dnnl::memory::desc& md);

}  // namespace internal
}  // namespace hybridnet
