// report/json.h: the one JSON writer. Text it writes parses back; file names
// with non-ASCII characters come back as they were (valid UTF-8) or with
// U+FFFD in place of bytes that are not UTF-8; NaN and infinities are null;
// floats are written short.
#include "report/json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using schedc::report::Json;
using schedc::report::json_number;
using schedc::report::json_real;
using schedc::report::json_text;

TEST(Json, NonAsciiFileNamesRoundTrip) {
  const std::string utf8 = "r\xc3\xa9sum\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80.sched";
  const std::string text = json_text(Json{{"file", utf8}});
  EXPECT_EQ(Json::parse(text)["file"], utf8);
  // Written as UTF-8 (not \u00c3\u00a9: bytes read as Latin-1, which the old
  // hand-written escaper in cmd_check did).
  EXPECT_NE(text.find("r\xc3\xa9sum\xc3\xa9"), std::string::npos) << text;
}

TEST(Json, BytesThatAreNotUtf8BecomeReplacementCharacters) {
  const std::string latin1 = "caf\xe9.sched";  // Latin-1 é: not UTF-8
  const std::string text = json_text(Json{{"file", latin1}});
  EXPECT_EQ(Json::parse(text)["file"], "caf\xef\xbf\xbd.sched") << text;
  const std::string stray = "a\x80\xff\xc3z";
  Json parsed;
  EXPECT_NO_THROW(parsed = Json::parse(json_text(Json{{"s", stray}})));
  EXPECT_EQ(parsed["s"], "a\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdz") << "each stray byte replaced";
}

TEST(Json, ControlCharactersQuotesAndBackslashesAreEscaped) {
  const std::string s = std::string(
                            "a\"b\\c\nd\te\x01"
                            "f\x7f") +
                        '\0' + "g";
  const std::string text = json_text(Json{{"s", s}});
  EXPECT_EQ(text.find('\n'), std::string::npos);
  EXPECT_EQ(Json::parse(text)["s"], s);
}

TEST(Json, NumbersNullAndShortFloats) {
  EXPECT_EQ(json_text(json_number(std::nan(""))), "null");
  EXPECT_EQ(json_text(json_number(std::numeric_limits<double>::infinity())), "null");
  EXPECT_EQ(json_text(json_number(2.5)), "2.5");
  EXPECT_EQ(json_text(json_real(0.1f)), "0.1");
  EXPECT_EQ(json_text(json_real(2.0f)), "2.0");
  EXPECT_EQ(json_text(json_real(1.0f / 3.0f)), "0.33333334");
  EXPECT_EQ(Json::parse(json_text(json_real(1.0f / 3.0f))).get<float>(), 1.0f / 3.0f);
  EXPECT_EQ(json_text(json_real(std::nanf(""))), "null");
}

TEST(Json, MembersKeepTheirWrittenOrder) {
  Json j = {{"file", "x"}, {"arch", "sm_90"}, {"ok", true}};
  EXPECT_EQ(json_text(j), R"({"file":"x","arch":"sm_90","ok":true})");
}
