/* C API: optimizers and learning-rate schedulers (creation errors, states, updates against hand
 * computed SGD with momentum, learning rate, multipliers, counts, schedulers). */
#include <math.h>
#include <string.h>

#include "hn_test.h"

static const int64_t kShape2[1] = {2};

static hn_tensor* vector2(float a, float b) {
  float values[2];
  hn_tensor* t = NULL;
  values[0] = a;
  values[1] = b;
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_FLOAT32, kShape2, 1, values, sizeof values, &t));
  return t;
}

static int near(float a, float b) { return fabsf(a - b) <= 1e-6f + 1e-5f * fabsf(b); }

static hn_optimizer* sgd(void) {
  const char* keys[3] = {"learning_rate", "momentum", "wd"};
  const char* values[3] = {"0.1", "0.9", "0.01"};
  hn_optimizer* opt = NULL;
  HN_EXPECT_OK(hn_optimizer_create("SGD", keys, values, 3, &opt));
  return opt;
}

static void test_create_errors(void) {
  const char* bad_key[1] = {"momentun"};
  const char* value[1] = {"0.9"};
  const char* bad_value[1] = {"fast"};
  const char* lr_key[1] = {"learning_rate"};
  hn_optimizer* opt = NULL;
  hn_lr_scheduler* sched = NULL;
  HN_EXPECT_ERR(hn_optimizer_create("sgdd", NULL, NULL, 0, &opt), HN_ERR_NOT_FOUND, "adam");
  HN_EXPECT_ERR(hn_optimizer_create("sgd", bad_key, value, 1, &opt), HN_ERR_INVALID_ARGUMENT,
                "momentum");
  HN_EXPECT_ERR(hn_optimizer_create("sgd", lr_key, bad_value, 1, &opt), HN_ERR_INVALID_ARGUMENT,
                "'fast'");
  HN_EXPECT_ERR(hn_optimizer_create(NULL, NULL, NULL, 0, &opt), HN_ERR_INVALID_ARGUMENT, "name");
  HN_EXPECT_ERR(hn_optimizer_create("sgd", NULL, NULL, 1, &opt), HN_ERR_INVALID_ARGUMENT,
                "num_params");
  HN_EXPECT(opt == NULL);
  HN_EXPECT_ERR(hn_lr_scheduler_create("factor", NULL, NULL, 0, &sched), HN_ERR_INVALID_ARGUMENT,
                "'step' is required");
  HN_EXPECT_ERR(hn_lr_scheduler_create("linear", NULL, NULL, 0, &sched), HN_ERR_NOT_FOUND,
                "cosine");
  hn_optimizer_free(NULL);
  hn_lr_scheduler_free(NULL);
}

/* Two steps of SGD with momentum, by hand: mom = 0.9 mom - 0.1 (0.01 w + g); w += mom. */
static void test_sgd_momentum(void) {
  hn_optimizer* opt = sgd();
  hn_tensor* w = vector2(1.f, -2.f);
  hn_tensor* g = vector2(0.5f, 0.25f);
  hn_tensor* states[2] = {NULL, NULL};
  size_t num_states = 0;
  int index = 3, num_update = 0, count = 0;
  float got[2], mom[2], expect_w[2] = {1.f, -2.f}, expect_mom[2] = {0.f, 0.f};
  const float grad[2] = {0.5f, 0.25f};
  char* structure = NULL;
  int step, i;
  HN_EXPECT_OK(hn_optimizer_create_state(opt, index, w, 2, states, &num_states));
  HN_EXPECT(num_states == 1);
  HN_EXPECT_OK(hn_optimizer_state_structure(opt, w, &structure));
  HN_EXPECT(structure != NULL && strcmp(structure, "0") == 0);
  hn_string_free(structure);
  for (step = 0; step < 2; ++step) {
    HN_EXPECT_OK(hn_optimizer_update(opt, &index, &w, &g, 1, states, &num_states));
    for (i = 0; i < 2; ++i) {
      expect_mom[i] = 0.9f * expect_mom[i] - 0.1f * 0.01f * expect_w[i] - 0.1f * grad[i];
      expect_w[i] += expect_mom[i];
    }
  }
  HN_EXPECT_OK(hn_tensor_copy_to(w, got, sizeof got));
  HN_EXPECT_OK(hn_tensor_copy_to(states[0], mom, sizeof mom));
  HN_EXPECT(near(got[0], expect_w[0]) && near(got[1], expect_w[1]));
  HN_EXPECT(near(mom[0], expect_mom[0]) && near(mom[1], expect_mom[1]));
  HN_EXPECT_OK(hn_optimizer_update_count(opt, index, &num_update, &count));
  HN_EXPECT(num_update == 2 && count == 2);
  HN_EXPECT_OK(hn_optimizer_update_count(opt, 7, &num_update, &count));
  HN_EXPECT(count == 0);
  /* a missing state is named */
  HN_EXPECT_ERR(hn_optimizer_update(opt, &index, &w, &g, 1, states, &(size_t){0}),
                HN_ERR_INVALID_ARGUMENT, "keeps 1");
  hn_tensor_free(states[0]);
  hn_tensor_free(g);
  hn_tensor_free(w);
  hn_optimizer_free(opt);
}

