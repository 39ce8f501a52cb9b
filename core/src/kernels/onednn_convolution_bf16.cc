#include "kernels/onednn_convolution_bf16.h"

#include <cstring>
#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "hybridnet/base.h"
#include "kernels/convolution-inl.h"
#include "kernels/epilogue.h"
#include "kernels/onednn.h"
#include "kernels/onednn_convolution.h"
#include "kernels/threads.h"
#include "ndarray/storage.h"

namespace hybridnet {
namespace internal {

namespace {

using dnnl::memory;
using DataType = memory::data_type;

memory::dims DataDims(int64_t n, int64_t c, const int64_t* spatial, int64_t nd) {
  memory::dims d{n, c};
  for (int64_t i = 0; i < nd; ++i) d.push_back(spatial[i]);
  return d;
}

// ([G,] F/G, C/G, k...) as oneDNN orders a convolution's weights.
memory::dims WeightDims(const ConvSpec& s) {
  memory::dims d;
  if (s.G > 1) d.push_back(s.G);
  d.push_back(s.F / s.G);
  d.push_back(s.C / s.G);
  for (int64_t i = 0; i < s.nd; ++i) d.push_back(s.kernel[i]);
  return d;
}

// MXNet's (F, C/G, k...) float32 weights, row-major, in WeightDims' order (the group index is
// the leading part of F).
memory::desc UserWeightDesc(const ConvSpec& s) {
  const memory::dims dims = WeightDims(s);
  memory::dims strides(dims.size());
  int64_t stride = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= dims[i];
  }
  return memory::desc(dims, DataType::f32, strides);
}

// A primitive for one call shape and thread count.
struct Bf16Primitive {
  dnnl::convolution_forward prim;
  memory::desc user_src_md, src_md, user_weight_md, weight_md, bias_md, dst_md, scratchpad_md;
  dnnl::reorder src_in;
  std::string impl;  // oneDNN's implementation name, for tests
};

std::shared_ptr<const Bf16Primitive> MakePrimitive(const ConvSpec& s) {
  auto p = std::make_shared<Bf16Primitive>();
  const int64_t nd = s.nd;
  const memory::dims src_dims = DataDims(s.N, s.C, s.in, nd);
  const memory::dims dst_dims = DataDims(s.N, s.F, s.out, nd);
  memory::dims strides(s.stride, s.stride + nd), pad_l(s.pad_l, s.pad_l + nd),
      pad_r(s.pad_r, s.pad_r + nd), dilates;
  for (int64_t i = 0; i < nd; ++i) dilates.push_back(s.dilate[i] - 1);
  p->user_src_md = memory::desc(src_dims, DataType::f32, ChannelLastTag(nd));
  p->user_weight_md = UserWeightDesc(s);
  // Every call has a bias: BatchNorm's shift folds into it (zeros without either).
  p->bias_md = memory::desc({s.F}, DataType::f32, memory::format_tag::x);
  const DataType product = BFloat16ProductType();
  // Without bfloat16 kernels the product is float32, and the output is channel-last: oneDNN's
  // AVX2 kernels then take a channel-last source too, and given "any" it picks its reference
  // kernel (25 times slower on ResNet-18).
  const memory::desc src(src_dims, product,
                         product == DataType::f32 ? ChannelLastTag(nd) : memory::format_tag::any);
  const memory::desc weight_any(WeightDims(s), product, memory::format_tag::any);
  // The output straight into the caller's channel-last float32 array.
  const memory::desc dst(dst_dims, DataType::f32, ChannelLastTag(nd));
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::post_ops ops;
  if (s.residual) ops.append_sum(1.f);
  // relu as a post-op; a clip (s.relu unset) runs afterwards.
  if (s.relu) ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  attr.set_post_ops(ops);
  dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                       dnnl::algorithm::convolution_direct, src, weight_any,
                                       p->bias_md, dst, strides, dilates, pad_l, pad_r);
  dnnl::convolution_forward::primitive_desc pd(desc, attr, OneDnnEngine());
  p->src_md = pd.src_desc();
  p->weight_md = pd.weights_desc();
  p->dst_md = pd.dst_desc();
  p->scratchpad_md = pd.scratchpad_desc();
  p->prim = dnnl::convolution_forward(pd);
  p->src_in = SharedReorder(p->user_src_md, p->src_md);
  p->impl = pd.impl_info_str();
  return p;
}

// Primitives by call (the spec's bytes), shared by every thread; dropped all at once beyond
// kMaxPrimitives (a model has a few dozen shapes).
std::shared_ptr<const Bf16Primitive> PrimitiveFor(const ConvSpec& s) {
  static constexpr size_t kMaxPrimitives = 1024;
  static std::mutex mutex;
  static std::unordered_map<std::string, std::shared_ptr<const Bf16Primitive>> cache;
  const std::string key(reinterpret_cast<const char*>(&s), sizeof(s));
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  std::shared_ptr<const Bf16Primitive> made = MakePrimitive(s);
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() >= kMaxPrimitives) cache.clear();
  return cache.emplace(key, made).first->second;
}

// The weights rounded to bfloat16 in the primitive's layout and type, and the float32 bias,
// BatchNorm folded in.
struct Bf16Weights {
  NDArray weights;  // bytes of weight_md (bfloat16, or float32 values rounded to bfloat16)
  NDArray bias;     // (F,) float32
};

