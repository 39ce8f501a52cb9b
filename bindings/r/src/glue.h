/* glue.h: support code for the SWIG-generated R wrapper of the hybridnet C API.
 *
 * The typemaps of hybridnet_r.i call only these functions, so every argument of every
 * generated wrapper is checked here (type, length, NA, range, handle kind, closed handle)
 * before the C API sees it, and every result is converted here.
 *
 * Handles: an R external pointer whose tag is the symbol of its kind ("hn_model", ...), whose
 * address is a small box (in a raw vector the pointer protects) holding the hn_* handle, and
 * whose C finalizer (registered when the pointer is made, onexit = TRUE) calls the kind's
 * *_free. hnr_release frees explicitly and empties the box, so the finalizer then does
 * nothing and later use is an R error ("closed"), never a crash.
 *
 * Errors: R conditions of class c("hybridnet_error_<category>", "hybridnet_error", "error",
 * "condition") with fields message, call, status ("HN_ERR_SHAPE") and code (-2). They are
 * signalled with stop() from C. This glue is C (no C++ frame is ever skipped by R's longjmp)
 * and allocates temporaries only with R_alloc (reclaimed by R on the jump), so raising from
 * anywhere in a wrapper leaks nothing.
 */
#ifndef HYBRIDNET_R_GLUE_H_
#define HYBRIDNET_R_GLUE_H_

#define R_NO_REMAP
#define STRICT_R_HEADERS
#include <R.h>
#include <Rinternals.h>
#include <stddef.h>
#include <stdint.h>

#include "hn_handle_kinds.h"
#include "hybridnet/c_api.h"

/* Handle kinds, one per entry of HN_HANDLE_KINDS: HNR_KIND_tensor, HNR_KIND_model, ... */
#define HNR_KIND_ENUMERATOR(kind) HNR_KIND_##kind,
enum hnr_kind { HN_HANDLE_KINDS(HNR_KIND_ENUMERATOR) HNR_NUM_KINDS };

/* ---- errors ------------------------------------------------------------------------------ */

/* The classed condition of `status` with `message` (call NULL). */
SEXP hnr_condition(int status, const char* message);
/* Signals the classed condition of `status` with `message` (never returns). */
void hnr_raise(int status, const char* message) __attribute__((noreturn));
/* Signals hybridnet_error_invalid_argument "fn: argument 'arg' <what>" (never returns). */
void hnr_arg_error(const char* fn, const char* arg, const char* fmt, ...)
    __attribute__((noreturn, format(printf, 3, 4)));
/* Raises the C API's error (hn_last_error) when status is not HN_OK. */
void hnr_check(int status, const char* fn);

/* ---- inputs ------------------------------------------------------------------------------ */

/* The live address of a handle of `kind`; an error for anything else or a closed handle. */
void* hnr_handle(SEXP x, int kind, const char* fn, const char* arg);
/* Frees a handle now (NULL and closed handles are accepted; a wrong object is an error). */
void hnr_release(SEXP x, int kind, const char* fn, const char* arg);

int hnr_int(SEXP x, const char* fn, const char* arg);
size_t hnr_size(SEXP x, const char* fn, const char* arg);
uint64_t hnr_uint64(SEXP x, const char* fn, const char* arg);
int64_t hnr_int64(SEXP x, const char* fn, const char* arg);
/* One finite number as float (a learning rate). */
float hnr_float(SEXP x, const char* fn, const char* arg);
/* A string (one element, not NA) in UTF-8; R NULL gives NULL when allow_null. */
const char* hnr_string(SEXP x, int allow_null, const char* fn, const char* arg);
/* A shape: a numeric vector of whole numbers >= 0 (at most 32). */
void hnr_shape(SEXP x, const char* fn, const char* arg, const int64_t** dims, int* ndim);
/* Element data: numeric/integer/logical (converted to float32) or raw (bytes as they are). */
void hnr_data(SEXP x, const char* fn, const char* arg, const void** data, size_t* bytes);
/* A byte buffer: raw vector or one string (its bytes). */
void hnr_bytes(SEXP x, const char* fn, const char* arg, const void** data, size_t* bytes);
/* A character vector (no NA); R NULL gives an empty array. */
void hnr_strings(SEXP x, const char* fn, const char* arg, const char* const** out, size_t* n);
/* Attributes: a named character vector or named list of scalars (values as text). */
void hnr_attrs(SEXP x, const char* fn, const char* arg, const char* const** keys,
               const char* const** values, size_t* n);
