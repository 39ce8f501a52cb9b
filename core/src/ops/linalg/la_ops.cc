// Linear algebra ops (MXNet src/operator/tensor/la_op{.h,-inl.h,.cc}, contrib/krprod.h):
// _linalg_gemm, gemm2, potrf, potri, trmm, trsm, sumlogdiag, extractdiag, makediag,
// extracttrian, maketrian, syrk, gelqf, syevd, inverse, det, slogdet, and khatri_rao.
//
// Inputs are batches of matrices: the last two axes are the matrix (for gemm/gemm2, the row
// axis is `axis` and the column axis the last one), every other axis is a batch axis. float32
// and float64, as in MXNet; the matrix products run on Gemm (blas.h), the other BLAS and
// LAPACK routines on OpenBLAS (lapack-inl.h), called the way MXNet's CPU kernels call them so
// that factorisations have MXNet's signs and layouts.
// Failures MXNet reports (potrf of a matrix that is not positive definite, inverse of a
// singular matrix) are errors naming the node.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "kernels/blas.h"
#include "kernels/workspace.h"
#include "ops/dtype_switch-inl.h"
#include "ops/gradient_util.h"
#include "ops/linalg/lapack-inl.h"
#include "ops/register_ops.h"
#include "ops/shape/shape_util-inl.h"

namespace hybridnet {

namespace {

using internal::AssignShape;
using internal::Lapack;

// ---------------------------------------------------------------------------------------------
// Shared pieces

// float32/float64 only; every input and output has one dtype.
bool RealType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const bool known = ElemwiseType(attrs, in, out);
  for (const auto* list : {in, out}) {
    for (DType d : *list) {
      HN_CHECK(d == DType::kUnknown || d == DType::kFloat32 || d == DType::kFloat64, kTypeError)
          << DescribeNode(attrs) << ": dtype " << DTypeName(d)
          << " is not supported; linear algebra ops take float32 or float64";
    }
  }
  return known;
}

template <typename Fn>
void SwitchReal(DType dtype, Fn&& fn) {
  if (dtype == DType::kFloat64) {
    fn(internal::TypeTag<double>{});
  } else {
    fn(internal::TypeTag<float>{});
  }
}

blasint Int(int64_t v) { return static_cast<blasint>(v); }

// A tensor as a batch of (rows, cols) matrices, rows along `row_axis`, cols the last axis.
struct Batch {
  int64_t lead = 1, mid = 1, rows = 0, cols = 0;
  int64_t Count() const { return lead * mid; }
  int64_t Ld() const { return mid * cols; }
  // The first element of matrix b (b in [0, Count())).
  int64_t Offset(int64_t b) const { return ((b / mid) * rows * mid + b % mid) * cols; }
};

Batch BatchOf(const Shape& s, size_t row_axis) {
  Batch m;
  const size_t nd = s.ndim();
  for (size_t k = 0; k < row_axis; ++k) m.lead *= s[k];
  for (size_t k = row_axis + 1; k + 1 < nd; ++k) m.mid *= s[k];
  m.rows = s[row_axis];
  m.cols = s[nd - 1];
  return m;
}

Batch SquareBatch(const Shape& s) { return BatchOf(s, s.ndim() - 2); }

// The input must be a batch of square matrices.
void CheckSquare(const NodeAttrs& attrs, const Shape& s, const char* what) {
  HN_CHECK(s.ndim() >= 2, kShapeError)
      << DescribeNode(attrs) << ": " << what << " must have at least 2 dimensions, got " << s;
  const int64_t r = s[s.ndim() - 2], c = s[s.ndim() - 1];
  HN_CHECK(r == 0 || c == 0 || r == c, kShapeError)
      << DescribeNode(attrs) << ": " << what << " must be (a batch of) square matrices, got " << s;
}

// Mirrors one triangle of each n x n matrix onto the other (lower -> upper or upper -> lower).
template <typename T>
void Mirror(T* a, int64_t count, int64_t n, bool from_lower) {
  for (int64_t b = 0; b < count; ++b, a += n * n)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < i; ++j) {
        if (from_lower) {
          a[j * n + i] = a[i * n + j];
        } else {
          a[i * n + j] = a[j * n + i];
        }
      }
}

// Zeros the strict upper (zero_upper) or strict lower triangle of each n x n matrix.
template <typename T>
void ZeroTriangle(T* a, int64_t count, int64_t n, bool zero_upper) {
  for (int64_t b = 0; b < count; ++b, a += n * n)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        if (zero_upper ? j > i : j < i) a[i * n + j] = T(0);
}

template <typename T>
void CopyIn(const TBlob& from, const TBlob& to) {
  if (from.data != to.data)
    std::copy(from.ptr<const T>(), from.ptr<const T>() + from.Size(), to.ptr<T>());
}

// ---------------------------------------------------------------------------------------------
// gemm, gemm2

