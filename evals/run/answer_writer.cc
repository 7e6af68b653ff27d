#include "evals/run/answer_writer.h"

#include "evals/run/results.h"
#include "evals/run/sample_codec.h"
#include "evals/run/utc_now.h"

namespace evalrun {
AnswerWriter::AnswerWriter(const Part& part, const PreparedPart& prepared, Progress* progress, CancelToken* cancel,
                           std::vector<SampleRecord> records)
    : part_(part), prepared_(prepared), progress_(progress), cancel_(cancel), records_(std::move(records)) {}

Status AnswerWriter::Open(const std::string& dir) {
  EVALRUN_RETURN_IF_ERROR(samples_.Open(dir + "/samples.jsonl"));
  return failures_.Open(dir + "/failed.jsonl");
}

void AnswerWriter::Keep(const Status& st) {
  if (st.ok()) return;
  if (error_.ok()) error_ = st;
  cancel_->Cancel();
}

void AnswerWriter::WriteRecord(SampleRecord rec, bool counts_as_answer) {
  if (!endpoint_names_.empty() && last_endpoint_ >= 0 && static_cast<size_t>(last_endpoint_) < endpoint_names_.size())
    rec.endpoint = endpoint_names_[last_endpoint_];
  Status st = samples_.Write(EncodeSample(rec));
  Keep(st);
  if (!st.ok()) return;
  if (counts_as_answer) unsynced_.push_back({HeadlineScore(rec.verdict), IsCutOff(rec.verdict), false});
  else unsynced_.push_back({0, false, false});
  records_.push_back(std::move(rec));
}

void AnswerWriter::OnAnswer(size_t i, const CallResult& r) {
  const Item& item = prepared_.items[i];
  if (r.status == CallStatus::kCancelled || !error_.ok()) return;
  last_endpoint_ = r.endpoint;
  if (r.status == CallStatus::kTooLong) {
    // The server refused the prompt as longer than its context: wrong,
    // counted apart, never asked again (it would be refused again).
    ++too_long_;
    CallResult empty = r;
    empty.completion = Completion();
    empty.completion.finish_reason = "too_long";
    SampleRecord rec = NewRecord(item, empty);
    rec.verdict = part_.Score(item, empty.completion);
    MarkTooLong(&rec.verdict);
    rec.too_long = {true, r.error, r.too_long_prompt_tokens, r.too_long_n_ctx};
    WriteRecord(std::move(rec), false);
    return;
  }
  if (r.status == CallStatus::kFailed) {
    ++failed_;
    nlohmann::json f = {{"id", item.id}, {"error", r.error}, {"attempts", r.attempts},
                        {"http_status", r.http_status}, {"time_utc", UtcNow()}};
    if (!endpoint_names_.empty() && static_cast<size_t>(r.endpoint) < endpoint_names_.size())
      f["endpoint"] = endpoint_names_[r.endpoint];
    Keep(failures_.Write(f));
    unsynced_.push_back({0, false, true});
    return;
  }
  SampleRecord rec = NewRecord(item, r);
  rec.verdict = part_.Score(item, r.completion);
  WriteRecord(std::move(rec), true);
}

void AnswerWriter::OnBatchEnd() {
  Keep(samples_.Sync());
  Keep(failures_.Sync());
  if (error_.ok())
    for (const Counted& c : unsynced_) progress_->OnAnswer(c.score, c.cut_off, c.failed);
  unsynced_.clear();
}

}  // namespace evalrun
