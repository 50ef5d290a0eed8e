// Static resources of a schedule: threads per block, shared-memory bytes,
// blocks per SM. analyze checks its limits with these same functions and the
// lowering sizes its buffers with them, so the numbers agree everywhere.
#include <algorithm>
#include <climits>

#include "compiler/analyze.h"
#include "compiler/conv_halo.h"
#include "compiler/conv_im2col.h"
#include "compiler/wgmma_plan.h"

namespace schedc::compiler {

namespace {

// `halo`: what the launch does, and for the file's own convolution whether
// its input fits (the launch decides with the slices it takes; this counts
// split_k's, or one).
std::string halo_copies(const Schedule& s) {
  const Conv2d& v = *s.conv;
  const int64_t elem = size_of(s.dtype), bk = s.tile->k;
  const int64_t a_bytes = smem_use(s).a_total();  // A's stages, or `halo only`'s region
  int64_t bytes = 0;
  std::string mine;
  if (std::string why =
          halo_fit_error(v, s.tile->m, bk, int(elem), a_bytes, std::max(1, s.split_k), &bytes);
      !why.empty()) {
    mine = "not taken (" + why + ")";
  } else {
    const HaloGeometry g = halo_geometry(v, s.tile->m);
    const std::string tile = g.bands > 1    ? std::to_string(g.out_rows) + " output row(s) a tile"
                             : g.images > 1 ? std::to_string(g.images) + " images a tile"
                                            : "one image a tile";
    mine = "the input once a tile, " + tile + ", " + std::to_string(g.phases.size()) +
           " phase image(s), " + std::to_string(bytes) + " of A's " + std::to_string(a_bytes) +
           " bytes";
  }
  if (s.halo_only) {
    // No other copy of A: the launch refuses a convolution the region does not take.
    return "halo only: the filters by TMA, A's rows windows of the tile's input copied once "
           "(zero-padded phase images by TMA) into A's " +
           std::to_string(a_bytes) +
           " bytes (the file's convolution's phase images); a launch whose convolution's "
           "images need more, or do not fit the halo at all, is refused (no k-tile copies of "
           "A); this file's conv: " +
           mine;
  }
  return "halo: the filters by TMA, A's rows windows of the tile's input copied once (zero-padded "
         "phase images by TMA, into A's stages) where the launch finds the convolution fits "
         "(NHWC, C a multiple of BK and of a 128-byte panel or, with BK one panel, 64 bytes a "
         "pixel (two taps a k-tile), at most 4 phase images, a slice's "
         "panels within A's stages); this file's conv: " +
         mine;
}

}  // namespace

int64_t threads_per_block(const Schedule& s) {
  if (s.is_naive()) return int64_t(s.block_x) * s.block_y;
  const BlockTile& t = *s.tile;
  if (s.uses_wgmma()) {  // consumer warpgroups, and the producer's
    if (!s.warp || s.warp->m <= 0 || s.warp->n <= 0) return 0;
    const int64_t consumers = s.pingpong ? 2 : int64_t(t.m / s.warp->m) * (t.n / s.warp->n);
    return consumers * 128 + (s.warp_specialize ? 128 : 0);
  }
  if (s.uses_tensor_cores()) {
    if (!s.warp || s.warp->m <= 0 || s.warp->n <= 0) return 0;
    return int64_t(t.m / s.warp->m) * (t.n / s.warp->n) * 32;
  }
  if (s.thread.m <= 0 || s.thread.n <= 0) return 0;
  return int64_t(t.m / s.thread.m) * (t.n / s.thread.n);
}

SmemUse smem_use(const Schedule& s) {
  SmemUse u;
  if (s.is_naive()) return u;
  const BlockTile& t = *s.tile;
  int64_t elem = size_of(s.dtype);
  // mma / wmma stages keep each operand's layout in memory (compiler/mma_plan.h):
  // a column-major A is BK rows of BM, a column-major B BN rows of BK.
  const bool tc = s.mma && s.mma->api != MmaApi::wgmma;
  const bool a_km = s.transpose_a || (tc && s.a_col), b_nk = s.transpose_b || (tc && s.b_col);
  int64_t a = a_km ? int64_t(t.k) * (t.m + s.pad_a) : int64_t(t.m) * (t.k + s.pad_a);
  int64_t b = b_nk ? int64_t(t.n) * (t.k + s.pad_b) : int64_t(t.k) * (t.n + s.pad_b);
  u.a_bytes = a * elem;
  u.b_bytes = b * elem;
  u.buffers = s.double_buffer ? 2 : std::max(s.stages, 1);
  if (s.halo_only) u.a_region_bytes = s.halo_a_bytes;
  if (s.tma) u.barrier_bytes = tma_barrier_bytes(u.buffers);
  if (s.tma_store) {
    // Each consumer's staging (compiler/wgmma_plan.h): the whole tile of
    // 16-bit C, chunks of panels of a 4-byte C.
    const int64_t c_elem = c_size_of(s);
    u.c_stage_bytes = int64_t(t.m) * t.n * elem * (s.pingpong ? 2 : 1);
    if (c_elem == 4 && s.warp && s.warp->m > 0 && s.warp->n > 0) {
      const int64_t consumers = s.pingpong ? 2 : int64_t(t.m / s.warp->m) * (t.n / s.warp->n);
      const int64_t pipeline = u.buffers * (u.a_bytes + u.b_bytes) + u.barrier_bytes;
      u.c_stage_bytes =
          consumers * s.warp->m * 128 *
          wgmma_c_chunk_panels(s.warp->m, s.warp->n, int(c_elem), int(consumers), pipeline);
    }
  }
  // The swapped tf32 kernel's sector-staged stores (WgmmaPlan::sector_rows; 0
  // rows for every other kernel).
  u.c_stage_bytes += int64_t(wgmma_sector_rows(s, u.pipeline() + u.c_stage_bytes)) * t.n * 4;
  u.c_stage_for = u.c_stage_bytes == 0 ? ""
                  : s.tma_store        ? "tma_store"
                                       : "C rows off 32-byte sectors";
  u.split_recv_bytes = wgmma_split_recv_bytes(s, u.pipeline() + u.c_stage_bytes);
  // wmma fragments have no documented element layout: the epilogue goes
  // through one 16x16 f32 tile per warp (compiler/lower_mma.cpp).
  if (s.mma && s.mma->api == MmaApi::wmma)
    u.epilogue_bytes = threads_per_block(s) / 32 * 16 * 16 * 4;
  return u;
}

std::string smem_parts_text(const SmemUse& u) {
  const std::string buffers = std::to_string(u.buffers) + (u.buffers == 1 ? " buffer" : " buffers");
  std::string t = u.a_region_bytes ? "A " + std::to_string(u.a_region_bytes) +
                                         " (halo only: the phase images) + " + buffers + " x B " +
                                         std::to_string(u.b_bytes)
                                   : buffers + " x (A " + std::to_string(u.a_bytes) + " + B " +
                                         std::to_string(u.b_bytes) + ")";
  if (u.barrier_bytes) t += " + " + std::to_string(u.barrier_bytes) + " mbarrier bytes";
  if (u.c_stage_bytes)
    t += " + " + std::to_string(u.c_stage_bytes) + " bytes of C (" + u.c_stage_for + ")";
  if (u.split_recv_bytes)
    t += " + " + std::to_string(u.split_recv_bytes) +
         " bytes for split_k's sums (received by the CTA that stores each part)";
  return t;
}

Resources static_resources(const Schedule& s, const Target& t) {
  auto clamp = [](int64_t v) { return int(std::min<int64_t>(v, INT_MAX)); };
  Resources r;
  SmemUse u = smem_use(s);
  r.threads_per_block = clamp(threads_per_block(s));
  r.smem_bytes = clamp(u.total());
  r.a_tile_bytes = clamp(u.a_bytes);
  r.b_tile_bytes = clamp(u.b_bytes);
  r.buffers = u.buffers;
  r.a_region_bytes = clamp(u.a_region_bytes);
  r.epilogue_bytes = clamp(u.epilogue_bytes);
  r.barrier_bytes = clamp(u.barrier_bytes);
  r.c_stage_bytes = clamp(u.c_stage_bytes);
  r.split_recv_bytes = clamp(u.split_recv_bytes);
  r.c_stage_for = u.c_stage_for;
  r.smem_parts = smem_parts_text(u);
  if (s.uses_wgmma() && s.conv) {
    const int lag = wgmma_conv_arrive_lag(s.stages);
    const std::string copies = "by the producer's 128 threads (cp.async via the offset table), " +
                               std::to_string(lag + 1) + " k-tiles of A in flight (arrive_lag " +
                               std::to_string(lag) + ")";
    if (s.conv->layout == ConvLayout::nchw32) {
      r.tma_copies = "the filters by TMA; A " + copies;
    } else {
      // The file's own convolution: which of the two the launch will take.
      const Im2colGeometry g = im2col_geometry(*s.conv);
      const int bk = s.tile->k, panel = 128 / size_of(s.dtype);
      const std::string why = im2col_error(g, bk, panel);
      const std::string mode =
          im2col_copies(g, bk, panel) == 2
              ? "TMA's im2col mode, two copies a k-tile, where the grid runs in one wave (else "
                "the producer's copies)"
              : "TMA's im2col mode";
      const std::string where =
          bk > panel
              ? "where C is a multiple of " + std::to_string(panel) +
                    " (one copy a 128-byte panel of k, " + std::to_string(bk / panel) + " a k-tile)"
              : "where C is a multiple of BK = " + std::to_string(bk) +
                    " (one copy a k-tile) or of BK / 2 = " + std::to_string(bk / 2) +
                    " (two, into 64-byte-swizzled halves of the stage)";
      r.tma_copies =
          "the filters by TMA; A by TMA's im2col mode " + where +
          " and the window within the map's limits (every stage in flight), else " + copies +
          "; this file's conv: " + (why.empty() ? mode : "the producer's copies (" + why + ")");
      if (s.halo) r.tma_copies = halo_copies(s) + "; else " + r.tma_copies;
    }
  } else if (s.uses_wgmma())
    r.tma_copies = s.warp_specialize ? "TMA boxes from a producer warpgroup, mbarrier pipeline"
                                     : "TMA boxes, one thread, mbarrier pipeline";
  else if (s.tma)
    r.tma_copies = t.sm >= 90 ? "TMA boxes, one thread, mbarrier pipeline"
                              : "cp.async (no TMA before sm_90; the mbarrier bytes stay unused)";
  if (r.threads_per_block <= 0) return r;
  // The smallest bound wins; on a tie the first named here.
  r.blocks_per_sm = t.max_threads_per_sm / r.threads_per_block;
  r.limited_by = "threads";
  if (r.smem_bytes > 0 && t.smem_per_sm / r.smem_bytes < r.blocks_per_sm) {
    r.blocks_per_sm = t.smem_per_sm / r.smem_bytes;
    r.limited_by = "shared memory";
  }
  if (registers_fixed_at_launch(s)) {
    const int by_registers = t.regs_per_sm / t.register_pool(r.threads_per_block, s.blocks_per_sm);
    if (by_registers < r.blocks_per_sm) {
      r.blocks_per_sm = by_registers;
      r.limited_by = s.blocks_per_sm > 1 ? "registers: setmaxnreg, shared by blocks_per_sm"
                                         : "registers: setmaxnreg";
    }
  }
  if (t.max_blocks_per_sm < r.blocks_per_sm) {
    r.blocks_per_sm = t.max_blocks_per_sm;
    r.limited_by = "blocks per SM";
  }
  return r;
}

}  // namespace schedc::compiler
