// Shared by the benchmarks: the seed MLP, the OpenBLAS settings banner and a reporter that
// prints medians and their ratios from one run (this machine is shared: compare within a run).
#pragma once

#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <vector>

#include "hybridnet/ndarray.h"
#include "hybridnet/symbol.h"

namespace hybridnet {
namespace bench {

/// The seed tutorials' MLP: 512 -> 256 relu -> 128 relu -> 2, as a symbol with named params.
struct SeedMlp {
  static constexpr int64_t kIn = 512;
  static constexpr int64_t kUnits[3] = {256, 128, 2};
  Symbol symbol;
  std::map<std::string, NDArray> params;
  std::vector<NDArray> weights, biases;  // in layer order
};
SeedMlp MakeSeedMlp(uint64_t seed);

/// Prints the OpenBLAS configuration and environment every figure depends on.
void PrintSettings();

/// Runs the registered benchmarks with interleaved repetitions and prints a table of medians,
/// then each "ratios" pair as median(a) / median(b).
int RunAndReport(int argc, char** argv,
                 const std::vector<std::pair<std::string, std::string>>& ratios);

}  // namespace bench
}  // namespace hybridnet
