// Layers of convolutional networks with MXNet 1.x gluon's names, attributes and deferred
// initialization: convolutions (Conv1D/2D/3D and their transposes), pooling (max, average,
// global), BatchNorm, the LeakyReLU family (LeakyReLU, PReLU, ELU, SELU, GELU), and the
// containers HybridConcurrent, Concurrent and Identity.
//
// Each family takes one options struct of MXNet's keyword arguments (see layer_options.h):
//
//   auto net = std::make_shared<HybridSequential>();
//   net->Add(std::make_shared<Conv2D>(
//                ConvOptions().set_channels(64).set_kernel_size(7).set_strides(2).set_padding(3)),
//            std::make_shared<BatchNorm>(),
//            std::make_shared<Activation>("relu"),
//            std::make_shared<MaxPool2D>(PoolOptions().set_pool_size(3).set_strides(2).set_padding(1)),
//            std::make_shared<GlobalAvgPool2D>(), std::make_shared<Dense>(10));
//   net->Initialize();
//   NDArray y = (*net)(NDArray::RandomNormal({1, 3, 224, 224}));  // input channels inferred
//
// (C++20: Conv2D(ConvOptions{.channels = 64, .kernel_size = 7, .strides = 2, .padding = 3}).)
// Each layer writes the op attributes MXNet's layer writes (e.g. Conv2D: dilate, kernel, layout,
// no_bias, num_filter, num_group, pad, stride), names its op "<prefix>fwd", and creates its
// parameters with 0 for the dimensions known only at the first forward.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hybridnet/gluon/block.h"
#include "hybridnet/gluon/layer_options.h"
#include "hybridnet/gluon/nn.h"

namespace hybridnet {
namespace gluon {

/// The keyword arguments of MXNet's convolutions (_Conv): Conv1D/2D/3D and their transposes.
/// Each field has a setter for chaining, `set_<field>(value)` (HN_LAYER_OPTION).
struct ConvOptions {
  HN_LAYER_OPTIONS_BEGIN;
  HN_REQUIRED_LAYER_OPTION(ConvOptions, int64_t, channels) = 0;  ///< output channels, >= 1
  /// The kernel's size per spatial dimension.
  HN_REQUIRED_LAYER_OPTION(ConvOptions, IntTuple, kernel_size) = {};
  /// Step of the kernel per spatial dimension.
  HN_LAYER_OPTION(ConvOptions, IntTuple, strides) = 1;
  /// Zeros added on both sides of each spatial dimension.
  HN_LAYER_OPTION(ConvOptions, IntTuple, padding) = 0;
  /// Transposed convolutions only (MXNet's adj).
  HN_LAYER_OPTION(ConvOptions, IntTuple, output_padding) = 0;
  /// Spacing of the kernel's taps (MXNet's dilate).
  HN_LAYER_OPTION(ConvOptions, IntTuple, dilation) = 1;
  /// Channel groups convolved separately (MXNet's num_group; channels == groups: depthwise).
  HN_LAYER_OPTION(ConvOptions, int64_t, groups) = 1;
  /// "" = NCW, NCHW or NCDHW by rank
  HN_LAYER_OPTION(ConvOptions, std::string, layout) = {};
  /// "" (none), relu, sigmoid, tanh, softrelu, softsign
  HN_LAYER_OPTION(ConvOptions, std::string, activation) = {};
  /// Whether the layer has a bias.
  HN_LAYER_OPTION(ConvOptions, bool, use_bias) = true;
  /// nullptr = the initializer given to Initialize()
  HN_LAYER_OPTION(ConvOptions, InitializerPtr, weight_initializer) = {};
  /// The bias's initializer.
  HN_LAYER_OPTION(ConvOptions, InitializerPtr, bias_initializer) = Zero();
  HN_LAYER_OPTION(ConvOptions, int64_t, in_channels) = 0;  ///< 0 = inferred at the first forward
  HN_LAYER_OPTIONS_END;
};

/// MXNet's _Conv: Convolution (or Deconvolution) + optional activation. Use Conv1D/2D/3D and
/// Conv1D/2D/3DTranspose.
class ConvBase : public HybridBlock {
 public:
  NDArray Forward(const NDArray& x) override;
  /// The weight: (channels, in_channels / groups, kernel...), transposed: (in_channels,
  /// channels / groups, kernel...).
  const ParameterPtr& weight() const { return weight_; }
  /// The bias, (channels); nullptr without use_bias.
  const ParameterPtr& bias() const { return bias_; }
  /// "Conv2D(3 -> 64, kernel_size=(7, 7), stride=(2, 2), padding=(3, 3), bias=False)".
  std::string ToString() override;

