#include "evals/benchmarks/speed/speed_run.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <sstream>

#include "evals/base/files.h"
#include "evals/base/json_bounds.h"
#include "evals/benchmarks/speed/speed_plan.h"
#include "evals/benchmarks/speed/speed_results.h"
#include "evals/benchmarks/speed/speed_steps.h"
#include "evals/run/load_log.h"
#include "evals/run/run_files.h"
#include "evals/server/kv_capacity.h"
#include "evals/server/server_info.h"
#include "evals/server/server_tokenizer.h"

namespace evalrun {
namespace {

nlohmann::json NewResult(const SpeedOptions& o) {
  nlohmann::json r;
  r["parameters"] = SpeedOptionsJson(o);
  r["definitions"] = SpeedDefinitions();
  r["engine"] = nullptr;
  r["cold"] = nullptr;
  r["warmups"] = nlohmann::json::array();
  r["steps"] = nlohmann::json::array();
  r["refused"] = nlohmann::json::array();
  r["prompts"] = nlohmann::json::array();
  r["samples_file"] = "speed/samples.jsonl";
  r["requests_file"] = "speed/requests.jsonl";  // each request's exact body, by seq
  r["complete"] = false;
  r["error"] = nullptr;
  return r;
}

// The engine's facts: /props (build, model, slot context, slots) and flags.
nlohmann::json EngineFacts(const ProcedureEnv& env, HttpTransport* t, const ServerProps& props, const KvCapacity& kv,
                           int slots) {
  nlohmann::json e;
  e["managed"] = env.engine->managed();
  e["command"] = env.card->server.command;
  e["build_info"] = props.build_info;
  e["model_path"] = props.model_path;
  e["n_ctx_slot"] = props.n_ctx;
  e["total_slots"] = props.total_slots;
  e["slots"] = slots;
  e["kv_cache"] = kv.ToJson();
  e["chat_template_sha256"] = props.chat_template_sha256;
  e["props"] = nullptr;
  HttpResponse r = t->Get("/props", 30);
  if (r.status == 200) {
    const nlohmann::json p = ParseJsonOrDiscarded(r.body);
    if (p.is_object() && p.contains("default_generation_settings"))
      e["props"] = BoundedCopy(p["default_generation_settings"], "/props default_generation_settings");
  }
  return e;
}

// Cold: a managed engine this part just started, or /metrics at zero.
bool ColdCheck(const ProcedureEnv& env, bool started_here, HttpTransport* t, std::string* why) {
  if (started_here) return true;
  HttpResponse r = t->Get("/metrics", 30);
  if (r.status != 200) {
    *why = "the server was running before and has no /metrics (HTTP " + std::to_string(r.status) +
           "; llama-server needs --metrics), so whether it served requests before is unknown";
    return false;
  }
  return MetricsSayCold(r.body, why);
}

// <dir>/<name>, made empty: one run's requests (a repeated run replaces them).
Status OpenFresh(const std::string& dir, const char* name, JsonlAppender* out) {
  EVALRUN_RETURN_IF_ERROR(MakeDirectories(dir));
  const std::string path = dir + "/" + name;
  ::unlink(path.c_str());
  return out->Open(path);
}

nlohmann::json PromptEntry(const nlohmann::json& rec) {
  nlohmann::json p;
  for (const char* k : {"step", "role", "attempt", "round", "prompt_id", "target_prompt_tokens", "prompt_tokens",
                        "prompt_bytes", "prompt_sha256"})
    p[k] = rec[k];
  return p;
}

std::string Fixed(const nlohmann::json& v, const char* f) {
  if (!v.is_number()) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v.get<double>());
  return buf;
}

// "speed: decode/code: decode 62.6 t/s (server 62.9), prefill ..., TTFT 0.21 s, 1 attempt"
std::string StepLine(const nlohmann::json& step) {
  const nlohmann::json& r = step["result"];
  std::string line = "speed: " + step["name"].get<std::string>() + ":";
  auto add = [&](const char* what, const char* client, const char* server) {
    if (!r.contains(client) || !r[client]["median"].is_number()) return;
    line += std::string(" ") + what + " " + Fixed(r[client]["median"], "%.1f") + " t/s";
    if (server && r.contains(server) && r[server]["median"].is_number())
      line += " (server " + Fixed(r[server]["median"], "%.1f") + ")";
    line += ",";
  };
  add("total", "total_tps", nullptr);
  add("decode", "decode_client_tps", "decode_server_tps");
  add("prefill", "prefill_client_tps", "prefill_server_tps");
  line += " TTFT " + Fixed(r["ttft_s"]["median"], "%.3f") + " s";
  if (r.contains("queue_s") && r["queue_s"]["median"].is_number())
    line += " (queue " + Fixed(r["queue_s"]["median"], "%.3f") + " s)";
  line += ", " + std::to_string(step["attempts"].size()) +
          (step["attempts"].size() == 1 ? " attempt" : " attempts");
  if (!step["marks"].empty()) line += "; " + step["marks"].dump();
  return line;
}

uint64_t Nonce() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd() ^
         static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
}

