#include "hybridnet/ndarray.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <vector>

#include "hybridnet/autograd.h"
#include "hybridnet/limits.h"
#include "hybridnet/symbol.h"
#include "imperative/autograd_tape.h"
#include "ndarray/mxnet_random.h"
#include "ndarray/storage.h"

namespace hybridnet {

namespace {

constexpr size_t kAlignment = 64;

using internal::Storage;

// Freed blocks of at least kPooledBytes, kept for the next allocation of the same size, up to
// kPoolCapacity bytes in all. A training step allocates the same large arrays every step (an
// LSTM LM's 28 MB logits and their gradients); handed back to the C library, they went back to
// the system and every step faulted their pages in again (9% of the step). Address sanitizer
// builds keep none, so that it sees every use after free.
class LargeBlockPool {
 public:
  static constexpr size_t kPooledBytes = size_t{1} << 20;
  static constexpr size_t kPoolCapacity = size_t{256} << 20;

  // A pooled block of `bytes`, or null.
  void* Take(size_t bytes) {
    if (bytes < kPooledBytes) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(bytes);
    if (it == free_.end()) return nullptr;
    void* p = it->second;
    free_.erase(it);
    pooled_ -= bytes;
    return p;
  }
  // Keeps the block of `bytes` at p, or frees it.
  void Give(void* p, [[maybe_unused]] size_t bytes) {
#ifndef __SANITIZE_ADDRESS__
    if (bytes >= kPooledBytes) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (pooled_ + bytes <= kPoolCapacity) {
        free_.emplace(bytes, p);
        pooled_ += bytes;
        return;
      }
    }
#endif
    std::free(p);
  }

 private:
  std::mutex mutex_;
  std::multimap<size_t, void*> free_;  // guarded by mutex_
  size_t pooled_ = 0;                  // guarded by mutex_
};

// Never destroyed: storages released during static destruction still give their blocks back.
LargeBlockPool& Pool() {
  static LargeBlockPool* pool = new LargeBlockPool;
  return *pool;
}

std::shared_ptr<Storage> Allocate(size_t nbytes) {
  HN_CHECK(nbytes <= static_cast<size_t>(GetLimit(Limit::kMaxAllocationBytes)), kOutOfMemory)
      << "allocating " << nbytes << " bytes exceeds the allocation limit"
      << LimitNote(Limit::kMaxAllocationBytes);
  size_t rounded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded == 0) rounded = kAlignment;
  void* p = Pool().Take(rounded);
  if (p == nullptr) p = std::aligned_alloc(kAlignment, rounded);
  HN_CHECK(p != nullptr, kOutOfMemory) << "cannot allocate " << nbytes << " bytes";
  auto storage = std::make_shared<Storage>();
  storage->bytes = static_cast<uint8_t*>(p);
  storage->release = [rounded](uint8_t* q) { Pool().Give(q, rounded); };
  storage->stamp.store(internal::NextWriteStamp(), std::memory_order_relaxed);
  return storage;
}

// Derived data kept per storage: enough for a weight read by a few different kernels.
constexpr size_t kMaxDerivedPerStorage = 4;

// MXNet's CPU sampler constants (RandGenerator<cpu>): states, minimum draws per state, and the
// factor the resource manager multiplies the user's seed by.
constexpr uint32_t kMXNetRandomStates = 1024;
constexpr int64_t kMXNetMinDrawsPerState = 64;
constexpr uint32_t kMXNetSeedMagic = 127;

struct GlobalRandom {
  std::mutex mutex;
  std::mt19937 engine{0};
  uint32_t seed = 0;
  std::vector<std::mt19937> mxnet_states;  // made at the first MXNet-stream draw after Seed
};

GlobalRandom& Random() {
  static GlobalRandom random;
  return random;
}

template <typename Dist>
NDArray Sample(const Shape& shape, DType dtype, Dist dist) {
  NDArray f32(shape, DType::kFloat32);
  float* p = f32.data<float>();
  {
    auto& random = Random();
    std::lock_guard<std::mutex> lock(random.mutex);
    for (int64_t i = 0; i < f32.size(); ++i) p[i] = dist(random.engine);
  }
  return dtype == DType::kFloat32 ? f32 : f32.AsType(dtype);
}

}  // namespace

