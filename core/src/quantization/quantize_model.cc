// The quantizer (hybridnet/quantization.h): the graph rewrite into MXNet 1.9.1's oneDNN int8
// form, the calibration run over the fp32 graph and the quantized params.
//
// The rewrite works on the symbol JSON (as SaveJSON writes it, nodes in IndexedGraph order), not
// on Nodes: the int8 ops it writes are MXNet's names and attributes, whichever of them this build
// implements, and a file is what MXNet and hybridnet both read.
#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "hybridnet/executor.h"
#include "hybridnet/io/json.h"
#include "hybridnet/quantization.h"
#include "ops/quantization/quantization.h"
#include "ops/quantization/quantized_conv.h"
#include "quantization/calibration.h"

namespace hybridnet {

namespace {

using Json = nlohmann::ordered_json;
using internal::LayerStatistics;
using CalibTable = std::map<std::string, std::pair<float, float>>;

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

void CheckChoice(const std::string& key, const std::string& value,
                 const std::vector<std::string>& choices) {
  if (std::find(choices.begin(), choices.end(), value) != choices.end()) return;
  std::string accepted;
  for (const auto& c : choices) accepted += (accepted.empty() ? "" : ", ") + c;
  HN_THROW(kInvalidArgument) << "quantize: " << key << " '" << value << "' is not one of "
                             << accepted;
}

int64_t ParseCount(const std::string& key, const std::string& value, int64_t min) {
  size_t used = 0;
  int64_t n = min - 1;
  try {
    n = std::stoll(value, &used);
  } catch (const std::exception&) {
  }
  HN_CHECK(used == value.size() && n >= min, kInvalidArgument)
      << "quantize: " << key << " needs a whole number >= " << min << ", got '" << value << "'";
  return n;
}

// A node output of the fp32 graph: (node index, output index).
using Entry = std::pair<size_t, uint32_t>;

enum class GroupKind { kConvolution, kFullyConnected, kPooling, kFlatten, kRelu };

// fp32 nodes computed by one int8 node; `members` in graph order, the first reads the data.
struct Group {
  GroupKind kind;
  std::vector<size_t> members;
  bool with_bn = false;
  bool with_act = false;
  bool float_output = false;  // FullyConnected only: dequantizes itself (all readers are fp32)
};

// The number of dimensions in a tuple attribute: "(3, 3)" -> 2.
size_t TupleLength(const std::string& text) {
  size_t count = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool digit = std::isdigit(static_cast<unsigned char>(text[i])) != 0;
    if (digit && (i == 0 || !std::isdigit(static_cast<unsigned char>(text[i - 1])))) ++count;
  }
  return count;
}

class Rewriter {
 public:
  Rewriter(const Symbol& symbol, const NDArrayList& params, const QuantizeOptions& options)
      : options_(options), graph_(symbol.outputs), source_(Json::parse(SaveJSON(symbol))) {
    const Json& nodes = source_["nodes"];
    HN_CHECK(nodes.size() == graph_.num_nodes(), kInternal) << "quantize: node order differs";
    consumers_.resize(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) {
      for (const auto& in : nodes[i]["inputs"]) consumers_[in[0].get<size_t>()].push_back(i);
    }
    for (const auto& head : source_["heads"]) is_head_.insert(head[0].get<size_t>());
    for (size_t i = 0; i < params.arrays.size(); ++i) {
      const std::string& name = params.names.at(i);
      size_t colon = name.find(':');
      std::string plain = colon == std::string::npos ? name : name.substr(colon + 1);
      params_[plain] = params.arrays[i];
      param_prefix_[plain] = colon == std::string::npos ? "arg:" : name.substr(0, colon + 1);
    }
    CheckExclusions();
    PlanGroups();
  }

  // The quantized graph as JSON; records in `wanted` the fp32 outputs whose ranges it needs.
  // `table` nullptr: only find what is wanted.
  Json Emit(const CalibTable* table, std::set<Entry>* wanted);

  // The params of the emitted graph (call after Emit with a table).
  NDArrayList Params() const { return out_params_; }
  // Int8 weights for the convolutions Emit writes, by the quantized node's name: those nodes
  // read them (int8_weights=true) instead of their float weights and BatchNorm.
  void SetInt8Weights(std::map<std::string, internal::SgConvInt8Weights> weights) {
    int8_weights_ = std::move(weights);
  }
  std::vector<std::string> QuantizedNodes() const;
  // The output name MXNet's calibration keys a value by ("conv0_output", "data").
  std::string EntryName(const Entry& e) const {
    Symbol s;
    s.outputs.push_back(NodeEntry{graph_[e.first].owner, e.second, 0});
    return s.ListOutputs().at(0);
  }
  NodeEntry GraphEntry(const Entry& e) const {
    return NodeEntry{graph_[e.first].owner, e.second, 0};
  }
  const Json& node(size_t i) const { return source_["nodes"][i]; }

