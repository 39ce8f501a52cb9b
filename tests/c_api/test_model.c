/* C API: models and predictors (load from files and memory, names, dynamic batch, clone,
 * zero-copy inputs, detached outputs, damaged files, every failure path). */
#include <math.h>

#include "hn_test_model.h"

static char prefix[512];
static char json_path[512];
static char params_path[512];
static hn_block* exported = NULL;

static void setup(void) {
  hn_test_path(prefix, sizeof prefix, "capi_model_mlp");
  hn_test_path(json_path, sizeof json_path, "capi_model_mlp-symbol.json");
  hn_test_path(params_path, sizeof params_path, "capi_model_mlp-0003.params");
  exported = hn_test_export_mlp(prefix, 3);
}

static int same(const float* a, const float* b, size_t n, float tolerance) {
  size_t i;
  for (i = 0; i < n; ++i)
    if (!(fabsf(a[i] - b[i]) <= tolerance)) return 0;
  return 1;
}

static void test_load_and_predict(void) {
  hn_model* model = NULL;
  hn_predictor* pred = NULL;
  const char* const* names = NULL;
  size_t count = 0;
  int64_t shape[2] = {1, HN_TEST_IN};
  float x[HN_TEST_IN], y[HN_TEST_OUT], expected[HN_TEST_OUT];
  const int64_t* dims = NULL;
  int ndim = 0;
  hn_symbol* sym = NULL;
  if (exported == NULL) return;
  HN_EXPECT_OK(hn_test_block_output(exported, 1, 0, expected));
  HN_EXPECT_OK(hn_model_load(prefix, 3, &model));
  HN_EXPECT_OK(hn_model_input_names(model, &names, &count));
  HN_EXPECT(count == 1 && strcmp(names[0], "data") == 0);
  HN_EXPECT_OK(hn_model_output_names(model, &names, &count));
  HN_EXPECT(count == 1);
  HN_EXPECT_OK(hn_model_symbol(model, &sym));
  HN_EXPECT_OK(hn_symbol_list_arguments(sym, &names, &count));
  HN_EXPECT(count == 5);
  hn_symbol_free(sym);
  HN_EXPECT_OK(hn_predictor_create(model, &pred));
  HN_EXPECT_OK(hn_predictor_num_outputs(pred, &count));
  HN_EXPECT(count == 1);
  HN_EXPECT_ERR(hn_predictor_get_output(pred, 0, y, sizeof y), HN_ERR_INVALID_ARGUMENT,
                "call hn_predictor_forward first");
  hn_test_fill(x, HN_TEST_IN, 0);
  HN_EXPECT_OK(hn_predictor_set_input(pred, "data", HN_DTYPE_FLOAT32, shape, 2, x, sizeof x));
  HN_EXPECT_OK(hn_predictor_forward(pred));
  HN_EXPECT_OK(hn_predictor_output_shape(pred, 0, &dims, &ndim));
  HN_EXPECT(ndim == 2 && dims[0] == 1 && dims[1] == HN_TEST_OUT);
  HN_EXPECT_OK(hn_predictor_get_output(pred, 0, y, sizeof y));
  HN_EXPECT(same(y, expected, HN_TEST_OUT, 1e-6f));
  /* the model may go first: predictors keep its data */
  hn_model_free(model);
  HN_EXPECT_OK(hn_predictor_forward(pred));
  HN_EXPECT_OK(hn_predictor_get_output(pred, 0, y, sizeof y));
  HN_EXPECT(same(y, expected, HN_TEST_OUT, 1e-6f));
  hn_predictor_free(pred);
}

