#pragma once
// What `schedc tune` prints: the tuning database read back (--show, --csv,
// --plot) and a finished tune's table (docs/tuning.md). Pure formatting over
// tune::Result and tune::Measured rows; no GPU.

#include <ostream>
#include <string>
#include <vector>

#include "tune/database.h"
#include "tune/tuner.h"

namespace schedc::cli {

// One block per key (device, driver, dtype, layout, shape or convolution):
// its rows, the fastest correct first, with the % of cuBLAS measured beside
// each (a convolution's: of cuBLAS's GEMM alone, and x of im2col + cuBLAS).
void print_results(std::ostream& os, const std::vector<tune::Result>& rows);

// Every column, one row per result, RFC 4180 quoting (choices hold commas).
void print_results_csv(std::ostream& os, const std::vector<tune::Result>& rows);

// A bar chart of the correct results of the first key in `rows`, in the
// static model's order (the bars fall from left to right where the model
// ranks well), cuBLAS as a line. Returns the SVG; `title` names the key.
std::string results_svg(const std::vector<tune::Result>& rows, std::string& title);

// A finished tune: one row per candidate (model order) with its figure on
// each column (shape or convolution), then per column the best and the rank
// correlation.
void print_tune_report(std::ostream& os, const tune::TuneReport& report);

}  // namespace schedc::cli
