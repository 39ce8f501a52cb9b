/* C API: mx.viz for symbols (hn_symbol_print_summary, hn_symbol_plot_network, hn_symbol_as_run)
 * and Block.summary (hn_block_summary). The texts are checked byte for byte against real MXNet
 * 1.9.1 by tests/golden/viz; here: the layout rules, the counts, ownership and the errors. */
#include "hn_test.h"

/* One table row as print_summary lays it out: columns end at 52, 76, 88 and 120 (MXNet's
 * positions .44, .64, .74, 1. of 120 characters), each field cut or padded to its column. */
static void row(char* out, const char* layer, const char* shape, const char* params,
                const char* previous) {
  sprintf(out, "%-52.52s%-24.24s%-12.12s%-32.32s\n", layer, shape, params, previous);
}

/* One Block.summary row: '{:>20}  {:>42} {:>15}'. */
static void block_row(char* out, const char* layer, const char* shape, const char* params) {
  sprintf(out, "%20s  %42s %15s\n", layer, shape, params);
}

static int contains(const char* text, const char* part) {
  return text != NULL && strstr(text, part) != NULL;
}

static void test_print_summary(void) {
  hn_symbol* s = hn_test_symbol_mlp();
  const char* names[1] = {"data"};
  int ndims[1] = {2};
  int64_t dims[2] = {2, 8};
  char* text = NULL;
  char expected[256];
  char line[130];
  HN_EXPECT_OK(hn_symbol_print_summary(s, 1, names, ndims, dims, 0, NULL, 0, &text));
  memset(line, '_', 120);
  line[120] = '\n';
  line[121] = '\0';
  HN_EXPECT(text != NULL && strncmp(text, line, 121) == 0);
  row(expected, "Layer (type)", "Output Shape", "Param #", "Previous Layer");
  HN_EXPECT(contains(text, expected));
  row(expected, "data(null)", "8", "0", "");
  HN_EXPECT(contains(text, expected));
  row(expected, "fc1(FullyConnected)", "4", "36", "data"); /* (8 + 1) * 4 */
  HN_EXPECT(contains(text, expected));
  row(expected, "relu1(Activation)", "4", "0", "fc1");
  HN_EXPECT(contains(text, expected));
  HN_EXPECT(contains(text, "\nTotal params: 36\n"));
  hn_string_free(text);

  /* Without shapes (MXNet's shape=None): no shape column; FullyConnected counts its bias only. */
  HN_EXPECT_OK(hn_symbol_print_summary(s, 0, NULL, NULL, NULL, 0, NULL, 0, &text));
  row(expected, "fc1(FullyConnected)", "", "4", "data");
  HN_EXPECT(contains(text, expected));
  hn_string_free(text);

  /* Absolute positions and another width. */
  {
    const double positions[4] = {20, 30, 36, 60};
    HN_EXPECT_OK(hn_symbol_print_summary(s, 1, names, ndims, dims, 60, positions, 4, &text));
    HN_EXPECT(contains(text, "fc1(FullyConnected) 4         36    data                    \n"));
    hn_string_free(text);
  }
  hn_symbol_free(s);
}

