// Library-wide C API: version, thread-local errors, the exception boundary, logging, threads,
// strings, dtypes, and the argument helpers of c_api_common.h.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <set>
#include <sstream>

#include "c_api_common.h"
#include "hybridnet/imperative.h"
#include "hybridnet/limits.h"

namespace {

constexpr bool StrEqual(const char* a, const char* b) {
  return *a == *b && (*a == '\0' || StrEqual(a + 1, b + 1));
}

#define HN_STRINGIFY2(x) #x
#define HN_STRINGIFY(x) HN_STRINGIFY2(x)
static_assert(StrEqual(HN_VERSION_STRING, HN_STRINGIFY(HN_VERSION_MAJOR) "." HN_STRINGIFY(
                                              HN_VERSION_MINOR) "." HN_STRINGIFY(HN_VERSION_PATCH)),
              "c_api.h: HN_VERSION_STRING must be MAJOR.MINOR.PATCH");
#ifdef HN_PROJECT_VERSION
static_assert(StrEqual(HN_VERSION_STRING, HN_PROJECT_VERSION),
              "c_api.h: HN_VERSION_* must match project(VERSION) in CMakeLists.txt");
#endif

struct LastError {
  std::string message;
  int code = HN_OK;
  bool lost = false;  // recording the message itself ran out of memory
};

LastError& ThreadError() {
  thread_local LastError error;
  return error;
}

struct LogState {
  std::mutex mutex;
  hn_log_callback callback = nullptr;
  void* user_data = nullptr;
  std::atomic<int> min_level{HN_LOG_ERROR + 1};  // > every level: nothing enabled
};

LogState& Logging() {
  static LogState* state = new LogState();  // never destroyed: usable during static teardown
  return *state;
}

}  // namespace

