#pragma once
// Building blocks for TMA copies (`tma`, sm_90+): the tensor-map argument
// type, mbarrier init / expect-tx / parity wait / arrive, and the 2-D
// cp.async.bulk.tensor load that completes on an mbarrier.

#include "codegen/emitter.h"

namespace schedc::codegen {

// Device helpers: TmaMap (a CUtensorMap's 128 bytes, passed as a
// __grid_constant__ argument), mbar_init, mbar_init_fence, mbar_expect_tx,
// mbar_wait (spin on a phase parity), mbar_arrive, tma_load_2d.
void emit_tma_helpers(Emitter& e);

}  // namespace schedc::codegen
