// Control flow (MXNet src/operator/control_flow.cc): _foreach, _while_loop and _cond, the ops
// gluon's F.contrib.foreach / while_loop / cond write into a symbol file. Each node carries its
// graphs in NodeAttrs::subgraphs (the JSON "subgraphs" field); the node's inputs are mapped onto
// a subgraph's inputs (its variables in graph order) by the *_locs attributes.
//
// The kernels run each subgraph with a GraphExecutor planned once per call for the shapes at
// hand, so eager and graph mode share one code path (bit-identical), and every op inside a
// subgraph is an ordinary registered op.
//
//   _foreach   inputs [data..., states..., remaining...]; in_data_locs/in_state_locs/remain_locs
//              place them among the body's inputs. Step i feeds slice i (axis 0) of each data
//              input and the states of step i-1; outputs are the body's first num_out_data
//              outputs stacked along a new axis 0, then the final states.
//   _while_loop cond and func read the inputs at cond_input_locs / func_input_locs; func's
//              inputs at func_var_locs are the loop variables it updates. Runs while cond is
//              true, at most max_iterations times; outputs are func's data outputs stacked to
//              max_iterations along axis 0 (steps not run are zero: MXNet leaves them
//              undefined), then the final loop variables.
//   _cond      runs then or else (inputs at then_input_locs / else_input_locs) as cond (inputs
//              at cond_input_locs) gives a nonzero or zero scalar.
#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "hybridnet/executor.h"
#include "hybridnet/op.h"
#include "hybridnet/symbol.h"
#include "ops/register_ops.h"

