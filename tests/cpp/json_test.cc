// Symbol JSON: the exact bytes MXNet writes (spec mxnet-formats.md 2.5), the legacy upgrade
// path (2.9) and a clear kFormatError for every malformed input.
#include "hybridnet/io/json.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "hybridnet/base.h"
#include "hybridnet/limits.h"
#include "hybridnet/symbol.h"
#include "io/json_writer.h"

namespace hybridnet {
namespace {

// The text of the error LoadJSON throws; fails the test when it throws nothing or another code.
std::string LoadError(const std::string& json, StatusCode code = StatusCode::kFormatError) {
  try {
    LoadJSON(json, "bad-symbol.json");
  } catch (const Error& e) {
    EXPECT_EQ(StatusCodeName(e.code()), std::string(StatusCodeName(code))) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "LoadJSON accepted:\n" << json;
  return "";
}

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

// Node ids and nodes by name, in the order the writer uses.
struct Nodes {
  explicit Nodes(const Symbol& s) : graph(s.outputs) {
    for (uint32_t i = 0; i < graph.num_nodes(); ++i) ids[graph[i].node->name()] = i;
  }
  const Node& operator[](const std::string& name) const {
    auto it = ids.find(name);
    if (it == ids.end()) throw Error(StatusCode::kNotFound, "no node named " + name);
    return *graph[it->second].node;
  }
  std::string Attr(const std::string& node, const std::string& key) const {
    const AttrDict& dict = (*this)[node].attrs.dict;
    auto it = dict.find(key);
    return it == dict.end() ? "<absent>" : it->second;
  }
  IndexedGraph graph;
  std::map<std::string, uint32_t> ids;
};

// Spec 2.5: a 1.9.1 gluon HybridSequential holding Dense(10, activation='relu').
const char kDenseReluJSON[] = R"json({
  "nodes": [
    {
      "op": "null", 
      "name": "data", 
      "inputs": []
    }, 
    {
      "op": "null", 
      "name": "hybridsequential0_dense0_weight", 
      "attrs": {
        "__dtype__": "0", 
        "__lr_mult__": "1.0", 
        "__shape__": "(10, 0)", 
        "__storage_type__": "0", 
        "__wd_mult__": "1.0"
      }, 
      "inputs": []
    }, 
    {
      "op": "null", 
      "name": "hybridsequential0_dense0_bias", 
      "attrs": {
        "__dtype__": "0", 
        "__init__": "zeros", 
        "__lr_mult__": "1.0", 
        "__shape__": "(10,)", 
        "__storage_type__": "0", 
        "__wd_mult__": "1.0"
      }, 
      "inputs": []
    }, 
    {
      "op": "FullyConnected", 
      "name": "hybridsequential0_dense0_fwd", 
      "attrs": {
        "flatten": "True", 
        "no_bias": "False", 
        "num_hidden": "10"
      }, 
      "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]
    }, 
    {
      "op": "Activation", 
      "name": "hybridsequential0_dense0_relu_fwd", 
      "attrs": {"act_type": "relu"}, 
      "inputs": [[3, 0, 0]]
    }
  ], 
  "arg_nodes": [0, 1, 2], 
  "node_row_ptr": [0, 1, 2, 3, 4, 5], 
  "heads": [[4, 0, 0]], 
  "attrs": {"mxnet_version": ["int", 10901]}
})json";

Symbol DenseRelu() {
  AttrDict param = {{"__dtype__", "0"},
                    {"__lr_mult__", "1.0"},
                    {"__storage_type__", "0"},
                    {"__wd_mult__", "1.0"}};
  AttrDict weight = param, bias = param;
  weight["__shape__"] = "(10, 0)";
  bias["__shape__"] = "(10,)";
  bias["__init__"] = "zeros";
  Symbol data = Symbol::Var("data");
  Symbol fc = Symbol::Create("FullyConnected",
                             {data, Symbol::Var("hybridsequential0_dense0_weight", weight),
                              Symbol::Var("hybridsequential0_dense0_bias", bias)},
                             {{"flatten", "True"}, {"no_bias", "False"}, {"num_hidden", "10"}},
                             "hybridsequential0_dense0_fwd");
  return Symbol::Create("Activation", {fc}, {{"act_type", "relu"}},
                        "hybridsequential0_dense0_relu_fwd");
}

// ---------------------------------------------------------------------------------------------
// Writer

TEST(JSONWriterTest, SpecExampleIsByteExact) {
  std::string text = SaveJSON(DenseRelu());
  EXPECT_EQ(text, kDenseReluJSON);
  EXPECT_EQ(DenseRelu().ToJSON(), kDenseReluJSON);
  EXPECT_NE(text.back(), '\n');
}

TEST(JSONWriterTest, SpecExampleRoundTrips) {
  Symbol s = LoadJSON(kDenseReluJSON);
  EXPECT_EQ(SaveJSON(s), kDenseReluJSON);
  EXPECT_EQ(s.ListArguments(), (std::vector<std::string>{"data", "hybridsequential0_dense0_weight",
                                                         "hybridsequential0_dense0_bias"}));
}

TEST(JSONWriterTest, LayoutRules) {
  std::string out;
  internal::JSONLayoutWriter w(&out);
  w.BeginObject(true);
  w.Key("empty_array");
  w.BeginArray(true);
  w.EndArray();
  w.Key("empty_map");
  w.BeginObject(true);
  w.EndObject();
  w.Key("line");
  w.BeginArray(false);
  w.Item();
  w.WriteUInt(1);
  w.Item();
  w.WriteInt(-2);
  w.EndArray();
  w.Key("block");
  w.BeginArray(true);
  w.Item();
  w.WriteString("x");
  w.Item();
  w.BeginObject(false);
  w.Key("k");
  w.WriteString("v");
  w.EndObject();
  w.EndArray();
  w.EndObject();
  EXPECT_EQ(out,
            "{\n"
            "  \"empty_array\": [], \n"
            "  \"empty_map\": {}, \n"
            "  \"line\": [1, -2], \n"
            "  \"block\": [\n"
            "    \"x\", \n"
            "    {\"k\": \"v\"}\n"
            "  ]\n"
            "}");
}

TEST(JSONWriterTest, EscapesOnlyWhatDmlcEscapes) {
  std::string out;
  internal::JSONLayoutWriter::AppendQuoted("a\"b\\c\nd\re\tf/g\x01h\xc3\xa9i\b\f", &out);
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\nd\\re\\tf/g\x01h\xc3\xa9i\b\f\"");

