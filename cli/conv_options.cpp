#include "cli/conv_options.h"

#include <cctype>
#include <iostream>
#include <sstream>

#include "compiler/analyze.h"
#include "dsl/diagnostics.h"
#include "runtime/conv_args.h"
#include "runtime/conv_report.h"

namespace schedc::cli {

namespace {

// `resnet50` or `resnet50:B`: B in `batch` (1 when absent). False for any
// other text; `bad` set for `resnet50:` followed by something that is not a
// batch of 1 to 65535.
bool resnet50(const std::string& text, int64_t& batch, bool& bad) {
  const std::string word = "resnet50";
  if (text.compare(0, word.size(), word) != 0) return false;
  if (text.size() == word.size()) return batch = 1, true;
  if (text[word.size()] != ':') return false;
  const std::string digits = text.substr(word.size() + 1);
  bad = digits.empty() || digits.size() > 5;
  for (char ch : digits) bad = bad || !std::isdigit(static_cast<unsigned char>(ch));
  if (!bad) batch = std::stoll(digits);
  bad = bad || batch < 1 || batch > 65535;
  return true;
}

}  // namespace

void ConvOptions::add_to(CLI::App* sub, bool many) {
  const std::string help =
      "compute a convolution (a convolution module's; default: its schedule's `conv`): "
      "\"NxHxWxC filter KxRxS [stride A[xB]] [pad A[xB]] [dilation A[xB]] [nhwc|nchw32]\" "
      "(default: the module's layout), or resnet50[:B] for ResNet-50's layers at batch B "
      "(default 1)";
  if (many) {
    option = sub->add_option("--conv", texts, help + "; repeat for more");
  } else {
    option = sub->add_option("--conv", texts, help)->expected(1);
  }
}

std::optional<std::vector<runtime::NamedConv>> ConvOptions::parse(const compiler::Target& target,
                                                                  std::ostream& err) const {
  std::vector<runtime::NamedConv> out;
  bool ok = true;
  for (const std::string& text : texts) {
    int64_t batch = 1;
    bool bad = false;
    if (resnet50(text, batch, bad)) {
      if (bad) {
        err << "--conv: error: '" << text
            << "': expected resnet50 or resnet50:B with a batch B of 1 to 65535\n";
        ok = false;
        continue;
      }
      for (runtime::NamedConv& v : runtime::resnet50_convs(batch)) out.push_back(std::move(v));
      continue;
    }
    const dsl::SourceFile source = compiler::conv_option_source(text);
    dsl::Diagnostics diags(&source);
    std::optional<compiler::Conv2d> conv = compiler::parse_conv_option(source, target, diags);
    if (!conv || diags.has_errors()) {
      diags.print(err);
      ok = false;
      continue;
    }
    // Whether the text names the layout (else the module's applies: convs_for).
    bool layout_given = false;
    std::istringstream words(text);
    for (std::string word; words >> word;)
      layout_given |= compiler::layout_from_word(word).has_value();
    out.push_back({"", *conv, layout_given});
  }
  if (!ok) return std::nullopt;
  return out;
}

std::optional<std::vector<runtime::NamedConv>> convs_for(
    const std::string& file, const Compiled& c, const std::vector<runtime::NamedConv>& given,
    std::ostream& err) {
  const codegen::GeneratedKernel& k = c.kernel;
  if (k.conv.empty() && !given.empty()) {
    err << file
        << ": error: --conv: the schedule computes a GEMM (it has no `conv` directive); "
           "only a convolution module takes a convolution\n";
    return std::nullopt;
  }
  std::vector<runtime::NamedConv> convs;
  const compiler::ConvLayout layout =
      compiler::layout_from_word(k.conv).value_or(compiler::ConvLayout::nhwc);
  for (const runtime::NamedConv& v : given) convs.push_back(runtime::in_layout(v, layout));
  if (convs.empty() && c.schedule.conv) convs.push_back({"", *c.schedule.conv});
  if (convs.empty()) {
    err << file
        << ": error: the schedule computes a convolution but names none: give its `conv` "
           "directive a convolution or run it with --conv SPEC\n";
    return std::nullopt;
  }
  bool ok = true;
  for (const runtime::NamedConv& v : convs)
    if (std::string why = runtime::conv_run_error(v.conv, k.dtype, k.conv); !why.empty()) {
      err << file << ": error: cannot compute " << runtime::conv_string(v.conv)
          << (v.name.empty() ? "" : " (" + v.name + ")") << ": " << why << "\n";
      ok = false;
    }
  if (!ok) return std::nullopt;
  return convs;
}

std::optional<runtime::NamedConv> one_convolution(const std::string& file, const Compiled& c,
                                                  const ConvOptions& opt, std::ostream& err) {
  std::optional<std::vector<runtime::NamedConv>> given = opt.parse(c.target, err);
  if (!given) return std::nullopt;
  std::optional<std::vector<runtime::NamedConv>> convs = convs_for(file, c, *given, err);
  if (!convs) return std::nullopt;
  if (convs->size() != 1) {
    err << "schedc run: error: --conv names " << convs->size()
        << " convolutions; run computes one (`schedc bench FILE --conv resnet50` runs a list)\n";
    return std::nullopt;
  }
  return convs->front();
}

std::string conv_summary(const compiler::Conv2d& conv) {
  return "convolution " + runtime::conv_string(conv) + ": output " + std::to_string(conv.n) + "x" +
         std::to_string(conv.p()) + "x" + std::to_string(conv.q()) + "x" + std::to_string(conv.k) +
         ", GEMM " + std::to_string(conv.gemm_m()) + "x" + std::to_string(conv.gemm_n()) + "x" +
         std::to_string(conv.gemm_k()) +
         " (A the input, B the filters column-major, C the output); offset table " +
         std::to_string(conv.r * conv.s) + " taps, " +
         std::to_string(compiler::offset_table_bytes(conv)) + " B";
}

}  // namespace schedc::cli
