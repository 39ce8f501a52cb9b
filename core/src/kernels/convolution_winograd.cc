#include "kernels/convolution_winograd.h"

#include <immintrin.h>

#include <algorithm>
#include <memory>

#include "kernels/avx2-inl.h"
#include "kernels/avx512-inl.h"
#include "kernels/blas.h"
#include "kernels/convolution-inl.h"
#include "kernels/parallel-inl.h"
#include "kernels/threads.h"

namespace hybridnet {
namespace internal {

namespace {

constexpr int64_t kTile = 4;     // outputs per tile side
constexpr int64_t kPoints = 36;  // 6x6 points of Winograd's space

// Tiles per chunk when each tile takes `channels` floats at each point: as many as fit in
// `bytes`, at least 24 so the products stay long enough for the matrix kernels; a multiple of
// 12, the row blocks OpenBLAS's kernels compute alike.
int64_t ChunkTiles(int64_t bytes, int64_t channels) {
  const int64_t fit = bytes / (kPoints * channels * int64_t{sizeof(float)});
  return std::max<int64_t>(24, fit / 12 * 12);
}

// The 6 values of G g for the 3 values g of a window's column or row (G: the 6x3 matrix of
// F(4, 3) at the points 0, 1, -1, 2, -2 and infinity).
HN_AVX2 inline void WeightRows(const __m256* g, __m256* o) {
  const __m256 quarter = _mm256_set1_ps(0.25f), sixth = _mm256_set1_ps(1.f / 6);
  const __m256 twelfth = _mm256_set1_ps(1.f / 12), twentyfourth = _mm256_set1_ps(1.f / 24);
  const __m256 outer = _mm256_add_ps(g[0], g[2]);
  o[0] = _mm256_mul_ps(quarter, g[0]);
  o[1] = _mm256_mul_ps(_mm256_set1_ps(-1.f / 6), _mm256_add_ps(outer, g[1]));
  o[2] = _mm256_mul_ps(_mm256_set1_ps(-1.f / 6), _mm256_sub_ps(outer, g[1]));
  const __m256 even = _mm256_fmadd_ps(twentyfourth, g[0], _mm256_mul_ps(sixth, g[2]));
  o[3] = _mm256_fmadd_ps(twelfth, g[1], even);
  o[4] = _mm256_fnmadd_ps(twelfth, g[1], even);
  o[5] = g[2];
}

// The 6 values of B' d for 6 values d of an input column or row.
HN_AVX2 inline void InputRows(const __m256* d, __m256* o) {
  const __m256 four = _mm256_set1_ps(4.f), five = _mm256_set1_ps(5.f), two = _mm256_set1_ps(2.f);
  o[0] = _mm256_fmadd_ps(four, d[0], _mm256_fnmadd_ps(five, d[2], d[4]));
  const __m256 odd = _mm256_fnmadd_ps(four, d[1], d[3]);   // d3 - 4 d1
  const __m256 even = _mm256_fnmadd_ps(four, d[2], d[4]);  // d4 - 4 d2
  o[1] = _mm256_add_ps(even, odd);
  o[2] = _mm256_sub_ps(even, odd);
  const __m256 odd2 = _mm256_mul_ps(two, _mm256_sub_ps(d[3], d[1]));
  const __m256 even2 = _mm256_sub_ps(d[4], d[2]);
  o[3] = _mm256_add_ps(even2, odd2);
  o[4] = _mm256_sub_ps(even2, odd2);
  o[5] = _mm256_fmadd_ps(four, d[1], _mm256_fnmadd_ps(five, d[3], d[5]));
}

// The 6 values of A d for 4 values d of an output gradient's column or row (A: A' transposed).
HN_AVX2 inline void GradientRows(const __m256* d, __m256* o) {
  const __m256 even = _mm256_add_ps(d[0], d[2]), odd = _mm256_add_ps(d[1], d[3]);
  const __m256 even4 = _mm256_fmadd_ps(_mm256_set1_ps(4.f), d[2], d[0]);
  const __m256 odd8 = _mm256_fmadd_ps(_mm256_set1_ps(8.f), d[3], _mm256_add_ps(d[1], d[1]));
  o[0] = d[0];
  o[1] = _mm256_add_ps(even, odd);
  o[2] = _mm256_sub_ps(even, odd);
  o[3] = _mm256_add_ps(even4, odd8);
  o[4] = _mm256_sub_ps(even4, odd8);
  o[5] = d[3];
}

// The 3 values of G' s for 6 values s of a column or row of Winograd-space sums.
HN_AVX2 inline void SumRows(const __m256* s, __m256* o) {
  const __m256 sum12 = _mm256_add_ps(s[1], s[2]), diff21 = _mm256_sub_ps(s[2], s[1]);
  const __m256 sum34 = _mm256_add_ps(s[3], s[4]), diff34 = _mm256_sub_ps(s[3], s[4]);
  const __m256 sixth = _mm256_set1_ps(1.f / 6), minus_sixth = _mm256_set1_ps(-1.f / 6);
  o[0] = _mm256_fmadd_ps(_mm256_set1_ps(0.25f), s[0],
                         _mm256_fmadd_ps(minus_sixth, sum12,
                                         _mm256_mul_ps(_mm256_set1_ps(1.f / 24), sum34)));
  o[1] = _mm256_fmadd_ps(sixth, diff21, _mm256_mul_ps(_mm256_set1_ps(1.f / 12), diff34));
  o[2] = _mm256_fmadd_ps(minus_sixth, sum12, _mm256_fmadd_ps(sixth, sum34, s[5]));
}

// The 4 values of A' m for 6 values m of a product column or row.
HN_AVX2 inline void OutputRows(const __m256* m, __m256* o) {
  const __m256 sum12 = _mm256_add_ps(m[1], m[2]), diff12 = _mm256_sub_ps(m[1], m[2]);
  const __m256 sum34 = _mm256_add_ps(m[3], m[4]), diff34 = _mm256_sub_ps(m[3], m[4]);
  o[0] = _mm256_add_ps(_mm256_add_ps(m[0], sum12), sum34);
  o[1] = _mm256_fmadd_ps(_mm256_set1_ps(2.f), diff34, diff12);
  o[2] = _mm256_fmadd_ps(_mm256_set1_ps(4.f), sum34, sum12);
  o[3] = _mm256_add_ps(_mm256_fmadd_ps(_mm256_set1_ps(8.f), diff34, diff12), m[5]);
}

using RowTransform = void (*)(const __m256*, __m256*);

// out (m x m) = R in R' for in (n x n), where `rows` computes R v for a column or row v of n
// values: the columns first, then the rows. in's element (i, j) is load(i, j), and out's goes to
// store(i, j, value) as soon as it is made: only the half-way values are kept in memory (whole
// arrays of in and out spilled about a thousand ymm registers to the stack per input tile).
// Inlined and unrolled, so that n, m and `rows` are constants and in, out and the half-way
// values stay in registers as far as they fit.
template <typename Load, typename Store>
HN_AVX2 inline __attribute__((always_inline)) void TransformBothWays(int64_t n, int64_t m,
                                                                     RowTransform rows,
                                                                     const Load& load,
                                                                     const Store& store) {
  __m256 half[36], column[6], transformed[6];
#pragma GCC unroll 6
  for (int64_t j = 0; j < n; ++j) {
#pragma GCC unroll 6
    for (int64_t i = 0; i < n; ++i) column[i] = load(i, j);
    rows(column, transformed);
#pragma GCC unroll 6
    for (int64_t i = 0; i < m; ++i) half[i * n + j] = transformed[i];
  }
#pragma GCC unroll 6
  for (int64_t i = 0; i < m; ++i) {
    rows(half + i * n, transformed);
#pragma GCC unroll 6
    for (int64_t j = 0; j < m; ++j) store(i, j, transformed[j]);
  }
}

// The windows of input channel i into output channels [o, o + 8) in Winograd's space
// (TransformWeights' layout), from w (F, C, 3, 3).
HN_AVX2 void TransformWindows(const float* w, int64_t C, bool rotated, int64_t in, int64_t to,
                              int64_t i, int64_t o, float* out) {
  alignas(32) float taps[9][8];
  for (int64_t lane = 0; lane < 8; ++lane) {
    const int64_t f = rotated ? i : o + lane, c = rotated ? o + lane : i;
    const float* window = w + (f * C + c) * 9;
    for (int64_t t = 0; t < 9; ++t) taps[rotated ? 8 - t : t][lane] = window[t];
  }
  TransformBothWays(
      3, 6, WeightRows,
      [&](int64_t r, int64_t t) HN_AVX2 { return _mm256_load_ps(taps[r * 3 + t]); },
      [&](int64_t r, int64_t t, __m256 u) HN_AVX2 {
        _mm256_storeu_ps(out + ((r * 6 + t) * in + i) * to + o, u);
      });
}

// Windows w (F, C, 3, 3) in Winograd's space as the products read them: out (36, in, to) for
// products of `in` channels into `to`; forward: in C, to F; `rotated` (backward data): in F,
// to C, each window turned 180 degrees. Output channels go 16 at a time (a cache line of each
// output row) over every input channel, which reads w in runs too either way.
void TransformWeights(const float* w, int64_t F, int64_t C, bool rotated, float* out) {
  const int64_t in = rotated ? F : C, to = rotated ? C : F;
  ParallelFor((to + 15) / 16, in * to >= 4096, [&](int64_t block) {
    for (int64_t i = 0; i < in; ++i) {
      for (int64_t o = block * 16; o < std::min(to, block * 16 + 16); o += 8) {
        TransformWindows(w, C, rotated, in, to, i, o, out);
      }
    }
  });
}

struct WinogradWeights {
  NDArray transformed;  // (36, in, to)
};

// The windows of call s in Winograd's space (TransformWeights' layout, `rotated` or not), made
// for the call in the workspace. Training's weights change every step: kept with the weight
// arrays, the windows would stay for every layer at once, 4x the 3x3 weights for each pass
// (ResNet-18's step: 1471 MB peak memory against 1265 MB).
const float* WindowsForCall(const ConvSpec& s, const float* weight, bool rotated,
                            Workspace* workspace) {
  float* out =
      workspace->Get<float>(kConvWinogradWeightsSlot, static_cast<size_t>(kPoints * s.C * s.F));
  TransformWeights(weight, s.F, s.C, rotated, out);
  return out;
}

// The forward windows of call (s, a): inference's (fast_math) kept with the weight array (in
// `*kept`), as its weights do not change between calls; training's made for the call.
const float* ForwardWindows(const ConvSpec& s, const ConvArgs& a,
                            std::shared_ptr<const WinogradWeights>* kept) {
  if (!s.fast_math) return WindowsForCall(s, a.weight, false, a.workspace);
  *kept = KeptWithWeights<WinogradWeights>(a, "winograd", [&] {
    auto w = std::make_shared<WinogradWeights>();
    w->transformed = NDArray(Shape{kPoints * s.C * s.F});
    TransformWeights(a.weight, s.F, s.C, false, w->transformed.data<float>());
    return w;
  });
  return (*kept)->transformed.data<float>();
}

// One convolution in Winograd's space: x (N, H, W, C) into y (N, H, W, F), y = conv + bias
// (bias null: none); u: the windows as TransformWeights writes them for C into F.
struct Problem {
  int64_t N = 0, H = 0, W = 0, C = 0, F = 0;
  const float* x = nullptr;
  const float* u = nullptr;
  const float* bias = nullptr;
  float* y = nullptr;
};

// The tiles of p over its samples, rows of tiles and columns of tiles.
int64_t TileRows(const Problem& p) { return (p.H + kTile - 1) / kTile; }
int64_t TileColumns(const Problem& p) { return (p.W + kTile - 1) / kTile; }
int64_t Tiles(const Problem& p) { return p.N * TileRows(p) * TileColumns(p); }

// Where tile `tile` of p is: its sample and its first output row and column.
struct TilePlace {
  int64_t n, top, left;
};
TilePlace PlaceOf(const Problem& p, int64_t tile) {
  const int64_t rows = TileRows(p), columns = TileColumns(p);
  return {tile / (rows * columns), tile / columns % rows * kTile, tile % columns * kTile};
}

// The problem of call s on x, its channels swapped for the backward data (dy into dx).
Problem ProblemOf(const ConvSpec& s, const float* x, bool swapped) {
  Problem p;
  p.N = s.N;
  p.H = s.in[0];
  p.W = s.in[1];
  p.C = swapped ? s.F : s.C;
  p.F = swapped ? s.C : s.F;
  p.x = x;
  return p;
}

// The input tiles [first, first + count) of p in Winograd's space: v (36, stride, C), the
// tiles in its first `count` rows.
HN_AVX2 void TransformInput(const Problem& p, int64_t first, int64_t count, int64_t stride,
                            float* v) {
  const int64_t point_stride = stride * p.C;
  for (int64_t t = 0; t < count; ++t) {
    const TilePlace place = PlaceOf(p, first + t);
    // The input block starts a row and a column before the outputs (padding 1).
    const int64_t n = place.n, top = place.top - 1, left = place.left - 1;
    const float* rows[6];
    bool column_in[6];
    for (int64_t i = 0; i < 6; ++i) {
      const int64_t h = top + i;
      rows[i] = h >= 0 && h < p.H ? p.x + ((n * p.H + h) * p.W + left) * p.C : nullptr;
      column_in[i] = left + i >= 0 && left + i < p.W;
    }
    for (int64_t c = 0; c < p.C; c += 8) {
      TransformBothWays(
          6, 6, InputRows,
          [&](int64_t i, int64_t j) HN_AVX2 {
            return rows[i] != nullptr && column_in[j] ? _mm256_loadu_ps(rows[i] + j * p.C + c)
                                                      : _mm256_setzero_ps();
          },
          [&](int64_t i, int64_t j, __m256 x) HN_AVX2 {
            _mm256_storeu_ps(v + (i * 6 + j) * point_stride + t * p.C + c, x);
          });
    }
  }
}

// The output tiles [first, first + count) of p from their products m (36, count, F).
HN_AVX2 void TransformOutput(const Problem& p, int64_t first, int64_t count, const float* m) {
  const int64_t point_stride = count * p.F;
  for (int64_t t = 0; t < count; ++t) {
    const auto [n, top, left] = PlaceOf(p, first + t);
    const int64_t rows = std::min(kTile, p.H - top), columns = std::min(kTile, p.W - left);
    for (int64_t f = 0; f < p.F; f += 8) {
      const __m256 bias = p.bias != nullptr ? _mm256_loadu_ps(p.bias + f) : _mm256_setzero_ps();
      TransformBothWays(
          6, 4, OutputRows,
          [&](int64_t i, int64_t j) HN_AVX2 {
            return _mm256_loadu_ps(m + (i * 6 + j) * point_stride + t * p.F + f);
          },
          [&](int64_t i, int64_t j, __m256 y) HN_AVX2 {
            if (i >= rows || j >= columns) return;
            float* out = p.y + ((n * p.H + top + i) * p.W + left + j) * p.F + f;
            _mm256_storeu_ps(out, p.bias != nullptr ? _mm256_add_ps(y, bias) : y);
          });
    }
  }
}

// Whether the points' products of p run on libxsmm: up to 64 channels in and out on AVX2. Beyond,
// OpenBLAS's packing pays (at 128 channels both took the same time, at 256 and 512 libxsmm took
// 1.2-1.8x OpenBLAS's; Zen 3). On AVX-512 libxsmm's JIT kernels use its full width, which
// OpenBLAS's may not (OPENBLAS_CORETYPE=Haswell): up to 256 channels (Zen 5, 1 thread, the three
// passes of ResNet-18's 28x28 layer of 128 channels 11.3 / 11.4 / 12.2 ms against 21.3 / 21.2 /
// 25.7 on OpenBLAS's Haswell kernels and 13.9 / 13.5 / 19.7 on its Cooperlake ones).
bool SmallProducts(const Problem& p) {
  return std::max(p.C, p.F) <= (CpuHasAvx512() ? 256 : 64);
}

void RunProblem(const Problem& p, Workspace* workspace) {
  const int64_t tiles = Tiles(p);
  // A chunk's transformed inputs and its products within 768 KiB each for libxsmm's products,
  // 1.5 MiB for OpenBLAS's (Zen 3, 1 thread: ResNet-20's 32x32x16 forward 6.8 ms against 7.6
  // at 1.5 MiB, its 8x8x64 one 2.9 against 3.4; ResNet-18's 28x28x128 one alike at both, and
  // slower at 8 MiB).
  const bool small = SmallProducts(p);
  const int64_t chunk_bytes = small ? int64_t{3} << 18 : int64_t{3} << 19;
  const int64_t chunk = ChunkTiles(chunk_bytes, std::max(p.C, p.F));
  const int64_t chunks = (tiles + chunk - 1) / chunk;
  const int64_t chunk_floats = kPoints * chunk * (p.C + p.F);
  const int threads = KernelThreads();
  float* scratch = workspace->Get<float>(kConvWinogradSlot,
                                         static_cast<size_t>(threads * chunk_floats));
  ParallelFor(chunks, true, [&](int64_t k) {
    float* v = scratch + ThreadIndex() * chunk_floats;
    float* m = v + kPoints * chunk * p.C;
    const int64_t first = k * chunk, count = std::min(chunk, tiles - first);
    TransformInput(p, first, count, count, v);
    const RepeatedProduct product(false, count, p.F, p.C, p.C, p.F, false, p.F, small);
    for (int64_t q = 0; q < kPoints; ++q) {
      product(v + q * count * p.C, p.u + q * p.C * p.F, m + q * count * p.F);
    }
    TransformOutput(p, first, count, m);
  });
}

// The output-gradient tiles [first, first + count) of dy (N, H, W, F; p's output) in Winograd's
// space: g (36, stride, F), the tiles in its first `count` rows; positions past the image are 0.
HN_AVX2 void TransformGradient(const Problem& p, const float* dy, int64_t first, int64_t count,
                               int64_t stride, float* g) {
  const int64_t point_stride = stride * p.F;
  for (int64_t t = 0; t < count; ++t) {
    const auto [n, top, left] = PlaceOf(p, first + t);
    const int64_t tile_rows = std::min(kTile, p.H - top);
    const int64_t tile_columns = std::min(kTile, p.W - left);
    for (int64_t f = 0; f < p.F; f += 8) {
      TransformBothWays(
          4, 6, GradientRows,
          [&](int64_t i, int64_t j) HN_AVX2 {
            return i < tile_rows && j < tile_columns
                       ? _mm256_loadu_ps(dy + ((n * p.H + top + i) * p.W + left + j) * p.F + f)
                       : _mm256_setzero_ps();
          },
          [&](int64_t i, int64_t j, __m256 x) HN_AVX2 {
            _mm256_storeu_ps(g + (i * 6 + j) * point_stride + t * p.F + f, x);
          });
    }
  }
}

// dw[f, c] (F, C, 3, 3) for filters [f, f + 8) from the sums s (36, C, F) of input channel c.
HN_AVX2 void WindowsFromSums(const float* s, int64_t C, int64_t F, int64_t c, int64_t f,
                             float* dw) {
  alignas(32) float taps[9][8];
  TransformBothWays(
      6, 3, SumRows,
      [&](int64_t i, int64_t j) HN_AVX2 {
        return _mm256_loadu_ps(s + ((i * 6 + j) * C + c) * F + f);
      },
      [&](int64_t i, int64_t j, __m256 x) HN_AVX2 { _mm256_store_ps(taps[i * 3 + j], x); });
  for (int64_t lane = 0; lane < 8; ++lane) {
    for (int64_t t = 0; t < 9; ++t) dw[((f + lane) * C + c) * 9 + t] = taps[t][lane];
  }
}

// dw of problem p (x: its input, dy: its output's gradient, channel-last): each point's sums
// over the chunks in order, one product a chunk, whatever the thread count.
void RunWeightGradient(const Problem& p, const float* dy, float* dw, Workspace* workspace) {
  const int64_t tiles = Tiles(p);
  // Its products sum over the tiles, a chunk at a time: the chunk's transformed tiles should
  // stay in the caches, yet be long enough for few passes over the sums (36 x C x F). At 1 thread
  // on Zen 3, 3 MiB of tiles suited libxsmm's products (ResNet-18's 56x56x64 layer 42.7 ms,
  // against 68.1 at 24 MiB), 6 MiB OpenBLAS's (its 28x28x128 one 39.2 ms, 45.4 at 3 MiB).
  const bool small = SmallProducts(p);
  const int64_t chunk_bytes = small ? int64_t{3} << 20 : int64_t{6} << 20;
  const int64_t chunk = std::min(tiles, ChunkTiles(chunk_bytes, p.C + p.F));
  float* v = workspace->Get<float>(kConvWinogradSlot,
                                   static_cast<size_t>(kPoints * chunk * (p.C + p.F)));
  float* g = v + kPoints * chunk * p.C;
  float* sums =
      workspace->Get<float>(kConvWinogradWeightsSlot, static_cast<size_t>(kPoints * p.C * p.F));
  const int threads = KernelThreads();
  for (int64_t first = 0; first < tiles; first += chunk) {
    const int64_t count = std::min(chunk, tiles - first);
    ParallelFor(threads, count >= 2 * threads, [&](int64_t part) {
      const int64_t begin = count * part / threads, end = count * (part + 1) / threads;
      TransformInput(p, first + begin, end - begin, chunk, v + begin * p.C);
      TransformGradient(p, dy, first + begin, end - begin, chunk, g + begin * p.F);
    });
    const RepeatedProduct product(true, p.C, p.F, count, p.C, p.F, first != 0, p.F, small);
    ParallelFor(kPoints, true, [&](int64_t q) {
      product(v + q * chunk * p.C, g + q * chunk * p.F, sums + q * p.C * p.F);
    });
  }
  ParallelFor(p.C, p.C * p.F >= 4096, [&](int64_t c) {
    for (int64_t f = 0; f < p.F; f += 8) WindowsFromSums(sums, p.C, p.F, c, f, dw);
  });
}

}  // namespace

bool WinogradShape(const ConvSpec& s) {
  if (s.deconv || s.nd != 2 || s.G != 1) return false;
  for (int64_t i = 0; i < 2; ++i) {
    if (s.kernel[i] != 3 || s.stride[i] != 1 || s.dilate[i] != 1 || s.pad_l[i] != 1 ||
        s.pad_r[i] != 1) {
      return false;
    }
  }
  return true;
}

bool WinogradTakes(const ConvSpec& s) {
  return CpuHasAvx2() && WinogradShape(s) && s.C % 8 == 0 && s.F % 8 == 0;
}

// Measured per layer and pass (bench/layer_bench BM_TrainConvPass: Zen 3, 1 thread, channel-last
// arrays, the windows' transform included) against the fastest of oneDNN 2.6.3's kernels and
// ours for that pass. ResNet-18's (batch 32), forward / backward data / backward weights, ms:
// 56x56 of 64 channels 31 / 32 / 42 against 93 / 98 / 108, 14x14 of 256 44 / 44 / 37 against
// 92 / 84 / 113. CIFAR ResNet-20's (batch 128): 8x8 of 64 2.3 / 2.3 / 3.3 against 8.8 / 7.0 /
// 9.3, 16x16 of 32 3.4 / 3.4 / 4.0 against 8.2 / 7.6 / 9.9, 32x32 of 16 5.0 / 5.1 / 6.4 against
// 9.5 / 7.6 / 9.8 (with the products on libxsmm; on OpenBLAS's the 16 channels' products
// were too short: 11.0 / 10.7 / 12.5). 8 channels were not measured.
//
// On AVX-512 oneDNN has Winograd kernels of its own (jit_wino_4x3, all three passes) at twice
// our transforms' width, but on its blocked layouts: the training graph's channel-last arrays
// are re-laid-out around them, which costs more than their width saves on large arrays. Zen 5,
// 1 thread, ms, forward / backward data / backward weights, re-layouts included, ours with the
// products on libxsmm (SmallProducts). ResNet-18's (batch 32): 56x56 of 64 channels ours 13.7 /
// 14.1 / 17.8, oneDNN's Winograd 22.4 / 21.9 / 40.8, its direct 29.0 / 28.4 / 36.5; 28x28 of
// 128 ours 11.3 / 11.4 / 12.2, oneDNN's 19.4 / 18.9 / 26.3; 14x14 of 256 ours 15.5 / 15.5 /
// 17.5, oneDNN's 16.2 / 15.9 / 22.1; 7x7 of 512 ours 22.4 / 22.6 / 28.7, oneDNN's 13.2 / 15.8 /
// 21.2, its direct 24.2 / 24.2 / 28.1. CIFAR ResNet-20's (batch 128): 16x16 of 32 ours 1.15 /
// 1.14 / 2.04 against oneDNN's direct 2.2 / 2.2 / 2.2 and its few_channels kernel's 2.4
// forward; 8x8 of 64 ours 0.85 / 0.85 / 1.33 against 2.0 / 2.0 / 2.1; 32x32 of 16 ours 2.2 /
// 2.1 / 3.8 against 2.9 / 2.5 / 2.3.
bool WinogradPays(const ConvSpec& s) {
  if (!s.winograd || !WinogradTakes(s)) return false;
  if (!CpuHasAvx512()) return s.C >= 16 && s.F >= 16;
  return s.C >= 32 && s.F >= 32 && s.C <= 256 && s.F <= 256;
}

bool OneDnnWinogradPays(const ConvSpec& s) {
  return s.winograd && CpuHasAvx512() && WinogradShape(s) && s.C >= 64 && s.F >= 64 &&
         !WinogradPays(s);
}

void RunWinogradConvolution(const ConvSpec& s, const ConvArgs& a) {
  std::shared_ptr<const WinogradWeights> kept;
  const float* u = ForwardWindows(s, a, &kept);
  const bool epilogue = s.bn || s.residual || s.relu || a.epilogue.clip;
  OnChannelLast(s, a, [&](const float* data, const float* residual, float* out) {
    Problem p = ProblemOf(s, data, false);
    p.u = u;
    p.bias = s.bias ? a.epilogue.bias : nullptr;
    // A residual that is the output is read after the convolution: the sums go to scratch.
    p.y = residual != nullptr && residual == out
              ? a.workspace->Get<float>(kConvDstSlot, static_cast<size_t>(OutputPositions(s) * s.F))
              : out;
    RunProblem(p, a.workspace);
    if (epilogue) RunEpilogue(EpilogueOf(s, a, true, OutputPositions(s), p.y, residual, out));
  });
}

void RunWinogradWeightGradient(const ConvSpec& s, const ConvGradArgs& a) {
  const int64_t positions = OutputPositions(s);
  const float* x = a.data;
  const float* dy = a.out_grad;
  if (!s.channel_last) {
    const int64_t spatial = s.in[0] * s.in[1];
    float* x_last = a.workspace->Get<float>(kConvSrcSlot, static_cast<size_t>(positions * s.C));
    Relayout(a.data, x_last, s.N, s.C, spatial, true, a.workspace);
    float* dy_last = a.workspace->Get<float>(kConvDstSlot, static_cast<size_t>(positions * s.F));
    Relayout(a.out_grad, dy_last, s.N, s.F, spatial, true, a.workspace);
    x = x_last;
    dy = dy_last;
  }
  RunWeightGradient(ProblemOf(s, x, false), dy, a.weight_grad, a.workspace);
}

void RunWinogradDataGradient(const ConvSpec& s, const ConvGradArgs& a) {
  // dx is the convolution of dy by the rotated windows, F channels into C.
  ConvSpec t = s;
  std::swap(t.C, t.F);
  t.data_channel_first = 0;
  t.bias = t.bn = t.residual = t.relu = 0;
  const float* u = WindowsForCall(s, a.weight, true, a.workspace);
  ConvArgs args;
  args.data = a.out_grad;
  args.out = a.data_grad;
  args.workspace = a.workspace;
  OnChannelLast(t, args, [&](const float* data, const float*, float* out) {
    Problem p = ProblemOf(s, data, true);
    p.u = u;
    p.y = out;
    RunProblem(p, a.workspace);
  });
}

}  // namespace internal
}  // namespace hybridnet
