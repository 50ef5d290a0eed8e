#include "report/text_table.h"

#include <gtest/gtest.h>

TEST(TextTable, AlignsTextLeftAndNumbersRight) {
  std::string t = schedc::report::aligned_table(
      {{"schedule", "ms"}, {"v0_naive", "26.4"}, {"sgemm_best", "2.97"}}, {true});
  EXPECT_EQ(t,
            "schedule      ms\n"
            "v0_naive    26.4\n"
            "sgemm_best  2.97\n");
}
