#include <algorithm>
#include <cstring>
#include <list>
#include <set>

#include "executor/memory_plan.h"
#include "hybridnet/executor.h"
#include "kernels/workspace.h"
#include "pass/passes.h"
#include "profiler/profiler_hook.h"

namespace hybridnet {

namespace {

constexpr size_t kMaxCachedPlans = 8;

using internal::SlotKind;

struct KernelCall {
  const FCompute* compute;
  const NodeAttrs* attrs;
  std::vector<TBlob> in, out;
  // The arrays behind the inputs: parameters fixed, data inputs patched per call, else null.
  std::vector<const NDArray*> in_arrays;
};

// A data pointer inside a kernel's blobs that changes per call (data inputs, user outputs).
struct Patch {
  void** target;
  SlotKind kind;
  size_t index;
};

// A kernel's input array that is a data input, set per call: kernels keep data derived from it
// (a convolution's re-laid-out weights) across calls while its values stay unwritten, as they do
// for parameters. A training graph takes its weights as data inputs.
struct ArrayPatch {
  const NDArray** target;
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
  Symbol graph;  // what runs: the optimized graph, laid out for these shapes
  std::shared_ptr<const IndexedGraph> indexed;
  size_t num_relayouts = 0;
  std::vector<Shape> data_shapes;
  std::vector<DType> data_types;
  std::vector<Shape> out_shapes;
  std::vector<DType> out_types;
  std::vector<KernelCall> kernels;
  std::vector<Patch> patches;
  std::vector<ArrayPatch> array_patches;
  std::vector<OutputCopy> copies;
  NDArray arena;
  size_t arena_bytes = 0;
  size_t naive_bytes = 0;
};

}  // namespace

struct GraphExecutor::Impl {
  Symbol symbol;     // as given (what callers see)
  Symbol unfused;    // as given but without bfloat16 tensors (AMP exports): errors name its nodes
  Symbol optimized;  // after fusion
  std::shared_ptr<const IndexedGraph> graph;
  std::vector<std::string> data_names;
  std::map<std::string, NDArray> params;  // every other variable's value, by name
  ExecutorOptions options;
  size_t num_fused = 0;
  size_t num_bf16 = 0;
  size_t num_plans = 0;
  std::list<Plan> plans;          // most recently used first
  internal::Workspace workspace;  // every kernel call's scratch (OpContext::workspace)

