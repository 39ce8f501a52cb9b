// Conformance cases: the _linalg_* ops and khatri_rao, on batches of matrices. References are
// textbook algorithms in double precision (Cholesky-Banachiewicz, Gauss-Jordan, Householder QR
// with LAPACK's sign rule, cyclic Jacobi eigenvalues); inputs are built to be well conditioned
// (symmetric diagonally dominant where a factorisation needs positive definiteness).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "conformance.h"

namespace hybridnet {
namespace conformance {
namespace {

using Mat = std::vector<double>;  // row-major

// A value in [-1, 1) from a position, stable across runs.
double Hashed(uint64_t a, uint64_t b, uint64_t c) {
  uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull) * 0xBF58476D1CE4E5B9ull ^
               (c + 0x94D049BB133111EBull) * 0x94D049BB133111EBull;
  h ^= h >> 31;
  h *= 0xD6E8FEEC36A6E6E1ull;
  h ^= h >> 29;
  return static_cast<double>(h >> 11) / static_cast<double>(uint64_t{1} << 52) - 1.0;
}

// Batches of symmetric, diagonally dominant (so positive definite) n x n matrices.
InputGen SymmetricPD(int64_t n) {
  return [n](std::mt19937&, size_t input, int64_t j) {
    const int64_t b = j / (n * n), r = (j / n) % n, c = j % n;
    const auto lo = static_cast<uint64_t>(std::min(r, c)),
               hi = static_cast<uint64_t>(std::max(r, c));
    const double v = Hashed(static_cast<uint64_t>(b) * 31 + input, lo, hi);
    return r == c ? static_cast<double>(n) + 1.0 + v : v;
  };
}

// Triangular-friendly matrices: a diagonal in [1, 2) (well conditioned), anything elsewhere.
InputGen StrongDiagonal(int64_t n) {
  return [n](std::mt19937& rng, size_t input, int64_t j) {
    const double v = std::uniform_real_distribution<double>(-1, 1)(rng);
    if (input != 0) return v;
    return (j / n) % n == j % n ? 1.5 + 0.5 * v : v;
  };
}

// For every matrix of the batch (the last two axes of input 0), out = f(matrix).
RefFn PerMatrix(std::function<Shape(const Shape&)> out_shape,
                std::function<Mat(const Mat&, int64_t n, int64_t m)> f) {
  return [out_shape, f](const std::vector<RefTensor>& in) {
    const Shape& s = in[0].shape;
    const int64_t n = s[s.ndim() - 2], m = s[s.ndim() - 1];
    RefTensor out(out_shape(s));
    const int64_t count = s.Size() / (n * m), per = out.size() / count;
    for (int64_t b = 0; b < count; ++b) {
      Mat a(in[0].v.begin() + b * n * m, in[0].v.begin() + (b + 1) * n * m);
      Mat r = f(a, n, m);
      std::copy(r.begin(), r.end(), out.v.begin() + b * per);
    }
    return std::vector<RefTensor>{out};
  };
}

std::function<Shape(const Shape&)> SameShape() {
  return [](const Shape& s) { return s; };
}

Mat Transpose(const Mat& a, int64_t n, int64_t m) {
  Mat t(a.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j)
      t[static_cast<size_t>(j * n + i)] = a[static_cast<size_t>(i * m + j)];
  return t;
}

Mat MatMul(const Mat& a, const Mat& b, int64_t n, int64_t k, int64_t m) {
  Mat c(static_cast<size_t>(n * m), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j)
      for (int64_t t = 0; t < k; ++t)
        c[static_cast<size_t>(i * m + j)] +=
            a[static_cast<size_t>(i * k + t)] * b[static_cast<size_t>(t * m + j)];
  return c;
}

double& At(Mat& a, int64_t n, int64_t i, int64_t j) { return a[static_cast<size_t>(i * n + j)]; }

Mat Cholesky(const Mat& a, int64_t n) {
  Mat l(a.size(), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j) {
      double s = a[static_cast<size_t>(i * n + j)];
      for (int64_t k = 0; k < j; ++k) s -= At(l, n, i, k) * At(l, n, j, k);
      At(l, n, i, j) = i == j ? std::sqrt(s) : s / At(l, n, j, j);
    }
  return l;
}

Mat Inverse(Mat a, int64_t n) {
  Mat inv(a.size(), 0.0);
  for (int64_t i = 0; i < n; ++i) At(inv, n, i, i) = 1;
  for (int64_t c = 0; c < n; ++c) {
    int64_t p = c;
    for (int64_t r = c + 1; r < n; ++r)
      if (std::abs(At(a, n, r, c)) > std::abs(At(a, n, p, c))) p = r;
    for (int64_t j = 0; j < n; ++j) {
      std::swap(At(a, n, c, j), At(a, n, p, j));
      std::swap(At(inv, n, c, j), At(inv, n, p, j));
    }
    const double d = At(a, n, c, c);
    for (int64_t j = 0; j < n; ++j) {
      At(a, n, c, j) /= d;
      At(inv, n, c, j) /= d;
    }
    for (int64_t r = 0; r < n; ++r) {
      if (r == c) continue;
      const double f = At(a, n, r, c);
      for (int64_t j = 0; j < n; ++j) {
        At(a, n, r, j) -= f * At(a, n, c, j);
        At(inv, n, r, j) -= f * At(inv, n, c, j);
      }
    }
  }
  return inv;
}

// Sign and log|det| by Gaussian elimination with partial pivoting.
std::pair<double, double> SignLogDet(Mat a, int64_t n) {
  double sign = 1, logdet = 0;
  for (int64_t c = 0; c < n; ++c) {
    int64_t p = c;
    for (int64_t r = c + 1; r < n; ++r)
      if (std::abs(At(a, n, r, c)) > std::abs(At(a, n, p, c))) p = r;
    if (p != c) {
      sign = -sign;
      for (int64_t j = 0; j < n; ++j) std::swap(At(a, n, c, j), At(a, n, p, j));
    }
    const double d = At(a, n, c, c);
    sign *= d > 0 ? 1 : (d < 0 ? -1 : 0);
    logdet += std::log(std::abs(d));
    for (int64_t r = c + 1; r < n; ++r) {
      const double f = At(a, n, r, c) / d;
      for (int64_t j = c; j < n; ++j) At(a, n, r, j) -= f * At(a, n, c, j);
    }
  }
  return {sign, logdet};
}

// Only the lower (or upper) triangle of a square matrix, the rest zero.
Mat Triangle(const Mat& a, int64_t n, bool lower) {
  Mat t(a.size(), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      if (lower ? j <= i : j >= i)
        t[static_cast<size_t>(i * n + j)] = a[static_cast<size_t>(i * n + j)];
  return t;
}

// LQ of an (m, n) matrix, m <= n, via Householder QR of A^T with LAPACK's sign rule (each
// reflector maps its pivot to -sign(pivot) * norm; none when nothing is below the pivot).
std::pair<Mat, Mat> LQ(const Mat& a, int64_t m, int64_t n) {
  Mat r = Transpose(a, m, n);  // (n, m)
  Mat q(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) At(q, n, i, i) = 1;
  for (int64_t j = 0; j < m; ++j) {
    double below = 0;
    for (int64_t i = j + 1; i < n; ++i) below += At(r, m, i, j) * At(r, m, i, j);
    if (below == 0) continue;
    const double alpha = At(r, m, j, j);
    const double norm = std::sqrt(below + alpha * alpha);
    const double beta = alpha >= 0 ? -norm : norm;
    std::vector<double> v(static_cast<size_t>(n), 0.0);
    v[static_cast<size_t>(j)] = alpha - beta;
    for (int64_t i = j + 1; i < n; ++i) v[static_cast<size_t>(i)] = At(r, m, i, j);
    double vv = 0;
    for (double x : v) vv += x * x;
    if (vv == 0) continue;
    for (int64_t c = 0; c < m; ++c) {  // r = (I - 2 v v^T / v^T v) r
      double d = 0;
      for (int64_t i = 0; i < n; ++i) d += v[static_cast<size_t>(i)] * At(r, m, i, c);
      for (int64_t i = 0; i < n; ++i) At(r, m, i, c) -= 2 * v[static_cast<size_t>(i)] * d / vv;
    }
    for (int64_t row = 0; row < n; ++row) {  // q = q (I - 2 v v^T / v^T v)
      double d = 0;
      for (int64_t i = 0; i < n; ++i) d += At(q, n, row, i) * v[static_cast<size_t>(i)];
      for (int64_t i = 0; i < n; ++i) At(q, n, row, i) -= 2 * d * v[static_cast<size_t>(i)] / vv;
    }
  }
  Mat l(static_cast<size_t>(m * m), 0.0), qt(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j <= i; ++j) At(l, m, i, j) = At(r, m, j, i);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) qt[static_cast<size_t>(i * n + j)] = At(q, n, j, i);
  return {qt, l};
}

// Eigenvalues (ascending) and eigenvectors (rows, largest entry positive) of the symmetric
// matrix whose lower triangle is given, by cyclic Jacobi rotations.
std::pair<Mat, Mat> Eigen(const Mat& a_in, int64_t n) {
  Mat a = Triangle(a_in, n, true);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j) At(a, n, i, j) = At(a, n, j, i);
  Mat v(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) At(v, n, i, i) = 1;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) off += At(a, n, p, q) * At(a, n, p, q);
    if (off < 1e-30) break;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) {
        if (At(a, n, p, q) == 0) continue;
        const double theta = (At(a, n, q, q) - At(a, n, p, p)) / (2 * At(a, n, p, q));
        const double t = (theta >= 0 ? 1 : -1) / (std::abs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int64_t k = 0; k < n; ++k) {  // columns p, q of a and v
          const double akp = At(a, n, k, p), akq = At(a, n, k, q);
          At(a, n, k, p) = c * akp - s * akq;
          At(a, n, k, q) = s * akp + c * akq;
          const double vkp = At(v, n, k, p), vkq = At(v, n, k, q);
          At(v, n, k, p) = c * vkp - s * vkq;
          At(v, n, k, q) = s * vkp + c * vkq;
        }
        for (int64_t k = 0; k < n; ++k) {  // rows p, q of a
          const double apk = At(a, n, p, k), aqk = At(a, n, q, k);
          At(a, n, p, k) = c * apk - s * aqk;
          At(a, n, q, k) = s * apk + c * aqk;
        }
      }
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
  std::sort(order.begin(), order.end(),
            [&](int64_t x, int64_t y) { return At(a, n, x, x) < At(a, n, y, y); });
  Mat u(static_cast<size_t>(n * n)), w(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r) {
    const int64_t col = order[static_cast<size_t>(r)];
    w[static_cast<size_t>(r)] = At(a, n, col, col);
    int64_t big = 0;
    for (int64_t k = 0; k < n; ++k)
      if (std::abs(At(v, n, k, col)) > std::abs(At(v, n, big, col))) big = k;
    const double sign = At(v, n, big, col) < 0 ? -1 : 1;
    for (int64_t k = 0; k < n; ++k) At(u, n, r, k) = sign * At(v, n, k, col);
  }
  return {u, w};
}

