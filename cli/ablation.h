#pragma once
// Which schedules `schedc ablate` measures, decided on the CPU.
//
// The file's optimization directives (every directive but `shape`, `dtype`
// and `epilogue`, which say what is computed and are kept in every step) are
// numbered 1, 2, … in the order written.
//
// cumulative: step 0 is the naive kernel (the context alone); each further
//   step adds the next directive in `order` (default: as written). A prefix
//   that is not a valid schedule on its own (e.g. `tile 128x128x8` before
//   `thread 8x8` would need 16384 threads) is merged with the directives
//   after it until it is valid; the step's note says so and why.
// leave-one-out: step 0 is the full schedule; step i is the full schedule
//   without directive i. A schedule that is not valid without it is reported
//   as such (with the first error) and not run.

#include <string>
#include <vector>

#include "compiler/target.h"
#include "dsl/ast.h"
#include "dsl/source.h"

namespace schedc::cli {

enum class AblationMode { cumulative, leave_one_out };

struct AblationStep {
  std::string label;          // "naive", "+ tile 128x128x8", "- vectorize 4", "full schedule"
  std::string schedule_text;  // the .sched text of this step
  std::vector<int> added;     // directive numbers added (cumulative) or removed (leave-one-out)
  std::string note;           // why steps were merged, or why this one cannot run
  bool valid = true;
};

// The optimization directives' texts, numbered from 1 (index 0 unused).
std::vector<std::string> optimization_directives(const dsl::SourceFile& file, const dsl::Ast& ast);

// Plans the steps. `order` lists directive numbers (a permutation of 1..n);
// empty = as written. Returns false with `error` set for a bad order.
bool plan_ablation(const dsl::SourceFile& file, const dsl::Ast& ast, AblationMode mode,
                   const std::vector<int>& order, const compiler::Target& target,
                   std::vector<AblationStep>& steps, std::string& error);

// Parses "3,1,2" into numbers; false on malformed text.
bool parse_order(const std::string& text, std::vector<int>& order);

}  // namespace schedc::cli
