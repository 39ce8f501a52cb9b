// Conformance cases of the detection family: box_nms (+ alias), box_iou, bipartite_matching,
// box_encode, box_decode, MultiBoxPrior, MultiBoxDetection, MultiBoxTarget, Proposal,
// MultiProposal. References are written from MXNet's documented behaviour and its CPU kernels'
// decisions (tie order, -1 padding, quirks named in ops/detection/*.cc), with plain loops in
// double; decisions a float32 kernel makes on rounded values (thresholds) use F32 rounding.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "conformance.h"
#include "vision_inputs.h"

namespace hybridnet {
namespace conformance {
namespace {

// A value as the kernel's dtype holds it.
double Rounded(double v, bool f32) { return f32 ? F32(v) : v; }

// ---- box geometry ------------------------------------------------------------------------------

struct Box {
  double x1, y1, x2, y2;
};

Box Corners(const double* b, bool center) {
  if (!center) return {b[0], b[1], b[2], b[3]};
  return {b[0] - b[2] / 2, b[1] - b[3] / 2, b[0] + b[2] / 2, b[1] + b[3] / 2};
}

double Area(const Box& b) {
  const double w = b.x2 - b.x1, h = b.y2 - b.y1;
  return (w < 0 || h < 0) ? 0.0 : w * h;
}

double Inter(const Box& a, const Box& b) {
  const double w = std::max(0.0, std::min(a.x2, b.x2) - std::max(a.x1, b.x1));
  const double h = std::max(0.0, std::min(a.y2, b.y2) - std::max(a.y1, b.y1));
  return w * h;
}

// ---- _contrib_box_nms ---------------------------------------------------------------------------

struct NmsOpts {
  double overlap = 0.5, valid = 0.0;
  int64_t topk = -1, coord = 2, score = 1, id = -1, background = -1;
  bool force = false, in_center = false, out_center = false;
};

AttrDict NmsAttrs(const NmsOpts& o) {
  AttrDict a;
  a["overlap_thresh"] = std::to_string(o.overlap);
  a["valid_thresh"] = std::to_string(o.valid);
  a["topk"] = std::to_string(o.topk);
  a["coord_start"] = std::to_string(o.coord);
  a["score_index"] = std::to_string(o.score);
  a["id_index"] = std::to_string(o.id);
  a["background_id"] = std::to_string(o.background);
  a["force_suppress"] = o.force ? "True" : "False";
  a["in_format"] = o.in_center ? "center" : "corner";
  a["out_format"] = o.out_center ? "center" : "corner";
  return a;
}

RefFn NmsRef(NmsOpts o, bool f32) {
  return [o, f32](const std::vector<RefTensor>& in) {
    const RefTensor& x = in[0];
    const Shape& s = x.shape;
    const int64_t n = s[s.ndim() - 2], w = s[s.ndim() - 1], batch = x.size() / (n * w);
    RefTensor y(s);
    const int64_t k = o.topk < 0 ? n : std::min(n, o.topk);
    if (k == 0) {
      y.v = x.v;
      return std::vector<RefTensor>{y};
    }
    std::fill(y.v.begin(), y.v.end(), -1.0);
    const double valid = Rounded(o.valid, f32), overlap = Rounded(o.overlap, f32);
    for (int64_t b = 0; b < batch; ++b) {
      auto row = [&](int64_t i) { return &x.v[static_cast<size_t>((b * n + i) * w)]; };
      std::vector<int64_t> cand;
      for (int64_t i = 0; i < n; ++i) {
        const bool bg = o.id >= 0 && row(i)[o.id] == static_cast<double>(o.background);
        if (row(i)[o.score] > valid && !bg) cand.push_back(i);
      }
      std::stable_sort(cand.begin(), cand.end(),
                       [&](int64_t a, int64_t c) { return row(a)[o.score] > row(c)[o.score]; });
      if (static_cast<int64_t>(cand.size()) > k) cand.resize(static_cast<size_t>(k));
      std::vector<int64_t> kept;
      for (int64_t i : cand) {
        const Box bi = Corners(row(i) + o.coord, o.in_center);
        bool suppressed = false;
        for (int64_t j : kept) {
          if (!o.force && o.id >= 0 && std::trunc(row(i)[o.id]) != std::trunc(row(j)[o.id])) {
            continue;
          }
          const Box bj = Corners(row(j) + o.coord, o.in_center);
          const double inter = Inter(bi, bj);
          if (Rounded(inter / (Area(bi) + Area(bj) - inter), f32) > overlap) suppressed = true;
        }
        if (!suppressed) kept.push_back(i);
      }
      for (size_t r = 0; r < kept.size(); ++r)
        std::copy(row(kept[r]), row(kept[r]) + w,
                  &y.v[static_cast<size_t>((b * n + static_cast<int64_t>(r)) * w)]);
    }
    if (o.in_center != o.out_center) {
      for (int64_t r = 0; r < y.size() / w; ++r) {
        double* c = &y.v[static_cast<size_t>(r * w + o.coord)];
        if (c[0] < 0) continue;  // MXNet skips rows whose first coordinate is negative
        if (o.out_center) {
          const Box bx{c[0], c[1], c[2], c[3]};
          c[0] = (bx.x1 + bx.x2) / 2, c[1] = (bx.y1 + bx.y2) / 2;
          c[2] = bx.x2 - bx.x1, c[3] = bx.y2 - bx.y1;
        } else {
          const Box bx = Corners(c, true);
          c[0] = bx.x1, c[1] = bx.y1, c[2] = bx.x2, c[3] = bx.y2;
        }
      }
    }
    return std::vector<RefTensor>{y};
  };
}

OpCase NmsCase(const NmsOpts& o, Shape shape, const BoxRowLayout& layout, uint32_t seed,
               std::string note, const std::string& op = "_contrib_box_nms") {
  const int64_t rows = shape.Size() / layout.width;
  return WithGen(Case(op, NmsAttrs(o), {shape}, NmsRef(o, true), std::move(note)),
                 Values(ScoredBoxes(rows, layout, seed)));
}

// ---- _contrib_box_iou ---------------------------------------------------------------------------

RefFn BoxIoURef(bool center) {
  return [center](const std::vector<RefTensor>& in) {
    const RefTensor& l = in[0];
    const RefTensor& r = in[1];
    std::vector<int64_t> dims(l.shape.begin(), l.shape.end() - 1);
    dims.insert(dims.end(), r.shape.begin(), r.shape.end() - 1);
    RefTensor y{Shape(dims)};
    const int64_t nl = l.size() / 4, nr = r.size() / 4;
    for (int64_t i = 0; i < nl; ++i)
      for (int64_t j = 0; j < nr; ++j) {
        const Box a = Corners(&l.v[static_cast<size_t>(i * 4)], center);
        const Box b = Corners(&r.v[static_cast<size_t>(j * 4)], center);
        const double inter = Inter(a, b);
        y[i * nr + j] = inter <= 0 ? 0.0 : inter / (Area(a) + Area(b) - inter);
      }
    return std::vector<RefTensor>{y};
  };
}

// ---- _contrib_bipartite_matching ---------------------------------------------------------------

RefFn MatchingRef(bool ascend, double threshold, int64_t topk) {
  return [=](const std::vector<RefTensor>& in) {
    const Shape& s = in[0].shape;
    const int64_t rows = s[s.ndim() - 2], cols = s[s.ndim() - 1];
    const int64_t batch = in[0].size() / (rows * cols);
    std::vector<int64_t> rd(s.begin(), s.end() - 1), cd = rd;
    cd.back() = cols;
    RefTensor rm{Shape(rd)}, cm{Shape(cd)};
    std::fill(rm.v.begin(), rm.v.end(), -1.0);
    std::fill(cm.v.begin(), cm.v.end(), -1.0);
    const double thr = F32(threshold);
    for (int64_t b = 0; b < batch; ++b) {
      const double* sc = &in[0].v[static_cast<size_t>(b * rows * cols)];
      std::vector<int64_t> order(static_cast<size_t>(rows * cols));
      std::iota(order.begin(), order.end(), int64_t{0});
      // NaN scores rank last.
      auto key = [&](int64_t i) {
        return std::isnan(sc[i]) ? (ascend ? HUGE_VAL : -HUGE_VAL) : sc[i];
      };
      std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) {
        return ascend ? key(i) < key(j) : key(i) > key(j);
      });
      int64_t matched = 0;
      for (int64_t idx : order) {
        const int64_t r = idx / cols, c = idx % cols;
        if (rm[b * rows + r] != -1 || cm[b * cols + c] != -1) continue;
        if (ascend ? !(sc[idx] < thr) : !(sc[idx] > thr)) break;
        rm[b * rows + r] = static_cast<double>(c);
        cm[b * cols + c] = static_cast<double>(r);
        // MXNet stops only once the count exceeds topk, so it makes topk + 1 matches.
        if (topk > 0 && ++matched > topk) break;
      }
    }
    return std::vector<RefTensor>{rm, cm};
  };
}

// ---- _contrib_box_encode / _contrib_box_decode --------------------------------------------------

std::vector<RefTensor> BoxEncodeRef(const std::vector<RefTensor>& in) {
  const RefTensor &samples = in[0], &matches = in[1], &anchors = in[2], &refs = in[3];
  const RefTensor &means = in[4], &stds = in[5];
  const int64_t batch = anchors.shape[0], n = anchors.shape[1], m = refs.shape[1];
  RefTensor t(anchors.shape), mask(anchors.shape);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < n; ++i) {
      const int64_t k = b * n + i;
      const bool positive = samples[k] > 0.5;
      for (int c = 0; c < 4; ++c) mask[k * 4 + c] = positive ? 1.0 : 0.0;
      if (!positive) continue;
      const int64_t j = static_cast<int64_t>(matches[k]);
      const double* g = &refs.v[static_cast<size_t>((b * m + j) * 4)];
      const double* a = &anchors.v[static_cast<size_t>(k * 4)];
      const double gw = g[2] - g[0], gh = g[3] - g[1], aw = a[2] - a[0], ah = a[3] - a[1];
      const double d[4] = {((g[0] + gw / 2) - (a[0] + aw / 2)) / aw,
                           ((g[1] + gh / 2) - (a[1] + ah / 2)) / ah, std::log(gw / aw),
                           std::log(gh / ah)};
      for (int c = 0; c < 4; ++c) t[k * 4 + c] = (d[c] - means[c]) / stds[c];
    }
  return {t, mask};
}

