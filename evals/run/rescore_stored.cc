#include "evals/run/rescore_stored.h"

#include "evals/run/answer_journal.h"
#include "evals/run/sample_codec.h"
#include "evals/run/verdict_kind.h"

namespace evalrun {

int RescoreStored(const Part& part, const PreparedPart& prepared,
                  const std::unordered_map<std::string, int>& index_by_id, const std::string& path,
                  std::vector<SampleRecord>* records, FILE* err) {
  int differ = 0;
  std::string ids;
  for (SampleRecord& rec : *records) {
    auto it = index_by_id.find(rec.id);
    if (it == index_by_id.end() || rec.too_long.refused || VerdictKindOf(KindOf(rec.verdict)).KeepsStoredVerdict())
      continue;
    SampleRecord rescored = rec;
    rescored.verdict = part.Score(prepared.items[static_cast<size_t>(it->second)], CompletionOf(rec));
    if (EncodeSample(rescored) == EncodeSample(rec)) continue;
    if (++differ <= 5) ids += (ids.empty() ? "" : ", ") + rec.id;
    rec.verdict = std::move(rescored.verdict);
  }
  if (differ > 0)
    std::fprintf(err, "evalrun: warning: %s: %d stored verdict%s differ%s from the score of the stored answer "
                 "(id%s %s%s); the re-scored verdict counts (an edit of samples.jsonl does not change a score)\n",
                 path.c_str(), differ, differ == 1 ? "" : "s", differ == 1 ? "s" : "", differ == 1 ? "" : "s",
                 ids.c_str(), differ > 5 ? ", ..." : "");
  return differ;
}

}  // namespace evalrun
