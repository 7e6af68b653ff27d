// Names the calling thread (what `top -H`, `ps -L` and /proc/<pid>/task/
// <tid>/comm show), so that whoever watches a measured machine sees which
// part of evalrun uses the CPU. Linux keeps 15 bytes; longer names are cut.
// Every evalrun thread is named "evalrun-<role>": slot<N> (a request pool
// worker), writer, noise, status (the progress line), signals, and a
// part's own ("<name>-gpu": a procedure's GPU sampler).
#ifndef EVALRUN_EVALS_BASE_THREAD_NAME_H_
#define EVALRUN_EVALS_BASE_THREAD_NAME_H_

#include <string>

namespace evalrun {

void NameThisThread(const std::string& name);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BASE_THREAD_NAME_H_
