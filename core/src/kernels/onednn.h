// oneDNN as every kernel uses it: one CPU engine, a stream per thread, reorders that any thread
// may run with its scratchpad in the caller's workspace, and the memory tags of our two data
// layouts. oneDNN 2.x and 3.x spell all of this alike; the 2.x-only operation descriptors are
// confined to onednn_convolution.cc.
#pragma once

#include <cstdint>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>

#include "hybridnet/dtype.h"
#include "kernels/int8_eltwise.h"
#include "kernels/workspace.h"

namespace hybridnet {
namespace internal {

dnnl::engine& OneDnnEngine();
/// The calling thread's stream.
dnnl::stream& OneDnnStream();

/// A reorder that any thread may run (RunReorder): user scratchpad mode, as for convolutions
/// (see ConvPrimitive::scratchpad_md). Winograd's weight layout needs one.
dnnl::reorder SharedReorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to);

/// A scratchpad of layout `pad` over `workspace`'s slot `slot`.
dnnl::memory ScratchpadIn(const dnnl::memory::desc& pad, WorkspaceSlot slot, Workspace* workspace);

/// Runs a SharedReorder on this thread's stream, its scratchpad in `workspace`.
void RunReorder(const dnnl::reorder& reorder, const dnnl::memory& from, const dnnl::memory& to,
                Workspace* workspace);

/// oneDNN's type of int8, uint8, int32 and float32 elements; another type is an internal error.
dnnl::memory::data_type OneDnnDataType(DType dtype);

/// oneDNN's eltwise algorithm of `kind` (undef for kNone).
dnnl::algorithm OneDnnEltwiseAlgorithm(Int8Eltwise::Kind kind);

/// nwc, nhwc or ndhwc; ncw, nchw or ncdhw (Layout's orders, layout.h).
dnnl::memory::format_tag ChannelLastTag(int64_t nd);
dnnl::memory::format_tag ChannelFirstTag(int64_t nd);

/// Relayout (layout.h) of elements of `type` (a byte-wise copy: any type of the same size).
void Relayout(const void* src, void* dst, dnnl::memory::data_type type, int64_t N, int64_t C,
              int64_t S, bool to_channel_last, Workspace* workspace);

/// Whether oneDNN's kernels here use `isa` (the CPU has it and DNNL_MAX_CPU_ISA allows it).
bool OneDnnHasIsa(dnnl::cpu_isa isa);

/// "oneDNN 2.6.3, ISA avx512_core, OpenMP threads 1" for KernelLibraries (benchmark reports).
std::string OneDnnDescription();

/// The data type of the operands of oneDNN's products of values rounded to bfloat16: bf16 where
/// oneDNN has bf16 kernels (AVX-512 and later: avx512_bf16 or AMX instructions, or its
/// emulation), else f32 holding the rounded values (RoundOperandToBFloat16). Both sum in float32:
/// the same products, only the summation order may differ.
dnnl::memory::data_type BFloat16ProductType();

/// Whether oneDNN's int8 products here are exact integer arithmetic: VNNI (AVX-512 or AVX) or
/// AMX sums u8 x s8 products in 32 bits. Without them its kernels sum pairs of products in 16
/// bits first, saturating, as MXNet's do on such CPUs (README, int8).
bool OneDnnSumsInt8Exactly();

/// An operand of `md`'s layout at `data`, reordered from float32: where it is float32
/// (BFloat16ProductType), rounds its values to bfloat16 (to nearest even, as amp_cast) in place.
void RoundOperandToBFloat16(const dnnl::memory::desc& md, void* data);

}  // namespace internal
}  // namespace hybridnet
