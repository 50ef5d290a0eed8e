// `cluster 2x1` with `split_k` (compiler/wgmma_plan.h, paired): the launch's
// clusters are split_k's slices of two tiles along M, each CTA multicasting
// half of its slice's filters (B) into the pair. The analyzer's rules, the
// plan, the launch's grid (whole pairs of tile rows) and the blocks the
// kernel is built from.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "cli/pipeline.h"
#include "compiler/analyze.h"
#include "dsl/source.h"

namespace schedc {
namespace {

const char* kConvPair =
    "conv 8x7x7x512 filter 512x3x3 stride 1 pad 1\ndtype s8\ntile 64x64x256\nwarp 64x64\n"
    "wgmma s8\ntma\nstages 4\nswizzle smem\nwarp_specialize\nsplit_k 2\nhalo\ncluster 2x1\n";

std::optional<cli::Compiled> compile(const std::string& text, std::string* errors = nullptr) {
  compiler::Target t;
  EXPECT_TRUE(compiler::target_for_arch("sm_90", t));
  std::ostringstream err;
  std::optional<cli::Compiled> c =
      cli::compile_source(std::make_shared<dsl::SourceFile>("pair.sched", text), t, err);
  if (errors) *errors = err.str();
  return c;
}

// The error schedc gives `text`, which must not compile.
std::string error_of(const std::string& text) {
  std::string errors;
  EXPECT_FALSE(compile(text, &errors)) << text;
  return errors;
}

TEST(ClusterPair, PlanEntryAndGrid) {
  const std::optional<cli::Compiled> c = compile(kConvPair);
  ASSERT_TRUE(c);
  const compiler::WgmmaPlan& w = *c->plan.wgmma;
  EXPECT_TRUE(w.paired());
  EXPECT_TRUE(w.shares_b());
  EXPECT_TRUE(w.b.halves());
  EXPECT_EQ(w.empty_arrivals(), 2 * 4);  // a consumer warpgroup's 4 warps in each tile's CTA
  const codegen::KernelEntry& e = c->kernel.main;
  EXPECT_TRUE(e.paired());
  EXPECT_EQ(e.split_k, 2u);
  EXPECT_EQ(e.tma_b.box_rows, 32u);  // half of the filters' 64 rows a CTA
  // Whole pairs of tile rows: 7 rows of 64 take a row of tiles past M.
  EXPECT_EQ(e.grid(7 * 64, 512).y, 8u);
  EXPECT_EQ(e.grid(8 * 64, 512).y, 8u);
  EXPECT_EQ(e.grid(1, 512).y, 2u);
  EXPECT_EQ(e.grid(7 * 64, 512).x, 8u);  // (the launch widens x by the slices)
  codegen::KernelEntry lone = e;
  lone.cluster_m = 1;
  EXPECT_EQ(lone.grid(7 * 64, 512).y, 7u);
  // The persistent pair keeps its own walk and __cluster_dims__.
  lone.cluster_m = 2;
  lone.persistent = true;
  EXPECT_FALSE(lone.paired());
}

TEST(ClusterPair, KernelBlocks) {
  const std::optional<cli::Compiled> c = compile(kConvPair);
  ASSERT_TRUE(c);
  const std::string& k = c->kernel.source;
  // The cluster's shape is the launch's (S x 2), not __cluster_dims__.
  EXPECT_EQ(k.find("__cluster_dims__"), std::string::npos);
  EXPECT_NE(k.find("%%cluster_ctaid.y"), std::string::npos);
  EXPECT_NE(k.find("const unsigned short pair_mask = (1u << split_rank) | (1u << (split_rank + "
                   "split_slices));"),
            std::string::npos);
  // Each CTA multicasts its half of the filters' rows of both 128-byte panels of k.
  EXPECT_NE(k.find("tma_load_2d_multicast(sb + p * 8192u + crank * 4096u, tma_b, full, k0 + p * "
                   "128, tile_n0 + crank * 32, pair_mask);"),
            std::string::npos);
  // A stage is freed in both tiles' CTAs only where it will be refilled, so
  // no CTA waits at the end for the other.
  EXPECT_NE(k.find("(it - 1) + 4 < iters && threadIdx.x % 32 < 2) mbar_arrive_cluster(empty_bar + "
                   "8 * ((it - 1) % 4), split_rank + (threadIdx.x % 32) * split_slices);"),
            std::string::npos);
  EXPECT_NE(k.find("cluster_sync();  // both CTAs' barriers are ready"), std::string::npos);
  EXPECT_EQ(k.find("cluster_sync();  // no CTA leaves"), std::string::npos);
  // The split's remote sums go to the slice's CTA of this tile.
  EXPECT_NE(k.find("cta = split_cta(cta);"), std::string::npos);
}

TEST(ClusterPair, RulesSayWhatIsNotBuilt) {
  const std::string base = kConvPair;
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string t = base;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  EXPECT_NE(error_of(with("cluster 2x1", "cluster 1x2"))
                .find("'cluster 1x2' is not implemented with 'split_k' yet"),
            std::string::npos);
  EXPECT_NE(error_of(with("split_k 2", "split_k 8"))
                .find("'cluster 2x1' with 'split_k 8' makes clusters of 16 CTAs, more than a "
                      "portable cluster's 8: use at most 'split_k 4' with it"),
            std::string::npos);
  EXPECT_NE(
      error_of(with("split_k 2\nhalo\n", "")).find("'cluster' needs 'persistent' or 'split_k'"),
      std::string::npos);
  EXPECT_NE(error_of(with("warp_specialize\n", "")).find("'cluster' needs 'warp_specialize'"),
            std::string::npos);
  // A GEMM pair on a grouped raster is not built; the row-major one is.
  const std::string gemm =
      "dtype f16\ntile 128x128x64\nwarp 64x128\nwgmma f16\ntma\nstages 3\nswizzle smem\n"
      "warp_specialize\nsplit_k 2\ncluster 2x1\n";
  EXPECT_TRUE(compile(gemm));
  EXPECT_NE(error_of(gemm + "swizzle block 4\n")
                .find("'cluster' with 'split_k' is not implemented with 'swizzle block' yet"),
            std::string::npos);
  // A convolution's clusters are split_k's.
  EXPECT_NE(error_of("conv 8x14x14x64 filter 64x3x3 pad 1\ndtype s8\ntile 128x64x64\nwarp "
                     "64x64\nwgmma s8\ntma\nstages 4\nswizzle smem\nwarp_specialize\npersistent\n"
                     "cluster 2x1\n")
                .find("'cluster' with 'conv' is not implemented with 'persistent' yet"),
            std::string::npos);
}

}  // namespace
}  // namespace schedc
