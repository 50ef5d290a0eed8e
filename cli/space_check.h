#pragma once
// `schedc check` on a search space (dsl/space.h, docs/tuning.md): how many
// schedules the file describes, how many analysis keeps and why it drops the
// others (counted per rule), and the kept ones ranked by the static model of
// `schedc explain`, best first.

#include <optional>
#include <ostream>
#include <string>

#include "compiler/target.h"
#include "report/json.h"

namespace schedc::cli {

struct SpaceReport {
  int64_t candidates = 0, kept = 0;
};

// Nothing when `text` (the file at `path`, read once by the caller: it may
// be a pipe) holds no set: an ordinary schedule, to check as one. Otherwise
// prints the space's report to `out` (diagnostics of the space's own syntax
// to `err`) and returns it; kept == 0 when every candidate was dropped,
// candidates == 0 when the space itself is malformed or too large.
std::optional<SpaceReport> check_space(const std::string& path, const std::string& text,
                                       const compiler::Target& target, int top, std::ostream& out,
                                       std::ostream& err);

// check_space as `check --json` writes it: nothing for a file with no set;
// else {"file", "arch", "ok" (analysis keeps some), "space": {"candidates",
// "sets" [{line, column, choices}], "kept", "dropped" [{rule, candidates}]
// (most first), "ranked" [{rank, choices, schedule, model: {bound_tflops,
// intensity_global, intensity_shared, occupancy}}] (the first `top`)}}.
// Diagnostics of a malformed space go to `err` ("candidates" 0).
std::optional<report::Json> space_json(const std::string& path, const std::string& text,
                                       const compiler::Target& target, int top, std::ostream& err);

}  // namespace schedc::cli
