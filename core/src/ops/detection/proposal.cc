// Region proposals of MXNet 1.9.1 (src/operator/contrib/proposal.cc, multi_proposal.cc, CPU),
// float32 as in MXNet. Per image:
//  1. anchors: for each ratio, for each scale, MXNet's rounded base-anchor transform of the
//     feature_stride x feature_stride box, shifted to every feature-map position; the score of
//     position (h, w), anchor a is cls_prob[b, A + a, h, w] (the foreground half);
//  2. decode bbox_pred (or add it, iou_loss) and clip to the image (im_info = height, width,
//     scale); positions beyond im_info / feature_stride get score -1;
//  3. boxes smaller than rpn_min_size * scale are grown by half that size on each side and get
//     score -1 (they stay candidates, ranked last);
//  4. stable sort by score (ties keep position order), keep rpn_pre_nms_top_n, greedy NMS
//     (IoU > threshold, areas with MXNet's +1 pixel convention) up to rpn_post_nms_top_n;
//  5. rpn_post_nms_top_n rows [image, x1, y1, x2, y2] (+ score): when fewer boxes survive, MXNet
//     repeats the kept ones cyclically.
// _contrib_Proposal takes one image; _contrib_MultiProposal stacks the rows of every image.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "ops/detection/detection_ops.h"
#include "ops/vision/vision_common-inl.h"

namespace hybridnet {
namespace {

using internal::AssignShape;

struct ProposalParam {
  int rpn_pre_nms_top_n = 6000;
  int rpn_post_nms_top_n = 300;
  float threshold = 0.7f;
  int rpn_min_size = 16;
  std::vector<float> scales{4.f, 8.f, 16.f, 32.f};
  std::vector<float> ratios{0.5f, 1.f, 2.f};
  int feature_stride = 16;
  bool output_score = false;
  bool iou_loss = false;
  static void Declare(ParamDeclarer<ProposalParam>* d) {
    d->Field("rpn_pre_nms_top_n", &ProposalParam::rpn_pre_nms_top_n)
        .Default(6000)
        .Describe("Best-scoring boxes kept before NMS (<= 0: all).");
    d->Field("rpn_post_nms_top_n", &ProposalParam::rpn_post_nms_top_n)
        .Default(300)
        .Describe("Proposals output per image.");
    d->Field("threshold", &ProposalParam::threshold).Default(0.7f).Describe("NMS IoU threshold.");
    d->Field("rpn_min_size", &ProposalParam::rpn_min_size)
        .Default(16)
        .Describe("Minimum box side in input-image pixels (times im_info's scale).");
    d->Field("scales", &ProposalParam::scales)
        .Default({4.f, 8.f, 16.f, 32.f})
        .Describe("Anchor scales.");
    d->Field("ratios", &ProposalParam::ratios)
        .Default({0.5f, 1.f, 2.f})
        .Describe("Anchor aspect ratios.");
    d->Field("feature_stride", &ProposalParam::feature_stride)
        .Default(16)
        .Describe("Stride of the feature map in input-image pixels.");
    d->Field("output_score", &ProposalParam::output_score)
        .Default(false)
        .Describe("Also output the score of each proposal.");
    d->Field("iou_loss", &ProposalParam::iou_loss)
        .Default(false)
        .Describe(
            "bbox_pred holds corner offsets added to the anchors instead of (dx, dy, "
            "log dw, log dh).");
  }
};

void ProposalInit(ProposalParam* p) {
  HN_CHECK(p->rpn_post_nms_top_n >= 1, kInvalidArgument)
      << "rpn_post_nms_top_n must be at least 1, got " << p->rpn_post_nms_top_n;
  HN_CHECK(p->feature_stride >= 1, kInvalidArgument)
      << "feature_stride must be at least 1, got " << p->feature_stride;
  HN_CHECK(!p->scales.empty() && !p->ratios.empty(), kInvalidArgument)
      << "scales and ratios must not be empty";
}

template <bool kMulti>
bool ProposalShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const auto& p = attrs.Param<ProposalParam>();
  const std::string node = DescribeNode(attrs);
  const Shape& c = (*in)[0];
  if (c.ndim() == 0) return false;
  HN_CHECK(c.ndim() == 4, kShapeError)
      << node << ": cls_prob should be (batch, 2 * num_anchors, height, width), got " << c;
  const int64_t anchors = static_cast<int64_t>(p.scales.size() * p.ratios.size());
  if (c[1] != 0) {
    HN_CHECK(c[1] == 2 * anchors, kShapeError)
        << node << ": cls_prob " << c << " should have 2 * " << anchors << " channels (one "
        << "background and one foreground score for each of " << p.ratios.size() << " ratios x "
        << p.scales.size() << " scales)";
  }
  if (!kMulti) {
    HN_CHECK(c[0] == 1 || c[0] == 0, kShapeError)
        << node << ": takes one image (batch 1), got cls_prob " << c
        << " (use _contrib_MultiProposal for batches)";
  }
  AssignShape(attrs, in, 1, Shape{c[0], 4 * anchors, c[2], c[3]}, "input 'bbox_pred'");
  AssignShape(attrs, in, 2, Shape{c[0], 3}, "input 'im_info'");
  const int64_t rows = (kMulti ? c[0] : 1) * p.rpn_post_nms_top_n;
  AssignShape(attrs, out, 0, Shape{rows, 5}, "output 0 (rois)");
  if (out->size() > 1) AssignShape(attrs, out, 1, Shape{rows, 1}, "output 1 (scores)");
  return internal::AllKnown(*in, *out);
}

bool ProposalType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  for (size_t i = 0; i < in->size(); ++i) {
    HN_CHECK((*in)[i] == DType::kUnknown || (*in)[i] == DType::kFloat32, kTypeError)
        << DescribeNode(attrs) << ": input " << i << " has dtype " << DTypeName((*in)[i])
        << "; this operator computes in float32 (Cast the input first)";
    (*in)[i] = DType::kFloat32;
  }
  for (auto& d : *out) {
    HN_CHECK(d == DType::kUnknown || d == DType::kFloat32, kTypeError)
        << DescribeNode(attrs) << ": outputs are float32, not " << DTypeName(d);
    d = DType::kFloat32;
  }
  return true;
}

