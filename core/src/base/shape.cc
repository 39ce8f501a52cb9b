#include "hybridnet/shape.h"

#include <cctype>
#include <sstream>
#include <stdexcept>

#include "hybridnet/base.h"

namespace hybridnet {

bool Shape::IsKnown() const {
  if (ndim_ == 0) return false;
  for (int64_t d : *this)
    if (d <= 0) return false;
  return true;
}

int64_t Shape::Size() const {
  int64_t size = 1;
  for (int64_t d : *this) size *= d;
  return size;
}

std::string Shape::ToString() const {
  std::ostringstream os;
  os << '(';
  for (size_t i = 0; i < ndim_; ++i) os << (i ? ", " : "") << (*this)[i];
  if (ndim_ == 1) os << ',';
  os << ')';
  return os.str();
}

std::string Shape::ToShortString() const {
  std::ostringstream os;
  for (size_t i = 0; i < ndim_; ++i) os << (i ? "x" : "") << (*this)[i];
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Shape& shape) { return os << shape.ToString(); }

std::vector<int64_t> ParseIntTuple(const std::string& text) {
  auto fail = [&text]() {
    HN_THROW(kInvalidArgument) << "'" << text << "' is not a tuple of integers such as (3, 3)";
  };
  size_t i = 0;
  auto skip_space = [&]() {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  auto read_int = [&](int64_t* value) {
    size_t start = i;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
    size_t digits = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    if (i == digits) return false;
    try {
      *value = std::stoll(text.substr(start, i - start));
    } catch (const std::out_of_range&) {
      HN_THROW(kInvalidArgument) << "'" << text << "': integer " << text.substr(start, i - start)
                                 << " does not fit in 64 bits";
    }
    if (i < text.size() && (text[i] == 'L' || text[i] == 'l')) ++i;  // Python 2 longs
    return true;
  };
  std::vector<int64_t> dims;
  skip_space();
  if (i == text.size()) fail();
  char open = text[i];
  if (open != '(' && open != '[') {
    int64_t value = 0;
    if (!read_int(&value)) fail();
    skip_space();
    if (i != text.size()) fail();
    return {value};
  }
  char close = open == '(' ? ')' : ']';
  ++i;
  skip_space();
  if (i < text.size() && text[i] == close) {
    ++i;
  } else {
    while (true) {
      int64_t value = 0;
      skip_space();
      if (!read_int(&value)) fail();
      dims.push_back(value);
      skip_space();
      if (i < text.size() && text[i] == ',') {
        ++i;
        skip_space();
        if (i < text.size() && text[i] == close) {
          ++i;
          break;
        }
        continue;
      }
      if (i < text.size() && text[i] == close) {
        ++i;
        break;
      }
      fail();
    }
  }
  skip_space();
  if (i != text.size()) fail();
  return dims;
}

Shape ParseShape(const std::string& text) {
  if (text == "None") return Shape();
  return Shape(ParseIntTuple(text));
}

bool MergeShape(const Shape& known, Shape* target) {
  if (known.ndim() == 0) return true;
  if (target->ndim() == 0) {
    *target = known;
    return true;
  }
  if (known.ndim() != target->ndim()) return false;
  for (size_t i = 0; i < known.ndim(); ++i) {
    if (known[i] == 0) continue;
    if ((*target)[i] == 0) {
      (*target)[i] = known[i];
    } else if ((*target)[i] != known[i]) {
      return false;
    }
  }
  return true;
}

}  // namespace hybridnet
