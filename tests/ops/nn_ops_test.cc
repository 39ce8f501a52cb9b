// Convolution, Deconvolution, Pooling and BatchNorm against naive direct references written
// independently here (double accumulation, no im2col), plus shape inference and errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "hybridnet/base.h"
#include "hybridnet/op.h"

namespace hybridnet {
namespace {

using Dims = std::vector<int64_t>;

struct T {
  Shape shape;
  std::vector<float> v;
};

T Rand(const Shape& shape, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  T t{shape, std::vector<float>(static_cast<size_t>(shape.Size()))};
  for (auto& x : t.v) x = dist(rng);
  return t;
}

T Zeros(const Shape& shape) {
  return T{shape, std::vector<float>(static_cast<size_t>(shape.Size()))};
}

std::string Tup(const Dims& d) { return Shape(d).ToString(); }

/// Parses attrs, infers shapes (all inputs known) and types, allocates the outputs (filled with
/// NaN so unwritten elements show) and runs the CPU kernel through the registry.
std::vector<T> RunOp(const std::string& op_name, const AttrDict& dict, const std::vector<T>& ins,
                   bool is_train = false, size_t num_outputs = 0) {
  const Op& op = OpRegistry::Global().Get(op_name);
  NodeAttrs attrs = MakeNodeAttrs(op, "node0", dict);
  EXPECT_EQ(op.NumInputs(attrs), ins.size());
  std::vector<Shape> in_shapes;
  for (const auto& t : ins) in_shapes.push_back(t.shape);
  const size_t n_out = num_outputs ? num_outputs : op.NumOutputs(attrs);
  std::vector<Shape> out_shapes(n_out);
  EXPECT_TRUE(op.infer_shape(attrs, &in_shapes, &out_shapes));
  for (size_t i = 0; i < ins.size(); ++i) EXPECT_EQ(in_shapes[i], ins[i].shape) << "input " << i;
  std::vector<DType> in_types(ins.size(), DType::kFloat32), out_types(n_out, DType::kUnknown);
  EXPECT_TRUE(op.infer_type(attrs, &in_types, &out_types));
  for (DType d : out_types) EXPECT_EQ(d, DType::kFloat32);
  std::vector<T> outs;
  for (const auto& s : out_shapes)
    outs.push_back(T{s, std::vector<float>(static_cast<size_t>(s.Size()),
                                           std::numeric_limits<float>::quiet_NaN())});
  std::vector<TBlob> in_blobs, out_blobs;
  for (const auto& t : ins)
    in_blobs.push_back(TBlob{const_cast<float*>(t.v.data()), t.shape, DType::kFloat32});
  for (auto& t : outs) out_blobs.push_back(TBlob{t.v.data(), t.shape, DType::kFloat32});
  OpContext ctx;
  ctx.is_train = is_train;
  op.compute(ctx, attrs, in_blobs, out_blobs);
  return outs;
}

void ExpectClose(const T& got, const T& want, double atol = 1e-4, double rtol = 1e-4,
                 const std::string& what = "") {
  ASSERT_EQ(got.shape, want.shape) << what;
  int bad = 0;
  for (size_t i = 0; i < want.v.size(); ++i) {
    const double g = got.v[i], w = want.v[i];
    const bool ok =
        (std::isnan(w) && std::isnan(g)) || std::fabs(g - w) <= atol + rtol * std::fabs(w);
    if (!ok && ++bad <= 5) {
      ADD_FAILURE() << what << " element " << i << ": got " << g << ", want " << w;
    }
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << want.v.size() << " elements differ";
}

void ExpectError(const std::function<void()>& f, StatusCode code,
                 const std::vector<std::string>& fragments) {
  try {
    f();
    ADD_FAILURE() << "no error raised";
  } catch (const Error& e) {
    EXPECT_EQ(static_cast<int>(e.code()), static_cast<int>(code)) << e.what();
    for (const auto& frag : fragments)
      EXPECT_NE(std::string(e.what()).find(frag), std::string::npos)
          << "message '" << e.what() << "' lacks '" << frag << "'";
  }
}

/// Runs only shape inference; returns the filled shapes.
struct Inferred {
  bool complete;
  std::vector<Shape> in, out;
};
Inferred Infer(const std::string& op_name, const AttrDict& dict, std::vector<Shape> in,
               size_t n_out = 1, const std::string& node = "node0") {
  const Op& op = OpRegistry::Global().Get(op_name);
  NodeAttrs attrs = MakeNodeAttrs(op, node, dict);
  std::vector<Shape> out(n_out);
  bool complete = op.infer_shape(attrs, &in, &out);
  return {complete, in, out};
}

// ---------------------------------------------------------------------------------------------
// Window geometry of the references: spatial tuples right-aligned into 3 dims.

struct Win3 {
  int64_t k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, p[3] = {0, 0, 0}, d[3] = {1, 1, 1};
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
};

Win3 MakeWin3(const Dims& k, const Dims& s, const Dims& p, const Dims& d, const Dims& in,
              const Dims& out) {
  Win3 w;
  const size_t off = 3 - k.size();
  for (size_t i = 0; i < k.size(); ++i) {
    w.k[off + i] = k[i];
    w.s[off + i] = s[i];
    w.p[off + i] = p[i];
    w.d[off + i] = d[i];
    w.in[off + i] = in[i];
    w.out[off + i] = out[i];
  }
  return w;
}

Dims Spatial(const Shape& s) { return Dims(s.begin() + 2, s.end()); }

// Direct convolution: every output sums its window over the group's channels.
T RefConv(const T& x, const T& w, const T* b, const Dims& k, const Dims& s, const Dims& p,
          const Dims& d, int64_t groups) {
  const int64_t N = x.shape[0], C = x.shape[1], F = w.shape[0];
  const Dims in = Spatial(x.shape);
  Dims out;
  for (size_t i = 0; i < k.size(); ++i)
    out.push_back((in[i] + 2 * p[i] - (d[i] * (k[i] - 1) + 1)) / s[i] + 1);
  Dims ydims = {N, F};
  ydims.insert(ydims.end(), out.begin(), out.end());
  T y = Zeros(Shape(ydims));
  const Win3 g = MakeWin3(k, s, p, d, in, out);
  const int64_t Cg = C / groups, Fg = F / groups;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t f = 0; f < F; ++f) {
      const int64_t grp = f / Fg;
      for (int64_t od = 0; od < g.out[0]; ++od)
        for (int64_t oh = 0; oh < g.out[1]; ++oh)
          for (int64_t ow = 0; ow < g.out[2]; ++ow) {
            double acc = b ? b->v[static_cast<size_t>(f)] : 0.0;
            for (int64_t cc = 0; cc < Cg; ++cc) {
              const int64_t c = grp * Cg + cc;
              for (int64_t a = 0; a < g.k[0]; ++a)
                for (int64_t bb = 0; bb < g.k[1]; ++bb)
                  for (int64_t e = 0; e < g.k[2]; ++e) {
                    const int64_t id = od * g.s[0] - g.p[0] + a * g.d[0];
                    const int64_t ih = oh * g.s[1] - g.p[1] + bb * g.d[1];
                    const int64_t iw = ow * g.s[2] - g.p[2] + e * g.d[2];
                    if (id < 0 || ih < 0 || iw < 0 || id >= g.in[0] || ih >= g.in[1] ||
                        iw >= g.in[2])
                      continue;
                    const int64_t xi = (((n * C + c) * g.in[0] + id) * g.in[1] + ih) * g.in[2] + iw;
                    const int64_t wi = (((f * Cg + cc) * g.k[0] + a) * g.k[1] + bb) * g.k[2] + e;
                    acc += static_cast<double>(x.v[static_cast<size_t>(xi)]) *
                           w.v[static_cast<size_t>(wi)];
                  }
            }
            const int64_t yi = (((n * F + f) * g.out[0] + od) * g.out[1] + oh) * g.out[2] + ow;
            y.v[static_cast<size_t>(yi)] = static_cast<float>(acc);
          }
    }
  return y;
}

// Transposed convolution as a scatter: every input element spreads weight * x over its taps.
T RefDeconv(const T& x, const T& w, const T* b, const Dims& k, const Dims& s, const Dims& p,
            const Dims& d, const Dims& adj, int64_t groups, int64_t F) {
  const int64_t N = x.shape[0], C = x.shape[1];
  const Dims in = Spatial(x.shape);
  Dims out;
  for (size_t i = 0; i < k.size(); ++i)
    out.push_back(s[i] * (in[i] - 1) + d[i] * (k[i] - 1) + 1 - 2 * p[i] + adj[i]);
  Dims ydims = {N, F};
  ydims.insert(ydims.end(), out.begin(), out.end());
  const Win3 g = MakeWin3(k, s, p, d, in, out);
  const int64_t Cg = C / groups, Fg = F / groups;
  std::vector<double> acc(static_cast<size_t>(Shape(ydims).Size()), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      const int64_t grp = c / Cg;
      for (int64_t id = 0; id < g.in[0]; ++id)
        for (int64_t ih = 0; ih < g.in[1]; ++ih)
          for (int64_t iw = 0; iw < g.in[2]; ++iw) {
            const int64_t xi = (((n * C + c) * g.in[0] + id) * g.in[1] + ih) * g.in[2] + iw;
            const double xv = x.v[static_cast<size_t>(xi)];
            for (int64_t fl = 0; fl < Fg; ++fl) {
              const int64_t f = grp * Fg + fl;
              for (int64_t a = 0; a < g.k[0]; ++a)
                for (int64_t bb = 0; bb < g.k[1]; ++bb)
                  for (int64_t e = 0; e < g.k[2]; ++e) {
                    const int64_t od = id * g.s[0] - g.p[0] + a * g.d[0];
                    const int64_t oh = ih * g.s[1] - g.p[1] + bb * g.d[1];
                    const int64_t ow = iw * g.s[2] - g.p[2] + e * g.d[2];
                    if (od < 0 || oh < 0 || ow < 0 || od >= g.out[0] || oh >= g.out[1] ||
                        ow >= g.out[2])
                      continue;
                    const int64_t wi = (((c * Fg + fl) * g.k[0] + a) * g.k[1] + bb) * g.k[2] + e;
                    const int64_t yi =
                        (((n * F + f) * g.out[0] + od) * g.out[1] + oh) * g.out[2] + ow;
                    acc[static_cast<size_t>(yi)] += xv * w.v[static_cast<size_t>(wi)];
                  }
            }
          }
    }
  T y = Zeros(Shape(ydims));
  const int64_t plane = g.out[0] * g.out[1] * g.out[2];
  for (size_t i = 0; i < acc.size(); ++i) {
    const int64_t f = (static_cast<int64_t>(i) / plane) % F;
    y.v[i] = static_cast<float>(acc[i] + (b ? b->v[static_cast<size_t>(f)] : 0.0));
  }
  return y;
}

// ---------------------------------------------------------------------------------------------
// Convolution

struct ConvCase {
  Dims data;
  int64_t num_filter;
  Dims kernel, stride, pad, dilate;
  int64_t groups;
  bool no_bias;
};

bool AllAre(const Dims& d, int64_t v) {
  return std::all_of(d.begin(), d.end(), [v](int64_t x) { return x == v; });
}

AttrDict ConvAttrs(const ConvCase& c, bool write_defaults) {
  AttrDict a = {{"kernel", Tup(c.kernel)}, {"num_filter", std::to_string(c.num_filter)}};
  if (write_defaults || !AllAre(c.stride, 1)) a["stride"] = Tup(c.stride);
  if (write_defaults || !AllAre(c.pad, 0)) a["pad"] = Tup(c.pad);
  if (write_defaults || !AllAre(c.dilate, 1)) a["dilate"] = Tup(c.dilate);
  if (write_defaults || c.groups != 1) a["num_group"] = std::to_string(c.groups);
  if (write_defaults || c.no_bias) a["no_bias"] = c.no_bias ? "True" : "False";
  return a;
}

void CheckConv(const ConvCase& c, uint32_t seed, bool write_defaults = false) {
  SCOPED_TRACE("conv data " + Tup(c.data) + " F=" + std::to_string(c.num_filter) + " k=" +
               Tup(c.kernel) + " s=" + Tup(c.stride) + " p=" + Tup(c.pad) + " d=" +
               Tup(c.dilate) + " g=" + std::to_string(c.groups));
  T x = Rand(Shape(c.data), seed);
  Dims wd = {c.num_filter, c.data[1] / c.groups};
  wd.insert(wd.end(), c.kernel.begin(), c.kernel.end());
  T w = Rand(Shape(wd), seed + 1);
  T b = Rand(Shape({c.num_filter}), seed + 2);
  std::vector<T> ins = {x, w};
  if (!c.no_bias) ins.push_back(b);
  auto outs = RunOp("Convolution", ConvAttrs(c, write_defaults), ins);
  ExpectClose(outs[0], RefConv(x, w, c.no_bias ? nullptr : &b, c.kernel, c.stride, c.pad,
                               c.dilate, c.groups));
}

TEST(NnConvolution, Conv2DMatchesDirectReference) {
  const std::vector<ConvCase> cases = {
      {{2, 3, 9, 11}, 8, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, false},
      {{1, 4, 10, 10}, 6, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 2, true},
      {{1, 3, 12, 12}, 4, {3, 3}, {1, 1}, {2, 2}, {2, 2}, 1, false},       // dilation
      {{1, 3, 13, 12}, 5, {3, 2}, {2, 3}, {1, 0}, {2, 1}, 1, false},       // mixed everything
      {{2, 6, 7, 9}, 6, {1, 7}, {1, 1}, {0, 3}, {1, 1}, 1, false},         // inception 1x7
      {{2, 6, 9, 7}, 6, {7, 1}, {1, 1}, {3, 0}, {1, 1}, 1, false},         // inception 7x1
      {{2, 16, 5, 5}, 8, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 1, false},        // pointwise
      {{2, 16, 5, 5}, 8, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 4, true},         // grouped pointwise
      {{2, 8, 6, 7}, 4, {1, 1}, {2, 2}, {0, 0}, {1, 1}, 1, false},         // strided 1x1
      {{1, 4, 5, 5}, 4, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1, false},         // padded 1x1
      {{1, 1, 28, 28}, 20, {5, 5}, {1, 1}, {0, 0}, {1, 1}, 1, false},      // lenet conv1
      {{1, 3, 23, 23}, 8, {7, 7}, {2, 2}, {3, 3}, {1, 1}, 1, false},       // resnet stem
      {{2, 6, 8, 8}, 9, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 3, false},         // groups 3
      {{1, 5, 4, 4}, 3, {4, 4}, {1, 1}, {0, 0}, {1, 1}, 1, false},         // kernel == input
      {{1, 2, 3, 3}, 2, {5, 5}, {1, 1}, {1, 1}, {1, 1}, 1, false},         // kernel > input, padded
      {{1, 2, 9, 9}, 3, {3, 3}, {3, 3}, {0, 0}, {1, 1}, 1, false},         // stride == kernel
      {{1, 2, 10, 10}, 3, {2, 2}, {4, 4}, {0, 0}, {1, 1}, 1, false},       // stride > kernel
      {{1, 2, 6, 6}, 3, {3, 3}, {1, 1}, {4, 4}, {1, 1}, 1, false},         // pad > kernel
  };
  uint32_t seed = 100;
  for (const auto& c : cases) CheckConv(c, seed += 10);
}

TEST(NnConvolution, DepthwiseMatchesDirectReference) {
  const std::vector<ConvCase> cases = {
      {{1, 8, 10, 10}, 8, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 8, false},       // mobilenet
      {{2, 4, 9, 9}, 8, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 4, true},          // multiplier 2
      {{2, 6, 11, 8}, 6, {3, 3}, {2, 1}, {2, 1}, {2, 2}, 6, false},        // dilated, strided
      {{1, 3, 7, 12}, 3, {1, 5}, {1, 1}, {0, 2}, {1, 1}, 3, false},
      {{1, 4, 20}, 4, {5}, {2}, {2}, {1}, 4, false},                       // 1-D
      {{1, 2, 4, 5, 6}, 4, {3, 3, 3}, {1, 2, 1}, {1, 1, 1}, {1, 1, 2}, 2, false},  // 3-D
      {{1, 5, 6, 6}, 5, {3, 3}, {1, 1}, {3, 3}, {1, 1}, 5, false},         // pad > kernel
  };
  uint32_t seed = 300;
  for (const auto& c : cases) CheckConv(c, seed += 10);
}

TEST(NnConvolution, Conv1DAnd3DMatchDirectReference) {
  const std::vector<ConvCase> cases = {
      {{2, 4, 20}, 6, {5}, {2}, {2}, {1}, 1, false},
      {{1, 4, 17}, 4, {3}, {1}, {2}, {2}, 2, true},
      {{3, 2, 8}, 5, {1}, {1}, {0}, {1}, 1, false},                        // 1-D pointwise
      {{1, 3, 5, 6, 7}, 4, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1, false},
      {{2, 4, 6, 5, 4}, 4, {2, 3, 1}, {2, 1, 1}, {0, 1, 0}, {1, 1, 2}, 2, true},
      {{1, 2, 4, 4, 4}, 3, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, 1, false},  // 3-D 1x1x1
      {{1, 2, 5, 7, 6}, 3, {3, 1, 3}, {2, 2, 2}, {1, 0, 1}, {1, 1, 1}, 1, false},
  };
  uint32_t seed = 500;
  for (const auto& c : cases) CheckConv(c, seed += 10);
}

TEST(NnConvolution, LargeInputsSpanSeveralIm2ColChunks) {
  // Each of these needs several column chunks (RowsPerChunk in im2col-inl.h), so the kernel
  // runs im2col + sgemm over row ranges, including ranges that end mid-image.
  const std::vector<ConvCase> cases = {
      {{1, 64, 56, 56}, 16, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, false},
      {{1, 32, 60, 61}, 8, {5, 5}, {1, 2}, {2, 2}, {1, 1}, 2, false},
      {{1, 16, 10, 24, 24}, 4, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1, false},
  };
  uint32_t seed = 700;
  for (const auto& c : cases) CheckConv(c, seed += 10);
}

TEST(NnConvolution, AcceptsGluonAttributesAndIgnorableOnes) {
  ConvCase c{{1, 4, 6, 6}, 4, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 2, false};
  CheckConv(c, 900, /*write_defaults=*/true);
  T x = Rand(Shape({1, 4, 6, 6}), 1), w = Rand(Shape({4, 4, 3, 3}), 2);
  AttrDict a = {{"kernel", "(3,3)"},          {"num_filter", "4"},     {"no_bias", "True"},
                {"workspace", "2048"},        {"cudnn_tune", "fastest"}, {"cudnn_off", "True"},
                {"layout", "NCHW"},           {"__lr_mult__", "1.0"}};
  auto outs = RunOp("Convolution", a, {x, w});
  ExpectClose(outs[0], RefConv(x, w, nullptr, {3, 3}, {1, 1}, {0, 0}, {1, 1}, 1));
  EXPECT_NO_THROW(MakeNodeAttrs("Convolution", "c", {{"kernel", "(3,)"}, {"num_filter", "1"},
                                                     {"layout", "NCW"}, {"cudnn_tune", "None"}}));
  EXPECT_NO_THROW(MakeNodeAttrs("Convolution", "c", {{"kernel", "[3, 3, 3]"}, {"num_filter", "1"},
                                                     {"layout", "NCDHW"}}));
}

TEST(NnConvolution, InputNamesFollowNoBias) {
  const Op& op = OpRegistry::Global().Get("Convolution");
  NodeAttrs with = MakeNodeAttrs(op, "c", {{"kernel", "(3, 3)"}, {"num_filter", "2"}});
  NodeAttrs without = MakeNodeAttrs(op, "c", {{"kernel", "(3, 3)"}, {"num_filter", "2"},
                                              {"no_bias", "True"}});
  EXPECT_EQ(op.InputNames(with), (std::vector<std::string>{"data", "weight", "bias"}));
  EXPECT_EQ(op.InputNames(without), (std::vector<std::string>{"data", "weight"}));
  EXPECT_EQ(op.NumInputs(with), 3u);
  EXPECT_EQ(op.NumInputs(without), 2u);
  EXPECT_EQ(op.NumTotalOutputs(with), 1u);
}

TEST(NnConvolution, InfersDeferredWeightAndBiasShapes) {
  // Data known, weight and bias unknown (gluon deferred init): both are filled.
  auto r = Infer("Convolution", {{"kernel", "(3, 3)"}, {"num_filter", "8"}, {"num_group", "2"},
                                 {"stride", "(2, 2)"}, {"pad", "(1, 1)"}},
                 {Shape({2, 6, 15, 16}), Shape(), Shape()});
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.in[1], Shape({8, 3, 3, 3}));
  EXPECT_EQ(r.in[2], Shape({8}));
  EXPECT_EQ(r.out[0], Shape({2, 8, 8, 8}));

