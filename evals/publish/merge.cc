// `evalrun merge` (evals/publish/merge.h): the checked shards written as one
// job folder.
#include "evals/publish/merge.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "evals/base/exit_codes.h"
#include "evals/base/files.h"
#include "evals/base/json_fields.h"
#include "evals/base/jsonl.h"
#include "evals/publish/merge_load.h"
#include "evals/publish/merge_shards.h"
#include "evals/publish/run_folder.h"
#include "evals/run/part.h"
#include "evals/run/repeat_summary.h"
#include "evals/run/results.h"
#include "evals/run/run_files.h"
#include "evals/run/sample_codec.h"
#include "evals/run/utc_now.h"

namespace evalrun {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

int Fail(FILE* err, const std::string& msg) {
  std::fprintf(err, "evalrun merge: %s\n", msg.c_str());
  return kExitBadInput;
}

const json& PartOf(const ShardFolder& s, const std::string& part) {
  static const json kNone = json::object();
  const json& p = JsonAt(s.run.results, {"parts"});
  return p.contains(part) && p[part].is_object() ? p[part] : kNone;
}

// OUT: new, or an empty folder, and none of the shards.
Status CheckOut(const MergeOptions& opts) {
  std::error_code ec;
  const fs::path out = fs::weakly_canonical(opts.out_dir, ec);
  for (const std::string& d : opts.shard_dirs)
    if (fs::weakly_canonical(d, ec) == out)
      return Status::InvalidInput(opts.out_dir + ": the merged folder must not be one of the shards");
  if (!fs::exists(opts.out_dir, ec)) return Status::Ok();
  if (!fs::is_directory(opts.out_dir, ec)) return Status::InvalidInput(opts.out_dir + ": exists and is not a folder");
  if (!fs::is_empty(opts.out_dir, ec))
    return Status::InvalidInput(opts.out_dir + ": exists and is not empty; merge into a new folder");
  return Status::Ok();
}

// Each shard's lines of <dir>/<name>, with "shard" added, appended to `text`.
Status JoinLines(const ShardFolder& s, const std::string& name, std::string* text) {
  std::string src;
  const std::string path = s.run.dir + "/" + name;
  if (!ReadFileToString(path, &src).ok()) return Status::Ok();
  return ParseJsonl(src, path, [&](int, const json& line) {
    json l = line;
    if (l.is_object()) l["shard"] = s.index;
    *text += l.dump() + "\n";
    return Status::Ok();
  });
}

json PartResult(const ShardSet& set, const MergedPart& mp) {
  const std::string& name = mp.folder.name;
  std::unique_ptr<Part> part = mp.folder.definition->make_part();
  PreparedPart prepared;
  const json& first = PartOf(set.shards.front(), name);
  prepared.info = first.value("info", json::object());
  json r = part->Aggregate(mp.records, mp.failed, prepared);
  r["kind"] = VerdictKindName(*mp.folder.kind);
  r["info"] = prepared.info;
  // The shards share the run key, so their request settings are the same.
  if (first.contains("request")) r["request"] = first["request"];
  r["planned"] = mp.selected.size();
  r["complete"] = mp.absent.empty();
  AddRecordCounts(mp.records, &r);
  int max_in_flight = 0, slots = 0;
  json outages = json::array(), shards = json::array();
  for (const ShardFolder& s : set.shards) {
    const json& p = PartOf(s, name);
    max_in_flight = std::max(max_in_flight, p.value("max_in_flight", 0));
    slots += p.value("slots", 0);
    for (json o : p.value("outages", json::array())) {
      o["shard"] = s.index;
      outages.push_back(o);
    }
    shards.push_back({{"index", s.index}, {"n", p.value("n", json())}, {"planned", p.value("planned", json())},
                      {"failed", p.value("failed", json())}, {"admission", p.value("admission", json())}});
  }
  r["max_in_flight"] = max_in_flight;
  r["slots"] = slots;
  r["admission"] = first.value("admission", json());
  r["outages"] = outages;
  r["merged"] = {{"shards", shards}, {"absent_n", mp.absent.size()}, {"absent", mp.absent}};
  return r;
}

json MergedJson(const ShardSet& set, bool partial) {
  json shards = json::array();
  for (const ShardFolder& s : set.shards)
    shards.push_back({{"index", s.index},
                      {"dir", s.run.dir},
                      {"job", JsonAt(s.run.results, {"job"})},
                      {"hostname", JsonAt(s.run.run, {"host", "hostname"})},
                      {"started_utc", JsonAt(s.run.run, {"started_utc"})},
                      {"finished_utc", JsonAt(s.run.results, {"finished_utc"})},
                      {"base_url", JsonAt(s.run.run, {"server", "base_url"})},
                      {"slots", JsonAt(s.run.run, {"slots"})}});
  return {{"count", set.count},     {"run_key_sha256", set.run_key_sha256}, {"partial", partial},
          {"missing_shards", set.missing}, {"shards", shards}, {"merged_utc", UtcNow()}};
}

// The latest (or earliest) of a text field over the shards: UTC times in
// ISO form order as text.
std::string Extreme(const ShardSet& set, bool from_run, const char* key, bool latest) {
  std::string best;
  for (const ShardFolder& s : set.shards) {
    const json& v = JsonAt(from_run ? s.run.run : s.run.results, {key});
    if (!v.is_string()) continue;
    const std::string t = v.get<std::string>();
    if (best.empty() || (latest ? t > best : t < best)) best = t;
  }
  return best;
}

json RunJson(const ShardSet& set, const json& merged) {
  json run = set.shards.front().run.run;
  run.erase("shard");
  run["merged"] = merged;
  int slots = 0;
  std::vector<std::string> hosts;
  for (const ShardFolder& s : set.shards) {
    slots += JsonAt(s.run.run, {"slots"}).is_number() ? s.run.run["slots"].get<int>() : 0;
    const std::string h = JsonText(JsonAt(s.run.run, {"host", "hostname"}));
    if (!h.empty() && std::find(hosts.begin(), hosts.end(), h) == hosts.end()) hosts.push_back(h);
  }
  run["slots"] = slots;
  const std::string started = Extreme(set, true, "started_utc", false);
  if (!started.empty()) run["started_utc"] = started;
  if (run["host"].is_object() && hosts.size() > 1) {
    std::string all;
    for (const auto& h : hosts) all += (all.empty() ? "" : " + ") + h;
    run["host"]["hostname"] = all;
  }
  return run;
}

json ResultsJson(const ShardSet& set, const std::string& job, const json& parts, const json& merged) {
  json res = set.shards.front().run.results;
  res.erase("shard");
  res["job"] = job;
  res["parts"] = parts;
  const std::string finished = Extreme(set, false, "finished_utc", true);
  if (!finished.empty()) res["finished_utc"] = finished;
  std::vector<std::pair<int, json>> noise;
  for (const ShardFolder& s : set.shards) noise.emplace_back(s.index, LoadSummaryOf(s.run.results));
  res.erase("noise");
  res["load"] = MergeLoadSummaries(noise);
  res["merged"] = merged;
  return res;
}

// One part's records and failed lines written into `dir`.
Status WritePartFiles(const std::string& dir, const ShardSet& set, const MergedPart& mp, const std::string& from) {
  EVALRUN_RETURN_IF_ERROR(MakeDirectories(dir));
  std::string text;
  for (const SampleRecord& rec : mp.records) text += EncodeSample(rec).dump() + "\n";
  EVALRUN_RETURN_IF_ERROR(WriteFileAtomically(dir + "/samples.jsonl", text));
  std::string failed;
  for (const ShardFolder& s : set.shards)
    EVALRUN_RETURN_IF_ERROR(JoinLines(s, from + mp.folder.name + "/failed.jsonl", &failed));
  if (!failed.empty()) EVALRUN_RETURN_IF_ERROR(WriteFileAtomically(dir + "/failed.jsonl", failed));
  return Status::Ok();
}

// Shards run with --repeat 2: when every shard has its repeat-2/, they are
// joined into OUT/repeat-2 (a run folder as the runner writes one: the
// part's records in selection order, results.json of job "<job>/repeat-2"
// with repeat_of, run.json), and each part's `repeat` is computed again over
// the merged repeats (evals/run/repeat_summary.h), not taken from a shard.
// When only some shards have one, nothing of it is merged and *notes says so.
Status MergeRepeats(const MergeOptions& opts, const ShardSet& set, const std::string& job, const json& merged,
                    json* parts, std::vector<std::string>* notes) {
  std::vector<int> with;
  for (const ShardFolder& s : set.shards)
    if (FileSize(s.run.dir + "/repeat-2/results.json") >= 0) with.push_back(s.index);
  if (with.empty()) return Status::Ok();
  if (with.size() < set.shards.size()) {
    std::string list;
    for (int i : with) list += (list.empty() ? "" : ", ") + std::to_string(i);
    notes->push_back("the second repeat (repeat-2/, --repeat 2) is in shard(s) " + list + " only, not in every shard "
                     "given: it is not merged, and the merged parts have no `repeat`");
    return Status::Ok();
  }
  ShardSet rep;
  rep.count = set.count;
  rep.missing = set.missing;
  for (const ShardFolder& s : set.shards) {
    ShardFolder r;
    r.index = s.index;
    r.shard = s.shard;
    EVALRUN_RETURN_IF_ERROR(LoadRunFolder(s.run.dir + "/repeat-2", &r.run));
    rep.shards.push_back(std::move(r));
  }
  const std::string out = opts.out_dir + "/repeat-2";
  json rparts = json::object();
  for (const MergedPart& mp : set.parts) {
    const std::string& name = mp.folder.name;
    MergedPart rm;
    rm.folder = mp.folder;
    rm.selected = mp.selected;
    std::map<std::string, SampleRecord> by_id;  // the last line of an id counts, as in the runner
    for (const ShardFolder& s : rep.shards) {
      const std::string path = SamplesPath(s.run, name);
      if (FileSize(path) < 0) continue;  // the shard answered none of the part the second time
      std::vector<SampleRecord> records;
      bool torn = false;
      EVALRUN_RETURN_IF_ERROR(ReadRecordsReadOnly(path, *mp.folder.kind, &records, &torn));
      if (torn) notes->push_back(TornTailNote(path));
      for (auto& r : records) by_id[r.id] = std::move(r);
      rm.failed += PartOf(s, name).value("failed", 0);
    }
    for (const std::string& id : rm.selected) {
      auto it = by_id.find(id);
      if (it == by_id.end()) rm.absent.push_back(id);
      else rm.records.push_back(std::move(it->second));
    }
    EVALRUN_RETURN_IF_ERROR(WritePartFiles(out + "/" + name, rep, rm, "repeat-2/"));
    rparts[name] = PartResult(rep, rm);
    (*parts)[name]["repeat"] = RepeatSummary(mp.records, rm.records, rparts[name]);
  }
  json res = ResultsJson(rep, job + "/repeat-2", rparts, merged);
  res["repeat_of"] = job;
  res.erase("load");  // the runner records the machine's load in the job's results, not the repeat's
  res.erase("noise");  // (its name before 2026-12)
  EVALRUN_RETURN_IF_ERROR(WriteFileAtomically(out + "/run.json", RunJson(set, merged).dump(2) + "\n"));
  return WriteFileAtomically(out + "/results.json", res.dump(2) + "\n");
}

// Writes the merged job `job` into opts.out_dir.
Status WriteMerged(const MergeOptions& opts, const ShardSet& set, json* parts_out, std::vector<std::string>* notes,
                   const std::string& job) {
  EVALRUN_RETURN_IF_ERROR(MakeDirectories(opts.out_dir));
  json parts = json::object();
  for (const MergedPart& mp : set.parts) {
    EVALRUN_RETURN_IF_ERROR(WritePartFiles(opts.out_dir + "/" + mp.folder.name, set, mp, ""));
    parts[mp.folder.name] = PartResult(set, mp);
  }
  std::string load;
  for (const ShardFolder& s : set.shards) EVALRUN_RETURN_IF_ERROR(JoinLines(s, "load.jsonl", &load));
  EVALRUN_RETURN_IF_ERROR(WriteFileAtomically(opts.out_dir + "/load.jsonl", load));
  const json merged = MergedJson(set, !set.complete());
  EVALRUN_RETURN_IF_ERROR(MergeRepeats(opts, set, job, merged, &parts, notes));
  EVALRUN_RETURN_IF_ERROR(WriteFileAtomically(opts.out_dir + "/run.json", RunJson(set, merged).dump(2) + "\n"));
  EVALRUN_RETURN_IF_ERROR(
      WriteFileAtomically(opts.out_dir + "/results.json", ResultsJson(set, job, parts, merged).dump(2) + "\n"));
  *parts_out = std::move(parts);
  return Status::Ok();
}

}  // namespace

