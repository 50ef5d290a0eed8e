// The mma.sync / WMMA generator's fragments, shared stages -> registers ->
// tensor cores (codegen/mma_context.h): the single-buffered k-step (mma.sync
// with ldmatrix, or WMMA), and for the double-buffered loops the planned
// fragment addresses, their loads and the mma of one buffer.
#include <string>
#include <vector>

#include "codegen/blocks_ldmatrix.h"
#include "codegen/mma_context.h"

namespace schedc::codegen::mma {

namespace {

// A thread's coordinates in the fragment layouts (for planning addresses).
struct ThreadCoord {
  int warp_row0, warp_col0, g, tq;
  int a_m, a_k, b_k, b_n;  // fragment-local start of this lane's ldmatrix rows
};

// a_m, a_k / b_k, b_n: (m, k) of A's ldmatrix row, (k, n) of B's
// (compiler::ldmatrix_a_lane / ldmatrix_b_lane, either layout).
std::vector<ThreadCoord> thread_coords(MmaContext& cx) {
  std::vector<ThreadCoord> out;
  const int v = cx.m.a.chunk_elems(), ra = cx.instr->regs_a;
  const int kb = cx.instr->regs_b, cnt = cx.m.ldmatrix_b ? cx.b_ldmatrix_count() : 1;
  for (int t = 0; t < cx.threads(); ++t) {
    const int w = t / 32, l = t % 32;
    ThreadCoord c;
    c.warp_row0 = (w / cx.m.warps_n) * cx.m.warp_m;
    c.warp_col0 = (w % cx.m.warps_n) * cx.m.warp_n;
    c.g = l / 4;
    c.tq = l % 4;
    compiler::ldmatrix_a_lane(cx.m.a_col, l, ra, v, c.a_m, c.a_k);
    compiler::ldmatrix_b_lane(cx.m.b_col, l, cnt, kb, v, c.b_k, c.b_n);
    out.push_back(c);
  }
  return out;
}

// The printed stage coordinates of fragment loads: `row_base` / `col_base` are
// the fragment's origin along m (A) or n (B) and along k, swapped into the
// stage's (row, col) for a column-major operand.
std::string a_stage_args(MmaContext& cx, const std::string& m, const std::string& k) {
  return cx.m.a_col ? k + ", " + m : m + ", " + k;
}
std::string b_stage_args(MmaContext& cx, const std::string& k, const std::string& n) {
  return cx.m.b_col ? n + ", " + k : k + ", " + n;
}

const char* trans_suffix(bool trans) {
  return trans ? "_trans" : "";
}

}  // namespace

// lds_a(addr): one f32 from a shared byte address (a column-major tf32 A: no
// 32-bit ldmatrix.trans exists, each fragment element is its own load).
void emit_lds_a_helper(MmaContext& cx) {
  cx.e.comment("4-byte shared load of one f32 (tf32 A fragments of a column-major A)");
  cx.e.open_scope("__device__ __forceinline__ float lds_a(unsigned addr)");
  cx.e.line("float r;");
  cx.e.line("asm volatile(\"ld.shared.f32 %0, [%1];\\n\" : \"=f\"(r) : \"r\"(addr));");
  cx.e.line("return r;");
  cx.e.close_scope();
  cx.e.line();
}

// lds_b(addr): m.b_vec f32 from a shared byte address (tf32 B fragments).
void emit_lds_helper(MmaContext& cx) {
  const int v = cx.m.b_vec;
  cx.e.comment(
      format("%d-byte shared load of %d n-contiguous f32 (tf32 B, %d fragment(s))", 4 * v, v, v));
  if (v == 1) {
    cx.e.open_scope("__device__ __forceinline__ void lds_b(float (&r)[1], unsigned addr)");
    cx.e.line("asm volatile(\"ld.shared.f32 %0, [%1];\\n\" : \"=f\"(r[0]) : \"r\"(addr));");
  } else if (v == 2) {
    cx.e.open_scope("__device__ __forceinline__ void lds_b(float (&r)[2], unsigned addr)");
    cx.e.line(
        "asm volatile(\"ld.shared.v2.f32 {%0, %1}, [%2];\\n\" : \"=f\"(r[0]), \"=f\"(r[1]) : "
        "\"r\"(addr));");
  } else {
    cx.e.open_scope("__device__ __forceinline__ void lds_b(float (&r)[4], unsigned addr)");
    cx.e.line(
        "asm volatile(\"ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\\n\" : \"=f\"(r[0]), "
        "\"=f\"(r[1]), \"=f\"(r[2]), \"=f\"(r[3]) : \"r\"(addr));");
  }
  cx.e.close_scope();
  cx.e.line();
}

void compute_mma_sync(MmaContext& cx, Emitter& e, const std::string& stage) {
  const int v = cx.m.a.chunk_elems();
  const int ik = cx.m.inst_k;
  e.line(format("const T* sA_stage = sA + %s * %d;", stage.c_str(),
                cx.m.a.stage_bytes / cx.m.elem_bytes));
  e.line(format("const T* sB_stage = sB + %s * %d;", stage.c_str(),
                cx.m.b.stage_bytes / cx.m.elem_bytes));
  e.line("#pragma unroll");
  e.open_scope(format("for (int kk = 0; kk < %d; ++kk)", cx.m.k_steps));
  e.line(format("unsigned a_frag[%d][%d];  // (%d, %d) A fragments%s", cx.m.frags_m,
                cx.instr->regs_a, cx.m.inst_m, ik, cx.tf32 ? ", tf32 bits" : ""));
  e.line(format("unsigned b_frag[%d][%d];  // (%d, %d) B fragments%s", cx.m.frags_n,
                cx.instr->regs_b, ik, cx.m.inst_n, cx.tf32 ? ", tf32 bits" : ""));
  e.line("#pragma unroll");
  e.open_scope(format("for (int mi = 0; mi < %d; ++mi)", cx.m.frags_m));
  if (!cx.m.ldmatrix_a) {
    // Column-major tf32 A: a_i = A[m = g + 8 (i % 2)][k = tq + 4 (i / 2)], one 4-byte load each.
    for (int i = 0; i < cx.instr->regs_a; ++i)
      e.line(format("a_frag[mi][%d] = f32_to_tf32(sA_stage[sA_offset(%s)]);", i,
                    a_stage_args(cx, format("warp_row0 + mi * 16 + g + %d", 8 * (i % 2)),
                                 format("kk * %d + tq + %d", ik, 4 * (i / 2)))
                        .c_str()));
  } else if (cx.m.a_col) {
    e.line(
        format("ldmatrix_x%d_trans(a_frag[mi], smem_u32(sA_stage + sA_offset(kk * %d + a_ld_row, "
               "warp_row0 + mi * 16 + a_ld_col)));",
               cx.instr->regs_a, ik));
  } else {
    e.line(format(
        "ldmatrix_x%d(a_frag[mi], smem_u32(sA_stage + sA_offset(warp_row0 + mi * 16 + a_ld_row, "
        "kk * %d + a_ld_col)));",
        cx.instr->regs_a, ik));
  }
  if (cx.tf32 && cx.m.ldmatrix_a) {
    e.line("#pragma unroll");
    e.line(
        format("for (int r = 0; r < %d; ++r) a_frag[mi][r] = "
               "f32_to_tf32(__uint_as_float(a_frag[mi][r]));",
               cx.instr->regs_a));
  }
  e.close_scope();
  if (cx.m.ldmatrix_b) {
    const int per = cx.b_frags_per_ldmatrix(), rb = cx.instr->regs_b, cnt = per * rb;
    e.line("#pragma unroll");
    e.open_scope(format("for (int ni = 0; ni < %d; ni += %d)", cx.m.frags_n, per));
    if (cx.m.b_col) {
      e.line(
          format("unsigned r[%d];  // %d B fragment(s), n rows of k: mma's col operand as stored",
                 cnt, per));
      e.line(
          format("ldmatrix_x%d(r, smem_u32(sB_stage + sB_offset(warp_col0 + ni * 8 + b_ld_row, "
                 "kk * %d + b_ld_col)));",
                 cnt, ik));
    } else {
      e.line(format("unsigned r[%d];  // %d B fragment(s), k-major rows transposed by ldmatrix",
                    cnt, per));
      e.line(
          format("ldmatrix_x%d_trans(r, smem_u32(sB_stage + sB_offset(kk * %d + b_ld_row, "
                 "warp_col0 + ni * 8 "
                 "+ b_ld_col)));",
                 cnt, ik));
    }
    for (int q = 0; q < per; ++q)
      for (int i = 0; i < rb; ++i)
        e.line(format(cx.tf32 ? "b_frag[ni + %d][%d] = f32_to_tf32(__uint_as_float(r[%d]));"
                              : "b_frag[ni + %d][%d] = r[%d];",
                      q, i, q * rb + i));
    e.close_scope();
  } else {
    // tf32 B: b_i = B[k = tq + 4i][n = g], one 4-byte shared load each.
    e.line("#pragma unroll");
    e.open_scope(format("for (int ni = 0; ni < %d; ++ni)", cx.m.frags_n));
    for (int i = 0; i < cx.instr->regs_b; ++i)
      e.line(
          format("b_frag[ni][%d] = f32_to_tf32(sB_stage[sB_offset(kk * %d + tq + %d, warp_col0 + "
                 "ni * 8 + g)]);",
                 i, ik, 4 * i));
    e.close_scope();
  }
  e.line("#pragma unroll");
  e.open_scope(format("for (int mi = 0; mi < %d; ++mi)", cx.m.frags_m));
  e.line("#pragma unroll");
  e.line(
      format("for (int ni = 0; ni < %d; ++ni) mma_%dx%dx%d(acc[mi][ni], a_frag[mi], b_frag[ni]);",
             cx.m.frags_n, cx.instr->m, cx.instr->n, cx.instr->k));
  e.close_scope();
  e.close_scope("kk");
  (void)v;
}

void compute_wmma(MmaContext& cx, Emitter& e, const std::string& stage) {
  e.line(format("const T* sA_stage = sA + %s * %d;", stage.c_str(),
                cx.m.a.stage_bytes / cx.m.elem_bytes));
  e.line(format("const T* sB_stage = sB + %s * %d;", stage.c_str(),
                cx.m.b.stage_bytes / cx.m.elem_bytes));
  e.line("#pragma unroll");
  e.open_scope(format("for (int kk = 0; kk < %d; ++kk)", cx.m.k_steps));
  // A column-major operand's stage is the fragment's col_major layout (k rows of m for A,
  // n rows of k for B), the stride its padded row.
  e.line(format("wmma::fragment<wmma::matrix_a, %s, %s, wmma::%s> a_frag[%d];",
                cx.wmma_shape().c_str(), cx.wmma_type().c_str(),
                cx.m.a_col ? "col_major" : "row_major", cx.m.frags_m));
  e.line(format("wmma::fragment<wmma::matrix_b, %s, %s, wmma::%s> b_frag[%d];",
                cx.wmma_shape().c_str(), cx.wmma_type().c_str(),
                cx.m.b_col ? "col_major" : "row_major", cx.m.frags_n));
  e.line("#pragma unroll");
  e.open_scope(format("for (int mi = 0; mi < %d; ++mi)", cx.m.frags_m));
  e.line(format(
      "wmma::load_matrix_sync(a_frag[mi], sA_stage + sA_offset(%s), %d);",
      a_stage_args(cx, format("warp_row0 + mi * %d", cx.m.inst_m), format("kk * %d", cx.m.inst_k))
          .c_str(),
      cx.m.a.row_stride));
  if (cx.tf32) {
    e.line("#pragma unroll");
    e.line(
        "for (int t = 0; t < a_frag[mi].num_elements; ++t) a_frag[mi].x[t] = "
        "wmma::__float_to_tf32(a_frag[mi].x[t]);");
  }
  e.close_scope();
  e.line("#pragma unroll");
  e.open_scope(format("for (int ni = 0; ni < %d; ++ni)", cx.m.frags_n));
  e.line(format(
      "wmma::load_matrix_sync(b_frag[ni], sB_stage + sB_offset(%s), %d);",
      b_stage_args(cx, format("kk * %d", cx.m.inst_k), format("warp_col0 + ni * %d", cx.m.inst_n))
          .c_str(),
      cx.m.b.row_stride));
  if (cx.tf32) {
    e.line("#pragma unroll");
    e.line(
        "for (int t = 0; t < b_frag[ni].num_elements; ++t) b_frag[ni].x[t] = "
        "wmma::__float_to_tf32(b_frag[ni].x[t]);");
  }
  e.close_scope();
  e.line("#pragma unroll");
  e.open_scope(format("for (int mi = 0; mi < %d; ++mi)", cx.m.frags_m));
  e.line("#pragma unroll");
  e.line(
      format("for (int ni = 0; ni < %d; ++ni) wmma::mma_sync(acc[mi][ni], a_frag[mi], b_frag[ni], "
             "acc[mi][ni]);",
             cx.m.frags_n));
  e.close_scope();
  e.close_scope("kk");
}

void plan_fragment_addresses(MmaContext& cx) {
  const auto tc = thread_coords(cx);
  const int ik = cx.m.inst_k, eb = cx.m.elem_bytes;
  cx.frag.a_addr.assign(cx.m.k_steps, {});
  cx.frag.b_addr.assign(cx.m.k_steps, {});
  // The printed a_ld_row / a_ld_col (b_ld_*) are the stage's row and column offsets: the
  // fragment-local a_m, a_k (b_k, b_n) of thread_coords, swapped for a column-major operand.
  for (int kk = 0; kk < cx.m.k_steps; ++kk) {
    for (int mi = 0; mi < cx.m.frags_m; ++mi) {
      if (!cx.m.ldmatrix_a) {
        // Column-major tf32 A: one 4-byte load per fragment register (mma_tf32_a_coord).
        for (int i = 0; i < cx.instr->regs_a; ++i) {
          std::vector<long> v;
          for (const auto& c : tc) {
            int fm = 0, fk = 0;
            compiler::mma_tf32_a_coord(c.g * 4 + c.tq, i, fm, fk);
            v.push_back(long(cx.m.a_offset(c.warp_row0 + mi * cx.m.inst_m + fm, kk * ik + fk)) *
                        eb);
          }
          cx.frag.a_addr[kk].push_back(cx.frag.a_bases.get(
              v, format("sA_offset(%d + tq, warp_row0 + %d + g) * %d", kk * ik + 4 * (i / 2),
                        mi * cx.m.inst_m + 8 * (i % 2), eb)));
        }
        continue;
      }
      std::vector<long> v;
      for (const auto& c : tc)
        v.push_back(long(cx.m.a_offset(c.warp_row0 + mi * cx.m.inst_m + c.a_m, kk * ik + c.a_k)) *
                    eb);
      cx.frag.a_addr[kk].push_back(cx.frag.a_bases.get(
          v, cx.m.a_col ? format("sA_offset(%d + a_ld_row, warp_row0 + %d + a_ld_col) * %d",
                                 kk * ik, mi * cx.m.inst_m, eb)
                        : format("sA_offset(warp_row0 + %d + a_ld_row, %d + a_ld_col) * %d",
                                 mi * cx.m.inst_m, kk * ik, eb)));
    }
    if (cx.m.ldmatrix_b) {
      for (int ni = 0; ni < cx.m.frags_n; ni += cx.b_frags_per_ldmatrix()) {
        std::vector<long> v;
        for (const auto& c : tc)
          v.push_back(long(cx.m.b_offset(kk * ik + c.b_k, c.warp_col0 + ni * 8 + c.b_n)) * eb);
        cx.frag.b_addr[kk].push_back(cx.frag.b_bases.get(
            v, cx.m.b_col ? format("sB_offset(warp_col0 + %d + b_ld_row, %d + b_ld_col) * %d",
                                   ni * 8, kk * ik, eb)
                          : format("sB_offset(%d + b_ld_row, warp_col0 + %d + b_ld_col) * %d",
                                   kk * ik, ni * 8, eb)));
      }
    } else {
      const int P = cx.m.b_vec;
      for (int q = 0; q < cx.m.frags_n / P; ++q)
        for (int i = 0; i < cx.instr->regs_b; ++i) {
          std::vector<long> v;
          for (const auto& c : tc) {
            const int gc = cx.m.b_chunk_permuted ? compiler::tf32_b_lane_chunk(c.g) : c.g;
            v.push_back(
                long(cx.m.b.offset(kk * ik + c.tq + 4 * i, c.warp_col0 + q * 8 * P + P * gc)) * eb);
          }
          cx.frag.b_addr[kk].push_back(cx.frag.b_bases.get(
              v, format("sB_offset(%d + tq, warp_col0 + %d + %d * %s) * %d", kk * ik + 4 * i,
                        q * 8 * P, P, cx.m.b_chunk_permuted ? "g_chunk" : "g", eb)));
        }
    }
  }
}

void emit_fragment_bases(MmaContext& cx) {
  cx.e.comment("shared byte offsets of this thread's fragment loads (stage 0); the others are");
  cx.e.comment("these plus constants");
  for (size_t j = 0; j < cx.frag.a_bases.exprs.size(); ++j)
    cx.e.line(format("const unsigned a_off%zu = %s;", j, cx.frag.a_bases.exprs[j].c_str()));
  for (size_t j = 0; j < cx.frag.b_bases.exprs.size(); ++j)
    cx.e.line(format("const unsigned b_off%zu = %s;", j, cx.frag.b_bases.exprs[j].c_str()));
}

// Loads the fragments of k-step `kk` from the stage at shared addresses (sa, sb)
// into fragment buffer `buf`.
void load_fragments(MmaContext& cx, Emitter& e, int buf, const std::string& sa,
                    const std::string& sb, int kk) {
  for (int mi = 0; mi < cx.m.frags_m; ++mi) {
    if (!cx.m.ldmatrix_a) {
      const int ra = cx.instr->regs_a;
      for (int r = 0; r < ra; ++r)
        e.line(format("a_frag[%d][%d][%d] = f32_to_tf32(lds_a(%s + %s));", buf, mi, r, sa.c_str(),
                      cx.frag.a_addr[kk][mi * ra + r].c_str()));
      continue;
    }
    e.line(format("ldmatrix_x%d%s(a_frag[%d][%d], %s + %s);", cx.instr->regs_a,
                  trans_suffix(cx.m.ldmatrix_a_trans), buf, mi, sa.c_str(),
                  cx.frag.a_addr[kk][mi].c_str()));
    if (cx.tf32)
      for (int r = 0; r < cx.instr->regs_a; ++r)
        e.line(format("a_frag[%d][%d][%d] = f32_to_tf32(__uint_as_float(a_frag[%d][%d][%d]));", buf,
                      mi, r, buf, mi, r));
  }
  if (cx.m.ldmatrix_b) {
    const int per = cx.b_frags_per_ldmatrix(), rb = cx.instr->regs_b, cnt = per * rb;
    int n = 0;
    for (int ni = 0; ni < cx.m.frags_n; ni += per, ++n) {
      e.open_scope("");
      e.line(format("unsigned r[%d];", cnt));
      e.line(format("ldmatrix_x%d%s(r, %s + %s);", cnt, trans_suffix(cx.m.ldmatrix_b_trans),
                    sb.c_str(), cx.frag.b_addr[kk][n].c_str()));
      for (int q = 0; q < per; ++q)
        for (int i = 0; i < rb; ++i)
          e.line(format(cx.tf32 ? "b_frag[%d][%d][%d] = f32_to_tf32(__uint_as_float(r[%d]));"
                                : "b_frag[%d][%d][%d] = r[%d];",
                        buf, ni + q, i, q * rb + i));
      e.close_scope();
    }
  } else {
    const int P = cx.m.b_vec, rb = cx.instr->regs_b;
    int n = 0;
    for (int q = 0; q < cx.m.frags_n / P; ++q)
      for (int i = 0; i < rb; ++i, ++n) {
        e.open_scope("");
        e.line(format("float r[%d];", P));
        e.line(format("lds_b(r, %s + %s);", sb.c_str(), cx.frag.b_addr[kk][n].c_str()));
        for (int j = 0; j < P; ++j)
          e.line(format("b_frag[%d][%d][%d] = f32_to_tf32(r[%d]);", buf, q * P + j, i, j));
        e.close_scope();
      }
  }
}

void mma_step(MmaContext& cx, Emitter& e, int buf) {
  e.line("#pragma unroll");
  e.open_scope(format("for (int mi = 0; mi < %d; ++mi)", cx.m.frags_m));
  e.line("#pragma unroll");
  e.line(
      format("for (int ni = 0; ni < %d; ++ni) mma_%dx%dx%d(acc[mi][ni], a_frag[%d][mi], "
             "b_frag[%d][ni]);",
             cx.m.frags_n, cx.instr->m, cx.instr->n, cx.instr->k, buf, buf));
  e.close_scope();
}

// With an odd number of k-steps the next tile's first fragments are in buffer 1.
void copy_odd_fragments(MmaContext& cx) {
  if (cx.m.k_steps % 2 == 1) {
    cx.e.comment("odd number of k-steps: the next tile's first fragments are in buffer 1");
    cx.e.line("#pragma unroll");
    cx.e.line(format(
        "for (int i = 0; i < %d; ++i) a_frag[0][i / %d][i %% %d] = a_frag[1][i / %d][i %% %d];",
        cx.m.frags_m * cx.instr->regs_a, cx.instr->regs_a, cx.instr->regs_a, cx.instr->regs_a,
        cx.instr->regs_a));
    cx.e.line("#pragma unroll");
    cx.e.line(format(
        "for (int i = 0; i < %d; ++i) b_frag[0][i / %d][i %% %d] = b_frag[1][i / %d][i %% %d];",
        cx.m.frags_n * cx.instr->regs_b, cx.instr->regs_b, cx.instr->regs_b, cx.instr->regs_b,
        cx.instr->regs_b));
  }
}

}  // namespace schedc::codegen::mma
