// C API: optimizers and learning-rate schedulers (hn_optimizer_*, hn_lr_scheduler_*) over
// hybridnet/optimizer.h.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "c_api_common.h"
#include "hybridnet/optimizer.h"

using namespace hn_capi;  // NOLINT
namespace hn = ::hybridnet;
namespace opt = ::hybridnet::optimizer;

namespace {

opt::KeywordArgs ToKeywords(const char* const* keys, const char* const* values, size_t n) {
  HN_CHECK(n == 0 || (keys != nullptr && values != nullptr), kInvalidArgument)
      << "argument 'keys' or 'values' is NULL but num_params is " << n;
  opt::KeywordArgs params;
  for (size_t i = 0; i < n; ++i) {
    params.emplace_back(CheckString(keys[i], "keys[i]"), CheckString(values[i], "values[i]"));
  }
  return params;
}

std::string Lines(const opt::KeywordArgs& params) {
  std::string text;
  for (const auto& kv : params) text += kv.first + "=" + kv.second + "\n";
  return text;
}

std::map<int, float> ToMults(const int* indices, const float* mults, size_t n) {
  HN_CHECK(n == 0 || (indices != nullptr && mults != nullptr), kInvalidArgument)
      << "argument 'indices' or 'mults' is NULL but n is " << n;
  std::map<int, float> result;
  for (size_t i = 0; i < n; ++i) result[indices[i]] = mults[i];
  return result;
}

}  // namespace