void Seed(uint64_t seed) {
  auto& random = Random();
  std::lock_guard<std::mutex> lock(random.mutex);
  random.engine.seed(static_cast<std::mt19937::result_type>(seed));
  random.seed = static_cast<uint32_t>(seed);
  random.mxnet_states.clear();
}

namespace {

// Fills `out` (n values of FType) as MXNet's LaunchRNG splits a draw over its states.
template <typename FType, typename Draw>
void DrawMXNetStream(FType* out, int64_t n, Draw draw) {
  auto& random = Random();
  std::lock_guard<std::mutex> lock(random.mutex);
  if (random.mxnet_states.empty()) {
    random.mxnet_states.reserve(kMXNetRandomStates);
    for (uint32_t i = 0; i < kMXNetRandomStates; ++i) {
      random.mxnet_states.emplace_back(random.seed * kMXNetSeedMagic + i);
    }
  }
  const int64_t loops = (n + kMXNetMinDrawsPerState - 1) / kMXNetMinDrawsPerState;
  const int64_t states = std::min<int64_t>(loops, kMXNetRandomStates);
  if (states == 0) return;
  const int64_t step = (n + states - 1) / states;
  for (int64_t t = 0; t < states; ++t) {
    std::mt19937& engine = random.mxnet_states[static_cast<size_t>(t)];
    for (int64_t i = t * step; i < std::min(n, (t + 1) * step); ++i) {
      out[i] = draw(engine, FType{});
    }
  }
}

template <typename Draw>
NDArray SampleMXNetStream(const Shape& shape, DType dtype, Draw draw) {
  HN_CHECK(dtype == DType::kFloat32 || dtype == DType::kFloat64 || dtype == DType::kFloat16,
           kTypeError)
      << "random initial values need a floating-point dtype, got " << DTypeName(dtype);
  if (dtype == DType::kFloat32) {
    NDArray out(shape, DType::kFloat32);
    DrawMXNetStream<float>(out.data<float>(), out.size(), draw);
    return out;
  }
  NDArray out(shape, DType::kFloat64);
  DrawMXNetStream<double>(out.data<double>(), out.size(), draw);
  return dtype == DType::kFloat64 ? out : out.AsType(dtype);
}

}  // namespace

NDArray internal::MXNetRandomUniform(const Shape& shape, float low, float high, DType dtype) {
  return SampleMXNetStream(shape, dtype, [low, high](std::mt19937& engine, auto zero) {
    using FType = decltype(zero);
    return static_cast<FType>(low + (high - low) * std::uniform_real_distribution<FType>()(engine));
  });
}

NDArray internal::MXNetRandomNormal(const Shape& shape, float mean, float sigma, DType dtype) {
  return SampleMXNetStream(shape, dtype, [mean, sigma](std::mt19937& engine, auto zero) {
    using FType = decltype(zero);
    return static_cast<FType>(mean + sigma * std::normal_distribution<FType>()(engine));
  });
}

uint64_t internal::DrawRandomSeed() {
  auto& random = Random();
  std::lock_guard<std::mutex> lock(random.mutex);
  const uint64_t high = random.engine();
  return (high << 32) | random.engine();
}

NDArray::NDArray(const Shape& shape, DType dtype) : shape_(shape), dtype_(dtype) {
  CheckShapeLimits(shape);
  storage_ = Allocate(static_cast<size_t>(shape.Size()) * DTypeSize(dtype));
}

NDArray NDArray::Zeros(const Shape& shape, DType dtype) {
  NDArray a(shape, dtype);
  std::memset(a.raw_data(), 0, a.nbytes());
  return a;
}

NDArray NDArray::Ones(const Shape& shape, DType dtype) { return Full(shape, 1.0, dtype); }

NDArray NDArray::Full(const Shape& shape, double value, DType dtype) {
  NDArray a(shape, dtype);  // checks the limits before the staging vector is made
  std::vector<double> values(static_cast<size_t>(a.size()), value);
  ConvertElements(values.data(), DType::kFloat64, a.raw_data(), dtype, values.size());
  return a;
}

