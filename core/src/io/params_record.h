// One NDArray record of MXNet's list files on its own: the bytes MXNet's MXNDArraySaveRawBytes
// writes and NDArray pickling carries (a Trainer's .states file holds its arrays this way); and
// the bounded file read both file kinds use.
#pragma once

#include <string>

#include "hybridnet/ndarray.h"

namespace hybridnet {
namespace internal {

/// The bytes of the file `path`, read at once up to the allocation limit (kOutOfMemory past
/// it), or block by block for pipes; kIOError naming it when it is missing, unreadable or a
/// directory (`what` says what it should be: "a parameter file").
std::string ReadFileBytes(const std::string& path, const char* what);
/// A V2 record of `a` (dense, cpu(0)); `label` names the array in errors.
std::string SerializeNDArrayRecord(const NDArray& a, const std::string& label);
/// The array of a record of any version that fills `bytes` exactly (kFormatError naming
/// `source_name` otherwise); a "none" record gives a none array.
NDArray ParseNDArrayRecord(const std::string& bytes, const std::string& source_name);

}  // namespace internal
}  // namespace hybridnet
