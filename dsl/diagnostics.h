#pragma once
// User-facing errors about a .sched file, printed like a compiler's:
//
//   gemm.sched:3:8: error: thread tile 8x8 does not divide block tile 100x128
//       3 | thread 8x8
//         |        ^~~
//   gemm.sched:2:6: note: block tile set here
//
// Errors are collected, not thrown, so one run reports all of them.
// Internal errors (bugs in schedc) are not Diagnostics: see InternalError.

#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "dsl/source.h"

namespace schedc::dsl {

enum class Severity { error, warning, note };

struct Note {
  SourceSpan span;
  std::string message;
};

struct Diagnostic {
  Severity severity = Severity::error;
  SourceSpan span;  // may be invalid (no place): printed as "file: error: …"
  std::string message;
  std::vector<Note> notes;
};

class Diagnostics {
 public:
  explicit Diagnostics(const SourceFile* file = nullptr) : file_(file) {}

  // Returns the new diagnostic so callers can attach notes.
  Diagnostic& error(SourceSpan span, std::string message);
  Diagnostic& warning(SourceSpan span, std::string message);

  bool has_errors() const;
  int error_count() const;
  const std::vector<Diagnostic>& all() const { return diags_; }
  const SourceFile* file() const { return file_; }

  // Prints every diagnostic with source line and caret, in the order reported.
  void print(std::ostream& os) const;

 private:
  const SourceFile* file_;
  std::vector<Diagnostic> diags_;
};

// A bug in schedc, not in the user's input. Caught in main: prints
// "internal error: … (please report this as a schedc bug)" and exits 3.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Throws InternalError with `where` (file:line) when `cond` is false.
#define SCHEDC_INTERNAL_ASSERT(cond, msg)                                                         \
  do {                                                                                            \
    if (!(cond))                                                                                  \
      throw ::schedc::dsl::InternalError(std::string(__FILE__) + ":" + std::to_string(__LINE__) + \
                                         ": " + (msg));                                           \
  } while (0)

}  // namespace schedc::dsl
