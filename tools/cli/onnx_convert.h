// `hybridnet convert SYMBOL.json[,PARAMS] OUT.onnx ...` and `hybridnet ops --onnx`: ONNX export
// through the C API (hn_model_export_onnx, hn_op_onnx_info) and the parity check against ONNX
// Runtime (--check). The command line reaches it through three calls: convert hands its
// arguments to ConvertOnnx when IsOnnxConvert, ops adds OnnxOpJson to each operator and prints
// PrintOnnxTable for --onnx.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli.h"

namespace hybridnet_cli {

/// True when `hybridnet convert`'s OUT is an .onnx file.
bool IsOnnxConvert(const Args& args);

/// hybridnet convert SYMBOL.json[,PARAMS] OUT.onnx [--opset N] [--dynamic-batch]
///                   [--input NAME=D1,D2,...|NAME=FILE.npy]... [--check] [--tolerance T]
/// Writes the ONNX file; with --check, runs the model here and the ONNX file in ONNX Runtime on
/// the same inputs (random ones for inputs without a .npy) and prints the differences per
/// output. Returns the exit status (0; 1 when the check fails; 3 when the Python packages onnx
/// and onnxruntime are missing). The options are rows of convert's table (convert.cc).
int ConvertOnnx(const Args& args);

/// How the operator `op_name` exports: {"exportable", "ops" (the ONNX ops), "limits"}.
nlohmann::ordered_json OnnxOpJson(const char* op_name);

/// README.md's ONNX compatibility table for `ops` (each with its "onnx" entry); a CTest
/// compares the two.
void PrintOnnxTable(const nlohmann::ordered_json& ops);

}  // namespace hybridnet_cli
