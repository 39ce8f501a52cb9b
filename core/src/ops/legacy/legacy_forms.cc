// Older spellings MXNet still loads: BatchNorm_v1, Convolution_v1, Pooling_v1 (the pre-1.0
// operators, src/operator/*_v1-inl.h) and _contrib_SyncBatchNorm (multi-device BatchNorm,
// whose inference is BatchNorm's). Each declares its own attributes (MXNet's keys and
// defaults, so exactly the keys MXNet accepts parse) and runs the current op's inference and
// kernel from the registry, so there is one implementation.
//
// Where the legacy kernel differs from the current one: Pooling_v1's avg divides by the full
// kernel area even where a 'full'-convention window overhangs the padded input, while Pooling
// clips such windows; models that rely on that overhang are not supported exactly.
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "hybridnet/op.h"
#include "hybridnet/symbol.h"
#include "ops/nn/convolution_param.h"
#include "ops/register_ops.h"

namespace hybridnet {

namespace {

struct BatchNormV1Param {
  float eps = 1e-3f;
  float momentum = 0.9f;
  bool fix_gamma = true;
  bool use_global_stats = false;
  bool output_mean_var = false;
  static void Declare(ParamDeclarer<BatchNormV1Param>* d) {
    d->Field("eps", &BatchNormV1Param::eps)
        .Default(1e-3f)
        .Describe("Epsilon added to the variance.");
    d->Field("momentum", &BatchNormV1Param::momentum)
        .Default(0.9f)
        .Describe("Momentum of the moving averages (training only).");
    d->Field("fix_gamma", &BatchNormV1Param::fix_gamma)
        .Default(true)
        .Describe("If true, gamma is taken as 1.");
    d->Field("use_global_stats", &BatchNormV1Param::use_global_stats)
        .Default(false)
        .Describe("If true, the moving statistics are used in training too.");
    d->Field("output_mean_var", &BatchNormV1Param::output_mean_var)
        .Default(false)
        .Describe("If true, the mean and inverse standard deviation are outputs too.");
  }
};

struct SyncBatchNormParam {
  float eps = 1e-3f;
  float momentum = 0.9f;
  bool fix_gamma = true;
  bool use_global_stats = false;
  bool output_mean_var = false;
  int ndev = 1;
  std::string key;
  static void Declare(ParamDeclarer<SyncBatchNormParam>* d) {
    d->Field("eps", &SyncBatchNormParam::eps)
        .Default(1e-3f)
        .Describe("Epsilon added to the variance.");
    d->Field("momentum", &SyncBatchNormParam::momentum)
        .Default(0.9f)
        .Describe("Momentum of the moving averages (training only).");
    d->Field("fix_gamma", &SyncBatchNormParam::fix_gamma)
        .Default(true)
        .Describe("If true, gamma is taken as 1.");
    d->Field("use_global_stats", &SyncBatchNormParam::use_global_stats)
        .Default(false)
        .Describe("If true, the moving statistics are used in training too.");
    d->Field("output_mean_var", &SyncBatchNormParam::output_mean_var)
        .Default(false)
        .Describe("If true, the mean and inverse standard deviation are outputs too.");
    d->Field("ndev", &SyncBatchNormParam::ndev)
        .Default(1)
        .Describe("Number of devices the batch statistics are synchronized over (training).");
    d->Field("key", &SyncBatchNormParam::key)
        .Required()
        .Describe("Name shared by the synchronized copies (training).");
  }
};

// Convolution's fields, with the layouts the pre-1.0 form knew (2-D and 3-D only).
struct ConvolutionV1Param : ConvolutionParam {
  static void Declare(ParamDeclarer<ConvolutionV1Param>* d) {
    DeclareFields(d);
    d->template Field<internal::Layout>("layout", &ConvolutionV1Param::layout,
                                        {{"NCDHW", internal::Layout::kNCDHW},
                                         {"NCHW", internal::Layout::kNCHW},
                                         {"NDHWC", internal::Layout::kNDHWC},
                                         {"NHWC", internal::Layout::kNHWC}})
        .Default(std::nullopt)
        .Describe("Data layout (default NCHW / NCDHW).");
  }
};

enum class PoolV1Type { kAvg, kMax, kSum };
enum class PoolV1Convention { kFull, kValid };

struct PoolingV1Param {
  std::vector<int64_t> kernel;
  PoolV1Type pool_type = PoolV1Type::kMax;
  bool global_pool = false;
  PoolV1Convention pooling_convention = PoolV1Convention::kValid;
  std::vector<int64_t> stride, pad;
  static void Declare(ParamDeclarer<PoolingV1Param>* d) {
    d->Field("kernel", &PoolingV1Param::kernel).Default({}).Describe("Pooling window size.");
    d->Field("pool_type", &PoolingV1Param::pool_type,
             {{"avg", PoolV1Type::kAvg}, {"max", PoolV1Type::kMax}, {"sum", PoolV1Type::kSum}})
        .Default(PoolV1Type::kMax)
        .Describe("Pooling reduction.");
    d->Field("global_pool", &PoolingV1Param::global_pool)
        .Default(false)
        .Describe("If true, pools over the whole feature map.");
    d->Field("pooling_convention", &PoolingV1Param::pooling_convention,
             {{"full", PoolV1Convention::kFull}, {"valid", PoolV1Convention::kValid}})
        .Default(PoolV1Convention::kValid)
        .Describe("Output size rounding: valid floors, full ceils.");
    d->Field("stride", &PoolingV1Param::stride)
        .Default({})
        .Describe("Stride (default 1 per axis).");
    d->Field("pad", &PoolingV1Param::pad)
        .Default({})
        .Describe("Zero padding (default 0 per axis).");
  }
};

// Turns the reads of `stand_in`'s outputs by the gradient nodes `grads` reach into reads of
// `node`'s; the walk stops at the forward's nodes (those of node's inputs and of `out_grads`).
void ReadOutputsOf(const std::shared_ptr<Node>& node, const Node* stand_in,
                   const std::vector<NodeEntry>& out_grads, std::vector<NodeEntry>* grads) {
  std::unordered_set<const Node*> seen;
  for (const NodeEntry& e : node->inputs) seen.insert(e.node.get());
  for (const NodeEntry& e : out_grads) seen.insert(e.node.get());
  std::vector<Node*> pending;
  auto visit = [&](NodeEntry* e) {
    if (e->node.get() == stand_in) {
      e->node = node;
    } else if (seen.insert(e->node.get()).second) {
      pending.push_back(e->node.get());
    }
  };
  for (NodeEntry& e : *grads) visit(&e);
  while (!pending.empty()) {
    Node* n = pending.back();
    pending.pop_back();
    for (NodeEntry& e : n->inputs) visit(&e);
  }
}

// Registers `name` with P's attributes and `base`'s inputs, outputs, inference and kernel;
// the attributes (without `dropped`, which only the legacy form has) are parsed by `base`.
// With `gradient`, also base's gradient. Without `dropped` keys the legacy attributes parse as
// base's, so that gradient is built over the node itself; otherwise over a stand-in node carrying
// base's own attributes (so its backward ops parse them; MXNet's SyncBatchNorm has its gradient
// on one device), whose outputs the gradient nodes then read from the node itself (BatchNorm's
// backward reads the mean and var its forward saved).
template <typename P>
void RegisterLegacyForm(OpRegistry* r, const char* name, const char* base_name,
                        std::string description, std::vector<std::string> dropped = {},
                        bool gradient = false) {
  const Op& base = r->Get(base_name);
  Op& op = r->Register(name);
  op.Describe(std::move(description)).SetParam<P>();
  auto own_parse = op.parse_param;
  auto base_parse = base.parse_param;
  op.parse_param = [own_parse, base_parse, dropped](const AttrDict& dict) {
    own_parse(dict);  // only the legacy keys, with their types
    AttrDict shared = dict;
    for (const std::string& key : dropped) shared.erase(key);
    return base_parse(shared);
  };
  op.num_inputs = base.num_inputs;
  op.get_num_inputs = base.get_num_inputs;
  op.list_input_names = base.list_input_names;
  op.num_outputs = base.num_outputs;
  op.get_num_outputs = base.get_num_outputs;
  op.num_total_outputs = base.num_total_outputs;
  op.mutable_inputs = base.mutable_inputs;
  op.infer_shape = base.infer_shape;
  op.infer_type = base.infer_type;
  op.compute = base.compute;
  op.inplace = base.inplace;
  op.get_inplace = base.get_inplace;
  if (!gradient) return;
  op.gradient = [base_gradient = base.gradient, base_name, dropped](
                    const std::shared_ptr<Node>& n, const std::vector<NodeEntry>& out_grads) {
    if (dropped.empty()) return base_gradient(n, out_grads);
    AttrDict shared = n->attrs.dict;
    for (const std::string& key : dropped) shared.erase(key);
    auto as_base = std::make_shared<Node>();
    as_base->attrs = MakeNodeAttrs(base_name, n->name(), shared);
    as_base->inputs = n->inputs;
    std::vector<NodeEntry> grads = base_gradient(as_base, out_grads);
    ReadOutputsOf(n, as_base.get(), out_grads, &grads);
    return grads;
  };
}

}  // namespace

void RegisterLegacyOps(OpRegistry* r) {
  RegisterLegacyForm<BatchNormV1Param>(
      r, "BatchNorm_v1", "BatchNorm",
      "The pre-1.0 BatchNorm (channel axis 1): y = (x - mean) / sqrt(var + eps) * gamma + beta, "
      "with the moving statistics at inference.",
      {}, /*gradient=*/true);
  RegisterLegacyForm<SyncBatchNormParam>(
      r, "_contrib_SyncBatchNorm", "BatchNorm",
      "BatchNorm whose training statistics are synchronized over devices; at inference "
      "BatchNorm (channel axis 1).",
      {"ndev", "key"}, /*gradient=*/true);
  RegisterLegacyForm<ConvolutionV1Param>(
      r, "Convolution_v1", "Convolution",
      "The pre-1.0 Convolution: 2-D or 3-D convolution with the same inputs and output size "
      "as Convolution.",
      {}, /*gradient=*/true);
  RegisterLegacyForm<PoolingV1Param>(
      r, "Pooling_v1", "Pooling",
      "The pre-1.0 Pooling: max, avg or sum pooling (or global pooling) with the valid or full "
      "convention.",
      {}, /*gradient=*/true);
}

}  // namespace hybridnet
