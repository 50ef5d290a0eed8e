// libFuzzer target over the whole compiler short of NVRTC: any bytes go
// through parse and analyze (for two targets), then every schedule that
// analysis accepts goes through lower (with its fallback and stream_k tail
// entries), verify, the plan dump and emit_cuda. Besides "no crash, no
// sanitizer report" it checks these properties:
//   - a schedule comes back from analyze exactly when there is no error;
//   - a schedule that analyzes prints canonical text that analyzes to itself;
//   - its static resources are within the target's limits;
//   - lower, verify and emit raise no internal error (dsl::InternalError):
//     what analysis accepts, the back end must compile;
//   - the emitted source defines every entry it names, and its braces balance.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "codegen/emit_cuda.h"
#include "compiler/analyze.h"
#include "compiler/lower.h"
#include "dsl/parse.h"
#include "dsl/space.h"

using namespace schedc;

namespace {

[[noreturn]] void fail(const std::string& what, const std::string& schedule) {
  std::fprintf(stderr, "%s\nschedule:\n%s\n", what.c_str(), schedule.c_str());
  std::abort();
}

std::optional<compiler::Schedule> front_end(const std::string& text, const compiler::Target& t,
                                            std::string* printed) {
  dsl::SourceFile file("fuzz.sched", text);
  dsl::Diagnostics diags(&file);
  std::optional<compiler::Schedule> s;
  if (std::optional<dsl::Ast> ast = dsl::parse(file, diags))
    s = compiler::analyze(*ast, file.name(), t, diags);
  // A schedule comes back exactly when there is no error.
  if (s.has_value() == diags.has_errors()) std::abort();
  std::ostringstream os;
  diags.print(os);
  if (printed) *printed = os.str();
  return s;
}

// Braces of the emitted CUDA balance (the emitter opens and closes scopes in
// pairs) and never close more than are open.
bool braces_balance(const std::string& src) {
  long depth = 0;
  for (char c : src) {
    if (c == '{') ++depth;
    if (c == '}' && --depth < 0) return false;
  }
  return depth == 0;
}

// lower, verify, dump and emit an accepted schedule: any InternalError is a
// back-end bug (analysis accepted a schedule the back end cannot compile).
void back_end(const compiler::Schedule& s, const compiler::Target& target,
              const std::string& canon) {
  try {
    compiler::KernelPlan plan = compiler::lower(s, target);  // verifies the plan itself
    compiler::verify(plan);
    if (compiler::dump(plan).empty()) fail("empty plan dump", canon);
    codegen::GeneratedKernel k = codegen::emit_cuda(plan);
    if (k.source.empty()) fail("empty CUDA source", canon);
    if (k.source.find(k.main.name) == std::string::npos)
      fail("the source does not define its entry " + k.main.name, canon);
    if (k.has_fallback() && k.source.find(k.fallback.name) == std::string::npos)
      fail("the source does not define its fallback " + k.fallback.name, canon);
    if (!braces_balance(k.source)) fail("unbalanced braces in the CUDA source", canon);
  } catch (const dsl::InternalError& e) {
    fail(std::string("internal error in the back end for ") + target.arch_name() + ": " + e.what(),
         canon);
  }
}

// Search spaces (dsl/space.h) on any bytes: the sets lie inside the text in
// order, each has two or more choices, and the first and last candidates
// are spaces of no set and no error (a set's choice holds no brace).
void check_space(const std::string& text) {
  dsl::SourceFile file("fuzz.sched", text);
  dsl::Diagnostics diags(&file);
  const dsl::Space space = dsl::find_space(file, diags);
  if (!space.empty() && diags.has_errors()) std::abort();
  size_t at = 0;
  for (const dsl::SpaceSet& set : space.sets) {
    if (set.span.offset < at || set.span.offset + set.span.length > text.size() ||
        set.choices.size() < 2)
      std::abort();
    at = set.span.offset + set.span.length;
  }
  if (space.empty()) return;
  for (int64_t i : {int64_t(0), space.size() == INT64_MAX ? int64_t(0) : space.size() - 1}) {
    dsl::SourceFile candidate("fuzz.sched", space.candidate_text(text, i));
    dsl::Diagnostics none(&candidate);
    if (!dsl::find_space(candidate, none).empty() || none.has_errors()) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  check_space(text);
  for (const char* arch : {"sm_90", "sm_80"}) {
    compiler::Target target;
    if (!compiler::target_for_arch(arch, target)) std::abort();
    std::optional<compiler::Schedule> s = front_end(text, target, nullptr);
    if (!s) continue;
    compiler::Resources r = compiler::static_resources(*s, target);
    if (r.threads_per_block <= 0 || r.threads_per_block > target.max_threads_per_block ||
        r.smem_bytes > target.smem_per_block_optin || r.blocks_per_sm < 0)
      std::abort();
    std::string canon = compiler::to_sched_text(*s);
    std::string printed;
    std::optional<compiler::Schedule> again = front_end(canon, target, &printed);
    if (!again || compiler::to_sched_text(*again) != canon) {
      std::fprintf(stderr, "canonical text does not round-trip:\n%s\n%s", canon.c_str(),
                   printed.c_str());
      std::abort();
    }
    back_end(*s, target, canon);
  }
  return 0;
}
