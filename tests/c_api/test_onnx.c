/* C API: ONNX export (hn_model_export_onnx, hn_symbol_export_onnx) and the per-op ONNX facts
 * (hn_op_onnx_info, hn_op_onnx_op): files written, and every failure path. ONNX Runtime checks
 * the numbers in tests/onnx. */
#include "hn_test_model.h"

static char prefix[512];
static char params_path[512];
static hn_block* exported = NULL;

static void setup(void) {
  hn_test_path(prefix, sizeof prefix, "capi_onnx_mlp");
  hn_test_path(params_path, sizeof params_path, "capi_onnx_mlp-0000.params");
  exported = hn_test_export_mlp(prefix, 0);
}

/* The file's bytes (NULL when unreadable); *size receives their count. */
static char* read_all(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  char* bytes;
  long n;
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  bytes = (char*)malloc((size_t)n + 1);
  *size = fread(bytes, 1, (size_t)n, f);
  fclose(f);
  return bytes;
}

static int contains(const char* bytes, size_t size, const char* needle) {
  size_t n = strlen(needle), i;
  for (i = 0; i + n <= size; ++i)
    if (memcmp(bytes + i, needle, n) == 0) return 1;
  return 0;
}

static void test_model_export(void) {
  hn_model* model = NULL;
  const char* names[1] = {"data"};
  int ndims[1] = {2};
  int64_t dims[2] = {3, HN_TEST_IN};
  int dtypes[1] = {HN_DTYPE_FLOAT32};
  char path[512], path2[512];
  char *a = NULL, *b = NULL;
  size_t na = 0, nb = 0;
  if (exported == NULL) return;
  hn_test_path(path, sizeof path, "capi_onnx_mlp.onnx");
  hn_test_path(path2, sizeof path2, "capi_onnx_mlp_dynamic.onnx");
  HN_EXPECT_OK(hn_model_load(prefix, 0, &model));
  HN_EXPECT_OK(hn_model_export_onnx(model, path, 0, 0, 1, names, ndims, dims, NULL));
  HN_EXPECT_OK(hn_model_export_onnx(model, path2, HN_ONNX_OPSET_MAX, HN_ONNX_DYNAMIC_BATCH, 1,
                                    names, ndims, dims, dtypes));
  a = read_all(path, &na);
  b = read_all(path2, &nb);
  HN_EXPECT(a != NULL && b != NULL);
  if (a != NULL && b != NULL) {
    /* ModelProto field 1 (ir_version) comes first; names and producer are kept. */
    HN_EXPECT(na > 16 * HN_TEST_IN * sizeof(float) && a[0] == 0x08);
    HN_EXPECT(contains(a, na, "hybridnet") && contains(a, na, "data"));
    HN_EXPECT(contains(a, na, "dense0_weight") && contains(a, na, "Gemm"));
    HN_EXPECT(!contains(a, na, "\x12\x01N") && contains(b, nb, "\x12\x01N")); /* dim_param "N" */
  }
  free(a);
  free(b);
  hn_model_free(model);
}

static void test_symbol_export(void) {
  hn_symbol* sym = NULL;
  hn_tensor_list* params = NULL;
  char json[512], path[512];
  const char* names[1] = {"data"};
  int ndims[1] = {2};
  int64_t dims[2] = {1, HN_TEST_IN};
  char* bytes = NULL;
  size_t n = 0;
  if (exported == NULL) return;
  hn_test_path(json, sizeof json, "capi_onnx_mlp-symbol.json");
  hn_test_path(path, sizeof path, "capi_onnx_symbol.onnx");
  HN_EXPECT_OK(hn_symbol_load(json, &sym));
  HN_EXPECT_OK(hn_tensor_list_load(params_path, &params));
  HN_EXPECT_OK(hn_symbol_export_onnx(sym, params, path, 13, 0, 1, names, ndims, dims, NULL));
  /* Without parameters the weights are graph inputs, their shapes inferred. */
  HN_EXPECT_OK(hn_symbol_export_onnx(sym, NULL, path, 17, HN_ONNX_DYNAMIC_BATCH, 1, names, ndims,
                                     dims, NULL));
  bytes = read_all(path, &n);
  HN_EXPECT(bytes != NULL && contains(bytes, n, "dense1_bias"));
  free(bytes);
  hn_tensor_list_free(params);
  hn_symbol_free(sym);
}

