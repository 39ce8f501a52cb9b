// SSD's MultiBox ops of MXNet 1.9.1 (src/operator/contrib/multibox_*.cc, CPU kernels),
// float32 and float64, with MXNet's arithmetic (float where MXNet computes in float):
//  * _contrib_MultiBoxPrior: anchors (1, h * w * (num_sizes + num_ratios - 1), 4) in corner
//    format, per position first every size with ratios[0], then sizes[0] with each other ratio;
//    steps <= 0 mean 1 / h and 1 / w.
//  * _contrib_MultiBoxDetection: per anchor the best non-background class (class 0 is the
//    background: MXNet's CPU kernel ignores background_id), its score, the decoded box; rows
//    below threshold are dropped, the rest are compacted in anchor order, then (when
//    0 < nms_threshold <= 1) stable-sorted by score and suppressed greedily (IoU >=
//    nms_threshold, per class unless force_suppress). As in MXNet, a suppressed or beyond-nms_topk
//    row keeps its score and box and only gets class id -1; unused rows are all -1.
//  * _contrib_MultiBoxTarget: SSD training targets (inference of a training op, as MXNet runs
//    it): bipartite best matches first, then matches above overlap_threshold, optional hard
//    negative mining by background probability.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "hybridnet/op.h"
#include "ops/detection/detection_ops.h"
#include "ops/vision/vision_common-inl.h"

namespace hybridnet {
namespace {

using internal::AssignShape;
using internal::RealType;
using internal::SwitchRealDType;

std::string FloatsText(const std::vector<float>& v) { return internal::ValueText(v); }

// ---- _contrib_MultiBoxPrior -------------------------------------------------------------------

struct MultiBoxPriorParam {
  std::vector<float> sizes{1.f};
  std::vector<float> ratios{1.f};
  bool clip = false;
  std::vector<float> steps{-1.f, -1.f};
  std::vector<float> offsets{0.5f, 0.5f};
  static void Declare(ParamDeclarer<MultiBoxPriorParam>* d) {
    d->Field("sizes", &MultiBoxPriorParam::sizes)
        .Default({1.f})
        .Describe("Anchor sizes, as fractions of the image.");
    d->Field("ratios", &MultiBoxPriorParam::ratios)
        .Default({1.f})
        .Describe("Anchor aspect ratios (width / height).");
    d->Field("clip", &MultiBoxPriorParam::clip)
        .Default(false)
        .Describe("Clip the anchors to [0, 1].");
    d->Field("steps", &MultiBoxPriorParam::steps)
        .Default({-1.f, -1.f})
        .Describe("Distance between anchor centers (step_y, step_x); <= 0 means 1 / size.");
    d->Field("offsets", &MultiBoxPriorParam::offsets)
        .Default({0.5f, 0.5f})
        .Describe("Anchor center offsets (y, x) within a cell, in [0, 1].");
  }
};

void MultiBoxPriorInit(MultiBoxPriorParam* p) {
  HN_CHECK(!p->sizes.empty(), kInvalidArgument) << "sizes must not be empty";
  HN_CHECK(!p->ratios.empty(), kInvalidArgument) << "ratios must not be empty";
  HN_CHECK(p->steps.size() == 2, kInvalidArgument)
      << "steps must be (step_y, step_x), got " << FloatsText(p->steps);
  HN_CHECK(p->offsets.size() == 2, kInvalidArgument)
      << "offsets must be (offset_y, offset_x), got " << FloatsText(p->offsets);
  for (float o : p->offsets)
    HN_CHECK(o >= 0.f && o <= 1.f, kInvalidArgument)
        << "offsets must lie in [0, 1], got " << FloatsText(p->offsets);
  HN_CHECK(p->steps[0] * p->steps[1] >= 0, kInvalidArgument)
      << "steps " << FloatsText(p->steps) << ": give both step_y and step_x, or neither";
}

bool MultiBoxPriorShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const auto& p = attrs.Param<MultiBoxPriorParam>();
  const Shape& d = (*in)[0];
  if (d.ndim() == 0) return false;
  HN_CHECK(d.ndim() >= 4, kShapeError)
      << DescribeNode(attrs) << ": data should be a feature map (batch, channel, height, width), "
      << "got " << d;
  const int64_t per_cell = static_cast<int64_t>(p.sizes.size() + p.ratios.size() - 1);
  AssignShape(attrs, out, 0, Shape{1, d[2] * d[3] * per_cell, 4}, "output");
  return d.IsKnown();
}

template <typename T>
void MultiBoxPriorKernel(const MultiBoxPriorParam& p, int in_height, int in_width, T* out) {
  float step_y = p.steps[0], step_x = p.steps[1];
  if (step_y <= 0 || step_x <= 0) {
    step_y = 1.f / static_cast<float>(in_height);
    step_x = 1.f / static_cast<float>(in_width);
  }
  const float hw = static_cast<float>(in_height), ww = static_cast<float>(in_width);
  auto emit = [&](float cx, float cy, float size, float ratio) {
    const float w = size * hw / ww * ratio / 2;
    const float h = size / ratio / 2;
    out[0] = static_cast<T>(cx - w);
    out[1] = static_cast<T>(cy - h);
    out[2] = static_cast<T>(cx + w);
    out[3] = static_cast<T>(cy + h);
    if (p.clip)
      for (int k = 0; k < 4; ++k) out[k] = std::min(std::max(out[k], T(0)), T(1));
    out += 4;
  };
  const float first_ratio = std::sqrt(p.ratios[0]);
  for (int r = 0; r < in_height; ++r) {
    const float cy = (static_cast<float>(r) + p.offsets[0]) * step_y;
    for (int c = 0; c < in_width; ++c) {
      const float cx = (static_cast<float>(c) + p.offsets[1]) * step_x;
      for (float size : p.sizes) emit(cx, cy, size, first_ratio);
      for (size_t j = 1; j < p.ratios.size(); ++j) emit(cx, cy, p.sizes[0], std::sqrt(p.ratios[j]));
    }
  }
}

void MultiBoxPriorCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                          const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<MultiBoxPriorParam>();
  const int h = static_cast<int>(in[0].shape[2]), w = static_cast<int>(in[0].shape[3]);
  SwitchRealDType(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    MultiBoxPriorKernel<T>(p, h, w, out[0].ptr<T>());
  });
}

