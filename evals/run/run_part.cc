// One question part through the request pool: the items not answered yet,
// each prompt made whole only when sent, KV admission when the slots share
// one cache, the writer scoring and writing each answer as it arrives, and
// the part's object of results.json from its records.
#include <algorithm>
#include <set>

#include "evals/base/files.h"
#include "evals/base/exit_codes.h"
#include "evals/run/answer_writer.h"
#include "evals/run/context_check.h"
#include "evals/run/endpoint_results.h"
#include "evals/run/progress.h"
#include "evals/run/request_pool.h"
#include "evals/run/results.h"
#include "evals/run/run_files.h"
#include "evals/run/run_steps.h"
#include "evals/run/scoring_stage.h"
#include "evals/server/base_url.h"

namespace evalrun::run_internal {
namespace {


// The items not answered yet (neither scored nor journaled), in item order.
std::vector<size_t> Unanswered(const PartRun& r) {
  std::set<std::string> answered;
  for (const auto& rec : r.answered) answered.insert(rec.id);
  for (const auto& [i, a] : r.journaled) answered.insert(r.prepared.items[i].id);
  std::vector<size_t> order;
  for (size_t i = 0; i < r.prepared.items.size(); ++i)
    if (!answered.count(r.prepared.items[i].id)) order.push_back(i);
  return order;
}

// Each item's KV reservation; per endpoint, admission by tokens only when
// its slots together could outgrow its shared cache.
PoolOptions AdmissionOptions(const PartRun& r, const RunServices& s, size_t asked, std::vector<PoolEndpoint>* eps,
                             std::vector<bool>* admission) {
  PoolOptions o;
  o.max_attempts = s.job->card.server.retries + 1;  // per question, however often it is asked
  int64_t largest = 0;
  for (const Item& item : r.prepared.items) {
    o.reserve_tokens.push_back(ReserveTokens(item));
    largest = std::max(largest, o.reserve_tokens.back());
  }
  const bool several = s.endpoints.size() > 1;
  for (const EndpointService& es : s.endpoints) {
    PoolEndpoint ep;
    ep.name = es.name;
    ep.slots = es.slots;
    ep.make_client = es.make_client;
    ep.watch = es.watch;
    const KvCapacity& kv = es.kv;
    const bool on = kv.shared && kv.tokens > 0 && largest * std::min<int64_t>(es.slots, asked) > kv.tokens;
    admission->push_back(on);
    if (on) {
      ep.kv_capacity_tokens = kv.tokens;
      std::fprintf(s.err, "evalrun: %s: %s%s%d slots share one KV cache of %lld tokens (%s): a request starts only "
                   "when its prompt + max_tokens fit beside those in flight%s\n",
                   r.name.c_str(), several ? es.name.c_str() : "", several ? ": its " : "the ", es.slots,
                   static_cast<long long>(kv.tokens), kv.source.c_str(),
                   kv.assumed ? ". If each slot has a cache of its own (llama-server -np without --kv-unified), "
                                "set server.kv_cache to \"per_slot\" in the card"
                              : "");
    }
    eps->push_back(std::move(ep));
  }
  o.note = [&s, &r](const std::string& line) { std::fprintf(s.err, "\nevalrun: %s: %s\n", r.name.c_str(), line.c_str()); };
  return o;
}

// The card's `scoring`: niced by default when the engine shares the machine.
ScoringOptions ScoringFor(const RunServices& s) {
  const Card& card = s.job->card;
  const bool local = s.job->managed || IsLoopbackUrl(card.server.base_url);
  return ScoringOptionsFor(card.scoring.concurrency, card.scoring.nice ? &*card.scoring.nice : nullptr, local);
}

nlohmann::json AdmissionJson(const KvCapacity& kv, bool admission, const RequestPool& pool) {
  nlohmann::json adm = kv.ToJson();
  const PoolStats& st = pool.stats();
  adm["admission"] = admission;
  adm["capacity_final_tokens"] = admission ? nlohmann::json(pool.capacity_tokens()) : nlohmann::json();
  adm["effective_concurrency"] = Round(pool.mean_in_flight(), 2);
  adm["max_in_flight"] = st.max_in_flight.load();
  adm["admission_waits"] = st.admission_waits.load();
  adm["admission_wait_s"] = Round(st.admission_wait_us.load() / 1e6, 3);
  adm["capacity_returns"] = st.capacity_returns.load();
  adm["capacity_tightenings"] = st.tightenings.load();
  return adm;
}

nlohmann::json OutagesJson(const RequestPool& pool) {
  nlohmann::json outages = nlohmann::json::array();
  for (const Outage& o : pool.outages()) {
    nlohmann::json j = {{"started_utc", o.started_utc}, {"seconds", Round(o.seconds, 1)}, {"requeued", o.requeued},
                        {"recovered", o.recovered},
                        {"error", o.error.empty() ? nlohmann::json() : nlohmann::json(o.error)}};
    if (pool.endpoint_count() > 1) j["endpoint"] = o.endpoint_name;
    outages.push_back(j);
  }
  return outages;
}

// The part's object of results.json: its aggregate of the records, and the
// runner's keys (docs/results-schema.md "keys every part has").
nlohmann::json PartResult(const PartRun& r, const std::vector<SampleRecord>& scored, int failed,
                          const RunServices& s, const RequestPool& pool, const std::vector<bool>& admission) {
  nlohmann::json result = r.part->Aggregate(scored, failed, r.prepared);
  AddPartKeys(r, &result);
  result["planned"] = r.prepared.items.size();
  result["complete"] = scored.size() == r.prepared.items.size();
  result["max_in_flight"] = pool.stats().max_in_flight.load();
  result["slots"] = s.server->slots;
  AddRecordCounts(scored, &result);
  result["admission"] = AdmissionJson(s.endpoints[0].kv, admission[0], pool);
  result["outages"] = OutagesJson(pool);
  if (s.endpoints.size() > 1) {
    // Each endpoint's share, its admission among them.
    nlohmann::json eps = EndpointResults(pool, scored);
    for (size_t e = 0; e < eps.size(); ++e) {
      nlohmann::json adm = s.endpoints[e].kv.ToJson();
      adm["admission"] = admission[e];
      adm["capacity_final_tokens"] = admission[e] ? nlohmann::json(pool.capacity_tokens(e)) : nlohmann::json();
      eps[e]["admission"] = adm;
    }
    result["endpoints"] = eps;
  }
  return result;
}

}  // namespace

StepExit RunQuestionPart(PartRun* r, const RunServices& s, PartOutcome* out) {
  Status st = MakeDirectories(r->dir);
  if (!st.ok()) return Stop(s.err, st, kExitBadInput);
  const std::vector<size_t> order = Unanswered(*r);
  // Each prompt is made whole (read back from the spool) only when sent,
  // with the part's own request settings.
  const PromptSource prompts = [r](size_t i, Prompt* p) {
    const Item& item = r->prepared.items[i];
    EVALRUN_RETURN_IF_ERROR(LoadItemPrompt(r->prepared, item, p));
    (item.request ? *item.request : r->request).ApplyTo(&p->params);
    return Status::Ok();
  };
  std::vector<bool> admission;
  std::vector<PoolEndpoint> endpoints;
  PoolOptions options = AdmissionOptions(*r, s, order.size(), &endpoints, &admission);
  RequestPool pool(std::move(endpoints), std::move(options));
  const int total = static_cast<int>(r->prepared.items.size());
  Progress progress(r->name, total, total - static_cast<int>(order.size()), s.server->slots, &pool.stats(), s.err,
                    s.tty);
  if (s.endpoints.size() > 1) progress.ShowEndpoints(&pool);
  AnswerWriter writer(*r->part, r->prepared, &progress, s.cancel, std::move(r->answered), ScoringFor(s));
  if (s.endpoints.size() > 1) {
    std::vector<std::string> names;
    for (const auto& es : s.endpoints) names.push_back(es.name);
    writer.SetEndpointNames(std::move(names));
  }
  st = writer.Open(r->dir);
  if (!st.ok()) return Stop(s.err, st, kExitBadInput);
  if (!r->journaled.empty())
    std::fprintf(s.err, "evalrun: %s: scoring %zu answers an earlier run journaled but did not score\n",
                 r->name.c_str(), r->journaled.size());
  writer.ScoreJournaled(std::move(r->journaled));
  r->journaled.clear();
  progress.Start();
  pool.Run(
      r->prepared.items.size(), prompts, order, [&](size_t i, const CallResult& res) { writer.OnAnswer(i, res); },
      s.cancel, s.pause, [&] { writer.OnBatchEnd(); });
  writer.Finish(s.err);
  progress.Finish();
  if (!writer.error().ok()) return Stop(s.err, writer.error(), kExitIncomplete);
  if (writer.too_long() > 0)
    std::fprintf(s.err, "evalrun: %s: %d prompts were longer than the server's context (HTTP 400); counted as "
                 "too_long and wrong, not asked again\n", r->name.c_str(), writer.too_long());
  if (writer.raw_fallback() > 0 || writer.server_parse_error() > 0)
    std::fprintf(s.err, "evalrun: %s: the server's output parser refused %d answers (HTTP 500); %d recovered as raw "
                 "text (raw_fallback), %d counted wrong (server_parse_error)\n", r->name.c_str(),
                 writer.raw_fallback() + writer.server_parse_error(), writer.raw_fallback(),
                 writer.server_parse_error());
  out->failed = writer.failed();
  out->records = InItemOrder(*r, writer.TakeRecords());
  out->result = PartResult(*r, out->records, writer.failed(), s, pool, admission);
  out->stopped = pool.stop_status();
  return std::nullopt;
}

}  // namespace evalrun::run_internal
