#include "evals/publish/results_model.h"

#include "evals/base/json_fields.h"

namespace evalrun {
namespace {

using nlohmann::json;

std::optional<double> Number(const json& j, std::initializer_list<const char*> path) {
  const json& v = JsonAt(j, path);
  if (!v.is_number()) return std::nullopt;
  return v.get<double>();
}

std::string Text(const json& j, std::initializer_list<const char*> path) { return JsonText(JsonAt(j, path)); }

PartRepeat ReadRepeat(const json& rep) {
  PartRepeat r;
  r.pairs = Number(rep, {"pairs"});
  r.flips = Number(rep, {"flips"});
  r.flip_rate = Number(rep, {"flip_rate"});
  r.mde = Number(rep, {"mde"});
  r.mde_below = Number(rep, {"mde_below"});
  r.kld_mean = Number(rep, {"kld", "mean"});
  r.kld_max = Number(rep, {"kld", "max"});
  r.text = Text(rep, {"text"});
  r.formula = Text(rep, {"formula"});
  return r;
}

}  // namespace

PartResults ReadPartResults(const json& p) {
  PartResults r;
  r.raw = p.is_object() ? p : json::object();
  const json& kind = JsonAt(p, {"kind"});
  if (kind.is_string()) r.kind = kind.get<std::string>();
  r.score = Number(p, {"score"});
  r.stderr_value = Number(p, {"stderr"});
  r.n = Number(p, {"n"});
  r.cut_off = Number(p, {"cut_off"});
  r.no_answer = Number(p, {"no_answer"});
  r.failed = Number(p, {"failed"});
  r.planned = Number(p, {"planned"});
  r.raw_fallback = Number(p, {"raw_fallback"});
  r.server_parse_error = Number(p, {"server_parse_error"});
  if (const json& c = JsonAt(p, {"complete"}); c.is_boolean()) r.complete = c.get<bool>();
  r.speeds.prompt_tps = Number(p, {"speeds", "prompt_tokens_per_s"});
  r.speeds.decode_tps = Number(p, {"speeds", "decode_tokens_per_s"});
  r.speeds.prompt_tokens = Number(p, {"speeds", "prompt_tokens"});
  r.speeds.completion_tokens = Number(p, {"speeds", "completion_tokens"});
  if (const json& rep = JsonAt(p, {"repeat"}); rep.is_object()) r.repeat = ReadRepeat(rep);
  return r;
}

RunTitle ReadRunTitle(const json& res) {
  RunTitle t;
  t.job = Text(res, {"job"});
  t.card_name = Text(res, {"card", "name"});
  t.card_path = Text(res, {"card", "path"});
  t.card_sha256 = Text(res, {"card", "sha256"});
  t.finished_utc = Text(res, {"finished_utc"});
  return t;
}

}  // namespace evalrun
