// `stream_k` (compiler/stream_k.h): the launch-time split policy on
// hand-worked cases, and a walk of the k-tile formula exactly as the
// generated kernels evaluate it (codegen/blocks_stream_k.cpp): the main
// entry's whole tiles, the tail's blocks and their slices, the workspace
// slots and the arrival counters of the shared tiles. Then what the module
// holds: a main entry and a tail per entry, named as the runtime looks them up.
#include "compiler/stream_k.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <sstream>
#include <vector>

#include "cli/pipeline.h"
#include "compiler/lower.h"
#include "compiler/wgmma_plan.h"

using namespace schedc;
using compiler::split_stream_k;
using compiler::stream_k_slice_begin;
using compiler::StreamKSplit;

namespace {

struct PolicyCase {
  const char* what;
  int64_t tiles, k_tiles, slots, max_slices;
  StreamKSplit expected;  // worked out by hand from split_stream_k's model
};

// What the walk saw, for assertions on the policy's own guarantees.
struct WalkStats {
  int64_t min_slice = INT64_MAX;  // fewest k-tiles in a slice
  int64_t max_trail = 0;          // most k-tiles in a slice past the lead
  int64_t tiles_split = 0;
};

// Runs `split` over `tiles` C tiles of `k_tiles` k-tiles as the kernels do,
// and checks what the fix-up relies on. Returns false at the first failure
// (already reported) so that a sweep stops early.
bool walk(int64_t tiles, int64_t k_tiles, const StreamKSplit& split, WalkStats& stats,
          uint32_t seed) {
  const int64_t whole = split.whole_tiles, shared = split.shared_tiles, slices = split.slices;
  if (whole + shared != tiles || (split.splits() && slices < 2)) {
    ADD_FAILURE() << "split of " << whole << " whole and " << shared << " shared tiles in "
                  << slices << " slices for " << tiles << " tiles";
    return false;
  }
  std::vector<int> computed(size_t(tiles * k_tiles), 0);  // (tile, k-tile) -> times
  // Main entry: block b computes tile b, all its k-tiles.
  for (int64_t b = 0; b < whole; ++b)
    for (int64_t k = 0; k < k_tiles; ++k) ++computed[size_t(b * k_tiles + k)];

  // Tail entry: emit_stream_k_slice, block by block. Each block publishes
  // its partial sums in slot blockIdx.x and counts itself in its tile's counter.
  std::vector<int64_t> slot_tile(size_t(split.units()), -1), slot_first(slot_tile),
      slot_last(slot_tile);
  for (int64_t b = 0; b < split.units(); ++b) {
    const int64_t slice = b / shared, shared_tile = b % shared, tile = whole + shared_tile;
    const int64_t k_first = stream_k_slice_begin(slice, k_tiles, split.lead_k_tiles, slices);
    const int64_t k_last = stream_k_slice_begin(slice + 1, k_tiles, split.lead_k_tiles, slices);
    if (k_first < 0 || k_last <= k_first || k_last > k_tiles) {
      ADD_FAILURE() << "block " << b << ": slice " << slice << " is k-tiles [" << k_first << ", "
                    << k_last << ") of " << k_tiles;
      return false;
    }
    for (int64_t k = k_first; k < k_last; ++k) ++computed[size_t(tile * k_tiles + k)];
    slot_tile[size_t(b)] = tile, slot_first[size_t(b)] = k_first, slot_last[size_t(b)] = k_last;
    stats.min_slice = std::min(stats.min_slice, k_last - k_first);
    if (slice > 0) stats.max_trail = std::max(stats.max_trail, k_last - k_first);
  }

  // Every (tile, k-tile) exactly once.
  for (int64_t t = 0; t < tiles; ++t)
    for (int64_t k = 0; k < k_tiles; ++k)
      if (computed[size_t(t * k_tiles + k)] != 1) {
        ADD_FAILURE() << "tile " << t << " k-tile " << k << " computed "
                      << computed[size_t(t * k_tiles + k)] << " times";
        return false;
      }

  // Each shared tile: its slices arrive in any order; exactly the last one
  // writes C, after every part arrived; the parts it adds up (slots
  // q * shared_tiles + shared_tile, q in slice order) are this tile's and
  // hold each k-tile once; the counter is zero again afterwards.
  std::mt19937 rng(seed);
  for (int64_t j = 0; j < shared; ++j) {
    ++stats.tiles_split;
    std::vector<int64_t> arrivals;  // blocks of tile j
    for (int64_t q = 0; q < slices; ++q) arrivals.push_back(q * shared + j);
    for (int order = 0; order < 3; ++order) {
      if (order == 1) std::reverse(arrivals.begin(), arrivals.end());
      if (order == 2) std::shuffle(arrivals.begin(), arrivals.end(), rng);
      int counter = 0, writers = 0;
      for (size_t a = 0; a < arrivals.size(); ++a) {
        const int sk_arrival = counter++;        // atomicAdd
        if (sk_arrival != slices - 1) continue;  // write_c
        ++writers;
        if (a + 1 != arrivals.size()) {
          ADD_FAILURE() << "tile " << whole + j << ": a slice writes C before every part arrived";
          return false;
        }
        std::vector<int> covered(size_t(k_tiles), 0);
        for (int64_t q = 0; q < slices; ++q) {  // the sum, in slice order
          const size_t slot = size_t(q * shared + j);
          if (slot_tile[slot] != whole + j) {
            ADD_FAILURE() << "tile " << whole + j << ": slot " << slot << " holds tile "
                          << slot_tile[slot];
            return false;
          }
          for (int64_t k = slot_first[slot]; k < slot_last[slot]; ++k) ++covered[size_t(k)];
        }
        for (int64_t k = 0; k < k_tiles; ++k)
          if (covered[size_t(k)] != 1) {
            ADD_FAILURE() << "tile " << whole + j << ": the sum holds k-tile " << k << " "
                          << covered[size_t(k)] << " times";
            return false;
          }
        counter = 0;  // sk_counters[shared_tile] = 0
      }
      if (writers != 1 || counter != 0) {
        ADD_FAILURE() << "tile " << whole + j << ": " << writers << " writers, counter left at "
                      << counter;
        return false;
      }
    }
  }
  return true;
}

}  // namespace