// MXNet's base anchors (x1, y1, x2, y2) for every ratio (outer) and scale (inner).
std::vector<float> BaseAnchors(const ProposalParam& p) {
  const float base[4] = {0.f, 0.f, static_cast<float>(p.feature_stride - 1.0),
                         static_cast<float>(p.feature_stride - 1.0)};
  std::vector<float> anchors;
  for (float ratio : p.ratios) {
    for (float scale : p.scales) {
      const float w = base[2] - base[0] + 1.0f;
      const float h = base[3] - base[1] + 1.0f;
      const float x_ctr = static_cast<float>(base[0] + 0.5 * (w - 1.0f));
      const float y_ctr = static_cast<float>(base[1] + 0.5 * (h - 1.0f));
      const float size = w * h;
      const float size_ratios = std::floor(size / ratio);
      const float new_w = std::floor(std::sqrt(size_ratios) + 0.5f) * scale;
      const float new_h = std::floor((new_w / scale * ratio) + 0.5f) * scale;
      anchors.push_back(x_ctr - 0.5f * (new_w - 1.0f));
      anchors.push_back(y_ctr - 0.5f * (new_h - 1.0f));
      anchors.push_back(x_ctr + 0.5f * (new_w - 1.0f));
      anchors.push_back(y_ctr + 0.5f * (new_h - 1.0f));
    }
  }
  return anchors;
}

struct Box5 {
  float v[5];
};

