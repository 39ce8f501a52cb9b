// Helper for the MXNet golden test (mxnet_golden.py): runs hybridnet's side of each check.
//
//   golden_runner import PREFIX INPUT.npy OUT   -> OUT-eager.npy, OUT-hybrid.npy, OUT-resaved.json
//   golden_runner export PREFIX                 -> PREFIX-symbol.json, PREFIX-0000.params,
//                                                  PREFIX-input.npy, PREFIX-output.npy
#include <iostream>
#include <string>

#include "hybridnet/gluon/nn.h"
#include "hybridnet/gluon/symbol_block.h"
#include "hybridnet/npy.h"

using namespace hybridnet;
using namespace hybridnet::gluon;

int main(int argc, char** argv) {
  try {
    std::string command = argc > 1 ? argv[1] : "";
    if (command == "import" && argc == 5) {
      std::string prefix = argv[2], out = argv[4];
      NDArray x = LoadNpy(argv[3]);
      auto block = SymbolBlock::Imports(prefix + "-symbol.json", {"data"}, prefix + "-0000.params");
      SaveNpy(out + "-eager.npy", (*block)(x));
      block->Hybridize();
      SaveNpy(out + "-hybrid.npy", (*block)(x));
      Symbol::Load(prefix + "-symbol.json").Save(out + "-resaved.json");
      return 0;
    }
    if (command == "export" && argc == 3) {
      std::string prefix = argv[2];
      Seed(2024);
      auto net = std::make_shared<HybridSequential>();
      net->Add(std::make_shared<Dense>(256, "relu"), std::make_shared<Dense>(128, "relu"),
               std::make_shared<Dense>(2));
      net->Initialize();
      net->Hybridize();
      NDArray x = NDArray::RandomNormal({4, 512});
      SaveNpy(prefix + "-input.npy", x);
      SaveNpy(prefix + "-output.npy", (*net)(x));
      net->Export(prefix);
      return 0;
    }
    std::cerr << "usage: golden_runner import PREFIX INPUT.npy OUT | export PREFIX\n";
    return 2;
  } catch (const Error& e) {
    std::cerr << "golden_runner: " << StatusCodeName(e.code()) << ": " << e.what() << "\n";
    return 1;
  }
}
