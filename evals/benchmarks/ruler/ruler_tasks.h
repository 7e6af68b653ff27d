// RULER's 13 synthetic tasks, generated in C++ and sized with the server's
// own tokenizer.
//
// Reference: NVIDIA/RULER HEAD c3f5e3b4 — scripts/synthetic.yaml (task
// arguments), scripts/data/synthetic/constants.py (templates, answer
// prefixes, tokens_to_generate), scripts/data/synthetic/{niah,
// variable_tracking,common_words_extraction,freq_words_extraction,qa}.py
// (generators), scripts/data/prepare.py (template + answer prefix, seed).
// Summary: /work/shared/datasets/ruler/TASKS.md.
//
// Two generation profiles (RulerProfile, the card's parts.ruler.profile):
//
//  * nvidia (the default) reproduces scripts/data/prepare.py + the task
//    script byte for byte, given the same tokenizer answers: it makes the
//    same calls in the same order, with the same draws (ruler_nvidia.cc):
//    the estimate call, the binary search over the haystack size and its
//    bounds, the draws every probe consumes, the per-sample retry loop with
//    its step-down by the task's increment and its redraws, vt's in-context
//    example (its own search at 500 tokens, then randomize_icl per sample),
//    vt's name-collision IndexError, fwe's word-count growth and step-back,
//    cwe's estimate at 4,096 words. Every `len(TOKENIZER.text_to_tokens(x))`
//    of the scripts is Tokenizer::CountChat(x): the whole text (input +
//    answer prefix) as the one user message after the server's chat
//    template, which is how the reference run counted (tests/fixtures/ruler/
//    README.md). tests/benchmarks/ruler/ruler_nvidia_test.cc replays NVIDIA's own runs (niah,
//    vt, cwe, fwe at 2,048 and 4,096). qa.py has the same shape (estimate and
//    search on question 0, incremental 10 documents) and is generated the
//    same way, unchecked: SQuAD and HotpotQA are not available here.
//  * fit fits every sample on its own as tightly as the tokenizer allows
//    (ruler_length.h): prompt tokens + max_tokens <= length, usually within
//    0.5 %, with few tokenizer round trips. The builders are the same, so a
//    sample's text at a given size is RULER's; only the sizes and where each
//    sample starts in the random stream differ from a RULER jsonl.
//
// What is the same as RULER in both: templates, answer prefixes, the
// singular rewrite, needle/haystack construction, depths, gold outputs,
// answer budgets, and the order and kind of every random draw inside a
// sample: Python's `random` via PyRandom and numpy's legacy global RNG via
// NpRandom (vt's np.random.randint), both bit-exact; fresh
// `random.Random(seed)` shuffles where RULER uses them. The streams start at
// random.seed(seed) / np.random.seed(seed) for each task and length, as the
// scripts do. fwe's counts int(W * k**-alpha / zeta(alpha)) use the C
// library's pow and scipy's zeta(2.0) = 1.6449340668482264: numpy 1.24 on
// AVX-512 computes k**-2.0 with SVML, 1 ulp off the C library for about a
// quarter of k, but the truncated counts agree for every W <= 140,000 and
// k <= 2,700 (checked with Debian's numpy; README of tests/fixtures/ruler).
//
// Where NVIDIA's script never finishes, the nvidia profile stops and says
// why (RulerGenStats::cannot_prepare): the per-sample loop
// `while True: try ... except: if used > incremental: used -= incremental`
// retries the smallest size forever when it never fits (here: after
// kRulerNvidiaFloorTries draws at that size), and a Python exception in the
// estimate call or the size search (vt's IndexError on coinciding variable
// names, cwe needing more words than its pools hold) kills the script.
//
// Deliberate differences (documented for the reader of results):
//  * nvidia: NVIDIA's loop at the smallest size never gives up, and as its
//    draws vary a later one might fit; evalrun gives up after
//    kRulerNvidiaFloorTries and skips the task at that length (NVIDIA's
//    script writes no file there, having written none for it so far).
//  * fit profile only: the sizes and the stream positions (above); vt name
//    collisions are redrawn from the same stream until the names differ
//    (RULER appends names and fails on an IndexError, then retries smaller);
//    the in-context example is sized by the raw count (Tokenizer::Count),
//    not the chat count.
//  * The niah records' `index` quirk (the character offset of the first
//    answer) is not reproduced: index is the sample number. RULER's extra
//    fields (length, token_position_answer) are not kept.
//  * Chat endpoints. RULER appends the answer prefix to the input; on a chat
//    endpoint (RULER's OpenAI client path) input + answer_prefix is the one
//    user message, which is what kInUserMessage produces (the default).
//    kAssistantPrefill puts the answer prefix in an assistant prefill
//    instead (for servers that continue a final assistant message); fit
//    then counts CountChat(input) + Count(answer_prefix), nvidia still
//    counts the whole text as NVIDIA's run did (the bytes are the same).
//  * No model template: RULER's model_template_type (base = the bare task
//    text) is replaced by the server's own chat template, which CountChat
//    includes. remove_newline_tab (off by default upstream) is not offered,
//    nor chunked preparation (chunk_idx, which shifts the seed).
//  * vt supports type_haystack noise only (the configured one).
//
// Thread-safety: GenerateRulerSamples runs on the caller's thread and calls
// the tokenizer and the emit callback there; it shares no state between calls.
#ifndef EVALRUN_EVALS_BENCHMARKS_RULER_RULER_TASKS_H_
#define EVALRUN_EVALS_BENCHMARKS_RULER_RULER_TASKS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "evals/benchmarks/ruler/ruler_inputs.h"
#include "evals/base/status.h"
#include "evals/server/tokenizer.h"
#include "scorers/ruler/ruler_metrics.h"

