// Internals shared by the C API sources: handle definitions, the exception boundary and
// argument helpers. Nothing here is exported; only the hn_* functions of c_api.h are.
//
// Every entry point is written as
//
//   int hn_thing_do(hn_thing* t, int* out) noexcept {
//     HN_API_BEGIN();
//     hn_capi::CheckHandle(t, "thing");
//     hn_capi::CheckOut(out, "out");
//     ...
//     HN_API_END();
//   }
//
// HN_API_END catches hybridnet::Error (its code), std::bad_alloc (HN_ERR_OUT_OF_MEMORY), any
// other std::exception or unknown exception (HN_ERR_INTERNAL), records the message prefixed with
// the function name in the thread-local last error and returns the code.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hybridnet/base.h"
#include "hybridnet/c_api.h"
#include "hybridnet/executor.h"
#include "hybridnet/gluon/block.h"
#include "hybridnet/gluon/data.h"
#include "hybridnet/gluon/parameter.h"
#include "hybridnet/gluon/trainer.h"
#include "hybridnet/metric.h"
#include "hybridnet/ndarray.h"
#include "hybridnet/optimizer.h"
#include "hybridnet/symbol.h"

namespace hn_capi {

namespace hn = ::hybridnet;

/// Records an error for the calling thread and returns its code. Never throws.
int SetLastError(const char* function, int code, const char* message) noexcept;
/// Converts the exception in flight into a code + last error. Call only inside a catch block.
int HandleException(const char* function) noexcept;

/// Sends a message to the log callback when one is installed and `level` is enabled.
bool LogEnabled(int level) noexcept;
void Log(int level, const std::string& message) noexcept;

/// Strings handed to C as char** (released with hn_string_free).
char* NewCString(const std::string& text);

/// Throws kInvalidArgument "argument 'what' is NULL" when p is null.
template <typename T>
inline void CheckHandle(const T* p, const char* what) {
  HN_CHECK(p != nullptr, kInvalidArgument) << "argument '" << what << "' is NULL";
}
template <typename T>
inline void CheckOut(const T* p, const char* what) {
  HN_CHECK(p != nullptr, kInvalidArgument) << "out-pointer '" << what << "' is NULL";
}
/// A non-null C string argument.
std::string CheckString(const char* s, const char* what);
/// A 0/1 flag argument as a bool; kInvalidArgument naming `what` for any other value.
bool ToFlag(int value, const char* what);

/// Validates dtype values from C.
hn::DType ToDType(int dtype);
/// Builds a shape from C (ndim in [0, 32], dims >= 0, element count fits in int64 and size_t).
hn::Shape ToShape(const int64_t* dims, int ndim, const char* what = "shape");
/// Named shapes from C: names[i] has ndims[i] dimensions, taken in order from `dims`
/// (hn_symbol_infer_shape, hn_model_export_onnx).
std::map<std::string, hn::Shape> ToShapes(size_t count, const char* const* names, const int* ndims,
                                          const int64_t* dims);
/// The arrays of a .params list by variable name ("arg:"/"aux:" prefixes dropped); errors name
/// `source` (unnamed lists, empty entries).
std::map<std::string, hn::NDArray> ParamsByName(const std::vector<hn::NDArray>& arrays,
                                                const std::vector<std::string>& names,
                                                const std::string& source);
/// Exports to ONNX (hn_model_export_onnx, hn_symbol_export_onnx).
void ExportOnnx(const hn::Symbol& symbol, const std::map<std::string, hn::NDArray>& params,
                const char* path, int opset, int flags, size_t num_known, const char* const* names,
                const int* ndims, const int64_t* dims, const int* dtypes);
/// Byte size of `shape` x `dtype` with overflow checks.
size_t ByteSize(const hn::Shape& shape, hn::DType dtype);
/// Builds an attribute dictionary from parallel key/value arrays.
hn::AttrDict ToAttrs(const char* const* keys, const char* const* values, size_t num_attrs);

/// A vector of strings plus the C view of them (stable while the owner lives).
struct NameArray {
  std::deque<std::string> names;
  std::vector<const char*> ptrs;
  void Assign(const std::vector<std::string>& values);
  void Add(const std::string& value);
};

/// Output arrays of C functions (outputs[0..n) with a capacity check before anything is handed
/// out, so on failure nothing leaks and the out-pointers stay untouched).
void StoreTensors(const char* what, std::vector<hn::NDArray> arrays, size_t max_outputs,
                  hn_tensor** outputs, size_t* out_num_outputs);
/// Collects C tensor handles into NDArrays (inputs may be NULL only when num is 0).
std::vector<hn::NDArray> ToArrays(hn_tensor* const* inputs, size_t num, const char* what);

/// Counts the C handles alive (hn_debug_live_handles). Every handle struct below holds one as its
/// last member, so each handle made or freed by any function moves the count, with no call site
/// to forget. Copies count as new handles.
inline std::atomic<int64_t> live_handle_count{0};
class LiveHandle {
 public:
  LiveHandle() noexcept { live_handle_count.fetch_add(1, std::memory_order_relaxed); }
  LiveHandle(const LiveHandle&) noexcept : LiveHandle() {}
  LiveHandle& operator=(const LiveHandle&) noexcept { return *this; }
  ~LiveHandle() { live_handle_count.fetch_sub(1, std::memory_order_relaxed); }
};

/// The immutable part of a model, shared by the model handle and its predictors.
struct ModelData {
  hn::Symbol symbol;
  std::map<std::string, hn::NDArray> params;
  std::vector<std::string> input_names;
  NameArray inputs, outputs;
};

}  // namespace hn_capi