static void test_dynamic_batch_and_clone(void) {
  hn_model* model = NULL;
  hn_predictor* pred = NULL;
  hn_predictor* twin = NULL;
  int64_t shape[2] = {5, HN_TEST_IN};
  float x[5 * HN_TEST_IN], y[5 * HN_TEST_OUT], expected[5 * HN_TEST_OUT];
  float one[HN_TEST_OUT];
  const int64_t* dims;
  int ndim, round;
  if (exported == NULL) return;
  HN_EXPECT_OK(hn_test_block_output(exported, 5, 2, expected));
  HN_EXPECT_OK(hn_model_load(prefix, 3, &model));
  HN_EXPECT_OK(hn_predictor_create(model, &pred));
  for (round = 0; round < 2; ++round) { /* batch 5, batch 1, batch 5: re-plans and cached plans */
    hn_test_fill(x, 5 * HN_TEST_IN, 2);
    shape[0] = 5;
    HN_EXPECT_OK(hn_predictor_set_input(pred, "data", HN_DTYPE_FLOAT32, shape, 2, x, sizeof x));
    HN_EXPECT_OK(hn_predictor_forward(pred));
    HN_EXPECT_OK(hn_predictor_output_shape(pred, 0, &dims, &ndim));
    HN_EXPECT(ndim == 2 && dims[0] == 5);
    HN_EXPECT_OK(hn_predictor_get_output(pred, 0, y, sizeof y));
    HN_EXPECT(same(y, expected, 5 * HN_TEST_OUT, 1e-5f));
    shape[0] = 1;
    HN_EXPECT_OK(hn_predictor_set_input(pred, "data", HN_DTYPE_FLOAT32, shape, 2, x,
                                        HN_TEST_IN * sizeof(float)));
    HN_EXPECT_OK(hn_predictor_forward(pred));
    HN_EXPECT_OK(hn_predictor_get_output(pred, 0, one, sizeof one));
    HN_EXPECT(same(one, expected, HN_TEST_OUT, 1e-5f)); /* row 0 of the batch */
  }
  HN_EXPECT_OK(hn_predictor_clone(pred, &twin));
  shape[0] = 5;
  HN_EXPECT_OK(hn_predictor_set_input(twin, "data", HN_DTYPE_FLOAT32, shape, 2, x, sizeof x));
  HN_EXPECT_OK(hn_predictor_forward(twin));
  HN_EXPECT_OK(hn_predictor_get_output(twin, 0, y, sizeof y));
  HN_EXPECT(same(y, expected, 5 * HN_TEST_OUT, 1e-5f));
  hn_predictor_free(twin);
  hn_predictor_free(pred);
  hn_model_free(model);
}

static void test_tensor_inputs_and_detached_outputs(void) {
  hn_model* model = NULL;
  hn_predictor* pred = NULL;
  hn_tensor* x = NULL;
  hn_tensor* out = NULL;
  hn_tensor* outs[2] = {NULL, NULL};
  int64_t shape[2] = {1, HN_TEST_IN};
  float data[HN_TEST_IN], first[HN_TEST_OUT], kept[HN_TEST_OUT], expected[HN_TEST_OUT];
  float* xdata = NULL;
  size_t n = 0;
  if (exported == NULL) return;
  HN_EXPECT_OK(hn_test_block_output(exported, 1, 0, expected));
  HN_EXPECT_OK(hn_model_load(prefix, 3, &model));
  HN_EXPECT_OK(hn_predictor_create(model, &pred));
  hn_test_fill(data, HN_TEST_IN, 0);
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_FLOAT32, shape, 2, data, sizeof data, &x));
  HN_EXPECT_OK(hn_predictor_set_input_tensor(pred, "data", x));
  HN_EXPECT_OK(hn_predictor_forward(pred));
  HN_EXPECT_OK(hn_predictor_output(pred, 0, &out));
  HN_EXPECT_OK(hn_tensor_copy_to(out, first, sizeof first));
  HN_EXPECT(same(first, expected, HN_TEST_OUT, 1e-6f));
  /* zero-copy: writing the tensor changes the next forward's input */
  HN_EXPECT_OK(hn_tensor_data(x, (void**)&xdata));
  xdata[0] += 3.f;
  HN_EXPECT_OK(hn_predictor_forward(pred));
  /* the earlier output tensor keeps its values */
  HN_EXPECT_OK(hn_tensor_copy_to(out, kept, sizeof kept));
  HN_EXPECT(same(kept, first, HN_TEST_OUT, 0.f));
  hn_tensor_free(out);
  /* run: one call, tensors in and out */
  xdata[0] -= 3.f;
  HN_EXPECT_OK(hn_predictor_run(pred, &x, 1, 2, outs, &n));
  HN_EXPECT(n == 1 && outs[1] == NULL);
  HN_EXPECT_OK(hn_tensor_copy_to(outs[0], kept, sizeof kept));
  HN_EXPECT(same(kept, expected, HN_TEST_OUT, 1e-6f));
  HN_EXPECT_ERR(hn_predictor_run(pred, &x, 1, 0, outs, &n), HN_ERR_INVALID_ARGUMENT,
                "max_outputs is 0");
  HN_EXPECT_ERR(hn_predictor_run(pred, &x, 2, 1, outs, &n), HN_ERR_INVALID_ARGUMENT,
                "the model has 1 inputs, got num_inputs 2");
  HN_EXPECT_ERR(hn_predictor_run(pred, NULL, 1, 1, outs, &n), HN_ERR_INVALID_ARGUMENT, "'inputs'");
  HN_EXPECT_ERR(hn_predictor_run(pred, &x, 1, 1, NULL, &n), HN_ERR_INVALID_ARGUMENT, "'outputs'");
  HN_EXPECT_ERR(hn_predictor_run(pred, &x, 1, 1, outs, NULL), HN_ERR_INVALID_ARGUMENT,
                "out_num_outputs");
  hn_tensor_free(outs[0]);
  hn_tensor_free(x);
  hn_predictor_free(pred);
  hn_model_free(model);
}

