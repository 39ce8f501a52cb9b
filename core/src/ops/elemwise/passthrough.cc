// Ops a model carries over from training or from MXNet's device and storage handling, in their
// inference form (MXNet src/operator/tensor/amp_cast.{h,cc}, tensor/cast_storage.cc,
// cross_device_copy.cc, identity_attach_KL_sparse_reg-inl.h, contrib/all_finite.cc):
//  * amp_cast / amp_multicast convert float32/float16/bfloat16 inputs (others pass unchanged);
//  * cast_storage, _CrossDeviceCopy and IdentityAttachKLSparseReg return their input (every
//    array here is dense and on the CPU; the regularizer only acts on gradients);
//  * all_finite / multi_all_finite return 1 (float32, shape (1,)) when no element is inf or NaN.
#include <cmath>
#include <cstring>
#include <string>

#include "hybridnet/op.h"
#include "ops/dtype_switch-inl.h"
#include "ops/elemwise/math_functors-inl.h"
#include "ops/gradient_util.h"
#include "ops/register_ops.h"

namespace hybridnet {

namespace {

bool IsAmpFloat(DType d) {
  return d == DType::kFloat32 || d == DType::kFloat16 || d == DType::kBFloat16;
}

struct AmpCastParam {
  DType dtype = DType::kFloat32;
  static void Declare(ParamDeclarer<AmpCastParam>* d) {
    d->Field("dtype", &AmpCastParam::dtype,
             {{"bfloat16", DType::kBFloat16},
              {"float16", DType::kFloat16},
              {"float32", DType::kFloat32},
              {"float64", DType::kFloat64},
              {"int32", DType::kInt32},
              {"int64", DType::kInt64},
              {"int8", DType::kInt8},
              {"uint8", DType::kUint8}})
        .Required()
        .Describe("Output data type (for float32, float16 and bfloat16 inputs).");
  }
};

struct AmpMultiCastParam {
  int num_outputs = 0;
  bool cast_narrow = false;
  static void Declare(ParamDeclarer<AmpMultiCastParam>* d) {
    d->Field("num_outputs", &AmpMultiCastParam::num_outputs)
        .Required()
        .Min(1)
        .Describe("Number of input/output pairs.");
    d->Field("cast_narrow", &AmpMultiCastParam::cast_narrow)
        .Default(false)
        .Describe("Cast to the narrowest float type present instead of the widest.");
  }
};

enum class StorageType { kCSR, kDefault, kRowSparse };

struct CastStorageParam {
  StorageType stype = StorageType::kDefault;
  static void Declare(ParamDeclarer<CastStorageParam>* d) {
    d->Field("stype", &CastStorageParam::stype,
             {{"csr", StorageType::kCSR},
              {"default", StorageType::kDefault},
              {"row_sparse", StorageType::kRowSparse}})
        .Required()
        .Describe("Output storage type. Arrays here are dense: every stype keeps the values.");
  }
};

struct KLSparseRegParam {
  float sparseness_target = 0.1f;
  float penalty = 0.001f;
  float momentum = 0.9f;
  static void Declare(ParamDeclarer<KLSparseRegParam>* d) {
    d->Field("sparseness_target", &KLSparseRegParam::sparseness_target)
        .Default(0.1f)
        .Describe("The sparseness target (training only).");
    d->Field("penalty", &KLSparseRegParam::penalty)
        .Default(0.001f)
        .Describe("The weight of the sparseness penalty (training only).");
    d->Field("momentum", &KLSparseRegParam::momentum)
        .Default(0.9f)
        .Describe("The momentum of the running average (training only).");
  }
};

void InitKLSparseReg(KLSparseRegParam* p) {
  HN_CHECK(p->sparseness_target >= 0.f && p->sparseness_target <= 1.f, kInvalidArgument)
      << "sparseness_target must be in [0, 1], got " << p->sparseness_target;
  HN_CHECK(p->momentum >= 0.f && p->momentum <= 1.f, kInvalidArgument)
      << "momentum must be in [0, 1], got " << p->momentum;
}

struct AllFiniteParam {
  bool init_output = true;
  static void Declare(ParamDeclarer<AllFiniteParam>* d) {
    d->Field("init_output", &AllFiniteParam::init_output)
        .Default(true)
        .Describe("Start from 1 (False, which accumulates into a caller's array, is refused).");
  }
};

struct MultiAllFiniteParam {
  int num_arrays = 1;
  bool init_output = true;
  static void Declare(ParamDeclarer<MultiAllFiniteParam>* d) {
    d->Field("num_arrays", &MultiAllFiniteParam::num_arrays)
        .Default(1)
        .Min(1)
        .Describe("Number of arrays.");
    d->Field("init_output", &MultiAllFiniteParam::init_output)
        .Default(true)
        .Describe("Start from 1 (False, which accumulates into a caller's array, is refused).");
  }
};

// init_output=False means "and with the value already in the output array", which a graph's
// freshly planned output does not have.
void RejectAccumulation(bool init_output) {
  HN_CHECK(init_output, kInvalidArgument)
      << "init_output=False accumulates into an existing output array, which a graph does not "
         "have; only True is supported";
}
void InitAllFinite(AllFiniteParam* p) { RejectAccumulation(p->init_output); }
void InitMultiAllFinite(MultiAllFiniteParam* p) { RejectAccumulation(p->init_output); }

// ---- inference and kernels --------------------------------------------------------------------

bool AmpCastType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const DType x = (*in)[0];
  if (x == DType::kUnknown) return false;
  const DType y = IsAmpFloat(x) ? attrs.Param<AmpCastParam>().dtype : x;
  HN_CHECK((*out)[0] == DType::kUnknown || (*out)[0] == y, kTypeError)
      << DescribeNode(attrs) << ": output dtype " << DTypeName((*out)[0]) << " differs from "
      << DTypeName(y);
  (*out)[0] = y;
  return true;
}

// MXNet's AMPMultiCastType: float32/float16/bfloat16 inputs go to the widest such type present
// (float32 if any, else input 0's type) or, with cast_narrow, the narrowest; others keep theirs.
bool AmpMultiCastType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const bool narrow = attrs.Param<AmpMultiCastParam>().cast_narrow;
  // The target depends on every input: unknown until all are known.
  bool inputs_known = true;
  for (DType x : *in) inputs_known = inputs_known && x != DType::kUnknown;
  DType target = narrow ? DType::kFloat32 : (*in)[0];
  for (size_t i = 0; i < in->size(); ++i) {
    const DType x = (*in)[i], y = (*out)[i];
    if (!narrow && (x == DType::kFloat32 || y == DType::kFloat32)) {
      target = DType::kFloat32;
    } else if (narrow && (x == DType::kFloat16 || y == DType::kFloat16)) {
      target = DType::kFloat16;
    } else if (narrow && (x == DType::kBFloat16 || y == DType::kBFloat16)) {
      target = DType::kBFloat16;
    }
  }
  bool complete = true;
  for (size_t i = 0; i < in->size(); ++i) {
    const DType x = (*in)[i];
    if (x == DType::kUnknown || (IsAmpFloat(x) && !inputs_known)) {
      complete = false;
      continue;
    }
    const DType y = IsAmpFloat(x) ? target : x;
    HN_CHECK((*out)[i] == DType::kUnknown || (*out)[i] == y, kTypeError)
        << DescribeNode(attrs) << ": output " << i << " dtype " << DTypeName((*out)[i])
        << " differs from " << DTypeName(y);
    (*out)[i] = y;
  }
  return complete;
}

void ConvertCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                    const std::vector<TBlob>& out) {
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i].data == out[i].data) continue;
    ConvertElements(in[i].data, in[i].dtype, out[i].data, out[i].dtype,
                    static_cast<size_t>(in[i].Size()));
  }
}

bool AmpMultiCastShape(const NodeAttrs&, std::vector<Shape>* in, std::vector<Shape>* out) {
  bool complete = true;
  for (size_t i = 0; i < in->size(); ++i) {
    if ((*in)[i].ndim() == 0) (*in)[i] = (*out)[i];
    if ((*out)[i].ndim() == 0) (*out)[i] = (*in)[i];
    complete = complete && (*in)[i].IsKnown();
  }
  return complete;
}

bool KLSparseRegShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  std::vector<Shape> data{(*in)[0]};
  const bool known = ElemwiseShape(attrs, &data, out);
  (*in)[0] = data[0];
  const Shape& x = (*in)[0];
  if (x.ndim() == 0) return false;
  HN_CHECK(x.ndim() >= 2, kShapeError)
      << DescribeNode(attrs) << ": data must have at least 2 dimensions, got " << x;
  Shape avg = (*in)[1];
  HN_CHECK(MergeShape(Shape{x[1]}, &avg), kShapeError)
      << DescribeNode(attrs) << ": moving_avg shape " << (*in)[1] << " differs from (" << x[1]
      << ",)";
  (*in)[1] = avg;
  return known && avg.IsKnown();
}

