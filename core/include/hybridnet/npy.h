// numpy .npy files (format versions 1.0, 2.0 and 3.0; little-endian; C order), the CLI's I/O
// format. Saving writes version 1.0 when the header fits, else 2.0, as numpy does.
#pragma once

#include <string>

#include "hybridnet/ndarray.h"

namespace hybridnet {

/// Reads a .npy file; kIOError when it cannot be read, kFormatError naming the problem when it is
/// malformed.
NDArray LoadNpy(const std::string& path);
/// Parses .npy bytes in memory; `source_name` is used in error messages.
NDArray ParseNpy(const std::string& bytes, const std::string& source_name);
/// Writes `array` as a .npy file (kIOError when it cannot be written).
void SaveNpy(const std::string& path, const NDArray& array);
/// The .npy bytes of `array`; kUnsupported for a dtype numpy lacks (bfloat16), kInvalidArgument
/// for a none or symbolic array.
std::string SerializeNpy(const NDArray& array);

}  // namespace hybridnet
