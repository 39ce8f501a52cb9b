// softmax / log_softmax / softmin (MXNet src/operator/nn/softmax-inl.h), SoftmaxOutput
// (src/operator/softmax_output-inl.h: the forward ignores the label, the gradient
// _backward_SoftmaxOutput reads it) and SoftmaxActivation
// (src/operator/nn/softmax_activation-inl.h, whose gradient is _backward_softmax's).
//
// softmax/log_softmax/softmin accumulate the exponential sum in double (MXNet's AType for
// float32); with use_length (softmax only, as MXNet) the second input holds each line's length
// and the elements beyond it are 0;
// SoftmaxOutput and SoftmaxActivation use mshadow's float Softmax.
//
// _hn_log_softmax_label_sum is what training graphs make of sum(log_softmax(x) * label, axis=-1)
// (a cross-entropy with dense labels; pass/fuse.cc FuseLogSoftmaxLabelSum): one pass per line,
// whose product lives in a scratch line only, with the very line functions of log_softmax,
// elemwise_mul, sum and their gradients, so its bits are theirs.
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "kernels/avx2-inl.h"
#include "kernels/avx512-inl.h"
#include "kernels/parallel-inl.h"
#include "kernels/threads.h"
#include "kernels/vector_isa.h"
#include "kernels/vector_math-inl.h"
#include "kernels/workspace.h"
#include "onnx/onnx_convert.h"
#include "ops/dtype_switch-inl.h"
#include "ops/gradient_util.h"
#include "ops/reduce/line_sum-inl.h"
#include "ops/reduce/reduce-inl.h"
#include "ops/register_ops.h"

namespace hybridnet {

namespace {

struct SoftmaxParam {
  int axis = -1;
  std::optional<double> temperature;
  std::optional<DType> dtype;
  std::optional<bool> use_length = false;
  static void Declare(ParamDeclarer<SoftmaxParam>* d) {
    d->Field("axis", &SoftmaxParam::axis).Default(-1).Describe("The axis along which to compute.");
    d->Field("temperature", &SoftmaxParam::temperature)
        .Default(std::nullopt)
        .Describe("Temperature parameter in softmax (None means 1).");
    d->Field(
         "dtype", &SoftmaxParam::dtype,
         {{"float16", DType::kFloat16}, {"float32", DType::kFloat32}, {"float64", DType::kFloat64}})
        .Default(std::nullopt)
        .Describe("DType of the output (float32 or float64; default: data's dtype).");
    d->Field("use_length", &SoftmaxParam::use_length)
        .Default(std::optional<bool>(false))
        .Describe(
            "Whether the length input gives each line's length along axis (elements "
            "beyond it are 0).");
  }
};

// Only the gradient depends on it; accepted for compatibility.
enum class SoftmaxNormalization { kBatch, kNull, kValid };

struct SoftmaxOutputParam {
  float grad_scale = 1.f;
  float ignore_label = -1.f;
  bool multi_output = false;
  bool use_ignore = false;
  bool preserve_shape = false;
  SoftmaxNormalization normalization = SoftmaxNormalization::kNull;
  bool out_grad = false;
  float smooth_alpha = 0.f;
  static void Declare(ParamDeclarer<SoftmaxOutputParam>* d) {
    d->Field("grad_scale", &SoftmaxOutputParam::grad_scale)
        .Default(1.f)
        .Describe("Scales the gradient by a float factor.");
    d->Field("ignore_label", &SoftmaxOutputParam::ignore_label)
        .Default(-1.f)
        .Describe("The instances whose labels == ignore_label will be ignored during backward.");
    d->Field("multi_output", &SoftmaxOutputParam::multi_output)
        .Default(false)
        .Describe("If true, softmax is applied along axis 1 of an (n, k, x1, ..., xn) input.");
    d->Field("use_ignore", &SoftmaxOutputParam::use_ignore)
        .Default(false)
        .Describe("If true, the ignore_label value will not contribute to the backward gradient.");
    d->Field("preserve_shape", &SoftmaxOutputParam::preserve_shape)
        .Default(false)
        .Describe("If true, softmax is applied along the last axis.");
    d->Field("normalization", &SoftmaxOutputParam::normalization,
             {{"batch", SoftmaxNormalization::kBatch},
              {"null", SoftmaxNormalization::kNull},
              {"valid", SoftmaxNormalization::kValid}})
        .Default(SoftmaxNormalization::kNull)
        .Describe("Normalizes the gradient.");
    d->Field("out_grad", &SoftmaxOutputParam::out_grad)
        .Default(false)
        .Describe("Multiplies gradient with output gradient element-wise.");
    d->Field("smooth_alpha", &SoftmaxOutputParam::smooth_alpha)
        .Default(0.f)
        .Describe("Constant for computing a label smoothed version of cross-entropy.");
  }
};

enum class SoftmaxActivationMode { kChannel, kInstance };

struct SoftmaxActivationParam {
  SoftmaxActivationMode mode = SoftmaxActivationMode::kInstance;
  static void Declare(ParamDeclarer<SoftmaxActivationParam>* d) {
    d->Field("mode", &SoftmaxActivationParam::mode,
             {{"channel", SoftmaxActivationMode::kChannel},
              {"instance", SoftmaxActivationMode::kInstance}})
        .Default(SoftmaxActivationMode::kInstance)
        .Describe(
            "instance: softmax over the last axis (MXNet's kernel flattens the leading "
            "axes into instances); channel: over axis 1.");
  }
};

// The (outer, size, inner) view of an array around one axis.
struct AxisView {
  int64_t outer = 1, size = 1, inner = 1;
};

AxisView ViewAround(const Shape& s, size_t axis) {
  AxisView v;
  for (size_t i = 0; i < axis; ++i) v.outer *= s[i];
  v.size = s[axis];
  for (size_t i = axis + 1; i < s.ndim(); ++i) v.inner *= s[i];
  return v;
}

// MXNet 1.9.1 registers log_softmax and softmin with one input: a length input fails its type
// inference, so no MXNet model uses it.
void RejectLength(SoftmaxParam* p) {
  HN_CHECK(!p->use_length.value_or(false), kInvalidArgument)
      << "use_length=True is not supported (MXNet 1.9.1 runs it for softmax only)";
}

size_t SoftmaxAxis(const NodeAttrs& attrs, size_t ndim) {
  const int axis = attrs.Param<SoftmaxParam>().axis;
  const int n = static_cast<int>(ndim);
  HN_CHECK(axis >= -n && axis < n, kShapeError) << DescribeNode(attrs) << ": axis=" << axis
                                                << " is out of range for " << ndim << " dimensions";
  return static_cast<size_t>(axis < 0 ? axis + n : axis);
}

bool SoftmaxShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  std::vector<Shape> data_only{(*in)[0]};
  bool known = ElemwiseShape(attrs, &data_only, out);
  (*in)[0] = data_only[0];
  const Shape& data = (*in)[0];
  if (data.ndim() == 0) return false;
  const size_t axis = SoftmaxAxis(attrs, data.ndim());
  if (in->size() > 1) {
    // length holds one count per line: data's shape without the axis.
    std::vector<int64_t> dims;
    for (size_t i = 0; i < data.ndim(); ++i)
      if (i != axis) dims.push_back(data[i]);
    Shape len = (*in)[1];
    HN_CHECK(MergeShape(Shape(dims), &len), kShapeError)
        << DescribeNode(attrs) << ": length has shape " << (*in)[1] << " but data " << data
        << " with axis=" << axis << " needs " << Shape(dims);
    (*in)[1] = len;
    known = known && len.IsKnown();
  }
  return known;
}

bool IsSoftmaxFloat(DType d) { return d == DType::kFloat32 || d == DType::kFloat64; }

// MXNet's length kernel switches over the signed integer types only (uint8 is refused).
bool IsLengthDType(DType d) {
  return d == DType::kInt8 || d == DType::kInt32 || d == DType::kInt64;
}

// data float32/float64; the output has `dtype` when given, else data's dtype; length (with
// use_length) an integer dtype, as MXNet's kernel switches over integer types only.
bool SoftmaxType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const auto& dtype = attrs.Param<SoftmaxParam>().dtype;
  HN_CHECK(!dtype || IsSoftmaxFloat(*dtype), kUnsupported)
      << DescribeNode(attrs) << ": dtype=" << DTypeName(*dtype)
      << " is not supported (float32 or float64)";
  DType& data = (*in)[0];
  HN_CHECK(data == DType::kUnknown || IsSoftmaxFloat(data), kTypeError)
      << DescribeNode(attrs) << ": data has dtype " << DTypeName(data)
      << "; expected float32 or float64";
  if (in->size() > 1) {
    DType& len = (*in)[1];
    HN_CHECK(len == DType::kUnknown || IsLengthDType(len), kTypeError)
        << DescribeNode(attrs) << ": length has dtype " << DTypeName(len)
        << "; expected an integer dtype (int8, int32 or int64)";
  }
  DType& o = (*out)[0];
  if (dtype) {
    HN_CHECK(o == DType::kUnknown || o == *dtype, kTypeError)
        << DescribeNode(attrs) << ": output dtype " << DTypeName(o)
        << " is not dtype=" << DTypeName(*dtype);
    o = *dtype;
  } else {
    HN_CHECK(o == DType::kUnknown || IsSoftmaxFloat(o), kTypeError)
        << DescribeNode(attrs) << ": output dtype " << DTypeName(o)
        << "; expected float32 or float64";
    if (data == DType::kUnknown) data = o;
    if (o == DType::kUnknown) o = data;
    HN_CHECK(o == data, kTypeError)
        << DescribeNode(attrs) << ": output dtype " << DTypeName(o) << " differs from data's "
        << DTypeName(data) << " (set dtype to convert)";
  }
  const bool len_known = in->size() < 2 || (*in)[1] != DType::kUnknown;
  return data != DType::kUnknown && o != DType::kUnknown && len_known;
}

