// MXNet NDArray list files (shared/spec/mxnet-formats.md section 3): u64 0x112, u64 reserved,
// u64 N, N array records, u64 M (0 or N), M names as u64 length + bytes. Records come in four
// layouts told apart by their first u32: the V1, V2 and V3 magics, or else a V0 ndim.

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "hybridnet/io/params.h"
#include "hybridnet/limits.h"
#include "io/params_record.h"

namespace hybridnet {

namespace {

constexpr uint64_t kListMagic = 0x112;
constexpr uint32_t kV1Magic = 0xF993FAC8;
constexpr uint32_t kV2Magic = 0xF993FAC9;
constexpr uint32_t kV3Magic = 0xF993FACA;
constexpr int32_t kCpuDevice = 1;
// The smallest record: a V0 "none" array is just its u32 ndim of 0.
constexpr uint64_t kMinRecordSize = 4;

// Bounds-checked little-endian reads. Every error names the source, the part being read
// (set with SetContext) and the byte offset.
class Reader {
 public:
  Reader(const std::string& bytes, const std::string& source) : bytes_(bytes), source_(source) {}

  uint64_t remaining() const { return bytes_.size() - pos_; }
  size_t pos() const { return pos_; }
  void SetContext(std::string context) { context_ = std::move(context); }

  uint64_t U64(const char* what) { return Read(8, what); }
  uint32_t U32(const char* what) { return static_cast<uint32_t>(Read(4, what)); }
  int32_t I32(const char* what) { return static_cast<int32_t>(U32(what)); }
  int64_t I64(const char* what) { return static_cast<int64_t>(U64(what)); }

  const char* Take(uint64_t size, const char* what) {
    Need(size, what);
    const char* p = bytes_.data() + pos_;
    pos_ += static_cast<size_t>(size);
    return p;
  }

  // Where error messages start: "file: array 3 of 8 (record at byte 120): ".
  std::ostream& Prefix(std::ostream& os) const {
    os << source_ << ": ";
    if (!context_.empty()) os << context_ << ": ";
    return os;
  }

  [[noreturn]] void Fail(const std::string& message) const {
    std::ostringstream os;
    Prefix(os) << message;
    HN_THROW(kFormatError) << os.str();
  }

 private:
  void Need(uint64_t size, const char* what) const {
    if (size > remaining()) {
      std::ostringstream os;
      os << "truncated file: " << what << " needs " << size << " bytes at byte " << pos_ << ", "
         << remaining() << " left";
      Fail(os.str());
    }
  }

  uint64_t Read(size_t size, const char* what) {
    const char* p = Take(size, what);
    uint64_t value = 0;
    for (size_t i = 0; i < size; ++i) {
      value |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
    }
    return value;
  }