static void test_load_from_memory(void) {
  size_t json_size = 0, params_size = 0;
  char* json = hn_test_read_file(json_path, &json_size);
  char* params = hn_test_read_file(params_path, &params_size);
  hn_model* model = NULL;
  hn_predictor* pred = NULL;
  int64_t shape[2] = {1, HN_TEST_IN};
  float x[HN_TEST_IN], y[HN_TEST_OUT], expected[HN_TEST_OUT];
  if (exported == NULL || json == NULL || params == NULL) {
    HN_EXPECT(json != NULL && params != NULL);
    free(json);
    free(params);
    return;
  }
  HN_EXPECT_OK(hn_test_block_output(exported, 1, 0, expected));
  HN_EXPECT_OK(hn_model_load_from_memory(json, json_size, params, params_size, &model));
  free(json); /* the model keeps no pointer into the buffers */
  free(params);
  HN_EXPECT_OK(hn_predictor_create(model, &pred));
  hn_test_fill(x, HN_TEST_IN, 0);
  HN_EXPECT_OK(hn_predictor_set_input(pred, "data", HN_DTYPE_FLOAT32, shape, 2, x, sizeof x));
  HN_EXPECT_OK(hn_predictor_forward(pred));
  HN_EXPECT_OK(hn_predictor_get_output(pred, 0, y, sizeof y));
  HN_EXPECT(same(y, expected, HN_TEST_OUT, 1e-6f));
  hn_predictor_free(pred);
  hn_model_free(model);
}

static void test_damaged_files(void) {
  size_t json_size = 0, params_size = 0;
  char* json = hn_test_read_file(json_path, &json_size);
  char* params = hn_test_read_file(params_path, &params_size);
  char bad_prefix[512], bad_json[512], bad_params[512];
  hn_model* model = NULL;
  if (json == NULL || params == NULL) {
    HN_EXPECT(json != NULL && params != NULL);
    free(json);
    free(params);
    return;
  }
  hn_test_path(bad_prefix, sizeof bad_prefix, "capi_model_bad");
  hn_test_path(bad_json, sizeof bad_json, "capi_model_bad-symbol.json");
  hn_test_path(bad_params, sizeof bad_params, "capi_model_bad-0000.params");
  /* missing files */
  HN_EXPECT_ERR(hn_model_load("/nonexistent/model", 0, &model), HN_ERR_IO,
                "/nonexistent/model-symbol.json");
  HN_EXPECT_ERR(hn_model_load(prefix, 4, &model), HN_ERR_IO, "capi_model_mlp-0004.params");
  HN_EXPECT_ERR(hn_model_load(prefix, -1, &model), HN_ERR_INVALID_ARGUMENT, "epoch");
  /* truncated and corrupt params */
  HN_EXPECT(hn_test_write_file(bad_json, json, json_size) == 0);
  HN_EXPECT(hn_test_write_file(bad_params, params, params_size - 10) == 0);
  HN_EXPECT_ERR(hn_model_load(bad_prefix, 0, &model), HN_ERR_FORMAT, "capi_model_bad-0000.params");
  HN_EXPECT(hn_test_write_file(bad_params, "garbage garbage garbage", 23) == 0);
  HN_EXPECT_ERR(hn_model_load(bad_prefix, 0, &model), HN_ERR_FORMAT, "capi_model_bad-0000.params");
  /* truncated and corrupt JSON */
  HN_EXPECT(hn_test_write_file(bad_params, params, params_size) == 0);
  HN_EXPECT(hn_test_write_file(bad_json, json, json_size / 3) == 0);
  HN_EXPECT_ERR(hn_model_load(bad_prefix, 0, &model), HN_ERR_FORMAT, "capi_model_bad-symbol.json");
  /* from memory */
  HN_EXPECT_ERR(hn_model_load_from_memory(json, json_size / 2, params, params_size, &model),
                HN_ERR_FORMAT, "<json buffer>");
  HN_EXPECT_ERR(hn_model_load_from_memory(json, json_size, params, params_size / 2, &model),
                HN_ERR_FORMAT, "<params buffer>");
  {
    /* no params bytes: a graph without parameters, so every variable is an input */
    const char* const* names = NULL;
    size_t count = 0;
    HN_EXPECT_OK(hn_model_load_from_memory(json, json_size, NULL, 0, &model));
    HN_EXPECT_OK(hn_model_input_names(model, &names, &count));
    HN_EXPECT(count == 5 && strcmp(names[0], "data") == 0);
    hn_model_free(model);
    model = NULL;
  }
  HN_EXPECT_ERR(hn_model_load_from_memory(NULL, 0, params, params_size, &model),
                HN_ERR_INVALID_ARGUMENT, "'json' is NULL");
  HN_EXPECT_ERR(hn_model_load_from_memory(json, json_size, NULL, 5, &model),
                HN_ERR_INVALID_ARGUMENT, "'params' is NULL");
  HN_EXPECT_ERR(hn_model_load_from_memory(json, json_size, params, params_size, NULL),
                HN_ERR_INVALID_ARGUMENT, "'out'");
  HN_EXPECT_ERR(hn_model_load(NULL, 0, &model), HN_ERR_INVALID_ARGUMENT, "'prefix' is NULL");
  HN_EXPECT(model == NULL);
  free(json);
  free(params);
}

