/*
 * The C side of the cross-language checks: loads PREFIX-symbol.json + PREFIX-EEEE.params through
 * the C API, runs IN.npy through a predictor and writes output 0 to OUT.npy.
 *
 *   xlang_c PREFIX EPOCH IN.npy OUT.npy
 */
#include <stdio.h>
#include <stdlib.h>

#include "hybridnet/c_api.h"

int main(int argc, char** argv) {
  hn_model* model = NULL;
  hn_predictor* predictor = NULL;
  hn_tensor* input = NULL;
  hn_tensor* output = NULL;
  const char* const* inputs = NULL;
  size_t num_inputs = 0;
  int status = 1;
  if (argc != 5) {
    fprintf(stderr, "usage: %s PREFIX EPOCH IN.npy OUT.npy\n", argv[0]);
    return 2;
  }
  if (hn_model_load(argv[1], atoi(argv[2]), &model) == HN_OK &&
      hn_model_input_names(model, &inputs, &num_inputs) == HN_OK && num_inputs > 0 &&
      hn_predictor_create(model, &predictor) == HN_OK &&
      hn_tensor_load_npy(argv[3], &input) == HN_OK &&
      hn_predictor_set_input_tensor(predictor, inputs[0], input) == HN_OK &&
      hn_predictor_forward(predictor) == HN_OK && hn_predictor_output(predictor, 0, &output) == HN_OK &&
      hn_tensor_save_npy(output, argv[4]) == HN_OK) {
    status = 0;
  } else {
    fprintf(stderr, "xlang_c: %s: %s\n", hn_status_name(hn_last_error_code()), hn_last_error());
  }
  hn_tensor_free(output);
  hn_tensor_free(input);
  hn_predictor_free(predictor);
  hn_model_free(model);
  return status;
}
