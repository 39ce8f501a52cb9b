/* C API: hn_image_decode on MXNet's JPEG fixture, and its errors. */
#include <stdint.h>

#include "hn_test.h"

static size_t read_file(const char* path, unsigned char* buffer, size_t capacity) {
  FILE* f = fopen(path, "rb");
  size_t n = 0;
  HN_EXPECT(f != NULL);
  if (f == NULL) return 0;
  n = fread(buffer, 1, capacity, f);
  fclose(f);
  return n;
}

static void test_decode(void) {
  unsigned char jpeg[4096];
  size_t size = read_file(HN_FIXTURES_DIR "/images/color.jpg", jpeg, sizeof jpeg);
  hn_tensor* image = NULL;
  const int64_t* dims = NULL;
  int ndim = 0, dtype = -1;
  HN_EXPECT(size > 0 && size < sizeof jpeg);
  HN_EXPECT_OK(hn_image_decode(jpeg, size, 1, &image));
  HN_EXPECT_OK(hn_tensor_ndim(image, &ndim));
  HN_EXPECT_OK(hn_tensor_dtype(image, &dtype));
  HN_EXPECT(ndim == 3 && dtype == HN_DTYPE_UINT8);
  HN_EXPECT_OK(hn_tensor_shape(image, &dims, &ndim));
  HN_EXPECT(dims != NULL && dims[0] == 12 && dims[1] == 16 && dims[2] == 3);
  hn_tensor_free(image);
  HN_EXPECT_OK(hn_image_decode(jpeg, size, 0, &image));
  HN_EXPECT_OK(hn_tensor_shape(image, &dims, &ndim));
  HN_EXPECT(ndim == 3 && dims[2] == 1);
  hn_tensor_free(image);
  image = NULL;
  HN_EXPECT_ERR(hn_image_decode(jpeg, 100, 1, &image), HN_ERR_FORMAT, "bad JPEG data");
  HN_EXPECT_ERR(hn_image_decode("GIF89a", 6, 1, &image), HN_ERR_FORMAT, "not a JPEG image");
  HN_EXPECT_ERR(hn_image_decode(jpeg, size, 2, &image), HN_ERR_INVALID_ARGUMENT, "'flag' is 2");
  HN_EXPECT_ERR(hn_image_decode(NULL, 5, 1, &image), HN_ERR_INVALID_ARGUMENT, "'data' is NULL");
  HN_EXPECT_ERR(hn_image_decode(jpeg, size, 1, NULL), HN_ERR_INVALID_ARGUMENT, "'out'");
  HN_EXPECT(image == NULL);
}

HN_TEST_MAIN(image, HN_RUN(test_decode))