namespace hybridnet {
namespace {

using Locs = std::vector<int64_t>;

struct ForeachParam {
  int num_args = 1;
  int num_outputs = 0;
  int num_out_data = 0;
  Locs in_state_locs, in_data_locs, remain_locs;
  static void Declare(ParamDeclarer<ForeachParam>* d) {
    d->Field("num_args", &ForeachParam::num_args)
        .Required()
        .Min(1)
        .Describe("Inputs of the node plus one for the loop body graph.");
    d->Field("num_outputs", &ForeachParam::num_outputs)
        .Required()
        .Min(1)
        .Describe("Outputs of the loop body: num_out_data per-step outputs, then the states.");
    d->Field("num_out_data", &ForeachParam::num_out_data)
        .Required()
        .Min(0)
        .Describe("How many of the body's outputs are stacked over the steps.");
    d->Field("in_state_locs", &ForeachParam::in_state_locs)
        .Required()
        .Describe("Where the loop states go among the body's inputs.");
    d->Field("in_data_locs", &ForeachParam::in_data_locs)
        .Required()
        .Describe("Where the sliced data inputs go among the body's inputs.");
    d->Field("remain_locs", &ForeachParam::remain_locs)
        .Default({})
        .Describe("Where the remaining (unchanged) inputs go among the body's inputs.");
  }
};

struct WhileLoopParam {
  int num_args = 2;
  int num_outputs = 0;
  int num_out_data = 0;
  int max_iterations = 1;
  Locs cond_input_locs, func_input_locs, func_var_locs;
  static void Declare(ParamDeclarer<WhileLoopParam>* d) {
    d->Field("num_args", &WhileLoopParam::num_args)
        .Required()
        .Min(2)
        .Describe("Inputs of the node plus two for the cond and func graphs.");
    d->Field("num_outputs", &WhileLoopParam::num_outputs)
        .Required()
        .Min(1)
        .Describe("Outputs of func: num_out_data per-step outputs, then the loop variables.");
    d->Field("num_out_data", &WhileLoopParam::num_out_data)
        .Required()
        .Min(0)
        .Describe("How many of func's outputs are stacked over the steps.");
    d->Field("max_iterations", &WhileLoopParam::max_iterations)
        .Required()
        .Min(1)
        .Describe("Most steps the loop runs; the stacked outputs have this length.");
    d->Field("cond_input_locs", &WhileLoopParam::cond_input_locs)
        .Required()
        .Describe("The node inputs cond reads, in cond's input order.");
    d->Field("func_input_locs", &WhileLoopParam::func_input_locs)
        .Required()
        .Describe("The node inputs func reads, in func's input order.");
    d->Field("func_var_locs", &WhileLoopParam::func_var_locs)
        .Required()
        .Describe("Which of func's inputs are the loop variables its outputs replace.");
  }
};

struct CondParam {
  int num_args = 3;
  int num_outputs = 0;
  Locs cond_input_locs, then_input_locs, else_input_locs;
  static void Declare(ParamDeclarer<CondParam>* d) {
    d->Field("num_args", &CondParam::num_args)
        .Required()
        .Min(3)
        .Describe("Inputs of the node plus three for the cond, then and else graphs.");
    d->Field("num_outputs", &CondParam::num_outputs)
        .Required()
        .Min(1)
        .Describe("Outputs of each branch.");
    d->Field("cond_input_locs", &CondParam::cond_input_locs)
        .Required()
        .Describe("The node inputs cond reads, in cond's input order.");
    d->Field("then_input_locs", &CondParam::then_input_locs)
        .Required()
        .Describe("The node inputs the then branch reads.");
    d->Field("else_input_locs", &CondParam::else_input_locs)
        .Required()
        .Describe("The node inputs the else branch reads.");
  }
};

std::vector<std::string> ArgNames(size_t count) {
  std::vector<std::string> names;
  for (size_t i = 0; i < count; ++i) names.push_back("data" + std::to_string(i));
  return names;
}

// ---- subgraph checks and inference ------------------------------------------------------------

const Symbol& Subgraph(const NodeAttrs& attrs, size_t index, size_t expected, const char* what) {
  HN_CHECK(attrs.subgraphs.size() == expected, kInvalidArgument)
      << DescribeNode(attrs) << ": expected " << expected << " subgraph"
      << (expected == 1 ? "" : "s") << " (" << what << "), found " << attrs.subgraphs.size()
      << " (a control-flow node must carry its graphs in \"subgraphs\")";
  return *attrs.subgraphs[index];
}

/// The subgraph's inputs (variables in graph order), checked to have distinct names.
std::vector<std::string> SubgraphInputs(const NodeAttrs& attrs, const Symbol& g, const char* what) {
  std::vector<std::string> names = g.ListInputs();
  std::set<std::string> seen;
  for (const auto& n : names)
    HN_CHECK(seen.insert(n).second, kFormatError)
        << DescribeNode(attrs) << ": the " << what << " graph has two inputs named '" << n << "'";
  return names;
}

/// Checks that `locs` are distinct indices below `bound`.
void CheckLocs(const NodeAttrs& attrs, const char* key, const Locs& locs, size_t bound,
               const char* of_what) {
  std::set<int64_t> seen;
  for (int64_t loc : locs) {
    HN_CHECK(loc >= 0 && static_cast<size_t>(loc) < bound && seen.insert(loc).second,
             kInvalidArgument)
        << DescribeNode(attrs) << ": " << key << " " << Shape(locs) << " must hold distinct "
        << "indices below " << bound << " (the number of " << of_what << ")";
  }
}

// Shape and dtype inference of a subgraph with inputs in its ListInputs order.
bool InferSubgraphShapes(const Symbol& g, const std::vector<std::string>& names,
                         std::vector<Shape>* in, std::vector<Shape>* out) {
  std::map<std::string, Shape> known;
  for (size_t i = 0; i < names.size(); ++i)
    if ((*in)[i].ndim() != 0) known[names[i]] = (*in)[i];
  Symbol::ShapeResult r = g.InferShape(known, /*partial=*/true);
  std::map<std::string, Shape> inferred;
  std::vector<std::string> args = g.ListArguments(), aux = g.ListAuxiliaryStates();
  for (size_t i = 0; i < args.size(); ++i) inferred[args[i]] = r.arg_shapes[i];
  for (size_t i = 0; i < aux.size(); ++i) inferred[aux[i]] = r.aux_shapes[i];
  for (size_t i = 0; i < names.size(); ++i) (*in)[i] = inferred[names[i]];
  *out = r.out_shapes;
  return r.complete;
}

bool InferSubgraphTypes(const Symbol& g, const std::vector<std::string>& names,
                        std::vector<DType>* in, std::vector<DType>* out) {
  std::map<std::string, DType> known;
  for (size_t i = 0; i < names.size(); ++i)
    if ((*in)[i] != DType::kUnknown) known[names[i]] = (*in)[i];
  Symbol::TypeResult r = g.InferType(known, /*partial=*/true);
  std::map<std::string, DType> inferred;
  std::vector<std::string> args = g.ListArguments(), aux = g.ListAuxiliaryStates();
  for (size_t i = 0; i < args.size(); ++i) inferred[args[i]] = r.arg_types[i];
  for (size_t i = 0; i < aux.size(); ++i) inferred[aux[i]] = r.aux_types[i];
  for (size_t i = 0; i < names.size(); ++i) (*in)[i] = inferred[names[i]];
  *out = r.out_types;
  return r.complete;
}

template <typename T, typename Unknown>
void Assign(const NodeAttrs& attrs, const char* side, size_t i, const T& value, T* target,
            Unknown is_unknown) {
  if (is_unknown(value)) return;
  if (is_unknown(*target)) {
    *target = value;
    return;
  }
  if constexpr (std::is_same_v<T, Shape>) {
    Shape merged = *target;
    HN_CHECK(MergeShape(value, &merged), kShapeError)
        << DescribeNode(attrs) << ": " << side << " " << i << " has shape " << *target
        << " but the subgraph gives " << value;
    *target = merged;
  } else {
    HN_CHECK(value == *target, kTypeError)
        << DescribeNode(attrs) << ": " << side << " " << i << " has dtype " << DTypeName(*target)
        << " but the subgraph gives " << DTypeName(value);
  }
}

bool ShapeUnknown(const Shape& s) { return s.ndim() == 0; }
bool TypeUnknown(DType d) { return d == DType::kUnknown; }

/// Drops axis 0 (a 1-D array's step is a (1,) array, as MXNet slices it).
Shape StepShape(const Shape& s) {
  if (s.ndim() == 0) return s;
  if (s.ndim() == 1) return Shape{1};
  return Shape(std::vector<int64_t>(s.begin() + 1, s.end()));
}

Shape Stacked(int64_t length, const Shape& step) {
  if (step.ndim() == 0) return step;
  std::vector<int64_t> dims{length};
  dims.insert(dims.end(), step.begin(), step.end());
  return Shape(dims);
}

// ---- _foreach ---------------------------------------------------------------------------------

// Node input k -> body input index.
std::vector<size_t> ForeachInputMap(const NodeAttrs& attrs, size_t num_body_inputs) {
  const auto& p = attrs.Param<ForeachParam>();
  const size_t n_in = static_cast<size_t>(p.num_args - 1);
  HN_CHECK(p.in_data_locs.size() + p.in_state_locs.size() + p.remain_locs.size() == n_in,
           kInvalidArgument)
      << DescribeNode(attrs) << ": in_data_locs, in_state_locs and remain_locs place "
      << p.in_data_locs.size() + p.in_state_locs.size() + p.remain_locs.size()
      << " inputs, but the node has " << n_in;
  HN_CHECK(num_body_inputs == n_in, kInvalidArgument)
      << DescribeNode(attrs) << ": the loop body has " << num_body_inputs
      << " inputs, but the node has " << n_in;
  HN_CHECK(!p.in_data_locs.empty(), kInvalidArgument)
      << DescribeNode(attrs) << ": in_data_locs is empty (nothing to iterate over)";
  HN_CHECK(p.num_out_data <= p.num_outputs &&
               static_cast<size_t>(p.num_outputs - p.num_out_data) == p.in_state_locs.size(),
           kInvalidArgument)
      << DescribeNode(attrs) << ": num_outputs " << p.num_outputs << " must be num_out_data "
      << p.num_out_data << " plus one per state (" << p.in_state_locs.size() << ")";
  std::vector<size_t> map;
  for (const Locs* locs : {&p.in_data_locs, &p.in_state_locs, &p.remain_locs})
    for (int64_t loc : *locs) map.push_back(static_cast<size_t>(loc));
  Locs all(map.begin(), map.end());
  CheckLocs(attrs, "in_data_locs + in_state_locs + remain_locs", all, n_in, "body inputs");
  return map;
}

bool ForeachShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const auto& p = attrs.Param<ForeachParam>();
  const Symbol& body = Subgraph(attrs, 0, 1, "the loop body");
  std::vector<std::string> names = SubgraphInputs(attrs, body, "loop body");
  std::vector<size_t> map = ForeachInputMap(attrs, names.size());
  HN_CHECK(body.NumOutputs() == static_cast<size_t>(p.num_outputs), kInvalidArgument)
      << DescribeNode(attrs) << ": the loop body has " << body.NumOutputs()
      << " outputs, num_outputs says " << p.num_outputs;
  const size_t n_data = p.in_data_locs.size(), n_state = p.in_state_locs.size();
  int64_t length = 0;
  for (size_t k = 0; k < n_data; ++k) {
    const Shape& s = (*in)[k];
    if (s.ndim() == 0 || s[0] == 0) continue;
    HN_CHECK(length == 0 || length == s[0], kShapeError)
        << DescribeNode(attrs) << ": data input " << k << " has " << s[0]
        << " steps along axis 0, another has " << length;
    length = s[0];
  }
  std::vector<Shape> body_in(names.size());
  for (size_t k = 0; k < map.size(); ++k)
    body_in[map[k]] = k < n_data ? StepShape((*in)[k]) : (*in)[k];
  std::vector<Shape> body_out;
  bool complete = InferSubgraphShapes(body, names, &body_in, &body_out);
  for (size_t k = 0; k < map.size(); ++k) {
    if (k < n_data) {
      const Shape& step = body_in[map[k]];
      if (step.ndim() != 0 && length != 0 && (*in)[k].ndim() != 1)
        Assign(attrs, "input", k, Stacked(length, step), &(*in)[k], ShapeUnknown);
    } else {
      Assign(attrs, "input", k, body_in[map[k]], &(*in)[k], ShapeUnknown);
    }
  }
  for (size_t i = 0; i < body_out.size(); ++i) {
    Shape value = static_cast<int>(i) < p.num_out_data
                      ? (length ? Stacked(length, body_out[i]) : Shape())
                      : body_out[i];
    Assign(attrs, "output", i, value, &(*out)[i], ShapeUnknown);
  }
  for (size_t s = 0; s < n_state; ++s) {
    const Shape& state_in = (*in)[n_data + s];
    const Shape& state_out = (*out)[static_cast<size_t>(p.num_out_data) + s];
    HN_CHECK(state_in.ndim() == 0 || state_out.ndim() == 0 || state_in == state_out ||
                 !state_in.IsKnown() || !state_out.IsKnown(),
             kShapeError)
        << DescribeNode(attrs) << ": state " << s << " enters the loop as " << state_in
        << " but the body returns " << state_out;
  }
  bool known = complete && length != 0;
  for (const auto& s : *in) known = known && s.IsKnown();
  for (const auto& s : *out) known = known && s.IsKnown();
  return known;
}

bool ForeachType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const Symbol& body = Subgraph(attrs, 0, 1, "the loop body");
  std::vector<std::string> names = SubgraphInputs(attrs, body, "loop body");
  std::vector<size_t> map = ForeachInputMap(attrs, names.size());
  std::vector<DType> body_in(names.size(), DType::kUnknown), body_out;
  for (size_t k = 0; k < map.size(); ++k) body_in[map[k]] = (*in)[k];
  bool complete = InferSubgraphTypes(body, names, &body_in, &body_out);
  for (size_t k = 0; k < map.size(); ++k)
    Assign(attrs, "input", k, body_in[map[k]], &(*in)[k], TypeUnknown);
  for (size_t i = 0; i < body_out.size() && i < out->size(); ++i)
    Assign(attrs, "output", i, body_out[i], &(*out)[i], TypeUnknown);
  return complete;
}

