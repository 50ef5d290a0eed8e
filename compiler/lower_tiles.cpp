// Pass: block tile, threads per block, and the thread -> C element map.
#include <cctype>

#include "compiler/lower_passes.h"
#include "dsl/diagnostics.h"

namespace schedc::compiler {

KernelPlan lower_tiles(KernelPlan p) {
  const Schedule& s = p.schedule;
  p.dtype = s.dtype;
  p.name = kernel_name(s.file);
  p.vec = s.vectorize;
  p.epilogue.bias = s.epilogue.bias;
  p.epilogue.relu = s.epilogue.relu;

  if (s.is_naive()) {
    // One thread per C element; x runs along N so a warp's accesses coalesce.
    p.kind = KernelKind::naive;
    p.block_x = s.block_x;
    p.block_y = s.block_y;
    p.block_threads = s.block_x * s.block_y;
    p.block_m = s.block_y;
    p.block_n = s.block_x;
    p.block_k = 1;
    p.vec = 1;
    return p;
  }

  p.kind = KernelKind::tiled;
  p.block_m = s.tile->m;
  p.block_n = s.tile->n;
  p.block_k = s.tile->k;

  ThreadMap& m = p.threads;
  m.tm = s.thread.m;
  m.tn = s.thread.n;
  // `split PMxPN` gives the number of pieces along each side.
  m.pm = s.thread.m / s.thread.split_m;
  m.pn = s.thread.n / s.thread.split_n;
  if (s.warp) {
    m.warp_tiled = true;
    m.region_m = s.warp->m;
    m.region_n = s.warp->n;
  } else {
    m.region_m = p.block_m;
    m.region_n = p.block_n;
  }
  m.regions_n = p.block_n / m.region_n;
  m.lanes_m = m.region_m / m.tm;
  m.lanes_n = m.region_n / m.tn;
  p.block_threads = (p.block_m / m.tm) * (p.block_n / m.tn);
  SCHEDC_INTERNAL_ASSERT(
      p.block_threads == (p.block_m / m.region_m) * m.regions_n * m.threads_per_region(),
      "warp tile does not tile the block tile");
  return p;
}

}  // namespace schedc::compiler