// ---- op references ---------------------------------------------------------------------------

// gemm(2) over the last two axes: alpha * op(A) op(B) (+ beta * C).
RefFn GemmRef(bool ta, bool tb, double alpha, double beta, bool with_c) {
  return [=](const std::vector<RefTensor>& in) {
    const Shape& as = in[0].shape;
    const Shape& bs = in[1].shape;
    const size_t nd = as.ndim();
    const int64_t ar = as[nd - 2], ac = as[nd - 1], br = bs[nd - 2], bc = bs[nd - 1];
    const int64_t m = ta ? ac : ar, k = ta ? ar : ac, n = tb ? br : bc;
    std::vector<int64_t> od(as.begin(), as.end());
    od[nd - 2] = m;
    od[nd - 1] = n;
    RefTensor out{Shape(od)};
    const int64_t count = out.size() / (m * n);
    for (int64_t b = 0; b < count; ++b) {
      Mat a(in[0].v.begin() + b * ar * ac, in[0].v.begin() + (b + 1) * ar * ac);
      Mat bb(in[1].v.begin() + b * br * bc, in[1].v.begin() + (b + 1) * br * bc);
      if (ta) a = Transpose(a, ar, ac);
      if (tb) bb = Transpose(bb, br, bc);
      Mat c = MatMul(a, bb, m, k, n);
      for (int64_t i = 0; i < m * n; ++i)
        out[b * m * n + i] =
            alpha * c[static_cast<size_t>(i)] + (with_c ? beta * in[2][b * m * n + i] : 0.0);
    }
    return std::vector<RefTensor>{out};
  };
}

