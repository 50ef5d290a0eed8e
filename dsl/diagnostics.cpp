#include "dsl/diagnostics.h"

#include <algorithm>

namespace schedc::dsl {

Diagnostic& Diagnostics::error(SourceSpan span, std::string message) {
  bool keep = !full();
  ++error_count_;
  if (!keep) {
    ++dropped_errors_;
    scratch_ = Diagnostic{};
    return scratch_;
  }
  diags_.push_back(Diagnostic{Severity::error, span, std::move(message), {}});
  return diags_.back();
}

Diagnostic& Diagnostics::warning(SourceSpan span, std::string message) {
  // Warnings are bounded too: as many as the limit, and none once it is reached.
  int warnings = int(diags_.size()) - (error_count_ - dropped_errors_);
  if (full() || (error_limit_ > 0 && warnings >= error_limit_)) {
    ++dropped_warnings_;
    scratch_ = Diagnostic{};
    return scratch_;
  }
  diags_.push_back(Diagnostic{Severity::warning, span, std::move(message), {}});
  return diags_.back();
}

namespace {

const char* severity_word(Severity s) {
  switch (s) {
    case Severity::error: return "error";
    case Severity::warning: return "warning";
    case Severity::note: return "note";
  }
  return "error";
}

// Source line and caret under the span; non-printable bytes shown as '?'
// so a terminal never receives raw control bytes from the input.
void print_excerpt(std::ostream& os, const SourceFile& file, SourceSpan span) {
  std::string line(file.line_text(span.line));
  for (char& c : line)
    if ((unsigned char)c < 0x20 && c != '\t')
      c = '?';
    else if ((unsigned char)c >= 0x7f)
      c = '?';
  constexpr size_t kMaxShown = 160;  // a 1 MB line is not printed whole
  size_t first = 0;
  size_t col0 = span.col ? span.col - 1 : 0;
  if (line.size() > kMaxShown) {
    first = col0 > kMaxShown / 2 ? col0 - kMaxShown / 2 : 0;
    line = line.substr(first, kMaxShown);
  }
  std::string num = std::to_string(span.line);
  os << "    " << num << " | " << line << "\n";
  os << "    " << std::string(num.size(), ' ') << " | ";
  size_t caret_col = col0 - first;
  for (size_t i = 0; i < caret_col && i < line.size(); ++i) os << (line[i] == '\t' ? '\t' : ' ');
  os << '^';
  size_t len = span.length ? span.length : 1;
  len = std::min(len, line.size() > caret_col ? line.size() - caret_col : size_t(1));
  for (size_t i = 1; i < len; ++i) os << '~';
  os << "\n";
}

void print_one(std::ostream& os, const SourceFile* file, Severity sev, SourceSpan span,
               const std::string& message) {
  if (file) os << file->name() << ":";
  if (span.valid()) os << span.line << ":" << span.col << ":";
  os << " " << severity_word(sev) << ": " << message << "\n";
  if (file && span.valid()) print_excerpt(os, *file, span);
}

}  // namespace

void Diagnostics::print(std::ostream& os) const {
  for (const Diagnostic& d : diags_) {
    print_one(os, file_, d.severity, d.span, d.message);
    for (const Note& n : d.notes) print_one(os, file_, Severity::note, n.span, n.message);
  }
  if (dropped_errors_ == 0 && dropped_warnings_ == 0) return;
  auto count = [](int n, const char* what) {
    return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
  };
  std::string left_out = dropped_errors_ ? count(dropped_errors_, "more error") : "";
  if (dropped_warnings_)
    left_out += (left_out.empty() ? "" : " and ") + count(dropped_warnings_, "more warning");
  print_one(os, file_, Severity::note, {},
            left_out + " not shown (error limit " + std::to_string(error_limit_) +
                "; --error-limit 0 shows all)");
}

}  // namespace schedc::dsl
