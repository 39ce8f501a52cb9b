// MXNet 1.9.1's mx.viz for a symbol: print_summary's layer table and plot_network's Graphviz
// source, as text. Every frontend (the C API, the CLI, the bindings) prints these strings.
//
//   Symbol net = Symbol::Load("resnet18_v1-symbol.json");
//   std::cout << viz::PrintSummary(net, viz::InputShapes{{"data", Shape({1, 3, 224, 224})}});
//   std::ofstream("net.dot") << viz::PlotNetwork(net);
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hybridnet/symbol.h"

namespace hybridnet {
/// MXNet's visualization module (mx.viz).
namespace viz {

/// Input shapes by variable name, as print_summary's and plot_network's `shape` dict.
using InputShapes = std::map<std::string, Shape>;

/// The layout of print_summary's table (MXNet's defaults).
struct SummaryLayout {
  int line_length = 120;  ///< the width of the separator lines
  /// Where each of the four columns ends: fractions of line_length when the last is <= 1, else
  /// character positions.
  std::vector<double> positions = {.44, .64, .74, 1.};
};

/// mx.viz.print_summary's text, byte for byte: one row per op node (and the first variable) with
/// its output shape (without the batch axis), its parameter count by MXNet's rules
/// (Convolution, FullyConnected, BatchNorm, Embedding) and the layers it reads. Without `shapes`
/// the shape column is empty and shape-dependent counts are 0, as in MXNet. kShapeError naming
/// the input when the shapes do not determine every node's shape; kInvalidArgument for a layout
/// without four increasing positions.
std::string PrintSummary(const Symbol& symbol, const std::optional<InputShapes>& shapes = {},
                         const SummaryLayout& layout = {});

/// What plot_network draws (MXNet's arguments; save_format only matters for rendering).
struct PlotOptions {
  std::string title = "plot";         ///< the digraph's name
  std::optional<InputShapes> shapes;  ///< when given, edges are labelled with shapes
  std::optional<std::map<std::string, DType>> dtypes;  ///< when given, edges get "(float32)"
  /// Graphviz node attributes that override the defaults (shape=box, fixedsize=true, ...).
  std::map<std::string, std::string> node_attrs;
  bool hide_weights = true;  ///< hide *_weight, *_bias, *_gamma, ... variables and their edges
};

/// mx.viz.plot_network's Graphviz source (graphviz.Digraph(...).source): MXNet's nodes, labels,
/// colours and edges (from each node back to its inputs). Errors as PrintSummary's.
std::string PlotNetwork(const Symbol& symbol, const PlotOptions& options = {});

/// The graph as the executor runs it for these input shapes: the fusion passes' fused kernels
/// (_hn_convolution, ...) and the channel-last layout changes as nodes. Its nodes carry internal
/// ops, so it is for PrintSummary and PlotNetwork, not for saving.
Symbol AsRunGraph(const Symbol& symbol, const InputShapes& shapes);

}  // namespace viz
}  // namespace hybridnet
