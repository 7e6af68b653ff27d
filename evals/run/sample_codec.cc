#include "evals/run/sample_codec.h"

#include <algorithm>

#include "evals/base/json_fields.h"
#include "evals/run/verdict_codec.h"

namespace evalrun {
namespace {

using codec_internal::CodecFor;
using codec_internal::LineReader;
using nlohmann::json;

// The keys every line may have besides the verdict's and the item fields.
const std::vector<std::string>& CommonKeys() {
  static const std::vector<std::string> kKeys = {
      "id", "category", "prompt_sha256", "max_tokens", "response", "reasoning", "unclosed_think",
      "finish_reason", "prompt_tokens", "completion_tokens", "latency_ms", "attempts", "timings",
      "too_long", "error", "server_prompt_tokens", "server_n_ctx", "endpoint", "attempt_causes",
      "raw_fallback", "server_parse_error"};
  return kKeys;
}

json FieldJson(const FieldValue& v) {
  return std::visit(
      [](const auto& x) -> json {
        if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::monostate>) return json();
        else return json(x);
      },
      v);
}

// An item field's JSON as a FieldValue; false for a value no part writes.
bool FieldOf(const json& j, FieldValue* out) {
  if (j.is_null()) *out = std::monostate();
  else if (j.is_boolean()) *out = j.get<bool>();
  else if (j.is_number_integer()) *out = j.get<int64_t>();
  else if (j.is_number()) *out = j.get<double>();
  else if (j.is_string()) *out = j.get<std::string>();
  else if (j.is_array() && std::all_of(j.begin(), j.end(), [](const json& e) { return e.is_string(); }))
    *out = j.get<std::vector<std::string>>();
  else if (j.is_array() && std::all_of(j.begin(), j.end(), [](const json& e) { return e.is_number_integer(); }))
    *out = j.get<std::vector<int64_t>>();
  else return false;
  return true;
}

json TimingsJson(const ServerTimings& t) {
  if (!t.present) return nullptr;
  return {{"prompt_n", t.prompt_n},         {"prompt_ms", t.prompt_ms},
          {"prompt_per_second", t.prompt_per_second}, {"predicted_n", t.predicted_n},
          {"predicted_ms", t.predicted_ms}, {"predicted_per_second", t.predicted_per_second},
          {"cache_n", t.cache_n}};
}

Status DecodeTimings(const LineReader& in, ServerTimings* t) {
  const json* v = in.Find("timings");
  if (!v || v->is_null()) return Status::Ok();
  if (!v->is_object()) return in.Expected("timings", "an object or null", v);
  t->present = true;
  double* fields[] = {&t->prompt_n, &t->prompt_ms, &t->prompt_per_second, &t->predicted_n,
                      &t->predicted_ms, &t->predicted_per_second, &t->cache_n};
  const char* names[] = {"prompt_n", "prompt_ms", "prompt_per_second", "predicted_n",
                         "predicted_ms", "predicted_per_second", "cache_n"};
  for (size_t i = 0; i < 7; ++i) {
    auto it = v->find(names[i]);
    if (it == v->end() || it->is_null()) continue;
    if (!it->is_number()) return in.Expected(std::string("timings.") + names[i], "a number", &*it);
    *fields[i] = it->get<double>();
  }
  return Status::Ok();
}

json AttemptCausesJson(const std::vector<AttemptRecord>& log) {
  json a = json::array();
  for (const AttemptRecord& t : log) a.push_back({{"cause", t.cause}, {"status", t.http_status}});
  return a;
}

// attempt_causes: [{"cause": "http_503", "status": 503}, ...] or absent.
Status DecodeAttemptCauses(const LineReader& in, std::vector<AttemptRecord>* log) {
  const json* v = in.Find("attempt_causes");
  if (!v || v->is_null()) return Status::Ok();
  if (!v->is_array()) return in.Expected("attempt_causes", "an array", v);
  for (const json& e : *v) {
    auto c = e.is_object() ? e.find("cause") : e.end();
    auto s = e.is_object() ? e.find("status") : e.end();
    if (!e.is_object() || c == e.end() || !c->is_string() || s == e.end() || !s->is_number_integer())
      return in.Expected("attempt_causes", "objects {\"cause\": text, \"status\": integer}", &e);
    log->push_back({c->get<std::string>(), s->get<int>()});
  }
  return Status::Ok();
}

}  // namespace