 private:
  std::string Op(size_t i) const { return node(i)["op"].get<std::string>(); }
  std::string Name(size_t i) const { return node(i)["name"].get<std::string>(); }
  std::string Attr(size_t i, const std::string& key, const std::string& fallback = "") const {
    const Json& n = node(i);
    if (!n.contains("attrs") || !n["attrs"].contains(key)) return fallback;
    return n["attrs"][key].get<std::string>();
  }
  Entry Input(size_t i, size_t k) const {
    const Json& in = node(i)["inputs"][k];
    return {in[0].get<size_t>(), in[1].get<uint32_t>()};
  }
  bool Excluded(size_t i) const;
  void CheckExclusions() const;
  // The one node reading output 0 of `i` (and nothing else of it), if there is exactly one.
  std::optional<size_t> SoleReader(size_t i) const;
  std::optional<Group> GroupAt(size_t i, std::vector<size_t>* kept) const;
  void PlanGroups();
  void ApplySmartMode();
  bool IsParam(const Entry& e) const {
    return Op(e.first) == "null" && params_.count(Name(e.first)) > 0;
  }

  // Emission helpers: each returns the new graph's [node, index] of a value.
  Json Fp32Value(const Entry& e);
  std::array<Json, 3> Int8Value(const Entry& e);
  size_t Add(Json node, uint32_t num_outputs);
  size_t Variable(const std::string& name);
  size_t NewParam(const std::string& name, const NDArray& value);
  void EmitGroup(const Group& g);
  Json Subgraph(const Group& g, std::vector<Entry>* inputs) const;
  std::pair<float, float> Range(const Entry& e);
  void QuantizeParam(const std::string& name);

  const QuantizeOptions& options_;
  IndexedGraph graph_;
  Json source_;
  std::vector<std::vector<size_t>> consumers_;
  std::set<size_t> is_head_;
  std::map<std::string, NDArray> params_;
  std::map<std::string, std::string> param_prefix_;
  std::map<std::string, internal::SgConvInt8Weights> int8_weights_;
  std::vector<Group> groups_;
  std::map<size_t, size_t> group_of_;  // member node -> index in groups_

