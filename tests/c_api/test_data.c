/* C API: the data loader (batches in order, last_batch modes, seeded shuffles that repeat),
 * with NULL handles, bad options and arrays of different lengths. */
#include "hn_test.h"

enum { kSamples = 7 };

/* x: (7, 2) with row i = (10 i, 10 i + 1); y: (7,) with y[i] = i. */
static void make_arrays(hn_tensor** x, hn_tensor** y) {
  float xs[kSamples * 2], ys[kSamples];
  const int64_t x_shape[2] = {kSamples, 2}, y_shape[1] = {kSamples};
  int i;
  for (i = 0; i < kSamples; ++i) {
    xs[2 * i] = (float)(10 * i);
    xs[2 * i + 1] = (float)(10 * i + 1);
    ys[i] = (float)i;
  }
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_FLOAT32, x_shape, 2, xs, sizeof(xs), x));
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_FLOAT32, y_shape, 1, ys, sizeof(ys), y));
}

/* Reads the next batch's labels into labels[] (checking each x row belongs to its label) and
 * returns its size, 0 at the epoch's end. */
static int next_labels(hn_data_loader* loader, int* labels) {
  hn_tensor* batch[2] = {NULL, NULL};
  float xs[kSamples * 2], ys[kSamples];
  size_t n = 99;
  int64_t rows = 0;
  int i;
  HN_EXPECT_OK(hn_data_loader_next(loader, 2, batch, &n));
  if (n == 0) return 0;
  HN_EXPECT(n == 2);
  HN_EXPECT_OK(hn_tensor_dim(batch[1], 0, &rows));
  HN_EXPECT_OK(hn_tensor_copy_to(batch[0], xs, sizeof(xs)));
  HN_EXPECT_OK(hn_tensor_copy_to(batch[1], ys, sizeof(ys)));
  for (i = 0; i < rows; ++i) {
    labels[i] = (int)ys[i];
    HN_EXPECT(xs[2 * i] == 10.0f * ys[i] && xs[2 * i + 1] == 10.0f * ys[i] + 1.0f);
  }
  hn_tensor_free(batch[0]);
  hn_tensor_free(batch[1]);
  return (int)rows;
}

/* One epoch's batch sizes as a number in base 10 (3, 3, 1 -> 331) and its labels in order. */
static int epoch(hn_data_loader* loader, int* order) {
  int sizes = 0, rows, total = 0;
  HN_EXPECT_OK(hn_data_loader_reset(loader));
  while ((rows = next_labels(loader, order + total)) > 0) {
    sizes = sizes * 10 + rows;
    total += rows;
    if (total > 3 * kSamples) break;
  }
  return sizes;
}

static void test_last_batch_modes(void) {
  hn_tensor *x = NULL, *y = NULL;
  hn_data_loader* loader = NULL;
  int order[3 * kSamples];
  int64_t batches = 0;
  int i;
  make_arrays(&x, &y);
  {
    hn_tensor* arrays[2] = {x, y};
    HN_EXPECT_OK(hn_data_loader_create(arrays, 2, 3, 0, NULL, 0, &loader));
    HN_EXPECT_OK(hn_data_loader_num_batches(loader, &batches));
    HN_EXPECT(batches == 3);
    HN_EXPECT(epoch(loader, order) == 331);
    for (i = 0; i < kSamples; ++i) HN_EXPECT(order[i] == i);
    HN_EXPECT(epoch(loader, order) == 331);
    hn_data_loader_free(loader);

    HN_EXPECT_OK(hn_data_loader_create(arrays, 2, 3, 0, "discard", 0, &loader));
    HN_EXPECT_OK(hn_data_loader_num_batches(loader, &batches));
    HN_EXPECT(batches == 2);
    HN_EXPECT(epoch(loader, order) == 33);
    hn_data_loader_free(loader);

    /* rollover: the 7th sample opens the next epoch (1 + 7 = 8 samples: two batches, 2 kept). */
    HN_EXPECT_OK(hn_data_loader_create(arrays, 2, 3, 0, "rollover", 0, &loader));
    HN_EXPECT(epoch(loader, order) == 33);
    HN_EXPECT(epoch(loader, order) == 33);
    HN_EXPECT(order[0] == 6 && order[1] == 0);
    hn_data_loader_free(loader);
  }
  hn_tensor_free(x);
  hn_tensor_free(y);
}

