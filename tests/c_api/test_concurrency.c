/* C API under threads (also built with ThreadSanitizer: make test-tsan).
 *  - One model, 8 threads each with its own predictor (half created, half cloned), 10 000
 *    forwards each with per-call shapes: every result equals the single-threaded run bit for bit.
 *  - Predictors created, cloned and freed on some threads while others run forwards (one of them
 *    on the predictor being cloned, which c_api.h allows).
 *  - A model freed while its predictors run (c_api.h: predictors keep the model's data alive);
 *    they keep running and can still be cloned.
 *  - The last error is per thread.
 * Every test ends with as many live handles (hn_debug_live_handles) as it began with. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>

#include "hn_test_model.h"

#define NUM_THREADS 8
#define NUM_FORWARDS 10000
#define NUM_VARIANTS 6 /* distinct inputs: batch 1..3 x two patterns */
#define NUM_CHURN_CYCLES 500
#define NUM_CHURN_FORWARDS 2000
#define NUM_AFTER_FREE_FORWARDS 2000

static char model_prefix[512];
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

/* What one thread saw; the main thread checks it after joining. */
struct worker {
  int id;
  int mismatches;
  int failures;
  int forwards;
  char error[256];
};

static void worker_failed(struct worker* w) {
  if (w->failures++ == 0) snprintf(w->error, sizeof w->error, "%s", hn_last_error());
}

/* One forward of variant v on `pred`, compared with the single-threaded reference. */
static void checked_forward(struct worker* w, hn_predictor* pred, int v) {
  float out[3 * HN_TEST_OUT];
  if (run_variant(pred, v, out) != HN_OK) {
    worker_failed(w);
    return;
  }
  ++w->forwards;
  if (memcmp(out, reference[v], (size_t)variant_batch(v) * HN_TEST_OUT * sizeof(float)) != 0)
    ++w->mismatches;
}

/* Checks a joined worker: no failure, no mismatch, `forwards` forwards. */
static void expect_worker(const struct worker* w, int forwards) {
  HN_EXPECT(w->failures == 0);
  HN_EXPECT(w->mismatches == 0);
  HN_EXPECT(w->forwards == forwards);
  if (w->failures != 0) fprintf(stderr, "thread %d: %s\n", w->id, w->error);
  if (w->forwards != forwards)
    fprintf(stderr, "thread %d: %d forwards, expected %d\n", w->id, w->forwards, forwards);
}

static int64_t live_handles(void) {
  int64_t n = -1;
  HN_EXPECT_OK(hn_debug_live_handles(&n));
  return n;
}

/* Exports the test MLP, loads it as shared_model and computes the reference outputs on this
 * thread. Returns 0 on failure (already reported). */
static int setup_shared_model(void) {
  hn_block* block;
  int v;
  hn_test_path(model_prefix, sizeof model_prefix, "capi_concurrency_mlp");
  block = hn_test_export_mlp(model_prefix, 0);
  if (block == NULL) return 0;
  hn_block_free(block);
  HN_EXPECT_OK(hn_model_load(model_prefix, 0, &shared_model));
  HN_EXPECT_OK(hn_predictor_create(shared_model, &base_predictor));
  if (base_predictor == NULL) return 0;
  for (v = 0; v < NUM_VARIANTS; ++v) HN_EXPECT_OK(run_variant(base_predictor, v, reference[v]));
  return 1;
}

static void* eight_threads_work(void* arg) {
  struct worker* w = (struct worker*)arg;
  hn_predictor* pred = NULL;
  int i, rc;
  /* half create their predictor from the model, half clone the base predictor */
  rc = (w->id % 2 == 0) ? hn_predictor_create(shared_model, &pred)
                        : hn_predictor_clone(base_predictor, &pred);
  if (rc != HN_OK) {
    worker_failed(w);
    return NULL;
  }
  for (i = 0; i < NUM_FORWARDS; ++i) checked_forward(w, pred, (i * 7 + w->id) % NUM_VARIANTS);
  /* an error on this thread does not show on the others */
  if (hn_predictor_set_input(pred, "missing", HN_DTYPE_FLOAT32, NULL, 0, NULL, 0) !=
          HN_ERR_NOT_FOUND ||
      strstr(hn_last_error(), "missing") == NULL) {
    ++w->failures;
  }
  hn_predictor_free(pred);
  return NULL;
}

