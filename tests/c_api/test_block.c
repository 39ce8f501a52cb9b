/* C API: Gluon blocks (create every layer, add, initialize, forward, hybridize, export,
 * save/load parameters, import, lambdas). */
#include <math.h>

#include "hn_test.h"

static hn_block* create(const char* kind, const char** keys, const char** values, size_t n) {
  hn_block* b = NULL;
  HN_EXPECT_OK(hn_block_create(kind, keys, values, n, &b));
  return b;
}

static hn_block* dense(const char* units, const char* activation) {
  const char* keys[2] = {"units", "activation"};
  const char* values[2];
  values[0] = units;
  values[1] = activation;
  return create("Dense", keys, values, activation != NULL ? 2 : 1);
}

/* HybridSequential(Dense(16, relu), Dense(4)), initialized with xavier, seed 7. */
static hn_block* make_mlp(void) {
  hn_block* net = create("HybridSequential", NULL, NULL, 0);
  hn_block* d1 = dense("16", "relu");
  hn_block* d2 = dense("4", NULL);
  HN_EXPECT_OK(hn_block_add(net, d1));
  HN_EXPECT_OK(hn_block_add(net, d2));
  hn_block_free(d1); /* the container keeps its children alive */
  hn_block_free(d2);
  HN_EXPECT_OK(hn_block_initialize(net, "xavier", 7, 0));
  return net;
}

static hn_tensor* input(int64_t batch, int64_t features) {
  hn_tensor* t = NULL;
  int64_t shape[2];
  float* data = NULL;
  int64_t i;
  shape[0] = batch;
  shape[1] = features;
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_FLOAT32, shape, 2, NULL, 0, &t));
  HN_EXPECT_OK(hn_tensor_data(t, (void**)&data));
  for (i = 0; data != NULL && i < batch * features; ++i)
    data[i] = (float)((i * 7) % 11) / 5.f - 1.f;
  return t;
}

static hn_tensor* forward1(hn_block* b, hn_tensor* x) {
  hn_tensor* out[2] = {NULL, NULL};
  size_t n = 0;
  HN_EXPECT_OK(hn_block_forward(b, &x, 1, 2, out, &n));
  HN_EXPECT(n == 1);
  return out[0];
}

/* Largest absolute difference of two float32 tensors of equal size (INFINITY otherwise). */
static float max_diff(hn_tensor* a, hn_tensor* b) {
  int64_t na = -1, nb = -2, i;
  float *pa = NULL, *pb = NULL, worst = 0.f;
  if (a == NULL || b == NULL) return INFINITY;
  hn_tensor_size(a, &na);
  hn_tensor_size(b, &nb);
  if (na != nb || hn_tensor_data(a, (void**)&pa) != HN_OK ||
      hn_tensor_data(b, (void**)&pb) != HN_OK)
    return INFINITY;
  for (i = 0; i < na; ++i) {
    float d = fabsf(pa[i] - pb[i]);
    if (d > worst) worst = d;
  }
  return worst;
}

static void test_mlp_eager_and_hybridized(void) {
  hn_block* net = make_mlp();
  hn_tensor* x = input(3, 8);
  hn_tensor* eager = forward1(net, x);
  hn_tensor* hybrid;
  hn_tensor* again;
  const int64_t* dims;
  int ndim = 0;
  const char* name = NULL;
  char* text = NULL;
  HN_EXPECT_OK(hn_tensor_shape(eager, &dims, &ndim));
  HN_EXPECT(ndim == 2 && dims[0] == 3 && dims[1] == 4);
  HN_EXPECT_OK(hn_block_name(net, &name));
  HN_EXPECT(name != NULL && strncmp(name, "hybridsequential", 16) == 0);
  HN_EXPECT_OK(hn_block_to_string(net, &text));
  HN_EXPECT(text != NULL && strstr(text, "Dense(8 -> 16, Activation(relu))") != NULL);
  hn_string_free(text);
  HN_EXPECT_OK(hn_block_hybridize(net, 1, 0, 0));
  hybrid = forward1(net, x);
  again = forward1(net, x);
  HN_EXPECT(max_diff(eager, hybrid) <= 1e-6f);
  HN_EXPECT(max_diff(hybrid, again) == 0.f);
  hn_tensor_free(again);
  HN_EXPECT_OK(hn_block_hybridize(net, 1, 1, 1)); /* static_alloc + static_shape */
  again = forward1(net, x);
  HN_EXPECT(max_diff(hybrid, again) == 0.f);
  hn_tensor_free(again);
  HN_EXPECT_OK(hn_block_hybridize(net, 0, 0, 0));
  again = forward1(net, x);
  HN_EXPECT(max_diff(eager, again) == 0.f);
  HN_EXPECT_ERR(hn_block_hybridize(net, 1, 0, 1), HN_ERR_INVALID_ARGUMENT, "static_alloc");
  hn_tensor_free(again);
  hn_tensor_free(hybrid);
  hn_tensor_free(eager);
  hn_tensor_free(x);
  hn_block_free(net);
}

