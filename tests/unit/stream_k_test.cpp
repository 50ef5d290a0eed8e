// `stream_k` (compiler/stream_k.h): the launch-time split policy on
// hand-worked cases, and a walk of the k-tile formulas exactly as the
// generated kernels evaluate them (codegen/blocks_stream_k.cpp): the main
// entry's whole tiles, the tail's units and their segments, the workspace
// slots and the arrival counters of the shared tiles. Then what the module
// holds: a main entry and a tail per entry, named as the runtime looks them up.
#include "compiler/stream_k.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <vector>

#include "cli/pipeline.h"
#include "compiler/lower.h"

using namespace schedc;
using compiler::split_stream_k;
using compiler::stream_k_begin;
using compiler::stream_k_slot;
using compiler::stream_k_unit_of;
using compiler::StreamKSplit;

namespace {

struct PolicyCase {
  const char* what;
  int64_t tiles, k_tiles, slots;
  int64_t whole, units;  // expected, worked out by hand from split_stream_k's rules
};

// One segment of a unit: k-tiles [k_first, k_last) of `tile`.
struct Segment {
  int64_t unit, tile, k_first, k_last;
};

// What the walk saw, for assertions on the policy's own guarantees.
struct WalkStats {
  int64_t max_segments_per_unit = 0;
  int64_t min_k_tiles_per_unit = INT64_MAX;
  int64_t max_k_tiles_per_unit = 0;
  int64_t shared_tiles_split = 0;  // tiles computed by more than one unit
};

// Runs the split `whole`, `units` over `tiles` C tiles of `k_tiles` k-tiles
// as the kernels do, and checks what the fix-up relies on. Returns false at
// the first failure (already reported) so that a sweep stops early.
bool walk(int64_t tiles, int64_t k_tiles, int64_t whole, int64_t units, WalkStats& stats,
          uint32_t seed) {
  std::vector<int> computed(size_t(tiles * k_tiles), 0);  // (tile, k-tile) -> times
  // Main entry: block b computes tile b, all its k-tiles.
  for (int64_t b = 0; b < whole; ++b)
    for (int64_t k = 0; k < k_tiles; ++k) ++computed[size_t(b * k_tiles + k)];

  // Tail entry: emit_stream_k_kernel_body's loop, unit by unit.
  const int64_t total = (tiles - whole) * k_tiles;  // shared_k_tiles
  std::vector<Segment> partial;                     // segments that are part of a tile
  for (int64_t u = 0; u < units; ++u) {
    const int64_t it_end = stream_k_begin(u + 1, total, units);
    int64_t segments = 0, k_count = 0;
    for (int64_t it = stream_k_begin(u, total, units); it < it_end;) {
      const int64_t tile = whole + it / k_tiles, k_first = it % k_tiles;
      const int64_t k_last = std::min(k_tiles, k_first + (it_end - it));
      if (tile >= tiles || k_last <= k_first || k_last > k_tiles) {
        ADD_FAILURE() << "unit " << u << ": segment outside the grid, tile " << tile << " ["
                      << k_first << ", " << k_last << ")";
        return false;
      }
      for (int64_t k = k_first; k < k_last; ++k) ++computed[size_t(tile * k_tiles + k)];
      if (k_last - k_first < k_tiles) partial.push_back({u, tile, k_first, k_last});
      ++segments;
      k_count += k_last - k_first;
      it += k_last - k_first;
    }
    if (k_count == 0) {
      ADD_FAILURE() << "unit " << u << " has no k-tile";
      return false;
    }
    stats.max_segments_per_unit = std::max(stats.max_segments_per_unit, segments);
    stats.min_k_tiles_per_unit = std::min(stats.min_k_tiles_per_unit, k_count);
    stats.max_k_tiles_per_unit = std::max(stats.max_k_tiles_per_unit, k_count);
  }

  // Every (tile, k-tile) exactly once.
  for (int64_t t = 0; t < tiles; ++t)
    for (int64_t k = 0; k < k_tiles; ++k)
      if (computed[size_t(t * k_tiles + k)] != 1) {
        ADD_FAILURE() << "tile " << t << " k-tile " << k << " computed "
                      << computed[size_t(t * k_tiles + k)] << " times";
        return false;
      }

  // Workspace slots: each partial segment publishes in its own slot of 2 * units.
  std::map<int64_t, Segment> slot_of;  // slot -> the segment published there
  std::map<int64_t, std::vector<Segment>> by_tile;
  for (const Segment& s : partial) {
    const int64_t tile_it = (s.tile - whole) * k_tiles;
    const int64_t slot = stream_k_slot(s.unit, tile_it, total, units);
    if (slot < 0 || slot >= 2 * units) {
      ADD_FAILURE() << "unit " << s.unit << " tile " << s.tile << ": slot " << slot
                    << " outside [0, " << 2 * units << ")";
      return false;
    }
    if (!slot_of.emplace(slot, s).second) {
      const Segment& o = slot_of.at(slot);
      ADD_FAILURE() << "slot " << slot << " shared by unit " << s.unit << " (tile " << s.tile
                    << ") and unit " << o.unit << " (tile " << o.tile << ")";
      return false;
    }
    by_tile[s.tile].push_back(s);
  }

  // Each shared tile: the units the fix-up expects are exactly those that
  // computed a part of it, the last to arrive (in any order) is the one that
  // writes C, it finds every part in the slot the formula names, and the
  // counter is zero again afterwards.
  std::mt19937 rng(seed);
  for (auto& [tile, segs] : by_tile) {
    const int64_t tile_it = (tile - whole) * k_tiles;
    const int64_t first = stream_k_unit_of(tile_it, total, units);
    const int64_t last = stream_k_unit_of(tile_it + k_tiles - 1, total, units);
    int64_t lo = INT64_MAX, hi = -1;
    for (const Segment& s : segs) lo = std::min(lo, s.unit), hi = std::max(hi, s.unit);
    if (first != lo || last != hi || int64_t(segs.size()) != last - first + 1) {
      ADD_FAILURE() << "tile " << tile << ": units " << lo << ".." << hi << " in " << segs.size()
                    << " segments, the fix-up expects " << first << ".." << last;
      return false;
    }
    ++stats.shared_tiles_split;
    for (int order = 0; order < 3; ++order) {
      std::vector<Segment> arrivals = segs;
      if (order == 1) std::reverse(arrivals.begin(), arrivals.end());
      if (order == 2) std::shuffle(arrivals.begin(), arrivals.end(), rng);
      int counter = 0, writers = 0;
      for (size_t a = 0; a < arrivals.size(); ++a) {
        const int sk_arrival = counter++;          // atomicAdd
        if (sk_arrival != last - first) continue;  // write_c
        ++writers;
        if (a + 1 != arrivals.size()) {
          ADD_FAILURE() << "tile " << tile << ": a unit writes C before every part arrived";
          return false;
        }
        std::vector<int> covered(size_t(k_tiles), 0);
        for (int64_t u = first; u <= last; ++u) {  // the sum, in unit order
          auto it = slot_of.find(stream_k_slot(u, tile_it, total, units));
          if (it == slot_of.end() || it->second.unit != u || it->second.tile != tile) {
            ADD_FAILURE() << "tile " << tile << ": unit " << u << "'s part is not in its slot";
            return false;
          }
          for (int64_t k = it->second.k_first; k < it->second.k_last; ++k) ++covered[size_t(k)];
        }
        for (int64_t k = 0; k < k_tiles; ++k)
          if (covered[size_t(k)] != 1) {
            ADD_FAILURE() << "tile " << tile << ": the sum holds k-tile " << k << " "
                          << covered[size_t(k)] << " times";
            return false;
          }
        counter = 0;  // sk_counters[shared_tile] = 0
      }
      if (writers != 1 || counter != 0) {
        ADD_FAILURE() << "tile " << tile << ": " << writers << " writers, counter left at "
                      << counter;
        return false;
      }
    }
  }
  return true;
}

}  // namespace

