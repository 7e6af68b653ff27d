#include "evals/benchmarks/speed/speed_results.h"

#include <cmath>
#include <cstdio>
#include <map>

#include "evals/benchmarks/speed/speed_stats.h"

namespace evalrun {
namespace {

std::vector<double> Field(const std::vector<nlohmann::json>& records, const char* group, const char* key) {
  std::vector<double> v;
  for (const auto& r : records) {
    const nlohmann::json& g = r.contains(group) ? r[group] : nlohmann::json();
    if (g.is_object() && g.contains(key) && g[key].is_number()) v.push_back(g[key].get<double>());
  }
  return v;
}

nlohmann::json GapOf(const nlohmann::json& client, const nlohmann::json& server) {
  if (!client["median"].is_number() || !server["median"].is_number()) return nullptr;
  auto g = GapPct(client["median"].get<double>(), server["median"].get<double>());
  return g ? nlohmann::json(*g) : nlohmann::json(nullptr);
}

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// Why the two decode clocks may differ by more than 2 %.
std::string DecodeGapWhy(const std::vector<nlohmann::json>& records, double gap) {
  double chunks = 0, tokens = 0;
  for (const auto& r : records) {
    if (r["completion_tokens"].is_number()) tokens += r["completion_tokens"].get<double>();
    chunks += r.value("chunks", 0);
  }
  std::string why = "client and server decode differ by " + Fixed(gap, 1) + " %";
  if (chunks + 0.5 < tokens)
    return why + ": the server sent " + Fixed(chunks, 0) + " chunks for " + Fixed(tokens, 0) +
           " tokens, so the client's first and last token times are those of chunks holding several";
  return why + ": the client's clock includes the network, the server's HTTP thread and SSE framing between "
               "tokens, which the server's predicted_ms leaves out";
}

void AddDecode(const std::vector<nlohmann::json>& records, nlohmann::json* res) {
  nlohmann::json& r = *res;
  r["decode_client_tps"] = SpreadJson(Field(records, "rates", "decode_client_tps"));
  r["decode_server_tps"] = SpreadJson(Field(records, "rates", "decode_server_tps"));
  r["decode_gap_pct"] = GapOf(r["decode_client_tps"], r["decode_server_tps"]);
  r["decode_gap_why"] = nullptr;
  if (r["decode_gap_pct"].is_number() && std::fabs(r["decode_gap_pct"].get<double>()) > 2)
    r["decode_gap_why"] = DecodeGapWhy(records, r["decode_gap_pct"].get<double>());
}

void AddPrefill(const std::vector<nlohmann::json>& records, nlohmann::json* res) {
  nlohmann::json& r = *res;
  r["prefill_client_tps"] = SpreadJson(Field(records, "rates", "prefill_client_tps"));
  r["prefill_server_tps"] = SpreadJson(Field(records, "rates", "prefill_server_tps"));
  r["prefill_gap_pct"] = GapOf(r["prefill_client_tps"], r["prefill_server_tps"]);
}

void AddConc(const std::vector<nlohmann::json>& records, const std::vector<double>& walls, nlohmann::json* res) {
  std::map<int, double> tokens_by_round;
  std::vector<double> per_request;
  for (const auto& r : records) {
    if (!r["completion_tokens"].is_number()) continue;
    const double n = r["completion_tokens"].get<double>();
    tokens_by_round[r.value("round", 0)] += n;
    const nlohmann::json& done = r["times"]["done_s"];
    if (done.is_number() && done.get<double>() > 0) per_request.push_back(n / done.get<double>());
  }
  std::vector<double> totals;
  for (size_t i = 0; i < walls.size(); ++i)
    if (walls[i] > 0 && tokens_by_round.count(static_cast<int>(i) + 1))
      totals.push_back(tokens_by_round[static_cast<int>(i) + 1] / walls[i]);
  (*res)["total_tps"] = SpreadJson(totals);
  (*res)["per_request_tps"] = SpreadJson(per_request);
  (*res)["round_wall_s"] = walls;
}

}  // namespace

nlohmann::json SummarizeStep(const SpeedStep& step, const std::vector<nlohmann::json>& records,
                             const std::vector<double>& walls, int peak) {
  nlohmann::json r;
  int ok = 0;
  for (const auto& rec : records) ok += rec.value("status", "") == "ok" ? 1 : 0;
  r["requests"] = records.size();
  r["requests_ok"] = ok;
  r["ttft_s"] = SpreadJson(Field(records, "rates", "ttft_s"));
  r["queue_s"] = SpreadJson(Field(records, "rates", "queue_s"));
  r["e2e_s"] = SpreadJson(Field(records, "rates", "e2e_s"));
  if (step.kind == "decode" || step.kind == "ctx" || step.kind == "conc") AddDecode(records, &r);
  if (step.kind == "prefill" || step.kind == "ctx") AddPrefill(records, &r);
  if (step.kind == "conc") {
    AddConc(records, walls, &r);
    r["peak_in_flight"] = peak;
  }
  return r;
}

std::vector<std::string> CollectMarks(const std::vector<nlohmann::json>& records) {
  std::map<std::string, int> counts;
  std::vector<std::string> order;
  for (const auto& r : records)
    for (const auto& m : r.value("marks", nlohmann::json::array())) {
      const std::string s = m.get<std::string>();
      if (counts[s]++ == 0) order.push_back(s);
    }
  std::vector<std::string> out;
  for (const std::string& s : order)
    out.push_back(counts[s] > 1 ? s + " (" + std::to_string(counts[s]) + " requests)" : s);
  return out;
}

nlohmann::json ColdRow(const nlohmann::json& record, bool cold, const std::string& why_not,
                       const nlohmann::json& steps) {
  nlohmann::json c;
  c["cold"] = cold;
  c["why_not_cold"] = why_not.empty() ? nlohmann::json(nullptr) : nlohmann::json(why_not);
  c["prompt_id"] = record.value("prompt_id", "");
  c["decode_client_tps"] = record["rates"]["decode_client_tps"];
  c["decode_server_tps"] = record["rates"]["decode_server_tps"];
  c["ttft_s"] = record["rates"]["ttft_s"];
  c["marks"] = record["marks"];
  c["decode_cold_to_warm"] = nullptr;
  c["ttft_cold_to_warm"] = nullptr;
  for (const auto& s : steps) {
    if (s.value("name", "") != "decode/" + c["prompt_id"].get<std::string>() || !s["result"].is_object()) continue;
    const nlohmann::json& warm = s["result"]["decode_client_tps"]["median"];
    if (warm.is_number() && warm.get<double>() > 0 && c["decode_client_tps"].is_number())
      c["decode_cold_to_warm"] = c["decode_client_tps"].get<double>() / warm.get<double>();
    const nlohmann::json& wt = s["result"]["ttft_s"]["median"];
    if (wt.is_number() && wt.get<double>() > 0 && c["ttft_s"].is_number())
      c["ttft_cold_to_warm"] = c["ttft_s"].get<double>() / wt.get<double>();
  }
  return c;
}

nlohmann::json SpeedDefinitions() {
  return {
      {"decode_client_tps", "answer tokens after the first / (time of the last token chunk - time of the first), "
                            "on the client's clock; median over the step's requests"},
      {"decode_server_tps", "llama-server's timings.predicted_n / predicted_ms x 1000 (its own clock)"},
      {"decode_gap_pct", "(client median - server median) / server median x 100"},
      {"prefill_client_tps", "prompt tokens (usage.prompt_tokens) / time to the first token chunk of the same "
                             "request; median over the step's requests"},
      {"prefill_server_tps", "timings.prompt_n / prompt_ms x 1000"},
      {"ttft_s", "seconds from handing the request to the transport to the first chunk with text"},
      {"queue_s", "ttft_s - timings.prompt_ms / 1000: the time before the server began the prompt (its queue when "
                  "more requests are sent than it has slots, and the transport); median over the step's requests"},
      {"total_tps", "conc/Cn: all answer tokens of a round / its wall time (first send to last [DONE]); median over "
                    "rounds"},
      {"per_request_tps", "conc/Cn: a request's answer tokens / its end-to-end time; median over all requests"},
      {"cold", "the first request after the engine started (a managed engine, or a server whose /metrics "
               "counters were at zero); cold_to_warm = cold / the warm decode step of the same prompt"},
      {"spread", "every figure is {median, min, max, n}; n counts requests (rounds for total_tps); no percentile "
                 "across requests; chunk gaps are percentiles within one request"},
      {"load", "a step is disturbed when guard.samples_in_a_row samples in a row saw a foreign process above "
               "guard.threshold_pct of a core (or on the GPU); it is repeated up to guard.tries, every attempt "
               "kept, the figures from the last"},
      {"exact_prompts", "every prompt is cut to its target with the server's /apply-template + /tokenize; a "
                        "request whose usage.prompt_tokens differs is marked, as is cache_n > 0"}};
}

}  // namespace evalrun
