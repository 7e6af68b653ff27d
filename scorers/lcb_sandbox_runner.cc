#include "scorers/lcb_sandbox_runner.h"

namespace evalrun {

LcbRunner SandboxLcbRunner(CodeSandbox* sandbox) {
  return [sandbox](const LcbRunRequest& req, LcbRunResult* out) {
    SandboxResult r;
    EVALRUN_RETURN_IF_ERROR(sandbox->Run(req.program_source, req.stdin_text, &r, req.wall_limit_s));
    *out = LcbRunResult();
    out->exit_code = r.process.exit.exited ? r.process.exit.exit_code : -1;
    out->term_signal = r.process.exit.signal;
    out->timed_out = r.process.timed_out;
    out->stdout_text = std::move(r.process.stdout_text);
    out->stderr_text = std::move(r.process.stderr_text);
    return Status::Ok();
  };
}

SandboxOptions LcbSandboxOptions(const std::string& python, bool unsafe_exec) {
  SandboxOptions o;
  o.interpreter = python;
  o.interpreter_args = {"-I"};
  o.unsafe_exec = unsafe_exec;
  o.limits.file_bytes = 256ull << 20;
  return o;
}

}  // namespace evalrun
