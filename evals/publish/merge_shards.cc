// Reading and checking the shards of one run (evals/publish/merge_shards.h).
#include "evals/publish/merge_shards.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "evals/base/files.h"
#include "evals/base/json_diff.h"
#include "evals/base/json_fields.h"
#include "evals/run/shard.h"

namespace evalrun {
namespace {

using json = nlohmann::json;

// At most this many examples of one kind of problem are named.
constexpr size_t kNamed = 10;

std::string Join(const std::vector<std::string>& v, size_t most = kNamed) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < most; ++i) s += (i ? ", " : "") + v[i];
  if (v.size() > most) s += ", ... (" + std::to_string(v.size()) + " in all)";
  return s;
}

std::string JoinInts(const std::vector<int>& v) {
  std::vector<std::string> s;
  for (int i : v) s.push_back(std::to_string(i));
  return Join(s, 100);
}

std::string Name(const ShardFolder& s) { return "shard " + std::to_string(s.index) + " (" + s.run.dir + ")"; }

Status LoadShard(const std::string& dir, ShardFolder* out) {
  EVALRUN_RETURN_IF_ERROR(LoadRunFolder(dir, &out->run));
  const std::string path = out->run.dir + "/" + kShardFile;
  std::string text;
  if (!ReadFileToString(path, &text).ok())
    return Status::InvalidInput(out->run.dir + ": not a shard: no " + kShardFile +
                                " (a shard is a run made with --shard I/N)");
  EVALRUN_RETURN_IF_ERROR(ParseJsonText(text, path, &out->shard));
  const json& s = out->shard;
  if (!s.is_object() || s.value("schema", "") != kShardSchema)
    return Status::InvalidInput(path + ": schema: expected \"" + kShardSchema + "\"");
  if (!s.contains("index") || !s["index"].is_number_integer() || !s.contains("count") ||
      !s["count"].is_number_integer() || s["index"].get<int>() < 1 || s["index"] > s["count"])
    return Status::InvalidInput(path + ": index, count: expected integers with 1 <= index <= count");
  if (!s.contains("run_key_sha256") || !s["run_key_sha256"].is_string())
    return Status::InvalidInput(path + ": run_key_sha256: expected a string");
  if (!s.contains("parts") || !s["parts"].is_object())
    return Status::InvalidInput(path + ": parts: expected an object");
  for (const auto& [name, p] : s["parts"].items())
    if (!p.is_object() || !p.contains("selected") || !p["selected"].is_array())
      return Status::InvalidInput(path + ": parts." + name + ".selected: expected an array of ids");
  if (!out->run.run.is_object() || !out->run.run.contains("run_key"))
    return Status::InvalidInput(out->run.dir + "/run.json: run_key: missing (a shard's run.json has it)");
  out->index = s["index"].get<int>();
  return Status::Ok();
}

// N, the run key, the shard numbers: the set belongs together.
void CheckTogether(ShardSet* set, std::vector<std::string>* problems) {
  const ShardFolder& first = set->shards.front();
  set->count = first.shard["count"].get<int>();
  set->run_key = first.run.run["run_key"];
  set->run_key_sha256 = RunKeyDigest(set->run_key);
  std::map<int, std::vector<std::string>> by_index;
  for (const ShardFolder& s : set->shards) {
    by_index[s.index].push_back(s.run.dir);
    if (s.shard["count"].get<int>() != set->count)
      problems->push_back(Name(s) + " is one of " + std::to_string(s.shard["count"].get<int>()) + " shards, " +
                          Name(first) + " one of " + std::to_string(set->count));
    const json& key = s.run.run["run_key"];
    if (key != set->run_key) {
      std::vector<std::string> changes;
      for (const auto& c : JsonChanges(set->run_key, key)) changes.push_back(c);
      problems->push_back("run key of " + Name(s) + " differs from " + Name(first) + " (another card, dataset or "
                          "server build/model): " + Join(changes, 5));
    } else if (s.shard["run_key_sha256"] != set->run_key_sha256) {
      problems->push_back(Name(s) + ": shard.json run_key_sha256 is not the sha256 of run.json's run_key");
    }
  }
  for (const auto& [index, dirs] : by_index)
    if (dirs.size() > 1)
      problems->push_back("shard " + std::to_string(index) + " of " + std::to_string(set->count) + " given " +
                          std::to_string(dirs.size()) + " times: " + Join(dirs));
  for (int i = 1; i <= set->count; ++i)
    if (!by_index.count(i)) set->missing.push_back(i);
}

// The parts and their selections agree across the shards.
void CheckParts(ShardSet* set, std::vector<std::string>* problems) {
  const ShardFolder& first = set->shards.front();
  const json& parts = first.shard["parts"];
  for (const ShardFolder& s : set->shards) {
    std::vector<std::string> a, b;
    for (const auto& [n, p] : parts.items()) a.push_back(n);
    for (const auto& [n, p] : s.shard["parts"].items()) b.push_back(n);
    if (a != b) {
      problems->push_back(Name(s) + " ran parts " + Join(b) + ", " + Name(first) + " ran " + Join(a));
      continue;
    }
    for (const auto& [n, p] : parts.items())
      if (s.shard["parts"][n]["selected"] != p["selected"])
        problems->push_back(n + ": " + Name(s) + " selected other items (" +
                            std::to_string(s.shard["parts"][n]["selected"].size()) + ") than " + Name(first) + " (" +
                            std::to_string(p["selected"].size()) + "): another question count or context?");
  }
  // In run order (the registry's), as a run folder lists them.
  for (const std::string& name : first.run.parts) {
    if (!parts.contains(name)) continue;
    MergedPart mp;
    Status st = DescribeFolderPart(first.run, name, &mp.folder);
    if (!st.ok()) {
      problems->push_back(st.message());
      continue;
    }
    if (!mp.folder.kind || !mp.folder.definition || !mp.folder.definition->question_set()) {
      problems->push_back(name + ": not a question set this evalrun knows; cannot merge it");
      continue;
    }
    mp.selected = parts[name]["selected"].get<std::vector<std::string>>();
    set->parts.push_back(std::move(mp));
  }
  for (const auto& [n, p] : parts.items())
    if (std::find(first.run.parts.begin(), first.run.parts.end(), n) == first.run.parts.end())
      problems->push_back(n + ": " + Name(first) + " has no result for it in results.json (unfinished?)");
}

