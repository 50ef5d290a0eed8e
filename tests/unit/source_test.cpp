#include "dsl/source.h"

#include <gtest/gtest.h>

#include <sstream>

#include "dsl/diagnostics.h"

using namespace schedc::dsl;

TEST(SourceFile, LinesAndColumns) {
  SourceFile f("g.sched", "tile 128x128x8\nthread 8x8\r\nvectorize 4");
  EXPECT_EQ(f.line_text(1), "tile 128x128x8");
  EXPECT_EQ(f.line_text(2), "thread 8x8");
  EXPECT_EQ(f.line_text(3), "vectorize 4");
  EXPECT_EQ(f.line_text(4), "");
  SourceSpan s = f.span_at(22, 3);  // "8x8" on line 2
  EXPECT_EQ(s.line, 2u);
  EXPECT_EQ(s.col, 8u);
}

TEST(Diagnostics, PrintsPlaceCaretAndNotes) {
  SourceFile f("g.sched", "tile 100x128x8\nthread 8x8\n");
  Diagnostics d(&f);
  d.error(f.span_at(22, 3), "thread tile 8x8 does not divide block tile 100x128")
      .notes.push_back({f.span_at(5, 9), "block tile set here"});
  std::ostringstream os;
  d.print(os);
  EXPECT_EQ(os.str(),
            "g.sched:2:8: error: thread tile 8x8 does not divide block tile 100x128\n"
            "    2 | thread 8x8\n"
            "      |        ^~~\n"
            "g.sched:1:6: note: block tile set here\n"
            "    1 | tile 100x128x8\n"
            "      |      ^~~~~~~~~\n");
  EXPECT_EQ(d.error_count(), 1);
}

TEST(Diagnostics, PastTheLimitErrorsAndWarningsAreCountedNotKept) {
  SourceFile f("g.sched", "tile 8x8x8\n");
  Diagnostics d(&f, 2);
  d.warning(f.span_at(0, 4), "w1");
  d.error(f.span_at(0, 4), "e1");
  d.error(f.span_at(0, 4), "e2").notes.push_back({f.span_at(5, 5), "a note"});
  d.error(f.span_at(0, 4), "e3").notes.push_back({f.span_at(5, 5), "dropped note"});
  d.warning(f.span_at(0, 4), "w2");
  EXPECT_EQ(d.all().size(), 3u);
  EXPECT_EQ(d.error_count(), 3);
  EXPECT_TRUE(d.has_errors());
  EXPECT_EQ(d.dropped_errors(), 1);
  EXPECT_EQ(d.dropped_warnings(), 1);
  std::ostringstream os;
  d.print(os);
  EXPECT_EQ(os.str().find("e3"), std::string::npos);
  EXPECT_EQ(os.str().find("dropped note"), std::string::npos);
  EXPECT_NE(os.str().find("g.sched: note: 1 more error and 1 more warning not shown (error "
                          "limit 2; --error-limit 0 shows all)\n"),
            std::string::npos)
      << os.str();
}
