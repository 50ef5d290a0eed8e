// The convolution's copies on the Hopper kernel (codegen/blocks_wgmma.h;
// compiler/wgmma_plan.h, WgmmaConvCopy; docs/convolution.md): the producer
// warpgroup's 128 threads copy A's stage from the NHWC or NCHW32 input with
// 16-byte cp.async, addressing each chunk as
//   window origin of the row's output pixel   (per tile, in registers)
//   + the filter tap's offset                 (the host's table, conv.tap)
//   + the chunk's channel                     (advanced per k-tile: NHWC's
//                                              c, NCHW32's group plane and
//                                              lane)
// with no division in the k loop, and zeros where the tap falls in the
// padding, past the K of the GEMM or below its last row; B, the filters,
// still comes by TMA.
// NHWC: where the launch sets conv.im2col (compiler/conv_im2col.h), thread
// 0 loads A's stage instead with one or two TMA copies in im2col mode a
// k-tile (the tile's first output pixel, each copy's tap and first channel),
// counted by `full`'s transaction bytes beside the filters', with no
// arrive_lag.
#include <string>

#include "codegen/blocks_common.h"
#include "codegen/blocks_cp_async.h"
#include "codegen/blocks_wgmma.h"
#include "compiler/conv.h"

namespace schedc::codegen {

using compiler::KernelPlan;
using compiler::WgmmaPlan;

namespace {

// halo: the tile's input copy and the output row of a tile's row.
void emit_halo_helpers(Emitter& e, const KernelPlan& p) {
  const int panel_cols = 128 / p.wgmma->elem_bytes;
  const bool two = halo_64b(p);
  e.lines(format(
      R"(// halo %s (conv.im2col == 3%s; compiler/conv_halo.h, docs/convolution.md): tile `tile`'s
// input, `panels` 128-byte panels of channels (%d each%s) from panel `first`, each as
// conv.halo_phases phase images, one TMA box of tma_a each (tile mode, element strides the
// convolution's: zeros outside the input are the padding) -> a panel's region of shared memory
// at dst (conv.halo_region_bytes apart), the bytes completing on `bar`
__device__ __forceinline__ void halo_copy(const TmaMap& map, unsigned dst, unsigned bar,
                                          const ConvArgs& conv, int tile, int first, int panels) {
  const bool bands = conv.halo_bands > 1;  // else whole images
  const int n0 = bands ? tile / conv.halo_bands : tile * conv.halo_images;
  const int p0 = bands ? (tile %% conv.halo_bands) * conv.halo_out_rows : 0;
  const int h0 = conv.stride_h * (p0 + conv.halo_row_min), w0 = conv.stride_w * conv.halo_col_min;
  const unsigned per_phase = conv.halo_images * conv.halo_block * %s;
  for (int c = first * %d; c < (first + panels) * %d; c += %d, dst += conv.halo_region_bytes)
    for (int ph = 0; ph < conv.halo_phases; ++ph)
      asm volatile(
          "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
          "[%%0], [%%1, {%%3, %%4, %%5, %%6}], [%%2];\n"
          ::"r"(dst + ph * per_phase), "l"(&map), "r"(bar), "r"(c), "r"(w0 + conv.halo_phase_w[ph]),
          "r"(h0 + conv.halo_phase_h[ph]), "r"(n0)
          : "memory");
}
// The output row (C's) of virtual row v of halo tile `tile` (compiler/conv_halo.h,
// halo_output), or M where v is junk (past an output row, the tile's rows or its images)
__device__ __forceinline__ int halo_out_row(const ConvArgs& conv, int tile, int v, int M) {
  const int image = v / conv.halo_block, rem = v - image * conv.halo_block;
  const int r = rem / conv.halo_pitch, q = rem - r * conv.halo_pitch;
  const bool bands = conv.halo_bands > 1;
  const int n = (bands ? tile / conv.halo_bands : tile * conv.halo_images) + image;
  const int p = (bands ? (tile %% conv.halo_bands) * conv.halo_out_rows : 0) + r;
  if (image >= conv.halo_images || n >= conv.n || r >= conv.halo_out_rows || p >= conv.p ||
      q >= conv.q)
    return M;
  return (n * conv.p + p) * conv.q + q;
})",
      origin_note(p.schedule, p.schedule.halo_at).c_str(), two ? " or 4" : "", panel_cols,
      two ? "; with conv.im2col == 4, C's 64 bytes a pixel: one panel of 64-byte rows" : "",
      two ? "(conv.im2col == 4 ? 64u : 128u)" : "128u", panel_cols, panel_cols, panel_cols));
  e.line();
}

}  // namespace