static void test_every_layer(void) {
  hn_block* seq = create("HybridSequential", (const char*[]){"prefix"}, (const char*[]){"net_"}, 1);
  hn_block* flat = create("Flatten", NULL, NULL, 0);
  hn_block* fc = create("Dense",
                        (const char*[]){"units", "use_bias", "flatten", "in_units",
                                        "weight_initializer", "bias_initializer"},
                        (const char*[]){"3", "False", "True", "8", "ones", "zeros"}, 6);
  hn_block* act = create("Activation", (const char*[]){"activation"}, (const char*[]){"tanh"}, 1);
  hn_block* act2 = create("Activation", (const char*[]){"act_type"}, (const char*[]){"sigmoid"}, 1);
  hn_block* drop = create("Dropout", (const char*[]){"rate"}, (const char*[]){"0.5"}, 1);
  hn_tensor_list* params = NULL;
  hn_tensor* x = NULL;
  hn_tensor* y = NULL;
  int64_t shape[3] = {2, 2, 4};
  float ones[16];
  float out[6];
  const char* name = NULL;
  size_t count = 0;
  int i;
  for (i = 0; i < 16; ++i) ones[i] = 0.125f;
  HN_EXPECT_OK(hn_block_add(seq, flat));
  HN_EXPECT_OK(hn_block_add(seq, fc));
  HN_EXPECT_OK(hn_block_add(seq, act));
  HN_EXPECT_OK(hn_block_add(seq, act2));
  HN_EXPECT_OK(hn_block_add(seq, drop));
  HN_EXPECT_OK(hn_block_initialize(seq, NULL, 1, 0));
  HN_EXPECT_OK(hn_block_collect_params(seq, &params));
  HN_EXPECT_OK(hn_tensor_list_size(params, &count));
  HN_EXPECT(count == 1); /* in_units given: the weight is drawn at initialize */
  HN_EXPECT_OK(hn_tensor_list_name(params, 0, &name));
  HN_EXPECT(strcmp(name, "net_dense0_weight") == 0);
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_FLOAT32, shape, 3, ones, sizeof ones, &x));
  y = forward1(seq, x);
  HN_EXPECT_OK(hn_tensor_copy_to(y, out, sizeof out));
  /* flatten -> 8 inputs of 0.125 with weights 1 -> 1.0 -> tanh -> sigmoid; dropout = identity */
  HN_EXPECT(fabsf(out[0] - 1.f / (1.f + expf(-tanhf(1.f)))) < 1e-6f);
  HN_EXPECT(out[5] == out[0]);
  hn_tensor_free(y);
  hn_tensor_free(x);
  hn_tensor_list_free(params);
  hn_block_free(flat);
  hn_block_free(fc);
  hn_block_free(act);
  hn_block_free(act2);
  hn_block_free(drop);
  hn_block_free(seq);
}

static void test_deferred_initialization(void) {
  hn_block* d = dense("5", NULL);
  hn_tensor_list* params = NULL;
  hn_tensor* x = input(2, 3);
  hn_tensor* y;
  size_t count = 9;
  HN_EXPECT_OK(hn_block_initialize(d, "normal", 3, 0));
  HN_EXPECT_OK(hn_block_collect_params(d, &params));
  HN_EXPECT_OK(hn_tensor_list_size(params, &count));
  HN_EXPECT(count == 1); /* the bias; the weight waits for the input width */
  hn_tensor_list_free(params);
  y = forward1(d, x);
  HN_EXPECT_OK(hn_block_collect_params(d, &params));
  HN_EXPECT_OK(hn_tensor_list_size(params, &count));
  HN_EXPECT(count == 2);
  hn_tensor_list_free(params);
  hn_tensor_free(y);
  hn_tensor_free(x);
  /* once the width is known, another width is a shape error naming the layer */
  x = input(2, 7);
  HN_EXPECT_ERR(hn_block_forward(d, &x, 1, 1, &y, &count), HN_ERR_SHAPE, "");
  hn_tensor_free(x);
  hn_block_free(d);
}

