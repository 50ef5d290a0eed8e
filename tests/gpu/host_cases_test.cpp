// The session's cache of validation cases (runtime/host_cases.h), on the CPU:
// found by key, the most recently used kept within the byte budget, and a
// case larger than the whole budget never kept.
#include "runtime/host_cases.h"

#include <gtest/gtest.h>

using namespace schedc::runtime;

namespace {

std::shared_ptr<const HostCase> case_of(size_t bytes, char fill) {
  auto c = std::make_shared<HostCase>();
  c->a.assign(bytes, fill);
  return c;
}

}  // namespace

TEST(HostCases, FoundByKeyAndOldestEvictedPastTheBudget) {
  HostCaseCache cache(300);
  cache.insert("p1", case_of(100, 'a'));
  cache.insert("p2", case_of(100, 'b'));
  ASSERT_NE(cache.find("p1"), nullptr);  // p1 is now the most recent
  EXPECT_EQ(cache.find("p1")->a[0], 'a');
  EXPECT_EQ(cache.find("p3"), nullptr);
  cache.insert("p3", case_of(150, 'c'));  // 350 > 300: the oldest (p2) goes
  EXPECT_EQ(cache.find("p2"), nullptr);
  EXPECT_NE(cache.find("p1"), nullptr);
  EXPECT_NE(cache.find("p3"), nullptr);
  EXPECT_EQ(cache.bytes(), 250u);
  EXPECT_EQ(cache.size(), 2u);
}

TEST(HostCases, ACaseLargerThanTheBudgetIsNotKept) {
  HostCaseCache cache(100);
  cache.insert("small", case_of(60, 's'));
  cache.insert("huge", case_of(101, 'h'));
  EXPECT_EQ(cache.find("huge"), nullptr);
  EXPECT_NE(cache.find("small"), nullptr);  // and nothing was evicted for it
}
