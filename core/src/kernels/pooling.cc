#include "kernels/pooling.h"

#include <immintrin.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/avx512-inl.h"
#include "kernels/parallel-inl.h"
#include "kernels/threads.h"

namespace hybridnet {
namespace internal {

namespace {

// Kernels, per sample: channel-first planes one channel at a time, channel-last data (positions
// of C contiguous values) all channels at once. Both do the same float operations in the same
// order for every output, so a graph that keeps data channel-last gives the channel-first bits.

enum PoolKind { kMax, kAvg, kSum };

template <int P, typename T>
inline T PowP(T v) {
  if constexpr (P == 1) return v;
  if constexpr (P == 2) return v * v;
  return v * v * v;
}

template <int P, typename T>
inline T RootP(T v) {
  if constexpr (P == 1) return v;
  if constexpr (P == 2) return std::sqrt(v);
  return std::cbrt(v);
}

// One window along one axis: [lo, hi) clipped to the image; `padded` is its size clipped to the
// padded image instead (average pooling's divisor with count_include_pad).
struct Span {
  int64_t lo, hi, padded;
};

inline Span MaxSpan(int64_t pos, int64_t kernel, int64_t stride, int64_t pad, int64_t image) {
  const int64_t start = pos * stride - pad;
  return Span{std::max<int64_t>(start, 0), std::min(start + kernel, image), 0};
}

inline Span SumSpan(int64_t pos, int64_t kernel, int64_t stride, int64_t pad, int64_t image) {
  const int64_t start = pos * stride - pad;
  const int64_t end = std::min(start + kernel, image + pad);
  return Span{std::max<int64_t>(start, 0), std::min(end, image), end - start};
}

// MaxPoolRow's first pass: into `colmax`, the elementwise max of the image rows (`row_len`
// values each) in the windows of output row r of the grid's first two axes.
template <typename T>
inline void WindowRowsMax(const T* x, const SpatialGeom& g, int64_t row_len, int64_t r, T* colmax) {
  const int64_t IH = g.image[1];
  const int64_t pd = r / g.grid[1], ph = r % g.grid[1];
  const Span sd = MaxSpan(pd, g.kernel[0], g.stride[0], g.pad[0], g.image[0]);
  const Span sh = MaxSpan(ph, g.kernel[1], g.stride[1], g.pad[1], IH);
  std::fill(colmax, colmax + row_len, std::numeric_limits<T>::lowest());
  for (int64_t d = sd.lo; d < sd.hi; ++d)
    for (int64_t h = sh.lo; h < sh.hi; ++h) {
      const T* row = x + (d * IH + h) * row_len;
#pragma omp simd
      for (int64_t i = 0; i < row_len; ++i) colmax[i] = row[i] > colmax[i] ? row[i] : colmax[i];
    }
}

// Max pooling separably: for output row r of the grid's first two axes, the elementwise max of
// the window's image rows, then the max over each window's columns of that. Every max keeps the
// first of equal values and skips NaN (v > m), starting from the lowest finite value (-FLT_MAX
// in float). `lane` is C for channel-last data (all channels at once), else 1; `colmax` holds
// image[2] * lane values.
template <typename T>
void MaxPoolRow(const T* x, T* y, const SpatialGeom& g, int64_t lane, T* colmax, int64_t r) {
  const int64_t IW = g.image[2];
  T* out = y + r * g.grid[2] * lane;
  WindowRowsMax(x, g, IW * lane, r, colmax);
  for (int64_t pw = 0; pw < g.grid[2]; ++pw, out += lane) {
    const Span sw = MaxSpan(pw, g.kernel[2], g.stride[2], g.pad[2], IW);
    std::fill(out, out + lane, std::numeric_limits<T>::lowest());
    for (int64_t w = sw.lo; w < sw.hi; ++w) {
      const T* col = colmax + w * lane;
#pragma omp simd
      for (int64_t c = 0; c < lane; ++c) out[c] = col[c] > out[c] ? col[c] : out[c];
    }
  }
}

// MaxPoolRow for channel-last data on AVX-512 (MaxPoolRowFromRows over the window's rows).
// `rows` holds a window's kernel[0] * kernel[1] row pointers.
void MaxPoolRowAvx512(const float* x, float* y, const SpatialGeom& g, int64_t C, int64_t r,
                      const float** rows) {
  const int64_t IH = g.image[1], IW = g.image[2];
  const int64_t pd = r / g.grid[1], ph = r % g.grid[1];
  const Span sd = MaxSpan(pd, g.kernel[0], g.stride[0], g.pad[0], g.image[0]);
  const Span sh = MaxSpan(ph, g.kernel[1], g.stride[1], g.pad[1], IH);
  int64_t count = 0;
  for (int64_t d = sd.lo; d < sd.hi; ++d)
    for (int64_t h = sh.lo; h < sh.hi; ++h) rows[count++] = x + (d * IH + h) * IW * C;
  MaxPoolRowFromRows(rows, count, IW, C, g.grid[2], g.kernel[2], g.stride[2], g.pad[2],
                     y + r * g.grid[2] * C);
}

// MaxPoolRow for channel-first data (one lane) on AVX-512: the same row pass, then the column
// pass 16 outputs at a time where their windows lie inside the row, one window column per step
// (ResNet's stem pool run eagerly on 64 planes: 1.5 ms one output at a time). The comparisons
// and their order are MaxPoolRow's, so the results are its bits.
HN_AVX512 void MaxPoolPlaneRowAvx512(const float* x, float* y, const SpatialGeom& g, float* colmax,
                                     int64_t r) {
  const int64_t IW = g.image[2], OW = g.grid[2];
  const int64_t kernel = g.kernel[2], stride = g.stride[2], pad = g.pad[2];
  WindowRowsMax(x, g, IW, r, colmax);
  float* out = y + r * OW;
  auto one = [&](int64_t pw) {
    const Span sw = MaxSpan(pw, kernel, stride, pad, IW);
    float m = -FLT_MAX;
    for (int64_t w = sw.lo; w < sw.hi; ++w) m = colmax[w] > m ? colmax[w] : m;
    out[pw] = m;
  };
  // Outputs [inner_lo, inner_hi) have whole windows: pw * stride - pad >= 0 and
  // pw * stride - pad + kernel <= IW.
  const int64_t inner_lo = std::min((pad + stride - 1) / stride, OW);
  const int64_t inner_hi =
      std::max(inner_lo, std::min(OW, IW + pad >= kernel ? (IW + pad - kernel) / stride + 1 : 0));
  for (int64_t pw = 0; pw < inner_lo; ++pw) one(pw);
  const __m512i column =
      _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                         _mm512_set1_epi32(static_cast<int>(stride)));
  const __m512 lowest = _mm512_set1_ps(-FLT_MAX);
  for (int64_t pw = inner_lo; pw < inner_hi; pw += 16) {
    const __mmask16 lanes = FirstLanes(inner_hi - pw);
    const float* start = colmax + pw * stride - pad;
    __m512 m = lowest;
    if (stride == 2) {  // ResNet's pool: even floats of two loads rather than a gather
      const int64_t span = 2 * std::min<int64_t>(inner_hi - pw, 16) - 1;
      const __m512i even =
          _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
      for (int64_t j = 0; j < kernel; ++j) {
        const __m512 v = _mm512_permutex2var_ps(LoadFirst(start + j, span), even,
                                                LoadFirst(start + j + 16, span - 16));
        m = _mm512_max_ps(v, m);
      }
    } else {
      for (int64_t j = 0; j < kernel; ++j) {
        m = _mm512_max_ps(_mm512_mask_i32gather_ps(lowest, lanes, column, start + j, 4), m);
      }
    }
    StoreFirst(out + pw, m, inner_hi - pw);
  }
  for (int64_t pw = inner_hi; pw < OW; ++pw) one(pw);
}

// avg (kAvg), sum (kSum, P = 1) and lp (kSum, P = p_value) for output row r of the grid's first
// two axes: each output adds its window's values (v / divisor for avg, v^P otherwise) in
// row-major order, then takes the P-th root. `acc` holds `lane` values.
template <PoolKind kKind, int P, typename T>
void SumPoolRow(const T* x, T* y, const SpatialGeom& g, int64_t lane, bool count_include_pad,
                bool nan_on_empty, T* acc, int64_t r) {
  const int64_t IH = g.image[1], IW = g.image[2];
  const int64_t pd = r / g.grid[1], ph = r % g.grid[1];
  T* out = y + r * g.grid[2] * lane;
  const Span sd = SumSpan(pd, g.kernel[0], g.stride[0], g.pad[0], g.image[0]);
  const Span sh = SumSpan(ph, g.kernel[1], g.stride[1], g.pad[1], IH);
  for (int64_t pw = 0; pw < g.grid[2]; ++pw, out += lane) {
    const Span sw = SumSpan(pw, g.kernel[2], g.stride[2], g.pad[2], IW);
    int64_t pool_size = 1;
    if constexpr (kKind == kAvg) {
      pool_size = count_include_pad ? sd.padded * sh.padded * sw.padded
                                    : (sd.hi - sd.lo) * (sh.hi - sh.lo) * (sw.hi - sw.lo);
    }
    const T divisor = static_cast<T>(pool_size);
    if (lane == 1) {  // channel-first: one sum, without a vector loop's set-up per value
      T sum = 0;
      for (int64_t d = sd.lo; d < sd.hi; ++d)
        for (int64_t h = sh.lo; h < sh.hi; ++h) {
          const T* v = x + (d * IH + h) * IW;
          for (int64_t w = sw.lo; w < sw.hi; ++w) {
            if constexpr (kKind == kAvg) {
              sum += v[w] / divisor;
            } else {
              sum += PowP<P>(v[w]);
            }
          }
        }
      *out = nan_on_empty && pool_size == 0 ? std::numeric_limits<T>::quiet_NaN() : RootP<P>(sum);
      continue;
    }
    std::fill(acc, acc + lane, T(0));
    for (int64_t d = sd.lo; d < sd.hi; ++d)
      for (int64_t h = sh.lo; h < sh.hi; ++h)
        for (int64_t w = sw.lo; w < sw.hi; ++w) {
          const T* v = x + ((d * IH + h) * IW + w) * lane;
#pragma omp simd
          for (int64_t c = 0; c < lane; ++c) {
            if constexpr (kKind == kAvg) {
              acc[c] += v[c] / divisor;
            } else {
              acc[c] += PowP<P>(v[c]);
            }
          }
        }
    const bool empty_nan = nan_on_empty && pool_size == 0;
    for (int64_t c = 0; c < lane; ++c)
      out[c] = empty_nan ? std::numeric_limits<T>::quiet_NaN() : RootP<P>(acc[c]);
  }
}

// Output row r of `type` pooling (lp with p = pv) on the portable row kernels; scratch holds one
// input row (image width x lane values).
template <typename T>
void PoolRow(PoolType type, int pv, bool include_pad, bool nan_on_empty, const T* x, T* y,
             const SpatialGeom& g, int64_t lane, T* scratch, int64_t r) {
  switch (type) {
    case PoolType::kMax:
      MaxPoolRow(x, y, g, lane, scratch, r);
      break;
    case PoolType::kAvg:
      SumPoolRow<kAvg, 1>(x, y, g, lane, include_pad, nan_on_empty, scratch, r);
      break;
    case PoolType::kSum:
    case PoolType::kLp:
      if (pv == 2) {
        SumPoolRow<kSum, 2>(x, y, g, lane, include_pad, nan_on_empty, scratch, r);
      } else if (pv == 3) {
        SumPoolRow<kSum, 3>(x, y, g, lane, include_pad, nan_on_empty, scratch, r);
      } else {
        SumPoolRow<kSum, 1>(x, y, g, lane, include_pad, nan_on_empty, scratch, r);
      }
      break;
  }
}

}  // namespace

KernelChoice& PoolingKernels() {
  static KernelChoice choice("pooling", {{"max_channel_last", "AVX-512F", CpuHasAvx512()},
                                         {"max_channel_first", "AVX-512F", CpuHasAvx512()},
                                         {"max_rows", "", true},
                                         {"sum_rows", "", true}});
  return choice;
}

// Pooling of `planes` planes of `lane` values per position (channel-last samples are one plane
// of C lanes; channel-first ones C planes of one lane). Work items are (plane, output row),
// split between threads from 32 K input floats on: each output is computed by one thread in a
// fixed order, so the thread count does not change it.
void PoolPlanes(PoolType type, int pv, bool include_pad, bool nan_on_empty, const float* xd,
                float* yd, const SpatialGeom& g, int64_t lane, int64_t planes,
                Workspace* workspace) {
  const int64_t IS = g.ImageSize(), OS = g.GridSize();
  const int64_t rows = g.grid[0] * g.grid[1];
  const int64_t items = planes * rows;
  const bool max = type == PoolType::kMax;
  auto takes = [&](int k) {
    switch (static_cast<PoolKernel>(k)) {
      case PoolKernel::kMaxChannelLast:
        return max && lane > 1 && CpuHasAvx512();
      case PoolKernel::kMaxChannelFirst:  // gather offsets are int32
        return max && lane == 1 && CpuHasAvx512() && g.image[2] * g.stride[2] < INT32_MAX;
      case PoolKernel::kMaxRows:
        return max;
      case PoolKernel::kSumRows:
        return !max;
    }
    return false;
  };
  int usual = static_cast<int>(max ? PoolKernel::kMaxRows : PoolKernel::kSumRows);
  for (PoolKernel k : {PoolKernel::kMaxChannelLast, PoolKernel::kMaxChannelFirst}) {
    if (takes(static_cast<int>(k))) usual = static_cast<int>(k);
  }
  const auto kernel = static_cast<PoolKernel>(PoolingKernels().Choose(usual, takes, [&] {
    return "pooling of " + std::to_string(planes) + " planes of " + std::to_string(lane) +
           (lane == 1 ? " lane" : " lanes");
  }));
  // Each thread's row of floats (a window's column maxima or sums) and window row pointers.
  const int64_t threads = KernelThreads(), row_floats = g.image[2] * lane,
                window_rows = g.kernel[0] * g.kernel[1];
  float* scratch_rows =
      workspace->Get<float>(kPoolingRowsSlot, static_cast<size_t>(threads * row_floats));
  const float** pointer_rows = workspace->Get<const float*>(
      kPoolingWindowRowsSlot, static_cast<size_t>(threads * window_rows));
  ParallelFor(items, planes * IS * lane >= 32768, [&](int64_t item) {
    const int64_t i = item / rows, r = item % rows;
    const float* x = xd + i * IS * lane;
    float* y = yd + i * OS * lane;
    float* scratch = scratch_rows + ThreadIndex() * row_floats;
    if (kernel == PoolKernel::kMaxChannelLast) {
      MaxPoolRowAvx512(x, y, g, lane, r, pointer_rows + ThreadIndex() * window_rows);
      return;
    }
    if (kernel == PoolKernel::kMaxChannelFirst) {
      MaxPoolPlaneRowAvx512(x, y, g, scratch, r);
      return;
    }
    PoolRow(type, pv, include_pad, nan_on_empty, x, y, g, lane, scratch, r);
  });
}

namespace {

// The gradient an lp output adds at input value v (MXNet's lp_grad).
template <int P, typename T>
inline T LpGrad(T dy, T v, T y) {
  if constexpr (P == 1) {
    return dy;
  } else if constexpr (P == 2) {
    return y == 0 ? T(0) : dy * (v / y);
  } else {
    const T ratio = v / y;
    return y == 0 ? T(0) : dy * ratio * ratio;
  }
}

// The offset in `x` (positions of `lane` values) of the first value of lane c equal to m in the
// window (sd, sh, sw), row-major; -1 when none is. The window is scanned backwards without
// branches (where the maximum lies is random: a branch on it mispredicts once per window).
template <typename T>
inline int64_t FirstEqual(const T* x, const SpatialGeom& g, int64_t lane, int64_t c, const Span& sd,
                          const Span& sh, const Span& sw, T m) {
  const int64_t IH = g.image[1], IW = g.image[2];
  int64_t first = -1;
  for (int64_t d = sd.hi - 1; d >= sd.lo; --d)
    for (int64_t h = sh.hi - 1; h >= sh.lo; --h) {
      const int64_t row = (d * IH + h) * IW;
      for (int64_t w = sw.hi - 1; w >= sw.lo; --w) {
        const int64_t at = (row + w) * lane + c;
        first = x[at] == m ? at : first;
      }
    }
  return first;
}

// One plane's gradient: `lane` values per position, each lane on its own as MXNet's loops visit
// a channel (the channel-last loops per position give each channel the order of its plane).
template <PoolKind kKind, int P, typename T>
void UnpoolPlane(const T* x, const T* y, const T* dy, T* dx, const SpatialGeom& g, int64_t lane,
                 bool include_pad) {
  const int64_t IH = g.image[1], IW = g.image[2];
  std::fill(dx, dx + g.ImageSize() * lane, T(0));
  auto span = kKind == kMax ? MaxSpan : SumSpan;
  int64_t o = 0;
  for (int64_t pd = 0; pd < g.grid[0]; ++pd) {
    const Span sd = span(pd, g.kernel[0], g.stride[0], g.pad[0], g.image[0]);
    for (int64_t ph = 0; ph < g.grid[1]; ++ph) {
      const Span sh = span(ph, g.kernel[1], g.stride[1], g.pad[1], IH);
      for (int64_t pw = 0; pw < g.grid[2]; ++pw, ++o) {
        const Span sw = span(pw, g.kernel[2], g.stride[2], g.pad[2], IW);
        const T* yo = y + o * lane;
        const T* dyo = dy + o * lane;
        if constexpr (kKind == kMax) {
          for (int64_t c = 0; c < lane; ++c) {
            const int64_t first = FirstEqual(x, g, lane, c, sd, sh, sw, yo[c]);
            if (first >= 0) dx[first] += dyo[c];
          }
        } else {
          int64_t pool_size = 1;
          if constexpr (kKind == kAvg) {
            pool_size = include_pad ? sd.padded * sh.padded * sw.padded
                                    : (sd.hi - sd.lo) * (sh.hi - sh.lo) * (sw.hi - sw.lo);
          }
          const T divisor = static_cast<T>(pool_size);
          for (int64_t d = sd.lo; d < sd.hi; ++d)
            for (int64_t h = sh.lo; h < sh.hi; ++h)
              for (int64_t w = sw.lo; w < sw.hi; ++w) {
                const int64_t at = ((d * IH + h) * IW + w) * lane;
                for (int64_t c = 0; c < lane; ++c) {
                  dx[at + c] += LpGrad<P>(dyo[c], x[at + c], yo[c]) / divisor;
                }
              }
        }
      }
    }
  }
}

// UnpoolPlane for `type` pooling (lp with p = pv).
template <typename T>
void UnpoolPlaneOf(PoolType type, int pv, bool include_pad, const T* xi, const T* yi, const T* dyi,
                   T* dxi, const SpatialGeom& g, int64_t lane) {
  switch (type) {
    case PoolType::kMax:
      UnpoolPlane<kMax, 1>(xi, yi, dyi, dxi, g, lane, include_pad);
      break;
    case PoolType::kAvg:
      UnpoolPlane<kAvg, 1>(xi, yi, dyi, dxi, g, lane, include_pad);
      break;
    case PoolType::kSum:
    case PoolType::kLp:
      if (pv == 2) {
        UnpoolPlane<kSum, 2>(xi, yi, dyi, dxi, g, lane, include_pad);
      } else if (pv == 3) {
        UnpoolPlane<kSum, 3>(xi, yi, dyi, dxi, g, lane, include_pad);
      } else {
        UnpoolPlane<kSum, 1>(xi, yi, dyi, dxi, g, lane, include_pad);
      }
      break;
  }
}

// UnpoolPlane<kMax> of a channel-first plane on AVX-512: where 16 outputs of a row have whole
// windows along the row, their windows are searched at once (loads for strides 1 and 2, else
// gathers), tap by tap from the last, keeping
// the offset of each output's last equal value seen (its first in row-major order); the
// gradients are then added one output after the other, in output order, as UnpoolPlane adds
// them, so the results are its bits. The other outputs take UnpoolPlane's scalar search.
HN_AVX512 void UnpoolMaxPlaneAvx512(const float* x, const float* y, const float* dy, float* dx,
                                    const SpatialGeom& g) {
  const int64_t IH = g.image[1], IW = g.image[2], OW = g.grid[2];
  const int64_t kernel = g.kernel[2], stride = g.stride[2], pad = g.pad[2];
  std::fill(dx, dx + g.ImageSize(), 0.f);
  const int64_t inner_lo = std::min((pad + stride - 1) / stride, OW);
  const int64_t inner_hi =
      std::max(inner_lo, std::min(OW, IW + pad >= kernel ? (IW + pad - kernel) / stride + 1 : 0));
  const __m512i lane_columns =
      _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                         _mm512_set1_epi32(static_cast<int>(stride)));
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  alignas(64) int32_t found[16];
  int64_t o = 0;
  for (int64_t pd = 0; pd < g.grid[0]; ++pd) {
    const Span sd = MaxSpan(pd, g.kernel[0], g.stride[0], g.pad[0], g.image[0]);
    for (int64_t ph = 0; ph < g.grid[1]; ++ph, o += OW) {
      const Span sh = MaxSpan(ph, g.kernel[1], g.stride[1], g.pad[1], IH);
      auto one = [&](int64_t pw) {
        const Span sw = MaxSpan(pw, kernel, stride, pad, IW);
        const int64_t first = FirstEqual(x, g, 1, 0, sd, sh, sw, y[o + pw]);
        if (first >= 0) dx[first] += dy[o + pw];
      };
      for (int64_t pw = 0; pw < inner_lo; ++pw) one(pw);
      for (int64_t pw = inner_lo; pw < inner_hi; pw += 16) {
        const int64_t n = inner_hi - pw;
        const __mmask16 lanes = FirstLanes(n);
        const __m512 m = LoadFirst(y + o + pw, n);
        const int64_t span = 2 * std::min<int64_t>(n, 16) - 1;
        const __m512i columns =
            _mm512_add_epi32(lane_columns, _mm512_set1_epi32(static_cast<int>(pw * stride - pad)));
        __m512i first = _mm512_set1_epi32(-1);
        for (int64_t d = sd.hi - 1; d >= sd.lo; --d)
          for (int64_t h = sh.hi - 1; h >= sh.lo; --h) {
            const __m512i row =
                _mm512_add_epi32(columns, _mm512_set1_epi32(static_cast<int>((d * IH + h) * IW)));
            const float* start = x + (d * IH + h) * IW + pw * stride - pad;
            for (int64_t k = kernel - 1; k >= 0; --k) {
              const __m512i at = _mm512_add_epi32(row, _mm512_set1_epi32(static_cast<int>(k)));
              __m512 v;
              if (stride == 1) {
                v = LoadFirst(start + k, n);
              } else if (stride == 2) {  // even floats of two loads rather than a gather
                v = _mm512_permutex2var_ps(LoadFirst(start + k, span), even,
                                           LoadFirst(start + k + 16, span - 16));
              } else {
                v = _mm512_mask_i32gather_ps(m, lanes, at, x, 4);
              }
              const __mmask16 equal = _mm512_mask_cmp_ps_mask(lanes, v, m, _CMP_EQ_OQ);
              first = _mm512_mask_mov_epi32(first, equal, at);
            }
          }
        _mm512_store_si512(found, first);
        const int64_t count = std::min<int64_t>(16, inner_hi - pw);
        for (int64_t i = 0; i < count; ++i) {
          if (found[i] >= 0) dx[found[i]] += dy[o + pw + i];
        }
      }
      for (int64_t pw = inner_hi; pw < OW; ++pw) one(pw);
    }
  }
}

// UnpoolPlane<kMax> of a channel-last sample (`lane` channels a position) on AVX-512: each
// output's window is searched for 16 channels at once, tap by tap from the last, keeping per
// channel the offset of the last equal value seen (its first in row-major order), and the
// gradients are added at those offsets, outputs in order. A value of dx gets its additions from
// the outputs in the order UnpoolPlane adds them, so the results are its bits.
HN_AVX512 void UnpoolMaxChannelLastAvx512(const float* x, const float* y, const float* dy,
                                          float* dx, const SpatialGeom& g, int64_t lane) {
  const int64_t IH = g.image[1], IW = g.image[2];
  std::fill(dx, dx + g.ImageSize() * lane, 0.f);
  const __m512i channels = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  alignas(64) int32_t found[16];
  int64_t o = 0;
  for (int64_t pd = 0; pd < g.grid[0]; ++pd) {
    const Span sd = MaxSpan(pd, g.kernel[0], g.stride[0], g.pad[0], g.image[0]);
    for (int64_t ph = 0; ph < g.grid[1]; ++ph) {
      const Span sh = MaxSpan(ph, g.kernel[1], g.stride[1], g.pad[1], IH);
      for (int64_t pw = 0; pw < g.grid[2]; ++pw, ++o) {
        const Span sw = MaxSpan(pw, g.kernel[2], g.stride[2], g.pad[2], IW);
        const float* yo = y + o * lane;
        const float* dyo = dy + o * lane;
        for (int64_t c = 0; c < lane; c += 16) {
          const int64_t n = lane - c;
          const __mmask16 lanes = FirstLanes(n);
          const __m512 m = LoadFirst(yo + c, n);
          __m512i first = _mm512_set1_epi32(-1);
          for (int64_t d = sd.hi - 1; d >= sd.lo; --d)
            for (int64_t h = sh.hi - 1; h >= sh.lo; --h)
              for (int64_t w = sw.hi - 1; w >= sw.lo; --w) {
                const int64_t at = ((d * IH + h) * IW + w) * lane + c;
                const __m512 v = LoadFirst(x + at, n);
                const __mmask16 equal = _mm512_mask_cmp_ps_mask(lanes, v, m, _CMP_EQ_OQ);
                first = _mm512_mask_mov_epi32(
                    first, equal,
                    _mm512_add_epi32(channels, _mm512_set1_epi32(static_cast<int>(at))));
              }
          _mm512_store_si512(found, first);
          const int64_t count = std::min<int64_t>(16, lane - c);
          for (int64_t i = 0; i < count; ++i) {
            if (found[i] >= 0) dx[found[i]] += dyo[c + i];
          }
        }
      }
    }
  }
}

}  // namespace