// gemm2 with rows on axis 0 of a 3-D (rows, batch, cols) layout: swap to (batch, rows, cols).
RefFn GemmAxis0Ref() {
  return [](const std::vector<RefTensor>& in) {
    std::vector<RefTensor> moved;
    for (const RefTensor& t : in) {
      const Shape& s = t.shape;
      RefTensor m(Shape{s[1], s[0], s[2]});
      for (int64_t r = 0; r < s[0]; ++r)
        for (int64_t b = 0; b < s[1]; ++b)
          for (int64_t c = 0; c < s[2]; ++c)
            m[(b * s[0] + r) * s[2] + c] = t[(r * s[1] + b) * s[2] + c];
      moved.push_back(m);
    }
    RefTensor prod = GemmRef(false, false, 1, 0, false)(moved)[0];
    const Shape& ps = prod.shape;
    RefTensor out(Shape{ps[1], ps[0], ps[2]});
    for (int64_t b = 0; b < ps[0]; ++b)
      for (int64_t r = 0; r < ps[1]; ++r)
        for (int64_t c = 0; c < ps[2]; ++c)
          out[(r * ps[0] + b) * ps[2] + c] = prod[(b * ps[1] + r) * ps[2] + c];
    return std::vector<RefTensor>{out};
  };
}