// One image: writes rows [image, x1, y1, x2, y2] and scores.
void ProposeImage(const ProposalParam& p, const std::vector<float>& base, const float* fg_scores,
                  const float* deltas, const float* im_info, int64_t num_anchors, int64_t height,
                  int64_t width, float image_index, float* rois, float* scores) {
  const int64_t count = num_anchors * height * width;
  const int64_t fs = p.feature_stride;
  std::vector<Box5> boxes(static_cast<size_t>(count));
  const float im_h = im_info[0], im_w = im_info[1];
  const int64_t real_height = static_cast<int64_t>(im_h / static_cast<float>(fs));
  const int64_t real_width = static_cast<int64_t>(im_w / static_cast<float>(fs));
  const int64_t plane = height * width;
  for (int64_t h = 0; h < height; ++h) {
    for (int64_t w = 0; w < width; ++w) {
      for (int64_t a = 0; a < num_anchors; ++a) {
        const int64_t index = (h * width + w) * num_anchors + a;
        float* box = boxes[static_cast<size_t>(index)].v;
        const float* an = base.data() + a * 4;
        const float x1 = an[0] + static_cast<float>(w * fs),
                    y1 = an[1] + static_cast<float>(h * fs);
        const float x2 = an[2] + static_cast<float>(w * fs),
                    y2 = an[3] + static_cast<float>(h * fs);
        const float* d = deltas + (a * 4) * plane + h * width + w;
        const float d0 = d[0], d1 = d[plane], d2 = d[2 * plane], d3 = d[3 * plane];
        float px1, py1, px2, py2;
        if (p.iou_loss) {
          px1 = x1 + d0;
          py1 = y1 + d1;
          px2 = x2 + d2;
          py2 = y2 + d3;
        } else {
          const float bw = static_cast<float>(x2 - x1 + 1.0);
          const float bh = static_cast<float>(y2 - y1 + 1.0);
          const float cx = static_cast<float>(x1 + 0.5 * (bw - 1.0));
          const float cy = static_cast<float>(y1 + 0.5 * (bh - 1.0));
          const float pcx = d0 * bw + cx, pcy = d1 * bh + cy;
          const float pw = std::exp(d2) * bw, ph = std::exp(d3) * bh;
          px1 = static_cast<float>(pcx - 0.5 * (pw - 1.0));
          py1 = static_cast<float>(pcy - 0.5 * (ph - 1.0));
          px2 = static_cast<float>(pcx + 0.5 * (pw - 1.0));
          py2 = static_cast<float>(pcy + 0.5 * (ph - 1.0));
        }
        box[0] = std::max(std::min(px1, im_w - 1.0f), 0.0f);
        box[1] = std::max(std::min(py1, im_h - 1.0f), 0.0f);
        box[2] = std::max(std::min(px2, im_w - 1.0f), 0.0f);
        box[3] = std::max(std::min(py2, im_h - 1.0f), 0.0f);
        box[4] =
            (h >= real_height || w >= real_width) ? -1.0f : fg_scores[a * plane + h * width + w];
      }
    }
  }
  const float min_size = static_cast<float>(p.rpn_min_size) * im_info[2];
  for (Box5& b : boxes) {
    const float iw = b.v[2] - b.v[0] + 1.0f, ih = b.v[3] - b.v[1] + 1.0f;
    if (iw < min_size || ih < min_size) {
      b.v[0] -= min_size / 2;
      b.v[1] -= min_size / 2;
      b.v[2] += min_size / 2;
      b.v[3] += min_size / 2;
      b.v[4] = -1.0f;
    }
  }
  std::vector<int64_t> order(static_cast<size_t>(count));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) {
    return internal::SortKey(boxes[static_cast<size_t>(i)].v[4]) >
           internal::SortKey(boxes[static_cast<size_t>(j)].v[4]);
  });
  int64_t pre = p.rpn_pre_nms_top_n > 0 ? p.rpn_pre_nms_top_n : count;
  pre = std::min(pre, count);
  const int64_t post = std::min<int64_t>(p.rpn_post_nms_top_n, pre);
  std::vector<Box5> dets(static_cast<size_t>(pre));
  std::vector<float> area(static_cast<size_t>(pre));
  for (int64_t i = 0; i < pre; ++i) {
    dets[static_cast<size_t>(i)] = boxes[static_cast<size_t>(order[static_cast<size_t>(i)])];
    const float* b = dets[static_cast<size_t>(i)].v;
    area[static_cast<size_t>(i)] = (b[2] - b[0] + 1) * (b[3] - b[1] + 1);
  }
  std::vector<char> suppressed(static_cast<size_t>(pre), 0);
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < pre && static_cast<int64_t>(keep.size()) < post; ++i) {
    if (suppressed[static_cast<size_t>(i)]) continue;
    keep.push_back(i);
    const float* bi = dets[static_cast<size_t>(i)].v;
    for (int64_t j = i + 1; j < pre; ++j) {
      if (suppressed[static_cast<size_t>(j)]) continue;
      const float* bj = dets[static_cast<size_t>(j)].v;
      const float xx1 = std::max(bi[0], bj[0]), yy1 = std::max(bi[1], bj[1]);
      const float xx2 = std::min(bi[2], bj[2]), yy2 = std::min(bi[3], bj[3]);
      const float w = std::max(0.0f, xx2 - xx1 + 1.0f), h = std::max(0.0f, yy2 - yy1 + 1.0f);
      const float inter = w * h;
      const float ovr =
          inter / (area[static_cast<size_t>(i)] + area[static_cast<size_t>(j)] - inter);
      if (ovr > p.threshold) suppressed[static_cast<size_t>(j)] = 1;
    }
  }
  for (int64_t i = 0; i < p.rpn_post_nms_top_n; ++i) {
    const size_t k = static_cast<size_t>(i) % keep.size();
    const float* b = dets[static_cast<size_t>(keep[k])].v;
    rois[i * 5] = image_index;
    std::copy(b, b + 4, rois + i * 5 + 1);
    if (scores != nullptr) scores[i] = b[4];
  }
}

void ProposalCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                     const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<ProposalParam>();
  const Shape& c = in[0].shape;
  const int64_t batch = c[0], num_anchors = c[1] / 2, height = c[2], width = c[3];
  const std::vector<float> base = BaseAnchors(p);
  const float* cls = in[0].ptr<const float>();
  const float* deltas = in[1].ptr<const float>();
  const float* info = in[2].ptr<const float>();
  float* rois = out[0].ptr<float>();
  float* scores = out.size() > 1 ? out[1].ptr<float>() : nullptr;
  const int64_t post = p.rpn_post_nms_top_n;
  for (int64_t b = 0; b < batch; ++b) {
    ProposeImage(p, base, cls + (b * 2 + 1) * num_anchors * height * width,
                 deltas + b * 4 * num_anchors * height * width, info + b * 3, num_anchors, height,
                 width, static_cast<float>(b), rois + b * post * 5,
                 scores != nullptr ? scores + b * post : nullptr);
  }
}

}  // namespace

void RegisterProposalOps(OpRegistry* r) {
  auto visible = [](const NodeAttrs& attrs) -> uint32_t {
    return attrs.Param<ProposalParam>().output_score ? 2 : 1;
  };
  r->Register("_contrib_Proposal")
      .Describe(
          "Region proposals (rpn_post_nms_top_n, 5) = [0, x1, y1, x2, y2] of one image from "
          "RPN scores (1, 2A, h, w), box deltas (1, 4A, h, w) and im_info (1, 3) = (height, "
          "width, scale); with output_score also their scores.")
      .SetParam<ProposalParam>(ProposalInit)
      .SetInputNames({"cls_prob", "bbox_pred", "im_info"})
      .SetNumOutputs(visible)
      .SetNumTotalOutputs(2)  // MXNet always has the score output, hidden without output_score
      .SetInferShape(ProposalShape<false>)
      .SetInferType(ProposalType)
      .SetCompute(ProposalCompute);

  r->Register("_contrib_MultiProposal")
      .Describe(
          "Region proposals of a batch: rpn_post_nms_top_n rows [image, x1, y1, x2, y2] per "
          "image, like _contrib_Proposal for each image.")
      .SetParam<ProposalParam>(ProposalInit)
      .SetInputNames({"cls_prob", "bbox_pred", "im_info"})
      .SetNumOutputs(visible)
      .SetNumTotalOutputs(2)
      .SetInferShape(ProposalShape<true>)
      .SetInferType(ProposalType)
      .SetCompute(ProposalCompute);
}

}  // namespace hybridnet
