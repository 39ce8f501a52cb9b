// A streaming JSON writer that lays text out the way MXNet's files are laid out (the layout of
// dmlc::JSONWriter, spec mxnet-formats.md 2.5), so that symbol files we write are byte-identical
// to MXNet's. General-purpose JSON libraries cannot produce this layout (", " line ends, the
// per-scope single-line/multi-line choice, raw non-ASCII bytes).
//
//   std::string text;
//   JSONLayoutWriter w(&text);
//   w.BeginObject(true);
//   w.Key("heads");
//   w.BeginArray(false);
//   w.Item(); w.WriteUInt(3);
//   w.EndArray();
//   w.EndObject();   // text == "{\n  \"heads\": [3]\n}"
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hybridnet {
namespace internal {

class JSONLayoutWriter {
 public:
  explicit JSONLayoutWriter(std::string* out) : out_(out) {}

  /// Opens an object/array scope. A multi-line scope puts every member on its own line,
  /// indented by two spaces per open scope; a single-line scope separates members by ", ".
  void BeginObject(bool multi_line);
  void EndObject();
  void BeginArray(bool multi_line);
  void EndArray();

  /// Starts the next member of the current object: separator, then `"key": `.
  void Key(const std::string& key);
  /// Starts the next element of the current array (separator only).
  void Item();

  void WriteString(const std::string& value);
  void WriteUInt(uint64_t value);
  void WriteInt(int64_t value);

  /// `value` quoted, escaping only \r \n \\ \t and " (every other byte is written raw).
  static void AppendQuoted(const std::string& value, std::string* out);

 private:
  struct Scope {
    bool multi_line;
    size_t count;
  };
  void Separator();
  void End(char bracket);

  std::string* out_;
  std::vector<Scope> scopes_;
};

}  // namespace internal
}  // namespace hybridnet
