// What the thinking part (evals/benchmarks/thinking/thinking.cc) measures of its answers,
// from the recorded samples: where an answer's reasoning is, how many
// tokens it spent, where a cut-off fell, and the figures of an arm and of
// the paired arms of one benchmark.
//
// Reasoning tokens per answer: llama-server's usage does not split the
// reasoning from the answer, so they are usage.completion_tokens minus the
// answer's own tokens (the content after the reasoning, counted by the
// AnswerCounter: the server's /tokenize during a run) minus the
// end-of-sequence token of an answer that stopped. The think tags and the
// tokens that close a reasoning count as reasoning. An answer with no
// reasoning spent 0; an unknown count (no usage, no counter) is left out.
//
// Thread-safety: pure functions (the counter is called on the caller's
// thread).
#ifndef EVALRUN_EVALS_BENCHMARKS_THINKING_THINKING_MEASURES_H_
#define EVALRUN_EVALS_BENCHMARKS_THINKING_THINKING_MEASURES_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/run/sample_record.h"

namespace evalrun {

// "<think>" or "</think>" anywhere in `text`.
bool HasThinkTag(std::string_view text);

// Reasoning left in the answer: a think tag in it, or a think block opened
// and never closed though the answer was not cut off. Such an answer is
// wrong, and counted apart.
bool ReasoningLeftInContent(std::string_view content, bool unclosed_think, std::string_view finish_reason);

enum class CutPlace { kNone, kReasoning, kAnswer };

struct ThinkingFacts {
  bool reasoned = false;              // reasoning (not only whitespace), an unclosed block, or a tag in the answer
  bool reasoning_in_content = false;  // ReasoningLeftInContent
  CutPlace cut = CutPlace::kNone;     // finish_reason "length": inside the reasoning (no answer yet) or in the answer
  int reasoning_tokens = -1;          // -1: unknown
};

// Tokens of an answer text; -1 when they cannot be counted.
using AnswerCounter = std::function<int(const std::string& text)>;

ThinkingFacts ReadThinkingFacts(const SampleRecord& r, const AnswerCounter& count);

// One arm of one benchmark (or of all): n, correct, accuracy, cut_off
// {in_reasoning, in_answer}, no_answer, reasoning_in_content, reasoned,
// no_reasoning, no_reasoning_share, reasoning_tokens {n, median, p90, max,
// mean} (null when none is known), budget_ended (with a budget: answers
// whose reasoning spent it all).
nlohmann::json ArmJson(const std::vector<const SampleRecord*>& recs, const std::vector<ThinkingFacts>& facts,
                       std::optional<int> budget);

// The two arms of one benchmark paired by the item field "question": n
// pairs, on_only (right on, wrong off), off_only, difference (on - off
// accuracy over the pairs) and McNemar's exact p.
nlohmann::json PairedJson(const std::vector<const SampleRecord*>& on, const std::vector<const SampleRecord*>& off);

// Accuracy against reasoning tokens spent, for one arm: the answers in
// buckets of the on arm's budget B (0; 1..B/8; ..B/4; ..B/2; ..B-1; B and
// more: the budget spent; for B = 100 labelled "0", "1-12", "13-25",
// "26-50", "51-99", "≥ 100"), each {label, from, to (null: open), n,
// correct, accuracy (null when n is 0)}; a bucket whose range is empty (a
// small B) is left out, and answers of unknown count go to a last bucket
// "unknown" (from and to null) when there are any.
nlohmann::json ReasoningBucketsJson(const std::vector<const SampleRecord*>& recs,
                                    const std::vector<ThinkingFacts>& facts, int budget);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BENCHMARKS_THINKING_THINKING_MEASURES_H_
