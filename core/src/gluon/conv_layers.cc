#include "hybridnet/gluon/conv_layers.h"

#include "hybridnet/imperative.h"
#include "hybridnet/operators.h"
#include "hybridnet/param.h"

namespace hybridnet {
namespace gluon {

namespace {

std::string BoolText(bool b) { return b ? "True" : "False"; }
std::string TupleText(const std::vector<int64_t>& v) { return Shape(v).ToString(); }

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
      << what << " must be an int or a tuple of " << rank << " ints, got " << TupleText(values_);
  return values_;
}

// ---------------------------------------------------------------------------------------------
// Convolutions

ConvBase::ConvBase(const Spec& s, std::optional<std::string> prefix)
    : HybridBlock("conv", std::move(prefix)),
      class_name_(s.class_name),
      transpose_(std::string(s.op_name) == "Deconvolution"),
      groups_(s.groups),
      activation_(s.activation) {
  HN_CHECK(s.channels >= 1, kInvalidArgument)
      << s.class_name << ": channels must be >= 1, got " << s.channels;
  HN_CHECK(s.groups >= 1, kInvalidArgument)
      << s.class_name << ": groups must be >= 1, got " << s.groups;
  HN_CHECK(s.in_channels >= 0, kInvalidArgument)
      << s.class_name << ": in_channels must be >= 0, got " << s.in_channels;
  HN_CHECK(s.layout.size() == s.rank + 2, kInvalidArgument)
      << s.class_name << ": layout '" << s.layout << "' does not describe " << s.rank
      << "-D data (use " << DefaultLayout(s.rank) << ")";
  kernel_ = s.kernel_size.Expand(s.rank, "kernel_size");
  stride_ = s.strides.Expand(s.rank, "strides");
  pad_ = s.padding.Expand(s.rank, "padding");
  dilate_ = s.dilation.Expand(s.rank, "dilation");
  if (transpose_) adj_ = s.output_padding.Expand(s.rank, "output_padding");

  // MXNet's _infer_weight_shape with data (1, in_channels, 0, ...): unknown dims stay 0.
  std::vector<int64_t> wshape;
  if (transpose_) {
    wshape = {s.in_channels, s.channels / s.groups};
  } else {
    wshape = {s.channels, s.in_channels / s.groups};
  }
  wshape.insert(wshape.end(), kernel_.begin(), kernel_.end());
  weight_ = AddParameter("weight", Shape(wshape), s.weight_initializer);
  if (s.use_bias) bias_ = AddParameter("bias", Shape({s.channels}), s.bias_initializer);

  AttrDict attrs{{"dilate", TupleText(dilate_)},
                 {"kernel", TupleText(kernel_)},
                 {"layout", s.layout},
                 {"no_bias", BoolText(!s.use_bias)},
                 {"num_filter", std::to_string(s.channels)},
                 {"num_group", std::to_string(s.groups)},
                 {"pad", TupleText(pad_)},
                 {"stride", TupleText(stride_)}};
  if (transpose_) attrs["adj"] = TupleText(adj_);
  attrs_ = MakeNodeAttrs(s.op_name, "fwd", attrs);
  if (!s.activation.empty()) {
    RegisterChild(std::make_shared<Activation>(s.activation, s.activation + "_"), "act");
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
                  std::to_string(out) + ", kernel_size=" + TupleText(kernel_) +
                  ", stride=" + TupleText(stride_);
  if (!AllEqual(pad_, 0)) s += ", padding=" + TupleText(pad_);
  if (!AllEqual(dilate_, 1)) s += ", dilation=" + TupleText(dilate_);
  if (transpose_ && !AllEqual(adj_, 0)) s += ", output_padding=" + TupleText(adj_);
  if (groups_ != 1) s += ", groups=" + std::to_string(groups_);
  if (!bias_) s += ", bias=False";
  if (!activation_.empty()) s += ", Activation(" + activation_ + ")";
  return s + ")";
}

std::string ConvBase::ToString() { return Describe(); }

#define HN_CONV_CTOR(Class, Rank)                                                               \
  Class::Class(int64_t channels, IntTuple kernel_size, IntTuple strides, IntTuple padding,      \
               IntTuple dilation, int64_t groups, const std::string& layout,                    \
               const std::string& activation, bool use_bias, InitializerPtr weight_initializer, \
               InitializerPtr bias_initializer, int64_t in_channels,                            \
               std::optional<std::string> prefix)                                               \
      : ConvBase(Spec{#Class, "Convolution", Rank, channels, std::move(kernel_size),            \
                      std::move(strides), std::move(padding), IntTuple(), std::move(dilation),  \
                      groups, layout, activation, use_bias, std::move(weight_initializer),      \
                      std::move(bias_initializer), in_channels},                                \
                 std::move(prefix)) {}

HN_CONV_CTOR(Conv1D, 1)
HN_CONV_CTOR(Conv2D, 2)
HN_CONV_CTOR(Conv3D, 3)
#undef HN_CONV_CTOR

#define HN_CONV_TRANSPOSE_CTOR(Class, Rank)                                                     \
  Class::Class(int64_t channels, IntTuple kernel_size, IntTuple strides, IntTuple padding,      \
               IntTuple output_padding, IntTuple dilation, int64_t groups,                      \
               const std::string& layout, const std::string& activation, bool use_bias,         \
               InitializerPtr weight_initializer, InitializerPtr bias_initializer,              \
               int64_t in_channels, std::optional<std::string> prefix)                          \
      : ConvBase(Spec{#Class, "Deconvolution", Rank, channels, std::move(kernel_size),          \
                      std::move(strides), std::move(padding), std::move(output_padding),        \
                      std::move(dilation), groups, layout, activation, use_bias,                \
                      std::move(weight_initializer), std::move(bias_initializer), in_channels}, \
                 std::move(prefix)) {}

HN_CONV_TRANSPOSE_CTOR(Conv1DTranspose, 1)
HN_CONV_TRANSPOSE_CTOR(Conv2DTranspose, 2)
HN_CONV_TRANSPOSE_CTOR(Conv3DTranspose, 3)
#undef HN_CONV_TRANSPOSE_CTOR

// ---------------------------------------------------------------------------------------------
// Pooling

PoolingBase::PoolingBase(const Spec& s, std::optional<std::string> prefix)
    : HybridBlock("pool", std::move(prefix)), class_name_(s.class_name) {
  HN_CHECK(s.layout.size() == s.rank + 2, kInvalidArgument)
      << s.class_name << ": layout '" << s.layout << "' does not describe " << s.rank
      << "-D data (use " << DefaultLayout(s.rank) << ")";
  std::vector<int64_t> kernel = s.pool_size.Expand(s.rank, "pool_size");
  std::vector<int64_t> stride = s.strides.empty() ? kernel : s.strides.Expand(s.rank, "strides");
  std::vector<int64_t> pad = s.padding.Expand(s.rank, "padding");
  AttrDict attrs{{"global_pool", BoolText(s.global_pool)},
                 {"kernel", TupleText(kernel)},
                 {"layout", s.layout},
                 {"pad", TupleText(pad)},
                 {"pool_type", s.pool_type},
                 {"pooling_convention", s.ceil_mode ? "full" : "valid"},
                 {"stride", TupleText(stride)}};
  if (s.count_include_pad) attrs["count_include_pad"] = BoolText(*s.count_include_pad);
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

#define HN_MAXPOOL_CTOR(Class, Rank)                                                              \
  Class::Class(IntTuple pool_size, IntTuple strides, IntTuple padding, const std::string& layout, \
               bool ceil_mode, std::optional<std::string> prefix)                                 \
      : PoolingBase(Spec{#Class, Rank, std::move(pool_size), std::move(strides),                  \
                         std::move(padding), ceil_mode, false, "max", layout, std::nullopt},      \
                    std::move(prefix)) {}
HN_MAXPOOL_CTOR(MaxPool1D, 1)
HN_MAXPOOL_CTOR(MaxPool2D, 2)
HN_MAXPOOL_CTOR(MaxPool3D, 3)
#undef HN_MAXPOOL_CTOR

#define HN_AVGPOOL_CTOR(Class, Rank)                                                              \
  Class::Class(IntTuple pool_size, IntTuple strides, IntTuple padding, bool ceil_mode,            \
               const std::string& layout, bool count_include_pad,                                 \
               std::optional<std::string> prefix)                                                 \
      : PoolingBase(Spec{#Class, Rank, std::move(pool_size), std::move(strides),                  \
                         std::move(padding), ceil_mode, false, "avg", layout, count_include_pad}, \
                    std::move(prefix)) {}
HN_AVGPOOL_CTOR(AvgPool1D, 1)
HN_AVGPOOL_CTOR(AvgPool2D, 2)
HN_AVGPOOL_CTOR(AvgPool3D, 3)
#undef HN_AVGPOOL_CTOR

// Global pooling: kernel 1, stride 1, pad 0, global_pool True, pooling_convention full.
#define HN_GLOBALPOOL_CTOR(Class, Rank, Type)                                                  \
  Class::Class(const std::string& layout, std::optional<std::string> prefix)                   \
      : PoolingBase(Spec{#Class, Rank, IntTuple(1), IntTuple(), IntTuple(0), true, true, Type, \
                         layout, std::nullopt},                                                \
                    std::move(prefix)) {}
HN_GLOBALPOOL_CTOR(GlobalMaxPool1D, 1, "max")
HN_GLOBALPOOL_CTOR(GlobalMaxPool2D, 2, "max")
HN_GLOBALPOOL_CTOR(GlobalMaxPool3D, 3, "max")
HN_GLOBALPOOL_CTOR(GlobalAvgPool1D, 1, "avg")
HN_GLOBALPOOL_CTOR(GlobalAvgPool2D, 2, "avg")
HN_GLOBALPOOL_CTOR(GlobalAvgPool3D, 3, "avg")
#undef HN_GLOBALPOOL_CTOR

// ---------------------------------------------------------------------------------------------
// BatchNorm

BatchNorm::BatchNorm(int axis,
                     double momentum,
                     double epsilon,
                     bool center,
                     bool scale,
                     bool use_global_stats,
                     InitializerPtr beta_initializer,
                     InitializerPtr gamma_initializer,
                     InitializerPtr running_mean_initializer,
                     InitializerPtr running_variance_initializer,
                     int64_t in_channels,
                     std::optional<std::string> prefix)
    : HybridBlock("batchnorm", std::move(prefix)) {
  HN_CHECK(in_channels >= 0, kInvalidArgument)
      << "BatchNorm: in_channels must be >= 0, got " << in_channels;
  const Shape shape({in_channels});
  gamma_ = AddParameter("gamma", shape, std::move(gamma_initializer), DType::kFloat32, scale);
  beta_ = AddParameter("beta", shape, std::move(beta_initializer), DType::kFloat32, center);
  running_mean_ = AddParameter("running_mean", shape, std::move(running_mean_initializer),
                               DType::kFloat32, /*differentiable=*/false);
  running_var_ = AddParameter("running_var", shape, std::move(running_variance_initializer),
                              DType::kFloat32, /*differentiable=*/false);
  attrs_ = MakeNodeAttrs("BatchNorm", "fwd",
                         {{"axis", std::to_string(axis)},
                          {"eps", hybridnet::internal::ValueText(epsilon)},
                          {"fix_gamma", BoolText(!scale)},
                          {"momentum", hybridnet::internal::ValueText(momentum)},
                          {"use_global_stats", BoolText(use_global_stats)}});
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

LeakyReLU::LeakyReLU(double alpha, std::optional<std::string> prefix)
    : HybridBlock("leakyrelu", std::move(prefix)), alpha_(alpha) {
  HN_CHECK(alpha >= 0, kInvalidArgument) << "LeakyReLU: slope coefficient for LeakyReLU must "
                                         << "be no less than 0, got " << alpha;
  attrs_ = MakeNodeAttrs("LeakyReLU", "fwd",
                         {{"act_type", "leaky"}, {"slope", hybridnet::internal::ValueText(alpha)}});
}

NDArray LeakyReLU::Forward(const NDArray& x) { return Invoke(attrs_, {x})[0]; }

std::string LeakyReLU::Describe() {
  return "LeakyReLU(" + hybridnet::internal::ValueText(alpha_) + ")";
}

PReLU::PReLU(InitializerPtr alpha_initializer,
             int64_t in_channels,
             std::optional<std::string> prefix)
    : HybridBlock("prelu", std::move(prefix)) {
  HN_CHECK(in_channels >= 1, kInvalidArgument)
      << "PReLU: in_channels must be >= 1, got " << in_channels;
  alpha_ = AddParameter("alpha", Shape({in_channels}), std::move(alpha_initializer));
  attrs_ = MakeNodeAttrs("LeakyReLU", "fwd", {{"act_type", "prelu"}});
}

NDArray PReLU::Forward(const NDArray& x) { return Invoke(attrs_, {x, alpha_->Value()})[0]; }

ELU::ELU(double alpha, std::optional<std::string> prefix)
    : HybridBlock("elu", std::move(prefix)),
      attrs_(
          MakeNodeAttrs("LeakyReLU",
                        "",
                        {{"act_type", "elu"}, {"slope", hybridnet::internal::ValueText(alpha)}})) {}

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

HybridConcurrent::HybridConcurrent(int axis, std::optional<std::string> prefix)
    : SequentialOf("hybridconcurrent", "HybridConcurrent", std::move(prefix)), axis_(axis) {}

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

Concurrent::Concurrent(int axis, std::optional<std::string> prefix)
    : SequentialOf("concurrent", "Concurrent", std::move(prefix)), axis_(axis) {}

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
