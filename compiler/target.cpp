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
  } else if (arch == "sm_86" || arch == "sm_89") {
    t.sm = arch == "sm_86" ? 86 : 89;
    t.max_threads_per_sm = 1536;
    t.max_blocks_per_sm = arch == "sm_86" ? 16 : 24;
    t.smem_per_block_optin = 99 * 1024;
    t.smem_per_sm = 100 * 1024;
    t.num_sms = arch == "sm_86" ? 84 : 128;
  } else {
    return false;
  }
  out = t;
  return true;
}

}  // namespace schedc::compiler
