/* C API: parameter gradients and attributes (hn_block_param_grad/set_attr/get_attr/zero_grad)
 * and the trainer (hn_trainer_*): an SGD step checked by hand, the stale-gradient error, frozen
 * parameters, .states files saved, reloaded and refused, NULL handles. */
#include <math.h>
#include <string.h>

#include "hn_test.h"

static const int64_t kShape[2] = {2, 3};

static hn_block* dense(void) {
  const char* keys[3] = {"units", "in_units", "prefix"};
  const char* values[3] = {"2", "3", "fc_"};
  hn_block* b = NULL;
  HN_EXPECT_OK(hn_block_create("Dense", keys, values, 3, &b));
  HN_EXPECT_OK(hn_block_param_initialize(b, NULL, "xavier", 0));
  return b;
}

static hn_tensor* input(void) {
  float values[6] = {0.5f, -1.f, 2.f, 0.25f, 1.5f, -0.75f};
  hn_tensor* t = NULL;
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_FLOAT32, kShape, 2, values, sizeof values, &t));
  return t;
}

/* A recorded forward of `b` on `x` and a backward of its output (head gradient ones). */
static void forward_backward(hn_block* b, hn_tensor* x) {
  hn_tensor* y = NULL;
  size_t n = 0;
  int previous = 0;
  HN_EXPECT_OK(hn_autograd_set_recording(1, &previous));
  HN_EXPECT_OK(hn_block_forward(b, &x, 1, 1, &y, &n));
  HN_EXPECT_OK(hn_autograd_set_recording(previous, NULL));
  HN_EXPECT_OK(hn_autograd_backward(&y, 1, NULL, 0, 1));
  hn_tensor_free(y);
}

static void read6(hn_block* b, const char* name, int grad, float* out) {
  hn_tensor* t = NULL;
  if (grad) {
    HN_EXPECT_OK(hn_block_param_grad(b, name, &t));
  } else {
    HN_EXPECT_OK(hn_block_param_data(b, name, &t));
  }
  HN_EXPECT_OK(hn_tensor_copy_to(t, out, 6 * sizeof(float)));
  hn_tensor_free(t);
}

static hn_trainer* sgd_trainer(hn_block* b, const char* lr) {
  const char* keys[1] = {"learning_rate"};
  const char* values[1] = {lr};
  hn_block* blocks[2] = {b, b};
  const char* names[2] = {"fc_weight", "fc_bias"};
  hn_optimizer* opt = NULL;
  hn_trainer* trainer = NULL;
  HN_EXPECT_OK(hn_optimizer_create("sgd", keys, values, 1, &opt));
  HN_EXPECT_OK(hn_trainer_create(blocks, names, 2, opt, &trainer));
  hn_optimizer_free(opt); /* the trainer shares it */
  return trainer;
}

static void test_param_attributes(void) {
  hn_block* b = dense();
  char* text = NULL;
  HN_EXPECT_OK(hn_block_param_get_attr(b, "fc_weight", "grad_req", &text));
  HN_EXPECT(strcmp(text, "write") == 0);
  hn_string_free(text);
  HN_EXPECT_OK(hn_block_param_set_attr(b, "fc_weight", "lr_mult", "0.5"));
  HN_EXPECT_OK(hn_block_param_get_attr(b, "fc_weight", "lr_mult", &text));
  HN_EXPECT(strcmp(text, "0.5") == 0);
  hn_string_free(text);
  HN_EXPECT_OK(hn_block_param_set_attr(b, NULL, "grad_req", "null"));
  HN_EXPECT_OK(hn_block_param_get_attr(b, "fc_bias", "grad_req", &text));
  HN_EXPECT(strcmp(text, "null") == 0);
  hn_string_free(text);
  {
    hn_tensor* g = NULL;
    HN_EXPECT_ERR(hn_block_param_grad(b, "fc_bias", &g), HN_ERR_INVALID_ARGUMENT,
                  "grad_req is 'null'");
  }
  HN_EXPECT_ERR(hn_block_param_set_attr(b, "fc_bias", "grad_req", "sometimes"),
                HN_ERR_INVALID_ARGUMENT, "'write', 'add', 'null'");
  HN_EXPECT_ERR(hn_block_param_set_attr(b, "fc_bias", "lr_mult", "fast"), HN_ERR_INVALID_ARGUMENT,
                "lr_mult");
  HN_EXPECT_ERR(hn_block_param_set_attr(b, "fc_bias", "color", "red"), HN_ERR_NOT_FOUND,
                "grad_req, lr_mult, wd_mult");
  HN_EXPECT_ERR(hn_block_param_get_attr(b, "fc_nothing", "grad_req", &text), HN_ERR_NOT_FOUND,
                "fc_nothing");
  HN_EXPECT_ERR(hn_block_param_zero_grad(NULL, NULL), HN_ERR_INVALID_ARGUMENT, "block");
  hn_block_free(b);
}