TEST(StreamKSplit, HandWorkedCases) {
  // rest = tiles % slots, free = slots - rest. For p = 2, 3, ... slices:
  // rounds = ceil(rest (p - 1) / free), lead = ceil((rounds k_tiles +
  // (rounds - 1)(p - 1) 2) / (p - 1 + rounds)), stop when lead or
  // (k_tiles - lead) / (p - 1) is under 4, cost = max(lead + 2, rounds
  // (ceil((k_tiles - lead) / (p - 1)) + 2)); the cheapest p if its cost is
  // under k_tiles (the first of equal costs).
  const PolicyCase cases[] = {
      // 4096^3 in 256x128x16 tiles: 512 tiles of 256 k-tiles; rest 116, free 16.
      // p 2: rounds 8, lead ceil(2062 / 9) = 230, trail 26, cost max(232, 224) = 232.
      // p 3: rounds 15, lead ceil(3896 / 17) = 230, trail 13, cost max(232, 225): not cheaper.
      // p 4: rounds 22, lead 231, trail 9, cost 242; more slices cost more.
      {"4096^3", 512, 256, 132, 0, {396, 116, 2, 230}},
      // 8192^3: 2048 tiles of 512; rest 68, free 64. p 2: rounds 2, lead
      // ceil(1026 / 3) = 342, cost 344; ... p 10: rounds 10, lead
      // ceil((5120 + 162) / 19) = 278, trail ceil(234 / 9) = 26, cost max(280, 280).
      {"8192^3", 2048, 512, 132, 0, {1980, 68, 10, 278}},
      {"8192^3, at most 2 slices", 2048, 512, 132, 2, {1980, 68, 2, 342}},
      // 1024^3: 32 tiles of 64, none whole; free 100. p 4: 96 trails in one
      // round, lead 16, trails 16, cost 18; p 5: rounds 2, cost 26.
      {"1024^3", 32, 64, 132, 0, {0, 32, 4, 16}},
      // 2048^3: 128 tiles of 128 on 132 slots; free 4. p 2: rounds 32, lead
      // ceil((4096 + 62) / 33) = 126, trail 2 < 4: stop. No split.
      {"2048^3", 128, 128, 132, 0, {128, 0, 0, 0}},
      // One tile of 64 k-tiles: p 16, lead 4 and 15 trails of 4 in one
      // round (cost 6); p 17: lead 4, 60 / 16 < 4: stop.
      {"one tile", 1, 64, 132, 0, {0, 1, 16, 4}},
      // One tile of 2^20 k-tiles: p 132 (one round: lead ceil(2^20 / 132) =
      // 7944, 131 slices of 7944, cost 7946) is as far as it goes: p is at
      // most `slots` (p 133 would take two rounds: cost 15654).
      {"one tile, long K", 1, int64_t(1) << 20, 132, 0, {0, 1, 132, 7944}},
      // Tiny K: one tile of 8 splits in two halves (cost 6 < 8); of 7 not (7 - 4 < 4).
      {"k 8", 1, 8, 132, 0, {0, 1, 2, 4}},
      {"k 7", 1, 7, 132, 0, {1, 0, 0, 0}},
      {"k 1", 10, 1, 132, 0, {10, 0, 0, 0}},
      // rest 67 of 132 (free 65), 64 k-tiles. p 2: rounds 2, lead
      // ceil(130 / 3) = 44, cost 46. p 3: rounds 3, lead ceil(200 / 5) = 40,
      // trail 12, cost max(42, 42). p 4: rounds 4, lead ceil(280 / 7) = 40,
      // trail 8, cost 40 + ... max(42, 40): not cheaper.
      {"rest 67", 199, 64, 132, 0, {132, 67, 3, 40}},
      // rest 131 of 132: lead ceil((131 * 64 + 130 * 2) / 132) = 66 > 64 - 4: stop.
      {"rest 131", 263, 64, 132, 0, {263, 0, 0, 0}},
      // Whole waves.
      {"one wave", 132, 64, 132, 0, {132, 0, 0, 0}},
      {"two waves", 264, 64, 132, 0, {264, 0, 0, 0}},
      {"one slot", 77, 64, 1, 0, {77, 0, 0, 0}},
      // The tail's grid stays 32-bit: rest 852516352 of 2^31 slots, p 2 is
      // 1.7e9 blocks (lead 500, cost 502), p 3 would be 2.6e9.
      {"32-bit grid", 3000000000, 1000, int64_t(1) << 31, 0, {int64_t(1) << 31, 852516352, 2, 500}},
      // Degenerate inputs.
      {"no slots", 32, 64, 0, 0, {32, 0, 0, 0}},
      {"negative slots", 32, 64, -4, 0, {32, 0, 0, 0}},
      {"no tiles", 0, 64, 132, 0, {0, 0, 0, 0}},
      {"negative tiles", -5, 64, 132, 0, {0, 0, 0, 0}},
      {"no k-tiles", 32, 0, 132, 0, {32, 0, 0, 0}},
  };
  for (const PolicyCase& c : cases) {
    SCOPED_TRACE(c.what);
    const StreamKSplit s = split_stream_k(c.tiles, c.k_tiles, c.slots, c.max_slices);
    EXPECT_EQ(s.whole_tiles, c.expected.whole_tiles);
    EXPECT_EQ(s.shared_tiles, c.expected.shared_tiles);
    EXPECT_EQ(s.slices, c.expected.slices);
    EXPECT_EQ(s.lead_k_tiles, c.expected.lead_k_tiles);
    EXPECT_EQ(s.splits(), c.expected.slices > 0);
    EXPECT_EQ(s.units(), c.expected.shared_tiles * c.expected.slices);
  }
}

