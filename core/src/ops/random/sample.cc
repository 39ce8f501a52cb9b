// Random sampling ops (MXNet src/operator/random/sample_op.{h,cc}, multisample_op.{h,cc},
// sample_multinomial_op.h, shuffle_op.cc):
//   _random_<dist>        scalar parameters, an output of attribute `shape`
//   _random_<dist>_like   scalar parameters, an output of the input's shape and dtype
//   _sample_<dist>        parameter arrays: `shape` draws per parameter element
//   _random_randint, _sample_multinomial, _shuffle
// for dist in uniform, normal, gamma, exponential, poisson, negative_binomial,
// generalized_negative_binomial. Draws come from a Sampler seeded once per call from the
// library's generator (sampler-inl.h): reproducible after Seed(s), and the same eager and in a
// graph. Parameters MXNet checks (positive scale, ...) are checked when the attributes are
// parsed; parameter arrays are not checked (as in MXNet), and invalid values give NaN instead
// of MXNet's endless loops.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "hybridnet/ndarray.h"
#include "hybridnet/op.h"
#include "kernels/workspace.h"
#include "ops/dtype_switch-inl.h"
#include "ops/random/sampler-inl.h"
#include "ops/register_ops.h"
#include "ops/shape/shape_util-inl.h"

namespace hybridnet {

namespace {

using internal::AssignShape;
using internal::Sampler;

enum class Dist {
  kUniform,
  kNormal,
  kGamma,
  kExponential,
  kPoisson,
  kNegativeBinomial,
  kGeneralizedNegativeBinomial
};

// One table of the distributions: names, parameters (attribute names of _random_*, input names
// of _sample_*) and defaults, in MXNet's spelling.
struct DistInfo {
  const char* name;
  const char* attr[2];  // second nullptr: one parameter
  const char* input[2];
  double fallback[2];
  const char* summary;
};

const DistInfo& Info(Dist d) {
  static const DistInfo table[] = {
      {"uniform", {"low", "high"}, {"low", "high"}, {0, 1}, "uniform over [low, high)"},
      {"normal",
       {"loc", "scale"},
       {"mu", "sigma"},
       {0, 1},
       "normal with mean loc (mu) and standard deviation scale (sigma)"},
      {"gamma",
       {"alpha", "beta"},
       {"alpha", "beta"},
       {1, 1},
       "gamma with shape alpha and scale beta"},
      {"exponential", {"lam", nullptr}, {"lam", nullptr}, {1, 0}, "exponential with rate lam"},
      {"poisson",
       {"lam", nullptr},
       {"lam", nullptr},
       {1, 0},
       "Poisson with mean lam (integer values in a float dtype)"},
      {"negative_binomial",
       {"k", "p"},
       {"k", "p"},
       {1, 1},
       "negative binomial: failures before k successes of probability p"},
      {"generalized_negative_binomial",
       {"mu", "alpha"},
       {"mu", "alpha"},
       {1, 1},
       "negative binomial with mean mu and dispersion alpha (Poisson when alpha is 0)"},
  };
  return table[static_cast<int>(d)];
}

bool TwoParams(Dist d) { return Info(d).attr[1] != nullptr; }

double Draw(Dist d, Sampler& s, double a, double b) {
  switch (d) {
    case Dist::kUniform:
      return a + (b - a) * s.Uniform();
    case Dist::kNormal:
      return a + b * s.Normal();
    case Dist::kGamma:
      return s.Gamma(a, b);
    case Dist::kExponential:
      return s.Exponential(a);
    case Dist::kPoisson:
      return s.Poisson(a);
    case Dist::kNegativeBinomial:
      return s.NegativeBinomial(a, b);
    case Dist::kGeneralizedNegativeBinomial:
      return s.GeneralizedNegativeBinomial(a, b);
  }
  return 0;
}

// Calls value(i) for every output element and stores it converted to the output dtype.
template <typename Fn>
void StoreAll(const TBlob& out, Fn&& value) {
  const int64_t n = out.Size();
  switch (out.dtype) {
    case DType::kFloat16: {
      uint16_t* y = out.ptr<uint16_t>();
      for (int64_t i = 0; i < n; ++i) y[i] = FloatToHalf(static_cast<float>(value(i)));
      return;
    }
    default:
      internal::SwitchDType(out.dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        T* y = out.ptr<T>();
        for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(value(i));
      });
  }
}

// A uniform draw rounded to float32 could reach `high`; MXNet's interval is half open.
double BelowHigh(double v, double low, double high, DType dtype) {
  if (dtype == DType::kFloat32 && high > low && static_cast<float>(v) >= static_cast<float>(high))
    return std::nextafter(static_cast<float>(high), static_cast<float>(low));
  return v;
}

// MXNet's checks of scalar parameters (done in its kernels, here when parsing).
void CheckScalars(Dist d, double a, double b, int k) {
  switch (d) {
    case Dist::kUniform:
      HN_CHECK(a <= b, kInvalidArgument) << "low=" << a << " must not exceed high=" << b;
      break;
    case Dist::kNormal:
      HN_CHECK(b > 0, kInvalidArgument) << "scale=" << b << " must be positive";
      break;
    case Dist::kGamma:
      HN_CHECK(a > 0 && b > 0, kInvalidArgument)
          << "alpha=" << a << " and beta=" << b << " must be positive";
      break;
    case Dist::kExponential:
      HN_CHECK(a > 0, kInvalidArgument) << "lam=" << a << " must be positive";
      break;
    case Dist::kPoisson:
      HN_CHECK(a >= 0, kInvalidArgument) << "lam=" << a << " must not be negative";
      break;
    case Dist::kNegativeBinomial:
      // MXNet accepts p = 0 and then never finishes sampling; it is rejected here.
      HN_CHECK(k >= 0 && b > 0 && b <= 1, kInvalidArgument)
          << "k=" << k << " must not be negative and p=" << b << " must be in (0, 1]";
      break;
    case Dist::kGeneralizedNegativeBinomial:
      HN_CHECK(a >= 0 && b >= 0, kInvalidArgument)
          << "mu=" << a << " and alpha=" << b << " must not be negative";
      break;
  }
}

// The output dtypes of the float samplers (MXNet: None = float32, float16, float32, float64).
void CheckFloatDType(const std::optional<DType>& dtype) {
  HN_CHECK(
      !dtype || *dtype == DType::kFloat16 || *dtype == DType::kFloat32 || *dtype == DType::kFloat64,
      kInvalidArgument)
      << "dtype=" << DTypeName(*dtype) << " is not a sampling dtype (float16, float32, float64)";
}

// The output dtype: the attribute's, float32 by default; a known output dtype must agree.
bool AssignSampleType(const NodeAttrs& attrs, const std::optional<DType>& dtype, DType fallback,
                      std::vector<DType>* out, size_t i) {
  const DType want = dtype ? *dtype : fallback;
  HN_CHECK((*out)[i] == DType::kUnknown || (*out)[i] == want || !dtype, kTypeError)
      << DescribeNode(attrs) << ": output dtype " << DTypeName((*out)[i])
      << " differs from dtype=" << DTypeName(want);
  if ((*out)[i] == DType::kUnknown) (*out)[i] = want;
  return true;
}

// ---------------------------------------------------------------------------------------------
// _random_<dist>, _random_<dist>_like

template <Dist D, bool kLike>
struct RandomParam {
  double a = Info(D).fallback[0];
  double b = Info(D).fallback[1];
  int k = 1;  // negative_binomial's first parameter is an integer
  std::optional<std::vector<int64_t>> shape;
  std::string ctx;
  std::optional<DType> dtype;
  static void Declare(ParamDeclarer<RandomParam>* d) {
    const DistInfo& info = Info(D);
    if constexpr (D == Dist::kNegativeBinomial) {
      d->Field("k", &RandomParam::k).Default(1).Describe("Successes to wait for.");
    } else {
      d->Field(info.attr[0], &RandomParam::a).Default(info.fallback[0]).Describe(info.summary);
    }
    if (info.attr[1]) {
      d->Field(info.attr[1], &RandomParam::b).Default(info.fallback[1]).Describe(info.summary);
    }
    if constexpr (!kLike) {
      d->Field("shape", &RandomParam::shape).Default(std::nullopt).Describe("Shape of the output.");
      d->Field("ctx", &RandomParam::ctx)
          .Default("")
          .Describe("Device of the output (ignored: CPU).");
      d->Field("dtype", &RandomParam::dtype)
          .Default(std::nullopt)
          .Describe("Output dtype: float16, float32 or float64 (None: float32).");
    }
  }
  double First() const { return D == Dist::kNegativeBinomial ? static_cast<double>(k) : a; }
};

template <Dist D, bool kLike>
void RandomInit(RandomParam<D, kLike>* p) {
  CheckScalars(D, p->First(), p->b, p->k);
  CheckFloatDType(p->dtype);
}

// The shape attribute (None or with a 0: unknown, as MXNet's InitShape).
bool ShapeFromAttr(const NodeAttrs& attrs, const std::optional<std::vector<int64_t>>& shape,
                   std::vector<Shape>* out) {
  if (shape && !shape->empty()) {
    for (int64_t d : *shape)
      HN_CHECK(d >= 0, kShapeError)
          << DescribeNode(attrs) << ": shape " << Shape(*shape) << " has a negative dimension";
    AssignShape(attrs, out, 0, Shape(*shape), "output");
  }
  return (*out)[0].IsKnown();
}

template <Dist D>
bool RandomShape(const NodeAttrs& attrs, std::vector<Shape>*, std::vector<Shape>* out) {
  return ShapeFromAttr(attrs, attrs.Param<RandomParam<D, false>>().shape, out);
}

template <Dist D>
bool RandomType(const NodeAttrs& attrs, std::vector<DType>*, std::vector<DType>* out) {
  return AssignSampleType(attrs, attrs.Param<RandomParam<D, false>>().dtype, DType::kFloat32, out,
                          0);
}

// _like: the input's shape and (float) dtype.
bool LikeType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const bool known = ElemwiseType(attrs, in, out);
  const DType d = (*in)[0];
  HN_CHECK(
      d == DType::kUnknown || d == DType::kFloat16 || d == DType::kFloat32 || d == DType::kFloat64,
      kTypeError)
      << DescribeNode(attrs) << ": data has dtype " << DTypeName(d)
      << "; samples are float16, float32 or float64";
  return known;
}

