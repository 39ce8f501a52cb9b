#include "kernels/kernel_choice.h"

#include "hybridnet/base.h"
#include "kernels/convolution.h"
#include "kernels/dense.h"
#include "kernels/onednn_convolution.h"
#include "kernels/pooling.h"
#include "kernels/vector_isa.h"

namespace hybridnet {
namespace internal {

KernelChoice::KernelChoice(std::string family, std::vector<ChoosableKernel> kernels)
    : family_(std::move(family)),
      kernels_(std::move(kernels)),
      runs_(new std::atomic<int64_t>[kernels_.size()]) {
  for (size_t i = 0; i < kernels_.size(); ++i) runs_[i].store(0);
}

void KernelChoice::Force(int index) {
  HN_CHECK(index < static_cast<int>(kernels_.size()), kInvalidArgument)
      << family_ << " has no kernel " << index;
  forced_.store(index < 0 ? -1 : index, std::memory_order_relaxed);
}

int64_t KernelChoice::Runs(int index) const {
  return runs_[static_cast<size_t>(index)].load(std::memory_order_relaxed);
}

int KernelChoice::IndexOf(const std::string& name) const {
  for (size_t k = 0; k < kernels_.size(); ++k) {
    if (kernels_[k].name == name) return static_cast<int>(k);
  }
  HN_THROW(kInvalidArgument) << family_ << " has no kernel " << name;
}

void KernelChoice::RejectForced(int kernel, const std::string& call) const {
  const ChoosableKernel& k = kernels_[static_cast<size_t>(kernel)];
  if (!k.runs_here) {
    HN_THROW(kUnsupported) << "the forced " << family_ << " kernel " << k.name
                           << " cannot run on this CPU (it needs " << k.needs << ")";
  }
  HN_THROW(kUnsupported) << "the forced " << family_ << " kernel " << k.name << " does not take "
                         << call;
}

const std::vector<KernelChoice*>& KernelChoices() {
  static const std::vector<KernelChoice*> choices = {&ConvolutionKernels(),
                                                     &PoolingKernels(),
                                                     &PoolingBackwardKernels(),
                                                     &DenseKernels(),
                                                     &DenseBackwardKernels(),
                                                     &ConvolutionDataGradientKernels(),
                                                     &ConvolutionWeightGradientKernels(),
                                                     &VectorIsaKernels()};
  return choices;
}

KernelChoice& KernelChoiceOf(const std::string& family) {
  for (KernelChoice* choice : KernelChoices()) {
    if (choice->family() == family) return *choice;
  }
  HN_THROW(kInvalidArgument) << "no kernel choice " << family;
}

bool KernelRunsHere(const std::string& family, const std::string& name) {
  for (const KernelChoice* choice : KernelChoices()) {
    if (choice->family() != family) continue;
    for (const ChoosableKernel& k : choice->kernels()) {
      if (k.name == name) return k.runs_here;
    }
  }
  return false;
}

}  // namespace internal
}  // namespace hybridnet
