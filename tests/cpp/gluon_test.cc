#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

#include "common/test_util.h"
#include "hybridnet/gluon/block.h"
#include "hybridnet/gluon/nn.h"
#include "hybridnet/gluon/symbol_block.h"
#include "hybridnet/io/params.h"
#include "hybridnet/operators.h"

namespace hybridnet {
namespace gluon {
namespace {

using namespace ::hybridnet::testing_util;  // NOLINT: the shared test helpers

std::shared_ptr<HybridSequential> SeedMlp() {
  auto net = std::make_shared<HybridSequential>();
  net->Add(std::make_shared<Dense>(256, "relu"), std::make_shared<Dense>(128, "relu"),
           std::make_shared<Dense>(2));
  net->Initialize();
  return net;
}

// Counts how often its user code runs (the tutorial's print, made checkable).
class CountingNet : public HybridBlock {
 public:
  CountingNet() : HybridBlock("countingnet") {
    fc1_ = RegisterChild(std::make_shared<Dense>(10), "fc1");
    fc2_ = RegisterChild(std::make_shared<Dense>(2), "fc2");
  }
  NDArray HybridForward(const F& f, const NDArray& x) override {
    ++calls;
    seen_symbolic = f.symbolic;
    printed << x << "|";
    NDArray h = op::relu((*fc1_)(x));
    printed << h << "|";
    return (*fc2_)(h);
  }
  int calls = 0;
  bool seen_symbolic = false;
  std::ostringstream printed;

 private:
  std::shared_ptr<Dense> fc1_, fc2_;
};

TEST(GluonTest, HybridizedOutputIsBitIdenticalToEager) {
  Seed(3);
  auto net = SeedMlp();
  for (int64_t batch : {1, 7}) {
    NDArray x = NDArray::RandomNormal({batch, 512});
    net->Hybridize(false);
    NDArray eager = (*net)(x);
    net->Hybridize();
    NDArray hybrid = (*net)(x);
    EXPECT_TRUE(BitEqual(eager, hybrid)) << "batch " << batch;
    EXPECT_EQ(hybrid.shape(), Shape({batch, 2}));
  }
}

TEST(GluonTest, UserCodeRunsOnceWhenHybridizedAndPrintsSymbols) {
  auto net = std::make_shared<CountingNet>();
  net->Initialize();
  NDArray x = NDArray::RandomNormal({1, 4});
  NDArray eager = (*net)(x);
  (*net)(x);
  EXPECT_EQ(net->calls, 2);
  EXPECT_FALSE(net->seen_symbolic);
  net->Hybridize();
  net->printed.str("");
  NDArray y1 = (*net)(x);
  NDArray y2 = (*net)(x);
  NDArray y3 = (*net)(NDArray::RandomNormal({5, 4}));  // a new shape re-plans without re-tracing
  EXPECT_EQ(net->calls, 3);
  EXPECT_TRUE(net->seen_symbolic);
  std::regex expected("<Symbol data>\\|<Symbol countingnet[0-9]+_relu0>\\|");
  EXPECT_TRUE(std::regex_match(net->printed.str(), expected)) << net->printed.str();
  EXPECT_TRUE(BitEqual(eager, y1));
  EXPECT_TRUE(BitEqual(y1, y2));
  EXPECT_EQ(y3.shape(), Shape({5, 2}));
  EXPECT_EQ(net->CachedStats().num_plans, 2u);

  net->Hybridize(false);  // back to eager: user code runs on every call again
  (*net)(x);
  EXPECT_EQ(net->calls, 4);
  EXPECT_FALSE(net->seen_symbolic);
}

TEST(GluonTest, DeferredInitCompletesShapesAtFirstForward) {
  auto dense = std::make_shared<Dense>(3, "tanh");
  dense->Initialize();
  EXPECT_EQ(dense->weight()->shape(), Shape({3, 0}));
  EXPECT_TRUE(dense->weight()->is_deferred());
  try {
    dense->weight()->data();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("first forward"), std::string::npos) << e.what();
  }
  (*dense)(NDArray::Ones({2, 5}));
  EXPECT_EQ(dense->weight()->shape(), Shape({3, 5}));
  EXPECT_TRUE(dense->weight()->is_initialized());
  EXPECT_EQ(dense->bias()->data().ToFloatVector(), std::vector<float>(3, 0.f));

  auto known = std::make_shared<Dense>(DenseOptions().set_units(4).set_in_units(6));
  known->Initialize();
  EXPECT_TRUE(known->weight()->is_initialized());
  EXPECT_THROW((*known)(NDArray::Ones({1, 5})), Error);