  // Emission state.
  const CalibTable* table_ = nullptr;
  std::set<Entry>* wanted_ = nullptr;
  Json nodes_out_;
  std::vector<uint32_t> outputs_out_;
  std::map<Entry, Json> fp32_at_;
  std::map<size_t, size_t> int8_at_;        // group index -> its int8 node
  std::map<Entry, size_t> quantize_at_;     // fp32 value -> its quantize_v2 node
  std::map<size_t, size_t> dequantize_at_;  // group index -> its dequantize node
  std::map<std::string, size_t> variable_at_;
  std::map<std::string, int> fused_count_;
  NDArrayList out_params_;
};

bool Rewriter::Excluded(size_t i) const {
  const std::string name = Name(i), op = Op(i);
  const auto& o = options_;
  if (std::find(o.exclude_layers.begin(), o.exclude_layers.end(), name) != o.exclude_layers.end())
    return true;
  if (std::find(o.exclude_operators.begin(), o.exclude_operators.end(), op) !=
      o.exclude_operators.end())
    return true;
  for (const auto& part : o.exclude_layers_match) {
    if (name.find(part) != std::string::npos) return true;
  }
  return false;
}

void Rewriter::CheckExclusions() const {
  std::set<std::string> names;
  for (const auto& n : source_["nodes"]) names.insert(n["name"].get<std::string>());
  for (const auto& name : options_.exclude_layers) {
    HN_CHECK(names.count(name), kInvalidArgument)
        << "quantize: exclude_layers names '" << name << "', which is no node of the graph";
  }
  for (const auto& part : options_.exclude_layers_match) {
    bool found = std::any_of(names.begin(), names.end(), [&](const std::string& n) {
      return n.find(part) != std::string::npos;
    });
    HN_CHECK(found, kInvalidArgument)
        << "quantize: exclude_layers_match '" << part << "' matches no node of the graph";
  }
  for (const auto& op : options_.exclude_operators) {
    HN_CHECK(OpRegistry::Global().Find(op) != nullptr, kInvalidArgument)
        << "quantize: exclude_operators names '" << op << "', which is no operator";
  }
}

std::optional<size_t> Rewriter::SoleReader(size_t i) const {
  if (is_head_.count(i) || consumers_[i].size() != 1) return std::nullopt;
  size_t reader = consumers_[i][0];
  Entry first = Input(reader, 0);
  if (first != Entry{i, 0}) return std::nullopt;
  return reader;
}

// The group node `i` starts, if any. Convolution [+ BatchNorm] [+ relu] and FullyConnected
// [+ relu] are chained first and excluded as a whole when any of their nodes is, as MXNet fuses
// before it excludes: an excluded convolution keeps its relu fp32 too (`kept` gets the chain).
std::optional<Group> Rewriter::GroupAt(size_t i, std::vector<size_t>* kept) const {
  const std::string op = Op(i);
  if (op == "null") return std::nullopt;
  auto is_relu = [&](size_t j) { return Op(j) == "Activation" && Attr(j, "act_type") == "relu"; };
  auto params_ok = [&](size_t j) {
    for (size_t k = 1; k < node(j)["inputs"].size(); ++k) {
      if (!IsParam(Input(j, k))) return false;
    }
    return true;
  };
  Group g{GroupKind::kRelu, {i}};
  if (op == "Convolution" || op == "FullyConnected") {
    const bool conv = op == "Convolution";
    if (conv && (TupleLength(Attr(i, "kernel")) != 2 || Attr(i, "layout", "NCHW") != "NCHW")) {
      return std::nullopt;
    }
    g.kind = conv ? GroupKind::kConvolution : GroupKind::kFullyConnected;
    std::optional<size_t> next = SoleReader(i);
    if (conv && next && Op(*next) == "BatchNorm" && params_ok(*next) &&
        Attr(*next, "axis", "1") == "1") {
      g.members.push_back(*next);
      g.with_bn = true;
      next = SoleReader(*next);
    }
    if (next && is_relu(*next)) {
      g.members.push_back(*next);
      g.with_act = true;
    }
    const bool excluded =
        std::any_of(g.members.begin(), g.members.end(), [&](size_t m) { return Excluded(m); });
    if (excluded || !params_ok(i)) {
      *kept = g.members;
      return std::nullopt;
    }
    return g;
  }
  if (Excluded(i)) return std::nullopt;
  if (op == "Pooling") {
    const std::string type = Attr(i, "pool_type", "max");
    bool two_d = Attr(i, "global_pool", "False") == "True" || TupleLength(Attr(i, "kernel")) == 2;
    if ((type != "max" && type != "avg") || !two_d || Attr(i, "layout", "NCHW") != "NCHW") {
      return std::nullopt;
    }
    g.kind = GroupKind::kPooling;
    return g;
  }
  if (op == "Flatten" || op == "flatten") {
    g.kind = GroupKind::kFlatten;
    return g;
  }
  if (is_relu(i)) return g;
  return std::nullopt;
}

void Rewriter::PlanGroups() {
  std::set<size_t> kept;
  for (size_t i = 0; i < source_["nodes"].size(); ++i) {
    if (group_of_.count(i) || kept.count(i)) continue;
    std::vector<size_t> chain;
    std::optional<Group> g = GroupAt(i, &chain);
    kept.insert(chain.begin(), chain.end());
    if (!g) continue;
    for (size_t m : g->members) group_of_[m] = groups_.size();
    groups_.push_back(*g);
  }
  if (options_.quantize_mode == "smart") ApplySmartMode();
  // A FullyConnected that only fp32 nodes (or the outputs) read gives float itself.
  for (Group& g : groups_) {
    if (g.kind != GroupKind::kFullyConnected) continue;
    size_t last = g.members.back();
    bool int8_reader = std::any_of(consumers_[last].begin(), consumers_[last].end(),
                                   [&](size_t r) { return group_of_.count(r) > 0; });
    g.float_output = !int8_reader;
  }
}

// MXNet's "smart" mode: Pooling, Flatten and relu stay int8 only between a convolution or
// FullyConnected before them and one after them (through other such ops).
void Rewriter::ApplySmartMode() {
  auto is_must = [&](const Group& g) {
    return g.kind == GroupKind::kConvolution || g.kind == GroupKind::kFullyConnected;
  };
  std::vector<bool> from_must(groups_.size(), false), to_must(groups_.size(), false);
  for (size_t gi = 0; gi < groups_.size(); ++gi) {  // graph order: producers first
    const Group& g = groups_[gi];
    if (is_must(g)) continue;
    Entry data = Input(g.members[0], 0);
    auto it = group_of_.find(data.first);
    if (it != group_of_.end() && (is_must(groups_[it->second]) || from_must[it->second]))
      from_must[gi] = true;
  }
  for (size_t gi = groups_.size(); gi-- > 0;) {  // readers first
    const Group& g = groups_[gi];
    if (is_must(g)) continue;
    for (size_t r : consumers_[g.members.back()]) {
      auto it = group_of_.find(r);
      if (it != group_of_.end() && (is_must(groups_[it->second]) || to_must[it->second]))
        to_must[gi] = true;
    }
  }
  std::vector<Group> kept;
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    if (is_must(groups_[gi]) || (from_must[gi] && to_must[gi])) kept.push_back(groups_[gi]);
  }
  groups_ = std::move(kept);
  group_of_.clear();
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    for (size_t m : groups_[gi].members) group_of_[m] = gi;
  }
}

