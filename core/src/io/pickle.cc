#include "io/pickle.h"

#include <cmath>
#include <cstring>
#include <map>
#include <sstream>

#include "hybridnet/base.h"
#include "hybridnet/param.h"

namespace hybridnet {
namespace internal {
namespace pickle {
namespace {

// The opcodes of pickle protocols 2-5 this reader knows (CPython's Lib/pickletools.py documents
// them all).
enum Opcode : uint8_t {
  kMark = '(',
  kStop = '.',
  kBinInt = 'J',
  kBinInt1 = 'K',
  kBinInt2 = 'M',
  kNone = 'N',
  kBinFloat = 'G',
  kBinUnicode = 'X',
  kShortBinBytes = 'C',
  kBinBytes = 'B',
  kEmptyDict = '}',
  kEmptyList = ']',
  kEmptyTuple = ')',
  kTuple = 't',
  kList = 'l',
  kDict = 'd',
  kAppend = 'a',
  kAppends = 'e',
  kSetItem = 's',
  kSetItems = 'u',
  kGlobal = 'c',
  kReduce = 'R',
  kBuild = 'b',
  kBinGet = 'h',
  kLongBinGet = 'j',
  kBinPut = 'q',
  kLongBinPut = 'r',
  kProto = 0x80,
  kNewObj = 0x81,
  kTuple1 = 0x85,
  kTuple2 = 0x86,
  kTuple3 = 0x87,
  kNewTrue = 0x88,
  kNewFalse = 0x89,
  kLong1 = 0x8a,
  kShortBinUnicode = 0x8c,
  kBinUnicode8 = 0x8d,
  kBinBytes8 = 0x8e,
  kStackGlobal = 0x93,
  kMemoize = 0x94,
  kFrame = 0x95,
  kByteArray8 = 0x96,
};

ValuePtr Make(Value::Kind kind) {
  auto v = std::make_shared<Value>();
  v->kind = kind;
  return v;
}

class Reader {
 public:
  Reader(const std::string& bytes, const std::string& source) : bytes_(bytes), source_(source) {}

