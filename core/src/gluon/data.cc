// ArrayDataset and DataLoader of hybridnet/gluon/data.h.
#include "hybridnet/gluon/data.h"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace hybridnet {
namespace gluon {
namespace data {

ArrayDataset::ArrayDataset(std::vector<NDArray> arrays) : arrays_(std::move(arrays)) {
  HN_CHECK(!arrays_.empty(), kInvalidArgument) << "ArrayDataset needs at least 1 array";
  for (size_t i = 0; i < arrays_.size(); ++i) {
    const NDArray& a = arrays_[i];
    HN_CHECK(!a.is_none() && !a.is_symbolic(), kInvalidArgument)
        << "ArrayDataset: array " << i << " holds no values";
    HN_CHECK(a.shape().ndim() > 0, kShapeError)
        << "ArrayDataset: array " << i << " is a scalar; samples are rows of arrays";
    if (i == 0) size_ = a.shape()[0];
    HN_CHECK(a.shape()[0] == size_, kShapeError)
        << "ArrayDataset: all arrays must have the same length; array 0 has length " << size_
        << " while array " << i << " has " << a.shape()[0];
  }
}

std::vector<NDArray> ArrayDataset::Gather(const std::vector<int64_t>& indices) const {
  for (int64_t index : indices) {
    HN_CHECK(index >= 0 && index < size_, kInvalidArgument)
        << "ArrayDataset: sample " << index << " is out of range [0, " << size_ << ")";
  }
  std::vector<NDArray> fields;
  for (const NDArray& array : arrays_) {
    Shape shape = array.shape();
    shape[0] = static_cast<int64_t>(indices.size());
    NDArray batch(shape, array.dtype());
    const size_t row_bytes = size_ == 0 ? 0 : array.nbytes() / static_cast<size_t>(size_);
    const auto* source = static_cast<const char*>(array.raw_data());
    auto* target = static_cast<char*>(batch.raw_data());
    for (size_t i = 0; i < indices.size(); ++i) {
      std::memcpy(target + i * row_bytes, source + static_cast<size_t>(indices[i]) * row_bytes,
                  row_bytes);
    }
    fields.push_back(std::move(batch));
  }
  return fields;
}

LastBatch ParseLastBatch(const std::string& text) {
  if (text == "keep") return LastBatch::kKeep;
  if (text == "discard") return LastBatch::kDiscard;
  if (text == "rollover") return LastBatch::kRollover;
  HN_THROW(kInvalidArgument) << "last_batch must be one of 'keep', 'discard', or 'rollover', but "
                             << "got '" << text << "'";
}

DataLoader::DataLoader(std::shared_ptr<const ArrayDataset> dataset, DataLoaderOptions options)
    : dataset_(std::move(dataset)), options_(options), generator_(options.seed) {
  HN_CHECK(dataset_ != nullptr, kInvalidArgument) << "DataLoader: the dataset is null";
  HN_CHECK(options_.batch_size >= 1, kInvalidArgument)
      << "DataLoader: batch_size must be at least 1, got " << options_.batch_size;
}

void DataLoader::Reset() {
  std::vector<int64_t> samples(static_cast<size_t>(dataset_->size()));
  std::iota(samples.begin(), samples.end(), int64_t{0});
  if (options_.shuffle) std::shuffle(samples.begin(), samples.end(), generator_);
  order_ = std::move(leftover_);
  leftover_.clear();
  order_.insert(order_.end(), samples.begin(), samples.end());
  position_ = 0;
  started_ = true;
}

bool DataLoader::Next(std::vector<NDArray>* batch) {
  HN_CHECK(batch != nullptr, kInvalidArgument) << "DataLoader::Next: batch is null";
  if (!started_) Reset();
  const size_t batch_size = static_cast<size_t>(options_.batch_size);
  const size_t remaining = order_.size() - position_;
  if (remaining == 0) return false;
  if (remaining < batch_size && options_.last_batch != LastBatch::kKeep) {
    if (options_.last_batch == LastBatch::kRollover) {
      leftover_.assign(order_.begin() + static_cast<std::ptrdiff_t>(position_), order_.end());
    }
    position_ = order_.size();
    return false;
  }
  const size_t take = std::min(batch_size, remaining);
  const std::vector<int64_t> indices(
      order_.begin() + static_cast<std::ptrdiff_t>(position_),
      order_.begin() + static_cast<std::ptrdiff_t>(position_ + take));
  *batch = dataset_->Gather(indices);
  position_ += take;
  return true;
}

int64_t DataLoader::NumBatches() const {
  const int64_t n = dataset_->size() + static_cast<int64_t>(leftover_.size());
  const int64_t b = options_.batch_size;
  return options_.last_batch == LastBatch::kKeep ? (n + b - 1) / b : n / b;
}

}  // namespace data
}  // namespace gluon
}  // namespace hybridnet
