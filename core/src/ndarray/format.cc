// NDArray::ToString prints what MXNet 1.x's NDArray.__repr__ prints: "\n" + str(asnumpy()) +
// "\n<NDArray 2x3 @cpu(0)>". The values follow numpy's array2string with its default options
// (precision 8, floatmode 'maxprec', linewidth 75, threshold 1000, edgeitems 3). Float digits
// come from the Dragon4 algorithm as numpy runs it (shortest digits that read back to the same
// value, cut at the precision), so the text matches numpy byte for byte.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "hybridnet/ndarray.h"
#include "hybridnet/symbol.h"

namespace hybridnet {

namespace {

constexpr int kPrecision = 8;
constexpr int kLineWidth = 75;
constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;

// Unsigned integer of any size: little-endian 32-bit limbs without leading zero limbs.
class BigUint {
 public:
  explicit BigUint(uint64_t value = 0) {
    if (value != 0) limbs_.push_back(static_cast<uint32_t>(value));
    if ((value >> 32) != 0) limbs_.push_back(static_cast<uint32_t>(value >> 32));
  }

  static BigUint Pow2(int n) {
    BigUint result(1);
    result.ShiftLeft(n);
    return result;
  }

  bool IsZero() const { return limbs_.empty(); }

  void ShiftLeft(int bits) {
    if (IsZero() || bits == 0) return;
    size_t limb_shift = static_cast<size_t>(bits) / 32;
    int bit_shift = bits % 32;
    limbs_.insert(limbs_.begin(), limb_shift, 0u);
    if (bit_shift == 0) return;
    uint32_t carry = 0;
    for (size_t i = limb_shift; i < limbs_.size(); ++i) {
      uint32_t limb = limbs_[i];
      limbs_[i] = (limb << bit_shift) | carry;
      carry = limb >> (32 - bit_shift);
    }
    if (carry != 0) limbs_.push_back(carry);
  }

  void Multiply(uint32_t factor) {
    uint64_t carry = 0;
    for (uint32_t& limb : limbs_) {
      uint64_t product = static_cast<uint64_t>(limb) * factor + carry;
      limb = static_cast<uint32_t>(product);
      carry = product >> 32;
    }
    if (carry != 0) limbs_.push_back(static_cast<uint32_t>(carry));
  }

  void MultiplyPow10(int n) {
    for (; n >= 9; n -= 9) Multiply(1000000000u);
    for (; n > 0; --n) Multiply(10u);
  }

  void Add(const BigUint& other) {
    if (other.limbs_.size() > limbs_.size()) limbs_.resize(other.limbs_.size(), 0u);
    uint64_t carry = 0;
    for (size_t i = 0; i < limbs_.size(); ++i) {
      uint64_t sum = carry + limbs_[i] + (i < other.limbs_.size() ? other.limbs_[i] : 0u);
      limbs_[i] = static_cast<uint32_t>(sum);
      carry = sum >> 32;
    }
    if (carry != 0) limbs_.push_back(static_cast<uint32_t>(carry));
  }

  // Requires *this >= other.
  void Subtract(const BigUint& other) {
    int64_t borrow = 0;
    for (size_t i = 0; i < limbs_.size(); ++i) {
      int64_t diff = static_cast<int64_t>(limbs_[i]) - borrow -
                     static_cast<int64_t>(i < other.limbs_.size() ? other.limbs_[i] : 0u);
      borrow = diff < 0 ? 1 : 0;
      limbs_[i] = static_cast<uint32_t>(diff + (borrow << 32));
    }
    while (!limbs_.empty() && limbs_.back() == 0) limbs_.pop_back();
  }

  // Replaces *this by *this mod divisor and returns the quotient, which must be below 10.
  uint32_t DivideSmallQuotient(const BigUint& divisor) {
    uint32_t quotient = 0;
    while (Compare(divisor) >= 0) {
      Subtract(divisor);
      ++quotient;
    }
    return quotient;
  }

  int Compare(const BigUint& other) const {
    if (limbs_.size() != other.limbs_.size()) return limbs_.size() < other.limbs_.size() ? -1 : 1;
    for (size_t i = limbs_.size(); i-- > 0;) {
      if (limbs_[i] != other.limbs_[i]) return limbs_[i] < other.limbs_[i] ? -1 : 1;
    }
    return 0;
  }

