#include "hybridnet/gluon/initializer.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <regex>
#include <utility>

#include "hybridnet/io/params.h"
#include "hybridnet/param.h"
#include "ndarray/mxnet_random.h"

namespace hybridnet {
namespace gluon {

namespace {

using Json = nlohmann::ordered_json;

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void FillConstant(NDArray* array, double value) {
  array->CopyFrom(NDArray::Full(array->shape(), value, array->dtype()));
}

// Writes float values into `array`, whatever its dtype.
void FillValues(NDArray* array, const std::vector<float>& values) {
  NDArray f32(array->shape(), DType::kFloat32);
  std::copy(values.begin(), values.end(), f32.data<float>());
  array->CopyFrom(array->dtype() == DType::kFloat32 ? f32 : f32.AsType(array->dtype()));
}

// A number given in C++ as MXNet's JSON would show it ("3", "0.07").
Json Number(float value) { return Json::parse(internal::ValueText(value)); }

// json.dumps() of MXNet's [name, kwargs]: ", " and ": " separators, keys in the given order.
std::string DumpsText(const std::string& name, const Json& kwargs) {
  std::string text = "[\"" + name + "\", {";
  bool first = true;
  for (const auto& kv : kwargs.items()) {
    text += (first ? "\"" : ", \"") + kv.key() + "\": ";
    if (kv.value().is_array()) {
      text += "[";
      for (size_t i = 0; i < kv.value().size(); ++i) {
        text += (i ? ", " : "") + kv.value()[i].dump();
      }
      text += "]";
    } else {
      text += kv.value().dump();
    }
    first = false;
  }
  return text + "}]";
}

// An initializer of the table: its name and complete keyword arguments make its dumps() text.
class TableInitializer : public Initializer {
 public:
  TableInitializer(std::string name, Json kwargs)
      : name_(std::move(name)), kwargs_(std::move(kwargs)) {}
  std::string Dumps() const override {
    return dumps_override_.empty() ? DumpsText(name_, kwargs_) : dumps_override_;
  }
  // Initializers given by a registered name keep that name as their text (MXNet's __init__).
  void set_dumps(std::string text) { dumps_override_ = std::move(text); }

 private:
  std::string name_;
  Json kwargs_;
  std::string dumps_override_;
};

class ConstantInit : public TableInitializer {
 public:
  ConstantInit(std::string name, Json kwargs, float value)
      : TableInitializer(std::move(name), std::move(kwargs)), value_(value) {}
  void InitWeight(const std::string&, NDArray* array) const override {
    FillConstant(array, value_);
  }

 private:
  float value_;
};

class UniformInit : public TableInitializer {
 public:
  explicit UniformInit(float scale)
      : TableInitializer("uniform", Json{{"scale", Number(scale)}}), scale_(scale) {}
  void InitWeight(const std::string&, NDArray* a) const override {
    a->CopyFrom(internal::MXNetRandomUniform(a->shape(), -scale_, scale_, a->dtype()));
  }

 private:
  float scale_;
};

class NormalInit : public TableInitializer {
 public:
  explicit NormalInit(float sigma)
      : TableInitializer("normal", Json{{"sigma", Number(sigma)}}), sigma_(sigma) {}
  void InitWeight(const std::string&, NDArray* a) const override {
    a->CopyFrom(internal::MXNetRandomNormal(a->shape(), 0.f, sigma_, a->dtype()));
  }

