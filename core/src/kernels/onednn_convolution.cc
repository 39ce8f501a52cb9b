#include "kernels/onednn_convolution.h"

#include <algorithm>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hybridnet/base.h"
#include "kernels/avx2-inl.h"
#include "kernels/avx512-inl.h"
#include "kernels/blas.h"
#include "kernels/convolution-inl.h"
#include "kernels/convolution_winograd.h"
#include "kernels/epilogue.h"
#include "kernels/onednn.h"
#include "kernels/parallel-inl.h"
#include "kernels/threads.h"

namespace hybridnet {
namespace internal {

namespace {

using dnnl::memory;
using Tag = memory::format_tag;

static_assert(sizeof(ConvSpec) == 36 * sizeof(int64_t), "ConvSpec is hashed as plain bytes");

memory::dims Spatial(const int64_t* v, int64_t nd) { return memory::dims(v, v + nd); }

// The layout oneDNN's GEMM-based convolution gives weights of logical dimensions `dims` on
// channel-last data: the plain matrix it multiplies by, input channels (with the taps) by output
// channels, output channels innermost (wio, hwio, dhwio; with groups wigo, hwigo, dhwigo). Asked
// to choose (format_tag::any), no other oneDNN 2.6 implementation reports it: the direct and
// brgemm ones choose blocked layouts, the reference one oihw (as next_impl lists them for 1-D,
// 2-D, 3-D, grouped and depthwise convolutions on an AVX-512 CPU). oneDNN 2.6 has no query that
// says which implementation or ISA a primitive descriptor holds (see SameImplementation), so
// this layout is what identifies the GEMM-based one.
memory::desc GemmWeightDesc(const ConvSpec& s, const memory::dims& dims) {
  const Tag plain[3] = {Tag::wio, Tag::hwio, Tag::dhwio};
  const Tag grouped[3] = {Tag::wigo, Tag::hwigo, Tag::dhwigo};
  const size_t rank = static_cast<size_t>(s.nd - 1);
  return memory::desc(dims, memory::data_type::f32, s.G > 1 ? grouped[rank] : plain[rank]);
}

// Whether two primitive descriptors of one operation hold the same implementation. oneDNN 2.6
// has no query that identifies an implementation: dnnl_query_t gives its name as text
// (impl_info_str) and no kind, algorithm variant or ISA, and what the structural queries report
// does not tell implementations apart (jit_1x1:avx512_core and jit:avx512_core give a 1x1
// convolution the same blocked weights and no scratchpad). So the names are compared, and this
// is the one place that reads them.
bool SameImplementation(const dnnl::primitive_desc_base& a, const dnnl::primitive_desc_base& b) {
  return std::strcmp(a.impl_info_str(), b.impl_info_str()) == 0;
}

// Whether call s is a 3x3 2-D convolution of one group, undilated: the shapes the rules below
// were measured on, on AVX2 and AVX-512 CPUs.
bool Plain3x3(const ConvSpec& s) {
  return !s.deconv && s.nd == 2 && s.G == 1 && s.kernel[0] == 3 && s.kernel[1] == 3 &&
         s.dilate[0] == 1 && s.dilate[1] == 1;
}

// On AVX2 CPUs (no AVX-512), per 3x3 layer of a CIFAR ResNet-20 (batch 128) and ResNet-18
// (batch 32), one thread of a Zen 3, CPU time, the re-layouts included (bench/layer_bench
// BM_TrainConvPass, medians of 9 interleaved runs on a loaded machine: 5-10 % is noise), oneDNN
// 2.6.3's jit:avx2 kernels on blocked data (nChw8c) against those on channel-last data:
//  - forward: 9-27 % faster from 64 channels in and out (every such ResNet-18 layer; ResNet-20's
//    64 at 8x8, 20 %); slower below (16 channels at 32x32: 29 %; 32 at 16x16: 12 %).
//  - backward data: 7-20 % faster from 64 channels in and out on outputs of 28x28 and more and
//    for 128->256 stride 2 onto 14x14; even (-4 % to +4 %) for 256 at 14x14; for smaller
//    outputs even or slower (512 at 7x7: 0 to 11 % slower; 64 at 8x8: 30 % slower).
//  - backward weights: slower than products of patches (PatchGemmPays), which are 5-50 % faster
//    than channel-last into 64 filters or more, 16-130 % slower below.
//  - the forward on rotated weights (RotatedForwardPays) is 12-32 % slower than channel-last's
//    backward data.
bool Avx2BlockedForwardPays(const ConvSpec& s) { return Plain3x3(s) && s.C >= 64 && s.F >= 64; }

// Whether a gradient pass (backward data, or backward `weights`) of call s is faster on oneDNN
// 2.6.3's direct kernels for blocked data (nChw16c), data and gradients re-laid-out around them,
// than on its kernels for channel-last data. Measured per ResNet-18 layer (batch 32, one thread
// of an AVX-512 CPU, CPU time, the re-layouts included), where the blocked kernels gain 8-20 %:
// backward data of 3x3 stride-1 convolutions of 256 channels and more, backward weights of 3x3
// stride-2 ones. Elsewhere the two are within the measurement's noise, or channel-last is faster.
// On AVX2, see above. A function of the call's geometry and the CPU alone, so channel-first and
// channel-last callers, eager and graph, run the same kernel and get the same bits.
bool BlockedLayoutsPayForGradient(const ConvSpec& s, bool weights) {
  if (!Plain3x3(s)) return false;
  if (!CpuHasAvx512()) return !weights && s.C >= 64 && s.F >= 64 && s.out[0] * s.out[1] >= 14 * 14;
  const bool unit_stride = s.stride[0] == 1 && s.stride[1] == 1;
  return weights ? !unit_stride : unit_stride && s.C >= 256;
}

// Whether backward data of call s can run as a forward convolution of dy by the weights turned
// 180 degrees, input and output channels swapped: stride 1 (every dx position then gathers dy
// over one window), one group, and padding within the dilated window's reach (the forward pads
// by the rest of that reach).
bool RotatedForwardTakes(const ConvSpec& s) {
  if (s.deconv || s.G != 1) return false;
  for (int64_t i = 0; i < s.nd; ++i) {
    const int64_t reach = (s.kernel[i] - 1) * s.dilate[i];
    if (s.stride[i] != 1 || s.pad_l[i] > reach || s.pad_r[i] > reach) return false;
  }
  return true;
}

// Whether it is also faster there than oneDNN 2.6.3's backward-data kernels: its forward kernel
// for channel-last 3x3 convolutions (brgemm) runs near the FMA peak. Measured per ResNet-18 layer
// (batch 32, one thread of an AVX-512 CPU, CPU time, the rotated weights kept per weight
// version, two runs): 3-5 % faster at 56x56 of 64 channels, 1-3 % at 28x28 of 128, 6-11 % at
// 14x14 of 256; 19-24 % slower at 7x7 of 512, where the blocked backward-data kernel
// (BlockedLayoutsPayForGradient) wins. On AVX2, see Avx2BlockedForwardPays' note. A function of
// the call's geometry and the CPU alone, as BlockedLayoutsPayForGradient.
bool RotatedForwardPays(const ConvSpec& s) {
  return CpuHasAvx512() && RotatedForwardTakes(s) && Plain3x3(s) && s.C >= 64 && s.F >= 64 &&
         s.out[0] * s.out[1] >= 14 * 14;
}

// Whether backward weights of call s can run as products of dy and the data's patches
// (RunPatchGemmWeightGradient): 2-D, one group.
bool PatchGemmTakes(const ConvSpec& s) { return !s.deconv && s.G == 1 && s.nd == 2; }

// Whether that is faster than oneDNN 2.6.3's backward-weights kernels, which run small images of
// many channels slowly, the product near the FMA peak: measured as RotatedForwardPays, 3x3
// windows of stride 2 7 % faster at 64 channels, 20 % at 128, 36 % at 256; of stride 1, 18-23 %
// faster at 7x7 of 512 channels, even at 14x14 of 256, 9-17 % slower on larger images of fewer
// channels. The 7x7 stem is twice as slow (3 input channels: short products). On AVX2, see
// Avx2BlockedForwardPays' note.
bool PatchGemmPays(const ConvSpec& s) {
  if (!PatchGemmTakes(s) || !Plain3x3(s)) return false;
  if (!CpuHasAvx512()) return s.C >= 32 && s.F >= 64;
  if (s.stride[0] != s.stride[1]) return false;
  if (s.stride[0] == 2) return s.C >= 64 && s.F >= 64;
  return s.stride[0] == 1 && s.out[0] * s.out[1] <= 7 * 7 && s.C >= 512 && s.F >= 512;
}

}  // namespace

bool OneDnnBlockedTakes(const ConvSpec& s) { return !s.deconv && s.G == 1 && s.F % 16 == 0; }

bool OneDnnBlockedPays(const ConvSpec& s) {
  return !CpuHasAvx512() && OneDnnBlockedTakes(s) && Avx2BlockedForwardPays(s);
}

KernelChoice& ConvolutionWeightGradientKernels() {
  static KernelChoice choice("convolution_backward_weights",
                             {{"onednn_backward_weights", "", true},
                              {"patch_gemm", "", true},
                              {"onednn_backward_weights_blocked", "", true},
                              {"winograd", "AVX2 and FMA", CpuHasAvx2()}});
  return choice;
}

KernelChoice& ConvolutionDataGradientKernels() {
  static KernelChoice choice("convolution_backward_data",
                             {{"onednn_backward_data", "", true},
                              {"rotated_forward", "", true},
                              {"onednn_backward_data_blocked", "", true},
                              {"winograd", "AVX2 and FMA", CpuHasAvx2()}});
  return choice;
}

std::string MemoryDescKey(const memory::desc& md) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(&md.data);
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < sizeof(md.data); ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  std::ostringstream os;
  os << std::hex << h << ":" << std::dec << md.get_size();
  return os.str();
}

memory::dims DataDims(int64_t n, int64_t c, const int64_t* spatial, int64_t nd) {
  memory::dims d{n, c};
  for (int64_t i = 0; i < nd; ++i) d.push_back(spatial[i]);
  return d;
}

memory::desc UserWeightDesc(const ConvSpec& s, memory::data_type type) {
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
  return memory::desc(dims, type, strides);
}

dnnl::inner_product_forward::primitive_desc InnerProductPrimitive(const memory::desc& src,
                                                                  const memory::desc& weights,
                                                                  const memory::desc& bias,
                                                                  const memory::desc& dst,
                                                                  bool* relu) {
  const dnnl::inner_product_forward::desc d(dnnl::prop_kind::forward_inference, src, weights, bias,
                                            dst);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  const dnnl::inner_product_forward::primitive_desc alone(d, attr, OneDnnEngine());
  if (!*relu) return alone;
  // max(x, 0): internal::ReluOf's bits, NaN and -0 included, as for convolutions.
  dnnl::post_ops ops;
  ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  attr.set_post_ops(ops);
  const dnnl::inner_product_forward::primitive_desc with_relu(d, attr, OneDnnEngine());
  *relu = SameImplementation(alone, with_relu) && alone.weights_desc() == with_relu.weights_desc();
  return *relu ? with_relu : alone;
}

namespace {

struct ConvPrimitive {
  dnnl::primitive prim;
  // The primitive's scratchpad, given by the caller from its workspace: primitives are
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

// The forward primitive of call s on channel-last data (oneDNN's fastest direct kernels on
// AVX-512 take it), or with `blocked` on the layouts oneDNN chooses (blocked: nChw8c on AVX2),
// whatever the caller's layout.
std::shared_ptr<ConvPrimitive> MakePrimitive(const ConvSpec& s, bool blocked) {
  ThreadCountWhile threads(static_cast<int>(s.threads));  // the count the primitive keeps
  auto p = std::make_shared<ConvPrimitive>();
  const Tag cl = ChannelLastTag(s.nd);
  const Tag data_tag = blocked ? Tag::any : cl;
  p->src_md = memory::desc(DataDims(s.N, s.C, s.in, s.nd), memory::data_type::f32, data_tag);
  p->dst_md = memory::desc(DataDims(s.N, s.F, s.out, s.nd), memory::data_type::f32, data_tag);
  p->user_weight_md = UserWeightDesc(s, memory::data_type::f32);
  p->fold_bn = s.fast_math && s.bn;
  p->has_bias = s.bias || p->fold_bn;
  if (p->has_bias) p->bias_md = memory::desc({s.F}, memory::data_type::f32, Tag::a);
  const memory::desc weight_any(p->user_weight_md.dims(), memory::data_type::f32, Tag::any);
  memory::dims dilate;
  for (int64_t i = 0; i < s.nd; ++i) dilate.push_back(s.dilate[i] - 1);
  const memory::dims stride = Spatial(s.stride, s.nd), pad_l = Spatial(s.pad_l, s.nd),
                     pad_r = Spatial(s.pad_r, s.nd);

  const int64_t positions = OutputPositions(s);
  // Without AVX-512, oneDNN's jit:avx2 kernels add the sum post-op's residual before their last
  // partial sums, so the result is not the separate add's: the residual joins the epilogue.
  p->epilogue_after = !s.fast_math && (s.bn || (positions == 1 && (s.residual || s.relu)) ||
                                       (s.residual && !CpuHasAvx512()));
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
  const bool training_winograd = OneDnnWinogradPays(s);
  // Training's Winograd kernel transforms the windows at each call: they change every step, and
  // its inference form would keep them transformed, 4x the weights' size (ResNet-18's 512x512
  // windows: 37.7 MB a layer).
  const auto prop = training_winograd && !s.fast_math ? dnnl::prop_kind::forward_training
                                                      : dnnl::prop_kind::forward_inference;
  try {
    if (s.deconv) {
      dnnl::deconvolution_forward::desc d(prop, dnnl::algorithm::deconvolution_direct, p->src_md,
                                          weight_any, p->bias_md, p->dst_md, stride, dilate, pad_l,
                                          pad_r);
      dnnl::deconvolution_forward::primitive_desc pd(d, attr, OneDnnEngine());
      p->weight_md = pd.weights_desc();
      p->scratchpad_md = pd.scratchpad_desc();
      p->prim = dnnl::deconvolution_forward(pd);
    } else {
      dnnl::convolution_forward::primitive_desc pd;
      const bool winograd_shape = !blocked && (s.fast_math || training_winograd) &&
                                  s.nd == 2 && s.G == 1 &&
                                  s.kernel[0] == 3 && s.kernel[1] == 3 && s.stride[0] == 1 &&
                                  s.stride[1] == 1 && s.dilate[0] == 1 && s.dilate[1] == 1;
      bool made = false;
      if (winograd_shape) {
        // Winograd kernels work on blocked data: the layouts are theirs to choose.
        try {
          const memory::desc src_any(p->src_md.dims(), memory::data_type::f32, Tag::any);
          const memory::desc dst_any(p->dst_md.dims(), memory::data_type::f32, Tag::any);
          dnnl::convolution_forward::desc d(prop, dnnl::algorithm::convolution_winograd, src_any,
                                            weight_any, p->bias_md, dst_any, stride, dilate, pad_l,
                                            pad_r);
          pd = dnnl::convolution_forward::primitive_desc(d, attr, OneDnnEngine());
          p->src_md = pd.src_desc();
          p->dst_md = pd.dst_desc();
          made = true;
        } catch (const dnnl::error&) {
          made = false;  // no Winograd kernel for this CPU or shape: the direct one below
        }
      }
      if (!made) {
        dnnl::convolution_forward::desc d(prop, dnnl::algorithm::convolution_direct, p->src_md,
                                          weight_any, p->bias_md, p->dst_md, stride, dilate, pad_l,
                                          pad_r);
        pd = dnnl::convolution_forward::primitive_desc(d, attr, OneDnnEngine());
        if (positions == 1 && !blocked) {
          // A single output position is a matrix-vector product (a classifier written as a
          // convolution): oneDNN's GEMM-based kernel does it several times faster than the
          // direct ones it lists first. It is the one that reports GemmWeightDesc's layout.
          const memory::desc gemm_weights = GemmWeightDesc(s, p->user_weight_md.dims());
          dnnl::convolution_forward::primitive_desc candidate(d, attr, OneDnnEngine());
          do {
            if (candidate.weights_desc() == gemm_weights) {
              pd = candidate;
              break;
            }
          } while (candidate.next_impl());
        }
        const bool exact = !s.fast_math && (s.bn || s.residual || s.relu);
        if (exact && !p->epilogue_after) {
          const dnnl::convolution_forward::primitive_desc alone(d, OneDnnEngine());
          if (!SameImplementation(alone, pd) || alone.weights_desc() != pd.weights_desc()) {
            p->epilogue_after = true;
            attr.set_post_ops(post_ops());
            pd = dnnl::convolution_forward::primitive_desc(d, attr, OneDnnEngine());
          }
        }
      }
      p->src_md = pd.src_desc();
      p->dst_md = pd.dst_desc();
      p->weight_md = pd.weights_desc();
      p->scratchpad_md = pd.scratchpad_desc();
      p->prim = dnnl::convolution_forward(pd);
    }
  } catch (const dnnl::error& e) {
    HN_THROW(kInternal) << SpecText(s) << ": oneDNN has no kernel for it (" << e.what() << ")";
  }
  p->weight_key = std::string(s.deconv ? "dnnl-deconv:" : "dnnl-conv:") +
                  MemoryDescKey(p->weight_md) + (p->fold_bn ? ":bn" : "");
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

// Primitives of type P by call, made by `make`, shared by every thread (oneDNN primitives may
// run concurrently), least recently used dropped beyond kMaxPrimitives.
template <typename P>
class PrimitiveCache {
 public:
  explicit PrimitiveCache(std::shared_ptr<P> (*make)(const ConvSpec&)) : make_(make) {}

  std::shared_ptr<const P> Get(const ConvSpec& spec) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = index_.find(spec);
      if (it != index_.end()) {
        order_.splice(order_.begin(), order_, it->second);
        return it->second->second;
      }
    }
    std::shared_ptr<const P> made = make_(spec);
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
  using Entry = std::pair<ConvSpec, std::shared_ptr<const P>>;
  std::shared_ptr<P> (*make_)(const ConvSpec&);
  std::mutex mutex_;
  std::list<Entry> order_;
  std::unordered_map<ConvSpec, typename std::list<Entry>::iterator, SpecHash, SpecEqual> index_;
};

PrimitiveCache<ConvPrimitive>& Primitives() {
  static PrimitiveCache<ConvPrimitive> cache(
      [](const ConvSpec& s) { return MakePrimitive(s, false); });
  return cache;
}

PrimitiveCache<ConvPrimitive>& BlockedPrimitives() {
  static PrimitiveCache<ConvPrimitive> cache(
      [](const ConvSpec& s) { return MakePrimitive(s, true); });
  return cache;
}

// Weights (and, with BatchNorm folded, the bias) in the primitive's layout.
struct PackedWeights {
  NDArray weights;  // 64-byte aligned storage of weight_md's size
  NDArray bias;     // folded bias (fast_math with BatchNorm), else none
};

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
    float* folded = a.workspace->Get<float>(kConvFoldSlot, static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
      int64_t f;
      if (s.deconv) {  // (C, Fg, taps): channel c of group c / Cg
        const int64_t c = i / (Fg * taps), fl = (i / taps) % Fg;
        f = (c / Cg) * Fg + fl;
      } else {
        f = i / (Cg * taps);
      }
      folded[i] = a.weight[i] * a.epilogue.bn_scale[f];
    }
    source = folded;
    packed->bias = NDArray(Shape{s.F});
    float* b = packed->bias.data<float>();
    const Epilogue& e = a.epilogue;
    for (int64_t f = 0; f < s.F; ++f) {
      b[f] = (s.bias ? e.bias[f] : 0.f) * e.bn_scale[f] + e.bn_shift[f];
    }
  }
  memory user(p.user_weight_md, OneDnnEngine(), const_cast<float*>(source));
  memory dst(p.weight_md, OneDnnEngine(), packed->weights.data<float>());
  RunReorder(SharedReorder(p.user_weight_md, p.weight_md), user, dst, a.workspace);
  OneDnnStream().wait();
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
      if (i == 0 && !s.bias) continue;
      const uint64_t stamp = inputs[i] ? WriteStamp(*inputs[i]) : 0;
      if (stamp == 0) return make();
      key += ":" + std::to_string(stamp);
    }
  }
  return KeptWithWeights<PackedWeights>(a, key, make);
}

