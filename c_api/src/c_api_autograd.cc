// C API: autograd (hn_autograd_*, hn_tensor_grad, hn_tensor_detach) over hybridnet/autograd.h.
#include <vector>

#include "c_api_common.h"
#include "hybridnet/autograd.h"

using namespace hn_capi;  // NOLINT
namespace hn = ::hybridnet;
namespace autograd = ::hybridnet::autograd;

namespace {

autograd::GradReq ToGradReq(int req, size_t i) {
  HN_CHECK(req == HN_GRAD_NULL || req == HN_GRAD_WRITE || req == HN_GRAD_ADD, kInvalidArgument)
      << "grad_reqs[" << i << "] is " << req << "; expected HN_GRAD_NULL (0), HN_GRAD_WRITE (1) "
      << "or HN_GRAD_ADD (3)";
  return static_cast<autograd::GradReq>(req);
}

// Head gradients from C: NULL for all ones, else one entry per head, NULL entries for ones.
std::vector<hn::NDArray> HeadGrads(hn_tensor* const* head_grads, size_t num_heads) {
  std::vector<hn::NDArray> grads;
  if (head_grads == nullptr) return grads;
  for (size_t i = 0; i < num_heads; ++i) {
    grads.push_back(head_grads[i] != nullptr ? head_grads[i]->array : hn::NDArray());
  }
  return grads;
}

std::vector<hn::NDArray> Heads(hn_tensor* const* heads, size_t num_heads) {
  HN_CHECK(num_heads > 0, kInvalidArgument) << "no heads given (num_heads is 0)";
  return ToArrays(heads, num_heads, "heads");
}

}  // namespace

extern "C" {

int hn_autograd_set_recording(int recording, int* out_previous) noexcept {
  HN_API_BEGIN();
  const bool previous = autograd::SetRecording(ToFlag(recording, "recording"));
  if (out_previous != nullptr) *out_previous = previous ? 1 : 0;
  HN_API_END();
}

int hn_autograd_set_training(int training, int* out_previous) noexcept {
  HN_API_BEGIN();
  const bool previous = autograd::SetTraining(ToFlag(training, "training"));
  if (out_previous != nullptr) *out_previous = previous ? 1 : 0;
  HN_API_END();
}

int hn_autograd_set_flags(int flags, int mask, int* out_previous) noexcept {
  HN_API_BEGIN();
  constexpr int kFlags = HN_AUTOGRAD_RECORDING | HN_AUTOGRAD_TRAINING;
  HN_CHECK(((flags | mask) & ~kFlags) == 0, kInvalidArgument)
      << "flags " << flags << ", mask " << mask << ": expected bits of HN_AUTOGRAD_RECORDING (1) "
      << "and HN_AUTOGRAD_TRAINING (2)";
  const int previous = (autograd::IsRecording() ? HN_AUTOGRAD_RECORDING : 0) |
                       (autograd::IsTraining() ? HN_AUTOGRAD_TRAINING : 0);
  if (mask & HN_AUTOGRAD_RECORDING) autograd::SetRecording((flags & HN_AUTOGRAD_RECORDING) != 0);
  if (mask & HN_AUTOGRAD_TRAINING) autograd::SetTraining((flags & HN_AUTOGRAD_TRAINING) != 0);
  if (out_previous != nullptr) *out_previous = previous;
  HN_API_END();
}

int hn_autograd_is_recording(int* out_recording) noexcept {
  HN_API_BEGIN();
  CheckOut(out_recording, "out_recording");
  *out_recording = autograd::IsRecording() ? 1 : 0;
  HN_API_END();
}

int hn_autograd_is_training(int* out_training) noexcept {
  HN_API_BEGIN();
  CheckOut(out_training, "out_training");
  *out_training = autograd::IsTraining() ? 1 : 0;
  HN_API_END();
}

int hn_autograd_mark_variables(hn_tensor* const* variables, size_t num_variables,
                               const int* grad_reqs, hn_tensor* const* gradients) noexcept {
  HN_API_BEGIN();
  HN_CHECK(variables != nullptr && num_variables > 0, kInvalidArgument)
      << "argument 'variables' is NULL or num_variables is 0";
  CheckHandle(grad_reqs, "grad_reqs");
  std::vector<hn::NDArray*> vars;
  std::vector<hn::NDArray> grads;
  std::vector<autograd::GradReq> reqs;
  for (size_t i = 0; i < num_variables; ++i) {
    HN_CHECK(variables[i] != nullptr, kInvalidArgument) << "variables[" << i << "] is NULL";
    hn::NDArray& x = variables[i]->array;
    vars.push_back(&x);
    reqs.push_back(ToGradReq(grad_reqs[i], i));
    if (gradients != nullptr && gradients[i] != nullptr) {
      grads.push_back(gradients[i]->array);
    } else {
      HN_CHECK(!x.is_none() && !x.is_symbolic(), kInvalidArgument)
          << "variables[" << i << "] is a none or symbolic tensor";
      grads.push_back(hn::NDArray::Zeros(x.shape(), x.dtype()));
    }
  }
  autograd::MarkVariables(vars, grads, reqs);
  HN_API_END();
}

int hn_autograd_backward(hn_tensor* const* heads, size_t num_heads, hn_tensor* const* head_grads,
                         int retain_graph, int train_mode) noexcept {
  HN_API_BEGIN();
  autograd::Backward(Heads(heads, num_heads), HeadGrads(head_grads, num_heads),
                     ToFlag(retain_graph, "retain_graph"), ToFlag(train_mode, "train_mode"));
  HN_API_END();
}

int hn_autograd_grad(hn_tensor* const* heads, size_t num_heads, hn_tensor* const* head_grads,
                     hn_tensor* const* variables, size_t num_variables, int retain_graph,
                     int train_mode, hn_tensor** out_grads) noexcept {
  return hn_autograd_grad_v2(heads, num_heads, head_grads, variables, num_variables, retain_graph,
                             train_mode, 0, out_grads);
}

int hn_autograd_grad_v2(hn_tensor* const* heads, size_t num_heads, hn_tensor* const* head_grads,
                        hn_tensor* const* variables, size_t num_variables, int retain_graph,
                        int train_mode, int create_graph, hn_tensor** out_grads) noexcept {
  HN_API_BEGIN();
  CheckOut(out_grads, "out_grads");
  HN_CHECK(num_variables > 0, kInvalidArgument) << "no variables given (num_variables is 0)";
  std::vector<hn::NDArray> grads =
      autograd::Grad(Heads(heads, num_heads), ToArrays(variables, num_variables, "variables"),
                     HeadGrads(head_grads, num_heads), ToFlag(retain_graph, "retain_graph"),
                     ToFlag(train_mode, "train_mode"), ToFlag(create_graph, "create_graph"));
  size_t count = 0;
  StoreTensors("hn_autograd_grad", std::move(grads), num_variables, out_grads, &count);
  HN_API_END();
}

int hn_tensor_grad(const hn_tensor* tensor, hn_tensor** out) noexcept {
  HN_API_BEGIN();
  CheckHandle(tensor, "tensor");
  CheckOut(out, "out");
  hn::NDArray grad = autograd::GetGrad(tensor->array);
  *out = grad.is_none() ? nullptr : new hn_tensor{grad};
  HN_API_END();
}

int hn_tensor_detach(const hn_tensor* tensor, hn_tensor** out) noexcept {
  HN_API_BEGIN();
  CheckHandle(tensor, "tensor");
  CheckOut(out, "out");
  *out = new hn_tensor{autograd::Detach(tensor->array)};
  HN_API_END();
}

}  // extern "C"
