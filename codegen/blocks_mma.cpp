#include "codegen/blocks_mma.h"

namespace schedc::codegen {

using compiler::MmaApi;
using compiler::MmaType;

namespace {

// clang-format off
const MmaInstr kTable[] = {
  // mma.sync: A row-major (k contiguous), B col-major (k contiguous per n), f32 accumulators.
  {"SM80_16x8x16_F32F16F16F32_TN",   MmaApi::mma_sync, MmaType::f16,  16, 8, 16,
   "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",   4, 2, 4, 80},
  {"SM75_16x8x8_F32F16F16F32_TN",    MmaApi::mma_sync, MmaType::f16,  16, 8, 8,
   "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32",    2, 1, 4, 75},
  {"SM80_16x8x16_F32BF16BF16F32_TN", MmaApi::mma_sync, MmaType::bf16, 16, 8, 16,
   "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 4, 2, 4, 80},
  {"SM80_16x8x8_F32BF16BF16F32_TN",  MmaApi::mma_sync, MmaType::bf16, 16, 8, 8,
   "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32",  2, 1, 4, 80},
  {"SM80_16x8x8_F32TF32TF32F32_TN",  MmaApi::mma_sync, MmaType::tf32, 16, 8, 8,
   "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",  4, 2, 4, 80},
  {"SM80_16x8x4_F32TF32TF32F32_TN",  MmaApi::mma_sync, MmaType::tf32, 16, 8, 4,
   "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32",  2, 1, 4, 80},
  // int8: s32 accumulators, exact (no .satfinite: the sum wraps as the wgmma path's does).
  {"SM80_16x8x32_S32S8S8S32_TN",     MmaApi::mma_sync, MmaType::s8,   16, 8, 32,
   "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32",     4, 2, 4, 80},
  // `mma s8 m8n8k16`: four of these compute one m16n8k32 step (emit_mma_in_quarters_helper).
  {"SM75_8x8x16_S32S8S8S32_TN",      MmaApi::mma_sync, MmaType::s8,   8, 8, 16,
   "mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32",      1, 1, 2, 75},
  // WMMA (<mma.h>): fragments opaque; ptx holds the fragment element type.
  {"WMMA_16x16x16_F32F16",  MmaApi::wmma, MmaType::f16,  16, 16, 16, "half",  0, 0, 0, 70},
  {"WMMA_32x8x16_F32F16",   MmaApi::wmma, MmaType::f16,  32, 8, 16,  "half",  0, 0, 0, 70},
  {"WMMA_8x32x16_F32F16",   MmaApi::wmma, MmaType::f16,  8, 32, 16,  "half",  0, 0, 0, 70},
  {"WMMA_16x16x16_F32BF16", MmaApi::wmma, MmaType::bf16, 16, 16, 16, "__nv_bfloat16", 0, 0, 0, 80},
  {"WMMA_32x8x16_F32BF16",  MmaApi::wmma, MmaType::bf16, 32, 8, 16,  "__nv_bfloat16", 0, 0, 0, 80},
  {"WMMA_8x32x16_F32BF16",  MmaApi::wmma, MmaType::bf16, 8, 32, 16,  "__nv_bfloat16", 0, 0, 0, 80},
  {"WMMA_16x16x8_F32TF32",  MmaApi::wmma, MmaType::tf32, 16, 16, 8,  "wmma::precision::tf32", 0, 0, 0, 80},
};
// clang-format on

}  // namespace

const MmaInstr* find_mma_instr(MmaApi api, MmaType type, int m, int n, int k) {
  for (const MmaInstr& in : kTable)
    if (in.api == api && in.type == type && in.m == m && in.n == n && in.k == k) return &in;
  return nullptr;
}

const MmaInstr* mma_instr_table(int& count) {
  count = int(sizeof(kTable) / sizeof(kTable[0]));
  return kTable;
}

void emit_mma_sync_helper(Emitter& e, const MmaInstr& in) {
  // Operand numbering: d0..3, a.., b.., c0..3 (= d, accumulate in place).
  std::string d, a, b, c, ins;
  int n = 0;
  auto list = [&](int count) {
    std::string s;
    for (int i = 0; i < count; ++i) s += format("%s%%%d", i ? ", " : "", n++);
    return s;
  };
  d = list(in.regs_c);
  a = list(in.regs_a);
  b = list(in.regs_b);
  c = list(in.regs_c);
  for (int i = 0; i < in.regs_a; ++i) ins += format("%s\"r\"(a[%d])", ins.empty() ? "" : ", ", i);
  for (int i = 0; i < in.regs_b; ++i) ins += format(", \"r\"(b[%d])", i);
  // s8: s32 accumulators in integer registers ("r"), f32 ones in "f".
  const bool integer = in.type == MmaType::s8;
  const char* reg = integer ? "r" : "f";
  for (int i = 0; i < in.regs_c; ++i) ins += format(", \"%s\"(d[%d])", reg, i);
  e.comment(format("%s: %dx%dx%d, A row-major, B col-major, %s accumulate (sm_%d+)", in.name, in.m,
                   in.n, in.k, integer ? "s32" : "f32", in.min_sm));
  e.open_scope(
      format("__device__ __forceinline__ void mma_%dx%dx%d(%s (&d)[%d], const unsigned (&a)[%d], "
             "const unsigned (&b)[%d])",
             in.m, in.n, in.k, integer ? "int" : "float", in.regs_c, in.regs_a, in.regs_b));
  // Not volatile: a pure function of registers, free to move between the
  // (volatile) shared loads, so ptxas can overlap fragment loads with math.
  e.line(format("asm(\"%s {%s}, {%s}, {%s}, {%s};\\n\"", in.ptx, d.c_str(), a.c_str(), b.c_str(),
                c.c_str()));
  e.line(format("             : \"=%s\"(d[0]), \"=%s\"(d[1]), \"=%s\"(d[2]), \"=%s\"(d[3])", reg,
                reg, reg, reg));
  e.line(format("             : %s);", ins.c_str()));
  e.close_scope();
  e.line();
}

void emit_mma_in_quarters_helper(Emitter& e, const MmaInstr& step, const MmaInstr& quarter) {
  // Each m8n8k16 reads one (row half, k half) of the step's registers
  // (compiler::s8_m8n8k16_quarter, from PTX's two layouts).
  e.comment(format("%s x4: one %dx%dx%d step, A row-major, B col-major, s32 accumulate (sm_%d+);",
                   quarter.name, step.m, step.n, step.k, quarter.min_sm));
  e.comment("rows g and g + 8 each take k 0-15 and 16-31: the step's sum, exact in any order");
  e.open_scope(
      format("__device__ __forceinline__ void mma_%dx%dx%d(int (&d)[%d], const unsigned (&a)[%d], "
             "const unsigned (&b)[%d])",
             step.m, step.n, step.k, step.regs_c, step.regs_a, step.regs_b));
  for (int h = 0; h < 2; ++h)
    for (int q = 0; q < 2; ++q) {
      const compiler::S8Quarter r = compiler::s8_m8n8k16_quarter(h, q);
      e.line(
          format("asm(\"%s {%%0, %%1}, {%%2}, {%%3}, {%%0, %%1};\\n\" : \"+r\"(d[%d]), "
                 "\"+r\"(d[%d]) : \"r\"(a[%d]), \"r\"(b[%d]));",
                 quarter.ptx, r.d, r.d + 1, r.a, r.b));
    }
  e.close_scope();
  e.line();
}

void emit_tf32_convert_helper(Emitter& e, compiler::Tf32Rounding rounding) {
  if (rounding == compiler::Tf32Rounding::truncate) {
    e.lines(R"(// f32 -> tf32: mma tf32 ... truncate. The bits go to the tensor core as they are;
// it ignores the 13 low mantissa bits, which truncates toward zero.
__device__ __forceinline__ unsigned f32_to_tf32(float x) { return __float_as_uint(x); })");
    e.line();
    return;
  }
  // Two integer min/max-adds instead of cvt.rna.tf32.f32, which ptxas expands
  // to a compare, a predicated add and a mask per element: at one conversion
  // per fragment element per mma that was the tf32 path's bottleneck.
  e.lines(R"(// f32 -> tf32, rounded to nearest with ties away from zero (cvt.rna's rounding):
// add half a tf32 ulp (bit 12) to the bits; the tensor core ignores the 13 low
// mantissa bits. The two max() keep a NaN a NaN where the add would carry out of
// the mantissa: an unsigned wrap (negative NaNs) or a signed overflow (positive).
__device__ __forceinline__ unsigned f32_to_tf32(float x) {
  const unsigned u = __float_as_uint(x);
  return (unsigned)max((int)max(u + 0x1000u, u), (int)u);
})");
  e.line();
}

void emit_smem_offset_fn(Emitter& e, const std::string& name, const compiler::SmemTile& t,
                         const std::string& what) {
  if (!t.swizzled) {
    e.comment(format("(%d, %d) tile of %s, row stride %d elements%s", t.rows, t.cols, what.c_str(),
                     t.row_stride, t.row_stride != t.cols ? " (padded)" : ""));
    e.open_scope(format("__device__ __forceinline__ int %s(int row, int col)", name.c_str()));
    e.line(format("return row * %d + col;", t.row_stride));
    e.close_scope();
    e.line();
    return;
  }
  const int v = t.chunk_elems(), cpr = t.chunks_per_row(), rpl = t.rows_per_line();
  if (t.panel_cols > 0) {
    e.comment(format("(%d, %d) tile of %s as %d column panels of (%d, %d), one TMA box each;",
                     t.rows, t.cols, what.c_str(), t.cols / t.panel_cols, t.rows, t.panel_cols));
    e.comment(
        "inside a panel the 16-byte chunk slot of each 128-byte row is XORed with row % 8 (the");
    e.comment("TMA 128-byte swizzle), so ldmatrix hits all 32 banks");
  } else {
    e.comment(format("(%d, %d) tile of %s, XOR-swizzled: 16-byte chunk slots inside each 128-byte",
                     t.rows, t.cols, what.c_str()));
    e.comment(
        format("line are XORed with %s, so ldmatrix and cp.async hit all 32 banks",
               t.xor_shift ? "(row key << 1) % 8 (4-byte tf32 loads of 4 k-rows)" : "the row key"));
  }
  e.open_scope(format("__device__ __forceinline__ int %s(int row, int col)", name.c_str()));
  if (t.panel_cols > 0) {
    e.line(format("const int panel = col / %d;", t.panel_cols));
    e.line(format("col %%= %d;", t.panel_cols));
  }
  e.line(format("const int chunk = row * %d + col / %d;  // 16-byte chunk, row-major", cpr, v));
  std::string key = rpl > 1 ? format("(row / %d)", rpl) : std::string("row");
  if (t.xor_shift) key = format("(%s << %d)", key.c_str(), t.xor_shift);
  e.line(format("const int swizzled = chunk ^ (%s & 7);", key.c_str()));
  if (t.panel_cols > 0)
    e.line(format("return panel * %d + swizzled * %d + col %% %d;", t.rows * t.panel_cols, v, v));
  else
    e.line(format("return swizzled * %d + col %% %d;", v, v));
  e.close_scope();
  e.line();
}

}  // namespace schedc::codegen