  // 1-D and 3-D weights.
  r = Infer("Convolution", {{"kernel", "(5,)"}, {"num_filter", "4"}, {"no_bias", "True"}},
            {Shape({1, 3, 10}), Shape()});
  EXPECT_EQ(r.in[1], Shape({4, 3, 5}));
  EXPECT_EQ(r.out[0], Shape({1, 4, 6}));
  r = Infer("Convolution", {{"kernel", "(1, 2, 3)"}, {"num_filter", "4"}, {"dilate", "(1, 2, 1)"}},
            {Shape({1, 3, 4, 5, 6}), Shape(), Shape()});
  EXPECT_EQ(r.in[1], Shape({4, 3, 1, 2, 3}));
  EXPECT_EQ(r.out[0], Shape({1, 4, 4, 3, 4}));

  // Data unknown: nothing but the bias can be inferred.
  r = Infer("Convolution", {{"kernel", "(3, 3)"}, {"num_filter", "8"}},
            {Shape(), Shape(), Shape()});
  EXPECT_FALSE(r.complete);
  EXPECT_EQ(r.in[2], Shape({8}));
  EXPECT_EQ(r.in[1].ndim(), 0u);

  // Unknown channel count: the weight's second dim stays unknown.
  r = Infer("Convolution", {{"kernel", "(3, 3)"}, {"num_filter", "8"}},
            {Shape({1, 0, 8, 8}), Shape(), Shape()});
  EXPECT_FALSE(r.complete);
  EXPECT_EQ(r.in[1], Shape({8, 0, 3, 3}));
  EXPECT_EQ(r.out[0], Shape({1, 8, 6, 6}));

