// gluon::Trainer (hybridnet/gluon/trainer.h) and the parameters' gradients it reads: updates,
// MXNet's stale-gradient rule, grad_req, lr_mult/wd_mult, .states files (round trip and bad
// files, which change nothing), and the pickle reader under hostile bytes.
#include "hybridnet/gluon/trainer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "common/test_util.h"
#include "hybridnet/autograd.h"
#include "hybridnet/gluon/nn.h"
#include "hybridnet/operators.h"
#include "io/pickle.h"

namespace hybridnet {
namespace {

using autograd::GradReq;
using gluon::Dense;
using gluon::HybridSequential;
using gluon::ParameterPtr;
using gluon::Trainer;
using testing_util::BitDifference;
using testing_util::ErrorOf;

std::string TempPath(const std::string& name) { return std::string(HN_TEST_TMPDIR) + "/" + name; }

NDArray Input(float offset = 0.f) {
  std::vector<float> v(2 * 5);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.1f * static_cast<float>(i) - 0.4f + offset;
  return NDArray::FromVector({2, 5}, v);
}

// Initialized, its deferred shapes completed by one forward outside recording.
std::shared_ptr<HybridSequential> Net() {
  auto net = std::make_shared<HybridSequential>("net_");
  net->Add(std::make_shared<Dense>(4, "tanh"), std::make_shared<Dense>(3));
  net->Initialize(gluon::Xavier());
  (*net)(Input());
  return net;
}

// One recorded forward of `net` and a backward of the sum of its output.
void ForwardBackward(HybridSequential* net, const NDArray& x) {
  NDArray y;
  {
    auto recording = autograd::Record();
    y = op::Call("sum", {(*net)(x)});
  }
  autograd::Backward({y});
}

std::vector<NDArray> Values(const gluon::ParameterDict& params) {
  std::vector<NDArray> out;
  for (const auto& p : params.list()) out.push_back(p->data().Copy());
  return out;
}

TEST(Trainer, SgdStepIsLearningRateTimesGradientOverBatch) {
  auto net = Net();
  ForwardBackward(net.get(), Input());
  gluon::ParameterDict params = net->CollectParams();
  std::vector<NDArray> before = Values(params);
  std::vector<NDArray> grads;
  for (const auto& p : params.list()) grads.push_back(p->Grad().Copy());
  Trainer trainer(params, "sgd", {{"learning_rate", "0.5"}});
  trainer.Step(2);
  for (size_t i = 0; i < params.size(); ++i) {
    std::vector<float> w0 = before[i].ToFloatVector(), g = grads[i].ToFloatVector();
    std::vector<float> w1 = params.list()[i]->data().ToFloatVector();
    for (size_t k = 0; k < w0.size(); ++k) {
      EXPECT_FLOAT_EQ(w1[k], w0[k] - 0.5f * g[k] / 2.f) << params.list()[i]->name() << " " << k;
    }
  }
  EXPECT_FLOAT_EQ(trainer.learning_rate(), 0.5f);
  trainer.set_learning_rate(0.25f);
  EXPECT_FLOAT_EQ(trainer.learning_rate(), 0.25f);
}

TEST(Trainer, ParametersAreSortedByNameAsMxnet) {
  auto net = Net();
  Trainer trainer(net->CollectParams(), "sgd");
  std::vector<std::string> names;
  for (const auto& p : trainer.params()) names.push_back(p->name());
  EXPECT_EQ(names, (std::vector<std::string>{"net_dense0_bias", "net_dense0_weight",
                                             "net_dense1_bias", "net_dense1_weight"}));
}

TEST(Trainer, StaleGradientIsAnErrorNamingTheParameterAndChangesNothing) {
  auto net = Net();
  gluon::ParameterDict params = net->CollectParams();
  Trainer trainer(params, "sgd", {{"learning_rate", "0.1"}});
  ForwardBackward(net.get(), Input());
  trainer.Step(2);
  std::vector<NDArray> after_one = Values(params);
  // No backward since: every gradient is stale (MXNet raises its UserWarning).
  Error e = ErrorOf([&] { trainer.Step(2); });
  EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("has not been updated by backward since the last step"),
            std::string::npos)
      << e.what();
  EXPECT_NE(std::string(e.what()).find("net_dense0_bias"), std::string::npos) << e.what();
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_EQ(BitDifference(params.list()[i]->data(), after_one[i]), "");
  }
  // ignore_stale_grad skips them.
  trainer.Step(2, /*ignore_stale_grad=*/true);
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_EQ(BitDifference(params.list()[i]->data(), after_one[i]), "");
  }
}

