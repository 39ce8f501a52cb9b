#include "ops/nn/convolution_backend.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <oneapi/dnnl/dnnl_debug.h>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "hybridnet/base.h"
#include "ndarray/storage.h"
#include "ops/nn/activation-inl.h"
#include "ops/nn/avx512-inl.h"
#include "ops/nn/convolution_depthwise.h"
#include "ops/nn/convolution_pointwise.h"
#include "ops/nn/convolution_few_channels.h"
#include "ops/nn/gemv.h"
#include "ops/nn/parallel-inl.h"
#include "ops/nn/pooling.h"

namespace hybridnet {
namespace internal {

namespace {

using dnnl::memory;
using Tag = memory::format_tag;

static_assert(sizeof(ConvSpec) == 35 * sizeof(int64_t), "ConvSpec is hashed as plain bytes");

dnnl::engine& Engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& Stream() {
  thread_local dnnl::stream stream(Engine());
  return stream;
}

// 0 until SetBackendThreads: OpenMP's own default (OMP_NUM_THREADS or the core count).
std::atomic<int> g_threads{0};

// OpenMP's thread count on this thread is `count` while it lives, then as before.
class ThreadCountWhile {
 public:
  explicit ThreadCountWhile(int count) : before_(omp_get_max_threads()) {
    if (count != before_) omp_set_num_threads(count);
  }
  ~ThreadCountWhile() {
    if (omp_get_max_threads() != before_) omp_set_num_threads(before_);
  }
  ThreadCountWhile(const ThreadCountWhile&) = delete;
  ThreadCountWhile& operator=(const ThreadCountWhile&) = delete;

 private:
  const int before_;
};

enum ScratchSlot {
  kSrcSlot, kDstSlot, kResidualSlot, kFoldSlot, kPrimitiveScratchSlot, kReorderScratchSlot,
  kExpandedSlot, kSubsampledSlot, kConvolvedSlot, kScratchSlots
};

// Scratch memory for one call on this thread (channel-first data re-laid-out, an output before
// it is laid back, weights with BatchNorm folded in), 64-byte aligned, grown as needed and
// reused.
class Scratch {
 public:
  float* Get(size_t slot, size_t count) {
    Buffer& b = buffers_[slot];
    if (b.count < count) {
      b.data.reset(static_cast<float*>(std::aligned_alloc(64, (count * sizeof(float) + 63) / 64 * 64)));
      HN_CHECK(b.data != nullptr, kOutOfMemory) << "cannot allocate " << count * sizeof(float)
                                                << " bytes of convolution scratch";
      b.count = count;
    }
    return b.data.get();
  }

 private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  struct Buffer {
    std::unique_ptr<float, Free> data;
    size_t count = 0;
  };
  Buffer buffers_[kScratchSlots];
};

Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

// A reorder that any thread may run (RunReorder): user scratchpad mode, as for convolutions
// (see ConvPrimitive::scratchpad_md). Winograd's weight layout needs one.
dnnl::reorder SharedReorder(const memory::desc& from, const memory::desc& to) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), from, Engine(), to, attr));
}

// A scratchpad of layout `pad` over this thread's scratch slot `slot` (whole floats, rounded up).
memory ThreadScratchpad(const memory::desc& pad, ScratchSlot slot) {
  return memory(pad, Engine(),
                ThreadScratch().Get(slot, (pad.get_size() + sizeof(float) - 1) / sizeof(float)));
}

// Runs a SharedReorder with this thread's scratch as its scratchpad.
void RunReorder(const dnnl::reorder& reorder, dnnl::stream& stream, const memory& from,
                const memory& to) {
  const memory::desc pad(*dnnl_primitive_desc_query_md(reorder.get_primitive_desc(),
                                                       dnnl_query_scratchpad_md, 0));
  reorder.execute(stream, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to},
                           {DNNL_ARG_SCRATCHPAD, ThreadScratchpad(pad, kReorderScratchSlot)}});
}

Tag ChannelLastTag(int64_t nd) { return nd == 1 ? Tag::nwc : nd == 2 ? Tag::nhwc : Tag::ndhwc; }
Tag ChannelFirstTag(int64_t nd) { return nd == 1 ? Tag::ncw : nd == 2 ? Tag::nchw : Tag::ncdhw; }

memory::dims Spatial(const int64_t* v, int64_t nd) { return memory::dims(v, v + nd); }

memory::dims DataDims(int64_t n, int64_t c, const int64_t* spatial, int64_t nd) {
  memory::dims d{n, c};
  for (int64_t i = 0; i < nd; ++i) d.push_back(spatial[i]);
  return d;
}