  // Through the symbol writer and back: names and values keep every byte.
  const std::string name = "we\"ird\\name\n\t\r/\x01\xc3\xa9";
  const std::string value = "say \"hi\"\\n";
  Symbol v = Symbol::Var(name, {{"__note__", value}});
  std::string text = SaveJSON(v);
  EXPECT_HAS(text, std::string("\"name\": \"we\\\"ird\\\\name\\n\\t\\r/\x01\xc3\xa9\""));
  EXPECT_HAS(text, "\"attrs\": {\"__note__\": \"say \\\"hi\\\"\\\\n\"}");
  EXPECT_EQ(text.find("\\u"), std::string::npos);
  Symbol back = LoadJSON(text);
  ASSERT_EQ(back.outputs.size(), 1u);
  EXPECT_EQ(back.outputs[0].node->name(), name);
  EXPECT_EQ(back.outputs[0].node->attrs.dict.at("__note__"), value);
  EXPECT_EQ(SaveJSON(back), text);
}

TEST(JSONWriterTest, AttrMapsWithOneEntryStayOnOneLine) {
  std::string one = SaveJSON(Symbol::Var("a", {{"__shape__", "(2,)"}}));
  EXPECT_HAS(one, "      \"attrs\": {\"__shape__\": \"(2,)\"}, \n      \"inputs\": []");
  std::string two = SaveJSON(Symbol::Var("a", {{"b", "1"}, {"__shape__", "(2,)"}}));
  EXPECT_HAS(two,
             "      \"attrs\": {\n"
             "        \"__shape__\": \"(2,)\", \n"
             "        \"b\": \"1\"\n"
             "      }, \n"
             "      \"inputs\": []");
  std::string none = SaveJSON(Symbol::Var("a"));
  EXPECT_EQ(none.find("\"attrs\": {\n"), std::string::npos);
  EXPECT_HAS(none, "\"name\": \"a\", \n      \"inputs\": []\n    }");
  // The graph attribute map has one entry, so it is one line.
  EXPECT_HAS(none, "\n  \"attrs\": {\"mxnet_version\": [\"int\", 10901]}\n}");
}

std::vector<Symbol> Vars(int n) {
  std::vector<Symbol> vars;
  for (int i = 0; i < n; ++i) vars.push_back(Symbol::Var("v" + std::to_string(i)));
  return vars;
}

TEST(JSONWriterTest, ArraysOfMoreThanTenGoMultiLine) {
  std::string ten = SaveJSON(Symbol::Group(Vars(10)));
  EXPECT_HAS(ten, "\"arg_nodes\": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], ");
  EXPECT_HAS(ten,
             "\"heads\": [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0], [4, 0, 0], [5, 0, 0], "
             "[6, 0, 0], [7, 0, 0], [8, 0, 0], [9, 0, 0]], ");
  // node_row_ptr has 11 elements.
  EXPECT_HAS(ten, "\"node_row_ptr\": [\n    0, \n    1, \n");
  EXPECT_HAS(ten, "    9, \n    10\n  ], \n");

  std::string eleven = SaveJSON(Symbol::Group(Vars(11)));
  EXPECT_HAS(eleven, "\"arg_nodes\": [\n    0, \n    1, \n");
  EXPECT_HAS(eleven, "    9, \n    10\n  ], \n  \"node_row_ptr\": [\n");
  EXPECT_HAS(eleven, "\"heads\": [\n    [0, 0, 0], \n    [1, 0, 0], \n");
  EXPECT_HAS(eleven, "\n    [10, 0, 0]\n  ], \n  \"attrs\"");

  // Node inputs follow the same rule (add_n takes any number of inputs).
  std::string ten_in = SaveJSON(Symbol::Create("add_n", Vars(10), {}, "sum"));
  EXPECT_HAS(ten_in,
             "\"inputs\": [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0], [4, 0, 0], "
             "[5, 0, 0], [6, 0, 0], [7, 0, 0], [8, 0, 0], [9, 0, 0]]\n    }");
  std::string eleven_in = SaveJSON(Symbol::Create("add_n", Vars(11), {}, "sum"));
  EXPECT_HAS(eleven_in,
             "      \"attrs\": {\"num_args\": \"11\"}, \n"
             "      \"inputs\": [\n"
             "        [0, 0, 0], \n"
             "        [1, 0, 0], \n");
  EXPECT_HAS(eleven_in, "        [10, 0, 0]\n      ]\n    }\n  ], \n  \"arg_nodes\": [\n");
  EXPECT_EQ(SaveJSON(LoadJSON(eleven_in)), eleven_in);
}