static void test_summary_errors(void) {
  hn_symbol* s = hn_test_symbol_mlp();
  const char* names[1] = {"fc1_weight"};
  int ndims[1] = {2};
  int64_t dims[2] = {4, 8};
  const double two[2] = {.5, 1.};
  const double falling[4] = {.5, .4, .7, 1.};
  char* text = NULL;
  /* The weight's shape alone leaves the input's batch size unknown: the error names data. */
  HN_EXPECT_ERR(hn_symbol_print_summary(s, 1, names, ndims, dims, 0, NULL, 0, &text), HN_ERR_SHAPE,
                "data");
  HN_EXPECT(text == NULL);
  names[0] = "nothing";
  HN_EXPECT_ERR(hn_symbol_print_summary(s, 1, names, ndims, dims, 0, NULL, 0, &text),
                HN_ERR_NOT_FOUND, "'nothing'");
  HN_EXPECT_ERR(hn_symbol_print_summary(s, 0, NULL, NULL, NULL, 0, two, 2, &text),
                HN_ERR_INVALID_ARGUMENT, "4");
  HN_EXPECT_ERR(hn_symbol_print_summary(s, 0, NULL, NULL, NULL, 0, falling, 4, &text),
                HN_ERR_INVALID_ARGUMENT, "increase");
  /* MXNet reads the second dimension of every layer input: a 1-D input fails, as in MXNet. */
  {
    hn_symbol* x = NULL;
    hn_symbol* relu = NULL;
    const char* act_keys[1] = {"act_type"};
    const char* act_values[1] = {"relu"};
    const char* x_names[1] = {"x"};
    int x_ndims[1] = {1};
    int64_t x_dims[1] = {8};
    HN_EXPECT_OK(hn_symbol_var("x", &x));
    HN_EXPECT_OK(hn_symbol_create("Activation", &x, 1, act_keys, act_values, 1, "act", &relu));
    HN_EXPECT_ERR(hn_symbol_print_summary(relu, 1, x_names, x_ndims, x_dims, 0, NULL, 0, &text),
                  HN_ERR_SHAPE, "input 'x' of node 'act', which has shape (8,)");
    hn_symbol_free(x);
    hn_symbol_free(relu);
  }
  HN_EXPECT_ERR(hn_symbol_print_summary(NULL, 0, NULL, NULL, NULL, 0, NULL, 0, &text),
                HN_ERR_INVALID_ARGUMENT, "'symbol' is NULL");
  HN_EXPECT_ERR(hn_symbol_print_summary(s, 0, NULL, NULL, NULL, 0, NULL, 0, NULL),
                HN_ERR_INVALID_ARGUMENT, "'out' is NULL");
  HN_EXPECT(text == NULL);
  hn_symbol_free(s);
}

static void test_plot_network(void) {
  hn_symbol* s = hn_test_symbol_mlp();
  const char* names[1] = {"data"};
  int ndims[1] = {2};
  int64_t dims[2] = {2, 8};
  const char* type_names[1] = {"data"};
  int types[1] = {HN_DTYPE_FLOAT32};
  const char* keys[1] = {"shape"};
  const char* values[1] = {"ellipse"};
  char* dot = NULL;
  HN_EXPECT_OK(
      hn_symbol_plot_network(s, NULL, 0, NULL, NULL, NULL, 0, NULL, NULL, 0, NULL, NULL, 1, &dot));
  HN_EXPECT(dot != NULL && strncmp(dot, "digraph plot {\n", 15) == 0);
  HN_EXPECT(contains(dot,
                     "\tdata [label=data fillcolor=\"#8dd3c7\" fixedsize=true "
                     "height=0.8034 shape=oval style=filled width=1.3]\n"));
  HN_EXPECT(contains(dot, "\tfc1 [label=\"FullyConnected\n4\" fillcolor=\"#fb8072\""));
  HN_EXPECT(contains(dot, "\trelu1 [label=\"Activation\nrelu\" fillcolor=\"#ffffb3\""));
  HN_EXPECT(contains(dot, "\tfc1 -> data [label=\"\" arrowtail=open dir=back]\n"));
  HN_EXPECT(contains(dot, "\trelu1 -> fc1 [label=\"\" arrowtail=open dir=back]\n}"));
  HN_EXPECT(!contains(dot, "fc1_weight")); /* hidden */
  hn_string_free(dot);

  HN_EXPECT_OK(hn_symbol_plot_network(s, "mlp graph", 1, names, ndims, dims, 1, type_names, types,
                                      1, keys, values, 0, &dot));
  HN_EXPECT(dot != NULL && strncmp(dot, "digraph \"mlp graph\" {\n", 22) == 0);
  HN_EXPECT(contains(dot, "\tfc1 -> data [label=\"8(float32)\" arrowtail=open dir=back]\n"));
  HN_EXPECT(contains(dot, "\trelu1 -> fc1 [label=\"4(float32)\" arrowtail=open dir=back]\n"));
  /* Weights shown: an edge to a variable drawn by Graphviz alone (no node statement). */
  HN_EXPECT(contains(dot, "\tfc1 -> fc1_weight [label=\"8(float32)\""));
  HN_EXPECT(!contains(dot, "\tfc1_weight ["));
  HN_EXPECT(contains(dot, "shape=ellipse"));
  hn_string_free(dot);

  names[0] = "fc1_bias";
  HN_EXPECT_ERR(
      hn_symbol_plot_network(s, NULL, 1, names, ndims, dims, 0, NULL, NULL, 0, NULL, NULL, 1, &dot),
      HN_ERR_SHAPE, "");
  hn_symbol_free(s);
}