  ValuePtr Run() {
    for (;;) {
      op_pos_ = pos_;
      uint8_t op = U8();
      switch (op) {
        case kProto: {
          uint8_t protocol = U8();
          if (protocol < 2 || protocol > 5) Fail("pickle protocol " + std::to_string(protocol));
          break;
        }
        case kFrame:
          Take(8);  // frames only group opcodes; the stream reads the same without them
          break;
        case kStop: {
          if (stack_.size() != 1 || !marks_.empty()) Fail("STOP with a malformed stack");
          return stack_.back();
        }
        case kMark:
          marks_.push_back(stack_.size());
          break;
        case kNone:
          Push(Value::None());
          break;
        case kNewTrue:
        case kNewFalse:
          Push(Value::Bool(op == kNewTrue));
          break;
        case kBinInt:
          Push(Value::Int(static_cast<int32_t>(LittleEndian(4))));
          break;
        case kBinInt1:
          Push(Value::Int(static_cast<int64_t>(LittleEndian(1))));
          break;
        case kBinInt2:
          Push(Value::Int(static_cast<int64_t>(LittleEndian(2))));
          break;
        case kLong1: {
          uint8_t n = U8();
          if (n > 8) Fail("an integer of " + std::to_string(n) + " bytes");
          uint64_t raw = LittleEndian(n);
          if (n > 0 && n < 8 && (raw >> (8 * n - 1)) != 0) raw |= ~uint64_t{0} << (8 * n);
          Push(Value::Int(static_cast<int64_t>(raw)));
          break;
        }
        case kBinFloat: {
          uint64_t bits = 0;
          for (char c : Take(8)) bits = (bits << 8) | static_cast<uint8_t>(c);
          double d;
          std::memcpy(&d, &bits, sizeof(d));
          Push(Value::Float(d));
          break;
        }
        case kShortBinUnicode:
          Push(Value::Str(Take(LittleEndian(1))));
          break;
        case kBinUnicode:
          Push(Value::Str(Take(LittleEndian(4))));
          break;
        case kBinUnicode8:
          Push(Value::Str(Take(LittleEndian(8))));
          break;
        case kShortBinBytes:
          Push(Value::Bytes(Take(LittleEndian(1))));
          break;
        case kBinBytes:
          Push(Value::Bytes(Take(LittleEndian(4))));
          break;
        case kBinBytes8:
          Push(Value::Bytes(Take(LittleEndian(8))));
          break;
        case kByteArray8:
          Push(Value::Object("builtins", "bytearray",
                             Value::Tuple({Value::Bytes(Take(LittleEndian(8)))}), nullptr, false));
          break;
        case kEmptyTuple:
          Push(Value::Tuple({}));
          break;
        case kTuple1:
        case kTuple2:
        case kTuple3: {
          size_t n = op - kTuple1 + 1u;
          Push(Value::Tuple(PopN(n)));
          break;
        }
        case kTuple:
          Push(Value::Tuple(PopToMark()));
          break;
        case kEmptyList:
          Push(Value::List({}));
          break;
        case kList:
          Push(Value::List(PopToMark()));
          break;
        case kEmptyDict:
          Push(Value::Dict());
          break;
        case kDict: {
          ValuePtr d = Value::Dict();
          SetItems(d, PopToMark());
          Push(d);
          break;
        }
        case kAppend: {
          ValuePtr item = Pop();
          Top(Value::Kind::kList, "APPEND")->items.push_back(item);
          break;
        }
        case kAppends: {
          std::vector<ValuePtr> items = PopToMark();
          ValuePtr list = Top(Value::Kind::kList, "APPENDS");
          list->items.insert(list->items.end(), items.begin(), items.end());
          break;
        }
        case kSetItem: {
          std::vector<ValuePtr> kv = PopN(2);
          SetItems(Top(Value::Kind::kDict, "SETITEM"), kv);
          break;
        }
        case kSetItems: {
          std::vector<ValuePtr> kv = PopToMark();
          SetItems(Top(Value::Kind::kDict, "SETITEMS"), kv);
          break;
        }
        case kGlobal: {
          std::string module = Line();
          std::string name = Line();
          Push(Value::Object(module, name, nullptr, nullptr, false));
          break;
        }
        case kStackGlobal: {
          std::vector<ValuePtr> mn = PopN(2);
          if (!mn[0]->is(Value::Kind::kStr) || !mn[1]->is(Value::Kind::kStr)) {
            Fail("STACK_GLOBAL without a module and a name");
          }
          Push(Value::Object(mn[0]->text, mn[1]->text, nullptr, nullptr, false));
          break;
        }
        case kReduce:
        case kNewObj: {
          std::vector<ValuePtr> ca = PopN(2);
          const ValuePtr& cls = ca[0];
          if (!cls->is(Value::Kind::kObject) || cls->args != nullptr) {
            Fail(std::string(op == kReduce ? "REDUCE" : "NEWOBJ") + " on something not a class");
          }
          if (!ca[1]->is(Value::Kind::kTuple)) Fail("class arguments that are not a tuple");
          Push(Value::Object(cls->module, cls->name, ca[1], nullptr, op == kNewObj));
          break;
        }
        case kBuild: {
          ValuePtr state = Pop();
          ValuePtr object = Top(Value::Kind::kObject, "BUILD");
          if (object->args == nullptr || object->state != nullptr) Fail("BUILD on a class");
          object->state = state;
          break;
        }
        case kMemoize:
          memo_[static_cast<uint32_t>(memo_.size())] = Peek();
          break;
        case kBinPut:
          memo_[static_cast<uint32_t>(LittleEndian(1))] = Peek();
          break;
        case kLongBinPut:
          memo_[static_cast<uint32_t>(LittleEndian(4))] = Peek();
          break;
        case kBinGet:
        case kLongBinGet: {
          auto index = static_cast<uint32_t>(LittleEndian(op == kBinGet ? 1 : 4));
          auto it = memo_.find(index);
          if (it == memo_.end()) Fail("memo entry " + std::to_string(index) + " was never set");
          Push(it->second);
          break;
        }
        default: {
          std::ostringstream os;
          os << "opcode 0x" << std::hex << static_cast<int>(op)
             << " (only the data values and class instances of an MXNet .states file are read)";
          Fail(os.str());
        }
      }
    }
  }

 private:
  const std::string& bytes_;
  const std::string& source_;
  size_t pos_ = 0;
  size_t op_pos_ = 0;
  std::vector<ValuePtr> stack_;
  std::vector<size_t> marks_;
  std::map<uint32_t, ValuePtr> memo_;
  std::vector<ValuePtr> made_;  // every value pushed, to break their links (BreakAll)

