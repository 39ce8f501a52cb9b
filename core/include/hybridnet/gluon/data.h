// Data loading for training loops (the C++ side of mx.gluon.data): an ArrayDataset of
// in-memory arrays and a DataLoader that batches it.
//
//   auto dataset = std::make_shared<data::ArrayDataset>(std::vector<NDArray>{images, labels});
//   data::DataLoader loader(dataset, data::DataLoaderOptions().set_batch_size(64)
//                                        .set_shuffle(true).set_seed(7));
//   std::vector<NDArray> batch;                  // {images[b], labels[b]}
//   for (int epoch = 0; epoch < 10; ++epoch)
//     for (loader.Reset(); loader.Next(&batch);) Train(batch[0], batch[1]);
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "hybridnet/gluon/layer_options.h"
#include "hybridnet/ndarray.h"

namespace hybridnet {
namespace gluon {
/// Data loading for C++ training loops (the C++ side of mx.gluon.data); see the file comment.
namespace data {

/// Samples made of the rows (first-axis slices) of arrays of one length: sample i is row i of
/// every array, as MXNet's ArrayDataset.
class ArrayDataset {
 public:
  /// Throws kInvalidArgument without arrays, kShapeError when a first dimension differs or an
  /// array is a scalar.
  explicit ArrayDataset(std::vector<NDArray> arrays);
  /// The number of samples.
  int64_t size() const { return size_; }
  /// The number of arrays (fields of a sample).
  size_t num_fields() const { return arrays_.size(); }
  /// The rows `indices` of every array, in that order, stacked: one new array per field, of
  /// shape (indices.size(), row shape...). Throws kInvalidArgument for an index out of range.
  std::vector<NDArray> Gather(const std::vector<int64_t>& indices) const;

 private:
  std::vector<NDArray> arrays_;
  int64_t size_ = 0;
};

/// What becomes of the last, shorter batch (MXNet's last_batch).
enum class LastBatch {
  kKeep,      ///< "keep": yielded as it is
  kDiscard,   ///< "discard": dropped
  kRollover,  ///< "rollover": put in front of the next epoch's samples
};
/// "keep", "discard" or "rollover"; throws kInvalidArgument listing them otherwise.
LastBatch ParseLastBatch(const std::string& text);

/// MXNet's DataLoader arguments (batch_size, shuffle, last_batch) and the shuffle's seed, with
/// the setters of layer_options.h.
struct DataLoaderOptions {
  HN_LAYER_OPTIONS_BEGIN;
  HN_LAYER_OPTION(DataLoaderOptions, int64_t, batch_size) = 1;  ///< samples per batch
  HN_LAYER_OPTION(DataLoaderOptions, bool, shuffle) = false;    ///< a new order every epoch
  /// Each epoch's order is a new draw of a generator seeded once with it.
  HN_LAYER_OPTION(DataLoaderOptions, uint64_t, seed) = 0;
  /// What becomes of the last, shorter batch.
  HN_LAYER_OPTION(DataLoaderOptions, LastBatch, last_batch) = LastBatch::kKeep;
  HN_LAYER_OPTIONS_END;
};

/// Batches of an ArrayDataset, epoch after epoch: Reset() starts an epoch, Next() gives its
/// batches in order.
class DataLoader {
 public:
  /// Throws kInvalidArgument for a null dataset or a batch size below 1.
  DataLoader(std::shared_ptr<const ArrayDataset> dataset, DataLoaderOptions options);
  /// Starts the next epoch: the sample order (shuffled when asked), after the samples a
  /// rollover kept from the previous epoch. An epoch left unfinished is dropped (its rollover
  /// included).
  void Reset();
  /// Stores the next batch of this epoch in *batch (one array per dataset field) and returns
  /// true, or returns false at the epoch's end. Calls Reset() first if no epoch was started.
  bool Next(std::vector<NDArray>* batch);
  /// The number of batches an epoch started now yields (MXNet's len(loader)).
  int64_t NumBatches() const;
  /// The options it was made with.
  const DataLoaderOptions& options() const { return options_; }
  /// The number of arrays of a batch (the dataset's fields).
  size_t num_fields() const { return dataset_->num_fields(); }

 private:
  std::shared_ptr<const ArrayDataset> dataset_;
  DataLoaderOptions options_;
  std::mt19937_64 generator_;
  std::vector<int64_t> order_;     // this epoch's sample indices
  std::vector<int64_t> leftover_;  // kept by rollover for the next epoch
  size_t position_ = 0;
  bool started_ = false;
};

}  // namespace data
}  // namespace gluon
}  // namespace hybridnet
