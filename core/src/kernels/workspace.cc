#include "kernels/workspace.h"

#include "hybridnet/base.h"

namespace hybridnet {
namespace internal {

void* Workspace::Bytes(WorkspaceSlot slot, size_t bytes) {
  Buffer& b = buffers_[slot];
  if (b.bytes < bytes || b.data == nullptr) {
    const size_t rounded = (bytes + 63) / 64 * 64;
    b.data.reset(std::aligned_alloc(64, rounded == 0 ? 64 : rounded));
    HN_CHECK(b.data != nullptr, kOutOfMemory)
        << "cannot allocate " << bytes << " bytes of kernel workspace";
    b.bytes = bytes;
  }
  return b.data.get();
}

size_t Workspace::HeldBytes() const {
  size_t total = 0;
  for (const Buffer& b : buffers_) total += b.bytes;
  return total;
}

}  // namespace internal
}  // namespace hybridnet
