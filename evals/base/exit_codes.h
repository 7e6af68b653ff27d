// Process exit codes of every evalrun command, in one place (after ninja's
// exit_status.h). README.md lists them too; keep the two in step.
//
// Thread-safety: constants only.
#ifndef EVALRUN_EVALS_BASE_EXIT_CODES_H_
#define EVALRUN_EVALS_BASE_EXIT_CODES_H_

namespace evalrun {

enum ExitCode : int {
  kExitOk = 0,            // every requested part done
  kExitBadInput = 1,      // card, data, flags or output dir wrong: nothing was asked
  kExitUnreachable = 2,   // the server did not answer (or never became ready)
  kExitIncomplete = 3,    // finished, but failed requests above the card's tolerance
  kExitRegression = 4,    // `evalrun compare`: a significant regression
  kExitWriteFailed = 5,   // the run could not write its files (disk full, an I/O error, a file size limit):
                          // the answers whose lines reached the disk are kept; resume once there is room
  kExitInterrupted = 130, // Ctrl-C / SIGTERM: answers kept, the job can be resumed
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BASE_EXIT_CODES_H_
