#pragma once
// The Hopper part of a KernelPlan (`wgmma …`): warpgroup roles, the
// instruction, the shared stages as TMA writes them and as wgmma's matrix
// descriptors read them, the mbarrier pipeline and the accumulator layout.
// Made by compiler/lower_wgmma.cpp; printed by codegen/emit_wgmma.cpp.
//
// Every address map is a plain method here, so that unit tests walk it on
// the CPU and codegen prints the same numbers.
//
// Shared memory, one stage (PTX ISA, "Matrix Descriptor" and the canonical
// 128-byte-swizzle layouts; CUDA's TMA 128-byte swizzle). An operand lies in
// the stage as it lies in global memory (`layout A|B row|col`), in 128-byte
// rows of P = 128 / element-size elements (64 f16/bf16, 32 tf32, 128 s8):
//   K-major (A row-major, B column-major: k contiguous): BK / P panels
//      (128-byte columns of k), each the tile's MN rows (BM of A, BN of B)
//      of P elements, one TMA box each. Row r of a panel at byte r * 128;
//      its 16-byte chunk c is stored at chunk c ^ (r % 8). Eight rows make a
//      1024-byte swizzle atom. (BK = P, one panel, is the common case; a
//      stage of two or more halves the mbarrier phases a k loop goes
//      through for the same bytes: docs/tensor_cores.md, "BK past 128
//      bytes".)
//   MN-major (B row-major, A column-major: m or n contiguous): MN / P
//      panels, each BK rows of P elements, one TMA box each; inside a panel
//      the same swizzle.
// A wgmma descriptor names a start address, LBO and SBO (bytes, >> 4) and the
// swizzle mode. K-major: 8-row groups SBO = 1024 bytes apart; the k-step kk
// starts in panel kk / (P / inst_k), (kk % (P / inst_k)) * 32 bytes into
// the row (LBO unused). MN-major: 8-k-row groups
// SBO = 1024 bytes apart, panels LBO = BK * 128 bytes apart; the k-step kk
// starts kk * 16 rows (2048 bytes) into the panel. wgmma's transpose flag of
// an operand is 1 when it is MN-major.
// tf32 (4-byte elements: BK 32, 32-element panels) is read by descriptor
// only K-major: with a row-major B the kernel reads B not by descriptor but
// into registers, and A as wgmma's k-major B operand (`swapped` below).

#include <algorithm>
#include <optional>
#include <string>

#include "compiler/schedule.h"
#include "compiler/target.h"

namespace schedc::compiler {

// One operand's stage in shared memory (see above), indexed by the
// operand's own coordinates: i along MN (A's m, B's n), k along K.
struct WgmmaOperand {
  int mn = 0, k = 0;  // the tile's extent: A (BM, BK), B (BN, BK)
  int elem_bytes = 2;
  bool mn_major = false;  // m (A) / n (B) contiguous: wgmma's transpose flag for it
  int panel_cols = 0;     // P: elements per 128-byte row, 128 (s8), 64 (f16/bf16) or 32 (f32)
  int stage_bytes = 0;
  int offset_bytes = 0;  // stage 0 from the start of dynamic shared memory (1024-aligned)
  int lbo_bytes = 0, sbo_bytes = 0;  // descriptor strides

