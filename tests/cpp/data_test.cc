#include "hybridnet/gluon/data.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "common/test_util.h"

namespace hybridnet {
namespace gluon {
namespace data {
namespace {

using testing_util::ErrorOf;

// 7 samples: x row i is {i, 10 + i}, y[i] = i (int32).
std::shared_ptr<ArrayDataset> Seven() {
  std::vector<float> x;
  std::vector<int32_t> y;
  for (int i = 0; i < 7; ++i) {
    x.push_back(static_cast<float>(i));
    x.push_back(static_cast<float>(10 + i));
    y.push_back(i);
  }
  return std::make_shared<ArrayDataset>(std::vector<NDArray>{
      NDArray::FromVector({7, 2}, x), NDArray::FromBuffer({7}, DType::kInt32, y.data())});
}

// The y values of every batch of one epoch.
std::vector<std::vector<int32_t>> Epoch(DataLoader* loader) {
  std::vector<std::vector<int32_t>> epoch;
  std::vector<NDArray> batch;
  for (loader->Reset(); loader->Next(&batch);) {
    EXPECT_EQ(batch.size(), 2u);
    EXPECT_EQ(batch[0].shape()[0], batch[1].shape()[0]);
    const int32_t* y = batch[1].data<int32_t>();
    const float* x = batch[0].data<float>();
    for (int64_t i = 0; i < batch[1].size(); ++i) {
      EXPECT_EQ(x[2 * i], static_cast<float>(y[i]));  // fields stay aligned
      EXPECT_EQ(x[2 * i + 1], static_cast<float>(10 + y[i]));
    }
    epoch.emplace_back(y, y + batch[1].size());
  }
  return epoch;
}

using Batches = std::vector<std::vector<int32_t>>;

TEST(DataLoader, KeepDiscardAndRolloverInOrder) {
  DataLoader keep(Seven(), DataLoaderOptions().set_batch_size(3));
  EXPECT_EQ(keep.NumBatches(), 3);
  EXPECT_EQ(Epoch(&keep), (Batches{{0, 1, 2}, {3, 4, 5}, {6}}));
  DataLoader discard(Seven(),
                     DataLoaderOptions().set_batch_size(3).set_last_batch(LastBatch::kDiscard));
  EXPECT_EQ(discard.NumBatches(), 2);
  EXPECT_EQ(Epoch(&discard), (Batches{{0, 1, 2}, {3, 4, 5}}));
  DataLoader rollover(
      Seven(), DataLoaderOptions().set_batch_size(3).set_last_batch(ParseLastBatch("rollover")));
  EXPECT_EQ(Epoch(&rollover), (Batches{{0, 1, 2}, {3, 4, 5}}));
  EXPECT_EQ(rollover.NumBatches(), 2);  // (1 kept + 7) / 3
  EXPECT_EQ(Epoch(&rollover), (Batches{{6, 0, 1}, {2, 3, 4}}));
  EXPECT_EQ(Epoch(&rollover), (Batches{{5, 6, 0}, {1, 2, 3}, {4, 5, 6}}));
}

TEST(DataLoader, ShuffleIsAPermutationReproducibleFromTheSeed) {
  auto options = DataLoaderOptions().set_batch_size(4).set_shuffle(true).set_seed(11);
  DataLoader a(Seven(), options), b(Seven(), options);
  const Batches first = Epoch(&a);
  EXPECT_EQ(first, Epoch(&b));
  std::vector<int32_t> all;
  for (const auto& batch : first) all.insert(all.end(), batch.begin(), batch.end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6}));
  // Later epochs draw new orders.
  std::set<Batches> orders{first};
  for (int epoch = 0; epoch < 5; ++epoch) orders.insert(Epoch(&a));
  EXPECT_GT(orders.size(), 1u);
}

TEST(DataLoader, BadInputIsRejected) {
  Error lengths = ErrorOf([] { ArrayDataset({NDArray::Zeros({3, 2}), NDArray::Zeros({4})}); });
  EXPECT_EQ(lengths.code(), StatusCode::kShapeError);
  EXPECT_NE(std::string(lengths.what()).find("array 1 has 4"), std::string::npos);
  EXPECT_EQ(ErrorOf([] { ArrayDataset(std::vector<NDArray>{}); }).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ErrorOf([] { DataLoader(Seven(), DataLoaderOptions().set_batch_size(0)); }).code(),
            StatusCode::kInvalidArgument);
  Error mode = ErrorOf([] { ParseLastBatch("pad"); });
  EXPECT_NE(std::string(mode.what()).find("'keep', 'discard', or 'rollover'"), std::string::npos);
  EXPECT_EQ(ErrorOf([] { Seven()->Gather({7}); }).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace data
}  // namespace gluon
}  // namespace hybridnet