// RunEpilogue on output `e` of call s laid out as `md`: channel-last, or in blocks of b channels
// (N, F/b, spatial..., b; F a multiple of b), each block's positions a run of rows of b channels
// whose per-channel values start at its first channel. Every element gets the float operations
// it gets channel-last, so both layouts give the same bits.
void RunEpilogueIn(const memory::desc& md, const ConvSpec& s, const EpilogueArgs& e) {
  if (md == memory::desc(md.dims(), memory::data_type::f32, ChannelLastTag(s.nd))) {
    return RunEpilogue(e);
  }
  const Tag blocks8[3] = {Tag::nCw8c, Tag::nChw8c, Tag::nCdhw8c};
  const Tag blocks16[3] = {Tag::nCw16c, Tag::nChw16c, Tag::nCdhw16c};
  const size_t rank = static_cast<size_t>(s.nd - 1);
  int64_t b = 0;
  if (md == memory::desc(md.dims(), memory::data_type::f32, blocks8[rank])) b = 8;
  if (md == memory::desc(md.dims(), memory::data_type::f32, blocks16[rank])) b = 16;
  HN_CHECK(b > 0 && s.F % b == 0, kInternal)
      << SpecText(s) << ": no epilogue for the output layout oneDNN chose";
  const int64_t plane = OutputPositions(s) / s.N, blocks = s.F / b;
  for (int64_t n = 0; n < s.N; ++n) {
    for (int64_t fb = 0; fb < blocks; ++fb) {
      const int64_t offset = (n * blocks + fb) * plane * b;
      EpilogueArgs block = e;
      block.positions = plane;
      block.C = b;
      block.conv = e.conv + offset;
      block.out = e.out + offset;
      if (e.residual != nullptr) block.residual = e.residual + offset;
      if (e.epilogue.bn_scale != nullptr) {
        block.epilogue.bn_scale = e.epilogue.bn_scale + fb * b;
        block.epilogue.bn_shift = e.epilogue.bn_shift + fb * b;
      }
      RunEpilogue(block);
    }
  }
}

}  // namespace

