// Calibration statistics of the quantizer, as MXNet 1.9.1's contrib/quantization.py collects them:
// a layer output's min and max over the calibration batches (calib_mode "naive") or its
// histogram over [-t, t], widened as later batches reach further (calib_mode "entropy"), and the
// threshold of least KL divergence (MXNet's _contrib_calibrate_entropy). The histogram bins each
// batch as numpy.histogram does for float32 data, so that the same batches give MXNet's counts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hybridnet {
namespace internal {

/// The number of histogram bins of entropy calibration (MXNet's _LayerHistogramCollector).
constexpr int kCalibHistogramBins = 8001;

/// One layer output's running statistics over the calibration batches.
class LayerStatistics {
 public:
  /// Folds in one batch's values: min and max always, the histogram when `histogram` is set.
  void Add(const float* values, size_t count, bool histogram);

  bool empty() const { return empty_; }
  float min() const { return min_; }
  float max() const { return max_; }
  /// The histogram counts and their num_bins + 1 edges (entropy mode only).
  const std::vector<int64_t>& counts() const { return counts_; }
  const std::vector<float>& edges() const { return edges_; }

 private:
  bool empty_ = true;
  float min_ = 0.0f, max_ = 0.0f;
  std::vector<int64_t> counts_;
  std::vector<float> edges_;
  // The histogram's half range: float32 until a batch widens it, then float64, as in numpy.
  double threshold_ = 0.0;
  bool threshold_is_float_ = true;
};

/// What _contrib_calibrate_entropy returns for a histogram.
struct EntropyThreshold {
  float threshold;
  float divergence;
};

/// The threshold of least KL divergence between the histogram and its quantization into
/// `num_quantized_bins` levels (MXNet's _contrib_calibrate_entropy, bit for bit): `hist` has an
/// odd number of bins, `edges` one more.
EntropyThreshold OptimalEntropyThreshold(const std::vector<float>& hist,
                                         const std::vector<float>& edges, int num_quantized_bins);

}  // namespace internal
}  // namespace hybridnet
