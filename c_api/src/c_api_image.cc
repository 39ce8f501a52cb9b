// C API: image decoding (hn_image_decode) over hybridnet/io/image.h.
#include "c_api_common.h"
#include "hybridnet/io/image.h"

using namespace hn_capi;  // NOLINT
namespace hn = ::hybridnet;

extern "C" {

int hn_image_decode(const void* data, size_t size, int flag, hn_tensor** out) noexcept {
  HN_API_BEGIN();
  CheckOut(out, "out");
  HN_CHECK(flag == 0 || flag == 1, kInvalidArgument)
      << "argument 'flag' is " << flag << "; expected 0 (gray) or 1 (color)";
  HN_CHECK(data != nullptr || size == 0, kInvalidArgument)
      << "argument 'data' is NULL but size is " << size;
  auto tensor = std::make_unique<hn_tensor>();
  tensor->array = hn::DecodeImage(data, size, static_cast<hn::ImageColor>(flag));
  *out = tensor.release();
  HN_API_END();
}

}  // extern "C"