static void test_params_without_names_or_weights(void) {
  char bad_prefix[512], bad_json[512], bad_params[512];
  size_t json_size = 0, count = 0;
  char* json = hn_test_read_file(json_path, &json_size);
  hn_tensor_list* list = NULL;
  hn_tensor_list* full = NULL;
  hn_tensor* t = NULL;
  hn_model* model = NULL;
  hn_predictor* pred = NULL;
  const char* const* names;
  int64_t shape[2] = {1, HN_TEST_IN};
  float x[HN_TEST_IN] = {0};
  if (json == NULL) return;
  hn_test_path(bad_prefix, sizeof bad_prefix, "capi_model_part");
  hn_test_path(bad_json, sizeof bad_json, "capi_model_part-symbol.json");
  hn_test_path(bad_params, sizeof bad_params, "capi_model_part-0000.params");
  HN_EXPECT(hn_test_write_file(bad_json, json, json_size) == 0);
  free(json);
  /* unnamed arrays */
  HN_EXPECT_OK(hn_tensor_list_load(params_path, &full));
  HN_EXPECT_OK(hn_tensor_list_get(full, 0, &t));
  HN_EXPECT_OK(hn_tensor_list_create(&list));
  HN_EXPECT_OK(hn_tensor_list_append(list, NULL, t));
  HN_EXPECT_OK(hn_tensor_list_save(list, bad_params));
  HN_EXPECT_ERR(hn_model_load(bad_prefix, 0, &model), HN_ERR_FORMAT, "unnamed");
  hn_tensor_list_free(list);
  hn_tensor_free(t);
  /* only the first weight: the others become inputs, fed zeros when not set */
  HN_EXPECT_OK(hn_tensor_list_create(&list));
  HN_EXPECT_OK(hn_tensor_list_get(full, 0, &t));
  {
    const char* name = NULL;
    HN_EXPECT_OK(hn_tensor_list_name(full, 0, &name));
    HN_EXPECT_OK(hn_tensor_list_append(list, name, t));
  }
  HN_EXPECT_OK(hn_tensor_list_save(list, bad_params));
  HN_EXPECT_OK(hn_model_load(bad_prefix, 0, &model));
  HN_EXPECT_OK(hn_model_input_names(model, &names, &count));
  HN_EXPECT(count == 4 && strcmp(names[0], "data") == 0);
  HN_EXPECT_OK(hn_predictor_create(model, &pred));
  HN_EXPECT_OK(hn_predictor_set_input(pred, "data", HN_DTYPE_FLOAT32, shape, 2, x, sizeof x));
  HN_EXPECT_OK(hn_predictor_forward(pred));
  hn_predictor_free(pred);
  hn_model_free(model);
  hn_tensor_list_free(list);
  hn_tensor_list_free(full);
  hn_tensor_free(t);
}