// The weights as MXNet stores them: convolution (F, C/G, k...), deconvolution (C, F/G, k...);
// oneDNN's logical order is ([G,] out-channels/G, in-channels/G, k...) for both.
memory::desc UserWeightDesc(const ConvSpec& s) {
  const int64_t Fg = s.F / s.G, Cg = s.C / s.G;
  int64_t taps = 1;
  for (int64_t i = 0; i < s.nd; ++i) taps *= s.kernel[i];
  memory::dims dims, strides;
  if (s.G > 1) {
    dims.push_back(s.G);
    strides.push_back(Fg * Cg * taps);
  }
  dims.push_back(Fg);
  dims.push_back(Cg);
  if (s.deconv) {
    strides.push_back(taps);       // out-channel within the group
    strides.push_back(Fg * taps);  // in-channel within the group
  } else {
    strides.push_back(Cg * taps);
    strides.push_back(taps);
  }
  std::vector<int64_t> kstrides(static_cast<size_t>(s.nd));
  int64_t stride = 1;
  for (int64_t i = s.nd - 1; i >= 0; --i) {
    kstrides[static_cast<size_t>(i)] = stride;
    stride *= s.kernel[i];
  }
  for (int64_t i = 0; i < s.nd; ++i) {
    dims.push_back(s.kernel[i]);
    strides.push_back(kstrides[static_cast<size_t>(i)]);
  }
  return memory::desc(dims, memory::data_type::f32, strides);
}

std::string DescKey(const memory::desc& md) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(&md.data);
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < sizeof(md.data); ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  std::ostringstream os;
  os << std::hex << h << ":" << std::dec << md.get_size();
  return os.str();
}

struct ConvPrimitive {
  dnnl::primitive prim;
  // The primitive's scratchpad, given by the caller from this thread's scratch: primitives are
  // shared by every thread, and oneDNN's library-managed scratchpad is one buffer common to all
  // primitives (Debian builds it with DNNL_ENABLE_CONCURRENT_EXEC off), so two threads running
  // convolutions at once overwrote each other's partial sums.
  memory::desc scratchpad_md;
  memory::desc src_md, dst_md, weight_md, user_weight_md, bias_md;
  bool fold_bn = false;  // fast_math: BatchNorm is inside the weights and bias
  // The epilogue (BatchNorm, residual add, relu) runs after the primitive (RunEpilogue, the same
  // float operations as the separate ops), instead of as oneDNN post-ops: always with BatchNorm,
  // whose per-channel binary post-ops oneDNN 2.6.3 runs slowly (they nearly doubled the time of
  // MobileNet's wide 1x1 convolutions, more than a separate pass over the output costs); when
  // the post-ops would make oneDNN pick another kernel than the convolution alone gets (whose
  // sums would then differ from the unfused op's); and for a single output position (batch 1,
  // spatial size 1), where oneDNN takes the per-channel values for a full tensor.
  bool epilogue_after = false;
  bool has_bias = false;
  std::string weight_key;
  // The caller's layouts (channel-first or channel-last) and, where the primitive wants another
  // one (channel-first callers; Winograd's blocked layouts), the reorders between them.
  memory::desc caller_src_md, caller_dst_md;
  bool reorder_src = false, reorder_dst = false;
  dnnl::reorder src_in, residual_in, dst_out;
};

std::string SpecText(const ConvSpec& s) {
  std::ostringstream os;
  os << (s.deconv ? "Deconvolution" : "Convolution") << " of data (" << s.N << ", " << s.C;
  for (int64_t i = 0; i < s.nd; ++i) os << ", " << s.in[i];
  os << ") into " << s.F << " channels, groups " << s.G;
  return os.str();
}

// Output positions of a call: N times the output's spatial size.
int64_t OutputPositions(const ConvSpec& s) {
  int64_t positions = s.N;
  for (int64_t i = 0; i < s.nd; ++i) positions *= s.out[i];
  return positions;
}

