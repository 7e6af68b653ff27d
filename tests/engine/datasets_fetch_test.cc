// `evalrun datasets fetch` / `list` against a local mirror (127.0.0.1 only,
// no network): a test server serves ../shared/datasets by data-dir path
// (datasets_fetch_mirror.h); every file, MMLU-Pro's too, comes from there.
// The manifests' own sources (the MMLU-Pro rows API), without a mirror:
// datasets_fetch_sources_test.cc.
#include <stdlib.h>

#include <filesystem>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "datasets/fetch.h"
#include "datasets/manifest.h"
#include "evals/base/exit_codes.h"
#include "evals/base/sha256.h"
#include "tests/engine/datasets_fetch_mirror.h"
#include "tests/support/capture_output.h"
#include "tests/support/run_binary.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

namespace evalrun {
namespace {

namespace fs = std::filesystem;
using namespace fetch_testing;  // datasets_fetch_mirror.h
using testing::Capture;
using testing::Captured;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteText;

Captured List(const std::string& dir) {
  ListOptions o;
  o.data_dir = dir;
  return Capture([&](FILE* out, FILE* err) { return DatasetsList(o, out, err); });
}

std::string Line(const std::string& text, const std::string& needle) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.find(needle) != std::string::npos) return line;
  return "";
}

TEST(DatasetsFetchTest, FillsAnEmptyDataDirFromTheMirrorAndEveryFileVerifies) {
  MirrorServer mirror(testing::DatasetsDir());
  TempDir dir("evalrun_fetch");
  FetchOptions o;
  o.data_dir = dir.path();
  o.mirror = mirror.url() + "/";  // a trailing slash is fine
  Captured c = Fetch(o);
  ASSERT_EQ(c.code, kExitOk) << c.err;

  int required = 0;
  for (const auto& m : AllManifests()) {
    for (const auto& f : m.files) {
      if (f.optional) {
        EXPECT_FALSE(fs::exists(dir.path() + "/" + f.path)) << f.path;
        EXPECT_TRUE(mirror.RequestsFor("/" + f.path).empty()) << f.path << " fetched unasked";
        continue;
      }
      ++required;
      std::string abs;
      Status st = VerifyDataFile(dir.path(), f.path, &abs);
      EXPECT_TRUE(st.ok()) << st.ToString();
      EXPECT_FALSE(fs::exists(abs + ".part")) << abs;
      EXPECT_NE(Line(c.out, f.path).find("fetched"), std::string::npos) << f.path << "\n" << c.out;
    }
  }
  EXPECT_EQ(required, 2 + 1 + 1 + 4 + 4 + 56);  // mmlu-pro, gpqa, ifeval, ruler, punkt, langdetect
  // MMLU-Pro came as files at their data-dir paths, not through a rows API.
  EXPECT_TRUE(mirror.RequestsFor("/rows").empty());
  EXPECT_EQ(mirror.RequestsFor("/mmlu-pro/test.jsonl").size(), 1u);
  EXPECT_EQ(mirror.RequestsFor("/mmlu-pro/validation.jsonl").size(), 1u);
  EXPECT_EQ(ReadFile(dir.path() + "/mmlu-pro/test.jsonl"),
            ReadFile(testing::DatasetsDir() + "/mmlu-pro/test.jsonl"));
  for (const auto& r : mirror.requests()) EXPECT_EQ(r.authorization, "") << r.path;  // no token to a mirror

  // Everything verifies for `list` too; a second fetch downloads nothing.
  Captured l = List(dir.path());
  EXPECT_EQ(l.code, kExitOk) << l.out << l.err;
  EXPECT_NE(l.out.find(std::to_string(required) + " ok, 0 missing, 0 corrupt, 10 optional not fetched"),
            std::string::npos) << l.out;
  const size_t before = mirror.requests().size();
  Captured again = Fetch(o);
  EXPECT_EQ(again.code, kExitOk) << again.err;
  EXPECT_EQ(mirror.requests().size(), before);
  EXPECT_EQ(Line(again.out, kIfeval), "present   ifeval/input_data.jsonl                      207111 bytes, sha256 verified");
}

