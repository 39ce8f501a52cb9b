// im2col and col2im (MXNet src/operator/nn/im2col.{h,cc}): an (N, C, spatial...) image to its
// column matrix (N, C * prod(kernel), L) of sliding blocks (L block positions, convolution's
// output grid), and the adjoint that sums the blocks back into an image of output_size.
// Both run on the convolution's window helpers (kernels/window-inl.h), in float32.
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "kernels/window-inl.h"
#include "ops/register_ops.h"
#include "ops/shape/shape_util-inl.h"

namespace hybridnet {

namespace {

using internal::AssignShape;

// The window fields of both ops; col2im adds output_size.
struct WindowParam {
  std::vector<int64_t> kernel, stride, dilate, pad;

  template <typename P>
  static void DeclareWindow(ParamDeclarer<P>* d) {
    d->Field("kernel", static_cast<std::vector<int64_t> P::*>(&P::kernel))
        .Required()
        .Describe("Sliding block size: (w,), (h, w) or (d, h, w).");
    d->Field("stride", static_cast<std::vector<int64_t> P::*>(&P::stride))
        .Default(std::vector<int64_t>{})
        .Describe("Step between blocks per spatial axis (default 1).");
    d->Field("dilate", static_cast<std::vector<int64_t> P::*>(&P::dilate))
        .Default(std::vector<int64_t>{})
        .Describe("Spacing between the taps of a block per spatial axis (default 1).");
    d->Field("pad", static_cast<std::vector<int64_t> P::*>(&P::pad))
        .Default(std::vector<int64_t>{})
        .Describe("Zero padding on both sides per spatial axis (default 0).");
  }
  static void Declare(ParamDeclarer<WindowParam>* d) { DeclareWindow(d); }
};

struct Col2imParam : WindowParam {
  std::vector<int64_t> output_size;
  static void Declare(ParamDeclarer<Col2imParam>* d) {
    d->Field("output_size", &Col2imParam::output_size)
        .Required()
        .Describe("Spatial size of the image: (w,), (h, w) or (d, h, w).");
    DeclareWindow(d);
  }
};

// MXNet's SlidingParser: defaults for stride, dilate and pad of the kernel's rank.
void WindowInit(WindowParam* p) {
  const size_t n = p->kernel.size();
  HN_CHECK(n >= 1 && n <= 3, kInvalidArgument)
      << "kernel=" << Shape(p->kernel) << " must have 1, 2 or 3 dimensions";
  if (p->stride.empty()) p->stride.assign(n, 1);
  if (p->dilate.empty()) p->dilate.assign(n, 1);
  if (p->pad.empty()) p->pad.assign(n, 0);
  HN_CHECK(p->stride.size() == n && p->dilate.size() == n && p->pad.size() == n, kInvalidArgument)
      << "stride=" << Shape(p->stride) << ", dilate=" << Shape(p->dilate)
      << " and pad=" << Shape(p->pad) << " must have kernel's " << n << " dimensions";
  for (size_t i = 0; i < n; ++i) {
    HN_CHECK(p->kernel[i] >= 1 && p->stride[i] >= 1 && p->dilate[i] >= 1 && p->pad[i] >= 0,
             kInvalidArgument)
        << "kernel, stride and dilate must be positive and pad non-negative";
  }
}

void Col2imInit(Col2imParam* p) {
  WindowInit(p);
  HN_CHECK(p->output_size.size() == p->kernel.size(), kInvalidArgument)
      << "output_size=" << Shape(p->output_size) << " must have kernel's " << p->kernel.size()
      << " dimensions";
  for (int64_t s : p->output_size)
    HN_CHECK(s >= 1, kInvalidArgument)
        << "output_size=" << Shape(p->output_size) << " must be positive";
}

// The block positions along each spatial axis of an image of `image` dims.
std::vector<int64_t> GridDims(const NodeAttrs& attrs, const WindowParam& p, const int64_t* image) {
  std::vector<int64_t> grid;
  for (size_t i = 0; i < p.kernel.size(); ++i) {
    const int64_t padded = image[i] + 2 * p.pad[i];
    const int64_t span = 1 + (p.kernel[i] - 1) * p.dilate[i];
    HN_CHECK(span <= padded, kShapeError)
        << DescribeNode(attrs) << ": the dilated kernel (" << span << ") is larger than the "
        << "padded image (" << padded << ") along spatial axis " << i;
    grid.push_back((padded - span) / p.stride[i] + 1);
  }
  return grid;
}

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

bool Im2colShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const WindowParam& p = attrs.Param<WindowParam>();
  const Shape& is = (*in)[0];
  if (!is.IsKnown()) return false;
  HN_CHECK(is.ndim() == p.kernel.size() + 2, kShapeError)
      << DescribeNode(attrs) << ": data " << is << " must be (N, C) plus kernel's "
      << p.kernel.size() << " spatial dimensions";
  const std::vector<int64_t> grid = GridDims(attrs, p, is.begin() + 2);
  AssignShape(attrs, out, 0, Shape{is[0], is[1] * Product(p.kernel), Product(grid)}, "output");
  return true;
}

bool Col2imShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Col2imParam& p = attrs.Param<Col2imParam>();
  const Shape& is = (*in)[0];
  if (!is.IsKnown()) return false;
  HN_CHECK(is.ndim() == 3, kShapeError)
      << DescribeNode(attrs) << ": data must be a 3-D column array (N, C * prod(kernel), L), "
      << "got " << is;
  const int64_t k = Product(p.kernel);
  const int64_t blocks = Product(GridDims(attrs, p, p.output_size.data()));
  HN_CHECK(is[1] % k == 0 && is[2] == blocks, kShapeError)
      << DescribeNode(attrs) << ": data " << is << " must be (N, C * " << k << ", " << blocks
      << ") for kernel=" << Shape(p.kernel) << " and output_size=" << Shape(p.output_size);
  std::vector<int64_t> od{is[0], is[1] / k};
  od.insert(od.end(), p.output_size.begin(), p.output_size.end());
  AssignShape(attrs, out, 0, Shape(od), "output");
  return true;
}

