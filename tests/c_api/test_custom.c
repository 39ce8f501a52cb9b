/* C API for frontends that write Gluon in their own language (the Python package): custom
 * blocks with named children and parameters, MXNet's construction-time naming, blocks on
 * symbols, symbol <-> tensor conversion, op input names, random tensors, the conv/pool/norm
 * layer kinds, SymbolBlock from a symbol and the model zoo. Every function also gets its NULL
 * and bad-input paths. */
#include <math.h>

#include "hn_test.h"

static hn_block* create(const char* kind, const char** keys, const char** values, size_t n) {
  hn_block* b = NULL;
  HN_EXPECT_OK(hn_block_create(kind, keys, values, n, &b));
  return b;
}

static hn_block* dense(const char* units) {
  return create("Dense", (const char*[]){"units"}, (const char*[]){units}, 1);
}

static hn_tensor* filled(const int64_t* shape, int ndim, float start) {
  hn_tensor* t = NULL;
  float* data = NULL;
  int64_t n = 0, i;
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_FLOAT32, shape, ndim, NULL, 0, &t));
  HN_EXPECT_OK(hn_tensor_size(t, &n));
  HN_EXPECT_OK(hn_tensor_data(t, (void**)&data));
  for (i = 0; data != NULL && i < n; ++i) data[i] = start + (float)((i * 5) % 7) / 4.f - 0.5f;
  return t;
}

static hn_tensor* forward1(hn_block* b, hn_tensor* x) {
  hn_tensor* out[4] = {NULL, NULL, NULL, NULL};
  size_t n = 0;
  HN_EXPECT_OK(hn_block_forward(b, &x, 1, 4, out, &n));
  HN_EXPECT(n == 1);
  return out[0];
}

static int same_values(hn_tensor* a, hn_tensor* b) {
  size_t na = 0, nb = 1;
  void *pa = NULL, *pb = NULL;
  if (a == NULL || b == NULL) return 0;
  if (hn_tensor_nbytes(a, &na) != HN_OK || hn_tensor_nbytes(b, &nb) != HN_OK || na != nb) return 0;
  if (hn_tensor_data(a, &pa) != HN_OK || hn_tensor_data(b, &pb) != HN_OK) return 0;
  return memcmp(pa, pb, na) == 0;
}

static int64_t dim(hn_tensor* t, int axis) {
  int64_t d = -1;
  HN_EXPECT_OK(hn_tensor_dim(t, axis, &d));
  return d;
}

/* ---- a custom block: y = relu(fc(x)) * scale, fc a named child, scale its own parameter --- */

struct net_state {
  hn_block* self; /* borrowed: the block whose forward this is */
  hn_block* fc;
  int calls, symbolic_calls;
  int fail_with; /* != HN_OK: return this code */
  int outputs;   /* how many outputs to return (normally 1) */
};

static int net_forward(void* user_data, hn_tensor* const* inputs, size_t num_inputs,
                       size_t max_outputs, hn_tensor** outputs, size_t* out_num_outputs) {
  struct net_state* s = (struct net_state*)user_data;
  hn_tensor* h[2] = {NULL, NULL};
  hn_tensor* r = NULL;
  hn_tensor* scale = NULL;
  hn_tensor* mul_in[2];
  const char* prefix = NULL;
  char scale_name[256];
  size_t n = 0;
  int symbolic = -1, rc;
  ++s->calls;
  if (num_inputs != 1 || max_outputs < 2) return HN_ERR_INVALID_ARGUMENT;
  if (hn_tensor_is_symbolic(inputs[0], &symbolic) == HN_OK && symbolic == 1) ++s->symbolic_calls;
  if (s->fail_with != HN_OK) {
    hn_tensor_free(inputs[0]);
    return s->fail_with;
  }
  rc = hn_block_forward(s->fc, inputs, 1, 2, h, &n);
  hn_tensor_free(inputs[0]); /* the inputs belong to the forward function */
  if (rc != HN_OK) return rc;
  rc = hn_op_invoke("relu", h, 1, NULL, NULL, 0, 1, &r, &n);
  hn_tensor_free(h[0]);
  if (rc != HN_OK) return rc;
  if ((rc = hn_block_prefix(s->self, &prefix)) != HN_OK) return rc;
  snprintf(scale_name, sizeof scale_name, "%sscale", prefix);
  if ((rc = hn_block_param_data(s->self, scale_name, &scale)) != HN_OK) return rc;
  mul_in[0] = r;
  mul_in[1] = scale;
  rc = hn_op_invoke("broadcast_mul", mul_in, 2, NULL, NULL, 0, 1, outputs, &n);
  if (rc == HN_OK && s->outputs == 2) rc = hn_tensor_share(outputs[0], &outputs[1]);
  hn_tensor_free(r);
  hn_tensor_free(scale);
  if (rc != HN_OK) return rc;
  *out_num_outputs = s->outputs == 0 ? 0 : (size_t)s->outputs;
  if (s->outputs == 0) hn_tensor_free(outputs[0]);
  return HN_OK;
}

static hn_block* make_net(struct net_state* s, int hybrid) {
  hn_block* net = NULL;
  int64_t one = 1;
  memset(s, 0, sizeof *s);
  s->outputs = 1;
  HN_EXPECT_OK(hn_block_create_custom("MyNet", hybrid, net_forward, s, NULL, &net));
  s->self = net;
  s->fc = dense("3");
  HN_EXPECT_OK(hn_block_register_child(net, "fc", s->fc));
  HN_EXPECT_OK(hn_block_add_parameter(net, "scale", HN_DTYPE_FLOAT32, &one, 1,
                                      "[\"constant\", {\"value\": 2.5}]", 1));
  return net;
}

