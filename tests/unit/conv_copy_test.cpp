// The convolution kernel's copies of A (compiler/wgmma_plan.h, WgmmaConvCopy;
// codegen/blocks_wgmma_conv.cpp) on the CPU:
//  - the producer's threads cover every 16-byte chunk of A's stage once, and
//    each writes its chunk where TMA's 128-byte swizzle puts it (the layout
//    the wgmma descriptors read, checked in wgmma_plan_test);
//  - the address walk the producer runs (a tile's window origins, the tap
//    and channel advanced per k-tile without a division, the 16-bit (h0,
//    w0), the padding predicate), replayed step by step as the emitted code
//    does it, reads for every A(m, kk) of every tile the element
//    compiler::gemm_a_offset names, and zeros where it names none or past
//    M and K: on ragged, strided, dilated and padded convolutions, channels
//    fewer than, more than and not dividing a k-tile, and slices starting
//    mid-K (stream_k's tail);
//  - the same for the mma.sync path's loader (codegen/blocks_mma_copies.cpp,
//    conv_tile_loader: its ConvWalk over a thread's chunks of the tile).
#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <sstream>
#include <string>

#include "compiler/analyze.h"
#include "compiler/conv.h"
#include "compiler/lower.h"
#include "dsl/diagnostics.h"
#include "dsl/parse.h"
#include "plan_test_util.h"

