// The epilogue (epilogue.h) on 16 channels in an AVX-512 register, and the register tiles of the
// pointwise and few-channel kernels, with the separate ops' float operations: our kernels apply
// it while their outputs are in registers, RunEpilogue as a pass after oneDNN's kernels.
#pragma once

#include <immintrin.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "kernels/avx512-inl.h"
#include "kernels/epilogue.h"

namespace hybridnet {
namespace internal {

// Epilogue `d`'s constants in registers for one block of 16 channels from `c` (`lanes` of them
// present), with or without a residual.
struct EpilogueRegisters {
  bool bias, bn, residual, relu, clip;
  __m512 b, scale, shift, lo, hi;
};

HN_AVX512 inline EpilogueRegisters MakeEpilogue(const Epilogue& d, bool residual, int64_t c,
                                                int64_t n) {
  EpilogueRegisters e;
  e.bias = d.bias != nullptr;
  e.bn = d.bn_scale != nullptr;
  e.residual = residual;
  e.relu = d.relu;
  e.clip = d.clip;
  e.b = e.bias ? LoadFirst(d.bias + c, n) : _mm512_setzero_ps();
  e.scale = e.bn ? LoadFirst(d.bn_scale + c, n) : _mm512_setzero_ps();
  e.shift = e.bn ? LoadFirst(d.bn_shift + c, n) : _mm512_setzero_ps();
  e.lo = _mm512_set1_ps(d.clip_min);
  e.hi = _mm512_set1_ps(d.clip_max);
  return e;
}

// ClipOf on 16 floats: x > hi ? hi : (x < lo ? lo : x), NaN passing through.
HN_AVX512 inline __m512 ClipVector(__m512 v, __m512 lo, __m512 hi) {
  const __m512 r = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, lo, _CMP_LT_OQ), v, lo);
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, hi, _CMP_GT_OQ), r, hi);
}

// The separate ops' float operations, in their order: bias, BatchNorm (x * scale + shift),
// residual add, then relu (x > 0 ? x : 0) or clip (x > hi ? hi : (x < lo ? lo : x)).
HN_AVX512 inline __m512 Apply(__m512 v, const EpilogueRegisters& e, __m512 residual) {
  if (e.bias) v = _mm512_add_ps(v, e.b);
  if (e.bn) v = _mm512_add_ps(_mm512_mul_ps(v, e.scale), e.shift);
  if (e.residual) v = _mm512_add_ps(v, residual);
  if (e.relu) {
    v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_GT_OQ),
                             _mm512_setzero_ps(), v);
  }
  if (e.clip) v = ClipVector(v, e.lo, e.hi);
  return v;
}

HN_AVX512 inline void Finish(__m512 v, const EpilogueRegisters& e, const float* residual,
                             float* out) {
  _mm512_storeu_ps(out, Apply(v, e, e.residual ? _mm512_loadu_ps(residual) : v));
}

// An R x NB register tile's accumulators, zeroed.
template <int R, int NB>
HN_AVX512 inline void ZeroTile(__m512 (&acc)[R][NB]) {
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) acc[r][j] = _mm512_setzero_ps();
  }
}

// One step of an R x NB register tile's sums over its rows [kFirst, kLast) (all by default):
// acc[r][j] += x[(r - kFirst) * x_step] * w[j * w_step, lanes], one fused multiply-add each
// (w: the step's weights of the tile's first filter block).
template <int R, int NB, int kFirst = 0, int kLast = R>
HN_AVX512 inline void AccumulateStep(const float* x, int64_t x_step, const float* w, int64_t w_step,
                                     __m512 (&acc)[R][NB]) {
  __m512 wv[NB];
#pragma GCC unroll 4
  for (int j = 0; j < NB; ++j) wv[j] = _mm512_loadu_ps(w + j * w_step);
#pragma GCC unroll 12
  for (int r = kFirst; r < kLast; ++r) {
    const __m512 xv = _mm512_set1_ps(x[(r - kFirst) * x_step]);
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) acc[r][j] = _mm512_fmadd_ps(xv, wv[j], acc[r][j]);
  }
}