TEST(DatasetsFetchTest, ACorruptDownloadIsKeptAsBadAndNeverInstalled) {
  MirrorServer mirror(testing::DatasetsDir());
  std::string bytes = ReadFile(testing::DatasetsDir() + "/" + kIfeval);
  ASSERT_EQ(bytes.size(), 207111u);
  bytes[1000] ^= 0x20;  // same size, one letter's case flipped
  mirror.Override(kIfeval, bytes);
  TempDir dir("evalrun_fetch");
  FetchOptions o;
  o.data_dir = dir.path();
  o.mirror = mirror.url();
  o.names = {kIfeval};
  Captured c = Fetch(o);
  EXPECT_EQ(c.code, kExitBadInput);
  const std::string dest = dir.path() + "/" + kIfeval;
  EXPECT_FALSE(fs::exists(dest));
  EXPECT_FALSE(fs::exists(dest + ".part"));
  ASSERT_TRUE(fs::exists(dest + ".bad"));
  EXPECT_EQ(ReadFile(dest + ".bad"), bytes);
  EXPECT_NE(c.err.find(kIfeval + ": verification failed: sha256 " + Sha256Hex(bytes) + ", expected " + kIfevalSha +
                       "; the download is kept as " + dest + ".bad, not installed"),
            std::string::npos) << c.err;
  EXPECT_EQ(Line(c.out, kIfeval), "FAILED    " + kIfeval);

  // An installed file that went bad is set aside and fetched again.
  mirror.Override(kIfeval, ReadFile(testing::DatasetsDir() + "/" + kIfeval));
  WriteText(dest, bytes);
  Captured again = Fetch(o);
  EXPECT_EQ(again.code, kExitOk) << again.err;
  EXPECT_EQ(Sha256Hex(ReadFile(dest)), kIfevalSha);
  EXPECT_NE(again.err.find("present but does not verify (sha256 " + Sha256Hex(bytes)), std::string::npos)
      << again.err;
}

TEST(DatasetsFetchTest, AnInterruptedDownloadResumesWithARangeRequest) {
  MirrorServer mirror(testing::DatasetsDir());
  const std::string path = "gpqa/dataset.zip";
  mirror.FailHalfOnce(path);
  TempDir dir("evalrun_fetch");
  FetchOptions o;
  o.data_dir = dir.path();
  o.mirror = mirror.url();
  o.names = {"gpqa"};
  o.attempts = 1;  // the first run gives up after the broken transfer
  Captured first = Fetch(o);
  EXPECT_EQ(first.code, kExitUnreachable) << first.err;
  const std::string dest = dir.path() + "/" + path;
  EXPECT_FALSE(fs::exists(dest));
  ASSERT_EQ(fs::file_size(dest + ".part"), 2348038u / 2);
  EXPECT_NE(first.err.find("bytes received are kept in " + dest + ".part (run again to resume)"), std::string::npos)
      << first.err;
  // `list` shows the partial download.
  EXPECT_NE(Line(List(dir.path()).out, path).find("partial"), std::string::npos);

  Captured second = Fetch(o);
  EXPECT_EQ(second.code, kExitOk) << second.err;
  auto reqs = mirror.RequestsFor("/" + path);
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].range, "");
  EXPECT_EQ(reqs[1].range, "bytes=1174019-");
  EXPECT_NE(second.err.find("gpqa/dataset.zip: resuming at byte 1174019"), std::string::npos) << second.err;
  EXPECT_EQ(Sha256Hex(ReadFile(dest)), FindManifestFile(path)->sha256);
  EXPECT_FALSE(fs::exists(dest + ".part"));
}

TEST(DatasetsFetchTest, ABrokenTransferIsRetriedWithinOneRunFromWhereItStopped) {
  MirrorServer mirror(testing::DatasetsDir());
  const std::string path = "ruler/PaulGrahamEssays.json";
  mirror.FailHalfOnce(path);
  TempDir dir("evalrun_fetch");
  FetchOptions o;
  o.data_dir = dir.path();
  o.mirror = mirror.url();
  o.names = {path};
  o.attempts = 2;
  Captured c = Fetch(o);
  EXPECT_EQ(c.code, kExitOk) << c.err;
  auto reqs = mirror.RequestsFor("/" + path);
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[1].range, "bytes=" + std::to_string(3108596 / 2) + "-");
  EXPECT_EQ(Sha256Hex(ReadFile(dir.path() + "/" + path)), FindManifestFile(path)->sha256);
}

