// hn_quantize_model: the quantizer (hybridnet/quantization.h) over files.
#include <cstdio>
#include <map>
#include <string>

#include "c_api_common.h"
#include "hybridnet/io/params.h"
#include "hybridnet/quantization.h"

using namespace hn_capi;  // NOLINT(build/namespaces): the C API's own helpers

int hn_quantize_model(const char* prefix, int epoch, const hn_tensor* calib_data,
                      const char* const* keys, const char* const* values, size_t num_options,
                      const char* out_prefix, char** out_report) noexcept {
  HN_API_BEGIN();
  std::string in = CheckString(prefix, "prefix");
  std::string out = CheckString(out_prefix, "out_prefix");
  CheckHandle(calib_data, "calib_data");
  HN_CHECK(num_options == 0 || (keys != nullptr && values != nullptr), kInvalidArgument)
      << "argument 'keys' or 'values' is NULL";
  HN_CHECK(epoch >= 0 && epoch <= 9999, kInvalidArgument)
      << "epoch must be in [0, 9999], got " << epoch;
  std::map<std::string, std::string> options;
  for (size_t i = 0; i < num_options; ++i) {
    std::string key = CheckString(keys[i], "keys[i]");
    HN_CHECK(options.emplace(key, CheckString(values[i], "values[i]")).second, kInvalidArgument)
        << "option '" << key << "' is given twice";
  }
  char suffix[32];
  std::snprintf(suffix, sizeof(suffix), "-%04d.params", epoch);
  hn::Symbol symbol = hn::Symbol::Load(in + "-symbol.json");
  hn::NDArrayList params = hn::LoadNDArrayList(in + suffix);
  hn::QuantizedModel model =
      hn::QuantizeModel(symbol, params, calib_data->array, hn::ParseQuantizeOptions(options));
  model.Save(out, epoch);
  if (out_report != nullptr) *out_report = NewCString(model.Report());
  HN_API_END();
}
