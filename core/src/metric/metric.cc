// The metrics of hybridnet/metric.h: MXNet 1.9.1's mx.metric computed in double precision on
// the host (metrics read every value once; no kernel is worth it).
#include "hybridnet/metric.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

namespace hybridnet {
namespace metric {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// The keyword arguments of one Create() call: each metric takes the keys it knows, and any key
// left over is an error listing the accepted ones.
class Args {
 public:
  Args(std::string kind, const AttrDict& dict) : kind_(std::move(kind)), dict_(dict) {}

  template <typename T>
  T Take(const std::string& key, T fallback) {
    accepted_.push_back(key);
    auto it = dict_.find(key);
    if (it == dict_.end()) return fallback;
    T value = fallback;
    try {
      internal::ParseValue(it->second, &value);
    } catch (const std::invalid_argument& e) {
      HN_THROW(kInvalidArgument) << kind_ << ": argument '" << key << "' is '" << it->second
                                 << "'; expected " << e.what();
    }
    return value;
  }

  std::string TakeChoice(const std::string& key, const std::string& fallback,
                         const std::vector<std::string>& choices) {
    std::string value = Take(key, fallback);
    if (std::find(choices.begin(), choices.end(), value) == choices.end()) {
      std::ostringstream os;
      for (size_t i = 0; i < choices.size(); ++i) os << (i ? ", '" : "'") << choices[i] << "'";
      HN_THROW(kInvalidArgument) << kind_ << ": argument '" << key << "' is '" << value
                                 << "'; expected one of " << os.str();
    }
    return value;
  }

  void CheckAllTaken() const {
    for (const auto& kv : dict_) {
      if (std::find(accepted_.begin(), accepted_.end(), kv.first) != accepted_.end()) continue;
      std::ostringstream os;
      for (size_t i = 0; i < accepted_.size(); ++i) os << (i ? ", " : "") << accepted_[i];
      HN_THROW(kInvalidArgument) << kind_ << ": unknown argument '" << kv.first << "'; it takes "
                                 << os.str();
    }
  }

  const std::string& kind() const { return kind_; }

 private:
  std::string kind_;
  const AttrDict& dict_;
  std::vector<std::string> accepted_;
};

// The values of a concrete array as doubles (C order).
std::vector<double> Values(const NDArray& array, const char* kind, const char* what) {
  HN_CHECK(!array.is_none(), kInvalidArgument) << kind << ": a " << what << " array is empty "
                                               << "(none)";
  HN_CHECK(!array.is_symbolic(), kUntraceable)
      << kind << ": a " << what << " array is symbolic; metrics read values, update them "
      << "outside hybridized code";
  NDArray converted = array.AsType(DType::kFloat64);
  const double* data = converted.data<double>();
  return std::vector<double>(data, data + converted.size());
}

// MXNet's astype('int32') of a float label: truncation toward zero.
int64_t ToInt(double value) { return static_cast<int64_t>(static_cast<int32_t>(value)); }

void CheckCounts(const char* kind, const std::vector<NDArray>& labels,
                 const std::vector<NDArray>& preds) {
  HN_CHECK(labels.size() == preds.size(), kInvalidArgument)
      << kind << ": " << labels.size() << " label arrays but " << preds.size()
      << " prediction arrays; update() takes one label per prediction";
}

int64_t NormalizeAxis(int64_t axis, size_t ndim, const char* kind, const Shape& shape) {
  const int64_t n = static_cast<int64_t>(ndim);
  HN_CHECK(axis >= -n && axis < n, kShapeError)
      << kind << ": axis " << axis << " is out of range for predictions of shape " << shape;
  return axis < 0 ? axis + n : axis;
}

// The index of the largest value along `axis` (the first one on ties, as argmax), for every
// position of the other axes in C order.
std::vector<int64_t> ArgMax(const std::vector<double>& values, const Shape& shape, int64_t axis) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.ndim(); ++d) inner *= shape[d];
  const int64_t extent = shape[axis];
  std::vector<int64_t> out(outer * inner, 0);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const double* base = values.data() + o * extent * inner + i;
      int64_t best = 0;
      for (int64_t k = 1; k < extent; ++k) {
        if (base[k * inner] > base[best * inner]) best = k;
      }
      out[o * inner + i] = best;
    }
  }
  return out;
}