// A partial MMLU-Pro file from the mirror resumes as any file does: a Range
// request from the bytes already there (the torn line's too).
TEST(DatasetsFetchTest, APartialMirroredRowsFileResumesWithARangeRequest) {
  MirrorServer mirror(testing::DatasetsDir());
  TempDir dir("evalrun_fetch");
  const std::string path = "mmlu-pro/validation.jsonl";
  const std::string full = ReadFile(testing::DatasetsDir() + "/" + path);
  size_t cut = 0;
  for (int i = 0; i < 30; ++i) cut = full.find('\n', cut) + 1;
  // 30 whole lines and a torn 31st, as an interrupted run leaves them.
  WriteText(dir.path() + "/" + path + ".part", full.substr(0, cut + 25));
  FetchOptions o;
  o.data_dir = dir.path();
  o.mirror = mirror.url();
  o.names = {path};
  Captured c = Fetch(o);
  EXPECT_EQ(c.code, kExitOk) << c.err;
  EXPECT_TRUE(mirror.RequestsFor("/rows").empty());
  auto reqs = mirror.RequestsFor("/" + path);
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].range, "bytes=" + std::to_string(cut + 25) + "-");
  EXPECT_EQ(ReadFile(dir.path() + "/" + path), full);
}

TEST(DatasetsFetchTest, OptionalQaSetsOnlyWhenAskedByName) {
  MirrorServer mirror(testing::DatasetsDir());  // the shared data has no SQuAD/HotpotQA
  TempDir dir("evalrun_fetch");
  FetchOptions o;
  o.data_dir = dir.path();
  o.mirror = mirror.url();
  o.names = {"ruler-qa"};
  Captured c = Fetch(o);
  EXPECT_EQ(c.code, kExitUnreachable);
  EXPECT_EQ(mirror.requests().size(), 2u);
  EXPECT_NE(c.err.find("ruler/squad.json: " + mirror.url() + "/ruler/squad.json: HTTP 404: Not Found"),
            std::string::npos) << c.err;
  EXPECT_NE(c.err.find("ruler/hotpotqa.json: "), std::string::npos);
  EXPECT_FALSE(fs::exists(dir.path() + "/ruler/squad.json"));
}

TEST(DatasetsFetchTest, UnknownNamesAreRefusedWithASuggestion) {
  TempDir dir("evalrun_fetch");
  FetchOptions o;
  o.data_dir = dir.path();
  o.mirror = "http://127.0.0.1:1";  // never contacted
  o.names = {"mmlu_pro"};
  Captured c = Fetch(o);
  EXPECT_EQ(c.code, kExitBadInput);
  EXPECT_NE(c.err.find("unknown dataset \"mmlu_pro\" (did you mean \"mmlu-pro\"?); known: gpqa, gsm8k, ifeval, langdetect, "
                       "livecodebench, mmlu-pro, punkt-english, ruler, gsm8k, livecodebench, ruler-english-words, "
                       "ruler-qa, all"),
            std::string::npos) << c.err;
  o.names = {"gpqa"};
  o.mirror = "ftp://mirror";
  c = Fetch(o);
  EXPECT_EQ(c.code, kExitBadInput);
  EXPECT_NE(c.err.find("\"ftp://mirror\": expected an http(s) URL"), std::string::npos) << c.err;
}

