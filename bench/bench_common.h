// Shared by the benchmarks: the seed MLP, model-zoo networks, the CPU and OpenBLAS settings
// banners and a reporter that prints medians and their ratios from one run (this machine is
// shared: compare within a run).
#pragma once

#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hybridnet/gluon/block.h"
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

/// A model-zoo network (gluon::model_zoo::GetModel) Xavier-initialized from seed 1, hybridized and
/// traced at 1x3x224x224, with BatchNorm running variances drawn from [0.5, 1.5) as trained
/// networks have them (a variance of 1 everywhere would hide BatchNorm folding mistakes).
struct ZooModel {
  std::shared_ptr<gluon::HybridBlock> net;
  NDArray x;  ///< the 1x3x224x224 input it was traced with
  Symbol graph;
  std::map<std::string, NDArray> params;  ///< the same arrays the block holds
};
ZooModel TraceZooModel(const std::string& name);

/// "CPU: <model name>; ISA: avx512f avx512_vnni ..." with the vector, int8, bfloat16 and AMX
/// extensions the kernels can use and this CPU has; every figure depends on them.
std::string CpuDescription();

/// Prints the OpenBLAS configuration and environment every figure depends on.
void PrintSettings();

/// Runs the registered benchmarks with interleaved repetitions and prints a table of medians,
/// then each "ratios" pair as median(a) / median(b).
int RunAndReport(int argc, char** argv,
                 const std::vector<std::pair<std::string, std::string>>& ratios);

}  // namespace bench
}  // namespace hybridnet
