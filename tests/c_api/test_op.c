/* C API: listing ops and their attributes, eager invoke by name with string attributes. */
#include <math.h>

#include "hn_test.h"

static hn_tensor* tensor_f32(const float* values, const int64_t* shape, int ndim) {
  hn_tensor* t = NULL;
  size_t count = 1;
  int i;
  for (i = 0; i < ndim; ++i) count *= (size_t)shape[i];
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_FLOAT32, shape, ndim, values, count * sizeof(float), &t));
  return t;
}

static void test_list_ops(void) {
  size_t count = 0, i, num_attrs = 0, num_aliases = 0;
  const char* name = NULL;
  const char* previous = "";
  const char* description = NULL;
  int found_fc = 0, sorted = 1, internal_listed = 0;
  HN_EXPECT_OK(hn_op_count(&count));
  HN_EXPECT(count >= 20);
  for (i = 0; i < count; ++i) {
    HN_EXPECT_OK(hn_op_name(i, &name));
    if (strcmp(previous, name) > 0) sorted = 0;
    if (strcmp(name, "FullyConnected") == 0) found_fc = 1;
    if (strncmp(name, "_hn_", 4) == 0) internal_listed = 1;
    previous = name;
  }
  HN_EXPECT(found_fc && sorted && !internal_listed);
  HN_EXPECT_ERR(hn_op_name(count, &name), HN_ERR_INVALID_ARGUMENT, "out of range");
  HN_EXPECT_ERR(hn_op_name(0, NULL), HN_ERR_INVALID_ARGUMENT, "out_name");
  HN_EXPECT_ERR(hn_op_count(NULL), HN_ERR_INVALID_ARGUMENT, "out_count");
  HN_EXPECT_OK(hn_op_info("FullyConnected", &description, &num_attrs, &num_aliases));
  HN_EXPECT(description != NULL && description[0] != '\0');
  HN_EXPECT(num_attrs >= 3);
  HN_EXPECT_OK(hn_op_info("FullyConnected", NULL, NULL, NULL)); /* outs are optional */
  HN_EXPECT_ERR(hn_op_info("NoSuchOp", &description, NULL, NULL), HN_ERR_NOT_FOUND,
                "unknown operator 'NoSuchOp'");
  HN_EXPECT_ERR(hn_op_info(NULL, NULL, NULL, NULL), HN_ERR_INVALID_ARGUMENT, "'op_name' is NULL");
}

static void test_op_attributes_and_aliases(void) {
  size_t num_attrs = 0, num_aliases = 0, i;
  const char *key, *type, *def, *desc, *alias = NULL;
  int required = -1, found_num_hidden = 0, found_no_bias = 0;
  HN_EXPECT_OK(hn_op_info("FullyConnected", NULL, &num_attrs, NULL));
  for (i = 0; i < num_attrs; ++i) {
    HN_EXPECT_OK(hn_op_attr("FullyConnected", i, &key, &type, &def, &required, &desc));
    if (strcmp(key, "num_hidden") == 0) found_num_hidden = required == 1 && def[0] == '\0';
    if (strcmp(key, "no_bias") == 0)
      found_no_bias = required == 0 && strcmp(type, "boolean") == 0 && strcmp(def, "False") == 0;
  }
  HN_EXPECT(found_num_hidden && found_no_bias);
  HN_EXPECT_ERR(hn_op_attr("FullyConnected", num_attrs, &key, NULL, NULL, NULL, NULL),
                HN_ERR_INVALID_ARGUMENT, "out of range");
  HN_EXPECT_ERR(hn_op_attr("Nope", 0, &key, NULL, NULL, NULL, NULL), HN_ERR_NOT_FOUND, "Nope");
  /* aliases resolve to the same op */
  HN_EXPECT_OK(hn_op_info("elemwise_add", NULL, NULL, &num_aliases));
  HN_EXPECT(num_aliases >= 1);
  HN_EXPECT_OK(hn_op_alias("elemwise_add", 0, &alias));
  HN_EXPECT(alias != NULL && strcmp(alias, "_add") == 0);
  HN_EXPECT_OK(hn_op_info("_plus", NULL, NULL, NULL));
  HN_EXPECT_ERR(hn_op_alias("elemwise_add", 99, &alias), HN_ERR_INVALID_ARGUMENT, "aliases");
  HN_EXPECT_ERR(hn_op_alias("elemwise_add", 0, NULL), HN_ERR_INVALID_ARGUMENT, "out_alias");
}