TEST(Trainer, OnlyTheParametersABackwardReachedAreUpdatedWithIgnoreStaleGrad) {
  auto net = Net();
  gluon::ParameterDict params = net->CollectParams();
  Trainer trainer(params, "sgd", {{"learning_rate", "0.1"}});
  ForwardBackward(net.get(), Input());
  trainer.Step(2);
  // A backward through the second layer alone.
  auto second = std::dynamic_pointer_cast<Dense>(net->children()[1].second);
  ASSERT_NE(second, nullptr);
  NDArray y;
  {
    auto recording = autograd::Record();
    y = op::Call("sum", {(*second)(NDArray::FromVector({1, 4}, {0.1f, 0.2f, 0.3f, 0.4f}))});
  }
  autograd::Backward({y});
  std::vector<NDArray> before = Values(params);
  EXPECT_EQ(ErrorOf([&] { trainer.Step(1); }).code(), StatusCode::kInvalidArgument);
  trainer.Step(1, /*ignore_stale_grad=*/true);
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string& name = params.list()[i]->name();
    bool changed = !BitDifference(params.list()[i]->data(), before[i]).empty();
    EXPECT_EQ(changed, name.rfind("net_dense1_", 0) == 0) << name;
  }
}

TEST(Trainer, GradReqNullAndLrMultZeroLeaveAParameterAlone) {
  auto net = Net();
  gluon::ParameterDict params = net->CollectParams();
  params.Get("net_dense0_weight")->set_grad_req(GradReq::kNull);
  params.Get("net_dense1_bias")->set_lr_mult(0.f);
  EXPECT_EQ(ErrorOf([&] { params.Get("net_dense0_weight")->Grad(); }).code(),
            StatusCode::kInvalidArgument);
  Trainer trainer(params, "sgd", {{"learning_rate", "0.1"}, {"momentum", "0.9"}});
  std::vector<NDArray> before = Values(params);
  ForwardBackward(net.get(), Input());
  trainer.Step(2);
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string& name = params.list()[i]->name();
    bool changed = !BitDifference(params.list()[i]->data(), before[i]).empty();
    EXPECT_EQ(changed, name != "net_dense0_weight" && name != "net_dense1_bias") << name;
  }
}

TEST(Trainer, GradReqAddAccumulatesUntilZeroGrad) {
  auto net = Net();
  gluon::ParameterDict params = net->CollectParams();
  params.SetGradReq(GradReq::kAdd);
  ForwardBackward(net.get(), Input());
  std::vector<float> once = params.list()[0]->Grad().ToFloatVector();
  ForwardBackward(net.get(), Input());
  std::vector<float> twice = params.list()[0]->Grad().ToFloatVector();
  for (size_t k = 0; k < once.size(); ++k) EXPECT_FLOAT_EQ(twice[k], 2 * once[k]);
  params.ZeroGrad();
  for (float v : params.list()[0]->Grad().ToFloatVector()) EXPECT_EQ(v, 0.f);
}

// Two trainers on equal networks: one trains 3 steps and saves; the other loads; a fourth step
// with the same gradients leaves both networks equal bit for bit.
TEST(Trainer, StatesRoundTripResumesExactly) {
  for (const char* opt : {"adam", "sgd", "rmsprop", "nadam", "lars"}) {
    SCOPED_TRACE(opt);
    auto a = Net();
    auto b = Net();
    gluon::ParameterDict pa = a->CollectParams(), pb = b->CollectParams();
    optimizer::KeywordArgs kwargs = {{"learning_rate", "0.01"}};
    if (std::string(opt) == "sgd" || std::string(opt) == "lars")
      kwargs.push_back({"momentum", "0.9"});
    Trainer ta(pa, opt, kwargs), tb(pb, opt, kwargs);
    for (int step = 0; step < 3; ++step) {
      ForwardBackward(a.get(), Input(0.1f * static_cast<float>(step)));
      ta.Step(2);
    }
    const std::string path = TempPath(std::string("trainer_round_trip_") + opt + ".states");
    ta.SaveStates(path);
    for (size_t i = 0; i < pa.size(); ++i) pb.list()[i]->SetData(pa.list()[i]->data());
    tb.LoadStates(path);
    EXPECT_EQ(tb.optimizer()->num_update(), ta.optimizer()->num_update());
    ForwardBackward(a.get(), Input(0.5f));
    ForwardBackward(b.get(), Input(0.5f));
    ta.Step(2);
    tb.Step(2);
    for (size_t i = 0; i < pa.size(); ++i) {
      EXPECT_EQ(BitDifference(pb.list()[i]->data(), pa.list()[i]->data()), "")
          << pa.list()[i]->name();
    }
  }
}

