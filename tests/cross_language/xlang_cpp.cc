// The C++ side of the cross-language checks (tests/cross_language/run.sh), on the C++ core:
//
//   xlang_cpp export PREFIX SEED IN.npy     the seed MLP 512 -> 256 -> 128 -> 2: hn::Seed(SEED),
//                                            Initialize("uniform"), Hybridize, one forward on IN,
//                                            Export(PREFIX) -- the steps every language repeats
//   xlang_cpp run PREFIX EPOCH IN.npy[,IN.npy...] OUT.npy
//                                            SymbolBlock::Imports + one forward: the inputs feed
//                                            the data inputs in order; OUT = output 0, output K
//                                            to OUT.K.npy (as examples/*/Predict)
//   xlang_cpp random OUT.npy SEED D1 [D2 ...]   normal(0, 1) float32 values
//   xlang_cpp same A.npy B.npy                  exit 0 when shape, dtype and every byte of the
//                                               values are equal
//   xlang_cpp print A.npy                       the values on one line (%.7g; scripts/demo.sh)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "hybridnet/gluon/initializer.h"
#include "hybridnet/gluon/nn.h"
#include "hybridnet/gluon/symbol_block.h"
#include "hybridnet/imperative.h"
#include "hybridnet/io/params.h"
#include "hybridnet/ndarray.h"
#include "hybridnet/npy.h"

namespace hn = hybridnet;

namespace {

int Usage() {
  std::cerr << "usage: xlang_cpp export PREFIX SEED IN.npy\n"
               "       xlang_cpp run PREFIX EPOCH IN.npy[,IN.npy...] OUT.npy\n"
               "       xlang_cpp random OUT.npy SEED D1 [D2 ...]\n"
               "       xlang_cpp same A.npy B.npy\n"
               "       xlang_cpp print A.npy\n";
  return 2;
}

int Export(const std::string& prefix, uint64_t seed, const std::string& input) {
  using hn::gluon::Dense;
  auto net = std::make_shared<hn::gluon::HybridSequential>();
  net->Add(std::make_shared<Dense>(256, "relu"), std::make_shared<Dense>(128, "relu"),
           std::make_shared<Dense>(2));
  hn::Seed(seed);
  net->Initialize(hn::gluon::InitializerByName("uniform"));
  net->Hybridize();
  (*net)(hn::LoadNpy(input));
  net->Export(prefix);
  std::cout << "C++ wrote " << prefix << "-symbol.json and " << prefix << "-0000.params\n";
  return 0;
}

int Run(const std::string& prefix, int epoch, const std::string& in, const std::string& out) {
  char suffix[32];
  std::snprintf(suffix, sizeof(suffix), "-%04d.params", epoch);
  // The data inputs: the graph's inputs without a value in the params file.
  std::set<std::string> stored;
  for (const auto& key : hn::LoadNDArrayList(prefix + suffix).names) {
    stored.insert(key.rfind("arg:", 0) == 0 || key.rfind("aux:", 0) == 0 ? key.substr(4) : key);
  }
  std::vector<std::string> names;
  for (const auto& name : hn::Symbol::Load(prefix + "-symbol.json").ListInputs()) {
    if (!stored.count(name)) names.push_back(name);
  }
  std::vector<hn::NDArray> inputs;
  for (size_t begin = 0; begin <= in.size();) {
    size_t end = std::min(in.find(',', begin), in.size());
    inputs.push_back(hn::LoadNpy(in.substr(begin, end - begin)));
    begin = end + 1;
  }
  names.resize(std::min(names.size(), inputs.size()));
  auto block = hn::gluon::SymbolBlock::Imports(prefix + "-symbol.json", names, prefix + suffix);
  std::vector<hn::NDArray> outputs = (*block)(inputs);
  const std::string stem = out.size() > 4 ? out.substr(0, out.size() - 4) : out;
  for (size_t k = 0; k < outputs.size(); ++k) {
    hn::SaveNpy(k == 0 ? out : stem + "." + std::to_string(k) + ".npy", outputs[k]);
  }
  return 0;
}

int Same(const std::string& a_path, const std::string& b_path) {
  hn::NDArray a = hn::LoadNpy(a_path), b = hn::LoadNpy(b_path);
  bool same = a.shape() == b.shape() && a.dtype() == b.dtype() &&
              std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
  if (!same) std::cout << a_path << " and " << b_path << " differ\n";
  return same ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage();
  std::string cmd = argv[1];
  try {
    hn::SetNumThreads(1);
    if (cmd == "export" && argc == 5)
      return Export(argv[2], std::strtoull(argv[3], nullptr, 10), argv[4]);
    if (cmd == "run" && argc == 6) return Run(argv[2], std::atoi(argv[3]), argv[4], argv[5]);
    if (cmd == "same" && argc == 4) return Same(argv[2], argv[3]);
    if (cmd == "print" && argc == 3) {
      for (float v : hn::LoadNpy(argv[2]).ToFloatVector()) std::printf(" %11.7g", v);
      std::printf("\n");
      return 0;
    }
    if (cmd == "random" && argc >= 5) {
      std::vector<int64_t> dims;
      for (int i = 4; i < argc; ++i) dims.push_back(std::atoll(argv[i]));
      hn::Seed(std::strtoull(argv[3], nullptr, 10));
      hn::SaveNpy(argv[2], hn::NDArray::RandomNormal(hn::Shape(dims)));
      return 0;
    }
    return Usage();
  } catch (const hn::Error& err) {
    std::cerr << "xlang_cpp: " << hn::StatusCodeName(err.code()) << ": " << err.what() << "\n";
    return 1;
  }
}