static void test_op_has_gradient(void) {
  int has = -1;
  HN_EXPECT_OK(hn_op_has_gradient("FullyConnected", &has));
  HN_EXPECT(has == 1);
  HN_EXPECT_OK(hn_op_has_gradient("_plus", &has)); /* an alias of elemwise_add */
  HN_EXPECT(has == 1);
  HN_EXPECT_OK(hn_op_has_gradient("_contrib_box_nms", &has));
  HN_EXPECT(has == 0);
  HN_EXPECT_ERR(hn_op_has_gradient("NoSuchOp", &has), HN_ERR_NOT_FOUND, "NoSuchOp");
  HN_EXPECT_ERR(hn_op_has_gradient("FullyConnected", NULL), HN_ERR_INVALID_ARGUMENT,
                "out_has_gradient");
}

static void test_invoke_fully_connected(void) {
  float x[6] = {1, 2, 3, 4, 5, 6};
  float w[12] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1};
  float b[4] = {0.5f, -0.5f, 0, 10};
  float y[8];
  int64_t xs[2] = {2, 3}, ws[2] = {4, 3}, bs[1] = {4};
  hn_tensor* in[3];
  hn_tensor* out[2] = {NULL, NULL};
  const char* keys[1] = {"num_hidden"};
  const char* values[1] = {"4"};
  const char* relu_keys[1] = {"act_type"};
  const char* relu_values[1] = {"relu"};
  float minus[4] = {-1, 2, -3, 4};
  float r[4];
  int64_t ms[1] = {4};
  size_t n = 0;
  const int64_t* dims;
  int ndim;
  in[0] = tensor_f32(x, xs, 2);
  in[1] = tensor_f32(w, ws, 2);
  in[2] = tensor_f32(b, bs, 1);
  HN_EXPECT_OK(hn_op_invoke("FullyConnected", in, 3, keys, values, 1, 2, out, &n));
  HN_EXPECT(n == 1 && out[0] != NULL);
  HN_EXPECT_OK(hn_tensor_shape(out[0], &dims, &ndim));
  HN_EXPECT(ndim == 2 && dims[0] == 2 && dims[1] == 4);
  HN_EXPECT_OK(hn_tensor_copy_to(out[0], y, sizeof y));
  HN_EXPECT(y[0] == 1.5f && y[1] == 1.5f && y[2] == 3.f && y[3] == 16.f);
  HN_EXPECT(y[4] == 4.5f && y[7] == 25.f);
  hn_tensor_free(out[0]);
  /* no attributes: pass NULL arrays */
  hn_tensor_free(in[2]);
  in[2] = tensor_f32(minus, ms, 1);
  HN_EXPECT_OK(hn_op_invoke("Activation", &in[2], 1, relu_keys, relu_values, 1, 1, out, &n));
  HN_EXPECT_OK(hn_tensor_copy_to(out[0], r, sizeof r));
  HN_EXPECT(r[0] == 0.f && r[1] == 2.f && r[2] == 0.f && r[3] == 4.f);
  hn_tensor_free(out[0]);
  HN_EXPECT_OK(hn_op_invoke("negative", &in[2], 1, NULL, NULL, 0, 1, out, &n));
  HN_EXPECT_OK(hn_tensor_copy_to(out[0], r, sizeof r));
  HN_EXPECT(r[0] == 1.f && r[3] == -4.f);
  hn_tensor_free(out[0]);
  hn_tensor_free(in[0]);
  hn_tensor_free(in[1]);
  hn_tensor_free(in[2]);
}