bool AnyFailedAttempt(const std::vector<AttemptRecord>& log) {
  for (const AttemptRecord& t : log)
    if (t.cause != "ok") return true;
  return false;
}

namespace {

Status DecodeCommon(const json& line, const LineReader& in, SampleRecord* r) {
  const json* id = in.Find("id");
  if (id && id->is_string()) r->id = id->get<std::string>();
  else if (id && id->is_number()) r->id = id->dump();
  else return in.Expected("id", "a string", id);
  EVALRUN_RETURN_IF_ERROR(in.String("category", &r->category));
  EVALRUN_RETURN_IF_ERROR(in.String("prompt_sha256", &r->prompt_sha256));
  int max_tokens = -1;
  EVALRUN_RETURN_IF_ERROR(in.IntOrNull("max_tokens", &max_tokens));
  if (in.Find("max_tokens") && max_tokens >= 0) r->max_tokens = max_tokens;
  EVALRUN_RETURN_IF_ERROR(in.String("response", &r->response));
  EVALRUN_RETURN_IF_ERROR(in.String("reasoning", &r->reasoning));
  EVALRUN_RETURN_IF_ERROR(in.Bool("unclosed_think", &r->unclosed_think));
  EVALRUN_RETURN_IF_ERROR(in.String("finish_reason", &r->finish_reason));
  EVALRUN_RETURN_IF_ERROR(in.IntOrNull("prompt_tokens", &r->prompt_tokens));
  EVALRUN_RETURN_IF_ERROR(in.IntOrNull("completion_tokens", &r->completion_tokens));
  if (const json* l = in.Find("latency_ms"); l && !l->is_null()) {
    if (!l->is_number()) return in.Expected("latency_ms", "a number", l);
    r->latency_ms = l->get<double>();
  }
  int attempts = -1;
  EVALRUN_RETURN_IF_ERROR(in.IntOrNull("attempts", &attempts));
  if (attempts >= 0) r->attempts = attempts;
  EVALRUN_RETURN_IF_ERROR(in.String("endpoint", &r->endpoint));
  EVALRUN_RETURN_IF_ERROR(DecodeAttemptCauses(in, &r->attempt_log));
  EVALRUN_RETURN_IF_ERROR(in.Bool("raw_fallback", &r->raw_fallback));
  EVALRUN_RETURN_IF_ERROR(in.Bool("server_parse_error", &r->server_parse_error));
  EVALRUN_RETURN_IF_ERROR(DecodeTimings(in, &r->timings));
  EVALRUN_RETURN_IF_ERROR(in.Bool("too_long", &r->too_long.refused));
  EVALRUN_RETURN_IF_ERROR(in.String("error", &r->too_long.error));
  EVALRUN_RETURN_IF_ERROR(in.IntOrNull("server_prompt_tokens", &r->too_long.server_prompt_tokens));
  EVALRUN_RETURN_IF_ERROR(in.IntOrNull("server_n_ctx", &r->too_long.server_n_ctx));
  (void)line;
  return Status::Ok();
}

}  // namespace

namespace codec_internal {

const json* LineReader::Find(const std::string& key) const {
  auto it = line_.find(key);
  return it == line_.end() ? nullptr : &*it;
}

Status LineReader::Error(const std::string& field, const std::string& what) const {
  return Status::InvalidInput(where_ + ": " + field + ": " + what);
}

Status LineReader::Expected(const std::string& field, const std::string& what, const json* got) const {
  return Error(field, "expected " + what + (got ? ", got " + DescribeJsonValue(*got) : std::string()));
}

Status LineReader::String(const std::string& key, std::string* out, bool required) const {
  const json* v = Find(key);
  if (!v && !required) return Status::Ok();
  if (!v || !v->is_string()) return Expected(key, "a string", v);
  *out = v->get<std::string>();
  return Status::Ok();
}

Status LineReader::Bool(const std::string& key, bool* out, bool required) const {
  const json* v = Find(key);
  if (!v && !required) return Status::Ok();
  if (!v || !v->is_boolean()) return Expected(key, "true or false", v);
  *out = v->get<bool>();
  return Status::Ok();
}

Status LineReader::IntOrNull(const std::string& key, int* out) const {
  const json* v = Find(key);
  if (!v) return Status::Ok();
  if (v->is_null()) {
    *out = -1;
    return Status::Ok();
  }
  if (!v->is_number_integer() || v->get<int64_t>() < INT32_MIN || v->get<int64_t>() > INT32_MAX)
    return Expected(key, "an integer or null", v);
  *out = v->get<int>();
  return Status::Ok();
}

Status LineReader::Strings(const std::string& key, std::vector<std::string>* out, bool required) const {
  const json* v = Find(key);
  if (!v && !required) return Status::Ok();
  if (!v || !v->is_array() || !std::all_of(v->begin(), v->end(), [](const json& e) { return e.is_string(); }))
    return Expected(key, "an array of strings", v);
  *out = v->get<std::vector<std::string>>();
  return Status::Ok();
}

}  // namespace codec_internal

