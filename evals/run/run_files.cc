#include "evals/run/run_files.h"
#include "evals/base/redact.h"
#include "evals/base/json_bounds.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "evals/base/json_fields.h"
#include "evals/base/jsonl.h"

namespace evalrun {
namespace {

std::string Errno() { return std::strerror(errno); }

Status WriteAll(int fd, const std::string& data, const std::string& path) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t w = ::write(fd, data.data() + off, data.size() - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      return Status::IoError(path + ": write failed: " + Errno());
    }
    off += static_cast<size_t>(w);
  }
  return Status::Ok();
}

}  // namespace

Status WriteFileAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IoError(tmp + ": cannot write: " + Errno());
  Status st = WriteAll(fd, RedactSecrets(text), tmp);
  if (st.ok() && ::fsync(fd) != 0) st = Status::IoError(tmp + ": fsync failed: " + Errno());
  ::close(fd);
  if (!st.ok()) return st;
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    return Status::IoError(path + ": rename from .tmp failed: " + Errno());
  SyncDirectory(std::filesystem::path(path).parent_path().string());
  return Status::Ok();
}

void SyncDirectory(const std::string& dir) {
  int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

JsonlAppender::~JsonlAppender() { Close(); }

Status JsonlAppender::Open(const std::string& path) {
  std::lock_guard<std::mutex> l(mu_);
  path_ = path;
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0 && errno == ELOOP)
    return Status::InvalidInput(path + ": is a symbolic link; evalrun appends to this file itself and does not "
                                "follow links: put the file itself there, or start another --job");
  if (fd_ < 0) return Status::IoError(path + ": cannot open for appending: " + Errno());
  return Status::Ok();
}

Status JsonlAppender::Write(const nlohmann::json& line) {
  std::string text = RedactSecrets(DumpLine(line));
  text.push_back('\n');
  std::lock_guard<std::mutex> l(mu_);
  if (fd_ < 0) return Status::Internal(path_ + ": not open");
  dirty_ = true;
  return WriteAll(fd_, text, path_);
}

Status JsonlAppender::Sync() {
  std::lock_guard<std::mutex> l(mu_);
  if (fd_ < 0) return Status::Internal(path_ + ": not open");
  if (!dirty_) return Status::Ok();
  ++syncs_;
  if (::fdatasync(fd_) != 0) return Status::IoError(path_ + ": fsync failed: " + Errno());
  dirty_ = false;
  return Status::Ok();
}

Status JsonlAppender::Append(const nlohmann::json& line) {
  EVALRUN_RETURN_IF_ERROR(Write(line));
  return Sync();
}

int JsonlAppender::syncs() const {
  std::lock_guard<std::mutex> l(mu_);
  return syncs_;
}

void JsonlAppender::Close() {
  std::lock_guard<std::mutex> l(mu_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Status LoadSampleFile(const std::string& path, SampleFileContents* out) {
  *out = SampleFileContents();
  struct stat entry;
  if (::lstat(path.c_str(), &entry) == 0 && S_ISLNK(entry.st_mode))
    return Status::InvalidInput(path + ": is a symbolic link; evalrun writes and cuts this file itself and does "
                                "not follow links (it could cut the file the link points to): put the file itself "
                                "there, or start another --job");
  std::string text;
  Status st = ReadFileToString(path, &text);
  if (st.code() == Status::Code::kNotFound) return Status::Ok();
  EVALRUN_RETURN_IF_ERROR(st);
  size_t keep = text.size();
  // A torn tail: the bytes after the last newline, or a last line that does
  // not parse.
  size_t last_nl = text.rfind('\n');
  size_t tail_start = last_nl == std::string::npos ? 0 : last_nl + 1;
  if (tail_start < text.size()) {
    keep = tail_start;
  } else if (last_nl != std::string::npos) {
    size_t prev = last_nl == 0 ? std::string::npos : text.rfind('\n', last_nl - 1);
    size_t start = prev == std::string::npos ? 0 : prev + 1;
    // Nested past the bound is not a tear: ParseJsonl below names the line.
    const std::string_view last = std::string_view(text).substr(start, last_nl - start);
    if (CheckJsonBounds(last, path).ok() && nlohmann::json::parse(last, nullptr, false).is_discarded()) keep = start;
  }
  // Every other line is checked before the file is touched: a bad one is
  // not a crash's doing (appends tear only the last line).
  st = ParseJsonl(std::string_view(text).substr(0, keep), path, [&](int line, const nlohmann::json& j) {
    if (!j.is_object() || !j.contains("id") || !j["id"].is_string())
      return Status::InvalidInput(path + ":" + std::to_string(line) +
                                  ": expected a JSON object with a string \"id\" (an answer line)");
    out->lines.push_back(j);
    out->line_numbers.push_back(line);
    return Status::Ok();
  });
  if (!st.ok()) {
    out->lines.clear();
    out->line_numbers.clear();
    return Status::InvalidInput(st.message() + "; only the last line can be torn by a crash, this one is "
                                "damaged: repair or delete that line, or start another --job");
  }
  if (keep < text.size()) {
    out->dropped_torn_tail = true;
    out->torn_tail = text.substr(keep, 200);
    if (::truncate(path.c_str(), static_cast<off_t>(keep)) != 0)
      return Status::IoError(path + ": cannot cut off the torn last line: " + Errno());
  }
  return Status::Ok();
}

}  // namespace evalrun