extern "C" {

int hn_optimizer_create(const char* name, const char* const* keys, const char* const* values,
                        size_t num_params, hn_optimizer** out) noexcept {
  HN_API_BEGIN();
  CheckOut(out, "out");
  auto handle = std::make_unique<hn_optimizer>();
  handle->optimizer =
      opt::Optimizer::Create(CheckString(name, "name"), ToKeywords(keys, values, num_params));
  *out = handle.release();
  HN_API_END();
}

void hn_optimizer_free(hn_optimizer* optimizer) noexcept { delete optimizer; }

int hn_optimizer_create_state(hn_optimizer* optimizer, int index, const hn_tensor* weight,
                              size_t max_states, hn_tensor** out_states,
                              size_t* out_num_states) noexcept {
  HN_API_BEGIN();
  CheckHandle(optimizer, "optimizer");
  CheckHandle(weight, "weight");
  StoreTensors("hn_optimizer_create_state", optimizer->optimizer->CreateState(index, weight->array),
               max_states, out_states, out_num_states);
  HN_API_END();
}

int hn_optimizer_state_structure(const hn_optimizer* optimizer, const hn_tensor* weight,
                                 char** out) noexcept {
  HN_API_BEGIN();
  CheckHandle(optimizer, "optimizer");
  CheckHandle(weight, "weight");
  CheckOut(out, "out");
  *out = NewCString(optimizer->optimizer->StateStructure(weight->array));
  HN_API_END();
}

int hn_optimizer_update(hn_optimizer* optimizer, const int* indices, hn_tensor* const* weights,
                        hn_tensor* const* grads, size_t num_weights, hn_tensor* const* states,
                        const size_t* num_states) noexcept {
  HN_API_BEGIN();
  CheckHandle(optimizer, "optimizer");
  HN_CHECK(num_weights == 0 || (indices != nullptr && num_states != nullptr), kInvalidArgument)
      << "argument 'indices' or 'num_states' is NULL but num_weights is " << num_weights;
  std::vector<hn::NDArray> weight_arrays = ToArrays(weights, num_weights, "weights");
  std::vector<hn::NDArray> grad_arrays = ToArrays(grads, num_weights, "grads");
  size_t total = 0;
  for (size_t i = 0; i < num_weights; ++i) total += num_states[i];
  std::vector<hn::NDArray> flat = ToArrays(states, total, "states");
  // The arrays share the handles' storage, so the update lands in the caller's tensors.
  std::vector<std::vector<hn::NDArray>> per_weight(num_weights);
  size_t next = 0;
  for (size_t i = 0; i < num_weights; ++i) {
    per_weight[i].assign(flat.begin() + static_cast<std::ptrdiff_t>(next),
                         flat.begin() + static_cast<std::ptrdiff_t>(next + num_states[i]));
    next += num_states[i];
  }
  std::vector<int> index_list(indices, indices + num_weights);
  std::vector<hn::NDArray*> weight_ptrs;
  std::vector<std::vector<hn::NDArray>*> state_ptrs;
  for (size_t i = 0; i < num_weights; ++i) {
    weight_ptrs.push_back(&weight_arrays[i]);
    state_ptrs.push_back(&per_weight[i]);
  }
  optimizer->optimizer->UpdateMany(index_list, weight_ptrs, grad_arrays, state_ptrs);
  HN_API_END();
}

int hn_optimizer_get_learning_rate(const hn_optimizer* optimizer, float* out_lr) noexcept {
  HN_API_BEGIN();
  CheckHandle(optimizer, "optimizer");
  CheckOut(out_lr, "out_lr");
  *out_lr = optimizer->optimizer->learning_rate();
  HN_API_END();
}

int hn_optimizer_set_learning_rate(hn_optimizer* optimizer, float lr) noexcept {
  HN_API_BEGIN();
  CheckHandle(optimizer, "optimizer");
  optimizer->optimizer->set_learning_rate(lr);
  HN_API_END();
}

int hn_optimizer_get_rescale_grad(const hn_optimizer* optimizer, float* out_rescale_grad) noexcept {
  HN_API_BEGIN();
  CheckHandle(optimizer, "optimizer");
  CheckOut(out_rescale_grad, "out_rescale_grad");
  *out_rescale_grad = optimizer->optimizer->rescale_grad();
  HN_API_END();
}

int hn_optimizer_set_rescale_grad(hn_optimizer* optimizer, float rescale_grad) noexcept {
  HN_API_BEGIN();
  CheckHandle(optimizer, "optimizer");
  optimizer->optimizer->set_rescale_grad(rescale_grad);
  HN_API_END();
}

int hn_optimizer_set_lr_mult(hn_optimizer* optimizer, const int* indices, const float* mults,
                             size_t n) noexcept {
  HN_API_BEGIN();
  CheckHandle(optimizer, "optimizer");
  optimizer->optimizer->set_lr_mult(ToMults(indices, mults, n));
  HN_API_END();
}

int hn_optimizer_set_wd_mult(hn_optimizer* optimizer, const int* indices, const float* mults,
                             size_t n) noexcept {
  HN_API_BEGIN();
  CheckHandle(optimizer, "optimizer");
  optimizer->optimizer->set_wd_mult(ToMults(indices, mults, n));
  HN_API_END();
}

int hn_optimizer_update_count(const hn_optimizer* optimizer, int index, int* out_num_update,
                              int* out_index_count) noexcept {
  HN_API_BEGIN();
  CheckHandle(optimizer, "optimizer");
  CheckOut(out_num_update, "out_num_update");
  CheckOut(out_index_count, "out_index_count");
  const auto& counts = optimizer->optimizer->index_update_count();
  auto it = counts.find(index);
  *out_num_update = optimizer->optimizer->num_update();
  *out_index_count = it == counts.end() ? 0 : it->second;
  HN_API_END();
}

int hn_optimizer_params(const hn_optimizer* optimizer, char** out) noexcept {
  HN_API_BEGIN();
  CheckHandle(optimizer, "optimizer");
  CheckOut(out, "out");
  *out = NewCString("class=" + optimizer->optimizer->class_name() + "\n" +
                    Lines(optimizer->optimizer->Params()));
  HN_API_END();
}

int hn_optimizer_set_lr_scheduler(hn_optimizer* optimizer, hn_lr_scheduler* scheduler) noexcept {
  HN_API_BEGIN();
  CheckHandle(optimizer, "optimizer");
  optimizer->optimizer->set_lr_scheduler(scheduler != nullptr ? scheduler->scheduler : nullptr);
  HN_API_END();
}

int hn_lr_scheduler_create(const char* name, const char* const* keys, const char* const* values,
                           size_t num_params, hn_lr_scheduler** out) noexcept {
  HN_API_BEGIN();
  CheckOut(out, "out");
  auto handle = std::make_unique<hn_lr_scheduler>();
  handle->scheduler =
      opt::LRScheduler::Create(CheckString(name, "name"), ToKeywords(keys, values, num_params));
  *out = handle.release();
  HN_API_END();
}

void hn_lr_scheduler_free(hn_lr_scheduler* scheduler) noexcept { delete scheduler; }

int hn_lr_scheduler_get(hn_lr_scheduler* scheduler, int num_update, float* out_lr) noexcept {
  HN_API_BEGIN();
  CheckHandle(scheduler, "scheduler");
  CheckOut(out_lr, "out_lr");
  *out_lr = (*scheduler->scheduler)(num_update);
  HN_API_END();
}

int hn_lr_scheduler_params(const hn_lr_scheduler* scheduler, char** out) noexcept {
  HN_API_BEGIN();
  CheckHandle(scheduler, "scheduler");
  CheckOut(out, "out");
  *out = NewCString(std::string("class=") + scheduler->scheduler->class_name() + "\n" +
                    Lines(scheduler->scheduler->Params()));
  HN_API_END();
}

}  // extern "C"
