// The wgmma kernel's mbarrier pipeline, run as a model on the CPU: one
// producer and the consumer warpgroups of a persistent block step in random
// interleavings, with the barrier rules PTX gives (a parity wait returns once
// the barrier's current phase has the other parity) and the waits the emitted
// kernel makes (codegen/blocks_wgmma.cpp). Every wait that returns must find
// the iteration it expects in its stage, every (tile, k-tile) must be computed
// once, and no interleaving may deadlock. The pingpong order barrier is what
// makes the consumers' parity waits exact; without it the model must find a
// wait that returns on an older phase (the test shows it can fail).
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

#include "compiler/wgmma_plan.h"

namespace schedc {
namespace {

using compiler::WgmmaPlan;

// An mbarrier: phases completed, arrivals in the current one.
struct Barrier {
  int count = 1, arrived = 0, completed = 0;
  void arrive() {
    if (++arrived == count) arrived = 0, ++completed;
  }
  // mbarrier.try_wait.parity: true once the phase of that parity completed,
  // that is while the current (incomplete) phase has the other parity.
  bool try_wait(int parity) const { return (completed & 1) != parity; }
};

struct Outcome {
  bool deadlock = false, stale_wait = false;
  std::multiset<std::pair<int, int>> computed;  // (tile, k-tile)
};

// One block with `tiles` tiles of `k_tiles` k-tiles each, S stages.
Outcome run(const WgmmaPlan& w, int tiles, int k_tiles, bool order_barrier, unsigned seed) {
  const int S = w.stages, C = w.consumers(), iters = tiles * k_tiles;
  std::vector<Barrier> full(static_cast<size_t>(S)), empty(static_cast<size_t>(S));
  for (Barrier& b : empty) b.count = w.empty_arrivals() / 4;  // one arrival per warpgroup here
  std::vector<int> landed(size_t(S), -1);                     // iteration in each stage
  // Order barriers: arrivals for consumer c minus the waits it has passed.
  std::vector<int> turns(size_t(C), 0);
  int produced = 0;
  struct Consumer {
    int t, k = 0, held = -1;  // tile, k-tile, iteration read but not yet released
    bool waited_turn = false;
  };
  std::vector<Consumer> cons;
  for (int c = 0; c < C; ++c) cons.push_back({w.pingpong ? c : 0});
  const int step = w.pingpong ? 2 : 1;
  Outcome out;
  std::mt19937 rng(seed);
  for (;;) {
    std::vector<int> ready;  // actors that can make a step
    if (produced < iters) {
      const int s = produced % S;
      if (produced < S || empty[size_t(s)].try_wait(((produced / S) + 1) & 1)) ready.push_back(-1);
    }
    bool all_done = produced == iters;
    for (int c = 0; c < C; ++c) {
      Consumer& x = cons[size_t(c)];
      if (x.t >= tiles) {
        if (x.held >= 0) ready.push_back(c);  // still to release its last stage
        continue;
      }
      all_done = false;
      if (w.pingpong && order_barrier && x.t > 0 && !x.waited_turn) {
        if (turns[size_t(c)] > 0) ready.push_back(c);
        continue;
      }
      const int it = WgmmaPlan::iteration(x.t, x.k, k_tiles);
      if (full[size_t(it % S)].try_wait((it / S) & 1)) ready.push_back(c);
    }
    for (const Consumer& x : cons) all_done = all_done && x.held < 0;
    if (all_done) return out;
    if (ready.empty()) {
      out.deadlock = true;
      return out;
    }
    const int who = ready[rng() % ready.size()];
    if (who < 0) {  // the producer copies `produced` (the copy lands at once)
      const int s = produced % S;
      landed[size_t(s)] = produced++;
      full[size_t(s)].arrive();
      continue;
    }
    Consumer& x = cons[size_t(who)];
    auto release_held = [&] {
      if (x.held >= 0) empty[size_t(x.held % S)].arrive();
      x.held = -1;
    };
    if (x.t >= tiles) {
      release_held();
      continue;
    }
    if (w.pingpong && order_barrier && x.t > 0 && !x.waited_turn) {
      --turns[size_t(who)];
      x.waited_turn = true;
      continue;
    }
    // The wait returned: the stage must hold this very iteration.
    const int it = WgmmaPlan::iteration(x.t, x.k, k_tiles);
    if (landed[size_t(it % S)] != it) out.stale_wait = true;
    out.computed.insert({x.t, x.k});
    release_held();  // wgmma_wait<1>: the previous iteration's stage is free
    x.held = it;
    if (++x.k == k_tiles) {  // the tile's wgmma are issued: the other's turn
      if (w.pingpong && x.t + 1 < tiles) ++turns[size_t(WgmmaPlan::pingpong_consumer(x.t + 1))];
      release_held();  // wgmma_wait<0>
      x.k = 0;
      x.t += step;
      x.waited_turn = false;
    }
  }
}

WgmmaPlan plan(bool pingpong, int stages) {
  WgmmaPlan w;
  w.warp_specialize = w.persistent = true;
  w.pingpong = pingpong;
  w.consumers_m = pingpong ? 1 : 2;
  w.stages = stages;
  return w;
}

void expect_exact(const WgmmaPlan& w, bool order_barrier) {
  for (int S : {2, 3, 4, 5, 8, 16})
    for (int tiles : {1, 2, 3, 8})
      for (int k_tiles : {1, 2, 3, 16})
        for (unsigned seed = 0; seed < 40; ++seed) {
          WgmmaPlan x = w;
          x.stages = S;
          Outcome o = run(x, tiles, k_tiles, order_barrier, seed);
          ASSERT_FALSE(o.deadlock) << S << " stages, " << tiles << " tiles, " << k_tiles;
          ASSERT_FALSE(o.stale_wait) << S << " stages, " << tiles << " tiles, " << k_tiles;
          // Cooperative consumers each compute every (tile, k-tile) for their
          // part of the tile; pingpong ones split the tiles between them.
          const int per = w.pingpong ? 1 : w.consumers();
          ASSERT_EQ(int(o.computed.size()), tiles * k_tiles * per);
          for (int t = 0; t < tiles; ++t)
            for (int k = 0; k < k_tiles; ++k) ASSERT_EQ(int(o.computed.count({t, k})), per);
        }
}

TEST(WgmmaPipeline, CooperativeConsumersWaitOnTheirOwnIterations) {
  expect_exact(plan(false, 3), true);
}

TEST(WgmmaPipeline, PingpongConsumersWaitOnTheirOwnIterations) {
  expect_exact(plan(true, 4), true);
}

// Without the order barrier, the second consumer waits on tile 1's stages
// while tile 0's copies still fill them: a parity wait two phases early
// returns at once. The model must see it, or it could not see the bug.
TEST(WgmmaPipeline, PingpongWithoutTheOrderBarrierReadsAStaleStage) {
  bool stale = false;
  for (unsigned seed = 0; seed < 200 && !stale; ++seed)
    stale = run(plan(true, 4), 4, 16, false, seed).stale_wait;
  EXPECT_TRUE(stale);
}

// Pingpong frees a stage with the arrivals of one warpgroup's four warps;
// cooperative consumers all read every stage.
TEST(WgmmaPipeline, EmptyBarrierCountsTheWarpsThatReadAStage) {
  EXPECT_EQ(plan(true, 4).empty_arrivals(), 4);
  EXPECT_EQ(plan(false, 4).empty_arrivals(), 8);
  EXPECT_EQ(WgmmaPlan::pingpong_consumer(0), 0);
  EXPECT_EQ(WgmmaPlan::pingpong_consumer(5), 1);
  EXPECT_EQ(WgmmaPlan::iteration(3, 2, 16), 50);
}

}  // namespace
}  // namespace schedc
