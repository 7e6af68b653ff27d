// An LcbRunner (lcb_grade.h) that runs the program with a plain Python
// interpreter, `<python> -I -c <source>`, in a process group of its own:
// stdin written from the request, stdout and stderr read (each kept up to
// 16 MiB, the rest read and dropped), the whole group killed with SIGKILL at
// the wall limit and again when the program ends (no grandchild outlives a
// run). No isolation beyond that: this is for tests and for runs that turned
// the sandbox off, never the default for model-written code.
//
// Errors: NotFound when the interpreter cannot be started, IoError for a
// pipe that fails. Thread-safety: the runner it returns may be called from
// several threads at once.
#ifndef EVALRUN_SCORERS_LCB_PLAIN_RUNNER_H_
#define EVALRUN_SCORERS_LCB_PLAIN_RUNNER_H_

#include <string>

#include "scorers/lcb_grade.h"

namespace evalrun {

LcbRunner PlainPythonRunner(std::string python = "python3");

}  // namespace evalrun

#endif  // EVALRUN_SCORERS_LCB_PLAIN_RUNNER_H_