RefFn BoxDecodeRef(const double (&stds)[4], double clip, bool corner_anchors) {
  std::vector<double> st(stds, stds + 4);
  return [st, clip, corner_anchors](const std::vector<RefTensor>& in) {
    const RefTensor& x = in[0];
    const int64_t n = x.shape[1], total = x.size() / 4;
    RefTensor y(x.shape);
    for (int64_t i = 0; i < total; ++i) {
      const double* a = &in[1].v[static_cast<size_t>((i % n) * 4)];
      double ax = a[0], ay = a[1], aw = a[2], ah = a[3];
      if (corner_anchors)
        aw = a[2] - a[0], ah = a[3] - a[1], ax = a[0] + aw / 2, ay = a[1] + ah / 2;
      const double* d = &x.v[static_cast<size_t>(i * 4)];
      double dw = d[2] * st[2], dh = d[3] * st[3];
      if (clip > 0) dw = std::min(dw, clip), dh = std::min(dh, clip);
      const double cx = d[0] * st[0] * aw + ax, cy = d[1] * st[1] * ah + ay;
      const double hw = std::exp(dw) * aw / 2, hh = std::exp(dh) * ah / 2;
      y[i * 4] = cx - hw, y[i * 4 + 1] = cy - hh, y[i * 4 + 2] = cx + hw, y[i * 4 + 3] = cy + hh;
    }
    return std::vector<RefTensor>{y};
  };
}

// Center-format anchors (x, y, w, h) with positive sizes, or corner anchors.
std::vector<double> Anchors(int64_t n, bool corner, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) {
    const double cx = 20 * u(rng), cy = 20 * u(rng), w = 1 + 6 * u(rng), h = 1 + 6 * u(rng);
    if (corner) {
      v.insert(v.end(), {cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2});
    } else {
      v.insert(v.end(), {cx, cy, w, h});
    }
  }
  return v;
}

// ---- _contrib_MultiBoxPrior ---------------------------------------------------------------------