std::shared_ptr<ConvPrimitive> MakePrimitive(const ConvSpec& s) {
  ThreadCountWhile threads(static_cast<int>(s.threads));  // the count the primitive keeps
  auto p = std::make_shared<ConvPrimitive>();
  // Channel-last data for the primitive (oneDNN's fastest direct kernels take it), whatever the
  // caller's layout.
  const Tag cl = ChannelLastTag(s.nd);
  p->src_md = memory::desc(DataDims(s.N, s.C, s.in, s.nd), memory::data_type::f32, cl);
  p->dst_md = memory::desc(DataDims(s.N, s.F, s.out, s.nd), memory::data_type::f32, cl);
  p->user_weight_md = UserWeightDesc(s);
  p->fold_bn = s.fast_math && s.bn;
  p->has_bias = s.bias || p->fold_bn;
  if (p->has_bias) p->bias_md = memory::desc({s.F}, memory::data_type::f32, Tag::a);
  const memory::desc weight_any(p->user_weight_md.dims(), memory::data_type::f32, Tag::any);
  memory::dims dilate;
  for (int64_t i = 0; i < s.nd; ++i) dilate.push_back(s.dilate[i] - 1);
  const memory::dims stride = Spatial(s.stride, s.nd), pad_l = Spatial(s.pad_l, s.nd),
                     pad_r = Spatial(s.pad_r, s.nd);

  const int64_t positions = OutputPositions(s);
  p->epilogue_after = !s.fast_math && (s.bn || (positions == 1 && (s.residual || s.relu)));
  auto post_ops = [&]() {
    dnnl::post_ops ops;
    if (p->epilogue_after) return ops;
    if (s.residual) ops.append_sum(1.f);
    // max(x, 0): internal::ReluOf's bits, NaN and -0 included.
    if (s.relu) ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    return ops;
  };
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  attr.set_post_ops(post_ops());
  const auto prop = dnnl::prop_kind::forward_inference;
  try {
    if (s.deconv) {
      dnnl::deconvolution_forward::desc d(prop, dnnl::algorithm::deconvolution_direct, p->src_md,
                                          weight_any, p->bias_md, p->dst_md, stride, dilate,
                                          pad_l, pad_r);
      dnnl::deconvolution_forward::primitive_desc pd(d, attr, Engine());
      p->weight_md = pd.weights_desc();
      p->scratchpad_md = pd.scratchpad_desc();
      p->prim = dnnl::deconvolution_forward(pd);
    } else {
      dnnl::convolution_forward::primitive_desc pd;
      const bool winograd_shape = s.fast_math && s.nd == 2 && s.G == 1 && s.kernel[0] == 3 &&
                                  s.kernel[1] == 3 && s.stride[0] == 1 && s.stride[1] == 1 &&
                                  s.dilate[0] == 1 && s.dilate[1] == 1;
      bool made = false;
      if (winograd_shape) {
        // Winograd kernels work on blocked data: the layouts are theirs to choose.
        try {
          const memory::desc src_any(p->src_md.dims(), memory::data_type::f32, Tag::any);
          const memory::desc dst_any(p->dst_md.dims(), memory::data_type::f32, Tag::any);
          dnnl::convolution_forward::desc d(prop, dnnl::algorithm::convolution_winograd, src_any,
                                            weight_any, p->bias_md, dst_any, stride, dilate,
                                            pad_l, pad_r);
          pd = dnnl::convolution_forward::primitive_desc(d, attr, Engine());
          p->src_md = pd.src_desc();
          p->dst_md = pd.dst_desc();
          made = true;
        } catch (const dnnl::error&) {
          made = false;  // no Winograd kernel for this CPU or shape: the direct one below
        }
      }
      if (!made) {
        dnnl::convolution_forward::desc d(prop, dnnl::algorithm::convolution_direct, p->src_md,
                                          weight_any, p->bias_md, p->dst_md, stride, dilate,
                                          pad_l, pad_r);
        pd = dnnl::convolution_forward::primitive_desc(d, attr, Engine());
        if (positions == 1) {
          // A single output position is a matrix-vector product (a classifier written as a
          // convolution): oneDNN's GEMM-based kernel does it several times faster than the
          // direct ones it lists first.
          dnnl::convolution_forward::primitive_desc candidate(d, attr, Engine());
          do {
            if (std::strstr(candidate.impl_info_str(), "gemm") != nullptr) {
              pd = candidate;
              break;
            }
          } while (candidate.next_impl());
        }
        const bool exact = !s.fast_math && (s.bn || s.residual || s.relu);
        if (exact && !p->epilogue_after) {
          const dnnl::convolution_forward::primitive_desc alone(d, Engine());
          if (std::string(alone.impl_info_str()) != pd.impl_info_str() ||
              alone.weights_desc() != pd.weights_desc()) {
            p->epilogue_after = true;
            attr.set_post_ops(post_ops());
            pd = dnnl::convolution_forward::primitive_desc(d, attr, Engine());
          }
        }
      }
      p->weight_md = pd.weights_desc();
      p->scratchpad_md = pd.scratchpad_desc();
      p->prim = dnnl::convolution_forward(pd);
    }
  } catch (const dnnl::error& e) {
    HN_THROW(kInternal) << SpecText(s) << ": oneDNN has no kernel for it (" << e.what() << ")";
  }
  p->weight_key = std::string(s.deconv ? "dnnl-deconv:" : "dnnl-conv:") +
                  DescKey(p->weight_md) + (p->fold_bn ? ":bn" : "");
  const Tag caller = s.channel_last ? cl : ChannelFirstTag(s.nd);
  p->caller_src_md = memory::desc(p->src_md.dims(), memory::data_type::f32,
                                  s.data_channel_first ? ChannelFirstTag(s.nd) : caller);
  p->caller_dst_md = memory::desc(p->dst_md.dims(), memory::data_type::f32, caller);
  auto reorder = [](const memory::desc& from, const memory::desc& to) {
    return SharedReorder(from, to);
  };
  p->reorder_src = p->caller_src_md != p->src_md;
  p->reorder_dst = p->caller_dst_md != p->dst_md;
  if (p->reorder_src) p->src_in = reorder(p->caller_src_md, p->src_md);
  if (p->reorder_dst) {
    p->dst_out = reorder(p->dst_md, p->caller_dst_md);
    if (s.residual) p->residual_in = reorder(p->caller_dst_md, p->dst_md);
  }
  return p;
}

