#pragma once
// The one way generated CUDA is written: lines at the current indentation,
// scopes opened and closed by the emitter (never count spaces by hand).
//
//   Emitter e;
//   e.open_scope("for (int k_tile = 0; k_tile < num_k_tiles; ++k_tile)");
//   e.line("__syncthreads();");
//   e.close_scope("k_tile");   // prints "} // k_tile"

#include <string>
#include <string_view>

namespace schedc::codegen {

class Emitter {
 public:
  // One line at the current indentation. An empty string gives an empty line.
  void line(std::string_view text = {});
  // Several lines (split at '\n'), each indented; for comment blocks.
  void lines(std::string_view text);
  // `// text` at the current indentation.
  void comment(std::string_view text);
  // "head {" and one level deeper.
  void open_scope(std::string_view head);
  // One level shallower and "}", or "} // label" for long scopes.
  void close_scope(std::string_view label = {});
  // "};" for struct bodies and similar.
  void close_scope_semicolon();

  int depth() const { return depth_; }
  const std::string& str() const { return out_; }

 private:
  std::string out_;
  int depth_ = 0;
};

// printf-style formatting into a std::string, for building emitted lines.
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace schedc::codegen
