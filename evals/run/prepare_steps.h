// The steps of Part::Prepare (evals/run/part.h) that the parts asking a list of
// dataset questions share: finding the data file, picking the questions,
// recording the pick in PreparedPart::info.
//
// Thread-safety: as the calls they make (VerifyDataFile is thread-safe).
#ifndef EVALRUN_EVALS_RUN_PREPARE_STEPS_H_
#define EVALRUN_EVALS_RUN_PREPARE_STEPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "evals/run/part.h"
#include "evals/base/status.h"

namespace evalrun {

// The dataset file: `score --input FILE` (ctx.input_override) when given,
// with its sha256 computed; else <data_dir>/<rel_path>, checked against its
// manifest (and the manifest's sha256). Failures name the file (and, for a
// missing or changed data file, the command that fetches it).
Status FindDataFile(const PartContext& ctx, const std::string& rel_path, std::string* path,
                    std::string* sha256);

// The questions to ask, as indices into `ids` in dataset order: `count`
// (-1: all) picked by StratifiedSample (evals/base/selection.h) over
// `categories` with `seed` (every question under `score`), then the first
// --limit of them.
std::vector<size_t> SelectQuestions(const PartContext& ctx, const std::vector<std::string>& ids,
                                    const std::vector<std::string>& categories, int64_t seed, int64_t count);

// The card keys the question sets share: how many to ask (not in the run
// key: a resumed job may ask more), the answer limit, the selection seed.
CardKey QuestionCountKey(const std::string& name, const std::string& doc);
CardKey MaxTokensKey(const std::string& doc);
CardKey SeedKey(const std::string& doc);

// Sets info.seed, info.max_tokens and info.ids (the ids of out->items, in
// order): what a resumed run checks and a reader needs to ask the same
// questions again.
void RecordSelection(int64_t seed, int max_tokens, PreparedPart* out);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_PREPARE_STEPS_H_
