// Tensor shapes with MXNet's legacy conventions for partial information:
// ndim 0 means "unknown shape" and a dimension of 0 means "unknown dimension".
#pragma once

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

namespace hybridnet {

/// The dimensions of a tensor, outermost first (C order).
class Shape {
 public:
  /// From dimensions: `Shape{1, 512}`, a vector, or an iterator range.
  ///@{
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  explicit Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}
  template <typename It>
  Shape(It first, It last) : dims_(first, last) {}
  ///@}

  /// The number of dimensions.
  size_t ndim() const { return dims_.size(); }
  /// Dimension `i` (unchecked) and the dimensions, read-only or writable.
  ///@{
  int64_t operator[](size_t i) const { return dims_[i]; }
  int64_t& operator[](size_t i) { return dims_[i]; }
  const std::vector<int64_t>& dims() const { return dims_; }
  std::vector<int64_t>& dims() { return dims_; }
  ///@}
  /// Iteration over the dimensions.
  ///@{
  const int64_t* begin() const { return dims_.data(); }
  const int64_t* end() const { return dims_.data() + dims_.size(); }
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
  bool operator==(const Shape& other) const { return dims_ == other.dims_; }
  bool operator!=(const Shape& other) const { return dims_ != other.dims_; }
  ///@}

 private:
  std::vector<int64_t> dims_;
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
