#include "scorers/livecodebench/lcb_sandbox_runner.h"

namespace evalrun {

LcbRunner SandboxLcbRunner(CodeSandbox* sandbox) {
  return [sandbox](const std::string& source, double wall_limit_s, LcbProcess* out) {
    *out = LcbProcess();
    return sandbox->Start(source, wall_limit_s, &out->process, &out->hold);
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