namespace evalrun {

enum class RulerFamily { kNiah, kVariableTracking, kCommonWords, kFreqWords, kQa };
enum class RulerHaystack { kNoise, kEssay, kNeedle };
enum class RulerNeedleType { kNumbers, kWords, kUuids };
enum class RulerAnswerPrefixMode { kInUserMessage, kAssistantPrefill };
enum class RulerProfile { kNvidia, kFit };
// parts.ruler.profile's values. "fit" is the word of the fit part too, not
// it (tests/engine/benchmark_names_test.cc allows it here alone).
inline constexpr const char* kRulerNvidiaProfile = "nvidia";
inline constexpr const char* kRulerFitProfile = "fit";

// kRulerNvidiaProfile, kRulerFitProfile.
const char* RulerProfileName(RulerProfile profile);
// The profile of that name; InvalidInput with a "did you mean" otherwise.
Status RulerProfileByName(std::string_view name, RulerProfile* out);

// How many draws the nvidia profile makes at the smallest size NVIDIA's
// retry loop reaches before it concludes the script would loop forever.
inline constexpr int kRulerNvidiaFloorTries = 100;

struct RulerTaskConfig {
  std::string name;  // "niah_single_1", ...
  RulerFamily family = RulerFamily::kNiah;
  RulerMetric metric = RulerMetric::kStringMatchAll;
  int max_tokens = 128;  // RULER's tokens_to_generate (the answer budget)
  RulerAnswerPrefixMode answer_prefix_mode = RulerAnswerPrefixMode::kInUserMessage;
  RulerProfile profile = RulerProfile::kNvidia;

  // niah (synthetic.yaml)
  RulerHaystack type_haystack = RulerHaystack::kEssay;
  RulerNeedleType type_needle_k = RulerNeedleType::kWords;
  RulerNeedleType type_needle_v = RulerNeedleType::kNumbers;
  int num_needle_k = 1;
  int num_needle_v = 1;
  int num_needle_q = 1;
  // vt
  int num_chains = 1;
  int num_hops = 4;
  int icl_max_tokens = 500;  // the in-context example's budget (variable_tracking.py main())
  // cwe
  int freq_cw = 30;
  int freq_ucw = 3;
  int num_cw = 10;
  int num_fewshot = 1;
  // fwe
  double alpha = 2.0;
  int coded_wordlen = 6;
  int vocab_size = -1;  // -1: (length - max_tokens) / 50
  // qa
  std::string dataset;  // "squad" or "hotpotqa"
};

// The 13 tasks in RULER's order (config_tasks.sh).
const std::vector<RulerTaskConfig>& RulerTasks();
std::vector<std::string> RulerTaskNames();

// Looks a task up by name. NotFound with a "did you mean" for a typo.
Status RulerTaskByName(std::string_view name, RulerTaskConfig* out);

// Whether `inputs` hold what `task` needs: Ok, or NotFound saying which file
// is missing and where to put it (use the message as a skip note).
Status RulerTaskAvailable(const RulerInputs& inputs, const RulerTaskConfig& task);

struct RulerSample {
  std::string id;  // "<task>/<length>/<index>"
  std::string task;
  int length = 0;                // the max sequence length (prompt + answer budget)
  int index = 0;                 // sample number, 0-based
  std::string prompt;            // the user message
  std::string assistant_prefix;  // kAssistantPrefill: the answer prefix; else empty
  std::string answer_prefix;     // RULER's answer_prefix field (always set)
  std::string
      prompt_sha256;  // sha256 of prompt + assistant_prefix (= RULER's input + answer_prefix)
  std::vector<std::string> gold;  // RULER's `outputs`
  int max_tokens = 0;
  int haystack_units = 0;            // words, lines, docs or word count, per family
  int estimated_prompt_tokens = -1;  // fit: the estimate before the final exact count (-1: none)
  int exact_prompt_tokens = 0;       // fit: CountChat of the prompt (+ Count of the prefill);
                                     // nvidia: CountChat of prompt + prefill, as RULER counted

