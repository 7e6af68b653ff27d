// LiveCodeBench code generation (LiveCodeBench/LiveCodeBench @ 28fef95e,
// livecodebench/code_generation_lite @ 0fe84c39). Prepare reads the rows of
// a release (or one data file) in a date window, picks a seeded subset
// stratified by difficulty, prints and records the window, builds the
// official prompts, and keeps the picked problems' tests on disk
// (evals/benchmarks/livecodebench/lcb_data.h). It also makes the sandbox (evals/sandbox/
// sandbox.h) and checks that it runs code before any request: a machine
// where it cannot fails the run there (exit 1), never an answer.
//
// Score takes the code as the official extraction does (scorers/
// lcb_prompt.h) and grades it in the sandbox (scorers/livecodebench/lcb_grade.h) under the
// `official` profile, and again under `fixed` where that can differ
// (lcb_results.h); the card's `profile` is the headline. An answer without
// code is graded as "" (the official does: its error message is kept) and
// is `no_code`; one cut at max_tokens is graded like any other (the
// official does) and, when it fails, `cut_off`. Should the
// sandbox fail to start while grading (after it worked in Prepare), Score
// tries twice more and then stops evalrun (exit 3): the answer is
// journaled, and resuming the job grades it (Score cannot return an error,
// and a sandbox fault must never become a wrong answer).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "evals/base/exit_codes.h"
#include "evals/base/sha256.h"
#include "evals/benchmarks/livecodebench/lcb_data.h"
#include "evals/benchmarks/livecodebench/lcb_results.h"
#include "evals/run/prepare_steps.h"
#include "evals/benchmarks/table.h"
#include "evals/run/part_registry.h"
#include "scorers/livecodebench/lcb_prompt.h"
#include "scorers/livecodebench/lcb_sandbox_runner.h"

namespace evalrun {
namespace {

class LiveCodeBenchPart : public Part {
 public:
  Status Prepare(const PartContext& ctx, PreparedPart* out) override {
    const PartSettings& cfg = *ctx.settings;
    ParseLcbProfile(cfg.String("profile"), &profile_);
    timeout_s_ = static_cast<int>(cfg.Int("test_timeout_s"));
    ctx_sandbox_min_ = ctx.sandbox_min;
    EVALRUN_RETURN_IF_ERROR(MakeGrader(cfg, ctx.unsafe_exec, out));
    LcbReadOptions window;
    EVALRUN_RETURN_IF_ERROR(ReadWindow(cfg, &window));
    LcbSource source;
    EVALRUN_RETURN_IF_ERROR(FindLcbSource(ctx, cfg.String("release"), cfg.String("data_file"), &source));
    EVALRUN_RETURN_IF_ERROR(ScanLcbWindow(&source, window, &rows_));
    const std::string text = LcbWindowText(source.label, source.names, cfg.String("start_date"), cfg.String("end_date"));
    out->info["window"] = {{"text", text},
                           {"release", source.label},
                           {"start_date", cfg.String("start_date")},
                           {"end_date", cfg.String("end_date")},
                           {"problems", rows_.size()}};
    out->info["dataset"] = LcbDatasetInfo(source);
    out->notes.push_back("window: " + text + ": " + std::to_string(rows_.size()) + " problems");

    std::vector<std::string> ids, difficulties;
    for (const LcbRow& r : rows_) {
      ids.push_back(r.question_id);
      difficulties.push_back(r.difficulty);
    }
    const int64_t seed = cfg.Int("seed", ctx.card->request.sampling.seed);
    const std::vector<size_t> chosen = SelectQuestions(ctx, ids, difficulties, seed, cfg.Int("questions", -1));
    std::vector<LcbRow*> picked;
    for (size_t i : chosen) picked.push_back(&rows_[i]);
    spool_ = std::make_shared<PromptSpool>();
    EVALRUN_RETURN_IF_ERROR(spool_->Open());
    EVALRUN_RETURN_IF_ERROR(SpoolLcbTests(source, window, picked, spool_.get()));
    const int max_tokens = static_cast<int>(cfg.Int("max_tokens", 2000));
    for (size_t i : chosen) out->items.push_back(MakeItem(rows_[i], static_cast<int>(i), max_tokens));
    out->info["profile"] = LcbProfileName(profile_);
    out->info["test_timeout_s"] = timeout_s_;
    RecordSelection(seed, max_tokens, out);
    return Status::Ok();
  }