struct GemmParam {
  bool transpose_a = false, transpose_b = false;
  double alpha = 1.0, beta = 1.0;
  int axis = -2;
  template <typename P>
  static void DeclareMult(ParamDeclarer<P>* d) {
    d->Field("transpose_a", static_cast<bool P::*>(&P::transpose_a))
        .Default(false)
        .Describe("Use the transpose of A.");
    d->Field("transpose_b", static_cast<bool P::*>(&P::transpose_b))
        .Default(false)
        .Describe("Use the transpose of B.");
    d->Field("alpha", static_cast<double P::*>(&P::alpha))
        .Default(1.0)
        .Describe("Factor of the product A * B.");
  }
  template <typename P>
  static void DeclareAxis(ParamDeclarer<P>* d) {
    d->Field("axis", static_cast<int P::*>(&P::axis))
        .Default(-2)
        .Describe(
            "Axis of the matrix rows (the columns are the last axis; the other axes "
            "are batch axes).");
  }
  static void Declare(ParamDeclarer<GemmParam>* d) {
    DeclareMult(d);
    d->Field("beta", &GemmParam::beta).Default(1.0).Describe("Factor of C.");
    DeclareAxis(d);
  }
};

// gemm2 has no C and no beta.
struct Gemm2Param : GemmParam {
  static void Declare(ParamDeclarer<Gemm2Param>* d) {
    DeclareMult(d);
    DeclareAxis(d);
  }
};

template <typename P>
size_t GemmRowAxis(const NodeAttrs& attrs, size_t ndim) {
  const int axis = attrs.Param<P>().axis;
  const int a = axis < 0 ? axis + static_cast<int>(ndim) : axis;
  HN_CHECK(a >= 0 && a + 1 < static_cast<int>(ndim), kShapeError)
      << DescribeNode(attrs) << ": axis=" << axis << " is not a row axis of a " << ndim
      << "-D input (it must come before the last axis)";
  return static_cast<size_t>(a);
}

template <typename P>
bool GemmShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const P& p = attrs.Param<P>();
  const Shape& a = (*in)[0];
  const Shape& b = (*in)[1];
  if (a.ndim() == 0 || b.ndim() == 0) return false;
  HN_CHECK(a.ndim() >= 2 && a.ndim() == b.ndim(), kShapeError)
      << DescribeNode(attrs) << ": A " << a << " and B " << b
      << " must have the same number (>= 2) of dimensions";
  const size_t nd = a.ndim(), ax = GemmRowAxis<P>(attrs, nd);
  std::vector<int64_t> od = a.dims();
  for (size_t k = 0; k + 1 < nd; ++k) {
    if (k == ax) continue;
    HN_CHECK(a[k] == 0 || b[k] == 0 || a[k] == b[k], kShapeError)
        << DescribeNode(attrs) << ": A " << a << " and B " << b
        << " differ outside the matrix axes";
    od[k] = a[k] ? a[k] : b[k];
  }
  const int64_t ka = p.transpose_a ? a[ax] : a[nd - 1];
  const int64_t kb = p.transpose_b ? b[nd - 1] : b[ax];
  HN_CHECK(ka == 0 || kb == 0 || ka == kb, kShapeError)
      << DescribeNode(attrs) << ": A " << a << (p.transpose_a ? " (transposed)" : "") << " and B "
      << b << (p.transpose_b ? " (transposed)" : "") << " cannot be multiplied";
  od[ax] = p.transpose_a ? a[nd - 1] : a[ax];
  od[nd - 1] = p.transpose_b ? b[ax] : b[nd - 1];
  AssignShape(attrs, out, 0, Shape(od), "output");
  if (in->size() > 2) AssignShape(attrs, in, 2, (*out)[0], "input");
  return internal::AllKnown(*in) && (*out)[0].IsKnown();
}

template <typename P>
void GemmCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                 const std::vector<TBlob>& out) {
  const P& p = attrs.Param<P>();
  const size_t ax = GemmRowAxis<P>(attrs, in[0].shape.ndim());
  const Batch a = BatchOf(in[0].shape, ax), b = BatchOf(in[1].shape, ax);
  const Batch c = BatchOf(out[0].shape, ax);
  const bool with_c = in.size() > 2;
  SwitchReal(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (with_c) CopyIn<T>(in[2], out[0]);
    const T beta = with_c ? static_cast<T>(p.beta) : T(0);
    const int64_t k = p.transpose_a ? a.rows : a.cols;
    for (int64_t i = 0; i < c.Count(); ++i) {
      internal::Gemm(p.transpose_a, p.transpose_b, c.rows, c.cols, k, static_cast<T>(p.alpha),
                     in[0].ptr<const T>() + a.Offset(i), a.Ld(), in[1].ptr<const T>() + b.Offset(i),
                     b.Ld(), beta, out[0].ptr<T>() + c.Offset(i), c.Ld());
    }
  });
}

// ---------------------------------------------------------------------------------------------
// trmm, trsm: a triangular A times (or solved against) B

struct TriangParam {
  bool transpose = false, rightside = false, lower = true;
  double alpha = 1.0;
  static void Declare(ParamDeclarer<TriangParam>* d) {
    d->Field("transpose", &TriangParam::transpose)
        .Default(false)
        .Describe("Use the transpose of the triangular matrix A.");
    d->Field("rightside", &TriangParam::rightside)
        .Default(false)
        .Describe("A multiplies (or divides) B from the right.");
    d->Field("lower", &TriangParam::lower)
        .Default(true)
        .Describe("A is lower (true) or upper triangular; only that triangle is read.");
    d->Field("alpha", &TriangParam::alpha).Default(1.0).Describe("Factor of the result.");
  }
};

