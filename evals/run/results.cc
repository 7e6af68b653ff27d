#include "evals/run/results.h"

#include <cmath>
#include <map>

namespace evalrun {

SampleRecord NewRecord(const Item& item, const CallResult& r) {
  const Completion& c = r.completion;
  SampleRecord s;
  s.id = item.id;
  s.category = item.category;
  s.prompt_sha256 = item.prompt_sha256;
  s.max_tokens = item.prompt.params.max_tokens;
  s.response = c.content;
  s.reasoning = c.reasoning;
  s.unclosed_think = c.unclosed_think;
  s.finish_reason = c.finish_reason;
  s.prompt_tokens = c.prompt_tokens;
  s.completion_tokens = c.completion_tokens;
  s.latency_ms = Round(r.latency_ms, 1);
  s.attempts = r.attempts;
  s.attempt_log = r.attempt_log;
  s.raw_fallback = r.raw_fallback;
  s.server_parse_error = r.server_parse_error;
  s.timings = c.timings;
  s.fields = item.fields;
  return s;
}

ChoiceVerdict ScoreChoice(char letter, const std::string& gold, const std::string& finish_reason) {
  ChoiceVerdict v;
  v.cut_off = finish_reason == "length";
  if (letter) v.extracted = letter;
  v.no_answer = !v.cut_off && letter == 0;
  v.correct = !v.cut_off && letter != 0 && std::string(1, letter) == gold;
  return v;
}

void AddRecordCounts(const std::vector<SampleRecord>& records, nlohmann::json* out) {
  int too_long = 0, raw_fallback = 0, server_parse_error = 0;
  for (const auto& rec : records) {
    too_long += rec.too_long.refused;
    raw_fallback += rec.raw_fallback;
    server_parse_error += rec.server_parse_error;
  }
  (*out)["too_long"] = too_long;
  if (raw_fallback > 0) (*out)["raw_fallback"] = raw_fallback;
  if (server_parse_error > 0) (*out)["server_parse_error"] = server_parse_error;
}

double BinomialStderr(double p, int n) { return n > 0 ? std::sqrt(p * (1 - p) / n) : 0.0; }

double Round(double x, int digits) {
  double f = std::pow(10.0, digits);
  return std::round(x * f) / f;
}

void AddSpeeds(const std::vector<SampleRecord>& records, nlohmann::json* out) {
  double pn = 0, pms = 0, dn = 0, dms = 0;
  int64_t prompt_tokens = 0, completion_tokens = 0;
  int timed = 0;
  for (const auto& s : records) {
    if (s.prompt_tokens >= 0) prompt_tokens += s.prompt_tokens;
    if (s.completion_tokens >= 0) completion_tokens += s.completion_tokens;
    if (!s.timings.present) continue;
    ++timed;
    pn += s.timings.prompt_n;
    pms += s.timings.prompt_ms;
    dn += s.timings.predicted_n;
    dms += s.timings.predicted_ms;
  }
  nlohmann::json sp;
  sp["prompt_tokens"] = prompt_tokens;
  sp["completion_tokens"] = completion_tokens;
  sp["timed_samples"] = timed;
  sp["prompt_tokens_per_s"] = pms > 0 ? nlohmann::json(Round(pn / (pms / 1000.0), 1)) : nlohmann::json();
  sp["decode_tokens_per_s"] = dms > 0 ? nlohmann::json(Round(dn / (dms / 1000.0), 1)) : nlohmann::json();
  (*out)["speeds"] = sp;
}

nlohmann::json CategoryScores(const std::map<std::string, std::pair<int, int>>& groups) {
  nlohmann::json per = nlohmann::json::object();
  for (const auto& [name, c] : groups)
    per[name] = {{"n", c.first}, {"correct", c.second},
                 {"score", Round(c.first ? static_cast<double>(c.second) / c.first : 0.0, 6)}};
  return per;
}

nlohmann::json AggregateChoice(const std::vector<SampleRecord>& records, int failed, const std::string& group) {
  int n = 0, correct = 0, cut = 0, none = 0;
  std::map<std::string, std::pair<int, int>> cats;  // n, correct
  for (const auto& s : records) {
    const ChoiceVerdict& v = std::get<ChoiceVerdict>(s.verdict);
    ++n;
    correct += v.correct;
    cut += v.cut_off;
    none += v.no_answer;
    auto& c = cats[s.Text(group)];
    ++c.first;
    c.second += v.correct;
  }
  nlohmann::json r;
  double p = n ? static_cast<double>(correct) / n : 0.0;
  r["score"] = Round(p, 6);
  r["n"] = n;
  r["correct"] = correct;
  r["cut_off"] = cut;
  r["no_answer"] = none;
  r["failed"] = failed;
  r["stderr"] = Round(BinomialStderr(p, n), 6);
  r["categories"] = CategoryScores(cats);
  AddSpeeds(records, &r);
  return r;
}

}  // namespace evalrun