// trmm / trsm: out = alpha * op(T) B or alpha * B op(T) (multiply), or the X solving it.
RefFn TriangRef(bool solve, bool transpose, bool rightside, bool lower, double alpha) {
  return [=](const std::vector<RefTensor>& in) {
    const Shape& bs = in[1].shape;
    const size_t nd = bs.ndim();
    const int64_t n = in[0].shape[nd - 1], br = bs[nd - 2], bc = bs[nd - 1];
    RefTensor out(bs);
    const int64_t count = bs.Size() / (br * bc);
    for (int64_t b = 0; b < count; ++b) {
      Mat t =
          Triangle(Mat(in[0].v.begin() + b * n * n, in[0].v.begin() + (b + 1) * n * n), n, lower);
      if (transpose) t = Transpose(t, n, n);
      if (solve) t = Inverse(t, n);
      Mat bb(in[1].v.begin() + b * br * bc, in[1].v.begin() + (b + 1) * br * bc);
      Mat c = rightside ? MatMul(bb, t, br, n, bc) : MatMul(t, bb, br, n, bc);
      for (int64_t i = 0; i < br * bc; ++i)
        out[b * br * bc + i] = alpha * c[static_cast<size_t>(i)];
    }
    return std::vector<RefTensor>{out};
  };
}

std::function<Shape(const Shape&)> DropLastTwo() {
  return [](const Shape& s) { return s.ndim() == 2 ? Shape{1} : Shape(s.begin(), s.end() - 2); };
}

// Diagonal `k` of an n x n matrix.
Mat DiagOf(const Mat& a, int64_t n, int k) {
  Mat d;
  for (int64_t i = 0; i < n - std::abs(k); ++i) {
    const int64_t r = k >= 0 ? i : i - k, c = k >= 0 ? i + k : i;
    d.push_back(a[static_cast<size_t>(r * n + c)]);
  }
  return d;
}

// The packed triangle: rows of the lower triangle below diagonal k <= 0, or (k > 0, or k = 0
// with upper) the columns of the upper triangle, each from the diagonal k on.
Mat TrianOf(const Mat& a, int64_t n, int k, bool lower) {
  Mat t;
  const bool up = k > 0 || (k == 0 && !lower);
  const int64_t kk = std::abs(k);
  for (int64_t i = kk; i < n; ++i)
    for (int64_t j = 0; j <= i - kk; ++j)
      t.push_back(up ? a[static_cast<size_t>(j * n + i)] : a[static_cast<size_t>(i * n + j)]);
  return t;
}

// A 1-D vector value f(b, i) for the make* references.
RefFn MakeRef(int k, bool diag, bool lower) {
  return [k, diag, lower](const std::vector<RefTensor>& in) {
    const Shape& s = in[0].shape;
    const int64_t len = s[s.ndim() - 1];
    const int64_t t = diag ? len
                           : static_cast<int64_t>(std::llround(
                                 (std::sqrt(8.0 * static_cast<double>(len) + 1) - 1) / 2));
    const int64_t n = t + std::abs(k);
    std::vector<int64_t> od(s.begin(), s.end() - 1);
    od.push_back(n);
    od.push_back(n);
    RefTensor out{Shape(od)};
    const int64_t count = s.Size() / len;
    for (int64_t b = 0; b < count; ++b) {
      // Place index positions, then read them back through DiagOf/TrianOf's order.
      Mat pos(static_cast<size_t>(n * n));
      for (int64_t i = 0; i < n * n; ++i) pos[static_cast<size_t>(i)] = static_cast<double>(i);
      Mat order = diag ? DiagOf(pos, n, k) : TrianOf(pos, n, k, lower);
      for (size_t j = 0; j < order.size(); ++j)
        out[b * n * n + static_cast<int64_t>(order[j])] = in[0][b * len + static_cast<int64_t>(j)];
    }
    return std::vector<RefTensor>{out};
  };
}