bool TriangShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const TriangParam& p = attrs.Param<TriangParam>();
  const Shape& a = (*in)[0];
  const Shape& b = (*in)[1];
  if (a.ndim() == 0 || b.ndim() == 0) return false;
  CheckSquare(attrs, a, "A");
  HN_CHECK(a.ndim() == b.ndim(), kShapeError)
      << DescribeNode(attrs) << ": A " << a << " and B " << b << " differ in rank";
  const size_t nd = a.ndim();
  for (size_t k = 0; k + 2 < nd; ++k)
    HN_CHECK(a[k] == b[k], kShapeError)
        << DescribeNode(attrs) << ": A " << a << " and B " << b << " differ in their batch axes";
  const int64_t inner = p.rightside ? b[nd - 1] : b[nd - 2];
  HN_CHECK(inner == a[nd - 1], kShapeError)
      << DescribeNode(attrs) << ": A " << a << " and B " << b << " do not fit ("
      << (p.rightside ? "B * A" : "A * B") << ")";
  AssignShape(attrs, out, 0, b, "output");
  return a.IsKnown() && b.IsKnown();
}

template <bool kSolve>
void TriangCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                   const std::vector<TBlob>& out) {
  const TriangParam& p = attrs.Param<TriangParam>();
  const Batch a = SquareBatch(in[0].shape), c = SquareBatch(out[0].shape);
  SwitchReal(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    CopyIn<T>(in[1], out[0]);
    const auto side = p.rightside ? CblasRight : CblasLeft;
    const auto uplo = p.lower ? CblasLower : CblasUpper;
    const auto trans = p.transpose ? CblasTrans : CblasNoTrans;
    for (int64_t i = 0; i < c.Count(); ++i) {
      const T* am = in[0].ptr<const T>() + i * a.rows * a.cols;
      T* cm = out[0].ptr<T>() + i * c.rows * c.cols;
      if (kSolve) {
        Lapack<T>::trsm(side, uplo, trans, Int(c.rows), Int(c.cols), static_cast<T>(p.alpha), am,
                        Int(a.cols), cm, Int(c.cols));
      } else {
        Lapack<T>::trmm(side, uplo, trans, Int(c.rows), Int(c.cols), static_cast<T>(p.alpha), am,
                        Int(a.cols), cm, Int(c.cols));
      }
    }
  });
}

// ---------------------------------------------------------------------------------------------
// potrf, potri (Cholesky factor and the inverse from it), inverse

struct CholeskyParam {
  bool lower = true;
  static void Declare(ParamDeclarer<CholeskyParam>* d) {
    d->Field("lower", &CholeskyParam::lower)
        .Default(true)
        .Describe("The factor is lower (A = L L^T) or upper (A = U^T U) triangular.");
  }
};

bool SquareShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& known = (*in)[0].ndim() != 0 ? (*in)[0] : (*out)[0];
  if (known.ndim() != 0) CheckSquare(attrs, known, "A");
  return ElemwiseShape(attrs, in, out);
}

template <bool kInverse>
void CholeskyCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                     const std::vector<TBlob>& out) {
  const bool lower = attrs.Param<CholeskyParam>().lower;
  const Batch m = SquareBatch(out[0].shape);
  const int64_t n = m.rows;
  // A row-major lower triangle is LAPACK's (column-major) upper one.
  const char uplo = lower ? 'U' : 'L';
  SwitchReal(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    CopyIn<T>(in[0], out[0]);
    T* a = out[0].ptr<T>();
    for (int64_t i = 0; i < m.Count(); ++i) {
      T* ai = a + i * n * n;
      const blasint info =
          kInverse ? Lapack<T>::potri(uplo, Int(n), ai) : Lapack<T>::potrf(uplo, Int(n), ai);
      HN_CHECK(info == 0, kInvalidArgument)
          << DescribeNode(attrs) << ": matrix " << i << " of the batch "
          << (kInverse ? "is singular (a zero on the factor's diagonal)"
                       : "is not positive definite")
          << " (LAPACK info " << info << ")";
    }
    if (kInverse) {
      Mirror(a, m.Count(), n, lower);
    } else {
      ZeroTriangle(a, m.Count(), n, /*zero_upper=*/lower);
    }
  });
}

void InverseCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                    const std::vector<TBlob>& out) {
  const Batch m = SquareBatch(out[0].shape);
  const int64_t n = m.rows;
  SwitchReal(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    CopyIn<T>(in[0], out[0]);
    blasint* pivot = ctx.workspace->Get<blasint>(internal::kOpSlot0, static_cast<size_t>(n));
    T query = 0;
    Lapack<T>::getri(Int(n), nullptr, pivot, &query, -1);
    const blasint lwork = std::max<blasint>(1, static_cast<blasint>(query));
    T* work = ctx.workspace->Get<T>(internal::kOpSlot1, static_cast<size_t>(lwork));
    for (int64_t i = 0; i < m.Count(); ++i) {
      T* ai = out[0].ptr<T>() + i * n * n;
      blasint info = Lapack<T>::getrf(Int(n), ai, pivot);
      if (info == 0) info = Lapack<T>::getri(Int(n), ai, pivot, work, lwork);
      HN_CHECK(info == 0, kInvalidArgument)
          << DescribeNode(attrs) << ": matrix " << i << " of the batch is singular";
    }
  });
}

