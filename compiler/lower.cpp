// STUB: replaced by the SIMT lowering (issue 4).
#include "compiler/lower.h"
#include "dsl/diagnostics.h"
namespace schedc::compiler {
KernelPlan lower(const Schedule& s, const Target& t) {
  KernelPlan p;
  p.schedule = s;
  p.target = t;
  return p;
}
void verify(const KernelPlan&) {}
}  // namespace schedc::compiler