NDArray NDArray::Arange(double start, double stop, double step, DType dtype) {
  HN_CHECK(step != 0, kInvalidArgument) << "arange: step must not be 0";
  double span = (stop - start) / step;
  // Checked before the conversion to int64, which is undefined for NaN and huge values.
  HN_CHECK(!std::isnan(span) && span <= static_cast<double>(GetLimit(Limit::kMaxTensorElements)),
           kInvalidArgument)
      << "arange(" << start << ", " << stop << ", " << step << ") has too many elements"
      << LimitNote(Limit::kMaxTensorElements);
  int64_t n = span > 0 ? static_cast<int64_t>(std::ceil(span)) : 0;
  NDArray a(Shape{n}, dtype);  // checks the limits before the staging vector is made
  std::vector<double> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    values[static_cast<size_t>(i)] = start + static_cast<double>(i) * step;
  ConvertElements(values.data(), DType::kFloat64, a.raw_data(), dtype, values.size());
  return a;
}

NDArray NDArray::FromVector(const Shape& shape, const std::vector<float>& values) {
  HN_CHECK(static_cast<int64_t>(values.size()) == shape.Size(), kShapeError)
      << "FromVector: " << values.size() << " values do not fill shape " << shape;
  return FromBuffer(shape, DType::kFloat32, values.data());
}

NDArray NDArray::FromBuffer(const Shape& shape, DType dtype, const void* data) {
  NDArray a(shape, dtype);
  if (a.nbytes() > 0) std::memcpy(a.raw_data(), data, a.nbytes());
  return a;
}

NDArray NDArray::Wrap(const Shape& shape, DType dtype, void* data,
                      std::function<void(void*)> deleter) {
  CheckShapeLimits(shape);
  HN_CHECK(data != nullptr || shape.Size() == 0, kInvalidArgument) << "Wrap: data is NULL";
  HN_CHECK(reinterpret_cast<uintptr_t>(data) % DTypeSize(dtype) == 0, kInvalidArgument)
      << "Wrap: data is not aligned to " << DTypeSize(dtype) << " bytes";
  NDArray a;
  a.shape_ = shape;
  a.dtype_ = dtype;
  a.storage_ = std::make_shared<Storage>();
  a.storage_->bytes = static_cast<uint8_t*>(data);
  a.storage_->release = [deleter](uint8_t* p) {
    if (deleter) deleter(p);
  };
  // The caller owns the memory and may write it at any time: stamp 0 keeps nothing derived.
  return a;
}

NDArray NDArray::RandomNormal(const Shape& shape, float mean, float stddev, DType dtype) {
  return Sample(shape, dtype, std::normal_distribution<float>(mean, stddev));
}

NDArray NDArray::RandomUniform(const Shape& shape, float low, float high, DType dtype) {
  return Sample(shape, dtype, std::uniform_real_distribution<float>(low, high));
}

NDArray NDArray::FromEntry(NodeEntry entry) {
  NDArray a;
  a.entry_ = std::move(entry);
  a.shape_ = Shape();
  return a;
}

size_t NDArray::nbytes() const {
  return is_symbolic() ? 0 : static_cast<size_t>(size()) * DTypeSize(dtype_);
}

void* NDArray::raw_data() {
  void* p = const_cast<void*>(static_cast<const NDArray*>(this)->raw_data());
  if (storage_->stamp.load(std::memory_order_relaxed) != 0)
    storage_->stamp.store(internal::NextWriteStamp(), std::memory_order_relaxed);
  return p;
}

void* NDArray::untracked_data() {
  void* p = const_cast<void*>(static_cast<const NDArray*>(this)->raw_data());
  storage_->stamp.store(0, std::memory_order_relaxed);
  return p;
}

const void* NDArray::raw_data() const {
  HN_CHECK(!is_symbolic(), kUntraceable)
      << "cannot read the values of symbolic array '" << entry_.node->name()
      << "' while hybridize() traces the forward: values exist only when the graph runs. "
         "Compute with operators instead of reading elements, or call hybridize(false) to "
         "debug eagerly";
  HN_CHECK(storage_ != nullptr, kInvalidArgument) << "the array is empty (none)";
  return storage_->bytes + offset_;
}