  // MXNet's backward fill: batch from the output, spatial dims where stride is 1.
  const Op& op = OpRegistry::Global().Get("Convolution");
  NodeAttrs a = MakeNodeAttrs(op, "c", {{"kernel", "(3, 3)"}, {"num_filter", "8"},
                                        {"pad", "(1, 0)"}, {"stride", "(1, 2)"}});
  std::vector<Shape> in = {Shape({0, 3, 0, 0}), Shape(), Shape()};
  std::vector<Shape> out = {Shape({4, 8, 10, 5})};
  EXPECT_FALSE(op.infer_shape(a, &in, &out));
  EXPECT_EQ(in[0], Shape({4, 3, 10, 0}));
}

TEST(NnConvolution, RejectsBadAttributesAndShapes) {
  auto infer = [](AttrDict a, std::vector<Shape> in) {
    return [a, in] { Infer("Convolution", a, in, 1, "conv0"); };
  };
  // C % num_group
  ExpectError(infer({{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"num_group", "2"}},
                    {Shape({1, 3, 8, 8}), Shape(), Shape()}),
              StatusCode::kShapeError, {"Convolution(conv0)", "num_group 2", "3"});
  // num_filter % num_group
  ExpectError(infer({{"kernel", "(3, 3)"}, {"num_filter", "5"}, {"num_group", "2"}},
                    {Shape({1, 4, 8, 8}), Shape(), Shape()}),
              StatusCode::kInvalidArgument, {"Convolution(conv0)", "num_filter 5"});
  // Weight of the wrong shape.
  ExpectError(infer({{"kernel", "(3, 3)"}, {"num_filter", "4"}},
                    {Shape({1, 3, 8, 8}), Shape({4, 3, 5, 5}), Shape()}),
              StatusCode::kShapeError, {"Convolution(conv0)", "weight", "(4, 3, 3, 3)"});
  ExpectError(infer({{"kernel", "(3, 3)"}, {"num_filter", "4"}},
                    {Shape({1, 3, 8, 8}), Shape(), Shape({5})}),
              StatusCode::kShapeError, {"bias"});
  // Data of the wrong rank.
  ExpectError(infer({{"kernel", "(3, 3)"}, {"num_filter", "4"}},
                    {Shape({3, 8, 8}), Shape(), Shape()}),
              StatusCode::kShapeError, {"Convolution(conv0)", "4-D"});
  // Kernel larger than the padded input.
  ExpectError(infer({{"kernel", "(5, 5)"}, {"num_filter", "4"}, {"pad", "(1, 1)"}},
                    {Shape({1, 3, 2, 8}), Shape(), Shape()}),
              StatusCode::kShapeError, {"Convolution(conv0)", "exceeds"});
  // Output conflicting with a given one.
  {
    const Op& op = OpRegistry::Global().Get("Convolution");
    NodeAttrs a = MakeNodeAttrs(op, "conv0", {{"kernel", "(3, 3)"}, {"num_filter", "4"}});
    std::vector<Shape> in = {Shape({1, 3, 8, 8}), Shape(), Shape()};
    std::vector<Shape> out = {Shape({1, 4, 7, 7})};
    ExpectError([&] { op.infer_shape(a, &in, &out); }, StatusCode::kShapeError, {"output"});
  }
  // NHWC is GPU-only in MXNet.
  ExpectError(infer({{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"layout", "NHWC"}},
                    {Shape({1, 8, 8, 3}), Shape(), Shape()}),
              StatusCode::kUnsupported, {"Convolution(conv0)", "NHWC"});

  // Parse-time errors (MXNet's ParamParser), naming the op and node.
  auto parse = [](AttrDict a) { return [a] { MakeNodeAttrs("Convolution", "conv0", a); }; };
  ExpectError(parse({{"num_filter", "4"}}), StatusCode::kInvalidArgument,
              {"Convolution(conv0)", "kernel"});
  ExpectError(parse({{"kernel", "(3, 3)"}}), StatusCode::kInvalidArgument, {"num_filter"});
  ExpectError(parse({{"kernel", "(3, 3)"}, {"num_filter", "0"}}), StatusCode::kInvalidArgument,
              {"num_filter"});
  ExpectError(parse({{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"stride", "(1, 1, 1)"}}),
              StatusCode::kInvalidArgument, {"Convolution(conv0)", "stride"});
  ExpectError(parse({{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"pad", "(1,)"}}),
              StatusCode::kInvalidArgument, {"pad"});
  ExpectError(parse({{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"dilate", "(0, 1)"}}),
              StatusCode::kInvalidArgument, {"dilate"});
  ExpectError(parse({{"kernel", "(3, 0)"}, {"num_filter", "4"}}), StatusCode::kInvalidArgument,
              {"kernel"});
  ExpectError(parse({{"kernel", "(3, 3, 3, 3)"}, {"num_filter", "4"}}),
              StatusCode::kInvalidArgument, {"4-D"});
  ExpectError(parse({{"kernel", "()"}, {"num_filter", "4"}}), StatusCode::kInvalidArgument,
              {"0-D"});
  ExpectError(parse({{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"layout", "NCW"}}),
              StatusCode::kInvalidArgument, {"layout"});
  ExpectError(parse({{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"layout", "HWCN"}}),
              StatusCode::kInvalidArgument, {"layout"});
  ExpectError(parse({{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"cudnn_tune", "slow"}}),
              StatusCode::kInvalidArgument, {"cudnn_tune"});
  ExpectError(parse({{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"adj", "(1, 1)"}}),
              StatusCode::kInvalidArgument, {"adj"});
  ExpectError(parse({{"kernel", "(3, 3)"}, {"num_filter", "4.0"}}), StatusCode::kInvalidArgument,
              {"num_filter"});
}

// ---------------------------------------------------------------------------------------------
// Deconvolution

struct DeconvCase {
  Dims data;
  int64_t num_filter;
  Dims kernel, stride, pad, dilate, adj;
  int64_t groups;
  bool no_bias;
  Dims target;  // empty: not given
};

void CheckDeconv(const DeconvCase& c, uint32_t seed) {
  SCOPED_TRACE("deconv data " + Tup(c.data) + " F=" + std::to_string(c.num_filter) + " k=" +
               Tup(c.kernel) + " s=" + Tup(c.stride) + " p=" + Tup(c.pad) + " d=" +
               Tup(c.dilate) + " adj=" + Tup(c.adj) + " g=" + std::to_string(c.groups) +
               " target=" + Tup(c.target));
  T x = Rand(Shape(c.data), seed);
  Dims wd = {c.data[1], c.num_filter / c.groups};
  wd.insert(wd.end(), c.kernel.begin(), c.kernel.end());
  T w = Rand(Shape(wd), seed + 1);
  T b = Rand(Shape({c.num_filter}), seed + 2);
  AttrDict a = {{"kernel", Tup(c.kernel)},          {"num_filter", std::to_string(c.num_filter)},
                {"stride", Tup(c.stride)},          {"pad", Tup(c.pad)},
                {"dilate", Tup(c.dilate)},          {"adj", Tup(c.adj)},
                {"num_group", std::to_string(c.groups)}, {"no_bias", c.no_bias ? "True" : "False"}};
  Dims pad = c.pad, adj = c.adj;
  if (!c.target.empty()) {
    a["target_shape"] = Tup(c.target);
    // Expected pad/adj derived independently: the output must equal the target.
    for (size_t i = 0; i < c.kernel.size(); ++i) {
      int64_t full = c.stride[i] * (c.data[2 + i] - 1) + c.dilate[i] * (c.kernel[i] - 1) + 1;
      int64_t excess = full - c.target[i];
      pad[i] = (excess + 1) / 2;
      adj[i] = 2 * pad[i] - excess;
    }
  }
  std::vector<T> ins = {x, w};
  if (!c.no_bias) ins.push_back(b);
  auto outs = RunOp("Deconvolution", a, ins);
  T ref = RefDeconv(x, w, c.no_bias ? nullptr : &b, c.kernel, c.stride, pad, c.dilate, adj,
                    c.groups, c.num_filter);
  if (!c.target.empty()) {
    EXPECT_EQ(Spatial(ref.shape), c.target);
  }
  ExpectClose(outs[0], ref);
}

TEST(NnDeconvolution, MatchesScatterReference) {
  const std::vector<DeconvCase> cases = {
      {{1, 4, 5, 5}, 6, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, 1, false, {}},
      {{2, 3, 4, 6}, 5, {4, 4}, {2, 2}, {1, 1}, {1, 1}, {0, 0}, 1, true, {}},     // DCGAN-like
      {{1, 4, 5, 4}, 6, {3, 2}, {1, 2}, {0, 1}, {2, 1}, {0, 1}, 2, false, {}},    // groups, dilate
      {{2, 8, 3, 3}, 4, {1, 1}, {1, 1}, {0, 0}, {1, 1}, {0, 0}, 1, false, {}},    // pointwise
      {{1, 4, 3, 3}, 4, {1, 1}, {2, 2}, {0, 0}, {1, 1}, {1, 1}, 2, false, {}},    // strided 1x1
      {{1, 3, 7, 7}, 3, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, 3, false, {}},    // depthwise
      {{1, 3, 4, 4}, 2, {4, 4}, {2, 2}, {0, 0}, {1, 1}, {0, 0}, 1, true, {8, 8}},     // target
      {{1, 2, 5, 5}, 3, {3, 3}, {2, 2}, {0, 0}, {1, 1}, {0, 0}, 1, false, {10, 10}},  // odd excess
      {{2, 4, 9}, 6, {5}, {3}, {2}, {1}, {2}, 2, false, {}},                     // 1-D
      {{1, 2, 6}, 3, {3}, {2}, {1}, {1}, {0}, 1, true, {12}},                    // 1-D target
      {{1, 2, 3, 4, 3}, 4, {3, 3, 2}, {2, 1, 2}, {1, 1, 0}, {1, 1, 1}, {1, 0, 1}, 2, false, {}},
      {{1, 4, 48, 47}, 4, {4, 4}, {2, 2}, {1, 1}, {1, 1}, {0, 0}, 1, false, {}},  // >1 chunk
      {{1, 8, 70, 70}, 8, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, 2, true, {}},   // >1 chunk
  };
  uint32_t seed = 1100;
  for (const auto& c : cases) CheckDeconv(c, seed += 10);
}

TEST(NnDeconvolution, DefaultsAndShapeInference) {
  const Op& op = OpRegistry::Global().Get("Deconvolution");
  NodeAttrs a = MakeNodeAttrs(op, "d", {{"kernel", "(4, 4)"}, {"num_filter", "6"},
                                        {"stride", "(2, 2)"}, {"pad", "(1, 1)"},
                                        {"num_group", "2"}});
  // no_bias defaults to True for Deconvolution.
  EXPECT_EQ(op.InputNames(a), (std::vector<std::string>{"data", "weight"}));
  std::vector<Shape> in = {Shape({2, 4, 7, 5}), Shape()};
  std::vector<Shape> out(1);
  EXPECT_TRUE(op.infer_shape(a, &in, &out));
  EXPECT_EQ(in[1], Shape({4, 3, 4, 4}));
  EXPECT_EQ(out[0], Shape({2, 6, 14, 10}));

  auto r = Infer("Deconvolution", {{"kernel", "(3,)"}, {"num_filter", "2"}, {"no_bias", "False"},
                                   {"target_shape", "(9,)"}, {"stride", "(2,)"}},
                 {Shape({1, 5, 5}), Shape(), Shape()});
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.in[1], Shape({5, 2, 3}));
  EXPECT_EQ(r.in[2], Shape({2}));
  EXPECT_EQ(r.out[0], Shape({1, 2, 9}));

