// Operator fusion for inference. Every fused op computes what the ops it replaces compute, float
// operation by float operation, so fused and unfused graphs are bit-identical (fast_math aside):
//  * Convolution [+ BatchNorm | _contrib_BatchNormWithReLU] [+ elemwise_add]
//      [+ Activation | clip] -> _hn_convolution (in that order; the add's other input
//      becomes the residual input)
//  * a 1x1 convolution (stride 1, no padding, one group, its epilogue without residual, relu or
//      clip) + a 3x3 depthwise convolution reading only it -> _hn_convolution with expand
//      (MobileNet v2's inverted bottleneck: the backend then computes the expanded tensor a
//      few rows at a time, RunExpandThenDepthwise)
//  * FullyConnected + Activation    -> _hn_fully_connected_act
//  * BatchNorm + Activation(relu)   -> _contrib_BatchNormWithReLU
// Training graphs (FuseActivationsForTraining) take the last two where the activation's gradient
// reads its output alone (every act type but softsign, whose derivative reads the product the
// fusion hides), and for training graphs only (FuseLogSoftmaxLabelSum):
//  * log_softmax(x, axis=-1) + elemwise_mul by a label + sum(axis=-1)
//      -> _hn_log_softmax_label_sum (also broadcast_mul by reshape_like(label, x), as Gluon's
//      SoftmaxCrossEntropyLoss with dense labels builds it)
// A producer is fused only into its only reader (graph outputs count as readers), and a
// BatchNorm only when it shows its first output alone and normalizes the channel axis.
#include <algorithm>
#include <cstdint>
#include <set>

#include "kernels/activation_type.h"
#include "kernels/convolution.h"
#include "kernels/layout.h"
#include "ops/gradient_util.h"
#include "ops/nn/convolution_fusions.h"
#include "pass/passes.h"

namespace hybridnet {
namespace internal {

namespace {

// True when node `n` works on channel-first data (no layout attribute, or NCW, NCHW, NCDHW).
bool ChannelFirst(const Node& n) { return IsChannelFirstName(AttrOrDefault(n, "layout")); }

class Fuser {
 public:
  explicit Fuser(const Symbol& graph)
      : g_(graph.outputs), uses_(g_.num_entries(), 0), readers_(g_.num_entries()) {
    for (uint32_t nid = 0; nid < g_.num_nodes(); ++nid) {
      for (const auto& e : g_[nid].inputs) {
        ++uses_[g_.entry_id(e)];
        readers_[g_.entry_id(e)].push_back(nid);
      }
    }
    for (const auto& e : g_.outputs()) ++uses_[g_.entry_id(e)];
  }

  const IndexedGraph& graph() const { return g_; }
  Node* node(uint32_t nid) const { return g_[nid].owner.get(); }
  bool Removed(uint32_t nid) const { return removed_.count(nid) > 0; }

  // The op node reading output 0 of `nid` when it is the only reader (and not fused away into
  // another node already), else kNone.
  static constexpr uint32_t kNone = UINT32_MAX;
  uint32_t SoleReader(uint32_t nid) const {
    const uint32_t eid = g_.entry_id(nid, 0);
    if (uses_[eid] != 1 || readers_[eid].size() != 1 || Removed(readers_[eid][0])) return kNone;
    return readers_[eid][0];
  }
  // The node `nid` when it runs `op`.
  const Node* NodeOf(uint32_t nid, const Op* op) const {
    if (nid == kNone || op == nullptr) return nullptr;
    const Node* n = node(nid);
    return !n->IsVariable() && n->attrs.op == op ? n : nullptr;
  }

  // The last node of `chain` takes over its nodes (the others are dropped): it gets `attrs`
  // (named after it) and `inputs`, and keeps its readers.
  void Replace(const std::vector<uint32_t>& chain, NodeAttrs attrs, std::vector<NodeEntry> inputs) {
    Node* last = node(chain.back());
    attrs.name = last->attrs.name;
    last->attrs = std::move(attrs);
    last->inputs = std::move(inputs);
    for (size_t i = 0; i + 1 < chain.size(); ++i) removed_.insert(chain[i]);
    // The fused node now reads what the chain read, so later rules see it as the reader.
    for (const NodeEntry& e : last->inputs) {
      for (uint32_t& reader : readers_[g_.entry_id(g_.node_id(e.node.get()), e.index)]) {
        if (std::find(chain.begin(), chain.end(), reader) != chain.end()) reader = chain.back();
      }
    }
    fused_ += chain.size() - 1;
  }

