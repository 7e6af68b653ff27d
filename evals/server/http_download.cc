// HttpDownload (http.h): one file over a GET along redirects
// (http_internal::GetFollowing), resumed with a Range request when part of
// it is there, and the outcome of each try as a Status.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "evals/base/files.h"
#include "evals/base/status.h"
#include "evals/server/http.h"
#include "evals/server/http_internal.h"

namespace evalrun {
namespace {

constexpr double kDownloadReadTimeoutS = 60;

// "bytes 100-199/1000" -> first=100, total=1000; "bytes */1000" -> first=-1,
// total=1000; total -1 when "*" or unparsable.
void ParseContentRange(const std::string& v, int64_t* first, int64_t* total) {
  *first = -1;
  *total = -1;
  if (v.rfind("bytes ", 0) != 0) return;
  std::string rest = v.substr(6);
  size_t slash = rest.find('/');
  if (slash == std::string::npos) return;
  std::string range = rest.substr(0, slash), tot = rest.substr(slash + 1);
  if (range != "*") {
    size_t dash = range.find('-');
    if (dash != std::string::npos) *first = std::strtoll(range.substr(0, dash).c_str(), nullptr, 10);
  }
  if (!tot.empty() && tot != "*") *total = std::strtoll(tot.c_str(), nullptr, 10);
}

// The start of an error page for a message: whitespace collapsed, at most
// 300 bytes; HTML pages are left out (their markup says nothing useful).
std::string BodyExcerpt(const std::string& body, const std::string& content_type) {
  if (content_type.find("html") != std::string::npos) return "";
  std::string b;
  for (char c : body) {
    if (b.size() >= 300) break;
    bool space = c == ' ' || c == '\n' || c == '\r' || c == '\t';
    if (space && (b.empty() || b.back() == ' ')) continue;
    b.push_back(space ? ' ' : c);
  }
  while (!b.empty() && b.back() == ' ') b.pop_back();
  if (b.size() >= 300) b += "...";
  return b;
}

// Where one GET of a download puts its bytes (the file, or an error page's
// start for the message), and what went wrong on the way.
struct DownloadSink {
  DownloadSink(const std::string& dest, int64_t from, const DownloadProgress& p, HttpDownloadInfo* i)
      : dest_path(dest), resume_from(from), progress(p), info(i) {}
  const std::string& dest_path;
  int64_t resume_from;
  const DownloadProgress& progress;
  HttpDownloadInfo* info;
  FILE* f = nullptr;
  std::string io_error, err_body, content_range, content_type, bad_range;
  int64_t got = 0;

  // 206 for the asked range: the partial file cut to it and appended to.
  bool Resume(const http_internal::ReplyHead& r) {
    content_range = r.Header("Content-Range");
    int64_t first = -1;
    ParseContentRange(content_range, &first, &info->total);
    if (first != resume_from) {
      bad_range = content_range.empty() ? "(none)" : content_range;
      return false;
    }
    if (::truncate(dest_path.c_str(), resume_from) != 0) {
      io_error = dest_path + ": cannot cut the partial file to " + std::to_string(resume_from) +
                 " bytes: " + std::strerror(errno);
      return false;
    }
    f = std::fopen(dest_path.c_str(), "ab");
    info->resumed = true;
    got = resume_from;
    return true;
  }

  bool OnResponse(const http_internal::ReplyHead& r) {
    if (r.status() == 206 && resume_from > 0) {
      if (!Resume(r)) return false;
    } else if (r.status() == 200) {
      f = std::fopen(dest_path.c_str(), "wb");
      got = 0;
      if (r.HasHeader("Content-Length"))
        info->total = std::strtoll(r.Header("Content-Length").c_str(), nullptr, 10);
    } else {
      content_range = r.Header("Content-Range");
      content_type = r.Header("Content-Type");
      return true;  // an error page: keep its start for the message
    }
    if (f == nullptr) {
      io_error = dest_path + ": cannot open for writing: " + std::strerror(errno);
      return false;
    }
    return true;
  }

