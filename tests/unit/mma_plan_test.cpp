// Tensor-core KernelPlan on the CPU: walk every map of lower_mma's plan for
// every thread and check what the generated kernel relies on: each C element
// written once, each A/B tile element copied once per k-step, the swizzled
// layout a bijection, ldmatrix / cp.async / tf32 shared accesses free of bank
// conflicts, and ldmatrix delivering exactly mma's fragment layout.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "codegen/blocks_mma.h"
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
  // The analysis formula: A BM x (BK + pad), B BK x (BN + pad), times buffers.
  const int formula = c.stages * (c.bm * (c.bk + c.pad) + c.bk * (c.bn + c.pad)) * e +
                      (c.tma ? tma_barrier_bytes(c.stages) : 0);
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
  ASSERT_EQ(m.a.cols * e, 128);
  ASSERT_EQ(m.b.panel_cols * e, 128);
  EXPECT_LE(m.a.rows, 256);  // TMA box dimensions
  EXPECT_LE(m.b.rows, 256);
  const int panel_bytes = m.b.rows * 128;
  for (int stage = 0; stage < m.stages; ++stage) {
    EXPECT_EQ(smem_byte(m.a, stage, 0, 0) % 1024, 0);
    for (int q = 0; q < m.b.cols / m.b.panel_cols; ++q)
      EXPECT_EQ(smem_byte(m.b, stage, 0, q * m.b.panel_cols) % 1024, 0);
  }
  for (int r = 0; r < m.a.rows; ++r)
    for (int col = 0; col < m.a.cols; ++col)
      ASSERT_EQ(long(m.a.offset(r, col)) * e, tma_swizzle_128b(long(r) * 128 + col * e))
          << "A " << r << ", " << col;
  for (int r = 0; r < m.b.rows; ++r)
    for (int col = 0; col < m.b.cols; ++col) {
      const int q = col / m.b.panel_cols, in = col % m.b.panel_cols;
      ASSERT_EQ(long(m.b.offset(r, col)) * e,
                long(q) * panel_bytes + tma_swizzle_128b(long(r) * 128 + in * e))
          << "B " << r << ", " << col;
    }
  // Two 8-byte mbarriers per stage after the buffers.
  EXPECT_EQ(m.barrier_offset_bytes % 8, 0);
  EXPECT_EQ(m.barrier_offset_bytes, m.stages * (m.a.stage_bytes + m.b.stage_bytes));
  EXPECT_EQ(p.smem_bytes, m.barrier_offset_bytes + tma_barrier_bytes(m.stages));
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
  codegen::GeneratedKernel k = codegen::emit_mma(p);
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
    const int bytes = in.type == MmaType::tf32 ? 4 : 2;
    EXPECT_EQ(in.regs_a, in.m * in.k * bytes / 128) << in.name;
    EXPECT_EQ(in.regs_b, in.k * in.n * bytes / 128) << in.name;
    EXPECT_EQ(in.regs_c, 4) << in.name;
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