/// An NDArray over `blob`'s memory (the executor writes into it directly).
NDArray View(const TBlob& blob) { return NDArray::Wrap(blob.shape, blob.dtype, blob.data, {}); }

/// Step `step` of an array stacked along axis 0 (its shape without axis 0).
TBlob StepBlob(const TBlob& blob, int64_t step) {
  TBlob part{nullptr, StepShape(blob.shape), blob.dtype};
  const int64_t bytes = part.shape.Size() * static_cast<int64_t>(DTypeSize(blob.dtype));
  part.data = static_cast<char*>(blob.data) + step * bytes;
  return part;
}

/// Copies `from` into `to` unless the executor already wrote there.
void CopyInto(const NDArray& from, const TBlob& to) {
  if (from.raw_data() != to.data) std::memcpy(to.data, from.raw_data(), from.nbytes());
}

void ForeachCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                    const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<ForeachParam>();
  const Symbol& body = *attrs.subgraphs[0];
  std::vector<std::string> names = body.ListInputs();
  std::vector<size_t> map = ForeachInputMap(attrs, names.size());
  const size_t n_data = p.in_data_locs.size(), n_state = p.in_state_locs.size();
  const size_t n_out_data = static_cast<size_t>(p.num_out_data);
  const int64_t length = in[0].shape[0];
  GraphExecutor exec(body, names, {});
  std::vector<NDArray> body_in(names.size());
  for (size_t k = n_data; k < map.size(); ++k) body_in[map[k]] = View(in[k]);
  std::vector<NDArray> body_out;
  for (int64_t step = 0; step < length; ++step) {
    for (size_t k = 0; k < n_data; ++k) body_in[map[k]] = View(StepBlob(in[k], step));
    // Per-step outputs are written into their slice; states into fresh arrays, which the next
    // step reads.
    body_out.assign(out.size(), NDArray());
    for (size_t i = 0; i < n_out_data; ++i) body_out[i] = View(StepBlob(out[i], step));
    exec.Forward(body_in, &body_out);
    for (size_t i = 0; i < n_out_data; ++i) CopyInto(body_out[i], StepBlob(out[i], step));
    for (size_t s = 0; s < n_state; ++s) body_in[map[n_data + s]] = body_out[n_out_data + s];
  }
  for (size_t s = 0; s < n_state; ++s) {
    const NDArray& final_state = length > 0 ? body_out[n_out_data + s] : View(in[n_data + s]);
    CopyInto(final_state, out[n_out_data + s]);
  }
}