 public:
  // Throws kFormatError when the value graph under `root` has a cycle (a container holding
  // itself, through the memo) or nests deeper than kMaxDepth. Iterative: a hostile file may
  // nest a million lists.
  void CheckShape(const ValuePtr& root) const {
    std::map<const Value*, bool> done;  // false while on the path
    std::vector<std::pair<const Value*, size_t>> path{{root.get(), 0}};
    done[root.get()] = false;
    while (!path.empty()) {
      auto& [v, next] = path.back();
      std::vector<const Value*> children;
      for (const auto& item : v->items) children.push_back(item.get());
      for (const auto& [k, value] : v->entries) {
        children.push_back(k.get());
        children.push_back(value.get());
      }
      if (v->args) children.push_back(v->args.get());
      if (v->state) children.push_back(v->state.get());
      if (next == children.size()) {
        done[v] = true;
        path.pop_back();
        continue;
      }
      const Value* child = children[next++];
      auto it = done.find(child);
      if (it != done.end()) {
        if (!it->second) {
          HN_THROW(kFormatError) << source_ << ": not a pickle this library reads: a container "
                                 << "holds itself";
        }
        continue;
      }
      if (path.size() >= static_cast<size_t>(kMaxDepth)) {
        HN_THROW(kFormatError) << source_ << ": not a pickle this library reads: values nest "
                               << "deeper than " << kMaxDepth;
      }
      done[child] = false;
      path.emplace_back(child, 0);
    }
  }
  // Unlinks every value made, so that none keeps another alive: what a rejected file leaves is
  // freed without cycles leaking and without recursion through deep nesting.
  void BreakAll() {
    for (const ValuePtr& v : made_) {
      v->items.clear();
      v->entries.clear();
      v->args.reset();
      v->state.reset();
    }
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    HN_THROW(kFormatError) << source_ << ": not a pickle this library reads: " << what
                           << " at byte " << op_pos_;
  }
  uint8_t U8() { return static_cast<uint8_t>(Take(1)[0]); }
  std::string Take(uint64_t n) {
    if (n > bytes_.size() - pos_) {
      Fail("a field of " + std::to_string(n) + " bytes where " +
           std::to_string(bytes_.size() - pos_) + " remain (truncated)");
    }
    std::string out = bytes_.substr(pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return out;
  }
  uint64_t LittleEndian(int n) {
    std::string b = Take(static_cast<uint64_t>(n));
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(b[static_cast<size_t>(i)]);
    return v;
  }
  std::string Line() {
    size_t end = bytes_.find('\n', pos_);
    if (end == std::string::npos) Fail("GLOBAL without its newline");
    std::string line = bytes_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return line;
  }
  void Push(ValuePtr v) {
    made_.push_back(v);
    stack_.push_back(std::move(v));
  }
  size_t Floor() const { return marks_.empty() ? 0 : marks_.back(); }
  ValuePtr Peek() const {
    if (stack_.size() <= Floor()) Fail("an empty stack");
    return stack_.back();
  }
  ValuePtr Pop() {
    ValuePtr v = Peek();
    stack_.pop_back();
    return v;
  }
  std::vector<ValuePtr> PopN(size_t n) {
    if (stack_.size() < Floor() + n) Fail("fewer than " + std::to_string(n) + " values");
    std::vector<ValuePtr> out(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
    stack_.resize(stack_.size() - n);
    return out;
  }
  std::vector<ValuePtr> PopToMark() {
    if (marks_.empty()) Fail("no MARK");
    size_t mark = marks_.back();
    marks_.pop_back();
    std::vector<ValuePtr> out(stack_.begin() + static_cast<std::ptrdiff_t>(mark), stack_.end());
    stack_.resize(mark);
    return out;
  }
  ValuePtr Top(Value::Kind kind, const char* op) {
    ValuePtr top = Peek();
    if (!top->is(kind)) Fail(std::string(op) + " on the wrong kind of value");
    return top;
  }
  void SetItems(const ValuePtr& dict, const std::vector<ValuePtr>& kv) {
    if (kv.size() % 2 != 0) Fail("a key without a value");
    for (size_t i = 0; i < kv.size(); i += 2) {
      bool replaced = false;
      for (auto& entry : dict->entries) {
        if (SameKey(*entry.first, *kv[i])) {
          entry.second = kv[i + 1];
          replaced = true;
          break;
        }
      }
      if (!replaced) dict->entries.emplace_back(kv[i], kv[i + 1]);
    }
  }
  static bool SameKey(const Value& a, const Value& b) {
    if (a.kind != b.kind) return false;
    switch (a.kind) {
      case Value::Kind::kInt:
        return a.integer == b.integer;
      case Value::Kind::kStr:
      case Value::Kind::kBytes:
        return a.text == b.text;
      default:
        return &a == &b;
    }
  }
};

class Writer {
 public:
  std::string Run(const ValuePtr& value) {
    out_ += static_cast<char>(kProto);
    out_ += static_cast<char>(4);
    Write(value, 0);
    out_ += static_cast<char>(kStop);
    return out_;
  }

 private:
  std::string out_;
  std::map<const Value*, uint32_t> memo_;

  void Op(uint8_t op) { out_ += static_cast<char>(op); }
  void LittleEndian(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_ += static_cast<char>((v >> (8 * i)) & 0xffu);
  }
  void Sized(uint8_t op1, uint8_t op4, uint8_t op8, const std::string& text) {
    if (text.size() < 256) {
      Op(op1);
      LittleEndian(text.size(), 1);
    } else if (text.size() <= 0xffffffffu) {
      Op(op4);
      LittleEndian(text.size(), 4);
    } else {
      Op(op8);
      LittleEndian(text.size(), 8);
    }
    out_ += text;
  }
  // Lists, dicts and instances go to the memo, so a second reference is the same object.
  bool Recall(const Value& v) {
    auto it = memo_.find(&v);
    if (it == memo_.end()) return false;
    Op(kLongBinGet);
    LittleEndian(it->second, 4);
    return true;
  }
  void Remember(const Value& v) {
    Op(kMemoize);
    memo_.emplace(&v, static_cast<uint32_t>(memo_.size()));
  }

  void Write(const ValuePtr& p, int depth) {
    HN_CHECK(p != nullptr && depth <= kMaxDepth, kInvalidArgument)
        << "pickle: a null value or nesting deeper than " << kMaxDepth;
    const Value& v = *p;
    switch (v.kind) {
      case Value::Kind::kNone:
        Op(kNone);
        return;
      case Value::Kind::kBool:
        Op(v.boolean ? kNewTrue : kNewFalse);
        return;
      case Value::Kind::kInt:
        if (v.integer >= 0 && v.integer < 256) {
          Op(kBinInt1);
          LittleEndian(static_cast<uint64_t>(v.integer), 1);
        } else if (v.integer >= INT32_MIN && v.integer <= INT32_MAX) {
          Op(kBinInt);
          LittleEndian(static_cast<uint64_t>(static_cast<int64_t>(v.integer)), 4);
        } else {
          Op(kLong1);
          LittleEndian(8, 1);
          LittleEndian(static_cast<uint64_t>(v.integer), 8);
        }
        return;
      case Value::Kind::kFloat: {
        uint64_t bits;
        std::memcpy(&bits, &v.real, sizeof(bits));
        Op(kBinFloat);
        for (int i = 7; i >= 0; --i) out_ += static_cast<char>((bits >> (8 * i)) & 0xffu);
        return;
      }
      case Value::Kind::kStr:
        Sized(kShortBinUnicode, kBinUnicode, kBinUnicode8, v.text);
        return;
      case Value::Kind::kBytes:
        Sized(kShortBinBytes, kBinBytes, kBinBytes8, v.text);
        return;
      case Value::Kind::kTuple:
        if (v.items.empty()) {
          Op(kEmptyTuple);
        } else if (v.items.size() <= 3) {
          for (const auto& item : v.items) Write(item, depth + 1);
          Op(static_cast<uint8_t>(kTuple1 + v.items.size() - 1));
        } else {
          Op(kMark);
          for (const auto& item : v.items) Write(item, depth + 1);
          Op(kTuple);
        }
        return;
      case Value::Kind::kList:
        if (Recall(v)) return;
        Op(kEmptyList);
        Remember(v);
        if (!v.items.empty()) {
          Op(kMark);
          for (const auto& item : v.items) Write(item, depth + 1);
          Op(kAppends);
        }
        return;
      case Value::Kind::kDict:
        if (Recall(v)) return;
        Op(kEmptyDict);
        Remember(v);
        if (!v.entries.empty()) {
          Op(kMark);
          for (const auto& [key, value] : v.entries) {
            Write(key, depth + 1);
            Write(value, depth + 1);
          }
          Op(kSetItems);
        }
        return;
      case Value::Kind::kObject:
        if (Recall(v)) return;
        Sized(kShortBinUnicode, kBinUnicode, kBinUnicode8, v.module);
        Sized(kShortBinUnicode, kBinUnicode, kBinUnicode8, v.name);
        Op(kStackGlobal);
        if (v.args == nullptr) return;  // the class itself
        Write(v.args, depth + 1);
        Op(v.new_object ? kNewObj : kReduce);
        Remember(v);
        if (v.state != nullptr) {
          Write(v.state, depth + 1);
          Op(kBuild);
        }
        return;
    }
  }
};

std::string LiteralOf(const Value& v, int depth) {
  HN_CHECK(depth <= kMaxDepth, kFormatError) << "pickle: nesting deeper than " << kMaxDepth;
  switch (v.kind) {
    case Value::Kind::kNone:
      return "None";
    case Value::Kind::kBool:
      return v.boolean ? "True" : "False";
    case Value::Kind::kInt:
      return std::to_string(v.integer);
    case Value::Kind::kFloat:
      if (std::isnan(v.real)) return "nan";
      if (std::isinf(v.real)) return v.real > 0 ? "inf" : "-inf";
      return ValueText(v.real);
    case Value::Kind::kStr: {
      std::string s = "'";
      for (char c : v.text)
        s += (c == '\'' || c == '\\') ? std::string("\\") + c : std::string(1, c);
      return s + "'";
    }
    case Value::Kind::kTuple:
    case Value::Kind::kList: {
      bool tuple = v.is(Value::Kind::kTuple);
      std::string s = tuple ? "(" : "[";
      for (size_t i = 0; i < v.items.size(); ++i) {
        s += (i ? ", " : "") + LiteralOf(*v.items[i], depth + 1);
      }
      if (tuple && v.items.size() == 1) s += ",";
      return s + (tuple ? ")" : "]");
    }
    default:
      HN_THROW(kFormatError) << "pickle: a "
                             << (v.is(Value::Kind::kBytes) ? "bytes" : "dict or object")
                             << " value where a plain value was expected";
  }
}

}  // namespace

ValuePtr Value::None() { return Make(Kind::kNone); }
ValuePtr Value::Bool(bool value) {
  ValuePtr v = Make(Kind::kBool);
  v->boolean = value;
  return v;
}
ValuePtr Value::Int(int64_t value) {
  ValuePtr v = Make(Kind::kInt);
  v->integer = value;
  return v;
}
ValuePtr Value::Float(double value) {
  ValuePtr v = Make(Kind::kFloat);
  v->real = value;
  return v;
}
ValuePtr Value::Str(std::string value) {
  ValuePtr v = Make(Kind::kStr);
  v->text = std::move(value);
  return v;
}
ValuePtr Value::Bytes(std::string value) {
  ValuePtr v = Make(Kind::kBytes);
  v->text = std::move(value);
  return v;
}
ValuePtr Value::Tuple(std::vector<ValuePtr> items) {
  ValuePtr v = Make(Kind::kTuple);
  v->items = std::move(items);
  return v;
}
ValuePtr Value::List(std::vector<ValuePtr> items) {
  ValuePtr v = Make(Kind::kList);
  v->items = std::move(items);
  return v;
}
ValuePtr Value::Dict(std::vector<std::pair<ValuePtr, ValuePtr>> entries) {
  ValuePtr v = Make(Kind::kDict);
  v->entries = std::move(entries);
  return v;
}
ValuePtr Value::Object(std::string module, std::string name, ValuePtr args, ValuePtr state,
                       bool new_object) {
  ValuePtr v = Make(Kind::kObject);
  v->module = std::move(module);
  v->name = std::move(name);
  v->args = std::move(args);
  v->state = std::move(state);
  v->new_object = new_object;
  return v;
}

ValuePtr Value::Find(const std::string& key) const {
  for (const auto& [k, value] : entries)
    if (k->is(Kind::kStr) && k->text == key) return value;
  return nullptr;
}

std::string Value::Literal() const { return LiteralOf(*this, 0); }

ValuePtr Load(const std::string& bytes, const std::string& source) {
  Reader reader(bytes, source);
  try {
    ValuePtr root = reader.Run();
    reader.CheckShape(root);
    return root;
  } catch (...) {
    reader.BreakAll();
    throw;
  }
}

std::string Dump(const ValuePtr& value) { return Writer().Run(value); }

}  // namespace pickle
}  // namespace internal
}  // namespace hybridnet