int MergeShards(const MergeOptions& opts, FILE* out, FILE* err) {
  Status st = CheckOut(opts);
  if (!st.ok()) return Fail(err, st.message());
  ShardSet set;
  st = LoadShardSet(opts.shard_dirs, &set);
  if (!st.ok()) return Fail(err, st.message());
  for (const auto& n : set.notes) std::fprintf(err, "evalrun merge: note: %s\n", n.c_str());
  if (!set.complete()) {
    const std::string what = DescribeIncomplete(set);
    if (!opts.partial)
      return Fail(err, "incomplete: " + what +
                           ". Run (or resume, with its --job) the shards named, or merge what is there with --partial");
    std::fprintf(err, "evalrun merge: warning: partial merge: %s\n", what.c_str());
  }
  // Written into a folder beside OUT and renamed into place at the end, so
  // that a merge that fails half-way (a bad repeat file, a full disk) leaves
  // OUT as it was and nothing half-written.
  const std::string final_dir = TrimRunDir(opts.out_dir);
  MergeOptions staged = opts;
  staged.out_dir = final_dir + ".merging-" + std::to_string(getpid());
  std::error_code ec;
  fs::remove_all(staged.out_dir, ec);
  json parts;
  std::vector<std::string> notes;
  st = WriteMerged(staged, set, &parts, &notes, fs::path(final_dir).filename().string());
  for (const auto& n : notes) std::fprintf(err, "evalrun merge: note: %s\n", n.c_str());
  if (st.ok()) {
    if (fs::exists(final_dir, ec)) fs::remove(final_dir, ec);  // the empty folder CheckOut allowed
    st = RenameFile(staged.out_dir, final_dir);
  }
  if (!st.ok()) {
    fs::remove_all(staged.out_dir, ec);
    return Fail(err, st.message() + " (nothing was written to " + final_dir + ")");
  }
  std::fprintf(out, "merged %zu of %d shards into %s\n", set.shards.size(), set.count, opts.out_dir.c_str());
  for (const MergedPart& mp : set.parts) {
    const json& p = parts[mp.folder.name];
    const double score = p.value("score", 0.0);
    const bool scaled = p.contains("score_scale");
    std::fprintf(out, "  %-10s %7.2f%%  %zu of %zu answered%s\n", mp.folder.name.c_str(),
                 scaled ? score : 100.0 * score, mp.records.size(), mp.selected.size(),
                 mp.absent.empty() ? "" : " (partial)");
  }
  for (const MergedPart& mp : set.parts) {
    const json& rep = JsonAt(parts[mp.folder.name], {"repeat"});
    if (rep.is_object())
      std::fprintf(out, "  repeat 2 of %s (%s/repeat-2): %s\n", mp.folder.name.c_str(), opts.out_dir.c_str(),
                   JsonText(rep["text"]).c_str());
  }
  std::fprintf(out, "results: %s/results.json\n", opts.out_dir.c_str());
  return kExitOk;
}

}  // namespace evalrun
