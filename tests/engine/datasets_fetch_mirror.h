// The local mirror the dataset fetch tests download from (127.0.0.1 only, no
// network), and the fetch call they share (datasets_fetch_test.cc,
// datasets_fetch_sources_test.cc, http_download_test.cc).
//
// MirrorServer serves a data dir's copy on a port of its own from its own
// thread until it is destroyed; its methods may be called from any thread.
#ifndef EVALRUN_TESTS_ENGINE_DATASETS_FETCH_MIRROR_H_
#define EVALRUN_TESTS_ENGINE_DATASETS_FETCH_MIRROR_H_

#ifndef CPPHTTPLIB_OPENSSL_SUPPORT
#define CPPHTTPLIB_OPENSSL_SUPPORT  // the layout Debian's libcpp-httplib was built with
#endif
#include <httplib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "datasets/fetch.h"
#include "tests/support/capture_output.h"
#include "tests/support/jsonl_file.h"
#include "tests/support/run_binary.h"

namespace evalrun::fetch_testing {

// One request the mirror answered.
struct Request {
  std::string path;   // with the query for /rows
  std::string host;
  std::string range;
  std::string authorization;
};

// The mirror: GET /<data-dir path> serves <root>/<path> (or an override),
// with byte ranges; GET /rows pages mmlu-pro/<split>.jsonl as the Hugging
// Face dataset viewer does (a paged source for tests that name it as one);
// GET /r/<path> redirects to http://localhost:<port>/<path>. With
// `Api::kFilesOnly` it is a plain static server (as `python3 -m
// http.server` in the data dir): /rows is a file like any other, absent.
class MirrorServer {
 public:
  enum class Api { kFilesAndRows, kFilesOnly };
  explicit MirrorServer(std::string root, Api api = Api::kFilesAndRows) : root_(std::move(root)) {
    if (api == Api::kFilesAndRows)
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
        if (rel.find("..") != std::string::npos || !std::filesystem::is_regular_file(root_ + "/" + rel)) {
          res.status = 404;
          res.set_content("Not Found", "text/plain");
          return;
        }
        body = testing::ReadFile(root_ + "/" + rel);
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
    if (rows.empty()) rows = testing::ReadJsonLines(root_ + "/mmlu-pro/" + split + ".jsonl");
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

// DatasetsFetch(o) with its output captured, without the waits between
// retries unless the test sets its own.
inline testing::Captured Fetch(FetchOptions o) {
  if (o.retry_delay_ms == 1000) o.retry_delay_ms = 0;
  return testing::Capture([&](FILE* out, FILE* err) { return DatasetsFetch(o, out, err); });
}

// A file of the shared data that every test may fetch, and its sha256.
inline const std::string kIfeval = "ifeval/input_data.jsonl";
inline const std::string kIfevalSha = "67ffeee0fcb87c317c5b08a2de85557b4a7e96ada6178aa645b4954fe4b53d49";

}  // namespace evalrun::fetch_testing

#endif  // EVALRUN_TESTS_ENGINE_DATASETS_FETCH_MIRROR_H_
