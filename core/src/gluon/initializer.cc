#include "hybridnet/gluon/initializer.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "hybridnet/param.h"

namespace hybridnet {
namespace gluon {

namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void FillConstant(NDArray* array, double value) {
  NDArray filled = NDArray::Full(array->shape(), value, array->dtype());
  array->CopyFrom(filled);
}

// MXNet's Initializer.__call__ rules: names decide zeros/ones for biases, BatchNorm statistics
// and scales; everything else gets the initializer's own weight rule.
class NamedRuleInitializer : public Initializer {
 public:
  void Fill(const std::string& name, NDArray* array) const override {
    if (EndsWith(name, "bias") || EndsWith(name, "beta") || EndsWith(name, "running_mean") ||
        EndsWith(name, "moving_mean")) {
      FillConstant(array, 0.0);
    } else if (EndsWith(name, "gamma") || EndsWith(name, "running_var") ||
               EndsWith(name, "moving_var")) {
      FillConstant(array, 1.0);
    } else {
      FillWeight(array);
    }
  }

 protected:
  virtual void FillWeight(NDArray* array) const = 0;
};

class UniformInit : public NamedRuleInitializer {
 public:
  explicit UniformInit(float scale) : scale_(scale) {}
  std::string Dumps() const override {
    return "[\"uniform\", {\"scale\": " + internal::ValueText(scale_) + "}]";
  }

 protected:
  void FillWeight(NDArray* a) const override {
    a->CopyFrom(NDArray::RandomUniform(a->shape(), -scale_, scale_));
  }

 private:
  float scale_;
};

class NormalInit : public NamedRuleInitializer {
 public:
  explicit NormalInit(float sigma) : sigma_(sigma) {}
  std::string Dumps() const override {
    return "[\"normal\", {\"sigma\": " + internal::ValueText(sigma_) + "}]";
  }

 protected:
  void FillWeight(NDArray* a) const override {
    a->CopyFrom(NDArray::RandomNormal(a->shape(), 0.f, sigma_));
  }

 private:
  float sigma_;
};

class XavierInit : public NamedRuleInitializer {
 public:
  XavierInit(std::string rnd_type, std::string factor_type, float magnitude)
      : rnd_type_(std::move(rnd_type)),
        factor_type_(std::move(factor_type)),
        magnitude_(magnitude) {
    HN_CHECK(rnd_type_ == "uniform" || rnd_type_ == "gaussian", kInvalidArgument)
        << "Xavier: rnd_type must be 'uniform' or 'gaussian', got '" << rnd_type_ << "'";
    HN_CHECK(factor_type_ == "avg" || factor_type_ == "in" || factor_type_ == "out",
             kInvalidArgument)
        << "Xavier: factor_type must be 'avg', 'in' or 'out', got '" << factor_type_ << "'";
  }
  std::string Dumps() const override {
    return "[\"xavier\", {\"rnd_type\": \"" + rnd_type_ + "\", \"factor_type\": \"" + factor_type_ +
           "\", \"magnitude\": " + internal::ValueText(magnitude_) + "}]";
  }

 protected:
  void FillWeight(NDArray* a) const override {
    const Shape& s = a->shape();
    HN_CHECK(s.ndim() >= 2, kShapeError)
        << "Xavier initializer needs a weight of at least 2 dimensions, got " << s;
    double receptive = 1;
    for (size_t i = 2; i < s.ndim(); ++i) receptive *= static_cast<double>(s[i]);
    double fan_in = static_cast<double>(s[1]) * receptive;
    double fan_out = static_cast<double>(s[0]) * receptive;
    double factor = factor_type_ == "avg"  ? (fan_in + fan_out) / 2
                    : factor_type_ == "in" ? fan_in
                                           : fan_out;
    float scale = static_cast<float>(std::sqrt(magnitude_ / factor));
    a->CopyFrom(rnd_type_ == "uniform" ? NDArray::RandomUniform(s, -scale, scale)
                                       : NDArray::RandomNormal(s, 0.f, scale));
  }

 private:
  std::string rnd_type_, factor_type_;
  float magnitude_;
};

class ConstantInit : public Initializer {
 public:
  ConstantInit(float value, std::string dumps) : value_(value), dumps_(std::move(dumps)) {}
  void Fill(const std::string&, NDArray* array) const override { FillConstant(array, value_); }
  std::string Dumps() const override { return dumps_; }