  Plan& PlanFor(const std::vector<NDArray>& data);
  Plan MakePlan(const std::vector<NDArray>& data);
  void Run(Plan& plan, const std::vector<NDArray>& data, std::vector<NDArray>* outputs);
};

GraphExecutor::GraphExecutor(const Symbol& symbol, std::vector<std::string> data_names,
                             std::map<std::string, NDArray> params, ExecutorOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.symbol = symbol;
  if (options.is_train) {
    // Training runs every op with its own kernel: fusion folds inference-mode BatchNorm.
    options.fuse = false;
    options.fast_math = false;
  }
  // The fused kernels and the channel-last layouts compute in float32: a float64 model (MXNet's
  // block.cast("float64")) runs every op with its own kernel, as eagerly.
  if (std::any_of(params.begin(), params.end(), [](const auto& kv) {
        return !kv.second.is_none() && !kv.second.is_symbolic() &&
               kv.second.dtype() == DType::kFloat64;
      })) {
    options.fuse = false;
  }
  m.options = options;
  HN_CHECK(options.dtype == DType::kFloat32 || options.dtype == DType::kBFloat16, kInvalidArgument)
      << "an executor computes in float32 or bfloat16, not " << DTypeName(options.dtype);
  // MXNet AMP's bfloat16 (pass/bfloat16.cc): float32 tensors, bfloat16 products in the
  // convolutions and dense layers an export rounds for (or in every one, with options.dtype).
  std::set<std::string> bf16_weights;
  for (const auto& kv : params) {
    if (!kv.second.is_none() && !kv.second.is_symbolic() && kv.second.dtype() == DType::kBFloat16) {
      bf16_weights.insert(kv.first);
    }
  }
  size_t num_bf16_casts = 0;
  Symbol widened = internal::WithoutBFloat16Tensors(symbol, &num_bf16_casts);
  const bool amp_export = num_bf16_casts > 0 || !bf16_weights.empty();
  const bool bf16 = amp_export || options.dtype == DType::kBFloat16;
  HN_CHECK(!(bf16 && options.is_train), kInvalidArgument)
      << "bfloat16 products are for inference: a training executor computes in float32 "
         "(the model is "
      << (amp_export ? "an AMP bfloat16 export)" : "converted by dtype bfloat16)");
  m.unfused = amp_export ? widened : symbol;
  m.optimized = options.fuse ? internal::FuseOps(m.unfused, &m.num_fused) : m.unfused;
  if (bf16) {
    m.optimized = internal::ComputeInBFloat16(m.optimized, options.dtype == DType::kBFloat16,
                                              bf16_weights, &m.num_bf16);
  }
  m.graph = std::make_shared<IndexedGraph>(m.optimized.outputs);
  m.data_names = std::move(data_names);
  const IndexedGraph& g = *m.graph;
  std::map<std::string, uint32_t> variables;
  for (uint32_t nid : g.input_nodes()) variables[g[nid].node->name()] = nid;
  for (const auto& name : m.data_names) {
    HN_CHECK(variables.count(name), kNotFound)
        << "data input '" << name << "' is not a variable of the graph";
  }
  for (const auto& kv : variables) {
    if (std::find(m.data_names.begin(), m.data_names.end(), kv.first) != m.data_names.end())
      continue;
    auto it = params.find(kv.first);
    HN_CHECK(it != params.end(), kNotFound)
        << "no value for graph input '" << kv.first
        << "': pass it as a parameter or list it among the data inputs";
    HN_CHECK(!it->second.is_none() && !it->second.is_symbolic(), kInvalidArgument)
        << "parameter '" << kv.first << "' has no value";
    // Parameters stored in bfloat16 widen exactly; the convolutions round them back.
    m.params[kv.first] =
        it->second.dtype() == DType::kBFloat16 ? it->second.AsType(DType::kFloat32) : it->second;
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
      for (uint32_t i = 0; i < internal::NumEntriesOf(g, nid); ++i)
        HN_CHECK((*shapes)[g.entry_id(nid, i)].IsKnown(), kShapeError)
            << "cannot infer the shape of '" << g[nid].node->name()
            << "' from the given input shapes";
  }
  HN_CHECK(internal::InferTypes(g, types), kTypeError) << "cannot infer every dtype of the graph";
  for (uint32_t nid : g.input_nodes()) {
    const NDArray* v = values.at(g[nid].node->name());
    HN_CHECK((*shapes)[g.entry_id(nid, 0)] == v->shape(), kShapeError)
        << "'" << g[nid].node->name() << "' has shape " << v->shape() << " but the graph needs "
        << (*shapes)[g.entry_id(nid, 0)];
  }
}

// Fills plan->kernels, patches and copies: each kernel's blobs point at the places `mem` chose
// (arena offsets and parameters fixed now, data inputs and caller outputs patched per call).
void BuildCalls(const IndexedGraph& g, const internal::MemoryPlan& mem,
                const std::vector<size_t>& slot_offset, const std::vector<const NDArray*>& params,
                const std::vector<Shape>& shapes, const std::vector<DType>& types, Plan* plan) {
  uint8_t* arena = plan->arena.data<uint8_t>();
  auto fixed_address = [&](const internal::EntryPlace& p) -> void* {
    if (p.kind == SlotKind::kArena) return arena + slot_offset[p.index];
    if (p.kind == SlotKind::kParam) return const_cast<void*>(params[p.index]->raw_data());
    return nullptr;
  };
  plan->kernels.reserve(mem.kernel_nodes.size());
  for (uint32_t nid : mem.kernel_nodes) {
    const Node* node = g[nid].node;
    KernelCall call{&node->attrs.op->compute, &node->attrs, {}, {}, {}};
    for (const auto& e : g[nid].inputs) {
      uint32_t eid = g.entry_id(e);
      const internal::EntryPlace& p = mem.place[eid];
      call.in.push_back(TBlob{fixed_address(p), shapes[eid], types[eid]});
      call.in_arrays.push_back(p.kind == SlotKind::kParam ? params[p.index] : nullptr);
    }
    for (uint32_t i = 0; i < internal::NumEntriesOf(g, nid); ++i) {
      uint32_t eid = g.entry_id(nid, i);
      call.out.push_back(TBlob{fixed_address(mem.place[eid]), shapes[eid], types[eid]});
    }
    plan->kernels.push_back(std::move(call));
  }
  // Patch targets point into the blobs, so they are taken after the kernel list stops growing.
  for (size_t k = 0; k < mem.kernel_nodes.size(); ++k) {
    uint32_t nid = mem.kernel_nodes[k];
    KernelCall& call = plan->kernels[k];
    auto patch = [&](uint32_t eid, TBlob* blob) {
      const internal::EntryPlace& p = mem.place[eid];
      if (p.kind == SlotKind::kData || p.kind == SlotKind::kOutput)
        plan->patches.push_back(Patch{&blob->data, p.kind, p.index});
    };
    for (size_t i = 0; i < call.in.size(); ++i) {
      const uint32_t eid = g.entry_id(g[nid].inputs[i]);
      patch(eid, &call.in[i]);
      if (mem.place[eid].kind == SlotKind::kData)
        plan->array_patches.push_back(ArrayPatch{&call.in_arrays[i], mem.place[eid].index});
    }
    for (size_t i = 0; i < call.out.size(); ++i)
      patch(g.entry_id(nid, static_cast<uint32_t>(i)), &call.out[i]);
  }
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    uint32_t eid = g.entry_id(g.outputs()[i]);
    plan->out_shapes.push_back(shapes[eid]);
    plan->out_types.push_back(types[eid]);
    if (mem.written_to_output[i]) continue;
    const internal::EntryPlace& p = mem.place[eid];
    plan->copies.push_back(
        OutputCopy{i, p.kind, p.index, fixed_address(p),
                   static_cast<size_t>(shapes[eid].Size()) * DTypeSize(types[eid])});
  }
}

}  // namespace

