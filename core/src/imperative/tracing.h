// Per-thread trace state: while a HybridBlock traces its forward, parameters hand out their
// graph variables instead of their values, and ops without inputs (creation ops such as _zeros
// or _arange) record graph nodes instead of running, like ops on symbolic inputs.
#pragma once

namespace hybridnet {
namespace internal {

bool IsTracing();

class TracingScope {
 public:
  TracingScope();
  ~TracingScope();
  TracingScope(const TracingScope&) = delete;
  TracingScope& operator=(const TracingScope&) = delete;
};

}  // namespace internal
}  // namespace hybridnet
