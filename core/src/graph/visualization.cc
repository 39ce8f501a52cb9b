// mx.viz.print_summary and mx.viz.plot_network of MXNet 1.9.1 (python/mxnet/visualization.py),
// over the graph in its JSON node order (IndexedGraph's, which ToJSON writes). The shapes are
// those of MXNet's `symbol.get_internals().infer_shape(**shape)`: every visible output of every
// node, keyed by its list_outputs name ("conv0_output", "data").
#include "hybridnet/visualization.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "hybridnet/base.h"
#include "pass/passes.h"

namespace hybridnet {
namespace viz {
namespace {

// Every visible output of every node, in node order (MXNet's get_internals()).
Symbol Internals(const IndexedGraph& graph) {
  Symbol internals;
  for (size_t nid = 0; nid < graph.num_nodes(); ++nid) {
    const auto& info = graph[nid];
    for (uint32_t i = 0; i < info.node->NumOutputs(); ++i)
      internals.outputs.push_back(NodeEntry{info.owner, i, 0});
  }
  return internals;
}

// shape_dict of MXNet's print_summary and plot_network: list_outputs name -> shape (a later
// duplicate name wins, as dict(zip(...)) does).
std::map<std::string, Shape> ShapeDict(const IndexedGraph& graph, const InputShapes& shapes) {
  Symbol internals = Internals(graph);
  Symbol::ShapeResult inferred = internals.InferShape(shapes, /*partial=*/false);
  std::vector<std::string> names = internals.ListOutputs();
  std::map<std::string, Shape> dict;
  for (size_t i = 0; i < names.size(); ++i) dict[names[i]] = inferred.out_shapes[i];
  return dict;
}

std::map<std::string, DType> TypeDict(const IndexedGraph& graph,
                                      const std::map<std::string, DType>& dtypes) {
  Symbol internals = Internals(graph);
  Symbol::TypeResult inferred = internals.InferType(dtypes, /*partial=*/false);
  std::vector<std::string> names = internals.ListOutputs();
  std::map<std::string, DType> dict;
  for (size_t i = 0; i < names.size(); ++i) dict[names[i]] = inferred.out_types[i];
  return dict;
}

// The shape without its batch axis, as "3x224x224" ("x".join(shape[1:])).
std::string WithoutBatch(const Shape& shape) {
  std::string text;
  for (size_t i = 1; i < shape.ndim(); ++i) text += (i > 1 ? "x" : "") + std::to_string(shape[i]);
  return text;
}

// MXNet's _str2tuple joined with "x": the digit runs of an attribute ("(3, 3)" -> "3x3").
std::string DigitRuns(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    if (!out.empty()) out += "x";
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) out += text[i++];
  }
  return out;
}

// The digit runs of an attribute as numbers (the kernel's sizes).
std::vector<int64_t> DigitValues(const std::string& text) {
  std::vector<int64_t> values;
  std::istringstream runs(DigitRuns(text));
  for (std::string run; std::getline(runs, run, 'x');) values.push_back(std::stoll(run));
  return values;
}

const std::string& Attr(const Node& node, const std::string& key) {
  auto it = node.attrs.dict.find(key);
  HN_CHECK(it != node.attrs.dict.end(), kInvalidArgument)
      << node.attrs.op->name << " node '" << node.name() << "' has no attribute '" << key
      << "', which the summary needs";
  return it->second;
}

int64_t IntAttr(const Node& node, const std::string& key) {
  const std::string& text = Attr(node, key);
  try {
    return std::stoll(text);
  } catch (const std::exception&) {
    HN_THROW(kInvalidArgument) << node.attrs.op->name << " node '" << node.name() << "': attribute "
                               << key << "='" << text << "' is not an integer";
  }
}

bool HasTrue(const Node& node, const std::string& key) {
  auto it = node.attrs.dict.find(key);
  return it != node.attrs.dict.end() && it->second == "True";
}

// The second dimension of a shape (channels, units), which MXNet's counts read: of every input
// of every layer, so MXNet 1.9.1's print_summary fails on 1-D inputs too (an LSTM's parameter
// concat).
int64_t Dim1(const Shape& shape, const Node& node, const std::string& what) {
  HN_CHECK(shape.ndim() >= 2, kShapeError)
      << "print_summary reads the second dimension of " << what << " of node '" << node.name()
      << "', which has shape " << shape.ToString()
      << " (MXNet 1.9.1's print_summary fails on this graph too)";
  return shape[1];
}

class SummaryPrinter {
 public:
  SummaryPrinter(const Symbol& symbol, const std::optional<InputShapes>& shapes,
                 const SummaryLayout& layout)
      : graph_(symbol.outputs), line_length_(layout.line_length) {
    HN_CHECK(layout.positions.size() == 4, kInvalidArgument)
        << "print_summary: positions needs one end per column (4), got " << layout.positions.size();
    HN_CHECK(line_length_ > 0, kInvalidArgument)
        << "print_summary: line_length must be positive, got " << line_length_;
    const bool relative = layout.positions.back() <= 1;
    for (double p : layout.positions) {
      positions_.push_back(static_cast<int>(relative ? line_length_ * p : p));
      HN_CHECK(positions_.back() >= 0 && (positions_.size() == 1 ||
                                          positions_.back() >= positions_[positions_.size() - 2]),
               kInvalidArgument)
          << "print_summary: column ends must increase and be non-negative";
    }
    if (shapes) {
      show_shape_ = true;
      shape_dict_ = ShapeDict(graph_, *shapes);
    }
    // MXNet takes set(heads[0]): the node, index and version of the first head, so node 0
    // (whose id equals the index) counts as a head too.
    const auto& head = symbol.outputs.at(0);
    heads_ = {graph_.node_id(head.node.get()), head.index, head.version};
  }

