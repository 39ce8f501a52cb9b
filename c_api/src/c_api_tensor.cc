// C API: tensors (hn_tensor_*) and tensor lists (hn_tensor_list_*).
#include <cmath>
#include <cstring>

#include "c_api_common.h"
#include "hybridnet/io/params.h"
#include "hybridnet/npy.h"

using namespace hn_capi;  // NOLINT
namespace hn = ::hybridnet;

namespace {

const hn::NDArray& Concrete(const hn_tensor* t) {
  HN_CHECK(!t->array.is_symbolic(), kUntraceable)
      << "the tensor is symbolic (a traced value inside a hybridized lambda block) and has no "
         "data; use ops on it instead of reading it";
  return t->array;
}

std::string Describe(const hn::NDArray& a) {
  std::ostringstream os;
  os << a.shape() << " " << hn::DTypeName(a.dtype());
  return os.str();
}

// A new tensor from `draw(shape, dtype)` after the checks every random tensor needs. The draws
// are float32 (as the initializers draw), converted to the float dtype asked for.
template <typename Draw>
hn_tensor* RandomTensor(int dtype, const int64_t* shape, int ndim, Draw draw) {
  hn::DType type = ToDType(dtype);
  HN_CHECK(
      type == hn::DType::kFloat32 || type == hn::DType::kFloat64 || type == hn::DType::kFloat16,
      kTypeError)
      << "random tensors are float32, float64 or float16, not " << hn::DTypeName(type);
  hn::Shape s = ToShape(shape, ndim);
  ByteSize(s, type);  // size limits before drawing
  return new hn_tensor{draw(s, type)};
}

// Calls the caller's deleter only once the tensor exists: if creating it fails, the memory
// stays the caller's (as documented) even though the shared_ptr runs its deleter on failure.
struct WrapGuard {
  hn_deleter deleter;
  void* arg;
  bool armed = false;
};

}  // namespace

