#include "evals/base/selection.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace evalrun {
namespace {

TEST(SelectionTest, KeyIsPortableAndPinned) {
  // Literal values: a change to the hash would change every published selection.
  EXPECT_EQ(SelectionKey(42, "70"), SelectionKey(42, "70"));
  EXPECT_NE(SelectionKey(42, "70"), SelectionKey(43, "70"));
  EXPECT_EQ(SelectionKey(42, "70"), 11467130219866531935ULL);
}

TEST(SelectionTest, StratifiedProportionalAndDeterministic) {
  std::vector<std::string> ids, cats;
  for (int i = 0; i < 1000; ++i) {
    ids.push_back(std::to_string(i));
    cats.push_back(i < 600 ? "a" : i < 900 ? "b" : "c");
  }
  auto s1 = StratifiedSample(ids, cats, 100, 42);
  auto s2 = StratifiedSample(ids, cats, 100, 42);
  EXPECT_EQ(s1, s2);
  ASSERT_EQ(s1.size(), 100u);
  std::map<std::string, int> per;
  for (size_t i : s1) ++per[cats[i]];
  EXPECT_EQ(per["a"], 60);
  EXPECT_EQ(per["b"], 30);
  EXPECT_EQ(per["c"], 10);
  EXPECT_TRUE(std::is_sorted(s1.begin(), s1.end()));
  EXPECT_NE(StratifiedSample(ids, cats, 100, 43), s1);
  // Input order does not matter: the same ids are chosen from a reversed list.
  std::vector<std::string> rids(ids.rbegin(), ids.rend()), rcats(cats.rbegin(), cats.rend());
  std::set<std::string> a, b;
  for (size_t i : s1) a.insert(ids[i]);
  for (size_t i : StratifiedSample(rids, rcats, 100, 42)) b.insert(rids[i]);
  EXPECT_EQ(a, b);
}

TEST(SelectionTest, LargestRemainderAndAll) {
  std::vector<std::string> ids = {"1", "2", "3", "4", "5", "6", "7"}, cats = {"x", "x", "x", "y", "y", "z", "z"};
  EXPECT_EQ(StratifiedSample(ids, cats, 3, 1).size(), 3u);
  EXPECT_EQ(StratifiedSample(ids, cats, 7, 1).size(), 7u);
  EXPECT_EQ(StratifiedSample(ids, cats, 100, 1).size(), 7u);
  EXPECT_EQ(StratifiedSample(ids, cats, -1, 1).size(), 7u);
}

}  // namespace
}  // namespace evalrun
