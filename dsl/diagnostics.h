#pragma once
// User-facing errors about a .sched file, printed like a compiler's:
//
//   gemm.sched:3:8: error: thread tile 8x8 does not divide block tile 100x128
//       3 | thread 8x8
//         |        ^~~
//   gemm.sched:2:6: note: block tile set here
//
// Errors are collected, not thrown, so one run reports many of them: up to an
// error limit (clang's -ferror-limit; schedc's --error-limit), after which
// errors and warnings are only counted, so a hostile file of a million bad
// lines costs a counter, not a million messages. print() ends with how many
// were left out. Internal errors (bugs in schedc) are not Diagnostics: see
// InternalError.

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

// Errors kept and printed before the rest are only counted (0 = no limit).
constexpr int kDefaultErrorLimit = 20;

class Diagnostics {
 public:
  explicit Diagnostics(const SourceFile* file = nullptr, int error_limit = kDefaultErrorLimit)
      : file_(file), error_limit_(error_limit) {}

  // Returns the new diagnostic so callers can attach notes. Past the error
  // limit it is a scratch diagnostic that is counted and then dropped.
  Diagnostic& error(SourceSpan span, std::string message);
  Diagnostic& warning(SourceSpan span, std::string message);

  bool has_errors() const { return error_count_ > 0; }
  // Every error reported, kept or not.
  int error_count() const { return error_count_; }
  // The errors and warnings counted but not kept (past the error limit).
  int dropped_errors() const { return dropped_errors_; }
  int dropped_warnings() const { return dropped_warnings_; }
  int error_limit() const { return error_limit_; }
  // The kept diagnostics, in the order reported.
  const std::vector<Diagnostic>& all() const { return diags_; }
  const SourceFile* file() const { return file_; }

  // Prints every kept diagnostic with source line and caret, in the order
  // reported, then a note with the number left out, if any.
  void print(std::ostream& os) const;

 private:
  bool full() const { return error_limit_ > 0 && error_count_ - dropped_errors_ >= error_limit_; }

  const SourceFile* file_;
  int error_limit_;
  int error_count_ = 0;
  int dropped_errors_ = 0, dropped_warnings_ = 0;
  std::vector<Diagnostic> diags_;
  Diagnostic scratch_;  // what error()/warning() return past the limit
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
