/* C API under threads: one model, 8 threads each with its own predictor (created or cloned),
 * 1000 forwards each with per-call shapes; every result must equal the single-threaded run
 * bit for bit. Also: the last error is per thread. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>

#include "hn_test_model.h"

#define NUM_THREADS 8
#define NUM_FORWARDS 1000
#define NUM_VARIANTS 6 /* distinct inputs: batch 1..3 x two patterns */

static hn_model* shared_model = NULL;
static hn_predictor* base_predictor = NULL;
static float reference[NUM_VARIANTS][3 * HN_TEST_OUT];

static int64_t variant_batch(int v) { return 1 + v % 3; }

static int run_variant(hn_predictor* pred, int v, float* out) {
  float x[3 * HN_TEST_IN];
  int64_t shape[2];
  int rc;
  shape[0] = variant_batch(v);
  shape[1] = HN_TEST_IN;
  hn_test_fill(x, (size_t)shape[0] * HN_TEST_IN, v);
  rc = hn_predictor_set_input(pred, "data", HN_DTYPE_FLOAT32, shape, 2, x,
                              (size_t)shape[0] * HN_TEST_IN * sizeof(float));
  if (rc == HN_OK) rc = hn_predictor_forward(pred);
  if (rc == HN_OK) {
    rc = hn_predictor_get_output(pred, 0, out, (size_t)shape[0] * HN_TEST_OUT * sizeof(float));
  }
  return rc;
}

struct worker {
  int id;
  int mismatches;
  int failures;
  int forwards;
  char error[256];
};

static void* work(void* arg) {
  struct worker* w = (struct worker*)arg;
  hn_predictor* pred = NULL;
  float out[3 * HN_TEST_OUT];
  int i, rc;
  /* half create their predictor from the model, half clone the base predictor */
  rc = (w->id % 2 == 0) ? hn_predictor_create(shared_model, &pred)
                        : hn_predictor_clone(base_predictor, &pred);
  if (rc != HN_OK) {
    w->failures = 1;
    snprintf(w->error, sizeof w->error, "%s", hn_last_error());
    return NULL;
  }
  for (i = 0; i < NUM_FORWARDS; ++i) {
    int v = (i * 7 + w->id) % NUM_VARIANTS;
    rc = run_variant(pred, v, out);
    if (rc != HN_OK) {
      if (w->failures++ == 0) snprintf(w->error, sizeof w->error, "%s", hn_last_error());
      continue;
    }
    ++w->forwards;
    if (memcmp(out, reference[v], (size_t)variant_batch(v) * HN_TEST_OUT * sizeof(float)) != 0)
      ++w->mismatches;
  }
  /* an error on this thread does not show on the others */
  if (hn_predictor_set_input(pred, "missing", HN_DTYPE_FLOAT32, NULL, 0, NULL, 0) != HN_ERR_NOT_FOUND ||
      strstr(hn_last_error(), "missing") == NULL) {
    ++w->failures;
  }
  hn_predictor_free(pred);
  return NULL;
}

static void test_eight_threads(void) {
  char prefix[512];
  hn_block* block;
  pthread_t threads[NUM_THREADS];
  struct worker workers[NUM_THREADS];
  int i, v, total = 0;
  hn_test_path(prefix, sizeof prefix, "capi_concurrency_mlp");
  block = hn_test_export_mlp(prefix, 0);
  hn_block_free(block);
  HN_EXPECT_OK(hn_model_load(prefix, 0, &shared_model));
  HN_EXPECT_OK(hn_predictor_create(shared_model, &base_predictor));
  if (base_predictor == NULL) return;
  for (v = 0; v < NUM_VARIANTS; ++v) HN_EXPECT_OK(run_variant(base_predictor, v, reference[v]));
  /* this thread's last error must survive the workers' failures */
  HN_EXPECT_ERR(hn_model_load("/nonexistent/main-thread", 0, NULL), HN_ERR_INVALID_ARGUMENT, "");
  for (i = 0; i < NUM_THREADS; ++i) {
    memset(&workers[i], 0, sizeof workers[i]);
    workers[i].id = i;
    HN_EXPECT(pthread_create(&threads[i], NULL, work, &workers[i]) == 0);
  }
  for (i = 0; i < NUM_THREADS; ++i) {
    pthread_join(threads[i], NULL);
    HN_EXPECT(workers[i].failures == 0);
    HN_EXPECT(workers[i].mismatches == 0);
    HN_EXPECT(workers[i].forwards == NUM_FORWARDS);
    if (workers[i].failures != 0) fprintf(stderr, "thread %d: %s\n", i, workers[i].error);
    total += workers[i].forwards;
  }
  HN_EXPECT(total == NUM_THREADS * NUM_FORWARDS);
  HN_EXPECT(hn_last_error_code() == HN_ERR_INVALID_ARGUMENT);
  HN_EXPECT(strstr(hn_last_error(), "hn_model_load") != NULL);
  printf("%d threads x %d forwards: %d results identical to the single-threaded run\n",
         NUM_THREADS, NUM_FORWARDS, total);
  hn_predictor_free(base_predictor);
  hn_model_free(shared_model);
}

HN_TEST_MAIN(concurrency, HN_RUN(test_eight_threads))
