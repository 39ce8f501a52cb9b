/*
 * The C side of the cross-language checks: loads PREFIX-symbol.json + PREFIX-EEEE.params through
 * the C API, runs the inputs through a predictor (in the model's input order) and writes
 * output 0 to OUT.npy, output K to OUT.K.npy (as the examples' Predict).
 *
 *   xlang_c PREFIX EPOCH IN.npy[,IN.npy...] OUT.npy
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hybridnet/c_api.h"

/* Sets input `index` of the predictor from the comma-separated list's entry `index`. */
static int set_input(hn_predictor* predictor, const char* name, const char* list, size_t index) {
  char path[4096];
  const char* begin = list;
  size_t i;
  size_t length;
  hn_tensor* input = NULL;
  int status;
  for (i = 0; i < index; ++i) begin = strchr(begin, ',') + 1;
  length = strchr(begin, ',') ? (size_t)(strchr(begin, ',') - begin) : strlen(begin);
  if (length >= sizeof(path)) return HN_ERR_INVALID_ARGUMENT;
  memcpy(path, begin, length);
  path[length] = '\0';
  status = hn_tensor_load_npy(path, &input);
  if (status == HN_OK) status = hn_predictor_set_input_tensor(predictor, name, input);
  hn_tensor_free(input);
  return status;
}

static int save_outputs(hn_predictor* predictor, const char* out) {
  char path[4096];
  size_t count = 0;
  size_t k;
  size_t stem = strlen(out) > 4 ? strlen(out) - 4 : strlen(out);
  int status = hn_predictor_num_outputs(predictor, &count);
  for (k = 0; status == HN_OK && k < count; ++k) {
    hn_tensor* output = NULL;
    if (k == 0) {
      snprintf(path, sizeof(path), "%s", out);
    } else {
      snprintf(path, sizeof(path), "%.*s.%zu.npy", (int)stem, out, k);
    }
    status = hn_predictor_output(predictor, k, &output);
    if (status == HN_OK) status = hn_tensor_save_npy(output, path);
    hn_tensor_free(output);
  }
  return status;
}

int main(int argc, char** argv) {
  hn_model* model = NULL;
  hn_predictor* predictor = NULL;
  const char* const* inputs = NULL;
  size_t num_inputs = 0;
  size_t num_files = 1;
  size_t i;
  const char* c;
  int status;
  if (argc != 5) {
    fprintf(stderr, "usage: %s PREFIX EPOCH IN.npy[,IN.npy...] OUT.npy\n", argv[0]);
    return 2;
  }
  for (c = argv[3]; *c; ++c) num_files += *c == ',';
  status = hn_model_load(argv[1], atoi(argv[2]), &model);
  if (status == HN_OK) status = hn_model_input_names(model, &inputs, &num_inputs);
  if (status == HN_OK && num_files > num_inputs) status = HN_ERR_INVALID_ARGUMENT;
  if (status == HN_OK) status = hn_predictor_create(model, &predictor);
  for (i = 0; status == HN_OK && i < num_files; ++i) {
    status = set_input(predictor, inputs[i], argv[3], i);
  }
  if (status == HN_OK) status = hn_predictor_forward(predictor);
  if (status == HN_OK) status = save_outputs(predictor, argv[4]);
  if (status != HN_OK) {
    fprintf(stderr, "xlang_c: %s: %s\n", hn_status_name(status), hn_last_error());
  }
  hn_predictor_free(predictor);
  hn_model_free(model);
  return status == HN_OK ? 0 : 1;
}