// Softmax over fewer elements runs on the calling thread.
constexpr int64_t kSplitElements = int64_t{1} << 15;

// e^a for a line's sum: float lines take the vectorizable exp (kernels/vector_math-inl.h), the
// sum and the rest stay in double.
inline double LineExp(float a) { return static_cast<double>(internal::VectorExp(a)); }
inline double LineExp(double a) { return std::exp(a); }

// Lines of up to kShortLine elements (a classifier's few classes) are too short for vectors
// along them: their loops ran in the scalar remainder (a 64 x 10 log_softmax called eagerly took
// 10.9 us on a Zen 5, 4.2 us so). They run kTileLines at a time instead, a vector lane per line
// over its elements in order, so each line's exponential sum is a sequential one: the same bits
// on every ISA, and whether the line ran with others or alone.
constexpr int64_t kShortLine = 32;
constexpr int64_t kTileLines = 16;

// The lines of n elements that run together: a tile of short ones, else one.
constexpr int64_t LinesPerBlock(int64_t n) { return n <= kShortLine ? kTileLines : 1; }

// `lines` (1 to kTileLines) unit-stride lines of m (1 to kShortLine) elements, one after the
// other from x and out. Always inlined, as SoftmaxLine.
template <bool kLog, bool kNegate, typename T, typename O>
__attribute__((always_inline)) inline void ShortSoftmaxLines(const T* x, O* out, int64_t lines,
                                                             int64_t m, double temperature) {
  T a[kShortLine][kTileLines];  // line l's element j at a[j][l]; unused lanes hold 0
  for (int64_t l = 0; l < kTileLines; ++l) {
    for (int64_t j = 0; j < m; ++j) {
      const T v = l < lines ? x[l * m + j] : T(0);
      a[j][l] = kNegate ? -v : v;
    }
  }
  T mmax[kTileLines];
#pragma omp simd
  for (int64_t l = 0; l < kTileLines; ++l) mmax[l] = a[0][l];
  for (int64_t j = 1; j < m; ++j) {
#pragma omp simd
    for (int64_t l = 0; l < kTileLines; ++l) mmax[l] = mmax[l] < a[j][l] ? a[j][l] : mmax[l];
  }
  const T t = static_cast<T>(temperature);
  double sum[kTileLines] = {};
  for (int64_t j = 0; j < m; ++j) {
#pragma omp simd
    for (int64_t l = 0; l < kTileLines; ++l) {
      a[j][l] = temperature == 1.0 ? a[j][l] - mmax[l] : (a[j][l] - mmax[l]) / t;
      sum[l] += LineExp(a[j][l]);
    }
  }
  double log_sum[kTileLines];
  if (kLog) {
    for (int64_t l = 0; l < kTileLines; ++l) log_sum[l] = std::log(sum[l]);
  }
  O y[kShortLine][kTileLines];
  for (int64_t j = 0; j < m; ++j) {
#pragma omp simd
    for (int64_t l = 0; l < kTileLines; ++l) {
      y[j][l] = kLog ? static_cast<O>(a[j][l] - log_sum[l])
                     : static_cast<O>(LineExp(a[j][l]) / sum[l]);
    }
  }
  for (int64_t l = 0; l < lines; ++l) {
    for (int64_t j = 0; j < m; ++j) out[l * m + j] = y[j][l];
  }
}

// One line of SoftmaxAlong: x and out its first elements, line_stride apart (kUnitStride: 1,
// known to the compiler, so that the loops vectorize). Always inlined, so that it compiles for
// the ISA of its caller (UnitSoftmaxLine). Past kShortLine elements the exponential sum's lanes
// follow the vector width, so each ISA gives its own bits; the fused cross-entropy calls the same
// line functions, so it gives log_softmax's on each.
template <bool kLog, bool kNegate, bool kUnitStride, typename T, typename O>
__attribute__((always_inline)) inline void SoftmaxLine(const T* x, O* out, int64_t line_stride,
                                                       int64_t size, int64_t m,
                                                       double temperature) {
  const int64_t st = kUnitStride ? 1 : line_stride;
  auto in = [x, st](int64_t j) { return kNegate ? -x[j * st] : x[j * st]; };
  for (int64_t j = m; j < size; ++j) out[j * st] = O(0);
  if (m == 0) return;
  if (kUnitStride && m <= kShortLine) {
    ShortSoftmaxLines<kLog, kNegate>(x, out, 1, m, temperature);
    return;
  }
  T mmax = in(0);
#pragma omp simd reduction(max : mmax)
  for (int64_t j = 1; j < m; ++j) mmax = mmax < in(j) ? in(j) : mmax;
  double sum = 0.0;
  // Two loops per temperature branch, so each one vectorizes.
  if (temperature == 1.0) {
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < m; ++j) sum += LineExp(in(j)-mmax);
    const double log_sum = std::log(sum);
#pragma omp simd
    for (int64_t j = 0; j < m; ++j) {
      const T a = in(j)-mmax;
      out[j * st] = kLog ? static_cast<O>(a - log_sum) : static_cast<O>(LineExp(a) / sum);
    }
  } else {
    const T t = static_cast<T>(temperature);
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < m; ++j) sum += LineExp((in(j)-mmax) / t);
    const double log_sum = std::log(sum);
