// Sliding windows of the spatial kernels (convolution, pooling, im2col):
//
//  * SpatialGeom: 1-D, 2-D and 3-D windows all viewed as 3-D (D, H, W); missing leading dims
//    are 1 with kernel 1, stride 1, pad 0, dilate 1, so one loop nest serves every rank;
//  * Im2Col / Col2Im over a range of output rows (the im2col and col2im ops).
//
//   SpatialGeom g = MakeGeom(kernel, stride, pad, dilate, image_dims, grid_dims);
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace hybridnet {
namespace internal {

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

}  // namespace internal
}  // namespace hybridnet