RefFn KhatriRaoRef() {
  return [](const std::vector<RefTensor>& in) {
    int64_t rows = 1;
    const int64_t cols = in[0].shape[1];
    for (const RefTensor& t : in) rows *= t.shape[0];
    RefTensor out(Shape{rows, cols});
    for (int64_t r = 0; r < rows; ++r) {
      int64_t rest = r, span = rows;
      for (int64_t c = 0; c < cols; ++c) out[r * cols + c] = 1;
      for (const RefTensor& t : in) {
        span /= t.shape[0];
        const int64_t ri = rest / span;
        rest %= span;
        for (int64_t c = 0; c < cols; ++c) out[r * cols + c] *= t[ri * cols + c];
      }
    }
    return std::vector<RefTensor>{out};
  };
}

OpCase F64(OpCase c) {
  c.dtypes = std::vector<DType>(c.inputs.size(), DType::kFloat64);
  return c;
}

}  // namespace

HN_CONFORMANCE_CASES(LinalgProducts) {
  cases->push_back(
      WithTol(Case("_linalg_gemm", {{"alpha", "0.5"}, {"beta", "2"}},
                   {{2, 3, 4}, {2, 4, 5}, {2, 3, 5}}, GemmRef(false, false, 0.5, 2, true)),
              1e-5, 1e-5));
  cases->push_back(
      WithTol(Case("linalg_gemm", {{"transpose_a", "True"}, {"transpose_b", "1"}},
                   {{4, 3}, {5, 4}, {3, 5}}, GemmRef(true, true, 1, 1, true), "alias_transposed"),
              1e-5, 1e-5));
  cases->push_back(WithTol(
      Case("_linalg_gemm2", {}, {{3, 4}, {4, 2}}, GemmRef(false, false, 1, 0, false)), 1e-5, 1e-5));
  cases->push_back(WithTol(
      Case("linalg_gemm2", {{"transpose_a", "True"}, {"alpha", "-1.5"}},
           {{2, 2, 4, 3}, {2, 2, 4, 5}}, GemmRef(true, false, -1.5, 0, false), "alias_batch"),
      1e-5, 1e-5));
  cases->push_back(WithTol(
      Case("_linalg_gemm2", {{"axis", "0"}}, {{3, 2, 4}, {4, 2, 5}}, GemmAxis0Ref(), "row_axis0"),
      1e-5, 1e-5));
  cases->push_back(F64(Case("_linalg_gemm2", {{"transpose_b", "True"}}, {{3, 4}, {2, 4}},
                            GemmRef(false, true, 1, 0, false), "float64")));

  cases->push_back(WithTol(Case("_linalg_syrk", {{"alpha", "2"}}, {{2, 3, 4}},
                                PerMatrix(
                                    [](const Shape& s) {
                                      return Shape{s[0], s[1], s[1]};
                                    },
                                    [](const Mat& a, int64_t n, int64_t m) {
                                      Mat p = MatMul(a, Transpose(a, n, m), n, m, n);
                                      for (double& x : p) x *= 2;
                                      return p;
                                    })),
                           1e-5, 1e-5));
  cases->push_back(WithTol(Case("linalg_syrk", {{"transpose", "True"}}, {{3, 2}},
                                PerMatrix(
                                    [](const Shape& s) {
                                      return Shape{s[1], s[1]};
                                    },
                                    [](const Mat& a, int64_t n, int64_t m) {
                                      return MatMul(Transpose(a, n, m), a, m, n, m);
                                    }),
                                "alias_transpose"),
                           1e-5, 1e-5));

  const InputGen tri = StrongDiagonal(3);
  cases->push_back(WithGen(WithTol(Case("_linalg_trmm", {}, {{2, 3, 3}, {2, 3, 4}},
                                        TriangRef(false, false, false, true, 1)),
                                   1e-5, 1e-5),
                           tri));
  cases->push_back(WithGen(
      WithTol(
          Case("linalg_trmm",
               {{"transpose", "True"}, {"rightside", "True"}, {"lower", "False"}, {"alpha", "2"}},
               {{3, 3}, {4, 3}}, TriangRef(false, true, true, false, 2), "alias_right_upper_t"),
          1e-5, 1e-5),
      tri));
  cases->push_back(WithGen(WithTol(Case("_linalg_trsm", {{"alpha", "0.5"}}, {{2, 3, 3}, {2, 3, 2}},
                                        TriangRef(true, false, false, true, 0.5)),
                                   1e-4, 1e-5),
                           tri));
  cases->push_back(
      WithGen(WithTol(Case("linalg_trsm", {{"rightside", "True"}, {"transpose", "1"}},
                           {{3, 3}, {2, 3}}, TriangRef(true, true, true, true, 1), "alias_right_t"),
                      1e-4, 1e-5),
              tri));
  cases->push_back(WithGen(F64(Case("_linalg_trsm", {{"lower", "False"}}, {{3, 3}, {3, 3}},
                                    TriangRef(true, false, false, false, 1), "float64_upper")),
                           tri));

  cases->push_back(WithGen(
      Case("khatri_rao", {{"num_args", "2"}}, {{2, 3}, {4, 3}}, KhatriRaoRef()), Uniform(-2, 2)));
  cases->push_back(
      Case("khatri_rao", {{"num_args", "3"}}, {{2, 2}, {3, 2}, {2, 2}}, KhatriRaoRef(), "three"));
  cases->push_back(
      F64(Case("khatri_rao", {{"num_args", "1"}}, {{3, 2}}, KhatriRaoRef(), "single_float64")));
}

