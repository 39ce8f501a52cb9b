// Layers of convolutional networks with MXNet 1.x gluon's names, attributes and deferred
// initialization: convolutions (Conv1D/2D/3D and their transposes), pooling (max, average,
// global), BatchNorm, the LeakyReLU family (LeakyReLU, PReLU, ELU, SELU, GELU), and the
// containers HybridConcurrent, Concurrent and Identity.
//
//   auto net = std::make_shared<HybridSequential>();
//   net->Add(std::make_shared<Conv2D>(64, 7, 2, 3),             // channels, kernel, stride, pad
//            std::make_shared<BatchNorm>(),
//            std::make_shared<Activation>("relu"),
//            std::make_shared<MaxPool2D>(3, 2, 1),
//            std::make_shared<GlobalAvgPool2D>(), std::make_shared<Dense>(10));
//   net->Initialize();
//   NDArray y = (*net)(NDArray::RandomNormal({1, 3, 224, 224}));  // input channels inferred
//
// Each layer writes the op attributes MXNet's layer writes (e.g. Conv2D: dilate, kernel, layout,
// no_bias, num_filter, num_group, pad, stride), names its op "<prefix>fwd", and creates its
// parameters with 0 for the dimensions known only at the first forward.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "hybridnet/gluon/block.h"
#include "hybridnet/gluon/nn.h"

namespace hybridnet {
namespace gluon {

/// An int or a tuple of ints, as MXNet layers take kernel sizes, strides and padding:
/// Conv2D(64, 3) equals Conv2D(64, {3, 3}). Empty means "not given" (None).
class IntTuple {
 public:
  IntTuple() = default;
  IntTuple(int64_t value) : values_{value}, scalar_(true) {}  // NOLINT: implicit by design
  IntTuple(std::initializer_list<int64_t> values) : values_(values) {}
  IntTuple(std::vector<int64_t> values) : values_(std::move(values)) {}  // NOLINT

  bool empty() const { return values_.empty(); }
  const std::vector<int64_t>& values() const { return values_; }
  /// The values for `rank` spatial dimensions: a single int is repeated; a tuple must have
  /// `rank` entries (kInvalidArgument naming `what` otherwise).
  std::vector<int64_t> Expand(size_t rank, const char* what) const;

 private:
  std::vector<int64_t> values_;
  bool scalar_ = false;
};

/// MXNet's _Conv: Convolution (or Deconvolution) + optional activation. Use Conv1D/2D/3D and
/// Conv1D/2D/3DTranspose.
class ConvBase : public HybridBlock {
 public:
  NDArray Forward(const NDArray& x) override;
  const ParameterPtr& weight() const { return weight_; }
  const ParameterPtr& bias() const { return bias_; }
  /// "Conv2D(3 -> 64, kernel_size=(7, 7), stride=(2, 2), padding=(3, 3), bias=False)".
  std::string ToString() override;

