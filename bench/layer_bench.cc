// Single layers at batch 1, one OpenBLAS thread: each ResNet-18 convolution against the bare
// sgemm of the same size (a 1x1 convolution of shape (f x c*k*k) * (c*k*k x o*o): the floor an
// im2col convolution can reach), and the depthwise convolution, deconvolution, pooling and
// BatchNorm shapes of MobileNet-style networks. Training: the forward and the backward (data,
// weight and bias gradients) of a ResNet-18 3x3 convolution at batch 32, and of its max
// pooling; each gradient pass of ResNet-18's convolutions on each of its kernels; BatchNorm's
// training passes on channel-last activations. Kernels are called directly on preallocated
// arrays, so the figures are the kernels' own.
#include <string>
#include <utility>
#include <vector>

#include "bench_common.h"
#include "hybridnet/imperative.h"
#include "hybridnet/op.h"
#include "kernels/batch_norm.h"
#include "kernels/convolution.h"
#include "kernels/onednn_convolution.h"
#include "kernels/onednn_convolution_int8.h"
#include "kernels/workspace.h"

namespace hybridnet {
namespace bench {
namespace {

// One kernel call on random inputs of the op's inferred shapes.
struct LayerCall {
  const Op* op;
  NodeAttrs attrs;
  std::vector<NDArray> in, out;
  std::vector<TBlob> in_blobs, out_blobs;