  auto bad = [](AttrDict attrs, std::vector<Shape> shapes) {
    return [attrs, shapes] { Infer("Deconvolution", attrs, shapes, 1, "deconv0"); };
  };
  ExpectError(bad({{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"stride", "(2, 2)"},
                   {"adj", "(2, 0)"}},
                  {Shape({1, 2, 4, 4}), Shape()}),
              StatusCode::kShapeError, {"Deconvolution(deconv0)", "adj"});
  ExpectError(bad({{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"target_shape", "(20, 20)"}},
                  {Shape({1, 2, 4, 4}), Shape()}),
              StatusCode::kShapeError, {"target_shape"});
  ExpectError(bad({{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"num_group", "2"}},
                  {Shape({1, 3, 4, 4}), Shape()}),
              StatusCode::kShapeError, {"Deconvolution(deconv0)", "num_group"});
  ExpectError(bad({{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"pad", "(3, 3)"}},
                  {Shape({1, 2, 2, 2}), Shape()}),
              StatusCode::kShapeError, {"not positive"});
  ExpectError(bad({{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"layout", "NHWC"}},
                  {Shape({1, 4, 4, 2}), Shape()}),
              StatusCode::kUnsupported, {"NHWC"});
  ExpectError([] { MakeNodeAttrs("Deconvolution", "deconv0", {{"kernel", "(3, 3)"},
                                                              {"num_filter", "4"},
                                                              {"adj", "(1,)"}}); },
              StatusCode::kInvalidArgument, {"Deconvolution(deconv0)", "adj"});
  ExpectError([] { MakeNodeAttrs("Deconvolution", "deconv0", {{"kernel", "(3, 3)"},
                                                              {"num_filter", "4"},
                                                              {"target_shape", "(8,)"}}); },
              StatusCode::kInvalidArgument, {"target_shape"});
}