/* lr_mult 0 freezes a weight; set_learning_rate; rescale_grad; params text. */
static void test_rates(void) {
  hn_optimizer* opt = sgd();
  hn_tensor* w = vector2(1.f, 2.f);
  hn_tensor* g = vector2(1.f, 1.f);
  hn_tensor* state = NULL;
  size_t num_states = 0;
  int index = 0;
  float lr = 0.f, got[2], zero = 0.f, rescale = 0.f;
  char* params = NULL;
  HN_EXPECT_OK(hn_optimizer_create_state(opt, index, w, 1, &state, &num_states));
  HN_EXPECT_OK(hn_optimizer_set_lr_mult(opt, &index, &zero, 1));
  HN_EXPECT_OK(hn_optimizer_set_wd_mult(opt, &index, &zero, 1));
  HN_EXPECT_OK(hn_optimizer_update(opt, &index, &w, &g, 1, &state, &num_states));
  HN_EXPECT_OK(hn_tensor_copy_to(w, got, sizeof got));
  HN_EXPECT(got[0] == 1.f && got[1] == 2.f);
  HN_EXPECT_OK(hn_optimizer_get_learning_rate(opt, &lr));
  HN_EXPECT(near(lr, 0.1f));
  HN_EXPECT_OK(hn_optimizer_set_learning_rate(opt, 0.5f));
  HN_EXPECT_OK(hn_optimizer_get_learning_rate(opt, &lr));
  HN_EXPECT(lr == 0.5f);
  HN_EXPECT_OK(hn_optimizer_set_rescale_grad(opt, 0.25f));
  HN_EXPECT_OK(hn_optimizer_get_rescale_grad(opt, &rescale));
  HN_EXPECT(rescale == 0.25f);
  HN_EXPECT_OK(hn_optimizer_params(opt, &params));
  HN_EXPECT(params != NULL && strstr(params, "class=SGD\n") != NULL &&
            strstr(params, "momentum=0.9\n") != NULL && strstr(params, "lr=0.5\n") != NULL);
  hn_string_free(params);
  hn_tensor_free(state);
  hn_tensor_free(g);
  hn_tensor_free(w);
  hn_optimizer_free(opt);
}

/* FactorScheduler with linear warmup, shared by an optimizer, which then refuses
 * set_learning_rate. */
static void test_scheduler(void) {
  const char* keys[4] = {"step", "factor", "base_lr", "warmup_steps"};
  const char* values[4] = {"10", "0.5", "1.0", "4"};
  hn_lr_scheduler* sched = NULL;
  hn_optimizer* opt = sgd();
  float lr = 0.f;
  HN_EXPECT_OK(hn_lr_scheduler_create("FactorScheduler", keys, values, 4, &sched));
  HN_EXPECT_OK(hn_lr_scheduler_get(sched, 2, &lr));
  HN_EXPECT(near(lr, 0.5f)); /* warmup from 0 to 1 over 4 updates */
  HN_EXPECT_OK(hn_lr_scheduler_get(sched, 10, &lr));
  HN_EXPECT(near(lr, 1.f));
  HN_EXPECT_OK(hn_lr_scheduler_get(sched, 25, &lr));
  HN_EXPECT(near(lr, 0.25f));
  HN_EXPECT_OK(hn_optimizer_set_lr_scheduler(opt, sched));
  hn_lr_scheduler_free(sched);
  HN_EXPECT_ERR(hn_optimizer_set_learning_rate(opt, 0.1f), HN_ERR_INVALID_ARGUMENT, "lr_scheduler");
  HN_EXPECT_OK(hn_optimizer_get_learning_rate(opt, &lr));
  HN_EXPECT(near(lr, 0.f)); /* update count 0: the start of the warmup */
  HN_EXPECT_OK(hn_optimizer_set_lr_scheduler(opt, NULL));
  HN_EXPECT_OK(hn_optimizer_set_learning_rate(opt, 0.1f));
  hn_optimizer_free(opt);
}

HN_TEST_MAIN(optimizer, HN_RUN(test_create_errors) HN_RUN(test_sgd_momentum) HN_RUN(test_rates)
                            HN_RUN(test_scheduler))
