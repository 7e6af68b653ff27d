// An LcbRunner (lcb_grade.h) that starts the harness with a plain Python
// interpreter, `<python> -I -c <source>`, in a process group of its own with
// a short fixed environment (PATH, LANG; nothing of evalrun's), its group
// killed when the grading ends. No isolation beyond that: this is for tests
// and for comparing with the official grader, never for model-written code
// in a run.
//
// Errors: NotFound when the interpreter cannot be started. Thread-safety:
// the runner it returns may be called from several threads at once.
#ifndef EVALRUN_SCORERS_LIVECODEBENCH_LCB_PLAIN_RUNNER_H_
#define EVALRUN_SCORERS_LIVECODEBENCH_LCB_PLAIN_RUNNER_H_

#include <string>

#include "scorers/livecodebench/lcb_grade.h"

namespace evalrun {

LcbRunner PlainPythonRunner(std::string python = "python3");

}  // namespace evalrun

#endif  // EVALRUN_SCORERS_LIVECODEBENCH_LCB_PLAIN_RUNNER_H_
