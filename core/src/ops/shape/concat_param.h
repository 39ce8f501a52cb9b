// Concat's attributes and shape inference, shared by Concat and _contrib_quantized_concat (which
// takes MXNet's Concat attributes unchanged).
#pragma once

#include <vector>

#include "hybridnet/op.h"

namespace hybridnet {
namespace internal {

struct ConcatParam {
  int num_args = 0;
  int dim = 1;
  static void Declare(ParamDeclarer<ConcatParam>* d) {
    d->Field("num_args", &ConcatParam::num_args)
        .Required()
        .Min(1)
        .Describe("Number of inputs to be concatenated.");
    d->Field("dim", &ConcatParam::dim).Default(1).Describe("the dimension to be concated.");
  }
};

/// Concat's shapes: the inputs agree outside `dim`, the output's `dim` is the sum of theirs (one
/// unknown input size follows from a known output).
bool ConcatShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out);

}  // namespace internal
}  // namespace hybridnet
