// Differential testing of whole graphs. Random valid graphs are drawn from the op registry —
// every registered unary and binary elementwise op (found by probing the registry), views,
// FullyConnected/Convolution/BatchNorm with activations after them (fusable chains), pooling,
// Concat, multi-output SliceChannel, fan-out, several graph outputs (repeats, variables, views of
// intermediates) — and each runs:
//   eager, node by node (the reference);
//   GraphExecutor with fusion and memory planning each on and off, over several batch sizes in
//   turn and back (plans made, reused and re-made);
//   the C API predictor on the model's JSON and .params bytes;
//   GraphExecutor after an export/import round trip of both files;
// and every output must be bit-identical to the reference. Graphs whose ops all have gradients
// are also differentiated (random head gradients, every input and parameter a variable): eager
// backward over the recorded ops against the hybridized path (imperative/cached_op.h: one planned
// forward+backward graph recorded as one tape node), every gradient bit-identical. A mismatch
// prints the seed, the path and the graph's JSON, so it reproduces with `hn_graph_diff --seed S
// --graphs 1`. With --export DIR, the graphs are written instead for tests/common/mxnet_check.py,
// which runs them in real MXNet 1.9.1: per graph and batch the symbol JSON, the .params, the input
// and the reference outputs, indexed in DIR/index.json.
//
//   hn_graph_diff [--graphs N] [--seed S] [--minutes M]   ends with "N passed, N failed"
//   hn_graph_diff --graphs N [--seed S] --export DIR
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/test_util.h"
#include "hybridnet/autograd.h"
#include "hybridnet/base.h"
#include "hybridnet/c_api.h"
#include "hybridnet/executor.h"
#include "hybridnet/imperative.h"
#include "hybridnet/io/params.h"
#include "hybridnet/npy.h"
#include "hybridnet/op.h"
#include "hybridnet/symbol.h"
#include "imperative/cached_op.h"

