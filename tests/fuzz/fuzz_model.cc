// Fuzz target: a model (symbol JSON + .params bytes) loaded, planned and run through the C API,
// as a binding would. Input layout: 4 bytes little-endian JSON length, the JSON, the params.
// Every data input is fed a (2, 3) float array; any status is fine, a crash is a finding.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "hybridnet/c_api.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Small tensors keep every run fast and turn an allocation the input does not justify into a
  // limit error instead of a libFuzzer malloc-limit report.
  static const bool limited = hn_set_limit(HN_LIMIT_MAX_TENSOR_ELEMENTS, 1 << 16) == HN_OK &&
                              hn_set_limit(HN_LIMIT_MAX_ALLOCATION_BYTES, 64 << 20) == HN_OK;
  if (!limited) __builtin_trap();
  if (size < 4) return 0;
  const size_t json_bytes = static_cast<size_t>(data[0]) | static_cast<size_t>(data[1]) << 8 |
                            static_cast<size_t>(data[2]) << 16 | static_cast<size_t>(data[3]) << 24;
  if (json_bytes > size - 4) return 0;
  const char* json = reinterpret_cast<const char*>(data + 4);
  const uint8_t* params = data + 4 + json_bytes;
  const size_t params_bytes = size - 4 - json_bytes;
  hn_model* model = nullptr;
  if (hn_model_load_from_memory(json, json_bytes, params, params_bytes, &model) != HN_OK) return 0;
  hn_predictor* pred = nullptr;
  const char* const* names = nullptr;
  size_t count = 0;
  if (hn_predictor_create(model, &pred) == HN_OK &&
      hn_model_input_names(model, &names, &count) == HN_OK) {
    const int64_t shape[2] = {2, 3};
    const std::vector<float> x(6, 0.5f);
    bool ok = true;
    for (size_t i = 0; i < count && ok; ++i)
      ok = hn_predictor_set_input(pred, names[i], HN_DTYPE_FLOAT32, shape, 2, x.data(),
                                  x.size() * sizeof(float)) == HN_OK;
    if (ok) hn_predictor_forward(pred);
  }
  hn_predictor_free(pred);
  hn_model_free(model);
  return 0;
}
