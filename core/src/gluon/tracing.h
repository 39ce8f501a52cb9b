// Per-thread trace state: while a HybridBlock traces its forward, parameters hand out their
// graph variables instead of their values.
#pragma once

namespace hybridnet {
namespace gluon {
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
}  // namespace gluon
}  // namespace hybridnet
