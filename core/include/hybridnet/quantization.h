// The int8 quantizer: an fp32 model and calibration data in, the quantized model MXNet 1.9.1's
// quantize_net writes out (symbol JSON + params that MXNet loads and runs on CPU).
//
//   QuantizeOptions options = ParseQuantizeOptions({{"calib_mode", "entropy"}});
//   QuantizedModel q = QuantizeModel(symbol, params, calib_data, options);
//   q.Save("model-int8", 0);
//
// The form is the one MXNet's oneDNN backend runs: Convolution [+ BatchNorm] [+ relu] becomes a
// quantized `_sg_mkldnn_conv` (fp32 weights, which it quantizes itself), FullyConnected [+ relu]
// a quantized `_sg_mkldnn_fully_connected` (int8 weights and bias with their ranges, quantized
// here as MXNet's _quantize_params does), Pooling / Flatten / relu their `_contrib_quantized_*`
// ops; `_contrib_quantize_v2` enters int8 with a calibrated range and `_contrib_dequantize`
// leaves it. docs/quantization.md says why this form and not quantize_model's.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "hybridnet/io/params.h"
#include "hybridnet/ndarray.h"
#include "hybridnet/symbol.h"

namespace hybridnet {

/// The graph attribute ("attrs": {"hybridnet_int8_weights": ["str", "1"]}) of a quantized model
/// whose convolutions read int8 weights (QuantizeOptions::int8_weights), which MXNet cannot load.
inline constexpr char kInt8WeightsGraphAttr[] = "hybridnet_int8_weights";

/// quantize_net's options (MXNet 1.9.1 names and defaults, except calib_mode: see below).
struct QuantizeOptions {
  std::string quantized_dtype = "auto";  ///< auto | int8 | uint8: what quantize_v2 writes
  std::string quantize_mode = "full";    ///< full (every quantizable op) | smart
  std::string quantize_granularity = "tensor-wise";  ///< tensor-wise only
  std::vector<std::string> exclude_layers;           ///< node names kept fp32
  std::vector<std::string> exclude_layers_match;     ///< substrings of node names kept fp32
  std::vector<std::string> exclude_operators;        ///< op names kept fp32
  /// naive (min/max) | entropy (KL thresholds); MXNet's "none" (ranges found at run time) is
  /// not written: every range here is calibrated.
  std::string calib_mode = "naive";
  int64_t num_calib_examples = 0;  ///< 0: all of the calibration data
  int64_t batch_size = 32;         ///< calibration batch (entropy thresholds depend on it)
  std::string data_name = "data";  ///< the model input the calibration data feeds
  /// A hybridnet extension: every quantized convolution's weights stored int8 (BatchNorm folded
  /// in, quantized as the op quantizes them at run time) with their scales and the folded float
  /// bias, so the params are about 4x smaller. The same outputs, bit for bit, but MXNet does not
  /// load such a file: the graph says so (attribute hybridnet_int8_weights, and int8_weights on
  /// each such node).
  bool int8_weights = false;
};

/// Options from key/value strings (the C API's and the CLI's): the keys are QuantizeOptions'
/// field names; lists are comma-separated, flags true or false. Unknown keys and bad values throw
/// kInvalidArgument.
QuantizeOptions ParseQuantizeOptions(const std::map<std::string, std::string>& options);

/// A quantized model: its symbol JSON, its params ("arg:"/"aux:" names) and what was done.
struct QuantizedModel {
  std::string symbol_json;  ///< the int8 graph, MXNet 1.9.1 symbol JSON
  NDArrayList params;       ///< its parameters, "arg:NAME" / "aux:NAME" as an export's
  /// The fp32 nodes now computed in int8 (each fused group by its nodes), in graph order.
  std::vector<std::string> quantized_nodes;
  /// The calibrated range of every layer output the graph quantizes, by output name.
  std::map<std::string, std::pair<float, float>> calib_table;
  /// Whether convolutions read int8 weights (QuantizeOptions::int8_weights and at least one
  /// quantized convolution): then MXNet does not load the model.
  bool int8_weights = false;
  /// {"quantized_nodes": [...], "calib_table": {"OUTPUT_NAME": [min, max], ...},
  ///  "int8_weights": true|false}
  std::string Report() const;
  /// PREFIX-symbol.json and PREFIX-EEEE.params.
  void Save(const std::string& prefix, int epoch) const;
};

/// Quantizes `symbol` (fp32) with `params` ("arg:"/"aux:" names, as an export's .params),
/// calibrating on `calib_data` (float32, batch first) fed to options.data_name.
QuantizedModel QuantizeModel(const Symbol& symbol, const NDArrayList& params,
                             const NDArray& calib_data, const QuantizeOptions& options);

}  // namespace hybridnet
