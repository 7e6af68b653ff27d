// Shards of one run: `--shard I/N` asks a deterministic 1/N of every part's
// selected items, so that N evalruns (one per server, machine or job-array
// task) together ask exactly the selection of one unsharded run, and
// `evalrun merge` (evals/publish/merge.h) makes one job folder of them.
//
// Which shard an item belongs to depends only on the run key (its sha256,
// RunKeyDigest) and the item's id: the first 8 bytes of
// sha256(<run key sha256> "\n" <id>) as a big-endian integer, modulo N, plus
// one. It is the same on every machine and in every process, independent of
// the item's position or of which other items are selected (a question
// count changed on resume keeps every item where it was), and each item has
// exactly one shard, so the shards are disjoint and together complete.
//
// I is 1-based, 1 <= I <= N (Slurm's SLURM_ARRAY_TASK_ID with
// --array=1-N; a 0-based index such as Kubernetes' JOB_COMPLETION_INDEX is
// I - 1). `--shard auto` (shard_auto.h) takes I/N from those variables.
//
// <job>/shard.json, written by a shard when its run starts (schema
// "evalrun.shard/1"): {"schema", "index", "count", "run_key_sha256",
// "parts": {<part>: {"selected": [every id of the whole selection, in item
// order], "shard_items": <how many of them are this shard's>}}}. It is what
// merge checks completeness against.
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_RUN_SHARD_H_
#define EVALRUN_EVALS_RUN_SHARD_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/status.h"

namespace evalrun {

inline constexpr const char* kShardSchema = "evalrun.shard/1";
inline constexpr const char* kShardFile = "shard.json";

struct ShardSpec {
  int index = 0;  // 1..count
  int count = 0;  // 0: not sharded
  bool sharded() const { return count > 0; }
  std::string Text() const { return std::to_string(index) + "/" + std::to_string(count); }
};

// "I/N" with 1 <= I <= N <= 100000. InvalidInput names `flag` and says what
// is expected (a 0-based index is named as such).
Status ParseShard(const std::string& text, const std::string& flag, ShardSpec* out);

// sha256 of the run key's JSON text (keys sorted, as nlohmann writes them).
std::string RunKeyDigest(const nlohmann::json& run_key);

// The shard (1..count) of item `id` for the run key of `key_digest`.
int ShardOfItem(const std::string& key_digest, const std::string& id, int count);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_SHARD_H_
