#include "evals/base/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace evalrun {

MappedFile::~MappedFile() { Close(); }

void MappedFile::Close() {
  if (mapped_) munmap(const_cast<char*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
  mapped_ = false;
}

Status MappedFile::Open(const std::string& path) {
  Close();
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::NotFound(path + ": cannot open for reading");
  struct stat st {};
  const bool stat_ok = fstat(fd, &st) == 0;
  if (!stat_ok || !S_ISREG(st.st_mode)) {
    const std::string why = stat_ok ? "not a regular file" : std::strerror(errno);
    close(fd);
    return Status::IoError(path + ": cannot map: " + why);
  }
  if (st.st_size == 0) {
    close(fd);
    return Status::Ok();
  }
  void* p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  const int err = errno;
  close(fd);
  if (p == MAP_FAILED) return Status::IoError(path + ": cannot map: " + std::strerror(err));
  data_ = static_cast<const char*>(p);
  size_ = static_cast<size_t>(st.st_size);
  mapped_ = true;
  return Status::Ok();
}

}  // namespace evalrun
