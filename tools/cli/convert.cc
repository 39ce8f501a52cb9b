// hybridnet convert IN OUT: rewrites a file in the current MXNet format.
#include <iostream>

#include "cli.h"

namespace hybridnet_cli {

namespace {

// Reads `in` with `load` and writes it with `save` (which writes the current format).
template <typename T, void (*Free)(T*)>
void Rewrite(int (*load)(const char*, T**), int (*save)(const T*, const char*),
             const std::string& in, const std::string& out) {
  T* raw = nullptr;
  Check(load(in.c_str(), &raw));
  Owned<T, Free> value(raw);
  Check(save(value.get(), out.c_str()));
}

int Convert(const Args& args) {
  const std::string& in = args.positional(0);
  const std::string& out = args.positional(1);
  switch (DetectKind(in, ReadFile(in))) {
    case FileKind::kSymbol:
      Rewrite<hn_symbol, hn_symbol_free>(hn_symbol_load, hn_symbol_save, in, out);
      break;
    case FileKind::kParams:
      Rewrite<hn_tensor_list, hn_tensor_list_free>(hn_tensor_list_load, hn_tensor_list_save, in,
                                                   out);
      break;
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
