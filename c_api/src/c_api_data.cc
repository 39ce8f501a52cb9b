// C API: data loading (hn_data_loader_*) over hybridnet/gluon/data.h.
#include <memory>
#include <string>
#include <vector>

#include "c_api_common.h"

using namespace hn_capi;  // NOLINT
namespace data = ::hybridnet::gluon::data;

extern "C" {

int hn_data_loader_create(hn_tensor* const* arrays, size_t num_arrays, int64_t batch_size,
                          int shuffle, const char* last_batch, uint64_t seed,
                          hn_data_loader** out) noexcept {
  HN_API_BEGIN();
  CheckOut(out, "out");
  HN_CHECK(num_arrays > 0, kInvalidArgument) << "a data loader needs at least one array";
  auto dataset = std::make_shared<const data::ArrayDataset>(ToArrays(arrays, num_arrays, "arrays"));
  const auto options =
      data::DataLoaderOptions()
          .set_batch_size(batch_size)
          .set_shuffle(ToFlag(shuffle, "shuffle"))
          .set_seed(seed)
          .set_last_batch(data::ParseLastBatch(last_batch == nullptr ? "keep" : last_batch));
  auto handle = std::make_unique<hn_data_loader>();
  handle->loader = std::make_unique<data::DataLoader>(std::move(dataset), options);
  *out = handle.release();
  HN_API_END();
}

int hn_data_loader_reset(hn_data_loader* loader) noexcept {
  HN_API_BEGIN();
  CheckHandle(loader, "loader");
  loader->loader->Reset();
  HN_API_END();
}

int hn_data_loader_next(hn_data_loader* loader, size_t max_fields, hn_tensor** batch,
                        size_t* out_num_fields) noexcept {
  HN_API_BEGIN();
  CheckHandle(loader, "loader");
  CheckOut(batch, "batch");  // before Next: a failed call must not consume a batch
  CheckOut(out_num_fields, "out_num_fields");
  const size_t num_fields = loader->loader->num_fields();
  HN_CHECK(max_fields >= num_fields, kInvalidArgument)
      << "a batch has " << num_fields << " arrays; max_fields is " << max_fields;
  std::vector<hybridnet::NDArray> arrays;
  if (!loader->loader->Next(&arrays)) {
    *out_num_fields = 0;
    return HN_OK;
  }
  StoreTensors("batch", std::move(arrays), max_fields, batch, out_num_fields);
  HN_API_END();
}

int hn_data_loader_num_batches(const hn_data_loader* loader, int64_t* out_num_batches) noexcept {
  HN_API_BEGIN();
  CheckHandle(loader, "loader");
  CheckOut(out_num_batches, "out_num_batches");
  *out_num_batches = loader->loader->NumBatches();
  HN_API_END();
}

void hn_data_loader_free(hn_data_loader* loader) noexcept { delete loader; }

}  // extern "C"
