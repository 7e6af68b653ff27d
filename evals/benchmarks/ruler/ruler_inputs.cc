#include "evals/benchmarks/ruler/ruler_inputs.h"
#include "evals/base/json_bounds.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "evals/benchmarks/ruler/ruler_tasks.h"
#include "evals/base/files.h"
#include "evals/base/sha256.h"
#include "scorers/py_unicode.h"

namespace evalrun {
namespace {

bool FileExists(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return static_cast<bool>(f);
}

// sorted(set(v)) (byte order == Python's code point order for UTF-8).
void SortUnique(std::vector<std::string> v, std::vector<std::string>* out) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  *out = std::move(v);
}

// Index of `doc` in the sorted unique `docs`.
int DocIndex(const std::vector<std::string>& docs, const std::string& doc) {
  auto it = std::lower_bound(docs.begin(), docs.end(), doc);
  return static_cast<int>(it - docs.begin());
}

template <class J>
Status ParseJson(std::string_view text, const std::string& name, J* out) {
  EVALRUN_RETURN_IF_ERROR(CheckJsonBounds(text, name));
  try {
    *out = J::parse(text.begin(), text.end());
  } catch (const std::exception& e) {
    return Status::InvalidInput(name + ": not valid JSON: " + e.what());
  }
  return Status::Ok();
}

// Reads an optional file; verifies its sha256. *present false when absent.
Status LoadOptional(const std::string& path, const std::string& record_name, const char* sha256,
                    std::string* text, bool* present, RulerInputs* out) {
  *present = false;
  if (!FileExists(path)) return Status::Ok();
  EVALRUN_RETURN_IF_ERROR(ReadFileToString(path, text));
  const std::string got = Sha256Hex(*text);
  if (got != sha256) {
    return Status::InvalidInput(path + ": sha256 " + got + ", expected " + sha256 +
                                " (the file RULER uses; see datasets/ruler/PROVENANCE.md)");
  }
  out->file_sha256.emplace_back(record_name, got);
  *present = true;
  return Status::Ok();
}

}  // namespace

std::string RulerCollapseWhitespace(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_space = false;
  for (size_t i = 0; i < text.size();) {
    // Decoded by byte shape alone, as RULER's text always has been (see
    // py::Utf8Check); an undecodable byte is copied and is not a space.
    const py::Utf8Char c = py::DecodeUtf8At(text, i, py::Utf8Check::kShapeOnly);
    if (py::IsPySpace(c.cp)) {
      if (!in_space) out.push_back(' ');
      in_space = true;
    } else {
      out.append(text.substr(i, c.len));
      in_space = false;
    }
    i += c.len;
  }
  return out;
}

void NiahWordList::Init(const std::vector<std::string>& adjs,
                        const std::vector<std::string>& nouns) {
  SortUnique(adjs, &adjs_);
  SortUnique(nouns, &nouns_);
  clusters_.clear();
  size_ = 0;
  if (adjs_.empty() || nouns_.empty()) return;
  // Each adjective's strings form the block [adj-nouns.front(), adj-nouns.back()],
  // internally in noun order. Blocks that overlap (one adjective plus "-"
  // prefixing another, e.g. "blue" / "blue-eyed") are merged and sorted.
  struct Block {
    std::string lo, hi;
    int adj;
  };
  std::vector<Block> blocks;
  blocks.reserve(adjs_.size());
  for (size_t a = 0; a < adjs_.size(); ++a) {
    blocks.push_back(
        {adjs_[a] + "-" + nouns_.front(), adjs_[a] + "-" + nouns_.back(), static_cast<int>(a)});
  }
  std::sort(blocks.begin(), blocks.end(),
            [](const Block& x, const Block& y) { return x.lo < y.lo; });
  std::vector<std::vector<int>> groups;
  std::string group_hi;
  for (const Block& b : blocks) {
    if (!groups.empty() && b.lo <= group_hi) {
      groups.back().push_back(b.adj);
      group_hi = std::max(group_hi, b.hi);
    } else {
      groups.push_back({b.adj});
      group_hi = b.hi;
    }
  }
  for (const std::vector<int>& g : groups) {
    Cluster c;
    c.start = size_;
    if (g.size() == 1) {
      c.adj = g[0];
      size_ += nouns_.size();
    } else {
      for (int a : g) {
        for (const std::string& noun : nouns_) c.merged.push_back(adjs_[a] + "-" + noun);
      }
      std::sort(c.merged.begin(), c.merged.end());
      c.merged.erase(std::unique(c.merged.begin(), c.merged.end()), c.merged.end());
      size_ += c.merged.size();
    }
    clusters_.push_back(std::move(c));
  }
}

