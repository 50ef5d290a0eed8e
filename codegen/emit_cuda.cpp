// STUB: replaced by the SIMT code generator (issue 4).
#include "codegen/emit_cuda.h"
#include "dsl/diagnostics.h"
namespace schedc::codegen {
GeneratedKernel emit_cuda(const compiler::KernelPlan&) {
  SCHEDC_INTERNAL_ASSERT(false, "code generation not implemented yet");
  return {};
}
}  // namespace schedc::codegen
