// The speed part's prompts, of exactly the length asked.
//
// A prompt is one user message: a salt line first ("Session 482913047201.",
// twelve digits, fresh for every request, so that no two requests share a
// prefix beyond the template's), a filler (a made-up service log, generated
// line by line from a fixed seed: the same text on every machine), and the
// task last (a coding task for "code", a writing task for "prose"; texts
// written for evalrun). The filler is cut to the character count that makes
// the chat prompt exactly `target` tokens by the server's own count
// (Tokenizer::CountChat: /apply-template + /tokenize, what usage.prompt_tokens
// says): secant steps from a first guess, then bisection between the longest
// cut under the target and the shortest over it; when two neighbouring cuts
// jump over the target (one character adding two tokens), the filler starts
// one line later and the search runs again. Bounded: at most
// kMaxPromptCounts counts in all, else InvalidInput naming the target and
// the closest count.
//
// Thread-safety: pure functions, except FitExactPrompt, which uses the
// caller's tokenizer (one per thread).
#ifndef EVALRUN_EVALS_BENCHMARKS_SPEED_SPEED_PROMPT_H_
#define EVALRUN_EVALS_BENCHMARKS_SPEED_SPEED_PROMPT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "evals/base/status.h"
#include "evals/server/tokenizer.h"

namespace evalrun {

inline constexpr int kMaxPromptCounts = 64;

// True for "code" and "prose".
bool IsSpeedPromptId(std::string_view id);
// The task of a prompt id (empty for an unknown id).
std::string SpeedTaskText(std::string_view id);

// The filler: a line saying the log below is background, then the log from
// line `first_line` on, at least `chars` characters (whole lines; cut by
// SpeedMessage, so the filler grows a word at a time from nothing). ASCII
// only, so any cut is valid UTF-8.
std::string SpeedFiller(size_t first_line, size_t chars);

// "Session <12 digits>." from a run nonce and the request's number.
std::string SpeedSalt(uint64_t nonce, uint64_t n);

// The message: the salt line, the first `filler_chars` characters of
// `filler` and a blank line (nothing when 0), the task.
std::string SpeedMessage(std::string_view salt, std::string_view filler, size_t filler_chars,
                         std::string_view task);

struct ExactPrompt {
  std::string message;
  int tokens = 0;           // CountChat(message) == the target
  size_t filler_chars = 0;  // the cut found (a hint for the next salt)
  size_t first_line = 0;    // the filler's first line
  int counts = 0;           // tokenizer calls made
};

// A message of exactly `target` chat tokens with `salt` and `task`. `hint`
// (may be null) is an earlier result for the same target: its cut is tried
// first, so a new salt usually costs one count. Errors: the tokenizer's, or
// InvalidInput when the salt and task alone are longer than the target or
// no exact cut was found within kMaxPromptCounts counts.
Status FitExactPrompt(Tokenizer* counter, std::string_view salt, std::string_view task, int target,
                      const ExactPrompt* hint, ExactPrompt* out);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BENCHMARKS_SPEED_SPEED_PROMPT_H_
