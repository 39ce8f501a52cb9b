// Typed operator parameters parsed from MXNet's attribute strings.
//
// A parameter struct declares its fields once; the declaration gives parsing, defaults, required
// keys and the documentation every binding lists:
//
//   struct FullyConnectedParam {
//     int64_t num_hidden = 0;
//     bool no_bias = false;
//     bool flatten = true;
//     static void Declare(ParamDeclarer<FullyConnectedParam>* d) {
//       d->Field("num_hidden", &FullyConnectedParam::num_hidden).Required().Min(1)
//           .Describe("Number of output units.");
//       d->Field("no_bias", &FullyConnectedParam::no_bias).Default(false);
//       d->Field("flatten", &FullyConnectedParam::flatten).Default(true);
//     }
//   };
//
// Accepted strings follow MXNet (dmlc::Parameter): bools True/False/true/false/1/0, whole-string
// integers and floats, "None" for optionals, tuples "(3, 3)" / "[3, 3]" / "3", enums by exact name.
// Keys of the hidden form "__x__" are ignored; any other unknown key is an error.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "hybridnet/base.h"
#include "hybridnet/dtype.h"

namespace hybridnet {

using AttrDict = std::map<std::string, std::string>;

/// What a binding or `hybridnet info` shows about one parameter field.
struct FieldInfo {
  std::string key;
  std::string type;          ///< "int", "float", "boolean", "Shape(tuple)", "{'relu', 'tanh'}", ...
  std::string default_text;  ///< MXNet's text of the default; empty when required
  bool required = false;
  std::string description;
};

namespace internal {

// Value parsers: each throws std::invalid_argument with a description of what was expected.
void ParseValue(const std::string& text, bool* out);
void ParseValue(const std::string& text, int* out);
void ParseValue(const std::string& text, int64_t* out);
void ParseValue(const std::string& text, uint32_t* out);
void ParseValue(const std::string& text, float* out);
void ParseValue(const std::string& text, double* out);
void ParseValue(const std::string& text, std::string* out);
void ParseValue(const std::string& text, std::vector<int64_t>* out);
void ParseValue(const std::string& text, DType* out);
template <typename T>
void ParseValue(const std::string& text, std::optional<T>* out) {
  if (text == "None" || text == "none") {
    out->reset();
    return;
  }
  T value{};
  ParseValue(text, &value);
  *out = value;
}

std::string ValueText(bool value);
std::string ValueText(int value);
std::string ValueText(int64_t value);
std::string ValueText(uint32_t value);
std::string ValueText(float value);
std::string ValueText(double value);
std::string ValueText(const std::string& value);
std::string ValueText(const std::vector<int64_t>& value);
std::string ValueText(DType value);
template <typename T>
std::string ValueText(const std::optional<T>& value) {
  return value ? ValueText(*value) : "None";
}

template <typename T> struct TypeText { static const char* Get(); };
template <> struct TypeText<bool> { static const char* Get() { return "boolean"; } };
template <> struct TypeText<int> { static const char* Get() { return "int"; } };
template <> struct TypeText<int64_t> { static const char* Get() { return "long"; } };
template <> struct TypeText<uint32_t> { static const char* Get() { return "int (non-negative)"; } };
template <> struct TypeText<float> { static const char* Get() { return "float"; } };
template <> struct TypeText<double> { static const char* Get() { return "double"; } };
template <> struct TypeText<std::string> { static const char* Get() { return "string"; } };
template <> struct TypeText<std::vector<int64_t>> { static const char* Get() { return "Shape(tuple)"; } };
template <> struct TypeText<DType> { static const char* Get() { return "dtype"; } };
template <typename T> struct TypeText<std::optional<T>> {
  static std::string Get() { return std::string("optional ") + TypeText<T>::Get(); }
};

}  // namespace internal

template <typename P>
class ParamDeclarer;

/// One field's declaration; chained calls set its properties.
template <typename P, typename T>
class FieldBuilder {
 public:
  FieldBuilder(FieldInfo* info, std::function<void(P*, const std::string&)>* parse,
               std::function<void(P*)>* set_default, T P::*member)
      : info_(info), parse_(parse), set_default_(set_default), member_(member) {}

  FieldBuilder& Default(T value) {
    info_->required = false;
    info_->default_text = internal::ValueText(value);
    T P::*member = member_;
    *set_default_ = [member, value](P* p) { p->*member = value; };
    return *this;
  }
  FieldBuilder& Required() {
    info_->required = true;
    info_->default_text.clear();
    return *this;
  }
  FieldBuilder& Describe(const std::string& text) {
    info_->description = text;
    return *this;
  }
  /// Values below `lower` are rejected (numbers only).
  FieldBuilder& Min(double lower) {
    AddCheck([lower](const T& v) {
      if constexpr (std::is_arithmetic_v<T>) {
        if (static_cast<double>(v) < lower) {
          std::ostringstream os;
          os << "a value >= " << lower;
          throw std::invalid_argument(os.str());
        }
      }
    });
    return *this;
  }
  /// Restricts a string field to the given names.
  FieldBuilder& OneOf(std::vector<std::string> names) {
    std::string type = "{";
    for (size_t i = 0; i < names.size(); ++i) type += (i ? ", '" : "'") + names[i] + "'";
    info_->type = type + "}";
    AddCheck([names, type](const T& v) {
      if constexpr (std::is_same_v<T, std::string>) {
        for (const auto& n : names)
          if (n == v) return;
        throw std::invalid_argument("one of " + type + "}");
      } else if constexpr (std::is_same_v<T, std::optional<std::string>>) {
        if (!v) return;
        for (const auto& n : names)
          if (n == *v) return;
        throw std::invalid_argument("one of " + type + "} or None");
      }
    });
    return *this;
  }

 private:
  void AddCheck(std::function<void(const T&)> check) {
    auto previous = *parse_;
    T P::*member = member_;
    *parse_ = [previous, check, member](P* p, const std::string& text) {
      previous(p, text);
      check(p->*member);
    };
  }

  FieldInfo* info_;
  std::function<void(P*, const std::string&)>* parse_;
  std::function<void(P*)>* set_default_;
  T P::*member_;
};

/// Collects the fields of P; see the file comment.
template <typename P>
class ParamDeclarer {
 public:
  struct Field {
    FieldInfo info;
    std::function<void(P*, const std::string&)> parse;
    std::function<void(P*)> set_default;
  };

  template <typename T>
  FieldBuilder<P, T> Field(const char* key, T P::*member) {
    fields_.emplace_back();
    auto& f = fields_.back();
    f.info.key = key;
    f.info.type = TypeName<T>();
    f.info.required = true;
    f.parse = [member](P* p, const std::string& text) { internal::ParseValue(text, &(p->*member)); };
    return FieldBuilder<P, T>(&f.info, &f.parse, &f.set_default, member);
  }

  const std::deque<struct Field>& fields() const { return fields_; }

 private:
  template <typename T>
  static std::string TypeName() {
    return internal::TypeText<T>::Get();
  }
  // A deque keeps the addresses FieldBuilder holds valid while fields are added.
  std::deque<struct Field> fields_;
};

}  // namespace hybridnet
