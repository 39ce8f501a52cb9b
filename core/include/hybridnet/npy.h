// numpy .npy files (format versions 1.0, 2.0 and 3.0; little-endian; C order), the CLI's I/O
// format. Saving writes version 1.0 when the header fits, else 2.0, as numpy does.
#pragma once

#include <string>

#include "hybridnet/ndarray.h"

namespace hybridnet {

NDArray LoadNpy(const std::string& path);
NDArray ParseNpy(const std::string& bytes, const std::string& source_name);
void SaveNpy(const std::string& path, const NDArray& array);
std::string SerializeNpy(const NDArray& array);

}  // namespace hybridnet