RefFn MultiBoxPriorRef(std::vector<double> sizes, std::vector<double> ratios, bool clip,
                       std::vector<double> steps, std::vector<double> offsets) {
  return [=](const std::vector<RefTensor>& in) {
    const int64_t h = in[0].shape[2], w = in[0].shape[3];
    const int64_t per = static_cast<int64_t>(sizes.size() + ratios.size() - 1);
    RefTensor y(Shape{1, h * w * per, 4});
    const double sy = steps[0] > 0 && steps[1] > 0 ? steps[0] : 1.0 / static_cast<double>(h);
    const double sx = steps[0] > 0 && steps[1] > 0 ? steps[1] : 1.0 / static_cast<double>(w);
    int64_t k = 0;
    auto put = [&](double cx, double cy, double size, double ratio) {
      const double hw =
          size * static_cast<double>(h) / static_cast<double>(w) * std::sqrt(ratio) / 2;
      const double hh = size / std::sqrt(ratio) / 2;
      const double box[4] = {cx - hw, cy - hh, cx + hw, cy + hh};
      for (double v : box) y[k++] = clip ? std::min(1.0, std::max(0.0, v)) : v;
    };
    for (int64_t r = 0; r < h; ++r)
      for (int64_t c = 0; c < w; ++c) {
        const double cy = (static_cast<double>(r) + offsets[0]) * sy;
        const double cx = (static_cast<double>(c) + offsets[1]) * sx;
        for (double s : sizes) put(cx, cy, s, ratios[0]);
        for (size_t j = 1; j < ratios.size(); ++j) put(cx, cy, sizes[0], ratios[j]);
      }
    return std::vector<RefTensor>{y};
  };
}

// ---- _contrib_MultiBoxDetection -----------------------------------------------------------------

struct MbdOpts {
  bool clip = true;
  double threshold = 0.01, nms = 0.5;
  bool force = false;
  int64_t topk = -1;
  double var[4] = {0.1, 0.1, 0.2, 0.2};
};

RefFn MultiBoxDetectionRef(MbdOpts o) {
  return [o](const std::vector<RefTensor>& in) {
    const RefTensor &cls = in[0], &loc = in[1], &anc = in[2];
    const int64_t batch = cls.shape[0], classes = cls.shape[1], n = cls.shape[2];
    RefTensor y(Shape{batch, n, 6});
    std::fill(y.v.begin(), y.v.end(), -1.0);
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<std::vector<double>> rows;  // valid detections in anchor order
      for (int64_t i = 0; i < n; ++i) {
        double best = -1;
        int64_t id = 0;
        for (int64_t c = 1; c < classes; ++c) {
          const double v = cls[(b * classes + c) * n + i];
          if (v > best) best = v, id = c;
        }
        if (id == 0 || best < F32(o.threshold)) continue;
        const double* a = &anc.v[static_cast<size_t>(i * 4)];
        const double* d = &loc.v[static_cast<size_t>((b * n + i) * 4)];
        const double aw = a[2] - a[0], ah = a[3] - a[1];
        const double cx = d[0] * o.var[0] * aw + (a[0] + a[2]) / 2;
        const double cy = d[1] * o.var[1] * ah + (a[1] + a[3]) / 2;
        const double hw = std::exp(d[2] * o.var[2]) * aw / 2,
                     hh = std::exp(d[3] * o.var[3]) * ah / 2;
        std::vector<double> row = {
            static_cast<double>(id - 1), best, cx - hw, cy - hh, cx + hw, cy + hh};
        if (o.clip)
          for (int k = 2; k < 6; ++k)
            row[static_cast<size_t>(k)] = std::min(1.0, std::max(0.0, row[static_cast<size_t>(k)]));
        rows.push_back(row);
      }
      auto out_row = [&](size_t r) { return &y.v[static_cast<size_t>(b * n * 6) + r * 6]; };
      for (size_t r = 0; r < rows.size(); ++r)
        std::copy(rows[r].begin(), rows[r].end(), out_row(r));
      if (rows.empty() || o.nms <= 0 || o.nms > 1) continue;
      std::vector<size_t> order(rows.size());
      std::iota(order.begin(), order.end(), size_t{0});
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t a, size_t c) { return rows[a][1] > rows[c][1]; });
      size_t keep = rows.size();
      if (o.topk > 0 && static_cast<size_t>(o.topk) < keep) {
        keep = static_cast<size_t>(o.topk);
        for (size_t r = keep; r < rows.size(); ++r) out_row(r)[0] = -1;  // rest of row stays
      }
      for (size_t r = 0; r < keep; ++r)
        std::copy(rows[order[r]].begin(), rows[order[r]].end(), out_row(r));
      for (size_t i = 0; i < keep; ++i) {
        if (out_row(i)[0] < 0) continue;
        for (size_t j = i + 1; j < keep; ++j) {
          double* a = out_row(i);
          double* c = out_row(j);
          if (c[0] < 0 || !(o.force || a[0] == c[0])) continue;
          const Box ba{a[2], a[3], a[4], a[5]}, bc{c[2], c[3], c[4], c[5]};
          const double inter = Inter(ba, bc);
          const double uni =
              (ba.x2 - ba.x1) * (ba.y2 - ba.y1) + (bc.x2 - bc.x1) * (bc.y2 - bc.y1) - inter;
          if ((uni <= 0 ? 0.0 : inter / uni) >= F32(o.nms)) c[0] = -1;
        }
      }
    }
    return std::vector<RefTensor>{y};
  };
}

AttrDict MbdAttrs(const MbdOpts& o) {
  return {{"clip", o.clip ? "True" : "False"},      {"threshold", std::to_string(o.threshold)},
          {"nms_threshold", std::to_string(o.nms)}, {"force_suppress", o.force ? "True" : "False"},
          {"nms_topk", std::to_string(o.topk)},     {"variances", "(0.1, 0.1, 0.2, 0.2)"}};
}

// SSD anchors in [0, 1] (corner format): a grid of boxes of two sizes, overlapping.
std::vector<double> SsdAnchors(int64_t n) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) {
    const double cx = 0.1 + 0.8 * static_cast<double>(i % 5) / 4.0;
    const double cy = 0.15 + 0.7 * static_cast<double>((i / 5) % 4) / 3.0;
    const double s = i % 2 == 0 ? 0.3 : 0.45;
    v.insert(v.end(), {cx - s / 2, cy - s / 2, cx + s / 2, cy + s / 2});
  }
  return v;
}

// ---- _contrib_MultiBoxTarget --------------------------------------------------------------------

struct MbtOpts {
  double overlap = 0.5, ignore = -1, ratio = -1, mining_thresh = 0.5;
};