// ---------------------------------------------------------------------------------------------
// Pooling

// Written from the spec (section 4.4), not from the kernel.
struct PoolSpec {
  std::string type = "max";
  Dims kernel, stride, pad;  // stride/pad may be empty (defaults)
  std::string convention = "valid";
  int include_pad = -1;  // -1: not given
  bool global = false;
  int p_value = 0;  // 0: not given
};

AttrDict PoolAttrs(const PoolSpec& s) {
  AttrDict a = {{"pool_type", s.type}, {"pooling_convention", s.convention}};
  if (!s.kernel.empty()) a["kernel"] = Tup(s.kernel);
  if (!s.stride.empty()) a["stride"] = Tup(s.stride);
  if (!s.pad.empty()) a["pad"] = Tup(s.pad);
  if (s.include_pad >= 0) a["count_include_pad"] = s.include_pad ? "True" : "False";
  if (s.global) a["global_pool"] = "True";
  if (s.p_value) a["p_value"] = std::to_string(s.p_value);
  return a;
}

T RefPool(const T& x, const PoolSpec& spec) {
  const Dims in = Spatial(x.shape);
  const size_t ns = in.size();
  Dims k = spec.kernel, s = spec.stride, p = spec.pad;
  if (spec.global) {
    k = in;
    s.assign(ns, 1);
    p.assign(ns, 0);
  }
  if (s.empty()) s.assign(ns, 1);
  if (p.empty()) p.assign(ns, 0);
  Dims out;
  for (size_t i = 0; i < ns; ++i) {
    const int64_t span = in[i] + 2 * p[i] - k[i];
    if (spec.global) {
      out.push_back(1);
    } else if (spec.convention == "valid") {
      out.push_back(span / s[i] + 1);
    } else if (spec.convention == "full") {
      out.push_back((span + s[i] - 1) / s[i] + 1);  // integer ceil
    } else {
      out.push_back((in[i] + 2 * p[i] + s[i] - 1) / s[i]);
    }
  }
  Dims ydims = {x.shape[0], x.shape[1]};
  ydims.insert(ydims.end(), out.begin(), out.end());
  T y = Zeros(Shape(ydims));
  const Win3 g = MakeWin3(k, s, p, Dims(ns, 1), in, out);
  const int64_t planes = x.shape[0] * x.shape[1];
  const int64_t isz = g.in[0] * g.in[1] * g.in[2], osz = g.out[0] * g.out[1] * g.out[2];
  const bool include = spec.include_pad != 0;
  const int pv = spec.type == "lp" ? spec.p_value : 1;
  for (int64_t pl = 0; pl < planes; ++pl)
    for (int64_t o = 0; o < osz; ++o) {
      const int64_t oi[3] = {o / (g.out[1] * g.out[2]), (o / g.out[2]) % g.out[1], o % g.out[2]};
      int64_t lo[3], hi[3];
      int64_t padded_count = 1, inside_count = 1;
      for (int i = 0; i < 3; ++i) {
        const int64_t start = oi[i] * g.s[i] - g.p[i];
        // Max windows stop at the image; sum windows at the padded image.
        const int64_t end = spec.type == "max" ? std::min(start + g.k[i], g.in[i])
                                               : std::min(start + g.k[i], g.in[i] + g.p[i]);
        padded_count *= end - start;
        lo[i] = std::max<int64_t>(start, 0);
        hi[i] = std::min(end, g.in[i]);
        inside_count *= std::max<int64_t>(0, hi[i] - lo[i]);
      }
      double acc = spec.type == "max" ? -static_cast<double>(FLT_MAX) : 0.0;
      for (int64_t a = lo[0]; a < hi[0]; ++a)
        for (int64_t b = lo[1]; b < hi[1]; ++b)
          for (int64_t c = lo[2]; c < hi[2]; ++c) {
            const double v = x.v[static_cast<size_t>(pl * isz + (a * g.in[1] + b) * g.in[2] + c)];
            if (spec.type == "max") {
              acc = std::max(acc, v);
            } else {
              acc += std::pow(v, pv);
            }
          }
      double r = acc;
      if (spec.type == "avg") r = acc / static_cast<double>(include ? padded_count : inside_count);
      if (spec.type == "lp") r = pv == 2 ? std::sqrt(acc) : pv == 3 ? std::cbrt(acc) : acc;
      y.v[static_cast<size_t>(pl * osz + o)] = static_cast<float>(r);
    }
  return y;
}

void CheckPool(const Dims& data, const PoolSpec& spec, uint32_t seed) {
  SCOPED_TRACE("pool " + spec.type + " data " + Tup(data) + " k=" + Tup(spec.kernel) + " s=" +
               Tup(spec.stride) + " p=" + Tup(spec.pad) + " " + spec.convention +
               " include_pad=" + std::to_string(spec.include_pad) +
               (spec.global ? " global" : ""));
  T x = Rand(Shape(data), seed, spec.type == "lp" ? 0.f : -1.f, 1.f);
  auto outs = RunOp("Pooling", PoolAttrs(spec), {x});
  T ref = RefPool(x, spec);
  if (spec.type == "max") {
    ASSERT_EQ(outs[0].shape, ref.shape);
    EXPECT_EQ(outs[0].v, ref.v);  // max pooling is exact
  } else {
    ExpectClose(outs[0], ref, 1e-5, 1e-5);
  }
}