namespace hybridnet {
namespace {

// Elementwise ops of the registry that run with default attributes: one input (or two of the
// same shape) in, one output of that shape out, for any batch size (squeeze drops a batch of
// 1), and the same output on every call (random ops, such as _shuffle, draw anew each time).
// Internal (fusion-only) ops are left out.
struct ElementwiseOps {
  std::vector<std::string> unary, binary;
  std::vector<std::string> left_out;  // jumping ops, when only continuous ones are drawn
};

// Whether moving the inputs by one ulp moves the op's output by more than 1e-3 somewhere on a
// grid of [-4, 4] that holds the points where comparisons, rounding and sign jump (integers,
// halves, ties of two inputs) or where the op's domain ends (sqrt, log, arccos at their edges:
// a finite output on one side, NaN or infinity on the other).
bool JumpsAtOneUlp(const NodeAttrs& attrs, uint32_t num_inputs) {
  std::vector<float> grid, up, down;
  for (int k = -32; k <= 32; ++k) grid.push_back(static_cast<float>(k) / 8.f);
  for (float v : grid) up.push_back(std::nextafter(v, 5.f));
  for (float v : grid) down.push_back(std::nextafter(v, -5.f));
  const Shape shape{static_cast<int64_t>(grid.size())};
  const NDArray at = NDArray::FromVector(shape, grid);
  const NDArray base = Invoke(attrs, std::vector<NDArray>(num_inputs, at))[0];
  if (base.dtype() != DType::kFloat32) return true;  // an integer or boolean result
  // Every input at the grid, then each input in turn moved one ulp up or down.
  for (const std::vector<float>* nudged : {&up, &down}) {
    for (uint32_t moved = 0; moved < num_inputs; ++moved) {
      std::vector<NDArray> args(num_inputs, at);
      args[moved] = NDArray::FromVector(shape, *nudged);
      const NDArray out = Invoke(attrs, args)[0];
      for (size_t i = 0; i < grid.size(); ++i) {
        const float a = base.data<float>()[i], b = out.data<float>()[i];
        if (std::isfinite(a) != std::isfinite(b)) return true;  // the edge of the domain
        if (!std::isfinite(a)) continue;
        if (std::fabs(a - b) > 1e-3f * std::max(1.f, std::fabs(a))) return true;
      }
    }
  }
  return false;
}

// With `continuous_only`, ops whose output jumps (JumpsAtOneUlp) are left out: against another
// implementation (MXNet), the inputs of a node are computed floats whose last bits legitimately
// differ (other summation orders, other exp), and a jump turns that into a full difference. The
// jumps themselves are checked against MXNet by the per-op cases, on exact inputs.
ElementwiseOps ProbeRegistry(bool continuous_only) {
  ElementwiseOps ops;
  const Shape probes[] = {{2, 3, 4, 5}, {1, 3, 4, 5}, {64, 3, 4, 5}};
  for (const Op* op : OpRegistry::Global().List()) {
    if (op->internal || !op->infer_shape) continue;
    try {
      NodeAttrs attrs = MakeNodeAttrs(*op, "probe", {});
      const uint32_t n = op->NumInputs(attrs);
      if (op->NumOutputs(attrs) != 1 || (n != 1 && n != 2)) continue;
      bool same_shape = true;
      for (const Shape& probe : probes) {
        std::vector<Shape> in(n, probe), out(1);
        same_shape = same_shape && op->infer_shape(attrs, &in, &out) && out[0] == probe;
      }
      if (!same_shape) continue;
      std::vector<NDArray> args;
      for (uint32_t i = 0; i < n; ++i)
        args.push_back(NDArray::RandomUniform(probes[2], 0.5f, 1.5f));
      const NDArray first = Invoke(attrs, args)[0], second = Invoke(attrs, args)[0];
      if (std::memcmp(first.raw_data(), second.raw_data(), first.nbytes()) != 0) continue;
      if (continuous_only && JumpsAtOneUlp(attrs, n)) {
        ops.left_out.push_back(op->name);
        continue;
      }
      (n == 1 ? ops.unary : ops.binary).push_back(op->name);
    } catch (const Error&) {  // needs attributes: covered by the structured ops below
    }
  }
  return ops;
}

struct Graph {
  Symbol symbol;
  std::map<std::string, NDArray> params;
  std::vector<int64_t> batches;  // data shapes to run in turn: (batch, C, H, W)
  Shape data_tail;
};

class Generator {
 public:
  Generator(const ElementwiseOps& ops, uint64_t seed) : ops_(ops), rng_(seed) {}

  Graph Make() {
    Graph g;
    const int64_t c = Pick(2, 4), hw = Pick(3, 5);
    g.data_tail = Shape{c, hw, hw};
    g.batches = {Pick(1, 3), Pick(1, 3), 0};
    g.batches[2] = g.batches[0];
    pool_ = {{Symbol::Var("data"), Shape{2, c, hw, hw}}};
    params_ = &g.params;
    const int nodes = static_cast<int>(Pick(3, 12));
    for (int i = 0; i < nodes; ++i) {
      try {
        AddNode(i);
      } catch (const Error&) {  // shape inference rejected the draw (e.g. pooling a 1x1 map)
      }
    }
    std::vector<Symbol> outs;
    const int64_t num_outputs = Pick(1, 4);
    for (int64_t i = 0; i < num_outputs; ++i) outs.push_back(pool_[Index(pool_.size())].symbol);
    if (Chance(0.5)) outs.push_back(pool_.back().symbol);  // the last node is always live
    g.symbol = Symbol::Group(outs);
    return g;
  }

 private:
  struct Value {
    Symbol symbol;
    Shape shape;  // at batch 2 (the batch axis is free)
  };