#pragma omp simd
    for (int64_t j = 0; j < m; ++j) {
      const T a = (in(j)-mmax) / t;
      out[j * st] = kLog ? static_cast<O>(a - log_sum) : static_cast<O>(LineExp(a) / sum);
    }
  }
}

// A unit-stride line compiled for AVX-512 or AVX2: 16 or 8 float lanes where the baseline build
// has SSE's 4 (a softmax over a 10000-word vocabulary took 8% of an LSTM LM's training step on
// SSE).
template <bool kLog, bool kNegate, typename T, typename O>
HN_AVX512 void SoftmaxLineAvx512(const T* x, O* out, int64_t size, int64_t m, double temperature) {
  SoftmaxLine<kLog, kNegate, true>(x, out, 1, size, m, temperature);
}
template <bool kLog, bool kNegate, typename T, typename O>
HN_AVX2 void SoftmaxLineAvx2(const T* x, O* out, int64_t size, int64_t m, double temperature) {
  SoftmaxLine<kLog, kNegate, true>(x, out, 1, size, m, temperature);
}

// A unit-stride line compiled for `isa`: the one place that picks its version, for softmax's ops
// and the fused cross-entropy alike.
template <bool kLog, bool kNegate, typename T, typename O>
void UnitSoftmaxLine(internal::VectorIsa isa, const T* x, O* out, int64_t size, int64_t m,
                     double temperature) {
  switch (isa) {
    case internal::VectorIsa::kAvx512:
      return SoftmaxLineAvx512<kLog, kNegate>(x, out, size, m, temperature);
    case internal::VectorIsa::kAvx2:
      return SoftmaxLineAvx2<kLog, kNegate>(x, out, size, m, temperature);
    case internal::VectorIsa::kBaseline:
      break;
  }
  SoftmaxLine<kLog, kNegate, true>(x, out, 1, size, m, temperature);
}

// ShortSoftmaxLines compiled for AVX-512 or AVX2 (16 or 8 float lanes), and for `isa`.
template <bool kLog, bool kNegate, typename T, typename O>
HN_AVX512 void ShortSoftmaxLinesAvx512(const T* x, O* out, int64_t lines, int64_t m,
                                       double temperature) {
  ShortSoftmaxLines<kLog, kNegate>(x, out, lines, m, temperature);
}
template <bool kLog, bool kNegate, typename T, typename O>
HN_AVX2 void ShortSoftmaxLinesAvx2(const T* x, O* out, int64_t lines, int64_t m,
                                   double temperature) {
  ShortSoftmaxLines<kLog, kNegate>(x, out, lines, m, temperature);
}

// `lines` whole unit-stride lines of n elements from x and out: a tile of up to kTileLines short
// lines, or lines one by one.
template <bool kLog, bool kNegate, typename T, typename O>
void UnitSoftmaxLines(internal::VectorIsa isa, const T* x, O* out, int64_t lines, int64_t n,
                      double temperature) {
  if (n == 0 || n > kShortLine) {
    for (int64_t l = 0; l < lines; ++l)
      UnitSoftmaxLine<kLog, kNegate>(isa, x + l * n, out + l * n, n, n, temperature);
    return;
  }
  switch (isa) {
    case internal::VectorIsa::kAvx512:
      return ShortSoftmaxLinesAvx512<kLog, kNegate>(x, out, lines, n, temperature);
    case internal::VectorIsa::kAvx2:
      return ShortSoftmaxLinesAvx2<kLog, kNegate>(x, out, lines, n, temperature);
    case internal::VectorIsa::kBaseline:
      break;
  }
  ShortSoftmaxLines<kLog, kNegate>(x, out, lines, n, temperature);
}

// Calls block(first, count) for blocks of `lines` whole lines of n elements, split between the
// kernel threads as their elements warrant: tiles of kTileLines short lines, else single lines.
template <typename Block>
void ForEachLineBlock(int64_t lines, int64_t n, const Block& block) {
  const int64_t per_block = LinesPerBlock(n);
  internal::ParallelFor((lines + per_block - 1) / per_block, lines * n >= kSplitElements,
                        [&](int64_t b) {
                          const int64_t first = b * per_block;
                          block(first, std::min(per_block, lines - first));
                        });
}

// softmax along the middle axis of (outer, size, inner): max in the input type, the exponential
// sum in double (MXNet's accumulation type for float32 and float64). softmin (kNegate) is the
// softmax of -x. With lengths, line k uses its first len[k] elements and the rest are 0. Lines
// are independent, each summed in its own fixed order: they are split between the kernel threads.
template <bool kLog, bool kNegate, typename T, typename O>
void SoftmaxAlong(const T* in_data, O* out, const AxisView& v, double temperature,
                  const int64_t* lengths) {
  const int64_t lines = v.outer * v.inner;
  const internal::VectorIsa isa =
      v.inner == 1 ? internal::ChooseVectorIsa() : internal::VectorIsa::kBaseline;
  if (v.inner == 1 && lengths == nullptr) {
    ForEachLineBlock(lines, v.size, [&](int64_t first, int64_t count) {
      const int64_t base = first * v.size;
      UnitSoftmaxLines<kLog, kNegate>(isa, in_data + base, out + base, count, v.size,
                                      temperature);
    });
    return;
  }
  internal::ParallelFor(lines, lines * v.size >= kSplitElements, [&](int64_t line) {
    const int64_t base = (line / v.inner) * v.size * v.inner + line % v.inner;
    const int64_t m = lengths != nullptr ? lengths[line] : v.size;
    if (v.inner == 1) {
      UnitSoftmaxLine<kLog, kNegate>(isa, in_data + base, out + base, v.size, m, temperature);
    } else {
      SoftmaxLine<kLog, kNegate, false>(in_data + base, out + base, v.inner, v.size, m,
                                        temperature);
    }
  });
}

// Lengths clamped into [0, size] (MXNet reads beyond the line for larger ones).
std::vector<int64_t> LineLengths(const TBlob& len, int64_t size) {
  std::vector<int64_t> lengths(static_cast<size_t>(len.Size()));
  internal::SwitchNumericDType(len.dtype, [&](auto tag) {
    using I = typename decltype(tag)::type;
    const I* p = len.ptr<const I>();
    for (size_t k = 0; k < lengths.size(); ++k) {
      const int64_t v = static_cast<int64_t>(p[k]);
      lengths[k] = v < 0 ? 0 : v > size ? size : v;
    }
  });
  return lengths;
}