static void test_same_seed_same_weights(void) {
  /* Deferred parameters are drawn at the first forward: initialize and run each net in turn. */
  hn_tensor* x = input(1, 8);
  hn_block* a = make_mlp();
  hn_tensor* ya = forward1(a, x);
  hn_block* b = make_mlp();
  hn_tensor* yb = forward1(b, x);
  HN_EXPECT(max_diff(ya, yb) == 0.f);
  HN_EXPECT_OK(hn_block_initialize(b, "uniform", 8, 1)); /* force_reinit: new weights */
  hn_tensor_free(yb);
  yb = forward1(b, x);
  HN_EXPECT(max_diff(ya, yb) > 0.f);
  hn_tensor_free(ya);
  hn_tensor_free(yb);
  hn_tensor_free(x);
  hn_block_free(a);
  hn_block_free(b);
}

static void test_export_import_and_parameters(void) {
  hn_block* net = make_mlp();
  hn_block* copy = make_mlp();
  hn_block* imported = NULL;
  hn_block* wrong = NULL;
  hn_tensor* x = input(2, 8);
  hn_tensor *y, *y_copy, *y_imported;
  hn_symbol* traced = NULL;
  char prefix[512], sym_file[512], params_file[512], saved[512], sym_only[512];
  const char* data_name[1] = {"data"};
  const char* const* names;
  size_t count;
  hn_test_path(prefix, sizeof prefix, "capi_block_mlp");
  hn_test_path(sym_file, sizeof sym_file, "capi_block_mlp-symbol.json");
  hn_test_path(params_file, sizeof params_file, "capi_block_mlp-0002.params");
  hn_test_path(saved, sizeof saved, "capi_block_mlp.saved.params");
  hn_test_path(sym_only, sizeof sym_only, "capi_block_mlp-symbol.json");
  HN_EXPECT_ERR(hn_block_export(net, prefix, 2), HN_ERR_INVALID_ARGUMENT, "hybridize()");
  HN_EXPECT_OK(hn_block_hybridize(net, 1, 0, 0));
  y = forward1(net, x);
  HN_EXPECT_ERR(hn_block_export(net, prefix, -1), HN_ERR_INVALID_ARGUMENT, "epoch");
  HN_EXPECT_OK(hn_block_export(net, prefix, 2));
  HN_EXPECT_ERR(hn_block_export(net, "/nonexistent/dir/mlp", 0), HN_ERR_IO, "");
  /* the traced program */
  HN_EXPECT_OK(hn_block_trace(net, 1, &traced));
  HN_EXPECT_OK(hn_symbol_list_arguments(traced, &names, &count));
  HN_EXPECT(count == 5 && strcmp(names[0], "data") == 0);
  hn_symbol_free(traced);
  /* save_parameters / load_parameters into a differently seeded twin */
  HN_EXPECT_OK(hn_block_save_parameters(net, saved));
  HN_EXPECT_OK(hn_block_initialize(copy, "uniform", 99, 1));
  HN_EXPECT_OK(hn_block_load_parameters(copy, saved, 0, 0));
  y_copy = forward1(copy, x);
  HN_EXPECT(max_diff(y, y_copy) <= 1e-6f);
  hn_tensor_free(y_copy);
  /* the export's params (arg:/aux: keys, full names) belong to the exported tree's names */
  HN_EXPECT_ERR(hn_block_load_parameters(copy, params_file, 0, 0), HN_ERR_NOT_FOUND, "is missing");
  /* import the export as a block, eager and hybridized */
  HN_EXPECT_OK(hn_block_import(sym_file, data_name, 1, params_file, &imported));
  y_imported = forward1(imported, x);
  HN_EXPECT(max_diff(y, y_imported) <= 1e-6f);
  hn_tensor_free(y_imported);
  HN_EXPECT_OK(hn_block_hybridize(imported, 1, 0, 0));
  y_imported = forward1(imported, x);
  HN_EXPECT(max_diff(y, y_imported) <= 1e-6f);
  hn_tensor_free(y_imported);
  hn_block_free(imported);
  imported = NULL;
  /* import without params, then load them */
  HN_EXPECT_OK(hn_block_import(sym_only, data_name, 1, NULL, &imported));
  HN_EXPECT_OK(hn_block_load_parameters(imported, params_file, 0, 0));
  y_imported = forward1(imported, x);
  HN_EXPECT(max_diff(y, y_imported) <= 1e-6f);
  hn_tensor_free(y_imported);
  hn_block_free(imported);
  imported = NULL;
  /* errors */
  HN_EXPECT_ERR(hn_block_import("/nonexistent-symbol.json", data_name, 1, NULL, &imported),
                HN_ERR_IO, "/nonexistent-symbol.json");
  HN_EXPECT_ERR(hn_block_import(sym_file, (const char*[]){"nothing"}, 1, NULL, &imported),
                HN_ERR_NOT_FOUND, "'nothing'");
  HN_EXPECT_ERR(hn_block_import(sym_file, data_name, 0, NULL, &imported), HN_ERR_INVALID_ARGUMENT,
                "data inputs");
  HN_EXPECT_ERR(hn_block_import(sym_file, data_name, 1, saved, &imported), HN_ERR_NOT_FOUND, "");
  HN_EXPECT_ERR(hn_block_load_parameters(copy, "/nonexistent.params", 0, 0), HN_ERR_IO,
                "/nonexistent.params");
  HN_EXPECT_ERR(hn_block_load_parameters(copy, sym_file, 0, 0), HN_ERR_FORMAT, "");
  wrong = create("HybridSequential", NULL, NULL, 0);
  {
    hn_block* d1 = dense("16", "relu");
    hn_block* d2 = dense("5", NULL);
    hn_block* d3 = dense("2", NULL);
    HN_EXPECT_OK(hn_block_add(wrong, d1));
    HN_EXPECT_OK(hn_block_add(wrong, d2));
    HN_EXPECT_ERR(hn_block_load_parameters(wrong, saved, 0, 0), HN_ERR_SHAPE, "");
    hn_block_free(d1);
    hn_block_free(d2);
    hn_block_free(wrong);
    wrong = create("HybridSequential", NULL, NULL, 0);
    d1 = dense("16", "relu");
    d2 = dense("4", NULL);
    HN_EXPECT_OK(hn_block_add(wrong, d1));
    HN_EXPECT_OK(hn_block_add(wrong, d2));
    HN_EXPECT_OK(hn_block_add(wrong, d3));
    HN_EXPECT_ERR(hn_block_load_parameters(wrong, saved, 0, 0), HN_ERR_NOT_FOUND,
                  "parameter '2.bias' is missing");
    HN_EXPECT_OK(hn_block_load_parameters(wrong, saved, 1, 0)); /* allow_missing */
    hn_block_free(d1);
    hn_block_free(d2);
    hn_block_free(d3);
  }
  HN_EXPECT(imported == NULL);
  hn_block_free(wrong);
  hn_tensor_free(y);
  hn_tensor_free(x);
  hn_block_free(copy);
  hn_block_free(net);
}

