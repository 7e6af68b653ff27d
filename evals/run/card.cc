#include "evals/run/card.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "evals/server/base_url.h"
#include "evals/base/json_fields.h"
#include "evals/base/near_miss.h"
#include "evals/parts/ruler_tasks.h"
#include "evals/base/sha256.h"

namespace evalrun {
namespace {

// What each part accepts. Enum values list the prompt / extract profiles.
struct PartSpec {
  const char* name;
  std::vector<std::string> keys;
  std::vector<std::string> prompts;
  std::vector<std::string> extracts;
};

const std::vector<PartSpec>& PartSpecs() {
  static const std::vector<PartSpec> kSpecs = {
      {"mmlupro", {"questions", "max_tokens", "prompt", "extract", "seed", "split"},
       {"letter", "cot-5shot"}, {"first-letter", "official"}},
      {"gpqa", {"questions", "max_tokens", "prompt", "extract", "seed"},
       {"letter", "simple-evals"}, {"first-letter", "simple-evals"}},
      {"ifeval", {"prompts", "max_tokens", "seed"}, {}, {}},
      {"ruler",
       {"lengths", "tasks", "samples_per_task", "seed", "task_max_tokens", "allow_estimated_tokens",
        "over_context", "profile"},
       {}, {}},
      {"fit", {"contexts", "fill", "max_tokens"}, {}, {}},
  };
  return kSpecs;
}

// Bounds of the time fields: a week is longer than any sane wait, and keeps
// every duration far from overflowing when it becomes microseconds.
constexpr double kMaxSeconds = 604800;

Status ParseServer(const nlohmann::json& obj, const std::string& src, ServerConfig* s) {
  JsonFields f(obj, src, "server");
  f.Allow({"slots"});
  EVALRUN_RETURN_IF_ERROR(f.String("base_url", &s->base_url, true));
  Status url = CheckBaseUrl(s->base_url, &s->base_url);
  if (!url.ok()) return f.Error("base_url", url.message());
  EVALRUN_RETURN_IF_ERROR(f.String("model", &s->model));
  if (f.Has("slots")) {
    const nlohmann::json& v = obj["slots"];
    if (v.is_string() && v.get<std::string>() == "auto") {
      s->slots = 0;
    } else if (v.is_number_integer() && v.get<int64_t>() >= 1 && v.get<int64_t>() <= 1024) {
      s->slots = v.get<int>();
    } else {
      return f.Error("slots", "expected a positive integer or \"auto\", got " + DescribeJsonValue(v));
    }
  }
  EVALRUN_RETURN_IF_ERROR(f.String("api_key_env", &s->api_key_env));
  EVALRUN_RETURN_IF_ERROR(f.DoubleIn("ready_timeout_s", 0, kMaxSeconds, &s->ready_timeout_s, true));
  EVALRUN_RETURN_IF_ERROR(f.IntIn("retries", 0, 20, &s->retries));
  EVALRUN_RETURN_IF_ERROR(f.DoubleIn("connect_timeout_s", 0, 3600, &s->connect_timeout_s, true));
  EVALRUN_RETURN_IF_ERROR(f.DoubleIn("request_timeout_base_s", 0, kMaxSeconds, &s->request_timeout_base_s));
  EVALRUN_RETURN_IF_ERROR(f.DoubleIn("min_decode_tps", 0, 1e6, &s->min_decode_tps, true));
  EVALRUN_RETURN_IF_ERROR(f.StringList("command", &s->command));
  EVALRUN_RETURN_IF_ERROR(f.IntIn("context", 1, INT32_MAX, &s->context));
  EVALRUN_RETURN_IF_ERROR(f.DoubleIn("stop_grace_s", 0, 3600, &s->stop_grace_s));
  EVALRUN_RETURN_IF_ERROR(f.Enum("kv_cache", {"auto", "shared", "per_slot"}, &s->kv_cache));
  EVALRUN_RETURN_IF_ERROR(f.IntIn("kv_cache_tokens", 1, INT64_MAX, &s->kv_cache_tokens));
  if (f.Has("kv_cache_tokens") && s->kv_cache != "shared")
    return f.Error("kv_cache_tokens", "only with \"kv_cache\": \"shared\"");
  EVALRUN_RETURN_IF_ERROR(f.IntIn("max_reply_mb", 1, 4096, &s->max_reply_mb));
  return f.Finish();
}

Status ParseSampling(const nlohmann::json& obj, const std::string& src, SamplingConfig* s) {
  JsonFields f(obj, src, "sampling");
  EVALRUN_RETURN_IF_ERROR(f.DoubleIn("temperature", 0, 100, &s->temperature));
  EVALRUN_RETURN_IF_ERROR(f.IntIn("top_k", 0, JsonFields::kNoLimit, &s->top_k));
  EVALRUN_RETURN_IF_ERROR(f.DoubleIn("top_p", 0, 1, &s->top_p, true));
  // llama.cpp takes a seed of -1 or 0xFFFFFFFF as "random": never sent.
  EVALRUN_RETURN_IF_ERROR(f.IntIn("seed", 0, 4294967294LL, &s->seed));
  return f.Finish();
}

Status ParseLoadSampling(const nlohmann::json& obj, const std::string& src, LoadSamplingConfig* l) {
  JsonFields f(obj, src, "load_sampling");
  EVALRUN_RETURN_IF_ERROR(f.DoubleIn("interval_s", 0.05, 3600, &l->interval_s));
  EVALRUN_RETURN_IF_ERROR(f.DoubleIn("threshold_pct", 0, 100000, &l->threshold_pct, true));
  EVALRUN_RETURN_IF_ERROR(f.IntIn("top", 0, 1000, &l->top));
  EVALRUN_RETURN_IF_ERROR(f.StringList("ignore", &l->ignore));
  EVALRUN_RETURN_IF_ERROR(f.Bool("guard", &l->guard));
  EVALRUN_RETURN_IF_ERROR(f.DoubleIn("guard_max_wait_s", 0, kMaxSeconds, &l->guard_max_wait_s, true));
  return f.Finish();
}

Status ParseHardware(const nlohmann::json& obj, const std::string& src, HardwareConfig* h) {
  // `hardware` is mostly descriptive; only the GPU selector is read, so a
  // near miss of its keys is a typo, not a description.
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (it.key() == "gpu_index" || it.key() == "gpu_uuid") continue;
    const std::string near = DidYouMean(it.key(), {"gpu_index", "gpu_uuid"});
    if (!near.empty()) return Status::InvalidInput(src + ": hardware." + it.key() + ": unknown field" + near);
  }
  if (obj.contains("gpu_index")) {
    const auto& v = obj["gpu_index"];
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 1023)
      return Status::InvalidInput(src + ": hardware.gpu_index: expected an integer 0..1023, got " +
                                  DescribeJsonValue(v));
    h->gpu_index = v.get<int>();
  }
  if (obj.contains("gpu_uuid")) {
    const auto& v = obj["gpu_uuid"];
    if (!v.is_string())
      return Status::InvalidInput(src + ": hardware.gpu_uuid: expected a string, got " +
                                  DescribeJsonValue(v));
    h->gpu_uuid = v.get<std::string>();
  }
  return Status::Ok();
}

