// Parameter initializers with MXNet's names, keyword arguments and dumps() text, from one table
// in initializer.cc that C++, the C API (MXNet's dumps() text) and Python share. The random ones
// draw from MXNet's CPU sampling streams (core/src/ndarray/mxnet_random.h), so after the same
// seed they give MXNet 1.9.1's exact values, except Orthogonal (see Orthogonal()).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hybridnet/ndarray.h"

namespace hybridnet {
namespace gluon {

/// Fills parameters with initial values; the functions below make MXNet's initializers.
class Initializer {
 public:
  virtual ~Initializer() = default;
  /// MXNet's Initializer.__call__ for a name without an "__init__" attribute: a name ending in
  /// "weight" gets InitWeight, "bias", "beta" and "min" zeros, "gamma" and "max" ones; any other
  /// name is kInvalidArgument, as in MXNet.
  virtual void Fill(const std::string& param_name, NDArray* array) const;
  /// MXNet's _init_weight: what Gluon's Parameter.initialize applies whatever the name.
  virtual void InitWeight(const std::string& param_name, NDArray* array) const = 0;
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
/// He et al.: Xavier("gaussian", factor_type, 2 / (1 + slope^2)).
InitializerPtr MSRAPrelu(const std::string& factor_type = "avg", float slope = 0.25f);
/// A scaled (semi-)orthogonal matrix of shape (shape[0], prod(shape[1:])) made from a
/// rand_type ("uniform" or "normal") draw of MXNet's stream. MXNet keeps numpy's SVD factor
/// of that draw; this is its Gram-Schmidt factor, as orthogonal and drawn from the same
/// matrix but a different one, so values are not MXNet's.
InitializerPtr Orthogonal(float scale = 1.414f, const std::string& rand_type = "uniform");
/// The bilinear upsampling kernel for 4-D weights (Deconvolution upsampling).
InitializerPtr Bilinear();
/// LSTM biases: zeros except forget_bias on the second quarter (the forget gate).
InitializerPtr LSTMBias(float forget_bias = 1.f);
/// Zeros ("zeros").
InitializerPtr Zero();
/// Ones ("ones").
InitializerPtr One();
/// Every element `value`.
InitializerPtr Constant(float value);
/// The first initializer whose regular expression matches the start of the name (Python's
/// re.match); kInvalidArgument when none does.
InitializerPtr Mixed(const std::vector<std::string>& patterns,
                     const std::vector<InitializerPtr>& initializers);
/// Values by name ("arg:"/"aux:" prefixes dropped); names not present use `default_init`, or
/// are kNotFound without one. A shape that differs is kShapeError.
InitializerPtr Load(const std::map<std::string, NDArray>& params,
                    InitializerPtr default_init = nullptr);
/// Load() from an MXNet .params file.
InitializerPtr Load(const std::string& params_path, InitializerPtr default_init = nullptr);
/// By registered name ("zeros", "ones", "uniform", "normal", "xavier", "msraprelu",
/// "orthogonal", "bilinear", "lstmbias", ...) or by MXNet's dumps() text ('["xavier",
/// {"rnd_type": "gaussian", "magnitude": 2}]'); mixed and load take '["mixed", {"patterns":
/// [...], "initializers": [dumps texts]}]' and '["load", {"param": "file.params",
/// "default_init": dumps text}]'. Throws kNotFound for other names, kInvalidArgument for bad
/// arguments.
InitializerPtr InitializerByName(const std::string& name);

}  // namespace gluon
}  // namespace hybridnet
