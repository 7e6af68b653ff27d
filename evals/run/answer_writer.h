// The writer's side of one part's run. On the pool's writer thread, each
// answer is appended to the answer journal (<part>/answers.jsonl,
// evals/run/answer_journal.h) and made durable once per batch (a group
// commit, see RequestPool::Run): an answer counts (progress) only after the
// fsync that follows its line. Only then is it handed to the scoring stage
// (evals/run/scoring_stage.h), which scores it (Part::Score) on threads of
// its own, as slowly as the scorer needs, and appends the scored record to
// samples.jsonl; the pool never waits for a scorer. A request that failed
// after its retries goes to failed.jsonl.
//
// Thread-safety: OnAnswer and OnBatchEnd are called on the pool's writer
// thread only (never two at once); the sink runs on the scoring stage's
// threads, one at a time; the rest on the caller's thread before or after
// RequestPool::Run (Finish after the pool has returned).
#ifndef EVALRUN_EVALS_RUN_ANSWER_WRITER_H_
#define EVALRUN_EVALS_RUN_ANSWER_WRITER_H_

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "evals/base/cancel.h"
#include "evals/base/status.h"
#include "evals/run/answer_journal.h"
#include "evals/run/part.h"
#include "evals/run/progress.h"
#include "evals/run/run_files.h"
#include "evals/run/sample_record.h"
#include "evals/run/scoring_stage.h"
#include "evals/server/types.h"

namespace evalrun {

// The scored record of `answer` to `item`: the item's fields, the verdict
// of `part` (a prompt the server refused as too long: wrong, counted apart).
// What a live run, resume and `score` all do.
SampleRecord ScoreAnswer(const Part& part, const Item& item, UnscoredAnswer answer);

class AnswerWriter {
 public:
  // `part`, `prepared` and `progress` must outlive the writer. `records`
  // are the part's scored answers so far (read back on resume); new ones
  // are appended. A write error cancels `cancel` (nothing more is asked
  // when answers cannot be kept).
  AnswerWriter(const Part& part, const PreparedPart& prepared, Progress* progress, CancelToken* cancel,
               std::vector<SampleRecord> records, ScoringOptions scoring);
  ~AnswerWriter();

  // With several endpoints: their names (base_url) by the pool's index;
  // each record then says which answered (SampleRecord::endpoint). Before
  // the run.
  void SetEndpointNames(std::vector<std::string> names) { endpoint_names_ = std::move(names); }

  // Opens <dir>/answers.jsonl, samples.jsonl and failed.jsonl for appending.
  Status Open(const std::string& dir);

  // Answers an earlier run journaled but did not score (by item index):
  // handed to the scoring stage at once. After Open, before the pool.
  void ScoreJournaled(std::vector<std::pair<size_t, UnscoredAnswer>> pending);

  // The result of prompt i (RequestPool's on_answer).
  void OnAnswer(size_t i, const CallResult& r);
  // After each batch of answers (RequestPool's on_batch_end): one fsync of
  // each file, then the batch counts and goes to the scoring stage.
  void OnBatchEnd();

  // After the pool: waits for the scoring stage (printing on `err` what it
  // still has to score when that is more than a moment), syncs
  // samples.jsonl, and removes the journal when every answer in it is
  // scored.
  void Finish(FILE* err);

  Status error() const;  // the first write error
  int failed() const { return failed_; }
  int too_long() const { return too_long_; }       // refused as too long in this run
  // Answers the server's output parser refused in this run: recovered as
  // raw text, or scored empty and wrong.
  int raw_fallback() const { return raw_fallback_; }
  int server_parse_error() const { return server_parse_error_; }
  int scored() const;                              // by the stage, in this run
  std::vector<SampleRecord> TakeRecords();

 private:
  void Keep(const Status& st);
  void Sink(SampleRecord rec);
  UnscoredAnswer Unscored(const Item& item, const CallResult& r) const;

  const Part& part_;
  const PreparedPart& prepared_;
  Progress* progress_;
  CancelToken* cancel_;
  std::string dir_;
  std::vector<std::string> endpoint_names_;
  JsonlAppender journal_, samples_, failures_;
  std::vector<std::pair<size_t, UnscoredAnswer>> unsynced_;  // journaled, not yet fsynced (writer thread)
  int unsynced_failed_ = 0;
  int failed_ = 0, too_long_ = 0;                            // writer thread
  int raw_fallback_ = 0, server_parse_error_ = 0;            // writer thread
  mutable std::mutex mu_;                                    // error_, records_, sink state
  Status error_;
  std::vector<SampleRecord> records_;
  int samples_unsynced_ = 0;
  std::chrono::steady_clock::time_point last_samples_sync_;
  std::unique_ptr<ScoringStage> stage_;                      // last: destroyed (waited for) first
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_ANSWER_WRITER_H_