  LayerCall(const std::string& name, const AttrDict& dict, std::vector<Shape> in_shapes)
      : op(&OpRegistry::Global().Get(name)), attrs(MakeNodeAttrs(*op, "bench", dict)) {
    std::vector<Shape> out_shapes(op->NumOutputs(attrs));
    op->infer_shape(attrs, &in_shapes, &out_shapes);
    for (const Shape& s : in_shapes) in.push_back(NDArray::RandomUniform(s, 0.1f, 1.f));
    for (const Shape& s : out_shapes) out.push_back(NDArray(s, DType::kFloat32));
    for (NDArray& a : in) in_blobs.push_back(TBlob{a.raw_data(), a.shape(), DType::kFloat32});
    for (NDArray& a : out) out_blobs.push_back(TBlob{a.raw_data(), a.shape(), DType::kFloat32});
  }
  void Run() {
    OpContext ctx;
    ctx.workspace = &workspace;
    op->compute(ctx, attrs, in_blobs, out_blobs);
  }
  internal::Workspace workspace;
};

void RunLayer(benchmark::State& state, LayerCall call) {
  SetNumThreads(1);
  call.Run();
  for (auto _ : state) {
    call.Run();
    benchmark::DoNotOptimize(call.out_blobs[0].data);
  }
}

std::string Pair(int64_t v) { return "(" + std::to_string(v) + ", " + std::to_string(v) + ")"; }

struct ConvLayer {
  int64_t c, hw, f, k, s, p;
};
// ResNet-18's distinct convolutions (channels in, spatial size, filters, kernel, stride, pad).
const ConvLayer kResNet18Convs[] = {
    {3, 224, 64, 7, 2, 3},   {64, 56, 64, 3, 1, 1},   {64, 56, 128, 3, 2, 1},
    {128, 28, 128, 3, 1, 1}, {64, 56, 128, 1, 2, 0},  {128, 28, 256, 3, 2, 1},
    {256, 14, 256, 3, 1, 1}, {256, 14, 512, 3, 2, 1}, {512, 7, 512, 3, 1, 1},
    {64, 56, 256, 1, 1, 0},
};

void BM_Conv(benchmark::State& state) {
  const ConvLayer& l = kResNet18Convs[state.range(0)];
  RunLayer(state, LayerCall("Convolution",
                            {{"kernel", Pair(l.k)},
                             {"stride", Pair(l.s)},
                             {"pad", Pair(l.p)},
                             {"num_filter", std::to_string(l.f)},
                             {"no_bias", "True"}},
                            {Shape({1, l.c, l.hw, l.hw}), Shape()}));
  const int64_t o = (l.hw + 2 * l.p - l.k) / l.s + 1;
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * static_cast<double>(l.f * l.c * l.k * l.k * o * o),
                         benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Gemm(benchmark::State& state) {
  const ConvLayer& l = kResNet18Convs[state.range(0)];
  const int64_t o = (l.hw + 2 * l.p - l.k) / l.s + 1;
  RunLayer(
      state,
      LayerCall("Convolution",
                {{"kernel", "(1, 1)"}, {"num_filter", std::to_string(l.f)}, {"no_bias", "True"}},
                {Shape({1, l.c * l.k * l.k, o, o}), Shape()}));
}

void BM_Depthwise(benchmark::State& state) {
  const int64_t c = state.range(0), hw = state.range(1), s = state.range(2);
  RunLayer(state, LayerCall("Convolution",
                            {{"kernel", "(3, 3)"},
                             {"pad", "(1, 1)"},
                             {"stride", Pair(s)},
                             {"num_filter", std::to_string(c)},
                             {"num_group", std::to_string(c)},
                             {"no_bias", "True"}},
                            {Shape({1, c, hw, hw}), Shape()}));
}

void BM_Deconv(benchmark::State& state) {
  RunLayer(
      state,
      LayerCall(
          "Deconvolution",
          {{"kernel", "(4, 4)"}, {"pad", "(1, 1)"}, {"stride", "(2, 2)"}, {"num_filter", "64"}},
          {Shape({1, 128, 28, 28}), Shape()}));
}

void BM_MaxPool(benchmark::State& state) {
  RunLayer(state,
           LayerCall("Pooling", {{"kernel", "(3, 3)"}, {"pad", "(1, 1)"}, {"stride", "(2, 2)"}},
                     {Shape({1, 64, 112, 112})}));
}

void BM_GlobalAvgPool(benchmark::State& state) {
  RunLayer(state, LayerCall("Pooling",
                            {{"global_pool", "True"}, {"kernel", "(1, 1)"}, {"pool_type", "avg"}},
                            {Shape({1, 512, 7, 7})}));
}

void BM_BatchNorm(benchmark::State& state) {
  RunLayer(state, LayerCall("BatchNorm", {{"fix_gamma", "False"}},
                            {Shape({1, 64, 112, 112}), Shape(), Shape(), Shape(), Shape()}));
}

// ResNet-18's 64 -> 64 3x3 convolution at 56 x 56, batch 32, with a bias.
const AttrDict kTrainConv = {
    {"kernel", "(3, 3)"}, {"pad", "(1, 1)"}, {"num_filter", "64"}, {"no_bias", "False"}};
const Shape kTrainConvData{32, 64, 56, 56};

void BM_TrainConvForward(benchmark::State& state) {
  RunLayer(state, LayerCall("Convolution", kTrainConv, {kTrainConvData, Shape(), Shape()}));
}

void BM_TrainConvBackward(benchmark::State& state) {
  RunLayer(state, LayerCall("_backward_Convolution", kTrainConv,
                            {Shape(), kTrainConvData, Shape(), Shape()}));
}

// ResNet-18's stem pooling at batch 32; the backward reads the forward's real output, so each
// window's maximum is found where it is.
const AttrDict kTrainPool = {{"kernel", "(3, 3)"}, {"pad", "(1, 1)"}, {"stride", "(2, 2)"}};
const Shape kTrainPoolData{32, 64, 112, 112};

void BM_TrainMaxPoolForward(benchmark::State& state) {
  RunLayer(state, LayerCall("Pooling", kTrainPool, {kTrainPoolData}));
}

void BM_TrainMaxPoolBackward(benchmark::State& state) {
  LayerCall forward("Pooling", kTrainPool, {kTrainPoolData});
  forward.Run();
  LayerCall backward("_backward_Pooling", kTrainPool, {Shape(), kTrainPoolData, Shape()});
  backward.in[1].CopyFrom(forward.in[0]);
  backward.in[2].CopyFrom(forward.out[0]);
  RunLayer(state, std::move(backward));
}

// BatchNorm's training passes on channel-last data as the hybridized training graph runs them:
// 0 the batch statistics, 1 the backward, 2 the backward with the relu the forward applied
// (_backward_BatchNormWithReLU); on ResNet-18's stem activations (32, 112, 112, 64) or, with
// state.range(1) == 1, a 56x56 layer's (32, 56, 56, 64); on 1 or 2 threads.
void BM_TrainBatchNormPass(benchmark::State& state) {
  SetNumThreads(static_cast<int>(state.range(2)));
  internal::BatchNormDims dims;
  dims.outer = 32;
  dims.inner = state.range(1) == 1 ? 56 * 56 : 112 * 112;
  dims.channels = 64;
  const Shape shape({dims.outer, dims.inner, dims.channels});
  NDArray x = NDArray::RandomUniform(shape, -1.f, 1.f);
  NDArray dy = NDArray::RandomUniform(shape, -1.f, 1.f);
  NDArray dx(shape, DType::kFloat32);
  std::vector<float> gamma(64, 1.2f), beta(64, 0.1f), mean(64), invstd(64), moving_mean(64, 0.f),
      moving_var(64, 1.f), dgamma(64), dbeta(64);
  internal::Workspace workspace;
  internal::BatchNormBatchStatsChannelLast(std::as_const(x).data<float>(), dims, 1e-5, mean.data(),
                                           invstd.data(), &workspace);
  internal::BatchNormGradArgs a{};
  a.dy = std::as_const(dy).data<float>();
  a.x = std::as_const(x).data<float>();
  a.gamma = gamma.data();
  a.moving_mean = moving_mean.data();
  a.moving_var = moving_var.data();
  a.mean = mean.data();
  a.invstd = invstd.data();
  a.relu_beta = state.range(0) == 2 ? beta.data() : nullptr;
  a.dx = dx.data<float>();
  a.dgamma = dgamma.data();
  a.dbeta = dbeta.data();
  a.eps = 1e-5;
  a.momentum = 0.9f;
  a.batch_stats = true;
  for (auto _ : state) {
    if (state.range(0) == 0) {
      internal::BatchNormBatchStatsChannelLast(std::as_const(x).data<float>(), dims, 1e-5,
                                               mean.data(), invstd.data(), &workspace);
    } else {
      internal::BatchNormBackwardChannelLast(a, dims, &workspace);
    }
  }
}

// ResNet-50 v1's convolutions at batch 1 (224 x 224; gluon's BottleneckV1, stride on the first
// 1x1): channels in, spatial size in, filters, kernel, stride, pad, and how many the network has.
struct CountedConv {
  ConvLayer l;
  int count;
};
const CountedConv kResNet50Convs[] = {
    {{3, 224, 64, 7, 2, 3}, 1},     {{64, 56, 64, 1, 1, 0}, 1},    {{64, 56, 64, 3, 1, 1}, 3},
    {{64, 56, 256, 1, 1, 0}, 4},    {{256, 56, 64, 1, 1, 0}, 2},   {{256, 56, 128, 1, 2, 0}, 1},
    {{128, 28, 128, 3, 1, 1}, 4},   {{128, 28, 512, 1, 1, 0}, 4},  {{256, 56, 512, 1, 2, 0}, 1},
    {{512, 28, 128, 1, 1, 0}, 3},   {{512, 28, 256, 1, 2, 0}, 1},  {{256, 14, 256, 3, 1, 1}, 6},
    {{256, 14, 1024, 1, 1, 0}, 6},  {{512, 28, 1024, 1, 2, 0}, 1}, {{1024, 14, 256, 1, 1, 0}, 5},
    {{1024, 14, 512, 1, 2, 0}, 1},  {{512, 7, 512, 3, 1, 1}, 3},   {{512, 7, 2048, 1, 1, 0}, 3},
    {{1024, 14, 2048, 1, 2, 0}, 1}, {{2048, 7, 512, 1, 1, 0}, 2},
};

internal::ConvSpec ChannelLastSpec(const ConvLayer& l) {
  internal::ConvSpec s;
  s.channel_last = 1;
  s.N = 1;
  s.C = l.c;
  s.F = l.f;
  for (int i = 0; i < 2; ++i) {
    s.in[i] = l.hw;
    s.out[i] = (l.hw + 2 * l.p - l.k) / l.s + 1;
    s.kernel[i] = l.k;
    s.stride[i] = l.s;
    s.pad_l[i] = s.pad_r[i] = l.p;
  }
  return s;
}

// Every convolution of ResNet-50 once (each shape as many times as the network has it), on
// channel-last data with a bias and relu: the float kernels (RunConvolution) against the int8
// ones (uint8 data, int8 for the stem, uint8 output at per-channel scales, what a calibrated
// _sg_mkldnn_conv runs). Weights packed once, outside the timing.
void BM_ResNet50Convs(benchmark::State& state) {
  const bool int8 = state.range(0) == 1;
  SetNumThreads(static_cast<int>(state.range(1)));
  struct Layer {
    internal::ConvSpec spec;
    NDArray x, w, b, y;
    int count;
  };
  std::vector<Layer> layers;
  for (const CountedConv& cc : kResNet50Convs) {
    Layer layer;
    layer.spec = ChannelLastSpec(cc.l);
    const internal::ConvSpec& s = layer.spec;
    const DType data = int8 ? (s.C == 3 ? DType::kInt8 : DType::kUint8) : DType::kFloat32;
    layer.x = NDArray::RandomUniform(Shape({1, s.in[0], s.in[1], s.C}), 0.f, 100.f).AsType(data);
    layer.w = NDArray::RandomUniform(Shape({s.F, s.C, s.kernel[0], s.kernel[1]}), -0.1f, 0.1f);
    layer.b = NDArray::RandomUniform(Shape({s.F}), -0.1f, 0.1f);
    layer.y = NDArray(Shape({1, s.out[0], s.out[1], s.F}), int8 ? DType::kUint8 : DType::kFloat32);
    layer.count = cc.count;
    layers.push_back(std::move(layer));
  }
  internal::Workspace workspace;
  auto run_all = [&] {
    for (Layer& l : layers) {
      for (int i = 0; i < l.count; ++i) {
        if (int8) {
          internal::Int8ConvCall c;
          c.geometry = l.spec;
          c.data = l.x.dtype();
          c.out = DType::kUint8;
          c.output_scales.assign(static_cast<size_t>(l.spec.F), 0.01f);
          c.act.kind = internal::Int8Eltwise::Kind::kRelu;
          internal::Int8ConvWeights w;
          w.weight = [&l] { return std::as_const(l.w).data<float>(); };
          w.weight_scales.assign(static_cast<size_t>(l.spec.F), 100.f);
          w.bias = l.b.data<float>();
          w.bias_scales.assign(static_cast<size_t>(l.spec.F), 1000.f);
          w.keep_with = &l.w;
          internal::Int8ConvArgs a;
          a.data = l.x.raw_data();
          a.out = l.y.raw_data();
          a.workspace = &workspace;
          internal::RunInt8Convolution(c, w, a);
        } else {
          internal::ConvSpec s = l.spec;
          s.bias = 1;
          s.relu = 1;
          internal::ConvArgs a;
          a.data = l.x.data<float>();
          a.weight = std::as_const(l.w).data<float>();  // no new write stamp: packed once
          a.weight_array = &l.w;
          a.epilogue.bias = l.b.data<float>();
          a.out = l.y.data<float>();
          a.workspace = &workspace;
          internal::RunConvolution(s, a);
        }
      }
    }
  };
  run_all();
  for (auto _ : state) run_all();
}

// One gradient pass of a ResNet-18 convolution at batch 32 on channel-last data, as the
// hybridized training graph runs it: backward data (weights 0) or backward weights (1) on one
// kernel of its choice (onednn_convolution.h), weights' re-layouts kept outside the timing.
void BM_TrainConvGradient(benchmark::State& state) {
  const ConvLayer& l = kResNet18Convs[state.range(0)];
  const bool weights = state.range(1) == 1;
  SetNumThreads(static_cast<int>(state.range(3)));
  internal::ConvSpec s = ChannelLastSpec(l);
  s.N = 32;
  NDArray x = NDArray::RandomUniform(Shape({s.N, s.in[0], s.in[1], s.C}), -1.f, 1.f);
  NDArray w = NDArray::RandomUniform(Shape({s.F, s.C, s.kernel[0], s.kernel[1]}), -0.1f, 0.1f);
  NDArray dy = NDArray::RandomUniform(Shape({s.N, s.out[0], s.out[1], s.F}), -1.f, 1.f);
  NDArray dx(x.shape(), DType::kFloat32), dw(w.shape(), DType::kFloat32);
  internal::Workspace workspace;
  internal::ConvGradArgs a;
  a.data = x.data<float>();
  a.weight = std::as_const(w).data<float>();
  a.weight_array = &w;
  a.out_grad = dy.data<float>();
  (weights ? a.weight_grad : a.data_grad) = (weights ? dw : dx).data<float>();
  a.workspace = &workspace;
  internal::KernelChoice& choice = weights ? internal::ConvolutionWeightGradientKernels()
                                           : internal::ConvolutionDataGradientKernels();
  choice.Force(static_cast<int>(state.range(2)));
  state.SetLabel(choice.kernels()[static_cast<size_t>(state.range(2))].name);
  internal::RunConvolutionGradients(s, a);
  for (auto _ : state) internal::RunConvolutionGradients(s, a);
  choice.Force(-1);
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * static_cast<double>(s.N * s.F * s.C * s.kernel[0] * s.kernel[1] * s.out[0] * s.out[1]),
      benchmark::Counter::kIsIterationInvariantRate);
}

// The convolutions of a CIFAR ResNet-20 training step (batch 128) and ResNet-18's 3x3 ones
// (batch 32): channels in, spatial size, filters, kernel, stride, pad, batch.
struct TrainConvLayer {
  ConvLayer l;
  int64_t n;
};
const TrainConvLayer kTrainConvs[] = {
    {{3, 32, 16, 3, 1, 1}, 128},    {{16, 32, 16, 3, 1, 1}, 128},   {{16, 32, 32, 3, 2, 1}, 128},
    {{32, 16, 32, 3, 1, 1}, 128},   {{16, 32, 32, 1, 2, 0}, 128},   {{32, 16, 64, 3, 2, 1}, 128},
    {{64, 8, 64, 3, 1, 1}, 128},    {{32, 16, 64, 1, 2, 0}, 128},   {{64, 56, 64, 3, 1, 1}, 32},
    {{64, 56, 128, 3, 2, 1}, 32},   {{128, 28, 128, 3, 1, 1}, 32},  {{128, 28, 256, 3, 2, 1}, 32},
    {{256, 14, 256, 3, 1, 1}, 32},  {{256, 14, 512, 3, 2, 1}, 32},  {{512, 7, 512, 3, 1, 1}, 32},
};

// One pass (0 forward, 1 backward data, 2 backward weights) of kTrainConvs[layer] on kernel
// `kernel` of that pass's choice (forward: 0 oneDNN's channel-last, 1 its blocked, 2 our
// Winograd), on channel-last arrays as the training graph holds them, 1 thread.
void BM_TrainConvPass(benchmark::State& state) {
  const TrainConvLayer& t = kTrainConvs[state.range(0)];
  const int64_t pass = state.range(1);
  SetNumThreads(1);
  internal::ConvSpec s = ChannelLastSpec(t.l);
  s.N = t.n;
  NDArray x = NDArray::RandomUniform(Shape({s.N, s.in[0], s.in[1], s.C}), -1.f, 1.f);
  NDArray w = NDArray::RandomUniform(Shape({s.F, s.C, s.kernel[0], s.kernel[1]}), -0.1f, 0.1f);
  NDArray dy = NDArray::RandomUniform(Shape({s.N, s.out[0], s.out[1], s.F}), -1.f, 1.f);
  NDArray dx(x.shape(), DType::kFloat32), dw(w.shape(), DType::kFloat32);
  internal::Workspace workspace;
  internal::KernelChoice& choice = pass == 0   ? internal::ConvolutionKernels()
                                   : pass == 1 ? internal::ConvolutionDataGradientKernels()
                                               : internal::ConvolutionWeightGradientKernels();
  const internal::ConvKernel forward[] = {internal::ConvKernel::kOneDnn,
                                          internal::ConvKernel::kOneDnnBlocked,
                                          internal::ConvKernel::kWinograd};
  const int kernel = pass == 0 ? static_cast<int>(forward[state.range(2)])
                               : static_cast<int>(state.range(2));
  choice.Force(kernel);
  state.SetLabel(choice.kernels()[static_cast<size_t>(kernel)].name);
  auto run = [&] {
    if (pass == 0) {
      internal::ConvArgs a;
      a.data = x.data<float>();
      a.weight = std::as_const(w).data<float>();
      a.weight_array = &w;
      a.out = dy.data<float>();
      a.workspace = &workspace;
      internal::RunConvolution(s, a);
    } else {
      internal::ConvGradArgs a;
      a.data = x.data<float>();
      a.weight = std::as_const(w).data<float>();
      a.weight_array = &w;
      a.out_grad = dy.data<float>();
      (pass == 2 ? a.weight_grad : a.data_grad) = (pass == 2 ? dw : dx).data<float>();
      a.workspace = &workspace;
      internal::RunConvolutionGradients(s, a);
    }
  };
  try {
    run();
  } catch (const Error& e) {
    choice.Force(-1);
    state.SkipWithError(e.what());
    return;
  }
  for (auto _ : state) run();
  choice.Force(-1);
}

BENCHMARK(BM_Conv)->DenseRange(0, 9)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Gemm)->DenseRange(0, 9)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Depthwise)
    ->Args({32, 112, 1})
    ->Args({256, 28, 2})
    ->Args({512, 14, 1})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Deconv)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MaxPool)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GlobalAvgPool)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_BatchNorm)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_TrainConvForward)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_TrainConvBackward)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_TrainMaxPoolForward)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_TrainMaxPoolBackward)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_TrainBatchNormPass)
    ->ArgNames({"pass", "56x56", "threads"})
    ->ArgsProduct({{0, 1, 2}, {0, 1}, {1, 2}})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_TrainConvGradient)
    ->ArgNames({"layer", "weights", "kernel", "threads"})
    ->ArgsProduct({{1, 3, 6, 8}, {0, 1}, {0, 1}, {1, 2}})
    ->ArgsProduct({{0, 2, 5, 7}, {1}, {0, 1}, {1, 2}})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TrainConvPass)
    ->ArgNames({"layer", "pass", "kernel"})
    ->ArgsProduct({benchmark::CreateDenseRange(0, 14, 1), {0}, {0, 1, 2}})
    ->ArgsProduct({benchmark::CreateDenseRange(0, 14, 1), {1, 2}, {0, 1, 2, 3}})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ResNet50Convs)
    ->ArgNames({"int8", "threads"})
    ->ArgsProduct({{0, 1}, {1, 2}})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace bench
}  // namespace hybridnet

int main(int argc, char** argv) {
  std::vector<std::pair<std::string, std::string>> ratios;
  for (int i = 0; i < 10; ++i)
    ratios.push_back({"BM_Conv/" + std::to_string(i), "BM_Gemm/" + std::to_string(i)});
  ratios.push_back({"BM_TrainConvBackward", "BM_TrainConvForward"});
  ratios.push_back({"BM_TrainMaxPoolBackward", "BM_TrainMaxPoolForward"});
  for (const char* threads : {"1", "2"}) {
    ratios.push_back({std::string("BM_ResNet50Convs/int8:0/threads:") + threads,
                      std::string("BM_ResNet50Convs/int8:1/threads:") + threads});
  }
  return hybridnet::bench::RunAndReport(argc, argv, ratios);
}