namespace hn_capi {

int SetLastError(const char* function, int code, const char* message) noexcept {
  if (code >= 0 || code < HN_ERR_INTERNAL) code = HN_ERR_INTERNAL;
  LastError& e = ThreadError();
  e.code = code;
  try {
    e.message.assign(function);
    e.message.append(": ");
    e.message.append(message);
    e.lost = false;
  } catch (...) {
    e.message.clear();
    e.lost = true;
  }
  if (LogEnabled(HN_LOG_DEBUG)) {
    try {
      Log(HN_LOG_DEBUG, std::string(hn_status_name(code)) + " " + e.message);
    } catch (...) {
    }
  }
  return code;
}

int HandleException(const char* function) noexcept {
  try {
    throw;
  } catch (const hn::Error& e) {
    return SetLastError(function, static_cast<int>(e.code()), e.what());
  } catch (const std::bad_alloc&) {
    return SetLastError(function, HN_ERR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    try {
      std::string text = std::string("internal error (please report): ") + e.what();
      return SetLastError(function, HN_ERR_INTERNAL, text.c_str());
    } catch (...) {
      return SetLastError(function, HN_ERR_INTERNAL, "internal error");
    }
  } catch (...) {
    return SetLastError(function, HN_ERR_INTERNAL, "internal error: unknown exception");
  }
}

bool LogEnabled(int level) noexcept {
  return level >= Logging().min_level.load(std::memory_order_relaxed);
}

void Log(int level, const std::string& message) noexcept {
  if (!LogEnabled(level)) return;
  LogState& s = Logging();
  hn_log_callback callback;
  void* user_data;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    callback = s.callback;
    user_data = s.user_data;
  }
  if (callback == nullptr) return;
  try {
    callback(level, message.c_str(), user_data);
  } catch (...) {  // a C++ callback must not unwind through us
  }
}

char* NewCString(const std::string& text) {
  char* s = static_cast<char*>(std::malloc(text.size() + 1));
  if (s == nullptr) throw std::bad_alloc();
  std::memcpy(s, text.c_str(), text.size() + 1);
  return s;
}

std::string CheckString(const char* s, const char* what) {
  HN_CHECK(s != nullptr, kInvalidArgument) << "argument '" << what << "' is NULL";
  return std::string(s);
}

bool ToFlag(int value, const char* what) {
  HN_CHECK(value == 0 || value == 1, kInvalidArgument)
      << "argument '" << what << "' is " << value << "; expected 0 or 1";
  return value == 1;
}

hn::DType ToDType(int dtype) {
  HN_CHECK(hn::IsKnownDType(dtype), kTypeError)
      << "unknown dtype " << dtype << " (expected an hn_dtype value from 0 to 12)";
  return static_cast<hn::DType>(dtype);
}

hn::Shape ToShape(const int64_t* dims, int ndim, const char* what) {
  HN_CHECK(ndim >= 0 && ndim <= 32, kShapeError)
      << what << ": ndim must be in [0, 32], got " << ndim;
  HN_CHECK(dims != nullptr || ndim == 0, kInvalidArgument)
      << what << ": the dimensions are NULL but ndim is " << ndim;
  hn::Shape shape(std::vector<int64_t>(dims, dims + ndim));
  int64_t total = 1;
  for (int i = 0; i < ndim; ++i) {
    HN_CHECK(dims[i] >= 0, kShapeError) << what << ": dimension " << i << " is " << dims[i]
                                        << " in " << shape << "; dimensions must be >= 0";
    if (dims[i] != 0 && total > std::numeric_limits<int64_t>::max() / dims[i]) {
      HN_THROW(kShapeError) << what << ": " << shape << " has too many elements";
    }
    total *= dims[i];
  }
  return shape;
}

std::map<std::string, hn::Shape> ToShapes(size_t count, const char* const* names, const int* ndims,
                                          const int64_t* dims) {
  HN_CHECK(count == 0 || (names != nullptr && ndims != nullptr), kInvalidArgument)
      << "names/ndims are NULL but num_known is " << count;
  std::map<std::string, hn::Shape> shapes;
  size_t offset = 0;
  for (size_t i = 0; i < count; ++i) {
    HN_CHECK(names[i] != nullptr, kInvalidArgument) << "names[" << i << "] is NULL";
    HN_CHECK(dims != nullptr || ndims[i] == 0, kInvalidArgument)
        << "dims is NULL but ndims[" << i << "] is " << ndims[i];
    std::string what = std::string("shape of '") + names[i] + "'";
    hn::Shape s = ToShape(dims == nullptr ? nullptr : dims + offset, ndims[i], what.c_str());
    offset += static_cast<size_t>(ndims[i]);
    shapes[names[i]] = s;  // a name given twice: the last shape counts
  }
  return shapes;
}

size_t ByteSize(const hn::Shape& shape, hn::DType dtype) {
  size_t elements = static_cast<size_t>(shape.Size());
  size_t size = hn::DTypeSize(dtype);
  HN_CHECK(elements == 0 || size <= std::numeric_limits<size_t>::max() / elements, kShapeError)
      << "shape " << shape << " of " << hn::DTypeName(dtype) << " is too large";
  return elements * size;
}

hn::AttrDict ToAttrs(const char* const* keys, const char* const* values, size_t num_attrs) {
  hn::AttrDict attrs;
  if (num_attrs == 0) return attrs;
  HN_CHECK(keys != nullptr && values != nullptr, kInvalidArgument)
      << "attr_keys/attr_values are NULL but num_attrs is " << num_attrs;
  for (size_t i = 0; i < num_attrs; ++i) {
    HN_CHECK(keys[i] != nullptr, kInvalidArgument) << "attr_keys[" << i << "] is NULL";
    HN_CHECK(values[i] != nullptr, kInvalidArgument)
        << "attr_values[" << i << "] (for '" << keys[i] << "') is NULL";
    HN_CHECK(attrs.emplace(keys[i], values[i]).second, kInvalidArgument)
        << "attribute '" << keys[i] << "' is given twice";
  }
  return attrs;
}

void NameArray::Assign(const std::vector<std::string>& values) {
  names.assign(values.begin(), values.end());
  ptrs.clear();
  for (const auto& n : names) ptrs.push_back(n.c_str());
}

void NameArray::Add(const std::string& value) {
  names.push_back(value);
  ptrs.push_back(names.back().c_str());
}

void StoreTensors(const char* what, std::vector<hn::NDArray> arrays, size_t max_outputs,
                  hn_tensor** outputs, size_t* out_num_outputs) {
  CheckOut(out_num_outputs, "out_num_outputs");
  HN_CHECK(arrays.size() <= max_outputs, kInvalidArgument)
      << what << " produced " << arrays.size() << " outputs but max_outputs is " << max_outputs;
  HN_CHECK(outputs != nullptr || arrays.empty(), kInvalidArgument)
      << "out-pointer 'outputs' is NULL";
  std::vector<std::unique_ptr<hn_tensor>> handles;
  handles.reserve(arrays.size());
  for (auto& a : arrays) handles.push_back(std::make_unique<hn_tensor>(hn_tensor{std::move(a)}));
  for (size_t i = 0; i < handles.size(); ++i) outputs[i] = handles[i].release();
  *out_num_outputs = handles.size();
}

std::vector<hn::NDArray> ToArrays(hn_tensor* const* inputs, size_t num, const char* what) {
  HN_CHECK(inputs != nullptr || num == 0, kInvalidArgument)
      << "argument '" << what << "' is NULL but its count is " << num;
  std::vector<hn::NDArray> arrays;
  arrays.reserve(num);
  for (size_t i = 0; i < num; ++i) {
    HN_CHECK(inputs[i] != nullptr, kInvalidArgument) << what << "[" << i << "] is NULL";
    arrays.push_back(inputs[i]->array);
  }
  return arrays;
}

}  // namespace hn_capi

