#pragma once
// Tensor-core instruction table and the building blocks that print them.
// One entry per intrinsic, named like CuTe's atoms
// (SM80_16x8x16_F32F16F16F32_TN: shape, D/A/B/C types, A row- B col-major),
// with its PTX spelling, fragment sizes and minimum architecture.

#include <string>

#include "codegen/emitter.h"
#include "compiler/mma_plan.h"
#include "compiler/schedule.h"

namespace schedc::codegen {

struct MmaInstr {
  const char* name;  // SM80_16x8x16_F32F16F16F32_TN, WMMA_16x16x8_F32TF32
  compiler::MmaApi api;
  compiler::MmaType type;
  int m, n, k;
  const char* ptx;             // mma.sync spelling; for wmma the fragment's element type
  int regs_a, regs_b, regs_c;  // 32-bit registers per lane (mma.sync)
  int min_sm;
};

// The entry for (api, type, m, n, k), or nullptr when there is none.
const MmaInstr* find_mma_instr(compiler::MmaApi api, compiler::MmaType type, int m, int n, int k);
// Every entry, for tests and docs.
const MmaInstr* mma_instr_table(int& count);

// `mma_<name>(float (&d)[4], const unsigned (&a)[..], const unsigned (&b)[..])`:
// d += a * b through inline PTX.
void emit_mma_sync_helper(Emitter& e, const MmaInstr& in);
// `mma s8 m8n8k16`: the helper `step` names (mma_16x8x32, its fragments) computed as four
// `quarter` (m8n8k16) instructions on the step's registers.
void emit_mma_in_quarters_helper(Emitter& e, const MmaInstr& step, const MmaInstr& quarter);
// `f32_to_tf32(float)`: the bits the tensor core reads, rounded to nearest
// (ties away, as cvt.rna) or left to its truncation.
void emit_tf32_convert_helper(Emitter& e, compiler::Tf32Rounding rounding);
// `<name>(row, col)`: element offset of (row, col) in one stage of `t`,
// padded or XOR-swizzled; the same arithmetic as SmemTile::offset.
void emit_smem_offset_fn(Emitter& e, const std::string& name, const compiler::SmemTile& t,
                         const std::string& what);

}  // namespace schedc::codegen
