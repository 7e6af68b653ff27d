#include "evals/tasks/task_file.h"

#include <algorithm>
#include <filesystem>

#include "evals/base/files.h"
#include "evals/base/json_fields.h"
#include "evals/base/near_miss.h"

namespace evalrun {
namespace {

using nlohmann::json;

const std::vector<std::string> kKinds = {"choice", "number", "exact", "regex"};

std::string Join(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

Status ParseSource(JsonFields& f, const std::string& dir, TaskSource* s) {
  EVALRUN_RETURN_IF_ERROR(f.String("file", &s->shown));
  EVALRUN_RETURN_IF_ERROR(f.String("dataset", &s->dataset));
  EVALRUN_RETURN_IF_ERROR(f.String("sha256", &s->sha256));
  if (s->shown.empty() == s->dataset.empty())
    return f.Error("file", "give exactly one of \"file\" (beside the task file) and \"dataset\" (a manifest's "
                           "file in the data dir)");
  if (!s->shown.empty()) {
    const std::filesystem::path p(s->shown);
    s->file = p.is_absolute() ? s->shown : (std::filesystem::path(dir) / p).string();
  } else {
    s->shown = s->dataset;
  }
  return Status::Ok();
}

// A regex chain: a list of patterns, each a string or {pattern, group}.
Status ParseRegexes(const json& list, const std::string& src, const std::string& path, std::vector<RegexStep>* out) {
  if (!list.is_array() || list.empty())
    return Status::InvalidInput(src + ": " + path + ": expected a non-empty list of patterns, got " +
                                DescribeJsonValue(list));
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string at = path + "[" + std::to_string(i) + "]";
    std::string pattern;
    int group = 0;
    if (list[i].is_string()) {
      pattern = list[i].get<std::string>();
    } else if (list[i].is_object()) {
      JsonFields g(list[i], src, at);
      EVALRUN_RETURN_IF_ERROR(g.String("pattern", &pattern, true));
      EVALRUN_RETURN_IF_ERROR(g.Int("group", &group));
      EVALRUN_RETURN_IF_ERROR(g.Finish());
    } else {
      return Status::InvalidInput(src + ": " + at + ": expected a pattern or {pattern, group}, got " +
                                  DescribeJsonValue(list[i]));
    }
    RegexStep step;
    std::string error;
    if (!CompileRegexStep(pattern, group, &step, &error))
      return Status::InvalidInput(src + ": " + at + ": the regex \"" + pattern + "\" does not compile: " + error);
    out->push_back(std::move(step));
  }
  return Status::Ok();
}

// One extraction profile from the keys of `f` (chain, regex, from, marker).
Status ParseExtract(JsonFields& f, const json& obj, const std::string& src, const std::string& path, AnswerKind kind,
                    TaskExtract* e) {
  EVALRUN_RETURN_IF_ERROR(f.String("chain", &e->chain));
  if (!e->chain.empty() && kind != AnswerKind::kChoice)
    return f.Error("chain", "a named chain reads a choice letter; this answer is not a choice");
  if (!e->chain.empty() && !FindLetterChain(e->chain)) {
    const auto names = LetterChainNames();
    std::string known;
    for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
    return f.Error("chain", "unknown chain \"" + e->chain + "\"" + DidYouMean(e->chain, names) + "; known: " + known);
  }
  if (f.Has("regex"))
    EVALRUN_RETURN_IF_ERROR(ParseRegexes(obj["regex"], src, Join(path, "regex"), &e->regexes));
  f.Allow({"regex"});
  std::string from = "last";
  EVALRUN_RETURN_IF_ERROR(f.Enum("from", {"last", "marker", "boxed"}, &from));
  e->number_from = from == "marker" ? NumberFrom::kMarker : from == "boxed" ? NumberFrom::kBoxed : NumberFrom::kLast;
  EVALRUN_RETURN_IF_ERROR(f.String("marker", &e->marker));
  if (e->number_from == NumberFrom::kMarker && e->marker.empty())
    return f.Error("marker", "\"from\": \"marker\" needs the marker (\"####\")");
  if (kind == AnswerKind::kChoice && e->chain.empty() && e->regexes.empty())
    return f.Error("chain", "a choice answer needs a named chain (\"first-letter\") or a regex chain");
  if (kind == AnswerKind::kRegex && e->regexes.empty()) return f.Error("regex", "a regex answer needs its chain");
  return Status::Ok();
}

Status ParsePrompt(const json& obj, const std::string& src, const std::string& path, TaskPrompt* p) {
  EVALRUN_RETURN_IF_ERROR(JsonFields::RequireObject(obj, src, path));
  JsonFields f(obj, src, path);
  EVALRUN_RETURN_IF_ERROR(f.String("system", &p->system));
  EVALRUN_RETURN_IF_ERROR(f.String("user", &p->user, true));
  EVALRUN_RETURN_IF_ERROR(f.IntIn("max_tokens", 1, 1 << 20, &p->max_tokens));
  EVALRUN_RETURN_IF_ERROR(f.StringList("stop", &p->stop));
  for (const std::string& s : p->stop)
    if (s.empty()) return f.Error("stop", "an empty stop string");
  EVALRUN_RETURN_IF_ERROR(f.Finish());
  for (const auto& [key, text] : {std::pair<std::string, const std::string*>{"system", &p->system}, {"user", &p->user}}) {
    std::vector<std::string> unused;
    EVALRUN_RETURN_IF_ERROR(TemplateFields(*text, src + ": " + Join(path, key), &unused));
  }
  return Status::Ok();
}

Status ParsePrompts(JsonFields& f, const json& doc, const std::string& src, TaskSpec* t) {
  if (f.Has("prompt") == f.Has("prompts"))
    return f.Error("prompt", "give exactly one of \"prompt\" (one profile) and \"prompts\" (named profiles)");
  f.Allow({"prompt", "prompts"});
  if (f.Has("prompt")) {
    t->default_prompt = "default";
    return ParsePrompt(doc["prompt"], src, "prompt", &t->prompts["default"]);
  }
  const json& ps = doc["prompts"];
  if (!ps.is_object() || ps.empty()) return f.Error("prompts", "expected an object of named prompts");
  for (auto it = ps.begin(); it != ps.end(); ++it)
    EVALRUN_RETURN_IF_ERROR(ParsePrompt(*it, src, "prompts." + it.key(), &t->prompts[it.key()]));
  t->default_prompt = ps.begin().key();
  EVALRUN_RETURN_IF_ERROR(f.String("default_prompt", &t->default_prompt));
  if (!t->prompts.count(t->default_prompt)) return f.Error("default_prompt", "names no prompt of \"prompts\"");
  return Status::Ok();
}

Status ParseNormalisation(JsonFields& f, const json& obj, const std::string& src, Normalisation* n) {
  EVALRUN_RETURN_IF_ERROR(f.Bool("ignore_case", &n->ignore_case));
  EVALRUN_RETURN_IF_ERROR(f.Bool("ignore_punctuation", &n->ignore_punctuation));
  EVALRUN_RETURN_IF_ERROR(f.Bool("collapse_whitespace", &n->collapse_whitespace));
  f.Allow({"ignore_regexes"});
  if (f.Has("ignore_regexes"))
    EVALRUN_RETURN_IF_ERROR(ParseRegexes(obj["ignore_regexes"], src, "answer.ignore_regexes", &n->remove));
  return Status::Ok();
}

Status ParseExtracts(JsonFields& f, const json& obj, const std::string& src, TaskSpec* t) {
  static const std::vector<std::string> kExtractKeys = {"chain", "regex", "from", "marker"};
  f.Allow({"extracts", "default_extract"});
  if (!f.Has("extracts")) {
    t->default_extract = "default";
    return ParseExtract(f, obj, src, "answer", t->kind, &t->extracts["default"]);
  }
  const json& es = obj["extracts"];
  if (!es.is_object() || es.empty()) return f.Error("extracts", "expected an object of named extractions");
  for (auto it = es.begin(); it != es.end(); ++it) {
    const std::string path = "answer.extracts." + it.key();
    EVALRUN_RETURN_IF_ERROR(JsonFields::RequireObject(*it, src, path));
    JsonFields e(*it, src, path);
    EVALRUN_RETURN_IF_ERROR(ParseExtract(e, *it, src, path, t->kind, &t->extracts[it.key()]));
    EVALRUN_RETURN_IF_ERROR(e.Finish());
  }
  t->default_extract = es.begin().key();
  EVALRUN_RETURN_IF_ERROR(f.String("default_extract", &t->default_extract));
  if (!t->extracts.count(t->default_extract)) return f.Error("default_extract", "names no profile of \"extracts\"");
  return Status::Ok();
}

Status ParseAnswer(const json& obj, const std::string& src, TaskSpec* t) {
  EVALRUN_RETURN_IF_ERROR(JsonFields::RequireObject(obj, src, "answer"));
  JsonFields f(obj, src, "answer");
  std::string kind;
  EVALRUN_RETURN_IF_ERROR(f.String("kind", &kind, true));
  if (std::find(kKinds.begin(), kKinds.end(), kind) == kKinds.end())
    return f.Error("kind", "unknown kind \"" + kind + "\"" + DidYouMean(kind, kKinds) +
                               "; known: choice, number, exact, regex");
  t->kind = kind == "choice" ? AnswerKind::kChoice
            : kind == "number" ? AnswerKind::kNumber
            : kind == "exact"  ? AnswerKind::kExact
                               : AnswerKind::kRegex;
  EVALRUN_RETURN_IF_ERROR(f.String("gold", &t->gold_field, true));
  if (t->kind == AnswerKind::kChoice) {
    EVALRUN_RETURN_IF_ERROR(f.String("options", &t->options_field, true));
    EVALRUN_RETURN_IF_ERROR(f.StringList("drop_options", &t->drop_options));
    EVALRUN_RETURN_IF_ERROR(f.String("option_format", &t->option_format));
  }
  if (t->kind == AnswerKind::kNumber) {
    EVALRUN_RETURN_IF_ERROR(f.DoubleIn("tolerance", 0, 1e300, &t->tolerance));
    EVALRUN_RETURN_IF_ERROR(f.String("gold_after", &t->gold_extract));
  }
  if (t->kind == AnswerKind::kExact || t->kind == AnswerKind::kRegex)
    EVALRUN_RETURN_IF_ERROR(ParseNormalisation(f, obj, src, &t->normalise));
  EVALRUN_RETURN_IF_ERROR(ParseExtracts(f, obj, src, t));
  return f.Finish();
}

Status ParseData(const json& doc, JsonFields& top, const std::string& src, const std::string& dir, TaskSpec* t) {
  const json* obj = nullptr;
  EVALRUN_RETURN_IF_ERROR(top.Object("data", &obj, true));
  JsonFields f(*obj, src, "data");
  EVALRUN_RETURN_IF_ERROR(ParseSource(f, dir, &t->data));
  EVALRUN_RETURN_IF_ERROR(f.String("id", &t->id_field));
  EVALRUN_RETURN_IF_ERROR(f.String("category", &t->category_field));
  EVALRUN_RETURN_IF_ERROR(f.Finish());
  EVALRUN_RETURN_IF_ERROR(top.Object("fewshot", &obj));
  if (!obj) return Status::Ok();
  JsonFields s(*obj, src, "fewshot");
  EVALRUN_RETURN_IF_ERROR(ParseSource(s, dir, &t->fewshot.source));
  EVALRUN_RETURN_IF_ERROR(s.IntIn("count", 1, 64, &t->fewshot.count, true));
  EVALRUN_RETURN_IF_ERROR(s.Bool("same_category", &t->fewshot.same_category));
  EVALRUN_RETURN_IF_ERROR(s.String("answer", &t->fewshot.answer, true));
  std::vector<std::string> unused;
  EVALRUN_RETURN_IF_ERROR(TemplateFields(t->fewshot.answer, src + ": fewshot.answer", &unused));
  return s.Finish();
}

bool ValidName(const std::string& n) {
  if (n.empty() || n.size() > 64) return false;
  for (char c : n)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return false;
  return true;
}

}  // namespace

Status TemplateFields(const std::string& tmpl, const std::string& where, std::vector<std::string>* fields) {
  for (size_t i = 0; i < tmpl.size(); ++i) {
    if (tmpl[i] == '}' && i + 1 < tmpl.size() && tmpl[i + 1] == '}') { ++i; continue; }
    if (tmpl[i] != '{') continue;
    if (i + 1 < tmpl.size() && tmpl[i + 1] == '{') { ++i; continue; }
    const size_t end = tmpl.find('}', i);
    if (end == std::string::npos)
      return Status::InvalidInput(where + ": a '{' at byte " + std::to_string(i) + " is never closed (write {{ for a brace)");
    fields->push_back(tmpl.substr(i + 1, end - i - 1));
    i = end;
  }
  return Status::Ok();
}

Status ParseTaskFile(std::string_view text, const std::string& path, TaskSpec* t) {
  json doc;
  EVALRUN_RETURN_IF_ERROR(ParseJsonText(text, path, &doc, DuplicateKeys::kError));
  EVALRUN_RETURN_IF_ERROR(JsonFields::RequireObject(doc, path, ""));
  t->path = path;
  const std::filesystem::path p(path);
  const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
  JsonFields f(doc, path, "");
  // An unknown key first: a mistyped "prompt" is named as such, not as a
  // missing prompt.
  f.Allow({"name", "title", "about", "run_order", "data", "fewshot", "prompt", "prompts", "default_prompt", "answer"});
  EVALRUN_RETURN_IF_ERROR(f.Finish());
  EVALRUN_RETURN_IF_ERROR(f.String("name", &t->name, true));
  if (!ValidName(t->name))
    return f.Error("name", "expected 1..64 of a-z, 0-9, '_' and '-' (it names the part and its folder), got \"" +
                               t->name + "\"");
  t->title = t->name;
  EVALRUN_RETURN_IF_ERROR(f.String("title", &t->title));
  EVALRUN_RETURN_IF_ERROR(f.String("about", &t->about));
  EVALRUN_RETURN_IF_ERROR(f.IntIn("run_order", 1, 1000, &t->run_order));
  EVALRUN_RETURN_IF_ERROR(ParseData(doc, f, path, dir, t));
  EVALRUN_RETURN_IF_ERROR(ParsePrompts(f, doc, path, t));
  const json* answer = nullptr;
  EVALRUN_RETURN_IF_ERROR(f.Object("answer", &answer, true));
  EVALRUN_RETURN_IF_ERROR(ParseAnswer(*answer, path, t));
  return f.Finish();
}

Status LoadTaskFile(const std::string& path, TaskSpec* out) {
  std::string text;
  EVALRUN_RETURN_IF_ERROR(ReadFileToString(path, &text));
  return ParseTaskFile(text, path, out);
}

}  // namespace evalrun
