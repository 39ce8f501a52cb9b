// Box utilities of MXNet 1.9.1 (src/operator/contrib/bounding_box-inl.h, CPU kernels):
// _contrib_box_nms, _contrib_box_iou, _contrib_bipartite_matching, _contrib_box_encode and
// _contrib_box_decode, float32 and float64.
//
// box_nms follows MXNet's CPU kernel step by step, because its output order and padding are
// part of what models consume:
//  * candidates are boxes with score > valid_thresh (and, with id_index >= 0, class id !=
//    background_id); a NaN score is never a candidate;
//  * candidates are stable-sorted by descending score per batch, so equal scores keep their
//    input order; only the first topk of each batch take part (topk = 0: the input is copied
//    unchanged, no format conversion);
//  * greedy suppression: a box is removed when its IoU with a kept, higher-ranked box is
//    strictly greater than overlap_thresh (same class unless force_suppress or id_index < 0,
//    class ids compared after truncation to int); IoU is computed in the input dtype;
//  * survivors are written to the front of each batch in rank order, the rest is -1; with no
//    candidate in the whole input, everything is -1;
//  * in_format != out_format converts every output row whose first coordinate is >= 0 (MXNet
//    skips rows whose first coordinate is negative, real boxes included).
// bipartite_matching keeps MXNet's greedy order (stable sort, ties by position) and its topk
// count: the loop stops after topk + 1 matches.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "ops/detection/detection_ops.h"
#include "ops/vision/vision_common-inl.h"

