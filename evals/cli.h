// Command-line front end: flags to options, one call, an exit code.
//
// Thread-safety: RunCli runs on the main thread, once per process (it
// installs the process's signal handling).
#ifndef EVALRUN_EVALS_CLI_H_
#define EVALRUN_EVALS_CLI_H_

namespace evalrun {

// Parses argv (CLI11), installs the Ctrl-C / SIGTERM handling and runs the
// chosen command. Returns the process exit code.
int RunCli(int argc, char** argv);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_CLI_H_
