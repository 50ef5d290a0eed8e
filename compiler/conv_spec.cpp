// TEMPORARY (the conv-runtime branch): replaced by the lead's parser when
// the branches merge (compiler/conv_spec.h).
#include "compiler/conv_spec.h"

#include <cctype>
#include <vector>

namespace schedc::compiler {

namespace {

struct Word {
  std::string text;
  uint32_t offset = 0;
};

std::vector<Word> words(const std::string& text) {
  std::vector<Word> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    const size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i > start) out.push_back({text.substr(start, i - start), uint32_t(start)});
  }
  return out;
}

// "A", "AxB", "AxBxC"…: between min_count and max_count whole numbers of at
// most 9 digits, separated by x.
bool numbers(const std::string& w, size_t min_count, size_t max_count, std::vector<int64_t>& out) {
  out.clear();
  size_t i = 0;
  while (i <= w.size()) {
    size_t j = i;
    while (j < w.size() && std::isdigit(static_cast<unsigned char>(w[j]))) ++j;
    if (j == i || j - i > 9) return false;
    out.push_back(std::stoll(w.substr(i, j - i)));
    if (j == w.size()) break;
    if (w[j] != 'x') return false;
    i = j + 1;
  }
  return out.size() >= min_count && out.size() <= max_count;
}

}  // namespace

std::optional<Conv2d> parse_conv_option(const std::string& text, dsl::Diagnostics& diags) {
  const dsl::SourceFile* file = diags.file();
  auto span = [&](const Word& w) {
    return file ? file->span_at(w.offset, uint32_t(w.text.size())) : dsl::SourceSpan{};
  };
  const std::vector<Word> ws = words(text);
  Conv2d conv;
  std::vector<int64_t> v;
  if (ws.empty() || !numbers(ws[0].text, 4, 4, v)) {
    diags.error(ws.empty() ? dsl::SourceSpan{} : span(ws[0]),
                "expected the input as NxHxWxC, e.g. 8x56x56x64");
    return std::nullopt;
  }
  conv.n = v[0], conv.h = v[1], conv.w = v[2], conv.c = v[3];
  if (ws.size() < 3 || ws[1].text != "filter" || !numbers(ws[2].text, 3, 3, v)) {
    diags.error(ws.size() > 1 ? span(ws[1]) : span(ws[0]),
                "expected 'filter KxRxS' after the input, e.g. filter 64x3x3");
    return std::nullopt;
  }
  conv.k = v[0], conv.r = v[1], conv.s = v[2];
  for (size_t i = 3; i < ws.size(); ++i) {
    const std::string& key = ws[i].text;
    if (key == "nhwc" || key == "nchw32") {
      conv.layout = key == "nhwc" ? ConvLayout::nhwc : ConvLayout::nchw32;
      continue;
    }
    if (key != "stride" && key != "pad" && key != "dilation") {
      diags.error(span(ws[i]), "unknown word '" + key +
                                   "' (expected stride, pad, dilation, nhwc or nchw32)");
      return std::nullopt;
    }
    if (i + 1 >= ws.size() || !numbers(ws[i + 1].text, 1, 2, v)) {
      diags.error(span(ws[i]), "expected a number or AxB after '" + key + "'");
      return std::nullopt;
    }
    ++i;
    const int64_t a = v[0], b = v.size() > 1 ? v[1] : v[0];
    if (key == "stride") conv.stride_h = a, conv.stride_w = b;
    if (key == "pad") conv.pad_h = a, conv.pad_w = b;
    if (key == "dilation") conv.dil_h = a, conv.dil_w = b;
  }
  if (std::string why = conv_error(conv); !why.empty()) {
    diags.error(span(ws[0]), "not a convolution schedc computes: " + why);
    return std::nullopt;
  }
  return conv;
}

}  // namespace schedc::compiler
