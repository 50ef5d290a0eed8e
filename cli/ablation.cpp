#include "cli/ablation.h"

#include <algorithm>
#include <sstream>

#include "compiler/analyze.h"
#include "dsl/parse.h"

namespace schedc::cli {

namespace {

// Context, kept in every step: the problem (shape, dtype, the operands'
// layouts) and the function computed (epilogue), which are not
// optimizations.
bool is_context(const dsl::Directive& d) {
  return d.keyword == "shape" || d.keyword == "dtype" || d.keyword == "layout" ||
         d.keyword == "epilogue";
}

std::string statement_text(const dsl::SourceFile& file, const dsl::Directive& d) {
  std::string text = file.text().substr(d.span.offset, d.span.length);
  while (!text.empty() && (text.back() == ';' || text.back() == ' ' || text.back() == '\t' ||
                           text.back() == '\r' || text.back() == '\n'))
    text.pop_back();
  return text;
}

// Empty when `text` is a valid schedule for `target`, else its first error.
std::string first_error(const std::string& text, const compiler::Target& target) {
  dsl::SourceFile file("<ablation step>", text);
  dsl::Diagnostics diags(&file);
  std::optional<dsl::Ast> ast = dsl::parse(file, diags);
  if (ast) compiler::analyze(*ast, file.name(), target, diags);
  for (const dsl::Diagnostic& d : diags.all())
    if (d.severity == dsl::Severity::error) return d.message;
  return "";
}

std::string join_lines(const std::vector<std::string>& context,
                       const std::vector<std::string>& directives) {
  std::string out;
  for (const std::string& s : context) out += s + "\n";
  for (const std::string& s : directives) out += s + "\n";
  return out;
}

}  // namespace

std::vector<std::string> optimization_directives(const dsl::SourceFile& file, const dsl::Ast& ast) {
  std::vector<std::string> out(1);
  for (const dsl::Directive& d : ast.directives)
    if (!is_context(d)) out.push_back(statement_text(file, d));
  return out;
}

bool parse_order(const std::string& text, std::vector<int>& order) {
  order.clear();
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty() || item.size() > 4 ||
        !std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return false;
    order.push_back(std::stoi(item));
  }
  return !order.empty();
}

bool plan_ablation(const dsl::SourceFile& file, const dsl::Ast& ast, AblationMode mode,
                   const std::vector<int>& order_in, const compiler::Target& target,
                   std::vector<AblationStep>& steps, std::string& error) {
  std::vector<std::string> context;
  for (const dsl::Directive& d : ast.directives)
    if (is_context(d)) context.push_back(statement_text(file, d));
  std::vector<std::string> opt = optimization_directives(file, ast);
  const int n = int(opt.size()) - 1;

  std::vector<int> order = order_in;
  if (order.empty())
    for (int i = 1; i <= n; ++i) order.push_back(i);
  std::vector<int> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < int(sorted.size()); ++i) {
    if (sorted[size_t(i)] != i + 1 || int(sorted.size()) != n) {
      error = "--order must list each of the directives 1.." + std::to_string(n) +
              " exactly once (this file has " + std::to_string(n) + ")";
      return false;
    }
  }

  steps.clear();
  if (mode == AblationMode::leave_one_out) {
    std::vector<std::string> all(opt.begin() + 1, opt.end());
    AblationStep full{"full schedule", join_lines(context, all), {}, "", true};
    full.note = first_error(full.schedule_text, target);
    full.valid = full.note.empty();
    steps.push_back(full);
    for (int i : order) {
      std::vector<std::string> rest;
      for (int j = 1; j <= n; ++j)
        if (j != i) rest.push_back(opt[size_t(j)]);
      AblationStep step{"- " + opt[size_t(i)], join_lines(context, rest), {i}, "", true};
      std::string err = first_error(step.schedule_text, target);
      if (!err.empty()) {
        step.valid = false;
        step.note = "not a valid schedule without it: " + err;
      }
      steps.push_back(step);
    }
    return true;
  }

  // Cumulative: grow the prefix; emit a step whenever the prefix is valid.
  std::vector<std::string> prefix;
  std::vector<int> pending;
  std::string pending_reason = first_error(join_lines(context, prefix), target);
  if (pending_reason.empty()) steps.push_back({"naive", join_lines(context, prefix), {}, "", true});
  std::string merge_reason = pending_reason.empty() ? "" : "naive kernel: " + pending_reason;
  for (int i : order) {
    prefix.push_back(opt[size_t(i)]);
    pending.push_back(i);
    std::string text = join_lines(context, prefix);
    std::string err = first_error(text, target);
    if (!err.empty()) {
      if (merge_reason.empty()) merge_reason = "'" + opt[size_t(i)] + "' alone: " + err;
      continue;
    }
    AblationStep step;
    for (size_t p = 0; p < pending.size(); ++p)
      step.label += (p ? " + " : "+ ") + opt[size_t(pending[p])];
    step.schedule_text = text;
    step.added = pending;
    if (pending.size() > 1 || !merge_reason.empty()) step.note = "merged: " + merge_reason;
    steps.push_back(step);
    pending.clear();
    merge_reason.clear();
  }
  if (!pending.empty()) {
    AblationStep step;
    step.label = "+ (rest)";
    step.schedule_text = join_lines(context, prefix);
    step.added = pending;
    step.valid = false;
    step.note = "the full schedule is not valid: " + first_error(step.schedule_text, target);
    steps.push_back(step);
  }
  return true;
}

}  // namespace schedc::cli