HN_CONFORMANCE_CASES(LinalgFactorisations) {
  const auto chol = [](const Mat& a, int64_t n, int64_t) { return Cholesky(a, n); };
  cases->push_back(WithGen(
      WithTol(Case("_linalg_potrf", {}, {{2, 4, 4}}, PerMatrix(SameShape(), chol)), 1e-5, 1e-5),
      SymmetricPD(4)));
  cases->push_back(WithGen(
      WithTol(Case("linalg_potrf", {{"lower", "False"}}, {{3, 3}},
                   PerMatrix(SameShape(), [](const Mat& a, int64_t n,
                                             int64_t) { return Transpose(Cholesky(a, n), n, n); }),
                   "alias_upper"),
              1e-5, 1e-5),
      SymmetricPD(3)));
  // potri reads only the factor's triangle: the other one holds noise.
  cases->push_back(WithGen(WithTol(Case("_linalg_potri", {}, {{2, 3, 3}},
                                        PerMatrix(SameShape(),
                                                  [](const Mat& l, int64_t n, int64_t) {
                                                    Mat t = Triangle(l, n, true);
                                                    return Inverse(
                                                        MatMul(t, Transpose(t, n, n), n, n, n), n);
                                                  })),
                                   1e-4, 1e-5),
                           StrongDiagonal(3)));
  cases->push_back(WithGen(F64(Case("linalg_potri", {{"lower", "False"}}, {{3, 3}},
                                    PerMatrix(SameShape(),
                                              [](const Mat& u, int64_t n, int64_t) {
                                                Mat t = Triangle(u, n, false);
                                                return Inverse(
                                                    MatMul(Transpose(t, n, n), t, n, n, n), n);
                                              }),
                                    "alias_upper_float64")),
                           StrongDiagonal(3)));

  const auto inverse = [](const Mat& a, int64_t n, int64_t) { return Inverse(a, n); };
  cases->push_back(
      WithGen(WithTol(Case("_linalg_inverse", {}, {{2, 3, 3}}, PerMatrix(SameShape(), inverse)),
                      1e-4, 1e-5),
              StrongDiagonal(3)));
  cases->push_back(WithGen(
      F64(Case("linalg_inverse", {}, {{4, 4}}, PerMatrix(SameShape(), inverse), "alias_float64")),
      SymmetricPD(4)));

  const auto det = [](const Mat& a, int64_t n, int64_t) {
    const auto sl = SignLogDet(a, n);
    return Mat{sl.first * std::exp(sl.second)};
  };
  cases->push_back(
      WithTol(Case("_linalg_det", {}, {{3, 3}}, PerMatrix(DropLastTwo(), det)), 1e-4, 1e-6));
  cases->push_back(
      WithTol(Case("linalg_det", {}, {{2, 2, 4, 4}}, PerMatrix(DropLastTwo(), det), "alias_batch"),
              1e-4, 1e-6));
  OpCase sl = Case("_linalg_slogdet", {}, {{3, 3, 3}}, [](const std::vector<RefTensor>& in) {
    RefTensor sign(Shape{3}), logabs(Shape{3});
    for (int64_t b = 0; b < 3; ++b) {
      const auto r = SignLogDet(Mat(in[0].v.begin() + b * 9, in[0].v.begin() + (b + 1) * 9), 3);
      sign[b] = r.first;
      logabs[b] = r.second;
    }
    return std::vector<RefTensor>{sign, logabs};
  });
  cases->push_back(WithTol(sl, 1e-4, 1e-5));
  OpCase singular = Case(
      "linalg_slogdet", {}, {{2, 2}},
      [](const std::vector<RefTensor>&) {
        RefTensor sign(Shape{1}), logabs(Shape{1});
        logabs[0] = -INFINITY;
        return std::vector<RefTensor>{sign, logabs};
      },
      "alias_singular");
  singular.gen = [](std::mt19937&, size_t, int64_t j) { return j < 2 ? 1.0 : 2.0; };
  cases->push_back(singular);

  const RefFn sumlogdiag = PerMatrix(DropLastTwo(), [](const Mat& a, int64_t n, int64_t) {
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += std::log(a[static_cast<size_t>(i * n + i)]);
    return Mat{s};
  });
  cases->push_back(
      WithGen(WithTol(Case("_linalg_sumlogdiag", {}, {{2, 3, 3}}, sumlogdiag), 1e-5, 1e-5),
              Uniform(0.5, 3)));
  cases->push_back(
      WithGen(Case("linalg_sumlogdiag", {}, {{4, 4}}, sumlogdiag, "alias_2d"), Uniform(0.5, 3)));

  OpCase lq = Case("_linalg_gelqf", {}, {{2, 3, 5}}, [](const std::vector<RefTensor>& in) {
    const Shape& s = in[0].shape;
    RefTensor q(s), l(Shape{s[0], s[1], s[1]});
    for (int64_t b = 0; b < s[0]; ++b) {
      const auto r = LQ(Mat(in[0].v.begin() + b * 15, in[0].v.begin() + (b + 1) * 15), 3, 5);
      std::copy(r.first.begin(), r.first.end(), q.v.begin() + b * 15);
      std::copy(r.second.begin(), r.second.end(), l.v.begin() + b * 9);
    }
    return std::vector<RefTensor>{q, l};
  });
  cases->push_back(WithTol(lq, 1e-4, 1e-5));
  OpCase lq_sq = Case(
      "linalg_gelqf", {}, {{3, 3}},
      [](const std::vector<RefTensor>& in) {
        const auto r = LQ(in[0].v, 3, 3);
        RefTensor q(Shape{3, 3}), l(Shape{3, 3});
        q.v = r.first;
        l.v = r.second;
        return std::vector<RefTensor>{q, l};
      },
      "alias_square_float64");
  cases->push_back(F64(lq_sq));

  OpCase eig = Case("_linalg_syevd", {}, {{2, 4, 4}}, [](const std::vector<RefTensor>& in) {
    RefTensor u(Shape{2, 4, 4}), w(Shape{2, 4});
    for (int64_t b = 0; b < 2; ++b) {
      const auto r = Eigen(Mat(in[0].v.begin() + b * 16, in[0].v.begin() + (b + 1) * 16), 4);
      std::copy(r.first.begin(), r.first.end(), u.v.begin() + b * 16);
      std::copy(r.second.begin(), r.second.end(), w.v.begin() + b * 4);
    }
    return std::vector<RefTensor>{u, w};
  });
  cases->push_back(WithTol(eig, 1e-4, 1e-4));
  OpCase eig64 = Case(
      "_linalg_syevd", {}, {{3, 3}},
      [](const std::vector<RefTensor>& in) {
        const auto r = Eigen(in[0].v, 3);
        RefTensor u(Shape{3, 3}), w(Shape{3});
        u.v = r.first;
        w.v = r.second;
        return std::vector<RefTensor>{u, w};
      },
      "float64");
  cases->push_back(WithTol(F64(eig64), 1e-9, 1e-9));
}

