// An LcbRunner (lcb_grade.h) over the code sandbox (evals/sandbox/sandbox.h):
// the harness runs as the sandbox's interpreter's program, its job on
// stdin, with the request's wall limit for that run (and a CPU limit at
// least as long). This is how evalrun grades model-written code.
//
// Errors: the sandbox's (it did not start: bwrap's setup failed, pipes,
// fork), never the program's doing. Thread-safety: the runner may be called
// from several threads at once (CodeSandbox::Run is); `sandbox` is not owned
// and must outlive it.
#ifndef EVALRUN_SCORERS_LIVECODEBENCH_LCB_SANDBOX_RUNNER_H_
#define EVALRUN_SCORERS_LIVECODEBENCH_LCB_SANDBOX_RUNNER_H_

#include "evals/sandbox/sandbox.h"
#include "scorers/livecodebench/lcb_grade.h"

namespace evalrun {

LcbRunner SandboxLcbRunner(CodeSandbox* sandbox);

// The sandbox options LiveCodeBench grading uses: `python` with -I, a 256 MiB
// tmpfs and file size (test inputs and outputs go through memory files in
// the `fixed` profile), the other limits SandboxLimits' defaults; the wall
// limit is set per run (the official overall limit).
SandboxOptions LcbSandboxOptions(const std::string& python, bool unsafe_exec);

}  // namespace evalrun

#endif  // EVALRUN_SCORERS_LIVECODEBENCH_LCB_SANDBOX_RUNNER_H_
