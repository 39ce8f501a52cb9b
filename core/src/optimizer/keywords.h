// Keyword arguments of optimizers and schedulers: MXNet's Python keywords written as Python
// literals ("0.9", "True", "None", "[10, 20]", "'linear'"), checked against one table of the
// accepted keywords and their defaults.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "hybridnet/optimizer.h"

namespace hybridnet {
namespace optimizer {

/// Accepted keywords with the Python text of their defaults ("" = required).
using KeywordTable = std::vector<std::pair<std::string, std::string>>;

/// `text` in lower case.
std::string Lower(std::string text);
/// A double as Python's repr writes it ("0.1", "1e-08", "2.0").
std::string PyFloat(double value);
/// A Python number literal (int or float) as a double; `what` names it in the error.
double ParsePyNumber(const std::string& text, const std::string& what);

/// The keywords given to one constructor, read by name; a value not given is the table's default.
class Keywords {
 public:
  /// `owner` names the optimizer or scheduler in errors. Keywords not in `table`:
  /// kInvalidArgument listing the accepted ones.
  Keywords(std::string owner, KeywordTable table, const KeywordArgs& given);

  double Number(const std::string& key);
  /// None (or "none") is std::nullopt.
  std::optional<double> OptionalNumber(const std::string& key);
  int Int(const std::string& key);
  bool Bool(const std::string& key);
  /// A quoted or bare string: 'linear' or linear.
  std::string String(const std::string& key);
  /// "[10, 20]", "(10, 20)" or "10".
  std::vector<int> IntList(const std::string& key);
  /// Throws when a keyword the table lists was given but never read (an option this build
  /// does not act on is refused rather than ignored).
  void CheckAllUsed() const;

 private:
  const std::string& Text(const std::string& key);
  [[noreturn]] void Fail(const std::string& key, const std::string& text,
                         const std::string& expected) const;

  std::string owner_;
  KeywordTable table_;
  KeywordArgs given_;
  std::set<std::string> read_;
};

}  // namespace optimizer
}  // namespace hybridnet
