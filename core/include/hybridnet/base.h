// Error handling shared by every layer of hybridnet.
//
// Inside core/, user and invariant errors throw hybridnet::Error, which carries a StatusCode
// (the same numbers the C API returns). Raise them with HN_CHECK:
//
//   HN_CHECK(shape.ndim() == 2, kShapeError) << "FullyConnected(" << name << "): expected 2-D";
//
// Kernels do not validate; parameter parsing and shape inference do.
#pragma once

#include <exception>
#include <sstream>
#include <string>
#include <utility>

/// The C++ API: tensors (NDArray), the operator registry, symbols and graphs, the executor,
/// MXNet's file formats, and the Gluon blocks (hybridnet::gluon).
namespace hybridnet {

/// Error categories; the values are the C API's negative return codes.
enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = -1,  ///< a bad value: attribute, argument, option
  kShapeError = -2,       ///< shapes do not fit together
  kTypeError = -3,        ///< dtype unsupported or mismatched
  kNotFound = -4,         ///< unknown op, name, file or key
  kIOError = -5,          ///< a file could not be opened, read or written
  kFormatError = -6,      ///< a file or string is malformed, truncated or unsupported
  kUnsupported = -7,      ///< a valid request this build cannot do (sparse storage, ...)
  kUntraceable = -8,      ///< user code that hybridize cannot turn into a graph
  kOutOfMemory = -9,
  kInternal = -10,
};

/// The stable upper-case name of a code, e.g. "HN_ERR_SHAPE".
const char* StatusCodeName(StatusCode code);

/// The exception every core error is. Messages are built with operator<<, which is what
/// HN_CHECK and HN_THROW expand to: `throw Error(code) << "text " << value`.
class Error : public std::exception {
 public:
  /// An error of category `code` with the start of its message.
  explicit Error(StatusCode code, std::string message = "")
      : code_(code), message_(std::move(message)) {}
  /// The category (the C API's status).
  StatusCode code() const { return code_; }
  /// The message.
  const char* what() const noexcept override { return message_.c_str(); }

  /// Appends `value`, formatted as by std::ostream, to the message.
  template <typename T>
  Error& operator<<(const T& value) {
    std::ostringstream os;
    os << value;
    message_ += os.str();
    return *this;
  }

 private:
  StatusCode code_;
  std::string message_;
};

}  // namespace hybridnet

/// Throws an Error with StatusCode::code and the streamed message: HN_THROW(kIOError) << path;
#define HN_THROW(code) throw ::hybridnet::Error(::hybridnet::StatusCode::code)

/// HN_THROW unless cond holds: HN_CHECK(n > 0, kInvalidArgument) << "n must be positive";
#define HN_CHECK(cond, code) \
  if (cond) {                \
  } else                     \
    HN_THROW(code)
