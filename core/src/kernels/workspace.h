// Scratch memory for kernel calls, in one place (MXNet's kTempSpace, ONNX Runtime's allocator):
// whoever runs kernels (a graph executor; eager invoke, one per thread) owns a Workspace and hands
// it to every call through OpContext::workspace. A call takes the buffers it needs at the same
// time from distinct slots; a slot grows to the largest request and is kept, so once the largest
// call has run no call allocates. Kernels that split work between threads take one part of a
// slot per thread (see PoolPlanes), before their parallel loop: Get itself is not thread-safe.
//
//   float* rows = ctx.workspace->Get<float>(kPoolingRowsSlot, threads * row_floats);
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>

namespace hybridnet {
namespace internal {

/// Every buffer a kernel call may hold at once, one slot each: an op's own slots and those of the
/// kernels it calls never meet, because every user is listed here.
enum WorkspaceSlot {
  kConvSrcSlot,            ///< convolution data re-laid-out for the kernel
  kConvDstSlot,            ///< convolution output before it is laid out for the caller
  kConvResidualSlot,       ///< the residual re-laid-out
  kConvFoldSlot,           ///< weights with BatchNorm folded in (fast_math)
  kOneDnnScratchpadSlot,   ///< a oneDNN primitive's scratchpad
  kReorderScratchpadSlot,  ///< a oneDNN reorder's scratchpad
  kConvExpandedSlot,       ///< an expansion's output (or its rows) feeding a depthwise one
  kConvSubsampledSlot,     ///< a strided 1x1 convolution's input at the positions it reads
  kConvConvolvedSlot,      ///< a convolution's output (or rows) feeding a max pooling
  kConvRowSlot,            ///< the few-channel kernel's output rows before re-layout
  kConvPatchSlot,          ///< the data's patches a convolution's weight gradient multiplies
  kConvWinogradSlot,       ///< Winograd's transformed tiles and their products, per thread
  kConvWinogradWeightsSlot,  ///< Winograd's transformed windows, made for the call (training)
  kBatchNormAffineSlot,    ///< BatchNorm's per-channel scale and shift
  kBatchNormLanesSlot,     ///< channel-last BatchNorm's partial sums, per lane and channel
  kExpandAffineSlot,       ///< an expansion's BatchNorm scale and shift
  kPoolingRowsSlot,        ///< pooling's per-thread row of column maxima or sums
  kPoolingWindowRowsSlot,  ///< pooling's per-thread pointers to a window's rows
  kBFloat16DataSlot,       ///< data rounded to bfloat16 for a bf16 convolution or inner product
  kOpSlot0,                ///< ops without kernels of their own (RNN, sort, linalg, sampling)
  kOpSlot1,
  kOpSlot2,
  kOpSlot3,
  kWorkspaceSlots
};

class Workspace {
 public:
  /// `count` elements of T in `slot`, 64-byte aligned, uninitialised, valid until the next Get of
  /// that slot. Throws kOutOfMemory naming the size when memory runs out.
  template <typename T>
  T* Get(WorkspaceSlot slot, size_t count) {
    return static_cast<T*>(Bytes(slot, count * sizeof(T)));
  }
  /// The bytes the slots hold now (reports, tests).
  size_t HeldBytes() const;

 private:
  void* Bytes(WorkspaceSlot slot, size_t bytes);

  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  struct Buffer {
    std::unique_ptr<void, Free> data;
    size_t bytes = 0;
  };
  Buffer buffers_[kWorkspaceSlots];
};

}  // namespace internal
}  // namespace hybridnet