 protected:
  struct Spec {
    const char* class_name;
    const char* op_name;  ///< "Convolution" or "Deconvolution"
    size_t rank;
    int64_t channels;
    IntTuple kernel_size, strides, padding, output_padding, dilation;
    int64_t groups;
    std::string layout, activation;
    bool use_bias;
    InitializerPtr weight_initializer, bias_initializer;
    int64_t in_channels;
  };
  ConvBase(const Spec& spec, std::optional<std::string> prefix);
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

/// 1-D convolution over (N, C, W) input (layout NCW).
class Conv1D : public ConvBase {
 public:
  Conv1D(int64_t channels,
         IntTuple kernel_size,
         IntTuple strides = 1,
         IntTuple padding = 0,
         IntTuple dilation = 1,
         int64_t groups = 1,
         const std::string& layout = "NCW",
         const std::string& activation = "",
         bool use_bias = true,
         InitializerPtr weight_initializer = nullptr,
         InitializerPtr bias_initializer = Zero(),
         int64_t in_channels = 0,
         std::optional<std::string> prefix = std::nullopt);
};

/// 2-D convolution over (N, C, H, W) input (layout NCHW). in_channels 0 = inferred.
class Conv2D : public ConvBase {
 public:
  Conv2D(int64_t channels,
         IntTuple kernel_size,
         IntTuple strides = 1,
         IntTuple padding = 0,
         IntTuple dilation = 1,
         int64_t groups = 1,
         const std::string& layout = "NCHW",
         const std::string& activation = "",
         bool use_bias = true,
         InitializerPtr weight_initializer = nullptr,
         InitializerPtr bias_initializer = Zero(),
         int64_t in_channels = 0,
         std::optional<std::string> prefix = std::nullopt);
};

/// 3-D convolution over (N, C, D, H, W) input (layout NCDHW).
class Conv3D : public ConvBase {
 public:
  Conv3D(int64_t channels,
         IntTuple kernel_size,
         IntTuple strides = 1,
         IntTuple padding = 0,
         IntTuple dilation = 1,
         int64_t groups = 1,
         const std::string& layout = "NCDHW",
         const std::string& activation = "",
         bool use_bias = true,
         InitializerPtr weight_initializer = nullptr,
         InitializerPtr bias_initializer = Zero(),
         int64_t in_channels = 0,
         std::optional<std::string> prefix = std::nullopt);
};

/// Transposed 1-D convolution (Deconvolution); output_padding is MXNet's adj.
class Conv1DTranspose : public ConvBase {
 public:
  Conv1DTranspose(int64_t channels,
                  IntTuple kernel_size,
                  IntTuple strides = 1,
                  IntTuple padding = 0,
                  IntTuple output_padding = 0,
                  IntTuple dilation = 1,
                  int64_t groups = 1,
                  const std::string& layout = "NCW",
                  const std::string& activation = "",
                  bool use_bias = true,
                  InitializerPtr weight_initializer = nullptr,
                  InitializerPtr bias_initializer = Zero(),
                  int64_t in_channels = 0,
                  std::optional<std::string> prefix = std::nullopt);
};

/// Transposed 2-D convolution (Deconvolution).
class Conv2DTranspose : public ConvBase {
 public:
  Conv2DTranspose(int64_t channels,
                  IntTuple kernel_size,
                  IntTuple strides = 1,
                  IntTuple padding = 0,
                  IntTuple output_padding = 0,
                  IntTuple dilation = 1,
                  int64_t groups = 1,
                  const std::string& layout = "NCHW",
                  const std::string& activation = "",
                  bool use_bias = true,
                  InitializerPtr weight_initializer = nullptr,
                  InitializerPtr bias_initializer = Zero(),
                  int64_t in_channels = 0,
                  std::optional<std::string> prefix = std::nullopt);
};

/// Transposed 3-D convolution (Deconvolution).
class Conv3DTranspose : public ConvBase {
 public:
  Conv3DTranspose(int64_t channels,
                  IntTuple kernel_size,
                  IntTuple strides = 1,
                  IntTuple padding = 0,
                  IntTuple output_padding = 0,
                  IntTuple dilation = 1,
                  int64_t groups = 1,
                  const std::string& layout = "NCDHW",
                  const std::string& activation = "",
                  bool use_bias = true,
                  InitializerPtr weight_initializer = nullptr,
                  InitializerPtr bias_initializer = Zero(),
                  int64_t in_channels = 0,
                  std::optional<std::string> prefix = std::nullopt);
};

/// MXNet's _Pooling (prefix alias "pool"). Use the concrete pooling layers below.
class PoolingBase : public HybridBlock {
 public:
  NDArray Forward(const NDArray& x) override;

 protected:
  struct Spec {
    const char* class_name;
    size_t rank;
    IntTuple pool_size, strides, padding;  ///< strides empty = pool_size
    bool ceil_mode, global_pool;
    std::string pool_type, layout;
    std::optional<bool> count_include_pad;
  };
  PoolingBase(const Spec& spec, std::optional<std::string> prefix);
  std::string Describe() override;