 private:
  std::vector<uint32_t> limbs_;
};

// An IEEE binary float taken apart: |value| = mantissa * 2^exponent.
struct FloatBits {
  bool negative = false;
  bool nan = false;
  bool inf = false;
  uint64_t mantissa = 0;
  int exponent = 0;
  // True for normal powers of two, whose gap to the next lower float is half the upper gap.
  bool unequal_margins = false;
};

FloatBits Decompose(uint64_t bits, int mantissa_bits, int exponent_bits) {
  FloatBits f;
  uint64_t fraction = bits & ((uint64_t{1} << mantissa_bits) - 1);
  int biased = static_cast<int>((bits >> mantissa_bits) & ((uint64_t{1} << exponent_bits) - 1));
  int bias = (1 << (exponent_bits - 1)) - 1;
  f.negative = ((bits >> (mantissa_bits + exponent_bits)) & 1u) != 0;
  if (biased == (1 << exponent_bits) - 1) {
    f.nan = fraction != 0;
    f.inf = fraction == 0;
  } else if (biased != 0) {
    f.mantissa = (uint64_t{1} << mantissa_bits) | fraction;
    f.exponent = biased - bias - mantissa_bits;
    f.unequal_margins = biased != 1 && fraction == 0;
  } else {
    f.mantissa = fraction;
    f.exponent = 1 - bias - mantissa_bits;
  }
  return f;
}

struct Digits {
  std::string digits;  // significant digits, the first one at 10^exponent
  int exponent = 0;
};

// Dragon4 in numpy's "unique" mode: the shortest digits that identify the value among its
// neighbours, stopping at cutoff_max digits (-1: none) and going on to at least cutoff_min
// digits (-1: none). Both count digits after the point, or all significant digits when
// total_length is set.
Digits Dragon4(const FloatBits& f, bool total_length, int cutoff_max, int cutoff_min) {
  if (f.mantissa == 0) return {"0", 0};
  // value / scale is the number and margin / scale half the distance to each neighbour.
  BigUint value(f.mantissa);
  BigUint scale;
  BigUint margin_low;
  int margin_factor = f.unequal_margins ? 2 : 1;
  int extra = f.unequal_margins ? 2 : 1;
  if (f.exponent > 0) {
    value.ShiftLeft(f.exponent + extra);
    scale = BigUint(uint64_t{1} << extra);
    margin_low = BigUint::Pow2(f.exponent);
  } else {
    value.ShiftLeft(extra);
    scale = BigUint::Pow2(extra - f.exponent);
    margin_low = BigUint(1);
  }
  auto high_margin = [&]() {
    BigUint m = margin_low;
    m.Multiply(static_cast<uint32_t>(margin_factor));
    return m;
  };
  BigUint margin_high = high_margin();
  bool even = (f.mantissa & 1u) == 0;

  int top_bit = 63;
  while (((f.mantissa >> top_bit) & 1u) == 0) --top_bit;
  // An estimate of floor(log10(value)) + 1 that is exact or one too low.
  int digit_exponent =
      static_cast<int>(std::ceil((top_bit + f.exponent) * 0.30102999566398119521 - 0.69));
  if (cutoff_max >= 0 && !total_length && digit_exponent <= -cutoff_max) {
    digit_exponent = -cutoff_max + 1;
  }
  if (digit_exponent > 0) {
    scale.MultiplyPow10(digit_exponent);
  } else if (digit_exponent < 0) {
    value.MultiplyPow10(-digit_exponent);
    margin_low.MultiplyPow10(-digit_exponent);
    margin_high = high_margin();
  }
  if (value.Compare(scale) >= 0) {
    ++digit_exponent;
  } else {
    value.Multiply(10);
    margin_low.Multiply(10);
    margin_high = high_margin();
  }

  bool has_max = cutoff_max >= 0;
  int cutoff_max_exponent = total_length ? digit_exponent - cutoff_max : -cutoff_max;
  int cutoff_min_exponent = digit_exponent;
  if (cutoff_min >= 0) {
    cutoff_min_exponent =
        std::min(cutoff_min_exponent, total_length ? digit_exponent - cutoff_min : -cutoff_min);
  }

  Digits out;
  out.exponent = digit_exponent - 1;
  bool low = false;
  bool high = false;
  uint32_t digit = 0;
  for (;;) {
    --digit_exponent;
    digit = value.DivideSmallQuotient(scale);
    BigUint value_high = value;
    value_high.Add(margin_high);
    int cmp_low = value.Compare(margin_low);
    int cmp_high = value_high.Compare(scale);
    low = even ? cmp_low <= 0 : cmp_low < 0;
    high = even ? cmp_high >= 0 : cmp_high > 0;
    if (((low || high) && digit_exponent <= cutoff_min_exponent) ||
        (has_max && digit_exponent == cutoff_max_exponent)) {
      break;
    }
    out.digits += static_cast<char>('0' + digit);
    value.Multiply(10);
    margin_low.Multiply(10);
    margin_high = high_margin();
  }

  // Round the last digit: toward the side still inside the margins, else to nearest (ties even).
  bool round_down = low;
  if (low == high) {
    value.Multiply(2);
    int cmp = value.Compare(scale);
    round_down = cmp < 0 || (cmp == 0 && digit % 2 == 0);
  }
  if (round_down) {
    out.digits += static_cast<char>('0' + digit);
  } else if (digit < 9) {
    out.digits += static_cast<char>('0' + digit + 1);
  } else {
    while (!out.digits.empty() && out.digits.back() == '9') out.digits.pop_back();
    if (out.digits.empty()) {
      out.digits = "1";
      ++out.exponent;
    } else {
      ++out.digits.back();
    }
  }
  return out;
}

// numpy's trim modes: 'k' keeps trailing zeros, '.' trims them, '0' trims them but keeps one
// digit after the point, '-' also drops a bare point.
enum class Trim { kKeep, kZeros, kLeaveOneZero, kDropPoint };

// Right-strips trailing zeros after the point; returns how many fraction digits are left.
int TrimZeros(std::string* s, int fraction_digits, Trim trim) {
  if (trim == Trim::kKeep || fraction_digits == 0) return fraction_digits;
  while (s->back() == '0') {
    s->pop_back();
    --fraction_digits;
  }
  if (s->back() == '.') {
    if (trim == Trim::kLeaveOneZero) {
      *s += '0';
      ++fraction_digits;
    } else if (trim == Trim::kDropPoint) {
      s->pop_back();
    }
  }
  return fraction_digits;
}

// numpy's dragon4_positional with unique=True, fractional=True. -1 disables an option.
std::string FormatPositional(const FloatBits& f, int precision, int min_digits, Trim trim,
                             int pad_left, int pad_right) {
  Digits d = Dragon4(f, /*total_length=*/false, precision, min_digits);
  int n = static_cast<int>(d.digits.size());
  std::string s = f.negative ? "-" : "";
  int whole_digits = 1;
  int fraction_digits = 0;
  if (d.exponent >= 0) {
    whole_digits = d.exponent + 1;
    if (n <= whole_digits) {
      s += d.digits + std::string(static_cast<size_t>(whole_digits - n), '0');
    } else {
      fraction_digits = n - whole_digits;
      s += d.digits.substr(0, static_cast<size_t>(whole_digits)) + "." +
           d.digits.substr(static_cast<size_t>(whole_digits));
    }
  } else {
    int zeros = -(d.exponent + 1);
    s += "0." + std::string(static_cast<size_t>(zeros), '0') + d.digits;
    fraction_digits = zeros + n;
  }
  if (trim != Trim::kDropPoint && fraction_digits == 0) s += '.';
  if (trim == Trim::kLeaveOneZero && fraction_digits == 0) {
    s += '0';
    ++fraction_digits;
  } else if (trim == Trim::kKeep && min_digits > fraction_digits) {
    s += std::string(static_cast<size_t>(min_digits - fraction_digits), '0');
    fraction_digits = min_digits;
  }
  fraction_digits = TrimZeros(&s, fraction_digits, trim);
  if (pad_right >= fraction_digits) {
    if (trim == Trim::kDropPoint && fraction_digits == 0) s += ' ';
    s += std::string(static_cast<size_t>(pad_right - fraction_digits), ' ');
  }
  int used = whole_digits + (f.negative ? 1 : 0);
  if (pad_left > used) s.insert(0, static_cast<size_t>(pad_left - used), ' ');
  return s;
}

// numpy's dragon4_scientific with unique=True. -1 disables an option.
std::string FormatScientific(const FloatBits& f, int precision, int min_digits, Trim trim,
                             int pad_left, int exp_digits) {
  std::string s;
  int used = f.negative ? 2 : 1;
  if (pad_left > used) s.assign(static_cast<size_t>(pad_left - used), ' ');
  if (f.negative) s += '-';
  Digits d = Dragon4(f, /*total_length=*/true, precision < 0 ? -1 : precision + 1,
                     min_digits < 0 ? -1 : min_digits + 1);
  s += d.digits[0];
  int fraction_digits = static_cast<int>(d.digits.size()) - 1;
  if (fraction_digits > 0) s += "." + d.digits.substr(1);
  if (trim != Trim::kDropPoint && fraction_digits == 0) s += '.';
  if (trim == Trim::kLeaveOneZero && fraction_digits == 0) {
    s += '0';
    ++fraction_digits;
  } else if (trim == Trim::kKeep && min_digits > fraction_digits) {
    s += std::string(static_cast<size_t>(min_digits - fraction_digits), '0');
  }
  // Unlike the positional form, a trimmed scientific number keeps a bare point in '-' mode.
  if (trim != Trim::kKeep && fraction_digits > 0) {
    TrimZeros(&s, fraction_digits, trim == Trim::kDropPoint ? Trim::kZeros : trim);
  }
  int exponent = d.exponent;
  s += exponent < 0 ? "e-" : "e+";
  std::string exp_text = std::to_string(exponent < 0 ? -exponent : exponent);
  size_t width = static_cast<size_t>(exp_digits < 0 ? 2 : std::min(exp_digits, 5));
  if (exp_text.size() < width) exp_text.insert(0, width - exp_text.size(), '0');
  return s + exp_text;
}

bool IsFloat(DType dtype) {
  return dtype == DType::kFloat16 || dtype == DType::kBFloat16 || dtype == DType::kFloat32 ||
         dtype == DType::kFloat64;
}

// Reads element i of a float array as raw bits.
FloatBits FloatAt(const void* data, DType dtype, int64_t i) {
  auto at = [&](auto tag) {
    decltype(tag) bits;
    std::memcpy(&bits, static_cast<const uint8_t*>(data) + i * static_cast<int64_t>(sizeof(bits)),
                sizeof(bits));
    return static_cast<uint64_t>(bits);
  };
  switch (dtype) {
    case DType::kFloat16:
      return Decompose(at(uint16_t{}), 10, 5);
    case DType::kBFloat16:
      return Decompose(at(uint16_t{}), 7, 8);
    case DType::kFloat32:
      return Decompose(at(uint32_t{}), 23, 8);
    default:
      return Decompose(at(uint64_t{}), 52, 11);
  }
}

double Magnitude(const FloatBits& f) {
  return std::ldexp(static_cast<double>(f.mantissa), f.exponent);
}

// Rounds an exact double result to the dtype, as numpy's arithmetic in that dtype would.
double RoundTo(DType dtype, double value) {
  switch (dtype) {
    case DType::kFloat16:
      return HalfToFloat(FloatToHalf(static_cast<float>(value)));
    case DType::kBFloat16:
      return BFloat16ToFloat(FloatToBFloat16(static_cast<float>(value)));
    case DType::kFloat32:
      return static_cast<float>(value);
    default:
      return value;
  }
}

// numpy's FloatingFormat: one layout (positional or scientific, paddings) for all elements.
class FloatFormat {
 public:
  FloatFormat(DType dtype, const std::vector<FloatBits>& values) {
    std::vector<const FloatBits*> finite;
    bool has_nonfinite = false;
    bool negative_inf = false;
    for (const FloatBits& f : values) {
      if (f.nan || f.inf) {
        has_nonfinite = true;
        negative_inf = negative_inf || (f.inf && f.negative);
      } else {
        finite.push_back(&f);
      }
    }
    double max_abs = 0;
    double min_abs = 0;
    for (const FloatBits* f : finite) {
      if (f->mantissa == 0) continue;
      double m = Magnitude(*f);
      max_abs = std::max(max_abs, m);
      min_abs = min_abs == 0 ? m : std::min(min_abs, m);
    }
    if (max_abs != 0) {
      // The ratio is computed in the array's dtype, as numpy divides two of its scalars.
      double ratio =
          dtype == DType::kFloat64
              ? max_abs / min_abs
              : RoundTo(dtype, static_cast<float>(max_abs) / static_cast<float>(min_abs));
      scientific_ = max_abs >= 1e8 || min_abs < 1e-4 || ratio > 1000.;
    }

    if (finite.empty()) {
      pad_left_ = 0;
      pad_right_ = 0;
    } else if (scientific_) {
      size_t int_width = 0;
      size_t frac_width = 0;
      size_t exp_width = 0;
      for (const FloatBits* f : finite) {
        std::string s = FormatScientific(*f, kPrecision, -1, Trim::kZeros, -1, -1);
        size_t e = s.find('e');
        size_t dot = s.find('.');
        int_width = std::max(int_width, dot);
        frac_width = std::max(frac_width, e - dot - 1);
        exp_width = std::max(exp_width, s.size() - e - 1);
      }
      exp_size_ = static_cast<int>(exp_width) - 1;
      precision_ = static_cast<int>(frac_width);
      min_digits_ = precision_;
      trim_ = Trim::kKeep;
      pad_left_ = static_cast<int>(int_width);
      pad_right_ = exp_size_ + 2 + precision_;
    } else {
      size_t int_width = 0;
      size_t frac_width = 0;
      for (const FloatBits* f : finite) {
        std::string s = FormatPositional(*f, kPrecision, -1, Trim::kZeros, -1, -1);
        size_t dot = s.find('.');
        int_width = std::max(int_width, dot);
        frac_width = std::max(frac_width, s.size() - dot - 1);
      }
      pad_left_ = static_cast<int>(int_width);
      pad_right_ = static_cast<int>(frac_width);
      min_digits_ = 0;
    }
    if (has_nonfinite) {
      int offset = pad_right_ + 1;
      pad_left_ = std::max({pad_left_, 3 - offset, 3 + (negative_inf ? 1 : 0) - offset});
    }
  }