std::vector<std::string> Rewriter::QuantizedNodes() const {
  std::vector<std::string> names;
  for (const Group& g : groups_) {
    for (size_t m : g.members) names.push_back(Name(m));
  }
  return names;
}

size_t Rewriter::Add(Json node, uint32_t num_outputs) {
  if (!node.contains("inputs")) node["inputs"] = Json::array();
  nodes_out_.push_back(std::move(node));
  outputs_out_.push_back(num_outputs);
  return nodes_out_.size() - 1;
}

size_t Rewriter::Variable(const std::string& name) {
  auto it = variable_at_.find(name);
  if (it != variable_at_.end()) return it->second;
  size_t id = Add(Json{{"op", "null"}, {"name", name}, {"inputs", Json::array()}}, 1);
  variable_at_[name] = id;
  if (table_ != nullptr && params_.count(name)) {
    out_params_.names.push_back(param_prefix_.at(name) + name);
    out_params_.arrays.push_back(params_.at(name));
  }
  return id;
}

// A variable for a param the quantizer makes, stored with the given value.
size_t Rewriter::NewParam(const std::string& name, const NDArray& value) {
  HN_CHECK(params_.count(name) == 0, kInvalidArgument)
      << "quantize: the model already has a param named '" << name
      << "', the name of a param int8_weights adds";
  params_[name] = value;
  param_prefix_[name] = "arg:";
  return Variable(name);
}

std::pair<float, float> Rewriter::Range(const Entry& e) {
  wanted_->insert(e);
  if (table_ == nullptr) return {0.0f, 0.0f};
  return table_->at(EntryName(e));
}

Json Rewriter::Fp32Value(const Entry& e) {
  auto g = group_of_.find(e.first);
  if (g != group_of_.end()) {
    const Group& group = groups_[g->second];
    size_t int8 = int8_at_.at(g->second);
    if (group.float_output) return Json::array({int8, 0, 0});
    auto d = dequantize_at_.find(g->second);
    if (d == dequantize_at_.end()) {
      Json node = {{"op", "_contrib_dequantize"},
                   {"name", Name(group.members.back()) + "_dequantize"},
                   {"inputs", Json::array({Json::array({int8, 0, 0}), Json::array({int8, 1, 0}),
                                           Json::array({int8, 2, 0})})}};
      d = dequantize_at_.emplace(g->second, Add(std::move(node), 1)).first;
    }
    return Json::array({d->second, 0, 0});
  }
  if (Op(e.first) == "null") return Json::array({Variable(Name(e.first)), 0, 0});
  return fp32_at_.at(e);
}

std::array<Json, 3> Rewriter::Int8Value(const Entry& e) {
  auto g = group_of_.find(e.first);
  if (g != group_of_.end() && !groups_[g->second].float_output) {
    size_t int8 = int8_at_.at(g->second);
    return {Json::array({int8, 0, 0}), Json::array({int8, 1, 0}), Json::array({int8, 2, 0})};
  }
  auto q = quantize_at_.find(e);
  if (q == quantize_at_.end()) {
    Json value = Fp32Value(e);
    std::pair<float, float> range = Range(e);
    std::string name = Name(e.first);
    if (Op(e.first) != "null") name += "_" + std::to_string(e.second);
    Json node = {{"op", "_contrib_quantize_v2"},
                 {"name", name + "_quantize"},
                 {"attrs",
                  {{"max_calib_range", std::to_string(range.second)},
                   {"min_calib_range", std::to_string(range.first)},
                   {"out_type", options_.quantized_dtype}}},
                 {"inputs", Json::array({value})}};
    q = quantize_at_.emplace(e, Add(std::move(node), 3)).first;
  }
  size_t id = q->second;
  return {Json::array({id, 0, 0}), Json::array({id, 1, 0}), Json::array({id, 2, 0})};
}

