// Pass: the order in which blocks walk the C tiles. `swizzle block N` groups
// N tile-rows so that blocks running together share A and B panels in L2;
// `stream_k` lets the blocks of a partial last wave share the k-tiles of its
// tiles (compiler/stream_k.h; the split itself is chosen at launch).
#include "compiler/lower_passes.h"

namespace schedc::compiler {

KernelPlan lower_raster(KernelPlan p) {
  p.swizzle_group = p.schedule.swizzle_block;
  p.stream_k = p.schedule.stream_k;
  return p;
}

}  // namespace schedc::compiler
