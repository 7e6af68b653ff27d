// Whether the fit ladder's managed engine outlived its step's request (the
// part itself: evals/benchmarks/fit/fit.cc; the ladder: fit_ladder.h). An engine
// that died during the request (a crash in the prefill; SIGBUS from a model
// file cut short) makes the step a failed step, whatever the client got;
// the step then names how the engine ended and the last lines of its log.
//
// The engine's process is looked at without being reaped (waitid with
// WNOWAIT): ManagedEngine::Stop still reaps it and logs how it ended.
//
// Thread-safety: call from the thread that runs the ladder.
#ifndef EVALRUN_EVALS_BENCHMARKS_FIT_FIT_ENGINE_END_H_
#define EVALRUN_EVALS_BENCHMARKS_FIT_FIT_ENGINE_END_H_

#include <string>

#include "evals/base/clock.h"
#include "evals/server/engine.h"

namespace evalrun {

// How the managed engine ended ("killed by signal 7 (SIGBUS)", "exit status
// 1", "exited (status unknown)"), waiting up to `wait_s` on `clock` for it
// to be seen gone (a crash closes its connections a moment before the
// process can be waited for); "" while it runs, and at once for an engine
// evalrun does not manage.
std::string EngineEnd(const Engine& engine, double wait_s, Clock* clock);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BENCHMARKS_FIT_FIT_ENGINE_END_H_
