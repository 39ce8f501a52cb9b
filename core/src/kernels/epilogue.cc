#include "kernels/epilogue.h"

#include <immintrin.h>

#include <algorithm>

#include "kernels/activation-inl.h"
#include "kernels/avx2-inl.h"
#include "kernels/avx512-inl.h"
#include "kernels/epilogue-inl.h"
#include "kernels/parallel-inl.h"
#include "kernels/vector_isa.h"

namespace hybridnet {
namespace internal {

namespace {

// RunEpilogue on positions [begin, end), each position's channels in order (contiguous: the
// channel-blocks-outer order strode by C floats and ran several times slower for wide layers).
HN_AVX512 void EpiloguePositions(const EpilogueArgs& a, int64_t begin, int64_t end) {
  for (int64_t pos = begin; pos < end; ++pos) {
    const int64_t row = pos * a.C;
    for (int64_t c = 0; c < a.C; c += 16) {
      const int64_t n = a.C - c;
      const EpilogueRegisters e = MakeEpilogue(a.epilogue, a.residual != nullptr, c, n);
      const __m512 v = LoadFirst(a.conv + row + c, n);
      const __m512 r = e.residual ? LoadFirst(a.residual + row + c, n) : v;
      StoreFirst(a.out + row + c, Apply(v, e, r), n);
    }
  }
}

// EpiloguePositions without AVX-512: the same float operations a float at a time, the loop over
// a position's channels vectorized where AVX2 runs (both copies give the same bits: no
// contraction, -ffp-contract=off).
[[gnu::always_inline]] inline void EpiloguePositionsPortable(const EpilogueArgs& a, int64_t begin,
                                                             int64_t end) {
  const Epilogue& e = a.epilogue;
  for (int64_t pos = begin; pos < end; ++pos) {
    const int64_t row = pos * a.C;
    for (int64_t c = 0; c < a.C; ++c) {
      float v = a.conv[row + c];
      if (e.bn_scale) v = v * e.bn_scale[c] + e.bn_shift[c];
      if (a.residual) v = v + a.residual[row + c];
      if (e.relu) v = ReluOf(v);
      a.out[row + c] = e.clip ? ClipOf(v, e.clip_min, e.clip_max) : v;
    }
  }
}
HN_AVX2 void EpiloguePositionsAvx2(const EpilogueArgs& a, int64_t begin, int64_t end) {
  EpiloguePositionsPortable(a, begin, end);
}
void EpiloguePositionsBaseline(const EpilogueArgs& a, int64_t begin, int64_t end) {
  EpiloguePositionsPortable(a, begin, end);
}

}  // namespace

void RunEpilogue(const EpilogueArgs& a) {
  // Blocks of about 64 KiB; elementwise, so the thread count does not change the results.
  const int64_t block = std::max<int64_t>(1, 16384 / std::max<int64_t>(a.C, 1));
  const int64_t blocks = (a.positions + block - 1) / block;
  const VectorIsa isa = ChooseVectorIsa();
  ParallelFor(blocks, true, [&](int64_t b) {
    const int64_t begin = b * block, end = std::min(a.positions, (b + 1) * block);
    switch (isa) {
      case VectorIsa::kAvx512:
        return EpiloguePositions(a, begin, end);
      case VectorIsa::kAvx2:
        return EpiloguePositionsAvx2(a, begin, end);
      case VectorIsa::kBaseline:
        return EpiloguePositionsBaseline(a, begin, end);
    }
  });
}

}  // namespace internal
}  // namespace hybridnet
