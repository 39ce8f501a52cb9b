// What the C++ workers of the training benchmarks (train_step_worker for
// bench/train_step_bench.py, train_epoch_worker for bench/train_epoch_bench.py) share: the
// drivers' protocol on stdin/stdout and the figures they report.
//
// Protocol: "name=<system>", then "check <key>=<value>... first_ms=<first run>" after a first
// run, or "error=<why>" and exit 3; then, for each line "N" on stdin, N runs and their mean in
// milliseconds; for "mem", VmHWM and the VmRSS before the first run, in kB.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "hybridnet/ndarray.h"

namespace hybridnet {
namespace bench {

/// One unit of work the driver times (a training step, an epoch) and its check figures.
class TimedTask {
 public:
  virtual ~TimedTask() = default;
  virtual void Run() = 0;
  /// "key=value ..." after the first Run, for the driver to compare across systems.
  virtual std::string Checks() const = 0;
};

/// The sum of `x`'s elements (or of their squares), in double.
double Sum(const NDArray& x, bool squares);

/// Prints `name`, makes the task with `load` (its errors become "error=..."), runs it once and
/// then as the driver asks until stdin closes. Returns the process's exit code.
int Serve(const std::string& name, const std::function<std::unique_ptr<TimedTask>()>& load);

}  // namespace bench
}  // namespace hybridnet
