#include "codegen/blocks_simt.h"

#include <functional>

#include "codegen/blocks_common.h"
#include "codegen/blocks_simt_names.h"
#include "compiler/copy_notes.h"
#include "dsl/diagnostics.h"

namespace schedc::codegen {

using compiler::KernelPlan;
using compiler::Operand;
using compiler::Schedule;
using compiler::SmemLayout;
using compiler::ThreadMap;
using compiler::TileCopy;
using namespace simt;  // codegen/blocks_simt_names.h

namespace {

// Fragment of one operand for step `kk` (an expression): a thread's TM rows
// of A (TN columns of B) into register array `reg`.
void emit_frag_one(Emitter& e, const KernelPlan& p, Operand op, const std::string& buf,
                   const std::string& kk, const std::string& reg) {
  const ThreadMap& m = p.threads;
  const bool is_a = op == Operand::A;
  const SmemLayout& l = is_a ? p.smem_a : p.smem_b;
  const int vec = is_a ? p.frag.vec_a : p.frag.vec_b;
  const char* T = is_a ? "TM" : "TN";
  const char* P = is_a ? "PM" : "PN";
  const char* base = is_a ? "thread_m" : "thread_n";
  const char* stride = is_a ? "PIECE_STRIDE_M" : "PIECE_STRIDE_N";
  auto ref = [&](const std::string& idx) {
    return is_a ? smem_ref(l, buf, idx, kk) : smem_ref(l, buf, kk, idx);
  };
  e.line("#pragma unroll");
  if (vec > 1) {
    e.open_scope(format("for (int p = 0; p < %s / %s; ++p)", T, P));
    e.line("#pragma unroll");
    e.open_scope(format("for (int v = 0; v < %s; v += %d)", P, vec));
    std::string vt = vec_type(vec);
    e.line(format("const %s x = *reinterpret_cast<const %s*>(&%s);", vt.c_str(), vt.c_str(),
                  ref(format("%s + p * %s + v", base, stride)).c_str()));
    e.line(unpack(reg, format("p * %s + v", P), "x", vec));
    e.close_scope();
    e.close_scope();
  } else {
    e.line(format("for (int i = 0; i < %s; ++i) %s[i] = %s;", T, reg.c_str(),
                  ref(format("%s + i / %s * %s + i %% %s", base, P, stride, P)).c_str()));
  }
  (void)m;
}

}  // namespace

void emit_naive_body(Emitter& e, const KernelPlan& p) {
  e.line("const int m = tile_m0 + threadIdx.y, n = tile_n0 + threadIdx.x;");
  e.line("if (m >= M || n >= N) return;");
  const std::string T = element_type(p.dtype);
  const Schedule& s = p.schedule;
  if (!s.a_col && !s.b_col) {
    e.line("const " + T + "* gA = A + (size_t)m * lda;  // row m of A");
    e.line("float acc = 0.0f;");
    e.line("for (int k = 0; k < K; ++k) acc += float(gA[k]) * float(B[(size_t)k * ldb + n]);");
  } else {
    // Column-major operands (layout A col / B col): (m, k) at k * lda + m,
    // (k, n) at n * ldb + k.
    e.line("const " + T + "* gA = A + " +
           (s.a_col ? "m;  // row m of A, column-major: k steps by lda"
                    : "(size_t)m * lda;  // row m of A"));
    e.line("const " + T + "* gB = B + " +
           (s.b_col ? "(size_t)n * ldb;  // column n of B, column-major: k contiguous"
                    : "n;  // column n of B: k steps by ldb"));
    e.line("float acc = 0.0f;");
    e.line(std::string("for (int k = 0; k < K; ++k) acc += float(gA[") +
           (s.a_col ? "(size_t)k * lda" : "k") + "]) * float(gB[" +
           (s.b_col ? "k" : "(size_t)k * ldb") + "]);");
  }
  e.line(p.schedule.c_col
             ? "store_c(C + (size_t)n * ldc + m, n, acc, alpha, beta, bias);  // C column-major"
             : "store_c(C + (size_t)m * ldc + n, n, acc, alpha, beta, bias);");
}

void emit_thread_map(Emitter& e, const KernelPlan& p) {
  const Schedule& s = p.schedule;
  const ThreadMap& m = p.threads;
  std::string what = format("thread %dx%d", s.thread.m, s.thread.n);
  if (m.pieces_m() * m.pieces_n() > 1)
    what += format(" split %dx%d", s.thread.split_m, s.thread.split_n);
  e.comment(format("%s %s: %dx%d pieces of %dx%d, piece stride %dx%d", what.c_str(),
                   origin_note(s, s.thread_at).c_str(), m.pieces_m(), m.pieces_n(), m.pm, m.pn,
                   m.piece_stride_m(), m.piece_stride_n()));
  e.line(format("constexpr int TM = %d, TN = %d;  // register tile", m.tm, m.tn));
  e.line(format("constexpr int PM = %d, PN = %d;  // piece", m.pm, m.pn));
  e.line(format("constexpr int PIECE_STRIDE_M = %d, PIECE_STRIDE_N = %d;", m.piece_stride_m(),
                m.piece_stride_n()));
  e.line("const int tid = threadIdx.x;");
  if (m.warp_tiled) {
    e.comment(format("warp %dx%d %s: a warp's 32 threads as %dx%d lanes over a %dx%d sub-tile",
                     m.region_m, m.region_n, origin_note(s, s.warp_at).c_str(), m.lanes_m,
                     m.lanes_n, m.region_m, m.region_n));
    e.line("const int warp_id = tid / 32, lane = tid % 32;");
    e.line(format("const int thread_m = warp_id / %d * %d + lane / %d * PM;", m.regions_n,
                  m.region_m, m.lanes_n));
    e.line(format("const int thread_n = warp_id %% %d * %d + lane %% %d * PN;", m.regions_n,
                  m.region_n, m.lanes_n));
  } else {
    e.comment(format("threads as %dx%d lanes over the block tile", m.lanes_m, m.lanes_n));
    e.line(format("const int thread_m = tid / %d * PM;", m.lanes_n));
    e.line(format("const int thread_n = tid %% %d * PN;", m.lanes_n));
  }
  e.comment("rC[i][j] is C[tile_m0 + thread_m + i / PM * PIECE_STRIDE_M + i % PM]");
  e.comment("         [tile_n0 + thread_n + j / PN * PIECE_STRIDE_N + j % PN]");
}

void emit_smem_decls(Emitter& e, const KernelPlan& p) {
  const Schedule& s = p.schedule;
  auto describe = [&](const SmemLayout& l) {
    bool is_a = l.operand == Operand::A;
    std::string shape = is_a
                            ? (l.transposed ? "(BK, BM) tile of A, k-major" : "(BM, BK) tile of A")
                            : (l.transposed ? "(BN, BK) tile of B, k-major" : "(BK, BN) tile of B");
    const compiler::Origin& t_at = is_a ? s.transpose_a_at : s.transpose_b_at;
    const compiler::Origin& p_at = is_a ? s.pad_a_at : s.pad_b_at;
    if (l.transposed)
      shape += format(", transpose %s %s", is_a ? "A" : "B", origin_note(s, t_at).c_str());
    if (l.pad)
      shape += format(", pad %s %d %s", is_a ? "A" : "B", l.pad, origin_note(s, p_at).c_str());
    if (l.swizzle)
      shape += format(", swizzle smem %s: column ^= (row & %d) * %d",
                      origin_note(s, s.swizzle_smem_at).c_str(), l.mask, l.unit);
    if (l.buffers > 1)
      shape += format(", double_buffer %s", origin_note(s, s.double_buffer_at).c_str());
    return shape;
  };
  auto dims = [&](const SmemLayout& l) {
    std::string d;
    if (l.buffers > 1) d += format("[%d]", l.buffers);
    bool is_a = l.operand == Operand::A;
    std::string rows = l.transposed ? (is_a ? "BK" : "BN") : (is_a ? "BM" : "BK");
    std::string len = l.transposed ? (is_a ? "BM" : "BK") : (is_a ? "BK" : "BN");
    if (l.pad) len += " + " + std::to_string(l.pad);
    return d + "[" + rows + "][" + len + "]";
  };
  if (smem_is_static(p)) {
    e.line("__shared__ __align__(16) float sA" + dims(p.smem_a) + ";  // " + describe(p.smem_a));
    e.line("__shared__ __align__(16) float sB" + dims(p.smem_b) + ";  // " + describe(p.smem_b));
    return;
  }
  e.comment(format("%d bytes of shared memory: dynamic (over the 48 KB static limit%s)",
                   p.smem_bytes, p.smem_bytes <= 48 * 1024 ? " with stream_k's arrival slot" : ""));
  e.line("extern __shared__ __align__(16) unsigned char smem[];");
  e.line("using SA = float" + dims(p.smem_a) + ";  // " + describe(p.smem_a));
  e.line("using SB = float" + dims(p.smem_b) + ";  // " + describe(p.smem_b));
  e.line("SA& sA = *reinterpret_cast<SA*>(smem);");
  e.line("SB& sB = *reinterpret_cast<SB*>(smem + sizeof(SA));");
}

namespace {

// rC += rA (x) rB: the TM x TN outer product of one k step, in the plan's order.
void emit_outer_product(Emitter& e, const KernelPlan& p, const std::string& ra,
                        const std::string& rb) {
  const std::string fma = format("rC[i][j] += %s[i] * %s[j];", ra.c_str(), rb.c_str());
  if (p.fma.order == compiler::FmaOrder::cols_outer) {
    e.comment("columns outer: the shorter side of the register tile");
    e.line("#pragma unroll");
    e.open_scope("for (int j = 0; j < TN; ++j)");
    e.line("#pragma unroll");
    e.line("for (int i = 0; i < TM; ++i) " + fma);
    e.close_scope();
    return;
  }
  e.line("#pragma unroll");
  e.open_scope("for (int i = 0; i < TM; ++i)");
  e.line("#pragma unroll");
  if (p.fma.serpentine) {
    e.open_scope("for (int jj = 0; jj < TN; ++jj)");
    e.line("const int j = i % 2 ? TN - 1 - jj : jj;  // serpentine: odd rows walk back");
    e.line(fma);
    e.close_scope();
  } else {
    e.line("for (int j = 0; j < TN; ++j) " + fma);
  }
  e.close_scope();
}

}  // namespace

void emit_compute(Emitter& e, const KernelPlan& p, const std::string& buf) {
  e.line("#pragma unroll");
  e.open_scope("for (int kk = 0; kk < BK; ++kk)");
  e.line(
      "float rA[TM], rB[TN];  // fragments: column kk of the thread's A rows, row kk of its B "
      "columns");
  emit_frag_one(e, p, Operand::A, buf, "kk", "rA");
  emit_frag_one(e, p, Operand::B, buf, "kk", "rB");
  emit_outer_product(e, p, "rA", "rB");
  e.close_scope("kk");
}

namespace {

// double_buffer with fragments in two register slots. Inside a k-tile, step
// kk+1's fragments are read from shared memory while step kk's FMAs run. The
// staged next tile is stored and the barrier passed before the last step's
// FMAs, so step 0 of the next tile is read while they run: no k-step starts
// by waiting on shared memory.
// Opens the k_tile loop of a double-buffered kernel and issues the next
// tile's global loads into registers, in flight during the compute. The
// caller closes the loop.
void open_double_buffer_loop(Emitter& e, const KernelPlan& p) {
  e.open_scope("for (int k_tile = 0; k_tile < num_k_tiles; ++k_tile)");
  e.line("const int cur = k_tile & 1;");
  e.line("const bool has_next = k_tile + 1 < num_k_tiles;");
  e.open_scope("if (has_next)");
  e.comment("prefetch: next tile global -> registers, in flight during the compute");
  e.line("const int k0 = (k_tile + 1) * BK;");
  emit_load_tiles(e, p, "k0");
  e.close_scope();
}

// The two fragment slots, slot 0 filled with step 0 of shared buffer `buf`.
void emit_frag_slots(Emitter& e, const KernelPlan& p, const std::string& buf) {
  e.line(
      "float rA[2][TM], rB[2][TN];  // fragment slots: column kk of the thread's A rows, row kk of "
      "its B columns");
  emit_frag_one(e, p, Operand::A, buf, "0", "rA[0]");
  emit_frag_one(e, p, Operand::B, buf, "0", "rB[0]");
}

// The k-steps of one tile with two fragment slots: step kk + 1 read from
// buffer `cur` while step kk computes; at the last step `publish` makes the
// next tile visible (its barrier included) and that tile's step 0 is read
// from buffer `next` during the FMAs.
// `step_head`, when set, is emitted first in every step.
void emit_frag_kk_loop(Emitter& e, const KernelPlan& p, const std::string& cur,
                       const std::string& next, const char* publish_comment,
                       const std::function<void()>& publish,
                       const std::function<void()>& step_head = nullptr) {
  e.line("#pragma unroll");
  e.open_scope("for (int kk = 0; kk < BK; ++kk)");
  if (step_head) step_head();
  e.open_scope("if (kk + 1 < BK)");
  e.comment("step kk + 1's fragments, read while step kk computes");
  emit_frag_one(e, p, Operand::A, cur, "kk + 1", "rA[(kk + 1) % 2]");
  emit_frag_one(e, p, Operand::B, cur, "kk + 1", "rB[(kk + 1) % 2]");
  e.close_scope();
  e.open_scope("else if (has_next)");
  e.comment(publish_comment);
  publish();
  emit_frag_one(e, p, Operand::A, next, "0", "rA[0]");
  emit_frag_one(e, p, Operand::B, next, "0", "rB[0]");
  e.close_scope();
  emit_outer_product(e, p, "rA[kk % 2]", "rB[kk % 2]");
  e.close_scope("kk");
}

// `stages`: STAGES and the prologue that puts tiles 0 .. STAGES-2 in flight.
void emit_stages_prologue(Emitter& e, const KernelPlan& p) {
  e.line(format("constexpr int STAGES = %d;", p.stages));
  e.line("#pragma unroll");
  e.open_scope("for (int s = 0; s < STAGES - 1; ++s)");
  e.open_scope("if (s < num_k_tiles)");
  e.line("const int k0 = s * BK;");
  emit_issue_tiles(e, p, "k0", "s");
  e.close_scope();
  e.line("cp_async_commit();  // one group per tile, empty past the end");
  e.close_scope();
}

void emit_double_buffer_frag_loop(Emitter& e, const KernelPlan& p) {
  const Schedule& s = p.schedule;
  e.comment(format("double_buffer %s: compute on buffer k_tile & 1 while the next tile waits in",
                   origin_note(s, s.double_buffer_at).c_str()));
  e.comment("registers (rgA, rgB). Fragments use two register slots: step kk + 1 is read from");
  e.comment("shared memory while step kk computes. Before the last step's FMAs the next tile is");
  e.comment("stored to the other buffer, the one barrier per k-step is passed, and that buffer's");
  e.comment("step 0 is read, so the FMAs cover the shared-memory latency across the barrier.");
  emit_load_tiles(e, p, "0");
  emit_store_tiles(e, p, "0");
  e.line("__syncthreads();");
  emit_frag_slots(e, p, "0");
  open_double_buffer_loop(e, p);
  emit_frag_kk_loop(
      e, p, "cur", "cur ^ 1",
      "last step: publish the next tile, then read its step 0 during this step's FMAs", [&] {
        emit_store_tiles(e, p, "cur ^ 1");
        e.line("__syncthreads();  // the one barrier per k-step");
      });
  e.close_scope("k_tile");
}

// stages with fragments in two register slots: the cp.async pipeline of
// `stages`, with the fragment double buffering of double_buffer. The copy of
// tile k_tile + STAGES - 1 is issued at the top of each k-step, into the stage
// the previous k-step finished with; before the last step's FMAs the next tile
// is waited for and the one barrier per k-step passed, and that tile's step 0
// is read while the FMAs run.
void emit_stages_frag_loop(Emitter& e, const KernelPlan& p) {
  const Schedule& s = p.schedule;
  e.comment(format("stages %d %s: tiles k_tile+1 .. k_tile+STAGES-1 in flight (cp.async) while",
                   p.stages, origin_note(s, s.stages_at).c_str()));
  e.comment("tile k_tile is computed. Fragments use two register slots: step kk + 1 is read from");
  e.comment("shared memory while step kk computes. Before the last step's FMAs tile k_tile + 1 is");
  e.comment(
      "waited for, the one barrier per k-step is passed (after it nobody reads tile k_tile's");
  e.comment("stage, which the next k-step refills), and step 0 of tile k_tile + 1 is read.");
  emit_stages_prologue(e, p);
  e.line("cp_async_wait<STAGES - 2>();  // tile 0 has landed (this thread's copies)");
  e.line("__syncthreads();  // ... and everyone's");
  emit_frag_slots(e, p, "0");
  const bool stagger = p.copy_late_step > 0;
  if (stagger) {
    e.comment("The next tile's copies: the lower half of the warps issues them at step 0, the");
    e.comment("upper half at step COPY_LATE_STEP, so each scheduler (warp w runs on w % 4) keeps");
    e.comment("one warp on FMAs while the other issues copies.");
    e.line(format("constexpr int COPY_LATE_STEP = %d;", p.copy_late_step));
    e.line("const bool copies_late = tid >= THREADS / 2;");
  }
  e.line("int read_stage = 0, write_stage = STAGES - 1;");
  e.open_scope("for (int k_tile = 0; k_tile < num_k_tiles; ++k_tile)");
  e.line("const int next_tile = k_tile + STAGES - 1;");
  // Issues tile next_tile's copies into write_stage.
  auto issue_next = [&] {
    e.open_scope("if (next_tile < num_k_tiles)");
    e.line("const int k0 = next_tile * BK;");
    emit_issue_tiles(e, p, "k0", "write_stage");
    e.close_scope();
  };
  if (!stagger) {
    issue_next();
    e.line("cp_async_commit();  // possibly empty: keeps the group count in step");
  }
  e.line("const bool has_next = k_tile + 1 < num_k_tiles;");
  e.line("const int next_stage = read_stage == STAGES - 1 ? 0 : read_stage + 1;");
  std::function<void()> step_head;
  if (stagger)
    // The group is committed at COPY_LATE_STEP by every warp (for the lower
    // half after its copies of step 0): committing inside the branch lets
    // ptxas hoist the lower half's copies above step 0's FMAs, which ran 3%
    // slower on an H100 (bench/NOTES.md "Session 5").
    step_head = [&] {
      e.open_scope("if ((kk == 0 && !copies_late) || (kk == COPY_LATE_STEP && copies_late))");
      issue_next();
      e.close_scope();
      e.line(
          "if (kk == COPY_LATE_STEP) cp_async_commit();  // every warp, before the last step's "
          "wait; possibly empty");
    };
  emit_frag_kk_loop(
      e, p, "read_stage", "next_stage",
      "last step: wait for the next tile, then read its step 0 during this step's FMAs",
      [&] {
        e.line(
            "cp_async_wait<STAGES - 2>();  // tile k_tile + 1 has landed (this thread's copies)");
        e.line("__syncthreads();  // the one barrier per k-step");
      },
      step_head);
  e.line("read_stage = next_stage;");
  e.line("write_stage = write_stage == STAGES - 1 ? 0 : write_stage + 1;");
  e.close_scope("k_tile");
  e.line("cp_async_wait<0>();  // only empty groups remain; leave nothing in flight");
}

}  // namespace

void emit_main_loop(Emitter& e, const KernelPlan& p) {
  const Schedule& s = p.schedule;
  e.line("float rC[TM][TN];  // accumulators");
  e.line("#pragma unroll");
  e.line("for (int i = 0; i < TM; ++i)");
  e.line("  #pragma unroll");
  e.line("  for (int j = 0; j < TN; ++j) rC[i][j] = 0.0f;");
  e.line(format("const int num_k_tiles = (%s + BK - 1) / BK;", k_bound(p)));
  if (p.pipeline == compiler::Pipeline::cp_async && p.frag_double_buffer) {
    emit_stages_frag_loop(e, p);
    return;
  }
  if (p.pipeline == compiler::Pipeline::cp_async) {
    e.comment(format("stages %d %s: tiles k_tile+1 .. k_tile+STAGES-1 in flight (cp.async) while",
                     p.stages, origin_note(s, s.stages_at).c_str()));
    e.comment("tile k_tile is computed; one barrier per k-step.");
    emit_stages_prologue(e, p);
    e.open_scope("for (int k_tile = 0; k_tile < num_k_tiles; ++k_tile)");
    e.line("cp_async_wait<STAGES - 2>();  // this thread's copies of tile k_tile have landed");
    e.line("__syncthreads();  // everyone's have; and everyone is done with tile k_tile - 1");
    e.line("const int next = k_tile + STAGES - 1;");
    e.open_scope("if (next < num_k_tiles)");
    e.line("const int k0 = next * BK;");
    emit_issue_tiles(e, p, "k0", "next % STAGES");
    e.close_scope();
    e.line("cp_async_commit();");
    emit_compute(e, p, "k_tile % STAGES");
    e.close_scope("k_tile");
    return;
  }
  if (p.pipeline == compiler::Pipeline::single) {
    e.open_scope("for (int k_tile = 0; k_tile < num_k_tiles; ++k_tile)");
    e.line("const int k0 = k_tile * BK;");
    emit_load_tiles(e, p, "k0");
    emit_store_tiles(e, p, "");
    e.line("__syncthreads();  // tile in shared memory");
    emit_compute(e, p, "");
    e.line("__syncthreads();  // everyone done reading before the next tile overwrites it");
    e.close_scope("k_tile");
    return;
  }
  if (p.frag_double_buffer) {
    emit_double_buffer_frag_loop(e, p);
    return;
  }
  e.comment(format("double_buffer %s: compute on buffer k_tile & 1 while the next tile waits in",
                   origin_note(s, s.double_buffer_at).c_str()));
  e.comment("registers (rgA, rgB); it is written to the other buffer after the compute, so one");
  e.comment("barrier per k-step suffices.");
  emit_load_tiles(e, p, "0");
  emit_store_tiles(e, p, "0");
  e.line("__syncthreads();");
  open_double_buffer_loop(e, p);
  emit_compute(e, p, "cur");
  e.open_scope("if (has_next)");
  emit_store_tiles(e, p, "cur ^ 1");
  e.close_scope();
  e.line("__syncthreads();  // the one barrier per k-step");
  e.close_scope("k_tile");
}

void emit_store_c(Emitter& e, const KernelPlan& p) {
  const int v = p.epilogue.vec;
  if (p.epilogue.check_align) {
    e.comment(
        "fallback: C is written as float4 only if C is 16-byte aligned and ldc a multiple of 4");
    e.line("const bool c_vector_ok = ldc % 4 == 0 && reinterpret_cast<size_t>(C) % 16 == 0;");
  }
  if (p.schedule.c_col) {
    // layout C col: (m, n) at n * ldc + m, element by element.
    e.comment("rC -> C (column-major) through the epilogue, predicated on M and N");
    e.line("#pragma unroll");
    e.open_scope("for (int j = 0; j < TN; ++j)");
    e.line("const int n = tile_n0 + thread_n + j / PN * PIECE_STRIDE_N + j % PN;");
    e.line("if (n >= N) continue;");
    e.line("float* gC = C + (size_t)n * ldc;  // column n of C");
    e.line("#pragma unroll");
    e.open_scope("for (int i = 0; i < TM; ++i)");
    e.line("const int m = tile_m0 + thread_m + i / PM * PIECE_STRIDE_M + i % PM;");
    e.line("if (m < M) store_c(gC + m, n, rC[i][j], alpha, beta, bias);");
    e.close_scope();
    e.close_scope();
    return;
  }
  e.comment("rC -> C through the epilogue, predicated on M and N");
  e.line("#pragma unroll");
  e.open_scope("for (int i = 0; i < TM; ++i)");
  e.line("const int m = tile_m0 + thread_m + i / PM * PIECE_STRIDE_M + i % PM;");
  e.line("if (m >= M) continue;");
  e.line("float* gC = C + (size_t)m * ldc;  // row m of C");
  e.line("#pragma unroll");
  if (v == 4) {
    e.open_scope("for (int j = 0; j < TN; j += 4)");
    e.line("const int n = tile_n0 + thread_n + j / PN * PIECE_STRIDE_N + j % PN;");
    if (p.epilogue.whole_groups) {
      e.line("if (n < N)  // N % 4 == 0 (the entry's precondition): the whole group is inside");
      e.line(
          "  store_c4(gC + n, n, rC[i][j], rC[i][j + 1], rC[i][j + 2], rC[i][j + 3], alpha, "
          "beta, bias);");
      e.close_scope();
    } else {
      e.open_scope(p.epilogue.check_align ? "if (c_vector_ok && n + 4 <= N)" : "if (n + 4 <= N)");
      e.line(
          "store_c4(gC + n, n, rC[i][j], rC[i][j + 1], rC[i][j + 2], rC[i][j + 3], alpha, beta, "
          "bias);");
      e.close_scope();
      e.open_scope("else");
      e.line("#pragma unroll");
      e.line("for (int e = 0; e < 4; ++e)");
      e.line("  if (n + e < N) store_c(gC + n + e, n + e, rC[i][j + e], alpha, beta, bias);");
      e.close_scope();
      e.close_scope();
    }
  } else {
    e.open_scope("for (int j = 0; j < TN; ++j)");
    e.line("const int n = tile_n0 + thread_n + j / PN * PIECE_STRIDE_N + j % PN;");
    e.line("if (n < N) store_c(gC + n, n, rC[i][j], alpha, beta, bias);");
    e.close_scope();
  }
  e.close_scope();
}

}  // namespace schedc::codegen