// MXNet's offline weight quantization (_quantize_params): int8 over the tensor's own symmetric
// range, with that range as two one-element arguments.
void Rewriter::QuantizeParam(const std::string& name) {
  if (table_ == nullptr) return;
  NDArray fp32 = params_.at(name).AsType(DType::kFloat32);
  const float* x = fp32.data<float>();
  const int64_t n = fp32.size();
  float lo = n > 0 ? x[0] : 0.0f, hi = lo;
  for (int64_t i = 1; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  NDArray q(fp32.shape(), DType::kInt8);
  int8_t* out = q.data<int8_t>();
  const float reach = internal::MaxAbs(lo, hi);
  for (int64_t i = 0; i < n; ++i) {
    out[i] = reach == 0.0f ? 0 : internal::FloatToQuantized<int8_t>(x[i], lo, hi);
  }
  const std::string prefix = param_prefix_.at(name);
  out_params_.names.push_back(prefix + name + "_quantize");
  out_params_.arrays.push_back(q);
  out_params_.names.push_back(prefix + name + "_quantize_min");
  out_params_.arrays.push_back(NDArray::FromVector(Shape{1}, {-reach}));
  out_params_.names.push_back(prefix + name + "_quantize_max");
  out_params_.arrays.push_back(NDArray::FromVector(Shape{1}, {reach}));
}

// The fp32 nodes of a fused group as the `subgraphs` entry of its _sg_mkldnn_* node: one variable
// per outside input, named after the value it stands for, as MXNet names them. `inputs` receives
// those outside values in order.
Json Rewriter::Subgraph(const Group& g, std::vector<Entry>* inputs) const {
  Json nodes = Json::array(), arg_nodes = Json::array(), row_ptr = Json::array({0});
  std::map<size_t, size_t> inner;  // fp32 node -> subgraph node
  for (size_t m : g.members) {
    Json copy = node(m);
    Json mapped = Json::array();
    for (size_t k = 0; k < copy["inputs"].size(); ++k) {
      Entry e = Input(m, k);
      auto it = inner.find(e.first);
      if (it != inner.end()) {
        mapped.push_back(Json::array({it->second, e.second, 0}));
        continue;
      }
      inputs->push_back(e);
      arg_nodes.push_back(nodes.size());
      nodes.push_back(
          Json{{"op", "null"}, {"name", EntryName(e) + "0"}, {"inputs", Json::array()}});
      row_ptr.push_back(row_ptr.back().get<size_t>() + 1);
      mapped.push_back(Json::array({nodes.size() - 1, 0, 0}));
    }
    copy["inputs"] = mapped;
    inner[m] = nodes.size();
    nodes.push_back(copy);
    const Json& rows = source_["node_row_ptr"];
    row_ptr.push_back(row_ptr.back().get<size_t>() + rows[m + 1].get<size_t>() -
                      rows[m].get<size_t>());
  }
  return Json{{"nodes", nodes},
              {"arg_nodes", arg_nodes},
              {"node_row_ptr", row_ptr},
              {"heads", Json::array({Json::array({inner.at(g.members.back()), 0, 0})})}};
}

void Rewriter::EmitGroup(const Group& g) {
  const size_t first = g.members[0], last = g.members.back();
  const size_t group_index = group_of_.at(first);
  std::array<Json, 3> data = Int8Value(Input(first, 0));
  Json inputs = Json::array({data[0]});
  Json attrs = Json::object();
  Json node;
  uint32_t num_outputs = 3;
  if (g.kind == GroupKind::kConvolution || g.kind == GroupKind::kFullyConnected) {
    const bool conv = g.kind == GroupKind::kConvolution;
    std::vector<Entry> outside;
    Json subgraph = Subgraph(g, &outside);
    std::string base = conv ? "sg_mkldnn_conv" : "sg_mkldnn_fully_connected";
    std::string name = base;
    if (g.with_bn) name += "_bn";
    if (g.with_act) name += conv ? "_act" : "_eltwise";
    name = "quantized_" + name + "_" + std::to_string(fused_count_[base]++);
    Json ranges = Json::array();
    const auto int8 = conv ? int8_weights_.find(name) : int8_weights_.end();
    if (int8 != int8_weights_.end()) {
      // The quantized weights, the folded bias and the scales, named after the convolution.
      const std::string prefix = Name(first);
      const internal::SgConvInt8Weights& w = int8->second;
      inputs.push_back(Json::array({NewParam(prefix + "_weight_int8", w.weight), 0, 0}));
      if (!w.bias.is_none()) {
        inputs.push_back(Json::array({NewParam(prefix + "_bias_folded", w.bias), 0, 0}));
      }
      inputs.push_back(Json::array({NewParam(prefix + "_weight_scale", w.weight_scale), 0, 0}));
      attrs["int8_weights"] = "true";
      outside.resize(1);  // the float params stay out of the graph
    }
    for (size_t k = 1; k < outside.size(); ++k) {
      const std::string param = Name(outside[k].first);
      if (conv) {
        inputs.push_back(Fp32Value(outside[k]));
        continue;
      }
      // FullyConnected reads int8 weight and bias, their ranges after the data's.
      inputs.push_back(Json::array({Variable(param + "_quantize"), 0, 0}));
      ranges.push_back(Json::array({Variable(param + "_quantize_min"), 0, 0}));
      ranges.push_back(Json::array({Variable(param + "_quantize_max"), 0, 0}));
      QuantizeParam(param);
    }
    inputs.push_back(data[1]);
    inputs.push_back(data[2]);
    for (const auto& r : ranges) inputs.push_back(r);
    if (g.float_output) {
      attrs["enable_float_output"] = "True";
      num_outputs = 1;
    } else {
      std::pair<float, float> range = Range({last, 0});
      attrs["max_calib_range"] = std::to_string(range.second);
      attrs["min_calib_range"] = std::to_string(range.first);
    }
    attrs["quantized"] = conv ? "true" : "True";
    if (g.with_act) attrs[conv ? "with_act" : "with_eltwise"] = conv ? "true" : "True";
    if (g.with_bn) attrs["with_bn"] = "true";
    node = {{"op", conv ? "_sg_mkldnn_conv" : "_sg_mkldnn_fully_connected"},
            {"name", name},
            {"attrs", attrs},
            {"inputs", inputs},
            {"subgraphs", Json::array({subgraph})}};
  } else {
    static const std::map<GroupKind, std::string> kOps = {
        {GroupKind::kPooling, "_contrib_quantized_pooling"},
        {GroupKind::kFlatten, "_contrib_quantized_flatten"},
        {GroupKind::kRelu, "_contrib_quantized_act"}};
    inputs.push_back(data[1]);
    inputs.push_back(data[2]);
    node = {{"op", kOps.at(g.kind)}, {"name", "quantized_" + Name(first)}};
    if (this->node(first).contains("attrs")) node["attrs"] = this->node(first)["attrs"];
    node["inputs"] = inputs;
  }
  int8_at_[group_index] = Add(std::move(node), num_outputs);
}

Json Rewriter::Emit(const CalibTable* table, std::set<Entry>* wanted) {
  table_ = table;
  wanted_ = wanted;
  nodes_out_ = Json::array();
  outputs_out_.clear();
  fp32_at_.clear();
  int8_at_.clear();
  quantize_at_.clear();
  dequantize_at_.clear();
  variable_at_.clear();
  fused_count_.clear();
  out_params_ = NDArrayList();
  const Json& rows = source_["node_row_ptr"];
  for (size_t i = 0; i < source_["nodes"].size(); ++i) {
    if (Op(i) == "null") continue;  // variables are written where first read
    auto g = group_of_.find(i);
    if (g != group_of_.end()) {
      if (groups_[g->second].members.back() == i) EmitGroup(groups_[g->second]);
      continue;
    }
    Json copy = node(i);
    Json inputs = Json::array();
    for (size_t k = 0; k < copy["inputs"].size(); ++k) {
      Json value = Fp32Value(Input(i, k));
      value[2] = copy["inputs"][k][2];  // keep a variable's version (BatchNorm's aux states)
      inputs.push_back(value);
    }
    copy["inputs"] = inputs;
    const uint32_t num_outputs = rows[i + 1].get<uint32_t>() - rows[i].get<uint32_t>();
    size_t id = Add(std::move(copy), num_outputs);
    for (uint32_t k = 0; k < num_outputs; ++k) fp32_at_[{i, k}] = Json::array({id, k, 0});
  }
  Json heads = Json::array();
  for (const auto& head : source_["heads"]) {
    heads.push_back(Fp32Value({head[0].get<size_t>(), head[1].get<uint32_t>()}));
  }
  Json arg_nodes = Json::array(), row_ptr = Json::array({0});
  for (size_t i = 0; i < nodes_out_.size(); ++i) {
    if (nodes_out_[i]["op"] == "null") arg_nodes.push_back(i);
    row_ptr.push_back(row_ptr.back().get<size_t>() + outputs_out_[i]);
  }
  Json graph_attrs = {{"mxnet_version", Json::array({"int", kMXNetVersion})}};
  if (!int8_weights_.empty()) graph_attrs[kInt8WeightsGraphAttr] = Json::array({"str", "1"});
  return Json{{"nodes", nodes_out_},
              {"arg_nodes", arg_nodes},
              {"node_row_ptr", row_ptr},
              {"heads", heads},
              {"attrs", graph_attrs}};
}

// The int8 weights of every quantized convolution of `graph_json` (float weights in `params`),
// by node name. The graph runs once, on the first calibration example, for what the weight
// scales depend on besides the weights: each convolution's data type and range.
std::map<std::string, internal::SgConvInt8Weights> ConvInt8Weights(const std::string& graph_json,
                                                                   const NDArrayList& params,
                                                                   const NDArray& calib_data,
                                                                   const QuantizeOptions& options) {
  const Symbol graph = LoadJSON(graph_json, "the quantized graph");
  const IndexedGraph indexed(graph.outputs);
  std::map<std::string, NDArray> values;
  for (size_t i = 0; i < params.arrays.size(); ++i) {
    const std::string& name = params.names[i];
    const size_t colon = name.find(':');
    values[colon == std::string::npos ? name : name.substr(colon + 1)] = params.arrays[i];
  }
  auto is_param = [&](const NodeEntry& e) {
    return e.node->IsVariable() && values.count(e.node->name()) > 0;
  };
  std::vector<const Node*> convs;
  Symbol heads;
  for (size_t i = 0; i < indexed.num_nodes(); ++i) {
    const Node* n = indexed[i].owner.get();
    if (n->IsVariable() || !internal::IsQuantizedSgConv(n->attrs)) continue;
    convs.push_back(n);
    for (const NodeEntry& e : n->inputs) {
      if (!is_param(e)) heads.outputs.push_back(e);
    }
  }
  std::map<std::string, internal::SgConvInt8Weights> weights;
  if (convs.empty()) return weights;
  GraphExecutor exec(heads, {options.data_name}, values);
  Shape shape = calib_data.shape();
  shape[0] = 1;
  const std::vector<NDArray> outputs =
      exec.Forward({NDArray::FromBuffer(shape, DType::kFloat32, calib_data.data<float>())});
  size_t next = 0;
  for (const Node* n : convs) {
    std::vector<NDArray> inputs;
    for (const NodeEntry& e : n->inputs) {
      inputs.push_back(is_param(e) ? values.at(e.node->name()) : outputs.at(next++));
    }
    weights[n->name()] = internal::QuantizeSgConvWeights(n->attrs, inputs);
  }
  return weights;
}

// Runs the fp32 graph over the calibration batches and folds every wanted output into its
// statistics; the data variable itself is read from the batch.
CalibTable Calibrate(const Rewriter& rewriter, const NDArrayList& params, const NDArray& data,
                     const std::set<Entry>& wanted, const QuantizeOptions& options) {
  std::vector<Entry> computed;
  Symbol heads;
  for (const Entry& e : wanted) {
    if (rewriter.node(e.first)["op"] == "null") continue;
    computed.push_back(e);
    heads.outputs.push_back(rewriter.GraphEntry(e));
  }
  std::map<std::string, NDArray> values;
  for (size_t i = 0; i < params.arrays.size(); ++i) {
    const std::string& name = params.names[i];
    size_t colon = name.find(':');
    values[colon == std::string::npos ? name : name.substr(colon + 1)] = params.arrays[i];
  }
  const bool entropy = options.calib_mode == "entropy";
  std::map<Entry, LayerStatistics> stats;
  const int64_t total = options.num_calib_examples > 0
                            ? std::min(options.num_calib_examples, data.shape()[0])
                            : data.shape()[0];
  const int64_t row = data.shape()[0] > 0 ? data.size() / data.shape()[0] : 0;
  std::optional<GraphExecutor> exec;
  if (!computed.empty()) exec.emplace(heads, std::vector<std::string>{options.data_name}, values);
  for (int64_t start = 0; start < total; start += options.batch_size) {
    const int64_t rows = std::min(options.batch_size, total - start);
    Shape shape = data.shape();
    shape[0] = rows;
    NDArray batch = NDArray::FromBuffer(shape, DType::kFloat32, data.data<float>() + start * row);
    std::vector<NDArray> outputs;
    if (exec) {
      try {
        outputs = exec->Forward({batch});
      } catch (const Error& e) {
        HN_THROW(kShapeError) << "quantize: the calibration data of shape "
                              << data.shape().ToString() << " does not fit input '"
                              << options.data_name << "': " << e.what();
      }
    }
    size_t next = 0;
    for (const Entry& e : wanted) {
      NDArray value = rewriter.node(e.first)["op"] == "null" ? batch : outputs.at(next++);
      NDArray fp32 = value.dtype() == DType::kFloat32 ? value : value.AsType(DType::kFloat32);
      stats[e].Add(fp32.data<float>(), static_cast<size_t>(fp32.size()), entropy);
    }
  }
  CalibTable table;
  const bool may_be_unsigned =
      options.quantized_dtype == "auto" || options.quantized_dtype == "uint8";
  for (const auto& [e, s] : stats) {
    std::pair<float, float> range{s.min(), s.max()};
    if (entropy) {
      // MXNet's _get_optimal_thresholds: twice the levels for a non-negative unsigned output.
      const bool unsigned_range = s.min() >= 0 && may_be_unsigned;
      std::vector<float> hist(s.counts().begin(), s.counts().end());
      float th =
          internal::OptimalEntropyThreshold(hist, s.edges(), unsigned_range ? 511 : 255).threshold;
      range = unsigned_range ? std::make_pair(0.0f, th) : std::make_pair(-th, th);
    }
    table[rewriter.EntryName(e)] = range;
  }
  return table;
}

}  // namespace