TEST(NnPooling, MaxAvgSumLpMatchSpecReference) {
  const std::vector<std::pair<Dims, PoolSpec>> cases = {
      {{2, 3, 7, 9}, {"max", {3, 3}, {2, 2}, {1, 1}, "valid"}},
      {{2, 3, 7, 9}, {"max", {3, 3}, {2, 2}, {1, 1}, "full"}},
      {{1, 2, 8, 8}, {"max", {2, 2}, {2, 2}, {}, "valid"}},
      {{1, 2, 9, 6}, {"max", {3, 3}, {}, {}, "valid"}},                  // default stride 1
      {{1, 2, 6, 7}, {"max", {2, 3}, {3, 2}, {0, 1}, "full"}},
      {{1, 3, 7, 7}, {"avg", {3, 3}, {2, 2}, {1, 1}, "valid"}},           // include pad default
      {{1, 3, 7, 7}, {"avg", {3, 3}, {2, 2}, {1, 1}, "valid", 1}},
      {{1, 3, 7, 7}, {"avg", {3, 3}, {2, 2}, {1, 1}, "valid", 0}},
      {{1, 3, 8, 8}, {"avg", {3, 3}, {2, 2}, {1, 1}, "full", 1}},         // window past padded edge
      {{1, 3, 8, 8}, {"avg", {3, 3}, {2, 2}, {1, 1}, "full", 0}},
      {{1, 2, 10, 7}, {"avg", {4, 2}, {3, 2}, {2, 1}, "full", 1}},
      {{1, 2, 6, 6}, {"avg", {2, 2}, {2, 2}, {}, "valid"}},
      {{1, 2, 7, 5}, {"sum", {3, 2}, {2, 1}, {1, 1}, "full"}},
      {{1, 2, 7, 5}, {"lp", {3, 3}, {1, 2}, {1, 0}, "valid", -1, false, 1}},
      {{1, 2, 7, 5}, {"lp", {3, 3}, {1, 2}, {1, 0}, "valid", -1, false, 2}},
      {{1, 2, 7, 5}, {"lp", {2, 3}, {2, 2}, {1, 1}, "full", -1, false, 3}},
      {{2, 3, 11}, {"max", {3}, {2}, {1}, "full"}},                       // 1-D
      {{2, 3, 11}, {"avg", {4}, {3}, {2}, "full", 0}},
      {{2, 3, 11}, {"sum", {3}, {2}, {}, "valid"}},
      {{1, 2, 10}, {"max", {3}, {3}, {}, "same"}},                        // 1-D same
      {{1, 2, 10}, {"avg", {4}, {3}, {}, "same"}},
      {{1, 2, 5, 6, 7}, {"max", {2, 3, 2}, {2, 1, 2}, {1, 1, 0}, "full"}},  // 3-D
      {{1, 2, 5, 6, 7}, {"avg", {2, 3, 2}, {2, 2, 2}, {1, 1, 1}, "full", 0}},
      {{1, 2, 5, 6, 7}, {"avg", {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, "valid", 1}},
      {{1, 2, 4, 5, 6}, {"sum", {2, 2, 2}, {1, 2, 2}, {}, "valid"}},
      {{2, 4, 7, 7}, {"avg", {}, {}, {}, "full", -1, true}},              // global, as gluon writes
      {{2, 4, 7, 7}, {"max", {1, 1}, {1, 1}, {0, 0}, "full", -1, true}},
      {{2, 4, 9}, {"sum", {}, {}, {}, "valid", -1, true}},
      {{1, 3, 3, 4, 5}, {"avg", {}, {}, {}, "valid", -1, true}},
      {{1, 3, 3, 4}, {"lp", {}, {}, {}, "valid", -1, true, 2}},
      {{1, 64, 112, 112}, {"max", {3, 3}, {2, 2}, {1, 1}, "valid"}},      // resnet stem pool
  };
  uint32_t seed = 2000;
  for (const auto& c : cases) CheckPool(c.first, c.second, seed += 10);
}

TEST(NnPooling, AverageDivisorFollowsMXNetRule) {
  // 1-D, x = 1..5, kernel 3, stride 2, pad 1, full: windows [-1,2) [1,4) [3,6) — the last one
  // stops at the padded edge (6) so its pre-clip size is 3; clipped to the image it has 2.
  T x{Shape({1, 1, 5}), {1, 2, 3, 4, 5}};
  auto with = RunOp("Pooling", {{"kernel", "(3,)"}, {"stride", "(2,)"}, {"pad", "(1,)"},
                              {"pool_type", "avg"}, {"pooling_convention", "full"}}, {x});
  ASSERT_EQ(with[0].shape, Shape({1, 1, 3}));
  EXPECT_FLOAT_EQ(with[0].v[0], 3.f / 3.f);
  EXPECT_FLOAT_EQ(with[0].v[1], 9.f / 3.f);
  EXPECT_FLOAT_EQ(with[0].v[2], 9.f / 3.f);
  auto without = RunOp("Pooling", {{"kernel", "(3,)"}, {"stride", "(2,)"}, {"pad", "(1,)"},
                                 {"pool_type", "avg"}, {"pooling_convention", "full"},
                                 {"count_include_pad", "False"}}, {x});
  EXPECT_FLOAT_EQ(without[0].v[0], 3.f / 2.f);
  EXPECT_FLOAT_EQ(without[0].v[1], 9.f / 3.f);
  EXPECT_FLOAT_EQ(without[0].v[2], 9.f / 2.f);
  // kernel 4, stride 3, no pad, full on 6: windows [0,4) [3,7)->[3,6): divisor 3 either way.
  T x6{Shape({1, 1, 6}), {1, 2, 3, 4, 5, 6}};
  auto full = RunOp("Pooling", {{"kernel", "(4,)"}, {"stride", "(3,)"}, {"pool_type", "avg"},
                              {"pooling_convention", "full"}}, {x6});
  ASSERT_EQ(full[0].shape, Shape({1, 1, 2}));
  EXPECT_FLOAT_EQ(full[0].v[0], 10.f / 4.f);
  EXPECT_FLOAT_EQ(full[0].v[1], 15.f / 3.f);
}

TEST(NnPooling, EmptyWindowsFollowTheReferenceKernel) {
  // Pad larger than the kernel leaves windows entirely in the padding: max gives -FLT_MAX,
  // average without padding gives 0 in 1-D/2-D and NaN in 3-D (MXNet's pool.h quirk).
  T x2{Shape({1, 1, 1, 1}), {5.f}};
  auto m = RunOp("Pooling", {{"kernel", "(1, 1)"}, {"pad", "(1, 1)"}}, {x2});
  ASSERT_EQ(m[0].shape, Shape({1, 1, 3, 3}));
  EXPECT_EQ(m[0].v[0], -FLT_MAX);
  EXPECT_EQ(m[0].v[4], 5.f);
  auto a2 = RunOp("Pooling", {{"kernel", "(1, 1)"}, {"pad", "(1, 1)"}, {"pool_type", "avg"},
                            {"count_include_pad", "False"}}, {x2});
  EXPECT_EQ(a2[0].v[0], 0.f);
  EXPECT_EQ(a2[0].v[4], 5.f);
  T x3{Shape({1, 1, 1, 1, 1}), {5.f}};
  auto a3 = RunOp("Pooling", {{"kernel", "(1, 1, 1)"}, {"pad", "(1, 1, 1)"}, {"pool_type", "avg"},
                            {"count_include_pad", "False"}}, {x3});
  ASSERT_EQ(a3[0].shape, Shape({1, 1, 3, 3, 3}));
  EXPECT_TRUE(std::isnan(a3[0].v[0]));
  EXPECT_EQ(a3[0].v[13], 5.f);
  // Max ignores NaN unless nothing else is in the window.
  T xn{Shape({1, 1, 1, 3}), {std::nanf(""), -2.f, std::nanf("")}};
  auto mn = RunOp("Pooling", {{"kernel", "(1, 3)"}}, {xn});
  EXPECT_EQ(mn[0].v[0], -2.f);
}

TEST(NnPooling, ChannelLastLayoutsMatchChannelFirst) {
  const Dims nchw = {2, 3, 7, 6};
  T x = Rand(Shape(nchw), 77);
  // NHWC copy of x.
  T xh = Zeros(Shape({2, 7, 6, 3}));
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t h = 0; h < 7; ++h)
        for (int64_t w = 0; w < 6; ++w)
          xh.v[static_cast<size_t>(((n * 7 + h) * 6 + w) * 3 + c)] =
              x.v[static_cast<size_t>(((n * 3 + c) * 7 + h) * 6 + w)];
  for (const char* type : {"max", "avg"}) {
    AttrDict a = {{"kernel", "(3, 2)"}, {"stride", "(2, 2)"}, {"pad", "(1, 1)"},
                  {"pool_type", type}, {"pooling_convention", "full"}};
    auto ref = RunOp("Pooling", a, {x});
    a["layout"] = "NHWC";
    auto got = RunOp("Pooling", a, {xh});
    const Shape& rs = ref[0].shape;
    ASSERT_EQ(got[0].shape, Shape({rs[0], rs[2], rs[3], rs[1]}));
    for (int64_t n = 0; n < rs[0]; ++n)
      for (int64_t c = 0; c < rs[1]; ++c)
        for (int64_t h = 0; h < rs[2]; ++h)
          for (int64_t w = 0; w < rs[3]; ++w)
            EXPECT_EQ(got[0].v[static_cast<size_t>(((n * rs[2] + h) * rs[3] + w) * rs[1] + c)],
                      ref[0].v[static_cast<size_t>(((n * rs[1] + c) * rs[2] + h) * rs[3] + w)]);
  }
  auto g = Infer("Pooling", {{"global_pool", "True"}, {"layout", "NWC"}, {"kernel", "(1,)"}},
                 {Shape({2, 9, 5})});
  EXPECT_EQ(g.out[0], Shape({2, 1, 5}));
}

