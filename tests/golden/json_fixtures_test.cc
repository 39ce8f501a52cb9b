// MXNet-written symbol files (spec mxnet-formats.md section 6): every one loads with the facts
// the spec lists, and re-saving reproduces MXNet's bytes (only mxnet_version differs).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "hybridnet/base.h"
#include "hybridnet/io/json.h"
#include "hybridnet/symbol.h"

namespace hybridnet {
namespace {

namespace fs = std::filesystem;

#define HN_REQUIRE_FIXTURES()                    \
  ASSERT_TRUE(fs::is_directory(HN_FIXTURES_DIR)) \
      << "fixtures folder " << HN_FIXTURES_DIR << " is missing"

std::string Path(const std::string& name) { return std::string(HN_FIXTURES_DIR) + "/" + name; }

std::string ReadFile(const std::string& name) {
  std::ifstream in(Path(name), std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << Path(name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The file's text with its mxnet_version number replaced by ours.
std::string WithOurVersion(std::string text, int version) {
  const std::string from = "[\"int\", " + std::to_string(version) + "]";
  const std::string to = "[\"int\", " + std::to_string(kMXNetVersion) + "]";
  size_t pos = text.rfind(from);
  EXPECT_NE(pos, std::string::npos) << "no " << from << " in the file";
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  return text;
}

struct Facts {
  size_t nodes = 0, variables = 0, arguments = 0, aux = 0;
  std::map<std::string, int> op_counts;
};

Facts Collect(const Symbol& s) {
  Facts f;
  IndexedGraph g(s.outputs);
  f.nodes = g.num_nodes();
  f.variables = g.input_nodes().size();
  f.arguments = s.ListArguments().size();
  f.aux = s.ListAuxiliaryStates().size();
  for (uint32_t i = 0; i < g.num_nodes(); ++i)
    if (!g[i].node->IsVariable()) ++f.op_counts[g[i].node->attrs.op->name];
  return f;
}

const Node* FindNode(const Symbol& s, const std::string& name) {
  IndexedGraph g(s.outputs);
  for (uint32_t i = 0; i < g.num_nodes(); ++i)
    if (g[i].node->name() == name) return g[i].owner.get();
  return nullptr;
}

std::string Attr(const Symbol& s, const std::string& node, const std::string& key) {
  const Node* n = FindNode(s, node);
  if (n == nullptr) return "<no node " + node + ">";
  auto it = n->attrs.dict.find(key);
  return it == n->attrs.dict.end() ? "<absent>" : it->second;
}

TEST(JSONFixturesTest, EveryFixtureLoadsAndItsExportReloads) {
  HN_REQUIRE_FIXTURES();
  int count = 0;
  for (const auto& entry : fs::directory_iterator(HN_FIXTURES_DIR)) {
    std::string name = entry.path().filename().string();
    bool is_json = entry.path().extension() == ".json" ||
                   (name.size() > 9 && name.compare(name.size() - 9, 9, ".json.ref") == 0);
    if (!is_json) continue;
    SCOPED_TRACE(name);
    ++count;
    try {
      Symbol s = Symbol::Load(entry.path().string());
      EXPECT_GT(s.outputs.size(), 0u);
      std::string saved = SaveJSON(s);
      Symbol again = LoadJSON(saved, name + " (re-saved)");
      EXPECT_EQ(SaveJSON(again), saved);
      EXPECT_EQ(s.ListArguments(), again.ListArguments());
      EXPECT_EQ(s.ListAuxiliaryStates(), again.ListAuxiliaryStates());
    } catch (const Error& e) {
      ADD_FAILURE() << StatusCodeName(e.code()) << ": " << e.what();
    }
  }
  EXPECT_GE(count, 7);  // 6 *.json + test-symbol.json.ref
}

TEST(JSONFixturesTest, Save000800UpgradesLikeMXNet) {
  HN_REQUIRE_FIXTURES();
  EXPECT_EQ(InspectJSON(ReadFile("save_000800.json")).mxnet_version, 800);
  EXPECT_TRUE(InspectJSON(ReadFile("save_000800.json")).legacy_keys);
  Symbol s = Symbol::Load(Path("save_000800.json"));
  EXPECT_EQ(s.ListArguments(),
            (std::vector<std::string>{"data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias",
                                      "fc3_weight", "fc3_bias", "batchnorm0_gamma",
                                      "batchnorm0_beta", "softmax_label"}));
  EXPECT_EQ(s.ListAuxiliaryStates(),
            (std::vector<std::string>{"batchnorm0_moving_mean", "batchnorm0_moving_var"}));
  Facts f = Collect(s);
  EXPECT_EQ(f.nodes, 19u);
  EXPECT_EQ(f.op_counts["FullyConnected"], 3);
  EXPECT_EQ(f.op_counts["BatchNorm"], 1);

  // Hidden keys: bare keys become __key__ on the same node ...
  EXPECT_EQ(Attr(s, "data", "__lr_mult__"), "0.2");
  EXPECT_EQ(Attr(s, "data", "__ctx_group__"), "stage1");
  EXPECT_EQ(Attr(s, "data", "lr_mult"), "<absent>");
  EXPECT_EQ(Attr(s, "fc1", "__ctx_group__"), "stage1");
  EXPECT_EQ(Attr(s, "fc1", "__wd_mult__"), "0.3");
  EXPECT_EQ(Attr(s, "fc2", "__lr_mult__"), "0.01");
  EXPECT_EQ(Attr(s, "fc2_weight", "__ctx_group__"), "stage2");
  EXPECT_EQ(Attr(s, "softmax", "__ctx_group__"), "stage2");
  // ... and "<arg>_key" on an op moves to the variable feeding that input.
  EXPECT_EQ(Attr(s, "fc1_weight", "__lr_mult__"), "1.2");
  EXPECT_EQ(Attr(s, "fc1", "weight_lr_mult"), "<absent>");
  EXPECT_EQ(Attr(s, "fc1_bias", "__lr_mult__"), "<absent>");
  // On variables it stays verbatim (MXNet only moves it from op nodes).
  EXPECT_EQ(Attr(s, "fc1_weight", "weight_lr_mult"), "1.2");
  EXPECT_EQ(Attr(s, "fc1_weight", "__wd_mult__"), "0.3");

  // Synthesized auxiliary states: named <node>_<input>, a copy of the node's attributes plus
  // BatchNorm's initializers.
  EXPECT_EQ(Attr(s, "batchnorm0_moving_mean", "__init__"), "[\"zero\", {}]");
  EXPECT_EQ(Attr(s, "batchnorm0_moving_var", "__init__"), "[\"one\", {}]");
  EXPECT_EQ(Attr(s, "batchnorm0_moving_mean", "eps"), "0.001");
  EXPECT_EQ(Attr(s, "batchnorm0_moving_var", "__ctx_group__"), "stage2");
  EXPECT_EQ(Attr(s, "batchnorm0_gamma", "__init__"), "<absent>");

  std::string saved = SaveJSON(s);
  EXPECT_NE(saved.find("\"inputs\": [[11, 0, 0], [12, 0, 0], [13, 0, 0], [14, 0, 0], [15, 0, 0]]"),
            std::string::npos)
      << saved;
  EXPECT_EQ(saved.find("\"param\""), std::string::npos);
}

TEST(JSONFixturesTest, ResNet152) {
  HN_REQUIRE_FIXTURES();
  const std::string text = ReadFile("resnet-152-symbol.json");
  Symbol s = LoadJSON(text, "resnet-152-symbol.json");
  Facts f = Collect(s);
  EXPECT_EQ(f.nodes, 1286u);
  EXPECT_EQ(f.variables, 771u);
  EXPECT_EQ(f.aux, 306u);
  EXPECT_EQ(f.arguments, 771u - 306u);
  EXPECT_EQ(f.op_counts["BatchNorm"], 153);
  EXPECT_EQ(f.op_counts["Convolution"], 155);
  EXPECT_EQ(f.op_counts["elemwise_add"], 50);
  ASSERT_EQ(s.outputs.size(), 1u);
  IndexedGraph g(s.outputs);
  EXPECT_EQ(g.outputs()[0].node_id, 1285u);
  EXPECT_EQ(g.outputs()[0].index, 0u);
  EXPECT_EQ(g.outputs()[0].version, 0u);
  EXPECT_EQ(Attr(s, "bn_data_moving_mean", "__init__"), "[\"zero\", {}]");
  EXPECT_EQ(SaveJSON(s), WithOurVersion(text, 10200));
}

TEST(JSONFixturesTest, MnistLeNetOfVersion08) {
  HN_REQUIRE_FIXTURES();
  JSONFileInfo info = InspectJSON(ReadFile("mnist-lenet-0-symbol.json"));
  EXPECT_EQ(info.mxnet_version, 800);
  EXPECT_TRUE(info.legacy_keys);
  Symbol s = Symbol::Load(Path("mnist-lenet-0-symbol.json"));
  Facts f = Collect(s);
  EXPECT_EQ(f.nodes, 21u);
  EXPECT_EQ(f.variables, 10u);
  EXPECT_EQ(f.aux, 0u);
  EXPECT_EQ(f.op_counts["Convolution"], 2);
  EXPECT_EQ(f.op_counts["Activation"], 3);
  EXPECT_EQ(f.op_counts["Pooling"], 2);
  EXPECT_EQ(f.op_counts["SoftmaxOutput"], 1);
  EXPECT_EQ(Attr(s, "convolution0", "workspace"), "512");
  EXPECT_EQ(s.ListArguments().back(), "softmax_label");
  IndexedGraph g(s.outputs);
  EXPECT_EQ(g.outputs()[0].node_id, 20u);
}

TEST(JSONFixturesTest, MKLDNNModel) {
  HN_REQUIRE_FIXTURES();
  Symbol s = Symbol::Load(Path("test_mkldnn_test_mkldnn_model_model1.json"));
  Facts f = Collect(s);
  EXPECT_EQ(f.nodes, 73u);
  EXPECT_EQ(f.variables, 34u);
  EXPECT_EQ(f.op_counts["Convolution"], 16);
  EXPECT_EQ(f.op_counts["Pooling"], 6);
}

TEST(JSONFixturesTest, CifarResNet20) {
  HN_REQUIRE_FIXTURES();
  struct Case {
    const char* file;
    size_t nodes, variables, arguments, aux;
  };
  for (const Case& c : {Case{"cifar_resnet20_v1-symbol.json", 179, 108, 66, 42},
                        Case{"cifar_resnet20_v2-symbol.json", 176, 104, 64, 40}}) {
    SCOPED_TRACE(c.file);
    const std::string text = ReadFile(c.file);
    EXPECT_EQ(InspectJSON(text).mxnet_version, 20000);
    Symbol s = LoadJSON(text, c.file);
    Facts f = Collect(s);
    EXPECT_EQ(f.nodes, c.nodes);
    EXPECT_EQ(f.variables, c.variables);
    EXPECT_EQ(f.arguments, c.arguments);  // data + the parameters
    EXPECT_EQ(f.aux, c.aux);
    EXPECT_EQ(s.ListArguments().front(), "data");
    // Attributes (including 2.0's __profiler_scope__) and entry versions are kept verbatim.
    EXPECT_EQ(SaveJSON(s), WithOurVersion(text, 20000));
  }
}

TEST(JSONFixturesTest, ClojureReferenceIsReproduced) {
  HN_REQUIRE_FIXTURES();
  const std::string text = ReadFile("test-symbol.json.ref");
  EXPECT_EQ(text.size(), 2009u);
  Symbol s = LoadJSON(text, "test-symbol.json.ref");
  Facts f = Collect(s);
  EXPECT_EQ(f.nodes, 14u);
  EXPECT_EQ(SaveJSON(s), WithOurVersion(text, 10400));
}

}  // namespace
}  // namespace hybridnet