/* Lambdas: relu through the op registry (traceable), and failing ones. */
static int relu_lambda(hn_tensor* input_tensor, hn_tensor** output, void* user_data) {
  size_t n = 0;
  ++*(int*)user_data;
  return hn_op_invoke("relu", &input_tensor, 1, NULL, NULL, 0, 1, output, &n);
}

static int reading_lambda(hn_tensor* input_tensor, hn_tensor** output, void* user_data) {
  void* data = NULL;
  size_t n = 0;
  int rc = hn_tensor_data(input_tensor, &data); /* fails while tracing */
  (void)user_data;
  if (rc != HN_OK) return rc;
  return hn_op_invoke("identity", &input_tensor, 1, NULL, NULL, 0, 1, output, &n);
}

static int failing_lambda(hn_tensor* input_tensor, hn_tensor** output, void* user_data) {
  (void)input_tensor;
  (void)output;
  (void)user_data;
  return HN_ERR_UNSUPPORTED;
}

static int silent_lambda(hn_tensor* input_tensor, hn_tensor** output, void* user_data) {
  (void)input_tensor;
  (void)output;
  (void)user_data;
  return HN_OK; /* but no output */
}

static void test_lambdas(void) {
  int calls = 0;
  hn_block* net = create("HybridSequential", NULL, NULL, 0);
  hn_block* d = dense("6", NULL);
  hn_block* lambda = NULL;
  hn_block* plain = NULL;
  hn_block* seq = create("Sequential", NULL, NULL, 0);
  hn_block* bad = NULL;
  hn_tensor* x = input(2, 4);
  hn_tensor *eager, *hybrid, *y;
  hn_symbol* sym = NULL;
  size_t n;
  HN_EXPECT_OK(hn_block_create_lambda(relu_lambda, &calls, 1, &lambda));
  HN_EXPECT_OK(hn_block_add(net, d));
  HN_EXPECT_OK(hn_block_add(net, lambda));
  HN_EXPECT_OK(hn_block_initialize(net, "xavier", 5, 0));
  eager = forward1(net, x);
  HN_EXPECT(calls >= 1);
  HN_EXPECT_OK(hn_block_hybridize(net, 1, 0, 0));
  hybrid = forward1(net, x); /* traced: the lambda runs on a symbolic tensor */
  calls = 0;
  y = forward1(net, x); /* cached graph: the lambda is not called again */
  HN_EXPECT(calls == 0);
  HN_EXPECT(max_diff(eager, hybrid) <= 1e-6f && max_diff(hybrid, y) == 0.f);
  hn_tensor_free(y);
  hn_tensor_free(hybrid);
  hn_tensor_free(eager);
  /* a plain lambda in a Sequential (eager only) */
  HN_EXPECT_OK(hn_block_create_lambda(relu_lambda, &calls, 0, &plain));
  HN_EXPECT_ERR(hn_block_add(net, plain), HN_ERR_INVALID_ARGUMENT, "hybrid blocks only");
  HN_EXPECT_OK(hn_block_add(seq, plain));
  y = forward1(seq, x);
  hn_tensor_free(y);
  HN_EXPECT_ERR(hn_block_export(seq, "x", 0), HN_ERR_INVALID_ARGUMENT, "not a hybrid block");
  HN_EXPECT_ERR(hn_block_trace(seq, 1, &sym), HN_ERR_INVALID_ARGUMENT, "hybrid");
  /* lambdas that fail */
  HN_EXPECT_OK(hn_block_create_lambda(reading_lambda, NULL, 1, &bad));
  y = forward1(bad, x); /* eager: reading data is fine */
  hn_tensor_free(y);
  HN_EXPECT_OK(hn_block_hybridize(bad, 1, 0, 0));
  HN_EXPECT_ERR(hn_block_forward(bad, &x, 1, 1, &y, &n), HN_ERR_UNTRACEABLE, "symbolic");
  hn_block_free(bad);
  HN_EXPECT_OK(hn_block_create_lambda(failing_lambda, NULL, 0, &bad));
  HN_EXPECT_ERR(hn_block_forward(bad, &x, 1, 1, &y, &n), HN_ERR_UNSUPPORTED, "lambda function");
  hn_block_free(bad);
  HN_EXPECT_OK(hn_block_create_lambda(silent_lambda, NULL, 0, &bad));
  HN_EXPECT_ERR(hn_block_forward(bad, &x, 1, 1, &y, &n), HN_ERR_INVALID_ARGUMENT, "no output");
  hn_block_free(bad);
  HN_EXPECT_ERR(hn_block_create_lambda(NULL, NULL, 0, &bad), HN_ERR_INVALID_ARGUMENT, "'fn'");
  hn_tensor_free(x);
  hn_block_free(plain);
  hn_block_free(seq);
  hn_block_free(lambda);
  hn_block_free(d);
  hn_block_free(net);
}

