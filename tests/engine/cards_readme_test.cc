// cards/README.md against the keys the parts declare (their PartDefinition,
// evals/run/part_registry.h) and the request settings every part takes
// (evals/run/request_settings.h): a key added to a part without a line in
// the README, or a part without a section, fails here.
#include <gtest/gtest.h>

#include <string>

#include "evals/run/part_registry.h"
#include "evals/run/request_settings.h"
#include "tests/support/run_binary.h"
#include "tests/support/test_paths.h"

namespace evalrun::testing {
namespace {

// The text of the section whose heading starts with `heading` ("" when none).
std::string Section(const std::string& doc, const std::string& heading) {
  const size_t at = doc.find("\n" + heading);
  if (at == std::string::npos) return "";
  const size_t end = doc.find("\n## ", at + 1);
  return doc.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

TEST(CardsReadme, EveryPartHasASectionWithEveryKeyItDeclares) {
  const std::string doc = ReadFile(SourceDir() + "/cards/README.md");
  ASSERT_FALSE(doc.empty());
  int parts = 0;
  for (const PartDefinition* def : PartDefinitions()) {
    ++parts;
    const std::string section = Section(doc, "## `parts." + def->name + "`");
    ASSERT_FALSE(section.empty()) << "cards/README.md has no section ## `parts." << def->name << "`";
    for (const CardKey& k : def->keys)
      EXPECT_NE(section.find("| `" + k.name + "` |"), std::string::npos)
          << "cards/README.md, parts." << def->name << ": no row for `" << k.name << "`";
  }
  EXPECT_GE(parts, 6);
}

TEST(CardsReadme, TheRequestSettingsAreDocumentedAtTheTopAndPerPart) {
  const std::string doc = ReadFile(SourceDir() + "/cards/README.md");
  const std::string top = Section(doc, "## Top level");
  const std::string per_part = Section(doc, "## Request settings per part");
  ASSERT_FALSE(per_part.empty());
  for (const std::string& k : RequestSettingKeys()) {
    EXPECT_NE(top.find("| `" + k + "` |"), std::string::npos) << "no top-level row for `" << k << "`";
    EXPECT_NE(per_part.find("`" + k + "`"), std::string::npos) << "not named under Request settings per part: " << k;
  }
}

}  // namespace
}  // namespace evalrun::testing
