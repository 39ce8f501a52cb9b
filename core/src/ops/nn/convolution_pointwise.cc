#include "ops/nn/convolution_pointwise.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <utility>

#include "ops/nn/convolution_backend.h"
#include "ops/nn/convolution_epilogue-inl.h"

namespace hybridnet {
namespace internal {

namespace {

// Positions per work item, about (RunPointwise makes the tiles of equal size).
constexpr int64_t kTileRows = 24;

// Rows of one register tile for `nb` blocks of 16 filters: as many accumulators as fit in 32
// registers beside the nb weight vectors and a broadcast input.
constexpr int RowsFor(int nb) { return nb == 4 ? 6 : nb == 3 ? 8 : 12; }

// out[p0 + r, 16 * (b0 + j) + lane] for r < R, j < NB: each output the sum over c in order of
// data * weight (one fused multiply-add per step), then the epilogue.
template <int R, int NB>
HN_AVX512 void Tile(const PointwiseArgs& a, int64_t p0, int64_t b0) {
  const int64_t C = a.C;
  const float* x = a.data + p0 * C;
  const float* w = a.weight + b0 * C * 16;
  __m512 acc[R][NB];
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) acc[r][j] = _mm512_setzero_ps();
  }
  for (int64_t k = 0; k < C; ++k) {
    __m512 wv[NB];
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) wv[j] = _mm512_loadu_ps(w + (j * C + k) * 16);
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) {
      const __m512 xv = _mm512_set1_ps(x[r * C + k]);
#pragma GCC unroll 4
      for (int j = 0; j < NB; ++j) acc[r][j] = _mm512_fmadd_ps(xv, wv[j], acc[r][j]);
    }
  }
#pragma GCC unroll 4
  for (int j = 0; j < NB; ++j) {
    const int64_t c = (b0 + j) * 16;
    const __mmask16 lanes =
        a.F - c >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << (a.F - c)) - 1);
    const Epilogue e = MakeEpilogue(a.bias, a.bn_scale, a.bn_shift, a.residual != nullptr,
                                    a.relu, a.clip, a.clip_min, a.clip_max, c, lanes);
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) {
      const int64_t o = (p0 + r) * a.F + c;
      const __m512 res = e.residual ? _mm512_maskz_loadu_ps(lanes, a.residual + o) : acc[r][j];
      _mm512_mask_storeu_ps(a.out + o, lanes, Apply(acc[r][j], e, res));
    }
  }
}

using TileFn = void (*)(const PointwiseArgs&, int64_t, int64_t);
constexpr int kMaxRows = 12;

// Tile<rows, NB> by rows - 1, for rows up to RowsFor(NB).
template <int NB, size_t... Rows>
constexpr std::array<TileFn, kMaxRows> TilesOf(std::index_sequence<Rows...>) {
  return {{&Tile<static_cast<int>(Rows) + 1, NB>...}};
}

// kTiles[nb - 1][rows - 1].
const std::array<std::array<TileFn, kMaxRows>, 4> kTiles = {
    TilesOf<1>(std::make_index_sequence<RowsFor(1)>()),
    TilesOf<2>(std::make_index_sequence<RowsFor(2)>()),
    TilesOf<3>(std::make_index_sequence<RowsFor(3)>()),
    TilesOf<4>(std::make_index_sequence<RowsFor(4)>())};

// Positions [p0, p1) for filter blocks [b0, b0 + nb), nb <= 4.
void Item(const PointwiseArgs& a, int64_t p0, int64_t p1, int64_t b0, int nb) {
  const int rows = RowsFor(nb);
  for (int64_t p = p0; p < p1; p += rows) {
    const int64_t r = std::min<int64_t>(rows, p1 - p);
    kTiles[static_cast<size_t>(nb - 1)][static_cast<size_t>(r - 1)](a, p, b0);
  }
}

// Work items: about kTileRows positions (tiles of equal size) times a group of at most 4 filter
// blocks (groups of equal size: MobileNet's 144 filters, 9 blocks, run as 3 + 3 + 3, not
// 4 + 4 + 1). Items of one tile are consecutive, so a thread computes every group of a tile while
// its inputs are in L1; and small images (7 x 7) still split evenly between threads.
struct WorkItems {
  explicit WorkItems(const PointwiseArgs& a)
      : blocks((a.F + 15) / 16), groups((blocks + 3) / 4),
        tiles((a.positions + kTileRows - 1) / kTileRows) {}
  int64_t count() const { return tiles * groups; }
  void Run(const PointwiseArgs& a, int64_t item) const {
    const int64_t t = item / groups, g = item % groups;
    const int64_t b0 = g * blocks / groups;
    Item(a, a.positions * t / tiles, a.positions * (t + 1) / tiles, b0,
         static_cast<int>((g + 1) * blocks / groups - b0));
  }
  int64_t blocks, groups, tiles;
};

}  // namespace

int64_t PointwiseWeightFloats(int64_t C, int64_t F) { return (F + 15) / 16 * 16 * C; }

void PackPointwiseWeights(const float* W, int64_t C, int64_t F, float* packed) {
  const int64_t blocks = (F + 15) / 16;
  for (int64_t b = 0; b < blocks; ++b) {
    for (int64_t c = 0; c < C; ++c) {
      for (int64_t lane = 0; lane < 16; ++lane) {
        const int64_t f = b * 16 + lane;
        packed[(b * C + c) * 16 + lane] = f < F ? W[f * C + c] : 0.f;
      }
    }
  }
}

void RunPointwise(const PointwiseArgs& a) {
  const WorkItems items(a);
#pragma omp parallel for num_threads(BackendThreads()) schedule(static)
  for (int64_t item = 0; item < items.count(); ++item) items.Run(a, item);
}

void RunPointwiseOnThisThread(const PointwiseArgs& a) {
  const WorkItems items(a);
  for (int64_t item = 0; item < items.count(); ++item) items.Run(a, item);
}

}  // namespace internal
}  // namespace hybridnet
