// `hybridnet convert SYMBOL.json[,PARAMS] OUT.onnx ...`: ONNX export through the C API
// (hn_model_export_onnx) and the parity check against ONNX Runtime (--check).
#pragma once

#include <string>
#include <vector>

namespace hybridnet_cli {

struct OnnxConvertOptions {
  std::string symbol_file;
  std::string params_file;  ///< empty: the weights are graph inputs
  std::string output;
  int opset = 0;            ///< 0: the library's default
  bool dynamic_batch = false;
  /// NAME=D1,D2,... (a data input's shape) or NAME=FILE.npy (its shape, and its values for
  /// --check).
  std::vector<std::string> inputs;
  bool check = false;
  double tolerance = 1e-4;  ///< largest relative difference --check accepts
};

/// The exit status of `--check` when the Python packages onnx/onnxruntime are missing.
constexpr int kCheckToolsMissing = 3;

/// Writes the ONNX file; with `check`, runs the model here and the ONNX file in ONNX Runtime on
/// the same inputs (random ones for inputs without a .npy) and prints the differences per
/// output. Returns the exit status (0, 1 when the check fails, kCheckToolsMissing).
int ConvertToOnnx(const OnnxConvertOptions& options);

}  // namespace hybridnet_cli
