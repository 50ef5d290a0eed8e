// KernelPlan tests over a sweep of generated SIMT schedules: the maps of
// every thread cover each C element exactly once, load each A/B tile element
// exactly once per k-step, stay inside shared memory; and a CPU emulation of
// the plan on ragged shapes matches a reference GEMM bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "codegen/emit_cuda.h"
#include "compiler/lower.h"
#include "plan_test_util.h"

namespace schedc::plantest {
namespace {

using compiler::KernelPlan;
using compiler::Target;

std::vector<SimtParams> sweep() {
  std::vector<SimtParams> out;
  const int tiles[][3] = {{32, 32, 32},  {32, 32, 8},  {64, 64, 8},   {64, 64, 16},
                          {128, 128, 8}, {128, 64, 8}, {64, 128, 16}, {128, 128, 16},
                          {128, 256, 8}, {256, 128, 8}};
  const int threads[][4] = {{1, 1, 1, 1}, {4, 1, 1, 1}, {4, 4, 1, 1},  {8, 8, 1, 1}, {8, 8, 2, 2},
                            {8, 4, 2, 1}, {4, 8, 1, 2}, {16, 8, 2, 2}, {8, 16, 2, 2}};
  const int warps[][2] = {{0, 0},   {32, 64}, {64, 32},  {16, 32}, {32, 32},
                          {64, 64}, {32, 16}, {64, 128}, {128, 64}};
  for (auto& t : tiles)
    for (auto& th : threads)
      for (auto& w : warps)
        for (int vec : {1, 4})
          for (int layout = 0; layout < 6; ++layout) {
            SimtParams q{t[0], t[1], t[2], th[0], th[1], th[2], th[3]};
            q.wm = w[0];
            q.wn = w[1];
            q.vec = vec;
            q.ta = layout & 1;
            q.tb = layout == 2 || layout == 5;
            q.pad_a = layout == 1 ? 4 : layout == 3 ? 1 : 0;
            q.pad_b = layout == 3 ? 4 : 0;
            q.swizzle = layout >= 4;
            q.double_buffer = (layout + vec) % 2;
            q.stages = q.double_buffer ? 1 : layout % 3 + 1;  // single, cp.async 2 and 3
            q.group = layout == 2 ? 4 : 1;
            q.bias = layout == 3;
            q.relu = layout == 1;
            if (valid_simt(q)) out.push_back(q);
          }
  return out;
}

std::string describe(const SimtParams& q) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "tile %dx%dx%d thread %dx%d split %dx%d warp %dx%d vec %d ta %d tb %d pad %d/%d "
                "swz %d db %d stages %d group %d",
                q.bm, q.bn, q.bk, q.tm, q.tn, q.split_m, q.split_n, q.wm, q.wn, q.vec, q.ta, q.tb,
                q.pad_a, q.pad_b, q.swizzle, q.double_buffer, q.stages, q.group);
  return buf;
}

// Each C element of the block tile written by exactly one (thread, i, j).
void expect_c_written_once(const KernelPlan& p) {
  std::vector<int> n(size_t(p.block_m) * p.block_n, 0);
  for (int t = 0; t < p.block_threads; ++t)
    for (int i = 0; i < p.threads.tm; ++i)
      for (int j = 0; j < p.threads.tn; ++j) {
        int r = p.threads.row(t, i), c = p.threads.col(t, j);
        ASSERT_TRUE(r >= 0 && r < p.block_m && c >= 0 && c < p.block_n);
        ++n[size_t(r) * p.block_n + c];
      }
  for (int x : n) ASSERT_EQ(x, 1);
}

// Each tile element loaded exactly once per k-step, to a distinct in-bounds slot.
void expect_tile_loaded_once(const compiler::TileCopy& c, const compiler::SmemLayout& l) {
  std::vector<int> n(size_t(c.rows) * c.cols, 0);
  std::set<int> slots;
  for (int t = 0; t < c.threads; ++t)
    for (int i = 0; i < c.iters; ++i)
      for (int e = 0; e < c.vec && c.active(t, i); ++e) {
        auto [r, col] = c.coord(t, i);
        ASSERT_TRUE(r < c.rows && col + e < c.cols);
        ++n[size_t(r) * c.cols + col + e];
        int o = l.offset(r, col + e);
        ASSERT_TRUE(o >= 0 && o < l.buffer_elems()) << "shared index " << o;
        ASSERT_TRUE(slots.insert(o).second);
      }
  for (int x : n) ASSERT_EQ(x, 1);
}