void NDArray::CheckElementType(DType requested) const {
  HN_CHECK(requested == dtype_, kTypeError)
      << "array has dtype " << DTypeName(dtype_) << ", accessed as " << DTypeName(requested);
}

namespace {

// Reshape, Copy and AsType compute an array from another without running an op: while autograd
// records, an input on the tape records them as the ops they equal (MXNet's ReshapeWithRecord),
// so gradients flow through them.
void RecordAs(const char* op_name, AttrDict attrs, const NDArray& input, NDArray* output) {
  if (internal::TapeAccess::Node(input) == nullptr || !autograd::IsRecording()) return;
  std::vector<NDArray> outputs{*output};
  internal::RecordOp(MakeNodeAttrs(op_name, "", std::move(attrs)), {input}, &outputs);
  *output = outputs[0];
}

NDArray Converted(const NDArray& a, DType dtype) {
  NDArray out(a.shape(), dtype);
  ConvertElements(a.raw_data(), a.dtype(), out.raw_data(), dtype, static_cast<size_t>(a.size()));
  return out;
}

}  // namespace

NDArray NDArray::Reshape(const Shape& shape) const {
  CheckShapeLimits(shape);
  HN_CHECK(shape.Size() == size(), kShapeError)
      << "cannot reshape an array of shape " << shape_ << " to " << shape;
  NDArray view = *this;
  view.shape_ = shape;
  internal::TapeAccess::Set(&view, nullptr, 0);
  RecordAs("Reshape", {{"shape", shape.ToString()}}, *this, &view);
  return view;
}

NDArray NDArray::Copy() const {
  NDArray out = Converted(*this, dtype_);
  RecordAs("_copy", {}, *this, &out);
  return out;
}

NDArray NDArray::AsType(DType dtype) const {
  NDArray out = Converted(*this, dtype);
  RecordAs("Cast", {{"dtype", DTypeName(dtype)}}, *this, &out);
  return out;
}

void NDArray::CopyFrom(const NDArray& src) {
  HN_CHECK(src.shape() == shape_, kShapeError)
      << "CopyFrom: source shape " << src.shape() << " differs from " << shape_;
  ConvertElements(src.raw_data(), src.dtype(), raw_data(), dtype_, static_cast<size_t>(size()));
}

std::vector<float> NDArray::ToFloatVector() const {
  std::vector<float> values(static_cast<size_t>(size()));
  ConvertElements(raw_data(), dtype_, values.data(), DType::kFloat32, values.size());
  return values;
}

bool NDArray::SharesStorageWith(const NDArray& other) const {
  return storage_ && storage_ == other.storage_;
}

std::ostream& operator<<(std::ostream& os, const NDArray& array) { return os << array.ToString(); }

namespace internal {

uint64_t NextWriteStamp() {
  static std::atomic<uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

uint64_t WriteStamp(const NDArray& array) {
  const Storage* s = Storage::Of(array);
  return s == nullptr ? 0 : s->stamp.load(std::memory_order_relaxed);
}

std::shared_ptr<const void> DerivedData(const NDArray& array, const std::string& key,
                                        const std::function<std::shared_ptr<const void>()>& make) {
  Storage* s = Storage::Of(array);
  const uint64_t stamp = s == nullptr ? 0 : s->stamp.load(std::memory_order_acquire);
  if (stamp == 0) return make();
  // Views of one storage derive separately.
  const std::string full_key =
      key + "@" + std::to_string(Storage::OffsetOf(array)) + "+" + std::to_string(array.nbytes());
  // Held while `make` runs, so predictors sharing a weight derive it once.
  std::lock_guard<std::mutex> lock(s->mutex);
  auto it = std::find_if(s->derived.begin(), s->derived.end(),
                         [&](const Storage::Derived& d) { return d.key == full_key; });
  if (it != s->derived.end() && it->stamp == stamp) return it->value;
  std::shared_ptr<const void> value = make();
  if (it != s->derived.end()) {
    *it = Storage::Derived{full_key, stamp, value};
  } else {
    if (s->derived.size() >= kMaxDerivedPerStorage) s->derived.erase(s->derived.begin());
    s->derived.push_back(Storage::Derived{full_key, stamp, value});
  }
  return value;
}

}  // namespace internal

}  // namespace hybridnet
