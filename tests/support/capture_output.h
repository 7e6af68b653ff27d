// Runs a command function that writes to two FILE*s (the `evalrun compare`,
// `report` and `datasets` entry points: int Command(opts, FILE* out, FILE*
// err)) and keeps what it wrote. Tests only.
//
//   Captured c = Capture([&](FILE* out, FILE* err) { return ReportRun(o, out, err); });
//   EXPECT_EQ(c.code, kExitOk) << c.err;
#ifndef EVALRUN_TESTS_SUPPORT_CAPTURE_OUTPUT_H_
#define EVALRUN_TESTS_SUPPORT_CAPTURE_OUTPUT_H_

#include <cstdio>
#include <functional>
#include <string>

namespace evalrun::testing {

struct Captured {
  int code = -1;         // what the command returned
  std::string out, err;  // what it wrote to each stream
};

// Calls `command` with two temp files as its streams; they are read back
// and closed after it returns.
Captured Capture(const std::function<int(FILE* out, FILE* err)>& command);

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_CAPTURE_OUTPUT_H_
