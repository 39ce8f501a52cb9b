/* C API: symbols (var, compose by op name, group, JSON, lists, nodes, shape inference). */
#include "hn_test.h"

static int has_name(const char* const* names, size_t count, const char* name) {
  size_t i;
  for (i = 0; i < count; ++i)
    if (strcmp(names[i], name) == 0) return 1;
  return 0;
}

static void test_compose_and_list(void) {
  hn_symbol* s = hn_test_symbol_mlp();
  const char* const* names = NULL;
  size_t count = 0, nodes = 0, i;
  const char* op = NULL;
  const char* node = NULL;
  int saw_fc = 0;
  HN_EXPECT_OK(hn_symbol_list_arguments(s, &names, &count));
  HN_EXPECT(count == 3);
  HN_EXPECT(count == 3 && strcmp(names[0], "data") == 0 && strcmp(names[1], "fc1_weight") == 0 &&
            strcmp(names[2], "fc1_bias") == 0);
  HN_EXPECT_OK(hn_symbol_list_outputs(s, &names, &count));
  HN_EXPECT(count == 1 && strcmp(names[0], "relu1_output") == 0);
  HN_EXPECT_OK(hn_symbol_list_auxiliary_states(s, &names, &count));
  HN_EXPECT(count == 0);
  HN_EXPECT_OK(hn_symbol_num_nodes(s, &nodes));
  HN_EXPECT(nodes == 5);
  for (i = 0; i < nodes; ++i) {
    HN_EXPECT_OK(hn_symbol_node(s, i, &op, &node));
    if (strcmp(op, "FullyConnected") == 0 && strcmp(node, "fc1") == 0) saw_fc = 1;
  }
  HN_EXPECT(saw_fc);
  HN_EXPECT_OK(hn_symbol_node(s, 0, &op, NULL));
  HN_EXPECT(strcmp(op, "null") == 0);
  HN_EXPECT_ERR(hn_symbol_node(s, nodes, &op, &node), HN_ERR_INVALID_ARGUMENT, "out of range");
  hn_symbol_free(s);
}

static void test_auto_names_and_aux_states(void) {
  hn_symbol* data = NULL;
  hn_symbol* bn = NULL;
  const char* const* names = NULL;
  size_t count = 0;
  HN_EXPECT_OK(hn_symbol_var("x", &data));
  HN_EXPECT_OK(hn_symbol_create("BatchNorm", &data, 1, NULL, NULL, 0, NULL, &bn));
  HN_EXPECT_OK(hn_symbol_list_auxiliary_states(bn, &names, &count));
  HN_EXPECT(count == 2);
  HN_EXPECT(count == 2 && strstr(names[0], "batchnorm") == names[0] &&
            strstr(names[0], "_moving_mean") != NULL && strstr(names[1], "_moving_var") != NULL);
  HN_EXPECT_OK(hn_symbol_list_arguments(bn, &names, &count));
  HN_EXPECT(count == 3 && has_name(names, count, "x"));
  hn_symbol_free(bn);
  hn_symbol_free(data);
}

/* hn_symbol_auto_name gives MXNet's names to nodes of ops called through another name, from
 * the counters automatic node names use. */
static void test_auto_name_for_frontends(void) {
  hn_symbol* data = NULL;
  hn_symbol* node = NULL;
  char* name = NULL;
  char* json = NULL;
  HN_EXPECT_OK(hn_symbol_var("x", &data));
  HN_EXPECT_OK(hn_symbol_auto_name("arange_like", &name));
  HN_EXPECT(name != NULL && strcmp(name, "arange_like0") == 0);
  HN_EXPECT_OK(hn_symbol_create("_contrib_arange_like", &data, 1, NULL, NULL, 0, name, &node));
  hn_string_free(name);
  HN_EXPECT_OK(hn_symbol_to_json(node, &json));
  HN_EXPECT(json != NULL && strstr(json, "\"arange_like0\"") != NULL);
  hn_string_free(json);
  HN_EXPECT_OK(hn_symbol_auto_name("arange_like", &name));
  HN_EXPECT(name != NULL && strcmp(name, "arange_like1") == 0);
  hn_string_free(name);
  HN_EXPECT_ERR(hn_symbol_auto_name(NULL, &name), HN_ERR_INVALID_ARGUMENT, "'hint' is NULL");
  HN_EXPECT_ERR(hn_symbol_auto_name("", &name), HN_ERR_INVALID_ARGUMENT, "hint is empty");
  HN_EXPECT_ERR(hn_symbol_auto_name("relu", NULL), HN_ERR_INVALID_ARGUMENT, "'out' is NULL");
  hn_symbol_free(node);
  hn_symbol_free(data);
}