static void test_custom_block_eager_traced_and_exported(void) {
  struct net_state s;
  hn_block* net = make_net(&s, 1);
  int64_t shape[2] = {2, 4};
  hn_tensor* x = filled(shape, 2, 0.f);
  hn_tensor *eager, *hybrid, *again, *scale = NULL;
  hn_symbol* data = NULL;
  hn_symbol* program[2] = {NULL, NULL};
  const char* const* names = NULL;
  const char* prefix = NULL;
  char* text = NULL;
  char path[512], sym_path[512];
  size_t count = 0, n = 0;
  float v = 0.f;
  HN_EXPECT_OK(hn_block_param_initialize(net, NULL, "xavier", 0));
  eager = forward1(net, x);
  HN_EXPECT(s.calls == 1 && s.symbolic_calls == 0);
  HN_EXPECT(dim(eager, 0) == 2 && dim(eager, 1) == 3);
  HN_EXPECT_OK(hn_block_prefix(net, &prefix));
  HN_EXPECT(prefix != NULL && strncmp(prefix, "mynet", 5) == 0);
  HN_EXPECT_OK(hn_block_param_data(net, "mynet0_scale", &scale));
  HN_EXPECT_OK(hn_tensor_copy_to(scale, &v, sizeof v));
  HN_EXPECT(v == 2.5f); /* the parameter's own initializer wins over xavier */
  hn_tensor_free(scale);
  HN_EXPECT_OK(hn_block_to_string(net, &text));
  HN_EXPECT(text != NULL && strstr(text, "MyNet(") == text &&
            strstr(text, "(fc): Dense(4 -> 3") != NULL);
  hn_string_free(text);
  /* hybridized: traced once (symbolic inputs), then the cached graph runs */
  HN_EXPECT_OK(hn_block_hybridize(net, 1, 0, 0));
  hybrid = forward1(net, x);
  HN_EXPECT(s.calls == 2 && s.symbolic_calls == 1);
  again = forward1(net, x);
  HN_EXPECT(s.calls == 2);
  HN_EXPECT(same_values(eager, hybrid) && same_values(eager, again));
  hn_tensor_free(again);
  /* the symbolic program, on a symbol */
  HN_EXPECT_OK(hn_symbol_var("data", &data));
  HN_EXPECT_OK(hn_block_forward_symbols(net, &data, 1, 2, program, &n));
  HN_EXPECT(n == 1 && s.symbolic_calls == 2);
  HN_EXPECT_OK(hn_symbol_list_arguments(program[0], &names, &count));
  HN_EXPECT(count == 4 && strcmp(names[0], "data") == 0 &&
            strcmp(names[1], "mynet0_dense0_weight") == 0 && strcmp(names[3], "mynet0_scale") == 0);
  HN_EXPECT_OK(hn_symbol_to_json(program[0], &text));
  HN_EXPECT(text != NULL && strstr(text, "\"mynet0_relu0\"") != NULL &&
            strstr(text, "\"mynet0_broadcast_mul0\"") != NULL);
  hn_string_free(text);
  hn_symbol_free(program[0]);
  HN_EXPECT_ERR(hn_block_forward_symbols(net, &data, 1, 0, program, &n), HN_ERR_INVALID_ARGUMENT,
                "max_outputs");
  HN_EXPECT_ERR(hn_block_forward_symbols(net, NULL, 0, 1, program, &n), HN_ERR_INVALID_ARGUMENT,
                "at least one input");
  HN_EXPECT_ERR(hn_block_forward_symbols(NULL, &data, 1, 1, program, &n), HN_ERR_INVALID_ARGUMENT,
                "'block' is NULL");
  HN_EXPECT_ERR(hn_block_forward_symbols(s.fc, &data, 1, 1, program, NULL), HN_ERR_INVALID_ARGUMENT,
                "out_num_outputs");
  /* export and import give the same numbers */
  hn_test_path(path, sizeof path, "capi_custom_net");
  hn_test_path(sym_path, sizeof sym_path, "capi_custom_net-symbol.json");
  HN_EXPECT_OK(hn_block_export(net, path, 0));
  {
    hn_block* imported = NULL;
    hn_tensor* y;
    char params_path[512];
    hn_test_path(params_path, sizeof params_path, "capi_custom_net-0000.params");
    HN_EXPECT_OK(hn_block_import(sym_path, (const char*[]){"data"}, 1, params_path, &imported));
    y = forward1(imported, x);
    HN_EXPECT(same_values(eager, y));
    hn_tensor_free(y);
    hn_block_free(imported);
  }
  hn_symbol_free(data);
  hn_tensor_free(hybrid);
  hn_tensor_free(eager);
  hn_tensor_free(x);
  hn_block_free(s.fc);
  hn_block_free(net);
}

static void test_custom_block_plain_and_failing(void) {
  struct net_state s;
  hn_block* net = make_net(&s, 0);
  int64_t shape[2] = {1, 4};
  hn_tensor* x = filled(shape, 2, 1.f);
  hn_tensor* out[2] = {NULL, NULL};
  hn_tensor *a, *b;
  hn_symbol* data = NULL;
  size_t n = 0;
  HN_EXPECT_OK(hn_block_param_initialize(net, NULL, NULL, 0));
  a = forward1(net, x);
  HN_EXPECT_OK(hn_block_hybridize(net, 1, 0, 0)); /* passed on to the Dense child */
  b = forward1(net, x);
  HN_EXPECT(s.calls == 2 && s.symbolic_calls == 0); /* a plain Block always runs its code */
  HN_EXPECT(same_values(a, b));
  HN_EXPECT_OK(hn_symbol_var("data", &data));
  {
    hn_symbol* program = NULL;
    HN_EXPECT_ERR(hn_block_forward_symbols(net, &data, 1, 1, &program, &n), HN_ERR_INVALID_ARGUMENT,
                  "plain Block");
  }
  HN_EXPECT_ERR(hn_block_export(net, "unused", 0), HN_ERR_INVALID_ARGUMENT, "not a hybrid block");
  /* failures of the forward function reach the caller with their category */
  s.fail_with = HN_ERR_UNSUPPORTED;
  HN_EXPECT_ERR(hn_block_forward(net, &x, 1, 2, out, &n), HN_ERR_UNSUPPORTED,
                "forward of MyNet 'mynet");
  s.fail_with = 5;
  HN_EXPECT_ERR(hn_block_forward(net, &x, 1, 2, out, &n), HN_ERR_INVALID_ARGUMENT,
                "not an hn_status");
  s.fail_with = HN_OK;
  s.outputs = 0;
  HN_EXPECT_ERR(hn_block_forward(net, &x, 1, 2, out, &n), HN_ERR_INVALID_ARGUMENT,
                "returned 0 outputs");
  s.outputs = 2; /* more outputs than the caller has room for */
  HN_EXPECT_ERR(hn_block_forward(net, &x, 1, 1, out, &n), HN_ERR_INVALID_ARGUMENT, "");
  HN_EXPECT_OK(hn_block_forward(net, &x, 1, 2, out, &n));
  HN_EXPECT(n == 2 && same_values(out[0], out[1]));
  hn_tensor_free(out[0]);
  hn_tensor_free(out[1]);
  hn_symbol_free(data);
  hn_tensor_free(a);
  hn_tensor_free(b);
  hn_tensor_free(x);
  hn_block_free(s.fc);
  hn_block_free(net);
}

static int noop_forward(void* user_data, hn_tensor* const* inputs, size_t num_inputs,
                        size_t max_outputs, hn_tensor** outputs, size_t* out_num_outputs) {
  (void)user_data;
  (void)max_outputs;
  if (num_inputs < 1) return HN_ERR_INVALID_ARGUMENT;
  outputs[0] = inputs[0];
  *out_num_outputs = 1;
  return HN_OK;
}

