// One codec per verdict kind: its fields in a samples.jsonl line (the
// format of docs/results-schema.md, "<part>/samples.jsonl").
#include "evals/run/verdict_codec.h"

namespace evalrun::codec_internal {
namespace {

using nlohmann::json;

class ChoiceCodec : public VerdictCodec {
 public:
  const std::vector<std::string>& Keys() const override {
    static const std::vector<std::string> kKeys = {"extracted", "correct", "cut_off", "no_answer"};
    return kKeys;
  }

  void Encode(const Verdict& v, json* line) const override {
    const ChoiceVerdict& c = std::get<ChoiceVerdict>(v);
    (*line)["extracted"] = c.extracted ? json(std::string(1, *c.extracted)) : json();
    (*line)["cut_off"] = c.cut_off;
    (*line)["no_answer"] = c.no_answer;
    (*line)["correct"] = c.correct;
  }

  Status Decode(const LineReader& in, Verdict* out) const override {
    ChoiceVerdict c;
    const json* x = in.Find("extracted");
    if (x && !x->is_null()) {
      if (!x->is_string() || x->get_ref<const std::string&>().size() != 1)
        return in.Expected("extracted", "a letter or null", x);
      c.extracted = x->get_ref<const std::string&>()[0];
    }
    EVALRUN_RETURN_IF_ERROR(in.Bool("correct", &c.correct, true));
    EVALRUN_RETURN_IF_ERROR(in.Bool("cut_off", &c.cut_off));
    EVALRUN_RETURN_IF_ERROR(in.Bool("no_answer", &c.no_answer));
    *out = std::move(c);
    return Status::Ok();
  }
};

json LevelJson(const InstructionLevel& l) {
  return {{"follow_all_instructions", l.all}, {"follow_instruction_list", l.per_instruction}};
}

// strict / loose: {follow_all_instructions, follow_instruction_list}, one
// flag per instruction id.
Status DecodeLevel(const LineReader& in, const std::string& mode, size_t ids, InstructionLevel* out) {
  const json* v = in.Find(mode);
  if (!v || !v->is_object()) return in.Expected(mode, "an object", v);
  auto all = v->find("follow_all_instructions");
  if (all == v->end() || !all->is_boolean())
    return in.Expected(mode + ".follow_all_instructions", "true or false", all == v->end() ? nullptr : &*all);
  out->all = all->get<bool>();
  auto list = v->find("follow_instruction_list");
  if (list == v->end() || !list->is_array() || list->size() != ids)
    return in.Error(mode + ".follow_instruction_list", "expected " + std::to_string(ids) +
                                                           " booleans (one per instruction_id_list entry)");
  out->per_instruction.clear();
  for (size_t j = 0; j < list->size(); ++j) {
    const json& f = (*list)[j];
    if (!f.is_boolean())
      return in.Expected(mode + ".follow_instruction_list[" + std::to_string(j) + "]", "true or false", &f);
    out->per_instruction.push_back(f.get<bool>());
  }
  return Status::Ok();
}

class InstructionCodec : public VerdictCodec {
 public:
  const std::vector<std::string>& Keys() const override {
    static const std::vector<std::string> kKeys = {"instruction_id_list", "strict", "loose", "cut_off", "correct"};
    return kKeys;
  }

  void Encode(const Verdict& v, json* line) const override {
    const InstructionVerdict& i = std::get<InstructionVerdict>(v);
    (*line)["instruction_id_list"] = i.instruction_ids;
    (*line)["strict"] = LevelJson(i.strict);
    (*line)["loose"] = LevelJson(i.loose ? *i.loose : i.strict);
    (*line)["cut_off"] = i.cut_off;
    (*line)["correct"] = i.strict.all;
  }