  size_t num_fused() const { return fused_; }

 private:
  IndexedGraph g_;
  std::vector<int> uses_;
  std::vector<std::vector<uint32_t>> readers_;
  std::set<uint32_t> removed_;
  size_t fused_ = 0;
};

bool IsOp(const Node* n, const Op* op) {
  return op != nullptr && !n->IsVariable() && n->attrs.op == op;
}

// The BatchNorm `bn`'s attributes as a fold into the producer.
BatchNormFold FoldOf(const Node& bn) {
  BatchNormFold fold;
  ParseValue(AttrOrDefault(bn, "eps"), &fold.eps);
  ParseValue(AttrOrDefault(bn, "fix_gamma"), &fold.fix_gamma);
  return fold;
}

// The clip node `clip`'s bounds.
ClipBounds BoundsOf(const Node& clip) {
  ClipBounds bounds;
  ParseValue(clip.attrs.dict.at("a_min"), &bounds.a_min);
  ParseValue(clip.attrs.dict.at("a_max"), &bounds.a_max);
  return bounds;
}

// Fuses the BatchNorm, residual add and activation that follow convolution `conv`.
void FuseConvolutionChain(Fuser* f, uint32_t conv) {
  const OpRegistry& registry = OpRegistry::Global();
  static const Op* const batch_norm = registry.Find("BatchNorm");
  static const Op* const batch_norm_relu = registry.Find("_contrib_BatchNormWithReLU");
  static const Op* const add = registry.Find("elemwise_add");
  static const Op* const activation = registry.Find("Activation");
  static const Op* const clip = registry.Find("clip");
  const Node* c = f->node(conv);
  if (!ChannelFirst(*c)) return;  // channel-last: GPU-only
  ConvolutionFusions fusions;
  std::vector<NodeEntry> inputs = c->inputs;
  std::vector<uint32_t> chain = {conv};

  uint32_t next = f->SoleReader(conv);
  const Node* bn = f->NodeOf(next, batch_norm);
  if (bn == nullptr) bn = f->NodeOf(next, batch_norm_relu);
  if (bn != nullptr && bn->inputs[0].node.get() == c && bn->NumOutputs() == 1 &&
      std::stoi(AttrOrDefault(*bn, "axis")) == 1) {
    fusions.bn = FoldOf(*bn);
    inputs.insert(inputs.end(), bn->inputs.begin() + 1, bn->inputs.end());
    if (bn->attrs.op == batch_norm_relu) fusions.act = ActType::kRelu;
    chain.push_back(next);
    next = f->SoleReader(next);
  }
  const Node* head = f->node(chain.back());
  const Node* sum = fusions.act ? nullptr : f->NodeOf(next, add);
  if (sum != nullptr) {
    const bool lhs = sum->inputs[0].node.get() == head;
    const NodeEntry& other = sum->inputs[lhs ? 1 : 0];
    if (other.node.get() != head) {
      fusions.residual = true;
      inputs.push_back(other);
      chain.push_back(next);
      next = f->SoleReader(next);
    }
  }
  if (!fusions.act) {
    if (const Node* act = f->NodeOf(next, activation)) {
      fusions.act = ParseEnum(act->attrs.dict.at("act_type"), ActTypeNames());
      chain.push_back(next);
    } else if (const Node* bounded = f->NodeOf(next, clip)) {
      fusions.clip = BoundsOf(*bounded);
      chain.push_back(next);
    }
  }
  if (chain.size() == 1) return;
  f->Replace(chain, FusedConvolutionAttrs(c->attrs.name, c->attrs.dict, fusions),
             std::move(inputs));
}

// The tuple attribute `key` of `n` (window attributes): `rank` values all equal to `value`, or
// absent or empty (MXNet's default) when `value` is that default.
bool TupleIs(const Node& n, const std::string& key, size_t rank, int64_t value,
             bool value_is_default) {
  const std::vector<int64_t> v = ParseIntTuple(AttrOrDefault(n, key));
  if (v.empty()) return value_is_default;
  if (v.size() != rank) return false;
  for (int64_t x : v)
    if (x != value) return false;
  return true;
}

// Fuses the 1x1 convolution that computes the data of 3x3 depthwise convolution `nid`.
void FuseExpansion(Fuser* f, uint32_t nid) {
  const OpRegistry& registry = OpRegistry::Global();
  static const Op* const convolution = registry.Find("Convolution");
  static const Op* const fused = registry.Find("_hn_convolution");
  const Node* dw = f->node(nid);
  if (f->Removed(nid) || !(IsOp(dw, convolution) || IsOp(dw, fused))) return;
  const ConvolutionFusions& dw_fusions = FusionsOf(dw->attrs);
  const std::string filters = AttrOrDefault(*dw, "num_filter");
  // Worth it where our depthwise kernel takes the window (channels not known yet).
  if (dw_fusions.expand || dw_fusions.pool ||
      ParseIntTuple(AttrOrDefault(*dw, "kernel")).size() != 2 ||
      !ConvFusesExpansion(ConvWindowOf(*dw, 2, 0))) {
    return;
  }
  const NodeEntry& data = dw->inputs[0];
  const Node* pw = data.node.get();
  if (pw->IsVariable() || data.index != 0 || !(IsOp(pw, convolution) || IsOp(pw, fused))) return;
  const uint32_t producer = f->graph().node_id(pw);
  const ConvolutionFusions& pw_fusions = FusionsOf(pw->attrs);
  const bool relu = pw_fusions.act == ActType::kRelu;
  if (f->Removed(producer) || f->SoleReader(producer) != nid ||
      AttrOrDefault(*pw, "num_filter") != filters || AttrOrDefault(*pw, "num_group") != "1" ||
      !TupleIs(*pw, "kernel", 2, 1, false) || !TupleIs(*pw, "stride", 2, 1, true) ||
      !TupleIs(*pw, "pad", 2, 0, true) || pw_fusions.residual || pw_fusions.expand ||
      pw_fusions.pool || (pw_fusions.act && !relu)) {
    return;
  }
  ConvolutionFusions fusions = dw_fusions;
  Expansion& expand = fusions.expand.emplace();
  ParseValue(filters, &expand.num_filter);
  bool no_bias = false;
  ParseValue(AttrOrDefault(*pw, "no_bias"), &no_bias);
  expand.bias = !no_bias;
  expand.bn = pw_fusions.bn;
  expand.relu = relu;
  expand.clip = pw_fusions.clip;
  // Inputs: the 1x1 convolution's data, the depthwise one's parameters, the 1x1 one's
  // parameters, then the depthwise one's residual.
  std::vector<NodeEntry> inputs = dw->inputs;
  auto at = inputs.end() - (dw_fusions.residual ? 1 : 0);
  inputs.insert(at, pw->inputs.begin() + 1, pw->inputs.end());
  inputs[0] = pw->inputs[0];
  f->Replace({producer, nid}, FusedConvolutionAttrs(dw->attrs.name, dw->attrs.dict, fusions),
             std::move(inputs));
}

// Fuses the 2-D max pooling `nid` into the convolution whose output it alone reads (an image
// network's stem: Convolution, BatchNorm, relu, Pooling), so the convolution's output need not go
// out to memory (RunConvolutionThenMaxPool).
void FuseMaxPool(Fuser* f, uint32_t nid) {
  const OpRegistry& registry = OpRegistry::Global();
  static const Op* const pooling = registry.Find("Pooling");
  static const Op* const convolution = registry.Find("Convolution");
  static const Op* const fused = registry.Find("_hn_convolution");
  const Node* pool = f->node(nid);
  if (f->Removed(nid) || !IsOp(pool, pooling)) return;
  const std::string convention = AttrOrDefault(*pool, "pooling_convention");
  const std::vector<int64_t> kernel = ParseIntTuple(AttrOrDefault(*pool, "kernel"));
  bool global = false;
  ParseValue(AttrOrDefault(*pool, "global_pool"), &global);
  if (AttrOrDefault(*pool, "pool_type") != "max" || global || kernel.size() != 2 ||
      !ChannelFirst(*pool) || !(convention == "valid" || convention == "full")) {
    return;
  }
  const NodeEntry& data = pool->inputs[0];
  const Node* conv = data.node.get();
  if (conv->IsVariable() || data.index != 0 || !(IsOp(conv, convolution) || IsOp(conv, fused))) {
    return;
  }
  const uint32_t producer = f->graph().node_id(conv);
  const ConvolutionFusions& conv_fusions = FusionsOf(conv->attrs);
  if (f->Removed(producer) || f->SoleReader(producer) != nid ||
      ParseIntTuple(AttrOrDefault(*conv, "kernel")).size() != 2 || !ChannelFirst(*conv) ||
      conv_fusions.residual || conv_fusions.expand || conv_fusions.pool ||
      (conv_fusions.act && *conv_fusions.act != ActType::kRelu)) {
    return;
  }
  ConvolutionFusions fusions = conv_fusions;
  MaxPoolAfter& after = fusions.pool.emplace();
  after.kernel = kernel;
  after.stride = ParseIntTuple(AttrOrDefault(*pool, "stride"));
  after.pad = ParseIntTuple(AttrOrDefault(*pool, "pad"));
  if (after.stride.empty()) after.stride.assign(2, 1);
  if (after.pad.empty()) after.pad.assign(2, 0);
  after.full = convention == "full";
  f->Replace({producer, nid}, FusedConvolutionAttrs(conv->attrs.name, conv->attrs.dict, fusions),
             conv->inputs);
}

// Producer + Activation fusions: the activation node keeps its identity and takes over the
// producer's inputs and attributes. `for_training` leaves alone the activations whose gradient
// reads their input (ActivationGradientReadsInput: softsign's), which the fused op hides.
void FuseActivations(Fuser* f, bool for_training) {
  const OpRegistry& registry = OpRegistry::Global();
  const Op* activation = registry.Find("Activation");
  struct Rule {
    const char* producer;
    const Op* fused;
    bool relu_only;
  };
  const Rule rules[] = {
      {"FullyConnected", registry.Find("_hn_fully_connected_act"), false},
      {"BatchNorm", registry.Find("_contrib_BatchNormWithReLU"), true},
  };
  const IndexedGraph& g = f->graph();
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) {
    Node* act = f->node(nid);
    if (f->Removed(nid) || !IsOp(act, activation)) continue;
    const NodeEntry& src = act->inputs[0];
    if (src.node->IsVariable() || src.index != 0) continue;
    const uint32_t producer = g.node_id(src.node.get());
    if (f->Removed(producer)) continue;
    const Rule* rule = nullptr;
    for (const Rule& r : rules)
      if (r.fused != nullptr && src.node->attrs.op->name == r.producer) rule = &r;
    if (rule == nullptr) continue;
    const std::string& act_type = act->attrs.dict.at("act_type");
    if (rule->relu_only && act_type != "relu") continue;
    if (for_training && ActivationGradientReadsInput(ParseEnum(act_type, ActTypeNames()))) continue;
    if (src.node->NumOutputs() != 1) continue;  // BatchNorm with output_mean_var
    if (f->SoleReader(producer) != nid) continue;
    AttrDict dict = src.node->attrs.dict;
    if (!rule->relu_only) dict["act_type"] = act_type;
    f->Replace({producer, nid}, MakeNodeAttrs(*rule->fused, "", dict), src.node->inputs);
  }
}

// Whether node `n`'s axis attribute names the last axis alone (-1 or (-1,)); `absent_is_last`:
// what a missing attribute means.
bool AxisIsLast(const Node& n, bool absent_is_last) {
  const auto it = n.attrs.dict.find("axis");
  if (it == n.attrs.dict.end()) return absent_is_last;
  return it->second != "None" && ParseIntTuple(it->second) == std::vector<int64_t>{-1};
}

// sum(log_softmax(x, axis=-1) * label, axis=-1) -> _hn_log_softmax_label_sum(x, label): the
// log_softmax read by the product alone, the product by the sum alone; log_softmax with no
// temperature, dtype or length, the sum over the last axis only. The product is elemwise_mul, or
// broadcast_mul by reshape_like(label, x): x's shape, so nothing is broadcast and the product
// has elemwise_mul's bits.
void FuseLogSoftmaxLabelSum(Fuser* f, uint32_t nid) {
  const OpRegistry& registry = OpRegistry::Global();
  static const Op* const sum_op = registry.Find("sum");
  static const Op* const mul_op = registry.Find("elemwise_mul");
  static const Op* const broadcast_mul_op = registry.Find("broadcast_mul");
  static const Op* const reshape_like_op = registry.Find("reshape_like");
  static const Op* const log_softmax_op = registry.Find("log_softmax");
  static const Op* const fused_op = registry.Find("_hn_log_softmax_label_sum");
  const Node* sum = f->node(nid);
  if (f->Removed(nid) || !IsOp(sum, sum_op) || fused_op == nullptr) return;
  bool exclude = false, keepdims = false;
  ParseValue(AttrOrDefault(*sum, "exclude"), &exclude);
  ParseValue(AttrOrDefault(*sum, "keepdims"), &keepdims);
  if (exclude || !AxisIsLast(*sum, false)) return;
  const NodeEntry& product = sum->inputs[0];
  if (product.node->IsVariable() || product.index != 0) return;
  const IndexedGraph& g = f->graph();
  const uint32_t mul = g.node_id(product.node.get());
  const bool broadcast = IsOp(product.node.get(), broadcast_mul_op);
  if (!(broadcast || IsOp(product.node.get(), mul_op)) || f->SoleReader(mul) != nid) return;
  for (size_t side = 0; side < 2; ++side) {
    const NodeEntry& log_probs = product.node->inputs[side];
    if (!IsOp(log_probs.node.get(), log_softmax_op) || log_probs.index != 0) continue;
    const Node& ls = *log_probs.node;
    const bool plain = std::all_of(ls.attrs.dict.begin(), ls.attrs.dict.end(),
                                   [](const auto& kv) { return kv.first == "axis"; });
    if (!plain || !AxisIsLast(ls, true)) continue;
    const uint32_t producer = g.node_id(&ls);
    if (f->Removed(producer) || f->SoleReader(producer) != mul) continue;
    const NodeEntry label = product.node->inputs[1 - side];
    if (broadcast) {
      const Node* reshape = label.node.get();
      if (!IsOp(reshape, reshape_like_op) || reshape->inputs.size() != 2 ||
          reshape->inputs[1].node != ls.inputs[0].node ||
          reshape->inputs[1].index != ls.inputs[0].index) {
        continue;
      }
    }
    f->Replace({producer, mul, nid},
               MakeNodeAttrs(*fused_op, "", {{"keepdims", keepdims ? "True" : "False"}}),
               {ls.inputs[0], label});
    return;
  }
}

}  // namespace

Symbol FuseOps(const Symbol& symbol, size_t* num_fused) {
  *num_fused = 0;
  const Op* convolution = OpRegistry::Global().Find("Convolution");
  if (convolution == nullptr) return symbol;
  Symbol graph = symbol.Copy();
  Fuser fuser(graph);
  const IndexedGraph& g = fuser.graph();
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) {
    if (IsOp(fuser.node(nid), convolution)) FuseConvolutionChain(&fuser, nid);
  }
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) FuseExpansion(&fuser, nid);
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) FuseMaxPool(&fuser, nid);
  FuseActivations(&fuser, false);
  *num_fused = fuser.num_fused();
  return graph;
}

Symbol FuseActivationsForTraining(const Symbol& symbol, size_t* num_fused) {
  Symbol graph = symbol.Copy();
  Fuser fuser(graph);
  FuseActivations(&fuser, true);
  *num_fused = fuser.num_fused();
  return graph;
}

Symbol FuseLogSoftmaxLabelSum(const Symbol& symbol, size_t* num_fused) {
  Symbol graph = symbol.Copy();
  Fuser fuser(graph);
  for (uint32_t nid = 0; nid < fuser.graph().num_nodes(); ++nid)
    FuseLogSoftmaxLabelSum(&fuser, nid);
  *num_fused = fuser.num_fused();
  return graph;
}

}  // namespace internal
}  // namespace hybridnet
