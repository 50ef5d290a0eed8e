// Search spaces (dsl/space.h): the sets found in the text and their places,
// the candidates' texts (every combination once, the last set fastest),
// comments left alone, and malformed sets reported where they are.
#include "dsl/space.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

using namespace schedc;

namespace {

dsl::Space space_of(const std::string& text, std::string* errors = nullptr) {
  dsl::SourceFile file("s.sched", text);
  dsl::Diagnostics diags(&file);
  dsl::Space s = dsl::find_space(file, diags);
  std::ostringstream o;
  diags.print(o);
  if (errors) *errors = o.str();
  return s;
}

TEST(Space, SetsTheirPlacesAndEveryCandidateOnce) {
  const std::string text =
      "tile {128,256}x128x{8, 16 }  # {not,a,set}\n{stream_k,}\nstages {2,3,4}\n";
  dsl::Space s = space_of(text);
  ASSERT_EQ(s.sets.size(), 4u);
  EXPECT_EQ(s.sets[0].span.line, 1u);
  EXPECT_EQ(s.sets[0].span.col, 6u);
  EXPECT_EQ(s.sets[0].span.length, 9u);
  EXPECT_EQ(s.sets[1].choices, (std::vector<std::string>{"8", "16"}));  // trimmed
  EXPECT_EQ(s.sets[2].choices, (std::vector<std::string>{"stream_k", ""}));
  EXPECT_EQ(s.sets[3].span.line, 3u);
  EXPECT_EQ(s.size(), 2 * 2 * 2 * 3);
  EXPECT_EQ(s.candidate_text(text, 0), "tile 128x128x8  # {not,a,set}\nstream_k\nstages 2\n");
  EXPECT_EQ(s.candidate_text(text, s.size() - 1), "tile 256x128x16  # {not,a,set}\n\nstages 4\n");
  EXPECT_EQ(s.describe(1), "{128}, {8}, {stream_k}, {3}");  // the last set varies fastest
  std::set<std::string> all;
  for (int64_t i = 0; i < s.size(); ++i) all.insert(s.candidate_text(text, i));
  EXPECT_EQ(int64_t(all.size()), s.size());

  EXPECT_TRUE(space_of("tile 128x128x8; thread 8x8  # {a,b}\n").empty());
}

TEST(Space, MalformedSetsAreErrorsAtTheirPlace) {
  struct Case {
    const char* text;
    const char* error;
  } cases[] = {
      {"tile {128,256x8\n", "s.sched:1:6: error: '{' is not closed on its line"},
      {"tile {128,256x8; thread 8x8}\n", "s.sched:1:6: error: '{' is not closed on its line"},
      {"tile {128}x8\n", "s.sched:1:6: error: a set needs at least two alternatives"},
      {"{ , }\n", "s.sched:1:1: error: every alternative of the set is empty"},
      {"tile {1{2,3},4}\n", "s.sched:1:8: error: a set inside a set"},
      {"tile 128}\n", "s.sched:1:9: error: '}' without its '{'"},
      {"tile {128,", "s.sched:1:6: error: '{' is not closed"},
  };
  for (const Case& c : cases) {
    std::string errors;
    dsl::Space s = space_of(c.text, &errors);
    EXPECT_TRUE(s.empty()) << c.text;
    EXPECT_NE(errors.find(c.error), std::string::npos) << c.text << "\n" << errors;
  }
  // Not text: dsl::parse reports the bytes, the space finds nothing.
  std::string errors;
  EXPECT_TRUE(space_of(std::string("tile {1,2}\x01\n"), &errors).empty());
  EXPECT_TRUE(errors.empty()) << errors;
}

TEST(Space, SizeSaturates) {
  std::string text;
  for (int i = 0; i < 70; ++i) text += "{1,2}\n";
  dsl::Space s = space_of(text);
  EXPECT_EQ(s.sets.size(), 70u);
  EXPECT_EQ(s.size(), INT64_MAX);  // 2^70 does not fit
}

}  // namespace