KernelChoice& PoolingBackwardKernels() {
  static KernelChoice choice("pooling_backward", {{"max_channel_last", "AVX-512F", CpuHasAvx512()},
                                                  {"max_channel_first", "AVX-512F", CpuHasAvx512()},
                                                  {"windows", "", true}});
  return choice;
}

void PoolPlanesBackward(PoolType type, int pv, bool include_pad, const float* x, const float* y,
                        const float* dy, float* dx, const SpatialGeom& g, int64_t lane,
                        int64_t planes) {
  const int64_t IS = g.ImageSize() * lane, OS = g.GridSize() * lane;
  auto takes = [&](int k) {
    switch (static_cast<PoolBackwardKernel>(k)) {
      case PoolBackwardKernel::kMaxChannelLast:  // offsets are int32
        return type == PoolType::kMax && lane > 1 && CpuHasAvx512() && IS < INT32_MAX;
      case PoolBackwardKernel::kMaxChannelFirst:  // gather offsets are int32
        return type == PoolType::kMax && lane == 1 && CpuHasAvx512() && IS < INT32_MAX;
      case PoolBackwardKernel::kWindows:
        return true;
    }
    return false;
  };
  int usual = static_cast<int>(PoolBackwardKernel::kWindows);
  for (PoolBackwardKernel k :
       {PoolBackwardKernel::kMaxChannelFirst, PoolBackwardKernel::kMaxChannelLast}) {
    if (takes(static_cast<int>(k))) usual = static_cast<int>(k);
  }
  const auto kernel =
      static_cast<PoolBackwardKernel>(PoolingBackwardKernels().Choose(usual, takes, [&] {
        return "pooling gradient of " + std::to_string(planes) + " planes of " +
               std::to_string(lane) + (lane == 1 ? " lane" : " lanes");
      }));
  ParallelFor(planes, planes * IS >= 32768, [&](int64_t i) {
    const float* xi = x + i * IS;
    const float* yi = y + i * OS;
    const float* dyi = dy + i * OS;
    float* dxi = dx + i * IS;
    if (kernel == PoolBackwardKernel::kMaxChannelFirst) {
      UnpoolMaxPlaneAvx512(xi, yi, dyi, dxi, g);
      return;
    }
    if (kernel == PoolBackwardKernel::kMaxChannelLast) {
      UnpoolMaxChannelLastAvx512(xi, yi, dyi, dxi, g, lane);
      return;
    }
    UnpoolPlaneOf(type, pv, include_pad, xi, yi, dyi, dxi, g, lane);
  });
}

