// dsl::parse and the grammar: the Ast it builds (keywords, arguments, spans),
// statement separators, and syntax errors with their places.
#include "dsl/parse.h"

#include <gtest/gtest.h>

#include <random>
#include <sstream>
#include <tao/pegtl/contrib/analyze.hpp>

#include "dsl/grammar.h"

using namespace schedc::dsl;

namespace {

struct Parsed {
  std::optional<Ast> ast;
  std::string errors;  // printed diagnostics
  std::vector<Diagnostic> diags;
};

Parsed parse_text(const std::string& text) {
  SourceFile f("t.sched", text);
  Diagnostics d(&f);
  Parsed p;
  p.ast = parse(f, d);
  std::ostringstream os;
  d.print(os);
  p.errors = os.str();
  p.diags = d.all();
  return p;
}

}  // namespace

TEST(Grammar, HasNoLoopsOrEmptyRepetitions) {
  // PEGTL's analysis finds rules that could loop without consuming input.
  EXPECT_EQ(tao::pegtl::analyze<grammar::file>(0), 0u);
  EXPECT_EQ(tao::pegtl::analyze<grammar::line>(0), 0u);
}

TEST(Parse, BuildsDirectivesWithArgumentsAndSpans) {
  Parsed p = parse_text("tile 128x64x8\nthread 8x4 split 2x1\n");
  ASSERT_TRUE(p.ast) << p.errors;
  ASSERT_EQ(p.ast->directives.size(), 2u);
  const Directive& tile = p.ast->directives[0];
  EXPECT_EQ(tile.keyword, "tile");
  EXPECT_EQ(tile.keyword_span.line, 1u);
  EXPECT_EQ(tile.keyword_span.col, 1u);
  ASSERT_EQ(tile.args.size(), 1u);
  EXPECT_EQ(tile.args[0].kind, Arg::Kind::dims);
  EXPECT_EQ(tile.args[0].values, (std::vector<int64_t>{128, 64, 8}));
  EXPECT_EQ(tile.args[0].span.col, 6u);
  EXPECT_EQ(tile.args[0].span.length, 8u);
  ASSERT_EQ(tile.args[0].value_spans.size(), 3u);
  EXPECT_EQ(tile.args[0].value_spans[1].col, 10u);  // "64"
  EXPECT_EQ(tile.args[0].value_spans[2].col, 13u);  // "8"
  EXPECT_EQ(tile.span.length, 13u);                 // the whole statement

  const Directive& thread = p.ast->directives[1];
  EXPECT_EQ(thread.keyword, "thread");
  ASSERT_EQ(thread.args.size(), 3u);
  EXPECT_EQ(thread.args[1].kind, Arg::Kind::word);
  EXPECT_EQ(thread.args[1].text, "split");
  EXPECT_EQ(thread.args[2].values, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(thread.args[2].span.line, 2u);
  EXPECT_EQ(thread.args[2].span.col, 18u);
}

TEST(Parse, StatementsEndAtSemicolonOrNewlineWithCommentsAndCrlf) {
  Parsed p = parse_text(
      "# header\r\n\r\n  tile 64x64x8 ;thread 4x4;; # two\r\n\tvectorize "
      "2\t\r\n;\r\ndouble_buffer");
  ASSERT_TRUE(p.ast) << p.errors;
  std::vector<std::string> kws;
  for (const Directive& d : p.ast->directives) kws.push_back(d.keyword);
  EXPECT_EQ(kws, (std::vector<std::string>{"tile", "thread", "vectorize", "double_buffer"}));
  EXPECT_EQ(p.ast->directives[2].keyword_span.line, 4u);
  EXPECT_EQ(p.ast->directives[2].keyword_span.col, 2u);
  EXPECT_EQ(p.ast->directives[3].keyword_span.line, 6u);
}

TEST(Parse, EveryDirectiveForm) {
  Parsed p = parse_text(
      "shape 1x2x3\ndtype bf16\nblock 8x4\ntile 1x2x3\nthread 1x2\nwarp 3x4\nvectorize 8\n"
      "transpose B\npad A 3\nswizzle smem\nswizzle block 4\ndouble_buffer\nstages 3\n"
      "wmma f16 32x8x16\nmma tf32 m16n8k4\nepilogue alpha -2e-1 beta .5 bias relu\n");
  ASSERT_TRUE(p.ast) << p.errors;
  const auto& d = p.ast->directives;
  ASSERT_EQ(d.size(), 16u);
  EXPECT_EQ(d[8].args[0].text, "A");
  EXPECT_EQ(d[8].args[1].values[0], 3);
  EXPECT_EQ(d[10].args[0].text, "block");
  EXPECT_EQ(d[10].args[1].values[0], 4);
  EXPECT_EQ(d[13].args[1].values, (std::vector<int64_t>{32, 8, 16}));
  EXPECT_EQ(d[14].args[1].text, "m16n8k4");
  const auto& e = d[15].args;
  ASSERT_EQ(e.size(), 6u);
  EXPECT_EQ(e[0].text, "alpha");
  EXPECT_TRUE(e[1].is_real);
  EXPECT_DOUBLE_EQ(e[1].real, -0.2);
  EXPECT_DOUBLE_EQ(e[3].real, 0.5);
  EXPECT_EQ(e[4].text, "bias");
  EXPECT_EQ(e[5].text, "relu");
}

// `mma T [shape] [truncate]`: the rounding word is the third argument, with
// its span; without a shape the grammar reads it as the shape (analyze says
// to write the shape first).
TEST(Parse, MmaRoundingWordAfterTheShape) {
  Parsed p = parse_text("mma tf32 m16n8k8 truncate\nmma tf32 truncate\nmma f16 16x8x16 bogus\n");
  ASSERT_TRUE(p.ast) << p.errors;
  const auto& d = p.ast->directives;
  ASSERT_EQ(d.size(), 3u);
  ASSERT_EQ(d[0].args.size(), 3u);
  EXPECT_EQ(d[0].args[1].text, "m16n8k8");
  EXPECT_EQ(d[0].args[2].kind, Arg::Kind::word);
  EXPECT_EQ(d[0].args[2].text, "truncate");
  EXPECT_EQ(d[0].args[2].span.line, 1u);
  EXPECT_EQ(d[0].args[2].span.col, 18u);
  EXPECT_EQ(d[0].args[2].span.length, 8u);
  EXPECT_EQ(d[0].span.length, 25u);  // the whole statement, rounding included
  ASSERT_EQ(d[1].args.size(), 2u);
  EXPECT_EQ(d[1].args[1].text, "truncate");
  EXPECT_EQ(d[1].args[1].span.col, 10u);
  ASSERT_EQ(d[2].args.size(), 3u);
  EXPECT_EQ(d[2].args[1].kind, Arg::Kind::dims);
  EXPECT_EQ(d[2].args[2].text, "bogus");
  EXPECT_EQ(d[2].args[2].span.col, 17u);

  // No fourth word, and a number is not a rounding.
  for (const char* text : {"mma tf32 m16n8k8 truncate truncate\n", "mma tf32 m16n8k8 7\n"}) {
    Parsed bad = parse_text(text);
    EXPECT_FALSE(bad.ast) << text;
    ASSERT_EQ(bad.diags.size(), 1u) << text << bad.errors;
    EXPECT_EQ(bad.diags[0].message.rfind("expected ';' or the end of the line", 0), 0u)
        << bad.diags[0].message;
  }
}

TEST(Parse, NumbersKeepSignAndFlagOverflow) {
  Parsed p = parse_text("stages -3\nshape 99999999999999999999999x1x1\n");
  ASSERT_TRUE(p.ast) << p.errors;
  EXPECT_EQ(p.ast->directives[0].args[0].values[0], -3);
  const Arg& big = p.ast->directives[1].args[0];
  EXPECT_TRUE(big.overflow);
  EXPECT_EQ(big.values[0], INT64_MAX);
  EXPECT_EQ(big.values[1], 1);
}

TEST(Parse, UnknownDirectiveSuggestsTheClosest) {
  Parsed p = parse_text("tiel 8x8x8\n");
  EXPECT_FALSE(p.ast);
  ASSERT_EQ(p.diags.size(), 1u);
  EXPECT_EQ(p.diags[0].message, "unknown directive 'tiel'; did you mean 'tile'?");
  EXPECT_EQ(p.diags[0].span.col, 1u);
  EXPECT_EQ(p.diags[0].span.length, 4u);
}

TEST(Parse, ClosestSpelling) {
  const auto& kws = directive_keywords();
  EXPECT_EQ(closest_spelling("tiel", kws), "tile");
  EXPECT_EQ(closest_spelling("TILE", kws), "tile");
  EXPECT_EQ(closest_spelling("vectorise", kws), "vectorize");
  EXPECT_EQ(closest_spelling("stage", kws), "stages");
  EXPECT_EQ(closest_spelling("doublebuffer", kws), "double_buffer");
  EXPECT_EQ(closest_spelling("streamk", kws), "stream_k");
  EXPECT_EQ(closest_spelling("stream", kws), "stream_k");  // `stream-k` stops at the hyphen
  EXPECT_EQ(closest_spelling("frobnicate", kws), "");
  // One letter is not a misspelling of another: no suggestion for 'C'.
  EXPECT_EQ(closest_spelling("C", {"A", "B"}), "");
  EXPECT_EQ(closest_spelling("a", {"A", "B"}), "A");
}

// `stream_k` is a bare keyword: no arguments, its span the word.
TEST(Parse, StreamKIsABareKeyword) {
  Parsed p = parse_text("tile 64x64x8; stream_k\n  stream_k # again\n");
  ASSERT_TRUE(p.ast) << p.errors;
  ASSERT_EQ(p.ast->directives.size(), 3u);
  const Directive& d = p.ast->directives[1];
  EXPECT_EQ(d.keyword, "stream_k");
  EXPECT_TRUE(d.args.empty());
  EXPECT_EQ(d.keyword_span.line, 1u);
  EXPECT_EQ(d.keyword_span.col, 15u);
  EXPECT_EQ(d.keyword_span.length, 8u);
  EXPECT_EQ(d.span.length, 8u);
  EXPECT_EQ(p.ast->directives[2].keyword_span.line, 2u);
  EXPECT_EQ(p.ast->directives[2].keyword_span.col, 3u);

  Parsed arg = parse_text("stream_k 4\n");
  EXPECT_FALSE(arg.ast);
  ASSERT_EQ(arg.diags.size(), 1u) << arg.errors;
  EXPECT_EQ(arg.diags[0].message.rfind("expected ';' or the end of the line", 0), 0u)
      << arg.diags[0].message;
  EXPECT_EQ(arg.diags[0].span.col, 10u);

  Parsed typo = parse_text("streamk\n");
  EXPECT_FALSE(typo.ast);
  ASSERT_EQ(typo.diags.size(), 1u) << typo.errors;
  EXPECT_EQ(typo.diags[0].message, "unknown directive 'streamk'; did you mean 'stream_k'?");
}

TEST(Parse, MalformedDirectiveFailsAtItsPlace) {
  struct Case {
    const char* text;
    uint32_t line, col;
    const char* message_start;
  };
  const Case cases[] = {
      {"tile\n", 1, 5, "expected the block tile BMxBNxBK after 'tile'"},
      {"tile 8x8\n", 1, 6, "'tile' needs 3 extents BMxBNxBK, got 2"},
      {"shape 1x2x3\nthread 8x8 split\n", 2, 17, "expected the pieces PMxPN"},
      {"pad A\n", 1, 6, "expected the padding in elements"},
      {"tile 8x8x8 thread 8x8\n", 1, 12, "expected ';' or the end of the line"},
      {"42\n", 1, 1, "expected a directive"},
      {"epilogue\n", 1, 9, "expected what the epilogue does"},
      {"epilogue alpha\n", 1, 15, "expected a number after 'alpha'"},
      {"swizzle\n", 1, 8, "expected 'smem' or 'block N' after 'swizzle'"},
      {"swizzle block\n", 1, 14, "expected the group size"},
      {"wmma 16x16x16\n", 1, 6, "expected the tensor-core type after 'wmma'"},
  };
  for (const Case& c : cases) {
    Parsed p = parse_text(c.text);
    EXPECT_FALSE(p.ast) << c.text;
    ASSERT_EQ(p.diags.size(), 1u) << c.text << p.errors;
    EXPECT_EQ(p.diags[0].span.line, c.line) << c.text;
    EXPECT_EQ(p.diags[0].span.col, c.col) << c.text;
    EXPECT_EQ(p.diags[0].message.rfind(c.message_start, 0), 0u)
        << c.text << " gave: " << p.diags[0].message;
  }
}

TEST(Parse, ReportsEachBadLine) {
  Parsed p = parse_text("tile 8x8\nwarp\nthread 4x4\nfoo\n");
  EXPECT_FALSE(p.ast);
  ASSERT_EQ(p.diags.size(), 3u) << p.errors;
  EXPECT_EQ(p.diags[0].span.line, 1u);
  EXPECT_EQ(p.diags[1].span.line, 2u);
  EXPECT_EQ(p.diags[2].span.line, 4u);
}

TEST(Parse, KeepsErrorsUpToTheLimitAndCountsTheRest) {
  std::string text;
  for (int i = 0; i < 100; ++i) text += "nope\n";
  SourceFile f("t.sched", text);
  Diagnostics d(&f);  // the default limit, 20
  EXPECT_FALSE(parse(f, d));
  EXPECT_EQ(d.all().size(), size_t(kDefaultErrorLimit));
  EXPECT_EQ(d.error_count(), 100);
  EXPECT_EQ(d.dropped_errors(), 80);
  std::ostringstream os;
  d.print(os);
  EXPECT_NE(os.str().find("t.sched:20:1: error: unknown directive 'nope'"), std::string::npos);
  EXPECT_EQ(os.str().find("t.sched:21:"), std::string::npos);
  EXPECT_NE(os.str().find("t.sched: note: 80 more errors not shown (error limit 20; "
                          "--error-limit 0 shows all)\n"),
            std::string::npos)
      << os.str();
}

TEST(Parse, KeepsAtMostAThousandDirectives) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "tma\n";
  EXPECT_TRUE(parse_text(text).ast);  // 1000 is parsed (analysis says they repeat)
  text += "tma; pad A 4\ntile 8x\n";
  Parsed p = parse_text(text);
  EXPECT_FALSE(p.ast);
  ASSERT_EQ(p.diags.size(), 2u) << p.errors;
  // The syntax of the lines past the limit is still checked...
  EXPECT_EQ(p.diags[0].span.line, 1002u);
  // ... and the directives from the first one past it are not kept.
  EXPECT_EQ(p.diags[1].span.line, 1001u);
  EXPECT_EQ(p.diags[1].span.col, 1u);
  EXPECT_EQ(p.diags[1].message,
            "more than 1000 directives: a schedule gives each directive at most once; the 3 "
            "from here on were not kept");
}

