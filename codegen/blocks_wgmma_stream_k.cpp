// The stream_k fix-up of the Hopper kernel's tail entry (codegen/blocks_wgmma.h,
// compiler/stream_k.h): the SIMT tail's protocol (codegen/blocks_stream_k.cpp)
// over a consumer warpgroup's wgmma accumulators instead of a thread's
// register tile. The producer warpgroup, if any, takes no part: it is done
// once the consumers have waited for the slice's last stage.
#include <string>

#include "codegen/blocks_common.h"
#include "codegen/blocks_wgmma.h"

namespace schedc::codegen {

using compiler::KernelPlan;
using compiler::WgmmaPlan;

namespace {

// Partial-sum float4 loads in flight per slice while a tile's sums are added
// up: all of a thread's at once would need as many registers again as acc.
constexpr int kFixupSumChunk = 8;

}  // namespace

void emit_wgmma_stream_k_fixup(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  const int threads = 128 * w.consumers(), vecs = w.accumulators / 4;
  // s8's s32 sums move as int4 in the same workspace (and add up exactly,
  // wrapping as the kernel's s32 does).
  const bool integer = w.integer();
  const std::string V4 = integer ? "int4" : "float4", zero = integer ? "0" : "0.0f";
  e.comment("stream_k: every slice publishes its accumulators in its own slot (its block's");
  e.comment("number) and counts its arrival; the last of the tile's slices to arrive adds them");
  e.comment("up in slice order (the same sum whoever arrives last), resets the count and writes");
  e.comment("C. Nobody waits.");
  e.line(wgmma_acc_macro(w, "SK_ACC"));
  e.line(format("const int ctid = threadIdx.x - %d;  // among the %d consumer threads",
                128 * w.producers(), threads));
  e.comment(format("partial sums as %s: number v * %d + ctid, coalesced", V4.c_str(), threads));
  e.line(V4 + "* mine = reinterpret_cast<" + V4 +
         "*>(sk_partials + (size_t)blockIdx.x * (BM * BN));");
  e.line("#pragma unroll");
  e.line(
      format("for (int v = 0; v < %d; ++v) __stcg(&mine[v * %d + ctid], make_%s(SK_ACC(4 * "
             "v), SK_ACC(4 * v + 1), SK_ACC(4 * v + 2), SK_ACC(4 * v + 3)));",
             vecs, threads, V4.c_str()));
  e.line("__threadfence();  // the partial sums reach the device before the arrival counts");
  e.comment("The arrival's place goes through A's stage 0, free now: every k-tile of the slice");
  e.comment("has been read (wgmma_wait<0> above, in every consumer before the barrier).");
  e.line("volatile int* sk_arrival = reinterpret_cast<volatile int*>(smem);");
  e.line(format("asm volatile(\"bar.sync %d, %d;\\n\" ::: \"memory\");", kWgmmaConsumersBarrier,
                threads));
  e.line("if (ctid == 0) *sk_arrival = atomicAdd(&sk_counters[shared_tile], 1);");
  e.line(format("asm volatile(\"bar.sync %d, %d;\\n\" ::: \"memory\");", kWgmmaConsumersBarrier,
                threads));
  e.line("const bool write_c = *sk_arrival == sk_slices - 1;  // the last to arrive");
  e.open_scope("if (write_c)");
  e.line("__threadfence();  // the other slices' partial sums are visible");
  e.line("#pragma unroll");
  e.open_scope(format("for (int v = 0; v < %d; ++v)", vecs));
  e.line("SK_ACC(4 * v) = SK_ACC(4 * v + 1) = SK_ACC(4 * v + 2) = SK_ACC(4 * v + 3) = " + zero +
         ";");
  e.close_scope();
  e.comment(format("%d %s loads in flight per slice, not all %d: registers", kFixupSumChunk,
                   V4.c_str(), vecs));
  e.line("#pragma unroll");
  e.open_scope(format("for (int v0 = 0; v0 < %d; v0 += %d)", vecs, kFixupSumChunk));
  e.open_scope("for (int q = 0; q < sk_slices; ++q)");
  e.line("const " + V4 + "* part = reinterpret_cast<const " + V4 +
         "*>(sk_partials + (size_t)(q * shared_tiles + shared_tile) * (BM * BN));");
  e.line("#pragma unroll");
  e.open_scope(format("for (int v = v0; v < v0 + %d && v < %d; ++v)", kFixupSumChunk, vecs));
  e.line(format("const %s x = __ldcg(&part[v * %d + ctid]);", V4.c_str(), threads));
  e.line(
      "SK_ACC(4 * v) += x.x; SK_ACC(4 * v + 1) += x.y; SK_ACC(4 * v + 2) += x.z; "
      "SK_ACC(4 * v + 3) += x.w;");
  e.close_scope();
  e.close_scope();
  e.close_scope();
  e.line("if (ctid == 0) sk_counters[shared_tile] = 0;  // all arrived: zero for the next launch");
  e.close_scope();
  e.line("#undef SK_ACC");
}

}  // namespace schedc::codegen
