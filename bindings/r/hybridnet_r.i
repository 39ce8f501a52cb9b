/* hybridnet_r.i: the SWIG interface of the R package (swig -r, C mode).
 *
 *   swig -r -I<c_api/include> -I<bindings/swig> -Isrc -o src/hybridnet_wrap.c -outdir R hybridnet_r.i
 *
 * It wraps c_api.h directly (the shared bindings/swig/hybridnet.i carries the Java typemaps;
 * R needs its own for every parameter, see below). The wrappers are the package's internal
 * layer: each C function hn_x becomes the R function c_hn_x (not exported); the public API is
 * the hand-written R code in R/.
 *
 * SWIG 4.1's R module has defects this file works around instead of exposing:
 *  - Default pointer typemaps (SWIG_R_ConvertPtr) do not check the R type: a wrong object
 *    crashes R. Every handle parameter here goes through hnr_handle(), which checks that the
 *    object is an external pointer of the right kind (its tag) and not closed.
 *  - %typemap(check) is ignored by the R module: all checks are in the `in` typemaps.
 *  - Objects returned by factories get no finalizer: every new handle is an external pointer
 *    whose C finalizer (R_RegisterCFinalizerEx, onexit TRUE) is registered *before* the C call
 *    (hnr_holder), and the C function writes the new handle straight into that pointer's slot
 *    (hnr_slot), so no handle is ever unowned, not even when R runs out of memory. (Only the
 *    output lists of hn_block_forward, hn_predictor_run and hn_op_invoke are adopted after
 *    SWIG allocates its small result list; an R allocation failure exactly there would lose
 *    those tensors.)
 *  - The generated delete is broken: the *_free functions are replaced by c_hn_x_free(handle),
 *    which frees now, empties the handle (the finalizer then does nothing) and accepts NULL,
 *    closed handles and handles restored by readRDS (which R saves without their address).
 *  - The default int/double typemaps read INTEGER(x)[0] of whatever they get (length 0 reads
 *    out of bounds) and the R side only warns about length > 1: replaced by checked
 *    conversions (length 1, not NA, whole numbers, in range). The default pointer-to-int
 *    typemaps free() their argument in freearg: every out-pointer here has its own (empty)
 *    freearg.
 * Grouped parameters are one R argument named after the group's first parameter (e.g.
 * c_hn_block_create(kind, attr_keys) takes a named character vector of attributes).
 * A negative status raises a classed R condition from C (see src/glue.h); the wrapper code is
 * C and its temporaries are R_alloc'ed, so the longjmp skips nothing that needs releasing.
 * The CTest r.glue_guard checks that no generated wrapper uses a SWIG default conversion.
 * SWIG 4.1's R runtime still contains SET_S4_OBJECT, which R 4.6 removed from its API: R >= 4.6
 * needs SWIG >= 4.5 to regenerate the glue.
 */
%module hybridnet

%{
#include "glue.h"
%}

/* c_hn_*: internal names; enums are not wrapped (the R layer uses the numbers it needs). */
%rename("%(regex:/^hn_(.*)/c_hn_\\1/)s", %$isfunction) "";
%rename("$ignore", %$isenumitem) "";
%rename("$ignore", %$isenum) "";

/* Not wrapped: C callbacks and raw memory (a pointer into a tensor, caller buffers written in
 * place). Their R equivalents: hnr_tensor_values (below) copies a tensor's elements out. */