 protected:
  /// Checks the options (kInvalidArgument naming the layer: channels < 1, no kernel_size,
  /// groups < 1, a layout or tuple that does not fit `rank`, output_padding without transpose).
  ConvBase(size_t rank, bool transpose, const ConvOptions& options,
           std::optional<std::string> prefix);
  /// "Conv2D(3 -> 64, kernel_size=...)", as ToString.
  std::string Describe() override;

 private:
  std::string class_name_;
  bool transpose_;
  std::vector<int64_t> kernel_, stride_, pad_, dilate_, adj_;
  int64_t groups_;
  std::string activation_;
  ParameterPtr weight_, bias_;
  NodeAttrs attrs_;
};

/// A `Rank`-D convolution (Transpose: Deconvolution) over NCW / NCHW / NCDHW input.
template <size_t Rank, bool Transpose>
class Conv : public ConvBase {
 public:
  /// A convolution with these options; `prefix` as in Block's constructor.
  explicit Conv(const ConvOptions& options, std::optional<std::string> prefix = std::nullopt)
      : ConvBase(Rank, Transpose, options, std::move(prefix)) {}
};

/// MXNet's Conv1D ... Conv3DTranspose.
///@{
using Conv1D = Conv<1, false>;
using Conv2D = Conv<2, false>;
using Conv3D = Conv<3, false>;
using Conv1DTranspose = Conv<1, true>;
using Conv2DTranspose = Conv<2, true>;
using Conv3DTranspose = Conv<3, true>;
///@}

/// The keyword arguments of MXNet's pooling layers (MaxPool, AvgPool; the global ones take only
/// the layout). Each field has a setter for chaining, `set_<field>(value)` (HN_LAYER_OPTION).
struct PoolOptions {
  HN_LAYER_OPTIONS_BEGIN;
  /// The window per spatial dimension.
  HN_LAYER_OPTION(PoolOptions, IntTuple, pool_size) = 2;
  HN_LAYER_OPTION(PoolOptions, IntTuple, strides) = {};  ///< empty (None) = pool_size
  /// Padding on both sides of each spatial dimension.
  HN_LAYER_OPTION(PoolOptions, IntTuple, padding) = 0;
  HN_LAYER_OPTION(PoolOptions, bool, ceil_mode) = false;  ///< pooling_convention "full"
  /// "" = NCW, NCHW or NCDHW by rank
  HN_LAYER_OPTION(PoolOptions, std::string, layout) = {};
  HN_LAYER_OPTION(PoolOptions, bool, count_include_pad) = true;  ///< average pooling only
  HN_LAYER_OPTIONS_END;
};

/// Max or average pooling.
enum class PoolType { kMax, kAvg };

/// MXNet's _Pooling (prefix alias "pool"). Use the pooling layers below.
class PoolingBase : public HybridBlock {
 public:
  NDArray Forward(const NDArray& x) override;

 protected:
  /// `global` pools the whole spatial extent (the options' layout only is read); kInvalidArgument
  /// for a layout or tuple that does not fit `rank`.
  PoolingBase(size_t rank, PoolType type, bool global, const PoolOptions& options,
              std::optional<std::string> prefix);
  /// "MaxPool2D(size=(3, 3), stride=..., ...)", as MXNet prints it.
  std::string Describe() override;

