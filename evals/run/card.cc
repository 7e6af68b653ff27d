#include "evals/run/card.h"
#include "evals/run/card_tasks.h"

#include <algorithm>
#include <filesystem>

#include "evals/server/base_url.h"
#include "evals/base/json_fields.h"
#include "evals/base/near_miss.h"
#include "evals/run/part_registry.h"
#include "evals/base/sha256.h"

namespace evalrun {
namespace {

std::string JoinNames(const std::vector<std::string>& names) {
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  return list;
}

// Bounds of the time fields: a week is longer than any sane wait, and keeps
// every duration far from overflowing when it becomes microseconds.
constexpr double kMaxSeconds = 604800;
// server.min_decode_tps: tokens a second.
constexpr double kMinDecodeTps = 0.1;

// The card's name names the job folder and every message: printable text.
bool HasControlCharacter(const std::string& s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return true;
  return false;
}

// "slots": a positive integer or "auto" (0).
Status ParseSlots(const nlohmann::json& obj, JsonFields& f, int* slots) {
  if (!f.Has("slots")) return Status::Ok();
  const nlohmann::json& v = obj["slots"];
  if (v.is_string() && v.get<std::string>() == "auto") {
    *slots = 0;
  } else if (v.is_number_integer() && v.get<int64_t>() >= 1 && v.get<int64_t>() <= kMaxServerSlots) {
    *slots = v.get<int>();
  } else {
    return f.Error("slots", "expected a positive integer or \"auto\", got " + DescribeJsonValue(v));
  }
  return Status::Ok();
}

// server.endpoints: a non-empty list of {base_url, slots, api_key_env};
// server.slots and server.api_key_env are the defaults of those not given.
Status ParseEndpoints(const nlohmann::json& obj, const std::string& src, JsonFields& server, ServerConfig* s) {
  const nlohmann::json& list = obj["endpoints"];
  if (!list.is_array() || list.empty())
    return server.Error("endpoints", "expected a non-empty list of {\"base_url\": ...} objects, got " +
                                         DescribeJsonValue(list));
  if (server.Has("base_url"))
    return server.Error("base_url", "give either server.base_url (one server) or server.endpoints (several), "
                                    "not both");
  if (!s->command.empty())
    return server.Error("endpoints", "evalrun starts one engine (server.command); several endpoints must be "
                                     "servers that run already");
  for (size_t k = 0; k < list.size(); ++k) {
    const std::string path = "server.endpoints[" + std::to_string(k) + "]";
    EVALRUN_RETURN_IF_ERROR(JsonFields::RequireObject(list[k], src, path));
    JsonFields f(list[k], src, path);
    f.Allow({"slots"});
    EndpointConfig ep{"", s->slots, s->api_key_env};
    EVALRUN_RETURN_IF_ERROR(f.String("base_url", &ep.base_url, true));
    Status url = CheckBaseUrl(ep.base_url, &ep.base_url);
    if (!url.ok()) return f.Error("base_url", url.message());
    EVALRUN_RETURN_IF_ERROR(ParseSlots(list[k], f, &ep.slots));
    EVALRUN_RETURN_IF_ERROR(f.String("api_key_env", &ep.api_key_env));
    EVALRUN_RETURN_IF_ERROR(f.Finish());
    for (const auto& other : s->endpoints)
      if (other.base_url == ep.base_url)
        return f.Error("base_url", "\"" + ep.base_url + "\" is listed twice; each server once");
    s->endpoints.push_back(ep);
  }
  s->base_url = s->endpoints[0].base_url;
  s->slots = s->endpoints[0].slots;
  s->api_key_env = s->endpoints[0].api_key_env;
  return Status::Ok();
}

Status ParseServer(const nlohmann::json& obj, const std::string& src, ServerConfig* s) {
  JsonFields f(obj, src, "server");
  f.Allow({"slots", "endpoints"});
  const bool several = f.Has("endpoints");
  EVALRUN_RETURN_IF_ERROR(f.String("base_url", &s->base_url, !several));
  if (!several) {
    Status url = CheckBaseUrl(s->base_url, &s->base_url);
    if (!url.ok()) return f.Error("base_url", url.message());
  }
  EVALRUN_RETURN_IF_ERROR(f.String("model", &s->model));
  EVALRUN_RETURN_IF_ERROR(ParseSlots(obj, f, &s->slots));
  EVALRUN_RETURN_IF_ERROR(f.String("api_key_env", &s->api_key_env));
  EVALRUN_RETURN_IF_ERROR(f.Bool("endpoints_differ", &s->endpoints_differ));
  EVALRUN_RETURN_IF_ERROR(f.DoubleIn("ready_timeout_s", 0, kMaxSeconds, &s->ready_timeout_s, true));
  EVALRUN_RETURN_IF_ERROR(f.IntIn("retries", 0, 20, &s->retries));
  EVALRUN_RETURN_IF_ERROR(f.DoubleIn("connect_timeout_s", 0, 3600, &s->connect_timeout_s, true));
  EVALRUN_RETURN_IF_ERROR(f.DoubleIn("request_timeout_base_s", 0, kMaxSeconds, &s->request_timeout_base_s));
  // A rate near 0 makes every timeout years long, past what a wait can hold
  // (it would then expire at once); one token in 10 s is slower than any run.
  EVALRUN_RETURN_IF_ERROR(f.DoubleIn("min_decode_tps", kMinDecodeTps, 1e6, &s->min_decode_tps));
  EVALRUN_RETURN_IF_ERROR(f.StringList("command", &s->command));
  EVALRUN_RETURN_IF_ERROR(f.IntIn("context", 1, INT32_MAX, &s->context));
  // A server started by hand: the line it was started with, shown on the
  // page as the setup's command (a managed engine's is server.command).
  EVALRUN_RETURN_IF_ERROR(f.String("launch", &s->launch));
  if (f.Has("launch") && s->launch.empty()) return f.Error("launch", "expected the command line, got \"\"");
  if (f.Has("launch") && !s->command.empty())
    return f.Error("launch", "not with server.command (the managed engine's command is shown as evalrun runs it)");
  EVALRUN_RETURN_IF_ERROR(f.DoubleIn("stop_grace_s", 0, 3600, &s->stop_grace_s));
  EVALRUN_RETURN_IF_ERROR(f.Enum("kv_cache", {"auto", "shared", "per_slot"}, &s->kv_cache));
  EVALRUN_RETURN_IF_ERROR(f.IntIn("kv_cache_tokens", 1, INT64_MAX, &s->kv_cache_tokens));
  if (f.Has("kv_cache_tokens") && s->kv_cache != "shared")
    return f.Error("kv_cache_tokens", "only with \"kv_cache\": \"shared\"");
  EVALRUN_RETURN_IF_ERROR(f.IntIn("max_reply_mb", 1, 4096, &s->max_reply_mb));
  EVALRUN_RETURN_IF_ERROR(f.Bool("raw_fallback", &s->raw_fallback));
  if (several) EVALRUN_RETURN_IF_ERROR(ParseEndpoints(obj, src, f, s));
  else if (s->endpoints_differ) return f.Error("endpoints_differ", "only with server.endpoints");
  return f.Finish();
}

Status ParseScoring(const nlohmann::json& obj, const std::string& src, ScoringConfig* s) {
  JsonFields f(obj, src, "scoring");
  EVALRUN_RETURN_IF_ERROR(f.IntIn("concurrency", 0, 256, &s->concurrency));
  if (f.Has("nice")) {
    int nice = 0;
    EVALRUN_RETURN_IF_ERROR(f.IntIn("nice", 0, 19, &nice));
    s->nice = nice;
  }
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
  EVALRUN_RETURN_IF_ERROR(f.IntIn("engine_port", 1, 65535, &l->engine_port));
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

Status ParsePart(const std::string& name, const nlohmann::json& obj, const std::string& src,
                 const RequestSettings& defaults, PartConfig* p) {
  const PartDefinition* def = FindPartDefinition(name);
  if (!def)
    return Status::InvalidInput(src + ": parts." + name + ": unknown part" + DidYouMean(name, KnownPartNames()) +
                                "; known parts: " + JoinNames(KnownPartNames()));
  p->name = name;
  EVALRUN_RETURN_IF_ERROR(JsonFields::RequireObject(obj, src, "parts." + name));
  p->request = defaults;
  EVALRUN_RETURN_IF_ERROR(ParseRequestSettings(obj, src, "parts." + name, &p->request));
  return ParsePartSettings(def->keys, obj, src, "parts." + name, &p->settings, RequestSettingKeys());
}

TaskFolderLoader& TheTaskFolderLoader() {
  static auto* loader = new TaskFolderLoader();
  return *loader;
}

// `tasks`: folders of task files, each relative to the card's folder.
Status LoadCardTasks(JsonFields& f, const std::string& dir) {
  std::vector<std::string> dirs;
  EVALRUN_RETURN_IF_ERROR(f.StringList("tasks", &dirs));
  if (!dirs.empty() && !TheTaskFolderLoader()) return f.Error("tasks", "task files are not read by this program");
  for (const std::string& d : dirs) {
    const std::filesystem::path p(d);
    const std::string at = p.is_absolute() || dir.empty() ? d : (std::filesystem::path(dir) / p).string();
    EVALRUN_RETURN_IF_ERROR(TheTaskFolderLoader()(at));
  }
  return Status::Ok();
}

}  // namespace

void SetTaskFolderLoader(TaskFolderLoader loader) { TheTaskFolderLoader() = std::move(loader); }

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
      card->name == ".." || HasControlCharacter(card->name))
    return f.Error("name", "expected a non-empty name without '/' or control characters (it names the job "
                           "folder), got " + DescribeJsonValue(doc["name"]));
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
  f.Allow(RequestSettingKeys());
  EVALRUN_RETURN_IF_ERROR(ParseRequestSettings(doc, source, "", &card->request));
  EVALRUN_RETURN_IF_ERROR(f.IntIn("max_failed", 0, JsonFields::kNoLimit, &card->max_failed));
  EVALRUN_RETURN_IF_ERROR(f.IntIn("repeat", 1, 2, &card->repeat));
  EVALRUN_RETURN_IF_ERROR(f.Object("load_sampling", &obj));
  if (obj) EVALRUN_RETURN_IF_ERROR(ParseLoadSampling(*obj, source, &card->load_sampling));
  EVALRUN_RETURN_IF_ERROR(f.Object("scoring", &obj));
  if (obj) EVALRUN_RETURN_IF_ERROR(ParseScoring(*obj, source, &card->scoring));

  EVALRUN_RETURN_IF_ERROR(LoadCardTasks(f, card->dir));
  EVALRUN_RETURN_IF_ERROR(f.Object("parts", &obj, true));
  if (obj->empty()) return f.Error("parts", "expected at least one part");
  for (auto it = obj->begin(); it != obj->end(); ++it) {
    PartConfig p;
    EVALRUN_RETURN_IF_ERROR(ParsePart(it.key(), *it, source, card->request, &p));
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
