// ONNX export (hybridnet/onnx.h): the ModelProto's structure, read back with the same
// generated onnx.proto classes, and every refusal. The numbers are checked in ONNX Runtime by
// tests/onnx (ctest -L onnx).
#include <gtest/gtest.h>

#include <cfloat>
#include <cstring>
#include <set>

#include "hybridnet/onnx.h"
#include "hybridnet/op.h"
#include "onnx/onnx.pb.h"

namespace hybridnet {
namespace {

// data (2, 6) -> fc1 (4) -> relu -> fc2 (3) -> softmax
Symbol Mlp() {
  Symbol x = Symbol::Var("data");
  Symbol h = Symbol::Create("FullyConnected", {x}, {{"num_hidden", "4"}}, "fc1");
  h = Symbol::Create("relu", {h}, {}, "relu1");
  h = Symbol::Create("FullyConnected", {h}, {{"num_hidden", "3"}}, "fc2");
  return Symbol::Create("softmax", {h}, {}, "prob");
}

std::map<std::string, NDArray> MlpParams() {
  return {{"fc1_weight", NDArray::RandomUniform({4, 6})},
          {"fc1_bias", NDArray::RandomUniform({4})},
          {"fc2_weight", NDArray::RandomUniform({3, 4})},
          {"fc2_bias", NDArray::RandomUniform({3})}};
}

OnnxExportOptions Shapes(std::map<std::string, Shape> shapes, int opset = kOnnxDefaultOpset) {
  OnnxExportOptions o;
  o.opset = opset;
  o.input_shapes = std::move(shapes);
  return o;
}

onnx::ModelProto Parse(const std::string& bytes) {
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(bytes));
  return m;
}

std::vector<std::string> Dims(const onnx::ValueInfoProto& v) {
  std::vector<std::string> dims;
  for (const auto& d : v.type().tensor_type().shape().dim()) {
    dims.push_back(d.has_dim_param() ? d.dim_param() : std::to_string(d.dim_value()));
  }
  return dims;
}

// The error ExportOnnx throws (fails the test when it does not throw).
Error ExportError(const Symbol& s, const std::map<std::string, NDArray>& params,
                  const OnnxExportOptions& o) {
  try {
    ExportOnnx(s, params, o);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "ExportOnnx did not throw";
  return Error(StatusCode::kOk);
}

TEST(OnnxExport, GraphKeepsNamesWithWeightsAsInitializers) {
  std::map<std::string, NDArray> params = MlpParams();
  onnx::ModelProto m = Parse(ExportOnnx(Mlp(), params, Shapes({{"data", {2, 6}}})));
  EXPECT_EQ(m.ir_version(), 8);
  ASSERT_EQ(m.opset_import_size(), 1);
  EXPECT_EQ(m.opset_import(0).domain(), "");
  EXPECT_EQ(m.opset_import(0).version(), 17);
  EXPECT_EQ(m.producer_name(), "hybridnet");
  const onnx::GraphProto& g = m.graph();
  ASSERT_EQ(g.input_size(), 1);  // weights are initializers, not inputs
  EXPECT_EQ(g.input(0).name(), "data");
  EXPECT_EQ(g.input(0).type().tensor_type().elem_type(), onnx::TensorProto_DataType_FLOAT);
  EXPECT_EQ(Dims(g.input(0)), (std::vector<std::string>{"2", "6"}));
  ASSERT_EQ(g.output_size(), 1);
  EXPECT_EQ(g.output(0).name(), "prob_output");
  EXPECT_EQ(Dims(g.output(0)), (std::vector<std::string>{"2", "3"}));
  ASSERT_EQ(g.initializer_size(), 4);
  for (const auto& t : g.initializer()) {
    ASSERT_TRUE(params.count(t.name())) << t.name();
    const NDArray& value = params.at(t.name());
    EXPECT_EQ(std::vector<int64_t>(t.dims().begin(), t.dims().end()), value.shape().dims());
    ASSERT_EQ(t.raw_data().size(), value.nbytes());
    EXPECT_EQ(std::memcmp(t.raw_data().data(), value.raw_data(), value.nbytes()), 0) << t.name();
  }
  std::set<std::string> names;
  for (const auto& n : g.node()) {
    names.insert(n.name());
    EXPECT_NE(n.doc_string().find(n.name().substr(0, n.name().find('/'))), std::string::npos)
        << n.name() << ": " << n.doc_string();
  }
  EXPECT_EQ(names, (std::set<std::string>{"fc1", "relu1", "fc2", "prob"}));
  EXPECT_EQ(g.node(0).op_type(), "Gemm");
  EXPECT_EQ(g.node(0).doc_string(), "from FullyConnected(fc1)");
}

TEST(OnnxExport, DynamicBatchMakesTheBatchAxisSymbolic) {
  OnnxExportOptions o = Shapes({{"data", {2, 6}}});
  o.dynamic_batch = true;
  onnx::ModelProto m = Parse(ExportOnnx(Mlp(), MlpParams(), o));
  EXPECT_EQ(Dims(m.graph().input(0)), (std::vector<std::string>{"N", "6"}));
  EXPECT_EQ(Dims(m.graph().output(0)), (std::vector<std::string>{"N", "3"}));
}

TEST(OnnxExport, IrVersionFollowsTheOpset) {
  EXPECT_EQ(OnnxIrVersion(13), 7);
  EXPECT_EQ(OnnxIrVersion(17), 8);
  EXPECT_EQ(OnnxIrVersion(18), 8);
  EXPECT_EQ(OnnxIrVersion(19), 9);
  EXPECT_EQ(OnnxIrVersion(21), 10);
  for (int opset : {kOnnxMinOpset, kOnnxMaxOpset}) {
    onnx::ModelProto m = Parse(ExportOnnx(Mlp(), MlpParams(), Shapes({{"data", {1, 6}}}, opset)));
    EXPECT_EQ(m.opset_import(0).version(), opset);
    EXPECT_EQ(m.ir_version(), OnnxIrVersion(opset));
  }
}

TEST(OnnxExport, OpsetOutsideTheRangeIsRefused) {
  for (int opset : {0, 12, 22}) {
    Error e = ExportError(Mlp(), MlpParams(), Shapes({{"data", {1, 6}}}, opset));
    EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("13 to 21"), std::string::npos) << e.what();
  }
}

TEST(OnnxExport, EveryNodeThatDoesNotConvertIsListed) {
  Symbol x = Symbol::Var("data");
  Symbol h = Symbol::Create("Dropout", {x}, {{"mode", "always"}, {"p", "0.5"}}, "drop1");
  h = Symbol::Create("relu", {h}, {}, "relu1");
  h = Symbol::Create("Dropout", {h}, {{"mode", "always"}, {"p", "0.2"}}, "drop2");
  h = Symbol::Create("Dropout", {h}, {{"mode", "always"}, {"p", "0"}}, "drop3");  // identity
  Error e = ExportError(h, {}, Shapes({{"data", {2, 3}}}));
  EXPECT_EQ(e.code(), StatusCode::kUnsupported);
  const std::string what = e.what();
  for (const char* needle :
       {"2 nodes do not convert", "'Dropout' (nodes 'drop1', 'drop2'): ", "mode='always'"}) {
    EXPECT_NE(what.find(needle), std::string::npos) << needle << " in: " << what;
  }
  EXPECT_EQ(what.find("drop3"), std::string::npos) << what;
}

// As main's unsupported-operator error: one line per operator and reason, five nodes named.
TEST(OnnxExport, NodesOfOneOperatorAreListedTogether) {
  Symbol h = Symbol::Var("data");
  for (int i = 0; i < 7; ++i) h = Symbol::Create("gammaln", {h}, {}, "g" + std::to_string(i));
  h = Symbol::Create("erfinv", {h}, {}, "inv");
  Error e = ExportError(h, {}, Shapes({{"data", {2, 3}}}));
  EXPECT_EQ(e.code(), StatusCode::kUnsupported);
  const std::string what = e.what();
  for (const char* needle : {"8 nodes do not convert",
                             "'gammaln' (nodes 'g0', 'g1', 'g2', 'g3', 'g4' and 2 more): no ONNX "
                             "mapping",
                             "'erfinv' (node 'inv'): no ONNX mapping"}) {
    EXPECT_NE(what.find(needle), std::string::npos) << needle << " in: " << what;
  }
}

// Integer math whose MXNet result ONNX does not define (x / 0 = 0) is refused, naming the dtype.
TEST(OnnxExport, IntegerDivisionIsRefused) {
  Symbol a = Symbol::Var("a");
  Symbol b = Symbol::Var("b");
  Symbol q = Symbol::Create("elemwise_div", {a, b}, {}, "q");
  OnnxExportOptions o = Shapes({{"a", {2, 3}}, {"b", {2, 3}}});
  o.input_dtypes = {{"a", DType::kInt32}, {"b", DType::kInt32}};
  Error e = ExportError(q, {}, o);
  EXPECT_EQ(e.code(), StatusCode::kUnsupported);
  EXPECT_NE(std::string(e.what()).find("'elemwise_div' (node 'q'): computes in int32"),
            std::string::npos)
      << e.what();
  // Integer addition is ONNX's Add.
  Symbol sum = Symbol::Create("elemwise_add", {a, b}, {}, "s");
  onnx::ModelProto m = Parse(ExportOnnx(sum, {}, o));
  ASSERT_EQ(m.graph().node_size(), 1);
  EXPECT_EQ(m.graph().node(0).op_type(), "Add");
}

TEST(OnnxExport, UnknownInputShapesNameTheInputs) {
  Error e = ExportError(Mlp(), MlpParams(), OnnxExportOptions());
  EXPECT_EQ(e.code(), StatusCode::kShapeError);
  EXPECT_NE(std::string(e.what()).find("input data"), std::string::npos) << e.what();

  e = ExportError(Mlp(), MlpParams(), Shapes({{"data", {1, 6}}, {"pixels", {1, 6}}}));
  EXPECT_EQ(e.code(), StatusCode::kNotFound);
  EXPECT_NE(std::string(e.what()).find("no input 'pixels' (inputs: data)"), std::string::npos)
      << e.what();

  e = ExportError(Mlp(), MlpParams(), Shapes({{"data", {1, 6}}, {"fc1_weight", {4, 6}}}));
  EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("'fc1_weight' is a parameter"), std::string::npos)
      << e.what();

