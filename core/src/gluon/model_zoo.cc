// The vision model zoo, block for block as MXNet 1.9.1 builds it.
//
// Naming. MXNet names a block from the scope it is *created* in: a block with a non-empty
// prefix opens a scope with its own counters, a block created with prefix '' opens none (its
// children count in the enclosing scope). Op nodes without an explicit name are counted by the
// name manager of the innermost non-empty-prefix block whose forward is running. The C++ tree
// names a child "parent prefix + local prefix", so every zoo block here is given its local prefix
// explicitly from a Scope that replays MXNet's counters, and ops emitted by prefix-'' blocks
// (residual additions, concatenations) get their names from the same Scope.
#include "hybridnet/gluon/model_zoo.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>

#include "hybridnet/gluon/conv_layers.h"
#include "hybridnet/gluon/nn.h"
#include "hybridnet/imperative.h"

namespace hybridnet {
namespace gluon {
namespace model_zoo {

namespace {

// One MXNet naming scope: block counters (_BlockScope) and op counters (NameManager).
class Scope {
 public:
  /// Local prefix of the next block with this alias: "conv3_".
  std::string Block(const std::string& alias) {
    return alias + std::to_string(blocks_[alias]++) + "_";
  }
  /// Name of the next op with this hint: "_plus0".
  std::string Op(const std::string& hint) { return hint + std::to_string(ops_[hint]++); }

 private:
  std::map<std::string, int> blocks_, ops_;
};

using BlockPtr = std::shared_ptr<Block>;
using SeqPtr = std::shared_ptr<HybridSequential>;

SeqPtr Seq(std::string prefix = "") {
  return std::make_shared<HybridSequential>(std::move(prefix));
}

// An initializer whose "__init__" text is given (MXNet writes initializers passed by name, e.g.
// 'normal', as that name, and Xavier(magnitude=2) with an integer magnitude).
class NamedInit : public Initializer {
 public:
  NamedInit(InitializerPtr base, std::string dumps)
      : base_(std::move(base)), dumps_(std::move(dumps)) {}
  void Fill(const std::string& name, NDArray* array) const override { base_->Fill(name, array); }
  void InitWeight(const std::string& name, NDArray* array) const override {
    base_->InitWeight(name, array);
  }
  std::string Dumps() const override { return dumps_; }

 private:
  InitializerPtr base_;
  std::string dumps_;
};

// Adds blocks in order. A braced list is evaluated left to right (function arguments are not),
// which matters because creating a block takes the next name from its scope.
void Append(SequentialOf<HybridBlock>* seq, std::initializer_list<BlockPtr> blocks) {
  for (const auto& b : blocks) seq->Add(b);
}

// MXNet's Conv2D(channels, kernel_size, strides, padding): the zoo's usual arguments; chain the
// others (use_bias, groups, ...) on the result.
ConvOptions ConvArgs(int64_t channels, IntTuple kernel, IntTuple strides = 1,
                     IntTuple padding = 0) {
  return ConvOptions()
      .set_channels(channels)
      .set_kernel_size(std::move(kernel))
      .set_strides(std::move(strides))
      .set_padding(std::move(padding));
}

std::shared_ptr<Conv2D> Conv(Scope& s, const ConvOptions& options) {
  return std::make_shared<Conv2D>(options, s.Block("conv"));
}

// MaxPool2D / AvgPool2D(pool_size, strides, padding) named in the zoo's scope.
template <typename Pool>
std::shared_ptr<Pool> ZooPool(Scope& s, IntTuple size, IntTuple strides, IntTuple padding = 0,
                              bool ceil_mode = false) {
  return std::make_shared<Pool>(PoolOptions()
                                    .set_pool_size(std::move(size))
                                    .set_strides(std::move(strides))
                                    .set_padding(std::move(padding))
                                    .set_ceil_mode(ceil_mode),
                                s.Block("pool"));
}

std::shared_ptr<gluon::BatchNorm> BN(Scope& s, double epsilon = 1e-5, bool center = true,
                                     bool scale = true) {
  return std::make_shared<gluon::BatchNorm>(
      BatchNormOptions().set_epsilon(epsilon).set_center(center).set_scale(scale),
      s.Block("batchnorm"));
}

std::shared_ptr<Dense> ZooDense(Scope& s, DenseOptions options) {
  return std::make_shared<Dense>(options, s.Block("dense"));
}

std::shared_ptr<Activation> Relu(Scope& s) {
  return std::make_shared<Activation>("relu", s.Block("relu"));
}

// The networks: features, then output (MXNet's attribute names, hence structural names).
class ZooNet : public HybridBlock {
 public:
  ZooNet(std::string alias, std::string class_name)
      : HybridBlock(std::move(alias)), class_name_(std::move(class_name)) {}
  void SetParts(BlockPtr features, BlockPtr output) {
    features_ = RegisterChild(std::move(features), "features");
    output_ = RegisterChild(std::move(output), "output");
  }
  NDArray Forward(const NDArray& x) override { return (*output_)((*features_)(x)); }

