/* Shared by the model and concurrency tests: exports a small MLP through the C API. */
#ifndef HN_TEST_MODEL_H_
#define HN_TEST_MODEL_H_

#include "hn_test.h"

#define HN_TEST_IN 8
#define HN_TEST_OUT 4

/* Fills x[0..n) with a deterministic pattern depending on `variant`. */
HN_TEST_UNUSED static void hn_test_fill(float* x, size_t n, int variant) {
  size_t i;
  for (i = 0; i < n; ++i) x[i] = (float)((int)((i * 31 + (size_t)variant * 17) % 23) - 11) / 7.f;
}

/* HybridSequential(Dense(16, relu), Dense(4)) initialized with seed 11, hybridized, run once on a
 * (1, 8) input and exported as PREFIX-symbol.json + PREFIX-EEEE.params. Returns the block (the
 * caller frees it) or NULL on failure. */
HN_TEST_UNUSED static hn_block* hn_test_export_mlp(const char* prefix, int epoch) {
  const char* k1[2] = {"units", "activation"};
  const char* v1[2] = {"16", "relu"};
  const char* k2[1] = {"units"};
  const char* v2[1] = {"4"};
  hn_block *net = NULL, *d1 = NULL, *d2 = NULL;
  hn_tensor* x = NULL;
  hn_tensor* y = NULL;
  int64_t shape[2] = {1, HN_TEST_IN};
  float data[HN_TEST_IN];
  size_t n = 0;
  int ok = 1;
  hn_test_fill(data, HN_TEST_IN, 0);
  ok = ok && hn_block_create("HybridSequential", NULL, NULL, 0, &net) == HN_OK;
  ok = ok && hn_block_create("Dense", k1, v1, 2, &d1) == HN_OK;
  ok = ok && hn_block_create("Dense", k2, v2, 1, &d2) == HN_OK;
  ok = ok && hn_block_add(net, d1) == HN_OK && hn_block_add(net, d2) == HN_OK;
  ok = ok && hn_block_initialize(net, "xavier", 11, 0) == HN_OK;
  ok = ok && hn_block_hybridize(net, 1, 0, 0) == HN_OK;
  ok = ok && hn_tensor_create(HN_DTYPE_FLOAT32, shape, 2, data, sizeof data, &x) == HN_OK;
  ok = ok && hn_block_forward(net, &x, 1, 1, &y, &n) == HN_OK;
  ok = ok && hn_block_export(net, prefix, epoch) == HN_OK;
  if (!ok) fprintf(stderr, "exporting the test MLP failed: %s\n", hn_last_error());
  HN_EXPECT(ok);
  hn_tensor_free(x);
  hn_tensor_free(y);
  hn_block_free(d1);
  hn_block_free(d2);
  if (!ok) {
    hn_block_free(net);
    return NULL;
  }
  return net;
}

/* Runs `block` on a (batch, 8) input made with hn_test_fill(variant); writes batch*4 floats. */
HN_TEST_UNUSED static int hn_test_block_output(hn_block* block, int64_t batch, int variant,
                                               float* out) {
  hn_tensor* x = NULL;
  hn_tensor* y = NULL;
  int64_t shape[2];
  float data[64 * HN_TEST_IN];
  size_t n = 0;
  int rc;
  shape[0] = batch;
  shape[1] = HN_TEST_IN;
  hn_test_fill(data, (size_t)batch * HN_TEST_IN, variant);
  rc = hn_tensor_create(HN_DTYPE_FLOAT32, shape, 2, data,
                        (size_t)batch * HN_TEST_IN * sizeof(float), &x);
  if (rc == HN_OK) rc = hn_block_forward(block, &x, 1, 1, &y, &n);
  if (rc == HN_OK) rc = hn_tensor_copy_to(y, out, (size_t)batch * HN_TEST_OUT * sizeof(float));
  hn_tensor_free(x);
  hn_tensor_free(y);
  return rc;
}

#endif /* HN_TEST_MODEL_H_ */