// numpy's broadcasting of a - b, then the mean of f over the result.
double BroadcastMean(const std::vector<double>& a, Shape sa, const std::vector<double>& b, Shape sb,
                     const char* kind, const std::function<double(double)>& f) {
  const size_t ndim = std::max(sa.ndim(), sb.ndim());
  std::vector<int64_t> da(ndim, 1), db(ndim, 1), out(ndim);
  std::copy(sa.begin(), sa.end(), da.begin() + (ndim - sa.ndim()));
  std::copy(sb.begin(), sb.end(), db.begin() + (ndim - sb.ndim()));
  for (size_t d = 0; d < ndim; ++d) {
    HN_CHECK(da[d] == db[d] || da[d] == 1 || db[d] == 1, kShapeError)
        << kind << ": labels of shape " << sa << " and predictions of shape " << sb
        << " do not broadcast together";
    out[d] = da[d] == 1 ? db[d] : da[d];
  }
  int64_t total = 1;
  for (int64_t n : out) total *= n;
  // Strides of each operand over the output's dimensions (0 where it is broadcast).
  std::vector<int64_t> stride_a(ndim), stride_b(ndim);
  for (int64_t d = static_cast<int64_t>(ndim) - 1, ra = 1, rb = 1; d >= 0; --d) {
    stride_a[d] = da[d] == 1 ? 0 : ra;
    stride_b[d] = db[d] == 1 ? 0 : rb;
    ra *= da[d];
    rb *= db[d];
  }
  double sum = 0.0;
  std::vector<int64_t> index(ndim, 0);
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t ia = 0, ib = 0;
    for (size_t d = 0; d < ndim; ++d) {
      ia += index[d] * stride_a[d];
      ib += index[d] * stride_b[d];
    }
    sum += f(a[ia] - b[ib]);
    for (int64_t d = static_cast<int64_t>(ndim) - 1; d >= 0; --d) {
      if (++index[d] < out[d]) break;
      index[d] = 0;
    }
  }
  return total == 0 ? kNaN : sum / static_cast<double>(total);
}

class Accuracy : public EvalMetric {
 public:
  explicit Accuracy(Args* args)
      : EvalMetric(args->Take<std::string>("name", "accuracy")),
        axis_(args->Take<int64_t>("axis", 1)) {}
  const char* kind() const override { return "Accuracy"; }

  void Update(const std::vector<NDArray>& labels, const std::vector<NDArray>& preds) override {
    CheckCounts(kind(), labels, preds);
    std::vector<std::pair<double, double>> adds;
    for (size_t i = 0; i < labels.size(); ++i) {
      const std::vector<double> label = Values(labels[i], kind(), "label");
      const std::vector<double> pred = Values(preds[i], kind(), "prediction");
      std::vector<int64_t> predicted;
      if (preds[i].shape() != labels[i].shape()) {
        const Shape& shape = preds[i].shape();
        HN_CHECK(shape.ndim() > 0, kShapeError)
            << kind() << ": predictions of shape " << shape << " have no axis " << axis_;
        predicted = ArgMax(pred, shape, NormalizeAxis(axis_, shape.ndim(), kind(), shape));
      } else {
        for (double p : pred) predicted.push_back(ToInt(p));
      }
      HN_CHECK(predicted.size() == label.size(), kShapeError)
          << kind() << ": " << label.size() << " labels (shape " << labels[i].shape() << ") but "
          << predicted.size() << " predicted classes (predictions of shape " << preds[i].shape()
          << ", axis " << axis_ << ")";
      double correct = 0;
      for (size_t k = 0; k < label.size(); ++k) correct += predicted[k] == ToInt(label[k]);
      adds.emplace_back(correct, static_cast<double>(label.size()));
    }
    for (const auto& add : adds) Accumulate(add.first, add.second);
  }

 private:
  int64_t axis_;
};

class TopKAccuracy : public EvalMetric {
 public:
  explicit TopKAccuracy(Args* args)
      : EvalMetric(args->Take<std::string>("name", "top_k_accuracy")),
        top_k_(args->Take<int64_t>("top_k", 1)) {
    HN_CHECK(top_k_ > 1, kInvalidArgument)
        << "TopKAccuracy: top_k is " << top_k_ << "; use Accuracy when top_k is no more than 1";
    name_ += "_" + std::to_string(top_k_);
  }
  const char* kind() const override { return "TopKAccuracy"; }