 protected:
  std::string Describe() override { return class_name_; }

 private:
  std::string class_name_;
  BlockPtr features_, output_;
};

// A block with prefix '' whose forward emits ops named in the enclosing scope.
class ScopedBlock : public HybridBlock {
 public:
  ScopedBlock(std::string alias, std::string class_name)
      : HybridBlock(std::move(alias), std::string()), class_name_(std::move(class_name)) {}

 protected:
  std::string Describe() override { return class_name_; }
  static NodeAttrs Relu(Scope& s) {
    return MakeNodeAttrs("Activation", s.Op("activation"), {{"act_type", "relu"}});
  }
  static NodeAttrs Plus(Scope& s) { return MakeNodeAttrs("elemwise_add", s.Op("_plus"), {}); }

 private:
  std::string class_name_;
};

// HybridConcurrent whose Concat takes its name from the enclosing scope.
class ZooConcurrent : public HybridConcurrent {
 public:
  ZooConcurrent(std::string prefix, std::string concat_name)
      : HybridConcurrent(1, std::move(prefix)) {
    concat_name_ = std::move(concat_name);
  }
};

// ---------------------------------------------------------------------------------------------
// ResNet (MXNet model_zoo/vision/resnet.py)

std::shared_ptr<Conv2D> Conv3x3(Scope& s, int64_t channels, int64_t stride, int64_t in_channels) {
  return Conv(s, ConvArgs(channels, 3, stride, 1).set_use_bias(false).set_in_channels(in_channels));
}

class BasicBlockV1 : public ScopedBlock {
 public:
  BasicBlockV1(Scope& s, int64_t channels, int64_t stride, bool downsample, int64_t in_channels,
               bool bottleneck)
      : ScopedBlock("basicblockv1", bottleneck ? "BottleneckV1" : "BasicBlockV1"),
        bottleneck_(bottleneck) {
    auto body = Seq();
    if (!bottleneck) {
      Append(body.get(), {Conv3x3(s, channels, stride, in_channels), BN(s),
                          gluon::model_zoo::Relu(s), Conv3x3(s, channels, 1, channels), BN(s)});
    } else {
      Append(body.get(),
             {Conv(s, ConvArgs(channels / 4, 1, stride)), BN(s), gluon::model_zoo::Relu(s),
              Conv3x3(s, channels / 4, 1, channels / 4), BN(s), gluon::model_zoo::Relu(s),
              Conv(s, ConvArgs(channels, 1, 1)), BN(s)});
    }
    body_ = RegisterChild(body, "body");
    if (downsample) {
      auto ds = Seq();
      Append(
          ds.get(),
          {Conv(s, ConvArgs(channels, 1, stride).set_use_bias(false).set_in_channels(in_channels)),
           BN(s)});
      downsample_ = RegisterChild(ds, "downsample");
    }
    plus_ = Plus(s);
    relu_ = ScopedBlock::Relu(s);
  }
  NDArray Forward(const NDArray& x) override {
    NDArray residual = x;
    NDArray y = (*body_)(x);
    if (downsample_) residual = (*downsample_)(residual);
    // BasicBlockV1 adds residual + x, BottleneckV1 x + residual.
    NDArray sum = bottleneck_ ? Invoke(plus_, {y, residual})[0] : Invoke(plus_, {residual, y})[0];
    return Invoke(relu_, {sum})[0];
  }

 private:
  bool bottleneck_;
  BlockPtr body_, downsample_;
  NodeAttrs plus_, relu_;
};

class BasicBlockV2 : public ScopedBlock {
 public:
  BasicBlockV2(Scope& s, int64_t channels, int64_t stride, bool downsample, int64_t in_channels,
               bool bottleneck)
      : ScopedBlock("basicblockv2", bottleneck ? "BottleneckV2" : "BasicBlockV2") {
    if (!bottleneck) {
      bn_.push_back(RegisterChild(BN(s), "bn1"));
      conv_.push_back(RegisterChild(Conv3x3(s, channels, stride, in_channels), "conv1"));
      bn_.push_back(RegisterChild(BN(s), "bn2"));
      conv_.push_back(RegisterChild(Conv3x3(s, channels, 1, channels), "conv2"));
    } else {
      bn_.push_back(RegisterChild(BN(s), "bn1"));
      conv_.push_back(
          RegisterChild(Conv(s, ConvArgs(channels / 4, 1).set_use_bias(false)), "conv1"));
      bn_.push_back(RegisterChild(BN(s), "bn2"));
      conv_.push_back(RegisterChild(Conv3x3(s, channels / 4, stride, channels / 4), "conv2"));
      bn_.push_back(RegisterChild(BN(s), "bn3"));
      conv_.push_back(RegisterChild(Conv(s, ConvArgs(channels, 1).set_use_bias(false)), "conv3"));
    }
    if (downsample) {
      downsample_ = RegisterChild(
          Conv(s, ConvArgs(channels, 1, stride).set_use_bias(false).set_in_channels(in_channels)),
          "downsample");
    }
    // Forward order of the named ops: one relu per bn, then the addition.
    for (size_t i = 0; i < bn_.size(); ++i) relus_.push_back(ScopedBlock::Relu(s));
    plus_ = Plus(s);
  }
  NDArray Forward(const NDArray& x) override {
    NDArray residual = x;
    NDArray y = Invoke(relus_[0], {(*bn_[0])(x)})[0];
    if (downsample_) residual = (*downsample_)(y);
    y = (*conv_[0])(y);
    for (size_t i = 1; i < bn_.size(); ++i) {
      y = Invoke(relus_[i], {(*bn_[i])(y)})[0];
      y = (*conv_[i])(y);
    }
    return Invoke(plus_, {y, residual})[0];
  }