internal::SpatialGeom Geometry(const WindowParam& p, const Shape& image) {
  std::vector<int64_t> grid;
  for (size_t i = 0; i < p.kernel.size(); ++i) {
    const int64_t span = 1 + (p.kernel[i] - 1) * p.dilate[i];
    grid.push_back((image[i + 2] + 2 * p.pad[i] - span) / p.stride[i] + 1);
  }
  return internal::MakeGeom(p.kernel, p.stride, p.pad, p.dilate, image.begin() + 2, grid.data());
}

void Im2colCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                   const std::vector<TBlob>& out) {
  const Shape& is = in[0].shape;
  const internal::SpatialGeom g = Geometry(attrs.Param<WindowParam>(), is);
  const int64_t image = in[0].Size() / is[0], col = out[0].Size() / is[0];
  for (int64_t n = 0; n < is[0]; ++n) {
    internal::Im2Col(in[0].ptr<const float>() + n * image, g, is[1], 0, g.GridRows(),
                     out[0].ptr<float>() + n * col);
  }
}

void Col2imCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                   const std::vector<TBlob>& out) {
  const Shape& os = out[0].shape;
  const internal::SpatialGeom g = Geometry(attrs.Param<Col2imParam>(), os);
  const int64_t image = out[0].Size() / os[0], col = in[0].Size() / os[0];
  float* y = out[0].ptr<float>();
  std::fill(y, y + out[0].Size(), 0.f);
  for (int64_t n = 0; n < os[0]; ++n) {
    internal::Col2Im(in[0].ptr<const float>() + n * col, g, os[1], 0, g.GridRows(), y + n * image);
  }
}

}  // namespace

void RegisterIm2colOps(OpRegistry* r) {
  r->Register("im2col")
      .Describe(
          "Extracts the sliding blocks of an (N, C, spatial...) image as columns: "
          "(N, C * prod(kernel), L), with kernel, stride, dilate and pad as in "
          "Convolution.")
      .SetParam<WindowParam>(WindowInit)
      .SetInputNames({"data"})
      .SetInferShape(Im2colShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(Im2colCompute);

  r->Register("col2im")
      .Describe(
          "Sums sliding blocks given as columns (N, C * prod(kernel), L) back into an "
          "(N, C, output_size...) image (the adjoint of im2col).")
      .SetParam<Col2imParam>(Col2imInit)
      .SetInputNames({"data"})
      .SetInferShape(Col2imShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(Col2imCompute);
}

}  // namespace hybridnet
