#include "evals/run/runner.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "datasets/manifest.h"
#include "evals/server/base_url.h"
#include "evals/watch/busy_sampler.h"
#include "evals/run/card.h"
#include "evals/server/engine.h"
#include "evals/base/clock.h"
#include "evals/run/context_check.h"
#include "evals/server/kv_capacity.h"
#include "evals/server/server_watch.h"
#include "evals/watch/gpu_reader.h"
#include "evals/watch/proc_source.h"
#include "evals/server/client.h"
#include "evals/run/job_dir.h"
#include "evals/base/json_diff.h"
#include "evals/base/jsonl.h"
#include "evals/base/json_fields.h"
#include "evals/base/near_miss.h"
#include "evals/run/part.h"
#include "evals/run/part_registry.h"
#include "evals/run/progress.h"
#include "evals/run/request_pool.h"
#include "evals/run/results.h"
#include "evals/run/run_files.h"
#include "evals/server/server_info.h"
#include "evals/server/server_tokenizer.h"

namespace evalrun {
namespace fs = std::filesystem;

std::string DefaultJobName(const std::string& card_name) {
  std::time_t t = std::time(nullptr);
  std::tm tm;
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return card_name + "-" + buf;
}

namespace {

std::string UtcNow() {
  std::time_t t = std::time(nullptr);
  std::tm tm;
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

nlohmann::json HostInfo() {
  nlohmann::json h;
  char name[256] = {0};
  gethostname(name, sizeof name - 1);
  h["hostname"] = name;
  struct utsname u;
  if (uname(&u) == 0) h["kernel"] = std::string(u.sysname) + " " + u.release + " " + u.machine;
  h["cpus"] = sysconf(_SC_NPROCESSORS_ONLN);
  return h;
}

struct PartRun {
  std::string name;
  const PartDefinition* def = nullptr;
  PartSettings settings;  // the card's, narrowed by Part::FitToContext
  std::unique_ptr<Part> part;
  std::unique_ptr<ProcedurePart> procedure;
  PreparedPart prepared;
  std::unordered_map<std::string, int> index_by_id;
  std::string dir;
};

int Fail(FILE* err, const Status& st, int code) {
  std::fprintf(err, "evalrun: %s\n", st.message().c_str());
  return code;
}

// Resolves the parts asked for against the card: the question sets into
// *runs, the procedures into *procedures (null: `score`, which has none).
// Unknown names and names the card lacks are bad input. `flag` names the
// option the names came from ("--parts", "--part").
Status ResolveParts(const Card& card, const std::vector<std::string>& asked, const std::string& flag,
                    std::vector<PartRun>* runs, std::vector<std::string>* notes, std::vector<PartRun>* procedures) {
  std::vector<std::string> names;
  if (asked.empty()) {
    for (const auto& n : KnownPartNames())
      if (card.FindPart(n)) names.push_back(n);
  } else {
    for (const auto& n : asked) {
      if (!FindPartDefinition(n))
        return Status::InvalidInput(flag + ": unknown part \"" + n + "\"" + DidYouMean(n, KnownPartNames()));
      if (!card.FindPart(n))
        return Status::InvalidInput(flag + ": part \"" + n + "\" is not in the card " + card.path +
                                    " (add parts." + n + " to it)");
      names.push_back(n);
    }
  }
  for (const auto& n : names) {
    PartRun r;
    r.name = n;
    r.def = FindPartDefinition(n);
    r.settings = card.FindPart(n)->settings;
    if (r.def->question_set()) {
      r.part = r.def->make_part();
      runs->push_back(std::move(r));
    } else if (procedures) {
      r.procedure = r.def->make_procedure();
      procedures->push_back(std::move(r));
    } else {
      notes->push_back("part " + n + " is not a question set and cannot be re-scored; skipped");
    }
  }
  if (runs->empty() && (!procedures || procedures->empty()))
    return Status::InvalidInput("no part to run (card " + card.path + ")");
  return Status::Ok();
}

// The card's JSON without the question counts: what must not change for a
// job to be resumed.
nlohmann::json RunKey(const Card& card, const std::vector<PartRun>& runs, const ServerProps& props) {
  nlohmann::json doc = nlohmann::json::parse(card.text, nullptr, false);
  if (doc.is_object() && doc.contains("parts")) {
    for (auto& [name, p] : doc["parts"].items()) {
      const PartDefinition* def = FindPartDefinition(name);
      if (!p.is_object() || !def) continue;
      for (const CardKey& k : def->keys)
        if (!k.in_run_key) p.erase(k.name);
    }
  }
  doc.erase("name");
  nlohmann::json key;
  key["card"] = doc;
  nlohmann::json ds = nlohmann::json::object();
  for (const auto& r : runs)
    if (r.prepared.info.contains("dataset")) ds[r.name] = r.prepared.info["dataset"].value("sha256", "");
  key["datasets"] = ds;
  key["build_info"] = props.build_info;
  key["model_path"] = props.model_path;
  return key;
}

// A prompt the server refused as too long: wrong, and neither "no answer"
// nor "cut off" (it is counted apart as too_long).
void MarkTooLong(nlohmann::json* s) {
  (*s)["too_long"] = true;
  for (const char* k : {"no_answer", "cut_off", "null"})
    if (s->contains(k)) (*s)[k] = false;
}

// Re-scores saved sample lines with the current scorer (lines for ids not in
// the prepared items are left out) and returns them in item order.
std::vector<nlohmann::json> RescoreLines(const PartRun& r, const std::vector<nlohmann::json>& lines) {
  std::map<int, nlohmann::json> by_index;
  for (const auto& line : lines) {
    auto it = r.index_by_id.find(line.value("id", std::string()));
    if (it == r.index_by_id.end()) continue;
    nlohmann::json s = line;
    r.part->Score(r.prepared.items[it->second], CompletionFromSample(line), &s);
    if (line.value("too_long", false)) MarkTooLong(&s);
    by_index[it->second] = std::move(s);
  }
  std::vector<nlohmann::json> out;
  for (auto& [i, s] : by_index) out.push_back(std::move(s));
  return out;
}

Status WriteResults(const std::string& job_dir, const Card& card, const std::string& job,
                    const nlohmann::json& parts_done, const nlohmann::json& extra) {
  nlohmann::json res;
  std::string old_text;
  const std::string path = job_dir + "/results.json";
  if (ReadFileToString(path, &old_text).ok()) {
    auto old = nlohmann::json::parse(old_text, nullptr, false);
    if (!old.is_discarded() && old.is_object()) res = old;
  }
  res["schema"] = kResultsSchema;
  res["job"] = job;
  res["card"] = {{"name", card.name}, {"path", card.path}, {"sha256", card.sha256}};
  res["model"] = card.model;
  res["engine"] = card.engine;
  res["hardware"] = card.hardware_raw;
  res["sampling"] = {{"temperature", card.sampling.temperature}, {"top_k", card.sampling.top_k},
                     {"top_p", card.sampling.top_p}, {"seed", card.sampling.seed}};
  res["thinking"] = card.thinking;
  if (!res.contains("parts") || !res["parts"].is_object()) res["parts"] = nlohmann::json::object();
  for (auto& [k, v] : parts_done.items()) res["parts"][k] = v;
  for (auto& [k, v] : extra.items()) res[k] = v;
  return WriteFileAtomically(path, res.dump(2) + "\n");
}

void PrintTable(FILE* out, const std::vector<PartRun>& runs, const nlohmann::json& parts) {
  std::fprintf(out, "\n%-10s %8s %6s %8s %8s %8s %7s\n", "part", "score", "n", "stderr", "cut_off",
               "no_ans", "failed");
  for (const auto& r : runs) {
    if (!parts.contains(r.name)) continue;
    const auto& p = parts[r.name];
    auto num = [&](const char* k) { return p.contains(k) && p[k].is_number() ? p[k].get<double>() : 0.0; };
    // RULER reports on its own 0-100 scale; the others are fractions.
    const double scale = p.contains("score_scale") ? 1.0 : 100.0;
    std::fprintf(out, "%-10s %7.2f%% %6d %7.2f%% %8d %8d %7d\n", r.name.c_str(), scale * num("score"),
                 static_cast<int>(num("n")), scale * num("stderr"), static_cast<int>(num("cut_off")),
                 static_cast<int>(num("no_answer")), static_cast<int>(num("failed")));
  }
}

// The method's fixed rules, applied to every request: the card's sampling
// (greedy by default) and the thinking switch.
Prompt WithCardSampling(Prompt p, const Card& card) {
  p.params.temperature = card.sampling.temperature;
  p.params.top_k = card.sampling.top_k;
  p.params.top_p = card.sampling.top_p;
  p.params.seed = card.sampling.seed;
  p.params.enable_thinking = card.thinking;
  return p;
}

// The port of a server on this machine (loopback), for finding the engine's
// processes; 0 for a remote server or when none is given.
int LocalPort(const std::string& origin) {
  auto host_start = origin.find("://");
  std::string hostport = origin.substr(host_start == std::string::npos ? 0 : host_start + 3);
  auto colon = hostport.rfind(':');
  std::string host = colon == std::string::npos ? hostport : hostport.substr(0, colon);
  bool local = host == "localhost" || host.rfind("127.", 0) == 0 || host == "[::1]" || host == "0.0.0.0";
  if (!local) return 0;
  if (colon == std::string::npos) return origin.rfind("https", 0) == 0 ? 443 : 80;
  return std::atoi(hostport.c_str() + colon + 1);
}

// The GPU the card names (hardware.gpu_uuid or gpu_index); kNone when none.
GpuSelector CardGpu(const Card& card) {
  GpuSelector g;
  if (!card.hardware.gpu_uuid.empty()) {
    GpuSelector::Parse(card.hardware.gpu_uuid, &g);
  } else if (card.hardware.gpu_index) {
    g.kind = GpuSelector::Kind::kIndex;
    g.index = *card.hardware.gpu_index;
  }
  return g;
}

// The machine-noise sampler of a run: busy processes and the card's GPU,
// one line a sample in <job>/load.jsonl.
class NoiseLog {
 public:
  NoiseLog(const Card& card, const std::string& origin, const std::string& path, int engine_pid, FILE* err)
      : runner_(), gpu_(&runner_) {
    BusySamplerOptions o;
    o.interval_s = card.load_sampling.interval_s;
    o.top_n = card.load_sampling.top;
    o.threshold_pct = card.load_sampling.threshold_pct;
    o.ignore = card.load_sampling.ignore;
    o.guard = card.load_sampling.guard;
    o.guard_max_wait_s = card.load_sampling.guard_max_wait_s;
    o.engine_port = LocalPort(origin);
    o.engine_pid = engine_pid;
    o.gpu = CardGpu(card);
    file_ = std::fopen(path.c_str(), "a");
    if (!file_) std::fprintf(err, "evalrun: warning: %s: cannot write the load samples\n", path.c_str());
    sampler_ = std::make_unique<BusySampler>(o, &proc_, o.gpu.kind == GpuSelector::Kind::kNone ? nullptr : &gpu_,
                                             RealClock::Default(), [this](const std::string& line) {
                                               if (!file_) return;
                                               std::fputs(line.c_str(), file_);
                                               std::fputc('\n', file_);
                                               std::fflush(file_);
                                             });
    sampler_->Start();
    std::string report = sampler_->StartReport();
    if (!report.empty()) std::fprintf(err, "evalrun: %s\n", report.c_str());
  }
  ~NoiseLog() {
    sampler_->Stop();
    if (file_) std::fclose(file_);
  }
  BusySampler* sampler() { return sampler_.get(); }

 private:
  RealProcSource proc_;
  RealCommandRunner runner_;
  GpuReader gpu_;
  FILE* file_ = nullptr;
  std::unique_ptr<BusySampler> sampler_;
};

}  // namespace

int RunJob(const RunOptions& opts, CancelToken* cancel, FILE* out, FILE* err) {
  Card card;
  Status st = LoadCard(opts.card_path, &card);
  if (!st.ok()) return Fail(err, st, kExitBadInput);
  if (!opts.base_url.empty()) {
    st = CheckBaseUrl(opts.base_url, &card.server.base_url);
    if (!st.ok()) return Fail(err, st.Prefixed("--base-url"), kExitBadInput);
  }
  std::vector<PartRun> runs, procedures;
  std::vector<std::string> notes;
  st = ResolveParts(card, opts.parts, "--parts", &runs, &notes, &procedures);
  if (!st.ok()) return Fail(err, st, kExitBadInput);
  for (const auto& n : notes) std::fprintf(err, "evalrun: note: %s\n", n.c_str());
  const bool managed = !card.server.command.empty();
  if (managed && !runs.empty() && (card.server.context <= 0 || card.server.slots <= 0))
    return Fail(err, Status::InvalidInput(card.path + ": server.command is set: the question parts need "
                                          "server.context (the engine's {context}) and a number in server.slots"),
                kExitBadInput);

  const std::string data_dir = opts.data_dir.empty() ? DefaultDataDir() : opts.data_dir;
  // The job folder, locked for this process (evals/run/job_dir.h); removed
  // again on a failure before run.json is written.
  JobDir claimed;
  st = claimed.Open(opts.out_dir, opts.job, DefaultJobName(card.name));
  if (!st.ok()) return Fail(err, st, kExitBadInput);
  const std::string job = claimed.job();
  const std::string job_dir = claimed.path();

  // Resume or new: an existing job is continued, never overwritten.
  std::string old_run_text;
  const bool resuming = ReadFileToString(job_dir + "/run.json", &old_run_text).ok();
  if (access(job_dir.c_str(), W_OK) != 0)
    return Fail(err, Status::InvalidInput(job_dir + ": output folder is not writable"), kExitBadInput);

  std::string token;
  if (!card.server.api_key_env.empty()) {
    const char* t = std::getenv(card.server.api_key_env.c_str());
    if (!t || !*t)
      return Fail(err, Status::InvalidInput(card.path + ": server.api_key_env: the environment variable " +
                                            card.server.api_key_env + " is not set"), kExitBadInput);
    token = t;
  }

  // Everything that needs no server is validated before any request.
  PartContext base;
  base.card = &card;
  base.data_dir = data_dir;
  base.limit = opts.limit;
  for (auto& r : runs) {
    if (r.def->needs_tokenizer) continue;
    PartContext ctx = base;
    ctx.settings = &r.settings;
    st = r.part->Prepare(ctx, &r.prepared);
    if (!st.ok()) return Fail(err, st.Prefixed("part " + r.name), kExitBadInput);
  }
  for (auto& r : procedures) {
    PartContext ctx = base;
    ctx.settings = &r.settings;
    st = r.procedure->Check(ctx);
    if (!st.ok()) return Fail(err, st.Prefixed("part " + r.name), kExitBadInput);
  }

  const std::string origin = card.server.Origin();
  // The engine: started (and always stopped) by evalrun when the card gives
  // server.command; else the server at base_url, used as is.
  std::unique_ptr<Engine> engine = MakeEngine(card.server, job_dir + "/server.log", token);
  auto transport = MakeHttpTransport(origin, token);
  ServerProps props;
  if (!runs.empty() || !managed) {
    if (managed) {
      std::fprintf(err, "evalrun: starting the engine (context %lld, %d slots); log: %s\n",
                   static_cast<long long>(card.server.context), card.server.slots, engine->log_path().c_str());
      st = engine->Start(card.server.context, card.server.slots, cancel);
      if (st.code() == Status::Code::kCancelled) return Fail(err, st, kExitInterrupted);
      if (!st.ok()) return Fail(err, st.Prefixed("engine"), kExitUnreachable);
    }
    std::string log;
    std::fprintf(err, "evalrun: waiting for %s (up to %.0f s)\n", origin.c_str(), card.server.ready_timeout_s);
    st = WaitUntilReady(transport.get(), card.server, card.server.ready_timeout_s, cancel, &log);
    if (!log.empty()) std::fprintf(err, "evalrun: %s", log.c_str());
    if (st.code() == Status::Code::kCancelled) return Fail(err, st, kExitInterrupted);
    if (!st.ok()) return Fail(err, st, kExitUnreachable);
    st = FetchServerProps(transport.get(), card.server, &props);
    if (!st.ok()) return Fail(err, st, kExitUnreachable);
  }

  int slots = card.server.slots;
  if (slots == 0 && runs.empty()) {
    slots = 1;
  } else if (slots == 0) {
    if (props.total_slots <= 0)
      return Fail(err, Status::InvalidInput(card.path + ": server.slots is \"auto\" but " + origin +
                                            "/props gives no total_slots; set server.slots to a number"),
                  kExitBadInput);
    slots = props.total_slots;
  } else if (props.total_slots > 0 && props.total_slots != slots) {
    std::fprintf(err, "evalrun: warning: the card says %d slots but the server has %d (GET /props total_slots); "
                 "using %d\n", slots, props.total_slots, slots);
  }

  // The context one request can have: every length and counted prompt is
  // checked against it before any request (evals/run/context_check.h).
  const int64_t request_ctx = props.n_ctx;
  std::map<std::string, ContextFit> fits;
  for (auto& r : runs) {
    ContextFit& fit = fits[r.name];
    st = r.part->FitToContext(request_ctx, &r.settings, &fit);
    for (const auto& s : fit.skipped)
      std::fprintf(err, "evalrun: %s: skipped: %s\n", r.name.c_str(), s["reason"].get<std::string>().c_str());
    if (!st.ok()) return Fail(err, Status::InvalidInput(card.path + ": " + st.message()), kExitBadInput);
  }

  for (auto& r : runs) {
    if (!r.def->needs_tokenizer) continue;
    // Parts that size prompts with the server's tokenizer are prepared now.
    PartContext ctx = base;
    ctx.settings = &r.settings;
    std::unique_ptr<Tokenizer> tok = MakeServerTokenizer(MakeHttpTransport(origin, token), card.server, card.thinking);
    int probe = 0;
    Status tst = tok->Count("probe", &probe);
    if (!tst.ok()) {
      if (!AcceptsEstimatedTokens(*r.def, r.settings))
        return Fail(err,
                    Status::Unavailable("part " + r.name + ": " + tst.message() + ". Set parts." + r.name + "." +
                                        kAllowEstimatedTokensKey + " to use a byte-based estimate with a safety "
                                        "margin instead"),
                    kExitUnreachable);
      std::fprintf(err, "evalrun: %s: warning: %s; using the byte-based estimate with a safety margin "
                   "(parts.%s.%s)\n", r.name.c_str(), tst.message().c_str(), r.name.c_str(), kAllowEstimatedTokensKey);
      tok = MakeEstimatingTokenizer();
    }
    ctx.tokenizer = tok.get();
    std::fprintf(err, "evalrun: %s: preparing prompts with the server's tokenizer\n", r.name.c_str());
    st = r.part->Prepare(ctx, &r.prepared);
    if (!st.ok()) return Fail(err, st.Prefixed("part " + r.name), kExitBadInput);
  }
  for (auto& r : runs) {
    ContextFit& fit = fits[r.name];
    nlohmann::json& skipped = fit.skipped;
    st = CheckItemsFit(r.name, request_ctx, fit.skip_items, &r.prepared.items, &skipped);
    if (!st.ok()) return Fail(err, st, kExitBadInput);
    if (!skipped.empty()) {
      nlohmann::json& info_skipped = r.prepared.info["skipped"];
      if (!info_skipped.is_array()) info_skipped = nlohmann::json::array();
      for (const auto& s : skipped) info_skipped.push_back(s);
    }
    for (size_t i = 0; i < r.prepared.items.size(); ++i) r.index_by_id[r.prepared.items[i].id] = static_cast<int>(i);
    for (const auto& n : r.prepared.notes) std::fprintf(err, "evalrun: %s: %s\n", r.name.c_str(), n.c_str());
    r.dir = job_dir + "/" + r.name;
  }

  nlohmann::json run_key = RunKey(card, runs, props);
  nlohmann::json run_json;
  if (resuming) {
    run_json = nlohmann::json::parse(old_run_text, nullptr, false);
    if (run_json.is_discarded() || !run_json.is_object())
      return Fail(err, Status::InvalidInput(job_dir + "/run.json: not valid JSON; cannot resume"), kExitBadInput);
    const nlohmann::json old_key = run_json.value("run_key", nlohmann::json());
    if (old_key != run_key) {
      std::string changes;
      for (const auto& c : JsonChanges(old_key, run_key)) changes += "\n  " + c;
      if (!opts.force_resume)
        return Fail(err, Status::InvalidInput(
                        job_dir + ": the job was started with another card, dataset or server build/model "
                        "(run key differs: old -> new):" + changes + "\nrefusing to resume. Use another --job, "
                        "or --force-resume to continue anyway"),
                    kExitBadInput);
      std::fprintf(err, "evalrun: warning: resuming although the run key differs (--force-resume):%s\n",
                   changes.c_str());
    }
  } else {
    run_json["card"] = nlohmann::json::parse(card.text, nullptr, false);
    run_json["card_path"] = card.path;
    run_json["card_sha256"] = card.sha256;
    run_json["evalrun"] = {{"version", EVALRUN_VERSION}, {"git_sha", EVALRUN_GIT_SHA}};
    run_json["host"] = HostInfo();
    run_json["started_utc"] = UtcNow();
  }
  run_json["run_key"] = run_key;
  run_json["server"] = props.ToJson();
  run_json["server"]["base_url"] = card.server.base_url;
  run_json["slots"] = slots;
  run_json["data_dir"] = data_dir;
  if (!resuming) {
    st = WriteFileAtomically(job_dir + "/run.json", run_json.dump(2) + "\n");
    if (!st.ok()) return Fail(err, st, kExitBadInput);
  }
  claimed.Keep();

  // What is already answered, every part read (and checked) before any
  // request; a torn last line is cut off and asked again.
  std::vector<SampleFileContents> existing_by_part(runs.size());
  std::string done_summary;
  for (size_t k = 0; k < runs.size(); ++k) {
    PartRun& r = runs[k];
    st = LoadSampleFile(r.dir + "/samples.jsonl", &existing_by_part[k]);
    if (!st.ok()) return Fail(err, st, kExitBadInput);
    if (existing_by_part[k].dropped_torn_tail)
      std::fprintf(err, "evalrun: %s: dropped a torn last line of samples.jsonl (a crash mid-write); "
                   "that question is asked again\n", r.name.c_str());
    std::set<std::string> done;
    for (const auto& l : existing_by_part[k].lines)
      if (r.index_by_id.count(l["id"].get<std::string>())) done.insert(l["id"].get<std::string>());
    done_summary += (k ? ", " : "") + r.name + " " + std::to_string(done.size()) + " of " +
                    std::to_string(r.prepared.items.size());
  }
  if (resuming)
    std::fprintf(err, "evalrun: resuming job %s: answered before: %s\n", job.c_str(),
                 runs.empty() ? "(no question set)" : done_summary.c_str());

  NoiseLog noise(card, origin, job_dir + "/load.jsonl", managed ? static_cast<int>(engine->pid()) : 0, err);
  std::function<bool()> pause;
  if (card.load_sampling.guard) pause = [&] { return noise.sampler()->ShouldPause(); };

  RetryPolicy retry;
  retry.retries = card.server.retries;
  ClientFactory make_client = [&]() -> std::unique_ptr<Client> {
    return std::make_unique<OpenAiClient>(
        MakeHttpTransport(origin, token, static_cast<size_t>(card.server.max_reply_mb) << 20), card.server, retry, cancel);
  };
  // The server may go away and come back mid-run: the pool waits for it and
  // checks that it still serves the same model (evals/server/server_watch.h).
  HttpServerWatch watch([&] { return MakeHttpTransport(origin, token); }, card.server, props,
                        card.server.ready_timeout_s,
                        [&](const std::string& line) { std::fprintf(err, "\nevalrun: %s\n", line.c_str()); });
  // Whether the slots share one KV cache (evals/server/kv_capacity.h).
  const KvCapacity kv = ResolveKvCapacity(card.server, managed ? card.server.command : std::vector<std::string>(),
                                          card.server.context, props, transport.get());

  const bool tty = isatty(fileno(err));
  nlohmann::json parts_done = nlohmann::json::object();
  int total_failed = 0;
  bool interrupted = false;
  for (auto& r : runs) {
    if (cancel->cancelled()) break;
    st = MakeDirs(r.dir);
    if (!st.ok()) return Fail(err, st, kExitBadInput);
    const SampleFileContents& existing = existing_by_part[&r - runs.data()];
    std::set<std::string> answered;
    for (const auto& l : existing.lines) answered.insert(l.value("id", std::string()));

    std::vector<size_t> order;
    for (size_t i = 0; i < r.prepared.items.size(); ++i)
      if (!answered.count(r.prepared.items[i].id)) order.push_back(i);
    // Each prompt is made whole (read back from the spool) only when sent.
    const PromptSource prompts = [&](size_t i, Prompt* p) {
      EVALRUN_RETURN_IF_ERROR(LoadItemPrompt(r.prepared, r.prepared.items[i], p));
      *p = WithCardSampling(std::move(*p), card);
      return Status::Ok();
    };
    JsonlAppender samples, failures;
    st = samples.Open(r.dir + "/samples.jsonl");
    if (st.ok()) st = failures.Open(r.dir + "/failed.jsonl");
    if (!st.ok()) return Fail(err, st, kExitBadInput);

    PoolOptions pool_opts;
    pool_opts.watch = &watch;
    int64_t largest_reserve = 0;
    for (const Item& item : r.prepared.items) {
      pool_opts.reserve_tokens.push_back(ReserveTokens(item));
      largest_reserve = std::max(largest_reserve, pool_opts.reserve_tokens.back());
    }
    // Admission matters only when the slots together could outgrow the cache.
    const bool admission = kv.shared && kv.tokens > 0 && largest_reserve * std::min<int64_t>(slots, order.size()) > kv.tokens;
    if (admission) {
      pool_opts.kv_capacity_tokens = kv.tokens;
      std::fprintf(err, "evalrun: %s: the %d slots share one KV cache of %lld tokens (%s): a request starts only "
                   "when its prompt + max_tokens fit beside those in flight%s\n",
                   r.name.c_str(), slots, static_cast<long long>(kv.tokens), kv.source.c_str(),
                   kv.assumed ? ". If each slot has a cache of its own (llama-server -np without --kv-unified), "
                                "set server.kv_cache to \"per_slot\" in the card"
                              : "");
    }
    RequestPool pool(slots, make_client, pool_opts);
    Progress progress(r.name, static_cast<int>(r.prepared.items.size()),
                      static_cast<int>(r.prepared.items.size() - order.size()), slots, &pool.stats(), err, tty);
    progress.Start();
    std::vector<nlohmann::json> lines = existing.lines;
    int failed = 0;
    Status write_error;
    // Lines are written as answers arrive and made durable once per batch
    // (a group commit, see RequestPool::Run); an answer counts (progress,
    // results) only after the fsync that follows its line.
    struct Counted {
      double score;
      bool cut_off, failed;
    };
    std::vector<Counted> unsynced;
    auto keep_error = [&](const Status& ws) {
      if (ws.ok()) return;
      if (write_error.ok()) write_error = ws;
      cancel->Cancel();  // nothing more is asked when answers cannot be kept
    };
    int too_long = 0;
    auto on_answer = [&](size_t i, const CallResult& res) {
      const Item& item = r.prepared.items[i];
      if (res.status == CallStatus::kCancelled || !write_error.ok()) return;
      if (res.status == CallStatus::kTooLong) {
        // The server refused the prompt as longer than its context: wrong,
        // counted apart, never asked again (it would be refused again).
        ++too_long;
        CallResult empty = res;
        empty.completion = Completion();
        empty.completion.finish_reason = "too_long";
        nlohmann::json s = CommonSampleFields(item, empty);
        r.part->Score(item, empty.completion, &s);
        MarkTooLong(&s);
        s["error"] = res.error;
        if (res.too_long_prompt_tokens >= 0) s["server_prompt_tokens"] = res.too_long_prompt_tokens;
        if (res.too_long_n_ctx >= 0) s["server_n_ctx"] = res.too_long_n_ctx;
        Status ws = samples.Write(s);
        keep_error(ws);
        if (!ws.ok()) return;
        lines.push_back(s);
        unsynced.push_back({0, false, false});
        return;
      }
      if (res.status == CallStatus::kFailed) {
        ++failed;
        nlohmann::json f = {{"id", item.id}, {"error", res.error}, {"attempts", res.attempts},
                            {"http_status", res.http_status}, {"time_utc", UtcNow()}};
        keep_error(failures.Write(f));
        unsynced.push_back({0, false, true});
        return;
      }
      nlohmann::json s = CommonSampleFields(item, res);
      r.part->Score(item, res.completion, &s);
      Status ws = samples.Write(s);
      keep_error(ws);
      if (!ws.ok()) return;
      lines.push_back(s);
      double score = s.contains("score") && s["score"].is_number() ? s["score"].get<double>()
                     : s.value("correct", false) ? 1.0 : 0.0;
      unsynced.push_back({score, s.value("cut_off", false), false});
    };
    auto on_batch_end = [&] {
      keep_error(samples.Sync());
      keep_error(failures.Sync());
      if (write_error.ok())
        for (const Counted& c : unsynced) progress.OnAnswer(c.score, c.cut_off, c.failed);
      unsynced.clear();
    };
    pool.Run(r.prepared.items.size(), prompts, order, on_answer, cancel, pause, on_batch_end);
    progress.Finish();
    if (!write_error.ok()) return Fail(err, write_error, kExitIncomplete);

    std::vector<nlohmann::json> scored = RescoreLines(r, lines);
    nlohmann::json result = r.part->Aggregate(scored, failed, r.prepared);
    result["info"] = r.prepared.info;
    result["planned"] = r.prepared.items.size();
    result["complete"] = scored.size() == r.prepared.items.size();
    result["max_in_flight"] = pool.stats().max_in_flight.load();
    result["slots"] = slots;
    int too_long_total = 0;
    for (const auto& l : scored) too_long_total += l.value("too_long", false);
    result["too_long"] = too_long_total;
    nlohmann::json adm = kv.ToJson();
    adm["admission"] = admission;
    adm["capacity_final_tokens"] = admission ? nlohmann::json(pool.capacity_tokens()) : nlohmann::json();
    adm["effective_concurrency"] = Round(pool.mean_in_flight(), 2);
    adm["max_in_flight"] = pool.stats().max_in_flight.load();
    adm["admission_waits"] = pool.stats().admission_waits.load();
    adm["admission_wait_s"] = Round(pool.stats().admission_wait_us.load() / 1e6, 3);
    adm["capacity_returns"] = pool.stats().capacity_returns.load();
    adm["capacity_tightenings"] = pool.stats().tightenings.load();
    result["admission"] = adm;
    nlohmann::json outages = nlohmann::json::array();
    for (const Outage& o : pool.outages())
      outages.push_back({{"started_utc", o.started_utc}, {"seconds", Round(o.seconds, 1)}, {"requeued", o.requeued},
                         {"recovered", o.recovered}, {"error", o.error.empty() ? nlohmann::json() : nlohmann::json(o.error)}});
    result["outages"] = outages;
    if (too_long > 0)
      std::fprintf(err, "evalrun: %s: %d prompts were longer than the server's context (HTTP 400); counted as "
                   "too_long and wrong, not asked again\n", r.name.c_str(), too_long);
    parts_done[r.name] = result;
    total_failed += failed;
    if (cancel->cancelled()) interrupted = true;
    nlohmann::json extra = {{"finished_utc", UtcNow()}, {"server", props.ToJson()},
                            {"noise", noise.sampler()->Summary()}};
    st = WriteResults(job_dir, card, job, parts_done, extra);
    if (!st.ok()) return Fail(err, st, kExitIncomplete);
    const Status stopped = pool.stop_status();
    if (!stopped.ok()) {
      // The server changed model or build, or never came back: what was
      // answered is kept (results.json says how far it got); resumable.
      std::fprintf(err, "evalrun: %s: %s\n", r.name.c_str(), stopped.message().c_str());
      if (managed) engine->Stop();
      return stopped.code() == Status::Code::kChanged ? kExitIncomplete : kExitUnreachable;
    }
  }
  if (managed && !runs.empty()) {
    st = engine->Stop();
    if (!st.ok()) std::fprintf(err, "evalrun: warning: engine: %s\n", st.message().c_str());
  }
  for (auto& r : procedures) {
    if (cancel->cancelled()) break;
    // A procedure (fit): the engine restarted at each step (or the running
    // server used as is), GPU memory read at its peak per step.
    RealCommandRunner smi_runner;
    GpuReader smi(&smi_runner);
    GpuSelector gpu_sel = CardGpu(card);
    ProcedureEnv env;
    env.card = &card;
    env.settings = &r.settings;
    env.data_dir = data_dir;
    env.engine = engine.get();
    env.transports = [&] { return MakeHttpTransport(origin, token); };
    env.cancel = cancel;
    if (gpu_sel.kind != GpuSelector::Kind::kNone) {
      env.gpu_mem_mib = [&]() -> std::optional<double> {
        GpuInfo g;
        if (!smi.Read(gpu_sel, &g).ok()) return std::nullopt;
        return g.mem_used_mib;
      };
    }
    env.make_tokenizer = [&](std::unique_ptr<HttpTransport> t) {
      return MakeServerTokenizer(std::move(t), card.server, card.thinking);
    };
    env.log = [&](const std::string& l) { std::fprintf(err, "evalrun: %s\n", l.c_str()); };
    nlohmann::json result;
    st = r.procedure->Run(env, &result);
    if (st.code() == Status::Code::kCancelled) interrupted = true;
    else if (!st.ok()) return Fail(err, st.Prefixed("part " + r.name), kExitUnreachable);
    parts_done[r.name] = result;
    st = WriteResults(job_dir, card, job, parts_done,
                      {{"finished_utc", UtcNow()}, {"noise", noise.sampler()->Summary()}});
    if (!st.ok()) return Fail(err, st, kExitIncomplete);
    const std::string headline = r.procedure->Headline(result);
    if (!headline.empty()) std::fprintf(out, "\n%s\n", headline.c_str());
  }
  PrintTable(out, runs, parts_done);
  std::fprintf(out, "\nmachine noise: %s\n", noise.sampler()->SummaryLine().c_str());
  std::fprintf(out, "results: %s/results.json\n", job_dir.c_str());
  if (interrupted || cancel->cancelled()) {
    std::fprintf(err, "evalrun: interrupted; answers are kept. Resume with the same command and --job %s\n",
                 job.c_str());
    return kExitInterrupted;
  }
  if (total_failed > card.max_failed) {
    std::fprintf(err, "evalrun: %d requests failed (tolerance max_failed = %d); see */failed.jsonl. "
                 "Run the same command with --job %s to ask them again\n", total_failed, card.max_failed, job.c_str());
    return kExitIncomplete;
  }
  return kExitOk;
}

int ScoreJob(const ScoreOptions& opts, FILE* out, FILE* err) {
  Card card;
  Status st = LoadCard(opts.card_path, &card);
  if (!st.ok()) return Fail(err, st, kExitBadInput);
  std::vector<PartRun> runs;
  std::vector<std::string> notes;
  st = ResolveParts(card, {opts.part}, "--part", &runs, &notes, nullptr);
  if (!st.ok()) return Fail(err, st, kExitBadInput);
  PartRun& r = runs[0];
  if (r.def->needs_tokenizer)
    return Fail(err, Status::InvalidInput("part " + r.name + " cannot be re-scored without its prompts' server; "
                                          "re-score a run folder instead"), kExitBadInput);
  PartContext ctx;
  ctx.card = &card;
  ctx.settings = &r.settings;
  ctx.data_dir = opts.data_dir.empty() ? DefaultDataDir() : opts.data_dir;
  ctx.all_items = true;
  ctx.input_override = opts.input_path;
  st = r.part->Prepare(ctx, &r.prepared);
  if (!st.ok()) return Fail(err, st.Prefixed("part " + r.name), kExitBadInput);
  for (size_t i = 0; i < r.prepared.items.size(); ++i) r.index_by_id[r.prepared.items[i].id] = static_cast<int>(i);

  std::string text;
  st = ReadFileToString(opts.responses_path, &text);
  if (!st.ok()) return Fail(err, st, kExitBadInput);
  std::map<int, nlohmann::json> by_index;
  st = ParseJsonl(text, opts.responses_path, [&](int line, const nlohmann::json& j) {
    std::string where = opts.responses_path + ":" + std::to_string(line);
    if (!j.is_object()) return Status::InvalidInput(where + ": expected a JSON object");
    std::string why;
    int idx = r.part->FindItem(j, r.index_by_id, &why);
    if (idx < 0 && !why.empty()) return Status::InvalidInput(where + ": " + why);
    if (idx < 0)
      return Status::InvalidInput(where + ": no question of part " + r.name + " matches this line (id " +
                                  (j.contains("id") ? j["id"].dump() : std::string("missing")) + ")");
    if (!j.contains("response") || !j["response"].is_string())
      return Status::InvalidInput(where + ": response: expected a string");
    CallResult res;
    res.status = CallStatus::kOk;
    res.completion.content = j["response"].get<std::string>();
    res.completion.finish_reason = j.value("finish_reason", std::string("stop"));
    res.completion.reasoning = j.value("reasoning", std::string());
    const Item& item = r.prepared.items[idx];
    nlohmann::json s = CommonSampleFields(item, res);
    s.erase("latency_ms");
    s.erase("attempts");
    r.part->Score(item, res.completion, &s);
    by_index[idx] = std::move(s);
    return Status::Ok();
  });
  if (!st.ok()) return Fail(err, st, kExitBadInput);

  const std::string job = opts.job.empty() ? DefaultJobName(card.name + "-score") : opts.job;
  const std::string job_dir = opts.out_dir + "/" + job;
  const std::string part_dir = job_dir + "/" + r.name;
  if (fs::exists(part_dir + "/samples.jsonl"))
    return Fail(err, Status::InvalidInput(part_dir + "/samples.jsonl exists; choose another --job"), kExitBadInput);
  st = MakeDirs(part_dir);
  if (!st.ok()) return Fail(err, Status::InvalidInput(st.message()), kExitBadInput);
  std::string body;
  std::vector<nlohmann::json> scored;
  for (auto& [i, s] : by_index) {
    body += DumpLine(s) + "\n";
    scored.push_back(s);
  }
  st = WriteFileAtomically(part_dir + "/samples.jsonl", body);
  if (!st.ok()) return Fail(err, st, kExitBadInput);
  nlohmann::json result = r.part->Aggregate(scored, 0, r.prepared);
  result["info"] = r.prepared.info;
  result["info"].erase("ids");
  result["responses"] = opts.responses_path;
  nlohmann::json parts_done = {{r.name, result}};
  st = WriteResults(job_dir, card, job, parts_done, {{"scored_utc", UtcNow()}});
  if (!st.ok()) return Fail(err, st, kExitBadInput);
  PrintTable(out, runs, parts_done);
  std::fprintf(out, "\nresults: %s/results.json\n", job_dir.c_str());
  return kExitOk;
}

}  // namespace evalrun
