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
/* Autograd: the Java and Scala facades get it with their training API (typemaps for its arrays
 * of handles and grad_reqs come with it). */
%ignore hn_autograd_set_recording;
%ignore hn_autograd_set_training;
%ignore hn_autograd_is_recording;
%ignore hn_autograd_is_training;
%ignore hn_autograd_mark_variables;
%ignore hn_autograd_backward;
%ignore hn_autograd_grad;
%ignore hn_autograd_grad_v2;
%ignore hn_tensor_grad;
%ignore hn_tensor_detach;
%ignore hn_op_has_gradient;
%ignore hn_block_param_grad;
%ignore hn_block_param_set_attr;
%ignore hn_block_param_get_attr;
%ignore hn_block_param_zero_grad;
%ignore hn_block_param_cast;
%ignore hn_initializer_fill;
/* Optimizers: Python binds them; Java and R train through Python or C++ for now. */
%ignore hn_optimizer_create;
%ignore hn_optimizer_free;
%ignore hn_lr_scheduler_free;
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
%ignore hn_trainer_create;
%ignore hn_trainer_free;
%ignore hn_trainer_step;
%ignore hn_trainer_allreduce_grads;
%ignore hn_trainer_update;
%ignore hn_trainer_get_learning_rate;
%ignore hn_trainer_set_learning_rate;
%ignore hn_trainer_optimizer;
%ignore hn_trainer_save_states;
%ignore hn_trainer_load_states;
/* Metrics: the Java, Scala and R facades get them with their training API (typemaps for the
 * arrays of names and values come with it). */
%ignore hn_metric_create;
%ignore hn_metric_update;
%ignore hn_metric_get;
%ignore hn_metric_stats;
%ignore hn_metric_reset;
%ignore hn_metric_kind;
%ignore hn_metric_kind_of;
/* Image decoding takes raw memory; the facades get it with their dataset API. */
%ignore hn_image_decode;
%ignore hn_data_loader_create;
%ignore hn_data_loader_reset;
%ignore hn_data_loader_next;
%ignore hn_data_loader_num_batches;
%ignore hn_data_loader_free;

%include "hybridnet/c_api.h"

/* Additions declared after the C API (they use its types). */
#if defined(SWIGJAVA)
%include "hybridnet_java_extra.i"
#endif
