#include "runtime/report.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace schedc::runtime {

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

std::string shape_string(const compiler::Problem& p) {
  return std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k);
}

double tflops(const compiler::Problem& p, double ms) {
  return ms > 0 ? p.flops() / (ms * 1e-3) / 1e12 : 0;
}

std::string run_line(const std::string& label, const compiler::Problem& p, const std::string& dtype,
                     const RunReport& r) {
  std::ostringstream os;
  os << label << "  " << shape_string(p) << " " << dtype << "  ";
  if (r.ok())
    os << "ok (rel err " << fmt("%.1e", r.rel_err()) << " vs cuBLAS)";
  else
    os << "FAILED (" << r.failure() << ")";
  if (r.timed)
    os << "  " << fmt("%.3g", r.kernel.median_ms) << " ms  "
       << fmt("%.1f", tflops(p, r.kernel.median_ms)) << " TFLOP/s  "
       << fmt("%.1f", r.percent_of_cublas()) << "% of cuBLAS";
  if (r.entry.fallback) os << "  [fallback: " << r.entry.why << "]";
  if (r.entry.repack_a || r.entry.repack_b) os << "  [repack: " << r.entry.why << "]";
  return os.str();
}

void print_failure_details(std::ostream& os, const RunReport& r) {
  for (const ValidationResult& v : r.validations) {
    if (v.ok) continue;
    os << "  " << to_string(v.mode) << " inputs: " << v.failure << "\n";
    os << "    rel err " << fmt("%.2e", v.rel_err);
    if (v.bit_exact)
      os << " (bit-exact agreement required)";
    else
      os << " (tolerance " << fmt("%.1e", v.tolerance) << ")";
    os << "; worst element (" << v.worst.row << ", " << v.worst.col << "): got "
       << fmt("%.9g", v.worst.got) << ", expected " << fmt("%.9g", v.worst.expected) << "\n";
    if (!v.first.empty()) {
      os << "    first mismatches (row, col: got vs expected):";
      for (const Mismatch& m : v.first)
        os << "  (" << m.row << ", " << m.col << ": " << fmt("%.9g", m.got) << " vs "
           << fmt("%.9g", m.expected) << ")";
      os << "\n";
    }
  }
  if (!r.race.empty()) os << "  " << r.race << "\n";
}

std::string json_escape(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          out += fmt("\\u%04x", double(int(c)));
        else
          out += c;
    }
  }
  return out + "\"";
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  return fmt("%.9g", v);
}

std::string run_json(const std::string& file, const compiler::Problem& p,
                     const PreparedKernel& prepared, const RunReport& r,
                     const std::map<std::string, std::string>& extra) {
  std::ostringstream os;
  auto timing = [&](const TimingStats& t) {
    return "{\"median\": " + json_number(t.median_ms) + ", \"min\": " + json_number(t.min_ms) +
           ", \"max\": " + json_number(t.max_ms) + ", \"runs\": " + std::to_string(t.runs) + "}";
  };
  os << "{\"file\": " << json_escape(file) << ", \"m\": " << p.m << ", \"n\": " << p.n
     << ", \"k\": " << p.k << ", \"lda\": " << p.a_ld() << ", \"ldb\": " << p.b_ld()
     << ", \"ldc\": " << p.c_ld() << ", \"dtype\": " << json_escape(prepared.kernel.dtype)
     << ", \"ok\": " << (r.ok() ? "true" : "false") << ", \"failure\": " << json_escape(r.failure())
     << ", \"reference\": " << json_escape(to_string(r.ref_mode))
     << ", \"entry\": {\"name\": " << json_escape(r.entry.name)
     << ", \"fallback\": " << (r.entry.fallback ? "true" : "false")
     << ", \"why\": " << json_escape(r.entry.why) << "}, \"validations\": [";
  for (size_t i = 0; i < r.validations.size(); ++i) {
    const ValidationResult& v = r.validations[i];
    os << (i ? ", " : "") << "{\"mode\": " << json_escape(to_string(v.mode))
       << ", \"ok\": " << (v.ok ? "true" : "false")
       << ", \"bit_exact\": " << (v.bit_exact ? "true" : "false")
       << ", \"rel_err\": " << json_number(v.rel_err)
       << ", \"tolerance\": " << json_number(v.tolerance) << ", \"mismatches\": " << v.mismatches
       << ", \"nan\": " << v.nan_count << ", \"padding_writes\": " << v.padding_writes
       << ", \"worst\": {\"row\": " << v.worst.row << ", \"col\": " << v.worst.col
       << ", \"got\": " << json_number(v.worst.got)
       << ", \"expected\": " << json_number(v.worst.expected) << "}, \"first\": [";
    for (size_t j = 0; j < v.first.size(); ++j)
      os << (j ? ", " : "") << "[" << v.first[j].row << ", " << v.first[j].col << ", "
         << json_number(v.first[j].got) << ", " << json_number(v.first[j].expected) << "]";
    os << "], \"failure\": " << json_escape(v.failure) << "}";
  }
  os << "]";
  if (r.timed) {
    os << ", \"time_ms\": " << timing(r.kernel) << ", \"cublas_ms\": " << timing(r.cublas)
       << ", \"tflops\": " << json_number(tflops(p, r.kernel.median_ms))
       << ", \"cublas_tflops\": " << json_number(tflops(p, r.cublas.median_ms))
       << ", \"percent_of_cublas\": " << json_number(r.percent_of_cublas());
  }
  const JitResult& j = prepared.jit;
  os << ", \"jit\": {\"cache_hit\": " << (j.cache_hit ? "true" : "false")
     << ", \"ms\": " << json_number(j.ms) << ", \"cache\": " << json_escape(j.cache_path)
     << ", \"functions\": {";
  bool first = true;
  for (const auto& [name, f] : j.functions) {
    os << (first ? "" : ", ") << json_escape(name) << ": {\"registers\": " << f.registers
       << ", \"spill_store_bytes\": " << f.spill_store_bytes
       << ", \"spill_load_bytes\": " << f.spill_load_bytes
       << ", \"stack_frame_bytes\": " << f.stack_frame_bytes
       << ", \"shared_bytes\": " << f.shared_bytes << "}";
    first = false;
  }
  os << "}}";
  for (const auto& [key, value] : extra) os << ", " << json_escape(key) << ": " << value;
  os << "}";
  return os.str();
}

}  // namespace schedc::runtime
