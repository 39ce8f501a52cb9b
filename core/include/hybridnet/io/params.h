// MXNet NDArray list files (.params, .nd): read V0, V1, V2 and V3 records of every dense dtype,
// named or unnamed; write V2. Damaged files raise kFormatError naming the file, the array index
// and what was expected; a hostile header never makes us allocate more than the file holds.
#pragma once

#include <string>
#include <vector>

#include "hybridnet/ndarray.h"

namespace hybridnet {

/// The contents of an MXNet .params / .nd file: arrays, optionally named.
struct NDArrayList {
  std::vector<NDArray> arrays;       ///< in file order
  std::vector<std::string> names;    ///< empty (saved from a list) or one per array
  std::vector<int> record_versions;  ///< per array as read: 0, 1, 2 or 3 (2 when built here)
};

/// Reads a .params / .nd file (record versions V0-V3); errors name the file.
NDArrayList LoadNDArrayList(const std::string& path);
/// Parses the bytes of such a file; `source_name` names it in errors.
NDArrayList ParseNDArrayList(const std::string& bytes, const std::string& source_name);
/// Writes V2 records (dense, cpu(0)); names must be empty or one per array.
void SaveNDArrayList(const std::string& path, const NDArrayList& list);
/// The bytes SaveNDArrayList writes.
std::string SerializeNDArrayList(const NDArrayList& list);

}  // namespace hybridnet