  std::string operator()(const FloatBits& f) const {
    if (f.nan || f.inf) {
      std::string text = f.nan ? "nan" : (f.negative ? "-inf" : "inf");
      int width = pad_left_ + pad_right_ + 1;
      int pad = std::max(0, width - static_cast<int>(text.size()));
      return std::string(static_cast<size_t>(pad), ' ') + text;
    }
    if (scientific_) {
      return FormatScientific(f, precision_, min_digits_, trim_, pad_left_, exp_size_);
    }
    return FormatPositional(f, precision_, min_digits_, trim_, pad_left_, pad_right_);
  }

 private:
  bool scientific_ = false;
  int precision_ = kPrecision;
  int min_digits_ = -1;
  Trim trim_ = Trim::kZeros;
  int pad_left_ = 0;
  int pad_right_ = 0;
  int exp_size_ = -1;
};

std::string IntegerAt(const void* data, DType dtype, int64_t i) {
  auto text = [&](auto tag) {
    decltype(tag) v;
    std::memcpy(&v, static_cast<const uint8_t*>(data) + i * static_cast<int64_t>(sizeof(v)),
                sizeof(v));
    return std::to_string(v);
  };
  switch (dtype) {
    case DType::kUint8:
      return text(uint8_t{});
    case DType::kInt8:
      return text(int8_t{});
    case DType::kInt16:
      return text(int16_t{});
    case DType::kUint16:
      return text(uint16_t{});
    case DType::kInt32:
      return text(int32_t{});
    case DType::kUint32:
      return text(uint32_t{});
    case DType::kInt64:
      return text(int64_t{});
    default:
      return text(uint64_t{});
  }
}

// numpy's str() of a 0-d array: the scalar's own str, never cut to the print precision.
std::string ScalarText(const void* data, DType dtype) {
  if (dtype == DType::kBool) return *static_cast<const uint8_t*>(data) ? "True" : "False";
  if (!IsFloat(dtype)) return IntegerAt(data, dtype, 0);
  FloatBits f = FloatAt(data, dtype, 0);
  if (f.nan) return "nan";
  if (f.inf) return f.negative ? "-inf" : "inf";
  double m = Magnitude(f);
  if (m == 0 || (m >= 1e-4 && m < 1e16)) {
    return FormatPositional(f, -1, -1, Trim::kLeaveOneZero, -1, -1);
  }
  return FormatScientific(f, -1, -1, Trim::kDropPoint, -1, -1);
}

// numpy's _formatArray over a C-contiguous array, summarized with "..." above kThreshold.
class ArrayPrinter {
 public:
  explicit ArrayPrinter(const NDArray& array)
      : shape_(array.shape()),
        dtype_(array.dtype()),
        data_(array.raw_data()),
        strides_(shape_.ndim(), 1),
        summarize_(array.size() > kThreshold) {
    for (size_t axis = shape_.ndim(); axis-- > 1;) {
      strides_[axis - 1] = strides_[axis] * shape_[axis];
    }
  }

