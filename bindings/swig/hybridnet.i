/* hybridnet.i: the one SWIG interface of every language binding (Java today, R next).
 *
 * SWIG reads only the flat C header (c_api.h); the glue it generates calls nothing but the
 * exported hn_* functions. Language-specific typemaps and helpers live in their own files,
 * included below under the language's SWIG macro, so each language adds a block here and
 * never edits another's:
 *
 *   swig -java -c++ -package org.hybridnet.internal -I<c_api/include> -I<this dir> hybridnet.i
 *
 * Status codes: every int function of c_api.h returns HN_OK or a negative hn_status; each
 * language turns a negative status into its own error (Java: a HybridnetException subclass
 * carrying the category and the thread-local hn_last_error() message).
 */

/* Module name: Java classes are HybridnetNative / HybridnetNativeJNI in an internal package.
 * Other languages keep "hybridnet" (R needs the module name to equal the package name). */
#if defined(SWIGJAVA)
%module HybridnetNative
#else
%module hybridnet
#endif

%{
#include "hybridnet/c_api.h"
%}

/* HN_HANDLE_KINDS(X): the handle kinds, from which each language generates its handle typemaps. */
%include "hn_handle_kinds.h"

/* Handles, out-pointers and buffers are mapped per language; C enums become plain integer
 * constants (the C API passes dtypes, statuses and groups as int). */
#if defined(SWIGJAVA)
%include "hybridnet_java.i"
#endif
/* #if defined(SWIGR)  ->  %include "hybridnet_r.i"  (the R binding's typemaps) */

/* Functions no language binds through SWIG: C callbacks, raw memory and C-owned strings
 * (every binding frees returned strings inside its typemaps instead). */
%ignore hn_string_free;
%ignore hn_set_log_callback;
%ignore hn_block_create_lambda;
%ignore hn_block_create_custom;
%ignore hn_tensor_wrap;
%ignore hn_tensor_data;
/* Training functions the Java facade does not call yet: the optimizer's per-weight state and
 * update (the Trainer runs them), parameter casts and raw initializer fills. */
%ignore hn_initializer_fill;
%ignore hn_block_param_cast;
%ignore hn_optimizer_create_state;
%ignore hn_optimizer_state_structure;
%ignore hn_optimizer_update;
%ignore hn_optimizer_set_lr_mult;
%ignore hn_optimizer_set_wd_mult;
/* Java reads metric values one at a time (hn_jni_metric_reading). */
%ignore hn_metric_get;
/* Image decoding takes raw memory; the facades get it with their dataset API. */
%ignore hn_image_decode;
/* Quantization: the CLI and Python (quantize_net) call it; no facade wraps it yet. */
%ignore hn_quantize_model;

%include "hybridnet/c_api.h"

/* Additions declared after the C API (they use its types). */
#if defined(SWIGJAVA)
%include "hybridnet_java_extra.i"
#endif
