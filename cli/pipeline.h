#pragma once
// The front half of every command: read a .sched file, parse, analyze, lower,
// emit. Stages run in order; each is timed for `--verbose`.

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codegen/generated_kernel.h"
#include "compiler/kernel_plan.h"
#include "compiler/schedule.h"
#include "compiler/target.h"
#include "dsl/diagnostics.h"
#include "dsl/source.h"

namespace schedc::cli {

struct StageTimes {
  double read_ms = 0, parse_ms = 0, analyze_ms = 0, lower_ms = 0, emit_ms = 0;
};

struct Compiled {
  std::shared_ptr<dsl::SourceFile> file;
  compiler::Schedule schedule;
  compiler::Target target;
  compiler::KernelPlan plan;
  codegen::GeneratedKernel kernel;
  StageTimes times;
};

// Parses and analyzes `path` for `target`. On bad input prints the
// diagnostics to `err` and returns nothing (the caller exits 2).
std::optional<Compiled> check_file(const std::string& path, const compiler::Target& target,
                                   std::ostream& err);

// check_file for text already in memory (`name` is used in diagnostics).
// With `kept`, the diagnostics printed to `err` are also appended there as
// values (the library API returns them: include/schedc/schedc.h).
std::optional<Compiled> check_source(std::shared_ptr<dsl::SourceFile> file,
                                     const compiler::Target& target, std::ostream& err,
                                     std::vector<dsl::Diagnostic>* kept = nullptr);

// check_source, then lower and emit.
std::optional<Compiled> compile_source(std::shared_ptr<dsl::SourceFile> file,
                                       const compiler::Target& target, std::ostream& err,
                                       std::vector<dsl::Diagnostic>* kept = nullptr);

// check_file, then lower and emit.
std::optional<Compiled> compile_file(const std::string& path, const compiler::Target& target,
                                     std::ostream& err);

// What `run` and `bench` append to a file's text from their command line,
// as directives, so analysis checks them as any other.
struct CommandLineDirectives {
  // --layout: "NN", "NT", "TN" or "TT", A's letter first, and optionally
  // C's after them; N row-major, T column-major ("NT": B column-major,
  // C = X·Wᵀ); "" = the file's own. A file that sets a `layout` itself is
  // refused with --layout (one of the two would be ignored).
  std::string layout;
  // --batch: `batch N` for a file without `batch` (0 = none). A file with its
  // own `batch` keeps its text: the kernel is the same, and the command's
  // problem takes --batch's count (cli/batch_options.h).
  int64_t batch = 0;
};

// compile_file with `extra` appended to the text (nothing appended: the file
// as it is).
std::optional<Compiled> compile_file_with(const std::string& path,
                                          const CommandLineDirectives& extra,
                                          const compiler::Target& target, std::ostream& err);

// The most bytes schedc reads of any input file (a .sched file, a
// --kernel-source): a schedule is a few hundred bytes and a generated kernel
// some tens of kilobytes, so 4 MiB leaves room and bounds the work on a
// hostile input. docs/language.md documents it.
constexpr size_t kMaxInputBytes = size_t(4) << 20;

// The whole file at `path` (bytes as they are), or nothing with `why` set
// ("is a directory", "larger than 4 MiB, …", the system's reason). Reads at
// most kMaxInputBytes + 1 bytes, so /dev/zero, a FIFO or a pipe that never
// ends is refused, not read forever. The caller names the file.
std::optional<std::string> read_file(const std::string& path, std::string& why);

// The error limit of the front end's diagnostics (dsl::Diagnostics; 0 = no
// limit), set by the commands' --error-limit.
void set_error_limit(int limit);

// Parses "MxNxK" (each >= 1). Returns false on a malformed shape.
bool parse_shape(const std::string& text, compiler::Shape& out);
// Parses "1024,2048,4096x4096x1024" (a bare N is N x N x N) into `out`.
bool parse_shapes(const std::string& text, std::vector<compiler::Shape>& out);

// A schedule file's name without its folders (run's label, bench's first
// column).
inline std::string base_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace schedc::cli
