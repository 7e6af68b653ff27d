// The sources the manifests name, fetched as they are (no mirror): every
// file has an https source and only Hugging Face hosts get $HF_TOKEN; a zip
// member sorted on the way in, a plain file behind a redirect, and paged
// rows, from manifests the tests write, served by the local mirror
// (datasets_fetch_mirror.h).
#include <zip.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "datasets/fetch.h"
#include "datasets/manifest.h"
#include "evals/base/exit_codes.h"
#include "evals/base/sha256.h"
#include "evals/server/http.h"
#include "tests/engine/datasets_fetch_mirror.h"
#include "tests/support/capture_output.h"
#include "tests/support/run_binary.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

namespace evalrun {
namespace {

namespace fs = std::filesystem;
using namespace fetch_testing;  // datasets_fetch_mirror.h
using testing::Captured;
using testing::ReadFile;
using testing::TempDir;

TEST(DatasetsFetchTest, EveryManifestFileNamesAnHttpsSource) {
  int files = 0, zip_members = 0, paged = 0;
  for (const auto& m : AllManifests()) {
    for (const auto& f : m.files) {
      ++files;
      ASSERT_TRUE(f.raw.contains("source")) << f.path;
      const nlohmann::json& src = f.raw["source"];
      HttpUrl u;
      ASSERT_TRUE(ParseHttpUrl(src.value("url", ""), &u)) << f.path;
      EXPECT_EQ(u.scheme, "https") << f.path;
      if (src.contains("zip_member")) ++zip_members;
      if (src.contains("hf_rows")) {
        ++paged;
        EXPECT_EQ(src["url"], "https://datasets-server.huggingface.co/rows");
        EXPECT_EQ(src["hf_rows"]["dataset"], "TIGER-Lab/MMLU-Pro");
      }
    }
  }
  EXPECT_EQ(files, 78);  // livecodebench: 6 optional files; gsm8k (a task file's data): 1
  EXPECT_EQ(zip_members, 4);  // punkt-english, from nltk_data's punkt_tab.zip
  EXPECT_EQ(paged, 2);        // MMLU-Pro test and validation
}

TEST(DatasetsFetchTest, OnlyHuggingFaceHostsGetTheToken) {
  EXPECT_TRUE(IsHuggingFaceUrl("https://datasets-server.huggingface.co/rows?dataset=x"));
  EXPECT_TRUE(IsHuggingFaceUrl("https://huggingface.co/datasets/TIGER-Lab/MMLU-Pro"));
  EXPECT_FALSE(IsHuggingFaceUrl("http://huggingface.co/x"));  // not over plain http
  EXPECT_FALSE(IsHuggingFaceUrl("https://huggingface.co.example.com/x"));
  EXPECT_FALSE(IsHuggingFaceUrl("https://nothuggingface.co/x"));
  EXPECT_FALSE(IsHuggingFaceUrl("https://raw.githubusercontent.com/x"));
  EXPECT_FALSE(IsHuggingFaceUrl("http://127.0.0.1:8080/rows"));
}

// Sources as the real manifests have them (not mirrored): a zip member whose
// lines are sorted on the way in, and a plain file behind a redirect.
TEST(DatasetsFetchTest, ZipMembersAndRedirectedSourcesWithoutAMirror) {
  MirrorServer server(testing::DatasetsDir());
  TempDir dir("evalrun_fetch");
  const std::string member = "b\tx\nc\ty\na\tz\n";
  const std::string sorted = "a\tz\nb\tx\nc\ty\n";
  {
    int e = 0;
    zip_t* za = zip_open((dir.path() + "/pkg.zip").c_str(), ZIP_CREATE | ZIP_TRUNCATE, &e);
    ASSERT_NE(za, nullptr);
    zip_source_t* src = zip_source_buffer(za, member.data(), member.size(), 0);
    ASSERT_GE(zip_file_add(za, "pkg/english/t.tab", src, ZIP_FL_OVERWRITE), 0);
    ASSERT_EQ(zip_close(za), 0);
  }
  server.Override("pkg.zip", ReadFile(dir.path() + "/pkg.zip"));
  nlohmann::json raw = {
      {"name", "toy"},
      {"files",
       {{{"path", "toy/t.tab"},
         {"sha256", Sha256Hex(sorted)},
         {"source", {{"url", server.url() + "/pkg.zip"}, {"zip_member", "pkg/english/t.tab"}, {"transform", "sort-lines"}}}},
        {{"path", "toy/input.jsonl"},
         {"sha256", kIfevalSha},
         {"bytes", 207111},
         {"source", {{"url", server.url() + "/r/" + kIfeval}}}}}}};
  std::vector<Manifest> manifests(1);
  manifests[0].name = "toy";
  manifests[0].raw = raw;
  for (const auto& f : raw["files"]) {
    ManifestFile mf;
    mf.path = f["path"];
    mf.sha256 = f["sha256"];
    mf.bytes = f.value("bytes", int64_t{-1});
    mf.raw = f;
    manifests[0].files.push_back(mf);
  }
  TempDir data("evalrun_fetch");
  FetchOptions o;
  o.data_dir = data.path();
  o.manifests = &manifests;
  Captured c = Fetch(o);
  EXPECT_EQ(c.code, kExitOk) << c.err;
  EXPECT_EQ(ReadFile(data.path() + "/toy/t.tab"), sorted);
  EXPECT_EQ(Sha256Hex(ReadFile(data.path() + "/toy/input.jsonl")), kIfevalSha);
  EXPECT_FALSE(fs::exists(data.path() + "/toy/.pkg.zip"));  // the archive is gone once read
  EXPECT_EQ(server.RequestsFor("/pkg.zip").size(), 1u);

  // A manifest entry without a source cannot be fetched.
  manifests[0].files[0].raw.erase("source");
  fs::remove(data.path() + "/toy/t.tab");
  c = Fetch(o);
  EXPECT_EQ(c.code, kExitBadInput);
  EXPECT_NE(c.err.find("manifest toy: toy/t.tab: no \"source\""), std::string::npos) << c.err;
}

std::vector<Manifest> RowsManifest(const std::string& endpoint, int64_t rows) {
  nlohmann::json f = {{"path", "mmlu-pro/validation.jsonl"},
                      {"rows", rows},
                      {"sha256", FindManifestFile("mmlu-pro/validation.jsonl")->sha256},
                      {"source", FindManifestFile("mmlu-pro/validation.jsonl")->raw["source"]}};
  f["source"]["url"] = endpoint;
  f["source"]["hf_rows"]["page_rows"] = 25;
  std::vector<Manifest> ms(1);
  ms[0].name = "mmlu-pro";
  ms[0].raw = {{"name", "mmlu-pro"}, {"files", {f}}};
  ManifestFile mf;
  mf.path = f["path"];
  mf.rows = rows;
  mf.sha256 = f["sha256"];
  mf.raw = f;
  ms[0].files.push_back(mf);
  return ms;
}

TEST(DatasetsFetchTest, RowsPagesAreRetriedAndTheirTotalChecked) {
  MirrorServer server(testing::DatasetsDir());
  server.RowsUnavailableOnce(50);
  TempDir dir("evalrun_fetch");
  std::vector<Manifest> ms = RowsManifest(server.url() + "/rows", 70);
  FetchOptions o;
  o.data_dir = dir.path();
  o.manifests = &ms;
  Captured c = Fetch(o);
  EXPECT_EQ(c.code, kExitOk) << c.err;
  std::vector<std::string> offsets;
  for (const auto& r : server.RequestsFor("/rows")) offsets.push_back(r.path.substr(r.path.find("&offset=") + 8, 2));
  EXPECT_EQ(offsets, (std::vector<std::string>{"0&", "25", "50", "50"}));
  EXPECT_NE(c.err.find("HTTP 503: {\"error\":\"The server is busier than usual\"}; trying again (2/5)"),
            std::string::npos) << c.err;
  EXPECT_EQ(ReadFile(dir.path() + "/mmlu-pro/validation.jsonl"),
            ReadFile(testing::DatasetsDir() + "/mmlu-pro/validation.jsonl"));

  // Another revision (a different row count) is refused before anything is written.
  TempDir dir2;
  ms = RowsManifest(server.url() + "/rows", 69);
  o.data_dir = dir2.path();
  c = Fetch(o);
  EXPECT_EQ(c.code, kExitBadInput);
  EXPECT_NE(c.err.find("the source has 70 rows, the manifest expects 69 (another revision of TIGER-Lab/MMLU-Pro?)"),
            std::string::npos) << c.err;
  EXPECT_FALSE(fs::exists(dir2.path() + "/mmlu-pro/validation.jsonl"));
}

// A paged source resumes after the last complete line of its .part file.
TEST(DatasetsFetchTest, PagedRowsResumeAfterTheLastCompleteLine) {
  MirrorServer server(testing::DatasetsDir());
  TempDir dir("evalrun_fetch");
  const std::string path = "mmlu-pro/validation.jsonl";
  const std::string full = ReadFile(testing::DatasetsDir() + "/" + path);
  size_t cut = 0;
  for (int i = 0; i < 30; ++i) cut = full.find('\n', cut) + 1;
  // 30 whole lines and a torn 31st, as an interrupted run leaves them.
  testing::WriteText(dir.path() + "/" + path + ".part", full.substr(0, cut + 25));
  std::vector<Manifest> ms = RowsManifest(server.url() + "/rows", 70);
  FetchOptions o;
  o.data_dir = dir.path();
  o.manifests = &ms;
  Captured c = Fetch(o);
  EXPECT_EQ(c.code, kExitOk) << c.err;
  auto reqs = server.RequestsFor("/rows");
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].path, "/rows?config=default&dataset=TIGER-Lab/MMLU-Pro&length=25&offset=30&split=validation");
  EXPECT_EQ(ReadFile(dir.path() + "/" + path), full);
  EXPECT_NE(c.err.find(path + ": resuming at row 30"), std::string::npos) << c.err;
}

}  // namespace
}  // namespace evalrun
