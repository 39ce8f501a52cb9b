/* The C side of the training-overhead benchmarks of the bindings (bench/java_train_bench.java,
 * bench/r_train_bench.R run it between their own rounds): one training step of the seed MLP
 * (512-256-128-2, ReLU; hybridized) at batch 64 with SoftmaxCrossEntropyLoss and SGD
 * (learning_rate 0.01), through the C API with the calls a binding makes per step: copy the
 * batch in, record the forward and the loss, backward, trainer step, free the step's tensors.
 *
 *   binding_train_bench_c [ROUNDS] [STEPS_PER_ROUND]
 *
 * Prints the CPU model and the OpenBLAS settings ("cpu=...", "openblas=..."), one line per
 * round, "round_us=<microseconds per step>", then "median_us=..." and "loss=<last step's loss
 * sum>". One thread. */
#include <math.h>

#define BENCH_NAME "binding_train_bench_c"
#include "binding_bench_c_common.h"

enum { kBatch = 64, kInputs = 512, kClasses = 2, kMaxParams = 16 };

/* The seed MLP as a HybridSequential of Dense layers with known input sizes. */
static int make_mlp(hn_block** out) {
  static const char* const units[3] = {"256", "128", "2"};
  static const char* const in_units[3] = {"512", "256", "128"};
  static const char* const activations[3] = {"relu", "relu", "None"};
  const char* keys[3] = {"units", "in_units", "activation"};
  if (hn_block_create("HybridSequential", NULL, NULL, 0, out) != HN_OK) return 1;
  for (int i = 0; i < 3; ++i) {
    const char* values[3] = {units[i], in_units[i], activations[i]};
    hn_block* dense = NULL;
    if (hn_block_create("Dense", keys, values, 3, &dense) != HN_OK) return 1;
    int status = hn_block_add(*out, dense);
    hn_block_free(dense); /* the parent keeps it */
    if (status != HN_OK) return 1;
  }
  return 0;
}

/* One step: the batch copied in, forward and loss recorded in train mode, backward, update. */
static int train_step(hn_block* net, hn_block* loss_fn, hn_trainer* trainer, const float* x,
                      const float* labels, float* loss_sum) {
  const int64_t x_shape[2] = {kBatch, kInputs}, label_shape[1] = {kBatch};
  hn_tensor *data = NULL, *label = NULL, *out = NULL, *loss = NULL, *sum = NULL;
  size_t n = 0;
  int status = HN_OK;
  if (hn_tensor_create(HN_DTYPE_FLOAT32, x_shape, 2, x, sizeof(float) * kBatch * kInputs, &data) !=
          HN_OK ||
      hn_tensor_create(HN_DTYPE_FLOAT32, label_shape, 1, labels, sizeof(float) * kBatch, &label) !=
          HN_OK)
    return 1;
  hn_autograd_set_recording(1, NULL);
  hn_autograd_set_training(1, NULL);
  status = hn_block_forward(net, &data, 1, 1, &out, &n);
  if (status == HN_OK) {
    hn_tensor* loss_inputs[2] = {out, label};
    status = hn_block_forward(loss_fn, loss_inputs, 2, 1, &loss, &n);
  }
  hn_autograd_set_recording(0, NULL);
  hn_autograd_set_training(0, NULL);
  if (status == HN_OK) status = hn_autograd_backward(&loss, 1, NULL, 0, 1);
  if (status == HN_OK) status = hn_trainer_step(trainer, kBatch, 0);
  if (status == HN_OK) status = hn_op_invoke("sum", &loss, 1, NULL, NULL, 0, 1, &sum, &n);
  if (status == HN_OK) status = hn_tensor_copy_to(sum, loss_sum, sizeof(float));
  hn_tensor_free(sum);
  hn_tensor_free(loss);
  hn_tensor_free(out);
  hn_tensor_free(label);
  hn_tensor_free(data);
  return status != HN_OK;
}

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 15;
  int steps = argc > 2 ? atoi(argv[2]) : 200;
  if (argc > 3 || rounds < 1 || rounds > 1000 || steps < 1) {
    fprintf(stderr, "usage: binding_train_bench_c [ROUNDS] [STEPS_PER_ROUND]\n");
    return 2;
  }
  hn_block *net = NULL, *loss_fn = NULL;
  hn_optimizer* sgd = NULL;
  hn_trainer* trainer = NULL;
  const char* lr_key[1] = {"learning_rate"};
  const char* lr_value[1] = {"0.01"};
  if (hn_set_num_threads(1) != HN_OK) return fail("hn_set_num_threads");
  if (make_mlp(&net) != 0) return fail("the MLP");
  if (hn_block_initialize(net, "xavier", 42, 0) != HN_OK) return fail("hn_block_initialize");
  if (hn_block_hybridize(net, 1, 0, 0) != HN_OK) return fail("hn_block_hybridize");
  if (hn_block_create("SoftmaxCrossEntropyLoss", NULL, NULL, 0, &loss_fn) != HN_OK)
    return fail("the loss");
  if (hn_optimizer_create("sgd", lr_key, lr_value, 1, &sgd) != HN_OK)
    return fail("hn_optimizer_create");

  size_t num_params = 0;
  hn_block* owners[kMaxParams];
  const char* names[kMaxParams];
  if (hn_block_param_count(net, &num_params) != HN_OK || num_params > kMaxParams)
    return fail("hn_block_param_count");
  for (size_t i = 0; i < num_params; ++i) {
    owners[i] = net;
    if (hn_block_param_info(net, i, &names[i], NULL, NULL, NULL, NULL) != HN_OK)
      return fail("hn_block_param_info");
  }
  if (hn_trainer_create(owners, names, num_params, sgd, &trainer) != HN_OK)
    return fail("hn_trainer_create");
  print_settings();

  static float x[kBatch * kInputs];
  float labels[kBatch], loss_sum = 0.0f;
  for (int i = 0; i < kBatch * kInputs; ++i) x[i] = (float)sin(0.1 * i);
  for (int i = 0; i < kBatch; ++i) labels[i] = (float)(i % kClasses);

  double* per_round = malloc(sizeof(double) * (size_t)rounds);
  if (per_round == NULL) return 1;
  for (int r = -2; r < rounds; ++r) { /* rounds -2 and -1 warm up */
    double start = now_us();
    for (int i = 0; i < steps; ++i) {
      if (train_step(net, loss_fn, trainer, x, labels, &loss_sum) != 0) return fail("step");
    }
    double us = (now_us() - start) / steps;
    if (r >= 0) {
      per_round[r] = us;
      printf("round_us=%.4f\n", us);
    }
  }
  qsort(per_round, (size_t)rounds, sizeof(double), cmp_double);
  printf("median_us=%.4f\n", per_round[rounds / 2]);
  printf("loss=%.9g\n", (double)loss_sum);
  free(per_round);
  hn_trainer_free(trainer);
  hn_optimizer_free(sgd);
  hn_block_free(loss_fn);
  hn_block_free(net);
  return 0;
}