void RunOneDnnConvolution(const ConvSpec& s, const ConvArgs& a, bool blocked) {
  // A single output position gets oneDNN's GEMM kernel (MakePrimitive), which splits its
  // reduction between threads, so the sums would depend on the thread count: it runs on one
  // thread, which costs little for the matrix-vector product it gets.
  const int64_t positions = OutputPositions(s);
  ConvSpec keyed = s;
  keyed.threads = positions == 1 ? 1 : KernelThreads();
  // Only where it picks oneDNN's Winograd kernels do its primitives read it; elsewhere
  // training's share inference's.
  if (!OneDnnWinogradPays(s)) keyed.winograd = 0;
  std::shared_ptr<const ConvPrimitive> p =
      blocked ? BlockedPrimitives().Get(keyed) : Primitives().Get(keyed);
  std::shared_ptr<const PackedWeights> w = Weights(*p, s, a);
  ThreadCountWhile threads(static_cast<int>(keyed.threads));
  dnnl::stream& stream = OneDnnStream();
  const dnnl::engine& engine = OneDnnEngine();
  Workspace* workspace = a.workspace;
  try {
    memory src(p->src_md, engine, const_cast<float*>(a.data));
    if (p->reorder_src) {
      memory user_src(p->caller_src_md, engine, const_cast<float*>(a.data));
      src.set_data_handle(
          a.workspace->Get<float>(kConvSrcSlot, p->src_md.get_size() / sizeof(float)));
      RunReorder(p->src_in, user_src, src, workspace);
    }
    // The primitive's output goes to scratch when it must be laid out for the caller, and when
    // the epilogue runs afterwards with a residual that the output overwrites.
    const bool residual_is_out = s.residual && a.residual == a.out;
    float* dst_data = a.out;
    if (p->reorder_dst || (p->epilogue_after && residual_is_out)) {
      dst_data = a.workspace->Get<float>(kConvDstSlot, p->dst_md.get_size() / sizeof(float));
    }
    memory dst(p->dst_md, engine, dst_data);
    const float* residual = a.residual;  // in the primitive's layout
    if (s.residual && p->reorder_dst) {
      // oneDNN's sum post-op adds what the output holds; the epilogue reads it from scratch.
      memory user_res(p->caller_dst_md, engine, const_cast<float*>(a.residual));
      memory res = dst;
      if (p->epilogue_after) {
        float* kept =
            a.workspace->Get<float>(kConvResidualSlot, p->dst_md.get_size() / sizeof(float));
        res = memory(p->dst_md, engine, kept);
        residual = kept;
      }
      RunReorder(p->residual_in, user_res, res, workspace);
    } else if (s.residual && !p->epilogue_after && !residual_is_out) {
      std::memcpy(a.out, a.residual, p->dst_md.get_size());
    }
    std::unordered_map<int, memory> args;
    args[DNNL_ARG_SRC] = src;
    args[DNNL_ARG_DST] = dst;
    args[DNNL_ARG_SCRATCHPAD] = ScratchpadIn(p->scratchpad_md, kOneDnnScratchpadSlot, workspace);
    args[DNNL_ARG_WEIGHTS] =
        memory(p->weight_md, engine, const_cast<float*>(w->weights.data<float>()));
    if (p->fold_bn) {
      args[DNNL_ARG_BIAS] = memory(p->bias_md, engine, const_cast<float*>(w->bias.data<float>()));
    } else if (p->has_bias) {
      args[DNNL_ARG_BIAS] = memory(p->bias_md, engine, const_cast<float*>(a.epilogue.bias));
    }
    p->prim.execute(stream, args);
    stream.wait();
    // The epilogue on the primitive's output (channel-last or blocked), before it is laid out
    // for the caller; a clip alone on the caller's output. The clip is always ours: oneDNN's maps
    // NaN to its lower bound.
    if (p->epilogue_after) {
      RunEpilogueIn(p->dst_md, s, EpilogueOf(s, a, true, positions, dst_data, residual,
                                             p->reorder_dst ? dst_data : a.out));
    }
    if (p->reorder_dst) {
      memory user_dst(p->caller_dst_md, engine, a.out);
      RunReorder(p->dst_out, dst, user_dst, workspace);
      stream.wait();
    }
    if (a.epilogue.clip && !p->epilogue_after) {
      RunEpilogue(EpilogueOf(s, a, false, positions, a.out, nullptr, a.out));
    }
  } catch (const dnnl::error& e) {
    HN_THROW(kInternal) << SpecText(s) << ": oneDNN failed (" << e.what() << ")";
  }
}