static void test_custom_block_errors(void) {
  hn_block* custom = NULL;
  hn_block* plain = NULL;
  hn_block* seq = create("Sequential", NULL, NULL, 0);
  hn_block* d = dense("2");
  hn_block* d2 = dense("2");
  int64_t shape[2] = {3, 0};
  int64_t bad_shape[1] = {-1};
  HN_EXPECT_ERR(hn_block_create_custom(NULL, 1, noop_forward, NULL, NULL, &custom),
                HN_ERR_INVALID_ARGUMENT, "'class_name' is NULL");
  HN_EXPECT_ERR(hn_block_create_custom("", 1, noop_forward, NULL, NULL, &custom),
                HN_ERR_INVALID_ARGUMENT, "class name");
  HN_EXPECT_ERR(hn_block_create_custom("X", 1, NULL, NULL, NULL, &custom), HN_ERR_INVALID_ARGUMENT,
                "'fn' is NULL");
  HN_EXPECT_ERR(hn_block_create_custom("X", 1, noop_forward, NULL, NULL, NULL),
                HN_ERR_INVALID_ARGUMENT, "'out'");
  HN_EXPECT(custom == NULL);
  HN_EXPECT_OK(hn_block_create_custom("Twice", 1, noop_forward, NULL, "twice_", &custom));
  HN_EXPECT_OK(hn_block_create_custom("Plain", 0, noop_forward, NULL, NULL, &plain));
  /* children: named, replaced in place, hybrid parents take hybrid children only */
  HN_EXPECT_OK(hn_block_register_child(custom, "a", d));
  HN_EXPECT_OK(hn_block_register_child(custom, "a", d));  /* the same child again: no change */
  HN_EXPECT_OK(hn_block_register_child(custom, "a", d2)); /* replaced */
  HN_EXPECT_OK(hn_block_register_child(plain, "b", d));   /* d has no parent any more */
  HN_EXPECT_ERR(hn_block_register_child(custom, "s", seq), HN_ERR_INVALID_ARGUMENT,
                "must be a HybridBlock");
  HN_EXPECT_ERR(hn_block_register_child(custom, "c", d), HN_ERR_INVALID_ARGUMENT,
                "already has a parent");
  HN_EXPECT_ERR(hn_block_register_child(custom, "self", custom), HN_ERR_INVALID_ARGUMENT,
                "its own child");
  HN_EXPECT_ERR(hn_block_register_child(d, "x", seq), HN_ERR_INVALID_ARGUMENT,
                "not a custom block");
  HN_EXPECT_ERR(hn_block_register_child(custom, "", seq), HN_ERR_INVALID_ARGUMENT, "needs a name");
  HN_EXPECT_ERR(hn_block_register_child(NULL, "x", d), HN_ERR_INVALID_ARGUMENT, "'parent' is NULL");
  HN_EXPECT_ERR(hn_block_register_child(custom, NULL, d), HN_ERR_INVALID_ARGUMENT,
                "'name' is NULL");
  HN_EXPECT_ERR(hn_block_register_child(custom, "x", NULL), HN_ERR_INVALID_ARGUMENT,
                "'child' is NULL");
  /* parameters */
  HN_EXPECT_OK(hn_block_add_parameter(custom, "w", HN_DTYPE_FLOAT32, shape, 2, NULL, 1));
  HN_EXPECT_ERR(hn_block_add_parameter(custom, "w", HN_DTYPE_FLOAT32, shape, 2, NULL, 1),
                HN_ERR_INVALID_ARGUMENT, "already has a parameter 'w'");
  HN_EXPECT_ERR(hn_block_add_parameter(custom, "v", HN_DTYPE_FLOAT32, bad_shape, 1, NULL, 1),
                HN_ERR_SHAPE, "must be >= 0");
  HN_EXPECT_ERR(hn_block_add_parameter(custom, "v", 99, shape, 2, NULL, 1), HN_ERR_DTYPE,
                "unknown dtype 99");
  HN_EXPECT_ERR(hn_block_add_parameter(custom, "v", HN_DTYPE_FLOAT32, shape, 2, "magic", 1),
                HN_ERR_NOT_FOUND, "unknown initializer 'magic'");
  HN_EXPECT_ERR(hn_block_add_parameter(custom, "", HN_DTYPE_FLOAT32, shape, 2, NULL, 1),
                HN_ERR_INVALID_ARGUMENT, "needs a name");
  HN_EXPECT_ERR(hn_block_add_parameter(d, "v", HN_DTYPE_FLOAT32, shape, 2, NULL, 1),
                HN_ERR_INVALID_ARGUMENT, "not a custom block");
  HN_EXPECT_ERR(hn_block_add_parameter(NULL, "v", HN_DTYPE_FLOAT32, shape, 2, NULL, 1),
                HN_ERR_INVALID_ARGUMENT, "'block' is NULL");
  HN_EXPECT_ERR(hn_block_add_parameter(custom, NULL, HN_DTYPE_FLOAT32, shape, 2, NULL, 1),
                HN_ERR_INVALID_ARGUMENT, "'name' is NULL");
  {
    const char* prefix = NULL;
    HN_EXPECT_OK(hn_block_prefix(custom, &prefix));
    HN_EXPECT(prefix != NULL && strcmp(prefix, "twice_") == 0);
    HN_EXPECT_ERR(hn_block_prefix(NULL, &prefix), HN_ERR_INVALID_ARGUMENT, "'block' is NULL");
    HN_EXPECT_ERR(hn_block_prefix(custom, NULL), HN_ERR_INVALID_ARGUMENT, "out_prefix");
  }
  hn_block_free(d);
  hn_block_free(d2);
  hn_block_free(seq);
  hn_block_free(plain);
  hn_block_free(custom);
}

/* ---- MXNet's construction-time naming ----------------------------------------------------- */

static const char* prefix_of(hn_block* b) {
  const char* p = NULL;
  HN_EXPECT_OK(hn_block_prefix(b, &p));
  return p != NULL ? p : "";
}

