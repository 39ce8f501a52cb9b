#include "hybridnet/executor.h"

#include <algorithm>
#include <cstring>
#include <list>

#include "pass/passes.h"

namespace hybridnet {

namespace {

constexpr size_t kSlotAlignment = 64;
constexpr size_t kMaxCachedPlans = 8;

// Where an entry's bytes live.
enum class SlotKind { kArena, kData, kParam, kOutput };

struct KernelCall {
  const FCompute* compute;
  const NodeAttrs* attrs;
  std::vector<TBlob> in, out;
};

// A data pointer inside a kernel's blobs that changes per call (data inputs, user outputs).
struct Patch {
  void** target;
  SlotKind kind;
  size_t index;
};

// Graph outputs that no kernel writes directly (variables, views, repeated entries): copied
// from a fixed address (arena, parameter) or from a per-call array (data input, other output).
struct OutputCopy {
  size_t output;
  SlotKind kind;
  size_t index;
  const void* fixed_src;
  size_t nbytes;
};

struct Plan {
  std::vector<Shape> data_shapes;
  std::vector<DType> data_types;
  std::vector<Shape> out_shapes;
  std::vector<DType> out_types;
  std::vector<KernelCall> kernels;
  std::vector<Patch> patches;
  std::vector<OutputCopy> copies;
  NDArray arena;
  size_t arena_bytes = 0;
  size_t naive_bytes = 0;
};

size_t Align(size_t n) { return (n + kSlotAlignment - 1) / kSlotAlignment * kSlotAlignment; }

}  // namespace

struct GraphExecutor::Impl {
  Symbol symbol;     // as given (what callers see)
  Symbol optimized;  // after fusion
  std::unique_ptr<IndexedGraph> graph;
  std::vector<std::string> data_names;
  std::vector<uint32_t> data_nodes;
  std::map<uint32_t, NDArray> param_of_node;
  ExecutorOptions options;
  size_t num_fused = 0;
  size_t num_plans = 0;
  std::list<Plan> plans;  // most recently used first
  std::vector<void*> data_ptrs, output_ptrs;

