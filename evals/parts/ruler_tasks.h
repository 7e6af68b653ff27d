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
// What is the same as RULER: templates, answer prefixes, the singular
// rewrite, needle/haystack construction, depths, gold outputs, answer
// budgets, and the order and kind of every random draw inside a sample
// (Python's `random` via PyRandom, bit-exact; fresh `random.Random(seed)`
// shuffles where RULER uses them). The random stream starts at
// random.seed(seed) for each task and length, as prepare.py does. At a
// given haystack size the builders reproduce RULER's Python output byte for
// byte (tests/ruler_tasks_test.cc checks every family against it).
//
// Deliberate differences (documented for the reader of results):
//  * Sizing. RULER fixes the haystack size once per task by a binary search
//    that re-tokenizes the prompt each step, then per sample steps down by a
//    fixed increment (500 essay words, 25 lines, 10 docs) while too long.
//    Here every sample is fitted on its own as tightly as the tokenizer
//    allows (ruler_length.h): prompt tokens (after the chat template) +
//    max_tokens <= length, usually within 0.5 %. fwe likewise: RULER grows
//    the word count in steps of max_len/32 and steps back once; here the
//    word count is fitted per sample.
//  * Random-stream consumption. RULER's search probes consume draws from
//    the task's stream before sample 0, and its retries redraw a sample;
//    here each sample's draws are replayed from the state at its start for
//    every trial size, and the stream continues from the state after the
//    accepted build. So prompts are deterministic for a seed and a
//    tokenizer, but not byte-identical to a RULER jsonl.
//  * numpy. vt's values (np.random.randint(10000, 99999)) come from a
//    second PyRandom seeded with the task seed, RandInt(10000, 99998), in
//    the same order; fwe's counts int(W * k**-alpha / zeta(alpha)) use the C
//    library pow (numpy may use SIMD pow: a count can differ by one when
//    the product is within an ulp of an integer).
//  * vt name collisions. When two drawn variable names coincide RULER
//    appends names and then fails on an IndexError (and retries, smaller);
//    here the chain is redrawn from the same stream until its names differ.
//  * The niah records' `index` quirk (the character offset of the first
//    answer) is not reproduced: index is the sample number.
//  * Chat endpoints. RULER appends the answer prefix to the input; on a chat
//    endpoint (RULER's OpenAI client path) input + answer_prefix is the one
//    user message, which is what kInUserMessage produces (the default).
//    kAssistantPrefill puts the answer prefix in an assistant prefill
//    instead (for servers that continue a final assistant message); its
//    length is then counted as CountChat(input) + Count(answer_prefix).
//  * No model template: RULER's model_template_type (base = the bare task
//    text) is replaced by the server's own chat template, which CountChat
//    includes. remove_newline_tab (off by default upstream) is not offered.
//  * vt supports type_haystack noise only (the configured one).
#ifndef EVALRUN_EVALS_PARTS_RULER_TASKS_H_
#define EVALRUN_EVALS_PARTS_RULER_TASKS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "evals/parts/ruler_inputs.h"
#include "evals/status.h"
#include "evals/tokenizer.h"
#include "scorers/ruler_metrics.h"

namespace evalrun {

enum class RulerFamily { kNiah, kVariableTracking, kCommonWords, kFreqWords, kQa };
enum class RulerHaystack { kNoise, kEssay, kNeedle };
enum class RulerNeedleType { kNumbers, kWords, kUuids };
enum class RulerAnswerPrefixMode { kInUserMessage, kAssistantPrefill };

struct RulerTaskConfig {
  std::string name;  // "niah_single_1", ...
  RulerFamily family = RulerFamily::kNiah;
  RulerMetric metric = RulerMetric::kStringMatchAll;
  int max_tokens = 128;  // RULER's tokens_to_generate (the answer budget)
  RulerAnswerPrefixMode answer_prefix_mode = RulerAnswerPrefixMode::kInUserMessage;

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
  int icl_max_tokens = 500;  // the in-context example's size (raw tokens)
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
  int estimated_prompt_tokens = -1;  // the estimate before the final exact count (-1: none)
  int exact_prompt_tokens = 0;       // CountChat of the prompt (+ Count of the prefill)
  int tokenizer_calls = 0;           // tokenizer round trips spent on this sample
};

struct RulerGenStats {
  int tokenizer_calls = 0;  // Tokenizer::calls() difference over the whole call
  int setup_calls = 0;      // of which before sample 0 (vt's example)
};

// Generates samples 0..n-1 of `task` at `length` (prompt tokens after the
// chat template + task.max_tokens <= length) from the random stream seeded
// with `seed` (RULER's default is 42). Deterministic: the same inputs, seed
// and tokenizer answers give byte-identical samples. Uses `tok` (not owned)
// for every count. On success replaces *out (and *stats when given).
// Errors: RulerTaskAvailable's NotFound; InvalidInput for a length too small
// for the task's fixed text or for more qa samples than questions; NotFound
// when cwe needs more distinct words than wonderwords has and
// english_words.json is missing; the tokenizer's Status.
// Reentrant: `inputs` is only read, so calls may run on several threads at
// once, each with its own Tokenizer.
Status GenerateRulerSamples(const RulerInputs& inputs, const RulerTaskConfig& task, int length,
                            int n, uint64_t seed, Tokenizer* tok, std::vector<RulerSample>* out,
                            RulerGenStats* stats = nullptr);

// The 40 depths of niah.py: np.round(np.linspace(0, 100, 40)).astype(int).
const std::vector<int>& RulerDepths();

}  // namespace evalrun

#endif  // EVALRUN_EVALS_PARTS_RULER_TASKS_H_
