/* Load + first forward of a model through the C API of a given libhybridnet, in a fresh process:
 * the time to hn_model_load, then to create a predictor, set the input and run the first forward
 * (planning, and for convolutions their primitives and re-laid-out weights, happen there).
 * bench.sh runs it alternately against this build's library and a baseline build's, in turn.
 *
 *   load_bench LIBHYBRIDNET PREFIX N,C,H,W
 *   -> "load_ms <t> first_forward_ms <t> load_cpu_ms <t> first_forward_cpu_ms <t>"
 * (wall-clock, then the process's CPU time: on a shared machine the wall clock also counts the
 * time spent waiting for a core).
 * The library is opened with dlopen so any build of the stable C API can be measured. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct hn_model hn_model;
typedef struct hn_predictor hn_predictor;

static double clock_ms(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void* need(void* lib, const char* name) {
  void* f = dlsym(lib, name);
  if (f == NULL) {
    fprintf(stderr, "load_bench: %s not found\n", name);
    exit(2);
  }
  return f;
}

int main(int argc, char** argv) {
  int (*model_load)(const char*, int, hn_model**);
  int (*predictor_create)(const hn_model*, hn_predictor**);
  int (*set_input)(hn_predictor*, const char*, int, const int64_t*, int, const void*, size_t);
  int (*forward)(hn_predictor*);
  int (*set_threads)(int);
  const char* (*last_error)(void);
  void* lib;
  hn_model* model = NULL;
  hn_predictor* pred = NULL;
  int64_t shape[4];
  size_t count, i;
  float* x;
  double t0, t1, t2, c0, c1, c2;
  if (argc != 4 || sscanf(argv[3], "%ld,%ld,%ld,%ld", (long*)&shape[0], (long*)&shape[1],
                          (long*)&shape[2], (long*)&shape[3]) != 4) {
    fprintf(stderr, "usage: %s LIBHYBRIDNET PREFIX N,C,H,W\n", argv[0]);
    return 2;
  }
  lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "load_bench: %s\n", dlerror());
    return 2;
  }
  *(void**)&model_load = need(lib, "hn_model_load");
  *(void**)&predictor_create = need(lib, "hn_predictor_create");
  *(void**)&set_input = need(lib, "hn_predictor_set_input");
  *(void**)&forward = need(lib, "hn_predictor_forward");
  *(void**)&set_threads = need(lib, "hn_set_num_threads");
  *(void**)&last_error = need(lib, "hn_last_error");
  count = (size_t)(shape[0] * shape[1] * shape[2] * shape[3]);
  x = (float*)malloc(count * sizeof(float));
  for (i = 0; x != NULL && i < count; ++i) x[i] = (float)(i % 255) / 255.f;
  if (x == NULL || set_threads(1) != 0) return 2;
  t0 = clock_ms(CLOCK_MONOTONIC);
  c0 = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
  if (model_load(argv[2], 0, &model) != 0) {
    fprintf(stderr, "load_bench: %s\n", last_error());
    return 1;
  }
  t1 = clock_ms(CLOCK_MONOTONIC);
  c1 = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
  if (predictor_create(model, &pred) != 0 ||
      set_input(pred, "data", 0, shape, 4, x, count * sizeof(float)) != 0 || forward(pred) != 0) {
    fprintf(stderr, "load_bench: %s\n", last_error());
    return 1;
  }
  t2 = clock_ms(CLOCK_MONOTONIC);
  c2 = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
  printf("load_ms %.1f first_forward_ms %.1f load_cpu_ms %.1f first_forward_cpu_ms %.1f\n", t1 - t0,
         t2 - t1, c1 - c0, c2 - c1);
  free(x);
  return 0;
}