  Plan& PlanFor(const std::vector<NDArray>& data);
  Plan MakePlan(const std::vector<NDArray>& data);
  void Run(Plan& plan, const std::vector<NDArray>& data, std::vector<NDArray>* outputs);
};

GraphExecutor::GraphExecutor(const Symbol& symbol, std::vector<std::string> data_names,
                             std::map<std::string, NDArray> params, ExecutorOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.symbol = symbol;
  m.options = options;
  m.optimized = options.fuse ? internal::FuseOps(symbol, &m.num_fused) : symbol;
  m.graph = std::make_unique<IndexedGraph>(m.optimized.outputs);
  m.data_names = std::move(data_names);
  const IndexedGraph& g = *m.graph;
  std::map<std::string, uint32_t> variables;
  for (uint32_t nid : g.input_nodes()) variables[g[nid].node->name()] = nid;
  for (const auto& name : m.data_names) {
    auto it = variables.find(name);
    HN_CHECK(it != variables.end(), kNotFound) << "data input '" << name << "' is not a variable of the graph";
    m.data_nodes.push_back(it->second);
  }
  for (const auto& kv : variables) {
    if (std::find(m.data_names.begin(), m.data_names.end(), kv.first) != m.data_names.end()) continue;
    auto it = params.find(kv.first);
    HN_CHECK(it != params.end(), kNotFound)
        << "no value for graph input '" << kv.first
        << "': pass it as a parameter or list it among the data inputs";
    HN_CHECK(!it->second.is_none() && !it->second.is_symbolic(), kInvalidArgument)
        << "parameter '" << kv.first << "' has no value";
    m.param_of_node[kv.second] = it->second;
  }
}

GraphExecutor::~GraphExecutor() = default;
GraphExecutor::GraphExecutor(GraphExecutor&&) noexcept = default;
GraphExecutor& GraphExecutor::operator=(GraphExecutor&&) noexcept = default;

namespace {

// Infers every entry's shape and dtype of `g` from the values of its variables (by name).
void InferEntries(const IndexedGraph& g, const std::map<std::string, const NDArray*>& values,
                  std::vector<Shape>* shapes, std::vector<DType>* types) {
  shapes->assign(g.num_entries(), Shape());
  types->assign(g.num_entries(), DType::kUnknown);
  for (uint32_t nid : g.input_nodes()) {
    const NDArray* v = values.at(g[nid].node->name());
    (*shapes)[g.entry_id(nid, 0)] = v->shape();
    (*types)[g.entry_id(nid, 0)] = v->dtype();
  }
  if (!internal::InferShapes(g, shapes)) {
    for (uint32_t nid = 0; nid < g.num_nodes(); ++nid)
      for (uint32_t i = 0; i < g[nid].node->NumOutputs(); ++i)
        HN_CHECK((*shapes)[g.entry_id(nid, i)].IsKnown(), kShapeError)
            << "cannot infer the shape of '" << g[nid].node->name() << "' from the given input shapes";
  }
  HN_CHECK(internal::InferTypes(g, types), kTypeError) << "cannot infer every dtype of the graph";
  for (uint32_t nid : g.input_nodes()) {
    const NDArray* v = values.at(g[nid].node->name());
    HN_CHECK((*shapes)[g.entry_id(nid, 0)] == v->shape(), kShapeError)
        << "'" << g[nid].node->name() << "' has shape " << v->shape() << " but the graph needs "
        << (*shapes)[g.entry_id(nid, 0)];
  }
}

}  // namespace

Plan GraphExecutor::Impl::MakePlan(const std::vector<NDArray>& data) {
  const IndexedGraph& g = *graph;
  Plan plan;
  std::map<std::string, const NDArray*> values;
  for (size_t i = 0; i < data.size(); ++i) {
    values[data_names[i]] = &data[i];
    plan.data_shapes.push_back(data[i].shape());
    plan.data_types.push_back(data[i].dtype());
  }
  for (const auto& kv : param_of_node) values[g[kv.first].node->name()] = &kv.second;
  std::vector<Shape> shapes;
  std::vector<DType> types;
  // Errors are reported on the graph as written (names and ops the caller knows), then the
  // optimized graph is planned.
  if (num_fused > 0) InferEntries(IndexedGraph(symbol.outputs), values, &shapes, &types);
  InferEntries(g, values, &shapes, &types);

  // Which entry lives where: slot kind + index (+ byte offset for arena slots).
  struct Place {
    SlotKind kind = SlotKind::kArena;
    size_t index = 0;
  };
  std::vector<Place> place(g.num_entries());
  std::vector<int> uses(g.num_entries(), 0);
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid)
    for (const auto& e : g[nid].inputs) ++uses[g.entry_id(e)];
  for (size_t i = 0; i < data.size(); ++i) place[g.entry_id(data_nodes[i], 0)] = {SlotKind::kData, i};
  std::vector<void*> param_ptrs;
  for (const auto& kv : param_of_node) {
    place[g.entry_id(kv.first, 0)] = {SlotKind::kParam, param_ptrs.size()};
    param_ptrs.push_back(const_cast<void*>(kv.second.raw_data()));
  }
  // Graph outputs written by their producing kernel straight into the caller's arrays.
  std::vector<bool> written_to_output(g.outputs().size(), false);
  std::map<uint32_t, size_t> output_of_entry;
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    uint32_t eid = g.entry_id(g.outputs()[i]);
    const Node* producer = g[g.outputs()[i].node_id].node;
    if (producer->IsVariable() || producer->attrs.op->identity_view || output_of_entry.count(eid)) continue;
    output_of_entry[eid] = i;
    place[eid] = {SlotKind::kOutput, i};
    written_to_output[i] = true;
  }

  // Arena slots reused by liveness: slot_uses counts pending reads of every entry in the slot.
  std::vector<size_t> slot_bytes;
  std::vector<int> slot_uses;
  std::vector<size_t> free_slots;
  auto bytes_of = [&](uint32_t eid) {
    return static_cast<size_t>(shapes[eid].Size()) * DTypeSize(types[eid]);
  };
  auto take_slot = [&](size_t nbytes) {
    auto best = free_slots.end();
    for (auto it = free_slots.begin(); it != free_slots.end(); ++it) {
      if (slot_bytes[*it] >= nbytes && (best == free_slots.end() || slot_bytes[*it] < slot_bytes[*best])) best = it;
    }
    if (best == free_slots.end() && !free_slots.empty()) {
      best = std::max_element(free_slots.begin(), free_slots.end(),
                              [&](size_t a, size_t b) { return slot_bytes[a] < slot_bytes[b]; });
    }
    if (best == free_slots.end()) {
      slot_bytes.push_back(nbytes);
      slot_uses.push_back(0);
      return slot_bytes.size() - 1;
    }
    size_t slot = *best;
    free_slots.erase(best);
    slot_bytes[slot] = std::max(slot_bytes[slot], nbytes);
    return slot;
  };

  struct PendingCall {
    uint32_t nid;
    std::vector<uint32_t> in_eids, out_eids;
  };
  std::vector<PendingCall> calls;
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) {
    const Node* node = g[nid].node;
    if (node->IsVariable()) continue;
    const Op& op = *node->attrs.op;
    PendingCall call{nid, {}, {}};
    for (const auto& e : g[nid].inputs) call.in_eids.push_back(g.entry_id(e));
    for (uint32_t i = 0; i < node->NumOutputs(); ++i) call.out_eids.push_back(g.entry_id(nid, i));

    uint32_t out0 = call.out_eids[0];
    bool view = op.identity_view && place[out0].kind == SlotKind::kArena && options.plan_memory;
    if (view) {
      place[out0] = place[call.in_eids[0]];
      if (place[out0].kind == SlotKind::kArena) slot_uses[place[out0].index] += uses[out0];
    } else {
      for (uint32_t eid : call.out_eids) {
        plan.naive_bytes += Align(bytes_of(eid));
        if (place[eid].kind != SlotKind::kArena) continue;
        size_t slot = SIZE_MAX;
        for (const auto& io : op.inplace) {
          if (io.second != eid - out0 || io.first >= call.in_eids.size()) continue;
          uint32_t in_eid = call.in_eids[io.first];
          const Place& p = place[in_eid];
          bool sole_reader = std::count(call.in_eids.begin(), call.in_eids.end(), in_eid) == 1;
          if (options.plan_memory && p.kind == SlotKind::kArena && slot_uses[p.index] == 1 &&
              sole_reader && bytes_of(in_eid) == bytes_of(eid)) {
            slot = p.index;
          }
        }
        if (slot == SIZE_MAX) slot = options.plan_memory ? take_slot(bytes_of(eid)) : SIZE_MAX;
        if (slot == SIZE_MAX) {
          slot_bytes.push_back(bytes_of(eid));
          slot_uses.push_back(0);
          slot = slot_bytes.size() - 1;
        }
        place[eid] = {SlotKind::kArena, slot};
        slot_uses[slot] += uses[eid];
      }
      calls.push_back(call);
    }
    for (uint32_t eid : call.in_eids) {
      const Place& p = place[eid];
      if (p.kind != SlotKind::kArena) continue;
      if (--slot_uses[p.index] == 0 && options.plan_memory) free_slots.push_back(p.index);
    }
    // Outputs nobody reads (hidden or unused) give their slot back at once.
    for (uint32_t eid : call.out_eids) {
      const Place& p = place[eid];
      if (!view && p.kind == SlotKind::kArena && slot_uses[p.index] == 0 && options.plan_memory &&
          std::find(free_slots.begin(), free_slots.end(), p.index) == free_slots.end()) {
        free_slots.push_back(p.index);
      }
    }
  }
  // Outputs not written by a kernel are copied out; their source slots must stay alive, which
  // holds because nothing is written after the last kernel.

  std::vector<size_t> slot_offset(slot_bytes.size());
  for (size_t s = 0; s < slot_bytes.size(); ++s) {
    slot_offset[s] = plan.arena_bytes;
    plan.arena_bytes += Align(slot_bytes[s]);
  }
  plan.arena = NDArray(Shape{static_cast<int64_t>(plan.arena_bytes)}, DType::kUint8);
  uint8_t* arena = plan.arena.data<uint8_t>();

  auto blob_for = [&](uint32_t eid, std::vector<Patch>* patches, void** target) {
    const Place& p = place[eid];
    switch (p.kind) {
      case SlotKind::kArena: *target = arena + slot_offset[p.index]; break;
      case SlotKind::kParam: *target = param_ptrs[p.index]; break;
      case SlotKind::kData:
      case SlotKind::kOutput: patches->push_back(Patch{target, p.kind, p.index}); break;
    }
    return TBlob{*target, shapes[eid], types[eid]};
  };
  plan.kernels.reserve(calls.size());
  for (const auto& call : calls) {
    const Node* node = g[call.nid].node;
    plan.kernels.push_back(KernelCall{&node->attrs.op->compute, &node->attrs, {}, {}});
  }
  // Blobs are filled after the vector stops growing, so patch targets stay valid.
  for (size_t k = 0; k < calls.size(); ++k) {
    KernelCall& kc = plan.kernels[k];
    kc.in.resize(calls[k].in_eids.size());
    kc.out.resize(calls[k].out_eids.size());
    for (size_t i = 0; i < kc.in.size(); ++i) {
      TBlob b = blob_for(calls[k].in_eids[i], &plan.patches, &kc.in[i].data);
      kc.in[i].shape = b.shape;
      kc.in[i].dtype = b.dtype;
    }
    for (size_t i = 0; i < kc.out.size(); ++i) {
      TBlob b = blob_for(calls[k].out_eids[i], &plan.patches, &kc.out[i].data);
      kc.out[i].shape = b.shape;
      kc.out[i].dtype = b.dtype;
    }
  }
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    uint32_t eid = g.entry_id(g.outputs()[i]);
    plan.out_shapes.push_back(shapes[eid]);
    plan.out_types.push_back(types[eid]);
    if (written_to_output[i]) continue;
    const Place& p = place[eid];
    const void* fixed_src = p.kind == SlotKind::kArena   ? arena + slot_offset[p.index]
                            : p.kind == SlotKind::kParam ? param_ptrs[p.index]
                                                         : nullptr;
    plan.copies.push_back(OutputCopy{i, p.kind, p.index, fixed_src, bytes_of(eid)});
  }
  return plan;
}

