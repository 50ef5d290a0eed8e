#include "cli/space_walk.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <sstream>

#include "cli/pipeline.h"
#include "compiler/lower.h"

namespace schedc::cli {

namespace {

// The model's order: candidates predicted to spill registers last (a
// spilling SIMT kernel runs 50-100x slower: issue 19's first tune on an H200);
// then the higher roofline bound first; among equal bounds
// (every candidate that reaches the unit's peak) the higher global, then
// shared, arithmetic intensity (less traffic per FLOP), then the higher
// occupancy (without ptxas's register count it counts threads and shared
// memory, and registers only where setmaxnreg fixes them), then the earlier
// candidate.
bool better(const SpaceCandidate& a, const SpaceCandidate& b) {
  if (a.model.spill_predicted() != b.model.spill_predicted()) return !a.model.spill_predicted();
  const compiler::Roofline &ra = a.model.roofline, &rb = b.model.roofline;
  if (ra.bound_tflops != rb.bound_tflops) return ra.bound_tflops > rb.bound_tflops;
  if (ra.intensity_global != rb.intensity_global) return ra.intensity_global > rb.intensity_global;
  if (ra.intensity_shared != rb.intensity_shared) return ra.intensity_shared > rb.intensity_shared;
  if (a.model.occupancy.occupancy != b.model.occupancy.occupancy)
    return a.model.occupancy.occupancy > b.model.occupancy.occupancy;
  return a.index < b.index;
}

}  // namespace

std::string rule_of(const std::string& message) {
  std::string out;
  for (size_t i = 0; i < message.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(message[i]))) {
      while (i + 1 < message.size() && std::isdigit(static_cast<unsigned char>(message[i + 1])))
        ++i;
      out += 'N';
    } else {
      out += message[i];
    }
  }
  return out;
}

std::optional<SpaceWalk> walk_space(const std::string& path, const std::string& text,
                                    const compiler::Target& target, std::ostream& err) {
  auto file = std::make_shared<dsl::SourceFile>(path, text);
  dsl::Diagnostics diags(file.get());
  SpaceWalk walk;
  walk.space = dsl::find_space(*file, diags);
  if (diags.has_errors()) {
    diags.print(err);
    return walk;
  }
  if (walk.space.empty()) return std::nullopt;
  walk.candidates = walk.space.size();
  if (walk.candidates > dsl::kMaxSpaceCandidates) {
    diags.error(walk.space.sets[0].span,
                "this search space has " +
                    (walk.candidates == INT64_MAX ? std::string("more than 2^63")
                                                  : std::to_string(walk.candidates)) +
                    " candidates; schedc walks at most " +
                    std::to_string(dsl::kMaxSpaceCandidates) + ": narrow a set");
    diags.print(err);
    walk.candidates = 0;
    return walk;
  }
  for (int64_t i = 0; i < walk.candidates; ++i) {
    auto candidate = std::make_shared<dsl::SourceFile>(path, walk.space.candidate_text(text, i));
    std::ostringstream quiet;
    std::vector<dsl::Diagnostic> found;
    std::optional<Compiled> c = check_source(candidate, target, quiet, &found);
    if (!c) {
      std::string rule = "(no diagnostic)";
      for (const dsl::Diagnostic& d : found)
        if (d.severity == dsl::Severity::error) {
          rule = rule_of(d.message);
          break;
        }
      ++walk.dropped[rule];
      continue;
    }
    const compiler::KernelPlan plan = compiler::lower(c->schedule, target);
    SpaceCandidate k;
    k.index = i;
    k.choices = walk.space.describe(i);
    k.model = compiler::explain(plan, -1, c->schedule.shape);
    walk.kept.push_back(std::move(k));
  }
  std::sort(walk.kept.begin(), walk.kept.end(), better);
  for (size_t r = 0; r < walk.kept.size(); ++r) walk.kept[r].model_rank = int(r) + 1;
  return walk;
}

}  // namespace schedc::cli
