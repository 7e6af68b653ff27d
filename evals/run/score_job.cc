// ScoreJob: recorded responses scored without a server, by the same
// Part::Score as a live run, into a job folder of their own.
#include <filesystem>
#include <map>

#include "datasets/manifest.h"
#include "evals/base/files.h"
#include "evals/base/exit_codes.h"
#include "evals/base/json_fields.h"
#include "evals/base/jsonl.h"
#include "evals/run/answer_writer.h"
#include "evals/run/results.h"
#include "evals/run/run_files.h"
#include "evals/run/run_steps.h"
#include "evals/run/sample_codec.h"
#include "evals/run/scoring_stage.h"
#include "evals/run/utc_now.h"

namespace evalrun {
namespace run_internal {
namespace {


// The card and its one part, prepared with every item (`--input`: another
// revision of the dataset file).
StepExit PrepareScoredPart(const ScoreOptions& opts, Job* job, FILE* err) {
  Status st = LoadCard(opts.card_path, &job->card);
  if (!st.ok()) return Stop(err, st, kExitBadInput);
  std::vector<std::string> notes;
  st = ResolveParts(job->card, {opts.part}, "--part", false, job, &notes);
  if (!st.ok()) return Stop(err, st, kExitBadInput);
  PartRun& r = job->parts[0];
  if (r.def->needs_tokenizer)
    return Stop(err, Status::InvalidInput("part " + r.name + " cannot be re-scored without its prompts' server; "
                                          "re-score a run folder instead"),
                kExitBadInput);
  PartContext ctx;
  ctx.card = &job->card;
  ctx.settings = &r.settings;
  ctx.data_dir = opts.data_dir.empty() ? DefaultDataDir() : opts.data_dir;
  ctx.all_items = true;
  ctx.input_override = opts.input_path;
  ctx.unsafe_exec = opts.unsafe_exec;
  ctx.sandbox_min = opts.sandbox_min;
  st = r.part->Prepare(ctx, &r.prepared);
  if (!st.ok()) return Stop(err, st.Prefixed("part " + r.name), kExitBadInput);
  for (const auto& n : r.prepared.notes) std::fprintf(err, "evalrun: %s: %s\n", r.name.c_str(), n.c_str());
  for (size_t i = 0; i < r.prepared.items.size(); ++i) r.index_by_id[r.prepared.items[i].id] = static_cast<int>(i);
  return std::nullopt;
}

// One line of the responses file as an answer to its item, not yet scored.
Status ReadLine(const PartRun& r, const std::string& where, const nlohmann::json& j, int* index, UnscoredAnswer* out) {
  if (!j.is_object()) return Status::InvalidInput(where + ": expected a JSON object");
  std::string why;
  const int idx = r.part->FindItem(j, r.index_by_id, &why);
  if (idx < 0 && !why.empty()) return Status::InvalidInput(where + ": " + why);
  if (idx < 0)
    return Status::InvalidInput(where + ": no question of part " + r.name + " matches this line (id " +
                                (j.contains("id") ? j["id"].dump() : std::string("missing")) + ")");
  if (!j.contains("response") || !j["response"].is_string())
    return Status::InvalidInput(where + ": response: expected a string");
  for (const char* k : {"finish_reason", "reasoning"})
    if (j.contains(k) && !j[k].is_string()) return Status::InvalidInput(where + ": " + k + ": expected a string");
  CallResult res;
  res.status = CallStatus::kOk;
  res.completion.content = j["response"].get<std::string>();
  res.completion.finish_reason = j.value("finish_reason", std::string("stop"));
  res.completion.reasoning = j.value("reasoning", std::string());
  out->record = NewRecord(r.prepared.items[idx], res);
  out->record.latency_ms.reset();  // nothing was measured
  out->record.attempts.reset();
  out->completion = std::move(res.completion);
  *index = idx;
  return Status::Ok();
}

// Every response scored by the scoring stage (the card's `scoring`, as a
// live run scores), by item (a second line for an item replaces the first).
StepExit ScoreResponses(const ScoreOptions& opts, const Job& job, const PartRun& r, std::vector<SampleRecord>* scored,
                        FILE* err) {
  std::string text;
  Status st = ReadFileToString(opts.responses_path, &text);
  if (!st.ok()) return Stop(err, st, kExitBadInput);
  std::map<int, UnscoredAnswer> by_index;
  st = ParseJsonl(text, opts.responses_path, [&](int line, const nlohmann::json& j) {
    int idx = -1;
    UnscoredAnswer a;
    EVALRUN_RETURN_IF_ERROR(ReadLine(r, opts.responses_path + ":" + std::to_string(line), j, &idx, &a));
    by_index[idx] = std::move(a);
    return Status::Ok();
  });
  if (!st.ok()) return Stop(err, st, kExitBadInput);
  std::map<size_t, SampleRecord> done;
  const ScoringConfig& sc = job.card.scoring;
  ScoringStage stage(
      ScoringOptionsFor(sc.concurrency, sc.nice ? &*sc.nice : nullptr, false),
      [&r](size_t i, UnscoredAnswer a) { return ScoreAnswer(*r.part, r.prepared.items[i], std::move(a)); },
      [&done](size_t i, SampleRecord rec) { done[i] = std::move(rec); }, nullptr);
  for (auto& [i, a] : by_index) stage.Submit(static_cast<size_t>(i), std::move(a));
  stage.Wait();
  for (auto& [i, rec] : done) scored->push_back(std::move(rec));
  return std::nullopt;
}

}  // namespace
}  // namespace run_internal

int ScoreJob(const ScoreOptions& opts, FILE* out, FILE* err) {
  using namespace run_internal;
  Job job;
  if (StepExit e = PrepareScoredPart(opts, &job, err)) return *e;
  PartRun& r = job.parts[0];
  std::vector<SampleRecord> scored;
  if (StepExit e = ScoreResponses(opts, job, r, &scored, err)) return *e;

  const std::string name = opts.job.empty() ? DefaultJobName(job.card.name + "-score") : opts.job;
  const std::string job_dir = opts.out_dir + "/" + name;
  const std::string part_dir = job_dir + "/" + r.name;
  if (std::filesystem::exists(part_dir + "/samples.jsonl"))
    return *Stop(err, Status::InvalidInput(part_dir + "/samples.jsonl exists; choose another --job"), kExitBadInput);
  Status st = MakeDirectories(part_dir);
  if (!st.ok()) return *Stop(err, Status::InvalidInput(st.message()), kExitBadInput);
  std::string body;
  for (const SampleRecord& rec : scored) body += DumpLine(EncodeSample(rec)) + "\n";
  st = WriteFileAtomically(part_dir + "/samples.jsonl", body);
  if (!st.ok()) return *Stop(err, st, kExitBadInput);
  nlohmann::json result = r.part->Aggregate(scored, 0, r.prepared);
  AddPartKeys(r, &result);
  result["info"].erase("ids");
  result["responses"] = opts.responses_path;
  nlohmann::json parts_done = {{r.name, result}};
  st = WriteResults(job_dir, job.card, name, parts_done, {{"scored_utc", UtcNow()}});
  if (!st.ok()) return *Stop(err, st, kExitBadInput);
  PrintTable(out, job.parts, parts_done);
  std::fprintf(out, "\nresults: %s/results.json\n", job_dir.c_str());
  return kExitOk;
}

}  // namespace evalrun
