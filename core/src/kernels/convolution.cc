#include "kernels/convolution.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "hybridnet/base.h"
#include "kernels/avx2-inl.h"
#include "kernels/avx512-inl.h"
#include "kernels/convolution-inl.h"
#include "kernels/convolution_depthwise.h"
#include "kernels/convolution_few_channels.h"
#include "kernels/convolution_pointwise.h"
#include "kernels/convolution_winograd.h"
#include "kernels/epilogue.h"
#include "kernels/gemv.h"
#include "kernels/layout.h"
#include "kernels/onednn_convolution.h"
#include "kernels/onednn_convolution_bf16.h"
#include "kernels/parallel-inl.h"
#include "kernels/pooling.h"
#include "kernels/threads.h"

namespace hybridnet {
namespace internal {

namespace {

// The weights (C, 1, 3, 3) as [tap][C], kept with the weight array.
struct DepthwiseWeights {
  NDArray taps;
};

std::shared_ptr<const DepthwiseWeights> DepthwiseTaps(const ConvSpec& s, const ConvArgs& a) {
  return KeptWithWeights<DepthwiseWeights>(a, "depthwise3x3", [&] {
    auto packed = std::make_shared<DepthwiseWeights>();
    packed->taps = NDArray(Shape{9 * s.C});
    float* t = packed->taps.data<float>();
    for (int64_t c = 0; c < s.C; ++c)
      for (int64_t k = 0; k < 9; ++k) t[k * s.C + c] = a.weight[c * 9 + k];
    return packed;
  });
}

// RunDepthwise3x3's arguments for call (s, a) but the arrays of data, residual and output.
DepthwiseArgs DepthwiseArgsOf(const ConvSpec& s, const ConvArgs& a, const DepthwiseWeights& w) {
  DepthwiseArgs d;
  d.N = s.N;
  d.H = s.in[0];
  d.W = s.in[1];
  d.C = s.C;
  d.OH = s.out[0];
  d.OW = s.out[1];
  d.stride = s.stride[0];
  d.pad = s.pad_l[0];
  d.weight = w.taps.data<float>();
  d.epilogue = EpilogueFor(s, a);
  return d;
}

void RunOwnDepthwise(const ConvSpec& s, const ConvArgs& a) {
  const auto w = DepthwiseTaps(s, a);
  DepthwiseArgs d = DepthwiseArgsOf(s, a, *w);
  OnChannelLast(s, a, [&](const float* data, const float* residual, float* out) {
    d.data = data;
    d.residual = residual;
    d.out = out;
    RunDepthwise3x3(d);
  });
}

// The channel-last input of a strided 1x1 convolution at the positions it reads, (N, out...,
// C), in the workspace; `data` itself when every stride is 1.
const float* SubsampledInput(const ConvSpec& s, const float* data, Workspace* workspace) {
  if (std::all_of(s.stride, s.stride + s.nd, [](int64_t v) { return v == 1; })) return data;
  // The spatial sizes and strides right-aligned in three dimensions.
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, stride[3] = {1, 1, 1};
  for (int64_t i = 0; i < s.nd; ++i) {
    in[3 - s.nd + i] = s.in[i];
    out[3 - s.nd + i] = s.out[i];
    stride[3 - s.nd + i] = s.stride[i];
  }
  float* sub =
      workspace->Get<float>(kConvSubsampledSlot, static_cast<size_t>(OutputPositions(s) * s.C));
  const int64_t rows = s.N * out[0] * out[1], row_floats = out[2] * s.C;
  ParallelFor(rows, rows * row_floats >= 32768, [&](int64_t row) {
    const int64_t n = row / (out[0] * out[1]), od = row / out[1] % out[0], oh = row % out[1];
    const float* from =
        data + ((n * in[0] + od * stride[0]) * in[1] + oh * stride[1]) * in[2] * s.C;
    float* to = sub + row * row_floats;
    for (int64_t ow = 0; ow < out[2]; ++ow) {
      std::memcpy(to + ow * s.C, from + ow * stride[2] * s.C,
                  static_cast<size_t>(s.C) * sizeof(float));
    }
  });
  return sub;
}

// The weights (F, C) in PackPointwiseWeights' layout, kept with the weight array.
struct PointwiseWeights {
  NDArray packed;
};

std::shared_ptr<const PointwiseWeights> PointwisePacked(const ConvSpec& s, const ConvArgs& a) {
  return KeptWithWeights<PointwiseWeights>(a, "pointwise", [&] {
    auto w = std::make_shared<PointwiseWeights>();
    w->packed = NDArray(Shape{PointwiseWeightFloats(s.C, s.F)});
    PackPointwiseWeights(a.weight, s.C, s.F, w->packed.data<float>());
    return w;
  });
}

// RunPointwise's arguments for call (s, a) but the arrays of data, residual and output.
PointwiseArgs PointwiseArgsOf(const ConvSpec& s, const ConvArgs& a, const PointwiseWeights& w) {
  PointwiseArgs p;
  p.positions = OutputPositions(s);
  p.C = s.C;
  p.F = s.F;
  p.weight = w.packed.data<float>();
  p.epilogue = EpilogueFor(s, a);
  return p;
}

void RunOwnPointwise(const ConvSpec& s, const ConvArgs& a) {
  const auto w = PointwisePacked(s, a);
  PointwiseArgs p = PointwiseArgsOf(s, a, *w);
  OnChannelLast(s, a, [&](const float* data, const float* residual, float* out) {
    p.data = SubsampledInput(s, data, a.workspace);
    p.residual = residual;
    p.out = out;
    RunPointwise(p);
  });
}

// RunExpandThenDepthwise's row by row path, for expanded images of one sample above this size:
// below it the expanded tensor stays in L1/L2 anyway. On MobileNet v2 (Zen 4, 1 thread) a 1 MiB
// threshold (only the 56-112 px blocks) gave hn/ORT 1.048, 256 KiB (the 28 px ones too) 1.032,
// 64 KiB (every block) no better.
constexpr int64_t kRowByRowMinBytes = int64_t{256} << 10;
// And for at least this many output rows per thread: a thread recomputes the one or two
// expanded rows before its first output row, and a few rows divide unevenly (MobileNet v2's
// 14 px blocks at 2 threads: 7 and 3-4 rows each, 12-24 us slower than the two calls).
constexpr int64_t kRowByRowMinRows = 8;

// The output rows (over the samples) are cut into one part of consecutive rows per thread; for
// each row, the part's thread computes the expanded input rows not computed yet (the pointwise
// kernel on one image row of positions) into its ring of three rows, then the depthwise row
// from the ring.
void RunRowByRow(const ConvSpec& e, const ConvArgs& ea, const ConvSpec& d, const ConvArgs& da) {
  const auto pointwise_weights = PointwisePacked(e, ea);
  const auto depthwise_weights = DepthwiseTaps(d, da);
  PointwiseArgs p = PointwiseArgsOf(e, ea, *pointwise_weights);
  DepthwiseArgs dw = DepthwiseArgsOf(d, da, *depthwise_weights);
  dw.residual = d.residual ? da.residual : nullptr;
  dw.out = da.out;
  const int64_t H = d.in[0], W = d.in[1], F = e.F, OH = d.out[0];
  p.positions = W;
  const int threads = KernelThreads();
  const int64_t ring_floats = 3 * W * F;
  float* rings =
      ea.workspace->Get<float>(kConvExpandedSlot, static_cast<size_t>(threads * ring_floats));
  const int64_t rows = d.N * OH;
  ParallelFor(threads, true, [&](int64_t t) {
    const int64_t nt = threads;
    float* ring = rings + t * ring_floats;
    PointwiseArgs row_args = p;
    int64_t sample = -1, next_row = 0;  // expanded rows [.., next_row) of `sample` are done
    for (int64_t r = rows * t / nt; r < rows * (t + 1) / nt; ++r) {
      const int64_t n = r / OH, oh = r % OH, top = oh * dw.stride - dw.pad;
      if (n != sample) {
        sample = n;
        next_row = std::max<int64_t>(top, 0);
      }
      for (; next_row < std::min(top + 3, H); ++next_row) {
        row_args.data = ea.data + (n * H + next_row) * W * e.C;
        row_args.out = ring + next_row % 3 * W * F;
        RunPointwiseOnThisThread(row_args);
      }
      const float* in_rows[3];
      for (int64_t kh = 0; kh < 3; ++kh) {
        const int64_t ih = top + kh;
        in_rows[kh] = ih >= 0 && ih < H ? ring + ih % 3 * W * F : nullptr;
      }
      RunDepthwise3x3Row(dw, in_rows, n, oh);
    }
  });
}

// The weights (F, C, KH, KW) in PackFewChannelsWeights' layout, kept with the weight array.
struct FewChannelsWeights {
  NDArray packed;
};

// RunFewChannels' arguments for call (s, a) but the arrays of data, residual and output; `w`
// keeps its weights.
FewChannelsArgs FewChannelsArgsOf(const ConvSpec& s, const ConvArgs& a,
                                  std::shared_ptr<const FewChannelsWeights>* w) {
  *w = KeptWithWeights<FewChannelsWeights>(a, "few_channels", [&] {
    auto packed = std::make_shared<FewChannelsWeights>();
    packed->packed = NDArray(Shape{FewChannelsWeightFloats(s.F, s.C, s.kernel[0], s.kernel[1])});
    PackFewChannelsWeights(a.weight, s.F, s.C, s.kernel[0], s.kernel[1],
                           packed->packed.data<float>());
    return packed;
  });
  FewChannelsArgs t;
  t.N = s.N;
  t.H = s.in[0];
  t.W = s.in[1];
  t.C = s.C;
  t.F = s.F;
  t.KH = s.kernel[0];
  t.KW = s.kernel[1];
  t.OH = s.out[0];
  t.OW = s.out[1];
  t.stride_h = s.stride[0];
  t.stride_w = s.stride[1];
  t.pad_top = s.pad_l[0];
  t.pad_left = s.pad_l[1];
  t.weight = (*w)->packed.data<float>();
  t.epilogue = EpilogueFor(s, a);
  return t;
}

void RunOwnFewChannels(const ConvSpec& s, const ConvArgs& a) {
  std::shared_ptr<const FewChannelsWeights> w;
  FewChannelsArgs t = FewChannelsArgsOf(s, a, &w);
  if (s.channel_last && s.data_channel_first) {
    t.data = a.data;
    t.data_channel_first = true;
    t.residual = s.residual ? a.residual : nullptr;
    t.out = a.out;
    RunFewChannels(t);
    return;
  }
  if (!s.channel_last && !s.residual) {
    // A channel-first caller (eager): the kernel lays its output rows out channel-first itself
    // and reads an image's few channels as they are.
    t.data_channel_first = s.C <= kFewChannelsMaxChannelFirst;
    t.data = a.data;
    if (!t.data_channel_first) {
      const int64_t spatial = s.in[0] * s.in[1];
      float* data = a.workspace->Get<float>(kConvSrcSlot, static_cast<size_t>(s.N * s.C * spatial));
      Relayout(a.data, data, s.N, s.C, spatial, true, a.workspace);
      t.data = data;
    }
    t.out_channel_first = true;
    t.row_scratch = a.workspace->Get<float>(kConvRowSlot,
                                            static_cast<size_t>(KernelThreads() * s.out[1] * s.F));
    t.out = a.out;
    RunFewChannels(t);
    return;
  }
  OnChannelLast(s, a, [&](const float* data, const float* residual, float* out) {
    t.data = data;
    t.residual = residual;
    t.out = out;
    RunFewChannels(t);
  });
}

void RunOwnGemv(const ConvSpec& s, const ConvArgs& a) {
  const bool epilogue = s.bn || s.residual || s.relu || a.epilogue.clip;
  // With a residual that is the output, the product goes to scratch first.
  float* y = s.residual && a.residual == a.out
                 ? a.workspace->Get<float>(kConvDstSlot, static_cast<size_t>(s.F))
                 : a.out;
  Gemv(a.weight, a.data, s.bias ? a.epilogue.bias : nullptr, y, s.F, s.C);
  if (epilogue) RunEpilogue(EpilogueOf(s, a, true, 1, y, a.residual, a.out));
}

// Winograd's where it pays, else the first of our kernels that takes call s in ConvKernel's
// order, else oneDNN's. Winograd's comes first because it also beats few_channels on its
// shapes (32 channels at 16x16, batch 128: 1.3 ms against 2.4; Zen 5, 1 thread).
ConvKernel UsualKernelFor(const ConvSpec& s) {
  if (WinogradPays(s)) return ConvKernel::kWinograd;
  for (int k = 0; k < static_cast<int>(ConvKernel::kOneDnn); ++k) {
    const ConvKernel kernel = static_cast<ConvKernel>(k);
    if (kernel != ConvKernel::kWinograd && ConvKernelTakes(kernel, s)) return kernel;
  }
  return OneDnnBlockedPays(s) ? ConvKernel::kOneDnnBlocked : ConvKernel::kOneDnn;
}

// The kernel that runs call s (counted): the usual one, or the one a test forces.
ConvKernel KernelFor(const ConvSpec& s) {
  return static_cast<ConvKernel>(ConvolutionKernels().Choose(
      static_cast<int>(UsualKernelFor(s)),
      [&](int k) { return ConvKernelTakes(static_cast<ConvKernel>(k), s); },
      [&] { return SpecText(s); }));
}

}  // namespace

KernelChoice& ConvolutionKernels() {
  static KernelChoice choice("convolution", {{"depthwise3x3", "AVX-512F", CpuHasAvx512()},
                                             {"gemv", "AVX2 and FMA", CpuHasAvx2()},
                                             {"pointwise", "AVX-512F", CpuHasAvx512()},
                                             {"few_channels", "AVX-512F", CpuHasAvx512()},
                                             {"winograd", "AVX2 and FMA", CpuHasAvx2()},
                                             {"onednn", "", true},
                                             {"onednn_blocked", "", true}});
  return choice;
}

bool ConvKernelTakes(ConvKernel kernel, const ConvSpec& s) {
  switch (kernel) {
    case ConvKernel::kDepthwise:
      return DepthwiseTakes(s);
    case ConvKernel::kGemv:
      return GemvTakes(s);
    case ConvKernel::kPointwise:
      return PointwiseTakes(s);
    case ConvKernel::kFewChannels:
      return FewChannelsTakes(s);
    case ConvKernel::kWinograd:
      return WinogradTakes(s);
    case ConvKernel::kOneDnn:
      return true;
    case ConvKernel::kOneDnnBlocked:
      return OneDnnBlockedTakes(s);
  }
  return false;
}

bool ConvReadsChannelFirstData(ConvSpec s) {
  s.channel_last = 1;
  s.data_channel_first = 1;
  return UsualKernelFor(s) == ConvKernel::kFewChannels;
}

bool ConvFusesExpansion(const ConvSpec& depthwise) { return DepthwiseTakes(depthwise); }

void RunConvolution(const ConvSpec& s, const ConvArgs& a) {
  if (a.bf16) {
    ConvSpec last = s;
    last.channel_last = 1;
    last.data_channel_first = 0;
    OnChannelLast(s, a, [&](const float* data, const float* residual, float* out) {
      ConvArgs t = a;
      t.data = data;
      t.residual = residual;
      t.out = out;
      RunOneDnnBf16Convolution(last, t);
    });
    return;
  }
  switch (KernelFor(s)) {
    case ConvKernel::kDepthwise:
      RunOwnDepthwise(s, a);
      return;
    case ConvKernel::kGemv:
      RunOwnGemv(s, a);
      return;
    case ConvKernel::kPointwise:
      RunOwnPointwise(s, a);
      return;
    case ConvKernel::kFewChannels:
      RunOwnFewChannels(s, a);
      return;
    case ConvKernel::kWinograd:
      RunWinogradConvolution(s, a);
      return;
    case ConvKernel::kOneDnn:
      RunOneDnnConvolution(s, a, false);
      return;
    case ConvKernel::kOneDnnBlocked:
      RunOneDnnConvolution(s, a, true);
      return;
  }
}

void ConvolutionBiasGradient(const float* dy, int64_t N, int64_t F, int64_t positions, float* db) {
  ParallelFor(F, N * F * positions >= 32768, [&](int64_t f) {
    double sum = 0.0;
    for (int64_t n = 0; n < N; ++n) {
      const float* plane = dy + (n * F + f) * positions;
      for (int64_t i = 0; i < positions; ++i) sum += plane[i];
    }
    db[f] = static_cast<float>(sum);
  });
}

void RunExpandThenDepthwise(const ConvSpec& e, const ConvArgs& ea, const ConvSpec& d,
                            const ConvArgs& da) {
  // Under a forced kernel each convolution runs (and is counted) as RunConvolution runs it.
  if (!ConvolutionKernels().Forced() && !ea.bf16 && !da.bf16 && e.channel_last && d.channel_last &&
      UsualKernelFor(e) == ConvKernel::kPointwise && UsualKernelFor(d) == ConvKernel::kDepthwise &&
      !e.residual &&
      d.in[0] * d.in[1] * e.F * static_cast<int64_t>(sizeof(float)) > kRowByRowMinBytes &&
      d.N * d.out[0] >= kRowByRowMinRows * KernelThreads()) {
    KernelFor(e);  // counts the two kernels the rows run on
    KernelFor(d);
    RunRowByRow(e, ea, d, da);
    return;
  }
  float* expanded =
      ea.workspace->Get<float>(kConvExpandedSlot, static_cast<size_t>(OutputPositions(e) * e.F));
  ConvArgs expand_args = ea;
  expand_args.out = expanded;
  RunConvolution(e, expand_args);
  ConvArgs depthwise_args = da;
  depthwise_args.data = expanded;
  RunConvolution(d, depthwise_args);
}

void RunConvolutionThenMaxPool(const ConvSpec& s, const ConvArgs& a, const MaxPoolWindow& window,
                               int64_t pooled_h, int64_t pooled_w) {
  const int64_t OH = s.out[0], OW = s.out[1], F = s.F;
  // Under a forced kernel the convolution runs (and is counted) as RunConvolution runs it.
  if (ConvolutionKernels().Forced() || a.bf16 || !s.channel_last || s.residual ||
      UsualKernelFor(s) != ConvKernel::kFewChannels) {
    ConvArgs conv_args = a;
    conv_args.out =
        a.workspace->Get<float>(kConvConvolvedSlot, static_cast<size_t>(OutputPositions(s) * F));
    RunConvolution(s, conv_args);
    MaxPool2D(conv_args.out, a.out, s.N, F, OH, OW, pooled_h, pooled_w, window, s.channel_last,
              a.workspace);
    return;
  }
  KernelFor(s);  // counts the kernel the rows run on
  std::shared_ptr<const FewChannelsWeights> w;
  FewChannelsArgs t = FewChannelsArgsOf(s, a, &w);
  t.data = a.data;  // channel-last, or channel-first as a network's input (data_channel_first)
  t.data_channel_first = s.data_channel_first != 0;
  // Pooled rows (over the samples) split evenly between threads; each keeps the convolution
  // rows of one window in a ring of kernel-height rows.
  const int64_t rows = s.N * pooled_h, kh = window.kernel[0], row_floats = OW * F;
  const int64_t parts = std::min<int64_t>(rows, KernelThreads());
  float* rings =
      a.workspace->Get<float>(kConvConvolvedSlot, static_cast<size_t>(parts * kh * row_floats));
  ParallelFor(parts, true, [&](int64_t part) {
    float* ring = rings + part * kh * row_floats;
    FewChannelsArgs row_args = t;
    int64_t sample = -1, computed = -1;  // the last convolution row in the ring, of `sample`
    std::vector<const float*> window_rows(static_cast<size_t>(kh));
    for (int64_t r = rows * part / parts; r < rows * (part + 1) / parts; ++r) {
      const int64_t n = r / pooled_h, ph = r % pooled_h;
      const int64_t start = ph * window.stride[0] - window.pad[0];
      const int64_t lo = std::max<int64_t>(start, 0), hi = std::min(start + kh, OH);
      if (n != sample) {
        sample = n;
        computed = -1;
      }
      for (int64_t h = std::max(lo, computed + 1); h < hi; ++h) {
        row_args.out = ring + h % kh * row_floats;
        row_args.first_row = n * OH + h;
        RunFewChannelsRow(row_args, n * OH + h);
        computed = h;
      }
      for (int64_t h = lo; h < hi; ++h) {
        window_rows[static_cast<size_t>(h - lo)] = ring + h % kh * row_floats;
      }
      MaxPoolRowFromRows(window_rows.data(), std::max<int64_t>(hi - lo, 0), OW, F, pooled_w,
                         window.kernel[1], window.stride[1], window.pad[1],
                         a.out + r * pooled_w * F);
    }
  });
}

}  // namespace internal
}  // namespace hybridnet