namespace {

// ---- Gradients: oneDNN's backward-data and backward-weights primitives of a convolution
// (deconv 0, no epilogue). Data and gradients channel-last where oneDNN has a direct kernel for
// it, else the primitive's choice (blocked); weights the primitive's choice; reorders from and
// to the caller's layouts where they differ.

struct ConvGradPrimitive {
  dnnl::primitive prim;
  memory::desc scratchpad_md;  // in the caller's workspace, as ConvPrimitive's
  // The output gradient and the data side (backward data: dx written; backward weights: x
  // read), in the primitive's layouts and the caller's, and reorders where they differ.
  memory::desc grad_md, caller_grad_md, data_md, caller_data_md;
  // The weights (backward data: w read; backward weights: dw written), the primitive's layout
  // and MXNet's, and the reorder between them (MXNet's to the primitive's for backward data).
  memory::desc weight_md, user_weight_md;
  bool reorder_grad = false, reorder_data = false, reorder_weight = false;
  dnnl::reorder grad_in, data_move, weight_move;
  std::string weight_key;
  // Backward data as a forward convolution of dy (RotatedForwardTakes): user_weight_md is then
  // the rotated weights' plain layout (C, F, k...), which RotateWeights writes.
  bool rotated = false;
  // Backward weights as products of dy and the data's patches (PatchGemmTakes): no primitive,
  // data and gradient channel-last.
  bool patch_gemm = false;
};

// The primitive descriptors of the forward convolution that both backward ones take as a hint.
dnnl::convolution_forward::primitive_desc ForwardHint(const ConvSpec& s,
                                                      dnnl::algorithm algorithm,
                                                      const memory::desc& src,
                                                      const memory::desc& weights,
                                                      const memory::desc& dst,
                                                      const memory::dims& dilate) {
  dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_training, algorithm, src, weights,
                                    dst, Spatial(s.stride, s.nd), dilate, Spatial(s.pad_l, s.nd),
                                    Spatial(s.pad_r, s.nd));
  return dnnl::convolution_forward::primitive_desc(d, OneDnnEngine());
}

