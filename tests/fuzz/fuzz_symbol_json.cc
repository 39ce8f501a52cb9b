// Fuzz target: symbol JSON (every legacy form) -> upgrade -> Symbol -> shape inference -> JSON.
// A hybridnet::Error is the expected answer to a bad file; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "hybridnet/base.h"
#include "hybridnet/io/json.h"
#include "hybridnet/symbol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    hybridnet::InspectJSON(text, "fuzz-symbol.json");
    hybridnet::Symbol s = hybridnet::LoadJSON(text, "fuzz-symbol.json");
    s.InferType({}, /*partial=*/true);
    s.InferShape({{"data", hybridnet::Shape{2, 3}}}, /*partial=*/true);
    hybridnet::Symbol::FromJSON(s.ToJSON());
  } catch (const hybridnet::Error&) {
  }
  return 0;
}
