// Automatic node names, MXNet style: "<hint><n>" with a counter per hint, inside an optional
// prefix scope ("hybridnet0_relu0"). Gluon blocks push their prefix while they run.
#pragma once

#include <string>

namespace hybridnet {
namespace internal {

/// "<prefix><hint><n>" for the innermost scope (counters are per scope and hint).
std::string AutoName(const std::string& hint);

/// Pushes a naming scope for its lifetime (per thread).
class NameScope {
 public:
  explicit NameScope(std::string prefix);
  ~NameScope();
  NameScope(const NameScope&) = delete;
  NameScope& operator=(const NameScope&) = delete;
  static std::string CurrentPrefix();
};

}  // namespace internal
}  // namespace hybridnet
