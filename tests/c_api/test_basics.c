/* C API: version, status names, thread-local errors, logging, threads, dtypes. */
#include "hn_test.h"

static void test_no_error_yet(void) {
  /* Must run first: nothing has failed on this thread. */
  HN_EXPECT(strcmp(hn_last_error(), "") == 0);
  HN_EXPECT(hn_last_error_code() == HN_OK);
}

static void test_version(void) {
  HN_EXPECT(strcmp(hn_version(), HN_VERSION_STRING) == 0);
  HN_EXPECT(hn_abi_version() == HN_ABI_VERSION);
  HN_EXPECT(HN_VERSION_MAJOR >= 0 && HN_VERSION_MINOR >= 0 && HN_VERSION_PATCH >= 0);
}

static void test_status_names(void) {
  HN_EXPECT(strcmp(hn_status_name(HN_OK), "HN_OK") == 0);
  HN_EXPECT(strcmp(hn_status_name(HN_ERR_INVALID_ARGUMENT), "HN_ERR_INVALID_ARGUMENT") == 0);
  HN_EXPECT(strcmp(hn_status_name(HN_ERR_SHAPE), "HN_ERR_SHAPE") == 0);
  HN_EXPECT(strcmp(hn_status_name(HN_ERR_DTYPE), "HN_ERR_DTYPE") == 0);
  HN_EXPECT(strcmp(hn_status_name(HN_ERR_NOT_FOUND), "HN_ERR_NOT_FOUND") == 0);
  HN_EXPECT(strcmp(hn_status_name(HN_ERR_IO), "HN_ERR_IO") == 0);
  HN_EXPECT(strcmp(hn_status_name(HN_ERR_FORMAT), "HN_ERR_FORMAT") == 0);
  HN_EXPECT(strcmp(hn_status_name(HN_ERR_UNSUPPORTED), "HN_ERR_UNSUPPORTED") == 0);
  HN_EXPECT(strcmp(hn_status_name(HN_ERR_UNTRACEABLE), "HN_ERR_UNTRACEABLE") == 0);
  HN_EXPECT(strcmp(hn_status_name(HN_ERR_OUT_OF_MEMORY), "HN_ERR_OUT_OF_MEMORY") == 0);
  HN_EXPECT(strcmp(hn_status_name(HN_ERR_INTERNAL), "HN_ERR_INTERNAL") == 0);
  HN_EXPECT(strcmp(hn_status_name(1), "HN_ERR_UNKNOWN") == 0);
  HN_EXPECT(strcmp(hn_status_name(-11), "HN_ERR_UNKNOWN") == 0);
}

static void test_errors_are_kept_until_the_next_failure(void) {
  int n = 0;
  HN_EXPECT_ERR(hn_get_num_threads(NULL), HN_ERR_INVALID_ARGUMENT, "out_num_threads");
  HN_EXPECT(strstr(hn_last_error(), "hn_get_num_threads") == hn_last_error());
  HN_EXPECT_OK(hn_get_num_threads(&n));
  /* a success does not clear the message */
  HN_EXPECT(strstr(hn_last_error(), "out_num_threads") != NULL);
  HN_EXPECT(hn_last_error_code() == HN_ERR_INVALID_ARGUMENT);
  HN_EXPECT_ERR(hn_dtype_size(77, NULL), HN_ERR_INVALID_ARGUMENT, "out_bytes");
}

static void test_threads(void) {
  int n = 0;
  HN_EXPECT_ERR(hn_set_num_threads(0), HN_ERR_INVALID_ARGUMENT, ">= 1");
  HN_EXPECT_ERR(hn_set_num_threads(-3), HN_ERR_INVALID_ARGUMENT, "-3");
  HN_EXPECT_OK(hn_set_num_threads(1));
  HN_EXPECT_OK(hn_get_num_threads(&n));
  HN_EXPECT(n == 1);
  HN_EXPECT_OK(hn_set_num_threads(2));
  HN_EXPECT_OK(hn_get_num_threads(&n));
  HN_EXPECT(n == 2);
  HN_EXPECT_OK(hn_set_num_threads(1));
  HN_EXPECT_OK(hn_seed(12345));
}

