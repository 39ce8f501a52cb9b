// The transformer building blocks GluonNLP exports: batch_dot (MXNet src/operator/tensor/
// dot-inl.h), the interleaved multi-head attention matmuls and div_sqrt_dim (src/operator/
// contrib/transformer.cc).
//
// Interleaved layouts: a self-attention projection (T, N, 3 * H * D) holds, per time step and
// batch element, H heads of [query | key | value] with D features each; the encoder-decoder
// keys_values (T, N, 2 * H * D) holds H heads of [key | value]; queries (T, N, H * D). Attention
// scores are (N * H, Tq, Tk), indexed by n * H + h. Every product goes through Gemm (blas.h).
// MXNet's CPU kernels of the interleaved ops take float32 only; batch_dot and div_sqrt_dim
// also take float64.

#include "ops/sequence/attention.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "kernels/blas.h"
#include "ops/gradient_util.h"
#include "ops/register_ops.h"
#include "ops/shape/shape_util-inl.h"

namespace hybridnet {

namespace {

// float32 or float64, one dtype for every input and output (MXNet's real-type kernels).
bool RealType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const bool known = ElemwiseType(attrs, in, out);
  for (size_t i = 0; i < in->size(); ++i) {
    const DType d = (*in)[i];
    HN_CHECK(d == DType::kUnknown || d == DType::kFloat32 || d == DType::kFloat64, kTypeError)
        << DescribeNode(attrs) << ": input " << i << " has dtype " << DTypeName(d)
        << "; expected float32 or float64";
  }
  return known;
}

template <typename Fn>
void SwitchReal(DType dtype, Fn&& fn) {
  if (dtype == DType::kFloat64) {
    fn(double{});
  } else {
    fn(float{});
  }
}

// ---- batch_dot ------------------------------------------------------------------------------

enum class StorageType { kCsr, kDefault, kRowSparse };

struct BatchDotParam {
  bool transpose_a = false;
  bool transpose_b = false;
  std::optional<StorageType> forward_stype;
  static void Declare(ParamDeclarer<BatchDotParam>* d) {
    d->Field("transpose_a", &BatchDotParam::transpose_a)
        .Default(false)
        .Describe("If true, each lhs matrix is transposed before the product.");
    d->Field("transpose_b", &BatchDotParam::transpose_b)
        .Default(false)
        .Describe("If true, each rhs matrix is transposed before the product.");
    d->Field("forward_stype", &BatchDotParam::forward_stype,
             {{"csr", StorageType::kCsr},
              {"default", StorageType::kDefault},
              {"row_sparse", StorageType::kRowSparse}})
        .Default(std::nullopt)
        .Describe("Storage type MXNet would give the output; accepted, the output is dense.");
  }
};

bool BatchDotShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const BatchDotParam& p = attrs.Param<BatchDotParam>();
  const Shape& a = (*in)[0];
  const Shape& b = (*in)[1];
  if (a.ndim() == 0 || b.ndim() == 0) return false;
  HN_CHECK(a.ndim() >= 3 && a.ndim() == b.ndim(), kShapeError)
      << DescribeNode(attrs) << ": lhs " << a << " and rhs " << b
      << " must have one rank of at least 3";
  const size_t n = a.ndim();
  for (size_t i = 0; i + 2 < n; ++i)
    HN_CHECK(a[i] == b[i] || a[i] == 0 || b[i] == 0, kShapeError)
        << DescribeNode(attrs) << ": batch dimensions of lhs " << a << " and rhs " << b
        << " differ";
  const int64_t m = p.transpose_a ? a[n - 1] : a[n - 2];
  const int64_t ka = p.transpose_a ? a[n - 2] : a[n - 1];
  const int64_t kb = p.transpose_b ? b[n - 1] : b[n - 2];
  const int64_t cols = p.transpose_b ? b[n - 2] : b[n - 1];
  HN_CHECK(ka == kb || ka == 0 || kb == 0, kShapeError)
      << DescribeNode(attrs) << ": lhs " << a << " and rhs " << b
      << " have different reduction dimensions (transpose_a=" << p.transpose_a
      << ", transpose_b=" << p.transpose_b << ")";
  std::vector<int64_t> dims;
  for (size_t i = 0; i + 2 < n; ++i) dims.push_back(a[i] != 0 ? a[i] : b[i]);
  dims.push_back(m);
  dims.push_back(cols);
  internal::AssignShape(attrs, out, 0, Shape(dims), "output");
  return a.IsKnown() && b.IsKnown();
}

void BatchDotCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                     const std::vector<TBlob>& out) {
  const BatchDotParam& p = attrs.Param<BatchDotParam>();
  const Shape& a = in[0].shape;
  const Shape& b = in[1].shape;
  const size_t n = a.ndim();
  int64_t batch = 1;
  for (size_t i = 0; i + 2 < n; ++i) batch *= a[i];
  const int64_t m = p.transpose_a ? a[n - 1] : a[n - 2];
  const int64_t k = p.transpose_a ? a[n - 2] : a[n - 1];
  const int64_t cols = p.transpose_b ? b[n - 2] : b[n - 1];
  SwitchReal(in[0].dtype, [&](auto zero) {
    using T = decltype(zero);
    const T* x = in[0].ptr<const T>();
    const T* y = in[1].ptr<const T>();
    T* z = out[0].ptr<T>();
    for (int64_t i = 0; i < batch; ++i)
      internal::Gemm(p.transpose_a, p.transpose_b, m, cols, k, T{1}, x + i * m * k, a[n - 1],
                     y + i * k * cols, b[n - 1], T{0}, z + i * m * cols, cols);
  });
}

// ---- interleaved attention -----------------------------------------------------------------

struct InterleavedParam {
  int heads = 0;
  static void Declare(ParamDeclarer<InterleavedParam>* d) {
    d->Field("heads", &InterleavedParam::heads)
        .Required()
        .Min(1)
        .Describe("Number of attention heads.");
  }
};

// The head size D of a (T, N, parts * H * D) projection of `heads` heads, checking its shape.
int64_t HeadDim(const NodeAttrs& attrs, int64_t heads, const Shape& s, int64_t parts,
                const char* name) {
  HN_CHECK(s.ndim() == 3, kShapeError)
      << DescribeNode(attrs) << ": " << name << " must be (seq_len, batch, features), got " << s;
  HN_CHECK(s[2] == 0 || s[2] % (parts * heads) == 0, kShapeError)
      << DescribeNode(attrs) << ": the last dimension of " << name << " " << s
      << " must be a multiple of " << parts << " * heads (" << parts * heads << ")";
  return s[2] / (parts * heads);
}

}  // namespace

namespace internal {

bool SelfAttQKShape(const NodeAttrs& attrs, int64_t heads, std::vector<Shape>* in,
                    std::vector<Shape>* out) {
  const Shape& qkv = (*in)[0];
  if (qkv.ndim() == 0) return false;
  HeadDim(attrs, heads, qkv, 3, "queries_keys_values");
  internal::AssignShape(attrs, out, 0, Shape{qkv[1] * heads, qkv[0], qkv[0]}, "output");
  return qkv.IsKnown();
}

bool SelfAttValAttShape(const NodeAttrs& attrs, int64_t heads, std::vector<Shape>* in,
                        std::vector<Shape>* out) {
  const Shape& qkv = (*in)[0];
  if (qkv.ndim() == 0) return false;
  const int64_t d = HeadDim(attrs, heads, qkv, 3, "queries_keys_values");
  Shape att = (*in)[1];
  HN_CHECK(MergeShape(Shape{qkv[1] * heads, qkv[0], qkv[0]}, &att), kShapeError)
      << DescribeNode(attrs) << ": attention has shape " << (*in)[1] << " but queries_keys_values "
      << qkv << " needs (" << qkv[1] * heads << ", " << qkv[0] << ", " << qkv[0] << ")";
  (*in)[1] = att;
  internal::AssignShape(attrs, out, 0, Shape{qkv[0], qkv[1], heads * d}, "output");
  return qkv.IsKnown();
}

}  // namespace internal

namespace {

bool SelfAttQKShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  return internal::SelfAttQKShape(attrs, attrs.Param<InterleavedParam>().heads, in, out);
}