  void Update(const std::vector<NDArray>& labels, const std::vector<NDArray>& preds) override {
    CheckCounts(kind(), labels, preds);
    std::vector<std::pair<double, double>> adds;
    for (size_t i = 0; i < labels.size(); ++i) {
      const Shape& shape = preds[i].shape();
      HN_CHECK(shape.ndim() == 2, kShapeError)
          << kind() << ": predictions must be 2-D (batch, classes); got shape " << shape;
      const std::vector<double> label = Values(labels[i], kind(), "label");
      const std::vector<double> pred = Values(preds[i], kind(), "prediction");
      const int64_t rows = shape[0], classes = shape[1];
      HN_CHECK(static_cast<int64_t>(label.size()) == rows, kShapeError)
          << kind() << ": " << label.size() << " labels (shape " << labels[i].shape() << ") for "
          << rows << " predictions (shape " << shape << ")";
      const int64_t k = std::min(classes, top_k_);
      double correct = 0;
      for (int64_t r = 0; r < rows; ++r) {
        const double* row = pred.data() + r * classes;
        const int64_t target = ToInt(label[r]);
        if (target < 0 || target >= classes) continue;
        // The label is among the k largest when fewer than k values beat it.
        int64_t larger = 0;
        for (int64_t c = 0; c < classes; ++c) larger += row[c] > row[target];
        correct += larger < k;
      }
      adds.emplace_back(correct, static_cast<double>(rows));
    }
    for (const auto& add : adds) Accumulate(add.first, add.second);
  }

 private:
  int64_t top_k_;
};

// The confusion counts of a binary classifier (class 1 is positive), local and global.
struct BinaryCounts {
  double tp = 0, fp = 0, fn = 0, tn = 0;
  double total() const { return tp + fp + fn + tn; }
  double Precision() const { return tp + fp > 0 ? tp / (tp + fp) : 0.0; }
  double Recall() const { return tp + fn > 0 ? tp / (tp + fn) : 0.0; }
  double FScore() const {
    const double p = Precision(), r = Recall();
    return p + r > 0 ? 2 * p * r / (p + r) : 0.0;
  }
  // Matthews' correlation; factors that are zero are left out of the denominator, as MXNet does.
  double Matthews() const {
    if (total() == 0) return 0.0;
    double denominator = 1.0;
    for (double t : {tp + fp, tp + fn, tn + fp, tn + fn}) {
      if (t != 0.0) denominator *= t;
    }
    return (tp * tn - fp * fn) / std::sqrt(denominator);
  }
};

// F1 and MCC: counts per batch; "macro" averages the per-batch scores, "micro" scores the counts
// of all batches since the last reset.
class BinaryClassification : public EvalMetric {
 public:
  BinaryClassification(Args* args, const char* default_name)
      : EvalMetric(args->Take<std::string>("name", default_name)),
        micro_(args->TakeChoice("average", "macro", {"macro", "micro"}) == "micro") {}

  void Update(const std::vector<NDArray>& labels, const std::vector<NDArray>& preds) override {
    CheckCounts(kind(), labels, preds);
    BinaryCounts batch;
    for (size_t i = 0; i < labels.size(); ++i) {
      const Shape& shape = preds[i].shape();
      HN_CHECK(shape.ndim() == 2, kShapeError)
          << kind() << ": predictions must be 2-D (batch, classes); got shape " << shape;
      const std::vector<double> label = Values(labels[i], kind(), "label");
      HN_CHECK(static_cast<int64_t>(label.size()) == shape[0], kShapeError)
          << kind() << ": " << label.size() << " labels (shape " << labels[i].shape() << ") for "
          << shape[0] << " predictions (shape " << shape << ")";
      std::set<int64_t> classes;
      for (double l : label) classes.insert(ToInt(l));
      HN_CHECK(classes.size() <= 2, kInvalidArgument)
          << kind() << " supports binary classification only; the labels hold " << classes.size()
          << " classes";
      const std::vector<int64_t> predicted =
          ArgMax(Values(preds[i], kind(), "prediction"), shape, 1);
      for (size_t k = 0; k < label.size(); ++k) {
        const bool positive = predicted[k] == 1, truth = ToInt(label[k]) == 1;
        (positive ? (truth ? batch.tp : batch.fp) : (truth ? batch.fn : batch.tn)) += 1;
      }
    }
    Add(&local_counts_, batch);
    Add(&global_counts_, batch);
    if (micro_) {
      local_ = {local_counts_.total(), Score(local_counts_) * local_counts_.total()};
      global_ = {global_counts_.total(), Score(global_counts_) * global_counts_.total()};
    } else {
      Accumulate(Score(batch), 1.0);
      local_counts_ = global_counts_ = BinaryCounts();
    }
  }
  void Reset() override {
    EvalMetric::Reset();
    local_counts_ = global_counts_ = BinaryCounts();
  }
  void ResetLocal() override {
    EvalMetric::ResetLocal();
    local_counts_ = BinaryCounts();
  }