 private:
  std::string class_name_;
  NodeAttrs attrs_;
};

/// MaxPool1D ... AvgPool3D.
template <size_t Rank, PoolType Type>
class Pool : public PoolingBase {
 public:
  /// A pooling layer with these options; `prefix` as in Block's constructor.
  explicit Pool(const PoolOptions& options = {}, std::optional<std::string> prefix = std::nullopt)
      : PoolingBase(Rank, Type, /*global=*/false, options, std::move(prefix)) {}
};

/// GlobalMaxPool1D ... GlobalAvgPool3D: the whole spatial extent; `layout` "" = by rank.
template <size_t Rank, PoolType Type>
class GlobalPool : public PoolingBase {
 public:
  /// A global pooling layer over `layout`; `prefix` as in Block's constructor.
  explicit GlobalPool(const std::string& layout = "",
                      std::optional<std::string> prefix = std::nullopt)
      : PoolingBase(Rank, Type, /*global=*/true, PoolOptions().set_layout(layout),
                    std::move(prefix)) {}
};

/// MXNet's pooling layers, by rank and type.
///@{
using MaxPool1D = Pool<1, PoolType::kMax>;
using MaxPool2D = Pool<2, PoolType::kMax>;
using MaxPool3D = Pool<3, PoolType::kMax>;
using AvgPool1D = Pool<1, PoolType::kAvg>;
using AvgPool2D = Pool<2, PoolType::kAvg>;
using AvgPool3D = Pool<3, PoolType::kAvg>;
using GlobalMaxPool1D = GlobalPool<1, PoolType::kMax>;
using GlobalMaxPool2D = GlobalPool<2, PoolType::kMax>;
using GlobalMaxPool3D = GlobalPool<3, PoolType::kMax>;
using GlobalAvgPool1D = GlobalPool<1, PoolType::kAvg>;
using GlobalAvgPool2D = GlobalPool<2, PoolType::kAvg>;
using GlobalAvgPool3D = GlobalPool<3, PoolType::kAvg>;
///@}

/// The keyword arguments of MXNet's BatchNorm.
/// Each field has a setter for chaining, `set_<field>(value)` (HN_LAYER_OPTION).
struct BatchNormOptions {
  HN_LAYER_OPTIONS_BEGIN;
  HN_LAYER_OPTION(BatchNormOptions, int, axis) = 1;  ///< the channel axis
  /// Update rate of the running statistics in training; written to the op's attributes.
  HN_LAYER_OPTION(BatchNormOptions, double, momentum) = 0.9;
  /// Added to the variance before the square root (MXNet's eps).
  HN_LAYER_OPTION(BatchNormOptions, double, epsilon) = 1e-5;
  HN_LAYER_OPTION(BatchNormOptions, bool, center) = true;  ///< learn beta
  HN_LAYER_OPTION(BatchNormOptions, bool, scale) = true;   ///< learn gamma (else fix_gamma)
  /// Use the running statistics in training too.
  HN_LAYER_OPTION(BatchNormOptions, bool, use_global_stats) = false;
  /// The initializer of beta.
  HN_LAYER_OPTION(BatchNormOptions, InitializerPtr, beta_initializer) = Zero();
  /// The initializer of gamma.
  HN_LAYER_OPTION(BatchNormOptions, InitializerPtr, gamma_initializer) = One();
  /// The initializer of running_mean.
  HN_LAYER_OPTION(BatchNormOptions, InitializerPtr, running_mean_initializer) = Zero();
  /// The initializer of running_var.
  HN_LAYER_OPTION(BatchNormOptions, InitializerPtr, running_variance_initializer) = One();
  HN_LAYER_OPTION(BatchNormOptions, int64_t, in_channels) = 0;  ///< 0 = inferred
  HN_LAYER_OPTIONS_END;
};

/// Batch normalization over `axis`. Parameters gamma, beta (trained; not differentiable when
/// scale/center is false) and the auxiliary states running_mean, running_var (never
/// differentiable; exported as "aux:"). Inference uses the running statistics.
class BatchNorm : public HybridBlock {
 public:
  /// A BatchNorm layer (kInvalidArgument when in_channels < 0); `prefix` as in Block's constructor.
  explicit BatchNorm(const BatchNormOptions& options = {},
                     std::optional<std::string> prefix = std::nullopt);
  NDArray Forward(const NDArray& x) override;
  /// The scale, (in_channels).
  const ParameterPtr& gamma() const { return gamma_; }
  /// The shift, (in_channels).
  const ParameterPtr& beta() const { return beta_; }
  /// The running mean, an auxiliary state.
  const ParameterPtr& running_mean() const { return running_mean_; }
  /// The running variance, an auxiliary state.
  const ParameterPtr& running_var() const { return running_var_; }

 protected:
  /// "BatchNorm(axis=1, eps=1e-05, ...)", as MXNet prints it.
  std::string Describe() override;

 private:
  ParameterPtr gamma_, beta_, running_mean_, running_var_;
  NodeAttrs attrs_;
};

/// LeakyReLU's keyword argument.
/// Its field has a setter for chaining, `set_<field>(value)` (HN_LAYER_OPTION).
struct LeakyReLUOptions {
  HN_LAYER_OPTIONS_BEGIN;
  HN_REQUIRED_LAYER_OPTION(LeakyReLUOptions, double, alpha) = 0;  ///< the slope, >= 0
  HN_LAYER_OPTIONS_END;
};

/// y = x > 0 ? x : alpha * x.
class LeakyReLU : public HybridBlock {
 public:
  /// A LeakyReLU with the options' slope (kInvalidArgument when it is negative).
  explicit LeakyReLU(const LeakyReLUOptions& options,
                     std::optional<std::string> prefix = std::nullopt);
  /// The slope `alpha` for negative inputs, >= 0 (kInvalidArgument otherwise).
  explicit LeakyReLU(double alpha, std::optional<std::string> prefix = std::nullopt);
  NDArray Forward(const NDArray& x) override;

 protected:
  /// "LeakyReLU(0.1)".
  std::string Describe() override;