struct Started {
  bool here = false;
};

// The engine up and its limits known.
Status Prepare(const SpeedOptions& o, const ProcedureEnv& env, Started* started, SpeedLimits* limits, nlohmann::json* res) {
  const ServerConfig& server = env.card->server;
  if (env.engine->managed()) {
    if (env.log) env.log("speed: starting the engine (context " + std::to_string(server.context) + ", " +
                           std::to_string(server.slots) + " slots)");
    EVALRUN_RETURN_IF_ERROR(env.engine->Start(server.context, std::max(1, server.slots), env.cancel));
    started->here = true;
  }
  auto t = env.transports();
  ServerProps props;
  EVALRUN_RETURN_IF_ERROR(FetchServerProps(t.get(), server, &props));
  const int slots = server.slots > 0 ? server.slots : std::max(1, props.total_slots);
  const KvCapacity kv = ResolveKvCapacity(server, server.command, server.context, props, t.get());
  limits->n_ctx_slot = props.n_ctx;
  limits->slots = slots;
  limits->kv_shared = kv.shared;
  limits->kv_pool = kv.tokens;
  limits->kv_assumed = kv.assumed;
  (*res)["engine"] = EngineFacts(env, t.get(), props, kv, slots);
  (void)o;
  return Status::Ok();
}

// The cold request (guarded, never repeated: a second one is not cold) and the warm-ups.
Status ColdAndWarmups(const SpeedOptions& o, SpeedRunner* runner, bool cold, const std::string& why,
                      nlohmann::json* cold_record, nlohmann::json* res) {
  const std::string& id = o.prompt_ids[0];
  if (runner->guard()) runner->guard()->Begin();
  Status st = runner->SendSingle("cold", "cold", id, o.decode_prompt_tokens, o.max_tokens, cold_record);
  std::vector<LoadSample> samples = runner->guard() ? runner->guard()->End() : std::vector<LoadSample>{};
  EVALRUN_RETURN_IF_ERROR(st);
  (*cold_record)["_cold"] = cold;
  (*cold_record)["_why"] = why;
  nlohmann::json load = nlohmann::json::array();
  for (const auto& s : samples) load.push_back(s.ToJson());
  (*cold_record)["_load"] = load;
  (*cold_record)["_disturbed"] = runner->guard() ? runner->guard()->Decide(samples).why : std::string();
  for (int i = 0; i < o.warmups; ++i) {
    nlohmann::json w;
    EVALRUN_RETURN_IF_ERROR(runner->SendSingle("warmup", "warmup", o.prompt_ids[i % o.prompt_ids.size()],
                                               o.decode_prompt_tokens, o.max_tokens, &w));
    (*res)["warmups"].push_back(w);
  }
  return Status::Ok();
}

nlohmann::json FinishCold(const nlohmann::json& rec, const nlohmann::json& steps) {
  nlohmann::json c = ColdRow(rec, rec.value("_cold", false), rec.value("_why", ""), steps);
  c["load_samples"] = rec["_load"];
  const std::string d = rec.value("_disturbed", "");
  c["disturbed"] = d.empty() ? nlohmann::json(nullptr) : nlohmann::json(d);
  return c;
}