TEST(JSONWriterTest, NodeOrderIsPostOrderDFSAndEntriesKeepVersions) {
  Symbol a = Symbol::Var("a"), b = Symbol::Var("b");
  Symbol sum = Symbol::Create("elemwise_add", {b, a}, {}, "sum");
  Symbol twice = Symbol::Create("elemwise_add", {sum, a}, {}, "twice");
  twice.outputs[0].version = 7;  // written as stored
  std::string text = SaveJSON(twice);
  EXPECT_HAS(text, "\"name\": \"b\"");
  EXPECT_LT(text.find("\"name\": \"b\""), text.find("\"name\": \"a\""));
  EXPECT_HAS(text, "\"inputs\": [[0, 0, 0], [1, 0, 0]]");
  EXPECT_HAS(text, "\"inputs\": [[2, 0, 0], [1, 0, 0]]");
  EXPECT_HAS(text, "\"heads\": [[3, 0, 7]]");
}

TEST(JSONWriterTest, BatchNormAuxInputsAreWrittenWithVersionOne) {
  Symbol bn = Symbol::Create("BatchNorm", {Symbol::Var("data")}, {{"fix_gamma", "False"}}, "bn");
  std::string text = SaveJSON(bn);
  EXPECT_HAS(text, "\"inputs\": [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 1], [4, 0, 1]]");
  EXPECT_HAS(text, "\"node_row_ptr\": [0, 1, 2, 3, 4, 5, 8]");
  Symbol back = LoadJSON(text);
  EXPECT_EQ(back.ListAuxiliaryStates(),
            (std::vector<std::string>{"bn_moving_mean", "bn_moving_var"}));
  EXPECT_EQ(SaveJSON(back), text);
}

TEST(JSONWriterTest, InternalOpsAreNeverWritten) {
  Op fused("_hn_test_fused");
  fused.internal = true;
  auto node = std::make_shared<Node>();
  node->attrs.op = &fused;
  node->attrs.name = "fused0";
  node->inputs.push_back(Symbol::Var("x").outputs[0]);
  Symbol s;
  s.outputs.push_back(NodeEntry{node, 0, 0});
  try {
    SaveJSON(s);
    ADD_FAILURE() << "an internal op was written";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kInternal);
    EXPECT_HAS(std::string(e.what()), "_hn_test_fused");
    EXPECT_HAS(std::string(e.what()), "fused0");
  }
}

// ---------------------------------------------------------------------------------------------
// Reader: accepted forms

TEST(JSONReaderTest, AcceptsLegacyForms) {
  // 2-element entries, no node_row_ptr / attrs (0.8), alias op name, "param" + "attr".
  const char* legacy = R"({"nodes": [
      {"op": "null", "name": "a", "inputs": [], "param": {}, "backward_source_id": -1},
      {"op": "null", "name": "b", "inputs": []},
      {"op": "_Plus", "name": "p", "inputs": [[0, 0], [1, 0]], "param": {},
       "attr": {"__mirror__": "x"}, "backward_source_id": -1}],
    "arg_nodes": [0, 1], "heads": [[2, 0]]})";
  Symbol s = LoadJSON(legacy);
  Nodes n(s);
  EXPECT_EQ(n["p"].attrs.op->name, "elemwise_add");
  EXPECT_EQ(n.Attr("p", "__mirror__"), "x");
  std::string out = SaveJSON(s);
  EXPECT_HAS(out, "\"op\": \"elemwise_add\"");
  EXPECT_HAS(out, "\"inputs\": [[0, 0, 0], [1, 0, 0]]");
  EXPECT_HAS(out, "\"heads\": [[2, 0, 0]]");

  JSONFileInfo info = InspectJSON(legacy);
  EXPECT_EQ(info.mxnet_version, 800);
  EXPECT_TRUE(info.legacy_keys);
  JSONFileInfo modern = InspectJSON(SaveJSON(s));
  EXPECT_EQ(modern.mxnet_version, kMXNetVersion);
  EXPECT_FALSE(modern.legacy_keys);
}

TEST(JSONReaderTest, AttributeMapMergeRules) {
  auto var_dict = [](const std::string& node) {
    Symbol s = LoadJSON(R"({"nodes": [)" + node +
                        R"(], "arg_nodes": [0], "heads": [[0, 0, 0]],
                            "attrs": {"mxnet_version": ["int", 10901]}})");
    return s.outputs[0].node->attrs.dict;
  };
  // The later of "attr" / "attrs" replaces the earlier.
  EXPECT_EQ(var_dict(R"({"op": "null", "name": "v", "attr": {"a": "1", "b": "2"},
                         "attrs": {"c": "3"}, "inputs": []})"),
            (AttrDict{{"c", "3"}}));
  EXPECT_EQ(var_dict(R"({"op": "null", "name": "v", "attrs": {"c": "3"},
                         "attr": {"a": "1"}, "inputs": []})"),
            (AttrDict{{"a", "1"}}));
  // "param" never overwrites what "attr"/"attrs" gave, wherever it appears.
  EXPECT_EQ(var_dict(R"({"op": "null", "name": "v", "param": {"a": "p", "z": "p"},
                         "attr": {"a": "1"}, "inputs": []})"),
            (AttrDict{{"a", "1"}, {"z", "p"}}));
  EXPECT_EQ(var_dict(R"({"op": "null", "name": "v", "attrs": {"a": "1"},
                         "param": {"a": "p"}, "inputs": []})"),
            (AttrDict{{"a", "1"}}));
}