// ---- _while_loop ------------------------------------------------------------------------------

struct WhileLoopGraphs {
  const Symbol* cond;
  const Symbol* func;
  std::vector<std::string> cond_names, func_names;
};

WhileLoopGraphs CheckWhileLoop(const NodeAttrs& attrs) {
  const auto& p = attrs.Param<WhileLoopParam>();
  WhileLoopGraphs g{
      &Subgraph(attrs, 0, 2, "cond and func"), &Subgraph(attrs, 1, 2, "cond and func"), {}, {}};
  g.cond_names = SubgraphInputs(attrs, *g.cond, "cond");
  g.func_names = SubgraphInputs(attrs, *g.func, "func");
  const size_t n_in = static_cast<size_t>(p.num_args - 2);
  CheckLocs(attrs, "cond_input_locs", p.cond_input_locs, n_in, "node inputs");
  CheckLocs(attrs, "func_input_locs", p.func_input_locs, n_in, "node inputs");
  CheckLocs(attrs, "func_var_locs", p.func_var_locs, p.func_input_locs.size(), "func inputs");
  HN_CHECK(g.cond_names.size() == p.cond_input_locs.size() &&
               g.func_names.size() == p.func_input_locs.size(),
           kInvalidArgument)
      << DescribeNode(attrs) << ": cond has " << g.cond_names.size() << " inputs and func "
      << g.func_names.size() << ", but cond_input_locs names " << p.cond_input_locs.size()
      << " and func_input_locs " << p.func_input_locs.size();
  HN_CHECK(g.cond->NumOutputs() == 1, kInvalidArgument)
      << DescribeNode(attrs) << ": cond must have one output, has " << g.cond->NumOutputs();
  HN_CHECK(g.func->NumOutputs() == static_cast<size_t>(p.num_outputs) &&
               p.num_out_data <= p.num_outputs &&
               static_cast<size_t>(p.num_outputs - p.num_out_data) == p.func_var_locs.size(),
           kInvalidArgument)
      << DescribeNode(attrs) << ": func has " << g.func->NumOutputs() << " outputs; num_outputs "
      << p.num_outputs << " must equal it and num_out_data " << p.num_out_data
      << " plus one per loop variable (" << p.func_var_locs.size() << ")";
  return g;
}