namespace hybridnet {
namespace {

using internal::AssignShape;
using internal::BoxFormat;
using internal::BoxFormatNames;
using internal::RealType;
using internal::SwitchRealDType;

// ---- geometry in the input dtype (MXNet's Intersect / BoxArea) -------------------------------

// Overlap of two boxes along one axis: a[0], a[2] are (min, max) or (center, size).
template <typename T>
T Intersect1D(const T* a, const T* b, BoxFormat format) {
  T w;
  if (format == BoxFormat::kCorner) {
    const T left = a[0] > b[0] ? a[0] : b[0];
    const T right = a[2] < b[2] ? a[2] : b[2];
    w = right - left;
  } else {
    const T aw = a[2] / 2, bw = b[2] / 2;
    const T al = a[0] - aw, ar = a[0] + aw, bl = b[0] - bw, br = b[0] + bw;
    const T left = bl > al ? bl : al;
    const T right = br < ar ? br : ar;
    w = right - left;
  }
  return w > 0 ? w : T(0);
}

template <typename T>
T BoxArea(const T* box, BoxFormat format) {
  const T width = format == BoxFormat::kCorner ? box[2] - box[0] : box[2];
  const T height = format == BoxFormat::kCorner ? box[3] - box[1] : box[3];
  return (width < 0 || height < 0) ? T(0) : width * height;
}

// ---- _contrib_box_nms -------------------------------------------------------------------------

struct BoxNMSParam {
  float overlap_thresh = 0.5f;
  float valid_thresh = 0.f;
  int topk = -1;
  int coord_start = 2;
  int score_index = 1;
  int id_index = -1;
  int background_id = -1;
  bool force_suppress = false;
  BoxFormat in_format = BoxFormat::kCorner;
  BoxFormat out_format = BoxFormat::kCorner;
  static void Declare(ParamDeclarer<BoxNMSParam>* d) {
    d->Field("overlap_thresh", &BoxNMSParam::overlap_thresh)
        .Default(0.5f)
        .Describe("A box is suppressed when its IoU with a kept higher-scoring box exceeds this.");
    d->Field("valid_thresh", &BoxNMSParam::valid_thresh)
        .Default(0.f)
        .Describe("Only boxes with a score strictly above this take part.");
    d->Field("topk", &BoxNMSParam::topk)
        .Default(-1)
        .Describe(
            "Keep at most this many best-scoring candidates per batch before "
            "suppression; -1 keeps all.");
    d->Field("coord_start", &BoxNMSParam::coord_start)
        .Default(2)
        .Describe("Column of the first of the four box coordinates.");
    d->Field("score_index", &BoxNMSParam::score_index).Default(1).Describe("Column of the score.");
    d->Field("id_index", &BoxNMSParam::id_index)
        .Default(-1)
        .Describe("Column of the class id, -1 when the rows carry none.");
    d->Field("background_id", &BoxNMSParam::background_id)
        .Default(-1)
        .Describe("Class id whose boxes are dropped (only with id_index >= 0).");
    d->Field("force_suppress", &BoxNMSParam::force_suppress)
        .Default(false)
        .Describe(
            "Suppress across classes; otherwise only boxes of one class suppress each "
            "other (when id_index >= 0).");
    d->Field("in_format", &BoxNMSParam::in_format, BoxFormatNames())
        .Default(BoxFormat::kCorner)
        .Describe("Input boxes: corner = (xmin, ymin, xmax, ymax), center = (x, y, w, h).");
    d->Field("out_format", &BoxNMSParam::out_format, BoxFormatNames())
        .Default(BoxFormat::kCorner)
        .Describe("Output box encoding, corner or center.");
  }
};

bool BoxNMSShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const auto& p = attrs.Param<BoxNMSParam>();
  // The output has the input's shape; either one gives the other.
  AssignShape(attrs, in, 0, (*out)[0], "input 'data'");
  const Shape& data = (*in)[0];
  if (data.ndim() == 0) return false;
  const std::string node = DescribeNode(attrs);
  HN_CHECK(data.ndim() >= 2, kShapeError)
      << node << ": data should be (..., num_boxes, box_width), at least 2-D, got " << data;
  const int64_t width = data[data.ndim() - 1];
  if (width != 0) {
    const int64_t expected = p.id_index >= 0 ? 6 : 5;
    HN_CHECK(width >= expected, kShapeError)
        << node << ": box_width " << width << " is too small: " << expected
        << " columns are needed (score, 4 coordinates" << (p.id_index >= 0 ? ", class id)" : ")");
    const int64_t c0 = p.coord_start, c3 = p.coord_start + 3;
    HN_CHECK(p.score_index >= 0 && p.score_index < width, kInvalidArgument)
        << node << ": score_index " << p.score_index << " is outside [0, " << width << ")";
    HN_CHECK(p.score_index < c0 || p.score_index > c3, kInvalidArgument)
        << node << ": score_index " << p.score_index << " overlaps the coordinates [" << c0 << ", "
        << c3 << "]";
    HN_CHECK(c0 >= 0 && c3 < width, kInvalidArgument)
        << node << ": coordinates [" << c0 << ", " << c3 << "] (coord_start " << p.coord_start
        << ") are outside [0, " << width << ")";
    if (p.id_index >= 0) {
      HN_CHECK(p.id_index < width, kInvalidArgument)
          << node << ": id_index " << p.id_index << " is outside [0, " << width << ")";
      HN_CHECK(p.id_index < c0 || p.id_index > c3, kInvalidArgument)
          << node << ": id_index " << p.id_index << " overlaps the coordinates [" << c0 << ", "
          << c3 << "]";
      HN_CHECK(p.id_index != p.score_index, kInvalidArgument)
          << node << ": id_index and score_index are both " << p.id_index;
    }
  }
  AssignShape(attrs, out, 0, data, "output");
  return data.IsKnown();
}

template <typename T>
void ConvertBoxFormat(T* box, BoxFormat to) {
  if (box[0] < 0) return;  // MXNet leaves such rows (its -1 padding, and more) unconverted
  if (to == BoxFormat::kCenter) {
    const T left = box[0], top = box[1], right = box[2], bottom = box[3];
    box[0] = (left + right) / 2;
    box[1] = (top + bottom) / 2;
    box[2] = right - left;
    box[3] = bottom - top;
  } else {
    const T x = box[0], y = box[1], half_w = box[2] / 2, half_h = box[3] / 2;
    box[0] = x - half_w;
    box[1] = y - half_h;
    box[2] = x + half_w;
    box[3] = y + half_h;
  }
}

template <typename T>
void BoxNMSKernel(const BoxNMSParam& p, const Shape& shape, const T* x, T* y) {
  const size_t nd = shape.ndim();
  const int64_t num_elem = shape[nd - 2], width = shape[nd - 1];
  const int64_t num_batch = shape.Size() / std::max<int64_t>(num_elem * width, 1);
  const int64_t total = shape.Size();
  const int64_t topk = p.topk < 0 ? num_elem : std::min<int64_t>(num_elem, p.topk);
  if (topk < 1) {
    std::copy(x, x + total, y);
    return;
  }
  std::fill(y, y + total, T(-1));
  const T valid_thresh = static_cast<T>(p.valid_thresh);
  const T background = static_cast<T>(p.background_id);
  std::vector<int64_t> order;
  std::vector<T> areas(static_cast<size_t>(num_elem));
  for (int64_t b = 0; b < num_batch; ++b) {
    const T* xb = x + b * num_elem * width;
    order.clear();
    for (int64_t i = 0; i < num_elem; ++i) {
      const T* row = xb + i * width;
      const bool valid =
          row[p.score_index] > valid_thresh && (p.id_index < 0 || row[p.id_index] != background);
      if (valid) order.push_back(i);
    }
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t c) {
      return xb[a * width + p.score_index] > xb[c * width + p.score_index];
    });
    const size_t k = std::min<size_t>(order.size(), static_cast<size_t>(topk));
    for (size_t r = 0; r < k; ++r)
      areas[static_cast<size_t>(order[r])] =
          BoxArea(xb + order[r] * width + p.coord_start, p.in_format);
    std::vector<bool> suppressed(k, false);
    for (size_t r = 0; r < k; ++r) {
      if (suppressed[r]) continue;
      const T* ref = xb + order[r] * width;
      for (size_t q = r + 1; q < k; ++q) {
        if (suppressed[q]) continue;
        const T* cand = xb + order[q] * width;
        if (!p.force_suppress && p.id_index >= 0 &&
            static_cast<int64_t>(ref[p.id_index]) != static_cast<int64_t>(cand[p.id_index])) {
          continue;
        }
        const T* rb = ref + p.coord_start;
        const T* cb = cand + p.coord_start;
        T inter = Intersect1D(rb, cb, p.in_format);
        inter *= Intersect1D(rb + 1, cb + 1, p.in_format);
        const T iou = inter / (areas[static_cast<size_t>(order[r])] +
                               areas[static_cast<size_t>(order[q])] - inter);
        if (iou > p.overlap_thresh) suppressed[q] = true;
      }
    }
    T* yb = y + b * num_elem * width;
    int64_t count = 0;
    for (size_t r = 0; r < k; ++r) {
      if (suppressed[r]) continue;
      std::copy(xb + order[r] * width, xb + (order[r] + 1) * width, yb + count * width);
      ++count;
    }
  }
  if (p.in_format != p.out_format) {
    for (int64_t i = 0; i < total / width; ++i)
      ConvertBoxFormat(y + i * width + p.coord_start, p.out_format);
  }
}

void BoxNMSCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                   const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<BoxNMSParam>();
  SwitchRealDType(in[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    BoxNMSKernel<T>(p, in[0].shape, in[0].ptr<const T>(), out[0].ptr<T>());
  });
}

// ---- _contrib_box_iou -------------------------------------------------------------------------

struct BoxIoUParam {
  BoxFormat format = BoxFormat::kCorner;
  static void Declare(ParamDeclarer<BoxIoUParam>* d) {
    d->Field("format", &BoxIoUParam::format, BoxFormatNames())
        .Default(BoxFormat::kCorner)
        .Describe("Box encoding: corner = (xmin, ymin, xmax, ymax), center = (x, y, w, h).");
  }
};

bool BoxIoUShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const char* const names[] = {"lhs", "rhs"};
  for (size_t i = 0; i < 2; ++i) {
    const Shape& s = (*in)[i];
    if (s.ndim() == 0) continue;
    HN_CHECK(s.ndim() >= 2 && (s[s.ndim() - 1] == 4 || s[s.ndim() - 1] == 0), kShapeError)
        << DescribeNode(attrs) << ": " << names[i]
        << " should be boxes (..., 4), at least 2-D, got " << s;
    Shape box = s;
    box[box.ndim() - 1] = 4;
    AssignShape(attrs, in, i, box, std::string("input '") + names[i] + "'");
  }
  const Shape& l = (*in)[0];
  const Shape& r = (*in)[1];
  if (l.ndim() == 0 || r.ndim() == 0) return false;
  std::vector<int64_t> dims(l.begin(), l.end() - 1);
  dims.insert(dims.end(), r.begin(), r.end() - 1);
  AssignShape(attrs, out, 0, Shape(dims), "output");
  return internal::AllKnown(*in, *out);
}