template <bool kLog, bool kNegate = false>
void SoftmaxCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                    const std::vector<TBlob>& out) {
  const SoftmaxParam& p = attrs.Param<SoftmaxParam>();
  const AxisView v = ViewAround(in[0].shape, SoftmaxAxis(attrs, in[0].shape.ndim()));
  const double t = p.temperature.value_or(1.0);
  std::vector<int64_t> lengths;
  if (in.size() > 1) lengths = LineLengths(in[1], v.size);
  const int64_t* len = in.size() > 1 ? lengths.data() : nullptr;
  auto run = [&](auto in_zero, auto out_zero) {
    using T = decltype(in_zero);
    using O = decltype(out_zero);
    SoftmaxAlong<kLog, kNegate>(in[0].ptr<const T>(), out[0].ptr<O>(), v, t, len);
  };
  const bool in64 = in[0].dtype == DType::kFloat64, out64 = out[0].dtype == DType::kFloat64;
  if (in64 && out64) {
    run(double{}, double{});
  } else if (in64) {
    run(double{}, float{});
  } else if (out64) {
    run(float{}, double{});
  } else {
    run(float{}, float{});
  }
}

// ---- gradients: _backward_softmax, _backward_log_softmax and _backward_softmin take (out_grad,
// the forward's output) and the forward's attributes. Per line along the axis, with the sum in
// double as the forward's: softmax dx = y (dy - sum(dy y)) / t; softmin the negative of that;
// log_softmax dx = (dy - exp(y) sum(dy)) / t.

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kSoftmin };

bool SoftmaxBackwardType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const bool complete = ElemwiseType(attrs, in, out);
  for (size_t i = 0; i < in->size(); ++i) {
    HN_CHECK((*in)[i] == DType::kUnknown || IsSoftmaxFloat((*in)[i]), kTypeError)
        << DescribeNode(attrs) << ": input " << i << " has dtype " << DTypeName((*in)[i])
        << "; expected float32 or float64";
  }
  return complete;
}

// `lines` (1 to kTileLines) unit-stride lines of n (1 to kShortLine) elements, a lane per line
// as ShortSoftmaxLines, each line's sum a sequential one. Always inlined, as SoftmaxLine.
template <SoftmaxKind kKind, typename T>
__attribute__((always_inline)) inline void ShortSoftmaxBackwardLines(const T* dy, const T* y,
                                                                     T* dx, int64_t lines,
                                                                     int64_t n, double t) {
  T dy_tile[kShortLine][kTileLines], y_tile[kShortLine][kTileLines];  // unused lanes hold 0
  for (int64_t l = 0; l < kTileLines; ++l) {
    for (int64_t j = 0; j < n; ++j) {
      dy_tile[j][l] = l < lines ? dy[l * n + j] : T(0);
      y_tile[j][l] = l < lines ? y[l * n + j] : T(0);
    }
  }
  double sum[kTileLines] = {};
  for (int64_t j = 0; j < n; ++j) {
#pragma omp simd
    for (int64_t l = 0; l < kTileLines; ++l) {
      sum[l] += kKind == SoftmaxKind::kLogSoftmax
                    ? static_cast<double>(dy_tile[j][l])
                    : static_cast<double>(dy_tile[j][l]) * y_tile[j][l];
    }
  }
  T dx_tile[kShortLine][kTileLines];
  for (int64_t j = 0; j < n; ++j) {
#pragma omp simd
    for (int64_t l = 0; l < kTileLines; ++l) {
      double g = kKind == SoftmaxKind::kLogSoftmax
                     ? dy_tile[j][l] - LineExp(y_tile[j][l]) * sum[l]
                     : y_tile[j][l] * (dy_tile[j][l] - sum[l]);
      if (kKind == SoftmaxKind::kSoftmin) g = -g;
      dx_tile[j][l] = static_cast<T>(t == 1.0 ? g : g / t);
    }
  }
  for (int64_t l = 0; l < lines; ++l) {
    for (int64_t j = 0; j < n; ++j) dx[l * n + j] = dx_tile[j][l];
  }
}

// One line of SoftmaxBackwardAlong, its elements line_stride apart (kUnitStride: 1, known to the
// compiler, so that the loops vectorize). Always inlined, as SoftmaxLine; each ISA's bits are its
// own past kShortLine elements, as SoftmaxLine's.
template <SoftmaxKind kKind, bool kUnitStride, typename T>
__attribute__((always_inline)) inline void SoftmaxBackwardLine(const T* dy, const T* y, T* dx,
                                                               int64_t line_stride, int64_t size,
                                                               double t) {
  const int64_t st = kUnitStride ? 1 : line_stride;
  if (kUnitStride && size > 0 && size <= kShortLine) {
    ShortSoftmaxBackwardLines<kKind>(dy, y, dx, 1, size, t);
    return;
  }
  double sum = 0.0;
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < size; ++j) {
    sum += kKind == SoftmaxKind::kLogSoftmax ? static_cast<double>(dy[j * st])
                                             : static_cast<double>(dy[j * st]) * y[j * st];
  }
  auto gradient = [&](int64_t k) {
    const double g =
        kKind == SoftmaxKind::kLogSoftmax ? dy[k] - LineExp(y[k]) * sum : y[k] * (dy[k] - sum);
    return kKind == SoftmaxKind::kSoftmin ? -g : g;
  };
  // g / 1 is g: the usual temperature skips the division.
  if (t == 1.0) {
#pragma omp simd
    for (int64_t j = 0; j < size; ++j) dx[j * st] = static_cast<T>(gradient(j * st));
  } else {
#pragma omp simd
    for (int64_t j = 0; j < size; ++j) dx[j * st] = static_cast<T>(gradient(j * st) / t);
  }
}

// A unit-stride line compiled for AVX-512 or AVX2, as SoftmaxLineAvx512, and the one place that
// picks its version, as UnitSoftmaxLine.
template <SoftmaxKind kKind, typename T>
HN_AVX512 void SoftmaxBackwardLineAvx512(const T* dy, const T* y, T* dx, int64_t size, double t) {
  SoftmaxBackwardLine<kKind, true>(dy, y, dx, 1, size, t);
}
template <SoftmaxKind kKind, typename T>
HN_AVX2 void SoftmaxBackwardLineAvx2(const T* dy, const T* y, T* dx, int64_t size, double t) {
  SoftmaxBackwardLine<kKind, true>(dy, y, dx, 1, size, t);
}
template <SoftmaxKind kKind, typename T>
void UnitSoftmaxBackwardLine(internal::VectorIsa isa, const T* dy, const T* y, T* dx,
                             int64_t size, double t) {
  switch (isa) {
    case internal::VectorIsa::kAvx512:
      return SoftmaxBackwardLineAvx512<kKind>(dy, y, dx, size, t);
    case internal::VectorIsa::kAvx2:
      return SoftmaxBackwardLineAvx2<kKind>(dy, y, dx, size, t);
    case internal::VectorIsa::kBaseline:
      break;
  }
  SoftmaxBackwardLine<kKind, true>(dy, y, dx, 1, size, t);
}

