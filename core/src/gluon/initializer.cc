#include "hybridnet/gluon/initializer.h"

#include <cmath>
#include <sstream>

#include "hybridnet/param.h"

namespace hybridnet {
namespace gluon {

namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
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
      : rnd_type_(std::move(rnd_type)), factor_type_(std::move(factor_type)), magnitude_(magnitude) {
    HN_CHECK(rnd_type_ == "uniform" || rnd_type_ == "gaussian", kInvalidArgument)
        << "Xavier: rnd_type must be 'uniform' or 'gaussian', got '" << rnd_type_ << "'";
    HN_CHECK(factor_type_ == "avg" || factor_type_ == "in" || factor_type_ == "out", kInvalidArgument)
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
    double factor = factor_type_ == "avg" ? (fan_in + fan_out) / 2 : factor_type_ == "in" ? fan_in : fan_out;
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
InitializerPtr Xavier(const std::string& rnd_type, const std::string& factor_type, float magnitude) {
  return std::make_shared<XavierInit>(rnd_type, factor_type, magnitude);
}
InitializerPtr Zero() { return std::make_shared<ConstantInit>(0.f, "zeros"); }
InitializerPtr One() { return std::make_shared<ConstantInit>(1.f, "ones"); }
InitializerPtr Constant(float value) {
  return std::make_shared<ConstantInit>(
      value, "[\"constant\", {\"value\": " + internal::ValueText(value) + "}]");
}

InitializerPtr InitializerByName(const std::string& name) {
  if (name == "zeros" || name == "zero") return Zero();
  if (name == "ones" || name == "one") return One();
  if (name == "uniform") return Uniform();
  if (name == "normal") return Normal();
  if (name == "xavier") return Xavier();
  HN_THROW(kNotFound) << "unknown initializer '" << name
                      << "' (known: zeros, ones, uniform, normal, xavier)";
}

}  // namespace gluon
}  // namespace hybridnet
