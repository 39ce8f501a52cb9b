/* C API: tensors and tensor lists (create, wrap, access, copy, reshape, .npy, .params). */
#include <stdint.h>

#include "hn_test.h"

static hn_tensor* make_2x3(void) {
  float values[6] = {1.f, 2.f, 3.f, 4.f, 5.f, 6.f};
  int64_t shape[2] = {2, 3};
  hn_tensor* t = NULL;
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_FLOAT32, shape, 2, values, sizeof values, &t));
  return t;
}

static void test_create_copies(void) {
  float values[6] = {1.f, 2.f, 3.f, 4.f, 5.f, 6.f};
  float out[6] = {0};
  int64_t shape[2] = {2, 3};
  const int64_t* dims = NULL;
  hn_tensor* t = NULL;
  void* data = NULL;
  int ndim = 0, dtype = -1;
  int64_t dim = 0, size = 0;
  size_t nbytes = 0;
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_FLOAT32, shape, 2, values, sizeof values, &t));
  values[0] = 100.f; /* the tensor holds a copy */
  HN_EXPECT_OK(hn_tensor_dtype(t, &dtype));
  HN_EXPECT(dtype == HN_DTYPE_FLOAT32);
  HN_EXPECT_OK(hn_tensor_ndim(t, &ndim));
  HN_EXPECT(ndim == 2);
  HN_EXPECT_OK(hn_tensor_dim(t, 1, &dim));
  HN_EXPECT(dim == 3);
  HN_EXPECT_OK(hn_tensor_shape(t, &dims, &ndim));
  HN_EXPECT(ndim == 2 && dims[0] == 2 && dims[1] == 3);
  HN_EXPECT_OK(hn_tensor_size(t, &size));
  HN_EXPECT(size == 6);
  HN_EXPECT_OK(hn_tensor_nbytes(t, &nbytes));
  HN_EXPECT(nbytes == 24);
  HN_EXPECT_OK(hn_tensor_data(t, &data));
  HN_EXPECT(data != NULL && data != (void*)values);
  HN_EXPECT(((float*)data)[0] == 1.f && ((float*)data)[5] == 6.f);
  HN_EXPECT(((uintptr_t)data) % 64 == 0);
  HN_EXPECT_OK(hn_tensor_copy_to(t, out, sizeof out));
  HN_EXPECT(out[0] == 1.f && out[4] == 5.f);
  hn_tensor_free(t);
}

static void test_create_zeros_and_scalars(void) {
  int64_t shape[3] = {2, 0, 4};
  double x = 3.5;
  hn_tensor* t = NULL;
  int64_t size = -1;
  int ndim = -1;
  int32_t zeros[4] = {1, 1, 1, 1};
  int64_t four[1] = {4};
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_INT32, four, 1, NULL, 0, &t));
  HN_EXPECT_OK(hn_tensor_copy_to(t, zeros, sizeof zeros));
  HN_EXPECT(zeros[0] == 0 && zeros[3] == 0);
  hn_tensor_free(t);
  /* a zero-size dimension is allowed */
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_FLOAT32, shape, 3, NULL, 0, &t));
  HN_EXPECT_OK(hn_tensor_size(t, &size));
  HN_EXPECT(size == 0);
  hn_tensor_free(t);
  /* ndim 0 is a scalar: one element, shape may be NULL */
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_FLOAT64, NULL, 0, &x, sizeof x, &t));
  HN_EXPECT_OK(hn_tensor_ndim(t, &ndim));
  HN_EXPECT_OK(hn_tensor_size(t, &size));
  HN_EXPECT(ndim == 0 && size == 1);
  hn_tensor_free(t);
}

