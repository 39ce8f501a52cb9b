// The matrix products (kernels/blas.h) on both libraries they can run on: OpenBLAS, and
// oneDNN's sgemm, which takes over where OpenBLAS falls back to SSE kernels on a CPU it does not
// know, and the products it runs faster where OpenBLAS runs AVX-512 ones. Each must compute the
// product it is asked for (transposes, row strides, beta), and an MLP must give the same results
// eagerly and as a graph on either.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/time.h>

#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "hybridnet/executor.h"
#include "hybridnet/imperative.h"
#include "hybridnet/ndarray.h"
#include "hybridnet/symbol.h"
#include "kernels/blas.h"

extern "C" char* openblas_get_corename(void);

namespace hybridnet {
namespace {

using internal::MatrixLibrary;

// Runs the test body on one library, then puts the process's choice back.
class OnLibrary {
 public:
  explicit OnLibrary(MatrixLibrary library) : before_(internal::FloatMatrixLibrary()) {
    internal::SetFloatMatrixLibrary(library);
  }
  ~OnLibrary() { internal::SetFloatMatrixLibrary(before_); }
  OnLibrary(const OnLibrary&) = delete;
  OnLibrary& operator=(const OnLibrary&) = delete;

 private:
  MatrixLibrary before_;
};

const char* Name(MatrixLibrary library) {
  switch (library) {
    case MatrixLibrary::kOpenBlas:
      return "OpenBLAS";
    case MatrixLibrary::kOneDnn:
      return "oneDNN";
    case MatrixLibrary::kOpenBlasAndOneDnn:
      break;
  }
  return "OpenBLAS and oneDNN";
}

constexpr MatrixLibrary kEveryLibrary[] = {MatrixLibrary::kOpenBlas, MatrixLibrary::kOneDnn,
                                           MatrixLibrary::kOpenBlasAndOneDnn};

std::vector<float> Random(size_t n, std::mt19937* rng) {
  std::normal_distribution<float> normal;
  std::vector<float> v(n);
  for (float& x : v) x = normal(*rng);
  return v;
}

TEST(MatrixLibrary, EachComputesTransposedStridedProductsWithBeta) {
  std::mt19937 rng(11);
  struct Case {
    int64_t m, n, k;
  };
  // With kOpenBlasAndOneDnn, 32 rows of 2^22 multiply-adds run on oneDNN, the others on
  // OpenBLAS.
  const Case cases[] = {{1, 1, 1},    {3, 5, 7},    {17, 33, 65}, {64, 10, 300},
                        {1, 100, 40}, {40, 1, 100}, {5, 6, 0},    {0, 4, 3},
                        {4, 0, 3},    {32, 256, 512}};
  for (const MatrixLibrary library : kEveryLibrary) {
    OnLibrary on(library);
    for (const Case& c : cases) {
      for (const bool ta : {false, true}) {
        for (const bool tb : {false, true}) {
          for (const float beta : {0.f, 1.f, -0.5f}) {
            SCOPED_TRACE(testing::Message()
                         << Name(library) << " m=" << c.m << " n=" << c.n << " k=" << c.k
                         << " ta=" << ta << " tb=" << tb << " beta=" << beta);
            // Stored a is m x k (k x m transposed), b k x n (n x k); each row stride is 3 more
            // than the row, and the gaps must not be read into the result.
            const int64_t a_rows = ta ? c.k : c.m, a_cols = ta ? c.m : c.k;
            const int64_t b_rows = tb ? c.n : c.k, b_cols = tb ? c.k : c.n;
            const int64_t lda = a_cols + 3, ldb = b_cols + 3, ldc = c.n + 3;
            const std::vector<float> a = Random(static_cast<size_t>(a_rows * lda), &rng);
            const std::vector<float> b = Random(static_cast<size_t>(b_rows * ldb), &rng);
            std::vector<float> out = Random(static_cast<size_t>(c.m * ldc), &rng);
            // beta = 0 ignores the output's contents, NaN included.
            if (beta == 0.f) out.assign(out.size(), std::numeric_limits<float>::quiet_NaN());
            const std::vector<float> before = out;
            internal::Gemm(ta, tb, c.m, c.n, c.k, 0.75f, a.data(), lda, b.data(), ldb, beta,
                           out.data(), ldc);
            for (int64_t i = 0; i < c.m; ++i) {
              for (int64_t j = 0; j < c.n; ++j) {
                double sum = 0, magnitude = 0;
                for (int64_t p = 0; p < c.k; ++p) {
                  const double x = ta ? a[p * lda + i] : a[i * lda + p];
                  const double y = tb ? b[j * ldb + p] : b[p * ldb + j];
                  sum += x * y;
                  magnitude += std::fabs(x * y);
                }
                double want = 0.75 * sum;
                if (beta != 0.f) {
                  want += beta * before[i * ldc + j];
                  magnitude += std::fabs(before[i * ldc + j]);
                }
                const double tolerance = 1e-5 * magnitude + 1e-6;
                ASSERT_NEAR(out[i * ldc + j], want, tolerance) << "at (" << i << ", " << j << ")";
              }
              for (int64_t j = c.n; j < ldc; ++j) {  // the row's gap is left as it was
                ASSERT_TRUE(std::isnan(before[i * ldc + j])
                                ? std::isnan(out[i * ldc + j])
                                : out[i * ldc + j] == before[i * ldc + j]);
              }
            }
          }
        }
      }
    }
  }
}

TEST(MatrixLibrary, EachComputesMatrixVectorProducts) {
  std::mt19937 rng(12);
  for (const MatrixLibrary library : kEveryLibrary) {
    OnLibrary on(library);
    for (const int64_t m : {1, 7, 256}) {
      for (const int64_t k : {1, 9, 512}) {
        for (const float beta : {0.f, 1.f}) {
          SCOPED_TRACE(testing::Message()
                       << Name(library) << " m=" << m << " k=" << k << " beta=" << beta);
          const std::vector<float> a = Random(static_cast<size_t>(m * k), &rng);
          const std::vector<float> x = Random(static_cast<size_t>(k), &rng);
          std::vector<float> y = Random(static_cast<size_t>(m), &rng);
          const std::vector<float> before = y;
          internal::MatrixVector(m, k, a.data(), x.data(), beta, y.data());
          for (int64_t i = 0; i < m; ++i) {
            double sum = beta * before[i], magnitude = std::fabs(before[i]);
            for (int64_t p = 0; p < k; ++p) {
              sum += static_cast<double>(a[i * k + p]) * x[p];
              magnitude += std::fabs(static_cast<double>(a[i * k + p]) * x[p]);
            }
            ASSERT_NEAR(y[i], sum, 1e-5 * magnitude + 1e-6) << "row " << i;
          }
        }
      }
    }
  }
}

// Where OpenBLAS runs AVX-512 kernels the process takes both libraries: oneDNN's sgemm for
// products of 2^22 multiply-adds and more, or of 2^20 and more in under 32 rows, OpenBLAS for the
// rest (the two gave the same bits for such shapes, so which one ran is asked, not inferred from
// results).
TEST(MatrixLibrary, BothLibrariesTakeTheProductsEachRunsFaster) {
  const std::string core = openblas_get_corename();
  if (__builtin_cpu_supports("avx512f") &&
      (core == "SkylakeX" || core == "Cooperlake" || core == "SapphireRapids")) {
    EXPECT_EQ(internal::FloatMatrixLibrary(), MatrixLibrary::kOpenBlasAndOneDnn);
  } else {
    EXPECT_NE(internal::FloatMatrixLibrary(), MatrixLibrary::kOpenBlasAndOneDnn)
        << "OpenBLAS core " << core;
  }
  OnLibrary on(MatrixLibrary::kOpenBlasAndOneDnn);
  struct Case {
    int64_t m, n, k;
    MatrixLibrary runs_on;
  };
  const Case cases[] = {{10, 64, 128, MatrixLibrary::kOpenBlas},
                        {1, 512, 512, MatrixLibrary::kOpenBlas},
                        {16, 256, 255, MatrixLibrary::kOpenBlas},
                        {16, 256, 256, MatrixLibrary::kOneDnn},
                        {31, 256, 256, MatrixLibrary::kOneDnn},
                        {20, 800, 200, MatrixLibrary::kOneDnn},
                        {32, 256, 256, MatrixLibrary::kOpenBlas},
                        {128, 128, 128, MatrixLibrary::kOpenBlas},
                        {32, 256, 511, MatrixLibrary::kOpenBlas},
                        {32, 256, 512, MatrixLibrary::kOneDnn},
                        {700, 200, 10000, MatrixLibrary::kOneDnn}};
  for (const Case& c : cases) {
    EXPECT_EQ(internal::ProductLibrary(c.m, c.n, c.k), c.runs_on)
        << "m=" << c.m << " n=" << c.n << " k=" << c.k;
  }
  for (const MatrixLibrary single : {MatrixLibrary::kOpenBlas, MatrixLibrary::kOneDnn}) {
    OnLibrary only(single);
    for (const Case& c : cases) EXPECT_EQ(internal::ProductLibrary(c.m, c.n, c.k), single);
  }
}

// Products large enough to be split between the kernel threads (by rows, or by columns when
// they have fewer than 24), at 2 and 3 threads: every element is still its row by its column,
// blocks ending off the kernels' tiles included, in float and double, for each transpose. Where
// blas.cc measured it (OpenBLAS's Haswell and Zen kernels), blocks of rows give the one-thread
// product's bits.
template <typename T>
void ExpectSplitProductsWhole() {
  std::mt19937 rng(13);
  struct Case {
    int64_t m, n, k;
  };
  // 100 rows: blocks of 60 and 40 at 2 threads, 36, 36 and 28 at 3; 37 rows: 24 and 13; 300
  // columns of 20 rows: 160 and 140, or 112, 112 and 76. Each has over 2^20 multiply-adds, so it
  // is split.
  const Case cases[] = {{100, 37, 288}, {37, 300, 100}, {20, 300, 180}, {200, 200, 27}};
  const std::string core = openblas_get_corename();
  const bool rows_keep_bits = core == "Haswell" || core == "Zen";
  const int threads_before = GetNumThreads();
  for (const int threads : {2, 3}) {
    SetNumThreads(threads);
    for (const Case& c : cases) {
      for (const bool ta : {false, true}) {
        for (const bool tb : {false, true}) {
          for (const T beta : {T(0), T(-0.5)}) {
            SCOPED_TRACE(testing::Message() << threads << " threads m=" << c.m << " n=" << c.n
                                            << " k=" << c.k << " ta=" << ta << " tb=" << tb
                                            << " beta=" << beta);
            const int64_t a_cols = ta ? c.m : c.k, b_cols = tb ? c.k : c.n;
            const int64_t lda = a_cols + 5, ldb = b_cols + 5, ldc = c.n + 5;
            std::normal_distribution<T> normal;
            auto random = [&](int64_t count) {
              std::vector<T> v(static_cast<size_t>(count));
              for (T& x : v) x = normal(rng);
              return v;
            };
            const std::vector<T> a = random((ta ? c.k : c.m) * lda);
            const std::vector<T> b = random((tb ? c.n : c.k) * ldb);
            std::vector<T> out = random(c.m * ldc);
            const std::vector<T> before = out;
            std::vector<T> one_thread = out;
            SetNumThreads(1);
            internal::Gemm(ta, tb, c.m, c.n, c.k, T(0.75), a.data(), lda, b.data(), ldb, beta,
                           one_thread.data(), ldc);
            SetNumThreads(threads);
            internal::Gemm(ta, tb, c.m, c.n, c.k, T(0.75), a.data(), lda, b.data(), ldb, beta,
                           out.data(), ldc);
            if (rows_keep_bits && c.m >= 24) {
              ASSERT_EQ(out, one_thread) << "on OpenBLAS " << core;
            }
            for (int64_t i = 0; i < c.m; ++i) {
              for (int64_t j = 0; j < ldc; ++j) {
                if (j >= c.n) {  // the row's gap is left as it was
                  ASSERT_EQ(out[i * ldc + j], before[i * ldc + j]);
                  continue;
                }
                long double sum = 0, magnitude = 0;
                for (int64_t p = 0; p < c.k; ++p) {
                  const long double x = ta ? a[p * lda + i] : a[i * lda + p];
                  const long double y = tb ? b[j * ldb + p] : b[p * ldb + j];
                  sum += x * y;
                  magnitude += std::fabs(x * y);
                }
                const long double want = 0.75L * sum + beta * before[i * ldc + j];
                magnitude += std::fabs(before[i * ldc + j]);
                const double epsilon = std::numeric_limits<T>::epsilon();
                ASSERT_NEAR(out[i * ldc + j], static_cast<double>(want),
                            64 * epsilon * static_cast<double>(magnitude))
                    << "at (" << i << ", " << j << ")";
              }
            }
          }
        }
      }
    }
  }
  SetNumThreads(threads_before);
}

TEST(MatrixLibrary, ProductsSplitBetweenThreadsAreWholeProducts) {
  OnLibrary on(MatrixLibrary::kOpenBlas);
  ExpectSplitProductsWhole<float>();
  ExpectSplitProductsWhole<double>();
}

TEST(MatrixLibrary, MatrixVectorProductsSplitBetweenThreadsAreWhole) {
  OnLibrary on(MatrixLibrary::kOpenBlas);
  std::mt19937 rng(14);
  const int64_t m = 1000, k = 300;  // 1000 rows: blocks of 512 and 488 at 2 threads
  const std::vector<float> a = Random(static_cast<size_t>(m * k), &rng);
  const std::vector<float> x = Random(static_cast<size_t>(k), &rng);
  const std::vector<float> before = Random(static_cast<size_t>(m), &rng);
  const int threads_before = GetNumThreads();
  SetNumThreads(2);
  std::vector<float> y = before;
  internal::MatrixVector(m, k, a.data(), x.data(), 1.f, y.data());
  SetNumThreads(threads_before);
  for (int64_t i = 0; i < m; ++i) {
    double sum = before[i], magnitude = std::fabs(before[i]);
    for (int64_t p = 0; p < k; ++p) {
      sum += static_cast<double>(a[i * k + p]) * x[p];
      magnitude += std::fabs(static_cast<double>(a[i * k + p]) * x[p]);
    }
    ASSERT_NEAR(y[i], sum, 1e-5 * magnitude + 1e-6) << "row " << i;
  }
}

TEST(MatrixLibrary, AnMlpGivesTheSameBitsEagerlyAndAsAGraphOnEither) {
  // FullyConnected at batch 1 (a matrix-vector product where AVX-512 is absent) and batch 5,
  // plain and fused with its activation in the graph; the two libraries agree within 1e-5.
  // Seeded, with weights of standard deviation 1/sqrt(inputs) as an initializer gives, so the
  // outputs do not depend on what ran before in the process, nor cancel from sums of size 50.
  Seed(8);
  const Symbol data = Symbol::Var("data");
  Symbol x = data;
  std::map<std::string, NDArray> params;
  int64_t in = 37;
  for (int layer = 0; layer < 3; ++layer) {
    const std::string name = "fc" + std::to_string(layer);
    const int64_t units = layer == 2 ? 3 : 50;
    const float stddev = 1.f / std::sqrt(static_cast<float>(in));
    params[name + "_weight"] = NDArray::RandomNormal({units, in}, 0.f, stddev);
    params[name + "_bias"] = NDArray::RandomNormal({units}, 0.f, stddev);
    x = Symbol::Create("FullyConnected",
                       {x, Symbol::Var(name + "_weight"), Symbol::Var(name + "_bias")},
                       {{"num_hidden", std::to_string(units)}}, name);
    if (layer < 2) x = Symbol::Create("Activation", {x}, {{"act_type", "relu"}}, name + "_relu");
    in = units;
  }
  for (const int64_t batch : {1, 5}) {
    const NDArray input = NDArray::RandomNormal({batch, 37});
    std::vector<std::vector<float>> results;
    for (const MatrixLibrary library : {MatrixLibrary::kOpenBlas, MatrixLibrary::kOneDnn}) {
      SCOPED_TRACE(testing::Message() << Name(library) << " batch " << batch);
      OnLibrary on(library);
      NDArray eager = input;
      for (int layer = 0; layer < 3; ++layer) {
        const std::string name = "fc" + std::to_string(layer);
        eager = Invoke("FullyConnected", {eager, params[name + "_weight"], params[name + "_bias"]},
                       {{"num_hidden", std::to_string(params[name + "_bias"].shape()[0])}})[0];
        if (layer < 2) eager = Invoke("Activation", {eager}, {{"act_type", "relu"}})[0];
      }
      GraphExecutor exec(x, {"data"}, params);
      const NDArray graph = exec.Forward({input})[0];
      ASSERT_EQ(graph.shape(), eager.shape());
      const float* e = eager.data<float>();
      const float* g = graph.data<float>();
      for (int64_t i = 0; i < eager.size(); ++i) ASSERT_EQ(e[i], g[i]) << "output " << i;
      results.emplace_back(e, e + eager.size());
    }
    for (size_t i = 0; i < results[0].size(); ++i) {
      EXPECT_NEAR(results[1][i], results[0][i], 1e-5 * (1 + std::fabs(results[0][i])));
    }
  }
}

// A profiler's timer signals arriving during the products (SIGPROF every 200 us of CPU time, as
// R's Rprof and async-profiler send them): the heap stays intact and every product is the one
// computed without them by the same library at the same thread count (their bits may differ from
// each other's on AVX2 CPUs), on both libraries and at 1 and 2 threads. oneDNN 2.6's JIT sgemm
// moves rsp into the heap; before its calls held signals off, this corrupted the heap within a
// second.
volatile sig_atomic_t profiler_ticks = 0;
void CountTick(int) { profiler_ticks = profiler_ticks + 1; }

TEST(MatrixLibrary, ProductsSurviveProfilerSignals) {
  std::mt19937 rng(5);
  const int64_t m = 64, n = 512, k = 256;
  const std::vector<float> a = Random(static_cast<size_t>(m * k), &rng);
  const std::vector<float> b = Random(static_cast<size_t>(k * n), &rng);
  auto product = [&] {
    std::vector<float> c(static_cast<size_t>(m * n));
    internal::Gemm(false, false, m, n, k, 1.f, a.data(), k, b.data(), n, 0.f, c.data(), n);
    return c;
  };
  const MatrixLibrary libraries[] = {MatrixLibrary::kOpenBlas, MatrixLibrary::kOneDnn};
  std::vector<float> expected[2][2];  // [library][threads - 1], without signals
  for (int l = 0; l < 2; ++l) {
    OnLibrary on(libraries[l]);
    for (const int threads : {1, 2}) {
      SetNumThreads(threads);
      expected[l][threads - 1] = product();
    }
  }

  struct sigaction tick {
  }, before{};
  tick.sa_handler = CountTick;
  tick.sa_flags = SA_RESTART;
  ASSERT_EQ(sigaction(SIGPROF, &tick, &before), 0);
  const itimerval every_200us{{0, 200}, {0, 200}}, off{};
  ASSERT_EQ(setitimer(ITIMER_PROF, &every_200us, nullptr), 0);
  profiler_ticks = 0;
  for (int l = 0; l < 2; ++l) {
    OnLibrary on(libraries[l]);
    for (const int threads : {1, 2}) {
      SetNumThreads(threads);
      for (int i = 0; i < 300; ++i) {
        ASSERT_EQ(product(), expected[l][threads - 1])
            << Name(libraries[l]) << ", " << threads << " threads, product " << i;
      }
    }
  }
  setitimer(ITIMER_PROF, &off, nullptr);
  sigaction(SIGPROF, &before, nullptr);
  SetNumThreads(1);
  EXPECT_GT(profiler_ticks, 10) << "the timer never fired: the test proved nothing";
}

}  // namespace
}  // namespace hybridnet