 protected:
  virtual double Score(const BinaryCounts& counts) const = 0;

 private:
  static void Add(BinaryCounts* to, const BinaryCounts& from) {
    to->tp += from.tp;
    to->fp += from.fp;
    to->fn += from.fn;
    to->tn += from.tn;
  }
  bool micro_;
  BinaryCounts local_counts_, global_counts_;
};

class F1 : public BinaryClassification {
 public:
  explicit F1(Args* args) : BinaryClassification(args, "f1") {}
  const char* kind() const override { return "F1"; }

 protected:
  double Score(const BinaryCounts& counts) const override { return counts.FScore(); }
};

class MCC : public BinaryClassification {
 public:
  explicit MCC(Args* args) : BinaryClassification(args, "mcc") {}
  const char* kind() const override { return "MCC"; }

 protected:
  double Score(const BinaryCounts& counts) const override { return counts.Matthews(); }
};

class Perplexity : public EvalMetric {
 public:
  explicit Perplexity(Args* args)
      : EvalMetric(args->Take<std::string>("name", "perplexity")),
        ignore_label_(args->Take<std::optional<double>>("ignore_label", std::nullopt)),
        axis_(args->Take<int64_t>("axis", -1)) {}
  const char* kind() const override { return "Perplexity"; }

  void Update(const std::vector<NDArray>& labels, const std::vector<NDArray>& preds) override {
    CheckCounts(kind(), labels, preds);
    double loss = 0.0, num = 0.0;
    for (size_t i = 0; i < labels.size(); ++i) {
      const Shape& shape = preds[i].shape();
      HN_CHECK(shape.ndim() > 0 && shape[shape.ndim() - 1] > 0 &&
                   labels[i].size() == preds[i].size() / shape[shape.ndim() - 1],
               kShapeError)
          << kind() << ": labels of shape " << labels[i].shape() << " do not fit predictions "
          << "of shape " << shape << " (one label per prediction row expected)";
      const int64_t axis = NormalizeAxis(axis_, shape.ndim(), kind(), shape);
      const std::vector<double> label = Values(labels[i], kind(), "label");
      const std::vector<double> pred = Values(preds[i], kind(), "prediction");
      int64_t outer = 1, inner = 1;
      for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
      for (size_t d = axis + 1; d < shape.ndim(); ++d) inner *= shape[d];
      const int64_t extent = shape[axis];
      HN_CHECK(outer * inner == static_cast<int64_t>(label.size()), kShapeError)
          << kind() << ": " << label.size() << " labels for " << outer * inner
          << " predictions along axis " << axis_ << " of shape " << shape;
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t in = 0; in < inner; ++in) {
          const double l = label[o * inner + in];
          if (ignore_label_ && l == *ignore_label_) continue;
          // MXNet's pick clips the class index into range.
          const int64_t c = std::clamp<int64_t>(ToInt(l), 0, extent - 1);
          loss -= std::log(std::max(1e-10, pred[(o * extent + c) * inner + in]));
          num += 1;
        }
      }
    }
    Accumulate(loss, num);
  }

 protected:
  double Value(const Stats& stats, bool) const override {
    return stats.num_inst == 0 ? kNaN : std::exp(stats.sum_metric / stats.num_inst);
  }

 private:
  std::optional<double> ignore_label_;
  int64_t axis_;
};

// MAE, MSE and RMSE: per (label, prediction) pair, f averaged over label - prediction with
// numpy's broadcasting after 1-D arrays become columns; the value averages the pairs.
class Regression : public EvalMetric {
 public:
  Regression(Args* args, const char* default_name, const char* kind,
             std::function<double(double)> term, bool root)
      : EvalMetric(args->Take<std::string>("name", default_name)),
        kind_(kind),
        term_(std::move(term)),
        root_(root) {}
  const char* kind() const override { return kind_; }

