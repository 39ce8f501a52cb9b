// Optimizers and schedulers (hybridnet/optimizer.h): the registry's errors, MXNet's state layouts,
// update counts and rates, multipliers, multi_precision and the schedulers' values. The numbers
// of every optimizer against MXNet 1.9.1 are checked by golden.optimizers.
#include "hybridnet/optimizer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hybridnet/base.h"

namespace hybridnet {
namespace optimizer {
namespace {

// The StatusCode `fn` throws, and its message in *message.
template <typename Fn>
StatusCode ErrorOf(Fn fn, std::string* message) {
  try {
    fn();
  } catch (const Error& e) {
    *message = e.what();
    return e.code();
  }
  return StatusCode::kOk;
}

TEST(Optimizer, UnknownNamesAndKeywordsListWhatIsAccepted) {
  std::string message;
  EXPECT_EQ(ErrorOf([] { Optimizer::Create("sgdd", {}); }, &message), StatusCode::kNotFound);
  EXPECT_NE(message.find("'sgdd'"), std::string::npos) << message;
  EXPECT_NE(message.find("adam"), std::string::npos) << message;
  EXPECT_EQ(ErrorOf(
                [] {
                  Optimizer::Create("Adam", {{"beta3", "0.9"}});
                },
                &message),
            StatusCode::kInvalidArgument);
  EXPECT_NE(message.find("beta3"), std::string::npos) << message;
  EXPECT_NE(message.find("beta2"), std::string::npos) << message;
  EXPECT_EQ(ErrorOf(
                [] {
                  Optimizer::Create("sgd", {{"momentum", "0.9x"}});
                },
                &message),
            StatusCode::kInvalidArgument);
  EXPECT_NE(message.find("0.9x"), std::string::npos) << message;
  EXPECT_EQ(ErrorOf([] { LRScheduler::Create("poly", {}); }, &message),
            StatusCode::kInvalidArgument);
  EXPECT_NE(message.find("max_update"), std::string::npos) << message;
  EXPECT_EQ(ErrorOf(
                [] {
                  LRScheduler::Create("factor", {{"step", "0"}});
                },
                &message),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ErrorOf(
                [] {
                  LRScheduler::Create("factor", {{"step", "5"}, {"warmup_mode", "'x'"}});
                },
                &message),
            StatusCode::kInvalidArgument);
  EXPECT_NE(message.find("linear"), std::string::npos) << message;
  EXPECT_EQ(Optimizer::Names().size(), 17u);
}

TEST(Optimizer, StatesFollowMXNetsLayout) {
  const NDArray w32 = NDArray::Ones({2, 3});
  const NDArray w16 = w32.AsType(DType::kFloat16);
  struct Expect {
    const char* name;
    KeywordArgs params;
    const NDArray* weight;
    size_t count;
    const char* structure;
  };
  const std::vector<Expect> cases{
      {"sgd", {}, &w32, 0, "None"},
      {"sgd", {{"momentum", "0.9"}}, &w32, 1, "0"},
      {"sgd", {{"multi_precision", "True"}}, &w16, 1, "(None, 0)"},
      {"sgd", {{"momentum", "0.9"}, {"multi_precision", "True"}}, &w16, 2, "(0, 1)"},
      {"adam", {}, &w32, 2, "(0, 1)"},
      {"adam", {{"multi_precision", "True"}}, &w16, 3, "(0, (1, 2))"},
      {"rmsprop", {}, &w32, 1, "(0,)"},
      {"rmsprop", {{"centered", "True"}}, &w32, 3, "(0, 1, 2)"},
      {"adagrad", {}, &w32, 1, "0"},
      {"dcasgd", {}, &w32, 1, "(None, 0)"},
      {"ftml", {}, &w32, 3, "(0, 1, 2)"},
      {"lamb", {{"multi_precision", "True"}}, &w16, 3, "(0, (1, 2))"},
  };
  for (const Expect& c : cases) {
    auto opt = Optimizer::Create(c.name, c.params);
    SCOPED_TRACE(c.name);
    EXPECT_EQ(opt->CreateState(0, *c.weight).size(), c.count);
    EXPECT_EQ(opt->StateStructure(*c.weight), c.structure);
  }
  // The master copy holds the float16 weight's values in float32.
  auto sgd = Optimizer::Create("sgd", {{"momentum", "0.9"}, {"multi_precision", "True"}});
  std::vector<NDArray> state = sgd->CreateState(0, w16);
  EXPECT_EQ(state[1].dtype(), DType::kFloat32);
  EXPECT_EQ(state[1].ToFloatVector(), w32.ToFloatVector());
}

// Adam's first step moves every element by lr (bias-corrected mean / sqrt(var) is sign(g)).
TEST(Optimizer, AdamFirstStepIsTheLearningRate) {
  auto adam = Optimizer::Create("adam", {{"learning_rate", "0.01"}});
  NDArray w = NDArray::FromVector({3}, {1.f, -1.f, 0.5f});
  const NDArray g = NDArray::FromVector({3}, {0.3f, -2.f, 1e-3f});
  std::vector<NDArray> state = adam->CreateState(0, w);
  adam->Update(0, &w, g, &state);
  const std::vector<float> got = w.ToFloatVector();
  EXPECT_NEAR(got[0], 1.f - 0.01f, 1e-6);
  EXPECT_NEAR(got[1], -1.f + 0.01f, 1e-6);
  EXPECT_NEAR(got[2], 0.5f - 0.01f, 1e-4);  // epsilon matters at |g| = 1e-3
  EXPECT_EQ(adam->num_update(), 1);
}

TEST(Optimizer, CountsRatesAndMultipliers) {
  auto sgd = Optimizer::Create("sgd", {{"learning_rate", "0.5"}, {"wd", "0.1"}});
  sgd->set_lr_mult({{1, 0.f}});
  sgd->set_wd_mult({{0, 0.f}});
  NDArray a = NDArray::FromVector({2}, {1.f, 2.f});
  NDArray b = NDArray::FromVector({2}, {1.f, 2.f});
  const NDArray g = NDArray::FromVector({2}, {1.f, 1.f});
  std::vector<NDArray> sa, sb;
  sgd->UpdateMany({0, 1}, {&a, &b}, {g, g}, {&sa, &sb});
  sgd->Update(0, &a, g, &sa);
  EXPECT_EQ(sgd->num_update(), 2);
  EXPECT_EQ(sgd->index_update_count().at(0), 2);
  EXPECT_EQ(sgd->index_update_count().at(1), 1);
  // a: two steps of w - 0.5 g (no weight decay); b: frozen by lr_mult 0.
  EXPECT_EQ(a.ToFloatVector(), (std::vector<float>{0.f, 1.f}));
  EXPECT_EQ(b.ToFloatVector(), (std::vector<float>{1.f, 2.f}));
  // Wrong gradient shape and missing states name the weight.
  std::string message;
  const NDArray wrong = NDArray::Ones({3});
  EXPECT_EQ(ErrorOf([&] { sgd->Update(4, &a, wrong, &sa); }, &message), StatusCode::kShapeError);
  EXPECT_NE(message.find("weight 4"), std::string::npos) << message;
  auto nag = Optimizer::Create("nag", {{"momentum", "0.9"}});
  EXPECT_EQ(ErrorOf([&] { nag->Update(2, &a, g, &sa); }, &message), StatusCode::kInvalidArgument);
  EXPECT_NE(message.find("CreateState"), std::string::npos) << message;
}

TEST(Optimizer, SchedulerOwnsTheRate) {
  auto sgd = Optimizer::Create("sgd", {{"learning_rate", "0.2"}});
  sgd->set_lr_scheduler(LRScheduler::Create("FactorScheduler", {{"step", "2"}, {"factor", "0.5"}}));
  EXPECT_DOUBLE_EQ(sgd->lr_scheduler()->base_lr(), 0.2);  // the optimizer's learning_rate wins
  std::string message;
  EXPECT_EQ(ErrorOf([&] { sgd->set_learning_rate(1.f); }, &message), StatusCode::kInvalidArgument);
  NDArray w = NDArray::FromVector({1}, {0.f});
  const NDArray g = NDArray::FromVector({1}, {1.f});
  std::vector<NDArray> state;
  std::vector<float> rates;
  for (int i = 0; i < 5; ++i) {
    sgd->Update(0, &w, g, &state);
    rates.push_back(sgd->learning_rate());
  }
  // MXNet's FactorScheduler: counts 1-2 at 0.2, 3-4 at 0.1, 5 at 0.05.
  EXPECT_EQ(rates, (std::vector<float>{0.2f, 0.2f, 0.1f, 0.1f, 0.05f}));
  EXPECT_NEAR(w.ToFloatVector()[0], -(0.2 + 0.2 + 0.1 + 0.1 + 0.05), 1e-6);
}

// What a .states loader does: a new optimizer and scheduler from the saved keywords, then the
// changing attributes and counts restored from Params(); the next updates are the original's.
TEST(Optimizer, RestoredFromParamsContinuesTheSameWay) {
  auto make = [] {
    auto nadam = Optimizer::Create("nadam", {{"learning_rate", "0.01"}});
    nadam->set_lr_scheduler(LRScheduler::Create("factor", {{"step", "2"}, {"factor", "0.5"}}));
    return nadam;
  };
  auto original = make();
  NDArray w = NDArray::FromVector({3}, {1.f, -1.f, 0.5f});
  const NDArray g = NDArray::FromVector({3}, {0.3f, -0.2f, 0.1f});
  std::vector<NDArray> state = original->CreateState(0, w);
  for (int i = 0; i < 5; ++i) original->Update(0, &w, g, &state);

  auto restored = make();
  for (const auto& kv : original->Params()) {
    if (kv.first == "m_schedule" || kv.first == "lr") restored->SetAttribute(kv.first, kv.second);
  }
  for (const auto& kv : original->lr_scheduler()->Params()) {
    if (kv.first == "base_lr" || kv.first == "count") {
      restored->lr_scheduler()->SetAttribute(kv.first, kv.second);
    }
  }
  restored->SetUpdateCounts(original->num_update(), original->index_update_count());
  NDArray w2 = w.Copy();
  std::vector<NDArray> state2{state[0].Copy(), state[1].Copy()};
  original->Update(0, &w, g, &state);
  restored->Update(0, &w2, g, &state2);
  EXPECT_EQ(w2.ToFloatVector(), w.ToFloatVector());
  EXPECT_EQ(restored->Params(), original->Params());

  std::string message;
  EXPECT_EQ(ErrorOf([&] { restored->SetAttribute("beta1", "0.5"); }, &message),
            StatusCode::kInvalidArgument);
  EXPECT_NE(message.find("m_schedule"), std::string::npos) << message;
  EXPECT_EQ(ErrorOf([&] { restored->lr_scheduler()->SetAttribute("count", "x"); }, &message),
            StatusCode::kInvalidArgument);
}

TEST(LRScheduler, WarmupPolyAndCosine) {
  auto poly = LRScheduler::Create("poly", {{"max_update", "12"},
                                           {"base_lr", "1"},
                                           {"pwr", "2"},
                                           {"warmup_steps", "2"},
                                           {"warmup_begin_lr", "0.5"}});
  EXPECT_FLOAT_EQ((*poly)(1), 0.75f);  // linear warmup
  EXPECT_FLOAT_EQ((*poly)(7), 0.25f);  // (1 - (t - warmup) / steps)^2 = (1 - 5 / 10)^2
  EXPECT_FLOAT_EQ((*poly)(12), 0.f);   // final_lr at max_update
  EXPECT_FLOAT_EQ((*poly)(20), 0.f);   // and after
  auto cosine = LRScheduler::Create("CosineScheduler", {{"max_update", "10"},
                                                        {"base_lr", "2"},
                                                        {"final_lr", "1"},
                                                        {"warmup_steps", "2"},
                                                        {"warmup_mode", "'constant'"}});
  EXPECT_FLOAT_EQ((*cosine)(1), 0.f);  // constant warmup at warmup_begin_lr
  EXPECT_FLOAT_EQ((*cosine)(6), 1.5f);
  auto multi = LRScheduler::Create("multifactor", {{"step", "[2, 4]"}, {"factor", "0.1"}});
  EXPECT_FLOAT_EQ((*multi)(2), 0.01f);
  EXPECT_FLOAT_EQ((*multi)(3), 0.001f);
  EXPECT_FLOAT_EQ((*multi)(9), 0.0001f);
}

}  // namespace
}  // namespace optimizer
}  // namespace hybridnet