  std::string Print() {
    Separator('_');
    Row({"Layer (type)", "Output Shape", "Param #", "Previous Layer"});
    Separator('=');
    int64_t total = 0;
    for (uint32_t i = 0; i < graph_.num_nodes(); ++i) {
      const Node& node = *graph_[i].node;
      if (node.IsVariable() && i > 0) continue;
      std::string out_shape;
      if ((!node.IsVariable() || heads_.count(i)) && show_shape_) {
        auto it = shape_dict_.find(OutputKey(node));
        if (it != shape_dict_.end()) out_shape = WithoutBatch(it->second);
      }
      total += Layer(i, out_shape);
      Separator(i + 1 == graph_.num_nodes() ? '=' : '_');
    }
    out_ << "Total params: " << total << "\n";
    Separator('_');
    return out_.str();
  }

 private:
  static std::string OutputKey(const Node& node) {
    return node.IsVariable() ? node.name() : node.name() + "_output";
  }

  void Separator(char c) { out_ << std::string(static_cast<size_t>(line_length_), c) << "\n"; }

  void Row(const std::vector<std::string>& fields) {
    std::string line;
    for (size_t i = 0; i < fields.size(); ++i) {
      const size_t end = static_cast<size_t>(positions_[i]);
      line += fields[i];
      line.resize(std::min(line.size(), end));
      line.append(end - line.size(), ' ');
    }
    out_ << line << "\n";
  }

  int64_t Layer(uint32_t nid, const std::string& out_shape) {
    const Node& node = *graph_[nid].node;
    std::vector<std::string> previous;
    int64_t pre_filter = 0;
    if (!node.IsVariable()) {
      for (const auto& input : graph_[nid].inputs) {
        const Node& from = *graph_[input.node_id].node;
        if (from.IsVariable() && !heads_.count(input.node_id)) continue;
        previous.push_back(from.name());
        if (!show_shape_) continue;
        auto it = shape_dict_.find(OutputKey(from));
        if (it != shape_dict_.end())
          pre_filter += Dim1(it->second, node, "input '" + from.name() + "'");
      }
    }
    int64_t params = 0;
    const std::string op = node.IsVariable() ? "null" : node.attrs.op->name;
    if (op == "Convolution") {
      params = pre_filter * IntAttr(node, "num_filter") /
               (node.attrs.dict.count("num_group") ? IntAttr(node, "num_group") : 1);
      for (int64_t k : DigitValues(Attr(node, "kernel"))) params *= k;
      if (!HasTrue(node, "no_bias")) params += IntAttr(node, "num_filter");
    } else if (op == "FullyConnected") {
      params = (pre_filter + (HasTrue(node, "no_bias") ? 0 : 1)) * IntAttr(node, "num_hidden");
    } else if (op == "BatchNorm") {
      if (show_shape_) {
        auto it = shape_dict_.find(node.name() + "_output");
        HN_CHECK(it != shape_dict_.end(), kShapeError)
            << "BatchNorm node '" << node.name() << "' has no output shape";
        params = Dim1(it->second, node, "the output") * 2;
      }
    } else if (op == "Embedding") {
      params = IntAttr(node, "input_dim") * IntAttr(node, "output_dim");
    }
    Row({node.name() + "(" + op + ")", out_shape, std::to_string(params),
         previous.empty() ? "" : previous[0]});
    for (size_t i = 1; i < previous.size(); ++i) Row({"", "", "", previous[i]});
    return params;
  }

