// Parameter initializers with MXNet's names and defaults. Each draws from the global generator
// (hybridnet::Seed), so a seed reproduces the same weights in every language.
#pragma once

#include <memory>
#include <string>

#include "hybridnet/ndarray.h"

namespace hybridnet {
namespace gluon {

/// Fills parameters with initial values; the functions below make MXNet's initializers.
class Initializer {
 public:
  virtual ~Initializer() = default;
  /// Fills `array`; `param_name` lets the default rules pick zeros for biases etc.
  virtual void Fill(const std::string& param_name, NDArray* array) const = 0;
  /// MXNet's "__init__" text: a registered name ("zeros") or the dumps() JSON.
  virtual std::string Dumps() const = 0;
};

/// How layers and Initialize() hold an initializer (shared, immutable).
using InitializerPtr = std::shared_ptr<const Initializer>;

/// U(-scale, scale); MXNet's default global initializer is Uniform(0.07).
InitializerPtr Uniform(float scale = 0.07f);
/// N(0, sigma).
InitializerPtr Normal(float sigma = 0.01f);
/// Xavier/Glorot: rnd_type "uniform"|"gaussian", factor_type "avg"|"in"|"out".
InitializerPtr Xavier(const std::string& rnd_type = "uniform",
                      const std::string& factor_type = "avg", float magnitude = 3.f);
/// Zeros ("zeros").
InitializerPtr Zero();
/// Ones ("ones").
InitializerPtr One();
/// Every element `value`.
InitializerPtr Constant(float value);
/// By registered name ("zeros", "ones", "uniform", "normal", "xavier") or by MXNet's dumps()
/// text ('["xavier", {"rnd_type": "gaussian", "magnitude": 2}]'; uniform, normal, xavier,
/// constant, zero, one); throws kNotFound for other names, kInvalidArgument for bad arguments.
InitializerPtr InitializerByName(const std::string& name);

}  // namespace gluon
}  // namespace hybridnet