static void test_create_errors(void) {
  float values[6] = {0};
  int64_t shape[2] = {2, 3};
  int64_t negative[2] = {2, -3};
  int64_t huge[3] = {INT64_C(1) << 40, INT64_C(1) << 40, 16};
  int64_t big[1] = {INT64_C(1) << 42};
  int64_t many[33];
  hn_tensor* t = NULL;
  int i;
  for (i = 0; i < 33; ++i) many[i] = 1;
  HN_EXPECT_ERR(hn_tensor_create(HN_DTYPE_FLOAT32, shape, 2, values, 20, &t),
                HN_ERR_INVALID_ARGUMENT, "needs 24 bytes of data, got data_bytes 20");
  HN_EXPECT_ERR(hn_tensor_create(HN_DTYPE_FLOAT32, shape, 2, NULL, 24, &t), HN_ERR_INVALID_ARGUMENT,
                "data is NULL but data_bytes is 24");
  HN_EXPECT_ERR(hn_tensor_create(HN_DTYPE_FLOAT32, negative, 2, NULL, 0, &t), HN_ERR_SHAPE,
                "dimension 1 is -3");
  HN_EXPECT_ERR(hn_tensor_create(HN_DTYPE_FLOAT32, many, 33, NULL, 0, &t), HN_ERR_SHAPE,
                "ndim must be in [0, 32], got 33");
  HN_EXPECT_ERR(hn_tensor_create(HN_DTYPE_FLOAT32, shape, -1, NULL, 0, &t), HN_ERR_SHAPE, "-1");
  HN_EXPECT_ERR(hn_tensor_create(HN_DTYPE_FLOAT32, NULL, 2, NULL, 0, &t), HN_ERR_INVALID_ARGUMENT,
                "dimensions are NULL");
  HN_EXPECT_ERR(hn_tensor_create(42, shape, 2, NULL, 0, &t), HN_ERR_DTYPE, "unknown dtype 42");
  HN_EXPECT_ERR(hn_tensor_create(HN_DTYPE_FLOAT32, huge, 3, NULL, 0, &t), HN_ERR_SHAPE,
                "too many elements");
  /* 16 TiB: the allocation fails cleanly */
  HN_EXPECT_ERR(hn_tensor_create(HN_DTYPE_FLOAT32, big, 1, NULL, 0, &t), HN_ERR_OUT_OF_MEMORY, "");
  HN_EXPECT_ERR(hn_tensor_create(HN_DTYPE_FLOAT32, shape, 2, NULL, 0, NULL),
                HN_ERR_INVALID_ARGUMENT, "'out' is NULL");
  HN_EXPECT(t == NULL); /* untouched on failure */
}

static int deleter_calls = 0;
static void* deleter_data = NULL;
static void count_deleter(void* data, void* arg) {
  ++deleter_calls;
  deleter_data = data;
  if (arg != NULL) ++*(int*)arg;
}

