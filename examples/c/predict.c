/*
 * predict: loads an exported model, runs it on a .npy input and prints the outputs.
 *
 *   c_predict PREFIX EPOCH INPUT.npy  (built as bin/c_predict)
 *
 * e.g. after `net.export("my_mlp")`:  c_predict my_mlp 0 x.npy
 * The input feeds the model's first data input; other inputs (labels) are zeros.
 * Pure C99 against hybridnet/c_api.h; link with -lhybridnet.
 */
#include <stdio.h>
#include <stdlib.h>

#include "hybridnet/c_api.h"

/* Prints the error of the failed call and returns 1. */
static int fail(const char* what) {
  fprintf(stderr, "predict: %s failed: %s: %s\n", what, hn_status_name(hn_last_error_code()),
          hn_last_error());
  return 1;
}

int main(int argc, char** argv) {
  hn_model* model = NULL;
  hn_predictor* predictor = NULL;
  hn_tensor* input = NULL;
  const char* const* inputs = NULL;
  const char* const* outputs = NULL;
  size_t num_inputs = 0, num_outputs = 0, i;
  int status = 0;

  if (argc != 4) {
    fprintf(stderr, "usage: %s PREFIX EPOCH INPUT.npy\n", argv[0]);
    return 2;
  }
  if (hn_abi_version() != HN_ABI_VERSION) {
    fprintf(stderr, "predict: built for ABI %d, libhybridnet has %d\n", HN_ABI_VERSION,
            hn_abi_version());
    return 1;
  }
  printf("hybridnet %s\n", hn_version());

  /* load: PREFIX-symbol.json + PREFIX-EEEE.params; one predictor for this thread */
  if (hn_model_load(argv[1], atoi(argv[2]), &model) != HN_OK) {
    status = fail("hn_model_load");
    goto done;
  }
  if (hn_model_input_names(model, &inputs, &num_inputs) != HN_OK ||
      hn_model_output_names(model, &outputs, &num_outputs) != HN_OK || num_inputs == 0) {
    status = fail("reading the model's names");
    goto done;
  }
  if (hn_predictor_create(model, &predictor) != HN_OK) {
    status = fail("hn_predictor_create");
    goto done;
  }

  /* predict: the input's shape is given with every call (any batch size) */
  if (hn_tensor_load_npy(argv[3], &input) != HN_OK) {
    status = fail("hn_tensor_load_npy");
    goto done;
  }
  if (hn_predictor_set_input_tensor(predictor, inputs[0], input) != HN_OK ||
      hn_predictor_forward(predictor) != HN_OK) {
    status = fail("predicting");
    goto done;
  }

  /* print every output */
  for (i = 0; i < num_outputs; ++i) {
    const int64_t* dims = NULL;
    int ndim = 0, d;
    int64_t count = 1, k;
    float* values;
    if (hn_predictor_output_shape(predictor, i, &dims, &ndim) != HN_OK) {
      status = fail("hn_predictor_output_shape");
      goto done;
    }
    for (d = 0; d < ndim; ++d) count *= dims[d];
    values = (float*)malloc((size_t)count * sizeof(float) + 1);
    if (values == NULL) {
      fprintf(stderr, "predict: out of memory\n");
      status = 1;
      goto done;
    }
    if (hn_predictor_get_output(predictor, i, values, (size_t)count * sizeof(float)) != HN_OK) {
      free(values);
      status = fail("hn_predictor_get_output");
      goto done;
    }
    printf("%s (", outputs[i]);
    for (d = 0; d < ndim; ++d) printf(d ? ", %lld" : "%lld", (long long)dims[d]);
    printf("):");
    for (k = 0; k < count && k < 20; ++k) printf(" %.6g", values[k]);
    printf(count > 20 ? " ...\n" : "\n");
    free(values);
  }

done:
  hn_tensor_free(input);
  hn_predictor_free(predictor);
  hn_model_free(model);
  return status;
}