static void test_name_in_scope(void) {
  hn_block* seq = create("HybridSequential", NULL, NULL, 0);
  hn_block* inner = dense("4");
  hn_block* inner2 = dense("4");
  hn_block* named =
      create("Dense", (const char*[]){"units", "prefix"}, (const char*[]){"4", "fc_"}, 2);
  hn_block* global = dense("4");
  hn_block* global2 = dense("4");
  hn_block* lazy = dense("4");
  char expected[256];
  const char* seq_prefix;
  const char* name = NULL;
  size_t count = 0, i;
  int found_global = 0;
  HN_EXPECT_OK(hn_block_name_in_scope(seq, NULL));
  seq_prefix = prefix_of(seq);
  HN_EXPECT(strncmp(seq_prefix, "hybridsequential", 16) == 0);
  HN_EXPECT_OK(hn_block_name_in_scope(inner, seq));
  HN_EXPECT_OK(hn_block_name_in_scope(inner2, seq));
  HN_EXPECT_OK(hn_block_name_in_scope(named, seq));
  snprintf(expected, sizeof expected, "%sdense0_", seq_prefix);
  HN_EXPECT(strcmp(prefix_of(inner), expected) == 0);
  snprintf(expected, sizeof expected, "%sdense1_", seq_prefix);
  HN_EXPECT(strcmp(prefix_of(inner2), expected) == 0);
  snprintf(expected, sizeof expected, "%sfc_", seq_prefix);
  HN_EXPECT(strcmp(prefix_of(named), expected) == 0);
  /* outside any scope: a process-wide name that stays when the block is added */
  HN_EXPECT_OK(hn_block_name_in_scope(global, NULL));
  HN_EXPECT_OK(hn_block_name_in_scope(global2, NULL));
  HN_EXPECT(strncmp(prefix_of(global), "dense", 5) == 0 &&
            strcmp(prefix_of(global), prefix_of(global2)) != 0);
  HN_EXPECT_OK(hn_block_add(seq, global));
  HN_EXPECT_OK(hn_block_add(seq, lazy)); /* not named: named from its parent at first use */
  HN_EXPECT_OK(hn_block_param_count(seq, &count));
  HN_EXPECT(count == 4);
  for (i = 0; i < count; ++i) {
    HN_EXPECT_OK(hn_block_param_info(seq, i, &name, NULL, NULL, NULL, NULL));
    snprintf(expected, sizeof expected, "%sweight", prefix_of(global));
    if (name != NULL && strcmp(name, expected) == 0) found_global = 1;
  }
  HN_EXPECT(found_global);
  snprintf(expected, sizeof expected, "%sdense2_", seq_prefix); /* the scope's counter goes on */
  HN_EXPECT(strcmp(prefix_of(lazy), expected) == 0);
  /* errors */
  HN_EXPECT_ERR(hn_block_name_in_scope(inner, seq), HN_ERR_INVALID_ARGUMENT, "named already");
  HN_EXPECT_ERR(hn_block_name_in_scope(global2, global2), HN_ERR_INVALID_ARGUMENT, "named already");
  HN_EXPECT_ERR(hn_block_name_in_scope(NULL, seq), HN_ERR_INVALID_ARGUMENT, "'block' is NULL");
  {
    hn_block* fresh = dense("1");
    HN_EXPECT_ERR(hn_block_name_in_scope(fresh, fresh), HN_ERR_INVALID_ARGUMENT, "its own scope");
    hn_block_free(fresh);
  }
  hn_block_free(inner);
  hn_block_free(inner2);
  hn_block_free(named);
  hn_block_free(global);
  hn_block_free(global2);
  hn_block_free(lazy);
  hn_block_free(seq);
}

/* ---- parameters by name ------------------------------------------------------------------- */

static void test_parameters(void) {
  hn_block* seq = create("HybridSequential", (const char*[]){"prefix"}, (const char*[]){"p_"}, 1);
  hn_block* d1 = dense("3");
  hn_block* d2 = dense("2");
  int64_t shape[2] = {2, 5};
  int64_t wrong_shape[2] = {4, 4};
  hn_tensor* x = filled(shape, 2, 0.f);
  hn_tensor *w = NULL, *y, *y2, *bad = NULL;
  const char* name = NULL;
  const int64_t* dims = NULL;
  int ndim = -1, dtype = -1, initialized = -1;
  size_t count = 0;
  float values[15], first = 0.f;
  HN_EXPECT_OK(hn_block_add(seq, d1));
  HN_EXPECT_OK(hn_block_add(seq, d2));
  HN_EXPECT_OK(hn_block_param_count(seq, &count));
  HN_EXPECT(count == 4);
  HN_EXPECT_OK(hn_block_param_info(seq, 0, &name, &dims, &ndim, &dtype, &initialized));
  HN_EXPECT(strcmp(name, "p_dense0_weight") == 0 && ndim == 2 && dims[0] == 3 && dims[1] == 0 &&
            dtype == HN_DTYPE_FLOAT32 && initialized == 0);
  HN_EXPECT_ERR(hn_block_param_info(seq, 4, &name, NULL, NULL, NULL, NULL), HN_ERR_INVALID_ARGUMENT,
                "out of range");
  HN_EXPECT_ERR(hn_block_param_data(seq, "p_dense0_weight", &w), HN_ERR_INVALID_ARGUMENT,
                "initialize()");
  HN_EXPECT_ERR(hn_block_param_data(seq, "p_dense9_weight", &w), HN_ERR_NOT_FOUND,
                "p_dense0_weight, p_dense0_bias");
  /* initialize without reseeding: the same seed gives the same draws as hn_block_initialize */
  HN_EXPECT_OK(hn_seed(11));
  HN_EXPECT_OK(hn_block_param_initialize(seq, NULL, "[\"uniform\", {\"scale\": 0.5}]", 0));
  y = forward1(seq, x);
  HN_EXPECT_OK(hn_block_param_count(seq, &count));
  HN_EXPECT_OK(hn_block_param_info(seq, 0, NULL, &dims, &ndim, NULL, &initialized));
  HN_EXPECT(dims[1] == 5 && initialized == 1); /* completed at the first forward */
  HN_EXPECT_OK(hn_block_param_data(seq, "p_dense0_weight", &w));
  HN_EXPECT_OK(hn_tensor_copy_to(w, values, sizeof values));
  HN_EXPECT(fabsf(values[0]) <= 0.5f && fabsf(values[7]) <= 0.5f);
  first = values[0];
  /* writing the shared tensor changes the weight, also for the cached graph */
  HN_EXPECT_OK(hn_block_hybridize(seq, 1, 0, 0));
  hn_tensor_free(forward1(seq, x));
  values[0] = first + 1.f;
  HN_EXPECT_OK(hn_tensor_copy_from(w, values, sizeof values));
  y2 = forward1(seq, x);
  HN_EXPECT(!same_values(y, y2));
  hn_tensor_free(y2);
  /* set_data copies; mismatched shapes name the parameter */
  values[0] = first;
  {
    int64_t wshape[2] = {3, 5};
    hn_tensor* restored = NULL;
    HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_FLOAT32, wshape, 2, values, sizeof values, &restored));
    HN_EXPECT_OK(hn_block_param_set_data(seq, "p_dense0_weight", restored));
    hn_tensor_free(restored);
  }
  y2 = forward1(seq, x);
  HN_EXPECT(same_values(y, y2));
  hn_tensor_free(y2);
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_FLOAT32, wrong_shape, 2, NULL, 0, &bad));
  HN_EXPECT_ERR(hn_block_param_set_data(seq, "p_dense0_weight", bad), HN_ERR_SHAPE,
                "parameter 'p_dense0_weight'");
  HN_EXPECT_ERR(hn_block_param_set_data(seq, "nothing", bad), HN_ERR_NOT_FOUND, "'nothing'");
  HN_EXPECT_ERR(hn_block_param_set_data(seq, "p_dense0_weight", NULL), HN_ERR_INVALID_ARGUMENT,
                "'value' is NULL");
  /* one parameter re-drawn, by its full name (a bias keeps its own "zeros" initializer) */
  HN_EXPECT_OK(hn_block_param_initialize(seq, "p_dense1_weight", "ones", 1));
  HN_EXPECT_OK(hn_block_param_initialize(seq, "p_dense1_bias", "ones", 1));
  {
    hn_tensor *b = NULL, *w1 = NULL;
    float bias[2] = {-1.f, -1.f}, weight[6] = {0, 0, 0, 0, 0, 0};
    HN_EXPECT_OK(hn_block_param_data(seq, "p_dense1_bias", &b));
    HN_EXPECT_OK(hn_tensor_copy_to(b, bias, sizeof bias));
    HN_EXPECT(bias[0] == 0.f && bias[1] == 0.f);
    HN_EXPECT_OK(hn_block_param_data(seq, "p_dense1_weight", &w1));
    HN_EXPECT_OK(hn_tensor_copy_to(w1, weight, sizeof weight));
    HN_EXPECT(weight[0] == 1.f && weight[5] == 1.f);
    hn_tensor_free(b);
    hn_tensor_free(w1);
  }
  /* initializer texts */
  HN_EXPECT_ERR(hn_block_param_initialize(seq, NULL, "[\"uniform\", {\"scale\": 0.5", 1),
                HN_ERR_INVALID_ARGUMENT, "dumps()");
  HN_EXPECT_ERR(hn_block_param_initialize(seq, NULL, "[\"uniform\", 3]", 1),
                HN_ERR_INVALID_ARGUMENT, "keyword arguments");
  HN_EXPECT_ERR(hn_block_param_initialize(seq, NULL, "[\"fusedrnn\", {}]", 1), HN_ERR_NOT_FOUND,
                "unknown initializer 'fusedrnn'");
  HN_EXPECT_ERR(hn_block_param_initialize(seq, NULL, "[\"normal\", {\"scale\": 1}]", 1),
                HN_ERR_INVALID_ARGUMENT, "unknown argument 'scale'");
  HN_EXPECT_ERR(hn_block_param_initialize(seq, NULL, "[\"normal\", {\"sigma\": \"big\"}]", 1),
                HN_ERR_INVALID_ARGUMENT, "must be a number");
  HN_EXPECT_ERR(hn_block_param_initialize(seq, "nothing", NULL, 1), HN_ERR_NOT_FOUND, "'nothing'");
  HN_EXPECT_OK(hn_block_param_initialize(seq, NULL,
                                         "[\"xavier\", {\"rnd_type\": \"gaussian\", "
                                         "\"factor_type\": \"in\", \"magnitude\": 2}]",
                                         1));
  HN_EXPECT_ERR(hn_block_param_initialize(NULL, NULL, NULL, 0), HN_ERR_INVALID_ARGUMENT,
                "'block' is NULL");
  HN_EXPECT_ERR(hn_block_param_count(NULL, &count), HN_ERR_INVALID_ARGUMENT, "'block' is NULL");
  HN_EXPECT_ERR(hn_block_param_count(seq, NULL), HN_ERR_INVALID_ARGUMENT, "out_count");
  HN_EXPECT_ERR(hn_block_param_info(NULL, 0, &name, NULL, NULL, NULL, NULL),
                HN_ERR_INVALID_ARGUMENT, "'block' is NULL");
  HN_EXPECT_ERR(hn_block_param_data(seq, NULL, &w), HN_ERR_INVALID_ARGUMENT, "'name' is NULL");
  HN_EXPECT_ERR(hn_block_param_data(seq, "p_dense0_weight", NULL), HN_ERR_INVALID_ARGUMENT,
                "'out'");
  hn_tensor_free(bad);
  hn_tensor_free(w);
  hn_tensor_free(y);
  hn_tensor_free(x);
  hn_block_free(d1);
  hn_block_free(d2);
  hn_block_free(seq);
}