bool WhileLoopShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const auto& p = attrs.Param<WhileLoopParam>();
  WhileLoopGraphs g = CheckWhileLoop(attrs);
  std::vector<Shape> cond_in, func_in, cond_out, func_out;
  for (int64_t loc : p.cond_input_locs) cond_in.push_back((*in)[static_cast<size_t>(loc)]);
  for (int64_t loc : p.func_input_locs) func_in.push_back((*in)[static_cast<size_t>(loc)]);
  bool complete = InferSubgraphShapes(*g.cond, g.cond_names, &cond_in, &cond_out);
  complete = InferSubgraphShapes(*g.func, g.func_names, &func_in, &func_out) && complete;
  for (size_t j = 0; j < cond_in.size(); ++j) {
    const size_t k = static_cast<size_t>(p.cond_input_locs[j]);
    Assign(attrs, "input", k, cond_in[j], &(*in)[k], ShapeUnknown);
  }
  for (size_t j = 0; j < func_in.size(); ++j) {
    const size_t k = static_cast<size_t>(p.func_input_locs[j]);
    Assign(attrs, "input", k, func_in[j], &(*in)[k], ShapeUnknown);
  }
  for (size_t i = 0; i < func_out.size(); ++i) {
    Shape value =
        static_cast<int>(i) < p.num_out_data ? Stacked(p.max_iterations, func_out[i]) : func_out[i];
    Assign(attrs, "output", i, value, &(*out)[i], ShapeUnknown);
  }
  bool known = complete;
  for (const auto& s : *in) known = known && s.IsKnown();
  for (const auto& s : *out) known = known && s.IsKnown();
  return known;
}