// ShortSoftmaxBackwardLines compiled for AVX-512 or AVX2, and `lines` whole unit-stride lines of n
// elements on `isa`, as UnitSoftmaxLines.
template <SoftmaxKind kKind, typename T>
HN_AVX512 void ShortSoftmaxBackwardLinesAvx512(const T* dy, const T* y, T* dx, int64_t lines,
                                               int64_t n, double t) {
  ShortSoftmaxBackwardLines<kKind>(dy, y, dx, lines, n, t);
}
template <SoftmaxKind kKind, typename T>
HN_AVX2 void ShortSoftmaxBackwardLinesAvx2(const T* dy, const T* y, T* dx, int64_t lines,
                                           int64_t n, double t) {
  ShortSoftmaxBackwardLines<kKind>(dy, y, dx, lines, n, t);
}
template <SoftmaxKind kKind, typename T>
void UnitSoftmaxBackwardLines(internal::VectorIsa isa, const T* dy, const T* y, T* dx,
                              int64_t lines, int64_t n, double t) {
  if (n == 0 || n > kShortLine) {
    for (int64_t l = 0; l < lines; ++l)
      UnitSoftmaxBackwardLine<kKind>(isa, dy + l * n, y + l * n, dx + l * n, n, t);
    return;
  }
  switch (isa) {
    case internal::VectorIsa::kAvx512:
      return ShortSoftmaxBackwardLinesAvx512<kKind>(dy, y, dx, lines, n, t);
    case internal::VectorIsa::kAvx2:
      return ShortSoftmaxBackwardLinesAvx2<kKind>(dy, y, dx, lines, n, t);
    case internal::VectorIsa::kBaseline:
      break;
  }
  ShortSoftmaxBackwardLines<kKind>(dy, y, dx, lines, n, t);
}

template <SoftmaxKind kKind, typename T>
void SoftmaxBackwardAlong(const T* dy, const T* y, T* dx, const AxisView& v, double t) {
  const int64_t lines = v.outer * v.inner;
  if (v.inner == 1) {
    const internal::VectorIsa isa = internal::ChooseVectorIsa();
    ForEachLineBlock(lines, v.size, [&](int64_t first, int64_t count) {
      const int64_t base = first * v.size;
      UnitSoftmaxBackwardLines<kKind>(isa, dy + base, y + base, dx + base, count, v.size, t);
    });
    return;
  }
  internal::ParallelFor(lines, lines * v.size >= kSplitElements, [&](int64_t line) {
    const int64_t base = (line / v.inner) * v.size * v.inner + line % v.inner;
    SoftmaxBackwardLine<kKind, false>(dy + base, y + base, dx + base, v.inner, v.size, t);
  });
}

template <SoftmaxKind kKind>
void SoftmaxBackwardCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                            const std::vector<TBlob>& out) {
  const AxisView v = ViewAround(in[1].shape, SoftmaxAxis(attrs, in[1].shape.ndim()));
  const double t = attrs.Param<SoftmaxParam>().temperature.value_or(1.0);
  if (out[0].dtype == DType::kFloat64) {
    SoftmaxBackwardAlong<kKind>(in[0].ptr<const double>(), in[1].ptr<const double>(),
                                out[0].ptr<double>(), v, t);
  } else {
    SoftmaxBackwardAlong<kKind>(in[0].ptr<const float>(), in[1].ptr<const float>(),
                                out[0].ptr<float>(), v, t);
  }
}

// The forward's gradient: its backward op on (dy, y), with its attributes. With use_length the
// same op serves: y is 0 beyond each line's length, so there the gradient is 0 and the sums
// cover the line's first `length` elements only; the length gets a zero gradient. With dtype
// the backward op runs in the output's dtype and its result is converted to data's, as MXNet
// gives data's dtype to the gradient.
FGradient SoftmaxGradient(const char* backward_op) {
  return [backward_op](const std::shared_ptr<Node>& n, const std::vector<NodeEntry>& dy) {
    internal::GradientBuilder g(n, dy);
    const SoftmaxParam& p = g.attrs().Param<SoftmaxParam>();
    AttrDict attrs = g.attrs().dict;
    attrs.erase("use_length");
    attrs.erase("dtype");
    NodeEntry dx = g.Op(backward_op, {g.out_grad(0), g.out(0)}, std::move(attrs));
    std::vector<NodeEntry> grads{p.dtype ? g.CastLike(dx, g.in(0)) : dx};
    if (p.use_length.value_or(false)) grads.push_back(g.ZerosLike(g.in(1)));
    return grads;
  };
}

Op& RegisterSoftmaxBackward(OpRegistry* r, const char* name, const char* description,
                            FCompute compute) {
  return r->Register(name)
      .Describe(description)
      .SetParam<SoftmaxParam>(RejectLength)
      .SetInputNames({"out_grad", "output"})
      .SetInferShape(ElemwiseShape)
      .SetInferType(SoftmaxBackwardType)
      .SetCompute(std::move(compute))
      .SetInternal();
}

// ---- _hn_log_softmax_label_sum (data, label) -> the sums along the last axis of
// log_softmax(data) * label, and a hidden second output: log_softmax(data), which the gradient
// reads. _backward_hn_log_softmax_label_sum (out_grad, label, log_softmax) -> data's gradient.

struct LogSoftmaxLabelSumParam {
  bool keepdims = false;
  static void Declare(ParamDeclarer<LogSoftmaxLabelSumParam>* d) {
    d->Field("keepdims", &LogSoftmaxLabelSumParam::keepdims)
        .Default(false)
        .Describe("Whether the summed last axis stays in the result with size 1 (sum's keepdims).");
  }
};

// The last axis (the sum's, of length n) and the lines along it, of a float32 array of shape s.
struct Lines {
  int64_t count = 0, n = 0;
};
Lines LinesOf(const Shape& s) {
  Lines lines;
  lines.n = s[s.ndim() - 1];
  lines.count = lines.n == 0 ? 0 : s.Size() / lines.n;
  return lines;
}

bool LogSoftmaxLabelSumShape(const NodeAttrs& attrs, std::vector<Shape>* in,
                             std::vector<Shape>* out) {
  Shape data = (*in)[0];
  HN_CHECK(MergeShape((*in)[1], &data), kShapeError)
      << DescribeNode(attrs) << ": label has shape " << (*in)[1] << ", data " << (*in)[0]
      << "; they must be the same";
  if (out->size() > 1) {
    HN_CHECK(MergeShape((*out)[1], &data), kShapeError)
        << DescribeNode(attrs) << ": log_softmax output has shape " << (*out)[1] << ", data "
        << data;
  }
  (*in)[0] = (*in)[1] = data;
  if (out->size() > 1) (*out)[1] = data;
  if (data.ndim() == 0) return false;
  std::vector<bool> reduced(data.ndim(), false);
  reduced.back() = true;
  internal::AssignReducedShape(
      attrs, out,
      internal::ReducedShape(data, reduced, attrs.Param<LogSoftmaxLabelSumParam>().keepdims));
  return data.IsKnown() && (*out)[0].IsKnown();
}