template <Dist D, bool kLike>
void RandomCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>&,
                   const std::vector<TBlob>& out) {
  const RandomParam<D, kLike>& p = attrs.Param<RandomParam<D, kLike>>();
  Sampler s(internal::DrawRandomSeed());
  const double a = p.First(), b = p.b;
  StoreAll(out[0], [&](int64_t) {
    const double v = Draw(D, s, a, b);
    return D == Dist::kUniform ? BelowHigh(v, a, b, out[0].dtype) : v;
  });
}

// ---------------------------------------------------------------------------------------------
// _random_randint

struct RandIntParam {
  int64_t low = 0, high = 0;
  std::optional<std::vector<int64_t>> shape;
  std::string ctx;
  std::optional<DType> dtype;
  static void Declare(ParamDeclarer<RandIntParam>* d) {
    d->Field("low", &RandIntParam::low).Required().Describe("Smallest value drawn.");
    d->Field("high", &RandIntParam::high).Required().Describe("One past the largest value.");
    d->Field("shape", &RandIntParam::shape).Default(std::nullopt).Describe("Shape of the output.");
    d->Field("ctx", &RandIntParam::ctx).Default("").Describe("Device (ignored: CPU).");
    d->Field("dtype", &RandIntParam::dtype)
        .Default(std::nullopt)
        .Describe("Output dtype: int32 or int64 (None: int32).");
  }
};

