// End to end: bad input is refused with exit 1 and a message that names the
// file, field or line, before any request, and never touches an existing
// run. The API token is read from the environment and sent, never written.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "tests/support/e2e.h"
#include "tests/support/fake_server.h"
#include "tests/support/test_card.h"

namespace evalrun::testing {
namespace {

// Every regular file under `root` (relative path -> bytes).
std::map<std::string, std::string> Snapshot(const std::string& root) {
  std::map<std::string, std::string> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root))
    if (e.is_regular_file()) files[std::filesystem::relative(e.path(), root).string()] = ReadFile(e.path().string());
  return files;
}

class E2eBadInput : public E2eTest {
 protected:
  // A finished job "keep" that no refused command may change.
  void SetUp() override {
    E2eTest::SetUp();
    ASSERT_TRUE(server_.Start());
    good_card_ = WriteCard(server_.base_url(), "2", R"({"mmlupro": {"questions": 3, "max_tokens": 64}})");
    BinaryResult r = Run({"--card", good_card_, "--job", "keep"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    keep_ = Snapshot(dir_ + "/runs/keep");
    ASSERT_TRUE(keep_.count("run.json") && keep_.count("results.json") && keep_.count("mmlupro/samples.jsonl"));
    asked_ = server_.chat_requests();
  }

  // `card` as <tmp>/bad.json.
  std::string WriteBadCard(const nlohmann::json& card) { return WriteCardFile(dir_ + "/bad.json", card); }
  // `text` as <tmp>/bad.json, for the tests about a card's text itself.
  std::string WriteBadCardText(const std::string& text) {
    const std::string path = dir_ + "/bad.json";
    WriteFile(path, text);
    return path;
  }

  // {"mmlupro": fields}
  static nlohmann::json MmluPro(const nlohmann::json& fields = nlohmann::json::object()) {
    return {{"mmlupro", fields}};
  }
  // A card named "bad" for the fake server (test_card.h's bare card with a
  // model, two slots and a 20 s ready timeout), with `parts`.
  nlohmann::json Card(const nlohmann::json& parts) {
    nlohmann::json card = Bare(server_.base_url(), parts);
    card["model"] = {{"name", "fake"}};
    card["server"]["slots"] = 2;
    card["server"]["ready_timeout_s"] = 20;
    return card;
  }
  // test_card.h's bare card, named "bad": server.base_url `url` and `parts`.
  static nlohmann::json Bare(const std::string& url, const nlohmann::json& parts = MmluPro()) {
    nlohmann::json card = BareCard(url, parts);
    card["name"] = "bad";
    return card;
  }

  // evalrun `args` (with --job keep unless a --job is given) exits 1 with
  // each of `messages` in its stderr, asks the server nothing and leaves the
  // job "keep" byte for byte as it was.
  void ExpectRefused(std::vector<std::string> args, const std::vector<std::string>& messages) {
    if (std::find(args.begin(), args.end(), "--job") == args.end()) {
      args.push_back("--job");
      args.push_back("keep");
    }
    BinaryResult r = Run(args, 60);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    for (const auto& m : messages) EXPECT_NE(r.err.find(m), std::string::npos) << "want: " << m << "\ngot: " << r.err;
    EXPECT_EQ(server_.chat_requests(), asked_) << "a request was sent";
    EXPECT_EQ(Snapshot(dir_ + "/runs/keep"), keep_) << "the existing run changed";
  }

  FakeServer server_;
  std::string good_card_;
  std::map<std::string, std::string> keep_;
  int asked_ = 0;
};

TEST_F(E2eBadInput, MalformedCardJsonNamesLineAndColumn) {
  // The card's text is the point: the trailing comma on line 3 is the error;
  // nlohmann reports the byte after it, the '}' at column 47.
  const std::string card =
      WriteBadCardText("{\n  \"name\": \"bad\",\n  \"server\": {\"base_url\": \"http://127.0.0.1:1\",}\n}\n");
  ExpectRefused({"--card", card}, {card + ":3:47: malformed JSON: syntax error"});
}

// A number beyond double's range is bad input, not a crash (nlohmann throws
// out_of_range 406, not a parse_error, for it). No JSON value holds it: the
// card's text has it in place of a string.
TEST_F(E2eBadInput, NumberOverflowInCard) {
  nlohmann::json c = Card(MmluPro());
  c["server"]["min_decode_tps"] = "1e500";
  std::string text = c.dump();
  const size_t at = text.find("\"1e500\"");
  ASSERT_NE(at, std::string::npos) << text;
  const std::string card = WriteBadCardText(text.replace(at, 7, "1e500"));
  ExpectRefused({"--card", card}, {card + ": ", "1e500"});
}

// A URL without a host is bad input (exit 1), not an unreachable server.
TEST_F(E2eBadInput, BaseUrlWithoutHost) {
  for (const char* url : {"http://", "https://:8080/v1"}) {
    const std::string card = WriteBadCard(Bare(url));
    ExpectRefused({"--card", card}, {card + ": server.base_url: "});
  }
}

// --base-url gets the card's check (exit 1 at once, rather than waiting for
// a server at a URL that cannot work and exiting 2).
TEST_F(E2eBadInput, BaseUrlFlagIsCheckedLikeTheCardField) {
  for (const auto& [url, want] : std::vector<std::pair<std::string, std::string>>{
           {"localhost:8080", "--base-url: expected an http:// or https:// URL, got \"localhost:8080\" "
                              "(did you mean \"http://localhost:8080\"?)"},
           {"http://", "--base-url: expected a URL with a host"},
           {"http://127.0.0.1:99999/v1", "--base-url: expected a port 1..65535 after ':', got \"99999\""},
       }) {
    ExpectRefused({"--card", good_card_, "--base-url", url}, {want});
  }
  const std::string card = WriteBadCard(Bare("http://127.0.0.1:99999/v1"));
  ExpectRefused({"--card", card}, {card + ": server.base_url: expected a port 1..65535 after ':', got \"99999\""});
}

// Every card field is checked before anything else: with no server at all
// (port 1 refuses), a bad RULER task name, a meaningless number or a
// duplicate key is exit 1 naming the file and path, not exit 2.
TEST_F(E2eBadInput, EveryCardFieldIsCheckedBeforeAnyServer) {
  const std::string nobody = "http://127.0.0.1:1/v1";
  auto ruler = [&](const std::string& fields) {
    return WriteBadCard(Bare(nobody, {{"ruler", nlohmann::json::parse(fields)}}));
  };
  const std::string ruler_typo = ruler(R"({"tasks": ["niah_single_1", "vtt"]})");
  ExpectRefused({"--card", ruler_typo},
                {ruler_typo + ": parts.ruler.tasks[1]: unknown RULER task \"vtt\" (did you mean \"vt\"?)"});
  const std::string count_typo = ruler(R"({"samples_per_task": {"cwee": 2}})");
  ExpectRefused({"--card", count_typo},
                {count_typo + ": parts.ruler.samples_per_task: unknown RULER task \"cwee\" (did you mean \"cwe\"?)"});
  const std::string budget_typo = ruler(R"({"task_max_tokens": {"fw": 20}})");
  ExpectRefused({"--card", budget_typo},
                {budget_typo + ": parts.ruler.task_max_tokens: unknown RULER task \"fw\" (did you mean \"fwe\"?)"});
  struct ServerCase {
    std::string field;
    int value;
    std::string want;
  };
  for (const ServerCase& k : std::vector<ServerCase>{
           {"ready_timeout_s", -5, "server.ready_timeout_s: expected a number > 0"},
           {"request_timeout_base_s", -1, "server.request_timeout_base_s: expected a number >= 0"},
           {"connect_timeout_s", 0, "server.connect_timeout_s: expected a number > 0"},
           {"stop_grace_s", -1, "server.stop_grace_s: expected a number >= 0"},
           {"slot", 2, "server.slot: unknown field (did you mean \"slots\"?)"},
           {"retry", 2, "server.retry: unknown field (did you mean \"retries\"?)"},
       }) {
    nlohmann::json card = Bare(nobody);
    card["server"][k.field] = k.value;
    const std::string c = WriteBadCard(card);
    ExpectRefused({"--card", c}, {c + ": " + k.want});
  }
  nlohmann::json card = Bare(nobody);
  card["load_sampling"] = {{"threshold_pct", -5}, {"top", -1}};
  const std::string noise = WriteBadCard(card);
  ExpectRefused({"--card", noise}, {noise + ": load_sampling.threshold_pct: expected a number > 0"});
  card["load_sampling"] = {{"top", -1}};
  const std::string top = WriteBadCard(card);
  ExpectRefused({"--card", top}, {top + ": load_sampling.top: expected an integer 0..1000, got -1"});
  // A duplicate key is text no JSON value holds.
  const std::string dup = WriteBadCardText(
      R"({"name": "bad", "name": "other", "server": {"base_url": "http://127.0.0.1:1/v1"}, "parts": {"mmlupro": {}}})");
  ExpectRefused({"--card", dup}, {dup + ": name: duplicate key"});
}

// A mistyped flag gets a near miss, for the run and for each command.
TEST_F(E2eBadInput, MistypedFlagsGetANearMiss) {
  ExpectRefused({"--card", good_card_, "--prats", "mmlupro"},
                {"evalrun: unknown option --prats (did you mean --parts?)"});
  ExpectRefused({"--card", good_card_, "--limt=3"}, {"evalrun: unknown option --limt (did you mean --limit?)"});
  BinaryResult r = RunBinary({EvalrunBinary(), "score", "--card", good_card_, "--prat", "ifeval"}, 30);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("evalrun score: unknown option --prat (did you mean --part?)"), std::string::npos) << r.err;
  r = RunBinary({EvalrunBinary(), "datasets", "fetch", "--mirorr", "http://127.0.0.1:1"}, 30);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("unknown option --mirorr (did you mean --mirror?)"), std::string::npos) << r.err;
}

TEST_F(E2eBadInput, LimitMustBeAPositiveInteger) {
  for (const char* v : {"0", "-3", "abc", "2.5", "99999999999"}) {
    BinaryResult r = Run({"--card", good_card_, "--limit", v, "--job", "keep"}, 30);
    EXPECT_EQ(r.exit_code, 1) << v;
    EXPECT_NE(r.err.find("--limit: expected an integer >= 1, got \"" + std::string(v) + "\""), std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("0000000"), std::string::npos) << "a range of doubles: " << r.err;
  }
  EXPECT_EQ(server_.chat_requests(), asked_);
  EXPECT_EQ(Snapshot(dir_ + "/runs/keep"), keep_);
}

// "run" names the default command: "evalrun run --card ..." is "evalrun --card ...".
TEST_F(E2eBadInput, RunIsTheNameOfTheDefaultCommand) {
  BinaryResult help = RunBinary({EvalrunBinary(), "run", "--help"}, 30);
  EXPECT_EQ(help.exit_code, 0) << help.err;
  EXPECT_NE(help.out.find("--card"), std::string::npos);
  BinaryResult r = Run({"run", "--card", good_card_, "--job", "named"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Samples("named", "mmlupro").size(), 3u);
  asked_ = server_.chat_requests();
  ExpectRefused({"run", "--card", good_card_, "--parts", "gpqa"}, {"--parts: part \"gpqa\" is not in the card"});
}

// `score --part` errors name --part, not --parts.
TEST_F(E2eBadInput, ScorePartErrorsNameThePartFlag) {
  const std::string responses = dir_ + "/responses.jsonl";
  WriteFile(responses, "{\"id\": 70, \"response\": \"Answer: A\"}\n");
  BinaryResult r = RunBinary({EvalrunBinary(), "score", "--card", good_card_, "--part", "ifevl", "--responses",
                              responses, "--out", dir_ + "/runs", "--data-dir", DatasetsDir()},
                             30);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("evalrun: --part: unknown part \"ifevl\" (did you mean \"ifeval\"?)"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("--parts"), std::string::npos) << r.err;
}

TEST_F(E2eBadInput, MissingCardFile) {
  ExpectRefused({"--card", dir_ + "/nope.json"}, {"nope.json"});
}

TEST_F(E2eBadInput, MissingFields) {
  nlohmann::json card = Bare("http://127.0.0.1:1");
  card.erase("server");
  ExpectRefused({"--card", WriteBadCard(card)}, {"bad.json: server: required field is missing"});
  card["server"] = {{"slots", 2}};
  ExpectRefused({"--card", WriteBadCard(card)}, {"bad.json: server.base_url: required field is missing"});
  card = Bare("http://127.0.0.1:1");
  card.erase("parts");
  ExpectRefused({"--card", WriteBadCard(card)}, {"bad.json: parts: required field is missing"});
}

TEST_F(E2eBadInput, WrongTypes) {
  ExpectRefused({"--card", WriteBadCard(Card(MmluPro({{"questions", "ten"}})))},
                {"bad.json: parts.mmlupro.questions: expected an integer, got \"ten\""});
  nlohmann::json card = Card(MmluPro());
  card["server"]["retries"] = 1.5;
  ExpectRefused({"--card", WriteBadCard(card)}, {"bad.json: server.retries: expected an integer, got 1.5"});
  card = Bare(server_.base_url());
  card["server"]["slots"] = 0;
  ExpectRefused({"--card", WriteBadCard(card)},
                {"bad.json: server.slots: expected a positive integer or \"auto\", got 0"});
  card = Bare("http://127.0.0.1:1");
  card["thinking"] = "yes";
  ExpectRefused({"--card", WriteBadCard(card)},
                {"bad.json: thinking: expected true, false, \"on\" or \"off\", got \"yes\""});
  ExpectRefused({"--card", WriteBadCard(Card({{"mmlupro", nlohmann::json::array()}}))},
                {"bad.json: parts.mmlupro: expected an object"});
}

TEST_F(E2eBadInput, UnknownFieldsAndParts) {
  nlohmann::json card = Card(MmluPro());
  card["server"]["retires"] = 2;
  ExpectRefused({"--card", WriteBadCard(card)},
                {"bad.json: server.retires: unknown field (did you mean \"retries\"?)"});
  ExpectRefused({"--card", WriteBadCard(Card({{"mmlu-pro", nlohmann::json::object()}}))},
                {"bad.json: parts.mmlu-pro: unknown part (did you mean \"mmlupro\"?)"});
  ExpectRefused({"--card", good_card_, "--parts", "mmlupr"},
                {"--parts: unknown part \"mmlupr\" (did you mean \"mmlupro\"?)"});
  ExpectRefused({"--card", good_card_, "--parts", "gpqa"}, {"--parts: part \"gpqa\" is not in the card"});
}

TEST_F(E2eBadInput, MissingDatasetFile) {
  const std::string empty = dir_ + "/empty-data";
  std::filesystem::create_directories(empty);
  ExpectRefused({"--card", good_card_, "--data-dir", empty},
                {empty + "/mmlu-pro/test.jsonl: dataset file not found",
                 "evalrun datasets fetch mmlu-pro --data-dir " + empty});
}

TEST_F(E2eBadInput, DatasetWithOneByteChanged) {
  const std::string data = dir_ + "/data";
  std::filesystem::create_directories(data + "/mmlu-pro");
  std::string text = ReadFile(DatasetsDir() + "/mmlu-pro/test.jsonl");
  ASSERT_GT(text.size(), 1000000u);
  // One letter in the middle changes case: still valid JSON, another hash.
  size_t at = text.find_first_of("abcdefghijklmnopqrstuvwxyz", text.size() / 2);
  ASSERT_NE(at, std::string::npos);
  text[at] = static_cast<char>(text[at] - 'a' + 'A');
  WriteFile(data + "/mmlu-pro/test.jsonl", text);
  ExpectRefused({"--card", good_card_, "--data-dir", data},
                {data + "/mmlu-pro/test.jsonl: sha256 mismatch: expected ",
                 "(evals/benchmarks/mmlupro/mmlu-pro.json)", "datasets fetch mmlu-pro"});
}

// As root, permissions do not stop a write; a path through a regular file
// fails for everyone.
TEST_F(E2eBadInput, UnwritableOutputFolder) {
  const std::string file = dir_ + "/file.txt";
  WriteFile(file, "not a folder\n");
  ExpectRefused({"--card", good_card_, "--out", file + "/sub", "--job", "new"},
                {file + "/sub/new: cannot create folder", "(--out " + file + "/sub)"});
  EXPECT_EQ(ReadFile(file), "not a folder\n");
}

// A folder that is not an evalrun job is not written into.
TEST_F(E2eBadInput, ForeignFolderAsJob) {
  std::filesystem::create_directories(dir_ + "/runs/other");
  WriteFile(dir_ + "/runs/other/notes.txt", "mine\n");
  ExpectRefused({"--card", good_card_, "--job", "other"}, {"exists and is not an evalrun job (no run.json)"});
  EXPECT_EQ(Snapshot(dir_ + "/runs/other"), (std::map<std::string, std::string>{{"notes.txt", "mine\n"}}));
}

TEST_F(E2eBadInput, ScoreResponsesWithABadLine) {
  const std::string responses = dir_ + "/responses.jsonl";
  WriteFile(responses, "{\"id\": 70, \"response\": \"Answer: A\"}\n{\"id\": 71, \"response\": \"B\"\n");
  BinaryResult r = RunBinary({EvalrunBinary(), "score", "--card", good_card_, "--part", "mmlupro", "--responses",
                              responses, "--out", dir_ + "/runs", "--job", "scored", "--data-dir", DatasetsDir()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(responses + ":2: not a JSON line"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/runs/scored"));

  WriteFile(responses, "{\"id\": 70, \"response\": \"Answer: A\"}\n\n{\"id\": \"no-such-id\", \"response\": \"B\"}\n");
  r = RunBinary({EvalrunBinary(), "score", "--card", good_card_, "--part", "mmlupro", "--responses", responses,
                 "--out", dir_ + "/runs", "--job", "scored", "--data-dir", DatasetsDir()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(responses + ":3: no question of part mmlupro matches this line (id \"no-such-id\")"),
            std::string::npos)
      << r.err;
  WriteFile(responses, "{\"id\": 70, \"answer\": \"A\"}\n");
  r = RunBinary({EvalrunBinary(), "score", "--card", good_card_, "--part", "mmlupro", "--responses", responses,
                 "--out", dir_ + "/runs", "--job", "scored", "--data-dir", DatasetsDir()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(responses + ":1: response: expected a string"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/runs/scored"));
  EXPECT_EQ(Snapshot(dir_ + "/runs/keep"), keep_);
}

// The token comes from the variable the card names; it is sent as a bearer
// token on every request and written nowhere: not in the run folder, not on
// stdout or stderr.
TEST_F(E2eBadInput, ApiKeyFromTheEnvironmentOnlyAndNeverWritten) {
  const std::string token = "tok-3f9a1c-do-not-log-7e21";
  nlohmann::json keyed = Card(MmluPro({{"questions", 3}, {"max_tokens", 64}}));
  keyed["server"]["api_key_env"] = "EVALRUN_E2E_KEY";
  const std::string card = WriteBadCard(keyed);
  const size_t seen_before = server_.authorizations().size();
  BinaryResult r = RunBinary({EvalrunBinary(), "--card", card, "--job", "keyed", "--out", dir_ + "/runs",
                              "--data-dir", DatasetsDir()},
                             120, {"EVALRUN_E2E_KEY=" + token});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find(token), std::string::npos);
  EXPECT_EQ(r.err.find(token), std::string::npos);
  auto files = Snapshot(dir_ + "/runs/keyed");
  EXPECT_TRUE(files.count("run.json") && files.count("results.json") && files.count("mmlupro/samples.jsonl"));
  for (const auto& [path, bytes] : files) EXPECT_EQ(bytes.find(token), std::string::npos) << path;
  // The card names the variable, not the token.
  EXPECT_NE(files["run.json"].find("EVALRUN_E2E_KEY"), std::string::npos);

  auto seen = server_.authorizations();
  ASSERT_GT(seen.size(), seen_before + 3);  // /health, /props, /v1/models and 3 chat requests
  for (size_t i = seen_before; i < seen.size(); ++i) EXPECT_EQ(seen[i], "Bearer " + token) << i;
  // The run without a key sent none.
  for (size_t i = 0; i < seen_before; ++i) EXPECT_EQ(seen[i], "") << i;

  // The variable unset: refused, naming it.
  BinaryResult unset = RunBinary({EvalrunBinary(), "--card", card, "--job", "keyed2", "--out", dir_ + "/runs",
                                  "--data-dir", DatasetsDir()},
                                 60);
  EXPECT_EQ(unset.exit_code, 1);
  EXPECT_NE(unset.err.find("server.api_key_env: the environment variable EVALRUN_E2E_KEY is not set"),
            std::string::npos)
      << unset.err;
}

}  // namespace
}  // namespace evalrun::testing