// FNV-1a over the spec's 64-bit words, then a final mix: a byte at a time cost 0.3 us of
// every convolution call's 2.7 us of fixed cost (perf, on a 2x2 image).
struct SpecHash {
  size_t operator()(const ConvSpec& s) const {
    uint64_t words[sizeof(ConvSpec) / sizeof(uint64_t)];
    std::memcpy(words, &s, sizeof(words));
    uint64_t h = 1469598103934665603ull;
    for (uint64_t w : words) h = (h ^ w) * 1099511628211ull;
    h ^= h >> 32;
    return static_cast<size_t>(h);
  }
};

struct SpecEqual {
  bool operator()(const ConvSpec& a, const ConvSpec& b) const {
    return std::memcmp(&a, &b, sizeof(a)) == 0;
  }
};

// Primitives by call, shared by every thread (oneDNN primitives may run concurrently), least
// recently used dropped beyond kMaxPrimitives.
class PrimitiveCache {
 public:
  std::shared_ptr<const ConvPrimitive> Get(const ConvSpec& spec) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = index_.find(spec);
      if (it != index_.end()) {
        order_.splice(order_.begin(), order_, it->second);
        return it->second->second;
      }
    }
    std::shared_ptr<const ConvPrimitive> made = MakePrimitive(spec);
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = index_.find(spec);
    if (it != index_.end()) return it->second->second;
    order_.emplace_front(spec, made);
    index_[spec] = order_.begin();
    if (order_.size() > kMaxPrimitives) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    return made;
  }

 private:
  static constexpr size_t kMaxPrimitives = 1024;
  using Entry = std::pair<ConvSpec, std::shared_ptr<const ConvPrimitive>>;
  std::mutex mutex_;
  std::list<Entry> order_;
  std::unordered_map<ConvSpec, std::list<Entry>::iterator, SpecHash, SpecEqual> index_;
};

PrimitiveCache& Primitives() {
  static PrimitiveCache cache;
  return cache;
}

// Weights (and, with BatchNorm folded, the bias) in the primitive's layout.
struct PackedWeights {
  NDArray weights;  // 64-byte aligned storage of weight_md's size
  NDArray bias;     // folded bias (fast_math with BatchNorm), else none
};

int64_t Taps(const ConvSpec& s) {
  int64_t taps = 1;
  for (int64_t i = 0; i < s.nd; ++i) taps *= s.kernel[i];
  return taps;
}

// What `make` (returning std::shared_ptr<T>) derives from call `a`'s weights: kept with the
// weight array when the caller has it (DerivedData under `key`), else made for this call.
template <typename T, typename Make>
std::shared_ptr<const T> KeptWithWeights(const ConvArgs& a, const std::string& key,
                                         const Make& make) {
  auto made = [&] { return std::static_pointer_cast<const void>(make()); };
  return std::static_pointer_cast<const T>(a.weight_array ? DerivedData(*a.weight_array, key, made)
                                                          : made());
}

std::shared_ptr<const PackedWeights> Pack(const ConvPrimitive& p, const ConvSpec& s,
                                          const ConvArgs& a) {
  auto packed = std::make_shared<PackedWeights>();
  const int64_t floats = static_cast<int64_t>(p.weight_md.get_size() / sizeof(float));
  packed->weights = NDArray(Shape{floats});
  const float* source = a.weight;
  if (p.fold_bn) {
    // w'[f, ...] = w[f, ...] * scale[f]; b'[f] = b[f] * scale[f] + shift[f].
    const int64_t taps = Taps(s), Fg = s.F / s.G, Cg = s.C / s.G;
    const int64_t count = s.F * Cg * taps;
    float* folded = ThreadScratch().Get(kFoldSlot, static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
      int64_t f;
      if (s.deconv) {  // (C, Fg, taps): channel c of group c / Cg
        const int64_t c = i / (Fg * taps), fl = (i / taps) % Fg;
        f = (c / Cg) * Fg + fl;
      } else {
        f = i / (Cg * taps);
      }
      folded[i] = a.weight[i] * a.bn_scale[f];
    }
    source = folded;
    packed->bias = NDArray(Shape{s.F});
    float* b = packed->bias.data<float>();
    for (int64_t f = 0; f < s.F; ++f) b[f] = (a.bias ? a.bias[f] : 0.f) * a.bn_scale[f] + a.bn_shift[f];
  }
  memory user(p.user_weight_md, Engine(), const_cast<float*>(source));
  memory dst(p.weight_md, Engine(), packed->weights.data<float>());
  RunReorder(SharedReorder(p.user_weight_md, p.weight_md), Stream(), user, dst);
  Stream().wait();
  return packed;
}

