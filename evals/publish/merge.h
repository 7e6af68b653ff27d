// `evalrun merge OUT SHARD_DIR...`: the job folders of the shards of one run
// (`--shard I/N`, evals/run/shard.h) joined into one job folder OUT that
// `report` and `compare` read as a single run's.
//
// The shards are checked first (evals/publish/merge_shards.h: one run key,
// one N, no shard twice, no duplicate or misplaced id, the same selection);
// any problem is exit 1 naming it, and nothing is written. The merge is
// written into a folder beside OUT (OUT.merging-<pid>) and renamed into
// place only when all of it is there: one that fails while writing (a bad
// line in a shard's repeat-2, a full disk) leaves OUT as it was. An incomplete set
// (a shard not given, or items a shard did not answer) is exit 1 naming the
// shard numbers, part and ids, unless `partial`: then the merge is written
// with every part's absent ids in results.json (parts.<p>.merged.absent,
// complete false, merged.partial true) and a warning.
//
// What OUT holds (OUT must not exist, or be an empty folder):
//   <part>/samples.jsonl  every shard's records of the part, in the order of
//                         the whole selection, each line as the codec writes
//   <part>/failed.jsonl   the shards' failed requests, if any
//   results.json          per part, the part's own Aggregate over the merged
//                         records (so every figure is the one a single run
//                         of the same answers gives), with the runner's keys
//                         (planned = the whole selection, complete, too_long
//                         recounted; failed summed, max_in_flight the
//                         largest, slots summed, outages joined with their
//                         shard; info and admission the first shard's) and
//                         "merged" {shards: [{index, n, planned, failed,
//                         admission}], absent_n, absent}; top level: the
//                         first shard's card, model, engine, sampling,
//                         server; finished_utc the latest; noise merged
//                         (evals/publish/merge_load.h); "merged" {count,
//                         run_key_sha256, partial, missing_shards, shards:
//                         [{index, dir, job, hostname, started_utc,
//                         finished_utc, base_url, slots}], merged_utc}
//   run.json              the first shard's, "shard" replaced by "merged"
//                         (as above), slots the sum, started_utc the
//                         earliest, host.hostname every shard's host
//   load.jsonl            every shard's samples, each with its "shard"
//   repeat-2/             when every shard has one (--repeat 2): the shards'
//                         second repeats merged the same way (its own
//                         results.json, job "<job>/repeat-2", repeat_of;
//                         samples, failed, run.json), and each part's
//                         `repeat` in results.json computed again over the
//                         merged repeats (evals/run/repeat_summary.h); in
//                         some shards only: not merged, a note says so
//
// Thread-safety: runs on the caller's thread; shares nothing.
#ifndef EVALRUN_EVALS_PUBLISH_MERGE_H_
#define EVALRUN_EVALS_PUBLISH_MERGE_H_

#include <cstdio>
#include <string>
#include <vector>

namespace evalrun {

struct MergeOptions {
  std::string out_dir;                  // the merged job folder
  std::vector<std::string> shard_dirs;  // the shards' job folders
  bool partial = false;                 // merge an incomplete set, naming what is absent
};

// Returns the exit code: 0 merged, 1 bad input (nothing written).
int MergeShards(const MergeOptions& opts, FILE* out, FILE* err);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_PUBLISH_MERGE_H_
