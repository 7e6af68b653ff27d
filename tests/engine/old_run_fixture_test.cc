// A run written by evalrun as it was before verdict kinds were opened
// (main at 8e75a03: mmlupro, ifeval and ruler against the fake server,
// tests/fixtures/runs/main-8e75a03) still reads: `report` writes both pages
// with every part, and `compare` of it with itself pairs every part and
// finds nothing (exit 0). (`merge` needs shards and `score` answers: their
// own tests cover them; the fixture's file formats are what they read.)
#include <filesystem>
#include <string>

#include "evals/base/files.h"
#include "tests/support/e2e.h"
#include "tests/support/test_paths.h"

namespace evalrun::testing {
namespace {

class OldRunFixture : public E2eTest {
 protected:
  // The fixture copied into the temp folder (report writes into it).
  std::string CopyOf(const std::string& name) {
    const std::string to = dir_ + "/" + name;
    std::filesystem::copy(std::filesystem::path(SourceDir()) / "tests/fixtures/runs/main-8e75a03", to,
                          std::filesystem::copy_options::recursive);
    return to;
  }
};

TEST_F(OldRunFixture, ReportsAndComparesARunWrittenByTheEarlierMain) {
  const std::string a = CopyOf("a"), b = CopyOf("b");
  BinaryResult rep = RunBinary({EvalrunBinary(), "report", a});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  const std::string md = ReadFile(a + "/report.md");
  for (const char* part : {"mmlupro", "ifeval", "ruler"}) EXPECT_NE(md.find(part), std::string::npos) << part;
  EXPECT_NE(md.find("prompt-level strict"), std::string::npos);  // the instruction kind's section
  const std::string html = ReadFile(a + "/report.html");
  EXPECT_NE(html.find("score by context length"), std::string::npos);
  // RULER's table: tasks as rows, lengths as columns (eleven tasks as
  // columns ran off the page), in a box that scrolls if it must.
  EXPECT_NE(html.find("<div class=\"wide\"><table class=\"compact\"><thead><tr><th>task</th><th class=\"num\">4K</th>"),
            std::string::npos);
  EXPECT_NE(html.find("<tr><td>niah_single_1</td>"), std::string::npos);
  // The sample browser: each part's samples by id, numbers by value.
  EXPECT_LT(html.find("\"id\":\"niah_single_1/4096/1\""), html.find("\"id\":\"vt/4096/0\""));
  EXPECT_LT(html.find("\"id\":\"3561\""), html.find("\"id\":\"11439\""));

  BinaryResult c = RunBinary({EvalrunBinary(), "compare", a, b, "--json"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const nlohmann::json doc = nlohmann::json::parse(c.out);
  ASSERT_EQ(doc["parts"].size(), 3u);
  EXPECT_EQ(doc["parts"][0]["kind"], "choice");
  EXPECT_EQ(doc["parts"][1]["kind"], "ifeval");
  EXPECT_EQ(doc["parts"][2]["kind"], "fraction");
  EXPECT_EQ(doc["parts"][2]["scale"], "fraction");
  EXPECT_EQ(doc["parts"][0]["paired"], 8);
}

}  // namespace
}  // namespace evalrun::testing