/* A loss is a block kind: SoftmaxCrossEntropyLoss(weight=0.5) on (pred, label, sample_weight)
 * against the formula, eager and hybridized; bad attributes and shapes are errors. */
static void test_losses(void) {
  const char* keys[2] = {"weight", "sparse_label"};
  const char* values[2] = {"0.5", "True"};
  hn_block* loss = create("SoftmaxCrossEntropyLoss", keys, values, 2);
  hn_block* b = NULL;
  hn_tensor* pred = input(2, 3);
  hn_tensor *label = NULL, *sample_weight = NULL, *bad_label = input(2, 4), *out[2] = {NULL};
  int64_t shape[2] = {2, 1};
  float label_data[2] = {2.f, 0.f}, weight_data[2] = {1.f, 3.f};
  float* p = NULL;
  float* got = NULL;
  size_t n = 0;
  int pass, row, c;
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_FLOAT32, shape, 1, label_data, sizeof label_data, &label));
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_FLOAT32, shape, 2, weight_data, sizeof weight_data,
                                &sample_weight));
  HN_EXPECT_OK(hn_tensor_data(pred, (void**)&p));
  for (pass = 0; pass < 2 && p != NULL; ++pass) {
    hn_tensor* inputs[3];
    inputs[0] = pred;
    inputs[1] = label;
    inputs[2] = sample_weight;
    HN_EXPECT_OK(hn_block_hybridize(loss, pass, 0, 0));
    HN_EXPECT_OK(hn_block_forward(loss, inputs, 3, 2, out, &n));
    HN_EXPECT(n == 1);
    HN_EXPECT_OK(hn_tensor_data(out[0], (void**)&got));
    for (row = 0; got != NULL && row < 2; ++row) {
      double sum = 0, want;
      for (c = 0; c < 3; ++c) sum += exp(p[row * 3 + c]);
      want = -(p[row * 3 + (int)label_data[row]] - log(sum)) * weight_data[row] * 0.5;
      HN_EXPECT(fabs(got[row] - want) < 1e-5 * (1 + fabs(want)));
    }
    hn_tensor_free(out[0]);
  }
  HN_EXPECT_ERR(hn_block_create("L2Loss", (const char*[]){"margin"}, (const char*[]){"1"}, 1, &b),
                HN_ERR_INVALID_ARGUMENT,
                "L2Loss: unknown attribute 'margin' (accepted: weight, "
                "batch_axis");
  HN_EXPECT_ERR(
      hn_block_create("CTCLoss", (const char*[]){"layout"}, (const char*[]){"NCT"}, 1, &b),
      HN_ERR_INVALID_ARGUMENT, "layout must be NTC or TNC");
  {
    hn_block* l1 = create("L1Loss", NULL, NULL, 0);
    hn_tensor* inputs[2];
    inputs[0] = pred;
    inputs[1] = bad_label;
    HN_EXPECT_ERR(hn_block_forward(l1, inputs, 2, 2, out, &n), HN_ERR_INVALID_ARGUMENT,
                  "L1Loss: label has shape (2, 4) (8 elements) but pred has shape (2, 3) (6)");
    HN_EXPECT_ERR(hn_block_forward(l1, inputs, 1, 2, out, &n), HN_ERR_INVALID_ARGUMENT,
                  "L1Loss takes 2 to 3 inputs");
    hn_block_free(l1);
  }
  HN_EXPECT(b == NULL);
  hn_tensor_free(pred);
  hn_tensor_free(label);
  hn_tensor_free(sample_weight);
  hn_tensor_free(bad_label);
  hn_block_free(loss);
}

