#include "kernels/onednn_inner_product_int8.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "hybridnet/base.h"
#include "hybridnet/ndarray.h"
#include "kernels/onednn.h"
#include "kernels/onednn_convolution.h"
#include "kernels/threads.h"
#include "ndarray/storage.h"

namespace hybridnet {
namespace internal {

namespace {

using dnnl::memory;
using Tag = memory::format_tag;

// Everything the primitive bakes in, as bytes: the shapes, types, scales, post-op and the thread
// count. Bytes, not text: formatting a layer's thousand output scales cost more than its product.
std::string SpecKey(const Int8DenseSpec& s) {
  std::string key;
  auto put = [&key](const void* p, size_t n) { key.append(static_cast<const char*>(p), n); };
  const int64_t words[] = {s.rows,
                           s.hidden,
                           s.k,
                           static_cast<int64_t>(s.src),
                           static_cast<int64_t>(s.dst),
                           s.has_bias ? 1 : 0,
                           static_cast<int64_t>(s.eltwise.kind),
                           KernelThreads(),
                           static_cast<int64_t>(s.output_scales.size())};
  put(words, sizeof(words));
  const float floats[] = {s.eltwise.alpha, s.eltwise.scale};
  put(floats, sizeof(floats));
  put(s.output_scales.data(), s.output_scales.size() * sizeof(float));
  return key;
}

struct Int8InnerProduct {
  dnnl::inner_product_forward prim;
  memory::desc src_md, weight_md, user_weight_md, bias_md, dst_md, scratchpad_md;
  dnnl::reorder weight_in;  // MXNet's (hidden, k) int8 weights to weight_md
  std::string weight_key;
};

struct PackedInt8 {
  NDArray weights;  // int8 storage of weight_md's size (64-byte aligned)
};

std::shared_ptr<const Int8InnerProduct> Int8InnerProductFor(const Int8DenseSpec& s) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const Int8InnerProduct>> cache;
  const std::string key = SpecKey(s);
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  auto p = std::make_shared<Int8InnerProduct>();
  p->src_md = memory::desc({s.rows, s.k}, OneDnnDataType(s.src), Tag::nc);
  p->dst_md = memory::desc({s.rows, s.hidden}, OneDnnDataType(s.dst), Tag::nc);
  p->user_weight_md = memory::desc({s.hidden, s.k}, memory::data_type::s8, Tag::oi);
  if (s.has_bias) p->bias_md = memory::desc({s.hidden}, memory::data_type::s32, Tag::a);
  try {
    const dnnl::inner_product_forward::desc d(
        dnnl::prop_kind::forward_inference, p->src_md,
        memory::desc({s.hidden, s.k}, memory::data_type::s8, Tag::any), p->bias_md, p->dst_md);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    if (!s.output_scales.empty()) {
      attr.set_output_scales(s.output_scales.size() == 1 ? 0 : 1 << 1, s.output_scales);
    }
    if (s.eltwise.kind != Int8Eltwise::Kind::kNone) {
      dnnl::post_ops ops;
      ops.append_eltwise(s.eltwise.scale, OneDnnEltwiseAlgorithm(s.eltwise.kind), s.eltwise.alpha,
                         0.f);
      attr.set_post_ops(ops);
    }
    const dnnl::inner_product_forward::primitive_desc pd(d, attr, OneDnnEngine());
    p->weight_md = pd.weights_desc();
    p->scratchpad_md = pd.scratchpad_desc();
    p->prim = dnnl::inner_product_forward(pd);
    p->weight_in = SharedReorder(p->user_weight_md, p->weight_md);
  } catch (const dnnl::error& e) {
    HN_THROW(kInternal) << "a quantized dense layer of " << s.rows << " " << DTypeName(s.src)
                        << " rows of " << s.k << " into " << s.hidden << " " << DTypeName(s.dst)
                        << " outputs: oneDNN has no int8 inner product for it (" << e.what() << ")";
  }
  p->weight_key = "dnnl-int8-inner-product:" + MemoryDescKey(p->weight_md);
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() > 1024) cache.clear();
  return cache.emplace(key, p).first->second;
}

}  // namespace

void RunInt8Dense(const Int8DenseSpec& spec, const void* x, const int8_t* w, const int32_t* b,
                  void* y, const NDArray* weight_array, Workspace* workspace) {
  if (spec.rows == 0 || spec.hidden == 0) return;
  const int threads = KernelThreads();
  const std::shared_ptr<const Int8InnerProduct> p = Int8InnerProductFor(spec);
  ThreadCountWhile count(threads);
  const dnnl::engine& engine = OneDnnEngine();
  try {
    auto pack = [&] {
      auto packed = std::make_shared<PackedInt8>();
      packed->weights = NDArray(Shape{static_cast<int64_t>(p->weight_md.get_size())}, DType::kInt8);
      RunReorder(p->weight_in, memory(p->user_weight_md, engine, const_cast<int8_t*>(w)),
                 memory(p->weight_md, engine, packed->weights.data<int8_t>()), workspace);
      OneDnnStream().wait();
      return packed;
    };
    std::shared_ptr<const PackedInt8> packed;
    if (weight_array == nullptr) {
      packed = pack();
    } else {
      packed = std::static_pointer_cast<const PackedInt8>(DerivedData(
          *weight_array, p->weight_key, [&] { return std::shared_ptr<const void>(pack()); }));
    }
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, memory(p->src_md, engine, const_cast<void*>(x))},
        {DNNL_ARG_WEIGHTS,
         memory(p->weight_md, engine, const_cast<int8_t*>(packed->weights.data<int8_t>()))},
        {DNNL_ARG_DST, memory(p->dst_md, engine, y)},
        {DNNL_ARG_SCRATCHPAD, ScratchpadIn(p->scratchpad_md, kOneDnnScratchpadSlot, workspace)}};
    if (spec.has_bias) {
      args[DNNL_ARG_BIAS] = memory(p->bias_md, engine, const_cast<int32_t*>(b));
    }
    p->prim.execute(OneDnnStream(), args);
    OneDnnStream().wait();
  } catch (const dnnl::error& e) {
    HN_THROW(kInternal) << "a quantized dense layer of " << spec.rows << " rows of " << spec.k
                        << " into " << spec.hidden << ": oneDNN's int8 inner product failed ("
                        << e.what() << ")";
  }
}

}  // namespace internal
}  // namespace hybridnet
