// MXNet 1.9.1's learning-rate schedulers (python/mxnet/lr_scheduler.py), in double as Python
// computes them.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "hybridnet/optimizer.h"
#include "optimizer/keywords.h"

namespace hybridnet {
namespace optimizer {

LRScheduler::LRScheduler(double base_lr, int warmup_steps, double warmup_begin_lr,
                         std::string warmup_mode)
    : base_lr_(base_lr),
      warmup_steps_(warmup_steps),
      warmup_begin_lr_(warmup_begin_lr),
      warmup_final_lr_(base_lr),
      warmup_mode_(std::move(warmup_mode)) {
  HN_CHECK(warmup_begin_lr_ <= warmup_final_lr_, kInvalidArgument)
      << "lr_scheduler: warmup_begin_lr (" << warmup_begin_lr_ << ") must not exceed base_lr ("
      << base_lr_ << ")";
  HN_CHECK(warmup_steps_ >= 0, kInvalidArgument)
      << "lr_scheduler: warmup_steps must be >= 0, got " << warmup_steps_;
  HN_CHECK(warmup_mode_ == "linear" || warmup_mode_ == "constant", kInvalidArgument)
      << "lr_scheduler: warmup_mode '" << warmup_mode_ << "' is not one of 'linear', 'constant'";
}

LRScheduler::~LRScheduler() = default;

double LRScheduler::WarmupLr(int num_update) const {
  if (warmup_mode_ == "constant") return warmup_begin_lr_;
  const double increase = (warmup_final_lr_ - warmup_begin_lr_) * static_cast<double>(num_update) /
                          static_cast<double>(warmup_steps_);
  return warmup_begin_lr_ + increase;
}

KeywordArgs LRScheduler::BaseParams() const {
  return {{"base_lr", PyFloat(base_lr_)},
          {"warmup_steps", std::to_string(warmup_steps_)},
          {"warmup_final_lr", PyFloat(warmup_final_lr_)},
          {"warmup_begin_lr", PyFloat(warmup_begin_lr_)},
          {"warmup_mode", "'" + warmup_mode_ + "'"}};
}

bool LRScheduler::SetOwnAttribute(const std::string&, const std::string&) { return false; }

void LRScheduler::SetAttribute(const std::string& name, const std::string& value) {
  if (name == "base_lr") {
    base_lr_ = ParsePyNumber(value, name);
  } else if (!SetOwnAttribute(name, value)) {
    std::string accepted = "base_lr";
    for (const std::string& own : OwnAttributes()) accepted += ", " + own;
    HN_THROW(kInvalidArgument) << class_name() << ": attribute '" << name
                               << "' cannot be set; settable: " << accepted;
  }
}

namespace {

// Lowers base_lr by `factor` every `step` updates, down to stop_factor_lr.
class FactorScheduler : public LRScheduler {
 public:
  explicit FactorScheduler(Keywords* k)
      : LRScheduler(k->Number("base_lr"), k->Int("warmup_steps"), k->Number("warmup_begin_lr"),
                    k->String("warmup_mode")),
        step_(k->Int("step")),
        factor_(k->Number("factor")),
        stop_factor_lr_(k->Number("stop_factor_lr")) {
    HN_CHECK(step_ >= 1, kInvalidArgument) << "FactorScheduler: step must be >= 1, got " << step_;
    HN_CHECK(factor_ <= 1.0, kInvalidArgument)
        << "FactorScheduler: factor must be <= 1 (the rate only decreases), got " << factor_;
  }
  float operator()(int num_update) override {
    if (num_update < warmup_steps_) return static_cast<float>(WarmupLr(num_update));
    while (num_update > count_ + step_) {
      count_ += step_;
      base_lr_ *= factor_;
      if (base_lr_ < stop_factor_lr_) base_lr_ = stop_factor_lr_;
    }
    return static_cast<float>(base_lr_);
  }
  const char* class_name() const override { return "FactorScheduler"; }
  bool SetOwnAttribute(const std::string& name, const std::string& value) override {
    if (name != "count") return false;
    count_ = static_cast<int>(ParsePyNumber(value, name));
    return true;
  }
  std::vector<std::string> OwnAttributes() const override { return {"count"}; }
  KeywordArgs Params() const override {
    KeywordArgs p = BaseParams();
    p.insert(p.end(), {{"step", std::to_string(step_)},
                       {"factor", PyFloat(factor_)},
                       {"stop_factor_lr", PyFloat(stop_factor_lr_)},
                       {"count", std::to_string(count_)}});
    return p;
  }

