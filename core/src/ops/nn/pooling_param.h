// Pooling's attributes and shape inference, shared by Pooling and _contrib_quantized_pooling
// (which takes MXNet's Pooling attributes unchanged).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "hybridnet/op.h"
#include "kernels/layout.h"
#include "kernels/pooling.h"
#include "kernels/window-inl.h"

namespace hybridnet {
namespace internal {

enum class PoolingConvention { kFull, kValid, kSame };

struct PoolingParam {
  std::vector<int64_t> kernel;
  PoolType pool_type = PoolType::kMax;
  bool global_pool = false;
  bool cudnn_off = false;
  PoolingConvention pooling_convention = PoolingConvention::kValid;
  std::vector<int64_t> stride;
  std::vector<int64_t> pad;
  std::optional<int> p_value;
  std::optional<bool> count_include_pad;
  std::optional<Layout> layout;

  static void Declare(ParamDeclarer<PoolingParam>* d) {
    d->Field("kernel", &PoolingParam::kernel)
        .Default({})
        .Describe("Pooling kernel size: (y, x) or (d, y, x)");
    d->Field("pool_type", &PoolingParam::pool_type,
             {{"max", PoolType::kMax},
              {"avg", PoolType::kAvg},
              {"sum", PoolType::kSum},
              {"lp", PoolType::kLp}})
        .Default(PoolType::kMax)
        .Describe("Pooling type to be applied.");
    d->Field("global_pool", &PoolingParam::global_pool)
        .Default(false)
        .Describe("Ignore kernel size, do global pooling based on current input feature map.");
    d->Field("cudnn_off", &PoolingParam::cudnn_off)
        .Default(false)
        .Describe("Turn off cudnn pooling and use MXNet pooling operator. Ignored on CPU.");
    d->Field("pooling_convention", &PoolingParam::pooling_convention,
             {{"full", PoolingConvention::kFull},
              {"valid", PoolingConvention::kValid},
              {"same", PoolingConvention::kSame}})
        .Default(PoolingConvention::kValid)
        .Describe(
            "Pooling convention to be applied: valid floors the output size, full "
            "rounds it up, same (1-D only) gives ceil(x / stride).");
    d->Field("stride", &PoolingParam::stride)
        .Default({})
        .Describe("Stride: for pooling (y, x) or (d, y, x). Defaults to 1 for each dimension.");
    d->Field("pad", &PoolingParam::pad)
        .Default({})
        .Describe("Pad for pooling: (y, x) or (d, y, x). Defaults to no padding.");
    d->Field("p_value", &PoolingParam::p_value)
        .Default(std::nullopt)
        .Describe("Value of p for Lp pooling, can be 1, 2 or 3, required for Lp Pooling.");
    d->Field("count_include_pad", &PoolingParam::count_include_pad)
        .Default(std::nullopt)
        .Describe(
            "Only used for AvgPool, specify whether to count padding elements for "
            "average calculation. For example, with a 5*5 kernel on a 3*3 corner of a "
            "image, the sum of the 9 valid elements will be divided by 25 if this is set "
            "to true, or it will be divided by 9 if this is set to false. Defaults to "
            "true.");
    d->Field("layout", &PoolingParam::layout, internal::PoolingLayoutNames())
        .Default(std::nullopt)
        .Describe(
            "Set layout for input and output. Empty for default layout: NCW for 1d, NCHW "
            "for 2d and NCDHW for 3d.");
  }
};

/// MXNet's PoolingParamParser: rank-dependent stride/pad defaults and non-zero windows.
void PoolingParamInit(PoolingParam* p);

/// Pooling's output shape from its data (one input, output 0).
bool PoolingInferShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out);

/// The windows of a call on data `x` into output `y`, and how the kernels see its planes.
struct PoolingCall {
  SpatialGeom g;
  int64_t lane = 1, planes = 0;
  int pv = 1;
  bool include_pad = true;
};

PoolingCall MakePoolingCall(const PoolingParam& p, const Shape& x, const Shape& y);

}  // namespace internal
}  // namespace hybridnet
