// numpy .npy reader and writer. Layout: "\x93NUMPY", major and minor version bytes, the header
// length (u16 in 1.0, u32 in 2.0 and 3.0), then the header, a Python dict literal such as
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with spaces and a final
// '\n' so the data starts on a 64-byte boundary, then the elements in C order.

#include "hybridnet/npy.h"

#include <cctype>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "io/params_record.h"

namespace hybridnet {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
constexpr size_t kAlign = 64;

struct NpyType {
  const char* code;
  DType dtype;
};

constexpr NpyType kNpyTypes[] = {
    {"f4", DType::kFloat32}, {"f8", DType::kFloat64}, {"f2", DType::kFloat16},
    {"u1", DType::kUint8},   {"i1", DType::kInt8},    {"i2", DType::kInt16},
    {"u2", DType::kUint16},  {"i4", DType::kInt32},   {"u4", DType::kUint32},
    {"i8", DType::kInt64},   {"u8", DType::kUint64},  {"b1", DType::kBool},
};

// A value of the header dict: a string, a bool or a tuple of integers.
struct HeaderValue {
  enum Kind { kString, kBool, kTuple } kind = kString;
  std::string text;
  bool flag = false;
  std::vector<int64_t> tuple;
};

// Parses the Python literal numpy writes (and what other writers produce: either quote style,
// any spacing, trailing commas, Python 2 'L' suffixes).
class HeaderParser {
 public:
  HeaderParser(const std::string& header, const std::string& source)
      : text_(header), source_(source) {}

  std::map<std::string, HeaderValue> ParseDict() {
    std::map<std::string, HeaderValue> dict;
    Expect('{');
    while (!Peek('}')) {
      std::string key = ParseString();
      Expect(':');
      HeaderValue value = ParseValue();
      HN_CHECK(dict.emplace(key, value).second, kFormatError)
          << source_ << ": .npy header repeats the key '" << key << "'";
      ExpectSeparator('}');
    }
    Expect('}');
    SkipSpace();
    HN_CHECK(pos_ == text_.size(), kFormatError)
        << source_ << ": unexpected text after the .npy header dict at column " << pos_;
    return dict;
  }

 private:
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  bool Peek(char c) {
    SkipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }

  [[noreturn]] void Fail(const std::string& expected) {
    std::string shown = text_.substr(0, text_.find_last_not_of(" \n") + 1);
    HN_THROW(kFormatError) << source_ << ": malformed .npy header: expected " << expected
                           << " at column " << pos_ << " of \"" << shown << "\"";
  }

  void Expect(char c) {
    if (!Peek(c)) Fail(std::string("'") + c + "'");
    ++pos_;
  }

  // After an item: a comma, or the closing bracket (left for the caller).
  void ExpectSeparator(char close) {
    if (Peek(close)) return;
    if (!Peek(',')) Fail(std::string("',' or '") + close + "'");
    ++pos_;
  }

  std::string ParseString() {
    SkipSpace();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) Fail("a string");
    char quote = text_[pos_++];
    size_t end = text_.find(quote, pos_);
    if (end == std::string::npos) Fail("a closing quote");
    std::string s = text_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return s;
  }

  int64_t ParseInt() {
    SkipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    if (pos_ == start || pos_ - start > 18) Fail("a non-negative dimension below 10^18");
    int64_t value = std::stoll(text_.substr(start, pos_ - start));
    if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;
    return value;
  }

  HeaderValue ParseValue() {
    SkipSpace();
    HeaderValue v;
    if (Peek('\'') || Peek('"')) {
      v.text = ParseString();
    } else if (text_.compare(pos_, 4, "True") == 0 || text_.compare(pos_, 5, "False") == 0) {
      v.kind = HeaderValue::kBool;
      v.flag = text_[pos_] == 'T';
      pos_ += v.flag ? 4 : 5;
    } else if (Peek('[')) {
      HN_THROW(kUnsupported) << source_
                             << ": .npy files of structured dtypes (a list descr) "
                                "are not supported";
    } else if (Peek('(')) {
      v.kind = HeaderValue::kTuple;
      ++pos_;
      while (!Peek(')')) {
        v.tuple.push_back(ParseInt());
        ExpectSeparator(')');
      }
      ++pos_;
    } else {
      Fail("a string, True, False or a tuple of integers");
    }
    return v;
  }

