#include "codegen/generated_kernel.h"

namespace schedc::codegen {

std::string KernelEntry::aligned_operands() const {
  std::string s;
  for (int i = 0; i < 3; ++i)
    if (aligned[i]) s += std::string(s.empty() ? "" : ", ") + "ABC"[i];
  return s;
}

Dim3 KernelEntry::grid(int64_t m, int64_t n) const {
  uint32_t tiles_m = uint32_t((m + tile_m - 1) / tile_m);
  uint32_t tiles_n = uint32_t((n + tile_n - 1) / tile_n);
  if (swizzle_group > 1 || stream_k || persistent) return Dim3{tiles_m * tiles_n, 1, 1};
  return Dim3{tiles_n, tiles_m, 1};
}

}  // namespace schedc::codegen