// ---------------------------------------------------------------------------------------------
// det, slogdet (LU with partial pivoting, as MXNet computes them)

bool DetShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& a = (*in)[0];
  if (a.ndim() == 0) return false;
  CheckSquare(attrs, a, "A");
  const Shape os = a.ndim() == 2 ? Shape{1} : Shape(a.begin(), a.end() - 2);
  for (size_t i = 0; i < out->size(); ++i) AssignShape(attrs, out, i, os, "output");
  return a.IsKnown();
}

template <bool kLog>
void DetCompute(const OpContext& ctx, const NodeAttrs&, const std::vector<TBlob>& in,
                const std::vector<TBlob>& out) {
  const Batch m = SquareBatch(in[0].shape);
  const int64_t n = m.rows;
  SwitchReal(in[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* lu = ctx.workspace->Get<T>(internal::kOpSlot1, static_cast<size_t>(n * n));
    blasint* pivot = ctx.workspace->Get<blasint>(internal::kOpSlot0, static_cast<size_t>(n));
    for (int64_t i = 0; i < m.Count(); ++i) {
      std::copy(in[0].ptr<const T>() + i * n * n, in[0].ptr<const T>() + (i + 1) * n * n, lu);
      Lapack<T>::getrf(Int(n), lu, pivot);  // singular matrices give a zero on the diagonal
      int64_t swaps = 0;
      T sign(1), logsum(0);
      for (int64_t j = 0; j < n; ++j) {
        swaps += pivot[j] != j + 1;
        const T d = lu[j * (n + 1)];
        sign *= static_cast<T>((T(0) < d) - (d < T(0)));
        logsum += std::log(std::abs(d));
      }
      if (swaps % 2 == 1) sign = -sign;
      if (kLog) {
        out[0].ptr<T>()[i] = sign;
        out[1].ptr<T>()[i] = logsum;
      } else {
        out[0].ptr<T>()[i] = sign * std::exp(logsum);
      }
    }
  });
}

// ---------------------------------------------------------------------------------------------
// syrk, sumlogdiag

struct SyrkParam {
  bool transpose = false;
  double alpha = 1.0;
  static void Declare(ParamDeclarer<SyrkParam>* d) {
    d->Field("transpose", &SyrkParam::transpose)
        .Default(false)
        .Describe("Compute alpha * A^T A instead of alpha * A A^T.");
    d->Field("alpha", &SyrkParam::alpha).Default(1.0).Describe("Factor of the product.");
  }
};

bool SyrkShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& a = (*in)[0];
  if (a.ndim() == 0) return false;
  HN_CHECK(a.ndim() >= 2, kShapeError)
      << DescribeNode(attrs) << ": A must have at least 2 dimensions, got " << a;
  const size_t nd = a.ndim();
  const int64_t n = attrs.Param<SyrkParam>().transpose ? a[nd - 1] : a[nd - 2];
  std::vector<int64_t> od = a.dims();
  od[nd - 2] = od[nd - 1] = n;
  AssignShape(attrs, out, 0, Shape(od), "output");
  return a.IsKnown();
}

void SyrkCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                 const std::vector<TBlob>& out) {
  const SyrkParam& p = attrs.Param<SyrkParam>();
  const Batch a = SquareBatch(in[0].shape);
  const int64_t n = p.transpose ? a.cols : a.rows, k = p.transpose ? a.rows : a.cols;
  SwitchReal(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t i = 0; i < a.Count(); ++i) {
      Lapack<T>::syrk(p.transpose ? CblasTrans : CblasNoTrans, Int(n), Int(k),
                      static_cast<T>(p.alpha), in[0].ptr<const T>() + i * a.rows * a.cols,
                      Int(a.cols), out[0].ptr<T>() + i * n * n, Int(n));
    }
    Mirror(out[0].ptr<T>(), a.Count(), n, /*from_lower=*/true);
  });
}

bool SumLogDiagShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& a = (*in)[0];
  if (a.ndim() == 0) return false;
  CheckSquare(attrs, a, "A");
  AssignShape(attrs, out, 0, a.ndim() == 2 ? Shape{1} : Shape(a.begin(), a.end() - 2), "output");
  return a.IsKnown();
}

void SumLogDiagCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                       const std::vector<TBlob>& out) {
  const Batch m = SquareBatch(in[0].shape);
  const int64_t n = m.rows;
  SwitchReal(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* a = in[0].ptr<const T>();
    for (int64_t i = 0; i < m.Count(); ++i) {
      T sum(0);
      for (int64_t j = 0; j < n; ++j) sum += std::log(a[(i * n + j) * n + j]);
      out[0].ptr<T>()[i] = sum;
    }
  });
}