RefFn MultiBoxTargetRef(MbtOpts o) {
  return [o](const std::vector<RefTensor>& in) {
    const RefTensor &anc = in[0], &lab = in[1], &cls = in[2];
    const int64_t n = anc.shape[1], batch = lab.shape[0], nl = lab.shape[1], lw = lab.shape[2];
    const int64_t classes = cls.shape[1];
    RefTensor loc(Shape{batch, n * 4}), mask(Shape{batch, n * 4}), ct(Shape{batch, n});
    std::fill(ct.v.begin(), ct.v.end(), o.ignore);
    const double var[4] = {0.1, 0.1, 0.2, 0.2};
    for (int64_t b = 0; b < batch; ++b) {
      const double* L = &lab.v[static_cast<size_t>(b * nl * lw)];
      int64_t ngt = 0;
      while (ngt < nl && L[ngt * lw] != -1.0) ++ngt;
      if (ngt == 0) continue;
      auto iou = [&](int64_t j, int64_t k) {
        const double* a = &anc.v[static_cast<size_t>(j * 4)];
        const double* g = L + k * lw + 1;
        const Box ba{a[0], a[1], a[2], a[3]}, bg{g[0], g[1], g[2], g[3]};
        const double inter = Inter(ba, bg);
        const double uni =
            (ba.x2 - ba.x1) * (ba.y2 - ba.y1) + (bg.x2 - bg.x1) * (bg.y2 - bg.y1) - inter;
        return uni == 0 ? 0.0 : inter / uni;
      };
      std::vector<int> flag(static_cast<size_t>(n), -1);
      std::vector<int64_t> match(static_cast<size_t>(n), -1);
      std::vector<double> best(static_cast<size_t>(n), -1.0);
      std::vector<bool> gt_done(static_cast<size_t>(ngt), false);
      int64_t positives = 0;
      while (true) {  // each ground truth takes its best free anchor, best pairs first
        int64_t ba = -1, bg = -1;
        double bv = 1e-6;
        for (int64_t j = 0; j < n; ++j) {
          if (flag[static_cast<size_t>(j)] == 1) continue;
          for (int64_t k = 0; k < ngt; ++k)
            if (!gt_done[static_cast<size_t>(k)] && iou(j, k) > bv) ba = j, bg = k, bv = iou(j, k);
        }
        if (ba < 0) break;
        flag[static_cast<size_t>(ba)] = 1, match[static_cast<size_t>(ba)] = bg;
        best[static_cast<size_t>(ba)] = bv, gt_done[static_cast<size_t>(bg)] = true, ++positives;
        if (std::all_of(gt_done.begin(), gt_done.end(), [](bool d) { return d; })) break;
      }
      for (int64_t j = 0; j < n && o.overlap > 0; ++j) {
        if (flag[static_cast<size_t>(j)] == 1) continue;
        int64_t bg = -1;
        double bv = -1;
        for (int64_t k = 0; k < ngt; ++k)
          if (iou(j, k) > bv) bv = iou(j, k), bg = k;
        best[static_cast<size_t>(j)] = bv, match[static_cast<size_t>(j)] = bg;
        if (bv > F32(o.overlap)) flag[static_cast<size_t>(j)] = 1, ++positives;
      }
      if (o.ratio > 0) {
        int64_t want = static_cast<int64_t>(static_cast<double>(positives) * F32(o.ratio));
        want = std::min(want, n - positives);
        std::vector<std::pair<double, int64_t>> cand;
        for (int64_t j = 0; j < n && want > 0; ++j) {
          if (flag[static_cast<size_t>(j)] == 1) continue;
          if (best[static_cast<size_t>(j)] < 0) {
            for (int64_t k = 0; k < ngt; ++k)
              best[static_cast<size_t>(j)] = std::max(best[static_cast<size_t>(j)], iou(j, k));
          }
          if (best[static_cast<size_t>(j)] >= F32(o.mining_thresh)) continue;
          double mx = -1e300, sum = 0;
          for (int64_t c = 0; c < classes; ++c) mx = std::max(mx, cls[(b * classes + c) * n + j]);
          for (int64_t c = 0; c < classes; ++c)
            sum += std::exp(cls[(b * classes + c) * n + j] - mx);
          cand.emplace_back(std::exp(cls[(b * classes) * n + j] - mx) / sum, j);
        }
        std::stable_sort(cand.begin(), cand.end(),
                         [](const auto& a, const auto& c) { return a.first < c.first; });
        for (size_t i = 0; i < cand.size() && static_cast<int64_t>(i) < want; ++i)
          flag[static_cast<size_t>(cand[i].second)] = 0;
      } else {
        for (int& f : flag)
          if (f != 1) f = 0;
      }
      for (int64_t j = 0; j < n; ++j) {
        if (flag[static_cast<size_t>(j)] == 0) ct[b * n + j] = 0;
        if (flag[static_cast<size_t>(j)] != 1) continue;
        const double* g = L + match[static_cast<size_t>(j)] * lw;
        const double* a = &anc.v[static_cast<size_t>(j * 4)];
        ct[b * n + j] = g[0] + 1;
        const double aw = a[2] - a[0], ah = a[3] - a[1], gw = g[3] - g[1], gh = g[4] - g[2];
        const double t[4] = {((g[1] + g[3]) / 2 - (a[0] + a[2]) / 2) / aw / var[0],
                             ((g[2] + g[4]) / 2 - (a[1] + a[3]) / 2) / ah / var[1],
                             std::log(gw / aw) / var[2], std::log(gh / ah) / var[3]};
        for (int c = 0; c < 4; ++c) loc[(b * n + j) * 4 + c] = t[c], mask[(b * n + j) * 4 + c] = 1;
      }
    }
    return std::vector<RefTensor>{loc, mask, ct};
  };
}

// Ground truths [class, x1, y1, x2, y2] near the SsdAnchors grid, padded with -1 rows.
std::vector<double> SsdLabels(int64_t batch, int64_t slots, const std::vector<int64_t>& counts) {
  std::vector<double> v;
  const double boxes[][4] = {{0.02, 0.05, 0.33, 0.31},
                             {0.4, 0.35, 0.72, 0.8},
                             {0.62, 0.1, 0.98, 0.44},
                             {0.1, 0.55, 0.38, 0.95}};
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t k = 0; k < slots; ++k) {
      if (k < counts[static_cast<size_t>(b)]) {
        const double* bx = boxes[(k + b) % 4];
        v.insert(v.end(), {static_cast<double>((k + b) % 3), bx[0], bx[1], bx[2], bx[3]});
      } else {
        v.insert(v.end(), {-1, -1, -1, -1, -1});
      }
    }
  return v;
}

