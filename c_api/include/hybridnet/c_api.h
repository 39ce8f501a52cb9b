/*
 * hybridnet C API: the flat, stable, versioned C99 interface of the hybridnet SDK.
 *
 * Everything in Java, Scala and R goes through this header; C and C++ programs may use it too.
 *
 *   hn_model* model = NULL;
 *   hn_predictor* pred = NULL;
 *   int64_t shape[2] = {1, 512};
 *   float x[512] = {0}, y[2];
 *   if (hn_model_load("my_mlp", 0, &model) != HN_OK ||
 *       hn_predictor_create(model, &pred) != HN_OK ||
 *       hn_predictor_set_input(pred, "data", HN_DTYPE_FLOAT32, shape, 2, x, sizeof x) != HN_OK ||
 *       hn_predictor_forward(pred) != HN_OK ||
 *       hn_predictor_get_output(pred, 0, y, sizeof y) != HN_OK) {
 *     fprintf(stderr, "error %s: %s\n", hn_status_name(hn_last_error_code()), hn_last_error());
 *   }
 *   hn_predictor_free(pred);
 *   hn_model_free(model);
 *
 * Conventions (they hold for every function unless its comment says otherwise):
 *  - Status: functions return int: HN_OK (0) on success or a negative hn_status category. The
 *    exceptions are the queries that cannot fail (hn_version, hn_abi_version, hn_last_error,
 *    hn_last_error_code, hn_status_name, hn_dtype_name) and the void *_free functions.
 *  - Errors: on failure hn_last_error() gives a message naming the function, and where it
 *    applies the op, node, file or parameter and what was expected; hn_last_error_code() gives
 *    the category. Both are thread-local. Out-parameters are left untouched on failure and there
 *    is nothing to clean up. No C++ exception, abort() or exit() crosses this interface.
 *  - Arguments: inputs first, outputs last (pointers named out*). A NULL handle or a NULL
 *    out-pointer is HN_ERR_INVALID_ARGUMENT, except where "may be NULL" is written.
 *  - Ownership: a handle returned through an out-pointer ("new") belongs to the caller and is
 *    released with its *_free function, which accepts NULL. Strings returned as char** are new
 *    and released with hn_string_free. Pointers returned as const (strings, name arrays, dims)
 *    are borrowed: their lifetime is stated on each function; never free them.
 *  - Strings are UTF-8 and NUL-terminated; sizes are in bytes (size_t); dimensions are int64_t.
 *  - Threads: any thread may call any function. Objects are thread-compatible unless stated:
 *    const (read-only) functions may run concurrently on one object, functions taking a
 *    non-const handle need exclusive use of that object. hn_model is immutable and fully
 *    thread-safe; use one hn_predictor per thread (hn_predictor_clone shares the weights).
 *  - ABI: only hn_* symbols are exported; after 1.0 functions are only added (a changed
 *    behaviour gets a new name with a _v2 suffix), enum values are only appended.
 */
#ifndef HYBRIDNET_C_API_H_
#define HYBRIDNET_C_API_H_

#include <stddef.h>
#include <stdint.h>

/** Version of this header (SemVer). hn_version() reports the library's. */
#define HN_VERSION_MAJOR 0
#define HN_VERSION_MINOR 1        /**< minor version of this header */
#define HN_VERSION_PATCH 0        /**< patch version of this header */
#define HN_VERSION_STRING "0.1.0" /**< "MAJOR.MINOR.PATCH" of this header */
/** ABI generation; equals the SONAME's major number (libhybridnet.so.0). */
#define HN_ABI_VERSION 0

#if defined(_WIN32)
#if defined(HN_BUILDING_LIBRARY)
#define HN_API __declspec(dllexport)
#else
#define HN_API __declspec(dllimport)
#endif
#elif defined(__GNUC__)
#define HN_API __attribute__((visibility("default")))
#else
#define HN_API
#endif

