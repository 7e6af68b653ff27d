// A job's identity across resumes: the run key (the card without the counts
// a resumed job may change, the datasets' sha256, the server's build and
// model), run.json, and what every part has answered already.
#include <sys/utsname.h>
#include <unistd.h>

#include <iterator>
#include <set>

#include "evals/base/build_version.h"
#include "evals/base/json_bounds.h"
#include "evals/base/exit_codes.h"
#include "evals/base/json_diff.h"
#include "evals/run/rescore_stored.h"
#include "evals/run/run_files.h"
#include "evals/run/run_steps.h"
#include "evals/run/sample_codec.h"
#include "evals/run/utc_now.h"

namespace evalrun::run_internal {
namespace {

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

}  // namespace

// The card's JSON without the keys its parts leave out of the run key
// (CardKey::in_run_key: the question counts), what must not change for a
// job to be resumed.
nlohmann::json RunKey(const Job& job, const Server& server) {
  const ServerProps& props = server.props;
  nlohmann::json doc = ParseJsonOrDiscarded(job.card.text);
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
  for (const auto& r : job.parts)
    if (r.prepared.info.contains("dataset")) ds[r.name] = r.prepared.info["dataset"].value("sha256", "");
  key["datasets"] = ds;
  key["build_info"] = props.build_info;
  key["model_path"] = props.model_path;
  // Several endpoints: every one's build and model (one endpoint keeps the
  // key it always had, so that its jobs still resume).
  if (server.endpoints.size() > 1) {
    nlohmann::json eps = nlohmann::json::array();
    for (const auto& ep : server.endpoints)
      eps.push_back({{"base_url", ep.config.base_url}, {"build_info", ep.props.build_info},
                     {"model_path", ep.props.model_path}});
    key["endpoints"] = eps;
  }
  return key;
}

namespace {

// `key` without the datasets of parts that `other` does not run: a part
// added to a job (or left out of this run) has no dataset to disagree on.
nlohmann::json ComparableKey(nlohmann::json key, const nlohmann::json& other) {
  if (!key.is_object() || !other.is_object() || !key.contains("datasets") || !other.contains("datasets")) return key;
  nlohmann::json& mine = key["datasets"];
  const nlohmann::json& theirs = other["datasets"];
  if (!mine.is_object() || !theirs.is_object()) return key;
  for (auto it = mine.begin(); it != mine.end();) it = theirs.contains(it.key()) ? std::next(it) : mine.erase(it);
  return key;
}

// The run key a resumed job keeps: this run's, with the datasets of the
// parts run before and not now.
nlohmann::json KeptRunKey(const nlohmann::json& old_key, nlohmann::json run_key) {
  if (!old_key.is_object() || !old_key.contains("datasets") || !old_key["datasets"].is_object()) return run_key;
  for (const auto& [part, sha] : old_key["datasets"].items())
    if (!run_key["datasets"].contains(part)) run_key["datasets"][part] = sha;
  return run_key;
}

// What each part of this run records in run.json: its effective request
// settings (the card's defaults with the part's own keys over them) and,
// where it runs model-written code, its sandbox level and interpreter. A
// part recorded before (a resumed job's) keeps its record; true when any
// part was added.
bool RecordParts(const Job& job, nlohmann::json* run_json) {
  nlohmann::json& requests = (*run_json)["part_requests"];
  if (!requests.is_object()) requests = nlohmann::json::object();
  bool added = false;
  for (const auto* list : {&job.parts, &job.procedures})
    for (const PartRun& r : *list) {
      if (requests.contains(r.name)) continue;
      requests[r.name] = r.request.ToJson();
      if (r.prepared.info.contains("sandbox")) (*run_json)["sandbox"][r.name] = r.prepared.info["sandbox"];
      added = true;
    }
  return added;
}

// A resumed job's run.json as it was, but where this run adds parts: their
// datasets join its run key and their records its part_requests (and
// sandbox), so that a later resume checks them too.
StepExit ExtendRunJson(Job* job, const nlohmann::json& run_key, nlohmann::json run_json, FILE* err) {
  const nlohmann::json kept = KeptRunKey(run_json.value("run_key", nlohmann::json()), run_key);
  const bool parts_added = RecordParts(*job, &run_json);
  if (parts_added || kept != run_json.value("run_key", nlohmann::json())) {
    run_json["run_key"] = kept;
    Status st = WriteFileAtomically(job->dir.path() + "/run.json", run_json.dump(2) + "\n");
    if (!st.ok()) return Stop(err, st, kExitBadInput);
  }
  job->dir.Keep();
  return std::nullopt;
}

// A resumed job's run.json, its run key compared with this run's: the
// datasets of the parts both run (a job may be extended by another --parts).
// A job's run.json then keeps every part's dataset (KeptRunKey).
StepExit CheckResume(const Job& job, const nlohmann::json& run_key, nlohmann::json* run_json, FILE* err) {
  const std::string& dir = job.dir.path();
  if (Status b = CheckJsonBounds(job.old_run_text, dir + "/run.json"); !b.ok())
    return Stop(err, b.Prefixed("cannot resume"), kExitBadInput);
  *run_json = nlohmann::json::parse(job.old_run_text, nullptr, false);
  if (run_json->is_discarded() || !run_json->is_object())
    return Stop(err, Status::InvalidInput(dir + "/run.json: not valid JSON; cannot resume"), kExitBadInput);
  const nlohmann::json old_key = ComparableKey(run_json->value("run_key", nlohmann::json()), run_key);
  const nlohmann::json new_key = ComparableKey(run_key, old_key);
  if (old_key == new_key) return std::nullopt;
  std::string changes;
  for (const auto& c : JsonChanges(old_key, new_key)) changes += "\n  " + c;
  if (!job.force_resume)
    return Stop(err,
                Status::InvalidInput(dir + ": the job was started with another card, dataset or server build/model "
                                     "(run key differs: old -> new):" + changes +
                                     "\nrefusing to resume. Use another --job, or --force-resume to continue anyway"),
                kExitBadInput);
  std::fprintf(err, "evalrun: warning: resuming although the run key differs (--force-resume):%s\n", changes.c_str());
  return std::nullopt;
}

// The answers the journal holds and samples.jsonl lacks (a run stopped
// before it scored them), once each, for items of this selection.
StepExit ReadJournal(PartRun* r, FILE* err) {
  std::vector<UnscoredAnswer> journal;
  bool torn = false;
  Status st = LoadAnswerJournal(r->dir, &journal, &torn);
  if (!st.ok())
    return Stop(err, Status::InvalidInput(st.message() + "; repair or delete that line, or start another --job"),
                kExitBadInput);
  if (torn)
    std::fprintf(err, "evalrun: %s: dropped a torn last line of %s (a crash mid-write); that question is asked "
                 "again\n", r->name.c_str(), kAnswerJournal);
  std::set<std::string> have;
  for (const SampleRecord& rec : r->answered) have.insert(rec.id);
  r->journaled.clear();
  for (UnscoredAnswer& a : journal) {
    auto it = r->index_by_id.find(a.record.id);
    if (it == r->index_by_id.end() || !have.insert(a.record.id).second) continue;
    r->journaled.emplace_back(static_cast<size_t>(it->second), std::move(a));
  }
  return std::nullopt;
}

// One part's samples.jsonl, each line through the part's codec, and its
// answer journal.
StepExit ReadAnswered(PartRun* r, FILE* err) {
  SampleFileContents file;
  const std::string path = r->dir + "/samples.jsonl";
  Status st = LoadSampleFile(path, &file);
  if (!st.ok()) return Stop(err, st, kExitBadInput);
  if (file.dropped_torn_tail)
    std::fprintf(err, "evalrun: %s: dropped a torn last line of samples.jsonl (a crash mid-write); "
                 "that question is asked again\n", r->name.c_str());
  r->answered.reserve(file.lines.size());
  for (size_t i = 0; i < file.lines.size(); ++i) {
    SampleRecord rec;
    st = DecodeSample(*r->def->verdict, file.lines[i], path + ":" + std::to_string(file.line_numbers[i]), &rec);
    if (!st.ok())
      return Stop(err, Status::InvalidInput(st.message() + "; repair or delete that line, or start another --job"),
                  kExitBadInput);
    r->answered.push_back(std::move(rec));
  }
  if (r->def->rescore_on_resume)
    RescoreStored(*r->part, r->prepared, r->index_by_id, path, &r->answered, err);  // a stored verdict is not trusted
  return ReadJournal(r, err);
}

}  // namespace

StepExit OpenRun(Job* job, const Server& server, FILE* err) {
  const Card& card = job->card;
  const nlohmann::json run_key = RunKey(*job, server);
  nlohmann::json run_json;
  if (job->resuming) {
    if (StepExit e = CheckResume(*job, run_key, &run_json, err)) return e;
    return ExtendRunJson(job, run_key, run_json, err);
  }
  run_json["card"] = ParseJsonOrDiscarded(card.text);
  run_json["card_path"] = card.path;
  run_json["card_sha256"] = card.sha256;
  run_json["evalrun"] = {{"version", EvalrunVersion()}, {"git_sha", EvalrunGitSha()}};
  run_json["host"] = HostInfo();
  run_json["started_utc"] = UtcNow();
  run_json["run_key"] = run_key;
  RecordParts(*job, &run_json);
  run_json["server"] = server.props.ToJson();
  run_json["server"]["base_url"] = card.server.base_url;
  run_json["slots"] = server.slots;
  if (server.endpoints.size() > 1) {
    // Every endpoint's props ("server" above is the first's).
    nlohmann::json eps = nlohmann::json::array();
    for (const auto& ep : server.endpoints) {
      nlohmann::json e = ep.props.ToJson();
      e["base_url"] = ep.config.base_url;
      e["slots"] = ep.slots;
      eps.push_back(e);
    }
    run_json["endpoints"] = eps;
    run_json["endpoints_differ"] = card.server.endpoints_differ;
  }
  run_json["data_dir"] = job->data_dir;
  if (job->shard.sharded()) run_json["shard"] = ShardJson(*job);
  Status st = WriteFileAtomically(job->dir.path() + "/run.json", run_json.dump(2) + "\n");
  if (!st.ok()) return Stop(err, st, kExitBadInput);
  job->dir.Keep();
  return std::nullopt;
}

StepExit LoadAnswered(Job* job, FILE* err) {
  // Every part read (and checked) before any request; a torn last line is
  // cut off and asked again.
  std::string done_summary;
  for (auto& r : job->parts) {
    if (StepExit e = ReadAnswered(&r, err)) return e;
    auto count = [&r](const std::vector<SampleRecord>& records) {
      std::set<std::string> done;
      for (const auto& rec : records)
        if (r.index_by_id.count(rec.id)) done.insert(rec.id);
      return std::to_string(done.size()) + " of " + std::to_string(r.prepared.items.size());
    };
    done_summary += (done_summary.empty() ? "" : ", ") + r.name + " " + count(r.answered);
    if (!r.journaled.empty()) done_summary += " (+" + std::to_string(r.journaled.size()) + " answered, not scored)";
    if (job->repeat >= 2) {
      // The second repeat's records, read the same way from its own folder.
      const std::string dir = r.dir;
      r.dir = RepeatDir(*job) + "/" + r.name;
      std::vector<SampleRecord> first = std::move(r.answered);
      auto first_journaled = std::move(r.journaled);
      r.answered.clear();
      StepExit e = ReadAnswered(&r, err);
      r.answered_repeat = std::move(r.answered);
      r.journaled_repeat = std::move(r.journaled);
      r.answered = std::move(first);
      r.journaled = std::move(first_journaled);
      r.dir = dir;
      if (e) return e;
      done_summary += " (repeat 2: " + count(r.answered_repeat) + ")";
    }
  }
  if (!job->resuming) return std::nullopt;
  if (job->parts.empty()) {
    std::string names;
    for (const auto& r : job->procedures) names += (names.empty() ? "" : ", ") + r.name;
    done_summary = "(" + names + " only)";
  }
  std::fprintf(err, "evalrun: resuming job %s: answered before: %s\n", job->dir.job().c_str(), done_summary.c_str());
  return std::nullopt;
}

}  // namespace evalrun::run_internal