TEST(StreamKSplit, SliceBoundsOnHandWorkedValues) {
  // 4096^3's split: the lead [0, 230), the trail [230, 256).
  EXPECT_EQ(stream_k_slice_begin(0, 256, 230, 2), 0);
  EXPECT_EQ(stream_k_slice_begin(1, 256, 230, 2), 230);
  EXPECT_EQ(stream_k_slice_begin(2, 256, 230, 2), 256);
  // 10 k-tiles, a lead of 4, three trails sharing 6: [4, 6), [6, 8), [8, 10).
  EXPECT_EQ(stream_k_slice_begin(1, 10, 4, 4), 4);
  EXPECT_EQ(stream_k_slice_begin(2, 10, 4, 4), 6);
  EXPECT_EQ(stream_k_slice_begin(3, 10, 4, 4), 8);
  EXPECT_EQ(stream_k_slice_begin(4, 10, 4, 4), 10);
  // Unequal shares: 7 k-tiles past the lead among 3 trails: 2, 2, 3.
  EXPECT_EQ(stream_k_slice_begin(2, 10, 3, 4), 5);
  EXPECT_EQ(stream_k_slice_begin(3, 10, 3, 4), 7);
  EXPECT_EQ(stream_k_slice_begin(4, 10, 3, 4), 10);
  // Large K: the product stays in 64 bits.
  EXPECT_EQ(stream_k_slice_begin(100, INT32_MAX, 0, 101), 2126008810);  // 99 (2^31 - 1) / 100
}