bool WhileLoopType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const auto& p = attrs.Param<WhileLoopParam>();
  WhileLoopGraphs g = CheckWhileLoop(attrs);
  std::vector<DType> cond_in, func_in, cond_out, func_out;
  for (int64_t loc : p.cond_input_locs) cond_in.push_back((*in)[static_cast<size_t>(loc)]);
  for (int64_t loc : p.func_input_locs) func_in.push_back((*in)[static_cast<size_t>(loc)]);
  bool complete = InferSubgraphTypes(*g.cond, g.cond_names, &cond_in, &cond_out);
  complete = InferSubgraphTypes(*g.func, g.func_names, &func_in, &func_out) && complete;
  for (size_t j = 0; j < cond_in.size(); ++j) {
    const size_t k = static_cast<size_t>(p.cond_input_locs[j]);
    Assign(attrs, "input", k, cond_in[j], &(*in)[k], TypeUnknown);
  }
  for (size_t j = 0; j < func_in.size(); ++j) {
    const size_t k = static_cast<size_t>(p.func_input_locs[j]);
    Assign(attrs, "input", k, func_in[j], &(*in)[k], TypeUnknown);
  }
  for (size_t i = 0; i < func_out.size() && i < out->size(); ++i)
    Assign(attrs, "output", i, func_out[i], &(*out)[i], TypeUnknown);
  return complete;
}

/// The truth of a one-element condition output, whatever its dtype.
bool IsTrue(const NDArray& condition, const NodeAttrs& attrs) {
  HN_CHECK(condition.size() == 1, kShapeError)
      << DescribeNode(attrs) << ": cond must give one element, gave shape " << condition.shape();
  return condition.AsType(DType::kFloat64).data<double>()[0] != 0.0;
}

void WhileLoopCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                      const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<WhileLoopParam>();
  WhileLoopGraphs g = CheckWhileLoop(attrs);
  const size_t n_out_data = static_cast<size_t>(p.num_out_data);
  std::vector<NDArray> node_in;
  for (const TBlob& b : in) node_in.push_back(View(b));
  std::vector<NDArray> cond_in, func_in;
  for (int64_t loc : p.cond_input_locs) cond_in.push_back(node_in[static_cast<size_t>(loc)]);
  for (int64_t loc : p.func_input_locs) func_in.push_back(node_in[static_cast<size_t>(loc)]);
  GraphExecutor cond_exec(*g.cond, g.cond_names, {});
  GraphExecutor func_exec(*g.func, g.func_names, {});
  for (size_t i = 0; i < n_out_data; ++i)
    std::memset(out[i].data, 0, static_cast<size_t>(out[i].Size()) * DTypeSize(out[i].dtype));
  for (int64_t step = 0; step < p.max_iterations; ++step) {
    if (!IsTrue(cond_exec.Forward(cond_in)[0], attrs)) break;
    std::vector<NDArray> func_out = func_exec.Forward(func_in);
    for (size_t i = 0; i < n_out_data; ++i) {
      const TBlob slot = StepBlob(out[i], step);
      HN_CHECK(func_out[i].shape() == slot.shape, kShapeError)
          << DescribeNode(attrs) << ": func output " << i << " has shape " << func_out[i].shape()
          << " at step " << step << ", expected " << slot.shape;
      CopyInto(func_out[i], slot);
    }
    for (size_t v = 0; v < p.func_var_locs.size(); ++v) {
      const size_t func_slot = static_cast<size_t>(p.func_var_locs[v]);
      const NDArray& updated = func_out[n_out_data + v];
      HN_CHECK(updated.shape() == func_in[func_slot].shape(), kShapeError)
          << DescribeNode(attrs) << ": loop variable " << v << " changes shape from "
          << func_in[func_slot].shape() << " to " << updated.shape();
      const int64_t node_loc = p.func_input_locs[func_slot];
      func_in[func_slot] = updated;
      for (size_t j = 0; j < p.cond_input_locs.size(); ++j)
        if (p.cond_input_locs[j] == node_loc) cond_in[j] = updated;
    }
  }
  for (size_t v = 0; v < p.func_var_locs.size(); ++v)
    CopyInto(func_in[static_cast<size_t>(p.func_var_locs[v])], out[n_out_data + v]);
}

// ---- _cond ------------------------------------------------------------------------------------

struct CondGraphs {
  const Symbol* graph[3];
  std::vector<std::string> names[3];
};

const Locs& CondLocs(const CondParam& p, size_t which) {
  return which == 0 ? p.cond_input_locs : which == 1 ? p.then_input_locs : p.else_input_locs;
}

CondGraphs CheckCond(const NodeAttrs& attrs) {
  const auto& p = attrs.Param<CondParam>();
  static const char* kWhat[] = {"cond", "then", "else"};
  CondGraphs g;
  const size_t n_in = static_cast<size_t>(p.num_args - 3);
  for (size_t i = 0; i < 3; ++i) {
    g.graph[i] = &Subgraph(attrs, i, 3, "cond, then and else");
    g.names[i] = SubgraphInputs(attrs, *g.graph[i], kWhat[i]);
    const Locs& locs = CondLocs(p, i);
    CheckLocs(attrs, (std::string(kWhat[i]) + "_input_locs").c_str(), locs, n_in, "node inputs");
    HN_CHECK(g.names[i].size() == locs.size(), kInvalidArgument)
        << DescribeNode(attrs) << ": the " << kWhat[i] << " graph has " << g.names[i].size()
        << " inputs but " << kWhat[i] << "_input_locs names " << locs.size();
  }
  HN_CHECK(g.graph[0]->NumOutputs() == 1, kInvalidArgument)
      << DescribeNode(attrs) << ": cond must have one output, has " << g.graph[0]->NumOutputs();
  for (size_t i = 1; i < 3; ++i)
    HN_CHECK(g.graph[i]->NumOutputs() == static_cast<size_t>(p.num_outputs), kInvalidArgument)
        << DescribeNode(attrs) << ": the " << kWhat[i] << " branch has " << g.graph[i]->NumOutputs()
        << " outputs, num_outputs says " << p.num_outputs;
  return g;
}

template <typename T, typename Infer, typename Unknown>
bool CondInfer(const NodeAttrs& attrs, std::vector<T>* in, std::vector<T>* out, Infer infer,
               Unknown is_unknown) {
  const auto& p = attrs.Param<CondParam>();
  CondGraphs g = CheckCond(attrs);
  bool complete = true;
  for (size_t which = 0; which < 3; ++which) {
    const Locs& locs = CondLocs(p, which);
    std::vector<T> sub_in, sub_out;
    for (int64_t loc : locs) sub_in.push_back((*in)[static_cast<size_t>(loc)]);
    complete = infer(*g.graph[which], g.names[which], &sub_in, &sub_out) && complete;
    for (size_t j = 0; j < locs.size(); ++j) {
      const size_t k = static_cast<size_t>(locs[j]);
      Assign(attrs, "input", k, sub_in[j], &(*in)[k], is_unknown);
    }
    if (which == 0) continue;
    for (size_t i = 0; i < sub_out.size() && i < out->size(); ++i)
      Assign(attrs, "output", i, sub_out[i], &(*out)[i], is_unknown);
  }
  return complete;
}