 private:
  float sigma_;
};

class XavierInit : public TableInitializer {
 public:
  // `magnitude` in double, as MXNet's Python computes the scale from it.
  XavierInit(std::string name, Json kwargs, std::string rnd_type, std::string factor_type,
             double magnitude)
      : TableInitializer(std::move(name), std::move(kwargs)),
        rnd_type_(std::move(rnd_type)),
        factor_type_(std::move(factor_type)),
        magnitude_(magnitude) {
    HN_CHECK(rnd_type_ == "uniform" || rnd_type_ == "gaussian", kInvalidArgument)
        << "Xavier: rnd_type must be 'uniform' or 'gaussian', got '" << rnd_type_ << "'";
    HN_CHECK(factor_type_ == "avg" || factor_type_ == "in" || factor_type_ == "out",
             kInvalidArgument)
        << "Xavier: factor_type must be 'avg', 'in' or 'out', got '" << factor_type_ << "'";
  }
  void InitWeight(const std::string& name, NDArray* a) const override {
    const Shape& s = a->shape();
    HN_CHECK(s.ndim() >= 2, kShapeError)
        << "Xavier initializer cannot be applied to '" << name << "' of shape " << s
        << ": it needs at least 2 dimensions";
    double receptive = 1;
    for (size_t i = 2; i < s.ndim(); ++i) receptive *= static_cast<double>(s[i]);
    double fan_in = static_cast<double>(s[1]) * receptive;
    double fan_out = static_cast<double>(s[0]) * receptive;
    double factor = factor_type_ == "avg"  ? (fan_in + fan_out) / 2
                    : factor_type_ == "in" ? fan_in
                                           : fan_out;
    float scale = static_cast<float>(std::sqrt(magnitude_ / factor));
    a->CopyFrom(rnd_type_ == "uniform" ? internal::MXNetRandomUniform(s, -scale, scale, a->dtype())
                                       : internal::MXNetRandomNormal(s, 0.f, scale, a->dtype()));
  }

 private:
  std::string rnd_type_, factor_type_;
  double magnitude_;
};

class OrthogonalInit : public TableInitializer {
 public:
  OrthogonalInit(float scale, std::string rand_type)
      : TableInitializer("orthogonal", Json{{"scale", Number(scale)}, {"rand_type", rand_type}}),
        scale_(scale),
        rand_type_(std::move(rand_type)) {
    HN_CHECK(rand_type_ == "uniform" || rand_type_ == "normal", kInvalidArgument)
        << "Orthogonal: rand_type must be 'uniform' or 'normal', got '" << rand_type_ << "'";
  }
  void InitWeight(const std::string& name, NDArray* a) const override {
    const Shape& s = a->shape();
    HN_CHECK(s.ndim() >= 1 && s.Size() > 0, kShapeError)
        << "Orthogonal initializer cannot be applied to '" << name << "' of shape " << s;
    const int64_t rows = s[0], cols = s.Size() / s[0];
    NDArray draw =
        rand_type_ == "uniform"
            ? internal::MXNetRandomUniform(Shape({rows, cols}), -1.f, 1.f, DType::kFloat32)
            : internal::MXNetRandomNormal(Shape({rows, cols}), 0.f, 1.f, DType::kFloat32);
    // Orthonormalizes the shorter side's vectors: columns of a tall matrix, rows of a wide one.
    const bool by_rows = rows < cols;
    const int64_t count = by_rows ? rows : cols, length = by_rows ? cols : rows;
    auto at = [&](int64_t vector, int64_t k) {
      return by_rows ? vector * cols + k : k * cols + vector;
    };
    std::vector<double> m(draw.data<float>(), draw.data<float>() + draw.size());
    for (int64_t v = 0; v < count; ++v) {
      for (int pass = 0; pass < 2; ++pass) {  // twice: modified Gram-Schmidt stays orthogonal
        for (int64_t u = 0; u < v; ++u) {
          double dot = 0;
          for (int64_t k = 0; k < length; ++k) dot += m[at(u, k)] * m[at(v, k)];
          for (int64_t k = 0; k < length; ++k) m[at(v, k)] -= dot * m[at(u, k)];
        }
      }
      double norm = 0;
      for (int64_t k = 0; k < length; ++k) norm += m[at(v, k)] * m[at(v, k)];
      norm = std::sqrt(norm);
      HN_CHECK(norm > 0, kInvalidArgument)
          << "Orthogonal initializer: the random draw for '" << name << "' is rank deficient";
      for (int64_t k = 0; k < length; ++k) m[at(v, k)] /= norm;
    }
    std::vector<float> values(m.size());
    for (size_t i = 0; i < m.size(); ++i) values[i] = static_cast<float>(scale_ * m[i]);
    FillValues(a, values);
  }