// The epilogue of an R x NB register tile of a kernel whose output is (positions, a.F): positions
// [p0, p0 + R), filters from 16 * b0 (the last block masked to a.F), into a.out, with a.residual
// and the rest of the epilogue's operands taken from `a` (PointwiseArgs, FewChannelsArgs). Apply's
// steps in Apply's order, each step tested once per filter block rather than once per register:
// with the tests inside, the epilogue took 8-12 % of a tile with 96 input channels.
template <int R, int NB, typename KernelArgs>
HN_AVX512 inline void StoreTile(const KernelArgs& a, const __m512 (&acc)[R][NB], int64_t p0,
                                int64_t b0) {
  const int64_t F = a.F;
  float* const out = a.out + p0 * F;
  const float* const residual = a.residual;
  const Epilogue& d = a.epilogue;
  const __m512 zero = _mm512_setzero_ps();
#pragma GCC unroll 4
  for (int j = 0; j < NB; ++j) {
    const int64_t c = (b0 + j) * 16;
    const int64_t n = F - c;
    __m512 v[R];
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) v[r] = acc[r][j];
    if (d.bias != nullptr) {
      const __m512 b = LoadFirst(d.bias + c, n);
#pragma GCC unroll 12
      for (int r = 0; r < R; ++r) v[r] = _mm512_add_ps(v[r], b);
    }
    if (d.bn_scale != nullptr) {
      const __m512 scale = LoadFirst(d.bn_scale + c, n);
      const __m512 shift = LoadFirst(d.bn_shift + c, n);
#pragma GCC unroll 12
      for (int r = 0; r < R; ++r) v[r] = _mm512_add_ps(_mm512_mul_ps(v[r], scale), shift);
    }
    if (residual != nullptr) {
      const float* res = residual + p0 * F + c;
#pragma GCC unroll 12
      for (int r = 0; r < R; ++r) {
        v[r] = _mm512_add_ps(v[r], LoadFirst(res + r * F, n));
      }
    }
    if (d.relu) {
#pragma GCC unroll 12
      for (int r = 0; r < R; ++r) {
        v[r] = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v[r], zero, _CMP_GT_OQ), zero, v[r]);
      }
    }
    if (d.clip) {
      const __m512 lo = _mm512_set1_ps(d.clip_min), hi = _mm512_set1_ps(d.clip_max);
#pragma GCC unroll 12
      for (int r = 0; r < R; ++r) v[r] = ClipVector(v[r], lo, hi);
    }
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) StoreFirst(out + r * F + c, v[r], n);
  }
}

// Register tiles of our pointwise and few-channel kernels: `rows` output positions by `nb`
// blocks of 16 filters, as many accumulators as fit in 32 registers beside the nb weight
// vectors and a broadcast input.
constexpr int TileRowsFor(int nb) { return nb == 4 ? 6 : nb == 3 ? 8 : 12; }
constexpr int kMaxTileRows = 12;

// A kernel's tile functions by [nb - 1][rows - 1]: &Tile<rows, nb>::Run, where the class
// template Tile computes one tile.
template <typename Fn, template <int, int> class Tile, int NB, size_t... Rows>
constexpr std::array<Fn, kMaxTileRows> TileRow(std::index_sequence<Rows...>) {
  return {{&Tile<static_cast<int>(Rows) + 1, NB>::Run...}};
}

template <typename Fn, template <int, int> class Tile>
constexpr std::array<std::array<Fn, kMaxTileRows>, 4> TileTable() {
  return {TileRow<Fn, Tile, 1>(std::make_index_sequence<TileRowsFor(1)>()),
          TileRow<Fn, Tile, 2>(std::make_index_sequence<TileRowsFor(2)>()),
          TileRow<Fn, Tile, 3>(std::make_index_sequence<TileRowsFor(3)>()),
          TileRow<Fn, Tile, 4>(std::make_index_sequence<TileRowsFor(4)>())};
}

}  // namespace internal
}  // namespace hybridnet