static void test_eight_threads(void) {
  pthread_t threads[NUM_THREADS];
  struct worker workers[NUM_THREADS];
  int i, total = 0;
  int64_t live_before;
  if (!setup_shared_model()) return;
  live_before = live_handles();
  /* this thread's last error must survive the workers' failures */
  HN_EXPECT_ERR(hn_model_load("/nonexistent/main-thread", 0, NULL), HN_ERR_INVALID_ARGUMENT, "");
  for (i = 0; i < NUM_THREADS; ++i) {
    memset(&workers[i], 0, sizeof workers[i]);
    workers[i].id = i;
    HN_EXPECT(pthread_create(&threads[i], NULL, eight_threads_work, &workers[i]) == 0);
  }
  for (i = 0; i < NUM_THREADS; ++i) {
    pthread_join(threads[i], NULL);
    expect_worker(&workers[i], NUM_FORWARDS);
    total += workers[i].forwards;
  }
  HN_EXPECT(total == NUM_THREADS * NUM_FORWARDS);
  HN_EXPECT(hn_last_error_code() == HN_ERR_INVALID_ARGUMENT);
  HN_EXPECT(strstr(hn_last_error(), "hn_model_load") != NULL);
  HN_EXPECT(live_handles() == live_before);
  printf("%d threads x %d forwards: %d results identical to the single-threaded run\n", NUM_THREADS,
         NUM_FORWARDS, total);
}

/* ---- predictors made and freed while others run ------------------------------------------ */

static pthread_barrier_t churn_start;

/* Runners: forwards on their own predictor; runner 0 uses base_predictor itself, which the
 * churners clone meanwhile. */
static void* churn_runner(void* arg) {
  struct worker* w = (struct worker*)arg;
  hn_predictor* pred = NULL;
  int i;
  if (w->id == 0) {
    pred = base_predictor;
  } else if (hn_predictor_create(shared_model, &pred) != HN_OK) {
    worker_failed(w);
  }
  pthread_barrier_wait(&churn_start);
  if (pred == NULL) return NULL;
  for (i = 0; i < NUM_CHURN_FORWARDS; ++i) checked_forward(w, pred, (i + w->id) % NUM_VARIANTS);
  if (pred != base_predictor) hn_predictor_free(pred);
  return NULL;
}

/* Churners: create or clone a predictor, sometimes run it, free it; again and again. */
static void* churn_maker(void* arg) {
  struct worker* w = (struct worker*)arg;
  int i;
  pthread_barrier_wait(&churn_start);
  for (i = 0; i < NUM_CHURN_CYCLES; ++i) {
    hn_predictor* pred = NULL;
    int rc = (i + w->id) % 2 == 0 ? hn_predictor_create(shared_model, &pred)
                                  : hn_predictor_clone(base_predictor, &pred);
    if (rc != HN_OK) {
      worker_failed(w);
      continue;
    }
    if (i % 10 == 0) checked_forward(w, pred, i % NUM_VARIANTS);
    hn_predictor_free(pred);
  }
  return NULL;
}

