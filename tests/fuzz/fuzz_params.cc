// Fuzz target: MXNet .params / .nd NDArray lists (V0-V3), parsed, read back and written back.
#include <cstddef>
#include <cstdint>
#include <string>

#include "hybridnet/base.h"
#include "hybridnet/io/params.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    hybridnet::NDArrayList list = hybridnet::ParseNDArrayList(
        std::string(reinterpret_cast<const char*>(data), size), "fuzz.params");
    // Every value read back: a header that lies about its data shows under ASan/UBSan.
    for (const hybridnet::NDArray& a : list.arrays)
      if (!a.is_none()) a.ToFloatVector();
    hybridnet::SerializeNDArrayList(list);
  } catch (const hybridnet::Error&) {
  }
  return 0;
}
