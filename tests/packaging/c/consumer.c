/* A C program built against the installed SDK with pkg-config (tests/packaging/run.sh):
 *   cc consumer.c $(pkg-config --cflags --libs hybridnet)
 * Builds a Dense(2) layer through the C API, runs it on ones(1, 3) and prints the sum. */
#include <stdio.h>

#include "hybridnet/c_api.h"

int main(void) {
  hn_block* dense = NULL;
  hn_tensor* x = NULL;
  hn_tensor* y = NULL;
  size_t n = 0;
  const char* keys[] = {"units", "in_units"};
  const char* values[] = {"2", "3"};
  int64_t dims[] = {1, 3};
  float ones[] = {1, 1, 1}, out[2] = {0, 0};
  int ok = hn_abi_version() == HN_ABI_VERSION &&
           hn_block_create("Dense", keys, values, 2, &dense) == HN_OK &&
           hn_block_initialize(dense, "ones", 0, 0) == HN_OK &&
           hn_tensor_create(HN_DTYPE_FLOAT32, dims, 2, ones, sizeof(ones), &x) == HN_OK &&
           hn_block_forward(dense, &x, 1, 1, &y, &n) == HN_OK && n == 1 &&
           hn_tensor_copy_to(y, out, sizeof(out)) == HN_OK;
  if (ok)
    printf("C consumer (pkg-config): hybridnet %s, ABI %d, Dense(ones) -> %g %g\n", hn_version(),
           hn_abi_version(), out[0], out[1]);
  else
    fprintf(stderr, "C consumer: %s\n", hn_last_error());
  hn_tensor_free(y);
  hn_tensor_free(x);
  hn_block_free(dense);
  return ok && out[0] == 3.0f && out[1] == 3.0f ? 0 : 1;
}
