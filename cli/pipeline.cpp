#include "cli/pipeline.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <sstream>

#include "codegen/emit_cuda.h"
#include "compiler/analyze.h"
#include "compiler/lower.h"
#include "dsl/parse.h"
#include "dsl/space.h"

namespace schedc::cli {

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

int g_error_limit = dsl::kDefaultErrorLimit;

std::string too_large() {
  return "larger than " + std::to_string(kMaxInputBytes >> 20) +
         " MiB, the most schedc reads of an input file (a schedule is a few hundred bytes)";
}

}  // namespace

namespace {

// Lower and emit a checked schedule.
void lower_and_emit(Compiled& c) {
  auto t0 = Clock::now();
  c.plan = compiler::lower(c.schedule, c.target);
  c.times.lower_ms = ms_since(t0);
  t0 = Clock::now();
  c.kernel = codegen::emit_cuda(c.plan);
  c.times.emit_ms = ms_since(t0);
}

}  // namespace

std::optional<Compiled> check_source(std::shared_ptr<dsl::SourceFile> file,
                                     const compiler::Target& target, std::ostream& err,
                                     std::vector<dsl::Diagnostic>* kept) {
  Compiled c;
  c.file = std::move(file);
  dsl::Diagnostics diags(c.file.get(), g_error_limit);
  // A search space (dsl/space.h) is many schedules: `schedc check` walks it
  // (cli/space_check.h); everything else takes one.
  const dsl::Space space = dsl::find_space(*c.file, diags);
  if (!space.empty())
    diags.error(space.sets[0].span,
                "this file is a search space ({a,b} sets: " +
                    (space.size() == INT64_MAX ? std::string("more than 2^63")
                                               : std::to_string(space.size())) +
                    " schedules); `schedc check` walks it, this command takes one schedule");
  if (diags.has_errors()) {
    diags.print(err);
    if (kept) kept->insert(kept->end(), diags.all().begin(), diags.all().end());
    return std::nullopt;
  }
  auto t0 = Clock::now();
  std::optional<dsl::Ast> ast = dsl::parse(*c.file, diags);
  c.times.parse_ms = ms_since(t0);
  std::optional<compiler::Schedule> schedule;
  if (ast) {
    t0 = Clock::now();
    schedule = compiler::analyze(*ast, c.file->name(), target, diags);
    c.times.analyze_ms = ms_since(t0);
  }
  diags.print(err);
  if (kept) kept->insert(kept->end(), diags.all().begin(), diags.all().end());
  if (!schedule || diags.has_errors()) return std::nullopt;
  c.schedule = *schedule;
  c.target = target;
  return c;
}

std::optional<Compiled> compile_source(std::shared_ptr<dsl::SourceFile> file,
                                       const compiler::Target& target, std::ostream& err,
                                       std::vector<dsl::Diagnostic>* kept) {
  std::optional<Compiled> c = check_source(std::move(file), target, err, kept);
  if (c) lower_and_emit(*c);
  return c;
}

std::optional<Compiled> check_file(const std::string& path, const compiler::Target& target,
                                   std::ostream& err) {
  auto t0 = Clock::now();
  std::string why;
  std::optional<std::string> text = read_file(path, why);
  if (!text) {
    err << path << ": error: " << why << "\n";
    return std::nullopt;
  }
  auto file = std::make_shared<dsl::SourceFile>(path, std::move(*text));
  double read_ms = ms_since(t0);
  std::optional<Compiled> c = check_source(std::move(file), target, err);
  if (c) c->times.read_ms = read_ms;
  return c;
}

std::optional<Compiled> compile_file(const std::string& path, const compiler::Target& target,
                                     std::ostream& err) {
  std::optional<Compiled> c = check_file(path, target, err);
  if (c) lower_and_emit(*c);
  return c;
}