HN_CONFORMANCE_CASES(LinalgDiagTrian) {
  auto extract_diag = [](int k) {
    return PerMatrix(
        [k](const Shape& s) {
          std::vector<int64_t> d(s.begin(), s.end() - 1);
          d.back() = s[s.ndim() - 1] - std::abs(k);
          return Shape(d);
        },
        [k](const Mat& a, int64_t n, int64_t) { return DiagOf(a, n, k); });
  };
  cases->push_back(Case("_linalg_extractdiag", {}, {{2, 3, 3}}, extract_diag(0)));
  cases->push_back(
      Case("linalg_extractdiag", {{"offset", "-1"}}, {{4, 4}}, extract_diag(-1), "alias_below"));
  cases->push_back(F64(Case("_linalg_extractdiag", {{"offset", "2"}}, {{2, 4, 4}}, extract_diag(2),
                            "above_float64")));
  cases->push_back(Case("_linalg_makediag", {}, {{2, 3}}, MakeRef(0, true, true)));
  cases->push_back(Case("linalg_makediag", {{"offset", "2"}}, {{2, 2, 2}}, MakeRef(2, true, true),
                        "alias_above"));
  cases->push_back(
      Case("_linalg_makediag", {{"offset", "-1"}}, {{3}}, MakeRef(-1, true, true), "below"));

  auto extract_trian = [](int k, bool lower) {
    return PerMatrix(
        [k](const Shape& s) {
          std::vector<int64_t> d(s.begin(), s.end() - 1);
          const int64_t n = s[s.ndim() - 1] - std::abs(k);
          d.back() = n * (n + 1) / 2;
          return Shape(d);
        },
        [k, lower](const Mat& a, int64_t n, int64_t) { return TrianOf(a, n, k, lower); });
  };
  cases->push_back(Case("_linalg_extracttrian", {}, {{2, 3, 3}}, extract_trian(0, true)));
  cases->push_back(Case("linalg_extracttrian", {{"lower", "False"}}, {{4, 4}},
                        extract_trian(0, false), "alias_upper"));
  cases->push_back(
      Case("_linalg_extracttrian", {{"offset", "1"}}, {{4, 4}}, extract_trian(1, true), "above"));
  cases->push_back(Case("_linalg_extracttrian", {{"offset", "-2"}}, {{2, 4, 4}},
                        extract_trian(-2, true), "below"));
  cases->push_back(Case("_linalg_maketrian", {}, {{2, 6}}, MakeRef(0, false, true)));
  cases->push_back(Case("linalg_maketrian", {{"lower", "False"}}, {{3}}, MakeRef(0, false, false),
                        "alias_upper"));
  cases->push_back(
      Case("_linalg_maketrian", {{"offset", "1"}}, {{2, 3}}, MakeRef(1, false, true), "above"));
  cases->push_back(F64(Case("_linalg_maketrian", {{"offset", "-1"}}, {{6}},
                            MakeRef(-1, false, true), "below_float64")));
}