  const std::string& bytes_;
  const std::string& source_;
  std::string context_;
  size_t pos_ = 0;
};

// Reads `ndim` dimensions of `dim_size` bytes after checking they fit in the file.
Shape ReadDims(Reader* in, uint64_t ndim, size_t dim_size) {
  if (ndim > in->remaining() / dim_size) {
    std::ostringstream os;
    os << "shape has ndim " << ndim << ", more dimensions than the " << in->remaining()
       << " bytes left can hold";
    in->Fail(os.str());
  }
  std::vector<int64_t> dims(static_cast<size_t>(ndim));
  for (int64_t& d : dims) {
    d = dim_size == 4 ? in->U32("a shape dimension") : in->I64("a shape dimension");
  }
  return Shape(std::move(dims));
}

// V1, V2 and V3 shapes: i32 ndim + i64 dims. Returns false for V3's "none" (ndim or a dim -1).
bool ReadShape(Reader* in, int version, Shape* shape) {
  int32_t ndim = in->I32("the shape's ndim");
  if (version == 3 && ndim == -1) return false;
  if (ndim < 0) {
    std::ostringstream os;
    os << "invalid ndim " << ndim << " (expected >= 0" << (version == 3 ? " or -1)" : ")");
    in->Fail(os.str());
  }
  *shape = ReadDims(in, static_cast<uint64_t>(ndim), 8);
  for (int64_t d : *shape) {
    if (version == 3 && d == -1) return false;
    if (d < 0) in->Fail("invalid shape " + shape->ToString() + ": negative dimension");
  }
  return true;
}

// dev_type, dev_id, type_flag and the element bytes, common to every layout.
NDArray ReadPayload(Reader* in, const Shape& shape) {
  in->I32("dev_type");
  in->I32("dev_id");
  int32_t flag = in->I32("type_flag");
  if (!IsKnownDType(flag)) {
    in->Fail("unknown type_flag " + std::to_string(flag) + " (expected a dtype flag 0..12)");
  }
  DType dtype = static_cast<DType>(flag);
  uint64_t capacity = in->remaining() / DTypeSize(dtype);
  uint64_t count = 1;
  for (int64_t d : shape) {
    uint64_t dim = static_cast<uint64_t>(d);
    if (dim != 0 && count > capacity / dim) {
      in->Fail("shape " + shape.ToString() + " of " + DTypeName(dtype) + " needs more than the " +
               std::to_string(in->remaining()) + " bytes left");
    }
    count *= dim;
  }
  const char* data = in->Take(count * DTypeSize(dtype), "the array data");
  NDArray array = NDArray::FromBuffer(shape, dtype, data);
  if (dtype == DType::kBool) {
    // Any nonzero byte is true; normalise so every element is a valid C++ bool.
    auto* b = static_cast<uint8_t*>(array.raw_data());
    for (uint64_t i = 0; i < count; ++i) b[i] = b[i] != 0;
  }
  return array;
}

// One record of any layout; *version receives 0..3. A "none" record gives NDArray().
NDArray ReadRecord(Reader* in, int* version) {
  uint32_t first = in->U32("the record magic or V0 ndim");
  if (first == kV1Magic || first == kV2Magic || first == kV3Magic) {
    *version = first == kV1Magic ? 1 : first == kV2Magic ? 2 : 3;
    if (*version != 1) {
      int32_t stype = in->I32("the storage type");
      if (stype == 1 || stype == 2) {
        std::ostringstream os;
        in->Prefix(os) << (stype == 1 ? "row_sparse" : "csr")
                       << " storage is not supported; convert the array to dense "
                          "(tostype('default')) before saving";
        HN_THROW(kUnsupported) << os.str();
      }
      if (stype != 0) {
        in->Fail("unknown storage type " + std::to_string(stype) +
                 " (expected 0 = dense, 1 = row_sparse, 2 = csr)");
      }
    }
    Shape shape;
    if (!ReadShape(in, *version, &shape)) return NDArray();
    // V1 and V2 writers stop after an empty shape: a "none" array. In V3 ndim 0 is a scalar.
    if (shape.ndim() == 0 && *version != 3) return NDArray();
    return ReadPayload(in, shape);
  }
  *version = 0;
  if (first == 0) return NDArray();
  return ReadPayload(in, ReadDims(in, first, 4));
}

void AppendU32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xffu));
}

void AppendU64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xffu));
}

// A V2 record of `a` (dense, cpu(0)); `label` names it in errors.
void AppendRecord(std::string* out, const NDArray& a, const std::string& label) {
  HN_CHECK(!a.is_symbolic(), kInvalidArgument) << label << " is symbolic and has no values";
  AppendU32(out, kV2Magic);
  AppendU32(out, 0);  // dense storage
  if (a.is_none()) {
    AppendU32(out, 0);  // ndim 0: a "none" array, nothing follows
    return;
  }
  // In a V2 record ndim 0 means "none"; only V3 can hold a 0-d array.
  HN_CHECK(a.shape().ndim() > 0, kInvalidArgument)
      << label << " is 0-d, which MXNet's V2 records cannot store; reshape it to (1,)";
  AppendU32(out, static_cast<uint32_t>(a.shape().ndim()));
  for (int64_t d : a.shape()) AppendU64(out, static_cast<uint64_t>(d));
  AppendU32(out, static_cast<uint32_t>(kCpuDevice));
  AppendU32(out, 0);  // dev_id
  AppendU32(out, static_cast<uint32_t>(a.dtype()));
  out->append(static_cast<const char*>(a.raw_data()), a.nbytes());
}

}  // namespace

