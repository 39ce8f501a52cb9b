// Channel-last layout for convolutional graphs (see passes.h). Convolutions, float and int8
// (quantized _sg_mkldnn_conv), run on channel-last data (oneDNN's preferred layout on CPUs,
// kernels/convolution.h); the ops between them keep that layout when they can do so with the same
// arithmetic:
//  * Pooling and int8 pooling (_contrib_quantized_pooling): their layout attribute (NWC, NHWC,
//    NDHWC);
//  * quantize_v2 read by int8 convolutions only: its layout attribute (channel-last output);
//  * BatchNorm: its channel axis moves last;
//  * elementwise ops (OpPattern::kElemwise: all inputs and the output have one shape);
//  * Concat along the channels;
// and every other reader, and the graph's outputs, get the data back channel-first. A first
// convolution whose kernel reads channel-first data reads its input as it is (the kernel layer
// says which do: ConvReadsChannelFirstData). Each entry
// is converted at most once per direction, whatever the number of its readers. In a training
// graph (forward and gradients) the gradients of convolutions, BatchNorm and pooling follow their
// forward ops, and the elementwise gradient ops the rule above.
#include "kernels/layout.h"

#include <map>
#include <string>
#include <utility>

#include "kernels/convolution.h"
#include "ops/nn/convolution_fusions.h"
#include "ops/quantization/quantized_conv.h"
#include "pass/passes.h"

namespace hybridnet {
namespace internal {

namespace {

std::string Attr(const Node& node, const std::string& key, const std::string& fallback) {
  auto it = node.attrs.dict.find(key);
  return it == node.attrs.dict.end() ? fallback : it->second;
}

// An axis attribute resolved against `ndim` (negative counts from the end).
int64_t ResolvedAxis(const std::string& text, size_t ndim) {
  const int64_t axis = std::stoll(text);
  return axis < 0 ? axis + static_cast<int64_t>(ndim) : axis;
}

class LayoutPass {
 public:
  LayoutPass(Symbol* graph, const std::vector<Shape>& shapes, bool training)
      : graph_(graph),
        g_(graph->outputs),
        shapes_(shapes),
        training_(training),
        last_(g_.num_entries(), false) {}