  // The TMA boxes of one stage, a panel each: BK / P of MN rows (K-major),
  // MN / P of BK rows (MN-major); every box P elements (128 bytes) wide.
  int panels() const { return (mn_major ? mn : k) / panel_cols; }
  int panel_bytes() const { return (mn_major ? k : mn) * 128; }
  int box_rows() const { return mn_major ? k : mn; }
  int box_cols() const { return panel_cols; }
  // Byte offset inside one stage where TMA stores element (i, kk): panel,
  // 128-byte row, 16-byte chunk XORed with the row's index % 8.
  int offset(int i, int kk) const {
    const int along = mn_major ? i : kk, row = mn_major ? kk : i;
    const int panel = along / panel_cols, c = along % panel_cols;
    const int chunk = (c * elem_bytes) / 16, in_chunk = (c * elem_bytes) % 16;
    return panel * panel_bytes() + row * 128 + ((chunk ^ (row % 8)) * 16) + in_chunk;
  }
  // Bytes from element (i, kk) to (i + x, kk), x a whole number of 8-row
  // groups (K-major) or panels (MN-major), and from (i, 0) to (i, x), x a
  // whole number of 16 bytes (K-major: into panel x / P).
  int mn_bytes(int x) const { return mn_major ? (x / panel_cols) * panel_bytes() : x * 128; }
  int k_bytes(int x) const {
    return mn_major ? x * 128 : (x / panel_cols) * panel_bytes() + (x % panel_cols) * elem_bytes;
  }
  // cluster: whether the stage splits into two halves, one multicast by
  // each CTA: whole panels (MN-major) or whole 8-row swizzle atoms (K-major,
  // in each of its panels). Half h starts at element h * mn / 2 along MN,
  // byte mn_bytes(h * mn / 2) (of each panel, K-major).
  bool halves() const { return mn_major ? panels() % 2 == 0 : mn % 16 == 0; }
};

// How the Hopper kernel reads A and B in their layouts: the one decision
// analysis (its rules) and lowering (the plan) both take from here. A stage
// lies as its operand lies in memory, but wgmma reads tf32 from shared
// memory only k-major, so for tf32:
//   B row-major: swapped (C^T = B^T A^T, B^T's fragments in registers); if A
//     is column-major too, neither is k-major, and A is first transposed
//     into row-major scratch by the runtime (a_transposed);
//   A and B column-major: A's fragments in registers (a_in_registers);
//   A row-major, B column-major: both by descriptor, as f16/bf16.
// s8 is read k-major only too, and its register fragments pack four k
// values a register (four rows of an mn-major stage): the runtime
// transposes a column-major A into row-major scratch and a row-major B into
// column-major scratch (b_transposed), and both stages are k-major.
struct WgmmaForm {
  bool swapped = false, a_in_registers = false, a_transposed = false, b_transposed = false;
  bool a_mn_major = false, b_mn_major = false;  // how A's and B's stages lie
};
inline WgmmaForm wgmma_form(MmaType type, bool a_col, bool b_col) {
  const bool tf32 = type == MmaType::tf32;
  WgmmaForm f;
  if (type == MmaType::s8) {
    f.a_transposed = a_col;
    f.b_transposed = !b_col;
    return f;
  }
  f.swapped = tf32 && !b_col;
  f.a_in_registers = tf32 && a_col && b_col;
  f.a_transposed = tf32 && a_col && !b_col;
  f.a_mn_major = a_col && !f.a_transposed;
  f.b_mn_major = !b_col;
  return f;
}

// tma_store: the 128-byte panels of C a consumer stages at a time. 16-bit C
// is staged whole (wg_n·2 / 128 panels). A 4-byte C (s8's int32, twice the
// bytes) is staged whole where the `consumers` staging areas fit in sm_90's
// 227 KB beside `pipeline_bytes` (the stages and barriers), else in the
// largest chunks of panels that fit (at least one panel), each stored before
// the next is staged: a 128x256x128 tile's two consumers stage their 64 KB
// whole beside 2 stages, 32 KB at a time beside 3, 16 KB beside 4.
inline constexpr int kWgmmaSmemLimit = 227 * 1024;
inline int wgmma_c_chunk_panels(int wg_m, int wg_n, int c_elem_bytes, int consumers,
                                long long pipeline_bytes) {
  const int panels = wg_n * c_elem_bytes / 128;
  if (c_elem_bytes != 4 || panels < 1) return panels;
  int g = panels;
  while (g > 1 &&
         (panels % g != 0 || pipeline_bytes + 1LL * consumers * wg_m * 128 * g > kWgmmaSmemLimit))
    --g;
  return g;
}

// WgmmaPlan::sector_rows of schedule `s` (its lowering and
// compiler/resources.cpp both ask here): the most of 64, 32, 16 and 8 rows
// that divide the instruction's C rows and whose staging (rows x BN f32)
// fits in 227 KB beside `other_bytes` (stages, other staging, barriers); 0
// unless the kernel is the swapped tf32 one storing a row-major C from
// cooperative consumers side by side along N (an instruction's rows are
// then rows of the whole block tile).
inline int wgmma_sector_rows(const Schedule& s, long long other_bytes) {
  if (!s.uses_wgmma() || !s.mma || !s.tile || !s.warp) return 0;
  const bool swapped = wgmma_form(s.mma->type, s.a_col, s.b_col).swapped;
  if (!swapped || s.c_col || s.pingpong || s.tma_store || s.conv || s.warp->m != s.tile->m)
    return 0;
  for (int rows : {64, 32, 16, 8})
    if (s.mma->n % rows == 0 && other_bytes + 4LL * rows * s.tile->n <= kWgmmaSmemLimit)
      return rows;
  return 0;
}

// `split_k N`'s parts: where the sums are pushed, the tile's CTAs share the
// sum, part g summed and stored by the CTA of rank g % S (S the launch's CTAs
// a tile), which receives that part's sums from the S - 1 others. A part is
// one consumer warp's accumulators (its 16-row slices of its warpgroup's
// tile) where each warp stores C from its own registers and they are at
// least kSplitMinWarpPartBytes, else one consumer warpgroup's (tma_store
// stages C by warpgroup; the swapped tf32 forms hold it transposed). pingpong,
// whose consumers take whole tiles, never meets split_k (it needs
// `persistent`). A CTA sums at most ceil(parts / 2) parts (S >= 2).
// The floor, measured on an H200 (bench/NOTES.md, session 35): 64x16 tiles
// (1 KB a warp) split 4 ways ran 3-4% slower with a warp's part on each CTA
// than with CTA 0 summing the tile (every CTA then waits for the sums and
// runs an epilogue); 64x32 (2 KB) split 3 ways and 64x64 split 2 ways gained
// 1-2%.
inline constexpr int kSplitMinWarpPartBytes = 2048;
inline int wgmma_split_part_threads(const Schedule& s) {
  const bool swapped = s.mma && wgmma_form(s.mma->type, s.a_col, s.b_col).swapped;
  const bool warp_stores = !s.tma_store && !swapped;
  return warp_stores && s.warp->m * s.warp->n >= kSplitMinWarpPartBytes ? 32 : 128;
}
inline int wgmma_split_parts(const Schedule& s) {
  return (s.tile->m / s.warp->m) * (s.tile->n / s.warp->n) * (128 / wgmma_split_part_threads(s));
}
inline int wgmma_split_parts_owned(const Schedule& s) {
  return (wgmma_split_parts(s) + 1) / 2;
}

// `split_k N`'s receive area (codegen/blocks_wgmma_split_k.cpp): shared
// memory of its own in which each CTA of a tile's cluster takes the other
// CTAs' partial sums of the parts it owns while it still runs its own
// k-tiles: (N - 1) slots a part it may own, each a part's 4-byte sums
// (BM x BN x 4 / parts bytes), then an 8-byte mbarrier a part, 16-byte
// aligned. Its bytes where that fits beside `other_bytes` (stages, staging,
// barriers) in 227 KB and keeps `blocks_per_sm` blocks an SM (sm_90's
// Target: 228 KB, 1 KB reserved a block); 0 where it does not: the sums then
// wait in the other CTAs' stages for CTA 0 to read, a cluster barrier before
// and after.
inline int wgmma_split_recv_bytes(const Schedule& s, long long other_bytes) {
  // (A warp tile that does not divide the block tile is analyze's error: no parts.)
  if (!s.uses_wgmma() || s.split_k < 2 || !s.tile || !s.warp || s.warp->m <= 0 || s.warp->n <= 0 ||
      s.tile->m % s.warp->m != 0 || s.tile->n % s.warp->n != 0 || s.tile->m < s.warp->m ||
      s.tile->n < s.warp->n)
    return 0;
  const int owned = wgmma_split_parts_owned(s);
  const long long part_bytes = 4LL * s.tile->m * s.tile->n / wgmma_split_parts(s);
  const long long bytes = (8LL * owned + 15) / 16 * 16 + owned * (s.split_k - 1) * part_bytes;
  const long long total = other_bytes + bytes;
  const int blocks = std::max(1, s.blocks_per_sm);
  const Target sm90;
  if (total > kWgmmaSmemLimit || blocks * (total + sm90.smem_reserved_per_block) > sm90.smem_per_sm)
    return 0;
  return int(bytes);
}

// Whether wgmma.m64nNk* of `type` exists for N (a multiple of 8 up to 256
// here): the integer ones have N 8, 16, 24 and then multiples of 16 (PTX ISA).
inline bool wgmma_n_valid(MmaType type, int n) {
  return type != MmaType::s8 || n <= 24 || n % 16 == 0;
}

// conv (Schedule::conv; docs/convolution.md): A's stage is copied from the
// input by the producer warpgroup's 128 threads with 16-byte cp.async
// (codegen/blocks_wgmma_conv.cpp), not by TMA. Thread t copies the 16-byte
// chunk chunk_of(t) of the stage rows row_of(t, i), i < rows: the same chunk
// column of every row_step-th row, so its swizzled column (chunk ^ row % 8)
// is one number (row_step a multiple of 8: k-tiles of at most 256 bytes)
// and its rows' window origins stay in registers for the tile. A k-tile of
// more than 128 bytes lies in 128-byte panels of k (WgmmaOperand): chunk c
// in panel c / 8. A thread's copies of iteration it land before it arrives on that
// stage's `full` barrier, arrive_lag iterations later (cp.async.wait_group,
// then a proxy fence, so wgmma's reads see them); the lag keeps
// arrive_lag + 1 k-tiles in flight per thread and stays below the stages.
struct WgmmaConvCopy {
  int chunks = 8;       // 16-byte chunks in a k-tile's row of A (8 a 128-byte panel of k)
  int row_step = 16;    // 128 / chunks: rows from one of a thread's rows to the next
  int panel_bytes = 0;  // A's panels of k (BM rows of 128 bytes) apart
  int rows = 8;         // BM / row_step: the rows a thread copies each k-tile
  int vec = 16;         // elements in a chunk
  int arrive_lag = 2;   // stages - 2, at most 2
  // NCHW32 ([N][C/32][H][W][32], docs/convolution.md): a chunk is 16 bytes
  // of one pixel's 32-channel slot, the k-tile walks (channel group, tap)
  // slots, and the output C is NCHW32 too (the epilogue's c_offset_nchw32).
  bool nchw32 = false;
  int chunk_of(int t) const { return t % chunks; }
  int row_of(int t, int i) const { return t / chunks + i * row_step; }
  // The byte of A's stage where thread t's copy i lands (the 128-byte
  // swizzle in its panel of k), as the emitted a_dst computes it.
  int byte_of(int t, int i) const {
    const int c = chunk_of(t), row = row_of(t, i);
    return (c / 8) * panel_bytes + row * 128 + (((c % 8) ^ (row % 8)) << 4);
  }
};

// conv: how many k-tiles late a producer thread arrives on a stage's `full`
// (WgmmaConvCopy::arrive_lag): stages - 2, at most 2. The consumers free a
// stage one k-tile after reading it, so a lag of stages - 1 would wait on
// itself (a build that tried it deadlocked: bench/NOTES.md, session 26).
inline int wgmma_conv_arrive_lag(int stages) {
  return std::clamp(stages - 2, 0, 2);
}

// A warp-specialized wgmma kernel moves registers between its warpgroups
// (setmaxnreg) and is compiled with __launch_bounds__(threads, 1): ptxas
// gives every thread Target::registers_per_thread(threads) from launch
// (168 x 384 threads: 64,512 of 65,536), one block an SM. `schedc check`'s
// and explain's occupancy count it (compiler/resources.cpp, explain.cpp).
inline bool registers_fixed_at_launch(const Schedule& s) {
  return s.uses_wgmma() && s.warp_specialize;
}

// conv: the rows each producer thread copies a k-tile (WgmmaConvCopy::rows):
// 128 threads over BM rows of block_k_bytes / 16 chunks, BM / 16 for a k-tile
// of 128 bytes, twice as many for 256.
inline int wgmma_conv_copy_rows(int block_m, int block_k_bytes) {
  return block_m / (128 / (block_k_bytes / 16));
}

// conv: the producer's registers (setmaxnreg): 40 as when it only issues TMA,
// plus two words for each of its threads' rows, in steps of 8.
inline int wgmma_conv_producer_regs(int block_m, int block_k_bytes) {
  return (40 + 4 * wgmma_conv_copy_rows(block_m, block_k_bytes) + 7) / 8 * 8;
}

struct WgmmaPlan {
  MmaType type = MmaType::f16;
  int elem_bytes = 2;
  int inst_m = 64, inst_n = 256, inst_k = 16;  // wgmma.m64nNkK
  // swapped (tf32 with a row-major B): wgmma reads tf32 operands from shared
  // memory k-major only, and B's stages are n-major. The kernel computes C^T = B^T A^T:
  // wgmma's A is B^T, loaded into registers (which take any layout) from
  // B's stages; wgmma's B is A's k-major stage by descriptor. The
  // instruction's 64 rows run along C's columns, its N along C's rows:
  // m_insts = wg_n / 64, n_insts = wg_m / inst_n, and accumulator (row, col)
  // of instruction (i, j) is C (consumer_row0 + j * inst_n + col,
  // consumer_col0 + i * 64 + row).
  bool swapped = false;
  // a_in_registers (tf32 with A and B column-major): A's stage is m-major,
  // B's k-major. wgmma's A is A itself, loaded into registers from A's
  // stage as `swapped` loads B^T from B's; its B is B's stage by descriptor;
  // the accumulators are C's (not transposed).
  bool a_in_registers = false;
  // a_transposed (tf32 with A column-major and B row-major: neither operand
  // k-major, and only one can go through registers): the kernel is the
  // row-major-A one (swapped), and the runtime transposes A into row-major
  // scratch with the module's `_transpose` entry before each launch (its
  // time counts in the launch's).
  bool a_transposed = false;
  // b_transposed (s8 with B row-major): the runtime transposes B into
  // column-major scratch with the same `_transpose` entry first, and the
  // kernel reads it k-major (wgmma_form).
  bool b_transposed = false;
  // The stage the register operand is loaded from (its rows: the
  // instruction's 64 rows), when there is one.
  bool registers() const { return swapped || a_in_registers; }
  const WgmmaOperand& register_operand() const { return swapped ? b : a; }
  // The first of consumer c's rows of the register operand (C's columns
  // when swapped, its rows otherwise).
  int register_row0(int c) const { return swapped ? consumer_col0(c) : consumer_row0(c); }
  int wg_m = 64, wg_n = 256;             // C tile of one consumer warpgroup
  int consumers_m = 1, consumers_n = 1;  // warpgroup tiles over the block tile
  int m_insts = 1, n_insts = 1;          // instructions per warpgroup tile
  int k_steps = 4;                       // instructions along BK
  int stages = 2;
  // warp_specialize: warpgroup 0 produces (one thread issues TMA), the
  // others consume; setmaxnreg moves registers from producer to consumers.
  bool warp_specialize = false;
  int producer_regs = 40, consumer_regs = 232;
  // What each thread owns at launch (Target::registers_per_thread of the
  // block's threads times blocks_per_sm). ptxas rejects a setmaxnreg.dec
  // above the largest count the kernel's setmaxnreg asks for (C7406: the
  // producer's .dec<104> beside the consumers' .inc<88>), and NVRTC 13.0
  // then aborts the process. So where a conv producer needs more than this
  // (its rows' window origins, 640 threads: 104 of 96), the producer's is
  // the .inc and the consumers' the .dec (setmaxnreg_line); elsewhere the
  // producer's is the .dec and the consumers' the .inc, also where their
  // count is not above this (256 threads: .inc<240> of 255, as ptxas takes
  // the largest .inc for the kernel's count).
  int launch_regs = 168;
  std::string setmaxnreg_line(int regs) const {
    return std::string(regs > launch_regs ? "setmaxnreg_inc<" : "setmaxnreg_dec<") +
           std::to_string(regs) + ">();";
  }
  // conv: the producer's threads copy A (WgmmaConvCopy); every one of them
  // arrives on `full` besides the expect_tx of the filters' TMA.
  std::optional<WgmmaConvCopy> conv;
  int full_arrivals() const { return conv ? 1 + 128 : 1; }
  // pingpong (`warp_specialize pingpong`, persistent): two consumers, each
  // computing whole block tiles (consumers_m = consumers_n = 1), take the
  // block's tiles in turn: consumer c the tiles t = c, c + 2, … of its walk.
  // An order barrier pair lets a consumer start a tile's wgmma only after the
  // other has issued its previous tile's, so their mainloops alternate and
  // one's epilogue runs under the other's wgmma; it also keeps every stage
  // barrier wait within one phase of the barrier (see tile_turns below).
  bool pingpong = false;
  // cluster (`cluster CMxCN`, CM·CN = 2; persistent and specialized): two
  // CTAs walk neighbouring tiles of one "super-tile" (CM x CN tiles) in step;
  // 2x1 shares B (same tile column), 1x2 shares A (same tile row). Each
  // CTA's producer loads its own operand whole and half of the shared one
  // (B: panels rank·P/2 …; A: rows rank·BM/2 …), multicast into both CTAs at
  // the same offsets, so each CTA's `full` barrier still expects one whole
  // stage. A stage is refilled only once both CTAs' consumers have freed it:
  // every consumer warp arrives on the `empty` barrier of both CTAs.
  // Without `persistent` (paired(): `cluster 2x1` with `split_k`), the
  // launch's cluster is S x 2 CTAs: split_k's S slices (x) of two tiles
  // along M (y, blockIdx.y 2p and 2p + 1; the grid's rows rounded up to
  // even, a row past M computing zeros and storing nothing), each CTA
  // multicasting half of its slice's B stage into the CTA of the same slice
  // in the other tile (cluster rank slice + S * pair rank). A stage is freed
  // in both CTAs only where it will be refilled (the k-tile stages on is
  // the CTA's), so no CTA arrives on a barrier of one that may have left.
  int cluster_m = 1, cluster_n = 1;
  // persistent: each block walks tiles blockIdx.x + i * gridDim.x; the
  // pipeline's iteration count (and so each stage's phase) runs on across them.
  bool persistent = false;
  // tma_store: each consumer writes its C tile, through the epilogue, into
  // its staging area (the TMA 128-byte swizzle, as B's stages) and one thread
  // stores it with TMA boxes; the store runs on while the next tile
  // computes. Used when C is 16-byte aligned with ldc a multiple of 16 bytes
  // and C's rows in memory a whole number of 16 bytes (checked in the
  // kernel); else the consumer's warps copy the staged tile out row by row
  // (coalesced). The staging lies as C lies in memory: row-major C, wg_n / 64
  // panels of wg_m rows (n contiguous); column-major C (`c_col`), wg_m / 64
  // panels of wg_n rows (m contiguous).
  bool tma_store = false;
  bool c_col = false;      // `layout C col`: (m, n) at n·ldc + m
  int c_offset_bytes = 0;  // the staging areas, consumer after consumer
  int c_consumer_bytes = 0;
  WgmmaOperand a, b;
  int barrier_offset_bytes = 0;  // full[stages], empty[stages]: 8 bytes each
  // The staging area's 128-byte rows (wg_m of row-major C, wg_n of
  // column-major) and its panels of 128 / c_elem_bytes columns in memory
  // (64 f16/bf16, 32 of s8's int32).
  int c_stage_rows() const { return c_col ? wg_n : wg_m; }
  int c_panel_cols() const { return 128 / c_elem_bytes; }
  int c_stage_panels() const { return (c_col ? wg_m : wg_n) / c_panel_cols(); }
  // The panels staged at a time (wgmma_c_chunk_panels): all of them for
  // 16-bit C; a 4-byte C (s8) goes out c_chunk_panels at a time, each chunk
  // stored by TMA before the next is staged, so the staging area stays
  // small beside the pipeline's stages.
  int c_chunk_panels = 0;
  int c_chunks() const { return c_stage_panels() / c_chunk_panels; }
  // Byte offset, inside a consumer's whole C staging (c_chunks() chunks of
  // c_consumer_bytes, one after the other), of (row, col) of its tile: the
  // 128-byte row of its memory row (m, or n for column-major C), 16-byte
  // chunks XORed with that row % 8.
  int c_stage_offset(int row, int col) const {
    const int per_row = c_panel_cols();
    const int r = c_col ? col : row, x = c_col ? row : col, c = x % per_row;
    return (x / per_row) * c_stage_rows() * 128 + r * 128 +
           ((((c * c_elem_bytes) / 16) ^ (r % 8)) * 16) + (c * c_elem_bytes) % 16;
  }
  // The direct (not staged) stores of a 4-byte row-major C (s8's int32, the
  // f32 of tf32 with both operands k-major) write quads of adjacent columns
  // with 16-byte stores where a consumer tile's columns lie inside C or N is
  // a multiple of 4, with 16-byte rows (each store checks its row against M
  // and its column against N): lanes 2q and 2q + 1 swap one pair of each two
  // 8-column blocks, so the instruction's N must hold an even number of them
  // (codegen/blocks_wgmma_epilogue.cpp). A 1-byte C (s8 requantized) does
  // the same with 4-byte stores of four int8.
  bool direct_quads() const {
    return !swapped && !c_col && (c_elem_bytes == 4 || c_elem_bytes == 1) && (inst_n / 8) % 2 == 0;
  }
  // An int8 C whose quads are 4-byte stores goes further where C's rows are
  // 16-byte aligned: the four lanes of a row hold the row's 16 adjacent
  // columns of each two 8-column blocks between them, so they exchange
  // their packed quads (a 4x4 transpose of words by shuffles) and each
  // stores 16 of them at once, whole sectors. Four such column groups a
  // step: the instruction's N is a multiple of 32.
  bool direct_sixteens() const { return direct_quads() && c_elem_bytes == 1 && inst_n % 32 == 0; }
  // A convolution's quads whose epilogue has nothing but alpha and beta take
  // a second copy of their loop for alpha 1 and beta 0 at run time, storing
  // the accumulators as they are: a conv kernel runs a few microseconds with
  // one consumer warp a scheduler, so the epilogue's per-element
  // instructions are latency on its critical path (H100, res5 3x3 at batch
  // 8 with the halo candidate: 5.37 us with epilogue_value's alpha product
  // and beta test in every quad, 5.07-5.12 with the product alone,
  // 4.95-4.99 with neither; codegen/blocks_wgmma_epilogue.cpp;
  // docs/convolution.md, "The epilogue's latency"). GEMM kernels keep one
  // loop.
  bool plain_quads(const Epilogue& epi) const {
    return conv.has_value() && direct_quads() && !epi.bias && !epi.relu && !epi.requantize;
  }
  // Sector-staged stores (the swapped tf32 kernel, row-major C, cooperative
  // consumers side by side along N): where the tile lies inside C, beta is 0
  // and C's rows are off 32-byte sectors (ldc·4 not a multiple of 32, or C
  // itself off 32 bytes; the kernel checks), the block tile goes out
  // sector_rows rows at a time through a staging area of sector_rows x BN
  // f32 at sector_offset_bytes, each row written by one warp from its first
  // whole 32-byte sector on. A row of BN columns then touches BN / 8 + 1
  // sectors (row-pair stores: BN / 8 · 3 / 2). 0: no staging (it did not fit
  // beside the stages in 227 KB, or the kernel is not of that kind).
  // Measured on an H100 (bench/NOTES.md, session 22): tf32_best on
  // 4095x4097x1023 0.157-0.160 -> 0.146-0.147 ms; with C on its sectors the
  // row pairs stay (staging there: 0.120 -> 0.123 ms at 4096x4096x1024).
  int sector_rows = 0;
  int sector_offset_bytes = 0;
  // split_k: the receive area (wgmma_split_recv_bytes) at
  // split_recv_offset_bytes: a slot a (part it may own, other CTA), each
  // one part's sums as vectors (v * the part's threads + thread, 16 bytes
  // each), then an mbarrier a part it may own; 0: none (the sums wait in
  // the other CTAs' stages, CTA 0 sums the whole tile).
  int split_recv_offset_bytes = 0;
  bool split_push() const { return split_recv_offset_bytes > 0; }
  // Byte offset in the staging area of (row, col), row < sector_rows,
  // col < block_n: rows of block_n floats, each 8-column block of a row
  // XORed with (row / 2) % 4, so that a warp's write (rows 2p + h, p = lane
  // % 4, of 8 columns lane / 4) and a warp's read (32 columns of a row)
  // each meet 32 banks.
  static int sector_stage_offset(int block_n, int row, int col) {
    return (row * block_n + (col ^ (((row / 2) % 4) * 8))) * 4;
  }
  // The column lane `lane` writes in pass s (0 .. block_n / 32) of a row
  // whose first head (0..7) columns come before its first whole sector: the
  // passes start on sector boundaries; columns outside [0, block_n) are not
  // written.
  static int sector_drain_col(int head, int pass, int lane) { return head - 8 + 32 * pass + lane; }
  int accumulators = 0;  // f32 (s8: s32) registers per consumer thread
  // The accumulators' (D's) PTX type: s32 for s8's exact integer sums.
  bool integer() const { return type == MmaType::s8; }
  const char* d_type() const { return integer() ? "s32" : "f32"; }
  int c_elem_bytes = 2;  // C's element: the operands' but 4 for s8 (int32)

