// Section "scoring": how fast answers are scored.
//
//  IFEval: the 541 official GPT-4 responses (tests/fixtures/ifeval/
//    gpt4_responses.jsonl) joined by prompt to <data>/ifeval/input_data.jsonl,
//    strict and loose, through the scorer API (scorers/ifeval/ifeval_eval.h), and
//    through the real `evalrun score --part ifeval` (whole program: card,
//    dataset, Punkt and langdetect loads, samples.jsonl and results.json).
//  MMLU-Pro: 12,032 responses (the 316 of tests/fixtures/mmlu-pro/
//    official_preds.jsonl, cycled) through ExtractFirstLetter and
//    ExtractOfficialMmluPro (scorers/mmlupro/mmlupro_extract.h), and through the real
//    `evalrun score --part mmlupro` with one response per test question.
#include <map>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "bench/bench.h"
#include "scorers/choice_extract.h"
#include "scorers/mmlupro/mmlupro_extract.h"
#include "scorers/ifeval/ifeval_eval.h"
#include "scorers/ifeval/langdetect.h"
#include "scorers/punkt.h"
#include "tests/support/run_binary.h"

namespace evalrun::bench {
namespace {

// Every non-empty line of a JSONL file parsed; a bad line stops it (false).
bool ReadJsonl(const std::string& path, std::vector<nlohmann::json>* rows) {
  std::istringstream in(testing::ReadFile(path));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) return false;
    rows->push_back(std::move(j));
  }
  return !rows->empty();
}