// ---- _contrib_Proposal / _contrib_MultiProposal -------------------------------------------------

struct PropOpts {
  int64_t pre = 30, post = 12, min_size = 4, stride = 16;
  double thresh = 0.7;
  std::vector<double> scales{2, 4}, ratios{0.5, 1, 2};
  bool iou_loss = false, output_score = false;
};

AttrDict PropAttrs(const PropOpts& o) {
  auto tuple = [](const std::vector<double>& v) {
    std::string s = "(";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + (v.size() == 1 ? ",)" : ")");
  };
  return {{"rpn_pre_nms_top_n", std::to_string(o.pre)},
          {"rpn_post_nms_top_n", std::to_string(o.post)},
          {"threshold", std::to_string(o.thresh)},
          {"rpn_min_size", std::to_string(o.min_size)},
          {"scales", tuple(o.scales)},
          {"ratios", tuple(o.ratios)},
          {"feature_stride", std::to_string(o.stride)},
          {"output_score", o.output_score ? "True" : "False"},
          {"iou_loss", o.iou_loss ? "True" : "False"}};
}

RefFn ProposalRef(PropOpts o, bool multi) {
  return [o, multi](const std::vector<RefTensor>& in) {
    const RefTensor &cls = in[0], &deltas = in[1], &info = in[2];
    const int64_t batch = cls.shape[0], a_n = cls.shape[1] / 2, h = cls.shape[2], w = cls.shape[3];
    const int64_t rows = (multi ? batch : 1) * o.post;
    RefTensor rois(Shape{rows, 5}), scores(Shape{rows, 1});
    // Base anchors: for each ratio, for each scale, a rounded box centred on the first cell.
    std::vector<Box> base;
    const double s = static_cast<double>(o.stride), ctr = (s - 1) / 2;
    for (double ratio : o.ratios)
      for (double scale : o.scales) {
        const double ws = std::floor(std::sqrt(std::floor(s * s / F32(ratio))) + 0.5) * scale;
        const double hs = std::floor(ws / scale * F32(ratio) + 0.5) * scale;
        base.push_back(
            {ctr - (ws - 1) / 2, ctr - (hs - 1) / 2, ctr + (ws - 1) / 2, ctr + (hs - 1) / 2});
      }
    for (int64_t b = 0; b < batch; ++b) {
      const double im_h = info[b * 3], im_w = info[b * 3 + 1];
      const double min_size = static_cast<double>(o.min_size) * info[b * 3 + 2];
      const int64_t real_h = static_cast<int64_t>(F32(im_h / s)),
                    real_w = static_cast<int64_t>(F32(im_w / s));
      struct Det {
        Box box;
        double score;
      };
      std::vector<Det> dets;
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x)
          for (int64_t a = 0; a < a_n; ++a) {
            Box an = base[static_cast<size_t>(a)];
            an.x1 += static_cast<double>(x) * s, an.x2 += static_cast<double>(x) * s;
            an.y1 += static_cast<double>(y) * s, an.y2 += static_cast<double>(y) * s;
            auto delta = [&](int64_t k) {
              return deltas[((b * 4 * a_n + a * 4 + k) * h + y) * w + x];
            };
            Box p;
            if (o.iou_loss) {
              p = {an.x1 + delta(0), an.y1 + delta(1), an.x2 + delta(2), an.y2 + delta(3)};
            } else {
              const double bw = an.x2 - an.x1 + 1, bh = an.y2 - an.y1 + 1;
              const double cx = delta(0) * bw + an.x1 + (bw - 1) / 2;
              const double cy = delta(1) * bh + an.y1 + (bh - 1) / 2;
              const double pw = std::exp(delta(2)) * bw, ph = std::exp(delta(3)) * bh;
              p = {cx - (pw - 1) / 2, cy - (ph - 1) / 2, cx + (pw - 1) / 2, cy + (ph - 1) / 2};
            }
            auto clamp = [](double v, double hi) { return std::max(std::min(v, hi - 1), 0.0); };
            p = {clamp(p.x1, im_w), clamp(p.y1, im_h), clamp(p.x2, im_w), clamp(p.y2, im_h)};
            double score = (y >= real_h || x >= real_w)
                               ? -1.0
                               : cls[((b * 2 * a_n + a_n + a) * h + y) * w + x];
            if (p.x2 - p.x1 + 1 < min_size || p.y2 - p.y1 + 1 < min_size) {
              p = {p.x1 - min_size / 2, p.y1 - min_size / 2, p.x2 + min_size / 2,
                   p.y2 + min_size / 2};
              score = -1.0;
            }
            dets.push_back({p, score});
          }
      std::stable_sort(dets.begin(), dets.end(),
                       [](const Det& a, const Det& c) { return a.score > c.score; });
      const int64_t count = static_cast<int64_t>(dets.size());
      const int64_t pre = std::min(o.pre > 0 ? o.pre : count, count);
      const int64_t post = std::min(o.post, pre);
      std::vector<int64_t> keep;
      for (int64_t i = 0; i < pre && static_cast<int64_t>(keep.size()) < post; ++i) {
        bool suppressed = false;
        const Box& bi = dets[static_cast<size_t>(i)].box;
        for (int64_t j : keep) {
          const Box& bj = dets[static_cast<size_t>(j)].box;
          const double iw = std::max(0.0, std::min(bi.x2, bj.x2) - std::max(bi.x1, bj.x1) + 1);
          const double ih = std::max(0.0, std::min(bi.y2, bj.y2) - std::max(bi.y1, bj.y1) + 1);
          const double area_i = (bi.x2 - bi.x1 + 1) * (bi.y2 - bi.y1 + 1);
          const double area_j = (bj.x2 - bj.x1 + 1) * (bj.y2 - bj.y1 + 1);
          if (iw * ih / (area_i + area_j - iw * ih) > F32(o.thresh)) suppressed = true;
        }
        if (!suppressed) keep.push_back(i);
      }
      for (int64_t i = 0; i < o.post; ++i) {  // MXNet repeats the kept boxes cyclically
        const Det& d = dets[static_cast<size_t>(keep[static_cast<size_t>(i) % keep.size()])];
        const int64_t r = (multi ? b : 0) * o.post + i;
        rois[r * 5] = static_cast<double>(b);
        rois[r * 5 + 1] = d.box.x1, rois[r * 5 + 2] = d.box.y1;
        rois[r * 5 + 3] = d.box.x2, rois[r * 5 + 4] = d.box.y2;
        scores[r] = d.score;
      }
    }
    if (o.output_score) return std::vector<RefTensor>{rois, scores};
    return std::vector<RefTensor>{rois};
  };
}