bool FloatType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const bool complete = ElemwiseType(attrs, in, out);
  for (size_t i = 0; i < in->size(); ++i) {
    HN_CHECK((*in)[i] == DType::kUnknown || (*in)[i] == DType::kFloat32, kTypeError)
        << DescribeNode(attrs) << ": input " << i << " has dtype " << DTypeName((*in)[i])
        << "; this operator takes float32 only, as MXNet's";
  }
  return complete;
}

void CopyData(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
              const std::vector<TBlob>& out) {
  if (in[0].data != out[0].data && in[0].Size() > 0) {
    std::memcpy(out[0].data, in[0].data,
                static_cast<size_t>(in[0].Size()) * DTypeSize(in[0].dtype));
  }
}

bool FiniteShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  Shape merged = (*out)[0];
  HN_CHECK(MergeShape(Shape{1}, &merged), kShapeError)
      << DescribeNode(attrs) << ": output shape " << (*out)[0] << " differs from (1,)";
  (*out)[0] = merged;
  bool complete = true;
  for (const Shape& s : *in) complete = complete && s.IsKnown();
  return complete;
}

// The inputs share one float dtype (MXNet reads every array as input 0's type).
bool FiniteType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  std::vector<DType> none;
  const bool inputs_known = ElemwiseType(attrs, in, &none);
  for (size_t i = 0; i < in->size(); ++i) {
    const DType d = (*in)[i];
    HN_CHECK(d == DType::kUnknown || d == DType::kFloat32 || d == DType::kFloat64, kTypeError)
        << DescribeNode(attrs) << ": input " << i << " has dtype " << DTypeName(d)
        << "; expected float32 or float64";
  }
  HN_CHECK((*out)[0] == DType::kUnknown || (*out)[0] == DType::kFloat32, kTypeError)
      << DescribeNode(attrs) << ": the output is float32, not " << DTypeName((*out)[0]);
  (*out)[0] = DType::kFloat32;
  return inputs_known;
}

void AllFiniteCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                      const std::vector<TBlob>& out) {
  bool finite = true;
  for (const TBlob& x : in) {
    op_math::SwitchFloatDType(x.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* v = x.ptr<const T>();
      const int64_t n = x.Size();
      // MXNet tests the value converted to float (a huge float64 counts as infinite).
      for (int64_t i = 0; i < n && finite; ++i) finite = std::isfinite(static_cast<float>(v[i]));
    });
  }
  out[0].ptr<float>()[0] = finite ? 1.f : 0.f;
}

}  // namespace