void emit_wgmma_conv_helpers(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  emit_conv_args(e, w.conv->nchw32, p.schedule.halo);
  emit_cp_async_copy_helpers(e);  // (fence_proxy_async: emit_wgmma_helpers)
  e.comment(format("tma %s: the filters' k-tile at column k0 -> one stage, %s of B's N x K map;",
                   origin_note(p.schedule, p.schedule.tma_at).c_str(),
                   wgmma_boxes_text(w.b).c_str()));
  e.comment("`full` completes when its bytes have landed and the producer's 128 threads have");
  e.comment("arrived, each once its copies of A's stage have; a_bytes: A's stage where TMA loads");
  e.comment("it too (im2col mode), else 0");
  if (w.paired()) {
    e.comment(format("cluster 2x1 %s: this CTA's half of the filters' rows (crank), multicast to",
                     origin_note(p.schedule, p.schedule.cluster_at).c_str()));
    e.comment("this slice's CTAs of both tiles (pair_mask); `full` expects the whole stage");
  }
  e.open_scope(std::string("__device__ __forceinline__ void tma_copy_filters(const TmaMap& tma_b, "
                           "unsigned sb, unsigned full, int k0, int tile_n0, unsigned a_bytes") +
               (w.paired() ? ", unsigned crank, unsigned short pair_mask)" : ")"));
  e.line(format("mbar_expect_tx(full, a_bytes + %du);", w.b.stage_bytes));
  emit_wgmma_operand_loads(e, w.b, 'b', w.paired() ? WgmmaHalf::multicast_half : WgmmaHalf::whole,
                           false, "pair_mask");
  e.close_scope();
  e.line();
  if (w.conv->nchw32) return;
  e.lines(R"(// TMA in im2col mode: pixelsPerColumn (BM) pixels from (n, h, w) on, walking the map's
// bounding box (the window origins of the GEMM's rows), x channelsPerPixel (BK / copies) channels
// from c, each read at (h + dh, w + dw); zeros outside the input -> shared memory at dst
// (in the map's swizzle), the bytes completing on `bar`.
__device__ __forceinline__ void tma_load_im2col(unsigned dst, const TmaMap& map, unsigned bar, int c,
                                                int w, int h, int n, unsigned short dw,
                                                unsigned short dh) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes "
      "[%0], [%1, {%3, %4, %5, %6}], [%2], {%7, %8};\n"
      ::"r"(dst), "l"(&map), "r"(bar), "r"(c), "r"(w), "r"(h), "r"(n), "h"(dw), "h"(dh)
      : "memory");
})");
  e.line();
  if (p.schedule.halo) emit_halo_helpers(e, p);
}

