#include "hybridnet/param.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "hybridnet/shape.h"

namespace hybridnet {
namespace internal {

namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

int64_t ParseWholeInteger(const std::string& text, int64_t lo, int64_t hi, const char* what) {
  errno = 0;
  char* end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || value < lo ||
      value > hi) {
    throw std::invalid_argument(what);
  }
  return value;
}

double ParseWholeDouble(const std::string& text) {
  errno = 0;
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) {
    throw std::invalid_argument("a floating-point number such as 1e-05");
  }
  return value;
}

}  // namespace

void ParseValue(const std::string& text, bool* out) {
  std::string v = Lower(text);
  if (v == "true" || v == "1") {
    *out = true;
  } else if (v == "false" || v == "0") {
    *out = false;
  } else {
    throw std::invalid_argument("a boolean (True, False, 1 or 0)");
  }
}

void ParseValue(const std::string& text, int* out) {
  *out = static_cast<int>(ParseWholeInteger(text, std::numeric_limits<int>::min(),
                                            std::numeric_limits<int>::max(), "an integer"));
}

void ParseValue(const std::string& text, int64_t* out) {
  *out = ParseWholeInteger(text, std::numeric_limits<int64_t>::min(),
                           std::numeric_limits<int64_t>::max(), "an integer");
}

void ParseValue(const std::string& text, uint32_t* out) {
  *out = static_cast<uint32_t>(
      ParseWholeInteger(text, 0, std::numeric_limits<uint32_t>::max(), "a non-negative integer"));
}

void ParseValue(const std::string& text, float* out) {
  *out = static_cast<float>(ParseWholeDouble(text));
}

void ParseValue(const std::string& text, double* out) { *out = ParseWholeDouble(text); }

void ParseValue(const std::string& text, std::string* out) { *out = text; }

void ParseValue(const std::string& text, std::vector<int64_t>* out) {
  try {
    *out = ParseIntTuple(text);
  } catch (const Error&) {
    throw std::invalid_argument("a tuple of integers such as (3, 3)");
  }
}

void ParseValue(const std::string& text, std::vector<float>* out) {
  const char* const expected = "a tuple of numbers such as (0.1, 0.2) or one number";
  size_t i = 0;
  auto skip_space = [&]() {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  // The longest prefix from i that strtod reads (whole elements are checked by the caller).
  auto read_number = [&](float* value) {
    const char* begin = text.c_str() + i;
    char* end = nullptr;
    const double v = std::strtod(begin, &end);
    if (end == begin) return false;
    i += static_cast<size_t>(end - begin);
    *value = static_cast<float>(v);
    return true;
  };
  std::vector<float> values;
  skip_space();
  if (i == text.size()) throw std::invalid_argument(expected);
  const char open = text[i];
  if (open != '(' && open != '[') {
    float value = 0;
    if (!read_number(&value)) throw std::invalid_argument(expected);
    skip_space();
    if (i != text.size()) throw std::invalid_argument(expected);
    *out = {value};
    return;
  }
  const char close = open == '(' ? ')' : ']';
  ++i;
  skip_space();
  bool closed = i < text.size() && text[i] == close;
  if (closed) ++i;
  while (!closed) {
    float value = 0;
    skip_space();
    if (!read_number(&value)) throw std::invalid_argument(expected);
    values.push_back(value);
    skip_space();
    if (i < text.size() && text[i] == ',') {
      ++i;
      skip_space();
    } else if (i >= text.size() || text[i] != close) {
      throw std::invalid_argument(expected);
    }
    if (i < text.size() && text[i] == close) {
      ++i;
      closed = true;
    }
  }
  skip_space();
  if (i != text.size()) throw std::invalid_argument(expected);
  *out = std::move(values);
}

void ParseValue(const std::string& text, DType* out) {
  try {
    *out = ParseDType(text);
  } catch (const Error& e) {
    throw std::invalid_argument(e.what());
  }
}

std::string ValueText(bool value) { return value ? "True" : "False"; }
std::string ValueText(int value) { return std::to_string(value); }
std::string ValueText(int64_t value) { return std::to_string(value); }
std::string ValueText(uint32_t value) { return std::to_string(value); }
namespace {

// Python repr style: the shortest text that reads back to the same value, with ".0" on whole
// numbers ("0.9", "1e-05", "256.0"): the first %g precision that reads back. The shortest
// round-trip form's digit count is where that search can start (no fewer digits read back);
// formatting with <charconv> rather than a stream was 17x faster, and optimizers write their
// float attributes at every step.
template <typename T>
std::string ShortestText(T value, int max_digits, T (*read)(const char*, char**)) {
  if (std::isnan(value)) return "nan";  // whatever its sign bit, as Python writes it
  char text[64];
  int precision = 1;
  if (std::isfinite(value) && value != 0) {
    char* end = std::to_chars(text, text + sizeof text, value, std::chars_format::scientific).ptr;
    auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
    precision = static_cast<int>(std::count_if(text, std::find(text, end, 'e'), is_digit));
  }
  std::string s;
  for (; precision <= max_digits; ++precision) {
    s.assign(text, std::to_chars(text, text + sizeof text, value, std::chars_format::general,
                                 precision).ptr);
    if (std::isinf(value) || read(s.c_str(), nullptr) == value) break;
  }
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

// ShortestText, remembered for the last values by their bits: optimizers write the same few
// (learning rates, weight decays, momentum) at every step, and the search was 5 % of a digits
// MLP's training step.
template <typename T>
std::string RememberedText(T value, int max_digits, T (*read)(const char*, char**)) {
  constexpr int kSlotBits = 6;
  thread_local std::array<std::pair<uint64_t, std::string>, size_t{1} << kSlotBits> texts;
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof value);
  auto& [slot_bits, text] = texts[(bits * 0x9E3779B97F4A7C15ull) >> (64 - kSlotBits)];
  if (text.empty() || slot_bits != bits) {  // no text is empty
    slot_bits = bits;
    text = ShortestText<T>(value, max_digits, read);
  }
  return text;
}

}  // namespace

std::string ValueText(float value) { return RememberedText<float>(value, 9, std::strtof); }
std::string ValueText(double value) { return RememberedText<double>(value, 17, std::strtod); }
std::string ValueText(const std::string& value) { return value; }
std::string ValueText(const std::vector<int64_t>& value) { return Shape(value).ToString(); }
std::string ValueText(const std::vector<float>& value) {
  std::string text = "(";
  for (size_t i = 0; i < value.size(); ++i) text += (i ? ", " : "") + ValueText(value[i]);
  return text + (value.size() == 1 ? ",)" : ")");
}

std::string EnumTypeText(const std::vector<std::string>& names) {
  std::string text = "{";
  for (size_t i = 0; i < names.size(); ++i) text += (i ? ", '" : "'") + names[i] + "'";
  return text + "}";
}
std::string ValueText(DType value) { return DTypeName(value); }

}  // namespace internal
}  // namespace hybridnet