  // Pieces of the block tile computed at the same time (one per cooperative
  // consumer; one piece, the whole tile, under pingpong).
  int parts() const { return consumers_m * consumers_n; }
  int consumers() const { return pingpong ? 2 : parts(); }
  // The piece of the block tile consumer c computes.
  int part_of(int c) const { return pingpong ? 0 : c; }
  // pingpong: the consumer that computes the block's t-th tile.
  static int pingpong_consumer(int t) { return t % 2; }
  // The pipeline iteration of k-tile k of the block's t-th tile: tile after
  // tile for the producer and, under pingpong, for both consumers alike.
  static int iteration(int t, int k, int k_tiles) { return t * k_tiles + k; }
  // persistent: the tiles of block b in a grid of g blocks over `tiles`
  // tiles are b, b + g, …: this many (what the kernel computes as my_tiles).
  static int tiles_of_block(int tiles, int g, int b) { return (tiles - b + g - 1) / g; }
  // The tile and k-tile of pipeline iteration `it` of block b (persistent),
  // as the producer computes them before each copy.
  static int tile_of_iteration(int it, int k_tiles, int g, int b) { return b + it / k_tiles * g; }
  int producers() const { return warp_specialize ? 1 : 0; }
  int warpgroups() const { return consumers() + producers(); }
  // Warpgroup index of consumer c (the producer, if any, is warpgroup 0).
  int consumer_warpgroup(int c) const { return c + producers(); }
  int consumer_row0(int c) const { return (part_of(c) / consumers_n) * wg_m; }
  int consumer_col0(int c) const { return (part_of(c) % consumers_n) * wg_n; }
  // Arrivals that free a stage: one per warp of the consumers that read it
  // (all of them, cooperative; the one whose tile it holds, pingpong).
  int empty_arrivals() const { return (pingpong ? 1 : consumers()) * 4 * cluster_size(); }
  int cluster_size() const { return cluster_m * cluster_n; }
  bool paired() const { return cluster_size() > 1 && !persistent; }
  bool shares_a() const { return cluster_n == 2; }
  bool shares_b() const { return cluster_m == 2; }
  // cluster: the super-tiles over a tiles_m x tiles_n grid, and the tile
  // (row, column) that CTA `rank` computes of super-tile (sm, sn); it may lie
  // past the grid's edge (tiles_m or tiles_n odd): that CTA still loads and
  // multicasts its half, computes zeros and stores nothing.
  int super_tiles(int tiles_m, int tiles_n) const {
    return ((tiles_m + cluster_m - 1) / cluster_m) * ((tiles_n + cluster_n - 1) / cluster_n);
  }
  void cluster_tile(int sm, int sn, int rank, int& tm, int& tn) const {
    tm = sm * cluster_m + (shares_b() ? rank : 0);
    tn = sn * cluster_n + (shares_a() ? rank : 0);
  }

