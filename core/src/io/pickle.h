// The part of Python's pickle format MXNet's Trainer.save_states writes: a .states file is a
// pickle of (states by parameter index, the optimizer object), each state None, an NDArray or a
// tuple of them, an NDArray pickled as its MXNDArraySaveRawBytes record in a bytearray. This is
// no general pickle machine: values are data (None, bool, int, float, str, bytes, tuple, list,
// dict) and class instances recorded by their class's name, never imported or called.
//
// Load reads protocols 2 to 5 as CPython writes them (frames, memo, the opcodes of those value
// kinds); any other opcode, a damaged or truncated stream, a container that holds itself
// (through the memo) or nesting deeper than kMaxDepth is a kFormatError naming the source, and
// what was read is freed (no cycle leaks, no deep recursion). Literal and Dump stop at
// kMaxDepth too, for values built in code. Dump writes protocol 4 without frames,
// which every Python 3 unpickler reads, keeping shared containers shared (through the memo), as
// the optimizer's _index_update_count is its _all_index_update_counts[0].
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace hybridnet {
namespace internal {
namespace pickle {

struct Value;
/// Values are shared: a container reached twice is one object, as in Python.
using ValuePtr = std::shared_ptr<Value>;

/// One Python value.
struct Value {
  enum class Kind { kNone, kBool, kInt, kFloat, kStr, kBytes, kTuple, kList, kDict, kObject };
  Kind kind = Kind::kNone;
  bool boolean = false;
  int64_t integer = 0;
  double real = 0;
  /// kStr (UTF-8) and kBytes.
  std::string text;
  /// kTuple and kList.
  std::vector<ValuePtr> items;
  /// kDict, in insertion order.
  std::vector<std::pair<ValuePtr, ValuePtr>> entries;
  /// kObject: an instance of `module`.`name`, made by calling the class with `args` (a tuple;
  /// by cls.__new__(cls, *args) when `new_object`) and then given `state` (BUILD; may be null).
  std::string module;
  std::string name;
  ValuePtr args;
  ValuePtr state;
  bool new_object = false;

  static ValuePtr None();
  static ValuePtr Bool(bool value);
  static ValuePtr Int(int64_t value);
  static ValuePtr Float(double value);
  static ValuePtr Str(std::string value);
  static ValuePtr Bytes(std::string value);
  static ValuePtr Tuple(std::vector<ValuePtr> items);
  static ValuePtr List(std::vector<ValuePtr> items);
  static ValuePtr Dict(std::vector<std::pair<ValuePtr, ValuePtr>> entries = {});
  static ValuePtr Object(std::string module, std::string name, ValuePtr args, ValuePtr state,
                         bool new_object);

  bool is(Kind k) const { return kind == k; }
  /// The value of the str key `key` of a dict, or null.
  ValuePtr Find(const std::string& key) const;
  /// Python's repr for data values ("None", "True", "3", "0.9", "'linear'", "[10, 20]",
  /// "(1, 2)"), which optimizers take as keyword values; kFormatError for objects and bytes.
  std::string Literal() const;
};

/// Deepest nesting of containers Load accepts and Literal and Dump walk.
constexpr int kMaxDepth = 64;

/// Parses a pickle; `source` names it in errors.
ValuePtr Load(const std::string& bytes, const std::string& source);
/// Writes `value` as a protocol 4 pickle.
std::string Dump(const ValuePtr& value);

}  // namespace pickle
}  // namespace internal
}  // namespace hybridnet