%ignore hn_deleter;
%ignore hn_log_callback;
%ignore hn_lambda_fn;
%ignore hn_forward_fn;
%ignore hn_string_free;
%ignore hn_set_log_callback;
%ignore hn_block_create_lambda;
%ignore hn_block_create_custom;
%ignore hn_tensor_wrap;
%ignore hn_tensor_data;
%ignore hn_tensor_copy_to;
%ignore hn_tensor_copy_from;
%ignore hn_predictor_get_output;
/* What the Python binding's tracing and parameter access use; R's facade does not need them. */
%ignore hn_tensor_is_symbolic;
%ignore hn_tensor_random_normal;
%ignore hn_tensor_random_uniform;
%ignore hn_block_forward_symbols;
/* R prints summaries (hn_summary) of the graph as written; no DOT drawing. */
%ignore hn_symbol_plot_network;
%ignore hn_symbol_as_run;
/* Autograd beyond the training API (higher-order gradients, casts, raw initializer fills). */
%ignore hn_autograd_grad;
%ignore hn_autograd_grad_v2;
%ignore hn_op_has_gradient;
%ignore hn_block_param_cast;
%ignore hn_initializer_fill;
/* Optimizers: R builds them only inside a trainer (hn_trainer), with their keyword arguments. */
%ignore hn_optimizer_create_state;
%ignore hn_optimizer_state_structure;
%ignore hn_optimizer_update;
%ignore hn_optimizer_get_learning_rate;
%ignore hn_optimizer_set_learning_rate;
%ignore hn_optimizer_get_rescale_grad;
%ignore hn_optimizer_set_rescale_grad;
%ignore hn_optimizer_set_lr_mult;
%ignore hn_optimizer_set_wd_mult;
%ignore hn_optimizer_update_count;
%ignore hn_optimizer_params;
%ignore hn_optimizer_set_lr_scheduler;
%ignore hn_lr_scheduler_create;
%ignore hn_lr_scheduler_get;
%ignore hn_lr_scheduler_params;
%ignore hn_trainer_allreduce_grads;
%ignore hn_trainer_update;
%ignore hn_trainer_optimizer;
%ignore hn_metric_stats;
%ignore hn_metric_kind;
%ignore hn_metric_kind_of;
/* Image decoding takes raw memory; the facades get it with their dataset API. */
%ignore hn_image_decode;
/* Quantization: the CLI and Python (quantize_net) call it; no facade wraps it yet. */
%ignore hn_quantize_model;

/* ---- SEXP passes through (the helpers below take and return R objects) ------------------- */
%typemap(in, noblock=1) SEXP { $1 = $input; }
%typemap(out, noblock=1) SEXP { $result = $1; }
%typemap(scoercein) SEXP ""
%typemap(scoerceout) SEXP ""

/* ---- status: a negative return raises the classed condition; outputs are the result ------ */
%typemap(out, noblock=1) int { hnr_check($1, "$name"); }
%typemap(out, noblock=1) int hn_abi_version, int hn_last_error_code, int hnr_header_abi_version,
                         int hnr_handle_state { $result = Rf_ScalarInteger($1); }
/* No outputs: NULL; one output: that value; several: a named list (see hnr_outputs). */
%typemap(ret, noblock=1) int { r_ans = hnr_outputs(r_ans); }
%typemap(scoerceout) int ""

%typemap(out, noblock=1) const char* { $result = hnr_string_out($1); }

/* ---- scalars in -------------------------------------------------------------------------- */
%typemap(in, noblock=1) int { $1 = hnr_int($input, "$symname", "$1_name"); }
%typemap(in, noblock=1) size_t { $1 = hnr_size($input, "$symname", "$1_name"); }
%typemap(in, noblock=1) float { $1 = hnr_float($input, "$symname", "$1_name"); }
%typemap(in, noblock=1) uint64_t { $1 = hnr_uint64($input, "$symname", "$1_name"); }
%typemap(in, noblock=1) int64_t { $1 = hnr_int64($input, "$symname", "$1_name"); }
%typemap(in, noblock=1) const char* {
  $1 = ($1_ltype)hnr_string($input, 1, "$symname", "$1_name");
}
%typemap(freearg) const char* ""
%typemap(scoercein) int, size_t, uint64_t, int64_t, float, const char* ""
%typemap(scheck) int, size_t, uint64_t, int64_t, float, const char* ""