// Per line: log_softmax as log_softmax's kernel writes it (SoftmaxAlong's line function), its
// product with the label into a scratch line as elemwise_mul multiplies, and that line summed as
// sum sums it (LineSum).
void LogSoftmaxLabelSumCompute(const OpContext& ctx, const NodeAttrs&, const std::vector<TBlob>& in,
                               const std::vector<TBlob>& out) {
  const Lines lines = LinesOf(in[0].shape);
  const int64_t n = lines.n;
  const float* x = in[0].ptr<const float>();
  const float* label = in[1].ptr<const float>();
  float* sums = out[0].ptr<float>();
  if (n == 0) {
    std::fill(sums, sums + out[0].Size(), 0.f);
    return;
  }
  // Each thread's product line, then, where the caller keeps no hidden output (no gradient
  // follows), its block's log_softmax lines.
  const bool keeps_log_probs = out.size() > 1;
  const int64_t block_lines = LinesPerBlock(n);
  const int64_t scratch_lines = keeps_log_probs ? 1 : 1 + block_lines;
  float* scratch = ctx.workspace->Get<float>(
      internal::kOpSlot0, static_cast<size_t>(internal::KernelThreads() * scratch_lines * n));
  const internal::VectorIsa isa = internal::ChooseVectorIsa();
  ForEachLineBlock(lines.count, n, [&](int64_t first, int64_t count) {
    float* product = scratch + internal::ThreadIndex() * scratch_lines * n;
    float* log_probs = keeps_log_probs ? out[1].ptr<float>() + first * n : product + n;
    UnitSoftmaxLines<true, false>(isa, x + first * n, log_probs, count, n, 1.0);
    for (int64_t line = first; line < first + count; ++line) {
      const float* line_log_probs = log_probs + (line - first) * n;
      for (int64_t j = 0; j < n; ++j) product[j] = line_log_probs[j] * label[line * n + j];
      sums[line] = static_cast<float>(internal::LineSumOn(isa, product, n));
    }
  });
}

// Per line: the output gradient broadcast along the line times the label into a scratch line (as
// _backward_sum broadcasts and elemwise_mul's gradient multiplies), then _backward_log_softmax's
// line function.
void LogSoftmaxLabelSumBackwardCompute(const OpContext& ctx, const NodeAttrs&,
                                       const std::vector<TBlob>& in,
                                       const std::vector<TBlob>& out) {
  const Lines lines = LinesOf(in[2].shape);
  const int64_t n = lines.n;
  if (n == 0) return;
  const float* out_grad = in[0].ptr<const float>();
  const float* label = in[1].ptr<const float>();
  const float* log_probs = in[2].ptr<const float>();
  float* dx = out[0].ptr<float>();
  const int64_t block_lines = LinesPerBlock(n);
  float* scratch = ctx.workspace->Get<float>(
      internal::kOpSlot0, static_cast<size_t>(internal::KernelThreads() * block_lines * n));
  const internal::VectorIsa isa = internal::ChooseVectorIsa();
  ForEachLineBlock(lines.count, n, [&](int64_t first, int64_t count) {
    const int64_t base = first * n;
    float* dy = scratch + internal::ThreadIndex() * block_lines * n;
    for (int64_t k = 0; k < count * n; ++k) dy[k] = out_grad[first + k / n] * label[base + k];
    UnitSoftmaxBackwardLines<SoftmaxKind::kLogSoftmax>(isa, dy, log_probs + base, dx + base,
                                                       count, n, 1.0);
  });
}

// data's gradient from the fused backward; label's as the unfused graph computes it: the output
// gradient broadcast back over the last axis (_backward_sum) times log_softmax (elemwise_mul's).
std::vector<NodeEntry> LogSoftmaxLabelSumGradient(const std::shared_ptr<Node>& n,
                                                  const std::vector<NodeEntry>& dy) {
  internal::GradientBuilder g(n, dy);
  const NodeEntry log_probs = g.out(1);
  const AttrDict sum_attrs{
      {"axis", "-1"},
      {"keepdims", g.attrs().Param<LogSoftmaxLabelSumParam>().keepdims ? "True" : "False"}};
  NodeEntry broadcast = g.Op("_backward_sum", {g.out_grad(0), log_probs}, sum_attrs);
  return {g.Op("_backward_hn_log_softmax_label_sum", {g.out_grad(0), g.in(1), log_probs},
               g.attrs().dict),
          g.Mul(broadcast, log_probs)};
}

void RegisterLogSoftmaxLabelSum(OpRegistry* r) {
  r->Register("_hn_log_softmax_label_sum")
      .Describe(
          "sum(log_softmax(data, axis=-1) * label, axis=-1, keepdims): a cross-entropy with "
          "dense labels, as training graphs fuse it, with the same bits as the three ops. A "
          "hidden second output holds log_softmax(data) for the gradient.")
      .SetParam<LogSoftmaxLabelSumParam>()
      .SetInputNames({"data", "label"})
      .SetNumOutputs(1)
      .SetNumTotalOutputs(2)
      .SetInferShape(LogSoftmaxLabelSumShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(LogSoftmaxLabelSumCompute)
      .SetGradient(LogSoftmaxLabelSumGradient)
      .SetInternal();
  r->Register("_backward_hn_log_softmax_label_sum")
      .Describe(
          "The gradient of _hn_log_softmax_label_sum for data: per line along the last axis, "
          "dy = out_grad * label and (dy - exp(log_softmax) sum(dy)).")
      .SetParam<LogSoftmaxLabelSumParam>()
      .SetInputNames({"out_grad", "label", "log_softmax"})
      .SetInferShape([](const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
        std::vector<Shape> forward_in{(*in)[2], (*in)[1]};
        std::vector<Shape> forward_out{(*in)[0], (*out)[0]};
        const bool known = LogSoftmaxLabelSumShape(attrs, &forward_in, &forward_out);
        (*in)[0] = forward_out[0];
        (*in)[1] = forward_in[1];
        (*in)[2] = (*out)[0] = forward_in[0];
        return known;
      })
      .SetInferType(ElemwiseFloatType)
      .SetCompute(LogSoftmaxLabelSumBackwardCompute)
      .SetInternal();
}

// mshadow's Softmax: float max, float sum of exp(x - max), then division.
void FloatSoftmaxAlong(const float* in, float* out, const AxisView& v) {
  const int64_t m = v.size, st = v.inner;
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t i = 0; i < v.inner; ++i) {
      const int64_t base = o * m * st + i;
      float mmax = in[base];
      for (int64_t j = 1; j < m; ++j) mmax = mmax < in[base + j * st] ? in[base + j * st] : mmax;
      float sum = 0.f;
      for (int64_t j = 0; j < m; ++j) {
        const float e = std::exp(in[base + j * st] - mmax);
        out[base + j * st] = e;
        sum += e;
      }
      for (int64_t j = 0; j < m; ++j) out[base + j * st] /= sum;
    }
  }
}

// SoftmaxOutput: label is (N,) for (N, C) data; generally data.shape[:-1], or with multi_output
// (N, prod(shape[2:])), shape without axis 1, or shape with axis 1 = 1; or data's own shape
// (probability labels).
bool SoftmaxOutputShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const SoftmaxOutputParam& p = attrs.Param<SoftmaxOutputParam>();
  std::vector<Shape> data_in{(*in)[0]};
  bool known = ElemwiseShape(attrs, &data_in, out);
  (*in)[0] = data_in[0];
  const Shape& dshape = (*in)[0];
  Shape& lshape = (*in)[1];
  if (dshape.ndim() == 0) return false;
  HN_CHECK(dshape.ndim() >= 2, kShapeError)
      << DescribeNode(attrs) << ": data must have at least 2 dimensions, got " << dshape;
  if (lshape == dshape) return known;
  if (p.multi_output) {
    const int64_t n = dshape[0];
    int64_t rest = 1;
    for (size_t i = 2; i < dshape.ndim(); ++i) rest *= dshape[i];
    Shape l1{n, rest};
    std::vector<int64_t> d2{n};
    for (size_t i = 2; i < dshape.ndim(); ++i) d2.push_back(dshape[i]);
    Shape l2(d2);
    Shape l3 = dshape;
    l3[1] = 1;
    if (lshape.ndim() == 0) {
      lshape = l1;
    } else {
      HN_CHECK(lshape == l1 || lshape == l2 || lshape == l3, kShapeError)
          << DescribeNode(attrs) << ": label shape " << lshape << " does not fit data " << dshape
          << " (expecting " << l1 << " or " << l2 << ")";
    }
  } else {
    Shape expect(std::vector<int64_t>(dshape.begin(), dshape.end() - 1));
    Shape merged = lshape;
    HN_CHECK(MergeShape(expect, &merged), kShapeError)
        << DescribeNode(attrs) << ": label shape " << lshape << " does not fit data " << dshape
        << " (expecting " << expect << " or " << dshape << ")";
    lshape = merged;
  }
  return known && lshape.IsKnown();
}

void SoftmaxOutputCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                          const std::vector<TBlob>& out) {
  const SoftmaxOutputParam& p = attrs.Param<SoftmaxOutputParam>();
  const Shape& s = in[0].shape;
  AxisView v;
  if (p.multi_output) {
    v = ViewAround(s, 1);
  } else if (p.preserve_shape) {
    v = ViewAround(s, s.ndim() - 1);
  } else {
    v.outer = s[0];
    v.size = in[0].Size() / s[0];
    v.inner = 1;
  }
  FloatSoftmaxAlong(in[0].ptr<const float>(), out[0].ptr<float>(), v);
}

// ---- _backward_SoftmaxOutput: inputs (label, output), SoftmaxOutput's attributes; output the
// data gradient. Like MXNet's, it is (y - onehot(label)) scaled, and never reads the output
// gradient: with out_grad=True MXNet 1.9.1 multiplies by the output y where it means the output
// gradient (measured, in its autograd and its executor alike), and so does this.
//   - a label of data's shape (probabilities): (y - label) * grad_scale [* y];
//   - multi_output, per (n, position) with label k: y - (class == k), a row of zeros where
//     use_ignore and k == ignore_label; times grad_scale / positions / count, count = the number
//     of labels (null: 1; batch: n); with valid: grad_scale / (labels not ignored, at least 1);
//   - else per row (n of (n, -1), or all but the last axis with preserve_shape) the same, with
//     smooth_alpha: y - 1 + alpha at k and y - alpha / (classes - 1) elsewhere; times
//     grad_scale / count, count = 1 (null), the number of labels (batch) or of those not
//     ignored (valid, at least 1).
// Labels are compared as MXNet does, truncated to int, in float arithmetic.

void SoftmaxOutputBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                                  const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const SoftmaxOutputParam& p = attrs.Param<SoftmaxOutputParam>();
  const float* label = in[0].ptr<const float>();
  const float* y = in[1].ptr<const float>();
  float* dx = out[0].ptr<float>();
  const Shape& s = in[1].shape;
  const int64_t total = in[1].Size();
  if (in[0].shape == s) {
    for (int64_t i = 0; i < total; ++i) {
      dx[i] =
          p.out_grad ? p.grad_scale * (y[i] - label[i]) * y[i] : (y[i] - label[i]) * p.grad_scale;
    }
    return;
  }
  const int ignore = static_cast<int>(p.ignore_label);
  const int64_t labels = in[0].Size();
  int64_t valid = labels;
  if (p.normalization == SoftmaxNormalization::kValid) {
    for (int64_t i = 0; i < labels; ++i) valid -= static_cast<int>(label[i]) == ignore ? 1 : 0;
    valid = valid == 0 ? 1 : valid;
  }
  float factor;
  AxisView v;
  if (p.multi_output) {
    v = ViewAround(s, 1);
    const int64_t count = p.normalization == SoftmaxNormalization::kBatch   ? s[0]
                          : p.normalization == SoftmaxNormalization::kValid ? valid
                                                                            : 1;
    const int64_t positions = p.normalization == SoftmaxNormalization::kValid ? 1 : v.inner;
    factor = p.grad_scale / static_cast<float>(positions) / static_cast<float>(count);
  } else {
    v.size = s[s.ndim() - 1];
    if (!p.preserve_shape) v.size = s[0] == 0 ? 0 : total / s[0];
    v.outer = v.size == 0 ? 0 : total / v.size;
    v.inner = 1;
    const int64_t count = p.normalization == SoftmaxNormalization::kNull ? 1 : valid;
    factor = p.grad_scale / static_cast<float>(count);
  }
  const bool smooth = !p.multi_output && p.smooth_alpha != 0.f;
  const float off_label = smooth ? p.smooth_alpha / static_cast<float>(v.size - 1) : 0.f;
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t i = 0; i < v.inner; ++i) {
      const int k = static_cast<int>(label[o * v.inner + i]);
      const bool ignored = p.use_ignore && k == ignore;
      for (int64_t j = 0; j < v.size; ++j) {
        const int64_t at = (o * v.size + j) * v.inner + i;
        float g;
        if (ignored) {
          g = 0.f;
        } else if (j == k) {
          g = smooth ? y[at] - 1.f + p.smooth_alpha : y[at] - 1.f;
        } else {
          g = smooth ? y[at] - off_label : y[at];
        }
        g *= factor;
        dx[at] = p.out_grad ? g * y[at] : g;
      }
    }
  }
}

std::vector<NodeEntry> SoftmaxOutputGradient(const std::shared_ptr<Node>& n,
                                             const std::vector<NodeEntry>& dy) {
  internal::GradientBuilder g(n, dy);
  return {g.Op("_backward_SoftmaxOutput", {g.in(1), g.out(0)}, g.attrs().dict),
          g.ZerosLike(g.in(1))};
}

// SoftmaxActivation's gradient is softmax's along its axis.
std::vector<NodeEntry> SoftmaxActivationGradient(const std::shared_ptr<Node>& n,
                                                 const std::vector<NodeEntry>& dy) {
  internal::GradientBuilder g(n, dy);
  const bool channel =
      g.attrs().Param<SoftmaxActivationParam>().mode == SoftmaxActivationMode::kChannel;
  return {g.Op("_backward_softmax", {g.out_grad(0), g.out(0)}, {{"axis", channel ? "1" : "-1"}})};
}

bool SoftmaxActivationShape(const NodeAttrs& attrs, std::vector<Shape>* in,
                            std::vector<Shape>* out) {
  bool known = ElemwiseShape(attrs, in, out);
  if (attrs.Param<SoftmaxActivationParam>().mode == SoftmaxActivationMode::kChannel &&
      (*in)[0].ndim() != 0) {
    HN_CHECK((*in)[0].ndim() >= 2, kShapeError)
        << DescribeNode(attrs) << ": mode=channel needs at least 2 dimensions, got " << (*in)[0];
  }
  return known;
}

void SoftmaxActivationCompute(const OpContext&, const NodeAttrs& attrs,
                              const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  const Shape& s = in[0].shape;
  AxisView v;
  v = ViewAround(s, attrs.Param<SoftmaxActivationParam>().mode == SoftmaxActivationMode::kChannel
                        ? 1
                        : s.ndim() - 1);
  FloatSoftmaxAlong(in[0].ptr<const float>(), out[0].ptr<float>(), v);
}

uint32_t SoftmaxNumInputs(const NodeAttrs& attrs) {
  return attrs.Param<SoftmaxParam>().use_length.value_or(false) ? 2u : 1u;
}

