#include "io/json_writer.h"

#include "hybridnet/base.h"

namespace hybridnet {
namespace internal {

void JSONLayoutWriter::BeginObject(bool multi_line) {
  out_->push_back('{');
  scopes_.push_back(Scope{multi_line, 0});
}

void JSONLayoutWriter::BeginArray(bool multi_line) {
  out_->push_back('[');
  scopes_.push_back(Scope{multi_line, 0});
}

void JSONLayoutWriter::EndObject() { End('}'); }

void JSONLayoutWriter::EndArray() { End(']'); }

void JSONLayoutWriter::End(char bracket) {
  HN_CHECK(!scopes_.empty(), kInternal) << "JSONLayoutWriter: unbalanced '" << bracket << "'";
  Scope scope = scopes_.back();
  scopes_.pop_back();
  // A non-empty multi-line scope closes on a line of its own, indented like its opener.
  if (scope.multi_line && scope.count != 0) {
    out_->push_back('\n');
    out_->append(2 * scopes_.size(), ' ');
  }
  out_->push_back(bracket);
}

void JSONLayoutWriter::Separator() {
  HN_CHECK(!scopes_.empty(), kInternal) << "JSONLayoutWriter: member outside any scope";
  Scope& scope = scopes_.back();
  if (scope.count != 0) out_->append(", ");
  if (scope.multi_line) {
    out_->push_back('\n');
    out_->append(2 * scopes_.size(), ' ');
  }
  ++scope.count;
}

void JSONLayoutWriter::Key(const std::string& key) {
  Separator();
  AppendQuoted(key, out_);
  out_->append(": ");
}

void JSONLayoutWriter::Item() { Separator(); }

void JSONLayoutWriter::WriteString(const std::string& value) { AppendQuoted(value, out_); }

void JSONLayoutWriter::WriteUInt(uint64_t value) { out_->append(std::to_string(value)); }

void JSONLayoutWriter::WriteInt(int64_t value) { out_->append(std::to_string(value)); }

void JSONLayoutWriter::AppendQuoted(const std::string& value, std::string* out) {
  out->push_back('"');
  for (char c : value) {
    switch (c) {
      case '\r':
        out->append("\\r");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '"':
        out->append("\\\"");
        break;
      default:
        out->push_back(c);
        break;
    }
  }
  out->push_back('"');
}

}  // namespace internal
}  // namespace hybridnet