struct hn_tensor {
  hybridnet::NDArray array;
  hn_capi::LiveHandle live{};
};

struct hn_tensor_list {
  std::vector<hybridnet::NDArray> arrays;
  std::deque<std::string> names;  // deque: c_str() pointers stay valid when appending
  std::vector<int> record_versions;
  bool named = false;
  hn_capi::LiveHandle live{};
};

struct hn_symbol {
  hybridnet::Symbol symbol;
  // Lists computed on first use (const functions may run concurrently).
  mutable std::once_flag lists_once, nodes_once;
  mutable hn_capi::NameArray arguments, auxiliary_states, outputs;
  mutable hn_capi::NameArray node_ops, node_names;
  hn_capi::LiveHandle live{};
};

struct hn_shape_info {
  hn_capi::NameArray names[3];
  std::vector<hybridnet::Shape> shapes[3];
  bool complete = false;
  hn_capi::LiveHandle live{};
};

struct hn_block {
  std::shared_ptr<hybridnet::gluon::Block> block;
  std::string kind;
  std::string name;    // filled by hn_block_name
  std::string prefix;  // filled by hn_block_prefix
  // The snapshot of hn_block_param_count that hn_block_param_info reads.
  std::vector<hybridnet::gluon::ParameterPtr> params;
  std::deque<std::string> param_names;
  hn_capi::LiveHandle live{};
};

// Shared: a trainer uses the optimizer it was given, and hn_trainer_optimizer hands it out.
struct hn_optimizer {
  std::shared_ptr<hybridnet::optimizer::Optimizer> optimizer;
  hn_capi::LiveHandle live{};
};

struct hn_lr_scheduler {
  std::shared_ptr<hybridnet::optimizer::LRScheduler> scheduler;
  hn_capi::LiveHandle live{};
};

struct hn_trainer {
  std::unique_ptr<hybridnet::gluon::Trainer> trainer;
  hn_capi::LiveHandle live{};
};

struct hn_model {
  std::shared_ptr<const hn_capi::ModelData> data;
  hn_capi::LiveHandle live{};
};

struct hn_predictor {
  std::shared_ptr<const hn_capi::ModelData> model;
  std::unique_ptr<hybridnet::GraphExecutor> executor;
  std::vector<hybridnet::NDArray> inputs;  // per model input; none = not set (zeros)
  std::vector<bool> input_owned;           // storage allocated here (reused by set_input)
  std::vector<hybridnet::NDArray> feed;    // inputs with zeros filled in, as passed to Forward
  std::vector<hybridnet::Shape> feed_key;  // the set-input shapes `feed`'s zeros were made for
  std::vector<hybridnet::NDArray> outputs;
  std::vector<bool> handed_out;  // output shared with a tensor handle: the next forward replaces it
  bool has_outputs = false;
  size_t plans_seen = 0;
  bool fast_math = false;  // hn_predictor_set_fast_math
  hybridnet::DType dtype = hybridnet::DType::kFloat32;  // hn_predictor_set_dtype
  hn_capi::LiveHandle live{};
};

struct hn_metric {
  std::unique_ptr<hybridnet::metric::EvalMetric> metric;
  hn_capi::NameArray names;  // the readings' names (fixed once the metric is made)
  hn_capi::LiveHandle live{};
};

struct hn_data_loader {
  std::unique_ptr<hybridnet::gluon::data::DataLoader> loader;
  hn_capi::LiveHandle live{};
};

#define HN_API_BEGIN() try {
#define HN_API_END()                             \
  }                                              \
  catch (...) {                                  \
    return ::hn_capi::HandleException(__func__); \
  }                                              \
  return HN_OK
