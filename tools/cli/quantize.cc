// hybridnet quantize PREFIX EPOCH OUT: an fp32 export to int8 (hn_quantize_model), calibrated
// on a .npy batch of inputs.
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cli.h"

namespace hybridnet_cli {

namespace {

// The command's options and the hn_quantize_model keys they set, in one table; a flag sets its
// key to `flag_value`.
struct OptionKey {
  const char* option;
  const char* key;
  const char* flag_value = nullptr;
};
const OptionKey kOptionKeys[] = {
    {"--calib-mode", "calib_mode"},
    {"--quantized-dtype", "quantized_dtype"},
    {"--quantize-mode", "quantize_mode"},
    {"--exclude", "exclude_layers"},
    {"--exclude-match", "exclude_layers_match"},
    {"--exclude-op", "exclude_operators"},
    {"--num-calib-examples", "num_calib_examples"},
    {"--batch-size", "batch_size"},
    {"--data-name", "data_name"},
    {"--int8-weights", "int8_weights", "true"},
};

int Quantize(const Args& args) {
  const std::string& prefix = args.positional(0);
  const std::string& epoch_text = args.positional(1);
  const std::string& out = args.positional(2);
  size_t used = 0;
  int epoch = -1;
  try {
    epoch = std::stoi(epoch_text, &used);
  } catch (const std::exception&) {
  }
  if (used != epoch_text.size() || epoch < 0 || epoch > 9999) {
    UsageError("EPOCH must be a number in [0, 9999], got '" + epoch_text + "'");
  }
  hn_tensor* raw = nullptr;
  Check(hn_tensor_load_npy(args.value("--calib")->c_str(), &raw));
  Tensor calib(raw);
  std::vector<std::string> keys, values;
  for (const OptionKey& o : kOptionKeys) {
    std::vector<std::string> given = args.values(o.option);
    if (given.empty()) continue;
    std::string joined;
    for (const auto& v : given) joined += (joined.empty() ? "" : ",") + v;
    keys.push_back(o.key);
    values.push_back(o.flag_value ? o.flag_value : joined);
  }
  std::vector<const char*> key_ptrs, value_ptrs;
  for (size_t i = 0; i < keys.size(); ++i) {
    key_ptrs.push_back(keys[i].c_str());
    value_ptrs.push_back(values[i].c_str());
  }
  char* report_text = nullptr;
  Check(hn_quantize_model(prefix.c_str(), epoch, calib.get(), key_ptrs.data(), value_ptrs.data(),
                          keys.size(), out.c_str(), &report_text));
  nlohmann::ordered_json report = nlohmann::ordered_json::parse(report_text);
  hn_string_free(report_text);
  const auto& nodes = report["quantized_nodes"];
  std::cout << prefix << " epoch " << epoch << " -> int8 ("
            << args.value("--calib-mode").value_or("naive") << " calibration)\n";
  std::cout << "  quantized nodes (" << nodes.size() << "):";
  for (const auto& n : nodes) std::cout << " " << n.get<std::string>();
  std::cout << "\n  calibrated ranges:\n";
  for (const auto& kv : report["calib_table"].items()) {
    std::cout << "    " << kv.key() << " [" << kv.value()[0].get<float>() << ", "
              << kv.value()[1].get<float>() << "]\n";
  }
  char suffix[32];
  std::snprintf(suffix, sizeof(suffix), "-%04d.params", epoch);
  if (report.value("int8_weights", false)) {
    std::cout << "  int8 weights: convolution weights stored int8 (not loadable by MXNet)\n";
  }
  std::cout << "wrote " << out << "-symbol.json and " << out << suffix << "\n";
  return 0;
}

}  // namespace

extern const Command kQuantize{
    "quantize",
    "quantizes an fp32 export to int8, as MXNet 1.9.1's quantize_net",
    {{"PREFIX", "the fp32 export's path prefix"},
     {"EPOCH", "its epoch (EEEE in the params name)"},
     {"OUT", "the prefix to write OUT-symbol.json and OUT-EEEE.params to"}},
    {{"--calib", "DATA.npy", "calibration inputs, float32, batch first", false, true},
     {"--calib-mode", "naive|entropy", "ranges from min/max (default) or KL thresholds"},
     {"--quantized-dtype", "auto|int8|uint8", "what data is quantized to (default auto)"},
     {"--quantize-mode", "full|smart", "which quantizable ops become int8 (default full)"},
     {"--exclude", "NAME,...", "nodes kept fp32", true},
     {"--exclude-match", "PART,...", "nodes whose names contain PART kept fp32", true},
     {"--exclude-op", "OP,...", "operators kept fp32", true},
     {"--num-calib-examples", "N", "calibrate on the first N examples (default all)"},
     {"--batch-size", "N", "calibration batch size (default 32)"},
     {"--data-name", "NAME", "the input the data feeds (default data)"},
     {"--int8-weights", nullptr,
      "store convolution weights int8 (about 4x smaller params; hybridnet only, MXNet does not "
      "load it)"}},
    Quantize,
    "  The output is what MXNet 1.9.1's quantize_net exports on CPU and MXNet loads:\n"
    "  Convolution [+ BatchNorm] [+ relu] as a quantized _sg_mkldnn_conv, FullyConnected\n"
    "  [+ relu] as a quantized _sg_mkldnn_fully_connected with int8 weights, Pooling, Flatten\n"
    "  and relu as _contrib_quantized_* ops, between _contrib_quantize_v2 and\n"
    "  _contrib_dequantize. auto quantizes a non-negative range to uint8, others to int8.\n"
    "  --int8-weights (a hybridnet extension) stores each convolution's weights as the op\n"
    "  quantizes them (BatchNorm folded in) with their scales: the same outputs bit for bit\n"
    "  from params about 4x smaller, marked so (hybridnet_int8_weights) that MXNet refuses them."};

}  // namespace hybridnet_cli
