#pragma once
// Search spaces (`schedc check` on a space; docs/tuning.md): a schedule file
// may give a set of values where it gives one, written `{a,b,c}`:
//
//   tile {128,256}x128x{8,16}; thread 8x8; stages {2,3,4}; {stream_k,}
//
// Each set is replaced by one of its alternatives, independently, so the
// file describes the cartesian product of its sets: here 2 x 2 x 3 x 2 = 24
// schedules. An alternative may be empty (`{stream_k,}`: the directive on or
// off). Sets are found in the text before parsing (outside comments), so a
// set may stand for any part of a line; each candidate is then an ordinary
// schedule, parsed and checked as one.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dsl/diagnostics.h"
#include "dsl/source.h"

namespace schedc::dsl {

struct SpaceSet {
  SourceSpan span;                   // the set, braces included
  std::vector<std::string> choices;  // trimmed; "" for an empty alternative
};

struct Space {
  std::vector<SpaceSet> sets;  // in the order of the text

  bool empty() const { return sets.empty(); }
  // Candidates: the product of the sets' sizes (saturates at INT64_MAX).
  int64_t size() const;
  // Candidate `index` (0 .. size()-1): its choice in each set, the last set
  // varying fastest.
  std::vector<int> choices_of(int64_t index) const;
  // The text of candidate `index`: `text` with each set replaced by its choice.
  std::string candidate_text(const std::string& text, int64_t index) const;
  // "tile 128x128x{16}"-style: each set's choice, "set 1 = 128, set 2 = ...".
  std::string describe(int64_t index) const;
};

// The sets of `file` (none in a file with bytes that are not ASCII text:
// dsl::parse reports those). Malformed ones (unclosed, nested, a stray `}`, a set of
// one alternative, every alternative empty, more than kMaxSetChoices) are
// reported to `diags` at their place; the result then holds none of them.
Space find_space(const SourceFile& file, Diagnostics& diags);

// Most alternatives a set may have, and most candidates a space may have for
// `schedc check` to walk (a candidate costs a parse and an analysis, tens of
// microseconds).
constexpr size_t kMaxSetChoices = 64;
constexpr int64_t kMaxSpaceCandidates = 200000;

}  // namespace schedc::dsl
