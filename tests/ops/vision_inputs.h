// Structured inputs for the vision and detection conformance cases (vision_cases.cc,
// detection_cases.cc): a generator per input, fixed tables, scored boxes in overlapping
// clusters with tied and non-positive scores, and ROIs partly outside the feature map.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "conformance.h"

namespace hybridnet {
namespace conformance {

/// Input i drawn by gens[i].
inline InputGen PerInput(std::vector<InputGen> gens) {
  return [gens](std::mt19937& rng, size_t input, int64_t index) {
    return gens.at(input)(rng, input, index);
  };
}

/// The given values in order (the table must have the input's size).
inline InputGen Values(std::vector<double> values) {
  auto table = std::make_shared<const std::vector<double>>(std::move(values));
  return [table](std::mt19937&, size_t, int64_t index) {
    return table->at(static_cast<size_t>(index));
  };
}

/// Uniform on a grid: multiples of `step` in [lo, hi].
inline InputGen GridValues(double lo, double hi, double step) {
  return [lo, hi, step](std::mt19937& rng, size_t, int64_t) {
    const int64_t n = static_cast<int64_t>(std::floor((hi - lo) / step));
    return lo + step * static_cast<double>(std::uniform_int_distribution<int64_t>(0, n)(rng));
  };
}

/// Layout of a scored box row.
struct BoxRowLayout {
  int64_t width = 6;
  int64_t coord_start = 2;
  int64_t score_index = 1;  ///< -1: no score column
  int64_t id_index = 0;     ///< -1: no class column
  bool center = false;      ///< (x, y, w, h) instead of (x1, y1, x2, y2)
};

/// `count` rows of boxes in clusters (so that many overlap), coordinates on a 1/8 grid (exact
/// in float, so IoUs are exact quotients), a few boxes reaching left of x = 0, scores drawn
/// from a list with ties, zeros and negatives, class ids in [0, classes).
inline std::vector<double> ScoredBoxes(int64_t count, const BoxRowLayout& layout, uint32_t seed,
                                       int64_t classes = 3) {
  std::mt19937 rng(seed);
  const double centers[][2] = {{4.0, 4.0}, {12.0, 6.0}, {8.0, 12.5}, {1.0, 9.0}};
  const double scores[] = {0.95, 0.9, 0.9,  0.8, 0.75, 0.6,  0.6, 0.6,
                           0.5,  0.4, 0.25, 0.1, 0.0,  -0.3, 0.9, 0.5};
  auto pick = [&](int64_t n) { return std::uniform_int_distribution<int64_t>(0, n - 1)(rng); };
  std::vector<double> rows(static_cast<size_t>(count * layout.width), 7.5);
  for (int64_t i = 0; i < count; ++i) {
    double* r = rows.data() + i * layout.width;
    const double* c = centers[pick(4)];
    const double cx = c[0] + 0.5 * static_cast<double>(pick(7) - 3);
    const double cy = c[1] + 0.5 * static_cast<double>(pick(7) - 3);
    const double w = 2.0 + 0.25 * static_cast<double>(pick(13));
    const double h = 2.0 + 0.25 * static_cast<double>(pick(13));
    double* box = r + layout.coord_start;
    if (layout.center) {
      box[0] = cx, box[1] = cy, box[2] = w, box[3] = h;
    } else {
      box[0] = cx - w / 2, box[1] = cy - h / 2, box[2] = cx + w / 2, box[3] = cy + h / 2;
    }
    const double score = scores[pick(16)];
    if (layout.score_index >= 0) r[layout.score_index] = score;
    if (layout.id_index >= 0) r[layout.id_index] = static_cast<double>(pick(classes));
  }
  return rows;
}

/// `count` ROIs [batch_index, x1, y1, x2, y2] in image coordinates over an image of
/// (width, height) pixels: most inside, some partly or wholly outside, some tiny; the batch
/// index cycles through [0, batch) and every fifth ROI (when `invalid`) points at image -1.
inline std::vector<double> Rois(int64_t count, int64_t batch, double width, double height,
                                uint32_t seed, bool invalid = true) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> rois(static_cast<size_t>(count * 5));
  for (int64_t i = 0; i < count; ++i) {
    double* r = rois.data() + i * 5;
    r[0] = invalid && i % 5 == 4 ? -1.0 : static_cast<double>(i % batch);
    const double x1 = -0.25 * width + 1.1 * width * u(rng);
    const double y1 = -0.25 * height + 1.1 * height * u(rng);
    const double w = i % 7 == 3 ? 0.3 * u(rng) : 0.1 * width + 0.6 * width * u(rng);
    const double h = i % 7 == 3 ? 0.3 * u(rng) : 0.1 * height + 0.6 * height * u(rng);
    r[1] = x1, r[2] = y1, r[3] = x1 + w, r[4] = y1 + h;
  }
  return rois;
}

}  // namespace conformance
}  // namespace hybridnet
