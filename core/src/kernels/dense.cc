#include "kernels/dense.h"

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>

#include "hybridnet/base.h"
#include "hybridnet/ndarray.h"
#include "kernels/activation-inl.h"
#include "kernels/avx2-inl.h"
#include "kernels/avx512-inl.h"
#include "kernels/blas.h"
#include "kernels/gemv.h"
#include "kernels/onednn.h"
#include "kernels/onednn_convolution.h"
#include "kernels/threads.h"
#include "ndarray/storage.h"

namespace hybridnet {
namespace internal {

namespace {

using dnnl::memory;
using Tag = memory::format_tag;

// Whether oneDNN's inner product (brgemm kernels on AVX-512) beats Gemm on OpenBLAS: measured on
// an AVX-512 AMD EPYC (oneDNN ISA avx512_core_bf16, OpenBLAS core Cooperlake; one thread), its time
// over OpenBLAS's was 0.6-0.9 from 16 rows of at least 16 outputs (the seed MLP's 512->256 and
// 256->128 layers at batch 256: 0.87; a 2048->1000 classifier 0.85 from 64 rows), and 3.5-7 for 2
// outputs, whose rows fill a fraction of its 16-lane blocks. Below 16 rows it depends on the size
// (2048->1000: 0.1-0.2 at 2-8 rows; 256->128 and 64->64: 1.3-1.8 at 2). Without AVX-512 it runs
// other kernels, unmeasured.
bool OneDnnInnerProductWins(int64_t batch, int64_t hidden) {
  return CpuHasAvx512() && batch >= 16 && hidden >= 16;
}

// One inner product primitive per call shape and thread count, shared by every thread.
struct InnerProduct {
  dnnl::inner_product_forward prim;
  memory::desc src_md, weight_md, user_weight_md, bias_md, dst_md, scratchpad_md;
  dnnl::reorder weight_in;  // MXNet's (hidden, k) weights to weight_md
  std::string weight_key;
  bool relu = false;  // a relu post-op (else the caller's relu runs after)
};

struct Packed {
  NDArray weights;  // 64-byte aligned storage of weight_md's size
};

std::shared_ptr<const InnerProduct> InnerProductFor(int64_t batch, int64_t hidden, int64_t k,
                                                    bool bias, bool relu, int threads) {
  using Key = std::tuple<int64_t, int64_t, int64_t, bool, bool, int>;
  static std::mutex mutex;
  static std::map<Key, std::shared_ptr<const InnerProduct>> cache;
  const Key key{batch, hidden, k, bias, relu, threads};
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  auto p = std::make_shared<InnerProduct>();
  const auto f32 = memory::data_type::f32;
  p->src_md = memory::desc({batch, k}, f32, Tag::nc);
  p->dst_md = memory::desc({batch, hidden}, f32, Tag::nc);
  p->user_weight_md = memory::desc({hidden, k}, f32, Tag::oi);
  if (bias) p->bias_md = memory::desc({hidden}, f32, Tag::a);
  try {
    p->relu = relu;
    const auto pd = InnerProductPrimitive(p->src_md, memory::desc({hidden, k}, f32, Tag::any),
                                          p->bias_md, p->dst_md, &p->relu);
    p->weight_md = pd.weights_desc();
    p->scratchpad_md = pd.scratchpad_desc();
    p->prim = dnnl::inner_product_forward(pd);
    p->weight_in = SharedReorder(p->user_weight_md, p->weight_md);
  } catch (const dnnl::error& e) {
    HN_THROW(kInternal) << "a dense layer of " << batch << " rows of " << k << " into " << hidden
                        << ": oneDNN has no inner product for it (" << e.what() << ")";
  }
  p->weight_key = "dnnl-inner-product:" + MemoryDescKey(p->weight_md);
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() > 1024) cache.clear();
  return cache.emplace(key, p).first->second;
}

// Returns whether it applied the relu.
bool RunOneDnnInnerProduct(const float* x, const float* w, const float* b, float* y, int64_t batch,
                           int64_t hidden, int64_t k, bool relu, const NDArray* weight_array,
                           Workspace* workspace) {
  const int threads = KernelThreads();
  const std::shared_ptr<const InnerProduct> p =
      InnerProductFor(batch, hidden, k, b != nullptr, relu, threads);
  ThreadCountWhile count(threads);
  const dnnl::engine& engine = OneDnnEngine();
  try {
    auto pack = [&] {
      auto packed = std::make_shared<Packed>();
      packed->weights = NDArray(Shape{static_cast<int64_t>(p->weight_md.get_size() / 4)});
      RunReorder(p->weight_in, memory(p->user_weight_md, engine, const_cast<float*>(w)),
                 memory(p->weight_md, engine, packed->weights.data<float>()), workspace);
      OneDnnStream().wait();
      return packed;
    };
    std::shared_ptr<const Packed> packed;
    if (weight_array == nullptr) {
      packed = pack();
    } else {
      packed = std::static_pointer_cast<const Packed>(DerivedData(
          *weight_array, p->weight_key, [&] { return std::shared_ptr<const void>(pack()); }));
    }
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, memory(p->src_md, engine, const_cast<float*>(x))},
        {DNNL_ARG_WEIGHTS,
         memory(p->weight_md, engine, const_cast<float*>(packed->weights.data<float>()))},
        {DNNL_ARG_DST, memory(p->dst_md, engine, y)},
        {DNNL_ARG_SCRATCHPAD, ScratchpadIn(p->scratchpad_md, kOneDnnScratchpadSlot, workspace)}};
    if (b != nullptr) args[DNNL_ARG_BIAS] = memory(p->bias_md, engine, const_cast<float*>(b));
    p->prim.execute(OneDnnStream(), args);
    OneDnnStream().wait();
    return p->relu;
  } catch (const dnnl::error& e) {
    HN_THROW(kInternal) << "a dense layer of " << batch << " rows of " << k << " into " << hidden
                        << ": oneDNN's inner product failed (" << e.what() << ")";
  }
}

}  // namespace