template <typename T>
void BoxIoUKernel(BoxFormat format, const T* lhs, int64_t nl, const T* rhs, int64_t nr, T* y) {
  for (int64_t i = 0; i < nl; ++i) {
    const T* a = lhs + i * 4;
    const T area_a = BoxArea(a, format);
    for (int64_t j = 0; j < nr; ++j) {
      const T* b = rhs + j * 4;
      T inter = Intersect1D(a, b, format);
      inter *= Intersect1D(a + 1, b + 1, format);
      y[i * nr + j] = inter <= 0 ? T(0) : inter / (area_a + BoxArea(b, format) - inter);
    }
  }
}

void BoxIoUCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                   const std::vector<TBlob>& out) {
  const BoxFormat format = attrs.Param<BoxIoUParam>().format;
  SwitchRealDType(in[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    BoxIoUKernel<T>(format, in[0].ptr<const T>(), in[0].Size() / 4, in[1].ptr<const T>(),
                    in[1].Size() / 4, out[0].ptr<T>());
  });
}

// ---- _contrib_bipartite_matching --------------------------------------------------------------

struct BipartiteMatchingParam {
  bool is_ascend = false;
  float threshold = 0.f;
  int topk = -1;
  static void Declare(ParamDeclarer<BipartiteMatchingParam>* d) {
    d->Field("is_ascend", &BipartiteMatchingParam::is_ascend)
        .Default(false)
        .Describe("Match the lowest scores first (scores must then stay below threshold).");
    d->Field("threshold", &BipartiteMatchingParam::threshold)
        .Required()
        .Describe("Pairs scoring at or beyond this (below it when descending) are not matched.");
    d->Field("topk", &BipartiteMatchingParam::topk)
        .Default(-1)
        .Describe("Limit on the number of matches, -1 for none (MXNet stops after topk + 1).");
  }
};

bool BipartiteMatchingShape(const NodeAttrs& attrs, std::vector<Shape>* in,
                            std::vector<Shape>* out) {
  const Shape& d = (*in)[0];
  if (d.ndim() == 0) return false;
  HN_CHECK(d.ndim() >= 2, kShapeError)
      << DescribeNode(attrs) << ": data should be scores (..., rows, cols), at least 2-D, got "
      << d;
  Shape rows(std::vector<int64_t>(d.begin(), d.end() - 1));
  Shape cols = rows;
  cols[cols.ndim() - 1] = d[d.ndim() - 1];
  AssignShape(attrs, out, 0, rows, "output 0 (row matches)");
  AssignShape(attrs, out, 1, cols, "output 1 (column matches)");
  return d.IsKnown();
}

template <typename T>
void BipartiteMatchingKernel(const BipartiteMatchingParam& p, const T* scores, int64_t batch,
                             int64_t rows, int64_t cols, T* row_marker, T* col_marker) {
  const int64_t n = rows * cols;
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t b = 0; b < batch; ++b) {
    const T* s = scores + b * n;
    std::iota(order.begin(), order.end(), int64_t{0});
    const bool up = p.is_ascend;
    std::stable_sort(order.begin(), order.end(), [s, up](int64_t i, int64_t j) {
      const T a = internal::SortKey(s[i], up), c = internal::SortKey(s[j], up);
      return up ? a < c : a > c;
    });
    T* rm = row_marker + b * rows;
    T* cm = col_marker + b * cols;
    std::fill(rm, rm + rows, T(-1));
    std::fill(cm, cm + cols, T(-1));
    int64_t count = 0;
    for (int64_t idx : order) {
      const int64_t r = idx / cols, c = idx % cols;
      if (rm[r] != T(-1) || cm[c] != T(-1)) continue;
      const T v = s[idx];
      const bool good = p.is_ascend ? v < p.threshold : v > p.threshold;
      if (!good) break;  // the rest scores worse
      rm[r] = static_cast<T>(c);
      cm[c] = static_cast<T>(r);
      ++count;
      if (p.topk > 0 && count > p.topk) break;
    }
  }
}

