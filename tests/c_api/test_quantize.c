/* C API: hn_quantize_model on the test MLP (Dense(16, relu), Dense(4)): the int8 graph and
 * params it writes, both calibration modes, and every refused input. */
#include <string.h>

#include "hn_test_model.h"

#define CALIB_ROWS 32

static char prefix[512];
static char out_prefix[512];
static char out_json[512];
static char out_params[512];
static hn_block* exported = NULL;
static hn_tensor* calib = NULL;

static hn_tensor* calibration_data(int64_t rows, int64_t cols) {
  float data[CALIB_ROWS * (HN_TEST_IN + 1)];
  int64_t shape[2];
  hn_tensor* t = NULL;
  shape[0] = rows;
  shape[1] = cols;
  hn_test_fill(data, (size_t)(rows * cols), 3);
  if (hn_tensor_create(HN_DTYPE_FLOAT32, shape, 2, data, (size_t)(rows * cols) * sizeof(float),
                       &t) != HN_OK) {
    return NULL;
  }
  return t;
}

static void setup(void) {
  hn_test_path(prefix, sizeof prefix, "capi_quantize_mlp");
  hn_test_path(out_prefix, sizeof out_prefix, "capi_quantize_mlp_int8");
  hn_test_path(out_json, sizeof out_json, "capi_quantize_mlp_int8-symbol.json");
  hn_test_path(out_params, sizeof out_params, "capi_quantize_mlp_int8-0002.params");
  exported = hn_test_export_mlp(prefix, 2);
  calib = calibration_data(CALIB_ROWS, HN_TEST_IN);
  HN_EXPECT(exported != NULL && calib != NULL);
}

/* The index of `name` in the list, or count when absent. */
static size_t find_array(const hn_tensor_list* list, size_t count, const char* name) {
  size_t i;
  const char* n = NULL;
  for (i = 0; i < count; ++i) {
    if (hn_tensor_list_name(list, i, &n) == HN_OK && strcmp(n, name) == 0) return i;
  }
  return count;
}

static void test_naive(void) {
  const char* keys[2] = {"calib_mode", "batch_size"};
  const char* values[2] = {"naive", "8"};
  char* report = NULL;
  char* json = NULL;
  size_t size = 0, count = 0, at;
  hn_tensor_list* params = NULL;
  hn_tensor* weight = NULL;
  int dtype = 0;
  if (calib == NULL) return;
  HN_EXPECT_OK(hn_quantize_model(prefix, 2, calib, keys, values, 2, out_prefix, &report));
  HN_EXPECT(report != NULL && strstr(report, "\"quantized_nodes\"") != NULL &&
            strstr(report, "\"data\":[") != NULL);
  hn_string_free(report);
  json = hn_test_read_file(out_json, &size);
  HN_EXPECT(json != NULL);
  if (json != NULL) {
    /* Dense(16, relu) is fused and stays int8 for the next Dense, which gives float itself. */
    HN_EXPECT(strstr(json, "\"op\": \"_contrib_quantize_v2\"") != NULL);
    HN_EXPECT(strstr(json, "\"with_eltwise\": \"True\"") != NULL);
    HN_EXPECT(strstr(json, "\"enable_float_output\": \"True\"") != NULL);
    HN_EXPECT(strstr(json, "\"op\": \"_contrib_dequantize\"") == NULL);
    free(json);
  }
  HN_EXPECT_OK(hn_tensor_list_load(out_params, &params));
  HN_EXPECT_OK(hn_tensor_list_size(params, &count));
  at = find_array(params, count, "arg:hybridsequential0_dense0_weight_quantize");
  HN_EXPECT(at < count);
  if (at < count) {
    HN_EXPECT_OK(hn_tensor_list_get(params, at, &weight));
    HN_EXPECT_OK(hn_tensor_dtype(weight, &dtype));
    HN_EXPECT(dtype == HN_DTYPE_INT8);
    hn_tensor_free(weight);
  }
  HN_EXPECT(find_array(params, count, "arg:hybridsequential0_dense0_weight_quantize_min") < count);
  HN_EXPECT(find_array(params, count, "arg:hybridsequential0_dense0_weight") == count);
  hn_tensor_list_free(params);
}

static void test_entropy_and_exclusion(void) {
  const char* keys[3] = {"calib_mode", "exclude_layers", "quantized_dtype"};
  const char* values[3] = {"entropy", "hybridsequential0_dense1_fwd", "int8"};
  char* json = NULL;
  size_t size = 0;
  if (calib == NULL) return;
  HN_EXPECT_OK(hn_quantize_model(prefix, 2, calib, keys, values, 3, out_prefix, NULL));
  json = hn_test_read_file(out_json, &size);
  HN_EXPECT(json != NULL);
  if (json != NULL) {
    /* the excluded Dense is fp32 and reads the first one's float output (as MXNet writes it) */
    HN_EXPECT(strstr(json, "\"op\": \"FullyConnected\"") != NULL);
    HN_EXPECT(strstr(json, "\"enable_float_output\": \"True\"") != NULL);
    HN_EXPECT(strstr(json, "\"out_type\": \"int8\"") != NULL);
    free(json);
  }
}

static void test_refused(void) {
  /* One refused option each: key, value, and what the error says. */
  static const char* const refused[][3] = {
      {"calib_mode", "none", "calib_mode 'none'"},
      {"calib_mode", "kl", "calib_mode 'kl' is not one of naive, entropy"},
      {"exclude_layers", "dense7_fwd", "'dense7_fwd', which is no node of the graph"},
      {"calib_modes", "dense7_fwd", "unknown option 'calib_modes'"},
      {"batch_size", "0", "batch_size needs a whole number >= 1"},
  };
  size_t i;
  hn_tensor* narrow = calibration_data(4, HN_TEST_IN + 1);
  if (calib == NULL) return;
  for (i = 0; i < sizeof refused / sizeof refused[0]; ++i) {
    HN_EXPECT_ERR(
        hn_quantize_model(prefix, 2, calib, &refused[i][0], &refused[i][1], 1, out_prefix, NULL),
        HN_ERR_INVALID_ARGUMENT, refused[i][2]);
  }
  HN_EXPECT_ERR(hn_quantize_model(prefix, 2, narrow, NULL, NULL, 0, out_prefix, NULL), HN_ERR_SHAPE,
                "does not fit input 'data'");
  HN_EXPECT_ERR(hn_quantize_model(prefix, 5, calib, NULL, NULL, 0, out_prefix, NULL), HN_ERR_IO,
                "");
  HN_EXPECT_ERR(hn_quantize_model(NULL, 2, calib, NULL, NULL, 0, out_prefix, NULL),
                HN_ERR_INVALID_ARGUMENT, "'prefix'");
  HN_EXPECT_ERR(hn_quantize_model(prefix, 2, NULL, NULL, NULL, 0, out_prefix, NULL),
                HN_ERR_INVALID_ARGUMENT, "'calib_data'");
  HN_EXPECT_ERR(hn_quantize_model(prefix, 2, calib, NULL, NULL, 1, out_prefix, NULL),
                HN_ERR_INVALID_ARGUMENT, "'keys' or 'values'");
  hn_tensor_free(narrow);
}

static void teardown(void) {
  hn_tensor_free(calib);
  hn_block_free(exported);
}

HN_TEST_MAIN(quantize, HN_RUN(setup) HN_RUN(test_naive) HN_RUN(test_entropy_and_exclusion)
                           HN_RUN(test_refused) HN_RUN(teardown))
