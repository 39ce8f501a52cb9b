#include "hybridnet/base.h"

namespace hybridnet {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "HN_OK";
    case StatusCode::kInvalidArgument:
      return "HN_ERR_INVALID_ARGUMENT";
    case StatusCode::kShapeError:
      return "HN_ERR_SHAPE";
    case StatusCode::kTypeError:
      return "HN_ERR_DTYPE";
    case StatusCode::kNotFound:
      return "HN_ERR_NOT_FOUND";
    case StatusCode::kIOError:
      return "HN_ERR_IO";
    case StatusCode::kFormatError:
      return "HN_ERR_FORMAT";
    case StatusCode::kUnsupported:
      return "HN_ERR_UNSUPPORTED";
    case StatusCode::kUntraceable:
      return "HN_ERR_UNTRACEABLE";
    case StatusCode::kOutOfMemory:
      return "HN_ERR_OUT_OF_MEMORY";
    case StatusCode::kInternal:
      return "HN_ERR_INTERNAL";
  }
  return "HN_ERR_UNKNOWN";
}

}  // namespace hybridnet
