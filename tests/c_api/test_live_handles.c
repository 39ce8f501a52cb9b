/* hn_debug_live_handles: every kind of handle counts while it lives, frees bring the count back,
 * failed calls leave it unchanged. */
#include "hn_test_model.h"

static int64_t live(void) {
  int64_t n = -1;
  HN_EXPECT_OK(hn_debug_live_handles(&n));
  return n;
}

static void test_null_out(void) {
  HN_EXPECT_ERR(hn_debug_live_handles(NULL), HN_ERR_INVALID_ARGUMENT, "out_count");
  HN_EXPECT(strstr(hn_last_error(), "hn_debug_live_handles") != NULL);
}

static void test_tensors_and_lists(void) {
  int64_t shape[2] = {2, 3}, flat[1] = {6}, bad[1] = {-1};
  hn_tensor *t = NULL, *view = NULL, *entry = NULL, *never = NULL;
  hn_tensor* outputs[2] = {NULL, NULL};
  hn_tensor_list* list = NULL;
  size_t n = 0;
  int64_t base = live();
  HN_EXPECT(base == 0);
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_FLOAT32, shape, 2, NULL, 0, &t));
  HN_EXPECT(live() == base + 1);
  HN_EXPECT_OK(hn_tensor_reshape(t, flat, 1, &view));
  HN_EXPECT(live() == base + 2);
  HN_EXPECT_OK(hn_op_invoke("relu", &t, 1, NULL, NULL, 0, 2, outputs, &n));
  HN_EXPECT(n == 1);
  HN_EXPECT(live() == base + 3);
  HN_EXPECT_OK(hn_tensor_list_create(&list));
  HN_EXPECT_OK(hn_tensor_list_append(list, "w", view));
  HN_EXPECT_OK(hn_tensor_list_get(list, 0, &entry));
  HN_EXPECT(live() == base + 5);
  /* failures make nothing */
  HN_EXPECT_ERR(hn_tensor_create(HN_DTYPE_FLOAT32, bad, 1, NULL, 0, &never), HN_ERR_SHAPE, "-1");
  HN_EXPECT_ERR(hn_op_invoke("no_such_op", &t, 1, NULL, NULL, 0, 2, outputs + 1, &n),
                HN_ERR_NOT_FOUND, "no_such_op");
  HN_EXPECT(never == NULL);
  HN_EXPECT(live() == base + 5);
  /* a handle counts until freed, even while its storage lives on in others */
  hn_tensor_free(t);
  HN_EXPECT(live() == base + 4);
  hn_tensor_list_free(list);
  hn_tensor_free(entry);
  hn_tensor_free(view);
  hn_tensor_free(outputs[0]);
  hn_tensor_free(NULL);
  HN_EXPECT(live() == base);
}

static void test_symbols_blocks_models_predictors(void) {
  char prefix[512];
  hn_block* net;
  hn_model* model = NULL;
  hn_predictor *pred = NULL, *clone = NULL;
  hn_symbol *sym = NULL, *graph = NULL;
  hn_shape_info* info = NULL;
  hn_tensor* out = NULL;
  const char* names[1] = {"data"};
  int ndims[1] = {2};
  int64_t dims[2] = {1, HN_TEST_IN};
  float x[HN_TEST_IN];
  int64_t base = live();
  hn_test_path(prefix, sizeof prefix, "capi_live_handles_mlp");
  net = hn_test_export_mlp(prefix, 0);
  HN_EXPECT(live() == base + 1); /* the container; its children's handles were freed */
  HN_EXPECT_OK(hn_block_trace(net, 1, &sym));
  HN_EXPECT_OK(hn_symbol_infer_shape(sym, 1, names, ndims, dims, 0, &info));
  HN_EXPECT(live() == base + 3);
  hn_shape_info_free(info);
  hn_symbol_free(sym);
  hn_block_free(net);
  HN_EXPECT(live() == base);

  HN_EXPECT_OK(hn_model_load(prefix, 0, &model));
  HN_EXPECT_OK(hn_predictor_create(model, &pred));
  HN_EXPECT_OK(hn_predictor_clone(pred, &clone));
  HN_EXPECT_OK(hn_model_symbol(model, &graph));
  HN_EXPECT(live() == base + 4);
  hn_test_fill(x, HN_TEST_IN, 1);
  HN_EXPECT_OK(hn_predictor_set_input(clone, "data", HN_DTYPE_FLOAT32, dims, 2, x, sizeof x));
  HN_EXPECT_OK(hn_predictor_forward(clone));
  HN_EXPECT(live() == base + 4); /* a forward makes no handle */
  HN_EXPECT_OK(hn_predictor_output(clone, 0, &out));
  HN_EXPECT(live() == base + 5);
  HN_EXPECT_ERR(hn_model_load("/nonexistent/live-handles", 0, &model), HN_ERR_IO, "");
  HN_EXPECT(live() == base + 5);
  hn_model_free(model);
  HN_EXPECT(live() == base + 4); /* the predictors keep the model's data, not its handle */
  hn_symbol_free(graph);
  hn_predictor_free(pred);
  hn_predictor_free(clone);
  hn_tensor_free(out);
  HN_EXPECT(live() == base);
}

HN_TEST_MAIN(live_handles, HN_RUN(test_null_out) HN_RUN(test_tensors_and_lists)
                               HN_RUN(test_symbols_blocks_models_predictors))