  e = ExportError(Mlp(), MlpParams(), Shapes({{"data", {0, 6}}}));
  EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
}

TEST(OnnxExport, WithoutParametersTheWeightsAreInputs) {
  onnx::ModelProto m = Parse(ExportOnnx(Mlp(), {}, Shapes({{"data", {2, 6}}})));
  std::set<std::string> inputs;
  for (const auto& v : m.graph().input()) inputs.insert(v.name());
  EXPECT_EQ(inputs,
            (std::set<std::string>{"data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"}));
  EXPECT_EQ(m.graph().initializer_size(), 0);
}

TEST(OnnxExport, DynamicBatchIsRefusedWhenTheGraphFixesTheBatch) {
  Symbol x = Symbol::Var("data");
  Symbol r = Symbol::Create("Reshape", {x}, {{"shape", "(2, 3, 2)"}}, "fixed");
  OnnxExportOptions o = Shapes({{"data", {2, 6}}});
  o.dynamic_batch = true;
  Error e = ExportError(r, {}, o);
  EXPECT_EQ(e.code(), StatusCode::kUnsupported);
  EXPECT_NE(std::string(e.what()).find("does not accept another batch size"), std::string::npos)
      << e.what();
  EXPECT_NE(std::string(e.what()).find("Reshape(fixed)"), std::string::npos) << e.what();
  o.dynamic_batch = false;
  EXPECT_NO_THROW(ExportOnnx(r, {}, o));
}

