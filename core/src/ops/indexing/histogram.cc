// _histogram (MXNet src/operator/tensor/histogram{-inl.h,.cc}): counts of the data's values
// per bin, as int64, plus the bin edges. Either bin_cnt equal bins over range (one input), or
// the edges given as a second input "bins". Values outside the bins are not counted; the last
// bin includes its upper edge. Binning reproduces MXNet's arithmetic (the edges are rounded to
// the data's dtype and a value's bin is corrected against them).
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "ops/dtype_switch-inl.h"
#include "ops/register_ops.h"
#include "ops/shape/shape_util-inl.h"

namespace hybridnet {

namespace {

using internal::AssignShape;

struct HistogramParam {
  std::optional<int> bin_cnt;
  std::string range_text = "None";
  std::optional<std::pair<double, double>> range;  // parsed from range_text
  static void Declare(ParamDeclarer<HistogramParam>* d) {
    d->Field("bin_cnt", &HistogramParam::bin_cnt)
        .Default(std::nullopt)
        .Describe("Number of equal bins over range (then data is the only input).");
    d->Field("range", &HistogramParam::range_text)
        .Default("None")
        .Describe("(lower, upper) covered by the bin_cnt bins; lower <= upper.");
  }
};

// "(0.0, 5.0)" -> the two numbers.
std::pair<double, double> ParseRange(const std::string& text) {
  std::string s;
  for (char c : text)
    if (c != ' ') s += c;
  auto fail = [&]() {
    HN_THROW(kInvalidArgument) << "attribute 'range'='" << text
                               << "': expected (lower, upper) such as (0, 5)";
  };
  if (s.size() < 2 || (s.front() != '(' && s.front() != '[')) fail();
  s = s.substr(1, s.size() - 2);
  const size_t comma = s.find(',');
  if (comma == std::string::npos) fail();
  const std::string a = s.substr(0, comma), b = s.substr(comma + 1);
  char* end_a = nullptr;
  char* end_b = nullptr;
  const double lo = std::strtod(a.c_str(), &end_a);
  const double hi = std::strtod(b.c_str(), &end_b);
  if (a.empty() || b.empty() || *end_a != '\0' || *end_b != '\0') fail();
  return {lo, hi};
}

void HistogramInit(HistogramParam* p) {
  if (p->range_text != "None" && p->range_text != "none") p->range = ParseRange(p->range_text);
  HN_CHECK(p->bin_cnt.has_value() == p->range.has_value(), kInvalidArgument)
      << "bin_cnt and range must be given together (equal bins) or both left out (bins input)";
  if (!p->bin_cnt) return;
  HN_CHECK(*p->bin_cnt >= 1, kInvalidArgument) << "bin_cnt=" << *p->bin_cnt << " must be positive";
  HN_CHECK(p->range->first <= p->range->second, kInvalidArgument)
      << "range lower " << p->range->first << " exceeds upper " << p->range->second;
}

bool HistogramShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const HistogramParam& p = attrs.Param<HistogramParam>();
  if (p.bin_cnt) {
    AssignShape(attrs, out, 0, Shape{*p.bin_cnt}, "output");
    AssignShape(attrs, out, 1, Shape{*p.bin_cnt + 1}, "output");
  } else {
    const Shape& bins = (*in)[1];
    if (bins.ndim() != 0) {
      HN_CHECK(bins.ndim() == 1 && (bins[0] == 0 || bins[0] >= 2), kShapeError)
          << DescribeNode(attrs) << ": bins must be a 1-D vector of at least 2 edges, got " << bins;
      if (bins[0] != 0) AssignShape(attrs, out, 0, Shape{bins[0] - 1}, "output");
      AssignShape(attrs, out, 1, bins, "output");
    }
  }
  return internal::AllKnown(*in) && internal::AllKnown(*out);
}

bool HistogramType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  HN_CHECK((*out)[0] == DType::kUnknown || (*out)[0] == DType::kInt64, kTypeError)
      << DescribeNode(attrs) << ": the counts are int64, not " << DTypeName((*out)[0]);
  (*out)[0] = DType::kInt64;
  // data, bins (when given) and the edges output share the data's dtype.
  std::vector<DType> data(in->begin(), in->end());
  std::vector<DType> edges{(*out)[1]};
  const bool known = internal::NumericType(attrs, &data, &edges);
  for (size_t i = 0; i < in->size(); ++i) (*in)[i] = data[i];
  (*out)[1] = edges[0];
  return known;
}

template <typename T>
void CountBins(const T* x, int64_t n, const T* edges, int64_t bins, bool uniform, double lo,
               double hi, int64_t* counts) {
  for (int64_t b = 0; b < bins; ++b) counts[b] = 0;
  for (int64_t i = 0; i < n; ++i) {
    const T v = x[i];
    int64_t bin = -1;
    if (uniform) {
      if (static_cast<double>(v) >= lo && static_cast<double>(v) <= hi) {
        bin = static_cast<int64_t>((static_cast<double>(v) - lo) * static_cast<double>(bins) /
                                   (hi - lo));
        bin = std::min(bins - 1, bin);
        bin -= v < edges[bin] ? 1 : 0;
        bin += (v >= edges[bin + 1] && bin != bins - 1) ? 1 : 0;
      }
    } else if (v >= edges[0] && v <= edges[bins]) {
      bin = 0;
      while (bin <= bins && v >= edges[bin]) ++bin;
      bin = std::min(bin - 1, bins - 1);
    }
    if (bin >= 0) ++counts[bin];
  }
}

void HistogramCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                      const std::vector<TBlob>& out) {
  const HistogramParam& p = attrs.Param<HistogramParam>();
  const int64_t bins = out[0].Size();
  internal::SwitchDType(in[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* edges = out[1].ptr<T>();
    double lo = 0, hi = 0;
    if (p.bin_cnt) {
      lo = p.range->first;
      hi = p.range->second;
      if (lo == hi) {  // MXNet widens an empty range to one unit
        lo -= 0.5;
        hi += 0.5;
      }
      for (int64_t i = 0; i <= bins; ++i) {
        const double di = static_cast<double>(i), db = static_cast<double>(bins);
        edges[i] = static_cast<T>((hi * di + (db - di) * lo) / db);
      }
    } else {
      std::copy(in[1].ptr<const T>(), in[1].ptr<const T>() + bins + 1, edges);
    }
    CountBins(in[0].ptr<const T>(), in[0].Size(), edges, bins, p.bin_cnt.has_value(), lo, hi,
              out[0].ptr<int64_t>());
  });
}

}  // namespace

void RegisterHistogramOps(OpRegistry* r) {
  r->Register("_histogram")
      .Describe(
          "Counts the data's values per bin (int64) and returns the bin edges: bin_cnt "
          "equal bins over range, or the edges given as input bins. Values outside are "
          "not counted; the last bin includes its upper edge.")
      .SetParam<HistogramParam>(HistogramInit)
      .SetInputNames([](const NodeAttrs& attrs) {
        return attrs.Param<HistogramParam>().bin_cnt ? std::vector<std::string>{"data"}
                                                     : std::vector<std::string>{"data", "bins"};
      })
      .SetNumOutputs(2)
      .SetInferShape(HistogramShape)
      .SetInferType(HistogramType)
      .SetCompute(HistogramCompute);
}

}  // namespace hybridnet