// ---------------------------------------------------------------------------------------------
// extractdiag, makediag, extracttrian, maketrian

struct DiagTrianParam {
  int offset = 0;
  bool lower = true;  // declared by the triangle ops only
  static void Declare(ParamDeclarer<DiagTrianParam>* d) {
    d->Field("offset", &DiagTrianParam::offset)
        .Default(0)
        .Describe("Which diagonal: 0 the main one, > 0 above it, < 0 below it.");
  }
};

// The triangle ops add `lower`.
struct TrianParam : DiagTrianParam {
  static void Declare(ParamDeclarer<TrianParam>* d) {
    d->Field("offset", static_cast<int TrianParam::*>(&DiagTrianParam::offset))
        .Default(0)
        .Describe(
            "Which diagonal bounds the triangle: 0 the main one, > 0 above it (an upper "
            "triangle), < 0 below it (a lower triangle).");
    d->Field("lower", static_cast<bool TrianParam::*>(&DiagTrianParam::lower))
        .Default(true)
        .Describe("With offset 0: the lower (true) or the upper triangle.");
  }
};

// Position (in the packed vector of length t(t+1)/2) of element (row, col) of an n x n matrix
// in the triangle, or -1 outside it: MXNet's CopyTrian walks the upper triangle transposed.
int64_t TrianIndex(int64_t row, int64_t col, int offset, bool lower) {
  if (offset > 0 || (offset == 0 && !lower)) std::swap(row, col);
  row -= std::abs(offset);
  return row >= col ? row * (row + 1) / 2 + col : -1;
}

template <typename P, bool kDiag, bool kExtract>
bool DiagTrianShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& a = (*in)[0];
  if (a.ndim() == 0) return false;
  const int k = std::abs(attrs.Param<P>().offset);
  std::vector<int64_t> od(a.begin(), a.end());
  const int64_t last = a[a.ndim() - 1];
  if (kExtract) {
    CheckSquare(attrs, a, "A");
    const int64_t n = last - k;
    HN_CHECK(last == 0 || n > 0, kShapeError)
        << DescribeNode(attrs) << ": offset " << attrs.Param<P>().offset
        << " leaves nothing of the " << last << "x" << last << " matrices of " << a;
    od.pop_back();
    od.back() = last == 0 ? 0 : kDiag ? n : n * (n + 1) / 2;
  } else {
    int64_t n = last;
    if (!kDiag && last != 0) {
      n = static_cast<int64_t>(
          std::floor(0.5 + (std::sqrt(8.0 * static_cast<double>(last) + 1) - 1.0) * 0.5));
      HN_CHECK(n * (n + 1) / 2 == last, kShapeError)
          << DescribeNode(attrs) << ": the last axis of " << a << " (" << last
          << ") is not a triangular number n(n+1)/2";
    }
    od.back() = last == 0 ? 0 : n + k;
    od.push_back(od.back());
  }
  AssignShape(attrs, out, 0, Shape(od), "output");
  return a.IsKnown();
}

template <typename P, bool kDiag, bool kExtract>
void DiagTrianCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                      const std::vector<TBlob>& out) {
  const P& p = attrs.Param<P>();
  const Shape& square = kExtract ? in[0].shape : out[0].shape;
  const Batch m = SquareBatch(square);
  const int64_t n = m.rows;
  const int64_t packed = (kExtract ? out[0].Size() : in[0].Size()) / m.Count();
  SwitchReal(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in[0].ptr<const T>();
    T* y = out[0].ptr<T>();
    if (!kExtract) std::fill(y, y + out[0].Size(), T(0));
    for (int64_t b = 0; b < m.Count(); ++b) {
      for (int64_t r = 0; r < n; ++r) {
        for (int64_t c = 0; c < n; ++c) {
          const int64_t j = kDiag ? (c - r == p.offset ? (p.offset >= 0 ? r : c) : -1)
                                  : TrianIndex(r, c, p.offset, p.lower);
          if (j < 0) continue;
          const int64_t sq = (b * n + r) * n + c, pk = b * packed + j;
          if (kExtract) {
            y[pk] = x[sq];
          } else {
            y[sq] = x[pk];
          }
        }
      }
    }
  });
}

// ---------------------------------------------------------------------------------------------
// gelqf (A = L Q), syevd (A = U^T diag(L) U)

bool GelqfShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& a = (*in)[0];
  if (a.ndim() == 0) return false;
  HN_CHECK(a.ndim() >= 2, kShapeError)
      << DescribeNode(attrs) << ": A must have at least 2 dimensions, got " << a;
  const size_t nd = a.ndim();
  HN_CHECK(a[nd - 2] == 0 || a[nd - 1] == 0 || a[nd - 2] <= a[nd - 1], kShapeError)
      << DescribeNode(attrs) << ": A " << a << " must have no more rows than columns";
  AssignShape(attrs, out, 0, a, "output");
  std::vector<int64_t> l = a.dims();
  l[nd - 1] = a[nd - 2];
  AssignShape(attrs, out, 1, Shape(l), "output");
  return a.IsKnown();
}

