#include "compiler/bank_conflicts.h"

#include <algorithm>
#include <set>

#include "dsl/diagnostics.h"

namespace schedc::compiler {

namespace {
constexpr int kBanks = 32;
constexpr int kWordBytes = 4;
}  // namespace

BankCost bank_cost(const WarpRequest& request) {
  int width = std::max(request.width_bytes, kWordBytes);
  SCHEDC_INTERNAL_ASSERT(width == 4 || width == 8 || width == 16,
                         "shared access width must be 1, 2, 4, 8 or 16 bytes");
  const int threads_per_phase = 32 * kWordBytes / width;  // 32, 16 or 8
  const int words_per_thread = width / kWordBytes;
  BankCost cost;
  for (int phase = 0; phase < 32 / threads_per_phase; ++phase) {
    std::array<std::set<int64_t>, kBanks> words_in_bank;
    bool active = false;
    for (int t = phase * threads_per_phase; t < (phase + 1) * threads_per_phase; ++t) {
      int64_t addr = request.byte_addr[size_t(t)];
      if (addr < 0) continue;
      active = true;
      for (int w = 0; w < words_per_thread; ++w) {
        int64_t word = addr / kWordBytes + w;
        words_in_bank[size_t(word % kBanks)].insert(word);
      }
    }
    if (!active) continue;
    size_t worst = 0;
    for (const auto& words : words_in_bank) worst = std::max(worst, words.size());
    cost.wavefronts += int(worst);
    cost.ideal_wavefronts += 1;
  }
  return cost;
}

BankCost total_bank_cost(const std::vector<WarpRequest>& requests) {
  BankCost total;
  for (const WarpRequest& r : requests) {
    BankCost c = bank_cost(r);
    total.wavefronts += c.wavefronts;
    total.ideal_wavefronts += c.ideal_wavefronts;
  }
  return total;
}

}  // namespace schedc::compiler
