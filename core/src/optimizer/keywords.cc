#include "optimizer/keywords.h"

#include <cctype>
#include <cstdlib>
#include <string>

#include "hybridnet/param.h"

namespace hybridnet {
namespace optimizer {

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::string PyFloat(double value) { return internal::ValueText(value); }

double ParsePyNumber(const std::string& text, const std::string& what) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  HN_CHECK(!text.empty() && end == text.c_str() + text.size(), kInvalidArgument)
      << what << ": '" << text << "' is not a number";
  return value;
}

Keywords::Keywords(std::string owner, KeywordTable table, const KeywordArgs& given)
    : owner_(std::move(owner)), table_(std::move(table)), given_(given) {
  for (const auto& kv : given_) {
    bool known = false;
    for (const auto& entry : table_) known = known || entry.first == kv.first;
    if (known) continue;
    std::string accepted;
    for (const auto& entry : table_) accepted += (accepted.empty() ? "" : ", ") + entry.first;
    HN_THROW(kInvalidArgument) << owner_ << ": unknown keyword '" << kv.first
                               << "'; accepted: " << accepted;
  }
}

const std::string& Keywords::Text(const std::string& key) {
  read_.insert(key);
  for (auto it = given_.rbegin(); it != given_.rend(); ++it)
    if (it->first == key) return it->second;
  for (const auto& entry : table_) {
    if (entry.first != key) continue;
    HN_CHECK(!entry.second.empty(), kInvalidArgument)
        << owner_ << ": the keyword '" << key << "' is required";
    return entry.second;
  }
  HN_THROW(kInternal) << owner_ << ": keyword '" << key << "' is not in its table";
}

void Keywords::Fail(const std::string& key, const std::string& text,
                    const std::string& expected) const {
  HN_THROW(kInvalidArgument) << owner_ << ": keyword '" << key << "'='" << text << "': expected "
                             << expected;
}

double Keywords::Number(const std::string& key) {
  const std::string& text = Text(key);
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) Fail(key, text, "a number");
  return value;
}

std::optional<double> Keywords::OptionalNumber(const std::string& key) {
  const std::string& text = Text(key);
  if (text == "None" || text == "none") return std::nullopt;
  return Number(key);
}

int Keywords::Int(const std::string& key) {
  const std::string& text = Text(key);
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size()) Fail(key, text, "an integer");
  return static_cast<int>(value);
}

bool Keywords::Bool(const std::string& key) {
  const std::string& text = Text(key);
  if (text == "True" || text == "true" || text == "1") return true;
  if (text == "False" || text == "false" || text == "0") return false;
  Fail(key, text, "True or False");
}

std::string Keywords::String(const std::string& key) {
  std::string text = Text(key);
  if (text.size() >= 2 && (text.front() == '\'' || text.front() == '"') &&
      text.back() == text.front()) {
    text = text.substr(1, text.size() - 2);
  }
  return text;
}

std::vector<int> Keywords::IntList(const std::string& key) {
  const std::string& text = Text(key);
  std::vector<int> values;
  std::string number;
  auto flush = [&]() {
    if (number.empty()) return;
    char* end = nullptr;
    const long v = std::strtol(number.c_str(), &end, 10);
    if (end != number.c_str() + number.size())
      Fail(key, text, "a list of integers such as [10, 20]");
    values.push_back(static_cast<int>(v));
    number.clear();
  };
  for (char c : text) {
    if (c == '[' || c == ']' || c == '(' || c == ')' || c == ',' ||
        std::isspace(static_cast<unsigned char>(c))) {
      flush();
    } else {
      number += c;
    }
  }
  flush();
  return values;
}

void Keywords::CheckAllUsed() const {
  for (const auto& kv : given_) {
    HN_CHECK(read_.count(kv.first) != 0, kUnsupported)
        << owner_ << ": keyword '" << kv.first << "' is not supported by this build";
  }
}

}  // namespace optimizer
}  // namespace hybridnet
