// The MXNet 1.x gluon model zoo (mx.gluon.model_zoo.vision) in C++: the same architectures,
// block structure, parameter names and exported graphs as MXNet 1.9.1 builds them.
//
//   auto net = gluon::model_zoo::GetModel("resnet18_v1");   // prefix "resnetv10_", as MXNet
//   net->Initialize(gluon::Xavier());
//   net->Hybridize();
//   NDArray y = (*net)(NDArray::RandomUniform({1, 3, 224, 224}));   // (1, 1000)
//   net->Export("resnet18_v1");       // MXNet loads it with SymbolBlock.imports
//   net->LoadParameters("resnet18_v1-a0666292.params");  // MXNet zoo weights load by structure
//
// Names: every block gets the prefix MXNet gives it (e.g. "resnetv10_stage1_conv0_") and every
// op node MXNet's name (e.g. "resnetv10_stage1__plus0"); only the top-level counter
// ("resnetv10" vs "resnetv11") depends on what was built before in the process, as in MXNet.
// Structural names (save_parameters) match MXNet's ("features.5.0.body.0.weight"), so
// parameter files saved by MXNet's model zoo load directly.
//
// Input sizes: 224 x 224 (inceptionv3: 299 x 299); resnet, mobilenet and vgg/alexnet (whose
// Dense layers infer their input size) accept other sizes too.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hybridnet/gluon/block.h"

namespace hybridnet {
namespace gluon {
/// MXNet gluon's model_zoo.vision networks by name, with MXNet's parameter names.
namespace model_zoo {

/// A model by MXNet's get_model name (case-insensitive): alexnet; vgg11, vgg13, vgg16, vgg19
/// (+ "_bn"); resnet18_v1 ... resnet152_v1, resnet18_v2 ... resnet152_v2; densenet121, 161,
/// 169, 201; squeezenet1.0, squeezenet1.1; inceptionv3; mobilenet1.0, 0.75, 0.5, 0.25;
/// mobilenetv2_1.0, 0.75, 0.5, 0.25. Throws kNotFound listing the names for anything else.
/// `classes` sizes the classifier; `thumbnail` (resnets only) uses a 3x3 stem for 32x32 input.
std::shared_ptr<HybridBlock> GetModel(const std::string& name, int64_t classes = 1000,
                                      bool thumbnail = false);
/// Every name GetModel accepts.
std::vector<std::string> ModelNames();

/// AlexNet with `classes` outputs.
std::shared_ptr<HybridBlock> AlexNet(int64_t classes = 1000);
/// num_layers 11, 13, 16 or 19.
std::shared_ptr<HybridBlock> VGG(int num_layers, bool batch_norm = false, int64_t classes = 1000);
/// version 1 or 2; num_layers 18, 34, 50, 101 or 152.
std::shared_ptr<HybridBlock> ResNet(int version, int num_layers, int64_t classes = 1000,
                                    bool thumbnail = false);
/// num_layers 121, 161, 169 or 201.
std::shared_ptr<HybridBlock> DenseNet(int num_layers, int64_t classes = 1000);
/// version "1.0" or "1.1".
std::shared_ptr<HybridBlock> SqueezeNet(const std::string& version, int64_t classes = 1000);
/// Inception v3 (299x299 input) with `classes` outputs.
std::shared_ptr<HybridBlock> Inception3(int64_t classes = 1000);
/// multiplier 1.0, 0.75, 0.5 or 0.25 (any positive value works).
std::shared_ptr<HybridBlock> MobileNet(double multiplier, int64_t classes = 1000);
/// multiplier 1.0, 0.75, 0.5 or 0.25 (any positive value works).
std::shared_ptr<HybridBlock> MobileNetV2(double multiplier, int64_t classes = 1000);

}  // namespace model_zoo
}  // namespace gluon
}  // namespace hybridnet