  auto uninitialized = std::make_shared<Dense>(2);
  try {
    (*uninitialized)(NDArray::Ones({1, 3}));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("initialize()"), std::string::npos) << e.what();
  }
}

TEST(GluonTest, NamesFollowMXNet) {
  auto net = SeedMlp();
  std::string prefix = net->prefix();
  EXPECT_TRUE(std::regex_match(prefix, std::regex("hybridsequential[0-9]+_"))) << prefix;
  EXPECT_EQ(net->CollectParams().Keys(),
            (std::vector<std::string>{prefix + "dense0_weight", prefix + "dense0_bias",
                                      prefix + "dense1_weight", prefix + "dense1_bias",
                                      prefix + "dense2_weight", prefix + "dense2_bias"}));
  EXPECT_EQ(net->CollectParams(".*_bias").size(), 3u);
  EXPECT_THROW(net->CollectParams("(["), Error);
  auto explicit_prefix = std::make_shared<HybridSequential>(std::string("model_"));
  explicit_prefix->Add(std::make_shared<Dense>(2));
  EXPECT_EQ(explicit_prefix->CollectParams().Keys()[0], "model_dense0_weight");
  EXPECT_EQ(net->ToString(),
            "HybridSequential(\n  (0): Dense(None -> 256, Activation(relu))\n"
            "  (1): Dense(None -> 128, Activation(relu))\n  (2): Dense(None -> 2, linear)\n)");
}

TEST(GluonTest, SymbolInSymbolOut) {
  auto net = SeedMlp();
  net->Hybridize();
  (*net)(NDArray::RandomNormal({1, 512}));
  Symbol program = (*net)(Symbol::Var("data"));
  std::string p = net->prefix();
  EXPECT_EQ(
      program.ListArguments(),
      (std::vector<std::string>{"data", p + "dense0_weight", p + "dense0_bias", p + "dense1_weight",
                                p + "dense1_bias", p + "dense2_weight", p + "dense2_bias"}));
  std::string json = program.ToJSON();
  EXPECT_NE(json.find("\"name\": \"" + p + "dense0_relu_fwd\""), std::string::npos);
  EXPECT_NE(json.find("\"__shape__\": \"(256, 0)\""), std::string::npos);  // frozen at first trace
  EXPECT_EQ(json, net->CachedGraph().ToJSON());
  auto plain = std::make_shared<Sequential>();
  EXPECT_THROW((*plain)(Symbol::Var("data")), Error);
}

TEST(GluonTest, HybridizeOnPlainBlockHybridizesHybridChildren) {
  auto seq = std::make_shared<Sequential>();
  auto inner = std::make_shared<HybridSequential>();
  inner->Add(std::make_shared<Dense>(4, "relu"));
  seq->Add(inner, std::make_shared<Lambda>([](const NDArray& x) { return x * 2.f; }));
  seq->Initialize();
  NDArray x = NDArray::RandomNormal({2, 3});
  NDArray eager = (*seq)(x);
  seq->Hybridize();
  EXPECT_TRUE(inner->is_hybridized());
  NDArray hybrid = (*seq)(x);
  EXPECT_TRUE(BitEqual(eager, hybrid));
  EXPECT_EQ(inner->CachedStats().num_plans, 1u);
}

// A float64 model: MXNet exports a block cast to float64 after its graph was traced with its
// variables still declaring float32; its imports take the saved dtypes, and so does ours. A
// variable declaring float64 gets a float64 parameter without a file.
TEST(GluonTest, ImportsTakeTheSavedDTypes) {
  Symbol fc = Symbol::Create("FullyConnected",
                             {Symbol::Var("data"), Symbol::Var("fc_weight", {{"__dtype__", "0"}}),
                              Symbol::Var("fc_bias", {{"__dtype__", "1"}})},
                             {{"num_hidden", "2"}}, "fc");
  fc.Save(TmpPath("float64_fc-symbol.json"));
  const std::vector<double> w = {1.5, -2.0, 0.25, 3.0, 1.0, -1.0}, b = {0.125, -4.0};
  NDArrayList list;
  list.names = {"arg:fc_weight", "arg:fc_bias"};
  list.arrays = {NDArray::FromBuffer({2, 3}, DType::kFloat64, w.data()),
                 NDArray::FromBuffer({2}, DType::kFloat64, b.data())};
  SaveNDArrayList(TmpPath("float64_fc-0000.params"), list);

  SymbolBlock declared(fc, {"data"});
  ParameterDict declared_params = declared.CollectParams();
  for (const auto& p : declared_params.list()) {
    EXPECT_EQ(p->dtype(), p->name() == "fc_bias" ? DType::kFloat64 : DType::kFloat32) << p->name();
  }
  auto block = SymbolBlock::Imports(TmpPath("float64_fc-symbol.json"), {"data"},
                                    TmpPath("float64_fc-0000.params"));
  ParameterDict imported_params = block->CollectParams();
  for (const auto& p : imported_params.list()) EXPECT_EQ(p->dtype(), DType::kFloat64);
  const std::vector<double> x = {1.0, 2.0, 4.0};
  NDArray y = (*block)(NDArray::FromBuffer({1, 3}, DType::kFloat64, x.data()));
  ASSERT_EQ(y.dtype(), DType::kFloat64);
  const double* out = y.data<double>();
  EXPECT_EQ(out[0], 1.5 - 4.0 + 1.0 + 0.125);
  EXPECT_EQ(out[1], 3.0 + 2.0 - 4.0 - 4.0);
}

TEST(GluonTest, ExportImportRoundTripIsBitIdentical) {
  Seed(11);
  auto net = SeedMlp();
  NDArray x = NDArray::RandomNormal({3, 512});
  EXPECT_THROW(net->Export(TmpPath("never")), Error);  // no traced graph yet
  net->Hybridize();
  NDArray y = (*net)(x);
  net->Export(TmpPath("gluon_mlp"));
  auto imported = SymbolBlock::Imports(TmpPath("gluon_mlp-symbol.json"), {"data"},
                                       TmpPath("gluon_mlp-0000.params"));
  EXPECT_TRUE(BitEqual(y, (*imported)(x)));
  imported->Hybridize();
  EXPECT_TRUE(BitEqual(y, (*imported)(x)));
  imported->Export(TmpPath("gluon_mlp_again"), 12);
  auto read = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  };
  EXPECT_EQ(read(TmpPath("gluon_mlp-symbol.json")), read(TmpPath("gluon_mlp_again-symbol.json")));
  EXPECT_EQ(read(TmpPath("gluon_mlp-0000.params")), read(TmpPath("gluon_mlp_again-0012.params")));
  NDArrayList params = LoadNDArrayList(TmpPath("gluon_mlp-0000.params"));
  ASSERT_EQ(params.names.size(), 6u);
  EXPECT_EQ(params.names[0], "arg:" + net->prefix() + "dense0_weight");
}