TEST(StreamKSplit, HandWorkedCases) {
  // rest = tiles % slots; units = min(slots, rest * k_tiles / 4); split into
  // {tiles - rest, units} unless rest == 0, rest * k_tiles > INT32_MAX or
  // 2 * rest > units.
  const PolicyCase cases[] = {
      // 4096^3, 256x128x16: 16x32 tiles, 256 k-tiles; rest 116, units 132, 232 > 132.
      {"4096^3", 512, 256, 132, 512, 0},
      // 8192^3: 32x64 tiles, 512 k-tiles; rest 68, units 132, 136 > 132.
      {"8192^3", 2048, 512, 132, 2048, 0},
      // 1024^3: 4x8 tiles, 64 k-tiles; rest 32, units min(132, 2048 / 4), 64 <= 132.
      {"1024^3", 32, 64, 132, 0, 132},
      // Whole waves.
      {"one wave", 132, 64, 132, 132, 0},
      {"two waves", 264, 64, 132, 264, 0},
      {"one slot", 77, 64, 1, 77, 0},
      // 264 slots (two blocks per SM): rest 36, units min(264, 576), 72 <= 264.
      {"264 slots", 300, 64, 264, 264, 264},
      // A whole wave and a small rest: rest 8, units 132, 16 <= 132.
      {"140 tiles", 140, 256, 132, 132, 132},
      // The half-tile rule at its edge: rest 66 (132 <= 132) splits, rest 67 (134) not.
      {"rest 66", 198, 64, 132, 132, 132},
      {"rest 67", 199, 64, 132, 199, 0},
      // Units limited by kStreamKMinUnitKTiles: 40 / 4 = 10 units, 2 <= 10.
      {"few k-tiles", 1, 40, 132, 0, 10},
      {"two tiles", 2, 16, 132, 0, 8},
      // Tiny K: units = rest * k_tiles / 4 falls below 2 * rest.
      {"k 1", 10, 1, 132, 10, 0},          // units 2, 20 > 2
      {"k 2", 5, 2, 132, 5, 0},            // units 2, 10 > 2
      {"k 3", 3, 3, 132, 3, 0},            // units 2, 6 > 2
      {"k 3, one tile", 1, 3, 132, 1, 0},  // units 0
      {"k 7", 1, 7, 132, 1, 0},            // units 1, 2 > 1
      {"k 8", 1, 8, 132, 0, 2},            // units 2, 2 <= 2: the smallest K that splits
      // The kernel numbers the shared k-tiles in 32 bits.
      {"2^31 shared", 1, int64_t(1) << 31, 132, 1, 0},
      {"INT32_MAX shared", 1, INT32_MAX, 132, 0, 132},
      {"2 x 2^30 shared", 134, int64_t(1) << 30, 132, 134, 0},
      {"2 x (2^30 - 1) shared", 134, (int64_t(1) << 30) - 1, 132, 132, 132},
      // Degenerate inputs.
      {"no slots", 32, 64, 0, 32, 0},
      {"negative slots", 32, 64, -4, 32, 0},
      {"no tiles", 0, 64, 132, 0, 0},
      {"no k-tiles", 32, 0, 132, 32, 0},
  };
  for (const PolicyCase& c : cases) {
    SCOPED_TRACE(c.what);
    const StreamKSplit s = split_stream_k(c.tiles, c.k_tiles, c.slots);
    EXPECT_EQ(s.whole_tiles, c.whole);
    EXPECT_EQ(s.units, c.units);
    EXPECT_EQ(s.splits(), c.units > 0);
    EXPECT_EQ(s.grid(), c.whole + c.units);
  }
  // Negative tiles: nothing to split (whole_tiles is passed through).
  const StreamKSplit neg = split_stream_k(-5, 64, 132);
  EXPECT_FALSE(neg.splits());
  EXPECT_EQ(neg.units, 0);
}

