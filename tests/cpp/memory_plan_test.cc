// The executor's memory planning (core/src/executor/memory_plan.h): each pass on its own, a
// checker that no arena slot is overwritten while an entry in it is still needed, and the graphs
// that once came out wrong — outputs that are views of recycled buffers, repeated outputs,
// variables as outputs — run through GraphExecutor bit for bit against node-by-node eager runs.
#include "executor/memory_plan.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/test_util.h"
#include "hybridnet/executor.h"
#include "hybridnet/imperative.h"
#include "hybridnet/op.h"
#include "kernels/kernel_choice.h"
#include "ops/nn/convolution_fusions.h"
#include "pass/passes.h"

namespace hybridnet {
namespace {

using internal::EntryPlace;
using internal::MemoryPlan;
using internal::SlotKind;
using testing_util::BitEqual;

Symbol Op(const std::string& op, const std::vector<Symbol>& in, const AttrDict& attrs = {}) {
  return Symbol::Create(op, in, attrs);
}

// Every option combination, and the data shapes in turn on one executor (plans made, reused and
// re-made), each output bit-equal to the eager run.
void ExpectExecutorMatchesEager(const Symbol& symbol, const std::map<std::string, NDArray>& params,
                                const std::vector<Shape>& data_shapes) {
  for (bool fuse : {false, true}) {
    for (bool plan_memory : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "fuse " << fuse << ", plan_memory " << plan_memory);
      GraphExecutor exec(symbol, {"data"}, params, ExecutorOptions{fuse, plan_memory});
      std::vector<Shape> order = data_shapes;
      order.push_back(data_shapes.front());
      for (const Shape& shape : order) {
        SCOPED_TRACE(::testing::Message() << "data " << shape);
        NDArray x = NDArray::RandomNormal(shape);
        std::map<std::string, NDArray> values = params;
        values["data"] = x;
        std::vector<NDArray> expected = testing_util::RunNodeByNode(symbol, values);
        std::vector<NDArray> got = exec.Forward({x});
        ASSERT_EQ(got.size(), expected.size());
        for (size_t i = 0; i < got.size(); ++i)
          EXPECT_TRUE(BitEqual(got[i], expected[i])) << "output " << i;
        // Into caller-provided outputs as well (the zero-allocation path).
        exec.Forward({x}, &got);
        for (size_t i = 0; i < got.size(); ++i)
          EXPECT_TRUE(BitEqual(got[i], expected[i])) << "output " << i;
      }
    }
  }
}

// ---- the plan checker -------------------------------------------------------------------------

// Replays the graph over `plan` and fails when a kernel writes an arena slot while another entry
// held there is still to be read or is a graph output (copied out after the last kernel). Written
// independently of the planner: reads are counted from the graph itself.
void ExpectPlanKeepsLiveEntries(const IndexedGraph& g, const MemoryPlan& plan) {
  std::vector<int> reads_left(g.num_entries(), 0);
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid)
    for (const auto& e : g[nid].inputs) ++reads_left[g.entry_id(e)];
  std::set<uint32_t> graph_outputs;
  for (const auto& e : g.outputs()) graph_outputs.insert(g.entry_id(e));
  std::set<uint32_t> kernels(plan.kernel_nodes.begin(), plan.kernel_nodes.end());
  std::map<size_t, std::set<uint32_t>> occupants;  // arena slot -> entries whose bytes are there

  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) {
    const Node* node = g[nid].node;
    if (node->IsVariable()) continue;
    std::vector<uint32_t> in_eids;
    for (const auto& e : g[nid].inputs) {
      in_eids.push_back(g.entry_id(e));
      --reads_left[g.entry_id(e)];
    }
    for (uint32_t i = 0; i < node->NumOutputs(); ++i) {
      const uint32_t eid = g.entry_id(nid, i);
      const EntryPlace& p = plan.place[eid];
      if (p.kind != SlotKind::kArena) continue;
      if (!kernels.count(nid)) {  // a view: shares its input's bytes
        occupants[p.index].insert(eid);
        continue;
      }
      for (uint32_t held : occupants[p.index]) {
        EXPECT_FALSE(graph_outputs.count(held)) << node->name() << " overwrites slot " << p.index
                                                << " holding a graph output (entry " << held << ")";
        const bool read_here = std::count(in_eids.begin(), in_eids.end(), held) > 0;
        if (reads_left[held] > 0) {
          ADD_FAILURE() << node->name() << " overwrites slot " << p.index << " while entry " << held
                        << " still has " << reads_left[held] << " reads";
        } else if (read_here) {
          bool allowed = false;  // in place: the op declares it and this is the entry's last read
          for (const auto& io : node->attrs.op->InplacePairs(node->attrs))
            allowed |= io.second == i && io.first < in_eids.size() && in_eids[io.first] == held;
          EXPECT_TRUE(allowed) << node->name() << " writes over its own input " << held
                               << " without declaring it in place";
        }
      }
      occupants[p.index] = {eid};
    }
  }
  for (uint32_t eid : graph_outputs) {
    const EntryPlace& p = plan.place[eid];
    if (p.kind == SlotKind::kArena) {
      EXPECT_TRUE(occupants[p.index].count(eid))
          << "graph output entry " << eid << " was overwritten";
    }
  }
}

