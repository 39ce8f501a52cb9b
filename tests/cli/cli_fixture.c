/*
 * Helper of the CLI tests, itself a C API client (C99):
 *   cli_fixture export DIR           DIR/cli_mlp-symbol.json + -0000.params (an MLP written by
 *                                    the C API), DIR/cli_x.npy (1, 8) and DIR/cli_ref.npy (its
 *                                    output computed eagerly by the block)
 *   cli_fixture npy PATH D1,D2,...   a float32 .npy of that shape with a fixed pattern
 *   cli_fixture heads DIR            DIR/heads-symbol.json + -0000.params (no parameters): the
 *                                    outputs Flatten(relu(x)) and sigmoid(tanh(x)), a view head
 *                                    whose buffer a later node could recycle; DIR/heads_x.npy
 *   cli_fixture chain DIR N          DIR/chain-symbol.json + -0000.params: data -> relu x N (a
 *                                    hostile file's depth), DIR/chain_x.npy (2, 3)
 *   cli_fixture repeated DIR         DIR/repeated-symbol.json + -0000.params: the heads
 *                                    sigmoid(x), relu(x), sigmoid(x), the first and last the
 *                                    same node output (as a monodepth2 export repeats its
 *                                    sigmoid); DIR/repeated_x.npy (2, 3) and the expected
 *                                    DIR/repeated_sigmoid.npy, DIR/repeated_relu.npy
 *   cli_fixture compare A.npy B.npy TOL   same shape and every |a - b| <= TOL
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hybridnet/c_api.h"

static int fail(const char* what) {
  fprintf(stderr, "cli_fixture: %s: %s: %s\n", what, hn_status_name(hn_last_error_code()),
          hn_last_error());
  return 1;
}

/* A float32 .npy of a fixed pattern in [-1, 1], or of `map` applied to it when not NULL. */
static int write_pattern_mapped(const char* path, const int64_t* shape, int ndim,
                                float (*map)(float)) {
  hn_tensor* t = NULL;
  float* data = NULL;
  int64_t size = 1, i;
  int d, rc;
  for (d = 0; d < ndim; ++d) size *= shape[d];
  if (hn_tensor_create(HN_DTYPE_FLOAT32, shape, ndim, NULL, 0, &t) != HN_OK) return fail("create");
  hn_tensor_data(t, (void**)&data);
  for (i = 0; i < size; ++i) {
    data[i] = (float)((i * 13) % 19) / 9.f - 1.f;
    if (map != NULL) data[i] = map(data[i]);
  }
  rc = hn_tensor_save_npy(t, path) == HN_OK ? 0 : fail(path);
  hn_tensor_free(t);
  return rc;
}

static int write_pattern(const char* path, const int64_t* shape, int ndim) {
  return write_pattern_mapped(path, shape, ndim, NULL);
}

static int export_mlp(const char* dir) {
  const char* k1[2] = {"units", "activation"};
  const char* v1[2] = {"16", "relu"};
  const char* k2[1] = {"units"};
  const char* v2[1] = {"3"};
  char prefix[1024], x_path[1024], ref_path[1024];
  int64_t shape[2] = {1, 8};
  hn_block *net = NULL, *d1 = NULL, *d2 = NULL;
  hn_tensor *x = NULL, *y = NULL;
  size_t n = 0;
  int rc = 0;
  snprintf(prefix, sizeof prefix, "%s/cli_mlp", dir);
  snprintf(x_path, sizeof x_path, "%s/cli_x.npy", dir);
  snprintf(ref_path, sizeof ref_path, "%s/cli_ref.npy", dir);
  if (write_pattern(x_path, shape, 2) != 0) return 1;
  if (hn_block_create("HybridSequential", NULL, NULL, 0, &net) != HN_OK ||
      hn_block_create("Dense", k1, v1, 2, &d1) != HN_OK ||
      hn_block_create("Dense", k2, v2, 1, &d2) != HN_OK || hn_block_add(net, d1) != HN_OK ||
      hn_block_add(net, d2) != HN_OK || hn_block_initialize(net, "xavier", 3, 0) != HN_OK ||
      hn_tensor_load_npy(x_path, &x) != HN_OK || hn_block_forward(net, &x, 1, 1, &y, &n) != HN_OK ||
      hn_tensor_save_npy(y, ref_path) != HN_OK) {
    rc = fail("building the MLP");
  } else {
    hn_tensor_free(y);
    y = NULL;
    if (hn_block_hybridize(net, 1, 0, 0) != HN_OK ||
        hn_block_forward(net, &x, 1, 1, &y, &n) != HN_OK ||
        hn_block_export(net, prefix, 0) != HN_OK) {
      rc = fail("exporting the MLP");
    } else {
      printf("wrote %s-symbol.json, %s-0000.params, %s, %s\n", prefix, prefix, x_path, ref_path);
    }
  }
  hn_tensor_free(x);
  hn_tensor_free(y);
  hn_block_free(d1);
  hn_block_free(d2);
  hn_block_free(net);
  return rc;
}

