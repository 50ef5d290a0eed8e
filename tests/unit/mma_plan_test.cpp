// Tensor-core KernelPlan on the CPU: walk every map of lower_mma's plan for
// every thread and check what the generated kernel relies on: each C element
// written once, each A/B tile element copied once per k-step, the swizzled
// layout a bijection, ldmatrix / cp.async / tf32 shared accesses free of bank
// conflicts, and ldmatrix delivering exactly mma's fragment layout.
#include <gtest/gtest.h>

#include <array>
#include <set>
#include <string>
#include <vector>

#include "codegen/blocks_mma.h"
#include "codegen/emit_cuda.h"
#include "codegen/emit_mma.h"
#include "compiler/analyze.h"
#include "compiler/lower_mma.h"

using namespace schedc;
using namespace schedc::compiler;

namespace {

struct Config {
  const char* name;
  MmaApi api;
  MmaType type;
  int bm, bn, bk, wm, wn;
  int stages;
  bool swizzle;
  int pad = 0;
  int ik = 0;  // instruction k; 0 = default
  bool tma = false;
  bool a_col = false, b_col = false;  // layout A col / layout B col
};

void PrintTo(const Config& c, std::ostream* os) {
  *os << c.name;
}

Schedule make_schedule(const Config& c) {
  Schedule s;
  s.file = std::string(c.name) + ".sched";
  s.dtype = c.type == MmaType::tf32  ? DType::f32
            : c.type == MmaType::f16 ? DType::f16
                                     : DType::bf16;
  s.tile = BlockTile{c.bm, c.bn, c.bk};
  s.warp = WarpTile{c.wm, c.wn};
  s.stages = c.stages;
  s.swizzle_smem = c.swizzle;
  s.pad_a = s.pad_b = c.pad;
  s.tma = c.tma;
  s.a_col = c.a_col;
  s.b_col = c.b_col;
  MmaSpec m;
  m.api = c.api;
  m.type = c.type;
  if (c.api == MmaApi::wmma) {
    m.m = 16, m.n = 16, m.k = c.type == MmaType::tf32 ? 8 : 16;
  } else {
    m.m = 16, m.n = 8, m.k = c.type == MmaType::tf32 ? 8 : 16;
  }
  if (c.ik) m.k = c.ik;
  s.mma = m;
  return s;
}

KernelPlan plan_for(const Config& c) {
  Target t;
  target_for_arch("sm_90", t);
  return lower_mma(make_schedule(c), t);
}

const Config kConfigs[] = {
    {"f16_128x128x32_s4", MmaApi::mma_sync, MmaType::f16, 128, 128, 32, 64, 64, 4, true},
    {"f16_128x256x32_s3", MmaApi::mma_sync, MmaType::f16, 128, 256, 32, 64, 64, 3, true},
    {"f16_128x128x64_s3", MmaApi::mma_sync, MmaType::f16, 128, 128, 64, 64, 64, 3, true},
    {"f16_64x64x16_s2", MmaApi::mma_sync, MmaType::f16, 64, 64, 16, 32, 32, 2, true},
    {"f16_64x64x32_k8", MmaApi::mma_sync, MmaType::f16, 64, 64, 32, 32, 16, 2, true, 0, 8},
    {"f16_pad", MmaApi::mma_sync, MmaType::f16, 128, 128, 32, 64, 64, 3, false, 8},
    {"bf16_128x256x32_s3", MmaApi::mma_sync, MmaType::bf16, 128, 256, 32, 64, 64, 3, true},
    {"bf16_single_stage", MmaApi::mma_sync, MmaType::bf16, 64, 128, 32, 32, 64, 1, true},
    {"tf32_128x128x32_s3", MmaApi::mma_sync, MmaType::tf32, 128, 128, 32, 64, 32, 3, true},
    {"tf32_128x128x16_s4", MmaApi::mma_sync, MmaType::tf32, 128, 128, 16, 64, 32, 4, true},
    {"tf32_256x128x16_s3", MmaApi::mma_sync, MmaType::tf32, 256, 128, 16, 64, 64, 3, true},
    {"tf32_k4", MmaApi::mma_sync, MmaType::tf32, 64, 64, 16, 32, 32, 2, true, 0, 4},
    {"wmma_tf32_s2", MmaApi::wmma, MmaType::tf32, 128, 128, 32, 64, 32, 2, false, 4},
    {"wmma_f16_s3", MmaApi::wmma, MmaType::f16, 128, 128, 32, 64, 64, 3, false, 8},
    {"wmma_bf16_s2", MmaApi::wmma, MmaType::bf16, 64, 64, 32, 32, 32, 2, false},
    {"f16_tma_128x256x64_s4", MmaApi::mma_sync, MmaType::f16, 128, 256, 64, 64, 64, 4, true, 0, 0,
     true},
    {"bf16_tma_64x128x64_s3", MmaApi::mma_sync, MmaType::bf16, 64, 128, 64, 32, 64, 3, true, 0, 0,
     true},
    {"tf32_tma_128x256x32_s3", MmaApi::mma_sync, MmaType::tf32, 128, 256, 32, 64, 64, 3, true, 0, 0,
     true},
    // Uneven copies (fewer 16-byte chunks than threads): the last round is guarded.
    {"f16_uneven_a_16x256x16_s3", MmaApi::mma_sync, MmaType::f16, 16, 256, 16, 16, 32, 3, true},
    {"bf16_uneven_b_256x16x16_s2", MmaApi::mma_sync, MmaType::bf16, 256, 16, 16, 32, 16, 2, false},
    {"tf32_uneven_b_64x32x8_s2", MmaApi::mma_sync, MmaType::tf32, 64, 32, 8, 32, 16, 2, true},
    {"wmma_f16_uneven_a_single_stage", MmaApi::wmma, MmaType::f16, 16, 128, 16, 16, 16, 1, false},
    // Column-major A and B (issue 18): stages (BK, BM) and (BN, BK).
    {"f16_acol_128x128x32_s3", MmaApi::mma_sync, MmaType::f16, 128, 128, 32, 64, 64, 3, true, 0, 0,
     false, true, false},
    {"f16_bcol_128x256x32_s3", MmaApi::mma_sync, MmaType::f16, 128, 256, 32, 64, 64, 3, true, 0, 0,
     false, false, true},
    {"f16_abcol_64x64x16_s2", MmaApi::mma_sync, MmaType::f16, 64, 64, 16, 32, 32, 2, true, 0, 0,
     false, true, true},
    {"bf16_abcol_k8_64x64x32", MmaApi::mma_sync, MmaType::bf16, 64, 64, 32, 32, 16, 2, true, 0, 8,
     false, true, true},
    {"f16_abcol_pad", MmaApi::mma_sync, MmaType::f16, 128, 128, 32, 64, 64, 3, false, 8, 0, false,
     true, true},
    {"bf16_abcol_single_stage", MmaApi::mma_sync, MmaType::bf16, 64, 128, 32, 32, 64, 1, true, 0, 0,
     false, true, true},
    {"tf32_acol_128x128x32_s3", MmaApi::mma_sync, MmaType::tf32, 128, 128, 32, 64, 32, 3, true, 0,
     0, false, true, false},
    {"tf32_bcol_128x128x16_s4", MmaApi::mma_sync, MmaType::tf32, 128, 128, 16, 64, 32, 4, true, 0,
     0, false, false, true},
    {"tf32_abcol_k4", MmaApi::mma_sync, MmaType::tf32, 64, 64, 16, 32, 32, 2, true, 0, 4, false,
     true, true},
    {"tf32_abcol_single_stage", MmaApi::mma_sync, MmaType::tf32, 64, 64, 32, 32, 32, 1, true, 0, 0,
     false, true, true},
    {"wmma_f16_abcol_s3", MmaApi::wmma, MmaType::f16, 128, 128, 32, 64, 64, 3, false, 8, 0, false,
     true, true},
    {"wmma_tf32_acol_s2", MmaApi::wmma, MmaType::tf32, 128, 128, 32, 64, 32, 2, false, 4, 0, false,
     true, false},
    {"wmma_bf16_bcol_s2", MmaApi::wmma, MmaType::bf16, 64, 64, 32, 32, 32, 2, false, 0, 0, false,
     false, true},
    {"f16_tma_acol_128x128x32_s4", MmaApi::mma_sync, MmaType::f16, 128, 128, 32, 64, 64, 4, true, 0,
     0, true, true, false},
    {"bf16_tma_bcol_128x128x64_s3", MmaApi::mma_sync, MmaType::bf16, 128, 128, 64, 64, 64, 3, true,
     0, 0, true, false, true},
    {"f16_tma_abcol_128x256x64_s3", MmaApi::mma_sync, MmaType::f16, 128, 256, 64, 64, 64, 3, true,
     0, 0, true, true, true},
    {"tf32_tma_acol_128x128x32_s3", MmaApi::mma_sync, MmaType::tf32, 128, 128, 32, 64, 64, 3, true,
     0, 0, true, true, false},
    {"tf32_tma_bcol_128x128x32_s3", MmaApi::mma_sync, MmaType::tf32, 128, 128, 32, 64, 64, 3, true,
     0, 0, true, false, true},
    {"f16_uneven_acol_16x256x16_s3", MmaApi::mma_sync, MmaType::f16, 16, 256, 16, 16, 32, 3, true,
     0, 0, false, true, false},
};

class MmaPlanTest : public ::testing::TestWithParam<Config> {};

// Byte address of logical (row, col) of stage `stage` of operand tile t.
long smem_byte(const SmemTile& t, int stage, int row, int col) {
  return t.offset_bytes + long(stage) * t.stage_bytes + long(t.offset(row, col)) * t.elem_bytes;
}

TEST_P(MmaPlanTest, CommonFieldsAndSharedBytes) {
  const Config& c = GetParam();
  KernelPlan p = plan_for(c);
  ASSERT_TRUE(p.mma.has_value());
  const MmaPlan& m = *p.mma;
  EXPECT_EQ(p.kind, KernelKind::mma);
  EXPECT_EQ(p.block_threads, (c.bm / c.wm) * (c.bn / c.wn) * 32);
  const int e = m.elem_bytes;
  // The analysis formula: A BM x (BK + pad), B BK x (BN + pad), times buffers; a
  // column-major A is BK x (BM + pad), a column-major B BN x (BK + pad).
  const int a_elems = c.a_col ? c.bk * (c.bm + c.pad) : c.bm * (c.bk + c.pad);
  const int b_elems = c.b_col ? c.bn * (c.bk + c.pad) : c.bk * (c.bn + c.pad);
  const int formula =
      c.stages * (a_elems + b_elems) * e + (c.tma ? tma_barrier_bytes(c.stages) : 0);
  EXPECT_EQ(m.a_col, c.a_col);
  EXPECT_EQ(m.b_col, c.b_col);
  EXPECT_EQ(m.a.rows, c.a_col ? c.bk : c.bm);
  EXPECT_EQ(m.b.rows, c.b_col ? c.bn : c.bk);
  // static_resources (analysis) agrees with the plan.
  Target t;
  target_for_arch("sm_90", t);
  EXPECT_EQ(static_resources(make_schedule(c), t).smem_bytes, p.smem_bytes);
  EXPECT_EQ(m.pipeline_smem_bytes, formula);
  EXPECT_EQ(p.smem_bytes, std::max(formula, m.epilogue_smem_bytes));
  // Stages start 128-byte aligned (the swizzle's banks are relative to a line).
  EXPECT_EQ(m.a.stage_bytes % 128, 0);
  EXPECT_EQ(m.b.offset_bytes % 128, 0);
  EXPECT_EQ(m.b.stage_bytes % 16, 0);
}

TEST_P(MmaPlanTest, EachCElementWrittenOnce) {
  KernelPlan p = plan_for(GetParam());
  const MmaPlan& m = *p.mma;
  std::vector<int> hits(p.block_m * p.block_n, 0);
  for (int warp = 0; warp < m.warps_m * m.warps_n; ++warp) {
    const int r0 = m.warp_row(warp) * m.warp_m, c0 = m.warp_col(warp) * m.warp_n;
    for (int mi = 0; mi < m.frags_m; ++mi)
      for (int ni = 0; ni < m.frags_n; ++ni) {
        if (m.api == MmaApi::mma_sync) {
          for (int lane = 0; lane < 32; ++lane)
            for (int i = 0; i < 4; ++i) {
              int r, col;
              mma_c_coord(lane, i, r, col);
              ++hits[(r0 + mi * 16 + r) * p.block_n + c0 + ni * 8 + col];
            }
        } else {
          // WMMA epilogue: lane writes pairs lane, lane + 32, ... of the fragment scratch.
          for (int lane = 0; lane < 32; ++lane)
            for (int pair = lane; pair < m.inst_m * m.inst_n / 2; pair += 32)
              for (int e = 0; e < 2; ++e) {
                int r = (2 * pair) / m.inst_n, col = (2 * pair) % m.inst_n + e;
                ++hits[(r0 + mi * m.inst_m + r) * p.block_n + c0 + ni * m.inst_n + col];
              }
        }
      }
  }
  for (int i = 0; i < int(hits.size()); ++i) ASSERT_EQ(hits[i], 1) << "C element " << i;
}

TEST_P(MmaPlanTest, EachTileElementCopiedOncePerKStep) {
  KernelPlan p = plan_for(GetParam());
  const MmaPlan& m = *p.mma;
  for (const auto* op : {&m.copy_a, &m.copy_b}) {
    const SmemTile& t = op == &m.copy_a ? m.a : m.b;
    std::vector<int> hits(t.rows * t.cols, 0);
    for (int tid = 0; tid < p.block_threads; ++tid)
      for (int i = 0; i < op->iters; ++i) {
        int r, c;
        if (!op->chunk(tid, i, r, c)) continue;
        for (int e = 0; e < op->chunk_elems; ++e) ++hits[r * t.cols + c + e];
      }
    for (int i = 0; i < int(hits.size()); ++i) ASSERT_EQ(hits[i], 1) << "tile element " << i;
  }
}

TEST_P(MmaPlanTest, SharedLayoutIsABijectionWithAlignedChunks) {
  KernelPlan p = plan_for(GetParam());
  const MmaPlan& m = *p.mma;
  for (const SmemTile* t : {&m.a, &m.b}) {
    std::set<int> seen;
    for (int r = 0; r < t->rows; ++r)
      for (int c = 0; c < t->cols; ++c) {
        int off = t->offset(r, c);
        ASSERT_GE(off, 0);
        ASSERT_LT(off * t->elem_bytes, t->stage_bytes);
        ASSERT_TRUE(seen.insert(off).second) << "two elements at offset " << off;
        // A chunk stays contiguous and 16-byte aligned.
        if (c % t->chunk_elems() == 0)
          ASSERT_EQ(off * t->elem_bytes % 16, 0);
        else
          ASSERT_EQ(off, t->offset(r, c - 1) + 1);
      }
    if (t->swizzled) {
      EXPECT_EQ(int(seen.size()) * t->elem_bytes, t->stage_bytes);
    }
  }
}

// 16-byte accesses go in phases of 8 lanes; a phase is conflict-free when
// its 8 addresses fall in 8 different 16-byte bank groups of a 128-byte line.
bool phase_conflict_free(const std::vector<long>& addrs) {
  std::set<long> groups;
  for (long a : addrs) groups.insert((a / 16) % 8);
  return groups.size() == addrs.size();
}

TEST_P(MmaPlanTest, CpAsyncStoresAreConflictFree) {
  const Config& c = GetParam();
  if (!c.swizzle) GTEST_SKIP() << "padded layout: conflicts depend on the pad";
  KernelPlan p = plan_for(c);
  const MmaPlan& m = *p.mma;
  for (const auto* op : {&m.copy_a, &m.copy_b}) {
    const SmemTile& t = op == &m.copy_a ? m.a : m.b;
    for (int i = 0; i < op->iters; ++i)
      for (int phase = 0; phase < p.block_threads / 8; ++phase) {
        std::vector<long> addrs;
        for (int tid = phase * 8; tid < phase * 8 + 8; ++tid) {
          int r, col;
          if (op->chunk(tid, i, r, col)) addrs.push_back(smem_byte(t, 1, r, col));
        }
        ASSERT_TRUE(phase_conflict_free(addrs)) << "iteration " << i << " phase " << phase;
      }
  }
}

// Simulates ldmatrix for one warp and checks each lane receives exactly the
// elements PTX's mma fragment layout gives it, with conflict-free phases.
TEST_P(MmaPlanTest, LdmatrixMatchesMmaFragmentsWithoutConflicts) {
  const Config& c = GetParam();
  KernelPlan p = plan_for(c);
  const MmaPlan& m = *p.mma;
  if (m.api != MmaApi::mma_sync) GTEST_SKIP() << "WMMA loads its own fragments";
  if (m.a_col || m.b_col) GTEST_SKIP() << "column-major: FragmentsHoldPtxElementsBothLayouts";
  const bool tf32 = m.type == MmaType::tf32;
  const int v = m.a.chunk_elems();
  for (int warp = 0; warp < m.warps_m * m.warps_n; ++warp) {
    const int wr = m.warp_row(warp) * m.warp_m, wc = m.warp_col(warp) * m.warp_n;
    for (int kk = 0; kk < m.k_steps; ++kk) {
      // A: ldmatrix.x<regs_a>; matrix j's row r comes from lane 8j + r.
      for (int mi = 0; mi < m.frags_m; ++mi) {
        int row[32], chunk[32];
        for (int lane = 0; lane < 32; ++lane)
          ldmatrix_a_coord(lane, m.regs_a, row[lane], chunk[lane]);
        for (int j = 0; j < m.regs_a; ++j) {
          std::vector<long> addrs;
          for (int r = 0; r < 8; ++r)
            addrs.push_back(smem_byte(m.a, 0, wr + mi * 16 + row[8 * j + r],
                                      kk * m.inst_k + chunk[8 * j + r] * v));
          if (c.swizzle) {
            ASSERT_TRUE(phase_conflict_free(addrs)) << "A matrix " << j;
          }
          for (long a : addrs) ASSERT_EQ(a % 16, 0);
          for (int lane = 0; lane < 32; ++lane) {
            const int g = lane / 4, t = lane % 4, src = 8 * j + g;
            // Element (row, col) of the 16 x k fragment that lane gets in register j.
            const int got_row = row[src];
            const int got_col = chunk[src] * v + (tf32 ? t : 2 * t);
            int want_row, want_col;
            if (tf32) {  // a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4)
              want_row = g + 8 * (j % 2), want_col = t + 4 * (j / 2);
            } else {  // a{2j, 2j+1}: rows g / g+8, cols 2t.. / 2t+8..
              want_row = g + 8 * (j % 2), want_col = 2 * t + 8 * (j / 2);
            }
            ASSERT_EQ(got_row, want_row) << "A reg " << j << " lane " << lane;
            ASSERT_EQ(got_col, want_col) << "A reg " << j << " lane " << lane;
          }
        }
      }
      // B.
      if (m.ldmatrix_b) {
        const int per = m.b_frags_per_ldmatrix, kb = m.regs_b, count = per * kb;
        ASSERT_EQ(m.frags_n % per, 0);
        int krow[32], nchunk[32];
        for (int lane = 0; lane < 32; ++lane)
          ldmatrix_b_coord(lane, count, kb, krow[lane], nchunk[lane]);
        for (int ni = 0; ni < m.frags_n; ni += per)
          for (int j = 0; j < count; ++j) {
            std::vector<long> addrs;
            for (int r = 0; r < 8; ++r)
              addrs.push_back(smem_byte(m.b, 0, kk * m.inst_k + krow[8 * j + r],
                                        wc + ni * 8 + nchunk[8 * j + r] * 8));
            if (c.swizzle) {
              ASSERT_TRUE(phase_conflict_free(addrs)) << "B matrix " << j;
            }
            for (int lane = 0; lane < 32; ++lane) {
              // .trans: lane gets elements (2 (lane % 4) + e, lane / 4) of matrix j.
              const int g = lane / 4, t = lane % 4;
              for (int e = 0; e < 2; ++e) {
                const int k = krow[8 * j + 2 * t + e];
                const int n = nchunk[8 * j + 2 * t + e] * 8 + g;
                // Fragment ni + j / kb, register j % kb: b{2r, 2r+1} = (k = 2t + e + 8r, n = g).
                ASSERT_EQ(k, 2 * t + e + 8 * (j % kb)) << "B reg " << j << " lane " << lane;
                ASSERT_EQ(n, (j / kb) * 8 + g) << "B reg " << j << " lane " << lane;
              }
            }
          }
      } else {
        // tf32 B: 32 lanes read 4-byte B[k = t + 4i][n = g]: 32 different banks.
        for (int ni = 0; ni < m.frags_n; ++ni)
          for (int i = 0; i < m.regs_b; ++i) {
            std::set<long> banks;
            for (int lane = 0; lane < 32; ++lane) {
              int k, n;
              mma_tf32_b_coord(lane, i, k, n);
              banks.insert((smem_byte(m.b, 0, kk * m.inst_k + k, wc + ni * 8 + n) / 4) % 32);
            }
            // (With tma the layout is keyed for the 16-byte loads only:
            // Tf32VectorBLoadsAreConflictFree.)
            if (c.swizzle && !m.tma) {
              ASSERT_EQ(banks.size(), 32u) << "tf32 B load " << i;
            }
          }
      }
    }
  }
}

// tf32 B with 16-byte loads (b_vec 4): lane (g, tq) reads 4 n-contiguous f32 of row
// k = tq + 4i at group column 4 * chunk(g); phases of 8 lanes must hit 8 different
// 16-byte bank groups, and each lane's 4 values are its 4 fragments' column g.
TEST_P(MmaPlanTest, Tf32VectorBLoadsAreConflictFree) {
  const Config& c = GetParam();
  KernelPlan p = plan_for(c);
  const MmaPlan& m = *p.mma;
  if (m.api != MmaApi::mma_sync || m.type != MmaType::tf32 || m.b_vec != 4 || m.stages < 2)
    GTEST_SKIP() << "no 16-byte tf32 B loads";
  for (int warp = 0; warp < m.warps_m * m.warps_n; ++warp) {
    const int wc = m.warp_col(warp) * m.warp_n;
    for (int kk = 0; kk < m.k_steps; ++kk)
      for (int q = 0; q < m.frags_n / 4; ++q)
        for (int i = 0; i < m.regs_b; ++i)
          for (int phase = 0; phase < 4; ++phase) {
            std::vector<long> addrs;
            for (int lane = 8 * phase; lane < 8 * phase + 8; ++lane) {
              int k, n;
              mma_tf32_b_coord(lane, i, k, n);
              const int chunk = m.b_chunk_permuted ? tf32_b_lane_chunk(n) : n;
              const int col = wc + q * 32 + 4 * chunk;
              addrs.push_back(smem_byte(m.b, 1, kk * m.inst_k + k, col));
              // The 4 values are contiguous: fragments 4q..4q+3, column n of each.
              for (int j = 1; j < 4; ++j)
                ASSERT_EQ(smem_byte(m.b, 1, kk * m.inst_k + k, col + j), addrs.back() + 4 * j);
            }
            ASSERT_TRUE(phase_conflict_free(addrs)) << "warp " << warp << " kk " << kk << " group "
                                                    << q << " reg " << i << " phase " << phase;
          }
  }
}

// `tma`: the layout the plan reads is the one TMA writes. A box lands row by row,
// 128-byte rows, and the 128-byte swizzle XORs bits 4-6 of the shared address with
// bits 7-9 (16-byte chunk ^= 128-byte line % 8), with 1024-byte aligned boxes.
long tma_swizzle_128b(long byte) {
  return byte ^ (((byte >> 7) & 7) << 4);
}

TEST_P(MmaPlanTest, TmaBoxesLandInThePlannedLayout) {
  const Config& c = GetParam();
  if (!c.tma) GTEST_SKIP() << "cp.async copies";
  KernelPlan p = plan_for(c);
  const MmaPlan& m = *p.mma;
  ASSERT_TRUE(m.tma);
  const int e = m.elem_bytes;
  const codegen::GeneratedKernel k = codegen::emit_mma(p);
  // Each stage is boxes of 128-byte rows: one box (a k-contiguous stage, 128-byte rows) or
  // column panels. A box's rows are the operand's rows in memory (the runtime's map is
  // rows x row length of the operand in its layout): K for a column-major A, N for a
  // column-major B.
  struct Op {
    const SmemTile& t;
    codegen::TmaBox box;
    int mem_rows;  // the operand's rows in memory that one stage covers
    bool panels;
  };
  for (const Op& op : {Op{m.a, k.main.tma_a, c.a_col ? c.bk : c.bm, c.a_col},
                       Op{m.b, k.main.tma_b, c.b_col ? c.bn : c.bk, !c.b_col}}) {
    const SmemTile& t = op.t;
    ASSERT_EQ(t.panel_cols > 0, op.panels);
    const int box_cols = op.panels ? t.panel_cols : t.cols;
    ASSERT_EQ(box_cols * e, 128);
    EXPECT_EQ(int(op.box.box_rows), op.mem_rows);
    EXPECT_EQ(int(op.box.box_cols), box_cols);
    EXPECT_LE(t.rows, 256);  // TMA box dimensions
    const int boxes = t.cols / box_cols, box_bytes = t.rows * 128;
    EXPECT_EQ(boxes * box_bytes, t.stage_bytes);
    for (int stage = 0; stage < m.stages; ++stage)
      for (int q = 0; q < boxes; ++q) EXPECT_EQ(smem_byte(t, stage, 0, q * box_cols) % 1024, 0);
    for (int r = 0; r < t.rows; ++r)
      for (int col = 0; col < t.cols; ++col) {
        const int q = col / box_cols, in = col % box_cols;
        ASSERT_EQ(long(t.offset(r, col)) * e,
                  long(q) * box_bytes + tma_swizzle_128b(long(r) * 128 + in * e))
            << (&t == &m.a ? "A " : "B ") << r << ", " << col;
      }
  }
  // Two 8-byte mbarriers per stage after the buffers.
  EXPECT_EQ(m.barrier_offset_bytes % 8, 0);
  EXPECT_EQ(m.barrier_offset_bytes, m.stages * (m.a.stage_bytes + m.b.stage_bytes));
  EXPECT_EQ(p.smem_bytes, m.barrier_offset_bytes + tma_barrier_bytes(m.stages));
}

// Shared memory of one stage in b16 slots, each holding a tag of the operand element
// (row, col) = (m, k) of A or (k, n) of B, and for 4-byte elements which half.
long tag(int row, int col, int half) {
  return (long(row) * 4096 + col) * 2 + half;
}

std::vector<long> fill_stage(const MmaPlan& m, bool is_a) {
  const SmemTile& t = is_a ? m.a : m.b;
  std::vector<long> mem(t.stage_bytes / 2, -1);
  const int rows = is_a ? (m.a_col ? t.cols : t.rows) : (m.b_col ? t.cols : t.rows);
  const int cols = is_a ? (m.a_col ? t.rows : t.cols) : (m.b_col ? t.rows : t.cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const long byte = long(is_a ? m.a_offset(r, c) : m.b_offset(r, c)) * m.elem_bytes;
      for (int h = 0; h < m.elem_bytes / 2; ++h) mem[size_t(byte / 2 + h)] = tag(r, c, h);
    }
  return mem;
}

// ldmatrix.x<count>[.trans] of b16 matrices: lane 8j + r gives the byte address of row r
// of matrix j; register j of lane l gets, without .trans, elements (l / 4, 2 (l % 4) + e)
// of matrix j, with .trans elements (2 (l % 4) + e, l / 4). Returns [lane][reg][e] tags.
std::vector<std::vector<std::array<long, 2>>> simulate_ldmatrix(const std::vector<long>& mem,
                                                                const long (&addr)[32], int count,
                                                                bool trans) {
  std::vector<std::vector<std::array<long, 2>>> out(32, std::vector<std::array<long, 2>>(count));
  for (int l = 0; l < 32; ++l)
    for (int j = 0; j < count; ++j)
      for (int e = 0; e < 2; ++e) {
        const int row = trans ? 2 * (l % 4) + e : l / 4, col = trans ? l / 4 : 2 * (l % 4) + e;
        out[l][j][e] = mem[size_t(addr[8 * j + row] / 2 + col)];
      }
  return out;
}

// Both layouts: the addresses the plan gives each lane (ldmatrix rows, or 4-byte loads),
// read from a stage holding each element's tag, deliver in every register exactly the
// elements PTX's mma fragment layout says (m16n8k16 / m16n8k8 f16/bf16, m16n8k8 /
// m16n8k4 tf32), with conflict-free phases on swizzled stages.
TEST_P(MmaPlanTest, FragmentsHoldPtxElementsBothLayouts) {
  const Config& c = GetParam();
  KernelPlan p = plan_for(c);
  const MmaPlan& m = *p.mma;
  if (m.api != MmaApi::mma_sync) GTEST_SKIP() << "WMMA loads its own fragments";
  const bool tf32 = m.type == MmaType::tf32;
  const int v = m.a.chunk_elems(), e = m.elem_bytes;
  const std::vector<long> sa = fill_stage(m, true), sb = fill_stage(m, false);
  // The element of register i, pair half h, of `lane` (PTX ISA, mma.m16n8k*): A (m, k), B (k, n).
  auto want_a = [&](int lane, int i, int h, int& mm, int& kk) {
    const int g = lane / 4, t = lane % 4;
    mm = g + 8 * (i % 2);
    kk = tf32 ? t + 4 * (i / 2) : 2 * t + h + 8 * (i / 2);
  };
  auto want_b = [&](int lane, int i, int h, int& kk, int& nn) {
    const int g = lane / 4, t = lane % 4;
    kk = tf32 ? t + 4 * i : 2 * t + h + 8 * i;
    nn = g;
  };
  // The tags one register holds: a pair of b16 elements, or both halves of one f32.
  auto check = [&](const std::array<long, 2>& got, int row0, int col0, bool is_a, int lane, int i,
                   const char* what) {
    for (int h = 0; h < 2; ++h) {
      int r, col;
      if (is_a)
        want_a(lane, i, h, r, col);
      else
        want_b(lane, i, h, r, col);
      ASSERT_EQ(got[h], tag(row0 + r, col0 + col, tf32 ? h : 0))
          << what << " reg " << i << " lane " << lane << " half " << h;
    }
  };
  for (int warp = 0; warp < m.warps_m * m.warps_n; ++warp) {
    const int wr = m.warp_row(warp) * m.warp_m, wc = m.warp_col(warp) * m.warp_n;
    for (int kk = 0; kk < m.k_steps; ++kk) {
      const int k0 = kk * m.inst_k;
      for (int mi = 0; mi < m.frags_m; ++mi) {
        const int m0 = wr + mi * 16;
        if (m.ldmatrix_a) {
          long addr[32] = {};
          for (int lane = 0; lane < 8 * m.regs_a; ++lane) {
            int fm, fk;
            ldmatrix_a_lane(m.a_col, lane, m.regs_a, v, fm, fk);
            addr[lane] = long(m.a_offset(m0 + fm, k0 + fk)) * e;
            ASSERT_EQ(addr[lane] % 16, 0);
          }
          for (int j = 0; j < m.regs_a && c.swizzle; ++j)
            ASSERT_TRUE(phase_conflict_free({addr + 8 * j, addr + 8 * j + 8})) << "A matrix " << j;
          const auto regs = simulate_ldmatrix(sa, addr, m.regs_a, m.ldmatrix_a_trans);
          for (int lane = 0; lane < 32; ++lane)
            for (int i = 0; i < m.regs_a; ++i) check(regs[lane][i], m0, k0, true, lane, i, "A");
        } else {
          ASSERT_TRUE(tf32 && m.a_col);
          for (int i = 0; i < m.regs_a; ++i) {
            std::set<long> banks;
            for (int lane = 0; lane < 32; ++lane) {
              int fm, fk;
              mma_tf32_a_coord(lane, i, fm, fk);
              const long byte = long(m.a_offset(m0 + fm, k0 + fk)) * e;
              banks.insert((byte / 4) % 32);
              check({sa[size_t(byte / 2)], sa[size_t(byte / 2 + 1)]}, m0, k0, true, lane, i, "A");
            }
            // TMA's swizzle is keyed for 16-byte reads: 4-byte reads of 4 k rows meet in pairs.
            if (c.swizzle) {
              ASSERT_GE(banks.size(), m.tma ? 16u : 32u) << "tf32 A load " << i;
            }
          }
        }
      }
      if (m.ldmatrix_b) {
        const int per = m.b_frags_per_ldmatrix, kb = m.regs_b, count = per * kb;
        for (int ni = 0; ni < m.frags_n; ni += per) {
          const int n0 = wc + ni * 8;
          long addr[32] = {};
          for (int lane = 0; lane < 8 * count; ++lane) {
            int fk, fn;
            ldmatrix_b_lane(m.b_col, lane, count, kb, v, fk, fn);
            addr[lane] = long(m.b_offset(k0 + fk, n0 + fn)) * e;
            ASSERT_EQ(addr[lane] % 16, 0);
          }
          for (int j = 0; j < count && c.swizzle; ++j)
            ASSERT_TRUE(phase_conflict_free({addr + 8 * j, addr + 8 * j + 8})) << "B matrix " << j;
          const auto regs = simulate_ldmatrix(sb, addr, count, m.ldmatrix_b_trans);
          // Register j: fragment ni + j / kb, its register j % kb.
          for (int lane = 0; lane < 32; ++lane)
            for (int j = 0; j < count; ++j)
              check(regs[lane][j], k0, n0 + (j / kb) * 8, false, lane, j % kb, "B");
        }
      } else if (m.b_vec == 1) {
        for (int ni = 0; ni < m.frags_n; ++ni)
          for (int i = 0; i < m.regs_b; ++i)
            for (int lane = 0; lane < 32; ++lane) {
              int fk, fn;
              mma_tf32_b_coord(lane, i, fk, fn);
              const long byte = long(m.b_offset(k0 + fk, wc + ni * 8 + fn)) * e;
              check({sb[size_t(byte / 2)], sb[size_t(byte / 2 + 1)]}, k0, wc + ni * 8, false, lane,
                    i, "B");
            }
      }  // (b_vec > 1: Tf32VectorBLoadsAreConflictFree)
    }
  }
}

TEST(MmaPlanTma, OlderTargetsKeepCpAsync) {
  Config c = kConfigs[0];
  c.tma = true;
  c.bk = 64;
  Target t;
  target_for_arch("sm_80", t);
  KernelPlan p = lower_mma(make_schedule(c), t);
  EXPECT_FALSE(p.mma->tma);
  EXPECT_EQ(p.mma->b.panel_cols, 0);
  // The barrier bytes stay counted, as static_resources counts them on every target.
  EXPECT_EQ(p.smem_bytes, p.mma->barrier_offset_bytes + tma_barrier_bytes(c.stages));
}

TEST_P(MmaPlanTest, EmitsBothEntries) {
  KernelPlan p = plan_for(GetParam());
  // Through emit_cuda, which gives every path's kernel its layouts.
  codegen::GeneratedKernel k = codegen::emit_cuda(p);
  EXPECT_TRUE(k.tensor_cores);
  EXPECT_EQ(k.min_sm, GetParam().tma ? 90 : 80);
  EXPECT_EQ(k.main.uses_tma(), GetParam().tma);
  EXPECT_FALSE(k.fallback.uses_tma());
  EXPECT_EQ(k.main.dynamic_smem, uint32_t(p.smem_bytes));
  EXPECT_EQ(k.main.align_bytes, 16u);
  ASSERT_TRUE(k.has_fallback());
  EXPECT_EQ(k.fallback.ld_multiple, 1u);
  EXPECT_NE(k.source.find(k.main.name + "("), std::string::npos);
  EXPECT_NE(k.source.find(k.fallback.name + "("), std::string::npos);
  EXPECT_EQ(k.needs_cuda_headers, p.mma->api == MmaApi::wmma || p.dtype != DType::f32);
  // The runtime generates and validates problems in the kernel's layouts.
  EXPECT_EQ(k.a_col, GetParam().a_col);
  EXPECT_EQ(k.b_col, GetParam().b_col);
  EXPECT_EQ(k.layout(),
            std::string(GetParam().a_col ? "T" : "N") + (GetParam().b_col ? "T" : "N") + "N");
}

INSTANTIATE_TEST_SUITE_P(Configs, MmaPlanTest, ::testing::ValuesIn(kConfigs),
                         [](const ::testing::TestParamInfo<Config>& i) {
                           return std::string(i.param.name);
                         });

TEST(MmaInstrTable, EntriesAreConsistent) {
  int n = 0;
  const codegen::MmaInstr* t = codegen::mma_instr_table(n);
  ASSERT_GT(n, 0);
  for (int i = 0; i < n; ++i) {
    const codegen::MmaInstr& in = t[i];
    EXPECT_EQ(codegen::find_mma_instr(in.api, in.type, in.m, in.n, in.k), &in);
    if (in.api != MmaApi::mma_sync) continue;
    std::string shape =
        "m" + std::to_string(in.m) + "n" + std::to_string(in.n) + "k" + std::to_string(in.k);
    EXPECT_NE(std::string(in.ptx).find(shape), std::string::npos) << in.name;
    const int bytes = in.type == MmaType::tf32 ? 4 : in.type == MmaType::s8 ? 1 : 2;
    EXPECT_EQ(in.regs_a, in.m * in.k * bytes / 128) << in.name;
    EXPECT_EQ(in.regs_b, in.k * in.n * bytes / 128) << in.name;
    EXPECT_EQ(in.regs_c, in.m * in.n / 32) << in.name;  // 4; m8n8k16 (s8) 2
  }
  EXPECT_EQ(codegen::find_mma_instr(MmaApi::mma_sync, MmaType::f16, 16, 8, 32), nullptr);
}

TEST(MmaPipeline, DoubleBufferIsTwoStages) {
  Config c{"db", MmaApi::mma_sync, MmaType::f16, 64, 64, 32, 32, 32, 1, true};
  Schedule s = make_schedule(c);
  s.double_buffer = true;
  Target t;
  target_for_arch("sm_80", t);
  KernelPlan p = lower_mma(s, t);
  EXPECT_EQ(p.mma->stages, 2);
}

}  // namespace