HN_ERROR_CASES(Linalg) {
  cases->push_back(Rejected("_linalg_gemm2", {}, {{2, 3}, {4, 5}}, StatusCode::kShapeError,
                            {"_linalg_gemm2(node)", "cannot be multiplied"}));
  cases->push_back(Rejected("_linalg_gemm2", {{"axis", "1"}}, {{2, 3}, {3, 5}},
                            StatusCode::kShapeError, {"_linalg_gemm2(node)", "axis=1"}));
  cases->push_back(Rejected("_linalg_gemm", {}, {{2, 3}, {3, 2}, {3, 3}}, StatusCode::kShapeError,
                            {"_linalg_gemm(node)", "input 2"}));
  cases->push_back(Rejected("_linalg_gemm2", {}, {{2, 2}, {2, 2}}, StatusCode::kTypeError,
                            {"_linalg_gemm2(node)", "int32"}, {DType::kInt32, DType::kInt32}));
  cases->push_back(Rejected("_linalg_potrf", {}, {{2, 3}}, StatusCode::kShapeError,
                            {"_linalg_potrf(node)", "square"}));
  // The zero matrix is not positive definite.
  cases->push_back(Rejected("_linalg_potrf", {}, {{2, 2}}, StatusCode::kInvalidArgument,
                            {"_linalg_potrf(node)", "positive definite"}));
  cases->push_back(Rejected("_linalg_inverse", {}, {{3, 3}}, StatusCode::kInvalidArgument,
                            {"_linalg_inverse(node)", "singular"}));
  cases->push_back(Rejected("_linalg_trsm", {}, {{3, 3}, {2, 2}}, StatusCode::kShapeError,
                            {"_linalg_trsm(node)", "do not fit"}));
  cases->push_back(Rejected("_linalg_gelqf", {}, {{4, 3}}, StatusCode::kShapeError,
                            {"_linalg_gelqf(node)", "rows"}));
  cases->push_back(Rejected("_linalg_extractdiag", {{"offset", "3"}}, {{3, 3}},
                            StatusCode::kShapeError, {"_linalg_extractdiag(node)", "offset 3"}));
  cases->push_back(Rejected("_linalg_maketrian", {}, {{4}}, StatusCode::kShapeError,
                            {"_linalg_maketrian(node)", "triangular number"}));
  cases->push_back(Rejected("_linalg_det", {}, {{3}}, StatusCode::kShapeError,
                            {"_linalg_det(node)", "2 dimensions"}));
  cases->push_back(Rejected("khatri_rao", {{"num_args", "2"}}, {{2, 3}, {2, 4}},
                            StatusCode::kShapeError, {"khatri_rao(node)", "columns"}));
}

}  // namespace conformance
}  // namespace hybridnet