QuantizeOptions ParseQuantizeOptions(const std::map<std::string, std::string>& options) {
  QuantizeOptions o;
  for (const auto& [key, value] : options) {
    if (key == "quantized_dtype") {
      CheckChoice(key, value, {"auto", "int8", "uint8"});
      o.quantized_dtype = value;
    } else if (key == "quantize_mode") {
      CheckChoice(key, value, {"full", "smart"});
      o.quantize_mode = value;
    } else if (key == "quantize_granularity") {
      CheckChoice(key, value, {"tensor-wise"});
      o.quantize_granularity = value;
    } else if (key == "exclude_layers") {
      o.exclude_layers = SplitList(value);
    } else if (key == "exclude_layers_match") {
      o.exclude_layers_match = SplitList(value);
    } else if (key == "exclude_operators") {
      o.exclude_operators = SplitList(value);
    } else if (key == "calib_mode") {
      HN_CHECK(value != "none", kInvalidArgument)
          << "quantize: calib_mode 'none' (ranges found at run time) is not written; use "
             "naive or entropy";
      CheckChoice(key, value, {"naive", "entropy"});
      o.calib_mode = value;
    } else if (key == "num_calib_examples") {
      o.num_calib_examples = ParseCount(key, value, 1);
    } else if (key == "batch_size") {
      o.batch_size = ParseCount(key, value, 1);
    } else if (key == "data_name") {
      HN_CHECK(!value.empty(), kInvalidArgument) << "quantize: data_name is empty";
      o.data_name = value;
    } else if (key == "int8_weights") {
      CheckChoice(key, value, {"true", "false"});
      o.int8_weights = value == "true";
    } else {
      HN_THROW(kInvalidArgument)
          << "quantize: unknown option '" << key
          << "' (accepted: quantized_dtype, quantize_mode, quantize_granularity, exclude_layers, "
             "exclude_layers_match, exclude_operators, calib_mode, num_calib_examples, "
             "batch_size, data_name, int8_weights)";
    }
  }
  return o;
}

