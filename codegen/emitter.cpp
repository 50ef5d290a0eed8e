#include "codegen/emitter.h"

#include <cstdarg>
#include <cstdio>

#include "dsl/diagnostics.h"

namespace schedc::codegen {

namespace {
constexpr int kIndent = 2;
}

void Emitter::line(std::string_view text) {
  if (!text.empty()) out_.append(size_t(depth_ * kIndent), ' ');
  out_.append(text);
  out_.push_back('\n');
}

void Emitter::lines(std::string_view text) {
  while (!text.empty()) {
    size_t nl = text.find('\n');
    line(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

void Emitter::comment(std::string_view text) {
  line(std::string("// ").append(text));
}

void Emitter::open_scope(std::string_view head) {
  line(head.empty() ? std::string("{") : std::string(head).append(" {"));
  ++depth_;
}

void Emitter::close_scope(std::string_view label) {
  SCHEDC_INTERNAL_ASSERT(depth_ > 0, "close_scope without open_scope");
  --depth_;
  line(label.empty() ? std::string("}") : std::string("} // ").append(label));
}

void Emitter::close_scope_semicolon() {
  SCHEDC_INTERNAL_ASSERT(depth_ > 0, "close_scope without open_scope");
  --depth_;
  line("};");
}

std::string format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list copy;
  va_copy(copy, args);
  int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string s(size_t(n > 0 ? n : 0), '\0');
  if (n > 0) std::vsnprintf(s.data(), s.size() + 1, fmt, args);
  va_end(args);
  return s;
}

}  // namespace schedc::codegen