 private:
  int step_;
  double factor_;
  double stop_factor_lr_;
  int count_ = 0;
};

// Lowers base_lr by `factor` as the update count passes each of the increasing steps.
class MultiFactorScheduler : public LRScheduler {
 public:
  explicit MultiFactorScheduler(Keywords* k)
      : LRScheduler(k->Number("base_lr"), k->Int("warmup_steps"), k->Number("warmup_begin_lr"),
                    k->String("warmup_mode")),
        steps_(k->IntList("step")),
        factor_(k->Number("factor")) {
    HN_CHECK(!steps_.empty(), kInvalidArgument)
        << "MultiFactorScheduler: step must be a list of at least one update count";
    for (size_t i = 0; i < steps_.size(); ++i) {
      HN_CHECK(steps_[i] >= 1, kInvalidArgument)
          << "MultiFactorScheduler: every step must be >= 1, got " << steps_[i];
      HN_CHECK(i == 0 || steps_[i] > steps_[i - 1], kInvalidArgument)
          << "MultiFactorScheduler: step must be an increasing list";
    }
    HN_CHECK(factor_ <= 1.0, kInvalidArgument)
        << "MultiFactorScheduler: factor must be <= 1 (the rate only decreases), got " << factor_;
  }
  float operator()(int num_update) override {
    if (num_update < warmup_steps_) return static_cast<float>(WarmupLr(num_update));
    while (cur_step_ind_ < steps_.size() && num_update > steps_[cur_step_ind_]) {
      count_ = steps_[cur_step_ind_];
      ++cur_step_ind_;
      base_lr_ *= factor_;
    }
    return static_cast<float>(base_lr_);
  }
  const char* class_name() const override { return "MultiFactorScheduler"; }
  bool SetOwnAttribute(const std::string& name, const std::string& value) override {
    if (name == "count") {
      count_ = static_cast<int>(ParsePyNumber(value, name));
      return true;
    }
    if (name != "cur_step_ind") return false;
    const double index = ParsePyNumber(value, name);
    HN_CHECK(index >= 0 && index <= static_cast<double>(steps_.size()), kInvalidArgument)
        << "MultiFactorScheduler: cur_step_ind " << value << " is not in [0, " << steps_.size()
        << "]";
    cur_step_ind_ = static_cast<size_t>(index);
    return true;
  }
  std::vector<std::string> OwnAttributes() const override { return {"count", "cur_step_ind"}; }
  KeywordArgs Params() const override {
    KeywordArgs p = BaseParams();
    std::string list = "[";
    for (size_t i = 0; i < steps_.size(); ++i) list += (i ? ", " : "") + std::to_string(steps_[i]);
    p.insert(p.end(), {{"step", list + "]"},
                       {"cur_step_ind", std::to_string(cur_step_ind_)},
                       {"factor", PyFloat(factor_)},
                       {"count", std::to_string(count_)}});
    return p;
  }

 private:
  std::vector<int> steps_;
  double factor_;
  size_t cur_step_ind_ = 0;
  int count_ = 0;
};

// Poly (pwr) or cosine decay from the base rate to final_lr over max_update updates.
class DecayScheduler : public LRScheduler {
 public:
  DecayScheduler(Keywords* k, bool cosine)
      : LRScheduler(k->Number("base_lr"), k->Int("warmup_steps"), k->Number("warmup_begin_lr"),
                    k->String("warmup_mode")),
        cosine_(cosine),
        power_(cosine ? 0.0 : k->Number("pwr")),
        base_lr_orig_(base_lr_),
        max_update_(k->Int("max_update")),
        final_lr_(k->Number("final_lr")),
        max_steps_(max_update_ - warmup_steps_) {
    HN_CHECK(max_update_ >= 1, kInvalidArgument)
        << class_name() << ": max_update must be >= 1, got " << max_update_;
  }
  float operator()(int num_update) override {
    if (num_update < warmup_steps_) return static_cast<float>(WarmupLr(num_update));
    if (num_update <= max_update_) {
      const double progress =
          static_cast<double>(num_update - warmup_steps_) / static_cast<double>(max_steps_);
      const double shape =
          cosine_ ? (1 + std::cos(M_PI * progress)) / 2 : std::pow(1 - progress, power_);
      base_lr_ = final_lr_ + (base_lr_orig_ - final_lr_) * shape;
    }
    return static_cast<float>(base_lr_);
  }
  const char* class_name() const override { return cosine_ ? "CosineScheduler" : "PolyScheduler"; }
  KeywordArgs Params() const override {
    KeywordArgs p = BaseParams();
    if (!cosine_) p.push_back({"power", PyFloat(power_)});
    p.insert(p.end(), {{"base_lr_orig", PyFloat(base_lr_orig_)},
                       {"max_update", std::to_string(max_update_)},
                       {"final_lr", PyFloat(final_lr_)},
                       {"max_steps", std::to_string(max_steps_)}});
    return p;
  }