namespace {

// A new tile (its first k-tile): each of the thread's rows' window origin,
// and its chunk's tap and channel at the tile's first k-tile `k_tile0`.
void emit_tile_rows(Emitter& e, const compiler::WgmmaConvCopy& c, const std::string& k_tile0) {
  e.comment("a new tile: the window origin (h0, w0) of each of this thread's rows' output pixel,");
  e.comment("and its offset; a row past M gets h0 = w0 = -32768, which no tap brings inside");
  e.line("#pragma unroll");
  e.open_scope(format("for (int i = 0; i < %d; ++i)", c.rows));
  e.line(format("const int m = tile_m0 + row0 + i * %d;", c.row_step));
  emit_conv_row_origin(e, c.nchw32, "origin[i]", "hw0[i]");
  e.close_scope();
  const std::string kk = k_tile0 == "0" ? format("chunk * %d", c.vec)
                                        : format("%s * BK + chunk * %d", k_tile0.c_str(), c.vec);
  if (c.nchw32) {
    e.comment("column kk = ((c / 32) * R * S + r * S + s) * 32 + c % 32 of A: the chunk's slot");
    e.comment("kk / 32 = (channel group g, tap), and ch = g * H * W * 32 + kk % 32 (once a tile)");
    e.line("const int kk = " + kk + ", slot = kk >> 5, g = slot / conv.taps;");
    e.line("tap = slot - g * conv.taps;");
    e.line("ch = g * plane + (kk & 31);");
    return;
  }
  e.comment("column kk = (r * S + s) * C + c of A: the chunk's tap and channel (once a tile)");
  e.line("const int kk = " + kk + ";");
  e.line("tap = kk / conv.c;");
  e.line("ch = kk - tap * conv.c;");
}

// The k-loop both copies share, opened: a persistent walk's state, the loop,
// and its head: the stage, its `empty` wait, the tile and the k-tile of it.
// A persistent walk moves to its next tile once the last one's k-tiles are
// issued: the tile's divisions once a tile, not once a k-tile (at a k-tile
// a tile they cost a 128x128 tile's producer more than the consumers'
// wgmma: bench/NOTES.md, session 27). The caller closes the loop.
void emit_producer_loop_open(Emitter& e, const KernelPlan& p) {
  const int S = p.wgmma->stages;
  if (p.wgmma->persistent)
    e.line("int k_tile = num_k_tiles - 1, walk_m0 = 0, walk_n0 = 0;  // the walk: k-tile, tile");
  e.open_scope("for (int it = 0; it < iters; ++it)");
  e.line(format("const int stage = it %% %d;", S));
  e.line(format("if (it >= %d) mbar_wait(empty_bar + 8 * stage, ((it / %d) + 1) & 1);", S, S));
  if (!p.wgmma->persistent) {
    e.line(std::string("const int k_tile = it;  // of this tile") +
           (p.k_sliced() ? "'s slice (from k_first)" : ""));
    return;
  }
  e.open_scope("if (++k_tile == num_k_tiles)");
  e.line("k_tile = 0;");
  emit_wgmma_walk_tile(e, p, "it / num_k_tiles");
  e.line("walk_m0 = tile_m0;");
  e.line("walk_n0 = tile_n0;");
  e.close_scope();
  e.line("const int tile_m0 = walk_m0, tile_n0 = walk_n0;");
}

std::string k0_of_k_tile(const KernelPlan& p) {
  return p.k_sliced() ? "(k_first + k_tile) * BK" : "k_tile * BK";
}

// NHWC with conv.im2col: thread 0 loads A's stage by TMA copies in im2col
// mode and the filters' boxes, expecting both in `full`'s bytes; every
// thread then arrives at once (the barrier counts 1 + 128 arrivals either
// way). conv.im2col is the copies a k-tile (compiler/conv_im2col.h,
// im2col_copies), each branch its own loop (`halves`; a shared loop that
// branched on it inside cost a batch-1 convolution's k loop 13%, H100):
// 1, C a multiple of BK: one copy of BK channels of one tap; 2, C a
// multiple of BK / 2 only: two of BK / 2 channels, each into a panel of
// 64-byte rows (the consumers read the stage in the 64-byte swizzle then),
// the second maybe of the next tap, or past K (channels past C: zeros, so
// every copy lands its whole box). A k-tile of several 128-byte panels of k
// (conv.im2col 1 only: C a multiple of a panel's channels) takes one copy a
// panel, each the next panel's channels, maybe of the next tap or past K.
void emit_im2col_producer(Emitter& e, const KernelPlan& p, bool halves) {
  const WgmmaPlan& w = *p.wgmma;
  const int panels = w.a.panels();
  e.comment("A by TMA's im2col mode (the launch set conv.im2col: compiler/conv_im2col.h):");
  if (halves) {
    e.comment("two copies a k-tile of BM pixels from the tile's first, BK / 2 channels each,");
    e.comment("into the stage's two panels of 64-byte rows");
  } else if (panels > 1) {
    e.comment(format("one copy a panel of k, %d a k-tile, of BM pixels from the tile's first, %d",
                     panels, w.a.panel_cols));
    e.comment("channels each: the panel's tap and first channel");
  } else {
    e.comment("one copy a k-tile of BM pixels from the tile's first, BK channels of one tap");
  }
  e.line("int n0 = 0, h0 = 0, w0 = 0;  // the tile's first output pixel: image, window origin");
  e.line("int tap = 0, ch = 0;         // the k-tile's filter tap and first channel");
  emit_producer_loop_open(e, p);
  e.open_scope("if (k_tile == 0)");
  e.comment("a new tile: its first output pixel's image and window origin (the copy walks on");
  e.comment("from it), and its first k-tile's tap and channel");
  e.line("const int pix = tile_m0 % pq, oh = pix / conv.q;");
  e.line("n0 = tile_m0 / pq;");
  e.line("h0 = oh * conv.stride_h - conv.pad_h;");
  e.line("w0 = (pix - oh * conv.q) * conv.stride_w - conv.pad_w;");
  if (p.k_sliced()) {
    e.line("const int kk = k_first * BK;");
    e.line("tap = kk / conv.c;");
    e.line("ch = kk - tap * conv.c;");
  } else {
    e.line("tap = 0;");
    e.line("ch = 0;");
  }
  e.close_scope();
  e.open_scope("if (threadIdx.x == 0)");
  e.line(format(
      "tma_copy_filters(tma_b, sB_u32 + stage * %du, full_bar + 8 * stage, %s, tile_n0, %du%s);",
      w.b.stage_bytes, k0_of_k_tile(p).c_str(), w.a.stage_bytes,
      wgmma_cluster_copy_args(p).c_str()));
  e.line("const ConvTapArg t = conv.tap[tap];");
  e.line(
      format("tma_load_im2col(sA_u32 + stage * %du, tma_a, full_bar + 8 * stage, ch, w0, h0, n0, "
             "(unsigned short)t.dw, (unsigned short)t.dh);",
             w.a.stage_bytes));
  if (halves) {
    e.comment("the k-tile's second half, BK / 2 channels on: maybe the next tap, maybe past K");
    e.comment("(then channels past C: zeros)");
    e.line(
        "const int c2 = ch + BK / 2 == conv.c ? 0 : ch + BK / 2, tap2 = c2 == 0 ? tap + 1 : tap;");
    e.line("const bool in_k = tap2 < conv.taps;");
    e.line("const ConvTapArg t2 = conv.tap[in_k ? tap2 : 0];");
    e.line(format(
        "tma_load_im2col(sA_u32 + stage * %du + %du, tma_a, full_bar + 8 * stage, in_k ? c2 : "
        "conv.c, w0, h0, n0, (unsigned short)t2.dw, (unsigned short)t2.dh);",
        w.a.stage_bytes, w.a.stage_bytes / 2));
  }
  if (panels > 1) {
    e.comment(format("the next panels: %d channels on each, the next tap past C, or past K (then",
                     w.a.panel_cols));
    e.comment("channels past C: zeros)");
    e.line("int cq = ch, tq = tap;");
    e.line("#pragma unroll");
    e.open_scope(format("for (int q = 1; q < %d; ++q)", panels));
    e.line(format("cq += %d;", w.a.panel_cols));
    e.open_scope("if (cq == conv.c)");
    e.line("cq = 0;");
    e.line("++tq;");
    e.close_scope();
    e.line("const bool in_k = tq < conv.taps;");
    e.line("const ConvTapArg tp = conv.tap[in_k ? tq : 0];");
    e.line(format(
        "tma_load_im2col(sA_u32 + stage * %du + q * %du, tma_a, full_bar + 8 * stage, in_k ? cq : "
        "conv.c, w0, h0, n0, (unsigned short)tp.dw, (unsigned short)tp.dh);",
        w.a.stage_bytes, w.a.panel_bytes()));
    e.close_scope();
  }
  e.close_scope();
  const bool wraps = halves || panels > 1;  // C a multiple of less than BK
  e.comment(halves
                ? "the next k-tile: BK channels on, past C once or twice (C a multiple of BK / 2)"
            : wraps ? "the next k-tile: BK channels on, past C maybe more than once"
                    : "the next k-tile: BK channels on, the next tap past C");
  e.line("ch += BK;");
  e.open_scope(wraps ? "while (ch >= conv.c)" : "if (ch == conv.c)");
  e.line(wraps ? "ch -= conv.c;" : "ch = 0;");
  e.line("++tap;");
  e.close_scope();
  e.line("mbar_arrive(full_bar + 8 * stage);");
  e.close_scope("it");
}

}  // namespace