static void test_wrap_zero_copy(void) {
  float storage[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  float out[8];
  int64_t shape[2] = {2, 4};
  int64_t flat[1] = {8};
  hn_tensor* t = NULL;
  hn_tensor* view = NULL;
  void* data = NULL;
  int arg_calls = 0;
  deleter_calls = 0;
  HN_EXPECT_OK(hn_tensor_wrap(HN_DTYPE_FLOAT32, shape, 2, storage, sizeof storage, count_deleter,
                              &arg_calls, &t));
  HN_EXPECT_OK(hn_tensor_data(t, &data));
  HN_EXPECT(data == (void*)storage);
  storage[3] = 42.f; /* caller writes are visible: no copy */
  HN_EXPECT_OK(hn_tensor_copy_to(t, out, sizeof out));
  HN_EXPECT(out[3] == 42.f);
  /* a view shares the storage: the deleter waits for both handles */
  HN_EXPECT_OK(hn_tensor_reshape(t, flat, 1, &view));
  hn_tensor_free(t);
  HN_EXPECT(deleter_calls == 0);
  HN_EXPECT_OK(hn_tensor_copy_to(view, out, sizeof out));
  HN_EXPECT(out[7] == 7.f);
  hn_tensor_free(view);
  HN_EXPECT(deleter_calls == 1 && arg_calls == 1 && deleter_data == (void*)storage);
  /* a NULL deleter: the caller keeps ownership */
  HN_EXPECT_OK(hn_tensor_wrap(HN_DTYPE_FLOAT32, shape, 2, storage, sizeof storage, NULL, NULL, &t));
  hn_tensor_free(t);
  HN_EXPECT(deleter_calls == 1);
}

static void test_wrap_errors_do_not_call_the_deleter(void) {
  float storage[9];
  int64_t shape[2] = {2, 4};
  hn_tensor* t = NULL;
  deleter_calls = 0;
  HN_EXPECT_ERR(
      hn_tensor_wrap(HN_DTYPE_FLOAT32, shape, 2, (char*)storage + 1, 32, count_deleter, NULL, &t),
      HN_ERR_INVALID_ARGUMENT, "not aligned to 4 bytes");
  HN_EXPECT_ERR(hn_tensor_wrap(HN_DTYPE_FLOAT32, shape, 2, storage, 16, count_deleter, NULL, &t),
                HN_ERR_INVALID_ARGUMENT, "needs 32 bytes");
  HN_EXPECT_ERR(hn_tensor_wrap(HN_DTYPE_FLOAT32, shape, 2, NULL, 32, count_deleter, NULL, &t),
                HN_ERR_INVALID_ARGUMENT, "'data' is NULL");
  HN_EXPECT_ERR(hn_tensor_wrap(99, shape, 2, storage, 32, count_deleter, NULL, &t), HN_ERR_DTYPE,
                "unknown dtype");
  HN_EXPECT_ERR(hn_tensor_wrap(HN_DTYPE_FLOAT32, shape, 2, storage, 32, count_deleter, NULL, NULL),
                HN_ERR_INVALID_ARGUMENT, "'out'");
  HN_EXPECT(deleter_calls == 0 && t == NULL);
}

static void test_access_errors(void) {
  hn_tensor* t = make_2x3();
  float small[5];
  float exact[6] = {9, 9, 9, 9, 9, 9};
  float big[7];
  int64_t dim;
  int64_t bad_shape[2] = {4, 2};
  int64_t good_shape[1] = {6};
  hn_tensor* view = NULL;
  void* data;
  HN_EXPECT_ERR(hn_tensor_dim(t, 2, &dim), HN_ERR_INVALID_ARGUMENT, "axis 2 is out of range");
  HN_EXPECT_ERR(hn_tensor_dim(t, -1, &dim), HN_ERR_INVALID_ARGUMENT, "axis -1");
  HN_EXPECT_ERR(hn_tensor_copy_to(t, small, sizeof small), HN_ERR_INVALID_ARGUMENT,
                "buffer too small: the (2, 3) float32 tensor has 24 bytes, the buffer 20");
  HN_EXPECT_ERR(hn_tensor_copy_to(t, NULL, 24), HN_ERR_INVALID_ARGUMENT, "'buffer' is NULL");
  HN_EXPECT_OK(hn_tensor_copy_to(t, big, sizeof big));
  HN_EXPECT(big[5] == 6.f);
  HN_EXPECT_ERR(hn_tensor_copy_from(t, exact, 20), HN_ERR_INVALID_ARGUMENT, "24 bytes");
  HN_EXPECT_ERR(hn_tensor_copy_from(t, NULL, 24), HN_ERR_INVALID_ARGUMENT, "'data' is NULL");
  HN_EXPECT_OK(hn_tensor_copy_from(t, exact, sizeof exact));
  HN_EXPECT_ERR(hn_tensor_reshape(t, bad_shape, 2, &view), HN_ERR_SHAPE,
                "cannot reshape (2, 3) (6 elements) to (4, 2) (8 elements)");
  HN_EXPECT_OK(hn_tensor_reshape(t, good_shape, 1, &view));
  HN_EXPECT_OK(hn_tensor_data(view, &data));
  HN_EXPECT(((float*)data)[2] == 9.f);
  ((float*)data)[2] = -1.f; /* the view writes through */
  HN_EXPECT_OK(hn_tensor_copy_to(t, big, sizeof big));
  HN_EXPECT(big[2] == -1.f);
  hn_tensor_free(view);
  hn_tensor_free(t);
}

static void test_null_handles(void) {
  int i;
  int64_t d;
  size_t n;
  const int64_t* dims;
  void* data;
  char* text = NULL;
  hn_tensor* out = NULL;
  float buffer[4];
  int64_t shape[1] = {4};
  HN_EXPECT_ERR(hn_tensor_dtype(NULL, &i), HN_ERR_INVALID_ARGUMENT, "'tensor' is NULL");
  HN_EXPECT_ERR(hn_tensor_ndim(NULL, &i), HN_ERR_INVALID_ARGUMENT, "'tensor' is NULL");
  HN_EXPECT_ERR(hn_tensor_dim(NULL, 0, &d), HN_ERR_INVALID_ARGUMENT, "'tensor' is NULL");
  HN_EXPECT_ERR(hn_tensor_shape(NULL, &dims, &i), HN_ERR_INVALID_ARGUMENT, "'tensor' is NULL");
  HN_EXPECT_ERR(hn_tensor_size(NULL, &d), HN_ERR_INVALID_ARGUMENT, "'tensor' is NULL");
  HN_EXPECT_ERR(hn_tensor_nbytes(NULL, &n), HN_ERR_INVALID_ARGUMENT, "'tensor' is NULL");
  HN_EXPECT_ERR(hn_tensor_data(NULL, &data), HN_ERR_INVALID_ARGUMENT, "'tensor' is NULL");
  HN_EXPECT_ERR(hn_tensor_copy_to(NULL, buffer, sizeof buffer), HN_ERR_INVALID_ARGUMENT,
                "'tensor' is NULL");
  HN_EXPECT_ERR(hn_tensor_copy_from(NULL, buffer, sizeof buffer), HN_ERR_INVALID_ARGUMENT,
                "'tensor' is NULL");
  HN_EXPECT_ERR(hn_tensor_reshape(NULL, shape, 1, &out), HN_ERR_INVALID_ARGUMENT,
                "'tensor' is NULL");
  HN_EXPECT_ERR(hn_tensor_save_npy(NULL, "x.npy"), HN_ERR_INVALID_ARGUMENT, "'tensor' is NULL");
  HN_EXPECT_ERR(hn_tensor_to_string(NULL, &text), HN_ERR_INVALID_ARGUMENT, "'tensor' is NULL");
  HN_EXPECT_ERR(hn_tensor_load_npy(NULL, &out), HN_ERR_INVALID_ARGUMENT, "'path' is NULL");
  HN_EXPECT(out == NULL && text == NULL);
  /* NULL out-pointers */
  out = make_2x3();
  HN_EXPECT_ERR(hn_tensor_dtype(out, NULL), HN_ERR_INVALID_ARGUMENT, "out_dtype");
  HN_EXPECT_ERR(hn_tensor_ndim(out, NULL), HN_ERR_INVALID_ARGUMENT, "out_ndim");
  HN_EXPECT_ERR(hn_tensor_dim(out, 0, NULL), HN_ERR_INVALID_ARGUMENT, "out_dim");
  HN_EXPECT_ERR(hn_tensor_shape(out, NULL, &i), HN_ERR_INVALID_ARGUMENT, "out_dims");
  HN_EXPECT_ERR(hn_tensor_shape(out, &dims, NULL), HN_ERR_INVALID_ARGUMENT, "out_ndim");
  HN_EXPECT_ERR(hn_tensor_size(out, NULL), HN_ERR_INVALID_ARGUMENT, "out_size");
  HN_EXPECT_ERR(hn_tensor_nbytes(out, NULL), HN_ERR_INVALID_ARGUMENT, "out_bytes");
  HN_EXPECT_ERR(hn_tensor_data(out, NULL), HN_ERR_INVALID_ARGUMENT, "out_data");
  HN_EXPECT_ERR(hn_tensor_to_string(out, NULL), HN_ERR_INVALID_ARGUMENT, "'out'");
  HN_EXPECT_ERR(hn_tensor_reshape(out, shape, 1, NULL), HN_ERR_INVALID_ARGUMENT, "'out'");
  HN_EXPECT_ERR(hn_tensor_save_npy(out, NULL), HN_ERR_INVALID_ARGUMENT, "'path' is NULL");
  hn_tensor_free(out);
}

static void test_to_string(void) {
  hn_tensor* t = make_2x3();
  char* text = NULL;
  HN_EXPECT_OK(hn_tensor_to_string(t, &text));
  HN_EXPECT(text != NULL && strstr(text, "<NDArray 2x3 @cpu(0)>") != NULL);
  HN_EXPECT(text != NULL && strstr(text, "6.") != NULL);
  hn_string_free(text);
  hn_tensor_free(t);
}

static void test_npy(void) {
  char path[512], bad[512], missing[512];
  hn_tensor* t = make_2x3();
  hn_tensor* back = NULL;
  hn_tensor* ints = NULL;
  hn_tensor* bf16 = NULL;
  int64_t values[3] = {-1, 0, INT64_C(1) << 40};
  int64_t back_values[3];
  int64_t shape[1] = {3};
  float out[6];
  int dtype;
  int ndim;
  char* bytes;
  size_t size = 0;
  hn_test_path(path, sizeof path, "capi_tensor.npy");
  hn_test_path(bad, sizeof bad, "capi_tensor_bad.npy");
  hn_test_path(missing, sizeof missing, "no_such_dir/x.npy");
  HN_EXPECT_OK(hn_tensor_save_npy(t, path));
  HN_EXPECT_OK(hn_tensor_load_npy(path, &back));
  HN_EXPECT_OK(hn_tensor_ndim(back, &ndim));
  HN_EXPECT_OK(hn_tensor_copy_to(back, out, sizeof out));
  HN_EXPECT(ndim == 2 && out[0] == 1.f && out[5] == 6.f);
  hn_tensor_free(back);
  back = NULL;
  /* int64 round trip */
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_INT64, shape, 1, values, sizeof values, &ints));
  HN_EXPECT_OK(hn_tensor_save_npy(ints, path));
  HN_EXPECT_OK(hn_tensor_load_npy(path, &back));
  HN_EXPECT_OK(hn_tensor_dtype(back, &dtype));
  HN_EXPECT_OK(hn_tensor_copy_to(back, back_values, sizeof back_values));
  HN_EXPECT(dtype == HN_DTYPE_INT64 && back_values[2] == (INT64_C(1) << 40));
  hn_tensor_free(back);
  back = NULL;
  /* errors: missing file, unwritable path, garbage, truncated data, bfloat16 */
  HN_EXPECT_ERR(hn_tensor_load_npy(missing, &back), HN_ERR_IO, "no_such_dir/x.npy");
  HN_EXPECT_ERR(hn_tensor_save_npy(t, missing), HN_ERR_IO, "no_such_dir/x.npy");
  HN_EXPECT(hn_test_write_file(bad, "not an npy file at all", 22) == 0);
  HN_EXPECT_ERR(hn_tensor_load_npy(bad, &back), HN_ERR_FORMAT, "capi_tensor_bad.npy");
  bytes = hn_test_read_file(path, &size);
  HN_EXPECT(bytes != NULL && size > 10);
  if (bytes != NULL) {
    HN_EXPECT(hn_test_write_file(bad, bytes, size - 5) == 0);
    HN_EXPECT_ERR(hn_tensor_load_npy(bad, &back), HN_ERR_FORMAT, "capi_tensor_bad.npy");
    HN_EXPECT(hn_test_write_file(bad, bytes, 9) == 0);
    HN_EXPECT_ERR(hn_tensor_load_npy(bad, &back), HN_ERR_FORMAT, "");
    free(bytes);
  }
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_BFLOAT16, shape, 1, NULL, 0, &bf16));
  HN_EXPECT_ERR(hn_tensor_save_npy(bf16, path), HN_ERR_UNSUPPORTED, "bfloat16");
  HN_EXPECT(back == NULL);
  hn_tensor_free(bf16);
  hn_tensor_free(ints);
  hn_tensor_free(t);
}

