/* C API: autograd (recording and training flags, marking variables, backward, grad, reading
 * gradients), with NULL handles and bad arguments. */
#include <math.h>

#include "hn_test.h"

static const int64_t kShape3[1] = {3};

static hn_tensor* vector3(float a, float b, float c) {
  float values[3];
  hn_tensor* t = NULL;
  values[0] = a;
  values[1] = b;
  values[2] = c;
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_FLOAT32, kShape3, 1, values, sizeof values, &t));
  return t;
}

static void read3(const hn_tensor* t, float* out) {
  HN_EXPECT_OK(hn_tensor_copy_to(t, out, 3 * sizeof(float)));
}

/* y = op(x) recorded in training mode, the flags restored after. */
static hn_tensor* record_unary(const char* op, hn_tensor* x) {
  hn_tensor* y = NULL;
  size_t n = 0;
  int was_recording = -1, was_training = -1;
  HN_EXPECT_OK(hn_autograd_set_recording(1, &was_recording));
  HN_EXPECT_OK(hn_autograd_set_training(1, &was_training));
  HN_EXPECT_OK(hn_op_invoke(op, &x, 1, NULL, NULL, 0, 1, &y, &n));
  HN_EXPECT_OK(hn_autograd_set_recording(was_recording, NULL));
  HN_EXPECT_OK(hn_autograd_set_training(was_training, NULL));
  return y;
}

static void test_flags(void) {
  int previous = -1, now = -1;
  HN_EXPECT_OK(hn_autograd_is_recording(&now));
  HN_EXPECT(now == 0);
  HN_EXPECT_OK(hn_autograd_set_recording(1, &previous));
  HN_EXPECT(previous == 0);
  HN_EXPECT_OK(hn_autograd_is_recording(&now));
  HN_EXPECT(now == 1);
  HN_EXPECT_OK(hn_autograd_set_recording(0, &previous));
  HN_EXPECT(previous == 1);
  HN_EXPECT_OK(hn_autograd_set_training(1, NULL));
  HN_EXPECT_OK(hn_autograd_is_training(&now));
  HN_EXPECT(now == 1);
  HN_EXPECT_OK(hn_autograd_set_training(0, &previous));
  HN_EXPECT(previous == 1);
  HN_EXPECT_ERR(hn_autograd_set_recording(2, NULL), HN_ERR_INVALID_ARGUMENT, "expected 0 or 1");
  HN_EXPECT_ERR(hn_autograd_set_training(-1, NULL), HN_ERR_INVALID_ARGUMENT, "'training'");
  HN_EXPECT_ERR(hn_autograd_is_recording(NULL), HN_ERR_INVALID_ARGUMENT, "out_recording");
  HN_EXPECT_ERR(hn_autograd_is_training(NULL), HN_ERR_INVALID_ARGUMENT, "out_training");
}

/* hn_autograd_set_flags: the masked flags set, the others left, the previous ones returned. */
static void test_set_flags(void) {
  const int both = HN_AUTOGRAD_RECORDING | HN_AUTOGRAD_TRAINING;
  int previous = -1, now = -1;
  HN_EXPECT_OK(hn_autograd_set_flags(both, both, &previous));
  HN_EXPECT(previous == 0);
  HN_EXPECT_OK(hn_autograd_is_recording(&now));
  HN_EXPECT(now == 1);
  HN_EXPECT_OK(hn_autograd_is_training(&now));
  HN_EXPECT(now == 1);
  /* predict_mode() inside record(): training cleared, recording left as it is */
  HN_EXPECT_OK(hn_autograd_set_flags(0, HN_AUTOGRAD_TRAINING, &previous));
  HN_EXPECT(previous == both);
  HN_EXPECT_OK(hn_autograd_is_recording(&now));
  HN_EXPECT(now == 1);
  HN_EXPECT_OK(hn_autograd_is_training(&now));
  HN_EXPECT(now == 0);
  /* a bit of flags outside the mask is ignored */
  HN_EXPECT_OK(hn_autograd_set_flags(HN_AUTOGRAD_TRAINING, HN_AUTOGRAD_RECORDING, &previous));
  HN_EXPECT(previous == HN_AUTOGRAD_RECORDING);
  HN_EXPECT_OK(hn_autograd_is_recording(&now));
  HN_EXPECT(now == 0);
  HN_EXPECT_OK(hn_autograd_is_training(&now));
  HN_EXPECT(now == 0);
  /* the old setters and this one read and write the same flags */
  HN_EXPECT_OK(hn_autograd_set_training(1, NULL));
  HN_EXPECT_OK(hn_autograd_set_flags(0, 0, &previous));
  HN_EXPECT(previous == HN_AUTOGRAD_TRAINING);
  HN_EXPECT_ERR(hn_autograd_set_flags(4, both, NULL), HN_ERR_INVALID_ARGUMENT, "flags 4");
  HN_EXPECT_ERR(hn_autograd_set_flags(0, -1, NULL), HN_ERR_INVALID_ARGUMENT, "mask -1");
  HN_EXPECT_OK(hn_autograd_set_flags(0, both, NULL));
  HN_EXPECT_OK(hn_autograd_is_training(&now));
  HN_EXPECT(now == 0);
}

