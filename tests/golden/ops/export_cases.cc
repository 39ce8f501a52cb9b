// Writes every op conformance case for the live-MXNet check (tests/common/mxnet_check.py):
//   DIR/index.json              {"ops": [every public op], "cases": [{name, op, attrs, inputs,
//                                outputs, mxnet_skip, mxnet_rtol}, ...]}
//   DIR/<case>-symbol.json      the one-op graph, as hybridnet writes MXNet JSON
//   DIR/<case>-in<i>.npy        its inputs (named in the index by the graph's variable names)
//   DIR/<case>-out<i>.npy       hybridnet's eager outputs
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

using hybridnet::NDArray;
namespace conformance = hybridnet::conformance;

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
    for (size_t k = 0; k < cases.size(); ++k) {
      const conformance::OpCase& c = cases[k];
      const hybridnet::Op& op = hybridnet::OpRegistry::Global().Get(c.op);
      if (op.internal) continue;  // never written to JSON, so never in an MXNet file
      const std::string& name = conformance::CaseNames()[k];
      const std::string base = dir + "/" + name;
      conformance::CaseGraph graph = conformance::BuildGraph(c);
      std::ofstream(base + "-symbol.json") << graph.symbol.ToJSON();
      std::vector<NDArray> inputs = conformance::MakeInputs(c, name);
      std::vector<NDArray> outputs = hybridnet::Invoke(conformance::CaseAttrs(c), inputs);
      nlohmann::json entry{{"name", name},
                           {"op", op.name},
                           {"symbol", name + "-symbol.json"},
                           {"attrs", c.attrs},
                           {"mxnet_skip", c.mxnet_skip},
                           {"mxnet_rtol", c.mxnet_rtol}};
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
      index["cases"].push_back(entry);
    }
    std::ofstream(dir + "/index.json") << index.dump(1);
    std::printf("exported %zu cases to %s\n", index["cases"].size(), dir.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hn_export_op_cases: %s\n", e.what());
    return 1;
  }
  return 0;
}
