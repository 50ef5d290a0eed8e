// compiler::lower: the pipeline of lowering passes, one decision per file.
// SCHEDC_DUMP_PLAN=1 prints the plan after each pass to stderr.
#include "compiler/lower.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iostream>

#include "compiler/lower_mma.h"
#include "compiler/lower_passes.h"
#include "compiler/lower_wgmma.h"

namespace schedc::compiler {

namespace {

bool dump_enabled() {
  const char* v = std::getenv("SCHEDC_DUMP_PLAN");
  return v && *v && std::string(v) != "0";
}

KernelPlan log(KernelPlan p, const char* after) {
  if (dump_enabled()) std::cerr << "// ---- plan after " << after << "\n" << dump(p);
  return p;
}

}  // namespace

std::string kernel_name(const std::string& file) {
  std::string stem = file.substr(file.find_last_of('/') + 1);
  stem = stem.substr(0, stem.find('.'));
  std::string name = "schedc_";
  for (char c : stem) name += std::isalnum((unsigned char)c) ? c : '_';
  return stem.empty() ? "schedc_gemm" : name;
}

KernelPlan tiled_plan_header(const Schedule& s, const Target& t, KernelKind kind) {
  KernelPlan p;
  p.schedule = s;
  p.target = t;
  p.dtype = s.dtype;
  p.kind = kind;
  p.name = kernel_name(s.file);
  p.block_m = s.tile->m;
  p.block_n = s.tile->n;
  p.block_k = s.tile->k;
  p.swizzle_group = std::max(1, s.swizzle_block);
  return p;
}

KernelPlan lower(const Schedule& s, const Target& t) {
  if (s.uses_wgmma()) return log(lower_wgmma(s, t), "lower_wgmma");
  if (s.uses_tensor_cores()) return lower_mma(s, t);
  KernelPlan p;
  p.schedule = s;
  p.target = t;
  p = log(lower_tiles(p), "lower_tiles");
  p = log(lower_smem_layout(p), "lower_smem_layout");
  p = log(lower_copies(p), "lower_copies");
  p = log(lower_raster(p), "lower_raster");
  verify(p);
  return p;
}

KernelPlan lower_fallback(const KernelPlan& plan) {
  // Only what alignment forces changes: the copy maps, shared layouts,
  // fragment reads, pipeline and micro-kernel stay those of the main entry;
  // each operand's global loads (and C's stores) check at run time whether
  // their pointer and leading dimension allow vectors, operand by operand.
  KernelPlan p = plan;
  p.fallback = true;
  p.name = plan.name + "_fallback";
  p.copy_a.check_align = p.copy_a.vec > 1;
  p.copy_b.check_align = p.copy_b.vec > 1;
  p.epilogue.check_align = p.epilogue.vec > 1;
  p.epilogue.whole_groups = false;  // any N: the edge group element by element
  // The fallback issues every warp's copies at step 0: staggered, its copy
  // blocks (with their run-time alignment branches) made sgemm_best's
  // fallback 5% slower on 4095x4097x1023 (H100, bench/NOTES.md "Session 5").
  p.copy_late_step = 0;
  verify(p);
  return p;
}

KernelPlan lower_stream_k_tail(const KernelPlan& plan) {
  // A separate entry, not a branch of the main one: with the tail's code in
  // the same function, ptxas scheduled sgemm_best's k loop differently, and
  // whole tiles ran 6-7% slower on an H100 (bench/NOTES.md, session 8).
  if (plan.wgmma) return lower_wgmma_stream_k_tail(plan);
  KernelPlan p = plan;
  p.stream_k_tail = true;
  p.name = stream_k_tail_name(plan.name);
  verify(p);
  return p;
}

}  // namespace schedc::compiler
