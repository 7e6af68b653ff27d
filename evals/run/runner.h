// The two jobs behind the command line: a live run against a server, and
// re-scoring recorded answers without one. Both write the same
// <out>/<job>/<part>/samples.jsonl and <out>/<job>/results.json, scored by
// the same Part::Score.
//
// Thread-safety: each job runs on the caller's thread (starting and joining
// its own pool, writer and scoring threads); one job per output folder.
#ifndef EVALRUN_EVALS_RUN_RUNNER_H_
#define EVALRUN_EVALS_RUN_RUNNER_H_

#include <cstdio>
#include <string>
#include <vector>

#include "evals/base/cancel.h"
#include "evals/base/exit_codes.h"

namespace evalrun {

struct RunOptions {
  std::string card_path;
  std::vector<std::string> parts;  // empty: all the card's parts
  std::string job;                 // empty: <card name>-<UTC time>
  std::string out_dir = "runs";
  std::string data_dir;            // empty: DefaultDataDir()
  std::string base_url;            // overrides server.base_url
  int limit = -1;                  // at most N questions per part
  bool force_resume = false;
  std::string shard;               // --shard I/N (evals/run/shard.h) or auto (shard_auto.h); empty: all
  int repeat = 0;                  // --repeat: 1 or 2; 0: the card's `repeat`
  bool unsafe_exec = false;        // --unsafe-exec: a part that runs code may run it without isolation
  std::string sandbox_min;         // --sandbox LEVEL: the weakest sandbox level accepted ("": the card's)
};

struct ScoreOptions {
  std::string card_path;
  std::string part;
  std::string responses_path;
  std::string input_path;          // another revision of the dataset file
  std::string job;
  std::string out_dir = "runs";
  std::string data_dir;
  bool unsafe_exec = false;        // --unsafe-exec, as RunOptions
  std::string sandbox_min;         // --sandbox LEVEL, as RunOptions
};

// Returns the process exit code (evals/base/exit_codes.h). Messages go to `err`,
// the results table to `out`.
int RunJob(const RunOptions& opts, CancelToken* cancel, FILE* out, FILE* err);
int ScoreJob(const ScoreOptions& opts, FILE* out, FILE* err);

// "<name>-20261130T040500Z"
std::string DefaultJobName(const std::string& card_name);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_RUNNER_H_
