#include "kernels/onednn.h"

#include <oneapi/dnnl/dnnl_debug.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "hybridnet/base.h"
#include "hybridnet/dtype.h"
#include "kernels/layout.h"
#include "kernels/parallel-inl.h"
#include "kernels/threads.h"

namespace hybridnet {
namespace internal {

using dnnl::memory;
using Tag = memory::format_tag;

dnnl::engine& OneDnnEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& OneDnnStream() {
  thread_local dnnl::stream stream(OneDnnEngine());
  return stream;
}

dnnl::reorder SharedReorder(const memory::desc& from, const memory::desc& to) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return dnnl::reorder(
      dnnl::reorder::primitive_desc(OneDnnEngine(), from, OneDnnEngine(), to, attr));
}

memory ScratchpadIn(const memory::desc& pad, WorkspaceSlot slot, Workspace* workspace) {
  return memory(pad, OneDnnEngine(), workspace->Get<unsigned char>(slot, pad.get_size()));
}

void RunReorder(const dnnl::reorder& reorder, const memory& from, const memory& to,
                Workspace* workspace) {
  const memory::desc pad(
      *dnnl_primitive_desc_query_md(reorder.get_primitive_desc(), dnnl_query_scratchpad_md, 0));
  reorder.execute(OneDnnStream(),
                  {{DNNL_ARG_FROM, from},
                   {DNNL_ARG_TO, to},
                   {DNNL_ARG_SCRATCHPAD, ScratchpadIn(pad, kReorderScratchpadSlot, workspace)}});
}

Tag ChannelLastTag(int64_t nd) { return nd == 1 ? Tag::nwc : nd == 2 ? Tag::nhwc : Tag::ndhwc; }
Tag ChannelFirstTag(int64_t nd) { return nd == 1 ? Tag::ncw : nd == 2 ? Tag::nchw : Tag::ncdhw; }

void Relayout(const void* src, void* dst, memory::data_type type, int64_t N, int64_t C, int64_t S,
              bool to_channel_last, Workspace* workspace) {
  struct Key {
    int64_t n, c, s, to_last, type;
    bool operator==(const Key& o) const {
      return n == o.n && c == o.c && s == o.s && to_last == o.to_last && type == o.type;
    }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return static_cast<size_t>((((k.n * 1000003 + k.c) * 1000003 + k.s) * 2 + k.to_last) * 8 +
                                 k.type);
    }
  };
  struct Entry {
    dnnl::reorder prim;
    memory::desc from, to;
  };
  static std::mutex mutex;
  static std::unordered_map<Key, std::shared_ptr<const Entry>, KeyHash> cache;
  const Key key{N, C, S, to_channel_last ? 1 : 0, static_cast<int64_t>(type)};
  std::shared_ptr<const Entry> e;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) e = it->second;
  }
  if (!e) {
    auto made = std::make_shared<Entry>();
    const memory::desc cf({N, C, S}, type, Tag::ncw);
    const memory::desc cl({N, C, S}, type, Tag::nwc);
    made->from = to_channel_last ? cf : cl;
    made->to = to_channel_last ? cl : cf;
    made->prim = SharedReorder(made->from, made->to);
    std::lock_guard<std::mutex> lock(mutex);
    if (cache.size() > 1024) cache.clear();
    e = cache.emplace(key, made).first->second;
  }
  UseKernelThreads();
  try {
    memory from(e->from, OneDnnEngine(), const_cast<void*>(src)), to(e->to, OneDnnEngine(), dst);
    RunReorder(e->prim, from, to, workspace);
    OneDnnStream().wait();
  } catch (const dnnl::error& err) {
    HN_THROW(kInternal) << "re-layout of (" << N << ", " << C << ", " << S << ") failed ("
                        << err.what() << ")";
  }
}