// The RULER task names of `list` (`key` names the field), each one known.
Status CheckRulerTaskName(const JsonFields& f, const std::string& key, const std::string& task) {
  const std::vector<std::string> known = RulerTaskNames();
  if (std::find(known.begin(), known.end(), task) != known.end()) return Status::Ok();
  std::string list;
  for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
  return f.Error(key, "unknown RULER task \"" + task + "\"" + DidYouMean(task, known) + "; known tasks: " + list);
}

// An array of integers in [min, max], each given once, at least one.
Status SizeList(JsonFields& f, const std::string& key, int64_t min, const char* what, std::vector<int64_t>* out) {
  EVALRUN_RETURN_IF_ERROR(f.IntList(key, out));
  if (!f.Has(key)) return Status::Ok();
  if (out->empty()) return f.Error(key, std::string("expected at least one ") + what + " (leave the field out for the default)");
  std::set<int64_t> seen;
  for (size_t i = 0; i < out->size(); ++i) {
    const int64_t v = (*out)[i];
    const std::string at = key + "[" + std::to_string(i) + "]";
    if (v < min || v > (1 << 24))
      return f.Error(at, std::string("each ") + what + " must be " + std::to_string(min) + ".." +
                             std::to_string(1 << 24) + " tokens, got " + std::to_string(v));
    if (!seen.insert(v).second) return f.Error(at, std::to_string(v) + " is given twice");
  }
  return Status::Ok();
}