TEST(JSONReaderTest, ForwardReferencesControlDepsAndVersionsAreKept) {
  // Node 0 uses nodes defined after it: still a DAG, so accepted (MXNet does not check order).
  Symbol s = LoadJSON(R"({"nodes": [
      {"op": "elemwise_add", "name": "sum", "inputs": [[1, 0, 2], [2, 0, 0]],
       "control_deps": [3], "subgraphs": []},
      {"op": "null", "name": "a", "inputs": []},
      {"op": "null", "name": "b", "inputs": []},
      {"op": "relu", "name": "side", "inputs": [[2, 0, 0]]}],
    "arg_nodes": [1, 2], "node_row_ptr": [0, 1, 2, 3, 4], "heads": [[0, 0, 5]],
    "attrs": {"mxnet_version": ["int", 10901], "is_np_shape": ["int", 0]}})");
  Nodes n(s);
  ASSERT_EQ(n.graph.num_nodes(), 4u);
  const Node& sum = n["sum"];
  EXPECT_EQ(sum.inputs[0].version, 2u);
  ASSERT_EQ(sum.control_deps.size(), 1u);
  EXPECT_EQ(sum.control_deps[0]->name(), "side");
  EXPECT_EQ(s.outputs[0].version, 5u);
  std::string out = SaveJSON(s);
  // Post-order DFS: a, b, (inputs of sum), then side (control dep), then sum.
  EXPECT_HAS(out, "\"inputs\": [[0, 0, 2], [1, 0, 0]], \n      \"control_deps\": [2]\n    }");
  EXPECT_HAS(out, "\"heads\": [[3, 0, 5]]");
  EXPECT_EQ(SaveJSON(LoadJSON(out)), out);
}

TEST(JSONReaderTest, RawControlCharactersInStrings) {
  // dmlc writes bytes like \x01 raw; strict JSON would reject them.
  std::string text = std::string(R"({"nodes": [{"op": "null", "name": "a)") + '\x01' +
                     R"(b", "inputs": []}], "arg_nodes": [0], "heads": [[0, 0, 0]]})";
  Symbol s = LoadJSON(text);
  EXPECT_EQ(s.outputs[0].node->name(), std::string("a\x01"
                                                   "b"));
}

// ---------------------------------------------------------------------------------------------
// Reader: upgrades

TEST(JSONUpgradeTest, LegacyHiddenKeysMoveToHiddenForm) {
  const char* text = R"({"nodes": [
      {"op": "null", "name": "x", "inputs": [], "attr": {"ctx_group": "g1", "lr_mult": "0.5",
                                                         "lhs_lr_mult": "9"}},
      {"op": "null", "name": "y", "inputs": []},
      {"op": "elemwise_add", "name": "add", "inputs": [[0, 0], [1, 0]],
       "attr": {"wd_mult": "0.3", "lhs_lr_mult": "2", "rhs_wd_mult": "4",
                "force_mirroring": "True", "mirror_stage": "1"}}],
    "arg_nodes": [0, 1], "heads": [[2, 0]]})";
  Nodes n(LoadJSON(text));
  // Bare keys become hidden keys on the same node (variables too).
  EXPECT_EQ(n.Attr("x", "__ctx_group__"), "g1");
  EXPECT_EQ(n.Attr("x", "__lr_mult__"), "2");  // the op's lhs_lr_mult wins: x is visited first
  EXPECT_EQ(n.Attr("x", "ctx_group"), "<absent>");
  EXPECT_EQ(n.Attr("x", "lhs_lr_mult"), "9");  // "<arg>_key" on a variable stays as it is
  EXPECT_EQ(n.Attr("y", "__wd_mult__"), "4");
  EXPECT_EQ(n.Attr("add", "__wd_mult__"), "0.3");
  EXPECT_EQ(n.Attr("add", "__force_mirroring__"), "True");
  EXPECT_EQ(n.Attr("add", "__mirror_stage__"), "1");
  EXPECT_EQ(n.Attr("add", "lhs_lr_mult"), "<absent>");
  EXPECT_EQ(n["add"].attrs.dict.size(), 3u);
}

TEST(JSONUpgradeTest, HiddenKeysAreNotFixedInCurrentFiles) {
  std::string err = LoadError(R"({"nodes": [
      {"op": "null", "name": "x", "inputs": []},
      {"op": "elemwise_add", "name": "add", "inputs": [[0, 0, 0], [0, 0, 0]],
       "attrs": {"ctx_group": "g"}}],
    "arg_nodes": [0], "heads": [[1, 0, 0]], "attrs": {"mxnet_version": ["int", 10901]}})");
  EXPECT_HAS(err, "bad-symbol.json");
  EXPECT_HAS(err, "node 1");
  EXPECT_HAS(err, "add");
  EXPECT_HAS(err, "ctx_group");
}

TEST(JSONUpgradeTest, MissingInputsOfVersion08AreSynthesized) {
  const char* text = R"({"nodes": [
      {"op": "null", "name": "x", "inputs": []},
      {"op": "elemwise_add", "name": "add", "inputs": [[0, 0]],
       "attr": {"ctx_group": "dev1", "__note__": "n"}}],
    "arg_nodes": [0], "heads": [[1, 0]]})";
  Symbol s = LoadJSON(text);
  EXPECT_EQ(s.ListArguments(), (std::vector<std::string>{"x", "add_rhs"}));
  Nodes n(s);
  EXPECT_EQ(n["add_rhs"].attrs.dict, (AttrDict{{"__ctx_group__", "dev1"}, {"__note__", "n"}}));
  // Version 0.9 files are not upgraded: the missing input is an error.
  std::string err = LoadError(R"({"nodes": [
      {"op": "null", "name": "x", "inputs": []},
      {"op": "elemwise_add", "name": "add", "inputs": [[0, 0, 0]]}],
    "arg_nodes": [0], "heads": [[1, 0, 0]], "attrs": {"mxnet_version": ["int", 900]}})");
  EXPECT_HAS(err, "node 1 ('add')");
  EXPECT_HAS(err, "expects 2 inputs (lhs, rhs)");
  EXPECT_HAS(err, "lists 1");
}

