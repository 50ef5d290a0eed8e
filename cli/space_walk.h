#pragma once
// A search space walked (dsl/space.h, docs/tuning.md): every candidate
// through analysis, the dropped ones counted per rule, the kept ones lowered,
// explained (compiler/explain.h, no GPU) and ranked by that static model,
// best first. `schedc check` prints it (cli/space_check.h); `schedc tune`
// compiles and measures its best (tune/tuner.h).

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "compiler/explain.h"
#include "compiler/target.h"
#include "dsl/space.h"

namespace schedc::cli {

struct SpaceCandidate {
  int64_t index = 0;    // in the space's numbering (dsl::Space::choices_of)
  int model_rank = 0;   // 1 = the model's best
  std::string choices;  // dsl::Space::describe
  compiler::Explanation model;
};

struct SpaceWalk {
  dsl::Space space;
  int64_t candidates = 0;                  // 0: the space is malformed or too large
  std::map<std::string, int64_t> dropped;  // analysis rule (numbers written N) -> candidates
  std::vector<SpaceCandidate> kept;        // ranked, best first

  int64_t kept_count() const { return int64_t(kept.size()); }
};

// Nothing when `text` (the file at `path`) holds no set: an ordinary
// schedule. Otherwise the walk; diagnostics of the space's own syntax (or
// its size) go to `err`, and candidates is then 0.
std::optional<SpaceWalk> walk_space(const std::string& path, const std::string& text,
                                    const compiler::Target& target, std::ostream& err);

// A diagnostic's rule: its message with every number written N.
std::string rule_of(const std::string& message);

}  // namespace schedc::cli
