#include "runtime/report.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace schedc::runtime {

namespace {

// "(5, 7)" for one GEMM, "C[2][5,7]" for GEMM 2 of a batch.
std::string element_name(const Mismatch& m, bool batched) {
  if (batched)
    return "C[" + std::to_string(m.batch) + "][" + std::to_string(m.row) + "," +
           std::to_string(m.col) + "]";
  return "(" + std::to_string(m.row) + ", " + std::to_string(m.col) + ")";
}

// A value of a mismatch: an s32 output's as the exact integer, a float's as
// before (%.9g).
std::string value_text(double v, bool integer) {
  if (integer && std::isfinite(v)) return std::to_string(int64_t(v));
  return format_number("%.9g", v);
}

// The same as JSON: an integer, or a number (null for NaN).
report::Json value_json(double v, bool integer) {
  if (integer && std::isfinite(v)) return int64_t(v);
  return report::json_number(v);
}

}  // namespace

std::string format_number(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string shape_string(const compiler::Problem& p) {
  std::string s = std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k);
  if (p.batch > 1) s += " batch " + std::to_string(p.batch);
  if (p.batch > 1 && (p.stride_a || p.stride_b || p.stride_c)) s += " (" + strides_string(p) + ")";
  return s;
}

std::string strides_string(const compiler::Problem& p) {
  return "strides A " + std::to_string(p.a_stride()) + ", B " + std::to_string(p.b_stride()) +
         ", C " + std::to_string(p.c_stride());
}

double tflops(const compiler::Problem& p, double ms) {
  return ms > 0 ? p.flops() / (ms * 1e-3) / 1e12 : 0;
}

const char* rate_unit(const std::string& dtype) {
  return dtype == "s8" ? "TOPS" : "TFLOP/s";
}

std::string run_line(const std::string& label, const compiler::Problem& p, const std::string& dtype,
                     const RunReport& r) {
  std::ostringstream os;
  os << label << "  " << shape_string(p) << " " << dtype << "  ";
  if (r.ok())
    os << "ok (rel err " << format_number("%.1e", r.rel_err())
       << (r.ref_mode == RefMode::s8_via_f64 ? " vs cuBLAS f64)" : " vs cuBLAS)");
  else
    os << "FAILED (" << r.failure() << ")";
  if (r.timed) {
    os << "  " << format_number("%.3g", r.kernel.median_ms) << " ms  "
       << format_number("%.1f", tflops(p, r.kernel.median_ms)) << " " << rate_unit(dtype);
    if (r.has_baseline())
      os << "  " << format_number("%.1f", r.percent_of_cublas()) << "% of cuBLAS";
    else
      os << "  no cuBLAS baseline (" << r.no_baseline << ")";
  }
  // One tag: a fallback that also transposes (mma s8) says both in its why.
  if (r.entry.fallback)
    os << "  [fallback: " << r.entry.why << "]";
  else if (r.entry.transpose_a || r.entry.transpose_b)
    os << "  [transpose: " << r.entry.why << "]";
  else if (r.entry.repack_a || r.entry.repack_b)
    os << "  [repack: " << r.entry.why << "]";
  return os.str();
}

void print_failure_details(std::ostream& os, const RunReport& r) {
  for (const ValidationResult& v : r.validations) {
    if (v.ok) continue;
    os << "  " << to_string(v.mode) << " inputs: " << v.failure << "\n";
    os << "    rel err " << format_number("%.2e", v.rel_err);
    if (v.bit_exact)
      os << " (bit-exact agreement required)";
    else
      os << " (tolerance " << format_number("%.1e", v.tolerance) << ")";
    const bool batched = v.batch > 1;
    os << "; worst element " << element_name(v.worst, batched) << ": got "
       << value_text(v.worst.got, v.integer) << ", expected "
       << value_text(v.worst.expected, v.integer) << "\n";
    if (!v.first.empty()) {
      os << "    first mismatches (" << (batched ? "C[GEMM][row,col]" : "row, col")
         << ": got vs expected):";
      for (const Mismatch& m : v.first) {
        if (batched)
          os << "  " << element_name(m, true) << ": ";
        else
          os << "  (" << m.row << ", " << m.col << ": ";
        os << value_text(m.got, v.integer) << " vs " << value_text(m.expected, v.integer)
           << (batched ? "" : ")");
      }
      os << "\n";
    }
  }
  if (!r.race.empty()) os << "  " << r.race << "\n";
}

