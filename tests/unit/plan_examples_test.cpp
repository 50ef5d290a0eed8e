// KernelPlan tests for every SIMT example and benchmark candidate, loaded
// through the real front end: maps cover C once and each tile element once,
// the CPU emulation matches a reference on ragged shapes, the main entry and
// its fallback emit; and the ladder's bank-conflict claims hold in the model.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "cli/pipeline.h"
#include "codegen/emit_cuda.h"
#include "compiler/bank_conflicts.h"
#include "compiler/lower.h"
#include "plan_test_util.h"

namespace schedc::plantest {
namespace {

namespace fs = std::filesystem;
using compiler::KernelPlan;

std::vector<std::string> simt_files() {
  std::vector<std::string> out;
  std::string root = SCHEDC_SOURCE_DIR;
  for (const char* dir : {"/examples", "/bench/candidates"})
    for (auto& f : fs::recursive_directory_iterator(root + dir))
      if (f.path().extension() == ".sched") out.push_back(f.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<KernelPlan> plan_of_file(const std::string& path) {
  compiler::Target t;
  std::ostringstream err;
  auto c = cli::check_file(path, t, err);
  EXPECT_TRUE(c) << err.str();
  if (!c || c->schedule.uses_tensor_cores()) return std::nullopt;
  return compiler::lower(c->schedule, t);
}

// The plan's main entry and fallback emit, and emulate a reference GEMM
// exactly on ragged shapes; nothing to do for a tensor-core schedule.
void expect_emulates_correctly(const std::string& path) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> small(-2, 2);
  auto plan = plan_of_file(path);
  if (!plan) return;  // tensor cores: mma_plan_test, wgmma_plan_test
  std::vector<KernelPlan> plans = {*plan};
  if (plan->needs_fallback()) plans.push_back(compiler::lower_fallback(*plan));
  codegen::GeneratedKernel k = codegen::emit_cuda(*plan);
  EXPECT_EQ(k.has_fallback(), plan->needs_fallback());
  if (plan->kind == compiler::KernelKind::naive) return;  // no maps to walk
  if (plan->schedule.a_col || plan->schedule.b_col || plan->schedule.c_col) {
    // A column-major operand (examples/sgemm_xwt.sched): the layout-aware
    // emulation (plan_test_util.h) on its ragged shapes.
    EXPECT_EQ(emulation_mismatch(*plan, rng), "");
    return;
  }
  const int shapes[][3] = {{1, 1, 1}, {7, 13, 5}, {127, 129, 65}, {257, 131, 17}};
  for (auto& sh : shapes) {
    int M = sh[0], N = sh[1], K = sh[2], lda = K + 1, ldb = N + 3, ldc = N;
    std::vector<float> A(size_t(M) * lda), B(size_t(K) * ldb), C0(size_t(M) * ldc, 1.0f),
        bias(N, 0.0f);
    for (auto& x : A) x = float(small(rng));
    for (auto& x : B) x = float(small(rng));
    std::vector<float> ref(C0.size());
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        float acc = 0;
        for (int kk = 0; kk < K; ++kk) acc += A[size_t(m) * lda + kk] * B[size_t(kk) * ldb + n];
        ref[size_t(m) * ldc + n] = acc;
      }
    for (const KernelPlan& p : plans) {
      std::vector<float> C = C0;
      ASSERT_TRUE(emulate(p, M, N, K, A, lda, B, ldb, C, ldc, 1.0f, 0.0f, bias));
      ASSERT_EQ(C, ref) << p.name << " " << M << "x" << N << "x" << K;
    }
  }
}

// The files are walked in kEmulationParts tests, file i in part i % parts,
// so that gtest's sharding spreads them (under ASan, in
// scripts/test-sanitize.sh, the whole walk took ~60 s in one test).
constexpr int kEmulationParts = 8;

class PlanExamplesPart : public ::testing::TestWithParam<int> {};

TEST_P(PlanExamplesPart, EveryExampleEmulatesCorrectly) {
  std::vector<std::string> files = simt_files();
  for (size_t i = size_t(GetParam()); i < files.size(); i += kEmulationParts) {
    SCOPED_TRACE(files[i]);
    expect_emulates_correctly(files[i]);
  }
}

INSTANTIATE_TEST_SUITE_P(Parts, PlanExamplesPart, ::testing::Range(0, kEmulationParts));

// The walk is not empty: the examples and candidates hold SIMT plans.
TEST(PlanExamples, ManyExamplesAreSimt) {
  int simt = 0;
  for (const std::string& path : simt_files()) {
    SCOPED_TRACE(path);
    if (plan_of_file(path)) ++simt;
  }
  EXPECT_GE(simt, 10);
}

// Every SIMT example with A, B or both column-major (`layout A col`,
// `layout B col`, issue 18), through the real front end: the plan verifies
// (each tile element copied once, in bounds), and its main entry and
// fallback emulate a reference GEMM exactly on ragged shapes with leading
// dimensions past the rows. Where the layout makes a vector cross a row of
// the tile in memory (BM or BK not a multiple of the width), analysis
// refuses the schedule with its reason, which is checked too.
TEST(PlanExamples, EveryExampleEmulatesCorrectlyInEveryLayout) {
  std::mt19937 rng(12);
  int checked = 0;
  std::vector<std::string> files = simt_files();
  for (auto& f : fs::directory_iterator(std::string(SCHEDC_SOURCE_DIR) + "/tests/gpu/schedules"))
    if (f.path().filename().string().rfind("layout_", 0) == 0) files.push_back(f.path().string());
  for (const std::string& path : files) {
    std::ifstream in(path);
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    // The GPU test schedules that set their own layouts run as they are, as
    // do convolutions (`conv` fixes the layouts).
    const bool own = text.find("\nlayout ") != std::string::npos ||
                     text.find("\nconv ") != std::string::npos || text.rfind("conv ", 0) == 0;
    const std::vector<std::string> variants =
        own ? std::vector<std::string>{""}
            : std::vector<std::string>{"layout A col\n", "layout B col\n",
                                       "layout A col\nlayout B col\n", "layout C col\n",
                                       "layout A col\nlayout B col\nlayout C col\n"};
    for (const std::string& layout : variants) {
      SCOPED_TRACE(path + " with " + layout);
      compiler::Target t;
      std::ostringstream err;
      auto file = std::make_shared<dsl::SourceFile>(path, text + "\n" + layout);
      auto c = cli::check_source(file, t, err);
      if (!c) {
        // Only a tensor-core schedule (a layout its path does not take yet, or
        // wgmma tf32's fragments in registers past the limit) or a vector that
        // no longer fits may be refused.
        EXPECT_TRUE(err.str().find("is not implemented yet") != std::string::npos ||
                    err.str().find("registers per thread") != std::string::npos ||
                    err.str().find("a vector never crosses a row") != std::string::npos)
            << err.str();
        continue;
      }
      if (c->schedule.is_naive()) continue;  // no maps to walk (the naive body: lit and GPU tests)
      // wgmma reads column-major A and B by descriptor: its maps are walked by
      // tests/unit/wgmma_plan_test.cpp (verify), its results by the GPU tests.
      if (c->schedule.uses_wgmma()) continue;
      const KernelPlan plan = compiler::lower(c->schedule, t);
      if (plan.mma) {  // mma / wmma take column-major A and B; their maps: mma_plan_test
        EXPECT_EQ(plan.mma->a_col, c->schedule.a_col);
        EXPECT_EQ(plan.mma->b_col, c->schedule.b_col);
        continue;
      }
      EXPECT_TRUE(plan.copy_a.global_transposed == c->schedule.a_col);
      EXPECT_TRUE(plan.copy_b.global_transposed == c->schedule.b_col);
      EXPECT_EQ(emulation_mismatch(plan, rng), "");
      ++checked;
    }
  }
  EXPECT_GE(checked, 30);
}

// Bank-conflict degree of warp 0's fragment reads of A or B at kk = 0
// (the first vector of each piece), in the shared-memory model.
double frag_degree(const KernelPlan& p, bool a) {
  std::vector<compiler::WarpRequest> reqs;
  const auto& m = p.threads;
  int pieces = a ? m.pieces_m() : m.pieces_n(), piece = a ? m.pm : m.pn;
  int vec = a ? p.frag.vec_a : p.frag.vec_b;
  for (int pc = 0; pc < pieces; ++pc)
    for (int v = 0; v < piece; v += vec) {
      compiler::WarpRequest r;
      r.width_bytes = 4 * vec;
      for (int lane = 0; lane < 32; ++lane) {
        int idx = pc * piece + v;
        int o = a ? p.smem_a.offset(m.row(lane, idx), 0) : p.smem_b.offset(0, m.col(lane, idx));
        r.byte_addr[size_t(lane)] = int64_t(o) * 4;
      }
      reqs.push_back(r);
    }
  return compiler::total_bank_cost(reqs).degree();
}

// Degree of warp 0's stores of the A tile into shared memory.
double store_degree_a(const KernelPlan& p) {
  std::vector<compiler::WarpRequest> reqs;
  const auto& c = p.copy_a;
  for (int i = 0; i < c.iters; ++i)
    for (int e = 0; e < c.vec; e += c.smem_vec) {
      compiler::WarpRequest r;
      r.width_bytes = 4 * c.smem_vec;
      for (int lane = 0; lane < 32; ++lane) {
        auto [row, col] = c.coord(lane, i);
        r.byte_addr[size_t(lane)] = int64_t(p.smem_a.offset(row, col + e)) * 4;
      }
      reqs.push_back(r);
    }
  return compiler::total_bank_cost(reqs).degree();
}

std::string ladder(const char* name) {
  return std::string(SCHEDC_SOURCE_DIR) + "/examples/ladder/" + name + ".sched";
}

TEST(PlanExamples, LadderBankConflicts) {
  auto v4 = plan_of_file(ladder("v4_vectorize"));
  auto v5 = plan_of_file(ladder("v5_transpose_a"));
  auto v6 = plan_of_file(ladder("v6_split"));
  auto v7 = plan_of_file(ladder("v7_warp"));
  ASSERT_TRUE(v4 && v5 && v6 && v7);
  // v4 reads A down a column (scalar, rows 8 apart in a row of BK + 0 floats).
  EXPECT_EQ(v4->frag.vec_a, 1);
  // v5: A fragments become float4 reads; `pad A 4` makes the transposing stores conflict-free.
  EXPECT_EQ(v5->frag.vec_a, 4);
  EXPECT_EQ(store_degree_a(*v5), 1.0);
  KernelPlan unpadded = *v5;
  unpadded.smem_a.pad = 0;
  EXPECT_GT(store_degree_a(unpadded), 1.0);
  // v5: an unsplit 8x8 tile puts lanes 32 bytes apart: 2-way conflicts on B.
  EXPECT_EQ(frag_degree(*v5, false), 2.0);
  // v6, v7: 4x4 pieces make every fragment read conflict-free.
  for (auto* p : {&*v6, &*v7}) {
    EXPECT_EQ(frag_degree(*p, true), 1.0) << p->name;
    EXPECT_EQ(frag_degree(*p, false), 1.0) << p->name;
  }
}

}  // namespace
}  // namespace schedc::plantest
