// FullyConnected's parameters as MXNet declares them, shared by FullyConnected and its fused form
// (fully_connected.cc), and by the quantized forms, which take the same attributes
// (ops/quantization/quantized_fully_connected.cc).
#pragma once

#include <vector>

#include "hybridnet/op.h"
#include "hybridnet/param.h"
#include "hybridnet/shape.h"

namespace hybridnet {

template <typename P>
void DeclareFullyConnectedFields(ParamDeclarer<P>* d) {
  d->Field("num_hidden", &P::num_hidden)
      .Required()
      .Min(1)
      .Describe("Number of hidden nodes of the output.");
  d->Field("no_bias", &P::no_bias).Default(false).Describe("Whether to disable bias parameter.");
  d->Field("flatten", &P::flatten)
      .Default(true)
      .Describe("Whether to collapse all but the first axis of the input data tensor.");
}

struct FullyConnectedParam {
  int num_hidden = 0;
  bool no_bias = false;
  bool flatten = true;
  static void Declare(ParamDeclarer<FullyConnectedParam>* d) { DeclareFullyConnectedFields(d); }
};

/// FullyConnected's shape inference over (data, weight[, bias]) -> (output): fills what the known
/// shapes determine, throws kShapeError naming the node on a conflict, and returns whether every
/// shape is known.
bool InferFullyConnectedShape(const NodeAttrs& attrs, const FullyConnectedParam& p,
                              std::vector<Shape>* in, std::vector<Shape>* out);

}  // namespace hybridnet