// The k-tiles' order of a halo launch: channel block (a panel, BK = one) by
// channel block, each block's taps in turn: k-tile kt is tap kt % taps of
// block kt / taps, whose filters are B's column tap * C + block * BK. So a
// `split_k` slice's k-tiles span few blocks, and its copy of the input only
// those panels. `first`: the expression of the slice's first k-tile.
void emit_halo_k_order(Emitter& e, const std::string& first, bool two_taps) {
  e.comment("the k-tiles channel block by channel block, each block's taps in turn (halo's order)");
  if (!two_taps) {
    e.line("const int h_first = (" + first + ") / conv.taps;  // the first block, its panel in A");
    e.line("int h_block = h_first, h_tap = (" + first + ") - h_first * conv.taps;");
    return;
  }
  e.line("const int h_step = conv.im2col == 4 ? 2 : 1;  // taps a k-tile (64-byte pixels: two)");
  e.line("const int h_first = (" + first +
         ") * h_step / conv.taps;  // the first block, its panel in A");
  e.line("int h_block = h_first, h_tap = (" + first + ") * h_step - h_first * conv.taps;");
}

void emit_halo_k_next(Emitter& e, bool two_taps) {
  e.open_scope(two_taps ? "if ((h_tap += h_step) >= conv.taps)" : "if (++h_tap == conv.taps)");
  e.line("h_tap = 0;");
  e.line("++h_block;");
  e.close_scope();
}

