// The run directory's files, written so that a crash loses nothing:
// sample lines are appended whole and fsynced before they count; JSON
// documents are replaced atomically (temp file + rename).
//
// Thread-safety: an appender serialises its own calls (each method says so).
#ifndef EVALRUN_EVALS_RUN_RUN_FILES_H_
#define EVALRUN_EVALS_RUN_RUN_FILES_H_

#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/status.h"

namespace evalrun {

// Writes `text` to `path` through "<path>.tmp" + fsync + rename + fsync of
// the folder. What this file writes (here and JsonlAppender) goes through
// Redact (evals/base/redact.h): no API key reaches a run file.
Status WriteFileAtomically(const std::string& path, const std::string& text);
// fsync of a folder (a rename or unlink in it made durable); best effort.
void SyncDirectory(const std::string& dir);

// Appends JSON lines to one file, each whole with one write(2). Write
// leaves the line to the page cache (a killed process loses nothing; a
// power loss may lose lines not yet synced, or tear the last one, which
// LoadSampleFile cuts off); Sync makes every line written so far durable
// (fdatasync, skipped when nothing was written since the last one). A
// caller that writes a batch of lines and then syncs once is a group
// commit: a line counts as done only after the Sync that follows it.
// Append = Write + Sync. Thread-safe.
class JsonlAppender {
 public:
  JsonlAppender() = default;
  ~JsonlAppender();
  JsonlAppender(const JsonlAppender&) = delete;
  JsonlAppender& operator=(const JsonlAppender&) = delete;

  Status Open(const std::string& path);
  Status Write(const nlohmann::json& line);
  Status Sync();
  Status Append(const nlohmann::json& line);
  void Close();
  const std::string& path() const { return path_; }
  // How many fdatasync calls were made (tests check that a batch shares one).
  int syncs() const;

 private:
  mutable std::mutex mu_;
  int fd_ = -1;
  bool dirty_ = false;
  int syncs_ = 0;
  std::string path_;
};

struct SampleFileContents {
  std::vector<nlohmann::json> lines;  // complete lines, in file order
  std::vector<int> line_numbers;      // of each line in the file (1 for the first)
  bool dropped_torn_tail = false;     // a last line without newline / not JSON was cut off
  std::string torn_tail;              // its bytes, for the message
};

// Reads a samples.jsonl. A last line that is not complete (no newline, or
// not valid JSON: a crash in the middle of a write) is cut off the file so
// it is asked again; any other line that is not a JSON object with a string
// "id" is an InvalidInput naming path:line, and then the file is left as it
// was. A missing file yields no lines. A symbolic link is refused
// (InvalidInput naming it), never followed: cutting a "torn line" off its
// target would damage a file evalrun does not own. JsonlAppender::Open
// refuses one too (O_NOFOLLOW).
Status LoadSampleFile(const std::string& path, SampleFileContents* out);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_RUN_FILES_H_