// ---- _contrib_MultiBoxDetection ---------------------------------------------------------------

struct MultiBoxDetectionParam {
  bool clip = true;
  float threshold = 0.01f;
  int background_id = 0;
  float nms_threshold = 0.5f;
  bool force_suppress = false;
  std::vector<float> variances{0.1f, 0.1f, 0.2f, 0.2f};
  int nms_topk = -1;
  static void Declare(ParamDeclarer<MultiBoxDetectionParam>* d) {
    d->Field("clip", &MultiBoxDetectionParam::clip)
        .Default(true)
        .Describe("Clip the decoded boxes to [0, 1].");
    d->Field("threshold", &MultiBoxDetectionParam::threshold)
        .Default(0.01f)
        .Describe("Detections whose best class score is below this are dropped.");
    d->Field("background_id", &MultiBoxDetectionParam::background_id)
        .Default(0)
        .Describe(
            "Background class id (accepted; MXNet's CPU kernel always treats class 0 as "
            "the background, and so does this one).");
    d->Field("nms_threshold", &MultiBoxDetectionParam::nms_threshold)
        .Default(0.5f)
        .Describe(
            "IoU at or above which a lower-scoring detection is suppressed; outside "
            "(0, 1] no sorting and no suppression happen.");
    d->Field("force_suppress", &MultiBoxDetectionParam::force_suppress)
        .Default(false)
        .Describe("Suppress across classes.");
    d->Field("variances", &MultiBoxDetectionParam::variances)
        .Default({0.1f, 0.1f, 0.2f, 0.2f})
        .Describe("Scales of the (x, y, w, h) offsets.");
    d->Field("nms_topk", &MultiBoxDetectionParam::nms_topk)
        .Default(-1)
        .Describe("Keep only this many best detections before suppression, -1 keeps all.");
  }
};

void MultiBoxDetectionInit(MultiBoxDetectionParam* p) {
  HN_CHECK(p->variances.size() == 4, kInvalidArgument)
      << "variances must have 4 values, got " << FloatsText(p->variances);
}

