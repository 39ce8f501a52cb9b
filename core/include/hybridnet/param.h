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
// integers and floats, "None" for optionals, tuples "(3, 3)" / "[3, 3]" / "3"
// (std::vector<int64_t>; std::vector<float> for MXNet's "tuple of <float>"), enums by exact name
// (declared with their names and parsed once into a C++ enum):
//
//   d->Field("pool_type", &PoolingParam::pool_type,
//            {{"max", PoolType::kMax}, {"avg", PoolType::kAvg}}).Default(PoolType::kMax);
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

/// An op's attributes as text, keyed by MXNet's names, sorted as MXNet writes them.
using AttrDict = std::map<std::string, std::string>;

/// What a binding or `hybridnet info` shows about one parameter field.
struct FieldInfo {
  std::string key;           ///< the attribute key, MXNet's ("num_hidden")
  std::string type;          ///< "int", "float", "boolean", "Shape(tuple)", "{'relu', 'tanh'}", ...
  std::string default_text;  ///< MXNet's text of the default; empty when required
  bool required = false;     ///< no default: the attribute must be given
  std::string description;   ///< the text of Describe(), shown in every binding's op docs
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
/// MXNet's Tuple<float>: "(0.1, 0.2)", "[0.5]", "(1,)", "()", or one number "2.0".
void ParseValue(const std::string& text, std::vector<float>* out);
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
std::string ValueText(const std::vector<float>& value);
std::string ValueText(DType value);
template <typename T>
std::string ValueText(const std::optional<T>& value) {
  return value ? ValueText(*value) : "None";
}

template <typename T>
struct TypeText {
  static const char* Get();
};
template <>
struct TypeText<bool> {
  static const char* Get() { return "boolean"; }
};
template <>
struct TypeText<int> {
  static const char* Get() { return "int"; }
};
template <>
struct TypeText<int64_t> {
  static const char* Get() { return "long"; }
};
template <>
struct TypeText<uint32_t> {
  static const char* Get() { return "int (non-negative)"; }
};
template <>
struct TypeText<float> {
  static const char* Get() { return "float"; }
};
template <>
struct TypeText<double> {
  static const char* Get() { return "double"; }
};
template <>
struct TypeText<std::string> {
  static const char* Get() { return "string"; }
};
template <>
struct TypeText<std::vector<int64_t>> {
  static const char* Get() { return "Shape(tuple)"; }
};
template <>
struct TypeText<std::vector<float>> {
  static const char* Get() { return "tuple of <float>"; }
};
template <>
struct TypeText<DType> {
  static const char* Get() { return "dtype"; }
};
template <typename T>
struct TypeText<std::optional<T>> {
  static std::string Get() { return std::string("optional ") + TypeText<T>::Get(); }
};

/// "{'max', 'avg'}": MXNet's text for an enum's names.
std::string EnumTypeText(const std::vector<std::string>& names);

template <typename E>
E ParseEnum(const std::string& text, const std::vector<std::pair<std::string, E>>& names) {
  for (const auto& n : names)
    if (n.first == text) return n.second;
  std::vector<std::string> list;
  for (const auto& n : names) list.push_back(n.first);
  throw std::invalid_argument("one of " + EnumTypeText(list));
}

template <typename E>
std::string EnumText(E value, const std::vector<std::pair<std::string, E>>& names) {
  for (const auto& n : names)
    if (n.second == value) return n.first;
  return std::to_string(static_cast<int64_t>(value));
}

}  // namespace internal

/// The names of an enum-valued attribute, in MXNet's order: {{"max", PoolType::kMax}, ...}.
template <typename E>
using EnumNames = std::vector<std::pair<std::string, E>>;

template <typename P>
class ParamDeclarer;

/// One field's declaration; chained calls set its properties.
template <typename P, typename T>
class FieldBuilder {
 public:
  /// Formats a value as MXNet writes it (for the default's text).
  using TextOf = std::function<std::string(const T&)>;

  /// Made by ParamDeclarer::Field.
  FieldBuilder(FieldInfo* info, std::function<void(P*, const std::string&)>* parse,
               std::function<void(P*)>* set_default, T P::*member, TextOf text_of)
      : info_(info),
        parse_(parse),
        set_default_(set_default),
        member_(member),
        text_of_(std::move(text_of)) {}

