#pragma once
// `stream_k`: which k-tiles of which C tiles each block of a launch computes.
//
// A grid of one block per C tile runs in waves of `slots` blocks (SMs x
// blocks per SM). When the tiles do not fill whole waves, the last wave
// leaves slots idle: 512 tiles of 256x128 on an H100's 132 slots are 3.88
// waves, run as 4. With stream_k the tiles of the whole waves are computed
// one block per tile as usual, and the k-tiles of the remaining tiles (the
// partial wave) are numbered tile by tile and cut into `units` equal ranges,
// one block each, so that every slot is busy in the last wave. It pays when
// the last wave is a small part of the slots: 32 tiles of 256x128 at 1024^3
// on 132 slots run as 132 units of 15.5 k-tiles instead of 32 blocks of 64.
//
// A tile whose k-tiles fall to several units is finished by the last of them
// to arrive: each publishes its partial sums in a workspace slot and counts
// itself in the tile's counter; the one that completes the count adds the
// partial sums up in unit order (so the result does not depend on the order
// of arrival), resets the counter for the next launch and runs the epilogue.
// Nobody waits for anybody, so no block depends on another being resident.
//
// The split depends on the device (its SM count and the kernel's occupancy),
// so the runtime chooses it at launch; the kernel evaluates the formulas
// below, printed by codegen/blocks_stream_k.cpp, and the unit tests walk them.

#include <cstdint>

namespace schedc::compiler {

struct StreamKSplit {
  int64_t whole_tiles = 0;  // blocks [0, whole_tiles): tile blockIdx.x, all its k-tiles
  int64_t units = 0;        // blocks [whole_tiles, grid()): the other tiles' k-tiles, shared
  int64_t grid() const { return whole_tiles + units; }
  bool splits() const { return units > 0; }
};

// Fewest k-tiles a unit gets: below this, the partial sums' round trip
// through L2 and the pipeline's fill cost more than the idle slots.
inline constexpr int64_t kStreamKMinUnitKTiles = 4;

// The split for `tiles` C tiles of `k_tiles` k-tiles each on `slots`
// concurrent blocks. No split (every tile whole, units 0) when the tiles fill
// whole waves, when a unit would get more than half a tile's k-tiles (units
// ran them at 45-70% of a whole tile's speed: bench/NOTES.md, session 8),
// when units would get fewer than kStreamKMinUnitKTiles k-tiles, or when the
// shared k-tiles do not fit the kernel's 32-bit numbering. So on an H100's
// 132 slots 256x128 tiles split at 1024^3 (32 tiles, 132 units), not at
// 4096^3 (512 tiles: 116 in the last wave) nor 8192^3 (2048: 68).
StreamKSplit split_stream_k(int64_t tiles, int64_t k_tiles, int64_t slots);

// Unit u computes k-tiles [stream_k_begin(u), stream_k_begin(u + 1)) of the
// `total` shared k-tiles (numbered tile by tile, tile whole_tiles first).
// The fix-up needs every unit to get at least one k-tile (units <= total):
// it counts on one arrival from each unit between a tile's first and last.
// split_stream_k gives each at least kStreamKMinUnitKTiles.
inline int64_t stream_k_begin(int64_t u, int64_t total, int64_t units) {
  return u * total / units;
}
// The unit whose range holds shared k-tile `it` (0 <= it < total).
inline int64_t stream_k_unit_of(int64_t it, int64_t total, int64_t units) {
  return ((it + 1) * units - 1) / total;
}
// The workspace slot in which unit u publishes its partial sums of the tile
// whose first shared k-tile is `tile_begin`: 2u when the unit starts inside
// that tile (the tile holds the unit's first k-tile), else 2u + 1 (the unit
// started in an earlier tile, so this is its last one). A unit shares at most
// those two tiles; the tiles between them it computes whole.
inline int64_t stream_k_slot(int64_t u, int64_t tile_begin, int64_t total, int64_t units) {
  return 2 * u + (stream_k_begin(u, total, units) < tile_begin ? 1 : 0);
}

}  // namespace schedc::compiler