OpCase ProposalCase(const PropOpts& o, int64_t batch, int64_t h, int64_t w,
                    std::vector<double> im_info, std::string note) {
  const int64_t a = static_cast<int64_t>(o.scales.size() * o.ratios.size());
  const bool multi = batch > 1 || note.find("multi") != std::string::npos;
  const std::string op = multi ? "_contrib_MultiProposal" : "_contrib_Proposal";
  // Scores on a 1/32 grid (ties), deltas small and smooth.
  OpCase c = Case(op, PropAttrs(o), {{batch, 2 * a, h, w}, {batch, 4 * a, h, w}, {batch, 3}},
                  ProposalRef(o, multi), std::move(note));
  c = WithGen(c, PerInput({GridValues(0.0, 1.0, 1.0 / 32), Uniform(-0.3, 0.3),
                           Values(std::move(im_info))}));
  return WithTol(c, 1e-4, 1e-3);
}

}  // namespace

HN_CONFORMANCE_CASES(Detection) {
  // ---- box_nms: tie order, -1 padding, classes, background, topk, formats, layouts
  const BoxRowLayout standard;  // [id, score, x1, y1, x2, y2]
  BoxRowLayout no_id = standard;
  no_id.id_index = -1;
  {
    NmsOpts o;
    cases->push_back(NmsCase(o, {2, 14, 6}, no_id, 11, "default"));
    cases->push_back(
        NmsCase(o, {1, 16, 6}, no_id, 12, "alias", "_contrib_box_non_maximum_suppression"));
  }
  {
    NmsOpts o;
    o.id = 0;
    o.background = 0;
    cases->push_back(NmsCase(o, {2, 16, 6}, standard, 13, "per_class_background"));
    o.force = true;
    cases->push_back(NmsCase(o, {2, 16, 6}, standard, 13, "force_suppress"));
    o.background = -1;
    o.force = false;
    o.topk = 5;
    cases->push_back(NmsCase(o, {2, 16, 6}, standard, 14, "topk"));
  }
  {
    NmsOpts o;
    o.topk = 0;
    cases->push_back(NmsCase(o, {1, 6, 6}, no_id, 15, "topk0_copies"));
    o.topk = -1;
    o.valid = 2.0;  // nothing passes: everything is -1
    cases->push_back(NmsCase(o, {2, 6, 6}, no_id, 15, "nothing_valid"));
    o.valid = 0.45;
    o.overlap = 0.3;
    cases->push_back(NmsCase(o, {3, 10, 6}, no_id, 16, "valid_thresh"));
    o.valid = 0;
    o.overlap = 0.5;
    o.out_center = true;  // negative x1 rows stay in corner format (MXNet's quirk)
    cases->push_back(NmsCase(o, {2, 14, 6}, no_id, 17, "corner_to_center"));
  }
  {
    BoxRowLayout center = no_id;
    center.center = true;
    NmsOpts o;
    o.in_center = true;
    cases->push_back(NmsCase(o, {2, 14, 6}, center, 18, "center_to_corner"));
    o.out_center = true;
    cases->push_back(NmsCase(o, {2, 14, 6}, center, 19, "center_in_out"));
  }
  {
    BoxRowLayout trailing;  // [x1, y1, x2, y2, score, id, extra]
    trailing.width = 7;
    trailing.coord_start = 0;
    trailing.score_index = 4;
    trailing.id_index = 5;
    NmsOpts o;
    o.coord = 0, o.score = 4, o.id = 5, o.overlap = 0.4;
    cases->push_back(NmsCase(o, {2, 3, 9, 7}, trailing, 20, "layout_batch_dims"));
    cases->push_back(NmsCase(o, {12, 7}, trailing, 21, "two_dims"));
  }
  {
    NmsOpts o;
    o.id = 0;
    OpCase c = NmsCase(o, {2, 12, 6}, standard, 22, "float64");
    c.dtypes = {DType::kFloat64};
    c.reference = NmsRef(o, false);
    cases->push_back(c);
  }
  {
    // Exact IoU ties: B and E overlap A with IoU exactly 0.5, which overlap_thresh=0.5 keeps
    // (MXNet suppresses only above it); D repeats A with A's score and loses the tie by
    // position; C (IoU 0.6 with A) goes.
    const std::vector<double> rows = {0, 0.9, 0, 0, 4, 1, 0, 0.8, 0, 0, 2, 1, 0, 0.8, 1, 0, 5, 1,
                                      0, 0.9, 0, 0, 4, 1, 0, 0.7, 2, 0, 4, 1, 0, 0.7, 4, 4, 6, 6};
    NmsOpts o;
    cases->push_back(
        WithGen(Case("_contrib_box_nms", NmsAttrs(o), {{6, 6}}, NmsRef(o, true), "exact_ties"),
                Values(rows)));
  }

  // ---- box_iou
  cases->push_back(
      WithGen(Case("_contrib_box_iou", {}, {{5, 4}, {2, 3, 4}}, BoxIoURef(false), "corner"),
              Values(ScoredBoxes(11, {4, 0, -1, -1, false}, 30, 1))));
  {
    std::vector<double> v = ScoredBoxes(5, {4, 0, -1, -1, true}, 31, 1);
    const std::vector<double> r = ScoredBoxes(4, {4, 0, -1, -1, true}, 32, 1);
    v.insert(v.end(), r.begin(), r.end());
    cases->push_back(WithGen(Case("_contrib_box_iou", {{"format", "center"}}, {{5, 4}, {4, 4}},
                                  BoxIoURef(true), "center"),
                             Values(v)));
  }

  // ---- bipartite_matching: scores with ties, both orders, topk (MXNet matches topk + 1)
  cases->push_back(WithGen(Case("_contrib_bipartite_matching", {{"threshold", "0.2"}}, {{2, 5, 4}},
                                MatchingRef(false, 0.2, -1), "descending"),
                           GridValues(0.0, 1.0, 0.125)));
  cases->push_back(
      WithGen(Case("_contrib_bipartite_matching", {{"threshold", "0.6"}, {"is_ascend", "True"}},
                   {{3, 4}}, MatchingRef(true, 0.6, -1), "ascending"),
              GridValues(0.0, 1.0, 0.125)));
  cases->push_back(
      WithGen(Case("_contrib_bipartite_matching", {{"threshold", "0.05"}, {"topk", "2"}},
                   {{2, 6, 5}}, MatchingRef(false, 0.05, 2), "topk"),
              GridValues(0.0, 1.0, 0.0625)));

  cases->push_back(NotInMXNet(
      WithGen(Case("_contrib_bipartite_matching", {{"threshold", "0.1"}}, {{4, 3}},
                   MatchingRef(false, 0.1, -1), "nan_scores"),
              Values({0.5, NAN, 0.25, NAN, 0.75, 0.5, 0.125, 0.875, NAN, 0.25, NAN, 0.625})),
      "MXNet sorts NaN scores with a comparison that is not an ordering (undefined order); here "
      "they rank last"));

  // ---- box_encode: positives, negatives, ignored
  {
    const int64_t b = 2, n = 5, m = 3;
    std::vector<double> samples = {1, -1, 1, 0, 1, 1, 1, -1, 1, 0};
    std::vector<double> matches = {0, -1, 2, 1, 1, 2, 0, -1, 1, 0};
    std::vector<double> anchors = Anchors(b * n, true, 40), refs = Anchors(b * m, true, 41);
    OpCase c = Case("_contrib_box_encode", {}, {{b, n}, {b, n}, {b, n, 4}, {b, m, 4}, {4}, {4}},
                    BoxEncodeRef, "mixed");
    c = WithGen(c, PerInput({Values(samples), Values(matches), Values(anchors), Values(refs),
                             Values({0.0, 0.1, -0.1, 0.2}), Values({0.1, 0.1, 0.2, 0.2})}));
    cases->push_back(WithTol(c, 1e-5, 1e-5));
  }

  // ---- box_decode: center and corner anchors, clip
  {
    const double ones[4] = {1, 1, 1, 1}, stds[4] = {0.1, 0.1, 0.2, 0.2};
    cases->push_back(WithTol(WithGen(Case("_contrib_box_decode", {}, {{2, 6, 4}, {1, 6, 4}},
                                          BoxDecodeRef(ones, -1, false), "center"),
                                     PerInput({Uniform(-1, 1), Values(Anchors(6, false, 42))})),
                             1e-5, 1e-5));
    cases->push_back(
        WithTol(WithGen(Case("_contrib_box_decode",
                             {{"format", "corner"},
                              {"std0", "0.1"},
                              {"std1", "0.1"},
                              {"std2", "0.2"},
                              {"std3", "0.2"},
                              {"clip", "0.3"}},
                             {{2, 5, 4}, {1, 5, 4}}, BoxDecodeRef(stds, 0.3, true), "corner_clip"),
                        PerInput({Uniform(-3, 3), Values(Anchors(5, true, 43))})),
                1e-5, 1e-5));
  }

  // ---- MultiBoxPrior
  cases->push_back(WithTol(Case("_contrib_MultiBoxPrior", {}, {{1, 3, 4, 5}},
                                MultiBoxPriorRef({1}, {1}, false, {-1, -1}, {0.5, 0.5}), "default"),
                           1e-5, 1e-6));
  cases->push_back(
      WithTol(Case("_contrib_MultiBoxPrior",
                   {{"sizes", "(0.3, 0.5, 0.8)"}, {"ratios", "(1, 2, 0.5)"}, {"clip", "True"}},
                   {{2, 3, 5, 3}},
                   MultiBoxPriorRef({0.3, 0.5, 0.8}, {1, 2, 0.5}, true, {-1, -1}, {0.5, 0.5}),
                   "sizes_ratios_clip"),
              1e-5, 1e-6));
  cases->push_back(
      WithTol(Case("_npx_multibox_prior",
                   {{"sizes", "[0.2]"},
                    {"ratios", "[1, 3]"},
                    {"steps", "(0.25, 0.2)"},
                    {"offsets", "(0.3, 0.7)"}},
                   {{1, 1, 3, 4}}, MultiBoxPriorRef({0.2}, {1, 3}, false, {0.25, 0.2}, {0.3, 0.7}),
                   "steps_offsets"),
              1e-5, 1e-6));

  // ---- MultiBoxDetection: scores on a 1/16 grid (ties), per class / forced, topk, no nms
  {
    const int64_t n = 20, classes = 4;
    auto add = [&](MbdOpts o, std::string note, int64_t batch = 2) {
      OpCase c = Case("_contrib_MultiBoxDetection", MbdAttrs(o),
                      {{batch, classes, n}, {batch, n * 4}, {1, n, 4}}, MultiBoxDetectionRef(o),
                      std::move(note));
      c = WithGen(
          c, PerInput({GridValues(0.0, 0.5, 1.0 / 16), Uniform(-1, 1), Values(SsdAnchors(n))}));
      cases->push_back(WithTol(c, 1e-5, 1e-5));
    };
    MbdOpts o;
    add(o, "default");
    o.force = true;
    o.nms = 0.3;
    add(o, "force_suppress");
    o.force = false;
    o.topk = 6;
    o.threshold = 0.2;
    add(o, "topk_threshold");
    o.topk = -1;
    o.nms = 0;  // no sorting, no suppression
    o.clip = false;
    add(o, "no_nms_no_clip", 1);
  }

  // ---- MultiBoxTarget: matching, thresholds, padding rows, hard negative mining
  {
    const int64_t n = 20, classes = 3, slots = 4;
    auto add = [&](MbtOpts o, AttrDict attrs, std::vector<int64_t> counts, std::string note) {
      const int64_t batch = static_cast<int64_t>(counts.size());
      OpCase c = Case("_contrib_MultiBoxTarget", attrs,
                      {{1, n, 4}, {batch, slots, 5}, {batch, classes, n}}, MultiBoxTargetRef(o),
                      std::move(note));
      c = WithGen(c, PerInput({Values(SsdAnchors(n)), Values(SsdLabels(batch, slots, counts)),
                               Uniform(-2, 2)}));
      cases->push_back(WithTol(c, 1e-4, 1e-4));
    };
    add(MbtOpts{}, {}, {2, 0, 4}, "default");
    MbtOpts mining{0.5, -1, 2.0, 0.5};
    add(mining, {{"negative_mining_ratio", "2"}, {"negative_mining_thresh", "0.5"}}, {1, 3},
        "negative_mining");
    MbtOpts loose{0.3, 7, -1, 0.5};
    add(loose, {{"overlap_threshold", "0.3"}, {"ignore_label", "7"}}, {3}, "overlap_ignore");
  }

  // ---- Proposal / MultiProposal
  {
    PropOpts o;
    cases->push_back(ProposalCase(o, 1, 4, 5, {60, 75, 1.0}, "default"));
    o.output_score = true;
    o.min_size = 20;
    cases->push_back(ProposalCase(o, 1, 4, 5, {64, 64, 0.5}, "score_min_size"));
    o.post = 40;  // more rows than survive: MXNet repeats them cyclically
    o.pre = -1;
    o.thresh = 0.5;
    cases->push_back(ProposalCase(o, 1, 3, 3, {48, 40, 1.0}, "cyclic_all"));
    o.iou_loss = true;
    o.post = 10;
    o.pre = 20;
    o.output_score = false;
    cases->push_back(ProposalCase(o, 1, 4, 4, {64, 64, 1.0}, "iou_loss"));
    PropOpts m;
    m.post = 8;
    m.output_score = true;
    cases->push_back(ProposalCase(m, 2, 4, 5, {60, 75, 1.0, 50, 64, 2.0}, "multi_batch"));
  }
}

