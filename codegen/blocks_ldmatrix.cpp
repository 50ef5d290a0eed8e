#include "codegen/blocks_ldmatrix.h"

#include <string>

namespace schedc::codegen {

void emit_ldmatrix_helper(Emitter& e, int count, bool trans) {
  std::string regs, outs;
  for (int i = 0; i < count; ++i) {
    regs += format("%s%%%d", i ? ", " : "", i);
    outs += format("%s\"=r\"(r[%d])", i ? ", " : "", i);
  }
  e.open_scope(format(
      "__device__ __forceinline__ void ldmatrix_x%d%s(unsigned (&r)[%d], unsigned smem_addr)",
      count, trans ? "_trans" : "", count));
  e.line(format("asm volatile(\"ldmatrix.sync.aligned.m8n8.x%d%s.shared.b16 {%s}, [%%%d];\\n\"",
                count, trans ? ".trans" : "", regs.c_str(), count));
  e.line(format("             : %s", outs.c_str()));
  e.line("             : \"r\"(smem_addr));");
  e.close_scope();
}

}  // namespace schedc::codegen
