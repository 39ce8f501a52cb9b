// MXNet AMP's bfloat16 (contrib/amp, target_dtype bfloat16) as the executor runs it: tensors stay
// float32 and the convolutions and dense layers compute their products in bfloat16
// (ConvolutionFusions::bf16, BFloat16FullyConnectedAttrs).
//  * An AMP export (amp.convert_hybrid_block) rounds with amp_cast to bfloat16 and may store the
//    parameters of its bfloat16 ops in bfloat16. WithoutBFloat16Tensors keeps its roundings as
//    float32 values and declares those parameters float32 (the executor widens their values,
//    exactly); ComputeInBFloat16 then marks the layers the export runs in bfloat16.
//  * The conversion at load (ExecutorOptions::dtype) marks every Convolution and FullyConnected:
//    MXNet 1.9.1's BF16_FUNCS (python/mxnet/contrib/amp/lists/symbol_bf16.py). Its
//    BF16_FP32_FUNCS (pooling, BatchNorm, relu, add, concat, ...) work in bfloat16 or float32
//    alike; here they read the layers' float32 outputs, so their results are those of float32
//    ops on values MXNet would have rounded once more. Its FP32_FUNCS stay float32 either way.
#include <string>

#include "ops/nn/convolution_fusions.h"
#include "ops/nn/fully_connected_fusions.h"
#include "pass/passes.h"

namespace hybridnet {
namespace internal {

namespace {

const char kBFloat16Flag[] = "12";  // DType::kBFloat16 as "__dtype__" writes it

bool IsAmpCastTo(const Node& node, const Op* amp_cast, const char* dtype) {
  if (node.IsVariable() || node.attrs.op != amp_cast) return false;
  auto it = node.attrs.dict.find("dtype");
  return it != node.attrs.dict.end() && it->second == dtype;
}

}  // namespace

Symbol WithoutBFloat16Tensors(const Symbol& symbol, size_t* num_casts) {
  *num_casts = 0;
  const Op* amp_cast = OpRegistry::Global().Find("amp_cast");
  Symbol graph = symbol.Copy();
  const IndexedGraph g(graph.outputs);
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) {
    Node* node = g[nid].owner.get();
    if (node->IsVariable()) {
      auto it = node->attrs.dict.find("__dtype__");
      if (it != node->attrs.dict.end() && it->second == kBFloat16Flag) it->second = "0";
      continue;
    }
    if (!IsAmpCastTo(*node, amp_cast, "bfloat16")) continue;
    // amp_cast(x, bfloat16) becomes amp_cast(amp_cast(x, bfloat16), float32) under its name.
    auto round = std::make_shared<Node>();
    round->attrs = MakeNodeAttrs(*amp_cast, node->attrs.name + "_bfloat16", node->attrs.dict);
    round->inputs = node->inputs;
    AttrDict widen = node->attrs.dict;
    widen["dtype"] = "float32";
    node->attrs = MakeNodeAttrs(*amp_cast, node->attrs.name, widen);
    node->inputs = {NodeEntry{round, 0, 0}};
    ++*num_casts;
  }
  return graph;
}

Symbol ComputeInBFloat16(const Symbol& symbol, bool every_layer,
                         const std::set<std::string>& bf16_weights, size_t* num_layers) {
  *num_layers = 0;
  const OpRegistry& registry = OpRegistry::Global();
  const Op* convolution = registry.Find("Convolution");
  const Op* fused_convolution = registry.Find("_hn_convolution");
  const Op* dense = registry.Find("FullyConnected");
  const Op* fused_dense = registry.Find("_hn_fully_connected_act");
  const Op* amp_cast = registry.Find("amp_cast");
  Symbol graph = symbol.Copy();
  const IndexedGraph g(graph.outputs);
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) {
    Node* node = g[nid].owner.get();
    if (node->IsVariable()) continue;
    const Op* op = node->attrs.op;
    const bool is_convolution = op == convolution || op == fused_convolution;
    if (!is_convolution && op != dense && op != fused_dense) continue;
    bool bf16 = every_layer;
    // An export's bfloat16 layer: a weight stored in bfloat16, or data rounded by amp_cast
    // (WithoutBFloat16Tensors' pair).
    const Node& weight = *node->inputs[1].node;
    if (weight.IsVariable() && bf16_weights.count(weight.name())) bf16 = true;
    const Node& data = *node->inputs[0].node;
    if (IsAmpCastTo(data, amp_cast, "float32") &&
        IsAmpCastTo(*data.inputs[0].node, amp_cast, "bfloat16")) {
      bf16 = true;
    }
    if (!bf16) continue;
    if (is_convolution) {
      ConvolutionFusions fusions = FusionsOf(node->attrs);
      fusions.bf16 = true;
      node->attrs = FusedConvolutionAttrs(node->attrs.name, node->attrs.dict, fusions);
    } else {
      node->attrs = BFloat16FullyConnectedAttrs(node->attrs);
    }
    ++*num_layers;
  }
  return graph;
}

}  // namespace internal
}  // namespace hybridnet