// Places `symbol` with `data` fed to the variable "data" and every other variable a parameter.
struct Placed {
  IndexedGraph graph;
  MemoryPlan plan;
};

Placed Place(const Symbol& symbol, const Shape& data, bool reuse) {
  Placed r{IndexedGraph(symbol.outputs), {}};
  const IndexedGraph& g = r.graph;
  std::vector<Shape> shapes(g.num_entries());
  std::vector<uint32_t> data_nodes, param_nodes;
  for (uint32_t nid : g.input_nodes()) {
    if (g[nid].node->name() == "data") {
      shapes[g.entry_id(nid, 0)] = data;
      data_nodes.push_back(nid);
    } else {
      param_nodes.push_back(nid);
    }
  }
  EXPECT_TRUE(internal::InferShapes(g, &shapes));
  std::vector<size_t> bytes(g.num_entries());
  for (size_t e = 0; e < bytes.size(); ++e) bytes[e] = static_cast<size_t>(shapes[e].Size()) * 4;
  r.plan = internal::PlaceEntries(g, bytes, data_nodes, param_nodes, reuse);
  return r;
}

// ---- the passes ---------------------------------------------------------------------------------

TEST(MemoryPlanTest, CountUsesIncludesGraphOutputs) {
  Symbol x = Symbol::Var("data");
  Symbol r = Op("relu", {x});
  Symbol g = Symbol::Group({r, Op("sigmoid", {r}), r});
  IndexedGraph graph(g.outputs);
  std::vector<int> uses = internal::CountUses(graph);
  EXPECT_EQ(uses[graph.entry_id(graph.node_id(r.outputs[0].node.get()), 0)], 1 + 2);
  EXPECT_EQ(uses[graph.entry_id(graph.node_id(x.outputs[0].node.get()), 0)], 1);
}

TEST(MemoryPlanTest, PlacesDataParametersAndOutputs) {
  Symbol x = Symbol::Var("data");
  Symbol w = Symbol::Var("w");
  Symbol fc = Op("FullyConnected", {x, w, Symbol::Var("b")}, {{"num_hidden", "4"}});
  Symbol out = Symbol::Group({Op("relu", {fc}), x, w});
  Placed p = Place(out, Shape{2, 3}, true);
  const IndexedGraph& g = p.graph;
  for (uint32_t nid : g.input_nodes()) {
    const std::string& name = g[nid].node->name();
    EXPECT_EQ(p.plan.place[g.entry_id(nid, 0)].kind,
              name == "data" ? SlotKind::kData : SlotKind::kParam)
        << name;
  }
  EXPECT_EQ(p.plan.written_to_output, (std::vector<bool>{true, false, false}));
  EXPECT_EQ(p.plan.kernel_nodes.size(), 2u);
  ExpectPlanKeepsLiveEntries(g, p.plan);
}

TEST(MemoryPlanTest, ReusesSlotsByLivenessAndViewsShareTheirInput) {
  // A chain: each intermediate dies at the next node, so two slots suffice; Flatten is free.
  Symbol h = Symbol::Var("data");
  for (int i = 0; i < 6; ++i) h = Op(i % 2 ? "tanh" : "sigmoid", {Op("exp", {h})});
  Symbol flat = Op("Flatten", {h});
  Placed p = Place(Op("relu", {flat}), Shape{2, 8}, true);
  EXPECT_LE(p.plan.slot_bytes.size(), 2u);
  const uint32_t flat_eid = p.graph.entry_id(p.graph.node_id(flat.outputs[0].node.get()), 0);
  const uint32_t h_eid = p.graph.entry_id(p.graph.node_id(h.outputs[0].node.get()), 0);
  EXPECT_EQ(p.plan.place[flat_eid].index, p.plan.place[h_eid].index);
  ExpectPlanKeepsLiveEntries(p.graph, p.plan);
  // Without reuse every kernel output has its own slot (the last one writes the caller's array).
  Placed naive = Place(Op("relu", {flat}), Shape{2, 8}, false);
  EXPECT_EQ(naive.plan.slot_bytes.size(), naive.plan.kernel_nodes.size() - 1);
  ExpectPlanKeepsLiveEntries(naive.graph, naive.plan);
}