 private:
  std::vector<BlockPtr> bn_, conv_;
  BlockPtr downsample_;
  std::vector<NodeAttrs> relus_;
  NodeAttrs plus_;
};

struct ResNetSpec {
  bool bottleneck;
  std::vector<int> layers;
  std::vector<int64_t> channels;
};

ResNetSpec ResNetSpecFor(int num_layers) {
  switch (num_layers) {
    case 18:
      return {false, {2, 2, 2, 2}, {64, 64, 128, 256, 512}};
    case 34:
      return {false, {3, 4, 6, 3}, {64, 64, 128, 256, 512}};
    case 50:
      return {true, {3, 4, 6, 3}, {64, 256, 512, 1024, 2048}};
    case 101:
      return {true, {3, 4, 23, 3}, {64, 256, 512, 1024, 2048}};
    case 152:
      return {true, {3, 8, 36, 3}, {64, 256, 512, 1024, 2048}};
    default:
      HN_THROW(kInvalidArgument) << "resnet: num_layers must be 18, 34, 50, 101 or 152, got "
                                 << num_layers;
  }
}

SeqPtr ResNetStage(int version, const ResNetSpec& spec, size_t i, int64_t in_channels) {
  auto stage = Seq("stage" + std::to_string(i + 1) + "_");
  Scope s;
  const int64_t channels = spec.channels[i + 1];
  const int64_t stride = i == 0 ? 1 : 2;
  auto make = [&](int64_t st, bool ds, int64_t in) -> BlockPtr {
    if (version == 1)
      return std::make_shared<BasicBlockV1>(s, channels, st, ds, in, spec.bottleneck);
    return std::make_shared<BasicBlockV2>(s, channels, st, ds, in, spec.bottleneck);
  };
  Append(stage.get(), {make(stride, channels != in_channels, in_channels)});
  for (int k = 1; k < spec.layers[i]; ++k) Append(stage.get(), {make(1, false, channels)});
  return stage;
}

// ---------------------------------------------------------------------------------------------
// DenseNet (densenet.py)

BlockPtr DenseLayer(Scope& s, int64_t growth_rate, int64_t bn_size) {
  auto new_features = Seq();
  Append(new_features.get(),
         {BN(s), Relu(s), Conv(s, ConvArgs(bn_size * growth_rate, 1).set_use_bias(false)), BN(s),
          Relu(s), Conv(s, ConvArgs(growth_rate, 3, 1, 1).set_use_bias(false))});
  auto out = std::make_shared<ZooConcurrent>("", s.Op("concat"));
  Append(out.get(), {std::make_shared<Identity>(s.Block("identity")), new_features});
  return out;
}

// ---------------------------------------------------------------------------------------------
// SqueezeNet (squeezenet.py)

SeqPtr FireConv(Scope& s, int64_t channels, int64_t kernel, int64_t padding = 0) {
  auto out = Seq();
  Append(out.get(), {Conv(s, ConvArgs(channels, kernel, 1, padding)), Relu(s)});
  return out;
}

SeqPtr Fire(Scope& s, int64_t squeeze, int64_t expand1x1, int64_t expand3x3) {
  auto out = Seq();
  Append(out.get(), {FireConv(s, squeeze, 1)});
  auto paths = std::make_shared<ZooConcurrent>("", s.Op("concat"));
  Append(paths.get(), {FireConv(s, expand1x1, 1), FireConv(s, expand3x3, 3, 1)});
  Append(out.get(), {paths});
  return out;
}

std::shared_ptr<MaxPool2D> CeilMaxPool(Scope& s) {
  return ZooPool<MaxPool2D>(s, 3, 2, 0, /*ceil_mode=*/true);
}

// ---------------------------------------------------------------------------------------------
// Inception v3 (inception.py)

struct ConvSetting {
  int64_t channels;
  IntTuple kernel;
  IntTuple strides = 1;
  IntTuple padding = 0;
};

SeqPtr BasicConv(Scope& s, const ConvSetting& c) {
  auto out = Seq();
  Append(out.get(),
         {Conv(s, ConvArgs(c.channels, c.kernel, c.strides, c.padding).set_use_bias(false)),
          BN(s, 0.001), Relu(s)});
  return out;
}

SeqPtr Branch(Scope& s, const std::string& pool, const std::vector<ConvSetting>& convs) {
  auto out = Seq();
  if (pool == "avg") Append(out.get(), {ZooPool<AvgPool2D>(s, 3, 1, 1)});
  if (pool == "max") Append(out.get(), {ZooPool<MaxPool2D>(s, 3, 2)});
  for (const auto& c : convs) Append(out.get(), {BasicConv(s, c)});
  return out;
}

// A, B, C, D: one concatenation of branches in their own scope ("A1_" ...).
std::shared_ptr<ZooConcurrent> InceptionBlock(
    const std::string& prefix,
    const std::vector<std::pair<std::string, std::vector<ConvSetting>>>& branches) {
  Scope s;
  auto out = std::make_shared<ZooConcurrent>(prefix, s.Op("concat"));
  for (const auto& b : branches) Append(out.get(), {Branch(s, b.first, b.second)});
  return out;
}

std::shared_ptr<ZooConcurrent> InceptionE(const std::string& prefix) {
  Scope s;
  const ConvSetting c1x3{384, {1, 3}, 1, {0, 1}}, c3x1{384, {3, 1}, 1, {1, 0}};
  auto b0 = Branch(s, "", {{320, 1}});
  auto b1 = Seq();
  Append(b1.get(), {Branch(s, "", {{384, 1}})});
  auto split1 = std::make_shared<ZooConcurrent>("", s.Op("concat"));
  Append(split1.get(), {Branch(s, "", {c1x3}), Branch(s, "", {c3x1})});
  Append(b1.get(), {split1});
  auto b2 = Seq();
  Append(b2.get(), {Branch(s, "", {{448, 1}, {384, 3, 1, 1}})});
  auto split2 = std::make_shared<ZooConcurrent>("", s.Op("concat"));
  Append(split2.get(), {Branch(s, "", {c1x3}), Branch(s, "", {c3x1})});
  Append(b2.get(), {split2});
  auto b3 = Branch(s, "avg", {{192, 1}});
  auto out = std::make_shared<ZooConcurrent>(prefix, s.Op("concat"));
  Append(out.get(), {b0, b1, b2, b3});
  return out;
}

// ---------------------------------------------------------------------------------------------
// MobileNet v1 and v2 (mobilenet.py)

class Relu6 : public HybridBlock {
 public:
  explicit Relu6(std::string prefix)
      : HybridBlock("relu6", std::move(prefix)),
        attrs_(MakeNodeAttrs("clip", "relu6", {{"a_max", "6"}, {"a_min", "0"}})) {}
  NDArray Forward(const NDArray& x) override { return Invoke(attrs_, {x})[0]; }