bool SelfAttValAttShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  return internal::SelfAttValAttShape(attrs, attrs.Param<InterleavedParam>().heads, in, out);
}

bool EncDecQKShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& q = (*in)[0];
  const Shape& kv = (*in)[1];
  if (q.ndim() == 0 || kv.ndim() == 0) return false;
  const int64_t heads = attrs.Param<InterleavedParam>().heads;
  const int64_t dq = HeadDim(attrs, heads, q, 1, "queries");
  const int64_t dk = HeadDim(attrs, heads, kv, 2, "keys_values");
  HN_CHECK(q[1] == kv[1] && dq == dk, kShapeError)
      << DescribeNode(attrs) << ": queries " << q << " and keys_values " << kv
      << " need one batch size and keys_values' last dimension twice queries'";
  internal::AssignShape(attrs, out, 0, Shape{q[1] * heads, q[0], kv[0]}, "output");
  return q.IsKnown() && kv.IsKnown();
}

bool EncDecValAttShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& kv = (*in)[0];
  const Shape& att = (*in)[1];
  if (kv.ndim() == 0 || att.ndim() == 0) return false;
  const int64_t heads = attrs.Param<InterleavedParam>().heads;
  const int64_t d = HeadDim(attrs, heads, kv, 2, "keys_values");
  HN_CHECK(att.ndim() == 3 && att[0] == kv[1] * heads && att[2] == kv[0], kShapeError)
      << DescribeNode(attrs) << ": attention " << att << " must be (batch * heads, "
      << "query_len, " << kv[0] << ") with batch * heads = " << kv[1] * heads;
  internal::AssignShape(attrs, out, 0, Shape{att[1], kv[1], heads * d}, "output");
  return kv.IsKnown() && att.IsKnown();
}

// scores[k] = (q_k . k_k^T) / sqrt(D) for every k = n * H + h; q rows step by q_step elements
// over time, k rows by k_step.
template <typename T>
void ScoresQK(const T* q, int64_t q_step, const T* keys, int64_t k_step, int64_t part_stride_q,
              int64_t part_stride_k, int64_t batches, int64_t tq, int64_t tk, int64_t d, T* out) {
  const T scale = T{1} / std::sqrt(static_cast<T>(d));
  for (int64_t k = 0; k < batches; ++k)
    internal::Gemm(false, true, tq, tk, d, scale, q + k * part_stride_q, q_step,
                   keys + k * part_stride_k, k_step, T{0}, out + k * tq * tk, tk);
}

// out[t, k, :] = sum_j att[k, t, j] * v[j, k, :].
template <typename T>
void WeightedValues(const T* att, const T* v, int64_t v_step, int64_t part_stride_v,
                    int64_t batches, int64_t tq, int64_t tk, int64_t d, T* out) {
  for (int64_t k = 0; k < batches; ++k)
    internal::Gemm(false, false, tq, d, tk, T{1}, att + k * tq * tk, tk, v + k * part_stride_v,
                   v_step, T{0}, out + k * d, batches * d);
}

}  // namespace

namespace internal {

void SelfAttQKFloat(const TBlob& qkv, int64_t heads, const TBlob& out) {
  const Shape& s = qkv.shape;
  const int64_t d = s[2] / (3 * heads), batches = s[1] * heads;
  const float* x = qkv.ptr<const float>();
  ScoresQK(x, s[1] * s[2], x + d, s[1] * s[2], 3 * d, 3 * d, batches, s[0], s[0], d,
           out.ptr<float>());
}

void SelfAttValAttFloat(const TBlob& qkv, const TBlob& att, int64_t heads, const TBlob& out) {
  const Shape& s = qkv.shape;
  const int64_t d = s[2] / (3 * heads), batches = s[1] * heads;
  WeightedValues(att.ptr<const float>(), qkv.ptr<const float>() + 2 * d, s[1] * s[2], 3 * d,
                 batches, s[0], s[0], d, out.ptr<float>());
}

}  // namespace internal

