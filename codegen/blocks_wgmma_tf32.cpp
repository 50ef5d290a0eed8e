// The tf32 Hopper kernel's blocks with an operand in registers
// (codegen/blocks_wgmma.h): wgmma reads tf32 operands from shared memory
// k-major only. With a row-major B (n-major stages) the kernel computes
// C^T = B^T A^T (compiler/wgmma_plan.h, `swapped`): B^T from registers,
// loaded and rounded from B's stages each k-step; A's stage as wgmma's
// k-major B by descriptor; the accumulators are C^T. With A and B
// column-major (`a_in_registers`) A comes from registers, loaded the same way
// from its m-major stages, and B's k-major stage by descriptor: C itself.
#include <string>

#include "codegen/blocks_common.h"
#include "codegen/blocks_wgmma.h"

namespace schedc::codegen {

using compiler::KernelPlan;
using compiler::WgmmaPlan;

namespace {

// Opens the unrolled loops over a consumer's accumulators: instruction
// (i, j), register r; closed by three close_scope.
void open_accumulator_loops(Emitter& e, const WgmmaPlan& w) {
  emit_wgmma_instruction_loops(e, w, format("for (int r = 0; r < %d; ++r)", w.inst_n / 2));
}

// The same loops, naming register r's element of C: row m, column n.
void open_element_loops(Emitter& e, const WgmmaPlan& w) {
  open_accumulator_loops(e, w);
  e.line(format(
      "const int m = m0 + j * %d + 8 * (r / 4) + r %% 2, n = n0 + i * %d + 8 * (r / 2 %% 2);",
      w.inst_n, w.inst_m));
}

// The stores of a consumer tile inside a row-major C with beta 0, no checks.
// Register r = 4g + 2c + h holds C's row 8g + 2p + h and column q + 8c
// (p = lane % 4, q = lane / 4), so a store of every lane's r is 4 rows of
// 32 bytes. Lanes p and p ^ 2 trade one value of each pair (c = 0, 1): then
// lanes p < 2 hold columns q of rows 2p + h and 2p + 4 + h, lanes p >= 2
// columns q + 8 of rows 2(p - 2) + h and 2p + h, and a store is 2 rows of
// 64 bytes. Where ldc is not a multiple of 8 floats, a 32-byte run spans two
// sectors: 2 runs a store instead of 4 took 10-13 µs off tf32_best at
// 4096x4097x1024 with ldc 4097 or 4100 on an H100 (bench/NOTES.md,
// session 21).
void emit_row_pair_stores(Emitter& e, const WgmmaPlan& w) {
  e.comment(
      "inside C and C unread (beta 0): no checks; lanes p and p ^ 2 (p = lane % 4) trade one "
      "value");
  e.comment("of each pair of 8-column blocks, so that a warp's store is 2 rows of 64 bytes");
  e.line("const bool lo = threadIdx.x % 4 < 2;");
  e.line(
      "float* const cp = C + (size_t)(m0 - dm + 2 * (threadIdx.x % 2)) * ldc + n0 + (lo ? 0 : "
      "8);");
  emit_wgmma_instruction_loops(e, w, format("for (int g = 0; g < %d; ++g)", w.inst_n / 8));
  e.line("#pragma unroll");
  e.open_scope("for (int h = 0; h < 2; ++h)");
  e.line(format(
      "const float v0 = epilogue_value(acc[i][j][4 * g + h], C, n0 + i * %d, alpha, 0.0f, bias);",
      w.inst_m));
  e.line(
      format("const float v1 = epilogue_value(acc[i][j][4 * g + 2 + h], C, n0 + i * %d + 8, alpha, "
             "0.0f, bias);",
             w.inst_m));
  e.line("const float traded = __shfl_xor_sync(0xffffffffu, lo ? v1 : v0, 2);");
  e.line(format("float* const c = cp + (size_t)(j * %d + 8 * g + h) * ldc + i * %d;", w.inst_n,
                w.inst_m));
  e.line("c[0] = lo ? v0 : traded;");
  e.line("c[(size_t)4 * ldc] = lo ? traded : v1;");
  for (int i = 0; i < 4; ++i) e.close_scope();
}

// The stores of a block tile inside a row-major C whose rows are off 32-byte
// sectors, beta 0 (WgmmaPlan::sector_rows): the consumers write
// sector_rows rows of the tile at a time into shared memory through the
// epilogue, then each warp writes whole rows of it, every pass of its 32
// lanes starting on a sector boundary of the row. The branch is the same for
// every consumer thread of the block (its condition is the tile's), so the
// named barrier 1 over all of them is reached by all or none.
void emit_sector_staged_stores(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  const int rows = w.sector_rows, bn = p.block_n, threads = w.consumers() * 128;
  const std::string at_row = format("(row * %d + (col ^ (row / 2 %% 4 * 8)))", bn);
  e.comment(
      format("C's rows off 32-byte sectors: the tile goes out %d rows at a time through", rows));
  e.comment(
      format("shared memory (%d bytes; each 8-column block of a row XORed with row / 2 %% 4),",
             rows * bn * 4));
  e.comment(
      format("each row written by one warp from a sector boundary on: %d sectors a row, not %d",
             bn / 8 + 1, bn / 8 * 3 / 2));
  e.line(
      format("float* const staged = reinterpret_cast<float*>(smem + %d);", w.sector_offset_bytes));
  e.line("const int col0 = n0 - tile_n0;  // this thread's first column in the tile");
  e.line(format("const int cw = threadIdx.x / 32 - %d, lane = threadIdx.x %% 32;  // consumer warp",
                4 * w.producers()));
  e.line("#pragma unroll");
  e.open_scope(format("for (int q = 0; q < %d; ++q)", p.block_m / rows));
  e.comment(format("rows %d q ..: register 4 g + v of instruction (i, j) with j * %d + 8 g in them",
                   rows, w.inst_n));
  e.line("#pragma unroll");
  e.open_scope(format("for (int i = 0; i < %d; ++i)", w.m_insts));
  e.line("#pragma unroll");
  e.open_scope(format("for (int gg = 0; gg < %d; ++gg)", rows / 8));
  e.line("#pragma unroll");
  e.open_scope("for (int v = 0; v < 4; ++v)");
  e.line(format("const int j = q * %d / %d, g = q * %d %% %d / 8 + gg;", rows, w.inst_n, rows,
                w.inst_n));
  e.line(
      format("const int row = 8 * gg + v %% 2 + dm, col = col0 + i * %d + 8 * (v / 2);", w.inst_m));
  e.line(
      format("staged[%s] = epilogue_value(acc[i][j][4 * g + v], C, tile_n0 + col, alpha, 0.0f, "
             "bias);",
             at_row.c_str()));
  for (int i = 0; i < 3; ++i) e.close_scope();
  e.line(format("named_barrier(1, %d);  // the staged rows are whole", threads));
  e.comment("warp cw writes rows cw, cw + W, ...; pass s from `head` - 8 + 32 s, head the");
  e.comment("columns before the row's first whole sector");
  e.open_scope(format("for (int row = cw; row < %d; row += %d)", rows, threads / 32));
  e.line(
      format("float* const c_row = C + (size_t)(tile_m0 + q * %d + row) * ldc + tile_n0;", rows));
  e.line("const int head = (int)((32u - (unsigned)((size_t)c_row % 32u)) % 32u) / 4;");
  e.line("#pragma unroll");
  e.open_scope(format("for (int s = 0; s < %d; ++s)", bn / 32 + 1));
  e.line("const int col = head - 8 + 32 * s + lane;");
  e.line(format("if (col >= 0 && col < %d) c_row[col] = staged[%s];", bn, at_row.c_str()));
  e.close_scope();
  e.close_scope();
  e.line(format("named_barrier(1, %d);  // read out: the next rows may be staged", threads));
  e.close_scope("q");
}

}  // namespace

// wgmma's A (here B^T) from four registers, its B (here A) k-major from
// shared memory; tf32 takes no transpose flags.
void emit_wgmma_tf32_instruction(Emitter& e, const WgmmaPlan& w) {
  const int regs = w.inst_n / 2;
  if (w.swapped) {
    e.comment(format(
        "acc += A (64x%d tf32, registers: B^T) * B (%dx%d, k-major from shared memory:", w.inst_k,
        w.inst_k, w.inst_n));
    e.comment(
        format("A^T) by descriptor; acc is the m64n%d f32 D fragment of C^T "
               "(compiler/wgmma_plan.h);",
               w.inst_n));
  } else {
    e.comment(format("acc += A (64x%d tf32, registers) * B (%dx%d, k-major from shared memory)",
                     w.inst_k, w.inst_k, w.inst_n));
    e.comment(format(
        "by descriptor; acc is the m64n%d f32 D fragment of C (compiler/wgmma_plan.h);", w.inst_n));
  }
  e.comment("scale_d 0: acc = A * B, its old value unread (a tile's first k-step)");
  e.open_scope(
      format("__device__ __forceinline__ void %s(float (&d)[%d], const unsigned (&a)[4], "
             "unsigned long long desc_b, int scale_d)",
             wgmma_inst_name(w).c_str(), regs));
  std::string list;
  for (int r = 0; r < regs; ++r) list += (r ? ", %" : "%") + std::to_string(r);
  e.line("asm volatile(");
  e.line("    \"{\\n.reg .pred p;\\nsetp.ne.b32 p, " + format("%%%d", regs + 5) + ", 0;\\n\"");
  e.line(format("    \"wgmma.mma_async.sync.aligned.m%dn%dk%d.f32.tf32.tf32 \"", w.inst_m, w.inst_n,
                w.inst_k));
  e.line("    \"{" + list + "},\"");
  e.line(format("    \" {%%%d, %%%d, %%%d, %%%d}, %%%d, p, 1, 1;\\n}\\n\"", regs, regs + 1,
                regs + 2, regs + 3, regs + 4));
  emit_wgmma_accumulator_operands(e, regs, false);
  e.line(
      "    : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"l\"(desc_b), "
      "\"r\"(scale_d));");
  e.close_scope();
  e.line();
  e.comment(std::string(w.swapped ? "B^T fragment element from B's stage"
                                  : "A fragment element from A's stage") +
            ", rounded to tf32 (nearest, ties away from zero)");
  e.open_scope("__device__ __forceinline__ unsigned tf32_from_shared(unsigned addr)");
  e.line("float f;");
  e.line("asm volatile(\"ld.shared.f32 %0, [%1];\\n\" : \"=f\"(f) : \"r\"(addr));");
  e.line("unsigned r;");
  e.line("asm(\"cvt.rna.tf32.f32 %0, %1;\\n\" : \"=r\"(r) : \"f\"(f));");
  e.line("return r;");
  e.close_scope();
  e.line();
}

void emit_wgmma_tf32_fragments(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  const compiler::WgmmaOperand& r = w.register_operand();
  if (w.swapped) {
    e.comment(
        "B^T fragments (PTX's m64nNk8 A layout, rows along C's columns): register v holds B's");
    e.comment(
        "(k, n) = (lane % 4 + 4 * (v / 2), 16 * warp + lane / 4 + 8 * (v % 2)) of k-step and");
  } else {
    e.comment("A fragments (PTX's m64nNk8 A layout): register v holds A's");
    e.comment(
        "(m, k) = (16 * warp + lane / 4 + 8 * (v % 2), lane % 4 + 4 * (v / 2)) of k-step and");
  }
  e.comment(
      format("instruction 0; bt_off[v] is its byte in a stage (%d-column panels, 128-byte swizzle)",
             r.panel_cols));
  e.line("unsigned bt_off[4];");
  e.line("#pragma unroll");
  e.open_scope("for (int v = 0; v < 4; ++v)");
  e.line(
      "const int n = 16 * (threadIdx.x / 32 % 4) + threadIdx.x % 32 / 4 + 8 * (v % 2), k = "
      "threadIdx.x % 4 + 4 * (v / 2);");
  e.line(
      format("bt_off[v] = (n / %d) * %du + k * 128u + ((((n %% %d) / 4) ^ (k %% 8)) * 16u) + "
             "(n %% 4) * 4u;",
             r.panel_cols, r.panel_bytes(), r.panel_cols));
  e.close_scope();
  e.line(format("unsigned frag[2][%d][4];  // k-step kk uses frag[kk %% 2]", w.m_insts));
}

namespace {

// frag[buf] <- the register operand's fragments of k-step `kk` (expressions)
// of its stage (sb: B^T's, swapped; sa: A's).
void emit_fragment_loads(Emitter& e, const WgmmaPlan& w, const std::string& buf,
                         const std::string& kk) {
  const compiler::WgmmaOperand& r = w.register_operand();
  e.line("#pragma unroll");
  e.open_scope(format("for (int i = 0; i < %d; ++i)", w.m_insts));
  e.line("#pragma unroll");
  e.line(format(
      "for (int v = 0; v < 4; ++v) frag[%s][i][v] = tf32_from_shared(%s + bt_off[v] + "
      "i * %du + (%s) * %du);",
      buf.c_str(), w.swapped ? "sb" : "sa", r.mn_bytes(w.inst_m), kk.c_str(), r.k_bytes(w.inst_k)));
  e.close_scope();
}

}  // namespace

void emit_wgmma_tf32_k_steps(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  e.comment("one group per k-step, k-step kk from frag[kk % 2]; the next k-step's fragments");
  e.comment("load while this one's group runs, once the group that last read them (kk - 1)");
  e.comment("has completed; at a k-tile's start only the previous k-tile's last group runs");
  e.line("wgmma_wait<1>();");
  emit_fragment_loads(e, w, "0", "0");
  e.line("#pragma unroll");
  e.open_scope(format("for (int kk = 0; kk < %d; ++kk)", w.k_steps));
  e.line("wgmma_fence();");
  e.line("#pragma unroll");
  e.open_scope(format("for (int j = 0; j < %d; ++j)", w.n_insts));
  // The descriptor operand: A's stage (swapped) or B's, k-major.
  const compiler::WgmmaOperand& d = w.swapped ? w.a : w.b;
  e.line(format("const unsigned long long db = wgmma_desc(%s + j * %du + %s, %du, %du);",
                w.swapped ? "sa" : "sb", d.mn_bytes(w.inst_n),
                wgmma_k_step_bytes(d, w.inst_k, "kk").c_str(), d.lbo_bytes, d.sbo_bytes));
  e.line("#pragma unroll");
  e.line(
      format("for (int i = 0; i < %d; ++i) %s(acc[i][j], frag[kk %% 2][i], db, k_tile > 0 || "
             "kk > 0);",
             w.m_insts, wgmma_inst_name(w).c_str()));
  e.close_scope();
  e.line("wgmma_commit();");
  e.line(format("if (kk == %d) break;", w.k_steps - 1));
  e.line("wgmma_wait<1>();");
  e.comment(
      "after k-step 0's commit, every group of the previous k-tile has completed: free its stage");
  emit_wgmma_release(e, p, "kk == 0 && k_tile > 0 && ", "(it - 1)");
  emit_fragment_loads(e, w, "(kk + 1) % 2", "kk + 1");
  e.close_scope("kk");
}

void emit_wgmma_tf32_stores(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  e.comment(
      "epilogue: register r of instruction (i, j) is C^T's row 16 * warp + lane / 4 + 8 * (r / 2 % "
      "2)");
  e.comment("and column 8 * (r / 4) + 2 * (lane % 4) + r % 2: C's column and row");
  const std::string part_n =
      w.pingpong ? "" : format(" + (consumer %% %d) * %d", w.consumers_n, w.wg_n);
  const std::string part_m =
      w.pingpong ? "" : format(" + (consumer / %d) * %d", w.consumers_n, w.wg_m);
  e.line(
      "const int dn = 16 * (threadIdx.x / 32 % 4) + threadIdx.x % 32 / 4, dm = 2 * (threadIdx.x % "
      "4);");
  e.line("const int n0 = tile_n0" + part_n + " + dn, m0 = tile_m0" + part_m + " + dm;");
  // C column-major: (m, n) at n * ldc + m; a warp's store is 8 columns, 4 elements each.
  const std::string at = w.c_col ? "(size_t)n * ldc + m" : "(size_t)m * ldc + n";
  if (w.c_col) e.comment("inside C and C unread (beta 0): no checks");
  const std::string inside =
      format("beta == 0.0f && m0 - dm + %d <= M && n0 - dn + %d <= N", w.wg_m, w.wg_n);
  if (w.sector_rows > 0) {
    e.open_scope(
        format("if (beta == 0.0f && tile_m0 + %d <= M && tile_n0 + %d <= N && (ldc %% 8 != 0 || "
               "(size_t)C %% 32 != 0))",
               p.block_m, p.block_n));
    emit_sector_staged_stores(e, p);
    e.close_scope();
    e.open_scope("else if (" + inside + ")");
  } else {
    e.open_scope("if (" + inside + ")");
  }
  if (w.c_col) {
    open_element_loops(e, w);
    e.line("C[" + at + "] = epilogue_value(acc[i][j][r], C, n, alpha, 0.0f, bias);");
    for (int i = 0; i < 3; ++i) e.close_scope();
  } else {
    emit_row_pair_stores(e, w);
  }
  e.close_scope();
  e.open_scope("else");
  open_element_loops(e, w);
  e.line("if (m < M && n < N) store_c(C + " + at + ", n, acc[i][j][r], alpha, beta, bias);");
  for (int i = 0; i < 4; ++i) e.close_scope();
}

}  // namespace schedc::codegen