std::optional<Compiled> compile_file_with(const std::string& path,
                                          const CommandLineDirectives& extra,
                                          const compiler::Target& target, std::ostream& err) {
  std::optional<Compiled> c = compile_file(path, target, err);
  if (!c) return c;
  const std::string& layout = extra.layout;
  std::string text = c->file->text();
  const size_t own_length = text.size();
  if (!layout.empty()) {
    if ((layout.size() != 2 && layout.size() != 3) ||
        layout.find_first_not_of("NT") != std::string::npos) {
      err << "schedc: error: --layout " << layout
          << ": expected NN, NT, TN or TT, and optionally C's letter after them (A, B, C; N "
             "row-major, T column-major)\n";
      return std::nullopt;
    }
    if (c->schedule.a_layout_at.from_source || c->schedule.b_layout_at.from_source ||
        c->schedule.c_layout_at.from_source) {
      err << path << ": error: the file sets a 'layout' itself; --layout " << layout
          << " applies to files that leave the layouts to the command line\n";
      return std::nullopt;
    }
    text += "\n# --layout " + layout + "\nlayout A " + (layout[0] == 'T' ? "col" : "row") +
            "\nlayout B " + (layout[1] == 'T' ? "col" : "row") + "\n";
    if (layout.size() == 3)
      text += std::string("layout C ") + (layout[2] == 'T' ? "col" : "row") + "\n";
  }
  if (extra.batch > 0 && c->schedule.batch == 0)
    text += "\n# --batch " + std::to_string(extra.batch) + "\nbatch " +
            std::to_string(extra.batch) + "\n";
  if (text.size() == own_length) return c;
  return compile_source(std::make_shared<dsl::SourceFile>(path, text), target, err);
}

std::optional<std::string> read_file(const std::string& path, std::string& why) {
  // A FIFO's open waits for a writer, as `cat` does; what it then sends is
  // bounded like any other input.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    why = std::string("cannot read file (") + std::strerror(errno) + ")";
    return std::nullopt;
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      why = "is a directory, not a file";
      return std::nullopt;
    }
    // A regular file says its size: refuse a large one without reading it.
    if (S_ISREG(st.st_mode) && size_t(st.st_size) > kMaxInputBytes) {
      why = "file is " + too_large();
      return std::nullopt;
    }
  }
  std::string text;
  char buf[1 << 16];
  while (text.size() <= kMaxInputBytes) {
    size_t want = std::min(sizeof buf, kMaxInputBytes + 1 - text.size());
    ssize_t n = ::read(fd, buf, want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      why = std::string("cannot read file (") + std::strerror(errno) + ")";
      return std::nullopt;
    }
    if (n == 0) return text;
    text.append(buf, size_t(n));
  }
  why = "input is " + too_large();
  return std::nullopt;
}

void set_error_limit(int limit) {
  g_error_limit = limit;
}

// "1024,2048,4096x4096x1024": a bare N is N x N x N.
bool parse_shapes(const std::string& text, std::vector<compiler::Shape>& out) {
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    compiler::Shape s;
    if (item.find('x') == std::string::npos) item = item + "x" + item + "x" + item;
    if (!parse_shape(item, s)) return false;
    out.push_back(s);
  }
  return !out.empty();
}

bool parse_shape(const std::string& text, compiler::Shape& out) {
  int64_t v[3];
  size_t pos = 0;
  for (int i = 0; i < 3; ++i) {
    if (pos >= text.size() || !std::isdigit((unsigned char)text[pos])) return false;
    int64_t x = 0;
    while (pos < text.size() && std::isdigit((unsigned char)text[pos])) {
      x = x * 10 + (text[pos++] - '0');
      if (x > (int64_t(1) << 31) - 1) return false;
    }
    if (x < 1) return false;
    v[i] = x;
    if (i < 2) {
      if (pos >= text.size() || text[pos] != 'x') return false;
      ++pos;
    }
  }
  if (pos != text.size()) return false;
  out = compiler::Shape{v[0], v[1], v[2]};
  return true;
}

}  // namespace schedc::cli
