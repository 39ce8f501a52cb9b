// MXNet 1.9's Block.summary(*inputs): runs the block once on `inputs` and prints one row per
// block called (class name and call index, output shapes, parameter count), then the totals.
//
//   auto net = gluon::model_zoo::GetModel("resnet18_v1");
//   net->Initialize();
//   std::cout << gluon::Summary(*net, {NDArray::Zeros({1, 3, 224, 224})});
#pragma once

#include <string>
#include <vector>

#include "hybridnet/gluon/block.h"

namespace hybridnet {
namespace gluon {

/// Block.summary's text, byte for byte as MXNet 1.9.1 prints it: every block called by the
/// forward except Sequential and HybridSequential containers (and HybridConcurrent, which is
/// one in MXNet) gets a row "<Class>-<n>" with its output shapes and the size of the parameters
/// it declares itself; the totals count trainable (grad_req not null) and shared parameters
/// once per call. The tree must be initialized; kInvalidArgument when a block of it is
/// hybridized ('"<name>" must not be hybridized to print summary.', as MXNet's assertion).
std::string Summary(Block& block, const std::vector<NDArray>& inputs);

}  // namespace gluon
}  // namespace hybridnet