  const std::string& text_;
  const std::string& source_;
  size_t pos_ = 0;
};

DType ParseDescr(const std::string& descr, const std::string& source) {
  HN_CHECK(descr.size() >= 2, kFormatError)
      << source << ": .npy descr '" << descr << "' is not a numpy type string such as '<f4'";
  char order = descr[0];
  std::string code = descr.substr(1);
  for (const NpyType& t : kNpyTypes) {
    if (code != t.code) continue;
    bool single_byte = DTypeSize(t.dtype) == 1;
    HN_CHECK(order != '>' || single_byte, kUnsupported)
        << source << ": big-endian .npy data ('" << descr
        << "') is not supported; save it little-endian (e.g. a.astype(a.dtype.newbyteorder('<')))";
    HN_CHECK(order == '<' || order == '|' || order == '>', kFormatError)
        << source << ": .npy descr '" << descr << "' has an unknown byte order '" << order
        << "' (expected '<' or '|')";
    return t.dtype;
  }
  HN_THROW(kUnsupported) << source << ": .npy dtype '" << descr
                         << "' is not supported (expected f2, f4, f8, i1, i2, i4, i8, u1, u2, "
                            "u4, u8 or b1, little-endian)";
}

const char* NpyCode(DType dtype) {
  for (const NpyType& t : kNpyTypes)
    if (t.dtype == dtype) return t.code;
  HN_THROW(kUnsupported) << "SaveNpy: dtype " << DTypeName(dtype) << " has no numpy equivalent";
}

uint64_t ReadLittleEndian(const std::string& bytes, size_t offset, size_t size) {
  uint64_t value = 0;
  for (size_t i = 0; i < size; ++i) {
    value |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[offset + i])) << (8 * i);
  }
  return value;
}

void AppendLittleEndian(std::string* out, uint64_t value, size_t size) {
  for (size_t i = 0; i < size; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xffu));
}

}  // namespace

