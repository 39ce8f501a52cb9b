// The `hybridnet` command: what its subcommands share. A C API client only (hybridnet/c_api.h),
// as any binding would be.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hybridnet/c_api.h"

namespace hybridnet_cli {

// ---- errors ---------------------------------------------------------------------------------

/// A failed C API call (code < 0, printed with its status name, exit 1) or a usage error
/// (code 0, printed with the usage, exit 2).
struct CliError {
  int code;
  std::string message;
};

/// Throws the C API's last error when `status` is not HN_OK.
void Check(int status);
[[noreturn]] void UsageError(const std::string& message);

// ---- owned C handles --------------------------------------------------------------------------

template <typename T, void (*Free)(T*)>
struct FreeWith {
  void operator()(T* handle) const { Free(handle); }
};
/// A C handle freed by `Free`, e.g. Owned<hn_tensor, hn_tensor_free>.
template <typename T, void (*Free)(T*)>
using Owned = std::unique_ptr<T, FreeWith<T, Free>>;
using Tensor = Owned<hn_tensor, hn_tensor_free>;

// ---- shared helpers ---------------------------------------------------------------------------

std::string ReadFile(const std::string& path);

/// "(1, 512)", and "(3,)" for one dimension, as numpy prints shapes.
std::string ShapeText(const std::vector<int64_t>& dims);
std::vector<int64_t> TensorShape(const hn_tensor* t);

using ShapeMap = std::map<std::string, std::vector<int64_t>>;
/// NAME=D1,D2,... specs (each name once); usage errors name the bad spec.
ShapeMap ParseShapes(const std::vector<std::string>& specs);
/// Shape inference of `symbol` from the known shapes (partial: unknown dims stay 0).
Owned<hn_shape_info, hn_shape_info_free> InferShapes(const hn_symbol* symbol, const ShapeMap& known);

}  // namespace hybridnet_cli
