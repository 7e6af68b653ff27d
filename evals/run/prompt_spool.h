// Prompt texts kept on disk instead of in memory: a long-context part at its
// published size is 13 tasks x 500 samples x up to 128K tokens, gigabytes of
// text, which the request pool needs one at a time. A part appends each
// prompt as it is made and keeps the returned reference in its Item; the
// pool reads it back just before the request.
//
// The spool is an unlinked temporary file ($TMPDIR, else /tmp): nothing is
// left behind, also after a crash. Append is for one thread (the part's
// preparation); Read may be called from any number of threads at once
// (pread), also while nothing is appended any more.
#ifndef EVALRUN_EVALS_RUN_PROMPT_SPOOL_H_
#define EVALRUN_EVALS_RUN_PROMPT_SPOOL_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "evals/base/status.h"

namespace evalrun {

struct SpoolRef {
  int64_t offset = -1;  // -1: not spooled
  int64_t bytes = 0;
  bool valid() const { return offset >= 0; }
};

class PromptSpool {
 public:
  PromptSpool() = default;
  ~PromptSpool();
  PromptSpool(const PromptSpool&) = delete;
  PromptSpool& operator=(const PromptSpool&) = delete;

  // Creates the file. IoError names the folder when it cannot.
  Status Open();
  // Appends `text`; *ref says where it is.
  Status Append(std::string_view text, SpoolRef* ref);
  // The text at `ref`.
  Status Read(const SpoolRef& ref, std::string* text) const;
  int64_t bytes() const { return size_; }

 private:
  int fd_ = -1;
  int64_t size_ = 0;
  std::string dir_;
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_PROMPT_SPOOL_H_