TEST(NnPooling, OutputShapesPerConvention) {
  auto shape = [](AttrDict a, Shape in) { return Infer("Pooling", a, {in}).out[0]; };
  EXPECT_EQ(shape({{"kernel", "(3, 3)"}, {"stride", "(2, 2)"}}, Shape({1, 1, 6, 6})),
            Shape({1, 1, 2, 2}));
  EXPECT_EQ(shape({{"kernel", "(3, 3)"}, {"stride", "(2, 2)"}, {"pooling_convention", "full"}},
                  Shape({1, 1, 6, 6})),
            Shape({1, 1, 3, 3}));
  EXPECT_EQ(shape({{"kernel", "(3, 3)"}}, Shape({1, 1, 6, 6})), Shape({1, 1, 4, 4}));
  EXPECT_EQ(shape({{"kernel", "(2,)"}, {"stride", "(3,)"}, {"pooling_convention", "same"}},
                  Shape({1, 1, 10})),
            Shape({1, 1, 4}));
  EXPECT_EQ(shape({{"global_pool", "True"}}, Shape({4, 8, 7, 7})), Shape({4, 8, 1, 1}));
  EXPECT_EQ(shape({{"global_pool", "True"}, {"kernel", "(1, 1)"}}, Shape({4, 8, 5, 7, 7})),
            Shape({4, 8, 1, 1, 1}));
  // Unknown spatial dims stay unknown; unknown data returns false.
  EXPECT_EQ(shape({{"kernel", "(2, 2)"}}, Shape({0, 3, 0, 8})), Shape({0, 3, 0, 7}));
  EXPECT_FALSE(Infer("Pooling", {{"kernel", "(2, 2)"}}, {Shape()}).complete);
  const Op& op = OpRegistry::Global().Get("Pooling");
  NodeAttrs a = MakeNodeAttrs(op, "p", {{"kernel", "(2, 2)"}, {"pool_type", "max"}});
  EXPECT_EQ(op.NumTotalOutputs(a), 1u);
  EXPECT_EQ(op.InputNames(a), (std::vector<std::string>{"data"}));
}

TEST(NnPooling, RejectsBadAttributesAndShapes) {
  auto parse = [](AttrDict a) { return [a] { MakeNodeAttrs("Pooling", "pool0", a); }; };
  auto infer = [](AttrDict a, Shape in) {
    return [a, in] { Infer("Pooling", a, {in}, 1, "pool0"); };
  };
  ExpectError(parse({{"pool_type", "max"}}), StatusCode::kInvalidArgument,
              {"Pooling(pool0)", "kernel"});
  ExpectError(parse({{"kernel", "(2, 2)"}, {"pool_type", "median"}}), StatusCode::kInvalidArgument,
              {"pool_type"});
  ExpectError(parse({{"kernel", "(2, 2)"}, {"pooling_convention", "ceil"}}),
              StatusCode::kInvalidArgument, {"pooling_convention"});
  ExpectError(parse({{"kernel", "(2, 0)"}}), StatusCode::kInvalidArgument, {"kernel"});
  ExpectError(parse({{"kernel", "(2, 2)"}, {"stride", "(0, 1)"}}), StatusCode::kInvalidArgument,
              {"stride"});
  ExpectError(parse({{"kernel", "(2, 2)"}, {"stride", "(1, 1, 1)"}}),
              StatusCode::kInvalidArgument, {"stride"});
  ExpectError(parse({{"kernel", "(2, 2, 2, 2)"}}), StatusCode::kInvalidArgument, {"4-D"});
  ExpectError(parse({{"kernel", "(2, 2)"}, {"layout", "NCW"}}), StatusCode::kInvalidArgument,
              {"layout"});
  ExpectError(infer({{"kernel", "(2, 2)"}}, Shape({1, 3, 8})), StatusCode::kShapeError,
              {"Pooling(pool0)", "4-D"});
  ExpectError(infer({{"kernel", "(5, 5)"}, {"pad", "(1, 1)"}}, Shape({1, 3, 2, 8})),
              StatusCode::kShapeError, {"Pooling(pool0)", "exceeds"});
  ExpectError(infer({{"kernel", "(2, 2)"}, {"pool_type", "lp"}}, Shape({1, 3, 8, 8})),
              StatusCode::kInvalidArgument, {"p_value"});
  ExpectError(infer({{"kernel", "(2, 2)"}, {"pool_type", "lp"}, {"p_value", "4"}},
                    Shape({1, 3, 8, 8})),
              StatusCode::kUnsupported, {"p_value"});
  ExpectError(infer({{"kernel", "(2, 2)"}, {"pooling_convention", "same"}}, Shape({1, 3, 8, 8})),
              StatusCode::kShapeError, {"same"});
  ExpectError(infer({{"kernel", "(2,)"}, {"pad", "(1,)"}, {"pooling_convention", "same"}},
                    Shape({1, 3, 8})),
              StatusCode::kInvalidArgument, {"pad"});
  ExpectError(infer({{"global_pool", "True"}}, Shape({1, 3})), StatusCode::kShapeError, {"3-D"});
  ExpectError(infer({{"global_pool", "True"}}, Shape({1, 3, 2, 2, 2, 2})), StatusCode::kShapeError,
              {"5-D"});
}

// ---------------------------------------------------------------------------------------------
// BatchNorm

struct BnInputs {
  T x, gamma, beta, mean, var;
  std::vector<T> All() const { return {x, gamma, beta, mean, var}; }
};

BnInputs MakeBn(const Dims& data, int axis, uint32_t seed) {
  const int nd = static_cast<int>(data.size());
  const int64_t C = data[static_cast<size_t>(axis < 0 ? nd + axis : axis)];
  return {Rand(Shape(data), seed, -2.f, 2.f), Rand(Shape({C}), seed + 1, 0.5f, 1.5f),
          Rand(Shape({C}), seed + 2), Rand(Shape({C}), seed + 3, -0.5f, 0.5f),
          Rand(Shape({C}), seed + 4, 0.1f, 2.f)};
}

// y = (x - mean) / sqrt(var + eps) * g + b, channel = index along `axis`.
T RefBn(const BnInputs& in, int axis, double eps, bool fix_gamma, bool relu, bool batch_stats) {
  const Shape& s = in.x.shape;
  const int nd = static_cast<int>(s.ndim());
  const size_t ax = static_cast<size_t>(axis < 0 ? nd + axis : axis);
  int64_t inner = 1;
  for (size_t i = ax + 1; i < s.ndim(); ++i) inner *= s[i];
  const int64_t C = s[ax];
  std::vector<double> mean(static_cast<size_t>(C)), var(static_cast<size_t>(C));
  for (int64_t c = 0; c < C; ++c) {
    mean[static_cast<size_t>(c)] = in.mean.v[static_cast<size_t>(c)];
    var[static_cast<size_t>(c)] = in.var.v[static_cast<size_t>(c)];
  }
  if (batch_stats) {
    std::vector<double> sum(static_cast<size_t>(C), 0.0), sq(static_cast<size_t>(C), 0.0),
        cnt(static_cast<size_t>(C), 0.0);
    for (size_t i = 0; i < in.x.v.size(); ++i) {
      const size_t c = static_cast<size_t>((static_cast<int64_t>(i) / inner) % C);
      sum[c] += in.x.v[i];
      cnt[c] += 1;
    }
    for (size_t c = 0; c < sum.size(); ++c) mean[c] = sum[c] / cnt[c];
    for (size_t i = 0; i < in.x.v.size(); ++i) {
      const size_t c = static_cast<size_t>((static_cast<int64_t>(i) / inner) % C);
      sq[c] += (in.x.v[i] - mean[c]) * (in.x.v[i] - mean[c]);
    }
    for (size_t c = 0; c < sum.size(); ++c) var[c] = sq[c] / cnt[c];
  }
  T y = Zeros(s);
  for (size_t i = 0; i < in.x.v.size(); ++i) {
    const size_t c = static_cast<size_t>((static_cast<int64_t>(i) / inner) % C);
    const double g = fix_gamma ? 1.0 : in.gamma.v[c];
    double v = (in.x.v[i] - mean[c]) / std::sqrt(var[c] + eps) * g + in.beta.v[c];
    if (relu) v = std::max(v, 0.0);
    y.v[i] = static_cast<float>(v);
  }
  return y;
}

