#include "evals/run/answer_writer.h"

#include <unistd.h>

#include "evals/run/results.h"
#include "evals/run/sample_codec.h"
#include "evals/run/utc_now.h"

namespace evalrun {

SampleRecord ScoreAnswer(const Part& part, const Item& item, UnscoredAnswer answer) {
  SampleRecord rec = std::move(answer.record);
  rec.id = item.id;
  rec.category = item.category;
  rec.prompt_sha256 = item.prompt_sha256;
  rec.fields = item.fields;
  rec.verdict = part.Score(item, answer.completion);
  // The server refused the prompt as longer than its context: wrong,
  // counted apart, never asked again (it would be refused again).
  if (rec.too_long.refused) MarkTooLong(&rec.verdict);
  return rec;
}

AnswerWriter::AnswerWriter(const Part& part, const PreparedPart& prepared, Progress* progress, CancelToken* cancel,
                           std::vector<SampleRecord> records, ScoringOptions scoring)
    : part_(part), prepared_(prepared), progress_(progress), cancel_(cancel), records_(std::move(records)),
      last_samples_sync_(std::chrono::steady_clock::now()) {
  stage_ = std::make_unique<ScoringStage>(
      scoring,
      [this](size_t i, UnscoredAnswer a) { return ScoreAnswer(part_, prepared_.items[i], std::move(a)); },
      [this](size_t, SampleRecord rec) { Sink(std::move(rec)); }, nullptr);
}

AnswerWriter::~AnswerWriter() { stage_.reset(); }

Status AnswerWriter::Open(const std::string& dir) {
  dir_ = dir;
  EVALRUN_RETURN_IF_ERROR(journal_.Open(dir + "/" + kAnswerJournal));
  EVALRUN_RETURN_IF_ERROR(samples_.Open(dir + "/samples.jsonl"));
  return failures_.Open(dir + "/failed.jsonl");
}

void AnswerWriter::Keep(const Status& st) {
  if (st.ok()) return;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (error_.ok()) error_ = st;
  }
  cancel_->Cancel();
}

Status AnswerWriter::error() const {
  std::lock_guard<std::mutex> l(mu_);
  return error_;
}

int AnswerWriter::scored() const { return stage_->sunk(); }

std::vector<SampleRecord> AnswerWriter::TakeRecords() {
  std::lock_guard<std::mutex> l(mu_);
  return std::move(records_);
}

// On the stage's threads, one at a time: the scored line appended; synced
// every 1,024 lines or 10 s, and at Finish before the journal goes (until
// then the journal holds every answer: a line lost here is scored again on
// resume, so the interval only bounds that work after a machine crash).
// One fsync per answer here would double the journal's.
void AnswerWriter::Sink(SampleRecord rec) {
  Status st = samples_.Write(EncodeSample(rec));
  if (st.ok()) {
    const auto now = std::chrono::steady_clock::now();
    if (++samples_unsynced_ >= 1024 || now - last_samples_sync_ > std::chrono::seconds(10)) {
      st = samples_.Sync();
      samples_unsynced_ = 0;
      last_samples_sync_ = now;
    }
  }
  if (!st.ok()) return Keep(st);
  progress_->OnScored(HeadlineScore(rec.verdict), IsCutOff(rec.verdict));
  std::lock_guard<std::mutex> l(mu_);
  records_.push_back(std::move(rec));
}

UnscoredAnswer AnswerWriter::Unscored(const Item& item, const CallResult& r) const {
  UnscoredAnswer a;
  if (r.status == CallStatus::kTooLong) {
    CallResult empty = r;
    empty.completion = Completion();
    empty.completion.finish_reason = "too_long";
    a.record = NewRecord(item, empty);
    a.record.too_long = {true, r.error, r.too_long_prompt_tokens, r.too_long_n_ctx};
    a.completion = empty.completion;
  } else {
    a.record = NewRecord(item, r);
    a.completion = r.completion;
  }
  a.record.fields.clear();  // the item's, again, when scored
  if (!endpoint_names_.empty() && r.endpoint >= 0 && static_cast<size_t>(r.endpoint) < endpoint_names_.size())
    a.record.endpoint = endpoint_names_[r.endpoint];
  return a;
}

void AnswerWriter::ScoreJournaled(std::vector<std::pair<size_t, UnscoredAnswer>> pending) {
  for (auto& [i, a] : pending) stage_->Submit(i, std::move(a));
}

void AnswerWriter::OnAnswer(size_t i, const CallResult& r) {
  // An answer that arrives after Ctrl-C (it was in flight) is kept.
  if (r.status == CallStatus::kCancelled || !error().ok()) return;
  const Item& item = prepared_.items[i];
  if (r.status == CallStatus::kFailed) {  // not an answer: asked again on resume
    ++failed_;
    nlohmann::json f = {{"id", item.id}, {"error", r.error}, {"attempts", r.attempts},
                        {"http_status", r.http_status}, {"time_utc", UtcNow()}};
    if (!endpoint_names_.empty() && static_cast<size_t>(r.endpoint) < endpoint_names_.size())
      f["endpoint"] = endpoint_names_[r.endpoint];
    nlohmann::json causes = nlohmann::json::array();
    for (const AttemptRecord& t : r.attempt_log) causes.push_back({{"cause", t.cause}, {"status", t.http_status}});
    f["attempt_causes"] = causes;
    Keep(failures_.Write(f));
    ++unsynced_failed_;
    return;
  }
  too_long_ += r.status == CallStatus::kTooLong;
  raw_fallback_ += r.raw_fallback;
  server_parse_error_ += r.server_parse_error;
  UnscoredAnswer a = Unscored(item, r);
  nlohmann::json line = EncodeAnswer(a);
  line["id"] = item.id;
  Status st = journal_.Write(line);
  Keep(st);
  if (st.ok()) unsynced_.emplace_back(i, std::move(a));
}

void AnswerWriter::OnBatchEnd() {
  Keep(journal_.Sync());
  Keep(failures_.Sync());
  if (!error().ok()) {
    unsynced_.clear();
    return;
  }
  for (int k = 0; k < unsynced_failed_; ++k) progress_->OnAnswered(true);
  unsynced_failed_ = 0;
  for (auto& [i, a] : unsynced_) {
    progress_->OnAnswered(false);
    stage_->Submit(i, std::move(a));
  }
  unsynced_.clear();
}

// Stopped by the user, scoring gets a moment to catch up (a quick scorer
// always does); a slow one's answers not yet started stay journaled for
// resume, and the running ones finish.
constexpr double kScoringGraceOnCancelS = 2.0;

void AnswerWriter::Finish(FILE* err) {
  if (cancel_->cancelled()) {
    if (!stage_->WaitFor(kScoringGraceOnCancelS)) {
      stage_->Abandon();
      if (err)
        std::fprintf(err, "\nevalrun: leaving %d answers unscored (journaled: resume scores them)\n",
                     stage_->backlog());
    }
  } else if (stage_->backlog() > 0 && err) {
    std::fprintf(err, "\nevalrun: scoring the last %d answers\n", stage_->backlog());
  }
  stage_->Wait();
  Keep(samples_.Sync());
  // Every journaled answer of this run (and the earlier ones it was given)
  // is scored and durable in samples.jsonl: the journal holds nothing more.
  if (error().ok() && stage_->sunk() == stage_->submitted() && !dir_.empty()) {
    journal_.Close();
    const std::string path = dir_ + "/" + kAnswerJournal;
    if (::unlink(path.c_str()) == 0) SyncDirectory(dir_);
  }
}

}  // namespace evalrun
