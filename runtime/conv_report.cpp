#include "runtime/conv_report.h"

#include <cstdio>
#include <sstream>

#include "runtime/report.h"

namespace schedc::runtime {

std::string conv_string(const compiler::Conv2d& c) {
  // The directive's text without its layout word, then the layout's name.
  compiler::Conv2d sizes = c;
  sizes.layout = compiler::ConvLayout::nhwc;
  return compiler::conv_text(sizes) + " " + compiler::to_string(c.layout);
}

std::string conv_title(const compiler::Conv2d& c) {
  return "conv " + conv_string(c) + ": GEMM " + std::to_string(c.gemm_m()) + "x" +
         std::to_string(c.gemm_n()) + "x" + std::to_string(c.gemm_k());
}

void print_conv_block(std::ostream& os, const std::string& label, const std::string& dtype,
                      const ConvReport& r) {
  os << label << "  " << conv_title(r.conv) << " " << dtype << "\n  ";
  if (!r.ok()) {
    os << "FAILED (" << r.failure() << ")\n";
    print_failure_details(os, r);
  } else if (r.validations.empty()) {
    os << "not validated";
  } else {
    const ValidationResult& v = r.validations.front();
    os << "ok: "
       << (v.bit_exact ? "bit-exact"
                       : "rel err " + format_number("%.1e", v.rel_err) + " (tolerance " +
                             format_number("%.1e", v.tolerance) + ")")
       << " vs " << to_string(r.ref_mode) << " on the host's im2col";
  }
  if (r.ok()) os << (r.im2col_checked ? " (GPU im2col = host im2col)" : "") << "\n";
  if (r.entry.fallback) os << "  fallback entry: " << r.entry.why << "\n";
  if (r.ok() && !r.a_copy.empty()) os << "  A " << r.a_copy << "\n";
  if (!r.timed) return;
  const char* unit = rate_unit(dtype);
  const compiler::Problem& p = r.problem;
  auto line = [&](const char* what, const TimingStats& t) {
    os << "  " << what << format_number("%9.3f", t.median_ms) << " ms "
       << format_number("%7.1f", tflops(p, t.median_ms)) << " " << unit;
  };
  line("kernel           ", r.kernel);
  os << "\n";
  if (!r.has_baseline()) {
    os << "  no cuBLAS baseline: " << r.no_baseline << "\n";
    return;
  }
  line("cuBLAS GEMM alone", r.cublas);
  os << "  (kernel at " << format_number("%.1f", r.percent_of_cublas()) << "% of it)\n";
  line("im2col + cuBLAS  ", r.explicit_pipeline);
  os << "  (kernel " << format_number("%.2f", r.x_of_explicit()) << "x faster)\n";
}

report::Json conv_json(const std::string& file, const PreparedKernel& prepared, const ConvReport& r,
                       const report::Json& extra) {
  using report::Json;
  using report::json_number;
  Json o = run_json(file, r.problem, prepared, r, extra);
  const compiler::Conv2d& c = r.conv;
  o["conv"] = {{"text", conv_string(c)},
               {"n", c.n},
               {"h", c.h},
               {"w", c.w},
               {"c", c.c},
               {"k", c.k},
               {"r", c.r},
               {"s", c.s},
               {"p", c.p()},
               {"q", c.q()},
               {"stride", {c.stride_h, c.stride_w}},
               {"pad", {c.pad_h, c.pad_w}},
               {"dilation", {c.dil_h, c.dil_w}},
               {"layout", compiler::to_string(c.layout)}};
  o["im2col_checked"] = r.im2col_checked;
  if (!r.a_copy.empty()) o["a_copy"] = r.a_copy;
  if (r.timed) {
    const bool base = r.has_baseline();
    o["explicit_ms"] = base ? timing_json(r.explicit_pipeline) : Json(nullptr);
    o["explicit_tflops"] =
        base ? json_number(tflops(r.problem, r.explicit_pipeline.median_ms)) : Json(nullptr);
    o["x_of_explicit"] = json_number(r.x_of_explicit());
  }
  return o;
}

}  // namespace schedc::runtime