static void test_group_and_output(void) {
  hn_symbol* a = hn_test_symbol_mlp();
  hn_symbol* b = NULL;
  hn_symbol* group = NULL;
  hn_symbol* second = NULL;
  hn_symbol* parts[2];
  hn_symbol* composed = NULL;
  const char* const* names;
  size_t count;
  HN_EXPECT_OK(hn_symbol_var("other", &b));
  parts[0] = a;
  parts[1] = b;
  HN_EXPECT_OK(hn_symbol_group(parts, 2, &group));
  HN_EXPECT_OK(hn_symbol_list_outputs(group, &names, &count));
  HN_EXPECT(count == 2 && strcmp(names[1], "other") == 0);
  HN_EXPECT_OK(hn_symbol_output(group, 1, &second));
  HN_EXPECT_OK(hn_symbol_list_outputs(second, &names, &count));
  HN_EXPECT(count == 1 && strcmp(names[0], "other") == 0);
  HN_EXPECT_ERR(hn_symbol_output(group, 2, &second), HN_ERR_INVALID_ARGUMENT, "2 outputs");
  HN_EXPECT_ERR(hn_symbol_create("relu", &group, 1, NULL, NULL, 0, "r", &composed),
                HN_ERR_INVALID_ARGUMENT, "has 2 outputs");
  HN_EXPECT_ERR(hn_symbol_group(NULL, 0, &composed), HN_ERR_INVALID_ARGUMENT, "at least one");
  parts[1] = NULL;
  HN_EXPECT_ERR(hn_symbol_group(parts, 2, &composed), HN_ERR_INVALID_ARGUMENT,
                "symbols[1] is NULL");
  HN_EXPECT(composed == NULL);
  hn_symbol_free(second);
  hn_symbol_free(group);
  hn_symbol_free(b);
  hn_symbol_free(a);
}

static void test_compose_errors(void) {
  hn_symbol* data = NULL;
  hn_symbol* out = NULL;
  const char* keys[1] = {"num_hidden"};
  const char* bad[1] = {"many"};
  HN_EXPECT_OK(hn_symbol_var("data", &data));
  HN_EXPECT_ERR(hn_symbol_var("", &out), HN_ERR_INVALID_ARGUMENT, "non-empty name");
  HN_EXPECT_ERR(hn_symbol_var(NULL, &out), HN_ERR_INVALID_ARGUMENT, "'name' is NULL");
  HN_EXPECT_ERR(hn_symbol_var("x", NULL), HN_ERR_INVALID_ARGUMENT, "'out'");
  HN_EXPECT_ERR(hn_symbol_create("Nope", &data, 1, NULL, NULL, 0, NULL, &out), HN_ERR_NOT_FOUND,
                "Nope");
  HN_EXPECT_ERR(hn_symbol_create("FullyConnected", &data, 1, keys, bad, 1, "fc", &out),
                HN_ERR_INVALID_ARGUMENT, "num_hidden");
  HN_EXPECT_ERR(hn_symbol_create("FullyConnected", NULL, 1, keys, bad, 1, "fc", &out),
                HN_ERR_INVALID_ARGUMENT, "'inputs' is NULL");
  HN_EXPECT(out == NULL);
  hn_symbol_free(data);
}

static void test_json_round_trip(void) {
  hn_symbol* s = hn_test_symbol_mlp();
  hn_symbol* back = NULL;
  char* json = NULL;
  char* json2 = NULL;
  char path[512], bad[512];
  int version = 0, legacy = -1;
  hn_test_path(path, sizeof path, "capi_symbol.json");
  hn_test_path(bad, sizeof bad, "capi_symbol_bad.json");
  HN_EXPECT_OK(hn_symbol_to_json(s, &json));
  HN_EXPECT(json != NULL && strstr(json, "\"FullyConnected\"") != NULL);
  HN_EXPECT_OK(hn_symbol_inspect_json(json, &version, &legacy));
  HN_EXPECT(version == 10901 && legacy == 0);
  HN_EXPECT_OK(hn_symbol_from_json(json, &back));
  HN_EXPECT_OK(hn_symbol_to_json(back, &json2));
  HN_EXPECT(json2 != NULL && strcmp(json, json2) == 0);
  hn_symbol_free(back);
  back = NULL;
  hn_string_free(json2);
  json2 = NULL;
  HN_EXPECT_OK(hn_symbol_save(s, path));
  HN_EXPECT_OK(hn_symbol_load(path, &back));
  HN_EXPECT_OK(hn_symbol_to_json(back, &json2));
  HN_EXPECT(json2 != NULL && strcmp(json, json2) == 0);
  hn_symbol_free(back);
  back = NULL;
  /* errors: missing, malformed, truncated, unknown op */
  HN_EXPECT_ERR(hn_symbol_load("/nonexistent/x-symbol.json", &back), HN_ERR_IO,
                "/nonexistent/x-symbol.json");
  HN_EXPECT_ERR(hn_symbol_from_json("{", &back), HN_ERR_FORMAT, "");
  HN_EXPECT_ERR(hn_symbol_from_json("[1, 2]", &back), HN_ERR_FORMAT, "");
  HN_EXPECT(hn_test_write_file(bad, json, strlen(json) / 2) == 0);
  HN_EXPECT_ERR(hn_symbol_load(bad, &back), HN_ERR_FORMAT, "capi_symbol_bad.json");
  HN_EXPECT_ERR(
      hn_symbol_from_json("{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}, "
                          "{\"op\": \"Frobnicate\", \"name\": \"f\", \"inputs\": [[0, 0, 0]]}], "
                          "\"arg_nodes\": [0], \"heads\": [[1, 0, 0]]}",
                          &back),
      HN_ERR_NOT_FOUND, "Frobnicate");
  HN_EXPECT_ERR(hn_symbol_save(s, "/nonexistent/dir/x.json"), HN_ERR_IO, "");
  HN_EXPECT_ERR(hn_symbol_to_json(NULL, &json2), HN_ERR_INVALID_ARGUMENT, "'symbol' is NULL");
  HN_EXPECT_ERR(hn_symbol_inspect_json("not json", NULL, NULL), HN_ERR_FORMAT, "");
  HN_EXPECT(back == NULL);
  hn_string_free(json2);
  hn_string_free(json);
  hn_symbol_free(s);
}