TEST(GluonTest, SaveAndLoadParametersWithStructuralNames) {
  auto net = SeedMlp();
  NDArray x = NDArray::RandomNormal({1, 512});
  NDArray y = (*net)(x);
  net->SaveParameters(TmpPath("structural.params"));
  NDArrayList saved = LoadNDArrayList(TmpPath("structural.params"));
  EXPECT_EQ(saved.names, (std::vector<std::string>{"0.bias", "0.weight", "1.bias", "1.weight",
                                                   "2.bias", "2.weight"}));
  auto other = SeedMlp();
  other->LoadParameters(TmpPath("structural.params"));
  EXPECT_TRUE(BitEqual(y, (*other)(x)));
}

TEST(GluonTest, BadParameterFilesNameTheProblem) {
  auto write = [](const std::string& name, std::vector<std::string> keys,
                  std::vector<NDArray> arrays) {
    NDArrayList list;
    list.names = std::move(keys);
    list.arrays = std::move(arrays);
    SaveNDArrayList(TmpPath(name), list);
  };
  auto net = std::make_shared<HybridSequential>();
  net->Add(std::make_shared<Dense>(DenseOptions().set_units(2).set_in_units(3)));
  net->Initialize();
  auto expect_error = [&](const std::string& file, StatusCode code, const std::string& needle) {
    try {
      net->LoadParameters(TmpPath(file));
      ADD_FAILURE() << file << " loaded";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  write("missing.params", {"0.weight"}, {NDArray::Zeros({2, 3})});
  expect_error("missing.params", StatusCode::kNotFound, "0.bias");
  net->LoadParameters(TmpPath("missing.params"), /*allow_missing=*/true);
  write("extra.params", {"0.weight", "0.bias", "0.gamma"},
        {NDArray::Zeros({2, 3}), NDArray::Zeros({2}), NDArray::Zeros({2})});
  expect_error("extra.params", StatusCode::kNotFound, "0.gamma");
  net->LoadParameters(TmpPath("extra.params"), false, /*ignore_extra=*/true);
  write("misshaped.params", {"0.weight", "0.bias"}, {NDArray::Zeros({2, 4}), NDArray::Zeros({2})});
  expect_error("misshaped.params", StatusCode::kShapeError, "dense0_weight");
  expect_error("does_not_exist.params", StatusCode::kIOError, "does_not_exist.params");
  std::ofstream(TmpPath("garbage.params")) << "not a params file";
  expect_error("garbage.params", StatusCode::kFormatError, "garbage.params");
}

class ReadsValues : public HybridBlock {
 public:
  ReadsValues() : HybridBlock("readsvalues") {}
  NDArray Forward(const NDArray& x) override {
    if (x.ToFloatVector()[0] > 0) return op::relu(x);  // data-dependent control flow
    return x;
  }
};

class UpdatesInPlace : public HybridBlock {
 public:
  UpdatesInPlace() : HybridBlock("updatesinplace") {}
  NDArray Forward(const NDArray& x) override {
    NDArray y = op::relu(x);
    y += x;
    return y;
  }
};

class UsesConstant : public HybridBlock {
 public:
  UsesConstant() : HybridBlock("usesconstant") {}
  NDArray Forward(const NDArray& x) override { return x + NDArray::Ones({1, 2}); }
};

TEST(GluonTest, UntraceableCodeFailsLoudlyAtTraceTime) {
  NDArray x = NDArray::Ones({1, 2});
  auto expect_untraceable = [&](HybridBlock& block, const std::string& needle) {
    EXPECT_NO_THROW(block(x));  // fine eagerly
    block.Hybridize();
    try {
      block(x);
      ADD_FAILURE() << "traced without error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), StatusCode::kUntraceable) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  ReadsValues reads;
  expect_untraceable(reads, "cannot read the values");
  UpdatesInPlace updates;
  expect_untraceable(updates, "a = a + b");
  UsesConstant constant;
  expect_untraceable(constant, "concrete array");
}

TEST(GluonTest, HybridizeFlagsAreCheckedAndReTraceOnRebuild) {
  auto net = SeedMlp();
  EXPECT_THROW(net->Hybridize(true, HybridizeOptions{false, true}), Error);
  net->Hybridize(true, HybridizeOptions{true, true});
  NDArray x = NDArray::RandomNormal({1, 512});
  NDArray y = (*net)(x);
  net->Add(std::make_shared<Dense>(3));  // a new child clears the cache: the next call re-traces
  net->Initialize();
  EXPECT_EQ((*net)(x).shape(), Shape({1, 3}));
  EXPECT_FALSE(BitEqual(y, (*net)(x)));
}

TEST(GluonTest, EveryLayerHybridizesToTheSameNumbers) {
  auto net = std::make_shared<HybridSequential>();
  net->Add(
      std::make_shared<Dense>(DenseOptions().set_units(8).set_activation("tanh").set_flatten(true)),
      std::make_shared<Dropout>(0.5f), std::make_shared<Activation>("softrelu"),
      std::make_shared<HybridLambda>([](const NDArray& x) { return op::sigmoid(x) * 3.f - 1.f; }),
      std::make_shared<Dropout>(0.f), std::make_shared<Flatten>(),
      std::make_shared<Dense>(DenseOptions().set_units(3).set_use_bias(false)));
  net->Initialize();
  NDArray x = NDArray::RandomNormal({2, 3, 4});
  NDArray eager = (*net)(x);
  net->Hybridize();
  EXPECT_TRUE(BitEqual(eager, (*net)(x)));
  std::string json = net->CachedGraph().ToJSON();
  for (const char* op :
       {"Dropout", "_copy", "Flatten", "sigmoid", "_mul_scalar", "_minus_scalar"}) {
    EXPECT_NE(json.find("\"op\": \"" + std::string(op) + "\""), std::string::npos) << op;
  }
  EXPECT_NE(json.find("\"p\": \"0.5\""), std::string::npos);
  EXPECT_EQ(net->CollectParams().size(), 3u);  // dense0 weight + bias, dense1 weight
}

TEST(GluonTest, TreeAndTraceMisuseIsRejected) {
  auto a = std::make_shared<HybridSequential>();
  auto b = std::make_shared<HybridSequential>();
  a->Add(b);
  try {
    b->Add(a);
    FAIL() << "a cycle was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cycle"), std::string::npos) << e.what();
  }
  EXPECT_THROW(a->Add(b), Error);  // already has a parent
  EXPECT_THROW(a->Trace(0), Error);
  EXPECT_THROW(a->Trace(size_t{1} << 31), Error);
}

TEST(GluonTest, InitializersAreReproducibleFromASeed) {
  auto make = []() {
    Seed(5);
    auto d = std::make_shared<Dense>(
        DenseOptions().set_units(4).set_in_units(3).set_weight_initializer(Xavier()));
    d->Initialize(Normal(0.5f));
    return d->weight()->data().ToFloatVector();
  };
  EXPECT_EQ(make(), make());
  auto constant = std::make_shared<Dense>(
      DenseOptions().set_units(2).set_in_units(2).set_weight_initializer(Constant(0.5f)));
  constant->Initialize();
  EXPECT_EQ(constant->weight()->data().ToFloatVector(), std::vector<float>(4, 0.5f));
  EXPECT_EQ(InitializerByName("ones")->Dumps(), "ones");
  EXPECT_THROW(InitializerByName("nosuch"), Error);
  EXPECT_THROW(Xavier("bad"), Error);
}

}  // namespace
}  // namespace gluon
}  // namespace hybridnet