 private:
  std::string class_name_;
  NodeAttrs attrs_;
};

class MaxPool1D : public PoolingBase {
 public:
  explicit MaxPool1D(IntTuple pool_size = 2,
                     IntTuple strides = {},
                     IntTuple padding = 0,
                     const std::string& layout = "NCW",
                     bool ceil_mode = false,
                     std::optional<std::string> prefix = std::nullopt);
};
class MaxPool2D : public PoolingBase {
 public:
  explicit MaxPool2D(IntTuple pool_size = 2,
                     IntTuple strides = {},
                     IntTuple padding = 0,
                     const std::string& layout = "NCHW",
                     bool ceil_mode = false,
                     std::optional<std::string> prefix = std::nullopt);
};
class MaxPool3D : public PoolingBase {
 public:
  explicit MaxPool3D(IntTuple pool_size = 2,
                     IntTuple strides = {},
                     IntTuple padding = 0,
                     const std::string& layout = "NCDHW",
                     bool ceil_mode = false,
                     std::optional<std::string> prefix = std::nullopt);
};
class AvgPool1D : public PoolingBase {
 public:
  explicit AvgPool1D(IntTuple pool_size = 2,
                     IntTuple strides = {},
                     IntTuple padding = 0,
                     bool ceil_mode = false,
                     const std::string& layout = "NCW",
                     bool count_include_pad = true,
                     std::optional<std::string> prefix = std::nullopt);
};
class AvgPool2D : public PoolingBase {
 public:
  explicit AvgPool2D(IntTuple pool_size = 2,
                     IntTuple strides = {},
                     IntTuple padding = 0,
                     bool ceil_mode = false,
                     const std::string& layout = "NCHW",
                     bool count_include_pad = true,
                     std::optional<std::string> prefix = std::nullopt);
};
class AvgPool3D : public PoolingBase {
 public:
  explicit AvgPool3D(IntTuple pool_size = 2,
                     IntTuple strides = {},
                     IntTuple padding = 0,
                     bool ceil_mode = false,
                     const std::string& layout = "NCDHW",
                     bool count_include_pad = true,
                     std::optional<std::string> prefix = std::nullopt);
};
class GlobalMaxPool1D : public PoolingBase {
 public:
  explicit GlobalMaxPool1D(const std::string& layout = "NCW",
                           std::optional<std::string> prefix = std::nullopt);
};
class GlobalMaxPool2D : public PoolingBase {
 public:
  explicit GlobalMaxPool2D(const std::string& layout = "NCHW",
                           std::optional<std::string> prefix = std::nullopt);
};
class GlobalMaxPool3D : public PoolingBase {
 public:
  explicit GlobalMaxPool3D(const std::string& layout = "NCDHW",
                           std::optional<std::string> prefix = std::nullopt);
};
class GlobalAvgPool1D : public PoolingBase {
 public:
  explicit GlobalAvgPool1D(const std::string& layout = "NCW",
                           std::optional<std::string> prefix = std::nullopt);
};
class GlobalAvgPool2D : public PoolingBase {
 public:
  explicit GlobalAvgPool2D(const std::string& layout = "NCHW",
                           std::optional<std::string> prefix = std::nullopt);
};
class GlobalAvgPool3D : public PoolingBase {
 public:
  explicit GlobalAvgPool3D(const std::string& layout = "NCDHW",
                           std::optional<std::string> prefix = std::nullopt);
};

/// Batch normalization over `axis`. Parameters gamma, beta (trained; not differentiable when
/// scale/center is false) and the auxiliary states running_mean, running_var (never
/// differentiable; exported as "aux:"). Inference uses the running statistics.
class BatchNorm : public HybridBlock {
 public:
  explicit BatchNorm(int axis = 1,
                     double momentum = 0.9,
                     double epsilon = 1e-5,
                     bool center = true,
                     bool scale = true,
                     bool use_global_stats = false,
                     InitializerPtr beta_initializer = Zero(),
                     InitializerPtr gamma_initializer = One(),
                     InitializerPtr running_mean_initializer = Zero(),
                     InitializerPtr running_variance_initializer = One(),
                     int64_t in_channels = 0,
                     std::optional<std::string> prefix = std::nullopt);
  NDArray Forward(const NDArray& x) override;
  const ParameterPtr& gamma() const { return gamma_; }
  const ParameterPtr& beta() const { return beta_; }
  const ParameterPtr& running_mean() const { return running_mean_; }
  const ParameterPtr& running_var() const { return running_var_; }

 protected:
  std::string Describe() override;

 private:
  ParameterPtr gamma_, beta_, running_mean_, running_var_;
  NodeAttrs attrs_;
};

/// y = x > 0 ? x : alpha * x.
class LeakyReLU : public HybridBlock {
 public:
  explicit LeakyReLU(double alpha, std::optional<std::string> prefix = std::nullopt);
  NDArray Forward(const NDArray& x) override;

 protected:
  std::string Describe() override;

 private:
  double alpha_;
  NodeAttrs attrs_;
};

/// Parametric ReLU: a learned slope per channel (in_channels) or one shared slope (1).
class PReLU : public HybridBlock {
 public:
  explicit PReLU(InitializerPtr alpha_initializer = Constant(0.25f),
                 int64_t in_channels = 1,
                 std::optional<std::string> prefix = std::nullopt);
  NDArray Forward(const NDArray& x) override;
  const ParameterPtr& alpha() const { return alpha_; }

 private:
  ParameterPtr alpha_;
  NodeAttrs attrs_;
};

/// y = x > 0 ? x : alpha * (exp(x) - 1).
class ELU : public HybridBlock {
 public:
  explicit ELU(double alpha = 1.0, std::optional<std::string> prefix = std::nullopt);
  NDArray Forward(const NDArray& x) override;

 private:
  NodeAttrs attrs_;
};

/// Scaled ELU with the fixed constants of Klambauer et al.
class SELU : public HybridBlock {
 public:
  explicit SELU(std::optional<std::string> prefix = std::nullopt);
  NDArray Forward(const NDArray& x) override;

 private:
  NodeAttrs attrs_;
};

/// Gaussian error linear unit (erf form).
class GELU : public HybridBlock {
 public:
  explicit GELU(std::optional<std::string> prefix = std::nullopt);
  NDArray Forward(const NDArray& x) override;

 private:
  NodeAttrs attrs_;
};

/// Runs every child on the same input and concatenates the outputs along `axis` (one Concat
/// op, "<prefix>concat<n>").
class HybridConcurrent : public SequentialOf<HybridBlock> {
 public:
  explicit HybridConcurrent(int axis = -1, std::optional<std::string> prefix = std::nullopt);
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
  explicit Concurrent(int axis = -1, std::optional<std::string> prefix = std::nullopt);
  std::vector<NDArray> ForwardMany(const std::vector<NDArray>& inputs) override;

 private:
  int axis_;
};

/// Passes its input through (a branch of a residual or concurrent block); emits no op.
class Identity : public HybridBlock {
 public:
  explicit Identity(std::optional<std::string> prefix = std::nullopt);
  NDArray Forward(const NDArray& x) override;
};

}  // namespace gluon
}  // namespace hybridnet
