#include "quantization/calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "hybridnet/base.h"

namespace hybridnet {
namespace internal {

namespace {

// numpy.histogram(float32 values, bins=num_bins, range=(first, last)): the edges are float32
// (numpy's bin type for float32 data), from linspace computed in float32 when the range ends are
// float32 scalars and in float64 otherwise; the bin of a value is its scaled offset truncated,
// then moved by one where that lands across an edge, the last bin holding its right edge.
void NumpyHistogram(const float* values, size_t count, size_t num_bins, double first, double last,
                    bool range_is_float, std::vector<int64_t>* counts, std::vector<float>* edges) {
  if (first == last) {  // numpy widens an empty range by 0.5 each side, in float64
    first -= 0.5;
    last += 0.5;
    range_is_float = false;
  }
  edges->resize(num_bins + 1);
  double norm = 0.0;
  if (range_is_float) {
    const float start = static_cast<float>(first), stop = static_cast<float>(last);
    const float step = (stop - start) / static_cast<float>(num_bins);
    for (size_t i = 0; i < num_bins; ++i) {
      float v = static_cast<float>(i) * step;
      (*edges)[i] = v + start;
    }
    norm = static_cast<double>(num_bins) / static_cast<double>(stop - start);
  } else {
    const double step = (last - first) / static_cast<double>(num_bins);
    for (size_t i = 0; i < num_bins; ++i) {
      double v = static_cast<double>(i) * step;
      (*edges)[i] = static_cast<float>(v + first);
    }
    norm = static_cast<double>(num_bins) / (last - first);
  }
  (*edges)[num_bins] = static_cast<float>(last);
  counts->assign(num_bins, 0);
  const float first_f = static_cast<float>(first), last_f = static_cast<float>(last);
  const float norm_f = static_cast<float>(norm);
  const int64_t bins = static_cast<int64_t>(num_bins);
  for (size_t i = 0; i < count; ++i) {
    const float x = values[i];
    if (!(x >= first_f && x <= last_f)) continue;
    const float scaled = (x - first_f) * norm_f;
    int64_t bin = static_cast<int64_t>(scaled);
    if (bin == bins) --bin;
    if (x < (*edges)[bin]) --bin;
    if (bin != bins - 1 && x >= (*edges)[bin + 1]) ++bin;
    ++(*counts)[bin];
  }
}

// Python's float floor division (what numpy's // gives for float64 scalars).
double FloorDivide(double a, double b) {
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0.0 && ((b < 0) != (mod < 0))) div -= 1.0;
  if (div == 0.0) return std::copysign(0.0, a / b);
  double floor_div = std::floor(div);
  if (div - floor_div > 0.5) floor_div += 1.0;
  return floor_div;
}

// A distribution with its zeros raised to eps, the mass taken evenly off the others; empty when
// every entry is zero or eps would exceed them (as MXNet's SmoothDistribution).
std::vector<float> SmoothDistribution(const std::vector<float>& p) {
  constexpr float kEps = 0.0001f;
  size_t zeros = 0;
  for (float v : p) zeros += v == 0.f;
  const size_t nonzeros = p.size() - zeros;
  if (nonzeros == 0) return {};
  const float eps1 = kEps * static_cast<float>(zeros) / static_cast<float>(nonzeros);
  if (eps1 >= 1.0f) return {};
  std::vector<float> smoothed = p;
  for (size_t i = 0; i < p.size(); ++i) {
    const float is_zero = static_cast<float>(p[i] == 0.f);
    const float is_nonzero = static_cast<float>(p[i] != 0.f);
    smoothed[i] += kEps * is_zero - eps1 * is_nonzero;
  }
  return smoothed;
}

// KL(p || q) of the normalized distributions, summed in float in index order.
float KlDivergence(std::vector<float> p, std::vector<float> q) {
  const float p_sum = std::accumulate(p.begin(), p.end(), 0.f);
  const float q_sum = std::accumulate(q.begin(), q.end(), 0.f);
  for (float& v : p) v /= p_sum;
  for (float& v : q) v /= q_sum;
  float divergence = 0.f;
  for (size_t i = 0; i < p.size(); ++i) divergence += p[i] * std::log(p[i] / q[i]);
  return divergence;
}

}  // namespace

void LayerStatistics::Add(const float* values, size_t count, bool histogram) {
  if (count == 0) return;
  float batch_min = values[0], batch_max = values[0];
  for (size_t i = 1; i < count; ++i) {
    batch_min = std::min(batch_min, values[i]);
    batch_max = std::max(batch_max, values[i]);
  }
  if (histogram) {
    const float reach = std::max(std::fabs(batch_min), std::fabs(batch_max));
    if (empty_) {
      NumpyHistogram(values, count, kCalibHistogramBins, -reach, reach, true, &counts_, &edges_);
      threshold_ = reach;
      threshold_is_float_ = true;
    } else if (reach <= threshold_) {
      std::vector<int64_t> batch_counts;
      std::vector<float> batch_edges;
      NumpyHistogram(values, count, counts_.size(), -threshold_, threshold_, threshold_is_float_,
                     &batch_counts, &batch_edges);
      for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += batch_counts[i];
    } else {
      // Widen by whole old bins on each side so that the old counts keep their bins.
      const double old_step = 2.0 * threshold_ / static_cast<double>(counts_.size());
      const double reach_gap = threshold_is_float_
                                   ? static_cast<double>(reach - static_cast<float>(threshold_))
                                   : static_cast<double>(reach) - threshold_;
      const int64_t added = static_cast<int64_t>(FloorDivide(reach_gap, old_step) + 1.0);
      const size_t num_bins = counts_.size() + 2 * static_cast<size_t>(added);
      const double widened = static_cast<double>(added) * old_step + threshold_;
      std::vector<int64_t> widened_counts;
      NumpyHistogram(values, count, num_bins, -widened, widened, false, &widened_counts, &edges_);
      for (size_t i = 0; i < counts_.size(); ++i) widened_counts[added + i] += counts_[i];
      counts_ = std::move(widened_counts);
      threshold_ = widened;
      threshold_is_float_ = false;
    }
  }
  min_ = empty_ ? batch_min : std::min(min_, batch_min);
  max_ = empty_ ? batch_max : std::max(max_, batch_max);
  empty_ = false;
}

EntropyThreshold OptimalEntropyThreshold(const std::vector<float>& hist,
                                         const std::vector<float>& edges, int num_quantized_bins) {
  const size_t num_bins = hist.size();
  HN_CHECK(num_bins % 2 == 1 && edges.size() == num_bins + 1, kInvalidArgument)
      << "entropy calibration needs an odd number of histogram bins and one more edge, got "
      << num_bins << " bins and " << edges.size() << " edges";
  HN_CHECK(num_quantized_bins > 0 && static_cast<size_t>(num_quantized_bins) <= num_bins,
           kInvalidArgument)
      << "entropy calibration: " << num_quantized_bins << " quantized bins for " << num_bins
      << " histogram bins";
  const size_t zero_bin = num_bins / 2;
  const size_t half_quantized = static_cast<size_t>(num_quantized_bins) / 2;
  const size_t levels = static_cast<size_t>(num_quantized_bins);
  std::vector<float> thresholds(zero_bin + 1 - half_quantized, 0.f);
  std::vector<float> divergences(thresholds.size(), 0.f);
  for (size_t i = half_quantized; i <= zero_bin; ++i) {
    const size_t start = zero_bin - i, stop = zero_bin + i + 1;
    thresholds[i - half_quantized] = edges[stop];
    // p: the histogram clipped to [start, stop), the outliers folded into its end bins;
    // sliced: the bins strictly inside, as whole counts.
    std::vector<size_t> sliced(stop - start, 0);
    std::vector<float> p(stop - start, 0.f);
    for (size_t j = 0; j < num_bins; ++j) {
      if (j <= start) {
        p[0] += hist[j];
      } else if (j >= stop) {
        p.back() += hist[j];
      } else {
        sliced[j - start] = static_cast<size_t>(hist[j]);
        p[j - start] = hist[j];
      }
    }
    // q: the sliced bins merged into `levels` bins (the remainder joins the last), each spread
    // evenly over the non-empty bins it came from.
    const size_t merged = sliced.size() / levels;
    std::vector<float> quantized(levels, 0.f);
    for (size_t j = 0; j < levels; ++j) {
      int sum = 0;
      for (size_t k = j * merged; k < (j + 1) * merged; ++k) sum += static_cast<int>(sliced[k]);
      quantized[j] = static_cast<float>(sum);
    }
    int rest = 0;
    for (size_t k = levels * merged; k < sliced.size(); ++k) rest += static_cast<int>(sliced[k]);
    quantized.back() += static_cast<float>(rest);
    std::vector<float> q(sliced.size(), 0.f);
    for (size_t j = 0; j < levels; ++j) {
      const size_t from = j * merged, to = j == levels - 1 ? q.size() : (j + 1) * merged;
      const int nonempty = static_cast<int>(
          std::count_if(sliced.begin() + from, sliced.begin() + to, [](size_t v) { return v; }));
      if (nonempty == 0) continue;
      for (size_t k = from; k < to; ++k) {
        if (p[k] != 0.f) q[k] = quantized[j] / static_cast<float>(nonempty);
      }
    }
    p = SmoothDistribution(p);
    q = SmoothDistribution(q);
    divergences[i - half_quantized] =
        q.empty() || p.empty() ? std::numeric_limits<float>::infinity() : KlDivergence(p, q);
  }
  size_t best = 0;
  float least = std::numeric_limits<float>::max();
  for (size_t i = 0; i < divergences.size(); ++i) {
    if (divergences[i] < least) {
      least = divergences[i];
      best = i;
    }
  }
  return {thresholds[best], least};
}

}  // namespace internal
}  // namespace hybridnet