bool CondShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  bool complete = CondInfer<Shape>(attrs, in, out, InferSubgraphShapes, ShapeUnknown);
  for (const auto& s : *in) complete = complete && s.IsKnown();
  for (const auto& s : *out) complete = complete && s.IsKnown();
  return complete;
}

bool CondType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  return CondInfer<DType>(attrs, in, out, InferSubgraphTypes, TypeUnknown);
}

void CondCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                 const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<CondParam>();
  CondGraphs g = CheckCond(attrs);
  auto inputs_of = [&](size_t which) {
    std::vector<NDArray> sub_in;
    for (int64_t loc : CondLocs(p, which)) sub_in.push_back(View(in[static_cast<size_t>(loc)]));
    return sub_in;
  };
  GraphExecutor cond_exec(*g.graph[0], g.names[0], {});
  const size_t branch = IsTrue(cond_exec.Forward(inputs_of(0))[0], attrs) ? 1 : 2;
  GraphExecutor branch_exec(*g.graph[branch], g.names[branch], {});
  std::vector<NDArray> results = branch_exec.Forward(inputs_of(branch));
  for (size_t i = 0; i < out.size(); ++i) {
    HN_CHECK(results[i].shape() == out[i].shape && results[i].dtype() == out[i].dtype, kShapeError)
        << DescribeNode(attrs) << ": the " << (branch == 1 ? "then" : "else") << " branch gives "
        << results[i].shape() << " " << DTypeName(results[i].dtype()) << " for output " << i
        << ", where the other branch's " << out[i].shape << " " << DTypeName(out[i].dtype)
        << " was inferred";
    CopyInto(results[i], out[i]);
  }
}

}  // namespace

void RegisterControlFlowOps(OpRegistry* r) {
  r->Register("_foreach")
      .Describe(
          "Runs the loop body graph once per step along axis 0 of the data inputs, "
          "threading the loop states from step to step (gluon's F.contrib.foreach).")
      .SetParam<ForeachParam>()
      .SetInputNames([](const NodeAttrs& attrs) {
        return ArgNames(static_cast<size_t>(attrs.Param<ForeachParam>().num_args - 1));
      })
      .SetNumOutputs([](const NodeAttrs& attrs) {
        return static_cast<uint32_t>(attrs.Param<ForeachParam>().num_outputs);
      })
      .SetInferShape(ForeachShape)
      .SetInferType(ForeachType)
      .SetCompute(ForeachCompute);

  r->Register("_while_loop")
      .Describe(
          "Runs the func graph while the cond graph gives a nonzero value, at most "
          "max_iterations times (gluon's F.contrib.while_loop); per-step outputs are "
          "stacked to max_iterations, steps not run are zero.")
      .SetParam<WhileLoopParam>()
      .SetInputNames([](const NodeAttrs& attrs) {
        return ArgNames(static_cast<size_t>(attrs.Param<WhileLoopParam>().num_args - 2));
      })
      .SetNumOutputs([](const NodeAttrs& attrs) {
        return static_cast<uint32_t>(attrs.Param<WhileLoopParam>().num_outputs);
      })
      .SetInferShape(WhileLoopShape)
      .SetInferType(WhileLoopType)
      .SetCompute(WhileLoopCompute);

  r->Register("_cond")
      .Describe(
          "Runs the then graph or the else graph as the cond graph gives a nonzero or "
          "zero value (gluon's F.contrib.cond).")
      .SetParam<CondParam>()
      .SetInputNames([](const NodeAttrs& attrs) {
        return ArgNames(static_cast<size_t>(attrs.Param<CondParam>().num_args - 3));
      })
      .SetNumOutputs([](const NodeAttrs& attrs) {
        return static_cast<uint32_t>(attrs.Param<CondParam>().num_outputs);
      })
      .SetInferShape(CondShape)
      .SetInferType(CondType)
      .SetCompute(CondCompute);
}

}  // namespace hybridnet