TEST(MemoryPlanTest, LayOutArenaAlignsSlots) {
  size_t total = 0;
  std::vector<size_t> offsets = internal::LayOutArena({4, 100, 64, 1}, &total);
  EXPECT_EQ(offsets, (std::vector<size_t>{0, 64, 192, 256}));
  EXPECT_EQ(total, 320u);
}

TEST(MemoryPlanTest, TheCheckerCatchesAnOverwrittenOutput) {
  // A plan that puts the Flatten head's source and the later tanh in one slot is wrong; the
  // checker must say so (the planner's old bug).
  Symbol x = Symbol::Var("data");
  Symbol g = Symbol::Group({Op("Flatten", {Op("relu", {x})}), Op("sigmoid", {Op("tanh", {x})})});
  Placed p = Place(g, Shape{2, 3}, true);
  for (auto& place : p.plan.place)
    if (place.kind == SlotKind::kArena) place.index = 0;
  ::testing::TestPartResultArray failures;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
    ExpectPlanKeepsLiveEntries(p.graph, p.plan);
  }
  EXPECT_GT(failures.size(), 0);
}

// ---- regressions, end to end through GraphExecutor ----------------------------------------------

TEST(MemoryPlanRegression, FlattenHeadOfARecycledBuffer) {
  Symbol x = Symbol::Var("data");
  Symbol g = Symbol::Group({Op("Flatten", {Op("relu", {x})}), Op("sigmoid", {Op("tanh", {x})})});
  ExpectPlanKeepsLiveEntries(Place(g, Shape{2, 3, 4}, true).graph,
                             Place(g, Shape{2, 3, 4}, true).plan);
  ExpectExecutorMatchesEager(g, {}, {Shape{2, 3, 4}, Shape{5, 3, 4}});
}

TEST(MemoryPlanRegression, SeveralViewHeadsLikeADetector) {
  Symbol x = Symbol::Var("data");
  Symbol a = Op("relu", {x}), b = Op("tanh", {x}), c = Op("exp", {Op("negative", {x})});
  Symbol g =
      Symbol::Group({Op("Reshape", {a}, {{"shape", "(0, -1)"}}), Op("Flatten", {b}),
                     Op("_copy", {c}), Op("expand_dims", {Op("sigmoid", {x})}, {{"axis", "1"}}),
                     Op("elemwise_add", {Op("sqrt", {Op("abs", {x})}), Op("square", {x})})});
  ExpectPlanKeepsLiveEntries(Place(g, Shape{2, 3, 4}, true).graph,
                             Place(g, Shape{2, 3, 4}, true).plan);
  ExpectExecutorMatchesEager(g, {}, {Shape{2, 3, 4}, Shape{1, 3, 4}});
}

TEST(MemoryPlanRegression, TheSameEntryAsTwoOutputs) {
  Symbol x = Symbol::Var("data");
  Symbol r = Op("relu", {x});
  Symbol f = Op("Flatten", {Op("tanh", {x})});
  Symbol g = Symbol::Group({r, f, r, f, Op("sigmoid", {Op("exp", {x})})});
  ExpectExecutorMatchesEager(g, {}, {Shape{2, 3}, Shape{4, 3}});
}

TEST(MemoryPlanRegression, AnInputAndAParameterAsOutputs) {
  Symbol x = Symbol::Var("data");
  Symbol w = Symbol::Var("w"), b = Symbol::Var("b");
  Symbol fc = Op("FullyConnected", {x, w, b}, {{"num_hidden", "4"}});
  Symbol g = Symbol::Group({x, Op("relu", {fc}), w, Op("Flatten", {x}), Op("tanh", {fc})});
  Seed(3);
  std::map<std::string, NDArray> params{{"w", NDArray::RandomNormal({4, 3})},
                                        {"b", NDArray::RandomNormal({4})}};
  ExpectExecutorMatchesEager(g, params, {Shape{2, 3}, Shape{7, 3}});
}

