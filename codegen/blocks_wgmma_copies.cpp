// The Hopper kernel's copy blocks (codegen/blocks_wgmma.h): the TMA loads of
// one k-tile into a stage, each operand's boxes as it lies in memory
// (compiler/wgmma_plan.h, WgmmaOperand), and the repack kernel that copies an
// operand TMA cannot read into aligned scratch.
#include <string>

#include "codegen/blocks_common.h"
#include "codegen/blocks_wgmma.h"

namespace schedc::codegen {

using compiler::KernelPlan;
using compiler::WgmmaPlan;

std::string wgmma_boxes_text(const compiler::WgmmaOperand& o) {
  return o.mn_major || o.panels() > 1
             ? format("%d (%d, %d) boxes", o.panels(), o.box_rows(), o.box_cols())
             : format("one (%d, %d) box", o.box_rows(), o.box_cols());
}

void emit_wgmma_operand_loads(Emitter& e, const compiler::WgmmaOperand& o, char op, WgmmaHalf half,
                              bool batched, const std::string& mask) {
  const std::string dst = format("s%c", op), map = format("tma_%c", op);
  const std::string mn0 = op == 'a' ? "tile_m0" : "tile_n0";
  const char* z = batched ? ", z" : "";  // the GEMM of a batch
  if (half == WgmmaHalf::whole && !o.mn_major && o.panels() == 1) {
    e.line(
        format("tma_load_2d(%s, %s, full, k0, %s%s);", dst.c_str(), map.c_str(), mn0.c_str(), z));
  } else if (half == WgmmaHalf::whole && !o.mn_major) {  // panels of k side by side
    e.line("#pragma unroll");
    e.line(format(
        "for (int p = 0; p < %d; ++p) tma_load_2d(%s + p * %du, %s, full, k0 + p * %d, %s%s);",
        o.panels(), dst.c_str(), o.panel_bytes(), map.c_str(), o.panel_cols, mn0.c_str(), z));
  } else if (half == WgmmaHalf::whole) {
    e.line("#pragma unroll");
    e.line(format(
        "for (int p = 0; p < %d; ++p) tma_load_2d(%s + p * %du, %s, full, %s + p * %d, "
        "k0%s);",
        o.panels(), dst.c_str(), o.panel_bytes(), map.c_str(), mn0.c_str(), o.panel_cols, z));
  } else if (!o.mn_major && o.panels() == 1) {  // rows crank * MN/2 ...: whole swizzle atoms
    e.line(format("tma_load_2d_multicast(%s + crank * %du, %s, full, k0, %s + crank * %d, %s%s);",
                  dst.c_str(), o.mn_bytes(o.mn / 2), map.c_str(), mn0.c_str(), o.mn / 2,
                  mask.c_str(), z));
  } else if (!o.mn_major) {  // the same rows of each panel of k
    e.line("#pragma unroll");
    e.line(
        format("for (int p = 0; p < %d; ++p) tma_load_2d_multicast(%s + p * %du + crank * %du, %s, "
               "full, k0 + p * %d, %s + crank * %d, %s%s);",
               o.panels(), dst.c_str(), o.panel_bytes(), o.mn_bytes(o.mn / 2), map.c_str(),
               o.panel_cols, mn0.c_str(), o.mn / 2, mask.c_str(), z));
  } else {  // panels crank * P/2 ...
    e.line("#pragma unroll");
    e.open_scope(format("for (int p = 0; p < %d; ++p)", o.panels() / 2));
    e.line(format("const int q = crank * %d + p;", o.panels() / 2));
    e.line(format("tma_load_2d_multicast(%s + q * %du, %s, full, %s + q * %d, k0, %s%s);",
                  dst.c_str(), o.panel_bytes(), map.c_str(), mn0.c_str(), o.panel_cols,
                  mask.c_str(), z));
    e.close_scope();
  }
}

void emit_wgmma_tma_copy(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  const bool batched = p.schedule.batch > 0;
  if (w.cluster_size() > 1) return emit_wgmma_cluster_tma_copy(e, p);
  e.comment(format("tma %s: k-tile at column k0 -> one stage: A as %s, B as %s",
                   origin_note(p.schedule, p.schedule.tma_at).c_str(),
                   wgmma_boxes_text(w.a).c_str(), wgmma_boxes_text(w.b).c_str()));
  e.comment(format("(128-byte %s); `full` completes when all their bytes have landed",
                   w.a.mn_major || w.b.mn_major ? "column panels"
                   : w.a.panels() > 1           ? "panels of k"
                                                : "rows"));
  e.open_scope(
      std::string("__device__ __forceinline__ void tma_copy_tile(const TmaMap& tma_a, const "
                  "TmaMap& tma_b, unsigned sa, unsigned sb, unsigned full, int k0, int tile_m0, "
                  "int tile_n0") +
      (batched ? ", int z)" : ")"));
  e.line(format("mbar_expect_tx(full, %du);  // %d + %d bytes", w.a.stage_bytes + w.b.stage_bytes,
                w.a.stage_bytes, w.b.stage_bytes));
  emit_wgmma_operand_loads(e, w.a, 'a', WgmmaHalf::whole, batched);
  emit_wgmma_operand_loads(e, w.b, 'b', WgmmaHalf::whole, batched);
  e.close_scope();
  e.line();
}

void emit_wgmma_repack_kernel(Emitter& e, const KernelPlan& p, const std::string& name) {
  const int per16 = 16 / p.wgmma->elem_bytes;
  e.comment("Repack: an operand whose pointer or leading dimension TMA cannot take (TMA needs");
  e.comment("16-byte aligned rows) copied into aligned scratch before the main entry runs.");
  e.comment(
      format("One thread per %d-element (16-byte) chunk of dst; padding columns are zero.", per16));
  e.line("extern \"C\" __global__ void __launch_bounds__(256)");
  e.open_scope(name +
               "(const T* __restrict__ src, int rows, int cols, int ld, T* __restrict__ dst, "
               "int dst_ld)");
  e.line(format("const int chunks = dst_ld / %d;", per16));
  e.line("const long long idx = (long long)blockIdx.x * 256 + threadIdx.x;");
  e.line("if (idx >= (long long)rows * chunks) return;");
  e.line(format("const int row = int(idx / chunks), c0 = int(idx %% chunks) * %d;", per16));
  if (per16 == 4) {  // f32: four words a chunk
    e.line("const unsigned* s = reinterpret_cast<const unsigned*>(src) + (size_t)row * ld;");
    e.line("unsigned v[4];");
    e.line("#pragma unroll");
    e.line("for (int i = 0; i < 4; ++i) v[i] = c0 + i < cols ? s[c0 + i] : 0u;");
    e.line(
        "*reinterpret_cast<uint4*>(reinterpret_cast<unsigned*>(dst) + (size_t)row * dst_ld + c0) "
        "= make_uint4(v[0], v[1], v[2], v[3]);");
    e.close_scope(name);
    return;
  }
  if (per16 == 16) {  // s8: sixteen bytes a chunk, four to a word
    e.line(
        "const unsigned char* s = reinterpret_cast<const unsigned char*>(src) + (size_t)row * ld;");
    e.line("unsigned v[4] = {0u, 0u, 0u, 0u};");
    e.line("#pragma unroll");
    e.line(
        "for (int i = 0; i < 16; ++i) if (c0 + i < cols) v[i / 4] |= (unsigned)s[c0 + i] << (8 * "
        "(i % 4));");
    e.line(
        "*reinterpret_cast<uint4*>(reinterpret_cast<unsigned char*>(dst) + (size_t)row * dst_ld + "
        "c0) = make_uint4(v[0], v[1], v[2], v[3]);");
    e.close_scope(name);
    return;
  }
  e.line(
      "const unsigned short* s = reinterpret_cast<const unsigned short*>(src) + (size_t)row * ld;");
  e.line("unsigned short v[8];");
  e.line("#pragma unroll");
  e.line("for (int i = 0; i < 8; ++i) v[i] = c0 + i < cols ? s[c0 + i] : (unsigned short)0;");
  e.line(
      "*reinterpret_cast<uint4*>(reinterpret_cast<unsigned short*>(dst) + (size_t)row * dst_ld + "
      "c0) =");
  e.line(
      "    make_uint4(v[0] | (unsigned)v[1] << 16, v[2] | (unsigned)v[3] << 16, v[4] | "
      "(unsigned)v[5] << 16, v[6] | (unsigned)v[7] << 16);");
  e.close_scope(name);
}

void emit_wgmma_transpose_kernel(Emitter& e, const KernelPlan& p, const std::string& name) {
  if (p.wgmma->type == compiler::MmaType::s8) {
    e.comment("Transpose: an operand wgmma s8 cannot read where it lies (it reads k-major");
    e.comment("stages only) into scratch before the main entry runs: a column-major A (K rows");
    e.comment("of M) into M rows of K, a row-major B (K rows of N) into N rows of K; rows");
    e.comment("dst_ld >= K apart, the padding zero.");
  } else {
    e.comment("Transpose: a column-major A (K rows of M in memory) into row-major scratch (M rows");
    e.comment("of dst_ld >= K, the padding zero) before the main entry runs, which reads A");
    e.comment("row-major (tf32 reads only k-major stages, and B row-major is not either).");
  }
  emit_transpose_kernel(e, name);
}

}  // namespace schedc::codegen