void RandIntInit(RandIntParam* p) {
  HN_CHECK(p->low < p->high, kInvalidArgument)
      << "low=" << p->low << " must be below high=" << p->high;
  HN_CHECK(!p->dtype || *p->dtype == DType::kInt32 || *p->dtype == DType::kInt64, kInvalidArgument)
      << "dtype=" << DTypeName(*p->dtype) << " is not int32 or int64";
}

void RandIntCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>&,
                    const std::vector<TBlob>& out) {
  const RandIntParam& p = attrs.Param<RandIntParam>();
  Sampler s(internal::DrawRandomSeed());
  const uint64_t span = static_cast<uint64_t>(p.high) - static_cast<uint64_t>(p.low);
  internal::SwitchDType(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* y = out[0].ptr<T>();
    for (int64_t i = 0; i < out[0].Size(); ++i)
      y[i] = static_cast<T>(static_cast<uint64_t>(p.low) + s.Below(span));
  });
}

// ---------------------------------------------------------------------------------------------
// _sample_<dist>: `shape` draws for every element of the parameter arrays

struct MultiSampleParam {
  std::vector<int64_t> shape;
  std::optional<DType> dtype;
  static void Declare(ParamDeclarer<MultiSampleParam>* d) {
    d->Field("shape", &MultiSampleParam::shape)
        .Default(std::vector<int64_t>{})
        .Describe(
            "Shape of the draws per parameter element (appended to the parameters' "
            "shape).");
    d->Field("dtype", &MultiSampleParam::dtype)
        .Default(std::nullopt)
        .Describe("Output dtype: float16, float32 or float64 (None: float32).");
  }
};