void Relayout(const float* src, float* dst, int64_t N, int64_t C, int64_t S, bool to_channel_last,
              Workspace* workspace) {
  Relayout(src, dst, memory::data_type::f32, N, C, S, to_channel_last, workspace);
}

std::string OneDnnDescription() {
  const dnnl_version_t* v = dnnl_version();
  std::ostringstream os;
  os << "oneDNN " << v->major << "." << v->minor << "." << v->patch << ", ISA "
     << dnnl_cpu_isa2str(static_cast<dnnl_cpu_isa_t>(dnnl::get_effective_cpu_isa()))
     << ", OpenMP threads " << KernelThreads();
  return os.str();
}

// cpu_isa values are sets of bits, a later ISA holding every bit of the ones it extends.
bool OneDnnHasIsa(dnnl::cpu_isa isa) {
  const auto bits = static_cast<unsigned>(isa);
  return (static_cast<unsigned>(dnnl::get_effective_cpu_isa()) & bits) == bits;
}

memory::data_type BFloat16ProductType() {
  static const memory::data_type type =
      OneDnnHasIsa(dnnl::cpu_isa::avx512_core) ? memory::data_type::bf16 : memory::data_type::f32;
  return type;
}

bool OneDnnSumsInt8Exactly() {
  static const bool exact =
      OneDnnHasIsa(dnnl::cpu_isa::avx512_core_vnni) || OneDnnHasIsa(dnnl::cpu_isa::avx2_vnni);
  return exact;
}

void RoundOperandToBFloat16(const memory::desc& md, void* data) {
  if (md.data_type() != memory::data_type::f32) return;
  auto* values = static_cast<float*>(data);
  const int64_t n = static_cast<int64_t>(md.get_size() / sizeof(float));  // padding holds zeros
  // Elementwise, so split between the kernel threads without changing a bit: an activation is
  // rounded on every call, and the product after it runs on every thread.
  constexpr int64_t kBlock = 16384;
  ParallelFor((n + kBlock - 1) / kBlock, n >= 4 * kBlock, [&](int64_t b) {
    const int64_t end = std::min(n, (b + 1) * kBlock);
    for (int64_t i = b * kBlock; i < end; ++i) {
      values[i] = BFloat16ToFloat(FloatToBFloat16(values[i]));
    }
  });
}

memory::data_type OneDnnDataType(DType dtype) {
  switch (dtype) {
    case DType::kInt8:
      return memory::data_type::s8;
    case DType::kUint8:
      return memory::data_type::u8;
    case DType::kInt32:
      return memory::data_type::s32;
    case DType::kFloat32:
      return memory::data_type::f32;
    default:
      break;
  }
  HN_THROW(kInternal) << "no oneDNN int8-kernel type for " << DTypeName(dtype);
}

dnnl::algorithm OneDnnEltwiseAlgorithm(Int8Eltwise::Kind kind) {
  using K = Int8Eltwise::Kind;
  switch (kind) {
    case K::kRelu:
      return dnnl::algorithm::eltwise_relu;
    case K::kLogistic:
      return dnnl::algorithm::eltwise_logistic;
    case K::kTanh:
      return dnnl::algorithm::eltwise_tanh;
    case K::kSoftRelu:
      return dnnl::algorithm::eltwise_soft_relu;
    case K::kBoundedRelu:
      return dnnl::algorithm::eltwise_bounded_relu;
    case K::kSquare:
      return dnnl::algorithm::eltwise_square;
    case K::kSqrt:
      return dnnl::algorithm::eltwise_sqrt;
    case K::kExp:
      return dnnl::algorithm::eltwise_exp;
    case K::kAbs:
      return dnnl::algorithm::eltwise_abs;
    case K::kElu:
      return dnnl::algorithm::eltwise_elu;
    case K::kGelu:
      return dnnl::algorithm::eltwise_gelu_erf;
    case K::kNone:
      break;
  }
  return dnnl::algorithm::undef;
}

}  // namespace internal
}  // namespace hybridnet