  void Update(const std::vector<NDArray>& labels, const std::vector<NDArray>& preds) override {
    CheckCounts(kind(), labels, preds);
    std::vector<double> values;
    for (size_t i = 0; i < labels.size(); ++i) {
      auto column = [](Shape s) { return s.ndim() == 1 ? Shape{s[0], 1} : s; };
      const double mean = BroadcastMean(
          Values(labels[i], kind(), "label"), column(labels[i].shape()),
          Values(preds[i], kind(), "prediction"), column(preds[i].shape()), kind(), term_);
      values.push_back(root_ ? std::sqrt(mean) : mean);
    }
    for (double v : values) Accumulate(v, 1.0);
  }

 private:
  const char* kind_;
  std::function<double(double)> term_;
  bool root_;
};

// CrossEntropy and NegativeLogLikelihood: -log(p[label] + eps) summed over the rows.
class LogLikelihood : public EvalMetric {
 public:
  LogLikelihood(Args* args, const char* default_name, const char* kind)
      : EvalMetric(args->Take<std::string>("name", default_name)),
        kind_(kind),
        eps_(args->Take<double>("eps", 1e-12)) {}
  const char* kind() const override { return kind_; }

  void Update(const std::vector<NDArray>& labels, const std::vector<NDArray>& preds) override {
    CheckCounts(kind(), labels, preds);
    std::vector<std::pair<double, double>> adds;
    for (size_t i = 0; i < labels.size(); ++i) {
      const Shape& shape = preds[i].shape();
      HN_CHECK(shape.ndim() == 2, kShapeError)
          << kind() << ": predictions must be 2-D (batch, classes) probabilities; got shape "
          << shape;
      const std::vector<double> label = Values(labels[i], kind(), "label");
      const std::vector<double> pred = Values(preds[i], kind(), "prediction");
      HN_CHECK(static_cast<int64_t>(label.size()) == shape[0], kShapeError)
          << kind() << ": " << label.size() << " labels (shape " << labels[i].shape() << ") for "
          << shape[0] << " predictions (shape " << shape << ")";
      double sum = 0.0;
      for (size_t r = 0; r < label.size(); ++r) {
        const int64_t c = static_cast<int64_t>(label[r]);
        HN_CHECK(c >= 0 && c < shape[1], kInvalidArgument)
            << kind() << ": label " << label[r] << " (row " << r << ") is not a class of "
            << "predictions with " << shape[1] << " classes";
        sum -= std::log(pred[r * shape[1] + c] + eps_);
      }
      adds.emplace_back(sum, static_cast<double>(label.size()));
    }
    for (const auto& add : adds) Accumulate(add.first, add.second);
  }

 private:
  const char* kind_;
  double eps_;
};

class PearsonCorrelation : public EvalMetric {
 public:
  explicit PearsonCorrelation(Args* args)
      : EvalMetric(args->Take<std::string>("name", "pearsonr")),
        micro_(args->TakeChoice("average", "macro", {"macro", "micro"}) == "micro") {}
  const char* kind() const override { return "PearsonCorrelation"; }

  void Update(const std::vector<NDArray>& labels, const std::vector<NDArray>& preds) override {
    CheckCounts(kind(), labels, preds);
    for (size_t i = 0; i < labels.size(); ++i) {
      HN_CHECK(labels[i].shape() == preds[i].shape(), kShapeError)
          << kind() << ": labels of shape " << labels[i].shape() << " but predictions of shape "
          << preds[i].shape();
    }
    for (size_t i = 0; i < labels.size(); ++i) {
      const std::vector<double> label = Values(labels[i], kind(), "label");
      const std::vector<double> pred = Values(preds[i], kind(), "prediction");
      if (micro_) {
        AddMicro(label, pred);
        Accumulate(0.0, 1.0);
      } else {
        Accumulate(Correlation(pred, label), 1.0);
      }
    }
  }
  void Reset() override {
    EvalMetric::Reset();
    micro_state_ = Moments();
  }

 protected:
  // Micro: the correlation of every value since the last Reset(), whichever sums are asked for
  // (MXNet 1.9.1 reads 0 from the global sums here, which it never fills).
  double Value(const Stats& stats, bool global) const override {
    if (!micro_) return EvalMetric::Value(stats, global);
    if (stats.num_inst == 0) return kNaN;
    const Moments& m = micro_state_;
    const double n1 = m.count - 1;
    return m.co_moment / (n1 * std::sqrt(m.m2_pred / n1) * std::sqrt(m.m2_label / n1));
  }