void GelqfCompute(const OpContext& ctx, const NodeAttrs&, const std::vector<TBlob>& in,
                  const std::vector<TBlob>& out) {
  const Batch a = SquareBatch(in[0].shape);
  const int64_t m = a.rows, n = a.cols;
  SwitchReal(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    CopyIn<T>(in[0], out[0]);
    // Row-major (m, n) is column-major A^T (n, m): A = L Q is A^T = Q^T L^T, a QR.
    T* tau = ctx.workspace->Get<T>(internal::kOpSlot0, static_cast<size_t>(m));
    T q1 = 0, q2 = 0;
    Lapack<T>::geqrf(Int(n), Int(m), nullptr, tau, &q1, -1);
    Lapack<T>::orgqr(Int(n), Int(m), Int(m), nullptr, tau, &q2, -1);
    const blasint lwork = std::max<blasint>(1, static_cast<blasint>(std::max(q1, q2)));
    T* work = ctx.workspace->Get<T>(internal::kOpSlot1, static_cast<size_t>(lwork));
    for (int64_t i = 0; i < a.Count(); ++i) {
      T* q = out[0].ptr<T>() + i * m * n;
      T* l = out[1].ptr<T>() + i * m * m;
      Lapack<T>::geqrf(Int(n), Int(m), q, tau, work, lwork);
      // R's upper triangle, read row-major, is L's lower one: the first m columns of each row.
      for (int64_t r = 0; r < m; ++r)
        for (int64_t c = 0; c < m; ++c) l[r * m + c] = c <= r ? q[r * n + c] : T(0);
      Lapack<T>::orgqr(Int(n), Int(m), Int(m), q, tau, work, lwork);
    }
  });
}

bool SyevdShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& a = (*in)[0];
  if (a.ndim() == 0) return false;
  CheckSquare(attrs, a, "A");
  AssignShape(attrs, out, 0, a, "output");
  AssignShape(attrs, out, 1, Shape(a.begin(), a.end() - 1), "output");
  return a.IsKnown();
}

void SyevdCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                  const std::vector<TBlob>& out) {
  const Batch a = SquareBatch(in[0].shape);
  const int64_t n = a.rows;
  SwitchReal(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    CopyIn<T>(in[0], out[0]);
    T qwork = 0;
    blasint qiwork = 0;
    Lapack<T>::syevd('U', Int(n), nullptr, nullptr, &qwork, -1, &qiwork, -1);
    const blasint lwork = std::max<blasint>(1, static_cast<blasint>(qwork));
    const blasint liwork = std::max<blasint>(1, qiwork);
    T* work = ctx.workspace->Get<T>(internal::kOpSlot1, static_cast<size_t>(lwork));
    blasint* iwork = ctx.workspace->Get<blasint>(internal::kOpSlot0, static_cast<size_t>(liwork));
    for (int64_t i = 0; i < a.Count(); ++i) {
      T* u = out[0].ptr<T>() + i * n * n;
      // The row-major lower triangle is LAPACK's upper one; eigenvectors come back as rows.
      const blasint info =
          Lapack<T>::syevd('U', Int(n), u, out[1].ptr<T>() + i * n, work, lwork, iwork, liwork);
      HN_CHECK(info == 0, kInvalidArgument)
          << DescribeNode(attrs) << ": the eigensolver did not converge for matrix " << i;
      // MXNet's sign convention: the largest-magnitude entry of each eigenvector is positive.
      for (int64_t r = 0; r < n; ++r) {
        T* row = u + r * n;
        int64_t at = 0;
        for (int64_t c = 1; c < n; ++c)
          if (std::abs(row[c]) > std::abs(row[at])) at = c;
        if (row[at] < T(0))
          for (int64_t c = 0; c < n; ++c) row[c] = -row[c];
      }
    }
  });
}

// ---------------------------------------------------------------------------------------------
// khatri_rao: the column-wise Kronecker product of (rows_i, k) matrices, (prod rows_i, k)

struct KhatriRaoParam {
  int num_args = 0;
  static void Declare(ParamDeclarer<KhatriRaoParam>* d) {
    d->Field("num_args", &KhatriRaoParam::num_args)
        .Required()
        .Min(1)
        .Describe("Number of input matrices.");
  }
};

bool KhatriRaoShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  int64_t rows = 1, cols = 0;
  for (size_t i = 0; i < in->size(); ++i) {
    const Shape& s = (*in)[i];
    if (s.ndim() == 0) return false;
    HN_CHECK(s.ndim() == 2, kShapeError)
        << DescribeNode(attrs) << ": input " << i << " must be a matrix, got " << s;
    HN_CHECK(cols == 0 || s[1] == 0 || s[1] == cols, kShapeError)
        << DescribeNode(attrs) << ": input " << i << " " << s << " has " << s[1]
        << " columns, the others " << cols;
    if (s[1] != 0) cols = s[1];
    rows *= s[0];
  }
  AssignShape(attrs, out, 0, Shape{rows, cols}, "output");
  return internal::AllKnown(*in);
}

void KhatriRaoCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                      const std::vector<TBlob>& out) {
  const int64_t rows = out[0].shape[0], cols = out[0].shape[1];
  SwitchReal(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* y = out[0].ptr<T>();
    for (int64_t r = 0; r < rows; ++r) {
      // Row r picks row r_i of every input, the first input's index most significant.
      for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = T(1);
      int64_t rest = r, span = rows;
      for (const TBlob& x : in) {
        span /= x.shape[0];
        const T* xr = x.ptr<const T>() + (rest / span) * cols;
        rest %= span;
        for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = xr[c] * y[r * cols + c];
      }
    }
  });
}

FListNames ArgNames() {
  return [](const NodeAttrs& attrs) {
    std::vector<std::string> names;
    for (int i = 0; i < attrs.Param<KhatriRaoParam>().num_args; ++i)
      names.push_back("arg" + std::to_string(i));
    return names;
  };
}

// _linalg_gemm2 and _linalg_gemm: alpha op(A) op(B)'s gradients are _linalg_gemm2 products with
// the same alpha and axis; gemm's C gets beta times the output gradient (MXNet's).
std::vector<NodeEntry> GemmGradient(const std::shared_ptr<Node>& n,
                                    const std::vector<NodeEntry>& dy) {
  internal::GradientBuilder g(n, dy);
  const bool with_c = g.attrs().op->name == "_linalg_gemm";
  const GemmParam& p = with_c ? g.attrs().Param<GemmParam>() : g.attrs().Param<Gemm2Param>();
  AttrDict attrs;
  for (const char* key : {"alpha", "axis"}) {
    auto it = g.attrs().dict.find(key);
    if (it != g.attrs().dict.end()) attrs[key] = it->second;
  }
  std::vector<NodeEntry> grads = internal::MatrixProductGradient(
      g, "_linalg_gemm2", p.transpose_a, p.transpose_b, g.out_grad(0), attrs);
  if (with_c) {
    grads.push_back(g.Scalar("_mul_scalar", g.out_grad(0), p.beta));
  }
  return grads;
}

}  // namespace

