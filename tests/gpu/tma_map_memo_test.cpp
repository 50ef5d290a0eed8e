// The module's memo of tensor maps (runtime/tma_map.h, TmaMapMemo): on the
// CPU with a counting encoder (each key encoded once while kept, the least
// recently used dropped first, nothing kept from an encode that throws);
// on the GPU, that a kept map is byte for byte what the driver encodes for
// the same operand, and another operand's is its own.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>

#include "gpu_test_util.h"
#include "runtime/tma_map.h"

using namespace schedc;
using runtime::TmaMap;
using runtime::TmaMapMemo;

namespace {

TmaMapMemo::Key key_of(int64_t v) {
  TmaMapMemo::Key k{};
  k[0] = 1, k[2] = v;
  return k;
}

bool same(const TmaMap& a, const TmaMap& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

}  // namespace

TEST(TmaMapMemo, EncodesAKeyOnceAndDropsTheLeastRecentlyUsed) {
  TmaMapMemo memo;
  int calls = 0;
  auto encoder = [&](int64_t v) {
    return [&calls, v] {
      ++calls;
      TmaMap m{};
      m.opaque[0] = uint64_t(v), m.opaque[1] = uint64_t(calls);
      return m;
    };
  };
  const TmaMap first = memo.find_or_encode(key_of(0), encoder(0));
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(same(memo.find_or_encode(key_of(0), encoder(0)), first));
  EXPECT_EQ(calls, 1) << "a kept key is not encoded again";
  // Fill the memo: keys 1 .. kEntries - 1, then touch key 0 again, so key 1
  // is the least recently used when key kEntries arrives.
  for (int64_t v = 1; v < int64_t(TmaMapMemo::kEntries); ++v)
    memo.find_or_encode(key_of(v), encoder(v));
  EXPECT_EQ(calls, int(TmaMapMemo::kEntries));
  memo.find_or_encode(key_of(0), encoder(0));
  memo.find_or_encode(key_of(int64_t(TmaMapMemo::kEntries)),
                      encoder(int64_t(TmaMapMemo::kEntries)));
  const int before = calls;
  memo.find_or_encode(key_of(0), encoder(0));
  EXPECT_EQ(calls, before) << "key 0, used recently, is kept";
  memo.find_or_encode(key_of(1), encoder(1));
  EXPECT_EQ(calls, before + 1) << "key 1, the least recently used, was dropped";
}

TEST(TmaMapMemo, AnEncodeThatThrowsKeepsNothing) {
  TmaMapMemo memo;
  int calls = 0;
  auto failing = [&]() -> TmaMap {
    ++calls;
    throw std::runtime_error("rejected");
  };
  EXPECT_THROW(memo.find_or_encode(key_of(7), failing), std::runtime_error);
  EXPECT_THROW(memo.find_or_encode(key_of(7), failing), std::runtime_error);
  EXPECT_EQ(calls, 2);
}

TEST(TmaMapMemo, KeepsWhatTheDriverEncodes) {
  SCHEDC_REQUIRE_GPU(session);
  void* buf = nullptr;
  ASSERT_EQ(cudaMalloc(&buf, 1 << 20), cudaSuccess);
  const codegen::TmaBox box{64, 64};
  char* base = static_cast<char*>(buf);
  TmaMapMemo memo;
  const TmaMap a = memo.tiled("f16", base, 256, 256, 256, box);
  EXPECT_TRUE(same(a, runtime::encode_tma_map("f16", base, 256, 256, 256, box)));
  EXPECT_TRUE(same(memo.tiled("f16", base, 256, 256, 256, box), a));
  // Another pointer, leading dimension or box: its own map.
  const TmaMap b = memo.tiled("f16", base + 4096, 256, 256, 256, box);
  EXPECT_FALSE(same(b, a));
  EXPECT_TRUE(same(b, runtime::encode_tma_map("f16", base + 4096, 256, 256, 256, box)));
  const TmaMap c = memo.tiled("f16", base, 256, 256, 264, box);
  EXPECT_TRUE(same(c, runtime::encode_tma_map("f16", base, 256, 256, 264, box)));
  EXPECT_FALSE(same(c, a));
  compiler::Im2colGeometry g;
  g.n = 1, g.h = 14, g.w = 14, g.c = 256, g.pad_h = g.pad_w = 1, g.reach_h = g.reach_w = 2;
  const codegen::TmaBox pixels{64, 128};
  const TmaMap i = memo.im2col("s8", base, g, pixels);
  EXPECT_TRUE(same(i, runtime::encode_im2col_map("s8", base, g, pixels)));
  g.stride_h = g.stride_w = 2;
  EXPECT_TRUE(
      same(memo.im2col("s8", base, g, pixels), runtime::encode_im2col_map("s8", base, g, pixels)));
  EXPECT_FALSE(same(memo.im2col("s8", base, g, pixels), i));
  cudaFree(buf);
}