// One part's records from every shard, checked and put in selection order.
void JoinRecords(ShardSet* set, MergedPart* mp, std::vector<std::string>* problems) {
  const std::string& part = mp->folder.name;
  std::unordered_map<std::string, size_t> position;
  for (size_t i = 0; i < mp->selected.size(); ++i) position[mp->selected[i]] = i;
  // Per selected item: the shards holding a record of it, and the record
  // (of two lines for one id in one shard, the last counts).
  std::vector<std::vector<int>> holders(mp->selected.size());
  std::vector<std::optional<SampleRecord>> slot(mp->selected.size());
  std::vector<std::string> duplicates, misplaced, outside;
  for (const ShardFolder& s : set->shards) {
    const std::string path = SamplesPath(s.run, part);
    std::vector<SampleRecord> records;
    bool torn = false;
    Status st = ReadRecordsReadOnly(path, *mp->folder.kind, &records, &torn);
    if (st.code() == Status::Code::kNotFound) {
      records.clear();
    } else if (!st.ok()) {
      problems->push_back(st.message());
      continue;
    }
    if (torn) set->notes.push_back(TornTailNote(path));
    mp->failed += s.run.results["parts"].value(part, json::object()).value("failed", 0);
    for (SampleRecord& rec : records) {
      auto it = position.find(rec.id);
      if (it == position.end()) {
        outside.push_back(rec.id);
        continue;
      }
      const size_t i = it->second;
      if (holders[i].empty() || holders[i].back() != s.index) holders[i].push_back(s.index);
      slot[i] = std::move(rec);
    }
  }
  for (size_t i = 0; i < holders.size(); ++i) {
    const std::string& id = mp->selected[i];
    if (holders[i].size() > 1) {
      std::string list;
      for (int h : holders[i]) list += (list.empty() ? "" : ", ") + std::to_string(h);
      duplicates.push_back(id + " (shards " + list + ")");
    } else if (holders[i].size() == 1) {
      const int owner = ShardOfItem(set->run_key_sha256, id, set->count);
      if (owner != holders[i][0])
        misplaced.push_back(id + " (in shard " + std::to_string(holders[i][0]) + ", belongs to shard " +
                            std::to_string(owner) + ")");
    }
  }
  if (!duplicates.empty())
    problems->push_back(part + ": duplicate ids, answered by two shards: " + Join(duplicates));
  if (!misplaced.empty())
    problems->push_back(part + ": ids in a shard they do not hash to (a line copied from another shard's "
                        "samples.jsonl?): " + Join(misplaced));
  if (!outside.empty())
    set->notes.push_back(part + ": " + std::to_string(outside.size()) + " answers for ids outside the selection "
                         "left out (as a run leaves them out): " + Join(outside));
  std::set<int> absent_shards;
  for (size_t i = 0; i < slot.size(); ++i) {
    if (slot[i]) {
      mp->records.push_back(std::move(*slot[i]));
    } else {
      mp->absent.push_back(mp->selected[i]);
      absent_shards.insert(ShardOfItem(set->run_key_sha256, mp->selected[i], set->count));
    }
  }
  mp->absent_shards.assign(absent_shards.begin(), absent_shards.end());
}

}  // namespace

bool ShardSet::complete() const {
  if (!missing.empty()) return false;
  for (const auto& p : parts)
    if (!p.absent.empty()) return false;
  return true;
}

Status LoadShardSet(const std::vector<std::string>& dirs, ShardSet* out) {
  *out = ShardSet();
  if (dirs.empty()) return Status::InvalidInput("no shard folder given");
  for (const std::string& d : dirs) {
    ShardFolder s;
    EVALRUN_RETURN_IF_ERROR(LoadShard(d, &s));
    out->shards.push_back(std::move(s));
  }
  std::stable_sort(out->shards.begin(), out->shards.end(),
                   [](const ShardFolder& a, const ShardFolder& b) { return a.index < b.index; });
  std::vector<std::string> problems;
  CheckTogether(out, &problems);
  if (problems.empty()) CheckParts(out, &problems);
  if (problems.empty())
    for (MergedPart& mp : out->parts) JoinRecords(out, &mp, &problems);
  if (problems.empty()) return Status::Ok();
  std::string msg = "cannot merge these shards:";
  for (const auto& p : problems) msg += "\n  " + p;
  return Status::InvalidInput(msg);
}

std::string DescribeIncomplete(const ShardSet& set) {
  std::string s;
  if (!set.missing.empty())
    s = (set.missing.size() == 1 ? "shard " : "shards ") + JoinInts(set.missing) + " of " +
        std::to_string(set.count) + " not given";
  for (const auto& p : set.parts) {
    if (p.absent.empty()) continue;
    s += (s.empty() ? "" : "; ") + p.folder.name + ": " + std::to_string(p.absent.size()) + " of " +
         std::to_string(p.selected.size()) + " items absent (of " +
         (p.absent_shards.size() == 1 ? "shard " : "shards ") + JoinInts(p.absent_shards) + "): " + Join(p.absent);
  }
  return s;
}

}  // namespace evalrun