TEST(OnnxExport, LabelsAndTrainingOutputsAreLeftOut) {
  Symbol x = Symbol::Var("data");
  Symbol bn = Symbol::Create("BatchNorm", {x}, {{"fix_gamma", "False"}}, "bn");
  Symbol out = Symbol::Create("SoftmaxOutput", {bn}, {}, "softmax");
  std::map<std::string, NDArray> params;
  for (const char* name : {"bn_gamma", "bn_beta", "bn_moving_mean", "bn_moving_var"})
    params[name] = NDArray::RandomUniform({3}, 0.5f, 1.5f);
  onnx::ModelProto m = Parse(ExportOnnx(out, params, Shapes({{"data", {2, 3}}})));
  ASSERT_EQ(m.graph().input_size(), 1);
  EXPECT_EQ(m.graph().input(0).name(), "data");  // no softmax_label
  ASSERT_EQ(m.graph().output_size(), 1);
  EXPECT_EQ(m.graph().output(0).name(), "softmax_output");
  for (const auto& n : m.graph().node()) {
    if (n.op_type() == "BatchNormalization") {
      EXPECT_EQ(n.output_size(), 1);
    }
  }
}

TEST(OnnxExport, FixGammaUsesOnesNotTheStoredGamma) {
  Symbol x = Symbol::Var("data");
  Symbol bn = Symbol::Create("BatchNorm", {x}, {}, "bn");  // fix_gamma=True by default
  std::map<std::string, NDArray> params;
  for (const char* name : {"bn_gamma", "bn_beta", "bn_moving_mean", "bn_moving_var"})
    params[name] = NDArray::Full({3}, 2.0);
  onnx::ModelProto m = Parse(ExportOnnx(bn, params, Shapes({{"data", {2, 3, 4}}})));
  bool found = false;
  for (const auto& t : m.graph().initializer()) {
    EXPECT_NE(t.name(), "bn_gamma");  // unused, so not written
    if (t.name().find("bn/") == 0 && t.raw_data().size() == 3 * sizeof(float)) {
      float v[3];
      std::memcpy(v, t.raw_data().data(), sizeof v);
      found = found || (v[0] == 1.f && v[1] == 1.f && v[2] == 1.f);
    }
  }
  EXPECT_TRUE(found) << "no initializer of ones for the fixed gamma";
}

