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
struct DenseOptions {
  HN_LAYER_OPTIONS_BEGIN;
  HN_REQUIRED_LAYER_OPTION(DenseOptions, int64_t, units) = 0;  ///< output size, >= 1
  /// "" (none), relu, sigmoid, tanh, softrelu, softsign
  HN_LAYER_OPTION(DenseOptions, std::string, activation) = {};
  HN_LAYER_OPTION(DenseOptions, bool, use_bias) = true;
  HN_LAYER_OPTION(DenseOptions, bool, flatten) = true;  ///< collapse all but the first axis
  HN_LAYER_OPTION(DenseOptions, int64_t, in_units) = 0;  ///< 0 = inferred at the first forward
  /// nullptr = the initializer given to Initialize()
  HN_LAYER_OPTION(DenseOptions, InitializerPtr, weight_initializer) = {};
  HN_LAYER_OPTION(DenseOptions, InitializerPtr, bias_initializer) = Zero();
  HN_LAYER_OPTIONS_END;
};

/// y = activation(x W^T + b).
class Dense : public HybridBlock {
 public:
  explicit Dense(const DenseOptions& options, std::optional<std::string> prefix = std::nullopt);
  /// Dense(256, "relu"): the usual two arguments, the others at their defaults.
  explicit Dense(int64_t units,
                 const std::string& activation = "",
                 std::optional<std::string> prefix = std::nullopt);
  NDArray Forward(const NDArray& x) override;
  const ParameterPtr& weight() const { return weight_; }
  const ParameterPtr& bias() const { return bias_; }
  /// "Dense(512 -> 256, Activation(relu))", as MXNet prints it.
  std::string ToString() override;

 protected:
  std::string Describe() override;

 private:
  int64_t units_;
  std::string activation_;
  ParameterPtr weight_, bias_;
  NodeAttrs fc_attrs_;
};

/// Activation's keyword argument.
struct ActivationOptions {
  HN_LAYER_OPTIONS_BEGIN;
  /// relu, sigmoid, tanh, softrelu, softsign (the op's act_type)
  HN_REQUIRED_LAYER_OPTION(ActivationOptions, std::string, activation) = {};
  HN_LAYER_OPTIONS_END;
};

/// act_type: relu, sigmoid, tanh, softrelu, softsign. Its prefix alias is the act_type.
class Activation : public HybridBlock {
 public:
  explicit Activation(const ActivationOptions& options,
                      std::optional<std::string> prefix = std::nullopt);
  explicit Activation(const std::string& act_type, std::optional<std::string> prefix = std::nullopt);
  NDArray Forward(const NDArray& x) override;

 protected:
  std::string Describe() override;

 private:
  std::string act_type_;
  NodeAttrs attrs_;
};

/// Dropout's keyword argument (MXNet's axes is not supported).
struct DropoutOptions {
  HN_LAYER_OPTIONS_BEGIN;
  HN_REQUIRED_LAYER_OPTION(DropoutOptions, float, rate) = 0.f;  ///< in [0, 1]
  HN_LAYER_OPTIONS_END;
};

/// Identity at inference; rate 0 emits _copy as MXNet does.
class Dropout : public HybridBlock {
 public:
  explicit Dropout(const DropoutOptions& options, std::optional<std::string> prefix = std::nullopt);
  explicit Dropout(float rate, std::optional<std::string> prefix = std::nullopt);
  NDArray Forward(const NDArray& x) override;

 protected:
  std::string Describe() override;

 private:
  float rate_;
  NodeAttrs attrs_;
};

class Flatten : public HybridBlock {
 public:
  explicit Flatten(std::optional<std::string> prefix = std::nullopt);
  NDArray Forward(const NDArray& x) override;

 private:
  NodeAttrs attrs_;
};

/// Wraps a function of NDArrays; not hybridizable.
class Lambda : public Block {
 public:
  explicit Lambda(std::function<NDArray(const NDArray&)> fn,
                  std::optional<std::string> prefix = std::nullopt);
  NDArray Forward(const NDArray& x) override;

 private:
  std::function<NDArray(const NDArray&)> fn_;
};

/// Wraps a function written with hybridnet::op; hybridizable.
class HybridLambda : public HybridBlock {
 public:
  explicit HybridLambda(std::function<NDArray(const NDArray&)> fn,
                        std::optional<std::string> prefix = std::nullopt);
  NDArray Forward(const NDArray& x) override;

 private:
  std::function<NDArray(const NDArray&)> fn_;
};

}  // namespace gluon
}  // namespace hybridnet