/* ---- the conv/pool/norm layer kinds ------------------------------------------------------- */

static void test_conv_layer_kinds(void) {
  hn_block* net = create("HybridSequential", NULL, NULL, 0);
  hn_block* parts[8];
  hn_block* branch = create("HybridConcurrent", (const char*[]){"axis"}, (const char*[]){"1"}, 1);
  hn_block* bad = NULL;
  int64_t shape[4] = {2, 3, 8, 8};
  hn_tensor* x = filled(shape, 4, 0.f);
  hn_tensor *eager, *hybrid;
  char* text = NULL;
  size_t i;
  parts[0] = create("Conv2D", (const char*[]){"channels", "kernel_size", "padding", "use_bias"},
                    (const char*[]){"4", "3", "(1, 1)", "False"}, 4);
  parts[1] = create("BatchNorm", NULL, NULL, 0);
  parts[2] = create("LeakyReLU", (const char*[]){"alpha"}, (const char*[]){"0.1"}, 1);
  parts[3] =
      create("MaxPool2D", (const char*[]){"pool_size", "strides"}, (const char*[]){"2", "2"}, 2);
  parts[4] = create("Conv2DTranspose", (const char*[]){"channels", "kernel_size", "strides"},
                    (const char*[]){"2", "(2, 2)", "2"}, 3);
  parts[5] = create("AvgPool2D", (const char*[]){"pool_size", "count_include_pad"},
                    (const char*[]){"2", "False"}, 2);
  parts[6] = create("GlobalAvgPool2D", NULL, NULL, 0);
  parts[7] = create("Flatten", NULL, NULL, 0);
  for (i = 0; i < 8; ++i) HN_EXPECT_OK(hn_block_add(net, parts[i]));
  {
    hn_block* b1 = create("Dense", (const char*[]){"units"}, (const char*[]){"3"}, 1);
    hn_block* b2 = create("Identity", NULL, NULL, 0);
    hn_block* act = create("ELU", NULL, NULL, 0);
    HN_EXPECT_OK(hn_block_add(branch, b1));
    HN_EXPECT_OK(hn_block_add(branch, b2));
    HN_EXPECT_OK(hn_block_add(net, branch));
    HN_EXPECT_OK(hn_block_add(net, act));
    hn_block_free(b1);
    hn_block_free(b2);
    hn_block_free(act);
  }
  HN_EXPECT_OK(hn_block_param_initialize(net, NULL, "xavier", 0));
  eager = forward1(net, x);
  HN_EXPECT(dim(eager, 0) == 2 && dim(eager, 1) == 5); /* Dense(3) next to the 2 channels */
  HN_EXPECT_OK(hn_block_hybridize(net, 1, 0, 0));
  hybrid = forward1(net, x);
  HN_EXPECT(same_values(eager, hybrid));
  HN_EXPECT_OK(hn_block_to_string(net, &text));
  HN_EXPECT(text != NULL && strstr(text, "Conv2D(3 -> 4, kernel_size=(3, 3)") != NULL);
  hn_string_free(text);
  /* bad attributes name the layer and the attribute */
  HN_EXPECT_ERR(
      hn_block_create("Conv2D", (const char*[]){"channels"}, (const char*[]){"4"}, 1, &bad),
      HN_ERR_INVALID_ARGUMENT, "'kernel_size' is missing");
  HN_EXPECT_ERR(hn_block_create("Conv2D", (const char*[]){"channels", "kernel_size"},
                                (const char*[]){"4", "(3, 3, 3)"}, 2, &bad),
                HN_ERR_INVALID_ARGUMENT, "kernel_size");
  HN_EXPECT_ERR(hn_block_create("Conv2D", (const char*[]){"channels", "kernel_size"},
                                (const char*[]){"4", "three"}, 2, &bad),
                HN_ERR_INVALID_ARGUMENT, "an int or a tuple");
  HN_EXPECT_ERR(
      hn_block_create("MaxPool2D", (const char*[]){"pool"}, (const char*[]){"2"}, 1, &bad),
      HN_ERR_INVALID_ARGUMENT, "unknown attribute 'pool'");
  HN_EXPECT_ERR(hn_block_create("LeakyReLU", NULL, NULL, 0, &bad), HN_ERR_INVALID_ARGUMENT,
                "'alpha' is missing");
  HN_EXPECT_ERR(
      hn_block_create("BatchNorm", (const char*[]){"axis"}, (const char*[]){"x"}, 1, &bad),
      HN_ERR_INVALID_ARGUMENT, "'axis'");
  /* every factory reads its layer's options: family-specific fields, the act_type alias, bad
   * values and the accepted list come from the options' field list */
  {
    static const struct {
      const char* kind;
      const char* keys[3];
      const char* values[3];
      size_t count;
      const char* message;
    } kCases[] = {
        {"Conv2D",
         {"channels", "kernel_size", "output_padding"},
         {"4", "3", "1"},
         3,
         "Conv2D takes no output_padding"},
        {"MaxPool2D", {"count_include_pad"}, {"False"}, 1, "unknown attribute 'count_include_pad'"},
        {"Activation",
         {"act_type", "activation"},
         {"relu", "tanh"},
         2,
         "give 'activation' or 'act_type', not both"},
        {"PReLU", {"in_channels"}, {"0"}, 1, "in_channels must be >= 1"},
        {"ELU", {"alpha"}, {"one"}, 1, "ELU: attribute 'alpha'='one'"},
        {"Concurrent", {"dim"}, {"1"}, 1, "unknown attribute 'dim' (accepted: axis, prefix)"},
    };
    for (i = 0; i < sizeof kCases / sizeof kCases[0]; ++i) {
      HN_EXPECT_ERR(
          hn_block_create(kCases[i].kind, kCases[i].keys, kCases[i].values, kCases[i].count, &bad),
          HN_ERR_INVALID_ARGUMENT, kCases[i].message);
    }
  }
  HN_EXPECT(bad == NULL);
  for (i = 0; i < 8; ++i) hn_block_free(parts[i]);
  hn_block_free(branch);
  hn_tensor_free(eager);
  hn_tensor_free(hybrid);
  hn_tensor_free(x);
  hn_block_free(net);
}

