// MXNet AMP's bfloat16 (contrib/amp, target_dtype bfloat16) as the executor runs it: tensors stay
// float32 and the convolutions compute their products in bfloat16 (ConvolutionFusions::bf16).
//  * An AMP export (amp.convert_hybrid_block) rounds with amp_cast to bfloat16 and may store the
//    parameters of its bfloat16 ops in bfloat16. WithoutBFloat16Tensors keeps its roundings as
//    float32 values and declares those parameters float32 (the executor widens their values,
//    exactly); ConvolveInBFloat16 then marks the convolutions the export runs in bfloat16.
//  * The conversion at load (ExecutorOptions::dtype) marks every convolution: Convolution is
//    the one op of MXNet 1.9.1's BF16_FUNCS (python/mxnet/contrib/amp/lists/symbol_bf16.py)
//    besides FullyConnected, which stays float32 here (a model's last layer, a small share of
//    its time). Its BF16_FP32_FUNCS (pooling, BatchNorm, relu, add, concat, ...) work in bfloat16
//    or float32 alike; here they read the convolutions' float32 outputs, so their results are
//    those of float32 ops on values MXNet would have rounded once more.
#include <string>

#include "ops/nn/convolution_fusions.h"
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

Symbol ConvolveInBFloat16(const Symbol& symbol, bool every_convolution,
                          const std::set<std::string>& bf16_weights, size_t* num_convolutions) {
  *num_convolutions = 0;
  const OpRegistry& registry = OpRegistry::Global();
  const Op* convolution = registry.Find("Convolution");
  const Op* fused = registry.Find("_hn_convolution");
  const Op* amp_cast = registry.Find("amp_cast");
  Symbol graph = symbol.Copy();
  const IndexedGraph g(graph.outputs);
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) {
    Node* node = g[nid].owner.get();
    if (node->IsVariable() || (node->attrs.op != convolution && node->attrs.op != fused)) continue;
    bool bf16 = every_convolution;
    // An export's bfloat16 convolution: a weight stored in bfloat16, or data rounded by amp_cast
    // (WithoutBFloat16Tensors' pair).
    const Node& weight = *node->inputs[1].node;
    if (weight.IsVariable() && bf16_weights.count(weight.name())) bf16 = true;
    const Node& data = *node->inputs[0].node;
    if (IsAmpCastTo(data, amp_cast, "float32") &&
        IsAmpCastTo(*data.inputs[0].node, amp_cast, "bfloat16")) {
      bf16 = true;
    }
    if (!bf16) continue;
    ConvolutionFusions fusions = FusionsOf(node->attrs);
    fusions.bf16 = true;
    node->attrs = FusedConvolutionAttrs(node->attrs.name, node->attrs.dict, fusions);
    ++*num_convolutions;
  }
  return graph;
}

}  // namespace internal
}  // namespace hybridnet