namespace {

void SelfAttQKCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                      const std::vector<TBlob>& out) {
  internal::SelfAttQKFloat(in[0], attrs.Param<InterleavedParam>().heads, out[0]);
}

void SelfAttValAttCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                          const std::vector<TBlob>& out) {
  internal::SelfAttValAttFloat(in[0], in[1], attrs.Param<InterleavedParam>().heads, out[0]);
}

void EncDecQKCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                     const std::vector<TBlob>& out) {
  const Shape& q = in[0].shape;
  const Shape& kv = in[1].shape;
  const int64_t heads = attrs.Param<InterleavedParam>().heads;
  const int64_t d = q[2] / heads, batches = q[1] * heads;
  ScoresQK(in[0].ptr<const float>(), q[1] * q[2], in[1].ptr<const float>(), kv[1] * kv[2], d, 2 * d,
           batches, q[0], kv[0], d, out[0].ptr<float>());
}

void EncDecValAttCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                         const std::vector<TBlob>& out) {
  const Shape& kv = in[0].shape;
  const Shape& att = in[1].shape;
  const int64_t heads = attrs.Param<InterleavedParam>().heads;
  const int64_t d = kv[2] / (2 * heads), batches = kv[1] * heads;
  WeightedValues(in[1].ptr<const float>(), in[0].ptr<const float>() + d, kv[1] * kv[2], 2 * d,
                 batches, att[1], kv[0], d, out[0].ptr<float>());
}

// ---- interleaved attention gradients --------------------------------------------------------
// _backward_interleaved_matmul_*: inputs (out_grad, the forward's inputs), the forward's
// attributes; outputs the gradients of the forward's inputs, laid out as those inputs. The parts
// of a projection an op does not read (selfatt_qk's values, valatt's queries and keys) get zeros,
// as in MXNet.

// The gradients of ScoresQK for its output gradient d_scores: dq = scale d_scores . k and
// dk = scale d_scores^T . q, written where ScoresQK read q and k.
template <typename T>
void ScoresQKBackward(const T* d_scores, const T* q, int64_t q_step, const T* keys, int64_t k_step,
                      int64_t part_stride_q, int64_t part_stride_k, int64_t batches, int64_t tq,
                      int64_t tk, int64_t d, T* dq, T* dkeys) {
  const T scale = T{1} / std::sqrt(static_cast<T>(d));
  for (int64_t k = 0; k < batches; ++k) {
    const T* ds = d_scores + k * tq * tk;
    internal::Gemm(false, false, tq, d, tk, scale, ds, tk, keys + k * part_stride_k, k_step, T{0},
                   dq + k * part_stride_q, q_step);
    internal::Gemm(true, false, tk, d, tq, scale, ds, tk, q + k * part_stride_q, q_step, T{0},
                   dkeys + k * part_stride_k, k_step);
  }
}

// The gradients of WeightedValues for its output gradient d_out: d_att = d_out . v^T and
// dv = att^T . d_out, written where WeightedValues read att and v.
template <typename T>
void WeightedValuesBackward(const T* d_out, const T* att, const T* v, int64_t v_step,
                            int64_t part_stride_v, int64_t batches, int64_t tq, int64_t tk,
                            int64_t d, T* d_att, T* dv) {
  for (int64_t k = 0; k < batches; ++k) {
    const T* dy = d_out + k * d;
    internal::Gemm(false, true, tq, tk, d, T{1}, dy, batches * d, v + k * part_stride_v, v_step,
                   T{0}, d_att + k * tq * tk, tk);
    internal::Gemm(true, false, tk, d, tq, T{1}, att + k * tq * tk, tk, dy, batches * d, T{0},
                   dv + k * part_stride_v, v_step);
  }
}

// An output's zeros, before the parts a backward op writes.
float* ZeroFilled(const TBlob& b) {
  float* p = b.ptr<float>();
  std::fill(p, p + b.Size(), 0.f);
  return p;
}

void SelfAttQKBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                              const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const Shape& s = in[1].shape;
  const int64_t heads = attrs.Param<InterleavedParam>().heads;
  const int64_t d = s[2] / (3 * heads), batches = s[1] * heads;
  const float* qkv = in[1].ptr<const float>();
  float* dqkv = ZeroFilled(out[0]);
  ScoresQKBackward(in[0].ptr<const float>(), qkv, s[1] * s[2], qkv + d, s[1] * s[2], 3 * d, 3 * d,
                   batches, s[0], s[0], d, dqkv, dqkv + d);
}

void SelfAttValAttBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                                  const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const Shape& s = in[1].shape;
  const int64_t heads = attrs.Param<InterleavedParam>().heads;
  const int64_t d = s[2] / (3 * heads), batches = s[1] * heads;
  WeightedValuesBackward(in[0].ptr<const float>(), in[2].ptr<const float>(),
                         in[1].ptr<const float>() + 2 * d, s[1] * s[2], 3 * d, batches, s[0], s[0],
                         d, out[1].ptr<float>(), ZeroFilled(out[0]) + 2 * d);
}

void EncDecQKBackwardCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                             const std::vector<TBlob>& out) {
  const Shape& q = in[1].shape;
  const Shape& kv = in[2].shape;
  const int64_t heads = attrs.Param<InterleavedParam>().heads;
  const int64_t d = q[2] / heads, batches = q[1] * heads;
  ScoresQKBackward(in[0].ptr<const float>(), in[1].ptr<const float>(), q[1] * q[2],
                   in[2].ptr<const float>(), kv[1] * kv[2], d, 2 * d, batches, q[0], kv[0], d,
                   out[0].ptr<float>(), ZeroFilled(out[1]));
}

void EncDecValAttBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                                 const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const Shape& kv = in[1].shape;
  const Shape& att = in[2].shape;
  const int64_t heads = attrs.Param<InterleavedParam>().heads;
  const int64_t d = kv[2] / (2 * heads), batches = kv[1] * heads;
  WeightedValuesBackward(in[0].ptr<const float>(), in[2].ptr<const float>(),
                         in[1].ptr<const float>() + d, kv[1] * kv[2], 2 * d, batches, att[1], kv[0],
                         d, out[1].ptr<float>(), ZeroFilled(out[0]) + d);
}

// Registers the backward op of the interleaved op `forward` (its input names and shape
// inference follow forward's) and declares it as forward's gradient.
void AddInterleavedBackward(OpRegistry* r, Op* forward, FCompute compute) {
  const std::string name = "_backward" + forward->name.substr(std::string("_contrib").size());
  const FListNames forward_names = forward->list_input_names;
  const FInferShape forward_shape = forward->infer_shape;
  r->Register(name)
      .Describe("The gradient of " + forward->name + ": the gradients of its inputs.")
      .SetParam<InterleavedParam>()
      .SetInputNames([forward_names](const NodeAttrs& attrs) {
        return internal::BackwardInputNames(forward_names(attrs));
      })
      .SetNumOutputs(forward->num_inputs)
      .SetInferShape(
          [forward_shape](const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
            return internal::BackwardShape(forward_shape, attrs, in, out);
          })
      .SetInferType(ElemwiseFloatType)
      .SetCompute(std::move(compute))
      .SetInternal();
  forward->SetGradient(internal::BackwardOpGradient(name));
}

// ---- div_sqrt_dim ---------------------------------------------------------------------------

bool DivSqrtDimShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const bool known = ElemwiseShape(attrs, in, out);
  HN_CHECK((*in)[0].ndim() != 0 || !known, kShapeError)
      << DescribeNode(attrs) << ": data must have at least one dimension";
  return known;
}

void DivSqrtDimCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                       const std::vector<TBlob>& out) {
  const Shape& s = in[0].shape;
  SwitchReal(in[0].dtype, [&](auto zero) {
    using T = decltype(zero);
    const T root = std::sqrt(static_cast<T>(s[s.ndim() - 1]));
    const T* x = in[0].ptr<const T>();
    T* y = out[0].ptr<T>();
    const int64_t n = in[0].Size();
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] / root;
  });
}