bool MultiBoxDetectionShape(const NodeAttrs& attrs, std::vector<Shape>* in,
                            std::vector<Shape>* out) {
  const std::string node = DescribeNode(attrs);
  const Shape& c = (*in)[0];
  HN_CHECK(c.ndim() == 0 || c.ndim() == 3, kShapeError)
      << node << ": cls_prob should be (batch, num_classes, num_anchors), got " << c;
  HN_CHECK((*in)[1].ndim() == 0 || (*in)[1].ndim() == 2, kShapeError)
      << node << ": loc_pred should be (batch, num_anchors * 4), got " << (*in)[1];
  HN_CHECK((*in)[2].ndim() == 0 || (*in)[2].ndim() == 3, kShapeError)
      << node << ": anchor should be (1, num_anchors, 4), got " << (*in)[2];
  if (c.ndim() == 3) {
    AssignShape(attrs, in, 1, Shape{c[0], c[2] * 4},
                "input 'loc_pred' (cls_prob " + c.ToString() + ")");
    AssignShape(attrs, in, 2, Shape{1, c[2], 4}, "input 'anchor' (cls_prob " + c.ToString() + ")");
    AssignShape(attrs, out, 0, Shape{c[0], c[2], 6}, "output");
  } else if ((*in)[2].ndim() == 3) {
    AssignShape(attrs, in, 2, Shape{1, 0, 4}, "input 'anchor'");
  }
  return internal::AllKnown(*in, *out);
}

template <typename T>
void DecodeSSDBox(const T* anchor, const T* loc, bool clip, const std::vector<float>& v, T* out) {
  const T al = anchor[0], at = anchor[1], ar = anchor[2], ab = anchor[3];
  const T aw = ar - al, ah = ab - at;
  const T ax = (al + ar) / 2.f, ay = (at + ab) / 2.f;
  const T ox = loc[0] * v[0] * aw + ax;
  const T oy = loc[1] * v[1] * ah + ay;
  const T ow = std::exp(loc[2] * v[2]) * aw / 2;
  const T oh = std::exp(loc[3] * v[3]) * ah / 2;
  const T box[4] = {ox - ow, oy - oh, ox + ow, oy + oh};
  for (int k = 0; k < 4; ++k) out[k] = clip ? std::max(T(0), std::min(T(1), box[k])) : box[k];
}

template <typename T>
T SSDOverlap(const T* a, const T* b) {
  const T w = std::max(T(0), std::min(a[2], b[2]) - std::max(a[0], b[0]));
  const T h = std::max(T(0), std::min(a[3], b[3]) - std::max(a[1], b[1]));
  const T i = w * h;
  const T u = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - i;
  return u <= 0.f ? T(0) : i / u;
}