// An object {task: integer >= 1} whose keys are RULER tasks.
Status TaskCounts(JsonFields& f, const nlohmann::json& m, const std::string& key, std::map<std::string, int>* out) {
  for (auto it = m.begin(); it != m.end(); ++it) {
    EVALRUN_RETURN_IF_ERROR(CheckRulerTaskName(f, key, it.key()));
    if (!it->is_number_integer() || it->get<int64_t>() < 1 || it->get<int64_t>() > INT32_MAX)
      return f.Error(key + "." + it.key(), "expected an integer >= 1, got " + DescribeJsonValue(*it));
    (*out)[it.key()] = it->get<int>();
  }
  return Status::Ok();
}

Status ParseRulerFields(JsonFields& f, const nlohmann::json& obj, PartConfig* p) {
  EVALRUN_RETURN_IF_ERROR(SizeList(f, "lengths", 256, "length", &p->lengths));
  EVALRUN_RETURN_IF_ERROR(f.StringList("tasks", &p->tasks));
  if (f.Has("tasks") && p->tasks.empty())
    return f.Error("tasks", "expected at least one task (leave the field out for the default tasks)");
  std::set<std::string> seen;
  for (size_t i = 0; i < p->tasks.size(); ++i) {
    const std::string at = "tasks[" + std::to_string(i) + "]";
    EVALRUN_RETURN_IF_ERROR(CheckRulerTaskName(f, at, p->tasks[i]));
    if (!seen.insert(p->tasks[i]).second) return f.Error(at, "\"" + p->tasks[i] + "\" is given twice");
  }
  if (f.Has("samples_per_task")) {
    const nlohmann::json& v = obj["samples_per_task"];
    if (v.is_object()) {
      EVALRUN_RETURN_IF_ERROR(TaskCounts(f, v, "samples_per_task", &p->task_samples));
    } else {
      EVALRUN_RETURN_IF_ERROR(f.Int("samples_per_task", &p->samples_per_task));
      if (p->samples_per_task < 1)
        return f.Error("samples_per_task", "expected an integer >= 1 or an object {task: count}");
    }
  }
  if (f.Has("task_max_tokens")) {
    const nlohmann::json* m = nullptr;
    EVALRUN_RETURN_IF_ERROR(f.Object("task_max_tokens", &m));
    EVALRUN_RETURN_IF_ERROR(TaskCounts(f, *m, "task_max_tokens", &p->task_max_tokens));
  }
  EVALRUN_RETURN_IF_ERROR(f.Bool("allow_estimated_tokens", &p->allow_estimated_tokens));
  EVALRUN_RETURN_IF_ERROR(f.Enum("profile", {"nvidia", "fit"}, &p->profile));
  return f.Enum("over_context", {"fail", "skip"}, &p->over_context);
}

Status ParsePart(const std::string& name, const nlohmann::json& obj, const std::string& src,
                 PartConfig* p) {
  const PartSpec* spec = nullptr;
  std::vector<std::string> names;
  for (const auto& s : PartSpecs()) {
    names.push_back(s.name);
    if (name == s.name) spec = &s;
  }
  if (!spec) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    return Status::InvalidInput(src + ": parts." + name + ": unknown part" + DidYouMean(name, names) +
                                "; known parts: " + list);
  }
  EVALRUN_RETURN_IF_ERROR(JsonFields::RequireObject(obj, src, "parts." + name));
  p->name = name;
  JsonFields f(obj, src, "parts." + name);
  // Every key the part accepts is a near miss for an unknown one, also
  // those read only when present.
  f.Allow(spec->keys);
  auto accepts = [&](const std::string& k) {
    for (const auto& key : spec->keys) if (key == k) return true;
    return false;
  };
  if (accepts("questions")) EVALRUN_RETURN_IF_ERROR(f.IntIn("questions", 1, JsonFields::kNoLimit, &p->questions));
  if (accepts("prompts")) EVALRUN_RETURN_IF_ERROR(f.IntIn("prompts", 1, JsonFields::kNoLimit, &p->questions));
  if (accepts("max_tokens")) EVALRUN_RETURN_IF_ERROR(f.IntIn("max_tokens", 1, JsonFields::kNoLimit, &p->max_tokens));
  if (accepts("prompt")) EVALRUN_RETURN_IF_ERROR(f.Enum("prompt", spec->prompts, &p->prompt));
  if (accepts("extract")) EVALRUN_RETURN_IF_ERROR(f.Enum("extract", spec->extracts, &p->extract));
  if (accepts("seed") && f.Has("seed")) {
    int64_t seed = 0;
    EVALRUN_RETURN_IF_ERROR(f.IntIn("seed", 0, 4294967295LL, &seed));  // RULER seeds numpy: 32 bits
    p->seed = seed;
  }
  if (accepts("split")) EVALRUN_RETURN_IF_ERROR(f.Enum("split", {"test", "validation"}, &p->split));
  if (name == "ruler") EVALRUN_RETURN_IF_ERROR(ParseRulerFields(f, obj, p));
  if (accepts("contexts")) EVALRUN_RETURN_IF_ERROR(SizeList(f, "contexts", 256, "context", &p->contexts));
  if (accepts("fill")) EVALRUN_RETURN_IF_ERROR(f.DoubleIn("fill", 0, 1, &p->fill, true));
  return f.Finish();
}

}  // namespace

