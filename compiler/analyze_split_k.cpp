// compiler::analyze's `split_k N` rules (see compiler/analyze.cpp for the
// passes): what it cannot be combined with yet, and the room its partial sums
// need (docs/language.md, "`split_k N`").
#include <algorithm>
#include <string>
#include <utility>

#include "compiler/analyze.h"
#include "compiler/analyzer.h"

namespace schedc::compiler::analysis {

// `split_k N`: a tile's CTAs are one cluster of a one-CTA-a-tile grid, each
// summing its own k range. Where the receive area does not fit (SmemUse::
// split_recv_bytes 0), CTAs 1.. leave their sums in their pipeline's shared
// memory for CTA 0 to read, so the stages must hold them (with `halo only`,
// A's region and B's stages: conv_rules has sized the region by then);
// pushed sums need no such room.
void Analyzer::split_k_rules() {
  const Directive* d = given("split_k");
  if (!d || !s_.uses_wgmma() || s_.split_k < 2) return;
  const std::pair<const char*, const char*> apart[] = {
      {"persistent", "a persistent block walks many tiles, a split tile's CTAs one"},
      {"stream_k", "stream_k already splits the last wave's tiles, summing through global memory"}};
  // (`cluster 2x1` pairs the slices of two tiles: cluster_split_k_rules.)
  for (const auto& [key, why] : apart)
    if (const Directive* other = given(key)) {
      auto& e = error(d->keyword_span,
                      "'split_k' is not implemented with '" + std::string(key) + "' yet: " + why);
      e.notes.push_back({other->span, "'" + std::string(key) + "' given here"});
    }
  if (!s_.tile) return;
  const BlockTile& t = *s_.tile;
  const int64_t sums = int64_t(t.m) * t.n * 4;
  // (A's stages, or `halo only`'s region, and B's stages)
  const SmemUse u = smem_use(s_);
  const int64_t stages = u.pipeline() - u.barrier_bytes;
  // Whether `split_k n` would push its sums: its receive area fits (none where the warp tile
  // does not divide the block tile, the tile rules' error).
  const auto pushes = [&](int n) {
    Schedule with = s_;
    with.split_k = n;
    return smem_use(with).split_recv_bytes > 0;
  };
  if (sums > stages && !pushes(s_.split_k)) {
    // The largest split whose sums would be pushed, if any.
    int fits = s_.split_k - 1;
    while (fits >= 2 && !pushes(fits)) --fits;
    const std::string smaller =
        fits >= 2 ? ", or 'split_k " + std::to_string(fits) +
                        "' (its sums fit in a receive area of their own and are pushed)"
                  : "";
    auto& e =
        error(d->keyword_span,
              "'split_k' leaves each CTA's partial sums (" + std::to_string(sums) +
                  " bytes: the tile's 4-byte accumulators) in its pipeline's stages for CTA "
                  "0 to read, but the stages hold " +
                  std::to_string(stages) + " bytes; add stages or use a smaller tile" + smaller);
    note(e, tile_note(), "block tile set here");
    note(e, s_.stages_at, "stages set here");
    if (s_.halo_only)
      note(e, s_.halo_at, "'halo only' given here: A's part of them is the phase images alone");
  }
}

}  // namespace schedc::compiler::analysis