  Status Decode(const LineReader& in, Verdict* out) const override {
    InstructionVerdict i;
    EVALRUN_RETURN_IF_ERROR(in.Strings("instruction_id_list", &i.instruction_ids, true));
    EVALRUN_RETURN_IF_ERROR(DecodeLevel(in, "strict", i.instruction_ids.size(), &i.strict));
    if (in.Find("loose")) {
      InstructionLevel loose;
      EVALRUN_RETURN_IF_ERROR(DecodeLevel(in, "loose", i.instruction_ids.size(), &loose));
      i.loose = std::move(loose);
    }
    EVALRUN_RETURN_IF_ERROR(in.Bool("cut_off", &i.cut_off));
    *out = std::move(i);
    return Status::Ok();
  }
};

class FractionCodec : public VerdictCodec {
 public:
  const std::vector<std::string>& Keys() const override {
    static const std::vector<std::string> kKeys = {"score", "cut_off", "null"};
    return kKeys;
  }

  void Encode(const Verdict& v, json* line) const override {
    const FractionVerdict& f = std::get<FractionVerdict>(v);
    (*line)["score"] = f.score;
    (*line)["cut_off"] = f.cut_off;
    (*line)["null"] = f.null;
  }

  Status Decode(const LineReader& in, Verdict* out) const override {
    FractionVerdict f;
    const json* s = in.Find("score");
    if (!s || !s->is_number() || s->get<double>() < 0 || s->get<double>() > 1)
      return in.Expected("score", "a number in [0, 1]", s);
    f.score = s->get<double>();
    EVALRUN_RETURN_IF_ERROR(in.Bool("cut_off", &f.cut_off));
    EVALRUN_RETURN_IF_ERROR(in.Bool("null", &f.null));
    *out = f;
    return Status::Ok();
  }
};

// top_logprobs: [{id (null when the server gave none), token, logprob}],
// most likely first.
class LogprobsCodec : public VerdictCodec {
 public:
  const std::vector<std::string>& Keys() const override {
    static const std::vector<std::string> kKeys = {"top_logprobs", "cut_off"};
    return kKeys;
  }

  void Encode(const Verdict& v, json* line) const override {
    const LogprobsVerdict& l = std::get<LogprobsVerdict>(v);
    json top = json::array();
    for (const TokenLogprob& t : l.top)
      top.push_back({{"id", t.id >= 0 ? json(t.id) : json()}, {"token", t.token}, {"logprob", t.logprob}});
    (*line)["top_logprobs"] = std::move(top);
    (*line)["cut_off"] = l.cut_off;
  }

  Status Decode(const LineReader& in, Verdict* out) const override {
    LogprobsVerdict l;
    const json* top = in.Find("top_logprobs");
    if (!top || !top->is_array()) return in.Expected("top_logprobs", "an array of {id, token, logprob}", top);
    for (size_t i = 0; i < top->size(); ++i) {
      const json& e = (*top)[i];
      const std::string field = "top_logprobs[" + std::to_string(i) + "]";
      if (!e.is_object()) return in.Expected(field, "an object {id, token, logprob}", &e);
      TokenLogprob t;
      auto id = e.find("id");
      if (id != e.end() && !id->is_null()) {
        if (!id->is_number_integer() || id->get<int64_t>() < 0)
          return in.Expected(field + ".id", "a token id (an integer >= 0) or null", &*id);
        t.id = id->get<int64_t>();
      }
      auto tok = e.find("token");
      if (tok == e.end() || !tok->is_string())
        return in.Expected(field + ".token", "a string", tok == e.end() ? nullptr : &*tok);
      t.token = tok->get<std::string>();
      auto lp = e.find("logprob");
      if (lp == e.end() || !lp->is_number() || lp->get<double>() > 1e-6)
        return in.Expected(field + ".logprob", "a number <= 0", lp == e.end() ? nullptr : &*lp);
      t.logprob = lp->get<double>();
      if (i > 0 && t.logprob > l.top.back().logprob)
        return in.Error(field + ".logprob", "the candidates are not in descending order of logprob");
      l.top.push_back(std::move(t));
    }
    EVALRUN_RETURN_IF_ERROR(in.Bool("cut_off", &l.cut_off));
    *out = std::move(l);
    return Status::Ok();
  }
};


// code: passed, failure, profile, outcomes (ints), failed_test (null: none),
// message, code_sha256, cut_off, other_profile (null, or {profile, passed,
// failure}: a second profile's verdict where it differs), correct (= passed).
bool IsCodeFailure(const std::string& f) {
  for (const char* k : {"none", "wrong_answer", "time_limit", "runtime_error", "compile_error", "no_code", "cut_off"})
    if (f == k) return true;
  return false;
}

Status DecodeCodeOther(const LineReader& in, CodeVerdict* c) {
  const json* o = in.Find("other_profile");
  if (!o || o->is_null()) return Status::Ok();
  auto p = o->find("profile"), ok = o->find("passed"), f = o->find("failure");
  if (!o->is_object() || p == o->end() || !p->is_string() || ok == o->end() || !ok->is_boolean() ||
      f == o->end() || !f->is_string() || !IsCodeFailure(f->get<std::string>()))
    return in.Expected("other_profile", "null or {profile, passed, failure}", o);
  c->other = CodeOutcome{p->get<std::string>(), ok->get<bool>(), f->get<std::string>()};
  return Status::Ok();
}

class CodeCodec : public VerdictCodec {
 public:
  const std::vector<std::string>& Keys() const override {
    static const std::vector<std::string> kKeys = {"passed",  "failure",     "profile", "outcomes",      "failed_test",
                                                   "message", "code_sha256", "cut_off", "other_profile", "correct"};
    return kKeys;
  }