json EncodeAnswerFields(const SampleRecord& r) {
  json s;
  s["id"] = r.id;
  s["category"] = r.category;
  s["prompt_sha256"] = r.prompt_sha256;
  if (r.max_tokens) s["max_tokens"] = *r.max_tokens;
  s["response"] = r.response;
  s["reasoning"] = r.reasoning;
  if (r.unclosed_think) s["unclosed_think"] = true;
  s["finish_reason"] = r.finish_reason;
  s["prompt_tokens"] = r.prompt_tokens >= 0 ? json(r.prompt_tokens) : json();
  s["completion_tokens"] = r.completion_tokens >= 0 ? json(r.completion_tokens) : json();
  if (r.latency_ms) s["latency_ms"] = *r.latency_ms;
  if (r.attempts) s["attempts"] = *r.attempts;
  if (!r.endpoint.empty()) s["endpoint"] = r.endpoint;
  if (AnyFailedAttempt(r.attempt_log)) s["attempt_causes"] = AttemptCausesJson(r.attempt_log);
  if (r.raw_fallback) s["raw_fallback"] = true;
  if (r.server_parse_error) s["server_parse_error"] = true;
  s["timings"] = TimingsJson(r.timings);
  if (r.too_long.refused) {
    s["too_long"] = true;
    s["error"] = r.too_long.error;
    if (r.too_long.server_prompt_tokens >= 0) s["server_prompt_tokens"] = r.too_long.server_prompt_tokens;
    if (r.too_long.server_n_ctx >= 0) s["server_n_ctx"] = r.too_long.server_n_ctx;
  }
  return s;
}

json EncodeSample(const SampleRecord& r) {
  json s = EncodeAnswerFields(r);
  for (const ItemField& f : r.fields) s[f.name] = FieldJson(f.value);
  CodecFor(KindOf(r.verdict)).Encode(r.verdict, &s);
  return s;
}

Status DecodeAnswerFields(const json& line, const std::string& where, SampleRecord* out) {
  *out = SampleRecord();
  if (!line.is_object()) return Status::InvalidInput(where + ": expected a JSON object");
  return DecodeCommon(line, LineReader(line, where), out);
}

Status DecodeSample(VerdictKind kind, const json& line, const std::string& where, SampleRecord* out) {
  *out = SampleRecord();
  if (!line.is_object()) return Status::InvalidInput(where + ": expected a JSON object (a sample line)");
  const LineReader in(line, where);
  EVALRUN_RETURN_IF_ERROR(DecodeCommon(line, in, out));
  const codec_internal::VerdictCodec& codec = CodecFor(kind);
  EVALRUN_RETURN_IF_ERROR(codec.Decode(in, &out->verdict));
  const std::vector<std::string>& common = CommonKeys();
  const std::vector<std::string>& own = codec.Keys();
  for (auto it = line.begin(); it != line.end(); ++it) {
    if (std::find(common.begin(), common.end(), it.key()) != common.end()) continue;
    if (std::find(own.begin(), own.end(), it.key()) != own.end()) continue;
    ItemField f{it.key(), {}};
    if (!FieldOf(*it, &f.value))
      return in.Expected(it.key(), "a text, number, flag, null or a list of texts or integers (an item field)", &*it);
    out->fields.push_back(std::move(f));
  }
  return Status::Ok();
}

}  // namespace evalrun