// Each of this thread's accumulator rows' output row, before the k loop
// (its divisions then overlap the first copies' wait instead of delaying the
// epilogue, bench/NOTES.md session 45): row x is the tile's row
// consumer_row_in_tile + 64 * (x / 2) + 8 * (x % 2), as the epilogue's
// row0 + 64 i + 8 h.
void emit_halo_rows(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  e.comment("halo: each of this thread's rows' output row where the launch took the halo");
  const std::string mode = halo_taken(p);
  e.comment("(" + mode + ": the tile's rows are windows of its images), M where junk");
  e.line(format("int h_rows[%d];", 2 * w.m_insts));
  e.line("#pragma unroll");
  e.open_scope(format("for (int x = 0; x < %d; ++x)", 2 * w.m_insts));
  e.line("const int v = " + consumer_row_in_tile(w) + " + x / 2 * 64 + x % 2 * 8;");
  e.line("h_rows[x] = " + mode + " ? halo_out_row(conv, tile_m0 / BM, v, M) : tile_m0 + v;");
  e.close_scope();
}

namespace {

// halo (the launch set conv.im2col = 3): thread 0 alone runs the loop (the
// stages' `full` then count its expect_tx only: the other 127 threads'
// waits and arrivals cost the consumers' issue slots, bench/NOTES.md session
// 44). It copies the tile's input once, at its first k-tile, into A's
// stages' bytes (which the stages do not use then): the panels of the
// channel blocks its k-tiles span, counted on that k-tile's `full` with its
// filters; every k-tile then brings its filters alone. One tile a block (no
// persistent walk: the analyzer's rule), so nothing reads the copy before
// it lands.
void emit_halo_producer(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  const std::string first = p.k_sliced() ? "k_first" : "0";
  e.comment(format("halo %s: the tile's input once (halo_copy), then the filters a k-tile",
                   origin_note(p.schedule, p.schedule.halo_at).c_str()));
  const bool two = halo_64b(p);
  e.open_scope("if (threadIdx.x == 0)");
  emit_halo_k_order(e, first, two);
  e.line("const int h_blocks = (" + first + " + num_k_tiles - 1)" + (two ? " * h_step" : "") +
         " / conv.taps - h_first + 1;  // its k-tiles span");
  emit_producer_loop_open(e, p);
  const int ppb = w.a.panels();  // 128-byte panels a channel block (a k-tile)
  e.line(
      format("tma_copy_filters(tma_b, sB_u32 + stage * %du, full_bar + 8 * stage, h_tap * conv.c + "
             "h_block * BK, tile_n0, k_tile == 0 ? (unsigned)(%sh_blocks * conv.halo_bytes) : "
             "0u%s);",
             w.b.stage_bytes, ppb > 1 ? format("%d * ", ppb).c_str() : "",
             wgmma_cluster_copy_args(p).c_str()));
  e.line(
      format("if (k_tile == 0) halo_copy(tma_a, sA_u32, full_bar + 8 * stage, conv, tile_m0 / BM, "
             "%s, %s);",
             ppb > 1 ? format("%d * h_first", ppb).c_str() : "h_first",
             ppb > 1 ? format("%d * h_blocks", ppb).c_str() : "h_blocks"));
  emit_halo_k_next(e, two);
  e.close_scope("it");
  e.close_scope();
}

}  // namespace