 private:
  bool cosine_;
  double power_;
  double base_lr_orig_;
  int max_update_;
  double final_lr_;
  int max_steps_;
};

struct SchedulerEntry {
  const char* name;  // lower case, without "scheduler"
  KeywordTable keywords;
  std::shared_ptr<LRScheduler> (*make)(Keywords* k);
};

const KeywordTable kWarmup{{"base_lr", "0.01"},
                           {"warmup_steps", "0"},
                           {"warmup_begin_lr", "0"},
                           {"warmup_mode", "'linear'"}};

KeywordTable WithWarmup(KeywordTable own) {
  own.insert(own.end(), kWarmup.begin(), kWarmup.end());
  return own;
}

// The one table of schedulers: MXNet's constructor keywords and defaults.
const std::vector<SchedulerEntry>& Schedulers() {
  static const std::vector<SchedulerEntry> table{
      {"factor", WithWarmup({{"step", ""}, {"factor", "1"}, {"stop_factor_lr", "1e-08"}}),
       [](Keywords* k) -> std::shared_ptr<LRScheduler> {
         return std::make_shared<FactorScheduler>(k);
       }},
      {"multifactor", WithWarmup({{"step", ""}, {"factor", "1"}}),
       [](Keywords* k) -> std::shared_ptr<LRScheduler> {
         return std::make_shared<MultiFactorScheduler>(k);
       }},
      {"poly", WithWarmup({{"max_update", ""}, {"pwr", "2"}, {"final_lr", "0"}}),
       [](Keywords* k) -> std::shared_ptr<LRScheduler> {
         return std::make_shared<DecayScheduler>(k, false);
       }},
      {"cosine", WithWarmup({{"max_update", ""}, {"final_lr", "0"}}),
       [](Keywords* k) -> std::shared_ptr<LRScheduler> {
         return std::make_shared<DecayScheduler>(k, true);
       }},
  };
  return table;
}

// The attribute MXNet keeps a constructor keyword's value in: base_lr moves as the scheduler
// runs, warmup_final_lr keeps the constructor's.
const char* AttributeOfKeyword(const std::string& keyword) {
  if (keyword == "base_lr") return "warmup_final_lr";
  if (keyword == "pwr") return "power";
  return nullptr;
}

}  // namespace

std::shared_ptr<LRScheduler> LRScheduler::Restore(const std::string& class_name,
                                                  const KeywordArgs& attributes) {
  std::map<std::string, std::string> by_name(attributes.begin(), attributes.end());
  auto attribute = [&](const std::string& key) -> const std::string& {
    auto it = by_name.find(key);
    HN_CHECK(it != by_name.end(), kInvalidArgument)
        << "lr_scheduler: the saved " << class_name << " has no attribute '" << key << "'";
    return it->second;
  };
  std::string key = Lower(class_name);
  for (const SchedulerEntry& e : Schedulers()) {
    if (key != std::string(e.name) + "scheduler") continue;
    KeywordArgs constructor;
    for (const auto& keyword : e.keywords) {
      const char* kept_in = AttributeOfKeyword(keyword.first);
      constructor.emplace_back(keyword.first, attribute(kept_in ? kept_in : keyword.first));
    }
    std::shared_ptr<LRScheduler> s = Create(class_name, constructor);
    s->SetAttribute("base_lr", attribute("base_lr"));
    for (const std::string& own : s->OwnAttributes()) s->SetAttribute(own, attribute(own));
    return s;
  }
  HN_THROW(kInvalidArgument) << "lr_scheduler: '" << class_name
                             << "' is not a scheduler MXNet 1.9.1 defines (FactorScheduler, "
                                "MultiFactorScheduler, PolyScheduler, CosineScheduler)";
}

std::shared_ptr<LRScheduler> LRScheduler::Create(const std::string& name,
                                                 const KeywordArgs& params) {
  std::string key = Lower(name);
  const std::string suffix = "scheduler";
  if (key.size() > suffix.size() &&
      key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0) {
    key.resize(key.size() - suffix.size());
  }
  std::string known;
  for (const SchedulerEntry& e : Schedulers()) {
    if (key == e.name) {
      Keywords k("lr_scheduler " + name, e.keywords, params);
      std::shared_ptr<LRScheduler> s = e.make(&k);
      k.CheckAllUsed();
      return s;
    }
    known += std::string(known.empty() ? "" : ", ") + e.name;
  }
  HN_THROW(kNotFound) << "unknown lr_scheduler '" << name << "'; known: " << known
                      << " (MXNet's FactorScheduler, MultiFactorScheduler, PolyScheduler, "
                         "CosineScheduler)";
}

}  // namespace optimizer
}  // namespace hybridnet
