// dump(plan): the KernelPlan as text, one decision per line.
#include <sstream>

#include "compiler/kernel_plan.h"

namespace schedc::compiler {

namespace {

const char* kind_name(KernelKind k) {
  switch (k) {
    case KernelKind::naive: return "naive";
    case KernelKind::tiled: return "tiled";
    case KernelKind::mma: return "mma";
    case KernelKind::wgmma: return "wgmma";
  }
  return "?";
}

void dump_copy(std::ostream& o, const TileCopy& c) {
  o << "  copy " << (c.operand == Operand::A ? "A" : "B") << ": " << c.rows << "x" << c.cols
    << " tile, vec " << c.vec << ", " << c.iters << " loads/thread, vector number i*" << c.threads
    << "+tid -> ";
  const int vr = c.vecs_per_row();
  if (c.run)
    o << "strips of " << c.run << ": line v/" << vr << " -> (line%" << c.rows << ", line/" << c.rows
      << "*" << c.run << "+v%" << vr << "*" << c.vec << ")";
  else
    o << "(v/" << vr << ", v%" << vr << "*" << c.vec << ")";
  o << ", smem store vec " << c.smem_vec;
  if (c.uneven()) o << ", guard v < " << c.vectors();
  o << "\n";
}

void dump_smem(std::ostream& o, const SmemLayout& l) {
  o << "  " << l.name << ": [" << l.buffers << "][" << l.rows << "][" << l.row_len << "+" << l.pad
    << "]" << (l.transposed ? " transposed" : "");
  if (l.swizzle) o << " swizzle chunk^(row&" << l.mask << ") unit " << l.unit;
  o << "\n";
}

}  // namespace

std::string dump(const KernelPlan& p) {
  std::ostringstream o;
  o << "plan " << p.name << (p.fallback ? " (fallback)" : "") << ": " << kind_name(p.kind) << ", "
    << dtype_name(p.dtype) << ", " << p.target.arch_name() << "\n";
  o << "  block: " << p.block_threads << " threads, tile " << p.block_m << "x" << p.block_n << "x"
    << p.block_k << ", smem " << p.smem_bytes << " B, swizzle group " << p.swizzle_group
    << (p.stream_k_tail ? ", stream_k tail"
        : p.stream_k    ? ", stream_k"
                        : "")
    << "\n";
  if (p.kind == KernelKind::naive) {
    o << "  naive block " << p.block_x << "x" << p.block_y << "\n";
    return o.str();
  }
  if (p.kind == KernelKind::wgmma) {
    const WgmmaPlan& w = *p.wgmma;
    o << "  wgmma m" << w.inst_m << "n" << w.inst_n << "k" << w.inst_k << " " << to_string(w.type)
      << ": " << w.consumers() << " consumer warpgroup(s) of " << w.wg_m << "x" << w.wg_n << " ("
      << w.consumers_m << "x" << w.consumers_n << "), " << w.m_insts << "x" << w.n_insts
      << " instructions x " << w.k_steps << " k-steps, " << w.accumulators
      << " f32 accumulators per thread\n";
    o << "  roles: "
      << (w.warp_specialize
              ? "producer warpgroup 0 (setmaxnreg " + std::to_string(w.producer_regs) +
                    "), consumers setmaxnreg " + std::to_string(w.consumer_regs) +
                    (w.pingpong ? ", consumers take whole tiles in turn (pingpong)" : "")
              : std::string("every warpgroup computes; thread 0 issues TMA"))
      << "\n";
    // The tile as the matrix names it: A (BM, BK), B (BK, BN).
    auto operand = [&](const char* n, const WgmmaOperand& x) {
      const bool a = n[0] == 'A';
      o << "  smem " << n << ": (" << (a ? x.mn : x.k) << ", " << (a ? x.k : x.mn) << ") "
        << (x.mn_major ? "MN" : "K") << "-major, " << x.panels() << " panel(s) of "
        << x.panel_bytes() << " B, stage " << x.stage_bytes << " B at " << x.offset_bytes
        << ", LBO " << x.lbo_bytes << ", SBO " << x.sbo_bytes << ", 128-byte swizzle\n";
    };
    operand("A", w.a);
    operand("B", w.b);
    o << "  pipeline: " << w.stages << " stages, mbarriers at " << w.barrier_offset_bytes << "\n";
    return o.str();
  }
  if (p.kind != KernelKind::tiled) return o.str();
  const ThreadMap& m = p.threads;
  o << "  thread tile " << m.tm << "x" << m.tn << " in " << m.pieces_m() << "x" << m.pieces_n()
    << " pieces of " << m.pm << "x" << m.pn << ", piece stride " << m.piece_stride_m() << "x"
    << m.piece_stride_n() << "\n";
  o << "  regions " << m.region_m << "x" << m.region_n << (m.warp_tiled ? " (warp)" : " (block)")
    << ", " << m.regions_n << " along N, lanes " << m.lanes_m << "x" << m.lanes_n << "\n";
  dump_copy(o, p.copy_a);
  dump_copy(o, p.copy_b);
  dump_smem(o, p.smem_a);
  dump_smem(o, p.smem_b);
  o << "  fragments: A vec " << p.frag.vec_a << ", B vec " << p.frag.vec_b << "\n";
  o << "  fma order: " << (p.fma.order == FmaOrder::rows_outer ? "rows" : "columns") << " outer"
    << (p.fma.serpentine ? ", serpentine" : "") << "\n";
  o << "  pipeline: "
    << (p.pipeline == Pipeline::double_buffer ? "double_buffer"
        : p.pipeline == Pipeline::cp_async    ? "cp.async"
                                              : "single")
    << ", " << p.stages << " buffers";
  if (p.copy_late_step > 0)
    o << ", copies issued at step 0 (lower half of the warps) and " << p.copy_late_step
      << " (upper half)";
  o << "\n";
  o << "  epilogue: vec " << p.epilogue.vec << (p.epilogue.bias ? ", bias" : "")
    << (p.epilogue.relu ? ", relu" : "") << "\n";
  return o.str();
}

}  // namespace schedc::compiler