// Backward data (weights false) or backward weights (true) of call s, on channel-last data or,
// with `blocked`, on the layouts oneDNN chooses, there with its Winograd kernels where
// OneDnnWinogradPays (its direct ones if it has none for the call).
std::shared_ptr<ConvGradPrimitive> MakeGradPrimitive(const ConvSpec& s, bool weights,
                                                     bool blocked) {
  ThreadCountWhile threads(static_cast<int>(s.threads));
  auto p = std::make_shared<ConvGradPrimitive>();
  const Tag caller = s.channel_last ? ChannelLastTag(s.nd) : ChannelFirstTag(s.nd);
  p->caller_data_md = memory::desc(DataDims(s.N, s.C, s.in, s.nd), memory::data_type::f32, caller);
  p->caller_grad_md = memory::desc(DataDims(s.N, s.F, s.out, s.nd), memory::data_type::f32, caller);
  p->user_weight_md = UserWeightDesc(s, memory::data_type::f32);
  const memory::desc weight_any(p->user_weight_md.dims(), memory::data_type::f32, Tag::any);
  memory::dims dilate;
  for (int64_t i = 0; i < s.nd; ++i) dilate.push_back(s.dilate[i] - 1);
  const memory::dims stride = Spatial(s.stride, s.nd), pad_l = Spatial(s.pad_l, s.nd),
                     pad_r = Spatial(s.pad_r, s.nd);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  // Data and gradients channel-last, as the channel-last training graph holds them (no
  // re-layout there; channel-first callers get theirs re-laid-out), where oneDNN has a direct
  // kernel for that; else, and when `blocked`, the layouts it chooses (blocked). The choice
  // depends on the call only, never on the caller's layout, so both layouts run the same kernel.
  // The layouts and algorithms tried, in order; the last one's failure is an error.
  std::vector<std::pair<Tag, dnnl::algorithm>> attempts;
  if (blocked && OneDnnWinogradPays(s)) {
    attempts.emplace_back(Tag::any, dnnl::algorithm::convolution_winograd);
  }
  if (!blocked) attempts.emplace_back(ChannelLastTag(s.nd), dnnl::algorithm::convolution_direct);
  attempts.emplace_back(Tag::any, dnnl::algorithm::convolution_direct);
  for (size_t i = 0; i < attempts.size(); ++i) {
    const auto [tag, algorithm] = attempts[i];
    const bool last = i + 1 == attempts.size();
    const memory::desc data_md(p->caller_data_md.dims(), memory::data_type::f32, tag);
    const memory::desc grad_md(p->caller_grad_md.dims(), memory::data_type::f32, tag);
    try {
      const auto hint = ForwardHint(s, algorithm, data_md, weight_any, grad_md, dilate);
      std::string name;
      if (weights) {
        dnnl::convolution_backward_weights::desc d(algorithm, data_md, weight_any, grad_md,
                                                   stride, dilate, pad_l, pad_r);
        dnnl::convolution_backward_weights::primitive_desc pd(d, attr, OneDnnEngine(), hint);
        name = pd.impl_info_str();
        p->data_md = pd.src_desc();
        p->grad_md = pd.diff_dst_desc();
        p->weight_md = pd.diff_weights_desc();
        p->scratchpad_md = pd.scratchpad_desc();
        p->prim = dnnl::convolution_backward_weights(pd);
      } else {
        dnnl::convolution_backward_data::desc d(algorithm, data_md, weight_any, grad_md, stride,
                                                dilate, pad_l, pad_r);
        dnnl::convolution_backward_data::primitive_desc pd(d, attr, OneDnnEngine(), hint);
        name = pd.impl_info_str();
        p->data_md = pd.diff_src_desc();
        p->grad_md = pd.diff_dst_desc();
        p->weight_md = pd.weights_desc();
        p->scratchpad_md = pd.scratchpad_desc();
        p->prim = dnnl::convolution_backward_data(pd);
      }
      // oneDNN's GEMM-based and reference kernels are its fallbacks (3-5x slower than the
      // direct ones on blocked data): channel-last is only worth it with a direct kernel.
      const bool fallback = name.rfind("gemm", 0) == 0 || name.rfind("ref", 0) == 0;
      if (last || !fallback) break;
    } catch (const dnnl::error& e) {
      if (last) {
        HN_THROW(kInternal) << SpecText(s) << ": oneDNN has no backward-"
                            << (weights ? "weights" : "data") << " kernel for it (" << e.what()
                            << ")";
      }
    }
  }
  if (!weights) p->weight_key = "dnnl-conv-backward-data:" + MemoryDescKey(p->weight_md);
  p->reorder_grad = p->grad_md != p->caller_grad_md;
  p->reorder_data = p->data_md != p->caller_data_md;
  p->reorder_weight = p->weight_md != p->user_weight_md;
  if (p->reorder_grad) p->grad_in = SharedReorder(p->caller_grad_md, p->grad_md);
  if (p->reorder_data) {
    p->data_move = weights ? SharedReorder(p->caller_data_md, p->data_md)
                           : SharedReorder(p->data_md, p->caller_data_md);
  }
  if (p->reorder_weight) {
    p->weight_move = weights ? SharedReorder(p->weight_md, p->user_weight_md)
                             : SharedReorder(p->user_weight_md, p->weight_md);
  }
  return p;
}

