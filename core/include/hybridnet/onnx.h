// ONNX export: a graph with its parameters as an ONNX model, written with the official
// onnx.proto schema (protobuf). Every op converts as its registry declaration says
// (Op::onnx, set with Op::SetOnnx); nodes that cannot convert are reported all at once.
//
//   OnnxExportOptions options;                    // opset 17
//   options.input_shapes["data"] = Shape{1, 3, 224, 224};
//   options.dynamic_batch = true;                 // axis 0 of "data" becomes "N"
//   SaveOnnx(symbol, params, options, "resnet.onnx");
//
// The ONNX graph keeps the model's names: data inputs, outputs ("<node>_output" as
// Symbol::ListOutputs gives them) and parameters (initializers, not graph inputs). Each ONNX
// node's doc_string names the graph node it comes from. Inference semantics throughout:
// training-only outputs and inputs (SoftmaxOutput's label) are left out.
#pragma once

#include <map>
#include <string>

#include "hybridnet/ndarray.h"
#include "hybridnet/symbol.h"

namespace hybridnet {

/// The oldest ONNX opset ExportOnnx writes.
constexpr int kOnnxMinOpset = 13;
/// The newest ONNX opset ExportOnnx writes.
constexpr int kOnnxMaxOpset = 21;
/// The opset used unless OnnxExportOptions::opset says otherwise.
constexpr int kOnnxDefaultOpset = 17;

/// How ExportOnnx writes the model.
struct OnnxExportOptions {
  /// ONNX opset of the default domain, kOnnxMinOpset .. kOnnxMaxOpset.
  int opset = kOnnxDefaultOpset;
  /// Axis 0 of every data input becomes the symbolic dimension "N"; dims that follow it
  /// elsewhere are symbolic too. Refused, naming the node, when the graph fixes the batch size.
  bool dynamic_batch = false;
  /// Shapes of the data inputs (graph variables without a value in the parameters); a
  /// variable's "__shape__" attribute serves when it is not listed here.
  std::map<std::string, Shape> input_shapes;
  /// Dtypes of data inputs; others use their "__dtype__" attribute, else float32.
  std::map<std::string, DType> input_dtypes;
  /// ModelProto.graph.name.
  std::string graph_name = "hybridnet";
  /// ModelProto.producer_version; empty: not written.
  std::string producer_version;
};

/// The serialized ModelProto of `symbol` with `params` as initializers. Variables without a
/// value in `params` are graph inputs; the shapes of those that are not in
/// options.input_shapes (and have no "__shape__") must follow from the others.
/// Throws kUnsupported listing every node that does not convert (and why),
/// kInvalidArgument for a bad option, kShapeError when shapes cannot be inferred.
std::string ExportOnnx(const Symbol& symbol, const std::map<std::string, NDArray>& params,
                       const OnnxExportOptions& options);

/// ExportOnnx, written to `path` (kIOError naming the path when it cannot be written).
void SaveOnnx(const Symbol& symbol, const std::map<std::string, NDArray>& params,
              const OnnxExportOptions& options, const std::string& path);

/// The IR version a model of `opset` declares (opset 13 -> 7, 14..18 -> 8, 19..20 -> 9, 21 -> 10).
int OnnxIrVersion(int opset);

}  // namespace hybridnet