int64_t PooledSize(int64_t image, int64_t kernel, int64_t stride, int64_t pad, bool full) {
  if (!full) return 1 + (image + 2 * pad - kernel) / stride;
  return 1 + static_cast<int64_t>(std::ceil(static_cast<float>(image + 2 * pad - kernel) /
                                            static_cast<float>(stride)));
}

void PoolPlanes(PoolType type, int pv, bool include_pad, bool nan_on_empty, const double* xd,
                double* yd, const SpatialGeom& g, int64_t lane, int64_t planes) {
  const int64_t IS = g.ImageSize() * lane, OS = g.GridSize() * lane;
  std::vector<double> scratch(static_cast<size_t>(g.image[2] * lane));
  for (int64_t i = 0; i < planes; ++i) {
    const double* x = xd + i * IS;
    double* y = yd + i * OS;
    for (int64_t r = 0; r < g.grid[0] * g.grid[1]; ++r) {
      PoolRow(type, pv, include_pad, nan_on_empty, x, y, g, lane, scratch.data(), r);
    }
  }
}

void PoolPlanesBackward(PoolType type, int pv, bool include_pad, const double* x, const double* y,
                        const double* dy, double* dx, const SpatialGeom& g, int64_t lane,
                        int64_t planes) {
  const int64_t IS = g.ImageSize() * lane, OS = g.GridSize() * lane;
  for (int64_t i = 0; i < planes; ++i) {
    const double *xi = x + i * IS, *yi = y + i * OS, *dyi = dy + i * OS;
    double* dxi = dx + i * IS;
    UnpoolPlaneOf(type, pv, include_pad, xi, yi, dyi, dxi, g, lane);
  }
}

