// Shared pieces of the spatial nn ops (Convolution, Deconvolution, Pooling):
//
//  * SpatialGeom: 1-D, 2-D and 3-D windows all viewed as 3-D (D, H, W); missing leading dims
//    are 1 with kernel 1, stride 1, pad 0, dilate 1, so one loop nest serves every rank.
//  * Im2Col / Col2Im over a range of output rows, feeding cblas_sgemm.
//  * ConvScratch: the per-thread im2col buffer.
//
//   SpatialGeom g = MakeGeom(kernel, stride, pad, dilate, image_dims, grid_dims);
//   float* col = ConvScratch(g.ColRows(channels) * g.grid[2]);
//   Im2Col(image, g, channels, row0, row1, col);   // col: (C*kd*kh*kw) x ((row1-row0)*grid_w)
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "hybridnet/base.h"
#include "hybridnet/op.h"

namespace hybridnet {
namespace internal {

/// Data layouts of the spatial ops (MXNet's names). Convolution accepts all but NWC.
enum class Layout { kNCW, kNCHW, kNCDHW, kNWC, kNHWC, kNDHWC };

inline const EnumNames<Layout>& PoolingLayoutNames() {
  static const EnumNames<Layout> names = {{"NCW", Layout::kNCW},   {"NCHW", Layout::kNCHW},
                                          {"NCDHW", Layout::kNCDHW}, {"NWC", Layout::kNWC},
                                          {"NHWC", Layout::kNHWC},   {"NDHWC", Layout::kNDHWC}};
  return names;
}

inline const EnumNames<Layout>& ConvLayoutNames() {
  static const EnumNames<Layout> names = {{"NCW", Layout::kNCW},
                                          {"NCHW", Layout::kNCHW},
                                          {"NCDHW", Layout::kNCDHW},
                                          {"NHWC", Layout::kNHWC},
                                          {"NDHWC", Layout::kNDHWC}};
  return names;
}

inline const char* LayoutName(Layout layout) {
  switch (layout) {
    case Layout::kNCW: return "NCW";
    case Layout::kNCHW: return "NCHW";
    case Layout::kNCDHW: return "NCDHW";
    case Layout::kNWC: return "NWC";
    case Layout::kNHWC: return "NHWC";
    case Layout::kNDHWC: return "NDHWC";
  }
  return "?";
}

/// Number of spatial dimensions of a layout.
inline size_t LayoutRank(Layout layout) { return std::string(LayoutName(layout)).size() - 2; }

inline bool IsChannelLast(Layout layout) {
  return layout == Layout::kNWC || layout == Layout::kNHWC || layout == Layout::kNDHWC;
}

/// NCW, NCHW or NCDHW for 1, 2 or 3 spatial dimensions.
inline Layout ChannelFirstLayout(size_t spatial_rank) {
  return spatial_rank == 1 ? Layout::kNCW : spatial_rank == 2 ? Layout::kNCHW : Layout::kNCDHW;
}

/// A window geometry in canonical 3-D form. "image" is the dense side (conv input, deconv
/// output, pooling input), "grid" the window positions (conv output, deconv input, pooling
/// output). Grid rows are (d, h) pairs; a row holds grid[2] positions.
struct SpatialGeom {
  int64_t image[3] = {1, 1, 1};
  int64_t grid[3] = {1, 1, 1};
  int64_t kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1};
  int64_t pad[3] = {0, 0, 0};
  int64_t dilate[3] = {1, 1, 1};

