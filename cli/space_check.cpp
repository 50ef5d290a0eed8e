#include "cli/space_check.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>
#include <vector>

#include "cli/pipeline.h"
#include "compiler/explain.h"
#include "compiler/lower.h"
#include "dsl/space.h"

namespace schedc::cli {

namespace {

// A diagnostic's rule: its message with every number written N, so that
// "thread tile 8x8 does not divide block tile 100x128" and the same with
// other sizes count together.
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

struct Ranked {
  int64_t index = 0;
  compiler::Explanation model;
};

// The model's order: the higher roofline bound first; among equal bounds
// (every candidate that reaches the unit's peak) the higher global, then
// shared, arithmetic intensity (less traffic per FLOP), then the higher
// occupancy (without ptxas's register count it counts threads and shared
// memory only), then the earlier candidate.
bool better(const Ranked& a, const Ranked& b) {
  const compiler::Roofline &ra = a.model.roofline, &rb = b.model.roofline;
  if (ra.bound_tflops != rb.bound_tflops) return ra.bound_tflops > rb.bound_tflops;
  if (ra.intensity_global != rb.intensity_global) return ra.intensity_global > rb.intensity_global;
  if (ra.intensity_shared != rb.intensity_shared) return ra.intensity_shared > rb.intensity_shared;
  if (a.model.occupancy.occupancy != b.model.occupancy.occupancy)
    return a.model.occupancy.occupancy > b.model.occupancy.occupancy;
  return a.index < b.index;
}

}  // namespace

std::optional<SpaceReport> check_space(const std::string& path, const std::string& text,
                                       const compiler::Target& target, int top, std::ostream& out,
                                       std::ostream& err) {
  auto file = std::make_shared<dsl::SourceFile>(path, text);
  dsl::Diagnostics diags(file.get());
  const dsl::Space space = dsl::find_space(*file, diags);
  SpaceReport report;
  if (diags.has_errors()) {
    diags.print(err);
    return report;
  }
  if (space.empty()) return std::nullopt;
  report.candidates = space.size();
  if (report.candidates > dsl::kMaxSpaceCandidates) {
    diags.error(space.sets[0].span,
                "this search space has " +
                    (report.candidates == INT64_MAX ? std::string("more than 2^63")
                                                    : std::to_string(report.candidates)) +
                    " candidates; schedc check walks at most " +
                    std::to_string(dsl::kMaxSpaceCandidates) + ": narrow a set");
    diags.print(err);
    report.candidates = 0;
    return report;
  }
  std::map<std::string, int64_t> dropped;  // rule -> candidates
  std::vector<Ranked> kept;
  for (int64_t i = 0; i < report.candidates; ++i) {
    auto candidate = std::make_shared<dsl::SourceFile>(path, space.candidate_text(text, i));
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
      ++dropped[rule];
      continue;
    }
    const compiler::KernelPlan plan = compiler::lower(c->schedule, target);
    kept.push_back({i, compiler::explain(plan, -1, c->schedule.shape)});
  }
  report.kept = int64_t(kept.size());

  out << "# " << path << ": a search space for " << target.arch_name() << ", " << report.candidates
      << " candidates from " << space.sets.size() << " sets\n";
  for (size_t s = 0; s < space.sets.size(); ++s) {
    const dsl::SpaceSet& set = space.sets[s];
    out << "#   set " << s + 1 << " (line " << set.span.line << ", column " << set.span.col
        << "): ";
    for (size_t k = 0; k < set.choices.size(); ++k)
      out << (k ? ", " : "") << (set.choices[k].empty() ? "(nothing)" : set.choices[k]);
    out << "\n";
  }
  out << "# analysis keeps " << report.kept << ", drops " << report.candidates - report.kept
      << (dropped.empty() ? "" : " (the first error of each, numbers written N):") << "\n";
  std::vector<std::pair<std::string, int64_t>> rules(dropped.begin(), dropped.end());
  std::stable_sort(rules.begin(), rules.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [rule, n] : rules) out << "#   " << n << "  " << rule << "\n";
  if (kept.empty()) return report;
  std::sort(kept.begin(), kept.end(), better);
  const size_t shown = std::min(kept.size(), size_t(std::max(top, 0)));
  out << "# ranked by the static model (explain's roofline bound, intensities, occupancy), "
      << (shown < kept.size() ? "the first " + std::to_string(shown) + " of " : "all ")
      << kept.size() << ":\n";
  for (size_t r = 0; r < shown; ++r) {
    const compiler::Explanation& m = kept[r].model;
    std::ostringstream line;
    line.setf(std::ios::fixed);
    line.precision(1);
    line << "#   " << r + 1 << ". " << space.describe(kept[r].index) << "  bound "
         << m.roofline.bound_tflops << " TFLOP/s, " << m.roofline.intensity_global
         << " FLOP/byte global, " << m.roofline.intensity_shared << " shared, occupancy "
         << 100.0 * m.occupancy.occupancy << "% (threads and shared memory only)";
    out << line.str() << "\n";
  }
  return report;
}

}  // namespace schedc::cli