TEST(Trainer, BadStatesFilesAreClearErrorsAndChangeNothing) {
  auto net = Net();
  gluon::ParameterDict params = net->CollectParams();
  Trainer sgd(params, "sgd", {{"learning_rate", "0.1"}, {"momentum", "0.9"}});
  ForwardBackward(net.get(), Input());
  sgd.Step(2);
  const std::string sgd_path = TempPath("trainer_bad_sgd.states");
  sgd.SaveStates(sgd_path);

  Trainer adam(params, "adam");
  ForwardBackward(net.get(), Input());
  adam.Step(2);
  const std::string adam_path = TempPath("trainer_bad_adam.states");
  adam.SaveStates(adam_path);
  // Another optimizer's file.
  Error e = ErrorOf([&] { adam.LoadStates(sgd_path); });
  EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("SGD"), std::string::npos) << e.what();
  EXPECT_EQ(adam.optimizer()->num_update(), 1);
  // A truncated file, bytes that are no pickle, a missing file.
  std::ifstream in(adam_path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string cut = TempPath("trainer_bad_cut.states");
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  EXPECT_EQ(ErrorOf([&] { adam.LoadStates(cut); }).code(), StatusCode::kFormatError);
  const std::string junk = TempPath("trainer_bad_junk.states");
  std::ofstream(junk, std::ios::binary) << "not a pickle at all";
  EXPECT_EQ(ErrorOf([&] { adam.LoadStates(junk); }).code(), StatusCode::kFormatError);
  EXPECT_EQ(ErrorOf([&] { adam.LoadStates(TempPath("no_such.states")); }).code(),
            StatusCode::kIOError);
  // States of other shapes (a trainer over a different network).
  auto other = std::make_shared<HybridSequential>("net_");
  other->Add(std::make_shared<Dense>(7, "tanh"), std::make_shared<Dense>(3));
  other->Initialize();
  (*other)(Input());  // completes the deferred shapes
  Trainer wrong(other->CollectParams(), "adam");
  e = ErrorOf([&] { wrong.LoadStates(adam_path); });
  EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("shape"), std::string::npos) << e.what();
  EXPECT_EQ(wrong.optimizer()->num_update(), 0);
  // The good file still loads after all that.
  adam.LoadStates(adam_path);
  EXPECT_EQ(adam.optimizer()->num_update(), 1);
}

TEST(Trainer, ConstructorRejectsEmptyAndRepeatedParameters) {
  auto net = Net();
  std::shared_ptr<optimizer::Optimizer> sgd = optimizer::Optimizer::Create("sgd", {});
  EXPECT_EQ(ErrorOf([&] { Trainer({}, sgd); }).code(), StatusCode::kInvalidArgument);
  ParameterPtr p = net->CollectParams().list()[0];
  EXPECT_EQ(ErrorOf([&] { Trainer({p, p}, sgd); }).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ErrorOf([&] { Trainer(net->CollectParams(), "no_such_optimizer"); }).code(),
            StatusCode::kNotFound);
  Trainer trainer(net->CollectParams(), "sgd");
  ForwardBackward(net.get(), Input());
  EXPECT_EQ(ErrorOf([&] { trainer.Step(0); }).code(), StatusCode::kInvalidArgument);
}

// Every prefix and many one-byte corruptions of a real .states pickle: an error or a value,
// never a crash (the fuzz-style check of io/pickle).
TEST(Pickle, DamagedStatesNeverCrash) {
  auto net = Net();
  Trainer trainer(net->CollectParams(), "adam");
  ForwardBackward(net.get(), Input());
  trainer.Step(2);
  const std::string path = TempPath("pickle_damaged.states");
  trainer.SaveStates(path);
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  namespace pickle = internal::pickle;
  ASSERT_NE(pickle::Load(bytes, "good"), nullptr);
  int errors = 0;
  for (size_t n = 0; n < bytes.size(); n += 7) {
    errors +=
        ErrorOf([&] { pickle::Load(bytes.substr(0, n), "prefix"); }).code() != StatusCode::kOk;
  }
  EXPECT_GT(errors, 0);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    for (int c : {0x00, 0x7f, 0xff, 0x28, 0x94, 0x68}) {
      std::string damaged = bytes;
      damaged[i] = static_cast<char>(c);
      ErrorOf([&] {
        pickle::ValuePtr v = pickle::Load(damaged, "damaged");
        pickle::Dump(v);
      });
    }
  }
}

TEST(Pickle, ACycleOrDeepNestingIsRefusedAndFreed) {
  namespace pickle = internal::pickle;
  // {0: <itself>}: EMPTY_DICT, MEMOIZE, BININT1 0, BINGET 0, SETITEM, STOP.
  const std::string cycle = std::string("\x80\x04}\x94K\x00h\x00s.", 11);
  Error e = ErrorOf([&] { pickle::Load(cycle, "cycle"); });
  EXPECT_EQ(e.code(), StatusCode::kFormatError);
  EXPECT_NE(std::string(e.what()).find("holds itself"), std::string::npos) << e.what();
  // 100000 nested lists: EMPTY_LIST and (after the first) APPEND into the one below.
  std::string deep = "\x80\x04";
  for (int i = 0; i < 100000; ++i) deep += "]";
  for (int i = 0; i < 99999; ++i) deep += "a";
  deep += ".";
  e = ErrorOf([&] { pickle::Load(deep, "deep"); });
  EXPECT_EQ(e.code(), StatusCode::kFormatError);
  EXPECT_NE(std::string(e.what()).find("deeper than"), std::string::npos) << e.what();
  // Values built in code: Literal and Dump stop at the same depth.
  pickle::ValuePtr v = pickle::Value::List({});
  for (int i = 0; i < pickle::kMaxDepth + 2; ++i) v = pickle::Value::List({v});
  EXPECT_NE(ErrorOf([&] { v->Literal(); }).code(), StatusCode::kOk);
  EXPECT_NE(ErrorOf([&] { pickle::Dump(v); }).code(), StatusCode::kOk);
}

}  // namespace
}  // namespace hybridnet
