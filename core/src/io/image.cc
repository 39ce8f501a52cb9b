// DecodeImage (hybridnet/io/image.h) over libjpeg's API, as libjpeg-turbo provides it. libjpeg
// reports errors through a callback that must not return: it longjmps back here, where the
// message becomes an Error (no C++ object with a destructor lives between setjmp and longjmp).
#include "hybridnet/io/image.h"

#include <csetjmp>
#include <cstdio>
#include <string>

#ifdef HN_HAVE_JPEG
#include <jpeglib.h>
#endif

namespace hybridnet {

bool ImageDecodingAvailable() {
#ifdef HN_HAVE_JPEG
  return true;
#else
  return false;
#endif
}

#ifdef HN_HAVE_JPEG
namespace {

struct ErrorManager {
  jpeg_error_mgr base;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

extern "C" void OnJpegError(j_common_ptr info) {
  auto* manager = reinterpret_cast<ErrorManager*>(info->err);
  (*info->err->format_message)(info, manager->message);
  std::longjmp(manager->jump, 1);
}

// Warnings (a corrupt but decodable stream) are not errors: MXNet's decoder keeps the pixels.
extern "C" void OnJpegMessage(j_common_ptr, int) {}

// Decodes into `out` (allocated here once the size is known); returns false with
// manager->message set on a libjpeg error.
bool Decode(const unsigned char* data, size_t size, ImageColor color, ErrorManager* manager,
            jpeg_decompress_struct* info, NDArray* out) {
  info->err = jpeg_std_error(&manager->base);
  manager->base.error_exit = OnJpegError;
  manager->base.emit_message = OnJpegMessage;
  if (setjmp(manager->jump) != 0) {
    jpeg_destroy_decompress(info);
    return false;
  }
  jpeg_create_decompress(info);
  jpeg_mem_src(info, data, static_cast<unsigned long>(size));  // NOLINT(runtime/int): libjpeg's
  jpeg_read_header(info, TRUE);
  info->out_color_space = color == ImageColor::kGray ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_start_decompress(info);
  const size_t row_bytes = static_cast<size_t>(info->output_width) * info->output_components;
  *out = NDArray(
      Shape{static_cast<int64_t>(info->output_height), static_cast<int64_t>(info->output_width),
            static_cast<int64_t>(info->output_components)},
      DType::kUint8);
  auto* pixels = static_cast<unsigned char*>(out->raw_data());
  while (info->output_scanline < info->output_height) {
    JSAMPROW row = pixels + static_cast<size_t>(info->output_scanline) * row_bytes;
    jpeg_read_scanlines(info, &row, 1);
  }
  jpeg_finish_decompress(info);
  jpeg_destroy_decompress(info);
  return true;
}

}  // namespace
#endif

NDArray DecodeImage(const void* data, size_t size, ImageColor color) {
  HN_CHECK(data != nullptr && size > 0, kInvalidArgument)
      << "DecodeImage: the image buffer is empty";
  HN_CHECK(color == ImageColor::kGray || color == ImageColor::kRGB, kInvalidArgument)
      << "DecodeImage: flag " << static_cast<int>(color) << " is not 0 (gray) or 1 (color)";
#ifdef HN_HAVE_JPEG
  const auto* bytes = static_cast<const unsigned char*>(data);
  HN_CHECK(size >= 3 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[2] == 0xFF, kFormatError)
      << "DecodeImage: the " << size << " bytes are not a JPEG image (no JPEG start marker); "
      << "JPEG is the format this build decodes";
  ErrorManager manager;
  jpeg_decompress_struct info;
  NDArray out;
  if (!Decode(bytes, size, color, &manager, &info, &out)) {
    HN_THROW(kFormatError) << "DecodeImage: bad JPEG data (" << size
                           << " bytes): " << manager.message;
  }
  return out;
#else
  HN_THROW(kUnsupported) << "DecodeImage: this build has no JPEG decoder; install libjpeg-turbo "
                         << "(Debian: libjpeg62-turbo-dev) and rebuild";
#endif
}

}  // namespace hybridnet
