#include "kernels/convolution_pointwise.h"

#include <immintrin.h>

#include <algorithm>

#include "kernels/epilogue-inl.h"
#include "kernels/parallel-inl.h"
#include "kernels/threads.h"

namespace hybridnet {
namespace internal {

namespace {

// Positions per work item, about (RunPointwise makes the tiles of equal size).
constexpr int64_t kTileRows = 24;

// Outputs of this size and more are fetched for writing ahead of the stores (Tile): L2's size on
// Zen 4 and on Intel's server cores before Sapphire Rapids.
constexpr int64_t kPrefetchMinOutputBytes = int64_t{1} << 20;

// out[p0 + r, 16 * (b0 + j) + lane] for r < R, j < NB: each output the sum over c in order of
// data * weight (one fused multiply-add per step), then the epilogue.
template <int R, int NB>
HN_AVX512 void Tile(const PointwiseArgs& a, int64_t p0, int64_t b0) {
  const int64_t C = a.C;
  const float* x = a.data + p0 * C;
  const float* w = a.weight + b0 * C * 16;
  __m512 acc[R][NB];
  ZeroTile(acc);
  int64_t k = 0;
  // An output larger than L2 (ResNet-50's 56 px expansions, 3.2 MB) has its tile's lines fetched
  // for writing during the sum's first steps, one a step; otherwise the stores' misses stall
  // the tile's end: 13-19 % less time on such shapes, ResNet-50 0.975 of its time.
  if (a.positions * a.F * static_cast<int64_t>(sizeof(float)) >= kPrefetchMinOutputBytes) {
    float* const out = a.out + p0 * a.F + b0 * 16;
    for (; k < std::min<int64_t>(C, R * NB); ++k) {
      __builtin_prefetch(out + k / NB * a.F + k % NB * 16, 1, 3);
      AccumulateStep(x + k, C, w + k * 16, C * 16, acc);
    }
  }
  for (; k < C; ++k) AccumulateStep(x + k, C, w + k * 16, C * 16, acc);
  StoreTile<R, NB>(a, acc, p0, b0);
}

template <int R, int NB>
struct PointwiseTile {
  HN_AVX512 static void Run(const PointwiseArgs& a, int64_t p0, int64_t b0) {
    Tile<R, NB>(a, p0, b0);
  }
};

// kTiles[nb - 1][rows - 1].
const auto kTiles = TileTable<void (*)(const PointwiseArgs&, int64_t, int64_t), PointwiseTile>();

// Positions [p0, p1) for filter blocks [b0, b0 + nb), nb <= 4.
void Item(const PointwiseArgs& a, int64_t p0, int64_t p1, int64_t b0, int nb) {
  const int rows = TileRowsFor(nb);
  for (int64_t p = p0; p < p1; p += rows) {
    const int64_t r = std::min<int64_t>(rows, p1 - p);
    kTiles[static_cast<size_t>(nb - 1)][static_cast<size_t>(r - 1)](a, p, b0);
  }
}

// Work items: about kTileRows positions (tiles of equal size) times a group of at most 4 filter
// blocks (groups of equal size: MobileNet's 144 filters, 9 blocks, run as 3 + 3 + 3, not
// 4 + 4 + 1). Where the data is the larger operand, items of one tile are consecutive, so a
// thread computes every group of a tile while its inputs are in L1; where the weights are
// (fewer positions than filters: ResNet-50's 7 px and 14 px layers, up to 8 MB of weights),
// items of one group are, so each group's weights come from memory once rather than once a
// tile. Small images (7 x 7) still split evenly between threads.
struct WorkItems {
  explicit WorkItems(const PointwiseArgs& a)
      : blocks((a.F + 15) / 16),
        groups((blocks + 3) / 4),
        tiles((a.positions + kTileRows - 1) / kTileRows),
        groups_outer(a.F > a.positions) {}
  int64_t count() const { return tiles * groups; }
  void Run(const PointwiseArgs& a, int64_t item) const {
    const int64_t t = groups_outer ? item % tiles : item / groups;
    const int64_t g = groups_outer ? item / tiles : item % groups;
    const int64_t b0 = g * blocks / groups;
    Item(a, a.positions * t / tiles, a.positions * (t + 1) / tiles, b0,
         static_cast<int>((g + 1) * blocks / groups - b0));
  }
  int64_t blocks, groups, tiles;
  bool groups_outer;
};

}  // namespace

bool PointwiseTakes(const ConvSpec& s) {
  if (s.deconv || s.G != 1 || !CpuHasAvx512()) return false;
  for (int64_t i = 0; i < s.nd; ++i) {
    if (s.kernel[i] != 1 || s.pad_l[i] != 0 || s.pad_r[i] != 0) return false;
  }
  return true;
}

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
  ParallelFor(items.count(), true, [&](int64_t item) { items.Run(a, item); });
}

void RunPointwiseOnThisThread(const PointwiseArgs& a) {
  const WorkItems items(a);
  for (int64_t item = 0; item < items.count(); ++item) items.Run(a, item);
}

}  // namespace internal
}  // namespace hybridnet