  size_t Run() {
    const OpRegistry& registry = OpRegistry::Global();
    const Op* convolution = registry.Find("Convolution");
    const Op* fused_convolution = registry.Find("_hn_convolution");
    const Op* pooling = registry.Find("Pooling");
    const Op* quantized_pooling = registry.Find("_contrib_quantized_pooling");
    const Op* batch_norm = registry.Find("BatchNorm");
    const Op* batch_norm_relu = registry.Find("_contrib_BatchNormWithReLU");
    const Op* concat = registry.Find("Concat");
    const Op* quantize_v2 = registry.Find("_contrib_quantize_v2");
    const Op* convolution_backward = registry.Find("_backward_Convolution");
    const Op* batch_norm_backward = registry.Find("_backward_BatchNorm");
    const Op* batch_norm_relu_backward = registry.Find("_backward_BatchNormWithReLU");
    const Op* pooling_backward = registry.Find("_backward_Pooling");
    // Per entry: read as an int8 convolution's data, and read otherwise.
    std::vector<bool> int8_conv_data(g_.num_entries(), false), other_reads(g_.num_entries(), false);
    for (uint32_t nid = 0; nid < g_.num_nodes(); ++nid) {
      const Node& node = *g_[nid].owner;
      const bool int8_conv = !node.IsVariable() && IsQuantizedSgConv(node.attrs);
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        (int8_conv && i == 0 ? int8_conv_data : other_reads)[InputEntry(nid, i)] = true;
      }
    }
    for (uint32_t nid = 0; nid < g_.num_nodes(); ++nid) {
      Node* node = g_[nid].owner.get();
      if (node->IsVariable()) continue;
      const Op* op = node->attrs.op;
      const Shape& out0 = shapes_[g_.entry_id(nid, 0)];
      const size_t rank = out0.ndim() >= 3 ? out0.ndim() - 2 : 0;
      if ((op == convolution || op == fused_convolution) && rank >= 1 && rank <= 3 &&
          IsChannelFirstName(Attr(*node, "layout", ""))) {
        AttrDict dict = node->attrs.dict;
        dict["layout"] = LayoutName(ChannelLastLayout(rank));
        ConvolutionFusions fusions = FusionsOf(node->attrs);
        // A first layer whose kernel reads the network's channel-first input as it comes: no
        // re-layout (at inference: the gradient kernels take channel-last data only).
        fusions.channel_first_data =
            !training_ && !InputLast(nid, 0) && !fusions.expand &&
            ConvReadsChannelFirstData(ConvWindowOf(*node, rank, shapes_[InputEntry(nid, 0)][1]));
        node->attrs = FusedConvolutionAttrs(node->attrs.name, dict, fusions);
        if (!fusions.channel_first_data) SetInputLast(nid, 0);
        if (fusions.residual) SetInputLast(nid, node->inputs.size() - 1);
        last_[g_.entry_id(nid, 0)] = true;
      } else if (!training_ && IsQuantizedSgConv(node->attrs) && rank >= 1 && rank <= 3 &&
                 IsChannelFirstName(Attr(*node, "layout", ""))) {
        // An int8 convolution: its data, sum and output channel-last too.
        AttrDict dict = node->attrs.dict;
        dict["layout"] = LayoutName(ChannelLastLayout(rank));
        NodeAttrs attrs = MakeNodeAttrs(*op, node->attrs.name, dict);
        attrs.subgraphs = node->attrs.subgraphs;
        node->attrs = std::move(attrs);
        SetInputLast(nid, 0);
        if (const auto sum = SgConvSumInput(node->attrs)) SetInputLast(nid, *sum);
        last_[g_.entry_id(nid, 0)] = true;
      } else if (!training_ && op == quantize_v2 && rank >= 1 && rank <= 3 && !InputLast(nid, 0) &&
                 int8_conv_data[g_.entry_id(nid, 0)] && !other_reads[g_.entry_id(nid, 0)] &&
                 !node->attrs.dict.count("layout")) {
        // The network's input quantized for int8 convolutions only: written channel-last in the
        // same pass rather than re-laid-out after.
        AttrDict dict = node->attrs.dict;
        dict["layout"] = LayoutName(ChannelLastLayout(rank));
        node->attrs = MakeNodeAttrs(*op, node->attrs.name, dict);
        last_[g_.entry_id(nid, 0)] = true;
      } else if ((op == pooling || (!training_ && op == quantized_pooling)) && rank >= 1 &&
                 InputLast(nid, 0) && IsChannelFirstName(Attr(*node, "layout", ""))) {
        AttrDict dict = node->attrs.dict;
        dict["layout"] = LayoutName(ChannelLastLayout(rank));
        node->attrs = MakeNodeAttrs(*op, node->attrs.name, dict);
        last_[g_.entry_id(nid, 0)] = true;
      } else if ((op == batch_norm || op == batch_norm_relu) && rank >= 1 && InputLast(nid, 0) &&
                 ResolvedAxis(Attr(*node, "axis", "1"), out0.ndim()) == 1) {
        AttrDict dict = node->attrs.dict;
        dict["axis"] = std::to_string(out0.ndim() - 1);
        node->attrs = MakeNodeAttrs(*op, node->attrs.name, dict);
        last_[g_.entry_id(nid, 0)] = true;
      } else if (training_ && op == convolution_backward && rank >= 1 && rank <= 3 &&
                 IsChannelFirstName(Attr(*node, "layout", ""))) {
        // (out_grad, data, weight[, bias]) -> (d data, d weight[, d bias]): out_grad, data and
        // d data channel-last, as the forward convolution's.
        AttrDict dict = node->attrs.dict;
        dict["layout"] = LayoutName(ChannelLastLayout(rank));
        node->attrs = MakeNodeAttrs("_backward_hn_convolution", node->attrs.name, dict);
        SetInputLast(nid, 0);
        SetInputLast(nid, 1);
        last_[g_.entry_id(nid, 0)] = true;
      } else if (training_ && (op == batch_norm_backward || op == batch_norm_relu_backward) &&
                 rank >= 1 && (InputLast(nid, 0) || InputLast(nid, 1)) &&
                 ResolvedAxis(Attr(*node, "axis", "1"), out0.ndim()) == 1) {
        // (out_grad, data, gamma, ...) -> (d data, d gamma, d beta): the channel axis last.
        AttrDict dict = node->attrs.dict;
        dict["axis"] = std::to_string(out0.ndim() - 1);
        node->attrs = MakeNodeAttrs(*op, node->attrs.name, dict);
        SetInputLast(nid, 0);
        SetInputLast(nid, 1);
        last_[g_.entry_id(nid, 0)] = true;
      } else if (training_ && op == pooling_backward && rank >= 1 && AnyInputLast(nid) &&
                 IsChannelFirstName(Attr(*node, "layout", ""))) {
        // (out_grad, data, output) -> d data, all in the pooling's layout.
        AttrDict dict = node->attrs.dict;
        dict["layout"] = LayoutName(ChannelLastLayout(rank));
        node->attrs = MakeNodeAttrs(*op, node->attrs.name, dict);
        for (size_t i = 0; i < node->inputs.size(); ++i) SetInputLast(nid, i);
        last_[g_.entry_id(nid, 0)] = true;
      } else if (op->pattern == OpPattern::kElemwise && node->NumOutputs() == 1 && rank >= 1 &&
                 AnyInputLast(nid) && (!training_ || WholeVectors(out0))) {
        for (size_t i = 0; i < node->inputs.size(); ++i) SetInputLast(nid, i);
        last_[g_.entry_id(nid, 0)] = true;
      } else if (op == concat && rank >= 1 && AnyInputLast(nid) &&
                 ResolvedAxis(Attr(*node, "dim", "1"), out0.ndim()) == 1) {
        AttrDict dict = node->attrs.dict;
        dict["dim"] = std::to_string(out0.ndim() - 1);
        node->attrs = MakeNodeAttrs(*op, node->attrs.name, dict);
        for (size_t i = 0; i < node->inputs.size(); ++i) SetInputLast(nid, i);
        last_[g_.entry_id(nid, 0)] = true;
      } else {
        for (size_t i = 0; i < node->inputs.size(); ++i) SetInputFirst(nid, i);
      }
    }
    for (size_t i = 0; i < graph_->outputs.size(); ++i) {
      const uint32_t eid = g_.entry_id(g_.outputs()[i]);
      if (last_[eid]) graph_->outputs[i] = Converted(graph_->outputs[i], eid, false);
    }
    return relayouts_;
  }

