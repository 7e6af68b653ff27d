// `evalrun datasets fetch` / `list` against a local mirror (127.0.0.1 only,
// no network): a test server serves ../shared/datasets by data-dir path and
// pages the MMLU-Pro JSONL through a fake Hugging Face /rows endpoint.
#ifndef CPPHTTPLIB_OPENSSL_SUPPORT
#define CPPHTTPLIB_OPENSSL_SUPPORT  // the layout Debian's libcpp-httplib was built with
#endif
#include <httplib.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <stdlib.h>
#include <zip.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "datasets/fetch.h"
#include "datasets/manifest.h"
#include "evals/base/exit_codes.h"
#include "evals/server/http.h"
#include "evals/base/sha256.h"
#include "tests/support/capture_output.h"
#include "tests/support/run_binary.h"
#include "tests/support/temp_dir.h"
#include "tests/test_paths.h"

namespace evalrun {
namespace {

namespace fs = std::filesystem;
using testing::Capture;
using testing::Captured;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteText;

struct Request {
  std::string path;   // with the query for /rows
  std::string host;
  std::string range;
  std::string authorization;
};

// The mirror: GET /<data-dir path> serves <root>/<path> (or an override),
// with byte ranges; GET /rows pages mmlu-pro/<split>.jsonl as the Hugging
// Face dataset viewer does; GET /r/<path> redirects to http://localhost:<port>/<path>.
class MirrorServer {
 public:
  explicit MirrorServer(std::string root) : root_(std::move(root)) {
    server_.Get("/rows", [this](const httplib::Request& req, httplib::Response& res) { Rows(req, res); });
    server_.Get(R"(/r/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
      Log(req);
      res.set_redirect("http://localhost:" + std::to_string(port_) + "/" + std::string(req.matches[1]), 302);
    });
    server_.Get(R"(/(.+))", [this](const httplib::Request& req, httplib::Response& res) { File(req, res); });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // bind_to_any_port() already listens: connections queue until the loop runs.
  }
  ~MirrorServer() {
    server_.stop();
    thread_.join();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }

  void Override(const std::string& path, std::string bytes) {
    std::lock_guard<std::mutex> l(mu_);
    overrides_[path] = std::move(bytes);
  }
  // The next plain GET (no Range) of `path` sends the headers for the whole
  // file, half of the body, then drops the connection.
  void FailHalfOnce(const std::string& path) {
    std::lock_guard<std::mutex> l(mu_);
    fail_half_.insert(path);
  }
  // The next /rows request at `offset` answers 503.
  void RowsUnavailableOnce(long offset) {
    std::lock_guard<std::mutex> l(mu_);
    rows_503_.insert(offset);
  }
  std::vector<Request> requests() const {
    std::lock_guard<std::mutex> l(mu_);
    return requests_;
  }
  std::vector<Request> RequestsFor(const std::string& prefix) const {
    std::vector<Request> out;
    for (const auto& r : requests())
      if (r.path.rfind(prefix, 0) == 0) out.push_back(r);
    return out;
  }

 private:
  void Log(const httplib::Request& req) {
    std::lock_guard<std::mutex> l(mu_);
    std::string path = req.path;
    if (!req.params.empty()) {
      path += "?";
      for (const auto& [k, v] : req.params) path += k + "=" + v + "&";
      path.pop_back();
    }
    requests_.push_back({path, req.get_header_value("Host"), req.get_header_value("Range"),
                         req.get_header_value("Authorization")});
  }

  void File(const httplib::Request& req, httplib::Response& res) {
    Log(req);
    std::string rel = req.path.substr(1);
    std::string body;
    bool fail_half = false;
    {
      std::lock_guard<std::mutex> l(mu_);
      auto it = overrides_.find(rel);
      if (it != overrides_.end()) body = it->second;
      if (req.ranges.empty() && fail_half_.erase(rel) > 0) fail_half = true;
      if (it == overrides_.end()) {
        if (rel.find("..") != std::string::npos || !fs::is_regular_file(root_ + "/" + rel)) {
          res.status = 404;
          res.set_content("Not Found", "text/plain");
          return;
        }
        body = ReadFile(root_ + "/" + rel);
      }
    }
    if (fail_half) {
      auto data = std::make_shared<std::string>(std::move(body));
      const size_t half = data->size() / 2;
      res.set_content_provider(data->size(), "application/octet-stream",
                               [data, half](size_t offset, size_t length, httplib::DataSink& sink) {
                                 if (offset >= half) return false;  // drop the connection
                                 sink.write(data->data() + offset, std::min(length, half - offset));
                                 return true;
                               });
      return;
    }
    res.set_content(body, "application/octet-stream");  // httplib answers a Range with 206
  }