static void test_invoke_multiple_outputs(void) {
  float x[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  int64_t xs[2] = {2, 4};
  hn_tensor* in = tensor_f32(x, xs, 2);
  hn_tensor* out[3] = {NULL, NULL, NULL};
  const char* keys[2] = {"num_outputs", "axis"};
  const char* values[2] = {"2", "1"};
  float part[4];
  size_t n = 0;
  HN_EXPECT_OK(hn_op_invoke("SliceChannel", &in, 1, keys, values, 2, 3, out, &n));
  HN_EXPECT(n == 2 && out[2] == NULL);
  HN_EXPECT_OK(hn_tensor_copy_to(out[1], part, sizeof part));
  HN_EXPECT(part[0] == 2.f && part[1] == 3.f && part[2] == 6.f && part[3] == 7.f);
  hn_tensor_free(out[0]);
  hn_tensor_free(out[1]);
  out[0] = out[1] = NULL;
  n = 99;
  /* too little room: nothing is returned (and nothing leaks) */
  HN_EXPECT_ERR(hn_op_invoke("SliceChannel", &in, 1, keys, values, 2, 1, out, &n),
                HN_ERR_INVALID_ARGUMENT, "SliceChannel has 2 outputs but max_outputs is 1");
  HN_EXPECT(n == 99 && out[0] == NULL);
  hn_tensor_free(in);
}

static void test_invoke_errors(void) {
  float x[6] = {1, 2, 3, 4, 5, 6};
  float w[10] = {0};
  int32_t xi[6] = {1, 2, 3, 4, 5, 6};
  int64_t xs[2] = {2, 3}, ws[2] = {2, 5}, wgood[2] = {2, 3}, bs[1] = {2};
  hn_tensor* in[3];
  hn_tensor* bad_w;
  hn_tensor* ints = NULL;
  hn_tensor* out[1] = {NULL};
  const char* keys[1] = {"num_hidden"};
  const char* two[1] = {"2"};
  const char* abc[1] = {"abc"};
  const char* unknown_keys[2] = {"num_hidden", "colour"};
  const char* unknown_values[2] = {"2", "red"};
  const char* dup_keys[2] = {"num_hidden", "num_hidden"};
  const char* null_values[1] = {NULL};
  size_t n = 0;
  in[0] = tensor_f32(x, xs, 2);
  in[1] = tensor_f32(w, wgood, 2);
  in[2] = tensor_f32(w, bs, 1);
  bad_w = tensor_f32(w, ws, 2);
  HN_EXPECT_ERR(hn_op_invoke("NoSuchOp", in, 3, NULL, NULL, 0, 1, out, &n), HN_ERR_NOT_FOUND,
                "unknown operator 'NoSuchOp'");
  HN_EXPECT_ERR(hn_op_invoke("FullyConnected", in, 3, unknown_keys, unknown_values, 2, 1, out, &n),
                HN_ERR_INVALID_ARGUMENT, "unknown attribute 'colour'");
  HN_EXPECT_ERR(hn_op_invoke("FullyConnected", in, 3, keys, abc, 1, 1, out, &n),
                HN_ERR_INVALID_ARGUMENT, "num_hidden");
  HN_EXPECT_ERR(hn_op_invoke("FullyConnected", in, 3, NULL, NULL, 0, 1, out, &n),
                HN_ERR_INVALID_ARGUMENT, "required attribute 'num_hidden' is missing");
  HN_EXPECT_ERR(hn_op_invoke("FullyConnected", in, 3, dup_keys, unknown_values, 2, 1, out, &n),
                HN_ERR_INVALID_ARGUMENT, "given twice");
  HN_EXPECT_ERR(hn_op_invoke("FullyConnected", in, 3, keys, null_values, 1, 1, out, &n),
                HN_ERR_INVALID_ARGUMENT, "attr_values[0]");
  HN_EXPECT_ERR(hn_op_invoke("FullyConnected", in, 3, keys, NULL, 1, 1, out, &n),
                HN_ERR_INVALID_ARGUMENT, "num_attrs is 1");
  HN_EXPECT_ERR(hn_op_invoke("FullyConnected", in, 2, keys, two, 1, 1, out, &n),
                HN_ERR_INVALID_ARGUMENT, "expects 3 inputs, got 2");
  /* wrong weight shape: the message names the op */
  hn_tensor_free(in[1]);
  in[1] = bad_w;
  HN_EXPECT_ERR(hn_op_invoke("FullyConnected", in, 3, keys, two, 1, 1, out, &n), HN_ERR_SHAPE,
                "FullyConnected");
  hn_tensor_free(bad_w);
  in[1] = tensor_f32(w, wgood, 2);
  /* wrong dtype */
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_INT32, xs, 2, xi, sizeof xi, &ints));
  HN_EXPECT_ERR(hn_op_invoke("Activation", &ints, 1, (const char* const[]){"act_type"},
                             (const char* const[]){"relu"}, 1, 1, out, &n),
                HN_ERR_DTYPE, "Activation");
  /* NULL inputs */
  hn_tensor_free(in[2]);
  in[2] = NULL;
  HN_EXPECT_ERR(hn_op_invoke("FullyConnected", in, 3, keys, two, 1, 1, out, &n),
                HN_ERR_INVALID_ARGUMENT, "inputs[2] is NULL");
  HN_EXPECT_ERR(hn_op_invoke("FullyConnected", NULL, 3, keys, two, 1, 1, out, &n),
                HN_ERR_INVALID_ARGUMENT, "'inputs' is NULL");
  HN_EXPECT_ERR(hn_op_invoke(NULL, NULL, 0, NULL, NULL, 0, 1, out, &n), HN_ERR_INVALID_ARGUMENT,
                "'op_name' is NULL");
  HN_EXPECT_ERR(hn_op_invoke("negative", in, 1, NULL, NULL, 0, 1, out, NULL),
                HN_ERR_INVALID_ARGUMENT, "out_num_outputs");
  HN_EXPECT(out[0] == NULL);
  hn_tensor_free(ints);
  hn_tensor_free(in[0]);
  hn_tensor_free(in[1]);
}