void MaxPool2D(const float* x, float* y, int64_t N, int64_t C, int64_t H, int64_t W, int64_t OH,
               int64_t OW, const MaxPoolWindow& w, bool channel_last, Workspace* workspace) {
  const int64_t image[2] = {H, W}, grid[2] = {OH, OW};
  const SpatialGeom g = MakeGeom({w.kernel[0], w.kernel[1]}, {w.stride[0], w.stride[1]},
                                 {w.pad[0], w.pad[1]}, {}, image, grid);
  PoolPlanes(PoolType::kMax, 1, true, false, x, y, g, channel_last ? C : 1,
             channel_last ? N : N * C, workspace);
}

// Each output straight from its window, 16 channels at a time in a register: no column pass
// through memory (ResNet's 3x3 stride-2 pool on 112 x 112 x 64: 330 -> 140-160 us). The window
// is visited column by column, rows within a column, as MaxPoolRow's two passes visit it, so
// equal values (+0 and -0) resolve alike; _mm512_max_ps(v, m) is v > m ? v : m.
HN_AVX512 void MaxPoolRowFromRows(const float* const* rows, int64_t count, int64_t W, int64_t C,
                                  int64_t OW, int64_t kernel, int64_t stride, int64_t pad,
                                  float* out) {
  for (int64_t pw = 0; pw < OW; ++pw, out += C) {
    const Span sw = MaxSpan(pw, kernel, stride, pad, W);
    for (int64_t c = 0; c < C; c += 16) {
      const int64_t n = C - c;
      __m512 m = _mm512_set1_ps(-FLT_MAX);
      for (int64_t w = sw.lo; w < sw.hi; ++w) {
        for (int64_t i = 0; i < count; ++i) m = _mm512_max_ps(LoadFirst(rows[i] + w * C + c, n), m);
      }
      StoreFirst(out + c, m, n);
    }
  }
}

}  // namespace internal
}  // namespace hybridnet
