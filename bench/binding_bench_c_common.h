/* What the C sides of the binding benchmarks (binding_bench_c.c, binding_train_bench_c.c) share:
 * a clock, the median's comparison, the failure report and the settings lines every figure is
 * printed with. Each program defines BENCH_NAME before including it. */
#ifndef HN_BENCH_BINDING_BENCH_C_COMMON_H_
#define HN_BENCH_BINDING_BENCH_C_COMMON_H_

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hybridnet/c_api.h"

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

/* Reports the failed call with the library's status and message; returns the exit code 1. */
static int fail(const char* what) {
  fprintf(stderr, "%s: %s: %s: %s\n", BENCH_NAME, what, hn_status_name(hn_last_error_code()),
          hn_last_error());
  return 1;
}

/* "cpu=<model name of /proc/cpuinfo>", the OpenBLAS build and kernels, and the kernel threads. */
static void print_settings(void) {
  char line[512];
  const char* model = "unknown";
  FILE* f = fopen("/proc/cpuinfo", "r");
  while (f != NULL && fgets(line, sizeof line, f) != NULL) {
    if (strncmp(line, "model name", 10) == 0 && strchr(line, ':') != NULL) {
      model = strchr(line, ':') + 2;
      line[strcspn(line, "\n")] = '\0';
      break;
    }
  }
  printf("cpu=%s\n", model);
  if (f != NULL) fclose(f);
  const char* coretype = getenv("OPENBLAS_CORETYPE");
  int threads = 0;
  hn_get_num_threads(&threads);
  printf("openblas=%s; core %s; OPENBLAS_CORETYPE=%s; kernel threads %d\n", openblas_get_config(),
         openblas_get_corename(), coretype != NULL ? coretype : "(unset)", threads);
}

#endif /* HN_BENCH_BINDING_BENCH_C_COMMON_H_ */
