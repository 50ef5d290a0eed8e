#pragma once
// A .sched file in memory, and places in it. Lines and columns are 1-based,
// columns count bytes (the language is ASCII; other bytes are errors).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace schedc::dsl {

struct SourceSpan {
  uint32_t offset = 0;  // byte offset of the first character
  uint32_t length = 0;  // bytes; 0 = a point
  uint32_t line = 0;    // 1-based; 0 = no place (a default, the command line)
  uint32_t col = 0;     // 1-based

  bool valid() const { return line != 0; }
};

class SourceFile {
 public:
  SourceFile(std::string name, std::string text);

  const std::string& name() const { return name_; }
  const std::string& text() const { return text_; }
  // The text of a 1-based line, without its newline.
  std::string_view line_text(uint32_t line) const;
  // Line and column of a byte offset.
  SourceSpan span_at(uint32_t offset, uint32_t length) const;

 private:
  std::string name_;
  std::string text_;
  std::vector<uint32_t> line_starts_;
};

}  // namespace schedc::dsl
