// runtime::run_json, the object `schedc run --json` prints and `schedc bench
// --json` lists, written by report/json.h: it parses, carries non-ASCII file
// names (UTF-8 as written, other bytes as U+FFFD), writes NaN as null, and
// adds the caller's members. Needs no GPU: the report is filled by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/report.h"

namespace schedc {
namespace {

using report::Json;

runtime::RunReport failed_report() {
  runtime::RunReport r;
  r.entry.name = "schedc_k";
  r.entry.why = "lda = 1025 is not a multiple of 4 \"quoted\"";
  runtime::ValidationResult v;
  v.ok = false;
  v.rel_err = std::nan("");
  v.nan_count = 3;
  v.worst.got = std::nan("");
  v.first.push_back({1, 2, std::nanf(""), 1.5f});
  v.failure = "3 NaN elements";
  r.validations.push_back(v);
  r.timed = true;
  r.kernel.median_ms = 2.5;
  r.cublas.median_ms = 2.0;
  return r;
}

TEST(RunJson, ParsesWithNonAsciiFileNamesAndNaN) {
  runtime::PreparedKernel prepared;
  prepared.kernel.dtype = "f32";
  prepared.jit.functions["schedc_k"].registers = 90;
  compiler::Problem p;
  p.m = 7;
  p.n = 13;
  p.k = 5;
  const std::string utf8 = "ladder/r\xc3\xa9sum\xc3\xa9 \xe6\x97\xa5.sched";
  const std::string latin1 = "ladder/caf\xe9.sched";
  for (const std::string& file : {utf8, latin1}) {
    Json extra = {{"status", "FAILED"}, {"device", "NVIDIA H100 \xe2\x84\xa2"}};
    std::string text =
        report::json_text(runtime::run_json(file, p, prepared, failed_report(), extra));
    Json j;
    ASSERT_NO_THROW(j = Json::parse(text)) << text;
    EXPECT_EQ(j["file"], file == utf8 ? utf8 : "ladder/caf\xef\xbf\xbd.sched");
    EXPECT_EQ(j["m"], 7);
    EXPECT_FALSE(j["ok"].get<bool>());
    EXPECT_TRUE(j["validations"][0]["rel_err"].is_null());
    EXPECT_TRUE(j["validations"][0]["worst"]["got"].is_null());
    EXPECT_TRUE(j["validations"][0]["first"][0][2].is_null());
    EXPECT_EQ(j["validations"][0]["first"][0][3], 1.5);
    EXPECT_EQ(j["entry"]["why"], "lda = 1025 is not a multiple of 4 \"quoted\"");
    EXPECT_EQ(j["time_ms"]["median"], 2.5);
    EXPECT_EQ(j["percent_of_cublas"], 80.0);
    EXPECT_EQ(j["jit"]["functions"]["schedc_k"]["registers"], 90);
    EXPECT_EQ(j["status"], "FAILED");
    EXPECT_EQ(j["device"], "NVIDIA H100 \xe2\x84\xa2");
  }
}

}  // namespace
}  // namespace schedc