static void test_initializers_and_cast(void) {
  const int64_t shape[1] = {4};
  hn_tensor* t = NULL;
  hn_tensor* w = NULL;
  hn_block* d = dense("3", NULL);
  hn_tensor* x = input(2, 5);
  hn_tensor* y = NULL;
  hn_tensor* before = NULL;
  const char* weight_name = NULL;
  float* values = NULL;
  int dtype = -1;
  size_t count = 0;
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_FLOAT32, shape, 1, NULL, 0, &t));
  /* By name as MXNet's Initializer.__call__: a bias gets zeros whatever the initializer... */
  HN_EXPECT_OK(hn_initializer_fill("[\"constant\", {\"value\": 3}]", "fc_bias", 0, t));
  HN_EXPECT_OK(hn_tensor_data(t, (void**)&values));
  HN_EXPECT(values[0] == 0.f && values[3] == 0.f);
  /* ...and the weight rule applies whatever the name with weight_rule 1. */
  HN_EXPECT_OK(hn_initializer_fill("[\"lstmbias\", {\"forget_bias\": 2}]", "fc_bias", 1, t));
  HN_EXPECT(values[0] == 0.f && values[1] == 2.f && values[2] == 0.f);
  HN_EXPECT_ERR(hn_initializer_fill("nosuch", "fc_weight", 0, t), HN_ERR_NOT_FOUND, "nosuch");
  HN_EXPECT_ERR(hn_initializer_fill("ones", "odd", 0, t), HN_ERR_INVALID_ARGUMENT, "'odd'");
  HN_EXPECT_ERR(hn_initializer_fill("ones", NULL, 0, t), HN_ERR_INVALID_ARGUMENT, "");
  hn_tensor_free(t);

  /* Cast keeps the values; FullyConnected then refuses the float64 weight (float32 input). */
  HN_EXPECT_OK(hn_block_initialize(d, "[\"constant\", {\"value\": 0.5}]", 1, 0));
  before = forward1(d, x);
  HN_EXPECT_OK(hn_block_param_cast(d, NULL, HN_DTYPE_FLOAT64));
  HN_EXPECT_OK(hn_block_name(d, &weight_name));
  {
    char name[64];
    snprintf(name, sizeof name, "%s_weight", weight_name);
    HN_EXPECT_OK(hn_block_param_data(d, name, &w));
    HN_EXPECT_OK(hn_tensor_dtype(w, &dtype));
    HN_EXPECT(dtype == HN_DTYPE_FLOAT64);
    hn_tensor_free(w);
    HN_EXPECT_ERR(hn_block_forward(d, &x, 1, 1, &y, &count), HN_ERR_DTYPE, "float64");
    HN_EXPECT_OK(hn_block_param_cast(d, name, HN_DTYPE_FLOAT32));
    HN_EXPECT_ERR(hn_block_param_cast(d, "nosuch", HN_DTYPE_FLOAT32), HN_ERR_NOT_FOUND, "");
    HN_EXPECT_ERR(hn_block_param_cast(d, NULL, 99), HN_ERR_DTYPE, "99");
  }
  HN_EXPECT_OK(hn_block_param_cast(d, NULL, HN_DTYPE_FLOAT32));
  y = forward1(d, x);
  HN_EXPECT(max_diff(y, before) == 0.f);
  hn_tensor_free(before);
  hn_tensor_free(y);
  hn_tensor_free(x);
  hn_block_free(d);
}