TEST(PlanSweep, MapsCoverEveryElementOnce) {
  Target t;
  auto all = sweep();
  ASSERT_GT(all.size(), 300u);
  for (const SimtParams& q : all) {
    SCOPED_TRACE(describe(q));
    KernelPlan p = compiler::lower(make_schedule(q), t);
    EXPECT_EQ(p.block_threads, (q.bm / q.tm) * (q.bn / q.tn));
    int a = q.ta ? q.bk * (q.bm + q.pad_a) : q.bm * (q.bk + q.pad_a);
    int b = q.tb ? q.bn * (q.bk + q.pad_b) : q.bk * (q.bn + q.pad_b);
    EXPECT_EQ(p.smem_bytes, (a + b) * (q.double_buffer ? 2 : q.stages) * 4);
    expect_c_written_once(p);
    expect_tile_loaded_once(p.copy_a, p.smem_a);
    expect_tile_loaded_once(p.copy_b, p.smem_b);
    if (p.needs_fallback()) {
      KernelPlan f = compiler::lower_fallback(p);
      // Only alignment changes: the same maps, checked operand by operand.
      EXPECT_EQ(f.copy_a.vec, p.copy_a.vec);
      EXPECT_EQ(f.copy_b.vec, p.copy_b.vec);
      // Vector copies are checked; element copies (a transposed operand under
      // cp.async) need no check.
      EXPECT_EQ(f.copy_a.check_align, f.copy_a.vec > 1);
      EXPECT_EQ(f.copy_b.check_align, f.copy_b.vec > 1);
      EXPECT_TRUE(f.copy_a.check_align || f.copy_b.check_align || f.epilogue.check_align);
      EXPECT_EQ(f.frag.vec_a, p.frag.vec_a);
      EXPECT_EQ(f.frag.vec_b, p.frag.vec_b);
      EXPECT_EQ(f.frag_double_buffer, p.frag_double_buffer);
      EXPECT_EQ(f.copy_late_step, 0);  // the fallback does not stagger its copies
      EXPECT_EQ(f.smem_bytes, p.smem_bytes);
      expect_tile_loaded_once(f.copy_a, f.smem_a);
      expect_tile_loaded_once(f.copy_b, f.smem_b);
    }
  }
}

// Staggered copy issue: every cp.async plan with fragment slots and at least
// two warps per scheduler splits its warps so that each scheduler (warp w on
// w % 4) has a warp issuing at step 0 and one at the late step, which comes
// before the last step (whose wait needs this k-tile's group committed).
TEST(PlanSweep, CopyStaggerGivesEverySchedulerBothHalves) {
  Target t;
  int staggered = 0;
  for (const SimtParams& q : sweep()) {
    SCOPED_TRACE(describe(q));
    KernelPlan p = compiler::lower(make_schedule(q), t);
    int warps = p.block_threads / 32;
    bool eligible = p.pipeline == compiler::Pipeline::cp_async && p.frag_double_buffer &&
                    warps % 8 == 0 && p.block_k >= 4;
    EXPECT_EQ(p.copy_late_step > 0, eligible);
    if (!eligible) continue;
    ++staggered;
    EXPECT_GT(p.copy_late_step, 0);
    EXPECT_LT(p.copy_late_step, p.block_k - 1);
    for (int sched = 0; sched < 4; ++sched) {
      bool early = false, late = false;
      for (int w = sched; w < warps; w += 4) (w * 32 < p.block_threads / 2 ? early : late) = true;
      EXPECT_TRUE(early && late) << "scheduler " << sched;
    }
  }
  EXPECT_GT(staggered, 0);
}