/* ---- SymbolBlock from a symbol, and the model zoo ----------------------------------------- */

static void test_block_from_symbol(void) {
  hn_symbol* data = NULL;
  hn_symbol* fc = NULL;
  hn_tensor_list* params = NULL;
  hn_tensor_list* partial = NULL;
  hn_block* block = NULL;
  int64_t wshape[2] = {2, 3}, bshape[1] = {2}, xshape[2] = {1, 3};
  float w[6] = {1, 0, 0, 0, 1, 0}, b[2] = {0.5f, -0.5f}, xv[3] = {1, 2, 3}, y[2] = {0, 0};
  hn_tensor *wt = NULL, *bt = NULL, *x = NULL, *out;
  const char* names[1] = {"data"};
  HN_EXPECT_OK(hn_symbol_var("data", &data));
  HN_EXPECT_OK(hn_symbol_create("FullyConnected", &data, 1, (const char*[]){"num_hidden"},
                                (const char*[]){"2"}, 1, "fc", &fc));
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_FLOAT32, wshape, 2, w, sizeof w, &wt));
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_FLOAT32, bshape, 1, b, sizeof b, &bt));
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_FLOAT32, xshape, 2, xv, sizeof xv, &x));
  HN_EXPECT_OK(hn_tensor_list_create(&params));
  HN_EXPECT_OK(hn_tensor_list_append(params, "arg:fc_weight", wt));
  HN_EXPECT_OK(hn_tensor_list_append(params, "fc_bias", bt));
  HN_EXPECT_OK(hn_block_from_symbol(fc, names, 1, params, &block));
  out = forward1(block, x);
  HN_EXPECT_OK(hn_tensor_copy_to(out, y, sizeof y));
  HN_EXPECT(y[0] == 1.5f && y[1] == 1.5f);
  hn_tensor_free(out);
  hn_block_free(block);
  block = NULL;
  /* no values: load or initialize later */
  HN_EXPECT_OK(hn_block_from_symbol(fc, names, 1, NULL, &block));
  HN_EXPECT_ERR(hn_block_forward(block, &x, 1, 1, &out, &(size_t){0}), HN_ERR_INVALID_ARGUMENT,
                "initialize()");
  hn_block_free(block);
  block = NULL;
  /* errors */
  HN_EXPECT_OK(hn_tensor_list_create(&partial));
  HN_EXPECT_OK(hn_tensor_list_append(partial, "fc_weight", wt));
  HN_EXPECT_ERR(hn_block_from_symbol(fc, names, 1, partial, &block), HN_ERR_NOT_FOUND,
                "parameter 'fc_bias' is missing in the parameter list");
  HN_EXPECT_ERR(hn_block_from_symbol(fc, (const char*[]){"nope"}, 1, NULL, &block),
                HN_ERR_NOT_FOUND, "'nope'");
  HN_EXPECT_ERR(hn_block_from_symbol(fc, NULL, 0, NULL, &block), HN_ERR_INVALID_ARGUMENT,
                "data inputs");
  HN_EXPECT_ERR(hn_block_from_symbol(NULL, names, 1, NULL, &block), HN_ERR_INVALID_ARGUMENT,
                "'symbol' is NULL");
  HN_EXPECT_ERR(hn_block_from_symbol(fc, names, 1, NULL, NULL), HN_ERR_INVALID_ARGUMENT, "'out'");
  HN_EXPECT(block == NULL);
  hn_tensor_list_free(partial);
  hn_tensor_list_free(params);
  hn_tensor_free(wt);
  hn_tensor_free(bt);
  hn_tensor_free(x);
  hn_symbol_free(fc);
  hn_symbol_free(data);
}