  // `evalrun score`: a line's question_id, else its id.
  int FindItem(const nlohmann::json& line, const std::unordered_map<std::string, int>& index_by_id,
               std::string* why) const override {
    auto q = line.find("question_id");
    if (q == line.end() || !q->is_string()) return Part::FindItem(line, index_by_id, why);
    auto it = index_by_id.find(q->get<std::string>());
    return it == index_by_id.end() ? -1 : it->second;
  }

  Verdict Score(const Item& item, const Completion& a) const override {
    const std::string code = a.unclosed_think ? "" : ExtractLcbCode(a.content);
    const bool cut = a.finish_reason == "length";
    const LcbRow& row = rows_[item.scorer_index];
    LcbTestCases tests;
    Status st = LoadLcbTests(*spool_, row, &tests);
    if (!st.ok()) Die(row, st);
    LcbGrade official, fixed;
    Grade(row, code, tests, LcbProfile::kOfficial, &official);
    const bool regrade = FixedMayDiffer(official);
    if (regrade) Grade(row, code, tests, LcbProfile::kFixed, &fixed);
    return MakeCodeVerdict(code, cut, official, regrade ? &fixed : nullptr, profile_);
  }

  nlohmann::json Aggregate(const std::vector<SampleRecord>& records, int failed,
                           const PreparedPart& prepared) const override {
    return AggregateLcb(records, failed, prepared.info);
  }

 private:
  // The sandbox, checked now: it runs print(1) at the strongest level the
  // machine allows (up to the card's sandbox_max_level), else the run stops
  // here.
  Status MakeGrader(const PartSettings& cfg, bool unsafe_flag, PreparedPart* out) {
    const std::string python = cfg.String("python");
    const bool unsafe = cfg.Bool("unsafe_exec") || unsafe_flag;
    SandboxOptions options = LcbSandboxOptions(python, unsafe);
    ParseSandboxLevel(cfg.String("sandbox_max_level"), &options.max_level);
    InterpreterInfo interp;
    EVALRUN_RETURN_IF_ERROR(
        DescribeInterpreter(python, RealProcessRunner::Default(), &interp).Prefixed("parts.livecodebench.python"));
    const std::string minimum = MinimumLevel(cfg, ctx_sandbox_min_);
    SandboxProbe probe;
    Status st = MakeSandbox(options, RealProcessRunner::Default(), &sandbox_, &probe);
    if (!st.ok())
      return Status::Unavailable(st.message() + ". Install bubblewrap (apt-get install bubblewrap) on a machine "
                                 "that allows user namespaces, or pass --unsafe-exec (or set "
                                 "parts.livecodebench.unsafe_exec) to run model-written code with resource "
                                 "limits alone, without isolation");
    EVALRUN_RETURN_IF_ERROR(CheckMinimum(minimum, probe));
    runner_ = SandboxLcbRunner(sandbox_.get());
    nlohmann::json levels = nlohmann::json::object();
    for (const auto& [level, outcome] : probe.levels) levels[SandboxLevelName(level)] = outcome;
    out->info["sandbox"] = {{"level", sandbox_->level()},
                            {"minimum", minimum.empty() ? nlohmann::json() : nlohmann::json(minimum)},
                            {"unsafe_exec", unsafe},
                            {"max_level", cfg.String("sandbox_max_level")},
                            {"probe", levels},
                            {"holds", probe.containment},
                            {"interpreter", {{"path", interp.path}, {"version", interp.version}}}};
    std::string weaker;
    for (const auto& [level, outcome] : probe.levels)
      if (outcome != "ok") weaker += std::string("; ") + SandboxLevelName(level) + ": " + outcome;
    out->notes.push_back("grading in the sandbox at level \"" + sandbox_->level() + "\" with " + interp.path +
                         " (Python " + interp.version + ")" +
                         (sandbox_->level() == "rlimits" ? "; NO ISOLATION (--unsafe-exec)" : "") + weaker +
                         "; holds: " + probe.containment);
    return Status::Ok();
  }