NDArray ParseNpy(const std::string& bytes, const std::string& source_name) {
  const std::string& src = source_name;
  HN_CHECK(bytes.size() >= kMagicSize && bytes.compare(0, kMagicSize, kMagic) == 0, kFormatError)
      << src << ": not a .npy file (expected the magic \"\\x93NUMPY\" at byte 0)";
  HN_CHECK(bytes.size() >= kMagicSize + 2, kFormatError)
      << src << ": truncated .npy file: the version bytes are missing";
  int major = static_cast<uint8_t>(bytes[6]);
  int minor = static_cast<uint8_t>(bytes[7]);
  HN_CHECK(minor == 0 && major >= 1 && major <= 3, kFormatError)
      << src << ": .npy version " << major << "." << minor
      << " is not one of the known versions 1.0, 2.0 and 3.0";
  size_t length_size = major == 1 ? 2 : 4;
  size_t header_start = kMagicSize + 2 + length_size;
  HN_CHECK(bytes.size() >= header_start, kFormatError)
      << src << ": truncated .npy file: the header length is missing";
  uint64_t header_size = ReadLittleEndian(bytes, kMagicSize + 2, length_size);
  HN_CHECK(header_size <= bytes.size() - header_start, kFormatError)
      << src << ": truncated .npy header: " << header_size << " bytes announced, "
      << bytes.size() - header_start << " present";
  std::string header = bytes.substr(header_start, static_cast<size_t>(header_size));

  std::map<std::string, HeaderValue> dict = HeaderParser(header, src).ParseDict();
  for (const auto& [key, value] : dict) {
    HN_CHECK(key == "descr" || key == "fortran_order" || key == "shape", kFormatError)
        << src << ": unexpected key '" << key
        << "' in the .npy header (expected descr, fortran_order and shape)";
  }
  for (const char* key : {"descr", "fortran_order", "shape"}) {
    HN_CHECK(dict.count(key), kFormatError) << src << ": the .npy header has no '" << key << "'";
  }
  const HeaderValue& descr = dict["descr"];
  const HeaderValue& fortran_order = dict["fortran_order"];
  const HeaderValue& shape_value = dict["shape"];
  HN_CHECK(descr.kind == HeaderValue::kString, kFormatError)
      << src << ": .npy descr must be a type string such as '<f4'";
  HN_CHECK(fortran_order.kind == HeaderValue::kBool, kFormatError)
      << src << ": .npy fortran_order must be True or False";
  HN_CHECK(shape_value.kind == HeaderValue::kTuple, kFormatError)
      << src << ": .npy shape must be a tuple of integers";
  HN_CHECK(!fortran_order.flag, kUnsupported)
      << src
      << ": Fortran-ordered .npy data is not supported; save a C-ordered array "
         "(numpy.ascontiguousarray)";
  DType dtype = ParseDescr(descr.text, src);

  Shape shape(shape_value.tuple);
  size_t data_start = header_start + static_cast<size_t>(header_size);
  uint64_t present = bytes.size() - data_start;
  // A hostile shape must neither overflow nor allocate more than the file holds.
  const auto limit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  uint64_t product = 1;  // of the nonzero dimensions, saturated above limit
  bool empty = false;
  for (int64_t d : shape) {
    auto dim = static_cast<uint64_t>(d);
    if (dim == 0) {
      empty = true;
    } else {
      product = product > limit / dim ? limit + 1 : product * dim;
    }
  }
  HN_CHECK(product <= limit, kFormatError)
      << src << ": .npy shape " << shape << " has too many elements";
  uint64_t count = empty ? 0 : product;
  HN_CHECK(count <= present / DTypeSize(dtype), kFormatError)
      << src << ": truncated .npy data: shape " << shape << " of " << DTypeName(dtype) << " needs "
      << count * DTypeSize(dtype) << " bytes, " << present << " present";
  NDArray array = NDArray::FromBuffer(shape, dtype, bytes.data() + data_start);
  if (dtype == DType::kBool) {
    // Any nonzero byte is True; normalise so every element is a valid C++ bool.
    auto* b = static_cast<uint8_t*>(array.raw_data());
    for (uint64_t i = 0; i < count; ++i) b[i] = b[i] != 0;
  }
  return array;
}

NDArray LoadNpy(const std::string& path) {
  return ParseNpy(internal::ReadFileBytes(path, "a .npy file"), path);
}

std::string SerializeNpy(const NDArray& array) {
  HN_CHECK(!array.is_none() && !array.is_symbolic(), kInvalidArgument)
      << "SaveNpy: the array has no values (it is " << (array.is_none() ? "none" : "symbolic")
      << ")";
  const char* code = NpyCode(array.dtype());
  std::ostringstream dict;
  dict << "{'descr': '" << (DTypeSize(array.dtype()) == 1 ? '|' : '<') << code
       << "', 'fortran_order': False, 'shape': " << array.shape().ToString() << ", }";
  std::string header = dict.str();
  // Like numpy: version 1.0 unless the padded header length overflows its u16 field.
  size_t length_size = 2;
  size_t unpadded = kMagicSize + 2 + length_size + header.size() + 1;
  size_t padding = kAlign - unpadded % kAlign;
  if (header.size() + 1 + padding > std::numeric_limits<uint16_t>::max()) {
    length_size = 4;
    unpadded = kMagicSize + 2 + length_size + header.size() + 1;
    padding = kAlign - unpadded % kAlign;
  }
  std::string out(kMagic, kMagicSize);
  out.push_back(static_cast<char>(length_size == 2 ? 1 : 2));
  out.push_back(0);
  AppendLittleEndian(&out, header.size() + 1 + padding, length_size);
  out += header;
  out.append(padding, ' ');
  out.push_back('\n');
  out.append(static_cast<const char*>(array.raw_data()), array.nbytes());
  return out;
}

void SaveNpy(const std::string& path, const NDArray& array) {
  std::string bytes = SerializeNpy(array);
  std::ofstream out(path, std::ios::binary);
  HN_CHECK(out.good(), kIOError) << "cannot open '" << path << "' for writing";
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  HN_CHECK(!out.fail(), kIOError) << "error while writing '" << path << "'";
}

}  // namespace hybridnet