 protected:
  std::string Describe() override { return "RELU6"; }

 private:
  NodeAttrs attrs_;
};

void AddConv(Scope& s, HybridSequential* out, int64_t channels, int64_t kernel = 1,
             int64_t stride = 1, int64_t pad = 0, int64_t num_group = 1, bool active = true,
             bool relu6 = false) {
  Append(
      out,
      {Conv(s, ConvArgs(channels, kernel, stride, pad).set_use_bias(false).set_groups(num_group)),
       BN(s)});
  if (!active) return;
  if (relu6) {
    Append(out, {std::make_shared<Relu6>(s.Block("relu6"))});
  } else {
    Append(out, {Relu(s)});
  }
}

class LinearBottleneck : public HybridBlock {
 public:
  LinearBottleneck(int64_t in_channels, int64_t channels, int64_t t, int64_t stride,
                   std::string prefix)
      : HybridBlock("linearbottleneck", std::move(prefix)),
        use_shortcut_(stride == 1 && in_channels == channels) {
    Scope s;
    // MXNet names this HybridSequential "hybridsequential0_", but it owns no parameter and
    // emits no op, so an empty prefix gives every name unchanged.
    auto out = Seq();
    AddConv(s, out.get(), in_channels * t, 1, 1, 0, 1, true, true);
    AddConv(s, out.get(), in_channels * t, 3, stride, 1, in_channels * t, true, true);
    AddConv(s, out.get(), channels, 1, 1, 0, 1, false, true);
    out_ = RegisterChild(out, "out");
    add_ = MakeNodeAttrs("elemwise_add", s.Op("elemwise_add"), {});
  }
  NDArray Forward(const NDArray& x) override {
    NDArray y = (*out_)(x);
    if (use_shortcut_) y = Invoke(add_, {y, x})[0];
    return y;
  }

 protected:
  std::string Describe() override { return "LinearBottleneck"; }