  // {"features": [...], "rows": [{"row_idx", "row", "truncated_cells"}],
  //  "num_rows_total", "num_rows_per_page", "partial"}; length at most 100.
  void Rows(const httplib::Request& req, httplib::Response& res) {
    Log(req);
    const std::string dataset = req.get_param_value("dataset"), config = req.get_param_value("config"),
                      split = req.get_param_value("split");
    const long offset = std::stol(req.has_param("offset") ? req.get_param_value("offset") : "0");
    const long length = std::stol(req.has_param("length") ? req.get_param_value("length") : "100");
    if (dataset != "TIGER-Lab/MMLU-Pro" || config != "default" || (split != "test" && split != "validation")) {
      res.status = 404;
      res.set_content(R"({"error":"Not found."})", "application/json");
      return;
    }
    {
      std::lock_guard<std::mutex> l(mu_);
      if (rows_503_.erase(offset) > 0) {
        res.status = 503;
        res.set_content(R"({"error":"The server is busier than usual"})", "application/json");
        return;
      }
    }
    if (length > 100 || offset < 0) {
      res.status = 422;
      res.set_content(R"({"error":"Parameter 'length' must not be greater than 100"})", "application/json");
      return;
    }
    const std::vector<nlohmann::json>& rows = Split(split);
    nlohmann::json page;
    page["features"] = nlohmann::json::array();
    int idx = 0;
    for (const char* name : {"question_id", "question", "options", "answer", "answer_index", "cot_content",
                             "category", "src"})
      page["features"].push_back({{"feature_idx", idx++}, {"name", name}, {"type", {{"_type", "Value"}}}});
    page["rows"] = nlohmann::json::array();
    for (long i = offset; i < offset + length && i < static_cast<long>(rows.size()); ++i)
      page["rows"].push_back({{"row_idx", i}, {"row", rows[i]}, {"truncated_cells", nlohmann::json::array()}});
    page["num_rows_total"] = rows.size();
    page["num_rows_per_page"] = 100;
    page["partial"] = false;
    res.set_content(page.dump(), "application/json");  // keys sorted: not the file's order
  }

  const std::vector<nlohmann::json>& Split(const std::string& split) {
    std::lock_guard<std::mutex> l(mu_);
    auto& rows = splits_[split];
    if (rows.empty()) {
      std::ifstream in(root_ + "/mmlu-pro/" + split + ".jsonl");
      std::string line;
      while (std::getline(in, line)) rows.push_back(nlohmann::json::parse(line));
    }
    return rows;
  }

  std::string root_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  mutable std::mutex mu_;
  std::map<std::string, std::string> overrides_;
  std::set<std::string> fail_half_;
  std::set<long> rows_503_;
  std::vector<Request> requests_;
  std::map<std::string, std::vector<nlohmann::json>> splits_;
};

Captured Fetch(FetchOptions o) {
  if (o.retry_delay_ms == 1000) o.retry_delay_ms = 0;
  return Capture([&](FILE* out, FILE* err) { return DatasetsFetch(o, out, err); });
}

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

const std::string kIfeval = "ifeval/input_data.jsonl";
const std::string kIfevalSha = "67ffeee0fcb87c317c5b08a2de85557b4a7e96ada6178aa645b4954fe4b53d49";

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
  // MMLU-Pro came through the rows API, 100 rows a page: 121 pages of test, 1 of validation.
  EXPECT_EQ(mirror.RequestsFor("/rows").size(), 122u);
  EXPECT_EQ(mirror.RequestsFor("/rows").front().path,
            "/rows?config=default&dataset=TIGER-Lab/MMLU-Pro&length=100&offset=0&split=test");
  EXPECT_EQ(mirror.RequestsFor("/rows")[120].path,
            "/rows?config=default&dataset=TIGER-Lab/MMLU-Pro&length=32&offset=12000&split=test");
  EXPECT_EQ(ReadFile(dir.path() + "/mmlu-pro/test.jsonl"),
            ReadFile(testing::DatasetsDir() + "/mmlu-pro/test.jsonl"));
  for (const auto& r : mirror.requests()) EXPECT_EQ(r.authorization, "") << r.path;  // no token to a mirror