  int64_t ImageSize() const { return image[0] * image[1] * image[2]; }
  int64_t GridSize() const { return grid[0] * grid[1] * grid[2]; }
  int64_t GridRows() const { return grid[0] * grid[1]; }
  int64_t KernelSize() const { return kernel[0] * kernel[1] * kernel[2]; }
  /// Rows of the column matrix for `channels` image channels.
  int64_t ColRows(int64_t channels) const { return channels * KernelSize(); }
  /// True when the column matrix equals the image (1x1 kernel, stride 1, no pad).
  bool IsPointwise() const {
    for (int i = 0; i < 3; ++i)
      if (kernel[i] != 1 || stride[i] != 1 || pad[i] != 0 || image[i] != grid[i]) return false;
    return true;
  }
};

/// Right-aligns the n (1..3) spatial values of each list into the 3-D form.
inline SpatialGeom MakeGeom(const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
                            const std::vector<int64_t>& pad, const std::vector<int64_t>& dilate,
                            const int64_t* image_dims, const int64_t* grid_dims) {
  SpatialGeom g;
  const size_t n = kernel.size();
  const size_t off = 3 - n;
  for (size_t i = 0; i < n; ++i) {
    g.kernel[off + i] = kernel[i];
    g.stride[off + i] = stride[i];
    g.pad[off + i] = pad[i];
    g.dilate[off + i] = dilate.empty() ? 1 : dilate[i];
    g.image[off + i] = image_dims[i];
    g.grid[off + i] = grid_dims[i];
  }
  return g;
}

/// The grid positions [lo, hi) along one axis whose tap `k` lands inside the image:
/// 0 <= pos * stride - pad + k * dilate < image.
inline void ValidRange(int64_t image, int64_t grid, int64_t stride, int64_t offset, int64_t* lo,
                       int64_t* hi) {
  // pos * stride + offset >= 0  and  pos * stride + offset <= image - 1
  int64_t first = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  int64_t last_excl = image - 1 - offset < 0 ? 0 : (image - 1 - offset) / stride + 1;
  *lo = std::min(first, grid);
  *hi = std::max(*lo, std::min(last_excl, grid));
}

/// Writes the column matrix of grid rows [row0, row1) for `channels` image channels:
/// col[(c, kd, kh, kw)][(row - row0) * grid_w + w] = image tap or 0 in the padding.
inline void Im2Col(const float* im, const SpatialGeom& g, int64_t channels, int64_t row0,
                   int64_t row1, float* col) {
  const int64_t gw = g.grid[2];
  const int64_t ncols = (row1 - row0) * gw;
  const int64_t plane = g.ImageSize();
  float* dst = col;
  for (int64_t c = 0; c < channels; ++c) {
    const float* im_c = im + c * plane;
    for (int64_t a = 0; a < g.kernel[0]; ++a) {
      for (int64_t b = 0; b < g.kernel[1]; ++b) {
        for (int64_t e = 0; e < g.kernel[2]; ++e, dst += ncols) {
          const int64_t woff = e * g.dilate[2] - g.pad[2];
          int64_t lo, hi;
          ValidRange(g.image[2], gw, g.stride[2], woff, &lo, &hi);
          for (int64_t r = row0; r < row1; ++r) {
            float* drow = dst + (r - row0) * gw;
            const int64_t od = r / g.grid[1], oh = r % g.grid[1];
            const int64_t id = od * g.stride[0] - g.pad[0] + a * g.dilate[0];
            const int64_t ih = oh * g.stride[1] - g.pad[1] + b * g.dilate[1];
            if (id < 0 || id >= g.image[0] || ih < 0 || ih >= g.image[1]) {
              std::memset(drow, 0, sizeof(float) * static_cast<size_t>(gw));
              continue;
            }
            const float* srow = im_c + (id * g.image[1] + ih) * g.image[2];
            std::fill(drow, drow + lo, 0.f);
            if (g.stride[2] == 1) {
              std::memcpy(drow + lo, srow + lo + woff,
                          sizeof(float) * static_cast<size_t>(hi - lo));
            } else {
              const int64_t s = g.stride[2];
              for (int64_t w = lo; w < hi; ++w) drow[w] = srow[w * s + woff];
            }
            std::fill(drow + hi, drow + gw, 0.f);
          }
        }
      }
    }
  }
}

/// The adjoint of Im2Col: adds every column entry of grid rows [row0, row1) into its image
/// tap (entries that fall into the padding are dropped). The image must be initialised.
inline void Col2Im(const float* col, const SpatialGeom& g, int64_t channels, int64_t row0,
                   int64_t row1, float* im) {
  const int64_t gw = g.grid[2];
  const int64_t ncols = (row1 - row0) * gw;
  const int64_t plane = g.ImageSize();
  const float* src = col;
  for (int64_t c = 0; c < channels; ++c) {
    float* im_c = im + c * plane;
    for (int64_t a = 0; a < g.kernel[0]; ++a) {
      for (int64_t b = 0; b < g.kernel[1]; ++b) {
        for (int64_t e = 0; e < g.kernel[2]; ++e, src += ncols) {
          const int64_t woff = e * g.dilate[2] - g.pad[2];
          int64_t lo, hi;
          ValidRange(g.image[2], gw, g.stride[2], woff, &lo, &hi);
          for (int64_t r = row0; r < row1; ++r) {
            const float* srow = src + (r - row0) * gw;
            const int64_t od = r / g.grid[1], oh = r % g.grid[1];
            const int64_t id = od * g.stride[0] - g.pad[0] + a * g.dilate[0];
            const int64_t ih = oh * g.stride[1] - g.pad[1] + b * g.dilate[1];
            if (id < 0 || id >= g.image[0] || ih < 0 || ih >= g.image[1]) continue;
            float* drow = im_c + (id * g.image[1] + ih) * g.image[2];
            const int64_t s = g.stride[2];
            if (s == 1) {
              float* d = drow + woff;
#pragma omp simd
              for (int64_t w = lo; w < hi; ++w) d[w] += srow[w];
            } else {
              for (int64_t w = lo; w < hi; ++w) drow[w * s + woff] += srow[w];
            }
          }
        }
      }
    }
  }
}

/// Scratch memory for one column matrix (at least `count` floats), valid until the next call
/// on this thread.
///
/// Why a thread_local vector: kernels must not allocate tensors, but im2col needs a temporary
/// matrix. MXNet takes it from the kTempSpace resource; our FCompute has no workspace
/// argument, so each thread keeps one buffer that only grows. Once the largest layer has run,
/// no call allocates, and predictors running on different threads never share it. Callers
/// bound its size by processing the grid in row chunks (kConvScratchBudget).
inline float* ConvScratch(size_t count) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < count) buffer.resize(count);
  return buffer.data();
}

/// Target size of one column chunk, in floats, and the fewest columns a chunk may have.
/// Small chunks keep im2col's output in L2 while sgemm reads it, but every sgemm call packs
/// the whole weight matrix again, so a chunk never drops below kConvMinChunkCols columns
/// (layers with many channels and small images run as one sgemm).
constexpr int64_t kConvScratchBudget = int64_t{1} << 17;
constexpr int64_t kConvMinChunkCols = 1024;

/// Grid rows per chunk for a column matrix of col_rows rows and rows of grid_w columns.
inline int64_t RowsPerChunk(int64_t col_rows, int64_t grid_w, int64_t grid_rows) {
  const int64_t cols = std::max(kConvScratchBudget / std::max<int64_t>(1, col_rows),
                                kConvMinChunkCols);
  const int64_t rows = (cols + grid_w - 1) / std::max<int64_t>(1, grid_w);
  return std::max<int64_t>(1, std::min(rows, grid_rows));
}

/// "(3, 3)" text of a tuple, for messages.
inline std::string TupleText(const std::vector<int64_t>& v) { return Shape(v).ToString(); }

}  // namespace internal
}  // namespace hybridnet
