#include "kernels/onednn_convolution_int8.h"

#include <cstring>
#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>
#include <vector>

#include "hybridnet/base.h"
#include "kernels/convolution-inl.h"
#include "kernels/onednn.h"
#include "kernels/onednn_convolution.h"
#include "kernels/threads.h"
#include "ndarray/storage.h"

namespace hybridnet {
namespace internal {

namespace {

using dnnl::memory;
using Tag = memory::format_tag;

// oneDNN's mask for one scale (0) or one per element of dimension `dim` and those before it
// that are also masked: the output channel is dimension 1 of the data, dimensions 0 and 1 of
// grouped weights (G, F/G, ...), dimension 0 of plain weights and of the bias.
int ScaleMask(size_t count, int per_channel_mask) { return count > 1 ? per_channel_mask : 0; }

struct Int8Primitive {
  dnnl::primitive prim;
  std::string impl;
  memory::desc src_md, dst_md, weight_md, bias_md, scratchpad_md;
  // The packed weights' key before the caller's: made once, not formatted from weight_md on
  // every call.
  std::string weight_key;
  // The caller's layouts and the reorders to and from them when the caller is channel-first.
  // The residual as the sum post-op reads it from the output (its own type when that is as wide
  // as the output's, else converted to the output's type), and as the caller has it.
  memory::desc caller_src_md, caller_dst_md, sum_md, caller_sum_md;
  bool relayout = false;
  bool convert_sum = false;
  dnnl::reorder src_in, dst_out, sum_in;
};

// The key of a call's primitive: its bytes (the geometry, types, scales and post-ops) and the
// thread count the primitive runs on.
std::string CallKey(const Int8ConvCall& c, int threads) {
  std::string key;
  auto put = [&key](const void* p, size_t n) { key.append(static_cast<const char*>(p), n); };
  put(&c.geometry, sizeof(c.geometry));
  const int64_t words[] = {static_cast<int64_t>(c.data),
                           static_cast<int64_t>(c.out),
                           static_cast<int64_t>(c.act.kind),
                           static_cast<int64_t>(c.postsum_act.kind),
                           c.sum ? 1 : 0,
                           static_cast<int64_t>(c.sum_type),
                           threads,
                           static_cast<int64_t>(c.output_scales.size())};
  put(words, sizeof(words));
  const float floats[] = {c.act.alpha, c.act.scale, c.postsum_act.alpha, c.postsum_act.scale,
                          c.sum_scale};
  put(floats, sizeof(floats));
  put(c.output_scales.data(), c.output_scales.size() * sizeof(float));
  return key;
}

// The type the output holds the residual in before the sum post-op: its own where it is as wide
// as the output's (int8 into uint8 and back), else the output's (MXNet converts an 8-bit residual
// for an int32 or float output).
DType SumHeldAs(const Int8ConvCall& c) {
  return DTypeSize(c.sum_type) == DTypeSize(c.out) ? c.sum_type : c.out;
}

// Whether oneDNN's x8s8s32x JIT kernels ("jit_int8", "jit_int8_1x1") beat the brgemm kernels it
// lists first on AVX-512 VNNI: measured at batch 1 on Zen 4, about 15 % on depthwise 3x3
// convolutions, 2-10 % on 1x1 convolutions and on the few-channel (RGB) first layer; the brgemm
// kernels stay for the other convolutions and wherever they run on AMX. Both give the same
// integers (int32 sums, then the same float scale, post-op and rounding steps).
bool PrefersX8s8s32x(const ConvSpec& s) {
  bool pointwise = true;
  for (int64_t i = 0; i < s.nd; ++i) pointwise = pointwise && s.kernel[i] == 1;
  const bool depthwise = s.G > 1 && s.G == s.C && s.G == s.F;
  return pointwise || depthwise || s.C <= 4;
}

bool EndsWith(const std::string& text, const std::string& end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

// oneDNN's first choice for call `c`, or its x8s8s32x kernel on the same ISA where that is faster
// (PrefersX8s8s32x).
dnnl::convolution_forward::primitive_desc MakeDesc(const Int8ConvCall& c, const memory::desc& src,
                                                   const memory::desc& dst, bool bias) {
  const ConvSpec& s = c.geometry;
  const memory::dims weight_dims = UserWeightDesc(s, memory::data_type::s8).dims();
  const memory::desc weight_any(weight_dims, memory::data_type::s8, Tag::any);
  const memory::desc bias_md =
      bias ? memory::desc({s.F}, memory::data_type::s32, Tag::a) : memory::desc();
  memory::dims stride, dilate, pad_l, pad_r;
  for (int64_t i = 0; i < s.nd; ++i) {
    stride.push_back(s.stride[i]);
    dilate.push_back(s.dilate[i] - 1);
    pad_l.push_back(s.pad_l[i]);
    pad_r.push_back(s.pad_r[i]);
  }
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (!c.output_scales.empty()) {
    attr.set_output_scales(ScaleMask(c.output_scales.size(), 1 << 1), c.output_scales);
  }
  // MXNet's order: the activation, the sum, the activation after the sum.
  dnnl::post_ops ops;
  if (c.act.kind != Int8Eltwise::Kind::kNone) {
    ops.append_eltwise(c.act.scale, OneDnnEltwiseAlgorithm(c.act.kind), c.act.alpha, 0.f);
  }
  if (c.sum) {
    ops.append_sum(c.sum_scale,
                   SumHeldAs(c) == c.out ? memory::data_type::undef : OneDnnDataType(c.sum_type));
  }
  if (c.postsum_act.kind != Int8Eltwise::Kind::kNone) {
    ops.append_eltwise(c.postsum_act.scale, OneDnnEltwiseAlgorithm(c.postsum_act.kind),
                       c.postsum_act.alpha, 0.f);
  }
  attr.set_post_ops(ops);
  const dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference,
                                          dnnl::algorithm::convolution_direct, src, weight_any,
                                          bias_md, dst, stride, dilate, pad_l, pad_r);
  const dnnl::convolution_forward::primitive_desc first(d, attr, OneDnnEngine());
  const std::string vnni = ":avx512_core_vnni";
  const std::string first_impl = first.impl_info_str();
  if (!PrefersX8s8s32x(s) || first_impl.rfind("br", 0) != 0 || !EndsWith(first_impl, vnni)) {
    return first;
  }
  // A second handle on the same list (next_impl() moves it on); `d` must outlive the walk, as
  // the list reads it.
  dnnl::convolution_forward::primitive_desc other(d, attr, OneDnnEngine());
  while (other.next_impl()) {
    const std::string impl = other.impl_info_str();
    if (impl == "jit_int8" + vnni || impl == "jit_int8_1x1" + vnni) return other;
  }
  return first;
}

std::shared_ptr<Int8Primitive> MakeInt8Primitive(const Int8ConvCall& c, bool bias, int threads) {
  ThreadCountWhile count(threads);  // the count the primitive keeps
  const ConvSpec& s = c.geometry;
  auto p = std::make_shared<Int8Primitive>();
  const memory::dims src_dims = DataDims(s.N, s.C, s.in, s.nd);
  const memory::dims dst_dims = DataDims(s.N, s.F, s.out, s.nd);
  const Tag cl = ChannelLastTag(s.nd), cf = ChannelFirstTag(s.nd);
  p->src_md = memory::desc(src_dims, OneDnnDataType(c.data), cl);
  p->dst_md = memory::desc(dst_dims, OneDnnDataType(c.out), cl);
  try {
    const auto pd = MakeDesc(c, p->src_md, p->dst_md, bias);
    p->weight_md = pd.weights_desc();
    p->weight_key = "dnnl-conv-int8:" + MemoryDescKey(p->weight_md) + ":";
    p->bias_md = pd.bias_desc();
    p->scratchpad_md = pd.scratchpad_desc();
    p->impl = pd.impl_info_str();
    p->prim = dnnl::convolution_forward(pd);
  } catch (const dnnl::error& e) {
    HN_THROW(kUnsupported) << "int8 " << SpecText(s) << " (" << DTypeName(c.data) << " data, "
                           << DTypeName(c.out) << " output): oneDNN has no kernel for it ("
                           << e.what() << ")";
  }
  p->relayout = !s.channel_last;
  const Tag caller = s.channel_last ? cl : cf;
  p->caller_src_md = memory::desc(src_dims, OneDnnDataType(c.data), caller);
  p->caller_dst_md = memory::desc(dst_dims, OneDnnDataType(c.out), caller);
  if (c.sum) {
    p->sum_md = memory::desc(dst_dims, OneDnnDataType(SumHeldAs(c)), cl);
    p->caller_sum_md = memory::desc(dst_dims, OneDnnDataType(c.sum_type), caller);
    p->convert_sum = SumHeldAs(c) != c.sum_type;
  }
  if (p->relayout) {
    p->src_in = SharedReorder(p->caller_src_md, p->src_md);
    p->dst_out = SharedReorder(p->dst_md, p->caller_dst_md);
  }
  if (c.sum && (p->relayout || p->convert_sum)) {
    p->sum_in = SharedReorder(p->caller_sum_md, p->sum_md);
  }
  return p;
}

std::shared_ptr<const Int8Primitive> Primitive(const Int8ConvCall& c, bool bias) {
  static std::mutex mutex;
  static std::unordered_map<std::string, std::shared_ptr<const Int8Primitive>> cache;
  const int threads = KernelThreads();
  std::string key = CallKey(c, threads);
  key += bias ? 'b' : '-';
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  std::shared_ptr<const Int8Primitive> made = MakeInt8Primitive(c, bias, threads);
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() > 1024) cache.clear();
  return cache.emplace(key, made).first->second;
}

// The weights in the primitive's layout and the int32 bias.
struct Int8PackedWeights {
  NDArray weights;  // int8, weight_md's size (with oneDNN's compensation for int8 data)
  NDArray bias;     // int32 (F), or none
};

// The reorder attributes that quantize float weights by `scales` (one, or one per output channel).
dnnl::primitive_attr WeightQuantizeAttr(const ConvSpec& s, const std::vector<float>& scales) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  // An output channel is (group, channel in group) of grouped weights: both dimensions masked.
  attr.set_output_scales(ScaleMask(scales.size(), s.G > 1 ? 0b11 : 0b1), scales);
  return attr;
}

std::shared_ptr<const Int8PackedWeights> Pack(const Int8Primitive& p, const ConvSpec& s,
                                              const Int8ConvWeights& w, Workspace* workspace) {
  auto packed = std::make_shared<Int8PackedWeights>();
  packed->weights = NDArray(Shape{static_cast<int64_t>(p.weight_md.get_size())}, DType::kInt8);
  const dnnl::engine& engine = OneDnnEngine();
  const bool quantize = static_cast<bool>(w.weight);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (quantize) attr = WeightQuantizeAttr(s, w.weight_scales);
  const memory::desc user_md =
      UserWeightDesc(s, quantize ? memory::data_type::f32 : memory::data_type::s8);
  const void* source = quantize ? static_cast<const void*>(w.weight()) : w.weight_s8;
  memory user(user_md, engine, const_cast<void*>(source));
  memory to(p.weight_md, engine, packed->weights.data<int8_t>());
  RunReorder(
      dnnl::reorder(dnnl::reorder::primitive_desc(engine, user_md, engine, p.weight_md, attr)),
      user, to, workspace);
  if (w.bias != nullptr) {
    packed->bias = NDArray(Shape{s.F}, DType::kInt32);
    dnnl::primitive_attr bias_attr;
    bias_attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    if (!w.bias_scales.empty()) {
      bias_attr.set_output_scales(ScaleMask(w.bias_scales.size(), 0b1), w.bias_scales);
    }
    const memory::desc float_bias({s.F}, memory::data_type::f32, Tag::a);
    memory from(float_bias, engine, const_cast<float*>(w.bias));
    memory into(p.bias_md, engine, packed->bias.data<int32_t>());
    RunReorder(dnnl::reorder(
                   dnnl::reorder::primitive_desc(engine, float_bias, engine, p.bias_md, bias_attr)),
               from, into, workspace);
  }
  OneDnnStream().wait();
  return packed;
}

std::shared_ptr<const Int8PackedWeights> Weights(const Int8Primitive& p, const ConvSpec& s,
                                                 const Int8ConvWeights& w, Workspace* workspace) {
  if (w.keep_with == nullptr) return Pack(p, s, w, workspace);
  const std::string key = p.weight_key + w.key;
  return std::static_pointer_cast<const Int8PackedWeights>(DerivedData(*w.keep_with, key, [&] {
    return std::static_pointer_cast<const void>(Pack(p, s, w, workspace));
  }));
}

// A prepared call's memory objects and its arguments as oneDNN's C API takes them, made once
// and pointed at each call's buffers: making them (an allocation each, and the argument vector
// dnnl::primitive::execute builds from a map) costs about as much as running a small primitive.
struct Int8ConvBound {
  memory src, dst, weights, bias, scratchpad;
  std::vector<dnnl_exec_arg_t> args;
  // Where src, dst and scratchpad point.
  void* src_at = nullptr;
  void* dst_at = nullptr;
  void* scratchpad_at = nullptr;
};

Int8ConvBound Bind(const Int8Primitive& p, const Int8PackedWeights& packed, bool bias) {
  const dnnl::engine& engine = OneDnnEngine();
  Int8ConvBound b;
  b.src = memory(p.src_md, engine, nullptr);
  b.dst = memory(p.dst_md, engine, nullptr);
  b.scratchpad = memory(p.scratchpad_md, engine, nullptr);
  b.weights = memory(p.weight_md, engine, const_cast<int8_t*>(packed.weights.data<int8_t>()));
  b.args = {{DNNL_ARG_SRC, b.src.get()},
            {DNNL_ARG_DST, b.dst.get()},
            {DNNL_ARG_WEIGHTS, b.weights.get()},
            {DNNL_ARG_SCRATCHPAD, b.scratchpad.get()}};
  if (bias) {
    b.bias = memory(p.bias_md, engine, const_cast<int32_t*>(packed.bias.data<int32_t>()));
    b.args.push_back({DNNL_ARG_BIAS, b.bias.get()});
  }
  return b;
}

// Points `m`, now at `*at`, at `data` (the executor's buffers are the same from call to call:
// mostly a no-op).
void PointAt(memory* m, void** at, void* data) {
  if (*at == data) return;
  m->set_data_handle(data);
  *at = data;
}

}  // namespace