  IndexedGraph graph_;
  int line_length_;
  std::vector<int> positions_;
  bool show_shape_ = false;
  std::map<std::string, Shape> shape_dict_;
  std::set<uint32_t> heads_;
  std::ostringstream out_;
};

// ---- plot_network ---------------------------------------------------------------------------

// graphviz.lang.quote (the Python package MXNet draws with): a DOT ID stays bare, anything else
// is double-quoted with its quotes escaped.
std::string Quote(const std::string& id) {
  bool bare = !id.empty();
  if (bare && (std::isalpha(static_cast<unsigned char>(id[0])) || id[0] == '_')) {
    for (char c : id) bare = bare && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    std::string lower;
    for (char c : id) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    static const std::set<std::string> kKeywords = {"node",    "edge",     "graph",
                                                    "digraph", "subgraph", "strict"};
    bare = bare && !kKeywords.count(lower);
  } else if (bare) {
    // A numeral: -?(.digits | digits(.digits?)?)
    size_t i = id[0] == '-' ? 1 : 0;
    size_t digits = 0, dots = 0, after_dot = 0;
    for (size_t j = i; j < id.size(); ++j) {
      if (id[j] == '.') {
        ++dots;
      } else if (std::isdigit(static_cast<unsigned char>(id[j]))) {
        (dots ? after_dot : digits)++;
      } else {
        bare = false;
      }
    }
    bare = bare && dots <= 1 && (digits > 0 || after_dot > 0);
  }
  if (bare || (id.size() >= 2 && id.front() == '<' && id.back() == '>')) return id;
  std::string quoted = "\"";
  for (char c : id) quoted += c == '"' ? std::string("\\\"") : std::string(1, c);
  return quoted + "\"";
}

// graphviz.lang.quote_edge: "node:port:compass" quotes node and port.
std::string QuoteEdge(const std::string& id) {
  size_t colon = id.find(':');
  if (colon == std::string::npos) return Quote(id);
  std::string rest = id.substr(colon + 1);
  size_t second = rest.find(':');
  std::string out = Quote(id.substr(0, colon)) + ":" + Quote(rest.substr(0, second));
  if (second != std::string::npos && second + 1 < rest.size()) out += ":" + rest.substr(second + 1);
  return out;
}

// " [label=L k=v ...]" with the attributes sorted by name, as graphviz.lang.attr_list.
std::string AttrList(const std::string& label, const std::map<std::string, std::string>& attrs) {
  std::string out = " [label=" + Quote(label);
  for (const auto& kv : attrs) out += " " + Quote(kv.first) + "=" + Quote(kv.second);
  return out + "]";
}

bool LooksLikeWeight(const std::string& name) {
  static const char* const kSuffixes[] = {"_weight",      "_bias",        "_beta",
                                          "_gamma",       "_moving_var",  "_moving_mean",
                                          "_running_var", "_running_mean"};
  for (const char* suffix : kSuffixes) {
    const std::string s(suffix);
    if (name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0)
      return true;
  }
  return false;
}

std::string AttrOr(const Node& node, const std::string& key, const std::string& fallback) {
  auto it = node.attrs.dict.find(key);
  return it == node.attrs.dict.end() ? fallback : it->second;
}

}  // namespace

std::string PrintSummary(const Symbol& symbol, const std::optional<InputShapes>& shapes,
                         const SummaryLayout& layout) {
  HN_CHECK(!symbol.outputs.empty(), kInvalidArgument) << "print_summary: the symbol is empty";
  return SummaryPrinter(symbol, shapes, layout).Print();
}

