// `stream_k`: the launch-time split (compiler/stream_k.h says what it means).
#include "compiler/stream_k.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace schedc::compiler {

namespace {

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

}  // namespace

int64_t stream_k_slice_cost(int block_k, double speedup) {
  const double c = double(kStreamKSliceCostKTiles) * 16.0 / double(block_k) * speedup;
  return std::max<int64_t>(1, std::llround(c));
}

StreamKSplit split_stream_k(int64_t tiles, int64_t k_tiles, int64_t slots, int64_t max_slices,
                            int64_t slice_cost, int64_t sum_cost) {
  const StreamKSplit whole{std::max<int64_t>(tiles, 0), 0, 0, 0};
  if (tiles <= 0 || k_tiles <= 0 || slots <= 0) return whole;
  const int64_t rest = tiles % slots;  // tiles of the partial wave
  if (rest == 0) return whole;
  const int64_t free_slots = slots - rest;  // what the leads leave to the trails
  const int64_t c = std::max<int64_t>(1, slice_cost);
  StreamKSplit best = whole;
  int64_t best_cost = k_tiles;  // the last wave's whole tiles
  // More slices a tile than slots cannot help: one tile's slices would
  // already fill every slot.
  const int64_t most = max_slices > 0 ? std::min(max_slices, slots) : slots;
  for (int64_t p = 2; p <= most; ++p) {
    const int64_t trails = rest * (p - 1);
    if (rest * p > INT32_MAX) break;  // the tail's grid and block numbers are 32-bit
    const int64_t rounds = ceil_div(trails, free_slots);
    // lead + c = rounds * ((k_tiles - lead) / (p - 1) + c), solved for lead.
    const int64_t lead = ceil_div(rounds * k_tiles + (rounds - 1) * (p - 1) * c, p - 1 + rounds);
    // More slices only shorten them: stop at the first that is too short.
    if (lead < kStreamKMinSliceKTiles || (k_tiles - lead) / (p - 1) < kStreamKMinSliceKTiles) break;
    const int64_t trail = ceil_div(k_tiles - lead, p - 1);
    const int64_t cost = std::max(lead + c, rounds * (trail + c)) + (p - 1) * sum_cost;
    if (cost < best_cost) {
      best_cost = cost;
      best = StreamKSplit{tiles - rest, rest, p, lead};
    }
  }
  return best;
}

}  // namespace schedc::compiler
