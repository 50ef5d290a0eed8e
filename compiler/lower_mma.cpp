// STUB: replaced by the tensor-core lowering (issue 5).
#include "compiler/lower_mma.h"

#include "dsl/diagnostics.h"

namespace schedc::compiler {

KernelPlan lower_mma(const Schedule& s, const Target& t) {
  SCHEDC_INTERNAL_ASSERT(false, "tensor-core lowering not implemented yet");
  return {};
}

}  // namespace schedc::compiler
