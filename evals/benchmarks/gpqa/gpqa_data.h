// GPQA (Rein et al., 2023, arXiv:2311.12022): loading, choice order, prompts
// and simple-evals' answer extraction.
//
// The authors ask that GPQA questions never appear in plain text online. The
// data is therefore read at run time from the original password-protected
// dataset.zip (datasets/gpqa/PROVENANCE.md) straight into memory; nothing of
// it is written to disk, and question text must never be logged by callers
// beyond what a run's own records need.
//
// The dataset does not letter its answers: each question has one correct and
// three incorrect answers, and the evaluator shuffles them. Our shuffle
// depends only on (seed, record id), so a question's letters are the same on
// every machine, compiler and run, whatever the concurrency or the subset of
// questions asked.
//
// Thread-safety: pure functions (each says so below); no shared mutable state.
#ifndef EVALRUN_EVALS_BENCHMARKS_GPQA_GPQA_DATA_H_
#define EVALRUN_EVALS_BENCHMARKS_GPQA_GPQA_DATA_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "evals/base/status.h"

namespace evalrun {

// One question, fields exactly as in the CSV (no trimming: simple-evals sends
// them as pandas reads them, and so do we).
struct GpqaQuestion {
  std::string record_id;                 // "Record ID" ("rec" + 14 letters/digits); unique
  std::string question;                  // "Question"
  std::string correct;                   // "Correct Answer"
  std::array<std::string, 3> incorrect;  // "Incorrect Answer 1", "... 2", "... 3"
  std::string domain;                    // "High-level domain": Physics, Chemistry, Biology
  std::string subdomain;                 // "Subdomain"
};

// The member of the official dataset.zip that holds GPQA Diamond (198
// questions), and the archive's password, published in the README of
// idavidrein/gpqa.
inline constexpr char kGpqaDiamondMember[] = "dataset/gpqa_diamond.csv";
// The archive's password, from the manifest evals/benchmarks/gpqa/gpqa.json (it is public:
// the official README gives it). One place, read at run time.
std::string GpqaZipPassword();

// Reads `member` of the zip at `zip_path` (decrypting with `password`) into
// memory and parses it as CSV with a header row naming the columns above
// (other columns are ignored). On success replaces *out with the questions in
// file order. On failure returns the Status of ReadZipMember, or
// InvalidInput, prefixed "<zip_path>:<member>", naming the line and column:
// a missing or duplicated column, a record whose width differs from the
// header's, an empty Record ID, Question or answer, a duplicate Record ID.
// *out is left unspecified on failure. Thread-safe (no shared state).
Status LoadGpqa(const std::string& zip_path, const std::string& member, const std::string& password,
                std::vector<GpqaQuestion>* out);

// The order in which one question's four answers are shown: order[k] is the
// index into {correct, incorrect[0], incorrect[1], incorrect[2]} of the
// answer shown with letter 'A' + k (simple-evals' "permutation").
//
// Derived only from (seed, record_id), portably: the key "<seed in
// decimal>:<record_id>" is hashed with 64-bit FNV-1a, the hash seeds
// splitmix64, and a hand-written Fisher-Yates shuffle (i = 3 down to 1, swap
// order[i] with order[j], j uniform in [0, i] by rejection sampling, so
// without modulo bias) permutes {0, 1, 2, 3}. No std::shuffle or std::
// distribution, whose outputs differ between standard libraries. Changing any
// of this changes every published letter: the golden values in
// tests/benchmarks/gpqa/gpqa_data_test.cc pin it. Pure function: thread-safe.
std::array<int, 4> GpqaChoiceOrder(uint64_t seed, std::string_view record_id);

// The letter ('A'..'D') under which the correct answer (index 0) is shown.
// `order` must be a permutation of {0, 1, 2, 3}; returns 0 otherwise.
char GpqaCorrectLetter(const std::array<int, 4>& order);

// The prompt profiles GpqaPrompt knows, for validating cards at the edge.
inline constexpr std::array<std::string_view, 2> kGpqaPromptProfiles = {"letter", "simple-evals"};
bool IsGpqaPromptProfile(std::string_view profile);

// The user message for `q` with its answers in `order`. Profiles:
//
// "letter" (the paper's setting: the question and four lettered options, the
// letter alone as the answer; wording ours):
//   <Question>\n
//   \n
//   A) <answer order[0]>\n
//   B) <answer order[1]>\n
//   C) <answer order[2]>\n
//   D) <answer order[3]>\n
//   \n
//   Answer with only the letter (A, B, C or D) of the correct option.
//
// "simple-evals": openai/simple-evals' QUERY_TEMPLATE_MULTICHOICE (common.py,
// used by gpqa_eval.py through format_multichoice_question), exactly:
//   Answer the following multiple choice question. The last line of your
//   response should be of the following format: 'Answer: $LETTER' (without
//   quotes) where LETTER is one of ABCD. Think step by step before answering.
//   \n\n<Question>\n\nA) <A>\nB) <B>\nC) <C>\nD) <D>
// (the first paragraph is one line; no newline at the end).
//
// Fields are inserted verbatim (no trimming, no escaping). Returns "" for an
// unknown profile (check with IsGpqaPromptProfile first) or an `order` that is
// not a permutation of {0, 1, 2, 3}. Thread-safe.
std::string GpqaPrompt(const GpqaQuestion& q, const std::array<int, 4>& order,
                       std::string_view profile);

// simple-evals' extraction (gpqa_eval.py): the first match, via RE2, of
// common.py's ANSWER_PATTERN_MULTICHOICE
//   (?i)Answer[ \t]*:[ \t]*\$?([A-D])\$?
// and its group 1. Returns the captured character as written, or 0 when
// nothing matches. Note what the pattern implies, and we keep: it is
// case-insensitive, so "answer: b" yields 'b' (lowercase), which simple-evals
// then scores as wrong against "B"; there is no word boundary, so "Answer:
// Both" yields 'B'; "**Answer:** C" does not match (the "**" sits between ':'
// and the letter); a line break between ':' and the letter does not match.
// Thread-safe (one compiled pattern, shared read-only).
char ExtractSimpleEvalsLetter(std::string_view response);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BENCHMARKS_GPQA_GPQA_DATA_H_