/* A list of handles of `kind` (or one handle); R NULL gives an empty array. */
void hnr_handles(SEXP x, int kind, const char* fn, const char* arg, void*** out, size_t* n);
/* A named list of handles of `kind`: the handles and their names, `n` of each (the trainer's
 * parameters: list(<param name> = <block>, ...)). */
void hnr_named_handles(SEXP x, int kind, const char* fn, const char* arg, void*** handles,
                       const char* const** names, size_t* n);
/* An integer vector of exactly `n` elements, none NA (one grad_req per variable). */
void hnr_ints(SEXP x, size_t n, const char* fn, const char* arg, const int** out);
/* Known shapes for hn_symbol_infer_shape: a named list of shapes. */
void hnr_named_shapes(SEXP x, const char* fn, const char* arg, size_t* num,
                      const char* const** names, const int** ndims, const int64_t** dims);

/* ---- outputs ----------------------------------------------------------------------------- */

/* An empty handle of `kind` with its finalizer already registered. */
SEXP hnr_holder(int kind);
/* Where a C function writes the new handle of `holder` (it is owned from then on). */
void** hnr_slot(SEXP holder);
/* `holder` once its slot is filled (counted as live), or R NULL when the slot stayed NULL. */
SEXP hnr_adopted(SEXP holder);
/* A list of handles made from new handles; frees them all if R fails to allocate. */
SEXP hnr_adopt_all(int kind, void** addresses, size_t n);
SEXP hnr_string_out(const char* s);
/* A string the library allocated (freed with hn_string_free, also when R fails). */
SEXP hnr_owned_string_out(char* s);
SEXP hnr_strings_out(const char* const* names, size_t n);
SEXP hnr_dims_out(const int64_t* dims, int ndim);
SEXP hnr_double_out(double v);
/* A numeric vector of values[0..n) named names[0..n) (a metric's readings). */
SEXP hnr_named_doubles_out(const char* const* names, const double* values, size_t n);
/* Stores output `index` of SWIG's result list under `name` ("out_" dropped). */
void hnr_output(SEXP list, int index, const char* name, SEXP value);
/* The wrapper's result: NULL without outputs, the output itself for one, else a named list. */
SEXP hnr_outputs(SEXP ans);

/* ---- helpers wrapped for the R layer (declared in hybridnet_r.i) ------------------------- */

/* The elements of a tensor as doubles, in C (row-major) order. */
SEXP hnr_tensor_values(const hn_tensor* tensor);
/* predict()'s fast path (see glue.c): a predictor of a one-input model that reads R arrays into
 * its input tensor and outputs from its tensors with no copy but the type conversion. */
SEXP hnr_fast_predictor(const hn_model* model);
/* One forward: `x` a numeric array, `layout` "rowmajor" or "colmajor"; the output (a list for
 * several). */
SEXP hnr_fast_predict(SEXP fast, SEXP x, SEXP layout);
/* Frees the fast predictor now (the finalizer then does nothing); anything else is ignored. */
void hnr_fast_release(SEXP fast);
/* A new float32 tensor holding the numeric (double, integer or logical) array `x`, converted
 * straight into the tensor's storage: shape rev(dim(x)) when `colmajor` (R's memory read as
 * is), else dim(x) (transposed while converting); a vector without dim is shape (1, n) when
 * `vector_is_row`, else (n). R NULL for a data frame, a classed vector or another type. */
SEXP hnr_tensor_from_r(SEXP x, SEXP colmajor, SEXP vector_is_row);
/* hn_forward on tensors in one call: `x` a HybridnetTensor or a list of them, the outputs as
 * shallow copies of `prototype` (an empty HybridnetTensor) holding the new handles (a list for
 * several). R NULL when `x` is not all tensors (the caller converts R arrays). */
SEXP hnr_forward_tensors(SEXP block, SEXP x, SEXP prototype);
/* Evaluates `expr` in `env` (forcing the promise) with autograd recording and training set as
 * given, restoring both afterwards, also when `expr` raises an error or jumps. */
SEXP hnr_autograd_scope(SEXP env, SEXP recording, SEXP training);
/* Live handles made by this package, per kind (a named integer vector). */
SEXP hnr_live_handles(void);
/* HN_ABI_VERSION of the header this package was compiled with. */
int hnr_header_abi_version(void);
/* 1 when `x` is a handle of kind name `kind` that is not closed, 0 when closed (or restored
 * by unserialize), -1 when `x` is not a handle of that kind. */
int hnr_handle_state(SEXP x, const char* kind);

#endif /* HYBRIDNET_R_GLUE_H_ */
