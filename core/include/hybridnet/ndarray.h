// NDArray: an n-dimensional array with a shape, a dtype and shared, 64-byte aligned, C-contiguous
// storage. Copies of an NDArray share storage; Reshape returns a view of the same bytes.
//
//   NDArray x = NDArray::RandomNormal({1, 512});
//   std::cout << x.Reshape({2, 256});
//
// An NDArray can also be symbolic: while hybridize() traces a forward, values are graph entries
// and every op appends a node instead of computing (see imperative.h). Under autograd recording
// (autograd.h) a concrete array also knows the recorded op that made it, or that it is a variable
// whose gradient is wanted; copies made afterwards share that.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "hybridnet/base.h"
#include "hybridnet/dtype.h"
#include "hybridnet/shape.h"

namespace hybridnet {

struct Node;

namespace internal {
struct Storage;
struct TapeNode;    // imperative/autograd_tape.h: a recorded op or a marked variable
struct TapeAccess;  // imperative/autograd_tape.h: reads and sets an array's tape entry
}  // namespace internal

/// One output of a graph node: what a symbolic NDArray stands for.
struct NodeEntry {
  /// The node producing the value.
  std::shared_ptr<Node> node;
  /// Which output of the node.
  uint32_t index = 0;
  /// For a variable, how many ops had written it before this read (MXNet's entry version);
  /// 0 otherwise.
  uint32_t version = 0;
};

/// An n-dimensional array, concrete or symbolic; see the file comment.
class NDArray {
 public:
  /// A "none" array: no shape, no storage.
  NDArray() = default;
  /// Uninitialized storage of the given shape.
  explicit NDArray(const Shape& shape, DType dtype = DType::kFloat32);

  /// A new array filled with zeros.
  static NDArray Zeros(const Shape& shape, DType dtype = DType::kFloat32);
  /// A new array filled with ones.
  static NDArray Ones(const Shape& shape, DType dtype = DType::kFloat32);
  /// A new array with every element `value`, converted to `dtype`.
  static NDArray Full(const Shape& shape, double value, DType dtype = DType::kFloat32);
  /// Values start, start+step, ... below stop, like numpy.arange.
  static NDArray Arange(double start, double stop, double step = 1.0,
                        DType dtype = DType::kFloat32);
  /// Copies `values` (whose length must equal shape.Size()).
  static NDArray FromVector(const Shape& shape, const std::vector<float>& values);
  /// Copies shape.Size() elements of `dtype` from `data`.
  static NDArray FromBuffer(const Shape& shape, DType dtype, const void* data);
  /// Wraps caller memory without copying; `deleter` (may be empty) runs when the last
  /// reference goes. `data` must be aligned to the dtype's size.
  static NDArray Wrap(const Shape& shape, DType dtype, void* data,
                      std::function<void(void*)> deleter);
  /// Samples from the global generator (see Seed); reproducible for a given seed.
  static NDArray RandomNormal(const Shape& shape, float mean = 0.f, float stddev = 1.f,
                              DType dtype = DType::kFloat32);
  /// Samples U(low, high) from the global generator (see Seed); reproducible for a given seed.
  static NDArray RandomUniform(const Shape& shape, float low = 0.f, float high = 1.f,
                               DType dtype = DType::kFloat32);
  /// A symbolic value standing for `entry`.
  static NDArray FromEntry(NodeEntry entry);

  /// True for a default-constructed array (no storage and no graph entry).
  bool is_none() const { return !storage_ && !entry_.node; }
  /// True while tracing: the array stands for a graph entry and holds no values.
  bool is_symbolic() const { return entry_.node != nullptr; }
  /// The graph entry of a symbolic array (empty for a concrete one).
  const NodeEntry& entry() const { return entry_; }

  /// The shape.
  const Shape& shape() const { return shape_; }
  /// The element type.
  DType dtype() const { return dtype_; }
  /// The number of elements.
  int64_t size() const { return shape_.Size(); }
  /// The bytes of the elements (0 for a symbolic array).
  size_t nbytes() const;

  /// Raw element storage. Throws kUntraceable for symbolic arrays and kInvalidArgument for none.
  /// The non-const overloads count as a write: what kernels derived from these values (a
  /// convolution's re-laid-out weights) is made again at its next use. Write through the pointer
  /// before the next op or forward reads the array; to write later, fetch it again.
  void* raw_data();
  /// Read-only raw element storage, with the same errors.
  const void* raw_data() const;
  /// Like raw_data(), for callers that may write through the pointer at any later time (the C
  /// API hands it to foreign code): nothing derived from this storage is kept from then on.
  void* untracked_data();
  template <typename T>
  /// Typed element storage; throws kTypeError when T is not the array's dtype, and like raw_data()
  /// for symbolic and none arrays.
  T* data() {
    CheckElementType(DTypeOf<T>::value);
    return static_cast<T*>(raw_data());
  }
  template <typename T>
  /// Read-only typed element storage, checked like the mutable data().
  const T* data() const {
    CheckElementType(DTypeOf<T>::value);
    return static_cast<const T*>(raw_data());
  }

  /// A view with a new shape of the same size (no copy).
  NDArray Reshape(const Shape& shape) const;
  /// A deep copy.
  NDArray Copy() const;
  /// A converted copy (a plain copy when the dtype already matches).
  NDArray AsType(DType dtype) const;
  /// Copies values from `src` (same shape; dtypes are converted).
  void CopyFrom(const NDArray& src);
  /// Every element converted to float.
  std::vector<float> ToFloatVector() const;
  /// True when both share the same bytes.
  bool SharesStorageWith(const NDArray& other) const;

  /// MXNet's text form: values printed like numpy, then "<NDArray 1x2 @cpu(0)>";
  /// symbolic values print "<Symbol name>".
  std::string ToString() const;

 private:
  void CheckElementType(DType requested) const;

  friend struct internal::Storage;
  friend struct internal::TapeAccess;

  std::shared_ptr<internal::Storage> storage_;
  size_t offset_ = 0;
  Shape shape_;
  DType dtype_ = DType::kFloat32;
  NodeEntry entry_;
  // Autograd: this value is output `tape_output_` of `tape_node_` (a recorded op, or a marked
  // variable with output 0); null when the value is not on a tape.
  std::shared_ptr<internal::TapeNode> tape_node_;
  uint32_t tape_output_ = 0;
};

/// Prints array.ToString().
std::ostream& operator<<(std::ostream& os, const NDArray& array);

/// Seeds the global random generator used by NDArray::Random*, initializers and the random
/// sampling ops.
void Seed(uint64_t seed);

namespace internal {
/// Draws 64 bits from the global generator (thread-safe). A random op seeds its own engine with
/// one draw per call, so after Seed(s) a program's draws repeat, eager or in a graph.
uint64_t DrawRandomSeed();
}  // namespace internal

}  // namespace hybridnet
