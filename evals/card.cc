#include "evals/card.h"

#include <filesystem>

#include "evals/json_fields.h"
#include "evals/near_miss.h"
#include "evals/sha256.h"

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
       {"lengths", "tasks", "samples_per_task", "seed", "task_max_tokens", "allow_estimated_tokens", "profile"},
       {}, {}},
      {"fit", {"contexts", "fill", "max_tokens"}, {}, {}},
  };
  return kSpecs;
}

Status ParseServer(const nlohmann::json& obj, const std::string& src, ServerConfig* s) {
  JsonFields f(obj, src, "server");
  EVALRUN_RETURN_IF_ERROR(f.String("base_url", &s->base_url, true));
  if (s->base_url.rfind("http://", 0) != 0 && s->base_url.rfind("https://", 0) != 0)
    return f.Error("base_url", "expected an http:// or https:// URL, got \"" + s->base_url + "\"");
  {
    const size_t host_start = s->base_url.find("://") + 3;
    const std::string hostport = s->base_url.substr(host_start, s->base_url.find('/', host_start) - host_start);
    if (hostport.empty() || hostport[0] == ':')
      return f.Error("base_url", "expected a URL with a host, e.g. http://127.0.0.1:8080/v1, got \"" + s->base_url + "\"");
  }
  while (!s->base_url.empty() && s->base_url.back() == '/') s->base_url.pop_back();
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
    f.Allow({"slots"});
  }
  EVALRUN_RETURN_IF_ERROR(f.String("api_key_env", &s->api_key_env));
  EVALRUN_RETURN_IF_ERROR(f.Double("ready_timeout_s", &s->ready_timeout_s));
  EVALRUN_RETURN_IF_ERROR(f.Int("retries", &s->retries));
  if (s->retries < 0 || s->retries > 20) return f.Error("retries", "expected 0..20");
  EVALRUN_RETURN_IF_ERROR(f.Double("connect_timeout_s", &s->connect_timeout_s));
  EVALRUN_RETURN_IF_ERROR(f.Double("request_timeout_base_s", &s->request_timeout_base_s));
  EVALRUN_RETURN_IF_ERROR(f.Double("min_decode_tps", &s->min_decode_tps));
  if (s->min_decode_tps <= 0) return f.Error("min_decode_tps", "expected a positive number");
  EVALRUN_RETURN_IF_ERROR(f.StringList("command", &s->command));
  EVALRUN_RETURN_IF_ERROR(f.Int("context", &s->context));
  if (s->context < 0) return f.Error("context", "expected a positive integer");
  EVALRUN_RETURN_IF_ERROR(f.Double("stop_grace_s", &s->stop_grace_s));
  return f.Finish();
}

Status ParseSampling(const nlohmann::json& obj, const std::string& src, SamplingConfig* s) {
  JsonFields f(obj, src, "sampling");
  EVALRUN_RETURN_IF_ERROR(f.Double("temperature", &s->temperature));
  EVALRUN_RETURN_IF_ERROR(f.Int("top_k", &s->top_k));
  EVALRUN_RETURN_IF_ERROR(f.Double("top_p", &s->top_p));
  EVALRUN_RETURN_IF_ERROR(f.Int("seed", &s->seed));
  if (s->temperature < 0) return f.Error("temperature", "expected a number >= 0");
  if (s->top_p <= 0 || s->top_p > 1) return f.Error("top_p", "expected a number in (0, 1]");
  return f.Finish();
}

Status ParseLoadSampling(const nlohmann::json& obj, const std::string& src, LoadSamplingConfig* l) {
  JsonFields f(obj, src, "load_sampling");
  EVALRUN_RETURN_IF_ERROR(f.Double("interval_s", &l->interval_s));
  if (l->interval_s < 0.05) return f.Error("interval_s", "expected a number >= 0.05");
  EVALRUN_RETURN_IF_ERROR(f.Double("threshold_pct", &l->threshold_pct));
  EVALRUN_RETURN_IF_ERROR(f.Int("top", &l->top));
  EVALRUN_RETURN_IF_ERROR(f.StringList("ignore", &l->ignore));
  EVALRUN_RETURN_IF_ERROR(f.Bool("guard", &l->guard));
  EVALRUN_RETURN_IF_ERROR(f.Double("guard_max_wait_s", &l->guard_max_wait_s));
  return f.Finish();
}