template <typename T>
void MultiBoxDetectionKernel(const MultiBoxDetectionParam& p, const T* cls_prob, const T* loc_pred,
                             const T* anchors, int64_t batch, int64_t num_classes,
                             int64_t num_anchors, T* out) {
  std::fill(out, out + batch * num_anchors * 6, T(-1));
  std::vector<T> rows(static_cast<size_t>(num_anchors * 6));
  std::vector<T> compact(static_cast<size_t>(num_anchors * 6));
  std::vector<int64_t> order;
  for (int64_t b = 0; b < batch; ++b) {
    const T* cls = cls_prob + b * num_classes * num_anchors;
    const T* loc = loc_pred + b * num_anchors * 4;
    T* o = out + b * num_anchors * 6;
    for (int64_t i = 0; i < num_anchors; ++i) {
      T score = -1;
      int64_t id = 0;
      for (int64_t j = 1; j < num_classes; ++j) {
        const T v = cls[j * num_anchors + i];
        if (v > score) {
          score = v;
          id = j;
        }
      }
      if (id > 0 && score < p.threshold) id = 0;
      T* row = rows.data() + i * 6;
      row[0] = static_cast<T>(id - 1);
      row[1] = score;
      DecodeSSDBox(anchors + i * 4, loc + i * 4, p.clip, p.variances, row + 2);
    }
    int64_t valid = 0;
    for (int64_t i = 0; i < num_anchors; ++i) {
      if (rows[static_cast<size_t>(i * 6)] >= 0) {
        std::copy(rows.begin() + i * 6, rows.begin() + i * 6 + 6, o + valid * 6);
        ++valid;
      }
    }
    if (valid < 1 || p.nms_threshold <= 0 || p.nms_threshold > 1) continue;
    std::copy(o, o + num_anchors * 6, compact.begin());
    order.resize(static_cast<size_t>(valid));
    for (int64_t i = 0; i < valid; ++i) order[static_cast<size_t>(i)] = i;
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t c) {
      return compact[static_cast<size_t>(a * 6 + 1)] > compact[static_cast<size_t>(c * 6 + 1)];
    });
    int64_t keep = valid;
    if (p.nms_topk > 0 && p.nms_topk < keep) {
      keep = p.nms_topk;
      for (int64_t i = keep; i < valid; ++i) o[i * 6] = -1;  // the rest of the row stays
    }
    for (int64_t i = 0; i < keep; ++i) {
      const int64_t src = order[static_cast<size_t>(i)];
      std::copy(compact.begin() + src * 6, compact.begin() + src * 6 + 6, o + i * 6);
    }
    for (int64_t i = 0; i < keep; ++i) {
      if (o[i * 6] < 0) continue;
      for (int64_t j = i + 1; j < keep; ++j) {
        if (o[j * 6] < 0) continue;
        if (p.force_suppress || o[i * 6] == o[j * 6]) {
          if (SSDOverlap(o + i * 6 + 2, o + j * 6 + 2) >= p.nms_threshold) o[j * 6] = -1;
        }
      }
    }
  }
}

void MultiBoxDetectionCompute(const OpContext&, const NodeAttrs& attrs,
                              const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<MultiBoxDetectionParam>();
  const Shape& c = in[0].shape;
  SwitchRealDType(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    MultiBoxDetectionKernel<T>(p, in[0].ptr<const T>(), in[1].ptr<const T>(), in[2].ptr<const T>(),
                               c[0], c[1], c[2], out[0].ptr<T>());
  });
}

// ---- _contrib_MultiBoxTarget ------------------------------------------------------------------

struct MultiBoxTargetParam {
  float overlap_threshold = 0.5f;
  float ignore_label = -1.f;
  float negative_mining_ratio = -1.f;
  float negative_mining_thresh = 0.5f;
  int minimum_negative_samples = 0;
  std::vector<float> variances{0.1f, 0.1f, 0.2f, 0.2f};
  static void Declare(ParamDeclarer<MultiBoxTargetParam>* d) {
    d->Field("overlap_threshold", &MultiBoxTargetParam::overlap_threshold)
        .Default(0.5f)
        .Describe("Anchors whose best IoU with a ground truth exceeds this are positives.");
    d->Field("ignore_label", &MultiBoxTargetParam::ignore_label)
        .Default(-1.f)
        .Describe("Class target of anchors that are neither positive nor negative.");
    d->Field("negative_mining_ratio", &MultiBoxTargetParam::negative_mining_ratio)
        .Default(-1.f)
        .Describe(
            "Negatives per positive for hard negative mining; <= 0 makes every other "
            "anchor a negative.");
    d->Field("negative_mining_thresh", &MultiBoxTargetParam::negative_mining_thresh)
        .Default(0.5f)
        .Describe("Only anchors whose best IoU is below this can be mined as negatives.");
    d->Field("minimum_negative_samples", &MultiBoxTargetParam::minimum_negative_samples)
        .Default(0)
        .Describe("Accepted; unused by MXNet's kernel.");
    d->Field("variances", &MultiBoxTargetParam::variances)
        .Default({0.1f, 0.1f, 0.2f, 0.2f})
        .Describe("Scales of the (x, y, w, h) targets.");
  }
};

void MultiBoxTargetInit(MultiBoxTargetParam* p) {
  HN_CHECK(p->variances.size() == 4, kInvalidArgument)
      << "variances must have 4 values, got " << FloatsText(p->variances);
}

