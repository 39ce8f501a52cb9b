// Autograd (hybridnet/autograd.h): the per-thread modes, recording eager ops on the tape
// (autograd_tape.h), and backward: the tape reaching the heads becomes a graph, the gradient pass
// (pass/gradient.h) adds the gradient nodes, and they run through eager Invoke, so a gradient is
// computed by the same kernels, in the same order, as the graph executor runs them.
#include "hybridnet/autograd.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "hybridnet/imperative.h"
#include "hybridnet/symbol.h"
#include "imperative/autograd_tape.h"
#include "ops/kept_outputs.h"
#include "pass/gradient.h"
#include "pass/passes.h"

namespace hybridnet {
namespace autograd {
namespace {

constexpr std::pair<GradReq, const char*> kGradReqNames[] = {
    {GradReq::kNull, "null"}, {GradReq::kWrite, "write"}, {GradReq::kAdd, "add"}};

}  // namespace

const char* GradReqName(GradReq req) {
  for (const auto& [r, name] : kGradReqNames)
    if (r == req) return name;
  HN_THROW(kInvalidArgument) << "grad_req " << static_cast<int>(req) << " is not a GradReq";
}

GradReq GradReqByName(const std::string& name) {
  for (const auto& [r, n] : kGradReqNames)
    if (name == n) return r;
  HN_THROW(kInvalidArgument) << "grad_req '" << name << "' is not one of 'write', 'add', 'null'";
}

namespace {
// MXNet's defaults: not recording, not training.
thread_local bool recording = false;
thread_local bool training = false;
}  // namespace

bool IsRecording() { return recording; }
bool IsTraining() { return training; }

bool SetRecording(bool value) {
  const bool previous = recording;
  recording = value;
  return previous;
}

bool SetTraining(bool value) {
  const bool previous = training;
  training = value;
  return previous;
}

ModeScope::ModeScope(std::optional<bool> recording_mode, std::optional<bool> training_mode)
    : previous_recording_(recording), previous_training_(training) {
  if (recording_mode) recording = *recording_mode;
  if (training_mode) training = *training_mode;
}

ModeScope::~ModeScope() {
  recording = previous_recording_;
  training = previous_training_;
}

ModeScope Record(bool train_mode) { return ModeScope(true, train_mode); }
ModeScope Pause(bool train_mode) { return ModeScope(false, train_mode); }
ModeScope TrainMode() { return ModeScope(std::nullopt, true); }
ModeScope PredictMode() { return ModeScope(std::nullopt, false); }

}  // namespace autograd

namespace internal {

namespace {

using autograd::GradReq;

// Names for unnamed recorded ops and variables, for messages ("node_12"), as MXNet names them.
std::string NextName(const char* prefix) {
  static std::atomic<uint64_t> count{0};
  return prefix + std::to_string(count.fetch_add(1, std::memory_order_relaxed));
}

NDArray Detached(const NDArray& a) {
  NDArray d = a;
  TapeAccess::Set(&d, nullptr, 0);
  return d;
}

// Which inputs and outputs (of `num_outputs`, hidden ones included) the op's gradient reads
// (MXNet's GetBackwardDependency): the gradient is built once over placeholders and the nodes it
// reaches are looked at. An op with several visible outputs keeps them all: the gradient pass
// gives an output no head depends on a zeros_like gradient, which reads that output.
void BackwardDependencies(const NodeAttrs& attrs, size_t num_inputs, size_t num_outputs,
                          std::vector<bool>* save_inputs, std::vector<bool>* save_outputs) {
  const size_t visible = attrs.op->NumOutputs(attrs);
  save_inputs->assign(num_inputs, false);
  save_outputs->assign(num_outputs, false);
  for (size_t i = 0; i < visible && i < num_outputs; ++i) (*save_outputs)[i] = visible > 1;
  if (!attrs.op->gradient) return;  // backward through it fails anyway, naming the op
  auto node = std::make_shared<Node>();
  node->attrs = attrs;
  std::vector<const Node*> placeholders;
  for (size_t i = 0; i < num_inputs; ++i) {
    node->inputs.push_back(NodeEntry{std::make_shared<Node>(), 0, 0});
    placeholders.push_back(node->inputs.back().node.get());
  }
  std::vector<NodeEntry> out_grads;
  for (size_t i = 0; i < num_outputs; ++i)
    out_grads.push_back(NodeEntry{std::make_shared<Node>(), 0, 0});
  std::vector<NodeEntry> grads;
  try {
    grads = attrs.op->gradient(node, out_grads);
  } catch (const Error&) {
    // A gradient these attributes do not support: backward reports it, recording must not.
    return;
  }
  std::vector<const Node*> stack;
  std::unordered_set<const Node*> seen;
  auto visit = [&](const NodeEntry& e) {
    const Node* n = e.node.get();
    if (n == node.get()) {
      HN_CHECK(e.index < num_outputs, kInternal)
          << "the gradient of " << DescribeNode(attrs) << " reads output " << e.index
          << ", which the call did not compute (" << num_outputs << " outputs)";
      (*save_outputs)[e.index] = true;
      return;
    }
    for (size_t i = 0; i < num_inputs; ++i) {
      if (placeholders[i] == n) (*save_inputs)[i] = true;
    }
    if (seen.insert(n).second) stack.push_back(n);
  };
  for (const auto& e : grads) visit(e);
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    for (const auto& e : n->inputs) visit(e);
  }
}

}  // namespace

uint32_t OutputsToCompute(const NodeAttrs& attrs, size_t num_inputs) {
  const uint32_t visible = attrs.op->NumOutputs(attrs);
  if (!autograd::IsRecording()) return visible;
  const uint32_t total = NumReadableOutputs(attrs);
  if (total <= visible) return visible;
  std::vector<bool> save_inputs, save_outputs;
  BackwardDependencies(attrs, num_inputs, total, &save_inputs, &save_outputs);
  uint32_t count = visible;
  for (uint32_t i = visible; i < total; ++i)
    if (save_outputs[i]) count = i + 1;
  return count;
}

TapeNode::~TapeNode() {
  std::vector<std::shared_ptr<TapeNode>> pending;
  auto take_inputs = [&pending](TapeNode& n) {
    for (auto& input : n.inputs)
      if (input.first) pending.push_back(std::move(input.first));
    n.inputs.clear();
  };
  take_inputs(*this);
  while (!pending.empty()) {
    std::shared_ptr<TapeNode> n = std::move(pending.back());
    pending.pop_back();
    // The last owner empties the node first, so its own destructor has nothing left to release.
    if (n.use_count() == 1) take_inputs(*n);
  }
}

void RecordOp(const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
              std::vector<NDArray>* outputs) {
  if (!autograd::IsRecording()) return;
  // An array whose recorded op a backward released counts as a constant, as in MXNet (an RNN
  // state carried into the next batch).
  std::vector<std::shared_ptr<TapeNode>> producers;
  bool on_tape = false;
  for (const auto& x : inputs) {
    const std::shared_ptr<TapeNode>& producer = TapeAccess::Node(x);
    producers.push_back(producer != nullptr && !producer->released ? producer : nullptr);
    on_tape = on_tape || producers.back() != nullptr;
  }
  if (!on_tape) return;
  auto node = std::make_shared<TapeNode>();
  node->attrs = attrs;
  if (node->attrs.name.empty()) node->attrs.name = NextName("node_");
  node->num_outputs = std::min(attrs.op->NumOutputs(attrs), static_cast<uint32_t>(outputs->size()));
  std::vector<bool> save_inputs, save_outputs;
  BackwardDependencies(attrs, inputs.size(), outputs->size(), &save_inputs, &save_outputs);
  for (size_t i = 0; i < inputs.size(); ++i) {
    node->inputs.emplace_back(std::move(producers[i]), TapeAccess::Output(inputs[i]));
    node->saved_inputs.push_back(save_inputs[i] ? Detached(inputs[i]) : NDArray());
  }
  for (size_t i = 0; i < outputs->size(); ++i) {
    node->saved_outputs.push_back(save_outputs[i] ? Detached((*outputs)[i]) : NDArray());
  }
  for (size_t i = 0; i < outputs->size(); ++i) {
    TapeAccess::Set(&(*outputs)[i], node, static_cast<uint32_t>(i));
  }
}

namespace {

// The part of the tape that reaches the heads, as a graph: one node per tape node, a variable
// node per constant input, and the values the gradient nodes may read.
struct TapeGraph {
  std::vector<NodeEntry> heads;
  /// Output values of every graph node made from the tape (none where not kept).
  std::unordered_map<const Node*, std::vector<NDArray>> values;
  /// Marked variables in the order the walk first reaches them.
  std::vector<std::pair<TapeNode*, NodeEntry>> variables;
  std::unordered_map<const TapeNode*, std::shared_ptr<Node>> nodes;
  /// The tape node each graph node was made from (for create_graph: values back on the tape).
  std::unordered_map<const Node*, std::shared_ptr<TapeNode>> tape_of;
  /// Recorded ops reached (released by a backward without retain_graph).
  std::vector<TapeNode*> ops;
};

void CheckHead(const char* caller, const NDArray& head, size_t i) {
  HN_CHECK(!head.is_none(), kInvalidArgument) << caller << ": head " << i << " is a none array";
  HN_CHECK(!head.is_symbolic(), kInvalidArgument)
      << caller << ": head " << i << " is symbolic (a value inside a hybridize() trace); "
      << "differentiate concrete results";
  const std::shared_ptr<TapeNode>& node = TapeAccess::Node(head);
  HN_CHECK(node != nullptr, kInvalidArgument)
      << caller << ": head " << i << " is not on a recorded graph: compute it inside "
      << "autograd::Record() from arrays marked with AttachGrad (MXNet: \"Cannot differentiate "
      << "node because it is not in a computational graph\")";
  HN_CHECK(!node->released, kInvalidArgument)
      << caller << ": the graph that computed head " << i << " was released by an earlier "
      << "backward; pass retain_graph=true to that backward to differentiate the graph twice";
}

TapeGraph BuildTapeGraph(const char* caller, const std::vector<NDArray>& heads) {
  TapeGraph g;
  for (size_t i = 0; i < heads.size(); ++i) CheckHead(caller, heads[i], i);
  // Iterative post-order walk: a node is made once the nodes of its inputs are.
  struct Frame {
    std::shared_ptr<TapeNode> tape;
    size_t next;
  };
  for (const NDArray& head : heads) {
    std::vector<Frame> stack{{TapeAccess::Node(head), 0}};
    while (!stack.empty()) {
      Frame& top = stack.back();
      TapeNode* t = top.tape.get();
      if (g.nodes.count(t)) {
        stack.pop_back();
        continue;
      }
      if (top.next < t->inputs.size()) {
        const std::shared_ptr<TapeNode>& producer = t->inputs[top.next++].first;
        if (producer != nullptr && !g.nodes.count(producer.get()))
          stack.push_back(Frame{producer, 0});
        continue;
      }
      auto node = std::make_shared<Node>();
      node->attrs = t->attrs;
      std::vector<NDArray>& outputs = g.values[node.get()];
      if (t->IsVariable()) {
        outputs.resize(1);
        g.variables.emplace_back(t, NodeEntry{node, 0, 0});
      } else {
        HN_CHECK(!t->released, kInvalidArgument)
            << caller << ": the recorded graph through " << DescribeNode(t->attrs)
            << " was released by an earlier backward; pass retain_graph=true to that backward to "
            << "differentiate the graph twice";
        outputs = t->saved_outputs;
        for (size_t i = 0; i < t->inputs.size(); ++i) {
          const auto& [producer, index] = t->inputs[i];
          NodeEntry entry;
          if (producer != nullptr) {
            entry = NodeEntry{g.nodes.at(producer.get()), index, 0};
          } else {
            auto constant = std::make_shared<Node>();
            constant->attrs.name = t->attrs.name + "_input" + std::to_string(i);
            g.values[constant.get()].resize(1);
            entry = NodeEntry{constant, 0, 0};
          }
          if (!t->saved_inputs[i].is_none())
            g.values[entry.node.get()][entry.index] = t->saved_inputs[i];
          node->inputs.push_back(std::move(entry));
        }
        g.ops.push_back(t);
      }
      g.nodes[t] = node;
      g.tape_of[node.get()] = top.tape;
      stack.pop_back();
    }
  }
  for (const NDArray& head : heads) {
    g.heads.push_back(
        NodeEntry{g.nodes.at(TapeAccess::Node(head).get()), TapeAccess::Output(head), 0});
  }
  return g;
}

// Head gradient variables, with their values (ones where none is given).
std::vector<NodeEntry> HeadGradients(const char* caller, const std::vector<NDArray>& heads,
                                     const std::vector<NDArray>& head_grads, TapeGraph* g) {
  HN_CHECK(head_grads.empty() || head_grads.size() == heads.size(), kInvalidArgument)
      << caller << ": " << heads.size() << " heads but " << head_grads.size()
      << " head gradients (give one per head, or none for all ones)";
  std::vector<NodeEntry> entries;
  for (size_t i = 0; i < heads.size(); ++i) {
    NDArray grad = i < head_grads.size() ? head_grads[i] : NDArray();
    if (grad.is_none()) {
      grad = NDArray::Ones(heads[i].shape(), heads[i].dtype());
    } else {
      HN_CHECK(!grad.is_symbolic(), kInvalidArgument)
          << caller << ": head gradient " << i << " is symbolic";
      HN_CHECK(grad.shape() == heads[i].shape(), kShapeError)
          << caller << ": head gradient " << i << " has shape " << grad.shape() << ", head " << i
          << " has shape " << heads[i].shape();
      HN_CHECK(grad.dtype() == heads[i].dtype(), kTypeError)
          << caller << ": head gradient " << i << " has dtype " << DTypeName(grad.dtype())
          << ", head " << i << " has dtype " << DTypeName(heads[i].dtype());
    }
    auto var = std::make_shared<Node>();
    var->attrs.name = "head_grad_" + std::to_string(i);
    g->values[var.get()] = {Detached(grad)};
    entries.push_back(NodeEntry{var, 0, 0});
  }
  return entries;
}

// For create_graph: the kept values of tape nodes are put back on the tape, so the gradient ops
// that read them are recorded as functions of the variables.
void AttachValuesToTape(TapeGraph* g) {
  for (auto& [node, values] : g->values) {
    auto tape = g->tape_of.find(node);
    if (tape == g->tape_of.end()) continue;  // a constant or a head gradient
    for (size_t k = 0; k < values.size(); ++k)
      if (!values[k].is_none()) TapeAccess::Set(&values[k], tape->second, static_cast<uint32_t>(k));
  }
}

// The arrays among `destinations` each output entry of `graph` computed by a run node may be
// written into (by entry id): one given for an entry that is output once, sharing storage with no
// kept value (which gradient nodes may read) and no other destination.
std::unordered_map<uint32_t, NDArray> WritableDestinations(
    const IndexedGraph& graph, const std::vector<char>& run,
    const std::unordered_map<const Node*, std::vector<NDArray>>& known,
    const std::vector<NDArray>& destinations) {
  std::unordered_map<uint32_t, NDArray> into;
  if (destinations.empty()) return into;
  std::unordered_map<uint32_t, int> times_output;
  for (const auto& e : graph.outputs()) ++times_output[graph.entry_id(e)];
  auto shared = [&](const NDArray& d, size_t self) {
    for (const auto& [node, values] : known) {
      for (const NDArray& v : values)
        if (v.SharesStorageWith(d)) return true;
    }
    for (size_t j = 0; j < destinations.size(); ++j)
      if (j != self && destinations[j].SharesStorageWith(d)) return true;
    return false;
  };
  for (size_t j = 0; j < destinations.size(); ++j) {
    const IndexedGraph::Entry& e = graph.outputs()[j];
    const uint32_t eid = graph.entry_id(e);
    if (destinations[j].is_none() || !run[e.node_id] || times_output[eid] != 1) continue;
    if (!shared(destinations[j], j)) into.emplace(eid, destinations[j]);
  }
  return into;
}

// Runs the gradient nodes reaching `outputs` with eager Invoke; nodes in `known` (the forward
// graph and the head gradients) are not run, their kept values are read. Values are dropped
// after their last use. Outputs are new arrays, or destinations[j] for output j where that is
// given and can be written into (WritableDestinations, InvokeInto; never while recording): an
// output that is a kept value (an identity gradient passes the head gradient on) is copied.
std::vector<NDArray> RunGradientGraph(
    const std::vector<NodeEntry>& outputs,
    const std::unordered_map<const Node*, std::vector<NDArray>>& known,
    const std::vector<NDArray>& destinations) {
  IndexedGraph graph(outputs);
  std::vector<NDArray> values(graph.num_entries());
  std::vector<uint32_t> uses(graph.num_entries(), 0);
  std::vector<char> run(graph.num_nodes(), 0);
  for (uint32_t nid = 0; nid < graph.num_nodes(); ++nid) {
    run[nid] = known.count(graph[nid].node) == 0;
    if (!run[nid]) continue;
    HN_CHECK(!graph[nid].node->IsVariable(), kInternal)
        << "backward: gradient graph variable '" << graph[nid].node->name() << "' has no value";
    for (const auto& e : graph[nid].inputs) ++uses[graph.entry_id(e)];
  }
  for (const auto& e : graph.outputs()) ++uses[graph.entry_id(e)];
  const std::unordered_map<uint32_t, NDArray> into =
      autograd::IsRecording() ? std::unordered_map<uint32_t, NDArray>()
                              : WritableDestinations(graph, run, known, destinations);
  for (uint32_t nid = 0; nid < graph.num_nodes(); ++nid) {
    const Node* node = graph[nid].node;
    if (!run[nid]) {
      // A node recorded with hidden outputs has entries here only for those read.
      const std::vector<NDArray>& kept = known.at(node);
      for (uint32_t k = 0; k < kept.size() && k < NumEntriesOf(graph, nid); ++k)
        values[graph.entry_id(nid, k)] = kept[k];
      continue;
    }
    std::vector<NDArray> inputs;
    for (const auto& e : graph[nid].inputs) {
      const NDArray& v = values[graph.entry_id(e)];
      HN_CHECK(!v.is_none(), kInternal)
          << "backward: " << DescribeNode(node->attrs) << " reads output " << e.index << " of "
          << DescribeNode(graph[e.node_id].node->attrs)
          << ", whose value was not kept when it was recorded";
      inputs.push_back(v);
    }
    std::vector<NDArray> node_destinations;
    for (uint32_t k = 0; !into.empty() && k < node->NumOutputs(); ++k) {
      auto it = into.find(graph.entry_id(nid, k));
      if (it == into.end()) continue;
      node_destinations.resize(k + 1);
      node_destinations[k] = it->second;
    }
    std::vector<NDArray> results = InvokeInto(node->attrs, inputs, node_destinations);
    for (uint32_t k = 0; k < results.size(); ++k)
      values[graph.entry_id(nid, k)] = std::move(results[k]);
    for (const auto& e : graph[nid].inputs) {
      if (--uses[graph.entry_id(e)] == 0) values[graph.entry_id(e)] = NDArray();
    }
  }
  std::vector<NDArray> result;
  for (const auto& e : graph.outputs()) {
    const NDArray& v = values[graph.entry_id(e)];
    HN_CHECK(!v.is_none(), kInternal) << "backward: a gradient's value was not kept";
    // Under create_graph the copy is recorded too.
    if (run[e.node_id]) {
      result.push_back(v);
    } else {
      result.push_back(autograd::IsRecording() ? Invoke("_copy", {v})[0] : v.Copy());
    }
  }
  return result;
}

void Release(const TapeGraph& g) {
  for (TapeNode* t : g.ops) {
    t->released = true;
    t->inputs.clear();
    t->saved_inputs.clear();
    t->saved_outputs.clear();
    t->attrs.parsed.reset();  // a hybridized call's kept activations (cached_op.h)
  }
}

}  // namespace

bool IsGradFresh(const NDArray& x) {
  const std::shared_ptr<TapeNode>& node = TapeAccess::Node(x);
  return node != nullptr && node->IsVariable() && node->fresh_grad;
}

void SetGradFresh(const NDArray& x, bool fresh) {
  const std::shared_ptr<TapeNode>& node = TapeAccess::Node(x);
  if (node != nullptr && node->IsVariable()) node->fresh_grad = fresh;
}

}  // namespace internal