 private:
  double alpha_;
  NodeAttrs attrs_;
};

/// PReLU's keyword arguments.
/// Each field has a setter for chaining, `set_<field>(value)` (HN_LAYER_OPTION).
struct PReLUOptions {
  HN_LAYER_OPTIONS_BEGIN;
  /// The slopes' initializer.
  HN_LAYER_OPTION(PReLUOptions, InitializerPtr, alpha_initializer) = Constant(0.25f);
  HN_LAYER_OPTION(PReLUOptions, int64_t, in_channels) = 1;  ///< 1 = one shared slope
  HN_LAYER_OPTIONS_END;
};

/// Parametric ReLU: a learned slope per channel (in_channels) or one shared slope (1).
class PReLU : public HybridBlock {
 public:
  /// A PReLU with the options' slopes and initializer.
  explicit PReLU(const PReLUOptions& options, std::optional<std::string> prefix = std::nullopt);
  /// `in_channels` slopes (>= 1, kInvalidArgument otherwise) initialized by `alpha_initializer`.
  explicit PReLU(InitializerPtr alpha_initializer = Constant(0.25f), int64_t in_channels = 1,
                 std::optional<std::string> prefix = std::nullopt);
  NDArray Forward(const NDArray& x) override;
  /// The learned slopes, (in_channels).
  const ParameterPtr& alpha() const { return alpha_; }

 private:
  ParameterPtr alpha_;
  NodeAttrs attrs_;
};

/// ELU's keyword argument.
/// Its field has a setter for chaining, `set_<field>(value)` (HN_LAYER_OPTION).
struct ELUOptions {
  HN_LAYER_OPTIONS_BEGIN;
  HN_LAYER_OPTION(ELUOptions, double, alpha) = 1.0;  ///< the scale for negative inputs
  HN_LAYER_OPTIONS_END;
};

/// y = x > 0 ? x : alpha * (exp(x) - 1).
class ELU : public HybridBlock {
 public:
  /// An ELU with the options' alpha.
  explicit ELU(const ELUOptions& options, std::optional<std::string> prefix = std::nullopt);
  /// An ELU with scale `alpha` for negative inputs.
  explicit ELU(double alpha = 1.0, std::optional<std::string> prefix = std::nullopt);
  NDArray Forward(const NDArray& x) override;

 private:
  NodeAttrs attrs_;
};

/// Scaled ELU with the fixed constants of Klambauer et al.
class SELU : public HybridBlock {
 public:
  /// A SELU layer.
  explicit SELU(std::optional<std::string> prefix = std::nullopt);
  NDArray Forward(const NDArray& x) override;

 private:
  NodeAttrs attrs_;
};

/// Gaussian error linear unit (erf form).
class GELU : public HybridBlock {
 public:
  /// A GELU layer.
  explicit GELU(std::optional<std::string> prefix = std::nullopt);
  NDArray Forward(const NDArray& x) override;

 private:
  NodeAttrs attrs_;
};

/// The keyword argument of HybridConcurrent and Concurrent.
/// Its field has a setter for chaining, `set_<field>(value)` (HN_LAYER_OPTION).
struct ConcurrentOptions {
  HN_LAYER_OPTIONS_BEGIN;
  HN_LAYER_OPTION(ConcurrentOptions, int, axis) = -1;  ///< the axis the outputs are joined on
  HN_LAYER_OPTIONS_END;
};

/// Runs every child on the same input and concatenates the outputs along `axis` (one Concat
/// op, "<prefix>concat<n>").
class HybridConcurrent : public SequentialOf<HybridBlock> {
 public:
  /// An empty container concatenating along the options' axis; add children with Add.
  explicit HybridConcurrent(const ConcurrentOptions& options,
                            std::optional<std::string> prefix = std::nullopt);
  /// An empty container concatenating along `axis`; add children with Add.
  explicit HybridConcurrent(int axis = -1, std::optional<std::string> prefix = std::nullopt);
  /// Runs every child on the one input and concatenates; kInvalidArgument for several inputs or no
  /// children.
  std::vector<NDArray> ForwardMany(const std::vector<NDArray>& inputs) override;

 protected:
  /// Node name of the Concat op; empty = automatic ("concat<n>" in this block's scope).
  std::string concat_name_;

 private:
  int axis_;
};

/// Like HybridConcurrent, for children that are plain Blocks (not hybridizable).
class Concurrent : public SequentialOf<Block> {
 public:
  /// An empty container concatenating along the options' axis; add children with Add.
  explicit Concurrent(const ConcurrentOptions& options,
                      std::optional<std::string> prefix = std::nullopt);
  /// An empty container concatenating along `axis`; add children with Add.
  explicit Concurrent(int axis = -1, std::optional<std::string> prefix = std::nullopt);
  /// Runs every child on the one input and concatenates; kInvalidArgument for several inputs or no
  /// children.
  std::vector<NDArray> ForwardMany(const std::vector<NDArray>& inputs) override;

 private:
  int axis_;
};

/// Passes its input through (a branch of a residual or concurrent block); emits no op.
class Identity : public HybridBlock {
 public:
  /// An Identity block.
  explicit Identity(std::optional<std::string> prefix = std::nullopt);
  NDArray Forward(const NDArray& x) override;
};

}  // namespace gluon
}  // namespace hybridnet