bool MultiBoxTargetShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const std::string node = DescribeNode(attrs);
  const auto& p = attrs.Param<MultiBoxTargetParam>();
  const Shape& a = (*in)[0];
  const Shape& l = (*in)[1];
  const Shape& c = (*in)[2];
  HN_CHECK(a.ndim() == 0 || (a.ndim() == 3 && (a[0] == 1 || a[0] == 0) && (a[2] == 4 || a[2] == 0)),
           kShapeError)
      << node << ": anchor should be shared anchors (1, num_anchors, 4), got " << a;
  HN_CHECK(l.ndim() == 0 || (l.ndim() == 3 && (l[2] >= 5 || l[2] == 0)), kShapeError)
      << node << ": label should be (batch, num_labels, width >= 5), got " << l;
  HN_CHECK(c.ndim() == 0 || c.ndim() == 3, kShapeError)
      << node << ": cls_pred should be (batch, num_classes, num_anchors), got " << c;
  if (p.negative_mining_ratio > 0) {
    HN_CHECK(p.negative_mining_thresh > 0, kInvalidArgument)
        << node << ": negative_mining_thresh must be positive for negative mining, got "
        << p.negative_mining_thresh;
  }
  if (a.ndim() == 3) AssignShape(attrs, in, 0, Shape{1, 0, 4}, "input 'anchor'");
  if (c.ndim() == 3 && a.ndim() == 3) {
    AssignShape(attrs, in, 2, Shape{0, 0, a[1]}, "input 'cls_pred' (anchor " + a.ToString() + ")");
    AssignShape(attrs, in, 0, Shape{1, c[2], 4}, "input 'anchor' (cls_pred " + c.ToString() + ")");
  }
  if (l.ndim() == 3 && c.ndim() == 3)
    AssignShape(attrs, in, 2, Shape{l[0], 0, 0}, "input 'cls_pred' (label " + l.ToString() + ")");
  if (a.ndim() == 3 && l.ndim() == 3) {
    const int64_t n = a[1];
    AssignShape(attrs, out, 0, Shape{l[0], n * 4}, "output 0 (loc_target)");
    AssignShape(attrs, out, 1, Shape{l[0], n * 4}, "output 1 (loc_mask)");
    AssignShape(attrs, out, 2, Shape{l[0], n}, "output 2 (cls_target)");
  }
  return internal::AllKnown(*in, *out);
}

template <typename T>
void SSDLocTarget(const T* anchor, const T* gt, const std::vector<float>& v, T* dst) {
  const float al = static_cast<float>(anchor[0]), at = static_cast<float>(anchor[1]);
  const float ar = static_cast<float>(anchor[2]), ab = static_cast<float>(anchor[3]);
  const float aw = ar - al, ah = ab - at;
  const float ax = static_cast<float>((al + ar) * 0.5), ay = static_cast<float>((at + ab) * 0.5);
  const float gl = static_cast<float>(gt[0]), gtop = static_cast<float>(gt[1]);
  const float gr = static_cast<float>(gt[2]), gb = static_cast<float>(gt[3]);
  const float gw = gr - gl, gh = gb - gtop;
  const float gx = static_cast<float>((gl + gr) * 0.5), gy = static_cast<float>((gtop + gb) * 0.5);
  dst[0] = static_cast<T>((gx - ax) / aw / v[0]);
  dst[1] = static_cast<T>((gy - ay) / ah / v[1]);
  dst[2] = static_cast<T>(std::log(gw / aw) / v[2]);
  dst[3] = static_cast<T>(std::log(gh / ah) / v[3]);
}

