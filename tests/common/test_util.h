// The helpers the C++ tests share (the C tests have tests/c_api/hn_test.h, Java
// TestSupport.java, Scala and R their helper files): temporary paths, bit equality, flat
// offsets, caught errors, and the node-by-node eager reference every graph test compares with.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "hybridnet/base.h"
#include "hybridnet/imperative.h"
#include "hybridnet/symbol.h"

namespace hybridnet {
namespace testing_util {

#ifdef HN_TEST_TMPDIR
/// `name` in the build's folder for test files.
inline std::string TmpPath(const std::string& name) {
  return std::string(HN_TEST_TMPDIR) + "/" + name;
}
#endif

/// "" when `a` and `b` have the same shape, dtype and bytes, else what differs (for a test's
/// message: EXPECT_EQ(BitDifference(got, want), "")).
inline std::string BitDifference(const NDArray& a, const NDArray& b) {
  std::ostringstream os;
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) {
    os << a.shape() << " " << DTypeName(a.dtype()) << " vs " << b.shape() << " "
       << DTypeName(b.dtype());
  } else if (std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) != 0) {
    os << "values differ:\n" << a << "\nvs\n" << b;
  }
  return os.str();
}

/// Same shape, dtype and bytes.
inline bool BitEqual(const NDArray& a, const NDArray& b) { return BitDifference(a, b).empty(); }

/// The largest magnitude of `want` (float64) and the largest difference of `got` (any float
/// type, same shape) from it: how the convolution tests judge float32 kernels against float64.
struct LargestAndWorst {
  double largest = 0.0, worst = 0.0;
};
inline LargestAndWorst CompareToFloat64(const NDArray& got, const NDArray& want) {
  const NDArray got64 = got.AsType(DType::kFloat64);
  const double* a = want.data<double>();
  const double* b = got64.data<double>();
  LargestAndWorst r;
  for (int64_t i = 0; i < want.size(); ++i) {
    r.largest = std::max(r.largest, std::fabs(a[i]));
    r.worst = std::max(r.worst, std::fabs(a[i] - b[i]));
  }
  return r;
}

/// How far the Winograd convolution kernels' results (forward, backward data, backward weights;
/// kernels/convolution_winograd.h) may be from float64's, relative to the largest value, on
/// data and weights uniform in [-1, 1]. Measured on 50 draws each (Zen 3): forward 2.5e-6 to
/// 6.6e-6, backward data up to 1.41e-5 (256 channels onto 5x5), backward weights up to 4.1e-6.
constexpr double kWinogradRelativeBound = 3e-5;

/// The row-major flat offset of index `idx` in shape `s`.
inline int64_t Offset(const Shape& s, const std::vector<int64_t>& idx) {
  int64_t off = 0;
  for (size_t k = 0; k < s.ndim(); ++k) off = off * s[k] + idx[k];
  return off;
}

/// The hybridnet::Error `f` throws; code kOk ("no error") when it throws none.
template <typename F>
Error ErrorOf(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  return Error(StatusCode::kOk, "no error");
}

/// The reference every graph test compares against: `symbol` run node by node through eager
/// Invoke, each variable's value taken from `values` by name (outputs are copies).
inline std::vector<NDArray> RunNodeByNode(const Symbol& symbol,
                                          const std::map<std::string, NDArray>& values) {
  IndexedGraph g(symbol.outputs);
  std::vector<NDArray> entries(g.num_entries());
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) {
    const Node* node = g[nid].node;
    if (node->IsVariable()) {
      entries[g.entry_id(nid, 0)] = values.at(node->name());
      continue;
    }
    std::vector<NDArray> in;
    for (const auto& e : g[nid].inputs) in.push_back(entries[g.entry_id(e)]);
    std::vector<NDArray> out = Invoke(node->attrs, in);
    for (uint32_t i = 0; i < out.size(); ++i) entries[g.entry_id(nid, i)] = out[i];
  }
  std::vector<NDArray> outputs;
  for (const auto& e : g.outputs()) outputs.push_back(entries[g.entry_id(e)].Copy());
  return outputs;
}

}  // namespace testing_util
}  // namespace hybridnet