static void test_tensor_lists(void) {
  char path[512], bad[512];
  hn_tensor_list* list = NULL;
  hn_tensor_list* back = NULL;
  hn_tensor_list* mem = NULL;
  hn_tensor* a = make_2x3();
  hn_tensor* got = NULL;
  const char* name = NULL;
  size_t size = 0, nbytes = 0;
  int version = -1;
  float out[6];
  char* bytes;
  void* data;
  hn_test_path(path, sizeof path, "capi_list.params");
  hn_test_path(bad, sizeof bad, "capi_list_bad.params");
  HN_EXPECT_OK(hn_tensor_list_create(&list));
  HN_EXPECT_OK(hn_tensor_list_size(list, &size));
  HN_EXPECT(size == 0);
  HN_EXPECT_OK(hn_tensor_list_append(list, "arg:w", a));
  HN_EXPECT_OK(hn_tensor_list_append(list, "aux:m", a));
  HN_EXPECT_ERR(hn_tensor_list_append(list, NULL, a), HN_ERR_INVALID_ARGUMENT, "named");
  HN_EXPECT_OK(hn_tensor_list_size(list, &size));
  HN_EXPECT(size == 2);
  HN_EXPECT_OK(hn_tensor_list_name(list, 1, &name));
  HN_EXPECT(strcmp(name, "aux:m") == 0);
  HN_EXPECT_OK(hn_tensor_list_record_version(list, 0, &version));
  HN_EXPECT(version == 2);
  /* entries share storage with the appended tensor */
  HN_EXPECT_OK(hn_tensor_list_get(list, 0, &got));
  HN_EXPECT_OK(hn_tensor_data(got, &data));
  ((float*)data)[0] = 11.f;
  HN_EXPECT_OK(hn_tensor_copy_to(a, out, sizeof out));
  HN_EXPECT(out[0] == 11.f);
  hn_tensor_free(got);
  got = NULL;
  HN_EXPECT_OK(hn_tensor_list_save(list, path));
  HN_EXPECT_OK(hn_tensor_list_load(path, &back));
  HN_EXPECT_OK(hn_tensor_list_size(back, &size));
  HN_EXPECT(size == 2);
  HN_EXPECT_OK(hn_tensor_list_name(back, 0, &name));
  HN_EXPECT(strcmp(name, "arg:w") == 0);
  HN_EXPECT_OK(hn_tensor_list_get(back, 1, &got));
  HN_EXPECT_OK(hn_tensor_copy_to(got, out, sizeof out));
  HN_EXPECT(out[0] == 11.f && out[5] == 6.f);
  HN_EXPECT_OK(hn_tensor_nbytes(got, &nbytes));
  HN_EXPECT(nbytes == 24);
  hn_tensor_free(got);
  got = NULL;
  /* from memory */
  bytes = hn_test_read_file(path, &size);
  HN_EXPECT(bytes != NULL);
  if (bytes != NULL) {
    HN_EXPECT_OK(hn_tensor_list_load_from_memory(bytes, size, &mem));
    HN_EXPECT_ERR(hn_tensor_list_load_from_memory(bytes, size - 7, &back), HN_ERR_FORMAT, "");
    HN_EXPECT_ERR(hn_tensor_list_load_from_memory(bytes + 3, size - 3, &back), HN_ERR_FORMAT, "");
    HN_EXPECT(hn_test_write_file(bad, bytes, size / 2) == 0);
    HN_EXPECT_ERR(hn_tensor_list_load(bad, &back), HN_ERR_FORMAT, "capi_list_bad.params");
    free(bytes);
  }
  HN_EXPECT_OK(hn_tensor_list_size(mem, &size));
  HN_EXPECT(size == 2);
  /* errors */
  HN_EXPECT_ERR(hn_tensor_list_load("/nonexistent/x.params", &back), HN_ERR_IO,
                "/nonexistent/x.params");
  HN_EXPECT_ERR(hn_tensor_list_load_from_memory(NULL, 4, &back), HN_ERR_INVALID_ARGUMENT,
                "'bytes' is NULL");
  HN_EXPECT_ERR(hn_tensor_list_name(back == NULL ? list : back, 5, &name), HN_ERR_INVALID_ARGUMENT,
                "index 5 is out of range: the list has 2 entries");
  HN_EXPECT_ERR(hn_tensor_list_get(list, 2, &got), HN_ERR_INVALID_ARGUMENT, "out of range");
  HN_EXPECT_ERR(hn_tensor_list_record_version(list, 9, &version), HN_ERR_INVALID_ARGUMENT,
                "out of range");
  HN_EXPECT_ERR(hn_tensor_list_size(NULL, &size), HN_ERR_INVALID_ARGUMENT, "'list' is NULL");
  HN_EXPECT_ERR(hn_tensor_list_append(NULL, "x", a), HN_ERR_INVALID_ARGUMENT, "'list' is NULL");
  HN_EXPECT_ERR(hn_tensor_list_append(list, "x", NULL), HN_ERR_INVALID_ARGUMENT,
                "'tensor' is NULL");
  HN_EXPECT_ERR(hn_tensor_list_save(NULL, path), HN_ERR_INVALID_ARGUMENT, "'list' is NULL");
  HN_EXPECT_ERR(hn_tensor_list_save(list, "/nonexistent/dir/x.params"), HN_ERR_IO, "");
  HN_EXPECT_ERR(hn_tensor_list_create(NULL), HN_ERR_INVALID_ARGUMENT, "'out'");
  HN_EXPECT(got == NULL);
  hn_tensor_list_free(mem);
  hn_tensor_list_free(back);
  hn_tensor_list_free(list);
  hn_tensor_free(a);
}