static void test_legacy_json_fixture(void) {
  char path[1024];
  char* json;
  hn_symbol* s = NULL;
  int version = 0, legacy = 0;
  snprintf(path, sizeof path, "%s/save_000800.json", HN_FIXTURES_DIR);
  json = hn_test_read_file(path, NULL);
  if (json == NULL) printf("MXNet fixture %s is missing\n", path);
  HN_EXPECT(json != NULL);
  if (json == NULL) return;
  HN_EXPECT_OK(hn_symbol_inspect_json(json, &version, &legacy));
  HN_EXPECT(version == 800 && legacy == 1);
  HN_EXPECT_OK(hn_symbol_from_json(json, &s));
  hn_symbol_free(s);
  free(json);
}

static void test_unsupported_ops(void) {
  const char* json =
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}, "
      "{\"op\": \"Frobnicate\", \"name\": \"f1\", \"inputs\": [[0, 0, 0]]}, "
      "{\"op\": \"Frobnicate\", \"name\": \"f2\", \"inputs\": [[1, 0, 0]]}, "
      "{\"op\": \"relu\", \"name\": \"r\", \"inputs\": [[2, 0, 0]]}, "
      "{\"op\": \"Custom\", \"name\": \"c\", \"attrs\": {\"op_type\": \"mine\"}, "
      "\"inputs\": [[3, 0, 0]]}], \"arg_nodes\": [0], \"heads\": [[4, 0, 0]]}";
  char* list = NULL;
  hn_symbol* s = NULL;
  HN_EXPECT_OK(hn_symbol_unsupported_ops(json, &list));
  HN_EXPECT(list != NULL && strcmp(list, "Custom\tc (op_type mine)\nFrobnicate\tf1,f2\n") == 0);
  hn_string_free(list);
  /* Loading names them all at once. */
  HN_EXPECT_ERR(hn_symbol_from_json(json, &s), HN_ERR_NOT_FOUND, "2 operators are not supported");
  HN_EXPECT(s == NULL);
  list = NULL;
  HN_EXPECT_OK(hn_symbol_unsupported_ops(
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}], "
      "\"arg_nodes\": [0], \"heads\": [[0, 0, 0]]}",
      &list));
  HN_EXPECT(list != NULL && list[0] == '\0');
  hn_string_free(list);
  HN_EXPECT_ERR(hn_symbol_unsupported_ops(NULL, &list), HN_ERR_INVALID_ARGUMENT, "'json' is NULL");
  HN_EXPECT_ERR(hn_symbol_unsupported_ops(json, NULL), HN_ERR_INVALID_ARGUMENT, "'out' is NULL");
  HN_EXPECT_ERR(hn_symbol_unsupported_ops("{", &list), HN_ERR_FORMAT, "not valid JSON");
}

