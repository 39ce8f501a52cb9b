// Convolutions and deconvolutions on oneDNN primitives, for the shapes our own kernels do not take
// (kernels/convolution.h says which): channel-last data, weights re-laid-out once into the
// primitive's blocked format and kept with the weight array, primitives kept per call shape.
//
// oneDNN 2.x: this is the one file written against its operation descriptors
// (convolution_forward::desc, memory::desc::data). A port to 3.x makes the primitive descriptors
// from the memory descriptors directly (convolution_forward::primitive_desc(engine, prop, alg,
// src, weights, bias, dst, strides, dilates, pads, attr)), hashes memory descriptors through
// memory::desc::get_size/dims/strides instead of `data`, and queries implementations with
// primitive_desc::next_impl as now.
#pragma once

#include "kernels/convolution.h"

namespace hybridnet {
namespace internal {

/// RunConvolution on a oneDNN primitive, whatever the shape.
void RunOneDnnConvolution(const ConvSpec& spec, const ConvArgs& args);

}  // namespace internal
}  // namespace hybridnet
