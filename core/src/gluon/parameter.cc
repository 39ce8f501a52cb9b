#include "hybridnet/gluon/parameter.h"

#include "hybridnet/gluon/block.h"
#include "hybridnet/param.h"
#include "imperative/tracing.h"

namespace hybridnet {
namespace gluon {

Parameter::Parameter(Block* owner, std::string local_name, Shape shape, DType dtype,
                     InitializerPtr init, bool differentiable)
    : owner_(owner),
      local_name_(std::move(local_name)),
      shape_(std::move(shape)),
      dtype_(dtype),
      init_(std::move(init)),
      differentiable_(differentiable),
      grad_req_(differentiable ? autograd::GradReq::kWrite : autograd::GradReq::kNull) {}

std::string Parameter::name() const {
  return owner_ ? owner_->prefix() + local_name_ : local_name_;
}

void Parameter::Initialize(const InitializerPtr& default_init, bool force_reinit) {
  if (is_initialized() && !force_reinit) return;
  InitializerPtr init = init_ ? init_ : default_init;
  HN_CHECK(init != nullptr, kInvalidArgument) << "parameter '" << name() << "' has no initializer";
  deferred_init_ = init;
  if (!shape_.IsKnown()) return;  // completed by SetShape at the first forward
  NDArray value(shape_, dtype_);
  // Gluon applies the chosen initializer's weight rule whatever the name (MXNet passes it as the
  // "__init__" attribute), so a bias without its own initializer is drawn like a weight.
  init->InitWeight(name(), &value);
  if (is_initialized()) {
    data_.CopyFrom(value);  // keep the storage running graphs point at
  } else {
    data_ = value;
    // Drawn by the first forward of a recording: that forward's ops must see the variable.
    if (autograd::IsRecording()) EnsureGrad();
  }
}

void Parameter::Cast(DType dtype) {
  dtype_ = dtype;
  var_ = Symbol();  // its __dtype__ attribute is the old one
  if (data_.is_none()) return;
  NDArray grad = autograd::GetGrad(data_);
  data_ = autograd::Detach(data_).AsType(dtype);
  if (!grad.is_none()) autograd::MarkVariables({&data_}, {grad.AsType(dtype)}, {grad_req_});
}

void Parameter::SetShape(const Shape& shape) {
  Shape merged = shape_;
  HN_CHECK(MergeShape(shape, &merged), kShapeError)
      << "parameter '" << name() << "' has shape " << shape_ << ", which does not fit " << shape;
  shape_ = merged;
  if (!is_initialized() && deferred_init_ && shape_.IsKnown()) Initialize(deferred_init_);
}

const NDArray& Parameter::data() const {
  if (!data_.is_none()) return data_;
  if (deferred_init_) {
    HN_THROW(kInvalidArgument) << "parameter '" << name()
                               << "' has not been initialized yet because "
                               << "its shape " << shape_
                               << " is only known after the first forward";
  }
  HN_THROW(kInvalidArgument) << "parameter '" << name()
                             << "' has not been initialized: call initialize() first";
}

void Parameter::SetData(const NDArray& value) {
  HN_CHECK(!value.is_none() && !value.is_symbolic(), kInvalidArgument)
      << "parameter '" << name() << "': the new value is empty";
  Shape merged = shape_;
  HN_CHECK(MergeShape(value.shape(), &merged) && value.shape().IsKnown(), kShapeError)
      << "parameter '" << name() << "' has shape " << shape_ << " but the value has shape "
      << value.shape();
  HN_CHECK(value.dtype() == dtype_, kTypeError)
      << "parameter '" << name() << "' has dtype " << DTypeName(dtype_) << " but the value has "
      << DTypeName(value.dtype());
  shape_ = merged;
  if (is_initialized() && data_.shape() == value.shape()) {
    data_.CopyFrom(value);
  } else {
    bool had_grad = !autograd::GetGrad(data_).is_none();
    data_ = value.Copy();
    if (had_grad) AttachGrad(grad_req_);  // a new shape needs a new buffer
  }
}

const Symbol& Parameter::var() {
  if (var_.outputs.empty()) {
    AttrDict attrs{{"__dtype__", std::to_string(static_cast<int>(dtype_))},
                   {"__lr_mult__", ::hybridnet::internal::ValueText(lr_mult_)},
                   {"__shape__", shape_.ToString()},
                   {"__storage_type__", "0"},
                   {"__wd_mult__", ::hybridnet::internal::ValueText(wd_mult_)}};
    if (init_) attrs["__init__"] = init_->Dumps();
    var_ = Symbol::Var(name(), attrs);
  }
  return var_;
}

NDArray Parameter::Value() {
  if (::hybridnet::internal::IsTracing()) return NDArray::FromEntry(var().outputs[0]);
  if (autograd::IsRecording()) EnsureGrad();
  return data();
}

void Parameter::AttachGrad(autograd::GradReq req) {
  HN_CHECK(!data_.is_none(), kInvalidArgument)
      << "parameter '" << name() << "': initialize it (and run the first forward when its shape is "
      << "deferred) before attaching a gradient";
  grad_req_ = req;
  autograd::AttachGrad(&data_, req);
}

void Parameter::EnsureGrad() {
  if (grad_req_ != autograd::GradReq::kNull && !data_.is_none() &&
      autograd::GetGrad(data_).is_none()) {
    AttachGrad(grad_req_);
  }
}

NDArray Parameter::Grad() {
  HN_CHECK(grad_req_ != autograd::GradReq::kNull, kInvalidArgument)
      << "cannot get the gradient of parameter '" << name() << "' because its grad_req is 'null'";
  data();  // says why there is no value yet
  EnsureGrad();
  return autograd::GetGrad(data_);
}

void Parameter::ZeroGrad() {
  NDArray grad = autograd::GetGrad(data_);
  if (!grad.is_none()) grad.CopyFrom(NDArray::Zeros(grad.shape(), grad.dtype()));
}

void Parameter::set_grad_req(autograd::GradReq req) {
  if (!differentiable_) req = autograd::GradReq::kNull;  // as MXNet: statistics are not trained
  if (req == grad_req_) return;
  grad_req_ = req;
  if (data_.is_none()) return;
  if (req == autograd::GradReq::kNull) {
    data_ = autograd::Detach(data_);
  } else if (!autograd::GetGrad(data_).is_none()) {
    AttachGrad(req);
  }
}

void ParameterDict::Add(const ParameterPtr& p) { params_.push_back(p); }

ParameterPtr ParameterDict::Get(const std::string& full_name) const {
  for (const auto& p : params_)
    if (p->name() == full_name) return p;
  return nullptr;
}

std::vector<std::string> ParameterDict::Keys() const {
  std::vector<std::string> keys;
  for (const auto& p : params_) keys.push_back(p->name());
  return keys;
}

void ParameterDict::Initialize(const InitializerPtr& init, bool force_reinit) {
  for (const auto& p : params_) p->Initialize(init, force_reinit);
}

void ParameterDict::ZeroGrad() {
  for (const auto& p : params_) p->ZeroGrad();
}

void ParameterDict::SetGradReq(autograd::GradReq req) {
  for (const auto& p : params_) p->set_grad_req(req);
}

}  // namespace gluon
}  // namespace hybridnet
