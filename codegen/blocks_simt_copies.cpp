// The SIMT kernels' global -> shared copies (codegen/blocks_simt.h): per
// thread constants, the unrolled loops over a copy's loads in the tile's
// memory order (compiler::TileCopy), global loads into staging registers,
// their stores into shared memory, and the cp.async issue of `stages`.
#include "codegen/blocks_common.h"
#include "codegen/blocks_simt.h"
#include "codegen/blocks_simt_names.h"
#include "compiler/copy_notes.h"

namespace schedc::codegen {

using compiler::KernelPlan;
using compiler::Operand;
using compiler::Schedule;
using compiler::SmemLayout;
using compiler::TileCopy;
using namespace simt;  // codegen/blocks_simt_names.h

namespace {

// Whether a copy's tile rows (memory order, compiler::TileCopy) run along k:
// B row-major (k, n) and A column-major (k, m); else along m (A) or n (B).
bool k_rows(const TileCopy& c) {
  return (c.operand == Operand::B) != c.global_transposed;
}

// The bounds of a copy's memory rows and columns: k's ("K", or a stream_k
// slice's "seg_k") and the other dimension's ("M" for A, "N" for B).
const char* copy_row_bound(const KernelPlan& p, const TileCopy& c) {
  return k_rows(c) ? k_bound(p) : (c.operand == Operand::A ? "M" : "N");
}
const char* copy_col_bound(const KernelPlan& p, const TileCopy& c) {
  return k_rows(c) ? (c.operand == Operand::A ? "M" : "N") : k_bound(p);
}

// The shared element of memory-order tile position (r, c): the operand's
// logical coordinates are (c, r) when the copy reads it transposed.
std::string copy_smem_ref(const SmemLayout& l, const TileCopy& c, const std::string& buf,
                          const std::string& r, const std::string& col) {
  return c.global_transposed ? smem_ref(l, buf, col, r) : smem_ref(l, buf, r, col);
}

void emit_copy_setup_one(Emitter& e, const KernelPlan& p, const TileCopy& c) {
  const std::string X = op_name(c.operand), x = lower_name(c.operand);
  const std::string loads =
      format("copy %s: the %dx%d tile as %d %s loads, %s%d per thread", X.c_str(), c.rows, c.cols,
             c.vectors(), vec_type(c.vec).c_str(), c.uneven() ? "at most " : "", c.iters);
  if (c.run)
    e.comment(
        format("%s (v = i*THREADS + tid, line v / %d: row line %% %d, col line / %d * %d + "
               "v %% %d)",
               loads.c_str(), c.vecs_per_row(), c.rows, c.rows, c.run, c.vecs_per_row()));
  else
    e.comment(format("%s (vector v = i*THREADS + tid, row v / %d, col v %% %d * %d)", loads.c_str(),
                     c.vecs_per_row(), c.vecs_per_row(), c.vec));
  e.line(format("constexpr int %s_LOADS = %d;", X.c_str(), c.iters));
  if (c.uneven()) {
    const int last = c.vectors() - (c.iters - 1) * c.threads;  // vectors of the last load
    e.comment(format("uneven: %s have no vector in round i = %d and skip it",
                     compiler::thread_range(last, c.threads - 1).c_str(), c.iters - 1));
    e.line(format("constexpr int %s_VECTORS = %d;", X.c_str(), c.vectors()));
  }
  if (c.row_steps()) {
    e.line(format("const int %s_row = tid / %d, %s_col = tid %% %d * %d;", x.c_str(),
                  c.vecs_per_row(), x.c_str(), c.vecs_per_row(), c.vec));
    e.line(format("constexpr int %s_ROW_STEP = %d;  // rows between a thread's loads", X.c_str(),
                  c.rows_per_pass()));
  }
  if (c.run && c.row_steps()) {
    e.comment(format("the tile in column strips of %s_RUN: a warp's copies hit distinct banks",
                     X.c_str()));
    e.line(format("constexpr int %s_RUN = %d, %s_PASSES = %d;  // passes over the rows per strip",
                  X.c_str(), c.run, X.c_str(), c.passes_per_strip()));
  }
  if (c.check_align) {
    e.comment(
        format("fallback: %s is read as %s only if %s is %d-byte aligned and ld%s a multiple of "
               "%d (one check, the same for every thread)",
               X.c_str(), vec_type(c.vec).c_str(), X.c_str(), 4 * c.vec, x.c_str(), c.vec));
    e.line(format(
        "const bool %s_vector_ok = ld%s %% %d == 0 && reinterpret_cast<size_t>(%s) %% %d == 0;",
        x.c_str(), x.c_str(), c.vec, X.c_str(), 4 * c.vec));
  }
  // The thread's first element at k = 0 (stream_k: at the slice's first k);
  // loads add k0 (A) or k0 rows (B).
  const bool rows = c.row_steps();
  const std::string k_start = p.stream_k_tail ? " + k_first * BK" : "";
  if (c.operand == Operand::A && !c.global_transposed) {
    e.line(format("const float* gA = A + (size_t)(tile_m0 + %s) * lda + %s%s;  // global A",
                  rows ? "a_row" : "0", rows ? "a_col" : "0", k_start.c_str()));
  } else if (c.operand == Operand::B && !c.global_transposed) {
    std::string row = rows ? "b_row" : "0";
    if (p.stream_k_tail) row = "(" + row + k_start + ")";
    e.line(format("const float* gB = B + (size_t)%s * ldb + tile_n0 + %s;  // global B",
                  row.c_str(), rows ? "b_col" : "0"));
  } else if (c.operand == Operand::A) {
    // layout A col: the tile's memory rows are k, its columns m.
    std::string row = rows ? "a_row" : "0";
    if (p.stream_k_tail) row = "(" + row + k_start + ")";
    e.line(
        format("const float* gA = A + (size_t)%s * lda + tile_m0 + %s;  // global A, column-major",
               row.c_str(), rows ? "a_col" : "0"));
  } else {
    // layout B col: the tile's memory rows are n, its columns k.
    e.line(format(
        "const float* gB = B + (size_t)(tile_n0 + %s) * ldb + %s%s;  // global B, column-major",
        rows ? "b_row" : "0", rows ? "b_col" : "0", k_start.c_str()));
  }
}

// Row and column expressions of load i for a copy (inside the unrolled loop),
// after the guard of an uneven copy (vectors run out before the threads do,
// in the last load only, so `break` ends the thread's copy).
void emit_copy_coords(Emitter& e, const TileCopy& c) {
  const std::string X = op_name(c.operand), x = lower_name(c.operand);
  if (c.uneven()) e.line(format("if (i * THREADS + tid >= %s_VECTORS) break;", X.c_str()));
  if (c.run && c.row_steps()) {
    e.line(
        format("const int r = %s_row + i %% %s_PASSES * %s_ROW_STEP, c = %s_col + i / %s_PASSES "
               "* %s_RUN;",
               x.c_str(), X.c_str(), X.c_str(), x.c_str(), X.c_str(), X.c_str()));
  } else if (c.row_steps()) {
    e.line(format("const int r = %s_row + i * %s_ROW_STEP, c = %s_col;", x.c_str(), X.c_str(),
                  x.c_str()));
  } else if (c.run) {
    e.line("const int v = i * THREADS + tid;");
    e.line(format("const int line = v / %d;  // strips of %d columns", c.vecs_per_row(), c.run));
    e.line(format("const int r = line %% %d, c = line / %d * %d + v %% %d * %d;", c.rows, c.rows,
                  c.run, c.vecs_per_row(), c.vec));
  } else {
    e.line("const int v = i * THREADS + tid;");
    e.line(format("const int r = v / %d, c = v %% %d * %d;", c.vecs_per_row(), c.vecs_per_row(),
                  c.vec));
  }
}

// Opens the unrolled loop over a copy's loads and emits, for load i, its tile
// coordinates (r, c), its global row and column (gr, gc) — gr bounded by M (A)
// or K (B), gc by K (A) or N (B) — and `src`, its global address: from gA / gB
// by a per-load constant row offset when threads cover whole rows of the tile
// (the usual map), else by (r, c). The caller closes the loop.
void open_copy_loop(Emitter& e, const TileCopy& c, const std::string& k0) {
  const bool is_a = c.operand == Operand::A;
  const bool rows = c.row_steps(), strips = c.run && rows;
  e.line("#pragma unroll");
  e.open_scope(format("for (int i = 0; i < %s_LOADS; ++i)", op_name(c.operand)));
  emit_copy_coords(e, c);
  // Per-load offsets from the thread's first element: rows, and (strips) columns.
  const std::string X = op_name(c.operand);
  const std::string row =
      strips ? "i % " + X + "_PASSES * " + X + "_ROW_STEP" : "i * " + X + "_ROW_STEP";
  const std::string col = strips ? " + i / " + X + "_PASSES * " + X + "_RUN" : "";
  // (gr, gc): the element's memory row and column, k counted from k0 (the
  // tile's k offset) and m or n from the tile's corner.
  const std::string x = lower_name(c.operand);
  const std::string other0 = is_a ? "tile_m0" : "tile_n0";
  if (k_rows(c)) {  // B, or layout A col
    e.line("const int gr = " + k0 + " + r, gc = " + other0 + " + c;");
    e.line(rows ? "const float* src = g" + X + " + (size_t)(" + k0 + " + " + row + ") * ld" + x +
                      col + ";"
                : "const float* src = g" + X + " + (size_t)gr * ld" + x + " + c;");
  } else {  // A, or layout B col
    e.line("const int gr = " + other0 + " + r, gc = " + k0 + " + c;");
    e.line(rows ? "const float* src = g" + X + " + (size_t)(" + row + ") * ld" + x + " + " + k0 +
                      col + ";"
                : "const float* src = g" + X + " + (size_t)r * ld" + x + " + gc;");
  }
}

void emit_load_one(Emitter& e, const KernelPlan& p, const TileCopy& c, const std::string& k0) {
  const std::string X = op_name(c.operand);
  const std::string reg = "rg" + X;
  open_copy_loop(e, c, k0);
  const char* row_bound = copy_row_bound(p, c);
  const char* col_bound = copy_col_bound(p, c);
  std::string first = c.vec == 1 ? "i" : "i * " + std::to_string(c.vec);
  if (c.vec == 1) {
    e.line(
        format("%s[i] = (gr < %s && gc < %s) ? src[0] : 0.0f;", reg.c_str(), row_bound, col_bound));
  } else {
    std::string ok = c.check_align ? lower_name(c.operand) + "_vector_ok && " : "";
    e.open_scope(
        format("if (%sgr < %s && gc + %d <= %s)", ok.c_str(), row_bound, c.vec, col_bound));
    e.line(format("const %s v = *reinterpret_cast<const %s*>(src);", vec_type(c.vec).c_str(),
                  vec_type(c.vec).c_str()));
    e.line(unpack(reg, first, "v", c.vec));
    e.close_scope();
    e.open_scope("else");
    e.comment(c.check_align ? "edge or unaligned: element by element, zero outside the matrix"
                            : "edge: element by element, zero outside the matrix");
    e.line("#pragma unroll");
    e.line(
        format("for (int e = 0; e < %d; ++e) %s[%s + e] = (gr < %s && gc + e < %s) ? src[e] : "
               "0.0f;",
               c.vec, reg.c_str(), first.c_str(), row_bound, col_bound));
    e.close_scope();
  }
  e.close_scope();
}

void emit_store_one(Emitter& e, const KernelPlan& p, const TileCopy& c, const SmemLayout& l,
                    const std::string& buf) {
  const std::string X = op_name(c.operand);
  const std::string reg = "rg" + X;
  e.line("#pragma unroll");
  e.open_scope(format("for (int i = 0; i < %s_LOADS; ++i)", X.c_str()));
  emit_copy_coords(e, c);
  std::string first = c.vec == 1 ? "i" : "i * " + std::to_string(c.vec);
  if (c.smem_vec > 1) {
    std::string vt = vec_type(c.smem_vec);
    std::string args;
    for (int k = 0; k < c.smem_vec; ++k)
      args += (k ? ", " : "") + reg + "[" + first + " + " + std::to_string(k) + "]";
    e.line(format("*reinterpret_cast<%s*>(&%s) = make_%s(%s);", vt.c_str(),
                  copy_smem_ref(l, c, buf, "r", "c").c_str(), vt.c_str(), args.c_str()));
  } else if (c.vec == 1) {
    e.line(copy_smem_ref(l, c, buf, "r", "c") + " = " + reg + "[i];");
  } else {
    for (int k = 0; k < c.vec; ++k)
      e.line(format("%s = %s[%s + %d];",
                    copy_smem_ref(l, c, buf, "r", "c + " + std::to_string(k)).c_str(), reg.c_str(),
                    first.c_str(), k));
  }
  e.close_scope();
}

}  // namespace

void emit_copy_setup(Emitter& e, const KernelPlan& p) {
  emit_copy_setup_one(e, p, p.copy_a);
  emit_copy_setup_one(e, p, p.copy_b);
  if (p.pipeline == compiler::Pipeline::cp_async) return;  // cp.async needs no staging
  e.line(
      format("float rgA[A_LOADS * %d], rgB[B_LOADS * %d];  // staging registers: global -> shared",
             p.copy_a.vec, p.copy_b.vec));
}

void emit_cp_async_helpers(Emitter& e, const KernelPlan& p) {
  const Schedule& s = p.schedule;
  e.comment(format("stages %d %s: cp.async copies global -> shared without registers; a source",
                   p.stages, origin_note(s, s.stages_at).c_str()));
  e.comment("size below the copy size zero-fills the rest (edges of M, N, K).");
  for (int bytes : {4, 8, 16}) {
    e.open_scope(
        format("__device__ __forceinline__ void cp_async%d(float* dst, const float* src, "
               "int src_bytes)",
               bytes));
    e.line("const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));");
    e.line(
        format("asm volatile(\"cp.async.%s.shared.global [%%0], [%%1], %d, %%2;\\n\" :: "
               "\"r\"(d), \"l\"(src), \"r\"(src_bytes));",
               bytes == 16 ? "cg" : "ca", bytes));
    e.close_scope();
  }
  e.open_scope("__device__ __forceinline__ void cp_async_commit()");
  e.line("asm volatile(\"cp.async.commit_group;\\n\" ::);");
  e.close_scope();
  e.line("template <int N>");
  e.open_scope("__device__ __forceinline__ void cp_async_wait()");
  e.line("asm volatile(\"cp.async.wait_group %0;\\n\" :: \"n\"(N));");
  e.close_scope();
  e.line();
}

namespace {

// One operand's tile at k offset k0 -> shared buffer `buf` with cp.async.
// Out-of-range elements get src_bytes 0 (zero fill) and a safe address.
void emit_issue_one(Emitter& e, const KernelPlan& p, const TileCopy& c, const SmemLayout& l,
                    const std::string& k0, const std::string& buf) {
  const bool is_a = c.operand == Operand::A;
  open_copy_loop(e, c, k0);
  const char* row_bound = copy_row_bound(p, c);
  const char* col_bound = copy_col_bound(p, c);
  const char* base = is_a ? "A" : "B";
  auto scalar_copies = [&] {
    for (int k = 0; k < c.vec; ++k) {
      std::string ck = c.vec == 1 ? "c" : "c + " + std::to_string(k);
      std::string gk = c.vec == 1 ? "gc" : "gc + " + std::to_string(k);
      std::string sk = c.vec == 1 ? "src" : "src + " + std::to_string(k);
      e.line(format("cp_async4(&%s, (gr < %s && %s < %s) ? %s : %s, (gr < %s && %s < %s) ? 4 : 0);",
                    copy_smem_ref(l, c, buf, "r", ck).c_str(), row_bound, gk.c_str(), col_bound,
                    sk.c_str(), base, row_bound, gk.c_str(), col_bound));
    }
  };
  auto vector_copy = [&] {
    e.line(format("const int valid = gr < %s ? max(0, min(%d, %s - gc)) : 0;  // elements inside",
                  row_bound, c.vec, col_bound));
    e.line(format("cp_async%d(&%s, valid ? src : %s, valid * 4);", c.vec * 4,
                  copy_smem_ref(l, c, buf, "r", "c").c_str(), base));
  };
  if (c.smem_vec > 1 && c.check_align) {
    e.open_scope(format("if (%s_vector_ok)", lower_name(c.operand).c_str()));
    vector_copy();
    e.close_scope();
    e.open_scope("else");
    e.comment("unaligned: one 4-byte copy per element");
    scalar_copies();
    e.close_scope();
  } else if (c.smem_vec > 1) {
    vector_copy();
  } else {
    scalar_copies();
  }
  e.close_scope();
}

}  // namespace

void emit_issue_tiles(Emitter& e, const KernelPlan& p, const std::string& k0,
                      const std::string& buf) {
  emit_issue_one(e, p, p.copy_a, p.smem_a, k0, buf);
  emit_issue_one(e, p, p.copy_b, p.smem_b, k0, buf);
}

void emit_load_tiles(Emitter& e, const KernelPlan& p, const std::string& k0) {
  emit_load_one(e, p, p.copy_a, k0);
  emit_load_one(e, p, p.copy_b, k0);
}

void emit_store_tiles(Emitter& e, const KernelPlan& p, const std::string& buf) {
  emit_store_one(e, p, p.copy_a, p.smem_a, buf);
  emit_store_one(e, p, p.copy_b, p.smem_b, buf);
}

}  // namespace schedc::codegen
