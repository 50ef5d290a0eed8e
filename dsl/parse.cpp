// dsl::parse: checks the bytes, then runs the grammar (dsl/grammar.h) on each
// line; the actions below build the Ast. A syntax error is reported and the
// parse goes on at the next line, so one run shows the errors of every line
// (those past the error limit only counted: dsl/diagnostics.h).
#include "dsl/parse.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <string_view>

#include "dsl/grammar.h"

namespace schedc::dsl {

namespace {

namespace p = tao::pegtl;
namespace g = grammar;

constexpr size_t kMaxShown = 40;  // longest word quoted whole in a message
// A valid schedule gives each directive at most once (a few dozen in all);
// past this many the parser checks the syntax of the rest but keeps none, so
// a hostile file's Ast stays small (memory flat, not ~350 bytes a directive).
constexpr size_t kMaxDirectives = 1000;

// An error found by an action, with its own place (the must<> errors of the
// grammar come as p::parse_error instead).
struct SyntaxError {
  uint32_t offset, length;
  std::string message;
};

std::string quote_word(std::string_view word) {
  if (word.size() <= kMaxShown) return "'" + std::string(word) + "'";
  return "'" + std::string(word.substr(0, kMaxShown)) + "...' (" + std::to_string(word.size()) +
         " characters)";
}

struct State {
  const SourceFile& file;
  Ast ast;
  // Directives past kMaxDirectives: the latest is built here, then dropped.
  Directive scratch;
  size_t dropped = 0;
  SourceSpan first_dropped;

