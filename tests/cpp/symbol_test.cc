#include "hybridnet/symbol.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "hybridnet/base.h"

namespace hybridnet {
namespace {

Symbol Mlp() {
  Symbol x = Symbol::Var("data");
  x = Symbol::Create("FullyConnected", {x}, {{"num_hidden", "8"}}, "fc1");
  x = Symbol::Create("Activation", {x}, {{"act_type", "relu"}}, "relu1");
  return Symbol::Create("FullyConnected", {x}, {{"num_hidden", "2"}}, "fc2");
}

TEST(SymbolTest, ComposeCreatesMissingInputsAsVariables) {
  Symbol y = Mlp();
  EXPECT_EQ(y.ListArguments(),
            (std::vector<std::string>{"data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"}));
  EXPECT_TRUE(y.ListAuxiliaryStates().empty());
  EXPECT_EQ(y.ListOutputs(), (std::vector<std::string>{"fc2_output"}));
  EXPECT_EQ(y.ToString(), "<Symbol fc2>");
}

TEST(SymbolTest, NoBiasDropsTheBiasInput) {
  Symbol y = Symbol::Create("FullyConnected", {Symbol::Var("x")},
                            {{"num_hidden", "4"}, {"no_bias", "True"}}, "fc");
  EXPECT_EQ(y.ListArguments(), (std::vector<std::string>{"x", "fc_weight"}));
}

TEST(SymbolTest, InfersShapesForwardAndIntoWeights) {
  auto r = Mlp().InferShape({{"data", Shape({3, 5})}});
  ASSERT_TRUE(r.complete);
  EXPECT_EQ(r.arg_shapes, (std::vector<Shape>{Shape({3, 5}), Shape({8, 5}), Shape({8}),
                                              Shape({2, 8}), Shape({2})}));
  EXPECT_EQ(r.out_shapes, (std::vector<Shape>{Shape({3, 2})}));
}

TEST(SymbolTest, PartialInferenceLeavesUnknownsAndFullInferenceNamesThem) {
  Symbol y = Mlp();
  auto r = y.InferShape({}, /*partial=*/true);
  EXPECT_FALSE(r.complete);
  EXPECT_EQ(r.arg_shapes[2], Shape({8}));  // bias shape follows from num_hidden alone
  try {
    y.InferShape({});
    FAIL() << "incomplete inference did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kShapeError);
    EXPECT_NE(std::string(e.what()).find("data"), std::string::npos) << e.what();
  }
}

TEST(SymbolTest, ShapeHintsAndConflicts) {
  Symbol data = Symbol::Var("data", {{"__shape__", "(0, 5)"}});
  Symbol y = Symbol::Create("FullyConnected", {data}, {{"num_hidden", "3"}}, "fc");
  auto r = y.InferShape({}, /*partial=*/true);
  EXPECT_EQ(r.arg_shapes[1], Shape({3, 5}));  // weight from the hint's known dim
  try {
    y.InferShape({{"data", Shape({2, 4})}});
    FAIL() << "a conflict with __shape__ did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kShapeError);
    EXPECT_NE(std::string(e.what()).find("__shape__"), std::string::npos) << e.what();
  }
  try {
    Mlp().InferShape({{"nosuch", Shape({1})}});
    FAIL() << "an unknown input name did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kNotFound);
    EXPECT_NE(std::string(e.what()).find("nosuch"), std::string::npos);
  }
}

TEST(SymbolTest, GroupAndIndexing) {
  Symbol a = Symbol::Var("a");
  Symbol b = Symbol::Create("relu", {a}, {}, "r");
  Symbol g = Symbol::Group({a, b});
  EXPECT_EQ(g.NumOutputs(), 2u);
  EXPECT_EQ(g.ListOutputs(), (std::vector<std::string>{"a", "r_output"}));
  EXPECT_EQ(g[1].ToString(), "<Symbol r>");
  EXPECT_EQ(g.ToString(), "<Symbol group [a, r]>");
  EXPECT_THROW(g[2], Error);
}

// Ops with MXNet's own output names (FListOutputNames) list them; others number theirs.
TEST(SymbolTest, ListOutputsUsesTheOpsOutputNames) {
  Symbol x = Symbol::Var("x");
  Symbol lstm = Symbol::Create(
      "RNN", {x, Symbol::Var("p"), Symbol::Var("h"), Symbol::Var("c")},
      {{"mode", "lstm"}, {"state_size", "4"}, {"num_layers", "1"}, {"state_outputs", "True"}},
      "rnn0");
  EXPECT_EQ(lstm.ListOutputs(), (std::vector<std::string>{"rnn0_output", "rnn0_state_output",
                                                          "rnn0_statecell_output"}));
  Symbol gru = Symbol::Create(
      "RNN", {x, Symbol::Var("p"), Symbol::Var("h")},
      {{"mode", "gru"}, {"state_size", "4"}, {"num_layers", "1"}, {"state_outputs", "True"}},
      "rnn1");
  EXPECT_EQ(gru.ListOutputs(), (std::vector<std::string>{"rnn1_output", "rnn1_state_output"}));
  Symbol split = Symbol::Create("SliceChannel", {x}, {{"num_outputs", "2"}}, "split0");
  EXPECT_EQ(split.ListOutputs(), (std::vector<std::string>{"split0_output0", "split0_output1"}));
}

TEST(SymbolTest, ComposeErrors) {
  try {
    Symbol::Create("NoSuchOp", {Symbol::Var("x")});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kNotFound);
    EXPECT_NE(std::string(e.what()).find("NoSuchOp"), std::string::npos);
  }
  try {
    Symbol::Create("FullyConnected", {Symbol::Var("x")}, {{"num_hidden", "abc"}}, "fc1");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
    std::string msg = e.what();
    EXPECT_NE(msg.find("FullyConnected(fc1)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("num_hidden"), std::string::npos) << msg;
    EXPECT_NE(msg.find("abc"), std::string::npos) << msg;
  }
  Symbol two = Symbol::Group({Symbol::Var("a"), Symbol::Var("b")});
  EXPECT_THROW(Symbol::Create("relu", {two}), Error);
  EXPECT_THROW(Symbol::Var(""), Error);
}

TEST(SymbolTest, CopyIsIndependent) {
  Symbol y = Mlp();
  Symbol c = y.Copy();
  EXPECT_EQ(c.ListArguments(), y.ListArguments());
  EXPECT_NE(c.outputs[0].node.get(), y.outputs[0].node.get());
}

TEST(IndexedGraphTest, PostOrderWithSharedNodesOnce) {
  Symbol a = Symbol::Var("a");
  Symbol r = Symbol::Create("relu", {a}, {}, "r");
  Symbol s = Symbol::Create("elemwise_add", {r, r}, {}, "s");
  IndexedGraph g(s.outputs);
  ASSERT_EQ(g.num_nodes(), 3u);
  EXPECT_EQ(g[0].node->name(), "a");
  EXPECT_EQ(g[1].node->name(), "r");
  EXPECT_EQ(g[2].node->name(), "s");
  EXPECT_EQ(g.input_nodes(), (std::vector<uint32_t>{0}));
}

// A graph built in memory (no JSON reader checked it) whose nodes read each other: an error
// naming a node on the cycle, also when the cycle is reached through a node indexed before.
TEST(IndexedGraphTest, RejectsCyclesBuiltInMemory) {
  Symbol a = Symbol::Var("a");
  Symbol p = Symbol::Create("elemwise_add", {a, a}, {}, "p");
  Symbol q = Symbol::Create("relu", {p}, {}, "q");
  const std::shared_ptr<Node>& p_node = p.outputs[0].node;
  p_node->inputs[1] = q.outputs[0];  // p reads q, q reads p
  for (const std::vector<NodeEntry>& heads :
       {q.outputs, std::vector<NodeEntry>{a.outputs[0], q.outputs[0]}}) {
    try {
      IndexedGraph g(heads);
      ADD_FAILURE() << "a cycle was indexed";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), StatusCode::kFormatError);
      EXPECT_NE(std::string(e.what()).find("the graph has a cycle through node"),
                std::string::npos)
          << e.what();
    }
  }
  p_node->inputs[1] = a.outputs[0];  // the nodes own each other: break the loop to free them
}

}  // namespace
}  // namespace hybridnet