static void test_predictor_errors(void) {
  hn_model* model = NULL;
  hn_predictor* pred = NULL;
  hn_predictor* none = NULL;
  hn_tensor* t = NULL;
  int64_t shape[2] = {1, HN_TEST_IN};
  int64_t wrong[2] = {1, HN_TEST_IN - 1};
  float x[HN_TEST_IN] = {0};
  float small[HN_TEST_OUT - 1];
  int32_t xi[HN_TEST_IN] = {0};
  const int64_t* dims;
  int ndim;
  size_t count;
  const char* const* names;
  if (exported == NULL) return;
  HN_EXPECT_OK(hn_model_load(prefix, 3, &model));
  HN_EXPECT_OK(hn_predictor_create(model, &pred));
  HN_EXPECT_ERR(hn_predictor_set_input(pred, "image", HN_DTYPE_FLOAT32, shape, 2, x, sizeof x),
                HN_ERR_NOT_FOUND, "no input 'image' (inputs: data)");
  HN_EXPECT_ERR(hn_predictor_set_input(pred, "data", HN_DTYPE_FLOAT32, shape, 2, x, 12),
                HN_ERR_INVALID_ARGUMENT, "needs 32 bytes, got data_bytes 12");
  HN_EXPECT_ERR(hn_predictor_set_input(pred, "data", 77, shape, 2, x, sizeof x), HN_ERR_DTYPE,
                "unknown dtype 77");
  HN_EXPECT_ERR(hn_predictor_set_input(pred, "data", HN_DTYPE_FLOAT32, shape, 2, NULL, sizeof x),
                HN_ERR_INVALID_ARGUMENT, "'data' is NULL");
  HN_EXPECT_ERR(hn_predictor_set_input(pred, NULL, HN_DTYPE_FLOAT32, shape, 2, x, sizeof x),
                HN_ERR_INVALID_ARGUMENT, "'name' is NULL");
  /* wrong shape: the graph says which node and what it expected */
  HN_EXPECT_OK(hn_predictor_set_input(pred, "data", HN_DTYPE_FLOAT32, wrong, 2, x,
                                      (HN_TEST_IN - 1) * sizeof(float)));
  HN_EXPECT_ERR(hn_predictor_forward(pred), HN_ERR_SHAPE, "dense0");
  HN_EXPECT_ERR(hn_predictor_get_output(pred, 0, small, sizeof small), HN_ERR_INVALID_ARGUMENT,
                "last forward failed");
  /* wrong dtype */
  HN_EXPECT_OK(hn_predictor_set_input(pred, "data", HN_DTYPE_INT32, shape, 2, xi, sizeof xi));
  HN_EXPECT_ERR(hn_predictor_forward(pred), HN_ERR_DTYPE, "dtype");
  /* buffers and indexes */
  HN_EXPECT_OK(hn_predictor_set_input(pred, "data", HN_DTYPE_FLOAT32, shape, 2, x, sizeof x));
  HN_EXPECT_OK(hn_predictor_forward(pred));
  HN_EXPECT_ERR(hn_predictor_get_output(pred, 0, small, sizeof small), HN_ERR_INVALID_ARGUMENT,
                "buffer too small: output 0");
  HN_EXPECT_ERR(hn_predictor_get_output(pred, 1, small, sizeof small), HN_ERR_INVALID_ARGUMENT,
                "index 1 is out of range");
  HN_EXPECT_ERR(hn_predictor_get_output(pred, 0, NULL, 16), HN_ERR_INVALID_ARGUMENT,
                "'buffer' is NULL");
  HN_EXPECT_ERR(hn_predictor_output_shape(pred, 2, &dims, &ndim), HN_ERR_INVALID_ARGUMENT,
                "out of range");
  HN_EXPECT_ERR(hn_predictor_output(pred, 1, &t), HN_ERR_INVALID_ARGUMENT, "out of range");
  HN_EXPECT_ERR(hn_predictor_set_input_tensor(pred, "data", NULL), HN_ERR_INVALID_ARGUMENT,
                "'tensor' is NULL");
  HN_EXPECT_ERR(hn_predictor_set_input_tensor(pred, "nope", t), HN_ERR_NOT_FOUND, "nope");
  /* NULL handles */
  HN_EXPECT_ERR(hn_predictor_create(NULL, &none), HN_ERR_INVALID_ARGUMENT, "'model' is NULL");
  HN_EXPECT_ERR(hn_predictor_create(model, NULL), HN_ERR_INVALID_ARGUMENT, "'out'");
  HN_EXPECT_ERR(hn_predictor_clone(NULL, &none), HN_ERR_INVALID_ARGUMENT, "'predictor' is NULL");
  HN_EXPECT_ERR(hn_predictor_forward(NULL), HN_ERR_INVALID_ARGUMENT, "'predictor' is NULL");
  HN_EXPECT_ERR(hn_predictor_set_input(NULL, "data", HN_DTYPE_FLOAT32, shape, 2, x, sizeof x),
                HN_ERR_INVALID_ARGUMENT, "'predictor' is NULL");
  HN_EXPECT_ERR(hn_predictor_num_outputs(NULL, &count), HN_ERR_INVALID_ARGUMENT,
                "'predictor' is NULL");
  HN_EXPECT_ERR(hn_predictor_output_shape(NULL, 0, &dims, &ndim), HN_ERR_INVALID_ARGUMENT,
                "'predictor' is NULL");
  HN_EXPECT_ERR(hn_predictor_get_output(NULL, 0, small, sizeof small), HN_ERR_INVALID_ARGUMENT,
                "'predictor' is NULL");
  HN_EXPECT_ERR(hn_predictor_output(NULL, 0, &t), HN_ERR_INVALID_ARGUMENT, "'predictor' is NULL");
  HN_EXPECT_ERR(hn_predictor_run(NULL, NULL, 0, 0, NULL, &count), HN_ERR_INVALID_ARGUMENT,
                "'predictor' is NULL");
  HN_EXPECT_ERR(hn_model_input_names(NULL, &names, &count), HN_ERR_INVALID_ARGUMENT,
                "'model' is NULL");
  HN_EXPECT_ERR(hn_model_output_names(NULL, &names, &count), HN_ERR_INVALID_ARGUMENT,
                "'model' is NULL");
  HN_EXPECT_ERR(hn_model_symbol(NULL, NULL), HN_ERR_INVALID_ARGUMENT, "'model' is NULL");
  HN_EXPECT(none == NULL && t == NULL);
  hn_predictor_free(pred);
  hn_model_free(model);
}

