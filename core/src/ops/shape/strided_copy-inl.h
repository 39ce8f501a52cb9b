// Element moves described as strided views, shared by the data-movement ops (tile, repeat,
// reverse, SwapAxis, broadcast_axis, depth_to_space, Crop, stack, _slice_assign, ...): each op
// describes its output as an N-D walk over the source with one (possibly 0 or negative) stride
// per dimension, and one loop moves the bytes for every dtype.
//
//   StridedWalk w;
//   w.Add(rows, /*src_stride=*/cols, /*dst_stride=*/1);    // a transpose of a (rows, cols) matrix
//   w.Add(cols, 1, rows);
//   StridedCopy(w, src, dst, DTypeSize(dtype));
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "hybridnet/base.h"
#include "hybridnet/dtype.h"
#include "hybridnet/shape.h"

namespace hybridnet {
namespace internal {

/// An N-D index space with a source and a destination stride (in elements) per dimension and a
/// starting offset on each side. Dimensions are listed outermost first.
struct StridedWalk {
  std::vector<int64_t> extent, src_stride, dst_stride;
  int64_t src_offset = 0, dst_offset = 0;

  void Add(int64_t n, int64_t src, int64_t dst) {
    extent.push_back(n);
    src_stride.push_back(src);
    dst_stride.push_back(dst);
  }
  int64_t Size() const {
    int64_t s = 1;
    for (int64_t e : extent) s *= e;
    return s;
  }
};

/// Row-major element strides of a shape.
inline std::vector<int64_t> ContiguousStrides(const Shape& s) {
  std::vector<int64_t> st(s.ndim(), 1);
  for (size_t k = s.ndim(); k-- > 1;) st[k - 1] = st[k] * s[k];
  return st;
}

/// Drops extent-1 dimensions and merges neighbours that walk both sides contiguously, so the
/// innermost loop is as long as possible.
inline StridedWalk Simplify(const StridedWalk& w) {
  StridedWalk out;
  out.src_offset = w.src_offset;
  out.dst_offset = w.dst_offset;
  for (size_t k = 0; k < w.extent.size(); ++k) {
    if (w.extent[k] == 1) continue;
    if (!out.extent.empty()) {
      const size_t last = out.extent.size() - 1;
      if (out.src_stride[last] == w.src_stride[k] * w.extent[k] &&
          out.dst_stride[last] == w.dst_stride[k] * w.extent[k]) {
        out.extent[last] *= w.extent[k];
        out.src_stride[last] = w.src_stride[k];
        out.dst_stride[last] = w.dst_stride[k];
        continue;
      }
    }
    out.Add(w.extent[k], w.src_stride[k], w.dst_stride[k]);
  }
  if (out.extent.empty()) out.Add(1, 1, 1);
  return out;
}

template <typename T>
void StridedCopyTyped(const StridedWalk& w, const T* src, T* dst) {
  const size_t nd = w.extent.size();
  const size_t last = nd - 1;
  const int64_t inner = w.extent[last];
  const int64_t ss = w.src_stride[last], ds = w.dst_stride[last];
  int64_t outer = 1;
  for (size_t k = 0; k < last; ++k) outer *= w.extent[k];
  std::vector<int64_t> idx(nd, 0);
  int64_t so = w.src_offset, dof = w.dst_offset;
  for (int64_t o = 0; o < outer; ++o) {
    const T* s = src + so;
    T* d = dst + dof;
    if (ss == 1 && ds == 1) {
      std::memcpy(d, s, static_cast<size_t>(inner) * sizeof(T));
    } else {
      for (int64_t i = 0; i < inner; ++i) d[i * ds] = s[i * ss];
    }
    for (size_t k = last; k-- > 0;) {
      so += w.src_stride[k];
      dof += w.dst_stride[k];
      if (++idx[k] < w.extent[k]) break;
      so -= w.src_stride[k] * w.extent[k];
      dof -= w.dst_stride[k] * w.extent[k];
      idx[k] = 0;
    }
  }
}

/// Copies every element of the walk: dst[dst_offset + sum(i_k * dst_stride_k)] =
/// src[src_offset + sum(i_k * src_stride_k)], for elements of `elem_size` bytes.
inline void StridedCopy(const StridedWalk& walk, const void* src, void* dst, size_t elem_size) {
  if (walk.Size() == 0) return;
  const StridedWalk w = Simplify(walk);
  switch (elem_size) {
    case 1:
      StridedCopyTyped(w, static_cast<const uint8_t*>(src), static_cast<uint8_t*>(dst));
      return;
    case 2:
      StridedCopyTyped(w, static_cast<const uint16_t*>(src), static_cast<uint16_t*>(dst));
      return;
    case 4:
      StridedCopyTyped(w, static_cast<const uint32_t*>(src), static_cast<uint32_t*>(dst));
      return;
    case 8:
      StridedCopyTyped(w, static_cast<const uint64_t*>(src), static_cast<uint64_t*>(dst));
      return;
    default:
      HN_THROW(kInternal) << "StridedCopy: no element type of " << elem_size << " bytes";
  }
}

/// Multiplies shape dimensions with an overflow check (hostile attributes such as tile reps of
/// 2^40); 0 stays the legacy "unknown".
inline bool CheckedMul(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}

}  // namespace internal
}  // namespace hybridnet