Status RunPlanned(const SpeedOptions& o, const ProcedureEnv& env, bool cold, const std::string& why, const SpeedLimits& limits,
                  nlohmann::json* res) {
  JsonlAppender samples, bodies;
  EVALRUN_RETURN_IF_ERROR(OpenFresh(env.job_dir + "/speed", "samples.jsonl", &samples));
  EVALRUN_RETURN_IF_ERROR(OpenFresh(env.job_dir + "/speed", "requests.jsonl", &bodies));
  Status write_error = Status::Ok();
  LoadGuard guard(MakeMachineProbe(env.engine->pid(), EnginePort(*env.card, env.engine->origin()), o.guard_ignore, *env.card),
                  o.guard_interval_s, o.guard_threshold_pct, o.guard_samples);
  SpeedRunner::Deps deps;
  deps.senders = StreamingSenders(env.transports, env.card->server);
  deps.tokenizer = env.make_tokenizer ? env.make_tokenizer(env.transports())
                                       : MakeServerTokenizer(env.transports(), env.card->server, false);
  deps.server = env.card->server;
  deps.cancel = env.cancel;
  deps.guard = &guard;
  deps.sink = [&](const nlohmann::json& rec) {
    Status st = samples.Append(rec);
    if (!st.ok() && write_error.ok()) write_error = st;
    (*res)["prompts"].push_back(PromptEntry(rec));
  };
  deps.request_sink = [&](const nlohmann::json& line) {  // not synced line by line: replay material
    Status st = bodies.Write(line);
    if (!st.ok() && write_error.ok()) write_error = st;
  };
  deps.log = env.log;
  deps.nonce = Nonce();
  SpeedRunner runner(o, std::move(deps));
  const std::vector<SpeedStep> plan = PlanSpeedSteps(o, limits);
  for (const SpeedStep& s : plan) {
    if (!s.refused.empty()) {
      (*res)["refused"].push_back(s.refused);
      if (env.log) env.log("speed: " + s.refused);
    } else if (!s.note.empty() && env.log) {
      env.log("speed: " + s.name + ": " + s.note);  // a reduced depth; a level above the slots queues
    }
  }
  nlohmann::json cold_rec;
  Status st = ColdAndWarmups(o, &runner, cold, why, &cold_rec, res);
  for (size_t i = 0; st.ok() && i < plan.size(); ++i) {
    nlohmann::json step;
    st = runner.RunStep(plan[i], &step);
    if (!step.is_null()) (*res)["steps"].push_back(step);
    if (env.log && step["result"].is_object()) env.log(StepLine(step));
  }
  if (cold_rec.is_object()) (*res)["cold"] = FinishCold(cold_rec, (*res)["steps"]);
  if (Status synced = bodies.Sync(); !synced.ok() && write_error.ok()) write_error = synced;
  if (st.ok()) st = write_error;
  return st;
}

}  // namespace

bool MetricsSayCold(const std::string& metrics_text, std::string* why) {
  std::istringstream in(metrics_text);
  std::string line, busy;
  int counters = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.rfind("llamacpp:", 0) != 0) continue;
    const size_t sp = line.find(' ');
    if (sp == std::string::npos) continue;
    const std::string name = line.substr(0, sp);
    if (name.size() < 6 || name.compare(name.size() - 6, 6, "_total") != 0) continue;
    ++counters;
    if (std::strtod(line.c_str() + sp + 1, nullptr) != 0 && busy.empty()) busy = line;
  }
  if (counters == 0) {
    *why = "/metrics has no llamacpp:*_total counters, so whether the server served requests before is unknown";
    return false;
  }
  if (!busy.empty()) {
    *why = "the server had served requests before this part (/metrics: " + busy + ")";
    return false;
  }
  return true;
}

Status RunSpeed(const SpeedOptions& o, const ProcedureEnv& env, nlohmann::json* result) {
  nlohmann::json& res = *result;
  res = NewResult(o);
  Status st = CheckSpeedOptions(o);
  Started started;
  SpeedLimits limits;
  if (st.ok()) st = Prepare(o, env, &started, &limits, &res);
  if (st.ok()) {
    std::string why;
    auto t = env.transports();
    const bool cold = ColdCheck(env, started.here, t.get(), &why);
    st = RunPlanned(o, env, cold, why, limits, &res);
  }
  if (started.here) {
    Status stop = env.engine->Stop();
    if (st.ok() && !stop.ok()) st = stop.Prefixed("speed: stopping the engine");
  }
  res["complete"] = st.ok();
  if (!st.ok()) res["error"] = st.message();
  return st;
}

}  // namespace evalrun
