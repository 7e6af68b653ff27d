// Task files end to end: the real evalrun binary with the arithmetic task
// (tests/fixtures/tasks/arithmetic: one file of 12 lines and its rows, no
// C++) in --list, run against the fake llama-server, re-scored, on the page
// and in compare; a bad task file refused before any request, naming the
// file and the key or row; MMLU-Pro as a task file (tasks/mmlu-pro.json)
// giving the built-in part's samples.jsonl and results, byte for byte; a
// folder's own dataset manifest fetched by the task's name and checked.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/sha256.h"
#include "tests/engine/datasets_fetch_mirror.h"
#include "tests/support/e2e.h"
#include "tests/support/fake_server.h"

namespace evalrun::testing {
namespace {

std::string ArithmeticDir() { return FixturePath("tasks/arithmetic"); }

// "What is 43 + 21?" -> 64.
long long Solve(const std::string& text) {
  long long a = 0, b = 0;
  char op = 0;
  const size_t at = text.find("What is ");
  if (at == std::string::npos || std::sscanf(text.c_str() + at, "What is %lld %c %lld?", &a, &op, &b) != 3) return 0;
  return op == '+' ? a + b : op == '-' ? a - b : a * b;
}

// Right, but off by one for the questions in `wrong`, cut off for `cut`.
Responder Calculator(std::set<long long> wrong, std::set<long long> cut) {
  return [wrong, cut](const nlohmann::json& req) {
    const long long x = Solve(req["messages"].back()["content"].get<std::string>());
    FakeReply r;
    if (cut.count(x)) {
      r.content = "Let me work this out";
      r.finish_reason = "length";
    } else {
      r.content = "The result is " + std::to_string(wrong.count(x) ? x + 1 : x) + ".";
    }
    return r;
  };
}

// The answers of the fixture's questions, in file order.
std::vector<long long> Answers() {
  std::vector<long long> out;
  for (const auto& row : ReadJsonLines(ArithmeticDir() + "/arithmetic.jsonl")) out.push_back(row["answer"].get<long long>());
  return out;
}

class E2eTaskFile : public E2eTest {};

TEST_F(E2eTaskFile, ArithmeticIsListedRunScoredOnThePageAndCompared) {
  BinaryResult list = Run({"--tasks", ArithmeticDir(), "--list"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("\narithmetic: Arithmetic\n"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("part     arithmetic (match; card keys: questions, max_tokens, prompt, extract, seed)"),
            std::string::npos) << list.out;

  FakeServer server({.slots = 2});
  ASSERT_TRUE(server.Start());
  const std::vector<long long> ans = Answers();
  ASSERT_EQ(ans.size(), 20u);
  // The card names the folder itself (`tasks`); run A: two wrong, one cut off.
  const std::string card = WriteCard(server.base_url(), "2", R"({"arithmetic": {}})",
                                     "\"tasks\": [\"" + ArithmeticDir() + "\"],");
  server.SetResponder(Calculator({ans[2], ans[4]}, {ans[6]}));
  BinaryResult a_run = Run({"--card", card, "--job", "a"});
  ASSERT_EQ(a_run.exit_code, 0) << a_run.err;
  ASSERT_EQ(Samples("a", "arithmetic").size(), 20u);
  const nlohmann::json a = Results("a")["parts"]["arithmetic"];
  EXPECT_EQ(a["kind"], "match");
  EXPECT_EQ(a["n"], 20);
  EXPECT_EQ(a["correct"], 17);
  EXPECT_EQ(a["cut_off"], 1);
  EXPECT_NEAR(a["score"].get<double>(), 0.85, 1e-9);
  EXPECT_GT(a["stderr"].get<double>(), 0.0);
  EXPECT_EQ(a["categories"].size(), 3u) << a.dump();
  EXPECT_EQ(a["categories"]["add"]["n"].get<int>() + a["categories"]["sub"]["n"].get<int>() +
                a["categories"]["mul"]["n"].get<int>(), 20);

  // Its card keys are checked as any part's: a near miss is named.
  const std::string typo = WriteCard(server.base_url(), "2", R"({"arithmetic": {"question": 3}})",
                                     "\"tasks\": [\"" + ArithmeticDir() + "\"],");
  BinaryResult refused = Run({"--card", typo, "--job", "typo"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("parts.arithmetic.question: unknown field (did you mean \"questions\"?)"),
            std::string::npos) << refused.err;

  // `score` on A's recorded answers (the folder given by --tasks this time).
  const std::string plain = WriteCard(server.base_url(), "2", R"({"arithmetic": {}})");
  BinaryResult sc = Run({"score", "--tasks", ArithmeticDir(), "--card", plain, "--part", "arithmetic", "--responses",
                         dir_ + "/runs/a/arithmetic/samples.jsonl", "--job", "rescored"});
  ASSERT_EQ(sc.exit_code, 0) << sc.err;
  EXPECT_EQ(Results("rescored")["parts"]["arithmetic"]["correct"], 17);

  // Run B: eight more wrong. The page, then compare pairs the questions.
  server.SetResponder(Calculator({ans[2], ans[4], ans[0], ans[1], ans[3], ans[5], ans[8], ans[9], ans[10], ans[11]},
                                 {ans[6]}));
  ASSERT_EQ(Run({"--tasks", ArithmeticDir(), "--card", plain, "--job", "b"}).exit_code, 0);
  EXPECT_EQ(Results("b")["parts"]["arithmetic"]["correct"], 9);
  // Without the folder the page names the part; with it, by its title.
  BinaryResult rep = RunBinary({EvalrunBinary(), "report", dir_ + "/runs/a"}, 60);
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_NE(ReadFile(dir_ + "/runs/a/report.md").find("| arithmetic | accuracy |     85.00 |"), std::string::npos);
  rep = RunBinary({EvalrunBinary(), "report", "--tasks", ArithmeticDir(), dir_ + "/runs/a"}, 60);
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  const std::string md = ReadFile(dir_ + "/runs/a/report.md");
  EXPECT_NE(md.find("Arithmetic"), std::string::npos) << md;
  EXPECT_NE(md.find("85.00"), std::string::npos) << md;
  EXPECT_NE(md.find("accuracy by category"), std::string::npos) << md;
  EXPECT_NE(ReadFile(dir_ + "/runs/a/report.html").find("Arithmetic"), std::string::npos);
  BinaryResult c = RunBinary({EvalrunBinary(), "compare", dir_ + "/runs/a", dir_ + "/runs/b", "--json"}, 60);
  EXPECT_EQ(c.exit_code, 4) << c.err << c.out;  // 8 flips right -> wrong: p = 2 * 0.5^8
  const nlohmann::json doc = nlohmann::json::parse(c.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << c.out;
  ASSERT_EQ(doc["parts"].size(), 1u);
  EXPECT_EQ(doc["parts"][0]["part"], "arithmetic");
  EXPECT_EQ(doc["parts"][0]["verdict"], "regression") << c.out;
}

// The arithmetic task in two shards joined by `merge`, resumed, and asked
// twice (--repeat 2): the same figures as one run.
TEST_F(E2eTaskFile, ArithmeticShardsMergeResumesAndRepeats) {
  FakeServer server({.slots = 2});
  ASSERT_TRUE(server.Start());
  const std::vector<long long> ans = Answers();
  server.SetResponder(Calculator({ans[2], ans[4]}, {ans[6]}));
  const std::string card = WriteCard(server.base_url(), "2", R"({"arithmetic": {}})",
                                     "\"tasks\": [\"" + ArithmeticDir() + "\"],");
  for (int i = 1; i <= 2; ++i) {
    BinaryResult r = Run({"--card", card, "--job", "s" + std::to_string(i), "--shard", std::to_string(i) + "/2"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  EXPECT_EQ(Samples("s1", "arithmetic").size() + Samples("s2", "arithmetic").size(), 20u);
  BinaryResult m = RunBinary({EvalrunBinary(), "merge", "--tasks", ArithmeticDir(), dir_ + "/runs/merged",
                              dir_ + "/runs/s1", dir_ + "/runs/s2"}, 60);
  ASSERT_EQ(m.exit_code, 0) << m.err << m.out;
  const nlohmann::json merged = Results("merged")["parts"]["arithmetic"];
  EXPECT_EQ(merged["n"], 20);
  EXPECT_EQ(merged["correct"], 17);
  EXPECT_EQ(merged["cut_off"], 1);

  const int asked = server.chat_requests();
  BinaryResult again = Run({"--card", card, "--job", "s1", "--shard", "1/2"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(server.chat_requests(), asked) << "a resumed run asked an answered question again";

  BinaryResult rep = Run({"--card", card, "--job", "twice", "--repeat", "2"});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  const nlohmann::json p = Results("twice")["parts"]["arithmetic"];
  EXPECT_EQ(p["correct"], 17);
  EXPECT_EQ(p["repeat"]["repeats"], 2) << p.dump();
  EXPECT_EQ(Samples("twice", "repeat-2/arithmetic").size(), 20u);
}

// A copy of the arithmetic folder under <tmp>/<name> with `from` in the
// task file replaced by `to`.
std::string BrokenCopy(const std::string& root, const std::string& name, const std::string& from,
                       const std::string& to) {
  const std::string dir = root + "/" + name;
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(ArithmeticDir() + "/arithmetic.jsonl", dir + "/arithmetic.jsonl");
  std::string text = ReadFile(ArithmeticDir() + "/arithmetic.json");
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  WriteFile(dir + "/arithmetic.json", text);
  return dir;
}

TEST_F(E2eTaskFile, ABadTaskFileIsRefusedBeforeAnyRequest) {
  FakeServer server({.slots = 2});
  ASSERT_TRUE(server.Start());
  server.SetResponder(Calculator({}, {}));
  const std::string card = WriteCard(server.base_url(), "2", R"({"arithmetic": {}})");
  struct Case {
    const char* name;
    std::string from, to;
    std::vector<std::string> said;
  };
  const std::vector<Case> cases = {
      {"unknown-key", "\"prompt\":", "\"promt\":", {"arithmetic.json", "did you mean \"prompt\""}},
      {"missing-field", "\"user\": \"{question}\"", "\"user\": \"{question} in {units}\"",
       {"arithmetic.json", "arithmetic.jsonl:1", "prompt.user", "{units}"}},
      {"bad-regex", "\"from\": \"last\"", "\"regex\": [\"(-?[0-9]+\"]",
       {"arithmetic.json", "answer.regex[0]", "does not compile"}},
      {"no-such-kind", "\"kind\": \"number\"", "\"kind\": \"nuber\"",
       {"arithmetic.json", "answer.kind", "did you mean \"number\""}},
  };
  for (const Case& k : cases) {
    const std::string dir = BrokenCopy(dir_, k.name, k.from, k.to);
    BinaryResult r = Run({"--tasks", dir, "--card", card, "--job", k.name});
    EXPECT_EQ(r.exit_code, 1) << k.name << ": " << r.err;
    for (const std::string& s : k.said) EXPECT_NE(r.err.find(s), std::string::npos) << k.name << ": " << r.err;
  }
  EXPECT_EQ(server.chat_requests(), 0);
}

// A task folder that pins its data by a manifest of its own
// (<name>.manifest.json: a public URL and its sha256): a run before the fetch
// says the command that fetches it, `datasets fetch <task> --tasks DIR`
// brings it from the source and checks it, the run then answers every row,
// and a changed byte stops the next run naming the manifest.
TEST_F(E2eTaskFile, AFolderManifestIsFetchedByTheTaskNameAndChecked) {
  const std::string rows = ReadFile(ArithmeticDir() + "/arithmetic.jsonl");
  const std::string origin = dir_ + "/origin", tasks = dir_ + "/pinned", data = dir_ + "/data";
  std::filesystem::create_directories(origin);
  std::filesystem::create_directories(tasks);
  WriteFile(origin + "/rows.jsonl", rows);
  fetch_testing::MirrorServer source(origin, fetch_testing::MirrorServer::Api::kFilesOnly);
  nlohmann::json task = nlohmann::json::parse(ReadFile(ArithmeticDir() + "/arithmetic.json"));
  task["name"] = "arith-pinned";
  task["data"] = {{"dataset", "arith-pinned/rows.jsonl"}, {"id", "id"}, {"category", "op"}};
  WriteFile(tasks + "/arith-pinned.json", task.dump(2));
  const nlohmann::json manifest = {
      {"name", "arith-pinned"},
      {"title", "Arithmetic, pinned"},
      {"files", {{{"path", "arith-pinned/rows.jsonl"},
                  {"source", {{"url", source.url() + "/rows.jsonl"}}},
                  {"rows", 20},
                  {"bytes", rows.size()},
                  {"sha256", Sha256Hex(rows)}}}}};
  WriteFile(tasks + "/arith-pinned.manifest.json", manifest.dump(2));

  FakeServer server({.slots = 2});
  ASSERT_TRUE(server.Start());
  server.SetResponder(Calculator({}, {}));
  const std::string card = WriteCard(server.base_url(), "2", R"({"arith-pinned": {}})");
  BinaryResult before = Run({"--tasks", tasks, "--card", card, "--job", "before", "--data-dir", data});
  EXPECT_EQ(before.exit_code, 1) << before.err;
  EXPECT_NE(before.err.find("evalrun datasets fetch arith-pinned --data-dir " + data + " --tasks " + tasks),
            std::string::npos) << before.err;
  EXPECT_EQ(server.chat_requests(), 0);

  BinaryResult list = RunBinary({EvalrunBinary(), "datasets", "list", "--tasks", tasks, "--data-dir", data}, 60);
  EXPECT_EQ(list.exit_code, 1) << list.out << list.err;  // a listed file is missing
  EXPECT_NE(list.out.find("arith-pinned/rows.jsonl"), std::string::npos) << list.out;
  BinaryResult fetch =
      RunBinary({EvalrunBinary(), "datasets", "fetch", "arith-pinned", "--tasks", tasks, "--data-dir", data}, 60);
  ASSERT_EQ(fetch.exit_code, 0) << fetch.out << fetch.err;
  EXPECT_EQ(ReadFile(data + "/arith-pinned/rows.jsonl"), rows);
  EXPECT_EQ(source.RequestsFor("/rows.jsonl").size(), 1u);

  BinaryResult run = Run({"--tasks", tasks, "--card", card, "--job", "after", "--data-dir", data});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(Results("after")["parts"]["arith-pinned"]["correct"], 20);

  std::string changed = rows;
  changed[changed.find("What is") + 8] ^= 1;
  WriteFile(data + "/arith-pinned/rows.jsonl", changed);
  BinaryResult bad = Run({"--tasks", tasks, "--card", card, "--job", "changed", "--data-dir", data});
  EXPECT_EQ(bad.exit_code, 1) << bad.err;
  EXPECT_NE(bad.err.find("sha256 mismatch"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find(tasks + "/arith-pinned.manifest.json"), std::string::npos) << bad.err;
}

// A task's `dataset` that no manifest lists, and a folder manifest with a
// mistyped key, are refused before any request, naming the file and key.
TEST_F(E2eTaskFile, AnUnlistedDatasetOrABadFolderManifestIsRefused) {
  const std::string tasks = dir_ + "/pinned";
  std::filesystem::create_directories(tasks);
  nlohmann::json task = nlohmann::json::parse(ReadFile(ArithmeticDir() + "/arithmetic.json"));
  task["data"] = {{"dataset", "nowhere/rows.jsonl"}, {"id", "id"}};
  WriteFile(tasks + "/arithmetic.json", task.dump(2));
  BinaryResult r = Run({"--tasks", tasks, "--list"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(tasks + "/arithmetic.json: data.dataset: \"nowhere/rows.jsonl\" is in no dataset manifest"),
            std::string::npos) << r.err;

  const nlohmann::json manifest = {
      {"name", "nowhere"},
      {"files", {{{"path", "nowhere/rows.jsonl"}, {"source", {{"url", "http://127.0.0.1:9/rows.jsonl"}}},
                  {"sha265", std::string(64, 'a')}}}}};
  WriteFile(tasks + "/nowhere.manifest.json", manifest.dump(2));
  r = Run({"--tasks", tasks, "--list"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(tasks + "/nowhere.manifest.json: files[0].sha265: unknown field (did you mean \"sha256\"?)"),
            std::string::npos) << r.err;
}

// A CSV file of rows, few-shot turns from another file of the same
// category, an exact-string answer normalised as the file says.
TEST_F(E2eTaskFile, CsvRowsFewShotTurnsAndAnExactAnswer) {
  const std::string dir = dir_ + "/capitals";
  std::filesystem::create_directories(dir);
  WriteFile(dir + "/rows.csv", "country,region,capital\nFrance,europe,Paris\nJapan,asia,Tokyo\n"
                               "\"Korea, South\",asia,Seoul\nItaly,europe,Rome\n");
  WriteFile(dir + "/shots.jsonl", "{\"country\": \"Spain\", \"region\": \"europe\", \"capital\": \"Madrid\"}\n"
                                  "{\"country\": \"India\", \"region\": \"asia\", \"capital\": \"New Delhi\"}\n");
  WriteFile(dir + "/capitals.json", R"({
    "name": "capital-cities", "title": "Capital cities",
    "data": {"file": "rows.csv", "id": "country", "category": "region"},
    "fewshot": {"file": "shots.jsonl", "count": 1, "same_category": true, "answer": "{capital}"},
    "prompt": {"user": "The capital of {country}?", "max_tokens": 8, "stop": ["\n"]},
    "answer": {"kind": "exact", "gold": "capital", "ignore_case": true, "ignore_punctuation": true,
               "collapse_whitespace": true}
  })");
  FakeServer server({.slots = 1});
  ASSERT_TRUE(server.Start());
  std::mutex mu;
  std::vector<nlohmann::json> asked;
  server.SetResponder([&](const nlohmann::json& req) {
    std::lock_guard<std::mutex> l(mu);
    asked.push_back(req["messages"]);
    EXPECT_EQ(req["stop"], nlohmann::json::array({"\n"})) << req.dump();
    const std::string q = req["messages"].back()["content"].get<std::string>();
    FakeReply r;
    // The stop string ends the answer before what follows it.
    r.content = q.find("France") != std::string::npos ? "  paris. \nNo, Lyon" : q.find("Japan") != std::string::npos ? "TOKYO" : "Kyoto";
    return r;
  });
  const std::string card = WriteCard(server.base_url(), "1", R"({"capital-cities": {}})");
  BinaryResult r = Run({"--tasks", dir, "--card", card, "--job", "caps"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json p = Results("caps")["parts"]["capital-cities"];
  EXPECT_EQ(p["kind"], "match");
  EXPECT_EQ(p["n"], 4);
  EXPECT_EQ(p["correct"], 2);  // "  paris. " and "TOKYO" after normalising; "Kyoto" twice wrong
  EXPECT_EQ(p["categories"]["asia"]["correct"], 1);
  ASSERT_EQ(asked.size(), 4u);
  for (const auto& m : asked) {
    ASSERT_EQ(m.size(), 3u) << m.dump();  // the shot's question and answer, then the question
    const std::string q = m[2]["content"].get<std::string>();
    const bool asia = q.find("Japan") != std::string::npos || q.find("Korea, South") != std::string::npos;
    EXPECT_EQ(m[1]["content"], asia ? "New Delhi" : "Madrid") << m.dump();
    EXPECT_EQ(m[1]["role"], "assistant");
  }
}

// A sample line without what differs between two runs of the same answers
// (latency, the server's timings).
nlohmann::json Timeless(nlohmann::json line) {
  line.erase("latency_ms");
  line.erase("timings");
  return line;
}

TEST_F(E2eTaskFile, MmluProAsATaskFileScoresAsTheBuiltInPart) {
  // The published MMLU-Pro answers (tests/fixtures/mmlu-pro) as recorded responses.
  std::string responses;
  for (const auto& p : ReadJsonLines(FixturePath("mmlu-pro/official_preds.jsonl")))
    responses += nlohmann::json{{"id", std::to_string(p["question_id"].get<long long>())},
                                {"response", p["response"]}, {"finish_reason", "stop"}}.dump() + "\n";
  WriteFile(dir_ + "/responses.jsonl", responses);
  for (const std::string extract : {"first-letter", "official"}) {
    const std::string card = WriteCard("http://127.0.0.1:9", "2",
                                       R"({"mmlupro": {"extract": ")" + extract +
                                           R"("}, "mmlu-pro-file": {"extract": ")" + extract + R"("}})");
    for (const std::string part : {"mmlupro", "mmlu-pro-file"}) {
      BinaryResult r = Run({"score", "--card", card, "--part", part, "--responses", dir_ + "/responses.jsonl",
                            "--job", extract + "-" + part});
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    const std::string built_in = ReadFile(dir_ + "/runs/" + extract + "-mmlupro/mmlupro/samples.jsonl");
    const std::string file = ReadFile(dir_ + "/runs/" + extract + "-mmlu-pro-file/mmlu-pro-file/samples.jsonl");
    EXPECT_GT(built_in.size(), 100000u);
    EXPECT_EQ(built_in, file) << extract;
    nlohmann::json a = Results(extract + "-mmlupro"), b = Results(extract + "-mmlu-pro-file");
    EXPECT_EQ(a["parts"]["mmlupro"], b["parts"]["mmlu-pro-file"]) << extract;
    EXPECT_GT(a["parts"]["mmlupro"]["correct"].get<int>(), 100);
    for (nlohmann::json* j : {&a, &b})
      for (const char* k : {"job", "parts", "scored_utc"}) j->erase(k);
    EXPECT_EQ(a, b) << extract;
  }

  // A run against the fake server with both parts in one card: the same
  // samples (times aside) and the same results.
  FakeServer server({.slots = 2});
  ASSERT_TRUE(server.Start());
  server.SetResponder([](const nlohmann::json& req) {
    const std::string text = req["messages"].back()["content"].get<std::string>();
    FakeReply r;
    r.content = std::string("The answer is (") + static_cast<char>('A' + text.size() % 7) + ").";
    if (text.size() % 11 == 0) r.finish_reason = "length";
    return r;
  });
  const std::string card = WriteCard(server.base_url(), "2",
                                     R"({"mmlupro": {"questions": 40, "max_tokens": 64, "extract": "official"},
                                         "mmlu-pro-file": {"questions": 40, "max_tokens": 64, "extract": "official"}})");
  ASSERT_EQ(Run({"--card", card, "--job", "both"}).exit_code, 0);
  const auto s1 = Samples("both", "mmlupro"), s2 = Samples("both", "mmlu-pro-file");
  ASSERT_EQ(s1.size(), 40u);
  ASSERT_EQ(s2.size(), s1.size());
  std::map<std::string, nlohmann::json> by_id;
  for (const auto& s : s1) by_id[s["id"].get<std::string>()] = Timeless(s);
  for (const auto& s : s2) EXPECT_EQ(Timeless(s), by_id[s["id"].get<std::string>()]) << s.dump();
  const nlohmann::json r = Results("both")["parts"];
  for (const char* k : {"score", "n", "correct", "cut_off", "no_answer", "stderr", "categories", "info", "kind"})
    EXPECT_EQ(r["mmlupro"][k], r["mmlu-pro-file"][k]) << k;
}

}  // namespace
}  // namespace evalrun::testing
