// Uneven global -> shared copies: tiles whose vectors (SIMT) or 16-byte
// chunks (tensor cores) the block's threads do not divide. The plan walks
// every (thread, round) on the CPU: each tile element is copied exactly once,
// only the last round is guarded, the emitted kernel has the guard exactly
// when the plan says so, the CPU emulation matches a reference GEMM on ragged
// shapes, and `check` / `explain` get the right words. The GPU schedules
// tests/gpu/schedules/uneven_*.sched are among the plans walked here.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <sstream>

#include "cli/pipeline.h"
#include "codegen/emit_cuda.h"
#include "codegen/emit_mma.h"
#include "compiler/copy_notes.h"
#include "compiler/explain.h"
#include "plan_test_util.h"

namespace schedc::plantest {
namespace {

using compiler::CopyMap;
using compiler::TileCopy;

KernelPlan plan_for(const std::string& text, const char* arch = "sm_90") {
  compiler::Target t;
  EXPECT_TRUE(compiler::target_for_arch(arch, t));
  std::ostringstream err;
  auto c = cli::compile_source(std::make_shared<dsl::SourceFile>("t.sched", text), t, err);
  EXPECT_TRUE(c) << text << err.str();
  return c ? c->plan : KernelPlan{};
}

std::string gpu_schedule(const std::string& name) {
  std::string why;
  auto text = cli::read_file(std::string(SCHEDC_SOURCE_DIR) + "/tests/gpu/schedules/" + name, why);
  EXPECT_TRUE(text) << name << ": " << why;
  return text.value_or("");
}

// Every element of the tile copied once; a thread skips a round only in the
// last one (the guard is a `break`), and only when the copy is uneven.
void expect_simt_copy_exact(const TileCopy& c) {
  std::vector<int> n(size_t(c.rows) * c.cols, 0);
  for (int t = 0; t < c.threads; ++t)
    for (int i = 0; i < c.iters; ++i) {
      if (!c.active(t, i)) {
        EXPECT_TRUE(c.uneven());
        EXPECT_EQ(i, c.iters - 1);
        continue;
      }
      auto [r, col] = c.coord(t, i);
      ASSERT_TRUE(r >= 0 && r < c.rows && col >= 0 && col + c.vec <= c.cols);
      for (int e = 0; e < c.vec; ++e) ++n[size_t(r) * c.cols + col + e];
    }
  for (int x : n) ASSERT_EQ(x, 1);
}

void expect_chunks_exact(const CopyMap& c, int rows, int cols) {
  std::vector<int> n(size_t(rows) * cols, 0);
  for (int t = 0; t < c.threads; ++t)
    for (int i = 0; i < c.iters; ++i) {
      int r, col;
      if (!c.chunk(t, i, r, col)) {
        EXPECT_TRUE(c.needs_guard());
        EXPECT_EQ(i, c.iters - 1);
        continue;
      }
      for (int e = 0; e < c.chunk_elems; ++e) ++n[size_t(r) * cols + col + e];
    }
  for (int x : n) ASSERT_EQ(x, 1);
}

struct SimtCase {
  const char* text;
  bool uneven_a, uneven_b;
  int iters_a, iters_b;
};

const SimtCase kSimt[] = {
    // Even: 256 float4 vectors of A and of B for 256 threads.
    {"tile 128x128x8\nthread 8x8\nvectorize 4\n", false, false, 1, 1},
    // 256 elements of A and of B for 1024 threads (once an analysis error).
    {"tile 64x64x4\nthread 2x2\n", true, true, 1, 1},
    {"tile 32x128x8\nthread 4x4\nvectorize 4\n", true, false, 1, 1},
    {"tile 64x96x12\nthread 4x6\ndouble_buffer\n", false, true, 3, 5},
    {"tile 128x32x8\nthread 4x4\nvectorize 4\ntranspose B\npad B 4\n", false, true, 1, 1},
    {"tile 16x128x8\nthread 2x4\nvectorize 4\ntranspose A\nstages 3\n", true, false, 1, 1},
    {"tile 128x32x8\nthread 4x4\nvectorize 4\nstages 2\n", false, true, 1, 1},
    {"tile 128x256x12\nthread 8x16 split 2x2\nwarp 64x64\nvectorize 4\nstages 3\n", true, false, 2,
     3},
    // Column strips of a transposed A: with whole-row passes, and by vector number.
    {"tile 16x128x32\nthread 2x1\ntranspose A\npad A 4\nstages 2\n", true, false, 1, 4},
    {"tile 40x128x16\nthread 5x4\ntranspose A\nstages 2\n", true, false, 3, 8},
};

TEST(UnevenCopy, SimtPlansCopyEachElementOnce) {
  for (const SimtCase& c : kSimt) {
    SCOPED_TRACE(c.text);
    KernelPlan p = plan_for(c.text);
    ASSERT_EQ(p.kind, compiler::KernelKind::tiled);
    EXPECT_EQ(p.copy_a.uneven(), c.uneven_a);
    EXPECT_EQ(p.copy_b.uneven(), c.uneven_b);
    EXPECT_EQ(p.copy_a.iters, c.iters_a);
    EXPECT_EQ(p.copy_b.iters, c.iters_b);
    expect_simt_copy_exact(p.copy_a);
    expect_simt_copy_exact(p.copy_b);
    if (p.needs_fallback()) {
      KernelPlan f = compiler::lower_fallback(p);
      expect_simt_copy_exact(f.copy_a);
      expect_simt_copy_exact(f.copy_b);
    }
  }
}

TEST(UnevenCopy, SimtEmulationMatchesReference) {
  std::mt19937 rng(5);
  for (const SimtCase& c : kSimt) {
    SCOPED_TRACE(c.text);
    EXPECT_EQ(emulation_mismatch(plan_for(c.text), rng), "");
  }
  for (const char* f :
       {"uneven_simt_a.sched", "uneven_simt_b.sched", "uneven_simt_transpose_b.sched",
        "uneven_stages_a.sched", "uneven_stages_b.sched", "uneven_stages_stagger.sched",
        "uneven_stages_strips.sched"}) {
    SCOPED_TRACE(f);
    KernelPlan p = plan_for(gpu_schedule(f));
    EXPECT_TRUE(p.copy_a.uneven() || p.copy_b.uneven());
    EXPECT_EQ(emulation_mismatch(p, rng), "");
  }
}

// The guard is in the kernel exactly when the plan has an uneven copy, in
// every copy loop of that operand (load and store through registers, or
// the cp.async issue), in the main entry and the fallback.
TEST(UnevenCopy, GuardEmittedOnlyForUnevenCopies) {
  for (const SimtCase& c : kSimt) {
    SCOPED_TRACE(c.text);
    KernelPlan p = plan_for(c.text);
    std::string src = codegen::emit_cuda(p).source;
    for (const TileCopy* copy : {&p.copy_a, &p.copy_b}) {
      const std::string X = copy->operand == compiler::Operand::A ? "A" : "B";
      const std::string guard = "if (i * THREADS + tid >= " + X + "_VECTORS) break;";
      size_t n = 0;
      for (size_t at = src.find(guard); at != std::string::npos; at = src.find(guard, at + 1)) ++n;
      if (!copy->uneven()) {
        EXPECT_EQ(n, 0u) << X;
        continue;
      }
      EXPECT_NE(src.find("constexpr int " + X + "_VECTORS = " + std::to_string(copy->vectors())),
                std::string::npos);
      EXPECT_GE(n, 1u) << X;
    }
  }
}

TEST(UnevenCopy, TensorCoreChunksCopiedOnce) {
  struct Case {
    const char* file;
    bool uneven_a, uneven_b;
  };
  for (const Case& c :
       {Case{"uneven_mma_a.sched", true, false}, Case{"uneven_mma_b.sched", false, true},
        Case{"uneven_mma_tf32_b.sched", false, true}, Case{"uneven_wmma_a.sched", true, false}}) {
    SCOPED_TRACE(c.file);
    KernelPlan p = plan_for(gpu_schedule(c.file));
    ASSERT_TRUE(p.mma);
    const compiler::MmaPlan& m = *p.mma;
    EXPECT_EQ(m.copy_a.needs_guard(), c.uneven_a);
    EXPECT_EQ(m.copy_b.needs_guard(), c.uneven_b);
    expect_chunks_exact(m.copy_a, m.a.rows, m.a.cols);
    expect_chunks_exact(m.copy_b, m.b.rows, m.b.cols);
    // Both loader paths (cp.async and the checked fallback) skip past the last chunk.
    const CopyMap& u = c.uneven_a ? m.copy_a : m.copy_b;
    std::string src = codegen::emit_mma(p).source;
    const std::string guard = "if (idx >= " + std::to_string(u.chunks) + ") break;";
    EXPECT_NE(src.find(guard), std::string::npos);
    EXPECT_NE(src.find(guard, src.find(guard) + 1), std::string::npos);
  }
}

TEST(UnevenCopy, CheckAndExplainSayWhichThreadsSkip) {
  using compiler::uneven_copy_notes;
  EXPECT_EQ(uneven_copy_notes(plan_for("tile 128x128x8\nthread 8x8\nvectorize 4\n")),
            std::vector<std::string>{});
  EXPECT_EQ(uneven_copy_notes(plan_for("tile 64x64x4\nthread 2x2\n")),
            (std::vector<std::string>{
                "A: 256 vectors of 1 element over 1024 threads: threads 256-1023 skip the copy",
                "B: 256 vectors of 1 element over 1024 threads: threads 256-1023 skip the copy"}));
  EXPECT_EQ(uneven_copy_notes(plan_for("tile 64x96x12\nthread 4x6\ndouble_buffer\n")),
            std::vector<std::string>{
                "B: 1152 vectors of 1 element over 256 threads, 5 rounds: threads 128-255 skip "
                "the last"});
  EXPECT_EQ(uneven_copy_notes(plan_for(gpu_schedule("uneven_mma_a.sched"))),
            std::vector<std::string>{
                "A: 32 16-byte chunks over 256 threads: threads 32-255 skip the copy"});
  EXPECT_EQ(compiler::thread_range(255, 255), "thread 255");
  KernelPlan p = plan_for(gpu_schedule("uneven_stages_b.sched"));
  compiler::Explanation e = compiler::explain(p, -1, compiler::Shape{1024, 1024, 1024});
  EXPECT_NE(std::find(e.notes.begin(), e.notes.end(),
                      "uneven copy, B: 64 vectors of 4 elements over 256 threads: threads 64-255 "
                      "skip the copy (a guard in the copy loop)"),
            e.notes.end());
  // Warps 2-7 have no B vector: their requests are not counted.
  for (const compiler::GlobalAccess& g : e.global)
    if (g.what.rfind("load B", 0) == 0) {
      EXPECT_EQ(g.requests, 2);
    }
}

// TMA copies whole boxes from one thread: an `mma ... tma` schedule whose
// cp.async copy would be uneven (128 chunks of A for 256 threads) is uneven
// on sm_80, where it keeps cp.async, and not on sm_90.
TEST(UnevenCopy, TmaCopiesAreNeverUneven) {
  const char* text =
      "dtype f16\ntile 16x128x64\nwarp 16x16\nmma f16\nstages 3\nswizzle smem\ntma\n";
  EXPECT_EQ(compiler::uneven_copy_notes(plan_for(text, "sm_90")), std::vector<std::string>{});
  KernelPlan old = plan_for(text, "sm_80");
  ASSERT_TRUE(old.mma);
  EXPECT_FALSE(old.mma->tma);
  EXPECT_TRUE(old.mma->copy_a.needs_guard());
  expect_chunks_exact(old.mma->copy_a, old.mma->a.rows, old.mma->a.cols);
}

}  // namespace
}  // namespace schedc::plantest
