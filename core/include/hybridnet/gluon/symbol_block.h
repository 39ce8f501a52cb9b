// SymbolBlock: a block built from a symbol and its parameters — how exports (ours or MXNet's)
// are imported. It runs eagerly (node by node) or hybridized (one cached executor), and can be
// exported again unchanged.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hybridnet/gluon/block.h"

namespace hybridnet {
namespace gluon {

/// A block running a given graph (MXNet's gluon.SymbolBlock): what an export is imported as.
class SymbolBlock : public HybridBlock {
 public:
  /// `outputs`: the graph; `inputs`: the names of its data variables. Every other variable
  /// becomes a parameter named exactly like the variable.
  SymbolBlock(const Symbol& outputs, const std::vector<std::string>& input_names);

  /// Loads PREFIX-symbol.json (+ params file) as MXNet's SymbolBlock.imports does: "arg:"/"aux:"
  /// stripped, every parameter must be present and no extra key is allowed unless permitted.
  static std::shared_ptr<SymbolBlock> Imports(const std::string& symbol_file,
                                              const std::vector<std::string>& input_names,
                                              const std::string& param_file = "",
                                              bool allow_missing = false,
                                              bool ignore_extra = false);

  /// Runs the graph on `inputs` (one per input name).
  std::vector<NDArray> ForwardMany(const std::vector<NDArray>& inputs) override;
  Symbol Trace(size_t num_inputs) override;
  std::vector<std::string> InputNames(size_t num_inputs) const override;
  /// The graph and the names of its data inputs.
  ///@{
  const Symbol& symbol() const { return symbol_; }
  const std::vector<std::string>& input_names() const { return input_names_; }
  ///@}

 private:
  Symbol symbol_;
  std::vector<std::string> input_names_;
};

}  // namespace gluon
}  // namespace hybridnet
