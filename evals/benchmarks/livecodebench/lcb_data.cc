#include "evals/benchmarks/livecodebench/lcb_data.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <tuple>

#include "evals/base/sha256.h"
#include "evals/run/prepare_steps.h"

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
          r.offset = p.offset;
          r.where = p.source;
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
  LcbReadOptions o = window;
  o.decode_private_tests = true;
  o.decode_only = nullptr;
  std::vector<LcbRow*> order = picked;  // file order: the reads go forward
  std::sort(order.begin(), order.end(),
            [](const LcbRow* a, const LcbRow* b) { return std::tie(a->file, a->offset) < std::tie(b->file, b->offset); });
  std::ifstream in;
  size_t open_file = source.paths.size();
  std::string line;
  for (LcbRow* r : order) {
    if (r->file != open_file) {
      in.close();
      in.open(source.paths[r->file], std::ios::binary);
      if (!in) return Status::NotFound(source.paths[r->file] + ": cannot open");
      open_file = r->file;
    }
    in.clear();
    in.seekg(r->offset);
    if (!std::getline(in, line)) return Status::IoError(r->where + ": cannot read the row again");
    LcbProblem p;
    EVALRUN_RETURN_IF_ERROR(ParseLcbRow(line, r->where, o, &p));
    if (p.question_id != r->question_id)
      return Status::InvalidInput(r->where + ": question_id \"" + r->question_id +
                                  "\" is not there on the second read (the file changed while it was read?)");
    r->test_count = static_cast<int>(p.public_tests.size() + p.private_tests.size());
    EVALRUN_RETURN_IF_ERROR(spool->Append(TestsJson(p), &r->tests));
  }
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
