// hybridnet convert IN OUT: rewrites a file in the current MXNet format.
#include <iostream>

#include "cli.h"

namespace hybridnet_cli {

namespace {

int Convert(const Args& args) {
  const std::string& in = args.positional(0);
  const std::string& out = args.positional(1);
  switch (DetectKind(in, ReadFile(in))) {
    case FileKind::kSymbol: {
      hn_symbol* raw = nullptr;
      Check(hn_symbol_load(in.c_str(), &raw));
      Owned<hn_symbol, hn_symbol_free> symbol(raw);
      Check(hn_symbol_save(symbol.get(), out.c_str()));
      break;
    }
    case FileKind::kParams: {
      hn_tensor_list* raw = nullptr;
      Check(hn_tensor_list_load(in.c_str(), &raw));
      Owned<hn_tensor_list, hn_tensor_list_free> list(raw);
      Check(hn_tensor_list_save(list.get(), out.c_str()));
      break;
    }
    case FileKind::kNpy: UsageError("convert takes symbol JSON or .params/.nd files");
  }
  std::cout << "wrote " << out << "\n";
  return 0;
}

}  // namespace

extern const Command kConvert{
    "convert",
    "symbol JSON -> MXNet 1.9 JSON (older formats are upgraded); .params/.nd -> V2 records",
    {{"IN", "a symbol JSON or .params/.nd file"}, {"OUT", "where to write the converted file"}},
    {},
    Convert};

}  // namespace hybridnet_cli
