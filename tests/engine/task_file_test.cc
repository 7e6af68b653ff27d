// Task files (evals/tasks/task_file.h): what a good file becomes, and that a
// bad one is refused naming the file and the key, with "did you mean" for
// an unknown key or kind, RE2's words for a regex that does not compile.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "evals/tasks/task_file.h"
#include "tests/support/test_paths.h"

namespace evalrun::testing {
namespace {

const char kGood[] = R"({
  "name": "arith", "title": "Arithmetic",
  "data": {"file": "rows.jsonl", "id": "id", "category": "op"},
  "prompt": {"user": "{question}", "max_tokens": 16, "stop": ["\n\n"]},
  "answer": {"kind": "number", "gold": "answer", "from": "marker", "marker": "####", "tolerance": 0.5}
})";

Status Parse(const std::string& text, TaskSpec* spec) { return ParseTaskFile(text, "/t/tasks/x.json", spec); }

// `kGood` with `from` replaced by `to` (which must be there once).
std::string With(const std::string& from, const std::string& to) {
  std::string s = kGood;
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? s : s.replace(at, from.size(), to);
}

std::string Refusal(const std::string& text) {
  TaskSpec spec;
  const Status st = Parse(text, &spec);
  EXPECT_FALSE(st.ok()) << text;
  return st.message();
}

TEST(TaskFile, AGoodFileBecomesItsSpec) {
  TaskSpec t;
  ASSERT_TRUE(Parse(kGood, &t).ok()) << Parse(kGood, &t).message();
  EXPECT_EQ(t.name, "arith");
  EXPECT_EQ(t.data.file, "/t/tasks/rows.jsonl");  // beside the task file
  EXPECT_EQ(t.data.shown, "rows.jsonl");
  EXPECT_EQ(t.category_field, "op");
  EXPECT_EQ(t.kind, AnswerKind::kNumber);
  EXPECT_EQ(t.default_prompt, "default");
  EXPECT_EQ(t.prompts.at("default").max_tokens, 16);
  EXPECT_EQ(t.prompts.at("default").stop, std::vector<std::string>{"\n\n"});
  EXPECT_EQ(t.extracts.at("default").number_from, NumberFrom::kMarker);
  EXPECT_EQ(t.extracts.at("default").marker, "####");
  EXPECT_DOUBLE_EQ(t.tolerance, 0.5);
}

TEST(TaskFile, TheShippedFilesParse) {
  const std::filesystem::path dir = std::filesystem::path(SourceDir()) / "tasks";
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.find(".manifest.") != std::string::npos) continue;
    TaskSpec t;
    const Status st = LoadTaskFile(e.path().string(), &t);
    EXPECT_TRUE(st.ok()) << st.message();
    ++n;
  }
  EXPECT_GE(n, 2);
  TaskSpec arith;
  const Status st = LoadTaskFile(FixturePath("tasks/arithmetic/arithmetic.json"), &arith);
  EXPECT_TRUE(st.ok()) << st.message();
}

TEST(TaskFile, AnUnknownKeyIsNamedWithANearMiss) {
  const std::string m = Refusal(With("\"prompt\":", "\"promt\":"));
  EXPECT_NE(m.find("/t/tasks/x.json"), std::string::npos) << m;
  EXPECT_NE(m.find("did you mean \"prompt\""), std::string::npos) << m;
  const std::string inner = Refusal(With("\"tolerance\"", "\"tolerence\""));
  EXPECT_NE(inner.find("answer.tolerence"), std::string::npos) << inner;
  EXPECT_NE(inner.find("did you mean \"tolerance\""), std::string::npos) << inner;
}

TEST(TaskFile, AKindThatDoesNotExist) {
  const std::string m = Refusal(With("\"kind\": \"number\"", "\"kind\": \"nubmer\""));
  EXPECT_NE(m.find("/t/tasks/x.json: answer.kind"), std::string::npos) << m;
  EXPECT_NE(m.find("did you mean \"number\""), std::string::npos) << m;
}

TEST(TaskFile, ARegexThatDoesNotCompile) {
  const std::string m = Refusal(With("\"from\": \"marker\",", "\"regex\": [\"#### ([0-9]+\"],"));
  EXPECT_NE(m.find("/t/tasks/x.json: answer.regex[0]"), std::string::npos) << m;
  EXPECT_NE(m.find("does not compile"), std::string::npos) << m;
}

TEST(TaskFile, OtherMistakesNameTheirKey) {
  EXPECT_NE(Refusal(With("\"gold\": \"answer\",", "")).find("answer.gold"), std::string::npos);
  EXPECT_NE(Refusal(With("\"user\": \"{question}\"", "\"user\": \"{question\"")).find("prompt.user"),
            std::string::npos);
  EXPECT_NE(Refusal(With("\"name\": \"arith\"", "\"name\": \"Arith metic\"")).find("name"), std::string::npos);
  EXPECT_NE(Refusal(With("\"marker\": \"####\",", "")).find("answer.marker"), std::string::npos);
  const std::string chain = Refusal(
      With("\"kind\": \"number\", \"gold\": \"answer\", \"from\": \"marker\", \"marker\": \"####\", \"tolerance\": 0.5",
           "\"kind\": \"choice\", \"gold\": \"answer\", \"options\": \"options\", \"chain\": \"first-leter\""));
  EXPECT_NE(chain.find("answer.chain"), std::string::npos) << chain;
  EXPECT_NE(chain.find("did you mean \"first-letter\""), std::string::npos) << chain;
}

}  // namespace
}  // namespace evalrun::testing
