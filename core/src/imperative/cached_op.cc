// CachedOp (cached_op.h): the training graphs of a traced Symbol and the tape node of one call.
#include "imperative/cached_op.h"

#include <algorithm>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "hybridnet/autograd.h"
#include "hybridnet/executor.h"
#include "imperative/autograd_tape.h"
#include "ops/gradient_util.h"
#include "pass/gradient.h"
#include "pass/passes.h"

namespace hybridnet {
namespace internal {

namespace {

// Where the backward executor's data input i comes from on each call.
struct BackwardFeed {
  enum Kind { kHeadGrad, kSaved, kInput } kind;
  size_t index;
};

}  // namespace

struct TrainingGraph {
  /// Runs the forward; returns the visible outputs, then the activations the backward reads.
  std::unique_ptr<GraphExecutor> forward;
  /// The gradients of the inputs listed in grad_inputs, reading `feeds`; empty when none needs
  /// one.
  Symbol backward_graph;
  std::vector<std::string> backward_inputs;
  /// Its executors, made on first use, for a backward in inference [0] and training [1] mode: the
  /// backward's train_mode, not the forward's, is what its ops see (BatchNorm's backward), as
  /// eagerly and in MXNet.
  std::unique_ptr<GraphExecutor> backward[2];
  size_t num_outputs = 0;
  std::vector<BackwardFeed> feeds;  ///< per backward data input
  std::vector<size_t> grad_inputs;  ///< forward inputs whose gradients backward gives, in order
  /// Why there is no backward (an op without a gradient): reported when backward reaches the
  /// call, as eager backward reports it, not when the forward runs.
  std::string backward_error;