static void test_as_run(void) {
  hn_symbol* s = hn_test_symbol_mlp();
  hn_symbol* run = NULL;
  const char* names[1] = {"data"};
  int ndims[1] = {2};
  int64_t dims[2] = {2, 8};
  char* text = NULL;
  HN_EXPECT_OK(hn_symbol_as_run(s, 1, names, ndims, dims, &run));
  /* FullyConnected + relu run as one fused kernel. */
  HN_EXPECT_OK(hn_symbol_print_summary(run, 1, names, ndims, dims, 0, NULL, 0, &text));
  HN_EXPECT(contains(text, "(_hn_fully_connected_act)"));
  HN_EXPECT(!contains(text, "(Activation)"));
  hn_string_free(text);
  hn_symbol_free(run);
  run = NULL;
  HN_EXPECT_ERR(hn_symbol_as_run(s, 0, NULL, NULL, NULL, &run), HN_ERR_SHAPE, "data");
  HN_EXPECT(run == NULL);
  hn_symbol_free(s);
}

static hn_block* dense(const char* units) {
  const char* keys[1] = {"units"};
  const char* values[1];
  hn_block* b = NULL;
  values[0] = units;
  HN_EXPECT_OK(hn_block_create("Dense", keys, values, 1, &b));
  return b;
}

static void test_block_summary(void) {
  hn_block* net = NULL;
  hn_block* d1 = dense("16");
  hn_block* d2 = dense("4");
  hn_tensor* x = NULL;
  int64_t shape[2] = {3, 8};
  char* text = NULL;
  char expected[128];
  char dashes[82];
  HN_EXPECT_OK(hn_block_create("HybridSequential", NULL, NULL, 0, &net));
  HN_EXPECT_OK(hn_block_add(net, d1));
  HN_EXPECT_OK(hn_block_add(net, d2));
  HN_EXPECT_OK(hn_block_initialize(net, "xavier", 7, 0));
  HN_EXPECT_OK(hn_tensor_create(HN_DTYPE_FLOAT32, shape, 2, NULL, 0, &x));
  HN_EXPECT_OK(hn_block_summary(net, &x, 1, &text));
  memset(dashes, '-', 80);
  dashes[80] = '\n';
  dashes[81] = '\0';
  HN_EXPECT(text != NULL && strncmp(text, dashes, 81) == 0);
  /* Right-aligned columns; the container has no row. */
  block_row(expected, "Layer (type)", "Output Shape", "Param #");
  HN_EXPECT(contains(text, expected));
  block_row(expected, "Input", "(3, 8)", "0");
  HN_EXPECT(contains(text, expected));
  block_row(expected, "Dense-1", "(3, 16)", "144"); /* 16 * 8 + 16 */
  HN_EXPECT(contains(text, expected));
  block_row(expected, "Dense-2", "(3, 4)", "68"); /* 4 * 16 + 4 */
  HN_EXPECT(contains(text, expected));
  HN_EXPECT(!contains(text, "HybridSequential"));
  HN_EXPECT(contains(text,
                     "   Total params: 212\n   Trainable params: 212\n"
                     "   Non-trainable params: 0\n"
                     "Shared params in forward computation graph: 0\n"
                     "Unique parameters in model: 212\n"));
  hn_string_free(text);
  text = NULL;

  HN_EXPECT_OK(hn_block_hybridize(net, 1, 0, 0));
  HN_EXPECT_ERR(hn_block_summary(net, &x, 1, &text), HN_ERR_INVALID_ARGUMENT,
                "must not be hybridized to print summary");
  HN_EXPECT(text == NULL);
  HN_EXPECT_ERR(hn_block_summary(NULL, &x, 1, &text), HN_ERR_INVALID_ARGUMENT, "'block' is NULL");
  hn_tensor_free(x);
  hn_block_free(d1);
  hn_block_free(d2);
  hn_block_free(net);
}

HN_TEST_MAIN(viz, HN_RUN(test_print_summary) HN_RUN(test_summary_errors) HN_RUN(test_plot_network)
                      HN_RUN(test_as_run) HN_RUN(test_block_summary))