/* MXNet-written models (tests/data/mxnet). */
static void run_fixture(const char* name, int epoch, const int64_t* shape, int ndim,
                        int64_t classes) {
  char fixture_prefix[1024], probe[1100];
  hn_model* model = NULL;
  hn_predictor* pred = NULL;
  float* x;
  float y[16];
  int64_t count = 1;
  const int64_t* dims;
  int out_ndim, i;
  FILE* f;
  snprintf(fixture_prefix, sizeof fixture_prefix, "%s/%s", HN_FIXTURES_DIR, name);
  snprintf(probe, sizeof probe, "%s-symbol.json", fixture_prefix);
  f = fopen(probe, "rb");
  if (f == NULL) printf("MXNet fixture %s is missing\n", probe);
  HN_EXPECT(f != NULL);
  if (f == NULL) return;
  fclose(f);
  for (i = 0; i < ndim; ++i) count *= shape[i];
  x = (float*)calloc((size_t)count, sizeof(float));
  for (i = 0; x != NULL && i < count; ++i) x[i] = (float)(i % 17) / 17.f;
  HN_EXPECT_OK(hn_model_load(fixture_prefix, epoch, &model));
  HN_EXPECT_OK(hn_predictor_create(model, &pred));
  HN_EXPECT_OK(hn_predictor_set_input(pred, "data", HN_DTYPE_FLOAT32, shape, ndim, x,
                                      (size_t)count * sizeof(float)));
  HN_EXPECT_OK(hn_predictor_forward(pred));
  HN_EXPECT_OK(hn_predictor_output_shape(pred, 0, &dims, &out_ndim));
  HN_EXPECT(out_ndim == 2 && dims[0] == 1 && dims[1] == classes);
  HN_EXPECT_OK(hn_predictor_get_output(pred, 0, y, sizeof y));
  for (i = 0; i < classes; ++i) HN_EXPECT(isfinite(y[i]));
  free(x);
  hn_predictor_free(pred);
  hn_model_free(model);
}

