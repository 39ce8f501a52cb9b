// The C++ side of the binding tests (Java, Scala): loads exports with the C++ core (not the C
// API) so a model written by a binding is checked by an independent reader, writes inputs,
// and compares outputs.
//
//   hn_bindings_run run PREFIX EPOCH IN.npy OUT.npy [--hybridize]
//       SymbolBlock::Imports(PREFIX-symbol.json, {"data"}, PREFIX-EEEE.params), one forward
//       with the default thread count, as the bindings and the CLI run theirs (OpenBLAS's
//       products, which AVX2 CPUs run, can differ in the last bit between thread counts)
//   hn_bindings_run random OUT.npy SEED D1 [D2 ...]      normal(0, 1) float32 values
//   hn_bindings_run compare A.npy B.npy [TOLERANCE]     exit 0 when max |a - b| <= TOLERANCE
//                                                       (default 0: bit-identical values)
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "hybridnet/gluon/symbol_block.h"
#include "hybridnet/ndarray.h"
#include "hybridnet/npy.h"

namespace hn = hybridnet;

namespace {

int Usage() {
  std::cerr << "usage: hn_bindings_run run PREFIX EPOCH IN.npy OUT.npy [--hybridize]\n"
               "       hn_bindings_run random OUT.npy SEED D1 [D2 ...]\n"
               "       hn_bindings_run compare A.npy B.npy [TOLERANCE]\n";
  return 2;
}

int Run(int argc, char** argv) {
  if (argc < 6 || argc > 7) return Usage();
  std::string prefix = argv[2];
  int epoch = std::atoi(argv[3]);
  bool hybridize = argc == 7 && std::strcmp(argv[6], "--hybridize") == 0;
  if (argc == 7 && !hybridize) return Usage();
  char suffix[32];
  std::snprintf(suffix, sizeof(suffix), "-%04d.params", epoch);
  auto block = hn::gluon::SymbolBlock::Imports(prefix + "-symbol.json", {"data"}, prefix + suffix);
  if (hybridize) block->Hybridize();
  hn::NDArray y = (*block)(hn::LoadNpy(argv[4]));
  hn::SaveNpy(argv[5], y);
  std::cout << "wrote " << argv[5] << " " << y.shape() << "\n";
  return 0;
}

int Random(int argc, char** argv) {
  if (argc < 5) return Usage();
  std::vector<int64_t> dims;
  for (int i = 4; i < argc; ++i) dims.push_back(std::atoll(argv[i]));
  hn::Seed(std::strtoull(argv[3], nullptr, 10));
  hn::SaveNpy(argv[2], hn::NDArray::RandomNormal(hn::Shape(dims)));
  return 0;
}

int Compare(int argc, char** argv) {
  if (argc < 4 || argc > 5) return Usage();
  double tolerance = argc == 5 ? std::atof(argv[4]) : 0.0;
  hn::NDArray a = hn::LoadNpy(argv[2]);
  hn::NDArray b = hn::LoadNpy(argv[3]);
  if (a.shape() != b.shape()) {
    std::cout << "shapes differ: " << a.shape() << " vs " << b.shape() << "\n";
    return 1;
  }
  std::vector<float> va = a.ToFloatVector(), vb = b.ToFloatVector();
  double max_diff = 0;
  for (size_t i = 0; i < va.size(); ++i) {
    double d = std::fabs(static_cast<double>(va[i]) - static_cast<double>(vb[i]));
    if (!(d <= max_diff)) max_diff = d;  // NaN-safe: a NaN difference is kept
  }
  std::cout << va.size() << " values, max |a - b| = " << max_diff << "\n";
  return max_diff <= tolerance ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage();
  try {
    std::string mode = argv[1];
    if (mode == "run") return Run(argc, argv);
    if (mode == "random") return Random(argc, argv);
    if (mode == "compare") return Compare(argc, argv);
    return Usage();
  } catch (const hn::Error& e) {
    std::cerr << "hn_bindings_run: " << hn::StatusCodeName(e.code()) << ": " << e.what() << "\n";
    return 1;
  }
}
