// BatchNorm's attributes and shape inference, shared by BatchNorm and
// _contrib_quantized_batch_norm (which takes MXNet's BatchNorm attributes unchanged).
#pragma once

#include <optional>
#include <vector>

#include "hybridnet/op.h"

namespace hybridnet {
namespace internal {

struct BatchNormParam {
  double eps = static_cast<double>(1e-3f);
  float momentum = 0.9f;
  bool fix_gamma = true;
  bool use_global_stats = false;
  bool output_mean_var = false;
  int axis = 1;
  bool cudnn_off = false;
  std::optional<float> min_calib_range;
  std::optional<float> max_calib_range;

  static void Declare(ParamDeclarer<BatchNormParam>* d) {
    // MXNet declares `double eps` with the default 1e-3f, i.e. 0.0010000000474974513.
    d->Field("eps", &BatchNormParam::eps)
        .Default(static_cast<double>(1e-3f))
        .Describe(
            "Epsilon to prevent div 0. Must be no less than CUDNN_BN_MIN_EPSILON defined "
            "in cudnn.h when using cudnn (usually 1e-5)");
    d->Field("momentum", &BatchNormParam::momentum)
        .Default(0.9f)
        .Describe("Momentum for moving average");
    d->Field("fix_gamma", &BatchNormParam::fix_gamma)
        .Default(true)
        .Describe("Fix gamma while training");
    d->Field("use_global_stats", &BatchNormParam::use_global_stats)
        .Default(false)
        .Describe(
            "Whether use global moving statistics instead of local batch-norm. This will "
            "force change batch-norm into a scale shift operator.");
    d->Field("output_mean_var", &BatchNormParam::output_mean_var)
        .Default(false)
        .Describe("Output the mean and inverse std ");
    d->Field("axis", &BatchNormParam::axis)
        .Default(1)
        .Describe("Specify which shape axis the channel is specified");
    d->Field("cudnn_off", &BatchNormParam::cudnn_off)
        .Default(false)
        .Describe("Do not select CUDNN operator, if available");
    d->Field("min_calib_range", &BatchNormParam::min_calib_range)
        .Default(std::nullopt)
        .Describe(
            "The minimum scalar value in the form of float32 obtained through "
            "calibration. If present, it will be used to by quantized batch norm op to "
            "calculate primitive scale. Note: this calib_range is to calib bn output.");
    d->Field("max_calib_range", &BatchNormParam::max_calib_range)
        .Default(std::nullopt)
        .Describe(
            "The maximum scalar value in the form of float32 obtained through "
            "calibration. If present, it will be used to by quantized batch norm op to "
            "calculate primitive scale. Note: this calib_range is to calib bn output.");
  }
};

/// BatchNorm's shapes: inputs (data, gamma, beta, moving_mean, moving_var), the per-channel
/// ones of the data's `axis` size; outputs the data's shape, then (mean, var) per channel.
bool BatchNormInferShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out);

}  // namespace internal
}  // namespace hybridnet
