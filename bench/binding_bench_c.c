/* The C side of the binding benchmarks (bench/java_mlp_bench.java and bench/r_predict_bench.R
 * run it between their own rounds): the seed MLP (512-256-128-2) export at batch 1 through the
 * C API, with the calls a binding makes per forward: set the input (a copy), run, copy the
 * output out.
 *
 *   binding_bench_c PREFIX [ROUNDS] [FORWARDS_PER_ROUND]
 *
 * Prints the CPU model and the OpenBLAS settings ("cpu=...", "openblas=..."), one line per
 * round, "round_us=<microseconds per forward>", then "median_us=..." and "output=...". */
#include <math.h>

#define BENCH_NAME "binding_bench_c"
#include "binding_bench_c_common.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: binding_bench_c PREFIX [ROUNDS] [FORWARDS_PER_ROUND]\n");
    return 2;
  }
  int rounds = argc > 2 ? atoi(argv[2]) : 15;
  int forwards = argc > 3 ? atoi(argv[3]) : 2000;
  if (rounds < 1 || rounds > 1000 || forwards < 1) return 2;

  hn_model* model = NULL;
  hn_predictor* pred = NULL;
  if (hn_set_num_threads(1) != HN_OK) return fail("hn_set_num_threads");
  if (hn_model_load(argv[1], 0, &model) != HN_OK) return fail("hn_model_load");
  if (hn_predictor_create(model, &pred) != HN_OK) return fail("hn_predictor_create");
  print_settings();

  static float x[512];
  float y[2];
  int64_t shape[2] = {1, 512};
  for (int i = 0; i < 512; ++i) x[i] = (float)sin(0.1 * i);

  double* per_round = malloc(sizeof(double) * (size_t)rounds);
  if (per_round == NULL) return 1;
  for (int r = -2; r < rounds; ++r) { /* rounds -2 and -1 warm up */
    double start = now_us();
    for (int i = 0; i < forwards; ++i) {
      if (hn_predictor_set_input(pred, "data", HN_DTYPE_FLOAT32, shape, 2, x, sizeof x) != HN_OK ||
          hn_predictor_forward(pred) != HN_OK ||
          hn_predictor_get_output(pred, 0, y, sizeof y) != HN_OK) {
        return fail("forward");
      }
    }
    double us = (now_us() - start) / forwards;
    if (r >= 0) {
      per_round[r] = us;
      printf("round_us=%.4f\n", us);
    }
  }
  qsort(per_round, (size_t)rounds, sizeof(double), cmp_double);
  printf("median_us=%.4f\n", per_round[rounds / 2]);
  printf("output=%.9g,%.9g\n", (double)y[0], (double)y[1]);
  free(per_round);
  hn_predictor_free(pred);
  hn_model_free(model);
  return 0;
}