struct Int8ConvPrepared {
  std::shared_ptr<const Int8Primitive> primitive;
  std::shared_ptr<const Int8PackedWeights> packed;
  ConvSpec geometry;
  bool sum = false;
  bool bias = false;
  int threads = 1;
  // Used by one call at a time (a concurrent call binds its own).
  mutable std::mutex bound_mutex;
  mutable Int8ConvBound bound;
};

std::shared_ptr<const Int8ConvPrepared> PrepareInt8Convolution(const Int8ConvCall& c,
                                                               const Int8ConvWeights& w,
                                                               Workspace* workspace) {
  auto prepared = std::make_shared<Int8ConvPrepared>();
  prepared->threads = KernelThreads();
  prepared->primitive = Primitive(c, w.bias != nullptr);
  prepared->packed = Weights(*prepared->primitive, c.geometry, w, workspace);
  prepared->geometry = c.geometry;
  prepared->sum = c.sum;
  prepared->bias = w.bias != nullptr;
  prepared->bound = Bind(*prepared->primitive, *prepared->packed, prepared->bias);
  return prepared;
}

void RunInt8Convolution(const Int8ConvCall& c, const Int8ConvWeights& w, const Int8ConvArgs& a) {
  RunInt8Convolution(*PrepareInt8Convolution(c, w, a.workspace), a);
}

