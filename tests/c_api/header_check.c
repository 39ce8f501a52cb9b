/* Compiles c_api.h alone (as C99 with -Wall -Wextra -pedantic -Werror, and as C++11): the
 * header must be self-contained and clean. */
#include "hybridnet/c_api.h"
#include "hybridnet/c_api.h" /* include guard */

typedef int hn_header_check_abi_version[HN_ABI_VERSION >= 0 ? 1 : -1];
typedef int hn_header_check_status[HN_ERR_INTERNAL == -10 ? 1 : -1];

int hn_header_check(void);
int hn_header_check(void) {
  hn_tensor* t = 0;
  hn_tensor_free(t);
  return hn_abi_version() == HN_ABI_VERSION ? HN_OK : HN_ERR_INTERNAL;
}
