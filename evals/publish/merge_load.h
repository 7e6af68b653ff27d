// The machine-load summaries of a run's shards (results.json "load", "noise"
// in runs written before 2026-12,
// evals/watch/busy_sampler.h Summary()) made into one, for `evalrun merge`.
//
// Each shard sampled its own machine while it ran, so the merged summary is
// the union of the samples: counts add up (samples, samples_above_threshold,
// above_by_comm per comm, sampler_cpu_s, paused_s_total, GPU reads and
// read failures), maxima are the largest of any shard (max_foreign_cpu_pct
// with its max_foreign process and the shard it was on, the total foreign
// CPU, self_cpu_pct_max, GPU util_pct_max and mem_used_mib_max; the minimum
// for mem_used_mib_min), engine_cpu_pct_mean is the mean over the shards
// weighted by their sample counts, warnings are each shard's prefixed with
// "shard I: ", pauses keep their shard; interval_s and threshold_pct are the
// first shard's (all shards run the same card). "gpu" is the first shard's
// GPU identity with the merged memory and utilisation (the shards may have
// used different GPUs: each one is in "shards"). `text` is one line for the
// whole and "shards" lists every shard's own summary with its index, so
// nothing is lost.
//
// Thread-safety: a pure function.
#ifndef EVALRUN_EVALS_PUBLISH_MERGE_LOAD_H_
#define EVALRUN_EVALS_PUBLISH_MERGE_LOAD_H_

#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace evalrun {

// `shards`: (shard index, its results.json load summary), in index order; a
// summary that is not an object is listed and otherwise left out.
nlohmann::json MergeLoadSummaries(const std::vector<std::pair<int, nlohmann::json>>& shards);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_PUBLISH_MERGE_LOAD_H_
