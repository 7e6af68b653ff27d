// Whole files and folders, for the places that read or write one at a time
// (datasets, a part's input texts, langdetect's profiles, /proc tables). Errors are
// Status values that name the path; nothing here throws or keeps state.
//
// Thread-safety: every function may be called from any thread; two calls on
// the same path race as the file system does.
#ifndef EVALRUN_EVALS_BASE_FILES_H_
#define EVALRUN_EVALS_BASE_FILES_H_

#include <cstdint>
#include <string>

#include "evals/base/status.h"

namespace evalrun {

// Reads the whole file into *out (replaced). NotFound "<path>: cannot open
// for reading" when it cannot be opened, IoError "<path>: read error" when a
// read fails; *out is unspecified after a failure.
Status ReadFileToString(const std::string& path, std::string* out);

// Writes `bytes` to `path` (created or truncated). IoError naming the path
// and the system's reason.
Status WriteFileBytes(const std::string& path, const std::string& bytes);

// Creates `path` and every missing folder above it (mkdir -p). Ok when it is
// there already; IoError "<path>: cannot create folder: <reason>" otherwise
// (a file in the way included).
Status MakeDirectories(const std::string& path);

// rename(2). IoError "cannot rename <from> to <to>: <reason>".
Status RenameFile(const std::string& from, const std::string& to);

// The size in bytes, or -1 when there is nothing at `path`.
int64_t FileSize(const std::string& path);

// What precedes the last '/': "a/b/c" -> "a/b"; "." when there is none.
std::string DirName(const std::string& path);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BASE_FILES_H_
