// Layer options: one struct per layer family holding MXNet's keyword arguments as named fields
// with MXNet's defaults, e.g. ConvOptions for Conv1D ... Conv3DTranspose.
//
//   // C++20: designated initializers (every field not named keeps its default)
//   auto conv = std::make_shared<Conv2D>(ConvOptions{.channels = 64, .kernel_size = 3, .padding =
//   1});
//   // C++17: the setters each field comes with
//   auto conv =
//   std::make_shared<Conv2D>(ConvOptions().set_channels(64).set_kernel_size(3).set_padding(1));
//
// A field is declared once, with its type, name and default, between the two markers; the
// members, the setters and the field list ForEachField walks (the C API reads string
// attributes through it) all come from that one line:
//
//   struct ConvOptions {
//     HN_LAYER_OPTIONS_BEGIN;
//     HN_REQUIRED_LAYER_OPTION(ConvOptions, int64_t, channels) = 0;
//     HN_LAYER_OPTION(ConvOptions, IntTuple, padding) = 0;     ///< zero padding per side
//     HN_LAYER_OPTION(ConvOptions, std::string, layout) = {};  ///< "" = by rank
//     HN_LAYER_OPTIONS_END;
//   };
//
//   ForEachField(options, [](const char* name, auto& value, bool required) { ... });
#pragma once

#include <cstdint>
#include <initializer_list>
#include <type_traits>
#include <utility>
#include <vector>

/// Declares the field `name` of `Options` (write its default after the macro, `= {}` for a
/// value-initialized one: every field has an initializer, so designated initializers may leave
/// any out), the setter `set_name(value)`, which returns the options for chaining, and the
/// field's entry in the list ForEachField walks. The struct stays an aggregate. One field per
/// line: the entry is keyed by the line number.
#define HN_LAYER_OPTION(Options, Type, name) HN_LAYER_OPTION_IMPL_(Options, Type, name, false)
/// A field the C API requires (hn_block_create fails naming it when it is missing).
#define HN_REQUIRED_LAYER_OPTION(Options, Type, name) \
  HN_LAYER_OPTION_IMPL_(Options, Type, name, true)
/// Open and close the fields of an options struct (ForEachField looks between the two lines).
#define HN_LAYER_OPTIONS_BEGIN static constexpr int kHnFieldsBegin = __LINE__
#define HN_LAYER_OPTIONS_END static constexpr int kHnFieldsEnd = __LINE__

#define HN_LAYER_OPTION_IMPL_(Options, Type, name, required)                        \
  static constexpr ::hybridnet::gluon::internal::LayerField<Options, Type> HnField( \
      ::hybridnet::gluon::internal::Line<__LINE__>) {                               \
    return {#name, &Options::name, required};                                       \
  }                                                                                 \
  Options& set_##name(Type value) {                                                 \
    name = std::move(value);                                                        \
    return *this;                                                                   \
  }                                                                                 \
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

namespace internal {

// A field's entry is an overload HnField(Line<its line>): the struct needs no second list of its
// fields, and ForEachField finds them by trying each line between the BEGIN and END markers.
template <int kLine>
struct Line {};

// What HN_LAYER_OPTION records of a field: MXNet's keyword, the member, whether it is required.
template <typename Options, typename Type>
struct LayerField {
  const char* name;
  Type Options::*member;
  bool required;
};

template <typename Options, int kLine, typename = void>
struct HasFieldAt : std::false_type {};
template <typename Options, int kLine>
struct HasFieldAt<Options, kLine, std::void_t<decltype(Options::HnField(Line<kLine>{}))>>
    : std::true_type {};

template <typename Options, typename Visitor, int... kOffsets>
void VisitFields(Options& options, Visitor& visit, std::integer_sequence<int, kOffsets...>) {
  using Plain = std::remove_const_t<Options>;
  auto visit_line = [&](auto line) {
    constexpr int kLine = decltype(line)::value;
    if constexpr (HasFieldAt<Plain, kLine>::value) {
      constexpr auto field = Plain::HnField(Line<kLine>{});
      visit(field.name, options.*(field.member), field.required);
    }
  };
  (visit_line(std::integral_constant<int, Plain::kHnFieldsBegin + kOffsets>{}), ...);
}

}  // namespace internal

/// Calls visit(MXNet name, field, required) for every field of `options` declared with
/// HN_LAYER_OPTION, in declaration order: how the C API reads string attributes into options.
template <typename Options, typename Visitor>
void ForEachField(Options& options, Visitor&& visit) {
  using Plain = std::remove_const_t<Options>;
  constexpr int kLines = Plain::kHnFieldsEnd - Plain::kHnFieldsBegin;
  internal::VisitFields(options, visit, std::make_integer_sequence<int, kLines>{});
}

}  // namespace gluon
}  // namespace hybridnet
