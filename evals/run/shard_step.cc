// --shard I/N in a run (evals/run/shard.h): the items narrowed to the
// shard's after every part is prepared, the shard checked on resume, and
// <job>/shard.json.
#include "evals/base/exit_codes.h"
#include "evals/base/json_bounds.h"
#include "evals/base/files.h"
#include "evals/run/run_files.h"
#include "evals/run/run_steps.h"

namespace evalrun::run_internal {
namespace {

// A resumed job must be the same shard of the same run.
StepExit CheckResumedShard(const Job& job, FILE* err) {
  const nlohmann::json old = ParseJsonOrDiscarded(job.old_run_text);
  const nlohmann::json old_shard = old.is_object() ? old.value("shard", nlohmann::json()) : nlohmann::json();
  const std::string was = old_shard.is_object()
                              ? std::to_string(old_shard.value("index", 0)) + "/" +
                                    std::to_string(old_shard.value("count", 0))
                              : "not sharded";
  const std::string now = job.shard.sharded() ? job.shard.Text() : "not sharded";
  if (was == now) return std::nullopt;
  return Stop(err,
              Status::InvalidInput(job.dir.path() + ": the job was started as shard " + was + ", now --shard is " +
                                   now + "; resume it with the same --shard, or use another --job"),
              kExitBadInput);
}

}  // namespace

nlohmann::json ShardJson(const Job& job) {
  return {{"index", job.shard.index}, {"count", job.shard.count}, {"run_key_sha256", job.run_key_sha256}};
}

StepExit ApplyShard(Job* job, const Server& server, FILE* err) {
  if (job->resuming)
    if (StepExit e = CheckResumedShard(*job, err)) return e;
  if (!job->shard.sharded()) return std::nullopt;
  job->run_key_sha256 = RunKeyDigest(RunKey(*job, server));
  std::string summary;
  for (auto& r : job->parts) {
    std::vector<Item> mine;
    r.selected.clear();
    r.index_by_id.clear();
    for (Item& item : r.prepared.items) {
      r.selected.push_back(item.id);
      if (ShardOfItem(job->run_key_sha256, item.id, job->shard.count) != job->shard.index) continue;
      r.index_by_id[item.id] = static_cast<int>(mine.size());
      mine.push_back(std::move(item));
    }
    r.prepared.items = std::move(mine);
    r.shard = {{"index", job->shard.index}, {"count", job->shard.count}, {"selected", r.selected.size()}};
    summary += (summary.empty() ? "" : ", ") + r.name + " " + std::to_string(r.prepared.items.size()) + " of " +
               std::to_string(r.selected.size());
  }
  std::fprintf(err, "evalrun: shard %s (run key %s): %s\n", job->shard.Text().c_str(),
               job->run_key_sha256.substr(0, 12).c_str(), summary.c_str());
  return std::nullopt;
}

StepExit WriteShardFile(const Job& job, FILE* err) {
  if (!job.shard.sharded()) return std::nullopt;
  nlohmann::json doc = {{"schema", kShardSchema}, {"index", job.shard.index}, {"count", job.shard.count},
                        {"run_key_sha256", job.run_key_sha256}, {"parts", nlohmann::json::object()}};
  for (const auto& r : job.parts)
    doc["parts"][r.name] = {{"selected", r.selected}, {"shard_items", r.prepared.items.size()}};
  const std::string path = job.dir.path() + "/" + kShardFile;
  std::string old_text;
  if (job.resuming && ReadFileToString(path, &old_text).ok()) {
    const nlohmann::json old = ParseJsonOrDiscarded(old_text);
    if (old == doc) return std::nullopt;
    std::fprintf(err, "evalrun: note: %s: the selection changed since the shard started (a question count "
                 "changed?); rewritten\n", path.c_str());
  }
  Status st = WriteFileAtomically(path, doc.dump(1) + "\n");
  if (!st.ok()) return Stop(err, st, kExitBadInput);
  return std::nullopt;
}

}  // namespace evalrun::run_internal
