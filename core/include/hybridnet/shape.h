// Tensor shapes with MXNet's legacy conventions for partial information:
// ndim 0 means "unknown shape" and a dimension of 0 means "unknown dimension".
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace hybridnet {

/// The dimensions of a tensor, outermost first (C order). Up to kInlineDims dimensions live in
/// the object itself: every NDArray holds a Shape, and a training step of a small network copied
/// them a few hundred times (a heap allocation each while they were a std::vector).
class Shape {
 public:
  /// The most dimensions a Shape holds without a heap allocation.
  static constexpr size_t kInlineDims = 6;

  /// From dimensions: `Shape{1, 512}`, a vector, or an iterator range.
  ///@{
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) { Assign(dims.begin(), dims.size()); }
  explicit Shape(const std::vector<int64_t>& dims) { Assign(dims.data(), dims.size()); }
  template <typename It>
  Shape(It first, It last) {
    const size_t ndim = static_cast<size_t>(std::distance(first, last));
    std::copy_n(first, ndim, Resize(ndim));
  }
  ///@}

  /// Copies and moves (a copy never shares the dimensions).
  ///@{
  Shape(const Shape& other) { Assign(other.begin(), other.ndim_); }
  Shape(Shape&& other) noexcept { Take(&other); }
  Shape& operator=(const Shape& other) {
    if (this != &other) Assign(other.begin(), other.ndim_);
    return *this;
  }
  Shape& operator=(Shape&& other) noexcept {
    if (this != &other) Take(&other);
    return *this;
  }
  ///@}

  /// The number of dimensions.
  size_t ndim() const { return ndim_; }
  /// Dimension `i` (unchecked).
  ///@{
  int64_t operator[](size_t i) const { return data()[i]; }
  int64_t& operator[](size_t i) { return data()[i]; }
  ///@}
  /// The dimensions as a vector (a copy).
  std::vector<int64_t> dims() const { return std::vector<int64_t>(begin(), end()); }
  /// Iteration over the dimensions; begin() is also the dimensions as a C array, valid while
  /// this Shape lives unchanged.
  ///@{
  const int64_t* begin() const { return data(); }
  const int64_t* end() const { return data() + ndim_; }
  ///@}

  /// Known = ndim > 0 and every dimension > 0.
  bool IsKnown() const;
  /// Product of the dimensions (1 for ndim 0).
  int64_t Size() const;
  /// Python tuple text, as MXNet writes it: "(1, 512)", "(10,)", "()".
  std::string ToString() const;
  /// "1x512", as MXNet prints NDArrays.
  std::string ToShortString() const;

  /// Same dimensions.
  ///@{
  bool operator==(const Shape& other) const {
    return ndim_ == other.ndim_ && std::equal(begin(), end(), other.begin());
  }
  bool operator!=(const Shape& other) const { return !(*this == other); }
  ///@}

 private:
  int64_t* data() { return heap_ ? heap_.get() : inline_; }
  const int64_t* data() const { return heap_ ? heap_.get() : inline_; }
  // Room for ndim dimensions, uninitialized; the heap holds them only beyond kInlineDims.
  int64_t* Resize(size_t ndim) {
    ndim_ = ndim;
    if (ndim <= kInlineDims) {
      heap_.reset();
      return inline_;
    }
    heap_.reset(new int64_t[ndim]);
    return heap_.get();
  }
  void Assign(const int64_t* dims, size_t ndim) { std::copy_n(dims, ndim, Resize(ndim)); }
  void Take(Shape* other) {
    ndim_ = other->ndim_;
    heap_ = std::move(other->heap_);
    if (!heap_) std::copy(other->inline_, other->inline_ + ndim_, inline_);
    other->ndim_ = 0;
  }

  size_t ndim_ = 0;
  int64_t inline_[kInlineDims] = {};
  std::unique_ptr<int64_t[]> heap_;
};

/// Prints shape.ToString(): "(2, 3)", "(5,)".
std::ostream& operator<<(std::ostream& os, const Shape& shape);

/// Parses MXNet's tuple syntax: "(3, 3)", "(3,3)", "[3, 3]", "(3,)", "()", "3", "None" (unknown
/// -> ndim 0 shape with is_none set), a trailing 'L' after an integer is skipped. Throws
/// kInvalidArgument on anything else.
std::vector<int64_t> ParseIntTuple(const std::string& text);
/// ParseIntTuple's values as a Shape; "None" gives the unknown shape.
Shape ParseShape(const std::string& text);

/// Merges `known` into `*target` dimension by dimension (0 = unknown on either side). Returns
/// false on a conflict (different ndim with both known, or two different known dims).
bool MergeShape(const Shape& known, Shape* target);

}  // namespace hybridnet
