// C API: the Trainer (hn_trainer_*) over hybridnet/gluon/trainer.h.
#include <string>
#include <vector>

#include "c_api_common.h"

using namespace hn_capi;  // NOLINT
namespace gluon = ::hybridnet::gluon;

extern "C" {

int hn_trainer_create(hn_block* const* blocks, const char* const* param_names, size_t num_params,
                      hn_optimizer* optimizer, hn_trainer** out) noexcept {
  HN_API_BEGIN();
  CheckHandle(optimizer, "optimizer");
  CheckOut(out, "out");
  HN_CHECK(num_params == 0 || (blocks != nullptr && param_names != nullptr), kInvalidArgument)
      << "argument 'blocks' or 'param_names' is NULL but num_params is " << num_params;
  std::vector<gluon::ParameterPtr> params;
  for (size_t i = 0; i < num_params; ++i) {
    CheckHandle(blocks[i], "blocks[i]");
    std::string name = CheckString(param_names[i], "param_names[i]");
    gluon::ParameterPtr p = blocks[i]->block->CollectParams().Get(name);
    HN_CHECK(p != nullptr, kNotFound) << "hn_trainer_create: block '" << blocks[i]->block->name()
                                      << "' has no parameter '" << name << "'";
    params.push_back(std::move(p));
  }
  auto handle = std::make_unique<hn_trainer>();
  handle->trainer = std::make_unique<gluon::Trainer>(std::move(params), optimizer->optimizer);
  *out = handle.release();
  HN_API_END();
}

void hn_trainer_free(hn_trainer* trainer) noexcept { delete trainer; }

int hn_trainer_step(hn_trainer* trainer, int batch_size, int ignore_stale_grad) noexcept {
  HN_API_BEGIN();
  CheckHandle(trainer, "trainer");
  trainer->trainer->Step(batch_size, ToFlag(ignore_stale_grad, "ignore_stale_grad"));
  HN_API_END();
}

int hn_trainer_allreduce_grads(hn_trainer* trainer) noexcept {
  HN_API_BEGIN();
  CheckHandle(trainer, "trainer");
  trainer->trainer->AllreduceGrads();
  HN_API_END();
}

int hn_trainer_update(hn_trainer* trainer, int batch_size, int ignore_stale_grad) noexcept {
  HN_API_BEGIN();
  CheckHandle(trainer, "trainer");
  trainer->trainer->Update(batch_size, ToFlag(ignore_stale_grad, "ignore_stale_grad"));
  HN_API_END();
}

int hn_trainer_get_learning_rate(const hn_trainer* trainer, float* out_lr) noexcept {
  HN_API_BEGIN();
  CheckHandle(trainer, "trainer");
  CheckOut(out_lr, "out_lr");
  *out_lr = trainer->trainer->learning_rate();
  HN_API_END();
}

int hn_trainer_set_learning_rate(hn_trainer* trainer, float lr) noexcept {
  HN_API_BEGIN();
  CheckHandle(trainer, "trainer");
  trainer->trainer->set_learning_rate(lr);
  HN_API_END();
}

int hn_trainer_optimizer(const hn_trainer* trainer, hn_optimizer** out) noexcept {
  HN_API_BEGIN();
  CheckHandle(trainer, "trainer");
  CheckOut(out, "out");
  auto handle = std::make_unique<hn_optimizer>();
  handle->optimizer = trainer->trainer->optimizer();
  *out = handle.release();
  HN_API_END();
}

int hn_trainer_save_states(const hn_trainer* trainer, const char* path) noexcept {
  HN_API_BEGIN();
  CheckHandle(trainer, "trainer");
  trainer->trainer->SaveStates(CheckString(path, "path"));
  HN_API_END();
}

int hn_trainer_load_states(hn_trainer* trainer, const char* path) noexcept {
  HN_API_BEGIN();
  CheckHandle(trainer, "trainer");
  trainer->trainer->LoadStates(CheckString(path, "path"));
  HN_API_END();
}

}  // extern "C"