extern "C" {

int hn_tensor_create(int dtype, const int64_t* shape, int ndim, const void* data, size_t data_bytes,
                     hn_tensor** out) noexcept {
  HN_API_BEGIN();
  CheckOut(out, "out");
  hn::DType type = ToDType(dtype);
  hn::Shape s = ToShape(shape, ndim);
  size_t nbytes = ByteSize(s, type);
  if (data == nullptr) {
    HN_CHECK(data_bytes == 0, kInvalidArgument)
        << "data is NULL but data_bytes is " << data_bytes << " (pass 0 for a zero tensor)";
    *out = new hn_tensor{hn::NDArray::Zeros(s, type)};
  } else {
    HN_CHECK(data_bytes == nbytes, kInvalidArgument)
        << "a " << s << " " << hn::DTypeName(type) << " tensor needs " << nbytes
        << " bytes of data, got data_bytes " << data_bytes;
    *out = new hn_tensor{hn::NDArray::FromBuffer(s, type, data)};
  }
  HN_API_END();
}

int hn_tensor_wrap(int dtype, const int64_t* shape, int ndim, void* data, size_t data_bytes,
                   hn_deleter deleter, void* deleter_arg, hn_tensor** out) noexcept {
  HN_API_BEGIN();
  CheckOut(out, "out");
  hn::DType type = ToDType(dtype);
  hn::Shape s = ToShape(shape, ndim);
  size_t nbytes = ByteSize(s, type);
  HN_CHECK(data != nullptr, kInvalidArgument) << "argument 'data' is NULL";
  HN_CHECK(data_bytes == nbytes, kInvalidArgument)
      << "a " << s << " " << hn::DTypeName(type) << " tensor needs " << nbytes
      << " bytes, but data_bytes is " << data_bytes;
  HN_CHECK(reinterpret_cast<uintptr_t>(data) % hn::DTypeSize(type) == 0, kInvalidArgument)
      << "data is not aligned to " << hn::DTypeSize(type) << " bytes (the size of "
      << hn::DTypeName(type) << ")";
  auto guard = std::make_shared<WrapGuard>(WrapGuard{deleter, deleter_arg});
  auto handle = std::make_unique<hn_tensor>();
  handle->array = hn::NDArray::Wrap(s, type, data, [guard](void* p) {
    if (guard->armed && guard->deleter != nullptr) guard->deleter(p, guard->arg);
  });
  guard->armed = true;
  *out = handle.release();
  HN_API_END();
}

void hn_tensor_free(hn_tensor* tensor) noexcept { delete tensor; }

int hn_tensor_dtype(const hn_tensor* tensor, int* out_dtype) noexcept {
  HN_API_BEGIN();
  CheckHandle(tensor, "tensor");
  CheckOut(out_dtype, "out_dtype");
  *out_dtype = static_cast<int>(tensor->array.dtype());
  HN_API_END();
}

int hn_tensor_ndim(const hn_tensor* tensor, int* out_ndim) noexcept {
  HN_API_BEGIN();
  CheckHandle(tensor, "tensor");
  CheckOut(out_ndim, "out_ndim");
  *out_ndim = static_cast<int>(tensor->array.shape().ndim());
  HN_API_END();
}

int hn_tensor_dim(const hn_tensor* tensor, int axis, int64_t* out_dim) noexcept {
  HN_API_BEGIN();
  CheckHandle(tensor, "tensor");
  CheckOut(out_dim, "out_dim");
  const hn::Shape& s = tensor->array.shape();
  HN_CHECK(axis >= 0 && static_cast<size_t>(axis) < s.ndim(), kInvalidArgument)
      << "axis " << axis << " is out of range for shape " << s << " (ndim " << s.ndim() << ")";
  *out_dim = s[static_cast<size_t>(axis)];
  HN_API_END();
}

int hn_tensor_shape(const hn_tensor* tensor, const int64_t** out_dims, int* out_ndim) noexcept {
  HN_API_BEGIN();
  CheckHandle(tensor, "tensor");
  CheckOut(out_dims, "out_dims");
  CheckOut(out_ndim, "out_ndim");
  *out_dims = tensor->array.shape().begin();
  *out_ndim = static_cast<int>(tensor->array.shape().ndim());
  HN_API_END();
}

int hn_tensor_size(const hn_tensor* tensor, int64_t* out_size) noexcept {
  HN_API_BEGIN();
  CheckHandle(tensor, "tensor");
  CheckOut(out_size, "out_size");
  *out_size = tensor->array.size();
  HN_API_END();
}

int hn_tensor_nbytes(const hn_tensor* tensor, size_t* out_bytes) noexcept {
  HN_API_BEGIN();
  CheckHandle(tensor, "tensor");
  CheckOut(out_bytes, "out_bytes");
  *out_bytes = ByteSize(tensor->array.shape(), tensor->array.dtype());
  HN_API_END();
}

int hn_tensor_data(hn_tensor* tensor, void** out_data) noexcept {
  HN_API_BEGIN();
  CheckHandle(tensor, "tensor");
  CheckOut(out_data, "out_data");
  Concrete(tensor);
  *out_data = tensor->array.untracked_data();  // foreign code may write it at any time
  HN_API_END();
}

int hn_tensor_copy_to(const hn_tensor* tensor, void* buffer, size_t buffer_bytes) noexcept {
  HN_API_BEGIN();
  CheckHandle(tensor, "tensor");
  HN_CHECK(buffer != nullptr, kInvalidArgument) << "argument 'buffer' is NULL";
  const hn::NDArray& a = Concrete(tensor);
  size_t nbytes = a.nbytes();
  HN_CHECK(buffer_bytes >= nbytes, kInvalidArgument)
      << "buffer too small: the " << Describe(a) << " tensor has " << nbytes
      << " bytes, the buffer " << buffer_bytes;
  if (nbytes > 0) std::memcpy(buffer, a.raw_data(), nbytes);
  HN_API_END();
}

int hn_tensor_copy_from(hn_tensor* tensor, const void* data, size_t data_bytes) noexcept {
  HN_API_BEGIN();
  CheckHandle(tensor, "tensor");
  HN_CHECK(data != nullptr, kInvalidArgument) << "argument 'data' is NULL";
  hn::NDArray& a = tensor->array;
  Concrete(tensor);
  size_t nbytes = a.nbytes();
  HN_CHECK(data_bytes == nbytes, kInvalidArgument)
      << "the " << Describe(a) << " tensor has " << nbytes << " bytes, data_bytes is "
      << data_bytes;
  if (nbytes > 0) std::memcpy(a.raw_data(), data, nbytes);
  HN_API_END();
}

int hn_tensor_reshape(const hn_tensor* tensor, const int64_t* shape, int ndim,
                      hn_tensor** out) noexcept {
  HN_API_BEGIN();
  CheckHandle(tensor, "tensor");
  CheckOut(out, "out");
  hn::Shape s = ToShape(shape, ndim);
  const hn::NDArray& a = Concrete(tensor);
  HN_CHECK(s.Size() == a.size(), kShapeError)
      << "cannot reshape " << a.shape() << " (" << a.size() << " elements) to " << s << " ("
      << s.Size() << " elements)";
  *out = new hn_tensor{a.Reshape(s)};
  HN_API_END();
}

int hn_tensor_load_npy(const char* path, hn_tensor** out) noexcept {
  HN_API_BEGIN();
  std::string p = CheckString(path, "path");
  CheckOut(out, "out");
  auto handle = std::make_unique<hn_tensor>(hn_tensor{hn::LoadNpy(p)});
  *out = handle.release();
  HN_API_END();
}

int hn_tensor_save_npy(const hn_tensor* tensor, const char* path) noexcept {
  HN_API_BEGIN();
  CheckHandle(tensor, "tensor");
  std::string p = CheckString(path, "path");
  hn::SaveNpy(p, Concrete(tensor));
  HN_API_END();
}

int hn_tensor_to_string(const hn_tensor* tensor, char** out) noexcept {
  HN_API_BEGIN();
  CheckHandle(tensor, "tensor");
  CheckOut(out, "out");
  *out = NewCString(tensor->array.ToString());
  HN_API_END();
}

int hn_tensor_share(const hn_tensor* tensor, hn_tensor** out) noexcept {
  HN_API_BEGIN();
  CheckHandle(tensor, "tensor");
  CheckOut(out, "out");
  *out = new hn_tensor{tensor->array};
  HN_API_END();
}

int hn_tensor_is_symbolic(const hn_tensor* tensor, int* out_symbolic) noexcept {
  HN_API_BEGIN();
  CheckHandle(tensor, "tensor");
  CheckOut(out_symbolic, "out_symbolic");
  *out_symbolic = tensor->array.is_symbolic() ? 1 : 0;
  HN_API_END();
}

int hn_tensor_random_normal(int dtype, const int64_t* shape, int ndim, double mean, double stddev,
                            hn_tensor** out) noexcept {
  HN_API_BEGIN();
  CheckOut(out, "out");
  HN_CHECK(std::isfinite(mean) && std::isfinite(stddev) && stddev >= 0, kInvalidArgument)
      << "a normal distribution needs a finite mean and a finite stddev >= 0, got mean " << mean
      << " and stddev " << stddev;
  *out = RandomTensor(dtype, shape, ndim, [&](const hn::Shape& s, hn::DType type) {
    return hn::NDArray::RandomNormal(s, static_cast<float>(mean), static_cast<float>(stddev), type);
  });
  HN_API_END();
}

int hn_tensor_random_uniform(int dtype, const int64_t* shape, int ndim, double low, double high,
                             hn_tensor** out) noexcept {
  HN_API_BEGIN();
  CheckOut(out, "out");
  HN_CHECK(std::isfinite(low) && std::isfinite(high) && low <= high && std::isfinite(high - low),
           kInvalidArgument)
      << "a uniform distribution needs finite bounds low <= high, got [" << low << ", " << high
      << ")";
  *out = RandomTensor(dtype, shape, ndim, [&](const hn::Shape& s, hn::DType type) {
    return hn::NDArray::RandomUniform(s, static_cast<float>(low), static_cast<float>(high), type);
  });
  HN_API_END();
}

// ---------------------------------------------------------------------------------------------
// Tensor lists

int hn_tensor_list_create(hn_tensor_list** out) noexcept {
  HN_API_BEGIN();
  CheckOut(out, "out");
  *out = new hn_tensor_list();
  HN_API_END();
}

}  // extern "C"