 private:
  bool use_shortcut_;
  BlockPtr out_;
  NodeAttrs add_;
};

std::vector<int64_t> Scaled(const std::vector<std::pair<int64_t, int>>& runs, double m) {
  std::vector<int64_t> out;
  for (const auto& r : runs)
    for (int i = 0; i < r.second; ++i)
      out.push_back(static_cast<int64_t>(static_cast<double>(r.first) * m));
  return out;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Constructors

std::shared_ptr<HybridBlock> AlexNet(int64_t classes) {
  auto net = std::make_shared<ZooNet>("alexnet", "AlexNet");
  Scope s;
  auto features = Seq();
  Append(features.get(),
         {Conv(s, ConvArgs(64, 11, 4, 2).set_activation("relu")), ZooPool<MaxPool2D>(s, 3, 2),
          Conv(s, ConvArgs(192, 5, 1, 2).set_activation("relu")), ZooPool<MaxPool2D>(s, 3, 2),
          Conv(s, ConvArgs(384, 3, 1, 1).set_activation("relu")),
          Conv(s, ConvArgs(256, 3, 1, 1).set_activation("relu")),
          Conv(s, ConvArgs(256, 3, 1, 1).set_activation("relu")), ZooPool<MaxPool2D>(s, 3, 2),
          std::make_shared<Flatten>(s.Block("flatten")),
          std::make_shared<Dense>(4096, "relu", s.Block("dense")),
          std::make_shared<Dropout>(0.5f, s.Block("dropout")),
          std::make_shared<Dense>(4096, "relu", s.Block("dense")),
          std::make_shared<Dropout>(0.5f, s.Block("dropout"))});
  net->SetParts(features, std::make_shared<Dense>(classes, "", s.Block("dense")));
  return net;
}

std::shared_ptr<HybridBlock> VGG(int num_layers, bool batch_norm, int64_t classes) {
  std::vector<int> layers;
  switch (num_layers) {
    case 11:
      layers = {1, 1, 2, 2, 2};
      break;
    case 13:
      layers = {2, 2, 2, 2, 2};
      break;
    case 16:
      layers = {2, 2, 3, 3, 3};
      break;
    case 19:
      layers = {2, 2, 4, 4, 4};
      break;
    default:
      HN_THROW(kInvalidArgument) << "vgg: num_layers must be 11, 13, 16 or 19, got " << num_layers;
  }
  const std::vector<int64_t> filters{64, 128, 256, 512, 512};
  auto conv_init = std::make_shared<NamedInit>(
      Xavier("gaussian", "out", 2.f),
      "[\"xavier\", {\"rnd_type\": \"gaussian\", \"factor_type\": \"out\", \"magnitude\": 2}]");
  auto dense_init = std::make_shared<NamedInit>(Normal(0.01f), "normal");
  auto net = std::make_shared<ZooNet>("vgg", "VGG");
  Scope s;
  auto features = Seq();
  for (size_t i = 0; i < layers.size(); ++i) {
    for (int k = 0; k < layers[i]; ++k) {
      Append(features.get(),
             {Conv(s, ConvArgs(filters[i], 3, 1, 1).set_weight_initializer(conv_init))});
      if (batch_norm) Append(features.get(), {BN(s)});
      Append(features.get(), {Relu(s)});
    }
    Append(features.get(), {ZooPool<MaxPool2D>(s, 2, 2)});
  }
  for (int k = 0; k < 2; ++k) {
    Append(
        features.get(),
        {ZooDense(s, DenseOptions().set_units(4096).set_activation("relu").set_weight_initializer(
                         dense_init)),
         std::make_shared<Dropout>(0.5f, s.Block("dropout"))});
  }
  net->SetParts(features,
                ZooDense(s, DenseOptions().set_units(classes).set_weight_initializer(dense_init)));
  return net;
}

std::shared_ptr<HybridBlock> ResNet(int version, int num_layers, int64_t classes, bool thumbnail) {
  HN_CHECK(version == 1 || version == 2, kInvalidArgument)
      << "resnet: version must be 1 or 2, got " << version;
  const ResNetSpec spec = ResNetSpecFor(num_layers);
  auto net = std::make_shared<ZooNet>(version == 1 ? "resnetv1" : "resnetv2",
                                      version == 1 ? "ResNetV1" : "ResNetV2");
  Scope s;
  auto features = Seq();
  if (version == 2) Append(features.get(), {BN(s, 1e-5, false, false)});
  if (thumbnail) {
    Append(features.get(), {Conv3x3(s, spec.channels[0], 1, 0)});
  } else {
    Append(features.get(), {Conv(s, ConvArgs(spec.channels[0], 7, 2, 3).set_use_bias(false)), BN(s),
                            Relu(s), ZooPool<MaxPool2D>(s, 3, 2, 1)});
  }
  int64_t in_channels = spec.channels[0];
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    // v1 passes channels[i] as the stage input; v2 tracks the running channel count (equal).
    Append(features.get(),
           {ResNetStage(version, spec, i, version == 1 ? spec.channels[i] : in_channels)});
    in_channels = spec.channels[i + 1];
  }
  if (version == 2) Append(features.get(), {BN(s), Relu(s)});
  Append(features.get(), {std::make_shared<GlobalAvgPool2D>("NCHW", s.Block("pool"))});
  if (version == 2) Append(features.get(), {std::make_shared<Flatten>(s.Block("flatten"))});
  net->SetParts(features, ZooDense(s, DenseOptions().set_units(classes).set_in_units(in_channels)));
  return net;
}

std::shared_ptr<HybridBlock> DenseNet(int num_layers, int64_t classes) {
  int64_t num_init_features = 64, growth_rate = 32;
  std::vector<int> block_config;
  switch (num_layers) {
    case 121:
      block_config = {6, 12, 24, 16};
      break;
    case 161:
      num_init_features = 96;
      growth_rate = 48;
      block_config = {6, 12, 36, 24};
      break;
    case 169:
      block_config = {6, 12, 32, 32};
      break;
    case 201:
      block_config = {6, 12, 48, 32};
      break;
    default:
      HN_THROW(kInvalidArgument) << "densenet: num_layers must be 121, 161, 169 or 201, got "
                                 << num_layers;
  }
  const int64_t bn_size = 4;
  auto net = std::make_shared<ZooNet>("densenet", "DenseNet");
  Scope s;
  auto features = Seq();
  Append(features.get(), {Conv(s, ConvArgs(num_init_features, 7, 2, 3).set_use_bias(false)), BN(s),
                          Relu(s), ZooPool<MaxPool2D>(s, 3, 2, 1)});
  int64_t num_features = num_init_features;
  for (size_t i = 0; i < block_config.size(); ++i) {
    auto stage = Seq("stage" + std::to_string(i + 1) + "_");
    Scope ss;
    for (int k = 0; k < block_config[i]; ++k)
      Append(stage.get(), {DenseLayer(ss, growth_rate, bn_size)});
    Append(features.get(), {stage});
    num_features += block_config[i] * growth_rate;
    if (i + 1 != block_config.size()) {
      auto transition = Seq();
      Append(transition.get(),
             {BN(s), Relu(s), Conv(s, ConvArgs(num_features / 2, 1).set_use_bias(false)),
              ZooPool<AvgPool2D>(s, 2, 2)});
      Append(features.get(), {transition});
      num_features /= 2;
    }
  }
  Append(features.get(), {BN(s), Relu(s), ZooPool<AvgPool2D>(s, 7, IntTuple()),
                          std::make_shared<Flatten>(s.Block("flatten"))});
  net->SetParts(features, std::make_shared<Dense>(classes, "", s.Block("dense")));
  return net;
}

std::shared_ptr<HybridBlock> SqueezeNet(const std::string& version, int64_t classes) {
  HN_CHECK(version == "1.0" || version == "1.1", kInvalidArgument)
      << "Unsupported SqueezeNet version " << version << ": 1.0 or 1.1 expected";
  auto net = std::make_shared<ZooNet>("squeezenet", "SqueezeNet");
  Scope s;
  auto features = Seq();
  if (version == "1.0") {
    Append(features.get(), {Conv(s, ConvArgs(96, 7, 2)), Relu(s), CeilMaxPool(s)});
    Append(features.get(), {Fire(s, 16, 64, 64)});
    Append(features.get(), {Fire(s, 16, 64, 64)});
    Append(features.get(), {Fire(s, 32, 128, 128)});
    Append(features.get(), {CeilMaxPool(s)});
    Append(features.get(), {Fire(s, 32, 128, 128)});
    Append(features.get(), {Fire(s, 48, 192, 192)});
    Append(features.get(), {Fire(s, 48, 192, 192)});
    Append(features.get(), {Fire(s, 64, 256, 256)});
    Append(features.get(), {CeilMaxPool(s)});
    Append(features.get(), {Fire(s, 64, 256, 256)});
  } else {
    Append(features.get(), {Conv(s, ConvArgs(64, 3, 2)), Relu(s), CeilMaxPool(s)});
    Append(features.get(), {Fire(s, 16, 64, 64)});
    Append(features.get(), {Fire(s, 16, 64, 64)});
    Append(features.get(), {CeilMaxPool(s)});
    Append(features.get(), {Fire(s, 32, 128, 128)});
    Append(features.get(), {Fire(s, 32, 128, 128)});
    Append(features.get(), {CeilMaxPool(s)});
    Append(features.get(), {Fire(s, 48, 192, 192)});
    Append(features.get(), {Fire(s, 48, 192, 192)});
    Append(features.get(), {Fire(s, 64, 256, 256)});
    Append(features.get(), {Fire(s, 64, 256, 256)});
  }
  Append(features.get(), {std::make_shared<Dropout>(0.5f, s.Block("dropout"))});
  auto output = Seq();
  Append(output.get(),
         {Conv(s, ConvArgs(classes, 1)), Relu(s), ZooPool<AvgPool2D>(s, 13, IntTuple()),
          std::make_shared<Flatten>(s.Block("flatten"))});
  net->SetParts(features, output);
  return net;
}

std::shared_ptr<HybridBlock> Inception3(int64_t classes) {
  auto net = std::make_shared<ZooNet>("inception3", "Inception3");
  Scope s;
  auto features = Seq();
  Append(features.get(),
         {BasicConv(s, {32, 3, 2}), BasicConv(s, {32, 3}), BasicConv(s, {64, 3, 1, 1}),
          ZooPool<MaxPool2D>(s, 3, 2), BasicConv(s, {80, 1}), BasicConv(s, {192, 3}),
          ZooPool<MaxPool2D>(s, 3, 2)});
  for (auto [prefix, pool_features] :
       std::vector<std::pair<std::string, int64_t>>{{"A1_", 32}, {"A2_", 64}, {"A3_", 64}}) {
    Append(features.get(), {InceptionBlock(prefix, {{"", {{64, 1}}},
                                                    {"", {{48, 1}, {64, 5, 1, 2}}},
                                                    {"", {{64, 1}, {96, 3, 1, 1}, {96, 3, 1, 1}}},
                                                    {"avg", {{pool_features, 1}}}})});
  }
  Append(
      features.get(),
      {InceptionBlock(
          "B_", {{"", {{384, 3, 2}}}, {"", {{64, 1}, {96, 3, 1, 1}, {96, 3, 2}}}, {"max", {}}})});
  for (auto [prefix, c7] : std::vector<std::pair<std::string, int64_t>>{
           {"C1_", 128}, {"C2_", 160}, {"C3_", 160}, {"C4_", 192}}) {
    const ConvSetting c1x7{c7, {1, 7}, 1, {0, 3}}, c7x1{c7, {7, 1}, 1, {3, 0}};
    Append(features.get(),
           {InceptionBlock(prefix, {{"", {{192, 1}}},
                                    {"", {{c7, 1}, c1x7, {192, {7, 1}, 1, {3, 0}}}},
                                    {"", {{c7, 1}, c7x1, c1x7, c7x1, {192, {1, 7}, 1, {0, 3}}}},
                                    {"avg", {{192, 1}}}})});
  }
  Append(
      features.get(),
      {InceptionBlock(
          "D_", {{"", {{192, 1}, {320, 3, 2}}},
                 {"", {{192, 1}, {192, {1, 7}, 1, {0, 3}}, {192, {7, 1}, 1, {3, 0}}, {192, 3, 2}}},
                 {"max", {}}})});
  Append(features.get(), {InceptionE("E1_"), InceptionE("E2_")});
  Append(features.get(), {ZooPool<AvgPool2D>(s, 8, IntTuple()),
                          std::make_shared<Dropout>(0.5f, s.Block("dropout"))});
  net->SetParts(features, std::make_shared<Dense>(classes, "", s.Block("dense")));
  return net;
}

std::shared_ptr<HybridBlock> MobileNet(double multiplier, int64_t classes) {
  HN_CHECK(multiplier > 0, kInvalidArgument) << "mobilenet: multiplier must be > 0";
  auto net = std::make_shared<ZooNet>("mobilenet", "MobileNet");
  Scope s;
  auto features = Seq();
  AddConv(s, features.get(), static_cast<int64_t>(32 * multiplier), 3, 2, 1);
  const std::vector<int64_t> dw =
      Scaled({{32, 1}, {64, 1}, {128, 2}, {256, 2}, {512, 6}, {1024, 1}}, multiplier);
  const std::vector<int64_t> ch =
      Scaled({{64, 1}, {128, 2}, {256, 2}, {512, 6}, {1024, 2}}, multiplier);
  const std::vector<int64_t> strides{1, 2, 1, 2, 1, 2, 1, 1, 1, 1, 1, 2, 1};
  for (size_t i = 0; i < dw.size(); ++i) {
    AddConv(s, features.get(), dw[i], 3, strides[i], 1, dw[i]);
    AddConv(s, features.get(), ch[i]);
  }
  Append(features.get(), {std::make_shared<GlobalAvgPool2D>("NCHW", s.Block("pool")),
                          std::make_shared<Flatten>(s.Block("flatten"))});
  net->SetParts(features, std::make_shared<Dense>(classes, "", s.Block("dense")));
  return net;
}

std::shared_ptr<HybridBlock> MobileNetV2(double multiplier, int64_t classes) {
  HN_CHECK(multiplier > 0, kInvalidArgument) << "mobilenetv2: multiplier must be > 0";
  auto net = std::make_shared<ZooNet>("mobilenetv2", "MobileNetV2");
  auto features = Seq("features_");
  Scope fs;
  AddConv(fs, features.get(), static_cast<int64_t>(32 * multiplier), 3, 2, 1, 1, true, true);
  const std::vector<int64_t> in_c =
      Scaled({{32, 1}, {16, 1}, {24, 2}, {32, 3}, {64, 4}, {96, 3}, {160, 3}}, multiplier);
  const std::vector<int64_t> out_c =
      Scaled({{16, 1}, {24, 2}, {32, 3}, {64, 4}, {96, 3}, {160, 3}, {320, 1}}, multiplier);
  const std::vector<int64_t> strides{1, 2, 1, 2, 1, 1, 2, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1};
  for (size_t i = 0; i < in_c.size(); ++i) {
    const int64_t t = i == 0 ? 1 : 6;
    Append(features.get(), {std::make_shared<LinearBottleneck>(in_c[i], out_c[i], t, strides[i],
                                                               fs.Block("linearbottleneck"))});
  }
  const int64_t last = multiplier > 1.0 ? static_cast<int64_t>(1280 * multiplier) : 1280;
  AddConv(fs, features.get(), last, 1, 1, 0, 1, true, true);
  Append(features.get(), {std::make_shared<GlobalAvgPool2D>("NCHW", fs.Block("pool"))});
  auto output = Seq("output_");
  Scope os;
  Append(output.get(), {std::make_shared<Conv2D>(ConvArgs(classes, 1).set_use_bias(false), "pred_"),
                        std::make_shared<Flatten>(os.Block("flatten"))});
  net->SetParts(features, output);
  return net;
}

// ---------------------------------------------------------------------------------------------
// get_model: the one table of names

namespace {

struct ZooEntry {
  std::string name;
  bool takes_thumbnail;
  std::function<std::shared_ptr<HybridBlock>(int64_t classes, bool thumbnail)> make;
};

// Every model by MXNet's get_model name, in the order ModelNames lists them.
const std::vector<ZooEntry>& Zoo() {
  static const std::vector<ZooEntry> zoo = [] {
    std::vector<ZooEntry> z;
    auto add = [&z](std::string name, std::function<std::shared_ptr<HybridBlock>(int64_t)> make) {
      z.push_back({std::move(name), false, [make](int64_t c, bool) { return make(c); }});
    };
    for (int v : {1, 2}) {
      for (int n : {18, 34, 50, 101, 152}) {
        z.push_back({"resnet" + std::to_string(n) + "_v" + std::to_string(v), true,
                     [v, n](int64_t c, bool thumbnail) { return ResNet(v, n, c, thumbnail); }});
      }
    }
    for (bool bn : {false, true}) {
      for (int n : {11, 13, 16, 19}) {
        add("vgg" + std::to_string(n) + (bn ? "_bn" : ""),
            [n, bn](int64_t c) { return VGG(n, bn, c); });
      }
    }
    add("alexnet", AlexNet);
    for (int n : {121, 161, 169, 201}) {
      add("densenet" + std::to_string(n), [n](int64_t c) { return DenseNet(n, c); });
    }
    for (const char* version : {"1.0", "1.1"}) {
      add(std::string("squeezenet") + version,
          [version](int64_t c) { return SqueezeNet(version, c); });
    }
    add("inceptionv3", Inception3);
    const std::pair<const char*, double> multipliers[] = {
        {"1.0", 1.0}, {"0.75", 0.75}, {"0.5", 0.5}, {"0.25", 0.25}};
    for (const auto& [text, m] : multipliers) {
      add(std::string("mobilenet") + text, [m = m](int64_t c) { return MobileNet(m, c); });
    }
    for (const auto& [text, m] : multipliers) {
      add(std::string("mobilenetv2_") + text, [m = m](int64_t c) { return MobileNetV2(m, c); });
    }
    return z;
  }();
  return zoo;
}

}  // namespace

std::vector<std::string> ModelNames() {
  std::vector<std::string> names;
  for (const auto& entry : Zoo()) names.push_back(entry.name);
  return names;
}

std::shared_ptr<HybridBlock> GetModel(const std::string& model_name, int64_t classes,
                                      bool thumbnail) {
  const std::string name = Lower(model_name);
  HN_CHECK(classes >= 1, kInvalidArgument) << "get_model: classes must be >= 1, got " << classes;
  const auto& zoo = Zoo();
  auto it = std::find_if(zoo.begin(), zoo.end(), [&](const ZooEntry& e) { return e.name == name; });
  if (it == zoo.end()) {
    std::string known;
    for (const auto& e : zoo) known += (known.empty() ? "" : ", ") + e.name;
    HN_THROW(kNotFound) << "model '" << model_name << "' is not in the model zoo; known: " << known;
  }
  HN_CHECK(!thumbnail || it->takes_thumbnail, kInvalidArgument)
      << "get_model: thumbnail applies to resnets only, not " << name;
  return it->make(classes, thumbnail);
}

}  // namespace model_zoo
}  // namespace gluon
}  // namespace hybridnet