  std::string Print() {
    if (shape_.ndim() == 0) return ScalarText(data_, dtype_);
    if (shape_.Size() == 0) return "[]";
    // Paddings and the notation depend on the printed elements only, as in numpy.
    std::vector<int64_t> printed;
    Collect(0, 0, &printed);
    if (IsFloat(dtype_)) {
      std::vector<FloatBits> values;
      for (int64_t i : printed) values.push_back(FloatAt(data_, dtype_, i));
      FloatFormat format(dtype_, values);
      element_ = [this, format](int64_t i) { return format(FloatAt(data_, dtype_, i)); };
    } else if (dtype_ == DType::kBool) {
      element_ = [this](int64_t i) {
        return static_cast<const uint8_t*>(data_)[i] ? std::string(" True") : "False";
      };
    } else {
      size_t width = 0;
      for (int64_t i : printed) width = std::max(width, IntegerAt(data_, dtype_, i).size());
      element_ = [this, width](int64_t i) {
        std::string s = IntegerAt(data_, dtype_, i);
        return std::string(width - s.size(), ' ') + s;
      };
    }
    return Recurse(0, 0, " ", kLineWidth);
  }

 private:
  bool Summarized(size_t axis) const { return summarize_ && shape_[axis] > 2 * kEdgeItems; }