 private:
  float scale_;
  std::string rand_type_;
};

class BilinearInit : public TableInitializer {
 public:
  BilinearInit() : TableInitializer("bilinear", Json::object()) {}
  void InitWeight(const std::string& name, NDArray* a) const override {
    const Shape& s = a->shape();
    HN_CHECK(s.ndim() == 4, kShapeError)
        << "Bilinear initializer needs a 4-D weight, but '" << name << "' has shape " << s;
    // The kernel of MXNet's _init_bilinear, computed in double and stored as float.
    const double f = std::ceil(static_cast<double>(s[3]) / 2.0);
    const double c = (2 * f - 1 - std::fmod(f, 2.0)) / (2.0 * f);
    std::vector<float> values(static_cast<size_t>(s.Size()));
    for (int64_t i = 0; i < s.Size(); ++i) {
      const double x = static_cast<double>(i % s[3]);
      const double y = static_cast<double>((i / s[3]) % s[2]);
      values[i] = static_cast<float>((1 - std::abs(x / f - c)) * (1 - std::abs(y / f - c)));
    }
    FillValues(a, values);
  }
};

class LSTMBiasInit : public TableInitializer {
 public:
  explicit LSTMBiasInit(float forget_bias)
      : TableInitializer("lstmbias", Json{{"forget_bias", Number(forget_bias)}}),
        forget_bias_(forget_bias) {}
  void InitWeight(const std::string& name, NDArray* a) const override {
    const Shape& s = a->shape();
    HN_CHECK(s.ndim() >= 1, kShapeError)
        << "LSTMBias initializer cannot be applied to the scalar '" << name << "'";
    const int64_t hidden = s[0] / 4, row = s.Size() / std::max<int64_t>(s[0], 1);
    std::vector<float> values(static_cast<size_t>(s.Size()), 0.f);
    std::fill(values.begin() + hidden * row, values.begin() + 2 * hidden * row, forget_bias_);
    FillValues(a, values);
  }

 private:
  float forget_bias_;
};

class MixedInit : public TableInitializer {
 public:
  MixedInit(Json kwargs, std::vector<std::string> patterns, std::vector<InitializerPtr> inits)
      : TableInitializer("mixed", std::move(kwargs)), initializers_(std::move(inits)) {
    HN_CHECK(patterns.size() == initializers_.size(), kInvalidArgument)
        << "Mixed: " << patterns.size() << " patterns but " << initializers_.size()
        << " initializers";
    for (const auto& p : patterns) {
      try {
        patterns_.emplace_back(p);
      } catch (const std::regex_error& e) {
        HN_THROW(kInvalidArgument) << "Mixed: bad pattern '" << p << "': " << e.what();
      }
    }
    for (const auto& init : initializers_) {
      HN_CHECK(init != nullptr, kInvalidArgument) << "Mixed: an initializer is null";
    }
  }
  void Fill(const std::string& name, NDArray* a) const override { Match(name)->Fill(name, a); }
  void InitWeight(const std::string& name, NDArray* a) const override {
    Match(name)->InitWeight(name, a);
  }

 private:
  std::vector<std::regex> patterns_;
  std::vector<InitializerPtr> initializers_;

  const InitializerPtr& Match(const std::string& name) const {
    for (size_t i = 0; i < patterns_.size(); ++i) {
      if (std::regex_search(name, patterns_[i], std::regex_constants::match_continuous)) {
        return initializers_[i];
      }
    }
    HN_THROW(kInvalidArgument) << "Mixed: parameter '" << name
                               << "' matches no pattern; add \".*\" last for a default";
  }
};

class LoadInit : public TableInitializer {
 public:
  LoadInit(Json kwargs, const std::map<std::string, NDArray>& params, InitializerPtr fallback)
      : TableInitializer("load", std::move(kwargs)), default_init_(std::move(fallback)) {
    for (const auto& kv : params) {
      const std::string& key = kv.first;
      bool prefixed = key.rfind("arg:", 0) == 0 || key.rfind("aux:", 0) == 0;
      params_[prefixed ? key.substr(4) : key] = kv.second;
    }
  }
  void Fill(const std::string& name, NDArray* a) const override {
    if (!Copy(name, a)) Default(name)->Fill(name, a);
  }
  void InitWeight(const std::string& name, NDArray* a) const override {
    if (!Copy(name, a)) Default(name)->InitWeight(name, a);
  }

