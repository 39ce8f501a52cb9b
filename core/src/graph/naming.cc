#include "graph/naming.h"

#include <map>
#include <vector>

namespace hybridnet {
namespace internal {

namespace {

struct Scope {
  std::string prefix;
  std::map<std::string, int> counters;
};

// The bottom scope (empty prefix) holds the process-wide counters of unscoped names.
std::vector<Scope>& Scopes() {
  thread_local std::vector<Scope> scopes(1);
  return scopes;
}

}  // namespace

std::string AutoName(const std::string& hint) {
  Scope& scope = Scopes().back();
  int n = scope.counters[hint]++;
  return scope.prefix + hint + std::to_string(n);
}

NameScope::NameScope(std::string prefix) { Scopes().push_back(Scope{std::move(prefix), {}}); }

NameScope::~NameScope() { Scopes().pop_back(); }

std::string NameScope::CurrentPrefix() { return Scopes().back().prefix; }

}  // namespace internal
}  // namespace hybridnet
