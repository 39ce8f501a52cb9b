// Activation's attributes, shared by Activation and _contrib_quantized_act (which takes MXNet's
// Activation attributes unchanged).
#pragma once

#include "hybridnet/param.h"
#include "kernels/activation_type.h"

namespace hybridnet {
namespace internal {

struct ActivationParam {
  ActType act_type = ActType::kRelu;
  static void Declare(ParamDeclarer<ActivationParam>* d) {
    d->Field("act_type", &ActivationParam::act_type, ActTypeNames())
        .Required()
        .Describe("Activation function to be applied.");
  }
};

}  // namespace internal
}  // namespace hybridnet
