// The steps `schedc ablate` measures, planned on the CPU.
#include "cli/ablation.h"

#include <gtest/gtest.h>

#include "dsl/parse.h"

using namespace schedc;
using cli::AblationMode;
using cli::AblationStep;

namespace {

struct Planned {
  bool ok = false;
  std::string error;
  std::vector<AblationStep> steps;
};

Planned plan(const std::string& text, AblationMode mode, std::vector<int> order = {}) {
  dsl::SourceFile file("t.sched", text);
  dsl::Diagnostics diags(&file);
  std::optional<dsl::Ast> ast = dsl::parse(file, diags);
  EXPECT_TRUE(ast.has_value());
  compiler::Target t;
  compiler::target_for_arch("sm_90", t);
  Planned p;
  p.ok = cli::plan_ablation(file, *ast, mode, order, t, p.steps, p.error);
  return p;
}

const char* kAblatedSgemm =
    "shape 1024x1024x1024\n"
    "tile 128x128x8\n"
    "thread 8x8 split 2x2\n"
    "vectorize 4\n"
    "transpose A\n"
    "double_buffer\n"
    "epilogue alpha 2 relu\n";

}  // namespace

TEST(Ablation, CumulativeStartsNaiveAndMergesInvalidPrefixes) {
  Planned p = plan(kAblatedSgemm, AblationMode::cumulative);
  ASSERT_TRUE(p.ok) << p.error;
  ASSERT_EQ(p.steps.size(), 5u);
  EXPECT_EQ(p.steps[0].label, "naive");
  // `tile` alone would need 16384 threads: merged with `thread`.
  EXPECT_EQ(p.steps[1].label, "+ tile 128x128x8 + thread 8x8 split 2x2");
  EXPECT_NE(p.steps[1].note.find("tile 128x128x8' alone"), std::string::npos) << p.steps[1].note;
  EXPECT_EQ(p.steps[2].label, "+ vectorize 4");
  EXPECT_EQ(p.steps[4].label, "+ double_buffer");
  // Context (shape, epilogue) is in every step, optimizations only once added.
  for (const AblationStep& s : p.steps) {
    EXPECT_NE(s.schedule_text.find("shape 1024x1024x1024"), std::string::npos);
    EXPECT_NE(s.schedule_text.find("epilogue alpha 2 relu"), std::string::npos);
    EXPECT_TRUE(s.valid);
  }
  EXPECT_EQ(p.steps[0].schedule_text.find("tile"), std::string::npos);
  EXPECT_NE(p.steps[4].schedule_text.find("double_buffer"), std::string::npos);
}

TEST(Ablation, OrderChangesWhatEachStepAdds) {
  Planned p = plan(kAblatedSgemm, AblationMode::cumulative, {2, 1, 5, 3, 4});
  ASSERT_TRUE(p.ok) << p.error;
  // `thread` before `tile` is not valid alone (it needs `tile`): merged.
  EXPECT_EQ(p.steps[1].label, "+ thread 8x8 split 2x2 + tile 128x128x8");
  EXPECT_EQ(p.steps[2].label, "+ double_buffer");
}

TEST(Ablation, BadOrdersAreRejected) {
  EXPECT_FALSE(plan(kAblatedSgemm, AblationMode::cumulative, {1, 2, 3}).ok);
  EXPECT_FALSE(plan(kAblatedSgemm, AblationMode::cumulative, {1, 1, 2, 3, 4}).ok);
  EXPECT_FALSE(plan(kAblatedSgemm, AblationMode::cumulative, {0, 1, 2, 3, 4}).ok);
  std::vector<int> order;
  EXPECT_TRUE(cli::parse_order("3,1,2", order));
  EXPECT_EQ(order, (std::vector<int>{3, 1, 2}));
  EXPECT_FALSE(cli::parse_order("3,,1", order));
  EXPECT_FALSE(cli::parse_order("a", order));
}

TEST(Ablation, LeaveOneOutMarksSchedulesThatNeedTheDirective) {
  Planned p = plan(kAblatedSgemm, AblationMode::leave_one_out);
  ASSERT_TRUE(p.ok) << p.error;
  ASSERT_EQ(p.steps.size(), 6u);
  EXPECT_EQ(p.steps[0].label, "full schedule");
  EXPECT_TRUE(p.steps[0].valid);
  EXPECT_EQ(p.steps[1].label, "- tile 128x128x8");
  EXPECT_FALSE(p.steps[1].valid);  // thread, vectorize … need a tile
  EXPECT_NE(p.steps[1].note.find("not a valid schedule without it"), std::string::npos);
  EXPECT_EQ(p.steps[5].label, "- double_buffer");
  EXPECT_TRUE(p.steps[5].valid);
  EXPECT_EQ(p.steps[5].schedule_text.find("double_buffer"), std::string::npos);
}
