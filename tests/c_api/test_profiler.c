/* C API: the profiler (hn_profiler_*): options, states, the trace file and the aggregate table
 * of eager op calls and a hybridized block's forward, scopes, user events and the errors. */
#include "hn_test.h"
#include "hn_test_model.h"

/* How many times `needle` occurs in `text`. */
static int occurrences(const char* text, const char* needle) {
  int n = 0;
  const char* p = text;
  while ((p = strstr(p, needle)) != NULL) {
    ++n;
    p += strlen(needle);
  }
  return n;
}

/* The count column of row `name` in category `group` of a dumps table; -1 when absent. */
static long table_count(const char* table, const char* group, const char* name) {
  char heading[128];
  char row[160];
  const char* at;
  snprintf(heading, sizeof heading, "\n%s\n=================\n", group);
  at = strstr(table, heading);
  if (at == NULL) return -1;
  snprintf(row, sizeof row, "\n%-25s", name);
  at = strstr(at, row);
  if (at == NULL) return -1;
  return strtol(at + strlen(row), NULL, 10);
}

static void stop_and_clear(void) {
  char path[512];
  const char* keys[3] = {"profile_all", "aggregate_stats", "filename"};
  const char* values[3] = {"False", "False", NULL};
  char* table = NULL;
  values[2] = hn_test_path(path, sizeof path, "profiler_drain.json");
  HN_EXPECT_OK(hn_profiler_set_state("stop"));
  HN_EXPECT_OK(hn_profiler_resume());
  HN_EXPECT_OK(hn_profiler_set_config(keys, values, 3));
  HN_EXPECT_OK(hn_profiler_dump(1));
  HN_EXPECT_OK(hn_profiler_dumps(1, NULL, NULL, 0, &table));
  hn_string_free(table);
}

static hn_tensor* small_tensor(void) {
  const float v[4] = {-1.f, 2.f, -3.f, 4.f};
  const int64_t shape[2] = {2, 2};
  hn_tensor* t = NULL;
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_FLOAT32, shape, 2, v, sizeof v, &t));
  return t;
}

static void relu(hn_tensor* x) {
  hn_tensor* y = NULL;
  size_t n = 0;
  HN_EXPECT_OK(hn_op_invoke("relu", &x, 1, NULL, NULL, 0, 1, &y, &n));
  hn_tensor_free(y);
}

/* Eager ops and a hybridized MLP's forward: one event per call in the trace, the same counts
 * in the table; paused and stopped calls leave nothing. */
static void test_trace_and_table(void) {
  char path[512], prefix[512];
  const char* keys[4] = {"profile_imperative", "profile_symbolic", "aggregate_stats", "filename"};
  const char* values[4] = {"True", "1", "true", NULL};
  const char* state = NULL;
  hn_tensor* x = small_tensor();
  hn_block* net;
  hn_tensor* input = NULL;
  hn_tensor* out = NULL;
  int64_t in_shape[2] = {1, HN_TEST_IN};
  float in_data[HN_TEST_IN];
  size_t n = 0;
  char* table = NULL;
  char* trace;
  stop_and_clear();
  net = hn_test_export_mlp(hn_test_path(prefix, sizeof prefix, "profiler_mlp"), 0);
  HN_EXPECT(net != NULL);
  hn_test_fill(in_data, HN_TEST_IN, 0);
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_FLOAT32, in_shape, 2, in_data, sizeof in_data, &input));
  values[3] = hn_test_path(path, sizeof path, "profiler_c.json");
  HN_EXPECT_OK(hn_profiler_set_config(keys, values, 4));
  relu(x); /* stopped: not recorded */
  HN_EXPECT_OK(hn_profiler_set_state("run"));
  HN_EXPECT_OK(hn_profiler_state(&state));
  HN_EXPECT(strcmp(state, "run") == 0);
  relu(x);
  relu(x);
  HN_EXPECT_OK(hn_profiler_pause());
  relu(x);
  HN_EXPECT_OK(hn_profiler_resume());
  HN_EXPECT_OK(hn_block_forward(net, &input, 1, 1, &out, &n));
  hn_tensor_free(out);
  HN_EXPECT_OK(hn_profiler_set_state("stop"));
  relu(x);
  HN_EXPECT_OK(hn_profiler_dump(1));
  HN_EXPECT_OK(hn_profiler_dumps(0, "table", "count", 0, &table));
  HN_EXPECT(strstr(table, "Profile Statistics:") != NULL);
  HN_EXPECT(table_count(table, "operator", "relu") == 2);
  /* Dense(16, relu) runs fused with its activation, Dense(4) alone. */
  HN_EXPECT(table_count(table, "operator", "_hn_fully_connected_act") == 1);
  HN_EXPECT(table_count(table, "operator", "FullyConnected") == 1);
  trace = hn_test_read_file(path, NULL);
  HN_EXPECT(trace != NULL);
  if (trace != NULL) {
    HN_EXPECT(strncmp(trace, "{\n\"traceEvents\": [\n", 19) == 0);
    HN_EXPECT(occurrences(trace, "\"ph\":\"X\"") == 4);
    HN_EXPECT(occurrences(trace, "\"cat\":\"relu\"") == 2);
    HN_EXPECT(occurrences(trace, "\"fused\":\"FullyConnected+relu\"") == 1);
    HN_EXPECT(strstr(trace, "\"displayTimeUnit\": \"ms\"") != NULL);
    free(trace);
  }
  hn_string_free(table);
  HN_EXPECT_OK(hn_profiler_dumps(1, "json", NULL, 1, &table));
  HN_EXPECT(strstr(table, "\"relu\": {\n                \"Count\": 2,") != NULL);
  hn_string_free(table);
  hn_tensor_free(input);
  hn_tensor_free(x);
  hn_block_free(net);
  stop_and_clear();
}