static void test_infer_shape(void) {
  hn_symbol* s = hn_test_symbol_mlp();
  hn_shape_info* info = NULL;
  const char* names[2] = {"data", "fc1_weight"};
  int ndims[2] = {2, 2};
  int64_t dims[4] = {5, 8, 4, 9};
  const char* name = NULL;
  const int64_t* shape = NULL;
  int ndim = 0, complete = -1;
  size_t count = 0;
  HN_EXPECT_OK(hn_symbol_infer_shape(s, 1, names, ndims, dims, 0, &info));
  HN_EXPECT_OK(hn_shape_info_complete(info, &complete));
  HN_EXPECT(complete == 1);
  HN_EXPECT_OK(hn_shape_info_count(info, HN_SHAPES_ARGUMENTS, &count));
  HN_EXPECT(count == 3);
  HN_EXPECT_OK(hn_shape_info_get(info, HN_SHAPES_ARGUMENTS, 1, &name, &shape, &ndim));
  HN_EXPECT(strcmp(name, "fc1_weight") == 0 && ndim == 2 && shape[0] == 4 && shape[1] == 8);
  HN_EXPECT_OK(hn_shape_info_get(info, HN_SHAPES_OUTPUTS, 0, &name, &shape, &ndim));
  HN_EXPECT(strcmp(name, "relu1_output") == 0 && ndim == 2 && shape[0] == 5 && shape[1] == 4);
  HN_EXPECT_OK(hn_shape_info_count(info, HN_SHAPES_AUXILIARY_STATES, &count));
  HN_EXPECT(count == 0);
  HN_EXPECT_ERR(hn_shape_info_get(info, HN_SHAPES_OUTPUTS, 1, &name, &shape, &ndim),
                HN_ERR_INVALID_ARGUMENT, "out of range");
  HN_EXPECT_ERR(hn_shape_info_count(info, 3, &count), HN_ERR_INVALID_ARGUMENT, "hn_shape_group");
  hn_shape_info_free(info);
  info = NULL;
  /* partial: nothing known */
  HN_EXPECT_OK(hn_symbol_infer_shape(s, 0, NULL, NULL, NULL, 1, &info));
  HN_EXPECT_OK(hn_shape_info_complete(info, &complete));
  HN_EXPECT(complete == 0);
  hn_shape_info_free(info);
  info = NULL;
  /* errors */
  HN_EXPECT_ERR(hn_symbol_infer_shape(s, 0, NULL, NULL, NULL, 0, &info), HN_ERR_SHAPE, "");
  HN_EXPECT_ERR(hn_symbol_infer_shape(s, 2, names, ndims, dims, 0, &info), HN_ERR_SHAPE, "fc1");
  names[1] = "nothing";
  HN_EXPECT_ERR(hn_symbol_infer_shape(s, 2, names, ndims, dims, 0, &info), HN_ERR_NOT_FOUND,
                "'nothing' is not a variable");
  HN_EXPECT_ERR(hn_symbol_infer_shape(s, 1, NULL, ndims, dims, 0, &info), HN_ERR_INVALID_ARGUMENT,
                "num_known is 1");
  dims[0] = -5;
  HN_EXPECT_ERR(hn_symbol_infer_shape(s, 1, names, ndims, dims, 0, &info), HN_ERR_SHAPE,
                "shape of 'data'");
  HN_EXPECT_ERR(hn_symbol_infer_shape(NULL, 1, names, ndims, dims, 0, &info),
                HN_ERR_INVALID_ARGUMENT, "'symbol' is NULL");
  HN_EXPECT_ERR(hn_shape_info_complete(NULL, &complete), HN_ERR_INVALID_ARGUMENT, "'info' is NULL");
  HN_EXPECT(info == NULL);
  hn_symbol_free(s);
}

static void test_null_handles(void) {
  const char* const* names;
  size_t count;
  HN_EXPECT_ERR(hn_symbol_list_arguments(NULL, &names, &count), HN_ERR_INVALID_ARGUMENT,
                "'symbol' is NULL");
  HN_EXPECT_ERR(hn_symbol_list_outputs(NULL, &names, &count), HN_ERR_INVALID_ARGUMENT,
                "'symbol' is NULL");
  HN_EXPECT_ERR(hn_symbol_list_auxiliary_states(NULL, &names, &count), HN_ERR_INVALID_ARGUMENT,
                "'symbol' is NULL");
  HN_EXPECT_ERR(hn_symbol_num_nodes(NULL, &count), HN_ERR_INVALID_ARGUMENT, "'symbol' is NULL");
  HN_EXPECT_ERR(hn_symbol_save(NULL, "x"), HN_ERR_INVALID_ARGUMENT, "'symbol' is NULL");
  HN_EXPECT_ERR(hn_symbol_from_json(NULL, NULL), HN_ERR_INVALID_ARGUMENT, "'json' is NULL");
}

HN_TEST_MAIN(symbol, HN_RUN(test_compose_and_list) HN_RUN(test_auto_names_and_aux_states)
                         HN_RUN(test_auto_name_for_frontends) HN_RUN(test_group_and_output)
                             HN_RUN(test_compose_errors) HN_RUN(test_json_round_trip)
                                 HN_RUN(test_legacy_json_fixture) HN_RUN(test_unsupported_ops)
                                     HN_RUN(test_infer_shape) HN_RUN(test_null_handles))