  uint32_t offset_of(const char* p) const { return uint32_t(p - file.text().data()); }
  SourceSpan span_of(const char* begin, size_t size) const {
    return file.span_at(offset_of(begin), uint32_t(size));
  }
  Directive& current() { return dropped ? scratch : ast.directives.back(); }
};

// ---- actions ------------------------------------------------------------------
template <typename Rule>
struct action : p::nothing<Rule> {};

// A directive keyword opens a new Directive.
struct begin_directive {
  template <typename ActionInput>
  static void apply(const ActionInput& in, State& st) {
    Directive d;
    d.keyword = in.string();
    d.keyword_span = st.span_of(in.begin(), in.size());
    if (st.ast.directives.size() < kMaxDirectives) {
      st.ast.directives.push_back(std::move(d));
      return;
    }
    if (st.dropped++ == 0) st.first_dropped = d.keyword_span;
    st.scratch = std::move(d);
  }
};

// A word argument (f32, A, smem, split, alpha, …).
struct word_arg {
  template <typename ActionInput>
  static void apply(const ActionInput& in, State& st) {
    Arg a;
    a.kind = Arg::Kind::word;
    a.text = in.string();
    a.span = st.span_of(in.begin(), in.size());
    st.current().args.push_back(std::move(a));
  }
};

// Decimal digits with an optional sign; saturates (and flags) past int64.
int64_t to_int(std::string_view text, bool& overflow) {
  bool neg = !text.empty() && text[0] == '-';
  size_t i = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
  int64_t v = 0;
  for (; i < text.size(); ++i) {
    int d = text[i] - '0';
    if (v > (INT64_MAX - d) / 10) {
      overflow = true;
      return neg ? INT64_MIN : INT64_MAX;
    }
    v = v * 10 + d;
  }
  return neg ? -v : v;
}

Arg number_arg(std::string_view text, SourceSpan span) {
  Arg a;
  a.kind = Arg::Kind::number;
  a.text = std::string(text);
  a.span = span;
  bool real = text.find_first_of(".eE") != std::string_view::npos;
  a.is_real = real;
  a.real = std::strtod(a.text.c_str(), nullptr);  // the grammar checked the form
  if (!real) a.values.push_back(to_int(text, a.overflow));
  a.value_spans.push_back(span);
  return a;
}

// An integer or real argument.
struct number_action {
  template <typename ActionInput>
  static void apply(const ActionInput& in, State& st) {
    st.current().args.push_back(number_arg(in.string_view(), st.span_of(in.begin(), in.size())));
  }
};

// MxNxK-style extents; `Count` of them, else an error naming the form.
template <size_t Count>
struct extents_action {
  template <typename ActionInput>
  static void apply(const ActionInput& in, State& st) {
    Arg a;
    a.kind = Arg::Kind::dims;
    a.text = in.string();
    a.span = st.span_of(in.begin(), in.size());
    size_t start = 0;
    while (start <= a.text.size()) {
      size_t x = a.text.find('x', start);
      if (x == std::string::npos) x = a.text.size();
      a.values.push_back(to_int(std::string_view(a.text).substr(start, x - start), a.overflow));
      a.value_spans.push_back(st.span_of(in.begin() + start, x - start));
      start = x + 1;
    }
    if (Count != 0 && a.values.size() != Count) {
      const std::string& kw = st.current().keyword;
      std::string form = kw == "shape"     ? "MxNxK"
                         : kw == "tile"    ? "BMxBNxBK"
                         : kw == "wmma"    ? "MxNxK"
                         : kw == "warp"    ? "WMxWN"
                         : kw == "block"   ? "XxY"
                         : kw == "cluster" ? "CMxCN"
                         : kw == "conv"    ? (st.current().args.empty() ? "NxHxWxC" : "KxRxS")
                                           : "MxN";
      if (kw == "thread") form = st.current().args.empty() ? "TMxTN" : "PMxPN";
      throw SyntaxError{st.offset_of(in.begin()), uint32_t(in.size()),
                        "'" + kw + "' needs " + std::to_string(Count) + " extents " + form +
                            ", got " + std::to_string(a.values.size()) + " (" + quote_word(a.text) +
                            ")"};
    }
    st.current().args.push_back(std::move(a));
  }
};

// The mma / wgmma instruction shape: a word (m16n8k16) or, wrongly, extents
// (analyze says how to write it).
struct shape_word_action {
  template <typename ActionInput>
  static void apply(const ActionInput& in, State& st) {
    if (std::isdigit((unsigned char)in.peek_char(0)) || in.peek_char(0) == '-' ||
        in.peek_char(0) == '+') {
      Arg a;
      a.kind = Arg::Kind::dims;
      a.text = in.string();
      a.span = st.span_of(in.begin(), in.size());
      st.current().args.push_back(std::move(a));
    } else {
      word_arg::apply(in, st);
    }
  }
};
template <>
struct action<g::mma_shape> : shape_word_action {};
template <>
struct action<g::wgmma_shape> : shape_word_action {};

struct unknown_directive_action {
  template <typename ActionInput>
  static void apply(const ActionInput& in, State& st) {
    std::string word = in.string();
    std::string msg = "unknown directive " + quote_word(word);
    std::string guess = closest_spelling(word, directive_keywords());
    if (!guess.empty()) msg += "; did you mean '" + guess + "'?";
    throw SyntaxError{st.offset_of(in.begin()), uint32_t(in.size()), msg};
  }
};

// The whole statement's span, from keyword to last argument.
template <>
struct action<g::directive> {
  template <typename ActionInput>
  static void apply(const ActionInput& in, State& st) {
    st.current().span = st.span_of(in.begin(), in.size());
  }
};

// clang-format off
template <> struct action<g::kw_shape> : begin_directive {};
template <> struct action<g::kw_dtype> : begin_directive {};
template <> struct action<g::kw_block> : begin_directive {};
template <> struct action<g::kw_tile> : begin_directive {};
template <> struct action<g::kw_thread> : begin_directive {};
template <> struct action<g::kw_warp> : begin_directive {};
template <> struct action<g::kw_vectorize> : begin_directive {};
template <> struct action<g::kw_transpose> : begin_directive {};
template <> struct action<g::kw_pad> : begin_directive {};
template <> struct action<g::kw_layout> : begin_directive {};
template <> struct action<g::kw_batch> : begin_directive {};
template <> struct action<g::kw_swizzle> : begin_directive {};
template <> struct action<g::kw_double_buffer> : begin_directive {};
template <> struct action<g::kw_stages> : begin_directive {};
template <> struct action<g::kw_tma> : begin_directive {};
template <> struct action<g::kw_stream_k> : begin_directive {};
template <> struct action<g::kw_split_k> : begin_directive {};
template <> struct action<g::kw_wmma> : begin_directive {};
template <> struct action<g::kw_mma> : begin_directive {};
template <> struct action<g::kw_wgmma> : begin_directive {};
template <> struct action<g::kw_warp_specialize> : begin_directive {};
template <> struct action<g::kw_persistent> : begin_directive {};
template <> struct action<g::kw_halo> : begin_directive {};
template <> struct action<g::kw_blocks_per_sm> : begin_directive {};
template <> struct action<g::kw_tma_store> : begin_directive {};
template <> struct action<g::kw_cluster> : begin_directive {};
template <> struct action<g::kw_epilogue> : begin_directive {};
template <> struct action<g::kw_conv> : begin_directive {};
template <> struct action<g::unknown_directive> : unknown_directive_action {};

template <> struct action<g::kw_split> : word_arg {};
template <> struct action<g::kw_swizzle_block> : word_arg {};
template <> struct action<g::kw_alpha> : word_arg {};
template <> struct action<g::kw_beta> : word_arg {};
template <> struct action<g::kw_stride> : word_arg {};
template <> struct action<g::kw_dilation> : word_arg {};
template <> struct action<g::kw_conv_pad> : word_arg {};
template <> struct action<g::conv_layout> : word_arg {};
template <> struct action<g::dtype_name> : word_arg {};
template <> struct action<g::transpose_operand> : word_arg {};
template <> struct action<g::consumer_order> : word_arg {};
template <> struct action<g::halo_form> : word_arg {};
template <> struct action<g::pad_operand> : word_arg {};
template <> struct action<g::layout_operand> : word_arg {};
template <> struct action<g::layout_order> : word_arg {};
template <> struct action<g::swizzle_kind> : word_arg {};
template <> struct action<g::wmma_type> : word_arg {};
template <> struct action<g::mma_type> : word_arg {};
template <> struct action<g::mma_rounding> : word_arg {};
template <> struct action<g::wgmma_type> : word_arg {};
template <> struct action<g::epilogue_word> : word_arg {};

template <> struct action<g::vector_width> : number_action {};
template <> struct action<g::pad_amount> : number_action {};
template <> struct action<g::batch_count> : number_action {};
template <> struct action<g::swizzle_group> : number_action {};
template <> struct action<g::stage_count> : number_action {};
template <> struct action<g::blocks_per_sm_count> : number_action {};
template <> struct action<g::split_k_count> : number_action {};
template <> struct action<g::alpha_value> : number_action {};
template <> struct action<g::beta_value> : number_action {};

template <> struct action<g::shape_extents> : extents_action<3> {};
template <> struct action<g::block_extents> : extents_action<2> {};
template <> struct action<g::tile_extents> : extents_action<3> {};
template <> struct action<g::thread_extents> : extents_action<2> {};
template <> struct action<g::split_extents> : extents_action<2> {};
template <> struct action<g::warp_extents> : extents_action<2> {};
template <> struct action<g::cluster_extents> : extents_action<2> {};
template <> struct action<g::wmma_extents> : extents_action<3> {};
template <> struct action<g::conv_input> : extents_action<4> {};
template <> struct action<g::conv_filter> : extents_action<3> {};
template <> struct action<g::conv_stride> : extents_action<0> {};  // 1 or 2: analyze counts
template <> struct action<g::conv_pad> : extents_action<0> {};
template <> struct action<g::conv_dilation> : extents_action<0> {};
// clang-format on

// ---- bytes ----------------------------------------------------------------------
// Length of a well-formed UTF-8 sequence starting at s[i] (2..4), or 0.
size_t utf8_length(std::string_view s, size_t i) {
  unsigned char c = s[i];
  size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
  if (c >= 0xF5) n = 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if (((unsigned char)s[i + k] & 0xC0) != 0x80) return 0;
  unsigned char c1 = s[i + 1];
  if (c == 0xE0 && c1 < 0xA0) return 0;   // overlong
  if (c == 0xED && c1 >= 0xA0) return 0;  // surrogates
  if (c == 0xF0 && c1 < 0x90) return 0;   // overlong
  if (c == 0xF4 && c1 >= 0x90) return 0;  // past U+10FFFF
  return n;
}

std::string hex_byte(unsigned char c) {
  const char* digits = "0123456789ABCDEF";
  return std::string("0x") + digits[c >> 4] + digits[c & 15];
}

// The language is ASCII; comments may also hold UTF-8 text. Returns false
// (after reporting the first bad byte) for a line that must not be parsed.
bool check_bytes(const SourceFile& file, uint32_t begin, uint32_t end, Diagnostics& diags) {
  std::string_view text(file.text());
  bool in_comment = false;
  for (uint32_t i = begin; i < end; ++i) {
    unsigned char c = text[i];
    if (c == '#') in_comment = true;
    if (c == '\t' || (c >= 0x20 && c < 0x7f)) continue;
    if (c == '\r' && i + 1 == end) continue;  // CRLF
    if (c >= 0x80) {
      size_t n = utf8_length(text, i);
      if (n != 0 && in_comment) {
        i += uint32_t(n - 1);
        continue;
      }
      if (n != 0) {
        diags.error(file.span_at(i, uint32_t(n)),
                    "non-ASCII character outside a comment (.sched files are ASCII text)");
      } else {
        diags.error(file.span_at(i, 1), "invalid byte " + hex_byte(c) +
                                            " (not UTF-8 text; .sched files are ASCII text)");
      }
      return false;
    }
    std::string what = c == '\r' ? "carriage return not followed by a new line"
                                 : "control character " + hex_byte(c);
    diags.error(file.span_at(i, 1), what + " in the source (.sched files are ASCII text)");
    return false;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::string closest_spelling(const std::string& word, const std::vector<std::string>& choices) {
  auto lower = [](std::string s) {
    for (char& c : s) c = char(std::tolower((unsigned char)c));
    return s;
  };
  std::string best;
  size_t best_d = 3;
  for (const std::string& choice : choices) {
    if (lower(word) == lower(choice)) return choice;
    if (word.size() > choice.size() + 2 || choice.size() > word.size() + 2) continue;
    // Edit distance with adjacent transpositions (tiel -> tile is one edit).
    const std::string& a = word;
    const std::string& b = choice;
    std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
    for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (size_t i = 1; i <= a.size(); ++i)
      for (size_t j = 1; j <= b.size(); ++j) {
        size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
        d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
          d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    size_t dist = d[a.size()][b.size()];
    if (dist < best_d && dist < word.size()) {
      best_d = dist;
      best = choice;
    }
  }
  return best;
}

std::optional<Ast> parse(const SourceFile& file, Diagnostics& diags) {
  const std::string& text = file.text();
  State st{file, {}, {}, 0, {}};
  int errors_before = diags.error_count();

  // NUL bytes mean a binary file: one error, not one per line.
  size_t nul = text.find('\0');
  if (nul != std::string::npos) {
    diags.error(file.span_at(uint32_t(nul), 1),
                "NUL byte in the source: this looks like a binary file, not a .sched schedule");
    return std::nullopt;
  }
  if (text.size() > UINT32_MAX / 2) {
    diags.error({}, "file too large for a schedule");
    return std::nullopt;
  }

  uint32_t line_no = 1;
  for (size_t begin = 0; begin < text.size() || (begin == 0 && text.empty());) {
    size_t nl = text.find('\n', begin);
    size_t end = nl == std::string::npos ? text.size() : nl;
    size_t next = nl == std::string::npos ? text.size() : nl + 1;
    if (check_bytes(file, uint32_t(begin), uint32_t(end), diags)) {
      size_t stop = end;
      if (stop > begin && text[stop - 1] == '\r') --stop;  // CRLF
      p::memory_input<> in(text.data() + begin, text.data() + stop, file.name(), begin, line_no, 1);
      try {
        p::parse<g::line, action, g::control>(in, st);
      } catch (const p::parse_error& e) {
        const p::position& pos = e.positions().front();
        // Point at the rest of the offending word, not just one byte.
        std::string_view rest(text.data() + pos.byte, stop - pos.byte);
        size_t len = std::min(rest.find_first_of(" \t;#"), rest.size());
        diags.error(file.span_at(uint32_t(pos.byte), uint32_t(std::max<size_t>(len, 1))),
                    std::string(e.message()));
      } catch (const SyntaxError& e) {
        diags.error(file.span_at(e.offset, e.length), e.message);
      }
    }
    ++line_no;
    if (nl == std::string::npos) break;
    begin = next;
  }
  if (st.dropped)
    diags.error(st.first_dropped,
                "more than " + std::to_string(kMaxDirectives) +
                    " directives: a schedule gives each directive at most once; the " +
                    std::to_string(st.dropped) + " from here on were not kept");
  if (diags.error_count() > errors_before) return std::nullopt;

  if (st.ast.directives.empty()) {
    bool blank = trim(text).find_first_not_of("\r\n") == std::string_view::npos;
    diags.error(file.span_at(0, 0),
                std::string(blank ? "empty file" : "the file has only comments") +
                    ": no directives; the naive kernel is written e.g. 'block 16x16'");
    return std::nullopt;
  }
  return std::move(st.ast);
}

}  // namespace schedc::dsl
