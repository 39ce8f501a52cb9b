// Activation's act_type: the enum and its names, apart from the activation kernels
// (activation-inl.h) so that code without OpenMP (the passes' callers, tests) can name them.
#pragma once

#include "hybridnet/param.h"

namespace hybridnet {
namespace internal {

/// Activation's act_type values.
enum class ActType { kRelu, kSigmoid, kTanh, kSoftrelu, kSoftsign };

/// The accepted act_type names, in MXNet's enum order.
inline const EnumNames<ActType>& ActTypeNames() {
  static const EnumNames<ActType> names = {{"relu", ActType::kRelu},
                                           {"sigmoid", ActType::kSigmoid},
                                           {"softrelu", ActType::kSoftrelu},
                                           {"softsign", ActType::kSoftsign},
                                           {"tanh", ActType::kTanh}};
  return names;
}

}  // namespace internal
}  // namespace hybridnet
