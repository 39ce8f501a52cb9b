// Layers with MXNet's names, attributes and deferred initialization.
#pragma once

#include <functional>
#include <string>

#include "hybridnet/gluon/block.h"
#include "hybridnet/gluon/initializer.h"
#include "hybridnet/gluon/layer_options.h"

namespace hybridnet {
namespace gluon {

/// Dense's keyword arguments (MXNet's names and defaults).
/// Each field has a setter for chaining, `set_<field>(value)` (HN_LAYER_OPTION).
struct DenseOptions {
  HN_LAYER_OPTIONS_BEGIN;
  HN_REQUIRED_LAYER_OPTION(DenseOptions, int64_t, units) = 0;  ///< output size, >= 1
  /// "" (none), relu, sigmoid, tanh, softrelu, softsign
  HN_LAYER_OPTION(DenseOptions, std::string, activation) = {};
  /// Whether the layer has a bias.
  HN_LAYER_OPTION(DenseOptions, bool, use_bias) = true;
  HN_LAYER_OPTION(DenseOptions, bool, flatten) = true;   ///< collapse all but the first axis
  HN_LAYER_OPTION(DenseOptions, int64_t, in_units) = 0;  ///< 0 = inferred at the first forward
  /// nullptr = the initializer given to Initialize()
  HN_LAYER_OPTION(DenseOptions, InitializerPtr, weight_initializer) = {};
  /// The bias's initializer.
  HN_LAYER_OPTION(DenseOptions, InitializerPtr, bias_initializer) = Zero();
  HN_LAYER_OPTIONS_END;
};

/// y = activation(x W^T + b).
class Dense : public HybridBlock {
 public:
  /// A Dense layer with these options (kInvalidArgument when units < 1 or in_units < 0); `prefix`
  /// as in Block's constructor.
  explicit Dense(const DenseOptions& options, std::optional<std::string> prefix = std::nullopt);
  /// Dense(256, "relu"): the usual two arguments, the others at their defaults.
  explicit Dense(int64_t units, const std::string& activation = "",
                 std::optional<std::string> prefix = std::nullopt);
  NDArray Forward(const NDArray& x) override;
  /// The weight, (units, in_units).
  const ParameterPtr& weight() const { return weight_; }
  /// The bias, (units); nullptr without use_bias.
  const ParameterPtr& bias() const { return bias_; }
  /// "Dense(512 -> 256, Activation(relu))", as MXNet prints it.
  std::string ToString() override;

 protected:
  /// "Dense(512 -> 256, Activation(relu))".
  std::string Describe() override;

 private:
  int64_t units_;
  std::string activation_;
  ParameterPtr weight_, bias_;
  NodeAttrs fc_attrs_;
};

/// Activation's keyword argument.
/// Its field has a setter for chaining, `set_<field>(value)` (HN_LAYER_OPTION).
struct ActivationOptions {
  HN_LAYER_OPTIONS_BEGIN;
  /// relu, sigmoid, tanh, softrelu, softsign (the op's act_type)
  HN_REQUIRED_LAYER_OPTION(ActivationOptions, std::string, activation) = {};
  HN_LAYER_OPTIONS_END;
};

/// act_type: relu, sigmoid, tanh, softrelu, softsign. Its prefix alias is the act_type.
class Activation : public HybridBlock {
 public:
  /// An activation layer of the options' activation.
  explicit Activation(const ActivationOptions& options,
                      std::optional<std::string> prefix = std::nullopt);
  /// An activation layer of `act_type`.
  explicit Activation(const std::string& act_type,
                      std::optional<std::string> prefix = std::nullopt);
  NDArray Forward(const NDArray& x) override;

 protected:
  /// "Activation(relu)".
  std::string Describe() override;

 private:
  std::string act_type_;
  NodeAttrs attrs_;
};

/// Dropout's keyword argument (MXNet's axes is not supported).
/// Its field has a setter for chaining, `set_<field>(value)` (HN_LAYER_OPTION).
struct DropoutOptions {
  HN_LAYER_OPTIONS_BEGIN;
  HN_REQUIRED_LAYER_OPTION(DropoutOptions, float, rate) = 0.f;  ///< in [0, 1]
  HN_LAYER_OPTIONS_END;
};

/// Identity at inference; rate 0 emits _copy as MXNet does.
class Dropout : public HybridBlock {
 public:
  /// Drops with the options' rate, in [0, 1] (kInvalidArgument otherwise).
  explicit Dropout(const DropoutOptions& options, std::optional<std::string> prefix = std::nullopt);
  /// Drops with probability `rate`, in [0, 1] (kInvalidArgument otherwise).
  explicit Dropout(float rate, std::optional<std::string> prefix = std::nullopt);
  NDArray Forward(const NDArray& x) override;

 protected:
  /// "Dropout(p = 0.5, axes=())", as MXNet prints it.
  std::string Describe() override;

 private:
  float rate_;
  NodeAttrs attrs_;
};

/// Collapses every axis but the first: (N, C, H, W) becomes (N, C*H*W).
class Flatten : public HybridBlock {
 public:
  /// A Flatten layer.
  explicit Flatten(std::optional<std::string> prefix = std::nullopt);
  NDArray Forward(const NDArray& x) override;

 private:
  NodeAttrs attrs_;
};

/// Wraps a function of NDArrays; not hybridizable.
class Lambda : public Block {
 public:
  /// Wraps `fn` (kInvalidArgument when empty).
  explicit Lambda(std::function<NDArray(const NDArray&)> fn,
                  std::optional<std::string> prefix = std::nullopt);
  NDArray Forward(const NDArray& x) override;

 private:
  std::function<NDArray(const NDArray&)> fn_;
};

/// Wraps a function written with hybridnet::op; hybridizable.
class HybridLambda : public HybridBlock {
 public:
  /// Wraps `fn` (kInvalidArgument when empty); it must use only hybridnet::op functions to be
  /// traceable.
  explicit HybridLambda(std::function<NDArray(const NDArray&)> fn,
                        std::optional<std::string> prefix = std::nullopt);
  NDArray Forward(const NDArray& x) override;

 private:
  std::function<NDArray(const NDArray&)> fn_;
};

}  // namespace gluon
}  // namespace hybridnet
