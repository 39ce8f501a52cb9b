/* C API: metrics (create by name with arguments, update, readings, statistics, reset), with
 * NULL handles, unknown names and mismatched inputs. */
#include <math.h>

#include "hn_test.h"

static hn_tensor* tensor2d(int64_t rows, int64_t cols, const float* values) {
  int64_t shape[2];
  hn_tensor* t = NULL;
  shape[0] = rows;
  shape[1] = cols;
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_FLOAT32, shape, cols > 0 ? 2 : 1, values,
                                (size_t)(rows * (cols > 0 ? cols : 1)) * sizeof(float), &t));
  return t;
}

static double reading(const hn_metric* m, int global, const char* expected_name) {
  const char* name = NULL;
  double value = -1.0;
  size_t n = 0;
  HN_EXPECT_OK(hn_metric_get(m, global, 1, &name, &value, &n));
  HN_EXPECT(n == 1);
  HN_EXPECT(name != NULL && strcmp(name, expected_name) == 0);
  return value;
}

/* Accuracy over two batches, local and global statistics, reset_local and reset. */
static void test_accuracy(void) {
  const float pred_values[6] = {0.1f, 0.9f, 0.8f, 0.2f, 0.3f, 0.7f};
  const float label_values[3] = {1.f, 1.f, 1.f};
  hn_tensor* pred = tensor2d(3, 2, pred_values);
  hn_tensor* label = tensor2d(3, 0, label_values);
  hn_metric* acc = NULL;
  const char* kind = NULL;
  double num = 0, sum = 0;
  HN_EXPECT_OK(hn_metric_create("ACC", NULL, NULL, 0, &acc));
  HN_EXPECT_OK(hn_metric_kind(acc, &kind));
  HN_EXPECT(strcmp(kind, "Accuracy") == 0);
  HN_EXPECT(isnan(reading(acc, 0, "accuracy")));
  HN_EXPECT_OK(hn_metric_update(acc, &label, 1, &pred, 1));
  HN_EXPECT(fabs(reading(acc, 0, "accuracy") - 2.0 / 3.0) < 1e-12);
  HN_EXPECT_OK(hn_metric_stats(acc, 0, &num, &sum));
  HN_EXPECT(num == 3.0 && sum == 2.0);
  HN_EXPECT_OK(hn_metric_reset(acc, 1));
  HN_EXPECT(isnan(reading(acc, 0, "accuracy")));
  HN_EXPECT(fabs(reading(acc, 1, "accuracy") - 2.0 / 3.0) < 1e-12);
  HN_EXPECT_OK(hn_metric_update(acc, &label, 1, &pred, 1));
  HN_EXPECT_OK(hn_metric_stats(acc, 1, &num, NULL));
  HN_EXPECT(num == 6.0);
  HN_EXPECT_OK(hn_metric_reset(acc, 0));
  HN_EXPECT(isnan(reading(acc, 1, "accuracy")));
  hn_metric_free(acc);
  hn_tensor_free(pred);
  hn_tensor_free(label);
}

/* Arguments as text, and a composite's readings in order. */
static void test_arguments_and_composite(void) {
  const char* keys[2] = {"top_k", "name"};
  const char* values[2] = {"2", "top"};
  const char* composite_keys[1] = {"metrics"};
  const char* composite_values[1] = {"acc, mse"};
  const char* names[4] = {NULL, NULL, NULL, NULL};
  double readings[4];
  size_t n = 0;
  hn_metric *top = NULL, *composite = NULL;
  HN_EXPECT_OK(hn_metric_create("top_k_accuracy", keys, values, 2, &top));
  HN_EXPECT(isnan(reading(top, 0, "top_2")));
  HN_EXPECT_OK(hn_metric_create("composite", composite_keys, composite_values, 1, &composite));
  HN_EXPECT_OK(hn_metric_get(composite, 0, 0, NULL, NULL, &n));
  HN_EXPECT(n == 2);
  HN_EXPECT_OK(hn_metric_get(composite, 0, 4, names, readings, &n));
  HN_EXPECT(n == 2 && strcmp(names[0], "accuracy") == 0 && strcmp(names[1], "mse") == 0);
  HN_EXPECT_ERR(hn_metric_stats(composite, 0, NULL, NULL), HN_ERR_INVALID_ARGUMENT,
                "CompositeEvalMetric has no statistics");
  hn_metric_free(top);
  hn_metric_free(composite);
}

