#include "hybridnet/io/image.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "common/test_util.h"
#include "hybridnet/npy.h"

namespace hybridnet {
namespace {

using testing_util::ErrorOf;

std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::string(HN_FIXTURES_DIR) + "/images/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << HN_FIXTURES_DIR << "/images/" << name;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void ExpectSamePixels(const NDArray& decoded, const std::string& npy) {
  NDArray expected = LoadNpy(std::string(HN_FIXTURES_DIR) + "/images/" + npy);
  ASSERT_EQ(decoded.shape(), expected.shape()) << npy;
  ASSERT_EQ(decoded.dtype(), DType::kUint8);
  EXPECT_EQ(0, std::memcmp(decoded.raw_data(), expected.raw_data(), decoded.nbytes())) << npy;
}

// MXNet 1.9.1's imdecode (OpenCV's libjpeg-turbo) wrote the expected pixels.
TEST(DecodeImage, JpegGivesMxnetPixelsInColorAndGray) {
  if (!ImageDecodingAvailable()) GTEST_SKIP() << "built without libjpeg-turbo";
  const std::string jpeg = ReadFixture("color.jpg");
  ExpectSamePixels(DecodeImage(jpeg.data(), jpeg.size()), "images-0-color.npy");
  ExpectSamePixels(DecodeImage(jpeg.data(), jpeg.size(), ImageColor::kGray), "images-0-gray.npy");
}

TEST(DecodeImage, BadBytesAreFormatErrors) {
  if (!ImageDecodingAvailable()) {
    const std::string jpeg = "\xFF\xD8\xFF";
    EXPECT_EQ(ErrorOf([&] { DecodeImage(jpeg.data(), jpeg.size()); }).code(),
              StatusCode::kUnsupported);
    return;
  }
  const std::string text = "not an image";
  Error not_jpeg = ErrorOf([&] { DecodeImage(text.data(), text.size()); });
  EXPECT_EQ(not_jpeg.code(), StatusCode::kFormatError);
  EXPECT_NE(std::string(not_jpeg.what()).find("not a JPEG image"), std::string::npos);
  const std::string jpeg = ReadFixture("color.jpg");
  Error cut = ErrorOf([&] { DecodeImage(jpeg.data(), 100); });
  EXPECT_EQ(cut.code(), StatusCode::kFormatError);
  EXPECT_NE(std::string(cut.what()).find("bad JPEG data"), std::string::npos);
  EXPECT_EQ(ErrorOf([&] { DecodeImage(jpeg.data(), 0); }).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace hybridnet