// A gradient primitive of call s whose data and output gradient are channel-last, the caller's
// layouts beside them.
std::shared_ptr<ConvGradPrimitive> ChannelLastGradPrimitive(const ConvSpec& s) {
  auto p = std::make_shared<ConvGradPrimitive>();
  const Tag caller = s.channel_last ? ChannelLastTag(s.nd) : ChannelFirstTag(s.nd);
  const Tag cl = ChannelLastTag(s.nd);
  p->caller_data_md = memory::desc(DataDims(s.N, s.C, s.in, s.nd), memory::data_type::f32, caller);
  p->caller_grad_md = memory::desc(DataDims(s.N, s.F, s.out, s.nd), memory::data_type::f32, caller);
  p->data_md = memory::desc(p->caller_data_md.dims(), memory::data_type::f32, cl);
  p->grad_md = memory::desc(p->caller_grad_md.dims(), memory::data_type::f32, cl);
  return p;
}

// Backward data of call s (RotatedForwardTakes) as oneDNN's forward convolution of dy,
// channel-last, by the rotated weights, padded by what the window reaches beyond the call's own
// padding.
std::shared_ptr<ConvGradPrimitive> MakeRotatedDataGradPrimitive(const ConvSpec& s) {
  ThreadCountWhile threads(static_cast<int>(s.threads));
  auto p = ChannelLastGradPrimitive(s);
  p->rotated = true;
  const Tag plain[3] = {Tag::oiw, Tag::oihw, Tag::oidhw};
  memory::dims rotated_dims{s.C, s.F}, dilate, pad_l, pad_r;
  for (int64_t i = 0; i < s.nd; ++i) {
    rotated_dims.push_back(s.kernel[i]);
    dilate.push_back(s.dilate[i] - 1);
    const int64_t reach = (s.kernel[i] - 1) * s.dilate[i];
    pad_l.push_back(reach - s.pad_l[i]);
    pad_r.push_back(reach - s.pad_r[i]);
  }
  p->user_weight_md =
      memory::desc(rotated_dims, memory::data_type::f32, plain[static_cast<size_t>(s.nd - 1)]);
  const memory::desc weight_any(rotated_dims, memory::data_type::f32, Tag::any);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  try {
    dnnl::convolution_forward::desc d(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, p->grad_md,
        weight_any, p->data_md, memory::dims(static_cast<size_t>(s.nd), 1), dilate, pad_l, pad_r);
    dnnl::convolution_forward::primitive_desc pd(d, attr, OneDnnEngine());
    p->weight_md = pd.weights_desc();
    p->scratchpad_md = pd.scratchpad_desc();
    p->prim = dnnl::convolution_forward(pd);
  } catch (const dnnl::error& e) {
    HN_THROW(kInternal) << SpecText(s)
                        << ": oneDNN has no forward kernel for its rotated backward data ("
                        << e.what() << ")";
  }
  p->weight_key = "dnnl-conv-backward-data-rotated:" + MemoryDescKey(p->weight_md);
  p->reorder_grad = p->grad_md != p->caller_grad_md;
  p->reorder_data = p->data_md != p->caller_data_md;
  p->reorder_weight = true;  // always rotated first
  if (p->reorder_grad) p->grad_in = SharedReorder(p->caller_grad_md, p->grad_md);
  if (p->reorder_data) p->data_move = SharedReorder(p->data_md, p->caller_data_md);
  p->weight_move = SharedReorder(p->user_weight_md, p->weight_md);
  return p;
}

// The backward-data (kWeights false) or backward-weights primitives of oneDNN, on channel-last
// data or kBlocked.
template <bool kWeights, bool kBlocked>
PrimitiveCache<ConvGradPrimitive>& GradPrimitiveCache() {
  static PrimitiveCache<ConvGradPrimitive> cache(
      [](const ConvSpec& s) { return MakeGradPrimitive(s, kWeights, kBlocked); });
  return cache;
}

template <bool kWeights>
PrimitiveCache<ConvGradPrimitive>& GradPrimitives(bool blocked) {
  return blocked ? GradPrimitiveCache<kWeights, true>() : GradPrimitiveCache<kWeights, false>();
}

// Backward weights of call s (PatchGemmTakes) as products (RunPatchGemmWeightGradient): the data
// and output gradient channel-last, the weights' gradient MXNet's.
std::shared_ptr<ConvGradPrimitive> MakePatchGemmWeightGradPrimitive(const ConvSpec& s) {
  auto p = ChannelLastGradPrimitive(s);
  p->patch_gemm = true;
  p->user_weight_md = UserWeightDesc(s, memory::data_type::f32);
  p->weight_md = p->user_weight_md;
  p->reorder_grad = p->grad_md != p->caller_grad_md;
  p->reorder_data = p->data_md != p->caller_data_md;
  if (p->reorder_grad) p->grad_in = SharedReorder(p->caller_grad_md, p->grad_md);
  if (p->reorder_data) p->data_move = SharedReorder(p->caller_data_md, p->data_md);
  return p;
}