static void test_predictors_made_and_freed_while_others_run(void) {
  enum { kRunners = NUM_THREADS / 2, kMakers = NUM_THREADS - kRunners };
  pthread_t threads[NUM_THREADS];
  struct worker workers[NUM_THREADS];
  int i;
  int64_t live_before;
  if (base_predictor == NULL) return;
  live_before = live_handles();
  HN_EXPECT(pthread_barrier_init(&churn_start, NULL, NUM_THREADS) == 0);
  for (i = 0; i < NUM_THREADS; ++i) {
    memset(&workers[i], 0, sizeof workers[i]);
    workers[i].id = i < kRunners ? i : i - kRunners;
    HN_EXPECT(pthread_create(&threads[i], NULL, i < kRunners ? churn_runner : churn_maker,
                             &workers[i]) == 0);
  }
  for (i = 0; i < NUM_THREADS; ++i) {
    pthread_join(threads[i], NULL);
    expect_worker(&workers[i], i < kRunners ? NUM_CHURN_FORWARDS : NUM_CHURN_CYCLES / 10);
  }
  pthread_barrier_destroy(&churn_start);
  HN_EXPECT(live_handles() == live_before);
  printf("%d threads x %d forwards while %d threads made and freed %d predictors\n", kRunners,
         NUM_CHURN_FORWARDS, kMakers, kMakers * NUM_CHURN_CYCLES);
}

/* ---- a model freed while its predictors run ---------------------------------------------- */

static hn_model* doomed_model = NULL;
static pthread_barrier_t model_freed_barrier;

static void* after_free_work(void* arg) {
  struct worker* w = (struct worker*)arg;
  hn_predictor* pred = NULL;
  hn_predictor* clone = NULL;
  int i;
  if (hn_predictor_create(doomed_model, &pred) != HN_OK) worker_failed(w);
  if (pred != NULL) checked_forward(w, pred, w->id % NUM_VARIANTS);
  /* after this the main thread frees the model while these forwards run */
  pthread_barrier_wait(&model_freed_barrier);
  if (pred == NULL) return NULL;
  for (i = 0; i < NUM_AFTER_FREE_FORWARDS; ++i) {
    checked_forward(w, pred, (i * 5 + w->id) % NUM_VARIANTS);
    /* odd threads also clone their predictor midway: the clone shares the freed model's data */
    if (w->id % 2 == 1 && i == NUM_AFTER_FREE_FORWARDS / 2) {
      if (hn_predictor_clone(pred, &clone) != HN_OK) {
        worker_failed(w);
      } else {
        hn_predictor_free(pred);
        pred = clone;
      }
    }
  }
  hn_predictor_free(pred);
  return NULL;
}

static void test_model_freed_while_predictors_run(void) {
  pthread_t threads[NUM_THREADS];
  struct worker workers[NUM_THREADS];
  int i;
  int64_t live_before;
  if (base_predictor == NULL) return;
  live_before = live_handles();
  HN_EXPECT_OK(hn_model_load(model_prefix, 0, &doomed_model));
  if (doomed_model == NULL) return;
  HN_EXPECT(pthread_barrier_init(&model_freed_barrier, NULL, NUM_THREADS + 1) == 0);
  for (i = 0; i < NUM_THREADS; ++i) {
    memset(&workers[i], 0, sizeof workers[i]);
    workers[i].id = i;
    HN_EXPECT(pthread_create(&threads[i], NULL, after_free_work, &workers[i]) == 0);
  }
  pthread_barrier_wait(&model_freed_barrier);
  hn_model_free(doomed_model);
  doomed_model = NULL;
  for (i = 0; i < NUM_THREADS; ++i) {
    pthread_join(threads[i], NULL);
    expect_worker(&workers[i], 1 + NUM_AFTER_FREE_FORWARDS);
  }
  pthread_barrier_destroy(&model_freed_barrier);
  HN_EXPECT(live_handles() == live_before);
  printf("model freed while %d threads ran %d forwards each: results unchanged\n", NUM_THREADS,
         NUM_AFTER_FREE_FORWARDS);
}

static void test_teardown(void) {
  hn_predictor_free(base_predictor);
  hn_model_free(shared_model);
  HN_EXPECT(live_handles() == 0);
}

HN_TEST_MAIN(concurrency,
             HN_RUN(test_eight_threads) HN_RUN(test_predictors_made_and_freed_while_others_run)
                 HN_RUN(test_model_freed_while_predictors_run) HN_RUN(test_teardown))