static void test_unnamed_list_and_legacy_fixture(void) {
  hn_tensor_list* list = NULL;
  hn_tensor* a = make_2x3();
  const char* name = NULL;
  char path[1024];
  size_t size = 0;
  int version = -1;
  HN_EXPECT_OK(hn_tensor_list_create(&list));
  HN_EXPECT_OK(hn_tensor_list_append(list, "", a));
  HN_EXPECT_ERR(hn_tensor_list_append(list, "named", a), HN_ERR_INVALID_ARGUMENT, "unnamed");
  HN_EXPECT_OK(hn_tensor_list_name(list, 0, &name));
  HN_EXPECT(name != NULL && name[0] == '\0');
  hn_tensor_list_free(list);
  list = NULL;
  hn_tensor_free(a);
  snprintf(path, sizeof path, "%s/legacy_ndarray.v0", HN_FIXTURES_DIR);
  HN_EXPECT_OK(hn_tensor_list_load(path, &list));
  HN_EXPECT_OK(hn_tensor_list_size(list, &size));
  HN_EXPECT(size > 0);
  HN_EXPECT_OK(hn_tensor_list_record_version(list, 0, &version));
  HN_EXPECT(version == 0);
  hn_tensor_list_free(list);
}

HN_TEST_MAIN(tensor,
             HN_RUN(test_create_copies) HN_RUN(test_create_zeros_and_scalars)
                 HN_RUN(test_create_errors) HN_RUN(test_wrap_zero_copy)
                     HN_RUN(test_wrap_errors_do_not_call_the_deleter) HN_RUN(test_access_errors)
                         HN_RUN(test_null_handles) HN_RUN(test_to_string) HN_RUN(test_npy)
                             HN_RUN(test_tensor_lists) HN_RUN(test_unnamed_list_and_legacy_fixture))