PrimitiveCache<ConvGradPrimitive>& PatchGemmWeightGradPrimitives() {
  static PrimitiveCache<ConvGradPrimitive> cache(MakePatchGemmWeightGradPrimitive);
  return cache;
}

PrimitiveCache<ConvGradPrimitive>& RotatedDataGradPrimitives() {
  static PrimitiveCache<ConvGradPrimitive> cache(MakeRotatedDataGradPrimitive);
  return cache;
}

// The caller's output gradient in the primitive's layout: itself, `laid` when that already holds
// it in that layout, or re-laid-out into the workspace (kConvDstSlot).
memory GradIn(const ConvGradPrimitive& p, const ConvGradArgs& a, const memory* laid) {
  const dnnl::engine& engine = OneDnnEngine();
  if (!p.reorder_grad) return memory(p.grad_md, engine, const_cast<float*>(a.out_grad));
  if (laid != nullptr && laid->get_desc() == p.grad_md) return *laid;
  memory to(p.grad_md, engine,
            a.workspace->Get<float>(kConvDstSlot, p.grad_md.get_size() / sizeof(float)));
  RunReorder(p.grad_in, memory(p.caller_grad_md, engine, const_cast<float*>(a.out_grad)), to,
             a.workspace);
  return to;
}

// w (F, C, taps) turned 180 degrees with its channels swapped: (C, F, taps), taps reversed.
// Reversing the flat tap index reverses every spatial axis of the window.
const float* RotateWeights(const ConvSpec& s, const float* w, Workspace* workspace) {
  const int64_t taps = Taps(s);
  float* rotated = workspace->Get<float>(kConvFoldSlot, static_cast<size_t>(s.F * s.C * taps));
  for (int64_t f = 0; f < s.F; ++f) {
    for (int64_t c = 0; c < s.C; ++c) {
      const float* from = w + (f * s.C + c) * taps;
      float* to = rotated + (c * s.F + f) * taps;
      for (int64_t t = 0; t < taps; ++t) to[taps - 1 - t] = from[t];
    }
  }
  return rotated;
}

// d data of call s on primitive p (oneDNN's backward data, or its forward on rotated weights);
// returns the output gradient as p read it.
memory RunDataGradient(const ConvGradPrimitive& p, const ConvSpec& s, const ConvGradArgs& a) {
  const dnnl::engine& engine = OneDnnEngine();
  // The weights in the primitive's layout, kept with the weight array (per version).
  std::shared_ptr<const PackedWeights> w;
  const float* weights = a.weight;
  if (p.reorder_weight) {
    ConvArgs kept;
    kept.weight = a.weight;
    kept.weight_array = a.weight_array;
    w = KeptWithWeights<PackedWeights>(kept, p.weight_key, [&] {
      auto packed = std::make_shared<PackedWeights>();
      packed->weights = NDArray(Shape{static_cast<int64_t>(p.weight_md.get_size() / 4)});
      const float* source = p.rotated ? RotateWeights(s, a.weight, a.workspace) : a.weight;
      memory user(p.user_weight_md, engine, const_cast<float*>(source));
      memory to(p.weight_md, engine, packed->weights.data<float>());
      RunReorder(p.weight_move, user, to, a.workspace);
      OneDnnStream().wait();
      return packed;
    });
    weights = w->weights.data<float>();
  }
  memory dy = GradIn(p, a, nullptr);
  float* dx_data = p.reorder_data ? a.workspace->Get<float>(kConvResidualSlot,
                                                            p.data_md.get_size() / sizeof(float))
                                  : a.data_grad;
  memory dx(p.data_md, engine, dx_data);
  p.prim.execute(
      OneDnnStream(),
      {{p.rotated ? DNNL_ARG_SRC : DNNL_ARG_DIFF_DST, dy},
       {DNNL_ARG_WEIGHTS, memory(p.weight_md, engine, const_cast<float*>(weights))},
       {p.rotated ? DNNL_ARG_DST : DNNL_ARG_DIFF_SRC, dx},
       {DNNL_ARG_SCRATCHPAD, ScratchpadIn(p.scratchpad_md, kOneDnnScratchpadSlot, a.workspace)}});
  if (p.reorder_data) {
    RunReorder(p.data_move, dx, memory(p.caller_data_md, engine, a.data_grad), a.workspace);
  }
  OneDnnStream().wait();
  return dy;
}

// The patches of images [n0, n0 + images) of channel-last data x (N, H, W, C) that call s's
// windows read: a row per output position (image, row, column), in it the C channels of each
// tap in MXNet's tap order, 0 where the window reads padding.
void BuildPatches(const ConvSpec& s, const float* x, int64_t n0, int64_t images, float* patches) {
  const int64_t H = s.in[0], W = s.in[1], OH = s.out[0], OW = s.out[1];
  const int64_t KH = s.kernel[0], KW = s.kernel[1], C = s.C;
  const int64_t row_floats = KH * KW * C;
  ParallelFor(images * OH, true, [&](int64_t r) {
    const int64_t n = n0 + r / OH, oh = r % OH;
    float* to = patches + r * OW * row_floats;
    for (int64_t ow = 0; ow < OW; ++ow) {
      for (int64_t i = 0; i < KH; ++i) {
        const int64_t ih = oh * s.stride[0] - s.pad_l[0] + i * s.dilate[0];
        for (int64_t j = 0; j < KW; ++j, to += C) {
          const int64_t iw = ow * s.stride[1] - s.pad_l[1] + j * s.dilate[1];
          if (ih < 0 || ih >= H || iw < 0 || iw >= W) {
            std::fill(to, to + C, 0.f);
          } else {
            std::memcpy(to, x + ((n * H + ih) * W + iw) * C,
                        static_cast<size_t>(C) * sizeof(float));
          }
        }
      }
    }
  });
}

// The patches of one product at most: 32 MiB, whole images (one at least).
constexpr int64_t kPatchFloats = int64_t{8} << 20;

// The caller's data in the primitive's layout: itself, or re-laid-out into the workspace
// (kConvSrcSlot).
memory DataIn(const ConvGradPrimitive& p, const ConvGradArgs& a) {
  const dnnl::engine& engine = OneDnnEngine();
  memory x(p.data_md, engine, const_cast<float*>(a.data));
  if (p.reorder_data) {
    x.set_data_handle(a.workspace->Get<float>(kConvSrcSlot, p.data_md.get_size() / sizeof(float)));
    RunReorder(p.data_move, memory(p.caller_data_md, engine, const_cast<float*>(a.data)), x,
               a.workspace);
  }
  return x;
}