/* Scopes, durations, counters and markers. */
static void test_scopes_and_user_events(void) {
  char path[512];
  const char* keys[3] = {"profile_imperative", "aggregate_stats", "filename"};
  const char* values[3] = {"True", "True", NULL};
  hn_tensor* x = small_tensor();
  int64_t start = 0;
  char* table = NULL;
  char* trace;
  values[2] = hn_test_path(path, sizeof path, "profiler_scopes.json");
  HN_EXPECT_OK(hn_profiler_set_config(keys, values, 3));
  HN_EXPECT_OK(hn_profiler_set_state("run"));
  HN_EXPECT_OK(hn_profiler_scope_push("outer"));
  relu(x);
  HN_EXPECT_OK(hn_profiler_scope_pop());
  HN_EXPECT_OK(hn_profiler_clock(&start));
  HN_EXPECT(start > 0);
  HN_EXPECT_OK(hn_profiler_record_duration("task", "train", "step", start));
  HN_EXPECT_OK(hn_profiler_set_counter("train", "samples", 64));
  HN_EXPECT_OK(hn_profiler_mark("train", "epoch end", NULL));
  HN_EXPECT_OK(hn_profiler_set_state("stop"));
  HN_EXPECT_OK(hn_profiler_dump(1));
  HN_EXPECT_OK(hn_profiler_dumps(0, NULL, NULL, 0, &table));
  HN_EXPECT(table_count(table, "operator", "outer:relu") == 1);
  HN_EXPECT(table_count(table, "train", "step") == 1);
  hn_string_free(table);
  trace = hn_test_read_file(path, NULL);
  HN_EXPECT(trace != NULL);
  if (trace != NULL) {
    HN_EXPECT(strstr(trace, "{\"name\":\"outer:relu\",\"cat\":\"relu\",\"ph\":\"X\"") != NULL);
    HN_EXPECT(strstr(trace, "\"ph\":\"C\"") != NULL && strstr(trace, "\"samples\":64") != NULL);
    HN_EXPECT(strstr(trace, "{\"name\":\"epoch end\",\"cat\":\"train\",\"ph\":\"i\"") != NULL);
    free(trace);
  }
  hn_tensor_free(x);
  stop_and_clear();
}

static void test_errors(void) {
  const char* bad_key[1] = {"profile_everything"};
  const char* bad_bool_key[1] = {"aggregate_stats"};
  const char* yes[1] = {"True"};
  const char* maybe[1] = {"maybe"};
  const char* file_key[1] = {"filename"};
  const char* unwritable[1] = {"/nonexistent-hybridnet-dir/trace.json"};
  char* table = NULL;
  HN_EXPECT_ERR(hn_profiler_set_config(bad_key, yes, 1), HN_ERR_INVALID_ARGUMENT,
                "unknown profiler option 'profile_everything'");
  HN_EXPECT_ERR(hn_profiler_set_config(bad_bool_key, maybe, 1), HN_ERR_INVALID_ARGUMENT,
                "aggregate_stats='maybe' is not a boolean");
  HN_EXPECT_ERR(hn_profiler_set_config(NULL, yes, 1), HN_ERR_INVALID_ARGUMENT, "keys");
  HN_EXPECT_ERR(hn_profiler_set_state("pause"), HN_ERR_INVALID_ARGUMENT,
                "expected 'run' or 'stop'");
  HN_EXPECT_ERR(hn_profiler_set_state(NULL), HN_ERR_INVALID_ARGUMENT, "state");
  HN_EXPECT_ERR(hn_profiler_dumps(0, "csv", NULL, 0, &table), HN_ERR_INVALID_ARGUMENT, "'csv'");
  HN_EXPECT_ERR(hn_profiler_dumps(0, NULL, "median", 0, &table), HN_ERR_INVALID_ARGUMENT,
                "'median'");
  HN_EXPECT_ERR(hn_profiler_dumps(0, NULL, NULL, 0, NULL), HN_ERR_INVALID_ARGUMENT, "out");
  HN_EXPECT_ERR(hn_profiler_scope_pop(), HN_ERR_INVALID_ARGUMENT, "no scope");
  HN_EXPECT_ERR(hn_profiler_record_duration("span", "d", "n", 0), HN_ERR_INVALID_ARGUMENT,
                "expected task, frame or event");
  HN_EXPECT_ERR(hn_profiler_mark("d", "m", "universe"), HN_ERR_INVALID_ARGUMENT, "'universe'");
  HN_EXPECT_OK(hn_profiler_set_config(file_key, unwritable, 1));
  HN_EXPECT_ERR(hn_profiler_dump(1), HN_ERR_IO,
                "cannot open the trace file '/nonexistent-hybridnet-dir/trace.json'");
  stop_and_clear();
}

HN_TEST_MAIN(profiler,
             HN_RUN(test_trace_and_table) HN_RUN(test_scopes_and_user_events) HN_RUN(test_errors))