static void test_model_zoo(void) {
  const char* const* names = NULL;
  size_t count = 0, i;
  int found = 0;
  hn_block* net = NULL;
  int64_t shape[4] = {1, 3, 32, 32};
  hn_tensor *x, *y;
  HN_EXPECT_OK(hn_block_model_names(&names, &count));
  for (i = 0; i < count; ++i) found += strcmp(names[i], "resnet18_v1") == 0;
  HN_EXPECT(count >= 30 && found == 1);
  HN_EXPECT_OK(hn_block_get_model("ResNet18_v1", (const char*[]){"classes", "thumbnail"},
                                  (const char*[]){"10", "True"}, 2, &net));
  HN_EXPECT(strncmp(prefix_of(net), "resnetv1", 8) == 0);
  HN_EXPECT_OK(hn_block_param_initialize(net, NULL, "xavier", 0));
  x = filled(shape, 4, 0.f);
  y = forward1(net, x);
  HN_EXPECT(dim(y, 0) == 1 && dim(y, 1) == 10);
  hn_tensor_free(y);
  hn_tensor_free(x);
  hn_block_free(net);
  net = NULL;
  HN_EXPECT_ERR(hn_block_get_model("resnet19_v1", NULL, NULL, 0, &net), HN_ERR_NOT_FOUND,
                "resnet18_v1");
  HN_EXPECT_ERR(
      hn_block_get_model("vgg11", (const char*[]){"thumbnail"}, (const char*[]){"True"}, 1, &net),
      HN_ERR_INVALID_ARGUMENT, "resnets only");
  HN_EXPECT_ERR(
      hn_block_get_model("vgg11", (const char*[]){"pretrained"}, (const char*[]){"True"}, 1, &net),
      HN_ERR_INVALID_ARGUMENT, "unknown attribute 'pretrained'");
  HN_EXPECT_ERR(
      hn_block_get_model("vgg11", (const char*[]){"classes"}, (const char*[]){"0"}, 1, &net),
      HN_ERR_INVALID_ARGUMENT, "classes");
  HN_EXPECT_ERR(hn_block_get_model(NULL, NULL, NULL, 0, &net), HN_ERR_INVALID_ARGUMENT,
                "'name' is NULL");
  HN_EXPECT_ERR(hn_block_model_names(NULL, &count), HN_ERR_INVALID_ARGUMENT, "out_names");
  HN_EXPECT(net == NULL);
}

/* ---- tensors: shared handles, symbolic values, random draws -------------------------------- */

static void test_tensor_share_and_symbolic(void) {
  int64_t shape[1] = {3};
  float v[3] = {1, 2, 3};
  hn_tensor *t = NULL, *shared = NULL, *sym_t = NULL, *sym_shared = NULL;
  hn_symbol *var = NULL, *back = NULL, *group = NULL, *two[2];
  void *p1 = NULL, *p2 = NULL;
  int symbolic = -1;
  size_t nodes = 0;
  const char* name = NULL;
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_FLOAT32, shape, 1, v, sizeof v, &t));
  HN_EXPECT_OK(hn_tensor_share(t, &shared));
  HN_EXPECT_OK(hn_tensor_data(t, &p1));
  HN_EXPECT_OK(hn_tensor_data(shared, &p2));
  HN_EXPECT(p1 == p2);
  hn_tensor_free(t); /* the storage lives on in the other handle */
  HN_EXPECT_OK(hn_tensor_copy_to(shared, v, sizeof v));
  HN_EXPECT(v[2] == 3.f);
  HN_EXPECT_OK(hn_tensor_is_symbolic(shared, &symbolic));
  HN_EXPECT(symbolic == 0);
  HN_EXPECT_ERR(hn_symbol_from_tensor(shared, &back), HN_ERR_INVALID_ARGUMENT, "concrete");
  /* symbol -> symbolic tensor -> symbol */
  HN_EXPECT_OK(hn_symbol_var("data", &var));
  HN_EXPECT_OK(hn_tensor_from_symbol(var, &sym_t));
  HN_EXPECT_OK(hn_tensor_is_symbolic(sym_t, &symbolic));
  HN_EXPECT(symbolic == 1);
  HN_EXPECT_OK(hn_tensor_share(sym_t, &sym_shared));
  HN_EXPECT_OK(hn_tensor_is_symbolic(sym_shared, &symbolic));
  HN_EXPECT(symbolic == 1);
  HN_EXPECT_ERR(hn_tensor_data(sym_t, &p1), HN_ERR_UNTRACEABLE, "symbolic");
  HN_EXPECT_OK(hn_symbol_from_tensor(sym_shared, &back));
  HN_EXPECT_OK(hn_symbol_num_nodes(back, &nodes));
  HN_EXPECT_OK(hn_symbol_node(back, 0, NULL, &name));
  HN_EXPECT(nodes == 1 && strcmp(name, "data") == 0);
  two[0] = var;
  two[1] = back;
  HN_EXPECT_OK(hn_symbol_group(two, 2, &group));
  HN_EXPECT_ERR(hn_tensor_from_symbol(group, &t), HN_ERR_INVALID_ARGUMENT, "2 outputs");
  /* NULLs */
  HN_EXPECT_ERR(hn_tensor_share(NULL, &t), HN_ERR_INVALID_ARGUMENT, "'tensor' is NULL");
  HN_EXPECT_ERR(hn_tensor_share(shared, NULL), HN_ERR_INVALID_ARGUMENT, "'out'");
  HN_EXPECT_ERR(hn_tensor_is_symbolic(NULL, &symbolic), HN_ERR_INVALID_ARGUMENT,
                "'tensor' is NULL");
  HN_EXPECT_ERR(hn_tensor_is_symbolic(shared, NULL), HN_ERR_INVALID_ARGUMENT, "out_symbolic");
  HN_EXPECT_ERR(hn_symbol_from_tensor(NULL, &back), HN_ERR_INVALID_ARGUMENT, "'tensor' is NULL");
  HN_EXPECT_ERR(hn_symbol_from_tensor(sym_t, NULL), HN_ERR_INVALID_ARGUMENT, "'out'");
  HN_EXPECT_ERR(hn_tensor_from_symbol(NULL, &t), HN_ERR_INVALID_ARGUMENT, "'symbol' is NULL");
  HN_EXPECT_ERR(hn_tensor_from_symbol(var, NULL), HN_ERR_INVALID_ARGUMENT, "'out'");
  hn_symbol_free(group);
  hn_symbol_free(back);
  hn_symbol_free(var);
  hn_tensor_free(sym_shared);
  hn_tensor_free(sym_t);
  hn_tensor_free(shared);
}