  // Descriptor start, in bytes inside one stage, of consumer c's A operand
  // for its m-instruction i at k-step kk.
  int a_start(int c, int i, int kk) const {
    return a.mn_bytes(consumer_row0(c) + i * inst_m) + a.k_bytes(kk * inst_k);
  }
  // swapped: descriptor start of A's stage read as wgmma's k-major B for
  // instruction j (along C's rows) at k-step kk.
  int a_operand_start(int c, int j, int kk) const {
    return a.mn_bytes(consumer_row0(c) + j * inst_n) + a.k_bytes(kk * inst_k);
  }
  // swapped: the element (k, n) of B's stage that register v (0..3) of
  // thread t holds for instruction i at k-step kk: PTX's m64nNk8 A fragment
  // (rows 16 * warp + lane / 4 (+ 8 for v odd), k lane % 4 (+ 4 for v >= 2)),
  // its rows along C's columns.
  // (a_in_registers: the element (m, k) of A's stage, the same way.)
  void bt_fragment(int c, int t, int i, int kk, int v, int& k, int& n) const {
    const int warp = t / 32, lane = t % 32;
    n = register_row0(c) + i * inst_m + 16 * warp + lane / 4 + 8 * (v % 2);
    k = kk * inst_k + lane % 4 + 4 * (v / 2);
  }

