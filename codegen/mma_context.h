#pragma once
// The mma.sync / WMMA generator (codegen/emit_mma.cpp) in pieces: what every
// piece reads (the plan, its instruction, the module being written) and the
// named blocks, one file per concern:
//   blocks_mma_copies.cpp    global -> shared: checked chunk copies, the tile
//                            loaders, TMA k-tiles, the main entry's
//                            precomputed-address copies
//   blocks_mma_fragments.cpp shared -> registers -> mma: the k-step of the
//                            single-buffered loop (mma.sync, WMMA), the
//                            fragment addresses and double-buffered loads
//   blocks_mma_epilogue.cpp  accumulators -> C: pair/quad stores, the
//                            fragment layouts' epilogues
//   blocks_mma_mainloop.cpp  the k loops (cp.async pipeline, TMA + mbarriers)
//                            and the templated body they make
// emit_mma.cpp assembles the module: header, helpers, bodies, entries.

#include <string>
#include <vector>

#include "codegen/blocks_common.h"
#include "codegen/blocks_mma.h"
#include "codegen/emitter.h"
#include "compiler/kernel_plan.h"

namespace schedc::codegen::mma {

// mma.sync with stages >= 2: per-thread shared byte offsets of every
// fragment load, computed once before the main loop. Offsets that differ from
// an earlier one by the same constant for every thread of the block reuse it
// (`base + constant`, an immediate in the load), so only a handful of
// registers hold addresses.
struct OffsetBases {
  std::string prefix;
  std::vector<std::vector<long>> vals;
  std::vector<std::string> exprs;
  std::string get(const std::vector<long>& v, const std::string& expr) {
    for (size_t j = 0; j < vals.size(); ++j) {
      const long d = v[0] - vals[j][0];
      bool same = true;
      for (size_t t = 0; t < v.size() && same; ++t) same = v[t] - vals[j][t] == d;
      if (same)
        return d ? format("%s%zu + %ldu", prefix.c_str(), j, d)
                 : format("%s%zu", prefix.c_str(), j);
    }
    vals.push_back(v);
    exprs.push_back(expr);
    return format("%s%zu", prefix.c_str(), vals.size() - 1);
  }
};

// The fragment loads' addresses, planned once per module (both pipelined
// bodies use them): base registers and, per k-step, each load's expression.
struct FragmentAddresses {
  OffsetBases a_bases{"a_off", {}, {}}, b_bases{"b_off", {}, {}};
  std::vector<std::vector<std::string>> a_addr;  // [kk][mi]
  std::vector<std::vector<std::string>> b_addr;  // [kk][load]: ldmatrix group or (group, i)
};

// One module being generated.
struct MmaContext {
  const compiler::KernelPlan& p;
  const compiler::MmaPlan& m;
  std::string name;
  std::string T;  // the element type's CUDA name
  bool sync = true, tf32 = false;
  const MmaInstr* instr = nullptr;
  const MmaInstr* quarter = nullptr;  // `mma s8 m8n8k16`: what computes each `instr` step
  Emitter e;
  FragmentAddresses frag;

  MmaContext(const compiler::KernelPlan& plan, std::string entry_name);

  int threads() const { return p.block_threads; }
  int b_frags_per_ldmatrix() const { return m.b_frags_per_ldmatrix; }
  int b_ldmatrix_count() const { return b_frags_per_ldmatrix() * instr->regs_b; }
  // Arguments (rows, cols, row0, col0) of load_tile_A / load_tile_B for the k-tile
  // starting at column `k0` of A (row `k0` of B): the stage's rows and columns
  // (compiler/mma_plan.h), so a column-major operand's rows are K or N.
  std::string a_tile_args(const std::string& k0) const {
    if (conv()) return "M, K, tile_m0, " + k0 + ", conv, walk";  // A: the input (ConvWalk)
    return m.a_col ? "K, M, " + k0 + ", tile_m0" : "M, K, tile_m0, " + k0;
  }
  // A convolution module (`conv`): A is the input, read through the offset
  // table by load_tile_A (codegen/blocks_mma_copies.cpp); every body and
  // entry takes the ConvArgs last.
  bool conv() const { return p.schedule.conv.has_value(); }
  bool nchw32() const { return conv() && p.schedule.conv->layout == compiler::ConvLayout::nchw32; }
  std::string conv_param() const { return conv() ? ", const ConvArgs& conv" : ""; }
  std::string conv_arg() const { return conv() ? ", conv" : ""; }
  std::string b_tile_args(const std::string& k0) const {
    return m.b_col ? "N, K, tile_n0, " + k0 : "K, N, " + k0 + ", tile_n0";
  }
  std::string wmma_type() const {
    if (m.type == compiler::MmaType::tf32) return "wmma::precision::tf32";
    if (m.type == compiler::MmaType::bf16) return "__nv_bfloat16";
    return "half";
  }
  std::string wmma_shape() const { return format("%d, %d, %d", m.inst_m, m.inst_n, m.inst_k); }
  // f16/bf16 fallback entry: the single-buffered fragment loop (its element-wise
  // copies need registers that the double-buffered loop does not leave).
  bool simple_fallback() const { return sync && m.stages >= 2 && !tf32; }
  bool main_uses_tma() const { return sync && m.stages >= 2 && m.tma; }
  const char* fallback_body() const {
    return simple_fallback() ? "gemm_body_simple"
           : main_uses_tma() ? "gemm_body_cp_async"
                             : "gemm_body";
  }
};

// blocks_mma_copies.cpp
void tile_loaders(MmaContext& cx);  // copy_chunk_checked, load_tile_A/B<kAligned>, tma_copy_tile
bool fast_copies(MmaContext& cx);   // the main entry can copy with precomputed addresses
void emit_fast_copy_setup(MmaContext& cx);
void emit_fast_copy(MmaContext& cx, Emitter& e, const std::string& stage, const std::string& kt);

// blocks_mma_fragments.cpp
void emit_lds_helper(MmaContext& cx);    // lds_b: tf32 B fragments from shared memory
void emit_lds_a_helper(MmaContext& cx);  // lds_a: a column-major tf32 A, one f32
void compute_mma_sync(MmaContext& cx, Emitter& e, const std::string& stage);
void compute_wmma(MmaContext& cx, Emitter& e, const std::string& stage);
void plan_fragment_addresses(MmaContext& cx);
void emit_fragment_bases(MmaContext& cx);
void load_fragments(MmaContext& cx, Emitter& e, int buf, const std::string& sa,
                    const std::string& sb, int kk);
void mma_step(MmaContext& cx, Emitter& e, int buf);
void copy_odd_fragments(MmaContext& cx);

// blocks_mma_epilogue.cpp
void epilogue_helpers(MmaContext& cx);  // store_c_pair / store_c_quad
void epilogue_mma_sync(MmaContext& cx);
void epilogue_wmma(MmaContext& cx);

// blocks_mma_mainloop.cpp: gemm_body-like template `fn`, pipelined (double-
// buffered fragments, mma.sync with stages >= 2) or not, with TMA or cp.async.
void body(MmaContext& cx, bool pipelined, const char* fn, bool tma);

}  // namespace schedc::codegen::mma