// Bank multiplicity of the worst warp store of a copy: the largest number of
// distinct 4-byte words one bank receives in one store instruction.
int worst_store_conflict(const compiler::TileCopy& c, const compiler::SmemLayout& l) {
  int worst = 0;
  for (int i = 0; i < c.iters; ++i)
    for (int w = 0; w < c.threads / 32; ++w) {
      std::set<int> words[32];
      for (int lane = 0; lane < 32 && c.active(w * 32 + lane, i); ++lane) {
        auto [r, col] = c.coord(w * 32 + lane, i);
        int word = l.offset(r, col);
        words[word % 32].insert(word);
      }
      for (auto& b : words) worst = std::max(worst, int(b.size()));
    }
  return worst;
}

// cp.async copies a transposed A one element at a time. With rows padded to
// 4 mod 32 banks, no warp store puts more than two words in a bank: whole
// tile rows where that holds, column strips where whole rows would be worse
// (the float4 split into four copies reached 16 rows and up to 4 words).
TEST(PlanSweep, ElementCopiesIntoTransposedTilesConflictAtMostTwoWay) {
  Target t;
  int checked = 0, strips = 0;
  for (SimtParams q : sweep()) {
    for (int stages : {2, 3}) {
      q.double_buffer = false;
      q.stages = stages;
      q.ta = true;
      q.pad_a = 4;
      q.swizzle = false;
      if (q.bm % 32 || !valid_simt(q)) continue;
      SCOPED_TRACE(describe(q));
      KernelPlan p = compiler::lower(make_schedule(q), t);
      ASSERT_EQ(p.copy_a.vec, 1);
      EXPECT_LE(worst_store_conflict(p.copy_a, p.smem_a), 2);
      if (p.copy_a.run) {
        ++strips;
        EXPECT_EQ(worst_store_conflict(p.copy_a, p.smem_a), 1);
      }
      expect_tile_loaded_once(p.copy_a, p.smem_a);
      ++checked;
    }
  }
  EXPECT_GT(checked, 100);
  EXPECT_GT(strips, 0);
  // The sgemm tiles keep whole rows: two-way at BK = 16, conflict-free at 8.
  SimtParams q{256, 128, 16, 16, 8, 4, 2};
  q.wm = q.wn = 64;
  q.vec = 4;
  q.ta = true;
  q.pad_a = 4;
  q.stages = 3;
  KernelPlan p = compiler::lower(make_schedule(q), t);
  EXPECT_EQ(p.copy_a.run, 0);
  EXPECT_EQ(worst_store_conflict(p.copy_a, p.smem_a), 2);
  q.bk = 8;
  p = compiler::lower(make_schedule(q), t);
  EXPECT_EQ(p.copy_a.run, 0);
  EXPECT_EQ(worst_store_conflict(p.copy_a, p.smem_a), 1);
  // Unpadded, no run is conflict-free short of one k per warp, which would
  // read 32 sectors per copy: runs stop at one 32-byte sector (8 floats).
  q.bk = 16;
  q.pad_a = 0;
  p = compiler::lower(make_schedule(q), t);
  EXPECT_EQ(p.copy_a.run, 8);
  EXPECT_EQ(worst_store_conflict(p.copy_a, p.smem_a), 8);
}

TEST(PlanSweep, EveryPlanEmits) {
  Target t;
  for (const SimtParams& q : sweep()) {
    SCOPED_TRACE(describe(q));
    KernelPlan p = compiler::lower(make_schedule(q), t);
    codegen::GeneratedKernel k = codegen::emit_cuda(p);
    EXPECT_NE(k.source.find("} // k_tile"), std::string::npos);
    EXPECT_EQ(k.has_fallback(), q.vec > 1);
    EXPECT_EQ(k.main.block.x, uint32_t(p.block_threads));
  }
}

// The plan run on the CPU equals a reference GEMM exactly (small integers
// make every summation order exact) on ragged shapes and leading dimensions.
TEST(PlanSweep, EmulationMatchesReference) {
  Target t;
  auto all = sweep();
  std::mt19937 rng(7);
  for (size_t idx = 0; idx < all.size(); idx += 13) {
    const SimtParams& q = all[idx];
    SCOPED_TRACE(describe(q));
    ASSERT_EQ(emulation_mismatch(compiler::lower(make_schedule(q), t), rng), "");
  }
}

}  // namespace
}  // namespace schedc::plantest
