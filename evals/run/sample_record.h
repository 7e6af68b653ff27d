// One answered question as a typed record: what a line of
// <job>/<part>/samples.jsonl holds (docs/results-schema.md), parsed once at
// the edge by its codec (evals/run/sample_codec.h). The writer makes a
// record for every answer; the results, `compare` and `report` read records,
// never raw sample JSON.
//
// Thread-safety: plain values.
#ifndef EVALRUN_EVALS_RUN_SAMPLE_RECORD_H_
#define EVALRUN_EVALS_RUN_SAMPLE_RECORD_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "evals/run/verdict.h"
#include "evals/server/types.h"

namespace evalrun {

// A value of one of the part's own item fields: text, a number, a flag, a
// list of texts or of integers, or null.
using FieldValue = std::variant<std::monostate, bool, int64_t, double, std::string, std::vector<std::string>,
                                std::vector<int64_t>>;

// An item field written into each sample line (gold, subdomain, task,
// length, ...): its name is the line's key.
struct ItemField {
  std::string name;
  FieldValue value;
};
using ItemFields = std::vector<ItemField>;

// `v` as text: a string as it is, numbers and flags as JSON writes them,
// list entries joined by `sep`, null as "".
std::string FieldText(const FieldValue& v, std::string_view sep = " | ");

// The server refused the prompt as longer than its context (HTTP 400):
// counted apart, wrong, never asked again.
struct TooLong {
  bool refused = false;          // too_long
  std::string error;             // the server's message
  int server_prompt_tokens = -1; // when it said them
  int server_n_ctx = -1;
};

struct SampleRecord {
  // The question.
  std::string id;
  std::string category;
  std::string prompt_sha256;
  std::optional<int> max_tokens;       // absent only in hand-made lines
  // The answer.
  std::string response;
  std::string reasoning;
  bool unclosed_think = false;
  std::string finish_reason;
  int prompt_tokens = -1;              // -1: null (the server did not say)
  int completion_tokens = -1;
  std::optional<double> latency_ms;    // absent in `score` jobs
  std::optional<int> attempts;         // absent in `score` jobs
  // attempt_causes: every attempt's cause and HTTP status (retry_cause.h),
  // written only when one of them was not "ok"; empty: absent.
  std::vector<AttemptRecord> attempt_log;
  // raw_fallback: the server's output parser refused the chat answer and
  // the raw text was scored (evals/server/raw_fallback.h).
  bool raw_fallback = false;
  // server_parse_error: it refused it and nothing recovered it: scored on
  // an empty answer (wrong; a choice verdict says no_answer).
  bool server_parse_error = false;
  std::string endpoint;                // the base_url that answered, with several endpoints ("": absent)
  ServerTimings timings;               // present = false: null
  TooLong too_long;
  ItemFields fields;                   // the part's item fields, as the item had them
  Verdict verdict;

  // The item field `name`, or null. "category" is not an item field.
  const FieldValue* Field(std::string_view name) const;
  // "category" or an item field as text ("" when absent).
  std::string Text(std::string_view name) const;
  // An integer item field, or `fallback`.
  int64_t Int(std::string_view name, int64_t fallback = 0) const;
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_SAMPLE_RECORD_H_