// The re-laid-out weights, kept with the weight array when there is one.
std::shared_ptr<const PackedWeights> Weights(const ConvPrimitive& p, const ConvSpec& s,
                                             const ConvArgs& a) {
  auto make = [&] { return Pack(p, s, a); };
  if (a.weight_array == nullptr) return make();
  std::string key = p.weight_key;
  if (p.fold_bn) {
    // The folded values also depend on the bias and BatchNorm arrays: their write stamps.
    const NDArray* inputs[5] = {a.bias_array, a.bn_arrays ? a.bn_arrays[0] : nullptr,
                                a.bn_arrays ? a.bn_arrays[1] : nullptr,
                                a.bn_arrays ? a.bn_arrays[2] : nullptr,
                                a.bn_arrays ? a.bn_arrays[3] : nullptr};
    for (int i = 0; i < 5; ++i) {
      if (i == 0 && a.bias == nullptr) continue;
      const uint64_t stamp = inputs[i] ? WriteStamp(*inputs[i]) : 0;
      if (stamp == 0) return make();
      key += ":" + std::to_string(stamp);
    }
  }
  return KeptWithWeights<PackedWeights>(a, key, make);
}

// 3x3 depthwise, stride 1 or 2, pad 0 or 1, 2-D: our own kernel (convolution_depthwise.h).
bool OwnDepthwise(const ConvSpec& s) {
  return !s.deconv && s.nd == 2 && s.G == s.C && s.F == s.C && s.G > 1 && s.kernel[0] == 3 &&
         s.kernel[1] == 3 && s.dilate[0] == 1 && s.dilate[1] == 1 && s.stride[0] == s.stride[1] &&
         s.pad_l[0] == s.pad_l[1] && s.pad_r[0] == s.pad_l[0] && s.pad_r[1] == s.pad_l[1] &&
         Depthwise3x3Supported(s.C, s.stride[0], s.pad_l[0]);
}

// Runs `kernel(data, residual, out)` on channel-last arrays: the caller's own, or copies
// re-laid-out around it for channel-first callers (and for channel-first data alone).
template <typename Kernel>
void OnChannelLast(const ConvSpec& s, const ConvArgs& a, Kernel kernel) {
  if (s.channel_last && !s.data_channel_first) {
    kernel(a.data, s.residual ? a.residual : nullptr, a.out);
    return;
  }
  Scratch& scratch = ThreadScratch();
  int64_t in_spatial = 1, out_spatial = 1;
  for (int64_t i = 0; i < s.nd; ++i) {
    in_spatial *= s.in[i];
    out_spatial *= s.out[i];
  }
  float* data = scratch.Get(kSrcSlot, static_cast<size_t>(s.N * s.C * in_spatial));
  Relayout(a.data, data, s.N, s.C, in_spatial, true);
  if (s.channel_last) {
    kernel(data, s.residual ? a.residual : nullptr, a.out);
    return;
  }
  float* out = scratch.Get(kDstSlot, static_cast<size_t>(s.N * s.F * out_spatial));
  float* residual = nullptr;
  if (s.residual) {
    residual = scratch.Get(kResidualSlot, static_cast<size_t>(s.N * s.F * out_spatial));
    Relayout(a.residual, residual, s.N, s.F, out_spatial, true);
  }
  kernel(data, residual, out);
  Relayout(out, a.out, s.N, s.F, out_spatial, false);
}

// The epilogue of call (s, a) for our own kernels' arguments (DepthwiseArgs, PointwiseArgs);
// the residual is set with the channel-last data.
template <typename KernelArgs>
void SetEpilogue(const ConvSpec& s, const ConvArgs& a, KernelArgs* k) {
  k->bias = s.bias ? a.bias : nullptr;
  k->bn_scale = s.bn ? a.bn_scale : nullptr;
  k->bn_shift = s.bn ? a.bn_shift : nullptr;
  k->relu = s.relu;
  k->clip = a.clip;
  k->clip_min = a.clip_min;
  k->clip_max = a.clip_max;
}

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
  SetEpilogue(s, a, &d);
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

// 1x1, no padding, one group: our own kernel (convolution_pointwise.h), measured as fast as
// oneDNN's alone on every MobileNet v2 and ResNet-50 shape, so the epilogue's pass is saved.
// Strided ones take the subsampled input (SubsampledInput): on ResNet-50's stride-2 layers
// oneDNN took 2.48 ms (512 -> 1024 at 28 px) against ORT's 1.89. fast_math too: folding
// BatchNorm into oneDNN's weights saves nothing here, the epilogue being free in registers.
bool OwnPointwise(const ConvSpec& s) {
  if (s.deconv || s.G != 1 || !CpuHasAvx512()) return false;
  for (int64_t i = 0; i < s.nd; ++i) {
    if (s.kernel[i] != 1 || s.pad_l[i] != 0 || s.pad_r[i] != 0) return false;
  }
  return true;
}

