#include "evals/run/top_logprobs_codec.h"

#include <cstdint>
#include <string>

namespace evalrun {
namespace {

using nlohmann::json;

// One candidate of top_logprobs[i] into *out.
Status DecodeCandidate(const codec_internal::LineReader& in, const json& e, const std::string& field,
                       TokenLogprob* out) {
  if (!e.is_object()) return in.Expected(field, "an object {id, token, logprob}", &e);
  auto id = e.find("id");
  if (id != e.end() && !id->is_null()) {
    if (!id->is_number_integer() || id->get<int64_t>() < 0)
      return in.Expected(field + ".id", "a token id (an integer >= 0) or null", &*id);
    out->id = id->get<int64_t>();
  }
  auto tok = e.find("token");
  if (tok == e.end() || !tok->is_string())
    return in.Expected(field + ".token", "a string", tok == e.end() ? nullptr : &*tok);
  out->token = tok->get<std::string>();
  auto lp = e.find("logprob");
  if (lp == e.end() || !lp->is_number() || lp->get<double>() > 1e-6)
    return in.Expected(field + ".logprob", "a number <= 0", lp == e.end() ? nullptr : &*lp);
  out->logprob = lp->get<double>();
  return Status::Ok();
}

}  // namespace

json EncodeTopLogprobs(const std::vector<TokenLogprob>& top) {
  json out = json::array();
  for (const TokenLogprob& t : top)
    out.push_back({{"id", t.id >= 0 ? json(t.id) : json()}, {"token", t.token}, {"logprob", t.logprob}});
  return out;
}

Status DecodeTopLogprobs(const codec_internal::LineReader& in, std::vector<TokenLogprob>* out) {
  const json* top = in.Find("top_logprobs");
  if (!top || !top->is_array()) return in.Expected("top_logprobs", "an array of {id, token, logprob}", top);
  std::vector<TokenLogprob> v;
  for (size_t i = 0; i < top->size(); ++i) {
    const std::string field = "top_logprobs[" + std::to_string(i) + "]";
    TokenLogprob t;
    EVALRUN_RETURN_IF_ERROR(DecodeCandidate(in, (*top)[i], field, &t));
    if (i > 0 && t.logprob > v.back().logprob)
      return in.Error(field + ".logprob", "the candidates are not in descending order of logprob");
    v.push_back(std::move(t));
  }
  *out = std::move(v);
  return Status::Ok();
}

}  // namespace evalrun