namespace {

hn_tensor_list* NewList(hn::NDArrayList list) {
  auto handle = std::make_unique<hn_tensor_list>();
  handle->named = !list.names.empty();
  handle->arrays = std::move(list.arrays);
  if (handle->named) {
    handle->names.assign(list.names.begin(), list.names.end());
  } else {
    handle->names.assign(handle->arrays.size(), std::string());
  }
  handle->record_versions = std::move(list.record_versions);
  handle->record_versions.resize(handle->arrays.size(), 2);
  return handle.release();
}

void CheckIndex(const hn_tensor_list* list, size_t index) {
  HN_CHECK(index < list->arrays.size(), kInvalidArgument)
      << "index " << index << " is out of range: the list has " << list->arrays.size()
      << " entries";
}

}  // namespace

extern "C" {

int hn_tensor_list_load(const char* path, hn_tensor_list** out) noexcept {
  HN_API_BEGIN();
  std::string p = CheckString(path, "path");
  CheckOut(out, "out");
  *out = NewList(hn::LoadNDArrayList(p));
  HN_API_END();
}

int hn_tensor_list_load_from_memory(const void* bytes, size_t num_bytes,
                                    hn_tensor_list** out) noexcept {
  HN_API_BEGIN();
  HN_CHECK(bytes != nullptr || num_bytes == 0, kInvalidArgument) << "argument 'bytes' is NULL";
  CheckOut(out, "out");
  std::string data(static_cast<const char*>(bytes), num_bytes);
  *out = NewList(hn::ParseNDArrayList(data, "<memory>"));
  HN_API_END();
}

void hn_tensor_list_free(hn_tensor_list* list) noexcept { delete list; }

int hn_tensor_list_size(const hn_tensor_list* list, size_t* out_size) noexcept {
  HN_API_BEGIN();
  CheckHandle(list, "list");
  CheckOut(out_size, "out_size");
  *out_size = list->arrays.size();
  HN_API_END();
}

int hn_tensor_list_name(const hn_tensor_list* list, size_t index, const char** out_name) noexcept {
  HN_API_BEGIN();
  CheckHandle(list, "list");
  CheckOut(out_name, "out_name");
  CheckIndex(list, index);
  *out_name = list->names[index].c_str();
  HN_API_END();
}

int hn_tensor_list_get(const hn_tensor_list* list, size_t index, hn_tensor** out) noexcept {
  HN_API_BEGIN();
  CheckHandle(list, "list");
  CheckOut(out, "out");
  CheckIndex(list, index);
  const hn::NDArray& a = list->arrays[index];
  *out = a.is_none() ? nullptr : new hn_tensor{a};
  HN_API_END();
}

int hn_tensor_list_record_version(const hn_tensor_list* list, size_t index,
                                  int* out_version) noexcept {
  HN_API_BEGIN();
  CheckHandle(list, "list");
  CheckOut(out_version, "out_version");
  CheckIndex(list, index);
  *out_version = list->record_versions[index];
  HN_API_END();
}

int hn_tensor_list_append(hn_tensor_list* list, const char* name,
                          const hn_tensor* tensor) noexcept {
  HN_API_BEGIN();
  CheckHandle(list, "list");
  CheckHandle(tensor, "tensor");
  Concrete(tensor);
  bool named = name != nullptr && name[0] != '\0';
  if (!list->arrays.empty()) {
    HN_CHECK(named == list->named, kInvalidArgument)
        << "the list holds " << (list->named ? "named" : "unnamed") << " entries; append "
        << (list->named ? "with a name" : "without a name") << " (a .params file is either)";
  }
  std::string key = named ? std::string(name) : std::string();
  list->names.push_back(key);
  try {
    list->arrays.push_back(tensor->array);
    list->record_versions.push_back(2);
  } catch (...) {
    list->names.pop_back();
    if (list->arrays.size() > list->record_versions.size()) list->arrays.pop_back();
    throw;
  }
  list->named = named;
  HN_API_END();
}

int hn_tensor_list_save(const hn_tensor_list* list, const char* path) noexcept {
  HN_API_BEGIN();
  CheckHandle(list, "list");
  std::string p = CheckString(path, "path");
  hn::NDArrayList l;
  l.arrays = list->arrays;
  if (list->named) l.names.assign(list->names.begin(), list->names.end());
  hn::SaveNDArrayList(p, l);
  HN_API_END();
}

}  // extern "C"
