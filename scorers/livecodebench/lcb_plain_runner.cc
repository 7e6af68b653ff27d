#include "scorers/livecodebench/lcb_plain_runner.h"

#include <signal.h>

namespace evalrun {

LcbRunner PlainPythonRunner(std::string python) {
  return [python = std::move(python)](const std::string& source, double wall_limit_s, LcbProcess* out) {
    ProcessSpec spec;
    spec.argv = {python, "-I", "-c", source};
    spec.stdin_text = "";
    spec.stderr_to = OutputTo::kCapture;
    spec.env = std::vector<std::string>{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"};
    spec.parent_death_signal = SIGKILL;
    *out = LcbProcess();
    return StartConversation(RealProcessRunner::Default(), spec, 64 << 10, &out->process);
  };
}

}  // namespace evalrun