TEST(StreamKSplit, FormulasOnHandWorkedValues) {
  // 10 shared k-tiles (2 tiles of 5) among 3 units: [0, 3), [3, 6), [6, 10).
  EXPECT_EQ(stream_k_begin(0, 10, 3), 0);
  EXPECT_EQ(stream_k_begin(1, 10, 3), 3);
  EXPECT_EQ(stream_k_begin(2, 10, 3), 6);
  EXPECT_EQ(stream_k_begin(3, 10, 3), 10);
  EXPECT_EQ(stream_k_unit_of(0, 10, 3), 0);
  EXPECT_EQ(stream_k_unit_of(2, 10, 3), 0);
  EXPECT_EQ(stream_k_unit_of(3, 10, 3), 1);
  EXPECT_EQ(stream_k_unit_of(5, 10, 3), 1);
  EXPECT_EQ(stream_k_unit_of(6, 10, 3), 2);
  EXPECT_EQ(stream_k_unit_of(9, 10, 3), 2);
  // Tile 0 is k-tiles [0, 5): units 0 (starts in it: slot 0) and 1 (slot 2).
  // Tile 1 is [5, 10): units 1 (started in tile 0: slot 3) and 2 (slot 4).
  EXPECT_EQ(stream_k_slot(0, 0, 10, 3), 0);
  EXPECT_EQ(stream_k_slot(1, 0, 10, 3), 2);
  EXPECT_EQ(stream_k_slot(1, 5, 10, 3), 3);
  EXPECT_EQ(stream_k_slot(2, 5, 10, 3), 4);
  // A unit that starts exactly at a tile's first k-tile starts inside it.
  EXPECT_EQ(stream_k_slot(1, 3, 10, 3), 2);
  // 1024^3 on 132 slots: 2048 k-tiles, 15 or 16 per unit.
  EXPECT_EQ(stream_k_begin(1, 2048, 132), 15);
  EXPECT_EQ(stream_k_begin(131, 2048, 132), 2032);
  EXPECT_EQ(stream_k_begin(132, 2048, 132), 2048);
  EXPECT_EQ(stream_k_unit_of(14, 2048, 132), 0);
  EXPECT_EQ(stream_k_unit_of(15, 2048, 132), 1);
  EXPECT_EQ(stream_k_unit_of(2031, 2048, 132), 130);
  EXPECT_EQ(stream_k_unit_of(2032, 2048, 132), 131);
  EXPECT_EQ(stream_k_unit_of(2047, 2048, 132), 131);
  // Near the 32-bit limit the products stay in 64 bits.
  EXPECT_EQ(stream_k_begin(131, INT32_MAX, 132), int64_t(131) * INT32_MAX / 132);
  EXPECT_EQ(stream_k_unit_of(INT32_MAX - 1, INT32_MAX, 132), 131);
}