 private:
  struct Moments {
    double count = 0, mean_label = 0, mean_pred = 0, m2_label = 0, m2_pred = 0, co_moment = 0;
  };

  // numpy.corrcoef(pred, label)[0, 1].
  static double Correlation(const std::vector<double>& x, const std::vector<double>& y) {
    const double n = static_cast<double>(x.size());
    double mx = 0, my = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      mx += x[i];
      my += y[i];
    }
    mx /= n;
    my /= n;
    double sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      sxy += (x[i] - mx) * (y[i] - my);
      sxx += (x[i] - mx) * (x[i] - mx);
      syy += (y[i] - my) * (y[i] - my);
    }
    return std::clamp(sxy / std::sqrt(sxx * syy), -1.0, 1.0);
  }

  // Batch updates of the means, second moments and co-moment (Welford), in MXNet's order: the
  // label mean moves first and the co-moment uses it with the previous prediction mean.
  void AddMicro(const std::vector<double>& label, const std::vector<double>& pred) {
    Moments& m = micro_state_;
    const double count = m.count + static_cast<double>(label.size());
    auto update = [count](const std::vector<double>& v, double* mean, double* m2) {
      const double old_mean = *mean;
      double shift = 0;
      for (double x : v) shift += (x - old_mean) / count;
      *mean = old_mean + shift;
      for (double x : v) *m2 += (x - old_mean) * (x - *mean);
    };
    update(label, &m.mean_label, &m.m2_label);
    for (size_t i = 0; i < label.size(); ++i) {
      m.co_moment += (label[i] - m.mean_label) * (pred[i] - m.mean_pred);
    }
    update(pred, &m.mean_pred, &m.m2_pred);
    m.count = count;
  }

  bool micro_;
  Moments micro_state_;
};

class Loss : public EvalMetric {
 public:
  explicit Loss(Args* args) : EvalMetric(args->Take<std::string>("name", "loss")) {}
  const char* kind() const override { return "Loss"; }

  // The labels are not read: the predictions are the losses.
  void Update(const std::vector<NDArray>&, const std::vector<NDArray>& preds) override {
    std::vector<std::pair<double, double>> adds;
    for (const NDArray& pred : preds) {
      double sum = 0;
      for (double v : Values(pred, kind(), "loss")) sum += v;
      adds.emplace_back(sum, static_cast<double>(pred.size()));
    }
    for (const auto& add : adds) Accumulate(add.first, add.second);
  }
};

std::unique_ptr<EvalMetric> MakeComposite(Args* args) {
  auto composite =
      std::make_unique<CompositeEvalMetric>(args->Take<std::string>("name", "composite"));
  std::stringstream names(args->Take<std::string>("metrics", ""));
  for (std::string child; std::getline(names, child, ',');) {
    child.erase(0, child.find_first_not_of(' '));
    child.erase(child.find_last_not_of(' ') + 1);
    if (!child.empty()) composite->Add(Create(child));
  }
  return composite;
}

// The registry: MXNet's class names (lower-case, as its registry keys them) and aliases.
struct MetricKind {
  std::vector<std::string> names;
  std::string kind;
  std::function<std::unique_ptr<EvalMetric>(Args*)> make;
};

template <typename M>
std::unique_ptr<EvalMetric> Make(Args* args) {
  return std::make_unique<M>(args);
}

