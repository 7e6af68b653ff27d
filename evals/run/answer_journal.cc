#include "evals/run/answer_journal.h"

#include "evals/run/run_files.h"
#include "evals/run/sample_codec.h"
#include "evals/run/top_logprobs_codec.h"
#include "evals/run/verdict_codec.h"

namespace evalrun {

nlohmann::json EncodeAnswer(const UnscoredAnswer& a) {
  nlohmann::json line = EncodeAnswerFields(a.record);
  if (!a.completion.top_logprobs.empty()) line["top_logprobs"] = EncodeTopLogprobs(a.completion.top_logprobs);
  return line;
}

Completion CompletionOf(const SampleRecord& r) {
  Completion c;
  c.content = r.response;
  c.reasoning = r.reasoning;
  c.finish_reason = r.finish_reason;
  c.unclosed_think = r.unclosed_think;
  c.prompt_tokens = r.prompt_tokens;
  c.completion_tokens = r.completion_tokens;
  c.timings = r.timings;
  return c;
}

Status DecodeAnswer(const nlohmann::json& line, const std::string& where, UnscoredAnswer* out) {
  *out = UnscoredAnswer();
  SampleRecord& r = out->record;
  EVALRUN_RETURN_IF_ERROR(DecodeAnswerFields(line, where, &r));
  Completion& c = out->completion;
  c = CompletionOf(r);
  if (line.contains("top_logprobs"))
    EVALRUN_RETURN_IF_ERROR(DecodeTopLogprobs(codec_internal::LineReader(line, where), &c.top_logprobs));
  return Status::Ok();
}

Status LoadAnswerJournal(const std::string& dir, std::vector<UnscoredAnswer>* out, bool* dropped_torn) {
  const std::string path = dir + "/" + kAnswerJournal;
  SampleFileContents file;
  EVALRUN_RETURN_IF_ERROR(LoadSampleFile(path, &file));
  *dropped_torn = file.dropped_torn_tail;
  out->clear();
  out->reserve(file.lines.size());
  for (size_t i = 0; i < file.lines.size(); ++i) {
    UnscoredAnswer a;
    EVALRUN_RETURN_IF_ERROR(DecodeAnswer(file.lines[i], path + ":" + std::to_string(file.line_numbers[i]), &a));
    out->push_back(std::move(a));
  }
  return Status::Ok();
}

}  // namespace evalrun