void BipartiteMatchingCompute(const OpContext&, const NodeAttrs& attrs,
                              const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<BipartiteMatchingParam>();
  const Shape& d = in[0].shape;
  const int64_t rows = d[d.ndim() - 2], cols = d[d.ndim() - 1];
  SwitchRealDType(in[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    BipartiteMatchingKernel<T>(p, in[0].ptr<const T>(), d.Size() / (rows * cols), rows, cols,
                               out[0].ptr<T>(), out[1].ptr<T>());
  });
}

// ---- _contrib_box_encode ----------------------------------------------------------------------

const std::vector<std::string> kBoxEncodeInputs = {"samples", "matches", "anchors",
                                                   "refs",    "means",   "stds"};

bool BoxEncodeShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  auto input = [&](size_t i) { return "input '" + kBoxEncodeInputs[i] + "'"; };
  const char* const forms[] = {"(batch, N)", "(batch, N)", "(batch, N, 4) corner boxes",
                               "(batch, M, 4) corner boxes"};
  const size_t ranks[] = {2, 2, 3, 3};
  for (size_t i = 0; i < 4; ++i) {
    const Shape& s = (*in)[i];
    HN_CHECK(s.ndim() == 0 || s.ndim() == ranks[i], kShapeError)
        << DescribeNode(attrs) << ": " << kBoxEncodeInputs[i] << " should be " << forms[i]
        << ", got " << s;
  }
  for (size_t o = 0; o < 2; ++o) {
    HN_CHECK((*out)[o].ndim() == 0 || (*out)[o].ndim() == 3, kShapeError)
        << DescribeNode(attrs) << ": output " << o << " should be (batch, N, 4), got " << (*out)[o];
  }
  AssignShape(attrs, in, 4, Shape{4}, input(4));
  AssignShape(attrs, in, 5, Shape{4}, input(5));
  // (batch, N) comes from any of samples, matches, anchors and the two outputs.
  Shape boxes{0, 0, 4};
  AssignShape(attrs, in, 2, boxes, input(2));
  for (size_t i = 0; i < 2; ++i) {
    const Shape& s = (*in)[i];
    if (s.ndim() == 2) AssignShape(attrs, in, 2, Shape{s[0], s[1], 4}, input(2));
  }
  for (size_t o = 0; o < 2; ++o) AssignShape(attrs, in, 2, (*out)[o], input(2));
  const Shape a = (*in)[2];
  for (size_t i = 0; i < 2; ++i) AssignShape(attrs, in, i, Shape{a[0], a[1]}, input(i));
  AssignShape(attrs, in, 3, Shape{a[0], 0, 4}, input(3));
  for (size_t o = 0; o < 2; ++o) AssignShape(attrs, out, o, a, "output " + std::to_string(o));
  return internal::AllKnown(*in, *out);
}

template <typename T>
void BoxEncodeKernel(const T* samples, const T* matches, const T* anchors, const T* refs,
                     const T* means, const T* stds, int64_t batch, int64_t n, int64_t m, T* targets,
                     T* masks) {
  const T nan = std::numeric_limits<T>::quiet_NaN();
  for (int64_t i = 0; i < batch * n; ++i) {
    const int64_t b = i / n;
    const T valid = samples[i] > 0.5 ? T(1) : T(0);
    T* t = targets + i * 4;
    std::fill(masks + i * 4, masks + i * 4 + 4, valid);
    if (!(valid > T(0.5))) {
      std::fill(t, t + 4, T(0));
      continue;
    }
    // A positive sample whose match names no reference box: MXNet reads out of bounds; NaN here.
    const double match_value = static_cast<double>(matches[i]);
    if (!(match_value > -1.0 && match_value < static_cast<double>(m))) {
      std::fill(t, t + 4, nan);
      continue;
    }
    const T* ref = refs + (b * m + static_cast<int64_t>(match_value)) * 4;
    const T* anc = anchors + i * 4;
    const T ref_w = ref[2] - ref[0], ref_h = ref[3] - ref[1];
    const T ref_x = static_cast<T>(ref[0] + ref_w * 0.5);
    const T ref_y = static_cast<T>(ref[1] + ref_h * 0.5);
    const T a_w = anc[2] - anc[0], a_h = anc[3] - anc[1];
    const T a_x = static_cast<T>(anc[0] + a_w * 0.5);
    const T a_y = static_cast<T>(anc[1] + a_h * 0.5);
    t[0] = ((ref_x - a_x) / a_w - means[0]) / stds[0];
    t[1] = ((ref_y - a_y) / a_h - means[1]) / stds[1];
    t[2] = (std::log(ref_w / a_w) - means[2]) / stds[2];
    t[3] = (std::log(ref_h / a_h) - means[3]) / stds[3];
  }
}

void BoxEncodeCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                      const std::vector<TBlob>& out) {
  const Shape& a = in[2].shape;
  SwitchRealDType(in[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    BoxEncodeKernel<T>(in[0].ptr<const T>(), in[1].ptr<const T>(), in[2].ptr<const T>(),
                       in[3].ptr<const T>(), in[4].ptr<const T>(), in[5].ptr<const T>(), a[0], a[1],
                       in[3].shape[1], out[0].ptr<T>(), out[1].ptr<T>());
  });
}

// ---- _contrib_box_decode ----------------------------------------------------------------------

struct BoxDecodeParam {
  float std0 = 1.f, std1 = 1.f, std2 = 1.f, std3 = 1.f;
  float clip = -1.f;
  BoxFormat format = BoxFormat::kCenter;
  static void Declare(ParamDeclarer<BoxDecodeParam>* d) {
    d->Field("std0", &BoxDecodeParam::std0).Default(1.f).Describe("Scale of the x offset.");
    d->Field("std1", &BoxDecodeParam::std1).Default(1.f).Describe("Scale of the y offset.");
    d->Field("std2", &BoxDecodeParam::std2).Default(1.f).Describe("Scale of the log width.");
    d->Field("std3", &BoxDecodeParam::std3).Default(1.f).Describe("Scale of the log height.");
    d->Field("clip", &BoxDecodeParam::clip)
        .Default(-1.f)
        .Describe("When positive, the scaled log width and height are clipped to this.");
    d->Field("format", &BoxDecodeParam::format, BoxFormatNames())
        .Default(BoxFormat::kCenter)
        .Describe(
            "Encoding of the anchors: center = (x, y, w, h), corner = (xmin, ymin, "
            "xmax, ymax). The output is always corner.");
  }
};

bool BoxDecodeShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  AssignShape(attrs, in, 0, (*out)[0], "input 'data'");
  const Shape& d = (*in)[0];
  if (d.ndim() != 0) {
    HN_CHECK(d.ndim() == 3 && (d[2] == 4 || d[2] == 0), kShapeError)
        << DescribeNode(attrs) << ": data should be box offsets (batch, num_anchors, 4), got " << d;
    AssignShape(attrs, in, 0, Shape{0, 0, 4}, "input 'data'");
    AssignShape(attrs, out, 0, d, "output");
  }
  const Shape& a = (*in)[1];
  if (a.ndim() != 0) {
    HN_CHECK(a.ndim() >= 3 && (a[a.ndim() - 1] == 4 || a[a.ndim() - 1] == 0), kShapeError)
        << DescribeNode(attrs) << ": anchors should be (1, num_anchors, 4), got " << a;
    if (a.IsKnown() && d.IsKnown()) {
      HN_CHECK(a.Size() == d[1] * 4, kShapeError)
          << DescribeNode(attrs) << ": anchors " << a << " should hold the " << d[1]
          << " anchors of data " << d << " (" << d[1] * 4 << " values)";
    }
  } else if (d.ndim() == 3 && d[1] != 0) {
    AssignShape(attrs, in, 1, Shape{1, d[1], 4}, "input 'anchors'");
  }
  return internal::AllKnown(*in, *out);
}

