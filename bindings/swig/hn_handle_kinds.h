/* hn_handle_kinds.h: every handle kind of the C API (c_api.h), once, for the code the bindings
 * generate per kind (SWIG typemaps, R's type checks and finalizers).
 *
 *   #define MY_FREE_CASE(kind) case MY_##kind: hn_##kind##_free(p); break;
 *   HN_HANDLE_KINDS(MY_FREE_CASE)
 *
 * X(kind) stands for the opaque type hn_<kind> and its release function hn_<kind>_free.
 * Adding a handle kind to c_api.h means adding it here; the CTest bindings.handle_kinds fails
 * until both agree. Plain C preprocessor only: C, C++ and SWIG read it. */
#ifndef HN_HANDLE_KINDS_H_
#define HN_HANDLE_KINDS_H_

#define HN_HANDLE_KINDS(X) \
  X(tensor)                \
  X(tensor_list)           \
  X(symbol)                \
  X(shape_info)            \
  X(block)                 \
  X(model)                 \
  X(predictor)             \
  X(optimizer)             \
  X(lr_scheduler)          \
  X(trainer)               \
  X(metric)                \
  X(data_loader)

#endif /* HN_HANDLE_KINDS_H_ */