// Every split the policy makes, walked as the kernels run it.
TEST(StreamKSplit, WalkOfThePolicysSplits) {
  std::vector<int64_t> tile_counts;
  for (int64_t t = 1; t <= 40; ++t) tile_counts.push_back(t);
  for (int64_t t = 41; t <= 300; t += 7) tile_counts.push_back(t);
  for (int64_t t : {131, 132, 133, 140, 197, 198, 199, 263, 264, 265}) tile_counts.push_back(t);
  int64_t splits = 0, split_tiles = 0;
  for (int64_t slots : {1, 7, 132, 264})
    for (int64_t tiles : tile_counts)
      for (int64_t k_tiles = 1; k_tiles <= 70; ++k_tiles) {
        const StreamKSplit s = split_stream_k(tiles, k_tiles, slots);
        SCOPED_TRACE(::testing::Message()
                     << "tiles " << tiles << ", k_tiles " << k_tiles << ", slots " << slots
                     << ": whole " << s.whole_tiles << ", units " << s.units);
        ASSERT_GE(s.whole_tiles, 0);
        ASSERT_LE(s.whole_tiles, tiles);
        ASSERT_GE(s.units, 0);
        ASSERT_LE(s.units, slots);
        if (!s.splits()) {
          ASSERT_EQ(s.whole_tiles, tiles);
        } else {
          // The whole waves stay whole; the rest fills at most one wave.
          ASSERT_EQ(s.whole_tiles % slots, 0);
          ASSERT_LT(tiles - s.whole_tiles, slots);
          ++splits;
        }
        WalkStats st;
        ASSERT_TRUE(
            walk(tiles, k_tiles, s.whole_tiles, s.units, st, uint32_t(tiles * 71 + k_tiles)));
        if (s.splits()) {
          // At most half a tile per unit (rounded up), so at most two
          // segments, and at least kStreamKMinUnitKTiles k-tiles each.
          EXPECT_LE(st.max_k_tiles_per_unit, (k_tiles + 1) / 2);
          EXPECT_LE(st.max_segments_per_unit, 2);
          EXPECT_GE(st.min_k_tiles_per_unit, compiler::kStreamKMinUnitKTiles);
          split_tiles += st.shared_tiles_split;
        }
      }
  // The sweep exercised the tail, not just whole tiles.
  EXPECT_GT(splits, 5000);
  EXPECT_GT(split_tiles, 100000);
}

// The formulas hold for any split whose units each get a k-tile (units <=
// shared k-tiles), not only the policy's: units spanning several tiles, a
// unit per k-tile, one unit for everything.
TEST(StreamKSplit, WalkOfAnySplitWithNonEmptyUnits) {
  int64_t walked = 0;
  for (int64_t tiles = 1; tiles <= 9; ++tiles)
    for (int64_t k_tiles = 1; k_tiles <= 9; ++k_tiles)
      for (int64_t whole = 0; whole < tiles; ++whole) {
        const int64_t total = (tiles - whole) * k_tiles;
        for (int64_t units = 1; units <= total; ++units) {
          SCOPED_TRACE(::testing::Message() << "tiles " << tiles << ", k_tiles " << k_tiles
                                            << ", whole " << whole << ", units " << units);
          WalkStats st;
          ASSERT_TRUE(walk(tiles, k_tiles, whole, units, st, uint32_t(units)));
          ASSERT_GE(st.min_k_tiles_per_unit, 1);
          ++walked;
        }
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
    EXPECT_NE(src.find("__device__ __noinline__ void " + name + "_stream_k_segment("),
              std::string::npos);
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
