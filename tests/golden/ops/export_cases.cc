// Writes every op conformance case for the live-MXNet check (tests/common/mxnet_check.py):
//   DIR/index.json              {"ops": [every public op], "cases": [{name, op, attrs, inputs,
//                                outputs, mxnet_skip, mxnet_rtol, is_train}, ...]}
//   DIR/<case>-symbol.json      the one-op graph, as hybridnet writes MXNet JSON
//   DIR/<case>-in<i>.npy        its inputs (named in the index by the graph's variable names)
//   DIR/<case>-out<i>.npy       hybridnet's eager outputs
// and, for a case whose gradient the conformance tests check (GradientChecked) and MXNet can,
//   "gradients": {"head_grads": [file or null per output], "grads": [{name, file}, ...],
//                 "rtol"}
//   DIR/<case>-hgrad<k>.npy     the gradient given to output k
//   DIR/<case>-grad<i>.npy      hybridnet's eager gradient of input i (each non-empty float one)
// Usage: hn_export_op_cases DIR
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../../ops/conformance.h"
#include "hybridnet/imperative.h"
#include "hybridnet/npy.h"
#include "hybridnet/op.h"
#include "kernels/onednn.h"

using hybridnet::NDArray;
namespace conformance = hybridnet::conformance;

namespace {

// Writes the head gradients of case `c` (seeded by `seed`) and hybridnet's eager input
// gradients; returns their index entry.
nlohmann::json ExportGradients(const conformance::OpCase& c, const std::string& name,
                               const std::string& dir, const std::vector<NDArray>& inputs,
                               const std::vector<NDArray>& outputs,
                               const std::vector<std::string>& input_names, uint32_t seed) {
  const std::vector<NDArray> head_grads = conformance::HeadGradients(outputs, seed);
  const hybridnet::NodeAttrs attrs = conformance::CaseAttrs(c);
  std::vector<bool> differentiable;
  for (size_t i = 0; i < inputs.size(); ++i) {
    differentiable.push_back(conformance::Differentiable(attrs, i, inputs[i]));
  }
  const std::vector<NDArray> grads =
      conformance::EagerGradients(attrs, inputs, differentiable, head_grads, c.is_train);
  nlohmann::json entry{{"head_grads", nlohmann::json::array()},
                       {"grads", nlohmann::json::array()},
                       {"rtol", c.mxnet_gradient_rtol}};
  for (size_t k = 0; k < head_grads.size(); ++k) {
    if (head_grads[k].is_none()) {
      entry["head_grads"].push_back(nullptr);
      continue;
    }
    const std::string file = name + "-hgrad" + std::to_string(k) + ".npy";
    hybridnet::SaveNpy(dir + "/" + file, head_grads[k]);
    entry["head_grads"].push_back(file);
  }
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!differentiable[i]) continue;
    const std::string file = name + "-grad" + std::to_string(i) + ".npy";
    hybridnet::SaveNpy(dir + "/" + file, grads[i]);
    entry["grads"].push_back({{"name", input_names[i]}, {"file", file}});
  }
  return entry;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  try {
    nlohmann::json index;
    index["ops"] = nlohmann::json::array();
    for (const hybridnet::Op* op : hybridnet::OpRegistry::Global().List())
      if (!op->internal) index["ops"].push_back(op->name);
    index["cases"] = nlohmann::json::array();
    const auto& cases = conformance::AllCases();
    size_t with_gradients = 0;
    for (size_t k = 0; k < cases.size(); ++k) {
      const conformance::OpCase& c = cases[k];
      const hybridnet::Op& op = hybridnet::OpRegistry::Global().Get(c.op);
      if (op.internal) continue;  // never written to JSON, so never in an MXNet file
      const std::string& name = conformance::CaseNames()[k];
      const std::string base = dir + "/" + name;
      conformance::CaseGraph graph = conformance::BuildGraph(c);
      std::ofstream(base + "-symbol.json") << graph.symbol.ToJSON();
      std::vector<NDArray> inputs = conformance::MakeInputs(c, name);
      // Fresh inputs for the run: update ops change their states in place.
      std::vector<NDArray> outputs = conformance::RunEager(c, conformance::MakeInputs(c, name));
      // Without VNNI or AMX, MXNet's int8 self-attention sums its products in saturating 16-bit
      // pairs; ours stay exact (the conformance reference checks them): no reference there.
      const auto quantized = c.attrs.find("quantized");
      const bool int8_attention = op.name.rfind("_sg_mkldnn_selfatt", 0) == 0 &&
                                  quantized != c.attrs.end() && quantized->second == "True";
      const std::string mxnet_skip =
          int8_attention && !hybridnet::internal::OneDnnSumsInt8Exactly()
              ? "this CPU has no VNNI or AMX: MXNet's int8 sums saturate in 16-bit pairs"
              : c.mxnet_skip;
      nlohmann::json entry{{"name", name},
                           {"op", op.name},
                           {"symbol", name + "-symbol.json"},
                           {"attrs", c.attrs},
                           {"mxnet_skip", mxnet_skip},
                           {"mxnet_rtol", c.mxnet_rtol},
                           {"is_train", c.is_train}};
      entry["inputs"] = nlohmann::json::array();
      for (size_t i = 0; i < inputs.size(); ++i) {
        const std::string file = name + "-in" + std::to_string(i) + ".npy";
        hybridnet::SaveNpy(dir + "/" + file, inputs[i]);
        entry["inputs"].push_back({{"name", graph.data_names[i]}, {"file", file}});
      }
      entry["outputs"] = nlohmann::json::array();
      for (size_t i = 0; i < outputs.size(); ++i) {
        const std::string file = name + "-out" + std::to_string(i) + ".npy";
        hybridnet::SaveNpy(dir + "/" + file, outputs[i]);
        entry["outputs"].push_back(file);
      }
      if (c.mxnet_skip.empty() && c.mxnet_gradient_skip.empty() &&
          conformance::GradientChecked(c, inputs)) {
        entry["gradients"] = ExportGradients(c, name, dir, inputs, outputs, graph.data_names,
                                             static_cast<uint32_t>(k));
        ++with_gradients;
      }
      index["cases"].push_back(entry);
    }
    std::ofstream(dir + "/index.json") << index.dump(1);
    std::printf("exported %zu cases (%zu with gradients) to %s\n", index["cases"].size(),
                with_gradients, dir.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hn_export_op_cases: %s\n", e.what());
    return 1;
  }
  return 0;
}