using namespace hn_capi;  // NOLINT: the C entry points below

extern "C" {

const char* hn_version(void) noexcept { return HN_VERSION_STRING; }

int hn_abi_version(void) noexcept { return HN_ABI_VERSION; }

const char* hn_last_error(void) noexcept {
  const LastError& e = ThreadError();
  return e.lost ? "out of memory while recording the error message" : e.message.c_str();
}

int hn_last_error_code(void) noexcept { return ThreadError().code; }

const char* hn_status_name(int status) noexcept {
  if (status > 0 || status < HN_ERR_INTERNAL) return "HN_ERR_UNKNOWN";
  return hybridnet::StatusCodeName(static_cast<hybridnet::StatusCode>(status));
}

void hn_string_free(char* str) noexcept { std::free(str); }

int hn_set_log_callback(hn_log_callback callback, void* user_data, int min_level) noexcept {
  HN_API_BEGIN();
  HN_CHECK(callback == nullptr || (min_level >= HN_LOG_DEBUG && min_level <= HN_LOG_ERROR),
           kInvalidArgument)
      << "min_level must be an hn_log_level (0 to 3), got " << min_level;
  LogState& s = Logging();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.callback = callback;
  s.user_data = user_data;
  s.min_level.store(callback != nullptr ? min_level : HN_LOG_ERROR + 1);
  HN_API_END();
}

int hn_set_num_threads(int num_threads) noexcept {
  HN_API_BEGIN();
  hybridnet::SetNumThreads(num_threads);
  HN_API_END();
}

int hn_get_num_threads(int* out_num_threads) noexcept {
  HN_API_BEGIN();
  CheckOut(out_num_threads, "out_num_threads");
  *out_num_threads = hybridnet::GetNumThreads();
  HN_API_END();
}

int hn_runtime_feature_count(size_t* out_count) noexcept {
  HN_API_BEGIN();
  CheckOut(out_count, "out_count");
  *out_count = hybridnet::RuntimeFeatures().size();
  HN_API_END();
}

int hn_runtime_feature_get(size_t index, const char** out_name, int* out_enabled,
                           const char** out_description) noexcept {
  HN_API_BEGIN();
  const auto& features = hybridnet::RuntimeFeatures();
  HN_CHECK(index < features.size(), kInvalidArgument)
      << "index " << index << " is out of range: there are " << features.size()
      << " runtime features";
  const hybridnet::RuntimeFeature& f = features[index];
  if (out_name != nullptr) *out_name = f.name;
  if (out_enabled != nullptr) *out_enabled = f.enabled ? 1 : 0;
  if (out_description != nullptr) *out_description = f.description;
  HN_API_END();
}

int hn_seed(uint64_t seed) noexcept {
  HN_API_BEGIN();
  hybridnet::Seed(seed);
  HN_API_END();
}

int hn_debug_live_handles(int64_t* out_count) noexcept {
  HN_API_BEGIN();
  CheckOut(out_count, "out_count");
  *out_count = live_handle_count.load(std::memory_order_relaxed);
  HN_API_END();
}

static_assert(HN_LIMIT_MAX_NODES == static_cast<int>(hybridnet::Limit::kMaxNodes) &&
                  HN_LIMIT_MAX_RANK == static_cast<int>(hybridnet::Limit::kMaxRank) &&
                  HN_LIMIT_MAX_TENSOR_ELEMENTS ==
                      static_cast<int>(hybridnet::Limit::kMaxTensorElements) &&
                  HN_LIMIT_MAX_ALLOCATION_BYTES ==
                      static_cast<int>(hybridnet::Limit::kMaxAllocationBytes),
              "hn_limit mirrors hybridnet::Limit");

int hn_set_limit(int limit, int64_t value) noexcept {
  HN_API_BEGIN();
  hybridnet::SetLimit(static_cast<hybridnet::Limit>(limit), value);
  HN_API_END();
}

int hn_get_limit(int limit, int64_t* out_value) noexcept {
  HN_API_BEGIN();
  CheckOut(out_value, "out_value");
  *out_value = hybridnet::GetLimit(static_cast<hybridnet::Limit>(limit));
  HN_API_END();
}

const char* hn_dtype_name(int dtype) noexcept {
  if (!hybridnet::IsKnownDType(dtype)) return nullptr;
  return hybridnet::DTypeName(static_cast<hybridnet::DType>(dtype));
}

int hn_dtype_size(int dtype, size_t* out_bytes) noexcept {
  HN_API_BEGIN();
  CheckOut(out_bytes, "out_bytes");
  *out_bytes = hybridnet::DTypeSize(ToDType(dtype));
  HN_API_END();
}

}  // extern "C"
