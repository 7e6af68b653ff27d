// The writer thread's side of one part's run: each answer is scored once,
// as it arrives (Part::Score), its record written to <part>/samples.jsonl
// (a request that failed after its retries to failed.jsonl), and made
// durable once per batch (a group commit, see RequestPool::Run): an answer
// counts (progress, results) only after the fsync that follows its line.
// The pool's workers only send; this is all the per-answer work.
//
// Thread-safety: OnAnswer and OnBatchEnd are called on the pool's writer
// thread only (never two at once); the rest on the caller's thread before
// or after RequestPool::Run.
#ifndef EVALRUN_EVALS_RUN_ANSWER_WRITER_H_
#define EVALRUN_EVALS_RUN_ANSWER_WRITER_H_

#include <string>
#include <vector>

#include "evals/base/cancel.h"
#include "evals/base/status.h"
#include "evals/run/part.h"
#include "evals/run/progress.h"
#include "evals/run/run_files.h"
#include "evals/run/sample_record.h"
#include "evals/server/types.h"

namespace evalrun {

class AnswerWriter {
 public:
  // `part`, `prepared` and `progress` must outlive the writer. `records`
  // are the part's answers so far (read back on resume); new ones are
  // appended. A write error cancels `cancel` (nothing more is asked when
  // answers cannot be kept).
  AnswerWriter(const Part& part, const PreparedPart& prepared, Progress* progress, CancelToken* cancel,
               std::vector<SampleRecord> records);

  // With several endpoints: their names (base_url) by the pool's index;
  // each record then says which answered (SampleRecord::endpoint). Before
  // the run.
  void SetEndpointNames(std::vector<std::string> names) { endpoint_names_ = std::move(names); }

  // Opens <dir>/samples.jsonl and <dir>/failed.jsonl for appending.
  Status Open(const std::string& dir);

  // The result of prompt i (RequestPool's on_answer).
  void OnAnswer(size_t i, const CallResult& r);
  // After each batch of answers (RequestPool's on_batch_end): one fsync of
  // each file, then the batch counts.
  void OnBatchEnd();

  const Status& error() const { return error_; }  // the first write error
  int failed() const { return failed_; }
  int too_long() const { return too_long_; }       // refused as too long in this run
  std::vector<SampleRecord> TakeRecords() { return std::move(records_); }

 private:
  void Keep(const Status& st);
  void WriteRecord(SampleRecord rec, bool counts_as_answer);

  struct Counted {
    double score;
    bool cut_off, failed;
  };
  const Part& part_;
  const PreparedPart& prepared_;
  Progress* progress_;
  CancelToken* cancel_;
  std::vector<SampleRecord> records_;
  std::vector<std::string> endpoint_names_;
  JsonlAppender samples_, failures_;
  std::vector<Counted> unsynced_;
  Status error_;
  int failed_ = 0, too_long_ = 0;
  int last_endpoint_ = -1;  // of the answer being written
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_ANSWER_WRITER_H_
