#include "codegen/generated_kernel.h"

namespace schedc::codegen {

std::string KernelEntry::aligned_operands() const {
  std::string s;
  for (int i = 0; i < 3; ++i)
    if (aligned[i]) s += std::string(s.empty() ? "" : ", ") + "ABC"[i];
  return s;
}

std::string GeneratedKernel::layout() const {
  return std::string(a_col ? "T" : "N") + (b_col ? "T" : "N") + (c_col ? "T" : "N");
}

std::vector<std::string> GeneratedKernel::entry_names() const {
  std::vector<std::string> names;
  for (const KernelEntry* e : {&main, &fallback}) {
    if (e->name.empty()) continue;
    names.push_back(e->name);
    if (e->stream_k) names.push_back(e->stream_k_tail);
  }
  if (has_repack()) names.push_back(repack);
  if (has_transpose()) names.push_back(transpose);
  return names;
}

KernelEntry KernelEntry::tail_launch() const {
  KernelEntry t = *this;
  t.block = tail_block;
  t.dynamic_smem = tail_dynamic_smem;
  return t;
}

Dim3 KernelEntry::grid(int64_t m, int64_t n) const {
  uint32_t tiles_m = uint32_t((m + tile_m - 1) / tile_m);
  uint32_t tiles_n = uint32_t((n + tile_n - 1) / tile_n);
  if (swizzle_group > 1 || stream_k || persistent) return Dim3{tiles_m * tiles_n, 1, 1};
  if (paired()) tiles_m += tiles_m % 2;  // whole pairs along M
  return Dim3{tiles_n, tiles_m, 1};
}

}  // namespace schedc::codegen