static void test_errors(void) {
  const float values[4] = {0.f, 1.f, 1.f, 0.f};
  const char* bad_keys[1] = {"axes"};
  const char* bad_values[1] = {"1"};
  const char* average_keys[1] = {"average"};
  const char* average_values[1] = {"weighted"};
  hn_tensor* pred = tensor2d(2, 2, values);
  hn_tensor* label = tensor2d(2, 0, values);
  hn_tensor* labels[2];
  hn_metric* m = NULL;
  const char* kind = NULL;
  size_t n = 0;
  HN_EXPECT_ERR(hn_metric_create("accuracyy", NULL, NULL, 0, &m), HN_ERR_NOT_FOUND,
                "unknown metric 'accuracyy'; known metrics: accuracy, acc");
  HN_EXPECT_ERR(hn_metric_create("acc", bad_keys, bad_values, 1, &m), HN_ERR_INVALID_ARGUMENT,
                "Accuracy: unknown argument 'axes'; it takes name, axis");
  HN_EXPECT_ERR(hn_metric_create("f1", average_keys, average_values, 1, &m),
                HN_ERR_INVALID_ARGUMENT, "'average' is 'weighted'");
  HN_EXPECT_ERR(hn_metric_create("acc", NULL, NULL, 0, NULL), HN_ERR_INVALID_ARGUMENT, "out");
  HN_EXPECT_ERR(hn_metric_create(NULL, NULL, NULL, 0, &m), HN_ERR_INVALID_ARGUMENT, "'name'");
  HN_EXPECT(m == NULL);
  HN_EXPECT_OK(hn_metric_create("acc", NULL, NULL, 0, &m));
  labels[0] = label;
  labels[1] = label;
  HN_EXPECT_ERR(hn_metric_update(m, labels, 2, &pred, 1), HN_ERR_INVALID_ARGUMENT,
                "2 label arrays but 1 prediction arrays");
  HN_EXPECT_ERR(hn_metric_update(m, NULL, 1, &pred, 1), HN_ERR_INVALID_ARGUMENT, "'labels'");
  HN_EXPECT_ERR(hn_metric_update(NULL, &label, 1, &pred, 1), HN_ERR_INVALID_ARGUMENT,
                "'metric' is NULL");
  HN_EXPECT_ERR(hn_metric_get(m, 2, 0, NULL, NULL, &n), HN_ERR_INVALID_ARGUMENT, "'global'");
  HN_EXPECT_ERR(hn_metric_get(m, 0, 1, NULL, NULL, &n), HN_ERR_INVALID_ARGUMENT, "names");
  HN_EXPECT_ERR(hn_metric_reset(m, 5), HN_ERR_INVALID_ARGUMENT, "'local_only'");
  HN_EXPECT_ERR(hn_metric_kind(NULL, &kind), HN_ERR_INVALID_ARGUMENT, "'metric' is NULL");
  HN_EXPECT_OK(hn_metric_kind_of("NLL_LOSS", &kind));
  HN_EXPECT(strcmp(kind, "NegativeLogLikelihood") == 0);
  HN_EXPECT_ERR(hn_metric_kind_of("f2", &kind), HN_ERR_NOT_FOUND, "unknown metric 'f2'");
  HN_EXPECT_ERR(hn_metric_kind_of(NULL, &kind), HN_ERR_INVALID_ARGUMENT, "'name'");
  /* Nothing was added by the failed updates. */
  HN_EXPECT(isnan(reading(m, 1, "accuracy")));
  hn_metric_free(m);
  hn_metric_free(NULL);
  hn_tensor_free(pred);
  hn_tensor_free(label);
}

HN_TEST_MAIN(metric, HN_RUN(test_accuracy) HN_RUN(test_arguments_and_composite) HN_RUN(test_errors))
