// Layer options: one struct per layer family holding MXNet's keyword arguments as named fields
// with MXNet's defaults, e.g. ConvOptions for Conv1D ... Conv3DTranspose.
//
//   // C++20: designated initializers (every field not named keeps its default)
//   auto conv = std::make_shared<Conv2D>(ConvOptions{.channels = 64, .kernel_size = 3, .padding = 1});
//   // C++17: the setters each field comes with
//   auto conv = std::make_shared<Conv2D>(ConvOptions().set_channels(64).set_kernel_size(3).set_padding(1));
//
// A field is declared once, with its type, name and default:
//
//   struct ConvOptions {
//     HN_LAYER_OPTION(ConvOptions, IntTuple, padding) = 0;  ///< zero padding per side
//     HN_LAYER_OPTION(ConvOptions, std::string, layout) = {};  ///< "" = by rank
//   };
#pragma once

#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

/// Declares the field `name` of `Options` (write its default after the macro, `= {}` for a
/// value-initialized one: every field has an initializer, so designated initializers may leave
/// any out) and the setter `set_name(value)`, which returns the options for chaining. The struct
/// stays an aggregate.
#define HN_LAYER_OPTION(Options, Type, name) \
  Options& set_##name(Type value) {          \
    name = std::move(value);                 \
    return *this;                            \
  }                                          \
  Type name

namespace hybridnet {
namespace gluon {

/// An int or a tuple of ints, as MXNet layers take kernel sizes, strides and padding:
/// kernel_size 3 equals (3, 3) for a 2-D layer. Empty means "not given" (None).
class IntTuple {
 public:
  IntTuple() = default;
  /// One int, repeated for every spatial dimension by Expand.
  IntTuple(int64_t value) : values_{value}, scalar_(true) {}  // NOLINT: implicit by design
  /// A tuple with one value per spatial dimension.
  IntTuple(std::initializer_list<int64_t> values) : values_(values) {}
  /// A tuple with one value per spatial dimension.
  IntTuple(std::vector<int64_t> values) : values_(std::move(values)) {}  // NOLINT

  /// True when nothing was given (MXNet's None).
  bool empty() const { return values_.empty(); }
  /// The values as given (one for an int).
  const std::vector<int64_t>& values() const { return values_; }
  /// The values for `rank` spatial dimensions: a single int is repeated; a tuple must have
  /// `rank` entries (kInvalidArgument naming `what` otherwise).
  std::vector<int64_t> Expand(size_t rank, const char* what) const;

 private:
  std::vector<int64_t> values_;
  bool scalar_ = false;
};

}  // namespace gluon
}  // namespace hybridnet