const std::vector<MetricKind>& Registry() {
  static const std::vector<MetricKind> registry = {
      {{"accuracy", "acc"}, "Accuracy", Make<Accuracy>},
      {{"topkaccuracy", "top_k_accuracy", "top_k_acc"}, "TopKAccuracy", Make<TopKAccuracy>},
      {{"f1"}, "F1", Make<F1>},
      {{"mcc"}, "MCC", Make<MCC>},
      {{"perplexity"}, "Perplexity", Make<Perplexity>},
      {{"mae"},
       "MAE",
       [](Args* a) {
         return std::make_unique<Regression>(
             a, "mae", "MAE", [](double d) { return std::abs(d); }, false);
       }},
      {{"mse"},
       "MSE",
       [](Args* a) {
         return std::make_unique<Regression>(
             a, "mse", "MSE", [](double d) { return d * d; }, false);
       }},
      {{"rmse"},
       "RMSE",
       [](Args* a) {
         return std::make_unique<Regression>(
             a, "rmse", "RMSE", [](double d) { return d * d; }, true);
       }},
      {{"crossentropy", "ce"},
       "CrossEntropy",
       [](Args* a) { return std::make_unique<LogLikelihood>(a, "cross-entropy", "CrossEntropy"); }},
      {{"negativeloglikelihood", "nll_loss"},
       "NegativeLogLikelihood",
       [](Args* a) {
         return std::make_unique<LogLikelihood>(a, "nll-loss", "NegativeLogLikelihood");
       }},
      {{"pearsoncorrelation", "pearsonr"}, "PearsonCorrelation", Make<PearsonCorrelation>},
      {{"loss"}, "Loss", Make<Loss>},
      {{"compositeevalmetric", "composite"}, "CompositeEvalMetric", MakeComposite},
  };
  return registry;
}

}  // namespace

void EvalMetric::Reset() { local_ = global_ = Stats(); }

void EvalMetric::ResetLocal() { local_ = Stats(); }

double EvalMetric::Value(const Stats& stats, bool) const {
  return stats.num_inst == 0 ? kNaN : stats.sum_metric / stats.num_inst;
}

std::vector<NameValue> EvalMetric::Get() const { return {{name_, Value(local_, false)}}; }

std::vector<NameValue> EvalMetric::GetGlobal() const { return {{name_, Value(global_, true)}}; }

void EvalMetric::Accumulate(double sum_metric, double num_inst) {
  local_.sum_metric += sum_metric;
  local_.num_inst += num_inst;
  global_.sum_metric += sum_metric;
  global_.num_inst += num_inst;
}

void CompositeEvalMetric::Add(std::unique_ptr<EvalMetric> child) {
  HN_CHECK(child != nullptr, kInvalidArgument) << "CompositeEvalMetric: the child is null";
  children_.push_back(std::move(child));
}

EvalMetric& CompositeEvalMetric::child(size_t i) {
  HN_CHECK(i < children_.size(), kInvalidArgument)
      << "CompositeEvalMetric: metric index " << i << " is out of range [0, " << children_.size()
      << ")";
  return *children_[i];
}

void CompositeEvalMetric::Update(const std::vector<NDArray>& labels,
                                 const std::vector<NDArray>& preds) {
  for (auto& child : children_) child->Update(labels, preds);
}

void CompositeEvalMetric::Reset() {
  for (auto& child : children_) child->Reset();
}

void CompositeEvalMetric::ResetLocal() {
  for (auto& child : children_) child->ResetLocal();
}

std::vector<NameValue> CompositeEvalMetric::Get() const {
  std::vector<NameValue> values;
  for (const auto& child : children_) {
    for (auto& v : child->Get()) values.push_back(std::move(v));
  }
  return values;
}

std::vector<NameValue> CompositeEvalMetric::GetGlobal() const {
  std::vector<NameValue> values;
  for (const auto& child : children_) {
    for (auto& v : child->GetGlobal()) values.push_back(std::move(v));
  }
  return values;
}

namespace {

const MetricKind& Find(const std::string& name) {
  const std::string key = Lower(name);
  for (const MetricKind& entry : Registry()) {
    if (std::find(entry.names.begin(), entry.names.end(), key) != entry.names.end()) return entry;
  }
  std::ostringstream known;
  const auto names = MetricNames();
  for (size_t i = 0; i < names.size(); ++i) known << (i ? ", " : "") << names[i];
  HN_THROW(kNotFound) << "unknown metric '" << name << "'; known metrics: " << known.str();
}

}  // namespace

std::unique_ptr<EvalMetric> Create(const std::string& name, const AttrDict& args) {
  const MetricKind& entry = Find(name);
  Args reader(entry.kind, args);
  auto metric = entry.make(&reader);
  reader.CheckAllTaken();
  return metric;
}

const std::string& KindOf(const std::string& name) { return Find(name).kind; }

std::vector<std::string> MetricNames() {
  std::vector<std::string> names;
  for (const MetricKind& entry : Registry()) {
    names.insert(names.end(), entry.names.begin(), entry.names.end());
  }
  return names;
}

}  // namespace metric
}  // namespace hybridnet