static int compare(const char* a_path, const char* b_path, double tolerance) {
  hn_tensor *a = NULL, *b = NULL;
  const int64_t *da, *db;
  int na, nb, d, rc = 0;
  int64_t size = 1, i;
  float *pa = NULL, *pb = NULL;
  double worst = 0;
  if (hn_tensor_load_npy(a_path, &a) != HN_OK) return fail(a_path);
  if (hn_tensor_load_npy(b_path, &b) != HN_OK) {
    hn_tensor_free(a);
    return fail(b_path);
  }
  hn_tensor_shape(a, &da, &na);
  hn_tensor_shape(b, &db, &nb);
  if (na != nb) rc = 1;
  for (d = 0; rc == 0 && d < na; ++d) {
    if (da[d] != db[d]) rc = 1;
    size *= da[d];
  }
  if (rc != 0) {
    fprintf(stderr, "cli_fixture: %s and %s have different shapes\n", a_path, b_path);
  } else if (hn_tensor_data(a, (void**)&pa) != HN_OK || hn_tensor_data(b, (void**)&pb) != HN_OK) {
    rc = fail("data");
  } else {
    for (i = 0; i < size; ++i) {
      double diff = fabs((double)pa[i] - (double)pb[i]);
      if (!(diff <= worst)) worst = diff;
    }
    rc = worst <= tolerance ? 0 : 1;
    printf("max |a - b| = %g over %lld values (tolerance %g): %s\n", worst, (long long)size,
           tolerance, rc == 0 ? "same" : "DIFFERENT");
  }
  hn_tensor_free(a);
  hn_tensor_free(b);
  return rc;
}

static hn_symbol* unary(const char* op, hn_symbol* in, const char* name) {
  hn_symbol* out = NULL;
  if (hn_symbol_create(op, &in, 1, NULL, NULL, 0, name, &out) != HN_OK) fail(op);
  return out;
}

static int export_heads(const char* dir) {
  char path[1024];
  hn_symbol *x = NULL, *relu, *tanh_, *parts[2], *heads = NULL;
  hn_tensor_list* no_params = NULL;
  char* json = NULL;
  FILE* f;
  int rc = 1;
  const int64_t shape[3] = {2, 3, 4};
  if (hn_symbol_var("data", &x) != HN_OK) return fail("var");
  relu = unary("relu", x, "relu0");
  parts[0] = unary("Flatten", relu, "head_flat");
  tanh_ = unary("tanh", x, "tanh0");
  parts[1] = unary("sigmoid", tanh_, "head_sig");
  if (hn_symbol_group(parts, 2, &heads) != HN_OK || hn_symbol_to_json(heads, &json) != HN_OK) {
    fail("group");
  } else if (hn_tensor_list_create(&no_params) != HN_OK) {
    fail("params");
  } else {
    snprintf(path, sizeof path, "%s/heads-symbol.json", dir);
    f = fopen(path, "wb");
    if (f != NULL && fputs(json, f) >= 0 && fclose(f) == 0) {
      snprintf(path, sizeof path, "%s/heads-0000.params", dir);
      if (hn_tensor_list_save(no_params, path) != HN_OK) {
        fail(path);
      } else {
        snprintf(path, sizeof path, "%s/heads_x.npy", dir);
        rc = write_pattern(path, shape, 3);
      }
    } else {
      fprintf(stderr, "cli_fixture: cannot write %s\n", path);
    }
  }
  hn_tensor_list_free(no_params);
  hn_string_free(json);
  hn_symbol_free(heads);
  hn_symbol_free(parts[1]);
  hn_symbol_free(tanh_);
  hn_symbol_free(parts[0]);
  hn_symbol_free(relu);
  hn_symbol_free(x);
  return rc;
}

