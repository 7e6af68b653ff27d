// A file's bytes mapped read-only into memory, for a large data file read
// once (a 9.5 MB dataset file): no copy into a fresh buffer, so no page faults
// on anonymous memory first touched (measured: a fifth of evalrun's
// start-up CPU went to reading that file into a string).
//
// Thread-safety: Open on one thread; text() may then be read from any
// thread while the object lives.
#ifndef EVALRUN_EVALS_BASE_MAPPED_FILE_H_
#define EVALRUN_EVALS_BASE_MAPPED_FILE_H_

#include <string>
#include <string_view>

#include "evals/base/status.h"

namespace evalrun {

class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // Maps `path` (replacing what was mapped). NotFound "<path>: cannot open
  // for reading" / IoError naming the path and the system's reason. An
  // empty file maps to empty text. The file must not shrink while mapped.
  Status Open(const std::string& path);

  std::string_view text() const { return {data_, size_}; }

 private:
  void Close();

  const char* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BASE_MAPPED_FILE_H_