std::string QuantizedModel::Report() const {
  Json table = Json::object();
  for (const auto& [name, range] : calib_table) table[name] = {range.first, range.second};
  Json report = {{"quantized_nodes", quantized_nodes}, {"calib_table", table}};
  report["int8_weights"] = int8_weights;
  return report.dump();
}

void QuantizedModel::Save(const std::string& prefix, int epoch) const {
  char suffix[32];
  std::snprintf(suffix, sizeof(suffix), "-%04d.params", epoch);
  std::FILE* f = std::fopen((prefix + "-symbol.json").c_str(), "wb");
  HN_CHECK(f != nullptr, kIOError) << "quantize: cannot write '" << prefix << "-symbol.json'";
  const bool written =
      std::fwrite(symbol_json.data(), 1, symbol_json.size(), f) == symbol_json.size();
  const bool closed = std::fclose(f) == 0;
  HN_CHECK(written && closed, kIOError) << "quantize: cannot write '" << prefix << "-symbol.json'";
  SaveNDArrayList(prefix + suffix, params);
}

QuantizedModel QuantizeModel(const Symbol& symbol, const NDArrayList& params,
                             const NDArray& calib_data, const QuantizeOptions& options) {
  const std::vector<std::string> args = symbol.ListArguments();
  HN_CHECK(std::find(args.begin(), args.end(), options.data_name) != args.end(), kInvalidArgument)
      << "quantize: the model has no input '" << options.data_name << "' for the calibration data";
  HN_CHECK(calib_data.dtype() == DType::kFloat32 && calib_data.shape().ndim() >= 1 &&
               calib_data.shape()[0] > 0,
           kInvalidArgument)
      << "quantize: the calibration data must be float32 with a batch axis, got "
      << DTypeName(calib_data.dtype()) << " " << calib_data.shape().ToString();
  Rewriter rewriter(symbol, params, options);
  std::set<Entry> wanted;
  rewriter.Emit(nullptr, &wanted);
  QuantizedModel model;
  model.calib_table = Calibrate(rewriter, params, calib_data, wanted, options);
  std::set<Entry> used;
  model.symbol_json = rewriter.Emit(&model.calib_table, &used).dump(2);
  model.params = rewriter.Params();
  if (options.int8_weights) {
    auto weights = ConvInt8Weights(model.symbol_json, model.params, calib_data, options);
    model.int8_weights = !weights.empty();
    rewriter.SetInt8Weights(std::move(weights));
    model.symbol_json = rewriter.Emit(&model.calib_table, &used).dump(2);
    model.params = rewriter.Params();
  }
  model.quantized_nodes = rewriter.QuantizedNodes();
  return model;
}

}  // namespace hybridnet