/* w1 = w0 - lr * grad / batch_size, and the gradient stays as backward wrote it. */
static void test_sgd_step_and_stale_gradient(void) {
  hn_block* b = dense();
  hn_tensor* x = input();
  hn_trainer* trainer = sgd_trainer(b, "0.5");
  float w0[6], g[6], w1[6], w2[6], lr = 0.f;
  int i;
  forward_backward(b, x);
  read6(b, "fc_weight", 0, w0);
  read6(b, "fc_weight", 1, g);
  HN_EXPECT_OK(hn_trainer_step(trainer, 2, 0));
  read6(b, "fc_weight", 0, w1);
  for (i = 0; i < 6; ++i) HN_EXPECT(fabsf(w1[i] - (w0[i] - 0.5f * g[i] / 2.f)) <= 1e-6f);
  HN_EXPECT_ERR(hn_trainer_step(trainer, 2, 0), HN_ERR_INVALID_ARGUMENT,
                "has not been updated by backward");
  HN_EXPECT_OK(hn_trainer_step(trainer, 2, 1));
  read6(b, "fc_weight", 0, w2);
  HN_EXPECT(memcmp(w1, w2, sizeof w1) == 0);
  HN_EXPECT_ERR(hn_trainer_step(trainer, 2, 7), HN_ERR_INVALID_ARGUMENT, "ignore_stale_grad");
  HN_EXPECT_ERR(hn_trainer_step(trainer, 0, 0), HN_ERR_INVALID_ARGUMENT, "batch_size");
  HN_EXPECT_OK(hn_trainer_allreduce_grads(trainer));
  HN_EXPECT_OK(hn_trainer_get_learning_rate(trainer, &lr));
  HN_EXPECT(fabsf(lr - 0.5f) < 1e-7f);
  HN_EXPECT_OK(hn_trainer_set_learning_rate(trainer, 0.125f));
  HN_EXPECT_OK(hn_trainer_get_learning_rate(trainer, &lr));
  HN_EXPECT(lr == 0.125f);
  HN_EXPECT_OK(hn_block_param_zero_grad(b, NULL));
  read6(b, "fc_weight", 1, g);
  for (i = 0; i < 6; ++i) HN_EXPECT(g[i] == 0.f);
  hn_trainer_free(trainer);
  hn_tensor_free(x);
  hn_block_free(b);
}

static void test_states_files(void) {
  const char* path = HN_TEST_TMPDIR "/trainer.states";
  const char* junk_path = HN_TEST_TMPDIR "/trainer_junk.states";
  hn_block* b = dense();
  hn_tensor* x = input();
  const char* keys[2] = {"learning_rate", "momentum"};
  const char* values[2] = {"0.1", "0.9"};
  hn_block* blocks[2] = {b, b};
  const char* names[2] = {"fc_bias", "fc_weight"};
  hn_optimizer* opt = NULL;
  hn_optimizer* current = NULL;
  hn_trainer* trainer = NULL;
  hn_trainer* adam = NULL;
  int num_update = 0, count = 0;
  FILE* junk = NULL;
  HN_EXPECT_OK(hn_optimizer_create("sgd", keys, values, 2, &opt));
  HN_EXPECT_OK(hn_trainer_create(blocks, names, 2, opt, &trainer));
  forward_backward(b, x);
  HN_EXPECT_OK(hn_trainer_step(trainer, 2, 0));
  HN_EXPECT_OK(hn_trainer_save_states(trainer, path));
  HN_EXPECT_OK(hn_trainer_load_states(trainer, path));
  HN_EXPECT_OK(hn_trainer_optimizer(trainer, &current));
  HN_EXPECT_OK(hn_optimizer_update_count(current, 0, &num_update, &count));
  HN_EXPECT(num_update == 1 && count == 1);
  /* another optimizer's file, junk, a missing file: refused, nothing changes */
  hn_optimizer_free(opt); /* the trainer shares it */
  HN_EXPECT_OK(hn_optimizer_create("adam", NULL, NULL, 0, &opt));
  HN_EXPECT_OK(hn_trainer_create(blocks, names, 2, opt, &adam));
  HN_EXPECT_ERR(hn_trainer_load_states(adam, path), HN_ERR_INVALID_ARGUMENT, "SGD");
  junk = fopen(junk_path, "wb");
  HN_EXPECT(junk != NULL);
  if (junk) {
    fputs("\x80\x04not a pickle", junk);
    fclose(junk);
  }
  HN_EXPECT_ERR(hn_trainer_load_states(adam, junk_path), HN_ERR_FORMAT, "trainer_junk.states");
  HN_EXPECT_ERR(hn_trainer_load_states(adam, HN_TEST_TMPDIR "/missing.states"), HN_ERR_IO,
                "missing.states");
  HN_EXPECT_ERR(hn_trainer_save_states(NULL, path), HN_ERR_INVALID_ARGUMENT, "trainer");
  {
    const char* unknown[1] = {"fc_gamma"};
    hn_trainer* t = NULL;
    HN_EXPECT_ERR(hn_trainer_create(blocks, unknown, 1, opt, &t), HN_ERR_NOT_FOUND, "fc_gamma");
    HN_EXPECT_ERR(hn_trainer_create(blocks, names, 2, NULL, &t), HN_ERR_INVALID_ARGUMENT,
                  "optimizer");
    HN_EXPECT(t == NULL);
  }
  hn_optimizer_free(opt);
  hn_optimizer_free(current);
  hn_trainer_free(adam);
  hn_trainer_free(trainer);
  hn_trainer_free(NULL);
  hn_tensor_free(x);
  hn_block_free(b);
}

HN_TEST_MAIN(trainer, HN_RUN(test_param_attributes) HN_RUN(test_sgd_step_and_stale_gradient)
                          HN_RUN(test_states_files))
