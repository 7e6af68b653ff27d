// The pieces of the open verdict kinds that need no run: the registries
// hold the five built-in kinds with their views; the hooks of a kind that
// compares on its own (the probe's) and of one that does not; a section's
// tables render escaped in Markdown and HTML; ids sort with their numbers by
// value.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "evals/publish/kind_view.h"
#include "evals/publish/section_tables.h"
#include "evals/run/sample_codec.h"
#include "evals/run/verdict_kind.h"
#include "tests/support/markdown_tables.h"

namespace evalrun {
namespace {

TEST(VerdictKinds, TheBuiltInKindsAreRegisteredWithTheirViews) {
  for (VerdictKind k : {VerdictKind::kChoice, VerdictKind::kInstruction, VerdictKind::kFraction,
                        VerdictKind::kLogprobs, VerdictKind::kCode}) {
    const VerdictKindDefinition* def = FindVerdictKind(k.name());
    ASSERT_NE(def, nullptr) << k.name();
    EXPECT_EQ(def->Kind(), k);
    ASSERT_NE(FindKindView(k), nullptr) << k.name();
  }
  VerdictKind k{""};
  EXPECT_FALSE(VerdictKindByName("no-such-kind", &k));
  EXPECT_TRUE(VerdictKindByName("code", &k));
  EXPECT_EQ(k, VerdictKind::kCode);
  EXPECT_EQ(FindKindView(VerdictKind::kInstruction)->CompareKindName(), "ifeval");
  EXPECT_TRUE(FindKindView(VerdictKind::kFraction)->Fractional());
  EXPECT_FALSE(FindKindView(VerdictKind::kChoice)->Fractional());
}

TEST(VerdictKinds, OnlyTheLogprobsKindComparesOnItsOwnAndKeepsItsStoredVerdicts) {
  // Found by the name a compare document gives the part.
  EXPECT_EQ(FindKindViewByCompareName("ifeval"), FindKindView(VerdictKind::kInstruction));
  EXPECT_EQ(FindKindViewByCompareName("instruction"), nullptr) << "the document says ifeval";
  EXPECT_EQ(FindKindViewByCompareName("no-such-kind"), nullptr);
  const KindView* probe = FindKindViewByCompareName("logprobs");
  ASSERT_EQ(probe, FindKindView(VerdictKind::kLogprobs));
  EXPECT_TRUE(probe->ComparesOnItsOwn());
  EXPECT_EQ(OwnComparisonView(nlohmann::json{{"kind", "logprobs"}, {"part", "probe"}}), probe);
  EXPECT_EQ(OwnComparisonView(nlohmann::json{{"kind", "choice"}, {"part", "mmlupro"}}), nullptr);
  EXPECT_EQ(OwnComparisonView(nlohmann::json{{"part", "x"}}), nullptr);
  EXPECT_FALSE(probe->RepeatClause().empty());
  EXPECT_TRUE(VerdictKindOf(VerdictKind::kLogprobs).KeepsStoredVerdict());
  for (VerdictKind k : {VerdictKind::kChoice, VerdictKind::kInstruction, VerdictKind::kFraction, VerdictKind::kCode}) {
    const KindView* v = FindKindView(k);
    EXPECT_FALSE(v->ComparesOnItsOwn()) << k.name();
    EXPECT_EQ(v->CompareDecidesClause() + v->CompareNoiseClause() + v->RepeatClause(), "") << k.name();
    EXPECT_FALSE(VerdictKindOf(k).KeepsStoredVerdict()) << k.name();
    EXPECT_TRUE(VerdictKindOf(k).CompareRepeats({}, {}).is_null()) << k.name();
    // The default ComparePart is a bug to call, said as one.
    nlohmann::json doc;
    EXPECT_EQ(v->ComparePart("x", RunFolder(), RunFolder(), {}, {}, CompareOptions(), &doc).code(),
              Status::Code::kInternal);
  }
}

TEST(VerdictKinds, HeadlineAndCutOffAskTheKind) {
  EXPECT_EQ(HeadlineScore(Verdict(ChoiceVerdict{'A', true, false, false})), 1.0);
  EXPECT_EQ(HeadlineScore(Verdict(FractionVerdict{0.25, true, false})), 0.25);
  Verdict f = FractionVerdict{0.25, true, true};
  EXPECT_TRUE(IsCutOff(f));
  MarkTooLong(&f);
  EXPECT_FALSE(IsCutOff(f));
  EXPECT_FALSE(std::get<FractionVerdict>(f).null);
}

TEST(VerdictKinds, AnOtherVerdictHoldsItsValue) {
  struct Mine {
    int x = 0;
  };
  Verdict v = MakeOtherVerdict(VerdictKind{"mine"}, Mine{7});
  EXPECT_EQ(KindOf(v), VerdictKind{"mine"});
  ASSERT_NE(OtherVerdictValue<Mine>(v), nullptr);
  EXPECT_EQ(OtherVerdictValue<Mine>(v)->x, 7);
  EXPECT_EQ(OtherVerdictValue<int>(v), nullptr);
  EXPECT_EQ(OtherVerdictValue<Mine>(Verdict(ChoiceVerdict{})), nullptr);
}

TEST(VerdictKinds, TheDefaultAggregateCountsHeadlines) {
  std::vector<SampleRecord> records(4);
  for (size_t i = 0; i < records.size(); ++i) records[i].verdict = ChoiceVerdict{'A', i < 3, i == 3, false};
  const nlohmann::json r = AggregateByHeadline(records, 1);
  EXPECT_EQ(r["n"], 4);
  EXPECT_EQ(r["correct"], 3);
  EXPECT_EQ(r["cut_off"], 1);
  EXPECT_EQ(r["failed"], 1);
  EXPECT_DOUBLE_EQ(r["score"].get<double>(), 0.75);
}

TEST(SectionTables, RenderEscapedInBothForms) {
  SectionTable t;
  t.title = "a <b> | c";
  t.columns = {"name", "n"};
  t.rows = {{"x|y", "3"}, {"<script>"}};
  t.note = "short row padded";
  const nlohmann::json tables = nlohmann::json::array({t.ToJson(), "not a table"});
  const std::string md = testing::UnpadTables(SectionTablesMarkdown(tables));
  EXPECT_NE(md.find("### a &lt;b&gt; \\| c"), std::string::npos) << md;
  EXPECT_NE(md.find("| x\\|y | 3 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| &lt;script&gt; |  |"), std::string::npos) << md;
  const std::string html = SectionTablesHtml(tables);
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find("<td>&lt;script&gt;</td><td class=\"num\"></td>"), std::string::npos) << html;
  // A column of figures is right-aligned, its header too; the first column names the row.
  EXPECT_NE(html.find("<th>name</th><th class=\"num\">n</th>"), std::string::npos) << html;
  EXPECT_NE(html.find("<td>x|y</td><td class=\"num\">3</td>"), std::string::npos) << html;
  SectionTable back;
  ASSERT_TRUE(SectionTable::FromJson(t.ToJson(), &back));
  EXPECT_EQ(back.rows, t.rows);
}

TEST(NaturalOrder, NumbersInIdsSortByValue) {
  std::vector<std::string> ids = {"niah_single_1/32768/0", "niah_single_1/4096/10", "niah_single_1/4096/2",
                                  "cwe/131072/0", "q10", "q9", "q009x"};
  std::sort(ids.begin(), ids.end(), NaturalLess);
  EXPECT_EQ(ids, (std::vector<std::string>{"cwe/131072/0", "niah_single_1/4096/2", "niah_single_1/4096/10",
                                           "niah_single_1/32768/0", "q9", "q009x", "q10"}));
  EXPECT_FALSE(NaturalLess("a", "a"));
}

}  // namespace
}  // namespace evalrun