#ifdef __cplusplus
#define HN_NOEXCEPT noexcept
extern "C" {
#else
#define HN_NOEXCEPT
#endif

/* ============================================================================================
 * Types
 * ========================================================================================== */

/** Status categories (the return value of every int function). Append-only. */
typedef enum hn_status {
  HN_OK = 0,
  HN_ERR_INVALID_ARGUMENT = -1, /**< a bad value: NULL handle, attribute, option, buffer size */
  HN_ERR_SHAPE = -2,            /**< shapes do not fit together */
  HN_ERR_DTYPE = -3,            /**< dtype unsupported or mismatched */
  HN_ERR_NOT_FOUND = -4,        /**< unknown op, layer kind, name, file or key */
  HN_ERR_IO = -5,               /**< a file could not be opened, read or written */
  HN_ERR_FORMAT = -6,           /**< a file or string is malformed, truncated or unsupported */
  HN_ERR_UNSUPPORTED = -7,      /**< a valid request this build cannot do */
  HN_ERR_UNTRACEABLE = -8,      /**< forward code that hybridize cannot record into a graph */
  HN_ERR_OUT_OF_MEMORY = -9,    /**< an allocation failed */
  HN_ERR_INTERNAL = -10         /**< a bug in hybridnet: please report the message */
} hn_status;

/** Element types; the numbers are MXNet's type flags (as in .params files). Append-only. */
typedef enum hn_dtype {
  HN_DTYPE_FLOAT32 = 0,
  HN_DTYPE_FLOAT64 = 1,
  HN_DTYPE_FLOAT16 = 2,
  HN_DTYPE_UINT8 = 3,
  HN_DTYPE_INT32 = 4,
  HN_DTYPE_INT8 = 5,
  HN_DTYPE_INT64 = 6,
  HN_DTYPE_BOOL = 7,
  HN_DTYPE_INT16 = 8,
  HN_DTYPE_UINT16 = 9,
  HN_DTYPE_UINT32 = 10,
  HN_DTYPE_UINT64 = 11,
  HN_DTYPE_BFLOAT16 = 12
} hn_dtype;

/** Severity of a log message. */
typedef enum hn_log_level {
  HN_LOG_DEBUG = 0,
  HN_LOG_INFO = 1,
  HN_LOG_WARNING = 2,
  HN_LOG_ERROR = 3
} hn_log_level;

/** Which list of an hn_shape_info. */
typedef enum hn_shape_group {
  HN_SHAPES_ARGUMENTS = 0,
  HN_SHAPES_OUTPUTS = 1,
  HN_SHAPES_AUXILIARY_STATES = 2
} hn_shape_group;

/** An n-dimensional array (shape, dtype, C-contiguous storage that may be shared). */
typedef struct hn_tensor hn_tensor;
/** A list of optionally named tensors: the contents of an MXNet .params / .nd file. */
typedef struct hn_tensor_list hn_tensor_list;
/** A graph (MXNet symbol): immutable once created. */
typedef struct hn_symbol hn_symbol;
/** The result of hn_symbol_infer_shape: immutable. */
typedef struct hn_shape_info hn_shape_info;
/** A Gluon block (layer or container): eager, or hybridized into a cached graph. */
typedef struct hn_block hn_block;
/** A loaded model (graph + weights): immutable, shareable by any number of threads. */
typedef struct hn_model hn_model;
/** An executor of a model: owns activations and plans; one thread at a time. */
typedef struct hn_predictor hn_predictor;
/** An optimizer (MXNet's mx.optimizer) with its update counts; one thread at a time. */
typedef struct hn_optimizer hn_optimizer;
/** A learning-rate schedule (MXNet's mx.lr_scheduler); keeps state between calls. */
typedef struct hn_lr_scheduler hn_lr_scheduler;
/** A trainer (MXNet's gluon.Trainer): an optimizer applied to a block's parameters. */
typedef struct hn_trainer hn_trainer;
/** An evaluation metric (MXNet's mx.metric): running statistics; one thread at a time. */
typedef struct hn_metric hn_metric;
/** A data loader (MXNet's gluon.data.DataLoader over an ArrayDataset); one thread at a time. */
typedef struct hn_data_loader hn_data_loader;

/** Releases caller memory handed to hn_tensor_wrap; called once with the data and the arg. */
typedef void (*hn_deleter)(void* data, void* arg);

/** Receives log messages. It may be called from any thread that calls the library, also
 *  concurrently; `message` is valid only during the call. It must not call hn_set_log_callback. */
typedef void (*hn_log_callback)(int level, const char* message, void* user_data);

/** The forward of a lambda block: reads `input` (borrowed, valid during the call; don't free
 *  it) and stores a new tensor in *output (ownership passes to the library), usually made with
 *  hn_op_invoke. While a hybridized block is traced, `input` is symbolic: ops on it record graph
 *  nodes and reading its data fails with HN_ERR_UNTRACEABLE. Return HN_OK, or an error code
 *  (the message of hn_last_error() on this thread, if set by the failing call, is passed on).
 *  Called on the thread that runs the block's forward. */
typedef int (*hn_lambda_fn)(hn_tensor* input, hn_tensor** output, void* user_data);

/** The forward of a custom block (hn_block_create_custom), called with the block's user_data:
 *  inputs[0..num_inputs) are new handles the function owns (it frees them with
 *  hn_tensor_free); it stores at most `max_outputs` new tensors in outputs[0..*out_num_outputs)
 *  (ownership passes to the library), usually made with hn_op_invoke, hn_block_forward of its
 *  children and hn_block_param_data. While the block is traced (hybridize, or a forward on
 *  symbols) the inputs are symbolic (hn_tensor_is_symbolic): ops, children and parameters then
 *  record graph nodes, and hn_tensor_from_symbol turns a symbol built with hn_symbol_create into
 *  an output. Return HN_OK, or an error code (the message of hn_last_error() on this thread, if
 *  set by the failing call, is passed on). Called on the thread that runs the forward. */
typedef int (*hn_forward_fn)(void* user_data, hn_tensor* const* inputs, size_t num_inputs,
                             size_t max_outputs, hn_tensor** outputs, size_t* out_num_outputs);

/* ============================================================================================
 * Library: version, errors, logging, threads, strings, dtypes
 * ========================================================================================== */

/** The library's version, "MAJOR.MINOR.PATCH". Static string; never NULL. Thread-safe. */
HN_API const char* hn_version(void) HN_NOEXCEPT;

/** The library's ABI generation; compare with HN_ABI_VERSION at start-up. Thread-safe. */
HN_API int hn_abi_version(void) HN_NOEXCEPT;

/** The message of the last failed call on this thread ("" when none failed yet). Successful
 *  calls do not clear it. Borrowed: valid until the next failing call on this thread.
 *  Never NULL. Thread-safe (thread-local). */
HN_API const char* hn_last_error(void) HN_NOEXCEPT;

/** The status of the last failed call on this thread (HN_OK when none failed yet). */
HN_API int hn_last_error_code(void) HN_NOEXCEPT;

/** The upper-case name of a status, e.g. "HN_ERR_SHAPE"; "HN_ERR_UNKNOWN" for other values.
 *  Static string; never NULL. Thread-safe. */
HN_API const char* hn_status_name(int status) HN_NOEXCEPT;

/** Releases a string returned through a char** out-pointer. Accepts NULL. */
HN_API void hn_string_free(char* str) HN_NOEXCEPT;

/** Installs the log callback (NULL removes it) and the lowest level passed to it. Without a
 *  callback nothing is logged anywhere (the library never writes to stdout or stderr).
 *  `user_data` is passed back unchanged; it must stay valid until the callback is replaced.
 *  Thread-safe; calls already running may still use the previous callback. */
HN_API int hn_set_log_callback(hn_log_callback callback, void* user_data,
                               int min_level) HN_NOEXCEPT;

/** Sets the number of threads every kernel uses (>= 1; 1 is fastest for batch-1 models on few
 *  cores), for calls made on any thread: convolutions (oneDNN, OpenMP), our own kernels and the
 *  matrix products (split between the threads, each block on one OpenBLAS thread). Without it:
 *  OMP_NUM_THREADS when set, else the number of cores; OPENBLAS_NUM_THREADS has no effect.
 *  Process-wide; thread-safe. */
HN_API int hn_set_num_threads(int num_threads) HN_NOEXCEPT;

/** The number of threads every kernel uses (hn_set_num_threads' count, else OMP_NUM_THREADS or
 *  the number of cores). Thread-safe. */
HN_API int hn_get_num_threads(int* out_num_threads) HN_NOEXCEPT;

/** The number of the library's runtime features (what it can do on this CPU, as MXNet's
 *  mx.runtime.Features lists them). Thread-safe. */
HN_API int hn_runtime_feature_count(size_t* out_count) HN_NOEXCEPT;

/** Runtime feature `index` (< hn_runtime_feature_count; the order is fixed): its name, in
 *  MXNet's spelling where MXNet has the feature ("CPU_AVX512", "MKLDNN", "CUDA"), else
 *  hybridnet's ("CPU_AVX2", "INT8_EXACT": int8 products summed exactly, with VNNI or AMX), 1 or 0
 *  for enabled, and one sentence on what it means. Static strings; out-pointers may be NULL.
 *  Thread-safe. */
HN_API int hn_runtime_feature_get(size_t index, const char** out_name, int* out_enabled,
                                  const char** out_description) HN_NOEXCEPT;

/** Seeds the global random generator used by initializers (see hn_block_initialize).
 *  Thread-safe (the generator is locked), but concurrent users interleave their draws. */
HN_API int hn_seed(uint64_t seed) HN_NOEXCEPT;

/** The number of handles (of every type: tensors, tensor lists, symbols, shape infos, blocks,
 *  models, predictors) made by this library in this process and not freed yet. A leak check for
 *  tests and bindings: note it before a workload and compare after freeing what it made.
 *  Freeing a handle counts even while the object lives on elsewhere (a predictor keeps its
 *  model's data; a container keeps its children). Thread-safe; with other threads creating or
 *  freeing handles meanwhile the value is a snapshot. */
HN_API int hn_debug_live_handles(int64_t* out_count) HN_NOEXCEPT;

/** Hostile-input limits: caps that loaders, shape checks and allocations enforce, so a malformed
 *  or hostile file gets an error naming the limit (and how to raise it) instead of exhausting
 *  the stack or the memory of the process. Defaults, far above real models' needs:
 *  nodes 4194304, rank 32, tensor elements 2^32, allocation bytes 2^34 (16 GiB). */
typedef enum hn_limit {
  HN_LIMIT_MAX_NODES = 0,           /**< nodes in one graph (symbol JSON); HN_ERR_FORMAT past it */
  HN_LIMIT_MAX_RANK = 1,            /**< dimensions of one tensor; HN_ERR_SHAPE past it */
  HN_LIMIT_MAX_TENSOR_ELEMENTS = 2, /**< elements of one tensor; HN_ERR_OUT_OF_MEMORY past it */
  HN_LIMIT_MAX_ALLOCATION_BYTES = 3 /**< bytes of one allocation; HN_ERR_OUT_OF_MEMORY past it */
} hn_limit;

/** Sets limit `limit` (an hn_limit value) to `value` (>= 1) for the whole process; later loads
 *  and allocations use it. HN_ERR_INVALID_ARGUMENT for an unknown limit or a value below 1.
 *  Thread-safe. */
HN_API int hn_set_limit(int limit, int64_t value) HN_NOEXCEPT;

/** The current value of limit `limit`. HN_ERR_INVALID_ARGUMENT for an unknown limit.
 *  Thread-safe. */
HN_API int hn_get_limit(int limit, int64_t* out_value) HN_NOEXCEPT;

/** numpy's name of a dtype ("float32", ...). Static string, or NULL for an unknown value. */
HN_API const char* hn_dtype_name(int dtype) HN_NOEXCEPT;

/** Bytes per element of `dtype`; HN_ERR_DTYPE for an unknown value. Thread-safe. */
HN_API int hn_dtype_size(int dtype, size_t* out_bytes) HN_NOEXCEPT;

/* ============================================================================================
 * Tensors
 *
 * A shape is `ndim` dimensions (0 <= ndim <= 32; ndim 0 is a scalar with one element), each
 * >= 0. Storage is C-contiguous. Several tensors may share storage (views, list entries,
 * predictor inputs); it lives until the last of them is freed. Reading one tensor from several
 * threads is safe; writing needs exclusive use.
 * ========================================================================================== */

/** Creates a tensor with its own storage and copies `data_bytes` bytes of `data` into it;
 *  `data_bytes` must equal the element count times the dtype size (HN_ERR_INVALID_ARGUMENT
 *  otherwise). With data NULL (and data_bytes 0) the tensor is zero-filled.
 *  Ownership: *out is new (hn_tensor_free). `data` stays the caller's. Thread-safe. */
HN_API int hn_tensor_create(int dtype, const int64_t* shape, int ndim, const void* data,
                            size_t data_bytes, hn_tensor** out) HN_NOEXCEPT;

/** Wraps caller memory without copying. `data` must hold `data_bytes` bytes (exactly the
 *  tensor's size), be aligned to the dtype size and stay valid until `deleter` runs.
 *  `deleter` (may be NULL) runs once, with `data` and `deleter_arg`, when the last tensor
 *  sharing the storage is freed, on the thread that frees it. On failure it is not called and
 *  the memory stays the caller's. Ownership: *out is new (hn_tensor_free). Thread-safe. */
HN_API int hn_tensor_wrap(int dtype, const int64_t* shape, int ndim, void* data, size_t data_bytes,
                          hn_deleter deleter, void* deleter_arg, hn_tensor** out) HN_NOEXCEPT;

/** Releases a tensor handle (its storage goes when no other tensor shares it). Accepts NULL. */
HN_API void hn_tensor_free(hn_tensor* tensor) HN_NOEXCEPT;

/** The dtype of `tensor` (an hn_dtype value). */
HN_API int hn_tensor_dtype(const hn_tensor* tensor, int* out_dtype) HN_NOEXCEPT;

/** The number of dimensions. */
HN_API int hn_tensor_ndim(const hn_tensor* tensor, int* out_ndim) HN_NOEXCEPT;

/** One dimension; `axis` in [0, ndim) (HN_ERR_INVALID_ARGUMENT otherwise). */
HN_API int hn_tensor_dim(const hn_tensor* tensor, int axis, int64_t* out_dim) HN_NOEXCEPT;

/** The shape: *out_dims points to *out_ndim dimensions (it may be NULL when ndim is 0).
 *  Borrowed: valid until `tensor` is freed. */
HN_API int hn_tensor_shape(const hn_tensor* tensor, const int64_t** out_dims,
                           int* out_ndim) HN_NOEXCEPT;

/** The number of elements (1 for a scalar). */
HN_API int hn_tensor_size(const hn_tensor* tensor, int64_t* out_size) HN_NOEXCEPT;

/** The number of bytes of the elements. */
HN_API int hn_tensor_nbytes(const hn_tensor* tensor, size_t* out_bytes) HN_NOEXCEPT;

/** The element storage, C-contiguous, writable. Borrowed: valid while any tensor sharing the
 *  storage lives. Symbolic tensors (inside a lambda block being traced) have no data:
 *  HN_ERR_UNTRACEABLE. Since the values may change through it at any time, kernels keep nothing
 *  derived from this storage afterwards (a convolution re-lays-out such a weight at every use;
 *  hn_tensor_copy_from keeps the derived layouts until the values change). */
HN_API int hn_tensor_data(hn_tensor* tensor, void** out_data) HN_NOEXCEPT;

/** Copies the elements into `buffer`, which must hold at least hn_tensor_nbytes bytes
 *  (HN_ERR_INVALID_ARGUMENT naming both sizes otherwise). */
HN_API int hn_tensor_copy_to(const hn_tensor* tensor, void* buffer,
                             size_t buffer_bytes) HN_NOEXCEPT;

/** Overwrites the elements from `data`, which must hold exactly hn_tensor_nbytes bytes. Every
 *  tensor sharing the storage sees the new values. Needs exclusive use of the storage. */
HN_API int hn_tensor_copy_from(hn_tensor* tensor, const void* data, size_t data_bytes) HN_NOEXCEPT;

/** A view of `tensor` with a new shape of the same element count (no copy; shares storage).
 *  Ownership: *out is new (hn_tensor_free). */
HN_API int hn_tensor_reshape(const hn_tensor* tensor, const int64_t* shape, int ndim,
                             hn_tensor** out) HN_NOEXCEPT;

/** Reads a numpy .npy file (versions 1.0-3.0, little-endian, C order).
 *  Ownership: *out is new (hn_tensor_free). Thread-safe. */
HN_API int hn_tensor_load_npy(const char* path, hn_tensor** out) HN_NOEXCEPT;

/** Writes `tensor` as a numpy .npy file (bfloat16 has no numpy dtype: HN_ERR_UNSUPPORTED). */
HN_API int hn_tensor_save_npy(const hn_tensor* tensor, const char* path) HN_NOEXCEPT;

/** MXNet's text form of a tensor (values like numpy, then "<NDArray 2x3 @cpu(0)>").
 *  Ownership: *out is new (hn_string_free). */
HN_API int hn_tensor_to_string(const hn_tensor* tensor, char** out) HN_NOEXCEPT;

/** A new handle to the same tensor: storage shared, not copied (a symbolic tensor stays
 *  symbolic). For bindings whose objects each own a handle. Ownership: *out is new
 *  (hn_tensor_free). */
HN_API int hn_tensor_share(const hn_tensor* tensor, hn_tensor** out) HN_NOEXCEPT;

/** 1 when `tensor` is symbolic (a value inside a block being traced: it has no data, and ops
 *  on it record graph nodes), else 0. */
HN_API int hn_tensor_is_symbolic(const hn_tensor* tensor, int* out_symbolic) HN_NOEXCEPT;

/** A new tensor of `shape` drawn from the global generator (seeded by hn_seed; the draws
 *  initializers make too): normal with `mean` and `stddev` (>= 0, finite). Float dtypes only
 *  (HN_ERR_DTYPE otherwise). Ownership: *out is new (hn_tensor_free). Thread-safe (the
 *  generator is locked). */
HN_API int hn_tensor_random_normal(int dtype, const int64_t* shape, int ndim, double mean,
                                   double stddev, hn_tensor** out) HN_NOEXCEPT;

/** Like hn_tensor_random_normal, uniform in [low, high) (low <= high, both finite). */
HN_API int hn_tensor_random_uniform(int dtype, const int64_t* shape, int ndim, double low,
                                    double high, hn_tensor** out) HN_NOEXCEPT;

/* ============================================================================================
 * Tensor lists: MXNet NDArray list files (.params, .nd), read in every record version (V0-V3),
 * written as V2. Thread-compatible: const functions may run concurrently; appending needs
 * exclusive use.
 * ========================================================================================== */

/** Creates an empty list. Ownership: *out is new (hn_tensor_list_free). */
HN_API int hn_tensor_list_create(hn_tensor_list** out) HN_NOEXCEPT;

/** Reads a .params/.nd file. Damaged files give HN_ERR_FORMAT naming the file, the array and
 *  what was expected; a missing file HN_ERR_IO. Ownership: *out is new. Thread-safe. */
HN_API int hn_tensor_list_load(const char* path, hn_tensor_list** out) HN_NOEXCEPT;

/** Parses the bytes of a .params/.nd file (copied; the buffer may be freed on return).
 *  Ownership: *out is new (hn_tensor_list_free). Thread-safe. */
HN_API int hn_tensor_list_load_from_memory(const void* bytes, size_t num_bytes,
                                           hn_tensor_list** out) HN_NOEXCEPT;

/** Releases a list (tensors taken out with hn_tensor_list_get stay valid). Accepts NULL. */
HN_API void hn_tensor_list_free(hn_tensor_list* list) HN_NOEXCEPT;

/** The number of entries. */
HN_API int hn_tensor_list_size(const hn_tensor_list* list, size_t* out_size) HN_NOEXCEPT;

/** The name of entry `index` ("" in an unnamed list; "arg:..."/"aux:..." in model files).
 *  Borrowed: valid until the list is freed. */
HN_API int hn_tensor_list_name(const hn_tensor_list* list, size_t index,
                               const char** out_name) HN_NOEXCEPT;

/** Entry `index` as a new tensor handle sharing the list's storage (writes are visible to
 *  both); *out is set to NULL for an entry holding MXNet's "none" array.
 *  Ownership: *out is new (hn_tensor_free). */
HN_API int hn_tensor_list_get(const hn_tensor_list* list, size_t index,
                              hn_tensor** out) HN_NOEXCEPT;

/** The record version entry `index` was read with (0-3; 2 for appended entries). */
HN_API int hn_tensor_list_record_version(const hn_tensor_list* list, size_t index,
                                         int* out_version) HN_NOEXCEPT;

/** Appends `tensor` (shared, not copied) under `name` (NULL or "" for unnamed). A list is
 *  either all named or all unnamed (HN_ERR_INVALID_ARGUMENT otherwise). */
HN_API int hn_tensor_list_append(hn_tensor_list* list, const char* name,
                                 const hn_tensor* tensor) HN_NOEXCEPT;

/** Writes the list as an MXNet .params file (V2 records). */
HN_API int hn_tensor_list_save(const hn_tensor_list* list, const char* path) HN_NOEXCEPT;

/* ============================================================================================
 * Eager operators: every op of the registry, by its MXNet name or alias. Thread-safe: ops may
 * run concurrently on different output tensors. Strings returned by the hn_op_* queries are
 * static: valid for the life of the process.
 * ========================================================================================== */

/** The number of public ops (ops used only inside optimized graphs are not listed). */
HN_API int hn_op_count(size_t* out_count) HN_NOEXCEPT;

/** The name of op `index` (sorted by name). Static string. */
HN_API int hn_op_name(size_t index, const char** out_name) HN_NOEXCEPT;

/** Facts about op `op_name` (a name or alias; HN_ERR_NOT_FOUND otherwise): its description,
 *  attribute count and alias count. Each out-pointer may be NULL. Static strings. */
HN_API int hn_op_info(const char* op_name, const char** out_description, size_t* out_num_attrs,
                      size_t* out_num_aliases) HN_NOEXCEPT;

/** Attribute `index` of op `op_name`: key, type text ("int", "boolean", "Shape(tuple)",
 *  "{'relu', 'sigmoid'}", ...), default text ("" when required), required flag (1/0) and
 *  description. Each out-pointer may be NULL. Static strings. */
HN_API int hn_op_attr(const char* op_name, size_t index, const char** out_key,
                      const char** out_type, const char** out_default, int* out_required,
                      const char** out_description) HN_NOEXCEPT;

/** Alias `index` of op `op_name`. Static string. */
HN_API int hn_op_alias(const char* op_name, size_t index, const char** out_alias) HN_NOEXCEPT;

/** Whether op `op_name` (a name or alias; HN_ERR_NOT_FOUND otherwise) has a gradient: sets
 *  *out_has_gradient to 1 when backward (eager or hybridized) can pass through it, else 0. */
HN_API int hn_op_has_gradient(const char* op_name, int* out_has_gradient) HN_NOEXCEPT;

/** How op `op_name` exports to ONNX (hn_model_export_onnx): *out_exportable 1 if it has an
 *  ONNX mapping, else 0; *out_num_onnx_ops the number of ONNX ops it may emit
 *  (hn_op_onnx_op); *out_limits the attribute values or shapes that do not export, in words
 *  ("" when there are none). Each out-pointer may be NULL. Static string. */
HN_API int hn_op_onnx_info(const char* op_name, int* out_exportable, size_t* out_num_onnx_ops,
                           const char** out_limits) HN_NOEXCEPT;

/** ONNX op `index` that op `op_name` may emit ("Conv", ...). Static string. */
HN_API int hn_op_onnx_op(const char* op_name, size_t index, const char** out_onnx_op) HN_NOEXCEPT;

/** The names of the inputs op `op_name` takes with these attributes, in order ("data",
 *  "weight", "bias" for FullyConnected; "bias" goes with no_bias="True"; a variadic op such as
 *  Concat gets "arg0", "arg1", ... sized by its count attribute): the keyword names of the
 *  inputs in MXNet's frontends. `attr_keys`/`attr_values` may be NULL when num_attrs is 0.
 *  Attributes that do not parse, or a missing required one the names depend on, are
 *  HN_ERR_INVALID_ARGUMENT. Borrowed: valid until the next hn_op_input_names call on this
 *  thread. */
HN_API int hn_op_input_names(const char* op_name, const char* const* attr_keys,
                             const char* const* attr_values, size_t num_attrs,
                             const char* const** out_names, size_t* out_count) HN_NOEXCEPT;

/** The attribute that holds the number of inputs of a variadic op ("num_args" for Concat and
 *  add_n: MXNet's key_var_num_args), or "" when the count is fixed or follows from other
 *  attributes. Static string. */
HN_API int hn_op_key_var_num_args(const char* op_name, const char** out_key) HN_NOEXCEPT;

/** Runs op `op_name` on `inputs` with string attributes (MXNet's spelling: "num_hidden"="64",
 *  "act_type"="relu", "kernel"="(3, 3)", "no_bias"="True"). Unknown ops are HN_ERR_NOT_FOUND,
 *  unknown or malformed attributes HN_ERR_INVALID_ARGUMENT, shape and dtype mismatches
 *  HN_ERR_SHAPE / HN_ERR_DTYPE; the message names the op and what it expected.
 *  `inputs` may be NULL when num_inputs is 0, `attr_keys`/`attr_values` when num_attrs is 0.
 *  The op's outputs (at most `max_outputs`, else HN_ERR_INVALID_ARGUMENT and nothing is
 *  returned) are stored in outputs[0..*out_num_outputs).
 *  Ownership: each outputs[i] is new (hn_tensor_free); inputs stay the caller's. */
HN_API int hn_op_invoke(const char* op_name, hn_tensor* const* inputs, size_t num_inputs,
                        const char* const* attr_keys, const char* const* attr_values,
                        size_t num_attrs, size_t max_outputs, hn_tensor** outputs,
                        size_t* out_num_outputs) HN_NOEXCEPT;

/* ============================================================================================
 * Symbols (graphs). A symbol is immutable: every function returning a symbol returns a new
 * one. Const functions may run concurrently on one symbol. Name arrays returned by the
 * hn_symbol_list_* functions are borrowed: valid until the symbol is freed.
 * ========================================================================================== */

/** A variable (graph input) named `name`. Ownership: *out is new (hn_symbol_free). */
HN_API int hn_symbol_var(const char* name, hn_symbol** out) HN_NOEXCEPT;

/** Applies op `op_name` to `inputs` (single-output symbols; may be NULL when num_inputs is 0)
 *  with string attributes. Missing trailing inputs become variables named
 *  "<name>_<input name>" ("fc1_weight"). `name` NULL or "" picks "<op lower-case><n>" (the
 *  counter is per thread). Errors as hn_op_invoke. Ownership: *out is new. */
HN_API int hn_symbol_create(const char* op_name, hn_symbol* const* inputs, size_t num_inputs,
                            const char* const* attr_keys, const char* const* attr_values,
                            size_t num_attrs, const char* name, hn_symbol** out) HN_NOEXCEPT;

/** The outputs of several symbols as one multi-output symbol. Ownership: *out is new. */
HN_API int hn_symbol_group(hn_symbol* const* symbols, size_t num_symbols,
                           hn_symbol** out) HN_NOEXCEPT;

/** Output `index` of `symbol` as a symbol of its own. Ownership: *out is new. */
HN_API int hn_symbol_output(const hn_symbol* symbol, size_t index, hn_symbol** out) HN_NOEXCEPT;

/** Parses symbol JSON (MXNet 0.8 to 1.9 formats; old ones are upgraded).
 *  Ownership: *out is new. Thread-safe. */
HN_API int hn_symbol_from_json(const char* json, hn_symbol** out) HN_NOEXCEPT;

/** Reads a symbol JSON file. Ownership: *out is new. Thread-safe. */
HN_API int hn_symbol_load(const char* path, hn_symbol** out) HN_NOEXCEPT;

/** Writes MXNet 1.9 JSON (byte-compatible with MXNet's own files) to `path`. */
HN_API int hn_symbol_save(const hn_symbol* symbol, const char* path) HN_NOEXCEPT;

/** MXNet 1.9 JSON text of `symbol`. Ownership: *out is new (hn_string_free). */
HN_API int hn_symbol_to_json(const hn_symbol* symbol, char** out) HN_NOEXCEPT;

/** Facts about JSON text before upgrade: the mxnet_version it records (800 when absent, as
 *  MXNet 0.8 wrote none) and whether it uses the legacy layout (1/0). Each out may be NULL. */
HN_API int hn_symbol_inspect_json(const char* json, int* out_mxnet_version,
                                  int* out_legacy) HN_NOEXCEPT;

/** The graph value of a symbolic tensor (hn_tensor_is_symbolic) as a one-output symbol, e.g.
 *  the input of a custom block's forward while it is traced; HN_ERR_INVALID_ARGUMENT for a
 *  concrete tensor. Ownership: *out is new (hn_symbol_free). */
HN_API int hn_symbol_from_tensor(const hn_tensor* tensor, hn_symbol** out) HN_NOEXCEPT;

/** A symbolic tensor standing for the one-output `symbol` (the reverse of
 *  hn_symbol_from_tensor), e.g. an output of a custom block's forward while it is traced.
 *  Ownership: *out is new (hn_tensor_free). */
HN_API int hn_tensor_from_symbol(const hn_symbol* symbol, hn_tensor** out) HN_NOEXCEPT;

/** The next automatic node name for `hint` in the current name scope ("<hint><n>", advancing
 *  the counter hn_symbol_create's own automatic names use), without the scope's prefix: pass it
 *  as hn_symbol_create's `name`, which adds the prefix. Frontends whose op functions live under
 *  another name than the op's use it to name nodes as MXNet does (mx.sym.contrib.arange_like:
 *  "arange_like0", not "_contrib_arange_like0"). Ownership: *out is new (hn_string_free).
 *  Counters are per thread. */
HN_API int hn_symbol_auto_name(const char* hint, char** out) HN_NOEXCEPT;

/** The operators of JSON text (its control-flow subgraphs included) that this library does not
 *  implement, without failing on them: one line per operator, "OP<TAB>NODE,NODE,...\n", sorted
 *  by operator name ("Custom" nodes add " (op_type T)" to their name); "" when every operator is
 *  supported. Loading such a file fails with one error naming them all. Ownership: *out is new
 *  (hn_string_free). Thread-safe. */
HN_API int hn_symbol_unsupported_ops(const char* json, char** out) HN_NOEXCEPT;

/** Releases a symbol. Accepts NULL. */
HN_API void hn_symbol_free(hn_symbol* symbol) HN_NOEXCEPT;

/** The argument variables (inputs and weights, not auxiliary states), in graph order. */
HN_API int hn_symbol_list_arguments(const hn_symbol* symbol, const char* const** out_names,
                                    size_t* out_count) HN_NOEXCEPT;

/** The auxiliary states (variables ops update, e.g. BatchNorm's moving statistics). */
HN_API int hn_symbol_list_auxiliary_states(const hn_symbol* symbol, const char* const** out_names,
                                           size_t* out_count) HN_NOEXCEPT;

/** The output names ("fc1_output", ...). */
HN_API int hn_symbol_list_outputs(const hn_symbol* symbol, const char* const** out_names,
                                  size_t* out_count) HN_NOEXCEPT;

/** The number of nodes (variables and ops) of the graph, in topological order. */
HN_API int hn_symbol_num_nodes(const hn_symbol* symbol, size_t* out_count) HN_NOEXCEPT;

/** Node `index`: its op name ("null" for a variable, as MXNet's JSON writes it) and node name.
 *  Each out may be NULL. Borrowed: valid until the symbol is freed. */
HN_API int hn_symbol_node(const hn_symbol* symbol, size_t index, const char** out_op,
                          const char** out_name) HN_NOEXCEPT;

/** Infers the shapes of every argument, output and auxiliary state from known ones.
 *  Known shapes are given for `num_known` variables: names[i] has ndims[i] dimensions, taken
 *  in order from the concatenated `dims` (so ndims sum to the length of dims). With partial 0
 *  an incomplete result is HN_ERR_SHAPE naming what stayed unknown; with partial 1 unknown
 *  shapes are reported with ndim 0 (or dimensions 0). Conflicts are HN_ERR_SHAPE naming the
 *  op and node. Ownership: *out is new (hn_shape_info_free). */
HN_API int hn_symbol_infer_shape(const hn_symbol* symbol, size_t num_known,
                                 const char* const* names, const int* ndims, const int64_t* dims,
                                 int partial, hn_shape_info** out) HN_NOEXCEPT;

/** The number of shapes in `group` (the same as the symbol's list of that group). */
HN_API int hn_shape_info_count(const hn_shape_info* info, int group, size_t* out_count) HN_NOEXCEPT;

/** Shape `index` of `group`: the variable or output name and its dimensions. Each out may be
 *  NULL. Borrowed: valid until `info` is freed. */
HN_API int hn_shape_info_get(const hn_shape_info* info, int group, size_t index,
                             const char** out_name, const int64_t** out_dims,
                             int* out_ndim) HN_NOEXCEPT;

/** 1 when every shape is known, else 0. */
HN_API int hn_shape_info_complete(const hn_shape_info* info, int* out_complete) HN_NOEXCEPT;

/** Releases an inference result. Accepts NULL. */
HN_API void hn_shape_info_free(hn_shape_info* info) HN_NOEXCEPT;

/** MXNet 1.9.1's mx.viz.print_summary(symbol, shape, line_length, positions) text, byte for byte:
 *  one row per op node with its output shape (batch axis left out), parameter count and the
 *  layers it reads, then the total. Known input shapes as in hn_symbol_infer_shape; num_known 0
 *  is MXNet's shape=None (no shape column, shape-dependent counts 0). line_length 0 and
 *  num_positions 0 take MXNet's defaults (120; .44, .64, .74, 1.: fractions of line_length when
 *  the last is <= 1, else character positions; 4 increasing values). Shapes that leave a node's
 *  shape unknown are HN_ERR_SHAPE naming the input. Ownership: *out is new (hn_string_free).
 *  Thread-safe. */
HN_API int hn_symbol_print_summary(const hn_symbol* symbol, size_t num_known,
                                   const char* const* names, const int* ndims, const int64_t* dims,
                                   int line_length, const double* positions, size_t num_positions,
                                   char** out) HN_NOEXCEPT;

/** MXNet 1.9.1's mx.viz.plot_network(symbol, title, shape=..., dtype=..., node_attrs=...,
 *  hide_weights=...) as Graphviz DOT source (graphviz.Digraph's .source: no final newline):
 *  MXNet's nodes, labels, colours and edges. `title` NULL is "plot". Shapes as in
 *  hn_symbol_print_summary (num_known 0: edges without shapes); `num_dtypes` input dtypes
 *  (hn_dtype values for dtype_names[i]; 0: edges without dtypes); `num_node_attrs` Graphviz node
 *  attributes overriding the defaults (may be 0 with NULL arrays); hide_weights 1 hides
 *  *_weight, *_bias, *_gamma, ... variables. Ownership: *out is new (hn_string_free).
 *  Thread-safe. */
HN_API int hn_symbol_plot_network(const hn_symbol* symbol, const char* title, size_t num_known,
                                  const char* const* names, const int* ndims, const int64_t* dims,
                                  size_t num_dtypes, const char* const* dtype_names,
                                  const int* dtypes, size_t num_node_attrs,
                                  const char* const* attr_keys, const char* const* attr_values,
                                  int hide_weights, char** out) HN_NOEXCEPT;

/** The graph as the executor runs it for these input shapes (all given, as in
 *  hn_symbol_infer_shape): fused kernels (_hn_convolution, ...) and channel-last layout changes
 *  as nodes. For hn_symbol_print_summary and hn_symbol_plot_network; its internal ops have no
 *  MXNet JSON form, so hn_symbol_to_json and hn_symbol_save fail on it. Ownership: *out is new.
 *  Thread-safe. */
HN_API int hn_symbol_as_run(const hn_symbol* symbol, size_t num_known, const char* const* names,
                            const int* ndims, const int64_t* dims, hn_symbol** out) HN_NOEXCEPT;

/* ============================================================================================
 * Blocks (Gluon). Write a model as a tree of blocks, initialize, run it eagerly, hybridize it
 * (the next forward traces it into a graph and caches an executor), export it.
 *
 * Thread-safety: a block tree (a block, its children and its parents) must be used by one
 * thread at a time. Handles share the block: adding a child to a container keeps the child
 * alive through the container, and the child's handle must still be freed by its owner.
 *
 * Kinds and attributes for hn_block_create (values are strings, as MXNet writes them; every
 * kind also takes "prefix", the name prefix, e.g. "fc1_"):
 *   "HybridSequential", "Sequential"  (containers; add children with hn_block_add)
 *   "Dense"       units (required), activation ("" = none; relu, sigmoid, tanh, softrelu,
 *                 softsign), use_bias (True), flatten (True), in_units (0 = inferred at the
 *                 first forward), weight_initializer (name, default: the one given to
 *                 hn_block_initialize), bias_initializer ("zeros")
 *   "Activation"  activation (required; alias act_type)
 *   "Dropout"     rate (required, in [0, 1]; identity at inference)
 *   "Flatten"     (none)
 *   "Conv1D", "Conv2D", "Conv3D"   channels (required), kernel_size (required; an int or a
 *                 tuple "(3, 3)"), strides (1), padding (0), dilation (1), groups (1), layout
 *                 ("NCW"/"NCHW"/"NCDHW"), activation (""), use_bias (True), in_channels (0 =
 *                 inferred), weight_initializer, bias_initializer ("zeros")
 *   "Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose"   the same plus output_padding (0)
 *   "MaxPool1D/2D/3D"   pool_size (2), strides (= pool_size), padding (0), layout, ceil_mode
 *   "AvgPool1D/2D/3D"   the same plus count_include_pad (True)
 *   "GlobalMaxPool1D/2D/3D", "GlobalAvgPool1D/2D/3D"   layout
 *   "BatchNorm"   axis (1), momentum (0.9), epsilon (1e-5), center (True), scale (True),
 *                 use_global_stats (False), in_channels (0), beta_initializer ("zeros"),
 *                 gamma_initializer ("ones"), running_mean_initializer ("zeros"),
 *                 running_variance_initializer ("ones")
 *   "LeakyReLU"   alpha (required)      "PReLU"   alpha_initializer (0.25), in_channels (1)
 *   "ELU"         alpha (1.0)           "SELU", "GELU", "Identity"   (none)
 *   "HybridConcurrent", "Concurrent"   axis (-1) (containers: each child gets the input, their
 *                 outputs are concatenated)
 * Losses (MXNet's gluon.loss; forward inputs in MXNet's order, a trailing optional one may be
 * left out; weight "None" = not applied, batch_axis the axis the per-sample result keeps):
 *   "L1Loss"      weight (None), batch_axis (0)            inputs pred, label[, sample_weight]
 *   "L2Loss"      weight (1.0), batch_axis (0)             inputs pred, label[, sample_weight]
 *   "SigmoidBinaryCrossEntropyLoss" (alias "SigmoidBCELoss")   from_sigmoid (False), weight,
 *                 batch_axis; inputs pred, label[, sample_weight[, pos_weight]]
 *   "SoftmaxCrossEntropyLoss" (alias "SoftmaxCELoss")   axis (-1), sparse_label (True),
 *                 from_logits (False), weight, batch_axis; inputs pred, label[, sample_weight]
 *   "KLDivLoss"   from_logits (True), axis (-1), weight, batch_axis; inputs as L1Loss
 *   "CTCLoss"     layout ("NTC" or "TNC"), label_layout ("NT" or "TN"), weight; inputs pred,
 *                 label[, pred_lengths[, label_lengths[, sample_weight]]] (blank: last class)
 *   "HuberLoss"   rho (1), weight, batch_axis        "HingeLoss", "SquaredHingeLoss"   margin
 *                 (1), weight, batch_axis; inputs as L1Loss
 *   "LogisticLoss"   weight, batch_axis, label_format ("signed" or "binary"); inputs as L1Loss
 *   "TripletLoss" margin (1), weight, batch_axis; inputs pred, positive, negative
 *   "PoissonNLLLoss"   weight, from_logits (True), batch_axis, compute_full (False), epsilon
 *                 (1e-08); inputs pred, target[, sample_weight]; a (1,) mean over everything
 *   "CosineEmbeddingLoss"   weight, batch_axis, margin (0); inputs input1, input2, label[,
 *                 sample_weight]; shape (N, 1)
 *   "SDMLLoss"    smoothing_parameter (0.3), weight, batch_axis (both unused, as in MXNet);
 *                 inputs x1, x2 (N, D)
 * Initializer names: "uniform" (MXNet's default, U(-0.07, 0.07)), "normal", "xavier", "zeros",
 * "ones", or MXNet's Initializer.dumps() text ('["xavier", {"magnitude": 2.24}]'; uniform,
 * normal, xavier, constant, zero, one).
 * ========================================================================================== */

/** Creates a block of `kind` (see above; HN_ERR_NOT_FOUND lists the kinds) with string
 *  attributes (unknown or malformed ones: HN_ERR_INVALID_ARGUMENT listing the accepted keys).
 *  `attr_keys`/`attr_values` may be NULL when num_attrs is 0.
 *  Ownership: *out is new (hn_block_free). Thread-safe. */
HN_API int hn_block_create(const char* kind, const char* const* attr_keys,
                           const char* const* attr_values, size_t num_attrs,
                           hn_block** out) HN_NOEXCEPT;

/** Creates a block whose forward is the C function `fn` (one input, one output), called with
 *  `user_data`, which must stay valid while the block lives. With hybrid 1 it is a
 *  HybridLambda (traceable if `fn` only uses ops), with 0 a plain Lambda (eager only).
 *  Ownership: *out is new (hn_block_free). Thread-safe. */
HN_API int hn_block_create_lambda(hn_lambda_fn fn, void* user_data, int hybrid,
                                  hn_block** out) HN_NOEXCEPT;

/** Creates a block whose forward is `fn` (any number of inputs and outputs; see hn_forward_fn),
 *  called with `user_data`, which must stay valid while the block lives: a binding's
 *  user-defined block (a Python HybridBlock subclass). `class_name` ("HybridNet") is how
 *  hn_block_to_string shows it; its prefix alias is class_name in lower case ("hybridnet0_").
 *  With hybrid 1 it is a HybridBlock (hybridize traces `fn` once into a cached graph), with 0
 *  a plain Block (always eager; hybridize passes on to its children). Give it children with
 *  hn_block_register_child and parameters with hn_block_add_parameter. `prefix` NULL picks
 *  the automatic one. Ownership: *out is new (hn_block_free). Thread-safe. */
HN_API int hn_block_create_custom(const char* class_name, int hybrid, hn_forward_fn fn,
                                  void* user_data, const char* prefix, hn_block** out) HN_NOEXCEPT;

/** Makes `child` the child `name` of the custom block `parent` (as assigning self.name = child
 *  in an MXNet Block): `name` is its structural name in save_parameters files ("fc1.weight").
 *  A child of that name is replaced. A hybrid block takes hybrid children only. The parent
 *  keeps the child alive; a block has at most one parent. Custom blocks only (containers take
 *  hn_block_add). */
HN_API int hn_block_register_child(hn_block* parent, const char* name, hn_block* child) HN_NOEXCEPT;

/** Declares parameter `name` of the custom block `block` (MXNet's self.params.get(name,
 *  shape=...)): its full name is the block's prefix + name; `shape` may hold 0 for dimensions
 *  completed at the first forward. `initializer` (see above; NULL or "" for the one given to
 *  initialize) and `differentiable` (0 for values that are not trained, e.g. statistics) are
 *  recorded as MXNet does. Custom blocks only. */
HN_API int hn_block_add_parameter(hn_block* block, const char* name, int dtype,
                                  const int64_t* shape, int ndim, const char* initializer,
                                  int differentiable) HN_NOEXCEPT;

/** Names `block` now, as MXNet 1.x names a block when it is constructed: inside the name_scope
 *  of `scope` its prefix is scope's prefix + (the "prefix" it was created with, or its alias and
 *  a counter of scope: "hybridsequential0_dense1_"); with scope NULL (outside any name_scope)
 *  its "prefix", or a process-wide "<alias><n>_" (the counters automatic node names use). The
 *  name stays when the block is added to a container later. Only before its first use
 *  (HN_ERR_INVALID_ARGUMENT once named); blocks not named this way are named at first use from
 *  their parent ("hybridsequential0_dense0_", as in C++, Java and R). */
HN_API int hn_block_name_in_scope(hn_block* block, hn_block* scope) HN_NOEXCEPT;

/** The block's prefix ("hybridsequential0_dense0_"; assigned at first use): full parameter
 *  names are the prefix + their name. Borrowed: valid until the block handle is freed. */
HN_API int hn_block_prefix(hn_block* block, const char** out_prefix) HN_NOEXCEPT;

/** Appends `child` to the container `parent` (a HybridSequential takes hybrid blocks only).
 *  A block has at most one parent. The parent keeps the child alive; the child's handle stays
 *  valid and is still freed by the caller. */
HN_API int hn_block_add(hn_block* parent, hn_block* child) HN_NOEXCEPT;

/** Initializes every parameter of the tree with `initializer` (a name, see above; NULL or ""
 *  for "uniform") after seeding the global generator with `seed`, so a seed gives the same
 *  weights in every language. Parameters whose shapes are not known yet (Dense without
 *  in_units) are drawn at the first forward, from the generator as it is then: run that forward
 *  before initializing another tree (or give in_units) for reproducible weights.
 *  force_reinit 1 re-draws initialized parameters. */
HN_API int hn_block_initialize(hn_block* block, const char* initializer, uint64_t seed,
                               int force_reinit) HN_NOEXCEPT;

/** Runs the block on `inputs` (eagerly, or through its cached graph when hybridized) and stores
 *  its outputs (at most `max_outputs`, else HN_ERR_INVALID_ARGUMENT) in
 *  outputs[0..*out_num_outputs). Ownership: each outputs[i] is new (hn_tensor_free). */
HN_API int hn_block_forward(hn_block* block, hn_tensor* const* inputs, size_t num_inputs,
                            size_t max_outputs, hn_tensor** outputs,
                            size_t* out_num_outputs) HN_NOEXCEPT;

/** Turns hybridization on (active 1) or off for every hybrid block of the tree; the next
 *  forward traces the graph once. static_alloc/static_shape are MXNet's flags (static_shape
 *  requires static_alloc); the executor always keeps its memory plan. */
HN_API int hn_block_hybridize(hn_block* block, int active, int static_alloc,
                              int static_shape) HN_NOEXCEPT;

/** Writes PREFIX-symbol.json and PREFIX-EEEE.params (MXNet 1.x format, epoch >= 0). Needs a
 *  traced graph: hybridize and run one forward first (HN_ERR_INVALID_ARGUMENT says so). */
HN_API int hn_block_export(hn_block* block, const char* prefix, int epoch) HN_NOEXCEPT;

/** Writes the parameters with structural names ("0.weight"), as MXNet's save_parameters. */
HN_API int hn_block_save_parameters(hn_block* block, const char* path) HN_NOEXCEPT;

/** Loads a save_parameters file or an export's .params. Missing parameters are
 *  HN_ERR_NOT_FOUND unless allow_missing is 1, unknown ones unless ignore_extra is 1, shape
 *  mismatches HN_ERR_SHAPE; each message names the parameter and the file. */
HN_API int hn_block_load_parameters(hn_block* block, const char* path, int allow_missing,
                                    int ignore_extra) HN_NOEXCEPT;

/** Imports an export as a hybridizable block (MXNet's SymbolBlock.imports): `symbol_file`,
 *  the names of its data inputs, and `param_file` (NULL or "" for none; then the weights must
 *  be loaded with hn_block_load_parameters). Ownership: *out is new. Thread-safe. */
HN_API int hn_block_import(const char* symbol_file, const char* const* input_names,
                           size_t num_inputs, const char* param_file, hn_block** out) HN_NOEXCEPT;

/** The graph of a hybrid block traced with `num_inputs` symbolic inputs named "data" (or
 *  "data0", "data1", ...), as MXNet's block(mx.sym.var('data')). Ownership: *out is new. */
HN_API int hn_block_trace(hn_block* block, size_t num_inputs, hn_symbol** out) HN_NOEXCEPT;

/** Runs the hybrid block on symbols, one single-output symbol per input (MXNet's
 *  net(mx.sym.var('data'))): its symbolic program, one symbol per output in
 *  outputs[0..*out_num_outputs) (at most `max_outputs`). Ownership: each outputs[i] is new
 *  (hn_symbol_free). */
HN_API int hn_block_forward_symbols(hn_block* block, hn_symbol* const* inputs, size_t num_inputs,
                                    size_t max_outputs, hn_symbol** outputs,
                                    size_t* out_num_outputs) HN_NOEXCEPT;

/** A hybridizable block running `symbol` (MXNet's SymbolBlock(outputs, inputs, params)):
 *  `input_names` name its data variables, every other variable is a parameter named like the
 *  variable. `params` (may be NULL) gives values by name ("arg:"/"aux:" prefixes as in export
 *  files are stripped; every parameter must be present and no other name); without, load or
 *  initialize them. Ownership: *out is new (hn_block_free); `params` stays the caller's (its
 *  values are copied). Thread-safe. */
HN_API int hn_block_from_symbol(const hn_symbol* symbol, const char* const* input_names,
                                size_t num_inputs, const hn_tensor_list* params,
                                hn_block** out) HN_NOEXCEPT;

/** The network `name` of MXNet's model zoo (mx.gluon.model_zoo.vision.get_model;
 *  case-insensitive; HN_ERR_NOT_FOUND lists the names) with MXNet's block structure and
 *  names, without weights (initialize it, or load a file MXNet's zoo saved). Attributes:
 *  "classes" (1000), "thumbnail" (False; resnets: a 3x3 stem for 32x32 input). Ownership: *out
 *  is new (hn_block_free). Thread-safe. */
HN_API int hn_block_get_model(const char* name, const char* const* attr_keys,
                              const char* const* attr_values, size_t num_attrs,
                              hn_block** out) HN_NOEXCEPT;

/** Every name hn_block_get_model accepts. Static: valid for the life of the process. */
HN_API int hn_block_model_names(const char* const** out_names, size_t* out_count) HN_NOEXCEPT;

/** Takes a snapshot of the parameters of the tree (as hn_block_collect_params, in the same
 *  order, initialized or not) and returns their number; hn_block_param_info reads it. */
HN_API int hn_block_param_count(hn_block* block, size_t* out_count) HN_NOEXCEPT;

/** Parameter `index` of the last hn_block_param_count snapshot: full name
 *  ("hybridsequential0_dense0_weight"), shape (0 for dimensions not known yet), dtype, and 1
 *  when it has a value (0 before initialize, or while its initialization waits for the first
 *  forward). Each out may be NULL. Borrowed: valid until the next hn_block_param_count on this
 *  handle or until the handle is freed. */
HN_API int hn_block_param_info(hn_block* block, size_t index, const char** out_name,
                               const int64_t** out_dims, int* out_ndim, int* out_dtype,
                               int* out_initialized) HN_NOEXCEPT;

/** The value of the tree's parameter `name` (full name): a new handle sharing its storage
 *  (writing it changes the weight), or, while the block is being traced, its graph variable (a
 *  symbolic tensor). HN_ERR_NOT_FOUND for an unknown name; HN_ERR_INVALID_ARGUMENT when it has
 *  no value yet, saying why. Ownership: *out is new (hn_tensor_free). */
HN_API int hn_block_param_data(hn_block* block, const char* name, hn_tensor** out) HN_NOEXCEPT;

/** Replaces the value of the tree's parameter `name` by a copy of `value` (same dtype; the
 *  shape must fit the declared one, whose unknown dimensions it completes). Cached graphs see
 *  the new value. */
HN_API int hn_block_param_set_data(hn_block* block, const char* name,
                                   const hn_tensor* value) HN_NOEXCEPT;

/** Initializes the tree's parameter `name` (NULL: every parameter, in hn_block_param_count
 *  order) with `initializer` (see above; NULL or "" for "uniform"; a parameter's own
 *  initializer wins), drawing from the global generator as it is: MXNet's initialize(), which
 *  does not reseed (seed with hn_seed). Parameters whose shapes are not known yet are drawn at
 *  the first forward. force_reinit 1 re-draws initialized ones. */
HN_API int hn_block_param_initialize(hn_block* block, const char* name, const char* initializer,
                                     int force_reinit) HN_NOEXCEPT;

/** The gradient buffer of the tree's parameter `name` (MXNet's param.grad()): a new handle
 *  sharing it, zeros until a backward writes it (backward stores the gradients of every
 *  parameter a recorded forward read, as grad_req says). HN_ERR_INVALID_ARGUMENT when the
 *  parameter's grad_req is "null" or it has no value yet. Ownership: *out is new
 *  (hn_tensor_free). */
HN_API int hn_block_param_grad(hn_block* block, const char* name, hn_tensor** out) HN_NOEXCEPT;

/** Sets attribute `key` of the tree's parameter `name` (NULL: of every parameter of the tree,
 *  as MXNet's collect_params().setattr). Keys: "grad_req" ("write", "add", "null"; "null"
 *  drops the gradient buffer, another change starts a new zero one; parameters that are not
 *  differentiable, such as BatchNorm's running statistics, keep "null"), "lr_mult",
 *  "wd_mult" (floats: the Trainer scales the parameter's learning rate and weight decay). */
HN_API int hn_block_param_set_attr(hn_block* block, const char* name, const char* key,
                                   const char* value) HN_NOEXCEPT;

/** Reads attribute `key` of the tree's parameter `name` (the keys of hn_block_param_set_attr;
 *  floats as Python prints them, "1.0"). Ownership: *out is new (hn_string_free). */
HN_API int hn_block_param_get_attr(hn_block* block, const char* name, const char* key,
                                   char** out) HN_NOEXCEPT;

/** Zeroes the gradient buffer of the tree's parameter `name` (NULL: of every parameter; those
 *  without a buffer are skipped): MXNet's zero_grad. */
HN_API int hn_block_param_zero_grad(hn_block* block, const char* name) HN_NOEXCEPT;

/** Casts the value and gradient buffer of the tree's parameter `name` (NULL: of every
 *  parameter) to `dtype`, an hn_dtype, keeping their values (MXNet's Parameter.cast and
 *  Block.cast); a parameter not initialized yet will be drawn in `dtype`. The tree's traced
 *  graphs are dropped (the next hybridized call traces again). Tensors obtained earlier from
 *  hn_block_param_data keep the old values and dtype. */
HN_API int hn_block_param_cast(hn_block* block, const char* name, int dtype) HN_NOEXCEPT;

/** Fills `tensor` in place with initializer `init` (a registered name or MXNet's dumps() text,
 *  as hn_block_param_initialize takes) for the parameter called `name`: with `weight_rule` 0 as
 *  MXNet's Initializer.__call__ does for a name (a name ending in "weight" gets the
 *  initializer's rule, "bias"/"beta"/"min" zeros, "gamma"/"max" ones, others
 *  HN_ERR_INVALID_ARGUMENT), with 1 the initializer's rule whatever the name (a parameter's
 *  own "__init__"). Random initializers draw from the generator hn_seed seeds. */
HN_API int hn_initializer_fill(const char* init, const char* name, int weight_rule,
                               hn_tensor* tensor) HN_NOEXCEPT;

/** The block's name (its prefix without the trailing '_', e.g. "hybridsequential0"); names
 *  are assigned at first use. Borrowed: valid until the block is freed. */
HN_API int hn_block_name(hn_block* block, const char** out_name) HN_NOEXCEPT;

/** MXNet's text form of the tree ("HybridSequential(\n  (0): Dense(512 -> 256, ...)...").
 *  Ownership: *out is new (hn_string_free). */
HN_API int hn_block_to_string(hn_block* block, char** out) HN_NOEXCEPT;

/** MXNet 1.9.1's Block.summary(*inputs) text, byte for byte: runs the block once on `inputs`
 *  and lists every block called but the sequential containers ("Conv2D-1", its output shapes,
 *  the size of its own parameters), then the total, trainable, non-trainable, shared and unique
 *  parameter counts. The tree must be initialized and not hybridized (HN_ERR_INVALID_ARGUMENT
 *  naming the hybridized block). Ownership: *out is new (hn_string_free). */
HN_API int hn_block_summary(hn_block* block, hn_tensor* const* inputs, size_t num_inputs,
                            char** out) HN_NOEXCEPT;

/** The initialized parameters of the tree by full name ("dense0_weight"), sharing storage
 *  (writing a tensor's data changes the weights). Ownership: *out is new. */
HN_API int hn_block_collect_params(hn_block* block, hn_tensor_list** out) HN_NOEXCEPT;

/** Releases a block handle; the block lives on while a parent holds it. Accepts NULL. */
HN_API void hn_block_free(hn_block* block) HN_NOEXCEPT;

/* ============================================================================================
 * Models and predictors: inference on an export (ours or real MXNet's).
 *
 * A model is the graph plus weights; immutable and thread-safe. Its data inputs are the
 * arguments without a value in the params file. A predictor runs the model: input shapes are
 * given on every call (a new shape re-plans, e.g. another batch size; up to 8 plans are kept).
 * A predictor needs exclusive use during each call; create one per thread (or clone one), they
 * share the model's weights. Predictors keep the model's data alive: the model may be freed
 * before its predictors.
 * ========================================================================================== */

/** Loads PREFIX-symbol.json and PREFIX-EEEE.params (EEEE = epoch as 4 digits; keys "arg:" and
 *  "aux:" as MXNet writes them). Ownership: *out is new (hn_model_free). Thread-safe. */
HN_API int hn_model_load(const char* prefix, int epoch, hn_model** out) HN_NOEXCEPT;

/** Loads a model from memory: `json` (symbol JSON text of `json_bytes` bytes, no NUL needed)
 *  and `params` (the bytes of a .params file; `params_bytes` 0, with `params` NULL or not, means
 *  a graph without parameters). Both buffers are copied or parsed before return. Ownership: *out is
 * new (hn_model_free). Thread-safe. */
HN_API int hn_model_load_from_memory(const char* json, size_t json_bytes, const void* params,
                                     size_t params_bytes, hn_model** out) HN_NOEXCEPT;

/** Releases a model handle (its predictors keep working). Accepts NULL. */
HN_API void hn_model_free(hn_model* model) HN_NOEXCEPT;

/** The data input names, in graph order. Borrowed: valid until the model is freed. */
HN_API int hn_model_input_names(const hn_model* model, const char* const** out_names,
                                size_t* out_count) HN_NOEXCEPT;

/** The output names. Borrowed: valid until the model is freed. */
HN_API int hn_model_output_names(const hn_model* model, const char* const** out_names,
                                 size_t* out_count) HN_NOEXCEPT;

/** The model's graph. Ownership: *out is new (hn_symbol_free). */
HN_API int hn_model_symbol(const hn_model* model, hn_symbol** out) HN_NOEXCEPT;

/** Flags of hn_model_export_onnx (bitwise or). Append-only. */
typedef enum hn_onnx_flag {
  /** Axis 0 of every data input becomes the symbolic dimension "N" (and every dimension that
   *  follows it elsewhere is symbolic); refused naming the node when the graph fixes the batch
   *  size. */
  HN_ONNX_DYNAMIC_BATCH = 1
} hn_onnx_flag;

/* The ONNX opsets hn_model_export_onnx writes; opset 0 means HN_ONNX_OPSET_DEFAULT. */
#define HN_ONNX_OPSET_MIN 13     /**< the oldest ONNX opset hn_model_export_onnx writes */
#define HN_ONNX_OPSET_MAX 21     /**< the newest ONNX opset hn_model_export_onnx writes */
#define HN_ONNX_OPSET_DEFAULT 17 /**< the opset written when 0 is given */

/** Writes `model` to `path` as an ONNX model (a ModelProto of the official onnx.proto schema):
 *  the weights are initializers, the data inputs and outputs keep their names, each ONNX node's
 *  doc_string names the graph node it comes from. `opset` is HN_ONNX_OPSET_MIN..MAX (0: the
 *  default); `flags` combines hn_onnx_flag values. The data inputs' shapes are given as in
 *  hn_symbol_infer_shape (names[i] has ndims[i] dimensions, taken in order from `dims`), and
 *  their dtypes as hn_dtype values in `dtypes` (one per name; NULL: float32 for all); an input
 *  not given uses its "__shape__" and "__dtype__" attributes, or is inferred from the others
 *  (float32 when nothing says otherwise). Inference
 *  semantics: training-only outputs and SoftmaxOutput's label are left out.
 *  Nodes without an exact ONNX form are HN_ERR_UNSUPPORTED, listing every such node and why;
 *  bad opsets, flags or shapes HN_ERR_INVALID_ARGUMENT / HN_ERR_SHAPE; unknown input names
 *  HN_ERR_NOT_FOUND; an unwritable path HN_ERR_IO. Thread-safe. */
HN_API int hn_model_export_onnx(const hn_model* model, const char* path, int opset, int flags,
                                size_t num_known, const char* const* names, const int* ndims,
                                const int64_t* dims, const int* dtypes) HN_NOEXCEPT;

/** hn_model_export_onnx for a graph and an optional list of weights (names "arg:NAME" /
 *  "aux:NAME" as in a .params file, or plain names; `params` may be NULL): every variable
 *  without a value in `params` is an input of the ONNX graph, the weights too when `params` is
 *  NULL (their shapes are inferred from the data inputs'). Errors as hn_model_export_onnx.
 *  Thread-safe. */
HN_API int hn_symbol_export_onnx(const hn_symbol* symbol, const hn_tensor_list* params,
                                 const char* path, int opset, int flags, size_t num_known,
                                 const char* const* names, const int* ndims, const int64_t* dims,
                                 const int* dtypes) HN_NOEXCEPT;

/** Creates a predictor of `model` (planning happens at the first forward, when shapes are
 *  known). Ownership: *out is new (hn_predictor_free). Thread-safe. */
HN_API int hn_predictor_create(const hn_model* model, hn_predictor** out) HN_NOEXCEPT;

/** A new predictor of the same model sharing its weights (inputs and plans are not copied).
 *  May run while another thread uses `predictor`. Ownership: *out is new. */
HN_API int hn_predictor_clone(const hn_predictor* predictor, hn_predictor** out) HN_NOEXCEPT;

/** Releases a predictor. Accepts NULL. */
HN_API void hn_predictor_free(hn_predictor* predictor) HN_NOEXCEPT;

/** With `enable` 1, lets this predictor's convolutions trade the last bits for speed: BatchNorm
 *  folded into the convolution weights, Winograd for 3x3 stride-1 convolutions (oneDNN's on
 *  AVX-512 CPUs, hybridnet's own on AVX2 ones). Outputs then differ from the default (which equals op-by-op execution bit for bit) by a
 *  relative error bounded in docs/performance.md (at most 1e-4 of the largest output, which
 *  the C API's tests check on a ResNet). 0 (the default) turns it off; anything else is
 *  HN_ERR_INVALID_ARGUMENT. Takes effect at the next forward (which plans again); clones made
 *  afterwards inherit it. Needs exclusive use of the predictor. */
HN_API int hn_predictor_set_fast_math(hn_predictor* predictor, int enable) HN_NOEXCEPT;

/** Sets the dtype this predictor's convolutions and dense layers compute in: HN_DTYPE_FLOAT32
 *  (the default) or HN_DTYPE_BFLOAT16, MXNet AMP's bfloat16 conversion at load: the data and
 *  weights of every Convolution and FullyConnected rounded to bfloat16 (float32 sums, BatchNorm
 *  folded into convolution weights), every other op and every tensor float32, on oneDNN's bf16
 *  kernels (avx512_bf16 or AMX instructions where the CPU has them). README.md's compatibility
 *  section gives the error against float32 per model. A model exported by MXNet's AMP in
 *  bfloat16 runs its own bfloat16 layers in bfloat16 either way. Other dtypes are
 *  HN_ERR_INVALID_ARGUMENT; a CPU without AVX-512 fails at the forward with HN_ERR_UNSUPPORTED.
 *  Takes effect at the next forward (which plans again); clones made afterwards inherit it.
 *  Needs exclusive use of the predictor. */
HN_API int hn_predictor_set_dtype(hn_predictor* predictor, int dtype) HN_NOEXCEPT;

/** Sets input `name` for the next forwards: `data` holds `data_bytes` bytes (exactly the
 *  shape's size) of `dtype` and is copied. Unknown names are HN_ERR_NOT_FOUND listing the
 *  inputs. Inputs never set are fed zeros of their inferred shape (as MXNet does for labels). */
HN_API int hn_predictor_set_input(hn_predictor* predictor, const char* name, int dtype,
                                  const int64_t* shape, int ndim, const void* data,
                                  size_t data_bytes) HN_NOEXCEPT;

/** Sets input `name` to `tensor` without copying: the predictor shares its storage until the
 *  input is set again or the predictor is freed; don't write it during a forward. */
HN_API int hn_predictor_set_input_tensor(hn_predictor* predictor, const char* name,
                                         const hn_tensor* tensor) HN_NOEXCEPT;

/** Runs the model on the inputs set. Shape or dtype mismatches are HN_ERR_SHAPE / HN_ERR_DTYPE
 *  naming the op and node. */
HN_API int hn_predictor_forward(hn_predictor* predictor) HN_NOEXCEPT;

/** The number of outputs of the model. */
HN_API int hn_predictor_num_outputs(const hn_predictor* predictor, size_t* out_count) HN_NOEXCEPT;

/** The shape of output `index` after a forward (HN_ERR_INVALID_ARGUMENT before one).
 *  Borrowed: valid until the next forward or the predictor is freed. */
HN_API int hn_predictor_output_shape(const hn_predictor* predictor, size_t index,
                                     const int64_t** out_dims, int* out_ndim) HN_NOEXCEPT;

/** Copies output `index` of the last forward into `buffer`, which must hold at least its
 *  bytes (HN_ERR_INVALID_ARGUMENT naming both sizes otherwise). */
HN_API int hn_predictor_get_output(const hn_predictor* predictor, size_t index, void* buffer,
                                   size_t buffer_bytes) HN_NOEXCEPT;

/** Output `index` of the last forward as a tensor (no copy; later forwards write elsewhere, so
 *  the tensor keeps its values). Ownership: *out is new (hn_tensor_free). */
HN_API int hn_predictor_output(hn_predictor* predictor, size_t index, hn_tensor** out) HN_NOEXCEPT;

/** One call: sets the inputs (in hn_model_input_names order, shared not copied; num_inputs may
 *  be fewer than the inputs: the rest are zeros as above), runs a forward and returns the
 *  outputs (at most `max_outputs`) in outputs[0..*out_num_outputs).
 *  Ownership: each outputs[i] is new (hn_tensor_free). */
HN_API int hn_predictor_run(hn_predictor* predictor, hn_tensor* const* inputs, size_t num_inputs,
                            size_t max_outputs, hn_tensor** outputs,
                            size_t* out_num_outputs) HN_NOEXCEPT;

/* ============================================================================================
 * Autograd: gradients of eager computations, as MXNet's mx.autograd.
 *
 *   hn_autograd_mark_variables(&x, 1, &write, NULL);          (x.attach_grad())
 *   hn_autograd_set_recording(1, &was_recording);              (with autograd.record():)
 *   hn_autograd_set_training(1, &was_training);
 *   hn_op_invoke("exp", &x, 1, NULL, NULL, 0, 1, &y, &n);
 *   hn_autograd_set_recording(was_recording, NULL);
 *   hn_autograd_set_training(was_training, NULL);
 *   hn_autograd_backward(&y, 1, NULL, 0, 1);                   (y.backward())
 *   hn_tensor_grad(x, &dx);                                    (x.grad: exp(x))
 *
 * While the calling thread records, every eager op (hn_op_invoke, block forwards) with an input
 * computed from a marked variable is kept on a tape, with the values its gradient reads; backward
 * runs the gradients of the recorded ops with the same kernels. Recording and training are
 * flags of the calling thread. A tape lives as long as the tensors computed on it; tensors on a
 * tape, and their gradient buffers, are used by one thread at a time.
 * ========================================================================================== */

/** How backward stores a variable's gradient (MXNet's grad_req; values as MXNet's OpReqType).
 *  Append-only. */
typedef enum hn_grad_req {
  HN_GRAD_NULL = 0,  /**< no gradient: the variable is skipped */
  HN_GRAD_WRITE = 1, /**< each backward overwrites the gradient buffer */
  HN_GRAD_ADD = 3    /**< each backward adds to the gradient buffer */
} hn_grad_req;

/** Sets whether the calling thread records eager ops (`recording` 0 or 1, else
 *  HN_ERR_INVALID_ARGUMENT) and stores the previous setting in *out_previous (may be NULL), as
 *  MXNet's MXAutogradSetIsRecording: restore it to end a recording scope. Thread-local. */
HN_API int hn_autograd_set_recording(int recording, int* out_previous) HN_NOEXCEPT;

/** Sets whether eager ops on the calling thread run in training mode (`training` 0 or 1;
 *  Dropout drops, BatchNorm uses the batch statistics) and stores the previous setting in
 *  *out_previous (may be NULL). MXNet's record() sets both flags, pause() clears recording and
 *  training, train_mode()/predict_mode() set training only. Thread-local. */
HN_API int hn_autograd_set_training(int training, int* out_previous) HN_NOEXCEPT;

/** The calling thread's autograd flags as bits, for hn_autograd_set_flags. Append-only. */
typedef enum hn_autograd_flag {
  HN_AUTOGRAD_RECORDING = 1, /**< eager ops are recorded (hn_autograd_set_recording) */
  HN_AUTOGRAD_TRAINING = 2   /**< eager ops run in training mode (hn_autograd_set_training) */
} hn_autograd_flag;

/** Sets the flags named in `mask` (hn_autograd_flag bits) to their bits in `flags`, leaves the
 *  others, and stores every flag as it was before in *out_previous (may be NULL): one call where
 *  a scope would make two of hn_autograd_set_recording / hn_autograd_set_training. record() is
 *  (RECORDING | TRAINING, RECORDING | TRAINING), pause() (0, RECORDING | TRAINING), predict_mode()
 *  (0, TRAINING); a scope's exit restores the flags that changed: (previous, changed). Bits of
 *  `flags` outside `mask` are ignored; a bit that is no hn_autograd_flag in either is
 *  HN_ERR_INVALID_ARGUMENT. Thread-local. */
HN_API int hn_autograd_set_flags(int flags, int mask, int* out_previous) HN_NOEXCEPT;

/** 1 when the calling thread records, else 0. */
HN_API int hn_autograd_is_recording(int* out_recording) HN_NOEXCEPT;

/** 1 when eager ops on the calling thread run in training mode, else 0. */
HN_API int hn_autograd_is_training(int* out_training) HN_NOEXCEPT;

/** Marks variables[0..num_variables) as tensors whose gradients backward computes (MXNet's
 *  mark_variables; attach_grad is one variable with gradients NULL). grad_reqs[i] is an
 *  hn_grad_req. gradients[i] receives the gradient: a tensor of the variable's shape and dtype,
 *  shared (backward writes into its storage; the caller keeps its handle), or NULL for a new
 *  zero-filled one; `gradients` itself may be NULL (all new). Variables must be float tensors
 *  (HN_ERR_DTYPE), not symbolic; a variable computed by a recorded op becomes a leaf. Marking
 *  changes the variable's handle: handles shared from it afterwards (hn_tensor_share, op inputs)
 *  are the same variable, ones shared before are not. Nothing is marked on failure. */
HN_API int hn_autograd_mark_variables(hn_tensor* const* variables, size_t num_variables,
                                      const int* grad_reqs,
                                      hn_tensor* const* gradients) HN_NOEXCEPT;

/** Computes the gradients of heads[0..num_heads) with respect to every marked variable they were
 *  recorded from whose grad_req is not HN_GRAD_NULL, and stores them in the variables' gradient
 *  tensors (MXNet's autograd.backward). `head_grads` is NULL (all ones) or holds num_heads
 *  entries, each NULL (ones) or a tensor of its head's shape and dtype. Without `retain_graph`
 *  (0 or 1) the tape is released: a second backward through it is HN_ERR_INVALID_ARGUMENT. The
 *  gradient ops run in training mode when `train_mode` is 1. Errors: a head not recorded, or no
 *  variable wanting a gradient (HN_ERR_INVALID_ARGUMENT); an op on the way without a gradient
 *  (HN_ERR_UNSUPPORTED, naming it). */
HN_API int hn_autograd_backward(hn_tensor* const* heads, size_t num_heads,
                                hn_tensor* const* head_grads, int retain_graph,
                                int train_mode) HN_NOEXCEPT;

/** The gradients of heads[0..num_heads) with respect to variables[0..num_variables) (marked
 *  tensors the heads were recorded from), stored as new tensors in
 *  out_grads[0..num_variables); the gradient buffers are left as they are (MXNet's
 *  autograd.grad with create_graph=False). Other arguments and errors as hn_autograd_backward.
 *  Ownership: each out_grads[i] is new (hn_tensor_free); nothing is stored on failure. */
HN_API int hn_autograd_grad(hn_tensor* const* heads, size_t num_heads, hn_tensor* const* head_grads,
                            hn_tensor* const* variables, size_t num_variables, int retain_graph,
                            int train_mode, hn_tensor** out_grads) HN_NOEXCEPT;

/** hn_autograd_grad with MXNet's create_graph (0 or 1): with 1 the gradient ops are recorded, so
 *  the returned gradients are on the tape and can be differentiated again (second order); pass
 *  retain_graph 1 then, as MXNet's default does, to go through the first graph again. A gradient
 *  op without a gradient of its own makes that second backward fail with HN_ERR_UNSUPPORTED,
 *  naming it. Other arguments, ownership and errors as hn_autograd_grad. */
HN_API int hn_autograd_grad_v2(hn_tensor* const* heads, size_t num_heads,
                               hn_tensor* const* head_grads, hn_tensor* const* variables,
                               size_t num_variables, int retain_graph, int train_mode,
                               int create_graph, hn_tensor** out_grads) HN_NOEXCEPT;

/** The gradient tensor of a marked variable (sharing storage: later backwards write into it),
 *  or NULL in *out when `tensor` is not marked (MXNet's x.grad).
 *  Ownership: a non-NULL *out is new (hn_tensor_free). */
HN_API int hn_tensor_grad(const hn_tensor* tensor, hn_tensor** out) HN_NOEXCEPT;

/** A tensor sharing `tensor`'s storage but not its place on the autograd tape: gradients do not
 *  flow through it (MXNet's x.detach()). Ownership: *out is new (hn_tensor_free). */
HN_API int hn_tensor_detach(const hn_tensor* tensor, hn_tensor** out) HN_NOEXCEPT;

/* ============================================================================================
 * Optimizers and learning-rate schedulers, as MXNet 1.9.1's mx.optimizer and mx.lr_scheduler.
 *
 *   const char* keys[] = {"learning_rate", "momentum"}, *values[] = {"0.1", "0.9"};
 *   hn_optimizer_create("sgd", keys, values, 2, &opt);
 *   hn_optimizer_create_state(opt, 0, weight, 4, states, &num_states);   (momentum)
 *   hn_optimizer_update(opt, &index, &weight, &grad, 1, states, &num_states);
 *
 * Hyper-parameters are MXNet's keyword arguments written as Python literals ("0.9", "True",
 * "None", "[10, 20]"). An update runs the fused op MXNet's optimizer runs (sgd_mom_update,
 * adam_update, ...) and writes the new values into the weight's and the states' storage. An
 * optimizer, and a scheduler set on it, are used by one thread at a time.
 * ========================================================================================== */

/** Creates the optimizer MXNet registers as `name` (case-insensitive: "sgd", "nag", "adam",
 *  "adamax", "nadam", "rmsprop", "adagrad", "adadelta", "signum", "ftml", "ftrl", "lamb",
 *  "lars", "dcasgd", "sgld", "ccsgd", "test") with keyword arguments keys[i] = values[i]
 *  ("learning_rate", "wd", "rescale_grad", "clip_gradient", "multi_precision", "momentum", ...).
 *  An unknown name is HN_ERR_NOT_FOUND listing the names; an unknown keyword or a bad value
 *  HN_ERR_INVALID_ARGUMENT listing the optimizer's keywords. Ownership: *out is new
 *  (hn_optimizer_free). */
HN_API int hn_optimizer_create(const char* name, const char* const* keys, const char* const* values,
                               size_t num_params, hn_optimizer** out) HN_NOEXCEPT;

/** Releases an optimizer (NULL is a no-op). Tensors it updated stay valid. */
HN_API void hn_optimizer_free(hn_optimizer* optimizer) HN_NOEXCEPT;

/** The states MXNet's create_state_multi_precision makes for `weight` at `index`, as new
 *  tensors in out_states[0..*out_num_states) (at most max_states, else HN_ERR_INVALID_ARGUMENT
 *  and nothing stored), None entries left out: SGD with momentum one, Adam two (mean, var); with
 *  multi_precision and a float16 weight the float32 master copy too (last for SGD, NAG and
 *  LARS, first for the others). Ownership: each out_states[i] is new (hn_tensor_free). */
HN_API int hn_optimizer_create_state(hn_optimizer* optimizer, int index, const hn_tensor* weight,
                                     size_t max_states, hn_tensor** out_states,
                                     size_t* out_num_states) HN_NOEXCEPT;

/** How MXNet nests the states of `weight` (what a .states file pickles), as a Python literal
 *  over positions in hn_optimizer_create_state's list: "None", "0", "(0,)", "(0, 1)",
 *  "(None, 0)", "(0, (1, 2))". Ownership: *out is new (hn_string_free). */
HN_API int hn_optimizer_state_structure(const hn_optimizer* optimizer, const hn_tensor* weight,
                                        char** out) HN_NOEXCEPT;

/** Updates weights[0..num_weights) in place from grads[i] and their states, as MXNet's Updater
 *  called with these lists: each index's update is counted, the learning rate taken from the
 *  scheduler at the update count and scaled by the index's lr_mult (weight decay by wd_mult).
 *  `states` holds the states of every weight in order, num_states[i] of them for weight i (as
 *  hn_optimizer_create_state made them). Errors: shapes or dtypes that do not fit
 *  (HN_ERR_SHAPE, HN_ERR_DTYPE), a wrong number of states (HN_ERR_INVALID_ARGUMENT), each
 *  naming the index. */
HN_API int hn_optimizer_update(hn_optimizer* optimizer, const int* indices,
                               hn_tensor* const* weights, hn_tensor* const* grads,
                               size_t num_weights, hn_tensor* const* states,
                               const size_t* num_states) HN_NOEXCEPT;

/** The learning rate: the scheduler's at the current update count when one is set. */
HN_API int hn_optimizer_get_learning_rate(const hn_optimizer* optimizer, float* out_lr) HN_NOEXCEPT;

/** Sets the learning rate; HN_ERR_INVALID_ARGUMENT when a scheduler is set (as MXNet). */
HN_API int hn_optimizer_set_learning_rate(hn_optimizer* optimizer, float lr) HN_NOEXCEPT;

/** The factor gradients are multiplied by (MXNet's rescale_grad). */
HN_API int hn_optimizer_get_rescale_grad(const hn_optimizer* optimizer,
                                         float* out_rescale_grad) HN_NOEXCEPT;

/** Sets rescale_grad (gluon.Trainer sets 1 / batch_size before each step). */
HN_API int hn_optimizer_set_rescale_grad(hn_optimizer* optimizer, float rescale_grad) HN_NOEXCEPT;

/** Sets the learning-rate multipliers of indices[0..n) (every other index: 1), replacing the
 *  previous ones (MXNet's set_lr_mult by index). */
HN_API int hn_optimizer_set_lr_mult(hn_optimizer* optimizer, const int* indices, const float* mults,
                                    size_t n) HN_NOEXCEPT;

/** Sets the weight-decay multipliers of indices[0..n) (every other index: 1), replacing the
 *  previous ones (MXNet's set_wd_mult by index). */
HN_API int hn_optimizer_set_wd_mult(hn_optimizer* optimizer, const int* indices, const float* mults,
                                    size_t n) HN_NOEXCEPT;

/** The largest update count of any index (MXNet's num_update), and the count of `index` (0
 *  when never updated). */
HN_API int hn_optimizer_update_count(const hn_optimizer* optimizer, int index, int* out_num_update,
                                     int* out_index_count) HN_NOEXCEPT;

/** The hyper-parameters with their current values, by MXNet's attribute names, one
 *  "name=value" line each (values as Python literals). Ownership: *out is new
 *  (hn_string_free). */
HN_API int hn_optimizer_params(const hn_optimizer* optimizer, char** out) HN_NOEXCEPT;

/** Sets the optimizer's learning-rate scheduler (NULL removes it); the optimizer shares it, so
 *  `scheduler` may be freed afterwards. When the optimizer was given a learning_rate (or its
 *  class has a default, as Adam), the scheduler's base_lr becomes it, as in MXNet. */
HN_API int hn_optimizer_set_lr_scheduler(hn_optimizer* optimizer,
                                         hn_lr_scheduler* scheduler) HN_NOEXCEPT;

/** Creates a scheduler: `name` "factor", "multifactor", "poly" or "cosine" (MXNet's class
 *  names, case-insensitive, with or without "Scheduler") with MXNet's keywords ("step",
 *  "factor", "stop_factor_lr", "max_update", "pwr", "final_lr", "base_lr", "warmup_steps",
 *  "warmup_begin_lr", "warmup_mode"). Errors as hn_optimizer_create, and the values MXNet
 *  refuses (step < 1, factor > 1, an unknown warmup_mode). Ownership: *out is new
 *  (hn_lr_scheduler_free). */
HN_API int hn_lr_scheduler_create(const char* name, const char* const* keys,
                                  const char* const* values, size_t num_params,
                                  hn_lr_scheduler** out) HN_NOEXCEPT;

/** Releases a scheduler handle (NULL is a no-op); an optimizer it was set on keeps it. */
HN_API void hn_lr_scheduler_free(hn_lr_scheduler* scheduler) HN_NOEXCEPT;

/** The learning rate at update count `num_update` (MXNet's scheduler(num_update)); advances
 *  the schedulers that keep state (factor, multifactor), so counts must not decrease. */
HN_API int hn_lr_scheduler_get(hn_lr_scheduler* scheduler, int num_update,
                               float* out_lr) HN_NOEXCEPT;

/** The scheduler's attributes by MXNet's names, one "name=value" line each, the first
 *  "class=FactorScheduler" (or its kind). Ownership: *out is new (hn_string_free). */
HN_API int hn_lr_scheduler_params(const hn_lr_scheduler* scheduler, char** out) HN_NOEXCEPT;

/* ============================================================================================
 * Trainer, as MXNet 1.9.1's gluon.Trainer on one CPU context: an optimizer applied to
 * parameters of a block tree with the gradients the last backward stored.
 *
 *   hn_optimizer_create("adam", keys, values, 1, &opt);
 *   hn_trainer_create(blocks, names, n, opt, &trainer);   (block i holds parameter names[i])
 *   ... record a forward, hn_autograd_backward ...
 *   hn_trainer_step(trainer, batch_size, 0);
 *   hn_trainer_save_states(trainer, "net.states");    (MXNet's .states file)
 *
 * A parameter's position in the trainer's list is its index for the optimizer and its key in
 * .states files. A trainer and its block tree are used by one thread at a time.
 * ========================================================================================== */

/** Creates a trainer of `num_params` parameters, in that order: parameter i is the one named
 *  param_names[i] (full name) in the tree of blocks[i] (MXNet's Trainer(params) takes a list;
 *  from collect_params() it is sorted by name). The trainer shares `optimizer`. Errors: an
 *  unknown name (HN_ERR_NOT_FOUND), a parameter given twice, no parameters
 *  (HN_ERR_INVALID_ARGUMENT). Ownership: *out is new (hn_trainer_free). */
HN_API int hn_trainer_create(hn_block* const* blocks, const char* const* param_names,
                             size_t num_params, hn_optimizer* optimizer,
                             hn_trainer** out) HN_NOEXCEPT;

/** Releases a trainer (NULL is a no-op); the parameters keep their values. */
HN_API void hn_trainer_free(hn_trainer* trainer) HN_NOEXCEPT;

/** One update of every parameter whose grad_req is not "null", gradients scaled by
 *  rescale_grad / batch_size (MXNet's step). A parameter whose gradient no backward wrote since
 *  the last update fails naming it (HN_ERR_INVALID_ARGUMENT, MXNet's stale-gradient warning),
 *  and nothing is updated, unless ignore_stale_grad is 1, which skips such parameters. */
HN_API int hn_trainer_step(hn_trainer* trainer, int batch_size,
                           int ignore_stale_grad) HN_NOEXCEPT;

/** MXNet's allreduce_grads: with one context there is nothing to sum (kept so code split as
 *  allreduce_grads + update runs). */
HN_API int hn_trainer_allreduce_grads(hn_trainer* trainer) HN_NOEXCEPT;

/** The update half of hn_trainer_step (MXNet's update), for code that changes the gradients in
 *  between (gradient clipping). */
HN_API int hn_trainer_update(hn_trainer* trainer, int batch_size,
                             int ignore_stale_grad) HN_NOEXCEPT;

/** The optimizer's learning rate (its scheduler's at the current update count). */
HN_API int hn_trainer_get_learning_rate(const hn_trainer* trainer, float* out_lr) HN_NOEXCEPT;

/** Sets the learning rate (HN_ERR_INVALID_ARGUMENT when the optimizer has a scheduler). */
HN_API int hn_trainer_set_learning_rate(hn_trainer* trainer, float lr) HN_NOEXCEPT;

/** The trainer's optimizer, shared (hn_trainer_load_states replaces it with the one the file
 *  holds: ask again after loading). Ownership: *out is new (hn_optimizer_free). */
HN_API int hn_trainer_optimizer(const hn_trainer* trainer, hn_optimizer** out) HN_NOEXCEPT;

/** Writes MXNet 1.9.1's .states file (a pickle of the optimizer states by index and the
 *  optimizer), which MXNet's Trainer.load_states reads. */
HN_API int hn_trainer_save_states(const hn_trainer* trainer, const char* path) HN_NOEXCEPT;

/** Reads a .states file MXNet 1.9.1 or hn_trainer_save_states wrote: the optimizer's
 *  hyper-parameters, update counts, scheduler, and every state it holds. A file of another
 *  optimizer, or with states that do not fit the parameters: HN_ERR_INVALID_ARGUMENT; a damaged
 *  file: HN_ERR_FORMAT; either way nothing changes. */
HN_API int hn_trainer_load_states(hn_trainer* trainer, const char* path) HN_NOEXCEPT;

/* ============================================================================================
 * Metrics: MXNet's mx.metric (Accuracy, TopKAccuracy, F1, MCC, MAE, MSE, RMSE, CrossEntropy,
 * NegativeLogLikelihood, Perplexity, PearsonCorrelation, Loss, CompositeEvalMetric).
 *
 *   const char* keys[] = {"axis"}, *values[] = {"1"};
 *   hn_metric_create("acc", keys, values, 1, &acc);
 *   hn_metric_update(acc, &label, 1, &pred, 1);                 (one call per batch)
 *   hn_metric_get(acc, 0, 1, &name, &value, &n);               ("accuracy", 0.75)
 *   hn_metric_free(acc);
 *
 * A metric keeps local statistics (cleared by hn_metric_reset with local_only 1, e.g. every
 * logging interval) and global ones (cleared by hn_metric_reset with local_only 0), as MXNet's
 * EvalMetric; a metric without instances reads NaN.
 * ========================================================================================== */

/** Creates the metric MXNet's mx.metric.create(name, **kwargs) makes: `name` is a registry
 *  name or alias, case-insensitive ("accuracy"/"acc", "top_k_accuracy"/"top_k_acc", "f1",
 *  "mcc", "mae", "mse", "rmse", "crossentropy"/"ce", "negativeloglikelihood"/"nll_loss",
 *  "perplexity", "pearsoncorrelation"/"pearsonr", "loss", "composite"); keys[i]/values[i] are
 *  its keyword arguments as MXNet's text ("name", "axis", "top_k", "average", "eps",
 *  "ignore_label"; "metrics" for "composite": comma-separated names). keys and values may be
 *  NULL when num_args is 0. Errors: an unknown name (HN_ERR_NOT_FOUND, listing the known ones),
 *  an unknown or bad argument (HN_ERR_INVALID_ARGUMENT). Ownership: *out is new
 *  (hn_metric_free). */
HN_API int hn_metric_create(const char* name, const char* const* keys, const char* const* values,
                            size_t num_args, hn_metric** out) HN_NOEXCEPT;

/** Adds one batch: labels[i] is the label tensor of preds[i] (Loss reads only the predictions;
 *  `labels` may be NULL when num_labels is 0). Errors: different counts (HN_ERR_INVALID_ARGUMENT),
 *  shapes that do not fit (HN_ERR_SHAPE), labels the metric cannot take (a third class for F1
 *  or MCC, a label out of range for CrossEntropy: HN_ERR_INVALID_ARGUMENT); the statistics are
 *  unchanged on failure. */
HN_API int hn_metric_update(hn_metric* metric, hn_tensor* const* labels, size_t num_labels,
                            hn_tensor* const* preds, size_t num_preds) HN_NOEXCEPT;

/** The metric's readings (MXNet's get(), or get_global() when `global` is 1): one for a plain
 *  metric, every child's for a composite. *out_num_values receives their count; with
 *  max_values 0, names and values may be NULL (a count query), else names[i] and values[i]
 *  receive the first min(count, max_values) readings. The names are borrowed: valid while the
 *  metric lives. */
HN_API int hn_metric_get(const hn_metric* metric, int global, size_t max_values, const char** names,
                         double* values, size_t* out_num_values) HN_NOEXCEPT;

/** The running sums of a plain metric (MXNet's num_inst and sum_metric, or global_num_inst and
 *  global_sum_metric when `global` is 1); either out-pointer may be NULL. A composite has no
 *  sums of its own: HN_ERR_INVALID_ARGUMENT. */
HN_API int hn_metric_stats(const hn_metric* metric, int global, double* out_num_inst,
                           double* out_sum_metric) HN_NOEXCEPT;

/** Clears the local statistics (local_only 1: MXNet's reset_local()) or all of them (0:
 *  reset()). */
HN_API int hn_metric_reset(hn_metric* metric, int local_only) HN_NOEXCEPT;

/** MXNet's class name of the metric ("Accuracy", "CompositeEvalMetric", ...). Borrowed: a static
 *  string. */
HN_API int hn_metric_kind(const hn_metric* metric, const char** out_kind) HN_NOEXCEPT;

/** MXNet's class name ("Accuracy", ...) that a name or alias hn_metric_create takes stands for,
 *  without making a metric (bindings pick their class with it before the arguments are
 *  checked). Errors: an unknown name (HN_ERR_NOT_FOUND, listing the known ones). Borrowed: a
 *  static string. */
HN_API int hn_metric_kind_of(const char* name, const char** out_kind) HN_NOEXCEPT;

/** Releases a metric. Accepts NULL. */
HN_API void hn_metric_free(hn_metric* metric) HN_NOEXCEPT;

/* ============================================================================================
 * Data loading: MXNet's gluon.data.DataLoader over an ArrayDataset of in-memory arrays, so a
 * seed gives the same batches in the same order in every language.
 *
 *   hn_tensor* arrays[] = {images, labels};                     (one row per sample)
 *   hn_data_loader_create(arrays, 2, 64, 1, "keep", 42, &loader);
 *   for (epoch ...) {
 *     hn_data_loader_reset(loader);
 *     while (hn_data_loader_next(loader, 2, batch, &n) == HN_OK && n > 0) { ... free batch ... }
 *   }
 * ========================================================================================== */

/** Makes a loader over `arrays` (num_arrays >= 1, one first dimension: sample i is row i of
 *  each; the loader shares them, it does not copy). batch_size >= 1; shuffle 1 draws a new
 *  order every epoch from a generator seeded once with `seed`; last_batch is MXNet's "keep",
 *  "discard" or "rollover" (NULL: "keep"). Errors: HN_ERR_INVALID_ARGUMENT, HN_ERR_SHAPE for
 *  arrays of different lengths or a scalar. Ownership: *out is new (hn_data_loader_free). */
HN_API int hn_data_loader_create(hn_tensor* const* arrays, size_t num_arrays, int64_t batch_size,
                                 int shuffle, const char* last_batch, uint64_t seed,
                                 hn_data_loader** out) HN_NOEXCEPT;

/** Starts the next epoch (a new order when shuffling; a rollover's samples first). An epoch
 *  left unfinished is dropped. */
HN_API int hn_data_loader_reset(hn_data_loader* loader) HN_NOEXCEPT;

/** Stores the epoch's next batch in batch[0..*out_num_fields) (one new tensor per array,
 *  batch_size rows or fewer for a kept last batch), or sets *out_num_fields to 0 at the epoch's
 *  end. Starts an epoch first when none was. max_fields below the number of arrays:
 *  HN_ERR_INVALID_ARGUMENT. Ownership: each batch[i] is new (hn_tensor_free). */
HN_API int hn_data_loader_next(hn_data_loader* loader, size_t max_fields, hn_tensor** batch,
                               size_t* out_num_fields) HN_NOEXCEPT;

/** The number of batches an epoch started now yields (MXNet's len(loader)). */
HN_API int hn_data_loader_num_batches(const hn_data_loader* loader,
                                      int64_t* out_num_batches) HN_NOEXCEPT;

/** Releases a loader (the arrays it shared stay valid). Accepts NULL. */
HN_API void hn_data_loader_free(hn_data_loader* loader) HN_NOEXCEPT;

/* ============================================================================================
 * Images: decoding for datasets, as MXNet's mx.image.imdecode.
 * ========================================================================================== */

/** Decodes the JPEG image in data[0..size) into a new (height, width, channels) uint8 tensor:
 *  3 channels in RGB order for flag 1, 1 channel (gray) for flag 0, as MXNet's imdecode.
 *  Errors: bytes that are not a JPEG image or are corrupt (HN_ERR_FORMAT, with libjpeg's
 *  message), an empty buffer or another flag (HN_ERR_INVALID_ARGUMENT), a build without
 *  libjpeg-turbo (HN_ERR_UNSUPPORTED). Ownership: *out is new (hn_tensor_free). */
HN_API int hn_image_decode(const void* data, size_t size, int flag, hn_tensor** out) HN_NOEXCEPT;

/* ============================================================================================
 * The profiler: MXNet 1.9.1's mx.profiler (hybridnet/profiler.h says what it records).
 *
 *   const char* keys[] = {"profile_all", "aggregate_stats", "filename"};
 *   const char* values[] = {"True", "True", "trace.json"};
 *   hn_profiler_set_config(keys, values, 3);
 *   hn_profiler_set_state("run");
 *   ... forwards ...
 *   hn_profiler_set_state("stop");
 *   hn_profiler_dump(1);                                  (writes trace.json)
 *   hn_profiler_dumps(0, "table", "total", 0, &table);    (hn_string_free(table))
 *
 * The profiler is one per process; every function may be called from any thread. Scopes are
 * per thread.
 * ========================================================================================== */

/** Sets options by MXNet's set_config keywords, keys[i] = values[i] as strings: profile_all,
 *  profile_symbolic, profile_imperative, profile_memory, profile_api, aggregate_stats,
 *  continuous_dump ("True"/"False"/"1"/"0"), filename, dump_period, profile_process
 *  ("worker"). An unknown key or a bad value: HN_ERR_INVALID_ARGUMENT naming it, nothing
 *  changed. `keys`/`values` may be NULL when num_options is 0. */
HN_API int hn_profiler_set_config(const char* const* keys, const char* const* values,
                                  size_t num_options) HN_NOEXCEPT;

/** "run" starts recording, "stop" stops it; another string is HN_ERR_INVALID_ARGUMENT. */
HN_API int hn_profiler_set_state(const char* state) HN_NOEXCEPT;

/** The state, "run" or "stop" (a static string). */
HN_API int hn_profiler_state(const char** out_state) HN_NOEXCEPT;

/** Stops recording until hn_profiler_resume, the state staying "run" (MXNet's pause()). */
HN_API int hn_profiler_pause(void) HN_NOEXCEPT;

/** Records again after hn_profiler_pause (MXNet's resume()). */
HN_API int hn_profiler_resume(void) HN_NOEXCEPT;

/** Appends the events recorded since the last dump to the trace file (Chrome trace-event JSON);
 *  `finished` non-zero completes and closes it. A file that cannot be written: HN_ERR_IO naming
 *  it. */
HN_API int hn_profiler_dump(int finished) HN_NOEXCEPT;

/** The aggregate statistics (per category, one row per op type: count, total, min, max and
 *  average ms) in MXNet's layout: `format` "table" or "json" (NULL: "table"), sorted by
 *  `sort_by` "total", "avg", "min", "max" or "count" (NULL: "total"), descending unless
 *  `ascending`; `reset` non-zero clears them afterwards. Ownership: *out is new
 *  (hn_string_free). */
HN_API int hn_profiler_dumps(int reset, const char* format, const char* sort_by, int ascending,
                             char** out) HN_NOEXCEPT;

/** Prefixes the op names recorded on the calling thread with `name` (':' appended when
 *  missing) until the matching hn_profiler_scope_pop; scopes nest (MXNet 2's profiler.scope). */
HN_API int hn_profiler_scope_push(const char* name) HN_NOEXCEPT;

/** Ends the calling thread's innermost scope; none open: HN_ERR_INVALID_ARGUMENT. */
HN_API int hn_profiler_scope_pop(void) HN_NOEXCEPT;

/** The profiler's clock (steady, nanoseconds), the start of a duration. */
HN_API int hn_profiler_clock(int64_t* out_ns) HN_NOEXCEPT;

/** Records the duration `name` of `kind` ("task", "frame" or "event") in `domain` that started
 *  at `start_ns` (hn_profiler_clock) and ends now, on the calling thread, when the profiler
 *  runs (MXNet's Task/Frame/Event stop()). */
HN_API int hn_profiler_record_duration(const char* kind, const char* domain, const char* name,
                                       int64_t start_ns) HN_NOEXCEPT;

/** Records counter `name` of `domain` taking `value` (MXNet's Counter.set_value). */
HN_API int hn_profiler_set_counter(const char* domain, const char* name,
                                   int64_t value) HN_NOEXCEPT;

/** Records an instant marker `name` in `domain`; `scope` "global", "process", "thread", "task"
 *  or "marker" (NULL: "process"; MXNet's Marker.mark). */
HN_API int hn_profiler_mark(const char* domain, const char* name, const char* scope) HN_NOEXCEPT;

/* ============================================================================================
 * Quantization: an fp32 export to int8, as MXNet 1.9.1's contrib.quantization.quantize_net.
 * ========================================================================================== */

/** Quantizes the export PREFIX-symbol.json + PREFIX-EEEE.params to int8 and writes
 *  OUT_PREFIX-symbol.json + OUT_PREFIX-EEEE.params (the same epoch), in the form MXNet 1.9.1's
 *  quantize_net writes and MXNet loads (fused _sg_mkldnn_conv / _sg_mkldnn_fully_connected,
 *  _contrib_quantize_v2, _contrib_quantized_pooling/flatten/act, _contrib_dequantize).
 *  The ranges are calibrated by running the fp32 graph on `calib_data` (float32, batch first,
 *  fed to the input "data_name") in batches. Options keys[i] = values[i] (both may be NULL
 *  when num_options is 0), quantize_net's arguments: "calib_mode" naive (default) | entropy,
 *  "quantized_dtype" auto (default) | int8 | uint8, "quantize_mode" full (default) | smart,
 *  "quantize_granularity" tensor-wise, "exclude_layers", "exclude_layers_match",
 *  "exclude_operators" (comma-separated node names, name parts, op names),
 *  "num_calib_examples" (default all), "batch_size" (default 32), "data_name" (default "data"),
 *  and hybridnet's "int8_weights" true | false (default): every quantized convolution reads its
 *  weights stored int8 (BatchNorm folded in, with their scales; the same outputs bit for bit,
 *  params about 4x smaller), which MXNet does not load (the graph attribute
 *  "hybridnet_int8_weights" says so).
 *  Errors: unknown options or values, exclusions naming nothing in the graph, calibration data
 *  that is not float32 (HN_ERR_INVALID_ARGUMENT); data that does not fit the input
 *  (HN_ERR_SHAPE); unreadable or unwritable files (HN_ERR_IO, HN_ERR_FORMAT).
 *  *out_report (NULL: not wanted) is new JSON text (hn_string_free):
 *  {"quantized_nodes": [fp32 node names], "calib_table": {"OUTPUT_NAME": [min, max], ...},
 *  "int8_weights": whether convolutions read int8 weights}.
 *  Thread-safe. */
HN_API int hn_quantize_model(const char* prefix, int epoch, const hn_tensor* calib_data,
                             const char* const* keys, const char* const* values, size_t num_options,
                             const char* out_prefix, char** out_report) HN_NOEXCEPT;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HYBRIDNET_C_API_H_ */