/* The same seed gives the same orders, every sample once per epoch; another seed another. */
static void test_seeded_shuffle(void) {
  hn_tensor *x = NULL, *y = NULL;
  hn_data_loader *a = NULL, *b = NULL, *c = NULL;
  int order_a[3 * kSamples], order_b[3 * kSamples], order_c[3 * kSamples];
  int e, i, same_as_c = 1, in_order = 1;
  make_arrays(&x, &y);
  {
    hn_tensor* arrays[2] = {x, y};
    HN_EXPECT_OK(hn_data_loader_create(arrays, 2, 2, 1, "keep", 42, &a));
    HN_EXPECT_OK(hn_data_loader_create(arrays, 2, 2, 1, "keep", 42, &b));
    HN_EXPECT_OK(hn_data_loader_create(arrays, 2, 2, 1, "keep", 43, &c));
  }
  for (e = 0; e < 3; ++e) {
    int seen[kSamples] = {0};
    HN_EXPECT(epoch(a, order_a) == 2221);
    HN_EXPECT(epoch(b, order_b) == 2221);
    HN_EXPECT(epoch(c, order_c) == 2221);
    for (i = 0; i < kSamples; ++i) {
      HN_EXPECT(order_a[i] == order_b[i]);
      HN_EXPECT(order_a[i] >= 0 && order_a[i] < kSamples);
      if (order_a[i] >= 0 && order_a[i] < kSamples) seen[order_a[i]]++;
      if (order_a[i] != order_c[i]) same_as_c = 0;
      if (order_a[i] != i) in_order = 0;
    }
    for (i = 0; i < kSamples; ++i) HN_EXPECT(seen[i] == 1);
  }
  HN_EXPECT(!same_as_c);
  HN_EXPECT(!in_order);
  hn_data_loader_free(a);
  hn_data_loader_free(b);
  hn_data_loader_free(c);
  hn_tensor_free(x);
  hn_tensor_free(y);
}

static void test_errors(void) {
  hn_tensor *x = NULL, *y = NULL, *short_y = NULL;
  hn_tensor* batch[2] = {NULL, NULL};
  hn_data_loader* loader = NULL;
  const int64_t short_shape[1] = {5};
  const float zeros[5] = {0};
  size_t n = 0;
  int64_t batches = 0;
  make_arrays(&x, &y);
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_FLOAT32, short_shape, 1, zeros, sizeof(zeros), &short_y));
  {
    hn_tensor* arrays[2] = {x, y};
    hn_tensor* uneven[2] = {x, short_y};
    hn_tensor* with_null[2] = {x, NULL};
    HN_EXPECT_ERR(hn_data_loader_create(arrays, 2, 3, 0, NULL, 0, NULL), HN_ERR_INVALID_ARGUMENT,
                  "out");
    HN_EXPECT_ERR(hn_data_loader_create(arrays, 0, 3, 0, NULL, 0, &loader),
                  HN_ERR_INVALID_ARGUMENT, "at least one array");
    HN_EXPECT_ERR(hn_data_loader_create(NULL, 2, 3, 0, NULL, 0, &loader), HN_ERR_INVALID_ARGUMENT,
                  "arrays");
    HN_EXPECT_ERR(hn_data_loader_create(with_null, 2, 3, 0, NULL, 0, &loader),
                  HN_ERR_INVALID_ARGUMENT, "arrays");
    HN_EXPECT_ERR(hn_data_loader_create(uneven, 2, 3, 0, NULL, 0, &loader), HN_ERR_SHAPE, "5");
    HN_EXPECT_ERR(hn_data_loader_create(arrays, 2, 0, 0, NULL, 0, &loader),
                  HN_ERR_INVALID_ARGUMENT, "batch");
    HN_EXPECT_ERR(hn_data_loader_create(arrays, 2, 3, 2, NULL, 0, &loader),
                  HN_ERR_INVALID_ARGUMENT, "'shuffle'");
    HN_EXPECT_ERR(hn_data_loader_create(arrays, 2, 3, 0, "sometimes", 0, &loader),
                  HN_ERR_INVALID_ARGUMENT, "'keep', 'discard', or 'rollover'");
    HN_EXPECT(loader == NULL);
    HN_EXPECT_OK(hn_data_loader_create(arrays, 2, 3, 0, NULL, 0, &loader));
  }
  HN_EXPECT_ERR(hn_data_loader_next(loader, 1, batch, &n), HN_ERR_INVALID_ARGUMENT,
                "a batch has 2 arrays");
  HN_EXPECT_ERR(hn_data_loader_next(loader, 2, NULL, &n), HN_ERR_INVALID_ARGUMENT, "batch");
  HN_EXPECT_ERR(hn_data_loader_next(loader, 2, batch, NULL), HN_ERR_INVALID_ARGUMENT,
                "out_num_fields");
  HN_EXPECT_ERR(hn_data_loader_next(NULL, 2, batch, &n), HN_ERR_INVALID_ARGUMENT,
                "'loader' is NULL");
  HN_EXPECT_ERR(hn_data_loader_reset(NULL), HN_ERR_INVALID_ARGUMENT, "'loader' is NULL");
  HN_EXPECT_ERR(hn_data_loader_num_batches(NULL, &batches), HN_ERR_INVALID_ARGUMENT,
                "'loader' is NULL");
  HN_EXPECT_ERR(hn_data_loader_num_batches(loader, NULL), HN_ERR_INVALID_ARGUMENT,
                "out_num_batches");
  HN_EXPECT(batch[0] == NULL && batch[1] == NULL);
  /* The loader shares the arrays: freeing the handles keeps its data alive. */
  hn_tensor_free(x);
  hn_tensor_free(y);
  {
    int labels[kSamples];
    HN_EXPECT(next_labels(loader, labels) == 3);
    HN_EXPECT(labels[0] == 0 && labels[2] == 2);
  }
  hn_data_loader_free(loader);
  hn_data_loader_free(NULL);
  hn_tensor_free(short_y);
}

HN_TEST_MAIN(data, HN_RUN(test_last_batch_modes) HN_RUN(test_seeded_shuffle) HN_RUN(test_errors))
