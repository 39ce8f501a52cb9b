// Kernels written once for every element type an op accepts:
//
//   SwitchDType(out[0].dtype, [&](auto tag) {
//     using T = typename decltype(tag)::type;
//     const T* x = in[0].ptr<const T>();
//     ...
//   });
//
// with type inference declaring what reaches the kernel (NumericType below, or an op's own
// rule), so the switch never meets another dtype.
#pragma once

#include <cstdint>
#include <vector>

#include "hybridnet/base.h"
#include "hybridnet/op.h"

namespace hybridnet {
namespace internal {

template <typename T>
struct TypeTag {
  using type = T;
};

/// The dtypes MXNet's legacy kernels instantiate (MSHADOW_TYPE_SWITCH without half precision,
/// which hybridnet stores and casts but does not compute in).
inline bool IsNumericDType(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
    case DType::kFloat64:
    case DType::kUint8:
    case DType::kInt8:
    case DType::kInt32:
    case DType::kInt64:
      return true;
    default:
      return false;
  }
}

/// Calls fn(TypeTag<T>{}) with the C++ type of `dtype`, one of IsNumericDType; fn is
/// instantiated for those six types only (bool and half types never reach it).
template <typename Fn>
void SwitchNumericDType(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32:
      fn(TypeTag<float>{});
      return;
    case DType::kFloat64:
      fn(TypeTag<double>{});
      return;
    case DType::kUint8:
      fn(TypeTag<uint8_t>{});
      return;
    case DType::kInt8:
      fn(TypeTag<int8_t>{});
      return;
    case DType::kInt32:
      fn(TypeTag<int32_t>{});
      return;
    case DType::kInt64:
      fn(TypeTag<int64_t>{});
      return;
    default:
      break;
  }
  HN_THROW(kInternal) << "no kernel for dtype " << DTypeName(dtype)
                      << " (type inference should have rejected it)";
}

/// Calls fn(TypeTag<T>{}) with the C++ type of `dtype` (one of IsNumericDType, or bool when
/// `with_bool`).
template <typename Fn>
void SwitchDType(DType dtype, Fn&& fn, bool with_bool = false) {
  if (with_bool && dtype == DType::kBool) {
    fn(TypeTag<bool>{});
    return;
  }
  SwitchNumericDType(dtype, fn);
}

/// Like ElemwiseType (every input and output has one dtype), restricted to IsNumericDType;
/// float32 when nothing is known.
bool NumericType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out);

}  // namespace internal
}  // namespace hybridnet