  void Encode(const Verdict& v, json* line) const override {
    const CodeVerdict& c = std::get<CodeVerdict>(v);
    (*line)["passed"] = c.passed;
    (*line)["failure"] = c.failure;
    (*line)["profile"] = c.profile;
    (*line)["outcomes"] = c.outcomes;
    (*line)["failed_test"] = c.failed_test >= 0 ? json(c.failed_test) : json();
    (*line)["message"] = c.message;
    (*line)["code_sha256"] = c.code_sha256;
    (*line)["cut_off"] = c.cut_off;
    (*line)["other_profile"] =
        c.other ? json{{"profile", c.other->profile}, {"passed", c.other->passed}, {"failure", c.other->failure}}
                : json();
    (*line)["correct"] = c.passed;
  }

  Status Decode(const LineReader& in, Verdict* out) const override {
    CodeVerdict c;
    EVALRUN_RETURN_IF_ERROR(in.Bool("passed", &c.passed, true));
    EVALRUN_RETURN_IF_ERROR(in.String("failure", &c.failure));
    if (!IsCodeFailure(c.failure))
      return in.Error("failure", "expected none, wrong_answer, time_limit, runtime_error, compile_error, no_code or "
                                 "cut_off, got \"" + c.failure + "\"");
    EVALRUN_RETURN_IF_ERROR(in.String("profile", &c.profile));
    const json* o = in.Find("outcomes");
    if (o && !o->is_null()) {
      if (!o->is_array()) return in.Expected("outcomes", "an array of integers", o);
      for (const json& x : *o) {
        if (!x.is_number_integer()) return in.Expected("outcomes", "an array of integers", o);
        c.outcomes.push_back(x.get<int>());
      }
    }
    EVALRUN_RETURN_IF_ERROR(in.IntOrNull("failed_test", &c.failed_test));
    EVALRUN_RETURN_IF_ERROR(in.String("message", &c.message));
    EVALRUN_RETURN_IF_ERROR(in.String("code_sha256", &c.code_sha256));
    EVALRUN_RETURN_IF_ERROR(in.Bool("cut_off", &c.cut_off));
    EVALRUN_RETURN_IF_ERROR(DecodeCodeOther(in, &c));
    *out = std::move(c);
    return Status::Ok();
  }
};

}  // namespace

const VerdictCodec& CodecFor(VerdictKind kind) {
  static const ChoiceCodec kChoice;
  static const InstructionCodec kInstruction;
  static const FractionCodec kFraction;
  static const LogprobsCodec kLogprobs;
  static const CodeCodec kCode;
  switch (kind) {
    case VerdictKind::kChoice: return kChoice;
    case VerdictKind::kInstruction: return kInstruction;
    case VerdictKind::kFraction: return kFraction;
    case VerdictKind::kLogprobs: return kLogprobs;
    case VerdictKind::kCode: return kCode;
  }
  return kChoice;
}

}  // namespace evalrun::codec_internal
