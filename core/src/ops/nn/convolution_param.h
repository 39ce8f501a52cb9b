// Convolution's parameters as MXNet declares them, shared by Convolution, the fused convolution
// the graph optimizer makes (convolution.cc) and the pre-1.0 Convolution_v1 (legacy_forms.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "hybridnet/param.h"
#include "hybridnet/shape.h"
#include "kernels/convolution_spec.h"
#include "kernels/layout.h"

namespace hybridnet {

enum class CudnnTune { kOff, kLimitedWorkspace, kFastest };

inline const EnumNames<CudnnTune>& CudnnTuneNames() {
  static const EnumNames<CudnnTune> names = {{"off", CudnnTune::kOff},
                                             {"limited_workspace", CudnnTune::kLimitedWorkspace},
                                             {"fastest", CudnnTune::kFastest}};
  return names;
}

struct ConvolutionParam {
  std::vector<int64_t> kernel;
  std::vector<int64_t> stride;
  std::vector<int64_t> dilate;
  std::vector<int64_t> pad;
  uint32_t num_filter = 0;
  uint32_t num_group = 1;
  int64_t workspace = 1024;
  bool no_bias = false;
  std::optional<CudnnTune> cudnn_tune;
  bool cudnn_off = false;
  std::optional<internal::Layout> layout;

  template <typename P>
  static void DeclareFields(ParamDeclarer<P>* d) {
    d->template Field<std::vector<int64_t>>("kernel", &P::kernel)
        .Required()
        .Describe("Convolution kernel size: (w,), (h, w) or (d, h, w)");
    d->template Field<std::vector<int64_t>>("stride", &P::stride)
        .Default({})
        .Describe(
            "Convolution stride: (w,), (h, w) or (d, h, w). Defaults to 1 for each "
            "dimension.");
    d->template Field<std::vector<int64_t>>("dilate", &P::dilate)
        .Default({})
        .Describe(
            "Convolution dilate: (w,), (h, w) or (d, h, w). Defaults to 1 for each "
            "dimension.");
    d->template Field<std::vector<int64_t>>("pad", &P::pad)
        .Default({})
        .Describe("Zero pad for convolution: (w,), (h, w) or (d, h, w). Defaults to no padding.");
    d->template Field<uint32_t>("num_filter", &P::num_filter)
        .Required()
        .Min(1)
        .Describe("Convolution filter(channel) number");
    d->template Field<uint32_t>("num_group", &P::num_group)
        .Default(1u)
        .Min(1)
        .Describe("Number of group partitions.");
    d->template Field<int64_t>("workspace", &P::workspace)
        .Default(int64_t{1024})
        .Min(0)
        .Describe(
            "Maximum temporary workspace allowed (MB) in convolution. Accepted for "
            "compatibility; hybridnet's kernels size their workspace themselves.");
    d->template Field<bool>("no_bias", &P::no_bias)
        .Default(false)
        .Describe("Whether to disable bias parameter.");
    d->template Field<CudnnTune>("cudnn_tune", &P::cudnn_tune, CudnnTuneNames())
        .Default(std::nullopt)
        .Describe(
            "Whether to pick convolution algo by running performance test. Ignored on "
            "CPU.");
    d->template Field<bool>("cudnn_off", &P::cudnn_off)
        .Default(false)
        .Describe("Turn off cudnn for this layer. Ignored on CPU.");
  }
  static void Declare(ParamDeclarer<ConvolutionParam>* d) {
    DeclareFields(d);
    d->Field("layout", &ConvolutionParam::layout, internal::ConvLayoutNames())
        .Default(std::nullopt)
        .Describe(
            "Set layout for input, output and weight. Empty for default layout: NCW for "
            "1d, NCHW for 2d and NCDHW for 3d. NHWC and NDHWC are only supported on GPU.");
  }
};

/// The kernel call of a Convolution with parameters `p` for data x into output y (channel-first or
/// channel-last shapes; with data_channel_first, x alone is channel-first).
internal::ConvSpec ConvolutionSpec(const ConvolutionParam& p, const Shape& x, const Shape& y,
                                   bool channel_last, bool data_channel_first = false);

}  // namespace hybridnet
