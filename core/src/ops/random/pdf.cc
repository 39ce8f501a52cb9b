// Densities of the sampling distributions (MXNet src/operator/random/pdf_op.{h,cc}):
// _random_pdf_<dist>(sample, parameters..., is_log) for uniform, normal, gamma, exponential,
// poisson, negative_binomial, generalized_negative_binomial and dirichlet. Deterministic.
//
// The parameter arrays share one shape, a leading part of the sample's shape: sample element i
// belongs to parameter element i / (sample.size / parameter.size). For dirichlet the parameters
// and samples are vectors along the last axis, which the result drops (a single vector gives
// shape (1,)). Formulas and the precision (the dtype of the inputs) are MXNet's, which does not
// check that a sample lies in the support; note that gamma's beta is a rate here, while
// _random_gamma's beta is a scale (as in MXNet).
#include <cmath>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "ops/dtype_switch-inl.h"
#include "ops/register_ops.h"
#include "ops/shape/shape_util-inl.h"

namespace hybridnet {

namespace {

using internal::AssignShape;

enum class Pdf {
  kUniform,
  kNormal,
  kGamma,
  kExponential,
  kPoisson,
  kNegativeBinomial,
  kGeneralizedNegativeBinomial,
  kDirichlet
};

struct PdfInfo {
  const char* name;
  std::vector<std::string> inputs;
  const char* summary;
};

const PdfInfo& Info(Pdf d) {
  static const PdfInfo table[] = {
      {"uniform", {"sample", "low", "high"}, "uniform over [low, high)"},
      {"normal", {"sample", "mu", "sigma"}, "normal with mean mu and standard deviation sigma"},
      {"gamma", {"sample", "alpha", "beta"}, "gamma with shape alpha and rate beta"},
      {"exponential", {"sample", "lam"}, "exponential with rate lam"},
      {"poisson", {"sample", "lam"}, "Poisson with mean lam"},
      {"negative_binomial",
       {"sample", "k", "p"},
       "negative binomial of k successes with success probability p"},
      {"generalized_negative_binomial",
       {"sample", "mu", "alpha"},
       "negative binomial with mean mu and dispersion alpha"},
      {"dirichlet", {"sample", "alpha"}, "Dirichlet with concentration vector alpha"},
  };
  return table[static_cast<int>(d)];
}

struct PdfParam {
  bool is_log = false;
  static void Declare(ParamDeclarer<PdfParam>* d) {
    d->Field("is_log", &PdfParam::is_log)
        .Default(false)
        .Describe("Return the log density instead of the density.");
  }
};

template <typename T>
T NegativeBinomialLog(T k, T p, T x) {
  return (std::lgamma(x + k) - std::lgamma(x + 1) - std::lgamma(k)) + k * std::log(p) +
         x * std::log(1 - p);
}

// The log density (or the density where MXNet computes it directly) of one sample.
template <Pdf D, typename T>
T Density(T x, T a, T b, bool is_log) {
  if constexpr (D == Pdf::kUniform) {
    return is_log ? -T(std::log(b - a)) : T(1) / (b - a);
  } else if constexpr (D == Pdf::kNormal) {
    const T exponent = (T(-0.5) * (x - a) * (x - a)) / (b * b);
    const T normalizer = static_cast<T>(std::sqrt(2.0 * 3.14159265358979323846) * b);
    return is_log ? exponent - std::log(normalizer) : std::exp(exponent) / normalizer;
  } else if constexpr (D == Pdf::kExponential) {
    return is_log ? std::log(a) - a * x : a * std::exp(-a * x);
  } else {
    T lpdf;
    if constexpr (D == Pdf::kGamma) {
      lpdf = a * std::log(b) + (a - 1) * std::log(x) - b * x - std::lgamma(a);
    } else if constexpr (D == Pdf::kPoisson) {
      lpdf = (x * std::log(a) - std::lgamma(x + 1)) - a;
    } else if constexpr (D == Pdf::kNegativeBinomial) {
      lpdf = NegativeBinomialLog(a, b, x);
    } else {  // generalized: k = 1 / alpha, p = 1 / (mu * alpha + 1)
      lpdf = NegativeBinomialLog(static_cast<T>(1.0 / b), static_cast<T>(1.0 / (a * b + 1.0)), x);
    }
    return is_log ? lpdf : std::exp(lpdf);
  }
}

template <Pdf D>
bool PdfShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  for (const Shape& s : *in)
    if (s.ndim() == 0) return false;
  const bool vector = D == Pdf::kDirichlet;
  const Shape& sample = (*in)[0];
  const Shape& param = (*in)[1];
  HN_CHECK(param.ndim() <= sample.ndim(), kShapeError)
      << DescribeNode(attrs) << ": the parameters " << param
      << " have more dimensions than the samples " << sample;
  std::vector<int64_t> want(sample.begin(), sample.begin() + param.ndim());
  if (vector) want.back() = sample[sample.ndim() - 1];
  for (size_t i = 1; i < in->size(); ++i) AssignShape(attrs, in, i, Shape(want), "input");
  if (vector && sample.ndim() == 1) {
    AssignShape(attrs, out, 0, Shape{1}, "output");
  } else {
    AssignShape(attrs, out, 0, Shape(sample.begin(), sample.end() - (vector ? 1 : 0)), "output");
  }
  return internal::AllKnown(*in);
}

bool PdfType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const bool known = ElemwiseType(attrs, in, out);
  const DType d = (*out)[0];
  HN_CHECK(d == DType::kUnknown || d == DType::kFloat32 || d == DType::kFloat64, kTypeError)
      << DescribeNode(attrs) << ": dtype " << DTypeName(d)
      << " is not supported; densities take float32 or float64";
  return known;
}