  // The weakest level accepted: --sandbox, else parts.livecodebench.sandbox,
  // else "" (any level that isolates; rlimits only with unsafe_exec).
  static std::string MinimumLevel(const PartSettings& cfg, const std::string& flag) {
    return !flag.empty() ? flag : cfg.Has("sandbox") ? cfg.String("sandbox") : "";
  }

  // Refuses a sandbox weaker than the minimum asked, saying why each
  // stronger level did not work here.
  Status CheckMinimum(const std::string& minimum, const SandboxProbe& probe) const {
    SandboxLevel min, got;
    if (minimum.empty() || !ParseSandboxLevel(minimum, &min) || !ParseSandboxLevel(sandbox_->level(), &got) ||
        SandboxLevelAtLeast(got, min))
      return Status::Ok();
    std::string why;
    for (const auto& [level, outcome] : probe.levels)
      if (outcome != "ok") why += std::string("; ") + SandboxLevelName(level) + ": " + outcome;
    return Status::Unavailable("the strongest sandbox this machine offers is \"" + sandbox_->level() +
                               "\", below the minimum \"" + minimum + "\" (--sandbox or parts.livecodebench.sandbox)" +
                               why + ". Install bubblewrap on a machine that allows user namespaces, or lower the "
                               "minimum; model-written code is not run below it");
  }

  static Status ReadWindow(const PartSettings& cfg, LcbReadOptions* window) {
    for (const char* key : {"start_date", "end_date"}) {
      if (!cfg.Has(key)) continue;
      LcbDateTime d;
      EVALRUN_RETURN_IF_ERROR(ParseLcbDate(cfg.String(key), std::string("parts.livecodebench.") + key, &d));
      (std::string(key) == "start_date" ? window->start : window->end) = d;
    }
    if (window->start && window->end && *window->end < *window->start)
      return Status::InvalidInput("parts.livecodebench.end_date: before start_date");
    return Status::Ok();
  }

  Item MakeItem(const LcbRow& r, int index, int max_tokens) const {
    Item it;
    it.id = r.question_id;
    it.category = r.difficulty;
    const std::string user = LcbUserPrompt(r.content, r.starter_code);
    it.prompt.messages.push_back({"system", LcbSystemMessage()});
    it.prompt.messages.push_back({"user", user});
    it.prompt.params.max_tokens = max_tokens;
    it.prompt_sha256 = Sha256Hex(LcbSystemMessage() + "\n" + user);
    it.fields = {{"title", r.title},
                 {"platform", r.platform},
                 {"difficulty", r.difficulty},
                 {"contest_date", r.contest_date},
                 {"contest_month", r.contest_month},
                 {"tests", static_cast<int64_t>(r.test_count)}};
    it.scorer_index = index;
    return it;
  }

  // Grades through the sandbox; a sandbox that does not start is retried
  // twice, then stops evalrun (see the file comment).
  void Grade(const LcbRow& row, const std::string& code, const LcbTestCases& tests, LcbProfile profile,
             LcbGrade* out) const {
    Status st;
    for (int attempt = 0; attempt < 3; ++attempt) {
      if (attempt > 0) std::this_thread::sleep_for(std::chrono::seconds(1));
      st = GradeLcbCode(code, tests, {timeout_s_, profile}, runner_, out);
      if (st.ok()) return;
    }
    Die(row, st);
  }

  [[noreturn]] static void Die(const LcbRow& row, const Status& st) {
    std::fprintf(stderr,
                 "evalrun: livecodebench: grading %s failed: %s; stopping (the answer is journaled: resume the job "
                 "to grade it)\n",
                 row.question_id.c_str(), st.ToString().c_str());
    std::fflush(stderr);
    std::_Exit(kExitIncomplete);
  }