static void test_mxnet_fixtures(void) {
  int64_t lenet[4] = {1, 1, 28, 28};
  int64_t cifar[4] = {1, 3, 32, 32};
  run_fixture("mnist-lenet-0", 10, lenet, 4, 10); /* softmax_label is fed zeros */
  run_fixture("cifar_resnet20_v1", 0, cifar, 4, 10);
  run_fixture("cifar_resnet20_v2", 0, cifar, 4, 10);
}

/* A predictor option against the default on a ResNet (3x3 convolutions, BatchNorm): `set(p, 1)`
 * turns it on, `set(p, 0)` off, `check_errors(p)` first checks the setter's refusals. On, the
 * largest difference from the default predictor's outputs is at most `tolerance` of the largest
 * output (and more than 0 when `must_differ`); a clone inherits the option (the same bits); off
 * again gives the default bits. */
static void check_predictor_option(int (*set)(hn_predictor*, int),
                                   void (*check_errors)(hn_predictor*), float tolerance,
                                   int must_differ) {
  char fixture_prefix[1024];
  hn_model* model = NULL;
  hn_predictor* preds[3] = {NULL, NULL, NULL}; /* default, option on, clone of the second */
  int64_t shape[4] = {2, 3, 32, 32};
  float x[2 * 3 * 32 * 32], y[3][20], y_back[20];
  float scale = 0.f, diff = 0.f;
  int i;
  snprintf(fixture_prefix, sizeof fixture_prefix, "%s/cifar_resnet20_v1", HN_FIXTURES_DIR);
  for (i = 0; i < 2 * 3 * 32 * 32; ++i) x[i] = (float)(i % 29) / 29.f;
  HN_EXPECT_OK(hn_model_load(fixture_prefix, 0, &model));
  if (model == NULL) return;
  HN_EXPECT_OK(hn_predictor_create(model, &preds[0]));
  HN_EXPECT_OK(hn_predictor_create(model, &preds[1]));
  check_errors(preds[1]);
  HN_EXPECT_OK(set(preds[1], 1));
  HN_EXPECT_OK(hn_predictor_clone(preds[1], &preds[2]));
  for (i = 0; i < 3; ++i) {
    HN_EXPECT_OK(hn_predictor_set_input(preds[i], "data", HN_DTYPE_FLOAT32, shape, 4, x, sizeof x));
    HN_EXPECT_OK(hn_predictor_forward(preds[i]));
    HN_EXPECT_OK(hn_predictor_get_output(preds[i], 0, y[i], sizeof y[i]));
  }
  for (i = 0; i < 20; ++i) {
    scale = fmaxf(scale, fabsf(y[0][i]));
    diff = fmaxf(diff, fabsf(y[1][i] - y[0][i]));
  }
  if (must_differ) HN_EXPECT(diff > 0.f);
  HN_EXPECT(diff <= tolerance * scale);
  HN_EXPECT(memcmp(y[1], y[2], sizeof y[1]) == 0);
  HN_EXPECT_OK(set(preds[1], 0));
  HN_EXPECT_OK(hn_predictor_forward(preds[1]));
  HN_EXPECT_OK(hn_predictor_get_output(preds[1], 0, y_back, sizeof y_back));
  HN_EXPECT(memcmp(y_back, y[0], sizeof y_back) == 0);
  for (i = 0; i < 3; ++i) hn_predictor_free(preds[i]);
  hn_model_free(model);
}

static int set_fast_math(hn_predictor* pred, int on) {
  return hn_predictor_set_fast_math(pred, on);
}

static int set_bfloat16(hn_predictor* pred, int on) {
  return hn_predictor_set_dtype(pred, on ? HN_DTYPE_BFLOAT16 : HN_DTYPE_FLOAT32);
}

static void fast_math_errors(hn_predictor* pred) {
  HN_EXPECT_ERR(hn_predictor_set_fast_math(pred, 2), HN_ERR_INVALID_ARGUMENT, "'enable'");
  HN_EXPECT_ERR(hn_predictor_set_fast_math(NULL, 1), HN_ERR_INVALID_ARGUMENT, "predictor");
}

static void bfloat16_errors(hn_predictor* pred) {
  HN_EXPECT_ERR(hn_predictor_set_dtype(pred, HN_DTYPE_FLOAT16), HN_ERR_INVALID_ARGUMENT, "'dtype'");
  HN_EXPECT_ERR(hn_predictor_set_dtype(NULL, HN_DTYPE_BFLOAT16), HN_ERR_INVALID_ARGUMENT,
                "predictor");
}