std::string NiahWordList::At(size_t i) const {
  auto it = std::upper_bound(clusters_.begin(), clusters_.end(), i,
                             [](size_t v, const Cluster& c) { return v < c.start; });
  const Cluster& c = *(it - 1);
  const size_t off = i - c.start;
  if (c.adj >= 0) return adjs_[c.adj] + "-" + nouns_[off];
  return c.merged[off];
}

std::vector<std::string> ParseRulerWordList(std::string_view text) {
  // Python readlines() + rstrip(): split on '\n' (a final newline ends the
  // last line), strip trailing whitespace.
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    while (!line.empty() && (line.back() == ' ' || (line.back() >= '\t' && line.back() <= '\r'))) {
      line.remove_suffix(1);
    }
    out.emplace_back(line);
    pos = nl + 1;
  }
  return out;
}

Status ParseRulerEssay(std::string_view json_text, const std::string& name, RulerInputs* out) {
  nlohmann::json j;
  EVALRUN_RETURN_IF_ERROR(ParseJson(json_text, name, &j));
  if (!j.is_object() || !j.contains("text") || !j["text"].is_string()) {
    return Status::InvalidInput(name + ": expected an object with a string field \"text\"");
  }
  out->essay_text = RulerCollapseWhitespace(j["text"].get_ref<const std::string&>());
  out->essay_word_starts.clear();
  out->essay_word_starts.push_back(0);
  for (size_t i = 0; i < out->essay_text.size(); ++i) {
    if (out->essay_text[i] == ' ') out->essay_word_starts.push_back(static_cast<uint32_t>(i + 1));
  }
  return Status::Ok();
}

Status ParseRulerSquad(std::string_view json_text, const std::string& name, RulerQaSet* out) {
  nlohmann::json j;
  EVALRUN_RETURN_IF_ERROR(ParseJson(json_text, name, &j));
  try {
    const nlohmann::json& data = j.at("data");
    std::vector<std::string> docs;
    for (const auto& d : data) {
      for (const auto& p : d.at("paragraphs")) docs.push_back(p.at("context").get<std::string>());
    }
    SortUnique(std::move(docs), &out->docs);
    out->qas.clear();
    for (const auto& d : data) {
      std::vector<int> more;
      for (const auto& p : d.at("paragraphs")) {
        more.push_back(DocIndex(out->docs, p.at("context").get<std::string>()));
      }
      for (const auto& p : d.at("paragraphs")) {
        const int idx = DocIndex(out->docs, p.at("context").get<std::string>());
        for (const auto& q : p.at("qas")) {
          if (q.at("is_impossible").get<bool>()) continue;
          RulerQaItem item;
          item.query = q.at("question").get<std::string>();
          for (const auto& a : q.at("answers"))
            item.outputs.push_back(a.at("text").get<std::string>());
          item.context = {idx};
          for (int m : more) {
            if (m != idx) item.more_context.push_back(m);
          }
          out->qas.push_back(std::move(item));
        }
      }
    }
  } catch (const std::exception& e) {
    return Status::InvalidInput(name +
                                ": not SQuAD v2 layout (data[].paragraphs[].{context,qas[]."
                                "{question,answers[].text,is_impossible}}): " +
                                e.what());
  }
  return Status::Ok();
}

