// Conformance cases: the random sampling ops and the densities (_random_pdf_*).
//
// Sampling ops get two kinds of cases. Statistical ones draw 20000 values and check the range,
// the mean and the variance against the distribution's (within about six standard errors);
// MXNet's generator differs, so they are not compared with MXNet. Degenerate ones use
// parameters whose draws are certain (low == high, scale 1e-7, lam = 0 or inf, p = 1, one-hot
// probabilities, constant rows to shuffle): those compare exactly with a reference and with live
// MXNet, which checks attribute parsing, shapes and dtypes. The densities are deterministic and
// checked against MXNet on random parameters.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <sstream>

#include "conformance.h"

namespace hybridnet {
namespace conformance {
namespace {

constexpr int64_t kRows = 100, kCols = 200;  // 20000 draws

// What a statistical check expects of a group of draws.
struct Expect {
  double mean, var;
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool integral = false;
  bool hi_open = false;  // values must stay below hi
};

// "" when the draws v[begin, end) fit `e`.
std::string Judge(const std::vector<double>& v, size_t begin, size_t end, const Expect& e) {
  const double n = static_cast<double>(end - begin);
  double sum = 0, sq = 0;  // of the deviations from the expected mean (no cancellation)
  for (size_t i = begin; i < end; ++i) {
    const double x = v[i];
    std::ostringstream os;
    if (!(x >= e.lo && (e.hi_open ? x < e.hi : x <= e.hi)) || (e.integral && x != std::round(x))) {
      os << "draw " << x << " at " << i << " is outside the support";
      return os.str();
    }
    sum += x - e.mean;
    sq += (x - e.mean) * (x - e.mean);
  }
  const double mean = e.mean + sum / n, var = sq / n - (sum / n) * (sum / n);
  std::ostringstream os;
  if (std::abs(mean - e.mean) > 6 * std::sqrt(e.var / n) + 1e-12)
    os << "mean " << mean << ", expected " << e.mean << "; ";
  if (std::abs(var - e.var) > 0.15 * e.var + 1e-12)
    os << "variance " << var << ", expected " << e.var;
  return os.str();
}

// One expectation for every group of `group` consecutive draws of output 0 (a group per
// parameter element for _sample_*).
StatCheck Draws(std::vector<Expect> per_group) {
  return [per_group](const std::vector<RefTensor>&, const std::vector<RefTensor>& out) {
    const size_t group = out[0].v.size() / per_group.size();
    std::string why;
    for (size_t g = 0; g < per_group.size(); ++g) {
      const std::string w = Judge(out[0].v, g * group, (g + 1) * group, per_group[g]);
      if (!w.empty()) why += "group " + std::to_string(g) + ": " + w + "\n";
    }
    return why;
  };
}

StatCheck Draws(Expect e) { return Draws(std::vector<Expect>{e}); }

// Every output element equals `value` (within atol).
RefFn Constant(double value, Shape s) {
  return [value, s](const std::vector<RefTensor>&) {
    RefTensor t(s);
    std::fill(t.v.begin(), t.v.end(), value);
    return std::vector<RefTensor>{t};
  };
}

// Output element i is value(i / per) (one value per parameter element).
RefFn PerParameter(std::function<double(const std::vector<RefTensor>&, int64_t)> value, Shape s,
                   int64_t per) {
  return [value, s, per](const std::vector<RefTensor>& in) {
    RefTensor t(s);
    for (int64_t i = 0; i < t.size(); ++i) t[i] = value(in, i / per);
    return std::vector<RefTensor>{t};
  };
}

std::string ShapeText(Shape s) { return s.ToString(); }

// A generator per input.
InputGen PerInput(std::vector<InputGen> gens) {
  return [gens](std::mt19937& rng, size_t input, int64_t j) { return gens[input](rng, input, j); };
}

// Element j of the input is values[j % size] (one value per parameter element).
InputGen ByValues(std::vector<double> values) {
  return [values](std::mt19937&, size_t, int64_t j) {
    return values[static_cast<size_t>(j) % values.size()];
  };
}

InputGen Fixed(double v) {
  return [v](std::mt19937&, size_t, int64_t) { return v; };
}

// The same value for every input at one position (equal low and high arrays).
InputGen SameAcrossInputs(std::function<double(int64_t)> f) {
  return [f](std::mt19937&, size_t, int64_t j) { return f(j); };
}

double Lgamma(double x) { return std::lgamma(x); }

}  // namespace

HN_CONFORMANCE_CASES(RandomScalar) {
  const Shape big{kRows, kCols};
  const std::string shape = ShapeText(big);
  auto stat = [&](const char* op, AttrDict attrs, Expect e, const char* note) {
    attrs["shape"] = shape;
    cases->push_back(Statistical(Case(op, attrs, {}, nullptr, note), Draws(e)));
  };
  stat("_random_uniform", {{"low", "-1"}, {"high", "3"}}, {1, 16.0 / 12, -1, 3, false, true},
       "stats");
  stat("random_uniform", {{"dtype", "float64"}}, {0.5, 1.0 / 12, 0, 1, false, true},
       "alias_default_float64");
  stat("_random_normal", {{"loc", "2"}, {"scale", "0.5"}}, {2, 0.25}, "stats");
  stat("normal", {{"dtype", "float16"}}, {0, 1}, "old_alias_float16");
  stat("_random_gamma", {{"alpha", "2.5"}, {"beta", "0.4"}}, {1, 0.4, 0}, "stats");
  stat("random_gamma", {{"alpha", "0.5"}, {"beta", "2"}}, {1, 2, 0}, "alias_alpha_below_1");
  stat("_random_exponential", {{"lam", "2"}}, {0.5, 0.25, 0}, "stats");
  stat("_random_poisson", {{"lam", "3.5"}}, {3.5, 3.5, 0, 1e9, true}, "stats");
  stat("random_poisson", {{"lam", "30"}}, {30, 30, 0, 1e9, true}, "alias_large_lam");
  stat("_random_negative_binomial", {{"k", "3"}, {"p", "0.4"}}, {4.5, 11.25, 0, 1e9, true},
       "stats");
  stat("_random_generalized_negative_binomial", {{"mu", "2"}, {"alpha", "0.3"}},
       {2, 3.2, 0, 1e9, true}, "stats");
  stat("random_generalized_negative_binomial", {{"mu", "1.5"}, {"alpha", "0"}},
       {1.5, 1.5, 0, 1e9, true}, "alias_poisson");
  stat("_random_randint", {{"low", "-3"}, {"high", "5"}}, {0.5, 5.25, -3, 5, true, true}, "stats");
  stat("random_randint", {{"low", "1000000000000"}, {"high", "1000000000002"}, {"dtype", "int64"}},
       {1000000000000.5, 0.25, 1000000000000, 1000000000002, true, true}, "alias_int64");

  // Certain draws, compared with MXNet.
  const Shape s{2, 3};
  auto sure = [&](const char* op, AttrDict attrs, double value, const char* note, double atol) {
    attrs["shape"] = ShapeText(s);
    cases->push_back(WithTol(Case(op, attrs, {}, Constant(value, s), note), 0, atol));
  };
  sure("_random_uniform", {{"low", "1.5"}, {"high", "1.5"}}, 1.5, "certain", 0);
  sure("_random_normal", {{"loc", "1"}, {"scale", "1e-7"}}, 1, "certain", 1e-5);
  sure("_random_gamma", {{"alpha", "1e12"}, {"beta", "1e-12"}}, 1, "certain", 1e-4);
  sure("_random_exponential", {{"lam", "inf"}}, 0, "certain", 0);
  sure("_random_poisson", {{"lam", "0"}}, 0, "certain", 0);
  sure("_random_negative_binomial", {{"k", "2"}, {"p", "1"}}, 0, "certain", 0);
  sure("_random_generalized_negative_binomial", {{"mu", "0"}, {"alpha", "1"}}, 0, "certain", 0);
  OpCase randint = Case("_random_randint", {{"low", "4"}, {"high", "5"}, {"shape", "(3,)"}}, {},
                        Constant(4, {3}), "certain");
  cases->push_back(randint);
  cases->push_back(WithTol(
      Case("uniform", {{"low", "-2"}, {"high", "-2"}, {"shape", "(4,)"}, {"dtype", "float64"}}, {},
           Constant(-2, {4}), "old_alias_certain"),
      0, 0));
}

HN_CONFORMANCE_CASES(RandomLike) {
  const Shape big{kRows, kCols};
  auto stat = [&](const char* op, AttrDict attrs, Expect e, DType dtype) {
    OpCase c = Statistical(Case(op, attrs, {big}, nullptr, "stats"), Draws(e));
    c.dtypes = {dtype};
    cases->push_back(c);
  };
  stat("_random_uniform_like", {{"low", "2"}, {"high", "4"}}, {3, 4.0 / 12, 2, 4, false, true},
       DType::kFloat32);
  stat("_random_normal_like", {{"scale", "3"}}, {0, 9}, DType::kFloat64);
  stat("_random_gamma_like", {{"alpha", "4"}}, {4, 4, 0}, DType::kFloat32);
  stat("_random_exponential_like", {{"lam", "0.5"}}, {2, 4, 0}, DType::kFloat32);
  stat("_random_poisson_like", {{"lam", "7"}}, {7, 7, 0, 1e9, true}, DType::kFloat32);
  stat("_random_negative_binomial_like", {{"k", "5"}, {"p", "0.7"}},
       {5 * 0.3 / 0.7, 5 * 0.3 / 0.49, 0, 1e9, true}, DType::kFloat32);
  stat("_random_generalized_negative_binomial_like", {{"mu", "4"}, {"alpha", "0.25"}},
       {4, 8, 0, 1e9, true}, DType::kFloat32);

  const Shape s{3, 2};
  auto sure = [&](const char* op, AttrDict attrs, double value, double atol) {
    cases->push_back(WithTol(Case(op, attrs, {s}, Constant(value, s), "certain"), 0, atol));
  };
  sure("_random_uniform_like", {{"low", "7"}, {"high", "7"}}, 7, 0);
  sure("_random_normal_like", {{"loc", "-1"}, {"scale", "1e-7"}}, -1, 1e-5);
  sure("_random_gamma_like", {{"alpha", "1e12"}, {"beta", "3e-12"}}, 3, 3e-4);
  sure("_random_exponential_like", {{"lam", "inf"}}, 0, 0);
  sure("_random_poisson_like", {{"lam", "0"}}, 0, 0);
  sure("_random_negative_binomial_like", {{"k", "4"}, {"p", "1"}}, 0, 0);
  sure("_random_generalized_negative_binomial_like", {{"mu", "0"}, {"alpha", "0.5"}}, 0, 0);
}

HN_CONFORMANCE_CASES(RandomArrays) {
  // Two parameter elements, 10000 draws each.
  const AttrDict draws{{"shape", "(10000,)"}};
  auto two = [&](const char* op, std::vector<Shape> inputs, InputGen gen, std::vector<Expect> e) {
    cases->push_back(
        Statistical(WithGen(Case(op, draws, inputs, nullptr, "stats"), gen), Draws(e)));
  };
  two("_sample_uniform", {{2}, {2}}, PerInput({ByValues({0, 10}), ByValues({1, 20})}),
      {{0.5, 1.0 / 12, 0, 1, false, true}, {15, 100.0 / 12, 10, 20, false, true}});
  two("sample_normal", {{2}, {2}}, PerInput({ByValues({-1, 5}), ByValues({0.5, 2})}),
      {{-1, 0.25}, {5, 4}});
  two("_sample_gamma", {{2}, {2}}, PerInput({ByValues({3, 0.7}), ByValues({0.5, 2})}),
      {{1.5, 0.75, 0}, {1.4, 2.8, 0}});
  two("_sample_exponential", {{2}}, PerInput({ByValues({4, 0.25})}),
      {{0.25, 0.0625, 0}, {4, 16, 0}});
  two("_sample_poisson", {{2}}, PerInput({ByValues({0.5, 20})}),
      {{0.5, 0.5, 0, 1e9, true}, {20, 20, 0, 1e9, true}});
  two("_sample_negative_binomial", {{2}, {2}}, PerInput({ByValues({2, 6}), ByValues({0.5, 0.8})}),
      {{2, 4, 0, 1e9, true}, {1.5, 1.875, 0, 1e9, true}});
  two("_sample_generalized_negative_binomial", {{2}, {2}},
      PerInput({ByValues({3, 1}), ByValues({0.5, 0})}),
      {{3, 7.5, 0, 1e9, true}, {1, 1, 0, 1e9, true}});

  // Certain draws: (2, 3) parameters, (2,) draws each -> (2, 3, 2).
  const AttrDict few{{"shape", "(2,)"}};
  const Shape ps{2, 3}, os{2, 3, 2};
  const InputGen spread =
      SameAcrossInputs([](int64_t j) { return 0.5 + 0.25 * static_cast<double>(j); });
  auto first = [](const std::vector<RefTensor>& in, int64_t p) { return in[0][p]; };
  cases->push_back(
      WithTol(WithGen(Case("_sample_uniform", few, {ps, ps}, PerParameter(first, os, 2), "certain"),
                      spread),
              0, 0));
  cases->push_back(
      WithTol(WithGen(Case("_sample_normal", few, {ps, ps}, PerParameter(first, os, 2), "certain"),
                      PerInput({spread, Fixed(1e-7)})),
              0, 1e-5));
  cases->push_back(WithTol(WithGen(Case("_sample_gamma", few, {ps, ps},
                                        PerParameter([](const std::vector<RefTensor>& in,
                                                        int64_t p) { return in[1][p] * 1e12; },
                                                     os, 2),
                                        "certain"),
                                   PerInput({Fixed(1e12), SameAcrossInputs([](int64_t j) {
                                               return (1 + 0.5 * static_cast<double>(j)) * 1e-12;
                                             })})),
                           1e-4, 0));
  const double inf = std::numeric_limits<double>::infinity();
  cases->push_back(
      WithGen(Case("_sample_exponential", few, {ps}, Constant(0, os), "certain"), Fixed(inf)));
  cases->push_back(
      WithGen(Case("_sample_poisson", few, {ps}, Constant(0, os), "certain"), Fixed(0)));
  cases->push_back(
      WithGen(Case("_sample_negative_binomial", few, {ps, ps}, Constant(0, os), "certain"),
              PerInput({Fixed(3), Fixed(1)})));
  cases->push_back(WithGen(
      Case("_sample_generalized_negative_binomial", few, {ps, ps}, Constant(0, os), "certain"),
      PerInput({Fixed(0), Fixed(2)})));
  OpCase dtype = WithGen(Case("sample_uniform", {{"dtype", "float64"}}, {{3}, {3}},
                              PerParameter(first, {3}, 1), "alias_float64_no_shape"),
                         spread);
  cases->push_back(dtype);
}

HN_CONFORMANCE_CASES(RandomMultinomialShuffle) {
  // Category frequencies: rows (0.1, 0.2, 0.3, 0.4) and (0.7, 0, 0.3, 0).
  const std::vector<std::vector<double>> probs{{0.1, 0.2, 0.3, 0.4}, {0.7, 0, 0.3, 0}};
  const StatCheck frequencies = [probs](const std::vector<RefTensor>&,
                                        const std::vector<RefTensor>& out) {
    std::string why;
    const int64_t per = out[0].size() / 2;
    for (int64_t r = 0; r < 2; ++r) {
      std::map<int64_t, double> count;
      for (int64_t i = 0; i < per; ++i) count[static_cast<int64_t>(out[0][r * per + i])] += 1;
      for (int64_t c = 0; c < 4; ++c) {
        const double p = probs[static_cast<size_t>(r)][static_cast<size_t>(c)];
        const double f = count[c] / static_cast<double>(per);
        if (std::abs(f - p) > 6 * std::sqrt(p * (1 - p) / static_cast<double>(per)) + 1e-12)
          why += "row " + std::to_string(r) + " category " + std::to_string(c) + ": frequency " +
                 std::to_string(f) + ", probability " + std::to_string(p) + "\n";
      }
      if (out.size() > 1) {  // log probability of the drawn category
        for (int64_t i = 0; i < per; ++i) {
          const auto c = static_cast<size_t>(out[0][r * per + i]);
          if (std::abs(out[1][r * per + i] - std::log(probs[static_cast<size_t>(r)][c])) > 1e-6)
            return std::string("a log probability is wrong");
        }
      }
    }
    return why;
  };
  const InputGen table = [probs](std::mt19937&, size_t, int64_t j) {
    return probs[static_cast<size_t>(j / 4)][static_cast<size_t>(j % 4)];
  };
  cases->push_back(Statistical(
      WithGen(Case("_sample_multinomial", {{"shape", "(20000,)"}}, {{2, 4}}, nullptr, "stats"),
              table),
      frequencies));
  cases->push_back(Statistical(
      WithGen(Case("sample_multinomial",
                   {{"shape", "(100, 200)"}, {"get_prob", "True"}, {"dtype", "float32"}}, {{2, 4}},
                   nullptr, "alias_get_prob"),
              table),
      frequencies));
  // Certain: one-hot rows; draws are the hot category, log probability 0.
  const InputGen one_hot = [](std::mt19937&, size_t, int64_t j) {
    return j % 4 == (j / 4 + 1) % 4 ? 1.0 : 0.0;
  };
  OpCase hot = Case(
      "_sample_multinomial", {{"shape", "(2,)"}, {"get_prob", "True"}}, {{3, 4}},
      [](const std::vector<RefTensor>&) {
        RefTensor cat(Shape{3, 2}), logp(Shape{3, 2});
        for (int64_t i = 0; i < 6; ++i) cat[i] = static_cast<double>((i / 2 + 1) % 4);
        return std::vector<RefTensor>{cat, logp};
      },
      "certain");
  cases->push_back(WithGen(hot, one_hot));
  OpCase hot1d =
      Case("_sample_multinomial", {{"dtype", "float32"}}, {{3}}, Constant(2, {1}), "certain_1d");
  hot1d.gen = [](std::mt19937&, size_t, int64_t j) { return j == 2 ? 1.0 : 0.0; };
  cases->push_back(hot1d);

  // _shuffle: the rows are a permutation of the input's, and not left in place.
  const StatCheck permuted = [](const std::vector<RefTensor>& in,
                                const std::vector<RefTensor>& out) {
    const int64_t n = in[0].shape[0], row = in[0].size() / n;
    std::vector<std::vector<double>> a, b;
    int64_t fixed = 0;
    for (int64_t i = 0; i < n; ++i) {
      a.emplace_back(in[0].v.begin() + i * row, in[0].v.begin() + (i + 1) * row);
      b.emplace_back(out[0].v.begin() + i * row, out[0].v.begin() + (i + 1) * row);
      fixed += a.back() == b.back();
    }
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    if (a != b) return std::string("the output rows are not a permutation of the input rows");
    if (fixed > n / 10) return "too many rows stayed in place: " + std::to_string(fixed);
    return std::string();
  };
  cases->push_back(Statistical(Case("_shuffle", {}, {{1000, 3}}, nullptr, "stats"), permuted));
  OpCase ints = Statistical(Case("shuffle", {}, {{5000}}, nullptr, "alias_1d_int"), permuted);
  ints.dtypes = {DType::kInt32};
  ints.gen = [](std::mt19937&, size_t, int64_t j) { return static_cast<double>(j); };
  cases->push_back(ints);
  // Certain: identical rows.
  cases->push_back(
      WithGen(Case(
                  "_shuffle", {}, {{4, 3}},
                  [](const std::vector<RefTensor>& in) { return std::vector<RefTensor>{in[0]}; },
                  "certain"),
              [](std::mt19937&, size_t, int64_t j) { return static_cast<double>(j % 3); }));
}

namespace {

// Reference densities (log densities), in double.
double LogNegBinomial(double x, double k, double p) {
  return Lgamma(x + k) - Lgamma(x + 1) - Lgamma(k) + k * std::log(p) + x * std::log(1 - p);
}

// For a density with parameters per leading element: out[i] = f(sample[i], a[i/per], b[i/per]).
RefFn DensityRef(std::function<double(double, double, double)> logpdf, bool is_log) {
  return [logpdf, is_log](const std::vector<RefTensor>& in) {
    RefTensor out(in[0].shape);
    const int64_t per = in[0].size() / in[1].size();
    for (int64_t i = 0; i < out.size(); ++i) {
      const double b = in.size() > 2 ? in[2][i / per] : 0;
      const double l = logpdf(in[0][i], in[1][i / per], b);
      out[i] = is_log ? l : std::exp(l);
    }
    return std::vector<RefTensor>{out};
  };
}

RefFn DirichletRef(bool is_log) {
  return [is_log](const std::vector<RefTensor>& in) {
    const Shape& s = in[0].shape;
    const int64_t k = s[s.ndim() - 1];
    RefTensor out(s.ndim() == 1 ? Shape{1} : Shape(s.begin(), s.end() - 1));
    const int64_t per = out.size() / (in[1].size() / k);
    for (int64_t i = 0; i < out.size(); ++i) {
      double sum_a = 0, sum_lg = 0, sum_x = 0;
      for (int64_t j = 0; j < k; ++j) {
        const double a = in[1][(i / per) * k + j];
        sum_a += a;
        sum_lg += Lgamma(a);
        sum_x += (a - 1) * std::log(in[0][i * k + j]);
      }
      const double l = sum_x + Lgamma(sum_a) - sum_lg;
      out[i] = is_log ? l : std::exp(l);
    }
    return std::vector<RefTensor>{out};
  };
}

}  // namespace

HN_CONFORMANCE_CASES(RandomPdf) {
  struct Row {
    const char* op;
    std::vector<Shape> inputs;
    InputGen gen;
    std::function<double(double, double, double)> logpdf;
  };
  const InputGen counts = Integers(0, 6);
  const double kPi = 3.14159265358979323846;
  const std::vector<Row> rows{
      {"_random_pdf_uniform",
       {{2, 3}, {2}, {2}},
       PerInput({Uniform(-1, 1), Uniform(-3, -1), Uniform(1, 3)}),
       [](double, double lo, double hi) { return -std::log(hi - lo); }},
      {"_random_pdf_normal",
       {{3, 4}, {3}, {3}},
       PerInput({Uniform(-2, 2), Uniform(-1, 1), Uniform(0.5, 2)}),
       [kPi](double x, double mu, double s) {
         return -0.5 * (x - mu) * (x - mu) / (s * s) - std::log(std::sqrt(2 * kPi) * s);
       }},
      {"_random_pdf_gamma",
       {{2, 2, 3}, {2, 2}, {2, 2}},
       PerInput({Uniform(0.2, 3), Uniform(0.5, 3), Uniform(0.5, 2)}),
       [](double x, double a, double b) {
         return a * std::log(b) + (a - 1) * std::log(x) - b * x - Lgamma(a);
       }},
      {"_random_pdf_exponential",
       {{4, 3}, {4}},
       PerInput({Uniform(0, 3), Uniform(0.5, 2)}),
       [](double x, double lam, double) { return std::log(lam) - lam * x; }},
      {"_random_pdf_poisson",
       {{2, 5}, {2}},
       PerInput({counts, Uniform(0.5, 4)}),
       [](double x, double lam, double) { return x * std::log(lam) - Lgamma(x + 1) - lam; }},
      {"_random_pdf_negative_binomial",
       {{3, 4}, {3}, {3}},
       PerInput({counts, Uniform(1, 5), Uniform(0.2, 0.8)}),
       [](double x, double k, double p) { return LogNegBinomial(x, k, p); }},
      {"_random_pdf_generalized_negative_binomial",
       {{2, 4}, {2}, {2}},
       PerInput({counts, Uniform(0.5, 4), Uniform(0.2, 1.5)}),
       [](double x, double mu, double alpha) {
         return LogNegBinomial(x, 1 / alpha, 1 / (mu * alpha + 1));
       }},
  };
  for (const Row& r : rows) {
    for (bool is_log : {false, true}) {
      OpCase c = WithGen(Case(r.op, {{"is_log", is_log ? "True" : "False"}}, r.inputs,
                              DensityRef(r.logpdf, is_log), is_log ? "log" : "density"),
                         r.gen);
      cases->push_back(WithTol(c, 1e-4, 1e-6));
    }
  }
  // Aliases, float64, parameters for every sample (same shapes).
  OpCase alias = WithGen(Case("random_pdf_normal", {}, {{2, 3}, {2, 3}, {2, 3}},
                              DensityRef(rows[1].logpdf, false), "alias_float64_full"),
                         rows[1].gen);
  alias.dtypes = {DType::kFloat64, DType::kFloat64, DType::kFloat64};
  cases->push_back(alias);
  cases->push_back(WithTol(WithGen(Case("random_pdf_poisson", {{"is_log", "1"}}, {{5}, {5}},
                                        DensityRef(rows[4].logpdf, true), "alias_full"),
                                   rows[4].gen),
                           1e-4, 1e-6));

  const InputGen simplex = PerInput({Uniform(0.05, 1), Uniform(0.5, 3)});
  cases->push_back(WithTol(WithGen(Case("_random_pdf_dirichlet", {}, {{2, 3, 4}, {2, 4}},
                                        DirichletRef(false), "density"),
                                   simplex),
                           1e-4, 1e-6));
  cases->push_back(WithTol(WithGen(Case("_random_pdf_dirichlet", {{"is_log", "True"}},
                                        {{2, 3, 4}, {2, 4}}, DirichletRef(true), "log"),
                                   simplex),
                           1e-4, 1e-6));
  cases->push_back(WithTol(WithGen(Case("random_pdf_dirichlet", {{"is_log", "True"}}, {{3}, {3}},
                                        DirichletRef(true), "alias_single"),
                                   simplex),
                           1e-4, 1e-6));
}

HN_ERROR_CASES(Random) {
  cases->push_back(Rejected("_random_uniform", {{"low", "2"}, {"high", "1"}, {"shape", "(2,)"}}, {},
                            StatusCode::kInvalidArgument, {"_random_uniform(node)", "low=2"}));
  cases->push_back(Rejected("_random_normal", {{"scale", "0"}, {"shape", "(2,)"}}, {},
                            StatusCode::kInvalidArgument, {"_random_normal(node)", "scale"}));
  cases->push_back(Rejected("_random_gamma", {{"alpha", "-1"}, {"shape", "(2,)"}}, {},
                            StatusCode::kInvalidArgument, {"_random_gamma(node)", "alpha"}));
  cases->push_back(Rejected("_random_exponential_like", {{"lam", "0"}}, {{2}},
                            StatusCode::kInvalidArgument,
                            {"_random_exponential_like(node)", "lam"}));
  cases->push_back(Rejected("_random_negative_binomial", {{"p", "0"}, {"shape", "(2,)"}}, {},
                            StatusCode::kInvalidArgument,
                            {"_random_negative_binomial(node)", "p=0"}));
  cases->push_back(Rejected("_random_uniform", {{"dtype", "int32"}, {"shape", "(2,)"}}, {},
                            StatusCode::kInvalidArgument, {"_random_uniform(node)", "int32"}));
  cases->push_back(Rejected("_random_uniform", {}, {}, StatusCode::kShapeError,
                            {"_random_uniform(node)", "cannot infer"}));
  cases->push_back(Rejected("_random_randint", {{"low", "3"}, {"high", "3"}, {"shape", "(2,)"}}, {},
                            StatusCode::kInvalidArgument, {"_random_randint(node)", "low=3"}));
  cases->push_back(Rejected("_random_normal_like", {}, {{2}}, StatusCode::kTypeError,
                            {"_random_normal_like(node)", "int32"}, {DType::kInt32}));
  cases->push_back(Rejected("_sample_normal", {}, {{2}, {3}}, StatusCode::kShapeError,
                            {"_sample_normal(node)", "parameter input 1"}));
  cases->push_back(Rejected("_sample_poisson", {{"shape", "(0,)"}}, {{2}},
                            StatusCode::kInvalidArgument, {"_sample_poisson(node)", "shape"}));
  cases->push_back(Rejected("_sample_multinomial", {{"dtype", "int64"}}, {{2, 3}},
                            StatusCode::kInvalidArgument, {"_sample_multinomial(node)", "int64"}));
  cases->push_back(Rejected("_random_pdf_normal", {}, {{2}, {2, 3}, {2, 3}},
                            StatusCode::kShapeError,
                            {"_random_pdf_normal(node)", "more dimensions"}));
  cases->push_back(Rejected("_random_pdf_gamma", {}, {{2, 3}, {2}, {3}}, StatusCode::kShapeError,
                            {"_random_pdf_gamma(node)", "input 2"}));
}

}  // namespace conformance
}  // namespace hybridnet