 private:
  std::map<std::string, NDArray> params_;
  InitializerPtr default_init_;

  bool Copy(const std::string& name, NDArray* a) const {
    auto it = params_.find(name);
    if (it == params_.end()) return false;
    HN_CHECK(it->second.shape() == a->shape(), kShapeError)
        << "Load: parameter '" << name << "' has shape " << a->shape()
        << " but the loaded value has shape " << it->second.shape();
    a->CopyFrom(it->second.dtype() == a->dtype() ? it->second : it->second.AsType(a->dtype()));
    return true;
  }
  const InitializerPtr& Default(const std::string& name) const {
    HN_CHECK(default_init_ != nullptr, kNotFound)
        << "Load: cannot initialize '" << name
        << "': it is not in the loaded parameters and there is no default initializer";
    return default_init_;
  }
};

std::map<std::string, NDArray> ReadParams(const std::string& path) {
  NDArrayList list = LoadNDArrayList(path);
  HN_CHECK(list.names.size() == list.arrays.size(), kInvalidArgument)
      << "Load: '" << path << "' holds unnamed arrays; initializers need named parameters";
  std::map<std::string, NDArray> params;
  for (size_t i = 0; i < list.arrays.size(); ++i) params[list.names[i]] = list.arrays[i];
  return params;
}

// The keyword arguments of one initializer after defaults, read with type checks.
class Args {
 public:
  Args(std::string name, Json kwargs) : name_(std::move(name)), kwargs_(std::move(kwargs)) {}
  const Json& kwargs() const { return kwargs_; }
  float Number(const char* key) const { return static_cast<float>(Real(key)); }
  double Real(const char* key) const {
    HN_CHECK(kwargs_.at(key).is_number(), kInvalidArgument)
        << "initializer " << name_ << ": '" << key << "' must be a number, got "
        << kwargs_.at(key).dump();
    return kwargs_.at(key).get<double>();
  }
  std::string Text(const char* key) const {
    HN_CHECK(kwargs_.at(key).is_string(), kInvalidArgument)
        << "initializer " << name_ << ": '" << key << "' must be a string, got "
        << kwargs_.at(key).dump();
    return kwargs_.at(key).get<std::string>();
  }
  // An initializer argument: a name, a dumps() text or its JSON form; null gives nullptr.
  InitializerPtr Init(const Json& value) const {
    if (value.is_null()) return nullptr;
    if (value.is_string()) return InitializerByName(value.get<std::string>());
    HN_CHECK(value.is_array(), kInvalidArgument)
        << "initializer " << name_ << ": expected an initializer, got " << value.dump();
    return InitializerByName(value.dump());
  }

