// The shards of one run read back and checked for `evalrun merge`
// (evals/publish/merge.h): what each shard folder holds (results.json,
// run.json and shard.json, evals/run/shard.h), that they belong together,
// and every part's records joined in the order of the whole selection.
//
// Rules, each problem named (shard numbers, folders, part, ids):
//   - every folder is a shard: results.json, run.json and a shard.json of
//     schema evalrun.shard/1 (a run made without --shard is not one);
//   - one N for all, one run key for all (run.json run_key; the difference
//     is shown as for a refused resume), and each shard's run_key_sha256 is
//     that key's;
//   - no shard number given twice;
//   - the same parts and, per part, the same whole selection (the ids in
//     item order) in every shard;
//   - no id answered by two shards ("duplicate"), and every record in the
//     shard its id hashes to (a line copied from another shard's file);
//   - a record whose id is not in the selection is left out (as the runner
//     leaves it out of its results), of two lines for one id in one shard
//     the last counts (as the runner);
//   - complete: every id of every part's selection answered; what is not
//     is listed as absent, with the shards not given (ShardSet::missing).
// All problems are collected, the first few of each kind named.
//
// Thread-safety: plain functions and values.
#ifndef EVALRUN_EVALS_PUBLISH_MERGE_SHARDS_H_
#define EVALRUN_EVALS_PUBLISH_MERGE_SHARDS_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/status.h"
#include "evals/publish/run_folder.h"
#include "evals/run/sample_record.h"

namespace evalrun {

struct ShardFolder {
  RunFolder run;          // results.json and run.json
  nlohmann::json shard;   // shard.json
  int index = 0;          // 1..count
};

struct MergedPart {
  FolderPart folder;                  // name, kind, definition
  std::vector<std::string> selected;  // the whole selection, in item order
  std::vector<SampleRecord> records;  // answered, in selection order
  std::vector<std::string> absent;    // selected ids no shard answered, in selection order
  std::vector<int> absent_shards;     // the shards those ids belong to, ascending
  int failed = 0;                     // the shards' failed requests, summed
};

struct ShardSet {
  int count = 0;                    // N
  std::string run_key_sha256;
  nlohmann::json run_key;
  std::vector<ShardFolder> shards;  // ascending index
  std::vector<int> missing;         // shard numbers not given, ascending
  std::vector<MergedPart> parts;    // in run order
  std::vector<std::string> notes;   // records left out, torn lines skipped
  bool complete() const;            // nothing missing, nothing absent
};

// Reads and checks `dirs` (the rules above). InvalidInput lists every
// problem found; an incomplete set is not an error here (see complete()).
Status LoadShardSet(const std::vector<std::string>& dirs, ShardSet* out);

// "shards 3, 5 of 8 not given; <name>: 14 of 40 items absent (of shards 3,
// 5): 70, 1203, ... ; <name>: ..." for an incomplete set.
std::string DescribeIncomplete(const ShardSet& set);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_PUBLISH_MERGE_SHARDS_H_