TEST(Parse, ErrorLimitZeroKeepsEveryError) {
  std::string text;
  for (int i = 0; i < 100; ++i) text += "nope\n";
  SourceFile f("t.sched", text);
  Diagnostics d(&f, 0);
  EXPECT_FALSE(parse(f, d));
  EXPECT_EQ(d.all().size(), 100u);
  EXPECT_EQ(d.dropped_errors(), 0);
}

TEST(Parse, EmptyOrCommentOnlyFileIsAnError) {
  for (const char* text : {"", "\n\n", "# only a comment\n  # another\n"}) {
    Parsed p = parse_text(text);
    EXPECT_FALSE(p.ast) << text;
    ASSERT_EQ(p.diags.size(), 1u);
    EXPECT_NE(p.diags[0].message.find("no directives"), std::string::npos);
  }
}

TEST(Parse, BytesOutsideAsciiAreErrorsWithTheirPlace) {
  Parsed p =
      parse_text(std::string("tile 8x8x8\nthread 4\xff"
                             "4\n",
                             21));
  EXPECT_FALSE(p.ast);
  ASSERT_EQ(p.diags.size(), 1u);
  EXPECT_EQ(p.diags[0].span.line, 2u);
  EXPECT_EQ(p.diags[0].span.col, 9u);
  EXPECT_EQ(p.diags[0].message.rfind("invalid byte 0xFF", 0), 0u);

  Parsed nul = parse_text(std::string("tile\0 8x8x8\n", 12));
  ASSERT_EQ(nul.diags.size(), 1u);
  EXPECT_EQ(nul.diags[0].span.col, 5u);
  EXPECT_NE(nul.diags[0].message.find("binary"), std::string::npos);

  // UTF-8 text is fine inside a comment, not outside.
  EXPECT_TRUE(parse_text("tile 8x8x8 # 8\xc3\x97"
                         "8\n")
                  .ast);
  Parsed times = parse_text(
      "tile 8\xc3\x97"
      "8x8\n");
  ASSERT_EQ(times.diags.size(), 1u);
  EXPECT_EQ(times.diags[0].span.col, 7u);
  EXPECT_EQ(times.diags[0].span.length, 2u);
}

TEST(Parse, LongLinesAndWordsAreQuotedShort) {
  std::string word(1 << 20, 'x');
  Parsed p = parse_text(word + "\n");
  ASSERT_EQ(p.diags.size(), 1u);
  EXPECT_LT(p.diags[0].message.size(), 120u);
  EXPECT_NE(p.diags[0].message.find("(1048576 characters)"), std::string::npos);
}

TEST(Parse, NeverThrowsOnRandomBytes) {
  // A quick in-process fuzz; tests/fuzz runs the real one.
  std::mt19937 rng(42);
  const std::string alphabet = "tile thread 0123456789x;#\n\r\t -.eAB_smemwarp\x01\xff\xc3";
  for (int i = 0; i < 2000; ++i) {
    std::string text;
    int n = int(rng() % 64);
    for (int k = 0; k < n; ++k)
      text += rng() % 8 == 0 ? char(rng() % 256) : alphabet[rng() % alphabet.size()];
    Parsed p;
    EXPECT_NO_THROW(p = parse_text(text)) << text;
    EXPECT_TRUE(p.ast.has_value() != !p.diags.empty()) << text;
  }
}
