// What the sandbox's hostile-answer tests share (tests/fixtures/escape/):
// the answers with the test's own mark in them, a decoy process whose
// command line carries an API key and a problems file (as an engine's or
// evalrun's would), and the look for what an answer left behind once its
// grading (or evalrun) ended. Tests only; the leftovers are sought by the
// test's mark, by the sandbox's uids (as root) and by path, never by
// killing anything the test did not start.
#ifndef EVALRUN_TESTS_SUPPORT_ESCAPE_CHECK_H_
#define EVALRUN_TESTS_SUPPORT_ESCAPE_CHECK_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "evals/proc/process_runner.h"
#include "tests/support/temp_dir.h"

namespace evalrun::testing {

// A name unique to this test process ("evalrun-escape-<pid>").
const std::string& EscapeMark();
// An API key unique to this test process ("sk-evalrun-escape-<pid>").
const std::string& EscapeKey();

// The first of 8 System V keys unique to this test process, so that the
// objects of a test beside it (ctest -j) are not taken for this one's.
long EscapeIpcKey();

// The answer tests/fixtures/escape/<name>.py with @MARK@ and @IPCKEY@ replaced.
std::string EscapeAnswer(const std::string& name);
// Every hostile answer's name, in the folder's order.
const std::vector<std::string>& EscapeAnswerNames();

// A world-readable copy of the LiveCodeBench fixture problems (test.jsonl)
// under /var/tmp, and a process of the test's own that holds its path and
// the key in its command line ("--input", "--api-key"), until destroyed.
class EscapeDecoy {
 public:
  EscapeDecoy();
  ~EscapeDecoy();
  const std::string& rows_path() const { return rows_path_; }
  bool ok() const { return handle_ != nullptr; }

 private:
  TempDir dir_{"evalrun-rows", "/var/tmp"};
  std::string rows_path_;
  std::unique_ptr<ProcessHandle> handle_;
};

// What an answer left behind, one line each (empty: nothing):
//   * a process whose command line holds the mark (any uid), and as root
//     any process of a sandbox uid that does (or a zombie child of this
//     process of a sandbox uid);
//   * a System V object of a sandbox uid (as root) whose key is one of
//     EscapeIpcKey's 8 (keyless ones cannot be told from a test's beside
//     it: sandbox_box_test.cc checks them by the uid it leases);
//   * a file named for the mark in /tmp, /dev/shm, /var/tmp or a private
//     folder (/tmp/evalrun-box-*), or /var/tmp/platform.py holding it.
std::vector<std::string> EscapeLeftovers();
// Removes the files EscapeLeftovers names (processes are only reported).
void RemoveEscapeFiles();

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_ESCAPE_CHECK_H_