template <typename T>
void BoxDecodeKernel(const BoxDecodeParam& p, const T* x, const T* anchors, int64_t batch,
                     int64_t n, T* y) {
  const T std0 = p.std0, std1 = p.std1, std2 = p.std2, std3 = p.std3, clip = p.clip;
  const bool has_clip = p.clip > 0;
  for (int64_t i = 0; i < batch * n; ++i) {
    const T* a = anchors + (i % n) * 4;
    T a_x = a[0], a_y = a[1], a_w = a[2], a_h = a[3];
    if (p.format == BoxFormat::kCorner) {
      a_w = a_w - a_x;
      a_h = a_h - a_y;
      a_x = static_cast<T>(a_x + a_w * 0.5);
      a_y = static_cast<T>(a_y + a_h * 0.5);
    }
    const T* d = x + i * 4;
    const T ox = d[0] * std0 * a_w + a_x;
    const T oy = d[1] * std1 * a_h + a_y;
    T dw = d[2] * std2, dh = d[3] * std3;
    if (has_clip) {
      dw = dw < clip ? dw : clip;
      dh = dh < clip ? dh : clip;
    }
    const T ow = static_cast<T>(std::exp(dw) * a_w * 0.5);
    const T oh = static_cast<T>(std::exp(dh) * a_h * 0.5);
    T* o = y + i * 4;
    o[0] = ox - ow;
    o[1] = oy - oh;
    o[2] = ox + ow;
    o[3] = oy + oh;
  }
}

void BoxDecodeCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                      const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<BoxDecodeParam>();
  SwitchRealDType(in[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    BoxDecodeKernel<T>(p, in[0].ptr<const T>(), in[1].ptr<const T>(), in[0].shape[0],
                       in[0].shape[1], out[0].ptr<T>());
  });
}

}  // namespace

void RegisterBoundingBoxOps(OpRegistry* r) {
  r->Register("_contrib_box_nms")
      .Describe(
          "Non-maximum suppression of scored boxes (rows of [.., score, .., x4, ..]) per "
          "batch: survivors sorted by descending score (ties keep input order), the rest "
          "of each batch filled with -1.")
      .AddAlias("_contrib_box_non_maximum_suppression")
      .SetParam<BoxNMSParam>()
      .SetInputNames({"data"})
      .SetNumTotalOutputs(2)  // + MXNet's hidden record of kept indices (for its backward)
      .SetInferShape(BoxNMSShape)
      .SetInferType(RealType)
      .SetCompute(BoxNMSCompute);

  r->Register("_contrib_box_iou")
      .Describe(
          "Intersection over union of every lhs box (..., 4) with every rhs box (..., 4); "
          "the output shape is lhs.shape[:-1] + rhs.shape[:-1].")
      .SetParam<BoxIoUParam>()
      .SetInputNames({"lhs", "rhs"})
      .SetInferShape(BoxIoUShape)
      .SetInferType(RealType)
      .SetCompute(BoxIoUCompute);

  r->Register("_contrib_bipartite_matching")
      .Describe(
          "Greedy bipartite matching of a score matrix (..., rows, cols): best pairs first; "
          "outputs the matched column of each row and the matched row of each column "
          "(-1 when unmatched).")
      .SetParam<BipartiteMatchingParam>()
      .SetInputNames({"data"})
      .SetNumOutputs(2)
      .SetInferShape(BipartiteMatchingShape)
      .SetInferType(RealType)
      .SetCompute(BipartiteMatchingCompute);

  r->Register("_contrib_box_encode")
      .Describe(
          "Regression targets (dx, dy, log dw, log dh), normalized by means and stds, of "
          "the reference boxes matched to each anchor (corner boxes), and their masks; "
          "samples <= 0.5 give zero targets and masks.")
      .SetInputNames(kBoxEncodeInputs)
      .SetNumOutputs(2)
      .SetInferShape(BoxEncodeShape)
      .SetInferType(RealType)
      .SetCompute(BoxEncodeCompute);

  r->Register("_contrib_box_decode")
      .Describe("Decodes regression offsets (batch, N, 4) against N anchors into corner boxes.")
      .SetParam<BoxDecodeParam>()
      .SetInputNames({"data", "anchors"})
      .SetInferShape(BoxDecodeShape)
      .SetInferType(RealType)
      .SetCompute(BoxDecodeCompute);
}

}  // namespace hybridnet