static void test_random_tensors(void) {
  int64_t shape[2] = {40, 50};
  int64_t huge[2] = {1 << 30, 1 << 30};
  hn_tensor *a = NULL, *b = NULL, *u = NULL, *d = NULL, *bad = NULL;
  float* p = NULL;
  double sum = 0, sq = 0, mean, var;
  int i, dtype = -1, in_range = 1;
  HN_EXPECT_OK(hn_seed(5));
  HN_EXPECT_OK(hn_tensor_random_normal(HN_DTYPE_FLOAT32, shape, 2, 1.0, 2.0, &a));
  HN_EXPECT_OK(hn_seed(5));
  HN_EXPECT_OK(hn_tensor_random_normal(HN_DTYPE_FLOAT32, shape, 2, 1.0, 2.0, &b));
  HN_EXPECT(same_values(a, b)); /* the same seed, the same draws */
  HN_EXPECT_OK(hn_tensor_data(a, (void**)&p));
  for (i = 0; p != NULL && i < 2000; ++i) {
    sum += p[i];
    sq += (double)p[i] * p[i];
  }
  mean = sum / 2000;
  var = sq / 2000 - mean * mean;
  HN_EXPECT(fabs(mean - 1.0) < 0.2 && fabs(sqrt(var) - 2.0) < 0.2);
  HN_EXPECT_OK(hn_tensor_random_uniform(HN_DTYPE_FLOAT32, shape, 2, -3.0, -1.0, &u));
  HN_EXPECT_OK(hn_tensor_data(u, (void**)&p));
  for (i = 0; p != NULL && i < 2000; ++i) in_range = in_range && p[i] >= -3.f && p[i] < -1.f;
  HN_EXPECT(in_range);
  HN_EXPECT_OK(hn_tensor_random_uniform(HN_DTYPE_FLOAT64, shape, 1, 0.0, 1.0, &d));
  HN_EXPECT_OK(hn_tensor_dtype(d, &dtype));
  HN_EXPECT(dtype == HN_DTYPE_FLOAT64);
  HN_EXPECT_OK(hn_tensor_random_uniform(HN_DTYPE_FLOAT32, shape, 0, 2.0, 2.0, &bad)); /* scalar */
  hn_tensor_free(bad);
  bad = NULL;
  HN_EXPECT_ERR(hn_tensor_random_normal(HN_DTYPE_INT32, shape, 2, 0.0, 1.0, &bad), HN_ERR_DTYPE,
                "int32");
  HN_EXPECT_ERR(hn_tensor_random_normal(HN_DTYPE_FLOAT32, shape, 2, 0.0, -1.0, &bad),
                HN_ERR_INVALID_ARGUMENT, "stddev >= 0");
  HN_EXPECT_ERR(hn_tensor_random_normal(HN_DTYPE_FLOAT32, shape, 2, NAN, 1.0, &bad),
                HN_ERR_INVALID_ARGUMENT, "finite mean");
  HN_EXPECT_ERR(hn_tensor_random_uniform(HN_DTYPE_FLOAT32, shape, 2, 1.0, 0.0, &bad),
                HN_ERR_INVALID_ARGUMENT, "low <= high");
  HN_EXPECT_ERR(hn_tensor_random_uniform(HN_DTYPE_FLOAT32, shape, 2, -INFINITY, 0.0, &bad),
                HN_ERR_INVALID_ARGUMENT, "finite bounds");
  HN_EXPECT_ERR(hn_tensor_random_uniform(HN_DTYPE_FLOAT32, huge, 2, 0.0, 1.0, &bad),
                HN_ERR_OUT_OF_MEMORY, "limit");
  HN_EXPECT_ERR(hn_tensor_random_uniform(HN_DTYPE_FLOAT32, NULL, 2, 0.0, 1.0, &bad),
                HN_ERR_INVALID_ARGUMENT, "");
  HN_EXPECT_ERR(hn_tensor_random_normal(HN_DTYPE_FLOAT32, shape, 2, 0.0, 1.0, NULL),
                HN_ERR_INVALID_ARGUMENT, "'out'");
  HN_EXPECT(bad == NULL);
  hn_tensor_free(a);
  hn_tensor_free(b);
  hn_tensor_free(u);
  hn_tensor_free(d);
}

/* ---- op input names ---------------------------------------------------------------------- */

static void test_op_input_names(void) {
  const char* const* names = NULL;
  const char* key = NULL;
  size_t count = 0;
  HN_EXPECT_OK(hn_op_input_names("FullyConnected", (const char*[]){"num_hidden"},
                                 (const char*[]){"4"}, 1, &names, &count));
  HN_EXPECT(count == 3 && strcmp(names[0], "data") == 0 && strcmp(names[1], "weight") == 0 &&
            strcmp(names[2], "bias") == 0);
  HN_EXPECT_OK(hn_op_input_names("FullyConnected", (const char*[]){"num_hidden", "no_bias"},
                                 (const char*[]){"4", "True"}, 2, &names, &count));
  HN_EXPECT(count == 2);
  HN_EXPECT_OK(hn_op_input_names("Concat", (const char*[]){"num_args"}, (const char*[]){"3"}, 1,
                                 &names, &count));
  HN_EXPECT(count == 3);
  HN_EXPECT_OK(hn_op_input_names("relu", NULL, NULL, 0, &names, &count));
  HN_EXPECT(count == 1 && strcmp(names[0], "data") == 0);
  HN_EXPECT_OK(hn_op_input_names("_Plus", NULL, NULL, 0, &names, &count)); /* an alias */
  HN_EXPECT(count == 2 && strcmp(names[0], "lhs") == 0);
  HN_EXPECT_ERR(hn_op_input_names("FullyConnected", NULL, NULL, 0, &names, &count),
                HN_ERR_INVALID_ARGUMENT, "num_hidden");
  HN_EXPECT_ERR(hn_op_input_names("NoSuchOp", NULL, NULL, 0, &names, &count), HN_ERR_NOT_FOUND,
                "NoSuchOp");
  HN_EXPECT_ERR(hn_op_input_names(NULL, NULL, NULL, 0, &names, &count), HN_ERR_INVALID_ARGUMENT,
                "'op_name' is NULL");
  HN_EXPECT_ERR(hn_op_input_names("relu", NULL, NULL, 0, NULL, &count), HN_ERR_INVALID_ARGUMENT,
                "out_names");
  HN_EXPECT_ERR(hn_op_input_names("relu", NULL, NULL, 0, &names, NULL), HN_ERR_INVALID_ARGUMENT,
                "out_count");
  HN_EXPECT_OK(hn_op_key_var_num_args("Concat", &key));
  HN_EXPECT(key != NULL && strcmp(key, "num_args") == 0);
  HN_EXPECT_OK(hn_op_key_var_num_args("relu", &key));
  HN_EXPECT(key != NULL && key[0] == '\0');
  HN_EXPECT_ERR(hn_op_key_var_num_args("NoSuchOp", &key), HN_ERR_NOT_FOUND, "NoSuchOp");
  HN_EXPECT_ERR(hn_op_key_var_num_args("relu", NULL), HN_ERR_INVALID_ARGUMENT, "out_key");
}

HN_TEST_MAIN(custom,
             HN_RUN(test_custom_block_eager_traced_and_exported)
                 HN_RUN(test_custom_block_plain_and_failing) HN_RUN(test_custom_block_errors)
                     HN_RUN(test_name_in_scope) HN_RUN(test_parameters)
                         HN_RUN(test_conv_layer_kinds) HN_RUN(test_block_from_symbol)
                             HN_RUN(test_model_zoo) HN_RUN(test_tensor_share_and_symbolic)
                                 HN_RUN(test_random_tensors) HN_RUN(test_op_input_names))