template <typename T>
void MultiBoxTargetKernel(const MultiBoxTargetParam& p, const T* anchors, const T* labels,
                          const T* cls_preds, int64_t batch, int64_t num_anchors,
                          int64_t num_labels, int64_t label_width, int64_t num_classes,
                          T* loc_target, T* loc_mask, T* cls_target) {
  std::fill(loc_target, loc_target + batch * num_anchors * 4, T(0));
  std::fill(loc_mask, loc_mask + batch * num_anchors * 4, T(0));
  std::fill(cls_target, cls_target + batch * num_anchors, static_cast<T>(p.ignore_label));
  for (int64_t b = 0; b < batch; ++b) {
    const T* label = labels + b * num_labels * label_width;
    // Labels end at the first row whose class is -1 (padding).
    int64_t num_gt = 0;
    while (num_gt < num_labels && static_cast<float>(label[num_gt * label_width]) != -1.0f)
      ++num_gt;
    if (num_gt == 0) continue;
    // IoU of anchor j and ground truth k in T, as MXNet's temp_space holds it, then as float.
    // Computed when needed: a table would hold anchors x labels values.
    auto iou = [&](int64_t j, int64_t k) {
      const T* a = anchors + j * 4;
      const T* g = label + k * label_width + 1;
      const T inter = std::max(T(0), std::min(a[2], g[2]) - std::max(a[0], g[0])) *
                      std::max(T(0), std::min(a[3], g[3]) - std::max(a[1], g[1]));
      const T uni = (a[2] - a[0]) * (a[3] - a[1]) + (g[2] - g[0]) * (g[3] - g[1]) - inter;
      return static_cast<float>(uni == T(0) ? T(0) : inter / uni);
    };
    std::vector<char> gt_matched(static_cast<size_t>(num_gt), 0);
    std::vector<std::pair<float, int64_t>> best(static_cast<size_t>(num_anchors), {-1.f, -1});
    std::vector<int> flag(static_cast<size_t>(num_anchors), -1);  // 1 positive, 0 negative
    int64_t num_positive = 0;
    // Each ground truth takes its best free anchor, best pairs first.
    while (std::find(gt_matched.begin(), gt_matched.end(), 0) != gt_matched.end()) {
      int64_t best_anchor = -1, best_gt = -1;
      float max_overlap = 1e-6f;
      for (int64_t j = 0; j < num_anchors; ++j) {
        if (flag[static_cast<size_t>(j)] == 1) continue;
        for (int64_t k = 0; k < num_gt; ++k) {
          if (gt_matched[static_cast<size_t>(k)]) continue;
          if (iou(j, k) > max_overlap) {
            best_anchor = j;
            best_gt = k;
            max_overlap = iou(j, k);
          }
        }
      }
      if (best_anchor == -1) break;
      best[static_cast<size_t>(best_anchor)] = {max_overlap, best_gt};
      ++num_positive;
      gt_matched[static_cast<size_t>(best_gt)] = 1;
      flag[static_cast<size_t>(best_anchor)] = 1;
    }
    auto best_gt_of = [&](int64_t j) {
      std::pair<float, int64_t> m{-1.f, -1};
      for (int64_t k = 0; k < num_gt; ++k)
        if (iou(j, k) > m.first) m = {iou(j, k), k};
      return m;
    };
    if (p.overlap_threshold > 0) {
      for (int64_t j = 0; j < num_anchors; ++j) {
        if (flag[static_cast<size_t>(j)] == 1) continue;
        const auto m = best_gt_of(j);
        if (m.second == -1) continue;
        best[static_cast<size_t>(j)] = m;
        if (m.first > p.overlap_threshold) {
          ++num_positive;
          gt_matched[static_cast<size_t>(m.second)] = 1;
          flag[static_cast<size_t>(j)] = 1;
        }
      }
    }
    if (p.negative_mining_ratio > 0) {
      const T* cls = cls_preds + b * num_classes * num_anchors;
      int64_t num_negative =
          static_cast<int64_t>(static_cast<float>(num_positive) * p.negative_mining_ratio);
      num_negative = std::min(num_negative, num_anchors - num_positive);
      if (num_negative > 0) {
        std::vector<std::pair<float, int64_t>> candidates;  // (-background probability, anchor)
        for (int64_t j = 0; j < num_anchors; ++j) {
          if (flag[static_cast<size_t>(j)] == 1) continue;
          if (best[static_cast<size_t>(j)].first < 0) {
            const auto m = best_gt_of(j);
            if (m.second != -1) best[static_cast<size_t>(j)] = m;
          }
          if (best[static_cast<size_t>(j)].first < p.negative_mining_thresh &&
              flag[static_cast<size_t>(j)] == -1) {
            T max_val = cls[j];
            for (int64_t k = 1; k < num_classes; ++k)
              max_val = std::max(max_val, cls[j + num_anchors * k]);
            T sum = 0;
            for (int64_t k = 0; k < num_classes; ++k)
              sum += std::exp(cls[j + num_anchors * k] - max_val);
            const T prob = std::exp(cls[j] - max_val) / sum;
            candidates.emplace_back(-static_cast<float>(prob), j);
          }
        }
        std::stable_sort(candidates.begin(), candidates.end(), [](const auto& x, const auto& y) {
          return internal::SortKey(x.first) > internal::SortKey(y.first);
        });
        // MXNet aborts when fewer candidates than num_negative remain; all of them are taken.
        const size_t take = std::min(candidates.size(), static_cast<size_t>(num_negative));
        for (size_t i = 0; i < take; ++i) flag[static_cast<size_t>(candidates[i].second)] = 0;
      }
    } else {
      for (int& f : flag)
        if (f != 1) f = 0;
    }
    T* lt = loc_target + b * num_anchors * 4;
    T* lm = loc_mask + b * num_anchors * 4;
    T* ct = cls_target + b * num_anchors;
    for (int64_t i = 0; i < num_anchors; ++i) {
      const int f = flag[static_cast<size_t>(i)];
      if (f == 1) {
        const T* g = label + label_width * best[static_cast<size_t>(i)].second;
        ct[i] = g[0] + 1;  // class 0 is the background
        std::fill(lm + i * 4, lm + i * 4 + 4, T(1));
        SSDLocTarget(anchors + i * 4, g + 1, p.variances, lt + i * 4);
      } else if (f == 0) {
        ct[i] = 0;
      }
    }
  }
}

void MultiBoxTargetCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                           const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<MultiBoxTargetParam>();
  const Shape& l = in[1].shape;
  SwitchRealDType(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    MultiBoxTargetKernel<T>(p, in[0].ptr<const T>(), in[1].ptr<const T>(), in[2].ptr<const T>(),
                            l[0], in[0].shape[1], l[1], l[2], in[2].shape[1], out[0].ptr<T>(),
                            out[1].ptr<T>(), out[2].ptr<T>());
  });
}

}  // namespace

void RegisterMultiBoxOps(OpRegistry* r) {
  r->Register("_contrib_MultiBoxPrior")
      .Describe(
          "SSD anchor boxes (1, h * w * (num_sizes + num_ratios - 1), 4), corner format in "
          "[0, 1] image coordinates, for a feature map (batch, channel, h, w).")
      .AddAlias("_npx_multibox_prior")
      .SetParam<MultiBoxPriorParam>(MultiBoxPriorInit)
      .SetInputNames({"data"})
      .SetInferShape(MultiBoxPriorShape)
      .SetInferType(RealType)
      .SetCompute(MultiBoxPriorCompute);

  r->Register("_contrib_MultiBoxDetection")
      .Describe(
          "SSD detections (batch, num_anchors, 6) = [class id, score, xmin, ymin, xmax, "
          "ymax] from class probabilities, location offsets and anchors, with per-class "
          "non-maximum suppression; unused and suppressed rows have class id -1.")
      .AddAlias("_npx_multibox_detection")
      .SetParam<MultiBoxDetectionParam>(MultiBoxDetectionInit)
      .SetInputNames({"cls_prob", "loc_pred", "anchor"})
      .SetInferShape(MultiBoxDetectionShape)
      .SetInferType(RealType)
      .SetCompute(MultiBoxDetectionCompute);

  r->Register("_contrib_MultiBoxTarget")
      .Describe(
          "SSD training targets: per anchor the location target and mask (batch, "
          "num_anchors * 4) and the class target (batch, num_anchors) from ground-truth "
          "labels [class, xmin, ymin, xmax, ymax, ...] padded with -1 rows.")
      .AddAlias("_npx_multibox_target")
      .SetParam<MultiBoxTargetParam>(MultiBoxTargetInit)
      .SetInputNames({"anchor", "label", "cls_pred"})
      .SetNumOutputs(3)
      .SetInferShape(MultiBoxTargetShape)
      .SetInferType(RealType)
      .SetCompute(MultiBoxTargetCompute);
}

}  // namespace hybridnet
