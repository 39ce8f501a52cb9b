/* The C side of the Python benchmark (bench/python_mlp_bench.py starts it and sends it work):
 * the seed MLP at batch 1 through the C API, making the calls the Python package makes.
 *
 *   python_capi_worker predictor PREFIX X.npy   hn_predictor_set_input (a copy) + forward +
 *                                               hn_predictor_get_output on PREFIX's export
 *   python_capi_worker block PARAMS X.npy       HybridSequential(Dense(256, relu), Dense(128,
 *                                               relu), Dense(2)) made with hn_block_*, PARAMS
 *                                               (save_parameters) loaded, hybridized;
 *                                               hn_block_forward + hn_tensor_free of the output
 *
 * Prints "output=<y0>,<y1>" (%.9g), then reads forward counts from stdin, one per line, and
 * answers each with the microseconds per forward of that many forwards. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "hybridnet/c_api.h"

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int failed(const char* call) {
  fprintf(stderr, "python_capi_worker: %s: %s: %s\n", call, hn_status_name(hn_last_error_code()),
          hn_last_error());
  return 1;
}

struct predictor_run {
  hn_predictor* predictor;
  const int64_t* dims;
  int ndim;
  void* x;
  size_t x_bytes;
  float y[2];
};

static int predictor_forward(struct predictor_run* r) {
  return hn_predictor_set_input(r->predictor, "data", HN_DTYPE_FLOAT32, r->dims, r->ndim, r->x,
                                r->x_bytes) == HN_OK &&
                 hn_predictor_forward(r->predictor) == HN_OK &&
                 hn_predictor_get_output(r->predictor, 0, r->y, sizeof r->y) == HN_OK
             ? HN_OK
             : -1;
}

struct block_run {
  hn_block* net;
  hn_tensor* x;
  float y[2];
};

static int block_forward(struct block_run* r, int keep) {
  hn_tensor* out = NULL;
  size_t n = 0;
  int rc = hn_block_forward(r->net, &r->x, 1, 1, &out, &n);
  if (rc == HN_OK && keep) rc = hn_tensor_copy_to(out, r->y, sizeof r->y);
  hn_tensor_free(out);
  return rc;
}

static hn_block* seed_mlp(const char* params) {
  const char* units[3] = {"256", "128", "2"};
  const char* keys[2] = {"units", "activation"};
  hn_block* net = NULL;
  int i;
  if (hn_block_create("HybridSequential", NULL, NULL, 0, &net) != HN_OK) return NULL;
  for (i = 0; i < 3; ++i) {
    const char* values[2];
    hn_block* dense = NULL;
    values[0] = units[i];
    values[1] = "relu";
    if (hn_block_create("Dense", keys, values, i < 2 ? 2 : 1, &dense) != HN_OK ||
        hn_block_add(net, dense) != HN_OK) {
      hn_block_free(dense);
      hn_block_free(net);
      return NULL;
    }
    hn_block_free(dense);
  }
  if (hn_block_load_parameters(net, params, 0, 0) != HN_OK ||
      hn_block_hybridize(net, 1, 0, 0) != HN_OK) {
    hn_block_free(net);
    return NULL;
  }
  return net;
}

int main(int argc, char** argv) {
  struct predictor_run pr;
  struct block_run br;
  hn_model* model = NULL;
  hn_tensor* x = NULL;
  int block_mode, count, i, rc = 0;
  if (argc != 4 || (strcmp(argv[1], "predictor") != 0 && strcmp(argv[1], "block") != 0)) {
    fprintf(stderr, "usage: python_capi_worker predictor PREFIX X.npy | block PARAMS X.npy\n");
    return 2;
  }
  block_mode = strcmp(argv[1], "block") == 0;
  if (hn_set_num_threads(1) != HN_OK) return failed("hn_set_num_threads");
  if (hn_tensor_load_npy(argv[3], &x) != HN_OK) return failed("hn_tensor_load_npy");
  memset(&pr, 0, sizeof pr);
  memset(&br, 0, sizeof br);
  if (block_mode) {
    br.x = x;
    if ((br.net = seed_mlp(argv[2])) == NULL) return failed("building the MLP");
    if (block_forward(&br, 1) != HN_OK) return failed("hn_block_forward");
    printf("output=%.9g,%.9g\n", (double)br.y[0], (double)br.y[1]);
  } else {
    if (hn_model_load(argv[2], 0, &model) != HN_OK) return failed("hn_model_load");
    if (hn_predictor_create(model, &pr.predictor) != HN_OK) return failed("hn_predictor_create");
    if (hn_tensor_shape(x, &pr.dims, &pr.ndim) != HN_OK || hn_tensor_data(x, &pr.x) != HN_OK ||
        hn_tensor_nbytes(x, &pr.x_bytes) != HN_OK)
      return failed("reading the input");
    if (predictor_forward(&pr) != HN_OK) return failed("the predictor");
    printf("output=%.9g,%.9g\n", (double)pr.y[0], (double)pr.y[1]);
  }
  fflush(stdout);
  while (rc == 0 && scanf("%d", &count) == 1 && count > 0) {
    double start = seconds();
    for (i = 0; i < count && rc == 0; ++i)
      rc = block_mode ? block_forward(&br, 0) : predictor_forward(&pr);
    if (rc != 0) return failed("a forward");
    printf("%.4f\n", (seconds() - start) * 1e6 / count);
    fflush(stdout);
  }
  hn_block_free(br.net);
  hn_predictor_free(pr.predictor);
  hn_model_free(model);
  hn_tensor_free(x);
  return 0;
}