  // Descriptor start of consumer c's B operand for its n-instruction j at
  // k-step kk.
  int b_start(int c, int j, int kk) const {
    return b.mn_bytes(consumer_col0(c) + j * inst_n) + b.k_bytes(kk * inst_k);
  }
};

// PTX's wgmma D (accumulator) layout for an m64nN f32 tile: register r
// (0 .. N/2-1) of thread t (0..127) of the warpgroup holds (row, col):
// warp w = t / 32 owns rows 16w .. 16w+15; g = lane / 4, q = lane % 4;
// row = 16w + g + 8 * ((r / 2) % 2), col = 8 * (r / 4) + 2q + r % 2.
inline void wgmma_d_coord(int t, int r, int& row, int& col) {
  const int w = t / 32, lane = t % 32, g = lane / 4, q = lane % 4;
  row = 16 * w + g + 8 * ((r / 2) % 2);
  col = 8 * (r / 4) + 2 * q + r % 2;
}

// The shared byte (inside one stage) that wgmma reads for element (i, k) of
// an instruction's K-major operand (i < 64 rows, k < inst_k) through a
// 128-byte-swizzle descriptor of start `start` and stride SBO, as PTX's
// canonical layout defines it: 8-row core groups SBO apart, rows 128 bytes
// apart, then the swizzle on the address (16-byte chunk ^= 128-byte row % 8;
// stages are 1024-aligned, so the stage offset leaves the key alone).
inline int wgmma_kmajor_byte(int start, int sbo, int elem_bytes, int i, int k) {
  const int linear = start + (i / 8) * sbo + (i % 8) * 128 + k * elem_bytes;
  return (linear & ~0x70) | ((((linear >> 4) ^ (linear >> 7)) & 7) << 4);
}

// The same for an MN-major operand: element (k, n) of the instruction
// (k < inst_k, n < inst_n): 64-element (128-byte) column atoms LBO apart,
// 8-k-row groups SBO apart, k rows 128 bytes apart, then the swizzle.
inline int wgmma_mnmajor_byte(int start, int lbo, int sbo, int elem_bytes, int k, int n) {
  const int per_row = 128 / elem_bytes;
  const int linear =
      start + (n / per_row) * lbo + (k / 8) * sbo + (k % 8) * 128 + (n % per_row) * elem_bytes;
  return (linear & ~0x70) | ((((linear >> 4) ^ (linear >> 7)) & 7) << 4);
}

// The shared byte that wgmma reads for element (i, k) of an instruction's
// operand `o` (i along its MN, k < inst_k) through a descriptor of start `start`.
inline int wgmma_operand_byte(const WgmmaOperand& o, int start, int i, int k) {
  return o.mn_major ? wgmma_mnmajor_byte(start, o.lbo_bytes, o.sbo_bytes, o.elem_bytes, k, i)
                    : wgmma_kmajor_byte(start, o.sbo_bytes, o.elem_bytes, i, k);
}

}  // namespace schedc::compiler
