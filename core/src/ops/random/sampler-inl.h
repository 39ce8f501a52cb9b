// The draws of the random sampling ops. Each op call seeds one Sampler from the library's
// global generator (internal::DrawRandomSeed), so after Seed(s) a program repeats its draws,
// eagerly or in a graph. The engine is std::mt19937_64, whose sequence the C++ standard fixes,
// and every distribution is a transform written here (not std::*_distribution, whose output
// differs between standard libraries), so a seed gives the same numbers on every platform.
//
// Every transform terminates for every parameter, also where MXNet's kernels loop forever
// (gamma with alpha <= 0) or read garbage: invalid parameters give NaN.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

namespace hybridnet {
namespace internal {

class Sampler {
 public:
  explicit Sampler(uint64_t seed) : engine_(seed) {}

  /// Uniform in [0, 1) with 53 random bits.
  double Uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

  /// Uniform integer in [0, n), n >= 1, without modulo bias.
  uint64_t Below(uint64_t n) {
    const uint64_t limit =
        std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % n;
    uint64_t v = engine_();
    while (v >= limit) v = engine_();
    return v % n;
  }

  /// Standard normal (Marsaglia's polar method; the second value of a pair is kept).
  double Normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u = 0, v = 0, s = 0;
    do {
      u = 2 * Uniform() - 1;
      v = 2 * Uniform() - 1;
      s = u * u + v * v;
    } while (s >= 1 || s == 0);
    const double f = std::sqrt(-2 * std::log(s) / s);
    spare_ = v * f;
    has_spare_ = true;
    return u * f;
  }

  /// Gamma with shape alpha and scale beta (Marsaglia and Tsang, alpha < 1 boosted by
  /// U^(1/alpha), as MXNet samples it).
  double Gamma(double alpha, double beta) {
    if (!(alpha > 0) || std::isinf(alpha)) return std::numeric_limits<double>::quiet_NaN();
    const double d = alpha < 1 ? alpha + 2.0 / 3.0 : alpha - 1.0 / 3.0;
    const double c = 1 / std::sqrt(9 * d);
    double sample = 0;
    for (;;) {
      const double z = Normal();
      const double x = 1 + c * z;
      if (x <= 0) continue;
      const double v = x * x * x;
      if (std::log(1 - Uniform()) < 0.5 * z * z + d * (1 - v + std::log(v))) {
        sample = d * v * beta;
        break;
      }
    }
    return alpha < 1 ? sample * std::pow(Uniform(), 1 / alpha) : sample;
  }

  /// Exponential with rate lam.
  double Exponential(double lam) { return -std::log(1 - Uniform()) / lam; }

  /// Poisson with mean lam: multiplication of uniforms below 12, the rejection method of
  /// Numerical Recipes above (as MXNet). lam <= 0 or NaN gives 0 (MXNet's result), +inf gives
  /// +inf.
  double Poisson(double lam) {
    if (!(lam > 0)) return 0;
    if (std::isinf(lam)) return lam;
    if (lam < 12) {
      const double t = std::exp(-lam);
      double x = 0;
      for (double prod = Uniform(); prod > t; prod *= Uniform()) x += 1;
      return x;
    }
    const double pi = 3.14159265358979323846;
    const double sq = std::sqrt(2 * lam), loglam = std::log(lam);
    const double g = lam * loglam - std::lgamma(lam + 1);
    double em = 0, t = 0, y = 0;
    do {
      do {
        y = std::tan(pi * Uniform());
        em = sq * y + lam;
      } while (em < 0);
      em = std::floor(em);
      t = 0.9 * (1 + y * y) * std::exp(em * loglam - std::lgamma(em + 1) - g);
    } while (Uniform() > t);
    return em;
  }

  /// Negative binomial: failures before k successes with success probability p (a
  /// gamma-Poisson mixture, as MXNet).
  double NegativeBinomial(double k, double p) {
    const double lam = k == 0 ? 0 : Gamma(k, (1 - p) / p);
    return std::isnan(lam) ? lam : Poisson(lam);
  }

  /// Generalized negative binomial with mean mu and dispersion alpha (Poisson when alpha = 0).
  double GeneralizedNegativeBinomial(double mu, double alpha) {
    const double lam = alpha == 0 ? mu : Gamma(1 / alpha, alpha * mu);
    return std::isnan(lam) ? lam : Poisson(lam);
  }

 private:
  std::mt19937_64 engine_;
  double spare_ = 0;
  bool has_spare_ = false;
};

}  // namespace internal
}  // namespace hybridnet