void emit_wgmma_conv_producer(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  const compiler::WgmmaConvCopy& c = *w.conv;
  const int S = w.stages, D = c.arrive_lag;
  e.line(w.setmaxnreg_line(w.producer_regs));
  e.line("const int pq = conv.p * conv.q;");
  if (p.schedule.halo) {
    e.open_scope("if (" + halo_taken(p) + ")");
    emit_halo_producer(e, p);
    e.close_scope();
  }
  if (!c.nchw32) {
    e.open_scope("if (conv.im2col == 1)");
    emit_im2col_producer(e, p, false);
    e.close_scope();
    if (a_in_panels(w)) {  // (a k-tile of one 128-byte panel: compiler/conv_im2col.h)
      e.open_scope("if (conv.im2col == 2)");
      emit_im2col_producer(e, p, true);
      e.close_scope();
    }
    e.open_scope("if (!conv.im2col)");
  }
  e.comment(format("producer %s, conv %s: the 128 threads copy A's stage from the input,",
                   origin_note(p.schedule, p.schedule.warp_specialize_at).c_str(),
                   origin_note(p.schedule, p.schedule.conv_at).c_str()));
  e.comment(
      format("thread t the 16-byte chunk t %% %d of rows t / %d + %d i (i < %d); thread 0 also",
             c.chunks, c.chunks, c.row_step, c.rows));
  e.comment("loads the filters by TMA. A thread arrives on a stage's `full` once its copies into");
  e.comment(
      format("it have landed, %d iteration(s) later (arrive_lag: more copies in flight).", D));
  e.line(
      format("const int chunk = threadIdx.x %% %d, row0 = threadIdx.x / %d;", c.chunks, c.chunks));
  const bool one_swizzle = c.row_step % 8 == 0;  // every row of the thread: the same row % 8
  if (c.chunks == 8) {
    e.comment("the 128-byte swizzle: chunk ^ (row % 8), the same for all of this thread's rows");
    e.line(format("const unsigned a_dst = row0 * 128u + ((chunk ^ (row0 %% 8)) << 4);"));
  } else if (one_swizzle) {
    e.comment(format("its panel of k (chunk / 8, %d bytes apart) and the 128-byte swizzle in it:",
                     c.panel_bytes));
    e.comment("chunk % 8 ^ (row % 8), the same for all of this thread's rows");
    e.line(
        format("const unsigned a_dst = (chunk / 8) * %du + row0 * 128u + (((chunk %% 8) ^ (row0 %% "
               "8)) << 4);",
               c.panel_bytes));
  } else {
    e.comment(format("its panel of k (chunk / 8, %d bytes apart); the 128-byte swizzle, chunk %% 8",
                     c.panel_bytes));
    e.comment(format("^ (row %% 8), changes every %d rows (below)", c.row_step));
    e.line(format("const unsigned a_dst = (chunk / 8) * %du + row0 * 128u;", c.panel_bytes));
  }
  e.line(format("int origin[%d], hw0[%d];  // this thread's rows: window origin offset, (h0, w0)",
                c.rows, c.rows));
  if (c.nchw32) {
    e.comment("NCHW32: a channel group's plane, and the end of the last one (past K: zeros)");
    e.line("const int plane = conv.h * conv.w * 32, channels_end = (conv.c >> 5) * plane;");
    e.line("int tap = 0, ch = 0;  // its chunk's filter tap and offset g * plane + lane");
  } else {
    e.line("int tap = 0, ch = 0;  // its chunk's filter tap and channel at the current k-tile");
  }
  emit_producer_loop_open(e, p);
  e.open_scope("if (k_tile == 0)");
  emit_tile_rows(e, c, p.k_sliced() ? "k_first" : "0");
  e.close_scope();
  e.line(format(
      "if (threadIdx.x == 0) tma_copy_filters(tma_b, sB_u32 + stage * %du, full_bar + 8 * stage, "
      "%s, tile_n0, 0u%s);",
      w.b.stage_bytes, k0_of_k_tile(p).c_str(), wgmma_cluster_copy_args(p).c_str()));
  e.line(c.nchw32 ? "const bool in_k = ch < channels_end;  // else past K: zeros"
                  : "const bool in_k = tap < conv.taps;  // else past K: zeros");
  e.line("const ConvTapArg t = conv.tap[in_k ? tap : 0];");
  e.line(format("const unsigned dst = sA_u32 + stage * %du + a_dst;", w.a.stage_bytes));
  e.line("#pragma unroll");
  e.open_scope(format("for (int i = 0; i < %d; ++i)", c.rows));
  e.line("const int ih = (hw0[i] >> 16) + t.dh, iw = (int)(short)(hw0[i] & 0xFFFF) + t.dw;");
  e.line(
      "const bool inside = in_k && (unsigned)ih < (unsigned)conv.h && (unsigned)iw < "
      "(unsigned)conv.w;");
  const std::string at =
      one_swizzle ? format("dst + i * %du", c.row_step * 128)
                  : format("dst + i * %du + (((chunk %% 8) ^ ((row0 + i * %d) %% 8)) << 4)",
                           c.row_step * 128, c.row_step);
  e.line(format("cp_async_16(%s, inside ? A + (origin[i] + t.offset + ch) : A, inside ? 16 : 0);",
                at.c_str()));
  e.close_scope();
  e.line("cp_async_commit();");
  if (c.nchw32) {
    e.comment("the next k-tile's slot: BK / 32 taps on, into the next group's plane past the last");
    e.line("tap += BK / 32;");
    e.open_scope("while (tap >= conv.taps)");
    e.line("tap -= conv.taps;");
    e.line("ch += plane;");
    e.close_scope();
  } else {
    e.comment("the next k-tile's tap and channel (BK columns on; no division)");
    e.line("ch += BK;");
    e.open_scope("while (ch >= conv.c)");
    e.line("ch -= conv.c;");
    e.line("++tap;");
    e.close_scope();
  }
  e.comment(format("iteration it - %d's copies have landed: visible to wgmma, then arrive", D));
  e.line(format("cp_async_wait<%d>();", D));
  e.line("fence_proxy_async();");
  if (D > 0)
    e.line(format("if (it >= %d) mbar_arrive(full_bar + 8 * ((it - %d) %% %d));", D, D, S));
  else
    e.line(format("mbar_arrive(full_bar + 8 * stage);"));
  e.close_scope("it");
  if (D > 0) {
    e.comment(format("the last %d iterations' arrivals", D));
    e.line("cp_async_wait<0>();");
    e.line("fence_proxy_async();");
    e.line(
        format("for (int it = iters > %d ? iters - %d : 0; it < iters; ++it) "
               "mbar_arrive(full_bar + 8 * (it %% %d));",
               D, D, S));
  }
  if (!c.nchw32) e.close_scope();
}

}  // namespace schedc::codegen