TEST(MemoryPlanRegression, AViewOfAViewAsOutput) {
  Symbol x = Symbol::Var("data");
  Symbol v = Op("Flatten", {Op("Reshape", {Op("relu", {x})}, {{"shape", "(0, 2, -1)"}})});
  Symbol g = Symbol::Group({v, Op("sigmoid", {Op("tanh", {Op("exp", {x})})})});
  ExpectPlanKeepsLiveEntries(Place(g, Shape{2, 4, 3}, true).graph,
                             Place(g, Shape{2, 4, 3}, true).plan);
  ExpectExecutorMatchesEager(g, {}, {Shape{2, 4, 3}, Shape{3, 4, 3}});
}

TEST(MemoryPlanRegression, AnInPlaceCandidateWhoseInputIsAlsoAnOutput) {
  // tanh(x) is a head (through Flatten) and the input of relu, which could run in place on it.
  Symbol x = Symbol::Var("data");
  Symbol t = Op("tanh", {x});
  Symbol g = Symbol::Group({Op("Flatten", {t}), Op("relu", {t}), Op("sigmoid", {Op("exp", {x})})});
  ExpectPlanKeepsLiveEntries(Place(g, Shape{3, 5}, true).graph, Place(g, Shape{3, 5}, true).plan);
  ExpectExecutorMatchesEager(g, {}, {Shape{3, 5}, Shape{1, 5}});
}

// ---- fused residual convolutions in place
// ---------------------------------------------------------

// A convolution (+ BatchNorm) named `name` over `x`, kernel k x k with "same" padding, `groups`
// groups; its parameters are added to `params`.
Symbol Conv(const Symbol& x, const std::string& name, int64_t in_channels, int64_t filters,
            int64_t k, int64_t groups, bool bn, std::map<std::string, NDArray>* params) {
  const std::string kernel = "(" + std::to_string(k) + ", " + std::to_string(k) + ")";
  const std::string pad = k == 3 ? "(1, 1)" : "(0, 0)";
  Symbol y = Op("Convolution", {x, Symbol::Var(name + "_weight")},
                {{"kernel", kernel},
                 {"pad", pad},
                 {"num_filter", std::to_string(filters)},
                 {"num_group", std::to_string(groups)},
                 {"no_bias", "True"}});
  (*params)[name + "_weight"] =
      NDArray::RandomNormal({filters, in_channels / groups, k, k}, 0.f, 0.3f);
  if (!bn) return y;
  const std::vector<std::string> stats = {"gamma", "beta", "moving_mean", "moving_var"};
  std::vector<Symbol> in = {y};
  for (const std::string& st : stats) in.push_back(Symbol::Var(name + "_" + st));
  (*params)[name + "_gamma"] = NDArray::RandomUniform({filters}, 0.5f, 1.5f);
  (*params)[name + "_beta"] = NDArray::RandomNormal({filters});
  (*params)[name + "_moving_mean"] = NDArray::RandomNormal({filters}, 0.f, 0.1f);
  (*params)[name + "_moving_var"] = NDArray::RandomUniform({filters}, 0.5f, 1.5f);
  return Op("BatchNorm", in, {{"fix_gamma", "False"}});
}