/* Creation ops take no inputs: NULL inputs with num_inputs 0. */
static void test_invoke_zero_inputs(void) {
  const char* keys[3] = {"start", "stop", "dtype"};
  const char* values[3] = {"2", "6", "int32"};
  const char* full_keys[2] = {"shape", "value"};
  const char* huge[2] = {"(100000, 100000, 100000)", "1"};
  hn_tensor* out[1] = {NULL};
  int32_t got[4];
  int dtype = -1;
  size_t n = 0;
  HN_EXPECT_OK(hn_op_invoke("_arange", NULL, 0, keys, values, 3, 1, out, &n));
  HN_EXPECT(n == 1);
  HN_EXPECT_OK(hn_tensor_dtype(out[0], &dtype));
  HN_EXPECT(dtype == HN_DTYPE_INT32);
  HN_EXPECT_OK(hn_tensor_copy_to(out[0], got, sizeof got));
  HN_EXPECT(got[0] == 2 && got[1] == 3 && got[2] == 4 && got[3] == 5);
  hn_tensor_free(out[0]);
  out[0] = NULL;
  /* an absurd size is refused before anything is allocated */
  HN_EXPECT_ERR(hn_op_invoke("_full", NULL, 0, full_keys, huge, 2, 1, out, &n),
                HN_ERR_OUT_OF_MEMORY, "HN_LIMIT_MAX_TENSOR_ELEMENTS");
  HN_EXPECT(out[0] == NULL);
  /* an input where none is taken */
  {
    float x[1] = {1};
    int64_t xs[1] = {1};
    hn_tensor* in = tensor_f32(x, xs, 1);
    HN_EXPECT_ERR(hn_op_invoke("_arange", &in, 1, keys, values, 3, 1, out, &n),
                  HN_ERR_INVALID_ARGUMENT, "expects 0 inputs, got 1");
    hn_tensor_free(in);
  }
}

HN_TEST_MAIN(op, HN_RUN(test_list_ops) HN_RUN(test_op_attributes_and_aliases)
                     HN_RUN(test_op_has_gradient) HN_RUN(test_invoke_fully_connected)
                         HN_RUN(test_invoke_multiple_outputs) HN_RUN(test_invoke_errors)
                             HN_RUN(test_invoke_zero_inputs))
