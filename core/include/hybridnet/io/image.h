// Image decoding for datasets (MXNet's mx.image.imdecode): JPEG through libjpeg-turbo.
#pragma once

#include <cstddef>

#include "hybridnet/ndarray.h"

namespace hybridnet {

/// How DecodeImage lays out the pixels (MXNet's imdecode flag).
enum class ImageColor {
  kGray = 0,  ///< one channel
  kRGB = 1,   ///< three channels, red first (imdecode's to_rgb default)
};

/// Decodes a JPEG image held in memory into a (height, width, channels) uint8 array.
/// Throws kFormatError naming the problem for bytes that are not a valid JPEG image,
/// kInvalidArgument for a null or empty buffer, and kUnsupported when this build has no JPEG
/// library (ImageDecodingAvailable() is false).
NDArray DecodeImage(const void* data, size_t size, ImageColor color = ImageColor::kRGB);

/// True when the library was built with libjpeg-turbo.
bool ImageDecodingAvailable();

}  // namespace hybridnet