TEST(JSONUpgradeTest, BatchNormOfVersion08GetsAuxiliaryStates) {
  const char* text = R"({"nodes": [
      {"op": "null", "name": "data", "inputs": []},
      {"op": "null", "name": "bn_gamma", "inputs": []},
      {"op": "null", "name": "bn_beta", "inputs": []},
      {"op": "BatchNorm", "name": "bn", "inputs": [[0, 0], [1, 0], [2, 0]],
       "param": {"eps": "0.001", "fix_gamma": "True"}}],
    "arg_nodes": [0, 1, 2], "heads": [[3, 0]]})";
  Symbol s = LoadJSON(text);
  EXPECT_EQ(s.ListAuxiliaryStates(), (std::vector<std::string>{"bn_moving_mean", "bn_moving_var"}));
  Nodes n(s);
  EXPECT_EQ(n.Attr("bn_moving_mean", "__init__"), "[\"zero\", {}]");
  EXPECT_EQ(n.Attr("bn_moving_var", "__init__"), "[\"one\", {}]");
  EXPECT_EQ(n.Attr("bn_moving_var", "eps"), "0.001");
  EXPECT_EQ(n.Attr("bn_gamma", "__init__"), "<absent>");
}

std::string BatchNormFile(int version) {
  return R"({"nodes": [
      {"op": "null", "name": "data", "inputs": []},
      {"op": "null", "name": "g", "inputs": []},
      {"op": "null", "name": "b", "inputs": []},
      {"op": "null", "name": "m", "inputs": []},
      {"op": "null", "name": "v", "inputs": [], "attrs": {"__init__": "ones"}},
      {"op": "BatchNorm", "name": "bn",
       "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0], [4, 0, 0]]}],
    "arg_nodes": [0, 1, 2, 3, 4], "heads": [[5, 0, 0]],
    "attrs": {"mxnet_version": ["int", )" +
         std::to_string(version) + "]}}";
}

TEST(JSONUpgradeTest, InitializersAreAddedOnlyBelowVersion094) {
  Nodes old(LoadJSON(BatchNormFile(903)));
  EXPECT_EQ(old.Attr("m", "__init__"), "[\"zero\", {}]");
  EXPECT_EQ(old.Attr("v", "__init__"), "ones");  // an existing initializer is kept
  EXPECT_EQ(old.Attr("g", "__init__"), "<absent>");
  Nodes current(LoadJSON(BatchNormFile(904)));
  EXPECT_EQ(current.Attr("m", "__init__"), "<absent>");
}

TEST(JSONUpgradeTest, PReLUGammaOfVersion08) {
  Symbol s = LoadJSON(R"({"nodes": [
      {"op": "null", "name": "x", "inputs": []},
      {"op": "LeakyReLU", "name": "prelu0", "inputs": [[0, 0]], "param": {"act_type": "prelu"}},
      {"op": "LeakyReLU", "name": "leaky0", "inputs": [[1, 0]], "param": {"slope": "0.1"}}],
    "arg_nodes": [0], "heads": [[2, 0]]})");
  EXPECT_EQ(s.ListArguments(), (std::vector<std::string>{"x", "prelu0_gamma"}));
  Nodes n(s);
  EXPECT_EQ(n.Attr("prelu0_gamma", "__init__"), "[\"Constant\", {\"value\": 0.25}]");
  EXPECT_EQ(n.Attr("prelu0_gamma", "act_type"), "prelu");
  EXPECT_EQ(n.Attr("x", "__init__"), "<absent>");
}

// ---------------------------------------------------------------------------------------------
// Reader: malformed input

TEST(JSONReaderTest, RejectsInternalOps) {
  std::string err = LoadError(R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
      {"op": "_hn_fully_connected_act", "name": "fused", "inputs": [[0, 0, 0]]}],
    "arg_nodes": [0], "heads": [[1, 0, 0]]})");
  EXPECT_HAS(err, "node 1 ('fused')");
  EXPECT_HAS(err, "internal");
}

const char kTail[] = R"(, "arg_nodes": [0], "heads": [[0, 0, 0]]})";

TEST(JSONReaderTest, RejectsNonJSONAndWrongTopLevel) {
  EXPECT_HAS(LoadError(""), "bad-symbol.json: not valid JSON");
  EXPECT_HAS(LoadError("{\"nodes\": ["), "not valid JSON");
  EXPECT_HAS(LoadError("{} trailing"), "not valid JSON");
  EXPECT_HAS(LoadError("[1, 2]"), "expected a symbol JSON object, found array");
  EXPECT_HAS(LoadError(R"({"arg_nodes": [], "heads": []})"), "missing required key \"nodes\"");
  EXPECT_HAS(LoadError(R"({"nodes": [], "heads": []})"), "missing required key \"arg_nodes\"");
  EXPECT_HAS(LoadError(R"({"nodes": [], "arg_nodes": []})"), "missing required key \"heads\"");
  EXPECT_HAS(LoadError(R"({"nodes": [], "arg_nodes": [], "heads": [], "extra": 1})"),
             "unknown key \"extra\"");
  EXPECT_HAS(LoadError(R"({"nodes": {}, "arg_nodes": [], "heads": []})"),
             "\"nodes\": expected an array, found object");
  EXPECT_HAS(LoadError(R"({"nodes": [], "arg_nodes": [], "heads": [], "node_row_ptr": "x"})"),
             "node_row_ptr");
  EXPECT_HAS(LoadError(R"({"nodes": [], "arg_nodes": [], "heads": [],
                           "attrs": {"mxnet_version": ["str", "1.9"]}})"),
             "attrs.mxnet_version");
  EXPECT_HAS(LoadError(R"({"nodes": [], "arg_nodes": [], "heads": [],
                           "attrs": {"mxnet_version": 10901}})"),
             "[type_name, value]");
}