// Runs `evalrun score` and adds its figures.
bool ScorePath(const BenchOptions& o, const std::string& part, const std::string& part_json,
               const std::string& responses, int n, std::vector<Figure>* out) {
  const std::string sec = "scoring";
  const std::string card = o.work_dir + "/score-" + part + ".json";
  testing::WriteFile(card, R"({"name": "bench-score", "server": {"base_url": "http://127.0.0.1:1/v1"},
  "parts": {")" + part + "\": " + part_json + "}}\n");
  ChildProcess child;
  if (!child.Start({o.evalrun_binary, "score", "--card", card, "--part", part, "--responses", responses, "--out",
                    o.work_dir + "/runs", "--job", "score-" + part, "--data-dir", o.data_dir},
                   o.work_dir, "score-" + part)) {
    out->push_back({sec, part + ": evalrun score", "could not be started", "", Verdict::kMiss});
    return false;
  }
  ChildRun run = child.Wait(300);
  if (run.exit_code != 0) {
    std::fprintf(stderr, "bench: evalrun score --part %s: exit %d; stderr tail:\n%s\n", part.c_str(), run.exit_code,
                 FileTail(run.err_path).c_str());
    out->push_back({sec, part + ": evalrun score", Fmt("exit %d", run.exit_code), "exit 0", Verdict::kMiss});
    return false;
  }
  out->push_back({sec, Fmt("%s: `evalrun score` of %d responses: wall (whole program)", part.c_str(), n),
                  Fmt("%.3f s", run.wall_s()), "(info)", Verdict::kInfo});
  out->push_back({sec, part + ": `evalrun score`: CPU (user + sys), peak RSS",
                  Fmt("%.3f s (%.3f + %.3f), %.1f MB", run.cpu_s(), run.user_s, run.sys_s, run.max_rss_kb / 1024.0),
                  "", Verdict::kInfo});
  return true;
}

// IFEval's scorer-API work: the models, the prompts and the GPT-4 responses.
struct IfevalWork {
  std::string input_path, resp_path;
  std::unique_ptr<PunktModel> punkt;
  std::unique_ptr<LangDetector> lang;
  double load_s = 0;  // Punkt + langdetect
  std::vector<nlohmann::json> inputs, responses;
};

// Loads Punkt and langdetect (timed), then the inputs and the responses.
Status LoadIfeval(const BenchOptions& o, IfevalWork* w) {
  const double t0 = NowSeconds();
  Status st = PunktModel::Load(o.data_dir + "/punkt-english", &w->punkt);
  if (st.ok()) st = LangDetector::Load(o.data_dir + "/langdetect", &w->lang);
  w->load_s = NowSeconds() - t0;
  w->input_path = o.data_dir + "/ifeval/input_data.jsonl";
  w->resp_path = o.source_dir + "/tests/fixtures/ifeval/gpt4_responses.jsonl";
  if (st.ok() && !ReadJsonl(w->input_path, &w->inputs))
    st = Status::NotFound(w->input_path + ": missing or not JSONL");
  if (st.ok() && !ReadJsonl(w->resp_path, &w->responses))
    st = Status::NotFound(w->resp_path + ": missing or not JSONL");
  return st;
}

// Joins every prompt to its response and compiles the prompts (timed).
Status CompileIfeval(const IfevalWork& w, std::vector<std::unique_ptr<const IfevalPrompt>>* compiled,
                     std::vector<std::string>* answers, double* compile_s) {
  std::map<std::string, std::string> by_prompt;
  for (const auto& r : w.responses) by_prompt[r.value("prompt", "")] = r.value("response", "");
  std::vector<IfevalPromptSpec> specs;
  Status st;
  for (size_t i = 0; i < w.inputs.size() && st.ok(); ++i) {
    IfevalPromptSpec spec;
    st = ParseIfevalPromptSpec(w.inputs[i], w.input_path + ":" + std::to_string(i + 1), &spec);
    auto it = by_prompt.find(spec.prompt);
    if (st.ok() && it == by_prompt.end()) st = Status::NotFound("no response for key " + std::to_string(spec.key));
    if (st.ok()) {
      answers->push_back(it->second);
      specs.push_back(std::move(spec));
    }
  }
  const double t0 = NowSeconds();
  compiled->resize(specs.size());
  for (size_t i = 0; i < specs.size() && st.ok(); ++i) st = IfevalPrompt::Compile(specs[i], &(*compiled)[i]);
  *compile_s = NowSeconds() - t0;
  return st;
}

// Scores every response strict and loose (timed) and adds the figures.
void ScoreIfeval(const IfevalWork& w, const std::vector<std::unique_ptr<const IfevalPrompt>>& compiled,
                 const std::vector<std::string>& answers, double compile_s, std::vector<Figure>* out) {
  const std::string sec = "scoring";
  IfevalResources res{w.punkt.get(), w.lang.get()};
  IfevalAccuracy strict_acc, loose_acc;
  const double t0 = NowSeconds();
  const double c0 = ThreadCpuSeconds();
  for (size_t i = 0; i < compiled.size(); ++i) {
    strict_acc.Add(compiled[i]->instruction_ids(), compiled[i]->EvaluateStrict(res, answers[i]));
    loose_acc.Add(compiled[i]->instruction_ids(), compiled[i]->EvaluateLoose(res, answers[i]));
  }
  const double score_s = NowSeconds() - t0, score_cpu = ThreadCpuSeconds() - c0;
  out->push_back({sec, Fmt("ifeval: %zu responses, strict + loose (scorer API)", compiled.size()),
                  Fmt("%.3f s (%.3f s CPU)", score_s, score_cpu), "< 1 s",
                  score_s < 1.0 ? Verdict::kPass : Verdict::kMiss});
  out->push_back({sec, "ifeval: compile 541 prompts / load Punkt + langdetect",
                  Fmt("%.3f s / %.3f s", compile_s, w.load_s), "", Verdict::kInfo});
  // The parity test's numbers (tests/benchmarks/ifeval/ifeval_parity_test.cc): a check that
  // the scored work is the real one.
  out->push_back({sec, "ifeval: prompts followed strict / loose (official: 417 / 431)",
                  Fmt("%lld / %lld", static_cast<long long>(strict_acc.prompt_correct),
                      static_cast<long long>(loose_acc.prompt_correct)),
                  "417 / 431",
                  strict_acc.prompt_correct == 417 && loose_acc.prompt_correct == 431 ? Verdict::kPass
                                                                                    : Verdict::kMiss});
}

// IFEval through the scorer API. False when something could not be loaded
// or compiled.
bool RunIfevalScorerApi(const BenchOptions& o, IfevalWork* w, std::vector<Figure>* out) {
  const std::string sec = "scoring";
  std::fprintf(stderr, "bench: ifeval scoring ...\n");
  Status st = LoadIfeval(o, w);
  if (!st.ok()) {
    std::fprintf(stderr, "bench: %s\n", st.ToString().c_str());
    out->push_back({sec, "ifeval: inputs", st.ToString(), "", Verdict::kMiss});
    return false;
  }
  std::vector<std::unique_ptr<const IfevalPrompt>> compiled;
  std::vector<std::string> answers;
  double compile_s = 0;
  st = CompileIfeval(*w, &compiled, &answers, &compile_s);
  if (!st.ok()) {
    out->push_back({sec, "ifeval: prompts", st.ToString(), "", Verdict::kMiss});
    return false;
  }
  ScoreIfeval(*w, compiled, answers, compile_s, out);
  return true;
}

// MMLU-Pro extraction through the scorer API: the official predictions,
// cycled, one per test question (*texts). False when the inputs are missing.
bool RunMmluProExtraction(const BenchOptions& o, std::vector<nlohmann::json>* test_rows,
                          std::vector<std::string>* texts, std::vector<Figure>* out) {
  const std::string sec = "scoring";
  std::fprintf(stderr, "bench: mmlu-pro extraction ...\n");
  std::vector<nlohmann::json> preds;
  const std::string preds_path = o.source_dir + "/tests/fixtures/mmlu-pro/official_preds.jsonl";
  const std::string test_path = o.data_dir + "/mmlu-pro/test.jsonl";
  if (!ReadJsonl(preds_path, &preds) || !ReadJsonl(test_path, test_rows)) {
    out->push_back({sec, "mmlu-pro: inputs", "missing: " + preds_path + " or " + test_path, "", Verdict::kMiss});
    return false;
  }
  const size_t n = test_rows->size();  // 12,032
  texts->resize(n);
  for (size_t i = 0; i < n; ++i) (*texts)[i] = preds[i % preds.size()].value("response", "");
  size_t bytes = 0;
  for (const auto& t : *texts) bytes += t.size();
  int found_first = 0, found_official = 0;
  double t0 = NowSeconds();
  for (const auto& t : *texts) found_first += ExtractFirstLetter(t, 10) != 0;
  const double first_s = NowSeconds() - t0;
  t0 = NowSeconds();
  for (const auto& t : *texts) found_official += ExtractOfficialMmluPro(t) != 0;
  const double official_s = NowSeconds() - t0;
  out->push_back({sec, Fmt("mmlu-pro: ExtractFirstLetter x %zu (%.1f MB of text)", n, bytes / 1e6),
                  Fmt("%.3f s (%d found)", first_s, found_first), "< 1 s",
                  first_s < 1.0 ? Verdict::kPass : Verdict::kMiss});
  out->push_back({sec, Fmt("mmlu-pro: ExtractOfficialMmluPro x %zu", n), Fmt("%.3f s (%d found)", official_s,
                  found_official), "< 1 s", official_s < 1.0 ? Verdict::kPass : Verdict::kMiss});
  return true;
}

// MMLU-Pro through `evalrun score`: one response per test question.
bool ScoreMmluProPath(const BenchOptions& o, const std::vector<nlohmann::json>& test_rows,
                      const std::vector<std::string>& texts, std::vector<Figure>* out) {
  std::string body;
  for (size_t i = 0; i < test_rows.size(); ++i) {
    nlohmann::json line = {{"id", test_rows[i].value("question_id", 0)}, {"response", texts[i]}};
    body += line.dump() + "\n";
  }
  const std::string mmlu_resp = o.work_dir + "/mmlupro-responses.jsonl";
  testing::WriteFile(mmlu_resp, body);
  return ScorePath(o, "mmlupro", "{}", mmlu_resp, static_cast<int>(test_rows.size()), out);
}

}  // namespace

bool RunScoringSection(const BenchOptions& o, std::vector<Figure>* out) {
  const std::string sec = "scoring";
  bool ok = true;
  out->push_back({sec, "load average (1/5/15 min) at start", LoadAverage(), "", Verdict::kInfo});

  // ---- IFEval, scorer API, then through `evalrun score`.
  IfevalWork ifeval;
  if (!RunIfevalScorerApi(o, &ifeval, out)) ok = false;
  ok &= ScorePath(o, "ifeval", "{}", ifeval.resp_path, static_cast<int>(ifeval.responses.size()), out);

  // ---- MMLU-Pro extraction, scorer API, then through `evalrun score`.
  std::vector<nlohmann::json> test_rows;
  std::vector<std::string> texts;
  if (!RunMmluProExtraction(o, &test_rows, &texts, out)) return false;
  ok &= ScoreMmluProPath(o, test_rows, texts, out);
  out->push_back({sec, "load average (1/5/15 min) at end", LoadAverage(), "", Verdict::kInfo});
  return ok;
}

}  // namespace evalrun::bench