// d weights of call s as dw'[f, (tap, c)] = the sum over positions of dy[position, f] times the
// patches' [position, (tap, c)]: one product (Gemm) per chunk of images, each added to the sums of
// those before, the chunks fixed by the call's geometry; then dw' (F, taps, C) laid out as
// MXNet's (F, C, taps).
void RunPatchGemmWeightGradient(const ConvGradPrimitive& p, const ConvSpec& s,
                                const ConvGradArgs& a, const memory* laid) {
  const memory x_memory = DataIn(p, a);
  const memory dy_memory = GradIn(p, a, laid);
  OneDnnStream().wait();
  const float* x = static_cast<const float*>(x_memory.get_data_handle());
  const float* dy = static_cast<const float*>(dy_memory.get_data_handle());
  const int64_t taps = Taps(s), row_floats = taps * s.C, plane = s.out[0] * s.out[1];
  const int64_t images = std::min(s.N, std::max<int64_t>(1, kPatchFloats / (plane * row_floats)));
  float* patches =
      a.workspace->Get<float>(kConvPatchSlot, static_cast<size_t>(images * plane * row_floats));
  float* sums = a.workspace->Get<float>(kConvFoldSlot, static_cast<size_t>(s.F * row_floats));
  for (int64_t n0 = 0; n0 < s.N; n0 += images) {
    const int64_t count = std::min(images, s.N - n0);
    BuildPatches(s, x, n0, count, patches);
    OneDnnGemm(true, false, s.F, row_floats, count * plane, 1.f, dy + n0 * plane * s.F, s.F,
               patches, row_floats, n0 == 0 ? 0.f : 1.f, sums, row_floats);
  }
  ParallelFor(s.F, true, [&](int64_t f) {
    for (int64_t t = 0; t < taps; ++t) {
      const float* from = sums + (f * taps + t) * s.C;
      for (int64_t c = 0; c < s.C; ++c) a.weight_grad[(f * s.C + c) * taps + t] = from[c];
    }
  });
}

// d weights on backward-weights primitive p; `laid` (or null) is the output gradient as the
// backward-data primitive read it.
void RunWeightGradient(const ConvGradPrimitive& p, const ConvSpec& s, const ConvGradArgs& a,
                       const memory* laid) {
  if (p.patch_gemm) return RunPatchGemmWeightGradient(p, s, a, laid);
  const dnnl::engine& engine = OneDnnEngine();
  memory x = DataIn(p, a);
  memory dy = GradIn(p, a, laid);
  float* dw_data = p.reorder_weight ? a.workspace->Get<float>(
                                          kConvFoldSlot, p.weight_md.get_size() / sizeof(float))
                                    : a.weight_grad;
  memory dw(p.weight_md, engine, dw_data);
  p.prim.execute(
      OneDnnStream(),
      {{DNNL_ARG_SRC, x},
       {DNNL_ARG_DIFF_DST, dy},
       {DNNL_ARG_DIFF_WEIGHTS, dw},
       {DNNL_ARG_SCRATCHPAD, ScratchpadIn(p.scratchpad_md, kOneDnnScratchpadSlot, a.workspace)}});
  if (p.reorder_weight) {
    RunReorder(p.weight_move, dw, memory(p.user_weight_md, engine, a.weight_grad), a.workspace);
  }
  OneDnnStream().wait();
}

// The kernel of a gradient pass of call s (counted): `usual`, unless a test forces one;
// `takes(kernel)`: whether that kernel can run s at all.
template <typename Kernel, typename Takes>
Kernel ChooseGradKernel(KernelChoice& choice, Kernel usual, const ConvSpec& s, const Takes& takes) {
  return static_cast<Kernel>(choice.Choose(
      static_cast<int>(usual), [&](int k) { return takes(static_cast<Kernel>(k)); },
      [&] { return SpecText(s); }));
}

}  // namespace

void RunConvolutionGradients(const ConvSpec& s, const ConvGradArgs& a) {
  ConvSpec keyed = s;
  keyed.threads = KernelThreads();  // the primitives are made for it
  std::shared_ptr<const ConvGradPrimitive> data_p, weight_p;
  bool winograd_data = false, winograd_weights = false;
  if (a.data_grad != nullptr) {
    using K = ConvDataGradKernel;
    const K usual = WinogradPays(s)                          ? K::kWinograd
                    : OneDnnWinogradPays(s)                  ? K::kOneDnnBlocked
                    : RotatedForwardPays(s)                  ? K::kRotatedForward
                    : BlockedLayoutsPayForGradient(s, false) ? K::kOneDnnBlocked
                                                             : K::kOneDnn;
    const K kernel = ChooseGradKernel(ConvolutionDataGradientKernels(), usual, s, [&](K k) {
      return k == K::kWinograd         ? WinogradTakes(s)
             : k == K::kRotatedForward ? RotatedForwardTakes(s)
                                       : true;
    });
    winograd_data = kernel == K::kWinograd;
    if (!winograd_data) {
      data_p = kernel == K::kRotatedForward
                   ? RotatedDataGradPrimitives().Get(keyed)
                   : GradPrimitives<false>(kernel == K::kOneDnnBlocked).Get(keyed);
    }
  }
  if (a.weight_grad != nullptr) {
    using K = ConvWeightGradKernel;
    const K usual = WinogradPays(s)                         ? K::kWinograd
                    : OneDnnWinogradPays(s)                 ? K::kOneDnnBlocked
                    : PatchGemmPays(s)                      ? K::kPatchGemm
                    : BlockedLayoutsPayForGradient(s, true) ? K::kOneDnnBlocked
                                                            : K::kOneDnn;
    const K kernel = ChooseGradKernel(ConvolutionWeightGradientKernels(), usual, s, [&](K k) {
      return k == K::kWinograd ? WinogradTakes(s) : k != K::kPatchGemm || PatchGemmTakes(s);
    });
    winograd_weights = kernel == K::kWinograd;
    if (!winograd_weights) {
      weight_p = kernel == K::kPatchGemm
                     ? PatchGemmWeightGradPrimitives().Get(keyed)
                     : GradPrimitives<true>(kernel == K::kOneDnnBlocked).Get(keyed);
    }
  }
  ThreadCountWhile threads(static_cast<int>(keyed.threads));
  try {
    std::optional<memory> laid;
    if (data_p) laid = RunDataGradient(*data_p, s, a);
    if (winograd_data) RunWinogradDataGradient(s, a);
    if (weight_p) RunWeightGradient(*weight_p, s, a, laid ? &*laid : nullptr);
    if (winograd_weights) RunWinogradWeightGradient(s, a);
  } catch (const dnnl::error& e) {
    HN_THROW(kInternal) << SpecText(s) << ": oneDNN's backward convolution failed (" << e.what()
                        << ")";
  }
}

}  // namespace internal
}  // namespace hybridnet