// Every split the policy makes, walked as the kernels run it.
TEST(StreamKSplit, WalkOfThePolicysSplits) {
  std::vector<int64_t> tile_counts;
  for (int64_t t = 1; t <= 40; ++t) tile_counts.push_back(t);
  for (int64_t t = 41; t <= 300; t += 7) tile_counts.push_back(t);
  for (int64_t t : {131, 132, 133, 140, 197, 198, 199, 263, 264, 265}) tile_counts.push_back(t);
  int64_t splits = 0, tiles_split = 0;
  for (int64_t slots : {1, 7, 132, 264})
    for (int64_t tiles : tile_counts)
      for (int64_t k_tiles = 1; k_tiles <= 70; ++k_tiles) {
        const StreamKSplit s = split_stream_k(tiles, k_tiles, slots);
        SCOPED_TRACE(::testing::Message()
                     << "tiles " << tiles << ", k_tiles " << k_tiles << ", slots " << slots
                     << ": whole " << s.whole_tiles << ", shared " << s.shared_tiles << ", slices "
                     << s.slices << ", lead " << s.lead_k_tiles);
        if (!s.splits()) {
          ASSERT_EQ(s.whole_tiles, std::max<int64_t>(tiles, 0));
          ASSERT_EQ(s.units(), 0);
          continue;
        }
        // The whole waves stay whole; the rest, less than a wave, is cut.
        ASSERT_EQ(s.whole_tiles % slots, 0);
        ASSERT_EQ(s.shared_tiles, tiles % slots);
        ASSERT_GE(s.slices, 2);
        WalkStats st;
        ASSERT_TRUE(walk(tiles, k_tiles, s, st, uint32_t(tiles * 71 + k_tiles)));
        // Slices are at least kStreamKMinSliceKTiles, and the lead, which
        // runs once, is the longest: the trails run `rounds` deep beside it.
        EXPECT_GE(st.min_slice, compiler::kStreamKMinSliceKTiles);
        EXPECT_LE(st.max_trail, s.lead_k_tiles);
        EXPECT_LT(s.lead_k_tiles, k_tiles);
        ++splits;
        tiles_split += st.tiles_split;
      }
  // The sweep exercised the tail, not just whole tiles.
  EXPECT_GT(splits, 5000);
  EXPECT_GT(tiles_split, 100000);
}

// The formula holds for any split, not only the policy's: every lead
// length and slice count with at least a k-tile in every slice.
TEST(StreamKSplit, WalkOfAnySplit) {
  int64_t walked = 0;
  for (int64_t tiles = 1; tiles <= 9; ++tiles)
    for (int64_t k_tiles = 2; k_tiles <= 12; ++k_tiles)
      for (int64_t whole = 0; whole < tiles; ++whole)
        for (int64_t lead = 1; lead < k_tiles; ++lead)
          for (int64_t slices = 2; slices - 1 <= k_tiles - lead; ++slices) {
            const StreamKSplit split{whole, tiles - whole, slices, lead};
            SCOPED_TRACE(::testing::Message()
                         << "tiles " << tiles << ", k_tiles " << k_tiles << ", whole " << whole
                         << ", lead " << lead << ", slices " << slices);
            WalkStats st;
            ASSERT_TRUE(walk(tiles, k_tiles, split, st, uint32_t(slices * 31 + lead)));
            ASSERT_GE(st.min_slice, 1);
            ++walked;
          }
  EXPECT_GT(walked, 5000);
}