TEST(DatasetsFetchTest, ADatasetBringsTheFilesItNeedsAtRunTime) {
  MirrorServer mirror(testing::DatasetsDir());
  TempDir dir("evalrun_fetch");
  FetchOptions o;
  o.data_dir = dir.path();
  o.mirror = mirror.url();
  o.names = {"ifeval"};
  Captured c = Fetch(o);
  EXPECT_EQ(c.code, kExitOk) << c.err;
  EXPECT_TRUE(fs::exists(dir.path() + "/punkt-english/ortho_context.tab"));
  EXPECT_TRUE(fs::exists(dir.path() + "/langdetect/profiles/zh-tw"));
  EXPECT_TRUE(fs::exists(dir.path() + "/langdetect/messages.properties"));
  EXPECT_FALSE(fs::exists(dir.path() + "/mmlu-pro"));
  EXPECT_NE(c.err.find("61 of 61 files in place (0 already were)"), std::string::npos) << c.err;
}

TEST(DatasetsFetchTest, TheMirrorCanComeFromTheEnvironment) {
  MirrorServer mirror(testing::DatasetsDir());
  TempDir dir("evalrun_fetch");
  ASSERT_EQ(setenv("EVALRUN_DATASETS_MIRROR", mirror.url().c_str(), 1), 0);
  ASSERT_EQ(setenv("HF_TOKEN", "hf_secret_value", 1), 0);
  FetchOptions o;
  o.data_dir = dir.path();
  o.names = {"ruler/wonderwords/verblist.txt", "mmlu-pro/validation.jsonl"};
  Captured c = Fetch(o);
  unsetenv("EVALRUN_DATASETS_MIRROR");
  unsetenv("HF_TOKEN");
  EXPECT_EQ(c.code, kExitOk) << c.err;
  EXPECT_EQ(mirror.RequestsFor("/ruler/wonderwords/verblist.txt").size(), 1u);
  EXPECT_EQ(mirror.RequestsFor("/mmlu-pro/validation.jsonl").size(), 1u);
  EXPECT_NE(c.err.find("mirror: " + mirror.url()), std::string::npos);
  for (const auto& r : mirror.requests()) EXPECT_EQ(r.authorization, "") << r.path;
  EXPECT_EQ((c.out + c.err).find("hf_secret_value"), std::string::npos);
}

TEST(DatasetsListTest, ShowsPresentMissingCorruptPartialAndOptional) {
  TempDir dir("evalrun_fetch");
  WriteText(dir.path() + "/" + kIfeval, ReadFile(testing::DatasetsDir() + "/" + kIfeval));
  WriteText(dir.path() + "/punkt-english/abbrev_types.txt", "a.m\n");
  WriteText(dir.path() + "/ruler/PaulGrahamEssays.json.part", std::string(1000, 'x'));
  Captured c = List(dir.path());
  EXPECT_EQ(c.code, kExitBadInput);
  EXPECT_EQ(Line(c.out, "data dir:"), "data dir: " + dir.path());
  EXPECT_EQ(Line(c.out, kIfeval), "ok           207111  ifeval/input_data.jsonl");
  EXPECT_EQ(Line(c.out, "gpqa/dataset.zip"), "missing           -  gpqa/dataset.zip");
  EXPECT_EQ(Line(c.out, "punkt-english/abbrev_types.txt"),
            "CORRUPT           4  punkt-english/abbrev_types.txt  [sha256 " + Sha256Hex("a.m\n") +
                ", expected c7baa3c333ea86629a32400663db8cfcc5c6d61a37107ddeac60111b550806cd]");
  EXPECT_EQ(Line(c.out, "ruler/PaulGrahamEssays.json"),
            "partial           -  ruler/PaulGrahamEssays.json  [1000 bytes in .part; fetch resumes]");
  EXPECT_EQ(Line(c.out, "ruler/squad.json"),
            "missing           -  ruler/squad.json  [optional (evalrun datasets fetch ruler-qa)]");
  EXPECT_EQ(Line(c.out, "ruler/english_words.json"),
            "missing           -  ruler/english_words.json  [optional (evalrun datasets fetch ruler-english-words)]");
  EXPECT_EQ(Line(c.out, " ok, "), "1 ok, 66 missing, 1 corrupt, 10 optional not fetched");
  EXPECT_NE(c.err.find("evalrun datasets fetch --data-dir " + dir.path()), std::string::npos) << c.err;
}

}  // namespace
}  // namespace evalrun