/* ---- handles: typemaps for every kind of hn_handle_kinds.h -------------------------------- */
%include "hn_handle_kinds.h"
%define HNR_HANDLE(K)
%typemap(in, noblock=1) hn_ ## K *, const hn_ ## K * {
  $1 = ($1_ltype)hnr_handle($input, HNR_KIND_ ## K, "$symname", "$1_name");
}
%typemap(scoercein) hn_ ## K *, const hn_ ## K * ""
%typemap(freearg) hn_ ## K *, const hn_ ## K * ""
/* New handle out: the owner exists (with its finalizer) before the call. */
%typemap(in, numinputs=0, noblock=1) hn_ ## K ** out (SEXP holder = R_NilValue) {
  holder = Rf_protect(hnr_holder(HNR_KIND_ ## K));
  r_nprotect++;
  $1 = (hn_ ## K **)hnr_slot(holder);
}
%typemap(argout, noblock=1) hn_ ## K ** out {
  hnr_output($result, $n, "out", hnr_adopted(holder$argnum));
}
%typemap(freearg) hn_ ## K ** out ""
/* Arrays of handles in (a list of handles, or one handle). */
%typemap(in, noblock=1) (hn_ ## K * const* inputs, size_t num_inputs),
                        (hn_ ## K * const* symbols, size_t num_symbols),
                        (hn_ ## K * const* variables, size_t num_variables),
                        (hn_ ## K * const* heads, size_t num_heads),
                        (hn_ ## K * const* labels, size_t num_labels),
                        (hn_ ## K * const* preds, size_t num_preds),
                        (hn_ ## K * const* arrays, size_t num_arrays) {
  hnr_handles($input, HNR_KIND_ ## K, "$symname", "$1_name", (void***)&$1, &$2);
}
%typemap(freearg) (hn_ ## K * const* inputs, size_t num_inputs),
                  (hn_ ## K * const* symbols, size_t num_symbols),
                  (hn_ ## K * const* variables, size_t num_variables),
                  (hn_ ## K * const* heads, size_t num_heads),
                  (hn_ ## K * const* labels, size_t num_labels),
                  (hn_ ## K * const* preds, size_t num_preds),
                  (hn_ ## K * const* arrays, size_t num_arrays) ""
%typemap(scoercein) hn_ ## K * const* ""
/* hn_K_free: replaced by a checked release (see the header comment). */
%ignore hn_ ## K ## _free;
%rename(c_hn_ ## K ## _free) hnr_hn_ ## K ## _free;
%inline %{
void hnr_hn_ ## K ## _free(SEXP handle) {
  hnr_release(handle, HNR_KIND_ ## K, "hn_" #K "_free", "handle");
}
%}
%enddef
HN_HANDLE_KINDS(HNR_HANDLE)

/* Output tensors: (capacity, array, count) -> a list of new tensor handles. */
%typemap(in, numinputs=0, noblock=1)
    (size_t max_outputs, hn_tensor** outputs, size_t* out_num_outputs) (size_t count = 0) {
  $1 = 64;
  $2 = (hn_tensor**)R_alloc($1, sizeof(hn_tensor*));
  $3 = &count;
}
%typemap(argout, noblock=1) (size_t max_outputs, hn_tensor** outputs, size_t* out_num_outputs) {
  hnr_output($result, $n, "outputs", hnr_adopt_all(HNR_KIND_tensor, (void**)$2, *$3));
}
%typemap(freearg) (size_t max_outputs, hn_tensor** outputs, size_t* out_num_outputs) ""
/* A data loader's batch: a list of new tensor handles, empty at the epoch's end. */
%typemap(in, numinputs=0, noblock=1)
    (size_t max_fields, hn_tensor** batch, size_t* out_num_fields) (size_t count = 0) {
  $1 = 64;
  $2 = (hn_tensor**)R_alloc($1, sizeof(hn_tensor*));
  $3 = &count;
}
%typemap(argout, noblock=1) (size_t max_fields, hn_tensor** batch, size_t* out_num_fields) {
  hnr_output($result, $n, "batch", hnr_adopt_all(HNR_KIND_tensor, (void**)$2, *$3));
}
%typemap(freearg) (size_t max_fields, hn_tensor** batch, size_t* out_num_fields) ""

/* ---- arrays in --------------------------------------------------------------------------- */
%typemap(in, noblock=1) (const int64_t* shape, int ndim) {
  hnr_shape($input, "$symname", "$1_name", (const int64_t**)&$1, &$2);
}
%typemap(freearg) (const int64_t* shape, int ndim) ""
%typemap(scoercein) const int64_t* ""

%typemap(in, noblock=1) (const void* data, size_t data_bytes) {
  hnr_data($input, "$symname", "$1_name", (const void**)&$1, &$2);
}
%typemap(in, noblock=1) (const char* json, size_t json_bytes) {
  hnr_bytes($input, "$symname", "$1_name", (const void**)&$1, &$2);
}
%typemap(in, noblock=1) (const void* params, size_t params_bytes),
                        (const void* bytes, size_t num_bytes) {
  hnr_bytes($input, "$symname", "$1_name", (const void**)&$1, &$2);
}
%typemap(freearg) (const void* data, size_t data_bytes), (const char* json, size_t json_bytes),
                  (const void* params, size_t params_bytes),
                  (const void* bytes, size_t num_bytes) ""
%typemap(scoercein) const void* ""

%typemap(in, noblock=1)
    (const char* const* attr_keys, const char* const* attr_values, size_t num_attrs) {
  hnr_attrs($input, "$symname", "$1_name", (const char* const**)&$1, (const char* const**)&$2,
            &$3);
}
%typemap(freearg)
    (const char* const* attr_keys, const char* const* attr_values, size_t num_attrs) ""
/* Keyword arguments of optimizers and metrics: a named character vector, as attributes. */
%typemap(in, noblock=1) (const char* const* keys, const char* const* values, size_t num_params),
                        (const char* const* keys, const char* const* values, size_t num_args),
                        (const char* const* keys, const char* const* values, size_t num_options) {
  hnr_attrs($input, "$symname", "$1_name", (const char* const**)&$1, (const char* const**)&$2,
            &$3);
}
%typemap(freearg) (const char* const* keys, const char* const* values, size_t num_params),
                  (const char* const* keys, const char* const* values, size_t num_args),
                  (const char* const* keys, const char* const* values, size_t num_options) ""
/* hn_trainer_create's parameters: a named list, list(<full parameter name> = <block>, ...). */
%typemap(in, noblock=1)
    (hn_block* const* blocks, const char* const* param_names, size_t num_params) {
  hnr_named_handles($input, HNR_KIND_block, "$symname", "$1_name", (void***)&$1,
                    (const char* const**)&$2, &$3);
}
%typemap(freearg)
    (hn_block* const* blocks, const char* const* param_names, size_t num_params) ""
/* hn_autograd_mark_variables's grad_reqs (an integer vector, one hn_grad_req per variable, so
 * its length is checked against num_variables, the argument before it) and gradients (NULL:
 * new zero buffers, the only form the R layer uses). */
%typemap(in, noblock=1) (const int* grad_reqs, hn_tensor* const* gradients) {
  hnr_ints($input, arg2, "$symname", "$1_name", (const int**)&$1);
  $2 = NULL;
}
%typemap(freearg) (const int* grad_reqs, hn_tensor* const* gradients) ""
/* hn_autograd_backward's head_grads: NULL (ones, the gradient of a loss). */
%typemap(in, noblock=1) hn_tensor* const* head_grads {
  if ($input != R_NilValue) hnr_arg_error("$symname", "$1_name", "must be NULL (ones)");
  $1 = NULL;
}
%typemap(freearg) hn_tensor* const* head_grads ""
%typemap(in, noblock=1) (const char* const* input_names, size_t num_inputs) {
  hnr_strings($input, "$symname", "$1_name", (const char* const**)&$1, &$2);
}
%typemap(freearg) (const char* const* input_names, size_t num_inputs) ""
%typemap(scoercein) const char* const* ""

/* hn_symbol_infer_shape's known shapes: a named list of shapes. */
%typemap(in, noblock=1)
    (size_t num_known, const char* const* names, const int* ndims, const int64_t* dims) {
  hnr_named_shapes($input, "$symname", "$1_name", &$1, (const char* const**)&$2, (const int**)&$3,
                   (const int64_t**)&$4);
}
%typemap(freearg)
    (size_t num_known, const char* const* names, const int* ndims, const int64_t* dims) ""
/* hn_symbol_print_summary's column ends: the R layer keeps MXNet's (NULL). */
%typemap(in, noblock=1) (const double* positions, size_t num_positions) {
  if ($input != R_NilValue) hnr_arg_error("$symname", "$1_name", "must be NULL (MXNet's columns)");
  $1 = NULL;
  $2 = 0;
}
%typemap(freearg) (const double* positions, size_t num_positions) ""
%typemap(scoercein) const double* ""
/* hn_model_export_onnx's dtypes: the R layer exports float32 inputs only (NULL). */
%typemap(in, noblock=1) const int* dtypes {
  if ($input != R_NilValue) hnr_arg_error("$symname", "$1_name", "must be NULL (float32 inputs)");
  $1 = NULL;
}
%typemap(freearg) const int* dtypes ""
%typemap(scoercein) const int* ""

/* ---- outputs ----------------------------------------------------------------------------- */
%define HNR_SCALAR_OUT(CTYPE, NAMES)
%typemap(in, numinputs=0, noblock=1) CTYPE* NAMES (CTYPE temp = 0) { $1 = &temp; }
%typemap(argout, noblock=1) CTYPE* NAMES {
  hnr_output($result, $n, "$1_name", hnr_double_out((double)temp$argnum));
}
%typemap(freearg) CTYPE* NAMES ""
%enddef
HNR_SCALAR_OUT(int, out_dtype)
HNR_SCALAR_OUT(int, out_ndim)
HNR_SCALAR_OUT(int, out_num_threads)
HNR_SCALAR_OUT(int, out_complete)
HNR_SCALAR_OUT(int, out_version)
HNR_SCALAR_OUT(int, out_mxnet_version)
HNR_SCALAR_OUT(int, out_legacy)
HNR_SCALAR_OUT(int, out_required)
HNR_SCALAR_OUT(int, out_exportable)
HNR_SCALAR_OUT(int, out_enabled)
HNR_SCALAR_OUT(size_t, out_bytes)
HNR_SCALAR_OUT(size_t, out_size)
HNR_SCALAR_OUT(size_t, out_count)
HNR_SCALAR_OUT(size_t, out_num_attrs)
HNR_SCALAR_OUT(size_t, out_num_aliases)
HNR_SCALAR_OUT(size_t, out_num_onnx_ops)
HNR_SCALAR_OUT(int64_t, out_dim)
HNR_SCALAR_OUT(int64_t, out_size)
HNR_SCALAR_OUT(int64_t, out_count)
HNR_SCALAR_OUT(int64_t, out_value)
HNR_SCALAR_OUT(int, out_previous)
HNR_SCALAR_OUT(int, out_recording)
HNR_SCALAR_OUT(int, out_training)
HNR_SCALAR_OUT(int, out_initialized)
HNR_SCALAR_OUT(float, out_lr)
HNR_SCALAR_OUT(int64_t, out_num_batches)
HNR_SCALAR_OUT(int64_t, out_ns)

/* A metric's readings: a named numeric vector (at most 64, a composite's children). */
%typemap(in, numinputs=0, noblock=1)
    (size_t max_values, const char** names, double* values, size_t* out_num_values)
    (size_t count = 0) {
  $1 = 64;
  $2 = ($2_ltype)R_alloc($1, sizeof(char*));
  $3 = (double*)R_alloc($1, sizeof(double));
  $4 = &count;
}
%typemap(argout, noblock=1)
    (size_t max_values, const char** names, double* values, size_t* out_num_values) {
  hnr_output($result, $n, "values",
             hnr_named_doubles_out((const char* const*)$2, $3, *$4 < $1 ? *$4 : $1));
}
%typemap(freearg)
    (size_t max_values, const char** names, double* values, size_t* out_num_values) ""

/* Borrowed strings out (copied into R). */
%typemap(in, numinputs=0, noblock=1) const char** (const char* temp = NULL) {
  $1 = ($1_ltype)&temp;
}
%typemap(argout, noblock=1) const char** {
  hnr_output($result, $n, "$1_name", hnr_string_out(temp$argnum));
}
%typemap(freearg) const char** ""
/* New strings out (copied, then released with hn_string_free). */
%typemap(in, numinputs=0, noblock=1) char** out (char* temp = NULL) { $1 = &temp; }
%typemap(argout, noblock=1) char** out {
  hnr_output($result, $n, "out", hnr_owned_string_out(temp$argnum));
}
%typemap(freearg) char** out ""
/* Borrowed name arrays out. */
%typemap(in, numinputs=0, noblock=1) (const char* const** out_names, size_t* out_count)
    (const char* const* names = NULL, size_t count = 0) {
  $1 = ($1_ltype)&names;
  $2 = &count;
}
%typemap(argout, noblock=1) (const char* const** out_names, size_t* out_count) {
  hnr_output($result, $n, "names", hnr_strings_out((const char* const*)*$1, *$2));
}
%typemap(freearg) (const char* const** out_names, size_t* out_count) ""
/* Borrowed shapes out. */
%typemap(in, numinputs=0, noblock=1) (const int64_t** out_dims, int* out_ndim)
    (const int64_t* dims = NULL, int ndim = 0) {
  $1 = ($1_ltype)&dims;
  $2 = &ndim;
}
%typemap(argout, noblock=1) (const int64_t** out_dims, int* out_ndim) {
  hnr_output($result, $n, "dims", hnr_dims_out((const int64_t*)*$1, *$2));
}
%typemap(freearg) (const int64_t** out_dims, int* out_ndim) ""

/* ---- helpers for the R layer ------------------------------------------------------------- */
SEXP hnr_condition(int status, const char* message);
SEXP hnr_tensor_values(const hn_tensor* tensor);
SEXP hnr_fast_predictor(const hn_model* model);
SEXP hnr_fast_predict(SEXP fast, SEXP x, SEXP layout);
void hnr_fast_release(SEXP fast);
SEXP hnr_tensor_from_r(SEXP x, SEXP colmajor, SEXP vector_is_row);
SEXP hnr_forward_tensors(SEXP block, SEXP x, SEXP prototype);
SEXP hnr_autograd_scope(SEXP env, SEXP recording, SEXP training);
SEXP hnr_live_handles(void);
int hnr_header_abi_version(void);
int hnr_handle_state(SEXP x, const char* kind);

%include "hybridnet/c_api.h"