void RegisterPassThroughOps(OpRegistry* r) {
  r->Register("amp_cast")
      .Describe(
          "Casts a float32, float16 or bfloat16 input to dtype; other inputs pass "
          "unchanged (the mixed-precision cast).")
      .SetParam<AmpCastParam>()
      .SetInputNames({"data"})
      .SetInferShape(ElemwiseShape)
      .SetInferType(AmpCastType)
      .SetCompute(ConvertCompute)
      .SetGradient(internal::CastBackGradient);
  r->Register("amp_multicast")
      .Describe(
          "Casts its float32/float16/bfloat16 inputs to one type: the widest present "
          "(float32 if any, else input 0's), or with cast_narrow the narrowest.")
      .SetParam<AmpMultiCastParam>()
      .SetInputNames([](const NodeAttrs& attrs) {
        std::vector<std::string> names;
        for (int i = 0; i < attrs.Param<AmpMultiCastParam>().num_outputs; ++i)
          names.push_back("data_" + std::to_string(i));
        return names;
      })
      // Counted from num_outputs without building the names: a hostile file may say billions.
      .SetNumInputs([](const NodeAttrs& attrs) {
        return static_cast<uint32_t>(attrs.Param<AmpMultiCastParam>().num_outputs);
      })
      .SetNumOutputs([](const NodeAttrs& attrs) {
        return static_cast<uint32_t>(attrs.Param<AmpMultiCastParam>().num_outputs);
      })
      .SetInferShape(AmpMultiCastShape)
      .SetInferType(AmpMultiCastType)
      .SetCompute(ConvertCompute)
      .SetGradient(internal::CastBackGradient);
  r->Register("cast_storage")
      .Describe(
          "Changes an array's storage type; arrays here are always dense, so the values "
          "pass unchanged (MXNet's sparse result holds the same values).")
      .AddAlias("_sparse_cast_storage")
      .SetParam<CastStorageParam>()
      .SetInputNames({"data"})
      .SetInferShape(ElemwiseShape)
      .SetInferType(ElemwiseType)
      .SetCompute(CopyData)
      .SetInplace({{0, 0}})
      .SetIdentityView();
  r->Register("_CrossDeviceCopy")
      .Describe("Copies an array between devices; on the one CPU device, the identity.")
      .SetInputNames({"data"})
      .SetInferShape(ElemwiseShape)
      .SetInferType(ElemwiseType)
      .SetCompute(CopyData)
      .SetInplace({{0, 0}})
      .SetIdentityView();
  r->Register("IdentityAttachKLSparseReg")
      .Describe(
          "Returns data; in training its gradient gets a KL sparseness penalty (the "
          "moving_avg auxiliary state is updated only there).")
      .SetParam<KLSparseRegParam>(InitKLSparseReg)
      .SetInputNames({"data", "moving_avg"})
      .SetMutableInputs({1})
      .SetInferShape(KLSparseRegShape)
      .SetInferType(FloatType)
      .SetCompute(CopyData)
      .SetInplace({{0, 0}})
      .SetIdentityView();
  r->Register("all_finite")
      .Describe("1 (float32, shape (1,)) when no element is inf or NaN, else 0.")
      .SetParam<AllFiniteParam>(InitAllFinite)
      .SetInputNames({"data"})
      .SetInferShape(FiniteShape)
      .SetInferType(FiniteType)
      .SetCompute(AllFiniteCompute);
  r->Register("multi_all_finite")
      .Describe("1 (float32, shape (1,)) when no element of any input is inf or NaN, else 0.")
      .SetParam<MultiAllFiniteParam>(InitMultiAllFinite)
      .SetInputNames([](const NodeAttrs& attrs) {
        std::vector<std::string> names;
        for (int i = 0; i < attrs.Param<MultiAllFiniteParam>().num_arrays; ++i)
          names.push_back("array_" + std::to_string(i));
        return names;
      })
      .SetNumInputs([](const NodeAttrs& attrs) {
        return static_cast<uint32_t>(attrs.Param<MultiAllFiniteParam>().num_arrays);
      })
      .SetInferShape(FiniteShape)
      .SetInferType(FiniteType)
      .SetCompute(AllFiniteCompute);
}

}  // namespace hybridnet
