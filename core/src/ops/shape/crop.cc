// Crop, MXNet's legacy spatial crop (src/operator/crop-inl.h): crops the (H, W) axes of an
// (N, C, H, W) input to h_w (num_args=1) or to the height and width of a second input
// (num_args=2), at offset (y, x) or centred (center_crop).
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "ops/register_ops.h"
#include "ops/shape/shape_util-inl.h"
#include "ops/shape/strided_copy-inl.h"

namespace hybridnet {

namespace {

using internal::AssignShape;

struct CropParam {
  int num_args = 1;
  std::vector<int64_t> offset{0, 0};
  std::vector<int64_t> h_w{0, 0};
  bool center_crop = false;
  static void Declare(ParamDeclarer<CropParam>* d) {
    d->Field("num_args", &CropParam::num_args)
        .Required()
        .Min(1)
        .Describe(
            "1: crop to h_w; 2: crop to the height and width of the second input "
            "(crop_like).");
    d->Field("offset", &CropParam::offset)
        .Default(std::vector<int64_t>{0, 0})
        .Describe("Top-left corner (y, x) of the crop when center_crop is false.");
    d->Field("h_w", &CropParam::h_w)
        .Default(std::vector<int64_t>{0, 0})
        .Describe("Height and width of the crop (num_args=1).");
    d->Field("center_crop", &CropParam::center_crop)
        .Default(false)
        .Describe("Centre the crop instead of placing it at offset.");
  }
};

void CropInit(CropParam* p) {
  HN_CHECK(p->num_args <= 2, kInvalidArgument)
      << "num_args=" << p->num_args << ": Crop takes the data and at most one crop_like input";
  HN_CHECK(p->offset.size() == 2 && p->h_w.size() == 2, kInvalidArgument)
      << "offset=" << Shape(p->offset) << " and h_w=" << Shape(p->h_w)
      << " must be (y, x) and (h, w) pairs";
}

// The top-left corner of the crop of an (H, W) plane to (h, w).
void CropOffset(const NodeAttrs& attrs, const Shape& data, const Shape& out, int64_t* y,
                int64_t* x) {
  const CropParam& p = attrs.Param<CropParam>();
  const int64_t room_h = data[2] - out[2], room_w = data[3] - out[3];
  if (p.center_crop) {
    *y = room_h / 2;
    *x = room_w / 2;
    return;
  }
  *y = p.offset[0];
  *x = p.offset[1];
  HN_CHECK(*y >= 0 && *y <= room_h && *x >= 0 && *x <= room_w, kShapeError)
      << DescribeNode(attrs) << ": offset=" << Shape(p.offset) << " puts the " << out[2] << "x"
      << out[3] << " crop outside the " << data[2] << "x" << data[3] << " input";
}

bool CropShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const CropParam& p = attrs.Param<CropParam>();
  const Shape& ds = (*in)[0];
  if (ds.ndim() == 0) return false;
  HN_CHECK(ds.ndim() == 4, kShapeError)
      << DescribeNode(attrs) << ": data must be 4-D (N, C, H, W), got " << ds;
  int64_t h = 0, w = 0;
  if (p.num_args == 1) {
    h = p.h_w[0];
    w = p.h_w[1];
    HN_CHECK(h >= 1 && w >= 1 && (ds[2] == 0 || h <= ds[2]) && (ds[3] == 0 || w <= ds[3]),
             kShapeError)
        << DescribeNode(attrs) << ": h_w=" << Shape(p.h_w) << " must be a positive size "
        << "within the input " << ds;
  } else {
    const Shape& like = (*in)[1];
    if (like.ndim() == 0) return false;
    HN_CHECK(like.ndim() == 4, kShapeError)
        << DescribeNode(attrs) << ": crop_like must be 4-D (N, C, H, W), got " << like;
    h = like[2];
    w = like[3];
    HN_CHECK((ds[2] == 0 || h <= ds[2]) && (ds[3] == 0 || w <= ds[3]), kShapeError)
        << DescribeNode(attrs) << ": crop_like " << like << " is larger than the input " << ds;
  }
  const Shape os{ds[0], ds[1], h, w};
  if (ds.IsKnown() && os.IsKnown()) {
    int64_t y = 0, x = 0;
    CropOffset(attrs, ds, os, &y, &x);
  }
  AssignShape(attrs, out, 0, os, "output");
  return internal::AllKnown(*in) && (*out)[0].IsKnown();
}

void CropCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                 const std::vector<TBlob>& out) {
  const Shape& ds = in[0].shape;
  const Shape& os = out[0].shape;
  int64_t y = 0, x = 0;
  CropOffset(attrs, ds, os, &y, &x);
  internal::StridedWalk w;
  w.Add(ds[0] * ds[1], ds[2] * ds[3], os[2] * os[3]);
  w.Add(os[2], ds[3], os[3]);
  w.Add(os[3], 1, 1);
  w.src_offset = y * ds[3] + x;
  internal::StridedCopy(w, in[0].data, out[0].data, DTypeSize(out[0].dtype));
}

}  // namespace

void RegisterCropOps(OpRegistry* r) {
  r->Register("Crop")
      .Describe(
          "Crops the height and width of an (N, C, H, W) input to h_w or to the size of "
          "a second input, at offset (y, x) or centred.")
      .SetParam<CropParam>(CropInit)
      .SetKeyVarNumArgs("num_args")
      .SetInputNames([](const NodeAttrs& attrs) {
        std::vector<std::string> names{"arg0"};
        if (attrs.Param<CropParam>().num_args == 2) names.push_back("arg1");
        return names;
      })
      .SetInferShape(CropShape)
      .SetInferType(ElemwiseType)
      .SetCompute(CropCompute);
}

}  // namespace hybridnet