Status ParseHardware(const nlohmann::json& obj, const std::string& src, HardwareConfig* h) {
  // `hardware` is mostly descriptive; only the GPU selector is read.
  if (obj.contains("gpu_index")) {
    const auto& v = obj["gpu_index"];
    if (!v.is_number_integer() || v.get<int64_t>() < 0)
      return Status::InvalidInput(src + ": hardware.gpu_index: expected an integer >= 0, got " +
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
  auto accepts = [&](const std::string& k) {
    for (const auto& key : spec->keys) if (key == k) return true;
    return false;
  };
  if (accepts("questions")) {
    EVALRUN_RETURN_IF_ERROR(f.Int("questions", &p->questions));
    if (f.Has("questions") && p->questions < 1) return f.Error("questions", "expected an integer >= 1");
  }
  if (accepts("prompts")) {
    EVALRUN_RETURN_IF_ERROR(f.Int("prompts", &p->questions));
    if (f.Has("prompts") && p->questions < 1) return f.Error("prompts", "expected an integer >= 1");
  }
  if (accepts("max_tokens")) {
    EVALRUN_RETURN_IF_ERROR(f.Int("max_tokens", &p->max_tokens));
    if (f.Has("max_tokens") && p->max_tokens < 1) return f.Error("max_tokens", "expected an integer >= 1");
  }
  if (accepts("prompt")) EVALRUN_RETURN_IF_ERROR(f.Enum("prompt", spec->prompts, &p->prompt));
  if (accepts("extract")) EVALRUN_RETURN_IF_ERROR(f.Enum("extract", spec->extracts, &p->extract));
  if (accepts("seed") && f.Has("seed")) {
    int64_t seed = 0;
    EVALRUN_RETURN_IF_ERROR(f.Int("seed", &seed));
    p->seed = seed;
  }
  if (accepts("split")) EVALRUN_RETURN_IF_ERROR(f.Enum("split", {"test", "validation"}, &p->split));
  if (accepts("lengths")) {
    EVALRUN_RETURN_IF_ERROR(f.IntList("lengths", &p->lengths));
    for (auto l : p->lengths)
      if (l < 256) return f.Error("lengths", "each length must be >= 256 tokens, got " + std::to_string(l));
  }
  if (accepts("tasks")) EVALRUN_RETURN_IF_ERROR(f.StringList("tasks", &p->tasks));
  if (accepts("samples_per_task") && f.Has("samples_per_task")) {
    const nlohmann::json& v = obj["samples_per_task"];
    if (v.is_object()) {
      f.Allow({"samples_per_task"});
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!it->is_number_integer() || it->get<int64_t>() < 1)
          return f.Error("samples_per_task." + it.key(), "expected an integer >= 1, got " + DescribeJsonValue(*it));
        p->task_samples[it.key()] = it->get<int>();
      }
    } else {
      EVALRUN_RETURN_IF_ERROR(f.Int("samples_per_task", &p->samples_per_task));
      if (p->samples_per_task < 1) return f.Error("samples_per_task", "expected an integer >= 1 or an object {task: count}");
    }
  }
  if (accepts("task_max_tokens") && f.Has("task_max_tokens")) {
    const nlohmann::json* m = nullptr;
    EVALRUN_RETURN_IF_ERROR(f.Object("task_max_tokens", &m));
    for (auto it = m->begin(); it != m->end(); ++it) {
      if (!it->is_number_integer() || it->get<int64_t>() < 1)
        return f.Error("task_max_tokens." + it.key(), "expected an integer >= 1, got " + DescribeJsonValue(*it));
      p->task_max_tokens[it.key()] = it->get<int>();
    }
  }
  if (accepts("allow_estimated_tokens"))
    EVALRUN_RETURN_IF_ERROR(f.Bool("allow_estimated_tokens", &p->allow_estimated_tokens));
  if (accepts("profile")) EVALRUN_RETURN_IF_ERROR(f.Enum("profile", {"nvidia", "fit"}, &p->profile));
  if (accepts("contexts")) EVALRUN_RETURN_IF_ERROR(f.IntList("contexts", &p->contexts));
  if (accepts("fill")) {
    EVALRUN_RETURN_IF_ERROR(f.Double("fill", &p->fill));
    if (p->fill <= 0 || p->fill > 1) return f.Error("fill", "expected a number in (0, 1]");
  }
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
  EVALRUN_RETURN_IF_ERROR(ParseJsonText(text, source, &doc));
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
  EVALRUN_RETURN_IF_ERROR(f.Int("max_failed", &card->max_failed));
  if (card->max_failed < 0) return f.Error("max_failed", "expected an integer >= 0");
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