  void Collect(size_t axis, int64_t offset, std::vector<int64_t>* out) const {
    if (axis == shape_.ndim()) {
      out->push_back(offset);
      return;
    }
    for (int64_t k = 0; k < shape_[axis]; ++k) {
      if (Summarized(axis) && k == kEdgeItems) k = shape_[axis] - kEdgeItems;
      Collect(axis + 1, offset + k * strides_[axis], out);
    }
  }

  std::string Recurse(size_t axis, int64_t offset, const std::string& indent, int width) const {
    if (axis == shape_.ndim()) return element_(offset);
    int64_t n = shape_[axis];
    bool summary = Summarized(axis);
    int64_t leading = summary ? kEdgeItems : 0;
    int64_t trailing = summary ? kEdgeItems : n;
    auto child = [&](int64_t k) {
      return Recurse(axis + 1, offset + k * strides_[axis], indent + ' ', width - 1);
    };
    std::string s;
    if (axis + 1 == shape_.ndim()) {
      // Room for the closing bracket is kept on every line.
      int elem_width = width - 1;
      std::string line = indent;
      auto extend = [&](const std::string& word) {
        if (static_cast<int>(line.size() + word.size()) > elem_width &&
            line.size() > indent.size()) {
          s += line.substr(0, line.find_last_not_of(' ') + 1) + "\n";
          line = indent;
        }
        line += word;
      };
      for (int64_t k = 0; k < leading; ++k) {
        extend(child(k));
        line += ' ';
      }
      if (summary) {
        extend("...");
        line += ' ';
      }
      for (int64_t k = trailing; k > 1; --k) {
        extend(child(n - k));
        line += ' ';
      }
      extend(child(n - 1));
      s += line;
    } else {
      // Blocks are separated by one blank line per extra dimension.
      std::string separator(shape_.ndim() - axis - 1, '\n');
      for (int64_t k = 0; k < leading; ++k) s += indent + child(k) + separator;
      if (summary) s += indent + "..." + separator;
      for (int64_t k = trailing; k > 1; --k) s += indent + child(n - k) + separator;
      s += indent + child(n - 1);
    }
    return "[" + s.substr(indent.size()) + "]";
  }

  const Shape& shape_;
  DType dtype_;
  const void* data_;
  std::vector<int64_t> strides_;
  bool summarize_;
  std::function<std::string(int64_t)> element_;
};

}  // namespace

std::string NDArray::ToString() const {
  if (is_symbolic()) return "<Symbol " + entry_.node->name() + ">";
  if (is_none()) return "<NDArray none @cpu(0)>";
  return "\n" + ArrayPrinter(*this).Print() + "\n<NDArray " + shape_.ToShortString() + " @cpu(0)>";
}

}  // namespace hybridnet
