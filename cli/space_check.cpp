#include "cli/space_check.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "cli/space_walk.h"

namespace schedc::cli {

std::optional<SpaceReport> check_space(const std::string& path, const std::string& text,
                                       const compiler::Target& target, int top, std::ostream& out,
                                       std::ostream& err) {
  std::optional<SpaceWalk> walk = walk_space(path, text, target, err);
  if (!walk) return std::nullopt;
  SpaceReport report;
  report.candidates = walk->candidates;
  report.kept = walk->kept_count();
  if (walk->candidates == 0) return report;
  const dsl::Space& space = walk->space;
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
      << (walk->dropped.empty() ? "" : " (the first error of each, numbers written N):") << "\n";
  std::vector<std::pair<std::string, int64_t>> rules(walk->dropped.begin(), walk->dropped.end());
  std::stable_sort(rules.begin(), rules.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [rule, n] : rules) out << "#   " << n << "  " << rule << "\n";
  if (walk->kept.empty()) return report;
  const size_t shown = std::min(walk->kept.size(), size_t(std::max(top, 0)));
  out << "# ranked by the static model (predicted register spills last, then explain's roofline "
         "bound, intensities, occupancy), "
      << (shown < walk->kept.size() ? "the first " + std::to_string(shown) + " of " : "all ")
      << walk->kept.size() << ":\n";
  for (size_t r = 0; r < shown; ++r) {
    const compiler::Explanation& m = walk->kept[r].model;
    std::ostringstream line;
    line.setf(std::ios::fixed);
    line.precision(1);
    line << "#   " << r + 1 << ". " << walk->kept[r].choices << "  bound "
         << m.roofline.bound_tflops << " TFLOP/s, " << m.roofline.intensity_global
         << " FLOP/byte global, " << m.roofline.intensity_shared << " shared, occupancy "
         << 100.0 * m.occupancy.occupancy
         << "% (threads and shared memory; registers only where setmaxnreg fixes them)";
    if (m.spill_predicted())
      line << ", spills predicted (~" << m.registers_estimate << " registers a thread, at most "
           << m.registers_limit << ")";
    out << line.str() << "\n";
  }
  return report;
}

std::optional<report::Json> space_json(const std::string& path, const std::string& text,
                                       const compiler::Target& target, int top, std::ostream& err) {
  using report::Json;
  std::optional<SpaceWalk> walk = walk_space(path, text, target, err);
  if (!walk) return std::nullopt;
  Json sets = Json::array();
  for (const dsl::SpaceSet& set : walk->space.sets)
    sets.push_back({{"line", set.span.line}, {"column", set.span.col}, {"choices", set.choices}});
  std::vector<std::pair<std::string, int64_t>> rules(walk->dropped.begin(), walk->dropped.end());
  std::stable_sort(rules.begin(), rules.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  Json dropped = Json::array();
  for (const auto& [rule, n] : rules) dropped.push_back({{"rule", rule}, {"candidates", n}});
  Json ranked = Json::array();
  const size_t shown = std::min(walk->kept.size(), size_t(std::max(top, 0)));
  for (size_t r = 0; r < shown; ++r) {
    const SpaceCandidate& c = walk->kept[r];
    const compiler::Explanation& m = c.model;
    ranked.push_back({{"rank", c.model_rank},
                      {"choices", c.choices},
                      {"schedule", walk->space.candidate_text(text, c.index)},
                      {"model",
                       {{"bound_tflops", report::json_number(m.roofline.bound_tflops)},
                        {"intensity_global", report::json_number(m.roofline.intensity_global)},
                        {"intensity_shared", report::json_number(m.roofline.intensity_shared)},
                        {"occupancy", report::json_number(m.occupancy.occupancy)},
                        {"registers_estimate", m.registers_estimate},
                        {"spill_predicted", m.spill_predicted()}}}});
  }
  return Json{{"file", path},
              {"arch", target.arch_name()},
              {"ok", walk->kept_count() > 0},
              {"space",
               {{"candidates", walk->candidates},
                {"sets", std::move(sets)},
                {"kept", walk->kept_count()},
                {"dropped", std::move(dropped)},
                {"ranked", std::move(ranked)}}}};
}

}  // namespace schedc::cli
