#include "compiler/target.h"

namespace schedc::compiler {

bool target_for_arch(const std::string& arch, Target& out) {
  Target t;
  if (arch == "sm_90" || arch == "sm_90a") {
    t.sm = 90;  // H100 / H200
  } else if (arch == "sm_80") {
    t.sm = 80;  // A100: 164 KB per SM, 163 KB per block after opt-in
    t.smem_per_block_optin = 163 * 1024;
    t.smem_per_sm = 164 * 1024;
    t.num_sms = 108;
    t.fp32_tflops = 19.5, t.tf32_tflops = 156, t.f16_tflops = 312, t.s8_tops = 624;
    t.dram_tbps = 2.04, t.clock_ghz = 1.41;
  } else if (arch == "sm_86" || arch == "sm_89") {
    t.sm = arch == "sm_86" ? 86 : 89;
    t.max_threads_per_sm = 1536;
    t.max_blocks_per_sm = arch == "sm_86" ? 16 : 24;
    t.smem_per_block_optin = 99 * 1024;
    t.smem_per_sm = 100 * 1024;
    t.num_sms = arch == "sm_86" ? 84 : 128;
    // RTX 3090 / RTX 4090 class.
    t.fp32_tflops = arch == "sm_86" ? 35.6 : 82.6;
    t.tf32_tflops = arch == "sm_86" ? 35.6 : 82.6;
    t.f16_tflops = arch == "sm_86" ? 71 : 165;
    t.s8_tops = arch == "sm_86" ? 284 : 660.6;
    t.dram_tbps = arch == "sm_86" ? 0.94 : 1.01;
    t.clock_ghz = arch == "sm_86" ? 1.70 : 2.52;
  } else {
    return false;
  }
  out = t;
  return true;
}

}  // namespace schedc::compiler