KernelChoice& DenseKernels() {
  static KernelChoice choice("fully_connected", {{"gemv", "AVX2 and FMA", CpuHasAvx2()},
                                                 {"matrix_vector", "", true},
                                                 {"gemm", "", true},
                                                 {"onednn_inner_product", "", true}});
  return choice;
}

void RunDense(const float* x, const float* w, const float* b, float* y, int64_t batch,
              int64_t hidden, int64_t k, bool relu, const NDArray* weight_array,
              Workspace* workspace) {
  auto takes = [&](int kernel) {
    switch (static_cast<DenseKernel>(kernel)) {
      case DenseKernel::kGemv:
        return batch == 1 && CpuHasAvx2();
      case DenseKernel::kMatrixVector:
        return batch == 1;
      case DenseKernel::kGemm:
        return true;
      case DenseKernel::kOneDnnInnerProduct:
        return batch > 0 && hidden > 0 && k > 0;
    }
    return false;
  };
  const DenseKernel usual =
      batch == 1 ? (CpuHasAvx2() ? DenseKernel::kGemv : DenseKernel::kMatrixVector)
      : OneDnnInnerProductWins(batch, hidden) ? DenseKernel::kOneDnnInnerProduct
                                              : DenseKernel::kGemm;
  const auto kernel =
      static_cast<DenseKernel>(DenseKernels().Choose(static_cast<int>(usual), takes, [&] {
        return "a dense layer of " + std::to_string(batch) + " rows of " + std::to_string(k);
      }));
  bool relu_applied = false;
  if (kernel == DenseKernel::kGemv) {
    Gemv(w, x, b, y, hidden, k);
  } else if (kernel == DenseKernel::kOneDnnInnerProduct) {
    relu_applied =
        RunOneDnnInnerProduct(x, w, b, y, batch, hidden, k, relu, weight_array, workspace);
  } else {
    float beta = 0.f;
    if (b != nullptr) {
      for (int64_t r = 0; r < batch; ++r) {
        std::memcpy(y + r * hidden, b, static_cast<size_t>(hidden) * sizeof(float));
      }
      beta = 1.f;
    }
    if (kernel == DenseKernel::kMatrixVector) {
      MatrixVector(hidden, k, w, x, beta, y);
    } else {
      Gemm(false, true, batch, hidden, k, 1.f, x, k, w, k, beta, y, hidden);
    }
  }
  if (relu && !relu_applied) ApplyActivation(ActType::kRelu, y, y, batch * hidden);
}

KernelChoice& DenseBackwardKernels() {
  static KernelChoice choice("fully_connected_backward",
                             {{"gemm", "", true}, {"onednn_sgemm", "", true}});
  return choice;
}

void RunDenseBackward(const float* dy, const float* x, const float* w, float* dx, float* dw,
                      int64_t batch, int64_t hidden, int64_t k) {
  const DenseBackwardKernel usual = OneDnnInnerProductWins(batch, hidden)
                                        ? DenseBackwardKernel::kOneDnnSgemm
                                        : DenseBackwardKernel::kGemm;
  const auto kernel = static_cast<DenseBackwardKernel>(DenseBackwardKernels().Choose(
      static_cast<int>(usual), [](int) { return true; }, [] { return std::string(); }));
  using Product = void (*)(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t,
                           const float*, int64_t, float, float*, int64_t);
  const Product gemm =
      kernel == DenseBackwardKernel::kOneDnnSgemm ? Product{OneDnnGemm} : Product{Gemm};
  if (dx != nullptr) gemm(false, false, batch, k, hidden, 1.f, dy, hidden, w, k, 0.f, dx, k);
  if (dw != nullptr) gemm(true, false, hidden, k, batch, 1.f, dy, hidden, x, k, 0.f, dw, k);
}

}  // namespace internal
}  // namespace hybridnet
