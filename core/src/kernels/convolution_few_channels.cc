#include "kernels/convolution_few_channels.h"

#include <immintrin.h>

#include <algorithm>
#include <array>

#include "kernels/epilogue-inl.h"
#include "kernels/parallel-inl.h"
#include "kernels/threads.h"
#include "kernels/window-inl.h"

namespace hybridnet {
namespace internal {

namespace {

// Channel-first data (N, C, H, W): R output positions from (row, ow0), filter blocks
// [b0, b0 + NB): each output the sum over the taps in the image, in (kh, kw, c) order, one fused
// multiply-add per tap. Without kEdge every window has all its columns in the image; with it
// (one position) the columns outside are skipped.
template <int R, int NB, bool kEdge = false>
HN_AVX512 void Tile(const FewChannelsArgs& a, int64_t row, int64_t ow0, int64_t b0) {
  static_assert(!kEdge || R == 1, "edge positions go one at a time");
  const int64_t n = row / a.OH, oh = row % a.OH, C = a.C, taps = a.KH * a.KW * C;
  const int64_t plane = a.H * a.W;
  const float* x = a.data + n * plane * C;
  const float* w = a.weight + b0 * taps * 16;
  const int64_t ih0 = oh * a.stride_h - a.pad_top, iw0 = ow0 * a.stride_w - a.pad_left;
  __m512 acc[R][NB];
  ZeroTile(acc);
  for (int64_t kh = 0; kh < a.KH; ++kh) {
    const int64_t ih = ih0 + kh;
    if (ih < 0 || ih >= a.H) continue;
    for (int64_t kw = 0; kw < a.KW; ++kw) {
      if (kEdge && (iw0 + kw < 0 || iw0 + kw >= a.W)) continue;
      const float* xp = x + ih * a.W + iw0 + kw;
      for (int64_t c = 0; c < C; ++c) {
        const int64_t tap = (kh * a.KW + kw) * C + c;
        AccumulateStep(xp + c * plane, a.stride_w, w + tap * 16, taps * 16, acc);
      }
    }
  }
  StoreTile<R, NB>(a, acc, (row - a.first_row) * a.OW + ow0, b0);
}

// Zeros for the taps of EdgeTile outside the image: one position's channels.
alignas(64) const float kZeros[kFewChannelsMax] = {};

// Tile for channel-last data where window columns outside the image are more than
// ChannelLastTile skips: such a tap reads zeros, adding 0 * w to a sum that starts at +0 and so
// is never -0, which leaves it as skipping the tap would (finite weights). Every position of
// the tile keeps its own accumulators, so small images do not fall back to one position at a
// time.
template <int R, int NB>
HN_AVX512 void EdgeTile(const FewChannelsArgs& a, int64_t row, int64_t ow0, int64_t b0) {
  const int64_t n = row / a.OH, oh = row % a.OH, C = a.C, taps = a.KH * a.KW * C;
  const float* x = a.data + n * a.H * a.W * C;
  const float* w = a.weight + b0 * taps * 16;
  const int64_t ih0 = oh * a.stride_h - a.pad_top, iw0 = ow0 * a.stride_w - a.pad_left;
  __m512 acc[R][NB];
  ZeroTile(acc);
  for (int64_t kh = 0; kh < a.KH; ++kh) {
    const int64_t ih = ih0 + kh;
    if (ih < 0 || ih >= a.H) continue;
    for (int64_t kw = 0; kw < a.KW; ++kw) {
      const float* xr[R];
#pragma GCC unroll 12
      for (int r = 0; r < R; ++r) {
        const int64_t iw = iw0 + r * a.stride_w + kw;
        xr[r] = iw >= 0 && iw < a.W ? x + (ih * a.W + iw) * C : kZeros;
      }
      const float* wk = w + (kh * a.KW + kw) * C * 16;
      for (int64_t c = 0; c < C; ++c) {
        __m512 wv[NB];
#pragma GCC unroll 4
        for (int j = 0; j < NB; ++j) wv[j] = _mm512_loadu_ps(wk + (j * taps + c) * 16);
#pragma GCC unroll 12
        for (int r = 0; r < R; ++r) {
          const __m512 xv = _mm512_set1_ps(xr[r][c]);
#pragma GCC unroll 4
          for (int j = 0; j < NB; ++j) acc[r][j] = _mm512_fmadd_ps(xv, wv[j], acc[r][j]);
        }
      }
    }
  }
  StoreTile<R, NB>(a, acc, (row - a.first_row) * a.OW + ow0, b0);
}

// Which window column of a channel-last tile lies outside the image: none, the first one of
// its first position (kw 0), or the last one of its last position (kw KW - 1).
enum Outside { kNoColumn, kFirstColumn, kLastColumn };

// The taps of one window column, its C channels in order, for rows [kFirst, kLast) of an
// R x NB tile on channel-last data; `x` is row kFirst's column.
template <int R, int NB, int kFirst, int kLast>
HN_AVX512 inline void AccumulateColumn(const float* x, int64_t C, int64_t step, const float* w,
                                       int64_t w_step, __m512 (&acc)[R][NB]) {
  for (int64_t c = 0; c < C; ++c) {
    AccumulateStep<R, NB, kFirst, kLast>(x + c, step, w + c * 16, w_step, acc);
  }
}

// Tile's sums on channel-last data (N, H, W, C), the window columns outside the image
// (`kOutside`) skipped. `kStep` is the distance in floats between consecutive positions'
// windows (stride_w * C) where known at compile time, else 0: the broadcasts of a step then
// address one register plus constants, where a distance known at run time took a register per
// position, more than there are (16-channel rows without padding: 0.87-0.91 of the
// multiply-add peak, 0.95 with it). Tiles with other columns outside are EdgeTile's.
template <int R, int NB, int kStep, Outside kOutside>
HN_AVX512 void ChannelLastTile(const FewChannelsArgs& a, int64_t row, int64_t ow0, int64_t b0) {
  const int64_t n = row / a.OH, oh = row % a.OH, C = a.C, taps = a.KH * a.KW * C;
  const int64_t step = kStep != 0 ? kStep : a.stride_w * C;
  const int64_t ih0 = oh * a.stride_h - a.pad_top, iw0 = ow0 * a.stride_w - a.pad_left;
  const float* const w = a.weight + b0 * taps * 16;
  __m512 acc[R][NB];
  ZeroTile(acc);
  for (int64_t kh = 0; kh < a.KH; ++kh) {
    const int64_t ih = ih0 + kh;
    if (ih < 0 || ih >= a.H) continue;
    const float* const image_row = a.data + (n * a.H + ih) * a.W * C;
    const float* const wk = w + kh * a.KW * C * 16;
    for (int64_t kw = 0; kw < a.KW; ++kw) {
      const float* const wt = wk + kw * C * 16;
      if (kOutside == kFirstColumn && kw == 0) {
        // Position 0's column is outside: positions 1 on.
        const float* const x1 = image_row + (iw0 + a.stride_w) * C;
        AccumulateColumn<R, NB, 1, R>(x1, C, step, wt, taps * 16, acc);
        continue;
      }
      const float* const x0 = image_row + (iw0 + kw) * C;
      if (kOutside == kLastColumn && kw == a.KW - 1) {
        AccumulateColumn<R, NB, 0, R - 1>(x0, C, step, wt, taps * 16, acc);
      } else {
        AccumulateColumn<R, NB, 0, R>(x0, C, step, wt, taps * 16, acc);
      }
    }
  }
  StoreTile<R, NB>(a, acc, (row - a.first_row) * a.OW + ow0, b0);
}

using FewChannelsFn = void (*)(const FewChannelsArgs&, int64_t, int64_t, int64_t);

template <int R, int NB>
struct FewChannelsTile {
  HN_AVX512 static void Run(const FewChannelsArgs& a, int64_t row, int64_t ow0, int64_t b0) {
    Tile<R, NB>(a, row, ow0, b0);
  }
};

template <int R, int NB>
struct FewChannelsEdgeTile {
  HN_AVX512 static void Run(const FewChannelsArgs& a, int64_t row, int64_t ow0, int64_t b0) {
    EdgeTile<R, NB>(a, row, ow0, b0);
  }
};

template <int kStep, Outside kOutside>
struct ChannelLast {
  template <int R, int NB>
  struct Tile {
    HN_AVX512 static void Run(const FewChannelsArgs& a, int64_t row, int64_t ow0, int64_t b0) {
      ChannelLastTile<R, NB, kStep, kOutside>(a, row, ow0, b0);
    }
  };
};

using TileFns = std::array<std::array<FewChannelsFn, kMaxTileRows>, 4>;

// Tile functions by [nb - 1][positions - 1]: kTiles and kEdges[nb - 1] (one position) for
// channel-first data; for channel-last data ChannelLastTile's with 16 floats between windows
// (16 channels at stride 1) and 32 (32 channels, or 16 at stride 2) by Outside, with other
// distances for windows in the image, and EdgeTile for the other tiles.
const TileFns kTiles = TileTable<FewChannelsFn, FewChannelsTile>();
const std::array<FewChannelsFn, 4> kEdges = {&Tile<1, 1, true>, &Tile<1, 2, true>,
                                             &Tile<1, 3, true>, &Tile<1, 4, true>};
const TileFns kChannelLast16[3] = {TileTable<FewChannelsFn, ChannelLast<16, kNoColumn>::Tile>(),
                                   TileTable<FewChannelsFn, ChannelLast<16, kFirstColumn>::Tile>(),
                                   TileTable<FewChannelsFn, ChannelLast<16, kLastColumn>::Tile>()};
const TileFns kChannelLast32[3] = {TileTable<FewChannelsFn, ChannelLast<32, kNoColumn>::Tile>(),
                                   TileTable<FewChannelsFn, ChannelLast<32, kFirstColumn>::Tile>(),
                                   TileTable<FewChannelsFn, ChannelLast<32, kLastColumn>::Tile>()};
const TileFns kChannelLastAny = TileTable<FewChannelsFn, ChannelLast<0, kNoColumn>::Tile>();
const TileFns kEdgeTiles = TileTable<FewChannelsFn, FewChannelsEdgeTile>();

// The functions for channel-last tiles whose windows span columns [iw0, end): a window column
// outside the image on one side only (padding 1) costs the tile nothing, skipped with
// distances known at compile time: CIFAR ResNet-20's 16-channel layers took 0.94-0.95 of their
// time with it (2 of their 3 tiles a row hold an edge position), its 32-channel ones 0.97.
const TileFns& ChannelLastTiles(const FewChannelsArgs& a, int64_t iw0, int64_t end) {
  const int64_t step = a.stride_w * a.C;
  const TileFns* fixed = step == 16 ? kChannelLast16 : step == 32 ? kChannelLast32 : nullptr;
  const bool left_in = iw0 >= 0, right_in = end <= a.W;
  if (left_in && right_in) return fixed != nullptr ? fixed[kNoColumn] : kChannelLastAny;
  if (fixed == nullptr || end - iw0 == a.KW) return kEdgeTiles;  // one position: EdgeTile
  if (iw0 == -1 && right_in) return fixed[kFirstColumn];
  if (left_in && end == a.W + 1) return fixed[kLastColumn];
  return kEdgeTiles;
}

// Output row `row` (over the samples) for filter blocks [b0, b0 + nb), nb <= 4.
void RowItem(const FewChannelsArgs& a, int64_t row, int64_t b0, int nb) {
  const size_t k = static_cast<size_t>(nb - 1);
  const int rows = TileRowsFor(nb);
  if (!a.data_channel_first) {
    // Tiles of equal size over the row.
    const int64_t tiles = (a.OW + rows - 1) / rows;
    for (int64_t t = 0; t < tiles; ++t) {
      const int64_t ow = a.OW * t / tiles, r = a.OW * (t + 1) / tiles - ow;
      const int64_t iw0 = ow * a.stride_w - a.pad_left;
      const TileFns& fns = ChannelLastTiles(a, iw0, iw0 + (r - 1) * a.stride_w + a.KW);
      fns[k][static_cast<size_t>(r - 1)](a, row, ow, b0);
    }
    return;
  }
  // Positions whose windows have every column in the image: [first, last).
  const int64_t first = std::min(a.OW, (a.pad_left + a.stride_w - 1) / a.stride_w);
  const int64_t last =
      a.W + a.pad_left - a.KW < 0
          ? first
          : std::max(first, std::min(a.OW, (a.W + a.pad_left - a.KW) / a.stride_w + 1));
  for (int64_t ow = 0; ow < first; ++ow) kEdges[k](a, row, ow, b0);
  for (int64_t ow = first; ow < last; ow += rows) {
    const int64_t r = std::min<int64_t>(rows, last - ow);
    kTiles[k][static_cast<size_t>(r - 1)](a, row, ow, b0);
  }
  for (int64_t ow = last; ow < a.OW; ++ow) kEdges[k](a, row, ow, b0);
}

// Copies one output row, OW positions of F channels, into channel-first planes: channel f's
// values go to dst + f * plane. Blocks of 16 positions x 16 channels are transposed in
// registers while the row is in L1 (laying ResNet's stem output out afterwards took 760 us, the
// image's 3.2 MB no longer in cache; gathering each channel's positions, 550 us).
HN_AVX512 void RowToPlanes(const float* row, int64_t OW, int64_t F, float* dst, int64_t plane) {
  for (int64_t ow = 0; ow < OW; ow += 16) {
    const int64_t positions = std::min<int64_t>(16, OW - ow);
    for (int64_t f0 = 0; f0 < F; f0 += 16) {
      const int64_t channels = std::min<int64_t>(16, F - f0);
      __m512 r[16], a[16];
      for (int i = 0; i < 16; ++i) {
        r[i] = i < positions ? LoadFirst(row + (ow + i) * F + f0, channels) : _mm512_setzero_ps();
      }
      // Pairs of positions interleaved by float, then by pairs of floats: r[4k + e] then holds,
      // in each 128-bit lane L, channel 4L + e of positions 4k .. 4k + 3.
      for (int k = 0; k < 8; ++k) {
        a[2 * k] = _mm512_unpacklo_ps(r[2 * k], r[2 * k + 1]);
        a[2 * k + 1] = _mm512_unpackhi_ps(r[2 * k], r[2 * k + 1]);
      }
      for (int k = 0; k < 4; ++k) {
        const __m512d lo = _mm512_castps_pd(a[4 * k]), hi = _mm512_castps_pd(a[4 * k + 1]);
        const __m512d lo2 = _mm512_castps_pd(a[4 * k + 2]), hi2 = _mm512_castps_pd(a[4 * k + 3]);
        r[4 * k] = _mm512_castpd_ps(_mm512_unpacklo_pd(lo, lo2));
        r[4 * k + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(lo, lo2));
        r[4 * k + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(hi, hi2));
        r[4 * k + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(hi, hi2));
      }
      // Lanes L of r[e], r[4 + e], r[8 + e], r[12 + e] make channel 4L + e's 16 positions.
      for (int e = 0; e < 4; ++e) {
        const __m512 c_lo = _mm512_shuffle_f32x4(r[e], r[4 + e], 0x44);
        const __m512 c_hi = _mm512_shuffle_f32x4(r[e], r[4 + e], 0xEE);
        const __m512 d_lo = _mm512_shuffle_f32x4(r[8 + e], r[12 + e], 0x44);
        const __m512 d_hi = _mm512_shuffle_f32x4(r[8 + e], r[12 + e], 0xEE);
        a[e] = _mm512_shuffle_f32x4(c_lo, d_lo, 0x88);
        a[4 + e] = _mm512_shuffle_f32x4(c_lo, d_lo, 0xDD);
        a[8 + e] = _mm512_shuffle_f32x4(c_hi, d_hi, 0x88);
        a[12 + e] = _mm512_shuffle_f32x4(c_hi, d_hi, 0xDD);
      }
      for (int64_t c = 0; c < channels; ++c) {
        StoreFirst(dst + (f0 + c) * plane + ow, a[c], positions);
      }
    }
  }
}

}  // namespace

bool FewChannelsTakes(const ConvSpec& s) {
  const int64_t most =
      s.channel_last && s.data_channel_first ? kFewChannelsMaxChannelFirst : kFewChannelsMax;
  return !s.deconv && s.nd == 2 && s.G == 1 && s.C <= most && s.dilate[0] == 1 &&
         s.dilate[1] == 1 && CpuHasAvx512();
}

int64_t FewChannelsWeightFloats(int64_t F, int64_t C, int64_t KH, int64_t KW) {
  return (F + 15) / 16 * 16 * C * KH * KW;
}

void PackFewChannelsWeights(const float* W, int64_t F, int64_t C, int64_t KH, int64_t KW,
                            float* packed) {
  const int64_t blocks = (F + 15) / 16, taps = KH * KW * C;
  for (int64_t b = 0; b < blocks; ++b) {
    for (int64_t kh = 0; kh < KH; ++kh) {
      for (int64_t kw = 0; kw < KW; ++kw) {
        for (int64_t c = 0; c < C; ++c) {
          const int64_t tap = (kh * KW + kw) * C + c;
          for (int64_t lane = 0; lane < 16; ++lane) {
            const int64_t f = b * 16 + lane;
            packed[(b * taps + tap) * 16 + lane] =
                f < F ? W[((f * C + c) * KH + kh) * KW + kw] : 0.f;
          }
        }
      }
    }
  }
}

void RunFewChannels(const FewChannelsArgs& a) {
  if (a.out_channel_first) {
    // Each row is computed into this thread's part of row_scratch, then laid out into the
    // planes.
    const int64_t plane = a.OH * a.OW;
    ParallelFor(a.N * a.OH, true, [&](int64_t row) {
      FewChannelsArgs row_args = a;
      row_args.out = a.row_scratch + ThreadIndex() * a.OW * a.F;
      row_args.first_row = row;
      RunFewChannelsRow(row_args, row);
      const int64_t n = row / a.OH, oh = row % a.OH;
      RowToPlanes(row_args.out, a.OW, a.F, a.out + n * a.F * plane + oh * a.OW, plane);
    });
    return;
  }
  // Work items: an output row times a group of at most 4 filter blocks (groups of equal size).
  const int64_t blocks = (a.F + 15) / 16, groups = (blocks + 3) / 4, rows = a.N * a.OH;
  ParallelFor(rows * groups, true, [&](int64_t item) {
    const int64_t row = item / groups, g = item % groups;
    const int64_t b0 = g * blocks / groups;
    RowItem(a, row, b0, static_cast<int>((g + 1) * blocks / groups - b0));
  });
}

void RunFewChannelsRow(const FewChannelsArgs& a, int64_t row) {
  const int64_t blocks = (a.F + 15) / 16, groups = (blocks + 3) / 4;
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t b0 = g * blocks / groups;
    RowItem(a, row, b0, static_cast<int>((g + 1) * blocks / groups - b0));
  }
}

}  // namespace internal
}  // namespace hybridnet