// Padding as large as the window (which ONNX Runtime refuses as MaxPool pads) becomes an
// explicit Pad with the kernel's -FLT_MAX, so windows entirely in the padding agree.
TEST(OnnxExport, MaxPoolingWithPaddingAsLargeAsTheWindowPadsExplicitly) {
  Symbol pool =
      Symbol::Create("Pooling", {Symbol::Var("data")},
                     {{"kernel", "(2, 2)"}, {"pad", "(2, 2)"}, {"pool_type", "max"}}, "pool");
  onnx::ModelProto m = Parse(ExportOnnx(pool, {}, Shapes({{"data", {1, 2, 3, 3}}})));
  std::vector<std::string> ops;
  for (const auto& n : m.graph().node()) ops.push_back(n.op_type());
  EXPECT_EQ(ops, (std::vector<std::string>{"Pad", "MaxPool"}));
  bool lowest = false;
  for (const auto& t : m.graph().initializer()) {
    if (t.data_type() != onnx::TensorProto_DataType_FLOAT || t.raw_data().size() != 4) continue;
    float v = 0;
    std::memcpy(&v, t.raw_data().data(), sizeof v);
    lowest = lowest || v == -FLT_MAX;
  }
  EXPECT_TRUE(lowest);
  for (const auto& a : m.graph().node(1).attribute()) EXPECT_NE(a.name(), "pads");
}

TEST(OnnxExport, AveragePoolingWithPaddingAsLargeAsTheWindowIsRefused) {
  Symbol pool =
      Symbol::Create("Pooling", {Symbol::Var("data")},
                     {{"kernel", "(2, 2)"}, {"pad", "(2, 2)"}, {"pool_type", "avg"}}, "pool");
  Error e = ExportError(pool, {}, Shapes({{"data", {1, 2, 3, 3}}}));
  EXPECT_EQ(e.code(), StatusCode::kUnsupported);
  EXPECT_NE(
      std::string(e.what()).find("'Pooling' (node 'pool'): its padding is as large as the window"),
      std::string::npos)
      << e.what();
}

TEST(OnnxExport, RepeatedOutputsGetDistinctNames) {
  Symbol fc = Symbol::Create("FullyConnected", {Symbol::Var("data")}, {{"num_hidden", "4"}}, "fc1");
  Symbol both = Symbol::Group({fc, fc});
  std::map<std::string, NDArray> params{{"fc1_weight", NDArray::RandomUniform({4, 6})},
                                        {"fc1_bias", NDArray::RandomUniform({4})}};
  onnx::ModelProto m = Parse(ExportOnnx(both, params, Shapes({{"data", {2, 6}}})));
  ASSERT_EQ(m.graph().output_size(), 2);
  EXPECT_EQ(m.graph().output(0).name(), "fc1_output");
  EXPECT_NE(m.graph().output(1).name(), "fc1_output");
}

TEST(OnnxExport, SaveReportsAnUnwritablePath) {
  try {
    SaveOnnx(Mlp(), MlpParams(), Shapes({{"data", {1, 6}}}), "/nonexistent-dir/model.onnx");
    FAIL() << "SaveOnnx did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kIOError);
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/model.onnx"), std::string::npos);
  }
}

TEST(OnnxExport, EveryMappingNamesTheOnnxOpsItEmits) {
  for (const Op* op : OpRegistry::Global().List()) {
    if (!op->onnx.convert) {
      EXPECT_TRUE(op->onnx.onnx_ops.empty() && op->onnx.limits.empty()) << op->name;
      continue;
    }
    EXPECT_FALSE(op->onnx.onnx_ops.empty()) << op->name;
  }
}

}  // namespace
}  // namespace hybridnet