void MultiSampleInit(MultiSampleParam* p) {
  for (int64_t d : p->shape)
    HN_CHECK(d >= 1, kInvalidArgument)
        << "shape=" << Shape(p->shape) << " must have positive dimensions";
  CheckFloatDType(p->dtype);
}

bool MultiSampleShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const auto& draws = attrs.Param<MultiSampleParam>().shape;
  Shape common;
  const Shape& os = (*out)[0];
  if (os.ndim() > draws.size()) common = Shape(os.begin(), os.end() - draws.size());
  for (size_t i = 0; i < in->size(); ++i) {
    Shape before = common;
    HN_CHECK(MergeShape((*in)[i], &common), kShapeError)
        << DescribeNode(attrs) << ": parameter input " << i << " has shape " << (*in)[i] << " but "
        << before << " is required (parameter arrays must agree)";
  }
  if (common.ndim() == 0) return false;
  for (size_t i = 0; i < in->size(); ++i) AssignShape(attrs, in, i, common, "input");
  std::vector<int64_t> od = common.dims();
  od.insert(od.end(), draws.begin(), draws.end());
  AssignShape(attrs, out, 0, Shape(od), "output");
  return internal::AllKnown(*in);
}

bool MultiSampleType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  std::vector<DType> params(*in);
  std::vector<DType> none;
  const bool known = ElemwiseType(attrs, &params, &none);
  *in = params;
  for (DType d : *in) {
    HN_CHECK(d == DType::kUnknown || d == DType::kFloat16 || d == DType::kFloat32 ||
                 d == DType::kFloat64,
             kTypeError)
        << DescribeNode(attrs) << ": parameters have dtype " << DTypeName(d)
        << "; they must be float16, float32 or float64";
  }
  AssignSampleType(attrs, attrs.Param<MultiSampleParam>().dtype, DType::kFloat32, out, 0);
  return known;
}

// A parameter array as doubles (any float dtype), in workspace slot `slot`.
const double* ReadParams(const OpContext& ctx, const TBlob& t, internal::WorkspaceSlot slot) {
  double* v = ctx.workspace->Get<double>(slot, static_cast<size_t>(t.Size()));
  ConvertElements(t.data, t.dtype, v, DType::kFloat64, static_cast<size_t>(t.Size()));
  return v;
}

template <Dist D>
void MultiSampleCompute(const OpContext& ctx, const NodeAttrs&, const std::vector<TBlob>& in,
                        const std::vector<TBlob>& out) {
  const double* first = ReadParams(ctx, in[0], internal::kOpSlot0);
  const double* second = in.size() > 1 ? ReadParams(ctx, in[1], internal::kOpSlot1) : nullptr;
  const int64_t per = out[0].Size() / in[0].Size();
  Sampler s(internal::DrawRandomSeed());
  StoreAll(out[0], [&](int64_t i) {
    const size_t j = static_cast<size_t>(i / per);
    const double a = first[j], b = in.size() > 1 ? second[j] : 0.0;
    const double v = Draw(D, s, a, b);
    return D == Dist::kUniform ? BelowHigh(v, a, b, out[0].dtype) : v;
  });
}

// ---------------------------------------------------------------------------------------------
// _sample_multinomial

struct MultinomialParam {
  std::vector<int64_t> shape;
  bool get_prob = false;
  DType dtype = DType::kInt32;
  static void Declare(ParamDeclarer<MultinomialParam>* d) {
    d->Field("shape", &MultinomialParam::shape)
        .Default(std::vector<int64_t>{})
        .Describe("Shape of the draws per distribution.");
    d->Field("get_prob", &MultinomialParam::get_prob)
        .Default(false)
        .Describe("Also return the log probability of each drawn category.");
    d->Field("dtype", &MultinomialParam::dtype)
        .Default(DType::kInt32)
        .Describe("Dtype of the drawn categories (uint8, int32, float16, float32, float64).");
  }
};

void MultinomialInit(MultinomialParam* p) {
  const DType d = p->dtype;
  HN_CHECK(d == DType::kUint8 || d == DType::kInt32 || d == DType::kFloat16 ||
               d == DType::kFloat32 || d == DType::kFloat64,
           kInvalidArgument)
      << "dtype=" << DTypeName(d) << " is not uint8, int32, float16, float32 or float64";
  for (int64_t v : p->shape)
    HN_CHECK(v >= 1, kInvalidArgument)
        << "shape=" << Shape(p->shape) << " must have positive dimensions";
}

