// libFuzzer target over the front end: any bytes go through parse, analyze
// (for two targets), resources, the canonical text and the diagnostics
// printer. Besides "no crash, no sanitizer report" it checks one property:
// a schedule that analyzes prints canonical text that analyzes to itself.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "compiler/analyze.h"
#include "dsl/parse.h"

using namespace schedc;

namespace {

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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
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
  }
  return 0;
}