  // Everything verifies for `list` too; a second fetch downloads nothing.
  Captured l = List(dir.path());
  EXPECT_EQ(l.code, kExitOk) << l.out << l.err;
  EXPECT_NE(l.out.find(std::to_string(required) + " ok, 0 missing, 0 corrupt, 3 optional not fetched"),
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

TEST(DatasetsFetchTest, PagedRowsResumeAfterTheLastCompleteLine) {
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
  auto reqs = mirror.RequestsFor("/rows");
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].path, "/rows?config=default&dataset=TIGER-Lab/MMLU-Pro&length=40&offset=30&split=validation");
  EXPECT_EQ(ReadFile(dir.path() + "/" + path), full);
  EXPECT_NE(c.err.find(path + ": resuming at row 30"), std::string::npos) << c.err;
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
  EXPECT_NE(c.err.find("unknown dataset \"mmlu_pro\" (did you mean \"mmlu-pro\"?); known: gpqa, ifeval, langdetect, "
                       "mmlu-pro, punkt-english, ruler, ruler-english-words, ruler-qa, all"),
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
  EXPECT_EQ(mirror.RequestsFor("/rows").size(), 1u);
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
  EXPECT_EQ(Line(c.out, " ok, "), "1 ok, 66 missing, 1 corrupt, 3 optional not fetched");
  EXPECT_NE(c.err.find("evalrun datasets fetch --data-dir " + dir.path()), std::string::npos) << c.err;
}

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
  EXPECT_EQ(files, 71);
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

TEST(HttpDownloadTest, RedirectsAreFollowedButTheTokenStaysWithItsHost) {
  MirrorServer server(testing::DatasetsDir());
  HttpResponse r = HttpGetUrl(server.url() + "/r/" + kIfeval, {}, "secret-token", 10);
  ASSERT_EQ(r.status, 200) << r.error;
  EXPECT_EQ(Sha256Hex(r.body), kIfevalSha);
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].host, "127.0.0.1:" + std::to_string(server.port()));
  EXPECT_EQ(reqs[0].authorization, "Bearer secret-token");
  EXPECT_EQ(reqs[1].host, "localhost:" + std::to_string(server.port()));
  EXPECT_EQ(reqs[1].authorization, "");

  TempDir dir("evalrun_fetch");
  HttpDownloadInfo info;
  int64_t last_got = 0, last_total = 0;
  Status st = HttpDownload(server.url() + "/r/" + kIfeval, dir.path() + "/x.part", 0, "", [&](int64_t g, int64_t t) {
    last_got = g;
    last_total = t;
  }, &info);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(info.status, 200);
  EXPECT_EQ(info.final_url, "http://localhost:" + std::to_string(server.port()) + "/" + kIfeval);
  EXPECT_EQ(last_got, 207111);
  EXPECT_EQ(last_total, 207111);
  EXPECT_EQ(Sha256Hex(ReadFile(dir.path() + "/x.part")), kIfevalSha);

  // Already whole: the server answers 416 for a range past the end.
  st = HttpDownload(server.url() + "/" + kIfeval, dir.path() + "/x.part", 207111, "", nullptr, &info);
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(info.status, 416);
  EXPECT_EQ(info.bytes_written, 0);
  EXPECT_EQ(fs::file_size(dir.path() + "/x.part"), 207111u);

  st = HttpDownload(server.url() + "/no/such/file", dir.path() + "/y.part", 0, "", nullptr, &info);
  EXPECT_EQ(st.code(), Status::Code::kServerError);
  EXPECT_EQ(st.message(), server.url() + "/no/such/file: HTTP 404: Not Found");
  st = HttpDownload("http://127.0.0.1:1/x", dir.path() + "/y.part", 0, "", nullptr, &info);
  EXPECT_EQ(st.code(), Status::Code::kUnavailable);
}