  /// The activations of calls whose tape node is gone (after their backward, or never
  /// differentiated), given to the next forward to write into: the point of static_alloc, no
  /// allocation and no page faults per step. Only the call that kept them ever held them.
  void Recycle(std::vector<NDArray> saved) {
    std::lock_guard<std::mutex> lock(spare_mutex);
    if (spare.empty()) spare = std::move(saved);
  }
  /// The forward's outputs to write into: the visible ones new, the activations recycled.
  std::vector<NDArray> OutputsToFill() {
    std::vector<NDArray> outputs(num_outputs);
    std::lock_guard<std::mutex> lock(spare_mutex);
    for (NDArray& a : spare) outputs.push_back(std::move(a));
    spare.clear();
    return outputs;
  }
  std::mutex spare_mutex;  // calls may end on another thread than the one running forwards
  std::vector<NDArray> spare;
};

namespace {

// The options of a training graph's executors: every op runs its own kernel, as eagerly, in
// either mode (fusion would hide activations the backward reads).
ExecutorOptions TrainingOptions(bool is_train) {
  ExecutorOptions options;
  options.fuse = false;
  options.is_train = is_train;
  return options;
}

// One recorded call: what its backward reads (NodeAttrs::parsed of its tape node).
struct CachedOpCall {
  std::shared_ptr<TrainingGraph> graph;
  std::vector<NDArray> inputs;  // the forward's inputs, detached
  std::vector<NDArray> saved;   // the activations the backward reads
  ~CachedOpCall() {
    if (graph) graph->Recycle(std::move(saved));
  }
};

const CachedOpCall& CallOf(const NodeAttrs& attrs) {
  return *static_cast<const CachedOpCall*>(attrs.parsed.get());
}

// The backward of a recorded call: out_grads (then the forward inputs, unread) in, the gradients
// of grad_inputs out.
void RunBackward(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<TBlob>&,
                 const std::vector<TBlob>& out) {
  const CachedOpCall& call = CallOf(attrs);
  TrainingGraph& g = *call.graph;
  std::vector<NDArray> data;
  data.reserve(g.feeds.size());
  for (const BackwardFeed& f : g.feeds) {
    switch (f.kind) {
      case BackwardFeed::kHeadGrad:
        data.push_back(*ctx.input_arrays[f.index]);
        break;
      case BackwardFeed::kSaved:
        data.push_back(call.saved[f.index]);
        break;
      case BackwardFeed::kInput:
        data.push_back(call.inputs[f.index]);
        break;
    }
  }
  // The executor writes straight into the arrays Invoke allocated.
  std::vector<NDArray> grads;
  for (const TBlob& b : out) grads.push_back(NDArray::Wrap(b.shape, b.dtype, b.data, nullptr));
  std::unique_ptr<GraphExecutor>& backward = g.backward[ctx.is_train ? 1 : 0];
  if (!backward) {
    backward = std::make_unique<GraphExecutor>(g.backward_graph, g.backward_inputs,
                                               std::map<std::string, NDArray>{},
                                               TrainingOptions(ctx.is_train));
  }
  backward->Forward(data, &grads);
}

const Op& BackwardOp() {
  static const Op* op = [] {
    auto* o = new Op("_backward_CachedOp");
    o->description =
        "The backward of a hybridized block's recorded call: its planned gradient graph.";
    o->get_num_inputs = [](const NodeAttrs& a) {
      const CachedOpCall& call = CallOf(a);
      return static_cast<uint32_t>(call.graph->num_outputs + call.inputs.size());
    };
    o->get_num_outputs = [](const NodeAttrs& a) {
      return static_cast<uint32_t>(CallOf(a).graph->grad_inputs.size());
    };
    o->infer_shape = [](const NodeAttrs& a, std::vector<Shape>*, std::vector<Shape>* out) {
      const CachedOpCall& call = CallOf(a);
      for (size_t j = 0; j < out->size(); ++j)
        (*out)[j] = call.inputs[call.graph->grad_inputs[j]].shape();
      return true;
    };
    o->infer_type = [](const NodeAttrs& a, std::vector<DType>*, std::vector<DType>* out) {
      const CachedOpCall& call = CallOf(a);
      for (size_t j = 0; j < out->size(); ++j)
        (*out)[j] = call.inputs[call.graph->grad_inputs[j]].dtype();
      return true;
    };
    o->compute = RunBackward;
    return o;
  }();
  return *op;
}

// The gradient of a recorded call: one _backward_CachedOp node reading the output gradients.
std::vector<NodeEntry> CachedOpGradient(const std::shared_ptr<Node>& n,
                                        const std::vector<NodeEntry>& dy) {
  const TrainingGraph& g = *CallOf(n->attrs).graph;
  HN_CHECK(g.backward_error.empty(), kUnsupported) << g.backward_error;
  auto backward = std::make_shared<Node>();
  backward->attrs.op = &BackwardOp();
  backward->attrs.name = n->attrs.name + "_backward";
  backward->attrs.parsed = n->attrs.parsed;
  // The forward inputs are read too (the activations they gave are), so under create_graph the
  // recorded backward depends on them and a second backward through it names this op.
  backward->inputs = dy;
  backward->inputs.insert(backward->inputs.end(), n->inputs.begin(), n->inputs.end());
  GradientBuilder builder(n, dy);
  std::vector<NodeEntry> grads;
  size_t j = 0;
  for (size_t i = 0; i < n->inputs.size(); ++i) {
    // Inputs not in grad_inputs are constants of the tape: the gradient pass never reads these.
    const bool given = j < g.grad_inputs.size() && g.grad_inputs[j] == i;
    grads.push_back(given ? NodeEntry{backward, static_cast<uint32_t>(j++), 0}
                          : builder.ZerosLike(n->inputs[i]));
  }
  return grads;
}

const Op& ForwardOp() {
  static const Op* op = [] {
    auto* o = new Op("_CachedOp");
    o->description = "A hybridized block's call recorded as one node of the autograd tape.";
    o->get_num_inputs = [](const NodeAttrs& a) {
      return static_cast<uint32_t>(CallOf(a).inputs.size());
    };
    o->get_num_outputs = [](const NodeAttrs& a) {
      return static_cast<uint32_t>(CallOf(a).graph->num_outputs);
    };
    o->gradient = CachedOpGradient;
    return o;
  }();
  return *op;
}

constexpr char kHeadGradPrefix[] = "__hn_head_grad";
constexpr char kSavedPrefix[] = "__hn_saved";

// Splits the gradient graph `grads` off the forward graph (nodes in `forward_nodes`): the
// gradient nodes are copied with each read of a forward op's output turned into a variable,
// whose value the forward returns as an extra output (appended to forward->outputs). Returns the
// backward graph; `feed_of` learns where each new variable's value comes from.
Symbol SplitBackward(const std::vector<NodeEntry>& grads,
                     const std::unordered_set<const Node*>& forward_nodes, Symbol* forward,
                     std::map<std::string, BackwardFeed>* feed_of) {
  std::map<std::pair<const Node*, uint32_t>, NodeEntry> saved;
  std::unordered_map<const Node*, std::shared_ptr<Node>> copies;
  auto map_entry = [&](const NodeEntry& e) -> NodeEntry {
    const Node* n = e.node.get();
    if (n->IsVariable()) return e;
    if (!forward_nodes.count(n)) return NodeEntry{copies.at(n), e.index, e.version};
    auto [slot, added] = saved.try_emplace({n, e.index});
    if (added) {
      auto var = std::make_shared<Node>();
      var->attrs.name = kSavedPrefix + std::to_string(saved.size() - 1);
      (*feed_of)[var->attrs.name] = BackwardFeed{BackwardFeed::kSaved, saved.size() - 1};
      slot->second = NodeEntry{var, 0, 0};
      forward->outputs.push_back(NodeEntry{e.node, e.index, 0});
    }
    return slot->second;
  };
  IndexedGraph bg(grads);
  for (uint32_t nid = 0; nid < bg.num_nodes(); ++nid) {
    const Node* n = bg[nid].node;
    if (n->IsVariable() || forward_nodes.count(n)) continue;
    auto copy = std::make_shared<Node>(*n);
    for (auto& e : copy->inputs) e = map_entry(e);
    copy->control_deps.clear();  // gradient nodes order themselves by data only
    copies[n] = std::move(copy);
  }
  Symbol backward;
  for (const NodeEntry& e : grads) backward.outputs.push_back(map_entry(e));
  return backward;
}

}  // namespace

namespace {

// The traced graph with BatchNorm + relu and FullyConnected + Activation as one op each (one pass
// over the activations fewer, and the backward reads no output the fusion hides) and a dense-label
// cross-entropy as one op (neither the product nor the broadcast output gradient is written), for
// the same floats.
Symbol FusedForTraining(const Symbol& traced) {
  size_t num_fused = 0;
  return FuseLogSoftmaxLabelSum(FuseActivationsForTraining(traced, &num_fused), &num_fused);
}

// The shapes of the inputs but their batch size: what the channel-last layout of a training graph
// depends on (LayOutChannelLastForTraining).
std::vector<std::vector<int64_t>> SampleShapes(const std::vector<NDArray>& inputs) {
  std::vector<std::vector<int64_t>> shapes;
  for (const NDArray& x : inputs) {
    const std::vector<int64_t> dims = x.shape().dims();
    shapes.emplace_back(dims.empty() ? dims.begin() : dims.begin() + 1, dims.end());
    shapes.back().push_back(static_cast<int64_t>(dims.size()));
  }
  return shapes;
}

// The Convolution nodes of `g`: with any, the training layout depends on the input shapes.
std::vector<uint32_t> ConvolutionNodes(const IndexedGraph& g) {
  const Op* convolution = OpRegistry::Global().Find("Convolution");
  std::vector<uint32_t> convolutions;
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid)
    if (!g[nid].node->IsVariable() && g[nid].node->attrs.op == convolution)
      convolutions.push_back(nid);
  return convolutions;
}

// `graph` (a forward, or a forward and its gradients) laid out channel-last for inputs of the
// shapes of `inputs` (named `names`) but their batch size, where it has float32 convolutions; else
// (or where its shapes are not known from the inputs alone: the executor then reports why) as it
// is.
Symbol ChannelLastForTraining(const Symbol& graph, const std::vector<std::string>& names,
                              const std::vector<NDArray>& inputs) {
  IndexedGraph g(graph.outputs);
  const std::vector<uint32_t> convolutions = ConvolutionNodes(g);
  if (convolutions.empty()) return graph;
  std::vector<Shape> shapes(g.num_entries());
  std::vector<DType> types(g.num_entries(), DType::kUnknown);
  std::unordered_map<std::string, size_t> index_of;
  for (size_t i = 0; i < names.size(); ++i) index_of[names[i]] = i;
  for (uint32_t nid : g.input_nodes()) {
    auto it = index_of.find(g[nid].node->name());
    if (it == index_of.end()) continue;  // a head gradient: inferred from what reads it
    shapes[g.entry_id(nid, 0)] = inputs[it->second].shape();
    types[g.entry_id(nid, 0)] = inputs[it->second].dtype();
  }
  try {
    if (!InferShapes(g, &shapes) || !InferTypes(g, &types)) return graph;
  } catch (const Error&) {
    return graph;
  }
  for (uint32_t nid : convolutions) {
    for (const IndexedGraph::Entry& e : g[nid].inputs)
      if (types[g.entry_id(e)] != DType::kFloat32) return graph;
  }
  size_t num_relayouts = 0;
  return LayOutChannelLastForTraining(graph, shapes, &num_relayouts);
}

}  // namespace

CachedOp::CachedOp(Symbol graph, std::vector<std::string> input_names, std::string name)
    : graph_(FusedForTraining(graph)),
      input_names_(std::move(input_names)),
      name_(std::move(name)),
      layout_by_shapes_(!ConvolutionNodes(IndexedGraph(graph_.outputs)).empty()) {}

size_t CachedOp::num_forward_plans() const {
  size_t n = 0;
  for (const auto& kv : graphs_) n += kv.second->forward->stats().num_plans;
  return n;
}

size_t CachedOp::num_backward_plans() const {
  size_t n = 0;
  for (const auto& kv : graphs_)
    for (const auto& backward : kv.second->backward)
      if (backward) n += backward->stats().num_plans;
  return n;
}

std::shared_ptr<TrainingGraph> CachedOp::GraphFor(const std::vector<bool>& needs_grad,
                                                  bool is_train,
                                                  const std::vector<NDArray>& inputs) {
  auto key = std::make_tuple(
      needs_grad, is_train,
      layout_by_shapes_ ? SampleShapes(inputs) : std::vector<std::vector<int64_t>>());
  auto it = graphs_.find(key);
  if (it != graphs_.end()) return it->second;
  auto g = std::make_shared<TrainingGraph>();
  g->num_outputs = graph_.outputs.size();
  Symbol forward;
  if (std::find(needs_grad.begin(), needs_grad.end(), true) == needs_grad.end()) {
    forward = ChannelLastForTraining(graph_, input_names_, inputs);
  } else {
    IndexedGraph fg(graph_.outputs);
    std::unordered_map<std::string, NodeEntry> variables;
    for (uint32_t nid = 0; nid < fg.num_nodes(); ++nid) {
      if (fg[nid].node->IsVariable())
        variables[fg[nid].node->name()] = NodeEntry{fg[nid].owner, 0, 0};
    }
    std::vector<NodeEntry> xs, head_grads;
    for (size_t i = 0; i < needs_grad.size(); ++i) {
      if (!needs_grad[i]) continue;
      xs.push_back(variables.at(input_names_[i]));
      g->grad_inputs.push_back(i);
    }
    std::map<std::string, BackwardFeed> feed_of;
    for (size_t i = 0; i < input_names_.size(); ++i)
      feed_of[input_names_[i]] = BackwardFeed{BackwardFeed::kInput, i};
    for (size_t k = 0; k < g->num_outputs; ++k) {
      auto var = std::make_shared<Node>();
      var->attrs.name = kHeadGradPrefix + std::to_string(k);
      feed_of[var->attrs.name] = BackwardFeed{BackwardFeed::kHeadGrad, k};
      head_grads.push_back(NodeEntry{var, 0, 0});
    }
    forward = graph_;
    try {
      // The forward and its gradients laid out together, after the gradient pass: the
      // gradients sum their contributions as over the channel-first graph (and eagerly), with
      // the same kernels' bits in either layout.
      Symbol joint = graph_;
      for (const NodeEntry& grad : Gradient(graph_.outputs, head_grads, xs))
        joint.outputs.push_back(grad);
      joint = ChannelLastForTraining(joint, input_names_, inputs);
      const auto split = joint.outputs.begin() + static_cast<std::ptrdiff_t>(g->num_outputs);
      forward.outputs.assign(joint.outputs.begin(), split);
      const std::vector<NodeEntry> grads(split, joint.outputs.end());
      std::unordered_set<const Node*> forward_nodes;
      IndexedGraph laid(forward.outputs);
      for (uint32_t nid = 0; nid < laid.num_nodes(); ++nid) forward_nodes.insert(laid[nid].node);
      g->backward_graph = SplitBackward(grads, forward_nodes, &forward, &feed_of);
      g->backward_inputs = g->backward_graph.ListInputs();
      for (const std::string& name : g->backward_inputs) g->feeds.push_back(feed_of.at(name));
      ++num_gradient_graphs_;
    } catch (const Error& e) {
      if (e.code() != StatusCode::kUnsupported) throw;
      g->backward_error = std::string(e.what()) + " (inside hybridized block " + name_ + ")";
    }
  }
  g->forward = std::make_unique<GraphExecutor>(
      forward, input_names_, std::map<std::string, NDArray>{}, TrainingOptions(is_train));
  graphs_.emplace(std::move(key), g);
  return g;
}

std::vector<NDArray> CachedOp::Run(const std::vector<NDArray>& inputs) {
  HN_CHECK(inputs.size() == input_names_.size(), kInternal)
      << name_ << ": the cached graph takes " << input_names_.size() << " inputs, got "
      << inputs.size();
  const bool recording = autograd::IsRecording();
  std::vector<bool> needs_grad(inputs.size(), false);
  std::vector<std::shared_ptr<TapeNode>> producers(inputs.size());
  bool any = false;
  for (size_t i = 0; i < inputs.size() && recording; ++i) {
    const std::shared_ptr<TapeNode>& node = TapeAccess::Node(inputs[i]);
    if (node == nullptr || node->released) continue;
    if (node->IsVariable() && node->grad_req == autograd::GradReq::kNull) continue;
    needs_grad[i] = true;
    producers[i] = node;
    any = true;
  }
  std::shared_ptr<TrainingGraph> g = GraphFor(needs_grad, autograd::IsTraining(), inputs);
  std::vector<NDArray> values = g->OutputsToFill();
  g->forward->Forward(inputs, &values);
  if (!any) {
    g->Recycle({values.begin() + static_cast<std::ptrdiff_t>(g->num_outputs), values.end()});
    values.resize(g->num_outputs);
    return values;
  }
  auto call = std::make_shared<CachedOpCall>();
  call->graph = g;
  for (const NDArray& x : inputs) call->inputs.push_back(autograd::Detach(x));
  call->saved.assign(values.begin() + static_cast<std::ptrdiff_t>(g->num_outputs), values.end());
  values.resize(g->num_outputs);

  auto node = std::make_shared<TapeNode>();
  node->attrs.op = &ForwardOp();
  node->attrs.name = name_;
  node->attrs.parsed = call;
  node->num_outputs = static_cast<uint32_t>(g->num_outputs);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const uint32_t output = producers[i] ? TapeAccess::Output(inputs[i]) : 0;
    node->inputs.emplace_back(std::move(producers[i]), output);
    node->saved_inputs.push_back(call->inputs[i]);  // the backward node reads them (see above)
  }
  // The outputs are kept: the gradient of an output no head reads is zeros_like of it.
  for (const NDArray& y : values) node->saved_outputs.push_back(autograd::Detach(y));
  for (size_t k = 0; k < values.size(); ++k)
    TapeAccess::Set(&values[k], node, static_cast<uint32_t>(k));
  return values;
}

}  // namespace internal
}  // namespace hybridnet