namespace schedc {
namespace {

using compiler::Conv2d;
using compiler::KernelPlan;

std::optional<KernelPlan> conv_plan_of(const std::string& text, std::string& diags) {
  return plantest::plan_of_text(text, &diags);
}

// BK: `panels` 128-byte panels of k.
std::string conv_schedule(const std::string& conv, const std::string& dtype, int bm, int stages,
                          int panels = 1) {
  const int bk = (dtype == "s8" ? 128 : 64) * panels;
  std::ostringstream o;
  o << "conv " << conv << "\ndtype " << dtype << "\ntile " << bm << "x128x" << bk << "\nwarp 64x128"
    << "\nwgmma " << dtype << "\ntma\nstages " << stages
    << "\nswizzle smem\nwarp_specialize\npersistent\n";
  return o.str();
}

TEST(ConvCopy, ThreadsCoverAStageOnceWhereTmaWouldWriteIt) {
  for (const char* dtype : {"s8", "f16", "bf16"})
    for (int bm : {64, 128, 256})
      for (int stages : {2, 3, 4, 6})
        for (int panels : {1, 2, 4}) {
          SCOPED_TRACE(std::string(dtype) + " BM " + std::to_string(bm) + " stages " +
                       std::to_string(stages) + " panels of k " + std::to_string(panels));
          if ((bm + 128) * 128 * panels * stages > 200 * 1024) continue;  // past shared memory
          std::string diags;
          auto p = conv_plan_of(
              conv_schedule("2x9x9x256 filter 64x3x3 pad 1", dtype, bm, stages, panels), diags);
          if (!p) {  // a 256-row tile: four consumers' accumulators beside the producer's rows
            EXPECT_EQ(bm, 256);
            EXPECT_NE(diags.find("registers per thread"), std::string::npos) << diags;
            continue;
          }
          const compiler::WgmmaPlan& w = *p->wgmma;
          ASSERT_TRUE(w.conv);
          const compiler::WgmmaConvCopy& c = *w.conv;
          EXPECT_TRUE(p->schedule.b_col);  // the filters: N x K, k contiguous
          EXPECT_FALSE(w.a.mn_major);
          EXPECT_EQ(w.full_arrivals(), 129);
          EXPECT_LT(c.arrive_lag, w.stages - 1);  // else the producer waits on itself
          // `schedc check` says the same lag (compiler/resources.cpp).
          EXPECT_NE(compiler::static_resources(p->schedule, p->target)
                        .tma_copies.find("arrive_lag " + std::to_string(c.arrive_lag) + ")"),
                    std::string::npos);
          EXPECT_EQ(c.chunks * 16, 128 * panels);
          EXPECT_EQ(w.a.panels(), panels);
          EXPECT_EQ(c.vec * w.elem_bytes, 16);
          std::set<int> bytes;
          for (int t = 0; t < 128; ++t) {
            const int chunk = c.chunk_of(t), row0 = c.row_of(t, 0);
            // as emitted (a_dst): one swizzle for all of a thread's rows where they are 8 apart
            const int dst =
                (chunk / 8) * c.panel_bytes + row0 * 128 + (((chunk % 8) ^ (row0 % 8)) << 4);
            for (int i = 0; i < c.rows; ++i) {
              const int row = c.row_of(t, i);
              ASSERT_LT(row, bm);
              if (c.row_step % 8 == 0) {
                EXPECT_EQ(dst + i * c.row_step * 128, c.byte_of(t, i));
              }
              EXPECT_EQ(c.byte_of(t, i), w.a.offset(row, chunk * c.vec));
              for (int b = 0; b < 16; ++b) EXPECT_TRUE(bytes.insert(c.byte_of(t, i) + b).second);
            }
          }
          EXPECT_EQ(int(bytes.size()), w.a.stage_bytes);
          // Registers: the producer's grew for its rows, the consumers' still fit.
          EXPECT_GE(w.producer_regs, 40 + 4 * c.rows);
          EXPECT_GE(w.consumer_regs, w.accumulators + 40);
        }
}

// The address walk both conv loaders emit, step by step: a row's window
// origin and 16-bit (h0, w0) (once a tile; a row past M gets (-32768,
// -32768), which no tap brings inside), a column's tap and channel (NCHW32:
// its slot's tap and g * plane + lane), moved BK columns on after each
// k-tile without a division, and the chunk's read: the input offset of its
// first element, or -1 for a zero chunk.
struct RowStart {
  int origin = 0, hw0 = int(0x80008000u);
};
RowStart row_start(const Conv2d& v, int64_t m, int64_t M, bool nchw32) {
  RowStart r;
  if (m >= M) return r;
  const int pq = int(v.p() * v.q()), mi = int(m);
  const int img = mi / pq, pix = mi - img * pq, oh = pix / int(v.q()), ow = pix - oh * int(v.q());
  const int h0 = oh * int(v.stride_h) - int(v.pad_h), w0 = ow * int(v.stride_w) - int(v.pad_w);
  r.origin = nchw32 ? ((img * (int(v.c) >> 5) * int(v.h) + h0) * int(v.w) + w0) * 32
                    : ((img * int(v.h) + h0) * int(v.w) + w0) * int(v.c);
  r.hw0 = int((unsigned(h0) << 16) | (unsigned(w0) & 0xFFFFu));
  return r;
}

struct Column {
  int tap = 0, ch = 0;
};
Column column_start(const Conv2d& v, int n_taps, int kk, bool nchw32) {
  if (!nchw32) return {kk / int(v.c), kk % int(v.c)};
  const int slot = kk >> 5, g = slot / n_taps;  // slot = (channel group g, tap)
  return {slot - g * n_taps, g * int(v.h * v.w) * 32 + (kk & 31)};
}
void column_advance(Column& col, const Conv2d& v, int n_taps, int bk, bool nchw32) {
  if (nchw32) {
    col.tap += bk / 32;
    while (col.tap >= n_taps) col.tap -= n_taps, col.ch += int(v.h * v.w) * 32;
  } else {
    col.ch += bk;
    while (col.ch >= int(v.c)) col.ch -= int(v.c), ++col.tap;
  }
}

int64_t chunk_read(const Conv2d& v, const std::vector<compiler::ConvTap>& taps, const RowStart& row,
                   const Column& col, bool nchw32) {
  const int n_taps = int(taps.size()), channels_end = (int(v.c) >> 5) * int(v.h * v.w) * 32;
  const bool in_k = nchw32 ? col.ch < channels_end : col.tap < n_taps;
  const compiler::ConvTap& tp = taps[in_k ? col.tap : 0];
  const int ih = (row.hw0 >> 16) + int(int16_t(tp.dh)),
            iw = int(int16_t(row.hw0 & 0xFFFF)) + int(int16_t(tp.dw));
  const bool inside = in_k && unsigned(ih) < unsigned(v.h) && unsigned(iw) < unsigned(v.w);
  return inside ? row.origin + int(tp.offset) + col.ch : -1;
}

// A chunk of `vec` elements read at `got` for A(m, kk0 ...) against the
// definition (compiler::gemm_a_offset): element e at got + e, or a zero
// chunk (-1) where the definition names no element or past M and K.
// Returns the elements checked.
int64_t expect_chunk(const Conv2d& v, const std::vector<compiler::ConvTap>& taps, int64_t m,
                     int64_t kk0, int vec, int64_t got) {
  const int64_t M = v.gemm_m(), K = v.gemm_k();
  for (int e = 0; e < vec; ++e) {  // the chunk's elements, contiguous in the input
    const int64_t kk = kk0 + e;
    std::optional<int64_t> want;
    if (m < M && kk < K) want = compiler::gemm_a_offset(v, taps, m, kk);
    if (want) {
      EXPECT_EQ(got + e, *want) << "m " << m << " kk " << kk;
      if (got + e != *want) return -1;
    } else {
      EXPECT_EQ(got, -1) << "m " << m << " kk " << kk << ": a zero read as " << got;
      if (got != -1) return -1;
    }
  }
  return vec;
}

// One wgmma producer thread's reads, replayed as codegen/blocks_wgmma_conv.cpp
// emits them, over the k-tiles [k_first, k_last) of the tile at tile_m0:
// for each (row, k-tile), the input offset of the chunk's first element, or
// -1 for a zero chunk.
struct Reads {
  std::vector<std::vector<int64_t>> at;  // [i][k-tile - k_first]
};
Reads replay_thread(const Conv2d& v, const std::vector<compiler::ConvTap>& taps, int t, int tile_m0,
                    int k_first, int k_last, int bk, const compiler::WgmmaConvCopy& c, int64_t M) {
  std::vector<RowStart> rows(c.rows);
  for (int i = 0; i < c.rows; ++i)  // k_tile == 0: a new tile
    rows[i] = row_start(v, tile_m0 + c.row_of(t, i), M, c.nchw32);
  Column col = column_start(v, int(taps.size()), k_first * bk + c.chunk_of(t) * c.vec, c.nchw32);
  Reads r;
  r.at.assign(c.rows, {});
  for (int k_tile = k_first; k_tile < k_last; ++k_tile) {
    for (int i = 0; i < c.rows; ++i) r.at[i].push_back(chunk_read(v, taps, rows[i], col, c.nchw32));
    column_advance(col, v, int(taps.size()), bk, c.nchw32);
  }
  return r;
}

void check_walk(const Conv2d& v, const std::string& dtype, int bm, int k_first_step,
                int panels = 1) {
  SCOPED_TRACE(compiler::conv_text(v) + " " + dtype + " BM " + std::to_string(bm) + ", " +
               std::to_string(panels) + " panel(s) of k");
  ASSERT_EQ(compiler::conv_error(v), "");
  std::string diags;
  auto p = conv_plan_of(
      conv_schedule(compiler::conv_text(v), dtype, bm, std::max(2, 4 / panels), panels), diags);
  ASSERT_TRUE(p) << diags;
  const compiler::WgmmaConvCopy& c = *p->wgmma->conv;
  ASSERT_EQ(p->wgmma->a.panels(), panels);
  ASSERT_EQ(c.nchw32, v.layout == compiler::ConvLayout::nchw32);
  const int bk = p->block_k;
  const int64_t M = v.gemm_m(), K = v.gemm_k();
  const int k_tiles = int((K + bk - 1) / bk);
  const std::vector<compiler::ConvTap> taps = compiler::offset_table(v);
  int64_t checked = 0;
  for (int tile_m0 = 0; tile_m0 < M; tile_m0 += bm)
    for (int k_first = 0; k_first < k_tiles; k_first += k_first_step)
      for (int t = 0; t < 128; ++t) {
        const Reads r = replay_thread(v, taps, t, tile_m0, k_first, k_tiles, bk, c, M);
        for (int i = 0; i < c.rows; ++i)
          for (int kt = k_first; kt < k_tiles; ++kt) {
            const int64_t m = tile_m0 + c.row_of(t, i);
            const int64_t kk0 = int64_t(kt) * bk + c.chunk_of(t) * c.vec;
            const int64_t n = expect_chunk(v, taps, m, kk0, c.vec, r.at[i][kt - k_first]);
            ASSERT_GT(n, 0);
            checked += n;
          }
      }
  EXPECT_GE(checked, M * K);
}

Conv2d make(int64_t n, int64_t h, int64_t w, int64_t c, int64_t k, int64_t r, int64_t s,
            int64_t stride, int64_t pad, int64_t dil = 1) {
  Conv2d v;
  v.n = n, v.h = h, v.w = w, v.c = c, v.k = k, v.r = r, v.s = s;
  v.stride_h = v.stride_w = stride;
  v.pad_h = v.pad_w = pad;
  v.dil_h = v.dil_w = dil;
  return v;
}

TEST(ConvCopy, ProducerWalkReadsWhatTheDefinitionReads) {
  // s8: 128 channels a k-tile; C below it (16, 32), equal, above and not
  // dividing it (48, 144); odd H, W; stride, padding, dilation; 1x1 stride 2.
  check_walk(make(2, 7, 9, 16, 40, 3, 3, 1, 1), "s8", 128, 1);
  check_walk(make(1, 9, 7, 32, 64, 3, 3, 2, 2, 2), "s8", 64, 1);
  check_walk(make(2, 8, 8, 48, 64, 5, 5, 2, 2), "s8", 128, 2);
  check_walk(make(1, 6, 6, 144, 64, 3, 3, 1, 1), "s8", 128, 1);
  check_walk(make(3, 11, 11, 128, 64, 1, 1, 2, 0), "s8", 64, 1);
  check_walk(make(1, 13, 11, 16, 64, 7, 7, 2, 3), "s8", 128, 3);  // the stem, C padded to 16
  // f16 / bf16: 64 channels a k-tile, 8 a chunk.
  check_walk(make(2, 7, 9, 8, 40, 3, 3, 1, 1), "f16", 128, 1);
  check_walk(make(1, 15, 13, 24, 72, 5, 5, 2, 2), "bf16", 128, 1);
  check_walk(make(1, 5, 5, 200, 64, 3, 3, 1, 4), "f16", 64, 2);  // pad wider than the filter
  // k-tiles of two and four 128-byte panels (s8 BK 256 and 512, f16 BK 128):
  // C below, equal to, above and not dividing a k-tile.
  check_walk(make(2, 7, 9, 16, 40, 3, 3, 1, 1), "s8", 64, 1, 2);
  check_walk(make(1, 7, 7, 512, 64, 3, 3, 1, 1), "s8", 64, 1, 2);
  check_walk(make(1, 6, 6, 384, 64, 3, 3, 2, 1), "s8", 128, 2, 2);
  check_walk(make(2, 5, 7, 144, 64, 3, 3, 1, 1), "s8", 64, 1, 4);
  check_walk(make(1, 9, 7, 96, 64, 3, 3, 1, 1), "f16", 64, 1, 2);
}

Conv2d nchw32(Conv2d v) {
  v.layout = compiler::ConvLayout::nchw32;
  return v;
}

TEST(ConvCopy, Nchw32WalkReadsWhatTheDefinitionReads) {
  // A k-tile is 4 (s8) or 2 (f16) slots of (channel group, tap): taps fewer
  // than, equal to, more than and not dividing a k-tile's slots; one group
  // and several; odd H, W; stride, padding, dilation; 1x1 and the 7x7 stem.
  check_walk(nchw32(make(2, 7, 9, 32, 64, 3, 3, 1, 1)), "s8", 128, 1);
  check_walk(nchw32(make(1, 9, 7, 64, 32, 3, 3, 2, 2, 2)), "s8", 64, 1);
  check_walk(nchw32(make(2, 8, 8, 96, 64, 5, 5, 2, 2)), "s8", 128, 2);
  check_walk(nchw32(make(1, 6, 6, 128, 64, 2, 2, 1, 1)), "s8", 128, 1);
  check_walk(nchw32(make(3, 11, 11, 128, 64, 1, 1, 2, 0)), "s8", 64, 1);
  check_walk(nchw32(make(1, 13, 11, 32, 64, 7, 7, 2, 3)), "s8", 128, 3);
  check_walk(nchw32(make(2, 7, 9, 64, 96, 3, 3, 1, 1)), "f16", 128, 1);
  check_walk(nchw32(make(1, 5, 5, 32, 32, 1, 3, 1, 1)), "bf16", 64, 1);
  check_walk(nchw32(make(2, 7, 9, 64, 64, 3, 3, 1, 1)), "s8", 64, 1, 2);
  check_walk(nchw32(make(1, 6, 6, 96, 64, 3, 3, 2, 1)), "s8", 64, 2, 4);
}

// The mma.sync path's loader (codegen/blocks_mma_copies.cpp,
// conv_tile_loader): thread t's chunks idx = t + i * THREADS of A's (BM, BK)
// stage (CopyMap::chunk), a ConvWalk started once a tile (conv_walk_start)
// and moved BK columns on after each k-tile (the k-tiles in order), replayed
// as emitted; where THREADS is a multiple of a row's chunks the thread's
// chunks share one column (one tap and channel kept).
void check_mma_walk(const Conv2d& v, const std::string& dtype, const std::string& tile,
                    const std::string& warp, bool one_column = true) {
  SCOPED_TRACE(compiler::conv_text(v) + " " + dtype + " tile " + tile);
  ASSERT_EQ(compiler::conv_error(v), "");
  const std::string mma = dtype == "s8" ? "s8 m16n8k32" : dtype;
  std::string diags;
  auto p = conv_plan_of("conv " + compiler::conv_text(v) + "\ndtype " + dtype + "\ntile " + tile +
                            "\nwarp " + warp + "\nmma " + mma + "\nstages 2\n",
                        diags);
  ASSERT_TRUE(p && p->mma) << diags;
  const compiler::CopyMap& c = p->mma->copy_a;
  const bool nchw32 = v.layout == compiler::ConvLayout::nchw32;
  const int bm = p->block_m, bk = p->block_k, n_taps = int(v.r * v.s);
  const int64_t M = v.gemm_m(), K = v.gemm_k();
  const int k_tiles = int((K + bk - 1) / bk);
  const bool one_col = c.threads % c.chunks_per_row == 0;
  EXPECT_EQ(one_col, one_column) << c.threads << " threads, " << c.chunks_per_row
                                 << " chunks a row";
  const std::vector<compiler::ConvTap> taps = compiler::offset_table(v);
  int64_t checked = 0;
  for (int tile_m0 = 0; tile_m0 < M; tile_m0 += bm)
    for (int t = 0; t < c.threads; ++t) {
      std::vector<int> rows, cols;
      std::vector<RowStart> starts;
      std::vector<Column> walk;
      for (int i = 0; i < c.iters; ++i) {
        int row = 0, col = 0;
        if (!c.chunk(t, i, row, col)) break;
        rows.push_back(row);
        cols.push_back(col);
        starts.push_back(row_start(v, tile_m0 + row, M, nchw32));
        walk.push_back(column_start(v, n_taps, col, nchw32));
        if (one_col) {
          ASSERT_EQ(col, cols[0]);  // one tap and channel serve every chunk
        }
      }
      for (int kt = 0; kt < k_tiles; ++kt)
        for (size_t i = 0; i < rows.size(); ++i) {
          const int64_t got = chunk_read(v, taps, starts[i], walk[i], nchw32);
          const int64_t n = expect_chunk(v, taps, tile_m0 + rows[i], int64_t(kt) * bk + cols[i],
                                         c.chunk_elems, got);
          ASSERT_GT(n, 0) << "k-tile " << kt;
          checked += n;
          column_advance(walk[i], v, n_taps, bk, nchw32);
        }
    }
  EXPECT_GE(checked, M * K);
}

TEST(ConvCopy, MmaWalkReadsWhatTheDefinitionReads) {
  // s8: 64 or 128 int8 a k-tile, f16: 32 or 48; channels fewer than, equal
  // to, more than and not dividing a k-tile; odd H, W; stride, padding,
  // dilation; 1x1 stride 2; the 7x7 stem. A k-tile of 32 or 64 16-bit
  // elements is 4 or 8 chunks a row (128 threads: one column a thread); 48
  // is 6, so a thread's chunks lie in different columns, each walked alone.
  check_mma_walk(make(2, 7, 9, 16, 40, 3, 3, 1, 1), "s8", "128x128x64", "64x64");
  check_mma_walk(make(2, 15, 13, 64, 96, 3, 3, 2, 1), "s8", "128x128x64", "64x64");
  check_mma_walk(make(1, 9, 7, 48, 64, 3, 3, 2, 2, 2), "s8", "64x64x64", "32x32");
  check_mma_walk(make(1, 6, 6, 144, 64, 3, 3, 1, 1), "s8", "64x64x128", "32x32");
  check_mma_walk(make(3, 11, 11, 128, 64, 1, 1, 2, 0), "s8", "64x64x64", "32x32");
  check_mma_walk(make(1, 13, 11, 16, 64, 7, 7, 2, 3), "s8", "64x64x64", "32x32");
  check_mma_walk(make(2, 7, 9, 8, 40, 3, 3, 1, 1), "f16", "64x64x32", "32x32");
  check_mma_walk(make(1, 15, 13, 24, 72, 5, 5, 2, 2), "bf16", "64x64x32", "32x32");
  check_mma_walk(make(2, 9, 7, 24, 40, 3, 3, 1, 1), "f16", "64x64x48", "32x32", false);
  check_mma_walk(make(1, 11, 9, 40, 64, 3, 3, 2, 1, 2), "bf16", "64x64x48", "32x32", false);
  check_mma_walk(nchw32(make(3, 9, 7, 64, 96, 3, 3, 1, 1)), "f16", "64x64x32", "32x32");
  check_mma_walk(nchw32(make(2, 8, 8, 96, 64, 5, 5, 2, 2)), "s8", "128x128x64", "64x64");
  check_mma_walk(nchw32(make(1, 13, 11, 32, 64, 7, 7, 2, 3)), "s8", "64x64x128", "32x32");
}

TEST(ConvCopy, RulesAreLocated) {
  std::string diags;
  EXPECT_FALSE(conv_plan_of(conv_schedule("1x8x8x20 filter 16x3x3", "s8", 128, 4), diags));
  EXPECT_NE(diags.find("test.sched:1:1: error: 'conv': C = 20 channels of s8 are 20 bytes a "
                       "pixel, not a multiple of 16"),
            std::string::npos)
      << diags;
  EXPECT_FALSE(
      conv_plan_of("conv 1x8x8x16 filter 16x3x3\ndtype s8\ntile 128x128x128\nwarp "
                   "64x128\nwgmma s8\ntma\nstages 4\nswizzle smem\n",
                   diags));
  EXPECT_NE(diags.find("'conv' needs 'warp_specialize'"), std::string::npos) << diags;
  EXPECT_FALSE(
      conv_plan_of("conv 1x8x8x16 filter 16x3x3\ndtype f32\ntile 128x128x8\nthread 8x8\n", diags));
  EXPECT_NE(diags.find("'conv' is not implemented yet without 'wgmma' or 'mma'"), std::string::npos)
      << diags;
  // mma.sync: cp.async stages (2 or more), no TMA, not wmma.
  const std::string mma =
      "conv 1x8x8x16 filter 16x3x3\ndtype s8\ntile 64x64x64\nwarp 32x32\nmma s8\n";
  EXPECT_TRUE(conv_plan_of(mma + "stages 2\n", diags)) << diags;
  EXPECT_FALSE(conv_plan_of(mma, diags));
  EXPECT_NE(diags.find("'conv' on 'mma' needs 'stages 2' or more"), std::string::npos) << diags;
  EXPECT_FALSE(conv_plan_of(mma + "stages 3\ntma\n", diags));
  EXPECT_NE(diags.find("'tma' does not apply with 'conv': not implemented yet on 'mma'"),
            std::string::npos)
      << diags;
  EXPECT_FALSE(conv_plan_of(
      "conv 1x8x8x16 filter 16x3x3\ndtype f16\ntile 64x64x32\nwarp 32x32\nwmma f16\nstages 2\n",
      diags));
  EXPECT_NE(diags.find("'conv' is not implemented yet without 'wgmma' or 'mma'"), std::string::npos)
      << diags;
  EXPECT_FALSE(
      conv_plan_of(conv_schedule("1x8x8x16 filter 16x3x3", "s8", 128, 4) + "batch 2\n", diags));
  EXPECT_NE(diags.find("'batch' does not apply with 'conv'"), std::string::npos) << diags;
}

}  // namespace
}  // namespace schedc
