#include "hybridnet/gluon/symbol_block.h"

#include <algorithm>
#include <map>

#include "graph/naming.h"
#include "hybridnet/imperative.h"
#include "hybridnet/io/params.h"
#include "pass/passes.h"

namespace hybridnet {
namespace gluon {

SymbolBlock::SymbolBlock(const Symbol& outputs, const std::vector<std::string>& input_names)
    : HybridBlock("symbolblock"), symbol_(outputs), input_names_(input_names) {
  std::vector<std::string> inputs = symbol_.ListInputs();
  for (const auto& n : input_names_) {
    HN_CHECK(std::find(inputs.begin(), inputs.end(), n) != inputs.end(), kNotFound)
        << "SymbolBlock: '" << n << "' is not a variable of the graph";
  }
  std::vector<std::string> auxs = symbol_.ListAuxiliaryStates();
  auto shapes = symbol_.InferShape({}, /*partial=*/true);
  std::vector<std::string> args = symbol_.ListArguments();
  // A variable's declared dtype (MXNet's export writes __dtype__: a float64 model has float64
  // parameters); float32 without one.
  std::map<std::string, DType> dtypes;
  IndexedGraph g(symbol_.outputs);
  for (uint32_t nid : g.input_nodes()) {
    DType declared = internal::DeclaredDType(*g[nid].node);
    if (declared != DType::kUnknown) dtypes[g[nid].node->name()] = declared;
  }
  for (const auto& var : inputs) {
    if (std::find(input_names_.begin(), input_names_.end(), var) != input_names_.end()) continue;
    bool aux = std::find(auxs.begin(), auxs.end(), var) != auxs.end();
    size_t i = aux ? std::find(auxs.begin(), auxs.end(), var) - auxs.begin()
                   : std::find(args.begin(), args.end(), var) - args.begin();
    Shape shape = aux ? shapes.aux_shapes[i] : shapes.arg_shapes[i];
    // Imported parameters keep the graph's variable names, whatever the block's prefix.
    params_.push_back(std::make_shared<Parameter>(
        nullptr, var, shape, dtypes.count(var) ? dtypes[var] : DType::kFloat32, nullptr, !aux));
  }
}

std::shared_ptr<SymbolBlock> SymbolBlock::Imports(const std::string& symbol_file,
                                                  const std::vector<std::string>& input_names,
                                                  const std::string& param_file, bool allow_missing,
                                                  bool ignore_extra) {
  auto block = std::make_shared<SymbolBlock>(Symbol::Load(symbol_file), input_names);
  if (param_file.empty()) return block;
  NDArrayList list = LoadNDArrayList(param_file);
  // As MXNet's imports (dtype_source "saved"): a parameter takes the dtype of its saved value
  // (an export of a block cast to float64 after its graph was traced declares float32).
  std::map<std::string, DType> saved;
  for (size_t i = 0; i < list.names.size() && i < list.arrays.size(); ++i) {
    std::string key = list.names[i];
    if (key.rfind("arg:", 0) == 0 || key.rfind("aux:", 0) == 0) key = key.substr(4);
    saved[key] = list.arrays[i].dtype();
  }
  for (auto& p : block->params_) {
    auto it = saved.find(p->name());
    if (it == saved.end() || it->second == p->dtype()) continue;
    p = std::make_shared<Parameter>(nullptr, p->name(), p->shape(), it->second, nullptr,
                                    p->differentiable());
  }
  block->SetParameters(list, "'" + param_file + "'", allow_missing, ignore_extra);
  return block;
}

std::vector<std::string> SymbolBlock::InputNames(size_t num_inputs) const {
  HN_CHECK(num_inputs == input_names_.size(), kInvalidArgument)
      << "this SymbolBlock takes " << input_names_.size() << " inputs, got " << num_inputs;
  return input_names_;
}

Symbol SymbolBlock::Trace(size_t num_inputs) {
  InputNames(num_inputs);
  return symbol_;
}

std::vector<NDArray> SymbolBlock::ForwardMany(const std::vector<NDArray>& inputs) {
  InputNames(inputs.size());
  bool tracing =
      std::any_of(inputs.begin(), inputs.end(), [](const NDArray& x) { return x.is_symbolic(); });
  // Inside another block's trace the graph is re-recorded with its own node and variable names.
  ::hybridnet::internal::NameScope keep_names("");
  IndexedGraph g(symbol_.outputs);
  std::map<std::string, Parameter*> params;
  for (const auto& p : params_) params[p->name()] = p.get();
  std::vector<NDArray> values(g.num_entries());
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) {
    const Node* node = g[nid].node;
    if (node->IsVariable()) {
      auto it = std::find(input_names_.begin(), input_names_.end(), node->name());
      NDArray& value = values[g.entry_id(nid, 0)];
      if (it != input_names_.end()) {
        value = inputs[static_cast<size_t>(it - input_names_.begin())];
      } else if (tracing) {
        value = NDArray::FromEntry(NodeEntry{g[nid].owner, 0, 0});
      } else {
        value = params.at(node->name())->Value();  // its place on the tape when recording
      }
      continue;
    }
    std::vector<NDArray> in;
    for (const auto& e : g[nid].inputs) in.push_back(values[g.entry_id(e)]);
    std::vector<NDArray> out = Invoke(node->attrs, in);
    for (uint32_t i = 0; i < out.size(); ++i) values[g.entry_id(nid, i)] = out[i];
  }
  std::vector<NDArray> outputs;
  for (const auto& e : g.outputs()) outputs.push_back(values[g.entry_id(e)]);
  return outputs;
}

}  // namespace gluon
}  // namespace hybridnet