std::shared_ptr<const Bf16Weights> Pack(const Bf16Primitive& p, const ConvSpec& s,
                                        const ConvArgs& a) {
  auto packed = std::make_shared<Bf16Weights>();
  const Epilogue& e = a.epilogue;
  const int64_t per_filter = Taps(s) * (s.C / s.G);
  const int64_t count = s.F * per_filter;
  float* folded = a.workspace->Get<float>(kConvFoldSlot, static_cast<size_t>(count));
  packed->bias = NDArray(Shape{s.F});
  float* bias = packed->bias.data<float>();
  for (int64_t f = 0; f < s.F; ++f) {
    const float scale = s.bn ? e.bn_scale[f] : 1.f;
    for (int64_t i = 0; i < per_filter; ++i) {
      folded[f * per_filter + i] = a.weight[f * per_filter + i] * scale;
    }
    const float b = s.bias ? e.bias[f] : 0.f;
    bias[f] = s.bn ? b * scale + e.bn_shift[f] : b;
  }
  const size_t bytes = p.weight_md.get_size();
  packed->weights = NDArray(Shape{static_cast<int64_t>((bytes + 1) / 2)}, DType::kUint16);
  memory user(p.user_weight_md, OneDnnEngine(), folded);
  memory to(p.weight_md, OneDnnEngine(), packed->weights.raw_data());
  RunReorder(SharedReorder(p.user_weight_md, p.weight_md), user, to, a.workspace);
  OneDnnStream().wait();
  RoundOperandToBFloat16(p.weight_md, packed->weights.raw_data());
  return packed;
}

// The packed weights, kept with the weight array when there is one; the key holds the write
// stamps of the arrays folded in (bias, BatchNorm), so new values are packed again.
std::shared_ptr<const Bf16Weights> WeightsFor(const Bf16Primitive& p, const ConvSpec& s,
                                              const ConvArgs& a) {
  auto make = [&] { return Pack(p, s, a); };
  if (a.weight_array == nullptr) return make();
  std::string key = "bf16:" + MemoryDescKey(p.weight_md);
  std::vector<const NDArray*> folded;
  if (s.bias) folded.push_back(a.bias_array);
  for (int i = 0; s.bn && i < 4; ++i) folded.push_back(a.bn_arrays ? a.bn_arrays[i] : nullptr);
  for (const NDArray* array : folded) {
    const uint64_t stamp = array ? WriteStamp(*array) : 0;
    if (stamp == 0) return make();
    key += ":" + std::to_string(stamp);
  }
  return KeptWithWeights<Bf16Weights>(a, key, make);
}

// The call as the primitive cache keys it.
ConvSpec Keyed(const ConvSpec& s) {
  ConvSpec keyed = s;
  keyed.threads = KernelThreads();
  keyed.fast_math = 0;  // the bfloat16 product folds BatchNorm whatever fast_math says
  return keyed;
}

}  // namespace

void RunOneDnnBf16Convolution(const ConvSpec& s, const ConvArgs& a) {
  HN_CHECK(!s.deconv && s.channel_last && !s.data_channel_first, kInternal)
      << SpecText(s) << ": the bfloat16 kernel takes channel-last convolutions only";
  const ConvSpec keyed = Keyed(s);
  std::shared_ptr<const Bf16Primitive> p;
  try {
    p = PrimitiveFor(keyed);
  } catch (const dnnl::error& e) {
    HN_THROW(kUnsupported) << SpecText(s) << " in bfloat16: oneDNN has no convolution for "
                           << "it on this CPU (" << OneDnnDescription() << "): " << e.what();
  }
  ThreadCountWhile threads(static_cast<int>(keyed.threads));
  const int64_t positions = OutputPositions(s);
  try {
    std::shared_ptr<const Bf16Weights> w = WeightsFor(*p, s, a);
    const dnnl::engine& engine = OneDnnEngine();
    Workspace* workspace = a.workspace;
    memory user_src(p->user_src_md, engine, const_cast<float*>(a.data));
    memory src(p->src_md, engine,
               workspace->Get<uint16_t>(kBFloat16DataSlot, p->src_md.get_size() / 2 + 1));
    RunReorder(p->src_in, user_src, src, workspace);
    OneDnnStream().wait();
    RoundOperandToBFloat16(p->src_md, src.get_data_handle());
    // The sum post-op adds what the output holds: the residual, copied there unless it is there
    // (the data is read already, so the output may be the data's memory).
    if (s.residual && a.residual != a.out) {
      std::memcpy(a.out, a.residual, static_cast<size_t>(positions * s.F) * sizeof(float));
    }
    std::unordered_map<int, memory> args;
    args[DNNL_ARG_SRC] = src;
    args[DNNL_ARG_WEIGHTS] = memory(p->weight_md, engine, const_cast<void*>(w->weights.raw_data()));
    args[DNNL_ARG_BIAS] = memory(p->bias_md, engine, const_cast<float*>(w->bias.data<float>()));
    args[DNNL_ARG_DST] = memory(p->dst_md, engine, a.out);
    args[DNNL_ARG_SCRATCHPAD] = ScratchpadIn(p->scratchpad_md, kOneDnnScratchpadSlot, workspace);
    p->prim.execute(OneDnnStream(), args);
    OneDnnStream().wait();
    if (a.epilogue.clip) RunEpilogue(EpilogueOf(s, a, false, positions, a.out, nullptr, a.out));
  } catch (const dnnl::error& e) {
    HN_THROW(kInternal) << SpecText(s) << " in bfloat16: oneDNN failed (" << e.what() << ")";
  }
}

std::string Bf16ConvolutionImplementation(const ConvSpec& s) {
  return PrimitiveFor(Keyed(s))->impl;
}

}  // namespace internal
}  // namespace hybridnet