  LcbProfile profile_ = LcbProfile::kOfficial;
  int timeout_s_ = 6;
  std::string ctx_sandbox_min_;  // --sandbox
  std::unique_ptr<CodeSandbox> sandbox_;
  LcbRunner runner_;
  std::vector<LcbRow> rows_;  // the window; Item::scorer_index indexes it
  std::shared_ptr<PromptSpool> spool_;  // the picked rows' tests
};

PartDefinition LiveCodeBenchDefinition() {
  PartDefinition d;
  d.name = "livecodebench";
  d.display_name = "LiveCodeBench";
  d.run_order = 35;
  d.verdict = VerdictKind::kCode;
  // Grading runs every answer in the sandbox (seconds each): resume trusts
  // the stored verdicts rather than grade them all again.
  d.rescore_on_resume = false;
  d.keys = {
      QuestionCountKey("questions", "every problem in the window by default; else a seeded sample stratified by "
                                    "difficulty (the same ids on every machine)"),
      CardKey::Text("release", "`release_v1` .. `release_v6` (cumulative), `release_latest`, `v1` .. `v6` (one "
                               "file), `vN_vM`, or a file name `test.jsonl` .. `test6.jsonl`")
          .Default(std::string("release_v6")),
      CardKey::Text("start_date", "keep problems whose contest_date is on or after this date (YYYY-MM-DD)"),
      CardKey::Text("end_date", "keep problems whose contest_date is on or before this date (YYYY-MM-DD, midnight)"),
      MaxTokensKey("the answer limit (default 2,000, the official runner's); a cut answer is graded, and `cut_off` "
                   "when it fails"),
      CardKey::Enum("profile", {"official", "fixed"},
                    "the headline verdicts: `official` (as LiveCodeBench's grader, false negatives included) or "
                    "`fixed` (those fixed); both are reported where they differ")
          .Default(std::string("official")),
      CardKey::Text("python", "the interpreter that runs the answers (its path and version are recorded)")
          .Default(std::string("/usr/bin/python3")),
      CardKey::Int("test_timeout_s", 1, 600, "seconds per test (the official 6); the whole run of an answer "
                                             "is limited to (timeout + 1) x tests + 5 s")
          .Default(int64_t{6}),
      CardKey::Bool("unsafe_exec", "run model-written code without isolation (rlimits only) where no sandbox level "
                                   "isolates; refused by default (the command line's --unsafe-exec does the same)")
          .Default(false),
      CardKey::Enum("sandbox", {"namespaces", "unshare", "seccomp", "rlimits"},
                    "the weakest sandbox level accepted (docs/livecodebench.md's table says what each contains); "
                    "below it evalrun refuses before any request. The command line's --sandbox overrides it"),
      CardKey::Enum("sandbox_max_level", {"namespaces", "unshare", "seccomp", "rlimits"},
                    "the strongest sandbox level tried (tests cap it); the probe goes down from there")
          .Default(std::string("namespaces")),
      SeedKey("selection seed (default sampling.seed)"),
      CardKey::Text("data_file", "one JSONL file of rows in the dataset's format, read instead of the release's "
                                 "files (its sha256 computed and recorded, no manifest check)"),
  };
  d.groups = {{"difficulty", {"difficulty"}}, {"platform", {"platform"}}, {"contest month", {"contest_month"}}};
  d.label = {"title"};
  d.make_part = [] { return std::make_unique<LiveCodeBenchPart>(); };
  return d;
}

Benchmark LiveCodeBenchBenchmark() {
  Benchmark b;
  b.name = "livecodebench";
  b.title = "LiveCodeBench";
  b.about = "code generation on a release's problems in a date window; model-written code runs only in the sandbox";
  b.parts = {LiveCodeBenchDefinition()};
  b.datasets = {"livecodebench"};
  b.scorer = "the official extraction and tests (LiveCodeBench/LiveCodeBench @ 28fef95e), graded in the sandbox "
             "under the `official` and `fixed` profiles (scorers/livecodebench/); pass@1";
  return b;
}

}  // namespace

EVALRUN_BENCHMARK(LiveCodeBenchBenchmark());

}  // namespace evalrun
