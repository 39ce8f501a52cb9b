// GraphExecutor: binds a Symbol to parameter arrays, plans once (shapes, dtypes, fusion,
// topological kernel list, memory reuse by liveness, in-place and zero-copy views) and then runs
// forward as a flat loop of kernel calls with no allocation, parsing or map look-ups.
// A call with new input shapes re-plans transparently.
//
//   GraphExecutor exec(symbol, {"data"}, params);
//   std::vector<NDArray> y = exec.Forward({x});
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hybridnet/ndarray.h"
#include "hybridnet/symbol.h"

namespace hybridnet {

/// The plan's optimizations; each can be switched off, e.g. to compare with the plain plan.
struct ExecutorOptions {
  /// Fuse ops (Convolution + BatchNorm + residual add + activation, FullyConnected +
  /// activation, ...) and keep convolutional data channel-last between ops. Bit-identical to
  /// the ops run one by one.
  bool fuse = true;
  bool plan_memory = true;  ///< reuse intermediate buffers by liveness
  /// Faster convolutions whose results may differ from the ops run one by one in the last bits:
  /// BatchNorm folded into the convolution weights, Winograd for 3x3 stride-1 convolutions
  /// (oneDNN's on AVX-512, ours on AVX2). Off by default; docs/performance.md gives the error
  /// bound.
  bool fast_math = false;
  /// Run ops in training mode (OpContext::is_train: Dropout drops, BatchNorm uses the batch
  /// statistics and updates its running ones), as eager ops under autograd's train mode. A
  /// training plan fuses nothing and lays nothing out channel-last (fusion folds inference-mode
  /// BatchNorm), so every op runs its own kernel, as eagerly.
  bool is_train = false;
  /// The dtype convolutions and dense layers compute in: kFloat32, or kBFloat16 for MXNet AMP's
  /// bfloat16 conversion at load (the data and weights of every Convolution and FullyConnected
  /// rounded to bfloat16, float32 sums, BatchNorm folded into convolutions; other ops and every
  /// tensor stay float32; inference only). An AMP export (amp_cast to bfloat16, parameters
  /// stored in bfloat16) runs its own bfloat16 layers in bfloat16 whatever this says.
  DType dtype = DType::kFloat32;
};

/// What the last plan looks like (for tests, `hybridnet info` and benchmarks).
struct ExecutorStats {
  size_t num_nodes = 0;           ///< op nodes in the graph
  size_t num_kernels = 0;         ///< kernel calls per forward after fusion and views
  size_t num_fused = 0;           ///< nodes removed by fusion
  size_t num_bf16 = 0;            ///< convolutions and dense layers computing in bfloat16
  size_t num_relayouts = 0;       ///< copies between channel-first and channel-last layouts
  size_t intermediate_bytes = 0;  ///< bytes of planned intermediate storage
  size_t naive_bytes = 0;         ///< bytes if every intermediate had its own buffer
  size_t num_plans = 0;           ///< plans made so far (1 + re-plans)
};

/// Runs a Symbol's forward pass with bound parameters, planned once; see the file comment.
class GraphExecutor {
 public:
  /// `data_names`: variables fed on each Forward, in that order. `params`: a value for every
  /// other variable (arguments and auxiliary states), shared, not copied.
  GraphExecutor(const Symbol& symbol, std::vector<std::string> data_names,
                std::map<std::string, NDArray> params, ExecutorOptions options = {});
  ~GraphExecutor();
  /// Movable, not copyable: it owns its plan and buffers.
  GraphExecutor(GraphExecutor&&) noexcept;
  /// Move assignment.
  GraphExecutor& operator=(GraphExecutor&&) noexcept;

  /// Runs the graph; returns freshly allocated outputs.
  std::vector<NDArray> Forward(const std::vector<NDArray>& data);
  /// Runs the graph into `outputs`, reusing their storage when shape and dtype already fit.
  void Forward(const std::vector<NDArray>& data, std::vector<NDArray>* outputs);

  /// The variables Forward takes, in that order.
  const std::vector<std::string>& data_names() const;
  /// The graph as given to the constructor (before fusion).
  const Symbol& symbol() const;
  /// Figures of the current plan.
  ExecutorStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hybridnet
