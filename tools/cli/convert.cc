// hybridnet convert IN OUT: rewrites a file in the current MXNet format, or exports a model as
// ONNX when OUT ends in .onnx (onnx_convert.h).
#include <iostream>

#include "cli.h"
#include "onnx_convert.h"

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
  if (IsOnnxConvert(args)) return ConvertOnnx(args);
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
    case FileKind::kNpy:
      UsageError("convert takes symbol JSON or .params/.nd files");
  }
  std::cout << "wrote " << out << "\n";
  return 0;
}

}  // namespace

extern const Command kConvert{
    "convert",
    "symbol JSON -> MXNet 1.9 JSON (older formats are upgraded); .params/.nd -> V2 records; "
    "SYMBOL.json[,PARAMS] -> OUT.onnx",
    {{"IN", "a symbol JSON or .params/.nd file (for ONNX: SYMBOL.json[,PARAMS])"},
     {"OUT", "where to write the converted file (.onnx: an ONNX model)"}},
    {{"--opset", "N", "ONNX: the opset, 13 to 21 (default 17)"},
     {"--dynamic-batch", nullptr, "ONNX: axis 0 of the inputs is symbolic"},
     {"--input", "NAME=D1,D2,...|NAME=FILE.npy",
      "ONNX: a data input's shape, or a .npy giving its shape and, for --check, its values", true},
     {"--check", nullptr,
      "ONNX: run the model here and the ONNX file in ONNX Runtime on the same inputs and print "
      "the difference per output (and onnx.checker's verdict)"},
     {"--tolerance", "T", "ONNX: the largest relative difference --check accepts (1e-4)"}},
    Convert};

}  // namespace hybridnet_cli
