/*
 * A tiny C99 assertion helper for the C API tests.
 *
 *   static void test_something(void) {
 *     hn_tensor* t = NULL;
 *     HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_FLOAT32, shape, 2, NULL, 0, &t));
 *     HN_EXPECT_ERR(hn_tensor_ndim(NULL, &n), HN_ERR_INVALID_ARGUMENT, "'tensor' is NULL");
 *     HN_EXPECT(n == 2);
 *     hn_tensor_free(t);
 *   }
 *   HN_TEST_MAIN(tensor, HN_RUN(test_something))
 *
 * Each test file is its own executable (main prints "N passed, N failed" and returns non-zero
 * on failures).
 */
#ifndef HN_TEST_H_
#define HN_TEST_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hybridnet/c_api.h"

#if defined(__GNUC__)
#define HN_TEST_UNUSED __attribute__((unused))
#else
#define HN_TEST_UNUSED
#endif

static int hn_test_passed = 0;
static int hn_test_failed = 0;
static const char* hn_test_current = "";

static void hn_test_report(const char* file, int line, const char* what, const char* detail) {
  ++hn_test_failed;
  fprintf(stderr, "%s:%d: [%s] FAILED: %s%s%s\n", file, line, hn_test_current, what,
          detail[0] ? " -- " : "", detail);
}

/* A condition. */
#define HN_EXPECT(cond)                              \
  do {                                               \
    if (cond) {                                      \
      ++hn_test_passed;                              \
    } else {                                         \
      hn_test_report(__FILE__, __LINE__, #cond, ""); \
    }                                                \
  } while (0)

/* A call that must return HN_OK (prints the status and hn_last_error() otherwise). */
#define HN_EXPECT_OK(call)                                                                  \
  do {                                                                                      \
    int hn_rc_ = (call);                                                                    \
    if (hn_rc_ == HN_OK) {                                                                  \
      ++hn_test_passed;                                                                     \
    } else {                                                                                \
      char hn_msg_[1024];                                                                   \
      snprintf(hn_msg_, sizeof hn_msg_, "%s: %s", hn_status_name(hn_rc_), hn_last_error()); \
      hn_test_report(__FILE__, __LINE__, #call, hn_msg_);                                   \
    }                                                                                       \
  } while (0)

/* A call that must fail with `code`, set hn_last_error_code() to it and leave a message that
 * contains `substring` (pass "" for any non-empty message). */
#define HN_EXPECT_ERR(call, code, substring)                                        \
  do {                                                                              \
    int hn_rc_ = (call);                                                            \
    const char* hn_err_ = hn_last_error();                                          \
    if (hn_rc_ == (code) && hn_last_error_code() == (code) && hn_err_[0] != '\0' && \
        strstr(hn_err_, (substring)) != NULL) {                                     \
      ++hn_test_passed;                                                             \
    } else {                                                                        \
      char hn_msg_[1024];                                                           \
      snprintf(hn_msg_, sizeof hn_msg_, "expected %s with \"%s\", got %s: %s",      \
               hn_status_name(code), (substring), hn_status_name(hn_rc_), hn_err_); \
      hn_test_report(__FILE__, __LINE__, #call, hn_msg_);                           \
    }                                                                               \
  } while (0)

#define HN_RUN(fn)         \
  do {                     \
    hn_test_current = #fn; \
    fn();                  \
  } while (0);

#define HN_TEST_MAIN(group, ...)                                      \
  int main(void) {                                                    \
    __VA_ARGS__                                                       \
    printf("%d passed, %d failed\n", hn_test_passed, hn_test_failed); \
    fflush(stdout);                                                   \
    return hn_test_failed == 0 ? 0 : 1;                               \
  }

/* Paths for temporary files of this test run. */
#ifndef HN_TEST_TMPDIR
#define HN_TEST_TMPDIR "."
#endif
HN_TEST_UNUSED static const char* hn_test_path(char* buffer, size_t size, const char* name) {
  snprintf(buffer, size, "%s/%s", HN_TEST_TMPDIR, name);
  return buffer;
}

/* Writes `size` bytes to `path`; returns 0 on success. */
HN_TEST_UNUSED static int hn_test_write_file(const char* path, const void* data, size_t size) {
  FILE* f = fopen(path, "wb");
  size_t written;
  if (f == NULL) return -1;
  written = fwrite(data, 1, size, f);
  fclose(f);
  return written == size ? 0 : -1;
}

/* Reads a whole file into a malloc'ed buffer (NUL-terminated); NULL on failure. */
HN_TEST_UNUSED static char* hn_test_read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  char* data;
  long length;
  if (f == NULL) return NULL;
  if (fseek(f, 0, SEEK_END) != 0 || (length = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fclose(f);
    return NULL;
  }
  data = (char*)malloc((size_t)length + 1);
  if (data != NULL && fread(data, 1, (size_t)length, f) != (size_t)length) {
    free(data);
    data = NULL;
  }
  fclose(f);
  if (data != NULL) {
    data[length] = '\0';
    if (size != NULL) *size = (size_t)length;
  }
  return data;
}

/* The symbol data -> fc1 (FullyConnected, num_hidden 4) -> relu1 (Activation relu); the caller
 * frees the result. */
HN_TEST_UNUSED static hn_symbol* hn_test_symbol_mlp(void) {
  hn_symbol* data = NULL;
  hn_symbol* fc = NULL;
  hn_symbol* act = NULL;
  const char* fc_keys[1] = {"num_hidden"};
  const char* fc_values[1] = {"4"};
  const char* act_keys[1] = {"act_type"};
  const char* act_values[1] = {"relu"};
  HN_EXPECT_OK(hn_symbol_var("data", &data));
  HN_EXPECT_OK(hn_symbol_create("FullyConnected", &data, 1, fc_keys, fc_values, 1, "fc1", &fc));
  HN_EXPECT_OK(hn_symbol_create("Activation", &fc, 1, act_keys, act_values, 1, "relu1", &act));
  hn_symbol_free(data);
  hn_symbol_free(fc);
  return act;
}

#endif /* HN_TEST_H_ */
