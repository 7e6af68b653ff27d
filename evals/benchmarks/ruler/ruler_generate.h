// The two generation profiles behind GenerateRulerSamples (internal to the
// RULER part; ruler_tasks.h documents what each reproduces).
//
// GenerateRulerSamples checks the arguments, sets up a RulerBuildContext
// (the cwe pool, the essay split cache) and calls one of these; each builds
// samples 0..n-1 in order and hands them over with EmitRulerSample.
//
// Thread-safety: one generation runs on one thread; its RulerBuildContext is
// not shared.
#ifndef EVALRUN_EVALS_BENCHMARKS_RULER_RULER_GENERATE_H_
#define EVALRUN_EVALS_BENCHMARKS_RULER_RULER_GENERATE_H_

#include <string>
#include <vector>

#include "evals/benchmarks/ruler/ruler_builders.h"
#include "evals/benchmarks/ruler/ruler_tasks.h"
#include "evals/base/status.h"
#include "evals/server/tokenizer.h"

namespace evalrun {

// One GenerateRulerSamples call. Pointers are not owned.
struct RulerGenEnv {
  const RulerInputs* inputs = nullptr;
  const RulerTaskConfig* task = nullptr;
  int length = 0;
  int n = 0;
  uint64_t seed = 42;
  Tokenizer* tok = nullptr;
  const RulerSampleSink* sink = nullptr;
  RulerGenStats* stats = nullptr;  // the profile sets samples, setup_calls, haystack_units,
                                   // cannot_prepare and reason
  RulerBuildContext* ctx = nullptr;
};

// What is known about one finished sample besides its text.
struct RulerSampleFacts {
  int index = 0;
  int units = 0;           // its haystack size
  int estimated = -1;      // fit: the estimate before the exact count
  int exact = 0;           // its counted prompt tokens
  int tokenizer_calls = 0; // spent on it
};

// Splits `text` (input + answer prefix) as RULER does (rfind of the answer
// prefix's first 10 characters), fills a RulerSample and hands it to the
// sink; counts it in env.stats->samples.
Status EmitRulerSample(const RulerGenEnv& env, const RulerSampleFacts& facts, std::string text,
                       std::vector<std::string> gold);

// ruler_fit.cc: every sample fitted on its own (ruler_length.h).
Status GenerateRulerFit(const RulerGenEnv& env);

// ruler_nvidia.cc: prepare.py's sizing and draws (ruler_nvidia.cc's header
// comment maps each step to the script).
Status GenerateRulerNvidia(const RulerGenEnv& env);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BENCHMARKS_RULER_RULER_GENERATE_H_
