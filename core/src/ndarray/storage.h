// The bytes behind NDArrays (shared by copies and views), with a write stamp and the data kernels
// derive from the values:
//
//   std::shared_ptr<const void> packed = DerivedData(weight, "conv:<layout>", [&] { return Pack();
//   });
//
// returns what `make` built the last time the same key was asked for, as long as the values have
// not been written since (every non-const raw_data() takes a new stamp). Storage whose pointer
// was handed out for writes at any time (NDArray::Wrap, untracked_data()) keeps nothing: `make`
// runs on every call. Derived data lives as long as the storage.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hybridnet/ndarray.h"

namespace hybridnet {
namespace internal {

struct Storage {
  uint8_t* bytes = nullptr;
  std::function<void(uint8_t*)> release;
  /// Changes whenever the values may have changed; 0 = untracked (never derive from it).
  std::atomic<uint64_t> stamp{0};

  std::mutex mutex;
  struct Derived {
    std::string key;
    uint64_t stamp;
    std::shared_ptr<const void> value;
  };
  std::vector<Derived> derived;  ///< guarded by mutex

  Storage() = default;
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage() {
    if (release) release(bytes);
  }

  static Storage* Of(const NDArray& array) { return array.storage_.get(); }
  static size_t OffsetOf(const NDArray& array) { return array.offset_; }
};

/// A stamp no storage had before (process-wide, increasing).
uint64_t NextWriteStamp();

/// The write stamp of the array's storage (0: untracked, or none/symbolic).
uint64_t WriteStamp(const NDArray& array);

/// What `make` derives from `array`'s current values for `key` (see the file comment).
std::shared_ptr<const void> DerivedData(const NDArray& array, const std::string& key,
                                        const std::function<std::shared_ptr<const void>()>& make);

}  // namespace internal
}  // namespace hybridnet