template <Pdf D>
void PdfCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                const std::vector<TBlob>& out) {
  const bool is_log = attrs.Param<PdfParam>().is_log;
  const int64_t n = out[0].Size();
  const int64_t per = in[0].Size() / in[1].Size();  // samples per parameter element
  auto run = [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in[0].ptr<const T>();
    const T* a = in[1].ptr<const T>();
    T* y = out[0].ptr<T>();
    if constexpr (D == Pdf::kDirichlet) {
      const int64_t k = in[1].shape[in[1].shape.ndim() - 1];
      for (int64_t i = 0; i < n; ++i) {
        const T* xi = x + i * k;
        const T* ai = a + (i / per) * k;
        T sum_alpha(0), sum_lgamma(0), sum_sample(0);
        for (int64_t j = 0; j < k; ++j) {
          sum_alpha += ai[j];
          sum_lgamma += std::lgamma(ai[j]);
          sum_sample += (ai[j] - 1) * std::log(xi[j]);
        }
        const T lpdf = sum_sample + (std::lgamma(sum_alpha) - sum_lgamma);
        y[i] = is_log ? lpdf : std::exp(lpdf);
      }
    } else {
      const T* b = in.size() > 2 ? in[2].ptr<const T>() : a;
      for (int64_t i = 0; i < n; ++i) y[i] = Density<D, T>(x[i], a[i / per], b[i / per], is_log);
    }
  };
  if (out[0].dtype == DType::kFloat64) {
    run(internal::TypeTag<double>{});
  } else {
    run(internal::TypeTag<float>{});
  }
}

template <Pdf D>
void RegisterPdf(OpRegistry* r) {
  const PdfInfo& info = Info(D);
  r->Register(std::string("_random_pdf_") + info.name)
      .Describe(std::string("Density (or log density, is_log) of the ") + info.summary +
                " distribution at each sample.")
      .AddAlias(std::string("random_pdf_") + info.name)
      .SetParam<PdfParam>()
      .SetInputNames(info.inputs)
      .SetInferShape(PdfShape<D>)
      .SetInferType(PdfType)
      .SetCompute(PdfCompute<D>);
}

}  // namespace

void RegisterPdfOps(OpRegistry* r) {
  RegisterPdf<Pdf::kUniform>(r);
  RegisterPdf<Pdf::kNormal>(r);
  RegisterPdf<Pdf::kGamma>(r);
  RegisterPdf<Pdf::kExponential>(r);
  RegisterPdf<Pdf::kPoisson>(r);
  RegisterPdf<Pdf::kNegativeBinomial>(r);
  RegisterPdf<Pdf::kGeneralizedNegativeBinomial>(r);
  RegisterPdf<Pdf::kDirichlet>(r);
}

}  // namespace hybridnet