  /// The value when the attribute is absent (the field is then optional).
  FieldBuilder& Default(T value) {
    info_->required = false;
    info_->default_text = text_of_(value);
    T P::*member = member_;
    *set_default_ = [member, value](P* p) { p->*member = value; };
    return *this;
  }
  /// The attribute must be given.
  FieldBuilder& Required() {
    info_->required = true;
    info_->default_text.clear();
    return *this;
  }
  /// The field's documentation.
  FieldBuilder& Describe(const std::string& text) {
    info_->description = text;
    return *this;
  }
  /// Values below `lower` are rejected (numbers only).
  FieldBuilder& Min(double lower) {
    static_assert(std::is_arithmetic_v<T>, "Min() bounds a number field");
    AddCheck([lower](const T& v) {
      if (static_cast<double>(v) < lower) {
        std::ostringstream os;
        os << "a value >= " << lower;
        throw std::invalid_argument(os.str());
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
  TextOf text_of_;
};

/// Collects the fields of P; see the file comment.
template <typename P>
class ParamDeclarer {
 public:
  /// A declared field: its description and how to parse and default it.
  struct Field {
    FieldInfo info;                                     ///< key, type, default, docs
    std::function<void(P*, const std::string&)> parse;  ///< parses text into the member
    std::function<void(P*)> set_default;                ///< sets the default (if any)
  };

  /// Declares attribute `key` stored in `member` (numbers, booleans, strings, shapes, dtypes).
  template <typename T>
  FieldBuilder<P, T> Field(const char* key, T P::*member) {
    static_assert(!std::is_enum_v<T> || std::is_same_v<T, DType>,
                  "an enum field takes its names: Field(key, member, names)");
    auto& f = NewField(key, TypeName<T>());
    f.parse = [member](P* p, const std::string& text) {
      internal::ParseValue(text, &(p->*member));
    };
    return FieldBuilder<P, T>(&f.info, &f.parse, &f.set_default, member,
                              [](const T& v) { return internal::ValueText(v); });
  }

  /// An enum-valued attribute, parsed once into E (kernels never compare strings).
  template <typename E, typename = std::enable_if_t<std::is_enum_v<E>>>
  FieldBuilder<P, E> Field(const char* key, E P::*member, EnumNames<E> names) {
    auto table = std::make_shared<const EnumNames<E>>(std::move(names));
    auto& f = NewField(key, internal::EnumTypeText(NameList(*table)));
    f.parse = [member, table](P* p, const std::string& text) {
      p->*member = internal::ParseEnum(text, *table);
    };
    return FieldBuilder<P, E>(&f.info, &f.parse, &f.set_default, member,
                              [table](const E& v) { return internal::EnumText(v, *table); });
  }

  /// An optional enum-valued attribute ("None" = unset).
  template <typename E>
  FieldBuilder<P, std::optional<E>> Field(const char* key, std::optional<E> P::*member,
                                          EnumNames<E> names) {
    static_assert(std::is_enum_v<E>, "names are for enum fields");
    auto table = std::make_shared<const EnumNames<E>>(std::move(names));
    auto& f = NewField(key, "optional " + internal::EnumTypeText(NameList(*table)));
    f.parse = [member, table](P* p, const std::string& text) {
      if (text == "None" || text == "none") {
        (p->*member).reset();
      } else {
        p->*member = internal::ParseEnum(text, *table);
      }
    };
    return FieldBuilder<P, std::optional<E>>(
        &f.info, &f.parse, &f.set_default, member, [table](const std::optional<E>& v) {
          return v ? internal::EnumText(*v, *table) : std::string("None");
        });
  }

  /// The fields in declaration order.
  const std::deque<struct Field>& fields() const { return fields_; }

 private:
  struct Field& NewField(const char* key, std::string type) {
    fields_.emplace_back();
    auto& f = fields_.back();
    f.info.key = key;
    f.info.type = std::move(type);
    f.info.required = true;
    return f;
  }
  template <typename E>
  static std::vector<std::string> NameList(const EnumNames<E>& names) {
    std::vector<std::string> list;
    for (const auto& n : names) list.push_back(n.first);
    return list;
  }
  template <typename T>
  static std::string TypeName() {
    return internal::TypeText<T>::Get();
  }
  // A deque keeps the addresses FieldBuilder holds valid while fields are added.
  std::deque<struct Field> fields_;
};

}  // namespace hybridnet
