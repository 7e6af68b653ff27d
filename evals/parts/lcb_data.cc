#include "evals/parts/lcb_data.h"

#include <map>
#include <set>
#include <unordered_map>

#include "evals/base/sha256.h"
#include "evals/parts/prepare_steps.h"

namespace evalrun {

Status FindLcbSource(const PartContext& ctx, const std::string& release, const std::string& data_file,
                     LcbSource* out) {
  *out = LcbSource();
  // The release is checked even when one file is read instead: a card with
  // a release that does not exist is wrong whatever else it says.
  std::vector<std::string> files;
  EVALRUN_RETURN_IF_ERROR(LcbReleaseFiles(release, &files).Prefixed("parts.livecodebench.release"));
  const std::string& one = !ctx.input_override.empty() ? ctx.input_override : data_file;
  if (!one.empty()) {
    out->label = !ctx.input_override.empty() ? "input" : "data_file";
    out->names = {one};
    out->paths = {one};
    out->sha256.emplace_back();
    return Sha256File(one, &out->sha256[0]).Prefixed(out->label == "input" ? "--input" : "parts.livecodebench.data_file");
  }
  out->label = release;
  for (const std::string& f : files) {
    std::string path, sha;
    EVALRUN_RETURN_IF_ERROR(FindDataFile(ctx, "livecodebench/" + f, &path, &sha));
    out->names.push_back(f);
    out->paths.push_back(path);
    out->sha256.push_back(sha);
  }
  return Status::Ok();
}

Status ScanLcbWindow(LcbSource* source, const LcbReadOptions& window, std::vector<LcbRow>* rows) {
  LcbReadOptions o = window;
  o.decode_private_tests = false;
  std::map<std::string, std::string> seen;  // question_id -> where
  source->rows.assign(source->paths.size(), 0);
  for (size_t f = 0; f < source->paths.size(); ++f) {
    EVALRUN_RETURN_IF_ERROR(ReadLcbFile(
        source->paths[f], source->names[f], o,
        [&](LcbProblem&& p) {
          auto [it, fresh] = seen.emplace(p.question_id, p.source);
          if (!fresh)
            return Status::InvalidInput(p.source + ": question_id \"" + p.question_id + "\" is also at " + it->second);
          LcbRow r;
          r.question_id = std::move(p.question_id);
          r.title = std::move(p.question_title);
          r.content = std::move(p.question_content);
          r.starter_code = std::move(p.starter_code);
          r.platform = std::move(p.platform);
          r.difficulty = std::move(p.difficulty);
          r.contest_date = std::move(p.contest_date);
          r.contest_month = p.ContestMonth();
          r.file = f;
          rows->push_back(std::move(r));
          return Status::Ok();
        },
        &source->rows[f]));
  }
  return Status::Ok();
}

namespace {

std::string TestsJson(const LcbProblem& p) {
  nlohmann::json inputs = nlohmann::json::array(), outputs = nlohmann::json::array();
  for (const auto* list : {&p.public_tests, &p.private_tests})
    for (const LcbTest& t : *list) {
      inputs.push_back(t.input);
      outputs.push_back(t.output);
    }
  nlohmann::json j = {{"inputs", std::move(inputs)}, {"outputs", std::move(outputs)}, {"fn_name", p.func_name}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

Status SpoolLcbTests(const LcbSource& source, const LcbReadOptions& window, const std::vector<LcbRow*>& picked,
                     PromptSpool* spool) {
  std::unordered_map<std::string, LcbRow*> by_id;
  std::set<size_t> files;
  for (LcbRow* r : picked) {
    by_id[r->question_id] = r;
    files.insert(r->file);
  }
  LcbReadOptions o = window;
  o.decode_private_tests = true;
  o.decode_only = [&by_id](const LcbProblem& p) { return by_id.count(p.question_id) > 0; };
  for (size_t f : files) {
    EVALRUN_RETURN_IF_ERROR(ReadLcbFile(source.paths[f], source.names[f], o, [&](LcbProblem&& p) {
      auto it = by_id.find(p.question_id);
      if (it == by_id.end()) return Status::Ok();
      it->second->test_count = static_cast<int>(p.public_tests.size() + p.private_tests.size());
      return spool->Append(TestsJson(p), &it->second->tests);
    }));
  }
  for (LcbRow* r : picked)
    if (!r->tests.valid())
      return Status::InvalidInput(source.names[r->file] + ": question_id \"" + r->question_id +
                                  "\" was not found again on the second read (the file changed while it was read?)");
  return Status::Ok();
}

Status LoadLcbTests(const PromptSpool& spool, const LcbRow& row, LcbTestCases* out) {
  std::string text;
  EVALRUN_RETURN_IF_ERROR(spool.Read(row.tests, &text));
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return Status::Internal("livecodebench: the spooled tests of " + row.question_id + " do not read back");
  *out = LcbTestCases();
  out->inputs = j["inputs"].get<std::vector<std::string>>();
  out->outputs = j["outputs"].get<std::vector<std::string>>();
  out->fn_name = j["fn_name"].get<std::string>();
  return Status::Ok();
}

nlohmann::json LcbDatasetInfo(const LcbSource& source) {
  nlohmann::json files = nlohmann::json::array();
  std::string joined;
  for (size_t i = 0; i < source.paths.size(); ++i) {
    files.push_back({{"file", source.names[i]},
                     {"sha256", source.sha256[i]},
                     {"rows", i < source.rows.size() ? nlohmann::json(source.rows[i]) : nlohmann::json()}});
    joined += source.names[i] + " " + source.sha256[i] + "\n";
  }
  // One file: its own sha256; several: the sha256 of "name sha256\n" lines.
  const std::string sha = source.paths.size() == 1 ? source.sha256[0] : Sha256Hex(joined);
  return {{"release", source.label}, {"files", files}, {"sha256", sha}};
}

}  // namespace evalrun