  int tokenizer_calls = 0;           // tokenizer round trips spent on this sample
};

struct RulerGenStats {
  int samples = 0;          // handed to the sink
  int tokenizer_calls = 0;  // Tokenizer::calls() difference over the whole call
  int setup_calls = 0;      // of which before sample 0 (vt's example; nvidia: estimate + search)
  int haystack_units = -1;  // nvidia: the size the search fixed (-1: fit profile)
  // nvidia: NVIDIA's script would never finish (or would crash) for this
  // task and length; `reason` names the task, the length, the tokens the
  // smallest prompt needs and the budget. The Status is then ok.
  bool cannot_prepare = false;
  std::string reason;
};

// Receives each finished sample, in index order; a non-ok Status stops the
// generation and is returned by GenerateRulerSamples.
using RulerSampleSink = std::function<Status(RulerSample sample)>;

// Generates samples 0..n-1 of `task` at `length` (prompt tokens after the
// chat template + task.max_tokens <= length) with task.profile, from the
// random streams seeded with `seed` (RULER's default is 42; numpy takes
// seeds below 2**32), handing each to `sink` as soon as it is made.
// Deterministic: the same inputs, seed and tokenizer answers give
// byte-identical samples. Uses `tok` (not owned) for every count.
// Memory: one sample's builder at a time (and the essay split cache of the
// last three sizes); nothing is kept per task.
// *stats (required) is replaced. Outcomes:
//  * Ok, stats->cannot_prepare false: n samples were handed to the sink.
//  * Ok, stats->cannot_prepare true (nvidia only): NVIDIA's script would loop
//    forever or crash here, so it writes no file for this task and length;
//    the stats->samples samples handed over before that belong to no RULER
//    output and should be dropped by the caller.
//  * Errors: RulerTaskAvailable's NotFound; InvalidInput for arguments out of
//    range, a length too small for the task's fixed text (fit) or for more
//    qa samples than questions; NotFound when fit's cwe needs more distinct
//    words than wonderwords has and english_words.json is missing; the
//    tokenizer's Status; the sink's Status.
// Reentrant: `inputs` is only read, so calls may run on several threads at
// once, each with its own Tokenizer.
Status GenerateRulerSamples(const RulerInputs& inputs, const RulerTaskConfig& task, int length,
                            int n, uint64_t seed, Tokenizer* tok, const RulerSampleSink& sink,
                            RulerGenStats* stats);

// Convenience for tests and tools: the samples collected in *out (replaced).
// When NVIDIA's script cannot prepare the task, *out is left empty and
// *stats says why; without `stats` that case is an InvalidInput error with
// the reason, so that it cannot pass unnoticed.
Status GenerateRulerSamples(const RulerInputs& inputs, const RulerTaskConfig& task, int length,
                            int n, uint64_t seed, Tokenizer* tok, std::vector<RulerSample>* out,
                            RulerGenStats* stats = nullptr);

// The 40 depths of niah.py: np.round(np.linspace(0, 100, 40)).astype(int).
const std::vector<int>& RulerDepths();

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BENCHMARKS_RULER_RULER_TASKS_H_