TEST(JSONReaderTest, RejectsMalformedNodes) {
  auto one = [](const std::string& node) {
    return LoadError("{\"nodes\": [" + node + "]" + kTail);
  };
  EXPECT_HAS(one("3"), "node 0: expected a node object, found number");
  EXPECT_HAS(one(R"({"name": "a", "inputs": []})"), "node 0 ('a'): missing required key \"op\"");
  EXPECT_HAS(one(R"({"op": "null", "inputs": []})"), "node 0: missing required key \"name\"");
  EXPECT_HAS(one(R"({"op": "null", "name": "a"})"), "missing required key \"inputs\"");
  EXPECT_HAS(one(R"({"op": "null", "name": "a", "inputs": [], "color": "red"})"),
             "node 0 ('a'): unknown key \"color\"");
  EXPECT_HAS(one(R"({"op": 1, "name": "a", "inputs": []})"), "\"op\" must be a string");
  EXPECT_HAS(one(R"({"op": "null", "name": 7, "inputs": []})"), "\"name\" must be a string");
  EXPECT_HAS(one(R"({"op": "null", "name": "a", "inputs": {}})"), "\"inputs\" must be an array");
  EXPECT_HAS(one(R"({"op": "null", "name": "a", "inputs": [], "attrs": {"k": 1}})"),
             "attribute values must be strings, found 1");
  EXPECT_HAS(one(R"({"op": "null", "name": "a", "inputs": [], "attrs": ["k"]})"),
             "\"attrs\": expected an object, found array");
  EXPECT_HAS(one(R"({"op": "null", "name": "a", "inputs": [], "param": {"k": true}})"),
             "attribute values must be strings");
  EXPECT_HAS(one(R"({"op": "null", "name": "a", "inputs": [], "control_deps": [-1]})"),
             "control_deps[0]: expected a non-negative integer, found -1");
  EXPECT_HAS(one(R"({"op": "null", "name": "a", "inputs": [[0, 0, 0]]})"),
             "a variable (op \"null\") must have no inputs");
}

TEST(JSONReaderTest, RejectsMalformedEntries) {
  auto with_inputs = [](const std::string& inputs) {
    return LoadError(R"({"nodes": [{"op": "null", "name": "a", "inputs": []},
                                   {"op": "_copy", "name": "c", "inputs": )" +
                     inputs + R"(}], "arg_nodes": [0], "heads": [[1, 0, 0]]})");
  };
  EXPECT_HAS(with_inputs("[[0]]"), "node 1 ('c'): inputs[0]: expected an entry");
  EXPECT_HAS(with_inputs("[[0, 0, 0, 0]]"), "an array of 4 elements");
  EXPECT_HAS(with_inputs("[0]"),
             "expected an entry [node, index, version] or [node, index], found number");
  EXPECT_HAS(with_inputs("[[-1, 0, 0]]"),
             "inputs[0][0] (node index): expected a non-negative integer, found -1");
  EXPECT_HAS(with_inputs("[[0, 0.5, 0]]"),
             "inputs[0][1] (output index): expected a non-negative integer, found 0.5");
  EXPECT_HAS(with_inputs("[[0, 0, \"1\"]]"), "inputs[0][2] (version)");
  EXPECT_HAS(with_inputs("[[4294967296, 0, 0]]"), "does not fit in 32 bits");
  EXPECT_HAS(with_inputs("[[9, 0, 0]]"),
             "node 1 ('c'): inputs[0]: node index 9 is out of range (the file has 2 nodes)");
  EXPECT_HAS(LoadError(std::string(R"({"nodes": [{"op": "null", "name": "a", "inputs": []}])") +
                       R"(, "arg_nodes": [0], "heads": [[1, 0, 0]]})"),
             "heads[0]: node index 1 is out of range");
  EXPECT_HAS(LoadError(std::string(R"({"nodes": [{"op": "null", "name": "a", "inputs": []}])") +
                       R"(, "arg_nodes": [0], "heads": [3]})"),
             "heads[0]: expected an entry");
  EXPECT_HAS(LoadError(std::string(R"({"nodes": [{"op": "null", "name": "a", "inputs": []}])") +
                       R"(, "arg_nodes": [2], "heads": [[0, 0, 0]]})"),
             "arg_nodes[0]: node index 2 is out of range");
  EXPECT_HAS(LoadError(std::string(R"({"nodes": [{"op": "null", "name": "a", "inputs": []}])") +
                       R"(, "arg_nodes": [0], "heads": [[0, 1, 0]]})"),
             "heads[0] reads output 1 of node 0 ('a'), which has 1 output");
  EXPECT_HAS(LoadError(R"({"nodes": [{"op": "null", "name": "a", "inputs": []},
                                     {"op": "_copy", "name": "c", "inputs": [[0, 0, 0]]}],
                          "arg_nodes": [1], "heads": [[1, 0, 0]]})"),
             "arg_nodes[0]: lists node 1 ('c'), which is an operator (_copy), not a variable");
  EXPECT_HAS(with_inputs("[[0, 2, 0]]"), "node 1 ('c') input 0 reads output 2 of node 0 ('a')");
}