/* hn_predictor_set_fast_math: within 1e-4 of the default; bad values and handles are errors. */
static void test_fast_math(void) {
  check_predictor_option(set_fast_math, fast_math_errors, 1e-4f, 0);
}

/* hn_predictor_set_dtype: bfloat16 convolutions differ from float32 by bfloat16's rounding (more
 * than 0, at most 2e-2 of the largest output); other dtypes and bad handles are errors. */
static void test_bfloat16(void) { check_predictor_option(set_bfloat16, bfloat16_errors, 2e-2f, 1); }

/* Heads that are views of intermediates (Flatten(relu(x))) next to later nodes that could
 * recycle their buffers (sigmoid(tanh(x))), as detectors end: the predictor's outputs are
 * relu(x) and sigmoid(tanh(x)), the same as op by op, for two batch sizes in turn. */
static hn_symbol* unary(const char* op, hn_symbol* in, const char* name) {
  hn_symbol* out = NULL;
  HN_EXPECT_OK(hn_symbol_create(op, &in, 1, NULL, NULL, 0, name, &out));
  return out;
}

static void test_view_heads(void) {
  hn_symbol *x = NULL, *relu, *flat, *tanh_, *sig, *heads = NULL;
  hn_symbol* parts[2];
  hn_model* model = NULL;
  hn_predictor* pred = NULL;
  char* json = NULL;
  float in[2 * 12], y0[2 * 12], y1[2 * 12];
  int64_t batch, shape[3] = {0, 3, 4};
  int i;
  HN_EXPECT_OK(hn_symbol_var("data", &x));
  relu = unary("relu", x, "relu0");
  flat = unary("Flatten", relu, "head_flat");
  tanh_ = unary("tanh", x, "tanh0");
  sig = unary("sigmoid", tanh_, "head_sig");
  parts[0] = flat;
  parts[1] = sig;
  HN_EXPECT_OK(hn_symbol_group(parts, 2, &heads));
  HN_EXPECT_OK(hn_symbol_to_json(heads, &json));
  HN_EXPECT_OK(hn_model_load_from_memory(json, strlen(json), NULL, 0, &model));
  HN_EXPECT_OK(hn_predictor_create(model, &pred));
  for (batch = 2; batch >= 1; --batch) {
    shape[0] = batch;
    for (i = 0; i < batch * 12; ++i) in[i] = (float)((i * 7) % 11) / 5.f - 1.f;
    HN_EXPECT_OK(hn_predictor_set_input(pred, "data", HN_DTYPE_FLOAT32, shape, 3, in,
                                        (size_t)batch * 12 * sizeof(float)));
    HN_EXPECT_OK(hn_predictor_forward(pred));
    HN_EXPECT_OK(hn_predictor_get_output(pred, 0, y0, (size_t)batch * 12 * sizeof(float)));
    HN_EXPECT_OK(hn_predictor_get_output(pred, 1, y1, (size_t)batch * 12 * sizeof(float)));
    for (i = 0; i < batch * 12; ++i) {
      HN_EXPECT(y0[i] == (in[i] > 0.f ? in[i] : 0.f));
      HN_EXPECT(fabs(y1[i] - 1.0 / (1.0 + exp(-tanh(in[i])))) < 1e-6);
    }
  }
  hn_predictor_free(pred);
  hn_model_free(model);
  hn_string_free(json);
  hn_symbol_free(heads);
  hn_symbol_free(sig);
  hn_symbol_free(tanh_);
  hn_symbol_free(flat);
  hn_symbol_free(relu);
  hn_symbol_free(x);
}

static void teardown(void) { hn_block_free(exported); }

HN_TEST_MAIN(model,
             HN_RUN(setup) HN_RUN(test_load_and_predict) HN_RUN(test_dynamic_batch_and_clone)
                 HN_RUN(test_tensor_inputs_and_detached_outputs) HN_RUN(test_load_from_memory)
                     HN_RUN(test_damaged_files) HN_RUN(test_params_without_names_or_weights)
                         HN_RUN(test_predictor_errors) HN_RUN(test_mxnet_fixtures)
                             HN_RUN(test_fast_math) HN_RUN(test_bfloat16) HN_RUN(test_view_heads)
                                 HN_RUN(teardown))