HN_ERROR_CASES(Detection) {
  const auto kInv = StatusCode::kInvalidArgument;
  const auto kShape = StatusCode::kShapeError;
  cases->push_back(Rejected("_contrib_box_nms", {}, {{4, 4}}, kShape,
                            {"_contrib_box_nms(node)", "box_width 4"}));
  cases->push_back(Rejected("_contrib_box_nms", {{"score_index", "3"}}, {{2, 6}}, kInv,
                            {"_contrib_box_nms(node)", "score_index 3", "overlaps"}));
  cases->push_back(Rejected("_contrib_box_nms", {{"id_index", "1"}}, {{2, 6}}, kInv,
                            {"_contrib_box_nms(node)", "id_index and score_index"}));
  cases->push_back(Rejected("_contrib_box_nms", {{"coord_start", "3"}}, {{2, 6}}, kInv,
                            {"_contrib_box_nms(node)", "coordinates [3, 6]"}));
  cases->push_back(Rejected("_contrib_box_nms", {{"in_format", "xywh"}}, {{2, 6}}, kInv,
                            {"_contrib_box_nms(node)", "in_format", "xywh"}));
  cases->push_back(Rejected("_contrib_box_nms", {}, {{2, 6}}, StatusCode::kTypeError,
                            {"_contrib_box_nms(node)", "int32"}, {DType::kInt32}));
  cases->push_back(Rejected("_contrib_box_iou", {}, {{3, 5}, {2, 4}}, kShape,
                            {"_contrib_box_iou(node)", "lhs", "(3, 5)"}));
  cases->push_back(Rejected("_contrib_bipartite_matching", {}, {{3, 4}}, kInv,
                            {"_contrib_bipartite_matching(node)", "threshold"}));
  cases->push_back(Rejected("_contrib_bipartite_matching", {{"threshold", "0.1"}}, {{4}}, kShape,
                            {"_contrib_bipartite_matching(node)", "(4,)"}));
  cases->push_back(Rejected("_contrib_box_encode", {},
                            {{2, 5}, {2, 5}, {2, 6, 4}, {2, 3, 4}, {4}, {4}}, kShape,
                            {"_contrib_box_encode(node)", "anchors"}));
  cases->push_back(Rejected("_contrib_box_decode", {}, {{2, 5, 4}, {1, 6, 4}}, kShape,
                            {"_contrib_box_decode(node)", "anchors (1, 6, 4)"}));
  cases->push_back(Rejected("_contrib_box_decode", {}, {{2, 5, 3}, {1, 5, 4}}, kShape,
                            {"_contrib_box_decode(node)", "data"}));
  cases->push_back(Rejected("_contrib_MultiBoxPrior", {{"offsets", "(0.5, 1.5)"}}, {{1, 3, 4, 4}},
                            kInv, {"_contrib_MultiBoxPrior(node)", "offsets"}));
  cases->push_back(Rejected("_contrib_MultiBoxPrior", {{"steps", "(0.1,)"}}, {{1, 3, 4, 4}}, kInv,
                            {"_contrib_MultiBoxPrior(node)", "steps"}));
  cases->push_back(Rejected("_contrib_MultiBoxPrior", {}, {{3, 4, 4}}, kShape,
                            {"_contrib_MultiBoxPrior(node)", "(3, 4, 4)"}));
  cases->push_back(Rejected("_contrib_MultiBoxDetection", {{"variances", "(0.1, 0.2)"}},
                            {{1, 3, 5}, {1, 20}, {1, 5, 4}}, kInv,
                            {"_contrib_MultiBoxDetection(node)", "variances"}));
  cases->push_back(Rejected("_contrib_MultiBoxDetection", {}, {{1, 3, 5}, {1, 16}, {1, 5, 4}},
                            kShape, {"_contrib_MultiBoxDetection(node)", "loc_pred"}));
  cases->push_back(Rejected("_contrib_MultiBoxTarget", {}, {{2, 5, 4}, {1, 2, 5}, {1, 3, 5}},
                            kShape, {"_contrib_MultiBoxTarget(node)", "anchor"}));
  cases->push_back(Rejected("_contrib_MultiBoxTarget", {}, {{1, 5, 4}, {1, 2, 4}, {1, 3, 5}},
                            kShape, {"_contrib_MultiBoxTarget(node)", "label"}));
  cases->push_back(Rejected("_contrib_Proposal", {}, {{2, 24, 4, 4}, {2, 48, 4, 4}, {2, 3}}, kShape,
                            {"_contrib_Proposal(node)", "one image", "_contrib_MultiProposal"}));
  cases->push_back(Rejected("_contrib_Proposal", {}, {{1, 10, 4, 4}, {1, 20, 4, 4}, {1, 3}}, kShape,
                            {"_contrib_Proposal(node)", "2 * 12 channels"}));
  cases->push_back(Rejected("_contrib_MultiProposal", {{"rpn_post_nms_top_n", "0"}},
                            {{1, 24, 4, 4}, {1, 48, 4, 4}, {1, 3}}, kInv,
                            {"_contrib_MultiProposal(node)", "rpn_post_nms_top_n"}));
  cases->push_back(Rejected("_contrib_MultiProposal", {}, {{1, 24, 4, 4}, {1, 48, 4, 4}, {1, 3}},
                            StatusCode::kTypeError, {"_contrib_MultiProposal(node)", "float64"},
                            {DType::kFloat64, DType::kFloat64, DType::kFloat64}));
}

}  // namespace conformance
}  // namespace hybridnet