void add_batch_json(report::Json& o, const compiler::Problem& p) {
  if (p.batch <= 1) return;
  o["batch"] = p.batch;
  o["stride_a"] = p.a_stride();
  o["stride_b"] = p.b_stride();
  o["stride_c"] = p.c_stride();
}

report::Json timing_json(const TimingStats& t) {
  using report::json_number;
  report::Json o = {{"median", json_number(t.median_ms)},
                    {"min", json_number(t.min_ms)},
                    {"max", json_number(t.max_ms)},
                    {"runs", t.runs}};
  if (t.graph_runs > 0) o["graph_runs"] = t.graph_runs;  // each run a replay of this many
  return o;
}

report::Json run_json(const std::string& file, const compiler::Problem& p,
                      const PreparedKernel& prepared, const RunReport& r,
                      const report::Json& extra) {
  using report::Json;
  using report::json_number;
  Json o = {{"file", file},
            {"m", p.m},
            {"n", p.n},
            {"k", p.k},
            {"lda", p.a_ld()},
            {"ldb", p.b_ld()},
            {"ldc", p.c_ld()},
            {"dtype", prepared.kernel.dtype},
            {"ok", r.ok()},
            {"failure", r.failure()},
            {"reference", to_string(r.ref_mode)},
            {"entry",
             {{"name", r.entry.name},
              {"fallback", r.entry.fallback},
              {"repack_a", r.entry.repack_a},
              {"repack_b", r.entry.repack_b},
              {"transpose_a", r.entry.transpose_a},
              {"transpose_b", r.entry.transpose_b},
              {"why", r.entry.why}}}};
  add_batch_json(o, p);
  Json validations = Json::array();
  for (const ValidationResult& v : r.validations) {
    const bool batched = v.batch > 1;
    Json first = Json::array();
    for (const Mismatch& m : v.first) {
      Json e = {m.row, m.col, value_json(m.got, v.integer), value_json(m.expected, v.integer)};
      if (batched) e.push_back(m.batch);
      first.push_back(std::move(e));
    }
    Json worst = {{"row", v.worst.row},
                  {"col", v.worst.col},
                  {"got", value_json(v.worst.got, v.integer)},
                  {"expected", value_json(v.worst.expected, v.integer)}};
    if (batched) worst["batch"] = v.worst.batch;
    validations.push_back({{"mode", to_string(v.mode)},
                           {"ok", v.ok},
                           {"bit_exact", v.bit_exact},
                           {"rel_err", json_number(v.rel_err)},
                           {"tolerance", json_number(v.tolerance)},
                           {"mismatches", v.mismatches},
                           {"nan", v.nan_count},
                           {"padding_writes", v.padding_writes},
                           {"worst", std::move(worst)},
                           {"first", std::move(first)},
                           {"failure", v.failure}});
  }
  o["validations"] = std::move(validations);
  if (r.timed) {  // "tflops": int TOPS for s8
    o["time_ms"] = timing_json(r.kernel);
    const bool base = r.has_baseline();
    o["cublas_ms"] = base ? timing_json(r.cublas) : Json(nullptr);
    o["tflops"] = json_number(tflops(p, r.kernel.median_ms));
    o["cublas_tflops"] = base ? json_number(tflops(p, r.cublas.median_ms)) : Json(nullptr);
    o["percent_of_cublas"] = json_number(r.percent_of_cublas());
    if (!base) o["no_baseline"] = r.no_baseline;
  }
  const JitResult& j = prepared.jit;
  Json functions = Json::object();
  for (const auto& [name, f] : j.functions)
    functions[name] = {{"registers", f.registers},
                       {"spill_store_bytes", f.spill_store_bytes},
                       {"spill_load_bytes", f.spill_load_bytes},
                       {"stack_frame_bytes", f.stack_frame_bytes},
                       {"shared_bytes", f.shared_bytes}};
  o["jit"] = {{"cache_hit", j.cache_hit},
              {"ms", json_number(j.ms)},
              {"cache", j.cache_path},
              {"entries", prepared.entries},
              {"functions", std::move(functions)}};
  if (!r.late.entries.empty())
    o["jit"]["late"] = {{"entries", r.late.entries},
                        {"cache_hit", r.late.jit.cache_hit},
                        {"ms", json_number(r.late.jit.ms)}};
  for (const auto& [key, value] : extra.items()) o[key] = value;
  return o;
}

}  // namespace schedc::runtime
