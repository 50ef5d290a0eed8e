#include "codegen/blocks_tma.h"

namespace schedc::codegen {

void emit_tma_helpers(Emitter& e, bool batched) {
  e.lines(
      R"(// A CUDA tensor map (CUtensorMap): 128 opaque bytes the runtime encodes for each launch.
struct __align__(64) TmaMap {
  unsigned long long opaque[16];
};
// mbarrier: a shared 8-byte counter with a phase bit. A phase completes when
// `count` arrivals have come and every byte announced with expect_tx has landed.
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}
// Makes the initialized barriers visible to the TMA unit (the async proxy).
__device__ __forceinline__ void mbar_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// One arrival that also announces `bytes` to come from TMA copies.
__device__ __forceinline__ void mbar_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Waits until the phase with this parity (0, 1, 0, ...) has completed.
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n"
      "}\n" ::"r"(bar), "r"(parity)
      : "memory");
})");
  const TmaCoords at = tma_coords(batched, 3, 5);
  e.lines(
      std::string(
          batched
              ? R"(// TMA: the box at (col, row) of GEMM z's matrix in the tensor map -> shared
// memory at dst; the bytes complete on mbarrier `bar`; elements past the
// matrix edge arrive as zeros.)"
              : R"(// TMA: the box at (col, row) of the tensor map -> shared memory at dst; the bytes
// complete on mbarrier `bar`; elements past the matrix edge arrive as zeros.)") +
      R"(
__device__ __forceinline__ void tma_load_2d(unsigned dst, const TmaMap& map, unsigned bar, int col, int row)" +
      at.z_param + R"() {
  asm volatile(
      "cp.async.bulk.tensor.)" +
      at.dims + R"(.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, )" +
      at.list +
      R"(], [%2];\n"
      ::"r"(dst), "l"(&map), "r"(bar), "r"(col), "r"(row))" +
      at.z_operand + R"(
      : "memory");
})");
  e.line();
}

TmaCoords tma_coords(bool batched, int first, int z) {
  const std::string col = "%" + std::to_string(first), row = "%" + std::to_string(first + 1);
  if (!batched) return {"2d", "{" + col + ", " + row + "}", "", ""};
  return {"3d", "{" + col + ", " + row + ", %" + std::to_string(z) + "}", ", int z", ", \"r\"(z)"};
}

}  // namespace schedc::codegen