bool MultinomialShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const MultinomialParam& p = attrs.Param<MultinomialParam>();
  const Shape& is = (*in)[0];
  if (is.ndim() == 0) return false;
  std::vector<int64_t> od(is.begin(), is.end() - 1);
  od.insert(od.end(), p.shape.begin(), p.shape.end());
  if (od.empty()) od.push_back(1);
  for (size_t i = 0; i < out->size(); ++i) AssignShape(attrs, out, i, Shape(od), "output");
  return is.IsKnown();
}

bool MultinomialType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const MultinomialParam& p = attrs.Param<MultinomialParam>();
  const DType d = (*in)[0];
  HN_CHECK(d == DType::kUnknown || d == DType::kFloat32 || d == DType::kFloat64, kTypeError)
      << DescribeNode(attrs) << ": probabilities have dtype " << DTypeName(d)
      << "; they must be float32 or float64";
  HN_CHECK((*out)[0] == DType::kUnknown || (*out)[0] == p.dtype, kTypeError)
      << DescribeNode(attrs) << ": output dtype " << DTypeName((*out)[0])
      << " differs from dtype=" << DTypeName(p.dtype);
  (*out)[0] = p.dtype;
  if (p.get_prob) {
    std::vector<DType> probs{(*in)[0]};
    std::vector<DType> logp{(*out)[1]};
    ElemwiseType(attrs, &probs, &logp);
    (*in)[0] = probs[0];
    (*out)[1] = logp[0];
  }
  return (*in)[0] != DType::kUnknown;
}

void MultinomialCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                        const std::vector<TBlob>& out) {
  const bool get_prob = attrs.Param<MultinomialParam>().get_prob;
  const Shape& is = in[0].shape;
  const int64_t k = is[is.ndim() - 1], dists = in[0].Size() / k;
  const int64_t per = out[0].Size() / dists;
  const double* probs = ReadParams(ctx, in[0], internal::kOpSlot0);
  double* cum = ctx.workspace->Get<double>(internal::kOpSlot1, static_cast<size_t>(k));
  double* picked_log =
      ctx.workspace->Get<double>(internal::kOpSlot2, static_cast<size_t>(out[0].Size()));
  Sampler s(internal::DrawRandomSeed());
  StoreAll(out[0], [&](int64_t i) {
    const int64_t row = i / per;
    const double* p = probs + row * k;
    if (i % per == 0) {
      // Cumulative table as MXNet keeps it (float32); a draw picks the first category whose
      // cumulative probability reaches it (the last one when the probabilities sum below 1).
      double acc = 0;
      for (int64_t c = 0; c < k; ++c) {
        acc += p[c];
        cum[c] = static_cast<float>(acc);
      }
    }
    const double u = static_cast<float>(s.Uniform());
    const int64_t c = std::min<int64_t>(std::lower_bound(cum, cum + k, u) - cum, k - 1);
    picked_log[i] = std::log(p[c]);
    return static_cast<double>(c);
  });
  if (get_prob) StoreAll(out[1], [&](int64_t i) { return picked_log[i]; });
}

// ---------------------------------------------------------------------------------------------
// _shuffle: a random permutation of the first axis (of the elements of a 1-D input)

void ShuffleCompute(const OpContext& ctx, const NodeAttrs&, const std::vector<TBlob>& in,
                    const std::vector<TBlob>& out) {
  const int64_t n = in[0].shape[0];
  const size_t row = static_cast<size_t>(in[0].Size() / n) * DTypeSize(in[0].dtype);
  int64_t* perm = ctx.workspace->Get<int64_t>(internal::kOpSlot0, static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) perm[i] = i;
  Sampler s(internal::DrawRandomSeed());
  for (int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<size_t>(s.Below(static_cast<uint64_t>(i) + 1));
    std::swap(perm[i], perm[j]);
  }
  const uint8_t* x = in[0].ptr<const uint8_t>();
  uint8_t* y = out[0].ptr<uint8_t>();
  if (x == y) {  // in place: go through a copy of the input rows
    uint8_t* copy = ctx.workspace->Get<uint8_t>(internal::kOpSlot1, static_cast<size_t>(n) * row);
    std::memcpy(copy, x, static_cast<size_t>(n) * row);
    x = copy;
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(y + static_cast<size_t>(i) * row,
                  x + static_cast<size_t>(perm[static_cast<size_t>(i)]) * row, row);
    return;
  }
  for (int64_t i = 0; i < n; ++i)
    std::memcpy(y + static_cast<size_t>(i) * row,
                x + static_cast<size_t>(perm[static_cast<size_t>(i)]) * row, row);
}