TEST(JSONReaderTest, RejectsCycles) {
  std::string self = LoadError(R"({"nodes": [
      {"op": "_copy", "name": "loop", "inputs": [[0, 0, 0]]}],
    "arg_nodes": [], "heads": [[0, 0, 0]]})");
  EXPECT_HAS(self, "bad-symbol.json: node 0 ('loop') depends on node 0 ('loop')");
  EXPECT_HAS(self, "cycle");
  std::string pair = LoadError(R"({"nodes": [
      {"op": "_copy", "name": "p", "inputs": [[1, 0, 0]]},
      {"op": "_copy", "name": "q", "inputs": [[0, 0, 0]]}],
    "arg_nodes": [], "heads": [[1, 0, 0]]})");
  EXPECT_HAS(pair, "cycle");
  EXPECT_HAS(pair, "('p')");
  std::string dep = LoadError(R"({"nodes": [
      {"op": "null", "name": "a", "inputs": []},
      {"op": "_copy", "name": "p", "inputs": [[0, 0, 0]], "control_deps": [2]},
      {"op": "_copy", "name": "q", "inputs": [[1, 0, 0]]}],
    "arg_nodes": [0], "heads": [[2, 0, 0]]})");
  EXPECT_HAS(dep, "cycle");
}

TEST(JSONReaderTest, NamesEveryUnsupportedOperatorAtOnceAndBadAttributes) {
  // Three unsupported operators, one of them inside a control-flow subgraph and one a Python
  // custom op: one error lists them all with their nodes.
  const std::string file = R"({"nodes": [{"op": "null", "name": "a", "inputs": []},
      {"op": "_TensorRT", "name": "conv9", "inputs": [[0, 0, 0]]},
      {"op": "_TensorRT", "name": "conv10", "inputs": [[1, 0, 0]]},
      {"op": "Custom", "name": "mine", "attrs": {"op_type": "my_softmax"}, "inputs": [[2, 0, 0]]},
      {"op": "_foreach", "name": "loop", "inputs": [[3, 0, 0]],
       "attrs": {"num_args": "2", "num_outputs": "1", "num_out_data": "1",
                 "in_data_locs": "[0]", "in_state_locs": "[]", "remain_locs": "[]"},
       "subgraphs": [{"nodes": [{"op": "null", "name": "x", "inputs": []},
                                {"op": "NoSuchOp", "name": "inner", "inputs": [[0, 0, 0]]}],
                      "arg_nodes": [0], "heads": [[1, 0, 0]]}]}],
    "arg_nodes": [0], "heads": [[4, 0, 0]]})";
  std::string unknown = LoadError(file, StatusCode::kNotFound);
  EXPECT_HAS(unknown, "bad-symbol.json: 3 operators are not supported by hybridnet");
  EXPECT_HAS(unknown, "'_TensorRT' (nodes 'conv9', 'conv10')");
  EXPECT_HAS(unknown, "'NoSuchOp' (node 'inner')");
  EXPECT_HAS(unknown, "'Custom' (node 'mine (op_type my_softmax)'): a Python custom operator");
  EXPECT_HAS(unknown, "cannot run outside that process");
  const JSONFileInfo info = InspectJSON(file);
  ASSERT_EQ(info.unsupported_ops.size(), 3u);
  EXPECT_EQ(info.unsupported_ops.at("_TensorRT"), (std::vector<std::string>{"conv9", "conv10"}));
  EXPECT_EQ(info.unsupported_ops.at("NoSuchOp"), std::vector<std::string>{"inner"});
  EXPECT_TRUE(InspectJSON(kDenseReluJSON).unsupported_ops.empty());

  auto scalar = [](const std::string& attrs) {
    return LoadError(R"({"nodes": [{"op": "null", "name": "a", "inputs": []},
        {"op": "_plus_scalar", "name": "plus1", "inputs": [[0, 0, 0]], "attrs": )" +
                     attrs + R"(}], "arg_nodes": [0], "heads": [[1, 0, 0]],
        "attrs": {"mxnet_version": ["int", 10901]}})");
  };
  std::string bad_key = scalar(R"({"scalar": "1", "colour": "red"})");
  EXPECT_HAS(bad_key, "bad-symbol.json: node 1");
  EXPECT_HAS(bad_key, "plus1");
  EXPECT_HAS(bad_key, "colour");
  std::string bad_value = scalar(R"({"scalar": "one"})");
  EXPECT_HAS(bad_value, "plus1");
  EXPECT_HAS(bad_value, "'scalar'='one'");
  EXPECT_HAS(LoadError(R"({"nodes": [{"op": "null", "name": "a", "inputs": []},
      {"op": "elemwise_add", "name": "add3", "inputs": [[0, 0, 0], [0, 0, 0], [0, 0, 0]]}],
    "arg_nodes": [0], "heads": [[1, 0, 0]], "attrs": {"mxnet_version": ["int", 10901]}})"),
             "node 1 ('add3'): operator elemwise_add expects 2 inputs (lhs, rhs) but the file "
             "lists 3");
}

// A _foreach node whose body is `body` (a graph object's text).
std::string ForeachFile(const std::string& body) {
  return R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
      {"op": "_foreach", "name": "loop", "inputs": [[0, 0, 0]],
       "attrs": {"num_args": "2", "num_outputs": "1", "num_out_data": "1",
                 "in_data_locs": "[0]", "in_state_locs": "[]", "remain_locs": "[]"},
       "subgraphs": [)" +
         body + R"(]}], "arg_nodes": [0], "heads": [[1, 0, 0]],
    "attrs": {"mxnet_version": ["int", 10901]}})";
}