// What emit_cuda gives the runtime for a stream_k schedule: each entry with
// the tail the runtime launches by name, and both kernels in the source.
TEST(StreamKModule, EntriesAndTheirTails) {
  compiler::Target t;
  ASSERT_TRUE(compiler::target_for_arch("sm_90", t));
  struct Case {
    const char* file;
    bool fallback;
  };
  for (const Case& c : {Case{"stream_k_stages", true}, Case{"stream_k_double_buffer", true},
                        Case{"stream_k_single_scalar", false}}) {
    SCOPED_TRACE(c.file);
    const std::string path =
        std::string(SCHEDC_SOURCE_DIR) + "/tests/gpu/schedules/" + c.file + ".sched";
    std::ostringstream err;
    std::optional<cli::Compiled> k = cli::compile_file(path, t, err);
    ASSERT_TRUE(k) << err.str();
    EXPECT_TRUE(k->schedule.stream_k);
    EXPECT_TRUE(k->plan.stream_k);
    EXPECT_FALSE(k->plan.stream_k_tail);
    const std::string name = std::string("schedc_") + c.file;
    EXPECT_EQ(k->kernel.main.name, name);
    EXPECT_TRUE(k->kernel.main.stream_k);
    EXPECT_EQ(k->kernel.main.stream_k_tail, name + "_stream_k");
    EXPECT_EQ(k->kernel.main.tile_k, uint32_t(k->plan.block_k));
    const std::string& src = k->kernel.source;
    EXPECT_NE(src.find("extern \"C\" __global__ void __launch_bounds__(" +
                       std::to_string(k->plan.block_threads) + ")\n" + name + "_stream_k("),
              std::string::npos);
    EXPECT_EQ(src.find("__noinline__"), std::string::npos);  // one slice per block, no calls
    EXPECT_EQ(k->kernel.has_fallback(), c.fallback);
    if (c.fallback) {
      EXPECT_TRUE(k->kernel.fallback.stream_k);
      EXPECT_EQ(k->kernel.fallback.stream_k_tail, name + "_fallback_stream_k");
      EXPECT_NE(src.find("\n" + name + "_fallback_stream_k("), std::string::npos);
    }

    const compiler::KernelPlan tail = compiler::lower_stream_k_tail(k->plan);
    EXPECT_TRUE(tail.stream_k);
    EXPECT_TRUE(tail.stream_k_tail);
    EXPECT_EQ(tail.name, k->kernel.main.stream_k_tail);
    EXPECT_EQ(tail.smem_bytes, k->plan.smem_bytes);  // the runtime gives it the entry's smem
    EXPECT_EQ(tail.block_threads, k->plan.block_threads);
  }

  // Without stream_k: no tail.
  std::ostringstream err;
  auto file = std::make_shared<dsl::SourceFile>("t.sched", "tile 64x64x8\nthread 4x4\n");
  std::optional<cli::Compiled> plain = cli::compile_source(file, t, err);
  ASSERT_TRUE(plain) << err.str();
  EXPECT_FALSE(plain->plan.stream_k);
  EXPECT_FALSE(plain->kernel.main.stream_k);
  EXPECT_TRUE(plain->kernel.main.stream_k_tail.empty());
  EXPECT_EQ(plain->kernel.source.find("stream_k"), std::string::npos);
}

