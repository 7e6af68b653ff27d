#include "evals/run/prompt_spool.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace evalrun {

PromptSpool::~PromptSpool() {
  if (fd_ >= 0) close(fd_);
}

Status PromptSpool::Open() {
  const char* t = std::getenv("TMPDIR");
  dir_ = t && *t ? t : "/tmp";
  // O_TMPFILE: never linked into the folder, so nothing is left behind.
  fd_ = open(dir_.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd_ < 0) {
    // A file system without O_TMPFILE: create, then unlink at once.
    std::string path = dir_ + "/evalrun-prompts-XXXXXX";
    fd_ = mkostemp(path.data(), O_CLOEXEC);
    if (fd_ >= 0) unlink(path.c_str());
  }
  if (fd_ < 0)
    return Status::IoError(dir_ + ": cannot make a temporary file for the prompts (" + std::strerror(errno) +
                           "); set TMPDIR to a folder with room");
  return Status::Ok();
}

Status PromptSpool::Append(std::string_view text, SpoolRef* ref) {
  ref->offset = size_;
  ref->bytes = static_cast<int64_t>(text.size());
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = pwrite(fd_, text.data() + done, text.size() - done, size_ + static_cast<int64_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      return Status::IoError(dir_ + ": writing the prompts' temporary file failed (" + std::strerror(errno) +
                             ", " + std::to_string(size_ >> 20) + " MiB written); set TMPDIR to a folder with room");
    done += static_cast<size_t>(n);
  }
  size_ += ref->bytes;
  return Status::Ok();
}

Status PromptSpool::Read(const SpoolRef& ref, std::string* text) const {
  text->resize(static_cast<size_t>(ref.bytes));
  size_t done = 0;
  while (done < text->size()) {
    ssize_t n = pread(fd_, text->data() + done, text->size() - done, ref.offset + static_cast<int64_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::IoError(dir_ + ": reading the prompts' temporary file failed (" + std::strerror(errno) + ")");
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace evalrun
