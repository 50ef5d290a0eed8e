// `stream_k`: the launch-time split (compiler/stream_k.h says what it means).
#include "compiler/stream_k.h"

#include <algorithm>
#include <cstdint>

namespace schedc::compiler {

StreamKSplit split_stream_k(int64_t tiles, int64_t k_tiles, int64_t slots) {
  StreamKSplit whole{tiles, 0};
  if (tiles <= 0 || k_tiles <= 0 || slots <= 0) return whole;
  const int64_t rest = tiles % slots;  // tiles of the partial wave
  if (rest == 0) return whole;
  const int64_t shared = rest * k_tiles;
  if (shared > INT32_MAX) return whole;
  const int64_t units = std::min(slots, shared / kStreamKMinUnitKTiles);
  // A unit runs shared / units k-tiles where a whole tile runs k_tiles: split
  // only when that is at most 15/16 of a tile (it is never more than 1).
  if (units == 0 || 16 * rest > 15 * units) return whole;
  return StreamKSplit{tiles - rest, units};
}

}  // namespace schedc::compiler
