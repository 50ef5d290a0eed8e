// Pass: the order in which blocks walk the C tiles. `swizzle block N` groups
// N tile-rows so that blocks running together share A and B panels in L2.
#include "compiler/lower_passes.h"

namespace schedc::compiler {

KernelPlan lower_raster(KernelPlan p) {
  p.swizzle_group = p.schedule.swizzle_block;
  return p;
}

}  // namespace schedc::compiler