Plan& GraphExecutor::Impl::PlanFor(const std::vector<NDArray>& data) {
  HN_CHECK(data.size() == data_nodes.size(), kInvalidArgument)
      << "forward expects " << data_nodes.size() << " data inputs, got " << data.size();
  for (size_t i = 0; i < data.size(); ++i) {
    HN_CHECK(!data[i].is_none() && !data[i].is_symbolic(), kInvalidArgument)
        << "data input '" << data_names[i] << "' has no value";
  }
  for (auto it = plans.begin(); it != plans.end(); ++it) {
    bool match = true;
    for (size_t i = 0; i < data.size() && match; ++i)
      match = it->data_shapes[i] == data[i].shape() && it->data_types[i] == data[i].dtype();
    if (match) {
      if (it != plans.begin()) plans.splice(plans.begin(), plans, it);
      return plans.front();
    }
  }
  plans.push_front(MakePlan(data));
  ++num_plans;
  if (plans.size() > kMaxCachedPlans) plans.pop_back();
  return plans.front();
}

void GraphExecutor::Impl::Run(Plan& plan, const std::vector<NDArray>& data,
                              std::vector<NDArray>* outputs) {
  outputs->resize(plan.out_shapes.size());
  for (size_t i = 0; i < outputs->size(); ++i) {
    NDArray& out = (*outputs)[i];
    if (out.is_none() || out.is_symbolic() || out.shape() != plan.out_shapes[i] ||
        out.dtype() != plan.out_types[i]) {
      out = NDArray(plan.out_shapes[i], plan.out_types[i]);
    }
  }
  for (const Patch& p : plan.patches) {
    *p.target = p.kind == SlotKind::kData ? const_cast<void*>(data[p.index].raw_data())
                                          : (*outputs)[p.index].raw_data();
  }
  OpContext ctx;
  for (const KernelCall& k : plan.kernels) (*k.compute)(ctx, *k.attrs, k.in, k.out);
  for (const OutputCopy& c : plan.copies) {
    const void* src = c.kind == SlotKind::kData     ? data[c.index].raw_data()
                      : c.kind == SlotKind::kOutput ? (*outputs)[c.index].raw_data()
                                                    : c.fixed_src;
    std::memcpy((*outputs)[c.output].raw_data(), src, c.nbytes);
  }
}

std::vector<NDArray> GraphExecutor::Forward(const std::vector<NDArray>& data) {
  std::vector<NDArray> outputs;
  Forward(data, &outputs);
  return outputs;
}

void GraphExecutor::Forward(const std::vector<NDArray>& data, std::vector<NDArray>* outputs) {
  impl_->Run(impl_->PlanFor(data), data, outputs);
}

const std::vector<std::string>& GraphExecutor::data_names() const { return impl_->data_names; }

const Symbol& GraphExecutor::symbol() const { return impl_->symbol; }

ExecutorStats GraphExecutor::stats() const {
  ExecutorStats s;
  IndexedGraph original(impl_->symbol.outputs);
  for (uint32_t nid = 0; nid < original.num_nodes(); ++nid)
    if (!original[nid].node->IsVariable()) ++s.num_nodes;
  s.num_fused = impl_->num_fused;
  s.num_plans = impl_->num_plans;
  if (!impl_->plans.empty()) {
    const Plan& p = impl_->plans.front();
    s.num_kernels = p.kernels.size();
    s.intermediate_bytes = p.arena_bytes;
    s.naive_bytes = p.naive_bytes;
  }
  return s;
}

}  // namespace hybridnet
