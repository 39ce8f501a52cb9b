#include <sstream>

#include "pass/passes.h"

namespace hybridnet {
namespace internal {

namespace {

// Applies one op's inference rule to the entries it touches. Returns true if anything changed.
template <typename T, typename Infer, typename Merge, typename Known>
bool InferNode(const IndexedGraph& g, uint32_t nid, std::vector<T>* values, const Infer& infer,
               const Merge& merge, const Known& is_known, const char* what) {
  const auto& info = g[nid];
  const NodeAttrs& attrs = info.node->attrs;
  std::vector<T> in, out;
  for (const auto& e : info.inputs) in.push_back((*values)[g.entry_id(e)]);
  const uint32_t num_out = NumEntriesOf(g, nid);
  for (uint32_t i = 0; i < num_out; ++i) out.push_back((*values)[g.entry_id(nid, i)]);
  bool all_known = true;
  for (const auto& v : in) all_known = all_known && is_known(v);
  for (const auto& v : out) all_known = all_known && is_known(v);
  if (all_known) return false;
  infer(attrs, &in, &out);
  bool changed = false;
  auto write_back = [&](const T& inferred, T* stored, const char* side, size_t i) {
    T before = *stored;
    if (!merge(inferred, stored)) {
      std::ostringstream os;
      os << DescribeNode(attrs) << ": " << side << " " << i << " " << what << " " << before
         << " conflicts with the inferred " << inferred;
      HN_THROW(kShapeError) << os.str();
    }
    changed = changed || !(before == *stored);
  };
  for (size_t i = 0; i < in.size(); ++i)
    write_back(in[i], &(*values)[g.entry_id(info.inputs[i])], "input", i);
  for (uint32_t i = 0; i < num_out; ++i)
    write_back(out[i], &(*values)[g.entry_id(nid, i)], "output", i);
  return changed;
}

template <typename T, typename Infer, typename Merge, typename Known>
bool Fixpoint(const IndexedGraph& g, std::vector<T>* values, const Infer& infer, const Merge& merge,
              const Known& is_known, const char* what) {
  // Forward sweeps fill outputs; backward information (weights from data) arrives in the same
  // sweep because every rule sees both sides. A few sweeps reach the fixpoint.
  for (size_t sweep = 0; sweep < g.num_nodes() + 1; ++sweep) {
    bool changed = false;
    for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) {
      if (g[nid].node->IsVariable()) continue;
      changed = InferNode(g, nid, values, infer, merge, is_known, what) || changed;
    }
    if (!changed) break;
  }
  for (const auto& v : *values)
    if (!is_known(v)) return false;
  return true;
}

}  // namespace

bool InferShapes(const IndexedGraph& g, std::vector<Shape>* shapes) {
  shapes->resize(g.num_entries());
  for (uint32_t nid : g.input_nodes()) {
    const Node* node = g[nid].node;
    auto it = node->attrs.dict.find("__shape__");
    if (it == node->attrs.dict.end()) continue;
    Shape hint;
    try {
      hint = ParseShape(it->second);
    } catch (const Error& e) {
      HN_THROW(kFormatError) << "variable '" << node->name() << "': __shape__ " << e.what();
    }
    Shape& stored = (*shapes)[g.entry_id(nid, 0)];
    HN_CHECK(MergeShape(hint, &stored), kShapeError)
        << "variable '" << node->name() << "': given shape " << stored
        << " conflicts with its __shape__ attribute " << hint;
  }
  auto infer = [](const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
    attrs.op->infer_shape(attrs, in, out);
  };
  return Fixpoint(
      g, shapes, infer, MergeShape, [](const Shape& s) { return s.IsKnown(); }, "shape");
}

DType DeclaredDType(const Node& node) {
  auto it = node.attrs.dict.find("__dtype__");
  if (it == node.attrs.dict.end()) return DType::kUnknown;
  int flag = -1;
  try {
    flag = std::stoi(it->second);
  } catch (const std::exception&) {
  }
  HN_CHECK(IsKnownDType(flag), kFormatError) << "variable '" << node.name() << "': __dtype__ '"
                                             << it->second << "' is not a dtype flag 0..12";
  return static_cast<DType>(flag);
}

bool InferTypes(const IndexedGraph& g, std::vector<DType>* types) {
  types->resize(g.num_entries(), DType::kUnknown);
  for (uint32_t nid : g.input_nodes()) {
    DType& stored = (*types)[g.entry_id(nid, 0)];
    if (stored == DType::kUnknown) stored = DeclaredDType(*g[nid].node);
  }
  auto merge = [](const DType& known, DType* target) {
    if (known == DType::kUnknown) return true;
    if (*target == DType::kUnknown) *target = known;
    return *target == known;
  };
  auto infer = [](const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
    attrs.op->infer_type(attrs, in, out);
  };
  return Fixpoint(
      g, types, infer, merge, [](DType d) { return d != DType::kUnknown; }, "dtype");
}

}  // namespace internal
}  // namespace hybridnet