  int64_t Pick(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  size_t Index(size_t n) { return static_cast<size_t>(Pick(0, static_cast<int64_t>(n) - 1)); }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  const Value& Any() { return pool_[Index(pool_.size())]; }

  Symbol Param(const std::string& name, const Shape& shape, float lo, float hi) {
    (*params_)[name] = NDArray::RandomUniform(shape, lo, hi);
    return Symbol::Var(name);
  }
  std::string Name(const char* what) { return what + std::to_string(counter_++); }

  void Push(const Symbol& s) {
    std::map<std::string, Shape> known;
    std::vector<std::string> inputs = s.ListArguments();
    for (const std::string& aux : s.ListAuxiliaryStates()) inputs.push_back(aux);
    for (const std::string& name : inputs)
      known[name] = name == "data" ? pool_[0].shape : params_->at(name).shape();
    Symbol::ShapeResult r = s.InferShape(known);
    for (size_t i = 0; i < r.out_shapes.size(); ++i) pool_.push_back({s[i], r.out_shapes[i]});
  }

  // A 4-D value, if any (convolution, pooling, BatchNorm, Concat, SliceChannel need one).
  const Value* Any4D() {
    std::vector<const Value*> four;
    for (const Value& v : pool_)
      if (v.shape.ndim() == 4) four.push_back(&v);
    return four.empty() ? nullptr : four[Index(four.size())];
  }

  Symbol MaybeActivation(const Symbol& s) {
    if (!Chance(0.6)) return s;
    static const char* kActs[] = {"relu", "sigmoid", "tanh", "softrelu"};
    return Symbol::Create("Activation", {s}, {{"act_type", kActs[Index(4)]}}, Name("act"));
  }

  void AddNode(int step) {
    const Value* x4 = Any4D();
    switch (step == 0 ? 0 : Pick(0, 9)) {
      case 0:
      case 1: {  // unary elementwise
        const std::string& op = ops_.unary[Index(ops_.unary.size())];
        Push(Symbol::Create(op, {Any().symbol}, {}, Name("u")));
        return;
      }
      case 2: {  // binary elementwise on two values of one shape (fan-out when it is the same)
        const Value& a = Any();
        std::vector<const Value*> same;
        for (const Value& v : pool_)
          if (v.shape == a.shape) same.push_back(&v);
        const std::string& op = ops_.binary[Index(ops_.binary.size())];
        Push(Symbol::Create(op, {a.symbol, same[Index(same.size())]->symbol}, {}, Name("b")));
        return;
      }
      case 3: {  // views
        const Value& a = Any();
        switch (Pick(0, 4)) {
          case 0:
            Push(Symbol::Create("Flatten", {a.symbol}, {}, Name("flat")));
            return;
          case 1:
            Push(Symbol::Create("Reshape", {a.symbol}, {{"shape", "(0, -1)"}}, Name("rs")));
            return;
          case 2:
            Push(Symbol::Create("expand_dims", {a.symbol}, {{"axis", "1"}}, Name("ed")));
            return;
          case 3:
            Push(Symbol::Create("_copy", {a.symbol}, {}, Name("copy")));
            return;
          default:
            Push(Symbol::Create("BlockGrad", {a.symbol}, {}, Name("bg")));
            return;
        }
      }
      case 4: {  // FullyConnected (+ activation: a fusable chain)
        const Value& a = Any();
        const int64_t in = a.shape.Size() / a.shape[0], units = Pick(2, 5);
        const std::string n = Name("fc");
        Symbol fc = Symbol::Create("FullyConnected",
                                   {a.symbol, Param(n + "_weight", Shape{units, in}, -1, 1),
                                    Param(n + "_bias", Shape{units}, -1, 1)},
                                   {{"num_hidden", std::to_string(units)}}, n);
        Push(MaybeActivation(fc));
        return;
      }
      case 5: {  // Convolution (+ activation)
        if (x4 == nullptr) return AddNode(0);
        const int64_t k = Chance(0.5) ? 1 : 3, f = Pick(2, 4), c = x4->shape[1];
        const std::string n = Name("conv");
        Symbol conv =
            Symbol::Create("Convolution",
                           {x4->symbol, Param(n + "_weight", Shape{f, c, k, k}, -1, 1),
                            Param(n + "_bias", Shape{f}, -1, 1)},
                           {{"kernel", "(" + std::to_string(k) + ", " + std::to_string(k) + ")"},
                            {"pad", k == 3 ? "(1, 1)" : "(0, 0)"},
                            {"num_filter", std::to_string(f)}},
                           n);
        Push(MaybeActivation(conv));
        return;
      }
      case 6: {  // BatchNorm (+ relu: fused into _contrib_BatchNormWithReLU)
        if (x4 == nullptr) return AddNode(0);
        const int64_t c = x4->shape[1];
        const std::string n = Name("bn");
        Symbol bn = Symbol::Create(
            "BatchNorm",
            {x4->symbol, Param(n + "_gamma", Shape{c}, 0.5f, 1.5f),
             Param(n + "_beta", Shape{c}, -1, 1), Param(n + "_moving_mean", Shape{c}, -1, 1),
             Param(n + "_moving_var", Shape{c}, 0.5f, 2)},
            {{"fix_gamma", "False"}}, n);
        Push(Chance(0.5) ? Symbol::Create("relu", {bn}, {}, Name("relu")) : bn);
        return;
      }
      case 7: {  // pooling
        if (x4 == nullptr) return AddNode(0);
        Push(Symbol::Create("Pooling", {x4->symbol},
                            {{"kernel", "(2, 2)"}, {"pool_type", Chance(0.5) ? "max" : "avg"}},
                            Name("pool")));
        return;
      }
      case 8: {  // Concat of two 4-D values that differ only in channels, or SliceChannel
        if (x4 == nullptr) return AddNode(0);
        for (const Value& v : pool_) {
          if (v.shape.ndim() == 4 && v.shape[2] == x4->shape[2] && v.shape[3] == x4->shape[3] &&
              Chance(0.5)) {
            Push(Symbol::Create("Concat", {x4->symbol, v.symbol}, {{"dim", "1"}}, Name("cat")));
            return;
          }
        }
        if (x4->shape[1] % 2 == 0) {
          Push(Symbol::Create("SliceChannel", {x4->symbol}, {{"num_outputs", "2"}}, Name("split")));
          return;
        }
        return AddNode(0);
      }
      default:
        Push(Symbol::Create("softmax", {Any().symbol}, {}, Name("softmax")));
        return;
    }
  }

  const ElementwiseOps& ops_;
  std::mt19937_64 rng_;
  std::vector<Value> pool_;
  std::map<std::string, NDArray>* params_ = nullptr;
  int counter_ = 0;
};

bool SameBits(const NDArray& a, const NDArray& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

std::string SerializeParams(const std::map<std::string, NDArray>& params) {
  NDArrayList list;
  for (const auto& kv : params) {
    list.names.push_back("arg:" + kv.first);
    list.arrays.push_back(kv.second);
  }
  return SerializeNDArrayList(list);
}

std::vector<NDArray> RunCApi(const std::string& json, const std::string& params, const NDArray& x) {
  hn_model* model = nullptr;
  hn_predictor* pred = nullptr;
  std::vector<NDArray> outputs;
  auto check = [](int rc, const char* what) {
    HN_CHECK(rc == HN_OK, kInternal) << what << ": " << hn_last_error();
  };
  check(hn_model_load_from_memory(json.data(), json.size(), params.data(), params.size(), &model),
        "hn_model_load_from_memory");
  check(hn_predictor_create(model, &pred), "hn_predictor_create");
  const std::vector<int64_t> dims(x.shape().begin(), x.shape().end());
  check(hn_predictor_set_input(pred, "data", HN_DTYPE_FLOAT32, dims.data(),
                               static_cast<int>(dims.size()), x.raw_data(), x.nbytes()),
        "hn_predictor_set_input");
  check(hn_predictor_forward(pred), "hn_predictor_forward");
  size_t count = 0;
  check(hn_predictor_num_outputs(pred, &count), "hn_predictor_num_outputs");
  for (size_t i = 0; i < count; ++i) {
    const int64_t* out_dims = nullptr;
    int ndim = 0;
    check(hn_predictor_output_shape(pred, i, &out_dims, &ndim), "hn_predictor_output_shape");
    NDArray y(Shape(std::vector<int64_t>(out_dims, out_dims + ndim)), DType::kFloat32);
    check(hn_predictor_get_output(pred, i, y.raw_data(), y.nbytes()), "hn_predictor_get_output");
    outputs.push_back(y);
  }
  hn_predictor_free(pred);
  hn_model_free(model);
  return outputs;
}

// Runs one graph every way; returns "" or what differed.
std::string Check(const Graph& g) {
  const std::string json = g.symbol.ToJSON();
  const std::string params_bytes = SerializeParams(g.params);
  std::vector<GraphExecutor> executors;
  for (bool fuse : {false, true})
    for (bool plan : {false, true})
      executors.emplace_back(g.symbol, std::vector<std::string>{"data"}, g.params,
                             ExecutorOptions{fuse, plan});
  NDArrayList reloaded = ParseNDArrayList(params_bytes, "round-trip.params");
  std::map<std::string, NDArray> reloaded_params;
  for (size_t i = 0; i < reloaded.arrays.size(); ++i)
    reloaded_params[reloaded.names[i].substr(4)] = reloaded.arrays[i];
  GraphExecutor round_trip(Symbol::FromJSON(json), {"data"}, reloaded_params);

  for (int64_t batch : g.batches) {
    Shape shape{batch, g.data_tail[0], g.data_tail[1], g.data_tail[2]};
    NDArray x = NDArray::RandomUniform(shape, -2, 2);
    std::map<std::string, NDArray> values = g.params;
    values["data"] = x;
    const std::vector<NDArray> expected = testing_util::RunNodeByNode(g.symbol, values);
    auto compare = [&](const std::vector<NDArray>& got, const std::string& path) -> std::string {
      if (got.size() != expected.size())
        return path + ": " + std::to_string(got.size()) + " outputs";
      for (size_t i = 0; i < got.size(); ++i)
        if (!SameBits(got[i], expected[i]))
          return path + ": output " + std::to_string(i) + " differs at batch " +
                 std::to_string(batch);
      return "";
    };
    const char* kNames[] = {"graph (fuse off, plan off)", "graph (fuse off, plan on)",
                            "graph (fuse on, plan off)", "graph (fuse on, plan on)"};
    for (size_t k = 0; k < executors.size(); ++k) {
      std::string why = compare(executors[k].Forward({x}), kNames[k]);
      if (!why.empty()) return why;
    }
    std::string why = compare(RunCApi(json, params_bytes, x), "C API predictor");
    if (why.empty()) why = compare(round_trip.Forward({x}), "export/import round trip");
    if (!why.empty()) return why;
  }
  return "";
}

// Runs `symbol` on `values` recorded, eagerly node by node or hybridized, and returns the
// gradients of every variable (in `names` order) for `head_grads`.
std::vector<NDArray> Gradients(const Symbol& symbol, const std::vector<std::string>& names,
                               std::vector<NDArray> values, const std::vector<NDArray>& head_grads,
                               bool hybridized) {
  // Copies: a backward in training mode updates BatchNorm's moving statistics, which the other
  // run must find as this one did.
  for (NDArray& v : values) {
    v = v.Copy();
    autograd::AttachGrad(&v);
  }
  std::vector<NDArray> heads;
  {
    auto recording = autograd::Record(/*train_mode=*/false);
    if (hybridized) {
      heads = internal::CachedOp(symbol, names, "graph").Run(values);
    } else {
      IndexedGraph g(symbol.outputs);
      std::vector<NDArray> entries(g.num_entries());
      for (uint32_t nid : g.input_nodes()) {
        const std::string& name = g[nid].node->name();
        const size_t i = std::find(names.begin(), names.end(), name) - names.begin();
        entries[g.entry_id(nid, 0)] = values[i];
      }
      for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) {
        if (g[nid].node->IsVariable()) continue;
        std::vector<NDArray> in;
        for (const auto& e : g[nid].inputs) in.push_back(entries[g.entry_id(e)]);
        std::vector<NDArray> out = Invoke(g[nid].node->attrs, in);
        for (uint32_t i = 0; i < out.size(); ++i) entries[g.entry_id(nid, i)] = out[i];
      }
      for (const auto& e : g.outputs()) heads.push_back(entries[g.entry_id(e)]);
    }
  }
  autograd::Backward(heads, head_grads);
  std::vector<NDArray> grads;
  for (const NDArray& v : values) grads.push_back(autograd::GetGrad(v));
  return grads;
}

// Eager against hybridized backward; "" when they agree or the graph has an op without a
// gradient (*checked false).
std::string CheckBackward(const Graph& g, bool* checked) {
  *checked = false;
  // The graph's variables (a draw that shape inference rejected may have left parameters unread).
  const std::vector<std::string> names = g.symbol.ListInputs();
  const NDArray data =
      NDArray::RandomUniform({g.batches[0], g.data_tail[0], g.data_tail[1], g.data_tail[2]}, -2, 2);
  std::vector<NDArray> values;
  for (const std::string& name : names)
    values.push_back(name == "data" ? data : g.params.at(name).Copy());
  std::map<std::string, NDArray> by_name;
  for (size_t i = 0; i < names.size(); ++i) by_name[names[i]] = values[i];
  std::vector<NDArray> head_grads;
  for (const NDArray& y : testing_util::RunNodeByNode(g.symbol, by_name))
    head_grads.push_back(NDArray::RandomUniform(y.shape(), -1, 1));
  std::vector<NDArray> eager;
  try {
    eager = Gradients(g.symbol, names, values, head_grads, false);
  } catch (const Error& e) {
    if (e.code() == StatusCode::kUnsupported) return "";  // an op without a gradient
    throw;
  }
  *checked = true;
  const std::vector<NDArray> hybrid = Gradients(g.symbol, names, values, head_grads, true);
  for (size_t i = 0; i < names.size(); ++i)
    if (!SameBits(hybrid[i], eager[i]))
      return "hybridized backward: the gradient of '" + names[i] + "' differs from eager's";
  return "";
}

// Writes graph `name` for the MXNet check: one index entry per batch size.
void Export(const Graph& g, const std::string& name, const std::string& dir,
            nlohmann::json* cases) {
  std::ofstream(dir + "/" + name + "-symbol.json") << g.symbol.ToJSON();
  std::ofstream(dir + "/" + name + "-0000.params", std::ios::binary) << SerializeParams(g.params);
  for (size_t b = 0; b < g.batches.size(); ++b) {
    const std::string run = name + "_b" + std::to_string(b);
    Shape shape{g.batches[b], g.data_tail[0], g.data_tail[1], g.data_tail[2]};
    std::map<std::string, NDArray> values = g.params;
    values["data"] = NDArray::RandomUniform(shape, -2, 2);
    SaveNpy(dir + "/" + run + "-data.npy", values["data"]);
    nlohmann::json entry{{"name", run},
                         {"op", "graph"},
                         {"symbol", name + "-symbol.json"},
                         {"params", name + "-0000.params"},
                         {"inputs", {{{"name", "data"}, {"file", run + "-data.npy"}}}},
                         {"mxnet_skip", ""},
                         {"mxnet_rtol", 1e-4}};
    entry["outputs"] = nlohmann::json::array();
    const std::vector<NDArray> outputs = testing_util::RunNodeByNode(g.symbol, values);
    for (size_t i = 0; i < outputs.size(); ++i) {
      const std::string file = run + "-out" + std::to_string(i) + ".npy";
      SaveNpy(dir + "/" + file, outputs[i]);
      entry["outputs"].push_back(file);
    }
    cases->push_back(entry);
  }
}

}  // namespace
}  // namespace hybridnet

int main(int argc, char** argv) {
  long graphs = 2000;
  unsigned long long seed = 1;
  double minutes = 0;
  std::string export_dir;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--graphs") == 0)
      graphs = std::atol(argv[i + 1]);
    else if (std::strcmp(argv[i], "--seed") == 0)
      seed = std::strtoull(argv[i + 1], nullptr, 10);
    else if (std::strcmp(argv[i], "--minutes") == 0)
      minutes = std::atof(argv[i + 1]);
    else if (std::strcmp(argv[i], "--export") == 0)
      export_dir = argv[i + 1];
    else {
      std::fprintf(stderr,
                   "usage: hn_graph_diff [--graphs N] [--seed S] [--minutes M] "
                   "[--export DIR]\n");
      return 2;
    }
  }
  using hybridnet::Generator;
  const hybridnet::ElementwiseOps ops = hybridnet::ProbeRegistry(!export_dir.empty());
  std::printf(
      "registry: %zu unary and %zu binary elementwise ops drawn, plus views, "
      "FullyConnected, Convolution, BatchNorm, Pooling, Concat, SliceChannel, softmax\n",
      ops.unary.size(), ops.binary.size());
  if (!export_dir.empty()) {
    std::string left_out;
    for (const std::string& name : ops.left_out) left_out += " " + name;
    std::printf("left out, their output jumps at one ulp of input:%s\n", left_out.c_str());
    nlohmann::json cases = nlohmann::json::array();
    for (long i = 0; i < graphs; ++i) {
      const unsigned long long graph_seed = seed + static_cast<unsigned long long>(i);
      hybridnet::Seed(graph_seed);
      Generator gen(ops, graph_seed);
      hybridnet::Export(gen.Make(), "g" + std::to_string(graph_seed), export_dir, &cases);
    }
    std::ofstream(export_dir + "/index.json") << nlohmann::json{{"cases", cases}}.dump(1);
    std::printf("exported %ld graphs (%zu runs) to %s\n", graphs, cases.size(), export_dir.c_str());
    return 0;
  }
  const auto start = std::chrono::steady_clock::now();
  long passed = 0, failed = 0, differentiated = 0;
  for (long i = 0; i < graphs || minutes > 0; ++i) {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (minutes > 0 && elapsed > minutes * 60) break;
    const unsigned long long graph_seed = seed + static_cast<unsigned long long>(i);
    hybridnet::Seed(graph_seed);
    Generator gen(ops, graph_seed);
    hybridnet::Graph g = gen.Make();
    std::string why;
    try {
      why = hybridnet::Check(g);
      bool checked = false;
      if (why.empty()) why = hybridnet::CheckBackward(g, &checked);
      differentiated += checked ? 1 : 0;
    } catch (const std::exception& e) {
      why = std::string("error: ") + e.what();
    }
    if (why.empty()) {
      ++passed;
    } else {
      ++failed;
      std::printf("FAIL seed %llu: %s\n%s\n", graph_seed, why.c_str(), g.symbol.ToJSON().c_str());
    }
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%ld graphs in %.1f s (%.0f graphs/min), each run 7 ways over 3 batch sizes\n",
              passed + failed, secs, static_cast<double>(passed + failed) / secs * 60);
  std::printf("%ld graphs differentiated (every op has a gradient): eager against hybridized\n",
              differentiated);
  std::printf("%ld passed, %ld failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