const std::vector<std::string>& KnownPartNames() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> n;
    for (const auto& s : PartSpecs()) n.push_back(s.name);
    return n;
  }();
  return kNames;
}

std::string ServerConfig::Origin() const {
  auto scheme_end = base_url.find("://");
  auto path_start = base_url.find('/', scheme_end == std::string::npos ? 0 : scheme_end + 3);
  return path_start == std::string::npos ? base_url : base_url.substr(0, path_start);
}

std::string ServerConfig::PathPrefix() const {
  std::string origin = Origin();
  return base_url.substr(origin.size());
}

const PartConfig* Card::FindPart(const std::string& part) const {
  for (const auto& p : parts)
    if (p.name == part) return &p;
  return nullptr;
}

Status ParseCard(std::string_view text, const std::string& source, Card* card) {
  nlohmann::json doc;
  EVALRUN_RETURN_IF_ERROR(ParseJsonText(text, source, &doc, DuplicateKeys::kError));
  EVALRUN_RETURN_IF_ERROR(JsonFields::RequireObject(doc, source, ""));
  card->text = std::string(text);
  card->sha256 = Sha256Hex(text);
  JsonFields f(doc, source, "");
  EVALRUN_RETURN_IF_ERROR(f.String("name", &card->name, true));
  if (card->name.empty() || card->name.find('/') != std::string::npos || card->name == "." ||
      card->name == "..")
    return f.Error("name", "expected a non-empty name without '/'");
  for (const char* k : {"model", "engine"}) {
    nlohmann::json* dst = std::string(k) == "model" ? &card->model : &card->engine;
    EVALRUN_RETURN_IF_ERROR(f.Raw(k, dst));
    if (!dst->is_object()) return f.Error(k, "expected an object, got " + DescribeJsonValue(*dst));
  }
  EVALRUN_RETURN_IF_ERROR(f.Raw("hardware", &card->hardware_raw));
  if (!card->hardware_raw.is_object())
    return f.Error("hardware", "expected an object, got " + DescribeJsonValue(card->hardware_raw));
  EVALRUN_RETURN_IF_ERROR(ParseHardware(card->hardware_raw, source, &card->hardware));

  const nlohmann::json* obj = nullptr;
  EVALRUN_RETURN_IF_ERROR(f.Object("server", &obj, true));
  EVALRUN_RETURN_IF_ERROR(ParseServer(*obj, source, &card->server));
  EVALRUN_RETURN_IF_ERROR(f.Object("sampling", &obj));
  if (obj) EVALRUN_RETURN_IF_ERROR(ParseSampling(*obj, source, &card->sampling));
  EVALRUN_RETURN_IF_ERROR(f.Bool("thinking", &card->thinking));
  EVALRUN_RETURN_IF_ERROR(f.IntIn("max_failed", 0, JsonFields::kNoLimit, &card->max_failed));
  EVALRUN_RETURN_IF_ERROR(f.Object("load_sampling", &obj));
  if (obj) EVALRUN_RETURN_IF_ERROR(ParseLoadSampling(*obj, source, &card->load_sampling));

  EVALRUN_RETURN_IF_ERROR(f.Object("parts", &obj, true));
  if (obj->empty()) return f.Error("parts", "expected at least one part");
  for (auto it = obj->begin(); it != obj->end(); ++it) {
    PartConfig p;
    EVALRUN_RETURN_IF_ERROR(ParsePart(it.key(), *it, source, &p));
    card->parts.push_back(std::move(p));
  }
  return f.Finish();
}

Status LoadCard(const std::string& path, Card* card) {
  std::string text;
  EVALRUN_RETURN_IF_ERROR(ReadFileToString(path, &text));
  card->path = path;
  std::filesystem::path p(path);
  card->dir = p.has_parent_path() ? p.parent_path().string() : ".";
  return ParseCard(text, path, card);
}

}  // namespace evalrun