// The channel-last input of a strided 1x1 convolution at the positions it reads, (N, out...,
// C), in this thread's scratch; `data` itself when every stride is 1.
const float* SubsampledInput(const ConvSpec& s, const float* data) {
  if (std::all_of(s.stride, s.stride + s.nd, [](int64_t v) { return v == 1; })) return data;
  // The spatial sizes and strides right-aligned in three dimensions.
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, stride[3] = {1, 1, 1};
  for (int64_t i = 0; i < s.nd; ++i) {
    in[3 - s.nd + i] = s.in[i];
    out[3 - s.nd + i] = s.out[i];
    stride[3 - s.nd + i] = s.stride[i];
  }
  float* sub =
      ThreadScratch().Get(kSubsampledSlot, static_cast<size_t>(OutputPositions(s) * s.C));
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
  SetEpilogue(s, a, &p);
  return p;
}

void RunOwnPointwise(const ConvSpec& s, const ConvArgs& a) {
  const auto w = PointwisePacked(s, a);
  PointwiseArgs p = PointwiseArgsOf(s, a, *w);
  OnChannelLast(s, a, [&](const float* data, const float* residual, float* out) {
    p.data = SubsampledInput(s, data);
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
  const int threads = BackendThreads();
  const int64_t ring_floats = 3 * W * F;
  float* rings = ThreadScratch().Get(kExpandedSlot, static_cast<size_t>(threads * ring_floats));
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

// 2-D, one group, at most 32 input channels (an image network's first layer, CIFAR-sized
// networks): our own kernel (convolution_few_channels.h), with fast_math too (oneDNN's Winograd
// made CIFAR ResNet-20 1.34x ORT's time at 2 threads).
bool OwnFewChannels(const ConvSpec& s) {
  return !s.deconv && s.nd == 2 && s.G == 1 && s.C <= kFewChannelsMax && s.dilate[0] == 1 &&
         s.dilate[1] == 1 && CpuHasAvx512();
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
  SetEpilogue(s, a, &t);
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
      float* data = ThreadScratch().Get(kSrcSlot, static_cast<size_t>(s.N * s.C * spatial));
      Relayout(a.data, data, s.N, s.C, spatial, true);
      t.data = data;
    }
    t.out_channel_first = true;
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

// RunEpilogue's arguments for call (s, a) over `positions` rows of s.F channels of `conv` into
// `out`: the whole epilogue (BatchNorm, `residual`, relu, clip) or the clip alone.
EpilogueArgs EpilogueOf(const ConvSpec& s, const ConvArgs& a, bool whole, int64_t positions,
                        const float* conv, const float* residual, float* out) {
  EpilogueArgs e;
  e.positions = positions;
  e.C = s.F;
  e.conv = conv;
  if (whole) {
    e.bn_scale = s.bn ? a.bn_scale : nullptr;
    e.bn_shift = s.bn ? a.bn_shift : nullptr;
    e.residual = s.residual ? residual : nullptr;
    e.relu = s.relu;
  }
  e.clip = a.clip;
  e.clip_min = a.clip_min;
  e.clip_max = a.clip_max;
  e.out = out;
  return e;
}

// A 1x1 convolution of a single 1x1 image is y = W x with W as stored, (F, C): Gemv.
bool OwnGemv(const ConvSpec& s) {
  if (s.deconv || s.G != 1 || s.N != 1 || !CpuHasAvx512()) return false;
  for (int64_t i = 0; i < s.nd; ++i) {
    if (s.in[i] != 1 || s.kernel[i] != 1 || s.pad_l[i] != 0 || s.pad_r[i] != 0) return false;
  }
  return true;
}

void RunOwnGemv(const ConvSpec& s, const ConvArgs& a) {
  const bool epilogue = s.bn || s.residual || s.relu || a.clip;
  // With a residual that is the output, the product goes to scratch first.
  float* y = s.residual && a.residual == a.out
                 ? ThreadScratch().Get(kDstSlot, static_cast<size_t>(s.F))
                 : a.out;
  Gemv(a.weight, a.data, s.bias ? a.bias : nullptr, y, s.F, s.C);
  if (epilogue) RunEpilogue(EpilogueOf(s, a, true, 1, y, a.residual, a.out));
}

// The kernel that runs call s: the first of our own that takes it, else oneDNN's.
enum class ConvKernel { kDepthwise, kGemv, kPointwise, kFewChannels, kOneDnn };

ConvKernel KernelFor(const ConvSpec& s) {
  if (OwnDepthwise(s)) return ConvKernel::kDepthwise;
  if (OwnGemv(s)) return ConvKernel::kGemv;
  if (OwnPointwise(s)) return ConvKernel::kPointwise;
  if (OwnFewChannels(s)) return ConvKernel::kFewChannels;
  return ConvKernel::kOneDnn;
}

}  // namespace

void RunConvolution(const ConvSpec& s, const ConvArgs& a) {
  switch (KernelFor(s)) {
    case ConvKernel::kDepthwise: RunOwnDepthwise(s, a); return;
    case ConvKernel::kGemv: RunOwnGemv(s, a); return;
    case ConvKernel::kPointwise: RunOwnPointwise(s, a); return;
    case ConvKernel::kFewChannels: RunOwnFewChannels(s, a); return;
    case ConvKernel::kOneDnn: break;
  }
  // A single output position gets oneDNN's GEMM kernel (MakePrimitive), which splits its
  // reduction between threads, so the sums would depend on the thread count: it runs on one
  // thread, which costs little for the matrix-vector product it gets.
  const int64_t positions = OutputPositions(s);
  ConvSpec keyed = s;
  keyed.threads = positions == 1 ? 1 : BackendThreads();
  std::shared_ptr<const ConvPrimitive> p = Primitives().Get(keyed);
  std::shared_ptr<const PackedWeights> w = Weights(*p, s, a);
  ThreadCountWhile threads(static_cast<int>(keyed.threads));
  dnnl::stream& stream = Stream();
  Scratch& scratch = ThreadScratch();
  const dnnl::engine& engine = Engine();
  try {
    memory src(p->src_md, engine, const_cast<float*>(a.data));
    if (p->reorder_src) {
      memory user_src(p->caller_src_md, engine, const_cast<float*>(a.data));
      src.set_data_handle(scratch.Get(kSrcSlot, p->src_md.get_size() / sizeof(float)));
      RunReorder(p->src_in, stream, user_src, src);
    }
    // The primitive's output goes to scratch when it must be laid out for the caller, and when
    // the epilogue runs afterwards with a residual that the output overwrites.
    const bool residual_is_out = s.residual && a.residual == a.out;
    float* dst_data = a.out;
    if (p->reorder_dst || (p->epilogue_after && residual_is_out)) {
      dst_data = scratch.Get(kDstSlot, p->dst_md.get_size() / sizeof(float));
    }
    memory dst(p->dst_md, engine, dst_data);
    const float* residual = a.residual;  // in the primitive's layout
    if (s.residual && p->reorder_dst) {
      // oneDNN's sum post-op adds what the output holds; the epilogue reads it from scratch.
      memory user_res(p->caller_dst_md, engine, const_cast<float*>(a.residual));
      memory res = dst;
      if (p->epilogue_after) {
        float* kept = scratch.Get(kResidualSlot, p->dst_md.get_size() / sizeof(float));
        res = memory(p->dst_md, engine, kept);
        residual = kept;
      }
      RunReorder(p->residual_in, stream, user_res, res);
    } else if (s.residual && !p->epilogue_after && !residual_is_out) {
      std::memcpy(a.out, a.residual, p->dst_md.get_size());
    }
    std::unordered_map<int, memory> args;
    args[DNNL_ARG_SRC] = src;
    args[DNNL_ARG_DST] = dst;
    args[DNNL_ARG_SCRATCHPAD] = ThreadScratchpad(p->scratchpad_md, kPrimitiveScratchSlot);
    args[DNNL_ARG_WEIGHTS] = memory(p->weight_md, engine,
                                    const_cast<float*>(w->weights.data<float>()));
    if (p->fold_bn) {
      args[DNNL_ARG_BIAS] = memory(p->bias_md, engine, const_cast<float*>(w->bias.data<float>()));
    } else if (p->has_bias) {
      args[DNNL_ARG_BIAS] = memory(p->bias_md, engine, const_cast<float*>(a.bias));
    }
    p->prim.execute(stream, args);
    stream.wait();
    // The epilogue on the primitive's channel-last output, before it is laid out for the
    // caller; a clip alone on the caller's output. The clip is always ours: oneDNN's maps NaN
    // to its lower bound.
    if (p->epilogue_after) {
      RunEpilogue(EpilogueOf(s, a, true, positions, dst_data, residual,
                             p->reorder_dst ? dst_data : a.out));
    }
    if (p->reorder_dst) {
      memory user_dst(p->caller_dst_md, engine, a.out);
      RunReorder(p->dst_out, stream, dst, user_dst);
      stream.wait();
    }
    if (a.clip && !p->epilogue_after) {
      RunEpilogue(EpilogueOf(s, a, false, positions, a.out, nullptr, a.out));
    }
  } catch (const dnnl::error& e) {
    HN_THROW(kInternal) << SpecText(s) << ": oneDNN failed (" << e.what() << ")";
  }
}

void RunExpandThenDepthwise(const ConvSpec& e, const ConvArgs& ea, const ConvSpec& d,
                            const ConvArgs& da) {
  if (e.channel_last && d.channel_last && KernelFor(e) == ConvKernel::kPointwise &&
      KernelFor(d) == ConvKernel::kDepthwise && !e.residual &&
      d.in[0] * d.in[1] * e.F * static_cast<int64_t>(sizeof(float)) > kRowByRowMinBytes &&
      d.N * d.out[0] >= kRowByRowMinRows * BackendThreads()) {
    RunRowByRow(e, ea, d, da);
    return;
  }
  float* expanded =
      ThreadScratch().Get(kExpandedSlot, static_cast<size_t>(OutputPositions(e) * e.F));
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
  if (!(s.channel_last && !s.residual && KernelFor(s) == ConvKernel::kFewChannels)) {
    ConvArgs conv_args = a;
    conv_args.out =
        ThreadScratch().Get(kConvolvedSlot, static_cast<size_t>(OutputPositions(s) * F));
    RunConvolution(s, conv_args);
    MaxPool2D(conv_args.out, a.out, s.N, F, OH, OW, pooled_h, pooled_w, window, s.channel_last);
    return;
  }
  std::shared_ptr<const FewChannelsWeights> w;
  FewChannelsArgs t = FewChannelsArgsOf(s, a, &w);
  t.data = a.data;  // channel-last, or channel-first as a network's input (data_channel_first)
  t.data_channel_first = s.data_channel_first != 0;
  // Pooled rows (over the samples) split evenly between threads; each keeps the convolution
  // rows of one window in a ring of kernel-height rows.
  const int64_t rows = s.N * pooled_h, kh = window.kernel[0], row_floats = OW * F;
  const int64_t parts = std::min<int64_t>(rows, BackendThreads());
  float* rings =
      ThreadScratch().Get(kConvolvedSlot, static_cast<size_t>(parts * kh * row_floats));
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

void Relayout(const float* src, float* dst, int64_t N, int64_t C, int64_t S, bool to_channel_last) {
  struct Key {
    int64_t n, c, s, to_last;
    bool operator==(const Key& o) const {
      return n == o.n && c == o.c && s == o.s && to_last == o.to_last;
    }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return static_cast<size_t>(((k.n * 1000003 + k.c) * 1000003 + k.s) * 2 + k.to_last);
    }
  };
  struct Entry {
    dnnl::reorder prim;
    memory::desc from, to;
  };
  static std::mutex mutex;
  static std::unordered_map<Key, std::shared_ptr<const Entry>, KeyHash> cache;
  const Key key{N, C, S, to_channel_last ? 1 : 0};
  std::shared_ptr<const Entry> e;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) e = it->second;
  }
  if (!e) {
    auto made = std::make_shared<Entry>();
    const memory::desc cf({N, C, S}, memory::data_type::f32, Tag::ncw);
    const memory::desc cl({N, C, S}, memory::data_type::f32, Tag::nwc);
    made->from = to_channel_last ? cf : cl;
    made->to = to_channel_last ? cl : cf;
    made->prim = SharedReorder(made->from, made->to);
    std::lock_guard<std::mutex> lock(mutex);
    if (cache.size() > 1024) cache.clear();
    e = cache.emplace(key, made).first->second;
  }
  UseBackendThreads();
  try {
    memory from(e->from, Engine(), const_cast<float*>(src)), to(e->to, Engine(), dst);
    RunReorder(e->prim, Stream(), from, to);
    Stream().wait();
  } catch (const dnnl::error& err) {
    HN_THROW(kInternal) << "re-layout of (" << N << ", " << C << ", " << S << ") failed ("
                        << err.what() << ")";
  }
}

void UseBackendThreads() {
  const int want = g_threads.load(std::memory_order_relaxed);
  if (want > 0 && omp_get_max_threads() != want) omp_set_num_threads(want);
}

void SetBackendThreads(int num_threads) {
  g_threads.store(num_threads, std::memory_order_relaxed);
  omp_set_num_threads(num_threads);
}

int BackendThreads() {
  const int n = g_threads.load(std::memory_order_relaxed);
  return n > 0 ? n : omp_get_max_threads();
}

std::string BackendDescription() {
  const dnnl_version_t* v = dnnl_version();
  std::ostringstream os;
  os << "oneDNN " << v->major << "." << v->minor << "." << v->patch << ", ISA "
     << dnnl_cpu_isa2str(static_cast<dnnl_cpu_isa_t>(dnnl::get_effective_cpu_isa()))
     << ", OpenMP threads " << BackendThreads();
  return os.str();
}

}  // namespace internal
}  // namespace hybridnet