namespace autograd {

using internal::TapeAccess;
using internal::TapeNode;

void MarkVariables(const std::vector<NDArray*>& variables, const std::vector<NDArray>& gradients,
                   const std::vector<GradReq>& reqs) {
  HN_CHECK(gradients.size() == variables.size() && reqs.size() == variables.size(),
           kInvalidArgument)
      << "MarkVariables: " << variables.size() << " variables, " << gradients.size()
      << " gradient arrays and " << reqs.size() << " grad_reqs (one each)";
  for (size_t i = 0; i < variables.size(); ++i) {
    const NDArray* x = variables[i];
    HN_CHECK(x != nullptr && !x->is_none(), kInvalidArgument)
        << "MarkVariables: variable " << i << " is null or a none array";
    HN_CHECK(!x->is_symbolic(), kInvalidArgument)
        << "MarkVariables: variable " << i << " is symbolic (inside a hybridize() trace)";
    const DType d = x->dtype();
    HN_CHECK(d == DType::kFloat32 || d == DType::kFloat64 || d == DType::kFloat16 ||
                 d == DType::kBFloat16,
             kTypeError)
        << "MarkVariables: variable " << i << " has dtype " << DTypeName(d)
        << "; only floating-point arrays have gradients";
    const NDArray& grad = gradients[i];
    HN_CHECK(!grad.is_none() && !grad.is_symbolic(), kInvalidArgument)
        << "MarkVariables: gradient array " << i << " is a none or symbolic array";
    HN_CHECK(grad.shape() == x->shape(), kShapeError)
        << "MarkVariables: gradient array " << i << " has shape " << grad.shape()
        << ", its variable " << x->shape();
    HN_CHECK(grad.dtype() == d, kTypeError)
        << "MarkVariables: gradient array " << i << " has dtype " << DTypeName(grad.dtype())
        << ", its variable " << DTypeName(d);
    HN_CHECK(reqs[i] == GradReq::kNull || reqs[i] == GradReq::kWrite || reqs[i] == GradReq::kAdd,
             kInvalidArgument)
        << "MarkVariables: grad_req " << static_cast<int>(reqs[i]) << " of variable " << i
        << " is not null (0), write (1) or add (3)";
  }
  for (size_t i = 0; i < variables.size(); ++i) {
    auto node = std::make_shared<TapeNode>();
    node->attrs.name = internal::NextName("var");
    node->num_outputs = 1;
    node->grad = internal::Detached(gradients[i]);
    node->grad_req = reqs[i];
    TapeAccess::Set(variables[i], std::move(node), 0);
  }
}

void AttachGrad(NDArray* x, GradReq req) {
  HN_CHECK(x != nullptr && !x->is_none() && !x->is_symbolic(), kInvalidArgument)
      << "AttachGrad: the array is null, none or symbolic";
  MarkVariables({x}, {NDArray::Zeros(x->shape(), x->dtype())}, {req});
}

NDArray GetGrad(const NDArray& x) {
  const std::shared_ptr<TapeNode>& node = TapeAccess::Node(x);
  return node != nullptr && node->IsVariable() ? node->grad : NDArray();
}

NDArray Detach(const NDArray& x) { return internal::Detached(x); }

namespace {

// Builds and runs the gradients of `heads` with respect to `xs` (entries of graph.variables).
// `destinations`: what RunGradientGraph may write the gradients into (none: new arrays).
std::vector<NDArray> RunGradients(internal::TapeGraph* g, const char* caller,
                                  const std::vector<NDArray>& heads,
                                  const std::vector<NDArray>& head_grads,
                                  const std::vector<NodeEntry>& xs, bool train_mode,
                                  bool create_graph,
                                  const std::vector<NDArray>& destinations = {}) {
  std::vector<NodeEntry> ys_grads = internal::HeadGradients(caller, heads, head_grads, g);
  std::vector<NodeEntry> grads = internal::Gradient(g->heads, ys_grads, xs);
  if (create_graph) internal::AttachValuesToTape(g);
  ModeScope mode(create_graph, train_mode);
  return internal::RunGradientGraph(grads, g->values, destinations);
}

// Whether `a` and `b` are the same bytes (one written into the other's place).
bool IsSameArray(const NDArray& a, const NDArray& b) {
  return a.SharesStorageWith(b) && a.nbytes() == b.nbytes() && a.dtype() == b.dtype() &&
         static_cast<const NDArray&>(a).raw_data() == static_cast<const NDArray&>(b).raw_data();
}

}  // namespace

void Backward(const std::vector<NDArray>& heads, const std::vector<NDArray>& head_grads,
              bool retain_graph, bool train_mode) {
  internal::TapeGraph g = internal::BuildTapeGraph("backward", heads);
  std::vector<NodeEntry> xs;
  std::vector<TapeNode*> targets;
  for (const auto& [tape, entry] : g.variables) {
    if (tape->grad_req == GradReq::kNull) continue;
    xs.push_back(entry);
    targets.push_back(tape);
  }
  HN_CHECK(!xs.empty(), kInvalidArgument)
      << "backward: no variable the heads were computed from wants a gradient (none was marked "
         "with AttachGrad, or all have grad_req null)";
  // Gradients written (grad_req write) go straight into the buffers where they can: an 8 MB
  // weight's gradient copied after every step cost 2% of an LSTM LM's step.
  std::vector<NDArray> destinations(targets.size());
  for (size_t i = 0; i < targets.size(); ++i)
    if (targets[i]->grad_req == GradReq::kWrite) destinations[i] = targets[i]->grad;
  std::vector<NDArray> grads = RunGradients(&g, "backward", heads, head_grads, xs, train_mode,
                                            /*create_graph=*/false, destinations);
  for (size_t i = 0; i < targets.size(); ++i) {
    NDArray& buffer = targets[i]->grad;
    if (targets[i]->grad_req == GradReq::kAdd) {
      buffer.CopyFrom(Invoke("elemwise_add", {buffer, grads[i]})[0]);
    } else if (!IsSameArray(grads[i], buffer)) {
      buffer.CopyFrom(grads[i]);
    }
    targets[i]->fresh_grad = true;
  }
  if (!retain_graph) internal::Release(g);
}

std::vector<NDArray> Grad(const std::vector<NDArray>& heads, const std::vector<NDArray>& variables,
                          const std::vector<NDArray>& head_grads, bool retain_graph,
                          bool train_mode, bool create_graph) {
  internal::TapeGraph g = internal::BuildTapeGraph("grad", heads);
  HN_CHECK(!variables.empty(), kInvalidArgument) << "grad: no variables given";
  std::vector<NodeEntry> xs;
  for (size_t i = 0; i < variables.size(); ++i) {
    const std::shared_ptr<TapeNode>& node = TapeAccess::Node(variables[i]);
    HN_CHECK(node != nullptr && node->IsVariable(), kInvalidArgument)
        << "grad: variable " << i << " is not marked: call AttachGrad on it before recording "
        << "(MXNet: \"Cannot differentiate with respect to the " << i + 1
        << "-th variable because it does not require gradient\")";
    auto it = g.nodes.find(node.get());
    HN_CHECK(it != g.nodes.end(), kInvalidArgument)
        << "grad: variable " << i << " is not reachable from the heads";
    xs.push_back(NodeEntry{it->second, 0, 0});
  }
  std::vector<NDArray> grads =
      RunGradients(&g, "grad", heads, head_grads, xs, train_mode, create_graph);
  if (!retain_graph) internal::Release(g);
  return grads;
}

}  // namespace autograd
}  // namespace hybridnet