/* Whether /proc/cpuinfo's flags line lists `flag` (an oracle independent of the library's). */
static int cpu_flag(const char* flag) {
  char line[8192];
  int found = 0;
  FILE* f = fopen("/proc/cpuinfo", "r");
  if (f == NULL) return -1;
  while (fgets(line, sizeof line, f) != NULL) {
    if (strncmp(line, "flags", 5) != 0) continue;
    char padded[64];
    snprintf(padded, sizeof padded, " %s", flag);
    const char* at = strstr(line, padded);
    const size_t n = strlen(padded);
    found = at != NULL && (at[n] == ' ' || at[n] == '\n' || at[n] == '\0');
    break;
  }
  fclose(f);
  return found;
}

static int feature_enabled(const char* wanted) {
  size_t count = 0;
  HN_EXPECT_OK(hn_runtime_feature_count(&count));
  for (size_t i = 0; i < count; ++i) {
    const char* name = NULL;
    int enabled = -1;
    HN_EXPECT_OK(hn_runtime_feature_get(i, &name, &enabled, NULL));
    if (strcmp(name, wanted) == 0) return enabled;
  }
  return -1;
}

static void test_runtime_features(void) {
  size_t count = 0;
  HN_EXPECT_ERR(hn_runtime_feature_count(NULL), HN_ERR_INVALID_ARGUMENT, "out_count");
  HN_EXPECT_OK(hn_runtime_feature_count(&count));
  HN_EXPECT(count >= 10);
  HN_EXPECT_ERR(hn_runtime_feature_get(count, NULL, NULL, NULL), HN_ERR_INVALID_ARGUMENT,
                "out of range");
  for (size_t i = 0; i < count; ++i) {
    const char *name = NULL, *description = NULL;
    int enabled = -1;
    HN_EXPECT_OK(hn_runtime_feature_get(i, &name, &enabled, &description));
    HN_EXPECT(name != NULL && name[0] != '\0' && description != NULL && description[0] != '\0');
    HN_EXPECT(enabled == 0 || enabled == 1);
    for (size_t j = 0; j < i; ++j) {
      const char* other = NULL;
      HN_EXPECT_OK(hn_runtime_feature_get(j, &other, NULL, NULL));
      HN_EXPECT(strcmp(name, other) != 0);
    }
  }
  HN_EXPECT(feature_enabled("MKLDNN") == 1);
  HN_EXPECT(feature_enabled("BLAS_OPEN") == 1);
  HN_EXPECT(feature_enabled("CUDA") == 0);
  /* The instruction sets as the kernel's view of the CPU reports them. */
  if (cpu_flag("avx2") >= 0) {
    HN_EXPECT(feature_enabled("CPU_AVX2") == (cpu_flag("avx2") && cpu_flag("fma")));
    HN_EXPECT(feature_enabled("CPU_AVX512") == cpu_flag("avx512f"));
    HN_EXPECT(feature_enabled("CPU_AVX512_VNNI") == cpu_flag("avx512_vnni"));
    HN_EXPECT(feature_enabled("INT8_EXACT") ==
              (cpu_flag("avx512_vnni") || cpu_flag("avx_vnni") || cpu_flag("amx_int8")));
  }
}

