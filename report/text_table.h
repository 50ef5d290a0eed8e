#pragma once
// A plain text table with aligned columns (bench, ablate): text columns
// left-aligned, numbers right-aligned, two spaces between columns, no
// trailing spaces.

#include <string>
#include <vector>

namespace schedc::report {

// cells[0] is the header row. `left[i]` says whether column i is text.
std::string aligned_table(const std::vector<std::vector<std::string>>& cells,
                          const std::vector<bool>& left);

// `v` formatted by the printf format `f` ("%.1f"); "-" when v is NaN or
// infinite (a step or run with no figure).
std::string number(const char* f, double v);

}  // namespace schedc::report