TEST(JSONReaderTest, SubgraphsRoundTripAndMalformedOnesNameTheirPath) {
  const std::string relu_body = R"({"nodes": [{"op": "null", "name": "x0", "inputs": []},
      {"op": "relu", "name": "r", "inputs": [[0, 0, 0]]}], "arg_nodes": [0],
      "node_row_ptr": [0, 1, 2], "heads": [[1, 0, 0]]})";
  Symbol loop = LoadJSON(ForeachFile(relu_body));
  const Node& node = *loop.outputs[0].node;
  ASSERT_EQ(node.attrs.subgraphs.size(), 1u);
  EXPECT_EQ(node.attrs.subgraphs[0]->ListInputs(), std::vector<std::string>{"x0"});
  EXPECT_EQ(LoadJSON(loop.ToJSON()).ToJSON(), loop.ToJSON());
  EXPECT_EQ(loop.ListInputs(), std::vector<std::string>{"x"});  // the body's variables stay inside

  std::string missing = LoadError(ForeachFile(R"({"nodes": [], "arg_nodes": []})"));
  EXPECT_HAS(missing, "node 1 ('loop'): subgraphs[0]");
  EXPECT_HAS(missing, "missing required key \"heads\"");
  std::string bad_ref = LoadError(ForeachFile(
      R"({"nodes": [{"op": "relu", "name": "r", "inputs": [[5, 0, 0]]}], "arg_nodes": [],
          "heads": [[0, 0, 0]]})"));
  EXPECT_HAS(bad_ref, "subgraphs[0]: node 0 ('r'): inputs[0]");
  EXPECT_HAS(LoadError(ForeachFile("[1, 2]")), "expected a graph object");
  EXPECT_HAS(LoadError(R"({"nodes": [{"op": "null", "name": "x", "inputs": [],
      "subgraphs": [{"nodes": [], "arg_nodes": [], "heads": []}]}],
      "arg_nodes": [0], "heads": [[0, 0, 0]]})"),
             "a variable (op \"null\") must have no subgraphs");
}

TEST(JSONReaderTest, SubgraphNestingAndTheirNodesAreBounded) {
  // Each level nests the previous one inside a _foreach body.
  std::string body = R"({"nodes": [{"op": "null", "name": "x0", "inputs": []}],
      "arg_nodes": [0], "heads": [[0, 0, 0]]})";
  for (int level = 0; level < 20; ++level) {
    body = R"({"nodes": [{"op": "null", "name": "x0", "inputs": []},
        {"op": "_foreach", "name": "loop", "inputs": [[0, 0, 0]],
         "attrs": {"num_args": "2", "num_outputs": "1", "num_out_data": "1",
                   "in_data_locs": "[0]", "in_state_locs": "[]", "remain_locs": "[]"},
         "subgraphs": [)" +
           body + R"(]}], "arg_nodes": [0], "heads": [[1, 0, 0]]})";
  }
  EXPECT_HAS(LoadError(ForeachFile(body)), "subgraphs nest deeper than 16 levels");

  // The node limit counts the nodes of every level.
  const std::string two_node_body = R"({"nodes": [{"op": "null", "name": "x0", "inputs": []},
      {"op": "relu", "name": "r", "inputs": [[0, 0, 0]]}], "arg_nodes": [0],
      "heads": [[1, 0, 0]]})";
  SetLimit(Limit::kMaxNodes, 3);
  std::string too_many = LoadError(ForeachFile(two_node_body));
  SetLimit(Limit::kMaxNodes, DescribeLimit(Limit::kMaxNodes).default_value);
  EXPECT_HAS(too_many, "the graph has 4 nodes counting its subgraphs, above the node limit");
}

TEST(JSONReaderTest, NeverCrashesOnTruncatedOrHostileInput) {
  const std::string full = kDenseReluJSON;
  for (size_t len = 0; len < full.size(); ++len) {
    try {
      LoadJSON(full.substr(0, len));
      ADD_FAILURE() << "accepted a prefix of " << len << " bytes";
    } catch (const Error& e) {
      ASSERT_EQ(e.code(), StatusCode::kFormatError) << e.what();
    }
  }
  // Deep nesting must not overflow the stack.
  std::string deep(200000, '[');
  EXPECT_HAS(LoadError(deep), "not valid JSON");
  std::string deep_closed = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_HAS(LoadError(deep_closed), "expected a symbol JSON object");
}

TEST(JSONReaderTest, LongChainsLoadAndSave) {
  // 5000 nodes in a chain, listed in reverse order (every input is a forward reference).
  const int n = 5000;
  std::string text = "{\"nodes\": [";
  for (int i = 0; i < n; ++i) {
    if (i) text += ", ";
    if (i == n - 1) {
      text += "{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}";
    } else {
      text += "{\"op\": \"_copy\", \"name\": \"c" + std::to_string(i) + "\", \"inputs\": [[" +
              std::to_string(i + 1) + ", 0, 0]]}";
    }
  }
  text += "], \"arg_nodes\": [" + std::to_string(n - 1) + "], \"heads\": [[0, 0, 0]]}";
  Symbol s = LoadJSON(text);
  std::string out = SaveJSON(s);
  EXPECT_HAS(out, "\"arg_nodes\": [0], ");
  EXPECT_HAS(out, "\"heads\": [[" + std::to_string(n - 1) + ", 0, 0]]");
}

}  // namespace
}  // namespace hybridnet