TEST(HttpUrlTest, ParsesAndResolves) {
  HttpUrl u;
  ASSERT_TRUE(ParseHttpUrl("HTTPS://Example.com/a/b?x=1#frag", &u));
  EXPECT_EQ(u.scheme, "https");
  EXPECT_EQ(u.host, "example.com");
  EXPECT_EQ(u.port, 443);
  EXPECT_EQ(u.path, "/a/b?x=1");
  EXPECT_EQ(u.Origin(), "https://example.com");
  ASSERT_TRUE(ParseHttpUrl("http://127.0.0.1:8080", &u));
  EXPECT_EQ(u.path, "/");
  EXPECT_EQ(u.Origin(), "http://127.0.0.1:8080");
  EXPECT_FALSE(ParseHttpUrl("ftp://x/y", &u));
  EXPECT_FALSE(ParseHttpUrl("http://:80/", &u));
  EXPECT_FALSE(ParseHttpUrl("http://u:p@host/", &u));
  ASSERT_TRUE(ParseHttpUrl("https://github.com/o/r/raw/main/f.zip", &u));
  EXPECT_EQ(ResolveLocation(u, "https://raw.githubusercontent.com/o/r/main/f.zip"),
            "https://raw.githubusercontent.com/o/r/main/f.zip");
  EXPECT_EQ(ResolveLocation(u, "//cdn.example/x"), "https://cdn.example/x");
  EXPECT_EQ(ResolveLocation(u, "/o/r/blob/main/f.zip"), "https://github.com/o/r/blob/main/f.zip");
  EXPECT_EQ(ResolveLocation(u, "g.zip"), "https://github.com/o/r/raw/main/g.zip");
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
  EXPECT_NE(c.err.find("datasets/manifests/toy.json: toy/t.tab: no \"source\""), std::string::npos) << c.err;
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

// HTTPS through OpenSSL against a local TLS server whose self-signed
// certificate is made trusted through $SSL_CERT_FILE.
TEST(HttpDownloadTest, HttpsWorksAndVerifiesTheCertificate) {
  TempDir dir("evalrun_fetch");
  EVP_PKEY* key = EVP_EC_gen("P-256");
  ASSERT_NE(key, nullptr);
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), 86400);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("127.0.0.1"), -1, -1, 0);
  X509_set_issuer_name(cert, name);
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  for (auto [nid, value] : {std::pair{NID_subject_alt_name, "IP:127.0.0.1"}, std::pair{NID_basic_constraints, "critical,CA:TRUE"}}) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
    ASSERT_NE(ext, nullptr);
    X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
  }
  ASSERT_GT(X509_sign(cert, key, EVP_sha256()), 0);
  const std::string pem = dir.path() + "/ca.pem";
  FILE* f = std::fopen(pem.c_str(), "w");
  ASSERT_NE(f, nullptr);
  PEM_write_X509(f, cert);
  std::fclose(f);

  httplib::SSLServer tls(cert, key);
  ASSERT_TRUE(tls.is_valid());
  const std::string body = ReadFile(testing::DatasetsDir() + "/" + kIfeval);
  tls.Get("/f", [&](const httplib::Request&, httplib::Response& res) { res.set_content(body, "text/plain"); });
  int port = tls.bind_to_any_port("127.0.0.1");
  std::thread t([&] { tls.listen_after_bind(); });

  const std::string url = "https://127.0.0.1:" + std::to_string(port) + "/f";

  // Untrusted first (the system store does not know this certificate).
  const char* old = std::getenv("SSL_CERT_FILE");
  std::string saved = old ? old : "";
  ASSERT_EQ(setenv("SSL_CERT_FILE", (dir.path() + "/none.pem").c_str(), 1), 0);
  Status st = HttpDownload(url, dir.path() + "/a.part", 0, "", nullptr, nullptr);
  EXPECT_EQ(st.code(), Status::Code::kUnavailable);
  EXPECT_NE(st.message().find("TLS"), std::string::npos) << st.ToString();

  ASSERT_EQ(setenv("SSL_CERT_FILE", pem.c_str(), 1), 0);
  st = HttpDownload(url, dir.path() + "/b.part", 0, "", nullptr, nullptr);
  if (old) setenv("SSL_CERT_FILE", saved.c_str(), 1); else unsetenv("SSL_CERT_FILE");
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(Sha256Hex(ReadFile(dir.path() + "/b.part")), kIfevalSha);

  tls.stop();
  t.join();
  X509_free(cert);
  EVP_PKEY_free(key);
}

}  // namespace
}  // namespace evalrun