Status ParseRulerHotpot(std::string_view json_text, const std::string& name, RulerQaSet* out) {
  nlohmann::json j;
  EVALRUN_RETURN_IF_ERROR(ParseJson(json_text, name, &j));
  try {
    auto doc_of = [](const nlohmann::json& tp) {
      std::string doc = tp.at(0).get<std::string>() + "\n";
      for (const auto& s : tp.at(1)) doc += s.get<std::string>();
      return doc;
    };
    std::vector<std::string> docs;
    for (const auto& d : j) {
      for (const auto& tp : d.at("context")) docs.push_back(doc_of(tp));
    }
    SortUnique(std::move(docs), &out->docs);
    out->qas.clear();
    for (const auto& d : j) {
      RulerQaItem item;
      item.query = d.at("question").get<std::string>();
      item.outputs = {d.at("answer").get<std::string>()};
      for (const auto& tp : d.at("context"))
        item.context.push_back(DocIndex(out->docs, doc_of(tp)));
      out->qas.push_back(std::move(item));
    }
  } catch (const std::exception& e) {
    return Status::InvalidInput(name +
                                ": not HotpotQA layout ([].{question,answer,context[["
                                "title,[sentences]]]}): " +
                                e.what());
  }
  return Status::Ok();
}

namespace {

// Which inputs the tasks to load need.
struct RulerNeeds {
  bool essay = false, adj_noun = false, cwe = false, squad = false, hotpot = false;
};

Status TasksToLoad(const RulerLoadOptions& options, std::vector<RulerTaskConfig>* tasks) {
  if (options.tasks.empty()) {
    *tasks = RulerTasks();
    return Status::Ok();
  }
  for (const std::string& name : options.tasks) {
    RulerTaskConfig t;
    EVALRUN_RETURN_IF_ERROR(RulerTaskByName(name, &t));
    tasks->push_back(t);
  }
  return Status::Ok();
}

RulerNeeds NeedsOf(const std::vector<RulerTaskConfig>& tasks) {
  RulerNeeds need;
  for (const RulerTaskConfig& t : tasks) {
    if (t.family == RulerFamily::kNiah) {
      need.essay |= t.type_haystack == RulerHaystack::kEssay;
      need.adj_noun |=
          t.type_needle_k == RulerNeedleType::kWords || t.type_needle_v == RulerNeedleType::kWords;
    }
    need.cwe |= t.family == RulerFamily::kCommonWords;
    need.squad |= t.family == RulerFamily::kQa && t.dataset == "squad";
    need.hotpot |= t.family == RulerFamily::kQa && t.dataset == "hotpotqa";
  }
  return need;
}

// Reads ruler_dir/rel, its sha256 recorded in `in`.
Status ReadRecorded(const std::string& rel, std::string* text, RulerInputs* in) {
  EVALRUN_RETURN_IF_ERROR(ReadFileToString(in->ruler_dir + "/" + rel, text));
  in->file_sha256.emplace_back("ruler/" + rel, Sha256Hex(*text));
  return Status::Ok();
}

// The essay haystack and the Punkt model that splits it into sentences.
Status LoadEssay(const RulerLoadOptions& options, RulerInputs* in) {
  const std::string& ruler_dir = in->ruler_dir;
  std::string text;
  EVALRUN_RETURN_IF_ERROR(ReadRecorded("PaulGrahamEssays.json", &text, in));
  EVALRUN_RETURN_IF_ERROR(ParseRulerEssay(text, ruler_dir + "/PaulGrahamEssays.json", in));
  const std::string punkt_dir =
      options.punkt_dir.empty() ? ruler_dir + "/../punkt-english" : options.punkt_dir;
  return PunktModel::Load(punkt_dir, &in->punkt);
}

// RULER's extra cwe word pool, when present (else a line in in->missing).
Status LoadEnglishWords(RulerInputs* in) {
  std::string text;
  bool present = false;
  const std::string path = in->ruler_dir + "/english_words.json";
  EVALRUN_RETURN_IF_ERROR(LoadOptional(path, "ruler/english_words.json", kRulerEnglishWordsSha256,
                                       &text, &present, in));
  if (!present) {
    in->missing.push_back(
        "ruler/english_words.json (RULER's extra cwe word pool, 8,564,991 bytes, sha256 " +
        std::string(kRulerEnglishWordsSha256) + ") is not in " + in->ruler_dir +
        ": cwe can only be generated at lengths needing at most " +
        std::to_string(in->cwe_words.size()) + " distinct words (about 100K tokens)");
    return Status::Ok();
  }
  nlohmann::ordered_json j;
  EVALRUN_RETURN_IF_ERROR(ParseJson(text, path, &j));
  if (!j.is_object()) return Status::InvalidInput(path + ": expected a JSON object of words");
  for (const auto& [key, value] : j.items()) {
    if (!value.is_string()) {
      return Status::InvalidInput(path + ": value of \"" + key + "\" is not a string");
    }
    in->english_words.push_back(value.get<std::string>());
  }
  return Status::Ok();
}

// The wonderwords lists: adjectives and nouns for word needles, and with
// the verbs (and english_words.json) the common-words pool.
Status LoadWordLists(const RulerNeeds& need, RulerInputs* in) {
  std::vector<std::string> nouns, adjs, verbs;
  if (need.adj_noun || need.cwe) {
    std::string text;
    EVALRUN_RETURN_IF_ERROR(ReadRecorded("wonderwords/nounlist.txt", &text, in));
    nouns = ParseRulerWordList(text);
    EVALRUN_RETURN_IF_ERROR(ReadRecorded("wonderwords/adjectivelist.txt", &text, in));
    adjs = ParseRulerWordList(text);
    if (nouns.empty() || adjs.empty()) {
      return Status::InvalidInput(in->ruler_dir + "/wonderwords: empty noun or adjective list");
    }
  }
  if (need.adj_noun) in->niah_words.Init(adjs, nouns);
  if (!need.cwe) return Status::Ok();
  std::string text;
  EVALRUN_RETURN_IF_ERROR(ReadRecorded("wonderwords/verblist.txt", &text, in));
  verbs = ParseRulerWordList(text);
  std::vector<std::string> all = nouns;
  all.insert(all.end(), adjs.begin(), adjs.end());
  all.insert(all.end(), verbs.begin(), verbs.end());
  SortUnique(std::move(all), &in->cwe_words);
  return LoadEnglishWords(in);
}

// The QA sets the tasks need, when present (else a line in in->missing).
Status LoadQaSets(const RulerNeeds& need, RulerInputs* in) {
  struct QaFile {
    bool needed;
    const char* file;
    const char* what;
    const char* sha;
    const char* task;
    std::optional<RulerQaSet>* slot;
    Status (*parse)(std::string_view, const std::string&, RulerQaSet*);
  };
  const QaFile qa_files[] = {
      {need.squad, "squad.json", "SQuAD v2.0 dev set dev-v2.0.json, 4,370,528 bytes",
       kRulerSquadSha256, "qa_1", &in->squad, &ParseRulerSquad},
      {need.hotpot, "hotpotqa.json",
       "HotpotQA dev distractor set hotpot_dev_distractor_v1.json, 46,320,117 bytes",
       kRulerHotpotSha256, "qa_2", &in->hotpotqa, &ParseRulerHotpot},
  };
  for (const QaFile& q : qa_files) {
    if (!q.needed) continue;
    const std::string path = in->ruler_dir + "/" + q.file;
    std::string text;
    bool present = false;
    EVALRUN_RETURN_IF_ERROR(
        LoadOptional(path, std::string("ruler/") + q.file, q.sha, &text, &present, in));
    if (!present) {
      in->missing.push_back(std::string(q.task) + " skipped: " + path + " not found; put the " +
                            q.what + " (sha256 " + q.sha + ") there");
      continue;
    }
    RulerQaSet set;
    EVALRUN_RETURN_IF_ERROR(q.parse(text, path, &set));
    set.path = path;
    *q.slot = std::move(set);
  }
  return Status::Ok();
}

}  // namespace

Status LoadRulerInputs(const std::string& ruler_dir, const RulerLoadOptions& options,
                       RulerInputs* out) {
  std::vector<RulerTaskConfig> tasks;
  EVALRUN_RETURN_IF_ERROR(TasksToLoad(options, &tasks));
  const RulerNeeds need = NeedsOf(tasks);
  RulerInputs in;
  in.ruler_dir = ruler_dir;
  if (need.essay) EVALRUN_RETURN_IF_ERROR(LoadEssay(options, &in));
  EVALRUN_RETURN_IF_ERROR(LoadWordLists(need, &in));
  EVALRUN_RETURN_IF_ERROR(LoadQaSets(need, &in));
  *out = std::move(in);
  return Status::Ok();
}

}  // namespace evalrun
