// `stream_k`: the launch-time split (compiler/stream_k.h says what it means).
#include "compiler/stream_k.h"

#include <algorithm>
#include <cstdint>

namespace schedc::compiler {

StreamKSplit split_stream_k(int64_t tiles, int64_t k_tiles, int64_t slots) {
  StreamKSplit whole{std::max<int64_t>(tiles, 0), 0};
  if (tiles <= 0 || k_tiles <= 0 || slots <= 0) return whole;
  const int64_t rest = tiles % slots;  // tiles of the partial wave
  if (rest == 0) return whole;
  const int64_t shared = rest * k_tiles;
  if (shared > INT32_MAX) return whole;
  const int64_t units = std::min(slots, shared / kStreamKMinUnitKTiles);
  // A unit's k-tiles ran at 45-70% of the speed of a whole tile's on an H100
  // (they read A and B at other k than the blocks beside them, so they miss
  // in L2): split only when a unit gets at most half a tile's k-tiles.
  if (2 * rest > units) return whole;
  return StreamKSplit{tiles - rest, units};
}

}  // namespace schedc::compiler
