// One NDArray record of MXNet's list files on its own: the bytes MXNet's MXNDArraySaveRawBytes
// writes and NDArray pickling carries (a Trainer's .states file holds its arrays this way).
#pragma once

#include <string>

#include "hybridnet/ndarray.h"

namespace hybridnet {
namespace internal {

/// A V2 record of `a` (dense, cpu(0)); `label` names the array in errors.
std::string SerializeNDArrayRecord(const NDArray& a, const std::string& label);
/// The array of a record of any version that fills `bytes` exactly (kFormatError naming
/// `source_name` otherwise); a "none" record gives a none array.
NDArray ParseNDArrayRecord(const std::string& bytes, const std::string& source_name);

}  // namespace internal
}  // namespace hybridnet
