#include "evals/benchmarks/thinking/thinking_measures.h"

#include <algorithm>
#include <map>

#include "evals/run/results.h"
#include "scorers/statistics.h"

namespace evalrun {
namespace {

bool Blank(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; });
}

bool Correct(const SampleRecord& r) {
  const auto* c = std::get_if<ChoiceVerdict>(&r.verdict);
  return c && c->correct;
}

nlohmann::json TokenStats(std::vector<double> v) {
  if (v.empty()) return nullptr;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  return {{"n", v.size()},
          {"median", SortedPercentile(v, 0.5)},
          {"p90", Round(SortedPercentile(v, 0.9), 1)},
          {"max", v.back()},
          {"mean", Round(sum / v.size(), 1)}};
}

}  // namespace

bool HasThinkTag(std::string_view text) {
  return text.find("<think>") != std::string_view::npos || text.find("</think>") != std::string_view::npos;
}

bool ReasoningLeftInContent(std::string_view content, bool unclosed_think, std::string_view finish_reason) {
  return HasThinkTag(content) || (unclosed_think && finish_reason != "length");
}

ThinkingFacts ReadThinkingFacts(const SampleRecord& r, const AnswerCounter& count) {
  ThinkingFacts f;
  f.reasoning_in_content = ReasoningLeftInContent(r.response, r.unclosed_think, r.finish_reason);
  f.reasoned = !Blank(r.reasoning) || r.unclosed_think || HasThinkTag(r.response);
  if (r.finish_reason == "length")
    f.cut = r.unclosed_think || (f.reasoned && Blank(r.response)) ? CutPlace::kReasoning : CutPlace::kAnswer;
  if (!f.reasoned) {
    f.reasoning_tokens = 0;
  } else if (r.completion_tokens >= 0) {
    const int answer = Blank(r.response) ? 0 : count(r.response);
    if (answer >= 0)
      f.reasoning_tokens = std::max(0, r.completion_tokens - answer - (r.finish_reason == "stop" ? 1 : 0));
  }
  return f;
}

nlohmann::json ArmJson(const std::vector<const SampleRecord*>& recs, const std::vector<ThinkingFacts>& facts,
                       std::optional<int> budget) {
  int correct = 0, cut_reasoning = 0, cut_answer = 0, no_answer = 0, in_content = 0, reasoned = 0, ended = 0;
  std::vector<double> tokens;
  for (size_t i = 0; i < recs.size(); ++i) {
    const ThinkingFacts& f = facts[i];
    correct += Correct(*recs[i]);
    const auto* c = std::get_if<ChoiceVerdict>(&recs[i]->verdict);
    no_answer += c && c->no_answer && !f.reasoning_in_content;
    cut_reasoning += f.cut == CutPlace::kReasoning;
    cut_answer += f.cut == CutPlace::kAnswer;
    in_content += f.reasoning_in_content;
    reasoned += f.reasoned;
    if (f.reasoning_tokens >= 0) tokens.push_back(f.reasoning_tokens);
    ended += budget && f.reasoning_tokens >= *budget && f.cut != CutPlace::kReasoning;
  }
  const int n = static_cast<int>(recs.size());
  const double acc = n ? static_cast<double>(correct) / n : 0.0;
  nlohmann::json j = {{"n", n},
                      {"correct", correct},
                      {"accuracy", Round(acc, 6)},
                      {"stderr", Round(BinomialStderr(acc, n), 6)},
                      {"cut_off", {{"in_reasoning", cut_reasoning}, {"in_answer", cut_answer}}},
                      {"no_answer", no_answer},
                      {"reasoning_in_content", in_content},
                      {"reasoned", reasoned},
                      {"no_reasoning", n - reasoned},
                      {"no_reasoning_share", n ? Round(static_cast<double>(n - reasoned) / n, 6) : 0.0},
                      {"reasoning_tokens", TokenStats(tokens)}};
  if (budget) j["budget_ended"] = ended;
  return j;
}

nlohmann::json PairedJson(const std::vector<const SampleRecord*>& on, const std::vector<const SampleRecord*>& off) {
  std::map<std::string, bool> off_right;
  for (const SampleRecord* r : off) off_right[r->Text("question")] = Correct(*r);
  int n = 0, on_only = 0, off_only = 0, on_right = 0, off_total = 0;
  for (const SampleRecord* r : on) {
    auto it = off_right.find(r->Text("question"));
    if (it == off_right.end()) continue;
    ++n;
    const bool a = Correct(*r), b = it->second;
    on_right += a;
    off_total += b;
    on_only += a && !b;
    off_only += !a && b;
  }
  const double p = McNemarExactP(on_only, off_only);
  return {{"n", n},
          {"on_only", on_only},
          {"off_only", off_only},
          {"difference", n ? Round(static_cast<double>(on_right - off_total) / n, 6) : 0.0},
          {"mcnemar_p", p},
          {"p_text", FormatPValue(p)}};
}

nlohmann::json ReasoningBucketsJson(const std::vector<const SampleRecord*>& recs,
                                    const std::vector<ThinkingFacts>& facts, int budget) {
  struct Bucket {
    int from;
    std::optional<int> to;
    int n = 0, correct = 0;
  };
  std::vector<Bucket> buckets = {{0, 0}};
  int lo = 1;
  for (int hi : {budget / 8, budget / 4, budget / 2, budget - 1}) {
    if (hi < lo) continue;
    buckets.push_back({lo, hi});
    lo = hi + 1;
  }
  buckets.push_back({std::max(lo, budget), std::nullopt});
  Bucket unknown{-1, std::nullopt};
  for (size_t i = 0; i < recs.size(); ++i) {
    const int t = facts[i].reasoning_tokens;
    Bucket* b = &unknown;
    for (Bucket& x : buckets)
      if (t >= x.from && (!x.to || t <= *x.to)) b = &x;
    ++b->n;
    b->correct += Correct(*recs[i]);
  }
  if (unknown.n > 0) buckets.push_back(unknown);
  nlohmann::json out = nlohmann::json::array();
  for (const Bucket& b : buckets) {
    std::string label = b.from < 0 ? "unknown"
                        : !b.to    ? "≥ " + std::to_string(b.from)
                        : b.from == *b.to ? std::to_string(b.from)
                                          : std::to_string(b.from) + "-" + std::to_string(*b.to);
    out.push_back({{"label", label},
                   {"from", b.from < 0 ? nlohmann::json() : nlohmann::json(b.from)},
                   {"to", b.to ? nlohmann::json(*b.to) : nlohmann::json()},
                   {"n", b.n},
                   {"correct", b.correct},
                   {"accuracy", b.n ? nlohmann::json(Round(static_cast<double>(b.correct) / b.n, 6))
                                    : nlohmann::json()}});
  }
  return out;
}

}  // namespace evalrun