/* d/dx exp(x) = exp(x). */
static void test_exp(void) {
  hn_tensor* x = vector3(1.f, 2.f, -0.5f);
  hn_tensor *y, *dx = NULL;
  int write = HN_GRAD_WRITE;
  float got[3], want[3];
  HN_EXPECT_OK(hn_tensor_grad(x, &dx));
  HN_EXPECT(dx == NULL); /* not marked yet */
  HN_EXPECT_OK(hn_autograd_mark_variables(&x, 1, &write, NULL));
  y = record_unary("exp", x);
  HN_EXPECT_OK(hn_autograd_backward(&y, 1, NULL, 0, 1));
  HN_EXPECT_OK(hn_tensor_grad(x, &dx));
  HN_EXPECT(dx != NULL);
  if (dx != NULL) {
    read3(dx, got);
    read3(y, want);
    HN_EXPECT(memcmp(got, want, sizeof got) == 0);
  }
  /* The tape was released: a second backward needs retain_graph. */
  HN_EXPECT_ERR(hn_autograd_backward(&y, 1, NULL, 0, 1), HN_ERR_INVALID_ARGUMENT, "retain_graph");
  hn_tensor_free(dx);
  hn_tensor_free(y);
  hn_tensor_free(x);
}

/* grad_req add with retain_graph: twice the gradient, in the caller's gradient tensor. */
static void test_add_with_head_gradients(void) {
  hn_tensor* x = vector3(1.f, 2.f, 3.f);
  hn_tensor* buffer = vector3(0.f, 0.f, 0.f);
  hn_tensor* head = vector3(1.f, 10.f, 100.f);
  hn_tensor* y;
  int add = HN_GRAD_ADD;
  float got[3];
  HN_EXPECT_OK(hn_autograd_mark_variables(&x, 1, &add, &buffer));
  y = record_unary("square", x);
  HN_EXPECT_OK(hn_autograd_backward(&y, 1, &head, 1, 1));
  HN_EXPECT_OK(hn_autograd_backward(&y, 1, &head, 0, 1));
  read3(buffer, got);
  HN_EXPECT(got[0] == 4.f && got[1] == 80.f && got[2] == 1200.f);
  hn_tensor_free(y);
  hn_tensor_free(head);
  hn_tensor_free(buffer);
  hn_tensor_free(x);
}

static void test_grad_and_detach(void) {
  hn_tensor* x = vector3(0.f, 1.f, 2.f);
  hn_tensor *y, *detached = NULL, *dx = NULL, *buffer = NULL;
  int write = HN_GRAD_WRITE;
  float got[3];
  HN_EXPECT_OK(hn_autograd_mark_variables(&x, 1, &write, NULL));
  y = record_unary("sigmoid", x);
  HN_EXPECT_OK(hn_autograd_grad(&y, 1, NULL, &x, 1, 1, 1, &dx));
  read3(dx, got);
  HN_EXPECT(fabsf(got[0] - 0.25f) < 1e-6f && fabsf(got[1] - 0.19661193f) < 1e-6f);
  /* grad leaves the buffer alone */
  HN_EXPECT_OK(hn_tensor_grad(x, &buffer));
  read3(buffer, got);
  HN_EXPECT(got[0] == 0.f && got[1] == 0.f && got[2] == 0.f);
  /* a detached tensor is not on the tape */
  HN_EXPECT_OK(hn_tensor_detach(y, &detached));
  HN_EXPECT_ERR(hn_autograd_backward(&detached, 1, NULL, 0, 1), HN_ERR_INVALID_ARGUMENT,
                "not on a recorded graph");
  HN_EXPECT_ERR(hn_autograd_grad(&y, 1, NULL, &detached, 1, 0, 1, &dx), HN_ERR_INVALID_ARGUMENT,
                "not marked");
  hn_tensor_free(buffer);
  hn_tensor_free(detached);
  hn_tensor_free(dx);
  hn_tensor_free(y);
  hn_tensor_free(x);
}