static void test_export_errors(void) {
  hn_model* model = NULL;
  hn_symbol* sym = NULL;
  hn_symbol* data = NULL;
  const char* names[1] = {"data"};
  const char* wrong[1] = {"pixels"};
  int ndims[1] = {2};
  int64_t dims[2] = {1, HN_TEST_IN};
  int bad_dtype[1] = {99};
  const char* keys[2] = {"mode", "p"};
  const char* values[2] = {"always", "0.5"};
  char path[512];
  if (exported == NULL) return;
  hn_test_path(path, sizeof path, "capi_onnx_errors.onnx");
  HN_EXPECT_OK(hn_model_load(prefix, 0, &model));
  HN_EXPECT_ERR(hn_model_export_onnx(NULL, path, 0, 0, 1, names, ndims, dims, NULL),
                HN_ERR_INVALID_ARGUMENT, "'model' is NULL");
  HN_EXPECT_ERR(hn_model_export_onnx(model, NULL, 0, 0, 1, names, ndims, dims, NULL),
                HN_ERR_INVALID_ARGUMENT, "'path' is NULL");
  HN_EXPECT_ERR(hn_model_export_onnx(model, path, 12, 0, 1, names, ndims, dims, NULL),
                HN_ERR_INVALID_ARGUMENT, "opset 12 is not supported: choose 13 to 21");
  HN_EXPECT_ERR(hn_model_export_onnx(model, path, 0, 2, 1, names, ndims, dims, NULL),
                HN_ERR_INVALID_ARGUMENT, "flags 2");
  HN_EXPECT_ERR(hn_model_export_onnx(model, path, 0, 0, 1, NULL, ndims, dims, NULL),
                HN_ERR_INVALID_ARGUMENT, "names/ndims are NULL");
  HN_EXPECT_ERR(hn_model_export_onnx(model, path, 0, 0, 1, names, ndims, dims, bad_dtype),
                HN_ERR_DTYPE, "unknown dtype 99");
  HN_EXPECT_ERR(hn_model_export_onnx(model, path, 0, 0, 1, wrong, ndims, dims, NULL),
                HN_ERR_NOT_FOUND, "no input 'pixels' (inputs: data)");
  HN_EXPECT_ERR(hn_model_export_onnx(model, path, 0, 0, 0, NULL, NULL, NULL, NULL), HN_ERR_SHAPE,
                "give it");
  HN_EXPECT_ERR(
      hn_model_export_onnx(model, "/nonexistent-dir/m.onnx", 0, 0, 1, names, ndims, dims, NULL),
      HN_ERR_IO, "/nonexistent-dir/m.onnx");
  /* A node without an exact ONNX form. */
  HN_EXPECT_OK(hn_symbol_var("data", &data));
  HN_EXPECT_OK(hn_symbol_create("Dropout", &data, 1, keys, values, 2, "drop", &sym));
  HN_EXPECT_ERR(hn_symbol_export_onnx(sym, NULL, path, 0, 0, 1, names, ndims, dims, NULL),
                HN_ERR_UNSUPPORTED, "'Dropout' (node 'drop'): mode='always'");
  HN_EXPECT_ERR(hn_symbol_export_onnx(NULL, NULL, path, 0, 0, 1, names, ndims, dims, NULL),
                HN_ERR_INVALID_ARGUMENT, "'symbol' is NULL");
  hn_symbol_free(sym);
  hn_symbol_free(data);
  hn_model_free(model);
}

static void test_op_onnx_info(void) {
  int exportable = -1;
  size_t count = 0, i;
  const char* limits = NULL;
  const char* op = NULL;
  int has_conv = 0;
  HN_EXPECT_OK(hn_op_onnx_info("Convolution", &exportable, &count, &limits));
  HN_EXPECT(exportable == 1 && count >= 1 && limits != NULL && limits[0] == '\0');
  for (i = 0; i < count; ++i) {
    HN_EXPECT_OK(hn_op_onnx_op("Convolution", i, &op));
    has_conv = has_conv || strcmp(op, "Conv") == 0;
  }
  HN_EXPECT(has_conv);
  HN_EXPECT_OK(hn_op_onnx_info("Dropout", NULL, NULL, &limits));
  HN_EXPECT(strstr(limits, "always") != NULL);
  HN_EXPECT_OK(hn_op_onnx_info("identity", &exportable, NULL, NULL)); /* an alias */
  HN_EXPECT(exportable == 1);
  HN_EXPECT_ERR(hn_op_onnx_info("NoSuchOp", &exportable, &count, &limits), HN_ERR_NOT_FOUND,
                "unknown operator 'NoSuchOp'");
  HN_EXPECT_ERR(hn_op_onnx_op("Convolution", count, &op), HN_ERR_INVALID_ARGUMENT, "out of range");
  HN_EXPECT_ERR(hn_op_onnx_op("Convolution", 0, NULL), HN_ERR_INVALID_ARGUMENT,
                "'out_onnx_op' is NULL");
}

static void teardown(void) { hn_block_free(exported); }

HN_TEST_MAIN(onnx, HN_RUN(setup) HN_RUN(test_model_export) HN_RUN(test_symbol_export)
                       HN_RUN(test_export_errors) HN_RUN(test_op_onnx_info) HN_RUN(teardown))