// The Hopper path (codegen/emit_wgmma.cpp): the main entry takes the tile
// count of the split after its tensor maps and walks (or is launched over)
// only those tiles; the tail is its own plan, one slice per block: not
// persistent, one consumer under pingpong, so its block and shared memory
// are the entry's tail_block / tail_dynamic_smem. The fix-up's partial sums
// (codegen/blocks_wgmma_stream_k.cpp) give every element of the tile one
// float of the block's slot, and SK_ACC numbers every accumulator once.
TEST(StreamKModule, WgmmaEntriesAndTheirTails) {
  compiler::Target t;
  ASSERT_TRUE(compiler::target_for_arch("sm_90", t));
  for (const char* file : {"wgmma_stream_k", "wgmma_stream_k_pingpong", "wgmma_stream_k_inline",
                           "wgmma_stream_k_tf32"}) {
    SCOPED_TRACE(file);
    const std::string path =
        std::string(SCHEDC_SOURCE_DIR) + "/tests/gpu/schedules/" + file + ".sched";
    std::ostringstream err;
    std::optional<cli::Compiled> k = cli::compile_file(path, t, err);
    ASSERT_TRUE(k) << err.str();
    ASSERT_TRUE(k->plan.wgmma);
    EXPECT_TRUE(k->plan.stream_k);
    const std::string name = std::string("schedc_") + file;
    EXPECT_TRUE(k->kernel.main.stream_k);
    EXPECT_EQ(k->kernel.main.stream_k_tail, name + "_stream_k");
    const std::string& src = k->kernel.source;
    EXPECT_NE(src.find("\n" + name + "(int M"), std::string::npos);
    EXPECT_NE(src.find("TmaMap tma_c, int sk_whole_tiles) {"), std::string::npos);
    EXPECT_NE(src.find("TmaMap tma_c, int sk_whole_tiles, int sk_slices, int sk_lead_k_tiles, "
                       "float* __restrict__ sk_partials, int* __restrict__ sk_counters) {"),
              std::string::npos);
    EXPECT_NE(src.find("\n" + name + "_stream_k(int M"), std::string::npos);
    if (k->plan.wgmma->persistent) {
      EXPECT_NE(src.find("const int my_tiles = (sk_whole_tiles - (int)blockIdx.x"),
                std::string::npos);
    }

    // A k-tile on the tensor cores is short beside the partial sums' round trip.
    EXPECT_EQ(k->kernel.main.stream_k_slice_cost, 7u);
    EXPECT_EQ(k->kernel.main.stream_k_sum_cost, 4u);

    const compiler::KernelPlan tail = compiler::lower_stream_k_tail(k->plan);
    ASSERT_TRUE(tail.wgmma);
    const compiler::WgmmaPlan& w = *tail.wgmma;
    EXPECT_TRUE(tail.stream_k_tail);
    EXPECT_EQ(tail.name, k->kernel.main.stream_k_tail);
    EXPECT_FALSE(w.persistent);
    EXPECT_FALSE(w.pingpong);
    EXPECT_EQ(w.cluster_size(), 1);
    EXPECT_EQ(tail.block_m, k->plan.block_m);
    EXPECT_EQ(tail.block_n, k->plan.block_n);
    EXPECT_EQ(tail.block_k, k->plan.block_k);
    EXPECT_EQ(k->kernel.main.tail_block.x, uint32_t(tail.block_threads));
    EXPECT_EQ(k->kernel.main.tail_dynamic_smem, uint32_t(tail.smem_bytes));
    if (k->plan.wgmma->pingpong) {
      EXPECT_EQ(w.consumers(), 1);
      EXPECT_LT(tail.block_threads, k->plan.block_threads);
    } else {
      EXPECT_EQ(tail.block_threads, k->plan.block_threads);
    }

    // Partial sums: float4 v of consumer thread ctid at (v * threads + ctid) * 4.
    const int threads = 128 * w.consumers(), R = w.inst_n / 2;
    ASSERT_EQ(w.accumulators % 4, 0);
    std::vector<int> slot(size_t(tail.block_m) * tail.block_n, 0);
    for (int ctid = 0; ctid < threads; ++ctid)
      for (int v = 0; v < w.accumulators / 4; ++v)
        for (int c = 0; c < 4; ++c) {
          const size_t f = size_t(v * threads + ctid) * 4 + c;
          ASSERT_LT(f, slot.size());
          ++slot[f];
        }
    for (int n : slot) ASSERT_EQ(n, 1);
    // SK_ACC(x) = acc[x / (n_insts * R)][x / R % n_insts][x % R].
    std::vector<int> reg(size_t(w.m_insts) * w.n_insts * R, 0);
    for (int x = 0; x < w.accumulators; ++x) {
      const int i = x / (w.n_insts * R), j = x / R % w.n_insts, r = x % R;
      ASSERT_LT(i, w.m_insts);
      ++reg[size_t((i * w.n_insts + j) * R + r)];
    }
    for (int n : reg) ASSERT_EQ(n, 1);
  }
}