  bool OnData(const char* d, size_t n) {
    if (f == nullptr) {
      if (err_body.size() < 4096) err_body.append(d, std::min(n, 4096 - err_body.size()));
      return true;
    }
    if (std::fwrite(d, 1, n, f) != n) {
      io_error = dest_path + ": write failed: " + std::strerror(errno);
      return false;
    }
    got += static_cast<int64_t>(n);
    info->bytes_written += static_cast<int64_t>(n);
    if (progress) progress(got, info->total);
    return true;
  }
};

// What one round came to; *again: the server's file changed under a resume
// (416), so the caller starts over from byte 0 (*resume_from set to 0).
Status RoundOutcome(const std::string& url, const std::string& err, const DownloadSink& sink, int64_t* resume_from,
                    HttpDownloadInfo* info, bool* again) {
  const std::string& dest_path = sink.dest_path;
  *again = false;
  if (!sink.io_error.empty()) return Status::IoError(sink.io_error);
  if (!sink.bad_range.empty())
    return Status::ServerError(url + ": asked for bytes from " + std::to_string(*resume_from) +
                               ", the server answered 206 with Content-Range " + sink.bad_range);
  const bool body = info->status == 200 || info->status == 206;
  if (!err.empty()) {
    std::string kept = info->file_size > 0 && body ? "; the " + std::to_string(info->file_size) +
                                                         " bytes received are kept in " + dest_path +
                                                         " (run again to resume)"
                                                   : "";
    return Status::Unavailable(url + ": " + err + kept);
  }
  if (body) {
    if (info->total >= 0 && info->file_size != info->total)
      return Status::Unavailable(url + ": the transfer ended after " + std::to_string(info->file_size) + " of " +
                                 std::to_string(info->total) + " bytes (kept in " + dest_path +
                                 "; run again to resume)");
    return Status::Ok();
  }
  if (info->status == 416 && *resume_from > 0) {
    int64_t first = -1, total = -1;
    ParseContentRange(sink.content_range, &first, &total);
    if (total == *resume_from && FileSize(dest_path) == *resume_from) {
      info->total = total;
      info->file_size = total;
      return Status::Ok();  // the partial file was already whole
    }
    *resume_from = 0;  // the server's file changed: start again
    *again = true;
    return Status::Ok();
  }
  std::string excerpt = BodyExcerpt(sink.err_body, sink.content_type);
  return Status::ServerError(url + ": HTTP " + std::to_string(info->status) + (excerpt.empty() ? "" : ": " + excerpt));
}

}  // namespace

Status HttpDownload(const std::string& url, const std::string& dest_path, int64_t resume_from,
                    const std::string& bearer_token, const DownloadProgress& progress,
                    HttpDownloadInfo* info) {
  HttpDownloadInfo local;
  if (info == nullptr) info = &local;
  *info = HttpDownloadInfo();
  HttpUrl parsed;
  if (!ParseHttpUrl(url, &parsed)) return Status::InvalidInput(url + ": not an http(s) URL");
  for (int round = 0; round < 2; ++round) {
    HttpHeaders headers{{"Accept-Encoding", "identity"}};
    if (resume_from > 0) headers.emplace_back("Range", "bytes=" + std::to_string(resume_from) + "-");
    info->resumed = false;
    info->total = -1;
    DownloadSink sink(dest_path, resume_from, progress, info);
    bool refused = false;
    std::string err = http_internal::GetFollowing(
        url, headers, bearer_token, kDownloadReadTimeoutS,
        [&sink](const http_internal::ReplyHead& r) { return sink.OnResponse(r); },
        [&sink](const char* d, size_t n) { return sink.OnData(d, n); }, &info->status, &info->final_url, &refused,
        &info->not_connected);
    if (sink.f != nullptr && std::fclose(sink.f) != 0 && sink.io_error.empty())
      sink.io_error = dest_path + ": write failed: " + std::strerror(errno);
    info->file_size = std::max<int64_t>(FileSize(dest_path), 0);
    bool again = false;
    Status st = RoundOutcome(url, err, sink, &resume_from, info, &again);
    if (!again) return st;
  }
  return Status::ServerError(url + ": HTTP 416 twice (Range Not Satisfiable)");
}

}  // namespace evalrun