void RunInt8Convolution(const Int8ConvPrepared& prepared, const Int8ConvArgs& a) {
  const ConvSpec& s = prepared.geometry;
  const Int8Primitive* p = prepared.primitive.get();
  const Int8PackedWeights* packed = prepared.packed.get();
  ThreadCountWhile threads(prepared.threads);
  const dnnl::engine& engine = OneDnnEngine();
  dnnl::stream& stream = OneDnnStream();
  try {
    std::unique_lock<std::mutex> lock(prepared.bound_mutex, std::try_to_lock);
    Int8ConvBound own;
    if (!lock.owns_lock()) own = Bind(*p, *packed, prepared.bias);
    Int8ConvBound& b = lock.owns_lock() ? prepared.bound : own;
    memory& src = b.src;
    memory& dst = b.dst;
    if (p->relayout) {
      PointAt(&src, &b.src_at, a.workspace->Get<unsigned char>(kConvSrcSlot, p->src_md.get_size()));
      RunReorder(p->src_in, memory(p->caller_src_md, engine, const_cast<void*>(a.data)), src,
                 a.workspace);
      PointAt(&dst, &b.dst_at, a.workspace->Get<unsigned char>(kConvDstSlot, p->dst_md.get_size()));
    } else {
      PointAt(&src, &b.src_at, const_cast<void*>(a.data));
      PointAt(&dst, &b.dst_at, a.out);
    }
    if (prepared.sum) {
      // oneDNN's sum post-op adds what the output holds: the residual goes there first.
      if (p->relayout || p->convert_sum) {
        const void* residual = a.residual;
        if (residual == a.out && p->convert_sum) {
          // Converted in place it would overwrite itself: from a copy.
          void* copy =
              a.workspace->Get<unsigned char>(kConvResidualSlot, p->caller_sum_md.get_size());
          std::memcpy(copy, residual, p->caller_sum_md.get_size());
          residual = copy;
        }
        RunReorder(p->sum_in, memory(p->caller_sum_md, engine, const_cast<void*>(residual)),
                   memory(p->sum_md, engine, dst.get_data_handle()), a.workspace);
      } else if (a.residual != a.out) {
        std::memcpy(a.out, a.residual, p->sum_md.get_size());
      }
    }
    PointAt(&b.scratchpad, &b.scratchpad_at,
            a.workspace->Get<unsigned char>(kOneDnnScratchpadSlot, p->scratchpad_md.get_size()));
    dnnl::error::wrap_c_api(dnnl_primitive_execute(p->prim.get(), stream.get(),
                                                   static_cast<int>(b.args.size()), b.args.data()),
                            "could not execute the int8 convolution");
    if (p->relayout)
      RunReorder(p->dst_out, dst, memory(p->caller_dst_md, engine, a.out), a.workspace);
    stream.wait();
  } catch (const dnnl::error& e) {
    HN_THROW(kInternal) << "int8 " << SpecText(s) << ": oneDNN failed (" << e.what() << ")";
  }
}

void QuantizeInt8ConvWeights(const ConvSpec& s, const float* weight,
                             const std::vector<float>& scales, int8_t* out, Workspace* workspace) {
  const dnnl::engine& engine = OneDnnEngine();
  const memory::desc from_md = UserWeightDesc(s, memory::data_type::f32);
  const memory::desc to_md = UserWeightDesc(s, memory::data_type::s8);
  try {
    RunReorder(dnnl::reorder(dnnl::reorder::primitive_desc(engine, from_md, engine, to_md,
                                                           WeightQuantizeAttr(s, scales))),
               memory(from_md, engine, const_cast<float*>(weight)), memory(to_md, engine, out),
               workspace);
    OneDnnStream().wait();
  } catch (const dnnl::error& e) {
    HN_THROW(kInternal) << "int8 " << SpecText(s) << ": quantizing the weights failed (" << e.what()
                        << ")";
  }
}

std::string Int8ConvolutionImplementation(const Int8ConvCall& c) {
  return Primitive(c, false)->impl;
}

}  // namespace internal
}  // namespace hybridnet
