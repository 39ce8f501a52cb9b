// Layers with MXNet's names, attributes and deferred initialization.
#pragma once

#include <functional>
#include <string>

#include "hybridnet/gluon/block.h"

namespace hybridnet {
namespace gluon {

/// y = activation(x W^T + b). in_units 0 = inferred at the first forward.
class Dense : public HybridBlock {
 public:
  Dense(int64_t units, const std::string& activation = "", bool use_bias = true,
        bool flatten = true, int64_t in_units = 0, InitializerPtr weight_initializer = nullptr,
        InitializerPtr bias_initializer = Zero(), std::optional<std::string> prefix = std::nullopt);
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

/// act_type: relu, sigmoid, tanh, softrelu, softsign. Its prefix alias is the act_type.
class Activation : public HybridBlock {
 public:
  explicit Activation(const std::string& act_type, std::optional<std::string> prefix = std::nullopt);
  NDArray Forward(const NDArray& x) override;

 protected:
  std::string Describe() override;

 private:
  std::string act_type_;
  NodeAttrs attrs_;
};

/// Identity at inference; rate 0 emits _copy as MXNet does.
class Dropout : public HybridBlock {
 public:
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
