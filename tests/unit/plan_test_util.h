#pragma once
// Helpers for the KernelPlan tests: schedules built in code, and a CPU
// emulation of a SIMT plan that runs its maps (copies with zero fill and
// the guard of uneven copies, fragments, predicated stores) exactly as the
// generated kernel does.

#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/analyze.h"
#include "compiler/kernel_plan.h"
#include "compiler/lower.h"
#include "compiler/schedule.h"
#include "dsl/diagnostics.h"
#include "dsl/parse.h"
#include "dsl/source.h"

namespace schedc::plantest {

using compiler::KernelPlan;
using compiler::Schedule;

// The plan of a .sched text for sm_90 (parse, analyze, lower), or nothing;
// `diags`, when given, gets the diagnostics as schedc prints them.
inline std::optional<KernelPlan> plan_of_text(const std::string& text,
                                              std::string* diags = nullptr) {
  compiler::Target t;
  compiler::target_for_arch("sm_90", t);
  dsl::SourceFile src("test.sched", text);
  dsl::Diagnostics d(&src);
  std::optional<dsl::Ast> ast = dsl::parse(src, d);
  std::optional<Schedule> s;
  if (ast) s = compiler::analyze(*ast, "test.sched", t, d);
  if (diags) {
    std::ostringstream o;
    d.print(o);
    *diags = o.str();
  }
  if (!s) return std::nullopt;
  return compiler::lower(*s, t);
}

struct SimtParams {
  int bm, bn, bk, tm, tn, split_m = 1, split_n = 1;
  int wm = 0, wn = 0;  // 0 = no warp tile
  int vec = 1;
  bool ta = false, tb = false;
  int pad_a = 0, pad_b = 0;
  bool swizzle = false, double_buffer = false;
  int stages = 1;
  int group = 1;
  bool bias = false, relu = false;
};

inline Schedule make_schedule(const SimtParams& q) {
  Schedule s;
  s.file = "sweep.sched";
  s.tile = compiler::BlockTile{q.bm, q.bn, q.bk};
  s.thread = compiler::ThreadTile{q.tm, q.tn, q.split_m, q.split_n};
  if (q.wm) s.warp = compiler::WarpTile{q.wm, q.wn};
  s.vectorize = q.vec;
  s.transpose_a = q.ta;
  s.transpose_b = q.tb;
  s.pad_a = q.pad_a;
  s.pad_b = q.pad_b;
  s.swizzle_smem = q.swizzle;
  s.double_buffer = q.double_buffer;
  s.stages = q.stages;
  s.swizzle_block = q.group;
  s.epilogue.bias = q.bias;
  s.epilogue.relu = q.relu;
  return s;
}

// The rules analyze enforces for a SIMT schedule (docs/language.md), so the
// sweep only feeds lower what analyze would accept.
inline bool valid_simt(const SimtParams& q) {
  if (q.bm % q.tm || q.bn % q.tn || q.tm % q.split_m || q.tn % q.split_n) return false;
  int threads = (q.bm / q.tm) * (q.bn / q.tn);
  if (threads < 32 || threads > 1024 || threads % 32) return false;
  if (q.wm) {
    if (q.bm % q.wm || q.bn % q.wn || q.wm % q.tm || q.wn % q.tn) return false;
    if ((q.wm / q.tm) * (q.wn / q.tn) != 32) return false;
  }
  int v = q.vec;
  if (q.bk % v || q.bn % v || (q.tn / q.split_n) % v) return false;
  // (No rule on how the copies split over the threads: uneven ones are guarded.)
  if (q.swizzle && (q.pad_a || q.pad_b)) return false;
  if (q.double_buffer && q.stages > 1) return false;
  return true;
}

// Runs the plan on the CPU for C = act(alpha*A*B + beta*C + bias), A MxK
// (lda), B KxN (ldb), C MxN (ldc), following the plan's maps exactly.
// Returns false if any map reads or writes outside its arrays.
inline bool emulate(const KernelPlan& p, int M, int N, int K, const std::vector<float>& A, int lda,
                    const std::vector<float>& B, int ldb, std::vector<float>& C, int ldc,
                    float alpha, float beta, const std::vector<float>& bias) {
  const compiler::ThreadMap& tm = p.threads;
  std::vector<float> sA(size_t(p.smem_a.buffer_elems()), NAN),
      sB(size_t(p.smem_b.buffer_elems()), NAN);
  int tiles_m = (M + p.block_m - 1) / p.block_m, tiles_n = (N + p.block_n - 1) / p.block_n;
  int nblocks = tiles_m * tiles_n;
  for (int bid = 0; bid < nblocks; ++bid) {
    int tile_m0, tile_n0;
    if (p.swizzle_group > 1) {  // the emitted grouped rasterization
      int G = p.swizzle_group;
      int group = bid / (G * tiles_n), gm0 = group * G;
      int rows = std::min(tiles_m - gm0, G), in = bid % (G * tiles_n);
      tile_m0 = (gm0 + in % rows) * p.block_m;
      tile_n0 = (in / rows) * p.block_n;
    } else {
      tile_m0 = (bid / tiles_n) * p.block_m;
      tile_n0 = (bid % tiles_n) * p.block_n;
    }
    std::vector<float> acc(size_t(p.block_threads) * tm.tm * tm.tn, 0.0f);
    for (int k0 = 0; k0 < K; k0 += p.block_k) {
      auto fill = [&](const compiler::TileCopy& c, const compiler::SmemLayout& l,
                      std::vector<float>& s, bool is_a) {
        for (int t = 0; t < p.block_threads; ++t)
          for (int i = 0; i < c.iters; ++i) {
            if (!c.active(t, i)) continue;  // the kernel's guard of an uneven copy
            auto [r, col] = c.coord(t, i);
            for (int e = 0; e < c.vec; ++e) {
              // The element's logical coordinates in the tile, A (m, k) or B (k, n).
              auto [lr, lc] = c.logical(r, col + e);
              int gr = is_a ? tile_m0 + lr : k0 + lr;  // A: m, B: k
              int gc = is_a ? k0 + lc : tile_n0 + lc;  // A: k, B: n
              bool in = is_a ? (gr < M && gc < K) : (gr < K && gc < N);
              // Memory order: row-major X[r * ld + c]; column-major X[c * ld + r].
              size_t at = is_a ? (p.schedule.a_col ? size_t(gc) * lda + gr : size_t(gr) * lda + gc)
                               : (p.schedule.b_col ? size_t(gc) * ldb + gr : size_t(gr) * ldb + gc);
              float v = in ? (is_a ? A[at] : B[at]) : 0.0f;
              int o = l.offset(lr, lc);
              if (o < 0 || o >= l.buffer_elems()) return false;
              s[size_t(o)] = v;
            }
          }
        return true;
      };
      if (!fill(p.copy_a, p.smem_a, sA, true) || !fill(p.copy_b, p.smem_b, sB, false)) return false;
      for (int t = 0; t < p.block_threads; ++t)
        for (int kk = 0; kk < p.block_k; ++kk)
          for (int i = 0; i < tm.tm; ++i)
            for (int j = 0; j < tm.tn; ++j) {
              int oa = p.smem_a.offset(tm.row(t, i), kk), ob = p.smem_b.offset(kk, tm.col(t, j));
              if (oa < 0 || oa >= p.smem_a.buffer_elems() || ob < 0 ||
                  ob >= p.smem_b.buffer_elems())
                return false;
              acc[(size_t(t) * tm.tm + i) * tm.tn + j] += sA[size_t(oa)] * sB[size_t(ob)];
            }
    }
    for (int t = 0; t < p.block_threads; ++t)
      for (int i = 0; i < tm.tm; ++i)
        for (int j = 0; j < tm.tn; ++j) {
          int m = tile_m0 + tm.row(t, i), n = tile_n0 + tm.col(t, j);
          if (m >= M || n >= N) continue;
          float v = alpha * acc[(size_t(t) * tm.tm + i) * tm.tn + j];
          // C in its layout: row-major, or column-major (layout C col).
          float& c = C[p.schedule.c_col ? size_t(n) * ldc + m : size_t(m) * ldc + n];
          if (beta != 0.0f) v += beta * c;
          if (p.epilogue.bias) v += bias[size_t(n)];
          if (p.epilogue.relu) v = std::max(v, 0.0f);
          c = v;
        }
  }
  return true;
}

// Runs `main` (and its fallback entry, if it has one) through emulate on
// ragged shapes and leading dimensions with small-integer inputs, which make
// every summation order exact, against a reference GEMM. Returns "" when all
// match, else what failed.
inline std::string emulation_mismatch(const KernelPlan& main, std::mt19937& rng) {
  std::vector<KernelPlan> plans = {main};
  if (main.needs_fallback()) plans.push_back(compiler::lower_fallback(main));
  std::uniform_int_distribution<int> small(-2, 2);
  const int shapes[][3] = {{1, 1, 1}, {7, 13, 5}, {67, 45, 19}, {130, 129, 33}};
  for (auto& sh : shapes) {
    int M = sh[0], N = sh[1], K = sh[2];
    // Leading dimensions past each operand's row in its layout (layout A col:
    // A is stored K rows of M; layout B col: B is N rows of K).
    const bool a_col = main.schedule.a_col, b_col = main.schedule.b_col,
               c_col = main.schedule.c_col;
    const int lda = (a_col ? M : K) + 3, ldb = (b_col ? K : N) + 1, ldc = (c_col ? M : N) + 2;
    auto c_at = [&](int m, int n) { return c_col ? size_t(n) * ldc + m : size_t(m) * ldc + n; };
    auto a_at = [&](int m, int k) { return a_col ? size_t(k) * lda + m : size_t(m) * lda + k; };
    auto b_at = [&](int k, int n) { return b_col ? size_t(n) * ldb + k : size_t(k) * ldb + n; };
    std::vector<float> A(size_t(a_col ? K : M) * lda), B(size_t(b_col ? N : K) * ldb),
        C0(size_t(c_col ? N : M) * ldc), bias(N);
    for (auto& x : A) x = float(small(rng));
    for (auto& x : B) x = float(small(rng));
    for (auto& x : C0) x = float(small(rng));
    for (auto& x : bias) x = float(small(rng));
    const float alpha = 2.0f, beta = (sh[0] % 2) ? 0.0f : -1.0f;
    std::vector<float> ref = C0;
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        float acc = 0;
        for (int k = 0; k < K; ++k) acc += A[a_at(m, k)] * B[b_at(k, n)];
        float v = alpha * acc + (beta != 0.0f ? beta * C0[c_at(m, n)] : 0.0f);
        if (main.epilogue.bias) v += bias[n];
        if (main.epilogue.relu) v = std::max(v, 0.0f);
        ref[c_at(m, n)] = v;
      }
    const std::string shape = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
    for (const KernelPlan& p : plans) {
      std::vector<float> C = C0;
      if (!emulate(p, M, N, K, A, lda, B, ldb, C, ldc, alpha, beta, bias))
        return p.name + " " + shape + ": a map left its arrays";
      if (C != ref) return p.name + " " + shape + ": C differs from the reference";
    }
  }
  return "";
}

}  // namespace schedc::plantest