static void test_create_errors(void) {
  hn_block* b = NULL;
  hn_block* d = dense("4", NULL);
  hn_block* seq = create("Sequential", NULL, NULL, 0);
  hn_block* hseq = create("HybridSequential", NULL, NULL, 0);
  hn_block* other = create("HybridSequential", NULL, NULL, 0);
  hn_tensor* out[1];
  hn_tensor* x = input(1, 3);
  hn_symbol* sym = NULL;
  size_t n;
  HN_EXPECT_ERR(hn_block_create("Conv9D", NULL, NULL, 0, &b), HN_ERR_NOT_FOUND,
                "unknown block kind 'Conv9D' (known: HybridSequential");
  HN_EXPECT_ERR(hn_block_create("Dense", NULL, NULL, 0, &b), HN_ERR_INVALID_ARGUMENT,
                "Dense: the required attribute 'units' is missing");
  HN_EXPECT_ERR(hn_block_create("Dense", (const char*[]){"units"}, (const char*[]){"abc"}, 1, &b),
                HN_ERR_INVALID_ARGUMENT, "Dense: attribute 'units'='abc'");
  HN_EXPECT_ERR(hn_block_create("Dense", (const char*[]){"units"}, (const char*[]){"0"}, 1, &b),
                HN_ERR_INVALID_ARGUMENT, "units");
  HN_EXPECT_ERR(hn_block_create("Dense", (const char*[]){"units", "colour"},
                                (const char*[]){"3", "red"}, 2, &b),
                HN_ERR_INVALID_ARGUMENT, "unknown attribute 'colour' (accepted: units");
  HN_EXPECT_ERR(hn_block_create("Dense", (const char*[]){"units", "weight_initializer"},
                                (const char*[]){"3", "golden"}, 2, &b),
                HN_ERR_NOT_FOUND, "unknown initializer 'golden'");
  HN_EXPECT_ERR(hn_block_create("Dropout", (const char*[]){"rate"}, (const char*[]){"2"}, 1, &b),
                HN_ERR_INVALID_ARGUMENT, "rate");
  HN_EXPECT_ERR(hn_block_create("Activation", NULL, NULL, 0, &b), HN_ERR_INVALID_ARGUMENT,
                "activation");
  HN_EXPECT_ERR(hn_block_create(NULL, NULL, NULL, 0, &b), HN_ERR_INVALID_ARGUMENT, "'kind'");
  HN_EXPECT_ERR(hn_block_create("Flatten", NULL, NULL, 0, NULL), HN_ERR_INVALID_ARGUMENT, "'out'");
  HN_EXPECT(b == NULL);
  /* add */
  HN_EXPECT_ERR(hn_block_add(hseq, seq), HN_ERR_INVALID_ARGUMENT, "hybrid blocks only");
  HN_EXPECT_ERR(hn_block_add(d, seq), HN_ERR_INVALID_ARGUMENT, "not to a Dense");
  HN_EXPECT_OK(hn_block_add(hseq, d));
  HN_EXPECT_ERR(hn_block_add(other, d), HN_ERR_INVALID_ARGUMENT, "already has a parent");
  HN_EXPECT_ERR(hn_block_add(hseq, hseq), HN_ERR_INVALID_ARGUMENT, "own child");
  HN_EXPECT_ERR(hn_block_add(NULL, d), HN_ERR_INVALID_ARGUMENT, "'parent' is NULL");
  HN_EXPECT_ERR(hn_block_add(hseq, NULL), HN_ERR_INVALID_ARGUMENT, "'child' is NULL");
  /* initialize / forward */
  HN_EXPECT_ERR(hn_block_initialize(hseq, "golden", 0, 0), HN_ERR_NOT_FOUND, "golden");
  HN_EXPECT_ERR(hn_block_forward(hseq, &x, 1, 1, out, &n), HN_ERR_INVALID_ARGUMENT, "initialize");
  HN_EXPECT_OK(hn_block_initialize(hseq, "zeros", 0, 0));
  HN_EXPECT_ERR(hn_block_forward(hseq, &x, 1, 0, out, &n), HN_ERR_INVALID_ARGUMENT,
                "max_outputs is 0");
  HN_EXPECT_ERR(hn_block_forward(hseq, NULL, 1, 1, out, &n), HN_ERR_INVALID_ARGUMENT,
                "'inputs' is NULL");
  HN_EXPECT_ERR(hn_block_forward(hseq, &x, 1, 1, out, NULL), HN_ERR_INVALID_ARGUMENT,
                "out_num_outputs");
  /* NULL handles */
  HN_EXPECT_ERR(hn_block_forward(NULL, &x, 1, 1, out, &n), HN_ERR_INVALID_ARGUMENT,
                "'block' is NULL");
  HN_EXPECT_ERR(hn_block_initialize(NULL, NULL, 0, 0), HN_ERR_INVALID_ARGUMENT, "'block' is NULL");
  HN_EXPECT_ERR(hn_block_hybridize(NULL, 1, 0, 0), HN_ERR_INVALID_ARGUMENT, "'block' is NULL");
  HN_EXPECT_ERR(hn_block_export(NULL, "x", 0), HN_ERR_INVALID_ARGUMENT, "'block' is NULL");
  HN_EXPECT_ERR(hn_block_export(hseq, NULL, 0), HN_ERR_INVALID_ARGUMENT, "'prefix' is NULL");
  HN_EXPECT_ERR(hn_block_save_parameters(NULL, "x"), HN_ERR_INVALID_ARGUMENT, "'block' is NULL");
  HN_EXPECT_ERR(hn_block_load_parameters(NULL, "x", 0, 0), HN_ERR_INVALID_ARGUMENT,
                "'block' is NULL");
  HN_EXPECT_ERR(hn_block_name(NULL, NULL), HN_ERR_INVALID_ARGUMENT, "'block' is NULL");
  HN_EXPECT_ERR(hn_block_to_string(NULL, NULL), HN_ERR_INVALID_ARGUMENT, "'block' is NULL");
  HN_EXPECT_ERR(hn_block_collect_params(NULL, NULL), HN_ERR_INVALID_ARGUMENT, "'block' is NULL");
  HN_EXPECT_ERR(hn_block_trace(NULL, 1, NULL), HN_ERR_INVALID_ARGUMENT, "'block' is NULL");
  HN_EXPECT_ERR(hn_block_trace(hseq, 0, &sym), HN_ERR_INVALID_ARGUMENT, "num_inputs");
  hn_tensor_free(x);
  hn_block_free(d);
  hn_block_free(seq);
  hn_block_free(hseq);
  hn_block_free(other);
}

HN_TEST_MAIN(block, HN_RUN(test_mlp_eager_and_hybridized) HN_RUN(test_every_layer)
                        HN_RUN(test_deferred_initialization) HN_RUN(test_same_seed_same_weights)
                            HN_RUN(test_export_import_and_parameters) HN_RUN(test_lambdas)
                                HN_RUN(test_create_errors) HN_RUN(test_losses)
                                    HN_RUN(test_initializers_and_cast))