std::vector<std::string> SoftmaxInputNames(const NodeAttrs& attrs) {
  if (SoftmaxNumInputs(attrs) == 2) return {"data", "length"};
  return {"data"};
}

// ---- ONNX ------------------------------------------------------------------------------------

// softmax / log_softmax: opset 13's Softmax normalizes along one axis, as MXNet does.
FOnnxConvert SoftmaxOnnx(const char* op_type) {
  return [op_type](OnnxNodeContext* ctx) {
    const SoftmaxParam& p = ctx->param<SoftmaxParam>();
    if (p.use_length.value_or(false)) ctx->NotExportable("use_length=True (a length per line)");
    const OnnxValue& x = ctx->in(0);
    std::string logits = x.name;
    if (p.temperature && *p.temperature != 1.0) {
      logits = ctx->Add("Div", {logits, ctx->Scalar(*p.temperature, x.dtype)});
    }
    const int64_t axis = static_cast<int64_t>(SoftmaxAxis(ctx->attrs(), x.shape.ndim()));
    const OnnxValue& y = ctx->out(0);
    if (y.dtype == x.dtype) {
      ctx->Add(op_type, {logits}, {{"axis", axis}}, y.name);
    } else {  // dtype= asks for another float type: the kernel computes in data's, then casts
      ctx->Cast(ctx->Add(op_type, {logits}, {{"axis", axis}}), y.dtype, y.name);
    }
  };
}

// At inference the label is not read: it does not become an ONNX input. Without multi_output
// or preserve_shape the softmax runs over (N, -1), reshaped back to the input's shape.
void SoftmaxOutputOnnx(OnnxNodeContext* ctx) {
  const SoftmaxOutputParam& p = ctx->param<SoftmaxOutputParam>();
  const OnnxValue& x = ctx->in(0);
  if (p.multi_output || p.preserve_shape || x.shape.ndim() == 2) {
    const int64_t axis = p.multi_output || !p.preserve_shape ? 1 : -1;
    ctx->Add("Softmax", {x.name}, {{"axis", axis}}, ctx->out(0).name);
    return;
  }
  std::string rows = ctx->Add("Flatten", {x.name}, {{"axis", 1}});
  ctx->ReshapeToOutput(ctx->Add("Softmax", {rows}, {{"axis", 1}}), 0);
}

// Over axis 1 (channel) or the last axis (instance), as the kernel.
void SoftmaxActivationOnnx(OnnxNodeContext* ctx) {
  const bool channel = ctx->param<SoftmaxActivationParam>().mode == SoftmaxActivationMode::kChannel;
  ctx->Add("Softmax", {ctx->in(0).name}, {{"axis", channel ? 1 : -1}}, ctx->out(0).name);
}

}  // namespace

void RegisterSoftmaxOps(OpRegistry* r) {
  r->Register("softmax")
      .Describe("Softmax along axis: exp(x / t) / sum(exp(x / t)), t = temperature.")
      .SetParam<SoftmaxParam>()
      .SetInputNames(SoftmaxInputNames)
      .SetInferShape(SoftmaxShape)
      .SetInferType(SoftmaxType)
      .SetCompute(SoftmaxCompute<false>)
      .SetInplace({{0, 0}})
      .SetOnnx({"Softmax", "Div", "Cast"}, SoftmaxOnnx("Softmax"),
               "use_length=True (a length per line)")
      .SetGradient(SoftmaxGradient("_backward_softmax"));

  r->Register("log_softmax")
      .Describe("Log of softmax along axis: x / t - log(sum(exp(x / t))) (shifted by the max).")
      .SetParam<SoftmaxParam>(RejectLength)
      .SetInputNames(SoftmaxInputNames)
      .SetInferShape(SoftmaxShape)
      .SetInferType(SoftmaxType)
      .SetCompute(SoftmaxCompute<true>)
      .SetInplace({{0, 0}})
      .SetOnnx({"LogSoftmax", "Div", "Cast"}, SoftmaxOnnx("LogSoftmax"))
      .SetGradient(SoftmaxGradient("_backward_log_softmax"));

  r->Register("softmin")
      .Describe("Softmin along axis: the softmax of -x / t, t = temperature.")
      .SetParam<SoftmaxParam>(RejectLength)
      .SetInputNames(SoftmaxInputNames)
      .SetInferShape(SoftmaxShape)
      .SetInferType(SoftmaxType)
      .SetCompute(SoftmaxCompute<false, true>)
      .SetInplace({{0, 0}})
      .SetGradient(SoftmaxGradient("_backward_softmin"));
  RegisterSoftmaxBackward(r, "_backward_softmax",
                          "The gradient of softmax: y (dy - sum(dy y)) / t along axis.",
                          SoftmaxBackwardCompute<SoftmaxKind::kSoftmax>);
  RegisterSoftmaxBackward(r, "_backward_log_softmax",
                          "The gradient of log_softmax: (dy - exp(y) sum(dy)) / t along axis.",
                          SoftmaxBackwardCompute<SoftmaxKind::kLogSoftmax>);
  RegisterSoftmaxBackward(r, "_backward_softmin",
                          "The gradient of softmin: -y (dy - sum(dy y)) / t along axis.",
                          SoftmaxBackwardCompute<SoftmaxKind::kSoftmin>);

  r->Register("SoftmaxOutput")
      .Describe(
          "Softmax with a cross-entropy loss for training; at inference the softmax of "
          "data over axis 1 of (N, -1) (multi_output: axis 1 keeping trailing dims; "
          "preserve_shape: last axis). The label is not used.")
      .AddAlias("Softmax")
      .SetParam<SoftmaxOutputParam>()
      .SetInputNames({"data", "label"})
      .SetInferShape(SoftmaxOutputShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(SoftmaxOutputCompute)
      .SetOnnx({"Softmax", "Flatten", "Reshape"}, SoftmaxOutputOnnx)
      .SetGradient(SoftmaxOutputGradient);

  r->Register("_backward_SoftmaxOutput")
      .Describe(
          "The gradient of SoftmaxOutput: (softmax - onehot(label)) scaled by grad_scale and "
          "normalized, as MXNet's (which multiplies by the output with out_grad=True).")
      .SetParam<SoftmaxOutputParam>()
      .SetInputNames({"label", "output"})
      .SetInferShape([](const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
        std::vector<Shape> forward_in{(*in)[1], (*in)[0]};
        std::vector<Shape> forward_out{(*out)[0]};
        const bool known = SoftmaxOutputShape(attrs, &forward_in, &forward_out);
        (*in)[0] = forward_in[1];
        (*in)[1] = (*out)[0] = forward_in[0];
        return known;
      })
      .SetInferType(ElemwiseFloatType)
      .SetCompute(SoftmaxOutputBackwardCompute)
      .SetInternal();

  r->Register("SoftmaxActivation")
      .Describe("Softmax over the last axis (mode=instance) or over axis 1 (mode=channel).")
      .SetParam<SoftmaxActivationParam>()
      .SetInputNames({"data"})
      .SetInferShape(SoftmaxActivationShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(SoftmaxActivationCompute)
      .SetInplace({{0, 0}})
      .SetOnnx({"Softmax"}, SoftmaxActivationOnnx)
      .SetGradient(SoftmaxActivationGradient);

  RegisterLogSoftmaxLabelSum(r);
}

}  // namespace hybridnet
