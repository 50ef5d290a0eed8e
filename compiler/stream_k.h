#pragma once
// `stream_k`: which k-tiles of which C tiles each block of a launch computes.
//
// A grid of one block per C tile runs in waves of `slots` blocks (SMs x
// blocks per SM). When the tiles do not fill whole waves, the last wave
// leaves slots idle: 512 tiles of 256x128 on an H100's 132 slots are 3.88
// waves, run as 4, and the 32 tiles of 1024^3 leave 100 of the 132 idle.
// With stream_k the tiles of the whole waves are computed one block per tile
// as usual (the main entry), and each remaining tile (a "shared" tile) is cut
// along k into `slices` slices, one block each (the tail entry): slice 0, the
// lead, is the first lead_k_tiles k-tiles, and slices 1 .. slices-1 share the
// rest equally. The tail's blocks are numbered slice by slice: all leads
// first, so the longest slices start first and the hardware's block
// scheduler hands the short ones to whichever slot frees up, and blocks that
// run side by side read A and B at the same k, which keeps them in L2.
//
// 1024^3 in 256x128 tiles on 132 slots: 32 tiles of 64 k-tiles become 128
// slices of 16, all at once. 4096^3: the last 116 tiles get leads of 230
// k-tiles, and their 116 trails of 26 run eight deep on the 16 free slots.
//
// A tile's slices are finished by the last of them to arrive: each publishes
// its partial sums in its own workspace slot (the block's number) and counts
// itself in the tile's counter; the one that completes the count adds the
// parts up in slice order (so the result does not depend on the order of
// arrival), resets the counter for the next launch and runs the epilogue.
// Nobody waits for anybody, so no block depends on another being resident.
//
// Each block runs one slice, straight-line like the main entry: an earlier
// tail ran a loop over segments through a noinline function, and its k loop,
// the same instructions, ran 27% slower per k-tile on an H100 (ncu at 4096^3:
// 6.8K cycles a k-tile against the main entry's 5.35K; bench/NOTES.md,
// session 9).
//
// The split depends on the device (its SM count and the kernel's occupancy),
// so the runtime chooses it at launch; the kernel evaluates the formula
// below, printed by codegen/blocks_stream_k.cpp, and the unit tests walk it.

#include <cstdint>

namespace schedc::compiler {

struct StreamKSplit {
  int64_t whole_tiles = 0;   // main entry: blocks [0, whole_tiles), tile blockIdx.x whole
  int64_t shared_tiles = 0;  // tail entry: the tiles after those, cut along k
  int64_t slices = 0;        // per shared tile (0: no split)
  int64_t lead_k_tiles = 0;  // slice 0's k-tiles; the other slices share the rest equally
  // The tail's blocks: slice blockIdx.x / shared_tiles of shared tile blockIdx.x % shared_tiles.
  int64_t units() const { return shared_tiles * slices; }
  bool splits() const { return slices > 0; }
};

// Fewest k-tiles in a slice: below this, the partial sums' round trip through
// L2 and the pipeline's fill cost more than the idle slots.
inline constexpr int64_t kStreamKMinSliceKTiles = 4;

// What a slice costs beyond its k-tiles, in k-tiles, in the policy's model:
// the pipeline's fill and the partial sums' round trip. For the SIMT kernels
// (BK 16 at sgemm_best's rate): an estimate that the measurements of session
// 9 bore out (bench/NOTES.md).
inline constexpr int64_t kStreamKSliceCostKTiles = 2;

// The same for a kernel whose k-tile is `block_k` deep and whose multiply
// unit peaks `speedup` times higher than the FFMA pipes (tensor cores: 7.4x
// for tf32, 14.8x for f16 on an H100): the partial sums' round trip moves
// the same BM x BN floats, while a k-tile takes block_k / 16 / speedup of the
// SIMT one's time. Rounded, at least 1. wgmma f16 (BK 64): 7; tf32 (BK 32): 7.
int64_t stream_k_slice_cost(int block_k, double speedup);

// The split for `tiles` C tiles of `k_tiles` k-tiles each on `slots`
// concurrent blocks, with at most `max_slices` slices a tile (0: no limit
// but `slots`: more slices a tile than slots cannot shorten the wave).
// The model: the last wave's whole tiles take k_tiles; a split takes the
// longer of a lead (lead + cost) and the trails, which run `rounds` deep on
// the slots the leads leave free (rounds x (trail slice + cost)). For each
// slice count the lead is chosen so that the two are even, and the cheapest
// split is taken if it beats k_tiles. No split when the tiles fill whole
// waves or every slice count leaves slices under kStreamKMinSliceKTiles.
//
// `sum_cost`: what the last slice to arrive pays per other slice for reading
// its partial sums, in k-tiles, added once per split (the sum is one block's
// work, so it grows with the slices). 0 for the SIMT kernels (their measured
// splits of session 9 were chosen without it); for the tensor cores, half
// the slice cost: on an H100, wgmma f16 at 5120x5120x4096 (8 tiles past six
// whole waves) cut in 16 slices without it and gained nothing.
StreamKSplit split_stream_k(int64_t tiles, int64_t k_tiles, int64_t slots, int64_t max_slices = 0,
                            int64_t slice_cost = kStreamKSliceCostKTiles, int64_t sum_cost = 0);

// Slice `slice`'s first k-tile (slice == slices: k_tiles, the end).
inline int64_t stream_k_slice_begin(int64_t slice, int64_t k_tiles, int64_t lead_k_tiles,
                                    int64_t slices) {
  if (slice == 0) return 0;
  return lead_k_tiles + (slice - 1) * (k_tiles - lead_k_tiles) / (slices - 1);
}

}  // namespace schedc::compiler