TEST(NnBatchNorm, InferenceMatchesFormula) {
  struct Case {
    Dims data;
    int axis;
    bool fix_gamma;
    std::string eps;  // empty: op default
  };
  const std::vector<Case> cases = {
      {{2, 4, 5, 6}, 1, true, ""},      {{2, 4, 5, 6}, 1, false, "1e-05"},
      {{3, 7}, 1, false, "0.001"},      {{2, 5, 6, 4}, -1, false, "1e-05"},
      {{2, 5, 6, 4}, 3, true, "2e-05"}, {{2, 3, 4, 5}, 2, false, "1e-05"},
      {{2, 3, 4, 5, 3}, 1, false, "0.1"}, {{6}, 0, false, "1e-05"},
      {{1, 64, 56, 56}, 1, false, "1e-05"},
  };
  uint32_t seed = 3000;
  for (const auto& c : cases) {
    SCOPED_TRACE("bn data " + Tup(c.data) + " axis " + std::to_string(c.axis));
    BnInputs in = MakeBn(c.data, c.axis, seed += 10);
    AttrDict a = {{"axis", std::to_string(c.axis)}, {"fix_gamma", c.fix_gamma ? "True" : "False"}};
    if (!c.eps.empty()) a["eps"] = c.eps;
    const double eps = c.eps.empty() ? static_cast<double>(1e-3f) : std::stod(c.eps);
    auto outs = RunOp("BatchNorm", a, in.All());
    ASSERT_EQ(outs.size(), 1u);
    ExpectClose(outs[0], RefBn(in, c.axis, eps, c.fix_gamma, false, false), 1e-5, 1e-5);
    auto fused = RunOp("_contrib_BatchNormWithReLU", a, in.All());
    ExpectClose(fused[0], RefBn(in, c.axis, eps, c.fix_gamma, true, false), 1e-5, 1e-5);
    // use_global_stats in training mode is still inference.
    a["use_global_stats"] = "True";
    auto global = RunOp("BatchNorm", a, in.All(), /*is_train=*/true);
    EXPECT_EQ(global[0].v, outs[0].v);
  }
}

TEST(NnBatchNorm, TrainingForwardUsesBatchStatistics) {
  BnInputs in = MakeBn({4, 3, 5, 5}, 1, 42);
  AttrDict a = {{"fix_gamma", "False"}, {"eps", "1e-05"}, {"output_mean_var", "True"}};
  auto outs = RunOp("BatchNorm", a, in.All(), /*is_train=*/true);
  ASSERT_EQ(outs.size(), 3u);
  ExpectClose(outs[0], RefBn(in, 1, 1e-5, false, false, true), 1e-4, 1e-4);
}

TEST(NnBatchNorm, OutputMeanVarAndOpDeclaration) {
  const Op& op = OpRegistry::Global().Get("BatchNorm");
  NodeAttrs plain = MakeNodeAttrs(op, "bn", {});
  NodeAttrs with = MakeNodeAttrs(op, "bn", {{"output_mean_var", "True"}});
  EXPECT_EQ(op.InputNames(plain), (std::vector<std::string>{"data", "gamma", "beta",
                                                            "moving_mean", "moving_var"}));
  EXPECT_EQ(op.mutable_inputs, (std::vector<uint32_t>{3, 4}));
  EXPECT_EQ(op.NumOutputs(plain), 1u);
  EXPECT_EQ(op.NumOutputs(with), 3u);
  EXPECT_EQ(op.NumTotalOutputs(plain), 3u);
  EXPECT_EQ(op.NumTotalOutputs(with), 3u);
  const Op& fused = OpRegistry::Global().Get("_contrib_BatchNormWithReLU");
  EXPECT_EQ(fused.mutable_inputs, (std::vector<uint32_t>{3, 4}));
  EXPECT_EQ(fused.NumTotalOutputs(plain), 4u);

  // Defaults are MXNet's C++ ones: eps is the float 1e-3 widened to double.
  std::map<std::string, std::string> defaults;
  for (const auto& f : op.fields) defaults[f.key] = f.default_text;
  EXPECT_EQ(defaults["eps"], "0.0010000000474974513");
  EXPECT_EQ(defaults["fix_gamma"], "True");
  EXPECT_EQ(defaults["axis"], "1");
  EXPECT_EQ(defaults["use_global_stats"], "False");
  EXPECT_NO_THROW(MakeNodeAttrs(op, "bn", {{"min_calib_range", "-1.5"}, {"max_calib_range", "None"},
                                           {"cudnn_off", "True"}, {"momentum", "0.9"}}));

  // With output_mean_var: mean = moving_mean, var = 1/sqrt(moving_var + eps) (as MXNet).
  BnInputs in = MakeBn({2, 3, 4}, 1, 7);
  auto outs = RunOp("BatchNorm", {{"output_mean_var", "True"}, {"eps", "1e-05"}}, in.All());
  ASSERT_EQ(outs.size(), 3u);
  EXPECT_EQ(outs[1].shape, Shape({3}));
  EXPECT_EQ(outs[1].v, in.mean.v);
  for (size_t c = 0; c < 3; ++c)
    EXPECT_NEAR(outs[2].v[c], 1.0 / std::sqrt(in.var.v[c] + 1e-5), 1e-6);
  // The kernel also fills hidden outputs when an executor allocates all of them.
  auto all = RunOp("_contrib_BatchNormWithReLU", {}, in.All(), false, 4);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[3].shape, in.x.shape);
  for (float v : all[3].v) EXPECT_EQ(v, 0.f);
}

TEST(NnBatchNorm, ShapeInferenceAndErrors) {
  auto r = Infer("BatchNorm", {{"axis", "-1"}},
                 {Shape({2, 5, 7}), Shape(), Shape(), Shape(), Shape()}, 3);
  EXPECT_TRUE(r.complete);
  for (size_t i = 1; i < 5; ++i) EXPECT_EQ(r.in[i], Shape({7}));
  EXPECT_EQ(r.out[0], Shape({2, 5, 7}));
  EXPECT_EQ(r.out[1], Shape({7}));
  EXPECT_EQ(r.out[2], Shape({7}));
  // Channel count from gamma when the data's channel dim is unknown.
  r = Infer("BatchNorm", {}, {Shape({2, 0, 4}), Shape({6}), Shape(), Shape(), Shape()});
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.in[0], Shape({2, 6, 4}));
  EXPECT_FALSE(Infer("BatchNorm", {}, {Shape(), Shape(), Shape(), Shape(), Shape()}).complete);

  auto infer = [](AttrDict a, std::vector<Shape> in) {
    return [a, in] { Infer("BatchNorm", a, in, 1, "bn0"); };
  };
  ExpectError(infer({{"axis", "3"}}, {Shape({2, 3, 4}), Shape(), Shape(), Shape(), Shape()}),
              StatusCode::kShapeError, {"BatchNorm(bn0)", "axis 3"});
  ExpectError(infer({{"axis", "-4"}}, {Shape({2, 3, 4}), Shape(), Shape(), Shape(), Shape()}),
              StatusCode::kShapeError, {"axis -4"});
  ExpectError(infer({}, {Shape({2, 3, 4}), Shape({4}), Shape(), Shape(), Shape()}),
              StatusCode::kShapeError, {"BatchNorm(bn0)", "gamma"});
  ExpectError(infer({}, {Shape({2, 3, 4}), Shape(), Shape(), Shape(), Shape({3, 1})}),
              StatusCode::kShapeError, {"moving_var"});
  ExpectError([] { MakeNodeAttrs("BatchNorm", "bn0", {{"eps", "tiny"}}); },
              StatusCode::kInvalidArgument, {"BatchNorm(bn0)", "eps"});
  ExpectError([] { MakeNodeAttrs("BatchNorm", "bn0", {{"scale", "True"}}); },
              StatusCode::kInvalidArgument, {"scale"});
}

}  // namespace
}  // namespace hybridnet