Plan GraphExecutor::Impl::MakePlan(const std::vector<NDArray>& data) {
  Plan plan;
  std::map<std::string, const NDArray*> values;
  for (size_t i = 0; i < data.size(); ++i) {
    values[data_names[i]] = &data[i];
    plan.data_shapes.push_back(data[i].shape());
    plan.data_types.push_back(data[i].dtype());
  }
  for (const auto& kv : params) values[kv.first] = &kv.second;
  std::vector<Shape> shapes;
  std::vector<DType> types;
  // Errors are reported on the graph as written (names and ops the caller knows), then the
  // optimized graph is laid out for these shapes and planned.
  if (num_fused > 0) InferEntries(IndexedGraph(unfused.outputs), values, &shapes, &types);
  InferEntries(*graph, values, &shapes, &types);
  if (options.fuse) {
    plan.graph = internal::LayOutChannelLast(optimized, shapes, &plan.num_relayouts);
    plan.indexed = std::make_shared<IndexedGraph>(plan.graph.outputs);
    InferEntries(*plan.indexed, values, &shapes, &types);
  } else {
    plan.graph = optimized;
    plan.indexed = graph;
  }
  const IndexedGraph& g = *plan.indexed;

  std::map<std::string, uint32_t> variables;
  for (uint32_t nid : g.input_nodes()) variables[g[nid].node->name()] = nid;
  std::vector<uint32_t> data_nodes, param_nodes;
  std::vector<const NDArray*> param_values;
  for (const auto& name : data_names) data_nodes.push_back(variables.at(name));
  for (const auto& kv : variables) {
    auto it = params.find(kv.first);
    if (it == params.end()) continue;
    param_nodes.push_back(kv.second);
    param_values.push_back(&it->second);
  }
  std::vector<size_t> entry_bytes(g.num_entries());
  for (size_t e = 0; e < entry_bytes.size(); ++e)
    entry_bytes[e] = static_cast<size_t>(shapes[e].Size()) * DTypeSize(types[e]);
  const internal::MemoryPlan mem =
      internal::PlaceEntries(g, entry_bytes, data_nodes, param_nodes, options.plan_memory);
  const std::vector<size_t> slot_offset = internal::LayOutArena(mem.slot_bytes, &plan.arena_bytes);
  plan.naive_bytes = mem.naive_bytes;
  plan.arena = NDArray(Shape{static_cast<int64_t>(plan.arena_bytes)}, DType::kUint8);
  BuildCalls(g, mem, slot_offset, param_values, shapes, types, &plan);
  return plan;
}

Plan& GraphExecutor::Impl::PlanFor(const std::vector<NDArray>& data) {
  HN_CHECK(data.size() == data_names.size(), kInvalidArgument)
      << "forward expects " << data_names.size() << " data inputs, got " << data.size();
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
  for (const ArrayPatch& p : plan.array_patches) *p.target = &data[p.index];
  OpContext ctx;
  ctx.is_train = options.is_train;
  ctx.fast_math = options.fast_math;
  ctx.workspace = &workspace;
  for (const KernelCall& k : plan.kernels) {
    ctx.input_arrays = k.in_arrays.data();
    if (profiler::internal::Records(profiler::internal::kGraph)) {
      const int64_t start = profiler::internal::StartOp();
      (*k.compute)(ctx, *k.attrs, k.in, k.out);
      profiler::internal::RecordOp(*k.attrs, k.in, k.out, start);
    } else {
      (*k.compute)(ctx, *k.attrs, k.in, k.out);
    }
  }
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
  s.num_bf16 = impl_->num_bf16;
  s.num_plans = impl_->num_plans;
  if (!impl_->plans.empty()) {
    const Plan& p = impl_->plans.front();
    s.num_kernels = p.kernels.size();
    s.num_relayouts = p.num_relayouts;
    s.intermediate_bytes = p.arena_bytes;
    s.naive_bytes = p.naive_bytes;
  }
  return s;
}

}  // namespace hybridnet