 private:
  std::string name_;
  Json kwargs_;
};

// The table of initializers: MXNet's registered name, its keyword defaults in MXNet's order as
// JSON (null: required), and how to make one.
struct InitializerKind {
  const char* name;
  const char* defaults;
  std::function<std::shared_ptr<TableInitializer>(const Args&)> make;
};

const std::vector<InitializerKind>& Kinds() {
  static const std::vector<InitializerKind> kinds = {
      {"zero", "{}",
       [](const Args& a) { return std::make_shared<ConstantInit>("zero", a.kwargs(), 0.f); }},
      {"one", "{}",
       [](const Args& a) { return std::make_shared<ConstantInit>("one", a.kwargs(), 1.f); }},
      {"constant", R"({"value": null})",
       [](const Args& a) {
         return std::make_shared<ConstantInit>("constant", a.kwargs(), a.Number("value"));
       }},
      {"uniform", R"({"scale": 0.07})",
       [](const Args& a) { return std::make_shared<UniformInit>(a.Number("scale")); }},
      {"normal", R"({"sigma": 0.01})",
       [](const Args& a) { return std::make_shared<NormalInit>(a.Number("sigma")); }},
      {"orthogonal", R"({"scale": 1.414, "rand_type": "uniform"})",
       [](const Args& a) {
         return std::make_shared<OrthogonalInit>(a.Number("scale"), a.Text("rand_type"));
       }},
      {"xavier", R"({"rnd_type": "uniform", "factor_type": "avg", "magnitude": 3})",
       [](const Args& a) {
         return std::make_shared<XavierInit>("xavier", a.kwargs(), a.Text("rnd_type"),
                                             a.Text("factor_type"), a.Real("magnitude"));
       }},
      {"msraprelu", R"({"factor_type": "avg", "slope": 0.25})",
       [](const Args& a) {
         const double slope = a.Real("slope");
         return std::make_shared<XavierInit>("msraprelu", a.kwargs(), "gaussian",
                                             a.Text("factor_type"), 2 / (1 + slope * slope));
       }},
      {"bilinear", "{}", [](const Args&) { return std::make_shared<BilinearInit>(); }},
      {"lstmbias", R"({"forget_bias": 1.0})",
       [](const Args& a) { return std::make_shared<LSTMBiasInit>(a.Number("forget_bias")); }},
      {"mixed", R"({"patterns": null, "initializers": null})",
       [](const Args& a) {
         const Json& patterns = a.kwargs().at("patterns");
         const Json& inits = a.kwargs().at("initializers");
         HN_CHECK(patterns.is_array() && inits.is_array(), kInvalidArgument)
             << "initializer mixed: 'patterns' and 'initializers' must be lists";
         std::vector<std::string> texts;
         for (const auto& p : patterns) {
           HN_CHECK(p.is_string(), kInvalidArgument)
               << "initializer mixed: a pattern must be a string, got " << p.dump();
           texts.push_back(p.get<std::string>());
         }
         std::vector<InitializerPtr> made;
         for (const auto& i : inits) made.push_back(a.Init(i));
         return std::make_shared<MixedInit>(a.kwargs(), texts, made);
       }},
      {"load", R"({"param": null, "default_init": null})",
       [](const Args& a) {
         return std::make_shared<LoadInit>(a.kwargs(), ReadParams(a.Text("param")),
                                           a.Init(a.kwargs().at("default_init")));
       }},
  };
  return kinds;
}

std::string KnownNames() {
  std::string text = "zeros, ones";
  for (const auto& k : Kinds()) text += std::string(", ") + k.name;
  return text;
}

// Makes the named initializer from the keyword arguments given (defaults for the others).
// `registered_name`, when given, is the initializer's text instead of its dumps() JSON.
InitializerPtr Make(const std::string& name, const Json& given,
                    const std::string& registered_name = "") {
  auto kind = std::find_if(Kinds().begin(), Kinds().end(),
                           [&](const InitializerKind& k) { return name == k.name; });
  HN_CHECK(kind != Kinds().end(), kNotFound)
      << "unknown initializer '" << name << "' (known: " << KnownNames() << ")";
  Json kwargs = Json::parse(kind->defaults);
  for (const auto& kv : given.items()) {
    HN_CHECK(kwargs.contains(kv.key()), kInvalidArgument)
        << "initializer " << name << ": unknown argument '" << kv.key() << "'";
    kwargs[kv.key()] = kv.value();
  }
  for (const auto& kv : kwargs.items()) {
    bool optional_init = name == "load" && kv.key() == "default_init";
    HN_CHECK(!kv.value().is_null() || optional_init, kInvalidArgument)
        << "initializer " << name << " needs a '" << kv.key() << "'";
  }
  std::shared_ptr<TableInitializer> made = kind->make(Args(name, kwargs));
  if (!registered_name.empty()) made->set_dumps(registered_name);
  return made;
}

// MXNet's Initializer.dumps() text, '["xavier", {"magnitude": 2.24}]': the class name in lower
// case and its keyword arguments.
InitializerPtr InitializerFromDumps(const std::string& text) {
  Json spec;
  try {
    spec = Json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    HN_THROW(kInvalidArgument) << "initializer '" << text << "' is neither a name nor MXNet's "
                               << "dumps() text such as [\"uniform\", {\"scale\": 0.07}]: "
                               << e.what();
  }
  HN_CHECK(spec.is_array() && spec.size() == 2 && spec[0].is_string() && spec[1].is_object(),
           kInvalidArgument)
      << "initializer '" << text << "': expected [\"name\", {keyword arguments}]";
  return Make(spec[0].get<std::string>(), spec[1]);
}

}  // namespace

void Initializer::Fill(const std::string& name, NDArray* array) const {
  if (EndsWith(name, "weight")) {
    InitWeight(name, array);
  } else if (EndsWith(name, "bias") || EndsWith(name, "beta") || EndsWith(name, "min")) {
    FillConstant(array, 0.0);
  } else if (EndsWith(name, "gamma") || EndsWith(name, "max")) {
    FillConstant(array, 1.0);
  } else {
    HN_THROW(kInvalidArgument) << "unknown initialization pattern for '" << name
                               << "': by name, only \"weight\", \"bias\", \"gamma\" (1), "
                                  "\"beta\", \"min\" and \"max\" (1) are known; give the "
                                  "parameter its own initializer";
  }
}

InitializerPtr Uniform(float scale) { return std::make_shared<UniformInit>(scale); }
InitializerPtr Normal(float sigma) { return std::make_shared<NormalInit>(sigma); }
InitializerPtr Xavier(const std::string& rnd_type, const std::string& factor_type,
                      float magnitude) {
  // Through the table, so the magnitude is the decimal written (2.34, not 2.3399999).
  return Make(
      "xavier",
      Json{{"rnd_type", rnd_type}, {"factor_type", factor_type}, {"magnitude", Number(magnitude)}});
}
InitializerPtr MSRAPrelu(const std::string& factor_type, float slope) {
  return Make("msraprelu", Json{{"factor_type", factor_type}, {"slope", Number(slope)}});
}
InitializerPtr Orthogonal(float scale, const std::string& rand_type) {
  return std::make_shared<OrthogonalInit>(scale, rand_type);
}
InitializerPtr Bilinear() { return std::make_shared<BilinearInit>(); }
InitializerPtr LSTMBias(float forget_bias) { return std::make_shared<LSTMBiasInit>(forget_bias); }
InitializerPtr Zero() { return InitializerByName("zeros"); }
InitializerPtr One() { return InitializerByName("ones"); }
InitializerPtr Constant(float value) { return Make("constant", Json{{"value", Number(value)}}); }

InitializerPtr Mixed(const std::vector<std::string>& patterns,
                     const std::vector<InitializerPtr>& initializers) {
  Json texts = Json::array();
  for (const auto& init : initializers) texts.push_back(init ? init->Dumps() : "");
  return std::make_shared<MixedInit>(Json{{"patterns", patterns}, {"initializers", texts}},
                                     patterns, initializers);
}

InitializerPtr Load(const std::map<std::string, NDArray>& params, InitializerPtr default_init) {
  Json kwargs{{"param", nullptr},
              {"default_init", default_init ? Json(default_init->Dumps()) : Json()}};
  return std::make_shared<LoadInit>(kwargs, params, std::move(default_init));
}

InitializerPtr Load(const std::string& params_path, InitializerPtr default_init) {
  Json kwargs{{"param", params_path},
              {"default_init", default_init ? Json(default_init->Dumps()) : Json()}};
  return std::make_shared<LoadInit>(kwargs, ReadParams(params_path), std::move(default_init));
}

InitializerPtr InitializerByName(const std::string& name) {
  if (!name.empty() && name.front() == '[') return InitializerFromDumps(name);
  // MXNet's registry: the lower-case class names and the aliases "zeros" and "ones".
  const std::string kind = name == "zeros" ? "zero" : name == "ones" ? "one" : name;
  return Make(kind, Json::object(), name);
}

}  // namespace gluon
}  // namespace hybridnet
