// Control-flow nodes whose attributes and subgraphs disagree are refused with a message naming
// the node and the mismatch (the happy paths are conformance cases in control_flow_cases.cc).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "hybridnet/imperative.h"
#include "hybridnet/symbol.h"

namespace hybridnet {
namespace {

Symbol Relu(const std::string& var) {
  return Symbol::Create("relu", {Symbol::Var(var)}, {}, "r_" + var);
}

std::string ErrorOf(const std::string& op, const AttrDict& dict, const std::vector<Symbol>& graphs,
                    const std::vector<NDArray>& inputs) {
  NodeAttrs attrs = MakeNodeAttrs(op, "node", dict);
  for (const Symbol& g : graphs) attrs.subgraphs.push_back(std::make_shared<const Symbol>(g));
  try {
    Invoke(attrs, inputs);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << op << " accepted the node";
  return "";
}

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

const AttrDict kForeach{{"num_args", "2"},       {"num_outputs", "1"},    {"num_out_data", "1"},
                        {"in_data_locs", "[0]"}, {"in_state_locs", "[]"}, {"remain_locs", "[]"}};

TEST(ControlFlowErrors, ForeachNeedsOneBodyMatchingItsLocations) {
  const NDArray x = NDArray::Zeros({3, 2});
  EXPECT_HAS(ErrorOf("_foreach", kForeach, {}, {x}), "_foreach(node): expected 1 subgraph");
  AttrDict bad_loc = kForeach;
  bad_loc["in_data_locs"] = "[4]";
  EXPECT_HAS(ErrorOf("_foreach", bad_loc, {Relu("a")}, {x}), "distinct indices below 1");
  Symbol two_inputs = Symbol::Create("elemwise_add", {Symbol::Var("a"), Symbol::Var("b")}, {}, "s");
  EXPECT_HAS(ErrorOf("_foreach", kForeach, {two_inputs}, {x}),
             "the loop body has 2 inputs, but the node has 1");
  AttrDict no_data = kForeach;
  no_data["in_data_locs"] = "[]";
  no_data["remain_locs"] = "[0]";
  EXPECT_HAS(ErrorOf("_foreach", no_data, {Relu("a")}, {x}), "nothing to iterate over");
  Symbol same_name = Symbol::Create("elemwise_add", {Symbol::Var("a"), Symbol::Var("a")}, {}, "s");
  AttrDict two = kForeach;
  two["num_args"] = "3";
  two["remain_locs"] = "[1]";
  EXPECT_HAS(ErrorOf("_foreach", two, {same_name}, {x, x}), "two inputs named 'a'");
}

TEST(ControlFlowErrors, WhileLoopAndCondCheckTheirGraphs) {
  const NDArray x = NDArray::Ones({1});
  const AttrDict loop{{"num_args", "3"},          {"num_outputs", "2"},
                      {"num_out_data", "1"},      {"max_iterations", "2"},
                      {"cond_input_locs", "[0]"}, {"func_input_locs", "[0]"},
                      {"func_var_locs", "[0]"}};
  EXPECT_HAS(ErrorOf("_while_loop", loop, {Relu("c")}, {x}), "expected 2 subgraphs");
  // func returns one output where num_outputs says two.
  EXPECT_HAS(ErrorOf("_while_loop", loop, {Relu("c"), Relu("c")}, {x}),
             "func has 1 outputs; num_outputs 2");
  const AttrDict cond{{"num_args", "4"},
                      {"num_outputs", "1"},
                      {"cond_input_locs", "[0]"},
                      {"then_input_locs", "[0]"},
                      {"else_input_locs", "[0, 0]"}};
  EXPECT_HAS(ErrorOf("_cond", cond, {Relu("a"), Relu("a"), Relu("a")}, {x}),
             "else_input_locs (0, 0) must hold distinct indices");
  // A condition of several elements has no truth value.
  AttrDict fine = cond;
  fine["else_input_locs"] = "[0]";
  EXPECT_HAS(ErrorOf("_cond", fine, {Relu("a"), Relu("a"), Relu("a")}, {NDArray::Ones({3})}),
             "cond must give one element");
}

}  // namespace
}  // namespace hybridnet
