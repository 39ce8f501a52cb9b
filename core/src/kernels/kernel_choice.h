// The places where the kernel layer chooses among kernels for a call (convolutions, pooling,
// dense layers): the kernels each chooses from, and for tests, a kernel to force and how many
// calls each kernel ran, so every conformance case runs on every kernel that takes it and checks
// which one ran (tests/ops/kernel_choice_test.cc). A forced kernel that does not take a call is
// an error naming both, never a silent fallback to another kernel.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "profiler/profiler_hook.h"

namespace hybridnet {
namespace internal {

/// One of the kernels a KernelChoice chooses from.
struct ChoosableKernel {
  std::string name;
  /// What the CPU must have to run it ("AVX-512F"), empty: any CPU.
  std::string needs;
  /// Whether this CPU has it.
  bool runs_here = true;
};

class KernelChoice {
 public:
  /// The choice of `family` ("convolution") among `kernels`, in the order of preference.
  KernelChoice(std::string family, std::vector<ChoosableKernel> kernels);
  KernelChoice(const KernelChoice&) = delete;
  KernelChoice& operator=(const KernelChoice&) = delete;

  const std::string& family() const { return family_; }
  const std::vector<ChoosableKernel>& kernels() const { return kernels_; }

  /// The kernel that runs a call: `usual`, or the one a test forces; `takes(k)` says whether
  /// kernel k takes the call and `describe()` describes the call for the error a forced kernel
  /// that does not take it raises (kUnsupported), only then. Counts the run.
  template <typename Takes, typename Describe>
  int Choose(int usual, const Takes& takes, const Describe& describe) {
    int kernel = forced_.load(std::memory_order_relaxed);
    if (kernel < 0) {
      kernel = usual;
    } else if (!takes(kernel)) {
      RejectForced(kernel, describe());
    }
    runs_[static_cast<size_t>(kernel)].fetch_add(1, std::memory_order_relaxed);
    profiler::internal::NoteKernel(kernels_[static_cast<size_t>(kernel)].name);
    return kernel;
  }
  /// Whether a test forces a kernel now.
  bool Forced() const { return forced_.load(std::memory_order_relaxed) >= 0; }

  /// Tests only: every later call runs kernel `index` (-1: the usual choice), on every thread.
  void Force(int index);
  /// Tests only: the calls kernel `index` has run in this process.
  int64_t Runs(int index) const;
  /// Tests only: the index of kernel `name` (kInvalidArgument naming it when there is none).
  int IndexOf(const std::string& name) const;

 private:
  [[noreturn]] void RejectForced(int kernel, const std::string& call) const;

  std::string family_;
  std::vector<ChoosableKernel> kernels_;
  std::atomic<int> forced_{-1};
  std::unique_ptr<std::atomic<int64_t>[]> runs_;
};

/// Every KernelChoice of the kernel layer (ConvolutionKernels, PoolingKernels, DenseKernels,
/// DenseBackwardKernels, ...), for tests.
const std::vector<KernelChoice*>& KernelChoices();

/// The choice of `family`, for tests (kInvalidArgument naming it when there is none).
KernelChoice& KernelChoiceOf(const std::string& family);

/// Whether kernel `name` of the choice `family` runs on this CPU (false for names not listed),
/// for tests whose expected graph depends on which kernels exist (the fusions our AVX-512
/// kernels take).
bool KernelRunsHere(const std::string& family, const std::string& name);

}  // namespace internal
}  // namespace hybridnet