// The slice cost scales the SIMT path's measured 2 k-tiles (BK 16) by how much
// shorter a k-tile is: deeper k-tiles cost fewer, faster units more.
TEST(StreamKSplit, SliceCostByKernel) {
  EXPECT_EQ(compiler::stream_k_slice_cost(16, 1.0), 2);
  EXPECT_EQ(compiler::stream_k_slice_cost(8, 1.0), 4);
  EXPECT_EQ(compiler::stream_k_slice_cost(64, 1.0), 1);           // at least 1
  EXPECT_EQ(compiler::stream_k_slice_cost(64, 989.4 / 66.9), 7);  // wgmma f16, H100
  EXPECT_EQ(compiler::stream_k_slice_cost(32, 494.7 / 66.9), 7);  // wgmma tf32, H100
  // A dearer slice splits less: 116 tiles of 64 k-tiles on 132 slots (4096^3 in
  // 128x256 tiles) split with the SIMT cost, not with the tensor cores'.
  EXPECT_TRUE(split_stream_k(512, 64, 132, 0, 2).splits());
  EXPECT_FALSE(split_stream_k(512, 64, 132, 0, 7).splits());
  // 32 tiles of 256 k-tiles (1024x1024x16384) still split in four.
  const StreamKSplit deep = split_stream_k(32, 256, 132, 0, 7, 4);
  EXPECT_EQ(deep.slices, 4);
  EXPECT_EQ(deep.whole_tiles, 0);
  // Summing the slices is one block's work: 8 tiles past six waves of 132
  // (5120x5120x4096) in 4 slices with it, 16 without.
  EXPECT_EQ(split_stream_k(800, 64, 132, 0, 7, 0).slices, 16);
  EXPECT_EQ(split_stream_k(800, 64, 132, 0, 7, 4).slices, 4);
}

// The Hopper path: a persistent main entry (grid of at most `slots` blocks,
// block b walking tiles b, b + grid, … of the whole ones, pipeline iteration
// by iteration as its producer computes them: compiler/wgmma_plan.h) and the
// tail's slices together compute every (tile, k-tile) exactly once, with the
// tensor cores' slice costs, on shapes that split and shapes that do not.
TEST(StreamKSplit, PersistentMainAndTailComputeEveryKTileOnce) {
  using compiler::WgmmaPlan;
  struct Case {
    int64_t tiles, k_tiles, slots;
  };
  int splits = 0;
  for (const Case& c :
       {Case{32, 256, 132}, Case{96, 128, 132}, Case{800, 64, 132}, Case{512, 64, 132},
        Case{2048, 128, 132}, Case{1, 16, 132}, Case{133, 40, 132}, Case{300, 9, 66}}) {
    SCOPED_TRACE(::testing::Message() << c.tiles << " tiles of " << c.k_tiles << " on " << c.slots);
    const StreamKSplit split = split_stream_k(c.tiles, c.k_tiles, c.slots, 0, 7, 4);
    splits += split.splits();
    ASSERT_EQ(split.whole_tiles + split.shared_tiles, c.tiles);
    std::vector<int> done(size_t(c.tiles * c.k_tiles), 0);
    const int whole = int(split.whole_tiles), k_tiles = int(c.k_tiles);
    const int grid = int(std::min<int64_t>(split.whole_tiles, c.slots));
    for (int b = 0; b < grid; ++b) {
      const int iters = WgmmaPlan::tiles_of_block(whole, grid, b) * k_tiles;
      for (int it = 0; it < iters; ++it) {
        const int tile = WgmmaPlan::tile_of_iteration(it, k_tiles, grid, b);
        ASSERT_LT(tile, whole);
        ++done[size_t(tile) * k_tiles + it % k_tiles];
      }
    }
    for (int64_t u = 0; u < split.units(); ++u) {
      const int64_t slice = u / split.shared_tiles, tile = whole + u % split.shared_tiles;
      const int64_t first =
                        stream_k_slice_begin(slice, c.k_tiles, split.lead_k_tiles, split.slices),
                    last = stream_k_slice_begin(slice + 1, c.k_tiles, split.lead_k_tiles,
                                                split.slices);
      ASSERT_GE(last - first, compiler::kStreamKMinSliceKTiles);
      for (int64_t k = first; k < last; ++k) ++done[size_t(tile * c.k_tiles + k)];
    }
    for (size_t i = 0; i < done.size(); ++i)
      ASSERT_EQ(done[i], 1) << "tile " << i / c.k_tiles << ", k-tile " << i % c.k_tiles;
  }
  EXPECT_GE(splits, 4);  // the cases cover splits, not only whole launches
}
