// STUB: replaced by the tensor-core code generator (issue 5).
#include "codegen/emit_mma.h"

#include "dsl/diagnostics.h"

namespace schedc::codegen {

GeneratedKernel emit_mma(const compiler::KernelPlan&) {
  SCHEDC_INTERNAL_ASSERT(false, "tensor-core code generation not implemented yet");
  return {};
}

}  // namespace schedc::codegen