 private:
  float value_;
  std::string dumps_;
};

}  // namespace

InitializerPtr Uniform(float scale) { return std::make_shared<UniformInit>(scale); }
InitializerPtr Normal(float sigma) { return std::make_shared<NormalInit>(sigma); }
InitializerPtr Xavier(const std::string& rnd_type, const std::string& factor_type,
                      float magnitude) {
  return std::make_shared<XavierInit>(rnd_type, factor_type, magnitude);
}
InitializerPtr Zero() { return std::make_shared<ConstantInit>(0.f, "zeros"); }
InitializerPtr One() { return std::make_shared<ConstantInit>(1.f, "ones"); }
InitializerPtr Constant(float value) {
  return std::make_shared<ConstantInit>(
      value, "[\"constant\", {\"value\": " + internal::ValueText(value) + "}]");
}

namespace {

// MXNet's Initializer.dumps() text, '["xavier", {"magnitude": 2.24}]': the class name in lower
// case and its keyword arguments.
InitializerPtr InitializerFromDumps(const std::string& text) {
  nlohmann::json spec;
  try {
    spec = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    HN_THROW(kInvalidArgument) << "initializer '" << text << "' is neither a name nor MXNet's "
                               << "dumps() text such as [\"uniform\", {\"scale\": 0.07}]: "
                               << e.what();
  }
  HN_CHECK(spec.is_array() && spec.size() == 2 && spec[0].is_string() && spec[1].is_object(),
           kInvalidArgument)
      << "initializer '" << text << "': expected [\"name\", {keyword arguments}]";
  const std::string name = spec[0].get<std::string>();
  const nlohmann::json& kwargs = spec[1];
  std::vector<std::string> accepted;
  auto number = [&](const char* key, float fallback) {
    accepted.push_back(key);
    if (!kwargs.contains(key)) return fallback;
    HN_CHECK(kwargs[key].is_number(), kInvalidArgument)
        << "initializer " << name << ": '" << key << "' must be a number, got "
        << kwargs[key].dump();
    return kwargs[key].get<float>();
  };
  auto text_arg = [&](const char* key, const char* fallback) {
    accepted.push_back(key);
    if (!kwargs.contains(key)) return std::string(fallback);
    HN_CHECK(kwargs[key].is_string(), kInvalidArgument)
        << "initializer " << name << ": '" << key << "' must be a string, got "
        << kwargs[key].dump();
    return kwargs[key].get<std::string>();
  };
  InitializerPtr init;
  if (name == "uniform") {
    init = Uniform(number("scale", 0.07f));
  } else if (name == "normal") {
    init = Normal(number("sigma", 0.01f));
  } else if (name == "xavier") {
    std::string rnd = text_arg("rnd_type", "uniform"), factor = text_arg("factor_type", "avg");
    init = Xavier(rnd, factor, number("magnitude", 3.f));
  } else if (name == "constant") {
    accepted.push_back("value");
    HN_CHECK(kwargs.contains("value"), kInvalidArgument) << "initializer constant needs a 'value'";
    init = Constant(number("value", 0.f));
  } else if (name == "zero" || name == "one") {
    // Keeps MXNet's text for the graph's __init__ attribute ("zeros" names the registered alias).
    init = std::make_shared<ConstantInit>(name == "zero" ? 0.f : 1.f, "[\"" + name + "\", {}]");
  } else {
    HN_THROW(kNotFound) << "unknown initializer '" << name
                        << "' (known: uniform, normal, xavier, constant, zero, one)";
  }
  for (const auto& kv : kwargs.items()) {
    bool known = std::find(accepted.begin(), accepted.end(), kv.key()) != accepted.end();
    HN_CHECK(known, kInvalidArgument)
        << "initializer " << name << ": unknown argument '" << kv.key() << "'";
  }
  return init;
}

}  // namespace

InitializerPtr InitializerByName(const std::string& name) {
  if (!name.empty() && name.front() == '[') return InitializerFromDumps(name);
  if (name == "zeros" || name == "zero") return Zero();
  if (name == "ones" || name == "one") return One();
  if (name == "uniform") return Uniform();
  if (name == "normal") return Normal();
  if (name == "xavier") return Xavier();
  HN_THROW(kNotFound) << "unknown initializer '" << name
                      << "' (known: zeros, ones, uniform, normal, xavier, or MXNet's dumps() "
                         "text such as [\"xavier\", {\"magnitude\": 2.24}])";
}

}  // namespace gluon
}  // namespace hybridnet