void RegisterLinalgOps(OpRegistry* r) {
  r->Register("_linalg_gemm")
      .Describe(
          "alpha * op(A) * op(B) + beta * C for each matrix of the batch (op: optional "
          "transpose; rows on axis, columns on the last axis).")
      .AddAlias("linalg_gemm")
      .SetParam<GemmParam>()
      .SetInputNames({"A", "B", "C"})
      .SetInferShape(GemmShape<GemmParam>)
      .SetInferType(RealType)
      .SetCompute(GemmCompute<GemmParam>)
      .SetInplace({{2, 0}})
      .SetGradient(GemmGradient);

  r->Register("_linalg_gemm2")
      .Describe("alpha * op(A) * op(B) for each matrix of the batch.")
      .AddAlias("linalg_gemm2")
      .SetParam<Gemm2Param>()
      .SetInputNames({"A", "B"})
      .SetInferShape(GemmShape<Gemm2Param>)
      .SetInferType(RealType)
      .SetCompute(GemmCompute<Gemm2Param>)
      .SetGradient(GemmGradient);

  r->Register("_linalg_potrf")
      .Describe(
          "Cholesky factor of each symmetric positive definite matrix: L with A = L L^T "
          "(or U with A = U^T U when lower is false); the other triangle is zero.")
      .AddAlias("linalg_potrf")
      .SetParam<CholeskyParam>()
      .SetInputNames({"A"})
      .SetInferShape(SquareShape)
      .SetInferType(RealType)
      .SetCompute(CholeskyCompute<false>)
      .SetInplace({{0, 0}});

  r->Register("_linalg_potri")
      .Describe(
          "The inverse of A = L L^T from its Cholesky factor L (only L's triangle is "
          "read).")
      .AddAlias("linalg_potri")
      .SetParam<CholeskyParam>()
      .SetInputNames({"A"})
      .SetInferShape(SquareShape)
      .SetInferType(RealType)
      .SetCompute(CholeskyCompute<true>)
      .SetInplace({{0, 0}});

  r->Register("_linalg_trmm")
      .Describe("alpha * op(A) * B (or alpha * B * op(A), rightside) for a triangular A.")
      .AddAlias("linalg_trmm")
      .SetParam<TriangParam>()
      .SetInputNames({"A", "B"})
      .SetInferShape(TriangShape)
      .SetInferType(RealType)
      .SetCompute(TriangCompute<false>)
      .SetInplace({{1, 0}});

  r->Register("_linalg_trsm")
      .Describe(
          "Solves op(A) * X = alpha * B (or X * op(A) = alpha * B, rightside) for a "
          "triangular A.")
      .AddAlias("linalg_trsm")
      .SetParam<TriangParam>()
      .SetInputNames({"A", "B"})
      .SetInferShape(TriangShape)
      .SetInferType(RealType)
      .SetCompute(TriangCompute<true>)
      .SetInplace({{1, 0}});

  r->Register("_linalg_sumlogdiag")
      .Describe("Sum of the logarithms of each square matrix's diagonal.")
      .AddAlias("linalg_sumlogdiag")
      .SetInputNames({"A"})
      .SetInferShape(SumLogDiagShape)
      .SetInferType(RealType)
      .SetCompute(SumLogDiagCompute);

  r->Register("_linalg_extractdiag")
      .Describe("Diagonal `offset` of each square matrix, as a vector.")
      .AddAlias("linalg_extractdiag")
      .SetParam<DiagTrianParam>()
      .SetInputNames({"A"})
      .SetInferShape(DiagTrianShape<DiagTrianParam, true, true>)
      .SetInferType(RealType)
      .SetCompute(DiagTrianCompute<DiagTrianParam, true, true>);

  r->Register("_linalg_makediag")
      .Describe("Square matrices with each vector on diagonal `offset` and zeros elsewhere.")
      .AddAlias("linalg_makediag")
      .SetParam<DiagTrianParam>()
      .SetInputNames({"A"})
      .SetInferShape(DiagTrianShape<DiagTrianParam, true, false>)
      .SetInferType(RealType)
      .SetCompute(DiagTrianCompute<DiagTrianParam, true, false>);

  r->Register("_linalg_extracttrian")
      .Describe(
          "The triangle of each square matrix bounded by diagonal `offset`, packed row "
          "by row (the upper triangle column by column) into a vector.")
      .AddAlias("linalg_extracttrian")
      .SetParam<TrianParam>()
      .SetInputNames({"A"})
      .SetInferShape(DiagTrianShape<TrianParam, false, true>)
      .SetInferType(RealType)
      .SetCompute(DiagTrianCompute<TrianParam, false, true>);

  r->Register("_linalg_maketrian")
      .Describe(
          "The inverse of extracttrian: square matrices holding the packed triangles, "
          "zeros elsewhere.")
      .AddAlias("linalg_maketrian")
      .SetParam<TrianParam>()
      .SetInputNames({"A"})
      .SetInferShape(DiagTrianShape<TrianParam, false, false>)
      .SetInferType(RealType)
      .SetCompute(DiagTrianCompute<TrianParam, false, false>);

  r->Register("_linalg_syrk")
      .Describe("alpha * A * A^T (or alpha * A^T * A, transpose) for each matrix.")
      .AddAlias("linalg_syrk")
      .SetParam<SyrkParam>()
      .SetInputNames({"A"})
      .SetInferShape(SyrkShape)
      .SetInferType(RealType)
      .SetCompute(SyrkCompute);

  r->Register("_linalg_gelqf")
      .Describe(
          "LQ factorisation A = L * Q of each (m, n) matrix with m <= n: Q (m, n) with "
          "orthonormal rows and a lower triangular L (m, m).")
      .AddAlias("linalg_gelqf")
      .SetInputNames({"A"})
      .SetNumOutputs(2)
      .SetInferShape(GelqfShape)
      .SetInferType(RealType)
      .SetCompute(GelqfCompute);

  r->Register("_linalg_syevd")
      .Describe(
          "Eigendecomposition A = U^T diag(L) U of each symmetric matrix (its lower "
          "triangle is read): eigenvectors as the rows of U, each with its largest entry "
          "positive, and eigenvalues L in ascending order.")
      .SetInputNames({"A"})
      .SetNumOutputs(2)
      .SetInferShape(SyevdShape)
      .SetInferType(RealType)
      .SetCompute(SyevdCompute);

  r->Register("_linalg_inverse")
      .Describe("The inverse of each square matrix.")
      .AddAlias("linalg_inverse")
      .SetInputNames({"A"})
      .SetInferShape(SquareShape)
      .SetInferType(RealType)
      .SetCompute(InverseCompute);

  r->Register("_linalg_det")
      .Describe(
          "Determinant of each square matrix (LU with partial pivoting); shape (1,) "
          "for a single matrix.")
      .AddAlias("linalg_det")
      .SetInputNames({"A"})
      .SetNumTotalOutputs(3)  // MXNet's hidden LU and pivot outputs
      .SetInferShape(DetShape)
      .SetInferType(RealType)
      .SetCompute(DetCompute<false>);

  r->Register("_linalg_slogdet")
      .Describe("Sign and log of the absolute determinant of each square matrix.")
      .AddAlias("linalg_slogdet")
      .SetInputNames({"A"})
      .SetNumOutputs(2)
      .SetNumTotalOutputs(4)  // MXNet's hidden LU and pivot outputs
      .SetInferShape(DetShape)
      .SetInferType(RealType)
      .SetCompute(DetCompute<true>);

  r->Register("khatri_rao")
      .Describe(
          "Column-wise Kronecker product of (m_i, k) matrices: (prod m_i, k), row r "
          "taking row r_i of each input with the first input most significant.")
      .SetParam<KhatriRaoParam>()
      .SetKeyVarNumArgs("num_args")
      .SetInputNames(ArgNames())
      .SetNumInputs([](const NodeAttrs& attrs) {
        return static_cast<uint32_t>(attrs.Param<KhatriRaoParam>().num_args);
      })
      .SetInferShape(KhatriRaoShape)
      .SetInferType(RealType)
      .SetCompute(KhatriRaoCompute);
}

}  // namespace hybridnet
