// Fuzz target: numpy .npy (format 1.0-3.0), parsed, read back and written back.
#include <cstddef>
#include <cstdint>
#include <string>

#include "hybridnet/base.h"
#include "hybridnet/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    hybridnet::NDArray a =
        hybridnet::ParseNpy(std::string(reinterpret_cast<const char*>(data), size), "fuzz.npy");
    a.ToFloatVector();  // every value read back
    hybridnet::SerializeNpy(a);
  } catch (const hybridnet::Error&) {
  }
  return 0;
}