// ---------------------------------------------------------------------------------------------
// Registration: one row per distribution

// Registers _random_<dist>, _random_<dist>_like and _sample_<dist>; returns the first.
template <Dist D>
Op& RegisterDistribution(OpRegistry* r) {
  const DistInfo& info = Info(D);
  const std::string name = info.name;
  Op& random =
      r->Register("_random_" + name)
          .Describe(std::string("Draws samples, ") + info.summary + ", of the given shape.")
          .AddAlias("random_" + name)
          .SetParam<RandomParam<D, false>>(RandomInit<D, false>)
          .SetInputNames(std::vector<std::string>{})
          .SetInferShape(RandomShape<D>)
          .SetInferType(RandomType<D>)
          .SetCompute(RandomCompute<D, false>);
  r->Register("_random_" + name + "_like")
      .Describe(std::string("Draws samples, ") + info.summary + ", of data's shape and dtype.")
      .SetParam<RandomParam<D, true>>(RandomInit<D, true>)
      .SetInputNames({"data"})
      .SetInferShape(ElemwiseShape)
      .SetInferType(LikeType)
      .SetCompute(RandomCompute<D, true>);
  std::vector<std::string> inputs{info.input[0]};
  if (TwoParams(D)) inputs.push_back(info.input[1]);
  r->Register("_sample_" + name)
      .Describe(std::string("Draws `shape` samples, ") + info.summary +
                ", for every element of the parameter arrays.")
      .AddAlias("sample_" + name)
      .SetParam<MultiSampleParam>(MultiSampleInit)
      .SetInputNames(inputs)
      .SetInferShape(MultiSampleShape)
      .SetInferType(MultiSampleType)
      .SetCompute(MultiSampleCompute<D>);
  return random;
}

}  // namespace

void RegisterRandomOps(OpRegistry* r) {
  RegisterDistribution<Dist::kUniform>(r).AddAlias("uniform");  // MXNet's older names
  RegisterDistribution<Dist::kNormal>(r).AddAlias("normal");
  RegisterDistribution<Dist::kGamma>(r);
  RegisterDistribution<Dist::kExponential>(r);
  RegisterDistribution<Dist::kPoisson>(r);
  RegisterDistribution<Dist::kNegativeBinomial>(r);
  RegisterDistribution<Dist::kGeneralizedNegativeBinomial>(r);

  r->Register("_random_randint")
      .Describe("Draws integers uniformly from [low, high), of the given shape.")
      .AddAlias("random_randint")
      .SetParam<RandIntParam>(RandIntInit)
      .SetInputNames(std::vector<std::string>{})
      .SetInferShape([](const NodeAttrs& attrs, std::vector<Shape>*, std::vector<Shape>* out) {
        return ShapeFromAttr(attrs, attrs.Param<RandIntParam>().shape, out);
      })
      .SetInferType([](const NodeAttrs& attrs, std::vector<DType>*, std::vector<DType>* out) {
        return AssignSampleType(attrs, attrs.Param<RandIntParam>().dtype, DType::kInt32, out, 0);
      })
      .SetCompute(RandIntCompute);

  r->Register("_sample_multinomial")
      .Describe(
          "Draws categories from the distributions along the last axis of data (shape "
          "draws each; a category is picked by where a uniform draw falls in the "
          "cumulative probabilities), optionally with their log probabilities.")
      .AddAlias("sample_multinomial")
      .SetParam<MultinomialParam>(MultinomialInit)
      .SetInputNames({"data"})
      .SetNumOutputs([](const NodeAttrs& attrs) -> uint32_t {
        return attrs.Param<MultinomialParam>().get_prob ? 2 : 1;
      })
      .SetInferShape(MultinomialShape)
      .SetInferType(MultinomialType)
      .SetCompute(MultinomialCompute);

  r->Register("_shuffle")
      .Describe("Randomly permutes the input along its first axis.")
      .AddAlias("shuffle")
      .SetInputNames({"data"})
      .SetInferShape(ElemwiseShape)
      .SetInferType(ElemwiseType)
      .SetCompute(ShuffleCompute)
      .SetInplace({{0, 0}});
}

}  // namespace hybridnet