static void test_dtypes(void) {
  size_t size = 0;
  HN_EXPECT(strcmp(hn_dtype_name(HN_DTYPE_FLOAT32), "float32") == 0);
  HN_EXPECT(strcmp(hn_dtype_name(HN_DTYPE_INT64), "int64") == 0);
  HN_EXPECT(strcmp(hn_dtype_name(HN_DTYPE_BFLOAT16), "bfloat16") == 0);
  HN_EXPECT(hn_dtype_name(13) == NULL);
  HN_EXPECT(hn_dtype_name(-1) == NULL);
  HN_EXPECT_OK(hn_dtype_size(HN_DTYPE_FLOAT16, &size));
  HN_EXPECT(size == 2);
  HN_EXPECT_OK(hn_dtype_size(HN_DTYPE_FLOAT64, &size));
  HN_EXPECT(size == 8);
  HN_EXPECT_ERR(hn_dtype_size(13, &size), HN_ERR_DTYPE, "unknown dtype 13");
}

/* Log messages collected by the callback. */
static int log_calls = 0;
static int log_last_level = -1;
static char log_last_message[512];
static int log_token = 0;

static void collect_log(int level, const char* message, void* user_data) {
  ++log_calls;
  log_last_level = level;
  strncpy(log_last_message, message, sizeof log_last_message - 1);
  log_last_message[sizeof log_last_message - 1] = '\0';
  if (user_data == &log_token) ++log_token;
}

static void test_logging(void) {
  int64_t shape[1] = {-1};
  hn_tensor* t = NULL;
  HN_EXPECT_ERR(hn_set_log_callback(collect_log, NULL, 7), HN_ERR_INVALID_ARGUMENT, "min_level");
  HN_EXPECT_OK(hn_set_log_callback(collect_log, &log_token, HN_LOG_DEBUG));
  /* failures are logged at debug level with their category and message */
  HN_EXPECT_ERR(hn_tensor_create(HN_DTYPE_FLOAT32, shape, 1, NULL, 0, &t), HN_ERR_SHAPE, "");
  HN_EXPECT(log_calls == 1);
  HN_EXPECT(log_token == 1);
  HN_EXPECT(log_last_level == HN_LOG_DEBUG);
  HN_EXPECT(strstr(log_last_message, "HN_ERR_SHAPE") != NULL);
  HN_EXPECT(strstr(log_last_message, "hn_tensor_create") != NULL);
  /* a higher level filters debug messages out */
  HN_EXPECT_OK(hn_set_log_callback(collect_log, &log_token, HN_LOG_WARNING));
  HN_EXPECT_ERR(hn_tensor_create(HN_DTYPE_FLOAT32, shape, 1, NULL, 0, &t), HN_ERR_SHAPE, "");
  HN_EXPECT(log_calls == 1);
  /* removing the callback stops logging (nothing is ever printed by the library) */
  HN_EXPECT_OK(hn_set_log_callback(NULL, NULL, 0));
  HN_EXPECT_ERR(hn_tensor_create(HN_DTYPE_FLOAT32, shape, 1, NULL, 0, &t), HN_ERR_SHAPE, "");
  HN_EXPECT(log_calls == 1);
  HN_EXPECT(t == NULL);
}

static void test_frees_accept_null(void) {
  hn_string_free(NULL);
  hn_tensor_free(NULL);
  hn_tensor_list_free(NULL);
  hn_symbol_free(NULL);
  hn_shape_info_free(NULL);
  hn_block_free(NULL);
  hn_model_free(NULL);
  hn_predictor_free(NULL);
  HN_EXPECT(1);
}

/* Hostile-input limits: defaults, set/get, bad arguments, and loads and allocations refused
 * with the limit named when it is lowered. */
