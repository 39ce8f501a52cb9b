#include "hybridnet/gluon/conv_layers.h"

#include "hybridnet/imperative.h"
#include "hybridnet/operators.h"
#include "hybridnet/param.h"

namespace hybridnet {
namespace gluon {

namespace {

std::string BoolText(bool b) { return b ? "True" : "False"; }

bool AllEqual(const std::vector<int64_t>& v, int64_t value) {
  for (int64_t x : v)
    if (x != value) return false;
  return true;
}

const char* DefaultLayout(size_t rank) { return rank == 1 ? "NCW" : rank == 2 ? "NCHW" : "NCDHW"; }

}  // namespace

std::vector<int64_t> IntTuple::Expand(size_t rank, const char* what) const {
  if (scalar_) return std::vector<int64_t>(rank, values_[0]);
  HN_CHECK(values_.size() == rank, kInvalidArgument)
      << what << " must be an int or a tuple of " << rank << " ints, got " << Shape(values_);
  return values_;
}

// ---------------------------------------------------------------------------------------------
// Convolutions

ConvBase::ConvBase(size_t rank, bool transpose, const ConvOptions& o,
                   std::optional<std::string> prefix)
    : HybridBlock("conv", std::move(prefix)),
      class_name_("Conv" + std::to_string(rank) + "D" + (transpose ? "Transpose" : "")),
      transpose_(transpose),
      groups_(o.groups),
      activation_(o.activation) {
  const char* name = class_name_.c_str();
  HN_CHECK(o.channels >= 1, kInvalidArgument)
      << name << ": channels must be >= 1, got " << o.channels;
  HN_CHECK(!o.kernel_size.empty(), kInvalidArgument) << name << ": kernel_size is required";
  HN_CHECK(o.groups >= 1, kInvalidArgument) << name << ": groups must be >= 1, got " << o.groups;
  HN_CHECK(o.in_channels >= 0, kInvalidArgument)
      << name << ": in_channels must be >= 0, got " << o.in_channels;
  const std::string layout = o.layout.empty() ? DefaultLayout(rank) : o.layout;
  HN_CHECK(layout.size() == rank + 2, kInvalidArgument)
      << name << ": layout '" << layout << "' does not describe " << rank << "-D data (use "
      << DefaultLayout(rank) << ")";
  kernel_ = o.kernel_size.Expand(rank, "kernel_size");
  stride_ = o.strides.Expand(rank, "strides");
  pad_ = o.padding.Expand(rank, "padding");
  dilate_ = o.dilation.Expand(rank, "dilation");
  adj_ = o.output_padding.Expand(rank, "output_padding");
  HN_CHECK(transpose_ || AllEqual(adj_, 0), kInvalidArgument)
      << name << " takes no output_padding (the transposed convolutions do)";

  // MXNet's _infer_weight_shape with data (1, in_channels, 0, ...): unknown dims stay 0.
  std::vector<int64_t> wshape;
  if (transpose_) {
    wshape = {o.in_channels, o.channels / o.groups};
  } else {
    wshape = {o.channels, o.in_channels / o.groups};
  }
  wshape.insert(wshape.end(), kernel_.begin(), kernel_.end());
  weight_ = AddParameter("weight", Shape(wshape), o.weight_initializer);
  if (o.use_bias) bias_ = AddParameter("bias", Shape({o.channels}), o.bias_initializer);

  AttrDict attrs{{"dilate", Shape(dilate_).ToString()},
                 {"kernel", Shape(kernel_).ToString()},
                 {"layout", layout},
                 {"no_bias", BoolText(!o.use_bias)},
                 {"num_filter", std::to_string(o.channels)},
                 {"num_group", std::to_string(o.groups)},
                 {"pad", Shape(pad_).ToString()},
                 {"stride", Shape(stride_).ToString()}};
  if (transpose_) attrs["adj"] = Shape(adj_).ToString();
  attrs_ = MakeNodeAttrs(transpose_ ? "Deconvolution" : "Convolution", "fwd", attrs);
  if (!o.activation.empty()) {
    RegisterChild(std::make_shared<Activation>(o.activation, o.activation + "_"), "act");
  }
}

NDArray ConvBase::Forward(const NDArray& x) {
  std::vector<NDArray> inputs{x, weight_->Value()};
  if (bias_) inputs.push_back(bias_->Value());
  NDArray y = Invoke(attrs_, inputs)[0];
  if (!activation_.empty()) y = (*children_[0].second)(y);
  return y;
}

std::string ConvBase::Describe() {
  const int64_t in = weight_->shape()[1];
  const int64_t out = weight_->shape()[0];
  std::string s = class_name_ + "(" + (in > 0 ? std::to_string(in) : std::string("None")) + " -> " +
                  std::to_string(out) + ", kernel_size=" + Shape(kernel_).ToString() +
                  ", stride=" + Shape(stride_).ToString();
  if (!AllEqual(pad_, 0)) s += ", padding=" + Shape(pad_).ToString();
  if (!AllEqual(dilate_, 1)) s += ", dilation=" + Shape(dilate_).ToString();
  if (transpose_ && !AllEqual(adj_, 0)) s += ", output_padding=" + Shape(adj_).ToString();
  if (groups_ != 1) s += ", groups=" + std::to_string(groups_);
  if (!bias_) s += ", bias=False";
  if (!activation_.empty()) s += ", Activation(" + activation_ + ")";
  return s + ")";
}

std::string ConvBase::ToString() { return Describe(); }

// ---------------------------------------------------------------------------------------------
// Pooling

PoolingBase::PoolingBase(size_t rank, PoolType type, bool global, const PoolOptions& o,
                         std::optional<std::string> prefix)
    : HybridBlock("pool", std::move(prefix)),
      class_name_(std::string(global ? "Global" : "") + (type == PoolType::kMax ? "Max" : "Avg") +
                  "Pool" + std::to_string(rank) + "D") {
  const std::string layout = o.layout.empty() ? DefaultLayout(rank) : o.layout;
  HN_CHECK(layout.size() == rank + 2, kInvalidArgument)
      << class_name_ << ": layout '" << layout << "' does not describe " << rank << "-D data (use "
      << DefaultLayout(rank) << ")";
  // Global pooling: kernel 1, stride 1, pad 0, global_pool True, pooling_convention full.
  std::vector<int64_t> kernel =
      global ? std::vector<int64_t>(rank, 1) : o.pool_size.Expand(rank, "pool_size");
  std::vector<int64_t> stride =
      global || o.strides.empty() ? kernel : o.strides.Expand(rank, "strides");
  std::vector<int64_t> pad =
      global ? std::vector<int64_t>(rank, 0) : o.padding.Expand(rank, "padding");
  AttrDict attrs{{"global_pool", BoolText(global)},
                 {"kernel", Shape(kernel).ToString()},
                 {"layout", layout},
                 {"pad", Shape(pad).ToString()},
                 {"pool_type", type == PoolType::kMax ? "max" : "avg"},
                 {"pooling_convention", global || o.ceil_mode ? "full" : "valid"},
                 {"stride", Shape(stride).ToString()}};
  if (type == PoolType::kAvg && !global) {
    attrs["count_include_pad"] = BoolText(o.count_include_pad);
  }
  attrs_ = MakeNodeAttrs("Pooling", "fwd", attrs);
}

NDArray PoolingBase::Forward(const NDArray& x) { return Invoke(attrs_, {x})[0]; }

std::string PoolingBase::Describe() {
  const AttrDict& d = attrs_.dict;
  return class_name_ + "(size=" + d.at("kernel") + ", stride=" + d.at("stride") +
         ", padding=" + d.at("pad") +
         ", ceil_mode=" + BoolText(d.at("pooling_convention") == "full") +
         ", global_pool=" + d.at("global_pool") + ", pool_type=" + d.at("pool_type") +
         ", layout=" + d.at("layout") + ")";
}

// ---------------------------------------------------------------------------------------------
// BatchNorm

BatchNorm::BatchNorm(const BatchNormOptions& o, std::optional<std::string> prefix)
    : HybridBlock("batchnorm", std::move(prefix)) {
  HN_CHECK(o.in_channels >= 0, kInvalidArgument)
      << "BatchNorm: in_channels must be >= 0, got " << o.in_channels;
  const Shape shape({o.in_channels});
  gamma_ = AddParameter("gamma", shape, o.gamma_initializer, DType::kFloat32, o.scale);
  beta_ = AddParameter("beta", shape, o.beta_initializer, DType::kFloat32, o.center);
  running_mean_ = AddParameter("running_mean", shape, o.running_mean_initializer, DType::kFloat32,
                               /*differentiable=*/false);
  running_var_ = AddParameter("running_var", shape, o.running_variance_initializer, DType::kFloat32,
                              /*differentiable=*/false);
  attrs_ = MakeNodeAttrs("BatchNorm", "fwd",
                         {{"axis", std::to_string(o.axis)},
                          {"eps", hybridnet::internal::ValueText(o.epsilon)},
                          {"fix_gamma", BoolText(!o.scale)},
                          {"momentum", hybridnet::internal::ValueText(o.momentum)},
                          {"use_global_stats", BoolText(o.use_global_stats)}});
}

NDArray BatchNorm::Forward(const NDArray& x) {
  return Invoke(attrs_, {x, gamma_->Value(), beta_->Value(), running_mean_->Value(),
                         running_var_->Value()})[0];
}

std::string BatchNorm::Describe() {
  const AttrDict& d = attrs_.dict;
  const int64_t c = gamma_->shape()[0];
  return "BatchNorm(axis=" + d.at("axis") + ", eps=" + d.at("eps") +
         ", momentum=" + d.at("momentum") + ", fix_gamma=" + d.at("fix_gamma") +
         ", use_global_stats=" + d.at("use_global_stats") +
         ", in_channels=" + (c > 0 ? std::to_string(c) : std::string("None")) + ")";
}

// ---------------------------------------------------------------------------------------------
// LeakyReLU family

LeakyReLU::LeakyReLU(const LeakyReLUOptions& o, std::optional<std::string> prefix)
    : HybridBlock("leakyrelu", std::move(prefix)), alpha_(o.alpha) {
  HN_CHECK(alpha_ >= 0, kInvalidArgument) << "LeakyReLU: slope coefficient for LeakyReLU must "
                                          << "be no less than 0, got " << alpha_;
  attrs_ =
      MakeNodeAttrs("LeakyReLU", "fwd",
                    {{"act_type", "leaky"}, {"slope", hybridnet::internal::ValueText(alpha_)}});
}

LeakyReLU::LeakyReLU(double alpha, std::optional<std::string> prefix)
    : LeakyReLU(LeakyReLUOptions().set_alpha(alpha), std::move(prefix)) {}

NDArray LeakyReLU::Forward(const NDArray& x) { return Invoke(attrs_, {x})[0]; }

std::string LeakyReLU::Describe() {
  return "LeakyReLU(" + hybridnet::internal::ValueText(alpha_) + ")";
}

PReLU::PReLU(const PReLUOptions& o, std::optional<std::string> prefix)
    : HybridBlock("prelu", std::move(prefix)) {
  HN_CHECK(o.in_channels >= 1, kInvalidArgument)
      << "PReLU: in_channels must be >= 1, got " << o.in_channels;
  alpha_ = AddParameter("alpha", Shape({o.in_channels}), o.alpha_initializer);
  attrs_ = MakeNodeAttrs("LeakyReLU", "fwd", {{"act_type", "prelu"}});
}

PReLU::PReLU(InitializerPtr alpha_initializer, int64_t in_channels,
             std::optional<std::string> prefix)
    : PReLU(PReLUOptions()
                .set_alpha_initializer(std::move(alpha_initializer))
                .set_in_channels(in_channels),
            std::move(prefix)) {}

NDArray PReLU::Forward(const NDArray& x) { return Invoke(attrs_, {x, alpha_->Value()})[0]; }

ELU::ELU(const ELUOptions& o, std::optional<std::string> prefix)
    : HybridBlock("elu", std::move(prefix)),
      attrs_(MakeNodeAttrs(
          "LeakyReLU", "",
          {{"act_type", "elu"}, {"slope", hybridnet::internal::ValueText(o.alpha)}})) {}

ELU::ELU(double alpha, std::optional<std::string> prefix)
    : ELU(ELUOptions().set_alpha(alpha), std::move(prefix)) {}

NDArray ELU::Forward(const NDArray& x) { return Invoke(attrs_, {x})[0]; }

SELU::SELU(std::optional<std::string> prefix)
    : HybridBlock("selu", std::move(prefix)),
      attrs_(MakeNodeAttrs("LeakyReLU", "fwd", {{"act_type", "selu"}})) {}

NDArray SELU::Forward(const NDArray& x) { return Invoke(attrs_, {x})[0]; }

GELU::GELU(std::optional<std::string> prefix)
    : HybridBlock("gelu", std::move(prefix)),
      attrs_(MakeNodeAttrs("LeakyReLU", "fwd", {{"act_type", "gelu"}})) {}

NDArray GELU::Forward(const NDArray& x) { return Invoke(attrs_, {x})[0]; }

// ---------------------------------------------------------------------------------------------
// Containers

HybridConcurrent::HybridConcurrent(const ConcurrentOptions& o, std::optional<std::string> prefix)
    : SequentialOf("hybridconcurrent", "HybridConcurrent", std::move(prefix)), axis_(o.axis) {}

HybridConcurrent::HybridConcurrent(int axis, std::optional<std::string> prefix)
    : HybridConcurrent(ConcurrentOptions().set_axis(axis), std::move(prefix)) {}

std::vector<NDArray> HybridConcurrent::ForwardMany(const std::vector<NDArray>& inputs) {
  HN_CHECK(inputs.size() == 1, kInvalidArgument)
      << name() << ": HybridConcurrent takes one input, got " << inputs.size();
  HN_CHECK(!children_.empty(), kInvalidArgument) << name() << ": HybridConcurrent has no children";
  std::vector<NDArray> parts;
  for (auto& child : children_) parts.push_back((*child.second)(inputs[0]));
  NodeAttrs attrs =
      MakeNodeAttrs("Concat", concat_name_,
                    {{"dim", std::to_string(axis_)}, {"num_args", std::to_string(parts.size())}});
  return Invoke(attrs, parts);
}

Concurrent::Concurrent(const ConcurrentOptions& o, std::optional<std::string> prefix)
    : SequentialOf("concurrent", "Concurrent", std::move(prefix)), axis_(o.axis) {}

Concurrent::Concurrent(int axis, std::optional<std::string> prefix)
    : Concurrent(ConcurrentOptions().set_axis(axis), std::move(prefix)) {}

std::vector<NDArray> Concurrent::ForwardMany(const std::vector<NDArray>& inputs) {
  HN_CHECK(inputs.size() == 1, kInvalidArgument)
      << name() << ": Concurrent takes one input, got " << inputs.size();
  HN_CHECK(!children_.empty(), kInvalidArgument) << name() << ": Concurrent has no children";
  std::vector<NDArray> parts;
  for (auto& child : children_) parts.push_back((*child.second)(inputs[0]));
  return {op::Concat(parts, axis_)};
}

Identity::Identity(std::optional<std::string> prefix)
    : HybridBlock("identity", std::move(prefix)) {}

NDArray Identity::Forward(const NDArray& x) { return x; }

}  // namespace gluon
}  // namespace hybridnet