 private:
  // Whether every sample of `shape` fills whole vector registers (16 floats), so that an
  // elementwise kernel runs every element through its vector loop in either layout, whatever the
  // batch. A vector loop and its scalar tail may keep different NaNs where two meet (which one
  // depends on the operands' order, the compiler's choice), and the gradients of a training graph
  // must keep eager's bits, NaNs included (diff.random_graphs found such cases).
  static bool WholeVectors(const Shape& shape) {
    int64_t sample = 1;
    for (size_t i = 1; i < shape.ndim(); ++i) sample *= shape[i];
    return sample % 16 == 0;
  }

  uint32_t InputEntry(uint32_t nid, size_t i) const { return g_.entry_id(g_[nid].inputs[i]); }
  bool InputLast(uint32_t nid, size_t i) const { return last_[InputEntry(nid, i)]; }
  bool AnyInputLast(uint32_t nid) const {
    for (size_t i = 0; i < g_[nid].inputs.size(); ++i)
      if (InputLast(nid, i)) return true;
    return false;
  }

  void SetInputLast(uint32_t nid, size_t i) {
    if (InputLast(nid, i)) return;
    Node* node = g_[nid].owner.get();
    node->inputs[i] = Converted(node->inputs[i], InputEntry(nid, i), true);
  }

  void SetInputFirst(uint32_t nid, size_t i) {
    if (!InputLast(nid, i)) return;
    Node* node = g_[nid].owner.get();
    node->inputs[i] = Converted(node->inputs[i], InputEntry(nid, i), false);
  }

  // Entry `e` (id `eid` in the original numbering) in the other layout, made once.
  NodeEntry Converted(const NodeEntry& e, uint32_t eid, bool to_last) {
    auto key = std::make_pair(eid, to_last);
    auto it = converted_.find(key);
    if (it != converted_.end()) return it->second;
    const Shape& logical = shapes_[eid];
    int64_t spatial = 1;
    for (size_t i = 2; i < logical.ndim(); ++i) spatial *= logical[i];
    auto node = std::make_shared<Node>();
    const std::string name = e.node->name() + (to_last ? "_channel_last" : "_channel_first");
    if (!training_ && (logical[1] == 1 || spatial == 1)) {
      // Both layouts are the same bytes: a zero-copy view with the other shape.
      const Shape target = to_last ? ChannelLastShape(logical) : logical;
      node->attrs = MakeNodeAttrs("Reshape", name, {{"shape", target.ToString()}});
    } else {
      node->attrs =
          MakeNodeAttrs("_hn_relayout", name, {{"channel_last", to_last ? "True" : "False"}});
      ++relayouts_;
    }
    node->inputs = {e};
    NodeEntry out{node, 0, 0};
    converted_[key] = out;
    return out;
  }

  Symbol* graph_;
  IndexedGraph g_;
  const std::vector<Shape>& shapes_;
  const bool training_;
  std::vector<bool> last_;  // per original entry: produced channel-last
  std::map<std::pair<uint32_t, bool>, NodeEntry> converted_;
  size_t relayouts_ = 0;
};

}  // namespace

Symbol LayOutChannelLast(const Symbol& symbol, const std::vector<Shape>& shapes,
                         size_t* num_relayouts) {
  Symbol graph = symbol.Copy();
  LayoutPass pass(&graph, shapes, false);
  *num_relayouts = pass.Run();
  return graph;
}

Symbol LayOutChannelLastForTraining(const Symbol& symbol, const std::vector<Shape>& shapes,
                                    size_t* num_relayouts) {
  Symbol graph = symbol.Copy();
  LayoutPass pass(&graph, shapes, true);
  *num_relayouts = pass.Run();
  return graph;
}

}  // namespace internal
}  // namespace hybridnet
