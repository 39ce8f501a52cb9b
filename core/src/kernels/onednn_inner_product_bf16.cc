#include "kernels/onednn_inner_product_bf16.h"

#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <tuple>
#include <unordered_map>

#include "hybridnet/base.h"
#include "hybridnet/ndarray.h"
#include "kernels/activation-inl.h"
#include "kernels/onednn.h"
#include "kernels/onednn_convolution.h"
#include "kernels/threads.h"
#include "kernels/workspace.h"
#include "ndarray/storage.h"

namespace hybridnet {
namespace internal {

namespace {

using dnnl::memory;
using DataType = memory::data_type;
using Tag = memory::format_tag;

struct Bf16InnerProduct {
  dnnl::inner_product_forward prim;
  memory::desc user_src_md, src_md, user_weight_md, weight_md, bias_md, dst_md, scratchpad_md;
  dnnl::reorder src_in, weight_in;
  bool relu = false;  // applied as a post-op
  std::string weight_key;
};

std::shared_ptr<const Bf16InnerProduct> MakeInnerProduct(int64_t batch, int64_t hidden, int64_t k,
                                                         bool bias, bool relu) {
  auto p = std::make_shared<Bf16InnerProduct>();
  p->user_src_md = memory::desc({batch, k}, DataType::f32, Tag::nc);
  p->user_weight_md = memory::desc({hidden, k}, DataType::f32, Tag::oi);
  p->dst_md = memory::desc({batch, hidden}, DataType::f32, Tag::nc);
  if (bias) p->bias_md = memory::desc({hidden}, DataType::f32, Tag::a);
  p->relu = relu;
  const DataType product = BFloat16ProductType();
  const auto pd = InnerProductPrimitive(memory::desc({batch, k}, product, Tag::any),
                                        memory::desc({hidden, k}, product, Tag::any),
                                        p->bias_md, p->dst_md, &p->relu);
  p->src_md = pd.src_desc();
  p->weight_md = pd.weights_desc();
  p->scratchpad_md = pd.scratchpad_desc();
  p->prim = dnnl::inner_product_forward(pd);
  p->src_in = SharedReorder(p->user_src_md, p->src_md);
  p->weight_in = SharedReorder(p->user_weight_md, p->weight_md);
  p->weight_key = "bf16-inner-product:" + MemoryDescKey(p->weight_md);
  return p;
}

// Primitives by shape, bias, relu and thread count, shared by every thread; dropped all at once
// beyond 1024.
std::shared_ptr<const Bf16InnerProduct> InnerProductFor(int64_t batch, int64_t hidden, int64_t k,
                                                        bool bias, bool relu, int threads) {
  using Key = std::tuple<int64_t, int64_t, int64_t, bool, bool, int>;
  struct KeyHash {
    size_t operator()(const Key& key) const {
      return std::hash<std::string>()(std::to_string(std::get<0>(key)) + ":" +
                                      std::to_string(std::get<1>(key)) + ":" +
                                      std::to_string(std::get<2>(key)) + ":" +
                                      std::to_string(std::get<3>(key) * 2 + std::get<4>(key)) +
                                      ":" + std::to_string(std::get<5>(key)));
    }
  };
  static std::mutex mutex;
  static std::unordered_map<Key, std::shared_ptr<const Bf16InnerProduct>, KeyHash> cache;
  const Key key{batch, hidden, k, bias, relu, threads};
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  std::shared_ptr<const Bf16InnerProduct> made = MakeInnerProduct(batch, hidden, k, bias, relu);
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() >= 1024) cache.clear();
  return cache.emplace(key, made).first->second;
}

// The weights rounded to bfloat16 in the primitive's layout and type.
struct Bf16Weights {
  NDArray weights;  // bytes of weight_md (bfloat16, or float32 values rounded to bfloat16)
};

}  // namespace

void RunOneDnnBf16InnerProduct(const float* x, const float* w, const float* b, float* y,
                               int64_t batch, int64_t hidden, int64_t k, bool relu,
                               const NDArray* weight_array, Workspace* workspace) {
  const int threads = KernelThreads();
  std::shared_ptr<const Bf16InnerProduct> p;
  try {
    p = InnerProductFor(batch, hidden, k, b != nullptr, relu, threads);
  } catch (const dnnl::error& e) {
    HN_THROW(kUnsupported) << "a dense layer of " << batch << " rows of " << k << " into " << hidden
                           << " in bfloat16: oneDNN has no inner product for it on "
                           << "this CPU (" << OneDnnDescription() << "): " << e.what();
  }
  ThreadCountWhile count(threads);
  const dnnl::engine& engine = OneDnnEngine();
  try {
    auto pack = [&] {
      auto packed = std::make_shared<Bf16Weights>();
      packed->weights =
          NDArray(Shape{static_cast<int64_t>((p->weight_md.get_size() + 1) / 2)}, DType::kUint16);
      RunReorder(p->weight_in, memory(p->user_weight_md, engine, const_cast<float*>(w)),
                 memory(p->weight_md, engine, packed->weights.raw_data()), workspace);
      OneDnnStream().wait();
      RoundOperandToBFloat16(p->weight_md, packed->weights.raw_data());
      return packed;
    };
    std::shared_ptr<const Bf16Weights> packed =
        weight_array == nullptr ? pack()
                                : std::static_pointer_cast<const Bf16Weights>(DerivedData(
                                      *weight_array, p->weight_key,
                                      [&] { return std::shared_ptr<const void>(pack()); }));
    memory src(p->src_md, engine,
               workspace->Get<uint16_t>(kBFloat16DataSlot, p->src_md.get_size() / 2 + 1));
    RunReorder(p->src_in, memory(p->user_src_md, engine, const_cast<float*>(x)), src, workspace);
    OneDnnStream().wait();
    RoundOperandToBFloat16(p->src_md, src.get_data_handle());
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, src},
        {DNNL_ARG_WEIGHTS,
         memory(p->weight_md, engine, const_cast<void*>(packed->weights.raw_data()))},
        {DNNL_ARG_DST, memory(p->dst_md, engine, y)},
        {DNNL_ARG_SCRATCHPAD, ScratchpadIn(p->scratchpad_md, kOneDnnScratchpadSlot, workspace)}};
    if (b != nullptr) args[DNNL_ARG_BIAS] = memory(p->bias_md, engine, const_cast<float*>(b));
    p->prim.execute(OneDnnStream(), args);
    OneDnnStream().wait();
  } catch (const dnnl::error& e) {
    HN_THROW(kInternal) << "a dense layer of " << batch << " rows of " << k << " into " << hidden
                        << " in bfloat16: oneDNN's inner product failed (" << e.what() << ")";
  }
  if (relu && !p->relu) ApplyActivation(ActType::kRelu, y, y, batch * hidden);
}

}  // namespace internal
}  // namespace hybridnet