TEST(MemoryPlanTest, FusedResidualConvolutionsWriteOverTheirResidual) {
  // Residual blocks whose last convolution runs on each of the backend's kernels, its residual an
  // intermediate last read there: the fused op's output takes the residual's slot, and the
  // results stay those of the ops run one by one (ExpectExecutorMatchesEager runs the planned
  // graph at 1 and 2 threads; fast_math against itself unplanned).
  struct Block {
    const char* kernel;
    Shape data;
    int64_t last_k, last_groups, expand;  // expand: a 1x1 convolution before the last one
  };
  const int64_t C = 16;
  for (const Block& b : {Block{"pointwise 1x1", Shape{2, 3, 9, 7}, 1, 1, 0},
                         Block{"3x3 (oneDNN, its sum post-op)", Shape{2, 3, 9, 7}, 3, 1, 0},
                         Block{"depthwise 3x3", Shape{2, 3, 9, 7}, 3, C, 0},
                         Block{"1x1 image (matrix-vector)", Shape{1, 3, 1, 1}, 1, 1, 0},
                         Block{"expansion into depthwise 3x3", Shape{2, 3, 9, 7}, 3, C, 1}}) {
    SCOPED_TRACE(b.kernel);
    Seed(3);
    std::map<std::string, NDArray> params;
    const Symbol stem =
        Op("Activation", {Conv(Symbol::Var("data"), "stem", 3, C, 1, 1, true, &params)},
           {{"act_type", "relu"}});
    Symbol mid =
        Op("Activation", {Conv(stem, "mid", C, C, 3, 1, true, &params)}, {{"act_type", "relu"}});
    if (b.expand) {
      mid = Op("Activation", {Conv(mid, "expand", C, C, 1, 1, true, &params)},
               {{"act_type", "relu"}});
    }
    const Symbol last = Conv(mid, "last", C, C, b.last_k, b.last_groups, true, &params);
    const Symbol net = Op("Activation", {Op("elemwise_add", {last, stem})}, {{"act_type", "relu"}});

    size_t fused = 0;
    const Symbol optimized = internal::FuseOps(net, &fused);
    const IndexedGraph fused_graph(optimized.outputs);
    std::vector<Shape> shapes(fused_graph.num_entries());
    for (uint32_t nid : fused_graph.input_nodes()) {
      if (fused_graph[nid].node->name() == "data") shapes[fused_graph.entry_id(nid, 0)] = b.data;
    }
    ASSERT_TRUE(internal::InferShapes(fused_graph, &shapes));
    size_t relayouts = 0;
    const Placed p =
        Place(internal::LayOutChannelLast(optimized, shapes, &relayouts), b.data, true);
    ExpectPlanKeepsLiveEntries(p.graph, p.plan);
    int in_place = 0, expansions = 0;
    for (uint32_t nid = 0; nid < p.graph.num_nodes(); ++nid) {
      const Node* node = p.graph[nid].node;
      if (node->IsVariable() || node->attrs.op->name != "_hn_convolution") continue;
      const internal::ConvolutionFusions& fusions = internal::FusionsOf(node->attrs);
      expansions += fusions.expand.has_value();
      if (!fusions.residual) continue;
      const EntryPlace& out = p.plan.place[p.graph.entry_id(nid, 0)];
      const EntryPlace& residual = p.plan.place[p.graph.entry_id(p.graph[nid].inputs.back())];
      EXPECT_EQ(out.kind, SlotKind::kArena);
      EXPECT_EQ(residual.kind, SlotKind::kArena);
      in_place += out.index == residual.index;
    }
    EXPECT_EQ(in_place, 1);
    // The expansion fuses into our depthwise kernel only (AVX-512); elsewhere it stays an op.
    EXPECT_EQ(expansions,
              internal::KernelRunsHere("convolution", "depthwise3x3") ? b.expand : 0);

    const int threads = GetNumThreads();
    for (int t : {1, 2}) {
      SCOPED_TRACE(::testing::Message() << t << " threads");
      SetNumThreads(t);
      ExpectExecutorMatchesEager(net, params, {b.data});
      GraphExecutor planned(net, {"data"}, params, ExecutorOptions{true, true, true});
      GraphExecutor unplanned(net, {"data"}, params, ExecutorOptions{true, false, true});
      const NDArray x = NDArray::RandomNormal(b.data);
      EXPECT_TRUE(BitEqual(planned.Forward({x})[0], unplanned.Forward({x})[0])) << "fast_math";
    }
    SetNumThreads(threads);
  }
}

// ---- the checker over real models ---------------------------------------------------------------

std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::string(HN_FIXTURES_DIR) + "/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << HN_FIXTURES_DIR << "/" << name;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(MemoryPlanTest, RealModelsPlansKeepLiveEntries) {
  struct Model {
    const char* file;
    Shape data;
  };
  for (const Model& m : {Model{"cifar_resnet20_v1-symbol.json", Shape{2, 3, 32, 32}},
                         Model{"cifar_resnet20_v2-symbol.json", Shape{1, 3, 32, 32}},
                         Model{"resnet-152-symbol.json", Shape{1, 3, 224, 224}}}) {
    SCOPED_TRACE(m.file);
    Symbol s = Symbol::FromJSON(ReadFixture(m.file));
    size_t fused = 0;
    for (const Symbol& variant : {s, internal::FuseOps(s, &fused)}) {
      Placed p = Place(variant, m.data, true);
      ExpectPlanKeepsLiveEntries(p.graph, p.plan);
      EXPECT_LT(p.plan.slot_bytes.size(), p.plan.kernel_nodes.size() / 4) << "slots are reused";
    }
  }
}

}  // namespace
}  // namespace hybridnet