static int export_chain(const char* dir, long depth) {
  char path[1024];
  FILE* f;
  long i;
  hn_tensor_list* no_params = NULL;
  const int64_t shape[2] = {2, 3};
  int ok;
  snprintf(path, sizeof path, "%s/chain-symbol.json", dir);
  f = fopen(path, "wb");
  if (f == NULL) return fail(path);
  fputs("{\"nodes\": [{\"op\": \"null\", \"name\": \"data\", \"inputs\": []}", f);
  for (i = 1; i <= depth; ++i)
    fprintf(f, ", {\"op\": \"relu\", \"name\": \"r%ld\", \"inputs\": [[%ld, 0, 0]]}", i, i - 1);
  fprintf(f,
          "], \"arg_nodes\": [0], \"heads\": [[%ld, 0, 0]], \"attrs\": {\"mxnet_version\": "
          "[\"int\", 10901]}}",
          depth);
  ok = fclose(f) == 0;
  snprintf(path, sizeof path, "%s/chain-0000.params", dir);
  if (!ok || hn_tensor_list_create(&no_params) != HN_OK ||
      hn_tensor_list_save(no_params, path) != HN_OK) {
    hn_tensor_list_free(no_params);
    return fail(path);
  }
  hn_tensor_list_free(no_params);
  snprintf(path, sizeof path, "%s/chain_x.npy", dir);
  return write_pattern(path, shape, 2);
}

static float sigmoid(float x) { return 1.f / (1.f + expf(-x)); }
static float relu(float x) { return x > 0.f ? x : 0.f; }

static int export_repeated(const char* dir) {
  char path[1024];
  FILE* f;
  hn_tensor_list* no_params = NULL;
  const int64_t shape[2] = {2, 3};
  int ok;
  snprintf(path, sizeof path, "%s/repeated-symbol.json", dir);
  f = fopen(path, "wb");
  if (f == NULL) return fail(path);
  fputs(
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"data\", \"inputs\": []}, "
      "{\"op\": \"sigmoid\", \"name\": \"disp_sigmoid0\", \"inputs\": [[0, 0, 0]]}, "
      "{\"op\": \"relu\", \"name\": \"relu0\", \"inputs\": [[0, 0, 0]]}], "
      "\"arg_nodes\": [0], \"heads\": [[1, 0, 0], [2, 0, 0], [1, 0, 0]], "
      "\"attrs\": {\"mxnet_version\": [\"int\", 10901]}}",
      f);
  ok = fclose(f) == 0;
  snprintf(path, sizeof path, "%s/repeated-0000.params", dir);
  if (!ok || hn_tensor_list_create(&no_params) != HN_OK ||
      hn_tensor_list_save(no_params, path) != HN_OK) {
    hn_tensor_list_free(no_params);
    return fail(path);
  }
  hn_tensor_list_free(no_params);
  snprintf(path, sizeof path, "%s/repeated_x.npy", dir);
  if (write_pattern(path, shape, 2) != 0) return 1;
  snprintf(path, sizeof path, "%s/repeated_sigmoid.npy", dir);
  if (write_pattern_mapped(path, shape, 2, sigmoid) != 0) return 1;
  snprintf(path, sizeof path, "%s/repeated_relu.npy", dir);
  return write_pattern_mapped(path, shape, 2, relu);
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "export") == 0) return export_mlp(argv[2]);
  if (argc == 3 && strcmp(argv[1], "heads") == 0) return export_heads(argv[2]);
  if (argc == 4 && strcmp(argv[1], "chain") == 0) return export_chain(argv[2], atol(argv[3]));
  if (argc == 3 && strcmp(argv[1], "repeated") == 0) return export_repeated(argv[2]);
  if (argc == 4 && strcmp(argv[1], "npy") == 0) {
    int64_t shape[8];
    int ndim = 0;
    char* p = argv[3];
    while (*p != '\0' && ndim < 8) {
      shape[ndim++] = strtoll(p, &p, 10);
      if (*p == ',') ++p;
    }
    return write_pattern(argv[2], shape, ndim);
  }
  if (argc == 5 && strcmp(argv[1], "compare") == 0) return compare(argv[2], argv[3], atof(argv[4]));
  fprintf(stderr,
          "usage: cli_fixture export DIR | heads DIR | chain DIR N | repeated DIR | "
          "npy PATH D1,D2,... | compare A B TOL\n");
  return 2;
}