// batch_dot's gradient: batch_dot products of the output gradient with rhs and lhs (MXNet's).
std::vector<NodeEntry> BatchDotGradient(const std::shared_ptr<Node>& n,
                                        const std::vector<NodeEntry>& dy) {
  internal::GradientBuilder g(n, dy);
  const BatchDotParam& p = g.attrs().Param<BatchDotParam>();
  return internal::MatrixProductGradient(g, "batch_dot", p.transpose_a, p.transpose_b,
                                         g.out_grad(0));
}

// div_sqrt_dim is linear: its gradient divides the output gradient likewise (MXNet's).
std::vector<NodeEntry> DivSqrtDimGradient(const std::shared_ptr<Node>& n,
                                          const std::vector<NodeEntry>& dy) {
  internal::GradientBuilder g(n, dy);
  return {g.Op("_contrib_div_sqrt_dim", {g.out_grad(0)})};
}

}  // namespace

void RegisterAttentionOps(OpRegistry* r) {
  r->Register("batch_dot")
      .Describe(
          "Batched matrix product: for lhs (B..., M, K) and rhs (B..., K, N) (after the "
          "optional transposes of each matrix) out[b] = lhs[b] . rhs[b], (B..., M, N).")
      .SetParam<BatchDotParam>()
      .SetInputNames({"lhs", "rhs"})
      .SetInferShape(BatchDotShape)
      .SetInferType(RealType)
      .SetCompute(BatchDotCompute)
      .SetGradient(BatchDotGradient);

  Op& selfatt_qk = r->Register("_contrib_interleaved_matmul_selfatt_qk");
  selfatt_qk
      .Describe(
          "Self-attention scores from an interleaved (T, N, 3 * H * D) projection: "
          "out[n * H + h] = q . k^T / sqrt(D), (N * H, T, T).")
      .SetParam<InterleavedParam>()
      .SetInputNames({"queries_keys_values"})
      .SetInferShape(SelfAttQKShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(SelfAttQKCompute);
  AddInterleavedBackward(r, &selfatt_qk, SelfAttQKBackwardCompute);

  Op& selfatt_valatt = r->Register("_contrib_interleaved_matmul_selfatt_valatt");
  selfatt_valatt
      .Describe(
          "Applies self-attention weights (N * H, T, T) to the values of an interleaved "
          "(T, N, 3 * H * D) projection, giving (T, N, H * D).")
      .SetParam<InterleavedParam>()
      .SetInputNames({"queries_keys_values", "attention"})
      .SetInferShape(SelfAttValAttShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(SelfAttValAttCompute);
  AddInterleavedBackward(r, &selfatt_valatt, SelfAttValAttBackwardCompute);

  Op& encdec_qk = r->Register("_contrib_interleaved_matmul_encdec_qk");
  encdec_qk
      .Describe(
          "Encoder-decoder attention scores: queries (Tq, N, H * D) against the keys of "
          "an interleaved (Tk, N, 2 * H * D) projection: q . k^T / sqrt(D), "
          "(N * H, Tq, Tk).")
      .SetParam<InterleavedParam>()
      .SetInputNames({"queries", "keys_values"})
      .SetInferShape(EncDecQKShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(EncDecQKCompute);
  AddInterleavedBackward(r, &encdec_qk, EncDecQKBackwardCompute);

  Op& encdec_valatt = r->Register("_contrib_interleaved_matmul_encdec_valatt");
  encdec_valatt
      .Describe(
          "Applies encoder-decoder attention weights (N * H, Tq, Tk) to the values of an "
          "interleaved (Tk, N, 2 * H * D) projection, giving (Tq, N, H * D).")
      .SetParam<InterleavedParam>()
      .SetInputNames({"keys_values", "attention"})
      .SetInferShape(EncDecValAttShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(EncDecValAttCompute);
  AddInterleavedBackward(r, &encdec_valatt, EncDecValAttBackwardCompute);

  r->Register("_contrib_div_sqrt_dim")
      .Describe("Divides data by the square root of its last dimension.")
      .SetInputNames({"data"})
      .SetInferShape(DivSqrtDimShape)
      .SetInferType(RealType)
      .SetCompute(DivSqrtDimCompute)
      .SetInplace({{0, 0}})
      .SetGradient(DivSqrtDimGradient);
}

}  // namespace hybridnet