namespace internal {

std::string ReadFileBytes(const std::string& path, const char* what) {
  std::error_code error;
  HN_CHECK(!std::filesystem::is_directory(path, error), kIOError)
      << "'" << path << "' is a directory, not " << what;
  std::ifstream file(path, std::ios::binary);
  HN_CHECK(file.good(), kIOError) << "cannot open '" << path << "' for reading";
  // One read into a buffer of the file's size: reading byte by byte into a growing string cost
  // a model's load as much again (every doubling copies and faults in fresh pages). A pipe or a
  // device has no size; it, or a file that grew meanwhile, is read on in blocks, up to the
  // allocation limit.
  const size_t limit = static_cast<size_t>(GetLimit(Limit::kMaxAllocationBytes));
  auto check_size = [&](size_t bytes) {
    HN_CHECK(bytes <= limit, kOutOfMemory)
        << "'" << path << "' holds more than the allocation limit of " << limit << " bytes"
        << LimitNote(Limit::kMaxAllocationBytes);
  };
  std::string bytes;
  const std::streamoff size = file.seekg(0, std::ios::end) ? std::streamoff(file.tellg()) : -1;
  file.clear();
  file.seekg(0, std::ios::beg);
  file.clear();
  if (size > 0) {
    check_size(static_cast<size_t>(size));
    bytes.resize(static_cast<size_t>(size));
    file.read(&bytes[0], size);
    bytes.resize(static_cast<size_t>(file.gcount()));
  }
  constexpr size_t kBlock = size_t{1} << 20;
  while (file.good()) {
    const size_t have = bytes.size();
    check_size(have + kBlock);
    bytes.resize(have + kBlock);
    file.read(&bytes[have], static_cast<std::streamsize>(kBlock));
    bytes.resize(have + static_cast<size_t>(file.gcount()));
  }
  HN_CHECK(!file.bad(), kIOError) << "error while reading '" << path << "'";
  return bytes;
}

std::string SerializeNDArrayRecord(const NDArray& a, const std::string& label) {
  std::string out;
  AppendRecord(&out, a, label);
  return out;
}

NDArray ParseNDArrayRecord(const std::string& bytes, const std::string& source_name) {
  Reader in(bytes, source_name);
  int version = 0;
  NDArray a = ReadRecord(&in, &version);
  if (in.remaining() != 0) {
    in.Fail(std::to_string(in.remaining()) + " bytes follow the array record");
  }
  return a;
}

}  // namespace internal

NDArrayList ParseNDArrayList(const std::string& bytes, const std::string& source_name) {
  Reader in(bytes, source_name);
  in.SetContext("list header");
  uint64_t magic = in.U64("the file magic");
  if (magic != kListMagic) {
    std::ostringstream os;
    os << "not an MXNet NDArray list file: magic 0x" << std::hex << magic
       << " at byte 0, expected 0x112";
    in.Fail(os.str());
  }
  in.U64("the reserved word");
  uint64_t count = in.U64("the array count");
  // Every record takes at least kMinRecordSize bytes and the name count 8 more.
  if (in.remaining() < 8 || count > (in.remaining() - 8) / kMinRecordSize) {
    in.Fail("array count " + std::to_string(count) + " cannot fit in the " +
            std::to_string(in.remaining()) + " bytes left");
  }
  NDArrayList list;
  list.arrays.reserve(static_cast<size_t>(count));
  list.record_versions.reserve(static_cast<size_t>(count));
  for (uint64_t i = 0; i < count; ++i) {
    in.SetContext("array " + std::to_string(i) + " of " + std::to_string(count) +
                  " (record at byte " + std::to_string(in.pos()) + ")");
    int version = 0;
    list.arrays.push_back(ReadRecord(&in, &version));
    list.record_versions.push_back(version);
  }
  in.SetContext("name list");
  uint64_t name_count = in.U64("the name count");
  if (name_count != 0 && name_count != count) {
    in.Fail("name count " + std::to_string(name_count) + " does not match the array count " +
            std::to_string(count) + " (expected 0 or " + std::to_string(count) + ")");
  }
  list.names.reserve(static_cast<size_t>(name_count));
  for (uint64_t i = 0; i < name_count; ++i) {
    in.SetContext("name of array " + std::to_string(i) + " of " + std::to_string(count));
    uint64_t length = in.U64("the name length");
    list.names.emplace_back(in.Take(length, "the name"), static_cast<size_t>(length));
  }
  return list;
}

NDArrayList LoadNDArrayList(const std::string& path) {
  return ParseNDArrayList(internal::ReadFileBytes(path, "a parameter file"), path);
}

std::string SerializeNDArrayList(const NDArrayList& list) {
  HN_CHECK(list.names.empty() || list.names.size() == list.arrays.size(), kInvalidArgument)
      << "SaveNDArrayList: " << list.names.size() << " names for " << list.arrays.size()
      << " arrays (expected none or one per array)";
  std::string out;
  AppendU64(&out, kListMagic);
  AppendU64(&out, 0);
  AppendU64(&out, list.arrays.size());
  for (size_t i = 0; i < list.arrays.size(); ++i) {
    AppendRecord(&out, list.arrays[i],
                 "SaveNDArrayList: array " + std::to_string(i) +
                     (list.names.empty() ? std::string() : " ('" + list.names[i] + "')"));
  }
  AppendU64(&out, list.names.size());
  for (const std::string& name : list.names) {
    AppendU64(&out, name.size());
    out += name;
  }
  return out;
}

void SaveNDArrayList(const std::string& path, const NDArrayList& list) {
  std::string bytes = SerializeNDArrayList(list);
  std::ofstream file(path, std::ios::binary);
  HN_CHECK(file.good(), kIOError) << "cannot open '" << path << "' for writing";
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  file.close();
  HN_CHECK(!file.fail(), kIOError) << "error while writing '" << path << "'";
}

}  // namespace hybridnet