std::string PlotNetwork(const Symbol& symbol, const PlotOptions& options) {
  HN_CHECK(!symbol.outputs.empty(), kInvalidArgument) << "plot_network: the symbol is empty";
  IndexedGraph graph(symbol.outputs);
  std::map<std::string, Shape> shape_dict;
  if (options.shapes) shape_dict = ShapeDict(graph, *options.shapes);
  std::map<std::string, DType> type_dict;
  if (options.dtypes) type_dict = TypeDict(graph, *options.dtypes);

  static const char* const kColors[] = {"#8dd3c7", "#fb8072", "#ffffb3", "#bebada",
                                        "#80b1d3", "#fdb462", "#b3de69", "#fccde5"};
  std::map<std::string, std::string> defaults = {{"shape", "box"},
                                                 {"fixedsize", "true"},
                                                 {"width", "1.3"},
                                                 {"height", "0.8034"},
                                                 {"style", "filled"}};
  for (const auto& kv : options.node_attrs) defaults[kv.first] = kv.second;

  std::string dot = "digraph " + (options.title.empty() ? "" : Quote(options.title) + " ") + "{";
  std::set<std::string> hidden;
  for (size_t nid = 0; nid < graph.num_nodes(); ++nid) {
    const Node& node = *graph[nid].node;
    std::map<std::string, std::string> attr = defaults;
    std::string label = node.name();
    const std::string op = node.IsVariable() ? "null" : node.attrs.op->name;
    if (node.IsVariable()) {
      if (LooksLikeWeight(node.name())) {
        // Shown weights are not drawn as nodes: Graphviz draws them as plain ovals.
        if (options.hide_weights) hidden.insert(node.name());
        continue;
      }
      attr["shape"] = "oval";
      attr["fillcolor"] = kColors[0];
    } else if (op == "Convolution") {
      label = "Convolution\n" + DigitRuns(Attr(node, "kernel")) + "/" +
              (node.attrs.dict.count("stride") ? DigitRuns(Attr(node, "stride")) : "1") + ", " +
              Attr(node, "num_filter");
      attr["fillcolor"] = kColors[1];
    } else if (op == "FullyConnected") {
      label = "FullyConnected\n" + Attr(node, "num_hidden");
      attr["fillcolor"] = kColors[1];
    } else if (op == "BatchNorm") {
      attr["fillcolor"] = kColors[3];
    } else if (op == "Activation") {
      label = "Activation\n" + Attr(node, "act_type");
      attr["fillcolor"] = kColors[2];
    } else if (op == "LeakyReLU") {
      label = "LeakyReLU\n" + AttrOr(node, "act_type", "Leaky");
      attr["fillcolor"] = kColors[2];
    } else if (op == "Pooling") {
      label = "Pooling\n" + Attr(node, "pool_type") + ", " +
              (node.attrs.dict.count("kernel") ? DigitRuns(Attr(node, "kernel")) : "[]") + "/" +
              (node.attrs.dict.count("stride") ? DigitRuns(Attr(node, "stride")) : "1");
      attr["fillcolor"] = kColors[4];
    } else if (op == "Concat" || op == "Flatten" || op == "Reshape") {
      attr["fillcolor"] = kColors[5];
    } else if (op == "Softmax") {
      attr["fillcolor"] = kColors[6];
    } else {
      attr["fillcolor"] = kColors[7];
      if (op == "Custom") label = Attr(node, "op_type");
    }
    dot += "\n\t" + Quote(node.name()) + AttrList(label, attr);
  }

  for (size_t nid = 0; nid < graph.num_nodes(); ++nid) {
    const Node& node = *graph[nid].node;
    if (node.IsVariable()) continue;
    auto inputs = graph[nid].inputs;
    if (node.attrs.op->name == "_contrib_BilinearResize2D") inputs.resize(1);
    for (const auto& input : inputs) {
      const Node& from = *graph[input.node_id].node;
      if (hidden.count(from.name())) continue;
      // MXNet labels an edge with the (last, for num_outputs) output of the input node.
      std::string key = from.name();
      if (!from.IsVariable()) {
        key += "_output";
        auto n = from.attrs.dict.find("num_outputs");
        if (n != from.attrs.dict.end()) key += std::to_string(std::stoll(n->second) - 1);
      }
      std::string label;
      if (options.shapes) {
        auto it = shape_dict.find(key);
        HN_CHECK(it != shape_dict.end(), kShapeError)
            << "plot_network: no shape for '" << key << "' (read by node '" << node.name() << "')";
        label = WithoutBatch(it->second);
      }
      if (options.dtypes) {
        auto it = type_dict.find(key);
        HN_CHECK(it != type_dict.end(), kTypeError)
            << "plot_network: no dtype for '" << key << "' (read by node '" << node.name() << "')";
        label += "(" + std::string(DTypeName(it->second)) + ")";
      }
      dot += "\n\t" + QuoteEdge(node.name()) + " -> " + QuoteEdge(from.name()) +
             AttrList(label, {{"arrowtail", "open"}, {"dir", "back"}});
    }
  }
  return dot + "\n}";
}

Symbol AsRunGraph(const Symbol& symbol, const InputShapes& shapes) {
  size_t num_fused = 0;
  Symbol fused = internal::FuseOps(symbol, &num_fused);
  IndexedGraph graph(fused.outputs);
  std::vector<Shape> entry_shapes(graph.num_entries());
  for (uint32_t nid : graph.input_nodes()) {
    auto it = shapes.find(graph[nid].node->name());
    if (it != shapes.end()) entry_shapes[graph.entry_id(nid, 0)] = it->second;
  }
  // The shapes of the graph as written name what is missing; the fused graph then has them all.
  symbol.InferShape(shapes, /*partial=*/false);
  internal::InferShapes(graph, &entry_shapes);
  size_t num_relayouts = 0;
  return internal::LayOutChannelLast(fused, entry_shapes, &num_relayouts);
}

}  // namespace viz
}  // namespace hybridnet