/* create_graph: d2/dx2 exp(x) = exp(x), through a second backward of the recorded gradient */
static void test_second_order(void) {
  hn_tensor* x = vector3(0.f, 1.f, -1.f);
  hn_tensor *y, *dx = NULL, *buffer = NULL;
  int write = HN_GRAD_WRITE;
  float want[3], got[3];
  HN_EXPECT_OK(hn_autograd_mark_variables(&x, 1, &write, NULL));
  y = record_unary("exp", x);
  HN_EXPECT_OK(hn_autograd_grad_v2(&y, 1, NULL, &x, 1, 1, 1, 1, &dx));
  HN_EXPECT_OK(hn_autograd_backward(&dx, 1, NULL, 0, 1));
  HN_EXPECT_OK(hn_tensor_grad(x, &buffer));
  read3(y, want);
  read3(buffer, got);
  HN_EXPECT(got[0] == want[0] && got[1] == want[1] && got[2] == want[2]);
  HN_EXPECT_ERR(hn_autograd_grad_v2(&y, 1, NULL, &x, 1, 1, 1, 2, &dx), HN_ERR_INVALID_ARGUMENT,
                "create_graph");
  hn_tensor_free(buffer);
  hn_tensor_free(dx);
  hn_tensor_free(y);
  hn_tensor_free(x);
}

static void test_errors(void) {
  hn_tensor* x = vector3(1.f, 2.f, 3.f);
  hn_tensor* wrong = NULL;
  hn_tensor *y, *out = NULL;
  hn_tensor* nulls[1] = {NULL};
  int64_t shape2[1] = {2};
  int write = HN_GRAD_WRITE, bad_req = 2, null_req = HN_GRAD_NULL;
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_FLOAT32, shape2, 1, NULL, 0, &wrong));
  HN_EXPECT_ERR(hn_autograd_mark_variables(NULL, 1, &write, NULL), HN_ERR_INVALID_ARGUMENT,
                "'variables'");
  HN_EXPECT_ERR(hn_autograd_mark_variables(nulls, 1, &write, NULL), HN_ERR_INVALID_ARGUMENT,
                "variables[0] is NULL");
  HN_EXPECT_ERR(hn_autograd_mark_variables(&x, 1, NULL, NULL), HN_ERR_INVALID_ARGUMENT,
                "'grad_reqs'");
  HN_EXPECT_ERR(hn_autograd_mark_variables(&x, 1, &bad_req, NULL), HN_ERR_INVALID_ARGUMENT,
                "grad_reqs[0] is 2");
  HN_EXPECT_ERR(hn_autograd_mark_variables(&x, 1, &write, &wrong), HN_ERR_SHAPE, "(2,)");
  HN_EXPECT_ERR(hn_autograd_backward(NULL, 1, NULL, 0, 1), HN_ERR_INVALID_ARGUMENT, "'heads'");
  HN_EXPECT_ERR(hn_autograd_backward(&x, 0, NULL, 0, 1), HN_ERR_INVALID_ARGUMENT, "num_heads");
  HN_EXPECT_ERR(hn_autograd_backward(nulls, 1, NULL, 0, 1), HN_ERR_INVALID_ARGUMENT,
                "heads[0] is NULL");
  HN_EXPECT_ERR(hn_autograd_backward(&x, 1, NULL, 0, 1), HN_ERR_INVALID_ARGUMENT,
                "not on a recorded graph");
  HN_EXPECT_ERR(hn_autograd_grad(&x, 1, NULL, &x, 1, 0, 1, NULL), HN_ERR_INVALID_ARGUMENT,
                "out_grads");
  HN_EXPECT_ERR(hn_tensor_grad(NULL, &out), HN_ERR_INVALID_ARGUMENT, "'tensor' is NULL");
  HN_EXPECT_ERR(hn_tensor_grad(x, NULL), HN_ERR_INVALID_ARGUMENT, "'out'");
  HN_EXPECT_ERR(hn_tensor_detach(NULL, &out), HN_ERR_INVALID_ARGUMENT, "'tensor' is NULL");

  /* only a grad_req null variable: nothing wants a gradient */
  HN_EXPECT_OK(hn_autograd_mark_variables(&x, 1, &null_req, NULL));
  y = record_unary("exp", x);
  HN_EXPECT_ERR(hn_autograd_backward(&y, 1, NULL, 2, 1), HN_ERR_INVALID_ARGUMENT, "retain_graph");
  HN_EXPECT_ERR(hn_autograd_backward(&y, 1, NULL, 1, 1), HN_ERR_INVALID_ARGUMENT, "grad_req null");
  /* an op without a gradient is named */
  HN_EXPECT_OK(hn_autograd_mark_variables(&x, 1, &write, NULL));
  hn_tensor_free(y);
  y = record_unary("argsort", x);
  HN_EXPECT_ERR(hn_autograd_backward(&y, 1, NULL, 0, 1), HN_ERR_UNSUPPORTED,
                "backward reached op argsort");
  hn_tensor_free(y);
  hn_tensor_free(wrong);
  hn_tensor_free(x);
}

HN_TEST_MAIN(autograd, HN_RUN(test_flags) HN_RUN(test_set_flags) HN_RUN(test_exp)
                           HN_RUN(test_add_with_head_gradients) HN_RUN(test_grad_and_detach)
                               HN_RUN(test_second_order) HN_RUN(test_errors))