static void test_limits(void) {
  static const char* chain =
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"data\", \"inputs\": []},"
      " {\"op\": \"relu\", \"name\": \"r1\", \"inputs\": [[0, 0, 0]]},"
      " {\"op\": \"relu\", \"name\": \"r2\", \"inputs\": [[1, 0, 0]]}],"
      " \"arg_nodes\": [0], \"heads\": [[2, 0, 0]]}";
  const int64_t big[2] = {1000, 1000};
  const int64_t rank9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  int64_t value = 0, defaults[4];
  int limit;
  hn_model* model = NULL;
  hn_tensor* t = NULL;
  for (limit = HN_LIMIT_MAX_NODES; limit <= HN_LIMIT_MAX_ALLOCATION_BYTES; ++limit) {
    HN_EXPECT_OK(hn_get_limit(limit, &defaults[limit]));
    HN_EXPECT(defaults[limit] >= 32);
  }
  HN_EXPECT(defaults[HN_LIMIT_MAX_NODES] == 4194304 && defaults[HN_LIMIT_MAX_RANK] == 32);
  HN_EXPECT_ERR(hn_get_limit(4, &value), HN_ERR_INVALID_ARGUMENT, "unknown limit 4");
  HN_EXPECT_ERR(hn_get_limit(-1, &value), HN_ERR_INVALID_ARGUMENT, "unknown limit");
  HN_EXPECT_ERR(hn_set_limit(7, 10), HN_ERR_INVALID_ARGUMENT, "unknown limit 7");
  HN_EXPECT_ERR(hn_set_limit(HN_LIMIT_MAX_NODES, 0), HN_ERR_INVALID_ARGUMENT, "at least 1");
  HN_EXPECT_ERR(hn_get_limit(HN_LIMIT_MAX_NODES, NULL), HN_ERR_INVALID_ARGUMENT, "out_value");

  HN_EXPECT_OK(hn_model_load_from_memory(chain, strlen(chain), NULL, 0, &model));
  hn_model_free(model);
  model = NULL;
  HN_EXPECT_OK(hn_set_limit(HN_LIMIT_MAX_NODES, 2));
  HN_EXPECT_OK(hn_get_limit(HN_LIMIT_MAX_NODES, &value));
  HN_EXPECT(value == 2);
  HN_EXPECT_ERR(hn_model_load_from_memory(chain, strlen(chain), NULL, 0, &model), HN_ERR_FORMAT,
                "3 nodes, above the node limit (HN_LIMIT_MAX_NODES = 2");
  HN_EXPECT(model == NULL);

  HN_EXPECT_OK(hn_set_limit(HN_LIMIT_MAX_ALLOCATION_BYTES, 1024));
  HN_EXPECT_ERR(hn_tensor_create(HN_DTYPE_FLOAT32, big, 2, NULL, 0, &t), HN_ERR_OUT_OF_MEMORY,
                "HN_LIMIT_MAX_ALLOCATION_BYTES = 1024");
  HN_EXPECT_OK(hn_set_limit(HN_LIMIT_MAX_TENSOR_ELEMENTS, 999999));
  HN_EXPECT_ERR(hn_tensor_create(HN_DTYPE_FLOAT32, big, 2, NULL, 0, &t), HN_ERR_OUT_OF_MEMORY,
                "HN_LIMIT_MAX_TENSOR_ELEMENTS = 999999");
  HN_EXPECT_OK(hn_set_limit(HN_LIMIT_MAX_RANK, 8));
  HN_EXPECT_ERR(hn_tensor_create(HN_DTYPE_FLOAT32, rank9, 9, NULL, 0, &t), HN_ERR_SHAPE,
                "HN_LIMIT_MAX_RANK = 8");
  HN_EXPECT(t == NULL);
  for (limit = HN_LIMIT_MAX_NODES; limit <= HN_LIMIT_MAX_ALLOCATION_BYTES; ++limit)
    HN_EXPECT_OK(hn_set_limit(limit, defaults[limit]));
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_FLOAT32, big, 2, NULL, 0, &t));
  hn_tensor_free(t);
}

HN_TEST_MAIN(basics, HN_RUN(test_no_error_yet) HN_RUN(test_version) HN_RUN(test_status_names)
                         HN_RUN(test_errors_are_kept_until_the_next_failure) HN_RUN(test_threads)
                             HN_RUN(test_runtime_features)
                             HN_RUN(test_dtypes) HN_RUN(test_logging) HN_RUN(test_frees_accept_null)
                                 HN_RUN(test_limits))
